/*
 * memory.c -- cucore's memory calls against the raw driver, in one process, interleaved rounds
 * (the order of the modes rotated each round), medians of per-round times and of per-round
 * ratios (paired):
 *   (a) a stream-ordered alloc + free pair of 64 KiB: raw cuMemAllocAsync + cuMemFreeAsync on
 *       the default pool against cucore_mem_alloc_async + cucore_mem_free_async (same pool),
 *       and raw cuMemAllocFromPoolAsync against cucore_mem_pool_alloc_async on a created pool
 *       (target: within 5 %);
 *   (b) a pinned alloc + free pair of 64 KiB, 1 MiB and 16 MiB: raw cuMemAllocHost +
 *       cuMemFreeHost against a warmed-up cucore_host_pool (target: at least 100 times faster);
 *   (c) host <-> device copy bandwidth, 4 KiB .. 256 MiB, async copies back to back on one
 *       stream: raw cuMemcpy*Async from cuMemAllocHost memory against cucore_memcpy_* from a
 *       pinned-pool block (target: within 3 %); the raw copy from the pool block is shown too,
 *       to tell the memory from the call;
 *   (d) what strict kernel-pointer checks cost per argument bound (no target: the documented
 *       cost of CUCORE_MEM_CHECK_KERNEL_POINTERS);
 *   (e) pinned blocks allocated on one thread and freed on another, in batches of 64 (no
 *       target: what a producer/consumer pipeline pays for the free's cross-thread path and the
 *       asymmetric fences' revocations), against the same batches on one thread and the raw
 *       driver's cross-thread pair.
 * Each line ends with its target and PASS or MISS.
 *   usage: bench_memory [rounds]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/asym_fence.h" /* revocations, for (e) */
#include "bench_util.h"
#include "runtime/runtime.h" /* DRV(): the raw driver entry points, for the baseline */

#define MAX_ROUNDS 64
#define MAX_MODES 4

static int rounds = 21;

/* The median of one series (copied: the series stays in round order for the pairing). */
static double median_of(const double *t) {
  double c[MAX_ROUNDS];
  memcpy(c, t, sizeof(double) * (size_t)rounds);
  return bench_median(c, rounds);
}

/* The median over rounds of t[m][r] / t[0][r]. */
static double paired_ratio(double t[][MAX_ROUNDS], int m) {
  double rel[MAX_ROUNDS];
  for (int r = 0; r < rounds; r++) rel[r] = t[m][r] / t[0][r];
  return bench_median(rel, rounds);
}

/* Runs `modes` measurements `rounds` times, order rotated each round, after one warm-up round.
 * measure(m) returns one sample of mode m. */
static int cur_round; /* the round being measured (-1: warm-up) */
static void interleave(int modes, double t[][MAX_ROUNDS], double (*measure)(int, void *),
                       void *ctx) {
  for (int r = -1; r < rounds; r++)
    for (int m0 = 0; m0 < modes; m0++) {
      cur_round = r;
      int m = (m0 + (r < 0 ? 0 : r)) % modes;
      double v = measure(m, ctx);
      if (r >= 0) t[m][r] = v;
    }
}

/* ---- (a) stream-ordered alloc + free ------------------------------------------------------- */

typedef struct async_ctx {
  cucore_stream *s;
  CUstream hs;
  cucore_mem_pool *pool;
  CUmemoryPool hpool;
  size_t bytes;
  int pairs;
} async_ctx;

enum { RAW_DEFAULT, CUCORE_DEFAULT, RAW_POOL, CUCORE_POOL, NASYNC };

static double measure_async(int m, void *p) {
  async_ctx *c = p;
  CHECK(cucore_stream_synchronize(c->s));
  double t0 = bench_now_ns();
  for (int i = 0; i < c->pairs; i++) {
    CUdeviceptr d = 0;
    cucore_devptr x = 0;
    switch (m) {
    case RAW_DEFAULT:
      CU(DRV(cuMemAllocAsync)(&d, c->bytes, c->hs));
      CU(DRV(cuMemFreeAsync)(d, c->hs));
      break;
    case CUCORE_DEFAULT:
      if (cucore_mem_alloc_async(c->s, c->bytes, &x) != CUCORE_OK ||
          cucore_mem_free_async(c->s, x) != CUCORE_OK)
        exit(3);
      break;
    case RAW_POOL:
      CU(DRV(cuMemAllocFromPoolAsync)(&d, c->bytes, c->hpool, c->hs));
      CU(DRV(cuMemFreeAsync)(d, c->hs));
      break;
    default:
      if (cucore_mem_pool_alloc_async(c->pool, c->s, c->bytes, &x) != CUCORE_OK ||
          cucore_mem_pool_free_async(c->pool, c->s, x) != CUCORE_OK)
        exit(4);
      break;
    }
  }
  double t = (bench_now_ns() - t0) / c->pairs;
  CHECK(cucore_stream_synchronize(c->s));
  return t;
}

static void bench_async(cucore_device *dev, cucore_stream *s, CUstream hs) {
  async_ctx c = {.s = s, .hs = hs, .bytes = 64 << 10, .pairs = 2000};
  /* Both pools keep their memory between rounds (the setting an alloc-per-step loop wants). */
  cucore_mem_pool *dp;
  CHECK(cucore_mem_pool_default(dev, &dp));
  CHECK(cucore_mem_pool_set_attr(dp, CUCORE_POOL_RELEASE_THRESHOLD, UINT64_MAX));
  cucore_mem_pool_props props = {.release_threshold = UINT64_MAX};
  CHECK(cucore_mem_pool_create(dev, &props, &c.pool));
  CHECK(cucore_mem_pool_get_native(c.pool, (void **)&c.hpool));
  double t[NASYNC][MAX_ROUNDS];
  interleave(NASYNC, t, measure_async, &c);
  printf("\n(a) stream-ordered alloc + free of 64 KiB, %d pairs per sample, %d rounds "
         "(per pair; target: cucore within 5 %% of the raw driver on the same pool)\n",
         c.pairs, rounds);
  printf("  %-52s %10s %10s  %s\n", "", "median", "paired", "target");
  static const char *const names[NASYNC] = {"raw cuMemAllocAsync + cuMemFreeAsync (default pool)",
                                            "cucore_mem_alloc_async + cucore_mem_free_async",
                                            "raw cuMemAllocFromPoolAsync + cuMemFreeAsync (pool)",
                                            "cucore_mem_pool_alloc_async + _free_async"};
  for (int m = 0; m < NASYNC; m++) {
    double med = median_of(t[m]) / 1e3;
    if (m == RAW_DEFAULT || m == RAW_POOL) {
      printf("  %-52s %7.3f us\n", names[m], med);
      continue;
    }
    /* Paired against the raw call on the same pool. */
    double rel[MAX_ROUNDS];
    for (int r = 0; r < rounds; r++) rel[r] = t[m][r] / t[m - 1][r] - 1.0;
    double paired = 100.0 * bench_median(rel, rounds);
    printf("  %-52s %7.3f us %+8.1f %%  within 5 %%: %s\n", names[m], med, paired,
           bench_verdict(paired <= 5.0));
  }
  cucore_mem_pool_stats st;
  CHECK(cucore_mem_pool_get_stats(c.pool, &st));
  printf("  (created pool after the runs: %llu bytes reserved, %llu live allocations)\n",
         (unsigned long long)st.reserved_current, (unsigned long long)st.live_allocations);
  CHECK(cucore_mem_pool_destroy(c.pool));
  CHECK(cucore_mem_pool_set_attr(dp, CUCORE_POOL_RELEASE_THRESHOLD, 0));
  CHECK(cucore_mem_pool_trim(dp, 0));
  CHECK(cucore_mem_pool_destroy(dp));
}

/* ---- (b) pinned alloc + free ----------------------------------------------------------------- */

typedef struct pinned_ctx {
  cucore_device *dev;
  cucore_host_pool *pool;
  size_t bytes;
  int raw_pairs, pool_pairs;
} pinned_ctx;

enum { RAW_PINNED, CUCORE_HOST_ALLOC, CUCORE_HOST_POOL, NPINNED };

static double measure_pinned(int m, void *p) {
  pinned_ctx *c = p;
  int n = m == CUCORE_HOST_POOL ? c->pool_pairs : c->raw_pairs;
  double t0 = bench_now_ns();
  for (int i = 0; i < n; i++) {
    void *h = NULL;
    if (m == RAW_PINNED) {
      CU(DRV(cuMemAllocHost)(&h, c->bytes));
      CU(DRV(cuMemFreeHost)(h));
    } else if (m == CUCORE_HOST_ALLOC) {
      if (cucore_host_alloc(c->dev, c->bytes, &h) != CUCORE_OK ||
          cucore_host_free(c->dev, h) != CUCORE_OK)
        exit(5);
    } else {
      if (cucore_host_pool_alloc(c->pool, c->bytes, &h) != CUCORE_OK ||
          cucore_host_pool_free(c->pool, h) != CUCORE_OK)
        exit(6);
    }
  }
  return (bench_now_ns() - t0) / n;
}

/* The driver's price of a pinned pair grows with the size (it pins every page): 64 KiB may
 * come from a cache of its own, megabytes are pinned afresh. */
static void bench_pinned(cucore_device *dev, size_t bytes) {
  pinned_ctx c = {.dev = dev,
                  .bytes = bytes,
                  .raw_pairs = bytes <= (64 << 10) ? 200 : 10,
                  .pool_pairs = 20000};
  CHECK(cucore_host_pool_create(dev, NULL, &c.pool));
  double t[NPINNED][MAX_ROUNDS];
  interleave(NPINNED, t, measure_pinned, &c); /* the warm-up round fills the pool's cache */
  cucore_host_pool_stats st;
  CHECK(cucore_host_pool_get_stats(c.pool, &st));
  char size[32];
  if (bytes >= (1u << 20))
    snprintf(size, sizeof size, "%zu MiB", bytes >> 20);
  else
    snprintf(size, sizeof size, "%zu KiB", bytes >> 10);
  printf("\n(b) pinned host alloc + free of %s, %d rounds (per pair; target: the pinned pool "
         "after warm-up at least 100x faster than the raw driver)\n",
         size, rounds);
  printf("  %-52s %12s %10s  %s\n", "", "median", "paired", "target");
  printf("  %-52s %9.1f us\n", "raw cuMemAllocHost + cuMemFreeHost",
         median_of(t[RAW_PINNED]) / 1e3);
  double x = 1.0 / paired_ratio(t, CUCORE_HOST_ALLOC);
  printf("  %-52s %9.1f us %8.1fx   (no pool: no target)\n",
         "cucore_host_alloc + cucore_host_free (no pool)", median_of(t[CUCORE_HOST_ALLOC]) / 1e3,
         x);
  x = 1.0 / paired_ratio(t, CUCORE_HOST_POOL);
  printf("  %-52s %9.3f us %8.0fx   at least 100x: %s\n",
         "cucore_host_pool_alloc + cucore_host_pool_free", median_of(t[CUCORE_HOST_POOL]) / 1e3, x,
         bench_verdict(x >= 100.0));
  printf("  (pool: %llu hits, %llu misses)\n", (unsigned long long)st.hits,
         (unsigned long long)st.misses);
  CHECK(cucore_host_pool_destroy(c.pool));
}

/* ---- (c) copy bandwidth ---------------------------------------------------------------------- */

typedef struct copy_ctx {
  cucore_device *dev;
  cucore_stream *s;
  CUstream hs;
  void *raw_host, *pool_host;
  cucore_devptr d;
  size_t bytes;
  int reps, to_device;
} copy_ctx;

enum { RAW_COPY, RAW_FROM_POOL, CUCORE_FROM_POOL, NCOPY };

/* The host's time per call until the last copy was queued (before the wait), by mode: when it
 * is close to the time per copy, the copies are bound by the calls, not the copy engine. */
static double submit_ns[NCOPY][MAX_ROUNDS];

static double measure_copy(int m, void *p) {
  copy_ctx *c = p;
  void *h = m == RAW_COPY ? c->raw_host : c->pool_host;
  CHECK(cucore_stream_synchronize(c->s));
  double t0 = bench_now_ns();
  for (int i = 0; i < c->reps; i++) {
    if (m == CUCORE_FROM_POOL) {
      cucore_status st = c->to_device ? cucore_memcpy_htod(c->dev, c->d, h, c->bytes, c->s)
                                      : cucore_memcpy_dtoh(c->dev, h, c->d, c->bytes, c->s);
      if (st != CUCORE_OK) exit(7);
    } else if (c->to_device) {
      CU(DRV(cuMemcpyHtoDAsync)((CUdeviceptr)c->d, h, c->bytes, c->hs));
    } else {
      CU(DRV(cuMemcpyDtoHAsync)(h, (CUdeviceptr)c->d, c->bytes, c->hs));
    }
  }
  if (cur_round >= 0) submit_ns[m][cur_round] = (bench_now_ns() - t0) / c->reps;
  CHECK(cucore_stream_synchronize(c->s));
  double secs = (bench_now_ns() - t0) / 1e9;
  return (double)c->bytes * c->reps / secs / 1e9; /* GB/s */
}

static void bench_copies(cucore_device *dev, cucore_stream *s, CUstream hs) {
  const size_t max = (size_t)256 << 20;
  copy_ctx c = {.dev = dev, .s = s, .hs = hs};
  cucore_host_pool *pool;
  CHECK(cucore_host_pool_create(dev, NULL, &pool));
  CU(DRV(cuMemAllocHost)(&c.raw_host, max));
  CHECK(cucore_host_pool_alloc(pool, max, &c.pool_host));
  CHECK(cucore_mem_alloc(dev, max, &c.d));
  memset(c.raw_host, 1, max);
  memset(c.pool_host, 1, max);
  printf("\n(c) copy bandwidth, async copies back to back on one stream, %d rounds (GB/s, "
         "medians; target: cucore from pinned-pool memory within 3 %% of the raw driver from "
         "cuMemAllocHost memory)\n",
         rounds);
  printf("  %-4s %9s %10s %12s %12s %10s %10s  %s\n", "dir", "size", "raw", "raw, pool",
         "cucore,pool", "raw,pool", "cucore", "target");
  printf("  %-4s %9s %10s %12s %12s %10s %10s\n", "", "", "", "", "", "paired", "paired");
  for (int dir = 0; dir < 2; dir++) {
    c.to_device = dir == 0;
    for (size_t b = 4 << 10; b <= max; b *= 4) {
      c.bytes = b;
      /* About 64 MiB per sample, at least 4 and at most 2000 copies. */
      size_t reps = ((size_t)64 << 20) / b;
      c.reps = reps < 4 ? 4 : reps > 2000 ? 2000 : (int)reps;
      double t[NCOPY][MAX_ROUNDS];
      interleave(NCOPY, t, measure_copy, &c);
      double paired = 100.0 *
                      (paired_ratio(t, CUCORE_FROM_POOL) - 1.0); /* bandwidth: higher is better */
      double pool_mem = 100.0 *
                        (paired_ratio(t, RAW_FROM_POOL) - 1.0); /* the memory, not the call */
      char size[32];
      if (b >= (1u << 20))
        snprintf(size, sizeof size, "%zu MiB", b >> 20);
      else
        snprintf(size, sizeof size, "%zu KiB", b >> 10);
      printf("  %-4s %9s %10.2f %12.2f %12.2f %+8.1f %% %+8.1f %%  within 3 %%: %s\n",
             c.to_device ? "H2D" : "D2H", size, median_of(t[RAW_COPY]), median_of(t[RAW_FROM_POOL]),
             median_of(t[CUCORE_FROM_POOL]), pool_mem, paired, bench_verdict(paired >= -3.0));
      if (b <= (64u << 10))
        printf("  %-4s %9s host time per call until queued: raw %.0f ns, raw from the pool block "
               "%.0f ns, cucore %.0f ns (per copy at the raw bandwidth: %.0f ns)\n",
               "", "", median_of(submit_ns[RAW_COPY]), median_of(submit_ns[RAW_FROM_POOL]),
               median_of(submit_ns[CUCORE_FROM_POOL]), (double)b / median_of(t[RAW_COPY]));
    }
  }
  CHECK(cucore_mem_free(dev, c.d));
  CHECK(cucore_host_pool_free(pool, c.pool_host));
  CHECK(cucore_host_pool_destroy(pool));
  CU(DRV(cuMemFreeHost)(c.raw_host));
}

/* ---- (d) strict pointer checks --------------------------------------------------------------- */

typedef struct strict_ctx {
  cucore_args *plain, *checked;
  cucore_devptr recorded, foreign;
  int binds;
} strict_ctx;

enum { BIND_PLAIN, BIND_CHECKED_RECORDED, BIND_CHECKED_FOREIGN, NSTRICT };

static double measure_strict(int m, void *p) {
  strict_ctx *c = p;
  cucore_args *a = m == BIND_PLAIN ? c->plain : c->checked;
  cucore_devptr v = m == BIND_CHECKED_FOREIGN ? c->foreign : c->recorded;
  int n = m == BIND_CHECKED_FOREIGN ? c->binds / 20 : c->binds;
  double t0 = bench_now_ns();
  for (int i = 0; i < n; i++)
    if (cucore_args_set_ptr(a, 0, v) != CUCORE_OK) exit(8);
  return (bench_now_ns() - t0) / n;
}

static void bench_strict(cucore_device *dev) {
  const char *src = "extern \"C\" __global__ void k(float *x) { if (x) x[0] = 1.0f; }\n";
  cucore_program *p;
  CHECK(cucore_program_create(CUCORE_CODE_CUDA_CPP, src, 0, "bench_memory.cu", NULL, &p));
  cucore_object *obj;
  CHECK(cucore_program_compile(p, CUCORE_CODE_CUBIN, &obj));
  cucore_kernel *k;
  CHECK(cucore_object_get_kernel(obj, "k", &k));
  strict_ctx c = {.binds = 200000};
  CHECK(cucore_args_create(k, &c.plain));
  CHECK(cucore_args_create(k, &c.checked));
  CHECK(cucore_args_check_pointers(c.checked, dev));
  CHECK(cucore_mem_alloc(dev, 4096, &c.recorded));
  CUdeviceptr raw = 0;
  CU(DRV(cuMemAlloc)(&raw, 4096));
  c.foreign = raw;
  double t[NSTRICT][MAX_ROUNDS];
  interleave(NSTRICT, t, measure_strict, &c);
  printf("\n(d) strict kernel-pointer checks, per pointer bound (cucore_args_set_ptr), %d rounds "
         "(no target: the cost CUCORE_MEM_CHECK_KERNEL_POINTERS documents)\n",
         rounds);
  printf("  %-60s %8.1f ns\n", "checks off", median_of(t[BIND_PLAIN]));
  printf("  %-60s %8.1f ns\n", "checks on, memory cucore allocated (one registry lookup)",
         median_of(t[BIND_CHECKED_RECORDED]));
  printf("  %-60s %8.1f ns\n", "checks on, memory cucore did not allocate (asks the driver)",
         median_of(t[BIND_CHECKED_FOREIGN]));
  CU(DRV(cuMemFree)(raw));
  CHECK(cucore_mem_free(dev, c.recorded));
  cucore_args_destroy(c.plain);
  cucore_args_destroy(c.checked);
  cucore_kernel_destroy(k);
  cucore_object_destroy(obj);
  cucore_program_destroy(p);
}

/* ---- (e) pinned blocks freed by another thread ----------------------------------------------- */

enum { XT_BATCH = 64, XT_BATCHES = 50, XT_OWN = 64 };
enum { XT_RAW, XT_SAME, XT_CROSS, NXT };

typedef struct xt_ctx {
  cucore_device *dev;
  cucore_host_pool *pool;
  void *blocks[XT_BATCH];
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int mode, filled, emptied, stop;
  double alloc_ns; /* the producer's time for the batches of one sample */
} xt_ctx;

static void xt_wait(xt_ctx *c, int *a, int *b) { /* until *a > *b, or stop */
  pthread_mutex_lock(&c->lock);
  while (*a <= *b && !c->stop) pthread_cond_wait(&c->cond, &c->lock);
  pthread_mutex_unlock(&c->lock);
}

static void xt_bump(xt_ctx *c, int *v) {
  pthread_mutex_lock(&c->lock);
  (*v)++;
  pthread_cond_broadcast(&c->cond);
  pthread_mutex_unlock(&c->lock);
}

/* The producer: fills a batch whenever the consumer emptied the last one. Between batches it
 * also allocates and frees XT_OWN blocks of its own (the pool path a thread's own frees take:
 * it turns fast again after a while, and the consumer's next free revokes it). */
static void *xt_producer(void *arg) {
  xt_ctx *c = arg;
  CU(DRV(cuCtxSetCurrent)(c->dev->ctx));
  int emptied = 0;
  for (;;) {
    pthread_mutex_lock(&c->lock);
    while (c->emptied < emptied && !c->stop) pthread_cond_wait(&c->cond, &c->lock);
    int stop = c->stop;
    pthread_mutex_unlock(&c->lock);
    if (stop) return NULL;
    double t0 = bench_now_ns();
    for (int i = 0; i < XT_BATCH; i++) {
      if (c->mode == XT_RAW)
        CU(DRV(cuMemAllocHost)(&c->blocks[i], 65536));
      else
        CHECK(cucore_host_pool_alloc(c->pool, 65536, &c->blocks[i]));
    }
    c->alloc_ns += bench_now_ns() - t0;
    if (c->mode != XT_RAW)
      for (int i = 0; i < XT_OWN; i++) {
        void *h;
        CHECK(cucore_host_pool_alloc(c->pool, 65536, &h));
        CHECK(cucore_host_pool_free(c->pool, h));
      }
    emptied++;
    xt_bump(c, &c->filled);
  }
}

/* Per pair: the producer's allocation plus the consumer's free (cross), or both on this thread
 * in the same batches (same). */
static double measure_xt(int m, void *p) {
  xt_ctx *c = p;
  double free_ns = 0;
  if (m == XT_SAME) {
    for (int b = 0; b < XT_BATCHES; b++) {
      double t0 = bench_now_ns();
      for (int i = 0; i < XT_BATCH; i++)
        CHECK(cucore_host_pool_alloc(c->pool, 65536, &c->blocks[i]));
      for (int i = 0; i < XT_BATCH; i++) CHECK(cucore_host_pool_free(c->pool, c->blocks[i]));
      free_ns += bench_now_ns() - t0;
    }
    return free_ns / (XT_BATCHES * XT_BATCH);
  }
  pthread_t th;
  c->mode = m;
  c->filled = c->emptied = c->stop = 0;
  c->alloc_ns = 0;
  if (pthread_create(&th, NULL, xt_producer, c) != 0) exit(12);
  for (int b = 0; b < XT_BATCHES; b++) {
    xt_wait(c, &c->filled, &c->emptied);
    double t0 = bench_now_ns();
    for (int i = 0; i < XT_BATCH; i++) {
      if (m == XT_RAW)
        CU(DRV(cuMemFreeHost)(c->blocks[i]));
      else
        CHECK(cucore_host_pool_free(c->pool, c->blocks[i]));
    }
    free_ns += bench_now_ns() - t0;
    pthread_mutex_lock(&c->lock); /* the last batch stops the producer in the same step */
    c->emptied++;
    c->stop = b == XT_BATCHES - 1;
    pthread_cond_broadcast(&c->cond);
    pthread_mutex_unlock(&c->lock);
  }
  pthread_join(th, NULL);
  return (free_ns + c->alloc_ns) / (XT_BATCHES * XT_BATCH);
}

static void bench_cross_thread(cucore_device *dev) {
  xt_ctx c = {.dev = dev};
  pthread_mutex_init(&c.lock, NULL);
  pthread_cond_init(&c.cond, NULL);
  CHECK(cucore_host_pool_create(dev, NULL, &c.pool));
  uint64_t revoked = cc_asym_revocations();
  double t[NXT][MAX_ROUNDS];
  interleave(NXT, t, measure_xt, &c);
  revoked = cc_asym_revocations() - revoked;
  printf("\n(e) pinned 64 KiB blocks allocated on one thread and freed on another, %d batches of "
         "%d per sample, %d rounds (per pair: allocation + free; no target)\n",
         XT_BATCHES, XT_BATCH, rounds);
  printf("  %-60s %9.3f us\n", "raw cuMemAllocHost, cuMemFreeHost on another thread",
         median_of(t[XT_RAW]) / 1e3);
  printf("  %-60s %9.3f us\n", "cucore pinned pool, both on one thread (same batches)",
         median_of(t[XT_SAME]) / 1e3);
  printf("  %-60s %9.3f us   (%.1fx the raw pair)\n", "cucore pinned pool, freed on another thread",
         median_of(t[XT_CROSS]) / 1e3, median_of(t[XT_RAW]) / median_of(t[XT_CROSS]));
  printf("  (asymmetric fences: membarrier(2) %s; %llu revocations of the producer over %d "
         "samples)\n",
         cc_asym_available() ? "works" : "not available", (unsigned long long)revoked, rounds + 1);
  CHECK(cucore_host_pool_destroy(c.pool));
  pthread_cond_destroy(&c.cond);
  pthread_mutex_destroy(&c.lock);
}

int main(int argc, char **argv) {
  rounds = bench_arg(argc, argv, 1, 21, MAX_ROUNDS);
  if (bench_no_gpu("bench_memory")) return 0;
  cucore_device *dev;
  CHECK(cucore_device_open(0, &dev));
  cucore_device_props props;
  CHECK(cucore_device_get_props(0, &props));
  cucore_stream *s;
  CHECK(cucore_stream_create(dev, CUCORE_STREAM_NON_BLOCKING, 0, &s));
  CUstream hs;
  CHECK(cucore_stream_get_native(s, (void **)&hs));
  printf("device: %s (sm_%d), driver %d; modes interleaved, order rotated each round, one "
         "warm-up round; paired = median over rounds of the per-round ratio to the raw driver\n",
         props.name, props.arch, cc_drv.version);
  bench_async(dev, s, hs);
  for (size_t b = 64 << 10; b <= (16u << 20); b *= 16) bench_pinned(dev, b);
  bench_copies(dev, s, hs);
  bench_strict(dev);
  bench_cross_thread(dev);
  cucore_stream_destroy(s);
  cucore_device_close(dev);
  return 0;
}
