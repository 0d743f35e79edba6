/*
 * host_pool.c -- the pinned host pool's API: the core (host_pool_core.c) over cuMemHostAlloc /
 * cuMemFreeHost in the pool's device context. Each pinned block is recorded once, when it is
 * pinned (kind CUCORE_MEM_PINNED_POOL, owner the pool, CC_REC_LIVE): the record is seen only
 * while the block is handed out, with the size asked for, so copies are bounds-checked against
 * that size, and a free of a block that is not handed out, or on another pool, is refused. A
 * free of a block this thread handed out needs no lookup (cc_hpool_free_recent); any other goes
 * through the record.
 */
#include "memory/host_pool_core.h"

#include <stdio.h>
#include <stdlib.h>

struct cucore_host_pool {
  cc_handle hdr; /* first: the magic word of base/handle.h */
  cc_hpool core;
  cucore_device *dev;
};

/* The allocator: pinned, portable to every context, mapped for kernels. It runs only on a
 * cache miss, so it pushes the pool's context instead of trusting the caller's. */
static void unpin(cucore_host_pool *hp, void *ptr) {
  CUcontext old = NULL;
  int pushed = DRV(cuCtxPushCurrent)(hp->dev->ctx) == CUDA_SUCCESS;
  (void)DRV(cuMemFreeHost)(ptr);
  if (pushed) (void)DRV(cuCtxPopCurrent)(&old);
}

static int drv_alloc(void *ctx, size_t bytes, cc_hpool_block *b) {
  cucore_host_pool *hp = ctx;
  /* A cache miss pins memory: refused while a capture forbids it (the message is set). */
  if (cc_mem_capture_check(hp->dev, NULL, 0, "cucore_host_pool_alloc") != CUCORE_OK)
    return (int)CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  CUcontext old = NULL;
  CUresult r = DRV(cuCtxPushCurrent)(hp->dev->ctx);
  if (r != CUDA_SUCCESS) return (int)r;
  r = DRV(cuMemHostAlloc)(&b->base, bytes, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP);
  (void)DRV(cuCtxPopCurrent)(&old);
  if (r != CUDA_SUCCESS) return (int)r;
  cc_mem_rec rec = {.base = (uint64_t)(uintptr_t)b->base,
                    .size = bytes,
                    .kind = CUCORE_MEM_PINNED_POOL,
                    .ordinal = -1,
                    .ctx = hp->dev->ctx,
                    .owner = hp,
                    .aux = (uint64_t)(uintptr_t)b,
                    .flags = CC_REC_LIVE};
  if (cc_reg_insert(&cc_mem_registry, &rec, 1) != CC_REG_OK) {
    unpin(hp, b->base);
    b->base = NULL;
    return CC_HPOOL_NO_MEMORY;
  }
  return 0;
}

static void drv_release(void *ctx, cc_hpool_block *b) {
  cucore_host_pool *hp = ctx;
  (void)cc_reg_remove(&cc_mem_registry, (uint64_t)(uintptr_t)b->base);
  unpin(hp, b->base);
}

cucore_status cucore_host_pool_create(cucore_device *dev, const cucore_host_pool_props *props,
                                      cucore_host_pool **out) {
  cc_begin();
  const char *fn = "cucore_host_pool_create";
  CC_CHECK_ARG(out, fn, "out");
  *out = NULL;
  CC_CHECK_HANDLE(dev, DEVICE, fn, "dev");
  cucore_host_pool_props def = {0};
  const cucore_host_pool_props *p = props ? props : &def;
  cucore_status st = cc_check_size(p->max_cached_bytes, fn, "max_cached_bytes");
  if (st == CUCORE_OK) st = cc_check_size(p->max_total_bytes, fn, "max_total_bytes");
  if (st != CUCORE_OK) return st;
  cucore_host_pool *hp = cc_calloc(1, sizeof *hp, "a pinned pool");
  if (!hp) return CUCORE_HOST_OUT_OF_MEMORY;
  cc_handle_init(hp, CC_KIND_HOST_POOL);
  hp->dev = dev;
  cc_hpool_allocator ops = {drv_alloc, drv_release, hp};
  cc_hpool_init(&hp->core, &ops, p->max_cached_bytes, p->max_total_bytes);
  *out = hp;
  return CUCORE_OK;
}

cucore_status cucore_host_pool_destroy(cucore_host_pool *pool) {
  cc_begin();
  if (!pool) return CUCORE_OK;
  CC_CHECK_HANDLE(pool, HOST_POOL, "cucore_host_pool_destroy", "pool");
  cucore_status cst = cc_mem_capture_check(pool->dev, NULL, 0, "cucore_host_pool_destroy");
  if (cst != CUCORE_OK) return cst;
  cucore_host_pool_stats s;
  cc_hpool_stats(&pool->core, &s);
  if (s.in_use_blocks) {
    char b[32];
    return cc_fail(CUCORE_IN_USE,
                   "cucore_host_pool_destroy: %llu block%s (%s) of the pool %s still allocated; "
                   "free them (cucore_host_pool_free) first",
                   (unsigned long long)s.in_use_blocks, s.in_use_blocks == 1 ? "" : "s",
                   cc_format_bytes((size_t)s.in_use_bytes, b, sizeof b),
                   s.in_use_blocks == 1 ? "is" : "are");
  }
  cc_hpool_fini(&pool->core);
  cc_handle_retire(pool, CC_KIND_HOST_POOL);
  return CUCORE_OK;
}

/* Why cc_hpool_get refused: the limit, bookkeeping memory, or the driver. */
static cucore_status alloc_failed(cucore_host_pool *pool, int err, size_t bytes, size_t cb,
                                  const char *fn) {
  cucore_host_pool_stats s;
  cc_hpool_stats(&pool->core, &s);
  char want[32], cap[32], used[32], lim[32], left[32];
  cc_format_bytes(bytes, want, sizeof want);
  cc_format_bytes(cb, cap, sizeof cap);
  cc_format_bytes((size_t)s.in_use_capacity, used, sizeof used);
  if (err == CC_HPOOL_LIMIT)
    return cc_fail(CUCORE_HOST_OUT_OF_MEMORY,
                   "%s: asked for %s (%zu bytes, a %s block); the pool has %s in use and "
                   "its max_total_bytes is %s, so %s more fit",
                   fn, want, bytes, cap, used,
                   cc_format_bytes(pool->core.max_total, lim, sizeof lim),
                   cc_format_bytes(pool->core.max_total > s.in_use_capacity
                                       ? pool->core.max_total - (size_t)s.in_use_capacity
                                       : 0,
                                   left, sizeof left));
  if (err == CC_HPOOL_NO_MEMORY)
    return cc_fail(CUCORE_HOST_OUT_OF_MEMORY, "%s: out of host memory recording a %s block", fn,
                   cap);
  size_t av = cc_host_mem_available();
  char avail[32];
  cc_format_bytes(av, avail, sizeof avail);
  if (err == CUDA_ERROR_OUT_OF_MEMORY) /* pinned memory is host memory */
    return cc_fail(cc_status(CUCORE_HOST_OUT_OF_MEMORY, CUCORE_SOURCE_DRIVER, err),
                   "%s: cuMemHostAlloc failed: CUDA_ERROR_OUT_OF_MEMORY: asked for %s (%zu "
                   "bytes, a %s block) of pinned host memory; the host has %s (%zu bytes) "
                   "available (MemAvailable); the pool has %s in use and gave its cache back "
                   "first",
                   fn, want, bytes, cap, avail, av, used);
  return cc_fail_cu((CUresult)err, "cuMemHostAlloc",
                    "%s asked for %s (%zu bytes, a %s block) of pinned host memory; the host "
                    "has %s available; the pool has %s in use",
                    fn, want, bytes, cap, avail, used);
}

CC_COLD static cucore_status host_pool_alloc_slow(cucore_host_pool *pool, size_t bytes, void **out);

cucore_status cucore_host_pool_alloc(cucore_host_pool *pool, size_t bytes, void **out) {
  cc_begin();
  /* After warm-up: a block from this thread's cache, inline. */
  if (CC_LIKELY(cc_handle_live(pool, CC_KIND_HOST_POOL) && out)) {
    cc_hpool_block *hit = cc_hpool_get_cached(&pool->core, bytes);
    if (CC_LIKELY(hit != NULL)) {
      *out = hit->base;
      return CUCORE_OK;
    }
  }
  return host_pool_alloc_slow(pool, bytes, out);
}

CC_COLD static cucore_status host_pool_alloc_slow(cucore_host_pool *pool, size_t bytes,
                                                  void **out) {
  const char *fn = "cucore_host_pool_alloc";
  CC_CHECK_ARG(out, fn, "out");
  *out = NULL;
  CC_CHECK_HANDLE(pool, HOST_POOL, fn, "pool");
  cc_hpool_block *b = NULL;
  int err = cc_hpool_get(&pool->core, bytes, &b, out); /* the size is checked there first */
  if (CC_LIKELY(!err)) return CUCORE_OK;
  cucore_status st = cc_mem_check_alloc_size(bytes, fn);
  if (st != CUCORE_OK) return st;
  size_t cb = 0;
  if (err == CC_HPOOL_BAD_SIZE || cc_hpool_class_of(bytes, &cb) < 0)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: %zu bytes is above the largest size class (1 TiB)",
                   fn, bytes);
  return alloc_failed(pool, err, bytes, cb, fn);
}

typedef struct host_free_ctx {
  const cucore_host_pool *pool;
  int wrong_pool;
} host_free_ctx;

static int accept_block(const cc_mem_rec *rec, void *ctx) {
  host_free_ctx *c = ctx;
  if (rec->kind != CUCORE_MEM_PINNED_POOL) return 0;
  if (rec->owner != c->pool) {
    c->wrong_pool = 1;
    return 0;
  }
  return 1;
}

CC_COLD static cucore_status host_pool_free_slow(cucore_host_pool *pool, void *ptr);

cucore_status cucore_host_pool_free(cucore_host_pool *pool, void *ptr) {
  cc_begin();
  /* A block this thread handed out: freed inline (cc_hpool_free_recent). */
  if (CC_LIKELY(cc_handle_live(pool, CC_KIND_HOST_POOL) && ptr &&
                cc_hpool_free_recent(&pool->core, ptr)))
    return CUCORE_OK;
  return host_pool_free_slow(pool, ptr);
}

CC_COLD static cucore_status host_pool_free_slow(cucore_host_pool *pool, void *ptr) {
  const char *fn = "cucore_host_pool_free";
  if (!ptr) return CUCORE_OK;
  CC_CHECK_HANDLE(pool, HOST_POOL, fn, "pool");
  uint64_t a = (uint64_t)(uintptr_t)ptr;
  host_free_ctx c = {pool, 0};
  cc_mem_rec rec;
  cc_reg_result res = cc_reg_take(&cc_mem_registry, a, accept_block, &c, 0, &rec);
  if (CC_UNLIKELY(res != CC_REG_OK)) {
    if (res == CC_REG_REJECTED && c.wrong_pool)
      return cc_fail(CUCORE_INVALID_ARGUMENT,
                     "%s: %p is a block of another pinned pool (%p), not of %p: free it on the "
                     "pool it came from",
                     fn, ptr, rec.owner, (void *)pool);
    return cc_mem_explain_take(res, &rec, a, fn, "a block of this pinned pool");
  }
  cc_hpool_put(&pool->core, (cc_hpool_block *)(uintptr_t)rec.aux); /* the record freed it */
  return CUCORE_OK;
}

void cc_hpool_give_back(const cc_mem_rec *rec) {
  cucore_host_pool *pool = rec->owner;
  cc_hpool_put(&pool->core, (cc_hpool_block *)(uintptr_t)rec->aux);
}

cucore_status cucore_host_pool_trim(cucore_host_pool *pool, size_t keep_bytes) {
  cc_begin();
  CC_CHECK_HANDLE(pool, HOST_POOL, "cucore_host_pool_trim", "pool");
  cucore_status st = cc_check_size(keep_bytes, "cucore_host_pool_trim", "keep_bytes");
  if (st == CUCORE_OK) st = cc_mem_capture_check(pool->dev, NULL, 0, "cucore_host_pool_trim");
  if (st != CUCORE_OK) return st;
  cc_hpool_trim(&pool->core, keep_bytes);
  return CUCORE_OK;
}

cucore_status cucore_host_pool_get_stats(cucore_host_pool *pool, cucore_host_pool_stats *out) {
  cc_begin();
  CC_CHECK_HANDLE(pool, HOST_POOL, "cucore_host_pool_get_stats", "pool");
  CC_CHECK_ARG(out, "cucore_host_pool_get_stats", "out");
  cc_hpool_stats(&pool->core, out);
  return CUCORE_OK;
}

cucore_status cucore_host_pool_reset_high_water(cucore_host_pool *pool) {
  cc_begin();
  CC_CHECK_HANDLE(pool, HOST_POOL, "cucore_host_pool_reset_high_water", "pool");
  cc_hpool_reset_high(&pool->core);
  return CUCORE_OK;
}

cucore_status cucore_host_pool_get_class_size(size_t bytes, size_t *class_bytes) {
  cc_begin();
  CC_CHECK_ARG(class_bytes, "cucore_host_pool_get_class_size", "class_bytes");
  *class_bytes = 0;
  if (cc_hpool_class_of(bytes, class_bytes) < 0)
    return cc_fail(
        CUCORE_INVALID_ARGUMENT,
        "cucore_host_pool_get_class_size: %zu bytes has no size class (expected 1 byte to "
        "1 TiB)",
        bytes);
  return CUCORE_OK;
}
