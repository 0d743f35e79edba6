/* graph_while.c -- a while loop that runs on the GPU until the device says it is done.
 *
 * Every number 1..N follows the Collatz rule (halve an even number, else 3x + 1) until it
 * reaches 1. The graph: copy the numbers in, clear the step counts, then a while node whose
 * body is two kernels: one step for every number not yet at 1, and a check that sets the
 * loop's condition from the device (cudaGraphSetConditional) -- 1 while some number is not at
 * 1. The host launches the graph once and learns the answer; nothing goes back and forth per
 * iteration. The step counts and the number of loop trips are compared with the CPU's. */
#include "common.h"

#include <string.h>

static const char *source = CUCORE_GRAPH_SET_CONDITIONAL_DECL
    "extern \"C\" __global__ void collatz_step(int *x, int *steps, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i >= n || x[i] == 1) return;\n"
    "  x[i] = (x[i] % 2 == 0) ? x[i] / 2 : 3 * x[i] + 1;\n"
    "  steps[i] += 1;\n"
    "}\n"
    "extern \"C\" __global__ void any_left(const int *x, int n, cudaGraphConditionalHandle h,\n"
    "                                     int *trips) {\n"
    "  __shared__ int left;\n"
    "  if (threadIdx.x == 0) left = 0;\n"
    "  __syncthreads();\n"
    "  for (int i = threadIdx.x; i < n; i += blockDim.x)\n"
    "    if (x[i] != 1) left = 1;\n"
    "  __syncthreads();\n"
    "  if (threadIdx.x == 0) { trips[0] += 1; cudaGraphSetConditional(h, left ? 1u : 0u); }\n"
    "}\n";

enum { N = 10000 };

int main(void) {
  cucore_device *dev = open_gpu_or_exit("graph_while");
  cucore_versions_info ver;
  CHECK(cucore_versions(&ver));
  if (ver.driver.version < 12030) {
    printf("graph_while: conditional nodes need a driver for CUDA 12.3; this one is %d.%d\n",
           ver.driver.version / 1000, ver.driver.version % 1000 / 10);
    cucore_device_close(dev);
    return 0;
  }
  cucore_object *obj = compile_cuda(source, NULL);
  cucore_kernel *kstep = NULL, *kcheck = NULL;
  CHECK(cucore_object_get_kernel(obj, "collatz_step", &kstep));
  CHECK(cucore_object_get_kernel(obj, "any_left", &kcheck));
  cucore_stream *s = NULL;
  CHECK(cucore_stream_create(dev, CUCORE_STREAM_NON_BLOCKING, 0, &s));

  int *hx = NULL, *hsteps = NULL;
  CHECK(cucore_host_alloc(dev, N * sizeof(int), (void **)&hx));
  CHECK(cucore_host_alloc(dev, N * sizeof(int), (void **)&hsteps));
  for (int i = 0; i < N; i++) hx[i] = i + 1;
  cucore_devptr x, steps, trips;
  CHECK(cucore_mem_alloc(dev, N * sizeof(int), &x));
  CHECK(cucore_mem_alloc(dev, N * sizeof(int), &steps));
  CHECK(cucore_mem_alloc(dev, sizeof(int), &trips));

  cucore_graph *g = NULL;
  CHECK(cucore_graph_create(dev, &g));
  /* The loop's condition: 1 at each launch (so the body runs at least once), then the
   * device's. */
  cucore_graph_condition more = 0;
  CHECK(cucore_graph_condition_create(g, 1, CUCORE_CONDITION_ASSIGN_DEFAULT, &more));
  cucore_graph_node *in, *clear, *clear_trips, *loop, *step, *check;
  CHECK(cucore_graph_add_memcpy_htod_node(g, NULL, 0, x, hx, N * sizeof(int), &in));
  CHECK(cucore_graph_add_memset_node(g, NULL, 0, steps, 0, 4, N, &clear));
  CHECK(cucore_graph_add_memset_node(g, NULL, 0, trips, 0, 4, 1, &clear_trips));
  cucore_graph_node *ready[] = {in, clear, clear_trips};
  cucore_graph *body = NULL;
  CHECK(cucore_graph_add_conditional_node(g, ready, 3, more, CUCORE_CONDITIONAL_WHILE, 1, &body,
                                          &loop));
  cucore_args *astep = NULL, *acheck = NULL;
  CHECK(cucore_args_create(kstep, &astep));
  CHECK(cucore_args_create(kcheck, &acheck));
  int n = N;
  CHECK(CUCORE_ARGS(astep, x, steps, n));
  CHECK(CUCORE_ARGS(acheck, x, n, more, trips));
  cucore_launch_config wide = {.grid = {(N + 255) / 256}, .block = {256}};
  cucore_launch_config one_block = {.grid = {1}, .block = {1024}};
  CHECK(cucore_graph_add_kernel_node(body, NULL, 0, kstep, &wide, astep, &step));
  CHECK(cucore_graph_add_kernel_node(body, &step, 1, kcheck, &one_block, acheck, &check));
  cucore_graph_node *out = NULL;
  CHECK(cucore_graph_add_memcpy_dtoh_node(g, &loop, 1, hsteps, steps, N * sizeof(int), &out));
  cucore_graph_exec *e = NULL;
  CHECK(cucore_graph_instantiate(g, 0, NULL, &e));

  CHECK(cucore_graph_launch(e, s));
  CHECK(cucore_stream_synchronize(s));
  int gpu_trips = 0;
  CHECK(cucore_memcpy_dtoh(dev, &gpu_trips, trips, sizeof gpu_trips, NULL));

  /* The CPU's answer. */
  int mismatches = 0, most = 0;
  for (int i = 0; i < N; i++) {
    long long v = i + 1;
    int k = 0;
    while (v != 1) {
      v = v % 2 == 0 ? v / 2 : 3 * v + 1;
      k++;
    }
    if (k > most) most = k;
    if (hsteps[i] != k) {
      if (mismatches < 5)
        fprintf(stderr, "number %d: %d steps on the GPU, %d on the CPU\n", i + 1, hsteps[i], k);
      mismatches++;
    }
  }
  int want_trips = most > 0 ? most : 1;
  int ok = mismatches == 0 && gpu_trips == want_trips;
  printf("graph_while: the device looped %d times (the CPU says %d), %d step counts of %d "
         "%s the CPU: %s\n",
         gpu_trips, want_trips, N - mismatches, N, mismatches ? "differ from" : "match",
         ok ? "match" : "MISMATCH");

  cucore_graph_exec_destroy(e);
  cucore_graph_destroy(g);
  cucore_args_destroy(astep);
  cucore_args_destroy(acheck);
  cucore_kernel_destroy(kstep);
  cucore_kernel_destroy(kcheck);
  cucore_object_destroy(obj);
  cucore_mem_free(dev, x);
  cucore_mem_free(dev, steps);
  cucore_mem_free(dev, trips);
  cucore_host_free(dev, hx);
  cucore_host_free(dev, hsteps);
  cucore_stream_destroy(s);
  cucore_device_close(dev);
  return ok ? 0 : 1;
}
