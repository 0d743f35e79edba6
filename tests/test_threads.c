/* test_threads.c -- 16 threads at once on everything cucore does without a GPU: compiling with
 * NVRTC (the same sources in several threads, and sources of their own), the compile cache
 * (in-process and on disk), objects from bytes, kernel lookups shared and private, argument
 * binding, the host occupancy model, the binary reader, cache statistics, and the per-thread error
 * message. Every result is compared with a single-threaded reference.
 * A second test runs 16 threads through the device path (device handles, streams, events,
 * memory and copies, loading, launches, driver occupancy) on the fake driver of tests/fake/,
 * which keeps the real driver out of this CPU test on every machine.
 * Built and run under ThreadSanitizer by `make tsan` (CTest label `threads`).
 * CUCORE_THREADS_ITERATIONS sets the iterations per thread (default 6). */
#include "support.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define THREADS 16
#define SOURCES 4

static const char *const sources[SOURCES] = {
    "extern \"C\" __global__ void saxpy(float a, const float *x, float *y, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = a * x[i] + y[i]; }\n",
    "struct __align__(16) V { float x, y, z, w; };\n"
    "extern \"C\" __global__ void vec(V v, double d, int *out) { out[0] = (int)(v.x + d); }\n",
    "template <typename T> __global__ void fill(T *x, T v, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] = v; }\n"
    "template __global__ void fill<float>(float *, float, int);\n"
    "extern \"C\" __global__ void first(char c, short s, long long l) {}\n",
    "extern \"C\" __global__ void __launch_bounds__(128) bounded(int *p) {\n"
    "  __shared__ int t[1024]; t[threadIdx.x] = threadIdx.x; __syncthreads();\n"
    "  p[threadIdx.x] = t[127 - threadIdx.x]; }\n"};
static const char *const first_kernel[SOURCES] = {"saxpy", "vec", "first", "bounded"};

/* Single-threaded references. */
static void *ref_code[SOURCES];
static size_t ref_size[SOURCES];
static cucore_object *shared_obj; /* sources[0], shared by every thread */
static cucore_occupancy_result ref_occ;
static cucore_arch_limits limits;
static cucore_kernel_resources res = CUCORE_KERNEL_RESOURCES_INIT;
static int iterations = 6;

typedef struct worker {
  int id;
  int failures;
  char first_failure[512];
  long operations;
} worker;

#define CHECK(w, cond, ...)                                                                      \
  do {                                                                                           \
    if (!(cond)) {                                                                               \
      if (!(w)->failures++) snprintf((w)->first_failure, sizeof(w)->first_failure, __VA_ARGS__); \
    }                                                                                            \
  } while (0)

static cucore_status compile(const char *src, const char *define, cucore_object **out) {
  cucore_options *o = NULL;
  cucore_program *p = NULL;
  cucore_status st = cucore_options_create(&o);
  if (st == CUCORE_OK) st = cucore_options_set_string(o, CUCORE_OPT_ARCH, "sm_90");
  int used = 0;
  if (st == CUCORE_OK && define) st = cucore_options_parse(o, define, NULL, &used);
  if (st == CUCORE_OK) st = cucore_program_create(CUCORE_CODE_CUDA_CPP, src, 0, "t.cu", o, &p);
  if (st == CUCORE_OK && strstr(src, "fill"))
    st = cucore_program_add_name_expression(p, "fill<float>");
  if (st == CUCORE_OK) st = cucore_program_compile(p, CUCORE_CODE_CUBIN, out);
  cucore_program_destroy(p);
  cucore_options_destroy(o);
  return st;
}

/* Binds saxpy(a, x, y, n) with values of this thread and checks the packed bytes. */
static void bind_saxpy(worker *w, cucore_kernel *k, int salt) {
  cucore_args *a = NULL;
  CHECK(w, cucore_args_create(k, &a) == CUCORE_OK, "args_create: %s", cucore_last_error());
  if (!a) return;
  float f = (float)salt + 0.5f;
  cucore_devptr x = 0x10000u + (cucore_devptr)salt * 256, y = x + 128;
  int n = salt;
  CHECK(w,
        cucore_args_push_f32(a, f) == CUCORE_OK && cucore_args_push_ptr(a, x) == CUCORE_OK &&
            cucore_args_push_ptr(a, y) == CUCORE_OK && cucore_args_push_i32(a, n) == CUCORE_OK,
        "binding saxpy: %s", cucore_last_error());
  /* A wrong argument is refused, with this thread's own message. */
  CHECK(w, cucore_args_push_i32(a, 1) != CUCORE_OK && strstr(cucore_last_error(), "saxpy"),
        "a fifth argument to saxpy was not refused by name: %s", cucore_last_error());
  void *buf = NULL;
  size_t bytes = 0;
  CHECK(w, cucore_args_get_native(a, NULL, &buf, &bytes) == CUCORE_OK, "native: %s",
        cucore_last_error());
  if (buf && bytes >= 28) {
    cucore_param_info p1, p3;
    cucore_kernel_get_param(k, 1, &p1);
    cucore_kernel_get_param(k, 3, &p3);
    float gf;
    cucore_devptr gx;
    int gn;
    memcpy(&gf, buf, 4);
    memcpy(&gx, (char *)buf + p1.offset, 8);
    memcpy(&gn, (char *)buf + p3.offset, 4);
    CHECK(w, gf == f && gx == x && gn == n, "thread %d: bound bytes differ", w->id);
  }
  cucore_args_destroy(a);
}

/* 1. The same source as other threads: bytes equal the reference (often a cache hit), and the
 * same bytes open as an object of their own. */
static void shared_source(worker *w, int s) {
  cucore_object *obj = NULL;
  cucore_status st = compile(sources[s], NULL, &obj);
  CHECK(w, st == CUCORE_OK, "compile of source %d: %s", s, cucore_last_error());
  if (!obj) return;
  const void *code = NULL;
  size_t size = 0;
  cucore_object_get_code(obj, NULL, &code, &size);
  CHECK(w, size == ref_size[s] && memcmp(code, ref_code[s], size) == 0,
        "thread %d: source %d compiled to %zu bytes that differ from the reference (%zu)", w->id, s,
        size, ref_size[s]);
  cucore_kernel *k = NULL;
  CHECK(w, cucore_object_get_kernel(obj, first_kernel[s], &k) == CUCORE_OK, "kernel %s: %s",
        first_kernel[s], cucore_last_error());
  cucore_kernel_destroy(k);
  cucore_object *copy = NULL;
  CHECK(w, cucore_object_from_memory(code, size, CUCORE_CODE_AUTO, "copy", &copy) == CUCORE_OK,
        "object_from_memory: %s", cucore_last_error());
  int count = 0;
  CHECK(w, cucore_object_get_kernel_count(copy, &count) == CUCORE_OK && count >= 1,
        "kernel count of the copy: %s", cucore_last_error());
  cucore_object_destroy(copy);
  cucore_object_destroy(obj);
}

/* 2. A source of this thread's own: a real NVRTC compile (a cache miss the first time), its
 * saxpy bound. */
static void own_source(worker *w, int it) {
  char define[64];
  snprintf(define, sizeof define, "-DTHREAD_TAG=%d", w->id * 1000 + it);
  cucore_object *obj = NULL;
  CHECK(w, compile(sources[0], define, &obj) == CUCORE_OK, "own compile: %s", cucore_last_error());
  if (!obj) return;
  cucore_kernel *k = NULL;
  if (cucore_object_get_kernel(obj, "saxpy", &k) == CUCORE_OK)
    bind_saxpy(w, k, w->id + it);
  else
    CHECK(w, 0, "saxpy of own object: %s", cucore_last_error());
  cucore_kernel_destroy(k);
  cucore_object_destroy(obj);
}

/* 3.-7. The shared object's lookups and binding, this thread's own error message, the host
 * occupancy model, the binary reader and the cache statistics, from every thread at once. */
static void shared_state(worker *w, int it, int s) {
  cucore_kernel *k = NULL;
  CHECK(w, cucore_object_get_kernel(shared_obj, "saxpy", &k) == CUCORE_OK, "shared saxpy: %s",
        cucore_last_error());
  if (k) bind_saxpy(w, k, 1000 + w->id);
  cucore_kernel_destroy(k);
  char missing[64];
  snprintf(missing, sizeof missing, "missing_%d_%d", w->id, it);
  cucore_kernel *none = NULL;
  CHECK(w, cucore_object_get_kernel(shared_obj, missing, &none) != CUCORE_OK, "%s found?", missing);
  CHECK(w, strstr(cucore_last_error(), missing) != NULL,
        "thread %d read another thread's message: %s", w->id, cucore_last_error());
  cucore_occupancy_result r;
  CHECK(w,
        cucore_occupancy_model_blocks(&limits, &res, 128, 0, 0, &r) == CUCORE_OK &&
            r.active_blocks_per_sm == ref_occ.active_blocks_per_sm && r.limit == ref_occ.limit,
        "occupancy model: %d blocks, reference %d", r.active_blocks_per_sm,
        ref_occ.active_blocks_per_sm);
  cucore_binary *bin = NULL;
  CHECK(w, cucore_binary_open(ref_code[s], ref_size[s], CUCORE_CODE_AUTO, 0, &bin) == CUCORE_OK,
        "binary_open: %s", cucore_last_error());
  if (bin) {
    const cucore_kernel_info *ki = NULL;
    CHECK(w, cucore_binary_find_kernel(bin, first_kernel[s], &ki) == CUCORE_OK, "reader: %s",
          cucore_last_error());
    cucore_binary_destroy(bin);
  }
  cucore_cache_stats cs;
  CHECK(w, cucore_cache_get_stats(&cs) == CUCORE_OK, "cache stats: %s", cucore_last_error());
}

static void *work(void *arg) {
  worker *w = arg;
  for (int it = 0; it < iterations; it++) {
    int s = (w->id + it) % SOURCES;
    shared_source(w, s);
    own_source(w, it);
    shared_state(w, it, s);
    w->operations += 12;
  }
  return NULL;
}

static void sixteen_threads_agree_with_one(void **state) {
  (void)state;
  const char *env = getenv("CUCORE_THREADS_ITERATIONS");
  if (env && atoi(env) > 0) iterations = atoi(env);
  for (int s = 0; s < SOURCES; s++) {
    cucore_object *obj = NULL;
    if (compile(sources[s], NULL, &obj) != CUCORE_OK)
      fail_msg("reference %d: %s", s, cucore_last_error());
    const void *code = NULL;
    assert_ok(cucore_object_get_code(obj, NULL, &code, &ref_size[s]));
    ref_code[s] = malloc(ref_size[s]);
    memcpy(ref_code[s], code, ref_size[s]);
    if (s == 0)
      shared_obj = obj;
    else
      cucore_object_destroy(obj);
  }
  assert_ok(cucore_arch_get_limits(90, &limits));
  res.registers = 40;
  res.static_shared_bytes = 4096;
  assert_ok(cucore_occupancy_model_blocks(&limits, &res, 128, 0, 0, &ref_occ));

  pthread_t t[THREADS];
  worker w[THREADS];
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  for (int i = 0; i < THREADS; i++) {
    memset(&w[i], 0, sizeof w[i]);
    w[i].id = i;
    assert_int_equal(pthread_create(&t[i], NULL, work, &w[i]), 0);
  }
  long ops = 0;
  int failures = 0;
  for (int i = 0; i < THREADS; i++) {
    pthread_join(t[i], NULL);
    ops += w[i].operations;
    if (w[i].failures) {
      failures += w[i].failures;
      print_message("thread %d: %d failures; first: %s\n", i, w[i].failures, w[i].first_failure);
    }
  }
  clock_gettime(CLOCK_MONOTONIC, &b);
  double secs = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
  cucore_cache_stats cs;
  assert_ok(cucore_cache_get_stats(&cs));
  print_message("threads: %d threads x %d iterations, %ld operations checked in %.2f s; "
                "%d compiles of their own; 0 expected failures, %d seen\n",
                THREADS, iterations, ops, secs, THREADS * iterations, failures);
  assert_int_equal(failures, 0);
  cucore_object_destroy(shared_obj);
  for (int s = 0; s < SOURCES; s++) free(ref_code[s]);
}

/* ---- the device path on the fake driver ---------------------------------------------------- */

static cucore_device *fake_dev;

static void *device_work(void *arg) {
  worker *w = arg;
  cucore_device *own = NULL;
  cucore_stream *s = NULL;
  cucore_event *ev = NULL;
  CHECK(w, cucore_device_open(0, &own) == CUCORE_OK, "device_open: %s", cucore_last_error());
  CHECK(w, cucore_stream_create(fake_dev, 0, 0, &s) == CUCORE_OK, "stream: %s",
        cucore_last_error());
  CHECK(w, cucore_event_create(own, 0, &ev) == CUCORE_OK, "event: %s", cucore_last_error());
  for (int it = 0; it < iterations && s && ev; it++) {
    int in[256], out[256];
    for (int i = 0; i < 256; i++) in[i] = w->id * 100000 + it * 1000 + i;
    cucore_devptr p = 0;
    CHECK(w, cucore_mem_alloc_async(s, sizeof in, &p) == CUCORE_OK, "alloc: %s",
          cucore_last_error());
    if (!p) continue;
    CHECK(w, cucore_memcpy_htod(own, p, in, sizeof in, s) == CUCORE_OK, "htod: %s",
          cucore_last_error());
    cucore_kernel *k = NULL;
    CHECK(w, cucore_object_get_kernel(shared_obj, "saxpy", &k) == CUCORE_OK, "kernel: %s",
          cucore_last_error());
    if (k) {
      cucore_args *a = NULL;
      if (cucore_args_create(k, &a) == CUCORE_OK && cucore_args_push_f32(a, 2.0f) == CUCORE_OK &&
          cucore_args_push_ptr(a, p) == CUCORE_OK && cucore_args_push_ptr(a, p) == CUCORE_OK &&
          cucore_args_push_i32(a, 256) == CUCORE_OK) {
        cucore_launch_config c = {{1, 1, 1}, {256, 1, 1}, 0, s, 0, {{0}}};
        CHECK(w, cucore_launch(k, &c, a) == CUCORE_OK, "launch: %s", cucore_last_error());
        int blocks = 0;
        CHECK(w, cucore_occupancy_max_active_blocks(k, &c, 0, &blocks) == CUCORE_OK && blocks == 8,
              "occupancy %d: %s", blocks, cucore_last_error());
      } else {
        CHECK(w, 0, "binding: %s", cucore_last_error());
      }
      cucore_args_destroy(a);
    }
    cucore_kernel_destroy(k);
    CHECK(w, cucore_memcpy_dtoh(own, out, p, sizeof out, s) == CUCORE_OK, "dtoh: %s",
          cucore_last_error());
    CHECK(w, cucore_event_record(ev, s) == CUCORE_OK && cucore_event_synchronize(ev) == CUCORE_OK,
          "event: %s", cucore_last_error());
    CHECK(w, memcmp(in, out, sizeof in) == 0, "thread %d: the bytes that came back differ", w->id);
    CHECK(w, cucore_mem_free_async(s, p) == CUCORE_OK, "free: %s", cucore_last_error());
    w->operations += 9;
  }
  cucore_event_destroy(ev);
  cucore_stream_destroy(s);
  cucore_device_close(own);
  return NULL;
}

static void sixteen_threads_on_the_fake_driver(void **state) {
  (void)state;
  assert_ok(compile(sources[0], NULL, &shared_obj));
  assert_ok(cucore_device_open(0, &fake_dev));
  pthread_t t[THREADS];
  worker w[THREADS];
  for (int i = 0; i < THREADS; i++) {
    memset(&w[i], 0, sizeof w[i]);
    w[i].id = i;
    assert_int_equal(pthread_create(&t[i], NULL, device_work, &w[i]), 0);
  }
  long ops = 0;
  int failures = 0;
  for (int i = 0; i < THREADS; i++) {
    pthread_join(t[i], NULL);
    ops += w[i].operations;
    if (w[i].failures) {
      failures += w[i].failures;
      print_message("thread %d: %d failures; first: %s\n", i, w[i].failures, w[i].first_failure);
    }
  }
  print_message("threads on the fake driver: %d threads x %d iterations, %ld operations checked, "
                "%d failures\n",
                THREADS, iterations, ops, failures);
  assert_int_equal(failures, 0);
  assert_true(ops == 9L * THREADS * iterations);
  cucore_device_close(fake_dev);
  cucore_object_destroy(shared_obj);
}

int main(void) {
  /* The fake driver (tests/fake/), never the real one: this is a CPU test on every machine. */
  setenv("CUCORE_LIBCUDA", CUCORE_FAKE_DRIVER_PATH, 1);
  /* A cache directory of this run's own, so that disk hits and stores both happen. */
  char dir[] = "/tmp/cucore-threads-XXXXXX";
  if (!mkdtemp(dir)) return 1;
  setenv("CUCORE_CACHE_DIR", dir, 1);
  const struct CMUnitTest tests[] = {cmocka_unit_test(sixteen_threads_agree_with_one),
                                     cmocka_unit_test(sixteen_threads_on_the_fake_driver)};
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
  return rc;
}
