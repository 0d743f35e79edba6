/*
 * host_pool_core.c -- the pinned pool's size classes, free lists, thread caches and counters,
 * over any allocator (the driver's cuMemHostAlloc in host_pool.c; malloc in the CPU tests).
 *
 * Classes: 4 KiB, then four per power of two (1.25, 1.5, 1.75 and 2 times it), up to 1 TiB; a
 * request gets the smallest class that holds it, so at most 25 % is wasted.
 *
 * Speed: the driver pins 64 KiB in 2-4 us, so a pool pair must cost tens of nanoseconds to be
 * worth a hundredfold. Two locked sections per pair cost more than that on a server's host,
 * so each thread keeps a few free blocks per class of the pool it used last (its cache), and
 * remembers the blocks it handed out recently. A hit hands a block out with plain stores; a
 * free of a block this thread handed out is plain stores too, inside an asymmetric-fence
 * section (base/asym_fence.h: a thread that updates another's block pays a membarrier(2)
 * instead), or one compare-and-swap while the thread is slow; both refuse a second free
 * racing the first. Everything else takes the pool's mutex: a miss,
 * a free from another thread, a cache that is full or belongs to another pool, pools with byte
 * limits (whose accounting must be exact at every call), trims, statistics.
 *
 * Lifetimes: a thread's cache is its own; the pool never reaches into it, except that a
 * destroyed pool releases every block it pinned, wherever it sits (the thread then drops its
 * stale cache at its next call, knowing the pool by its id). A trim changes the pool's epoch;
 * each thread gives its cache back at its next call on the pool, or when it exits.
 */
#include "memory/host_pool_core.h"

#include <string.h>

/* ---- block records: recycled, never freed ---------------------------------------------------- */

static pthread_mutex_t global_lock = PTHREAD_MUTEX_INITIALIZER; /* spares, slots, live pools */
static cc_hpool_block *spare_blocks;

static cc_hpool_block *block_new(void) {
  pthread_mutex_lock(&global_lock);
  cc_hpool_block *b = spare_blocks;
  if (b) spare_blocks = b->next;
  pthread_mutex_unlock(&global_lock);
  if (!b) {
    b = cc_raw_calloc(1, sizeof *b); /* kept on the spare list for good once given back */
    if (!b) return NULL;
    atomic_init(&b->state, 0);
    atomic_init(&b->requested, 0);
  }
  b->next = b->prev_all = b->next_all = NULL;
  return b;
}

static void block_retire(cc_hpool_block *b) {
  /* A new generation: whoever still remembers the block sees it is not theirs. */
  uint64_t s = atomic_load_explicit(&b->state, memory_order_relaxed);
  atomic_store_explicit(&b->state, (s & ~(uint64_t)3) + CC_HPOOL_GEN, memory_order_release);
  b->pool = NULL;
  b->base = NULL;
  pthread_mutex_lock(&global_lock);
  b->next = spare_blocks;
  spare_blocks = b;
  pthread_mutex_unlock(&global_lock);
}

/* ---- thread caches --------------------------------------------------------------------------- */

typedef cc_hpool_slot slot;
typedef cc_hpool_recent recent_block;
#define CACHE_PER_CLASS CC_HPOOL_CACHE_PER_CLASS
#define CACHE_BYTES CC_HPOOL_CACHE_BYTES

static slot *all_slots;      /* under global_lock */
static cc_hpool *live_pools; /* under global_lock */
static uint64_t next_pool_id = 1;

CC_TLS_IE _Thread_local cc_hpool_slot *cc_tls_hpool_slot;
#define tls_slot cc_tls_hpool_slot
static pthread_key_t slot_key;
static pthread_once_t slot_key_once = PTHREAD_ONCE_INIT;

static int pool_is_live(const cc_hpool *p, uint64_t id) { /* under global_lock */
  for (const cc_hpool *q = live_pools; q; q = q->next_live)
    if (q == p && q->id == id) return 1;
  return 0;
}

/* Gives the slot's blocks and counts back to its pool (when the pool still lives) and unbinds
 * it. The owner thread, under global_lock. */
static void slot_unbind(slot *s) {
  cc_hpool *p = s->pool;
  if (p && pool_is_live(p, s->pool_id)) {
    pthread_mutex_lock(&p->lock);
    for (int c = 0; c < CC_HPOOL_CLASSES; c++) {
      size_t cb = cc_hpool_class_bytes(c);
      while (s->n[c]) {
        cc_hpool_block *b = s->cache[c][--s->n[c]];
        b->next = p->free_head[c];
        p->free_head[c] = b;
        p->free_count[c]++;
        p->shared_bytes += cb;
      }
    }
    p->st.hits += atomic_load_explicit(&s->hits, memory_order_relaxed);
    pthread_mutex_unlock(&p->lock);
  }
  /* A dead pool released the cached blocks already: forget them. */
  memset(s->n, 0, sizeof s->n);
  atomic_store_explicit(&s->hits, 0, memory_order_relaxed);
  s->cached_bytes = 0;
  s->pool = NULL;
  s->pool_id = 0;
}

static void slot_exit(void *arg) {
  slot *s = arg;
  pthread_mutex_lock(&global_lock);
  slot_unbind(s);
  for (slot **pp = &all_slots; *pp; pp = &(*pp)->next)
    if (*pp == s) {
      *pp = s->next;
      break;
    }
  pthread_mutex_unlock(&global_lock);
  tls_slot = NULL;
  free(s);
}

static void make_slot_key(void) { (void)pthread_key_create(&slot_key, slot_exit); }

/* This thread's slot, made on first use; NULL when out of memory (then nothing is cached). */
static slot *my_slot(void) {
  if (CC_LIKELY(tls_slot != NULL)) return tls_slot;
  pthread_once(&slot_key_once, make_slot_key);
  slot *s = cc_raw_calloc(1, sizeof *s);
  if (!s) return NULL;
  atomic_init(&s->hits, 0);
  if (pthread_setspecific(slot_key, s) != 0) {
    free(s);
    return NULL;
  }
  pthread_mutex_lock(&global_lock);
  s->next = all_slots;
  all_slots = s;
  pthread_mutex_unlock(&global_lock);
  (void)cc_asym_mine(); /* its frees may be plain stores (NULL: compare-and-swap) */
  tls_slot = s;
  return s;
}

/* Binds this thread's cache to `p` (giving the cache of another pool, or of an older epoch,
 * back first). Pools with byte limits are never cached for (the binding stays as it is). */
static slot *slot_bind(cc_hpool *p) {
  slot *s = my_slot();
  if (!s || cc_hpool_slot_serves(s, p) || p->max_cached || p->max_total) return s;
  pthread_mutex_lock(&global_lock);
  slot_unbind(s);
  if (pool_is_live(p, p->id)) {
    s->pool = p;
    s->pool_id = p->id;
    s->epoch = atomic_load_explicit(&p->epoch, memory_order_relaxed);
  }
  pthread_mutex_unlock(&global_lock);
  return s;
}

/* Gives this thread's cache of `p` back to the pool's lists. */
static void flush_mine(cc_hpool *p) {
  slot *s = tls_slot;
  if (!s || s->pool != p) return;
  pthread_mutex_lock(&global_lock);
  slot_unbind(s);
  pthread_mutex_unlock(&global_lock);
}

/* ---- the pool -------------------------------------------------------------------------------- */

void cc_hpool_init(cc_hpool *p, const cc_hpool_allocator *ops, size_t max_cached,
                   size_t max_total) {
  memset(p, 0, sizeof *p);
  pthread_mutex_init(&p->lock, NULL);
  p->ops = *ops;
  p->max_cached = max_cached;
  p->max_total = max_total;
  atomic_init(&p->epoch, 0);
  pthread_mutex_lock(&global_lock);
  p->id = next_pool_id++;
  p->next_live = live_pools;
  live_pools = p;
  pthread_mutex_unlock(&global_lock);
}

static void note_high(cc_hpool *p) {
  if (p->pinned_now > p->st.reserved_high) p->st.reserved_high = p->pinned_now;
}

static void link_all(cc_hpool *p, cc_hpool_block *b) { /* under p->lock */
  b->prev_all = NULL;
  b->next_all = p->all;
  if (p->all) p->all->prev_all = b;
  p->all = b;
}

static void unlink_all(cc_hpool *p, cc_hpool_block *b) { /* under p->lock */
  if (b->prev_all)
    b->prev_all->next_all = b->next_all;
  else
    p->all = b->next_all;
  if (b->next_all) b->next_all->prev_all = b->prev_all;
  b->prev_all = b->next_all = NULL;
}

/* Pops blocks off the free lists, largest classes first, until at most `keep` bytes stay
 * there; returns them linked through `next` for release outside the lock, counted as freed. */
static cc_hpool_block *take_cached(cc_hpool *p, size_t keep) {
  cc_hpool_block *out = NULL;
  for (int c = CC_HPOOL_CLASSES - 1; c >= 0 && p->shared_bytes > keep; c--) {
    size_t cb = cc_hpool_class_bytes(c);
    while (p->free_head[c] && p->shared_bytes > keep) {
      cc_hpool_block *b = p->free_head[c];
      p->free_head[c] = b->next;
      p->free_count[c]--;
      p->shared_bytes -= cb;
      p->pinned_now -= cb;
      p->st.driver_frees++;
      unlink_all(p, b);
      b->next = out;
      out = b;
    }
  }
  return out;
}

static void release_list(cc_hpool *p, cc_hpool_block *list) {
  while (list) {
    cc_hpool_block *next = list->next;
    p->ops.release(p->ops.ctx, list);
    block_retire(list);
    list = next;
  }
}

CC_COLD static int get_slow(cc_hpool *p, size_t bytes, int c, size_t cb, slot *s,
                            cc_hpool_block **out) {
  pthread_mutex_lock(&p->lock);
  cc_hpool_block *b = p->free_head[c];
  if (b) {
    p->free_head[c] = b->next;
    p->free_count[c]--;
    p->shared_bytes -= cb;
    p->st.hits++;
    uint64_t state = cc_hpool_hand_out(b, bytes, s ? cc_tls_asym : NULL);
    pthread_mutex_unlock(&p->lock);
    cc_hpool_remember(s, p, b, state);
    *out = b;
    return 0;
  }
  /* A miss: make room under the total limit by giving cached blocks back, then pin a new
   * block without holding the lock. (With a limit, no thread caches: the counts are exact.) */
  cc_hpool_block *spill = NULL;
  if (p->max_total) {
    uint64_t in_use = p->pinned_now - p->shared_bytes; /* (no thread caches with a limit) */
    if (in_use + cb > p->max_total) {
      pthread_mutex_unlock(&p->lock);
      return CC_HPOOL_LIMIT;
    }
    if (p->pinned_now + cb > p->max_total) spill = take_cached(p, p->max_total - cb - in_use);
  }
  p->st.misses++;
  p->pinned_now += cb;
  note_high(p);
  pthread_mutex_unlock(&p->lock);
  release_list(p, spill);
  int err = CC_HPOOL_NO_MEMORY;
  b = block_new();
  if (b) {
    b->cls = c;
    b->class_bytes = cb;
    b->pool = p;
    err = p->ops.alloc(p->ops.ctx, cb, b);
    if (err == CUDA_ERROR_OUT_OF_MEMORY) {
      /* Out of pinnable memory: give the whole cache back (this thread's too) and try once
       * more. (Other errors, such as a refusal during a stream capture, are returned as they
       * are.) */
      flush_mine(p);
      pthread_mutex_lock(&p->lock);
      cc_hpool_block *all = take_cached(p, 0);
      pthread_mutex_unlock(&p->lock);
      if (all) {
        release_list(p, all);
        err = p->ops.alloc(p->ops.ctx, cb, b);
      }
    }
  }
  uint64_t state = 0;
  pthread_mutex_lock(&p->lock);
  if (err) {
    p->pinned_now -= cb;
    p->st.misses--;
  } else {
    link_all(p, b);
    state = cc_hpool_hand_out(b, bytes, s ? cc_tls_asym : NULL);
  }
  pthread_mutex_unlock(&p->lock);
  if (err) {
    if (b) block_retire(b);
    return err;
  }
  cc_hpool_remember(s, p, b, state);
  *out = b;
  return 0;
}

int cc_hpool_get(cc_hpool *p, size_t bytes, cc_hpool_block **out, void **base) {
  *out = NULL;
  size_t cb = 0;
  int c = cc_hpool_class_of(bytes, &cb);
  if (CC_UNLIKELY(c < 0)) return CC_HPOOL_BAD_SIZE;
  cc_hpool_block *hit = cc_hpool_get_cached(p, bytes);
  if (hit) {
    *out = hit;
    if (base) *base = hit->base;
    return 0;
  }
  int err = get_slow(p, bytes, c, cb, slot_bind(p), out);
  if (!err && base) *base = (*out)->base;
  return err;
}

CC_COLD static void put_slow(cc_hpool *p, cc_hpool_block *b, size_t cb) {
  int release = 0;
  pthread_mutex_lock(&p->lock);
  if (p->max_cached && p->shared_bytes + cb > p->max_cached) {
    release = 1;
    p->pinned_now -= cb;
    p->st.driver_frees++;
    unlink_all(p, b);
  } else {
    b->next = p->free_head[b->cls];
    p->free_head[b->cls] = b;
    p->free_count[b->cls]++;
    p->shared_bytes += cb;
  }
  pthread_mutex_unlock(&p->lock);
  if (release) {
    p->ops.release(p->ops.ctx, b);
    block_retire(b);
  }
}

void cc_hpool_put(cc_hpool *p, cc_hpool_block *b) {
  if (CC_LIKELY(cc_hpool_cache_put(tls_slot, p, b))) return;
  if (cc_hpool_cache_put(slot_bind(p), p, b)) return;
  put_slow(p, b, b->class_bytes);
}

int cc_hpool_free_block(cc_hpool *p, cc_hpool_block *b) {
  uint64_t seen = atomic_load_explicit(&b->state, memory_order_acquire);
  if ((seen & 3) != CC_HPOOL_IN_USE || b->pool != p || !cc_hpool_block_unuse(b, seen)) return 0;
  cc_hpool_put(p, b);
  return 1;
}

void cc_hpool_trim(cc_hpool *p, size_t keep_bytes) {
  atomic_fetch_add(&p->epoch, 1); /* every thread cache gives its blocks back */
  flush_mine(p);
  pthread_mutex_lock(&p->lock);
  cc_hpool_block *list = take_cached(p, keep_bytes);
  pthread_mutex_unlock(&p->lock);
  release_list(p, list);
}

/* The pool's counts: what is in use and cached read off its blocks, hits from the pool and
 * its threads; under global_lock and p->lock. */
static void sum_stats(cc_hpool *p, cucore_host_pool_stats *out) {
  *out = p->st;
  out->in_use_blocks = out->in_use_bytes = out->in_use_capacity = 0;
  out->cached_blocks = out->cached_bytes = 0;
  for (cc_hpool_block *b = p->all; b; b = b->next_all) {
    if (atomic_load_explicit(&b->state, memory_order_acquire) & CC_HPOOL_IN_USE) {
      out->in_use_blocks++;
      out->in_use_bytes += atomic_load_explicit(&b->requested, memory_order_relaxed);
      out->in_use_capacity += b->class_bytes;
    } else {
      out->cached_blocks++;
      out->cached_bytes += b->class_bytes;
    }
  }
  for (slot *s = all_slots; s; s = s->next)
    if (s->pool == p && s->pool_id == p->id)
      out->hits += atomic_load_explicit(&s->hits, memory_order_relaxed);
}

void cc_hpool_stats(cc_hpool *p, cucore_host_pool_stats *out) {
  pthread_mutex_lock(&global_lock);
  pthread_mutex_lock(&p->lock);
  sum_stats(p, out);
  pthread_mutex_unlock(&p->lock);
  pthread_mutex_unlock(&global_lock);
}

void cc_hpool_reset_high(cc_hpool *p) {
  pthread_mutex_lock(&global_lock);
  pthread_mutex_lock(&p->lock);
  cucore_host_pool_stats now;
  sum_stats(p, &now);
  p->st.reserved_high = p->pinned_now;
  p->st.hits -= now.hits; /* the threads' hits stay theirs: the sum starts from 0 */
  p->st.misses = 0;
  pthread_mutex_unlock(&p->lock);
  pthread_mutex_unlock(&global_lock);
}

void cc_hpool_fini(cc_hpool *p) {
  pthread_mutex_lock(&global_lock);
  for (cc_hpool **pp = &live_pools; *pp; pp = &(*pp)->next_live)
    if (*pp == p) {
      *pp = p->next_live;
      break;
    }
  slot *s = tls_slot;
  if (s && s->pool == p) slot_unbind(s); /* the pool is no longer live: just forgets */
  pthread_mutex_unlock(&global_lock);
  /* Every block is free now, on the lists or in some thread's cache: give them all back. */
  pthread_mutex_lock(&p->lock);
  cc_hpool_block *list = NULL;
  while (p->all) {
    cc_hpool_block *b = p->all;
    unlink_all(p, b);
    b->next = list;
    list = b;
  }
  memset(p->free_head, 0, sizeof p->free_head);
  pthread_mutex_unlock(&p->lock);
  release_list(p, list);
  pthread_mutex_destroy(&p->lock);
}
