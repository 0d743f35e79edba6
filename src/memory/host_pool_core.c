/*
 * host_pool_core.c -- the pinned pool's size classes, free lists and counters, over any
 * allocator (the driver's cuMemHostAlloc in host_pool.c; malloc in the CPU tests).
 *
 * Classes: 4 KiB, then four per power of two (1.25, 1.5, 1.75 and 2 times it), up to 1 TiB; a
 * request gets the smallest class that holds it, so at most 25 % is wasted. A free block keeps
 * the link to the next free block of its class in its own first bytes, so a free costs no
 * allocation. One mutex per pool; the allocator never runs under it.
 */
#include "memory/memory.h"

#include <string.h>

size_t cc_hpool_class_bytes(int index) {
  if (index <= 0) return (size_t)1 << CC_HPOOL_MIN_SHIFT;
  int k = CC_HPOOL_MIN_SHIFT + (index - 1) / 4, step = (index - 1) % 4;
  return ((size_t)1 << k) + (size_t)(step + 1) * ((size_t)1 << (k - 2));
}

int cc_hpool_class_of(size_t bytes, size_t *class_bytes) {
  if (bytes == 0 || bytes > ((size_t)1 << CC_HPOOL_MAX_SHIFT)) return -1;
  int index = 0;
  if (bytes > ((size_t)1 << CC_HPOOL_MIN_SHIFT)) {
    /* bytes - 1 lies in [2^k, 2^(k+1)); its next two bits pick the quarter. */
    uint64_t b = bytes - 1;
    int k = 63 - __builtin_clzll(b);
    int step = (int)((b >> (k - 2)) & 3);
    index = 1 + (k - CC_HPOOL_MIN_SHIFT) * 4 + step;
  }
  if (class_bytes) *class_bytes = cc_hpool_class_bytes(index);
  return index;
}

void cc_hpool_init(cc_hpool *p, const cc_host_allocator *ops, size_t max_cached,
                   size_t max_total) {
  memset(p, 0, sizeof *p);
  pthread_mutex_init(&p->lock, NULL);
  p->ops = *ops;
  p->max_cached = max_cached;
  p->max_total = max_total;
}

static void note_high(cc_hpool *p) {
  if (p->pinned_now > p->st.reserved_high) p->st.reserved_high = p->pinned_now;
}

/* Pops cached blocks, largest classes first, until at most `keep` bytes stay cached; returns
 * them linked (through their first bytes) for release outside the lock, counted as freed. */
static void *take_cached(cc_hpool *p, size_t keep) {
  void *out = NULL;
  for (int c = CC_HPOOL_CLASSES - 1; c >= 0 && p->st.cached_bytes > keep; c--) {
    size_t cb = cc_hpool_class_bytes(c);
    while (p->free_head[c] && p->st.cached_bytes > keep) {
      void *b = p->free_head[c];
      memcpy(&p->free_head[c], b, sizeof(void *));
      p->free_count[c]--;
      p->st.cached_blocks--;
      p->st.cached_bytes -= cb;
      p->pinned_now -= cb;
      p->st.driver_frees++;
      memcpy(b, &out, sizeof(void *));
      out = b;
    }
  }
  return out;
}

static void release_list(cc_hpool *p, void *list) {
  while (list) {
    void *next;
    memcpy(&next, list, sizeof next);
    p->ops.release(p->ops.ctx, list);
    list = next;
  }
}

int cc_hpool_get(cc_hpool *p, size_t bytes, void **out, int *cls) {
  *out = NULL;
  size_t cb = 0;
  int c = cc_hpool_class_of(bytes, &cb);
  if (c < 0) return CC_HPOOL_LIMIT;
  pthread_mutex_lock(&p->lock);
  void *b = p->free_head[c];
  if (b) {
    memcpy(&p->free_head[c], b, sizeof(void *));
    p->free_count[c]--;
    p->st.cached_blocks--;
    p->st.cached_bytes -= cb;
    p->st.in_use_blocks++;
    p->st.in_use_bytes += bytes;
    p->st.in_use_capacity += cb;
    p->st.hits++;
    pthread_mutex_unlock(&p->lock);
    *out = b;
    *cls = c;
    return 0;
  }
  /* A miss: make room under the total limit by giving cached blocks back, then pin a new
   * block without holding the lock. */
  void *spill = NULL;
  if (p->max_total) {
    if (p->st.in_use_capacity + cb > p->max_total) {
      pthread_mutex_unlock(&p->lock);
      return CC_HPOOL_LIMIT;
    }
    if (p->pinned_now + cb > p->max_total)
      spill = take_cached(p, p->max_total - cb - p->st.in_use_capacity);
  }
  p->st.misses++;
  p->st.in_use_blocks++;
  p->st.in_use_bytes += bytes;
  p->st.in_use_capacity += cb;
  p->pinned_now += cb;
  note_high(p);
  pthread_mutex_unlock(&p->lock);
  release_list(p, spill);
  int err = p->ops.alloc(p->ops.ctx, cb, &b);
  if (err == CUDA_ERROR_OUT_OF_MEMORY) {
    /* Out of pinnable memory: give the whole cache back and try once more. (Other errors,
     * such as a refusal during a stream capture, are returned as they are.) */
    pthread_mutex_lock(&p->lock);
    void *all = take_cached(p, 0);
    pthread_mutex_unlock(&p->lock);
    if (all) {
      release_list(p, all);
      err = p->ops.alloc(p->ops.ctx, cb, &b);
    }
  }
  pthread_mutex_lock(&p->lock);
  if (err) {
    p->st.in_use_blocks--;
    p->st.in_use_bytes -= bytes;
    p->st.in_use_capacity -= cb;
    p->pinned_now -= cb;
    p->st.misses--;
  }
  pthread_mutex_unlock(&p->lock);
  if (err) return err;
  *out = b;
  *cls = c;
  return 0;
}

void cc_hpool_put(cc_hpool *p, void *ptr, int cls, size_t requested) {
  size_t cb = cc_hpool_class_bytes(cls);
  int release = 0;
  pthread_mutex_lock(&p->lock);
  p->st.in_use_blocks--;
  p->st.in_use_bytes -= requested;
  p->st.in_use_capacity -= cb;
  if (p->max_cached && p->st.cached_bytes + cb > p->max_cached) {
    release = 1;
    p->pinned_now -= cb;
    p->st.driver_frees++;
  } else {
    memcpy(ptr, &p->free_head[cls], sizeof(void *));
    p->free_head[cls] = ptr;
    p->free_count[cls]++;
    p->st.cached_blocks++;
    p->st.cached_bytes += cb;
  }
  pthread_mutex_unlock(&p->lock);
  if (release) p->ops.release(p->ops.ctx, ptr);
}

void cc_hpool_trim(cc_hpool *p, size_t keep_bytes) {
  pthread_mutex_lock(&p->lock);
  void *list = take_cached(p, keep_bytes);
  pthread_mutex_unlock(&p->lock);
  release_list(p, list);
}

void cc_hpool_stats(cc_hpool *p, cucore_host_pool_stats *out) {
  pthread_mutex_lock(&p->lock);
  *out = p->st;
  pthread_mutex_unlock(&p->lock);
}

void cc_hpool_reset_high(cc_hpool *p) {
  pthread_mutex_lock(&p->lock);
  p->st.reserved_high = p->pinned_now;
  p->st.hits = p->st.misses = 0;
  pthread_mutex_unlock(&p->lock);
}

void cc_hpool_fini(cc_hpool *p) {
  cc_hpool_trim(p, 0);
  pthread_mutex_destroy(&p->lock);
}
