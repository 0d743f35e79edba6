/*
 * launch_offline.c -- cucore_kernel_check_launch_offline: a launch configuration checked
 * against what the code records (launch bounds, required block size, static shared memory,
 * compile-time clusters) and the architecture table, with no GPU. The messages are the GPU
 * pre-flight's (launch_checks.c).
 */
#include "binary/binary.h"
#include "exec/kernel.h"
#include "exec/launch_checks.h"
#include "exec/occupancy_model.h"
#include "exec/offline_layout.h"

#include <stdio.h>

/* Block and grid limits per dimension: the same on every architecture since compute
 * capability 3.0 (CUDA Programming Guide, technical specifications). */
static const int max_block[3] = {1024, 1024, 64};
static const int max_grid[3] = {2147483647, 65535, 65535};

static unsigned dim1(unsigned v) { return v ? v : 1; }

/* Block and grid: dimensions, the threads the kernel allows per block (.maxntid, at most the
 * architecture's), and the exact block size it may require (.reqntid). grid and block are the
 * launch's with unused dimensions 1. */
static cucore_status check_shape(const char *name, const cucore_kernel_info *info,
                                 const cc_arch_limits *lim, const unsigned grid[3],
                                 const unsigned block[3]) {
  if (block[0] == 0 || grid[0] == 0) return cc_fail_zero_dim(name, block[0] == 0);
  for (int i = 0; i < 3; i++) {
    if (block[i] > (unsigned)max_block[i])
      return cc_fail_dim(name, 0, i, block[i], max_block[i], -1, lim->arch);
    if (grid[i] > (unsigned)max_grid[i])
      return cc_fail_dim(name, 1, i, grid[i], max_grid[i], -1, lim->arch);
  }
  unsigned long long threads = (unsigned long long)block[0] * block[1] * block[2];
  int kernel_max = info->max_threads_per_block == CUCORE_UNKNOWN ? lim->max_threads_per_block
                                                                 : info->max_threads_per_block;
  if (kernel_max > lim->max_threads_per_block) kernel_max = lim->max_threads_per_block;
  if (threads > (unsigned long long)kernel_max)
    return cc_fail_block_threads(name, block, threads, kernel_max, lim->max_threads_per_block, -1);
  if (info->reqntid[0]) {
    unsigned r[3] = {info->reqntid[0], dim1(info->reqntid[1]), dim1(info->reqntid[2])};
    if (block[0] != r[0] || block[1] != r[1] || block[2] != r[2])
      return cc_fail(CUCORE_LAUNCH_CONFIG,
                     "kernel `%s` was compiled for blocks of exactly %ux%ux%u threads "
                     "(.reqntid); the launch asks for %ux%ux%u",
                     name, r[0], r[1], r[2], block[0], block[1], block[2]);
  }
  return CUCORE_OK;
}

/* The cluster shape of the launch into shape[] (all 0 without clusters): cfg's cluster
 * dimension, which must match the compile-time one (__cluster_dims__) when there is one, else
 * the compile-time one; each checked against the grid and the architecture. A preferred
 * cluster dimension is checked too. */
static cucore_status check_cluster_shape(const char *name, const cucore_kernel_info *info,
                                         const cc_arch_limits *lim, const cucore_launch_config *cfg,
                                         unsigned flags, const unsigned grid[3],
                                         unsigned shape[3]) {
  const int arch = lim->arch, supported = arch >= 90;
  const int non_portable = (flags & CUCORE_CHECK_NON_PORTABLE_CLUSTER) != 0;
  const unsigned *cluster = NULL;
  for (int i = 0; i < cfg->attr_count; i++) {
    const cucore_launch_attr *a = &cfg->attrs[i];
    if (a->id == CUCORE_LAUNCH_CLUSTER_DIMENSION) cluster = a->u.dim;
    if (a->id == CUCORE_LAUNCH_PREFERRED_CLUSTER_DIMENSION) {
      cucore_status st = cc_check_cluster(name, grid, a->u.dim, "preferred cluster", supported,
                                          non_portable, -1, arch);
      if (st != CUCORE_OK) return st;
    }
  }
  const int req[3] = {(int)info->cluster_dims[0], (int)info->cluster_dims[1],
                      (int)info->cluster_dims[2]};
  if (cluster) {
    cucore_status st = cc_check_cluster(name, grid, cluster, "cluster", supported, non_portable, -1,
                                        arch);
    if (st != CUCORE_OK) return st;
    for (int i = 0; i < 3; i++) shape[i] = i ? dim1(cluster[i]) : cluster[i];
    if (req[0] && (shape[0] != (unsigned)req[0] || shape[1] != dim1((unsigned)req[1]) ||
                   shape[2] != dim1((unsigned)req[2])))
      return cc_fail_cluster_mismatch(name, req, shape);
  } else if (req[0]) {
    unsigned c[3] = {(unsigned)req[0], dim1((unsigned)req[1]), dim1((unsigned)req[2])};
    cucore_status st = cc_check_cluster(name, grid, c, "compile-time cluster (__cluster_dims__)",
                                        supported, non_portable, -1, arch);
    if (st != CUCORE_OK) return st;
    for (int i = 0; i < 3; i++) shape[i] = c[i];
  } else if (info->explicit_cluster) {
    return cc_fail_cluster_required(name);
  }
  return CUCORE_OK;
}

/* The checks, on the kernel's record `info` for the architecture of `lim`. No check of grid
 * sync: a cubin marks every cooperative-groups instruction the same way (block-level groups
 * too: the CUDA sample matrixMul was refused when this was a check), so cucore cannot tell that
 * a kernel needs a cooperative launch. */
static cucore_status check(const char *name, const cucore_kernel_info *info,
                           const cc_arch_limits *lim, const cucore_launch_config *cfg,
                           unsigned flags) {
  unsigned grid[3], block[3];
  for (int i = 0; i < 3; i++) {
    grid[i] = i ? dim1(cfg->grid[i]) : cfg->grid[i];
    block[i] = i ? dim1(cfg->block[i]) : cfg->block[i];
  }
  cucore_status st = check_shape(name, info, lim, grid, block);
  if (st != CUCORE_OK) return st;
  /* Shared memory: static (a cubin records it; PTX does not) + dynamic within the opt-in
   * maximum. */
  int static_bytes = info->static_shared_bytes == CUCORE_UNKNOWN ? 0 : info->static_shared_bytes;
  if ((long long)cfg->shared_bytes + static_bytes > lim->shared_per_block_optin)
    return cc_fail_shared(name, cfg->shared_bytes, static_bytes, lim->shared_per_block_optin, -1,
                          lim->arch);
  unsigned shape[3] = {0, 0, 0};
  st = check_cluster_shape(name, info, lim, cfg, flags, grid, shape);
  if (st != CUCORE_OK) return st;
  unsigned long long cluster_blocks = (unsigned long long)shape[0] * shape[1] * shape[2];
  if (shape[0] && info->max_blocks_per_cluster && cluster_blocks > info->max_blocks_per_cluster)
    return cc_fail(CUCORE_LAUNCH_CONFIG,
                   "kernel `%s`: a cluster of %ux%ux%u = %llu blocks exceeds the kernel's maximum "
                   "of %u blocks per cluster (the third argument of its __launch_bounds__)",
                   name, shape[0], shape[1], shape[2], cluster_blocks,
                   info->max_blocks_per_cluster);
  return CUCORE_OK;
}

cucore_status cucore_kernel_check_launch_offline(cucore_kernel *k, const cucore_launch_config *cfg,
                                                 int arch, unsigned flags) {
  cc_begin();
  const char *fn = "cucore_kernel_check_launch_offline";
  CC_CHECK_HANDLE(k, KERNEL, fn, "kernel");
  CC_CHECK_ARG(cfg, fn, "cfg");
  if (flags & ~(unsigned)CUCORE_CHECK_NON_PORTABLE_CLUSTER)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: unknown flags 0x%x (known: "
                   "CUCORE_CHECK_NON_PORTABLE_CLUSTER = 1)",
                   fn, flags);
  if (arch < 0 || arch > 1000)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: arch %d; expected 0 (the code's) or a compute capability as major*10 + "
                   "minor, e.g. 90",
                   fn, arch);
  if (cfg->attr_count < 0 || cfg->attr_count > CUCORE_MAX_LAUNCH_ATTRS)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: cfg->attr_count %d is outside 0..%d", fn,
                   cfg->attr_count, CUCORE_MAX_LAUNCH_ATTRS);
  if (!k->obj)
    return cc_fail(CUCORE_NOT_SUPPORTED,
                   "%s: kernel `%s` wraps a driver handle; cucore has no code of it to read", fn,
                   k->asked);
  cucore_binary *bin = NULL;
  const cucore_kernel_info *info = NULL;
  cucore_status st = cc_offline_kernel_info(k->obj, k->name, arch, &bin, &info);
  if (st != CUCORE_OK) return st;
  int target = arch ? arch : bin->info.arch;
  const cc_arch_limits *lim = cc_arch_limits_find(target);
  if (!lim) {
    char known[256];
    st = cc_fail(CUCORE_NOT_SUPPORTED,
                 "%s: sm_%d is not in cucore's architecture table (known: %s); give an arch "
                 "that is",
                 fn, target, cc_arch_known(known, sizeof known));
  } else {
    st = check(k->asked, info, lim, cfg, flags);
  }
  cucore_binary_destroy(bin);
  return st;
}
