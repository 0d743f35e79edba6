/* fake_graph.c -- the fake driver's graphs (see fake_graph.h): nodes of every kind keep the
 * parameters they were given and answer them back, edges keep their data, a child graph is a
 * clone of the nodes (not the edges), a conditional node owns empty bodies, every graph and
 * executable graph has an id and every node a local id. The calls here are not counted for
 * CUCORE_FAKE_FAIL_AT. */
#define _GNU_SOURCE
#include "fake_graph.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static _Atomic unsigned next_id = 1;

unsigned fake_graph_next_id(void) { return atomic_fetch_add(&next_id, 1); }

fake_graph *fake_graph_new(void) {
  fake_graph *g = calloc(1, sizeof *g);
  if (g) g->id = fake_graph_next_id();
  return g;
}

static int grow(void **p, int *cap, int need, size_t size) {
  if (need <= *cap) return 1;
  int n = *cap ? *cap * 2 : 8;
  while (n < need) n *= 2;
  void *q = realloc(*p, (size_t)n * size);
  if (!q) return 0;
  *p = q;
  *cap = n;
  return 1;
}

static int edge_add(fake_graph *g, fake_gnode *from, fake_gnode *to, const CUgraphEdgeData *d) {
  if (!grow((void **)&g->edges, &g->ecap, g->ecount + 1, sizeof *g->edges)) return 0;
  fake_edge *e = &g->edges[g->ecount++];
  memset(e, 0, sizeof *e);
  e->from = from;
  e->to = to;
  if (d) e->data = *d;
  return 1;
}

fake_gnode *fake_graph_node_new(fake_graph *g, CUgraphNodeType type, const CUgraphNode *deps,
                                size_t n) {
  if (!grow((void **)&g->list, &g->cap, g->count + 1, sizeof *g->list)) return NULL;
  fake_gnode *node = calloc(1, sizeof *node);
  if (!node) return NULL;
  node->type = type;
  node->g = g;
  node->alive = 1;
  node->local_id = (unsigned)g->count;
  g->list[g->count++] = node;
  atomic_fetch_add(&g->nodes, 1);
  for (size_t i = 0; i < n; i++)
    if (!edge_add(g, (fake_gnode *)deps[i], node, NULL)) return NULL;
  return node;
}

static void graph_destroy(fake_graph *g) {
  if (!g) return;
  fake_graph_free_nodes(g);
  free(g);
}

void fake_graph_free_nodes(fake_graph *g) {
  if (g->is_copy) return;
  for (int i = 0; i < g->count; i++) {
    fake_gnode *n = g->list[i];
    graph_destroy(n->child);
    for (unsigned b = 0; b < n->body_count; b++) graph_destroy((fake_graph *)n->bodies[b]);
    free(n);
  }
  free(g->list);
  free(g->edges);
  g->list = NULL;
  g->edges = NULL;
  g->count = g->cap = g->ecount = g->ecap = 0;
}

/* ---- nodes of each kind ------------------------------------------------------------------- */

#define NODE_OR_FAIL(var, g, type, deps, n)                                \
  fake_gnode *var = fake_graph_node_new((fake_graph *)(g), type, deps, n); \
  if (!var) return CUDA_ERROR_OUT_OF_MEMORY

static CUresult fake_cuGraphAddKernelNode(CUgraphNode *h, CUgraph g, const CUgraphNode *deps,
                                          size_t n, const CUDA_KERNEL_NODE_PARAMS *p) {
  if (!p || !p->blockDimX || (!p->kernelParams && !p->extra)) return CUDA_ERROR_INVALID_VALUE;
  NODE_OR_FAIL(node, g, CU_GRAPH_NODE_TYPE_KERNEL, deps, n);
  node->kernel = *p;
  *h = (CUgraphNode)node;
  return CUDA_SUCCESS;
}
static CUresult fake_cuGraphKernelNodeSetParams(CUgraphNode h, const CUDA_KERNEL_NODE_PARAMS *p) {
  fake_gnode *n = (fake_gnode *)h;
  if (!p || n->type != CU_GRAPH_NODE_TYPE_KERNEL) return CUDA_ERROR_INVALID_VALUE;
  n->kernel = *p;
  return CUDA_SUCCESS;
}
static CUresult fake_cuGraphKernelNodeGetParams(CUgraphNode h, CUDA_KERNEL_NODE_PARAMS *p) {
  fake_gnode *n = (fake_gnode *)h;
  if (!p || n->type != CU_GRAPH_NODE_TYPE_KERNEL) return CUDA_ERROR_INVALID_VALUE;
  *p = n->kernel;
  return CUDA_SUCCESS;
}
static CUresult fake_cuGraphKernelNodeSetAttribute(CUgraphNode h, CUkernelNodeAttrID id,
                                                   const CUkernelNodeAttrValue *v) {
  fake_gnode *n = (fake_gnode *)h;
  if (n->type != CU_GRAPH_NODE_TYPE_KERNEL) return CUDA_ERROR_INVALID_VALUE;
  if (id == CU_KERNEL_NODE_ATTRIBUTE_CLUSTER_DIMENSION) {
    n->cluster[0] = v->clusterDim.x;
    n->cluster[1] = v->clusterDim.y;
    n->cluster[2] = v->clusterDim.z;
  }
  return CUDA_SUCCESS;
}
static CUresult fake_cuGraphKernelNodeGetAttribute(CUgraphNode h, CUkernelNodeAttrID id,
                                                   CUkernelNodeAttrValue *v) {
  fake_gnode *n = (fake_gnode *)h;
  if (n->type != CU_GRAPH_NODE_TYPE_KERNEL) return CUDA_ERROR_INVALID_VALUE;
  memset(v, 0, sizeof *v);
  if (id == CU_KERNEL_NODE_ATTRIBUTE_CLUSTER_DIMENSION) {
    v->clusterDim.x = n->cluster[0];
    v->clusterDim.y = n->cluster[1];
    v->clusterDim.z = n->cluster[2];
  }
  return CUDA_SUCCESS;
}
static CUresult fake_cuGraphAddMemsetNode(CUgraphNode *h, CUgraph g, const CUgraphNode *deps,
                                          size_t n, const CUDA_MEMSET_NODE_PARAMS *p,
                                          CUcontext ctx) {
  (void)ctx;
  if (!p || !p->dst || !p->width) return CUDA_ERROR_INVALID_VALUE;
  NODE_OR_FAIL(node, g, CU_GRAPH_NODE_TYPE_MEMSET, deps, n);
  node->memset = *p;
  *h = (CUgraphNode)node;
  return CUDA_SUCCESS;
}
static CUresult fake_cuGraphMemsetNodeGetParams(CUgraphNode h, CUDA_MEMSET_NODE_PARAMS *p) {
  fake_gnode *n = (fake_gnode *)h;
  if (n->type != CU_GRAPH_NODE_TYPE_MEMSET) return CUDA_ERROR_INVALID_VALUE;
  *p = n->memset;
  return CUDA_SUCCESS;
}
static CUresult fake_cuGraphAddMemcpyNode(CUgraphNode *h, CUgraph g, const CUgraphNode *deps,
                                          size_t n, const CUDA_MEMCPY3D *p, CUcontext ctx) {
  (void)ctx;
  if (!p || !p->WidthInBytes) return CUDA_ERROR_INVALID_VALUE;
  NODE_OR_FAIL(node, g, CU_GRAPH_NODE_TYPE_MEMCPY, deps, n);
  node->memcpy = *p;
  *h = (CUgraphNode)node;
  return CUDA_SUCCESS;
}
static CUresult fake_cuGraphMemcpyNodeGetParams(CUgraphNode h, CUDA_MEMCPY3D *p) {
  fake_gnode *n = (fake_gnode *)h;
  if (n->type != CU_GRAPH_NODE_TYPE_MEMCPY) return CUDA_ERROR_INVALID_VALUE;
  *p = n->memcpy;
  return CUDA_SUCCESS;
}
static CUresult fake_cuGraphAddHostNode(CUgraphNode *h, CUgraph g, const CUgraphNode *deps,
                                        size_t n, const CUDA_HOST_NODE_PARAMS *p) {
  if (!p || !p->fn) return CUDA_ERROR_INVALID_VALUE;
  NODE_OR_FAIL(node, g, CU_GRAPH_NODE_TYPE_HOST, deps, n);
  node->host = *p;
  *h = (CUgraphNode)node;
  return CUDA_SUCCESS;
}
static CUresult fake_cuGraphHostNodeGetParams(CUgraphNode h, CUDA_HOST_NODE_PARAMS *p) {
  fake_gnode *n = (fake_gnode *)h;
  if (n->type != CU_GRAPH_NODE_TYPE_HOST) return CUDA_ERROR_INVALID_VALUE;
  *p = n->host;
  return CUDA_SUCCESS;
}
static CUresult fake_cuGraphAddEmptyNode(CUgraphNode *h, CUgraph g, const CUgraphNode *deps,
                                         size_t n) {
  NODE_OR_FAIL(node, g, CU_GRAPH_NODE_TYPE_EMPTY, deps, n);
  *h = (CUgraphNode)node;
  return CUDA_SUCCESS;
}
static CUresult event_node(CUgraphNode *h, CUgraph g, const CUgraphNode *deps, size_t n, CUevent ev,
                           CUgraphNodeType type) {
  if (!ev) return CUDA_ERROR_INVALID_VALUE;
  NODE_OR_FAIL(node, g, type, deps, n);
  node->event = ev;
  *h = (CUgraphNode)node;
  return CUDA_SUCCESS;
}
static CUresult fake_cuGraphAddEventRecordNode(CUgraphNode *h, CUgraph g, const CUgraphNode *deps,
                                               size_t n, CUevent ev) {
  return event_node(h, g, deps, n, ev, CU_GRAPH_NODE_TYPE_EVENT_RECORD);
}
static CUresult fake_cuGraphAddEventWaitNode(CUgraphNode *h, CUgraph g, const CUgraphNode *deps,
                                             size_t n, CUevent ev) {
  return event_node(h, g, deps, n, ev, CU_GRAPH_NODE_TYPE_WAIT_EVENT);
}
static CUresult get_event(CUgraphNode h, CUevent *ev, CUgraphNodeType type) {
  fake_gnode *n = (fake_gnode *)h;
  if (n->type != type) return CUDA_ERROR_INVALID_VALUE;
  *ev = n->event;
  return CUDA_SUCCESS;
}
static CUresult fake_cuGraphEventRecordNodeGetEvent(CUgraphNode h, CUevent *ev) {
  return get_event(h, ev, CU_GRAPH_NODE_TYPE_EVENT_RECORD);
}
static CUresult fake_cuGraphEventWaitNodeGetEvent(CUgraphNode h, CUevent *ev) {
  return get_event(h, ev, CU_GRAPH_NODE_TYPE_WAIT_EVENT);
}
/* A clone of `src`'s live nodes and their parameters (not the edges, nor nested graphs). */
static fake_graph *clone_nodes(const fake_graph *src) {
  fake_graph *c = fake_graph_new();
  for (int i = 0; c && i < src->count; i++) {
    const fake_gnode *s = src->list[i];
    if (!s->alive) continue;
    fake_gnode *n = fake_graph_node_new(c, s->type, NULL, 0);
    if (!n) {
      graph_destroy(c);
      return NULL;
    }
    fake_gnode keep = *n;
    *n = *s;
    n->g = c;
    n->local_id = keep.local_id;
    n->child = NULL;
    n->body_count = 0;
  }
  return c;
}
static CUresult fake_cuGraphAddChildGraphNode(CUgraphNode *h, CUgraph g, const CUgraphNode *deps,
                                              size_t n, CUgraph child) {
  if (!child) return CUDA_ERROR_INVALID_VALUE;
  fake_graph *c = clone_nodes((fake_graph *)child);
  if (!c) return CUDA_ERROR_OUT_OF_MEMORY;
  fake_gnode *node = fake_graph_node_new((fake_graph *)g, CU_GRAPH_NODE_TYPE_GRAPH, deps, n);
  if (!node) {
    graph_destroy(c);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  node->child = c;
  *h = (CUgraphNode)node;
  return CUDA_SUCCESS;
}
static CUresult fake_cuGraphChildGraphNodeGetGraph(CUgraphNode h, CUgraph *out) {
  fake_gnode *n = (fake_gnode *)h;
  if (n->type != CU_GRAPH_NODE_TYPE_GRAPH) return CUDA_ERROR_INVALID_VALUE;
  *out = (CUgraph)n->child;
  return CUDA_SUCCESS;
}
/* cuGraphAddNode: conditional nodes only (what cucore adds through it). */
static CUresult fake_cuGraphAddNode(CUgraphNode *h, CUgraph g, const CUgraphNode *deps,
                                    const CUgraphEdgeData *data, size_t n, CUgraphNodeParams *p) {
  (void)data;
  if (!p || p->type != CU_GRAPH_NODE_TYPE_CONDITIONAL || p->conditional.size < 1 ||
      p->conditional.size > 8)
    return CUDA_ERROR_NOT_SUPPORTED;
  NODE_OR_FAIL(node, g, CU_GRAPH_NODE_TYPE_CONDITIONAL, deps, n);
  node->cond = p->conditional.handle;
  node->cond_type = p->conditional.type;
  for (unsigned i = 0; i < p->conditional.size; i++) {
    node->bodies[i] = (CUgraph)fake_graph_new();
    if (!node->bodies[i]) return CUDA_ERROR_OUT_OF_MEMORY;
    node->body_count++;
  }
  p->conditional.phGraph_out = node->bodies;
  *h = (CUgraphNode)node;
  return CUDA_SUCCESS;
}
static _Atomic unsigned long long next_cond = 1;
static CUresult fake_cuGraphConditionalHandleCreate(CUgraphConditionalHandle *out, CUgraph g,
                                                    CUcontext ctx, unsigned value, unsigned flags) {
  (void)g, (void)ctx, (void)value, (void)flags;
  *out = atomic_fetch_add(&next_cond, 1);
  return CUDA_SUCCESS;
}
static CUresult fake_cuGraphNodeGetParams(CUgraphNode h, CUgraphNodeParams *p) {
  fake_gnode *n = (fake_gnode *)h;
  memset(p, 0, sizeof *p);
  p->type = n->type;
  if (n->type != CU_GRAPH_NODE_TYPE_CONDITIONAL) return CUDA_ERROR_NOT_SUPPORTED;
  p->conditional.handle = n->cond;
  p->conditional.type = n->cond_type;
  p->conditional.size = n->body_count;
  p->conditional.phGraph_out = n->bodies;
  return CUDA_SUCCESS;
}

/* ---- updates --------------------------------------------------------------------------------
 * In a graph: the node's parameters replaced. In an executable graph (whose copy shares the
 * graph's nodes): the same checks, counted by fake_graph_exec_sets(), the node unchanged; a
 * fill of more than one row and a child graph of another node count are refused as the driver
 * refuses them. */

static _Atomic int exec_sets;
__attribute__((visibility("default"))) int fake_graph_exec_sets(void);
__attribute__((visibility("default"))) int fake_graph_exec_sets(void) {
  return atomic_load(&exec_sets);
}

static fake_gnode *typed(CUgraphNode h, CUgraphNodeType t) {
  fake_gnode *n = (fake_gnode *)h;
  return n && n->alive && n->type == t ? n : NULL;
}
static CUresult fake_cuGraphMemsetNodeSetParams(CUgraphNode h, const CUDA_MEMSET_NODE_PARAMS *p) {
  fake_gnode *n = typed(h, CU_GRAPH_NODE_TYPE_MEMSET);
  if (!n || !p->width) return CUDA_ERROR_INVALID_VALUE;
  n->memset = *p;
  return CUDA_SUCCESS;
}
static CUresult fake_cuGraphMemcpyNodeSetParams(CUgraphNode h, const CUDA_MEMCPY3D *p) {
  fake_gnode *n = typed(h, CU_GRAPH_NODE_TYPE_MEMCPY);
  if (!n || !p->WidthInBytes) return CUDA_ERROR_INVALID_VALUE;
  n->memcpy = *p;
  return CUDA_SUCCESS;
}
static CUresult fake_cuGraphHostNodeSetParams(CUgraphNode h, const CUDA_HOST_NODE_PARAMS *p) {
  fake_gnode *n = typed(h, CU_GRAPH_NODE_TYPE_HOST);
  if (!n || !p->fn) return CUDA_ERROR_INVALID_VALUE;
  n->host = *p;
  return CUDA_SUCCESS;
}
static CUresult set_event(CUgraphNode h, CUevent ev, CUgraphNodeType t) {
  fake_gnode *n = typed(h, t);
  if (!n || !ev) return CUDA_ERROR_INVALID_VALUE;
  n->event = ev;
  return CUDA_SUCCESS;
}
static CUresult fake_cuGraphEventRecordNodeSetEvent(CUgraphNode h, CUevent ev) {
  return set_event(h, ev, CU_GRAPH_NODE_TYPE_EVENT_RECORD);
}
static CUresult fake_cuGraphEventWaitNodeSetEvent(CUgraphNode h, CUevent ev) {
  return set_event(h, ev, CU_GRAPH_NODE_TYPE_WAIT_EVENT);
}
static CUresult exec_set(CUgraphExec e, CUgraphNode h, CUgraphNodeType t) {
  if (!e || !typed(h, t)) return CUDA_ERROR_INVALID_VALUE;
  atomic_fetch_add(&exec_sets, 1);
  return CUDA_SUCCESS;
}
static CUresult fake_cuGraphExecKernelNodeSetParams(CUgraphExec e, CUgraphNode h,
                                                    const CUDA_KERNEL_NODE_PARAMS *p) {
  if (!p || !p->func) return CUDA_ERROR_INVALID_VALUE;
  return exec_set(e, h, CU_GRAPH_NODE_TYPE_KERNEL);
}
static CUresult fake_cuGraphExecMemsetNodeSetParams(CUgraphExec e, CUgraphNode h,
                                                    const CUDA_MEMSET_NODE_PARAMS *p, CUcontext c) {
  (void)c;
  if (!p || p->height > 1) return CUDA_ERROR_INVALID_VALUE;
  return exec_set(e, h, CU_GRAPH_NODE_TYPE_MEMSET);
}
static CUresult fake_cuGraphExecMemcpyNodeSetParams(CUgraphExec e, CUgraphNode h,
                                                    const CUDA_MEMCPY3D *p, CUcontext c) {
  (void)c;
  fake_gnode *n = typed(h, CU_GRAPH_NODE_TYPE_MEMCPY);
  if (!p || !n || p->srcMemoryType != n->memcpy.srcMemoryType) return CUDA_ERROR_INVALID_VALUE;
  return exec_set(e, h, CU_GRAPH_NODE_TYPE_MEMCPY);
}
static CUresult fake_cuGraphExecHostNodeSetParams(CUgraphExec e, CUgraphNode h,
                                                  const CUDA_HOST_NODE_PARAMS *p) {
  if (!p || !p->fn) return CUDA_ERROR_INVALID_VALUE;
  return exec_set(e, h, CU_GRAPH_NODE_TYPE_HOST);
}
static CUresult fake_cuGraphExecEventRecordNodeSetEvent(CUgraphExec e, CUgraphNode h, CUevent ev) {
  return ev ? exec_set(e, h, CU_GRAPH_NODE_TYPE_EVENT_RECORD) : CUDA_ERROR_INVALID_VALUE;
}
static CUresult fake_cuGraphExecEventWaitNodeSetEvent(CUgraphExec e, CUgraphNode h, CUevent ev) {
  return ev ? exec_set(e, h, CU_GRAPH_NODE_TYPE_WAIT_EVENT) : CUDA_ERROR_INVALID_VALUE;
}
static CUresult fake_cuGraphExecChildGraphNodeSetParams(CUgraphExec e, CUgraphNode h, CUgraph g) {
  fake_gnode *n = typed(h, CU_GRAPH_NODE_TYPE_GRAPH);
  if (!n || !g || atomic_load(&((fake_graph *)g)->nodes) != atomic_load(&n->child->nodes))
    return CUDA_ERROR_INVALID_VALUE;
  return exec_set(e, h, CU_GRAPH_NODE_TYPE_GRAPH);
}

/* ---- structure ---------------------------------------------------------------------------- */

static CUresult fake_cuGraphNodeGetType(CUgraphNode h, CUgraphNodeType *t) {
  fake_gnode *n = (fake_gnode *)h;
  if (!n || !n->alive) return CUDA_ERROR_INVALID_VALUE;
  *t = n->type;
  return CUDA_SUCCESS;
}
static CUresult fake_cuGraphGetNodes(CUgraph g, CUgraphNode *nodes, size_t *n) {
  fake_graph *f = (fake_graph *)g;
  size_t k = 0;
  for (int i = 0; i < f->count; i++) {
    if (!f->list[i]->alive) continue;
    if (nodes && k < *n) nodes[k] = (CUgraphNode)f->list[i];
    k++;
  }
  if (nodes && *n < k) return CUDA_SUCCESS; /* the driver fills what fits; *n stays */
  *n = k;
  return CUDA_SUCCESS;
}
static int has_incoming(const fake_graph *f, const fake_gnode *n) {
  for (int i = 0; i < f->ecount; i++)
    if (f->edges[i].to == n) return 1;
  return 0;
}
static CUresult fake_cuGraphGetRootNodes(CUgraph g, CUgraphNode *nodes, size_t *n) {
  fake_graph *f = (fake_graph *)g;
  size_t k = 0;
  for (int i = 0; i < f->count; i++) {
    if (!f->list[i]->alive || has_incoming(f, f->list[i])) continue;
    if (nodes && k < *n) nodes[k] = (CUgraphNode)f->list[i];
    k++;
  }
  if (!nodes || k <= *n) *n = k;
  return CUDA_SUCCESS;
}
/* Edges of `f` (all when `node` is NULL; else those into it when `into`, out of it otherwise):
 * as the driver answers, CUDA_ERROR_LOSSY_QUERY when data is asked for nowhere and an edge
 * has some. */
static CUresult list_edges(fake_graph *f, const fake_gnode *node, int into, CUgraphNode *a,
                           CUgraphNode *b, CUgraphEdgeData *data, size_t *n) {
  size_t k = 0;
  for (int i = 0; i < f->ecount; i++) {
    const fake_edge *e = &f->edges[i];
    if (node && (into ? e->to : e->from) != node) continue;
    if (!data && (e->data.from_port || e->data.to_port || e->data.type))
      return CUDA_ERROR_LOSSY_QUERY;
    if (a && k < *n) {
      a[k] = (CUgraphNode)(node ? (into ? e->from : e->to) : e->from);
      if (b) b[k] = (CUgraphNode)e->to;
      if (data) data[k] = e->data;
    }
    k++;
  }
  if (!a || k <= *n) *n = k;
  return CUDA_SUCCESS;
}
static CUresult fake_cuGraphGetEdges(CUgraph g, CUgraphNode *from, CUgraphNode *to,
                                     CUgraphEdgeData *data, size_t *n) {
  return list_edges((fake_graph *)g, NULL, 0, from, to, data, n);
}
static CUresult fake_cuGraphNodeGetDependencies(CUgraphNode h, CUgraphNode *deps,
                                                CUgraphEdgeData *data, size_t *n) {
  fake_gnode *node = (fake_gnode *)h;
  return list_edges(node->g, node, 1, deps, NULL, data, n);
}
static CUresult fake_cuGraphNodeGetDependentNodes(CUgraphNode h, CUgraphNode *out,
                                                  CUgraphEdgeData *data, size_t *n) {
  fake_gnode *node = (fake_gnode *)h;
  return list_edges(node->g, node, 0, out, NULL, data, n);
}
static int find_edge(const fake_graph *f, const fake_gnode *a, const fake_gnode *b) {
  for (int i = 0; i < f->ecount; i++)
    if (f->edges[i].from == a && f->edges[i].to == b) return i;
  return -1;
}
static CUresult fake_cuGraphAddDependencies(CUgraph g, const CUgraphNode *from,
                                            const CUgraphNode *to, size_t n) {
  fake_graph *f = (fake_graph *)g;
  for (size_t i = 0; i < n; i++) {
    fake_gnode *a = (fake_gnode *)from[i], *b = (fake_gnode *)to[i];
    if (a->g != f || b->g != f || a == b || find_edge(f, a, b) >= 0)
      return CUDA_ERROR_INVALID_VALUE;
    if (!edge_add(f, a, b, NULL)) return CUDA_ERROR_OUT_OF_MEMORY;
  }
  return CUDA_SUCCESS;
}
static CUresult fake_cuGraphRemoveDependencies(CUgraph g, const CUgraphNode *from,
                                               const CUgraphNode *to, const CUgraphEdgeData *data,
                                               size_t n) {
  fake_graph *f = (fake_graph *)g;
  for (size_t i = 0; i < n; i++) {
    int at = find_edge(f, (fake_gnode *)from[i], (fake_gnode *)to[i]);
    if (at < 0) return CUDA_ERROR_INVALID_VALUE;
    const CUgraphEdgeData *want = data ? &data[i] : NULL;
    const CUgraphEdgeData *have = &f->edges[at].data;
    if ((want ? want->type : 0) != have->type || (want ? want->from_port : 0) != have->from_port)
      return CUDA_ERROR_INVALID_VALUE;
    f->edges[at] = f->edges[--f->ecount];
  }
  return CUDA_SUCCESS;
}
static CUresult fake_cuGraphDestroyNode(CUgraphNode h) {
  fake_gnode *n = (fake_gnode *)h;
  if (!n || !n->alive) return CUDA_ERROR_INVALID_VALUE;
  fake_graph *f = n->g;
  for (int i = 0; i < f->ecount;)
    if (f->edges[i].from == n || f->edges[i].to == n)
      f->edges[i] = f->edges[--f->ecount];
    else
      i++;
  n->alive = 0;
  atomic_fetch_sub(&f->nodes, 1);
  return CUDA_SUCCESS;
}

/* ---- ids (CUDA 13.1) ---------------------------------------------------------------------- */

static CUresult fake_cuGraphGetId(CUgraph g, unsigned *id) {
  *id = ((fake_graph *)g)->id;
  return CUDA_SUCCESS;
}
static CUresult fake_cuGraphExecGetId(CUgraphExec e, unsigned *id) {
  *id = (*(fake_graph **)e)->id; /* fake_exec's first member is its graph copy */
  return CUDA_SUCCESS;
}
static CUresult fake_cuGraphNodeGetLocalId(CUgraphNode h, unsigned *id) {
  *id = ((fake_gnode *)h)->local_id;
  return CUDA_SUCCESS;
}
static CUresult fake_cuGraphNodeGetToolsId(CUgraphNode h, unsigned long long *id) {
  fake_gnode *n = (fake_gnode *)h;
  *id = (unsigned long long)n->g->id << 32 | n->local_id;
  return CUDA_SUCCESS;
}
static CUresult fake_cuGraphNodeGetContainingGraph(CUgraphNode h, CUgraph *g) {
  *g = (CUgraph)((fake_gnode *)h)->g;
  return CUDA_SUCCESS;
}

typedef struct gentry {
  const char *name;
  void *fn;
} gentry;
#define G(name) \
  { #name, (void *)fake_##name }

void *fake_graph_symbol(const char *symbol) {
  static const gentry all[] = {G(cuGraphAddKernelNode),
                               G(cuGraphKernelNodeSetParams),
                               G(cuGraphKernelNodeGetParams),
                               G(cuGraphKernelNodeSetAttribute),
                               G(cuGraphKernelNodeGetAttribute),
                               G(cuGraphAddMemsetNode),
                               G(cuGraphMemsetNodeGetParams),
                               G(cuGraphAddMemcpyNode),
                               G(cuGraphMemcpyNodeGetParams),
                               G(cuGraphAddHostNode),
                               G(cuGraphHostNodeGetParams),
                               G(cuGraphAddEmptyNode),
                               G(cuGraphAddEventRecordNode),
                               G(cuGraphAddEventWaitNode),
                               G(cuGraphEventRecordNodeGetEvent),
                               G(cuGraphEventWaitNodeGetEvent),
                               G(cuGraphAddChildGraphNode),
                               G(cuGraphChildGraphNodeGetGraph),
                               G(cuGraphAddNode),
                               G(cuGraphConditionalHandleCreate),
                               G(cuGraphNodeGetType),
                               G(cuGraphGetNodes),
                               G(cuGraphGetRootNodes),
                               G(cuGraphGetEdges),
                               G(cuGraphNodeGetDependencies),
                               G(cuGraphNodeGetDependentNodes),
                               G(cuGraphAddDependencies),
                               G(cuGraphRemoveDependencies),
                               G(cuGraphDestroyNode),
                               G(cuGraphMemsetNodeSetParams),
                               G(cuGraphMemcpyNodeSetParams),
                               G(cuGraphHostNodeSetParams),
                               G(cuGraphEventRecordNodeSetEvent),
                               G(cuGraphEventWaitNodeSetEvent),
                               G(cuGraphExecKernelNodeSetParams),
                               G(cuGraphExecMemsetNodeSetParams),
                               G(cuGraphExecMemcpyNodeSetParams),
                               G(cuGraphExecHostNodeSetParams),
                               G(cuGraphExecEventRecordNodeSetEvent),
                               G(cuGraphExecEventWaitNodeSetEvent),
                               G(cuGraphExecChildGraphNodeSetParams)};
  static const gentry v13_1[] = {G(cuGraphGetId),
                                 G(cuGraphExecGetId),
                                 G(cuGraphNodeGetLocalId),
                                 G(cuGraphNodeGetToolsId),
                                 G(cuGraphNodeGetContainingGraph),
                                 G(cuGraphNodeGetParams)};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
    if (strcmp(all[i].name, symbol) == 0) return all[i].fn;
  const char *v = getenv("CUCORE_FAKE_DRIVER_VERSION"); /* as fake_driver.c reads it */
  if (!v || atoi(v) < 13010) return NULL;
  for (size_t i = 0; i < sizeof v13_1 / sizeof v13_1[0]; i++)
    if (strcmp(v13_1[i].name, symbol) == 0) return v13_1[i].fn;
  return NULL;
}
