/*
 * memory/host_pool_core.h -- the inline half of the pinned pool's core (host_pool_core.c): a
 * thread's cache of free blocks, and the allocation and free that it serves without a call or
 * a lock (cucore_host_pool_alloc / _free after warm-up: a few loads and stores; a free is
 * plain stores inside an asymmetric-fence section, or one compare-and-swap while this thread
 * is slow, and either refuses a second free racing the first). Everything
 * else (misses, frees of other threads' blocks, limits, trims, statistics) is in
 * host_pool_core.c.
 */
#ifndef CUCORE_HOST_POOL_CORE_H
#define CUCORE_HOST_POOL_CORE_H

#include "memory/memory.h"

#define CC_HPOOL_CACHE_PER_CLASS 4
#define CC_HPOOL_CACHE_BYTES ((size_t)64 << 20) /* most bytes a thread keeps */
#define CC_HPOOL_RECENT 64                      /* blocks remembered as handed out */

/* A block this thread handed out, as it was then. */
typedef struct cc_hpool_recent {
  const void *ptr;
  cc_hpool *pool;
  cc_hpool_block *b;
  uint64_t state; /* as it was handed out */
} cc_hpool_recent;

/* A thread's cache. */
typedef struct cc_hpool_slot {
  /* The pool it caches for; written by the owner thread under the core's global lock, read by
   * others under it. */
  cc_hpool *pool;
  uint64_t pool_id;
  unsigned epoch;
  /* Allocations its cache served since it bound to the pool: written by the owner only, read
   * by the pool's statistics. (What is in use and cached is read off the blocks' states.) */
  _Atomic uint64_t hits;
  /* The owner's alone. */
  size_t cached_bytes;
  uint8_t n[CC_HPOOL_CLASSES];
  cc_hpool_block *cache[CC_HPOOL_CLASSES][CC_HPOOL_CACHE_PER_CLASS];
  cc_hpool_recent recent[CC_HPOOL_RECENT];
  struct cc_hpool_slot *next;
} cc_hpool_slot;

/* This thread's cache (NULL until its first miss binds one). */
extern CC_TLS_IE _Thread_local cc_hpool_slot *cc_tls_hpool_slot;

/* Size classes: 4 KiB, then four per power of two (1.25, 1.5, 1.75 and 2 times it). The
 * bytes of the class `step` (0..3) quarters above 2^k. */
static inline size_t cc_hpool_quarter_bytes(int k, int step) {
  return ((size_t)1 << k) + (size_t)(step + 1) * ((size_t)1 << (k - 2));
}

/* The bytes of class `index`. */
static inline size_t cc_hpool_class_bytes(int index) {
  if (index <= 0) return (size_t)1 << CC_HPOOL_MIN_SHIFT;
  return cc_hpool_quarter_bytes(CC_HPOOL_MIN_SHIFT + (index - 1) / 4, (index - 1) % 4);
}

/* The class index of a request (0 for up to 4 KiB) and its bytes; -1 when bytes is 0 or above
 * the largest class. */
static inline int cc_hpool_class_of(size_t bytes, size_t *class_bytes) {
  if (bytes == 0 || bytes > ((size_t)1 << CC_HPOOL_MAX_SHIFT)) return -1;
  int index = 0;
  size_t cb = (size_t)1 << CC_HPOOL_MIN_SHIFT;
  if (bytes > cb) {
    /* bytes - 1 lies in [2^k, 2^(k+1)); its next two bits pick the quarter. */
    uint64_t b = bytes - 1;
    int k = 63 - __builtin_clzll(b);
    int step = (int)((b >> (k - 2)) & 3);
    index = 1 + (k - CC_HPOOL_MIN_SHIFT) * 4 + step;
    cb = cc_hpool_quarter_bytes(k, step);
  }
  if (class_bytes) *class_bytes = cb;
  return index;
}

static inline unsigned cc_hpool_recent_index(const void *ptr) {
  uint64_t a = (uint64_t)(uintptr_t)ptr;
  return (unsigned)(((a >> 12) ^ (a >> 20) ^ a) % CC_HPOOL_RECENT);
}

/* 1 when the slot caches for `p` as it is now (the same pool, not trimmed since). */
static inline int cc_hpool_slot_serves(const cc_hpool_slot *s, const cc_hpool *p) {
  return s && s->pool == p && s->pool_id == p->id &&
         s->epoch == atomic_load_explicit(&p->epoch, memory_order_relaxed);
}

static inline void cc_hpool_remember(cc_hpool_slot *s, cc_hpool *p, cc_hpool_block *b,
                                     uint64_t state) {
  if (s) s->recent[cc_hpool_recent_index(b->base)] = (cc_hpool_recent){b->base, p, b, state};
}

/* Marks a block handed out for `bytes` by the thread whose owner record is `holder` (NULL:
 * its frees all take the compare-and-swap); returns its new state. */
static inline uint64_t cc_hpool_hand_out(cc_hpool_block *b, size_t bytes, cc_asym_owner *holder) {
  atomic_store_explicit(&b->requested, bytes, memory_order_relaxed);
  atomic_store_explicit(&b->holder, holder, memory_order_relaxed);
  uint64_t s = (atomic_load_explicit(&b->state, memory_order_relaxed) & ~(uint64_t)3) |
               CC_HPOOL_IN_USE;
  atomic_store_explicit(&b->state, s, memory_order_release);
  return s;
}

/* A block for `bytes` from this thread's cache of `p`, handed out and remembered; NULL when the
 * cache has none of its class (then cc_hpool_get). */
static inline cc_hpool_block *cc_hpool_get_cached(cc_hpool *p, size_t bytes) {
  cc_hpool_slot *s = cc_tls_hpool_slot;
  size_t cb;
  int c = cc_hpool_class_of(bytes, &cb);
  if (CC_UNLIKELY(c < 0 || !cc_hpool_slot_serves(s, p) || !s->n[c])) return NULL;
  cc_hpool_block *b = s->cache[c][--s->n[c]];
  s->cached_bytes -= cb;
  uint64_t state = cc_hpool_hand_out(b, bytes, cc_tls_asym);
  atomic_store_explicit(&s->hits, atomic_load_explicit(&s->hits, memory_order_relaxed) + 1,
                        memory_order_relaxed);
  s->recent[cc_hpool_recent_index(b->base)] = (cc_hpool_recent){b->base, p, b, state};
  return b;
}

/* Into this thread's cache when it serves `p` and has room; 1 when done. */
static inline int cc_hpool_cache_put(cc_hpool_slot *s, cc_hpool *p, cc_hpool_block *b) {
  int c = b->cls;
  if (!cc_hpool_slot_serves(s, p) || s->n[c] >= CC_HPOOL_CACHE_PER_CLASS ||
      s->cached_bytes + b->class_bytes > CC_HPOOL_CACHE_BYTES)
    return 0;
  s->cache[c][s->n[c]++] = b;
  s->cached_bytes += b->class_bytes;
  return 1;
}

/* Frees the block at `ptr` when this thread handed it out recently and it is still handed out
 * and not busy: 1 when done; 0 leaves it to the caller's checked path. The holder's free: with
 * plain stores while this thread is fast (asym_fence.h), else one compare-and-swap; either way
 * a second free racing this one, or a texture marking the block busy, is refused exactly once. */
static inline int cc_hpool_free_recent(cc_hpool *p, const void *ptr) {
  cc_hpool_slot *s = cc_tls_hpool_slot;
  if (!s) return 0;
  cc_hpool_recent *r = &s->recent[cc_hpool_recent_index(ptr)];
  if (r->ptr != ptr || r->pool != p) return 0;
  r->ptr = NULL;
  cc_hpool_block *b = r->b;
  cc_asym_owner *o = cc_tls_asym;
  if (CC_LIKELY(o && cc_asym_enter(o))) {
    /* No other thread updates the state until cc_asym_exit; the holder check makes sure the
     * others would have kept out of this thread's way (they look at the holder). */
    int mine = atomic_load_explicit(&b->holder, memory_order_relaxed) == o &&
               atomic_load_explicit(&b->state, memory_order_relaxed) == r->state;
    if (mine)
      atomic_store_explicit(&b->state, cc_hpool_block_freed(r->state), memory_order_release);
    cc_asym_exit(o);
    if (!mine) return 0; /* freed, busy or another holder's now */
  } else {
    if (!cc_hpool_block_unuse(b, r->state)) return 0;
    if (o) cc_asym_slow_done(o);
  }
  if (CC_LIKELY(cc_hpool_cache_put(s, p, b))) return 1;
  cc_hpool_put(p, b);
  return 1;
}

#endif
