/*
 * device_pool.c -- the device's current pool (cuDeviceSetMemPool / cuDeviceGetMemPool): the pool
 * cucore_mem_alloc_async allocates from. Setting one through cucore remembers its handle
 * (pool_current.c), so those allocations are recorded as the pool's; a handle on the current
 * pool never owns the driver's pool, and one on a pool cucore created counts its allocations
 * for that pool's own handle. Also the kind a pool hands out.
 */
#include "memory/memory.h"

/* Why `pool` cannot be `dev`'s current pool; CUCORE_OK when it can. */
static cucore_status check_settable(const cucore_device *dev, const cucore_mem_pool *pool,
                                    const char *fn) {
  if (pool->dev->cudev != dev->cudev)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: the pool belongs to device %d, not to device %d: a device's current pool "
                   "must be its own (allocate from another device's pool with "
                   "cucore_mem_pool_alloc_async)",
                   fn, pool->dev->ordinal, dev->ordinal);
  if (pool->imported)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: the pool is imported from another process (cucore_mem_pool_import_fd); "
                   "imported pools cannot allocate, so cannot be a device's current pool",
                   fn);
  if (pool->kind)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: the pool hands out %s memory: a device's current pool serves "
                   "cucore_mem_alloc_async, which hands out device memory; allocate from it with "
                   "cucore_mem_pool_alloc_async",
                   fn, cucore_mem_kind_name(pool->kind));
  return CUCORE_OK;
}

cucore_status cucore_device_set_mem_pool(cucore_device *dev, cucore_mem_pool *pool) {
  cc_begin();
  const char *fn = "cucore_device_set_mem_pool";
  CC_CHECK_HANDLE(dev, DEVICE, fn, "dev");
  if (pool) CC_CHECK_HANDLE(pool, MEM_POOL, fn, "pool");
  cucore_status st = pool ? check_settable(dev, pool, fn) : CUCORE_OK;
  if (st == CUCORE_OK) st = cc_driver_need_device();
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuDeviceSetMemPool);
  if (st == CUCORE_OK && !pool) st = CC_DRV_REQUIRE(cuDeviceGetDefaultMemPool);
  if (st == CUCORE_OK) st = cc_mem_enter(dev, NULL, fn);
  if (st != CUCORE_OK) return st;
  CUmemoryPool h = pool ? pool->handle : NULL;
  CUresult r = CUDA_SUCCESS;
  if (!pool) r = DRV(cuDeviceGetDefaultMemPool)(&h, dev->cudev);
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, "cuDeviceGetDefaultMemPool", "device %d", dev->ordinal);
  r = DRV(cuDeviceSetMemPool)(dev->cudev, h);
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, "cuDeviceSetMemPool", "device %d, CUmemoryPool %p", dev->ordinal,
                      (void *)h);
  return cc_pool_current_remember(dev->cudev, pool);
}

cucore_status cucore_device_get_mem_pool(cucore_device *dev, cucore_mem_pool **out) {
  cc_begin();
  const char *fn = "cucore_device_get_mem_pool";
  CC_CHECK_ARG(out, fn, "out");
  *out = NULL;
  CC_CHECK_HANDLE(dev, DEVICE, fn, "dev");
  cucore_status st = cc_driver_need_device();
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuDeviceGetMemPool);
  if (st == CUCORE_OK) st = cc_mem_enter(dev, NULL, fn);
  if (st != CUCORE_OK) return st;
  CUmemoryPool h = NULL;
  cucore_mem_pool *known = cc_pool_current_find(dev->cudev, &h);
  if (!h) {
    CUresult r = DRV(cuDeviceGetMemPool)(&h, dev->cudev);
    if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuDeviceGetMemPool", "device %d", dev->ordinal);
  }
  st = cc_pool_new_handle(dev, h, 0, 0, 0, out);
  if (st == CUCORE_OK && known) {
    (*out)->kind = known->kind;
    (*out)->origin = known->owned ? known : known->origin;
  }
  return st;
}

cucore_status cucore_mem_pool_get_kind(const cucore_mem_pool *pool, cucore_mem_kind *kind) {
  cc_begin();
  CC_CHECK_HANDLE(pool, MEM_POOL, "cucore_mem_pool_get_kind", "pool");
  CC_CHECK_ARG(kind, "cucore_mem_pool_get_kind", "kind");
  *kind = pool->imported ? CUCORE_MEM_IPC_IMPORTED : cc_pool_rec_kind(pool);
  return CUCORE_OK;
}
