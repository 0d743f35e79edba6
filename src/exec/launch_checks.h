/*
 * exec/launch_checks.h -- the launch checks' messages, shared by the pre-flight of a launch
 * on a GPU (launch.c, kernel.c) and the offline check (launch_offline.c), so a launch is
 * refused in the same words with or without a device (launch_checks.c).
 *
 * The comparisons stay with the callers (the launch path keeps them inline and cheap); these
 * record the failure with its arithmetic and return its status. `ordinal` names the device
 * (>= 0) or, when it is -1, the architecture `arch` ("sm_90") the offline check used.
 */
#ifndef CUCORE_EXEC_LAUNCH_CHECKS_H
#define CUCORE_EXEC_LAUNCH_CHECKS_H

#include "base/base.h"

/* The grid's or the block's x-dimension is 0. */
cucore_status cc_fail_zero_dim(const char *kernel, int block_is_zero);
/* Block (grid when `grid`) dimension `axis` (0..2) is `value`, above `limit`. */
cucore_status cc_fail_dim(const char *kernel, int grid, int axis, unsigned value, int limit,
                          int ordinal, int arch);
/* A block of `threads` threads exceeds the kernel's `kernel_max` (the device's or arch's
 * maximum is `device_max`: the message says which set the limit). */
cucore_status cc_fail_block_threads(const char *kernel, const unsigned block[3],
                                    unsigned long long threads, int kernel_max, int device_max,
                                    int ordinal);
/* `dynamic` + `static_bytes` bytes of shared memory exceed the `optin` maximum per block. */
cucore_status cc_fail_shared(const char *kernel, unsigned dynamic, int static_bytes, int optin,
                             int ordinal, int arch);
/* Checks a cluster shape `dims` (x given; y, z 0 or 1 when unused) named `what` ("cluster",
 * "preferred cluster", ...) against the grid: clusters `supported` by the device or arch, no
 * zero dimension, a divisor of the grid in each dimension, at most 8 blocks, or 16 when
 * `non_portable`. */
cucore_status cc_check_cluster(const char *kernel, const unsigned grid[3], const unsigned *dims,
                               const char *what, int supported, int non_portable, int ordinal,
                               int arch);
/* The launch's cluster `c` is not the compile-time one `req` (__cluster_dims__). */
cucore_status cc_fail_cluster_mismatch(const char *kernel, const int req[3], const unsigned c[3]);
/* The kernel must be launched with a cluster dimension and none was given. */
cucore_status cc_fail_cluster_required(const char *kernel);

#endif /* CUCORE_EXEC_LAUNCH_CHECKS_H */
