/* gpu_green.c -- green contexts on a real GPU (label gpu): a kernel launched on a
 * green context of K SMs runs on at most K distinct SMs (read from %smid) while the same launch
 * on the whole device uses more; two partitions run at the same time (their busy intervals,
 * read from %globaltimer, overlap for at least half of the shorter one) on disjoint SMs; a
 * launch on a green stream is checked like any other. Everything seen is printed. Skipped on a
 * driver without green contexts. */
#include "gpu_support.h"

#include <stdio.h>
#include <string.h>

#define MAX_SMID 4096

static cucore_device *dev;
static cucore_kernel *where;

static const char *src =
    "extern \"C\" __global__ void where(unsigned *smids, unsigned long long *times,\n"
    "                                   long long spin) {\n"
    "  unsigned id; asm volatile(\"mov.u32 %0, %%smid;\" : \"=r\"(id));\n"
    "  unsigned long long t0; asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t0));\n"
    "  long long c0 = clock64();\n"
    "  while (clock64() - c0 < spin) { }\n"
    "  unsigned long long t1; asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t1));\n"
    "  if (threadIdx.x == 0) {\n"
    "    smids[blockIdx.x] = id;\n"
    "    times[2 * blockIdx.x] = t0;\n"
    "    times[2 * blockIdx.x + 1] = t1;\n"
    "  }\n"
    "}\n";

typedef struct run {
  unsigned blocks;
  cucore_devptr smids, times;
  unsigned *h_smids;
  unsigned long long *h_times;
} run;

/* The device memory of a run of `blocks` blocks (apart from the launch, so that two runs meant
 * to overlap are launched back to back, with no allocation between them). */
static void run_alloc(run *r, unsigned blocks) {
  memset(r, 0, sizeof *r);
  r->blocks = blocks;
  assert_ok(cucore_mem_alloc(dev, blocks * sizeof(unsigned), &r->smids));
  assert_ok(cucore_mem_alloc(dev, blocks * 2 * sizeof(unsigned long long), &r->times));
}

static void run_launch(run *r, cucore_stream *s, long long spin) {
  unsigned blocks = r->blocks;
  cucore_args *args = NULL;
  assert_ok(cucore_args_create(where, &args));
  assert_ok(CUCORE_ARGS(args, r->smids, r->times, spin));
  cucore_launch_config c;
  memset(&c, 0, sizeof c);
  c.grid[0] = blocks;
  c.block[0] = 128;
  c.stream = s;
  assert_ok(cucore_launch(where, &c, args));
  cucore_args_destroy(args);
}

static void run_start(run *r, cucore_stream *s, unsigned blocks, long long spin) {
  run_alloc(r, blocks);
  run_launch(r, s, spin);
}

/* Waits, reads back; returns the distinct SMs and marks them in `seen` (may be NULL). */
static int run_finish(run *r, cucore_stream *s, unsigned char *seen) {
  assert_ok(cucore_stream_synchronize(s));
  r->h_smids = calloc(r->blocks, sizeof *r->h_smids);
  r->h_times = calloc(2 * (size_t)r->blocks, sizeof *r->h_times);
  assert_ok(cucore_memcpy_dtoh(dev, r->h_smids, r->smids, r->blocks * sizeof(unsigned), NULL));
  assert_ok(cucore_memcpy_dtoh(dev, r->h_times, r->times,
                               r->blocks * 2 * sizeof(unsigned long long), NULL));
  static unsigned char mine[MAX_SMID];
  memset(mine, 0, sizeof mine);
  int distinct = 0;
  for (unsigned i = 0; i < r->blocks; i++) {
    unsigned id = r->h_smids[i];
    if (id >= MAX_SMID) fail_msg("block %u reports %%smid %u", i, id);
    if (!mine[id]) distinct++;
    mine[id] = 1;
    if (seen) seen[id] = 1;
  }
  return distinct;
}

static void run_span(const run *r, unsigned long long *start, unsigned long long *end) {
  *start = ~0ull;
  *end = 0;
  for (unsigned i = 0; i < r->blocks; i++) {
    if (r->h_times[2 * i] < *start) *start = r->h_times[2 * i];
    if (r->h_times[2 * i + 1] > *end) *end = r->h_times[2 * i + 1];
  }
}

static void run_free(run *r) {
  cucore_mem_free(dev, r->smids);
  cucore_mem_free(dev, r->times);
  free(r->h_smids);
  free(r->h_times);
}

/* The smallest group the driver makes (the minimum rounded to the granularity). */
static unsigned smallest_group(cucore_green_sm_info *info) {
  assert_ok(cucore_green_get_sm_info(dev, info));
  unsigned groups = 0, per = 0, rest = 0;
  assert_ok(cucore_green_split_query(dev, info->min_partition_sms, 0, &groups, &per, &rest));
  print_message("device: %u SMs, groups of at least %u, multiples of %u: %u groups of %u, %u "
                "left\n",
                info->sm_count, info->min_partition_sms, info->alignment_sms, groups, per, rest);
  assert_true(groups >= 2 && per >= info->min_partition_sms && per < info->sm_count);
  return per;
}

static void kernel_runs_only_on_the_green_sms(void **state) {
  (void)state;
  cucore_green_sm_info info;
  unsigned k = smallest_group(&info);
  cucore_green *g = NULL, *rest = NULL;
  assert_ok(cucore_green_split(dev, 1, k, 0, &g, &rest));
  unsigned sms = 0;
  assert_ok(cucore_green_get_sm_count(g, &sms));
  assert_int_equal(sms, k);
  cucore_stream *gs = NULL, *whole = NULL;
  assert_ok(cucore_green_stream_create(g, 0, &gs));
  assert_ok(cucore_stream_create(dev, CUCORE_STREAM_NON_BLOCKING, 0, &whole));
  unsigned blocks = 8 * info.sm_count;
  run a, b;
  run_start(&a, gs, blocks, 200000);
  int on_green = run_finish(&a, gs, NULL);
  run_start(&b, whole, blocks, 200000);
  int on_whole = run_finish(&b, whole, NULL);
  print_message("%u blocks: %d distinct SMs on a green context of %u SMs, %d on the whole "
                "device\n",
                blocks, on_green, k, on_whole);
  assert_true(on_green >= 1 && on_green <= (int)k);
  assert_true(on_whole > (int)k); /* the kernel can tell SMs apart */
  /* the usual launch checks apply on a green stream */
  cucore_args *args = NULL;
  assert_ok(cucore_args_create(where, &args));
  assert_ok(CUCORE_ARGS(args, a.smids, a.times, 0ll));
  cucore_launch_config c;
  memset(&c, 0, sizeof c);
  c.grid[0] = 1;
  c.block[0] = 2048;
  c.stream = gs;
  assert_status(cucore_launch(where, &c, args), CUCORE_LAUNCH_CONFIG);
  cucore_args_destroy(args);
  run_free(&a);
  run_free(&b);
  assert_ok(cucore_stream_destroy(gs));
  assert_ok(cucore_stream_destroy(whole));
  assert_ok(cucore_green_destroy(g));
  assert_ok(cucore_green_destroy(rest));
}

static void two_partitions_run_concurrently(void **state) {
  (void)state;
  cucore_green_sm_info info;
  unsigned k = smallest_group(&info);
  cucore_green *g[2] = {NULL, NULL};
  assert_ok(cucore_green_split(dev, 2, k, 0, g, NULL));
  cucore_stream *s[2] = {NULL, NULL};
  assert_ok(cucore_green_stream_create(g[0], 0, &s[0]));
  assert_ok(cucore_green_stream_create(g[1], 0, &s[1]));
  /* A first launch on each green context (it loads the kernel there), waited for, so that
   * neither timed launch below waits on a first-launch cost. */
  for (int i = 0; i < 2; i++) {
    run w;
    run_start(&w, s[i], 1, 0);
    (void)run_finish(&w, s[i], NULL);
    run_free(&w);
  }
  /* about 50 ms of spinning per block at ~2 GHz; 2 blocks per SM of the partition; both runs'
   * memory allocated first, then the two launched back to back */
  run r[2];
  run_alloc(&r[0], 2 * k);
  run_alloc(&r[1], 2 * k);
  run_launch(&r[0], s[0], 100000000ll);
  run_launch(&r[1], s[1], 100000000ll);
  static unsigned char seen0[MAX_SMID], seen1[MAX_SMID];
  int d0 = run_finish(&r[0], s[0], seen0), d1 = run_finish(&r[1], s[1], seen1);
  unsigned long long a0, a1, b0, b1;
  run_span(&r[0], &a0, &a1);
  run_span(&r[1], &b0, &b1);
  unsigned long long base = a0 < b0 ? a0 : b0;
  print_message("partition 0: %d SMs, busy %.3f..%.3f ms; partition 1: %d SMs, busy %.3f..%.3f "
                "ms\n",
                d0, (a0 - base) / 1e6, (a1 - base) / 1e6, d1, (b0 - base) / 1e6, (b1 - base) / 1e6);
  assert_true(d0 <= (int)k && d1 <= (int)k);
  for (int i = 0; i < MAX_SMID; i++)
    if (seen0[i] && seen1[i]) fail_msg("SM %d ran blocks of both partitions", i);
  /* Concurrent: the busy spans overlap for at least half of the shorter one (launched
   * microseconds apart, each about 50 ms long; one after the other they would not overlap). */
  unsigned long long lo = a0 > b0 ? a0 : b0, hi = a1 < b1 ? a1 : b1;
  unsigned long long overlap = hi > lo ? hi - lo : 0;
  unsigned long long shorter = a1 - a0 < b1 - b0 ? a1 - a0 : b1 - b0;
  print_message("overlap %.3f ms of the shorter span's %.3f ms\n", overlap / 1e6, shorter / 1e6);
  if (overlap == 0 || 2 * overlap < shorter)
    fail_msg("the two partitions did not run at the same time: their busy spans overlap %.3f ms, "
             "less than half of the shorter span (%.3f ms)",
             overlap / 1e6, shorter / 1e6);
  for (int i = 0; i < 2; i++) {
    run_free(&r[i]);
    assert_ok(cucore_stream_destroy(s[i]));
    assert_ok(cucore_green_destroy(g[i]));
  }
}

int main(void) {
  if (!cucore_test_have_gpu()) return CUCORE_TEST_SKIP;
  if (cucore_device_open(0, &dev) != CUCORE_OK) return 1;
  cucore_green_sm_info info;
  if (CUCORE_CODE(cucore_green_get_sm_info(dev, &info)) == CUCORE_DRIVER_TOO_OLD) {
    printf("green contexts not offered: %s\n", cucore_last_error());
    return CUCORE_TEST_SKIP;
  }
  cucore_object *obj = gpu_compile(src, CUCORE_CODE_CUBIN, NULL, NULL);
  where = gpu_kernel(obj, "where");
  cucore_object_destroy(obj);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(kernel_runs_only_on_the_green_sms),
      cmocka_unit_test(two_partitions_run_concurrently),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  cucore_kernel_destroy(where);
  cucore_device_close(dev);
  return rc;
}
