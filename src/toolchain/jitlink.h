/* toolchain/jitlink.h -- nvJitLink runs (jitlink.c): the Linker's engine, Program's PTX and
 * NVVM paths, and the link that makes LTO-IR loadable. */
#ifndef CUCORE_TOOLCHAIN_JITLINK_H
#define CUCORE_TOOLCHAIN_JITLINK_H

#include "loader/loader.h"

/* One nvJitLink input (borrowed by cc_jitlink). */
typedef struct cc_link_input {
  cucore_code_type type;
  unsigned char *data;
  size_t size; /* without a PTX's NUL */
  char *name;
  int producer_version;
} cc_link_input;

/* Runs nvJitLink over `inputs` for sm_<arch><suffix> with `opts` (NULL: defaults; lto adds
 * -lto), giving the output `want` names (a cucore_link_output: 0 a cubin, 1 PTX, 2 a
 * relocatable cubin with -r, 3 linked LTO-IR with -lto -r) and the logs (malloc'd, NULL when
 * empty; either may be NULL). The last two are for a caller that checked
 * cc_jitlink_check_output first. */
cucore_status cc_jitlink(const cucore_options *opts, int arch, const char *suffix, int lto,
                         const cc_link_input *inputs, int count, int want, unsigned char **out,
                         size_t *out_size, char **info_log, char **error_log);
/* The nvJitLink version an output needs: 13.2 for a relocatable one, 13.3 for LTO-IR, 0 for
 * cubin and PTX (major*1000 + minor*10, as cc_jl.version). */
int cc_jitlink_output_version(cucore_link_output want);
/* Loads nvJitLink and checks it can make `want`: CUCORE_TOOLKIT_TOO_OLD naming both versions
 * ("needs nvJitLink 13.2, found 13.0") or the missing entry point, CUCORE_NVJITLINK_NOT_FOUND
 * when there is none (the driver's linker makes neither); `fn` begins the message. */
cucore_status cc_jitlink_check_output(cucore_link_output want, const char *fn);
/* The same for one input; the error log goes to *log_out (may be NULL). */
cucore_status cc_jitlink_one(const cucore_options *opts, int arch, const char *suffix,
                             cucore_code_type in_type, const unsigned char *data, size_t size,
                             const char *name, int want_ptx, int lto, unsigned char **out,
                             size_t *out_size, char **log_out);
/* CUCORE_VERSION_MISMATCH when LTO-IR `name` was made by an NVRTC/libNVVM
 * (`producer_version`, 0 = unknown) newer than the loaded nvJitLink can read; `fn` (may be
 * NULL) begins the message. */
cucore_status cc_jitlink_check_producer(int producer_version, const char *name, const char *fn);
/* Links one LTO-IR module into a cubin for sm_<arch><suffix> (how LTO-IR is loaded). */
cucore_status cc_link_single(const unsigned char *ltoir, size_t size, const char *name,
                             int producer_version, int arch, const char *suffix,
                             unsigned char **cubin, size_t *cubin_size);

#endif /* CUCORE_TOOLCHAIN_JITLINK_H */
