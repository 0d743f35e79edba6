/* test_memory_seen.c -- a copy's bounds check trusts the records this thread's last copies were
 * checked against (memory/bounds.c) only while the locked lookup would find the same: after a
 * free, a smaller allocation at the same address, a pinned-pool block handed out again for
 * fewer bytes, a change of users or flags, or a stream-ordered record waiting in a front table
 * that would evict it, the check takes the lock again. A random walk compares every copy check
 * with two locked range checks; threads check their own records while others churn the
 * registry (also under ThreadSanitizer: label `threads`). No GPU. */
#include "support.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#include "memory/memory.h"

static cc_registry *const reg = &cc_mem_registry;

static cc_mem_rec rec_at(uint64_t base, uint64_t size, cucore_mem_kind kind) {
  cc_mem_rec r;
  memset(&r, 0, sizeof r);
  r.base = base;
  r.size = size;
  r.kind = kind;
  r.ordinal = 0;
  return r;
}

static cucore_status copy(uint64_t dst, uint64_t src, uint64_t bytes) {
  return cc_mem_check_copy(dst, src, bytes, "test copy");
}

static const uint64_t host = 0x7e0000000000; /* a host range the copies read from */

static void a_free_or_a_smaller_allocation_is_seen(void **state) {
  (void)state;
  cc_mem_rec h = rec_at(host, 1 << 20, CUCORE_MEM_PINNED);
  assert_int_equal(cc_reg_insert(reg, &h, 1), CC_REG_OK);
  cc_mem_rec a = rec_at(0x500000000, 4096, CUCORE_MEM_DEVICE), out;
  assert_int_equal(cc_reg_insert(reg, &a, 1), CC_REG_OK);
  assert_int_equal(copy(a.base, host, 4096), CUCORE_OK); /* checked under the lock, kept */
  assert_int_equal(copy(a.base, host, 4096), CUCORE_OK); /* trusted */
  assert_int_equal(copy(a.base, host, 4097), CUCORE_OUT_OF_BOUNDS); /* never trusted past it */
  /* Freed, then a smaller allocation at the same address. */
  assert_int_equal(cc_reg_take(reg, a.base, NULL, NULL, 0, &out), CC_REG_OK);
  cc_mem_rec b = rec_at(a.base, 1024, CUCORE_MEM_DEVICE);
  assert_int_equal(cc_reg_insert(reg, &b, 1), CC_REG_OK);
  assert_int_equal(copy(a.base, host, 4096), CUCORE_OUT_OF_BOUNDS);
  assert_int_equal(copy(a.base, host, 1024), CUCORE_OK);
  assert_int_equal(copy(a.base, host, 1024), CUCORE_OK);
  /* Flags and users change the record: the next check looks again (and still passes). */
  assert_int_equal(cc_reg_use(reg, b.base, 0, 1, &out), CC_REG_OK);
  assert_int_equal(copy(b.base, host, 1024), CUCORE_OK);
  assert_int_equal(cc_reg_use(reg, b.base, 0, -1, &out), CC_REG_OK);
  /* Evicted by an overlapping insert (memory of a destroyed context handed out again). */
  cc_mem_rec c = rec_at(a.base + 512, 64, CUCORE_MEM_DEVICE);
  assert_int_equal(cc_reg_insert(reg, &c, 1), CC_REG_OK);
  assert_int_equal(copy(a.base, host, 1024), CUCORE_OUT_OF_BOUNDS); /* runs into c */
  assert_int_equal(cc_reg_take(reg, c.base, NULL, NULL, 0, &out), CC_REG_OK);
  assert_int_equal(cc_reg_take(reg, h.base, NULL, NULL, 0, &out), CC_REG_OK);
  assert_true(cc_reg_verify(reg));
}

static void a_pool_block_handed_out_again_is_seen(void **state) {
  (void)state;
  cc_hpool_block blk;
  memset(&blk, 0, sizeof blk);
  atomic_init(&blk.requested, 8192);
  atomic_init(&blk.state, CC_HPOOL_GEN * 3 + CC_HPOOL_IN_USE);
  cc_mem_rec lv = rec_at(0x600000000, 16384, CUCORE_MEM_PINNED_POOL), d, out;
  lv.flags = CC_REC_LIVE;
  lv.aux = (uint64_t)(uintptr_t)&blk;
  d = rec_at(0x610000000, 1 << 20, CUCORE_MEM_DEVICE);
  assert_int_equal(cc_reg_insert(reg, &lv, 0), CC_REG_OK);
  assert_int_equal(cc_reg_insert(reg, &d, 1), CC_REG_OK);
  assert_int_equal(copy(lv.base, d.base, 8192), CUCORE_OK);
  assert_int_equal(copy(lv.base, d.base, 8192), CUCORE_OK);
  /* The pool frees the block and hands it out again for 100 bytes, without the registry. */
  assert_true(cc_hpool_block_unuse(&blk, CC_HPOOL_GEN * 3 + CC_HPOOL_IN_USE));
  atomic_store(&blk.requested, 100);
  atomic_store(&blk.state, CC_HPOOL_GEN * 4 + CC_HPOOL_IN_USE);
  assert_int_equal(copy(lv.base, d.base, 8192), CUCORE_OUT_OF_BOUNDS);
  assert_int_equal(copy(lv.base, d.base, 100), CUCORE_OK);
  assert_int_equal(copy(lv.base, d.base, 100), CUCORE_OK);
  /* Freed and not handed out: lookups do not see it (unknown memory, which passes), and the
   * block's bytes are not trusted past what the record says. */
  assert_true(cc_hpool_block_unuse(&blk, CC_HPOOL_GEN * 4 + CC_HPOOL_IN_USE));
  assert_int_equal(copy(lv.base, d.base, 100), CUCORE_OK);
  assert_false(cc_reg_find(reg, lv.base, &out));
  assert_true(cc_reg_remove(reg, lv.base));
  assert_int_equal(cc_reg_take(reg, d.base, NULL, NULL, 0, &out), CC_REG_OK);
}

static void a_pending_front_record_is_drained_first(void **state) {
  (void)state;
  cc_mem_rec h = rec_at(host, 1 << 20, CUCORE_MEM_PINNED), out;
  assert_int_equal(cc_reg_insert(reg, &h, 1), CC_REG_OK);
  cc_mem_rec a = rec_at(0x700000000, 1 << 20, CUCORE_MEM_DEVICE);
  assert_int_equal(cc_reg_insert(reg, &a, 1), CC_REG_OK);
  assert_int_equal(copy(a.base, host, 1 << 20), CUCORE_OK);
  assert_int_equal(copy(a.base, host, 1 << 20), CUCORE_OK);
  /* A stream-ordered allocation inside it, recorded in this thread's table: the driver says the
   * old range is free (its context went), so a drain evicts it. The copy must see that. */
  cc_mem_rec f = rec_at(a.base + 4096, 65536, CUCORE_MEM_POOL);
  assert_true(cc_front_insert(&f));
  assert_true(cc_front_pending());
  assert_int_equal(copy(a.base, host, 1 << 20), CUCORE_OUT_OF_BOUNDS); /* runs into f */
  assert_false(cc_front_pending());                                    /* drained by that check */
  assert_int_equal(copy(f.base, host, 65536), CUCORE_OK);
  assert_int_equal(cc_reg_take(reg, f.base, NULL, NULL, 0, &out), CC_REG_OK);
  assert_int_equal(cc_reg_take(reg, h.base, NULL, NULL, 0, &out), CC_REG_OK);
  assert_false(cc_reg_find(reg, a.base, &out)); /* evicted */
}

/* Random records, frees, pool-block hand-outs and copies: each copy check agrees with two
 * locked range checks. */
#define SLOTS 24
static void random_walk_agrees_with_locked_checks(void **state) {
  (void)state;
  uint64_t base[SLOTS], size[SLOTS];
  int live[SLOTS] = {0};
  cc_hpool_block blk[4];
  memset(blk, 0, sizeof blk);
  uint64_t gen[4];
  for (int i = 0; i < 4; i++) {
    gen[i] = 1;
    atomic_init(&blk[i].state, CC_HPOOL_GEN);
    atomic_init(&blk[i].requested, 0);
    cc_mem_rec lv = rec_at(0x900000000 + (uint64_t)i * 0x100000, 0x80000, CUCORE_MEM_PINNED_POOL);
    lv.flags = CC_REC_LIVE;
    lv.aux = (uint64_t)(uintptr_t)&blk[i];
    assert_int_equal(cc_reg_insert(reg, &lv, 0), CC_REG_OK);
  }
  for (int i = 0; i < SLOTS; i++) base[i] = 0x800000000 + (uint64_t)i * 0x10000;
  srand(1234);
  int checks = 0, refused = 0;
  for (int step = 0; step < 40000; step++) {
    int op = rand() % 10, i = rand() % SLOTS, k = rand() % 4;
    cc_mem_rec out;
    if (op == 0) { /* allocate or free a plain record */
      if (live[i]) {
        assert_int_equal(cc_reg_take(reg, base[i], NULL, NULL, 0, &out), CC_REG_OK);
        live[i] = 0;
      } else {
        size[i] = 1 + (uint64_t)(rand() % 0x10000);
        cc_mem_rec r = rec_at(base[i], size[i], CUCORE_MEM_DEVICE);
        if (rand() % 2 && cc_front_insert(&r)) {
          live[i] = 1; /* recorded in this thread's table */
        } else {
          assert_int_equal(cc_reg_insert(reg, &r, 1), CC_REG_OK);
          live[i] = 1;
        }
      }
    } else if (op == 1) { /* a pool block freed and handed out again, lock-free */
      uint64_t s = atomic_load(&blk[k].state);
      if (s & CC_HPOOL_IN_USE) assert_true(cc_hpool_block_unuse(&blk[k], s));
      gen[k]++;
      atomic_store(&blk[k].requested, 1 + (uint64_t)(rand() % 0x80000));
      atomic_store(&blk[k].state, (atomic_load(&blk[k].state) & ~(uint64_t)3) | CC_HPOOL_IN_USE);
    } else { /* a copy between a slot or a block and a slot or a block */
      uint64_t a = rand() % 2 ? base[rand() % SLOTS]
                              : 0x900000000 + (uint64_t)(rand() % 4) * 0x100000;
      uint64_t b = rand() % 2 ? base[rand() % SLOTS]
                              : 0x900000000 + (uint64_t)(rand() % 4) * 0x100000;
      a += (uint64_t)(rand() % 64);
      uint64_t bytes = 1 + (uint64_t)(rand() % 0x11000);
      cucore_status got = copy(a, b, bytes);
      cucore_status want = cc_mem_check_range(a, bytes, "test copy", "destination");
      if (want == CUCORE_OK) want = cc_mem_check_range(b, bytes, "test copy", "source");
      if (got != want)
        fail_msg("step %d: copy of %llu bytes 0x%llx <- 0x%llx: %d, the locked checks say %d", step,
                 (unsigned long long)bytes, (unsigned long long)a, (unsigned long long)b, (int)got,
                 (int)want);
      checks++;
      refused += got != CUCORE_OK;
    }
  }
  printf("random walk: %d copy checks agreed with the locked checks (%d refused)\n", checks,
         refused);
  assert_true(refused > 100 && refused < checks - 100); /* both outcomes exercised */
  cc_mem_rec out;
  for (int i = 0; i < SLOTS; i++)
    if (live[i]) assert_int_equal(cc_reg_take(reg, base[i], NULL, NULL, 0, &out), CC_REG_OK);
  for (int i = 0; i < 4; i++) assert_true(cc_reg_remove(reg, 0x900000000 + (uint64_t)i * 0x100000));
  assert_true(cc_reg_verify(reg));
}

/* Threads copy between their own records while another frees and allocates others. */
typedef struct worker {
  int id, bad, iters;
} worker;

static atomic_int stop_churn;

static void *copier(void *arg) {
  worker *w = arg;
  uint64_t a = 0xa00000000 + (uint64_t)w->id * 0x1000000, b = a + 0x800000;
  cc_mem_rec ra = rec_at(a, 0x10000, CUCORE_MEM_DEVICE), rb = rec_at(b, 0x10000, CUCORE_MEM_PINNED);
  cc_mem_rec out;
  for (int i = 0; i < w->iters; i++) {
    if (cc_reg_insert(reg, &ra, 1) != CC_REG_OK || cc_reg_insert(reg, &rb, 1) != CC_REG_OK) {
      w->bad++;
      break;
    }
    for (int j = 0; j < 50; j++) {
      if (copy(a, b, 0x10000) != CUCORE_OK) w->bad++;
      if (copy(a + 8, b, 0x10000) != CUCORE_OUT_OF_BOUNDS) w->bad++;
    }
    if (cc_reg_take(reg, a, NULL, NULL, 0, &out) != CC_REG_OK) w->bad++;
    if (cc_reg_take(reg, b, NULL, NULL, 0, &out) != CC_REG_OK) w->bad++;
    /* Freed: unknown memory now, which a copy check lets through (CUCORE_MEM_CHECK_FOREIGN
     * off), but never against the old record's size. */
    if (copy(a, b, 0x20000) != CUCORE_OK) w->bad++;
  }
  return NULL;
}

/* Under valgrind (scripts/valgrind.sh sets CUCORE_UNDER_VALGRIND) threads run one at a time:
 * a churner that never yields can hold the copiers off for many minutes, so it yields each
 * round there and the copiers run fewer rounds. */
static int under_valgrind(void) { return getenv("CUCORE_UNDER_VALGRIND") != NULL; }

static void *churner(void *arg) {
  (void)arg;
  cc_mem_rec out;
  int yield_each = under_valgrind();
  for (uint64_t i = 0; !atomic_load(&stop_churn); i++) {
    if (yield_each || (i & 63) == 0) sched_yield();
    uint64_t base = 0xf00000000 + (i % 64) * 0x10000;
    cc_mem_rec r = rec_at(base, 0x8000, CUCORE_MEM_POOL);
    if (!cc_front_insert(&r)) (void)cc_reg_insert(reg, &r, 1);
    if (cc_front_take(base, NULL, NULL, &out) != CC_REG_OK)
      (void)cc_reg_take(reg, base, NULL, NULL, 0, &out);
  }
  return NULL;
}

static void threads_trust_only_what_holds(void **state) {
  (void)state;
  enum { N = 6 };
  int rounds = under_valgrind() ? 10 : 200;
  pthread_t t[N], c;
  worker w[N];
  atomic_store(&stop_churn, 0);
  assert_int_equal(pthread_create(&c, NULL, churner, NULL), 0);
  for (int i = 0; i < N; i++) {
    w[i] = (worker){.id = i, .iters = rounds};
    assert_int_equal(pthread_create(&t[i], NULL, copier, &w[i]), 0);
  }
  int bad = 0;
  for (int i = 0; i < N; i++) {
    pthread_join(t[i], NULL);
    bad += w[i].bad;
  }
  atomic_store(&stop_churn, 1);
  pthread_join(c, NULL);
  printf("threads: %d x %d rounds of 100 copy checks beside a churning thread, %d wrong\n", N,
         rounds, bad);
  assert_int_equal(bad, 0);
  assert_true(cc_reg_verify(reg));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_free_or_a_smaller_allocation_is_seen),
      cmocka_unit_test(a_pool_block_handed_out_again_is_seen),
      cmocka_unit_test(a_pending_front_record_is_drained_first),
      cmocka_unit_test(random_walk_agrees_with_locked_checks),
      cmocka_unit_test(threads_trust_only_what_holds),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
