/*
 * resource_builtin.c -- cucore's own allocators as memory resources: a stream-ordered pool
 * (cuMemAllocFromPoolAsync / cuMemFreeAsync, raw: the resource layer records), a pinned host
 * pool (its public calls: the pool records its blocks itself), and virtual memory with one
 * mapping per allocation (reserve, create, map, release the handle: the mapping keeps the
 * memory until it is unmapped).
 */
#include "memory/resource.h"
#include "memory/vmm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static CUstream stream_of(const cucore_stream *s) { return s ? s->handle : NULL; }

/* ---- a stream-ordered pool ------------------------------------------------------------------ */

static cucore_status pool_allocate(void *user, size_t bytes, size_t alignment, cucore_stream *s,
                                   cucore_devptr *out) {
  (void)alignment; /* pools align to at least 256 bytes, all cucore asks */
  cucore_mem_pool *pool = user;
  CUdeviceptr p = 0;
  CUresult r = DRV(cuMemAllocFromPoolAsync)(&p, bytes, pool->handle, stream_of(s));
  if (r == CUDA_SUCCESS && !s) r = DRV(cuStreamSynchronize)(NULL); /* usable at once */
  if (r != CUDA_SUCCESS) {
    if (p) (void)DRV(cuMemFreeAsync)(p, NULL);
    return cc_fail_cu(r, "cuMemAllocFromPoolAsync", "%zu bytes from a pool of device %d", bytes,
                      pool->dev->ordinal);
  }
  *out = p;
  return CUCORE_OK;
}

static cucore_status pool_deallocate(void *user, cucore_devptr ptr, size_t bytes, size_t alignment,
                                     cucore_stream *s) {
  (void)user, (void)bytes, (void)alignment;
  CUresult r = DRV(cuMemFreeAsync)((CUdeviceptr)ptr, stream_of(s));
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, "cuMemFreeAsync", "0x%llx of a pool resource", (unsigned long long)ptr);
  return CUCORE_OK;
}

cucore_status cucore_mem_resource_from_pool(cucore_mem_pool *pool, cucore_mem_resource **out) {
  cc_begin();
  const char *fn = "cucore_mem_resource_from_pool";
  CC_CHECK_ARG(out, fn, "out");
  *out = NULL;
  CC_CHECK_HANDLE(pool, MEM_POOL, fn, "pool");
  if (pool->imported)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: the pool was imported from another process and cannot allocate", fn);
  cucore_status st = CC_DRV_REQUIRE(cuMemAllocFromPoolAsync);
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuMemFreeAsync);
  if (st != CUCORE_OK) return st;
  /* The facts follow what the pool hands out: device, pinned host or managed memory. */
  cucore_mem_kind kind = cc_pool_rec_kind(pool);
  unsigned flags = CUCORE_MR_DEVICE_ACCESSIBLE;
  if (kind == CUCORE_MEM_POOL_PINNED)
    flags |= CUCORE_MR_HOST_ACCESSIBLE | CUCORE_MR_PINNED;
  else if (kind == CUCORE_MEM_POOL_MANAGED)
    flags |= CUCORE_MR_HOST_ACCESSIBLE | CUCORE_MR_MANAGED;
  char name[96];
  snprintf(name, sizeof name, "stream-ordered %spool of device %d",
           kind == CUCORE_MEM_POOL_PINNED    ? "pinned host "
           : kind == CUCORE_MEM_POOL_MANAGED ? "managed "
                                             : "",
           pool->dev->ordinal);
  static const cucore_mem_resource_ops ops = {pool_allocate, pool_deallocate, NULL};
  st = cc_mres_new(&ops, pool, pool->dev->ordinal, flags, name, out);
  if (st == CUCORE_OK) (*out)->trusted = 1;
  return st;
}

/* ---- a pinned host pool --------------------------------------------------------------------- */

static cucore_status host_allocate(void *user, size_t bytes, size_t alignment, cucore_stream *s,
                                   cucore_devptr *out) {
  (void)alignment, (void)s; /* blocks are page-aligned and ready at once */
  void *p = NULL;
  cucore_status st = cucore_host_pool_alloc(user, bytes, &p);
  if (st == CUCORE_OK) *out = (cucore_devptr)(uintptr_t)p;
  return st;
}

static cucore_status host_deallocate(void *user, cucore_devptr ptr, size_t bytes, size_t alignment,
                                     cucore_stream *s) {
  (void)bytes, (void)alignment, (void)s;
  return cucore_host_pool_free(user, (void *)(uintptr_t)ptr);
}

cucore_status cucore_mem_resource_from_host_pool(cucore_host_pool *pool,
                                                 cucore_mem_resource **out) {
  cc_begin();
  const char *fn = "cucore_mem_resource_from_host_pool";
  CC_CHECK_ARG(out, fn, "out");
  *out = NULL;
  CC_CHECK_HANDLE(pool, HOST_POOL, fn, "pool");
  static const cucore_mem_resource_ops ops = {host_allocate, host_deallocate, NULL};
  unsigned flags = CUCORE_MR_DEVICE_ACCESSIBLE | CUCORE_MR_HOST_ACCESSIBLE | CUCORE_MR_PINNED;
  cucore_status st = cc_mres_new(&ops, pool, -1, flags, "pinned host pool", out);
  if (st == CUCORE_OK) (*out)->trusted = (*out)->self_records = 1;
  return st;
}

/* ---- virtual memory, one mapping per allocation ------------------------------------------- */

typedef struct vmm_res {
  cucore_device *dev;
  size_t granularity;
} vmm_res;

static cucore_status vmm_allocate(void *user, size_t bytes, size_t alignment, cucore_stream *s,
                                  cucore_devptr *out) {
  (void)s; /* mapped memory is ready at once */
  vmm_res *v = user;
  uint64_t size = 0;
  if (!cc_vmm_round_up(bytes, v->granularity, &size))
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%zu bytes overflow rounded up to the granularity",
                   bytes);
  CUdeviceptr p = 0;
  CUresult r = DRV(cuMemAddressReserve)(&p, size, alignment > v->granularity ? alignment : 0, 0, 0);
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, "cuMemAddressReserve", "%llu bytes of address space",
                      (unsigned long long)size);
  CUmemGenericAllocationHandle h = 0;
  cucore_status st = cc_vmm_create_raw(v->dev, size, 0, &h, "a virtual memory resource");
  if (st == CUCORE_OK) {
    st = cc_vmm_map_rw(v->dev, p, size, h, "a virtual memory resource");
    (void)DRV(cuMemRelease)(h); /* the mapping keeps the memory until it is unmapped */
  }
  if (st != CUCORE_OK) {
    (void)DRV(cuMemAddressFree)(p, size);
    return st;
  }
  *out = p;
  return CUCORE_OK;
}

static cucore_status vmm_deallocate(void *user, cucore_devptr ptr, size_t bytes, size_t alignment,
                                    cucore_stream *s) {
  (void)alignment;
  vmm_res *v = user;
  uint64_t size = 0;
  (void)cc_vmm_round_up(bytes, v->granularity, &size);
  /* Unmapping is immediate: the work queued on the stream (or the device's) finishes first. */
  CUresult r = s ? DRV(cuStreamSynchronize)(s->handle) : DRV(cuCtxSynchronize)();
  if (r == CUDA_SUCCESS) r = DRV(cuMemUnmap)((CUdeviceptr)ptr, size);
  if (r == CUDA_SUCCESS) r = DRV(cuMemAddressFree)((CUdeviceptr)ptr, size);
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, "cuMemUnmap", "%llu bytes at 0x%llx of a virtual memory resource",
                      (unsigned long long)size, (unsigned long long)ptr);
  return CUCORE_OK;
}

cucore_status cucore_mem_resource_vmm(cucore_device *dev, cucore_mem_resource **out) {
  cc_begin();
  const char *fn = "cucore_mem_resource_vmm";
  CC_CHECK_ARG(out, fn, "out");
  *out = NULL;
  CC_CHECK_HANDLE(dev, DEVICE, fn, "dev");
  cucore_status st = CC_DRV_REQUIRE(cuMemAddressReserve);
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuMemAddressFree);
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuMemRelease);
  vmm_res *v = NULL;
  if (st == CUCORE_OK) v = cc_calloc(1, sizeof *v, "a virtual memory resource");
  if (st == CUCORE_OK && !v) st = CUCORE_HOST_OUT_OF_MEMORY;
  if (st == CUCORE_OK) {
    v->dev = dev;
    st = cc_vmm_granularity(dev, 0, 0, &v->granularity, fn);
  }
  char name[64];
  snprintf(name, sizeof name, "virtual memory of device %d", dev->ordinal);
  static const cucore_mem_resource_ops ops = {vmm_allocate, vmm_deallocate, free};
  if (st == CUCORE_OK)
    st = cc_mres_new(&ops, v, dev->ordinal, CUCORE_MR_DEVICE_ACCESSIBLE, name, out);
  if (st != CUCORE_OK) {
    free(v);
    return st;
  }
  (*out)->trusted = 1;
  return CUCORE_OK;
}
