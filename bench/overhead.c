/*
 * overhead.c -- what cucore's own code costs per hot call, with the driver taken out: after
 * setting up on whatever driver is loaded (a GPU, or the fake driver of tests/fake/ through
 * CUCORE_LIBCUDA on a machine without one), the driver entry points the hot calls end in are
 * replaced by stubs that return at once. The raw column calls the same stub through the same
 * table, so "cucore - raw" is cucore's share alone: checks, records, thread-local state, calls.
 * The speed targets of graphs and pools (replay and pool alloc+free within 5 % of the raw driver,
 * capture within 10 %, a checked kernel-node update within 20 %) are met when that share is small
 * next to the driver's own time (docs/BENCHMARKS.md: 0.35-1.2 us), so this measures the part cucore
 * controls, on the CI machine as well as the GPU machine's host.
 *
 *   usage: bench_overhead [iterations] [rounds]
 * Run under `valgrind --tool=callgrind` with a small iteration count for instruction counts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "base/asym_fence.h" /* whether the pinned and async frees used plain stores */
#include "runtime/runtime.h" /* DRV(), cc_drv: the entry points replaced by stubs */

#define MAX_ROUNDS 64

/* ---- stubs ----------------------------------------------------------------------------------- */

static CUdeviceptr stub_ptr; /* what the stub allocator hands out (a real cucore-free address) */

static CUresult stub_launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                            unsigned by, unsigned bz, unsigned smem, CUstream s, void **params,
                            void **extra) {
  (void)f, (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)smem, (void)s;
  (void)params, (void)extra;
  __asm__ volatile("" ::: "memory");
  return CUDA_SUCCESS;
}

static CUresult stub_alloc_async(CUdeviceptr *p, size_t bytes, CUstream s) {
  (void)bytes, (void)s;
  *p = stub_ptr;
  return CUDA_SUCCESS;
}

static CUresult stub_free_async(CUdeviceptr p, CUstream s) {
  (void)p, (void)s;
  __asm__ volatile("" ::: "memory");
  return CUDA_SUCCESS;
}

static CUresult stub_dtoh_async(void *dst, CUdeviceptr src, size_t bytes, CUstream s) {
  (void)dst, (void)src, (void)bytes, (void)s;
  __asm__ volatile("" ::: "memory");
  return CUDA_SUCCESS;
}

static CUresult stub_set_params(CUgraphExec e, CUgraphNode n, const CUDA_KERNEL_NODE_PARAMS *p) {
  (void)e, (void)n, (void)p;
  __asm__ volatile("" ::: "memory");
  return CUDA_SUCCESS;
}

/* ---- measurements ---------------------------------------------------------------------------- */

typedef struct ctx {
  cucore_device *dev;
  cucore_stream *s;
  CUstream hs;
  cucore_kernel *k;
  cucore_args *a;
  cucore_launch_config cfg;
  void *fn;
  void *raw4[4];
  cucore_graph_exec *exec;
  cucore_graph_node *node;
  CUgraphExec hexec;
  CUgraphNode hnode;
  CUDA_KERNEL_NODE_PARAMS kp;
  cucore_host_pool *hpool;
  void *host;
  cucore_devptr dev_buf;
  int iters;
  int nn; /* the kernel's int and float arguments (raw4 points at them) */
  float alpha;
  cucore_program *p;
  cucore_object *obj;
  cucore_graph *g;     /* the one-node graph behind exec */
  cucore_devptr spare; /* freed first: the stub allocator's address */
} ctx;

enum {
  LAUNCH_RAW,
  LAUNCH_CUCORE,
  CAPTURE_RAW,
  CAPTURE_CUCORE,
  SET_RAW,
  SET_CUCORE,
  SET_REBIND,
  ASYNC_RAW,
  ASYNC_CUCORE,
  PINNED_CUCORE,
  DTOH_RAW,
  DTOH_CUCORE,
  NMODES
};

static const char *const names[NMODES] = {
    "launch: stub cuLaunchKernel",
    "launch: cucore_launch (args bound once)",
    "capture: stub cuLaunchKernel",
    "capture: cucore_launch while capturing",
    "node update: stub cuGraphExecKernelNodeSetParams",
    "node update: cucore_graph_exec_set_kernel_args",
    "node update: the same + CUCORE_ARGS (4 values) before each",
    "async pair: stub cuMemAllocAsync + cuMemFreeAsync",
    "async pair: cucore_mem_alloc_async + _free_async",
    "pinned pair: cucore_host_pool_alloc + _free (64 KiB)",
    "D2H copy: stub cuMemcpyDtoHAsync",
    "D2H copy: cucore_memcpy_dtoh (pool block <- cucore alloc)"};

static double measure(ctx *c, int m) {
  const int n = c->iters;
  double t0 = bench_now_ns();
  switch (m) {
  case LAUNCH_RAW:
  case CAPTURE_RAW:
    for (int i = 0; i < n; i++)
      if (DRV(cuLaunchKernel)((CUfunction)c->fn, 1, 1, 1, 32, 1, 1, 0, c->hs, c->raw4, NULL))
        exit(3);
    break;
  case LAUNCH_CUCORE:
  case CAPTURE_CUCORE:
    for (int i = 0; i < n; i++)
      if (cucore_launch(c->k, &c->cfg, c->a) != CUCORE_OK) exit(4);
    break;
  case SET_RAW:
    for (int i = 0; i < n; i++)
      if (DRV(cuGraphExecKernelNodeSetParams)(c->hexec, c->hnode, &c->kp)) exit(5);
    break;
  case SET_CUCORE:
    for (int i = 0; i < n; i++)
      if (cucore_graph_exec_set_kernel_args(c->exec, c->node, c->a) != CUCORE_OK) exit(6);
    break;
  case SET_REBIND: /* CUCORE_ARGS spelled out: reset, one typed setter a value, check */
    for (int i = 0; i < n; i++)
      if (cucore_args_reset(c->a) != CUCORE_OK || cucore_args_push_u64(c->a, c->dev_buf) ||
          cucore_args_push_i32(c->a, c->nn) || cucore_args_push_f32(c->a, c->alpha) ||
          cucore_args_push_u64(c->a, c->dev_buf) || cucore_args_check(c->a) != CUCORE_OK ||
          cucore_graph_exec_set_kernel_args(c->exec, c->node, c->a) != CUCORE_OK)
        exit(13);
    break;
  case ASYNC_RAW:
    for (int i = 0; i < n; i++) {
      CUdeviceptr d = 0;
      if (DRV(cuMemAllocAsync)(&d, 65536, c->hs) || DRV(cuMemFreeAsync)(d, c->hs)) exit(7);
    }
    break;
  case ASYNC_CUCORE:
    for (int i = 0; i < n; i++) {
      cucore_devptr d = 0;
      if (cucore_mem_alloc_async(c->s, 65536, &d) != CUCORE_OK ||
          cucore_mem_free_async(c->s, d) != CUCORE_OK)
        exit(8);
    }
    break;
  case PINNED_CUCORE:
    for (int i = 0; i < n; i++) {
      void *h = NULL;
      if (cucore_host_pool_alloc(c->hpool, 65536, &h) != CUCORE_OK ||
          cucore_host_pool_free(c->hpool, h) != CUCORE_OK)
        exit(9);
    }
    break;
  case DTOH_RAW:
    for (int i = 0; i < n; i++)
      if (DRV(cuMemcpyDtoHAsync)(c->host, (CUdeviceptr)c->dev_buf, 4096, c->hs)) exit(10);
    break;
  case DTOH_CUCORE:
    for (int i = 0; i < n; i++)
      if (cucore_memcpy_dtoh(c->dev, c->host, c->dev_buf, 4096, c->s) != CUCORE_OK) exit(11);
    break;
  }
  return (bench_now_ns() - t0) / n;
}

/* Interleaves modes [first, last] over the rounds (order rotated) and prints medians. */
static void run(ctx *c, int first, int last, int rounds, double *med) {
  double t[NMODES][MAX_ROUNDS];
  int modes = last - first + 1;
  for (int r = -1; r < rounds; r++)
    for (int m0 = 0; m0 < modes; m0++) {
      int m = first + (m0 + (r < 0 ? 0 : r)) % modes;
      double v = measure(c, m);
      if (r >= 0) t[m][r] = v;
    }
  for (int m = first; m <= last; m++) med[m] = bench_median(t[m], rounds);
}

/* The device, the kernel `four` with its arguments bound (cucore's and the raw ones). */
static void setup_kernel(ctx *c) {
  CHECK(cucore_device_open(0, &c->dev));
  CHECK(cucore_stream_create(c->dev, CUCORE_STREAM_NON_BLOCKING, 0, &c->s));
  CHECK(cucore_stream_get_native(c->s, (void **)&c->hs));
  const char *src = "extern \"C\" __global__ void four(float *x, int n, float a, float *y) {\n"
                    "  if (threadIdx.x == 0 && blockIdx.x == 0 && n < 0) y[0] = a * x[0]; }\n";
  CHECK(cucore_program_create(CUCORE_CODE_CUDA_CPP, src, 0, "bench_overhead.cu", NULL, &c->p));
  CHECK(cucore_program_compile(c->p, CUCORE_CODE_CUBIN, &c->obj));
  CHECK(cucore_object_get_kernel(c->obj, "four", &c->k));
  CHECK(cucore_args_create(c->k, &c->a));
  CHECK(cucore_mem_alloc(c->dev, 1 << 16, &c->dev_buf));
  c->nn = 1;
  c->alpha = 2.0f;
  CHECK(CUCORE_ARGS(c->a, c->dev_buf, c->nn, c->alpha, c->dev_buf));
  CHECK(cucore_kernel_get_native(c->k, c->dev, NULL, &c->fn));
  c->raw4[0] = &c->dev_buf, c->raw4[1] = &c->nn, c->raw4[2] = &c->alpha, c->raw4[3] = &c->dev_buf;
  c->cfg.grid[0] = 1;
  c->cfg.block[0] = 32;
  c->cfg.stream = c->s;
}

/* A one-node executable graph (and its raw handles for the raw update), a pinned pool block,
 * and the stub allocator's address (one of cucore's freed first: an address the registry knows
 * nothing live at). */
static void setup_graph_and_memory(ctx *c) {
  CHECK(cucore_graph_create(c->dev, &c->g));
  cucore_launch_config ncfg = c->cfg;
  ncfg.stream = NULL;
  CHECK(cucore_graph_add_kernel_node(c->g, NULL, 0, c->k, &ncfg, c->a, &c->node));
  CHECK(cucore_graph_instantiate(c->g, 0, NULL, &c->exec));
  CHECK(cucore_graph_node_get_native(c->node, (void **)&c->hnode));
  CHECK(cucore_graph_exec_get_native(c->exec, (void **)&c->hexec));
  c->kp.func = (CUfunction)c->fn;
  c->kp.gridDimX = c->kp.gridDimY = c->kp.gridDimZ = 1;
  c->kp.blockDimX = 32;
  c->kp.blockDimY = c->kp.blockDimZ = 1;
  c->kp.kernelParams = c->raw4;
  CHECK(cucore_host_pool_create(c->dev, NULL, &c->hpool));
  CHECK(cucore_host_pool_alloc(c->hpool, 1 << 16, &c->host));
  CHECK(cucore_mem_alloc(c->dev, 1 << 16, &c->spare));
  stub_ptr = (CUdeviceptr)c->spare;
  CHECK(cucore_stream_synchronize(c->s));
}

/* Every mode with the driver's entry points replaced by the stubs (restored after). */
static void run_stubbed(ctx *c, int rounds, double *med) {
  __typeof__(cc_drv) saved = cc_drv;
  cc_drv.fn_cuLaunchKernel = stub_launch;
  cc_drv.fn_cuMemAllocAsync = stub_alloc_async;
  cc_drv.fn_cuMemFreeAsync = stub_free_async;
  cc_drv.fn_cuMemcpyDtoHAsync = stub_dtoh_async;
  cc_drv.fn_cuGraphExecKernelNodeSetParams = stub_set_params;
  run(c, LAUNCH_RAW, LAUNCH_CUCORE, rounds, med);
  run(c, SET_RAW, SET_REBIND, rounds, med);
  run(c, ASYNC_RAW, PINNED_CUCORE, rounds, med);
  run(c, DTOH_RAW, DTOH_CUCORE, rounds, med);
  /* Launches into a capture cucore began (the driver's capture holds no node: the stub). */
  CHECK(cucore_stream_begin_capture(c->s, CUCORE_CAPTURE_GLOBAL));
  run(c, CAPTURE_RAW, CAPTURE_CUCORE, rounds, med);
  cc_drv = saved;
  cucore_graph *cg = NULL;
  CHECK(cucore_stream_end_capture(c->s, &cg));
  cucore_graph_destroy(cg);
}

static void print_results(const double *med, int iters, int rounds) {
  printf("cucore's own cost per call, the driver's entry points replaced by stubs; %d calls a "
         "sample, %d rounds, medians (ns)\n",
         iters, rounds);
  for (int m = 0; m < NMODES; m++) {
    int raw_pair = m == LAUNCH_CUCORE || m == CAPTURE_CUCORE || m == SET_CUCORE ||
                   m == ASYNC_CUCORE || m == DTOH_CUCORE;
    int rebind = m == SET_REBIND; /* its raw pair: the stub update */
    if (raw_pair || rebind)
      printf("  %-62s %8.1f ns   cucore's share %6.1f ns\n", names[m], med[m],
             med[m] - med[rebind ? SET_RAW : m - 1]);
    else
      printf("  %-62s %8.1f ns\n", names[m], med[m]);
  }
  printf("  asymmetric fences: membarrier(2) %s; this thread %s; %llu revocations\n",
         cc_asym_available() ? "works" : "is not available",
         cc_tls_asym && atomic_load(&cc_tls_asym->fast) == CC_ASYM_FAST
             ? "fast (plain-store frees)"
             : "slow (compare-and-swap frees)",
         (unsigned long long)cc_asym_revocations());
}

static void teardown(ctx *c) {
  CHECK(cucore_host_pool_free(c->hpool, c->host));
  CHECK(cucore_host_pool_destroy(c->hpool));
  CHECK(cucore_mem_free(c->dev, c->spare));
  CHECK(cucore_mem_free(c->dev, c->dev_buf));
  cucore_graph_exec_destroy(c->exec);
  cucore_graph_destroy(c->g);
  cucore_args_destroy(c->a);
  cucore_kernel_destroy(c->k);
  cucore_object_destroy(c->obj);
  cucore_program_destroy(c->p);
  cucore_stream_destroy(c->s);
  cucore_device_close(c->dev);
}

int main(int argc, char **argv) {
  int iters = bench_arg(argc, argv, 1, 20000, 0);
  int rounds = bench_arg(argc, argv, 2, 21, MAX_ROUNDS);
  int ndev = 0;
  if (cucore_device_get_count(&ndev) != CUCORE_OK || ndev == 0) {
    printf("bench_overhead: no device (%s); set CUCORE_LIBCUDA to the fake driver "
           "(build/lib/libcucore_fake_driver.so) to measure without a GPU\n",
           cucore_last_error());
    return 0;
  }
  ctx c;
  memset(&c, 0, sizeof c);
  c.iters = iters;
  setup_kernel(&c);
  setup_graph_and_memory(&c);
  double med[NMODES];
  run_stubbed(&c, rounds, med);
  print_results(med, iters, rounds);
  teardown(&c);
  return 0;
}
