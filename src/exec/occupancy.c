/*
 * occupancy.c -- occupancy on the GPU: a kernel and a launch configuration in, the driver's
 * answers out, with the inputs checked first and the parameters converted for the driver.
 */
#include "exec/kernel.h"
#include "exec/occupancy_model.h"
#include "exec/offline_layout.h"

#include <string.h>

static cucore_status check_flags(unsigned flags, const char *fn) {
  if (flags & ~(unsigned)CUCORE_OCCUPANCY_DISABLE_CACHING_OVERRIDE)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: unknown flags 0x%x (expected CUCORE_OCCUPANCY_DEFAULT or "
                   "CUCORE_OCCUPANCY_DISABLE_CACHING_OVERRIDE)",
                   fn, flags);
  return CUCORE_OK;
}

/* Device facts for k on dev, with the context current. */
static cucore_status enter(cucore_kernel *k, cucore_device *dev, const char *fn,
                           cc_kernel_dev **d) {
  CC_CHECK_HANDLE(k, KERNEL, fn, "kernel");
  if (!dev)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: no device (give a stream or a device)", fn);
  CC_CHECK_HANDLE(dev, DEVICE, fn, "dev");
  cucore_status st = cc_device_make_current(dev);
  if (st == CUCORE_OK) st = cc_kernel_dev_get(k, dev, d);
  return st;
}

static cucore_status check_block(const cucore_kernel *k, const cc_kernel_dev *d, long long block,
                                 const char *fn) {
  if (block < 1 || block > d->max_threads)
    return cc_fail(CUCORE_LAUNCH_CONFIG,
                   "%s: a block of %lld threads is outside kernel `%s`'s range 1..%d", fn, block,
                   k->asked, d->max_threads);
  return CUCORE_OK;
}

static long long block_of(const cucore_launch_config *cfg) {
  return (long long)cfg->block[0] * (cfg->block[1] ? cfg->block[1] : 1) *
         (cfg->block[2] ? cfg->block[2] : 1);
}

static cucore_status check_smem(const cucore_kernel *k, const cc_kernel_dev *d, size_t smem,
                                const char *fn) {
  if ((long long)smem + d->static_smem > d->smem_optin)
    return cc_fail(CUCORE_LAUNCH_CONFIG,
                   "%s: %zu bytes of dynamic + %d of static shared memory exceed device %d's "
                   "maximum of %d bytes per block (kernel `%s`)",
                   fn, smem, d->static_smem, d->ordinal, d->smem_optin, k->asked);
  return CUCORE_OK;
}

cucore_status cucore_occupancy_max_active_blocks(cucore_kernel *k, const cucore_launch_config *cfg,
                                                 unsigned flags, int *blocks_per_sm) {
  cc_begin();
  const char *fn = "cucore_occupancy_max_active_blocks";
  CC_CHECK_ARG(blocks_per_sm, fn, "blocks_per_sm");
  *blocks_per_sm = 0;
  CC_CHECK_ARG(cfg, fn, "cfg");
  cucore_status st = check_flags(flags, fn);
  if (st != CUCORE_OK) return st;
  cc_kernel_dev *d = NULL;
  st = enter(k, cfg->stream ? cfg->stream->dev : NULL, fn, &d);
  if (st == CUCORE_OK) st = check_block(k, d, block_of(cfg), fn);
  if (st == CUCORE_OK) st = check_smem(k, d, cfg->shared_bytes, fn);
  /* As a launch would: the kernel's dynamic shared memory limit is raised when needed. */
  if (st == CUCORE_OK) st = cc_kernel_fit_dynamic_smem(k, d, cfg->shared_bytes);
  if (st != CUCORE_OK) return st;
  CUresult r = DRV(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags)(blocks_per_sm, d->fn,
                                                                         (int)block_of(cfg),
                                                                         cfg->shared_bytes, flags);
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, "cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
                      "kernel `%s`, block %lld, %u bytes of dynamic shared memory", k->asked,
                      block_of(cfg), cfg->shared_bytes);
  return CUCORE_OK;
}

/* The driver's block-size callback takes no user data: the caller's function and data travel
 * through thread-local slots for the duration of the call. */
static _Thread_local size_t (*tls_shared_fn)(int, void *);
static _Thread_local void *tls_shared_user;
static size_t shared_trampoline(int block_size) {
  return tls_shared_fn(block_size, tls_shared_user);
}

cucore_status cucore_occupancy_best_block_size(cucore_kernel *k, cucore_device *dev,
                                               size_t dynamic_shared_bytes,
                                               size_t (*shared_fn)(int, void *), void *user,
                                               int block_size_limit, unsigned flags, int *min_grid,
                                               int *block_size) {
  cc_begin();
  const char *fn = "cucore_occupancy_best_block_size";
  CC_CHECK_ARG(min_grid, fn, "min_grid");
  CC_CHECK_ARG(block_size, fn, "block_size");
  *min_grid = *block_size = 0;
  cucore_status st = check_flags(flags, fn);
  if (st != CUCORE_OK) return st;
  cc_kernel_dev *d = NULL;
  st = enter(k, dev, fn, &d);
  if (st != CUCORE_OK) return st;
  if (block_size_limit < 0 || block_size_limit > d->max_threads)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: block_size_limit %d is outside 0..%d (0 means kernel `%s`'s own limit)", fn,
                   block_size_limit, d->max_threads, k->asked);
  /* As a launch would: allow what the device allows (the limit is raised, never lowered). */
  st = shared_fn ? cc_kernel_fit_dynamic_smem(k, d, (unsigned)(d->smem_optin - d->static_smem))
                 : check_smem(k, d, dynamic_shared_bytes, fn);
  if (st == CUCORE_OK && !shared_fn)
    st = cc_kernel_fit_dynamic_smem(k, d, (unsigned)dynamic_shared_bytes);
  if (st != CUCORE_OK) return st;
  CUresult r;
  if (shared_fn) {
    tls_shared_fn = shared_fn;
    tls_shared_user = user;
    r = DRV(cuOccupancyMaxPotentialBlockSizeWithFlags)(min_grid, block_size, d->fn,
                                                       shared_trampoline, 0, block_size_limit,
                                                       flags);
    tls_shared_fn = NULL;
    tls_shared_user = NULL;
  } else {
    r = DRV(cuOccupancyMaxPotentialBlockSizeWithFlags)(min_grid, block_size, d->fn, NULL,
                                                       dynamic_shared_bytes, block_size_limit,
                                                       flags);
  }
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, "cuOccupancyMaxPotentialBlockSizeWithFlags", "kernel `%s`", k->asked);
  return CUCORE_OK;
}

cucore_status cucore_occupancy_available_dynamic_shared(cucore_kernel *k, cucore_device *dev,
                                                        int blocks_per_sm, int block_size,
                                                        size_t *bytes) {
  cc_begin();
  const char *fn = "cucore_occupancy_available_dynamic_shared";
  CC_CHECK_ARG(bytes, fn, "bytes");
  *bytes = 0;
  cc_kernel_dev *d = NULL;
  cucore_status st = enter(k, dev, fn, &d);
  if (st == CUCORE_OK) st = check_block(k, d, block_size, fn);
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuOccupancyAvailableDynamicSMemPerBlock);
  if (st != CUCORE_OK) return st;
  if (blocks_per_sm < 1)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: blocks_per_sm %d must be at least 1", fn,
                   blocks_per_sm);
  CUresult r = DRV(cuOccupancyAvailableDynamicSMemPerBlock)(bytes, d->fn, blocks_per_sm,
                                                            block_size);
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, "cuOccupancyAvailableDynamicSMemPerBlock",
                      "kernel `%s`, %d blocks of %d threads per SM", k->asked, blocks_per_sm,
                      block_size);
  return CUCORE_OK;
}

/* A CUlaunchConfig for the cluster queries, with the cluster attribute when cfg has one. */
static cucore_status cluster_config(cucore_kernel *k, const cc_kernel_dev *d,
                                    const cucore_launch_config *cfg, int need_cluster,
                                    CUlaunchConfig *lc, CUlaunchAttribute *attr, const char *fn) {
  memset(lc, 0, sizeof *lc);
  lc->gridDimX = cfg->grid[0];
  lc->gridDimY = cfg->grid[1] ? cfg->grid[1] : 1;
  lc->gridDimZ = cfg->grid[2] ? cfg->grid[2] : 1;
  lc->blockDimX = cfg->block[0];
  lc->blockDimY = cfg->block[1] ? cfg->block[1] : 1;
  lc->blockDimZ = cfg->block[2] ? cfg->block[2] : 1;
  lc->sharedMemBytes = cfg->shared_bytes;
  lc->hStream = cfg->stream->handle;
  if (!d->cluster_launch)
    return cc_fail(CUCORE_NOT_SUPPORTED, "%s: device %d (sm_%d) has no thread block clusters", fn,
                   d->ordinal, d->arch);
  for (int i = 0; i < cfg->attr_count; i++)
    if (cfg->attrs[i].id == CUCORE_LAUNCH_CLUSTER_DIMENSION) {
      memset(attr, 0, sizeof *attr);
      attr->id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
      attr->value.clusterDim.x = cfg->attrs[i].u.dim[0];
      attr->value.clusterDim.y = cfg->attrs[i].u.dim[1] ? cfg->attrs[i].u.dim[1] : 1;
      attr->value.clusterDim.z = cfg->attrs[i].u.dim[2] ? cfg->attrs[i].u.dim[2] : 1;
      lc->attrs = attr;
      lc->numAttrs = 1;
    }
  if (need_cluster && !lc->numAttrs && !d->req_cluster[0])
    return cc_fail(CUCORE_LAUNCH_CONFIG,
                   "%s: kernel `%s` has no compile-time cluster size and the configuration "
                   "gives none; set CUCORE_LAUNCH_CLUSTER_DIMENSION",
                   fn, k->asked);
  return CUCORE_OK;
}

/* The cluster queries (`active`: the count of active clusters, which needs a cluster size;
 * else the largest cluster size) into *out: cfg, the kernel on cfg's stream's device, the
 * block, the launch configuration with its cluster attribute, then the driver's answer. */
static cucore_status cluster_query(cucore_kernel *k, const cucore_launch_config *cfg, int active,
                                   int *out, const char *fn) {
  CC_CHECK_ARG(out, fn, active ? "clusters" : "cluster_size");
  *out = 0;
  CC_CHECK_ARG(cfg, fn, "cfg");
  cc_kernel_dev *d = NULL;
  cucore_status st = enter(k, cfg->stream ? cfg->stream->dev : NULL, fn, &d);
  if (st == CUCORE_OK) st = check_block(k, d, block_of(cfg), fn);
  if (st == CUCORE_OK)
    st = active ? CC_DRV_REQUIRE(cuOccupancyMaxActiveClusters)
                : CC_DRV_REQUIRE(cuOccupancyMaxPotentialClusterSize);
  CUlaunchConfig lc;
  CUlaunchAttribute attr;
  if (st == CUCORE_OK) st = cluster_config(k, d, cfg, active, &lc, &attr, fn);
  if (st != CUCORE_OK) return st;
  CUresult r = active ? DRV(cuOccupancyMaxActiveClusters)(out, d->fn, &lc)
                      : DRV(cuOccupancyMaxPotentialClusterSize)(out, d->fn, &lc);
  const char *call = active ? "cuOccupancyMaxActiveClusters" : "cuOccupancyMaxPotentialClusterSize";
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, call, "kernel `%s`", k->asked);
  return CUCORE_OK;
}

cucore_status cucore_occupancy_max_active_clusters(cucore_kernel *k,
                                                   const cucore_launch_config *cfg, int *clusters) {
  cc_begin();
  return cluster_query(k, cfg, 1, clusters, "cucore_occupancy_max_active_clusters");
}

cucore_status cucore_occupancy_max_cluster_size(cucore_kernel *k, const cucore_launch_config *cfg,
                                                int *cluster_size) {
  cc_begin();
  return cluster_query(k, cfg, 0, cluster_size, "cucore_occupancy_max_cluster_size");
}

cucore_status cucore_occupancy_inputs(cucore_kernel *k, cucore_device *dev,
                                      cucore_arch_limits *limits, cucore_kernel_resources *res) {
  cc_begin();
  const char *fn = "cucore_occupancy_inputs";
  CC_CHECK_ARG(limits, fn, "limits");
  CC_CHECK_ARG(res, fn, "resources");
  cc_kernel_dev *d = NULL;
  cucore_status st = enter(k, dev, fn, &d);
  if (st != CUCORE_OK) return st;
  cucore_device_props props;
  st = cucore_device_get_props(dev->ordinal, &props);
  if (st == CUCORE_OK) st = cucore_arch_limits_from_device(&props, limits);
  if (st != CUCORE_OK) return st;
  cucore_kernel_resources r = CUCORE_KERNEL_RESOURCES_INIT;
  int carveout = -1;
  CUresult cr = DRV(cuFuncGetAttribute)(&carveout,
                                        CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, d->fn);
  if (cr == CUDA_ERROR_INVALID_VALUE)
    carveout = -1; /* a driver without it: no preference */
  else if (cr != CUDA_SUCCESS)
    return cc_fail_cu(cr, "cuFuncGetAttribute", "%s: kernel `%s`, preferred shared memory carveout",
                      fn, k->asked);
  r.registers = d->regs;
  r.static_shared_bytes = d->static_smem;
  r.max_threads_per_block = d->max_threads;
  r.carveout_percent = carveout;
  r.max_dynamic_shared_bytes = 0; /* cucore raises it on demand */
  /* Named barriers are a limit the driver applies but no attribute reports: the cubin's
   * EIATTR_NUM_BARRIERS does (the offline reader). Unknown stays -1 (taken as 1). */
  cucore_binary *bin = NULL;
  const cucore_kernel_info *info = NULL;
  if (k->obj && k->obj->type != CUCORE_CODE_LTOIR && k->obj->type != CUCORE_CODE_PTX &&
      cc_offline_kernel_info(k->obj, k->name, d->arch, &bin, &info) == CUCORE_OK &&
      info->barriers > 0)
    r.barriers = info->barriers;
  cucore_binary_destroy(bin);
  *res = r;
  cc_begin();
  return CUCORE_OK;
}
