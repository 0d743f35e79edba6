/*
 * exec_node_update.c -- a node of an executable graph given new parameters
 * (cucore_graph_exec_set_node_params): kernels (another kernel too; the executable graph's own
 * values of the node follow), fills, copies, host functions, events and child graphs, each
 * checked as in a graph (node_checks.c) and against the driver's rules for executable graphs
 * first, so that a refusal names the rule. The graph itself is not changed.
 */
#include "graph/graph.h"
#include "memory/memory.h"
#include "runtime/current.h"

#include <stdlib.h>
#include <string.h>

static cucore_status refused(CUresult r, const char *call, const cucore_graph_node *n,
                             const char *rule, const char *fn) {
  char what[CC_NODE_WHAT];
  cc_graph_node_describe(n, what, sizeof what);
  return cc_fail_cu(r, call, "%s: %s; the executable graph is unchanged. %s", fn, what, rule);
}

static cucore_status rule_broken(const cucore_graph_node *n, const char *rule, const char *fn) {
  char what[CC_NODE_WHAT];
  cc_graph_node_describe(n, what, sizeof what);
  return cc_fail(CUCORE_GRAPH_UPDATE, "%s: %s: %s", fn, what, rule);
}

static cucore_status exec_kernel(cucore_graph_exec *e, cucore_graph_node *n,
                                 const cucore_graph_node_params *p, const char *fn) {
  cc_kernel_update u;
  cucore_status st = CC_DRV_REQUIRE(cuGraphExecKernelNodeSetParams);
  if (st == CUCORE_OK) st = cc_node_check_kernel(n, p, &u, fn);
  if (st == CUCORE_OK) st = cc_refs_hold(e->graph->held, u.k, cc_kernel_retain, cc_kernel_release);
  if (st != CUCORE_OK) return st;
  CUresult r = DRV(cuGraphExecKernelNodeSetParams)(e->h, n->h, &u.p);
  if (r == CUDA_ERROR_INVALID_VALUE || r == CUDA_ERROR_NOT_SUPPORTED)
    return refused(r, "cuGraphExecKernelNodeSetParams", n,
                   "The driver's rules for a kernel node of an executable graph: the kernel "
                   "stays in the graph's context, a kernel without dynamic parallelism cannot "
                   "become one with it, and a node made device-updatable keeps its kernel",
                   fn);
  if (r != CUDA_SUCCESS)
    return cc_launch_explain(u.k, u.d, &u.shape, &u.cfg, r, "cuGraphExecKernelNodeSetParams");
  if (n->index >= e->node_count) return CUCORE_OK; /* taken in after: no values kept */
  cc_exec_node *x = &e->state[n->index];
  if (x->k != u.k || !x->args) {
    cucore_args *a = NULL;
    if (cc_args_clone(u.args, &a) != CUCORE_OK) {
      x->known = 0; /* the launch runs the new values; per-node updates refuse until then */
      return CUCORE_OK;
    }
    cc_args_free(x->args);
    x->args = a;
    x->k = u.k;
  } else {
    cc_args_copy_values(x->args, u.args);
  }
  x->fn = u.d->fn;
  memcpy(x->grid, u.shape.grid, sizeof x->grid);
  memcpy(x->block, u.shape.block, sizeof x->block);
  x->smem = u.cfg.shared_bytes;
  x->known = 1;
  return CUCORE_OK;
}

/* The contexts of two addresses cucore recorded differ (unknown ones pass). */
static int other_context(uint64_t was, uint64_t now) {
  cc_mem_rec a, b;
  if (!cc_reg_find(&cc_mem_registry, was, &a) || !cc_reg_find(&cc_mem_registry, now, &b)) return 0;
  return a.ctx && b.ctx && a.ctx != b.ctx;
}

static cucore_status exec_memset(cucore_graph_exec *e, cucore_graph_node *n,
                                 const cucore_graph_node_params *p, const char *fn) {
  CUDA_MEMSET_NODE_PARAMS m;
  cucore_status st = CC_DRV_REQUIRE(cuGraphExecMemsetNodeSetParams);
  if (st == CUCORE_OK) st = cc_node_check_memset(p, &m, fn);
  if (st == CUCORE_OK && !n->fill_rows) { /* a captured fill: its rows from the driver */
    cucore_graph_node_params now;
    st = cc_graph_node_read(n, &now, fn);
  }
  if (st != CUCORE_OK) return st;
  if (m.height > 1 || n->fill_rows > 1)
    return rule_broken(n,
                       "an executable graph's fill can only become another fill of one row "
                       "(the driver's rule: the fill at instantiation and the new one both "
                       "1D); set a 2D fill in the graph and instantiate again",
                       fn);
  CUresult r = DRV(cuGraphExecMemsetNodeSetParams)(e->h, n->h, &m, e->dev->ctx);
  return r == CUDA_SUCCESS ? CUCORE_OK
                           : refused(r, "cuGraphExecMemsetNodeSetParams", n,
                                     "The driver's rules for a fill of an executable graph: one "
                                     "row, in memory of the context the fill had, not empty",
                                     fn);
}

static const char *end_name(CUmemorytype t) {
  switch ((int)t) {
  case CU_MEMORYTYPE_HOST: return "host";
  case CU_MEMORYTYPE_DEVICE: return "device";
  case CU_MEMORYTYPE_ARRAY: return "array";
  case CU_MEMORYTYPE_UNIFIED: return "unified";
  default: return "unknown";
  }
}

static cucore_status exec_memcpy(cucore_graph_exec *e, cucore_graph_node *n,
                                 const cucore_graph_node_params *p, const char *fn) {
  CUDA_MEMCPY3D m, was;
  memset(&was, 0, sizeof was);
  cucore_status st = CC_DRV_REQUIRE(cuGraphExecMemcpyNodeSetParams);
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuGraphMemcpyNodeGetParams);
  if (st == CUCORE_OK) st = cc_node_check_memcpy(p, &m, fn);
  if (st != CUCORE_OK) return st;
  CUresult r = DRV(cuGraphMemcpyNodeGetParams)(n->h, &was);
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuGraphMemcpyNodeGetParams", "%s", fn);
  if (m.srcMemoryType != was.srcMemoryType || m.dstMemoryType != was.dstMemoryType)
    return cc_fail(CUCORE_GRAPH_UPDATE,
                   "%s: the copy was %s to %s, the new one is %s to %s: an executable graph's "
                   "copy keeps the kind of memory at each end (the driver's rule)",
                   fn, end_name(was.srcMemoryType), end_name(was.dstMemoryType),
                   end_name(m.srcMemoryType), end_name(m.dstMemoryType));
  if (other_context(was.srcDevice, m.srcDevice) || other_context(was.dstDevice, m.dstDevice))
    return rule_broken(n,
                       "an end is now memory of another context than before (the driver's "
                       "rule: the same contexts)",
                       fn);
  r = DRV(cuGraphExecMemcpyNodeSetParams)(e->h, n->h, &m, e->dev->ctx);
  return r == CUDA_SUCCESS ? CUCORE_OK
                           : refused(r, "cuGraphExecMemcpyNodeSetParams", n,
                                     "The driver's rules for a copy of an executable graph: the "
                                     "same kinds of memory and contexts at each end, not empty",
                                     fn);
}

static cucore_status exec_host_or_event(cucore_graph_exec *e, cucore_graph_node *n,
                                        const cucore_graph_node_params *p, const char *fn) {
  CUresult r;
  const char *call;
  cucore_status st;
  if (n->type == CUCORE_GRAPH_NODE_HOST) {
    CUDA_HOST_NODE_PARAMS h = {p->host.fn, p->host.user};
    call = "cuGraphExecHostNodeSetParams";
    st = p->host.fn ? CC_DRV_REQUIRE(cuGraphExecHostNodeSetParams)
                    : cc_fail(CUCORE_INVALID_ARGUMENT, "%s: params->host.fn is NULL", fn);
    if (st != CUCORE_OK) return st;
    r = DRV(cuGraphExecHostNodeSetParams)(e->h, n->h, &h);
  } else {
    int record = n->type == CUCORE_GRAPH_NODE_EVENT_RECORD;
    call = record ? "cuGraphExecEventRecordNodeSetEvent" : "cuGraphExecEventWaitNodeSetEvent";
    st = record ? CC_DRV_REQUIRE(cuGraphExecEventRecordNodeSetEvent)
                : CC_DRV_REQUIRE(cuGraphExecEventWaitNodeSetEvent);
    if (st == CUCORE_OK) st = cc_node_check_event(n, p, fn);
    if (st != CUCORE_OK) return st;
    CUevent ev = p->event.event->handle;
    r = record ? DRV(cuGraphExecEventRecordNodeSetEvent)(e->h, n->h, ev)
               : DRV(cuGraphExecEventWaitNodeSetEvent)(e->h, n->h, ev);
  }
  return r == CUDA_SUCCESS ? CUCORE_OK : refused(r, call, n, "", fn);
}

static size_t nodes_in(CUgraph g) {
  size_t n = 0;
  if (!g || DRV(cuGraphGetNodes)(g, NULL, &n) != CUDA_SUCCESS) return 0;
  return n;
}

static cucore_status exec_child(cucore_graph_exec *e, cucore_graph_node *n,
                                const cucore_graph_node_params *p, const char *fn) {
  cucore_status st = CC_DRV_REQUIRE(cuGraphExecChildGraphNodeSetParams);
  if (st == CUCORE_OK) st = cc_node_check_child(n, p, fn);
  if (st != CUCORE_OK) return st;
  CUresult r = DRV(cuGraphExecChildGraphNodeSetParams)(e->h, n->h, p->child->h);
  if (r == CUDA_SUCCESS) return CUCORE_OK;
  CUgraph embedded = NULL;
  if (DRV(cuGraphChildGraphNodeGetGraph)) (void)DRV(cuGraphChildGraphNodeGetGraph)(n->h, &embedded);
  char what[CC_NODE_WHAT];
  cc_graph_node_describe(n, what, sizeof what);
  return cc_fail_cu(r, "cuGraphExecChildGraphNodeSetParams",
                    "%s: %s; the executable graph is unchanged. The driver's rule: the new "
                    "child graph has the nodes, edges and order of insertion of the node's "
                    "embedded graph (it has %zu nodes, the new one %zu), only parameters differ",
                    fn, what, nodes_in(embedded), nodes_in(p->child->h));
}

/* The node is one of e's: of the graph e was made from, there when it was made, not
 * destroyed. */
static cucore_status in_exec(const cucore_graph_exec *e, const cucore_graph_node *n,
                             const char *fn) {
  if (cc_graph_node_in_exec(n, e)) return CUCORE_OK;
  char what[CC_NODE_WHAT];
  cc_graph_node_describe(n, what, sizeof what);
  return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: %s is not a node of the executable graph: %s", fn,
                 what,
                 n->graph->root != e->graph ? "it is of another graph"
                                            : "it was added to the graph after the executable "
                                              "graph was instantiated");
}

/* The update a loop makes to a host node: the driver's call, or 0 to take the checked path. */
static inline int host_fast(cucore_graph_exec *e, const cucore_graph_node *n,
                            const cucore_graph_node_params *p) {
  if (CC_UNLIKELY(!p->host.fn || !DRV(cuGraphExecHostNodeSetParams))) return 0;
  CUDA_HOST_NODE_PARAMS h = {p->host.fn, p->host.user};
  return DRV(cuGraphExecHostNodeSetParams)(e->h, n->h, &h) == CUDA_SUCCESS;
}

/* The same for a fill of one row, its range checked against the memory as a copy's is (the
 * records this thread saw, or the registry); a range out of bounds fails here, named. */
static inline int fill_fast(cucore_graph_exec *e, const cucore_graph_node *n,
                            const cucore_graph_node_params *p, cucore_status *st) {
  unsigned es = p->memset.element_size;
  uint64_t bytes = 0;
  if (CC_UNLIKELY(n->fill_rows != 1 || p->memset.height != 1 || !p->memset.width ||
                  !p->memset.dst ||
                  !(es == 4 || (es == 2 && p->memset.value < 0x10000u) ||
                    (es == 1 && p->memset.value < 0x100u)) ||
                  p->memset.dst % es || !cc_mul_u64(p->memset.width, es, &bytes) ||
                  !DRV(cuGraphExecMemsetNodeSetParams)))
    return 0;
  *st = cc_mem_check_copy(p->memset.dst, p->memset.dst, bytes, "cucore_graph_exec_set_node_params");
  if (CC_UNLIKELY(*st != CUCORE_OK)) return 1;
  CUDA_MEMSET_NODE_PARAMS m = {
      (CUdeviceptr)p->memset.dst, 0, p->memset.value, es, p->memset.width, 1};
  return DRV(cuGraphExecMemsetNodeSetParams)(e->h, n->h, &m, e->dev->ctx) == CUDA_SUCCESS;
}

static cucore_status set_node_params_checked(cucore_graph_exec *e, cucore_graph_node *node,
                                             const cucore_graph_node_params *params);

cucore_status cucore_graph_exec_set_node_params(cucore_graph_exec *e, cucore_graph_node *node,
                                                const cucore_graph_node_params *params) {
  cc_begin();
  /* Host functions and fills of one row, checked inline (the loops that update them); every
   * other case, and every refusal, takes the checked path, which says what is wrong. */
  if (CC_LIKELY(cc_handle_live(e, CC_KIND_GRAPH_EXEC) && node && params &&
                params->type == node->type && node->seq <= e->seq &&
                node->graph->root == e->graph)) { /* (a destroyed node's seq is past any) */
    /* A host node's update needs no context: the executable graph names its own. */
    if (node->type == CUCORE_GRAPH_NODE_HOST && host_fast(e, node, params)) return CUCORE_OK;
    cucore_status st = CUCORE_OK;
    if (node->type == CUCORE_GRAPH_NODE_MEMSET && cc_device_is_current(e->dev) &&
        fill_fast(e, node, params, &st))
      return st;
  }
  return set_node_params_checked(e, node, params);
}

CC_COLD static cucore_status set_node_params_checked(cucore_graph_exec *e, cucore_graph_node *node,
                                                     const cucore_graph_node_params *params) {
  const char *fn = "cucore_graph_exec_set_node_params";
  CC_CHECK_HANDLE(e, GRAPH_EXEC, fn, "exec");
  cucore_status st = cc_node_update_enter(node, params, fn);
  if (st == CUCORE_OK) st = in_exec(e, node, fn);
  if (st == CUCORE_OK) st = cc_device_make_current(e->dev);
  if (st != CUCORE_OK) return st;
  switch (node->type) {
  case CUCORE_GRAPH_NODE_KERNEL: return exec_kernel(e, node, params, fn);
  case CUCORE_GRAPH_NODE_MEMSET: return exec_memset(e, node, params, fn);
  case CUCORE_GRAPH_NODE_MEMCPY: return exec_memcpy(e, node, params, fn);
  case CUCORE_GRAPH_NODE_HOST:
  case CUCORE_GRAPH_NODE_EVENT_RECORD:
  case CUCORE_GRAPH_NODE_WAIT_EVENT: return exec_host_or_event(e, node, params, fn);
  case CUCORE_GRAPH_NODE_GRAPH: return exec_child(e, node, params, fn);
  case CUCORE_GRAPH_NODE_EMPTY: return CUCORE_OK;
  default: break;
  }
  char what[CC_NODE_WHAT];
  cc_graph_node_describe(node, what, sizeof what);
  return cc_fail(CUCORE_NOT_SUPPORTED,
                 "%s: %s of the executable graph: the driver's update rules change kernel, "
                 "memcpy, memset, host, event and child-graph nodes only",
                 fn, what);
}
