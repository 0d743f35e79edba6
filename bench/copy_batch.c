/*
 * copy_batch.c -- 1 000 small copies (256 bytes each by default: a third host-to-device from
 * pinned memory, a third device-to-device, a third device-to-host into pinned memory) queued on
 * one stream and waited for, four ways, in one process, interleaved rounds (the order rotated
 * each round, one warm-up round), medians of per-round times and of per-round ratios (paired):
 *   raw cuMemcpyBatchAsync (the driver's entry point as cucore loaded it, CUDA 12.8's ABI);
 *   cucore_memcpy_batch (every copy bounds-checked, one driver call);
 *   1 000 cucore_memcpy calls on the stream (each checked, each its own driver call);
 *   1 000 raw cuMemcpyAsync calls (the floor of the single-copy path).
 * Two times per sample: until the last call returned (host time to queue) and until the stream
 * was drained. Targets: cucore_memcpy_batch within 10 % of the raw batch (drained, paired), and
 * its gain over the 1 000 single cucore_memcpy calls at least 90 % of the raw driver's own gain
 * of a batch over single calls (the driver sets what a batch can gain: 1.41x on an H200 for
 * 256-byte copies, so no fixed factor is the library's to meet).
 *   usage: bench_copy_batch [rounds] [copies] [bytes]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "runtime/runtime.h" /* DRV(): the raw driver entry points, for the baselines */

#define MAX_ROUNDS 64

enum { RAW_BATCH, CUCORE_BATCH, CUCORE_SINGLES, RAW_SINGLES, NMODES };

static const char *const names[NMODES] = {"raw cuMemcpyBatchAsync", "cucore_memcpy_batch",
                                          "cucore_memcpy x N, async", "raw cuMemcpyAsync x N"};

typedef struct ctx {
  cucore_device *dev;
  cucore_stream *s;
  CUstream hs;
  size_t n, bytes;
  cucore_copy_desc *c;
  CUdeviceptr *dsts, *srcs;
  size_t *sizes;
  unsigned char *hin, *hout;
  cucore_devptr a, b, d;
} ctx;

static int rounds = 21;
static double queued[NMODES][MAX_ROUNDS], drained[NMODES][MAX_ROUNDS];

static double median_of(const double *t) {
  double c[MAX_ROUNDS];
  memcpy(c, t, sizeof(double) * (size_t)rounds);
  return bench_median(c, rounds);
}

/* The median over rounds of t[m][r] / t[base][r]. */
static double paired(double t[][MAX_ROUNDS], int m, int base) {
  double rel[MAX_ROUNDS];
  for (int r = 0; r < rounds; r++) rel[r] = t[m][r] / t[base][r];
  return bench_median(rel, rounds);
}

static void submit(ctx *c, int m) {
  CUmemcpyAttributes attr;
  memset(&attr, 0, sizeof attr);
  attr.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
  size_t zero = 0, failed = 0;
  switch (m) {
  case RAW_BATCH:
    CU(DRV(cuMemcpyBatchAsync)(c->dsts, c->srcs, c->sizes, c->n, &attr, &zero, 1, &failed, c->hs));
    break;
  case CUCORE_BATCH:
    CHECK(cucore_memcpy_batch(c->dev, c->c, c->n, NULL, NULL, 0, c->s, NULL));
    break;
  case CUCORE_SINGLES:
    for (size_t i = 0; i < c->n; i++)
      CHECK(cucore_memcpy(c->dev, c->c[i].dst, c->c[i].src, c->c[i].bytes, c->s));
    break;
  default:
    for (size_t i = 0; i < c->n; i++)
      CU(DRV(cuMemcpyAsync)(c->dsts[i], c->srcs[i], c->sizes[i], c->hs));
  }
}

static void measure(ctx *c, int m, int r) {
  double t0 = bench_now_us();
  submit(c, m);
  double t1 = bench_now_us();
  CHECK(cucore_stream_synchronize(c->s));
  double t2 = bench_now_us();
  if (r >= 0) queued[m][r] = t1 - t0, drained[m][r] = t2 - t0;
}

/* The copies: slot i of each buffer is `bytes` long. */
static void make_copies(ctx *c) {
  size_t total = c->n * c->bytes, third = (c->n + 2) / 3;
  CHECK(cucore_host_alloc(c->dev, total, (void **)&c->hin));
  CHECK(cucore_host_alloc(c->dev, total, (void **)&c->hout));
  CHECK(cucore_mem_alloc(c->dev, total, &c->a));
  CHECK(cucore_mem_alloc(c->dev, total, &c->b));
  CHECK(cucore_mem_alloc(c->dev, total, &c->d));
  c->c = calloc(c->n, sizeof *c->c);
  c->dsts = calloc(c->n, sizeof *c->dsts);
  c->srcs = calloc(c->n, sizeof *c->srcs);
  c->sizes = calloc(c->n, sizeof *c->sizes);
  if (!c->c || !c->dsts || !c->srcs || !c->sizes) exit(1);
  for (size_t i = 0; i < c->n; i++) {
    size_t off = i * c->bytes;
    if (i < third)
      c->c[i] = (cucore_copy_desc){c->a + off, CUCORE_HOST_ADDR(c->hin + off), c->bytes};
    else if (i < 2 * third)
      c->c[i] = (cucore_copy_desc){c->d + off, c->b + off, c->bytes};
    else
      c->c[i] = (cucore_copy_desc){CUCORE_HOST_ADDR(c->hout + off), c->b + off, c->bytes};
    c->dsts[i] = (CUdeviceptr)c->c[i].dst;
    c->srcs[i] = (CUdeviceptr)c->c[i].src;
    c->sizes[i] = c->bytes;
  }
}

static void report(const ctx *c) {
  printf("\n%zu copies of %zu bytes (a third H2D from pinned memory, D2D, D2H into pinned "
         "memory), %d rounds\n",
         c->n, c->bytes, rounds);
  printf("  %-28s %12s %12s %12s\n", "", "queued (us)", "drained (us)", "per copy (us)");
  for (int m = 0; m < NMODES; m++)
    printf("  %-28s %12.1f %12.1f %12.3f\n", names[m], median_of(queued[m]), median_of(drained[m]),
           median_of(drained[m]) / (double)c->n);
  double over = paired(drained, CUCORE_BATCH, RAW_BATCH);
  double speedup = 1.0 / paired(drained, CUCORE_BATCH, CUCORE_SINGLES);
  printf("  cucore_memcpy_batch / raw cuMemcpyBatchAsync (drained, paired): %.3fx; queued %.3fx"
         "   within 10 %%: %s\n",
         over, paired(queued, CUCORE_BATCH, RAW_BATCH), bench_verdict(over <= 1.10));
  double raw_gain = 1.0 / paired(drained, RAW_BATCH, RAW_SINGLES);
  printf("  %zu single cucore_memcpy / cucore_memcpy_batch (drained, paired): %.2fx; raw "
         "singles / raw batch %.2fx   at least 0.9 x the raw gain: %s\n",
         c->n, speedup, raw_gain, bench_verdict(speedup >= 0.9 * raw_gain));
}

int main(int argc, char **argv) {
  rounds = bench_arg(argc, argv, 1, 21, MAX_ROUNDS);
  ctx c = {0};
  c.n = (size_t)bench_arg(argc, argv, 2, 1000, 1 << 20);
  c.bytes = (size_t)bench_arg(argc, argv, 3, 256, 1 << 24);
  if (bench_no_gpu("bench_copy_batch")) return 0;
  CHECK(cucore_device_open(0, &c.dev));
  CHECK(cucore_stream_create(c.dev, CUCORE_STREAM_NON_BLOCKING, 0, &c.s));
  CHECK(cucore_stream_get_native(c.s, (void **)&c.hs));
  cucore_device_props props;
  CHECK(cucore_device_get_props(0, &props));
  printf("device: %s (sm_%d), driver %d; modes interleaved, order rotated each round, one "
         "warm-up round; paired = median over rounds of the per-round ratio\n",
         props.name, props.arch, cc_drv.version);
  if (!DRV(cuMemcpyBatchAsync)) {
    printf("bench_copy_batch: the driver has no cuMemcpyBatchAsync (CUDA 12.8); nothing "
           "measured\n");
    return 0;
  }
  make_copies(&c);
  for (int r = -1; r < rounds; r++)
    for (int m0 = 0; m0 < NMODES; m0++) measure(&c, (m0 + (r < 0 ? 0 : r)) % NMODES, r);
  report(&c);
  cucore_stream_destroy(c.s);
  cucore_device_close(c.dev);
  return 0;
}
