/* graph_jacobi.c -- an iterative solver step as a CUDA graph, replayed many times.
 *
 * Solves -u'' = f on (0, 1) with u(0) = u(1) = 0 by Jacobi sweeps. One step is a graph of
 * four nodes: clear the residual sum, one Jacobi sweep (u_in -> u_out), the residual of u_out
 * (summed on the device), and a copy of the sum to the host. Between replays the two arrays
 * swap roles: the sweep's and the residual's arguments are changed in the executable graph
 * with checked per-node updates (no re-instantiation, nothing allocated). The result after all
 * sweeps is compared with the same sweeps done on the CPU. */
#include "common.h"

#include <math.h>
#include <string.h>

static const char *source =
    "extern \"C\" __global__ void sweep(const float *u, float *v, const float *f, float h2, int n) "
    "{\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i >= n) return;\n"
    "  float left = i > 0 ? u[i - 1] : 0.0f, right = i < n - 1 ? u[i + 1] : 0.0f;\n"
    "  v[i] = 0.5f * (left + right + h2 * f[i]);\n"
    "}\n"
    "extern \"C\" __global__ void residual(const float *u, const float *f, float h2, int n,\n"
    "                                     double *sum) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i >= n) return;\n"
    "  float left = i > 0 ? u[i - 1] : 0.0f, right = i < n - 1 ? u[i + 1] : 0.0f;\n"
    "  double r = (double)f[i] - (2.0 * u[i] - left - right) / (double)h2;\n"
    "  atomicAdd(sum, r * r);\n"
    "}\n";

enum { N = 1024, STEPS = 2000 };

/* The same sweep on the CPU; fmaf where the GPU contracts h2 * f + (left + right). */
static void cpu_sweep(const float *u, float *v, const float *f, float h2) {
  for (int i = 0; i < N; i++) {
    float left = i > 0 ? u[i - 1] : 0.0f, right = i < N - 1 ? u[i + 1] : 0.0f;
    v[i] = 0.5f * fmaf(h2, f[i], left + right);
  }
}

static double cpu_residual(const float *u, const float *f, float h2) {
  double s = 0;
  for (int i = 0; i < N; i++) {
    float left = i > 0 ? u[i - 1] : 0.0f, right = i < N - 1 ? u[i + 1] : 0.0f;
    double r = (double)f[i] - (2.0 * u[i] - left - right) / (double)h2;
    s += r * r;
  }
  return s;
}

int main(void) {
  cucore_device *dev = open_gpu_or_exit("graph_jacobi");
  cucore_object *obj = compile_cuda(source, NULL);
  cucore_kernel *ksweep = NULL, *kres = NULL;
  CHECK(cucore_object_get_kernel(obj, "sweep", &ksweep));
  CHECK(cucore_object_get_kernel(obj, "residual", &kres));
  cucore_stream *s = NULL;
  CHECK(cucore_stream_create(dev, CUCORE_STREAM_NON_BLOCKING, 0, &s));

  float h = 1.0f / (N + 1), h2 = h * h;
  float *f = malloc(N * sizeof *f), *u = calloc(N, sizeof *u), *v = calloc(N, sizeof *v);
  for (int i = 0; i < N; i++) f[i] = sinf(3.14159265f * (i + 1) * h) + 1.0f;
  cucore_devptr du[2], df, dsum;
  for (int b = 0; b < 2; b++) {
    CHECK(cucore_mem_alloc(dev, N * sizeof(float), &du[b]));
    CHECK(cucore_memset_d32(dev, du[b], 0, N, NULL));
  }
  CHECK(cucore_mem_alloc(dev, N * sizeof(float), &df));
  CHECK(cucore_mem_alloc(dev, sizeof(double), &dsum));
  CHECK(cucore_memcpy_htod(dev, df, f, N * sizeof(float), NULL));
  double *hsum = NULL; /* pinned: the graph copies the residual here at each replay */
  CHECK(cucore_host_alloc(dev, sizeof(double), (void **)&hsum));

  /* The step: clear the sum, sweep u[0] -> u[1], residual of u[1], copy the sum out. */
  cucore_args *as = NULL, *ar = NULL;
  CHECK(cucore_args_create(ksweep, &as));
  CHECK(cucore_args_create(kres, &ar));
  int n = N;
  CHECK(CUCORE_ARGS(as, du[0], du[1], df, h2, n));
  CHECK(CUCORE_ARGS(ar, du[1], df, h2, n, dsum));
  cucore_launch_config cfg = {.grid = {(N + 255) / 256}, .block = {256}};
  cucore_graph *g = NULL;
  CHECK(cucore_graph_create(dev, &g));
  cucore_graph_node *clear, *sweep, *res, *out;
  CHECK(cucore_graph_add_memset_node(g, NULL, 0, dsum, 0, 4, 2, &clear));
  CHECK(cucore_graph_add_kernel_node(g, NULL, 0, ksweep, &cfg, as, &sweep));
  cucore_graph_node *before_res[] = {clear, sweep};
  CHECK(cucore_graph_add_kernel_node(g, before_res, 2, kres, &cfg, ar, &res));
  CHECK(cucore_graph_add_memcpy_dtoh_node(g, &res, 1, hsum, dsum, sizeof(double), &out));
  cucore_graph_exec *step = NULL;
  CHECK(cucore_graph_instantiate(g, CUCORE_GRAPH_INSTANTIATE_UPLOAD, s, &step));
  CHECK(cucore_graph_destroy(g)); /* the executable graph keeps what it needs */

  double first = -1, last = -1;
  for (int it = 0; it < STEPS; it++) {
    int from = it % 2, to = 1 - from;
    /* Swap: checked like a launch (a wrong list would be refused and change nothing). */
    CHECK(CUCORE_ARGS(as, du[from], du[to], df, h2, n));
    CHECK(cucore_graph_exec_set_kernel_args(step, sweep, as));
    CHECK(CUCORE_ARGS(ar, du[to], df, h2, n, dsum));
    CHECK(cucore_graph_exec_set_kernel_args(step, res, ar));
    CHECK(cucore_graph_launch(step, s));
    if (it == 0 || it == STEPS - 1 || (it + 1) % 500 == 0) {
      CHECK(cucore_stream_synchronize(s));
      printf("graph_jacobi: step %4d  residual^2 %.6e\n", it + 1, *hsum);
      if (it == 0) first = *hsum;
      last = *hsum;
    }
    cpu_sweep(from == 0 ? u : v, from == 0 ? v : u, f, h2);
  }
  CHECK(cucore_stream_synchronize(s));
  /* After an even number of steps the answer is in du[0] (CPU: u). */
  const float *want = STEPS % 2 ? v : u;
  float *got = malloc(N * sizeof *got);
  CHECK(cucore_memcpy_dtoh(dev, got, du[STEPS % 2], N * sizeof(float), NULL));
  double worst = 0;
  for (int i = 0; i < N; i++) {
    double d = fabs((double)got[i] - want[i]) / (fabs(want[i]) + 1e-6);
    if (d > worst) worst = d;
  }
  double cpu_res = cpu_residual(want, f, h2);
  int ok = worst < 1e-4 && fabs(last - cpu_res) <= 1e-3 * cpu_res + 1e-9 && last < first;
  printf("graph_jacobi: %d steps replayed from one executable graph, arguments swapped by checked "
         "node updates; largest relative difference from the CPU %.2e, residual^2 %.6e (CPU "
         "%.6e), down from %.6e: %s\n",
         STEPS, worst, last, cpu_res, first, ok ? "match" : "MISMATCH");

  cucore_graph_exec_destroy(step);
  cucore_args_destroy(as);
  cucore_args_destroy(ar);
  cucore_kernel_destroy(ksweep);
  cucore_kernel_destroy(kres);
  cucore_object_destroy(obj);
  for (int b = 0; b < 2; b++) cucore_mem_free(dev, du[b]);
  cucore_mem_free(dev, df);
  cucore_mem_free(dev, dsum);
  cucore_host_free(dev, hsum);
  cucore_stream_destroy(s);
  cucore_device_close(dev);
  free(f);
  free(u);
  free(v);
  free(got);
  return ok ? 0 : 1;
}
