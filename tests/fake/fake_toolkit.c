/* fake_toolkit.c -- a fault-injecting shim in front of the real NVRTC and nvJitLink (and a fake
 * nvJitLink of any version: CUCORE_FAKE_TK_JITLINK_VERSION, at the end of the file). Use: build the
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

/* The fake nvJitLink (below) when CUCORE_FAKE_TK_JITLINK_VERSION is set. */
static int fake_jl_on(void);
static uintptr_t fake_jl_call(const char *name, uintptr_t a, uintptr_t b, uintptr_t c, uintptr_t d,
                              uintptr_t e, uintptr_t f);

/* An error string query is never counted (messages use it); everything else is. */
#define FORWARD(ret, name, failure)                                                        \
  EXPORT uintptr_t name(uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t); \
  EXPORT uintptr_t name(uintptr_t a, uintptr_t b, uintptr_t c, uintptr_t d, uintptr_t e,   \
                        uintptr_t f) {                                                     \
    static fwd_fn fn;                                                                      \
    if (fake_jl_on() && strncmp(#name, "nvJitLink", 9) == 0)                               \
      return fake_jl_call(#name, a, b, c, d, e, f);                                        \
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

FORWARD(int, nvJitLinkGetLinkedLTOIRSize, JITLINK_FAIL)
FORWARD(int, nvJitLinkGetLinkedLTOIR, JITLINK_FAIL)

/* ---- a fake nvJitLink: CUCORE_FAKE_TK_JITLINK_VERSION=MAJOR.MINOR ---------------------------
 * With the variable set, nvJitLinkVersion reports that version and every nvJitLink call is
 * answered here, the real library never called (so a version the machine lacks can be tested,
 * e.g. 13.3 for incremental linking). A link records its options and its inputs' names; each
 * output (cubin, PTX, LTO-IR) is one line of text that carries them, behind the magic of the
 * kind asked for, so that a test can link in stages and check what every stage got:
 *   <magic>FAKELINK out=ltoir opts=[-arch=sm_90 -lto -r] inputs=[a.ltoir b.ltoir]
 * An input that is itself such an output is carried with what it holds: `stage1{a.ltoir
 * b.ltoir}`. CUCORE_FAKE_TK_JITLINK_REFUSE=NAME makes the input called NAME refused
 * (NVJITLINK_ERROR_INVALID_INPUT). */

typedef struct fake_link {
  char *opts;   /* the options, joined by spaces */
  char *inputs; /* the inputs, joined by spaces */
} fake_link;

static int fake_jl_on(void) {
  const char *v = getenv("CUCORE_FAKE_TK_JITLINK_VERSION");
  return v && *v;
}

/* Appends `n` bytes of `s` to the growing text *t, with a space before when not empty. */
static void text_add(char **t, const char *s, size_t n) {
  size_t len = *t ? strlen(*t) : 0;
  char *grown = realloc(*t, len + n + 2);
  if (!grown) abort(); /* a test fake: no recovery */
  if (len) grown[len++] = ' ';
  memcpy(grown + len, s, n);
  grown[len + n] = 0;
  *t = grown;
}

static void fake_add_input(fake_link *l, const char *data, size_t size, const char *name) {
  const char *mark = memmem(data, size, "FAKELINK ", 9);
  const char *in = mark ? memmem(mark, size - (size_t)(mark - data), "inputs=[", 8) : NULL;
  const char *close = in ? memrchr(in, ']', size - (size_t)(in - data)) : NULL;
  if (!close) {
    text_add(&l->inputs, name, strlen(name));
    return;
  }
  size_t nn = strlen(name), inner = (size_t)(close - (in + 8));
  char *carried = malloc(nn + inner + 3);
  if (!carried) abort();
  snprintf(carried, nn + inner + 3, "%s{%.*s}", name, (int)inner, in + 8);
  text_add(&l->inputs, carried, strlen(carried));
  free(carried);
}

/* The output for `kind` ("cubin", "ptx", "ltoir"): a header, then the text and its NUL (counted
 * in *size). A cubin's header is a 64-byte ELF64 header for EM_CUDA (190), as cucore checks. */
static char *fake_output(const fake_link *l, const char *kind, size_t *size) {
  static const unsigned char elf[64] = {0x7f, 'E', 'L', 'F', 2, 1, 1, [16] = 1, [18] = 190};
  static const unsigned char ltoir[4] = {0xed, 0x43, 0x4e, 0x7f};
  const unsigned char *head = strcmp(kind, "cubin") == 0   ? elf
                              : strcmp(kind, "ltoir") == 0 ? ltoir
                                                           : (const unsigned char *)"// ";
  size_t hn = head == elf ? sizeof elf : head == ltoir ? sizeof ltoir : 3;
  size_t n = hn + strlen(l->opts ? l->opts : "") + strlen(l->inputs ? l->inputs : "") + 64;
  char *out = malloc(n);
  if (!out) abort();
  memcpy(out, head, hn);
  snprintf(out + hn, n - hn, "FAKELINK out=%s opts=[%s] inputs=[%s]\n", kind,
           l->opts ? l->opts : "", l->inputs ? l->inputs : "");
  *size = hn + strlen(out + hn) + 1;
  return out;
}

static uintptr_t fake_get(fake_link *l, const char *kind, size_t *size_out, void *buf) {
  size_t n = 0;
  char *text = fake_output(l, kind, &n);
  if (size_out) *size_out = n;
  if (buf) memcpy(buf, text, n);
  free(text);
  return 0;
}

static uintptr_t fake_jl_call(const char *name, uintptr_t a, uintptr_t b, uintptr_t c, uintptr_t d,
                              uintptr_t e, uintptr_t f) {
  (void)f;
  const char *op = name + 9; /* after "nvJitLink" */
  fake_link *l = (fake_link *)a;
  if (strcmp(op, "Version") == 0) {
    unsigned major = 0, minor = 0;
    sscanf(getenv("CUCORE_FAKE_TK_JITLINK_VERSION"), "%u.%u", &major, &minor);
    *(unsigned *)a = major;
    *(unsigned *)b = minor;
  } else if (strcmp(op, "Create") == 0) {
    fake_link *made = calloc(1, sizeof *made);
    if (!made) abort();
    const char **opts = (const char **)c;
    for (uint32_t i = 0; i < (uint32_t)b; i++) text_add(&made->opts, opts[i], strlen(opts[i]));
    *(fake_link **)a = made;
  } else if (strcmp(op, "Destroy") == 0) {
    fake_link *gone = *(fake_link **)a;
    if (gone) {
      free(gone->opts);
      free(gone->inputs);
      free(gone);
    }
    *(fake_link **)a = NULL;
  } else if (strcmp(op, "AddData") == 0) {
    const char *refuse = getenv("CUCORE_FAKE_TK_JITLINK_REFUSE");
    const char *in_name = e ? (const char *)e : "input";
    if (refuse && strcmp(refuse, in_name) == 0) return 3; /* NVJITLINK_ERROR_INVALID_INPUT */
    fake_add_input(l, (const char *)c, (size_t)d, in_name);
  } else if (strcmp(op, "GetLinkedCubinSize") == 0) {
    return fake_get(l, "cubin", (size_t *)b, NULL);
  } else if (strcmp(op, "GetLinkedCubin") == 0) {
    return fake_get(l, "cubin", NULL, (void *)b);
  } else if (strcmp(op, "GetLinkedPtxSize") == 0) {
    return fake_get(l, "ptx", (size_t *)b, NULL);
  } else if (strcmp(op, "GetLinkedPtx") == 0) {
    return fake_get(l, "ptx", NULL, (void *)b);
  } else if (strcmp(op, "GetLinkedLTOIRSize") == 0) {
    return fake_get(l, "ltoir", (size_t *)b, NULL);
  } else if (strcmp(op, "GetLinkedLTOIR") == 0) {
    return fake_get(l, "ltoir", NULL, (void *)b);
  } else if (strcmp(op, "GetErrorLogSize") == 0 || strcmp(op, "GetInfoLogSize") == 0) {
    *(size_t *)b = 1;
  } else if (strcmp(op, "GetErrorLog") == 0 || strcmp(op, "GetInfoLog") == 0) {
    *(char *)b = 0;
  }
  return 0; /* Complete, and everything above: NVJITLINK_SUCCESS */
}
