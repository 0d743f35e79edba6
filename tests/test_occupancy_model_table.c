/* test_occupancy_model_table.c -- the per-architecture table against the documentation, its
 * internal consistency, and the calls that read it.
 *
 * The expected numbers are the CUDA Programming Guide's (CUDA 13.1, section 5.1, Tables 30,
 * 31 and 32; the CUDA 12 guide for 7.0 and 7.2, which CUDA 13 dropped), typed in from the
 * guide, not from cucore's output. KB = 1024 bytes.
 */
#include "support.h"

#include <stdio.h>
#include <string.h>

#include "exec/occupancy_model.h"

#define KB 1024

typedef struct documented {
  int arch;
  int blocks_per_sm, warps_per_sm;
  int shared_per_sm_kb, shared_per_block_kb;
  int carveouts_kb[12];
  int n_carveouts;
} documented;

static const documented guide[] = {
    {70, 32, 64, 96, 96, {0, 8, 16, 32, 64, 96}, 6},
    {72, 32, 64, 96, 96, {0, 8, 16, 32, 64, 96}, 6},
    {75, 16, 32, 64, 64, {32, 64}, 2},
    {80, 32, 64, 164, 163, {0, 8, 16, 32, 64, 100, 132, 164}, 8},
    {86, 16, 48, 100, 99, {0, 8, 16, 32, 64, 100}, 6},
    {87, 16, 48, 164, 163, {0, 8, 16, 32, 64, 100, 132, 164}, 8},
    {89, 24, 48, 100, 99, {0, 8, 16, 32, 64, 100}, 6},
    {90, 32, 64, 228, 227, {0, 8, 16, 32, 64, 100, 132, 164, 196, 228}, 10},
    {100, 32, 64, 228, 227, {0, 8, 16, 32, 64, 100, 132, 164, 196, 228}, 10},
    {103, 32, 64, 228, 227, {0, 8, 16, 32, 64, 100, 132, 164, 196, 228}, 10},
    {110, 24, 48, 228, 227, {0, 8, 16, 32, 64, 100, 132, 164, 196, 228}, 10},
    {120, 24, 48, 100, 99, {0, 8, 16, 32, 64, 100}, 6},
    {121, 24, 48, 100, 99, {0, 8, 16, 32, 64, 100}, 6},
};

static void table_matches_the_programming_guide(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof guide / sizeof guide[0]; i++) {
    const documented *d = &guide[i];
    cucore_arch_limits l;
    assert_ok(cucore_arch_get_limits(d->arch, &l));
    assert_int_equal(l.arch, d->arch);
    assert_int_equal(l.max_blocks_per_sm, d->blocks_per_sm);
    assert_int_equal(l.max_warps_per_sm, d->warps_per_sm);
    assert_int_equal(l.max_threads_per_sm, d->warps_per_sm * 32);
    assert_int_equal(l.shared_per_sm, d->shared_per_sm_kb * KB);
    assert_int_equal(l.shared_per_block_optin, d->shared_per_block_kb * KB);
    assert_int_equal(l.carveout_count, d->n_carveouts);
    for (int c = 0; c < d->n_carveouts; c++)
      assert_int_equal(l.carveout_bytes[c], d->carveouts_kb[c] * KB);
    /* Every architecture: 1024 threads per block, warps of 32, 64 K registers per SM and per
     * block, 255 per thread, 48 KB per block without opt-in, 16 named barriers per block. */
    assert_int_equal(l.max_threads_per_block, 1024);
    assert_int_equal(l.warp_size, 32);
    assert_int_equal(l.regs_per_sm, 64 * 1024);
    assert_int_equal(l.max_regs_per_block, 64 * 1024);
    assert_int_equal(l.max_regs_per_thread, 255);
    assert_int_equal(l.shared_per_block, 48 * KB);
    assert_int_equal(l.max_barriers_per_block, 16);
  }
}

static void table_rows_are_consistent(void **state) {
  (void)state;
  int n = 0;
  const cc_arch_limits *rows = cc_arch_table(&n);
  assert_true(n >= (int)(sizeof guide / sizeof guide[0]));
  for (int i = 0; i < n; i++) {
    const cc_arch_limits *l = &rows[i];
    if (i) assert_true(l->arch > rows[i - 1].arch); /* ascending, no duplicates */
    char name[16];
    snprintf(name, sizeof name, "sm_%d", l->arch);
    assert_string_equal(l->name, name);
    assert_non_null(l->family);
    /* Carveouts ascend and end at the SM's maximum. */
    assert_true(l->carveout_count >= 1 && l->carveout_count <= CUCORE_ARCH_MAX_CARVEOUTS);
    for (int c = 1; c < l->carveout_count; c++)
      assert_true(l->carveout_bytes[c] > l->carveout_bytes[c - 1]);
    assert_int_equal(l->carveout_bytes[l->carveout_count - 1], l->shared_per_sm);
    /* What a block cannot have of the SM's maximum is the driver's reservation: 1 KB from
     * 8.0 on ("reserved for system use"), none on 7.x. */
    assert_int_equal(l->shared_per_sm - l->shared_per_block_optin, l->reserved_shared_per_block);
    assert_int_equal(l->reserved_shared_per_block, l->arch >= 80 ? 1024 : 0);
    /* cuda_occupancy.h: 256-byte shared allocations on 7.x, 128 from 8.0; registers in units
     * of 256 per warp, 4 sub-partitions; barrier limit from 9.0 on, with 1 or 2 barriers per
     * resident block. */
    assert_int_equal(l->shared_alloc_granularity, l->arch >= 80 ? 128 : 256);
    assert_int_equal(l->reg_alloc_unit, 256);
    assert_int_equal(l->warp_alloc_granularity, 4);
    assert_int_equal(l->barrier_limit_applies, l->arch >= 90);
    assert_true(l->barriers_per_sm == l->max_blocks_per_sm ||
                l->barriers_per_sm == 2 * l->max_blocks_per_sm);
    assert_int_equal(l->sm_count, 0);
    /* The model accepts every row as it is. */
    cucore_kernel_resources k = CUCORE_KERNEL_RESOURCES_INIT;
    cucore_occupancy_result r;
    assert_ok(cucore_occupancy_model_blocks(l, &k, 128, 0, 0, &r));
  }
  /* sm_101 is CUDA 12.8/12.9's name for the chip CUDA 13 calls sm_110: same limits. */
  cucore_arch_limits a, b;
  assert_ok(cucore_arch_get_limits(101, &a));
  assert_ok(cucore_arch_get_limits(110, &b));
  a.arch = b.arch;
  a.name = b.name;
  assert_memory_equal(&a, &b, sizeof a);
}

static void arch_list(void **state) {
  (void)state;
  int count = -1;
  assert_ok(cucore_arch_get_list(NULL, 0, &count));
  int n = 0;
  cc_arch_table(&n);
  assert_int_equal(count, n);
  int archs[64];
  assert_true(count <= 64);
  assert_ok(cucore_arch_get_list(archs, 3, &count)); /* a short buffer gets the first 3 */
  assert_int_equal(count, n);
  assert_int_equal(archs[0], 70);
  assert_int_equal(archs[2], 75);
  assert_ok(cucore_arch_get_list(archs, 64, &count));
  for (int i = 0; i < count; i++) assert_non_null(cc_arch_limits_find(archs[i]));
  assert_status(cucore_arch_get_list(NULL, 2, &count), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_arch_get_list(archs, 2, NULL), CUCORE_INVALID_ARGUMENT);
  assert_null(cc_arch_limits_find(60));
  assert_null(cc_arch_limits_find(0));
}

static void limits_from_a_device(void **state) {
  (void)state;
  /* An RTX 3080-like sm_86 device: 68 SMs; the device reports the documented limits. */
  cucore_device_props p;
  memset(&p, 0, sizeof p);
  p.arch = 86;
  p.sm_count = 68;
  p.warp_size = 32;
  p.max_threads_per_block = 1024;
  p.max_threads_per_sm = 1536;
  p.max_blocks_per_sm = 16;
  p.regs_per_block = p.regs_per_sm = 65536;
  p.shared_per_block = 48 * KB;
  p.shared_per_block_optin = 99 * KB;
  p.shared_per_sm = 100 * KB;
  p.reserved_shared_per_block = 1024;
  cucore_arch_limits l, t;
  assert_ok(cucore_arch_limits_from_device(&p, &l));
  assert_ok(cucore_arch_get_limits(86, &t));
  assert_int_equal(l.sm_count, 68);
  t.sm_count = 68;
  assert_memory_equal(&l, &t, sizeof l);

  /* A device that reports less shared memory per SM than the table: the larger carveouts go,
   * and the device's maximum becomes the last one. */
  p.shared_per_sm = 80 * KB;
  p.shared_per_block_optin = 79 * KB;
  assert_ok(cucore_arch_limits_from_device(&p, &l));
  assert_int_equal(l.carveout_count, 6);
  assert_int_equal(l.carveout_bytes[4], 64 * KB);
  assert_int_equal(l.carveout_bytes[5], 80 * KB);
  assert_int_equal(l.carveout_bytes[6], 0);
  cucore_kernel_resources k = CUCORE_KERNEL_RESOURCES_INIT;
  cucore_occupancy_best best;
  assert_ok(cucore_occupancy_model_best_block(&l, &k, 0, NULL, NULL, 0, 0, &best));
  assert_int_equal(best.min_grid_size, best.blocks_per_sm * 68);

  /* Unknown architecture: refused, naming the known ones. */
  p.arch = 61;
  assert_status(cucore_arch_limits_from_device(&p, &l), CUCORE_NOT_SUPPORTED);
  assert_contains(cucore_last_error(), "sm_120");
  assert_status(cucore_arch_limits_from_device(NULL, &l), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_arch_limits_from_device(&p, NULL), CUCORE_INVALID_ARGUMENT);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(table_matches_the_programming_guide),
      cmocka_unit_test(table_rows_are_consistent),
      cmocka_unit_test(arch_list),
      cmocka_unit_test(limits_from_a_device),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
