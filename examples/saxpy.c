/* saxpy.c -- compile a kernel at run time, launch it with checked arguments, compare with
 * the CPU. The smallest complete cucore program. */
#include <math.h>

#include "common.h"

static const char *source =
    "extern \"C\" __global__ void saxpy(float a, const float *x, float *y, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = a * x[i] + y[i];\n"
    "}\n";

int main(void) {
  cucore_device *dev = open_gpu_or_exit("saxpy");
  const int n = 1 << 20;
  const float a = 3.0f;
  float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *out = malloc(n * sizeof *out);
  for (int i = 0; i < n; i++) {
    x[i] = (float)i / n;
    y[i] = (float)(n - i) / n;
  }
  cucore_devptr dx, dy;
  CHECK(cucore_mem_alloc(dev, n * sizeof(float), &dx));
  CHECK(cucore_mem_alloc(dev, n * sizeof(float), &dy));
  CHECK(cucore_memcpy_htod(dev, dx, x, n * sizeof(float), NULL));
  CHECK(cucore_memcpy_htod(dev, dy, y, n * sizeof(float), NULL));

  cucore_object *obj = compile_cuda(source, NULL);
  cucore_kernel *saxpy = NULL;
  CHECK(cucore_object_get_kernel(obj, "saxpy", &saxpy));
  cucore_args *args = NULL;
  CHECK(cucore_args_create(saxpy, &args));
  CHECK(CUCORE_ARGS(args, a, dx, dy, n)); /* checked against the kernel's four parameters */

  cucore_stream *s = NULL;
  CHECK(cucore_stream_default(dev, &s));
  cucore_launch_config cfg = {.grid = {(n + 255) / 256}, .block = {256}, .stream = s};
  CHECK(cucore_launch(saxpy, &cfg, args));
  CHECK(cucore_stream_synchronize(s));
  CHECK(cucore_memcpy_dtoh(dev, out, dy, n * sizeof(float), NULL));

  int bad = 0;
  for (int i = 0; i < n; i++)
    if (fabsf(out[i] - (a * x[i] + y[i])) > 1e-5f) bad++;
  printf("saxpy: %d elements, %d differ from the CPU\n", n, bad);

  cucore_args_destroy(args);
  cucore_kernel_destroy(saxpy);
  cucore_object_destroy(obj);
  cucore_mem_free(dev, dx);
  cucore_mem_free(dev, dy);
  cucore_device_close(dev);
  free(x);
  free(y);
  free(out);
  return bad ? 1 : 0;
}
