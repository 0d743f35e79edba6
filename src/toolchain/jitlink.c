/*
 * jitlink.c -- nvJitLink runs: any number of inputs (cubin, PTX, LTO-IR, fatbin, host objects,
 * libraries) linked into one cubin, or PTX with LTO. The engine of the Linker (compile/) and of
 * Program's PTX and NVVM paths, and how an LTO-IR ObjectCode (object/) becomes loadable.
 */
#include "toolchain/jitlink.h"
#include "toolchain/driver_link.h"
#include "toolchain/options.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static nvJitLinkInputType jit_type(cucore_code_type t) {
  switch (t) {
  case CUCORE_CODE_CUBIN: return NVJITLINK_INPUT_CUBIN;
  case CUCORE_CODE_PTX: return NVJITLINK_INPUT_PTX;
  case CUCORE_CODE_LTOIR: return NVJITLINK_INPUT_LTOIR;
  case CUCORE_CODE_FATBIN: return NVJITLINK_INPUT_FATBIN;
  case CUCORE_CODE_OBJECT: return NVJITLINK_INPUT_OBJECT;
  case CUCORE_CODE_LIBRARY: return NVJITLINK_INPUT_LIBRARY;
  default: return NVJITLINK_INPUT_ANY;
  }
}

static char *take_log(nvJitLinkHandle h, int error) {
  size_t n = 0;
  nvJitLinkResult r = error ? JITLINK(nvJitLinkGetErrorLogSize)(h, &n)
                            : JITLINK(nvJitLinkGetInfoLogSize)(h, &n);
  if (r != NVJITLINK_SUCCESS || n <= 1) return NULL;
  char *log = cc_raw_malloc(n + 1);
  if (!log) return NULL;
  r = error ? JITLINK(nvJitLinkGetErrorLog)(h, log) : JITLINK(nvJitLinkGetInfoLog)(h, log);
  log[r == NVJITLINK_SUCCESS ? n : 0] = 0;
  return log;
}

/* The flags of a link: the options, -lto when asked (linked LTO-IR always is), and -r for the
 * outputs of incremental linking. */
static cucore_status link_args(const cucore_options *opts, int arch, const char *suffix, int lto,
                               int want, cc_argv *args) {
  cucore_status st = cc_options_render(opts, CC_TOOL_NVJITLINK, arch, suffix, 0, args);
  if (st == CUCORE_OK && (lto || want == CUCORE_LINK_OUTPUT_LTOIR) &&
      !cc_options_int(opts, CUCORE_OPT_LTO))
    st = cc_argv_push(args, "-lto");
  if (st == CUCORE_OK && want >= CUCORE_LINK_OUTPUT_RELOCATABLE) st = cc_argv_push(args, "-r");
  return st;
}

static nvJitLinkResult output_size(nvJitLinkHandle h, int want, size_t *n) {
  switch (want) {
  case CUCORE_LINK_OUTPUT_PTX: return JITLINK(nvJitLinkGetLinkedPtxSize)(h, n);
  case CUCORE_LINK_OUTPUT_LTOIR: return JITLINK(nvJitLinkGetLinkedLTOIRSize)(h, n);
  default: return JITLINK(nvJitLinkGetLinkedCubinSize)(h, n);
  }
}

static nvJitLinkResult output_get(nvJitLinkHandle h, int want, unsigned char *buf) {
  switch (want) {
  case CUCORE_LINK_OUTPUT_PTX: return JITLINK(nvJitLinkGetLinkedPtx)(h, (char *)buf);
  case CUCORE_LINK_OUTPUT_LTOIR: return JITLINK(nvJitLinkGetLinkedLTOIR)(h, buf);
  default: return JITLINK(nvJitLinkGetLinkedCubin)(h, buf);
  }
}

static const char *output_call(int want, int size) {
  static const char *const calls[][2] = {{"nvJitLinkGetLinkedCubin", "nvJitLinkGetLinkedCubinSize"},
                                         {"nvJitLinkGetLinkedPtx", "nvJitLinkGetLinkedPtxSize"},
                                         {"nvJitLinkGetLinkedCubin", "nvJitLinkGetLinkedCubinSize"},
                                         {"nvJitLinkGetLinkedLTOIR",
                                          "nvJitLinkGetLinkedLTOIRSize"}};
  return calls[want][size];
}

/* The linked code, NUL-terminated; a PTX's size leaves its NUL out, a binary is kept whole (an
 * ELF may end in zeros). */
static cucore_status take_output(nvJitLinkHandle h, int want, unsigned char **out,
                                 size_t *out_size) {
  size_t n = 0;
  nvJitLinkResult r = output_size(h, want, &n);
  if (r != NVJITLINK_SUCCESS) return cc_fail_nvjitlink(r, output_call(want, 1), NULL);
  unsigned char *buf = cc_malloc(n + 1, "linked code");
  if (!buf) return CUCORE_HOST_OUT_OF_MEMORY;
  r = output_get(h, want, buf);
  if (r != NVJITLINK_SUCCESS) {
    free(buf);
    return cc_fail_nvjitlink(r, output_call(want, 0), NULL);
  }
  buf[n] = 0;
  if (want == CUCORE_LINK_OUTPUT_PTX)
    while (n && buf[n - 1] == 0) n--;
  *out = buf;
  *out_size = n;
  return CUCORE_OK;
}

/* Adds the inputs and completes the link; *failed_input names an input nvJitLink refused. */
static nvJitLinkResult add_and_complete(nvJitLinkHandle h, const cc_link_input *inputs, int count,
                                        const char **failed_input) {
  nvJitLinkResult r = NVJITLINK_SUCCESS;
  for (int i = 0; r == NVJITLINK_SUCCESS && i < count; i++) {
    const cc_link_input *in = &inputs[i];
    /* PTX goes in with its terminating NUL. */
    r = JITLINK(nvJitLinkAddData)(h, jit_type(in->type), in->data,
                                  in->size + (in->type == CUCORE_CODE_PTX ? 1 : 0), in->name);
    if (r != NVJITLINK_SUCCESS) *failed_input = in->name;
  }
  return r == NVJITLINK_SUCCESS ? JITLINK(nvJitLinkComplete)(h) : r;
}

/* nvJitLink could not be used: the driver's linker, for what it can make. */
static cucore_status driver_fallback(const cucore_options *opts, int arch, const char *suffix,
                                     int lto, const cc_link_input *inputs, int count, int want,
                                     unsigned char **out, size_t *out_size, char **info_log,
                                     char **error_log, cucore_status load_st) {
  int code = CUCORE_CODE(load_st);
  if (code != CUCORE_NVJITLINK_NOT_FOUND && code != CUCORE_TOOLKIT_TOO_OLD) return load_st;
  if (want > CUCORE_LINK_OUTPUT_PTX) return cc_jitlink_check_output(want, NULL);
  char why[1024];
  snprintf(why, sizeof why, "%s", cucore_last_error());
  cc_begin(); /* the fallback's own outcome is the one to report */
  return cc_driver_link(opts, arch, suffix, lto, inputs, count, want, out, out_size, info_log,
                        error_log, why);
}

cucore_status cc_jitlink(const cucore_options *opts, int arch, const char *suffix, int lto,
                         const cc_link_input *inputs, int count, int want, unsigned char **out,
                         size_t *out_size, char **info_log, char **error_log) {
  *out = NULL;
  *out_size = 0;
  if (info_log) *info_log = NULL;
  if (error_log) *error_log = NULL;
  cucore_status st = cc_nvjitlink_load();
  if (st != CUCORE_OK)
    return driver_fallback(opts, arch, suffix, lto, inputs, count, want, out, out_size, info_log,
                           error_log, st);
  cc_argv args = {0};
  st = link_args(opts, arch, suffix, lto, want, &args);
  nvJitLinkHandle h = NULL;
  nvJitLinkResult r = NVJITLINK_SUCCESS;
  if (st == CUCORE_OK) r = JITLINK(nvJitLinkCreate)(&h, (uint32_t)args.n, (const char **)args.v);
  cc_argv_free(&args);
  if (st != CUCORE_OK) return st;
  if (r != NVJITLINK_SUCCESS)
    return cc_fail_nvjitlink(r, "nvJitLinkCreate", "for sm_%d%s", arch, suffix);
  const char *failed_input = NULL;
  r = add_and_complete(h, inputs, count, &failed_input);
  char *ilog = take_log(h, 0), *elog = take_log(h, 1);
  if (r != NVJITLINK_SUCCESS) {
    char first[512] = "";
    if (elog) snprintf(first, sizeof first, "%.*s", (int)strcspn(elog, "\n"), elog);
    st = failed_input
             ? cc_fail_nvjitlink(r, "nvJitLinkAddData", "input `%s`: %s", failed_input, first)
             : cc_fail_nvjitlink(r, "nvJitLinkComplete", "linking %d input%s for sm_%d%s: %s",
                                 count, count == 1 ? "" : "s", arch, suffix, first);
  } else {
    st = take_output(h, want, out, out_size);
  }
  JITLINK(nvJitLinkDestroy)(&h);
  if (info_log)
    *info_log = ilog;
  else
    free(ilog);
  if (error_log)
    *error_log = elog;
  else
    free(elog);
  return st;
}

int cc_jitlink_output_version(cucore_link_output want) {
  return want == CUCORE_LINK_OUTPUT_RELOCATABLE ? 13020
         : want == CUCORE_LINK_OUTPUT_LTOIR     ? 13030
                                                : 0;
}

cucore_status cc_jitlink_check_output(cucore_link_output want, const char *fn) {
  int need = cc_jitlink_output_version(want);
  if (!need) return CUCORE_OK;
  const char *what = want == CUCORE_LINK_OUTPUT_RELOCATABLE ? "a relocatable link output (-r)"
                                                            : "linked LTO-IR as a link output";
  const char *sep = fn ? ": " : "";
  fn = fn ? fn : "";
  cucore_status st = cc_nvjitlink_load();
  if (st != CUCORE_OK) {
    int code = CUCORE_CODE(st) == CUCORE_TOOLKIT_TOO_OLD ? CUCORE_TOOLKIT_TOO_OLD
                                                         : CUCORE_NVJITLINK_NOT_FOUND;
    char why[1024];
    snprintf(why, sizeof why, "%s", cucore_last_error());
    cc_begin(); /* restated below, with what it was needed for */
    return cc_fail(code,
                   "%s%s%s needs nvJitLink %d.%d or newer (the driver's linker cannot make it), "
                   "and nvJitLink cannot be used: %s",
                   fn, sep, what, need / 1000, need % 1000 / 10, why);
  }
  cucore_library_info info;
  cc_nvjitlink_describe(&info);
  const char *path = info.path ? info.path : "nvJitLink";
  if (cc_jl.version < need)
    return cc_fail(CUCORE_TOOLKIT_TOO_OLD, "%s%s%s needs nvJitLink %d.%d, found %d.%d (%s)", fn,
                   sep, what, need / 1000, need % 1000 / 10, cc_jl.version / 1000,
                   cc_jl.version % 1000 / 10, path);
  if (want == CUCORE_LINK_OUTPUT_LTOIR &&
      (!JITLINK(nvJitLinkGetLinkedLTOIRSize) || !JITLINK(nvJitLinkGetLinkedLTOIR)))
    return cc_fail(CUCORE_TOOLKIT_TOO_OLD,
                   "%s%s%s needs nvJitLinkGetLinkedLTOIR, which nvJitLink %d.%d at %s lacks", fn,
                   sep, what, cc_jl.version / 1000, cc_jl.version % 1000 / 10, path);
  return CUCORE_OK;
}

cucore_status cc_jitlink_one(const cucore_options *opts, int arch, const char *suffix,
                             cucore_code_type in_type, const unsigned char *data, size_t size,
                             const char *name, int want_ptx, int lto, unsigned char **out,
                             size_t *out_size, char **log_out) {
  cc_link_input in = {in_type, (unsigned char *)data, size, (char *)name, 0};
  return cc_jitlink(opts, arch, suffix, lto, &in, 1, want_ptx, out, out_size, NULL, log_out);
}

cucore_status cc_jitlink_check_producer(int producer_version, const char *name, const char *fn) {
  if (!producer_version || cc_nvjitlink_load() != CUCORE_OK ||
      producer_version / 1000 <= cc_jl.version / 1000)
    return CUCORE_OK;
  return cc_fail(CUCORE_VERSION_MISMATCH,
                 "%s%s`%s` is LTO-IR from NVRTC %d.%d, newer than the loaded nvJitLink %d.%d can "
                 "read; use an nvJitLink at least as new as the NVRTC",
                 fn ? fn : "", fn ? ": " : "", name, producer_version / 1000,
                 producer_version % 1000 / 10, cc_jl.version / 1000, cc_jl.version % 1000 / 10);
}

cucore_status cc_link_single(const unsigned char *ltoir, size_t size, const char *name,
                             int producer_version, int arch, const char *suffix,
                             unsigned char **cubin, size_t *cubin_size) {
  cucore_status st = cc_jitlink_check_producer(producer_version, name, NULL);
  if (st != CUCORE_OK) return st;
  return cc_jitlink_one(NULL, arch, suffix, CUCORE_CODE_LTOIR, ltoir, size, name, 0, 1, cubin,
                        cubin_size, NULL);
}
