/* search_cost.c -- what a search strategy costs per proposed configuration on a space of
 * millions: Kernel Tuner's convolution example (3 145 728 raw configurations, 1 867 776
 * runnable), the live space opened once (its walk and rank index; timed apart), then each
 * strategy proposes 200 configurations in batches of 8 (as a tune with four compile workers
 * proposes) and of 1, answered by a synthetic time (a smooth bowl over the parameters with an
 * interaction and a few failures), never listing the space. Target (issue: the strategy must
 * never be what the GPU waits for): <= 1 ms per proposal in batches, for every strategy.
 * No GPU. usage: bench_search_cost [evaluations [the options of forest and bayes, e.g.
 * clip=0.5]] */
#include "tune/search.h"
#include "tune/search_space.h"

#include <cucore.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static const char SPACE[] =
    "{\"kernel_name\": \"convolution_kernel\", \"tune_params\": {"
    "\"filter_height\": [3,5,7,9,11,13,15,17,19,21,23,25,27,29,31,33],"
    "\"filter_width\": [3,5,7,9,11,13,15,17,19,21,23,25,27,29,31,33],"
    "\"block_size_x\": [16,32,48,64,80,96,112,128], \"block_size_y\": [1,2,4,8,16,32],"
    "\"tile_size_x\": [1,2,3,4,5,6,7,8], \"tile_size_y\": [1,2,3,4,5,6,7,8],"
    "\"use_padding\": [0,1], \"read_only\": [0,1]},"
    "\"restrictions\": [\"use_padding==0 or (block_size_x % 32 != 0)\"],"
    "\"problem_size\": [4096, 4096],"
    "\"grid_div_x\": [\"block_size_x\", \"tile_size_x\"],"
    "\"grid_div_y\": [\"block_size_y\", \"tile_size_y\"]}";

/* A synthetic time for the configuration with value indices d: a bowl with its floor at
 * (block 64 x 4, tile 3 x 5), an interaction of tile_x with block_x, 1 in 37 failing. */
static double synthetic_ms(const cc_tdom *dom, uint64_t index) {
  size_t d[8];
  cc_tdom_digits(dom, index, d);
  if (index % 37 == 0) return NAN;
  double bx = (double)d[2] - 3, by = (double)d[3] - 2, tx = (double)d[4] - 2, ty = (double)d[5] - 4;
  return 1.0 + 0.02 * (double)(d[0] + d[1]) + 0.05 * (bx * bx + by * by) +
         0.03 * (tx * tx + ty * ty) + 0.02 * fabs(tx * bx) + 0.01 * (double)d[6] +
         0.005 * (double)d[7];
}

/* One search of `budget` proposals in batches of `batch`: the strategy's ms per proposal. */
static double one(const cc_tdom *dom, cc_tstrategy kind, const char *options, uint64_t budget,
                  size_t batch, uint64_t seed, double *best) {
  cc_tsearch *s = NULL;
  if (cc_tsearch_open(dom, kind, options, seed, budget, &s) != CUCORE_OK) return -1;
  uint64_t ask[8];
  double spent = 0;
  size_t n = 0, got;
  *best = INFINITY;
  for (;;) {
    double t0 = now_ms();
    got = cc_tsearch_propose(s, ask, batch);
    spent += now_ms() - t0;
    if (!got) break;
    for (size_t i = 0; i < got; i++) {
      double ms = synthetic_ms(dom, ask[i]);
      if (ms < *best) *best = ms;
      t0 = now_ms();
      cc_tsearch_observe(s, ask[i], ms);
      spent += now_ms() - t0;
    }
    n += got;
  }
  cc_tsearch_close(s);
  return n == budget ? spent / (double)n : -1;
}

int main(int argc, char **argv) {
  uint64_t budget = argc > 1 ? strtoull(argv[1], NULL, 10) : 200;
  const char *model_options = argc > 2 ? argv[2] : NULL; /* forest and bayes */
  cucore_tune_space *space = NULL;
  if (cucore_tune_space_from_json(SPACE, sizeof SPACE - 1, &space) != CUCORE_OK) {
    printf("search_cost: %s\n", cucore_last_error());
    return 1;
  }
  double t0 = now_ms();
  cc_tlive *live = NULL;
  if (cc_tlive_open(space, &live) != CUCORE_OK) {
    printf("search_cost: %s\n", cucore_last_error());
    return 1;
  }
  const cc_tdom *dom = cc_tlive_domain(live);
  printf("search cost on Kernel Tuner's convolution space: %llu runnable configurations, the "
         "live space opened in %.0f ms; %llu proposals, synthetic times, seeds 1-3\n",
         (unsigned long long)dom->count, now_ms() - t0, (unsigned long long)budget);
  int failed = 0;
  for (int k = 0; k < CC_TS_COUNT; k++) {
    double worst8 = 0, worst1 = 0, best8 = INFINITY;
    const char *options = k == CC_TS_FOREST || k == CC_TS_BAYES ? model_options : NULL;
    for (uint64_t seed = 1; seed <= 3; seed++) {
      double b;
      double c8 = one(dom, (cc_tstrategy)k, options, budget, 8, seed, &b);
      best8 = b < best8 ? b : best8;
      double c1 = one(dom, (cc_tstrategy)k, options, budget, 1, seed, &b);
      if (c8 < 0 || c1 < 0) {
        printf("  %s: the search did not make its %llu proposals\n", cc_tstrategy_names[k],
               (unsigned long long)budget);
        failed = 1;
        break;
      }
      worst8 = c8 > worst8 ? c8 : worst8;
      worst1 = c1 > worst1 ? c1 : worst1;
    }
    printf("  %-8s batches of 8: %.3f ms per proposal (one at a time: %.3f), best synthetic "
           "time %.4f; target <= 1 ms: %s\n",
           cc_tstrategy_names[k], worst8, worst1, best8, worst8 <= 1 ? "PASS" : "MISS");
  }
  cc_tlive_close(live);
  cucore_tune_space_destroy(space);
  return failed;
}
