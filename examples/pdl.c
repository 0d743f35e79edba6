/* pdl.c -- programmatic dependent launch: the second kernel is launched while the first still
 * runs, does its independent prologue, then waits (griddepcontrol.wait) for the first's data. */
#include "common.h"

static const char *source =
    "extern \"C\" __global__ void produce(int *data, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  asm volatile(\"griddepcontrol.launch_dependents;\");\n"
    "  if (i < n) data[i] = i * 2;\n"
    "}\n"
    "extern \"C\" __global__ void consume(const int *data, int *out, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  int prologue = i + 1;  /* work that needs nothing from produce */\n"
    "  asm volatile(\"griddepcontrol.wait;\" ::: \"memory\");\n"
    "  if (i < n) out[i] = data[i] + prologue;\n"
    "}\n";

int main(void) {
  cucore_device *dev = open_gpu_or_exit("pdl");
  cucore_device_props props;
  CHECK(cucore_device_get_props(0, &props));
  if (props.arch < 90) {
    printf("pdl: programmatic dependent launch needs sm_90; this is sm_%d\n", props.arch);
    return 0;
  }
  cucore_object *obj = compile_cuda(source, NULL);
  cucore_kernel *kp = NULL, *kc = NULL;
  CHECK(cucore_object_get_kernel(obj, "produce", &kp));
  CHECK(cucore_object_get_kernel(obj, "consume", &kc));
  const int n = 1 << 20;
  cucore_devptr data, out;
  CHECK(cucore_mem_alloc(dev, n * sizeof(int), &data));
  CHECK(cucore_mem_alloc(dev, n * sizeof(int), &out));
  cucore_args *ap = NULL, *ac = NULL;
  CHECK(cucore_args_create(kp, &ap));
  CHECK(cucore_args_create(kc, &ac));
  CHECK(CUCORE_ARGS(ap, data, n));
  CHECK(CUCORE_ARGS(ac, data, out, n));
  cucore_stream *s = NULL;
  CHECK(cucore_stream_create(dev, CUCORE_STREAM_NON_BLOCKING, 0, &s));
  cucore_launch_config first = {.grid = {n / 256}, .block = {256}, .stream = s};
  cucore_launch_config second = first;
  CHECK(cucore_launch_config_pdl(&second, 1));
  CHECK(cucore_launch(kp, &first, ap));
  CHECK(cucore_launch(kc, &second, ac));
  int *h = malloc(n * sizeof *h);
  CHECK(cucore_stream_synchronize(s));
  CHECK(cucore_memcpy_dtoh(dev, h, out, n * sizeof(int), NULL));
  int bad = 0;
  for (int i = 0; i < n; i++) bad += h[i] != i * 2 + i + 1;
  printf("pdl: consumer overlapped its prologue with the producer; %s\n",
         bad ? "WRONG results" : "results match the CPU");
  free(h);
  cucore_args_destroy(ap);
  cucore_args_destroy(ac);
  cucore_kernel_destroy(kp);
  cucore_kernel_destroy(kc);
  cucore_object_destroy(obj);
  cucore_stream_destroy(s);
  cucore_mem_free(dev, data);
  cucore_mem_free(dev, out);
  cucore_device_close(dev);
  return bad ? 1 : 0;
}
