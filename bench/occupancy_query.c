/*
 * occupancy_query.c -- max-active-blocks queries on a GPU: the raw driver call, cucore's
 * checked driver-backed query, and the host model with the same inputs; interleaved rounds,
 * medians. (bench_occupancy_model times the model alone and runs without a GPU.)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "runtime/runtime.h"
#include "exec/kernel.h"

int main(void) {
  if (bench_no_gpu("bench_occupancy_query")) return 0;
  cucore_device *dev;
  CHECK(cucore_device_open(0, &dev));
  cucore_stream *s;
  CHECK(cucore_stream_default(dev, &s));
  cucore_program *p;
  CHECK(cucore_program_create(CUCORE_CODE_CUDA_CPP,
                              "extern \"C\" __global__ void k(float *x) { x[threadIdx.x] *= 2; }\n",
                              0, "occ.cu", NULL, &p));
  cucore_object *obj;
  CHECK(cucore_program_compile(p, CUCORE_CODE_CUBIN, &obj));
  cucore_kernel *k;
  CHECK(cucore_object_get_kernel(obj, "k", &k));
  void *fn;
  CHECK(cucore_kernel_get_native(k, dev, NULL, &fn));
  cucore_arch_limits lim;
  cucore_kernel_resources res;
  CHECK(cucore_occupancy_inputs(k, dev, &lim, &res));
  cucore_launch_config cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.block[0] = 256;
  cfg.stream = s;
  enum { ROUNDS = 11, N = 200000 };
  double t[3][ROUNDS];
  volatile int sink = 0;
  for (int r = 0; r < ROUNDS; r++) {
    for (int m0 = 0; m0 < 3; m0++) {
      int m = (m0 + r) % 3;
      double t0 = bench_now_ns();
      for (int i = 0; i < N; i++) {
        int blocks = 0;
        if (m == 0) {
          DRV(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags)
          (&blocks, (CUfunction)fn, 256, 0, 0);
        } else if (m == 1) {
          cucore_occupancy_max_active_blocks(k, &cfg, 0, &blocks);
        } else {
          cucore_occupancy_result out;
          cucore_occupancy_model_blocks(&lim, &res, 256, 0, 0, &out);
          blocks = out.active_blocks_per_sm;
        }
        sink += blocks;
      }
      t[m][r] = (bench_now_ns() - t0) / N;
    }
  }
  const char *names[3] = {"raw cuOccupancyMaxActiveBlocksPerMultiprocessor",
                          "cucore_occupancy_max_active_blocks (checked)",
                          "cucore_occupancy_model_blocks (host model)"};
  cucore_device_props props;
  CHECK(cucore_device_get_props(0, &props));
  printf("max active blocks per SM, block 256, %s; median of %d rounds of %d queries\n", props.name,
         ROUNDS, N);
  for (int m = 0; m < 3; m++) {
    printf("  %-52s %7.1f ns\n", names[m], bench_median(t[m], ROUNDS));
  }
  (void)sink;
  cucore_kernel_destroy(k);
  cucore_object_destroy(obj);
  cucore_program_destroy(p);
  cucore_device_close(dev);
  return 0;
}
