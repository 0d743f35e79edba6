/* toolchain/driver_link.h -- the driver's linker, nvJitLink's stand-in (driver_link.c). */
#ifndef CUCORE_TOOLCHAIN_DRIVER_LINK_H
#define CUCORE_TOOLCHAIN_DRIVER_LINK_H

#include "toolchain/jitlink.h"

/* Links `inputs` with cuLinkCreate/AddData/Complete as cc_jitlink would with nvJitLink (same
 * arguments); `why` says why nvJitLink is not used and goes into every message. LTO-IR,
 * link-time optimisation and PTX output are refused (CUCORE_NVJITLINK_NOT_FOUND), as are
 * flags the driver cannot honour (CUCORE_NOT_SUPPORTED). Needs a GPU. */
cucore_status cc_driver_link(const cucore_options *opts, int arch, const char *suffix, int lto,
                             const cc_link_input *inputs, int count, int want_ptx,
                             unsigned char **out, size_t *out_size, char **info_log,
                             char **error_log, const char *why);
#endif /* CUCORE_TOOLCHAIN_DRIVER_LINK_H */
