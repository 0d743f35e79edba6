/*
 * node_params.c -- what a node does, read back from the driver for every kind of node, of
 * built and captured graphs alike. A kernel node cucore did not add gets, on first reading, a
 * kernel made over the driver's function and an argument list holding the values the driver
 * gave back (both owned by the node); a child-graph node's embedded graph and the bodies of a
 * conditional node it did not add become graph structures of the root.
 */
#include "graph/graph.h"

#include <stdlib.h>
#include <string.h>

/* The values packed in a kernel node's `extra` (CU_LAUNCH_PARAM_BUFFER_POINTER/SIZE). */
static void extra_buffer(void **extra, const unsigned char **buf, size_t *size) {
  *buf = NULL;
  *size = 0;
  for (size_t i = 0; extra && extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
    if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER) *buf = extra[i + 1];
    if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE) *size = *(const size_t *)extra[i + 1];
  }
}

/* The kernel, its name and the argument values of an adopted kernel node, from `p`. */
static cucore_status adopt_kernel(cucore_graph_node *n, const CUDA_KERNEL_NODE_PARAMS *p) {
  cucore_kernel *k = NULL;
  cucore_status st = p->func ? cucore_kernel_from_cufunction(n->graph->dev, p->func, &k)
                             : cucore_kernel_from_cukernel(p->kern, &k);
  if (st != CUCORE_OK) return st;
  const unsigned char *buf;
  size_t size;
  extra_buffer(p->extra, &buf, &size);
  cucore_args *args = NULL;
  st = cc_args_from_driver(k, p->kernelParams, buf, size, &args);
  const char *name = NULL;
  if (st == CUCORE_OK) st = cucore_kernel_get_name(k, &name);
  char *copy = st == CUCORE_OK ? cc_strdup(name, "a kernel's name") : NULL;
  if (st == CUCORE_OK && !copy) st = CUCORE_HOST_OUT_OF_MEMORY;
  if (st != CUCORE_OK) {
    cc_args_free(args);
    cucore_kernel_destroy(k);
    return st;
  }
  n->k = k;
  n->args = args;
  n->name = copy;
  n->fn = p->func;
  unsigned grid[3] = {p->gridDimX, p->gridDimY, p->gridDimZ};
  unsigned block[3] = {p->blockDimX, p->blockDimY, p->blockDimZ};
  memcpy(n->cfg.grid, grid, sizeof grid);
  memcpy(n->cfg.block, block, sizeof block);
  n->cfg.shared_bytes = p->sharedMemBytes;
  return CUCORE_OK;
}

static cucore_status kernel_params(cucore_graph_node *n, cucore_graph_node_params *out,
                                   const char *fn) {
  cucore_status st = CC_DRV_REQUIRE(cuGraphKernelNodeGetParams);
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuGraphKernelNodeGetAttribute);
  if (st != CUCORE_OK) return st;
  CUDA_KERNEL_NODE_PARAMS p;
  memset(&p, 0, sizeof p);
  CUresult r = DRV(cuGraphKernelNodeGetParams)(n->h, &p);
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuGraphKernelNodeGetParams", "%s", fn);
  if (!n->k && (st = adopt_kernel(n, &p)) != CUCORE_OK) return st;
  CUkernelNodeAttrValue v;
  memset(&v, 0, sizeof v);
  r = DRV(cuGraphKernelNodeGetAttribute)(n->h, CU_KERNEL_NODE_ATTRIBUTE_CLUSTER_DIMENSION, &v);
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuGraphKernelNodeGetAttribute", "%s", fn);
  out->kernel.kernel = n->k;
  out->kernel.name = n->name ? n->name : n->k->name;
  unsigned grid[3] = {p.gridDimX, p.gridDimY, p.gridDimZ};
  unsigned block[3] = {p.blockDimX, p.blockDimY, p.blockDimZ};
  unsigned cluster[3] = {v.clusterDim.x, v.clusterDim.y, v.clusterDim.z};
  memcpy(out->kernel.grid, grid, sizeof grid);
  memcpy(out->kernel.block, block, sizeof block);
  memcpy(out->kernel.cluster, cluster, sizeof cluster);
  out->kernel.shared_bytes = p.sharedMemBytes;
  out->kernel.args = n->args;
  return CUCORE_OK;
}

static cucore_status memset_params(cucore_graph_node *n, cucore_graph_node_params *out,
                                   const char *fn) {
  cucore_status st = CC_DRV_REQUIRE(cuGraphMemsetNodeGetParams);
  if (st != CUCORE_OK) return st;
  CUDA_MEMSET_NODE_PARAMS p;
  memset(&p, 0, sizeof p);
  CUresult r = DRV(cuGraphMemsetNodeGetParams)(n->h, &p);
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuGraphMemsetNodeGetParams", "%s", fn);
  out->memset.dst = (cucore_devptr)p.dst;
  out->memset.pitch = p.pitch;
  out->memset.value = p.value;
  out->memset.element_size = p.elementSize;
  out->memset.width = p.width;
  out->memset.height = p.height;
  n->fill_rows = p.height;
  return CUCORE_OK;
}

/* One end of a copy: where it is and its address or array. */
static cucore_devptr copy_end(CUmemorytype type, const void *host, CUdeviceptr dev, CUarray array,
                              cucore_copy_end *end, void **cuarray) {
  *end = (cucore_copy_end)type;
  *cuarray = type == CU_MEMORYTYPE_ARRAY ? (void *)array : NULL;
  if (type == CU_MEMORYTYPE_HOST) return CUCORE_HOST_ADDR(host);
  return type == CU_MEMORYTYPE_ARRAY ? 0 : (cucore_devptr)dev;
}

static cucore_status memcpy_params(cucore_graph_node *n, cucore_graph_node_params *out,
                                   const char *fn) {
  cucore_status st = CC_DRV_REQUIRE(cuGraphMemcpyNodeGetParams);
  if (st != CUCORE_OK) return st;
  CUDA_MEMCPY3D p;
  memset(&p, 0, sizeof p);
  CUresult r = DRV(cuGraphMemcpyNodeGetParams)(n->h, &p);
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuGraphMemcpyNodeGetParams", "%s", fn);
  cucore_copy_3d *c = &out->memcpy.copy;
  c->src = copy_end(p.srcMemoryType, p.srcHost, p.srcDevice, p.srcArray, &out->memcpy.src_end,
                    &out->memcpy.src_cuarray);
  c->dst = copy_end(p.dstMemoryType, p.dstHost, p.dstDevice, p.dstArray, &out->memcpy.dst_end,
                    &out->memcpy.dst_cuarray);
  c->src_pitch = p.srcPitch;
  c->src_height = p.srcHeight;
  c->src_x_bytes = p.srcXInBytes;
  c->src_y = p.srcY;
  c->src_z = p.srcZ;
  c->dst_pitch = p.dstPitch;
  c->dst_height = p.dstHeight;
  c->dst_x_bytes = p.dstXInBytes;
  c->dst_y = p.dstY;
  c->dst_z = p.dstZ;
  c->width_bytes = p.WidthInBytes;
  c->height = p.Height;
  c->depth = p.Depth;
  return CUCORE_OK;
}

static cucore_status host_params(cucore_graph_node *n, cucore_graph_node_params *out,
                                 const char *fn) {
  cucore_status st = CC_DRV_REQUIRE(cuGraphHostNodeGetParams);
  if (st != CUCORE_OK) return st;
  CUDA_HOST_NODE_PARAMS p;
  memset(&p, 0, sizeof p);
  CUresult r = DRV(cuGraphHostNodeGetParams)(n->h, &p);
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuGraphHostNodeGetParams", "%s", fn);
  out->host.fn = p.fn;
  out->host.user = p.userData;
  return CUCORE_OK;
}

static cucore_status child_params(cucore_graph_node *n, cucore_graph_node_params *out,
                                  const char *fn) {
  if (!n->child) {
    cucore_status st = CC_DRV_REQUIRE(cuGraphChildGraphNodeGetGraph);
    if (st != CUCORE_OK) return st;
    CUgraph h = NULL;
    CUresult r = DRV(cuGraphChildGraphNodeGetGraph)(n->h, &h);
    if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuGraphChildGraphNodeGetGraph", "%s", fn);
    st = cc_graph_new_body(n->graph->root, h, &n->child);
    if (st != CUCORE_OK) return st;
    n->child->is_child = 1;
  }
  out->child = n->child;
  return CUCORE_OK;
}

static cucore_status event_params(cucore_graph_node *n, cucore_graph_node_params *out,
                                  const char *fn) {
  int record = n->type == CUCORE_GRAPH_NODE_EVENT_RECORD;
  cucore_status st = record ? CC_DRV_REQUIRE(cuGraphEventRecordNodeGetEvent)
                            : CC_DRV_REQUIRE(cuGraphEventWaitNodeGetEvent);
  if (st != CUCORE_OK) return st;
  CUevent ev = NULL;
  CUresult r = record ? DRV(cuGraphEventRecordNodeGetEvent)(n->h, &ev)
                      : DRV(cuGraphEventWaitNodeGetEvent)(n->h, &ev);
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, record ? "cuGraphEventRecordNodeGetEvent" : "cuGraphEventWaitNodeGetEvent",
                      "%s", fn);
  out->event.cuevent = ev;
  out->event.event = n->ev && n->ev->handle == ev ? n->ev : NULL;
  return CUCORE_OK;
}

/* The bodies of a conditional node cucore did not add, from cuGraphNodeGetParams. */
static cucore_status adopt_conditional(cucore_graph_node *n, const char *fn) {
  cucore_status st = CC_DRV_REQUIRE(cuGraphNodeGetParams);
  if (st != CUCORE_OK) return st;
  CUgraphNodeParams p;
  memset(&p, 0, sizeof p);
  CUresult r = DRV(cuGraphNodeGetParams)(n->h, &p);
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuGraphNodeGetParams", "%s", fn);
  unsigned count = p.conditional.size;
  n->bodies = cc_calloc(count ? count : 1, sizeof *n->bodies, "a conditional node's bodies");
  if (!n->bodies) return CUCORE_HOST_OUT_OF_MEMORY;
  for (unsigned i = 0; i < count; i++) {
    st = cc_graph_new_body(n->graph->root, p.conditional.phGraph_out[i], &n->bodies[i]);
    if (st != CUCORE_OK) return st; /* the bodies made so far stay with the root */
    n->body_count = i + 1;
  }
  n->cond = (cucore_graph_condition)p.conditional.handle;
  n->cond_type = (cucore_conditional_type)p.conditional.type;
  return CUCORE_OK;
}

static cucore_status conditional_params(cucore_graph_node *n, cucore_graph_node_params *out,
                                        const char *fn) {
  if (!n->bodies) {
    cucore_status st = adopt_conditional(n, fn);
    if (st != CUCORE_OK) return st;
  }
  out->conditional.cond = n->cond;
  out->conditional.type = n->cond_type;
  out->conditional.body_count = n->body_count;
  out->conditional.bodies = n->bodies;
  return CUCORE_OK;
}

static cucore_status mem_params(cucore_graph_node *n, cucore_graph_node_params *out,
                                const char *fn) {
  if (!n->adopted) {
    out->mem.dptr = n->mem_ptr;
    out->mem.bytes = n->type == CUCORE_GRAPH_NODE_MEM_ALLOC ? n->mem_bytes : 0;
    return CUCORE_OK;
  }
  int alloc = n->type == CUCORE_GRAPH_NODE_MEM_ALLOC;
  cucore_status st = alloc ? CC_DRV_REQUIRE(cuGraphMemAllocNodeGetParams)
                           : CC_DRV_REQUIRE(cuGraphMemFreeNodeGetParams);
  if (st != CUCORE_OK) return st;
  CUresult r;
  if (alloc) {
    CUDA_MEM_ALLOC_NODE_PARAMS p;
    memset(&p, 0, sizeof p);
    r = DRV(cuGraphMemAllocNodeGetParams)(n->h, &p);
    out->mem.dptr = p.dptr;
    out->mem.bytes = p.bytesize;
  } else {
    CUdeviceptr d = 0;
    r = DRV(cuGraphMemFreeNodeGetParams)(n->h, &d);
    out->mem.dptr = d;
  }
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, alloc ? "cuGraphMemAllocNodeGetParams" : "cuGraphMemFreeNodeGetParams",
                      "%s", fn);
  return CUCORE_OK;
}

cucore_status cc_graph_node_read(cucore_graph_node *n, cucore_graph_node_params *out,
                                 const char *fn) {
  switch (n->type) {
  case CUCORE_GRAPH_NODE_KERNEL: return kernel_params(n, out, fn);
  case CUCORE_GRAPH_NODE_MEMSET: return memset_params(n, out, fn);
  case CUCORE_GRAPH_NODE_MEMCPY: return memcpy_params(n, out, fn);
  case CUCORE_GRAPH_NODE_HOST: return host_params(n, out, fn);
  case CUCORE_GRAPH_NODE_GRAPH: return child_params(n, out, fn);
  case CUCORE_GRAPH_NODE_EVENT_RECORD:
  case CUCORE_GRAPH_NODE_WAIT_EVENT: return event_params(n, out, fn);
  case CUCORE_GRAPH_NODE_CONDITIONAL: return conditional_params(n, out, fn);
  case CUCORE_GRAPH_NODE_MEM_ALLOC:
  case CUCORE_GRAPH_NODE_MEM_FREE: return mem_params(n, out, fn);
  case CUCORE_GRAPH_NODE_EMPTY: return CUCORE_OK;
  default: break;
  }
  char d[CC_NODE_WHAT];
  cc_graph_node_describe(n, d, sizeof d);
  return cc_fail(CUCORE_NOT_SUPPORTED,
                 "%s: %s: cucore reads the parameters of kernel, memcpy, memset, host, child "
                 "graph, event, conditional and memory nodes; this kind gives its type only",
                 fn, d);
}

cucore_status cucore_graph_node_get_params(cucore_graph_node *node, cucore_graph_node_params *out) {
  cc_begin();
  const char *fn = "cucore_graph_node_get_params";
  CC_CHECK_ARG(out, fn, "out");
  memset(out, 0, sizeof *out);
  CC_CHECK_ARG(node, fn, "node");
  out->type = node->type;
  if (node->removed) {
    char d[CC_NODE_WHAT];
    cc_graph_node_describe(node, d, sizeof d);
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: %s was destroyed (cucore_graph_node_destroy)", fn,
                   d);
  }
  cucore_status st = cc_device_make_current(node->graph->dev);
  if (st == CUCORE_OK) st = cc_graph_node_read(node, out, fn);
  if (st != CUCORE_OK) {
    cucore_graph_node_type t = out->type;
    memset(out, 0, sizeof *out);
    out->type = t;
  }
  return st;
}
