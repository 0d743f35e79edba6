/*
 * arch_table.c -- the one table of per-architecture limits used by the occupancy model, and
 * the calls that read it.
 *
 * Sources, column by column (KB = 1024 bytes throughout):
 *  [PG13]  CUDA Programming Guide (CUDA 13.1, Dec 2025), section 5.1 "Compute Capabilities":
 *          Table 30 (resident blocks, warps and threads per SM; threads per block; warp size),
 *          Table 31 (registers per SM / block / thread; shared memory per SM and per block),
 *          Table 32 (the shared-memory capacities an SM can be set to: the carveouts).
 *          Covers 7.5, 8.0, 8.6, 8.7, 8.9, 9.0, 10.0, 10.3, 11.0 and 12.x.
 *  [PG12]  CUDA C++ Programming Guide (CUDA 12.x), "Technical Specifications per Compute
 *          Capability" and "Compute Capability 7.x / Shared Memory": 7.0 and 7.2 (Volta and
 *          Xavier), which the CUDA 13 guide no longer lists: 32 blocks, 64 warps, 96 KB per SM
 *          and per block, carveouts 0, 8, 16, 32, 64, 96 KB.
 *  [OCC]   cuda_occupancy.h of the CUDA 13.0 toolkit: register allocation unit (256, per
 *          warp), register sub-partitions per SM (4; the warp allocation granularity of the
 *          per-block register check), shared-memory allocation granularity (256 bytes for
 *          7.x, 128 bytes from 8.0), resident blocks per SM (agrees with [PG13]), the carveout
 *          steps (agree with [PG13]), the named barriers available per SM (2 per resident
 *          block on 7.x, 8.0, 9.0, 10.0, 10.3; 1 per resident block on 8.6, 8.7, 8.9, 10.1,
 *          11.0, 12.x) and that the barrier limit is applied from 9.0 on, and sm_101 (the
 *          name CUDA 12.8/12.9 gave to the chip CUDA 13 calls sm_110).
 *  [RSV]   [PG13] Table 31 footnote and the 8.x/9.0/12.0 shared-memory sections: "the 1 KB of
 *          shared memory not made available to a thread block is reserved for system use";
 *          the per-SM maximum minus the per-block maximum is that 1 KB from 8.0 on and 0 on
 *          7.x. cudaDevAttrReservedSharedMemoryPerBlock reports the same number.
 *  [PTX]   PTX ISA, bar/barrier: barriers 0..15, so 16 named barriers per block.
 *  The default per-block shared-memory limit without opt-in is 48 KB on every architecture
 *  ([PG13] Table 31 footnote 3: over 48 KB needs an explicit opt-in).
 */
#include "exec/occupancy_model.h"

#include "base/base.h"

#include <stdio.h>
#include <string.h>

#define KB 1024

/* Values shared by every architecture in the table. */
#define CC_COMMON                                                                         \
  .warp_size = 32, .max_threads_per_block = 1024, .regs_per_sm = 64 * 1024,               \
  .max_regs_per_block = 64 * 1024, .max_regs_per_thread = 255, .reg_alloc_unit = 256,     \
  .warp_alloc_granularity = 4, .shared_per_block = 48 * KB, .max_barriers_per_block = 16, \
  .sm_count = 0

/* Carveout lists, the count first ([PG13] Table 32, [PG12] for 7.0/7.2). */
#define CC_CARVE_VOLTA 6, 0, 8 * KB, 16 * KB, 32 * KB, 64 * KB, 96 * KB
#define CC_CARVE_TURING 2, 32 * KB, 64 * KB
#define CC_CARVE_100K 6, 0, 8 * KB, 16 * KB, 32 * KB, 64 * KB, 100 * KB
#define CC_CARVE_164K 8, 0, 8 * KB, 16 * KB, 32 * KB, 64 * KB, 100 * KB, 132 * KB, 164 * KB
#define CC_CARVE_228K \
  10, 0, 8 * KB, 16 * KB, 32 * KB, 64 * KB, 100 * KB, 132 * KB, 164 * KB, 196 * KB, 228 * KB

/* One row per architecture:
 *   arch, name, family, warps/SM, blocks/SM, shared/SM, opt-in/block, reserved/block,
 *   shared granularity, barriers/SM, barrier limit applied, carveouts. */
#define CC_ROW(ARCH, NAME, FAMILY, WARPS, BLOCKS, SMEM_SM, OPTIN, RESERVED, GRAN, BARS,        \
               BARS_APPLY, CARVE)                                                              \
  CC_ROW_(ARCH, NAME, FAMILY, WARPS, BLOCKS, SMEM_SM, OPTIN, RESERVED, GRAN, BARS, BARS_APPLY, \
          CARVE)
#define CC_ROW_(ARCH, NAME, FAMILY, WARPS, BLOCKS, SMEM_SM, OPTIN, RESERVED, GRAN, BARS, \
                BARS_APPLY, NCARVE, ...)                                                 \
  {                                                                                      \
    CC_COMMON, .arch = ARCH, .name = NAME, .family = FAMILY, .max_warps_per_sm = WARPS,  \
               .max_threads_per_sm = (WARPS)*32, .max_blocks_per_sm = BLOCKS,            \
               .shared_per_sm = SMEM_SM, .shared_per_block_optin = OPTIN,                \
               .reserved_shared_per_block = RESERVED, .shared_alloc_granularity = GRAN,  \
               .barriers_per_sm = BARS, .barrier_limit_applies = BARS_APPLY,             \
               .carveout_count = NCARVE, .carveout_bytes = {                             \
                 __VA_ARGS__                                                             \
               }                                                                         \
  }

static const cc_arch_limits cc_arch_rows[] = {
    /* arch name family warps blk shared/SM opt-in/blk reserved gran bars apply carveouts */
    CC_ROW(70, "sm_70", "Volta", 64, 32, 96 * KB, 96 * KB, 0, 256, 64, 0, CC_CARVE_VOLTA),
    CC_ROW(72, "sm_72", "Volta", 64, 32, 96 * KB, 96 * KB, 0, 256, 64, 0, CC_CARVE_VOLTA),
    CC_ROW(75, "sm_75", "Turing", 32, 16, 64 * KB, 64 * KB, 0, 256, 32, 0, CC_CARVE_TURING),
    CC_ROW(80, "sm_80", "Ampere", 64, 32, 164 * KB, 163 * KB, 1 * KB, 128, 64, 0, CC_CARVE_164K),
    CC_ROW(86, "sm_86", "Ampere", 48, 16, 100 * KB, 99 * KB, 1 * KB, 128, 16, 0, CC_CARVE_100K),
    CC_ROW(87, "sm_87", "Ampere", 48, 16, 164 * KB, 163 * KB, 1 * KB, 128, 16, 0, CC_CARVE_164K),
    CC_ROW(89, "sm_89", "Ada", 48, 24, 100 * KB, 99 * KB, 1 * KB, 128, 24, 0, CC_CARVE_100K),
    CC_ROW(90, "sm_90", "Hopper", 64, 32, 228 * KB, 227 * KB, 1 * KB, 128, 64, 1, CC_CARVE_228K),
    CC_ROW(100, "sm_100", "Blackwell", 64, 32, 228 * KB, 227 * KB, 1 * KB, 128, 64, 1,
           CC_CARVE_228K),
    /* sm_101: CUDA 12.8/12.9's name for the chip CUDA 13 calls sm_110 ([OCC] case 10.1). */
    CC_ROW(101, "sm_101", "Blackwell", 48, 24, 228 * KB, 227 * KB, 1 * KB, 128, 24, 1,
           CC_CARVE_228K),
    CC_ROW(103, "sm_103", "Blackwell", 64, 32, 228 * KB, 227 * KB, 1 * KB, 128, 64, 1,
           CC_CARVE_228K),
    CC_ROW(110, "sm_110", "Blackwell", 48, 24, 228 * KB, 227 * KB, 1 * KB, 128, 24, 1,
           CC_CARVE_228K),
    CC_ROW(120, "sm_120", "Blackwell", 48, 24, 100 * KB, 99 * KB, 1 * KB, 128, 24, 1,
           CC_CARVE_100K),
    CC_ROW(121, "sm_121", "Blackwell", 48, 24, 100 * KB, 99 * KB, 1 * KB, 128, 24, 1,
           CC_CARVE_100K),
};

const cc_arch_limits *cc_arch_limits_find(int arch) {
  for (size_t i = 0; i < CC_ARRAY_LEN(cc_arch_rows); i++)
    if (cc_arch_rows[i].arch == arch) return &cc_arch_rows[i];
  return NULL;
}

const cc_arch_limits *cc_arch_table(int *count) {
  *count = (int)CC_ARRAY_LEN(cc_arch_rows);
  return cc_arch_rows;
}

const char *cc_arch_known(char *buf, size_t len) {
  size_t used = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < CC_ARRAY_LEN(cc_arch_rows) && used < len; i++) {
    int n = snprintf(buf + used, len - used, "%s%s", i ? ", " : "", cc_arch_rows[i].name);
    if (n < 0) break;
    used += (size_t)n;
  }
  return buf;
}

static cucore_status fail_unknown_arch(const char *fn, int arch) {
  char known[256];
  return cc_fail(CUCORE_NOT_SUPPORTED,
                 "%s: compute capability %d.%d (arch %d) is not in cucore's occupancy table; "
                 "known architectures: %s",
                 fn, arch / 10, arch % 10, arch, cc_arch_known(known, sizeof known));
}

cucore_status cucore_arch_get_limits(int arch, cucore_arch_limits *out) {
  cc_begin();
  CC_CHECK_ARG(out, "cucore_arch_get_limits", "out");
  const cc_arch_limits *row = cc_arch_limits_find(arch);
  if (!row) {
    memset(out, 0, sizeof *out);
    return fail_unknown_arch("cucore_arch_get_limits", arch);
  }
  *out = *row;
  return CUCORE_OK;
}

cucore_status cucore_arch_get_list(int *archs, int capacity, int *count) {
  cc_begin();
  CC_CHECK_ARG(count, "cucore_arch_get_list", "count");
  if (capacity < 0 || (capacity > 0 && archs == NULL))
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "cucore_arch_get_list: `archs` must hold `capacity` (%d) entries", capacity);
  int n = (int)CC_ARRAY_LEN(cc_arch_rows);
  for (int i = 0; i < n && i < capacity; i++) archs[i] = cc_arch_rows[i].arch;
  *count = n;
  return CUCORE_OK;
}

/* *field = reported, when the device reported the limit (above 0). */
static void take(int *field, int reported) {
  if (reported > 0) *field = reported;
}

cucore_status cucore_arch_limits_from_device(const cucore_device_props *props,
                                             cucore_arch_limits *out) {
  static const char fn[] = "cucore_arch_limits_from_device";
  cc_begin();
  CC_CHECK_ARG(out, fn, "out");
  memset(out, 0, sizeof *out);
  CC_CHECK_ARG(props, fn, "props");
  const cc_arch_limits *row = cc_arch_limits_find(props->arch);
  if (!row) return fail_unknown_arch(fn, props->arch);
  *out = *row;
  /* What the device reports wins over the table; a field the device left at 0 keeps the
   * table's value. */
  take(&out->warp_size, props->warp_size);
  take(&out->max_threads_per_block, props->max_threads_per_block);
  take(&out->max_threads_per_sm, props->max_threads_per_sm);
  take(&out->max_blocks_per_sm, props->max_blocks_per_sm);
  take(&out->regs_per_sm, props->regs_per_sm);
  take(&out->max_regs_per_block, props->regs_per_block);
  take(&out->shared_per_sm, props->shared_per_sm);
  take(&out->shared_per_block, props->shared_per_block);
  take(&out->shared_per_block_optin, props->shared_per_block_optin);
  take(&out->sm_count, props->sm_count);
  if (props->reserved_shared_per_block >= 0 && props->shared_per_sm > 0)
    out->reserved_shared_per_block = props->reserved_shared_per_block;
  out->max_warps_per_sm = out->max_threads_per_sm / out->warp_size;
  out->max_threads_per_sm = out->max_warps_per_sm * out->warp_size;
  /* Keep the carveouts the device's shared memory per SM allows; make sure the largest one
   * is the device's maximum. */
  int n = 0;
  while (n < out->carveout_count && out->carveout_bytes[n] < out->shared_per_sm) n++;
  if (n < CUCORE_ARCH_MAX_CARVEOUTS) out->carveout_bytes[n++] = out->shared_per_sm;
  for (int i = n; i < CUCORE_ARCH_MAX_CARVEOUTS; i++) out->carveout_bytes[i] = 0;
  out->carveout_count = n;
  return CUCORE_OK;
}
