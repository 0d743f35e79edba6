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

int main(int argc, char **argv) {
  int per_round = argc > 1 ? atoi(argv[1]) : 20000;
  int rounds = argc > 2 ? atoi(argv[2]) : 31;
  int n = 0;
  if (cucore_device_get_count(&n) != CUCORE_OK || n == 0) {
    printf("bench_launch_overhead: no GPU (%s); nothing measured\n", cucore_last_error());
    return 0;
  }
  cucore_device *dev;
  CHECK(cucore_device_open(0, &dev));
  cucore_device_props props;
  CHECK(cucore_device_get_props(0, &props));
  cucore_stream *s;
  CHECK(cucore_stream_create(dev, CUCORE_STREAM_NON_BLOCKING, 0, &s));
  const char *src = "extern \"C\" __global__ void empty() {}\n"
                    "extern \"C\" __global__ void four(float *x, int n, float a, float *y) {\n"
                    "  if (threadIdx.x == 0 && blockIdx.x == 0 && n < 0) y[0] = a * x[0]; }\n";
  cucore_program *p;
  CHECK(cucore_program_create(CUCORE_CODE_CUDA_CPP, src, 0, "bench.cu", NULL, &p));
  cucore_object *obj;
  CHECK(cucore_program_compile(p, CUCORE_CODE_CUBIN, &obj));
  cucore_kernel *ke, *k4;
  CHECK(cucore_object_get_kernel(obj, "empty", &ke));
  CHECK(cucore_object_get_kernel(obj, "four", &k4));
  cucore_args *ae, *a4;
  CHECK(cucore_args_create(ke, &ae));
  CHECK(cucore_args_create(k4, &a4));
  cucore_devptr x;
  CHECK(cucore_mem_alloc(dev, 1024, &x));
  int nn = 1;
  float alpha = 2.0f;
  CHECK(cucore_args_check(ae));
  CHECK(CUCORE_ARGS(a4, x, nn, alpha, x));
  void *fe, *f4;
  CHECK(cucore_kernel_get_native(ke, dev, NULL, &fe));
  CHECK(cucore_kernel_get_native(k4, dev, NULL, &f4));
  void *raw4[4] = {&x, &nn, &alpha, &x};
  CUstream hs;
  CHECK(cucore_stream_get_native(s, (void **)&hs));
  cucore_launch_config cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.grid[0] = 1;
  cfg.block[0] = 32;
  cfg.stream = s;

  printf("device: %s (sm_%d), driver %d\n", props.name, props.arch, cc_drv.version);
  printf("%d launches per round, %d rounds, modes interleaved; median us per launch\n", per_round,
         rounds);
  for (int kernel = 0; kernel < 2; kernel++) {
    double t[NMODES][64];
    cucore_kernel *k = kernel ? k4 : ke;
    cucore_args *a = kernel ? a4 : ae;
    CUfunction f = (CUfunction)(kernel ? f4 : fe);
    void **rawp = kernel ? raw4 : NULL;
    for (int r = -1; r < rounds && r < 64; r++) { /* round -1 warms up */
      for (int m0 = 0; m0 < NMODES; m0++) {
        int m = (m0 + (r < 0 ? 0 : r)) % NMODES; /* rotate the order each round */
        CHECK(cucore_stream_synchronize(s));
        double t0 = bench_now_us();
        for (int i = 0; i < per_round; i++) {
          if (m == RAW) {
            if (DRV(cuLaunchKernel)(f, 1, 1, 1, 32, 1, 1, 0, hs, rawp, NULL) != CUDA_SUCCESS)
              exit(2);
          } else if (m == CUCORE_BOUND) {
            if (cucore_launch(k, &cfg, a) != CUCORE_OK) exit(3);
          } else {
            if (kernel) {
              if (CUCORE_ARGS(a, x, nn, alpha, x) != CUCORE_OK) exit(4);
            } else if (cucore_args_reset(a) != CUCORE_OK)
              exit(4);
            if (cucore_launch(k, &cfg, a) != CUCORE_OK) exit(5);
          }
        }
        CHECK(cucore_stream_synchronize(s));
        if (r >= 0) t[m][r] = (bench_now_us() - t0) / per_round;
      }
    }
    /* Paired within each round (the modes ran back to back), so drift between rounds cancels:
     * the median of the per-round ratios, next to the median times. */
    double med[NMODES], rel[NMODES][64];
    for (int m = 0; m < NMODES; m++)
      for (int r = 0; r < rounds; r++) rel[m][r] = t[m][r] / t[RAW][r] - 1.0;
    for (int m = 0; m < NMODES; m++) med[m] = bench_median(t[m], rounds);
    printf("\n%s kernel:\n", kernel ? "4-argument (ptr, int, float, ptr)" : "empty");
    for (int m = 0; m < NMODES; m++)
      printf("  %-42s %7.3f us  (paired: %+.1f %% vs raw)\n", mode_names[m], med[m],
             100.0 * bench_median(rel[m], rounds));
  }
  /* The checks themselves, without the driver: cost of cc_args_check + preflight per launch is
   * what differs between raw and cucore above. */
  cucore_mem_free(dev, x);
  cucore_args_destroy(ae);
  cucore_args_destroy(a4);
  cucore_kernel_destroy(ke);
  cucore_kernel_destroy(k4);
  cucore_object_destroy(obj);
  cucore_program_destroy(p);
  cucore_stream_destroy(s);
  cucore_device_close(dev);
  return 0;
}
