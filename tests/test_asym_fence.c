/* test_asym_fence.c -- asymmetric fences (base/asym_fence.h): an owner is fast where
 * membarrier(2) works, a remote update revokes it and keeps it out of its sections, the owner
 * turns fast again only when no remote update is under way, and (the point of it all) an
 * owner's plain-store sections and other threads' compare-and-swaps on the same word never
 * lose an update, however they interleave. */
#include "support.h"

#include <pthread.h>
#include <stdio.h>

#include "base/asym_fence.h"

static void an_owner_is_fast_where_membarrier_works(void **state) {
  (void)state;
  cc_asym_owner *o = cc_asym_mine();
  assert_non_null(o);
  assert_ptr_equal(cc_asym_mine(), o); /* one record a thread */
  int avail = cc_asym_available();
  printf("membarrier(2) %s: owners %s\n", avail ? "works" : "is not available",
         avail ? "start fast" : "always use compare-and-swap");
  assert_int_equal(atomic_load(&o->fast), avail);
  assert_int_equal(cc_asym_enter(o), avail);
  if (avail) cc_asym_exit(o);
  assert_int_equal(atomic_load(&o->busy), 0);
  /* This thread's own record needs no revocation. */
  uint64_t before = cc_asym_revocations();
  cc_asym_remote_begin(o);
  cc_asym_remote_end(o);
  cc_asym_remote_begin(NULL);
  cc_asym_remote_end(NULL);
  assert_int_equal(cc_asym_revocations(), before);
  assert_int_equal(atomic_load(&o->fast), avail);
}

/* ---- an owner thread driven step by step ----------------------------------------------------- */

typedef struct owner_thread {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int step, done;
  cc_asym_owner *o;
  int fast_after_resume;
} owner_thread;

static void wait_for(owner_thread *t, int *field, int value) {
  pthread_mutex_lock(&t->lock);
  while (*field < value) pthread_cond_wait(&t->cond, &t->lock);
  pthread_mutex_unlock(&t->lock);
}

static void set_to(owner_thread *t, int *field, int value) {
  pthread_mutex_lock(&t->lock);
  *field = value;
  pthread_cond_broadcast(&t->cond);
  pthread_mutex_unlock(&t->lock);
}

static void *owner_main(void *arg) {
  owner_thread *t = arg;
  t->o = cc_asym_mine();
  set_to(t, &t->done, 1);
  wait_for(t, &t->step, 1); /* the main thread began a remote update */
  cc_asym_resume(t->o);     /* refused while it is under way */
  t->fast_after_resume = atomic_load(&t->o->fast);
  set_to(t, &t->done, 2);
  wait_for(t, &t->step, 2); /* it ended */
  /* Slow updates until the count says to try again. */
  unsigned n = t->o->resume_at;
  for (unsigned i = 0; i < n && !atomic_load(&t->o->fast); i++) {
    assert_int_equal(cc_asym_enter(t->o), 0);
    cc_asym_slow_done(t->o);
  }
  t->fast_after_resume = atomic_load(&t->o->fast);
  set_to(t, &t->done, 3);
  return NULL;
}

static void a_remote_update_revokes_and_the_owner_resumes(void **state) {
  (void)state;
  if (!cc_asym_available()) {
    printf("membarrier(2) is not available: owners are never fast, nothing to revoke\n");
    return;
  }
  owner_thread t = {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, owner_main, &t), 0);
  wait_for(&t, &t.done, 1);
  assert_int_equal(atomic_load(&t.o->fast), 1);
  uint64_t before = cc_asym_revocations();
  cc_asym_remote_begin(t.o);
  assert_int_equal(atomic_load(&t.o->fast), 0);
  assert_int_equal(atomic_load(&t.o->remote), 1);
  assert_int_equal(cc_asym_revocations(), before + 1);
  /* A second remote update while the owner is slow: no second revocation. */
  cc_asym_remote_begin(t.o);
  assert_int_equal(cc_asym_revocations(), before + 1);
  cc_asym_remote_end(t.o);
  set_to(&t, &t.step, 1);
  wait_for(&t, &t.done, 2);
  assert_int_equal(t.fast_after_resume, 0); /* refused: an update was under way */
  cc_asym_remote_end(t.o);
  assert_int_equal(atomic_load(&t.o->remote), 0);
  set_to(&t, &t.step, 2);
  wait_for(&t, &t.done, 3);
  assert_int_equal(t.fast_after_resume, 1); /* after its count of slow updates */
  assert_int_equal(pthread_join(th, NULL), 0);
  /* The record outlives its thread, slow, and is reused by the next thread. */
  assert_int_equal(atomic_load(&t.o->fast), 0);
  cc_asym_remote_begin(t.o);
  cc_asym_remote_end(t.o);
  assert_int_equal(cc_asym_revocations(), before + 1);
}

/* ---- no lost update: an owner's plain sections against remote compare-and-swaps -------------- */

enum { OWNER_UPDATES = 400000, REMOTES = 2, REMOTE_UPDATES = 20000 };

typedef struct race {
  _Atomic uint64_t word;
  _Atomic(cc_asym_owner *) owner;
  atomic_int started, remotes_done, owner_done;
  uint64_t plain, slow;
} race;

static void *race_owner(void *arg) {
  race *r = arg;
  cc_asym_owner *o = cc_asym_mine();
  assert_non_null(o);
  atomic_store(&r->owner, o);
  while (atomic_load(&r->started) < REMOTES) {}
  /* At least OWNER_UPDATES, and on until every remote thread is done and some more (fast
   * again then: nothing revokes it). */
  int tail = 0;
  for (int i = 0; i < OWNER_UPDATES || tail < 1000; i++) {
    if (atomic_load_explicit(&r->remotes_done, memory_order_relaxed) == REMOTES) tail++;
    if (cc_asym_enter(o)) {
      /* Read, a little work, write back: a remote update in between would be lost. */
      uint64_t v = atomic_load_explicit(&r->word, memory_order_relaxed);
      for (volatile int k = 0; k < 8; k++) {}
      atomic_store_explicit(&r->word, v + 1, memory_order_relaxed);
      cc_asym_exit(o);
      r->plain++;
    } else {
      atomic_fetch_add(&r->word, 1);
      cc_asym_slow_done(o);
      /* Turn fast again far more often than cc_asym_slow_done would, so that plain sections
       * meet remote updates many times. */
      if (++r->slow % 16 == 0) cc_asym_resume(o);
    }
  }
  atomic_store(&r->owner_done, 1);
  return NULL;
}

static void *race_remote(void *arg) {
  race *r = arg;
  cc_asym_owner *o = atomic_load(&r->owner);
  atomic_fetch_add(&r->started, 1);
  for (int i = 0; i < REMOTE_UPDATES; i++) {
    cc_asym_remote_begin(o);
    uint64_t v = atomic_load(&r->word);
    while (!atomic_compare_exchange_weak(&r->word, &v, v + 1)) {}
    cc_asym_remote_end(o);
    /* Let the owner turn fast again between updates. */
    if (atomic_load(&r->owner_done)) continue;
    for (volatile int k = 0; k < 1000; k++) {}
  }
  atomic_fetch_add(&r->remotes_done, 1);
  return NULL;
}

static void owner_sections_never_lose_a_remote_update(void **state) {
  (void)state;
  race r = {0};
  pthread_t owner, remote[REMOTES];
  uint64_t before = cc_asym_revocations();
  assert_int_equal(pthread_create(&owner, NULL, race_owner, &r), 0);
  while (!atomic_load(&r.owner)) {}
  for (int i = 0; i < REMOTES; i++)
    assert_int_equal(pthread_create(&remote[i], NULL, race_remote, &r), 0);
  assert_int_equal(pthread_join(owner, NULL), 0);
  for (int i = 0; i < REMOTES; i++) assert_int_equal(pthread_join(remote[i], NULL), 0);
  uint64_t revoked = cc_asym_revocations() - before;
  printf("owner: %llu plain-store updates, %llu compare-and-swaps; %d remote updates; %llu "
         "revocations\n",
         (unsigned long long)r.plain, (unsigned long long)r.slow, REMOTES * REMOTE_UPDATES,
         (unsigned long long)revoked);
  assert_true(r.plain + r.slow >= OWNER_UPDATES);
  assert_int_equal(atomic_load(&r.word), r.plain + r.slow + REMOTES * REMOTE_UPDATES);
  if (cc_asym_available()) {
    assert_true(r.plain > 0); /* the owner was fast part of the time (at least at the end) */
    assert_true(revoked > 0); /* and revoked by the first remote update at the latest */
  } else {
    assert_int_equal(r.plain, 0);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(an_owner_is_fast_where_membarrier_works),
      cmocka_unit_test(a_remote_update_revokes_and_the_owner_resumes),
      cmocka_unit_test(owner_sections_never_lose_a_remote_update),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
