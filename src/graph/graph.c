/*
 * graph.c -- graphs: creation (empty, or over a captured CUgraph), counted references, the
 * node structures and dependencies shared by every kind of node, queries and DOT output.
 */
#define _POSIX_C_SOURCE 200809L
#include "graph/graph.h"
#include "memory/memory.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

cucore_status cc_graph_wrap(cucore_device *dev, CUgraph h, cc_refs *held, cucore_graph **out) {
  *out = NULL;
  cucore_graph *g = cc_calloc(1, sizeof *g, "a graph");
  if (!held) held = cc_refs_new();
  if (!g || !held) {
    free(g);
    cc_refs_release(held);
    (void)DRV(cuGraphDestroy)(h);
    return CUCORE_HOST_OUT_OF_MEMORY;
  }
  cc_handle_init(g, CC_KIND_GRAPH);
  g->h = h;
  g->dev = dev;
  g->root = g;
  atomic_init(&g->refs, 1);
  g->held = held;
  /* The driver keeps the set for as long as the graph or an executable graph needs it. */
  cucore_status st = cc_refs_attach(held, h);
  if (st != CUCORE_OK) {
    cc_refs_release(held);
    (void)DRV(cuGraphDestroy)(h);
    free(g);
    return st;
  }
  g->attached = 1;
  *out = g;
  return CUCORE_OK;
}

cucore_status cc_graph_new_body(cucore_graph *root, CUgraph h, cucore_graph **out) {
  *out = NULL;
  cucore_graph **bs = cc_grow(root->bodies, &root->body_cap, (size_t)root->body_count + 1,
                              sizeof *bs, "a graph's conditional bodies");
  if (!bs) return CUCORE_HOST_OUT_OF_MEMORY;
  root->bodies = bs;
  cucore_graph *b = cc_calloc(1, sizeof *b, "a conditional body");
  if (!b) return CUCORE_HOST_OUT_OF_MEMORY;
  cc_handle_init(b, CC_KIND_GRAPH);
  b->h = h;
  b->dev = root->dev;
  b->root = root;
  b->is_body = 1;
  root->bodies[root->body_count++] = b;
  *out = b;
  return CUCORE_OK;
}

cucore_status cucore_graph_create(cucore_device *dev, cucore_graph **out) {
  cc_begin();
  CC_CHECK_ARG(out, "cucore_graph_create", "out");
  *out = NULL;
  CC_CHECK_HANDLE(dev, DEVICE, "cucore_graph_create", "dev");
  cc_refs_drain();
  cucore_status st = CC_DRV_REQUIRE(cuGraphCreate);
  if (st == CUCORE_OK) st = cc_device_make_current(dev);
  if (st != CUCORE_OK) return st;
  CUgraph h = NULL;
  CUresult r = DRV(cuGraphCreate)(&h, 0);
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuGraphCreate", "device %d", dev->ordinal);
  return cc_graph_wrap(dev, h, NULL, out);
}

void cc_graph_node_free(cucore_graph_node *n) {
  if (!n) return;
  cc_kernel_release(n->k);
  cc_args_free(n->args);
  free(n->bodies);
  free(n->name);
  free(n);
}

void cc_graph_retain(void *p) { atomic_fetch_add(&((cucore_graph *)p)->refs, 1); }

/* The graph's allocations (allocation nodes) leave the memory registry with the graph. */
static void graph_mem_forget(cucore_graph *g) {
  for (int i = 0; g->mem_nodes && i < g->node_count; i++)
    if (g->nodes[i]->type == CUCORE_GRAPH_NODE_MEM_ALLOC)
      (void)cc_reg_remove(&cc_mem_registry, g->nodes[i]->mem_ptr);
}

void cc_graph_release(void *p) {
  cucore_graph *g = p;
  if (!g || atomic_fetch_sub(&g->refs, 1) != 1) return;
  graph_mem_forget(g);
  for (int i = 0; i < g->node_count; i++) cc_graph_node_free(g->nodes[i]);
  free(g->nodes);
  for (int i = 0; i < g->body_count; i++) cc_handle_retire(g->bodies[i], CC_KIND_GRAPH);
  free(g->bodies);
  free(g->dot);
  free(g->map);
  /* The driver drops the CUgraph's set once no executable graph made from it runs. */
  if (g->attached) cc_refs_expect_drop();
  if (g->h && cc_device_make_current(g->dev) == CUCORE_OK) (void)DRV(cuGraphDestroy)(g->h);
  cc_refs_release(g->held);
  cc_handle_retire(g, CC_KIND_GRAPH);
}

cucore_status cucore_graph_destroy(cucore_graph *g) {
  cc_begin();
  if (!g) return CUCORE_OK;
  CC_CHECK_HANDLE(g, GRAPH, "cucore_graph_destroy", "graph");
  if (g->is_body) return CUCORE_OK;
  cc_handle_kill(g, CC_KIND_GRAPH); /* executable graphs made from it keep it */
  cc_graph_release(g);
  cc_refs_drain();
  return CUCORE_OK;
}

/* ---- nodes ---------------------------------------------------------------------------------- */

cucore_status cc_graph_enter(cucore_graph *g, cucore_graph_node **out, const char *fn) {
  if (!out) return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: `out` is NULL", fn);
  *out = NULL;
  CC_CHECK_HANDLE(g, GRAPH, fn, "graph");
  return CUCORE_OK;
}

cucore_status cc_graph_deps(cucore_graph *g, cucore_graph_node *const *deps, size_t n,
                            CUgraphNode *buf, size_t buf_len, CUgraphNode **hs, const char *fn) {
  *hs = buf;
  if (n == 0) return CUCORE_OK;
  if (!deps)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: `deps` is NULL with a count of %zu", fn, n);
  for (size_t i = 0; i < n; i++) {
    if (!deps[i]) return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: dependency %zu is NULL", fn, i);
    if (deps[i]->removed) {
      char what[CC_NODE_WHAT];
      cc_graph_node_describe(deps[i], what, sizeof what);
      return cc_fail(CUCORE_INVALID_ARGUMENT,
                     "%s: dependency %zu, %s, was destroyed (cucore_graph_node_destroy)", fn, i,
                     what);
    }
    if (deps[i]->graph != g) {
      char what[CC_NODE_WHAT];
      cc_graph_node_describe(deps[i], what, sizeof what);
      return cc_fail(CUCORE_INVALID_ARGUMENT,
                     "%s: dependency %zu, %s, is a node of another graph%s; a node depends only "
                     "on nodes of its own graph",
                     fn, i, what,
                     deps[i]->graph->root == g->root ? " (a conditional body, or the graph "
                                                       "around one)"
                                                     : "");
    }
    for (size_t j = 0; j < i; j++)
      if (deps[j] == deps[i])
        return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: dependencies %zu and %zu are the same node",
                       fn, j, i);
  }
  if (n > buf_len) {
    *hs = cc_calloc(n, sizeof **hs, "dependency handles");
    if (!*hs) return CUCORE_HOST_OUT_OF_MEMORY;
  }
  for (size_t i = 0; i < n; i++) (*hs)[i] = deps[i]->h;
  return CUCORE_OK;
}

cucore_status cc_graph_node_new(cucore_graph *g, cucore_graph_node_type type,
                                cucore_graph_node **out) {
  cucore_graph_node *n = cc_calloc(1, sizeof *n, "a graph node");
  if (!n) return CUCORE_HOST_OUT_OF_MEMORY;
  n->graph = g;
  n->type = type;
  n->index = -1;
  *out = n;
  return CUCORE_OK;
}

/* ---- the nodes by driver handle --------------------------------------------------------- */

static size_t slot_of(CUgraphNode h, size_t cap) {
  uint64_t x = (uint64_t)(uintptr_t)h;
  x ^= x >> 29;
  x *= 0x9e3779b97f4a7c15ull;
  return (size_t)(x >> 32) & (cap - 1);
}

static void map_put(cucore_graph *root, const cucore_graph_node *n) {
  size_t i = slot_of(n->h, root->map_cap);
  while (root->map[i] > 0) i = (i + 1) & (root->map_cap - 1);
  if (root->map[i] == 0) root->map_used++;
  root->map[i] = n->index + 1;
}

/* Room for one more handle: the map at most 3/4 full (destroyed slots count), rebuilt twice
 * as large (or as large, to drop them) when not. */
static cucore_status map_reserve(cucore_graph *root) {
  if (root->map && (root->map_used + 1) * 4 <= root->map_cap * 3) return CUCORE_OK;
  size_t cap = root->map_cap ? root->map_cap : 16;
  while ((size_t)(root->node_count + 1) * 2 > cap) cap *= 2;
  int *map = cc_calloc(cap, sizeof *map, "a graph's map of node handles");
  if (!map) return CUCORE_HOST_OUT_OF_MEMORY;
  free(root->map);
  root->map = map;
  root->map_cap = cap;
  root->map_used = 0;
  for (int i = 0; i < root->node_count; i++)
    if (!root->nodes[i]->removed && root->nodes[i]->h) map_put(root, root->nodes[i]);
  return CUCORE_OK;
}

cucore_status cc_graph_add_node(cucore_graph *g, cucore_graph_node *n) {
  cucore_graph *root = g->root;
  cucore_graph_node **ns = cc_grow(root->nodes, &root->node_cap, (size_t)root->node_count + 1,
                                   sizeof *ns, "a graph's nodes");
  if (!ns) return CUCORE_HOST_OUT_OF_MEMORY;
  root->nodes = ns;
  cucore_status st = map_reserve(root);
  if (st != CUCORE_OK) return st;
  n->index = root->node_count;
  n->seq = n->adopted ? 0 : ++root->seq;
  root->nodes[root->node_count++] = n;
  map_put(root, n);
  return CUCORE_OK;
}

void cc_graph_forget_node(cucore_graph_node *n) {
  cucore_graph *root = n->graph->root;
  if (!root->map_cap) return;
  size_t i = slot_of(n->h, root->map_cap);
  while (root->map[i] != 0) {
    if (root->map[i] == n->index + 1) {
      root->map[i] = -1;
      return;
    }
    i = (i + 1) & (root->map_cap - 1);
  }
}

int cc_graph_node_in_exec(const cucore_graph_node *n, const cucore_graph_exec *e) {
  return n->graph->root == e->graph && !n->removed && n->seq <= e->seq;
}

void cc_graph_node_undo(cucore_graph_node *n) {
  if (DRV(cuGraphDestroyNode)) (void)DRV(cuGraphDestroyNode)(n->h);
}

cucore_status cc_graph_keep_node(cucore_graph *g, cucore_graph_node *n) {
  cucore_status st = cc_graph_add_node(g, n);
  if (st != CUCORE_OK) cc_graph_node_undo(n);
  return st;
}

cucore_graph_node *cc_graph_find_node(const cucore_graph *root, CUgraphNode h) {
  if (!h || !root->map_cap) return NULL;
  size_t i = slot_of(h, root->map_cap);
  while (root->map[i] != 0) {
    int k = root->map[i];
    if (k > 0 && root->nodes[k - 1]->h == h) return root->nodes[k - 1];
    i = (i + 1) & (root->map_cap - 1);
  }
  return NULL;
}

void cc_graph_node_describe(const cucore_graph_node *n, char *buf, size_t len) {
  const char *type = cucore_graph_node_type_name(n->type);
  if (n->k)
    cc_format_field(buf, len, "node %d (%s `%s`)", n->index, type, n->k->asked);
  else
    cc_format_field(buf, len, "node %d (%s)", n->index, type);
}

const char *cucore_graph_node_type_name(cucore_graph_node_type type) {
  switch (type) {
  case CUCORE_GRAPH_NODE_KERNEL: return "kernel";
  case CUCORE_GRAPH_NODE_MEMCPY: return "memcpy";
  case CUCORE_GRAPH_NODE_MEMSET: return "memset";
  case CUCORE_GRAPH_NODE_HOST: return "host";
  case CUCORE_GRAPH_NODE_GRAPH: return "graph";
  case CUCORE_GRAPH_NODE_EMPTY: return "empty";
  case CUCORE_GRAPH_NODE_WAIT_EVENT: return "wait_event";
  case CUCORE_GRAPH_NODE_EVENT_RECORD: return "event_record";
  case CUCORE_GRAPH_NODE_EXT_SEMAS_SIGNAL: return "ext_semas_signal";
  case CUCORE_GRAPH_NODE_EXT_SEMAS_WAIT: return "ext_semas_wait";
  case CUCORE_GRAPH_NODE_BATCH_MEM_OP: return "batch_mem_op";
  case CUCORE_GRAPH_NODE_CONDITIONAL: return "conditional";
  case CUCORE_GRAPH_NODE_MEM_ALLOC: return "mem_alloc";
  case CUCORE_GRAPH_NODE_MEM_FREE: return "mem_free";
  }
  return "unknown";
}

cucore_status cucore_graph_node_get_type(const cucore_graph_node *node,
                                         cucore_graph_node_type *type) {
  cc_begin();
  CC_CHECK_ARG(node, "cucore_graph_node_get_type", "node");
  CC_CHECK_ARG(type, "cucore_graph_node_get_type", "type");
  *type = node->type;
  return CUCORE_OK;
}

cucore_status cucore_graph_node_get_native(const cucore_graph_node *node, void **cunode) {
  cc_begin();
  CC_CHECK_ARG(node, "cucore_graph_node_get_native", "node");
  CC_CHECK_ARG(cunode, "cucore_graph_node_get_native", "cunode");
  *cunode = node->h;
  return CUCORE_OK;
}

/* ---- queries -------------------------------------------------------------------------------- */

cucore_status cucore_graph_get_node_count(cucore_graph *g, size_t *count) {
  cc_begin();
  CC_CHECK_ARG(count, "cucore_graph_get_node_count", "count");
  *count = 0;
  CC_CHECK_HANDLE(g, GRAPH, "cucore_graph_get_node_count", "graph");
  cucore_status st = CC_DRV_REQUIRE(cuGraphGetNodes);
  if (st != CUCORE_OK) return st;
  size_t n = 0;
  CUresult r = DRV(cuGraphGetNodes)(g->h, NULL, &n);
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuGraphGetNodes", "cucore_graph_get_node_count");
  *count = n;
  return CUCORE_OK;
}

cucore_status cucore_graph_get_device(const cucore_graph *g, cucore_device **dev) {
  cc_begin();
  CC_CHECK_HANDLE(g, GRAPH, "cucore_graph_get_device", "graph");
  CC_CHECK_ARG(dev, "cucore_graph_get_device", "dev");
  *dev = g->dev;
  return CUCORE_OK;
}

cucore_status cucore_graph_get_native(cucore_graph *g, void **cugraph) {
  cc_begin();
  CC_CHECK_HANDLE(g, GRAPH, "cucore_graph_get_native", "graph");
  CC_CHECK_ARG(cugraph, "cucore_graph_get_native", "cugraph");
  *cugraph = g->h;
  return CUCORE_OK;
}

cucore_status cucore_graph_add_dependency(cucore_graph *g, cucore_graph_node *from,
                                          cucore_graph_node *to) {
  cc_begin();
  const char *fn = "cucore_graph_add_dependency";
  CC_CHECK_HANDLE(g, GRAPH, fn, "graph");
  CC_CHECK_ARG(from, fn, "from");
  CC_CHECK_ARG(to, fn, "to");
  if (from == to) return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: a node cannot depend on itself", fn);
  CUgraphNode buf[2], *hs = NULL;
  cucore_graph_node *pair[2] = {from, to};
  cucore_status st = cc_graph_deps(g, pair, 2, buf, 2, &hs, fn);
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuGraphAddDependencies);
  if (st == CUCORE_OK) st = cc_device_make_current(g->dev);
  if (st != CUCORE_OK) return st;
  CUresult r = DRV(cuGraphAddDependencies)(g->h, &hs[0], &hs[1], 1);
  if (r != CUDA_SUCCESS) {
    char a[CC_NODE_WHAT], b[CC_NODE_WHAT];
    cc_graph_node_describe(from, a, sizeof a);
    cc_graph_node_describe(to, b, sizeof b);
    return cc_fail_cu(r, "cuGraphAddDependencies", "%s: %s -> %s (an edge that exists already?)",
                      fn, a, b);
  }
  return CUCORE_OK;
}

/* ---- DOT ------------------------------------------------------------------------------------ */

static cucore_status dot_checks(cucore_graph *g, unsigned flags, const char *fn) {
  CC_CHECK_HANDLE(g, GRAPH, fn, "graph");
  if (flags > 0xffffu)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: flags 0x%x go beyond the driver's DOT flags (0..0xffff: "
                   "CUCORE_GRAPH_DOT_VERBOSE, _KERNEL_PARAMS, _HANDLES, ...)",
                   fn, flags);
  cucore_status st = CC_DRV_REQUIRE(cuGraphDebugDotPrint);
  if (st == CUCORE_OK) st = cc_device_make_current(g->dev);
  return st;
}

static cucore_status dot_print(cucore_graph *g, const char *path, unsigned flags, const char *fn) {
  CUresult r = DRV(cuGraphDebugDotPrint)(g->h, path, flags);
  if (r == CUDA_ERROR_OPERATING_SYSTEM || r == CUDA_ERROR_FILE_NOT_FOUND)
    return cc_fail(cc_status(CUCORE_IO_ERROR, CUCORE_SOURCE_DRIVER, (int)r),
                   "%s: the driver could not write `%s` (%s)", fn, path, cc_cu_name(r));
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuGraphDebugDotPrint", "%s: `%s`", fn, path);
  return CUCORE_OK;
}

cucore_status cucore_graph_dot_write(cucore_graph *g, const char *path, unsigned flags) {
  cc_begin();
  const char *fn = "cucore_graph_dot_write";
  CC_CHECK_ARG(path, fn, "path");
  cucore_status st = dot_checks(g, flags, fn);
  if (st != CUCORE_OK) return st;
  return dot_print(g, path, flags, fn);
}

cucore_status cucore_graph_dot(cucore_graph *g, unsigned flags, const char **dot) {
  cc_begin();
  const char *fn = "cucore_graph_dot";
  CC_CHECK_ARG(dot, fn, "dot");
  *dot = NULL;
  cucore_status st = dot_checks(g, flags, fn);
  if (st != CUCORE_OK) return st;
  const char *tmp = getenv("TMPDIR");
  char path[4096];
  snprintf(path, sizeof path, "%s/cucore-graph-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
  int fd = mkstemp(path);
  if (fd < 0)
    return cc_fail(cc_status(CUCORE_IO_ERROR, CUCORE_SOURCE_ERRNO, errno),
                   "%s: cannot make a temporary file like `%s`: %s", fn, path, strerror(errno));
  close(fd);
  st = dot_print(g, path, flags, fn);
  unsigned char *text = NULL;
  size_t size = 0;
  if (st == CUCORE_OK) st = cc_read_file(path, &text, &size);
  unlink(path);
  if (st != CUCORE_OK) return st;
  free(g->dot);
  g->dot = (char *)text;
  *dot = g->dot;
  return CUCORE_OK;
}
