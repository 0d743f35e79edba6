/*
 * node_checks.c -- new parameters for a node, checked before the driver sees them and turned
 * into the driver's structures: a kernel (checked as a launch: its arguments first, then the
 * shape against the kernel on the graph's device, with the node's attributes), a fill and a
 * copy (addresses, sizes, pitches and the footprint against the memory cucore recorded), a host
 * function, an event, a child graph. node_update.c applies them to a graph or an executable
 * graph.
 */
#include "graph/graph.h"
#include "memory/memory.h"

#include <stdio.h>
#include <string.h>

cucore_status cc_node_update_enter(cucore_graph_node *node, const cucore_graph_node_params *p,
                                   const char *fn) {
  CC_CHECK_ARG(node, fn, "node");
  CC_CHECK_ARG(p, fn, "params");
  char what[CC_NODE_WHAT];
  cc_graph_node_describe(node, what, sizeof what);
  if (node->removed)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: %s was destroyed (cucore_graph_node_destroy)", fn,
                   what);
  if (p->type != node->type)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: %s is a %s node; the parameters are for a %s node (a node's kind never "
                   "changes: read its parameters with cucore_graph_node_get_params, change them, "
                   "set them)",
                   fn, what, cucore_graph_node_type_name(node->type),
                   cucore_graph_node_type_name(p->type));
  if (node->type == CUCORE_GRAPH_NODE_KERNEL && !node->k) {
    cucore_graph_node_params now; /* a captured node: its kernel and values first */
    cucore_status st = cc_device_make_current(node->graph->dev);
    if (st == CUCORE_OK) st = cc_graph_node_read(node, &now, fn);
    return st;
  }
  return CUCORE_OK;
}

cucore_status cc_node_check_kernel(const cucore_graph_node *n, const cucore_graph_node_params *p,
                                   cc_kernel_update *u, const char *fn) {
  memset(u, 0, sizeof *u);
  CC_CHECK_HANDLE(p->kernel.kernel, KERNEL, fn, "params->kernel.kernel");
  CC_CHECK_HANDLE(p->kernel.args, ARGS, fn, "params->kernel.args");
  u->k = p->kernel.kernel;
  u->args = p->kernel.args;
  cucore_status st = cc_args_check(u->args, u->k);
  if (st != CUCORE_OK) return st;
  u->cfg = n->cfg; /* the node's attributes stay */
  u->cfg.stream = NULL;
  memcpy(u->cfg.grid, p->kernel.grid, sizeof u->cfg.grid);
  memcpy(u->cfg.block, p->kernel.block, sizeof u->cfg.block);
  u->cfg.shared_bytes = p->kernel.shared_bytes;
  st = cc_device_make_current(n->graph->dev);
  if (st == CUCORE_OK)
    st = cc_launch_check(u->k, n->graph->dev, &u->cfg, CC_LAUNCH_IN_GRAPH, 0, fn, &u->d, &u->shape);
  if (st != CUCORE_OK) return st;
  CUDA_KERNEL_NODE_PARAMS *kp = &u->p;
  kp->func = u->d->fn;
  kp->gridDimX = u->shape.grid[0];
  kp->gridDimY = u->shape.grid[1];
  kp->gridDimZ = u->shape.grid[2];
  kp->blockDimX = u->shape.block[0];
  kp->blockDimY = u->shape.block[1];
  kp->blockDimZ = u->shape.block[2];
  kp->sharedMemBytes = u->cfg.shared_bytes;
  kp->kernelParams = cc_args_params(u->args);
  return CUCORE_OK;
}

/* The value and element of a fill: 1, 2 or 4 bytes, the value fitting one. */
static cucore_status fill_value(uint32_t value, unsigned size, const char *fn) {
  if (size != 1 && size != 2 && size != 4)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: element size %u; expected 1, 2 or 4 bytes", fn,
                   size);
  if (size < 4 && value >> (8 * size))
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: value 0x%x does not fit an element of %u byte%s",
                   fn, value, size, size == 1 ? "" : "s");
  return CUCORE_OK;
}

cucore_status cc_node_check_memset(const cucore_graph_node_params *p, CUDA_MEMSET_NODE_PARAMS *m,
                                   const char *fn) {
  memset(m, 0, sizeof *m);
  unsigned es = p->memset.element_size;
  cucore_status st = fill_value(p->memset.value, es, fn);
  if (st != CUCORE_OK) return st;
  size_t width = p->memset.width, height = p->memset.height;
  if (!p->memset.dst || !width || !height)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: %s", fn,
                   !p->memset.dst ? "the destination is 0"
                                  : "a fill of 0 elements (width and height are at least 1)");
  if (p->memset.dst % es)
    return cc_fail(CUCORE_ARG_ALIGNMENT,
                   "%s: address 0x%llx is not aligned to the %u-byte elements", fn,
                   (unsigned long long)p->memset.dst, es);
  uint64_t row = 0, first = 0, end = 0;
  size_t pitch = height > 1 ? p->memset.pitch : 0;
  if (!cc_mul_u64(width, es, &row) || (height > 1 && pitch < row))
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: rows of %zu elements of %u bytes with a pitch of %zu bytes (a 2D fill's "
                   "pitch is at least its row)",
                   fn, width, es, p->memset.pitch);
  if (!cc_footprint_2d(0, 0, height > 1 ? pitch : row, row, height, &first, &end))
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: the fill's size overflows", fn);
  char shape[96];
  snprintf(shape, sizeof shape, "%zu rows of %llu bytes, pitch %zu", height,
           (unsigned long long)row, pitch);
  st = cc_mem_check_region(p->memset.dst, first, end, fn, "destination", shape);
  if (st != CUCORE_OK) return st;
  m->dst = (CUdeviceptr)p->memset.dst;
  m->pitch = pitch;
  m->value = p->memset.value;
  m->elementSize = es;
  m->width = width;
  m->height = height;
  return CUCORE_OK;
}

/* One end of a copy: its kind, its address or array, the footprint against the memory. */
static cucore_status copy_end(cucore_copy_end end, cucore_devptr addr, void *cuarray, size_t x,
                              size_t y, size_t z, size_t pitch, size_t rows,
                              const cucore_copy_3d *c, const char *role, const char *fn) {
  if (end < CUCORE_COPY_END_HOST || end > CUCORE_COPY_END_UNIFIED)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: the %s's end is %d; expected CUCORE_COPY_END_HOST, _DEVICE, _ARRAY or "
                   "_UNIFIED",
                   fn, role, (int)end);
  if (end == CUCORE_COPY_END_ARRAY)
    return cuarray ? CUCORE_OK
                   : cc_fail(CUCORE_INVALID_ARGUMENT,
                             "%s: the %s is an array, and its CUarray "
                             "is NULL",
                             fn, role);
  if (!addr) return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: the %s's address is 0", fn, role);
  int flat = c->height <= 1 && c->depth <= 1;
  if (!flat && (pitch < c->width_bytes + x || (c->depth > 1 && rows < c->height + y)))
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: the %s's pitch (%zu bytes) or rows per slice (%zu) are below the region "
                   "(%zu bytes from byte %zu, %zu rows from row %zu)",
                   fn, role, pitch, rows, c->width_bytes, x, c->height, y);
  uint64_t first = 0, last = 0;
  if (!cc_footprint_3d(x, y, z, flat ? c->width_bytes + x : pitch, rows ? rows : c->height,
                       c->width_bytes, c->height, c->depth, &first, &last))
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: the %s's region overflows", fn, role);
  char shape[128];
  snprintf(shape, sizeof shape, "%zu slices of %zu rows of %zu bytes, pitch %zu", c->depth,
           c->height, c->width_bytes, pitch);
  return cc_mem_check_region(addr, first, last, fn, role, shape);
}

cucore_status cc_node_check_memcpy(const cucore_graph_node_params *p, CUDA_MEMCPY3D *m,
                                   const char *fn) {
  memset(m, 0, sizeof *m);
  const cucore_copy_3d *c = &p->memcpy.copy;
  if (!c->width_bytes || !c->height || !c->depth)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: a copy of %zu bytes x %zu rows x %zu slices (each at least 1)", fn,
                   c->width_bytes, c->height, c->depth);
  cucore_status st = copy_end(p->memcpy.src_end, c->src, p->memcpy.src_cuarray, c->src_x_bytes,
                              c->src_y, c->src_z, c->src_pitch, c->src_height, c, "source", fn);
  if (st == CUCORE_OK)
    st = copy_end(p->memcpy.dst_end, c->dst, p->memcpy.dst_cuarray, c->dst_x_bytes, c->dst_y,
                  c->dst_z, c->dst_pitch, c->dst_height, c, "destination", fn);
  if (st != CUCORE_OK) return st;
  m->srcMemoryType = (CUmemorytype)p->memcpy.src_end;
  m->srcHost = (const void *)(uintptr_t)c->src;
  m->srcDevice = (CUdeviceptr)c->src;
  m->srcArray = (CUarray)p->memcpy.src_cuarray;
  m->srcXInBytes = c->src_x_bytes;
  m->srcY = c->src_y;
  m->srcZ = c->src_z;
  m->srcPitch = c->src_pitch;
  m->srcHeight = c->src_height;
  m->dstMemoryType = (CUmemorytype)p->memcpy.dst_end;
  m->dstHost = (void *)(uintptr_t)c->dst;
  m->dstDevice = (CUdeviceptr)c->dst;
  m->dstArray = (CUarray)p->memcpy.dst_cuarray;
  m->dstXInBytes = c->dst_x_bytes;
  m->dstY = c->dst_y;
  m->dstZ = c->dst_z;
  m->dstPitch = c->dst_pitch;
  m->dstHeight = c->dst_height;
  m->WidthInBytes = c->width_bytes;
  m->Height = c->height;
  m->Depth = c->depth;
  return CUCORE_OK;
}

cucore_status cc_node_check_event(const cucore_graph_node *n, const cucore_graph_node_params *p,
                                  const char *fn) {
  CC_CHECK_HANDLE(p->event.event, EVENT, fn, "params->event.event");
  const cucore_device *dev = n->graph->dev;
  if (p->event.event->dev->ctx != dev->ctx)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: the event belongs to device %d, the graph to "
                   "device %d",
                   fn, p->event.event->dev->ordinal, dev->ordinal);
  return cc_refs_hold(n->graph->root->held, p->event.event, cc_event_retain, cc_event_release);
}

cucore_status cc_node_check_child(const cucore_graph_node *n, const cucore_graph_node_params *p,
                                  const char *fn) {
  CC_CHECK_HANDLE(p->child, GRAPH, fn, "params->child");
  const cucore_graph *c = p->child;
  const char *why = c->root == n->graph->root ? "a part of the same graph"
                    : c->is_body              ? "owned by a node (a body or an embedded graph)"
                    : c->dev->ctx != n->graph->dev->ctx ? "a graph of another device"
                    : c->conditionals                   ? "a graph with conditional nodes"
                    : c->mem_nodes                      ? "a graph with memory nodes"
                                                        : NULL;
  if (why)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: the new child graph is %s, which a child-graph "
                   "node cannot take",
                   fn, why);
  return cc_refs_hold(n->graph->root->held, c->held, cc_refs_retain, cc_refs_release);
}
