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
FORWARD(int, nvrtcVersion, NVRTC_FAIL)
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
