/*
 * graph.c -- CUDA graphs through cucore against the raw driver, in one process, interleaved
 * rounds, medians of per-round times and of per-round ratios (paired):
 *   - replay of a 1000-kernel graph: the raw driver's cuGraphLaunch of a graph captured from raw
 *     cuLaunchKernel, against cucore_graph_launch of a graph captured from cucore_launch and of
 *     one built from kernel nodes (target: within 5 % per kernel);
 *   - a kernel node's arguments updated in an executable graph: raw
 *     cuGraphExecKernelNodeSetParams against the checked cucore_graph_exec_set_kernel_args
 *     (target: within 20 %);
 *   - capturing launches: raw cuLaunchKernel against cucore_launch, begin to end of capture
 *     (target: within 10 %).
 *   usage: bench_graph [kernels_per_graph] [rounds]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "runtime/runtime.h" /* DRV(): the raw driver entry points, for the baseline */

#define MAX_ROUNDS 64

/* Median time and median paired ratio to mode 0 of `modes` series of `rounds` times. */
static void report(const char *title, const char *unit, const char *const *names, int modes,
                   double t[][MAX_ROUNDS], int rounds, double target) {
  printf("\n%s:\n", title);
  double rel[MAX_ROUNDS];
  for (int m = 0; m < modes; m++) {
    for (int r = 0; r < rounds; r++) rel[r] = t[m][r] / t[0][r] - 1.0;
    double paired = 100.0 * bench_median(rel, rounds);
    double copy[MAX_ROUNDS];
    memcpy(copy, t[m], sizeof copy);
    double med = bench_median(copy, rounds);
    if (m == 0)
      printf("  %-52s %8.4f %s\n", names[m], med, unit);
    else
      printf("  %-52s %8.4f %s  (paired: %+.1f %% vs raw; target within %.0f %%: %s)\n", names[m],
             med, unit, paired, target, paired <= target ? "met" : "NOT MET");
  }
}

int main(int argc, char **argv) {
  int kernels = argc > 1 ? atoi(argv[1]) : 1000;
  int rounds = argc > 2 ? atoi(argv[2]) : 31;
  if (kernels < 1) kernels = 1000;
  if (rounds < 1 || rounds > MAX_ROUNDS) rounds = 31;
  int n = 0;
  if (cucore_device_get_count(&n) != CUCORE_OK || n == 0) {
    printf("bench_graph: no GPU (%s); nothing measured\n", cucore_last_error());
    return 0;
  }
  cucore_device *dev;
  CHECK(cucore_device_open(0, &dev));
  cucore_device_props props;
  CHECK(cucore_device_get_props(0, &props));
  cucore_stream *s;
  CHECK(cucore_stream_create(dev, CUCORE_STREAM_NON_BLOCKING, 0, &s));
  const char *src = "extern \"C\" __global__ void four(float *x, int n, float a, float *y) {\n"
                    "  if (threadIdx.x == 0 && blockIdx.x == 0 && n < 0) y[0] = a * x[0]; }\n";
  cucore_program *p;
  CHECK(cucore_program_create(CUCORE_CODE_CUDA_CPP, src, 0, "bench_graph.cu", NULL, &p));
  cucore_object *obj;
  CHECK(cucore_program_compile(p, CUCORE_CODE_CUBIN, &obj));
  cucore_kernel *k;
  CHECK(cucore_object_get_kernel(obj, "four", &k));
  cucore_args *a;
  CHECK(cucore_args_create(k, &a));
  cucore_devptr x;
  CHECK(cucore_mem_alloc(dev, 1024, &x));
  int nn = 1;
  float alpha = 2.0f;
  CHECK(CUCORE_ARGS(a, x, nn, alpha, x));
  void *f4;
  CHECK(cucore_kernel_get_native(k, dev, NULL, &f4));
  void *raw4[4] = {&x, &nn, &alpha, &x};
  CUstream hs;
  CHECK(cucore_stream_get_native(s, (void **)&hs));
  cucore_launch_config cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.grid[0] = 1;
  cfg.block[0] = 32;
  cfg.stream = s;

  /* The three graphs of `kernels` launches of `four`, each after the one before. */
  CUgraph raw_graph = NULL;
  CU(DRV(cuStreamBeginCapture)(hs, CU_STREAM_CAPTURE_MODE_GLOBAL));
  for (int i = 0; i < kernels; i++)
    CU(DRV(cuLaunchKernel)((CUfunction)f4, 1, 1, 1, 32, 1, 1, 0, hs, raw4, NULL));
  CU(DRV(cuStreamEndCapture)(hs, &raw_graph));
  CUgraphExec raw_exec = NULL;
  CUDA_GRAPH_INSTANTIATE_PARAMS ip;
  memset(&ip, 0, sizeof ip);
  CU(DRV(cuGraphInstantiateWithParams)(&raw_exec, raw_graph, &ip));
  cucore_graph *captured, *built;
  CHECK(cucore_stream_begin_capture(s, CUCORE_CAPTURE_GLOBAL));
  for (int i = 0; i < kernels; i++) CHECK(cucore_launch(k, &cfg, a));
  CHECK(cucore_stream_end_capture(s, &captured));
  CHECK(cucore_graph_create(dev, &built));
  cucore_launch_config ncfg = cfg;
  ncfg.stream = NULL;
  cucore_graph_node *prev = NULL, *first = NULL;
  for (int i = 0; i < kernels; i++) {
    cucore_graph_node *node = NULL;
    CHECK(
        cucore_graph_add_kernel_node(built, prev ? &prev : NULL, prev ? 1 : 0, k, &ncfg, a, &node));
    if (!first) first = node;
    prev = node;
  }
  cucore_graph_exec *cap_exec, *built_exec;
  CHECK(cucore_graph_instantiate(captured, 0, NULL, &cap_exec));
  CHECK(cucore_graph_instantiate(built, 0, NULL, &built_exec));
  CU(DRV(cuGraphUpload)(raw_exec, hs));
  CHECK(cucore_graph_upload(cap_exec, s));
  CHECK(cucore_graph_upload(built_exec, s));

  printf("device: %s (sm_%d), driver %d\n", props.name, props.arch, cc_drv.version);
  printf("graphs of %d launches of a 4-argument kernel (ptr, int, float, ptr), %d rounds, modes "
         "interleaved (order rotated each round); medians\n",
         kernels, rounds);

  /* ---- replay -------------------------------------------------------------------------- */
  enum { RAW_REPLAY, CAP_REPLAY, BUILT_REPLAY, NREPLAY };
  static const char *const replay_names[NREPLAY] = {
      "raw cuGraphLaunch (graph of raw cuLaunchKernel)",
      "cucore_graph_launch (graph of cucore_launch)",
      "cucore_graph_launch (graph of kernel nodes)"};
  double tr[NREPLAY][MAX_ROUNDS];
  const int replays = 20;
  for (int r = -1; r < rounds; r++) { /* round -1 warms up */
    for (int m0 = 0; m0 < NREPLAY; m0++) {
      int m = (m0 + (r < 0 ? 0 : r)) % NREPLAY;
      CHECK(cucore_stream_synchronize(s));
      double t0 = bench_now_us();
      for (int i = 0; i < replays; i++) {
        if (m == RAW_REPLAY)
          CU(DRV(cuGraphLaunch)(raw_exec, hs));
        else
          CHECK(cucore_graph_launch(m == CAP_REPLAY ? cap_exec : built_exec, s));
      }
      CHECK(cucore_stream_synchronize(s));
      if (r >= 0) tr[m][r] = (bench_now_us() - t0) / ((double)replays * kernels);
    }
  }
  report("replay, per kernel (launch to completion)", "us/kernel", replay_names, NREPLAY, tr,
         rounds, 5.0);

  /* ---- node argument update ---------------------------------------------------------------- */
  enum { RAW_SET, CUCORE_SET, CUCORE_REBIND_SET, NSET };
  static const char *const set_names[NSET] = {
      "raw cuGraphExecKernelNodeSetParams", "cucore_graph_exec_set_kernel_args (args bound once)",
      "cucore_graph_exec_set_kernel_args + CUCORE_ARGS each"};
  void *hnode = NULL, *hexec = NULL;
  CHECK(cucore_graph_node_get_native(first, &hnode));
  CHECK(cucore_graph_exec_get_native(built_exec, &hexec));
  CUDA_KERNEL_NODE_PARAMS kp;
  memset(&kp, 0, sizeof kp);
  kp.func = (CUfunction)f4;
  kp.gridDimX = kp.gridDimY = kp.gridDimZ = 1;
  kp.blockDimX = 32;
  kp.blockDimY = kp.blockDimZ = 1;
  kp.kernelParams = raw4;
  double tu[NSET][MAX_ROUNDS];
  const int updates = 20000;
  for (int r = -1; r < rounds; r++) {
    for (int m0 = 0; m0 < NSET; m0++) {
      int m = (m0 + (r < 0 ? 0 : r)) % NSET;
      double t0 = bench_now_us();
      for (int i = 0; i < updates; i++) {
        if (m == RAW_SET) {
          CU(DRV(cuGraphExecKernelNodeSetParams)((CUgraphExec)hexec, (CUgraphNode)hnode, &kp));
        } else {
          if (m == CUCORE_REBIND_SET && CUCORE_ARGS(a, x, nn, alpha, x) != CUCORE_OK) exit(3);
          if (cucore_graph_exec_set_kernel_args(built_exec, first, a) != CUCORE_OK) exit(4);
        }
      }
      if (r >= 0) tu[m][r] = (bench_now_us() - t0) / updates;
    }
  }
  report("kernel node argument update in an executable graph, per call", "us/call", set_names, NSET,
         tu, rounds, 20.0);

  /* ---- capture ------------------------------------------------------------------------- */
  enum { RAW_CAP, CUCORE_CAP, NCAP };
  static const char *const cap_names[NCAP] = {"raw cuLaunchKernel into a capture",
                                              "cucore_launch into a capture"};
  double tc[NCAP][MAX_ROUNDS];
  for (int r = -1; r < rounds; r++) {
    for (int m0 = 0; m0 < NCAP; m0++) {
      int m = (m0 + (r < 0 ? 0 : r)) % NCAP;
      CUgraph rg = NULL;
      cucore_graph *cg = NULL;
      double t0 = bench_now_us();
      if (m == RAW_CAP) {
        CU(DRV(cuStreamBeginCapture)(hs, CU_STREAM_CAPTURE_MODE_GLOBAL));
        for (int i = 0; i < kernels; i++)
          CU(DRV(cuLaunchKernel)((CUfunction)f4, 1, 1, 1, 32, 1, 1, 0, hs, raw4, NULL));
        CU(DRV(cuStreamEndCapture)(hs, &rg));
      } else {
        CHECK(cucore_stream_begin_capture(s, CUCORE_CAPTURE_GLOBAL));
        for (int i = 0; i < kernels; i++)
          if (cucore_launch(k, &cfg, a) != CUCORE_OK) exit(5);
        CHECK(cucore_stream_end_capture(s, &cg));
      }
      double t1 = bench_now_us();
      if (r >= 0) tc[m][r] = (t1 - t0) / kernels;
      if (rg) CU(DRV(cuGraphDestroy)(rg));
      cucore_graph_destroy(cg);
    }
  }
  report("capture, per launch (begin to end of capture)", "us/launch", cap_names, NCAP, tc, rounds,
         10.0);

  CU(DRV(cuGraphExecDestroy)(raw_exec));
  CU(DRV(cuGraphDestroy)(raw_graph));
  cucore_graph_exec_destroy(cap_exec);
  cucore_graph_exec_destroy(built_exec);
  cucore_graph_destroy(captured);
  cucore_graph_destroy(built);
  cucore_mem_free(dev, x);
  cucore_args_destroy(a);
  cucore_kernel_destroy(k);
  cucore_object_destroy(obj);
  cucore_program_destroy(p);
  cucore_stream_destroy(s);
  cucore_device_close(dev);
  return 0;
}
