/*
 * registry_front.c -- each thread's table of the stream-ordered allocations it made and nobody
 * else has looked at yet, in front of the process's registry (registry.c).
 *
 * Why: a stream-ordered alloc + free pair costs the driver 0.65-1.1 us, and recording it in the
 * tree (two locked sections, an AVL insert and removal) cost 80-140 ns of that on a server's
 * host. Most such allocations are freed by the thread that made them; so the thread records
 * one in a small direct-mapped table of its own with plain stores, and its free takes it back
 * with plain stores too, inside an asymmetric-fence section (base/asym_fence.h), or with one
 * compare-and-swap while a drain by another thread has made the owner slow. Every other use of the
 * registry (a copy's bounds check, a free from another thread, pointer facts, any insert) first
 * drains every table into the tree
 * under the registry's lock (cc_front_drain), and then sees exactly what it saw before.
 *
 * An entry's state is a generation (in steps of 4) and FREE (taken back by its owner: kept
 * for "freed already" messages), WRITING, LIVE or DRAINED (moved to the tree). Only the owner
 * writes an entry's record, and only while the entry is not LIVE (a seqlock: the state moves
 * before the words do). A drain moves a LIVE entry into the tree by a compare-and-swap from the
 * state it read before copying the record, so it never takes a record the owner was rewriting;
 * the owner's take checks the same state, by compare-and-swap or inside its section (which a
 * drain of another thread's table waits out and keeps closed), so an entry goes either to the
 * tree or back to its owner, once. A thread's table outlives the thread: at exit it is only marked;
 * the next drain moves what is left, and a new thread adopts the table once nothing in it is live.
 * Tables are never
 * freed, so the list may be walked without a lock (cc_front_pending: a copy's check asks
 * whether anything is waiting to be drained before it trusts what it saw earlier).
 */
#include "memory/registry_front.h"

#include <string.h>

typedef cc_front_entry front_entry;
typedef cc_front_table front_table;

/* The tables: a new one is pushed at the head under tables_lock, and adopted under it; the
 * list only grows (to the most threads that ever used tables at once), so it may be walked
 * without the lock. */
static pthread_mutex_t tables_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(front_table *) tables;
CC_TLS_IE _Thread_local cc_front_table *cc_tls_front;
static pthread_key_t table_key;
static pthread_once_t table_key_once = PTHREAD_ONCE_INIT;

static void table_exit(void *arg) {
  front_table *t = arg;
  cc_asym_release(&t->asym);
  atomic_store_explicit(&t->orphaned, 1, memory_order_release);
  cc_tls_front = NULL;
}

static void make_table_key(void) { (void)pthread_key_create(&table_key, table_exit); }

/* 1 when records of `t` may wait to be drained (its owner's inserts outnumber its takes and
 * the drains). */
static int table_pending(front_table *t) {
  uint64_t in = atomic_load_explicit(&t->inserted, memory_order_acquire);
  uint64_t out = atomic_load_explicit(&t->taken, memory_order_acquire) +
                 atomic_load_explicit(&t->drained, memory_order_acquire);
  return in != out;
}

/* A table of an exited thread with nothing live in it, now this thread's (under tables_lock). */
static front_table *adopt(void) {
  for (front_table *t = atomic_load_explicit(&tables, memory_order_relaxed); t; t = t->next)
    if (atomic_load_explicit(&t->orphaned, memory_order_acquire) && !table_pending(t)) {
      atomic_store_explicit(&t->orphaned, 0, memory_order_release);
      return t;
    }
  return NULL;
}

static front_table *my_table(void) {
  if (CC_LIKELY(cc_tls_front != NULL)) return cc_tls_front;
  pthread_once(&table_key_once, make_table_key);
  pthread_mutex_lock(&tables_lock);
  front_table *t = adopt();
  pthread_mutex_unlock(&tables_lock);
  int fresh = t == NULL;
  if (fresh && !(t = cc_raw_aligned_calloc(64, sizeof *t))) return NULL;
  if (pthread_setspecific(table_key, t) != 0) {
    if (fresh)
      free(t);
    else
      atomic_store_explicit(&t->orphaned, 1, memory_order_release);
    return NULL;
  }
  if (fresh) {
    pthread_mutex_lock(&tables_lock);
    t->next = atomic_load_explicit(&tables, memory_order_relaxed);
    atomic_store_explicit(&tables, t, memory_order_release);
    pthread_mutex_unlock(&tables_lock);
  }
  cc_asym_adopt(&t->asym);
  cc_tls_front = t;
  return t;
}

size_t cc_front_table_count(void) {
  size_t n = 0;
  for (front_table *t = atomic_load_explicit(&tables, memory_order_acquire); t; t = t->next) n++;
  return n;
}

int cc_front_pending(void) {
  for (front_table *t = atomic_load_explicit(&tables, memory_order_acquire); t; t = t->next)
    if (table_pending(t)) return 1;
  return 0;
}

/* The record an entry holds (read by drains and "freed already" answers, which check the
 * state again afterwards). */
static void rec_of(uint64_t base, const cc_front_view *v, cc_mem_rec *out) {
  memset(out, 0, sizeof *out);
  out->base = base;
  out->size = v->size;
  out->ctx = v->ctx;
  out->cupool = v->cupool;
  out->owner = v->owner;
  out->kind = v->kind;
  out->ordinal = v->ordinal;
}

static void read_rec(front_entry *e, cc_mem_rec *out) {
  cc_front_view v;
  cc_front_read(e, &v);
  rec_of(atomic_load_explicit(&e->w[CC_FW_BASE], memory_order_relaxed), &v, out);
}

int cc_front_insert(const cc_mem_rec *rec) {
  /* Plain records only: what a front entry holds (see CC_FW_*). */
  if (rec->textures || rec->exports || rec->flags || rec->aux || rec->alias) return 0;
  front_table *t = my_table();
  if (!t) return 0;
  front_entry *e = &t->e[cc_front_index(rec->base)];
  uint64_t s = atomic_load_explicit(&e->state, memory_order_relaxed);
  if ((s & 3) == CC_FE_LIVE) {
    /* Another record of this thread's: the registry's insert drains it and evicts what the new
     * range overlaps. The same base: the driver handed it out again, so that one is stale. */
    if (atomic_load_explicit(&e->w[CC_FW_BASE], memory_order_relaxed) != rec->base) return 0;
    if (!atomic_compare_exchange_strong_explicit(&e->state, &s, (s & ~(uint64_t)3) + CC_FE_GEN,
                                                 memory_order_acq_rel, memory_order_relaxed))
      return 0; /* a drain moved it to the tree: the insert there evicts it */
    cc_front_count_up(&t->taken);
    s = (s & ~(uint64_t)3) + CC_FE_GEN;
  }
  cc_front_write(t, e, s, rec->base, rec->size, rec->ctx, rec->cupool, rec->owner, rec->kind,
                 rec->ordinal);
  return 1;
}

cc_reg_result cc_front_take(uint64_t base, cc_reg_accept accept, void *ctx, cc_mem_rec *out) {
  uint64_t s;
  cc_front_view v;
  front_entry *e = cc_front_find(base, &s, &v);
  if (!e) return CC_REG_NOT_FOUND;
  cc_mem_rec mine, *rec = out ? out : &mine;
  rec_of(base, &v, rec);
  if (accept && !accept(rec, ctx)) return CC_REG_NOT_FOUND;    /* the registry explains */
  return cc_front_commit(e, s) ? CC_REG_OK : CC_REG_NOT_FOUND; /* drained: the registry has it */
}

/* Moves the table's live entries into the registry through `sink`. */
static void drain_table(front_table *t, cc_front_sink sink, void *r) {
  if (!table_pending(t)) return; /* nothing live (the common case) */
  /* Another thread's table: its owner's plain-store takes wait (a membarrier when it was fast;
   * it then takes by compare-and-swap for a while). This thread's own: nothing to wait for. */
  int other = t != cc_tls_front;
  if (other) cc_asym_remote_begin(&t->asym);
  for (int i = 0; i < CC_FRONT_ENTRIES; i++) {
    front_entry *e = &t->e[i];
    uint64_t s = atomic_load_explicit(&e->state, memory_order_acquire);
    if ((s & 3) != CC_FE_LIVE) continue;
    cc_mem_rec rec;
    read_rec(e, &rec);
    atomic_thread_fence(memory_order_acquire);
    /* Into the tree first: when that fails (out of memory) the record stays here, still
     * found by its owner's free; when the owner took it back meanwhile, out again. */
    if (!sink(r, &rec, 1)) continue;
    if (atomic_compare_exchange_strong_explicit(&e->state, &s,
                                                (s & ~(uint64_t)3) + CC_FE_GEN + CC_FE_DRAINED,
                                                memory_order_acq_rel, memory_order_relaxed))
      cc_front_count_up(&t->drained);
    else
      (void)sink(r, &rec, 0);
  }
  if (other) cc_asym_remote_end(&t->asym);
}

void cc_front_drain(cc_front_sink sink, void *r) {
  for (front_table *t = atomic_load_explicit(&tables, memory_order_acquire); t; t = t->next)
    drain_table(t, sink, r);
}

int cc_front_was_freed(uint64_t addr, cc_mem_rec *out) {
  int found = 0;
  pthread_mutex_lock(&tables_lock);
  for (front_table *t = atomic_load_explicit(&tables, memory_order_acquire); t && !found;
       t = t->next)
    for (int i = 0; i < CC_FRONT_ENTRIES && !found; i++) {
      front_entry *e = &t->e[i];
      uint64_t s = atomic_load_explicit(&e->state, memory_order_acquire);
      if ((s & 3) != CC_FE_FREE || s == 0) continue; /* never used, or being written */
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
