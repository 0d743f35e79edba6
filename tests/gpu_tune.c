/* gpu_tune.c -- tune timing on the GPU (label gpu): a kernel whose best configuration is known
 * by construction (REPS dependent multiply-adds per thread: REPS=1 does a 16th of REPS=16's
 * work, and the rest is equal), ranked first by cucore_tune_rank in repeated tunes; a
 * kernel of a few microseconds is batched; the L2 flush of 2 x L2 runs outside the events.
 * cucore_tune_time_samples (`cucore run`'s engine): exactly the samples asked, past the 16
 * queued at once, with the flush, ordering the same two kernels; graph replays timed per
 * kernel at launch-free speed. */
#include "gpu_support.h"

#include <string.h>

static cucore_device *dev;
static cucore_stream *stream;

static int setup(void **state) {
  (void)state;
  if (cucore_device_open(0, &dev) != CUCORE_OK) return -1;
  return cucore_stream_create(dev, 0, 0, &stream) == CUCORE_OK ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  cucore_stream_destroy(stream);
  return cucore_device_close(dev) == CUCORE_OK ? 0 : -1;
}

static const char *src =
    "extern \"C\" __global__ void work(float *y, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i >= n) return;\n"
    "  float v = y[i];\n"
    "  for (int r = 0; r < REPS * 4096; r++) v = v * 0.999f + 0.5f;\n"
    "  y[i] = v;\n"
    "}\n"
    "extern \"C\" __global__ void tiny(float *y) { y[threadIdx.x] += 1.0f; }\n";

static const char *const reps_values[] = {"-DREPS=16", "-DREPS=4", "-DREPS=1"};

static cucore_tune_timing time_one(cucore_object *obj, const char *name, unsigned grid,
                                   cucore_devptr y, int n, size_t l2) {
  cucore_kernel *k = gpu_kernel(obj, name);
  cucore_args *a = NULL;
  assert_ok(cucore_args_create(k, &a));
  assert_ok(cucore_args_set_ptr(a, 0, y));
  if (n) assert_ok(cucore_args_set_i32(a, 1, n));
  cucore_launch_config cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.grid[0] = grid, cfg.grid[1] = cfg.grid[2] = 1;
  cfg.block[0] = 256, cfg.block[1] = cfg.block[2] = 1;
  cfg.stream = stream;
  cucore_tune_timing_options o = CUCORE_TUNE_TIMING_DEFAULTS;
  o.l2_bytes = l2;
  cucore_tune_timing t;
  assert_ok(cucore_tune_time_launch(k, &cfg, a, &o, &t));
  cucore_args_destroy(a);
  cucore_kernel_destroy(k);
  return t;
}

static void best_config_known_by_construction(void **state) {
  (void)state;
  cucore_device_props p;
  assert_ok(cucore_device_get_props(0, &p));
  int n = p.sm_count * 2048;
  cucore_devptr y;
  assert_ok(cucore_mem_alloc(dev, (size_t)n * 4, &y));
  cucore_object *obj[3];
  for (int c = 0; c < 3; c++) {
    const char *flags[] = {reps_values[c], NULL};
    obj[c] = gpu_compile(src, CUCORE_CODE_CUBIN, NULL, flags);
  }
  int wins = 0;
  for (int run = 0; run < 10; run++) {
    cucore_tune_stats s[3];
    for (int c = 0; c < 3; c++) {
      cucore_tune_timing t = time_one(obj[c], "work", (unsigned)(n / 256), y, n,
                                      (size_t)p.l2_cache_bytes);
      assert_true(t.stats.n >= 10);
      assert_true(t.stats.median > 0);
      s[c] = t.stats;
    }
    size_t order[3], ties;
    assert_ok(cucore_tune_rank(s, 3, order, &ties));
    wins += order[0] == 2;                      /* REPS=1 */
    assert_true(s[0].median > s[2].median * 4); /* 16x the work: far slower */
  }
  assert_true(wins >= 9); /* reproducible: the known best ranked first in >= 9 of 10 */
  for (int c = 0; c < 3; c++) cucore_object_destroy(obj[c]);
  cucore_mem_free(dev, y);
}

static void short_kernels_are_batched(void **state) {
  (void)state;
  cucore_devptr y;
  assert_ok(cucore_mem_alloc(dev, 256 * 4, &y));
  cucore_object *obj = gpu_compile(src, CUCORE_CODE_CUBIN, NULL,
                                   (const char *const[]){"-DREPS=1", NULL});
  cucore_tune_timing t = time_one(obj, "tiny", 1, y, 0, 0);
  if (getenv("CUCORE_UNDER_SANITIZER")) { /* every launch is slowed by the tool: no short kernel */
    print_message("under compute-sanitizer: batching not checked (a launch takes %.3f ms there)\n",
                  t.stats.median);
    cucore_object_destroy(obj);
    cucore_mem_free(dev, y);
    return;
  }
  assert_true(t.batch > 1);
  assert_int_equal(t.mode, CUCORE_TUNE_LAUNCH_GRAPH); /* auto: a graph for a few us */
  assert_true(t.launches > t.batch * 10);
  assert_true(t.stats.median < 0.020); /* a few microseconds per launch, overhead amortised */
  cucore_object_destroy(obj);
  cucore_mem_free(dev, y);
}

static double median_of(double *ms, size_t n) {
  cucore_tune_stats st;
  assert_ok(cucore_tune_stats_compute(ms, n, &st));
  assert_int_equal(st.n, n);
  return st.median;
}

static void exact_samples(void **state) {
  (void)state;
  cucore_device_props p;
  assert_ok(cucore_device_get_props(0, &p));
  int n = p.sm_count * 2048;
  cucore_devptr y;
  assert_ok(cucore_mem_alloc(dev, (size_t)n * 4, &y));
  cucore_launch_config cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.grid[0] = (unsigned)(n / 256), cfg.grid[1] = cfg.grid[2] = 1;
  cfg.block[0] = 256, cfg.block[1] = cfg.block[2] = 1;
  cfg.stream = stream;
  double ms[2][40], med[2];
  for (int c = 0; c < 2; c++) { /* REPS=16, then REPS=1 */
    cucore_object *obj = gpu_compile(src, CUCORE_CODE_CUBIN, NULL,
                                     (const char *const[]){reps_values[2 * c], NULL});
    cucore_kernel *k = gpu_kernel(obj, "work");
    cucore_args *a = NULL;
    assert_ok(cucore_args_create(k, &a));
    assert_ok(cucore_args_set_ptr(a, 0, y));
    assert_ok(cucore_args_set_i32(a, 1, n));
    cucore_tune_sample_options o;
    memset(&o, 0, sizeof o);
    o.warmup = 3, o.samples = 37, o.l2_bytes = (size_t)p.l2_cache_bytes;
    for (int i = 0; i < 40; i++) ms[c][i] = -1;
    assert_ok(cucore_tune_time_samples(k, &cfg, a, &o, ms[c]));
    for (int i = 0; i < 37; i++) assert_true(ms[c][i] > 0);
    assert_true(ms[c][37] == -1); /* nothing written past the samples asked */
    med[c] = median_of(ms[c], 37);
    cucore_args_destroy(a);
    cucore_kernel_destroy(k);
    cucore_object_destroy(obj);
  }
  assert_true(med[0] > med[1] * 4); /* 16x the work: far slower */
  /* Graph replays of 100 short launches: the time per kernel, launch overhead amortised. */
  cucore_object *obj = gpu_compile(src, CUCORE_CODE_CUBIN, NULL,
                                   (const char *const[]){"-DREPS=1", NULL});
  cucore_kernel *k = gpu_kernel(obj, "tiny");
  cucore_args *a = NULL;
  assert_ok(cucore_args_create(k, &a));
  assert_ok(cucore_args_set_ptr(a, 0, y));
  cfg.grid[0] = 1;
  cucore_graph *g = NULL;
  cucore_graph_exec *exec = NULL;
  assert_ok(cucore_graph_capture_launches(k, &cfg, a, 100, &g));
  assert_ok(cucore_graph_instantiate(g, CUCORE_GRAPH_INSTANTIATE_UPLOAD, stream, &exec));
  cucore_tune_sample_options o;
  memset(&o, 0, sizeof o);
  o.warmup = 2, o.samples = 20, o.batch = 100, o.exec = exec;
  assert_ok(cucore_tune_time_samples(NULL, &cfg, NULL, &o, ms[0]));
  double per_kernel = median_of(ms[0], 20);
  assert_true(per_kernel > 0);
  if (!getenv("CUCORE_UNDER_SANITIZER")) assert_true(per_kernel < 0.020);
  cucore_graph_exec_destroy(exec);
  cucore_graph_destroy(g);
  cucore_args_destroy(a);
  cucore_kernel_destroy(k);
  cucore_object_destroy(obj);
  cucore_mem_free(dev, y);
}

int main(void) {
  if (!cucore_test_have_gpu()) return CUCORE_TEST_SKIP;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(best_config_known_by_construction),
      cmocka_unit_test(short_kernels_are_batched),
      cmocka_unit_test(exact_samples),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
