/* test_occupancy_model.c -- the host occupancy model on hand-worked cases.
 *
 * Every expected number below is derived in the comment above it from the documented rules
 * (cuda_occupancy.h's calculation, the programming guide's limits), step by step:
 *   W  = ceil(block / 32) warps per block
 *   warps limit     = max_warps_per_sm / W
 *   R  = roundup(registers * 32, 256) registers per warp
 *   registers limit = floor(floor(65536 / 4) / R) * 4 / W; 0 when R * roundup(W, 4) > 65536
 *   S  = roundup(static + dynamic + reserved, granularity) shared memory per block
 *   shared limit    = carveout / S, the carveout being the preferred one when it holds S, else
 *                     the smallest legal carveout >= S
 *   barriers limit  = barriers_per_sm / barriers (9.0+)
 */
#include "support.h"

#include <limits.h>
#include <string.h>

#include "exec/occupancy_model.h"

#define KIB 1024

static cucore_arch_limits arch(int a) {
  cucore_arch_limits l;
  cucore_status st = cucore_arch_get_limits(a, &l);
  if (st != CUCORE_OK) fail_msg("cucore_arch_get_limits(%d): %s", a, cucore_last_error());
  return l;
}

static cucore_kernel_resources kernel(int registers, int static_shared) {
  cucore_kernel_resources k = CUCORE_KERNEL_RESOURCES_INIT;
  k.registers = registers;
  k.static_shared_bytes = static_shared;
  return k;
}

static cucore_occupancy_result blocks(int a, const cucore_kernel_resources *k, int block,
                                      size_t dyn) {
  cucore_arch_limits l = arch(a);
  cucore_occupancy_result r;
  assert_ok(cucore_occupancy_model_blocks(&l, k, block, dyn, 0, &r));
  return r;
}

#define BIT(limit) (1u << CUCORE_OCCUPANCY_LIMIT_##limit)

/* ---- registers ------------------------------------------------------------------------------ */

static void register_granularity_at_256_threads(void **state) {
  (void)state;
  int archs[] = {80, 90};
  for (int i = 0; i < 2; i++) {
    /* 32 registers: R = 32*32 = 1024 (already a multiple of 256). 16384 / 1024 = 16 warps per
     * sub-partition, 64 per SM; W = 8, so 64 / 8 = 8 blocks. The warps limit is 64 / 8 = 8
     * too: both bind, warps is reported (first in enum order). 8 * 8 = 64 warps: 100 %. */
    cucore_kernel_resources k = kernel(32, 0);
    cucore_occupancy_result r = blocks(archs[i], &k, 256, 0);
    assert_int_equal(r.blocks_limit_registers, 8);
    assert_int_equal(r.blocks_limit_warps, 8);
    assert_int_equal(r.active_blocks_per_sm, 8);
    assert_int_equal(r.limit, CUCORE_OCCUPANCY_LIMIT_WARPS);
    assert_int_equal(r.limiting_mask, BIT(WARPS) | BIT(REGISTERS));
    assert_int_equal(r.registers_per_block, 8 * 1024);
    assert_true(r.occupancy == 1.0);

    /* 33 registers: 33*32 = 1056, rounded up to 1280. 16384 / 1280 = 12.8 -> 12 warps per
     * sub-partition, 48 per SM, 48 / 8 = 6 blocks: 48 of 64 warps = 75 %. */
    k.registers = 33;
    r = blocks(archs[i], &k, 256, 0);
    assert_int_equal(r.blocks_limit_registers, 6);
    assert_int_equal(r.active_blocks_per_sm, 6);
    assert_int_equal(r.active_warps_per_sm, 48);
    assert_int_equal(r.limit, CUCORE_OCCUPANCY_LIMIT_REGISTERS);
    assert_int_equal(r.limiting_mask, BIT(REGISTERS));
    assert_int_equal(r.registers_per_block, 8 * 1280);
    assert_true(r.occupancy == 0.75);

    /* 40 registers: 1280 exactly, the same allocation as 33: still 6 blocks. */
    k.registers = 40;
    assert_int_equal(blocks(archs[i], &k, 256, 0).active_blocks_per_sm, 6);

    /* 41 registers: 1312 -> 1536; 16384 / 1536 = 10.67 -> 10 warps per sub-partition, 40 per
     * SM, 40 / 8 = 5 blocks. */
    k.registers = 41;
    assert_int_equal(blocks(archs[i], &k, 256, 0).active_blocks_per_sm, 5);
  }
}

static void per_block_register_check_rounds_warps_to_sub_partitions(void **state) {
  (void)state;
  cucore_arch_limits l = arch(80);
  cucore_occupancy_result r;
  /* 192 registers: R = 6144. 256 threads: W = 8, 8 * 6144 = 49152 <= 65536; per sub-partition
   * 16384 / 6144 = 2 warps, 8 per SM, 8 / 8 = 1 block. */
  cucore_kernel_resources k = kernel(192, 0);
  assert_ok(cucore_occupancy_model_blocks(&l, &k, 256, 0, 0, &r));
  assert_int_equal(r.active_blocks_per_sm, 1);
  /* 320 threads: W = 10, 10 * 6144 = 61440 would fit in 65536, but the per-block check counts
   * warps in multiples of the 4 sub-partitions: 12 * 6144 = 73728 > 65536. Never runs. */
  assert_status(cucore_occupancy_model_blocks(&l, &k, 320, 0, 0, &r),
                CUCORE_LAUNCH_OUT_OF_RESOURCES);
  assert_contains(cucore_last_error(), "73728");
  assert_contains(cucore_last_error(), "65536");
  assert_contains(cucore_last_error(), "192 registers per thread");
  assert_int_equal(r.active_blocks_per_sm, 0);
  assert_int_equal(r.blocks_limit_registers, 0);
  assert_int_equal(r.limit, CUCORE_OCCUPANCY_LIMIT_REGISTERS);
  /* The internal path answers 0 (as the driver does) and says why. */
  cc_occ_why why;
  assert_int_equal(cc_occupancy_model_blocks(&l, &k, 320, 0, 0, &r, &why), 0);
  assert_int_equal(why, CC_OCC_REGS_PER_BLOCK);
}

static void kernel_without_registers_has_no_register_limit(void **state) {
  (void)state;
  /* 0 registers: R = 0, no register limit (INT_MAX). sm_80, 1024 threads: W = 32, warps
   * 64 / 32 = 2; shared: S = roundup(0 + 1024 reserved, 128) = 1024, 167936 / 1024 = 164. */
  cucore_kernel_resources k = kernel(0, 0);
  cucore_occupancy_result r = blocks(80, &k, 1024, 0);
  assert_int_equal(r.blocks_limit_registers, INT_MAX);
  assert_int_equal(r.blocks_limit_shared, 164);
  assert_int_equal(r.active_blocks_per_sm, 2);
  assert_int_equal(r.limit, CUCORE_OCCUPANCY_LIMIT_WARPS);
}

/* ---- warps ----------------------------------------------------------------------------------- */

static void a_block_of_33_threads_takes_two_warps(void **state) {
  (void)state;
  /* sm_86: 48 warps, 16 blocks per SM. 33 threads: W = ceil(33 / 32) = 2, warps limit
   * 48 / 2 = 24 (not 48 / 1.03). 32 registers: R = 1024, 16 warps per sub-partition, 64 / 2 =
   * 32. Blocks cap 16 binds: 16 * 2 = 32 of 48 warps. */
  cucore_kernel_resources k = kernel(32, 0);
  cucore_occupancy_result r = blocks(86, &k, 33, 0);
  assert_int_equal(r.warps_per_block, 2);
  assert_int_equal(r.blocks_limit_warps, 24);
  assert_int_equal(r.blocks_limit_registers, 32);
  assert_int_equal(r.active_blocks_per_sm, 16);
  assert_int_equal(r.active_warps_per_sm, 32);
  assert_int_equal(r.limit, CUCORE_OCCUPANCY_LIMIT_BLOCKS);
  assert_true(r.occupancy == 32.0 / 48.0);
  /* sm_75 (32 warps): 33 threads -> 32 / 2 = 16 blocks, equal to its 16-block cap. */
  r = blocks(75, &k, 33, 0);
  assert_int_equal(r.blocks_limit_warps, 16);
  assert_int_equal(r.limiting_mask, BIT(WARPS) | BIT(BLOCKS));
}

static void blocks_per_sm_cap(void **state) {
  (void)state;
  /* 32-thread blocks, 16 registers: W = 1; R = 512, 16384 / 512 = 32 warps per sub-partition,
   * 128 per SM. sm_80: warps 64, blocks cap 32 binds: 32 warps of 64 = 50 %. */
  cucore_kernel_resources k = kernel(16, 0);
  cucore_occupancy_result r = blocks(80, &k, 32, 0);
  assert_int_equal(r.blocks_limit_warps, 64);
  assert_int_equal(r.blocks_limit_registers, 128);
  assert_int_equal(r.blocks_limit_blocks, 32);
  assert_int_equal(r.active_blocks_per_sm, 32);
  assert_int_equal(r.limit, CUCORE_OCCUPANCY_LIMIT_BLOCKS);
  assert_true(r.occupancy == 0.5);
  /* sm_89: cap 24 of 48 warps; sm_86: cap 16 of 48. */
  assert_int_equal(blocks(89, &k, 32, 0).active_blocks_per_sm, 24);
  assert_int_equal(blocks(86, &k, 32, 0).active_blocks_per_sm, 16);
}

/* ---- shared memory --------------------------------------------------------------------------- */

static void shared_reservation_and_granularity(void **state) {
  (void)state;
  /* 128 threads, 32 registers: warps 64 / 4 = 16, registers 64 / 4 = 16 blocks.
   * sm_80, 40 KiB dynamic: S = roundup(40960 + 1024, 128) = 41984; 167936 / 41984 = 4 exactly. */
  cucore_kernel_resources k = kernel(32, 0);
  cucore_occupancy_result r = blocks(80, &k, 128, 40960);
  assert_int_equal(r.shared_per_block, 41984);
  assert_int_equal(r.blocks_limit_shared, 4);
  assert_int_equal(r.active_blocks_per_sm, 4);
  assert_int_equal(r.limit, CUCORE_OCCUPANCY_LIMIT_SHARED_MEMORY);
  /* One byte more: 40961 + 1024 = 41985 -> 42112; 167936 / 42112 = 3.99 -> 3. (Without the
   * 1 KiB reservation it would be 41088 and still 4.) */
  r = blocks(80, &k, 128, 40961);
  assert_int_equal(r.shared_per_block, 42112);
  assert_int_equal(r.active_blocks_per_sm, 3);
  /* The same bytes split between static and dynamic round as one allocation. */
  cucore_kernel_resources ks = kernel(32, 40000);
  assert_int_equal(blocks(80, &ks, 128, 960).shared_per_block, 41984);

  /* sm_70: 256-byte granularity, no reservation. 24 KiB: S = 24576, 98304 / 24576 = 4;
   * 24577 -> 24832, 98304 / 24832 = 3.96 -> 3. */
  assert_int_equal(blocks(70, &k, 128, 24576).active_blocks_per_sm, 4);
  r = blocks(70, &k, 128, 24577);
  assert_int_equal(r.shared_per_block, 24832);
  assert_int_equal(r.active_blocks_per_sm, 3);

  /* sm_75, no shared memory at all: S = 0, no shared limit. */
  cucore_kernel_resources k0 = kernel(32, 0);
  assert_int_equal(blocks(75, &k0, 128, 0).blocks_limit_shared, INT_MAX);
  /* sm_80: the reservation alone is 1024 bytes per block: 167936 / 1024 = 164. */
  assert_int_equal(blocks(80, &k0, 128, 0).blocks_limit_shared, 164);
}

static void shared_memory_per_block_limits(void **state) {
  (void)state;
  cucore_arch_limits l = arch(80);
  cucore_occupancy_result r;
  /* sm_80's opt-in maximum is 163 KiB = 166912 bytes per block: exactly that runs (S =
   * 166912 + 1024 = 167936 = the whole SM: 1 block); one byte more never runs. */
  cucore_kernel_resources k = kernel(32, 0);
  assert_ok(cucore_occupancy_model_blocks(&l, &k, 128, 166912, 0, &r));
  assert_int_equal(r.active_blocks_per_sm, 1);
  assert_int_equal(r.shared_carveout_bytes, 164 * KIB);
  k.static_shared_bytes = 4000;
  assert_status(cucore_occupancy_model_blocks(&l, &k, 128, 166912 - 4000 + 1, 0, &r),
                CUCORE_LAUNCH_OUT_OF_RESOURCES);
  assert_contains(cucore_last_error(), "4000 bytes of static");
  assert_contains(cucore_last_error(), "162913 bytes of dynamic");
  assert_contains(cucore_last_error(), "166913 bytes per block");
  assert_contains(cucore_last_error(), "166912 bytes (163 KiB)");
  /* A kernel whose dynamic maximum was left at 48 KiB - static: above it is a launch
   * configuration error that names the attribute. */
  k.max_dynamic_shared_bytes = 48 * KIB - 4000;
  assert_status(cucore_occupancy_model_blocks(&l, &k, 128, 48 * KIB, 0, &r), CUCORE_LAUNCH_CONFIG);
  assert_contains(cucore_last_error(), "MAX_DYNAMIC_SHARED_SIZE_BYTES");
  assert_contains(cucore_last_error(), "45152");
  assert_ok(cucore_occupancy_model_blocks(&l, &k, 128, 48 * KIB - 4000, 0, &r));
}

static void carveout_selection(void **state) {
  (void)state;
  /* 128 threads, 32 registers (16 blocks by warps and registers), 20 KiB dynamic on sm_80:
   * S = 20480 + 1024 = 21504. */
  cucore_kernel_resources k = kernel(32, 0);
  /* No preference: the largest carveout, 167936 / 21504 = 7.8 -> 7 blocks; the driver then
   * needs only the smallest carveout holding 7 * 21504 = 150528: 164 KiB. */
  cucore_occupancy_result r = blocks(80, &k, 128, 20480);
  assert_int_equal(r.active_blocks_per_sm, 7);
  assert_int_equal(r.shared_carveout_bytes, 164 * KIB);
  /* 50 %: 50 * 167936 / 100 = 83968, rounded up to the 100 KiB carveout: 102400 / 21504 =
   * 4.76 -> 4 blocks. */
  k.carveout_percent = 50;
  r = blocks(80, &k, 128, 20480);
  assert_int_equal(r.active_blocks_per_sm, 4);
  assert_int_equal(r.shared_carveout_bytes, 100 * KIB);
  assert_int_equal(r.limit, CUCORE_OCCUPANCY_LIMIT_SHARED_MEMORY);
  /* 0 % (max L1): the 0 KiB carveout cannot hold one block, so the smallest that does,
   * 32 KiB: 32768 / 21504 = 1 block. */
  k.carveout_percent = 0;
  r = blocks(80, &k, 128, 20480);
  assert_int_equal(r.active_blocks_per_sm, 1);
  assert_int_equal(r.shared_carveout_bytes, 32 * KIB);
  /* 100 %: the largest, 164 KiB, as with no preference, but kept even when less would do. */
  k.carveout_percent = 100;
  r = blocks(80, &k, 128, 0);
  assert_int_equal(r.shared_carveout_bytes, 164 * KIB);

  /* No preference, small blocks: 256 threads, 32 registers, no shared memory on sm_80: 8
   * blocks (warps) of S = 1024: the smallest carveout holding 8 * 1024 is 8 KiB. */
  k.carveout_percent = -1;
  assert_int_equal(blocks(80, &k, 256, 0).shared_carveout_bytes, 8 * KIB);
  /* sm_75 has only 32 and 64 KiB: with no shared memory the driver picks 32 KiB. */
  assert_int_equal(blocks(75, &k, 256, 0).shared_carveout_bytes, 32 * KIB);
  /* sm_86, 25 %: 25 * 102400 / 100 = 25600 -> the 32 KiB carveout; 10 KiB dynamic:
   * S = 10240 + 1024 = 11264, 32768 / 11264 = 2.9 -> 2 blocks. */
  k.carveout_percent = 25;
  r = blocks(86, &k, 128, 10 * KIB);
  assert_int_equal(r.shared_carveout_bytes, 32 * KIB);
  assert_int_equal(r.active_blocks_per_sm, 2);
}

/* ---- barriers -------------------------------------------------------------------------------- */

static void named_barriers_limit(void **state) {
  (void)state;
  /* 64 threads, 32 registers: W = 2; warps 64 / 2 = 32, registers 64 / 2 = 32. */
  cucore_kernel_resources k = kernel(32, 0);
  /* sm_90: 64 barriers per SM (2 per resident block), 16 per block: 64 / 16 = 4 blocks, 8
   * warps of 64. */
  k.barriers = 16;
  cucore_occupancy_result r = blocks(90, &k, 64, 0);
  assert_int_equal(r.blocks_limit_barriers, 4);
  assert_int_equal(r.active_blocks_per_sm, 4);
  assert_int_equal(r.limit, CUCORE_OCCUPANCY_LIMIT_BARRIERS);
  assert_int_equal(r.limiting_mask, BIT(BARRIERS));
  assert_true(r.occupancy == 0.125);
  /* sm_120: 24 barriers per SM (1 per resident block): 24 / 16 = 1 block. */
  assert_int_equal(blocks(120, &k, 64, 0).active_blocks_per_sm, 1);
  /* Unknown (-1) counts as 1. sm_120, 32 threads (W = 1: warps 48, registers 64): barriers
   * 24 / 1 = 24 = the blocks cap; both bind, blocks is reported. */
  k.barriers = -1;
  r = blocks(120, &k, 32, 0);
  assert_int_equal(r.blocks_limit_barriers, 24);
  assert_int_equal(r.limiting_mask, BIT(BLOCKS) | BIT(BARRIERS));
  assert_int_equal(r.limit, CUCORE_OCCUPANCY_LIMIT_BLOCKS);
  /* No barriers: no limit. */
  k.barriers = 0;
  assert_int_equal(blocks(120, &k, 64, 0).blocks_limit_barriers, INT_MAX);
  /* Before 9.0 the driver does not limit by barriers: sm_80 with 16 is still 32 blocks. */
  k.barriers = 16;
  r = blocks(80, &k, 64, 0);
  assert_int_equal(r.blocks_limit_barriers, INT_MAX);
  assert_int_equal(r.active_blocks_per_sm, 32);
}

static void caching_override_flag_changes_nothing_from_7_0(void **state) {
  (void)state;
  /* Partitioned global caching exists only on sm_52 and 6.x. */
  int archs[32], n = 0;
  assert_ok(cucore_arch_get_list(archs, 32, &n));
  cucore_kernel_resources k = kernel(40, 3000);
  for (int i = 0; i < n; i++) {
    cucore_arch_limits l = arch(archs[i]);
    for (int b = 32; b <= 1024; b += 96) {
      cucore_occupancy_result r0, r1;
      assert_ok(cucore_occupancy_model_blocks(&l, &k, b, 5000, CUCORE_OCCUPANCY_DEFAULT, &r0));
      assert_ok(cucore_occupancy_model_blocks(&l, &k, b, 5000,
                                              CUCORE_OCCUPANCY_DISABLE_CACHING_OVERRIDE, &r1));
      assert_memory_equal(&r0, &r1, sizeof r0);
    }
  }
}

/* ---- best block size ------------------------------------------------------------------------- */

static void best_block_for_a_register_heavy_kernel(void **state) {
  (void)state;
  cucore_arch_limits l = arch(80);
  l.sm_count = 108;
  cucore_occupancy_best best;
  /* 128 registers on sm_80: R = 4096, 16384 / 4096 = 4 warps per sub-partition, 16 warps per
   * SM. Blocks above 512 threads (W > 16) fail the per-block check (4096 * roundup(W, 4) >
   * 65536). 512: 1 block = 512 threads; 256: 2 = 512; 128: 4 = 512; nothing gets more than
   * 512 threads (16 warps), so the largest of the tied sizes, 512, wins: 1 block per SM, 16 of
   * 64 warps, grid 1 * 108. */
  cucore_kernel_resources k = kernel(128, 0);
  assert_ok(cucore_occupancy_model_best_block(&l, &k, 0, NULL, NULL, 0, 0, &best));
  assert_int_equal(best.block_size, 512);
  assert_int_equal(best.blocks_per_sm, 1);
  assert_int_equal(best.min_grid_size, 108);
  assert_true(best.occupancy == 0.25);
  assert_int_equal(best.limit, CUCORE_OCCUPANCY_LIMIT_REGISTERS);
  /* 64 registers: R = 2048, 32 warps per SM: 1024 threads = 1 block of 32 warps; smaller
   * sizes tie at 1024 threads at best, so 1024. */
  k.registers = 64;
  assert_ok(cucore_occupancy_model_best_block(&l, &k, 0, NULL, NULL, 0, 0, &best));
  assert_int_equal(best.block_size, 1024);
  assert_int_equal(best.blocks_per_sm, 1);
  /* A caller's limit of 500: tried 500, 480, ...; 500 (16 warps): 32 / 16 = 2 blocks = 1000
   * threads; 480 (15 warps): 2 = 960; 256 (8): 4 = 1024 > 1000, 128 (4): 8 = 1024 (tie, the
   * larger 256 stays); so 256. */
  assert_ok(cucore_occupancy_model_best_block(&l, &k, 0, NULL, NULL, 500, 0, &best));
  assert_int_equal(best.block_size, 256);
  assert_int_equal(best.blocks_per_sm, 4);
  /* 32 registers: 1024 threads, 2 blocks = 2048 threads fills the SM at the first size. */
  k.registers = 32;
  assert_ok(cucore_occupancy_model_best_block(&l, &k, 0, NULL, NULL, 0, 0, &best));
  assert_int_equal(best.block_size, 1024);
  assert_int_equal(best.blocks_per_sm, 2);
  assert_true(best.occupancy == 1.0);
}

static size_t bytes_per_thread(int block_size, void *userdata) {
  return (size_t)block_size * *(const size_t *)userdata;
}

static void best_block_with_shared_memory_per_thread(void **state) {
  (void)state;
  cucore_arch_limits l = arch(80);
  /* 32 registers (64 warps by registers), 96 bytes of dynamic shared memory per thread,
   * sm_80: at 864 threads, 82944 + 1024 = 83968 bytes, and 2 * 83968 = 167936, the whole SM:
   * 2 blocks (W = 27: warps and registers allow 64 / 27 = 2) = 1728 threads. Above 864 a
   * block takes more than half of the SM: 1 block, at most 1024 threads. Below, the best
   * are 832 (2 * 832 = 1664), 416 (S = 40960, 4 blocks = 1664) and 544 (3 = 1632). */
  size_t per = 96;
  cucore_kernel_resources k = kernel(32, 0);
  cucore_occupancy_best best;
  assert_ok(cucore_occupancy_model_best_block(&l, &k, 0, bytes_per_thread, &per, 0, 0, &best));
  assert_int_equal(best.block_size, 864);
  assert_int_equal(best.blocks_per_sm, 2);
  assert_int_equal(best.dynamic_shared_bytes, 864 * 96);
  assert_int_equal(best.min_grid_size, 0); /* the table does not know the SM count */
  /* And no size does better, by the model itself. */
  for (int b = 1; b <= 1024; b++) {
    cucore_occupancy_result r;
    if (cucore_occupancy_model_blocks(&l, &k, b, (size_t)b * per, 0, &r) == CUCORE_OK)
      assert_true(b * r.active_blocks_per_sm <= 1728);
  }
  /* 6000 bytes per thread: even 32 threads need 192000 bytes, above the 166912-byte opt-in
   * maximum. No size can run: an error naming the smallest size tried and its numbers. */
  per = 6000;
  assert_status(cucore_occupancy_model_best_block(&l, &k, 0, bytes_per_thread, &per, 0, 0, &best),
                CUCORE_LAUNCH_OUT_OF_RESOURCES);
  assert_contains(cucore_last_error(), "no block size");
  assert_contains(cucore_last_error(), "at 32 threads");
  assert_contains(cucore_last_error(), "192000 bytes of dynamic");
  assert_int_equal(best.block_size, 0);
}

/* ---- available dynamic shared memory --------------------------------------------------------- */

static void available_shared_memory(void **state) {
  (void)state;
  cucore_arch_limits l = arch(80);
  cucore_kernel_resources k = kernel(32, 0);
  size_t bytes = 0;
  /* The driver's rule (cuOccupancyAvailableDynamicSMemPerBlock; the H100 sweep in
   * tests/gpu_occupancy.c confirms it): the SM's shared memory split among the blocks, rounded
   * down to the granularity, less static memory -- the 1 KB per-block reservation is NOT
   * taken off. 2 blocks of 128 threads on sm_80: 167936 / 2 = 83968. */
  assert_ok(cucore_occupancy_model_available_shared(&l, &k, 128, 2, &bytes));
  assert_int_equal(bytes, 83968);
  /* 3 blocks: 167936 / 3 = 55978.7, down to a multiple of 128: 55936. */
  assert_ok(cucore_occupancy_model_available_shared(&l, &k, 128, 3, &bytes));
  assert_int_equal(bytes, 55936);
  /* 1 block: the opt-in maximum, 163 KiB = 166912. */
  assert_ok(cucore_occupancy_model_available_shared(&l, &k, 128, 1, &bytes));
  assert_int_equal(bytes, 166912);
  /* With 1000 bytes static: 2 blocks: 83968 - 1000 = 82968. */
  k.static_shared_bytes = 1000;
  assert_ok(cucore_occupancy_model_available_shared(&l, &k, 128, 2, &bytes));
  assert_int_equal(bytes, 82968);
  /* A 50 % carveout (100 KiB) and 2 blocks: 102400 / 2 = 51200 - 1000 = 50200. */
  k.carveout_percent = 50;
  assert_ok(cucore_occupancy_model_available_shared(&l, &k, 128, 2, &bytes));
  assert_int_equal(bytes, 50200);
  /* sm_70 (256-byte granularity): 3 blocks: 98304 / 3 = 32768. */
  cucore_arch_limits v = arch(70);
  cucore_kernel_resources k0 = kernel(32, 0);
  assert_ok(cucore_occupancy_model_available_shared(&v, &k0, 128, 3, &bytes));
  assert_int_equal(bytes, 32768);

  /* One block always fits with the answer, on every architecture. */
  int archs[32], n = 0;
  assert_ok(cucore_arch_get_list(archs, 32, &n));
  for (int i = 0; i < n; i++) {
    cucore_arch_limits a = arch(archs[i]);
    cucore_occupancy_result r;
    assert_ok(cucore_occupancy_model_available_shared(&a, &k0, 96, 1, &bytes));
    assert_ok(cucore_occupancy_model_blocks(&a, &k0, 96, bytes, 0, &r));
    assert_true(r.active_blocks_per_sm >= 1);
  }

  /* 40 blocks cannot be resident on sm_80 (32 at most). */
  assert_status(cucore_occupancy_model_available_shared(&l, &k0, 32, 40, &bytes),
                CUCORE_LAUNCH_OUT_OF_RESOURCES);
  assert_contains(cucore_last_error(), "at most 32 fit");
  assert_contains(cucore_last_error(), "limited by blocks");
  assert_int_equal(bytes, 0);
  assert_status(cucore_occupancy_model_available_shared(&l, &k0, 32, 0, &bytes),
                CUCORE_INVALID_ARGUMENT);
}

/* ---- invalid inputs and refusals ------------------------------------------------------------- */

static void invalid_inputs_are_named(void **state) {
  (void)state;
  cucore_arch_limits l = arch(90);
  cucore_kernel_resources k = kernel(32, 0);
  cucore_occupancy_result r;

  assert_status(cucore_occupancy_model_blocks(&l, &k, 0, 0, 0, &r), CUCORE_LAUNCH_CONFIG);
  assert_contains(cucore_last_error(), "block size 0 is outside 1..1024");
  assert_status(cucore_occupancy_model_blocks(&l, &k, 1025, 0, 0, &r), CUCORE_LAUNCH_CONFIG);
  assert_contains(cucore_last_error(), "sm_90 maximum of 1024");
  k.max_threads_per_block = 256;
  assert_status(cucore_occupancy_model_blocks(&l, &k, 257, 0, 0, &r), CUCORE_LAUNCH_CONFIG);
  assert_contains(cucore_last_error(), "kernel's maximum of 256");
  k.max_threads_per_block = 0;

  k.registers = 256;
  assert_status(cucore_occupancy_model_blocks(&l, &k, 128, 0, 0, &r), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "256 registers per thread");
  assert_contains(cucore_last_error(), "0..255");
  k.registers = 32;
  k.carveout_percent = 101;
  assert_status(cucore_occupancy_model_blocks(&l, &k, 128, 0, 0, &r), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "carveout_percent 101");
  k.carveout_percent = -1;
  k.barriers = 17;
  assert_status(cucore_occupancy_model_blocks(&l, &k, 128, 0, 0, &r), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "17 named barriers");
  k.barriers = -1;
  assert_status(cucore_occupancy_model_blocks(&l, &k, 128, 0, 4, &r), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "unknown flags 0x4");
  assert_status(cucore_occupancy_model_blocks(NULL, &k, 128, 0, 0, &r), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "`limits` is NULL");
  assert_status(cucore_occupancy_model_blocks(&l, NULL, 128, 0, 0, &r), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_occupancy_model_blocks(&l, &k, 128, 0, 0, NULL), CUCORE_INVALID_ARGUMENT);
  /* Dynamic memory far beyond any limit (no overflow in the arithmetic). */
  assert_status(cucore_occupancy_model_blocks(&l, &k, 128, (size_t)-1, 0, &r),
                CUCORE_LAUNCH_OUT_OF_RESOURCES);

  /* Limits that contradict themselves are refused, not trusted. */
  cucore_arch_limits bad = l;
  bad.warp_size = 0;
  assert_status(cucore_occupancy_model_blocks(&bad, &k, 128, 0, 0, &r), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "warp_size");
  bad = l;
  bad.carveout_bytes[2] = bad.carveout_bytes[1];
  assert_status(cucore_occupancy_model_blocks(&bad, &k, 128, 0, 0, &r), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "ascending");
  bad = l;
  bad.shared_per_sm = 200 * KIB;
  assert_status(cucore_occupancy_model_blocks(&bad, &k, 128, 0, 0, &r), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "last carveout");

  /* Unknown architecture: the known ones are listed. */
  cucore_arch_limits none;
  assert_status(cucore_arch_get_limits(61, &none), CUCORE_NOT_SUPPORTED);
  assert_contains(cucore_last_error(), "6.1");
  assert_contains(cucore_last_error(), "sm_70");
  assert_contains(cucore_last_error(), "sm_90");
  assert_contains(cucore_last_error(), "sm_121");
}

/* Each limit field out of its range is named with the range (1..2^20 for counts, 0..2^20-1 for
 * sizes); with two out, the first in the structure's order. */
static void limit_fields_are_named_with_their_range(void **state) {
  (void)state;
  const cucore_kernel_resources k = kernel(32, 0);
  cucore_occupancy_result r;
  cucore_arch_limits bad = arch(90);
  bad.warp_size = 0;
  assert_status(cucore_occupancy_model_blocks(&bad, &k, 128, 0, 0, &r), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "warp_size must be 1..1048576");
  assert_contains(cucore_last_error(), "arch 90");
  bad = arch(90);
  bad.regs_per_sm = (1 << 20) + 1;
  assert_status(cucore_occupancy_model_blocks(&bad, &k, 128, 0, 0, &r), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "regs_per_sm must be 1..1048576");
  bad = arch(90);
  bad.reserved_shared_per_block = -1;
  assert_status(cucore_occupancy_model_blocks(&bad, &k, 128, 0, 0, &r), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "reserved_shared_per_block must be 0..1048575");
  bad = arch(90);
  bad.sm_count = 1 << 20;
  assert_status(cucore_occupancy_model_blocks(&bad, &k, 128, 0, 0, &r), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "sm_count must be 0..1048575");
  bad = arch(90);
  bad.shared_alloc_granularity = 0;
  bad.barriers_per_sm = -5;
  assert_status(cucore_occupancy_model_blocks(&bad, &k, 128, 0, 0, &r), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "shared_alloc_granularity must be 1..1048576");
  bad = arch(90);
  bad.reg_alloc_unit = 3;
  assert_status(cucore_occupancy_model_blocks(&bad, &k, 128, 0, 0, &r), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "must be powers of two");
}

static void clusters_are_refused_with_the_reason(void **state) {
  (void)state;
  cucore_kernel_resources k = kernel(32, 0);
  int clusters = -1;
  cucore_arch_limits l = arch(90);
  assert_status(cucore_occupancy_model_clusters(&l, &k, 128, 2, 0, &clusters),
                CUCORE_NOT_SUPPORTED);
  assert_contains(cucore_last_error(), "GPC");
  assert_contains(cucore_last_error(), "cuOccupancyMaxActiveClusters");
  assert_int_equal(clusters, 0);
  l = arch(80);
  assert_status(cucore_occupancy_model_clusters(&l, &k, 128, 2, 0, &clusters),
                CUCORE_NOT_SUPPORTED);
  assert_contains(cucore_last_error(), "sm_80 has no thread block clusters");
  assert_status(cucore_occupancy_model_clusters(&l, &k, 128, 0, 0, &clusters),
                CUCORE_INVALID_ARGUMENT);
}

static void limit_names(void **state) {
  (void)state;
  assert_string_equal(cucore_occupancy_limit_name(CUCORE_OCCUPANCY_LIMIT_WARPS), "warps");
  assert_string_equal(cucore_occupancy_limit_name(CUCORE_OCCUPANCY_LIMIT_REGISTERS), "registers");
  assert_string_equal(cucore_occupancy_limit_name(CUCORE_OCCUPANCY_LIMIT_SHARED_MEMORY),
                      "shared_memory");
  assert_string_equal(cucore_occupancy_limit_name(CUCORE_OCCUPANCY_LIMIT_BLOCKS), "blocks");
  assert_string_equal(cucore_occupancy_limit_name(CUCORE_OCCUPANCY_LIMIT_BARRIERS), "barriers");
  assert_string_equal(cucore_occupancy_limit_name((cucore_occupancy_limit)99), "unknown");
}

/* A kernel read offline becomes the model's input: unknown limits become "the architecture's"
 * and "barriers unknown"; NULLs are refused by name. */
static void resources_from_kernel_info(void **state) {
  (void)state;
  cucore_kernel_info k;
  memset(&k, 0, sizeof k);
  k.registers = 40;
  k.static_shared_bytes = 4096;
  k.max_threads_per_block = CUCORE_UNKNOWN;
  k.barriers = 0;
  cucore_kernel_resources r;
  assert_ok(cucore_kernel_info_get_resources(&k, &r));
  assert_int_equal(r.registers, 40);
  assert_int_equal(r.static_shared_bytes, 4096);
  assert_int_equal(r.max_threads_per_block, 0);
  assert_int_equal(r.barriers, -1);
  assert_int_equal(r.carveout_percent, -1);
  assert_int_equal(r.max_dynamic_shared_bytes, 0);
  k.max_threads_per_block = 256, k.barriers = 2;
  assert_ok(cucore_kernel_info_get_resources(&k, &r));
  assert_int_equal(r.max_threads_per_block, 256);
  assert_int_equal(r.barriers, 2);
  assert_int_equal(CUCORE_CODE(cucore_kernel_info_get_resources(NULL, &r)),
                   CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "info");
  assert_int_equal(CUCORE_CODE(cucore_kernel_info_get_resources(&k, NULL)),
                   CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "out");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(register_granularity_at_256_threads),
      cmocka_unit_test(per_block_register_check_rounds_warps_to_sub_partitions),
      cmocka_unit_test(kernel_without_registers_has_no_register_limit),
      cmocka_unit_test(a_block_of_33_threads_takes_two_warps),
      cmocka_unit_test(blocks_per_sm_cap),
      cmocka_unit_test(shared_reservation_and_granularity),
      cmocka_unit_test(shared_memory_per_block_limits),
      cmocka_unit_test(carveout_selection),
      cmocka_unit_test(named_barriers_limit),
      cmocka_unit_test(caching_override_flag_changes_nothing_from_7_0),
      cmocka_unit_test(best_block_for_a_register_heavy_kernel),
      cmocka_unit_test(best_block_with_shared_memory_per_thread),
      cmocka_unit_test(available_shared_memory),
      cmocka_unit_test(invalid_inputs_are_named),
      cmocka_unit_test(limit_fields_are_named_with_their_range),
      cmocka_unit_test(clusters_are_refused_with_the_reason),
      cmocka_unit_test(limit_names),
      cmocka_unit_test(resources_from_kernel_info),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
