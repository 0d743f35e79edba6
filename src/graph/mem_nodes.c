/*
 * mem_nodes.c -- allocation and free nodes of explicit graphs (cuGraphAddMemAllocNode,
 * cuGraphAddMemFreeNode). An allocation's address is fixed when the node is
 * added; cucore records it (kind CUCORE_MEM_GRAPH, owner the graph) so later kernel nodes'
 * pointer checks and copies' bounds checks know it, and frees outside the graph are refused
 * while the graph owns it. The graph frees each of its allocations itself (a free node in the
 * same graph, checked at instantiation); the record goes when the graph goes.
 */
#include "graph/graph.h"
#include "memory/memory.h"

#include <stdlib.h>
#include <string.h>

#define DEPS_ON_STACK 16

/* The allocation node of `root` (bodies included) whose memory starts at `ptr` and is not
 * freed yet; else the last one freed (the driver gives an address again to an allocation
 * made after the free of the one that had it: measured on the H200, two nodes of one graph
 * may share an address); NULL when none. */
static cucore_graph_node *alloc_node_of(const cucore_graph *root, uint64_t ptr) {
  cucore_graph_node *freed = NULL;
  for (int i = 0; i < root->node_count; i++) {
    cucore_graph_node *n = root->nodes[i];
    if (n->type != CUCORE_GRAPH_NODE_MEM_ALLOC || n->mem_ptr != ptr) continue;
    if (!n->freed_by) return n;
    freed = n;
  }
  return freed;
}

/* Entry checks shared by both kinds of node: `out`, the graph, not a conditional body, the
 * dependencies, the driver entry point, the device current. */
static cucore_status mem_enter(cucore_graph *g, cucore_graph_node *const *deps, size_t n,
                               cucore_graph_node **out, CUgraphNode *buf, CUgraphNode **hs,
                               const void *driver_fn, const char *call, const char *fn) {
  *hs = buf;
  cucore_status st = cc_graph_enter(g, out, fn);
  if (st != CUCORE_OK) return st;
  if (g->is_body)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: the graph is %s; the driver takes no allocation or free nodes there (add "
                   "them to the graph around it)",
                   fn,
                   g->is_child ? "the embedded graph of a child-graph node"
                               : "the body of a conditional node");
  st = cc_graph_deps(g, deps, n, buf, DEPS_ON_STACK, hs, fn);
  if (st == CUCORE_OK) st = cc_driver_require(driver_fn, call, cc_driver_symbol_version(call));
  if (st == CUCORE_OK) st = cc_device_make_current(g->dev);
  return st;
}

/* Keeps the node made by the driver (`h`) in the graph; on failure the driver's node goes. */
static cucore_status keep_node(cucore_graph *g, cucore_graph_node *n, cucore_graph_node **out) {
  cucore_status st = cc_graph_keep_node(g, n);
  if (st != CUCORE_OK) return st;
  g->root->mem_nodes++;
  *out = n;
  return CUCORE_OK;
}

/* Records the allocation of node `n` as the graph's. */
static cucore_status record_alloc(cucore_graph *g, const cucore_graph_node *n, const char *fn) {
  cc_mem_rec rec = {.base = n->mem_ptr,
                    .size = n->mem_bytes,
                    .kind = CUCORE_MEM_GRAPH,
                    .ordinal = g->dev->ordinal,
                    .ctx = g->dev->ctx,
                    .owner = g->root};
  return cc_mem_record(&rec, fn);
}

cucore_status cucore_graph_add_mem_alloc_node(cucore_graph *g, cucore_graph_node *const *deps,
                                              size_t dep_count, size_t bytes, cucore_devptr *dptr,
                                              cucore_graph_node **out) {
  cc_begin();
  const char *fn = "cucore_graph_add_mem_alloc_node";
  CC_CHECK_ARG(dptr, fn, "dptr");
  *dptr = 0;
  CC_CHECK_ARG(out, fn, "out");
  *out = NULL;
  cucore_status st = cc_mem_check_alloc_size(bytes, fn);
  if (st != CUCORE_OK) return st;
  CUgraphNode buf[DEPS_ON_STACK], *hs = NULL;
  st = mem_enter(g, deps, dep_count, out, buf, &hs, (const void *)DRV(cuGraphAddMemAllocNode),
                 "cuGraphAddMemAllocNode", fn);
  cucore_graph_node *n = NULL;
  if (st == CUCORE_OK) st = cc_graph_node_new(g, CUCORE_GRAPH_NODE_MEM_ALLOC, &n);
  if (st != CUCORE_OK) goto done;
  CUDA_MEM_ALLOC_NODE_PARAMS p;
  memset(&p, 0, sizeof p);
  p.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.poolProps.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
  p.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  p.poolProps.location.id = (int)g->dev->cudev;
  p.bytesize = bytes;
  CUresult r = DRV(cuGraphAddMemAllocNode)(&n->h, g->h, hs, dep_count, &p);
  if (r != CUDA_SUCCESS) {
    st = r == CUDA_ERROR_OUT_OF_MEMORY
             ? cc_mem_fail_alloc(r, "cuGraphAddMemAllocNode", fn, g->dev->ordinal, bytes,
                                 "the address range of a graph allocation is reserved when the "
                                 "node is added")
             : cc_fail_cu(r, "cuGraphAddMemAllocNode",
                          "%s: %zu bytes on device %d (graph "
                          "memory needs a device with memory pools)",
                          fn, bytes, g->dev->ordinal);
    goto done;
  }
  n->mem_ptr = p.dptr;
  n->mem_bytes = bytes;
  st = record_alloc(g, n, fn);
  if (st != CUCORE_OK) {
    cc_graph_node_undo(n);
    goto done;
  }
  st = keep_node(g, n, out);
  if (st != CUCORE_OK) {
    (void)cc_reg_remove(&cc_mem_registry, n->mem_ptr);
    goto done;
  }
  *dptr = n->mem_ptr;
  n = NULL;
done:
  cc_graph_node_free(n);
  if (hs != buf) free(hs);
  return st;
}

/* Why `ptr` is not an allocation of `g` that a free node may free. */
static cucore_status explain_not_own(const cucore_graph *g, uint64_t ptr, const char *fn) {
  const cucore_graph_node *a = alloc_node_of(g->root, ptr);
  char what[256];
  if (a) { /* found, so freed already */
    char by[96];
    cc_graph_node_describe(a->freed_by, by, sizeof by);
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: 0x%llx is freed already by %s of this graph "
                   "(an allocation is freed once)",
                   fn, (unsigned long long)ptr, by);
  }
  cc_mem_rec rec;
  if (cc_reg_find(&cc_mem_registry, ptr, &rec)) {
    cc_rec_describe(&rec, what, sizeof what);
    if (rec.kind == CUCORE_MEM_GRAPH && rec.base == ptr)
      return cc_fail(CUCORE_INVALID_ARGUMENT,
                     "%s: 0x%llx is %s of another graph; a graph frees "
                     "only its own allocations (cucore keeps graph memory inside its graph)",
                     fn, (unsigned long long)ptr, what);
    if (rec.base != ptr)
      return cc_fail(CUCORE_INVALID_ARGUMENT,
                     "%s: 0x%llx is %llu bytes inside %s; pass the "
                     "start of the allocation",
                     fn, (unsigned long long)ptr, (unsigned long long)(ptr - rec.base), what);
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: 0x%llx is %s, not memory of an allocation node "
                   "of this graph; free it with its own call",
                   fn, (unsigned long long)ptr, what);
  }
  return cc_fail(CUCORE_INVALID_ARGUMENT,
                 "%s: 0x%llx is not memory of an allocation node of "
                 "this graph (cucore_graph_add_mem_alloc_node gives those addresses)",
                 fn, (unsigned long long)ptr);
}

cucore_status cucore_graph_add_mem_free_node(cucore_graph *g, cucore_graph_node *const *deps,
                                             size_t dep_count, cucore_devptr dptr,
                                             cucore_graph_node **out) {
  cc_begin();
  const char *fn = "cucore_graph_add_mem_free_node";
  cucore_status st = cc_graph_enter(g, out, fn);
  if (st != CUCORE_OK) return st;
  if (!dptr) return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: the address is 0", fn);
  cucore_graph_node *a = alloc_node_of(g->root, dptr);
  if (!a || a->freed_by) return explain_not_own(g, dptr, fn);
  CUgraphNode buf[DEPS_ON_STACK], *hs = NULL;
  st = mem_enter(g, deps, dep_count, out, buf, &hs, (const void *)DRV(cuGraphAddMemFreeNode),
                 "cuGraphAddMemFreeNode", fn);
  cucore_graph_node *n = NULL;
  if (st == CUCORE_OK) st = cc_graph_node_new(g, CUCORE_GRAPH_NODE_MEM_FREE, &n);
  if (st != CUCORE_OK) goto done;
  CUresult r = DRV(cuGraphAddMemFreeNode)(&n->h, g->h, hs, dep_count, (CUdeviceptr)dptr);
  if (r != CUDA_SUCCESS) {
    char what[CC_NODE_WHAT];
    cc_graph_node_describe(a, what, sizeof what);
    st = cc_fail_cu(r, "cuGraphAddMemFreeNode",
                    "%s: 0x%llx of %s (a free node depends, "
                    "directly or not, on its allocation node and on every node that uses the "
                    "memory)",
                    fn, (unsigned long long)dptr, what);
    goto done;
  }
  n->mem_ptr = dptr;
  st = keep_node(g, n, out);
  if (st == CUCORE_OK) {
    a->freed_by = n;
    n = NULL;
  }
done:
  cc_graph_node_free(n);
  if (hs != buf) free(hs);
  return st;
}

cucore_status cc_graph_mem_check_freed(const cucore_graph *g, const char *fn) {
  for (int i = 0; g->mem_nodes && i < g->node_count; i++) {
    const cucore_graph_node *n = g->nodes[i];
    if (n->type != CUCORE_GRAPH_NODE_MEM_ALLOC || n->freed_by) continue;
    char what[CC_NODE_WHAT];
    cc_graph_node_describe(n, what, sizeof what);
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: the %llu bytes at 0x%llx of %s are never freed "
                   "in the graph; add a free node for them (cucore_graph_add_mem_free_node), "
                   "since cucore keeps graph memory inside its graph",
                   fn, (unsigned long long)n->mem_bytes, (unsigned long long)n->mem_ptr, what);
  }
  return CUCORE_OK;
}
