/* embed_runtime_api.c -- cucore inside a program that already uses the CUDA runtime API: the
 * program owns the context, the stream, the memory and the event (cudaStreamCreate,
 * cudaMalloc, cudaEventCreate); cucore compiles a kernel, checks its arguments and launches it
 * on the program's own stream, then hands everything back untouched. */
#include <cuda_runtime.h>
#include <math.h>

#include "common.h"

#define CUDA_CHECK(call)                                                   \
  do {                                                                     \
    cudaError_t e_ = (call);                                               \
    if (e_ != cudaSuccess) {                                               \
      fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, \
              cudaGetErrorString(e_));                                     \
      exit(1);                                                             \
    }                                                                      \
  } while (0)

static const char *source =
    "extern \"C\" __global__ void scale_add(float *y, const float *x, float a, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = a * x[i] + y[i];\n"
    "}\n";

int main(void) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    printf("embed_runtime_api: no GPU here; nothing to run\n");
    return 0;
  }
  /* The program's own CUDA state, made with the runtime API. */
  const int n = 1 << 20;
  const float a = 0.5f;
  CUDA_CHECK(cudaSetDevice(0));
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaEvent_t done;
  CUDA_CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
  float *x = NULL, *y = NULL;
  CUDA_CHECK(cudaMalloc((void **)&x, n * sizeof(float)));
  CUDA_CHECK(cudaMalloc((void **)&y, n * sizeof(float)));
  float *hx = malloc(n * sizeof *hx), *hy = malloc(n * sizeof *hy), *out = malloc(n * sizeof *out);
  for (int i = 0; i < n; i++) {
    hx[i] = (float)(i % 1000) / 7.0f;
    hy[i] = (float)(i % 333);
  }
  CUDA_CHECK(cudaMemcpyAsync(x, hx, n * sizeof(float), cudaMemcpyHostToDevice, stream));
  CUDA_CHECK(cudaMemcpyAsync(y, hy, n * sizeof(float), cudaMemcpyHostToDevice, stream));

  /* cucore on the program's context (the runtime made the primary context current) and its
   * stream and event: wrapped, not owned. */
  cucore_device *dev = NULL;
  CHECK(cucore_device_from_context(NULL, &dev));
  cucore_stream *s = NULL;
  CHECK(cucore_stream_wrap(dev, (void *)stream, &s));
  cucore_event *ev = NULL;
  CHECK(cucore_event_wrap(dev, (void *)done, &ev));

  cucore_object *obj = compile_cuda(source, NULL);
  cucore_kernel *k = NULL;
  CHECK(cucore_object_get_kernel(obj, "scale_add", &k));
  cucore_args *args = NULL;
  CHECK(cucore_args_create(k, &args));
  /* A mistake is caught before the GPU sees it: the kernel takes four parameters. */
  cucore_status wrong = CUCORE_ARGS(args, (cucore_devptr)(uintptr_t)y, (cucore_devptr)(uintptr_t)x,
                                    a);
  printf("three arguments for four parameters: %s\n  %s\n", cucore_status_name(wrong),
         cucore_last_error());
  if (wrong == CUCORE_OK) return 1;
  CHECK(CUCORE_ARGS(args, (cucore_devptr)(uintptr_t)y, (cucore_devptr)(uintptr_t)x, a, n));
  cucore_launch_config cfg = {.grid = {(n + 255) / 256}, .block = {256}, .stream = s};
  CHECK(cucore_launch(k, &cfg, args));
  CHECK(cucore_event_record(ev, s));

  /* Back in the program: its event and stream order the copy after cucore's launch. */
  CUDA_CHECK(cudaEventSynchronize(done));
  CUDA_CHECK(cudaMemcpyAsync(out, y, n * sizeof(float), cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  int bad = 0;
  for (int i = 0; i < n; i++)
    if (fabsf(out[i] - (a * hx[i] + hy[i])) > 1e-4f * (1.0f + fabsf(out[i]))) bad++;
  printf("embed_runtime_api: %d elements launched by cucore on the program's stream, %d differ "
         "from the CPU\n",
         n, bad);

  /* cucore lets go; the program's stream, event and memory live on. */
  cucore_args_destroy(args);
  cucore_kernel_destroy(k);
  cucore_object_destroy(obj);
  CHECK(cucore_event_destroy(ev));
  CHECK(cucore_stream_destroy(s));
  CHECK(cucore_device_close(dev));
  CUDA_CHECK(cudaStreamSynchronize(stream)); /* still a valid stream */
  CUDA_CHECK(cudaEventQuery(done));          /* still a valid event */
  CUDA_CHECK(cudaFree(x));
  CUDA_CHECK(cudaFree(y));
  CUDA_CHECK(cudaEventDestroy(done));
  CUDA_CHECK(cudaStreamDestroy(stream));
  free(hx);
  free(hy);
  free(out);
  return bad ? 1 : 0;
}
