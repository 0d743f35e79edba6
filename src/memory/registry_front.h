/*
 * memory/registry_front.h -- the inline half of each thread's front table (registry_front.c):
 * the stream-ordered allocation and free paths (pool.c) record and take back their own records
 * here without a call. The table, its entry states and the seqlock rules are explained in
 * registry_front.c; this header only holds what the hot paths read and write.
 */
#ifndef CUCORE_REGISTRY_FRONT_H
#define CUCORE_REGISTRY_FRONT_H

#include "memory/memory.h"

#define CC_FRONT_ENTRIES 32

/* An entry's state: a generation (in steps of CC_FE_GEN) and FREE (taken back by its owner:
 * kept for "freed already" messages), LIVE, WRITING or DRAINED (moved to the tree). */
enum { CC_FE_FREE = 0, CC_FE_LIVE = 1, CC_FE_WRITING = 2, CC_FE_DRAINED = 3, CC_FE_GEN = 4 };

/* A plain record, word by word: the fields a front record can have (the others are 0). */
enum { CC_FW_BASE, CC_FW_SIZE, CC_FW_CTX, CC_FW_CUPOOL, CC_FW_OWNER, CC_FW_KIND, CC_FW_WORDS };

typedef struct cc_front_entry {
  _Atomic uint64_t state;
  _Atomic uint64_t w[CC_FW_WORDS];
} __attribute__((aligned(64))) cc_front_entry; /* one cache line each */

typedef struct cc_front_table {
  cc_front_entry e[CC_FRONT_ENTRIES];
  struct { /* one cache line: what the owner's record and take touch besides the entry */
    /* The owner thread takes its entries back with plain stores while this is fast; a drain
     * of another thread's table keeps it out meanwhile (base/asym_fence.h). */
    cc_asym_owner asym;
    _Atomic uint64_t inserted; /* by the owner */
    _Atomic uint64_t taken;    /* by the owner */
  } __attribute__((aligned(64)));
  _Atomic uint64_t drained; /* by drains, under the registry's lock */
  atomic_int orphaned;      /* the owner thread has exited */
  struct cc_front_table *next;
} cc_front_table;

_Static_assert(sizeof(cc_asym_owner) + 2 * sizeof(uint64_t) <= 64,
               "a front table's owner record and counters share one cache line");

/* This thread's table (NULL until its first record: cc_front_insert makes it). */
extern CC_TLS_IE _Thread_local cc_front_table *cc_tls_front;

/* What the free paths look at: a front record's fields. */
typedef struct cc_front_view {
  uint64_t size;
  CUcontext ctx;
  void *cupool, *owner;
  cucore_mem_kind kind;
  int ordinal;
} cc_front_view;

static inline unsigned cc_front_index(uint64_t base) {
  return (unsigned)(((base >> 9) ^ (base >> 17) ^ (base >> 25)) % CC_FRONT_ENTRIES);
}

static inline void cc_front_count_up(_Atomic uint64_t *c) {
  atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1, memory_order_release);
}

/* Writes a record into `e` (the owner only, the entry not LIVE; `s` its state as read). */
static inline void cc_front_write(cc_front_table *t, cc_front_entry *e, uint64_t s, uint64_t base,
                                  uint64_t size, const void *ctx, const void *cupool,
                                  const void *owner, cucore_mem_kind kind, int ordinal) {
  uint64_t gen = s & ~(uint64_t)3;
  atomic_store_explicit(&e->state, gen + CC_FE_GEN + CC_FE_WRITING, memory_order_relaxed);
  atomic_thread_fence(memory_order_release);
  atomic_store_explicit(&e->w[CC_FW_BASE], base, memory_order_relaxed);
  atomic_store_explicit(&e->w[CC_FW_SIZE], size, memory_order_relaxed);
  atomic_store_explicit(&e->w[CC_FW_CTX], (uint64_t)(uintptr_t)ctx, memory_order_relaxed);
  atomic_store_explicit(&e->w[CC_FW_CUPOOL], (uint64_t)(uintptr_t)cupool, memory_order_relaxed);
  atomic_store_explicit(&e->w[CC_FW_OWNER], (uint64_t)(uintptr_t)owner, memory_order_relaxed);
  atomic_store_explicit(&e->w[CC_FW_KIND],
                        (uint64_t)(uint32_t)kind | (uint64_t)(uint32_t)ordinal << 32,
                        memory_order_relaxed);
  atomic_store_explicit(&e->state, gen + 2 * CC_FE_GEN + CC_FE_LIVE, memory_order_release);
  cc_front_count_up(&t->inserted);
}

/* Records a stream-ordered allocation in this thread's table: 1 when done; 0 when the caller
 * must use cc_front_insert (no table yet, or its entry is taken). */
static inline int cc_front_put(uint64_t base, uint64_t size, CUcontext ctx, void *cupool,
                               void *owner, cucore_mem_kind kind, int ordinal) {
  cc_front_table *t = cc_tls_front;
  if (CC_UNLIKELY(!t)) return 0;
  cc_front_entry *e = &t->e[cc_front_index(base)];
  uint64_t s = atomic_load_explicit(&e->state, memory_order_relaxed);
  if (CC_UNLIKELY((s & 3) == CC_FE_LIVE)) return 0;
  cc_front_write(t, e, s, base, size, ctx, cupool, owner, kind, ordinal);
  return 1;
}

/* An entry's fields but its base (the caller checks the state around the reads). */
static inline void cc_front_read(const cc_front_entry *e, cc_front_view *v) {
  v->size = atomic_load_explicit(&e->w[CC_FW_SIZE], memory_order_relaxed);
  v->ctx = (CUcontext)(uintptr_t)atomic_load_explicit(&e->w[CC_FW_CTX], memory_order_relaxed);
  v->cupool = (void *)(uintptr_t)atomic_load_explicit(&e->w[CC_FW_CUPOOL], memory_order_relaxed);
  v->owner = (void *)(uintptr_t)atomic_load_explicit(&e->w[CC_FW_OWNER], memory_order_relaxed);
  uint64_t ko = atomic_load_explicit(&e->w[CC_FW_KIND], memory_order_relaxed);
  v->kind = (cucore_mem_kind)(uint32_t)ko;
  v->ordinal = (int)(uint32_t)(ko >> 32);
}

/* This thread's live entry starting at `base`, its fields in *v and its state in *state; NULL
 * when there is none. Nothing is taken: cc_front_commit does that. */
static inline cc_front_entry *cc_front_find(uint64_t base, uint64_t *state, cc_front_view *v) {
  cc_front_table *t = cc_tls_front;
  if (!t) return NULL;
  cc_front_entry *e = &t->e[cc_front_index(base)];
  uint64_t s = atomic_load_explicit(&e->state, memory_order_acquire);
  if ((s & 3) != CC_FE_LIVE ||
      atomic_load_explicit(&e->w[CC_FW_BASE], memory_order_relaxed) != base)
    return NULL;
  cc_front_read(e, v);
  *state = s;
  return e;
}

/* Takes back the entry cc_front_find gave, if it is still in the state it saw: 1 when done; 0
 * when a drain moved it to the tree meanwhile (the registry has it then). Plain stores inside
 * an asymmetric-fence section, or one compare-and-swap while the table's owner is slow. */
static inline int cc_front_commit(cc_front_entry *e, uint64_t state) {
  cc_front_table *t = cc_tls_front;
  uint64_t freed = (state & ~(uint64_t)3) + CC_FE_GEN;
  if (CC_LIKELY(cc_asym_enter(&t->asym))) {
    int mine = atomic_load_explicit(&e->state, memory_order_relaxed) == state;
    if (mine) atomic_store_explicit(&e->state, freed, memory_order_release);
    cc_asym_exit(&t->asym);
    if (!mine) return 0;
  } else {
    if (!atomic_compare_exchange_strong_explicit(&e->state, &state, freed, memory_order_acq_rel,
                                                 memory_order_relaxed))
      return 0;
    cc_asym_slow_done(&t->asym);
  }
  cc_front_count_up(&t->taken);
  return 1;
}

#endif
