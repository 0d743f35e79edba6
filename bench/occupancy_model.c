/* occupancy_model.c -- how long the host occupancy model takes per query.
 *
 * Prints ns per query for each call, the median of ROUNDS rounds of QUERIES queries each.
 * Inputs change from query to query (block sizes, dynamic shared memory, architectures) so
 * that nothing is computed once and reused. Usage: bench_occupancy_model [queries-per-round]
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bench_util.h"
#include "cucore.h"
#include "exec/occupancy_model.h" /* the unchecked internal path, to show what the checks cost */

#define ROUNDS 11

static cucore_arch_limits g_limits[4];
static cucore_kernel_resources g_kernels[4];
static const int g_blocks[8] = {32, 64, 96, 128, 256, 384, 512, 1024};
static const size_t g_dyn[8] = {0, 1024, 4096, 8192, 12288, 16384, 32768, 40000};
static volatile long g_sink;

typedef long (*query_fn)(int i);

static long query_blocks(int i) {
  cucore_occupancy_result r;
  if (cucore_occupancy_model_blocks(&g_limits[i & 3], &g_kernels[(i >> 2) & 3],
                                    g_blocks[(i >> 4) & 7], g_dyn[(i >> 7) & 7], 0,
                                    &r) != CUCORE_OK)
    return -1000000;
  return r.active_blocks_per_sm;
}

static long query_blocks_unchecked(int i) {
  cucore_occupancy_result r;
  cc_occ_why why;
  return cc_occupancy_model_blocks(&g_limits[i & 3], &g_kernels[(i >> 2) & 3],
                                   g_blocks[(i >> 4) & 7], g_dyn[(i >> 7) & 7], 0, &r, &why);
}

static long query_best(int i) {
  cucore_occupancy_best b;
  if (cucore_occupancy_model_best_block(&g_limits[i & 3], &g_kernels[(i >> 2) & 3],
                                        g_dyn[(i >> 4) & 7], NULL, NULL, 0, 0, &b) != CUCORE_OK)
    return -1000000;
  return b.block_size;
}

static long query_available(int i) {
  size_t bytes = 0;
  if (cucore_occupancy_model_available_shared(&g_limits[i & 3], &g_kernels[(i >> 2) & 3],
                                              g_blocks[(i >> 4) & 3], 1 + ((i >> 7) & 3),
                                              &bytes) != CUCORE_OK)
    return -1;
  return (long)bytes;
}

static double measure(query_fn fn, int queries) {
  double per_round[ROUNDS];
  for (int r = 0; r < ROUNDS; r++) {
    long sum = 0;
    double t0 = bench_now_ns();
    for (int i = 0; i < queries; i++) sum += fn(i);
    double t1 = bench_now_ns();
    g_sink = sum;
    per_round[r] = (t1 - t0) / queries;
  }
  return bench_median(per_round, ROUNDS);
}

int main(int argc, char **argv) {
  int queries = argc > 1 ? atoi(argv[1]) : 1000000;
  if (queries < 1) queries = 1;
  const int archs[4] = {80, 86, 90, 120};
  for (int a = 0; a < 4; a++) {
    if (cucore_arch_get_limits(archs[a], &g_limits[a]) != CUCORE_OK) {
      fprintf(stderr, "%s\n", cucore_last_error());
      return 1;
    }
  }
  const int regs[4] = {16, 32, 40, 64};
  for (int k = 0; k < 4; k++) {
    cucore_kernel_resources res = CUCORE_KERNEL_RESOURCES_INIT;
    res.registers = regs[k];
    res.static_shared_bytes = 1024 * k;
    g_kernels[k] = res;
  }
  /* Every query must succeed: a failing one would time the error path. */
  for (int i = 0; i < 1024; i++) {
    if (query_blocks(i) < 0 || query_best(i) < 0 || query_available(i) < 0) {
      fprintf(stderr, "query %d failed: %s\n", i, cucore_last_error());
      return 1;
    }
  }
  printf("host occupancy model, median of %d rounds:\n", ROUNDS);
  printf("  max active blocks per SM        %8.1f ns/query (%d queries per round)\n",
         measure(query_blocks, queries), queries);
  printf("    of which the model itself    %8.1f ns/query (internal, inputs not checked)\n",
         measure(query_blocks_unchecked, queries));
  printf("  best block size (up to 32 sizes) %7.1f ns/query (%d queries per round)\n",
         measure(query_best, queries / 20 + 1), queries / 20 + 1);
  printf("  available dynamic shared memory %8.1f ns/query (%d queries per round)\n",
         measure(query_available, queries / 10 + 1), queries / 10 + 1);
  return 0;
}
