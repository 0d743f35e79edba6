/*
 * base/asym_fence.h -- asymmetric fences: a thread updates words that other threads may also
 * update, with plain stores instead of a compare-and-swap, while the rare other side pays.
 *
 * Why: a locked instruction costs 14-15 ns on a server's host, which is most of what a pinned
 * pool's alloc + free pair costs after warm-up. The word (a pool block's state) is updated by
 * its holder nearly always, and by another thread rarely (a free from another thread, a texture
 * that marks the block busy). So the holder runs a short section with plain stores, and a
 * thread that wants to update the same word first makes sure no holder is inside its section
 * and that none enters one until it is done (asym_fence.c explains how: membarrier(2)).
 *
 * Each thread that may hold words has an owner record (cc_asym_mine). Its state:
 *   fast    FAST: the owner's sections may use plain stores; SLOW: the owner uses
 *           compare-and-swap (the owner turns it back on after a while); REVOKING: another
 *           thread is making it SLOW;
 *   busy    1 while the owner is inside a section (written by the owner only);
 *   remote  how many other threads are updating words this owner may hold.
 * Where membarrier(2) is missing (or refused), no record is ever fast: every update is a
 * compare-and-swap, as if this file did not exist.
 */
#ifndef CUCORE_ASYM_FENCE_H
#define CUCORE_ASYM_FENCE_H

#include "base/base.h"

#include <stdatomic.h>

enum { CC_ASYM_SLOW = 0, CC_ASYM_FAST = 1, CC_ASYM_REVOKING = 2 };

typedef struct cc_asym_owner {
  atomic_int fast;
  atomic_int busy;
  atomic_int remote;
  unsigned slow_ops, resume_at; /* the owner's: compare-and-swap updates before it resumes */
  int in_use;                   /* a live thread owns it (records are reused, never freed) */
  struct cc_asym_owner *next;
} cc_asym_owner; /* 40 bytes: a structure that embeds one keeps it in one cache line with the
                  * owner's other hot words */

/* This thread's record, NULL until cc_asym_mine makes it. */
extern CC_TLS_IE _Thread_local cc_asym_owner *cc_tls_asym;

/* This thread's record, made (or reused from an exited thread) on first use, and put in fast
 * mode where membarrier(2) works; NULL when out of memory. Records are never freed, so a stale
 * pointer to one may always be read. */
cc_asym_owner *cc_asym_mine(void);

/* For a record embedded in a structure that one thread at a time updates with plain stores
 * (zeroed at first): `o` is now the calling thread's, and tried in fast mode. */
void cc_asym_adopt(cc_asym_owner *o);
/* The thread that used an embedded record is gone (and not inside a section): slow until the
 * next cc_asym_adopt. */
void cc_asym_release(cc_asym_owner *o);

/* The owner enters a section: 1 when it may update its words with plain stores (then
 * cc_asym_exit must follow, after a few instructions, nothing blocking); 0 when it must use
 * compare-and-swap (then cc_asym_slow_done after the update). */
static inline int cc_asym_enter(cc_asym_owner *o) {
  if (atomic_load_explicit(&o->fast, memory_order_relaxed) != CC_ASYM_FAST) return 0;
  atomic_store_explicit(&o->busy, 1, memory_order_relaxed);
  /* No fence here on purpose: a remote side's membarrier(2) orders this store and the load
   * below for us (see asym_fence.c). Only the compiler must keep them in this order. */
  atomic_signal_fence(memory_order_seq_cst);
  if (CC_LIKELY(atomic_load_explicit(&o->fast, memory_order_acquire) == CC_ASYM_FAST)) return 1;
  atomic_store_explicit(&o->busy, 0, memory_order_release);
  return 0;
}

static inline void cc_asym_exit(cc_asym_owner *o) {
  atomic_store_explicit(&o->busy, 0, memory_order_release);
}

/* The owner tries fast mode again (a fence; refused while a remote update is under way). */
void cc_asym_resume(cc_asym_owner *o);

/* Counts an update the owner made by compare-and-swap; after enough, tries fast mode again
 * (the count doubles each time, so a thread whose words others update often stays slow). */
static inline void cc_asym_slow_done(cc_asym_owner *o) {
  if (CC_UNLIKELY(++o->slow_ops >= o->resume_at)) cc_asym_resume(o);
}

/* Another thread is about to update (by compare-and-swap) a word that `holder` may update in
 * its sections: afterwards no section of `holder` runs until cc_asym_remote_end. Costs a
 * membarrier(2) when the holder was fast (it then stays slow for a while). NULL, or this
 * thread's own record: nothing to do. */
void cc_asym_remote_begin(cc_asym_owner *holder);
void cc_asym_remote_end(cc_asym_owner *holder);

/* ---- tests only ---------------------------------------------------------------------------- */

/* For tests/test_asym_fence.c, tests/test_memory_hostpool.c and the benchmarks (bench/memory.c,
 * bench/overhead.c), which report them; the library itself does not call these. */
/* 1 when membarrier(2) works here (owners can be fast). */
int cc_asym_available(void);
/* How many times a fast owner was revoked. */
uint64_t cc_asym_revocations(void);

#endif
