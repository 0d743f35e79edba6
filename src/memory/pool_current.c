/*
 * pool_current.c -- which cucore pool handle each device's current pool is, as
 * cucore_device_set_mem_pool made it (device_pool.c), so that cucore_mem_alloc_async records its
 * allocations as that pool's and cucore_mem_pool_destroy can refuse a pool still current. A
 * small table by CUdevice under a mutex; until the first set, the hot path reads only
 * cc_pool_current_used. The driver stays the authority: a lookup asks it for the device's
 * current pool, so a pool made current behind cucore's back is never taken for the remembered
 * one.
 */
#include "memory/memory.h"

#include <pthread.h>

atomic_int cc_pool_current_used;

typedef struct cur_entry {
  CUdevice cudev;
  cucore_mem_pool *pool;
} cur_entry;

static pthread_mutex_t cur_lock = PTHREAD_MUTEX_INITIALIZER;
static cur_entry *cur;
static size_t cur_n, cur_cap;

/* The entry of `cudev` (the lock held); NULL when none. */
static cur_entry *entry_of(CUdevice cudev) {
  for (size_t i = 0; i < cur_n; i++)
    if (cur[i].cudev == cudev) return &cur[i];
  return NULL;
}

cucore_status cc_pool_current_remember(CUdevice cudev, cucore_mem_pool *pool) {
  cucore_status st = CUCORE_OK;
  pthread_mutex_lock(&cur_lock);
  cur_entry *e = entry_of(cudev);
  if (!e && pool) {
    cur_entry *n = cc_grow(cur, &cur_cap, cur_n + 1, sizeof *n, "the table of current pools");
    if (n) {
      cur = n;
      e = &cur[cur_n++];
    } else {
      st = CUCORE_HOST_OUT_OF_MEMORY;
    }
  }
  if (e) {
    e->cudev = cudev;
    e->pool = pool;
  }
  pthread_mutex_unlock(&cur_lock);
  atomic_store_explicit(&cc_pool_current_used, 1, memory_order_relaxed);
  return st;
}

cucore_mem_pool *cc_pool_current_find(CUdevice cudev, CUmemoryPool *cupool) {
  *cupool = NULL;
  if (!DRV(cuDeviceGetMemPool) || DRV(cuDeviceGetMemPool)(cupool, cudev) != CUDA_SUCCESS) {
    *cupool = NULL;
    return NULL;
  }
  pthread_mutex_lock(&cur_lock);
  cur_entry *e = entry_of(cudev);
  cucore_mem_pool *p = e && e->pool && e->pool->handle == *cupool ? e->pool : NULL;
  pthread_mutex_unlock(&cur_lock);
  return p;
}

void cc_pool_current_forget(const cucore_mem_pool *pool) {
  if (!atomic_load_explicit(&cc_pool_current_used, memory_order_relaxed)) return;
  pthread_mutex_lock(&cur_lock);
  for (size_t i = 0; i < cur_n; i++)
    if (cur[i].pool == pool) cur[i].pool = NULL;
  pthread_mutex_unlock(&cur_lock);
}
