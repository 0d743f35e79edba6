/*
 * graph/graph.h -- CUDA graphs: the graph, node and executable-graph structures shared by the
 * files of this floor.
 *
 * Files: graph.c (graphs: create, destroy, references, dependencies, DOT, the nodes by
 * handle), inspect.c (the nodes and edges the driver has, nodes it made adopted, edges removed,
 * nodes destroyed, ids), node_params.c (every kind of node's parameters read back), nodes.c
 * (the nodes other than conditional ones), conditional.c (conditions and conditional nodes),
 * capture.c (the public stream-capture calls, over runtime/capture_state.c), mem_nodes.c
 * (allocation and free nodes, their memory recorded as the graph's), exec.c (executable
 * graphs: instantiate, launch, upload, whole-graph and per-node updates).
 *
 * Ownership: a top-level graph is counted (the user's reference, one per executable graph
 * made from it or updated from it, one per capture into it). It owns its node structures, the
 * structures of its conditional bodies (which are graphs too, with `root` naming it), and a
 * reference set (runtime/refs.c) with what its nodes use: kernels, events, the sets of child
 * graphs, host data. The set is handed to the driver as a user object of the CUgraph, so it
 * outlives the graph until no executable graph needs it.
 */
#ifndef CUCORE_GRAPH_H
#define CUCORE_GRAPH_H

#include "exec/kernel.h"

struct cucore_graph_node {
  CUgraphNode h;
  cucore_graph *graph; /* the graph it is in: a top-level graph or a body */
  cucore_graph_node_type type;
  int index; /* its place in its root's list (executable graphs' state) */
  /* kernel nodes */
  cucore_kernel *k;         /* a reference */
  cucore_args *args;        /* the values, owned */
  CUfunction fn;            /* the kernel's function on the graph's device */
  cucore_launch_config cfg; /* grid, block, shared bytes, attributes (stream NULL) */
  /* memory nodes (mem_nodes.c) */
  uint64_t mem_ptr, mem_bytes;        /* allocation: its memory; free: the address it frees */
  struct cucore_graph_node *freed_by; /* allocation: the free node of it, or NULL */
  /* event nodes: the event (borrowed: the graph holds it), NULL for a node cucore did not add */
  cucore_event *ev;
  /* conditional nodes (conditional.c) */
  cucore_graph_condition cond;
  cucore_conditional_type cond_type;
  unsigned body_count;
  cucore_graph **bodies; /* owned array of the root's body structures */
  /* child-graph nodes: the driver's embedded graph as a structure of the root, once asked */
  cucore_graph *child;
  /* inspection (inspect.c) */
  int adopted;            /* made by the driver (a capture, a native call); found by cucore */
  int removed;            /* destroyed by cucore_graph_node_destroy (the structure stays) */
  unsigned long long seq; /* when it was added: the root's count of additions (0: adopted) */
  char *name;             /* node_params.c: the kernel's name of an adopted kernel node */
  size_t fill_rows;       /* memset nodes: rows of the fill as last set (0: not known) */
};

struct cucore_graph {
  cc_handle hdr; /* first: the magic word of base/handle.h */
  CUgraph h;
  cucore_device *dev;
  cucore_graph *root; /* the top-level graph: itself unless a conditional body */
  int is_body;        /* a conditional node's body: owned by its root */
  /* top-level graphs only: */
  atomic_int refs;
  cc_refs *held;             /* what the nodes use (a reference; the driver holds another) */
  int attached;              /* `held` is the CUgraph's user object */
  cucore_graph_node **nodes; /* every node cucore made, bodies' included */
  int node_count;
  size_t node_cap;
  cucore_graph **bodies; /* the conditional bodies' structures */
  int body_count;
  size_t body_cap;
  int conditionals; /* conditional nodes in it or its bodies */
  int mem_nodes;    /* allocation and free nodes in it (mem_nodes.c) */
  char *dot;        /* the last cucore_graph_dot text */
  /* the nodes by driver handle: open addressing, a slot holds a node's index + 1, 0 when
   * empty, -1 when its node was destroyed (graph.c) */
  int *map;
  size_t map_cap, map_used;
  unsigned long long seq; /* nodes added by cucore so far (cucore_graph_node::seq) */
  int is_child;           /* a child-graph node's embedded graph (a body structure) */
  int pending;            /* the structure of a capture still running (capture_nodes.c): `h`
                             is NULL until the capture ends and gives its graph */
};

/* Per kernel node of an executable graph: its values there (for updates of half of them). */
typedef struct cc_exec_node {
  cucore_args *args; /* NULL for other nodes */
  cucore_kernel *k;  /* the kernel the node runs there (borrowed: the graph holds it) */
  CUfunction fn;     /* its function on the graph's device */
  unsigned grid[3], block[3], smem;
  int known; /* 0 after a whole-graph update cucore could not match */
} cc_exec_node;

struct cucore_graph_exec {
  cc_handle hdr; /* first: the magic word of base/handle.h */
  CUgraphExec h;
  cucore_device *dev;
  cucore_graph *graph;  /* instantiated from (a reference): its nodes name e's nodes */
  cucore_graph *source; /* last updated from (a reference), or NULL */
  unsigned flags;
  unsigned long long seq; /* graph->seq at instantiation: nodes added later are not in it */
  int node_count;         /* graph->node_count at instantiation */
  cc_exec_node *state;    /* node_count entries */
};

/* graph.c */
/* A new top-level graph over `h` (taken over: destroyed on failure) on `dev`, with the
 * reference set `held` (a reference is taken over; NULL: a new empty one), attached to `h`. */
cucore_status cc_graph_wrap(cucore_device *dev, CUgraph h, cc_refs *held, cucore_graph **out);
/* A structure for a conditional body `h` of root `root`. */
cucore_status cc_graph_new_body(cucore_graph *root, CUgraph h, cucore_graph **out);
void cc_graph_retain(void *g);
void cc_graph_release(void *g);
/* Checks dependencies (NULL, repeated, of another graph) and gives their handles: `*hs` is
 * `buf` (of `buf_len`) when they fit, else allocated (free it when != buf). */
cucore_status cc_graph_deps(cucore_graph *g, cucore_graph_node *const *deps, size_t n,
                            CUgraphNode *buf, size_t buf_len, CUgraphNode **hs, const char *fn);
/* A node structure of type `type` for `g` (zeroed; kept in the root's list once added with
 * cc_graph_add_node). */
cucore_status cc_graph_node_new(cucore_graph *g, cucore_graph_node_type type,
                                cucore_graph_node **out);
cucore_status cc_graph_add_node(cucore_graph *g, cucore_graph_node *n);
/* Destroys the driver's node n->h, added to its CUgraph but not kept by cucore (a failure
 * after cuGraphAdd*Node), when the driver has cuGraphDestroyNode. */
void cc_graph_node_undo(cucore_graph_node *n);
/* cc_graph_add_node; on failure the driver's node is destroyed too (cc_graph_node_undo). */
cucore_status cc_graph_keep_node(cucore_graph *g, cucore_graph_node *n);
void cc_graph_node_free(cucore_graph_node *n);
/* The node of `root` (bodies included) whose handle is `h`, or NULL. */
cucore_graph_node *cc_graph_find_node(const cucore_graph *root, CUgraphNode h);
/* Takes node `n` out of its root's map of handles (cucore_graph_node_destroy). */
void cc_graph_forget_node(cucore_graph_node *n);
/* 1 when node `n` was in the graph when `e` was made from it (and so is in `e`). */
int cc_graph_node_in_exec(const cucore_graph_node *n, const cucore_graph_exec *e);
/* "node 3 (kernel `saxpy`)" for messages, into a buffer of CC_NODE_WHAT bytes (a kernel name
 * too long for it is cut with the cut said: cc_format_field). */
enum { CC_NODE_WHAT = 320 };
void cc_graph_node_describe(const cucore_graph_node *n, char *buf, size_t len);
/* Common entry checks of the add-node functions: `out` (set to NULL) and `g` not NULL. The
 * add functions check their inputs next, then the driver symbols, and only then make the
 * device's context current and call the driver (so a check fails the same way without one). */
cucore_status cc_graph_enter(cucore_graph *g, cucore_graph_node **out, const char *fn);

/* exec.c */
/* The executable graph's values of node `n` from now on: `n`'s (its kernel, function,
 * arguments and shape); an argument list for another kernel is made anew (known 0 when that
 * fails). */
void cc_exec_state_from_node(cc_exec_node *x, const cucore_graph_node *n);

/* node_checks.c: new parameters for a node, checked and made the driver's. */
typedef struct cc_kernel_update {
  cucore_kernel *k;
  cucore_args *args;
  cc_kernel_dev *d;
  cc_launch_shape shape;
  cucore_launch_config cfg; /* the node's attributes with the new shape */
  CUDA_KERNEL_NODE_PARAMS p;
} cc_kernel_update;
/* The common checks of a node update: `node` and `p` given, the node not destroyed, the kind
 * unchanged; a captured kernel node's kernel and values read first. */
cucore_status cc_node_update_enter(cucore_graph_node *node, const cucore_graph_node_params *p,
                                   const char *fn);
/* A kernel, its arguments and its shape, checked as a launch in a graph (with the node's
 * attributes; the device's context made current). */
cucore_status cc_node_check_kernel(const cucore_graph_node *n, const cucore_graph_node_params *p,
                                   cc_kernel_update *u, const char *fn);
cucore_status cc_node_check_memset(const cucore_graph_node_params *p, CUDA_MEMSET_NODE_PARAMS *m,
                                   const char *fn);
cucore_status cc_node_check_memcpy(const cucore_graph_node_params *p, CUDA_MEMCPY3D *m,
                                   const char *fn);
/* An event of the graph's device, then held by the graph. */
cucore_status cc_node_check_event(const cucore_graph_node *n, const cucore_graph_node_params *p,
                                  const char *fn);
/* A graph a child-graph node can take, then what its nodes use held by n's graph. */
cucore_status cc_node_check_child(const cucore_graph_node *n, const cucore_graph_node_params *p,
                                  const char *fn);

/* node_params.c */
/* What node `n` does, from the driver (cucore_graph_node_get_params without the entry
 * checks; the device's context current). An adopted kernel node gets its kernel and values. */
cucore_status cc_graph_node_read(cucore_graph_node *n, cucore_graph_node_params *out,
                                 const char *fn);

/* conditional.c */
/* The type, the body count (the driver's version for it) and `bodies` (set to NULL). */
cucore_status cc_graph_conditional_checks(cucore_conditional_type type, unsigned body_count,
                                          cucore_graph **bodies, const char *fn);
/* Adds a conditional node to CUgraph `into` (g's, or the graph of a capture g stands for)
 * after `hs`, its structure kept in `g` with its bodies wrapped. */
cucore_status cc_graph_add_conditional_in(cucore_graph *g, CUgraph into, const CUgraphNode *hs,
                                          size_t dep_count, cucore_graph_condition cond,
                                          cucore_conditional_type type, unsigned body_count,
                                          cucore_graph **bodies, cucore_graph_node **out,
                                          const char *fn);

/* capture_nodes.c */
/* Ends the pending structure of a capture: it takes the captured graph `h`, or goes when `h`
 * is NULL (the capture failed). `refs` is released. */
cucore_status cc_graph_take_capture(cucore_graph *g, CUgraph h, cc_refs *refs, cucore_graph **out);

/* mem_nodes.c */
/* Every allocation node of `g` has a free node in it (graph memory stays inside its graph):
 * else CUCORE_INVALID_ARGUMENT naming the node. */
cucore_status cc_graph_mem_check_freed(const cucore_graph *g, const char *fn);

#endif
