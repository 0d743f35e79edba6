/* test_memory_hostpool.c -- the pinned pool's core (memory/host_pool_core.c) over a fake
 * allocator (malloc, counting calls, failing on demand): size classes, reuse, the cache limit,
 * the total limit, trimming, counters, a failing allocator retried after giving the cache back,
 * many threads allocating and freeing at once, and the thread caches: a second free refused,
 * other threads' caches counted, given back after a trim and on exit, and released by a pool's
 * destruction without serving a new pool made in the same memory. */
#include "support.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#include "memory/host_pool_core.h"

typedef struct fake {
  pthread_mutex_t lock;
  long allocs, releases, live;
  int fail_next;           /* the next n allocations fail */
  int fail_when_live_over; /* allocations fail while more blocks than this are live (0: never) */
} fake;

static int fake_alloc(void *ctx, size_t bytes, cc_hpool_block *b) {
  fake *f = ctx;
  pthread_mutex_lock(&f->lock);
  int fail = f->fail_next > 0 || (f->fail_when_live_over && f->live >= f->fail_when_live_over);
  if (f->fail_next > 0) f->fail_next--;
  if (!fail) {
    f->allocs++;
    f->live++;
  }
  pthread_mutex_unlock(&f->lock);
  if (fail) return 2; /* CUDA_ERROR_OUT_OF_MEMORY */
  b->base = malloc(bytes);
  if (!b->base) return 2;
  memset(b->base, 0xab, bytes < 64 ? bytes : 64);
  return 0;
}

static void fake_release(void *ctx, cc_hpool_block *b) {
  fake *f = ctx;
  pthread_mutex_lock(&f->lock);
  f->releases++;
  f->live--;
  pthread_mutex_unlock(&f->lock);
  free(b->base);
}

static void init(cc_hpool *p, fake *f, size_t max_cached, size_t max_total) {
  memset(f, 0, sizeof *f);
  pthread_mutex_init(&f->lock, NULL);
  cc_hpool_allocator ops = {fake_alloc, fake_release, f};
  cc_hpool_init(p, &ops, max_cached, max_total);
}

static void size_classes_waste_at_most_a_quarter(void **state) {
  (void)state;
  size_t cb = 0, prev = 0;
  assert_int_equal(cc_hpool_class_of(0, &cb), -1);
  assert_int_equal(cc_hpool_class_of(1, &cb), 0);
  assert_int_equal(cb, 4096);
  assert_int_equal(cc_hpool_class_of(4096, &cb), 0);
  assert_int_equal(cc_hpool_class_of(4097, &cb), 1);
  assert_int_equal(cb, 5120);
  assert_int_equal(cc_hpool_class_of(8192, &cb), 4);
  assert_int_equal(cb, 8192);
  assert_int_equal(cc_hpool_class_of(8193, &cb), 5);
  assert_int_equal(cb, 10240);
  assert_int_equal(cc_hpool_class_of((size_t)1 << 40, &cb), CC_HPOOL_CLASSES - 1);
  assert_int_equal(cb, (size_t)1 << 40);
  assert_int_equal(cc_hpool_class_of(((size_t)1 << 40) + 1, &cb), -1);
  /* Every class holds its requests, wastes at most 25 % above 4 KiB, and classes ascend. */
  for (int c = 0; c < CC_HPOOL_CLASSES; c++) {
    size_t b = cc_hpool_class_bytes(c);
    assert_true(b > prev);
    assert_int_equal(cc_hpool_class_of(b, NULL), c);
    if (c > 0) assert_int_equal(cc_hpool_class_of(prev + 1, NULL), c);
    prev = b;
  }
  srand(7);
  for (int i = 0; i < 100000; i++) {
    size_t bytes = 1 + ((size_t)rand() * (size_t)rand()) % ((size_t)1 << 36);
    int c = cc_hpool_class_of(bytes, &cb);
    assert_true(c >= 0);
    assert_true(cb >= bytes);
    if (bytes > 4096) assert_true(cb * 4 <= bytes * 5 + 4);
    if (c > 0) assert_true(cc_hpool_class_bytes(c - 1) < bytes);
  }
  /* The public form. */
  assert_ok(cucore_host_pool_get_class_size(100000, &cb));
  assert_int_equal(cb, 114688); /* 64 KiB x 1.75 */
  assert_status(cucore_host_pool_get_class_size(0, &cb), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_host_pool_get_class_size(((size_t)1 << 40) + 1, &cb),
                CUCORE_INVALID_ARGUMENT);
}

static void blocks_are_reused_after_warm_up(void **state) {
  (void)state;
  cc_hpool p;
  fake f;
  init(&p, &f, 0, 0);
  cc_hpool_block *a, *b;
  assert_int_equal(cc_hpool_get(&p, 100000, &a, NULL), 0);
  assert_int_equal(cc_hpool_get(&p, 100, &b, NULL), 0);
  assert_int_equal(f.allocs, 2);
  cucore_host_pool_stats s;
  cc_hpool_stats(&p, &s);
  assert_int_equal(s.in_use_blocks, 2);
  assert_int_equal(s.in_use_bytes, 100100);
  assert_int_equal(s.in_use_capacity, 114688 + 4096);
  assert_int_equal(s.misses, 2);
  assert_true(cc_hpool_free_block(&p, a));
  cc_hpool_block *a2;
  assert_int_equal(cc_hpool_get(&p, 110000, &a2, NULL), 0); /* same class: the same block */
  assert_ptr_equal(a2, a);
  assert_int_equal(f.allocs, 2);
  cc_hpool_stats(&p, &s);
  assert_int_equal(s.hits, 1);
  assert_int_equal(s.cached_blocks, 0);
  assert_int_equal(s.reserved_high, 114688 + 4096);
  for (int i = 0; i < 1000; i++) { /* the steady state: no allocator calls */
    assert_true(cc_hpool_free_block(&p, a2));
    assert_int_equal(cc_hpool_get(&p, 110000, &a2, NULL), 0);
  }
  assert_int_equal(f.allocs, 2);
  assert_true(cc_hpool_free_block(&p, a2));
  assert_true(cc_hpool_free_block(&p, b));
  cc_hpool_stats(&p, &s);
  assert_int_equal(s.in_use_blocks, 0);
  assert_int_equal(s.in_use_bytes, 0);
  assert_int_equal(s.cached_blocks, 2);
  assert_int_equal(s.cached_bytes, 114688 + 4096);
  cc_hpool_trim(&p, 5000); /* largest first: the 112 KiB block goes, the 4 KiB one stays */
  cc_hpool_stats(&p, &s);
  assert_int_equal(s.cached_bytes, 4096);
  assert_int_equal(s.driver_frees, 1);
  assert_int_equal(f.releases, 1);
  cc_hpool_reset_high(&p);
  cc_hpool_stats(&p, &s);
  assert_int_equal(s.reserved_high, 4096);
  assert_int_equal(s.hits, 0);
  cc_hpool_fini(&p);
  assert_int_equal(f.live, 0);
}

static void limits_on_cache_and_total(void **state) {
  (void)state;
  cc_hpool p;
  fake f;
  init(&p, &f, 8192, 20480); /* keep two 4 KiB blocks; at most 20 KiB pinned */
  cc_hpool_block *b[8];
  for (int i = 0; i < 5; i++) assert_int_equal(cc_hpool_get(&p, 4096, &b[i], NULL), 0);
  assert_int_equal(cc_hpool_get(&p, 1, &b[5], NULL), CC_HPOOL_LIMIT); /* 24 KiB > 20 KiB */
  for (int i = 0; i < 5; i++) assert_true(cc_hpool_free_block(&p, b[i]));
  cucore_host_pool_stats s;
  cc_hpool_stats(&p, &s);
  assert_int_equal(s.cached_bytes, 8192); /* the other three went back to the allocator */
  assert_int_equal(f.releases, 3);
  /* A 16 KiB block: the cache makes room under the total (8 + 16 > 20 KiB). */
  assert_int_equal(cc_hpool_get(&p, 16384, &b[0], NULL), 0);
  cc_hpool_stats(&p, &s);
  assert_true(s.cached_bytes + s.in_use_capacity <= 20480);
  assert_true(cc_hpool_free_block(&p, b[0]));
  cc_hpool_fini(&p);
  assert_int_equal(f.live, 0);
}

static void a_failing_allocator_gets_the_cache_back_first(void **state) {
  (void)state;
  cc_hpool p;
  fake f;
  init(&p, &f, 0, 0);
  cc_hpool_block *a, *b;
  assert_int_equal(cc_hpool_get(&p, 65536, &a, NULL), 0);
  assert_true(cc_hpool_free_block(&p, a));
  f.fail_when_live_over = 1; /* out of pinnable memory while any block exists */
  assert_int_equal(cc_hpool_get(&p, 8192, &b, NULL), 0); /* retried after the cache went back */
  cucore_host_pool_stats s;
  cc_hpool_stats(&p, &s);
  assert_int_equal(s.cached_blocks, 0);
  assert_int_equal(s.in_use_blocks, 1);
  f.fail_next = 5;
  cc_hpool_block *c;
  assert_int_equal(cc_hpool_get(&p, 100, &c, NULL), 2); /* the allocator's error */
  cc_hpool_stats(&p, &s);
  assert_int_equal(s.in_use_blocks, 1); /* counters undone */
  assert_int_equal(s.in_use_capacity, 8192);
  f.fail_next = 0;
  f.fail_when_live_over = 0;
  assert_true(cc_hpool_free_block(&p, b));
  cc_hpool_fini(&p);
  assert_int_equal(f.live, 0);
}

typedef struct job {
  cc_hpool *p;
  int seed;
  int bad;
} job;

static void *churn(void *arg) {
  job *j = arg;
  unsigned s = (unsigned)j->seed;
  cc_hpool_block *held[16] = {0};
  size_t sz[16];
  for (int i = 0; i < 20000; i++) {
    int k = (int)(rand_r(&s) % 16);
    if (held[k]) {
      /* The block is the caller's while held: a stamp written at get survives. */
      if (*(unsigned char *)held[k]->base != (unsigned char)(k + j->seed)) j->bad++;
      assert_true(cc_hpool_free_block(j->p, held[k]));
      held[k] = NULL;
    } else {
      sz[k] = 1 + rand_r(&s) % 200000;
      if (cc_hpool_get(j->p, sz[k], &held[k], NULL) != 0) {
        j->bad++;
        held[k] = NULL;
      } else {
        *(unsigned char *)held[k]->base = (unsigned char)(k + j->seed);
      }
    }
  }
  for (int k = 0; k < 16; k++)
    if (held[k]) assert_true(cc_hpool_free_block(j->p, held[k]));
  return NULL;
}

static void many_threads_at_once(void **state) {
  (void)state;
  cc_hpool p;
  fake f;
  init(&p, &f, 0, 0);
  pthread_t t[4];
  job j[4];
  for (int i = 0; i < 4; i++) {
    j[i] = (job){&p, i * 31 + 1, 0};
    pthread_create(&t[i], NULL, churn, &j[i]);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(t[i], NULL);
    assert_int_equal(j[i].bad, 0);
  }
  cucore_host_pool_stats s;
  cc_hpool_stats(&p, &s);
  assert_int_equal(s.in_use_blocks, 0);
  assert_int_equal(s.in_use_bytes, 0);
  assert_int_equal(s.in_use_capacity, 0);
  assert_int_equal((long)s.cached_blocks, f.live);
  print_message("4 threads x 20000 operations: %llu hits, %llu misses, %ld allocator calls\n",
                (unsigned long long)s.hits, (unsigned long long)s.misses, f.allocs);
  assert_true(s.hits > 10 * s.misses);
  cc_hpool_fini(&p);
  assert_int_equal(f.live, 0);
}

/* ---- thread caches --------------------------------------------------------------------------- */

static void a_recent_block_is_freed_once(void **state) {
  (void)state;
  cc_hpool p;
  fake f;
  init(&p, &f, 0, 0);
  cc_hpool_block *b;
  assert_int_equal(cc_hpool_get(&p, 5000, &b, NULL), 0);
  assert_int_equal(atomic_load(&b->requested), 5000);
  assert_true(cc_hpool_free_recent(&p, b->base));
  assert_false(cc_hpool_free_recent(&p, b->base)); /* a second free: refused */
  assert_false(cc_hpool_free_block(&p, b));        /* and through the record's path too */
  cucore_host_pool_stats s;
  cc_hpool_stats(&p, &s);
  assert_int_equal(s.in_use_blocks, 0);
  assert_int_equal(s.cached_blocks, 1);
  assert_int_equal(s.cached_bytes, 5120);
  /* A block freed by another path is no longer this thread's to free. */
  cc_hpool_block *c;
  assert_int_equal(cc_hpool_get(&p, 5000, &c, NULL), 0);
  assert_ptr_equal(c, b); /* the thread's cache */
  assert_true(cc_hpool_free_block(&p, c));
  assert_false(cc_hpool_free_recent(&p, c->base));
  /* Busy blocks are refused; the caller's checked path explains why. */
  assert_int_equal(cc_hpool_get(&p, 5000, &c, NULL), 0);
  atomic_fetch_or(&c->state, CC_HPOOL_BUSY);
  assert_false(cc_hpool_free_recent(&p, c->base));
  assert_false(cc_hpool_free_block(&p, c));
  atomic_fetch_and(&c->state, ~(uint64_t)CC_HPOOL_BUSY);
  assert_true(cc_hpool_free_block(&p, c));
  /* Another pool's block is not this pool's to free. */
  cc_hpool q;
  fake g;
  init(&q, &g, 0, 0);
  assert_int_equal(cc_hpool_get(&q, 100, &c, NULL), 0);
  assert_false(cc_hpool_free_recent(&p, c->base));
  assert_false(cc_hpool_free_block(&p, c));
  assert_true(cc_hpool_free_recent(&q, c->base));
  cc_hpool_fini(&q);
  assert_int_equal(g.live, 0);
  cc_hpool_fini(&p);
  assert_int_equal(f.live, 0);
}

typedef struct holder {
  cc_hpool *p;
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int step, done; /* the main thread moves `step`; the holder answers with `done` */
  int ok;
} holder;

static void wait_step(holder *h, int step) {
  pthread_mutex_lock(&h->lock);
  while (h->step < step) pthread_cond_wait(&h->cond, &h->lock);
  pthread_mutex_unlock(&h->lock);
}

static void set(holder *h, int *field, int value) {
  pthread_mutex_lock(&h->lock);
  *field = value;
  pthread_cond_broadcast(&h->cond);
  pthread_mutex_unlock(&h->lock);
}

static void wait_done(holder *h, int done) {
  pthread_mutex_lock(&h->lock);
  while (h->done < done) pthread_cond_wait(&h->cond, &h->lock);
  pthread_mutex_unlock(&h->lock);
}

/* Keeps a 64 KiB block in its cache (step 1), uses the pool again after a trim (step 2), and
 * exits. */
static void *hold_in_cache(void *arg) {
  holder *h = arg;
  cc_hpool_block *b;
  h->ok = cc_hpool_get(h->p, 65536, &b, NULL) == 0 && cc_hpool_free_recent(h->p, b->base);
  set(h, &h->done, 1);
  wait_step(h, 2);
  h->ok = h->ok && cc_hpool_get(h->p, 100, &b, NULL) == 0 && cc_hpool_free_recent(h->p, b->base);
  set(h, &h->done, 2);
  return NULL;
}

static void another_threads_cache_comes_back(void **state) {
  (void)state;
  cc_hpool p;
  fake f;
  init(&p, &f, 0, 0);
  holder h = {.p = &p, .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};
  pthread_t t;
  pthread_create(&t, NULL, hold_in_cache, &h);
  wait_done(&h, 1);
  cucore_host_pool_stats s;
  cc_hpool_stats(&p, &s); /* the other thread's counts are in the pool's */
  assert_int_equal(s.cached_blocks, 1);
  assert_int_equal(s.cached_bytes, 65536);
  assert_int_equal(s.in_use_blocks, 0);
  cc_hpool_trim(&p, 0); /* the block sits in the other thread's cache: it stays for now */
  assert_int_equal(f.live, 1);
  set(&h, &h.step, 2); /* its next call gives the cache back to the pool's lists */
  wait_done(&h, 2);
  pthread_join(t, NULL); /* and its exit, the 4 KiB block it freed last */
  assert_true(h.ok);
  cc_hpool_stats(&p, &s);
  assert_int_equal(s.cached_blocks, 2);
  assert_int_equal(s.cached_bytes, 65536 + 4096);
  assert_int_equal(s.hits, 0);
  assert_int_equal(s.misses, 2);
  cc_hpool_trim(&p, 0);
  assert_int_equal(f.live, 0);
  cc_hpool_stats(&p, &s);
  assert_int_equal(s.cached_blocks, 0);
  assert_int_equal(s.driver_frees, 2);
  cc_hpool_fini(&p);
}

/* Keeps a block in its cache, then (after the pool is destroyed) uses a new pool made in the
 * same memory. */
static void *outlive_the_pool(void *arg) {
  holder *h = arg;
  cc_hpool_block *b;
  h->ok = cc_hpool_get(h->p, 8192, &b, NULL) == 0 && cc_hpool_free_recent(h->p, b->base);
  set(h, &h->done, 1);
  wait_step(h, 2);
  h->ok = h->ok && cc_hpool_get(h->p, 8192, &b, NULL) == 0 && b->pool == h->p && b->base != NULL;
  h->ok = h->ok && cc_hpool_free_recent(h->p, b->base);
  set(h, &h->done, 2);
  return NULL;
}

static void a_destroyed_pool_releases_what_threads_cache(void **state) {
  (void)state;
  cc_hpool p;
  fake f, g;
  init(&p, &f, 0, 0);
  holder h = {.p = &p, .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};
  pthread_t t;
  pthread_create(&t, NULL, outlive_the_pool, &h);
  wait_done(&h, 1);
  cc_hpool_fini(&p); /* the block in the other thread's cache goes back too */
  assert_int_equal(f.live, 0);
  init(&p, &g, 0, 0); /* a new pool at the same address: the stale cache must not serve it */
  set(&h, &h.step, 2);
  wait_done(&h, 2);
  pthread_join(t, NULL);
  assert_true(h.ok);
  assert_int_equal(g.allocs, 1); /* pinned afresh */
  cc_hpool_fini(&p);
  assert_int_equal(g.live, 0);
}

/* ---- a second free racing the holder's own ------------------------------------------------- */

enum { RACE_ROUNDS = 4000, RACE_KEEP = 24 };

typedef struct free_race {
  cc_hpool *p;
  _Atomic(cc_hpool_block *) b;
  atomic_int round, ready, freed; /* ready/freed: how many of the two reached the round */
  int holder_won, other_won, both, neither, holder_fast;
  void *kept[2][RACE_KEEP];
} free_race;

static void spin_until(atomic_int *v, int value) {
  for (unsigned n = 0; atomic_load(v) < value; n++)
    if (n > 100) sched_yield();
}

/* The holder allocates a block each round and frees it against the other thread's free. */
static void *race_holder(void *arg) {
  free_race *r = arg;
  for (int i = 1; i <= RACE_ROUNDS; i++) {
    cc_hpool_block *b;
    assert_int_equal(cc_hpool_get(r->p, 3000, &b, NULL), 0);
    /* Fast again each round (the other thread's frees revoke it), where membarrier works. */
    cc_asym_resume(cc_tls_asym);
    if (atomic_load(&cc_tls_asym->fast) == CC_ASYM_FAST) r->holder_fast++;
    atomic_store(&r->b, b);
    atomic_store(&r->round, i);
    atomic_fetch_add(&r->ready, 1);
    spin_until(&r->ready, 2 * i);
    /* Sometimes at once, sometimes while the other's free is revoking or done. */
    for (volatile unsigned k = 0, n = (unsigned)(i * 2654435761u) % 4096; k < n; k++) {}
    int won = cc_hpool_free_recent(r->p, b->base);
    r->holder_won += won;
    atomic_fetch_add(&r->freed, 1);
    spin_until(&r->freed, 2 * i);
  }
  for (int k = 0; k < RACE_KEEP; k++) {
    cc_hpool_block *b;
    assert_int_equal(cc_hpool_get(r->p, 3000, &b, NULL), 0);
    r->kept[0][k] = b;
  }
  return NULL;
}

static void *race_other(void *arg) {
  free_race *r = arg;
  for (int i = 1; i <= RACE_ROUNDS; i++) {
    spin_until(&r->round, i);
    cc_hpool_block *b = atomic_load(&r->b);
    atomic_fetch_add(&r->ready, 1);
    spin_until(&r->ready, 2 * i);
    r->other_won += cc_hpool_free_block(r->p, b);
    atomic_fetch_add(&r->freed, 1);
    spin_until(&r->freed, 2 * i);
  }
  for (int k = 0; k < RACE_KEEP; k++) {
    cc_hpool_block *b;
    assert_int_equal(cc_hpool_get(r->p, 3000, &b, NULL), 0);
    r->kept[1][k] = b;
  }
  return NULL;
}

static void a_free_racing_the_holders_free_is_refused(void **state) {
  (void)state;
  cc_hpool p;
  fake f;
  init(&p, &f, 0, 0);
  free_race r = {.p = &p};
  pthread_t h, o;
  uint64_t revoked = cc_asym_revocations();
  assert_int_equal(pthread_create(&h, NULL, race_holder, &r), 0);
  assert_int_equal(pthread_create(&o, NULL, race_other, &r), 0);
  assert_int_equal(pthread_join(h, NULL), 0);
  assert_int_equal(pthread_join(o, NULL), 0);
  revoked = cc_asym_revocations() - revoked;
  print_message("%d rounds: the holder's free won %d (fast in %d rounds), the other's %d; %llu "
                "revocations\n",
                RACE_ROUNDS, r.holder_won, r.holder_fast, r.other_won, (unsigned long long)revoked);
  /* Each round exactly one of the two frees took the block. */
  assert_int_equal(r.holder_won + r.other_won, RACE_ROUNDS);
  if (cc_asym_available()) assert_true(r.holder_fast > 0);
  /* No block was put back twice: what both threads hold now is all different. */
  for (int i = 0; i < 2 * RACE_KEEP; i++)
    for (int j = i + 1; j < 2 * RACE_KEEP; j++)
      assert_ptr_not_equal(r.kept[i / RACE_KEEP][i % RACE_KEEP],
                           r.kept[j / RACE_KEEP][j % RACE_KEEP]);
  cucore_host_pool_stats st;
  cc_hpool_stats(&p, &st);
  assert_int_equal(st.in_use_blocks, 2 * RACE_KEEP);
  for (int i = 0; i < 2 * RACE_KEEP; i++)
    assert_true(cc_hpool_free_block(&p, r.kept[i / RACE_KEEP][i % RACE_KEEP]));
  cc_hpool_stats(&p, &st);
  assert_int_equal(st.in_use_blocks, 0);
  assert_int_equal((long)st.cached_blocks, f.live);
  cc_hpool_fini(&p);
  assert_int_equal(f.live, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(size_classes_waste_at_most_a_quarter),
      cmocka_unit_test(blocks_are_reused_after_warm_up),
      cmocka_unit_test(limits_on_cache_and_total),
      cmocka_unit_test(a_failing_allocator_gets_the_cache_back_first),
      cmocka_unit_test(many_threads_at_once),
      cmocka_unit_test(a_recent_block_is_freed_once),
      cmocka_unit_test(another_threads_cache_comes_back),
      cmocka_unit_test(a_destroyed_pool_releases_what_threads_cache),
      cmocka_unit_test(a_free_racing_the_holders_free_is_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
