/* vmm_grow.c -- a device buffer that grows in place (virtual memory).
 *
 * A buffer of 64 MiB is created in an address range of 1 GiB reserved up front, filled by a
 * kernel, and grown to 512 MiB: the address stays the same and the first 64 MiB keep their
 * contents (no copy: new physical memory is mapped after the old). A kernel then fills the
 * new part, and the buffer is checked whole. Copies past its end are refused by cucore's
 * bounds check, whatever size it has grown to. */
#include <string.h>

#include "common.h"

#define MIB ((size_t)1 << 20)

static const char *source =
    "extern \"C\" __global__ void iota(unsigned *x, unsigned from, unsigned n) {\n"
    "  unsigned i = from + blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) x[i] = i * 3u + 1u;\n"
    "}\n";

/* Writes x[i] = 3i + 1 for i in [from, to) with a kernel. */
static void fill(cucore_kernel *k, cucore_stream *s, cucore_devptr x, unsigned from, unsigned to) {
  cucore_args *args = NULL;
  CHECK(cucore_args_create(k, &args));
  CHECK(CUCORE_ARGS(args, x, from, to));
  cucore_launch_config cfg = {.grid = {(to - from + 255) / 256}, .block = {256}, .stream = s};
  CHECK(cucore_launch(k, &cfg, args));
  CHECK(cucore_stream_synchronize(s));
  cucore_args_destroy(args);
}

/* The number of words of [0, n) that are not 3i + 1. */
static size_t count_bad(cucore_device *dev, cucore_devptr x, size_t n) {
  size_t bad = 0, chunk = MIB;
  unsigned *h = malloc(chunk * 4);
  for (size_t at = 0; at < n; at += chunk) {
    size_t m = n - at < chunk ? n - at : chunk;
    CHECK(cucore_memcpy_dtoh(dev, h, x + at * 4, m * 4, NULL));
    for (size_t i = 0; i < m; i++) bad += h[i] != (unsigned)(at + i) * 3u + 1u;
  }
  free(h);
  return bad;
}

int main(void) {
  cucore_device *dev = open_gpu_or_exit("vmm_grow");
  cucore_stream *s = NULL;
  CHECK(cucore_stream_create(dev, CUCORE_STREAM_NON_BLOCKING, 0, &s));
  size_t min = 0, rec = 0;
  CHECK(cucore_vmm_get_granularity(dev, 0, &min, &rec));
  printf("vmm_grow: granularity %zu bytes (recommended %zu)\n", min, rec);

  cucore_vmm_buffer *buf = NULL;
  cucore_devptr x = 0, after = 0;
  size_t bytes = 0;
  CHECK(cucore_vmm_buffer_create(dev, 64 * MIB, 1024 * MIB, &buf));
  CHECK(cucore_vmm_buffer_get_address(buf, &x, &bytes));
  cucore_object *obj = compile_cuda(source, NULL);
  cucore_kernel *k = NULL;
  CHECK(cucore_object_get_kernel(obj, "iota", &k));
  fill(k, s, x, 0, (unsigned)(bytes / 4));
  printf("vmm_grow: %zu MiB at 0x%llx filled\n", bytes / MIB, (unsigned long long)x);

  CHECK(cucore_vmm_buffer_grow(buf, 512 * MIB));
  size_t old_words = bytes / 4;
  CHECK(cucore_vmm_buffer_get_address(buf, &after, &bytes));
  printf("vmm_grow: grown to %zu MiB at 0x%llx (%s address); old part: %zu bad words\n",
         bytes / MIB, (unsigned long long)after, after == x ? "the same" : "ANOTHER",
         count_bad(dev, x, old_words));
  fill(k, s, x, (unsigned)old_words, (unsigned)(bytes / 4));
  size_t bad = count_bad(dev, x, bytes / 4);
  printf("vmm_grow: whole buffer: %zu bad words\n", bad);

  unsigned word = 0;
  cucore_status st = cucore_memcpy_dtoh(dev, &word, x + bytes - 2, sizeof word, NULL);
  printf("vmm_grow: a copy 2 bytes past the end: %s\n  %s\n", cucore_status_name(st),
         cucore_last_error());

  cucore_kernel_destroy(k);
  cucore_object_destroy(obj);
  CHECK(cucore_vmm_buffer_destroy(buf));
  cucore_stream_destroy(s);
  cucore_device_close(dev);
  return bad || after != x || st == CUCORE_OK ? 1 : 0;
}
