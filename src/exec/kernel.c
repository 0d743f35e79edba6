/*
 * kernel.c -- kernels: lookup by symbol or name expression, parameter layout (driver, or the
 * offline reader without a GPU), and every cuFunc/cuKernel query and setting (driver API
 * section 6.22), per device.
 */
#include "exec/kernel.h"
#include "exec/launch_checks.h"
#include "exec/offline_layout.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const attr_names[CUCORE_KATTR_COUNT] = {"max_threads_per_block",
                                                           "shared_size_bytes",
                                                           "const_size_bytes",
                                                           "local_size_bytes",
                                                           "num_regs",
                                                           "ptx_version",
                                                           "binary_version",
                                                           "cache_mode_ca",
                                                           "max_dynamic_shared_size_bytes",
                                                           "preferred_shared_memory_carveout",
                                                           "cluster_size_must_be_set",
                                                           "required_cluster_width",
                                                           "required_cluster_height",
                                                           "required_cluster_depth",
                                                           "non_portable_cluster_size_allowed",
                                                           "cluster_scheduling_policy_preference"};

const char *cucore_kernel_attr_name(cucore_kernel_attr attr) {
  return ((int)attr >= 0 && attr < CUCORE_KATTR_COUNT) ? attr_names[attr] : "unknown_attribute";
}

static int gpu_present(void) {
  /* Quietly: a missing GPU is not an error for lookups, which can work offline. */
  int ok = cc_driver_load() == CUCORE_OK && cc_drv.device_count > 0;
  cc_begin();
  return ok;
}

/* Sums the parameter bytes of a laid-out kernel. */
static void finish_layout(cucore_kernel *k) {
  uint32_t bytes = 0;
  for (int i = 0; i < k->param_count; i++)
    if (k->params[i].offset + k->params[i].size > bytes)
      bytes = k->params[i].offset + k->params[i].size;
  k->param_bytes = bytes;
}

/* Layout from the driver: cuKernelGetParamInfo (cuFuncGetParamInfo for a wrapped CUfunction)
 * until it says the index is past the end. */
cucore_status cc_kernel_driver_layout(cucore_kernel *k) {
  const char *call = k->ckernel ? "cuKernelGetParamInfo" : "cuFuncGetParamInfo";
  cucore_status st = k->ckernel ? CC_DRV_REQUIRE(cuKernelGetParamInfo)
                                : CC_DRV_REQUIRE(cuFuncGetParamInfo);
  if (st == CUCORE_OK) st = cc_ensure_context(); /* the driver answers inside a context */
  if (st != CUCORE_OK) return st;
  size_t cap = 0;
  int n = 0;
  cucore_param_info *ps = NULL;
  for (;;) {
    cucore_param_info *grown = cc_grow(ps, &cap, (size_t)n + 1, sizeof *ps, "a parameter layout");
    if (!grown) {
      free(ps);
      return CUCORE_HOST_OUT_OF_MEMORY;
    }
    ps = grown;
    size_t off = 0, size = 0;
    CUresult r = k->ckernel ? DRV(cuKernelGetParamInfo)(k->ckernel, (size_t)n, &off, &size)
                            : DRV(cuFuncGetParamInfo)(k->foreign_fn, (size_t)n, &off, &size);
    if (r == CUDA_ERROR_INVALID_VALUE) break;
    if (r != CUDA_SUCCESS) {
      free(ps);
      return cc_fail_cu(r, call, "kernel `%s`, parameter %d", k->name, n);
    }
    memset(&ps[n], 0, sizeof ps[n]);
    ps[n].offset = (uint32_t)off;
    ps[n].size = (uint32_t)size;
    n++;
  }
  k->params = ps;
  k->param_count = n;
  k->layout_source = "driver";
  finish_layout(k);
  return CUCORE_OK;
}

static pthread_once_t lazy_once = PTHREAD_ONCE_INIT;
static int lazy_mode;

static void read_lazy_mode(void) {
  CUmoduleLoadingMode mode = CU_MODULE_EAGER_LOADING;
  lazy_mode = DRV(cuModuleGetLoadingMode) && DRV(cuModuleGetLoadingMode)(&mode) == CUDA_SUCCESS &&
              mode == CU_MODULE_LAZY_LOADING;
}

/* 1 when the driver loads functions lazily (CUDA_MODULE_LOADING; asked once per process). */
static int lazy_loading(void) {
  pthread_once(&lazy_once, read_lazy_mode);
  return lazy_mode;
}

/* A new kernel serial (never 0). */
static uint64_t next_serial(void) {
  static _Atomic uint64_t next = 1;
  return atomic_fetch_add_explicit(&next, 1, memory_order_relaxed);
}

cucore_status cc_kernel_new(const char *name, const char *asked, cucore_kernel **out) {
  *out = NULL;
  cucore_kernel *k = cc_calloc(1, sizeof *k, "a kernel");
  if (!k) return CUCORE_HOST_OUT_OF_MEMORY;
  cc_handle_init(k, CC_KIND_KERNEL);
  k->name = cc_strdup(name, "a kernel name");
  k->asked = cc_strdup(asked, "a kernel name");
  if (!k->name || !k->asked) {
    free(k->name);
    free(k->asked);
    free(k);
    return CUCORE_HOST_OUT_OF_MEMORY;
  }
  atomic_init(&k->serial, next_serial());
  pthread_mutex_init(&k->lock, NULL);
  atomic_init(&k->dev_count, 0);
  atomic_init(&k->refs, 1);
  *out = k;
  return CUCORE_OK;
}

static const char *lowered_or_same(const cucore_object *obj, const char *name) {
  for (int i = 0; i < obj->expr_count; i++)
    if (strcmp(obj->exprs[i], name) == 0) return obj->lowered[i];
  return name;
}

/* A C++ kernel asked for by its demangled name ("fill<float>", "scale_kernel") is the symbol
 * the offline reader finds for it (the driver knows symbols only); copied into buf, or the
 * name itself when the reader cannot say (LTO-IR, unreadable code, no such kernel). */
static const char *symbol_of_demangled(cucore_object *obj, const char *name, char *buf,
                                       size_t len) {
  cucore_binary *bin = NULL;
  const cucore_kernel_info *info = NULL;
  if (cc_offline_kernel_info(obj, name, 0, &bin, &info) != CUCORE_OK) {
    cc_begin(); /* not found offline either: the caller's own message says so */
    return name;
  }
  const char *found = name;
  if (info->name && strlen(info->name) < len) {
    snprintf(buf, len, "%s", info->name);
    found = buf;
  }
  cucore_binary_destroy(bin);
  return found;
}

cucore_status cucore_object_get_kernel(cucore_object *obj, const char *name, cucore_kernel **out) {
  cc_begin();
  CC_CHECK_ARG(out, "cucore_object_get_kernel", "out");
  *out = NULL;
  CC_CHECK_HANDLE(obj, OBJECT, "cucore_object_get_kernel", "obj");
  CC_CHECK_ARG(name, "cucore_object_get_kernel", "name");
  const char *symbol = lowered_or_same(obj, name);
  char resolved[1024];
  if (symbol == name && strpbrk(name, "<>(): ,"))
    symbol = symbol_of_demangled(obj, name, resolved, sizeof resolved);
  cucore_kernel *k = NULL;
  cucore_status st = cc_kernel_new(symbol, name, &k);
  if (st != CUCORE_OK) return st;
  k->obj = obj;
  cc_object_retain(obj);
  if (gpu_present()) {
    st = cucore_object_load(obj);
    if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuLibraryGetKernel);
    if (st == CUCORE_OK) {
      CUresult r = DRV(cuLibraryGetKernel)(&k->ckernel, obj->library, symbol);
      if (r == CUDA_ERROR_NOT_FOUND && symbol == name) {
        /* "scale_kernel" for _Z12scale_kernelPffi: the name without its parameters. */
        const char *s = symbol_of_demangled(obj, name, resolved, sizeof resolved);
        if (s != name) {
          char *copy = cc_strdup(s, "a kernel name");
          if (!copy)
            st = CUCORE_HOST_OUT_OF_MEMORY;
          else {
            free(k->name);
            k->name = copy;
            symbol = resolved;
            r = DRV(cuLibraryGetKernel)(&k->ckernel, obj->library, symbol);
          }
        }
      }
      if (st == CUCORE_OK && r == CUDA_ERROR_NOT_FOUND) {
        char names[2048];
        cc_object_names_for_message(obj, names, sizeof names);
        st = cc_fail(cc_status(CUCORE_NOT_FOUND, CUCORE_SOURCE_DRIVER, (int)r),
                     "no kernel `%s` in `%s`%s%s%s", name, obj->name,
                     names[0] ? "; the kernels are: " : "", names,
                     strcmp(symbol, name) == 0 && strchr(name, '<')
                         ? " (a template needs its name expression registered before compiling)"
                         : "");
      } else if (st == CUCORE_OK && r != CUDA_SUCCESS) {
        st = cc_fail_cu(r, "cuLibraryGetKernel", "kernel `%s` of `%s`", name, obj->name);
      }
    }
    if (st == CUCORE_OK && obj->type == CUCORE_CODE_CUBIN && lazy_loading()) {
      /* The driver's layout query loads the function into the context, which lazy loading
       * means to defer to the first launch; a cubin's own layout is the same (the GPU tests
       * compare them) and leaves the function unloaded. */
      const char *source = NULL;
      st = cc_offline_layout(obj, symbol, &k->params, &k->param_count, &source);
      if (st == CUCORE_OK) k->layout_source = source;
    } else if (st == CUCORE_OK && DRV(cuKernelGetParamInfo)) {
      st = cc_kernel_driver_layout(k);
    } else if (st == CUCORE_OK) {
      /* A driver older than 12.4 cannot say: the offline reader can. */
      const char *source = NULL;
      st = cc_offline_layout(obj, symbol, &k->params, &k->param_count, &source);
      if (st == CUCORE_OK) k->layout_source = source;
    }
  } else {
    const char *source = NULL;
    st = cc_offline_layout(obj, symbol, &k->params, &k->param_count, &source);
    if (st == CUCORE_OK) k->layout_source = source;
  }
  if (st != CUCORE_OK) {
    cucore_kernel_destroy(k);
    return st;
  }
  cc_ptx_apply_kinds(obj, symbol, k->params, k->param_count);
  finish_layout(k);
  *out = k;
  return CUCORE_OK;
}

void cc_kernel_retain(void *p) { atomic_fetch_add(&((cucore_kernel *)p)->refs, 1); }

void cc_kernel_release(void *p) {
  cucore_kernel *k = p;
  if (!k || atomic_fetch_sub(&k->refs, 1) != 1) return;
  cc_object_release(k->obj);
  pthread_mutex_destroy(&k->lock);
  free(k->params);
  free(k->name);
  free(k->asked);
  cc_handle_retire(k, CC_KIND_KERNEL);
}

cucore_status cucore_kernel_destroy(cucore_kernel *k) {
  cc_begin();
  if (!k) return CUCORE_OK;
  CC_CHECK_HANDLE(k, KERNEL, "cucore_kernel_destroy", "kernel");
  cc_handle_kill(k, CC_KIND_KERNEL); /* dead to the caller at once, whoever else holds it */
  cc_kernel_release(k);              /* graphs that use the kernel keep it until they are done */
  return CUCORE_OK;
}

cucore_status cucore_kernel_get_name(const cucore_kernel *k, const char **name) {
  cc_begin();
  CC_CHECK_HANDLE(k, KERNEL, "cucore_kernel_get_name", "kernel");
  CC_CHECK_ARG(name, "cucore_kernel_get_name", "name");
  *name = k->name;
  return CUCORE_OK;
}

cucore_status cucore_kernel_get_object(const cucore_kernel *k, cucore_object **obj) {
  cc_begin();
  CC_CHECK_HANDLE(k, KERNEL, "cucore_kernel_get_object", "kernel");
  CC_CHECK_ARG(obj, "cucore_kernel_get_object", "obj");
  *obj = k->obj;
  return CUCORE_OK;
}

cucore_status cucore_kernel_get_param_count(const cucore_kernel *k, int *count) {
  cc_begin();
  CC_CHECK_HANDLE(k, KERNEL, "cucore_kernel_get_param_count", "kernel");
  CC_CHECK_ARG(count, "cucore_kernel_get_param_count", "count");
  *count = k->param_count;
  return CUCORE_OK;
}

cucore_status cucore_kernel_get_param(const cucore_kernel *k, int index, cucore_param_info *out) {
  cc_begin();
  CC_CHECK_HANDLE(k, KERNEL, "cucore_kernel_get_param", "kernel");
  CC_CHECK_ARG(out, "cucore_kernel_get_param", "out");
  if (index < 0 || index >= k->param_count)
    return cc_fail(
        CUCORE_INVALID_ARGUMENT,
        "cucore_kernel_get_param: kernel `%s` has %d parameters; index %d is out of range", k->name,
        k->param_count, index);
  *out = k->params[index];
  return CUCORE_OK;
}

cucore_status cucore_kernel_get_param_bytes(const cucore_kernel *k, size_t *bytes) {
  cc_begin();
  CC_CHECK_HANDLE(k, KERNEL, "cucore_kernel_get_param_bytes", "kernel");
  CC_CHECK_ARG(bytes, "cucore_kernel_get_param_bytes", "bytes");
  *bytes = k->param_bytes;
  return CUCORE_OK;
}

cucore_status cucore_kernel_get_layout_source(const cucore_kernel *k, const char **src) {
  cc_begin();
  CC_CHECK_HANDLE(k, KERNEL, "cucore_kernel_get_layout_source", "kernel");
  CC_CHECK_ARG(src, "cucore_kernel_get_layout_source", "src");
  *src = k->layout_source;
  return CUCORE_OK;
}

/* ---- per-device facts ---------------------------------------------------------------------- */

static cucore_status need_loaded(cucore_kernel *k, const char *fn) {
  if (k->ckernel || k->foreign_fn) return CUCORE_OK;
  return cc_fail(CUCORE_NO_DEVICE,
                 "%s: kernel `%s` was looked up without a GPU (layout from the %s); look it up "
                 "again where a GPU is present to use it on one",
                 fn, k->name, k->layout_source ? k->layout_source : "offline reader");
}

/* d->fn: the kernel's CUfunction in `dev`'s context (loaded), or on a green context the
 * CUkernel itself (the driver runs it in the stream's context). */
static cucore_status dev_function(cucore_kernel *k, cucore_device *dev, cc_kernel_dev *d) {
  if (k->foreign_fn) {
    if (dev->ctx != k->foreign_ctx)
      return cc_fail(CUCORE_INVALID_DEVICE,
                     "kernel `%s` wraps a CUfunction of another context than device %d's; a "
                     "CUfunction runs only in its own context (wrap a CUkernel to run anywhere)",
                     k->name, dev->ordinal);
    d->fn = k->foreign_fn;
    return CUCORE_OK;
  }
  if (dev->green) {
    d->fn = (CUfunction)k->ckernel;
    return CUCORE_OK;
  }
  cucore_status st = CC_DRV_REQUIRE(cuKernelGetFunction);
  if (st != CUCORE_OK) return st;
  CUresult r = DRV(cuKernelGetFunction)(&d->fn, k->ckernel);
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, "cuKernelGetFunction", "kernel `%s` on device %d", k->name, dev->ordinal);
  return CUCORE_OK;
}

/* The kernel's own limits on `dev` (an attribute the driver does not know stays 0). */
static cucore_status read_function_attrs(cucore_kernel *k, cucore_device *dev, cc_kernel_dev *d) {
  const struct {
    int *dst;
    CUfunction_attribute a;
  } fattrs[] = {
      {&d->max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK},
      {&d->static_smem, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES},
      {&d->max_dyn_smem, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES},
      {&d->regs, CU_FUNC_ATTRIBUTE_NUM_REGS},
      {&d->local_bytes, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES},
      {&d->cluster_must_be_set, CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET},
      {&d->req_cluster[0], CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH},
      {&d->req_cluster[1], CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT},
      {&d->req_cluster[2], CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH},
      {&d->non_portable_cluster, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED},
  };
  for (size_t i = 0; i < CC_ARRAY_LEN(fattrs); i++) {
    const char *attr = cucore_kernel_attr_name((cucore_kernel_attr)fattrs[i].a);
    CUresult r;
    if (dev->green) { /* d->fn is the CUkernel, which cuFuncGetAttribute does not take */
      r = DRV(cuKernelGetAttribute)(fattrs[i].dst, fattrs[i].a, k->ckernel, dev->cudev);
      if (r != CUDA_SUCCESS && r != CUDA_ERROR_INVALID_VALUE)
        return cc_fail_cu(r, "cuKernelGetAttribute", "kernel `%s` on a green context, attribute %s",
                          k->name, attr);
      continue;
    }
    r = DRV(cuFuncGetAttribute)(fattrs[i].dst, fattrs[i].a, d->fn);
    if (r == CUDA_ERROR_FUNCTION_NOT_LOADED && DRV(cuFuncLoad)) {
      /* Lazy loading: a launch needs the function loaded anyway. */
      r = DRV(cuFuncLoad)(d->fn);
      if (r == CUDA_SUCCESS) r = DRV(cuFuncGetAttribute)(fattrs[i].dst, fattrs[i].a, d->fn);
    }
    if (r != CUDA_SUCCESS && r != CUDA_ERROR_INVALID_VALUE)
      return cc_fail_cu(r, "cuFuncGetAttribute", "kernel `%s`, attribute %s", k->name, attr);
  }
  return CUCORE_OK;
}

/* The device's limits a launch is checked against, and its compute capability. */
static cucore_status read_device_attrs(cucore_kernel *k, cucore_device *dev, cc_kernel_dev *d) {
  int major = 0, minor = 0;
  const struct {
    int *dst;
    CUdevice_attribute a;
  } dattrs[] = {
      {&d->dev_max_block[0], CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X},
      {&d->dev_max_block[1], CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y},
      {&d->dev_max_block[2], CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z},
      {&d->dev_max_grid[0], CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X},
      {&d->dev_max_grid[1], CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y},
      {&d->dev_max_grid[2], CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z},
      {&d->dev_max_threads, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK},
      {&d->smem_optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN},
      {&d->sm_count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT},
      {&d->cluster_launch, CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH},
      {&d->coop_launch, CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH},
      {&d->regs_per_block, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK},
      {&d->regs_per_sm, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR},
      {&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR},
      {&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR},
  };
  for (size_t i = 0; i < CC_ARRAY_LEN(dattrs); i++) {
    /* All of these predate CUDA 12.0, the oldest driver cucore loads: any failure is one (a
     * limit read as 0 would refuse launches for a false reason; fault injection found one). */
    CUresult r = DRV(cuDeviceGetAttribute)(dattrs[i].dst, dattrs[i].a, dev->cudev);
    if (r != CUDA_SUCCESS)
      return cc_fail_cu(r, "cuDeviceGetAttribute", "device %d, attribute %d, for kernel `%s`",
                        dev->ordinal, (int)dattrs[i].a, k->name);
  }
  d->arch = major * 10 + minor;
  return CUCORE_OK;
}

/* What a launch of `k` on `dev` needs to know: its CUfunction there, its limits and the
 * device's. */
static cucore_status fill_dev(cucore_kernel *k, cucore_device *dev, cc_kernel_dev *d) {
  memset(d, 0, sizeof *d);
  d->ctx = dev->ctx;
  d->ordinal = dev->ordinal;
  d->cudev = dev->cudev;
  cucore_status st = dev_function(k, dev, d);
  if (st == CUCORE_OK) st = read_function_attrs(k, dev, d);
  if (st == CUCORE_OK) st = read_device_attrs(k, dev, d);
  if (st != CUCORE_OK) return st;
  if (dev->green > 0) d->sm_count = dev->green; /* a green context's SMs bound its launches */
  return CUCORE_OK;
}

cucore_status cc_kernel_dev_get(cucore_kernel *k, cucore_device *dev, cc_kernel_dev **out) {
  int n = atomic_load_explicit(&k->dev_count, memory_order_acquire);
  for (int i = 0; i < n; i++)
    if (CC_LIKELY(k->devs[i].ctx == dev->ctx)) {
      *out = &k->devs[i];
      return CUCORE_OK;
    }
  cucore_status st = need_loaded(k, "launch");
  if (st != CUCORE_OK) return st;
  pthread_mutex_lock(&k->lock);
  n = atomic_load_explicit(&k->dev_count, memory_order_relaxed);
  for (int i = 0; i < n; i++)
    if (k->devs[i].ctx == dev->ctx) {
      pthread_mutex_unlock(&k->lock);
      *out = &k->devs[i];
      return CUCORE_OK;
    }
  if (n == CC_KERNEL_MAX_DEVICES) {
    pthread_mutex_unlock(&k->lock);
    return cc_fail(CUCORE_NOT_SUPPORTED, "kernel `%s` is in use on %d devices, cucore's limit",
                   k->name, CC_KERNEL_MAX_DEVICES);
  }
  st = cc_device_make_current(dev);
  /* Reading the facts may load the function (lazy loading): not work of a capture under way. */
  int relaxed = cc_capture_relax();
  if (st == CUCORE_OK) st = fill_dev(k, dev, &k->devs[n]);
  cc_capture_unrelax(relaxed);
  if (st == CUCORE_OK) atomic_store_explicit(&k->dev_count, n + 1, memory_order_release);
  pthread_mutex_unlock(&k->lock);
  if (st == CUCORE_OK) *out = &k->devs[n];
  return st;
}

/* ---- attributes and execution control ------------------------------------------------------ */

/* The kernel's CUfunction in `dev`'s context (current), without reading attributes: under
 * lazy loading this neither loads the function nor caches launch facts. */
static cucore_status function_of(cucore_kernel *k, cucore_device *dev, CUfunction *out) {
  if (k->foreign_fn) {
    if (dev->ctx != k->foreign_ctx)
      return cc_fail(CUCORE_INVALID_DEVICE,
                     "kernel `%s` wraps a CUfunction of another context than device %d's", k->name,
                     dev->ordinal);
    *out = k->foreign_fn;
    return CUCORE_OK;
  }
  cucore_status st = CC_DRV_REQUIRE(cuKernelGetFunction);
  if (st != CUCORE_OK) return st;
  CUresult r = DRV(cuKernelGetFunction)(out, k->ckernel);
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, "cuKernelGetFunction", "kernel `%s` on device %d", k->name, dev->ordinal);
  return CUCORE_OK;
}

/* The kernel's CUfunction in the current context as the module lists it, which (unlike
 * cuKernelGetFunction) leaves an unloaded function unloaded. */
static cucore_status unloaded_function_of(cucore_kernel *k, CUfunction *out) {
  if (k->foreign_fn) {
    *out = k->foreign_fn;
    return CUCORE_OK;
  }
  cucore_status st = CC_DRV_REQUIRE(cuKernelGetLibrary);
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuLibraryGetModule);
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuModuleGetFunctionCount);
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuModuleEnumerateFunctions);
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuFuncGetName);
  if (st != CUCORE_OK) return st;
  CUlibrary lib = NULL;
  CUmodule mod = NULL;
  unsigned n = 0;
  CUresult r = DRV(cuKernelGetLibrary)(&lib, k->ckernel);
  if (r == CUDA_SUCCESS) r = DRV(cuLibraryGetModule)(&mod, lib);
  if (r == CUDA_SUCCESS) r = DRV(cuModuleGetFunctionCount)(&n, mod);
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, "cuLibraryGetModule", "listing the functions beside kernel `%s`", k->name);
  CUfunction *fs = cc_calloc(n ? n : 1, sizeof *fs, "function handles");
  if (!fs) return CUCORE_HOST_OUT_OF_MEMORY;
  r = DRV(cuModuleEnumerateFunctions)(fs, n, mod);
  *out = NULL;
  for (unsigned i = 0; r == CUDA_SUCCESS && i < n && !*out; i++) {
    const char *name = NULL;
    if (DRV(cuFuncGetName)(&name, fs[i]) == CUDA_SUCCESS && name && strcmp(name, k->name) == 0)
      *out = fs[i];
  }
  free(fs);
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuModuleEnumerateFunctions", "kernel `%s`", k->name);
  if (!*out)
    return cc_fail(CUCORE_NOT_FOUND, "kernel `%s` is not among its module's functions", k->name);
  return CUCORE_OK;
}

static cucore_status enter(cucore_kernel *k, cucore_device *dev, const char *fn,
                           cc_kernel_dev **d) {
  CC_CHECK_HANDLE(k, KERNEL, fn, "kernel");
  CC_CHECK_HANDLE(dev, DEVICE, fn, "dev");
  cucore_status st = need_loaded(k, fn);
  if (st == CUCORE_OK) st = cc_device_make_current(dev);
  if (st == CUCORE_OK && d) st = cc_kernel_dev_get(k, dev, d);
  return st;
}

cucore_status cucore_kernel_get_attribute(cucore_kernel *k, cucore_device *dev,
                                          cucore_kernel_attr attr, int *value) {
  cc_begin();
  CC_CHECK_ARG(value, "cucore_kernel_get_attribute", "value");
  *value = 0;
  cucore_status st = enter(k, dev, "cucore_kernel_get_attribute", NULL);
  if (st != CUCORE_OK) return st;
  if ((int)attr < 0 || attr >= CUCORE_KATTR_COUNT)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "cucore_kernel_get_attribute: attribute %d does not exist (0..%d)", (int)attr,
                   CUCORE_KATTR_COUNT - 1);
  CUfunction fn = NULL;
  st = k->ckernel ? CC_DRV_REQUIRE(cuKernelGetAttribute) : function_of(k, dev, &fn);
  if (st != CUCORE_OK) return st;
  CUresult r = k->ckernel ? DRV(cuKernelGetAttribute)(value, (CUfunction_attribute)attr, k->ckernel,
                                                      dev->cudev)
                          : DRV(cuFuncGetAttribute)(value, (CUfunction_attribute)attr, fn);
  if (r == CUDA_ERROR_FUNCTION_NOT_LOADED) {
    /* Lazy loading: this attribute needs the function loaded (the driver's rule); load it. */
    if (!fn) st = function_of(k, dev, &fn);
    if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuFuncLoad);
    if (st != CUCORE_OK) return st;
    r = DRV(cuFuncLoad)(fn);
    if (r == CUDA_SUCCESS)
      r = k->ckernel
              ? DRV(cuKernelGetAttribute)(value, (CUfunction_attribute)attr, k->ckernel, dev->cudev)
              : DRV(cuFuncGetAttribute)(value, (CUfunction_attribute)attr, fn);
  }
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, k->ckernel ? "cuKernelGetAttribute" : "cuFuncGetAttribute",
                      "kernel `%s`, attribute %s, device %d", k->name,
                      cucore_kernel_attr_name(attr), dev->ordinal);
  return CUCORE_OK;
}

cucore_status cucore_kernel_set_attribute(cucore_kernel *k, cucore_device *dev,
                                          cucore_kernel_attr attr, int value) {
  cc_begin();
  cc_kernel_dev *d = NULL;
  cucore_status st = enter(k, dev, "cucore_kernel_set_attribute", &d);
  if (st != CUCORE_OK) return st;
  switch (attr) {
  case CUCORE_KATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES:
    if (value < 0 || value + d->static_smem > d->smem_optin)
      return cc_fail(CUCORE_INVALID_ARGUMENT,
                     "cucore_kernel_set_attribute: max_dynamic_shared_size_bytes %d + the "
                     "kernel's %d bytes of static shared memory exceed device %d's opt-in "
                     "maximum of %d bytes per block",
                     value, d->static_smem, dev->ordinal, d->smem_optin);
    break;
  case CUCORE_KATTR_PREFERRED_SHARED_MEMORY_CARVEOUT:
    if (value < -1 || value > 100)
      return cc_fail(CUCORE_INVALID_ARGUMENT,
                     "cucore_kernel_set_attribute: carveout %d is not a percentage (0..100) or -1",
                     value);
    break;
  case CUCORE_KATTR_REQUIRED_CLUSTER_WIDTH:
  case CUCORE_KATTR_REQUIRED_CLUSTER_HEIGHT:
  case CUCORE_KATTR_REQUIRED_CLUSTER_DEPTH:
  case CUCORE_KATTR_NON_PORTABLE_CLUSTER_SIZE_ALLOWED:
  case CUCORE_KATTR_CLUSTER_SCHEDULING_POLICY_PREFERENCE: break;
  default:
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "cucore_kernel_set_attribute: %s is read-only; the settable attributes are "
                   "max_dynamic_shared_size_bytes, preferred_shared_memory_carveout, "
                   "required_cluster_width/height/depth, non_portable_cluster_size_allowed and "
                   "cluster_scheduling_policy_preference",
                   cucore_kernel_attr_name(attr));
  }
  if (k->ckernel && (st = CC_DRV_REQUIRE(cuKernelSetAttribute)) != CUCORE_OK) return st;
  CUresult r = k->ckernel ? DRV(cuKernelSetAttribute)((CUfunction_attribute)attr, value, k->ckernel,
                                                      dev->cudev)
                          : DRV(cuFuncSetAttribute)(d->fn, (CUfunction_attribute)attr, value);
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, k->ckernel ? "cuKernelSetAttribute" : "cuFuncSetAttribute",
                      "kernel `%s`, %s = %d, device %d", k->name, cucore_kernel_attr_name(attr),
                      value, dev->ordinal);
  /* Keep the launch cache true, and forget the launch checks passed under the old value. */
  pthread_mutex_lock(&k->lock);
  if (attr == CUCORE_KATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES) d->max_dyn_smem = value;
  if (attr == CUCORE_KATTR_NON_PORTABLE_CLUSTER_SIZE_ALLOWED) d->non_portable_cluster = value;
  if (attr >= CUCORE_KATTR_REQUIRED_CLUSTER_WIDTH && attr <= CUCORE_KATTR_REQUIRED_CLUSTER_DEPTH)
    d->req_cluster[attr - CUCORE_KATTR_REQUIRED_CLUSTER_WIDTH] = value;
  /* After the facts: a launch that reads the new serial checks against the new facts. */
  atomic_store_explicit(&k->serial, next_serial(), memory_order_release);
  pthread_mutex_unlock(&k->lock);
  return CUCORE_OK;
}

cucore_status cucore_kernel_set_cache_config(cucore_kernel *k, cucore_device *dev,
                                             cucore_cache_config config) {
  cc_begin();
  cucore_status st = enter(k, dev, "cucore_kernel_set_cache_config", NULL);
  if (st != CUCORE_OK) return st;
  if ((int)config < 0 || config > CUCORE_CACHE_PREFER_EQUAL)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "cucore_kernel_set_cache_config: %d is not a cache configuration (0..3)",
                   (int)config);
  CUfunction fn = NULL;
  st = k->ckernel ? CC_DRV_REQUIRE(cuKernelSetCacheConfig) : function_of(k, dev, &fn);
  if (st != CUCORE_OK) return st;
  CUresult r = k->ckernel
                   ? DRV(cuKernelSetCacheConfig)(k->ckernel, (CUfunc_cache)config, dev->cudev)
                   : DRV(cuFuncSetCacheConfig)(fn, (CUfunc_cache)config);
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, k->ckernel ? "cuKernelSetCacheConfig" : "cuFuncSetCacheConfig",
                      "kernel `%s`, device %d", k->name, dev->ordinal);
  return CUCORE_OK;
}

cucore_status cucore_kernel_is_loaded(cucore_kernel *k, cucore_device *dev, int *loaded) {
  cc_begin();
  CC_CHECK_ARG(loaded, "cucore_kernel_is_loaded", "loaded");
  *loaded = 0;
  /* Without loading it: cuKernelGetFunction and the attribute and layout queries all load
   * the function, so the handle comes from enumerating the library's module. */
  CUfunction fn = NULL;
  cucore_status st = enter(k, dev, "cucore_kernel_is_loaded", NULL);
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuFuncIsLoaded);
  if (st == CUCORE_OK) st = unloaded_function_of(k, &fn);
  if (st != CUCORE_OK) return st;
  CUfunctionLoadingState s = CU_FUNCTION_LOADING_STATE_UNLOADED;
  CUresult r = DRV(cuFuncIsLoaded)(&s, fn);
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuFuncIsLoaded", "kernel `%s`", k->name);
  *loaded = s == CU_FUNCTION_LOADING_STATE_LOADED;
  return CUCORE_OK;
}

cucore_status cucore_kernel_load(cucore_kernel *k, cucore_device *dev) {
  cc_begin();
  CUfunction fn = NULL;
  cucore_status st = enter(k, dev, "cucore_kernel_load", NULL);
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuFuncLoad);
  if (st == CUCORE_OK) st = function_of(k, dev, &fn);
  if (st != CUCORE_OK) return st;
  CUresult r = DRV(cuFuncLoad)(fn);
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuFuncLoad", "kernel `%s`", k->name);
  return CUCORE_OK;
}

cucore_status cucore_kernel_get_native(cucore_kernel *k, cucore_device *dev, void **cukernel,
                                       void **cufunction) {
  cc_begin();
  cc_kernel_dev *d = NULL;
  cucore_status st = enter(k, dev, "cucore_kernel_get_native", &d);
  if (st != CUCORE_OK) return st;
  if (cukernel) *cukernel = k->ckernel;
  if (cufunction) *cufunction = d->fn;
  return CUCORE_OK;
}

cucore_status cucore_kernel_get_module(cucore_kernel *k, cucore_device *dev, void **cumodule) {
  cc_begin();
  CC_CHECK_ARG(cumodule, "cucore_kernel_get_module", "cumodule");
  *cumodule = NULL;
  cc_kernel_dev *d = NULL;
  cucore_status st = enter(k, dev, "cucore_kernel_get_module", &d);
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuFuncGetModule);
  if (st != CUCORE_OK) return st;
  CUmodule m = NULL;
  CUresult r = DRV(cuFuncGetModule)(&m, d->fn);
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuFuncGetModule", "kernel `%s`", k->name);
  *cumodule = m;
  return CUCORE_OK;
}

cucore_status cucore_kernel_get_function_name(cucore_kernel *k, cucore_device *dev,
                                              const char **name) {
  cc_begin();
  CC_CHECK_ARG(name, "cucore_kernel_get_function_name", "name");
  *name = NULL;
  cc_kernel_dev *d = NULL;
  cucore_status st = enter(k, dev, "cucore_kernel_get_function_name", &d);
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuFuncGetName);
  if (st != CUCORE_OK) return st;
  CUresult r = DRV(cuFuncGetName)(name, d->fn);
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuFuncGetName", "kernel `%s`", k->name);
  return CUCORE_OK;
}

cucore_status cc_kernel_fit_dynamic_smem(cucore_kernel *k, cc_kernel_dev *d, unsigned smem) {
  if (CC_LIKELY((long long)smem <= (long long)d->max_dyn_smem)) return CUCORE_OK;
  long long room = (long long)d->smem_optin - d->static_smem;
  if ((long long)smem > room)
    return cc_fail_shared(k->asked, smem, d->static_smem, d->smem_optin, d->ordinal, d->arch);
  /* A wrapped CUfunction has no CUkernel: its own attribute is raised. */
  if (k->ckernel) {
    cucore_status st = CC_DRV_REQUIRE(cuKernelSetAttribute);
    if (st != CUCORE_OK) return st;
  }
  const CUfunction_attribute max_dyn = CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES;
  int relaxed = cc_capture_relax(); /* not work of a capture under way */
  CUresult r = k->ckernel ? DRV(cuKernelSetAttribute)(max_dyn, (int)smem, k->ckernel, d->cudev)
                          : DRV(cuFuncSetAttribute)(d->fn, max_dyn, (int)smem);
  cc_capture_unrelax(relaxed);
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, k->ckernel ? "cuKernelSetAttribute" : "cuFuncSetAttribute",
                      "raising kernel `%s`'s max_dynamic_shared_size_bytes to %u", k->asked, smem);
  pthread_mutex_lock(&k->lock);
  if ((int)smem > d->max_dyn_smem) d->max_dyn_smem = (int)smem;
  pthread_mutex_unlock(&k->lock);
  return CUCORE_OK;
}

cucore_status cucore_kernel_declare_signature(cucore_kernel *k, const char *signature) {
  cc_begin();
  const char *fn = "cucore_kernel_declare_signature";
  CC_CHECK_HANDLE(k, KERNEL, fn, "kernel");
  CC_CHECK_ARG(signature, fn, "signature");
  static const struct {
    const char *name;
    cucore_param_kind kind;
    uint32_t size; /* 0: any (bytes) */
  } types[] = {{"i8", CUCORE_PARAM_INT, 1},      {"u8", CUCORE_PARAM_INT, 1},
               {"i16", CUCORE_PARAM_INT, 2},     {"u16", CUCORE_PARAM_INT, 2},
               {"i32", CUCORE_PARAM_INT, 4},     {"u32", CUCORE_PARAM_INT, 4},
               {"i64", CUCORE_PARAM_INT, 8},     {"u64", CUCORE_PARAM_INT, 8},
               {"f16", CUCORE_PARAM_FLOAT, 2},   {"bf16", CUCORE_PARAM_FLOAT, 2},
               {"f32", CUCORE_PARAM_FLOAT, 4},   {"f64", CUCORE_PARAM_FLOAT, 8},
               {"ptr", CUCORE_PARAM_POINTER, 8}, {"tex", CUCORE_PARAM_INT, 8},
               {"surf", CUCORE_PARAM_INT, 8},    {"bytes", CUCORE_PARAM_BYTES, 0}};
  cucore_param_kind kinds[256];
  int n = 0;
  const char *p = signature;
  while (*p) {
    while (*p == ' ' || *p == '\t') p++;
    const char *start = p;
    while (*p && *p != ',' && *p != ' ' && *p != '\t') p++;
    size_t len = (size_t)(p - start);
    while (*p == ' ' || *p == '\t') p++;
    if (*p == ',') p++;
    if (len == 0) {
      if (!*p && n == 0) break; /* an empty signature: no parameters */
      return cc_fail(CUCORE_PARSE_ERROR, "%s: `%s`: parameter %d is empty", fn, signature, n);
    }
    size_t t = 0;
    while (t < CC_ARRAY_LEN(types) &&
           (strlen(types[t].name) != len || strncmp(types[t].name, start, len)))
      t++;
    if (t == CC_ARRAY_LEN(types))
      return cc_fail(CUCORE_PARSE_ERROR,
                     "%s: parameter %d is `%.*s`; expected one of i8 u8 i16 u16 i32 u32 i64 u64 "
                     "f16 bf16 f32 f64 ptr tex surf bytes",
                     fn, n, (int)len, start);
    if (n < k->param_count && types[t].size && types[t].size != k->params[n].size)
      return cc_fail(CUCORE_ARG_SIZE,
                     "%s: parameter %d of `%s` is declared %s (%u bytes), but the kernel's "
                     "parameter is %u bytes at offset %u",
                     fn, n, k->asked, types[t].name, types[t].size, k->params[n].size,
                     k->params[n].offset);
    if (n == (int)CC_ARRAY_LEN(kinds))
      return cc_fail(CUCORE_ARG_COUNT, "%s: more than %d parameters declared", fn, n);
    kinds[n++] = types[t].kind;
  }
  if (n != k->param_count)
    return cc_fail(CUCORE_ARG_COUNT, "%s: `%s` declares %d parameter%s; kernel `%s` takes %d", fn,
                   signature, n, n == 1 ? "" : "s", k->asked, k->param_count);
  for (int i = 0; i < n; i++) k->params[i].kind = kinds[i];
  return CUCORE_OK;
}
