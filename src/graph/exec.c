/*
 * exec.c -- executable graphs: instantiate (the driver's reason and node when it refuses),
 * upload, launch, destroy; whole-graph update (cuGraphExecUpdate, its result explained) and
 * per-node updates of kernel nodes (arguments checked as a launch checks them, dimensions
 * checked against the kernel), enabling and disabling nodes.
 *
 * An executable graph keeps, for each kernel node of the graph it was made from, the values
 * the node has in it (arguments, dimensions): the driver's update takes both at once, and a
 * per-node update changes one of them. They are copied when the graph is instantiated, so an
 * update allocates nothing.
 */
#include "graph/graph.h"
#include "runtime/current.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void state_free(cucore_graph_exec *e) {
  for (int i = 0; i < e->node_count; i++) cc_args_free(e->state[i].args);
  free(e->state);
  e->state = NULL;
}

void cc_exec_state_from_node(cc_exec_node *x, const cucore_graph_node *node) {
  if (x->k != node->k) { /* another kernel: a list of its own */
    cucore_args *a = NULL;
    if (cc_args_clone(node->args, &a) != CUCORE_OK) {
      x->known = 0;
      return;
    }
    cc_args_free(x->args);
    x->args = a;
    x->k = node->k;
    x->fn = node->fn;
  }
  cc_args_copy_values(x->args, node->args);
  memcpy(x->grid, node->cfg.grid, sizeof x->grid);
  memcpy(x->block, node->cfg.block, sizeof x->block);
  x->smem = node->cfg.shared_bytes;
  x->known = 1;
}

static cucore_status state_new(cucore_graph_exec *e) {
  const cucore_graph *g = e->graph;
  e->node_count = g->node_count;
  e->seq = g->seq;
  e->state = cc_calloc(g->node_count ? (size_t)g->node_count : 1, sizeof *e->state,
                       "an executable graph's node values");
  if (!e->state) return CUCORE_HOST_OUT_OF_MEMORY;
  for (int i = 0; i < g->node_count; i++) {
    const cucore_graph_node *n = g->nodes[i];
    if (n->type != CUCORE_GRAPH_NODE_KERNEL || !n->args || n->removed) continue;
    cucore_status st = cc_args_clone(n->args, &e->state[i].args);
    if (st != CUCORE_OK) return st;
    e->state[i].k = n->k;
    e->state[i].fn = n->fn;
    cc_exec_state_from_node(&e->state[i], n);
  }
  return CUCORE_OK;
}

static const char *instantiate_reason(CUgraphInstantiateResult r) {
  switch ((int)r) {
  case CUDA_GRAPH_INSTANTIATE_INVALID_STRUCTURE:
    return "the graph's structure is invalid (a cycle among its dependencies?)";
  case CUDA_GRAPH_INSTANTIATE_NODE_OPERATION_NOT_SUPPORTED:
    return "a node does an operation a graph for device launch cannot (host nodes, copies "
           "to or from host memory, events...)";
  case CUDA_GRAPH_INSTANTIATE_MULTIPLE_CTXS_NOT_SUPPORTED:
    return "its nodes belong to several contexts, which a graph for device launch cannot have";
  case 5: /* CUDA_GRAPH_INSTANTIATE_CONDITIONAL_HANDLE_UNUSED, CUDA 12.8 */
    return "a condition made for the graph (cucore_graph_condition_create) is used by no "
           "conditional node";
  default: return NULL;
  }
}

cucore_status cucore_graph_instantiate(cucore_graph *g, unsigned flags,
                                       cucore_stream *upload_stream, cucore_graph_exec **out) {
  cc_begin();
  const char *fn = "cucore_graph_instantiate";
  CC_CHECK_ARG(out, fn, "out");
  *out = NULL;
  CC_CHECK_HANDLE(g, GRAPH, fn, "graph");
  cc_refs_drain();
  const unsigned known = CUCORE_GRAPH_INSTANTIATE_AUTO_FREE_ON_LAUNCH |
                         CUCORE_GRAPH_INSTANTIATE_UPLOAD | CUCORE_GRAPH_INSTANTIATE_DEVICE_LAUNCH |
                         CUCORE_GRAPH_INSTANTIATE_USE_NODE_PRIORITY;
  if (flags & ~known)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: unknown flags 0x%x (CUCORE_GRAPH_INSTANTIATE_AUTO_FREE_ON_LAUNCH, _UPLOAD, "
                   "_DEVICE_LAUNCH, _USE_NODE_PRIORITY are 0x%x)",
                   fn, flags & ~known, known);
  if ((flags & CUCORE_GRAPH_INSTANTIATE_DEVICE_LAUNCH) &&
      (flags & CUCORE_GRAPH_INSTANTIATE_AUTO_FREE_ON_LAUNCH))
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: DEVICE_LAUNCH cannot be combined with "
                   "AUTO_FREE_ON_LAUNCH (the driver's rule)",
                   fn);
  if (!(flags & CUCORE_GRAPH_INSTANTIATE_UPLOAD) != !upload_stream)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: %s", fn,
                   upload_stream ? "an upload stream was given without "
                                   "CUCORE_GRAPH_INSTANTIATE_UPLOAD"
                                 : "CUCORE_GRAPH_INSTANTIATE_UPLOAD needs the stream to upload on");
  if (upload_stream) CC_CHECK_HANDLE(upload_stream, STREAM, fn, "upload_stream");
  if (upload_stream && upload_stream->dev->ctx != g->dev->ctx)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: the upload stream is of device %d, the graph "
                   "runs on device %d",
                   fn, upload_stream->dev->ordinal, g->dev->ordinal);
  if (g->is_body)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: the graph is %s; instantiate the graph that holds the node", fn,
                   g->is_child ? "the embedded graph of a child-graph node"
                               : "the body of a conditional node");
  cucore_status st = cc_graph_mem_check_freed(g, fn);
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuGraphInstantiateWithParams);
  if (st == CUCORE_OK) st = cc_device_make_current(g->dev);
  if (st != CUCORE_OK) return st;
  cucore_graph_exec *e = cc_calloc(1, sizeof *e, "an executable graph");
  if (!e) return CUCORE_HOST_OUT_OF_MEMORY;
  cc_handle_init(e, CC_KIND_GRAPH_EXEC);
  e->dev = g->dev;
  e->graph = g;
  e->flags = flags;
  cc_graph_retain(g);
  st = state_new(e);
  if (st != CUCORE_OK) goto fail;
  CUDA_GRAPH_INSTANTIATE_PARAMS p;
  memset(&p, 0, sizeof p);
  p.flags = flags;
  p.hUploadStream = upload_stream ? upload_stream->handle : NULL;
  CUresult r = DRV(cuGraphInstantiateWithParams)(&e->h, g->h, &p);
  if (r != CUDA_SUCCESS || p.result_out != CUDA_GRAPH_INSTANTIATE_SUCCESS) {
    const char *why = instantiate_reason(p.result_out);
    char node[128] = "";
    const cucore_graph_node *n = cc_graph_find_node(g, p.hErrNode_out);
    if (n) {
      char what[CC_NODE_WHAT];
      cc_graph_node_describe(n, what, sizeof what);
      snprintf(node, sizeof node, "; at %s", what);
    } else if (p.hErrNode_out) {
      snprintf(node, sizeof node, "; at a captured node");
    }
    st = cc_fail_cu(r != CUDA_SUCCESS ? r : CUDA_ERROR_INVALID_VALUE,
                    "cuGraphInstantiateWithParams", "%s: %s%s (result %d)", fn,
                    why ? why : "the driver refused the graph", node, (int)p.result_out);
    e->h = NULL;
    goto fail;
  }
  *out = e;
  return CUCORE_OK;
fail:
  state_free(e);
  cc_graph_release(e->graph);
  free(e);
  return st;
}

cucore_status cucore_graph_exec_destroy(cucore_graph_exec *e) {
  cc_begin();
  if (!e) return CUCORE_OK;
  CC_CHECK_HANDLE(e, GRAPH_EXEC, "cucore_graph_exec_destroy", "exec");
  cucore_status st = cc_device_make_current(e->dev);
  CUresult r = st == CUCORE_OK ? DRV(cuGraphExecDestroy)(e->h) : CUDA_SUCCESS;
  state_free(e);
  cc_graph_release(e->source);
  cc_graph_release(e->graph);
  cc_handle_retire(e, CC_KIND_GRAPH_EXEC);
  cc_refs_drain();
  if (st != CUCORE_OK) return st;
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuGraphExecDestroy", NULL);
  return CUCORE_OK;
}

static cucore_status stream_of(cucore_graph_exec *e, cucore_stream *s, const char *fn) {
  CC_CHECK_HANDLE(e, GRAPH_EXEC, fn, "exec");
  CC_CHECK_HANDLE(s, STREAM, fn, "stream");
  if (CC_UNLIKELY(s->dev->ctx != e->dev->ctx))
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: the stream is of device %d, the graph runs on "
                   "device %d",
                   fn, s->dev->ordinal, e->dev->ordinal);
  return CUCORE_OK;
}

cucore_status cucore_graph_upload(cucore_graph_exec *e, cucore_stream *s) {
  cc_begin();
  cucore_status st = stream_of(e, s, "cucore_graph_upload");
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuGraphUpload);
  if (st == CUCORE_OK) st = cc_device_make_current(e->dev);
  if (st != CUCORE_OK) return st;
  CUresult r = DRV(cuGraphUpload)(e->h, s->handle);
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuGraphUpload", "device %d", e->dev->ordinal);
  return CUCORE_OK;
}

cucore_status cucore_graph_launch(cucore_graph_exec *e, cucore_stream *s) {
  cc_begin();
  cucore_status st = stream_of(e, s, "cucore_graph_launch");
  if (CC_LIKELY(st == CUCORE_OK)) st = CC_DRV_REQUIRE(cuGraphLaunch);
  if (CC_LIKELY(st == CUCORE_OK)) st = cc_device_make_current_fast(e->dev);
  if (CC_UNLIKELY(st != CUCORE_OK)) return st;
  if (CC_UNLIKELY(cc_captures_active())) {
    /* Launched into a capture: the captured graph runs e's nodes, so it keeps what they use. */
    st = cc_capture_check_launch(s, "cucore_graph_launch");
    if (st == CUCORE_OK) st = cc_capture_hold(s, e->graph->held, cc_refs_retain, cc_refs_release);
    if (st == CUCORE_OK && e->source)
      st = cc_capture_hold(s, e->source->held, cc_refs_retain, cc_refs_release);
    if (st != CUCORE_OK) return st;
  }
  CUresult r = DRV(cuGraphLaunch)(e->h, s->handle);
  if (CC_UNLIKELY(r != CUDA_SUCCESS)) {
    st = cc_fail_cu(r, "cuGraphLaunch", "device %d", e->dev->ordinal);
    if (cc_cu_is_capture_error(r)) cc_capture_note_failure(s);
    return st;
  }
  return CUCORE_OK;
}

cucore_status cucore_graph_exec_get_native(cucore_graph_exec *e, void **cugraphexec) {
  cc_begin();
  CC_CHECK_HANDLE(e, GRAPH_EXEC, "cucore_graph_exec_get_native", "exec");
  CC_CHECK_ARG(cugraphexec, "cucore_graph_exec_get_native", "cugraphexec");
  *cugraphexec = e->h;
  return CUCORE_OK;
}

/* ---- whole-graph update --------------------------------------------------------------------- */

static const char *update_reason(CUgraphExecUpdateResult r) {
  switch (r) {
  case CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED:
    return "the graphs differ in shape (node count, exit nodes, or a node's dependencies)";
  case CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED: return "a node's kind changed";
  case CU_GRAPH_EXEC_UPDATE_ERROR_FUNCTION_CHANGED:
    return "a kernel node's function changed (this driver takes no change of function)";
  case CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED:
    return "a node's parameters changed in a way an update cannot take (a copy's or fill's "
           "device or memory type, a fill's shape, a conditional node's parameters)";
  case CU_GRAPH_EXEC_UPDATE_ERROR_NOT_SUPPORTED:
    return "something about a node cannot be updated (its kind or configuration)";
  case CU_GRAPH_EXEC_UPDATE_ERROR_UNSUPPORTED_FUNCTION_CHANGE:
    return "a kernel node's function changed in a way an update cannot take (another context, "
           "or a kernel using dynamic parallelism or device-side graph calls where the old "
           "one did not; cooperative to not, or back)";
  case CU_GRAPH_EXEC_UPDATE_ERROR_ATTRIBUTES_CHANGED:
    return "a node's attributes changed in a way an update cannot take (a priority under "
           "USE_NODE_PRIORITY, or a device-updatable kernel node)";
  default: return "the driver gave no reason";
  }
}

/* "node 2 (kernel `saxpy`)" of graph `g`, or what is known of a node cucore did not make. */
static void name_node(const cucore_graph *g, CUgraphNode h, const char *which, char *buf,
                      size_t len) {
  const cucore_graph_node *n = cc_graph_find_node(g, h);
  char what[CC_NODE_WHAT];
  if (n) {
    cc_graph_node_describe(n, what, sizeof what);
    snprintf(buf, len, "%s of the %s graph", what, which);
  } else {
    snprintf(buf, len, "a captured node of the %s graph", which);
  }
}

static size_t count_nodes(CUgraph g) {
  size_t n = 0;
  if (!DRV(cuGraphGetNodes) || DRV(cuGraphGetNodes)(g, NULL, &n) != CUDA_SUCCESS) return 0;
  return n;
}

/* After an update from `from`: the executable graph's values are those of `from`'s nodes when
 * cucore can match them one to one (same count, and the same kernel at each kernel node);
 * otherwise unknown. */
static void state_after_update(cucore_graph_exec *e, const cucore_graph *from) {
  const cucore_graph *g = e->graph;
  int match = from->node_count == e->node_count;
  for (int i = 0; match && i < e->node_count; i++) {
    const cucore_graph_node *a = g->nodes[i], *b = from->nodes[i];
    match = a->type == b->type && a->k == b->k && (a->graph == g) == (b->graph == from);
  }
  for (int i = 0; i < e->node_count; i++) {
    cc_exec_node *x = &e->state[i];
    if (!x->args) continue;
    if (match)
      cc_exec_state_from_node(x, from->nodes[i]);
    else
      x->known = 0;
  }
}

cucore_status cucore_graph_exec_update(cucore_graph_exec *e, cucore_graph *from) {
  cc_begin();
  const char *fn = "cucore_graph_exec_update";
  CC_CHECK_HANDLE(e, GRAPH_EXEC, fn, "exec");
  CC_CHECK_HANDLE(from, GRAPH, fn, "from");
  if (from->is_body)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: `from` is %s", fn,
                   from->is_child ? "the embedded graph of a child-graph node"
                                  : "the body of a conditional node");
  if (from->dev->ctx != e->dev->ctx)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: `from` runs on device %d, the executable graph "
                   "on device %d",
                   fn, from->dev->ordinal, e->dev->ordinal);
  cucore_status st = CC_DRV_REQUIRE(cuGraphExecUpdate);
  if (st == CUCORE_OK) st = cc_device_make_current(e->dev);
  if (st != CUCORE_OK) return st;
  CUgraphExecUpdateResultInfo info;
  memset(&info, 0, sizeof info);
  CUresult r = DRV(cuGraphExecUpdate)(e->h, from->h, &info);
  if (r != CUDA_SUCCESS) {
    char node[256] = "", edge[256] = "";
    if (info.errorNode) {
      char a[200];
      name_node(from, info.errorNode, "new", a, sizeof a);
      snprintf(node, sizeof node, "; at %s", a);
    }
    if (info.errorFromNode) {
      char b[200];
      name_node(from, info.errorFromNode, "new", b, sizeof b);
      snprintf(edge, sizeof edge, ", whose dependency on %s does not match", b);
    }
    char counts[128] = "";
    if (info.result == CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED) {
      size_t old_n = count_nodes(e->graph->h), new_n = count_nodes(from->h);
      snprintf(counts, sizeof counts,
               " (the executable graph's graph has %zu nodes, the new "
               "one %zu)",
               old_n, new_n);
    }
    return cc_fail_cu(r, "cuGraphExecUpdate", "%s: %s%s%s%s; the executable graph is unchanged", fn,
                      update_reason(info.result), counts, node, edge);
  }
  if (from != e->graph && from != e->source) {
    cc_graph_retain(from);
    cc_graph_release(e->source);
    e->source = from;
  }
  state_after_update(e, from);
  return CUCORE_OK;
}

/* ---- per-node updates ----------------------------------------------------------------------- */

/* The node's entry in e's values, after checking it is a kernel node of e's graph whose values
 * are known. */
static cucore_status kernel_entry(cucore_graph_exec *e, cucore_graph_node *node, const char *fn,
                                  cc_exec_node **out) {
  CC_CHECK_HANDLE(e, GRAPH_EXEC, fn, "exec");
  if (CC_UNLIKELY(!node)) return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: `node` is NULL", fn);
  if (CC_UNLIKELY(node->graph->root != e->graph || node->index >= e->node_count ||
                  node->type != CUCORE_GRAPH_NODE_KERNEL || node->removed ||
                  !e->state[node->index].known)) {
    char what[CC_NODE_WHAT];
    cc_graph_node_describe(node, what, sizeof what);
    if (node->removed || (node->adopted && node->type == CUCORE_GRAPH_NODE_KERNEL))
      return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: %s %s", fn, what,
                     node->removed ? "was destroyed (cucore_graph_node_destroy)"
                                   : "was not added by cucore (a captured node): its values "
                                     "are the driver's; change them in a graph and update the "
                                     "executable graph whole (cucore_graph_exec_update)");
    if (node->graph->root != e->graph)
      return cc_fail(CUCORE_INVALID_ARGUMENT,
                     "%s: %s is not a node of the graph the executable "
                     "graph was instantiated from",
                     fn, what);
    if (node->index >= e->node_count)
      return cc_fail(CUCORE_INVALID_ARGUMENT,
                     "%s: %s was added to the graph after the "
                     "executable graph was instantiated (it has %d nodes cucore made)",
                     fn, what, e->node_count);
    if (node->type != CUCORE_GRAPH_NODE_KERNEL)
      return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: %s is not a kernel node", fn, what);
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: %s: its values in the executable graph are unknown since it was updated "
                   "from a graph cucore could not match node by node (a captured graph, or one "
                   "built in another order); update it whole again, or instantiate",
                   fn, what);
  }
  *out = &e->state[node->index];
  return CUCORE_OK;
}

static inline CUresult set_params(cucore_graph_exec *e, const cucore_graph_node *node,
                                  const cc_exec_node *x, cucore_args *args, const unsigned *grid,
                                  const unsigned *block, unsigned smem) {
  CUDA_KERNEL_NODE_PARAMS p;
  memset(&p, 0, sizeof p);
  p.func = x->fn;
  p.gridDimX = grid[0];
  p.gridDimY = grid[1];
  p.gridDimZ = grid[2];
  p.blockDimX = block[0];
  p.blockDimY = block[1];
  p.blockDimZ = block[2];
  p.sharedMemBytes = smem;
  p.kernelParams = cc_args_params(args);
  return DRV(cuGraphExecKernelNodeSetParams)(e->h, node->h, &p);
}

/* cucore_graph_exec_set_kernel_args with every check and message (the fast path's fallback;
 * a refused update is made again here to explain it, leaving the node as it was). */
CC_COLD static cucore_status set_kernel_args_checked(cucore_graph_exec *e, cucore_graph_node *node,
                                                     cucore_args *args) {
  const char *fn = "cucore_graph_exec_set_kernel_args";
  cc_exec_node *x = NULL;
  cucore_status st = kernel_entry(e, node, fn, &x);
  if (CC_UNLIKELY(st != CUCORE_OK)) return st;
  CC_CHECK_HANDLE(args, ARGS, fn, "args");
  st = cc_args_check(args, x->k);
  if (CC_UNLIKELY(st != CUCORE_OK)) return st;
  st = CC_DRV_REQUIRE(cuGraphExecKernelNodeSetParams);
  if (CC_LIKELY(st == CUCORE_OK)) st = cc_device_make_current(e->dev);
  if (CC_UNLIKELY(st != CUCORE_OK)) return st;
  CUresult r = set_params(e, node, x, args, x->grid, x->block, x->smem);
  if (CC_UNLIKELY(r != CUDA_SUCCESS)) {
    char what[CC_NODE_WHAT];
    cc_graph_node_describe(node, what, sizeof what);
    return cc_fail_cu(r, "cuGraphExecKernelNodeSetParams", "%s: %s; the node is unchanged", fn,
                      what);
  }
  cc_args_copy_values(x->args, args);
  return CUCORE_OK;
}

cucore_status cucore_graph_exec_set_kernel_args(cucore_graph_exec *e, cucore_graph_node *node,
                                                cucore_args *args) {
  cc_begin();
  /* The update a loop makes, checked inline: a kernel node of e's graph with known values, a
   * complete argument list for its kernel, the device current. Everything else, and every
   * refusal, takes the checked path below, which says what is wrong. */
  if (CC_LIKELY(cc_handle_live(e, CC_KIND_GRAPH_EXEC) && node &&
                cc_handle_live(args, CC_KIND_ARGS) && node->graph->root == e->graph &&
                node->index < e->node_count && node->type == CUCORE_GRAPH_NODE_KERNEL)) {
    cc_exec_node *x = &e->state[node->index];
    if (CC_LIKELY(x->known && cc_args_ready(args, x->k) && cc_device_is_current(e->dev) &&
                  DRV(cuGraphExecKernelNodeSetParams))) {
      if (CC_LIKELY(set_params(e, node, x, args, x->grid, x->block, x->smem) == CUDA_SUCCESS)) {
        cc_args_copy_ready_values(x->args, args);
        return CUCORE_OK;
      }
    }
  }
  return set_kernel_args_checked(e, node, args);
}

cucore_status cucore_graph_exec_set_kernel_dims(cucore_graph_exec *e, cucore_graph_node *node,
                                                const unsigned grid[3], const unsigned block[3],
                                                unsigned shared_bytes) {
  cc_begin();
  const char *fn = "cucore_graph_exec_set_kernel_dims";
  cc_exec_node *x = NULL;
  cucore_status st = kernel_entry(e, node, fn, &x);
  if (st != CUCORE_OK) return st;
  CC_CHECK_ARG(grid, fn, "grid");
  CC_CHECK_ARG(block, fn, "block");
  st = CC_DRV_REQUIRE(cuGraphExecKernelNodeSetParams);
  if (st == CUCORE_OK) st = cc_device_make_current(e->dev);
  if (st != CUCORE_OK) return st;
  /* Checked as a launch with the node's attributes would be. */
  cucore_launch_config cfg = node->cfg;
  memcpy(cfg.grid, grid, sizeof cfg.grid);
  memcpy(cfg.block, block, sizeof cfg.block);
  cfg.shared_bytes = shared_bytes;
  cc_kernel_dev *d = NULL;
  cc_launch_shape shape;
  st = cc_launch_check(x->k, e->dev, &cfg, CC_LAUNCH_IN_GRAPH, 0, fn, &d, &shape);
  if (st != CUCORE_OK) return st;
  CUresult r = set_params(e, node, x, x->args, shape.grid, shape.block, shared_bytes);
  if (r != CUDA_SUCCESS)
    return cc_launch_explain(x->k, d, &shape, &cfg, r, "cuGraphExecKernelNodeSetParams");
  memcpy(x->grid, shape.grid, sizeof x->grid);
  memcpy(x->block, shape.block, sizeof x->block);
  x->smem = shared_bytes;
  return CUCORE_OK;
}

static cucore_status enabled_entry(cucore_graph_exec *e, cucore_graph_node *node, const char *fn) {
  CC_CHECK_HANDLE(e, GRAPH_EXEC, fn, "exec");
  CC_CHECK_ARG(node, fn, "node");
  char what[CC_NODE_WHAT];
  cc_graph_node_describe(node, what, sizeof what);
  if (!cc_graph_node_in_exec(node, e))
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: %s is not a node of the graph the executable "
                   "graph was instantiated from%s",
                   fn, what,
                   node->graph->root != e->graph ? ""
                   : node->removed               ? " (it was destroyed)"
                                                 : " (it was added afterwards)");
  if (node->type != CUCORE_GRAPH_NODE_KERNEL && node->type != CUCORE_GRAPH_NODE_MEMCPY &&
      node->type != CUCORE_GRAPH_NODE_MEMSET)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: %s: only kernel, memcpy and memset nodes can be "
                   "enabled and disabled (the driver's rule)",
                   fn, what);
  return CUCORE_OK;
}

cucore_status cucore_graph_exec_set_node_enabled(cucore_graph_exec *e, cucore_graph_node *node,
                                                 int enabled) {
  cc_begin();
  const char *fn = "cucore_graph_exec_set_node_enabled";
  cucore_status st = enabled_entry(e, node, fn);
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuGraphNodeSetEnabled);
  if (st == CUCORE_OK) st = cc_device_make_current(e->dev);
  if (st != CUCORE_OK) return st;
  CUresult r = DRV(cuGraphNodeSetEnabled)(e->h, node->h, enabled ? 1u : 0u);
  if (r != CUDA_SUCCESS) {
    char what[CC_NODE_WHAT];
    cc_graph_node_describe(node, what, sizeof what);
    return cc_fail_cu(r, "cuGraphNodeSetEnabled", "%s: %s", fn, what);
  }
  return CUCORE_OK;
}

cucore_status cucore_graph_exec_get_node_enabled(cucore_graph_exec *e, cucore_graph_node *node,
                                                 int *enabled) {
  cc_begin();
  const char *fn = "cucore_graph_exec_get_node_enabled";
  CC_CHECK_ARG(enabled, fn, "enabled");
  *enabled = 0;
  cucore_status st = enabled_entry(e, node, fn);
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuGraphNodeGetEnabled);
  if (st == CUCORE_OK) st = cc_device_make_current(e->dev);
  if (st != CUCORE_OK) return st;
  unsigned on = 0;
  CUresult r = DRV(cuGraphNodeGetEnabled)(e->h, node->h, &on);
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuGraphNodeGetEnabled", "%s", fn);
  *enabled = on != 0;
  return CUCORE_OK;
}
