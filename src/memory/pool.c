/*
 * pool.c -- device memory pools and stream-ordered allocation (cuMemAllocAsync,
 * cuMemAllocFromPoolAsync, cuMemFreeAsync): pools created with a release threshold, reuse
 * policy, maximum size and IPC sharing; handles on a device's default pool; attributes,
 * statistics, trimming and peer access. Each allocation is recorded with its pool, so a free on
 * the wrong pool and a destroy with live allocations are refused.
 *
 * The alloc/free pair is the hot path (an allocation per step): it trusts the context cucore
 * last made current on the thread (checked again when the driver refuses), records with one
 * exclusive registry lock, and builds messages only on failure.
 */
#include "memory/resource.h"
#include "runtime/current.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *pool_what(const cucore_mem_pool *p, char *buf, size_t n) {
  const char *kind = p->kind == CUCORE_MEM_POOL_PINNED    ? "a pinned host pool"
                     : p->kind == CUCORE_MEM_POOL_MANAGED ? "a managed pool"
                                                          : "a pool";
  if (p->imported)
    snprintf(buf, n, "a pool imported on device %d (CUmemoryPool %p)", p->dev->ordinal,
             (void *)p->handle);
  else if (p->owned)
    snprintf(buf, n, "%s created by cucore_mem_pool_create on device %d (CUmemoryPool %p)", kind,
             p->dev->ordinal, (void *)p->handle);
  else if (p->origin)
    snprintf(buf, n,
             "the current pool of device %d (CUmemoryPool %p, created by "
             "cucore_mem_pool_create)",
             p->dev->ordinal, (void *)p->handle);
  else
    snprintf(buf, n, "the default pool of device %d (CUmemoryPool %p)", p->dev->ordinal,
             (void *)p->handle);
  return buf;
}

/* The pool a record came from, for messages. */
static const char *rec_pool_what(const cc_mem_rec *rec, char *buf, size_t n) {
  if (rec->owner) return pool_what((const cucore_mem_pool *)rec->owner, buf, n);
  if (rec->cupool)
    snprintf(buf, n, "a pool of device %d not created by cucore (CUmemoryPool %p)", rec->ordinal,
             rec->cupool);
  else
    snprintf(buf, n, "the current pool of device %d (cucore_mem_alloc_async)", rec->ordinal);
  return buf;
}

static cucore_status pools_supported(cucore_device *dev, int ipc, const char *fn) {
  int v = 0;
  CUresult r = DRV(cuDeviceGetAttribute)(&v, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED,
                                         dev->cudev);
  if (r == CUDA_SUCCESS && !v)
    return cc_fail(CUCORE_NOT_SUPPORTED,
                   "%s: device %d does not support stream-ordered memory pools "
                   "(CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED is 0)",
                   fn, dev->ordinal);
  if (ipc) {
    int types = 0;
    r = DRV(cuDeviceGetAttribute)(&types, CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES,
                                  dev->cudev);
    if (r == CUDA_SUCCESS && !(types & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR))
      return cc_fail(CUCORE_NOT_SUPPORTED,
                     "%s: device %d's pools cannot be shared through POSIX file descriptors "
                     "(CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES is 0x%x)",
                     fn, dev->ordinal, types);
  }
  return CUCORE_OK;
}

static cucore_status need_pool_api(const char *fn) {
  (void)fn;
  cucore_status st = cc_driver_need_device();
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuMemAllocAsync);
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuMemPoolCreate);
  return st;
}

cucore_status cc_pool_new_handle(cucore_device *dev, CUmemoryPool h, int owned, int imported,
                                 int ipc, cucore_mem_pool **out) {
  cucore_mem_pool *p = cc_calloc(1, sizeof *p, "a memory pool handle");
  if (!p) return CUCORE_HOST_OUT_OF_MEMORY;
  cc_handle_init(p, CC_KIND_MEM_POOL);
  p->handle = h;
  p->dev = dev;
  p->owned = owned;
  p->imported = imported;
  p->ipc = ipc;
  *out = p;
  return CUCORE_OK;
}

static cucore_status set_u64(CUmemoryPool h, CUmemPool_attribute a, uint64_t v, const char *what) {
  cuuint64_t x = v;
  CUresult r = DRV(cuMemPoolSetAttribute)(h, a, &x);
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, "cuMemPoolSetAttribute", "%s = %llu", what, (unsigned long long)v);
  return CUCORE_OK;
}

static cucore_status set_int(CUmemoryPool h, CUmemPool_attribute a, int v, const char *what) {
  CUresult r = DRV(cuMemPoolSetAttribute)(h, a, &v);
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuMemPoolSetAttribute", "%s = %d", what, v);
  return CUCORE_OK;
}

cucore_status cucore_mem_pool_create(cucore_device *dev, const cucore_mem_pool_props *props,
                                     cucore_mem_pool **out) {
  cc_begin();
  const char *fn = "cucore_mem_pool_create";
  CC_CHECK_ARG(out, fn, "out");
  *out = NULL;
  CC_CHECK_HANDLE(dev, DEVICE, fn, "dev");
  cucore_mem_pool_props def = {0};
  const cucore_mem_pool_props *p = props ? props : &def;
  CUmemPoolProps cp;
  cucore_status st = cc_pool_kind_props(dev, p, &cp, fn);
  if (st != CUCORE_OK) return st;
  unsigned reuse_known = CUCORE_POOL_NO_REUSE_FOLLOW_EVENTS | CUCORE_POOL_NO_REUSE_OPPORTUNISTIC |
                         CUCORE_POOL_NO_REUSE_INTERNAL_DEPENDENCIES;
  if (p->reuse_off & ~reuse_known)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: unknown reuse_off bits 0x%x (expected CUCORE_POOL_NO_REUSE_*)", fn,
                   p->reuse_off & ~reuse_known);
  st = cc_check_size(p->max_size, fn, "max_size");
  if (st != CUCORE_OK) return st;
  st = need_pool_api(fn);
  if (st != CUCORE_OK) return st;
  if (p->max_size && cc_drv.version < 12020)
    return cc_fail(cc_status(CUCORE_DRIVER_TOO_OLD, CUCORE_SOURCE_NONE, 0),
                   "%s: max_size (%zu bytes) needs a driver for CUDA 12.2 or newer "
                   "(CUmemPoolProps.maxSize); the loaded driver is version %d.%d",
                   fn, p->max_size, cc_drv.version / 1000, cc_drv.version % 1000 / 10);
  st = cc_mem_enter(dev, NULL, fn);
  if (st == CUCORE_OK) st = pools_supported(dev, p->flags & CUCORE_POOL_IPC, fn);
  if (st != CUCORE_OK) return st;
  CUmemoryPool h = NULL;
  CUresult r = DRV(cuMemPoolCreate)(&h, &cp);
  if (r != CUDA_SUCCESS) {
    char kind[160];
    return cc_fail_cu(r, "cuMemPoolCreate", "device %d%s%s", dev->ordinal,
                      cc_pool_kind_text(p, kind, sizeof kind),
                      (p->flags & CUCORE_POOL_IPC) ? ", POSIX file descriptor handles" : "");
  }
  if (p->release_threshold)
    st = set_u64(h, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, p->release_threshold, "release threshold");
  if (st == CUCORE_OK && (p->reuse_off & CUCORE_POOL_NO_REUSE_FOLLOW_EVENTS))
    st = set_int(h, CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES, 0, "reuse follow events");
  if (st == CUCORE_OK && (p->reuse_off & CUCORE_POOL_NO_REUSE_OPPORTUNISTIC))
    st = set_int(h, CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC, 0, "reuse opportunistic");
  if (st == CUCORE_OK && (p->reuse_off & CUCORE_POOL_NO_REUSE_INTERNAL_DEPENDENCIES))
    st = set_int(h, CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES, 0,
                 "reuse internal dependencies");
  if (st == CUCORE_OK)
    st = cc_pool_new_handle(dev, h, 1, 0, (p->flags & CUCORE_POOL_IPC) != 0, out);
  if (st == CUCORE_OK) st = cc_pool_kind_finish(*out, p);
  if (st != CUCORE_OK && *out) {
    cc_handle_retire(*out, CC_KIND_MEM_POOL);
    *out = NULL;
  }
  if (st != CUCORE_OK) (void)DRV(cuMemPoolDestroy)(h);
  return st;
}

cucore_status cucore_mem_pool_default(cucore_device *dev, cucore_mem_pool **out) {
  cc_begin();
  const char *fn = "cucore_mem_pool_default";
  CC_CHECK_ARG(out, fn, "out");
  *out = NULL;
  CC_CHECK_HANDLE(dev, DEVICE, fn, "dev");
  cucore_status st = need_pool_api(fn);
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuDeviceGetDefaultMemPool);
  if (st == CUCORE_OK) st = cc_mem_enter(dev, NULL, fn);
  if (st == CUCORE_OK) st = pools_supported(dev, 0, fn);
  if (st != CUCORE_OK) return st;
  CUmemoryPool h = NULL;
  CUresult r = DRV(cuDeviceGetDefaultMemPool)(&h, dev->cudev);
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, "cuDeviceGetDefaultMemPool", "device %d", dev->ordinal);
  return cc_pool_new_handle(dev, h, 0, 0, 0, out);
}

/* A pool cucore created that is still its device's current pool (the driver's answer) is not
 * destroyed: cucore_mem_alloc_async would go on allocating from it. */
static cucore_status refuse_current(const cucore_mem_pool *pool) {
  CUmemoryPool h = NULL;
  if (!pool->owned || !DRV(cuDeviceGetMemPool) ||
      DRV(cuDeviceGetMemPool)(&h, pool->dev->cudev) != CUDA_SUCCESS || h != pool->handle)
    return CUCORE_OK;
  char what[160];
  return cc_fail(CUCORE_IN_USE,
                 "cucore_mem_pool_destroy: %s is the current pool of device %d "
                 "(cucore_device_set_mem_pool): make another pool current first "
                 "(cucore_device_set_mem_pool(dev, NULL) restores the default pool)",
                 pool_what(pool, what, sizeof what), pool->dev->ordinal);
}

cucore_status cucore_mem_pool_destroy(cucore_mem_pool *pool) {
  cc_begin();
  if (!pool) return CUCORE_OK;
  CC_CHECK_HANDLE(pool, MEM_POOL, "cucore_mem_pool_destroy", "pool");
  uint64_t live = 0, live_bytes = 0;
  cc_reg_pool_live(&cc_mem_registry, pool, &live, &live_bytes);
  if (live) {
    char what[160], b[32];
    return cc_fail(CUCORE_IN_USE,
                   "cucore_mem_pool_destroy: %s still has %llu live allocation%s (%s): free them "
                   "(cucore_mem_pool_free_async) before destroying the pool",
                   pool_what(pool, what, sizeof what), (unsigned long long)live,
                   live == 1 ? "" : "s", cc_format_bytes((size_t)live_bytes, b, sizeof b));
  }
  cucore_status cst = refuse_current(pool);
  if (cst != CUCORE_OK) return cst;
  cc_pool_current_forget(pool);
  CUresult r = CUDA_SUCCESS;
  if (pool->owned) {
    cucore_status st = cc_device_make_current(pool->dev);
    if (st != CUCORE_OK) {
      cc_handle_retire(pool, CC_KIND_MEM_POOL);
      return st;
    }
    r = DRV(cuMemPoolDestroy)(pool->handle);
  }
  int ordinal = pool->dev->ordinal;
  cc_handle_retire(pool, CC_KIND_MEM_POOL);
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuMemPoolDestroy", "a pool of device %d", ordinal);
  return CUCORE_OK;
}

cucore_status cucore_mem_pool_get_device(const cucore_mem_pool *pool, cucore_device **dev) {
  cc_begin();
  CC_CHECK_HANDLE(pool, MEM_POOL, "cucore_mem_pool_get_device", "pool");
  CC_CHECK_ARG(dev, "cucore_mem_pool_get_device", "dev");
  *dev = pool->dev;
  return CUCORE_OK;
}

cucore_status cucore_mem_pool_get_native(const cucore_mem_pool *pool, void **cupool) {
  cc_begin();
  CC_CHECK_HANDLE(pool, MEM_POOL, "cucore_mem_pool_get_native", "pool");
  CC_CHECK_ARG(cupool, "cucore_mem_pool_get_native", "cupool");
  *cupool = pool->handle;
  return CUCORE_OK;
}

/* ---- allocation and free ----------------------------------------------------------------- */

/* The out-of-memory message: the pool's own reserved/used next to the device's free/total. */
static cucore_status fail_async(CUresult r, const char *call, const char *fn, cucore_device *dev,
                                CUmemoryPool h, size_t bytes) {
  if (!h && DRV(cuDeviceGetMemPool)) (void)DRV(cuDeviceGetMemPool)(&h, dev->cudev);
  char extra[200] = "";
  if (h && DRV(cuMemPoolGetAttribute)) {
    cuuint64_t reserved = 0, used = 0;
    (void)DRV(cuMemPoolGetAttribute)(h, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &reserved);
    (void)DRV(cuMemPoolGetAttribute)(h, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &used);
    char rb[32], ub[32];
    snprintf(extra, sizeof extra, "the pool holds %s reserved, %s of it in use",
             cc_format_bytes((size_t)reserved, rb, sizeof rb),
             cc_format_bytes((size_t)used, ub, sizeof ub));
  }
  return cc_mem_fail_alloc(r, call, fn, dev->ordinal, bytes, extra[0] ? extra : NULL);
}

static cucore_status async_prelude(cucore_stream *s, size_t bytes, cucore_devptr *out,
                                   const char *fn) {
  CC_CHECK_ARG(out, fn, "out");
  *out = 0;
  CC_CHECK_HANDLE(s, STREAM, fn, "stream");
  if (CC_UNLIKELY(bytes == 0))
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: size is 0 (expected > 0 bytes)", fn);
  cucore_status st;
  if (CC_UNLIKELY(bytes >> 63)) return cc_check_size(bytes, fn, "the size");
  if (CC_UNLIKELY(!DRV(cuMemAllocAsync))) {
    st = cc_driver_load();
    if (st != CUCORE_OK) return st;
    return CC_DRV_REQUIRE(cuMemAllocAsync);
  }
  return cc_device_make_current_fast(s->dev);
}

/* Records a stream-ordered allocation: in this thread's front table (inline), else there or in
 * the tree through the general paths; on failure the allocation is given back. */
CC_COLD static cucore_status record_async_slow(const cc_mem_rec *rec, cucore_stream *s,
                                               const char *fn) {
  if (cc_front_insert(rec) || cc_reg_insert(&cc_mem_registry, rec, 1) == CC_REG_OK)
    return CUCORE_OK;
  (void)DRV(cuMemFreeAsync)((CUdeviceptr)rec->base, s->handle);
  return cc_fail(CUCORE_HOST_OUT_OF_MEMORY, "%s: out of host memory recording the allocation", fn);
}

static inline cucore_status record_async(CUdeviceptr p, size_t bytes, cucore_stream *s,
                                         cucore_mem_pool *pool, const char *fn) {
  cucore_device *dev = pool ? pool->dev : s->dev;
  void *cupool = pool ? (void *)pool->handle : NULL;
  void *owner = pool ? cc_pool_rec_owner(pool) : NULL;
  cucore_mem_kind kind = pool ? cc_pool_rec_kind(pool) : CUCORE_MEM_POOL;
  if (CC_LIKELY(cc_front_put(p, bytes, dev->ctx, cupool, owner, kind, dev->ordinal)))
    return CUCORE_OK;
  cc_mem_rec rec = {.base = p,
                    .size = bytes,
                    .kind = kind,
                    .ordinal = dev->ordinal,
                    .ctx = dev->ctx,
                    .cupool = cupool,
                    .owner = owner};
  return record_async_slow(&rec, s, fn);
}

/* An allocation of cucore_mem_alloc_async once cucore_device_set_mem_pool was used: recorded as
 * the current pool's when cucore made it current, else with the driver's current pool. */
CC_COLD static cucore_status record_current(CUdeviceptr p, size_t bytes, cucore_stream *s,
                                            const char *fn) {
  CUmemoryPool h = NULL;
  cucore_mem_pool *cur = cc_pool_current_find(s->dev->cudev, &h);
  if (cur || !h) return record_async(p, bytes, s, cur, fn);
  cc_mem_rec rec = {.base = p,
                    .size = bytes,
                    .kind = CUCORE_MEM_POOL,
                    .ordinal = s->dev->ordinal,
                    .ctx = s->dev->ctx,
                    .cupool = (void *)h};
  return record_async_slow(&rec, s, fn);
}

cucore_status cucore_mem_alloc_async(cucore_stream *s, size_t bytes, cucore_devptr *out) {
  cc_begin();
  const char *fn = "cucore_mem_alloc_async";
  cucore_status st = async_prelude(s, bytes, out, fn);
  if (CC_UNLIKELY(st != CUCORE_OK)) return st;
  cucore_mem_resource *res = cc_mres_of(s->dev);
  if (res) return cc_mres_alloc(res, s->dev, s, bytes, out, fn);
  CUdeviceptr p = 0;
  CUresult r = DRV(cuMemAllocAsync)(&p, bytes, s->handle);
  if (CC_UNLIKELY(r != CUDA_SUCCESS) && cc_mem_context_refusal(r)) {
    st = cc_device_make_current(s->dev);
    if (st != CUCORE_OK) return st;
    r = DRV(cuMemAllocAsync)(&p, bytes, s->handle);
  }
  if (CC_UNLIKELY(r != CUDA_SUCCESS))
    return fail_async(r, "cuMemAllocAsync", fn, s->dev, NULL, bytes);
  if (CC_UNLIKELY(atomic_load_explicit(&cc_pool_current_used, memory_order_relaxed)))
    st = record_current(p, bytes, s, fn);
  else
    st = record_async(p, bytes, s, NULL, fn);
  if (CC_UNLIKELY(st != CUCORE_OK)) return st;
  *out = p;
  return CUCORE_OK;
}

cucore_status cucore_mem_pool_alloc_async(cucore_mem_pool *pool, cucore_stream *s, size_t bytes,
                                          cucore_devptr *out) {
  cc_begin();
  const char *fn = "cucore_mem_pool_alloc_async";
  CC_CHECK_ARG(out, fn, "out");
  *out = 0;
  CC_CHECK_HANDLE(pool, MEM_POOL, fn, "pool");
  if (CC_UNLIKELY(pool->imported)) {
    char what[160];
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: %s cannot allocate: imported pools only hand out the exporter's "
                   "allocations (cucore_mem_pool_import_pointer)",
                   fn, pool_what(pool, what, sizeof what));
  }
  cucore_status st = async_prelude(s, bytes, out, fn);
  if (CC_UNLIKELY(st != CUCORE_OK)) return st;
  CUdeviceptr p = 0;
  CUresult r = DRV(cuMemAllocFromPoolAsync)(&p, bytes, pool->handle, s->handle);
  if (CC_UNLIKELY(r != CUDA_SUCCESS) && cc_mem_context_refusal(r)) {
    st = cc_device_make_current(s->dev);
    if (st != CUCORE_OK) return st;
    r = DRV(cuMemAllocFromPoolAsync)(&p, bytes, pool->handle, s->handle);
  }
  if (CC_UNLIKELY(r != CUDA_SUCCESS))
    return fail_async(r, "cuMemAllocFromPoolAsync", fn, pool->dev, pool->handle, bytes);
  st = record_async(p, bytes, s, pool, fn);
  if (CC_UNLIKELY(st != CUCORE_OK)) return st;
  *out = p;
  return CUCORE_OK;
}

typedef struct pool_free_ctx {
  const cucore_mem_pool *pool; /* NULL: any pool */
  int wrong_pool;
} pool_free_ctx;

/* 1 when a stream-ordered record (its owner, CUmemoryPool and context) came from `p`. */
static inline int from_pool(const cucore_mem_pool *p, const void *owner, const void *cupool,
                            CUcontext ctx) {
  if (owner) return owner == p || owner == p->origin;
  if (cupool) return cupool == (void *)p->handle;
  return !p->owned && !p->imported && ctx == p->dev->ctx; /* the device's default pool */
}

static int accept_pool_free(const cc_mem_rec *rec, void *ctx) {
  pool_free_ctx *c = ctx;
  if (rec->kind == CUCORE_MEM_RESOURCE) return !c->pool; /* given back to its resource */
  if (!cc_mem_kind_is_pooled(rec->kind) && rec->kind != CUCORE_MEM_IPC_IMPORTED) return 0;
  const cucore_mem_pool *p = c->pool;
  if (!p) return 1;
  int same = from_pool(p, rec->owner, rec->cupool, rec->ctx);
  if (!same) c->wrong_pool = 1;
  return same;
}

/* The free of a record that is not this thread's front record, or of the wrong pool: through
 * the registry, which explains any refusal. */
CC_COLD static cucore_status free_async_registry(cucore_mem_pool *pool, cucore_devptr ptr,
                                                 const char *fn, cc_mem_rec *taken) {
  pool_free_ctx c = {pool, 0};
  cc_mem_rec rec;
  cc_reg_result res = cc_reg_take(&cc_mem_registry, ptr, accept_pool_free, &c, 0, &rec);
  *taken = rec;
  if (CC_UNLIKELY(res != CC_REG_OK)) {
    if (res == CC_REG_REJECTED && c.wrong_pool) {
      char a[200], b[160];
      return cc_fail(CUCORE_INVALID_ARGUMENT,
                     "%s: 0x%llx came from %s, not from %s: free it on the pool it came from", fn,
                     (unsigned long long)ptr, rec_pool_what(&rec, a, sizeof a),
                     pool_what(pool, b, sizeof b));
    }
    return cc_mem_explain_take(res, &rec, ptr, fn,
                               "a stream-ordered allocation (cucore_mem_alloc_async, "
                               "cucore_mem_pool_alloc_async, or an IPC import)");
  }
  return CUCORE_OK;
}

CC_COLD static cucore_status free_async_refused(cucore_stream *s, cucore_devptr ptr, CUresult r) {
  if (cc_mem_context_refusal(r)) {
    cucore_status st = cc_device_make_current(s->dev);
    if (st != CUCORE_OK) return st;
    r = DRV(cuMemFreeAsync)((CUdeviceptr)ptr, s->handle);
    if (r == CUDA_SUCCESS) return CUCORE_OK;
  }
  return cc_fail_cu(r, "cuMemFreeAsync", "0x%llx on a stream of device %d", (unsigned long long)ptr,
                    s->dev->ordinal);
}

static inline cucore_status free_async(cucore_mem_pool *pool, cucore_stream *s, cucore_devptr ptr,
                                       const char *fn) {
  CC_CHECK_HANDLE(s, STREAM, fn, "stream");
  /* This thread's own record (inline), else the registry's. */
  uint64_t state;
  cc_front_view v;
  cc_front_entry *e = cc_front_find(ptr, &state, &v);
  if (CC_UNLIKELY(!e || (pool && !from_pool(pool, v.owner, v.cupool, v.ctx)) ||
                  !cc_front_commit(e, state))) {
    cc_mem_rec rec;
    cucore_status st = free_async_registry(pool, ptr, fn, &rec);
    if (st == CUCORE_OK && rec.kind == CUCORE_MEM_RESOURCE) {
      st = cc_device_make_current_fast(s->dev);
      return st == CUCORE_OK ? cc_mres_give_back(&rec, s, fn) : st;
    }
    if (st != CUCORE_OK) return st;
  }
  cucore_status st = cc_device_make_current_fast(s->dev);
  if (CC_UNLIKELY(st != CUCORE_OK)) return st;
  CUresult r = DRV(cuMemFreeAsync)((CUdeviceptr)ptr, s->handle);
  if (CC_LIKELY(r == CUDA_SUCCESS)) return CUCORE_OK;
  return free_async_refused(s, ptr, r);
}

cucore_status cucore_mem_free_async(cucore_stream *s, cucore_devptr ptr) {
  cc_begin();
  if (ptr == 0) return CUCORE_OK;
  const char *fn = "cucore_mem_free_async";
  CC_CHECK_HANDLE(s, STREAM, fn, "stream");
  cucore_status st; /* this thread's own allocation from a memory resource goes back to it */
  if (cc_mres_free_mine(ptr, s->dev, NULL, s, &st, fn)) return st;
  return free_async(NULL, s, ptr, fn);
}

cucore_status cucore_mem_pool_free_async(cucore_mem_pool *pool, cucore_stream *s,
                                         cucore_devptr ptr) {
  cc_begin();
  CC_CHECK_HANDLE(pool, MEM_POOL, "cucore_mem_pool_free_async", "pool");
  if (ptr == 0) return CUCORE_OK;
  return free_async(pool, s, ptr, "cucore_mem_pool_free_async");
}

/* ---- attributes, statistics, trimming, access -------------------------------------------- */

static int attr_is_int(cucore_pool_attr a) {
  return a == CUCORE_POOL_REUSE_FOLLOW_EVENT_DEPENDENCIES ||
         a == CUCORE_POOL_REUSE_ALLOW_OPPORTUNISTIC ||
         a == CUCORE_POOL_REUSE_ALLOW_INTERNAL_DEPENDENCIES;
}

static cucore_status check_attr(cucore_pool_attr a, const char *fn) {
  if ((int)a < CUCORE_POOL_REUSE_FOLLOW_EVENT_DEPENDENCIES || (int)a > CUCORE_POOL_USED_HIGH)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: attribute %d is not a cucore_pool_attr (1..8)", fn,
                   (int)a);
  return CUCORE_OK;
}

cucore_status cucore_mem_pool_get_attr(cucore_mem_pool *pool, cucore_pool_attr attr,
                                       uint64_t *value) {
  cc_begin();
  const char *fn = "cucore_mem_pool_get_attr";
  CC_CHECK_HANDLE(pool, MEM_POOL, fn, "pool");
  CC_CHECK_ARG(value, fn, "value");
  *value = 0;
  cucore_status st = check_attr(attr, fn);
  if (st != CUCORE_OK) return st;
  CUresult r;
  if (attr_is_int(attr)) {
    int v = 0;
    r = DRV(cuMemPoolGetAttribute)(pool->handle, (CUmemPool_attribute)attr, &v);
    *value = v != 0;
  } else {
    cuuint64_t v = 0;
    r = DRV(cuMemPoolGetAttribute)(pool->handle, (CUmemPool_attribute)attr, &v);
    *value = v;
  }
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuMemPoolGetAttribute", "attribute %d", (int)attr);
  return CUCORE_OK;
}

cucore_status cucore_mem_pool_set_attr(cucore_mem_pool *pool, cucore_pool_attr attr,
                                       uint64_t value) {
  cc_begin();
  const char *fn = "cucore_mem_pool_set_attr";
  CC_CHECK_HANDLE(pool, MEM_POOL, fn, "pool");
  cucore_status st = check_attr(attr, fn);
  if (st != CUCORE_OK) return st;
  if (attr == CUCORE_POOL_RESERVED_CURRENT || attr == CUCORE_POOL_USED_CURRENT)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: attribute %d (a current counter) is read-only", fn,
                   (int)attr);
  if ((attr == CUCORE_POOL_RESERVED_HIGH || attr == CUCORE_POOL_USED_HIGH) && value != 0)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: a high-water mark can only be reset (set to 0), not set to %llu", fn,
                   (unsigned long long)value);
  if (attr_is_int(attr) && value > 1)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: a reuse policy is 0 or 1, not %llu", fn,
                   (unsigned long long)value);
  if (attr_is_int(attr))
    return set_int(pool->handle, (CUmemPool_attribute)attr, (int)value, "reuse policy");
  return set_u64(pool->handle, (CUmemPool_attribute)attr, value, "pool attribute");
}

cucore_status cucore_mem_pool_get_stats(cucore_mem_pool *pool, cucore_mem_pool_stats *out) {
  cc_begin();
  const char *fn = "cucore_mem_pool_get_stats";
  CC_CHECK_HANDLE(pool, MEM_POOL, fn, "pool");
  CC_CHECK_ARG(out, fn, "out");
  memset(out, 0, sizeof *out);
  struct {
    CUmemPool_attribute a;
    uint64_t *dst;
  } rows[] = {{CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &out->reserved_current},
              {CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, &out->reserved_high},
              {CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &out->used_current},
              {CU_MEMPOOL_ATTR_USED_MEM_HIGH, &out->used_high},
              {CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &out->release_threshold}};
  for (size_t i = 0; i < CC_ARRAY_LEN(rows); i++) {
    cuuint64_t v = 0;
    CUresult r = DRV(cuMemPoolGetAttribute)(pool->handle, rows[i].a, &v);
    if (r != CUDA_SUCCESS)
      return cc_fail_cu(r, "cuMemPoolGetAttribute", "attribute %d", (int)rows[i].a);
    *rows[i].dst = v;
  }
  uint64_t live = 0, live_bytes = 0;
  cc_reg_pool_live(&cc_mem_registry, pool, &live, &live_bytes);
  out->live_allocations = live;
  out->live_bytes = live_bytes;
  return CUCORE_OK;
}

cucore_status cucore_mem_pool_reset_high_water(cucore_mem_pool *pool) {
  cc_begin();
  CC_CHECK_HANDLE(pool, MEM_POOL, "cucore_mem_pool_reset_high_water", "pool");
  cucore_status st = set_u64(pool->handle, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, 0, "reserved high");
  if (st == CUCORE_OK) st = set_u64(pool->handle, CU_MEMPOOL_ATTR_USED_MEM_HIGH, 0, "used high");
  return st;
}

cucore_status cucore_mem_pool_trim(cucore_mem_pool *pool, size_t keep_bytes) {
  cc_begin();
  CC_CHECK_HANDLE(pool, MEM_POOL, "cucore_mem_pool_trim", "pool");
  cucore_status st = cc_check_size(keep_bytes, "cucore_mem_pool_trim", "keep_bytes");
  if (st != CUCORE_OK) return st;
  CUresult r = DRV(cuMemPoolTrimTo)(pool->handle, keep_bytes);
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuMemPoolTrimTo", "keep %zu bytes", keep_bytes);
  return CUCORE_OK;
}

cucore_status cucore_mem_pool_set_access(cucore_mem_pool *pool, cucore_device *peer,
                                         cucore_access access) {
  cc_begin();
  const char *fn = "cucore_mem_pool_set_access";
  CC_CHECK_HANDLE(pool, MEM_POOL, fn, "pool");
  CC_CHECK_HANDLE(peer, DEVICE, fn, "peer");
  if (access != CUCORE_ACCESS_NONE && access != CUCORE_ACCESS_READ &&
      access != CUCORE_ACCESS_READWRITE)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: access %d is not CUCORE_ACCESS_NONE (0), READ (1) or READWRITE (3)", fn,
                   (int)access);
  if (peer->cudev == pool->dev->cudev) {
    if (access == CUCORE_ACCESS_READWRITE) return CUCORE_OK;
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: device %d owns the pool and always has read-write access to it", fn,
                   peer->ordinal);
  }
  int can = 0;
  CUresult r = CUDA_SUCCESS;
  if (pool->kind == CUCORE_MEM_POOL_PINNED) /* host memory: no peer link needed */
    can = 1;
  else
    r = DRV(cuDeviceCanAccessPeer)(&can, peer->cudev, pool->dev->cudev);
  if (r == CUDA_SUCCESS && !can && access != CUCORE_ACCESS_NONE)
    return cc_fail(CUCORE_NOT_SUPPORTED,
                   "%s: device %d cannot access device %d's memory (cuDeviceCanAccessPeer is 0)",
                   fn, peer->ordinal, pool->dev->ordinal);
  CUmemAccessDesc d;
  memset(&d, 0, sizeof d);
  d.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  d.location.id = (int)peer->cudev;
  d.flags = (CUmemAccess_flags)access;
  r = DRV(cuMemPoolSetAccess)(pool->handle, &d, 1);
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, "cuMemPoolSetAccess", "device %d to a pool of device %d", peer->ordinal,
                      pool->dev->ordinal);
  return CUCORE_OK;
}

cucore_status cucore_mem_pool_get_access(cucore_mem_pool *pool, cucore_device *dev,
                                         cucore_access *access) {
  cc_begin();
  const char *fn = "cucore_mem_pool_get_access";
  CC_CHECK_HANDLE(pool, MEM_POOL, fn, "pool");
  CC_CHECK_HANDLE(dev, DEVICE, fn, "dev");
  CC_CHECK_ARG(access, fn, "access");
  CUmemLocation loc;
  memset(&loc, 0, sizeof loc);
  loc.type = CU_MEM_LOCATION_TYPE_DEVICE;
  loc.id = (int)dev->cudev;
  CUmemAccess_flags f = CU_MEM_ACCESS_FLAGS_PROT_NONE;
  CUresult r = DRV(cuMemPoolGetAccess)(&f, pool->handle, &loc);
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuMemPoolGetAccess", "device %d", dev->ordinal);
  *access = (cucore_access)f;
  return CUCORE_OK;
}
