/* template_kernel.c -- one templated kernel, two instantiations, found by name expression. */
#include "common.h"

static const char *source = "template <typename T> __global__ void scale(T *x, T factor, int n) {\n"
                            "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                            "  if (i < n) x[i] *= factor;\n"
                            "}\n";

int main(void) {
  cucore_device *dev = open_gpu_or_exit("template_kernel");
  const char *exprs[] = {"scale<float>", "scale<double>", NULL};
  cucore_object *obj = compile_cuda(source, exprs);
  const char *mangled = NULL;
  CHECK(cucore_object_get_lowered_name(obj, "scale<double>", &mangled));
  printf("scale<double> is %s in the binary\n", mangled);

  cucore_kernel *kd = NULL;
  CHECK(cucore_object_get_kernel(obj, "scale<double>", &kd));
  const int n = 4096;
  double *h = malloc(n * sizeof *h);
  for (int i = 0; i < n; i++) h[i] = i;
  cucore_devptr d;
  CHECK(cucore_mem_alloc(dev, n * sizeof(double), &d));
  CHECK(cucore_memcpy_htod(dev, d, h, n * sizeof(double), NULL));
  cucore_args *args = NULL;
  CHECK(cucore_args_create(kd, &args));
  /* 0.5f would be refused: scale<double> takes a double factor. */
  cucore_status wrong = CUCORE_ARGS(args, d, 0.5f, n);
  printf("a float for T=double: %s (%s)\n", cucore_status_name(wrong), cucore_last_error());
  CHECK(CUCORE_ARGS(args, d, 0.5, n));
  cucore_stream *s = NULL;
  CHECK(cucore_stream_default(dev, &s));
  cucore_launch_config cfg = {.grid = {n / 256}, .block = {256}, .stream = s};
  CHECK(cucore_launch(kd, &cfg, args));
  CHECK(cucore_memcpy_dtoh(dev, h, d, n * sizeof(double), NULL));
  int bad = CUCORE_CODE(wrong) != CUCORE_ARG_SIZE;
  for (int i = 0; i < n; i++) bad += h[i] != 0.5 * i;
  printf("template_kernel: %s\n", bad ? "WRONG" : "matches the CPU");
  cucore_args_destroy(args);
  cucore_kernel_destroy(kd);
  cucore_object_destroy(obj);
  cucore_mem_free(dev, d);
  cucore_device_close(dev);
  free(h);
  return bad ? 1 : 0;
}
