/* struct_by_value.c -- a struct passed by value, with padding and 16-byte alignment, copied
 * when bound: the caller's variable may change or die before the launch. */
#include <string.h>

#include "common.h"

typedef struct {
  _Alignas(16) float scale; /* C twin of the kernel's struct __align__(16) transform */
  int offset;
  double bias;
} transform;

static const char *source =
    "struct __align__(16) transform { float scale; int offset; double bias; };\n"
    "extern \"C\" __global__ void apply(const int *in, double *out, transform t, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) out[i] = t.scale * (in[i] + t.offset) + t.bias;\n"
    "}\n";

static void bind_transform(cucore_args *args, float scale, int offset, double bias) {
  transform t;
  memset(&t, 0, sizeof t);
  t.scale = scale;
  t.offset = offset;
  t.bias = bias;
  CHECK(cucore_args_set_bytes(args, 2, &t, sizeof t, _Alignof(transform)));
} /* t is gone here; its bytes were copied */

int main(void) {
  cucore_device *dev = open_gpu_or_exit("struct_by_value");
  cucore_object *obj = compile_cuda(source, NULL);
  cucore_kernel *k = NULL;
  CHECK(cucore_object_get_kernel(obj, "apply", &k));
  cucore_param_info p;
  CHECK(cucore_kernel_get_param(k, 2, &p));
  printf("parameter 2: %u bytes at offset %u (C sizeof %zu)\n", p.size, p.offset,
         sizeof(transform));
  const int n = 1000;
  int *in = malloc(n * sizeof *in);
  double *out = malloc(n * sizeof *out);
  for (int i = 0; i < n; i++) in[i] = i - 500;
  cucore_devptr din, dout;
  CHECK(cucore_mem_alloc(dev, n * sizeof(int), &din));
  CHECK(cucore_mem_alloc(dev, n * sizeof(double), &dout));
  CHECK(cucore_memcpy_htod(dev, din, in, n * sizeof(int), NULL));
  cucore_args *args = NULL;
  CHECK(cucore_args_create(k, &args));
  CHECK(cucore_args_set_ptr(args, 0, din));
  CHECK(cucore_args_set_ptr(args, 1, dout));
  bind_transform(args, 0.25f, 7, 100.0);
  CHECK(cucore_args_set_i32(args, 3, n));
  cucore_stream *s = NULL;
  CHECK(cucore_stream_default(dev, &s));
  cucore_launch_config cfg = {.grid = {(n + 127) / 128}, .block = {128}, .stream = s};
  CHECK(cucore_launch(k, &cfg, args));
  CHECK(cucore_memcpy_dtoh(dev, out, dout, n * sizeof(double), NULL));
  int bad = 0;
  for (int i = 0; i < n; i++) bad += out[i] != 0.25f * (in[i] + 7) + 100.0;
  printf("struct_by_value: %s\n", bad ? "WRONG" : "matches the CPU");
  cucore_args_destroy(args);
  cucore_kernel_destroy(k);
  cucore_object_destroy(obj);
  cucore_mem_free(dev, din);
  cucore_mem_free(dev, dout);
  cucore_device_close(dev);
  free(in);
  free(out);
  return bad ? 1 : 0;
}
