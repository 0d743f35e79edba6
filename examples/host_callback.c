/* host_callback.c -- a host function queued between two kernels runs in stream order: it sees
 * the first kernel's result and runs before the second kernel. */
#include "common.h"

static const char *source =
    "extern \"C\" __global__ void fill(int *p, int v, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] = v; }\n";

typedef struct {
  const int *pinned;
  int n;
  long long sum_seen;
} callback_state;

static void on_host(void *user) { /* no CUDA calls allowed here */
  callback_state *cs = user;
  long long s = 0;
  for (int i = 0; i < cs->n; i++) s += cs->pinned[i];
  cs->sum_seen = s;
}

int main(void) {
  cucore_device *dev = open_gpu_or_exit("host_callback");
  cucore_object *obj = compile_cuda(source, NULL);
  cucore_kernel *k = NULL;
  CHECK(cucore_object_get_kernel(obj, "fill", &k));
  const int n = 1 << 16;
  int *pinned = NULL;
  CHECK(cucore_host_alloc(dev, n * sizeof(int), (void **)&pinned));
  cucore_devptr d;
  CHECK(cucore_mem_alloc(dev, n * sizeof(int), &d));
  cucore_stream *s = NULL;
  CHECK(cucore_stream_create(dev, CUCORE_STREAM_NON_BLOCKING, 0, &s));
  cucore_args *args = NULL;
  CHECK(cucore_args_create(k, &args));
  cucore_launch_config cfg = {.grid = {n / 256}, .block = {256}, .stream = s};
  callback_state cs = {pinned, n, -1};
  CHECK(CUCORE_ARGS(args, d, 3, n));
  CHECK(cucore_launch(k, &cfg, args));                           /* fill with 3 */
  CHECK(cucore_memcpy_dtoh(dev, pinned, d, n * sizeof(int), s)); /* into pinned memory */
  CHECK(cucore_launch_host_func(s, on_host, &cs));               /* sums what arrived */
  CHECK(CUCORE_ARGS(args, d, 5, n));
  CHECK(cucore_launch(k, &cfg, args)); /* then fill with 5 */
  CHECK(cucore_stream_synchronize(s));
  int ok = cs.sum_seen == 3LL * n;
  printf("host_callback: the host function saw sum %lld (expected %lld): %s\n", cs.sum_seen,
         3LL * n, ok ? "in stream order" : "OUT OF ORDER");
  cucore_args_destroy(args);
  cucore_kernel_destroy(k);
  cucore_object_destroy(obj);
  cucore_stream_destroy(s);
  cucore_mem_free(dev, d);
  cucore_host_free(dev, pinned);
  cucore_device_close(dev);
  return ok ? 0 : 1;
}
