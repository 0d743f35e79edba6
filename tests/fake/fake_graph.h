/* fake_graph.h -- the fake driver's graphs (fake_graph.c), shared with fake_driver.c: nodes
 * of every kind with the parameters they were given, edges with their data, child graphs and
 * conditional bodies, ids. Used for CPU tests of cucore's graph inspection and editing; real
 * behaviour is tested on the GPU. */
#ifndef CUCORE_FAKE_GRAPH_H
#define CUCORE_FAKE_GRAPH_H

#include <cuda.h>
#include <stdatomic.h>

struct fake_user_object;
struct fake_graph;

typedef struct fake_gnode {
  CUgraphNodeType type;
  struct fake_graph *g; /* the graph it is in */
  int alive;
  unsigned local_id;
  CUDA_KERNEL_NODE_PARAMS kernel;
  unsigned cluster[3];
  CUDA_MEMSET_NODE_PARAMS memset;
  CUDA_MEMCPY3D memcpy;
  CUDA_HOST_NODE_PARAMS host;
  CUevent event;
  struct fake_graph *child;      /* child-graph node: its clone, owned */
  CUgraphConditionalHandle cond; /* conditional node */
  CUgraphConditionalNodeType cond_type;
  unsigned body_count;
  CUgraph bodies[8]; /* owned */
  CUdeviceptr mem_ptr;
  size_t mem_bytes;
} fake_gnode;

typedef struct fake_edge {
  fake_gnode *from, *to;
  CUgraphEdgeData data;
} fake_edge;

typedef struct fake_graph {
  _Atomic int nodes; /* live nodes */
  struct fake_user_object *objs[64];
  unsigned counts[64];
  int nobjs;
  unsigned id;
  int is_copy;       /* an executable graph's copy: shares the lists below, frees none */
  fake_gnode **list; /* every node made, dead ones included (handles stay unique) */
  int count, cap;
  fake_edge *edges;
  int ecount, ecap;
} fake_graph;

/* A new empty graph (its id from the process-wide counter), or NULL. */
fake_graph *fake_graph_new(void);
/* Appends a node of `type` after `deps` (n of them, default edges); NULL when out of memory. */
fake_gnode *fake_graph_node_new(fake_graph *g, CUgraphNodeType type, const CUgraphNode *deps,
                                size_t n);
/* Frees the nodes, edges, clones and bodies of `g` (not `g`, not its user objects). */
void fake_graph_free_nodes(fake_graph *g);
/* An exec id for a new executable graph. */
unsigned fake_graph_next_id(void);
/* The graph entry points fake_graph.c adds (NULL: not one of them). Those of CUDA 13.1 (ids,
 * containing graph, cuGraphNodeGetParams) only with CUCORE_FAKE_DRIVER_VERSION=13010 or more. */
void *fake_graph_symbol(const char *symbol);

#endif
