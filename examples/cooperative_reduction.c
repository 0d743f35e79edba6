/* cooperative_reduction.c -- a grid-wide sum with one cooperative launch: every block adds its
 * share, the grid synchronises, block 0 adds the partial sums. */
#include "common.h"

static const char *source =
    "#include <cooperative_groups.h>\n"
    "namespace cg = cooperative_groups;\n"
    "extern \"C\" __global__ void grid_sum(const float *in, float *partial, float *out, int n) {\n"
    "  __shared__ float s[256];\n"
    "  cg::grid_group grid = cg::this_grid();\n"
    "  float v = 0;\n"
    "  for (int i = grid.thread_rank(); i < n; i += grid.size()) v += in[i];\n"
    "  s[threadIdx.x] = v;\n"
    "  __syncthreads();\n"
    "  for (int w = blockDim.x / 2; w > 0; w /= 2) {\n"
    "    if (threadIdx.x < w) s[threadIdx.x] += s[threadIdx.x + w];\n"
    "    __syncthreads();\n"
    "  }\n"
    "  if (threadIdx.x == 0) partial[blockIdx.x] = s[0];\n"
    "  grid.sync();\n"
    "  if (grid.thread_rank() == 0) {\n"
    "    float t = 0;\n"
    "    for (int b = 0; b < gridDim.x; b++) t += partial[b];\n"
    "    *out = t;\n"
    "  }\n"
    "}\n";

int main(void) {
  cucore_device *dev = open_gpu_or_exit("cooperative_reduction");
  cucore_device_props props;
  CHECK(cucore_device_get_props(0, &props));
  cucore_object *obj = compile_cuda(source, NULL);
  cucore_kernel *k = NULL;
  CHECK(cucore_object_get_kernel(obj, "grid_sum", &k));
  const int n = 1 << 24;
  float *h = malloc(n * sizeof *h);
  double want = 0;
  for (int i = 0; i < n; i++) {
    h[i] = (float)((i % 17) - 8) / 8.0f;
    want += h[i];
  }
  unsigned blocks = (unsigned)props.sm_count; /* one block per SM is always co-resident */
  cucore_devptr din, dpart, dout;
  CHECK(cucore_mem_alloc(dev, n * sizeof(float), &din));
  CHECK(cucore_mem_alloc(dev, blocks * sizeof(float), &dpart));
  CHECK(cucore_mem_alloc(dev, sizeof(float), &dout));
  CHECK(cucore_memcpy_htod(dev, din, h, n * sizeof(float), NULL));
  cucore_args *args = NULL;
  CHECK(cucore_args_create(k, &args));
  CHECK(CUCORE_ARGS(args, din, dpart, dout, n));
  cucore_stream *s = NULL;
  CHECK(cucore_stream_default(dev, &s));
  cucore_launch_config cfg = {.grid = {blocks}, .block = {256}, .stream = s};
  CHECK(cucore_launch_config_cooperative(&cfg, 1));
  CHECK(cucore_launch(k, &cfg, args));
  float got = 0;
  CHECK(cucore_memcpy_dtoh(dev, &got, dout, sizeof got, NULL));
  int ok = got == (float)want;
  printf("cooperative_reduction: %d values on %u blocks: GPU %.1f, CPU %.1f: %s\n", n, blocks, got,
         want, ok ? "match" : "DIFFER");
  cucore_args_destroy(args);
  cucore_kernel_destroy(k);
  cucore_object_destroy(obj);
  cucore_mem_free(dev, din);
  cucore_mem_free(dev, dpart);
  cucore_mem_free(dev, dout);
  cucore_device_close(dev);
  free(h);
  return ok ? 0 : 1;
}
