/* mres_user_pool.h -- an RMM-like pool resource written as a program writes one, for the memory
 * resource tests (test_mem_resource.c, gpu_mem_resource.c) and bench/mem_resource.c: one slab
 * from the driver (cuMemAlloc), carved first-fit in 256-byte units under a mutex, neighbours
 * merged on free. Stream-unaware (memory freed on one stream is reused at once): the users
 * synchronise. Counts its calls and remembers the last deallocation, and can be told to fail
 * or to hand out misaligned addresses. */
#ifndef CUCORE_TESTS_MRES_USER_POOL_H
#define CUCORE_TESTS_MRES_USER_POOL_H

#include <cucore.h>
#include <pthread.h>
#include <string.h>

#include "runtime/runtime.h" /* DRV(): the slab comes from the driver, as RMM's from cudaMalloc */

#define UP_MAX_BLOCKS 4096
#define UP_ALIGN 256

typedef struct up_block {
  uint64_t off, size;
  int used;
} up_block;

typedef struct user_pool {
  pthread_mutex_t lock;
  CUdeviceptr slab, raw; /* slab: raw rounded up to UP_ALIGN (a fake driver's need not be) */
  uint64_t slab_size;
  up_block b[UP_MAX_BLOCKS]; /* in address order, covering the slab */
  int n;
  long allocs, deallocs;
  size_t last_bytes, last_alignment;
  cucore_stream *last_stream;
  int fail;          /* 1: allocate returns CUCORE_DEVICE_OUT_OF_MEMORY; 2: CUCORE_OK and 0 */
  uint64_t misalign; /* added to each address handed out */
  int destroyed;
} user_pool;

/* A pool over `bytes` of device memory of the current context; 0 when the driver refused. */
static inline int up_init(user_pool *p, uint64_t bytes) {
  memset(p, 0, sizeof *p);
  pthread_mutex_init(&p->lock, NULL);
  if (DRV(cuMemAlloc)(&p->raw, bytes + UP_ALIGN) != CUDA_SUCCESS) return 0;
  p->slab = (p->raw + UP_ALIGN - 1) / UP_ALIGN * UP_ALIGN;
  p->slab_size = bytes;
  p->b[0] = (up_block){0, bytes, 0};
  p->n = 1;
  return 1;
}

static inline void up_fini(user_pool *p) {
  if (p->raw) (void)DRV(cuMemFree)(p->raw);
  p->slab = p->raw = 0;
  pthread_mutex_destroy(&p->lock);
}

static inline cucore_status up_allocate(void *user, size_t bytes, size_t alignment,
                                        cucore_stream *s, cucore_devptr *out) {
  (void)s;
  user_pool *p = user;
  if (p->fail == 1) return CUCORE_DEVICE_OUT_OF_MEMORY;
  if (p->fail == 2) return CUCORE_OK;
  uint64_t need = (bytes + UP_ALIGN - 1) / UP_ALIGN * UP_ALIGN;
  if (alignment > UP_ALIGN) return CUCORE_INVALID_ARGUMENT;
  pthread_mutex_lock(&p->lock);
  int i = 0;
  while (i < p->n && (p->b[i].used || p->b[i].size < need)) i++;
  if (i == p->n || (p->b[i].size > need && p->n == UP_MAX_BLOCKS)) {
    pthread_mutex_unlock(&p->lock);
    return CUCORE_DEVICE_OUT_OF_MEMORY;
  }
  if (p->b[i].size > need) { /* split: the rest stays free after it */
    memmove(&p->b[i + 2], &p->b[i + 1], sizeof(up_block) * (size_t)(p->n - i - 1));
    p->b[i + 1] = (up_block){p->b[i].off + need, p->b[i].size - need, 0};
    p->b[i].size = need;
    p->n++;
  }
  p->b[i].used = 1;
  p->allocs++;
  *out = p->slab + p->b[i].off + p->misalign;
  pthread_mutex_unlock(&p->lock);
  return CUCORE_OK;
}

static inline void up_merge(user_pool *p, int i) { /* b[i] and b[i + 1] are free */
  p->b[i].size += p->b[i + 1].size;
  memmove(&p->b[i + 1], &p->b[i + 2], sizeof(up_block) * (size_t)(p->n - i - 2));
  p->n--;
}

static inline cucore_status up_deallocate(void *user, cucore_devptr ptr, size_t bytes,
                                          size_t alignment, cucore_stream *s) {
  user_pool *p = user;
  pthread_mutex_lock(&p->lock);
  uint64_t off = ptr - p->misalign - p->slab;
  int i = 0;
  while (i < p->n && p->b[i].off != off) i++;
  if (i == p->n || !p->b[i].used) {
    pthread_mutex_unlock(&p->lock);
    return CUCORE_INVALID_ARGUMENT;
  }
  p->b[i].used = 0;
  if (i + 1 < p->n && !p->b[i + 1].used) up_merge(p, i);
  if (i > 0 && !p->b[i - 1].used) up_merge(p, i - 1);
  p->deallocs++;
  p->last_bytes = bytes;
  p->last_alignment = alignment;
  p->last_stream = s;
  pthread_mutex_unlock(&p->lock);
  return CUCORE_OK;
}

static inline void up_destroy(void *user) { ((user_pool *)user)->destroyed++; }

static const cucore_mem_resource_ops up_ops = {up_allocate, up_deallocate, up_destroy};

#endif
