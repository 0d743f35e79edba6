/*
 * mem_resource.c -- allocation through an installed memory resource against calling that
 * resource directly: the RMM-like user pool of tests/mres_user_pool.h (a slab from cuMemAlloc,
 * first-fit under a mutex) installed as device 0's default, alloc + free pairs of 64 KiB:
 *   (a) stream-ordered: cucore_mem_alloc_async + cucore_mem_free_async against the pool's own
 *       allocate + deallocate on the same stream (target: at most 1.05x);
 *   (b) synchronous: cucore_mem_alloc + cucore_mem_free against allocate + deallocate with no
 *       stream (no target: cucore_mem_free's record lookup is the general one);
 *   (c) where the driver has stream-ordered pools: cucore_mem_resource_from_pool over a pool
 *       installed, against raw cuMemAllocFromPoolAsync + cuMemFreeAsync (target: at most 1.05x);
 *   (d) cucore's own cost: a resource that does no work (it hands out the slab's 64 KiB slots in
 *       turn, no lock, and its deallocate returns), so "through cucore" minus "direct" is what
 *       cucore adds to a pair, and 20 times that is the cheapest resource 1.05x allows.
 * Modes interleaved, the order rotated each round, one warm-up round; the ratio is the median
 * over rounds of the per-round ratio. Runs on the fake driver too
 * (CUCORE_LIBCUDA=build/tests/libcucore_fake_driver.so): the CPU cost of the wrapper alone.
 *   usage: bench_mem_resource [rounds]
 */
#include <stdio.h>
#include <string.h>

#include "../tests/mres_user_pool.h"
#include "bench_util.h"

#define MAX_ROUNDS 64
#define PAIRS 20000
#define BYTES ((size_t)64 << 10)

enum { DIRECT, THROUGH, MODES };

typedef struct bench_ctx {
  cucore_device *dev;
  cucore_stream *s; /* NULL for (b) */
  user_pool *up;
  const cucore_mem_resource_ops *ops; /* the resource called directly: up_ops or null_ops */
  void *user;
  CUmemoryPool hpool; /* (c): non-NULL */
} bench_ctx;

static double one_sample(bench_ctx *c, int through) {
  CUstream hs = NULL;
  if (c->s) CHECK(cucore_stream_get_native(c->s, (void **)&hs));
  double t0 = bench_now_ns();
  for (int i = 0; i < PAIRS; i++) {
    cucore_devptr p = 0;
    CUdeviceptr d = 0;
    if (through && c->s) {
      CHECK(cucore_mem_alloc_async(c->s, BYTES, &p));
      CHECK(cucore_mem_free_async(c->s, p));
    } else if (through) {
      CHECK(cucore_mem_alloc(c->dev, BYTES, &p));
      CHECK(cucore_mem_free(c->dev, p));
    } else if (c->hpool) {
      CU(DRV(cuMemAllocFromPoolAsync)(&d, BYTES, c->hpool, hs));
      CU(DRV(cuMemFreeAsync)(d, hs));
    } else {
      CHECK(c->ops->allocate(c->user, BYTES, CUCORE_MR_DEFAULT_ALIGNMENT, c->s, &p));
      CHECK(c->ops->deallocate(c->user, p, BYTES, CUCORE_MR_DEFAULT_ALIGNMENT, c->s));
    }
  }
  double t = (bench_now_ns() - t0) / PAIRS;
  if (c->s) CHECK(cucore_stream_synchronize(c->s));
  return t;
}

/* (d)'s resource: the slab's 64 KiB slots in turn, nothing else. */
typedef struct null_pool {
  CUdeviceptr slab;
  unsigned next;
} null_pool;
#define NULL_SLOTS 64

static cucore_status null_allocate(void *user, size_t bytes, size_t alignment, cucore_stream *s,
                                   cucore_devptr *out) {
  (void)bytes, (void)alignment, (void)s;
  null_pool *p = user;
  *out = p->slab + (CUdeviceptr)(p->next++ % NULL_SLOTS) * BYTES;
  return CUCORE_OK;
}

static cucore_status null_deallocate(void *user, cucore_devptr ptr, size_t bytes, size_t alignment,
                                     cucore_stream *s) {
  (void)user, (void)ptr, (void)bytes, (void)alignment, (void)s;
  return CUCORE_OK;
}

static const cucore_mem_resource_ops null_ops = {null_allocate, null_deallocate, NULL};

/* Runs both modes `rounds` times and prints the line (returns the through - direct median);
 * `target` 0: none. */
static double measure(bench_ctx *c, int rounds, const char *what, double target) {
  double t[MODES][MAX_ROUNDS], rel[MAX_ROUNDS];
  for (int r = -1; r < rounds; r++)
    for (int k = 0; k < MODES; k++) {
      int m = (k + (r < 0 ? 0 : r)) % MODES;
      double v = one_sample(c, m == THROUGH);
      if (r >= 0) t[m][r] = v;
    }
  for (int r = 0; r < rounds; r++) rel[r] = t[THROUGH][r] / t[DIRECT][r];
  double ratio = bench_median(rel, rounds);
  double direct = bench_median(t[DIRECT], rounds), through = bench_median(t[THROUGH], rounds);
  printf("  %-58s direct %7.1f ns, through cucore %7.1f ns, ratio %.3fx", what, direct, through,
         ratio);
  if (target > 0)
    printf("  (target: at most %.2fx): %s\n", target, bench_verdict(ratio <= target));
  else
    printf("  (no target)\n");
  return through - direct;
}

static void pool_section(bench_ctx *c, int rounds) {
  cucore_mem_pool *pool = NULL;
  cucore_mem_resource *r = NULL;
  if (cucore_mem_pool_default(c->dev, &pool) != CUCORE_OK ||
      cucore_mem_resource_from_pool(pool, &r) != CUCORE_OK) {
    printf("  (c) skipped: %s\n", cucore_last_error());
    cucore_mem_pool_destroy(pool);
    return;
  }
  CHECK(cucore_mem_pool_set_attr(pool, CUCORE_POOL_RELEASE_THRESHOLD, UINT64_MAX));
  CHECK(cucore_mem_pool_get_native(pool, (void **)&c->hpool));
  CHECK(cucore_device_set_mem_resource(c->dev, r));
  measure(c, rounds, "(c) pool resource, stream-ordered (cuMemAllocFromPoolAsync)", 1.05);
  CHECK(cucore_device_set_mem_resource(c->dev, NULL));
  CHECK(cucore_mem_resource_destroy(r));
  CHECK(cucore_mem_pool_destroy(pool));
}

int main(int argc, char **argv) {
  int rounds = bench_arg(argc, argv, 1, 21, MAX_ROUNDS);
  if (bench_no_gpu("bench_mem_resource")) return 0;
  bench_ctx c;
  memset(&c, 0, sizeof c);
  CHECK(cucore_device_open(0, &c.dev));
  CHECK(cucore_stream_create(c.dev, CUCORE_STREAM_NON_BLOCKING, 0, &c.s));
  CU(DRV(cuCtxSetCurrent)(c.dev->ctx));
  static user_pool up;
  if (!up_init(&up, (uint64_t)64 << 20)) {
    fprintf(stderr, "bench_mem_resource: cuMemAlloc of the user pool's slab failed\n");
    return 1;
  }
  c.up = &up;
  c.ops = &up_ops, c.user = &up;
  /* The fake driver knows no memory: told that the slab is device 0's (a real driver ignores
   * these), cucore asks it once, as it asks a real driver once per slab. */
  char range[64];
  snprintf(range, sizeof range, "%llx:%llu", (unsigned long long)up.slab,
           (unsigned long long)up.slab_size);
  setenv("CUCORE_FAKE_POINTER_DEVICE", "0", 1);
  setenv("CUCORE_FAKE_POINTER_RANGE", range, 1);
  cucore_mem_resource_props props = {.device = 0, .name = "bench user pool"};
  cucore_mem_resource *res = NULL;
  CHECK(cucore_mem_resource_create(&up_ops, &up, &props, &res));
  CHECK(cucore_device_set_mem_resource(c.dev, res));
  printf("bench_mem_resource: alloc + free pairs of 64 KiB, %d per sample, %d rounds, driver %d\n",
         PAIRS, rounds, cc_drv.version);
  measure(&c, rounds, "(a) user pool, stream-ordered (cucore_mem_alloc_async)", 1.05);
  cucore_stream *s = c.s;
  c.s = NULL;
  measure(&c, rounds, "(b) user pool, synchronous (cucore_mem_alloc)", 0);
  c.s = s;
  CHECK(cucore_device_set_mem_resource(c.dev, NULL));
  CHECK(cucore_mem_resource_destroy(res));
  /* (d): the same slab, slots handed out in turn. */
  static null_pool np;
  np.slab = up.slab;
  cucore_mem_resource_props nprops = {.device = 0, .name = "bench null resource"};
  CHECK(cucore_mem_resource_create(&null_ops, &np, &nprops, &res));
  CHECK(cucore_device_set_mem_resource(c.dev, res));
  c.ops = &null_ops, c.user = &np;
  double added = measure(&c, rounds, "(d) a resource doing nothing, stream-ordered", 0);
  printf("  cucore adds %.1f ns a stream-ordered pair; 1.05x needs a resource of %.0f ns a pair "
         "or more\n",
         added, added / 0.05);
  CHECK(cucore_device_set_mem_resource(c.dev, NULL));
  CHECK(cucore_mem_resource_destroy(res));
  up_fini(&up);
  pool_section(&c, rounds);
  cucore_stream_destroy(c.s);
  cucore_device_close(c.dev);
  return 0;
}
