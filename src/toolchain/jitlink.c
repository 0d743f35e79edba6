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

cucore_status cc_jitlink(const cucore_options *opts, int arch, const char *suffix, int lto,
                         const cc_link_input *inputs, int count, int want_ptx, unsigned char **out,
                         size_t *out_size, char **info_log, char **error_log) {
  *out = NULL;
  *out_size = 0;
  if (info_log) *info_log = NULL;
  if (error_log) *error_log = NULL;
  cucore_status st = cc_nvjitlink_load();
  if (st != CUCORE_OK) {
    int code = CUCORE_CODE(st);
    if (code != CUCORE_NVJITLINK_NOT_FOUND && code != CUCORE_TOOLKIT_TOO_OLD) return st;
    char why[1024];
    snprintf(why, sizeof why, "%s", cucore_last_error());
    cc_begin(); /* the fallback's own outcome is the one to report */
    return cc_driver_link(opts, arch, suffix, lto, inputs, count, want_ptx, out, out_size, info_log,
                          error_log, why);
  }
  cc_argv args = {0};
  st = cc_options_render(opts, CC_TOOL_NVJITLINK, arch, suffix, 0, &args);
  if (st == CUCORE_OK && lto && !cc_options_int(opts, CUCORE_OPT_LTO))
    st = cc_argv_push(&args, "-lto");
  if (st != CUCORE_OK) {
    cc_argv_free(&args);
    return st;
  }
  nvJitLinkHandle h = NULL;
  nvJitLinkResult r = JITLINK(nvJitLinkCreate)(&h, (uint32_t)args.n, (const char **)args.v);
  cc_argv_free(&args);
  if (r != NVJITLINK_SUCCESS)
    return cc_fail_nvjitlink(r, "nvJitLinkCreate", "for sm_%d%s", arch, suffix);
  const char *failed_input = NULL;
  for (int i = 0; r == NVJITLINK_SUCCESS && i < count; i++) {
    const cc_link_input *in = &inputs[i];
    /* PTX goes in with its terminating NUL. */
    r = JITLINK(nvJitLinkAddData)(h, jit_type(in->type), in->data,
                                  in->size + (in->type == CUCORE_CODE_PTX ? 1 : 0), in->name);
    if (r != NVJITLINK_SUCCESS) failed_input = in->name;
  }
  if (r == NVJITLINK_SUCCESS) r = JITLINK(nvJitLinkComplete)(h);
  char *ilog = take_log(h, 0), *elog = take_log(h, 1);
  if (r != NVJITLINK_SUCCESS) {
    char first[512] = "";
    if (elog) snprintf(first, sizeof first, "%.*s", (int)strcspn(elog, "\n"), elog);
    st = failed_input
             ? cc_fail_nvjitlink(r, "nvJitLinkAddData", "input `%s`: %s", failed_input, first)
             : cc_fail_nvjitlink(r, "nvJitLinkComplete", "linking %d input%s for sm_%d%s: %s",
                                 count, count == 1 ? "" : "s", arch, suffix, first);
  } else {
    size_t n = 0;
    r = want_ptx ? JITLINK(nvJitLinkGetLinkedPtxSize)(h, &n)
                 : JITLINK(nvJitLinkGetLinkedCubinSize)(h, &n);
    const char *call = want_ptx ? "nvJitLinkGetLinkedPtxSize" : "nvJitLinkGetLinkedCubinSize";
    unsigned char *buf = r == NVJITLINK_SUCCESS ? cc_malloc(n + 1, "linked code") : NULL;
    if (buf) {
      call = want_ptx ? "nvJitLinkGetLinkedPtx" : "nvJitLinkGetLinkedCubin";
      r = want_ptx ? JITLINK(nvJitLinkGetLinkedPtx)(h, (char *)buf)
                   : JITLINK(nvJitLinkGetLinkedCubin)(h, buf);
      buf[n] = 0;
      if (want_ptx) /* the PTX size counts its NUL; a cubin is kept whole */
        while (n && buf[n - 1] == 0) n--;
    }
    if (r != NVJITLINK_SUCCESS) {
      free(buf);
      st = cc_fail_nvjitlink(r, call, NULL);
    } else if (!buf) {
      st = CUCORE_HOST_OUT_OF_MEMORY;
    } else {
      *out = buf;
      *out_size = n;
    }
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
