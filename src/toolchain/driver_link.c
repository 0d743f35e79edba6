/*
 * driver_link.c -- the driver's own linker (cuLinkCreate / cuLinkAddData / cuLinkComplete),
 * used for PTX, cubin, fatbin, object and library inputs when nvJitLink cannot be used (none
 * installed, or one from CUDA 12.0-12.2 without nvJitLinkVersion). It needs a GPU (a context)
 * and cannot do link-time optimisation. Flags nvJitLink would take are mapped to the driver's
 * JIT options; one the driver cannot honour is refused, never dropped.
 */
#include "toolchain/driver_link.h"
#include "toolchain/options.h"
#include "runtime/runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOG_BYTES 16384

static CUjitInputType input_type(cucore_code_type t) {
  switch (t) {
  case CUCORE_CODE_CUBIN: return CU_JIT_INPUT_CUBIN;
  case CUCORE_CODE_PTX: return CU_JIT_INPUT_PTX;
  case CUCORE_CODE_FATBIN: return CU_JIT_INPUT_FATBINARY;
  case CUCORE_CODE_OBJECT: return CU_JIT_INPUT_OBJECT;
  case CUCORE_CODE_LIBRARY: return CU_JIT_INPUT_LIBRARY;
  default: return CU_JIT_NUM_INPUT_TYPES;
  }
}

typedef struct jit_options {
  CUjit_option opt[10];
  void *val[10];
  unsigned n;
} jit_options;

static void add(jit_options *j, CUjit_option o, uintptr_t v) {
  j->opt[j->n] = o;
  j->val[j->n++] = (void *)v;
}

/* Maps the flags nvJitLink would get to the driver's JIT options. */
static cucore_status map_flags(const cucore_options *opts, int arch, const char *suffix,
                               jit_options *j, const char *why) {
  cc_argv args = {0};
  cucore_status st = cc_options_render(opts, CC_TOOL_NVJITLINK, arch, suffix, 0, &args);
  for (int i = 0; st == CUCORE_OK && i < args.n; i++) {
    const char *a = args.v[i];
    int v = 0;
    if (strncmp(a, "-arch=", 6) == 0) {
      uintptr_t base = suffix[0] == 'a'   ? CU_COMPUTE_ACCELERATED_TARGET_BASE
                       : suffix[0] == 'f' ? CU_COMPUTE_FAMILY_TARGET_BASE
                                          : 0;
      add(j, CU_JIT_TARGET, base + (uintptr_t)arch);
    } else if (strcmp(a, "-g") == 0) {
      add(j, CU_JIT_GENERATE_DEBUG_INFO, 1);
    } else if (strcmp(a, "-lineinfo") == 0) {
      add(j, CU_JIT_GENERATE_LINE_INFO, 1);
    } else if (sscanf(a, "-maxrregcount=%d", &v) == 1) {
      add(j, CU_JIT_MAX_REGISTERS, (uintptr_t)v);
    } else if (sscanf(a, "-O%d", &v) == 1) {
      add(j, CU_JIT_OPTIMIZATION_LEVEL, (uintptr_t)v);
    } else {
      st = cc_fail(CUCORE_NOT_SUPPORTED,
                   "nvJitLink is not usable (%s), and the driver's linker, used instead, cannot "
                   "honour the flag `%s`; drop that option or install nvJitLink",
                   why, a);
    }
  }
  cc_argv_free(&args);
  return st;
}

cucore_status cc_driver_link(const cucore_options *opts, int arch, const char *suffix, int lto,
                             const cc_link_input *inputs, int count, int want_ptx,
                             unsigned char **out, size_t *out_size, char **info_log,
                             char **error_log, const char *why) {
  if (lto || want_ptx)
    return cc_fail(CUCORE_NVJITLINK_NOT_FOUND,
                   "link-time optimisation needs nvJitLink, which is not usable: %s", why);
  for (int i = 0; i < count; i++)
    if (input_type(inputs[i].type) == CU_JIT_NUM_INPUT_TYPES)
      return cc_fail(CUCORE_NVJITLINK_NOT_FOUND,
                     "input `%s` is %s, which only nvJitLink can link, and nvJitLink is not "
                     "usable: %s",
                     inputs[i].name, cucore_code_type_name(inputs[i].type), why);
  cucore_status st = cc_driver_need_device();
  if (st != CUCORE_OK) {
    char msg[1536];
    snprintf(msg, sizeof msg,
             "nvJitLink is not usable (%s), and the driver's linker, its stand-in, needs a GPU: "
             "%s",
             why, cucore_last_error());
    return cc_fail_restate(st, msg);
  }
  /* Not CC_DRV_REQUIRE: cuda.h renames cuLinkCreate to cuLinkCreate_v2 before it could see it. */
  st = cc_driver_require((const void *)DRV(cuLinkCreate), "cuLinkCreate", 6050);
  if (st == CUCORE_OK)
    st = cc_driver_require((const void *)DRV(cuLinkAddData), "cuLinkAddData", 6050);
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuLinkComplete);
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuLinkDestroy);
  if (st == CUCORE_OK) st = cc_ensure_context();
  if (st != CUCORE_OK) return st;
  jit_options j = {0};
  char *ilog = cc_raw_calloc(1, LOG_BYTES), *elog = cc_raw_calloc(1, LOG_BYTES);
  if (!ilog || !elog) {
    free(ilog);
    free(elog);
    return cc_fail(CUCORE_HOST_OUT_OF_MEMORY, "out of host memory for the linker's logs");
  }
  add(&j, CU_JIT_INFO_LOG_BUFFER, (uintptr_t)ilog);
  add(&j, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, LOG_BYTES);
  add(&j, CU_JIT_ERROR_LOG_BUFFER, (uintptr_t)elog);
  add(&j, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, LOG_BYTES);
  st = map_flags(opts, arch, suffix, &j, why);
  CUlinkState link = NULL;
  CUresult r = CUDA_SUCCESS;
  const char *call = "cuLinkCreate", *failed_input = NULL;
  if (st == CUCORE_OK) r = DRV(cuLinkCreate)(j.n, j.opt, j.val, &link);
  for (int i = 0; st == CUCORE_OK && r == CUDA_SUCCESS && i < count; i++) {
    const cc_link_input *in = &inputs[i];
    call = "cuLinkAddData";
    r = DRV(cuLinkAddData)(link, input_type(in->type), in->data,
                           in->size + (in->type == CUCORE_CODE_PTX ? 1 : 0), in->name, 0, NULL,
                           NULL);
    if (r != CUDA_SUCCESS) failed_input = in->name;
  }
  void *cubin = NULL;
  size_t cubin_size = 0;
  if (st == CUCORE_OK && r == CUDA_SUCCESS) {
    call = "cuLinkComplete";
    r = DRV(cuLinkComplete)(link, &cubin, &cubin_size);
  }
  ilog[LOG_BYTES - 1] = elog[LOG_BYTES - 1] = '\0';
  if (st == CUCORE_OK && r != CUDA_SUCCESS) {
    st = cc_fail_cu(r, call, "the driver's linker (nvJitLink is not usable: %s)%s%s%s: %.*s", why,
                    failed_input ? ", input `" : "", failed_input ? failed_input : "",
                    failed_input ? "`" : "", (int)strcspn(elog, "\n"), elog);
  } else if (st == CUCORE_OK) {
    /* The cubin belongs to the link state: copy it before destroying that. */
    *out = cc_copy_code(cubin, cubin_size);
    *out_size = cubin_size;
    if (!*out) st = CUCORE_HOST_OUT_OF_MEMORY;
  }
  if (link) (void)DRV(cuLinkDestroy)(link);
  if (info_log && ilog[0])
    *info_log = ilog;
  else
    free(ilog);
  if (error_log && elog[0])
    *error_log = elog;
  else
    free(elog);
  return st;
}
