/*
 * launch_checks.c -- the words of the launch checks: one message per way a launch
 * configuration can never run, with the numbers, used by the GPU pre-flight (launch.c,
 * kernel.c) and by the offline check (launch_offline.c) alike.
 */
#include "exec/launch_checks.h"

#include <stdio.h>

/* "device 0" or "sm_90". */
static const char *where(char *buf, size_t n, int ordinal, int arch) {
  if (ordinal >= 0)
    snprintf(buf, n, "device %d", ordinal);
  else
    snprintf(buf, n, "sm_%d", arch);
  return buf;
}

static unsigned dim1(unsigned v) { return v ? v : 1; }

cucore_status cc_fail_zero_dim(const char *kernel, int block_is_zero) {
  return cc_fail(CUCORE_LAUNCH_CONFIG,
                 "kernel `%s`: %s x-dimension is 0; grid and block need at least 1 in x "
                 "(unused y and z may be 0 or 1)",
                 kernel, block_is_zero ? "the block's" : "the grid's");
}

cucore_status cc_fail_dim(const char *kernel, int grid, int axis, unsigned value, int limit,
                          int ordinal, int arch) {
  char w[32];
  return cc_fail(CUCORE_LAUNCH_CONFIG, "kernel `%s`: %s %c-dimension %u exceeds %s's limit of %d",
                 kernel, grid ? "grid" : "block", "xyz"[axis], value,
                 where(w, sizeof w, ordinal, arch), limit);
}

cucore_status cc_fail_block_threads(const char *kernel, const unsigned block[3],
                                    unsigned long long threads, int kernel_max, int device_max,
                                    int ordinal) {
  return cc_fail(CUCORE_LAUNCH_CONFIG,
                 "kernel `%s`: a block of %ux%ux%u = %llu threads exceeds the kernel's maximum "
                 "of %d threads per block (set by %s)",
                 kernel, block[0], block[1], block[2], threads, kernel_max,
                 kernel_max < device_max ? "its __launch_bounds__ or its register use"
                 : ordinal >= 0          ? "the device"
                                         : "the architecture");
}

cucore_status cc_fail_shared(const char *kernel, unsigned dynamic, int static_bytes, int optin,
                             int ordinal, int arch) {
  char w[32];
  return cc_fail(CUCORE_LAUNCH_CONFIG,
                 "kernel `%s`: %u bytes of dynamic shared memory + %d bytes of static shared "
                 "memory exceed %s's maximum of %d bytes per block (at most %lld dynamic bytes "
                 "fit)",
                 kernel, dynamic, static_bytes, where(w, sizeof w, ordinal, arch), optin,
                 (long long)optin - static_bytes);
}

cucore_status cc_check_cluster(const char *kernel, const unsigned grid[3], const unsigned *dims,
                               const char *what, int supported, int non_portable, int ordinal,
                               int arch) {
  /* x must be given; unused y and z may be 0 or 1, as for grids and blocks. */
  const unsigned c[3] = {dims[0], dim1(dims[1]), dim1(dims[2])};
  if (!supported) {
    if (ordinal >= 0)
      return cc_fail(CUCORE_LAUNCH_CONFIG,
                     "kernel `%s`: %s %ux%ux%u needs thread block clusters, which device %d "
                     "(sm_%d) does not support (sm_90 or newer)",
                     kernel, what, c[0], c[1], c[2], ordinal, arch);
    return cc_fail(CUCORE_LAUNCH_CONFIG,
                   "kernel `%s`: %s %ux%ux%u needs thread block clusters, which sm_%d does not "
                   "support (sm_90 or newer)",
                   kernel, what, c[0], c[1], c[2], arch);
  }
  unsigned long long size = 1;
  for (int i = 0; i < 3; i++) {
    if (c[i] == 0)
      return cc_fail(CUCORE_LAUNCH_CONFIG, "kernel `%s`: %s %ux%ux%u has a zero dimension", kernel,
                     what, c[0], c[1], c[2]);
    if (grid[i] % c[i])
      return cc_fail(CUCORE_LAUNCH_CONFIG,
                     "kernel `%s`: grid %ux%ux%u is not a multiple of the %s %ux%ux%u "
                     "(dimension %c: %u %% %u = %u)",
                     kernel, grid[0], grid[1], grid[2], what, c[0], c[1], c[2], "xyz"[i], grid[i],
                     c[i], grid[i] % c[i]);
    size *= c[i];
  }
  unsigned long long limit = non_portable ? 16 : 8;
  if (size > limit)
    return cc_fail(CUCORE_LAUNCH_CONFIG,
                   "kernel `%s`: %s %ux%ux%u has %llu blocks; the limit is %llu%s", kernel, what,
                   c[0], c[1], c[2], size, limit,
                   non_portable ? ""
                                : " (portable size; set the kernel's "
                                  "non_portable_cluster_size_allowed for up to 16)");
  return CUCORE_OK;
}

cucore_status cc_fail_cluster_mismatch(const char *kernel, const int req[3], const unsigned c[3]) {
  return cc_fail(CUCORE_LAUNCH_CONFIG,
                 "kernel `%s` was compiled with __cluster_dims__(%d,%d,%d); the launch asks for a "
                 "cluster of %ux%ux%u",
                 kernel, req[0], req[1], req[2], c[0], c[1], c[2]);
}

cucore_status cc_fail_cluster_required(const char *kernel) {
  return cc_fail(CUCORE_LAUNCH_CONFIG,
                 "kernel `%s` must be launched with a cluster dimension (it was compiled to "
                 "require one); set CUCORE_LAUNCH_CLUSTER_DIMENSION",
                 kernel);
}
