/*
 * tune_timing.c -- what timing one configuration costs the tune's GPU thread, part
 * by part, on the tune bench's kernel (axpy of 4 Mi floats, block 256): host wall time per call,
 * medians over `reps` calls.
 *   - 32 events made and destroyed (the pairs cucore_tune_time_launch keeps);
 *   - cucore_tune_time_launch at its floor (no warm-up, one sample), with the 2 x L2 flush;
 *   - the same with the tune's busy screening (0.25 ms warm-up, >= 0.5 ms and >= 10 samples);
 *   - the raw floor of those 10 samples: flush, event, launch, event, 10 times queued, one wait;
 *   - busy screening with the arguments rotated through 3 more sets (the tune's --cold auto for
 *     this kernel), one launch a sample and a graph captured per call; binding the 3 sets.
 *   usage: bench_tune_timing [reps]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "cucore.h"

#define N (1 << 22)
#define MAX_REPS 200

static const char *src = "extern \"C\" __global__ void axpy(const float *x, float *y, int n) {\n"
                         "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                         "  if (i < n) y[i] = 2.0f * x[i] + y[i];\n"
                         "}\n";

#define SETS 3 /* the rotation's extra argument sets for 4 Mi floats x 2 on a 50 MiB L2 */

typedef struct fixture {
  cucore_device *dev;
  cucore_stream *s;
  cucore_kernel *k;
  cucore_args *a;
  cucore_devptr set_ptr[SETS][2]; /* the rotation's copies of x and y */
  cucore_launch_config cfg;
  cucore_devptr flush;
  size_t l2;
} fixture;

static void setup(fixture *f) {
  cucore_device_props props;
  CHECK(cucore_device_open(0, &f->dev));
  CHECK(cucore_device_get_props(0, &props));
  f->l2 = (size_t)props.l2_cache_bytes;
  CHECK(cucore_stream_create(f->dev, CUCORE_STREAM_NON_BLOCKING, 0, &f->s));
  cucore_program *p;
  cucore_object *obj;
  CHECK(cucore_program_create(CUCORE_CODE_CUDA_CPP, src, 0, "tune_timing.cu", NULL, &p));
  CHECK(cucore_program_compile(p, CUCORE_CODE_CUBIN, &obj));
  CHECK(cucore_object_get_kernel(obj, "axpy", &f->k));
  cucore_program_destroy(p);
  cucore_devptr x, y;
  CHECK(cucore_mem_alloc(f->dev, N * 4, &x));
  CHECK(cucore_mem_alloc(f->dev, N * 4, &y));
  CHECK(cucore_mem_alloc(f->dev, 2 * f->l2, &f->flush));
  CHECK(cucore_memset_d32(f->dev, x, 0x3f800000u, N, f->s));
  CHECK(cucore_memset_d32(f->dev, y, 0, N, f->s));
  int n = N;
  CHECK(cucore_args_create(f->k, &f->a));
  CHECK(CUCORE_ARGS(f->a, x, y, n));
  for (int i = 0; i < SETS; i++)
    for (int b = 0; b < 2; b++) {
      CHECK(cucore_mem_alloc(f->dev, N * 4, &f->set_ptr[i][b]));
      CHECK(cucore_memset_d32(f->dev, f->set_ptr[i][b], 0, N, f->s));
    }
  memset(&f->cfg, 0, sizeof f->cfg);
  f->cfg.grid[0] = N / 256, f->cfg.grid[1] = f->cfg.grid[2] = 1;
  f->cfg.block[0] = 256, f->cfg.block[1] = f->cfg.block[2] = 1;
  f->cfg.stream = f->s;
}

static double events(fixture *f) {
  cucore_event *e[32];
  double t0 = bench_now_us();
  for (int i = 0; i < 32; i++) CHECK(cucore_event_create(f->dev, 0, &e[i]));
  for (int i = 0; i < 32; i++) cucore_event_destroy(e[i]);
  return bench_now_us() - t0;
}

static double timed(fixture *f, const cucore_tune_timing_options *o, int *samples) {
  cucore_tune_timing t;
  double t0 = bench_now_us();
  CHECK(cucore_tune_time_launch(f->k, &f->cfg, f->a, o, &t));
  *samples = (int)t.stats.n;
  return bench_now_us() - t0;
}

/* The rotation's argument sets bound (as the tune binds them per configuration), then timed. */
static double rotated(fixture *f, cucore_tune_timing_options *o, int *samples, double *bind_us) {
  cucore_args *sets[SETS];
  int n = N;
  double t0 = bench_now_us();
  for (int i = 0; i < SETS; i++) {
    CHECK(cucore_args_create(f->k, &sets[i]));
    CHECK(CUCORE_ARGS(sets[i], f->set_ptr[i][0], f->set_ptr[i][1], n));
  }
  *bind_us = bench_now_us() - t0;
  o->rotate = sets, o->nrotate = SETS;
  double us = timed(f, o, samples);
  o->rotate = NULL, o->nrotate = 0;
  for (int i = 0; i < SETS; i++) cucore_args_destroy(sets[i]);
  return us;
}

/* 10 samples queued with the raw calls cucore makes: flush, event, launch, event; one wait. */
static double raw_floor(fixture *f) {
  cucore_event *e[20];
  for (int i = 0; i < 20; i++) CHECK(cucore_event_create(f->dev, 0, &e[i]));
  double t0 = bench_now_us();
  for (int i = 0; i < 10; i++) {
    CHECK(cucore_memset_d32(f->dev, f->flush, 0x5a5a5a5au, f->l2 * 2 / 4, f->s));
    CHECK(cucore_event_record(e[2 * i], f->s));
    CHECK(cucore_launch(f->k, &f->cfg, f->a));
    CHECK(cucore_event_record(e[2 * i + 1], f->s));
  }
  CHECK(cucore_event_synchronize(e[19]));
  double us = bench_now_us() - t0;
  for (int i = 0; i < 20; i++) cucore_event_destroy(e[i]);
  return us;
}

int main(int argc, char **argv) {
  int reps = bench_arg(argc, argv, 1, 50, MAX_REPS);
  if (bench_no_gpu("bench_tune_timing")) return 0;
  fixture f;
  setup(&f);
  cucore_tune_timing_options floor_o = CUCORE_TUNE_TIMING_DEFAULTS, busy = floor_o;
  floor_o.warmup_ms = 0, floor_o.screen_ms = 0, floor_o.min_samples = floor_o.max_samples = 1;
  floor_o.l2_bytes = busy.l2_bytes = f.l2;
  floor_o.flush_buffer = busy.flush_buffer = f.flush;
  busy.warmup_ms = 0.25, busy.screen_ms = 0.5, busy.max_samples = 2 * busy.min_samples;
  cucore_tune_timing_options rot = busy, rot_graph = busy;
  rot.l2_bytes = rot_graph.l2_bytes = 0, rot.flush_buffer = rot_graph.flush_buffer = 0;
  rot.mode = CUCORE_TUNE_LAUNCH_SINGLE, rot_graph.mode = CUCORE_TUNE_LAUNCH_GRAPH;
  double t[7][MAX_REPS];
  int samples = 0, busy_samples = 0, rot_samples = 0, graph_samples = 0;
  for (int r = 0; r < reps; r++) { /* interleaved */
    t[0][r] = events(&f);
    t[1][r] = timed(&f, &floor_o, &samples);
    t[2][r] = timed(&f, &busy, &busy_samples);
    t[3][r] = raw_floor(&f);
    t[4][r] = rotated(&f, &rot, &rot_samples, &t[6][r]);
    t[5][r] = rotated(&f, &rot_graph, &graph_samples, &t[6][r]);
  }
  printf("bench_tune_timing: host wall per call, medians of %d (axpy of %d floats, flush of 2 x "
         "%zu bytes)\n",
         reps, N, f.l2);
  printf("  32 events made and destroyed               %9.1f us\n", bench_median(t[0], reps));
  printf("  time_launch at its floor (1 sample)         %9.1f us\n", bench_median(t[1], reps));
  printf("  time_launch, busy screening (%2d samples)   %9.1f us\n", busy_samples,
         bench_median(t[2], reps));
  printf("  raw floor: 10 samples queued, one wait      %9.1f us\n", bench_median(t[3], reps));
  printf("  %d argument sets bound for rotation           %9.1f us\n", SETS,
         bench_median(t[6], reps));
  printf("  busy screening, rotated, single (%2d samples) %9.1f us\n", rot_samples,
         bench_median(t[4], reps));
  printf("  busy screening, rotated, graph (%2d samples)  %9.1f us\n", graph_samples,
         bench_median(t[5], reps));
  return 0;
}
