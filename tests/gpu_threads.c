/* gpu_threads.c -- the thread stress of test_threads.c with the real driver:
 * 16 threads at once compile code of their own, load it, bind and launch on streams of their
 * own, launch one shared kernel on one shared stream, allocate from the pool, copy, and ask the
 * driver for occupancy; every result is checked (each thread's kernel writes values only it
 * can predict). GPU_THREADS_ITERATIONS sets the iterations per thread (default 8). */
#include "gpu_support.h"

#include <pthread.h>
#include <string.h>
#include <time.h>

#define THREADS 16
#define N 4096

static const char *const shared_src =
    "extern \"C\" __global__ void affine(int *out, int a, int b, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) out[i] = a * i + b; }\n";

static cucore_device *dev;
static cucore_stream *shared_stream;
static cucore_kernel *shared_kernel;
static int ref_blocks;
static int iterations = 8;

typedef struct worker {
  int id;
  int failures;
  char first_failure[512];
  long launches;
} worker;

#define CHECK(w, cond, ...)                                                                      \
  do {                                                                                           \
    if (!(cond)) {                                                                               \
      if (!(w)->failures++) snprintf((w)->first_failure, sizeof(w)->first_failure, __VA_ARGS__); \
    }                                                                                            \
  } while (0)

/* Launches k(out, a, b, N) on s and checks out[i] == a * i + b. */
static void launch_and_check(worker *w, cucore_kernel *k, cucore_stream *s, cucore_devptr out,
                             int a, int b, const char *what) {
  cucore_args *args = NULL;
  if (cucore_args_create(k, &args) != CUCORE_OK || cucore_args_push_ptr(args, out) != CUCORE_OK ||
      cucore_args_push_i32(args, a) != CUCORE_OK || cucore_args_push_i32(args, b) != CUCORE_OK ||
      cucore_args_push_i32(args, N) != CUCORE_OK) {
    CHECK(w, 0, "%s: binding: %s", what, cucore_last_error());
    cucore_args_destroy(args);
    return;
  }
  cucore_launch_config c = {{N / 128, 1, 1}, {128, 1, 1}, 0, s, 0, {{0}}};
  CHECK(w, cucore_launch(k, &c, args) == CUCORE_OK, "%s: launch: %s", what, cucore_last_error());
  /* Arguments are copied at launch: the list may go at once. */
  cucore_args_destroy(args);
  static __thread int host[N];
  CHECK(w, cucore_memcpy_dtoh(dev, host, out, sizeof host, s) == CUCORE_OK, "%s: copy: %s", what,
        cucore_last_error());
  CHECK(w, cucore_stream_synchronize(s) == CUCORE_OK, "%s: sync: %s", what, cucore_last_error());
  int bad = 0;
  for (int i = 0; i < N; i++) bad += host[i] != a * i + b;
  CHECK(w, bad == 0, "thread %d, %s: %d of %d values wrong", w->id, what, bad, N);
  w->launches++;
}

static void *work(void *arg) {
  worker *w = arg;
  cucore_stream *s = NULL;
  CHECK(w, cucore_stream_create(dev, CUCORE_STREAM_NON_BLOCKING, 0, &s) == CUCORE_OK, "stream: %s",
        cucore_last_error());
  if (!s) return NULL;
  for (int it = 0; it < iterations; it++) {
    int a = w->id + 2, b = 1000 * it + w->id;
    /* Code of this thread's own, compiled, loaded and launched on its own stream. */
    char src[512];
    snprintf(src, sizeof src,
             "extern \"C\" __global__ void own_%d(int *out, int a, int b, int n) {\n"
             "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) out[i] = a * i + b; }\n",
             w->id);
    cucore_options *o = NULL;
    cucore_program *p = NULL;
    cucore_object *obj = NULL;
    cucore_status st = cucore_options_create(&o);
    if (st == CUCORE_OK) st = cucore_program_create(CUCORE_CODE_CUDA_CPP, src, 0, "own.cu", o, &p);
    if (st == CUCORE_OK)
      st = cucore_program_compile(p, it % 2 ? CUCORE_CODE_PTX : CUCORE_CODE_CUBIN, &obj);
    CHECK(w, st == CUCORE_OK, "compile: %s", cucore_last_error());
    cucore_program_destroy(p);
    cucore_options_destroy(o);
    cucore_devptr out = 0;
    CHECK(w, cucore_mem_alloc_async(s, N * sizeof(int), &out) == CUCORE_OK, "alloc_async: %s",
          cucore_last_error());
    if (obj && out) {
      char name[32];
      snprintf(name, sizeof name, "own_%d", w->id);
      cucore_kernel *k = NULL;
      CHECK(w, cucore_object_get_kernel(obj, name, &k) == CUCORE_OK, "kernel: %s",
            cucore_last_error());
      if (k) launch_and_check(w, k, s, out, a, b, "own kernel, own stream");
      /* A wrong argument count is refused in every thread, with its own message. */
      cucore_args *bad = NULL;
      if (k && cucore_args_create(k, &bad) == CUCORE_OK) {
        cucore_launch_config c = {{1, 1, 1}, {32, 1, 1}, 0, s, 0, {{0}}};
        cucore_args_push_ptr(bad, out);
        CHECK(w, cucore_launch(k, &c, bad) != CUCORE_OK && strstr(cucore_last_error(), name),
              "a launch with 1 of 4 arguments was not refused by name: %s", cucore_last_error());
        cucore_args_destroy(bad);
      }
      cucore_kernel_destroy(k);
      /* The shared kernel on the shared stream. */
      launch_and_check(w, shared_kernel, shared_stream, out, a + 1, b + 7,
                       "shared kernel, shared stream");
      /* Occupancy from the driver, the same in every thread. */
      int blocks = -1;
      cucore_launch_config c = {{1, 1, 1}, {128, 1, 1}, 0, s, 0, {{0}}};
      CHECK(w,
            cucore_occupancy_max_active_blocks(shared_kernel, &c, 0, &blocks) == CUCORE_OK &&
                blocks == ref_blocks,
            "occupancy %d, single-threaded %d: %s", blocks, ref_blocks, cucore_last_error());
    }
    if (out)
      CHECK(w, cucore_mem_free_async(s, out) == CUCORE_OK, "free_async: %s", cucore_last_error());
    cucore_object_destroy(obj);
  }
  CHECK(w, cucore_stream_synchronize(s) == CUCORE_OK, "final sync: %s", cucore_last_error());
  cucore_stream_destroy(s);
  return NULL;
}

static void sixteen_threads_on_one_gpu(void **state) {
  (void)state;
  const char *env = getenv("GPU_THREADS_ITERATIONS");
  if (env && atoi(env) > 0) iterations = atoi(env);
  assert_ok(cucore_device_open(0, &dev));
  assert_ok(cucore_stream_create(dev, CUCORE_STREAM_NON_BLOCKING, 0, &shared_stream));
  cucore_object *obj = gpu_compile(shared_src, CUCORE_CODE_CUBIN, NULL, NULL);
  shared_kernel = gpu_kernel(obj, "affine");
  cucore_launch_config c = {{1, 1, 1}, {128, 1, 1}, 0, shared_stream, 0, {{0}}};
  assert_ok(cucore_occupancy_max_active_blocks(shared_kernel, &c, 0, &ref_blocks));

  pthread_t t[THREADS];
  worker w[THREADS];
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  for (int i = 0; i < THREADS; i++) {
    memset(&w[i], 0, sizeof w[i]);
    w[i].id = i;
    assert_int_equal(pthread_create(&t[i], NULL, work, &w[i]), 0);
  }
  long launches = 0;
  int failures = 0;
  for (int i = 0; i < THREADS; i++) {
    pthread_join(t[i], NULL);
    launches += w[i].launches;
    if (w[i].failures) {
      failures += w[i].failures;
      print_message("thread %d: %d failures; first: %s\n", i, w[i].failures, w[i].first_failure);
    }
  }
  clock_gettime(CLOCK_MONOTONIC, &b);
  double secs = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
  print_message("threads on the GPU: %d threads x %d iterations, %ld launches of %d values "
                "checked (0 mismatches expected, %d failures) in %.2f s\n",
                THREADS, iterations, launches, N, failures, secs);
  assert_int_equal(failures, 0);
  assert_int_equal(launches, 2L * THREADS * iterations);
  cucore_kernel_destroy(shared_kernel);
  cucore_object_destroy(obj);
  cucore_stream_destroy(shared_stream);
  cucore_device_close(dev);
}

int main(void) {
  if (!cucore_test_have_gpu()) return CUCORE_TEST_SKIP;
  const struct CMUnitTest tests[] = {cmocka_unit_test(sixteen_threads_on_one_gpu)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
