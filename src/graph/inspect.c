/*
 * inspect.c -- a graph as the driver has it: its nodes (those the driver made, by a capture or
 * a native call, taken in on first sight), its edges with their data, each node's dependencies
 * and dependents; edges removed, nodes destroyed; the driver's ids of graphs and nodes.
 */
#include "graph/graph.h"

#include <stdlib.h>
#include <string.h>

/* The node structure of driver node `h` of graph `g`: the one cucore has, or a new one. */
static cucore_status adopt(cucore_graph *g, CUgraphNode h, cucore_graph_node **out) {
  *out = cc_graph_find_node(g->root, h);
  if (*out) return CUCORE_OK;
  CUgraphNodeType t;
  CUresult r = DRV(cuGraphNodeGetType)(h, &t);
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuGraphNodeGetType", "a node of the graph");
  cucore_graph_node *n = NULL;
  cucore_status st = cc_graph_node_new(g, (cucore_graph_node_type)t, &n);
  if (st != CUCORE_OK) return st;
  n->h = h;
  n->adopted = 1;
  st = cc_graph_add_node(g, n);
  if (st != CUCORE_OK) {
    cc_graph_node_free(n);
    return st;
  }
  *out = n;
  return CUCORE_OK;
}

/* Common entry of the list calls: `count` set to 0, `capacity` entries given where asked. */
static cucore_status list_enter(const void *array, size_t capacity, size_t *count, const char *fn) {
  if (!count) return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: `count` is NULL", fn);
  *count = 0;
  if (capacity && !array)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: the array is NULL with a capacity of %zu", fn,
                   capacity);
  return CUCORE_OK;
}

static cucore_status node_alive(const cucore_graph_node *n, const char *fn, const char *what) {
  if (!n) return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: `%s` is NULL", fn, what);
  if (n->removed) {
    char d[CC_NODE_WHAT];
    cc_graph_node_describe(n, d, sizeof d);
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: %s was destroyed (cucore_graph_node_destroy)", fn,
                   d);
  }
  return CUCORE_OK;
}

typedef CUresult (*node_query)(CUgraph g, CUgraphNode *nodes, size_t *n);

/* The nodes a query of `g` answers, taken in, the first `capacity` copied out. */
static cucore_status list_nodes(cucore_graph *g, node_query q, const char *call,
                                cucore_graph_node **nodes, size_t capacity, size_t *count,
                                const char *fn) {
  cucore_status st = list_enter(nodes, capacity, count, fn);
  if (st != CUCORE_OK) return st;
  CC_CHECK_HANDLE(g, GRAPH, fn, "graph");
  st = cc_driver_require((const void *)q, call, cc_driver_symbol_version(call));
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuGraphNodeGetType);
  if (st == CUCORE_OK) st = cc_device_make_current(g->dev);
  if (st != CUCORE_OK) return st;
  size_t n = 0;
  CUresult r = q(g->h, NULL, &n);
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, call, "%s", fn);
  CUgraphNode *hs = cc_calloc(n ? n : 1, sizeof *hs, "the graph's node handles");
  if (!hs) return CUCORE_HOST_OUT_OF_MEMORY;
  r = q(g->h, hs, &n);
  if (r != CUDA_SUCCESS) st = cc_fail_cu(r, call, "%s", fn);
  for (size_t i = 0; st == CUCORE_OK && i < n; i++) {
    cucore_graph_node *node = NULL;
    st = adopt(g, hs[i], &node);
    if (st == CUCORE_OK && i < capacity) nodes[i] = node;
  }
  free(hs);
  if (st == CUCORE_OK) *count = n;
  return st;
}

cucore_status cucore_graph_get_nodes(cucore_graph *g, cucore_graph_node **nodes, size_t capacity,
                                     size_t *count) {
  cc_begin();
  return list_nodes(g, DRV(cuGraphGetNodes), "cuGraphGetNodes", nodes, capacity, count,
                    "cucore_graph_get_nodes");
}

cucore_status cucore_graph_get_root_nodes(cucore_graph *g, cucore_graph_node **nodes,
                                          size_t capacity, size_t *count) {
  cc_begin();
  return list_nodes(g, DRV(cuGraphGetRootNodes), "cuGraphGetRootNodes", nodes, capacity, count,
                    "cucore_graph_get_root_nodes");
}

/* ---- edges ---------------------------------------------------------------------------------- */

/* Which edges list_edges asks for. */
typedef enum { EDGES_ALL, EDGES_INTO, EDGES_OUT_OF } edge_set;

static CUresult query_edges(edge_set set, CUgraph g, CUgraphNode node, CUgraphNode *a,
                            CUgraphNode *b, CUgraphEdgeData *data, size_t *n) {
  if (set == EDGES_ALL) return DRV(cuGraphGetEdges)(g, a, b, data, n);
  if (set == EDGES_INTO) return DRV(cuGraphNodeGetDependencies)(node, a, data, n);
  return DRV(cuGraphNodeGetDependentNodes)(node, a, data, n);
}

static const char *edge_call(edge_set set) {
  return set == EDGES_ALL    ? "cuGraphGetEdges"
         : set == EDGES_INTO ? "cuGraphNodeGetDependencies"
                             : "cuGraphNodeGetDependentNodes";
}

static cucore_status edges_require(edge_set set) {
  cucore_status st = set == EDGES_ALL    ? CC_DRV_REQUIRE(cuGraphGetEdges)
                     : set == EDGES_INTO ? CC_DRV_REQUIRE(cuGraphNodeGetDependencies)
                                         : CC_DRV_REQUIRE(cuGraphNodeGetDependentNodes);
  return st == CUCORE_OK ? CC_DRV_REQUIRE(cuGraphNodeGetType) : st;
}

/* One edge from the driver's answer, its nodes taken in. */
static cucore_status edge_out(cucore_graph *g, edge_set set, cucore_graph_node *node, CUgraphNode a,
                              CUgraphNode b, const CUgraphEdgeData *d, cucore_graph_edge *e) {
  memset(e, 0, sizeof *e);
  cucore_graph_node *other = NULL;
  cucore_status st = adopt(g, a, &other);
  if (st == CUCORE_OK && set == EDGES_ALL) st = adopt(g, b, &e->to);
  if (st != CUCORE_OK) return st;
  if (set == EDGES_ALL) {
    e->from = other;
  } else {
    e->from = set == EDGES_INTO ? other : node;
    e->to = set == EDGES_INTO ? node : other;
  }
  e->type = (cucore_edge_type)d->type;
  e->from_port = d->from_port;
  e->to_port = d->to_port;
  return CUCORE_OK;
}

/* The edges of graph `g` (`node` NULL) or into or out of `node`, the first `capacity` copied. */
static cucore_status list_edges(cucore_graph *g, edge_set set, cucore_graph_node *node,
                                cucore_graph_edge *edges, size_t capacity, size_t *count,
                                const char *fn) {
  cucore_status st = edges_require(set);
  if (st == CUCORE_OK) st = cc_device_make_current(g->dev);
  if (st != CUCORE_OK) return st;
  CUgraphNode nh = node ? node->h : NULL;
  size_t n = 0;
  CUresult r = query_edges(set, g->h, nh, NULL, NULL, NULL, &n);
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, edge_call(set), "%s", fn);
  size_t slots = n ? n : 1;
  CUgraphNode *a = cc_calloc(slots, sizeof *a, "edge handles");
  CUgraphNode *b = cc_calloc(slots, sizeof *b, "edge handles");
  CUgraphEdgeData *d = cc_calloc(slots, sizeof *d, "edge data");
  if (!a || !b || !d) {
    st = CUCORE_HOST_OUT_OF_MEMORY;
  } else if ((r = query_edges(set, g->h, nh, a, b, d, &n)) != CUDA_SUCCESS) {
    st = cc_fail_cu(r, edge_call(set), "%s", fn);
  }
  for (size_t i = 0; st == CUCORE_OK && i < n; i++) {
    cucore_graph_edge e;
    st = edge_out(g, set, node, a[i], b[i], &d[i], &e);
    if (st == CUCORE_OK && i < capacity) edges[i] = e;
  }
  free(a);
  free(b);
  free(d);
  if (st == CUCORE_OK) *count = n;
  return st;
}

cucore_status cucore_graph_get_edges(cucore_graph *g, cucore_graph_edge *edges, size_t capacity,
                                     size_t *count) {
  cc_begin();
  const char *fn = "cucore_graph_get_edges";
  cucore_status st = list_enter(edges, capacity, count, fn);
  if (st != CUCORE_OK) return st;
  CC_CHECK_HANDLE(g, GRAPH, fn, "graph");
  return list_edges(g, EDGES_ALL, NULL, edges, capacity, count, fn);
}

static cucore_status node_edges(cucore_graph_node *node, edge_set set, cucore_graph_edge *edges,
                                size_t capacity, size_t *count, const char *fn) {
  cucore_status st = list_enter(edges, capacity, count, fn);
  if (st == CUCORE_OK) st = node_alive(node, fn, "node");
  if (st != CUCORE_OK) return st;
  return list_edges(node->graph, set, node, edges, capacity, count, fn);
}

cucore_status cucore_graph_node_get_dependencies(cucore_graph_node *node, cucore_graph_edge *edges,
                                                 size_t capacity, size_t *count) {
  cc_begin();
  return node_edges(node, EDGES_INTO, edges, capacity, count, "cucore_graph_node_get_dependencies");
}

cucore_status cucore_graph_node_get_dependents(cucore_graph_node *node, cucore_graph_edge *edges,
                                               size_t capacity, size_t *count) {
  cc_begin();
  return node_edges(node, EDGES_OUT_OF, edges, capacity, count, "cucore_graph_node_get_dependents");
}

/* The refusal of a missing edge: what `to` depends on, named. */
static cucore_status no_such_edge(const cucore_graph_node *from, const cucore_graph_node *to,
                                  const cucore_graph_edge *deps, size_t n, const char *fn) {
  char a[CC_NODE_WHAT], b[CC_NODE_WHAT];
  cc_graph_node_describe(from, a, sizeof a);
  cc_graph_node_describe(to, b, sizeof b);
  cc_sb list = {0};
  for (size_t i = 0; i < n && i < 16; i++) {
    char d[CC_NODE_WHAT];
    cc_graph_node_describe(deps[i].from, d, sizeof d);
    cc_sb_printf(&list, "%s%s", i ? ", " : "", d);
  }
  if (n > 16) cc_sb_printf(&list, " and %zu more", n - 16);
  cucore_status st = cc_fail(CUCORE_INVALID_ARGUMENT,
                             "%s: %s does not depend on %s; it depends on %s", fn, b, a,
                             n ? cc_sb_text(&list) : "nothing");
  cc_sb_free(&list);
  return st;
}

cucore_status cucore_graph_remove_dependency(cucore_graph *g, cucore_graph_node *from,
                                             cucore_graph_node *to) {
  cc_begin();
  const char *fn = "cucore_graph_remove_dependency";
  CC_CHECK_HANDLE(g, GRAPH, fn, "graph");
  cucore_status st = node_alive(from, fn, "from");
  if (st == CUCORE_OK) st = node_alive(to, fn, "to");
  if (st != CUCORE_OK) return st;
  if (from->graph != g || to->graph != g)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: `%s` is a node of another graph", fn,
                   from->graph != g ? "from" : "to");
  st = CC_DRV_REQUIRE(cuGraphRemoveDependencies);
  size_t n = 0;
  if (st == CUCORE_OK) st = list_edges(g, EDGES_INTO, to, NULL, 0, &n, fn);
  cucore_graph_edge *deps = st == CUCORE_OK ? cc_calloc(n ? n : 1, sizeof *deps, "edges") : NULL;
  if (st == CUCORE_OK && !deps) st = CUCORE_HOST_OUT_OF_MEMORY;
  if (st == CUCORE_OK) st = list_edges(g, EDGES_INTO, to, deps, n, &n, fn);
  size_t at = n;
  for (size_t i = 0; st == CUCORE_OK && i < n && at == n; i++)
    if (deps[i].from == from) at = i;
  if (st == CUCORE_OK && at == n) st = no_such_edge(from, to, deps, n, fn);
  if (st == CUCORE_OK) {
    CUgraphEdgeData d;
    memset(&d, 0, sizeof d);
    d.type = (unsigned char)deps[at].type;
    d.from_port = (unsigned char)deps[at].from_port;
    d.to_port = (unsigned char)deps[at].to_port;
    CUresult r = DRV(cuGraphRemoveDependencies)(g->h, &from->h, &to->h, &d, 1);
    if (r != CUDA_SUCCESS) st = cc_fail_cu(r, "cuGraphRemoveDependencies", "%s", fn);
  }
  free(deps);
  return st;
}

/* ---- destroying a node ---------------------------------------------------------------------- */

static void mark_removed(cucore_graph_node *n);

/* Every node cucore has of graph `inner` (a body or an embedded child graph), gone with it. */
static void mark_graph_removed(const cucore_graph *inner) {
  cucore_graph *root = inner->root;
  for (int i = 0; i < root->node_count; i++)
    if (root->nodes[i]->graph == inner && !root->nodes[i]->removed) mark_removed(root->nodes[i]);
}

static void mark_removed(cucore_graph_node *n) {
  cc_graph_forget_node(n);
  n->removed = 1;
  n->seq = ~0ull; /* in no executable graph's range (cc_graph_node_in_exec, fast paths) */
  n->h = NULL;
  for (unsigned i = 0; i < n->body_count; i++) mark_graph_removed(n->bodies[i]);
  if (n->child) mark_graph_removed(n->child);
  if (n->type == CUCORE_GRAPH_NODE_CONDITIONAL && !n->adopted) n->graph->root->conditionals--;
}

cucore_status cucore_graph_node_destroy(cucore_graph_node *node) {
  cc_begin();
  const char *fn = "cucore_graph_node_destroy";
  cucore_status st = node_alive(node, fn, "node");
  if (st != CUCORE_OK) return st;
  if (node->type == CUCORE_GRAPH_NODE_MEM_ALLOC || node->type == CUCORE_GRAPH_NODE_MEM_FREE) {
    char d[CC_NODE_WHAT];
    cc_graph_node_describe(node, d, sizeof d);
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: %s is a memory node; the graph's allocation and free nodes stay "
                   "together (build the graph again without them)",
                   fn, d);
  }
  st = CC_DRV_REQUIRE(cuGraphDestroyNode);
  if (st == CUCORE_OK) st = cc_device_make_current(node->graph->dev);
  if (st != CUCORE_OK) return st;
  CUresult r = DRV(cuGraphDestroyNode)(node->h);
  if (r != CUDA_SUCCESS) {
    char d[CC_NODE_WHAT];
    cc_graph_node_describe(node, d, sizeof d);
    return cc_fail_cu(r, "cuGraphDestroyNode", "%s: %s", fn, d);
  }
  mark_removed(node);
  return CUCORE_OK;
}

cucore_status cucore_graph_node_get_graph(const cucore_graph_node *node, cucore_graph **g) {
  cc_begin();
  const char *fn = "cucore_graph_node_get_graph";
  CC_CHECK_ARG(g, fn, "g");
  *g = NULL;
  CC_CHECK_ARG(node, fn, "node");
  *g = node->graph;
  return CUCORE_OK;
}

/* ---- ids (CUDA 13.1) ------------------------------------------------------------------------ */

cucore_status cucore_graph_get_id(cucore_graph *g, unsigned *id) {
  cc_begin();
  const char *fn = "cucore_graph_get_id";
  CC_CHECK_ARG(id, fn, "id");
  *id = 0;
  CC_CHECK_HANDLE(g, GRAPH, fn, "graph");
  cucore_status st = CC_DRV_REQUIRE(cuGraphGetId);
  if (st != CUCORE_OK) return st;
  CUresult r = DRV(cuGraphGetId)(g->h, id);
  return r == CUDA_SUCCESS ? CUCORE_OK : cc_fail_cu(r, "cuGraphGetId", "%s", fn);
}

cucore_status cucore_graph_exec_get_id(cucore_graph_exec *e, unsigned *id) {
  cc_begin();
  const char *fn = "cucore_graph_exec_get_id";
  CC_CHECK_ARG(id, fn, "id");
  *id = 0;
  CC_CHECK_HANDLE(e, GRAPH_EXEC, fn, "exec");
  cucore_status st = CC_DRV_REQUIRE(cuGraphExecGetId);
  if (st != CUCORE_OK) return st;
  CUresult r = DRV(cuGraphExecGetId)(e->h, id);
  return r == CUDA_SUCCESS ? CUCORE_OK : cc_fail_cu(r, "cuGraphExecGetId", "%s", fn);
}

cucore_status cucore_graph_node_get_id(cucore_graph_node *node, unsigned *id) {
  cc_begin();
  const char *fn = "cucore_graph_node_get_id";
  CC_CHECK_ARG(id, fn, "id");
  *id = 0;
  cucore_status st = node_alive(node, fn, "node");
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuGraphNodeGetLocalId);
  if (st != CUCORE_OK) return st;
  CUresult r = DRV(cuGraphNodeGetLocalId)(node->h, id);
  return r == CUDA_SUCCESS ? CUCORE_OK : cc_fail_cu(r, "cuGraphNodeGetLocalId", "%s", fn);
}

cucore_status cucore_graph_node_get_tools_id(cucore_graph_node *node, uint64_t *id) {
  cc_begin();
  const char *fn = "cucore_graph_node_get_tools_id";
  CC_CHECK_ARG(id, fn, "id");
  *id = 0;
  cucore_status st = node_alive(node, fn, "node");
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuGraphNodeGetToolsId);
  if (st != CUCORE_OK) return st;
  unsigned long long v = 0;
  CUresult r = DRV(cuGraphNodeGetToolsId)(node->h, &v);
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuGraphNodeGetToolsId", "%s", fn);
  *id = v;
  return CUCORE_OK;
}
