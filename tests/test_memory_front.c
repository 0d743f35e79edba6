/* test_memory_front.c -- the threads' front tables of the process's registry
 * (memory/registry_front.c) without a GPU: a thread takes back what it recorded without the
 * tree; any other use of the registry drains the tables first and then sees every record;
 * refusals, stale records at the same base, a taken slot, records of exited threads, frees from
 * other threads, "freed already" answers, and owners racing drains (also under ThreadSanitizer:
 * label `threads`). */
#include "support.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "memory/memory.h"

static cc_registry *const reg = &cc_mem_registry;

static cc_mem_rec rec_at(uint64_t base, uint64_t size) {
  cc_mem_rec r;
  memset(&r, 0, sizeof r);
  r.base = base;
  r.size = size;
  r.kind = CUCORE_MEM_POOL;
  r.ordinal = 0;
  return r;
}

static int refuse(const cc_mem_rec *rec, void *ctx) {
  (void)rec;
  (void)ctx;
  return 0;
}

static void an_owner_takes_back_what_it_recorded(void **state) {
  (void)state;
  size_t before = cc_reg_count(reg);
  cc_mem_rec a = rec_at(0x7000000000, 4096), out;
  assert_true(cc_front_insert(&a));
  assert_int_equal(cc_front_take(a.base, refuse, NULL, &out), CC_REG_NOT_FOUND);   /* stays */
  assert_int_equal(cc_front_take(a.base + 8, NULL, NULL, &out), CC_REG_NOT_FOUND); /* inside */
  assert_int_equal(cc_front_take(a.base, NULL, NULL, &out), CC_REG_OK);
  assert_int_equal(out.base, a.base);
  assert_int_equal(out.size, 4096);
  assert_int_equal(out.kind, CUCORE_MEM_POOL);
  assert_int_equal(cc_front_take(a.base, NULL, NULL, &out), CC_REG_NOT_FOUND); /* once */
  assert_false(cc_reg_find(reg, a.base, &out));
  assert_true(cc_reg_was_freed(reg, a.base + 100, &out)); /* "freed already" still known */
  assert_int_equal(out.size, 4096);
  assert_int_equal(cc_reg_count(reg), before);
  /* Records with users or flags are not for the table. */
  cc_mem_rec f = rec_at(0x7000100000, 64);
  f.flags = CC_REC_ALIAS;
  assert_false(cc_front_insert(&f));
}

static void every_other_use_drains_the_tables_first(void **state) {
  (void)state;
  size_t before = cc_reg_count(reg);
  cc_mem_rec a = rec_at(0x7100000000, 1000), out;
  assert_true(cc_front_insert(&a));
  assert_true(cc_reg_find(reg, a.base + 999, &out)); /* a lookup sees it */
  assert_int_equal(out.size, 1000);
  assert_int_equal(cc_reg_count(reg), before + 1); /* now in the tree */
  assert_int_equal(cc_front_take(a.base, NULL, NULL, &out), CC_REG_NOT_FOUND);
  assert_int_equal(cc_reg_take(reg, a.base, NULL, NULL, 0, &out), CC_REG_OK);
  /* The same base handed out again: the stale record is replaced, not kept. */
  cc_mem_rec b1 = rec_at(0x7200000000, 100), b2 = rec_at(0x7200000000, 300);
  assert_true(cc_front_insert(&b1));
  assert_true(cc_front_insert(&b2));
  assert_true(cc_reg_find(reg, b2.base + 250, &out));
  assert_int_equal(out.size, 300);
  assert_int_equal(cc_reg_take(reg, b2.base, NULL, NULL, 0, &out), CC_REG_OK);
  assert_false(cc_reg_find(reg, b2.base, &out));
  /* Two bases sharing a slot: the second goes to the tree, after the first is drained. */
  cc_mem_rec x = rec_at(0x100000, 64), y = rec_at(0x104000, 64);
  assert_true(cc_front_insert(&x));
  assert_false(cc_front_insert(&y));
  assert_int_equal(cc_reg_insert(reg, &y, 1), CC_REG_OK);
  assert_true(cc_reg_find(reg, x.base, &out));
  assert_true(cc_reg_find(reg, y.base, &out));
  assert_int_equal(cc_reg_take(reg, x.base, NULL, NULL, 0, &out), CC_REG_OK);
  assert_int_equal(cc_reg_take(reg, y.base, NULL, NULL, 0, &out), CC_REG_OK);
  assert_int_equal(cc_reg_count(reg), before);
  assert_true(cc_reg_verify(reg));
}

typedef struct owner {
  uint64_t base;
  int took; /* the owner's later take of its record */
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int step;
} owner;

static void *record_and_exit(void *arg) {
  owner *o = arg;
  cc_mem_rec r = rec_at(o->base, 512);
  o->took = cc_front_insert(&r);
  return NULL;
}

static void *record_wait_take(void *arg) {
  owner *o = arg;
  cc_mem_rec r = rec_at(o->base, 512), out;
  int ok = cc_front_insert(&r);
  pthread_mutex_lock(&o->lock);
  o->step = 1;
  pthread_cond_broadcast(&o->cond);
  while (o->step < 2) pthread_cond_wait(&o->cond, &o->lock);
  pthread_mutex_unlock(&o->lock);
  o->took = ok ? (int)cc_front_take(o->base, NULL, NULL, &out) : -1;
  return NULL;
}

static void records_outlive_threads_and_other_threads_free(void **state) {
  (void)state;
  size_t before = cc_reg_count(reg);
  cc_mem_rec out;
  /* A thread records and exits: the next use of the registry finds its record. */
  owner gone = {.base = 0x7300000000};
  pthread_t t;
  pthread_create(&t, NULL, record_and_exit, &gone);
  pthread_join(t, NULL);
  assert_true(gone.took);
  assert_true(cc_reg_find(reg, gone.base + 1, &out));
  assert_int_equal(cc_reg_take(reg, gone.base, NULL, NULL, 0, &out), CC_REG_OK);
  /* Another thread frees a record: the owner's own take then finds nothing. */
  owner o = {.base = 0x7400000000,
             .lock = PTHREAD_MUTEX_INITIALIZER,
             .cond = PTHREAD_COND_INITIALIZER};
  pthread_create(&t, NULL, record_wait_take, &o);
  pthread_mutex_lock(&o.lock);
  while (o.step < 1) pthread_cond_wait(&o.cond, &o.lock);
  pthread_mutex_unlock(&o.lock);
  assert_int_equal(cc_reg_take(reg, o.base, NULL, NULL, 0, &out), CC_REG_OK);
  assert_int_equal(cc_reg_take(reg, o.base, NULL, NULL, 0, &out), CC_REG_NOT_FOUND);
  assert_true(cc_reg_was_freed(reg, o.base, &out));
  pthread_mutex_lock(&o.lock);
  o.step = 2;
  pthread_cond_broadcast(&o.cond);
  pthread_mutex_unlock(&o.lock);
  pthread_join(t, NULL);
  assert_int_equal(o.took, CC_REG_NOT_FOUND);
  assert_int_equal(cc_reg_count(reg), before);
}

static void *record_take_exit(void *arg) {
  uint64_t base = *(uint64_t *)arg;
  cc_mem_rec r = rec_at(base, 256), out;
  if (!cc_front_insert(&r)) return (void *)1;
  return (void *)(uintptr_t)(cc_front_take(base, NULL, NULL, &out) != CC_REG_OK);
}

/* Threads come and go: a new thread adopts the table of one that exited (with nothing live in
 * it), so the tables do not grow with the number of threads a program ever ran; a table whose
 * thread left a record live is drained before anyone adopts it. */
static void exited_threads_tables_are_adopted(void **state) {
  (void)state;
  size_t before = cc_reg_count(reg);
  uint64_t base = 0x7600000000;
  pthread_t t;
  void *bad = NULL;
  assert_int_equal(pthread_create(&t, NULL, record_take_exit, &base), 0);
  pthread_join(t, &bad);
  assert_null(bad);
  size_t tables = cc_front_table_count();
  for (int i = 0; i < 200; i++) {
    uint64_t b = base + (uint64_t)i * 0x10000;
    assert_int_equal(pthread_create(&t, NULL, record_take_exit, &b), 0);
    pthread_join(t, &bad);
    assert_null(bad);
  }
  assert_int_equal(cc_front_table_count(), tables); /* one thread at a time: no new table */
  /* A thread that leaves a record: its table is not adopted until a drain moved the record. */
  owner gone = {.base = 0x7700000000};
  assert_int_equal(pthread_create(&t, NULL, record_and_exit, &gone), 0);
  pthread_join(t, NULL);
  assert_true(gone.took);
  assert_true(cc_front_pending());
  uint64_t b = base + 0x1000000;
  assert_int_equal(pthread_create(&t, NULL, record_take_exit, &b), 0);
  pthread_join(t, &bad);
  assert_null(bad);
  cc_mem_rec out;
  assert_true(cc_reg_find(reg, gone.base, &out)); /* drains it */
  assert_false(cc_front_pending());
  assert_int_equal(cc_reg_take(reg, gone.base, NULL, NULL, 0, &out), CC_REG_OK);
  assert_int_equal(cc_reg_count(reg), before);
}

/* Owners record and free their own ranges while readers look them up (and so drain): each
 * record is freed exactly once, by the owner's table or by the tree, and lookups never see a
 * record that is not live or a torn one. */
typedef struct racer {
  int id;
  int bad;
  long front, tree;
} racer;

static _Atomic int racing;

static void *own_and_free(void *arg) {
  racer *w = arg;
  uint64_t region = 0x7800000000ull + ((uint64_t)w->id << 32);
  for (int i = 0; i < 20000; i++) {
    uint64_t base = region + (uint64_t)(i % 97) * 0x10000;
    cc_mem_rec r = rec_at(base, 0x1000 + (uint64_t)w->id), out;
    if (!cc_front_insert(&r) && cc_reg_insert(reg, &r, 1) != CC_REG_OK) w->bad++;
    if (cc_front_take(base, NULL, NULL, &out) == CC_REG_OK) {
      w->front++;
    } else if (cc_reg_take(reg, base, NULL, NULL, 0, &out) == CC_REG_OK) {
      w->tree++;
    } else {
      w->bad++;
    }
    if (out.base != base || out.size != 0x1000 + (uint64_t)w->id) w->bad++;
  }
  return NULL;
}

static void *look(void *arg) {
  racer *w = arg;
  unsigned seed = (unsigned)w->id;
  while (atomic_load(&racing)) {
    int who = (int)(rand_r(&seed) % 3);
    uint64_t base = 0x7800000000ull + ((uint64_t)who << 32) + (rand_r(&seed) % 97) * 0x10000;
    cc_mem_rec out;
    if (cc_reg_find(reg, base + 0x800, &out) &&
        (out.base != base || out.size != 0x1000 + (uint64_t)who))
      w->bad++;
  }
  return NULL;
}

static void owners_race_drains(void **state) {
  (void)state;
  size_t before = cc_reg_count(reg);
  pthread_t t[5];
  racer w[5];
  atomic_store(&racing, 1);
  for (int i = 0; i < 5; i++) {
    w[i] = (racer){.id = i < 3 ? i : 10 + i};
    pthread_create(&t[i], NULL, i < 3 ? own_and_free : look, &w[i]);
  }
  long front = 0, tree = 0;
  for (int i = 0; i < 3; i++) {
    pthread_join(t[i], NULL);
    assert_int_equal(w[i].bad, 0);
    front += w[i].front;
    tree += w[i].tree;
  }
  atomic_store(&racing, 0);
  for (int i = 3; i < 5; i++) {
    pthread_join(t[i], NULL);
    assert_int_equal(w[i].bad, 0);
  }
  print_message("3 owners x 20000 pairs: %ld freed from their tables, %ld from the tree (drained "
                "by lookups)\n",
                front, tree);
  assert_int_equal(front + tree, 60000);
  assert_int_equal(cc_reg_count(reg), before);
  assert_true(cc_reg_verify(reg));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(an_owner_takes_back_what_it_recorded),
      cmocka_unit_test(every_other_use_drains_the_tables_first),
      cmocka_unit_test(records_outlive_threads_and_other_threads_free),
      cmocka_unit_test(exited_threads_tables_are_adopted),
      cmocka_unit_test(owners_race_drains),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
