/*
 * occupancy_queries.c -- the questions answered with the host occupancy model: the best block
 * size, the dynamic shared memory left per block for a target occupancy, and (refused)
 * cluster occupancy.
 */
#include "exec/occupancy_model.h"

#include "runtime/runtime.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

/* "registers and shared_memory" for a limiting mask. */
static const char *mask_names(unsigned mask, char *buf, size_t len) {
  size_t used = 0;
  int n = 0, total = 0;
  for (int i = 0; i < CUCORE_OCCUPANCY_LIMIT_COUNT; i++) total += (mask >> i) & 1u;
  buf[0] = '\0';
  for (int i = 0; i < CUCORE_OCCUPANCY_LIMIT_COUNT && used < len; i++) {
    if (!(mask & (1u << i))) continue;
    const char *sep = n == 0 ? "" : (n == total - 1 ? " and " : ", ");
    int w = snprintf(buf + used, len - used, "%s%s", sep,
                     cucore_occupancy_limit_name((cucore_occupancy_limit)i));
    if (w < 0) break;
    used += (size_t)w;
    n++;
  }
  return buf;
}

/* A per-limit count for a message: "no limit" for INT_MAX. */
static const char *count_text(int blocks, char *buf, size_t len) {
  if (blocks == INT_MAX)
    snprintf(buf, len, "no limit");
  else
    snprintf(buf, len, "%d", blocks);
  return buf;
}

cucore_status cucore_occupancy_model_best_block(const cucore_arch_limits *limits,
                                                const cucore_kernel_resources *res,
                                                size_t dynamic_shared_bytes,
                                                cucore_block_to_shared_fn shared_fn, void *userdata,
                                                int block_size_limit, unsigned flags,
                                                cucore_occupancy_best *out) {
  static const char fn[] = "cucore_occupancy_model_best_block";
  cc_begin();
  CC_CHECK_ARG(out, fn, "out");
  memset(out, 0, sizeof *out);
  cucore_status st = cc_occupancy_check(fn, limits, res, flags);
  if (st != CUCORE_OK) return st;
  if (block_size_limit < 0)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: block_size_limit is negative (%d); 0 means no limit", fn, block_size_limit);

  int limit = cc_occupancy_max_block(limits, res);
  if (block_size_limit > 0 && block_size_limit < limit) limit = block_size_limit;
  const int step = limits->warp_size;
  const int top = (limit + step - 1) / step * step;

  /* From the largest size down by the warp size; a larger size keeps a tie; stop once the SM
   * is full (the driver's cuOccupancyMaxPotentialBlockSize does the same). */
  int best_threads = 0;
  int failed_size = 0;
  size_t failed_dyn = 0;
  cc_occ_why failed_why = CC_OCC_RUNS;
  for (int aligned = top; aligned > 0; aligned -= step) {
    const int size = aligned < limit ? aligned : limit;
    const size_t dyn = shared_fn ? shared_fn(size, userdata) : dynamic_shared_bytes;
    cucore_occupancy_result r;
    cc_occ_why why;
    const int blocks = cc_occupancy_model_blocks(limits, res, size, dyn, flags, &r, &why);
    if (blocks == 0) {
      failed_size = size;
      failed_dyn = dyn;
      failed_why = why;
    }
    const int threads = size * blocks;
    if (threads > best_threads) {
      best_threads = threads;
      out->block_size = size;
      out->blocks_per_sm = blocks;
      out->occupancy = r.occupancy;
      out->dynamic_shared_bytes = dyn;
      out->limit = r.limit;
    }
    if (best_threads == limits->max_threads_per_sm) break;
  }
  if (out->block_size == 0) {
    char context[160];
    snprintf(context, sizeof context, "%s: no block size from %d down to 1 can run; at %d threads",
             fn, limit, failed_size);
    return cc_occupancy_explain(context, limits, res, failed_size, failed_dyn, failed_why);
  }
  out->min_grid_size = out->blocks_per_sm * limits->sm_count;
  return CUCORE_OK;
}

cucore_status cucore_occupancy_model_available_shared(const cucore_arch_limits *limits,
                                                      const cucore_kernel_resources *res,
                                                      int block_size, int blocks_per_sm,
                                                      size_t *bytes) {
  static const char fn[] = "cucore_occupancy_model_available_shared";
  cc_begin();
  CC_CHECK_ARG(bytes, fn, "bytes");
  *bytes = 0;
  cucore_status st = cc_occupancy_check(fn, limits, res, 0);
  if (st != CUCORE_OK) return st;
  if (blocks_per_sm < 1)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: blocks_per_sm must be at least 1 (got %d)", fn,
                   blocks_per_sm);

  /* With no dynamic memory at all: does the block run, and do enough blocks fit? */
  cucore_occupancy_result r;
  cc_occ_why why;
  const int at_zero = cc_occupancy_model_blocks(limits, res, block_size, 0, 0, &r, &why);
  if (at_zero == 0) return cc_occupancy_explain(fn, limits, res, block_size, 0, why);
  if (at_zero < blocks_per_sm) {
    char names[96], c[5][16];
    return cc_fail(CUCORE_LAUNCH_OUT_OF_RESOURCES,
                   "%s: %d blocks of %d threads cannot stay resident on one SM of %s even with "
                   "no dynamic shared memory: at most %d fit, limited by %s (blocks allowed by "
                   "warps %s, registers %s, shared memory %s, blocks per SM %s, barriers %s)",
                   fn, blocks_per_sm, block_size, limits->name ? limits->name : "this arch",
                   at_zero, mask_names(r.limiting_mask, names, sizeof names),
                   count_text(r.blocks_limit_warps, c[0], sizeof c[0]),
                   count_text(r.blocks_limit_registers, c[1], sizeof c[1]),
                   count_text(r.blocks_limit_shared, c[2], sizeof c[2]),
                   count_text(r.blocks_limit_blocks, c[3], sizeof c[3]),
                   count_text(r.blocks_limit_barriers, c[4], sizeof c[4]));
  }

  /* The driver's rule (cuOccupancyAvailableDynamicSMemPerBlock, documented by
   * cudaOccAvailableDynamicSMemPerBlock in cuda_occupancy.h), which the GPU sweep confirms:
   * the SM's shared memory -- the whole per-block limit for one block, otherwise the carveout
   * the kernel prefers, the largest when it prefers none -- divided among the blocks, rounded
   * down to the allocation granularity, capped at the per-block limit, less the static
   * memory. The driver does not take the per-block reservation off here, so a launch that
   * uses all of it may fit fewer blocks than asked; the driver is the reference. */
  long long per_block_limit = limits->shared_per_block_optin;
  long long per_sm;
  if (blocks_per_sm == 1) {
    per_sm = per_block_limit;
  } else if (res->carveout_percent >= 0 && limits->carveout_count > 0) {
    long long want = (long long)limits->shared_per_sm * res->carveout_percent / 100;
    if (want < 1) want = 1; /* a 0 % preference still gets the smallest carveout step */
    per_sm = limits->carveout_bytes[limits->carveout_count - 1];
    for (int i = 0; i < limits->carveout_count; i++)
      if (limits->carveout_bytes[i] >= want) {
        per_sm = limits->carveout_bytes[i];
        break;
      }
  } else {
    per_sm = limits->shared_per_sm;
  }
  const long long gran = limits->shared_alloc_granularity;
  long long best = per_sm / blocks_per_sm / gran * gran;
  if (best > per_block_limit) best = per_block_limit;
  best -= res->static_shared_bytes;
  if (res->max_dynamic_shared_bytes > 0 && res->max_dynamic_shared_bytes < best)
    best = res->max_dynamic_shared_bytes;
  if (best < 0) best = 0;
  *bytes = (size_t)best;
  return CUCORE_OK;
}

cucore_status cucore_occupancy_model_clusters(const cucore_arch_limits *limits,
                                              const cucore_kernel_resources *res, int block_size,
                                              int cluster_size, size_t dynamic_shared_bytes,
                                              int *max_clusters) {
  static const char fn[] = "cucore_occupancy_model_clusters";
  cc_begin();
  CC_CHECK_ARG(max_clusters, fn, "max_clusters");
  *max_clusters = 0;
  cucore_status st = cc_occupancy_check(fn, limits, res, 0);
  if (st != CUCORE_OK) return st;
  (void)block_size;
  (void)dynamic_shared_bytes;
  if (cluster_size < 1)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: cluster_size must be at least 1 (got %d)", fn,
                   cluster_size);
  if (limits->arch < 90)
    return cc_fail(CUCORE_NOT_SUPPORTED,
                   "%s: %s has no thread block clusters (they need compute capability 9.0 or "
                   "later)",
                   fn, limits->name ? limits->name : "this architecture");
  return cc_fail(CUCORE_NOT_SUPPORTED,
                 "%s: the host model does not estimate cluster occupancy: the blocks of a "
                 "cluster must be co-resident on the SMs of one GPC, and how many SMs each GPC "
                 "of a chip has (and which are enabled) differs between chips and even between "
                 "boards of the same architecture, which no per-architecture table can tell. "
                 "Ask the driver on a device (cuOccupancyMaxActiveClusters)",
                 fn);
}
