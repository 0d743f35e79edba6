/*
 * occupancy_model.c -- how many blocks of a kernel stay resident on one SM, computed on the
 * host from the kernel's resources and the architecture's limits.
 *
 * The arithmetic is the one documented by the CUDA toolkit's host calculator
 * (cuda_occupancy.h, cudaOccMaxActiveBlocksPerMultiprocessor), for compute capability 7.0+:
 *
 *   warps per block   W = ceil(block / warp_size)
 *   warps limit         = max_warps_per_sm / W                     (0 if block > max block)
 *   registers per warp  R = roundup(registers * warp_size, reg_alloc_unit)
 *   registers limit     = floor(floor(regs_per_sm / P) / R) * P / W, P = sub-partitions (4);
 *                         0 when R*W or R*roundup(W, P) exceeds max_regs_per_block
 *   shared per block    S = roundup(static + dynamic + reserved, shared_alloc_granularity)
 *   carveout            C = the preferred carveout (percent of shared_per_sm rounded up to a
 *                         legal carveout; the largest with no preference) when C >= S, else
 *                         the smallest legal carveout >= S
 *   shared limit        = C / S                                   (no limit when S is 0)
 *   blocks limit        = max_blocks_per_sm
 *   barriers limit      = barriers_per_sm / barriers              (9.0+, when barriers > 0)
 *   active blocks       = the smallest of the five.
 *
 * Partitioned global caching (cudaOccPartitionedGCConfig, the caching override flag) exists
 * only on sm_52 and 6.x, so it never changes an answer here.
 */
#include "exec/occupancy_model.h"

#include "base/base.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

/* Upper bound for any limit field: far above every real GPU (whose largest is 233472 bytes of
 * shared memory per SM), low enough that the model's sums and products of a field with a
 * warp size (at most 1024) or a percentage fit in an int. */
#define CC_OCC_FIELD_MAX (1 << 20)
#define CC_OCC_WARP_SIZE_MAX 1024

static inline long long round_up(long long x, long long unit) {
  return (x + unit - 1) / unit * unit;
}

/* Rounding and division by the granularities, which are powers of two (checked): masks and
 * shifts instead of divisions, which dominate the cost of a query. */
static inline int round_up_pow2(int x, int unit) { return (x + unit - 1) & ~(unit - 1); }

static inline int log2_pow2(int x) {
#if defined(__GNUC__)
  return __builtin_ctz((unsigned)x);
#else
  int n = 0;
  while ((1 << n) < x) n++;
  return n;
#endif
}

/* Division by small divisors without a divide instruction (a query made four of them, which
 * were half its time): floor(n / d) = (n * ceil(2^32 / d)) >> 32, exact for 0 <= n < 2^21 and
 * 1 <= d < 2^10 (the error of the reciprocal, below d, times n stays below 2^32). Every
 * dividend here is a checked limit field (at most CC_OCC_FIELD_MAX = 2^20) or one shifted
 * right; the divisors are warps per block, a warp's registers in allocation units, a block's
 * shared memory in allocation granules and named barriers: below 1024 on every real GPU, a
 * real division otherwise. The table is built by the compiler. */
#define CC_RCP(d) ((d) ? ((1ull << 32) + (d)-1) / ((d) ? (d) : 1) : 0)
#define CC_RCP4(d) CC_RCP(d), CC_RCP((d) + 1), CC_RCP((d) + 2), CC_RCP((d) + 3)
#define CC_RCP16(d) CC_RCP4(d), CC_RCP4((d) + 4), CC_RCP4((d) + 8), CC_RCP4((d) + 12)
#define CC_RCP64(d) CC_RCP16(d), CC_RCP16((d) + 16), CC_RCP16((d) + 32), CC_RCP16((d) + 48)
#define CC_RCP256(d) CC_RCP64(d), CC_RCP64((d) + 64), CC_RCP64((d) + 128), CC_RCP64((d) + 192)
#define CC_RCP_COUNT 1024
static const uint64_t cc_rcp[CC_RCP_COUNT] = {CC_RCP256(0), CC_RCP256(256), CC_RCP256(512),
                                              CC_RCP256(768)};

static inline int div_small(int n, int d) {
  if (CC_LIKELY((unsigned)d < CC_RCP_COUNT)) return (int)(((uint64_t)n * cc_rcp[d]) >> 32);
  return n / d;
}

static inline int is_pow2(int x) { return x > 0 && (x & (x - 1)) == 0; }

/* The smallest legal carveout of at least `bytes` (0 <= bytes < 2^31), or -1 when none is
 * that large. Without a data-dependent branch (a mispredicted loop exit cost more than the
 * rest of the search): the carveouts are ascending (checked), so the answer's index is the
 * number of them below `bytes`, counted over the whole fixed-size array (which the compiler
 * vectorises) with the entries past carveout_count masked off. */
static inline int carveout_at_least(const cc_arch_limits *l, int bytes) {
  const int n = l->carveout_count;
  int below = 0;
  for (int i = 0; i < CUCORE_ARCH_MAX_CARVEOUTS; i++)
    below += (i < n) & (l->carveout_bytes[i] < bytes);
  return below < n ? l->carveout_bytes[below] : -1;
}

/* The carveout the kernel's preference asks for (percent of the largest, rounded up to a
 * legal carveout), the largest when there is no preference. */
static inline int preferred_carveout(const cc_arch_limits *l, int percent) {
  if (percent < 0) return l->carveout_bytes[l->carveout_count - 1];
  return carveout_at_least(l, percent * l->shared_per_sm / 100); /* < 2^27 */
}

int cc_occupancy_max_block(const cc_arch_limits *l, const cucore_kernel_resources *k) {
  int m = l->max_threads_per_block;
  if (k->max_threads_per_block > 0 && k->max_threads_per_block < m) m = k->max_threads_per_block;
  return m;
}

/* ---- checking inputs ------------------------------------------------------------------------ */

static cucore_status bad_limits(const char *fn, const cc_arch_limits *l, const char *what) {
  return cc_fail(CUCORE_INVALID_ARGUMENT,
                 "%s: the architecture limits (arch %d) are inconsistent: %s. Fill them with "
                 "cucore_arch_get_limits or cucore_arch_limits_from_device",
                 fn, l->arch, what);
}

/* A field's bits outside its range, for limits_plausible: x is in 1..CC_OCC_FIELD_MAX when
 * x - 1 (as unsigned) has no bit at or above CC_OCC_FIELD_MAX, and in 0..CC_OCC_FIELD_MAX - 1
 * when x has none. */
static inline unsigned positive_bits(int x) { return (unsigned)x - 1u; }
static inline unsigned non_negative_bits(int x) { return (unsigned)x; }

/* The checks of explain_limits without messages and without branches (the query path runs
 * them every time): every field in range, the granularities powers of two. One OR over the
 * fields' bits says whether any is out. */
static inline int limits_plausible(const cc_arch_limits *l) {
  const unsigned any = positive_bits(l->warp_size) | positive_bits(l->max_threads_per_block) |
                       positive_bits(l->max_warps_per_sm) | positive_bits(l->max_blocks_per_sm) |
                       positive_bits(l->regs_per_sm) | positive_bits(l->max_regs_per_block) |
                       positive_bits(l->max_regs_per_thread) | positive_bits(l->reg_alloc_unit) |
                       positive_bits(l->warp_alloc_granularity) |
                       positive_bits(l->shared_alloc_granularity) |
                       non_negative_bits(l->shared_per_sm) |
                       non_negative_bits(l->shared_per_block) |
                       non_negative_bits(l->shared_per_block_optin) |
                       non_negative_bits(l->reserved_shared_per_block) |
                       non_negative_bits(l->max_barriers_per_block) |
                       non_negative_bits(l->barriers_per_sm) | non_negative_bits(l->sm_count);
  const unsigned pow2 = (l->warp_size & (l->warp_size - 1)) |
                        (l->reg_alloc_unit & (l->reg_alloc_unit - 1)) |
                        (l->warp_alloc_granularity & (l->warp_alloc_granularity - 1)) |
                        (l->shared_alloc_granularity & (l->shared_alloc_granularity - 1));
  return ((any & ~(unsigned)(CC_OCC_FIELD_MAX - 1)) | pow2) == 0 &&
         l->warp_size <= CC_OCC_WARP_SIZE_MAX &&
         l->max_threads_per_sm == l->max_warps_per_sm * l->warp_size;
}

/* CUCORE_OK when `value`, the field `name` of `l`, is in lo..lo + CC_OCC_FIELD_MAX - 1 (lo is
 * 1 for a count, 0 for a size); the failure naming the field and its range otherwise. */
static cucore_status field_in_range(const char *fn, const cc_arch_limits *l, const char *name,
                                    int value, int lo) {
  if (value >= lo && value - lo < CC_OCC_FIELD_MAX) return CUCORE_OK;
  char what[96];
  snprintf(what, sizeof what, "%s must be %d..%d", name, lo, lo + CC_OCC_FIELD_MAX - 1);
  return bad_limits(fn, l, what);
}

/* Which field of limits that failed limits_ok is wrong, for the message. */
static cucore_status explain_limits(const char *fn, const cc_arch_limits *l) {
  const int n = l->carveout_count;
  const struct {
    const char *name;
    int value, lo;
  } fields[] = {
      {"warp_size", l->warp_size, 1},
      {"max_threads_per_block", l->max_threads_per_block, 1},
      {"max_warps_per_sm", l->max_warps_per_sm, 1},
      {"max_blocks_per_sm", l->max_blocks_per_sm, 1},
      {"regs_per_sm", l->regs_per_sm, 1},
      {"max_regs_per_block", l->max_regs_per_block, 1},
      {"max_regs_per_thread", l->max_regs_per_thread, 1},
      {"reg_alloc_unit", l->reg_alloc_unit, 1},
      {"warp_alloc_granularity", l->warp_alloc_granularity, 1},
      {"shared_alloc_granularity", l->shared_alloc_granularity, 1},
      {"shared_per_sm", l->shared_per_sm, 0},
      {"shared_per_block", l->shared_per_block, 0},
      {"shared_per_block_optin", l->shared_per_block_optin, 0},
      {"reserved_shared_per_block", l->reserved_shared_per_block, 0},
      {"max_barriers_per_block", l->max_barriers_per_block, 0},
      {"barriers_per_sm", l->barriers_per_sm, 0},
      {"sm_count", l->sm_count, 0},
  };
  for (size_t i = 0; i < CC_ARRAY_LEN(fields); i++) {
    cucore_status st = field_in_range(fn, l, fields[i].name, fields[i].value, fields[i].lo);
    if (st != CUCORE_OK) return st;
  }
  if (!is_pow2(l->warp_size) || l->warp_size > CC_OCC_WARP_SIZE_MAX)
    return bad_limits(fn, l, "warp_size must be a power of two up to 1024");
  if (!is_pow2(l->reg_alloc_unit) || !is_pow2(l->warp_alloc_granularity) ||
      !is_pow2(l->shared_alloc_granularity))
    return bad_limits(fn, l,
                      "reg_alloc_unit, warp_alloc_granularity and shared_alloc_granularity "
                      "must be powers of two");
  if (l->max_threads_per_sm != l->max_warps_per_sm * l->warp_size)
    return bad_limits(fn, l, "max_threads_per_sm must be max_warps_per_sm * warp_size");
  if (n < 1 || n > CUCORE_ARCH_MAX_CARVEOUTS)
    return bad_limits(fn, l, "carveout_count must be 1..CUCORE_ARCH_MAX_CARVEOUTS");
  if (l->carveout_bytes[n - 1] != l->shared_per_sm)
    return bad_limits(fn, l, "the last carveout must be shared_per_sm");
  return bad_limits(fn, l, "carveout_bytes must be ascending and not negative");
}

/* Everything explain_limits and explain_check require, without messages and with few
 * branches: the query path runs this every time. */
static inline __attribute__((always_inline)) int limits_ok(const cc_arch_limits *l) {
  const int n = l->carveout_count;
  if (!limits_plausible(l) || n < 1 || n > CUCORE_ARCH_MAX_CARVEOUTS ||
      l->carveout_bytes[n - 1] != l->shared_per_sm)
    return 0;
  unsigned unordered = (unsigned)l->carveout_bytes[0] >> 31;
  for (int i = 1; i < n; i++)
    unordered |= (unsigned)(l->carveout_bytes[i] <= l->carveout_bytes[i - 1]);
  return !unordered;
}

static inline int resources_ok(const cc_arch_limits *l, const cucore_kernel_resources *k,
                               unsigned flags) {
  return ((unsigned)k->registers <= (unsigned)l->max_regs_per_thread) &
         (k->static_shared_bytes >= 0) & (k->max_threads_per_block >= 0) &
         ((unsigned)(k->barriers + 1) <= (unsigned)l->max_barriers_per_block + 1u) &
         ((unsigned)(k->carveout_percent + 1) <= 101u) & (k->max_dynamic_shared_bytes >= 0) &
         !(flags & ~(unsigned)CUCORE_OCCUPANCY_DISABLE_CACHING_OVERRIDE);
}

/* The failure cc_occupancy_check found, with its message. */
static CC_COLD cucore_status explain_check(const char *fn, const cc_arch_limits *l,
                                           const cucore_kernel_resources *k, unsigned flags) {
  CC_CHECK_ARG(l, fn, "limits");
  CC_CHECK_ARG(k, fn, "res");
  if (!limits_ok(l)) return explain_limits(fn, l);
  if (k->registers < 0 || k->registers > l->max_regs_per_thread)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: %d registers per thread is outside 0..%d, the per-thread maximum of "
                   "%s",
                   fn, k->registers, l->max_regs_per_thread, l->name ? l->name : "this arch");
  if (k->static_shared_bytes < 0)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: static_shared_bytes is negative (%d)", fn,
                   k->static_shared_bytes);
  if (k->max_threads_per_block < 0)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: the kernel's max_threads_per_block is negative (%d); 0 means the "
                   "architecture's limit",
                   fn, k->max_threads_per_block);
  if (k->barriers < -1 || k->barriers > l->max_barriers_per_block)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: %d named barriers is outside 0..%d (a block has at most %d; -1 means "
                   "unknown)",
                   fn, k->barriers, l->max_barriers_per_block, l->max_barriers_per_block);
  if (k->carveout_percent < -1 || k->carveout_percent > 100)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: carveout_percent %d is outside 0..100 (-1 means no preference)", fn,
                   k->carveout_percent);
  if (k->max_dynamic_shared_bytes < 0)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: max_dynamic_shared_bytes is negative (%d); 0 means raised as needed", fn,
                   k->max_dynamic_shared_bytes);
  if (flags & ~(unsigned)CUCORE_OCCUPANCY_DISABLE_CACHING_OVERRIDE)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: unknown flags 0x%x (known: CUCORE_OCCUPANCY_DISABLE_CACHING_OVERRIDE "
                   "= 0x1)",
                   fn, flags & ~(unsigned)CUCORE_OCCUPANCY_DISABLE_CACHING_OVERRIDE);
  return cc_fail(CUCORE_INTERNAL, "%s: an occupancy input check failed without a reason", fn);
}

/* Inlined into the public queries (a call and its spills cost as much as a check). */
static inline __attribute__((always_inline)) cucore_status
check_inputs(const char *fn, const cc_arch_limits *l, const cucore_kernel_resources *k,
             unsigned flags) {
  if (CC_LIKELY(l && k && limits_ok(l) && resources_ok(l, k, flags))) return CUCORE_OK;
  return explain_check(fn, l, k, flags);
}

cucore_status cc_occupancy_check(const char *fn, const cc_arch_limits *l,
                                 const cucore_kernel_resources *k, unsigned flags) {
  return check_inputs(fn, l, k, flags);
}

/* ---- the model ------------------------------------------------------------------------------ */

/* What one query works out: per resource, the blocks per SM it allows, and the sizes the result
 * reports. Every step below is inlined into model_blocks (the struct lives in registers). */
typedef struct occ_model {
  int warps;            /* warps per block */
  long long regs_block; /* registers per block */
  int smem_block;       /* shared memory per block, rounded to the allocation granularity */
  int carveout;         /* the shared-memory carveout the SM is configured with */
  int lim_warps, lim_regs, lim_shared, lim_blocks, lim_barriers;
  cc_occ_why why; /* the first reason a limit is 0, or CC_OCC_RUNS */
} occ_model;

static inline void note_why(occ_model *m, cc_occ_why why) {
  if (m->why == CC_OCC_RUNS) m->why = why;
}

/* Warp slots: 0 blocks when the block is above the kernel's or the architecture's maximum. */
static inline __attribute__((always_inline)) void limit_warps(occ_model *m, const cc_arch_limits *l,
                                                              const cucore_kernel_resources *k,
                                                              int block_size) {
  const int ws = l->warp_size;
  m->warps = (block_size >> log2_pow2(ws)) + ((block_size & (ws - 1)) != 0);
  if (CC_UNLIKELY(block_size > cc_occupancy_max_block(l, k))) {
    m->lim_warps = 0;
    note_why(m, CC_OCC_BLOCK_SIZE);
  } else {
    m->lim_warps = div_small(l->max_warps_per_sm, m->warps);
  }
}

/* Registers: allocated per warp in units of reg_alloc_unit, and held per sub-partition. */
static inline __attribute__((always_inline)) void
limit_registers(occ_model *m, const cc_arch_limits *l, const cucore_kernel_resources *k) {
  const int parts = l->warp_alloc_granularity;
  const int regs_warp = round_up_pow2(k->registers * l->warp_size, l->reg_alloc_unit);
  const long long regs_checked = (long long)regs_warp * round_up_pow2(m->warps, parts);
  m->regs_block = (long long)regs_warp * m->warps;
  if (CC_UNLIKELY(m->regs_block > l->max_regs_per_block || regs_checked > l->max_regs_per_block)) {
    m->lim_regs = 0;
    note_why(m, CC_OCC_REGS_PER_BLOCK);
  } else if (regs_warp == 0) {
    m->lim_regs = INT_MAX;
  } else {
    /* regs_warp is a multiple of the allocation unit: divide both by it first. */
    const int unit_log2 = log2_pow2(l->reg_alloc_unit);
    const int warps_per_part = div_small(l->regs_per_sm >> log2_pow2(parts) >> unit_log2,
                                         regs_warp >> unit_log2);
    m->lim_regs = div_small(warps_per_part * parts, m->warps);
  }
}

/* Shared memory: one rounded allocation per block, against the carveout. */
static inline __attribute__((always_inline)) void limit_shared(occ_model *m,
                                                               const cc_arch_limits *l,
                                                               const cucore_kernel_resources *k,
                                                               size_t dynamic_shared_bytes) {
  const int optin = l->shared_per_block_optin;
  if (CC_UNLIKELY(k->max_dynamic_shared_bytes > 0 &&
                  dynamic_shared_bytes > (size_t)k->max_dynamic_shared_bytes)) {
    m->lim_shared = 0;
    note_why(m, CC_OCC_DYNAMIC_ABOVE_KERNEL_MAX);
    return;
  }
  if (CC_UNLIKELY(k->static_shared_bytes > optin ||
                  dynamic_shared_bytes > (size_t)(optin - k->static_shared_bytes))) {
    m->lim_shared = 0;
    note_why(m, CC_OCC_SHARED_PER_BLOCK);
    return;
  }
  /* static + dynamic <= optin here, so the sum fits in an int. */
  m->smem_block = round_up_pow2(k->static_shared_bytes + (int)dynamic_shared_bytes +
                                    l->reserved_shared_per_block,
                                l->shared_alloc_granularity);
  const int preferred = preferred_carveout(l, k->carveout_percent);
  const int carveout = preferred >= m->smem_block ? preferred : carveout_at_least(l, m->smem_block);
  if (CC_UNLIKELY(carveout < 0)) {
    m->lim_shared = 0;
    note_why(m, CC_OCC_SHARED_PER_SM);
    return;
  }
  m->carveout = carveout;
  const int gran_log2 = log2_pow2(l->shared_alloc_granularity); /* smem_block: granules */
  m->lim_shared = m->smem_block > 0 ? div_small(carveout >> gran_log2, m->smem_block >> gran_log2)
                                    : INT_MAX;
}

/* Resident blocks, and named barriers (applied by the driver from 9.0 on; an unknown count
 * counts as one). */
static inline __attribute__((always_inline)) void
limit_blocks_and_barriers(occ_model *m, const cc_arch_limits *l, const cucore_kernel_resources *k) {
  m->lim_blocks = l->max_blocks_per_sm;
  m->lim_barriers = INT_MAX;
  if (l->barrier_limit_applies) {
    const int used = k->barriers < 0 ? 1 : k->barriers;
    if (used > 0) m->lim_barriers = div_small(l->barriers_per_sm, used);
  }
}

/* The smallest limit, and in *mask every limit equal to it (never none). */
static inline __attribute__((always_inline)) int smallest_limit(const occ_model *m,
                                                                unsigned *mask) {
  int active = m->lim_warps;
  if (m->lim_regs < active) active = m->lim_regs;
  if (m->lim_shared < active) active = m->lim_shared;
  if (m->lim_blocks < active) active = m->lim_blocks;
  if (m->lim_barriers < active) active = m->lim_barriers;
  unsigned bits = 0;
  if (m->lim_warps == active) bits |= 1u << CUCORE_OCCUPANCY_LIMIT_WARPS;
  if (m->lim_regs == active) bits |= 1u << CUCORE_OCCUPANCY_LIMIT_REGISTERS;
  if (m->lim_shared == active) bits |= 1u << CUCORE_OCCUPANCY_LIMIT_SHARED_MEMORY;
  if (m->lim_blocks == active) bits |= 1u << CUCORE_OCCUPANCY_LIMIT_BLOCKS;
  if (m->lim_barriers == active) bits |= 1u << CUCORE_OCCUPANCY_LIMIT_BARRIERS;
  *mask = bits;
  return active;
}

static inline __attribute__((always_inline)) void fill_result(cucore_occupancy_result *r,
                                                              const occ_model *m,
                                                              const cc_arch_limits *l, int active,
                                                              unsigned mask) {
  r->active_blocks_per_sm = active;
  r->active_warps_per_sm = active * m->warps;
  r->occupancy = (double)(active * m->warps) / (double)l->max_warps_per_sm;
  /* mask is never 0: `active` is one of the limits */
  r->limit = (cucore_occupancy_limit)log2_pow2((int)(mask & (0u - mask)));
  r->limiting_mask = mask;
  r->blocks_limit_warps = m->lim_warps;
  r->blocks_limit_registers = m->lim_regs;
  r->blocks_limit_shared = m->lim_shared;
  r->blocks_limit_blocks = m->lim_blocks;
  r->blocks_limit_barriers = m->lim_barriers;
  r->warps_per_block = m->warps;
  r->registers_per_block = (int)(m->regs_block < INT_MAX ? m->regs_block : INT_MAX);
  r->shared_per_block = m->smem_block;
  r->shared_carveout_bytes = m->carveout;
}

/* The answer for a block of no threads: 0, limited by warps. */
static inline int empty_block(const cc_arch_limits *l, cucore_occupancy_result *r,
                              cc_occ_why *why) {
  *why = CC_OCC_BLOCK_SIZE;
  r->blocks_limit_registers = r->blocks_limit_shared = r->blocks_limit_barriers = INT_MAX;
  r->blocks_limit_blocks = l->max_blocks_per_sm;
  r->limiting_mask = 1u << CUCORE_OCCUPANCY_LIMIT_WARPS;
  return 0;
}

/* The model, inlined into the public query and into cc_occupancy_model_blocks: each resource's
 * limit, the smallest of them, and the result. */
static inline __attribute__((always_inline)) int
model_blocks(const cc_arch_limits *l, const cucore_kernel_resources *k, int block_size,
             size_t dynamic_shared_bytes, unsigned flags, cucore_occupancy_result *r,
             cc_occ_why *why) {
  (void)flags;             /* partitioned global caching does not exist on 7.0+ (see the top) */
  memset(r, 0, sizeof *r); /* padding too: callers compare results bytewise */
  if (CC_UNLIKELY(block_size < 1)) return empty_block(l, r, why);
  occ_model m = {.why = CC_OCC_RUNS};
  limit_warps(&m, l, k, block_size);
  limit_registers(&m, l, k);
  limit_shared(&m, l, k, dynamic_shared_bytes);
  limit_blocks_and_barriers(&m, l, k);
  unsigned mask;
  const int active = smallest_limit(&m, &mask);
  /* With no preference the driver picks the smallest carveout that keeps this answer. */
  if (k->carveout_percent < 0 && active > 0 && m.lim_shared > 0) {
    const int c = carveout_at_least(l, m.smem_block * active); /* <= carveout < 2^20 */
    if (c >= 0) m.carveout = c;
  }
  fill_result(r, &m, l, active, mask);
  *why = m.why;
  return active;
}

int cc_occupancy_model_blocks(const cc_arch_limits *l, const cucore_kernel_resources *k,
                              int block_size, size_t dynamic_shared_bytes, unsigned flags,
                              cucore_occupancy_result *r, cc_occ_why *why) {
  return model_blocks(l, k, block_size, dynamic_shared_bytes, flags, r, why);
}

/* ---- explaining a launch that can never run ------------------------------------------------ */

cucore_status cc_occupancy_explain(const char *fn, const cc_arch_limits *l,
                                   const cucore_kernel_resources *k, int block_size,
                                   size_t dynamic_shared_bytes, cc_occ_why why) {
  const char *arch = l->name ? l->name : "this architecture";
  switch (why) {
  case CC_OCC_RUNS: return CUCORE_OK;
  case CC_OCC_BLOCK_SIZE: {
    int m = cc_occupancy_max_block(l, k);
    int kernel_limited = m < l->max_threads_per_block;
    return cc_fail(CUCORE_LAUNCH_CONFIG,
                   "%s: block size %d is outside 1..%d, the %s maximum of %d threads per block", fn,
                   block_size, m, kernel_limited ? "kernel's" : arch, m);
  }
  case CC_OCC_REGS_PER_BLOCK: {
    const int warps = (block_size + l->warp_size - 1) / l->warp_size;
    const long long per_warp = round_up((long long)k->registers * l->warp_size, l->reg_alloc_unit);
    const long long counted = round_up(warps, l->warp_alloc_granularity);
    return cc_fail(CUCORE_LAUNCH_OUT_OF_RESOURCES,
                   "%s: a block of %d threads with %d registers per thread needs %lld "
                   "registers (%d x %d = %d per warp, allocated in units of %d: %lld; %d warps, "
                   "counted as %lld for the per-block check: %lld x %lld), above the %d "
                   "registers per block of %s; use smaller blocks or fewer registers "
                   "(__launch_bounds__ or -maxrregcount)",
                   fn, block_size, k->registers, per_warp * counted, k->registers, l->warp_size,
                   k->registers * l->warp_size, l->reg_alloc_unit, per_warp, warps, counted,
                   counted, per_warp, l->max_regs_per_block, arch);
  }
  case CC_OCC_DYNAMIC_ABOVE_KERNEL_MAX:
    return cc_fail(CUCORE_LAUNCH_CONFIG,
                   "%s: %zu bytes of dynamic shared memory is above the kernel's maximum of %d "
                   "bytes (max_dynamic_shared_bytes, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_"
                   "BYTES); raise it (up to %d bytes on %s with %d bytes of static shared "
                   "memory) or use less",
                   fn, dynamic_shared_bytes, k->max_dynamic_shared_bytes,
                   l->shared_per_block_optin - k->static_shared_bytes, arch,
                   k->static_shared_bytes);
  case CC_OCC_SHARED_PER_BLOCK:
    return cc_fail(CUCORE_LAUNCH_OUT_OF_RESOURCES,
                   "%s: %d bytes of static + %zu bytes of dynamic shared memory = %llu bytes "
                   "per block, above the opt-in maximum of %d bytes (%d KiB) per block of %s",
                   fn, k->static_shared_bytes, dynamic_shared_bytes,
                   (unsigned long long)k->static_shared_bytes +
                       (unsigned long long)dynamic_shared_bytes,
                   l->shared_per_block_optin, l->shared_per_block_optin / 1024, arch);
  case CC_OCC_SHARED_PER_SM: {
    long long need = round_up((long long)k->static_shared_bytes + (long long)dynamic_shared_bytes +
                                  l->reserved_shared_per_block,
                              l->shared_alloc_granularity);
    return cc_fail(CUCORE_LAUNCH_OUT_OF_RESOURCES,
                   "%s: a block needs %lld bytes of shared memory (static %d + dynamic %zu + "
                   "reserved %d, rounded up to %d), more than the largest carveout of %d bytes "
                   "per SM of %s",
                   fn, need, k->static_shared_bytes, dynamic_shared_bytes,
                   l->reserved_shared_per_block, l->shared_alloc_granularity,
                   l->carveout_bytes[l->carveout_count - 1], arch);
  }
  }
  return cc_fail(CUCORE_INTERNAL, "%s: unknown occupancy failure %d", fn, (int)why);
}

/* ---- public ---------------------------------------------------------------------------------- */

const char *cucore_occupancy_limit_name(cucore_occupancy_limit limit) {
  switch (limit) {
  case CUCORE_OCCUPANCY_LIMIT_WARPS: return "warps";
  case CUCORE_OCCUPANCY_LIMIT_REGISTERS: return "registers";
  case CUCORE_OCCUPANCY_LIMIT_SHARED_MEMORY: return "shared_memory";
  case CUCORE_OCCUPANCY_LIMIT_BLOCKS: return "blocks";
  case CUCORE_OCCUPANCY_LIMIT_BARRIERS: return "barriers";
  case CUCORE_OCCUPANCY_LIMIT_COUNT: break;
  }
  return "unknown";
}

cucore_status cucore_occupancy_model_blocks(const cucore_arch_limits *limits,
                                            const cucore_kernel_resources *res, int block_size,
                                            size_t dynamic_shared_bytes, unsigned flags,
                                            cucore_occupancy_result *out) {
  static const char fn[] = "cucore_occupancy_model_blocks";
  cc_begin();
  CC_CHECK_ARG(out, fn, "out");
  cucore_status st = check_inputs(fn, limits, res, flags);
  if (CC_UNLIKELY(st != CUCORE_OK)) {
    memset(out, 0, sizeof *out);
    return st;
  }
  cc_occ_why why;
  if (CC_LIKELY(model_blocks(limits, res, block_size, dynamic_shared_bytes, flags, out, &why) > 0))
    return CUCORE_OK;
  return cc_occupancy_explain(fn, limits, res, block_size, dynamic_shared_bytes, why);
}

/* The model's inputs from a kernel read offline (binary/'s kernel info). */
cucore_status cucore_kernel_info_get_resources(const cucore_kernel_info *k,
                                               cucore_kernel_resources *out) {
  cc_begin();
  CC_CHECK_ARG(k, "cucore_kernel_info_get_resources", "info");
  CC_CHECK_ARG(out, "cucore_kernel_info_get_resources", "out");
  cucore_kernel_resources r = CUCORE_KERNEL_RESOURCES_INIT;
  r.registers = k->registers;
  r.static_shared_bytes = k->static_shared_bytes;
  r.max_threads_per_block = k->max_threads_per_block > 0 ? k->max_threads_per_block : 0;
  r.barriers = k->barriers > 0 ? k->barriers : -1;
  *out = r;
  return CUCORE_OK;
}
