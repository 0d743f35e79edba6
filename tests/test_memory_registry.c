/* test_memory_registry.c -- the record of allocations (memory/registry.c) without a GPU: lookups
 * by any address inside a range, exact-start removal with reasons for refusals, users and
 * DLPack claims, the freed ring, eviction of stale ranges, pinned-pool block records, the AVL
 * invariants against a plain model under random operations, and concurrent readers and writers. */
#include "support.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "memory/memory.h"

static cc_mem_rec rec_at(uint64_t base, uint64_t size, cucore_mem_kind kind) {
  cc_mem_rec r;
  memset(&r, 0, sizeof r);
  r.base = base;
  r.size = size;
  r.kind = kind;
  r.ordinal = 0;
  return r;
}

static void lookups_find_the_range_containing_an_address(void **state) {
  (void)state;
  cc_registry *r = cc_reg_create();
  assert_non_null(r);
  cc_mem_rec a = rec_at(0x1000, 0x100, CUCORE_MEM_DEVICE),
             b = rec_at(0x2000, 0x10, CUCORE_MEM_POOL);
  assert_int_equal(cc_reg_insert(r, &a, 0), CC_REG_OK);
  assert_int_equal(cc_reg_insert(r, &b, 0), CC_REG_OK);
  cc_mem_rec out;
  assert_true(cc_reg_find(r, 0x1000, &out));
  assert_int_equal(out.base, 0x1000);
  assert_true(cc_reg_find(r, 0x10ff, &out)); /* the last byte */
  assert_int_equal(out.size, 0x100);
  assert_false(cc_reg_find(r, 0x1100, &out)); /* one past the end */
  assert_false(cc_reg_find(r, 0xfff, &out));
  assert_true(cc_reg_find(r, 0x200f, &out));
  assert_int_equal(out.kind, CUCORE_MEM_POOL);
  /* Ranges that start outside every record but reach into one. */
  assert_int_equal(cc_reg_locate(r, 0x1100, 0x2001, &out), CC_LOC_INTO);
  assert_int_equal(out.base, 0x2000);
  assert_int_equal(cc_reg_locate(r, 0x1100, 0x2000, &out), CC_LOC_NONE);
  assert_int_equal(cc_reg_locate(r, 0x1080, 0x3000, &out), CC_LOC_IN);
  assert_true(cc_reg_find_overlap(r, 0x0, 0x1001, &out));
  assert_false(cc_reg_find_overlap(r, 0x1100, 0x2000, &out));
  /* Overlapping inserts are refused, or evict with `evict`. */
  cc_mem_rec c = rec_at(0x10f0, 0x20, CUCORE_MEM_DEVICE);
  assert_int_equal(cc_reg_insert(r, &c, 0), CC_REG_OVERLAP);
  assert_int_equal(cc_reg_count(r), 2);
  assert_int_equal(cc_reg_insert(r, &c, 1), CC_REG_OK);
  assert_int_equal(cc_reg_count(r), 2);
  assert_false(cc_reg_find(r, 0x1000, &out)); /* evicted */
  assert_true(cc_reg_find(r, 0x1100, &out));
  assert_int_equal(out.base, 0x10f0);
  assert_true(cc_reg_verify(r));
  cc_reg_free(r);
}

static int accept_device(const cc_mem_rec *rec, void *ctx) {
  (void)ctx;
  return rec->kind == CUCORE_MEM_DEVICE;
}

static void takes_say_why_they_refuse(void **state) {
  (void)state;
  cc_registry *r = cc_reg_create();
  cc_mem_rec a = rec_at(0x10000, 4096, CUCORE_MEM_DEVICE),
             p = rec_at(0x20000, 64, CUCORE_MEM_PINNED);
  cc_reg_insert(r, &a, 0);
  cc_reg_insert(r, &p, 0);
  cc_mem_rec out;
  assert_int_equal(cc_reg_take(r, 0x30000, accept_device, NULL, 0, &out), CC_REG_NOT_FOUND);
  assert_int_equal(cc_reg_take(r, 0x10010, accept_device, NULL, 0, &out), CC_REG_NOT_BASE);
  assert_int_equal(out.base, 0x10000);
  assert_int_equal(cc_reg_take(r, 0x20000, accept_device, NULL, 0, &out), CC_REG_REJECTED);
  assert_int_equal(out.kind, CUCORE_MEM_PINNED);
  /* Users block a take until they let go. */
  assert_int_equal(cc_reg_use(r, 0x10100, 0, 1, &out), CC_REG_OK);
  assert_int_equal(out.textures, 1);
  assert_int_equal(cc_reg_take(r, 0x10000, accept_device, NULL, 0, &out), CC_REG_BUSY);
  assert_int_equal(cc_reg_use(r, 0x10000, 1, 2, &out), CC_REG_OK);
  assert_int_equal(out.exports, 2);
  assert_int_equal(cc_reg_use(r, 0x10000, 0, -1, NULL), CC_REG_OK);
  assert_int_equal(cc_reg_use(r, 0x10000, 1, -5, &out), CC_REG_OK); /* clamps at 0 */
  assert_int_equal(out.exports, 0);
  /* A DLPack claim blocks frees (not the deleter's take) and a second claim. */
  assert_int_equal(cc_reg_claim(r, 0x10008, &out), CC_REG_OK);
  assert_int_equal(cc_reg_claim(r, 0x10000, &out), CC_REG_BUSY);
  assert_int_equal(cc_reg_take(r, 0x10000, accept_device, NULL, 0, &out), CC_REG_BUSY);
  assert_true(out.flags & CC_REC_DLPACK_OWNED);
  assert_int_equal(cc_reg_take(r, 0x10000, accept_device, NULL, 1, &out), CC_REG_OK);
  assert_int_equal(cc_reg_count(r), 1);
  /* The freed ring remembers the range for "freed already" messages. */
  assert_true(cc_reg_was_freed(r, 0x10000, &out));
  assert_int_equal(out.size, 4096);
  assert_true(cc_reg_was_freed(r, 0x10fff, &out));
  assert_false(cc_reg_was_freed(r, 0x11000, &out));
  assert_int_equal(cc_reg_take(r, 0x10000, accept_device, NULL, 0, &out), CC_REG_NOT_FOUND);
  assert_int_equal(cc_reg_set_flags(r, 0x20000, CC_REC_ALIAS, 0), CC_REG_OK);
  assert_int_equal(cc_reg_set_flags(r, 0x20001, CC_REC_ALIAS, 0), CC_REG_NOT_BASE);
  cc_reg_free(r);
}

/* A pinned-pool block's record stays while the block is pinned; lookups see it only while the
 * block is handed out, with the size asked for. */
static void pool_block_records_follow_the_block(void **state) {
  (void)state;
  cc_registry *r = cc_reg_create();
  cc_hpool_block b;
  memset(&b, 0, sizeof b);
  atomic_init(&b.state, 0);
  atomic_init(&b.requested, 0);
  cc_mem_rec lv = rec_at(0x40000, 0x5000, CUCORE_MEM_PINNED_POOL);
  lv.flags = CC_REC_LIVE;
  lv.aux = (uint64_t)(uintptr_t)&b;
  cc_mem_rec after = rec_at(0x46000, 0x100, CUCORE_MEM_DEVICE);
  assert_int_equal(cc_reg_insert(r, &lv, 0), CC_REG_OK);
  assert_int_equal(cc_reg_insert(r, &after, 0), CC_REG_OK);
  cc_mem_rec out;
  /* Free (cached): lookups do not see it, but it was freed; inserts see it and never evict it. */
  assert_false(cc_reg_find(r, 0x40000, &out));
  assert_int_equal(cc_reg_locate(r, 0x3f000, 0x46001, &out), CC_LOC_INTO);
  assert_int_equal(out.base, 0x46000); /* past the hidden block */
  assert_true(cc_reg_was_freed(r, 0x40000, &out));
  cc_mem_rec over = rec_at(0x41000, 0x10, CUCORE_MEM_DEVICE);
  assert_int_equal(cc_reg_insert(r, &over, 1), CC_REG_OVERLAP);
  assert_true(cc_reg_find_overlap(r, 0x41000, 0x41001, &out));
  assert_int_equal(cc_reg_take(r, 0x40000, NULL, NULL, 0, &out), CC_REG_NOT_FOUND);
  /* Handed out for 0x1234 bytes: seen, with that size. */
  atomic_store(&b.requested, 0x1234);
  atomic_store(&b.state, CC_HPOOL_GEN * 7 + CC_HPOOL_IN_USE);
  assert_true(cc_reg_find(r, 0x41233, &out));
  assert_int_equal(out.size, 0x1234);
  assert_false(cc_reg_find(r, 0x41234, &out)); /* past the size asked for */
  assert_int_equal(cc_reg_locate(r, 0x40000, 0x41235, &out), CC_LOC_IN);
  assert_int_equal(out.size, 0x1234);
  /* Users make it busy, so the pool's lock-free free refuses it; letting go clears that. */
  assert_int_equal(cc_reg_use(r, 0x40010, 0, 1, &out), CC_REG_OK);
  assert_true(atomic_load(&b.state) & CC_HPOOL_BUSY);
  assert_false(cc_hpool_block_unuse(&b, CC_HPOOL_GEN * 7 + CC_HPOOL_IN_USE));
  assert_int_equal(cc_reg_take(r, 0x40000, NULL, NULL, 0, &out), CC_REG_BUSY);
  assert_int_equal(cc_reg_use(r, 0x40010, 0, -1, &out), CC_REG_OK);
  assert_false(atomic_load(&b.state) & CC_HPOOL_BUSY);
  assert_int_equal(cc_reg_claim(r, 0x40000, &out), CC_REG_OK);
  assert_true(atomic_load(&b.state) & CC_HPOOL_BUSY);
  /* The DLPack deleter's take frees it (a new generation) and keeps the record. */
  assert_int_equal(cc_reg_take(r, 0x40000, NULL, NULL, 1, &out), CC_REG_OK);
  assert_int_equal(atomic_load(&b.state), CC_HPOOL_GEN * 8);
  assert_int_equal(cc_reg_count(r), 2);
  assert_false(cc_reg_find(r, 0x40000, &out));
  /* A user on a free block is refused. */
  assert_int_equal(cc_reg_use(r, 0x40000, 1, 1, &out), CC_REG_NOT_FOUND);
  assert_int_equal(cc_reg_claim(r, 0x40000, &out), CC_REG_NOT_FOUND);
  /* Given back to the driver: the record goes, and is remembered as freed. */
  assert_true(cc_reg_remove(r, 0x40000));
  assert_false(cc_reg_remove(r, 0x40000));
  assert_true(cc_reg_was_freed(r, 0x40000, &out));
  assert_false(out.flags & CC_REC_LIVE);
  assert_int_equal(cc_reg_insert(r, &over, 0), CC_REG_OK);
  assert_true(cc_reg_verify(r));
  cc_reg_free(r);
}

/* A plain model: an array of disjoint ranges. */
#define MODEL_MAX 4096
static uint64_t model_base[MODEL_MAX], model_size[MODEL_MAX];
static int model_n;

static int model_find(uint64_t addr) {
  for (int i = 0; i < model_n; i++)
    if (addr >= model_base[i] && addr - model_base[i] < model_size[i]) return i;
  return -1;
}

static int model_overlaps(uint64_t lo, uint64_t hi) {
  for (int i = 0; i < model_n; i++)
    if (model_base[i] < hi && lo < model_base[i] + model_size[i]) return 1;
  return 0;
}

static void random_operations_agree_with_a_plain_model(void **state) {
  (void)state;
  cc_registry *r = cc_reg_create();
  srand(12345);
  model_n = 0;
  long inserts = 0, takes = 0, lookups = 0;
  for (int step = 0; step < 60000; step++) {
    int op = rand() % 10;
    if (op < 4 && model_n < MODEL_MAX) {
      uint64_t base = (uint64_t)(rand() % 200000) * 64 + 0x7f0000000000ull;
      uint64_t size = 1 + (uint64_t)(rand() % 4096);
      cc_mem_rec rec = rec_at(base, size, CUCORE_MEM_DEVICE);
      cc_reg_result res = cc_reg_insert(r, &rec, 0);
      int overlap = model_overlaps(base, base + size);
      assert_int_equal(res, overlap ? CC_REG_OVERLAP : CC_REG_OK);
      if (!overlap) {
        model_base[model_n] = base;
        model_size[model_n++] = size;
        inserts++;
      }
    } else if (op < 7 && model_n) {
      int i = rand() % model_n;
      cc_mem_rec out;
      assert_int_equal(cc_reg_take(r, model_base[i], NULL, NULL, 0, &out), CC_REG_OK);
      assert_int_equal(out.size, model_size[i]);
      model_base[i] = model_base[--model_n];
      model_size[i] = model_size[model_n];
      takes++;
    } else {
      uint64_t addr = 0x7f0000000000ull + (uint64_t)(rand() % (200000 * 64 + 8192));
      cc_mem_rec out;
      int i = model_find(addr);
      int found = cc_reg_find(r, addr, &out);
      assert_int_equal(found, i >= 0);
      if (found) {
        assert_int_equal(out.base, model_base[i]);
        assert_int_equal(out.size, model_size[i]);
      }
      lookups++;
    }
    if (step % 5000 == 0) assert_true(cc_reg_verify(r));
  }
  assert_true(cc_reg_verify(r));
  assert_int_equal(cc_reg_count(r), (size_t)model_n);
  print_message("registry: %ld inserts, %ld takes, %ld lookups agree with the model; %d live\n",
                inserts, takes, lookups, model_n);
  cc_reg_free(r);
}

/* Sorted inserts would make a plain binary tree a list; the AVL tree stays shallow. */
static void sorted_inserts_stay_balanced(void **state) {
  (void)state;
  cc_registry *r = cc_reg_create();
  for (uint64_t i = 0; i < 100000; i++) {
    cc_mem_rec rec = rec_at(0x1000 + i * 16, 16, CUCORE_MEM_DEVICE);
    assert_int_equal(cc_reg_insert(r, &rec, 0), CC_REG_OK);
  }
  assert_true(cc_reg_verify(r)); /* heights checked node by node: |left - right| <= 1 */
  cc_mem_rec out;
  assert_true(cc_reg_find(r, 0x1000 + 77777 * 16 + 5, &out));
  assert_int_equal(out.base, 0x1000 + 77777 * 16);
  for (uint64_t i = 0; i < 100000; i += 2)
    assert_int_equal(cc_reg_take(r, 0x1000 + i * 16, NULL, NULL, 0, NULL), CC_REG_OK);
  assert_true(cc_reg_verify(r));
  assert_int_equal(cc_reg_count(r), 50000);
  cc_reg_free(r);
}

typedef struct worker {
  cc_registry *r;
  int id;
  long found;
} worker;

static void *writer(void *arg) {
  worker *w = arg;
  uint64_t base = 0x100000000ull * (uint64_t)(w->id + 1);
  for (int round = 0; round < 200; round++) {
    for (int i = 0; i < 100; i++) {
      cc_mem_rec rec = rec_at(base + (uint64_t)i * 4096, 4000, CUCORE_MEM_POOL);
      if (cc_reg_insert(w->r, &rec, 0) != CC_REG_OK) return (void *)1;
    }
    for (int i = 0; i < 100; i++)
      if (cc_reg_take(w->r, base + (uint64_t)i * 4096, NULL, NULL, 0, NULL) != CC_REG_OK)
        return (void *)2;
  }
  return NULL;
}

static void *reader(void *arg) {
  worker *w = arg;
  cc_mem_rec out;
  for (int i = 0; i < 200000; i++) {
    /* The permanent record is always found, whatever the writers do. */
    if (!cc_reg_find(w->r, 0x10 + (uint64_t)(i % 64), &out) || out.base != 0x10) return (void *)3;
    if (cc_reg_find(w->r, 0x100000000ull + (uint64_t)(i % 100) * 4096, &out)) w->found++;
  }
  return NULL;
}

static void concurrent_readers_and_writers(void **state) {
  (void)state;
  cc_registry *r = cc_reg_create();
  cc_mem_rec perm = rec_at(0x10, 64, CUCORE_MEM_DEVICE);
  cc_reg_insert(r, &perm, 0);
  pthread_t t[6];
  worker w[6];
  for (int i = 0; i < 6; i++) {
    w[i] = (worker){r, i % 3, 0};
    pthread_create(&t[i], NULL, i < 3 ? writer : reader, &w[i]);
  }
  for (int i = 0; i < 6; i++) {
    void *res = NULL;
    pthread_join(t[i], &res);
    assert_null(res);
  }
  assert_true(cc_reg_verify(r));
  assert_int_equal(cc_reg_count(r), 1);
  cc_reg_free(r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(lookups_find_the_range_containing_an_address),
      cmocka_unit_test(takes_say_why_they_refuse),
      cmocka_unit_test(pool_block_records_follow_the_block),
      cmocka_unit_test(random_operations_agree_with_a_plain_model),
      cmocka_unit_test(sorted_inserts_stay_balanced),
      cmocka_unit_test(concurrent_readers_and_writers),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
