/*
 * internal.h -- what cucore's source files share and users never see.
 *
 * Naming: cc_ for internal functions and types; CC_ for internal macros.
 */
#ifndef CUCORE_INTERNAL_H
#define CUCORE_INTERNAL_H

#include "cucore.h"

#include <cuda.h>
#include <cudaTypedefs.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#define CC_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

#if defined(__GNUC__)
#define CC_PRINTF(fmt_index, first_arg) __attribute__((format(printf, fmt_index, first_arg)))
#define CC_LIKELY(x) __builtin_expect(!!(x), 1)
#define CC_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define CC_PRINTF(a, b)
#define CC_LIKELY(x) (x)
#define CC_UNLIKELY(x) (x)
#endif

/* ---- errors (error.c) -------------------------------------------------------------------- */

/* Composes a status from a code, the source of a native code and the native code. */
static inline cucore_status cc_status(int code, cucore_source source, int native) {
  if (code == CUCORE_OK) return CUCORE_OK;
  return (cucore_status)((uint32_t)code | ((uint32_t)source << 8) |
                         ((uint32_t)native << 12));
}

/* Marks the start of a public call: the next failure's message is the one kept. */
void cc_begin(void);
/* Records a failure on this thread (only the first since cc_begin is kept) and returns it. */
cucore_status cc_fail(cucore_status st, const char *fmt, ...) CC_PRINTF(2, 3);
cucore_status cc_failv(cucore_status st, const char *fmt, va_list ap);
/* Replaces the kept message even when one is kept already (to restate a cached failure). */
cucore_status cc_fail_restate(cucore_status st, const char *msg);
/* A CUresult failure: maps it to a cucore code, keeps the CUresult, names `call` and the
 * driver's own name and text, then the caller's context. */
cucore_status cc_fail_cu(CUresult r, const char *call, const char *fmt, ...) CC_PRINTF(3, 4);
/* The cucore code a CUresult maps to. */
int cc_code_for_cu(CUresult r);
/* "CUDA_ERROR_X" for a CUresult, without requiring the driver to be loaded. */
const char *cc_cu_name(CUresult r);
/* Checks a pointer argument; fails with CUCORE_INVALID_ARGUMENT naming `what` in `fn`. */
#define CC_CHECK_ARG(ptr, fn, what)                                                           \
  do {                                                                                        \
    if (CC_UNLIKELY((ptr) == NULL))                                                           \
      return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: `%s` is NULL", (fn), (what));             \
  } while (0)

/* ---- the driver (driver.c) ----------------------------------------------------------------- */

typedef struct cc_driver {
#define CC_DRV(name, ver, req) PFN_##name##_v##ver fn_##name;
#include "driver_symbols.h"
#undef CC_DRV
  int version;         /* cuDriverGetVersion */
  int device_count;    /* after cuInit; 0 when CUDA_ERROR_NO_DEVICE */
} cc_driver;

extern cc_driver cc_drv;
#define DRV(name) (cc_drv.fn_##name)

/* Loads and initialises the driver once (thread-safe). On failure the cause is restated on
 * every call. */
cucore_status cc_driver_load(void);
/* Same, and also fails with CUCORE_NO_DEVICE when the driver sees no GPU. */
cucore_status cc_driver_need_device(void);
/* Fails with CUCORE_DRIVER_TOO_OLD naming `symbol` and the version it needs when an optional
 * driver entry point is missing. */
cucore_status cc_driver_require(const void *fn, const char *symbol, int version_needed);
#define CC_DRV_REQUIRE(name)                                                                  \
  cc_driver_require((const void *)DRV(name), #name, cc_driver_symbol_version(#name))
int cc_driver_symbol_version(const char *symbol);
/* Where the driver was loaded from, and why not (for cucore_versions). */
void cc_driver_describe(cucore_library_info *out);

/* ---- toolkit libraries (toolkit.c) --------------------------------------------------------- */

/* The loaded toolkit library table (filled by cc_nvrtc_load etc.). */
#include "toolkit_symbols.h"

/* ---- devices and contexts (device.c) ------------------------------------------------------- */

struct cucore_stream {
  CUstream handle;
  cucore_device *dev;
  int is_default; /* owned by the device, not destroyable */
};

struct cucore_device {
  int ordinal;
  CUdevice cudev;
  CUcontext ctx;
  struct cucore_stream default_stream;
};

struct cucore_event {
  CUevent handle;
  cucore_device *dev;
  unsigned flags;
};

/* Makes some context current when none is (device 0's primary context, retained once for the
 * life of the process), for queries the driver answers only inside a context. */
cucore_status cc_ensure_context(void);
/* Makes the device's primary context current on this thread (cheap when it already is). */
cucore_status cc_device_make_current(cucore_device *dev);
/* The same, trusting what cucore last saw on this thread instead of asking the driver (for the
 * launch path, which checks again when the driver refuses). */
cucore_status cc_device_make_current_fast(cucore_device *dev);
/* Forgets what cucore last saw current on this thread. */
void cc_device_forget_current(void);

/* ---- small utilities (util.c) --------------------------------------------------------------- */

/* malloc that records CUCORE_HOST_OUT_OF_MEMORY with `what` on failure. */
void *cc_malloc(size_t bytes, const char *what);
void *cc_calloc(size_t count, size_t size, const char *what);
/* strdup, recording a failure. */
char *cc_strdup(const char *s, const char *what);
/* Bytes as "12.5 MiB" etc. into buf. */
const char *cc_format_bytes(size_t bytes, char *buf, size_t buflen);

#endif /* CUCORE_INTERNAL_H */
