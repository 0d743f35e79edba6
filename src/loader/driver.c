/*
 * driver.c -- loads the CUDA driver at run time.
 *
 * Only `libcuda.so.1` is opened (never `libcuda.so`, which is the toolkit's link-time stub), and
 * only `cuGetProcAddress_v2` is taken with dlsym: every other entry point is asked of the driver
 * with the CUDA version whose ABI we were compiled against (driver_symbols.h), because plain
 * dlsym hands back the oldest ABI of functions that have _v2/_v3 variants.
 */
#define _GNU_SOURCE
#include "loader/loader.h"

#include "base/phase.h"

#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

cc_driver cc_drv;

typedef struct cc_symbol_info {
  const char *name;
  int version;
  int required;
} cc_symbol_info;

static const cc_symbol_info driver_symbols[] = {
#define CC_DRV(name, ver, req) {#name, ver, req},
#include "loader/driver_symbols.h"
#undef CC_DRV
};

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static cucore_status load_status;
static char load_message[1024];
static char lib_path[PATH_MAX];
static CUresult init_result;
static int64_t init_t0; /* when cuInit began (phase timings), 0 before */

static void set_load_failure(cucore_status st, const char *fmt, ...) CC_PRINTF(2, 3);
static void set_load_failure(cucore_status st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(load_message, sizeof load_message, fmt, ap);
  va_end(ap);
  load_status = st;
}

static void remember_path(void *handle, const char *fallback) {
  struct link_map *map = NULL;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && map->l_name[0])
    snprintf(lib_path, sizeof lib_path, "%s", map->l_name);
  else
    snprintf(lib_path, sizeof lib_path, "%s", fallback);
}

/* Opens libcuda.so.1 (or CUCORE_LIBCUDA) and takes cuGetProcAddress_v2 from it; NULL with
 * the failure set. */
static PFN_cuGetProcAddress_v12000 open_driver(void) {
  const char *override = getenv("CUCORE_LIBCUDA");
  const char *name = (override && override[0]) ? override : "libcuda.so.1";
  void *handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *why = dlerror();
    set_load_failure(cc_status(CUCORE_DRIVER_NOT_FOUND, CUCORE_SOURCE_NONE, 0),
                     "could not load the CUDA driver `%s`: %s. The NVIDIA driver is not "
                     "installed or not on the loader path%s",
                     name, why ? why : "unknown reason",
                     override ? " (CUCORE_LIBCUDA names it)"
                              : "; set CUCORE_LIBCUDA to the full path of libcuda.so.1");
    return NULL;
  }
  remember_path(handle, name);
  PFN_cuGetProcAddress_v12000 get_proc =
      (PFN_cuGetProcAddress_v12000)(uintptr_t)dlsym(handle, "cuGetProcAddress_v2");
  if (!get_proc)
    set_load_failure(cc_status(CUCORE_DRIVER_TOO_OLD, CUCORE_SOURCE_NONE, 0),
                     "the CUDA driver at %s has no cuGetProcAddress_v2: cucore needs a driver "
                     "for CUDA 12.0 or newer",
                     lib_path);
  return get_proc;
}

/* Resolves every symbol of driver_symbols.h into cc_drv (cuGetProcAddress may be used before
 * cuInit); 0, or -1 with the failure set (a stub library, a required symbol missing). */
static int resolve_symbols(PFN_cuGetProcAddress_v12000 get_proc) {
  void **slots[] = {
#define CC_DRV(name, ver, req) (void **)&cc_drv.fn_##name,
#include "loader/driver_symbols.h"
#undef CC_DRV
  };
  for (size_t i = 0; i < CC_ARRAY_LEN(driver_symbols); i++) {
    void *fn = NULL;
    CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    CUresult r = get_proc(driver_symbols[i].name, &fn, driver_symbols[i].version,
                          CU_GET_PROC_ADDRESS_DEFAULT, &found);
    if (r == CUDA_ERROR_STUB_LIBRARY) {
      set_load_failure(cc_status(CUCORE_DRIVER_STUB, CUCORE_SOURCE_DRIVER, (int)r),
                       "the library loaded as the CUDA driver (%s) is the toolkit's stub "
                       "libcuda (CUDA_ERROR_STUB_LIBRARY): install the NVIDIA driver, or remove "
                       "the toolkit's stubs directory from the loader path",
                       lib_path);
      return -1;
    }
    if (r != CUDA_SUCCESS || found != CU_GET_PROC_ADDRESS_SUCCESS) fn = NULL;
    *slots[i] = fn;
    if (!fn && driver_symbols[i].required) {
      set_load_failure(cc_status(CUCORE_DRIVER_TOO_OLD, CUCORE_SOURCE_DRIVER, (int)r),
                       "the CUDA driver at %s lacks %s (ABI of CUDA %d.%d), which cucore "
                       "requires; install a newer NVIDIA driver",
                       lib_path, driver_symbols[i].name, driver_symbols[i].version / 1000,
                       driver_symbols[i].version % 1000 / 10);
      return -1;
    }
  }
  return 0;
}

/* The driver's version, cuInit (timed from init_t0) and the device count; the load succeeds
 * with no device when cuInit says there is none. */
static void init_driver(void) {
  init_t0 = cc_phase_clock();
  CUresult r = DRV(cuDriverGetVersion)(&cc_drv.version);
  if (r != CUDA_SUCCESS) cc_drv.version = 0;
  init_result = DRV(cuInit)(0);
  if (init_result == CUDA_ERROR_STUB_LIBRARY) {
    set_load_failure(cc_status(CUCORE_DRIVER_STUB, CUCORE_SOURCE_DRIVER, (int)init_result),
                     "the library loaded as the CUDA driver (%s) is the toolkit's stub "
                     "libcuda (CUDA_ERROR_STUB_LIBRARY): install the NVIDIA driver, or remove "
                     "the stubs directory from the loader path",
                     lib_path);
    return;
  }
  int count = 0;
  if (init_result == CUDA_SUCCESS) {
    r = DRV(cuDeviceGetCount)(&count);
    if (r != CUDA_SUCCESS) { /* not "no device": the driver could not say */
      set_load_failure(cc_status(cc_code_for_cu(r), CUCORE_SOURCE_DRIVER, (int)r),
                       "cuDeviceGetCount failed: %s (%d) after cuInit succeeded, driver %s "
                       "version %d.%d",
                       cc_cu_name(r), (int)r, lib_path, cc_drv.version / 1000,
                       cc_drv.version % 1000 / 10);
      return;
    }
  } else if (init_result != CUDA_ERROR_NO_DEVICE) {
    set_load_failure(cc_status(cc_code_for_cu(init_result), CUCORE_SOURCE_DRIVER, (int)init_result),
                     "cuInit failed: %s (%d), driver %s version %d.%d", cc_cu_name(init_result),
                     (int)init_result, lib_path, cc_drv.version / 1000, cc_drv.version % 1000 / 10);
    return;
  }
  cc_drv.device_count = count;
  cc_driver_log_register();
  load_status = CUCORE_OK;
}

static void open_and_init(void) {
  PFN_cuGetProcAddress_v12000 get_proc = open_driver();
  if (!get_proc || resolve_symbols(get_proc) != 0) return;
  init_driver();
}

static atomic_int load_done; /* load_driver returned (cc_driver_ready_now) */

/* The library's load, then cuInit, each timed as its phase. */
static void load_driver(void) {
  int64_t t0 = cc_phase_clock();
  open_and_init();
  if (!init_t0) {
    cc_phase_done(CUCORE_PHASE_LOAD_LIBCUDA, t0);
  } else {
    cc_phase_span(CUCORE_PHASE_LOAD_LIBCUDA, t0, init_t0);
    cc_phase_done(CUCORE_PHASE_CUINIT, init_t0);
  }
  atomic_store_explicit(&load_done, 1, memory_order_release);
}

cucore_status cc_driver_load(void) {
  pthread_once(&load_once, load_driver);
  if (CC_LIKELY(load_status == CUCORE_OK)) return CUCORE_OK;
  return cc_fail(load_status, "%s", load_message);
}

cucore_status cc_driver_need_device(void) {
  cucore_status st = cc_driver_load();
  if (st != CUCORE_OK) return st;
  if (cc_drv.device_count == 0)
    return cc_fail(cc_status(CUCORE_NO_DEVICE, CUCORE_SOURCE_DRIVER,
                             init_result == CUDA_SUCCESS ? 0 : (int)init_result),
                   "the CUDA driver (%s, version %d.%d) found no CUDA-capable device%s", lib_path,
                   cc_drv.version / 1000, cc_drv.version % 1000 / 10,
                   getenv("CUDA_VISIBLE_DEVICES") ? " (CUDA_VISIBLE_DEVICES is set)" : "");
  return CUCORE_OK;
}

int cc_driver_ready(void) {
  pthread_once(&load_once, load_driver);
  return load_status == CUCORE_OK && cc_drv.device_count > 0;
}

int cc_driver_ready_now(void) {
  return atomic_load_explicit(&load_done, memory_order_acquire) && load_status == CUCORE_OK &&
         cc_drv.device_count > 0;
}

int cc_driver_symbol_version(const char *symbol) {
  for (size_t i = 0; i < CC_ARRAY_LEN(driver_symbols); i++)
    if (strcmp(driver_symbols[i].name, symbol) == 0) return driver_symbols[i].version;
  return 0;
}

cucore_status cc_driver_require(const void *fn, const char *symbol, int version_needed) {
  if (CC_LIKELY(fn != NULL)) return CUCORE_OK;
  return cc_fail(cc_status(CUCORE_DRIVER_TOO_OLD, CUCORE_SOURCE_NONE, 0),
                 "%s is not available: it needs a driver for CUDA %d.%d or newer, and the "
                 "loaded driver (%s) is version %d.%d",
                 symbol, version_needed / 1000, version_needed % 1000 / 10, lib_path,
                 cc_drv.version / 1000, cc_drv.version % 1000 / 10);
}

void cc_driver_describe(cucore_library_info *out) {
  pthread_once(&load_once, load_driver);
  memset(out, 0, sizeof *out);
  out->loaded = load_status == CUCORE_OK;
  out->version = cc_drv.version;
  out->path = lib_path[0] ? lib_path : NULL;
  out->error = load_status == CUCORE_OK ? NULL : load_message;
}
