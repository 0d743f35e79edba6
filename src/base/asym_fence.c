/*
 * asym_fence.c -- the owner records and the remote side of asymmetric fences (asym_fence.h).
 *
 * The argument. An owner's section is: store busy = 1; load fast; if it is FAST, update with
 * plain stores; store busy = 0. A remote update, when the owner is fast: fast FAST -> REVOKING
 * (compare-and-swap); membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED); wait until busy is 0;
 * fast = SLOW; update.
 * The membarrier makes every running thread of the process execute a full memory barrier (and
 * a thread that is not running passed one when it was switched out). So in the owner's order,
 * that barrier came either before its load of fast, which then reads 0 and the owner does not
 * use plain stores; or after its store of busy = 1, which the remote side then sees and waits
 * out (the release of busy = 0 makes the owner's plain stores visible to it). Either way no
 * plain store of the owner's races the remote update, and the owner needs no fence of its own.
 *
 * Turning fast mode back on is the owner's: fast SLOW -> FAST; full fence; if a remote update
 * is under way (remote > 0), FAST -> SLOW again. A remote side increments remote (a full
 * barrier) before it reads fast; so either it reads FAST and revokes as above, or the owner's
 * read of remote sees the increment and the owner stays slow. A remote side that reads
 * REVOKING waits for SLOW: the revocation under way is complete then. One that reads SLOW
 * goes on at once, with no lock: the owner has seen SLOW since its last section (SLOW is only
 * stored after a revocation's membarrier, or by the owner itself).
 *
 * Where membarrier is missing or refused (old kernels, seccomp filters), no owner is ever
 * fast, and every update is the compare-and-swap the callers do otherwise.
 */
#define _GNU_SOURCE /* syscall, nanosleep */
#include "base/asym_fence.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>
#if defined(__linux__)
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#define RESUME_FIRST 64u
#define RESUME_MOST (1u << 20)

CC_TLS_IE _Thread_local cc_asym_owner *cc_tls_asym;

static pthread_once_t probe_once = PTHREAD_ONCE_INIT;
static atomic_int available;
static pthread_mutex_t owners_lock = PTHREAD_MUTEX_INITIALIZER; /* the list, in_use */
static cc_asym_owner *owners;
static _Atomic uint64_t revocations;
static pthread_key_t owner_key;
static int key_ok;

/* Every running thread of the process executes a full barrier: 1 when done. */
static int heavy_barrier(void) {
#if defined(__linux__) && defined(SYS_membarrier)
  return syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0;
#else
  return 0;
#endif
}

static void owner_exit(void *arg) {
  cc_asym_owner *o = arg;
  cc_asym_release(o); /* not inside a section: this is the thread's end */
  pthread_mutex_lock(&owners_lock);
  o->in_use = 0;
  pthread_mutex_unlock(&owners_lock);
  cc_tls_asym = NULL;
}

static void probe(void) {
  if (pthread_key_create(&owner_key, owner_exit) != 0) return;
  key_ok = 1;
#if defined(__linux__) && defined(SYS_membarrier)
  long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
  if (cmds < 0 || !(cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED)) return;
  if (syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) != 0) return;
  atomic_store(&available, 1);
#endif
}

int cc_asym_available(void) {
  pthread_once(&probe_once, probe);
  return atomic_load(&available);
}

uint64_t cc_asym_revocations(void) { return atomic_load(&revocations); }

cc_asym_owner *cc_asym_mine(void) {
  if (CC_LIKELY(cc_tls_asym != NULL)) return cc_tls_asym;
  pthread_once(&probe_once, probe);
  if (!key_ok) return NULL;
  pthread_mutex_lock(&owners_lock);
  cc_asym_owner *o = owners;
  while (o && o->in_use) o = o->next;
  int fresh = o == NULL;
  if (fresh) o = cc_raw_aligned_calloc(64, sizeof *o);
  if (o) o->in_use = 1;
  pthread_mutex_unlock(&owners_lock);
  if (!o) return NULL;
  if (pthread_setspecific(owner_key, o) != 0) {
    pthread_mutex_lock(&owners_lock);
    o->in_use = 0;
    pthread_mutex_unlock(&owners_lock);
    if (fresh) free(o);
    return NULL;
  }
  if (fresh) {
    pthread_mutex_lock(&owners_lock);
    o->next = owners;
    owners = o;
    pthread_mutex_unlock(&owners_lock);
  }
  cc_tls_asym = o;
  cc_asym_adopt(o);
  return o;
}

void cc_asym_adopt(cc_asym_owner *o) {
  pthread_once(&probe_once, probe);
  o->slow_ops = 0;
  o->resume_at = RESUME_FIRST / 2; /* cc_asym_resume doubles it */
  cc_asym_resume(o);
}

void cc_asym_release(cc_asym_owner *o) {
  atomic_store_explicit(&o->fast, CC_ASYM_SLOW, memory_order_seq_cst);
}

void cc_asym_resume(cc_asym_owner *o) {
  o->slow_ops = 0;
  if (o->resume_at < RESUME_MOST) o->resume_at *= 2;
  if (!atomic_load_explicit(&available, memory_order_relaxed)) return;
  int slow = CC_ASYM_SLOW;
  if (!atomic_compare_exchange_strong_explicit(&o->fast, &slow, CC_ASYM_FAST, memory_order_seq_cst,
                                               memory_order_seq_cst))
    return; /* being revoked right now */
  atomic_thread_fence(memory_order_seq_cst);
  if (atomic_load_explicit(&o->remote, memory_order_seq_cst) != 0) {
    int fast = CC_ASYM_FAST; /* (a revoker may have taken it from here already) */
    atomic_compare_exchange_strong_explicit(&o->fast, &fast, CC_ASYM_SLOW, memory_order_seq_cst,
                                            memory_order_seq_cst);
  }
}

void cc_asym_remote_begin(cc_asym_owner *h) {
  if (!h || h == cc_tls_asym) return;
  atomic_fetch_add_explicit(&h->remote, 1, memory_order_seq_cst);
  for (unsigned spin = 0;; spin++) {
    int f = atomic_load_explicit(&h->fast, memory_order_seq_cst);
    if (f == CC_ASYM_SLOW) return; /* and stays so until cc_asym_remote_end */
    if (f == CC_ASYM_FAST) {
      if (!atomic_compare_exchange_strong_explicit(&h->fast, &f, CC_ASYM_REVOKING,
                                                   memory_order_seq_cst, memory_order_seq_cst))
        continue;
      if (!heavy_barrier()) {
        /* The kernel documents no failure once registered; should one happen, no owner is
         * made fast again, and this one's section (a few instructions) is waited out. */
        atomic_store(&available, 0);
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
      }
      for (unsigned n = 0; atomic_load_explicit(&h->busy, memory_order_acquire); n++)
        if (n >= 64) sched_yield();
      atomic_fetch_add_explicit(&revocations, 1, memory_order_relaxed);
      atomic_store_explicit(&h->fast, CC_ASYM_SLOW, memory_order_seq_cst);
      return;
    }
    /* Another thread is revoking it: done when it reads SLOW. */
    if (spin >= 64) sched_yield();
  }
}

void cc_asym_remote_end(cc_asym_owner *h) {
  if (!h || h == cc_tls_asym) return;
  atomic_fetch_sub_explicit(&h->remote, 1, memory_order_release);
}
