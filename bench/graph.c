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
 *     (target: within 10 %);
 *   - non-kernel nodes updated in an executable graph: a fill's value and a host function's
 *     argument, raw cuGraphExecMemsetNodeSetParams / cuGraphExecHostNodeSetParams against the
 *     checked cucore_graph_exec_set_node_params (target: within 10 %).
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
      printf("  %-52s %8.4f %s  paired %+.1f %% vs raw, within %.0f %%: %s\n", names[m], med, unit,
             paired, target, bench_verdict(paired <= target));
  }
}

/* What every part measures with: the kernel `four` (ptr, int, float, ptr) bound once, its
 * raw driver handle and arguments, and the three executable graphs of `kernels` launches. */
typedef struct fixture {
  int kernels, rounds;
  cucore_device *dev;
  cucore_device_props props;
  cucore_stream *s;
  CUstream hs;
  cucore_program *p;
  cucore_object *obj;
  cucore_kernel *k;
  cucore_args *a;
  cucore_devptr x;
  int nn;
  float alpha;
  void *f4;
  void *raw4[4];
  cucore_launch_config cfg;
  CUgraph raw_graph;
  CUgraphExec raw_exec;
  cucore_graph *captured, *built;
  cucore_graph_exec *cap_exec, *built_exec;
  cucore_graph_node *first; /* the built graph's first node (the update's target) */
} fixture;

/* `kernels` raw launches of `four` captured on the raw stream. */
static void capture_raw(fixture *f, CUgraph *g) {
  CU(DRV(cuStreamBeginCapture)(f->hs, CU_STREAM_CAPTURE_MODE_GLOBAL));
  for (int i = 0; i < f->kernels; i++)
    CU(DRV(cuLaunchKernel)((CUfunction)f->f4, 1, 1, 1, 32, 1, 1, 0, f->hs, f->raw4, NULL));
  CU(DRV(cuStreamEndCapture)(f->hs, g));
}

static void setup(fixture *f) {
  CHECK(cucore_device_open(0, &f->dev));
  CHECK(cucore_device_get_props(0, &f->props));
  CHECK(cucore_stream_create(f->dev, CUCORE_STREAM_NON_BLOCKING, 0, &f->s));
  const char *src = "extern \"C\" __global__ void four(float *x, int n, float a, float *y) {\n"
                    "  if (threadIdx.x == 0 && blockIdx.x == 0 && n < 0) y[0] = a * x[0]; }\n";
  CHECK(cucore_program_create(CUCORE_CODE_CUDA_CPP, src, 0, "bench_graph.cu", NULL, &f->p));
  CHECK(cucore_program_compile(f->p, CUCORE_CODE_CUBIN, &f->obj));
  CHECK(cucore_object_get_kernel(f->obj, "four", &f->k));
  CHECK(cucore_args_create(f->k, &f->a));
  CHECK(cucore_mem_alloc(f->dev, 1024, &f->x));
  f->nn = 1;
  f->alpha = 2.0f;
  CHECK(CUCORE_ARGS(f->a, f->x, f->nn, f->alpha, f->x));
  CHECK(cucore_kernel_get_native(f->k, f->dev, NULL, &f->f4));
  f->raw4[0] = &f->x, f->raw4[1] = &f->nn, f->raw4[2] = &f->alpha, f->raw4[3] = &f->x;
  CHECK(cucore_stream_get_native(f->s, (void **)&f->hs));
  memset(&f->cfg, 0, sizeof f->cfg);
  f->cfg.grid[0] = 1;
  f->cfg.block[0] = 32;
  f->cfg.stream = f->s;
}

/* The three graphs of `kernels` launches of `four`, each after the one before: raw captured,
 * cucore captured, cucore built from kernel nodes; instantiated and uploaded. */
static void make_graphs(fixture *f) {
  capture_raw(f, &f->raw_graph);
  CUDA_GRAPH_INSTANTIATE_PARAMS ip;
  memset(&ip, 0, sizeof ip);
  CU(DRV(cuGraphInstantiateWithParams)(&f->raw_exec, f->raw_graph, &ip));
  CHECK(cucore_stream_begin_capture(f->s, CUCORE_CAPTURE_GLOBAL));
  for (int i = 0; i < f->kernels; i++) CHECK(cucore_launch(f->k, &f->cfg, f->a));
  CHECK(cucore_stream_end_capture(f->s, &f->captured));
  CHECK(cucore_graph_create(f->dev, &f->built));
  cucore_launch_config ncfg = f->cfg;
  ncfg.stream = NULL;
  cucore_graph_node *prev = NULL;
  for (int i = 0; i < f->kernels; i++) {
    cucore_graph_node *node = NULL;
    CHECK(cucore_graph_add_kernel_node(f->built, prev ? &prev : NULL, prev ? 1 : 0, f->k, &ncfg,
                                       f->a, &node));
    if (!f->first) f->first = node;
    prev = node;
  }
  CHECK(cucore_graph_instantiate(f->captured, 0, NULL, &f->cap_exec));
  CHECK(cucore_graph_instantiate(f->built, 0, NULL, &f->built_exec));
  CU(DRV(cuGraphUpload)(f->raw_exec, f->hs));
  CHECK(cucore_graph_upload(f->cap_exec, f->s));
  CHECK(cucore_graph_upload(f->built_exec, f->s));
}

/* Replay: 20 replays of each graph per round, per kernel, launch to completion. */
static void time_replay(fixture *f) {
  enum { RAW_REPLAY, CAP_REPLAY, BUILT_REPLAY, NREPLAY };
  static const char *const replay_names[NREPLAY] = {
      "raw cuGraphLaunch (graph of raw cuLaunchKernel)",
      "cucore_graph_launch (graph of cucore_launch)",
      "cucore_graph_launch (graph of kernel nodes)"};
  double tr[NREPLAY][MAX_ROUNDS];
  const int replays = 20;
  for (int r = -1; r < f->rounds; r++) { /* round -1 warms up */
    for (int m0 = 0; m0 < NREPLAY; m0++) {
      int m = (m0 + (r < 0 ? 0 : r)) % NREPLAY;
      CHECK(cucore_stream_synchronize(f->s));
      double t0 = bench_now_us();
      for (int i = 0; i < replays; i++) {
        if (m == RAW_REPLAY)
          CU(DRV(cuGraphLaunch)(f->raw_exec, f->hs));
        else
          CHECK(cucore_graph_launch(m == CAP_REPLAY ? f->cap_exec : f->built_exec, f->s));
      }
      CHECK(cucore_stream_synchronize(f->s));
      if (r >= 0) tr[m][r] = (bench_now_us() - t0) / ((double)replays * f->kernels);
    }
  }
  report("replay, per kernel (launch to completion)", "us/kernel", replay_names, NREPLAY, tr,
         f->rounds, 5.0);
}

/* A kernel node's arguments updated in the executable graph: raw, cucore with the arguments
 * bound once, and rebound with CUCORE_ARGS before each update. */
static void time_updates(fixture *f) {
  enum { RAW_SET, CUCORE_SET, CUCORE_REBIND_SET, NSET };
  static const char *const set_names[NSET] = {
      "raw cuGraphExecKernelNodeSetParams", "cucore_graph_exec_set_kernel_args (args bound once)",
      "cucore_graph_exec_set_kernel_args + CUCORE_ARGS each"};
  void *hnode = NULL, *hexec = NULL;
  CHECK(cucore_graph_node_get_native(f->first, &hnode));
  CHECK(cucore_graph_exec_get_native(f->built_exec, &hexec));
  CUDA_KERNEL_NODE_PARAMS kp;
  memset(&kp, 0, sizeof kp);
  kp.func = (CUfunction)f->f4;
  kp.gridDimX = kp.gridDimY = kp.gridDimZ = 1;
  kp.blockDimX = 32;
  kp.blockDimY = kp.blockDimZ = 1;
  kp.kernelParams = f->raw4;
  double tu[NSET][MAX_ROUNDS];
  const int updates = 20000;
  for (int r = -1; r < f->rounds; r++) {
    for (int m0 = 0; m0 < NSET; m0++) {
      int m = (m0 + (r < 0 ? 0 : r)) % NSET;
      double t0 = bench_now_us();
      for (int i = 0; i < updates; i++) {
        if (m == RAW_SET) {
          CU(DRV(cuGraphExecKernelNodeSetParams)((CUgraphExec)hexec, (CUgraphNode)hnode, &kp));
        } else {
          if (m == CUCORE_REBIND_SET && CUCORE_ARGS(f->a, f->x, f->nn, f->alpha, f->x) != CUCORE_OK)
            exit(3);
          if (cucore_graph_exec_set_kernel_args(f->built_exec, f->first, f->a) != CUCORE_OK)
            exit(4);
        }
      }
      if (r >= 0) tu[m][r] = (bench_now_us() - t0) / updates;
    }
  }
  report("kernel node argument update in an executable graph, per call", "us/call", set_names, NSET,
         tu, f->rounds, 20.0);
}

/* Capturing `kernels` launches, begin to end of the capture: raw against cucore. */
static void time_capture(fixture *f) {
  enum { RAW_CAP, CUCORE_CAP, NCAP };
  static const char *const cap_names[NCAP] = {"raw cuLaunchKernel into a capture",
                                              "cucore_launch into a capture"};
  double tc[NCAP][MAX_ROUNDS];
  for (int r = -1; r < f->rounds; r++) {
    for (int m0 = 0; m0 < NCAP; m0++) {
      int m = (m0 + (r < 0 ? 0 : r)) % NCAP;
      CUgraph rg = NULL;
      cucore_graph *cg = NULL;
      double t0 = bench_now_us();
      if (m == RAW_CAP) {
        capture_raw(f, &rg);
      } else {
        CHECK(cucore_stream_begin_capture(f->s, CUCORE_CAPTURE_GLOBAL));
        for (int i = 0; i < f->kernels; i++)
          if (cucore_launch(f->k, &f->cfg, f->a) != CUCORE_OK) exit(5);
        CHECK(cucore_stream_end_capture(f->s, &cg));
      }
      double t1 = bench_now_us();
      if (r >= 0) tc[m][r] = (t1 - t0) / f->kernels;
      if (rg) CU(DRV(cuGraphDestroy)(rg));
      cucore_graph_destroy(cg);
    }
  }
  report("capture, per launch (begin to end of capture)", "us/launch", cap_names, NCAP, tc,
         f->rounds, 10.0);
}

static void count_call(void *user) { (*(int *)user)++; }

/* A fill and a host node updated in an executable graph: raw against cucore, the value (and
 * the host function's argument) changed at each call. */
static void time_node_updates(fixture *f) {
  enum { RAW_FILL, CUCORE_FILL, RAW_HOST, CUCORE_HOST, NUPD };
  static const char *const names[NUPD] = {"raw cuGraphExecMemsetNodeSetParams",
                                          "cucore_graph_exec_set_node_params (fill)",
                                          "raw cuGraphExecHostNodeSetParams",
                                          "cucore_graph_exec_set_node_params (host)"};
  cucore_graph *g = NULL;
  cucore_graph_exec *e = NULL;
  cucore_graph_node *fill = NULL, *host = NULL;
  static int calls[2];
  CHECK(cucore_graph_create(f->dev, &g));
  CHECK(cucore_graph_add_memset_node(g, NULL, 0, f->x, 0, 4, 256, &fill));
  CHECK(cucore_graph_add_host_node(g, &fill, 1, count_call, &calls[0], NULL, &host));
  CHECK(cucore_graph_instantiate(g, 0, NULL, &e));
  void *hfill = NULL, *hhost = NULL, *hexec = NULL;
  CHECK(cucore_graph_node_get_native(fill, &hfill));
  CHECK(cucore_graph_node_get_native(host, &hhost));
  CHECK(cucore_graph_exec_get_native(e, &hexec));
  cucore_graph_node_params pf, ph;
  CHECK(cucore_graph_node_get_params(fill, &pf));
  CHECK(cucore_graph_node_get_params(host, &ph));
  CUDA_MEMSET_NODE_PARAMS mp = {(CUdeviceptr)f->x, 0, 0, 4, 256, 1};
  CUDA_HOST_NODE_PARAMS hp = {count_call, &calls[0]};
  void *ctx = NULL;
  CHECK(cucore_device_get_native(f->dev, &ctx, NULL));
  double t[2][MAX_ROUNDS], th[2][MAX_ROUNDS];
  const int updates = 20000;
  for (int r = -1; r < f->rounds; r++) {
    for (int m0 = 0; m0 < NUPD; m0++) {
      int m = (m0 + (r < 0 ? 0 : r)) % NUPD;
      double t0 = bench_now_us();
      for (int i = 0; i < updates; i++) {
        if (m == RAW_FILL) {
          mp.value = (unsigned)i;
          CU(DRV(cuGraphExecMemsetNodeSetParams)((CUgraphExec)hexec, (CUgraphNode)hfill, &mp,
                                                 (CUcontext)ctx));
        } else if (m == CUCORE_FILL) {
          pf.memset.value = (uint32_t)i;
          if (cucore_graph_exec_set_node_params(e, fill, &pf) != CUCORE_OK) exit(6);
        } else if (m == RAW_HOST) {
          hp.userData = &calls[i & 1];
          CU(DRV(cuGraphExecHostNodeSetParams)((CUgraphExec)hexec, (CUgraphNode)hhost, &hp));
        } else {
          ph.host.user = &calls[i & 1];
          if (cucore_graph_exec_set_node_params(e, host, &ph) != CUCORE_OK) exit(7);
        }
      }
      double us = (bench_now_us() - t0) / updates;
      if (r >= 0 && m < RAW_HOST) t[m][r] = us;
      if (r >= 0 && m >= RAW_HOST) th[m - RAW_HOST][r] = us;
    }
  }
  report("fill node updated in an executable graph, per call", "us/call", names, 2, t, f->rounds,
         10.0);
  report("host node updated in an executable graph, per call", "us/call", names + 2, 2, th,
         f->rounds, 10.0);
  cucore_graph_exec_destroy(e);
  cucore_graph_destroy(g);
}

static void teardown(fixture *f) {
  CU(DRV(cuGraphExecDestroy)(f->raw_exec));
  CU(DRV(cuGraphDestroy)(f->raw_graph));
  cucore_graph_exec_destroy(f->cap_exec);
  cucore_graph_exec_destroy(f->built_exec);
  cucore_graph_destroy(f->captured);
  cucore_graph_destroy(f->built);
  cucore_mem_free(f->dev, f->x);
  cucore_args_destroy(f->a);
  cucore_kernel_destroy(f->k);
  cucore_object_destroy(f->obj);
  cucore_program_destroy(f->p);
  cucore_stream_destroy(f->s);
  cucore_device_close(f->dev);
}

int main(int argc, char **argv) {
  fixture f;
  memset(&f, 0, sizeof f);
  f.kernels = bench_arg(argc, argv, 1, 1000, 0);
  f.rounds = bench_arg(argc, argv, 2, 31, MAX_ROUNDS);
  if (bench_no_gpu("bench_graph")) return 0;
  setup(&f);
  make_graphs(&f);
  printf("device: %s (sm_%d), driver %d\n", f.props.name, f.props.arch, cc_drv.version);
  printf("graphs of %d launches of a 4-argument kernel (ptr, int, float, ptr), %d rounds, modes "
         "interleaved (order rotated each round); medians\n",
         f.kernels, f.rounds);
  time_replay(&f);
  time_updates(&f);
  time_capture(&f);
  time_node_updates(&f);
  teardown(&f);
  return 0;
}
