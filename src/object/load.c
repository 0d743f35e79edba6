/*
 * load.c -- putting an object's code into the driver: cuLibraryLoadData / FromFile with the
 * object's load options (JIT options, log buffers, the preserved-binary hint), LTO-IR linked
 * first, eager loading of every kernel on request, and failures explained with the JIT log.
 */
#include "object/object.h"
#include "base/phase.h"
#include "toolchain/jitlink.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOG_BYTES_MAX (1u << 20)

cucore_status cucore_object_set_load_options(cucore_object *obj, const cucore_load_options *o) {
  cc_begin();
  CC_CHECK_HANDLE(obj, OBJECT, "cucore_object_set_load_options", "obj");
  CC_CHECK_ARG(o, "cucore_object_set_load_options", "opts");
  const char *fn = "cucore_object_set_load_options";
  struct {
    const char *field;
    long long value, lo, hi;
  } ranges[] = {
      {"optimization_level", o->optimization_level, -1, 4},
      {"max_registers", o->max_registers, 0, 255},
      {"target_arch", o->target_arch, 0, 1210},
      {"fallback", o->fallback, 0, 2},
      {"generate_debug_info", o->generate_debug_info, 0, 1},
      {"generate_line_info", o->generate_line_info, 0, 1},
      {"log_verbose", o->log_verbose, 0, 1},
      {"eager", o->eager, 0, 1},
      {"binary_is_preserved", o->binary_is_preserved, 0, 1},
      {"log_bytes", o->log_bytes, 0, LOG_BYTES_MAX},
  };
  for (size_t i = 0; i < CC_ARRAY_LEN(ranges); i++)
    if (ranges[i].value < ranges[i].lo || ranges[i].value > ranges[i].hi)
      return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: %s is %lld; expected %lld..%lld", fn,
                     ranges[i].field, ranges[i].value, ranges[i].lo, ranges[i].hi);
  if (o->target_arch && o->target_arch < 50)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: target_arch %d is not an architecture; give e.g. 90 for sm_90, or 0 for "
                   "the current device's",
                   fn, o->target_arch);
  pthread_mutex_lock(&obj->lock);
  int loaded = obj->loaded;
  if (!loaded) obj->load_opts = *o;
  pthread_mutex_unlock(&obj->lock);
  if (loaded)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: `%s` is loaded already; set load options before its first kernel lookup "
                   "on a GPU or cucore_object_load",
                   fn, obj->name);
  return CUCORE_OK;
}

cucore_status cucore_object_get_jit_log(const cucore_object *obj, const char **info_log,
                                        const char **error_log) {
  cc_begin();
  CC_CHECK_HANDLE(obj, OBJECT, "cucore_object_get_jit_log", "obj");
  if (info_log) *info_log = obj->jit_info_log ? obj->jit_info_log : "";
  if (error_log) *error_log = obj->jit_error_log ? obj->jit_error_log : "";
  return CUCORE_OK;
}

cucore_status cucore_driver_get_loading_mode(int *lazy) {
  cc_begin();
  CC_CHECK_ARG(lazy, "cucore_driver_get_loading_mode", "lazy");
  *lazy = 0;
  cucore_status st = cc_driver_need_device();
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuModuleGetLoadingMode);
  if (st != CUCORE_OK) return st;
  CUmoduleLoadingMode mode = CU_MODULE_EAGER_LOADING;
  CUresult r = DRV(cuModuleGetLoadingMode)(&mode);
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuModuleGetLoadingMode", NULL);
  *lazy = mode == CU_MODULE_LAZY_LOADING;
  return CUCORE_OK;
}

/* ---- the load ------------------------------------------------------------------------------- */

/* The JIT and library option arrays for one load; the log buffers live here too. */
typedef struct load_args {
  CUjit_option jit[12];
  void *jit_values[12];
  unsigned jit_count;
  CUlibraryOption lib[1];
  void *lib_values[1];
  unsigned lib_count;
  char *info, *error;
  unsigned info_index, error_index; /* where the driver writes back the bytes used */
} load_args;

static void add_jit(load_args *a, CUjit_option opt, uintptr_t value) {
  a->jit[a->jit_count] = opt;
  a->jit_values[a->jit_count++] = (void *)value;
}

static cucore_status load_args_make(const cucore_load_options *o, int from_file, load_args *a) {
  memset(a, 0, sizeof *a);
  if (o->log_bytes) {
    a->info = cc_raw_calloc(1, o->log_bytes);
    a->error = cc_raw_calloc(1, o->log_bytes);
    if (!a->info || !a->error) {
      free(a->info);
      free(a->error);
      return cc_fail(CUCORE_HOST_OUT_OF_MEMORY, "out of host memory for %u-byte JIT logs",
                     o->log_bytes);
    }
    add_jit(a, CU_JIT_INFO_LOG_BUFFER, (uintptr_t)a->info);
    a->info_index = a->jit_count;
    add_jit(a, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, o->log_bytes);
    add_jit(a, CU_JIT_ERROR_LOG_BUFFER, (uintptr_t)a->error);
    a->error_index = a->jit_count;
    add_jit(a, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, o->log_bytes);
  }
  if (o->optimization_level >= 0)
    add_jit(a, CU_JIT_OPTIMIZATION_LEVEL, (uintptr_t)o->optimization_level);
  if (o->max_registers) add_jit(a, CU_JIT_MAX_REGISTERS, (uintptr_t)o->max_registers);
  if (o->target_arch) add_jit(a, CU_JIT_TARGET, (uintptr_t)o->target_arch);
  if (o->fallback)
    add_jit(a, CU_JIT_FALLBACK_STRATEGY,
            o->fallback == CUCORE_LOAD_FALLBACK_PREFER_PTX ? CU_PREFER_PTX : CU_PREFER_BINARY);
  if (o->generate_debug_info) add_jit(a, CU_JIT_GENERATE_DEBUG_INFO, 1);
  if (o->generate_line_info) add_jit(a, CU_JIT_GENERATE_LINE_INFO, 1);
  if (o->log_verbose) add_jit(a, CU_JIT_LOG_VERBOSE, 1);
  static int preserved = 1; /* read either as a flag or through the pointer: 1 both ways */
  if (o->binary_is_preserved && !from_file) {
    a->lib[0] = CU_LIBRARY_BINARY_IS_PRESERVED;
    a->lib_values[0] = &preserved;
    a->lib_count = 1;
  }
  return CUCORE_OK;
}

/* Keeps what the driver wrote into the logs (the size options now hold the bytes used). */
static void keep_logs(cucore_object *o, load_args *a) {
  free(o->jit_info_log);
  free(o->jit_error_log);
  o->jit_info_log = o->jit_error_log = NULL;
  if (!a->info) return;
  size_t cap = o->load_opts.log_bytes;
  a->info[cap - 1] = a->error[cap - 1] = '\0';
  if (a->info[0])
    o->jit_info_log = a->info;
  else
    free(a->info);
  if (a->error[0])
    o->jit_error_log = a->error;
  else
    free(a->error);
  a->info = a->error = NULL;
}

/* The first line of the JIT error log, or "". */
static const char *first_error_line(const cucore_object *o, char *buf, size_t n) {
  buf[0] = '\0';
  if (o->jit_error_log)
    snprintf(buf, n, "; the driver's JIT says: %.*s", (int)strcspn(o->jit_error_log, "\n"),
             o->jit_error_log);
  return buf;
}

/* Explains a failed load with what the driver, its JIT log and the code say. */
static cucore_status explain_load_failure(cucore_object *o, CUresult r, const char *call) {
  char jit[600];
  first_error_line(o, jit, sizeof jit);
  if (r == CUDA_ERROR_UNSUPPORTED_PTX_VERSION && o->type == CUCORE_CODE_PTX) {
    const char *v = strstr((const char *)o->code, ".version");
    int maj = 0, min = 0;
    if (v) sscanf(v, ".version %d.%d", &maj, &min);
    return cc_fail_cu(r, call,
                      "`%s` is PTX ISA %d.%d, newer than the driver (CUDA %d.%d) can compile: "
                      "the NVRTC that made it is newer than the driver. Install a newer driver, "
                      "or compile to cubin instead of PTX%s",
                      o->name, maj, min, cc_drv.version / 1000, cc_drv.version % 1000 / 10, jit);
  }
  if (r == CUDA_ERROR_NO_BINARY_FOR_GPU || r == CUDA_ERROR_INVALID_IMAGE)
    return cc_fail_cu(r, call, "`%s` (%s) holds no code this GPU can run%s", o->name,
                      cucore_code_type_name(o->type), jit);
  return cc_fail_cu(r, call, "loading `%s` (%s, %zu bytes)%s", o->name,
                    cucore_code_type_name(o->type), o->size, jit);
}

/* The arch LTO-IR is linked for: the current context's device (device 0's primary context
 * when none is current), 0 when unknown. */
static int current_device_arch(void) {
  CUdevice d;
  int major = 0, minor = 0;
  if (cc_ensure_context() == CUCORE_OK && DRV(cuCtxGetDevice)(&d) == CUDA_SUCCESS &&
      DRV(cuDeviceGetAttribute)(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d) ==
          CUDA_SUCCESS &&
      DRV(cuDeviceGetAttribute)(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d) ==
          CUDA_SUCCESS)
    return major * 10 + minor;
  return 0;
}

/* Loads every kernel of the library into the current context (eager loading). */
static cucore_status load_every_kernel(cucore_object *o) {
  cucore_status st = CC_DRV_REQUIRE(cuLibraryGetKernelCount);
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuLibraryEnumerateKernels);
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuKernelGetFunction);
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuFuncLoad);
  if (st == CUCORE_OK) st = cc_ensure_context();
  if (st != CUCORE_OK) return st;
  unsigned n = 0;
  CUresult r = DRV(cuLibraryGetKernelCount)(&n, o->library);
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuLibraryGetKernelCount", "`%s`", o->name);
  CUkernel *ks = n ? cc_calloc(n, sizeof *ks, "kernel handles") : NULL;
  if (n && !ks) return CUCORE_HOST_OUT_OF_MEMORY;
  r = n ? DRV(cuLibraryEnumerateKernels)(ks, n, o->library) : CUDA_SUCCESS;
  if (r != CUDA_SUCCESS) st = cc_fail_cu(r, "cuLibraryEnumerateKernels", "`%s`", o->name);
  for (unsigned i = 0; st == CUCORE_OK && i < n; i++) {
    CUfunction f = NULL;
    r = DRV(cuKernelGetFunction)(&f, ks[i]);
    if (r == CUDA_SUCCESS) r = DRV(cuFuncLoad)(f);
    if (r != CUDA_SUCCESS)
      st = cc_fail_cu(r, "cuFuncLoad", "eager loading of kernel %u of `%s`", i, o->name);
  }
  free(ks);
  return st;
}

cucore_status cc_object_load_library(cucore_object *o) {
  const cucore_load_options *opts = &o->load_opts;
  unsigned char *linked = NULL;
  const void *code = o->code;
  if (o->type == CUCORE_CODE_LTOIR) {
    size_t linked_size = 0;
    cucore_status st = cc_link_single(o->code, o->size, o->name, o->producer_version,
                                      current_device_arch(), "", &linked, &linked_size);
    if (st != CUCORE_OK) return st;
    code = linked;
  }
  /* From the file when the driver has cuLibraryLoadFromFile (optional), else from the bytes
   * read when the object was made: the same code. */
  int from_file = o->path && !linked && DRV(cuLibraryLoadFromFile) != NULL;
  load_args a;
  cucore_status st = load_args_make(opts, from_file || linked, &a);
  if (st != CUCORE_OK) {
    free(linked);
    return st;
  }
  const char *call = from_file ? "cuLibraryLoadFromFile" : "cuLibraryLoadData";
  int64_t t0 = cc_phase_clock();
  CUresult r = from_file ? DRV(cuLibraryLoadFromFile)(&o->library, o->path, a.jit, a.jit_values,
                                                      a.jit_count, a.lib, a.lib_values, a.lib_count)
                         : DRV(cuLibraryLoadData)(&o->library, code, a.jit, a.jit_values,
                                                  a.jit_count, a.lib, a.lib_values, a.lib_count);
  cc_phase_done(CUCORE_PHASE_MODULE_LOAD, t0);
  free(linked); /* a linked cubin was loaded without the preserved hint: the driver copied it */
  keep_logs(o, &a);
  if (r != CUDA_SUCCESS) return explain_load_failure(o, r, call);
  if (o->jit_error_log) {
    /* The driver can accept a module whose PTX its JIT rejected, and fail only when a kernel
     * is asked for: the error log tells now. */
    if (DRV(cuLibraryUnload)) (void)DRV(cuLibraryUnload)(o->library);
    o->library = NULL;
    return explain_load_failure(o, CUDA_ERROR_INVALID_PTX, call);
  }
  if (opts->eager) {
    st = load_every_kernel(o);
    if (st != CUCORE_OK) {
      if (DRV(cuLibraryUnload)) (void)DRV(cuLibraryUnload)(o->library);
      o->library = NULL;
      return st;
    }
  }
  return CUCORE_OK;
}
