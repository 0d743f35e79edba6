/* fake_toolkit.c -- a fault-injecting shim in front of the real NVRTC and nvJitLink. Use: build the
 * CMake target `cucore_fake_toolkit` and set CUCORE_NVRTC and CUCORE_NVJITLINK to its path, and
 * CUCORE_FAKE_REAL_NVRTC / CUCORE_FAKE_REAL_NVJITLINK to the real libraries. Every call is
 * forwarded, and counted; CUCORE_FAKE_TK_FAIL_AT=N makes the Nth counted call return an error
 * instead (NVRTC_ERROR_OUT_OF_MEMORY, or NVJITLINK_ERROR_INTERNAL) without calling the real one.
 * fake_tk_calls() and fake_tk_failed_call() (dlsym) report.
 *
 * The entry points are those of cucore's symbol lists (src/loader/toolkit_symbols.h); nvrtc.h
 * and nvJitLink.h are not included, their prototypes would clash. Every parameter of these
 * functions is a pointer or an integer, so on x86-64 the shim forwards the six integer argument
 * registers as they came: a test-only device, not portable C. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

typedef uintptr_t (*fwd_fn)(uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t);

static _Atomic long calls;
static long fail_at = -1;
static char failed_name[128];
static void *real_nvrtc, *real_jitlink;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void init(void) {
  const char *n = getenv("CUCORE_FAKE_TK_FAIL_AT");
  if (n && *n) fail_at = atol(n);
  const char *a = getenv("CUCORE_FAKE_REAL_NVRTC"), *b = getenv("CUCORE_FAKE_REAL_NVJITLINK");
  real_nvrtc = a ? dlopen(a, RTLD_NOW | RTLD_LOCAL) : NULL;
  real_jitlink = b ? dlopen(b, RTLD_NOW | RTLD_LOCAL) : NULL;
}

EXPORT long fake_tk_calls(void);
EXPORT const char *fake_tk_failed_call(void);
EXPORT long fake_tk_calls(void) { return atomic_load(&calls); }
EXPORT const char *fake_tk_failed_call(void) { return failed_name; }

/* The real function, or NULL when its library is missing. */
static fwd_fn real(const char *name) {
  pthread_once(&once, init);
  void *lib = strncmp(name, "nvrtc", 5) == 0 ? real_nvrtc : real_jitlink;
  return lib ? (fwd_fn)(uintptr_t)dlsym(lib, name) : NULL;
}

static int should_fail(const char *name) {
  pthread_once(&once, init);
  long n = atomic_fetch_add(&calls, 1) + 1;
  if (n != fail_at) return 0;
  snprintf(failed_name, sizeof failed_name, "%s", name);
  return 1;
}

/* An error string query is never counted (messages use it); everything else is. */
#define FORWARD(ret, name, failure)                                                        \
  EXPORT uintptr_t name(uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t); \
  EXPORT uintptr_t name(uintptr_t a, uintptr_t b, uintptr_t c, uintptr_t d, uintptr_t e,   \
                        uintptr_t f) {                                                     \
    static fwd_fn fn;                                                                      \
    if (!fn) fn = real(#name);                                                             \
    if (!fn) return (uintptr_t)(failure);                                                  \
    if ((failure) != 0 && should_fail(#name)) return (uintptr_t)(failure);                 \
    return fn(a, b, c, d, e, f);                                                           \
  }

#define NVRTC_FAIL 1   /* NVRTC_ERROR_OUT_OF_MEMORY */
#define JITLINK_FAIL 6 /* NVJITLINK_ERROR_INTERNAL */
#define ERRSTR_FAIL 0  /* never fails: the error texts */

FORWARD(const char *, nvrtcGetErrorString, ERRSTR_FAIL)
/* nvrtcVersion: below, with its version override. */
FORWARD(int, nvrtcGetNumSupportedArchs, NVRTC_FAIL)
FORWARD(int, nvrtcGetSupportedArchs, NVRTC_FAIL)
FORWARD(int, nvrtcCreateProgram, NVRTC_FAIL)
FORWARD(int, nvrtcDestroyProgram, NVRTC_FAIL)
FORWARD(int, nvrtcCompileProgram, NVRTC_FAIL)
FORWARD(int, nvrtcGetPTXSize, NVRTC_FAIL)
FORWARD(int, nvrtcGetPTX, NVRTC_FAIL)
FORWARD(int, nvrtcGetCUBINSize, NVRTC_FAIL)
FORWARD(int, nvrtcGetCUBIN, NVRTC_FAIL)
FORWARD(int, nvrtcGetLTOIRSize, NVRTC_FAIL)
FORWARD(int, nvrtcGetLTOIR, NVRTC_FAIL)
FORWARD(int, nvrtcGetProgramLogSize, NVRTC_FAIL)
FORWARD(int, nvrtcGetProgramLog, NVRTC_FAIL)
FORWARD(int, nvrtcAddNameExpression, NVRTC_FAIL)
FORWARD(int, nvrtcGetLoweredName, NVRTC_FAIL)
FORWARD(int, nvJitLinkVersion, JITLINK_FAIL)
FORWARD(int, nvJitLinkCreate, JITLINK_FAIL)
FORWARD(int, nvJitLinkDestroy, JITLINK_FAIL)
FORWARD(int, nvJitLinkAddData, JITLINK_FAIL)
FORWARD(int, nvJitLinkComplete, JITLINK_FAIL)
FORWARD(int, nvJitLinkGetLinkedCubinSize, JITLINK_FAIL)
FORWARD(int, nvJitLinkGetLinkedCubin, JITLINK_FAIL)
FORWARD(int, nvJitLinkGetLinkedPtxSize, JITLINK_FAIL)
FORWARD(int, nvJitLinkGetLinkedPtx, JITLINK_FAIL)
FORWARD(int, nvJitLinkGetErrorLogSize, JITLINK_FAIL)
FORWARD(int, nvJitLinkGetErrorLog, JITLINK_FAIL)
FORWARD(int, nvJitLinkGetInfoLogSize, JITLINK_FAIL)
FORWARD(int, nvJitLinkGetInfoLog, JITLINK_FAIL)

/* ---- version and PCH heap faults -------------------------------------------------------- */

/* fake_tk_set_nvrtc_version(major, minor): nvrtcVersion reports that version from then on (a
 * library loaded after the call believes it), 0, 0 the real one again. fake_tk_pch_exhaust(n):
 * the next n nvrtcGetPCHCreateStatus calls say NVRTC_ERROR_PCH_CREATE_HEAP_EXHAUSTED, and
 * nvrtcGetPCHHeapSizeRequired then asks for the real heap plus 1 MiB; fake_tk_pch_heap_sets()
 * counts nvrtcSetPCHHeapSize calls, fake_tk_pch_heap_last() is the size last set. */
static _Atomic int fake_major, fake_minor, pch_exhaust, pch_asked;
static _Atomic long heap_sets;
static _Atomic size_t heap_last;

EXPORT void fake_tk_set_nvrtc_version(int major, int minor);
EXPORT void fake_tk_pch_exhaust(int n);
EXPORT long fake_tk_pch_heap_sets(void);
EXPORT size_t fake_tk_pch_heap_last(void);
EXPORT void fake_tk_set_nvrtc_version(int major, int minor) {
  atomic_store(&fake_major, major);
  atomic_store(&fake_minor, minor);
}
EXPORT void fake_tk_pch_exhaust(int n) { atomic_store(&pch_exhaust, n); }
EXPORT long fake_tk_pch_heap_sets(void) { return atomic_load(&heap_sets); }
EXPORT size_t fake_tk_pch_heap_last(void) { return atomic_load(&heap_last); }

EXPORT int nvrtcVersion(int *major, int *minor);
EXPORT int nvrtcVersion(int *major, int *minor) {
  static fwd_fn fn;
  if (!fn) fn = real("nvrtcVersion");
  if (!fn) return NVRTC_FAIL;
  if (should_fail("nvrtcVersion")) return NVRTC_FAIL;
  int r = (int)fn((uintptr_t)major, (uintptr_t)minor, 0, 0, 0, 0);
  if (r == 0 && atomic_load(&fake_major)) {
    *major = atomic_load(&fake_major);
    *minor = atomic_load(&fake_minor);
  }
  return r;
}

#define PCH_HEAP_EXHAUSTED 14 /* NVRTC_ERROR_PCH_CREATE_HEAP_EXHAUSTED */

EXPORT int nvrtcGetPCHCreateStatus(uintptr_t prog);
EXPORT int nvrtcGetPCHCreateStatus(uintptr_t prog) {
  static fwd_fn fn;
  if (!fn) fn = real("nvrtcGetPCHCreateStatus");
  if (!fn) return NVRTC_FAIL;
  if (atomic_load(&pch_exhaust) > 0) {
    atomic_fetch_sub(&pch_exhaust, 1);
    atomic_store(&pch_asked, 1);
    return PCH_HEAP_EXHAUSTED;
  }
  return (int)fn(prog, 0, 0, 0, 0, 0);
}

EXPORT int nvrtcGetPCHHeapSizeRequired(uintptr_t prog, size_t *size);
EXPORT int nvrtcGetPCHHeapSizeRequired(uintptr_t prog, size_t *size) {
  static fwd_fn fn, heap;
  if (!fn) fn = real("nvrtcGetPCHHeapSizeRequired");
  if (!heap) heap = real("nvrtcGetPCHHeapSize");
  if (!fn || !heap) return NVRTC_FAIL;
  if (atomic_exchange(&pch_asked, 0)) {
    int r = (int)heap((uintptr_t)size, 0, 0, 0, 0, 0);
    *size += (size_t)1 << 20;
    return r;
  }
  return (int)fn(prog, (uintptr_t)size, 0, 0, 0, 0);
}

EXPORT int nvrtcSetPCHHeapSize(size_t size);
EXPORT int nvrtcSetPCHHeapSize(size_t size) {
  static fwd_fn fn;
  if (!fn) fn = real("nvrtcSetPCHHeapSize");
  if (!fn) return NVRTC_FAIL;
  atomic_fetch_add(&heap_sets, 1);
  atomic_store(&heap_last, size);
  return (int)fn((uintptr_t)size, 0, 0, 0, 0, 0);
}

FORWARD(int, nvrtcGetPCHHeapSize, NVRTC_FAIL)
