/* fake_driver.c -- a scripted fake of the CUDA driver, for fault injection only. Use: build the
 * CMake target `cucore_fake_driver` (libcucore_fake_driver.so) and set CUCORE_LIBCUDA to its path;
 * cucore then loads it as libcuda.so.1 through cuGetProcAddress_v2. CUCORE_FAKE_FAIL_AT=N makes the
 * Nth counted call fail with CUCORE_FAKE_FAIL_CODE (a CUresult, default 2 = out of memory);
 * fake_calls() and fake_failed_call() (dlsym) say how many calls were counted and which one failed.
 * CUCORE_FAKE_FAULT_BLOCK=N: a launch (not captured) with blockDim.x N "faults" as a real
 * kernel does: it returns success, and from then on every stream, event, memory, launch,
 * graph and context-synchronize call fails with CUDA_ERROR_ILLEGAL_ADDRESS (a sticky error)
 * until the primary context's last reference is released (which resets it). With
 * CUCORE_FAKE_FAULT_STICKY=1 as well, the fault stays for the life of the process, as the real
 * driver's does (two H200s, driver 580: a context retained again after the release fails
 * with CUDA_ERROR_ILLEGAL_ADDRESS): retains fail from then on.
 * CUCORE_FAKE_LAUNCH_US=N: every kernel launch (not captured) takes N microseconds of the
 * calling thread, so that a tune's configurations take time (two tunes sharing one store).
 * CUCORE_FAKE_EVENT_MS=X: every event interval reads X ms (default 0.001); with
 * CUCORE_FAKE_EVENT_PER_BLOCK=1 as well, X x blockDim.x / 128 of the last launch.
 * CUCORE_FAKE_DEVICES=2 adds a second device (its UUID ends in 01); CUCORE_FAKE_DEVICE1_NAME
 * gives it another name (another model). CUCORE_FAKE_DRIVER_VERSION=N: the version it reports
 * (and the device attributes it answers); CUCORE_FAKE_ATTR_IDS=1: attributes without a value
 * of their own read 1000 + their id.
 *
 * It is enough of a driver to open one H100-like device (sm_90, 132 SMs), retain its primary
 * context, make streams and events, allocate "device" memory (host memory underneath, so copies
 * and fills really move bytes), load code (kept as bytes: a kernel exists when its name is a
 * string of the code), answer kernel attributes and occupancy, "launch" (recorded, nothing
 * runs), build, instantiate and launch graphs of kernel nodes with user objects. Real behaviour
 * is tested on the GPU; what this fake answers is only plausible. Entry points it does not
 * implement are reported as missing when optional, and return CUDA_ERROR_NOT_SUPPORTED when
 * cucore requires them. A destroy, free or release that is made to fail has let its handle go
 * all the same (the caller cannot use it again), so what is left over is cucore's alone. */
#define _GNU_SOURCE
#include <cuda.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fake_graph.h"

#define EXPORT __attribute__((visibility("default")))

/* ---- fault control ------------------------------------------------------------------------ */

static _Atomic long calls;
static long fail_at = -1;
static CUresult fail_code = CUDA_ERROR_OUT_OF_MEMORY;
static char failed_name[128];
static pthread_once_t control_once = PTHREAD_ONCE_INIT;

static long fault_block = -1; /* CUCORE_FAKE_FAULT_BLOCK */
static long launch_us;        /* CUCORE_FAKE_LAUNCH_US */
static int fault_sticky;      /* CUCORE_FAKE_FAULT_STICKY */
static _Atomic int faulted;   /* 1: the primary context has a sticky error */

static void read_control(void) {
  const char *n = getenv("CUCORE_FAKE_FAIL_AT");
  const char *c = getenv("CUCORE_FAKE_FAIL_CODE");
  const char *f = getenv("CUCORE_FAKE_FAULT_BLOCK");
  if (n && *n) fail_at = atol(n);
  if (c && *c) fail_code = (CUresult)atoi(c);
  if (f && *f) fault_block = atol(f);
  const char *k = getenv("CUCORE_FAKE_FAULT_STICKY");
  fault_sticky = k && *k == '1';
  const char *u = getenv("CUCORE_FAKE_LAUNCH_US");
  if (u && *u) launch_us = atol(u);
}

/* After a fault: the calls that need a working context fail. */
static int sticky(const char *name) {
  static const char *const prefixes[] = {"cuStream", "cuEvent", "cuMem",
                                         "cuLaunch", "cuGraph", "cuCtxSynchronize"};
  if (!atomic_load(&faulted)) return 0;
  for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++)
    if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0) return 1;
  return 0;
}

/* After a launch: with the faulting block size the context is lost (the launch itself
 * succeeds); with CUCORE_FAKE_LAUNCH_US it took that long. */
static _Atomic unsigned last_block_x = 128; /* the last launch's blockDim.x */
static void after_launch(unsigned block_x) {
  pthread_once(&control_once, read_control);
  atomic_store(&last_block_x, block_x);
  if (fault_block >= 0 && (long)block_x == fault_block) atomic_store(&faulted, 1);
  if (launch_us > 0) { /* CUCORE_FAKE_LAUNCH_US: the launch takes time */
    struct timespec t = {launch_us / 1000000, (launch_us % 1000000) * 1000};
    while (nanosleep(&t, &t) != 0) {}
  }
}

EXPORT long fake_calls(void);
EXPORT const char *fake_failed_call(void);
EXPORT long fake_launches(void);
EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **fn, int version, cuuint64_t flags,
                                    CUdriverProcAddressQueryResult *found);
EXPORT long fake_calls(void) { return atomic_load(&calls); }
EXPORT const char *fake_failed_call(void) { return failed_name; }

/* Counts a call; 1 when this one is to fail. */
static int should_fail(const char *name) {
  pthread_once(&control_once, read_control);
  long n = atomic_fetch_add(&calls, 1) + 1;
  if (n != fail_at) return 0;
  /* cuda.h maps some names to versioned ones (cuMemAlloc_v2): the name cucore says is the
   * unversioned one. */
  snprintf(failed_name, sizeof failed_name, "%s", name);
  char *v = strstr(failed_name, "_v");
  if (v && v[2] >= '0' && v[2] <= '9') *v = '\0';
  return 1;
}

#define CALL(name)                                        \
  do {                                                    \
    if (should_fail(#name)) return fail_code;             \
    if (sticky(#name)) return CUDA_ERROR_ILLEGAL_ADDRESS; \
  } while (0)

/* ---- objects ------------------------------------------------------------------------------ */

typedef struct fake_ctx {
  int device;
  _Atomic int refs;
} fake_ctx;
static fake_ctx primary = {0, 0};
static __thread CUcontext current;
static __thread CUcontext stack[16];
static __thread int depth;

typedef struct fake_stream {
  unsigned flags;
  int priority;
  struct fake_graph *capturing; /* the graph a capture on it is building, or NULL */
  unsigned long long capture_id;
  int capturing_into; /* the capture is into the caller's graph: not freed with the stream */
} fake_stream;
typedef struct fake_event {
  unsigned flags;
  int recorded;
  CUcontext ctx;   /* current when it was made */
  CUstream stream; /* where it was last recorded */
} fake_event;
typedef struct fake_lib {
  unsigned char *code;
  size_t size;
} fake_lib;
typedef struct fake_kernel {
  fake_lib *lib;
  char name[256];
} fake_kernel;

struct fake_user_object {
  void *ptr;
  CUhostFn destroy;
  _Atomic int refs;
};
typedef struct fake_user_object fake_user_object;

typedef struct fake_exec {
  fake_graph *graph;
} fake_exec;

static void user_object_release(fake_user_object *o, unsigned count) {
  if (atomic_fetch_sub(&o->refs, (int)count) == (int)count) {
    if (o->destroy) o->destroy(o->ptr);
    free(o);
  }
}

/* ---- init, errors, devices, contexts ------------------------------------------------------ */

static CUresult fake_cuInit(unsigned flags) {
  (void)flags;
  CALL(cuInit);
  return CUDA_SUCCESS;
}
/* CUCORE_FAKE_DRIVER_VERSION=N: the driver says it is version N (default 13000), and answers
 * only the device attributes that version has (below). */
static int fake_version(void) {
  const char *v = getenv("CUCORE_FAKE_DRIVER_VERSION");
  return v && *v ? atoi(v) : 13000;
}
static CUresult fake_cuDriverGetVersion(int *v) {
  CALL(cuDriverGetVersion);
  *v = fake_version();
  return CUDA_SUCCESS;
}

static const struct {
  CUresult r;
  const char *name, *text;
} errors[] = {
    {CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
    {CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS",
     "an illegal memory access was encountered"},
    {CUDA_ERROR_LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
    {CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN", "unknown error"},
    {CUDA_ERROR_NOT_READY, "CUDA_ERROR_NOT_READY", "device not ready"},
    {CUDA_ERROR_ILLEGAL_STATE, "CUDA_ERROR_ILLEGAL_STATE",
     "the operation cannot be performed in "
     "the present state"},
    {CUDA_ERROR_TIMEOUT, "CUDA_ERROR_TIMEOUT", "wait operation timed out"},
};

static CUresult fake_cuGetErrorName(CUresult r, const char **s) {
  for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
    if (errors[i].r == r) return *s = errors[i].name, CUDA_SUCCESS;
  *s = NULL;
  return CUDA_ERROR_INVALID_VALUE;
}
static CUresult fake_cuGetErrorString(CUresult r, const char **s) {
  for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
    if (errors[i].r == r) return *s = errors[i].text, CUDA_SUCCESS;
  *s = NULL;
  return CUDA_ERROR_INVALID_VALUE;
}

/* One device; CUCORE_FAKE_DEVICES=2 adds a second (ordinal 1, with its own primary context),
 * for calls that take several devices. */
static int fake_device_count(void) {
  const char *v = getenv("CUCORE_FAKE_DEVICES");
  return v && v[0] == '2' && v[1] == '\0' ? 2 : 1;
}
static fake_ctx second = {1, 0}; /* device 1's primary context */

static CUresult fake_cuDeviceGetCount(int *n) {
  CALL(cuDeviceGetCount);
  *n = fake_device_count();
  return CUDA_SUCCESS;
}
static CUresult fake_cuDeviceGet(CUdevice *d, int ordinal) {
  CALL(cuDeviceGet);
  if (ordinal < 0 || ordinal >= fake_device_count()) return CUDA_ERROR_INVALID_DEVICE;
  *d = ordinal;
  return CUDA_SUCCESS;
}
/* CUCORE_FAKE_DEVICE1_NAME names device 1 otherwise (two models on one host). */
static CUresult fake_cuDeviceGetName(char *name, int len, CUdevice d) {
  CALL(cuDeviceGetName);
  const char *other = getenv("CUCORE_FAKE_DEVICE1_NAME");
  snprintf(name, (size_t)len, "%s", d == 1 && other ? other : "cucore fake H100");
  return CUDA_SUCCESS;
}
static CUresult fake_cuDeviceTotalMem(size_t *bytes, CUdevice d) {
  (void)d;
  CALL(cuDeviceTotalMem);
  *bytes = (size_t)80 << 30;
  return CUDA_SUCCESS;
}
/* Device 0's UUID is 0x5a bytes; device 1's ends in 0x01 (two boards of one model). */
static CUresult fake_cuDeviceGetUuid(CUuuid *u, CUdevice d) {
  CALL(cuDeviceGetUuid);
  memset(u, 0x5a, sizeof *u);
  if (d > 0) u->bytes[sizeof u->bytes - 1] = (char)d;
  return CUDA_SUCCESS;
}

static int attribute(CUdevice_attribute a) {
  switch (a) {
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: return 9;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: return 0;
  case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: return 132;
  case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: return 1024;
  case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X:
  case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: return 1024;
  case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: return 64;
  case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: return 2147483647;
  case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:
  case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: return 65535;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: return 49152;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: return 232448;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: return 233472;
  case CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK: return 1024;
  case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK: return 65536;
  case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR: return 65536;
  case CU_DEVICE_ATTRIBUTE_WARP_SIZE: return 32;
  case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: return 2048;
  case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR: return 32;
  case CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY: return 65536;
  case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: return 52428800;
  case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: return 1980000;
  case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: return 2619000;
  case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: return 5120;
  case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: return 1;
  case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED: return 1;
  case CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES: return 1; /* POSIX descriptors */
  case CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH: return 1;
  case CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH: return 1;
  case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS: return 1;
  case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY: return 1;
  case CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS: return 1;
  case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID: return 0x19;
  default: return 0;
  }
}

/* The ids the fake's version has, as cucore's table says the real driver's do: 1..141 before
 * 12.9, 1..143 in 12.9, 1..147 in 13.0, 148 from 13.1 on; others are
 * CUDA_ERROR_INVALID_VALUE. An attribute the fake gives no value reads 0, or 1000 + its id
 * with CUCORE_FAKE_ATTR_IDS=1 (each id told apart). */
static CUresult fake_cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d) {
  (void)d;
  CALL(cuDeviceGetAttribute);
  int version = fake_version();
  int last = version >= 13010 ? 148 : version >= 13000 ? 147 : version >= 12090 ? 143 : 141;
  if ((int)a < 1 || (int)a > last) return CUDA_ERROR_INVALID_VALUE;
  *v = attribute(a);
  const char *ids = getenv("CUCORE_FAKE_ATTR_IDS");
  if (*v == 0 && ids && *ids == '1') *v = 1000 + (int)a;
  return CUDA_SUCCESS;
}

static CUresult fake_cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d) {
  CALL(cuDevicePrimaryCtxRetain);
  if (d == 1) {
    second.refs++;
    *c = (CUcontext)&second;
    return CUDA_SUCCESS;
  }
  if (fault_sticky && atomic_load(&faulted)) return CUDA_ERROR_ILLEGAL_ADDRESS;
  primary.refs++;
  *c = (CUcontext)&primary;
  return CUDA_SUCCESS;
}
static CUresult fake_cuDevicePrimaryCtxRelease(CUdevice d) {
  CALL(cuDevicePrimaryCtxRelease);
  if (d == 1) {
    second.refs--;
    return CUDA_SUCCESS;
  }
  if (atomic_fetch_sub(&primary.refs, 1) == 1 && !fault_sticky)
    atomic_store(&faulted, 0); /* reset */
  return CUDA_SUCCESS;
}
static CUresult fake_cuDevicePrimaryCtxGetState(CUdevice d, unsigned *flags, int *active) {
  CALL(cuDevicePrimaryCtxGetState);
  *flags = 0;
  *active = (d == 1 ? second.refs : primary.refs) > 0;
  return CUDA_SUCCESS;
}
static CUresult fake_cuCtxSetCurrent(CUcontext c) {
  CALL(cuCtxSetCurrent);
  current = c;
  return CUDA_SUCCESS;
}
static CUresult fake_cuCtxGetCurrent(CUcontext *c) {
  CALL(cuCtxGetCurrent);
  *c = current;
  return CUDA_SUCCESS;
}
static CUresult fake_cuCtxPushCurrent(CUcontext c) {
  CALL(cuCtxPushCurrent);
  if (depth == 16) return CUDA_ERROR_INVALID_VALUE;
  stack[depth++] = current;
  current = c;
  return CUDA_SUCCESS;
}
static CUresult fake_cuCtxPopCurrent(CUcontext *c) {
  CALL(cuCtxPopCurrent);
  if (c) *c = current;
  current = depth ? stack[--depth] : NULL;
  return CUDA_SUCCESS;
}
static CUresult fake_cuCtxSynchronize(void) {
  CALL(cuCtxSynchronize);
  return current ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}
static CUresult fake_cuCtxGetDevice(CUdevice *d) {
  CALL(cuCtxGetDevice);
  if (!current) return CUDA_ERROR_INVALID_CONTEXT;
  *d = current == (CUcontext)&second ? 1 : 0;
  return CUDA_SUCCESS;
}
static CUresult fake_cuCtxGetStreamPriorityRange(int *least, int *greatest) {
  CALL(cuCtxGetStreamPriorityRange);
  if (least) *least = 0;
  if (greatest) *greatest = -5;
  return CUDA_SUCCESS;
}

/* ---- streams and events ------------------------------------------------------------------- */

static CUresult fake_cuStreamCreateWithPriority(CUstream *s, unsigned flags, int priority) {
  CALL(cuStreamCreateWithPriority);
  fake_stream *f = calloc(1, sizeof *f);
  if (!f) return CUDA_ERROR_OUT_OF_MEMORY;
  f->flags = flags;
  f->priority = priority;
  *s = (CUstream)f;
  return CUDA_SUCCESS;
}
static CUresult fake_cuStreamDestroy(CUstream s) {
  if (s && ((fake_stream *)s)->capturing && !((fake_stream *)s)->capturing_into) {
    fake_graph_free_nodes(((fake_stream *)s)->capturing);
    free(((fake_stream *)s)->capturing);
  }
  free(s);
  CALL(cuStreamDestroy);
  return CUDA_SUCCESS;
}
static CUresult fake_cuStreamSynchronize(CUstream s) {
  (void)s;
  CALL(cuStreamSynchronize);
  return CUDA_SUCCESS;
}
static CUresult fake_cuStreamQuery(CUstream s) {
  (void)s;
  CALL(cuStreamQuery);
  return CUDA_SUCCESS;
}
/* The last wait, for tests of cucore_stream_wait_stream (dlsym fake_last_wait): the waiting
 * stream, the stream and context of the event waited on; and how many events are alive. */
static struct {
  CUstream waiter, recorded_on;
  CUcontext event_ctx;
} last_wait;
static _Atomic long events_live;
EXPORT void fake_last_wait(CUstream *waiter, CUstream *recorded_on, CUcontext *event_ctx,
                           long *live);
EXPORT void fake_last_wait(CUstream *waiter, CUstream *recorded_on, CUcontext *event_ctx,
                           long *live) {
  *waiter = last_wait.waiter;
  *recorded_on = last_wait.recorded_on;
  *event_ctx = last_wait.event_ctx;
  *live = atomic_load(&events_live);
}
static CUresult fake_cuStreamWaitEvent(CUstream s, CUevent e, unsigned flags) {
  (void)flags;
  CALL(cuStreamWaitEvent);
  last_wait.waiter = s;
  last_wait.recorded_on = ((fake_event *)e)->stream;
  last_wait.event_ctx = ((fake_event *)e)->ctx;
  return CUDA_SUCCESS;
}
static int is_named_stream(CUstream s) {
  return s && s != CU_STREAM_LEGACY && s != CU_STREAM_PER_THREAD;
}
static CUresult fake_cuStreamGetPriority(CUstream s, int *p) {
  CALL(cuStreamGetPriority);
  *p = is_named_stream(s) ? ((fake_stream *)s)->priority : 0;
  return CUDA_SUCCESS;
}
static CUresult fake_cuStreamGetFlags(CUstream s, unsigned *f) {
  CALL(cuStreamGetFlags);
  *f = is_named_stream(s) ? ((fake_stream *)s)->flags : 0;
  return CUDA_SUCCESS;
}
static CUresult fake_cuStreamIsCapturing(CUstream s, CUstreamCaptureStatus *st) {
  CALL(cuStreamIsCapturing);
  *st = is_named_stream(s) && ((fake_stream *)s)->capturing ? CU_STREAM_CAPTURE_STATUS_ACTIVE
                                                            : CU_STREAM_CAPTURE_STATUS_NONE;
  return CUDA_SUCCESS;
}
static CUresult fake_cuStreamGetCtx(CUstream s, CUcontext *c) {
  (void)s;
  CALL(cuStreamGetCtx);
  *c = (CUcontext)&primary;
  return CUDA_SUCCESS;
}

static CUresult fake_cuEventCreate(CUevent *e, unsigned flags) {
  CALL(cuEventCreate);
  fake_event *f = calloc(1, sizeof *f);
  if (!f) return CUDA_ERROR_OUT_OF_MEMORY;
  f->flags = flags;
  f->ctx = current;
  atomic_fetch_add(&events_live, 1);
  *e = (CUevent)f;
  return CUDA_SUCCESS;
}
static CUresult fake_cuEventDestroy(CUevent e) {
  if (e) atomic_fetch_sub(&events_live, 1);
  free(e);
  CALL(cuEventDestroy);
  return CUDA_SUCCESS;
}
static CUresult fake_cuEventRecord(CUevent e, CUstream s) {
  CALL(cuEventRecord);
  ((fake_event *)e)->recorded = 1;
  ((fake_event *)e)->stream = s;
  return CUDA_SUCCESS;
}
static CUresult fake_cuEventRecordWithFlags(CUevent e, CUstream s, unsigned flags) {
  (void)s, (void)flags;
  CALL(cuEventRecordWithFlags);
  ((fake_event *)e)->recorded = 1;
  return CUDA_SUCCESS;
}
static CUresult fake_cuEventSynchronize(CUevent e) {
  (void)e;
  CALL(cuEventSynchronize);
  return CUDA_SUCCESS;
}
static CUresult fake_cuEventQuery(CUevent e) {
  (void)e;
  CALL(cuEventQuery);
  return CUDA_SUCCESS;
}
static CUresult fake_cuEventElapsedTime(float *ms, CUevent a, CUevent b) {
  CALL(cuEventElapsedTime);
  if (!((fake_event *)a)->recorded || !((fake_event *)b)->recorded)
    return CUDA_ERROR_INVALID_HANDLE;
  const char *v = getenv("CUCORE_FAKE_EVENT_MS"); /* every interval this long (default 1 us) */
  *ms = v && *v ? (float)atof(v) : 0.001f;
  if (getenv("CUCORE_FAKE_EVENT_PER_BLOCK")) /* x blockDim.x / 128 of the last launch */
    *ms *= (float)atomic_load(&last_block_x) / 128.0f;
  return CUDA_SUCCESS;
}

/* ---- memory ------------------------------------------------------------------------------- */

static CUresult fake_cuMemAlloc(CUdeviceptr *p, size_t bytes) {
  CALL(cuMemAlloc);
  void *m = calloc(1, bytes ? bytes : 1);
  if (!m) return CUDA_ERROR_OUT_OF_MEMORY;
  *p = (CUdeviceptr)(uintptr_t)m;
  return CUDA_SUCCESS;
}
static CUresult fake_cuMemFree(CUdeviceptr p) {
  free((void *)(uintptr_t)p);
  CALL(cuMemFree);
  return CUDA_SUCCESS;
}
void fake_pools_note(CUdeviceptr ptr, size_t bytes, int freed); /* fake_pools.c */
static CUresult fake_cuMemAllocAsync(CUdeviceptr *p, size_t bytes, CUstream s) {
  (void)s;
  CALL(cuMemAllocAsync);
  void *m = calloc(1, bytes ? bytes : 1);
  if (!m) return CUDA_ERROR_OUT_OF_MEMORY;
  *p = (CUdeviceptr)(uintptr_t)m;
  fake_pools_note(*p, bytes, 0);
  return CUDA_SUCCESS;
}
static CUresult fake_cuMemFreeAsync(CUdeviceptr p, CUstream s) {
  (void)s;
  fake_pools_note(p, 0, 1);
  free((void *)(uintptr_t)p);
  CALL(cuMemFreeAsync);
  return CUDA_SUCCESS;
}
static CUresult fake_cuMemAllocHost(void **p, size_t bytes) {
  CALL(cuMemAllocHost);
  *p = calloc(1, bytes ? bytes : 1);
  return *p ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
static CUresult fake_cuMemHostAlloc(void **p, size_t bytes, unsigned flags) {
  (void)flags;
  CALL(cuMemHostAlloc);
  *p = calloc(1, bytes ? bytes : 1);
  return *p ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
static CUresult fake_cuMemFreeHost(void *p) {
  free(p);
  CALL(cuMemFreeHost);
  return CUDA_SUCCESS;
}
static CUresult fake_cuMemGetInfo(size_t *free_bytes, size_t *total) {
  CALL(cuMemGetInfo);
  *free_bytes = (size_t)70 << 30;
  *total = (size_t)80 << 30;
  return CUDA_SUCCESS;
}
#define COPY(name, dst_t, src_t, ...)                                       \
  static CUresult fake_##name(dst_t dst, src_t src, size_t n __VA_ARGS__) { \
    CALL(name);                                                             \
    memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, n);       \
    return CUDA_SUCCESS;                                                    \
  }
COPY(cuMemcpyHtoD, CUdeviceptr, const void *, )
COPY(cuMemcpyDtoH, void *, CUdeviceptr, )
COPY(cuMemcpyDtoD, CUdeviceptr, CUdeviceptr, )
COPY(cuMemcpy, CUdeviceptr, CUdeviceptr, )
COPY(cuMemcpyHtoDAsync, CUdeviceptr, const void *, , __attribute__((unused)) CUstream s)
COPY(cuMemcpyDtoHAsync, void *, CUdeviceptr, , __attribute__((unused)) CUstream s)
COPY(cuMemcpyDtoDAsync, CUdeviceptr, CUdeviceptr, , __attribute__((unused)) CUstream s)
COPY(cuMemcpyAsync, CUdeviceptr, CUdeviceptr, , __attribute__((unused)) CUstream s)
#define FILL(name, type, ...)                                                  \
  static CUresult fake_##name(CUdeviceptr dst, type v, size_t n __VA_ARGS__) { \
    CALL(name);                                                                \
    type *d = (type *)(uintptr_t)dst;                                          \
    for (size_t i = 0; i < n; i++) d[i] = v;                                   \
    return CUDA_SUCCESS;                                                       \
  }
FILL(cuMemsetD8, unsigned char, )
FILL(cuMemsetD16, unsigned short, )
FILL(cuMemsetD32, unsigned int, )
FILL(cuMemsetD8Async, unsigned char, , __attribute__((unused)) CUstream s)
FILL(cuMemsetD16Async, unsigned short, , __attribute__((unused)) CUstream s)
FILL(cuMemsetD32Async, unsigned int, , __attribute__((unused)) CUstream s)
static CUresult fake_cuPointerGetAttribute(void *data, CUpointer_attribute a, CUdeviceptr p) {
  CALL(cuPointerGetAttribute);
  /* With CUCORE_FAKE_POINTER_DEVICE=N every address is memory of device N, lying in the
   * driver allocation CUCORE_FAKE_POINTER_RANGE=BASE:SIZE names (hex base) when p is in it. */
  const char *dv = getenv("CUCORE_FAKE_POINTER_DEVICE"), *rv = getenv("CUCORE_FAKE_POINTER_RANGE");
  unsigned long long base = 0, size = 0;
  int in_range = rv && sscanf(rv, "%llx:%llu", &base, &size) == 2 && p >= base && p - base < size;
  if (dv && a == CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL) {
    *(int *)data = atoi(dv);
    return CUDA_SUCCESS;
  }
  if (dv && in_range && a == CU_POINTER_ATTRIBUTE_RANGE_START_ADDR) {
    *(CUdeviceptr *)data = (CUdeviceptr)base;
    return CUDA_SUCCESS;
  }
  if (dv && in_range && a == CU_POINTER_ATTRIBUTE_RANGE_SIZE) {
    *(size_t *)data = (size_t)size;
    return CUDA_SUCCESS;
  }
  return CUDA_ERROR_INVALID_VALUE; /* "not memory the driver knows" */
}

/* ---- code ----------------------------------------------------------------------------------- */

static CUresult fake_cuModuleGetLoadingMode(CUmoduleLoadingMode *m) {
  CALL(cuModuleGetLoadingMode);
  *m = CU_MODULE_LAZY_LOADING;
  return CUDA_SUCCESS;
}

static size_t code_size(const unsigned char *code) {
  /* A cubin's size is in its ELF header; anything else (PTX) is text. */
  if (memcmp(code, "\177ELF", 4) == 0) {
    uint64_t shoff;
    uint16_t shentsize, shnum;
    memcpy(&shoff, code + 0x28, 8);
    memcpy(&shentsize, code + 0x3a, 2);
    memcpy(&shnum, code + 0x3c, 2);
    return (size_t)(shoff + (uint64_t)shentsize * shnum);
  }
  return strlen((const char *)code) + 1;
}

static CUresult fake_cuLibraryLoadData(CUlibrary *lib, const void *code, CUjit_option *jo,
                                       void **jv, unsigned nj, CUlibraryOption *lo, void **lv,
                                       unsigned nl) {
  (void)jo, (void)jv, (void)nj, (void)lo, (void)lv, (void)nl;
  CALL(cuLibraryLoadData);
  fake_lib *l = calloc(1, sizeof *l);
  if (!l) return CUDA_ERROR_OUT_OF_MEMORY;
  l->size = code_size(code);
  l->code = malloc(l->size);
  if (!l->code) {
    free(l);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  memcpy(l->code, code, l->size);
  *lib = (CUlibrary)l;
  return CUDA_SUCCESS;
}
static CUresult fake_cuLibraryUnload(CUlibrary lib) {
  fake_lib *l = (fake_lib *)lib;
  free(l->code);
  free(l);
  CALL(cuLibraryUnload);
  return CUDA_SUCCESS;
}
static int has_name(const fake_lib *l, const char *name) {
  size_t n = strlen(name);
  for (size_t i = 0; i + n < l->size; i++)
    if (memcmp(l->code + i, name, n) == 0 && l->code[i + n] == '\0' &&
        (i == 0 || l->code[i - 1] == '\0' || l->code[i - 1] == '.'))
      return 1;
  /* PTX: ".entry NAME(" */
  const char *t = (const char *)l->code;
  const char *e = strstr(t, ".entry ");
  while (e) {
    if (strncmp(e + 7, name, n) == 0 && (e[7 + n] == '(' || e[7 + n] == ' ')) return 1;
    e = strstr(e + 7, ".entry ");
  }
  return 0;
}
static CUresult fake_cuLibraryGetKernel(CUkernel *k, CUlibrary lib, const char *name) {
  CALL(cuLibraryGetKernel);
  fake_lib *l = (fake_lib *)lib;
  if (!has_name(l, name)) return CUDA_ERROR_NOT_FOUND;
  /* Kernels live as long as the process (the driver's do as long as their library); kept in
   * a list so that leak checkers see them reachable. */
  static fake_kernel *kernels[4096];
  static _Atomic int nkernels;
  int i = atomic_fetch_add(&nkernels, 1);
  if (i >= 4096) return CUDA_ERROR_OUT_OF_MEMORY;
  fake_kernel *f = calloc(1, sizeof *f);
  if (!f) return CUDA_ERROR_OUT_OF_MEMORY;
  f->lib = l;
  snprintf(f->name, sizeof f->name, "%s", name);
  kernels[i] = f;
  *k = (CUkernel)kernels[i];
  return CUDA_SUCCESS;
}
static CUresult fake_cuLibraryGetGlobal(CUdeviceptr *p, size_t *bytes, CUlibrary lib,
                                        const char *name) {
  (void)p, (void)bytes, (void)lib, (void)name;
  CALL(cuLibraryGetGlobal);
  return CUDA_ERROR_NOT_FOUND;
}
static CUresult fake_cuKernelGetFunction(CUfunction *f, CUkernel k) {
  CALL(cuKernelGetFunction);
  *f = (CUfunction)k;
  return CUDA_SUCCESS;
}
static int function_attribute(CUfunction_attribute a) {
  switch (a) {
  case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: return 1024;
  case CU_FUNC_ATTRIBUTE_NUM_REGS: return 16;
  case CU_FUNC_ATTRIBUTE_PTX_VERSION:
  case CU_FUNC_ATTRIBUTE_BINARY_VERSION: return 90;
  case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: return 48128;
  case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT: return -1;
  default: return 0;
  }
}
static CUresult fake_cuKernelGetAttribute(int *v, CUfunction_attribute a, CUkernel k, CUdevice d) {
  (void)k, (void)d;
  CALL(cuKernelGetAttribute);
  *v = function_attribute(a);
  return CUDA_SUCCESS;
}
static CUresult fake_cuFuncGetAttribute(int *v, CUfunction_attribute a, CUfunction f) {
  (void)f;
  CALL(cuFuncGetAttribute);
  *v = function_attribute(a);
  return CUDA_SUCCESS;
}
static CUresult fake_cuKernelSetAttribute(CUfunction_attribute a, int v, CUkernel k, CUdevice d) {
  (void)a, (void)v, (void)k, (void)d;
  CALL(cuKernelSetAttribute);
  return CUDA_SUCCESS;
}
static CUresult fake_cuFuncSetAttribute(CUfunction f, CUfunction_attribute a, int v) {
  (void)f, (void)a, (void)v;
  CALL(cuFuncSetAttribute);
  return CUDA_SUCCESS;
}
static CUresult fake_cuFuncSetCacheConfig(CUfunction f, CUfunc_cache c) {
  (void)f, (void)c;
  CALL(cuFuncSetCacheConfig);
  return CUDA_SUCCESS;
}
static CUresult fake_cuKernelGetName(const char **name, CUkernel k) {
  CALL(cuKernelGetName);
  *name = ((fake_kernel *)k)->name;
  return CUDA_SUCCESS;
}
static CUresult fake_cuFuncGetName(const char **name, CUfunction f) {
  CALL(cuFuncGetName);
  *name = ((fake_kernel *)f)->name;
  return CUDA_SUCCESS;
}
/* The parameters of the kernel's `.entry` in its PTX text: `.param .<type> name` (8 bytes for
 * 64-bit types, 4, 2, 1 for the others) or `.param .align A .b8 name[N]`, laid out in order. */
static CUresult fake_cuFuncGetParamInfo(CUfunction f, size_t index, size_t *offset, size_t *size) {
  CALL(cuFuncGetParamInfo);
  const fake_kernel *k = (const fake_kernel *)f;
  char entry[300];
  snprintf(entry, sizeof entry, ".entry %s(", k->name);
  const char *code = (const char *)k->lib->code;
  const char *at = memmem(code, k->lib->size, entry, strlen(entry));
  if (!at) return CUDA_ERROR_INVALID_VALUE;
  const char *end = strchr(at, ')');
  size_t off = 0;
  for (size_t i = 0; (at = strstr(at + 1, ".param")) != NULL && at < end; i++) {
    size_t sz = 4, align = 4;
    const char *t = at + 7;
    if (strncmp(t, ".align", 6) == 0) {
      align = strtoul(t + 7, NULL, 10);
      const char *br = strchr(t, '[');
      sz = br ? strtoul(br + 1, NULL, 10) : 1;
    } else if (strstr(t, "64") == t + 2) {
      sz = align = 8;
    } else if (strstr(t, "16") == t + 2) {
      sz = align = 2;
    } else if (t[2] == '8') {
      sz = align = 1;
    }
    off = (off + align - 1) / align * align;
    if (i == index) {
      *offset = off;
      *size = sz;
      return CUDA_SUCCESS;
    }
    off += sz;
  }
  return CUDA_ERROR_INVALID_VALUE;
}
static CUresult fake_cuFuncIsLoaded(CUfunctionLoadingState *s, CUfunction f) {
  (void)f;
  CALL(cuFuncIsLoaded);
  *s = CU_FUNCTION_LOADING_STATE_LOADED;
  return CUDA_SUCCESS;
}
static CUresult fake_cuFuncLoad(CUfunction f) {
  (void)f;
  CALL(cuFuncLoad);
  return CUDA_SUCCESS;
}

/* ---- launches and occupancy --------------------------------------------------------------- */

static _Atomic long launches;
EXPORT long fake_launches(void) { return atomic_load(&launches); }

/* A launch into a capture: a kernel node of the capture's graph after its last node. */
static int capture_kernel(fake_graph *g, CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                          unsigned bx, unsigned by, unsigned bz, unsigned shared, void **params,
                          void **extra) {
  CUgraphNode last = NULL;
  for (int i = g->count - 1; i >= 0 && !last; i--)
    if (g->list[i]->alive) last = (CUgraphNode)g->list[i];
  fake_gnode *n = fake_graph_node_new(g, CU_GRAPH_NODE_TYPE_KERNEL, &last, last ? 1 : 0);
  if (!n) return 0;
  CUDA_KERNEL_NODE_PARAMS p = {f, gx, gy, gz, bx, by, bz, shared, params, extra, NULL, NULL};
  n->kernel = p;
  return 1;
}
static CUresult fake_cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                                    unsigned bx, unsigned by, unsigned bz, unsigned shared,
                                    CUstream s, void **params, void **extra) {
  CALL(cuLaunchKernel);
  if (!gx || !gy || !gz || !bx || !by || !bz || bx * by * bz > 1024)
    return CUDA_ERROR_INVALID_VALUE;
  if (!params && !extra) return CUDA_ERROR_INVALID_VALUE;
  if (is_named_stream(s) && ((fake_stream *)s)->capturing) {
    if (!capture_kernel(((fake_stream *)s)->capturing, f, gx, gy, gz, bx, by, bz, shared, params,
                        extra))
      return CUDA_ERROR_OUT_OF_MEMORY;
  } else {
    atomic_fetch_add(&launches, 1);
    after_launch(bx);
  }
  return CUDA_SUCCESS;
}
static CUresult fake_cuLaunchKernelEx(const CUlaunchConfig *c, CUfunction f, void **params,
                                      void **extra) {
  CALL(cuLaunchKernelEx);
  if (!c || !c->blockDimX || c->blockDimX * c->blockDimY * c->blockDimZ > 1024)
    return CUDA_ERROR_INVALID_VALUE;
  if (!params && !extra) return CUDA_ERROR_INVALID_VALUE;
  if (is_named_stream(c->hStream) && ((fake_stream *)c->hStream)->capturing)
    return capture_kernel(((fake_stream *)c->hStream)->capturing, f, c->gridDimX, c->gridDimY,
                          c->gridDimZ, c->blockDimX, c->blockDimY, c->blockDimZ, c->sharedMemBytes,
                          params, extra)
               ? CUDA_SUCCESS
               : CUDA_ERROR_OUT_OF_MEMORY;
  atomic_fetch_add(&launches, 1);
  after_launch(c->blockDimX);
  return CUDA_SUCCESS;
}
static CUresult fake_cuLaunchHostFunc(CUstream s, CUhostFn fn, void *data) {
  (void)s;
  CALL(cuLaunchHostFunc);
  fn(data);
  return CUDA_SUCCESS;
}
static CUresult fake_cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *n, CUfunction f,
                                                                          int block, size_t dyn,
                                                                          unsigned flags) {
  (void)f, (void)flags;
  CALL(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags);
  if (block <= 0) return CUDA_ERROR_INVALID_VALUE;
  int by_threads = 2048 / block, by_shared = dyn ? (int)(233472 / (dyn + 1024)) : 32;
  *n = by_threads < by_shared ? by_threads : by_shared;
  if (*n > 32) *n = 32;
  return CUDA_SUCCESS;
}
static CUresult fake_cuOccupancyMaxPotentialBlockSizeWithFlags(int *grid, int *block, CUfunction f,
                                                               CUoccupancyB2DSize fn, size_t dyn,
                                                               int limit, unsigned flags) {
  (void)f, (void)fn, (void)dyn, (void)limit, (void)flags;
  CALL(cuOccupancyMaxPotentialBlockSizeWithFlags);
  *grid = 132 * 2;
  *block = 1024;
  return CUDA_SUCCESS;
}
static CUresult fake_cuOccupancyAvailableDynamicSMemPerBlock(size_t *bytes, CUfunction f,
                                                             int blocks, int block) {
  (void)f, (void)block;
  CALL(cuOccupancyAvailableDynamicSMemPerBlock);
  *bytes = blocks > 0 ? 233472 / (size_t)blocks - 1024 : 0;
  return CUDA_SUCCESS;
}

/* ---- graphs of kernel nodes ----------------------------------------------------------------- */

static CUresult fake_cuGraphCreate(CUgraph *g, unsigned flags) {
  (void)flags;
  CALL(cuGraphCreate);
  fake_graph *f = fake_graph_new();
  if (!f) return CUDA_ERROR_OUT_OF_MEMORY;
  *g = (CUgraph)f;
  return CUDA_SUCCESS;
}
static void graph_free(fake_graph *f) {
  for (int i = 0; i < f->nobjs; i++) user_object_release(f->objs[i], f->counts[i]);
  fake_graph_free_nodes(f);
  free(f);
}
static CUresult fake_cuGraphDestroy(CUgraph g) {
  graph_free((fake_graph *)g);
  CALL(cuGraphDestroy);
  return CUDA_SUCCESS;
}
static CUresult fake_cuUserObjectCreate(CUuserObject *o, void *ptr, CUhostFn destroy, unsigned refs,
                                        unsigned flags) {
  (void)flags;
  CALL(cuUserObjectCreate);
  fake_user_object *u = calloc(1, sizeof *u);
  if (!u) return CUDA_ERROR_OUT_OF_MEMORY;
  u->ptr = ptr;
  u->destroy = destroy;
  atomic_init(&u->refs, (int)refs);
  *o = (CUuserObject)u;
  return CUDA_SUCCESS;
}
static CUresult fake_cuUserObjectRelease(CUuserObject o, unsigned count) {
  user_object_release((fake_user_object *)o, count);
  CALL(cuUserObjectRelease);
  return CUDA_SUCCESS;
}
static CUresult fake_cuGraphRetainUserObject(CUgraph g, CUuserObject o, unsigned count,
                                             unsigned flags) {
  CALL(cuGraphRetainUserObject);
  fake_graph *f = (fake_graph *)g;
  if (f->nobjs == 64) return CUDA_ERROR_OUT_OF_MEMORY;
  fake_user_object *u = (fake_user_object *)o;
  if (!(flags & CU_GRAPH_USER_OBJECT_MOVE)) atomic_fetch_add(&u->refs, (int)count);
  f->objs[f->nobjs] = u;
  f->counts[f->nobjs++] = count;
  return CUDA_SUCCESS;
}
static CUresult fake_cuGraphInstantiateWithParams(CUgraphExec *e, CUgraph g,
                                                  CUDA_GRAPH_INSTANTIATE_PARAMS *p) {
  CALL(cuGraphInstantiateWithParams);
  fake_graph *src = (fake_graph *)g;
  fake_exec *x = calloc(1, sizeof *x);
  fake_graph *copy = calloc(1, sizeof *copy);
  if (!x || !copy) {
    free(x);
    free(copy);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  *copy = *src; /* the executable graph holds what the graph held */
  copy->is_copy = 1;
  copy->id = fake_graph_next_id();
  for (int i = 0; i < copy->nobjs; i++)
    atomic_fetch_add(&copy->objs[i]->refs, (int)copy->counts[i]);
  x->graph = copy;
  if (p) p->result_out = CUDA_GRAPH_INSTANTIATE_SUCCESS;
  *e = (CUgraphExec)x;
  return CUDA_SUCCESS;
}
static CUresult fake_cuGraphExecDestroy(CUgraphExec e) {
  fake_exec *x = (fake_exec *)e;
  graph_free(x->graph);
  free(x);
  CALL(cuGraphExecDestroy);
  return CUDA_SUCCESS;
}
static CUresult fake_cuGraphUpload(CUgraphExec e, CUstream s) {
  (void)e, (void)s;
  CALL(cuGraphUpload);
  return CUDA_SUCCESS;
}
static CUresult fake_cuGraphLaunch(CUgraphExec e, CUstream s) {
  (void)s;
  CALL(cuGraphLaunch);
  atomic_fetch_add(&launches, ((fake_exec *)e)->graph->nodes);
  return CUDA_SUCCESS;
}

/* ---- stream capture ------------------------------------------------------------------------- */

static __thread CUstreamCaptureMode thread_mode = CU_STREAM_CAPTURE_MODE_GLOBAL;
static _Atomic unsigned long long next_capture = 1;

static CUresult fake_cuStreamBeginCapture(CUstream s, CUstreamCaptureMode mode) {
  (void)mode;
  CALL(cuStreamBeginCapture);
  if (!is_named_stream(s)) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  fake_stream *f = (fake_stream *)s;
  if (f->capturing) return CUDA_ERROR_ILLEGAL_STATE;
  f->capturing = fake_graph_new();
  if (!f->capturing) return CUDA_ERROR_OUT_OF_MEMORY;
  f->capture_id = atomic_fetch_add(&next_capture, 1);
  return CUDA_SUCCESS;
}
static CUresult fake_cuStreamBeginCaptureToGraph(CUstream s, CUgraph g, const CUgraphNode *deps,
                                                 const CUgraphEdgeData *data, size_t n,
                                                 CUstreamCaptureMode mode) {
  (void)deps, (void)data, (void)n, (void)mode;
  CALL(cuStreamBeginCaptureToGraph);
  if (!is_named_stream(s) || !g) return CUDA_ERROR_INVALID_VALUE;
  fake_stream *f = (fake_stream *)s;
  if (f->capturing) return CUDA_ERROR_ILLEGAL_STATE;
  f->capturing = (fake_graph *)g;
  f->capturing_into = 1;
  f->capture_id = atomic_fetch_add(&next_capture, 1);
  return CUDA_SUCCESS;
}
static CUresult fake_cuStreamUpdateCaptureDependencies(CUstream s, CUgraphNode *deps, size_t n,
                                                       unsigned flags) {
  (void)deps, (void)n, (void)flags; /* the next captured node follows the last one anyway */
  CALL(cuStreamUpdateCaptureDependencies);
  return is_named_stream(s) && ((fake_stream *)s)->capturing ? CUDA_SUCCESS
                                                             : CUDA_ERROR_ILLEGAL_STATE;
}
static CUresult fake_cuStreamEndCapture(CUstream s, CUgraph *g) {
  CALL(cuStreamEndCapture);
  if (!is_named_stream(s) || !((fake_stream *)s)->capturing) return CUDA_ERROR_ILLEGAL_STATE;
  fake_stream *f = (fake_stream *)s;
  *g = (CUgraph)f->capturing;
  f->capturing = NULL;
  f->capturing_into = 0;
  return CUDA_SUCCESS;
}
static CUresult fake_cuStreamGetCaptureInfo(CUstream s, CUstreamCaptureStatus *st, cuuint64_t *id,
                                            CUgraph *g, const CUgraphNode **deps, size_t *ndeps) {
  CALL(cuStreamGetCaptureInfo);
  fake_stream *f = is_named_stream(s) ? (fake_stream *)s : NULL;
  if (st) *st = f && f->capturing ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
  if (id) *id = f ? f->capture_id : 0;
  if (g) *g = f ? (CUgraph)f->capturing : NULL;
  if (deps) *deps = NULL;
  if (ndeps) *ndeps = 0;
  return CUDA_SUCCESS;
}
static CUresult fake_cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode) {
  CALL(cuThreadExchangeStreamCaptureMode);
  CUstreamCaptureMode old = thread_mode;
  thread_mode = *mode;
  *mode = old;
  return CUDA_SUCCESS;
}
/* ---- cuGetProcAddress ----------------------------------------------------------------------- */

typedef struct entry {
  const char *name;
  void *fn;
} entry;
#define E(name) \
  { #name, (void *)fake_##name }
static const entry implemented[] = {
    E(cuInit),
    E(cuDriverGetVersion),
    E(cuGetErrorName),
    E(cuGetErrorString),
    E(cuDeviceGetCount),
    E(cuDeviceGet),
    E(cuDeviceGetName),
    E(cuDeviceTotalMem),
    E(cuDeviceGetUuid),
    E(cuDeviceGetAttribute),
    E(cuDevicePrimaryCtxRetain),
    E(cuDevicePrimaryCtxRelease),
    E(cuDevicePrimaryCtxGetState),
    E(cuCtxSetCurrent),
    E(cuCtxGetCurrent),
    E(cuCtxPushCurrent),
    E(cuCtxPopCurrent),
    E(cuCtxSynchronize),
    E(cuCtxGetDevice),
    E(cuCtxGetStreamPriorityRange),
    E(cuStreamCreateWithPriority),
    E(cuStreamDestroy),
    E(cuStreamSynchronize),
    E(cuStreamQuery),
    E(cuStreamWaitEvent),
    E(cuStreamGetPriority),
    E(cuStreamGetFlags),
    E(cuStreamIsCapturing),
    E(cuStreamGetCtx),
    E(cuEventCreate),
    E(cuEventDestroy),
    E(cuEventRecord),
    E(cuEventRecordWithFlags),
    E(cuEventSynchronize),
    E(cuEventQuery),
    E(cuEventElapsedTime),
    E(cuMemAlloc),
    E(cuMemFree),
    E(cuMemAllocAsync),
    E(cuMemFreeAsync),
    E(cuMemAllocHost),
    E(cuMemHostAlloc),
    E(cuMemFreeHost),
    E(cuMemGetInfo),
    E(cuMemcpyHtoD),
    E(cuMemcpyDtoH),
    E(cuMemcpyDtoD),
    E(cuMemcpy),
    E(cuMemcpyHtoDAsync),
    E(cuMemcpyDtoHAsync),
    E(cuMemcpyDtoDAsync),
    E(cuMemcpyAsync),
    E(cuMemsetD8),
    E(cuMemsetD16),
    E(cuMemsetD32),
    E(cuMemsetD8Async),
    E(cuMemsetD16Async),
    E(cuMemsetD32Async),
    E(cuPointerGetAttribute),
    E(cuModuleGetLoadingMode),
    E(cuLibraryLoadData),
    E(cuLibraryUnload),
    E(cuLibraryGetKernel),
    E(cuLibraryGetGlobal),
    E(cuKernelGetFunction),
    E(cuKernelGetAttribute),
    E(cuKernelSetAttribute),
    E(cuFuncGetAttribute),
    E(cuFuncSetAttribute),
    E(cuFuncSetCacheConfig),
    E(cuKernelGetName),
    E(cuFuncGetName),
    E(cuFuncGetParamInfo),
    E(cuFuncIsLoaded),
    E(cuFuncLoad),
    E(cuLaunchKernel),
    E(cuLaunchKernelEx),
    E(cuLaunchHostFunc),
    E(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags),
    E(cuOccupancyMaxPotentialBlockSizeWithFlags),
    E(cuOccupancyAvailableDynamicSMemPerBlock),
    E(cuGraphCreate),
    E(cuGraphDestroy),
    E(cuUserObjectCreate),
    E(cuUserObjectRelease),
    E(cuGraphRetainUserObject),
    E(cuGraphInstantiateWithParams),
    E(cuGraphExecDestroy),
    E(cuGraphUpload),
    E(cuGraphLaunch),
    E(cuStreamBeginCapture),
    E(cuStreamEndCapture),
    E(cuStreamBeginCaptureToGraph),
    E(cuStreamUpdateCaptureDependencies),
    E(cuStreamGetCaptureInfo),
    E(cuThreadExchangeStreamCaptureMode),
};

/* Entry points cucore requires that this fake does not implement: each answers
 * CUDA_ERROR_NOT_SUPPORTED (and says so when CUCORE_FAKE_VERBOSE is set). */
static CUresult unimplemented(const char *name) {
  if (getenv("CUCORE_FAKE_VERBOSE")) fprintf(stderr, "fake driver: %s is not implemented\n", name);
  return CUDA_ERROR_NOT_SUPPORTED;
}
#define CC_DRV(name, ver, req) \
  static CUresult stub_##name(void) { return unimplemented(#name); }
#include "loader/driver_symbols.h"
#undef CC_DRV
static const struct {
  const char *name;
  void *fn;
  int required;
} stubs[] = {
#define CC_DRV(name, ver, req) {#name, (void *)stub_##name, req},
#include "loader/driver_symbols.h"
#undef CC_DRV
};

/* Entry points added by later blocks at the end of this file (NULL: not one of them). */
static void *fake_vmm_ipc_symbol(const char *symbol);
static void *fake_extra_symbol(const char *symbol);

EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **fn, int version, cuuint64_t flags,
                                    CUdriverProcAddressQueryResult *found) {
  (void)version, (void)flags;
  if ((*fn = fake_vmm_ipc_symbol(symbol)) != NULL || (*fn = fake_extra_symbol(symbol)) != NULL) {
    if (found) *found = CU_GET_PROC_ADDRESS_SUCCESS;
    return CUDA_SUCCESS;
  }
  for (size_t i = 0; i < sizeof implemented / sizeof implemented[0]; i++)
    if (strcmp(implemented[i].name, symbol) == 0) {
      *fn = implemented[i].fn;
      if (found) *found = CU_GET_PROC_ADDRESS_SUCCESS;
      return CUDA_SUCCESS;
    }
  for (size_t i = 0; i < sizeof stubs / sizeof stubs[0]; i++)
    if (stubs[i].required && strcmp(stubs[i].name, symbol) == 0) {
      *fn = stubs[i].fn;
      if (found) *found = CU_GET_PROC_ADDRESS_SUCCESS;
      return CUDA_SUCCESS;
    }
  *fn = NULL;
  if (found) *found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  return CUDA_ERROR_NOT_FOUND;
}

/* ---- virtual memory, IPC events -----------------------------------------------------------
 * Virtual memory over the host's: a reservation is a PROT_NONE mapping aligned to the 2 MiB
 * granularity, physical memory a memfd, cuMemMap maps it there without access, cuMemSetAccess
 * gives access with mprotect, so copies into mapped memory really move bytes, memory outlives
 * its handle while mapped, and growing a mapping keeps the contents as the driver does. An
 * IPC event handle carries the exporter's fake_event (one process only: CPU tests). */
#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

#define FAKE_VMM_GRANULARITY ((size_t)2 << 20)

static CUresult fake_cuMemGetAllocationGranularity(size_t *g, const CUmemAllocationProp *p,
                                                   CUmemAllocationGranularity_flags option) {
  (void)option;
  CALL(cuMemGetAllocationGranularity);
  if (!g || !p || p->location.type != CU_MEM_LOCATION_TYPE_DEVICE || p->location.id != 0)
    return CUDA_ERROR_INVALID_VALUE;
  *g = FAKE_VMM_GRANULARITY;
  return CUDA_SUCCESS;
}
/* `bytes` of PROT_NONE address space at `want` (0: anywhere, aligned to the granularity, with
 * 64 MiB left free after it where the host allows, so that growing into the addresses right
 * after a reservation can be tested). */
static void *fake_reserve(size_t bytes, CUdeviceptr want) {
  int fl = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
  if (want) {
    void *p = mmap((void *)(uintptr_t)want, bytes, PROT_NONE, fl | MAP_FIXED_NOREPLACE, -1, 0);
    if (p != MAP_FAILED) return p;
  }
  size_t g = FAKE_VMM_GRANULARITY, slack = g + ((size_t)64 << 20);
  char *p = mmap(NULL, bytes + slack, PROT_NONE, fl, -1, 0);
  if (p == MAP_FAILED) return NULL;
  char *a = (char *)(((uintptr_t)p + g - 1) & ~(uintptr_t)(g - 1));
  if (a > p) munmap(p, (size_t)(a - p));
  munmap(a + bytes, (size_t)(p + bytes + slack - (a + bytes)));
  return a;
}
static CUresult fake_cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t align,
                                         CUdeviceptr addr, unsigned long long flags) {
  (void)align, (void)flags;
  CALL(cuMemAddressReserve);
  if (!size || size % FAKE_VMM_GRANULARITY) return CUDA_ERROR_INVALID_VALUE;
  void *p = fake_reserve(size, addr);
  if (!p) return CUDA_ERROR_OUT_OF_MEMORY;
  *ptr = (CUdeviceptr)(uintptr_t)p;
  return CUDA_SUCCESS;
}
static CUresult fake_cuMemAddressFree(CUdeviceptr ptr, size_t size) {
  CALL(cuMemAddressFree);
  return munmap((void *)(uintptr_t)ptr, size) == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
static CUresult fake_cuMemCreate(CUmemGenericAllocationHandle *h, size_t size,
                                 const CUmemAllocationProp *p, unsigned long long flags) {
  (void)flags;
  CALL(cuMemCreate);
  if (!p || !size || size % FAKE_VMM_GRANULARITY) return CUDA_ERROR_INVALID_VALUE;
  int fd = memfd_create("fake-vmm", MFD_CLOEXEC);
  if (fd < 0) return CUDA_ERROR_OUT_OF_MEMORY;
  if (ftruncate(fd, (off_t)size) != 0) {
    close(fd);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  *h = (CUmemGenericAllocationHandle)fd;
  return CUDA_SUCCESS;
}
static CUresult fake_cuMemRelease(CUmemGenericAllocationHandle h) {
  CALL(cuMemRelease);
  return close((int)h) == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
static CUresult fake_cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
                              CUmemGenericAllocationHandle h, unsigned long long flags) {
  (void)flags;
  CALL(cuMemMap);
  void *p = mmap((void *)(uintptr_t)ptr, size, PROT_NONE, MAP_SHARED | MAP_FIXED, (int)h,
                 (off_t)offset);
  return p == MAP_FAILED ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}
static CUresult fake_cuMemUnmap(CUdeviceptr ptr, size_t size) {
  CALL(cuMemUnmap);
  void *p = mmap((void *)(uintptr_t)ptr, size, PROT_NONE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
  return p == MAP_FAILED ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}
static CUresult fake_cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *d,
                                    size_t count) {
  CALL(cuMemSetAccess);
  if (!d || count < 1 || count > (size_t)fake_device_count()) return CUDA_ERROR_INVALID_VALUE;
  /* Each entry a device of the fake's, once; the host mapping takes device 0's access (the
   * host is device 0's memory here). */
  int prot = -2;
  for (size_t i = 0; i < count; i++) {
    if (d[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE || d[i].location.id < 0 ||
        d[i].location.id >= fake_device_count())
      return CUDA_ERROR_INVALID_DEVICE;
    for (size_t j = 0; j < i; j++)
      if (d[j].location.id == d[i].location.id) return CUDA_ERROR_INVALID_VALUE;
    int p = d[i].flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE ? PROT_READ | PROT_WRITE
            : d[i].flags == CU_MEM_ACCESS_FLAGS_PROT_READ    ? PROT_READ
            : d[i].flags == CU_MEM_ACCESS_FLAGS_PROT_NONE    ? PROT_NONE
                                                             : -1;
    if (p < 0) return CUDA_ERROR_INVALID_VALUE;
    if (d[i].location.id == 0) prot = p;
  }
  if (prot == -2) return CUDA_SUCCESS; /* device 1 only: nothing of the host's changes */
  return mprotect((void *)(uintptr_t)ptr, size, prot) == 0 ? CUDA_SUCCESS
                                                           : CUDA_ERROR_INVALID_VALUE;
}
static CUresult fake_cuMemExportToShareableHandle(void *out, CUmemGenericAllocationHandle h,
                                                  CUmemAllocationHandleType type,
                                                  unsigned long long flags) {
  (void)flags;
  CALL(cuMemExportToShareableHandle);
  if (type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) return CUDA_ERROR_INVALID_VALUE;
  int fd = dup((int)h);
  if (fd < 0) return CUDA_ERROR_INVALID_VALUE;
  *(int *)out = fd;
  return CUDA_SUCCESS;
}
static CUresult fake_cuMemImportFromShareableHandle(CUmemGenericAllocationHandle *h, void *os,
                                                    CUmemAllocationHandleType type) {
  CALL(cuMemImportFromShareableHandle);
  if (type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) return CUDA_ERROR_INVALID_VALUE;
  int fd = dup((int)(uintptr_t)os);
  if (fd < 0) return CUDA_ERROR_INVALID_VALUE;
  *h = (CUmemGenericAllocationHandle)fd;
  return CUDA_SUCCESS;
}
static CUresult fake_cuIpcGetEventHandle(CUipcEventHandle *h, CUevent e) {
  CALL(cuIpcGetEventHandle);
  fake_event *f = (fake_event *)e;
  if (!(f->flags & CU_EVENT_INTERPROCESS) || !(f->flags & CU_EVENT_DISABLE_TIMING))
    return CUDA_ERROR_INVALID_VALUE;
  memset(h, 0, sizeof *h);
  memcpy(h->reserved, &f, sizeof f);
  return CUDA_SUCCESS;
}
static CUresult fake_cuIpcOpenEventHandle(CUevent *e, CUipcEventHandle h) {
  CALL(cuIpcOpenEventHandle);
  fake_event *src = NULL, *f;
  memcpy(&src, h.reserved, sizeof src);
  if (!src || !(f = calloc(1, sizeof *f))) return CUDA_ERROR_INVALID_VALUE;
  f->flags = src->flags;
  atomic_fetch_add(&events_live, 1);
  *e = (CUevent)f;
  return CUDA_SUCCESS;
}
static const entry implemented_vmm_ipc[] = {
    E(cuMemGetAllocationGranularity),
    E(cuMemAddressReserve),
    E(cuMemAddressFree),
    E(cuMemCreate),
    E(cuMemRelease),
    E(cuMemMap),
    E(cuMemUnmap),
    E(cuMemSetAccess),
    E(cuMemExportToShareableHandle),
    E(cuMemImportFromShareableHandle),
    E(cuIpcGetEventHandle),
    E(cuIpcOpenEventHandle),
};
/* CUCORE_FAKE_HIDE="cuMemCreate,cuMemMap" hides these entry points (an older driver). */
static int fake_hidden(const char *symbol) {
  const char *h = getenv("CUCORE_FAKE_HIDE");
  size_t n = strlen(symbol);
  for (const char *p = h ? strstr(h, symbol) : NULL; p; p = strstr(p + 1, symbol))
    if ((p == h || p[-1] == ',') && (p[n] == ',' || p[n] == '\0')) return 1;
  return 0;
}
static void *fake_vmm_ipc_symbol(const char *symbol) {
  if (fake_hidden(symbol)) return NULL;
  for (size_t i = 0; i < sizeof implemented_vmm_ipc / sizeof implemented_vmm_ipc[0]; i++)
    if (strcmp(implemented_vmm_ipc[i].name, symbol) == 0) return implemented_vmm_ipc[i].fn;
  return NULL;
}
/* ---- the driver's own log -------------------------------------------------------------------
 * cuLogsRegisterCallback/UnregisterCallback keep one callback (not counted as calls, so fault
 * sequences keep their numbering). fake_log_emit(level, text, length) (dlsym) calls it on the
 * calling thread as the driver does for the call it logs. CUCORE_FAKE_NO_LOGS=1 hides both
 * entry points (a driver older than CUDA 12.9). */
static CUlogsCallback log_fn;
static void *log_user;
static CUresult fake_cuLogsRegisterCallback(CUlogsCallback fn, void *user,
                                            CUlogsCallbackHandle *out) {
  if (!fn) return CUDA_ERROR_INVALID_VALUE;
  log_fn = fn;
  log_user = user;
  if (out) *out = (CUlogsCallbackHandle)(uintptr_t)0x10;
  return CUDA_SUCCESS;
}
static CUresult fake_cuLogsUnregisterCallback(CUlogsCallbackHandle h) {
  if (h != (CUlogsCallbackHandle)(uintptr_t)0x10 || !log_fn) return CUDA_ERROR_INVALID_VALUE;
  log_fn = NULL;
  return CUDA_SUCCESS;
}
EXPORT int fake_log_emit(int level, const char *text, size_t length);
EXPORT int fake_log_emit(int level, const char *text, size_t length) {
  if (!log_fn) return 0;
  char copy[4096];
  size_t n = length < sizeof copy ? length : sizeof copy - 1;
  memcpy(copy, text, n);
  copy[n] = '\0';
  log_fn(log_user, (CUlogLevel)level, copy, n);
  return 1;
}

/* ---- green contexts ------------------------------------------------------------------------
 * The device's 132 SMs split as on an H100: a group is at least 8 SMs and a multiple of 8 (with
 * IGNORE_SM_COSCHEDULING, 2 and 2). A green context's CUcontext is its own fake_ctx; its
 * streams are fake streams. Not counted as calls. CUCORE_FAKE_NO_GREEN=1 hides these entry
 * points (a driver older than CUDA 12.4). fake_green_live() (dlsym) counts green contexts not
 * yet destroyed. */
typedef struct fake_green {
  fake_ctx ctx;
  unsigned sms;
} fake_green;
static _Atomic int green_live;
EXPORT int fake_green_live(void);
EXPORT int fake_green_live(void) { return atomic_load(&green_live); }
static void sm_resource(CUdevResource *r, unsigned sms) {
  memset(r, 0, sizeof *r);
  r->type = CU_DEV_RESOURCE_TYPE_SM;
  r->sm.smCount = sms;
  r->sm.minSmPartitionSize = 8;
  r->sm.smCoscheduledAlignment = 8;
}
static CUresult fake_cuDeviceGetDevResource(CUdevice d, CUdevResource *r, CUdevResourceType t) {
  if (d != 0 || t != CU_DEV_RESOURCE_TYPE_SM || !r) return CUDA_ERROR_INVALID_VALUE;
  sm_resource(r, 132);
  return CUDA_SUCCESS;
}
static CUresult fake_cuDevSmResourceSplitByCount(CUdevResource *result, unsigned *nb,
                                                 const CUdevResource *in, CUdevResource *rest,
                                                 unsigned flags, unsigned min) {
  if (!nb || !in || in->type != CU_DEV_RESOURCE_TYPE_SM || min > in->sm.smCount)
    return CUDA_ERROR_INVALID_VALUE;
  unsigned lo = (flags & 1) ? 2 : 8, al = lo;
  unsigned per = min < lo ? lo : min;
  per = (per + al - 1) / al * al;
  unsigned fit = in->sm.smCount / per;
  if (!result) {
    *nb = fit;
    return CUDA_SUCCESS;
  }
  unsigned n = *nb < fit ? *nb : fit;
  for (unsigned i = 0; i < n; i++) sm_resource(&result[i], per);
  if (rest) sm_resource(rest, in->sm.smCount - n * per);
  *nb = n;
  return CUDA_SUCCESS;
}
static CUresult fake_cuDevResourceGenerateDesc(CUdevResourceDesc *desc, CUdevResource *r,
                                               unsigned n) {
  if (!desc || !r || n != 1 || r->sm.smCount == 0) return CUDA_ERROR_INVALID_VALUE;
  *desc = (CUdevResourceDesc)(uintptr_t)(0x100000u + r->sm.smCount);
  return CUDA_SUCCESS;
}
static CUresult fake_cuGreenCtxCreate(CUgreenCtx *g, CUdevResourceDesc desc, CUdevice d,
                                      unsigned flags) {
  if (d != 0 || flags != CU_GREEN_CTX_DEFAULT_STREAM) return CUDA_ERROR_INVALID_VALUE;
  fake_green *f = calloc(1, sizeof *f);
  if (!f) return CUDA_ERROR_OUT_OF_MEMORY;
  f->sms = (unsigned)((uintptr_t)desc - 0x100000u);
  atomic_fetch_add(&green_live, 1);
  *g = (CUgreenCtx)f;
  return CUDA_SUCCESS;
}
static CUresult fake_cuGreenCtxDestroy(CUgreenCtx g) {
  if (!g) return CUDA_ERROR_INVALID_CONTEXT;
  if ((CUcontext)g == current) current = NULL;
  free(g);
  atomic_fetch_sub(&green_live, 1);
  return CUDA_SUCCESS;
}
static CUresult fake_cuCtxFromGreenCtx(CUcontext *c, CUgreenCtx g) {
  if (!g || !c) return CUDA_ERROR_INVALID_VALUE;
  *c = (CUcontext) & ((fake_green *)g)->ctx;
  return CUDA_SUCCESS;
}
static CUresult fake_cuGreenCtxStreamCreate(CUstream *s, CUgreenCtx g, unsigned flags, int prio) {
  if (!g || flags != CU_STREAM_NON_BLOCKING) return CUDA_ERROR_INVALID_VALUE;
  fake_stream *f = calloc(1, sizeof *f);
  if (!f) return CUDA_ERROR_OUT_OF_MEMORY;
  f->flags = flags;
  f->priority = prio;
  *s = (CUstream)f;
  return CUDA_SUCCESS;
}

/* ---- system facts: the PCI bus id NVML is matched by ------------------------------------- */
static CUresult fake_cuDeviceGetPCIBusId(char *bus, int len, CUdevice d) {
  if (d != 0 || !bus || len < 13) return CUDA_ERROR_INVALID_VALUE;
  snprintf(bus, (size_t)len, "0000:19:00.0");
  return CUDA_SUCCESS;
}

static void *fake_checkpoint_symbol(const char *symbol);
void *fake_copy_batch_symbol(const char *symbol);
void *fake_pools_symbol(const char *symbol); /* fake_pools.c */

/* An entry point of `table` named `symbol`, unless the environment variable `off` is 1 or
 * CUCORE_FAKE_HIDE names it. */
static void *extra_lookup(const entry *table, size_t n, const char *off, const char *symbol) {
  const char *v = getenv(off);
  if ((v && v[0] == '1') || fake_hidden(symbol)) return NULL;
  for (size_t i = 0; i < n; i++)
    if (strcmp(table[i].name, symbol) == 0) return table[i].fn;
  return NULL;
}

static void *fake_extra_symbol(const char *symbol) {
  static const entry logs[] = {E(cuLogsRegisterCallback), E(cuLogsUnregisterCallback)};
  static const entry green[] = {E(cuDeviceGetDevResource),    E(cuDevSmResourceSplitByCount),
                                E(cuDevResourceGenerateDesc), E(cuGreenCtxCreate),
                                E(cuGreenCtxDestroy),         E(cuCtxFromGreenCtx),
                                E(cuGreenCtxStreamCreate)};
  void *fn = extra_lookup(logs, sizeof logs / sizeof logs[0], "CUCORE_FAKE_NO_LOGS", symbol);
  if (!fn) fn = extra_lookup(green, sizeof green / sizeof green[0], "CUCORE_FAKE_NO_GREEN", symbol);
  static const entry pci[] = {E(cuDeviceGetPCIBusId)};
  if (!fn) fn = extra_lookup(pci, 1, "CUCORE_FAKE_NO_PCI", symbol);
  if (!fn) fn = fake_checkpoint_symbol(symbol);
  if (!fn) fn = fake_graph_symbol(symbol);
  if (!fn && !fake_hidden(symbol)) fn = fake_copy_batch_symbol(symbol); /* fake_copy_batch.c */
  if (!fn && !fake_hidden(symbol)) fn = fake_pools_symbol(symbol);      /* fake_pools.c */
  return fn;
}

/* ---- checkpoint --------------------------------------------------------------------------------
 * One CUDA process as the driver sees it, whatever the pid (> 0): running, locked,
 * checkpointed or failed, moved between them as the driver does (lock: running -> locked;
 * checkpoint: locked -> checkpointed; restore: checkpointed -> locked; unlock: locked ->
 * running; any other move is CUDA_ERROR_ILLEGAL_STATE and changes nothing). Scripted:
 * CUCORE_FAKE_CHECKPOINT_LOCK=N (read at each call) makes a lock return CUresult N instead
 * (909 CUDA_ERROR_TIMEOUT, 600 CUDA_ERROR_NOT_READY), the process still running;
 * fake_checkpoint_set_state(s) (dlsym) puts it in CUprocessState s. Not counted as calls.
 * CUCORE_FAKE_NO_CHECKPOINT=1 hides these entry points (a driver older than CUDA 12.8). */
static _Atomic int ckpt_state = CU_PROCESS_STATE_RUNNING;
EXPORT void fake_checkpoint_set_state(int state);
EXPORT void fake_checkpoint_set_state(int state) { atomic_store(&ckpt_state, state); }
/* Moves the process from `from` to `to`, or CUDA_ERROR_ILLEGAL_STATE. */
static CUresult ckpt_move(int pid, const void *args, int from, int to) {
  if (pid <= 0 || !args) return CUDA_ERROR_INVALID_VALUE;
  int want = from;
  return atomic_compare_exchange_strong(&ckpt_state, &want, to) ? CUDA_SUCCESS
                                                                : CUDA_ERROR_ILLEGAL_STATE;
}
static CUresult fake_cuCheckpointProcessGetState(int pid, CUprocessState *state) {
  if (pid <= 0 || !state) return CUDA_ERROR_INVALID_VALUE;
  *state = (CUprocessState)atomic_load(&ckpt_state);
  return CUDA_SUCCESS;
}
static CUresult fake_cuCheckpointProcessLock(int pid, CUcheckpointLockArgs *args) {
  const char *r = getenv("CUCORE_FAKE_CHECKPOINT_LOCK");
  if (r && *r && pid > 0 && atomic_load(&ckpt_state) == CU_PROCESS_STATE_RUNNING)
    return (CUresult)atoi(r);
  return ckpt_move(pid, args, CU_PROCESS_STATE_RUNNING, CU_PROCESS_STATE_LOCKED);
}
static CUresult fake_cuCheckpointProcessCheckpoint(int pid, CUcheckpointCheckpointArgs *args) {
  return ckpt_move(pid, args, CU_PROCESS_STATE_LOCKED, CU_PROCESS_STATE_CHECKPOINTED);
}
static CUresult fake_cuCheckpointProcessRestore(int pid, CUcheckpointRestoreArgs *args) {
  if (args && args->gpuPairsCount && !args->gpuPairs) return CUDA_ERROR_INVALID_VALUE;
  return ckpt_move(pid, args, CU_PROCESS_STATE_CHECKPOINTED, CU_PROCESS_STATE_LOCKED);
}
static CUresult fake_cuCheckpointProcessUnlock(int pid, CUcheckpointUnlockArgs *args) {
  return ckpt_move(pid, args, CU_PROCESS_STATE_LOCKED, CU_PROCESS_STATE_RUNNING);
}
static void *fake_checkpoint_symbol(const char *symbol) {
  static const entry ckpt[] = {E(cuCheckpointProcessGetState), E(cuCheckpointProcessLock),
                               E(cuCheckpointProcessCheckpoint), E(cuCheckpointProcessRestore),
                               E(cuCheckpointProcessUnlock)};
  return extra_lookup(ckpt, sizeof ckpt / sizeof ckpt[0], "CUCORE_FAKE_NO_CHECKPOINT", symbol);
}
