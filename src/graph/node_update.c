/*
 * node_update.c -- a node given new parameters: in its graph (cucore_graph_node_set_params:
 * executable graphs made later run them) and in an executable graph
 * (cucore_graph_exec_set_node_params: its next launch runs them), for every kind the driver
 * can change -- kernels (another kernel too), fills, copies, host functions, events, and in
 * executable graphs child graphs. The parameters are those cucore_graph_node_get_params gives:
 * read, change, set. Each value is checked first (node_checks.c); a refusal names the driver's
 * update rule that was broken and leaves the node as it was.
 */
#include "graph/graph.h"
#include "memory/memory.h"

#include <stdlib.h>
#include <string.h>

/* What the node keeps of a kernel it now runs: the kernel (held by the graph), its values
 * (a list of its own when the kernel changed) and its shape. */
static cucore_status keep_kernel(cucore_graph_node *n, const cc_kernel_update *u) {
  if (u->k != n->k) {
    cucore_args *a = NULL;
    cucore_status st = cc_args_clone(u->args, &a);
    if (st != CUCORE_OK) return st;
    cc_kernel_retain(u->k);
    cc_kernel_release(n->k);
    cc_args_free(n->args);
    n->k = u->k;
    n->args = a;
    free(n->name);
    n->name = NULL;
  } else {
    cc_args_copy_values(n->args, u->args);
  }
  n->fn = u->d->fn;
  memcpy(n->cfg.grid, u->shape.grid, sizeof n->cfg.grid);
  memcpy(n->cfg.block, u->shape.block, sizeof n->cfg.block);
  n->cfg.shared_bytes = u->cfg.shared_bytes;
  return CUCORE_OK;
}

static cucore_status driver_refused(CUresult r, const char *call, const cucore_graph_node *n,
                                    const char *rule, const char *fn) {
  char what[CC_NODE_WHAT];
  cc_graph_node_describe(n, what, sizeof what);
  return cc_fail_cu(r, call, "%s: %s; the node is unchanged%s%s", fn, what, rule ? ". " : "",
                    rule ? rule : "");
}

/* ---- in a graph ----------------------------------------------------------------------------- */

static cucore_status graph_kernel(cucore_graph_node *n, const cucore_graph_node_params *p,
                                  const char *fn) {
  cc_kernel_update u;
  cucore_status st = CC_DRV_REQUIRE(cuGraphKernelNodeSetParams);
  if (st == CUCORE_OK) st = cc_node_check_kernel(n, p, &u, fn);
  if (st == CUCORE_OK)
    st = cc_refs_hold(n->graph->root->held, u.k, cc_kernel_retain, cc_kernel_release);
  if (st != CUCORE_OK) return st;
  CUresult r = DRV(cuGraphKernelNodeSetParams)(n->h, &u.p);
  if (r != CUDA_SUCCESS)
    return cc_launch_explain(u.k, u.d, &u.shape, &u.cfg, r, "cuGraphKernelNodeSetParams");
  return keep_kernel(n, &u);
}

static cucore_status graph_other(cucore_graph_node *n, const cucore_graph_node_params *p,
                                 const char *fn) {
  CUresult r = CUDA_SUCCESS;
  const char *call = NULL;
  cucore_status st = CUCORE_OK;
  if (n->type == CUCORE_GRAPH_NODE_MEMSET) {
    CUDA_MEMSET_NODE_PARAMS m;
    call = "cuGraphMemsetNodeSetParams";
    st = CC_DRV_REQUIRE(cuGraphMemsetNodeSetParams);
    if (st == CUCORE_OK) st = cc_node_check_memset(p, &m, fn);
    if (st == CUCORE_OK) r = DRV(cuGraphMemsetNodeSetParams)(n->h, &m);
    if (st == CUCORE_OK && r == CUDA_SUCCESS) n->fill_rows = m.height;
  } else if (n->type == CUCORE_GRAPH_NODE_MEMCPY) {
    CUDA_MEMCPY3D m;
    call = "cuGraphMemcpyNodeSetParams";
    st = CC_DRV_REQUIRE(cuGraphMemcpyNodeSetParams);
    if (st == CUCORE_OK) st = cc_node_check_memcpy(p, &m, fn);
    if (st == CUCORE_OK) r = DRV(cuGraphMemcpyNodeSetParams)(n->h, &m);
  } else if (n->type == CUCORE_GRAPH_NODE_HOST) {
    CUDA_HOST_NODE_PARAMS h = {p->host.fn, p->host.user};
    call = "cuGraphHostNodeSetParams";
    st = p->host.fn ? CC_DRV_REQUIRE(cuGraphHostNodeSetParams)
                    : cc_fail(CUCORE_INVALID_ARGUMENT, "%s: params->host.fn is NULL", fn);
    if (st == CUCORE_OK) r = DRV(cuGraphHostNodeSetParams)(n->h, &h);
  } else {
    int record = n->type == CUCORE_GRAPH_NODE_EVENT_RECORD;
    call = record ? "cuGraphEventRecordNodeSetEvent" : "cuGraphEventWaitNodeSetEvent";
    st = record ? CC_DRV_REQUIRE(cuGraphEventRecordNodeSetEvent)
                : CC_DRV_REQUIRE(cuGraphEventWaitNodeSetEvent);
    if (st == CUCORE_OK) st = cc_node_check_event(n, p, fn);
    CUevent ev = st == CUCORE_OK ? p->event.event->handle : NULL;
    if (st == CUCORE_OK)
      r = record ? DRV(cuGraphEventRecordNodeSetEvent)(n->h, ev)
                 : DRV(cuGraphEventWaitNodeSetEvent)(n->h, ev);
    if (st == CUCORE_OK && r == CUDA_SUCCESS) n->ev = p->event.event;
  }
  if (st != CUCORE_OK) return st;
  return r == CUDA_SUCCESS ? CUCORE_OK : driver_refused(r, call, n, NULL, fn);
}

/* What no update can change, named. */
static cucore_status not_updatable(const cucore_graph_node *n, int in_exec, const char *fn) {
  char what[CC_NODE_WHAT];
  cc_graph_node_describe(n, what, sizeof what);
  const char *how =
      n->type == CUCORE_GRAPH_NODE_GRAPH
          ? "in a graph the driver cannot give a child-graph node another graph: edit its "
            "embedded graph (cucore_graph_node_get_params, `child`), or set it in an executable "
            "graph (cucore_graph_exec_set_node_params)"
      : n->type == CUCORE_GRAPH_NODE_CONDITIONAL
          ? "the driver changes nothing of a conditional node: its condition is set by kernels, "
            "its bodies are graphs to edit"
          : "the driver's update rules change kernel, memcpy, memset, host and event nodes (and "
            "child-graph nodes of executable graphs) only";
  return cc_fail(CUCORE_NOT_SUPPORTED, "%s: %s%s: %s", fn, what,
                 in_exec ? " of the executable graph" : "", how);
}

cucore_status cucore_graph_node_set_params(cucore_graph_node *node,
                                           const cucore_graph_node_params *params) {
  cc_begin();
  const char *fn = "cucore_graph_node_set_params";
  cucore_status st = cc_node_update_enter(node, params, fn);
  if (st == CUCORE_OK) st = cc_device_make_current(node->graph->dev);
  if (st != CUCORE_OK) return st;
  switch (node->type) {
  case CUCORE_GRAPH_NODE_KERNEL: return graph_kernel(node, params, fn);
  case CUCORE_GRAPH_NODE_MEMSET:
  case CUCORE_GRAPH_NODE_MEMCPY:
  case CUCORE_GRAPH_NODE_HOST:
  case CUCORE_GRAPH_NODE_EVENT_RECORD:
  case CUCORE_GRAPH_NODE_WAIT_EVENT: return graph_other(node, params, fn);
  case CUCORE_GRAPH_NODE_EMPTY: return CUCORE_OK;
  default: return not_updatable(node, 0, fn);
  }
}
