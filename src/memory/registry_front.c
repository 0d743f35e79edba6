/*
 * registry_front.c -- each thread's table of the stream-ordered allocations it made and nobody
 * else has looked at yet, in front of the process's registry (registry.c).
 *
 * Why: a stream-ordered alloc + free pair costs the driver 0.65-1.1 us, and recording it in the
 * tree (two locked sections, an AVL insert and removal) cost 80-140 ns of that on a server's
 * host. Most such allocations are freed by the thread that made them; so the thread records
 * one in a small direct-mapped table of its own with plain stores, and its free takes it back
 * with one compare-and-swap. Every other use of the registry (a copy's bounds check, a free
 * from another thread, pointer facts, any insert) first drains every table into the tree
 * under the registry's lock (cc_front_drain), and then sees exactly what it saw before.
 *
 * An entry's state is a generation (in steps of 4) and FREE (taken back by its owner: kept
 * for "freed already" messages), WRITING, LIVE or DRAINED (moved to the tree). Only the owner
 * writes an entry's record, and only while the entry is not LIVE (a seqlock: the state moves
 * before the words do). A drain moves a LIVE entry into the tree by a compare-and-swap from the
 * state it read before copying the record, so it never takes a record the owner was rewriting;
 * the owner's take does the same, so an entry goes either to the tree or back to its owner,
 * once. A thread's table outlives the thread: at exit it is only marked, and the next drain
 * moves what is left and frees it.
 */
#include "memory/memory.h"

#include <string.h>

#define FRONT_ENTRIES 32
#define REC_WORDS (sizeof(cc_mem_rec) / 8)

enum { E_FREE = 0, E_LIVE = 1, E_WRITING = 2, E_DRAINED = 3, E_GEN = 4 }; /* FREE: taken back */

typedef struct front_entry {
  _Atomic uint64_t state;
  _Atomic uint64_t w[REC_WORDS]; /* the record, word by word */
} front_entry;

typedef struct front_table {
  front_entry e[FRONT_ENTRIES];
  _Atomic uint64_t inserted;  /* by the owner */
  _Atomic uint64_t taken;     /* by the owner */
  uint64_t drained;           /* by drains, under the registry's lock */
  atomic_int orphaned;        /* the owner thread has exited */
  struct front_table *next;
} front_table;

/* The tables: a new one is pushed at the head under tables_lock; only drains (one at a time,
 * under the registry's lock) walk the list without it, and unlink exited threads' tables under
 * it. */
static pthread_mutex_t tables_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(front_table *) tables;
#if defined(__GNUC__)
static _Thread_local front_table *tls_table __attribute__((tls_model("initial-exec")));
#else
static _Thread_local front_table *tls_table;
#endif
static pthread_key_t table_key;
static pthread_once_t table_key_once = PTHREAD_ONCE_INIT;

static void table_exit(void *arg) {
  front_table *t = arg;
  atomic_store_explicit(&t->orphaned, 1, memory_order_release);
  tls_table = NULL;
}

static void make_table_key(void) { (void)pthread_key_create(&table_key, table_exit); }

static front_table *my_table(void) {
  if (CC_LIKELY(tls_table != NULL)) return tls_table;
  pthread_once(&table_key_once, make_table_key);
  front_table *t = cc_raw_calloc(1, sizeof *t);
  if (!t) return NULL;
  if (pthread_setspecific(table_key, t) != 0) {
    free(t);
    return NULL;
  }
  pthread_mutex_lock(&tables_lock);
  t->next = atomic_load_explicit(&tables, memory_order_relaxed);
  atomic_store_explicit(&tables, t, memory_order_release);
  pthread_mutex_unlock(&tables_lock);
  tls_table = t;
  return t;
}

static inline unsigned entry_index(uint64_t base) {
  return (unsigned)(((base >> 9) ^ (base >> 17) ^ (base >> 25)) % FRONT_ENTRIES);
}

/* Word by word, straight into the record: a copy through a buffer makes the wide loads of a
 * struct copy wait on the narrow stores before them (store forwarding fails). */
_Static_assert(sizeof(cc_mem_rec) % 8 == 0, "a record is whole words");

static inline void read_rec(front_entry *e, cc_mem_rec *out) {
  for (size_t i = 0; i < REC_WORDS; i++) {
    uint64_t v = atomic_load_explicit(&e->w[i], memory_order_relaxed);
    memcpy((char *)out + 8 * i, &v, 8);
  }
}

static inline uint64_t read_base(front_entry *e) {
  return atomic_load_explicit(&e->w[offsetof(cc_mem_rec, base) / 8], memory_order_relaxed);
}

static inline int count_up(_Atomic uint64_t *c) {
  atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1,
                        memory_order_release);
  return 1;
}

int cc_front_insert(const cc_mem_rec *rec) {
  if (rec->textures || rec->exports || rec->flags) return 0; /* plain records only */
  front_table *t = my_table();
  if (!t) return 0;
  front_entry *e = &t->e[entry_index(rec->base)];
  uint64_t s = atomic_load_explicit(&e->state, memory_order_relaxed);
  if ((s & 3) == E_LIVE) {
    /* Another record of this thread's: the registry's insert drains it and evicts what the new
     * range overlaps. The same base: the driver handed it out again, so that one is stale. */
    if (read_base(e) != rec->base) return 0;
    if (!atomic_compare_exchange_strong_explicit(&e->state, &s, (s & ~(uint64_t)3) + E_GEN,
                                                 memory_order_acq_rel, memory_order_relaxed))
      return 0; /* a drain moved it to the tree: the insert there evicts it */
    count_up(&t->taken);
    s = (s & ~(uint64_t)3) + E_GEN;
  }
  atomic_store_explicit(&e->state, (s & ~(uint64_t)3) + E_GEN + E_WRITING, memory_order_relaxed);
  atomic_thread_fence(memory_order_release);
  for (size_t i = 0; i < REC_WORDS; i++) {
    uint64_t v;
    memcpy(&v, (const char *)rec + 8 * i, 8);
    atomic_store_explicit(&e->w[i], v, memory_order_relaxed);
  }
  atomic_store_explicit(&e->state, (s & ~(uint64_t)3) + 2 * E_GEN + E_LIVE, memory_order_release);
  return count_up(&t->inserted);
}

cc_reg_result cc_front_take(uint64_t base, cc_reg_accept accept, void *ctx, cc_mem_rec *out) {
  front_table *t = tls_table;
  if (!t) return CC_REG_NOT_FOUND;
  front_entry *e = &t->e[entry_index(base)];
  uint64_t s = atomic_load_explicit(&e->state, memory_order_acquire);
  if ((s & 3) != E_LIVE || read_base(e) != base) return CC_REG_NOT_FOUND;
  cc_mem_rec mine, *rec = out ? out : &mine; /* read in place: no struct copy (see read_rec) */
  read_rec(e, rec);
  if (accept && !accept(rec, ctx)) return CC_REG_NOT_FOUND; /* the registry explains */
  if (!atomic_compare_exchange_strong_explicit(&e->state, &s, (s & ~(uint64_t)3) + E_GEN,
                                               memory_order_acq_rel, memory_order_relaxed))
    return CC_REG_NOT_FOUND; /* drained meanwhile: the registry has it */
  count_up(&t->taken);
  return CC_REG_OK;
}

/* Moves the table's live entries into the registry through `sink`. */
static void drain_table(front_table *t, cc_front_sink sink, void *r) {
  uint64_t in = atomic_load_explicit(&t->inserted, memory_order_acquire);
  uint64_t out = atomic_load_explicit(&t->taken, memory_order_acquire) + t->drained;
  if (in == out) return; /* nothing live (the common case) */
  for (int i = 0; i < FRONT_ENTRIES; i++) {
    front_entry *e = &t->e[i];
    uint64_t s = atomic_load_explicit(&e->state, memory_order_acquire);
    if ((s & 3) != E_LIVE) continue;
    cc_mem_rec rec;
    read_rec(e, &rec);
    atomic_thread_fence(memory_order_acquire);
    /* Into the tree first: when that fails (out of memory) the record stays here, still
     * found by its owner's free; when the owner took it back meanwhile, out again. */
    if (!sink(r, &rec, 1)) continue;
    if (atomic_compare_exchange_strong_explicit(&e->state, &s,
                                                (s & ~(uint64_t)3) + E_GEN + E_DRAINED,
                                                memory_order_acq_rel, memory_order_relaxed))
      t->drained++;
    else
      (void)sink(r, &rec, 0);
  }
}

void cc_front_drain(cc_front_sink sink, void *r) {
  int orphans = 0;
  for (front_table *t = atomic_load_explicit(&tables, memory_order_acquire); t; t = t->next) {
    drain_table(t, sink, r);
    orphans += atomic_load_explicit(&t->orphaned, memory_order_acquire);
  }
  if (CC_LIKELY(!orphans)) return;
  /* Tables of exited threads, drained above: unlinked and freed. */
  pthread_mutex_lock(&tables_lock);
  front_table *prev = NULL;
  for (front_table *t = atomic_load_explicit(&tables, memory_order_relaxed), *next; t; t = next) {
    next = t->next;
    if (!atomic_load_explicit(&t->orphaned, memory_order_acquire)) {
      prev = t;
      continue;
    }
    drain_table(t, sink, r); /* (it exited after the pass above: nothing new since) */
    if (prev)
      prev->next = next;
    else
      atomic_store_explicit(&tables, next, memory_order_release);
    free(t);
  }
  pthread_mutex_unlock(&tables_lock);
}

int cc_front_was_freed(uint64_t addr, cc_mem_rec *out) {
  int found = 0;
  pthread_mutex_lock(&tables_lock);
  for (front_table *t = atomic_load_explicit(&tables, memory_order_acquire); t && !found;
       t = t->next)
    for (int i = 0; i < FRONT_ENTRIES && !found; i++) {
      front_entry *e = &t->e[i];
      uint64_t s = atomic_load_explicit(&e->state, memory_order_acquire);
      if ((s & 3) != E_FREE || s == 0) continue; /* never used, or being written */
      cc_mem_rec rec;
      read_rec(e, &rec);
      atomic_thread_fence(memory_order_acquire);
      if (atomic_load_explicit(&e->state, memory_order_relaxed) != s) continue;
      if ((addr >= rec.base && addr - rec.base < rec.size) || addr == rec.base) {
        if (out) *out = rec;
        found = 1;
      }
    }
  pthread_mutex_unlock(&tables_lock);
  return found;
}
