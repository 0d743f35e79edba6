/*
 * launch_overhead.c -- cucore's checked launch against the raw driver call, in one process,
 * interleaved rounds, medians (launches back to back, then one stream sync per round).
 *   usage: bench_launch_overhead [launches_per_round] [rounds]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "runtime/runtime.h" /* DRV(): the raw driver entry points, for the baseline */
#include "exec/kernel.h"

enum { RAW, CUCORE_BOUND, CUCORE_REBIND, NMODES };
static const char *mode_names[NMODES] = {"raw cuLaunchKernel", "cucore_launch (args bound once)",
                                         "cucore_launch + CUCORE_ARGS each launch"};

#define MAX_ROUNDS 64

/* The two kernels (`empty`, and `four`: ptr, int, float, ptr) with their arguments bound for
 * cucore and for the raw call. */
typedef struct fixture {
  int per_round, rounds;
  cucore_device *dev;
  cucore_device_props props;
  cucore_stream *s;
  CUstream hs;
  cucore_program *p;
  cucore_object *obj;
  cucore_kernel *ke, *k4;
  cucore_args *ae, *a4;
  cucore_devptr x;
  int nn;
  float alpha;
  void *fe, *f4;
  void *raw4[4];
  cucore_launch_config cfg;
} fixture;

static void setup(fixture *f) {
  CHECK(cucore_device_open(0, &f->dev));
  CHECK(cucore_device_get_props(0, &f->props));
  CHECK(cucore_stream_create(f->dev, CUCORE_STREAM_NON_BLOCKING, 0, &f->s));
  const char *src = "extern \"C\" __global__ void empty() {}\n"
                    "extern \"C\" __global__ void four(float *x, int n, float a, float *y) {\n"
                    "  if (threadIdx.x == 0 && blockIdx.x == 0 && n < 0) y[0] = a * x[0]; }\n";
  CHECK(cucore_program_create(CUCORE_CODE_CUDA_CPP, src, 0, "bench.cu", NULL, &f->p));
  CHECK(cucore_program_compile(f->p, CUCORE_CODE_CUBIN, &f->obj));
  CHECK(cucore_object_get_kernel(f->obj, "empty", &f->ke));
  CHECK(cucore_object_get_kernel(f->obj, "four", &f->k4));
  CHECK(cucore_args_create(f->ke, &f->ae));
  CHECK(cucore_args_create(f->k4, &f->a4));
  CHECK(cucore_mem_alloc(f->dev, 1024, &f->x));
  f->nn = 1;
  f->alpha = 2.0f;
  CHECK(cucore_args_check(f->ae));
  CHECK(CUCORE_ARGS(f->a4, f->x, f->nn, f->alpha, f->x));
  CHECK(cucore_kernel_get_native(f->ke, f->dev, NULL, &f->fe));
  CHECK(cucore_kernel_get_native(f->k4, f->dev, NULL, &f->f4));
  f->raw4[0] = &f->x, f->raw4[1] = &f->nn, f->raw4[2] = &f->alpha, f->raw4[3] = &f->x;
  CHECK(cucore_stream_get_native(f->s, (void **)&f->hs));
  memset(&f->cfg, 0, sizeof f->cfg);
  f->cfg.grid[0] = 1;
  f->cfg.block[0] = 32;
  f->cfg.stream = f->s;
}

/* One round's launches of mode m of the kernel (0 empty, 1 four), back to back, then a sync;
 * the time per launch (us). */
static double one_mode(fixture *f, int kernel, int m) {
  cucore_kernel *k = kernel ? f->k4 : f->ke;
  cucore_args *a = kernel ? f->a4 : f->ae;
  CUfunction fn = (CUfunction)(kernel ? f->f4 : f->fe);
  void **rawp = kernel ? f->raw4 : NULL;
  CHECK(cucore_stream_synchronize(f->s));
  double t0 = bench_now_us();
  for (int i = 0; i < f->per_round; i++) {
    if (m == RAW) {
      if (DRV(cuLaunchKernel)(fn, 1, 1, 1, 32, 1, 1, 0, f->hs, rawp, NULL) != CUDA_SUCCESS) exit(2);
    } else if (m == CUCORE_BOUND) {
      if (cucore_launch(k, &f->cfg, a) != CUCORE_OK) exit(3);
    } else {
      if (kernel) {
        if (CUCORE_ARGS(a, f->x, f->nn, f->alpha, f->x) != CUCORE_OK) exit(4);
      } else if (cucore_args_reset(a) != CUCORE_OK) {
        exit(4);
      }
      if (cucore_launch(k, &f->cfg, a) != CUCORE_OK) exit(5);
    }
  }
  CHECK(cucore_stream_synchronize(f->s));
  return (bench_now_us() - t0) / f->per_round;
}

/* Every mode of one kernel in interleaved rounds (the order rotated each round), reported as
 * median times and the median of the per-round ratios to the raw call (paired within each
 * round, the modes ran back to back, so drift between rounds cancels). */
static void time_kernel(fixture *f, int kernel) {
  double t[NMODES][MAX_ROUNDS];
  for (int r = -1; r < f->rounds; r++) /* round -1 warms up */
    for (int m0 = 0; m0 < NMODES; m0++) {
      int m = (m0 + (r < 0 ? 0 : r)) % NMODES;
      double us = one_mode(f, kernel, m);
      if (r >= 0) t[m][r] = us;
    }
  double med[NMODES], rel[NMODES][MAX_ROUNDS];
  for (int m = 0; m < NMODES; m++)
    for (int r = 0; r < f->rounds; r++) rel[m][r] = t[m][r] / t[RAW][r] - 1.0;
  for (int m = 0; m < NMODES; m++) med[m] = bench_median(t[m], f->rounds);
  printf("\n%s kernel:\n", kernel ? "4-argument (ptr, int, float, ptr)" : "empty");
  for (int m = 0; m < NMODES; m++) {
    double paired = 100.0 * bench_median(rel[m], f->rounds);
    printf("  %-42s %7.3f us  paired %+.1f %% vs raw", mode_names[m], med[m], paired);
    /* The checked launch's target: within 3 % of the raw call (arguments bound once). */
    if (m == CUCORE_BOUND) printf(", within 3 %%: %s", bench_verdict(paired <= 3.0));
    printf("\n");
  }
}

static void teardown(fixture *f) {
  cucore_mem_free(f->dev, f->x);
  cucore_args_destroy(f->ae);
  cucore_args_destroy(f->a4);
  cucore_kernel_destroy(f->ke);
  cucore_kernel_destroy(f->k4);
  cucore_object_destroy(f->obj);
  cucore_program_destroy(f->p);
  cucore_stream_destroy(f->s);
  cucore_device_close(f->dev);
}

int main(int argc, char **argv) {
  fixture f;
  memset(&f, 0, sizeof f);
  f.per_round = bench_arg(argc, argv, 1, 20000, 0);
  f.rounds = bench_arg(argc, argv, 2, 31, MAX_ROUNDS);
  if (bench_no_gpu("bench_launch_overhead")) return 0;
  setup(&f);
  printf("device: %s (sm_%d), driver %d\n", f.props.name, f.props.arch, cc_drv.version);
  printf("%d launches per round, %d rounds, modes interleaved; median us per launch\n", f.per_round,
         f.rounds);
  for (int kernel = 0; kernel < 2; kernel++) time_kernel(&f, kernel);
  teardown(&f);
  return 0;
}
