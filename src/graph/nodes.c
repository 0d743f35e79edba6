/*
 * nodes.c -- adding nodes to a graph: kernels (checked by the launch pre-flight, values
 * copied into the node), copies, fills, host functions, event records and waits, empty nodes,
 * child graphs; new argument values for a kernel node of a graph.
 */
#include "graph/graph.h"
#include "memory/memory.h"

#include <stdlib.h>
#include <string.h>

#define DEPS_ON_STACK 16

/* Keeps the events a configuration's attributes name alive with the graph. */
static cucore_status hold_attr_events(cucore_graph *root, const cucore_launch_config *cfg) {
  for (int i = 0; i < cfg->attr_count; i++)
    if ((cfg->attrs[i].id == CUCORE_LAUNCH_PROGRAMMATIC_EVENT ||
         cfg->attrs[i].id == CUCORE_LAUNCH_COMPLETION_EVENT) &&
        cfg->attrs[i].u.event.event) {
      cucore_status st = cc_refs_hold(root->held, cfg->attrs[i].u.event.event, cc_event_retain,
                                      cc_event_release);
      if (st != CUCORE_OK) return st;
    }
  return CUCORE_OK;
}

/* The driver's kernel node parameters of node `n` with values `args` and shape `grid`,
 * `block`, `smem`. */
static void kernel_params(const cucore_graph_node *n, cucore_args *args, const unsigned *grid,
                          const unsigned *block, unsigned smem, CUDA_KERNEL_NODE_PARAMS *p) {
  memset(p, 0, sizeof *p);
  p->func = n->fn;
  p->gridDimX = grid[0];
  p->gridDimY = grid[1];
  p->gridDimZ = grid[2];
  p->blockDimX = block[0];
  p->blockDimY = block[1];
  p->blockDimZ = block[2];
  p->sharedMemBytes = smem;
  p->kernelParams = cc_args_params(args);
}

cucore_status cucore_graph_add_kernel_node(cucore_graph *g, cucore_graph_node *const *deps,
                                           size_t dep_count, cucore_kernel *k,
                                           const cucore_launch_config *cfg, cucore_args *args,
                                           cucore_graph_node **out) {
  cc_begin();
  const char *fn = "cucore_graph_add_kernel_node";
  CC_CHECK_ARG(out, fn, "out");
  *out = NULL;
  CC_CHECK_HANDLE(k, KERNEL, fn, "kernel");
  CC_CHECK_ARG(cfg, fn, "cfg");
  CC_CHECK_HANDLE(args, ARGS, fn, "args");
  /* The arguments first, as a launch checks them (and without a GPU). */
  cucore_status st = cc_args_check(args, k);
  if (st != CUCORE_OK) return st;
  CC_CHECK_HANDLE(g, GRAPH, fn, "graph");
  CUgraphNode buf[DEPS_ON_STACK], *hs = NULL;
  st = cc_graph_deps(g, deps, dep_count, buf, DEPS_ON_STACK, &hs, fn);
  if (st != CUCORE_OK) return st;
  cucore_graph_node *n = NULL;
  if (cfg->stream && cfg->stream->dev->ctx != g->dev->ctx) {
    st = cc_fail(CUCORE_INVALID_ARGUMENT,
                 "%s: cfg->stream is a stream of device %d; the graph runs on device %d (a kernel "
                 "node needs no stream: leave it NULL)",
                 fn, cfg->stream->dev->ordinal, g->dev->ordinal);
    goto done;
  }
  st = CC_DRV_REQUIRE(cuGraphAddKernelNode);
  if (st == CUCORE_OK && cfg->attr_count > 0) st = CC_DRV_REQUIRE(cuGraphKernelNodeSetAttribute);
  if (st == CUCORE_OK) st = cc_device_make_current(g->dev);
  if (st != CUCORE_OK) goto done;
  cc_kernel_dev *d = NULL;
  cc_launch_shape shape;
  st = cc_launch_check(k, g->dev, cfg, CC_LAUNCH_IN_GRAPH, 0, fn, &d, &shape);
  if (st != CUCORE_OK) goto done;
  /* The graph keeps the kernel and the events its attributes name. */
  st = cc_refs_hold(g->root->held, k, cc_kernel_retain, cc_kernel_release);
  if (st == CUCORE_OK) st = hold_attr_events(g->root, cfg);
  if (st == CUCORE_OK) st = cc_graph_node_new(g, CUCORE_GRAPH_NODE_KERNEL, &n);
  if (st == CUCORE_OK) st = cc_args_clone(args, &n->args);
  if (st != CUCORE_OK) goto done;
  cc_kernel_retain(k);
  n->k = k;
  n->fn = d->fn;
  n->cfg = *cfg;
  n->cfg.stream = NULL;
  memcpy(n->cfg.grid, shape.grid, sizeof shape.grid);
  memcpy(n->cfg.block, shape.block, sizeof shape.block);
  CUDA_KERNEL_NODE_PARAMS p;
  kernel_params(n, n->args, shape.grid, shape.block, cfg->shared_bytes, &p);
  CUresult r = DRV(cuGraphAddKernelNode)(&n->h, g->h, hs, dep_count, &p);
  if (r != CUDA_SUCCESS) {
    st = cc_launch_explain(k, d, &shape, cfg, r, "cuGraphAddKernelNode");
    goto done;
  }
  for (int i = 0; i < cfg->attr_count; i++) {
    CUlaunchAttribute a;
    cc_launch_attr_to_cu(&cfg->attrs[i], &a);
    r = DRV(cuGraphKernelNodeSetAttribute)(n->h, (CUkernelNodeAttrID)a.id, &a.value);
    if (r != CUDA_SUCCESS) {
      st = cc_fail_cu(r, "cuGraphKernelNodeSetAttribute",
                      "%s: kernel `%s`: launch attribute %d (the driver takes on kernel nodes "
                      "the attributes it lists as CU_KERNEL_NODE_ATTRIBUTE_*: access policy, "
                      "cooperative, cluster dimension and scheduling, priority, memory sync "
                      "domain and map, preferred cluster, device-updatable, carveout)",
                      fn, k->asked, (int)cfg->attrs[i].id);
      cc_graph_node_undo(n);
      goto done;
    }
  }
  st = cc_graph_keep_node(g, n);
  if (st != CUCORE_OK) goto done;
  *out = n;
  n = NULL;
done:
  cc_graph_node_free(n);
  if (hs != buf) free(hs);
  return st;
}

cucore_status cucore_graph_kernel_node_set_args(cucore_graph_node *node, cucore_args *args) {
  cc_begin();
  const char *fn = "cucore_graph_kernel_node_set_args";
  CC_CHECK_ARG(node, fn, "node");
  CC_CHECK_HANDLE(args, ARGS, fn, "args");
  if (node->type != CUCORE_GRAPH_NODE_KERNEL || node->removed) {
    char what[CC_NODE_WHAT];
    cc_graph_node_describe(node, what, sizeof what);
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: %s %s", fn, what,
                   node->removed ? "was destroyed" : "is not a kernel node");
  }
  cucore_status st = CUCORE_OK;
  if (!node->k) { /* a captured node: its kernel and values from the driver first */
    cucore_graph_node_params p;
    st = cc_device_make_current(node->graph->dev);
    if (st == CUCORE_OK) st = cc_graph_node_read(node, &p, fn);
    if (st != CUCORE_OK) return st;
  }
  if (node->adopted && args->k != node->k) {
    char what[CC_NODE_WHAT];
    cc_graph_node_describe(node, what, sizeof what);
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: %s was not added by cucore (a captured node): make its argument list "
                   "for the kernel its parameters name (cucore_graph_node_get_params(), "
                   "kernel.kernel), whose layout the driver gave",
                   fn, what);
  }
  st = cc_args_check(args, node->k);
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuGraphKernelNodeSetParams);
  if (st == CUCORE_OK) st = cc_device_make_current(node->graph->dev);
  if (st != CUCORE_OK) return st;
  CUDA_KERNEL_NODE_PARAMS p;
  kernel_params(node, args, node->cfg.grid, node->cfg.block, node->cfg.shared_bytes, &p);
  CUresult r = DRV(cuGraphKernelNodeSetParams)(node->h, &p);
  if (r != CUDA_SUCCESS) {
    char what[CC_NODE_WHAT];
    cc_graph_node_describe(node, what, sizeof what);
    return cc_fail_cu(r, "cuGraphKernelNodeSetParams", "%s: %s", fn, what);
  }
  cc_args_copy_values(node->args, args);
  return CUCORE_OK;
}

/* ---- copies and fills ------------------------------------------------------------------------ */

/* Adds a node the driver makes with `add` (given the dependency handles) and keeps its
 * structure. */
typedef CUresult (*add_fn)(CUgraphNode *h, cucore_graph *g, const CUgraphNode *deps, size_t n,
                           const void *ctx);

static cucore_status add_simple(cucore_graph *g, cucore_graph_node *const *deps, size_t dep_count,
                                cucore_graph_node_type type, add_fn add, const void *ctx,
                                const void *driver_fn, const char *call, cucore_graph_node **out,
                                const char *fn) {
  CUgraphNode buf[DEPS_ON_STACK], *hs = NULL;
  cucore_status st = cc_graph_deps(g, deps, dep_count, buf, DEPS_ON_STACK, &hs, fn);
  cucore_graph_node *n = NULL;
  if (st == CUCORE_OK) st = cc_driver_require(driver_fn, call, cc_driver_symbol_version(call));
  if (st == CUCORE_OK) st = cc_device_make_current(g->dev);
  if (st == CUCORE_OK) st = cc_graph_node_new(g, type, &n);
  if (st == CUCORE_OK) {
    CUresult r = add(&n->h, g, hs, dep_count, ctx);
    if (r != CUDA_SUCCESS) {
      st = cc_fail_cu(r, call, "%s on device %d%s", fn, g->dev->ordinal,
                      g->is_body && !g->is_child &&
                              (type == CUCORE_GRAPH_NODE_HOST ||
                               type == CUCORE_GRAPH_NODE_EVENT_RECORD ||
                               type == CUCORE_GRAPH_NODE_WAIT_EVENT)
                          ? " (a conditional node's body takes kernel, empty, child-graph, "
                            "memcpy, memset and conditional nodes only)"
                          : "");
    } else {
      st = cc_graph_keep_node(g, n);
    }
  }
  if (st == CUCORE_OK) {
    *out = n;
    n = NULL;
  }
  cc_graph_node_free(n);
  if (hs != buf) free(hs);
  return st;
}

static CUresult add_copy(CUgraphNode *h, cucore_graph *g, const CUgraphNode *deps, size_t n,
                         const void *ctx) {
  return DRV(cuGraphAddMemcpyNode)(h, g->h, deps, n, ctx, g->dev->ctx);
}

static cucore_status copy_node(cucore_graph *g, cucore_graph_node *const *deps, size_t dep_count,
                               CUDA_MEMCPY3D *c, int has_dst, int has_src, size_t bytes,
                               cucore_graph_node **out, const char *fn) {
  cucore_status st = cc_graph_enter(g, out, fn);
  if (st != CUCORE_OK) return st;
  if (bytes == 0 || !has_dst || !has_src)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: %s", fn,
                   bytes == 0 ? "a copy of 0 bytes (a node copies at least 1)"
                              : "a source or destination is NULL/0");
  c->WidthInBytes = bytes;
  c->Height = 1;
  c->Depth = 1;
  uint64_t dst = c->dstMemoryType == CU_MEMORYTYPE_HOST ? CUCORE_HOST_ADDR(c->dstHost)
                                                        : (uint64_t)c->dstDevice;
  uint64_t src = c->srcMemoryType == CU_MEMORYTYPE_HOST ? CUCORE_HOST_ADDR(c->srcHost)
                                                        : (uint64_t)c->srcDevice;
  st = cc_mem_check_copy(dst, src, bytes, fn);
  if (st != CUCORE_OK) return st;
  return add_simple(g, deps, dep_count, CUCORE_GRAPH_NODE_MEMCPY, add_copy, c,
                    (const void *)DRV(cuGraphAddMemcpyNode), "cuGraphAddMemcpyNode", out, fn);
}

cucore_status cucore_graph_add_memcpy_htod_node(cucore_graph *g, cucore_graph_node *const *deps,
                                                size_t dep_count, cucore_devptr dst,
                                                const void *src, size_t bytes,
                                                cucore_graph_node **out) {
  cc_begin();
  CUDA_MEMCPY3D c;
  memset(&c, 0, sizeof c);
  c.srcMemoryType = CU_MEMORYTYPE_HOST;
  c.srcHost = src;
  c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  c.dstDevice = (CUdeviceptr)dst;
  return copy_node(g, deps, dep_count, &c, dst != 0, src != NULL, bytes, out,
                   "cucore_graph_add_memcpy_htod_node");
}

cucore_status cucore_graph_add_memcpy_dtoh_node(cucore_graph *g, cucore_graph_node *const *deps,
                                                size_t dep_count, void *dst, cucore_devptr src,
                                                size_t bytes, cucore_graph_node **out) {
  cc_begin();
  CUDA_MEMCPY3D c;
  memset(&c, 0, sizeof c);
  c.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  c.srcDevice = (CUdeviceptr)src;
  c.dstMemoryType = CU_MEMORYTYPE_HOST;
  c.dstHost = dst;
  return copy_node(g, deps, dep_count, &c, dst != NULL, src != 0, bytes, out,
                   "cucore_graph_add_memcpy_dtoh_node");
}

cucore_status cucore_graph_add_memcpy_dtod_node(cucore_graph *g, cucore_graph_node *const *deps,
                                                size_t dep_count, cucore_devptr dst,
                                                cucore_devptr src, size_t bytes,
                                                cucore_graph_node **out) {
  cc_begin();
  CUDA_MEMCPY3D c;
  memset(&c, 0, sizeof c);
  c.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  c.srcDevice = (CUdeviceptr)src;
  c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  c.dstDevice = (CUdeviceptr)dst;
  return copy_node(g, deps, dep_count, &c, dst != 0, src != 0, bytes, out,
                   "cucore_graph_add_memcpy_dtod_node");
}

static CUresult add_memset(CUgraphNode *h, cucore_graph *g, const CUgraphNode *deps, size_t n,
                           const void *ctx) {
  return DRV(cuGraphAddMemsetNode)(h, g->h, deps, n, ctx, g->dev->ctx);
}

/* A fill's parameters checked (values, alignment, pitch, the footprint against the memory) and
 * made the driver's. */
static cucore_status fill_params(cucore_devptr dst, size_t pitch, uint32_t value, unsigned size,
                                 size_t width, size_t height, CUDA_MEMSET_NODE_PARAMS *out,
                                 const char *fn) {
  cucore_graph_node_params p;
  memset(&p, 0, sizeof p);
  p.type = CUCORE_GRAPH_NODE_MEMSET;
  p.memset.dst = dst;
  p.memset.pitch = pitch;
  p.memset.value = value;
  p.memset.element_size = size;
  p.memset.width = width;
  p.memset.height = height;
  return cc_node_check_memset(&p, out, fn);
}

cucore_status cucore_graph_add_memset_node(cucore_graph *g, cucore_graph_node *const *deps,
                                           size_t dep_count, cucore_devptr dst, uint32_t value,
                                           unsigned element_size, size_t count,
                                           cucore_graph_node **out) {
  cc_begin();
  const char *fn = "cucore_graph_add_memset_node";
  cucore_status st = cc_graph_enter(g, out, fn);
  if (st != CUCORE_OK) return st;
  if (element_size != 1 && element_size != 2 && element_size != 4)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: element size %u; expected 1, 2 or 4 bytes", fn,
                   element_size);
  if (element_size < 4 && value >> (8 * element_size))
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: value 0x%x does not fit an element of %u "
                   "byte%s",
                   fn, value, element_size, element_size == 1 ? "" : "s");
  if (!dst || !count)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: %s", fn,
                   !dst ? "the destination is 0"
                        : "a fill of 0 elements (a node fills at least 1)");
  if (dst % element_size)
    return cc_fail(CUCORE_ARG_ALIGNMENT,
                   "%s: address 0x%llx is not aligned to the %u-byte "
                   "elements",
                   fn, (unsigned long long)dst, element_size);
  CUDA_MEMSET_NODE_PARAMS p;
  st = fill_params(dst, 0, value, element_size, count, 1, &p, fn);
  if (st != CUCORE_OK) return st;
  st = add_simple(g, deps, dep_count, CUCORE_GRAPH_NODE_MEMSET, add_memset, &p,
                  (const void *)DRV(cuGraphAddMemsetNode), "cuGraphAddMemsetNode", out, fn);
  if (st == CUCORE_OK) (*out)->fill_rows = 1;
  return st;
}

cucore_status cucore_graph_add_memset_2d_node(cucore_graph *g, cucore_graph_node *const *deps,
                                              size_t dep_count, cucore_devptr dst, size_t pitch,
                                              uint32_t value, unsigned element_size, size_t width,
                                              size_t height, cucore_graph_node **out) {
  cc_begin();
  const char *fn = "cucore_graph_add_memset_2d_node";
  cucore_status st = cc_graph_enter(g, out, fn);
  if (st != CUCORE_OK) return st;
  CUDA_MEMSET_NODE_PARAMS p;
  st = fill_params(dst, pitch, value, element_size, width, height, &p, fn);
  if (st != CUCORE_OK) return st;
  st = add_simple(g, deps, dep_count, CUCORE_GRAPH_NODE_MEMSET, add_memset, &p,
                  (const void *)DRV(cuGraphAddMemsetNode), "cuGraphAddMemsetNode", out, fn);
  if (st == CUCORE_OK) (*out)->fill_rows = height;
  return st;
}

cucore_status cucore_graph_add_memcpy_3d_node(cucore_graph *g, cucore_graph_node *const *deps,
                                              size_t dep_count, const cucore_copy_3d *copy,
                                              cucore_graph_node **out) {
  cc_begin();
  const char *fn = "cucore_graph_add_memcpy_3d_node";
  cucore_status st = cc_graph_enter(g, out, fn);
  if (st != CUCORE_OK) return st;
  CC_CHECK_ARG(copy, fn, "copy");
  CUDA_MEMCPY3D m;
  st = cc_copy3d_to_driver(g->dev, copy, &m, fn);
  if (st != CUCORE_OK) return st;
  return add_simple(g, deps, dep_count, CUCORE_GRAPH_NODE_MEMCPY, add_copy, &m,
                    (const void *)DRV(cuGraphAddMemcpyNode), "cuGraphAddMemcpyNode", out, fn);
}

/* ---- host functions, events, empty nodes, child graphs ------------------------------------- */

static CUresult add_host(CUgraphNode *h, cucore_graph *g, const CUgraphNode *deps, size_t n,
                         const void *ctx) {
  return DRV(cuGraphAddHostNode)(h, g->h, deps, n, ctx);
}

cucore_status cucore_graph_add_host_node(cucore_graph *g, cucore_graph_node *const *deps,
                                         size_t dep_count, void (*fn)(void *user), void *user,
                                         void (*destroy)(void *user), cucore_graph_node **out) {
  cc_begin();
  const char *name = "cucore_graph_add_host_node";
  /* The graph owns `user` from the start when it is given a destructor. */
  cucore_status st = CUCORE_OK;
  if (destroy) {
    if (!g) {
      destroy(user);
    } else if ((st = cc_refs_own(g->root->held, user, destroy)) != CUCORE_OK) {
      destroy(user);
      return st;
    }
  }
  st = cc_graph_enter(g, out, name);
  if (st != CUCORE_OK) return st;
  CC_CHECK_ARG(fn, name, "fn");
  CUDA_HOST_NODE_PARAMS p = {fn, user};
  return add_simple(g, deps, dep_count, CUCORE_GRAPH_NODE_HOST, add_host, &p,
                    (const void *)DRV(cuGraphAddHostNode), "cuGraphAddHostNode", out, name);
}

static CUresult add_record(CUgraphNode *h, cucore_graph *g, const CUgraphNode *deps, size_t n,
                           const void *ctx) {
  return DRV(cuGraphAddEventRecordNode)(h, g->h, deps, n, ((const cucore_event *)ctx)->handle);
}

static CUresult add_wait(CUgraphNode *h, cucore_graph *g, const CUgraphNode *deps, size_t n,
                         const void *ctx) {
  return DRV(cuGraphAddEventWaitNode)(h, g->h, deps, n, ((const cucore_event *)ctx)->handle);
}

static cucore_status event_node(cucore_graph *g, cucore_graph_node *const *deps, size_t dep_count,
                                cucore_event *ev, int record, cucore_graph_node **out,
                                const char *fn) {
  cucore_status st = cc_graph_enter(g, out, fn);
  if (st != CUCORE_OK) return st;
  CC_CHECK_HANDLE(ev, EVENT, fn, "event");
  if (ev->dev->ctx != g->dev->ctx)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: the event belongs to device %d, the graph to "
                   "device %d",
                   fn, ev->dev->ordinal, g->dev->ordinal);
  st = cc_refs_hold(g->root->held, ev, cc_event_retain, cc_event_release);
  if (st != CUCORE_OK) return st;
  st = add_simple(g, deps, dep_count,
                  record ? CUCORE_GRAPH_NODE_EVENT_RECORD : CUCORE_GRAPH_NODE_WAIT_EVENT,
                  record ? add_record : add_wait, ev,
                  record ? (const void *)DRV(cuGraphAddEventRecordNode)
                         : (const void *)DRV(cuGraphAddEventWaitNode),
                  record ? "cuGraphAddEventRecordNode" : "cuGraphAddEventWaitNode", out, fn);
  if (st == CUCORE_OK) (*out)->ev = ev;
  return st;
}

cucore_status cucore_graph_add_event_record_node(cucore_graph *g, cucore_graph_node *const *deps,
                                                 size_t dep_count, cucore_event *ev,
                                                 cucore_graph_node **out) {
  cc_begin();
  return event_node(g, deps, dep_count, ev, 1, out, "cucore_graph_add_event_record_node");
}

cucore_status cucore_graph_add_event_wait_node(cucore_graph *g, cucore_graph_node *const *deps,
                                               size_t dep_count, cucore_event *ev,
                                               cucore_graph_node **out) {
  cc_begin();
  return event_node(g, deps, dep_count, ev, 0, out, "cucore_graph_add_event_wait_node");
}

static CUresult add_empty(CUgraphNode *h, cucore_graph *g, const CUgraphNode *deps, size_t n,
                          const void *ctx) {
  (void)ctx;
  return DRV(cuGraphAddEmptyNode)(h, g->h, deps, n);
}

cucore_status cucore_graph_add_empty_node(cucore_graph *g, cucore_graph_node *const *deps,
                                          size_t dep_count, cucore_graph_node **out) {
  cc_begin();
  const char *fn = "cucore_graph_add_empty_node";
  cucore_status st = cc_graph_enter(g, out, fn);
  if (st != CUCORE_OK) return st;
  return add_simple(g, deps, dep_count, CUCORE_GRAPH_NODE_EMPTY, add_empty, NULL,
                    (const void *)DRV(cuGraphAddEmptyNode), "cuGraphAddEmptyNode", out, fn);
}

static CUresult add_child(CUgraphNode *h, cucore_graph *g, const CUgraphNode *deps, size_t n,
                          const void *ctx) {
  return DRV(cuGraphAddChildGraphNode)(h, g->h, deps, n, ((const cucore_graph *)ctx)->h);
}

cucore_status cucore_graph_add_child_graph_node(cucore_graph *g, cucore_graph_node *const *deps,
                                                size_t dep_count, cucore_graph *child,
                                                cucore_graph_node **out) {
  cc_begin();
  const char *fn = "cucore_graph_add_child_graph_node";
  cucore_status st = cc_graph_enter(g, out, fn);
  if (st != CUCORE_OK) return st;
  CC_CHECK_HANDLE(child, GRAPH, fn, "child");
  if (child->root == g->root)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: the child graph is %s", fn,
                   child == g ? "the graph itself" : "a part of the same graph");
  if (child->is_body)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: the child graph is %s (owned by that node); build the child as a graph "
                   "of its own",
                   fn,
                   child->is_child ? "the embedded graph of a child-graph node"
                                   : "the body of a conditional node");
  if (child->dev->ctx != g->dev->ctx)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: the child graph runs on device %d, the graph on "
                   "device %d",
                   fn, child->dev->ordinal, g->dev->ordinal);
  if (child->conditionals)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: the child graph has %d conditional node%s; the "
                   "driver takes no conditional nodes in a child graph (add them to the parent, "
                   "or nest them in a conditional body)",
                   fn, child->conditionals, child->conditionals == 1 ? "" : "s");
  if (child->mem_nodes)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: the child graph has allocation or free nodes, "
                   "whose memory it owns; the driver clones a child graph, which such a graph "
                   "cannot be (add the memory nodes to the parent)",
                   fn);
  /* The clone runs the child's kernels: the parent keeps what the child's nodes use. */
  st = cc_refs_hold(g->root->held, child->held, cc_refs_retain, cc_refs_release);
  if (st != CUCORE_OK) return st;
  return add_simple(g, deps, dep_count, CUCORE_GRAPH_NODE_GRAPH, add_child, child,
                    (const void *)DRV(cuGraphAddChildGraphNode), "cuGraphAddChildGraphNode", out,
                    fn);
}
