/*
 * stats.c -- the numbers of timing: statistics of samples (median, p20/p80 as numpy
 * interpolates them, relative standard deviation), when screening may stop (nvbench's rule:
 * enough samples and time, then noise under the goal, capped), and ranking with ties resolved
 * the same way every run.
 */
#include "tune/space.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static double percentile(const double *sorted, size_t n, double q) {
  double pos = q * (double)(n - 1);
  size_t lo = (size_t)pos;
  if (lo + 1 >= n) return sorted[n - 1];
  return sorted[lo] + (pos - (double)lo) * (sorted[lo + 1] - sorted[lo]);
}

cucore_status cucore_tune_stats_compute(const double *samples, size_t n, cucore_tune_stats *out) {
  cc_begin();
  const char *fn = "cucore_tune_stats_compute";
  CC_CHECK_ARG(samples, fn, "samples");
  CC_CHECK_ARG(out, fn, "out");
  if (n == 0) return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: no samples", fn);
  double *s = cc_malloc(n * sizeof *s, "timing samples"), sum = 0, sq = 0;
  if (!s) return CUCORE_HOST_OUT_OF_MEMORY;
  memcpy(s, samples, n * sizeof *s);
  for (size_t i = 0; i < n; i++) {
    if (!(s[i] >= 0 && isfinite(s[i]))) {
      free(s);
      return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: sample %zu is %g (a time >= 0 is expected)", fn,
                     i, samples[i]);
    }
    sum += s[i];
  }
  qsort(s, n, sizeof *s, cc_cmp_double);
  out->n = n;
  out->mean = sum / (double)n;
  for (size_t i = 0; i < n; i++) sq += (s[i] - out->mean) * (s[i] - out->mean);
  out->min = s[0];
  out->max = s[n - 1];
  out->p20 = percentile(s, n, 0.2);
  out->median = percentile(s, n, 0.5);
  out->p80 = percentile(s, n, 0.8);
  out->rel_stddev = n > 1 && out->mean > 0 ? sqrt(sq / (double)(n - 1)) / out->mean : 0;
  free(s);
  return CUCORE_OK;
}

cucore_status cucore_tune_screen_done(const cucore_tune_stats *st, double elapsed_ms,
                                      const cucore_tune_timing_options *o, int *done) {
  cc_begin();
  CC_CHECK_ARG(st, "cucore_tune_screen_done", "stats");
  CC_CHECK_ARG(o, "cucore_tune_screen_done", "opt");
  CC_CHECK_ARG(done, "cucore_tune_screen_done", "done");
  int capped = (o->max_samples > 0 && st->n >= (size_t)o->max_samples) ||
               (o->max_time_ms > 0 && elapsed_ms >= o->max_time_ms);
  int enough = st->n >= (size_t)(o->min_samples > 0 ? o->min_samples : 1) &&
               elapsed_ms >= o->screen_ms;
  *done = capped || (enough && st->rel_stddev <= o->max_noise);
  return CUCORE_OK;
}

/* by_median's data: qsort_r is not C11, so the ranking holds rank_lock while it sorts. */
static const cucore_tune_stats *g_stats;
static pthread_mutex_t rank_lock = PTHREAD_MUTEX_INITIALIZER;

static int by_median(const void *a, const void *b) {
  size_t x = *(const size_t *)a, y = *(const size_t *)b;
  double mx = g_stats[x].median, my = g_stats[y].median;
  if (mx != my) return mx < my ? -1 : 1;
  return x < y ? -1 : x > y;
}

static int ties_best(const cucore_tune_stats *s, size_t best, size_t j) {
  double nb = s[best].rel_stddev * s[best].median, nj = s[j].rel_stddev * s[j].median;
  double window = nb > nj ? nb : nj, floor = CUCORE_TUNE_TIE_FLOOR * s[best].median;
  return s[j].median - s[best].median <= (window > floor ? window : floor);
}

cucore_status cucore_tune_rank(const cucore_tune_stats *stats, size_t n, size_t *order,
                               size_t *ties) {
  cc_begin();
  CC_CHECK_ARG(stats, "cucore_tune_rank", "stats");
  CC_CHECK_ARG(order, "cucore_tune_rank", "order");
  for (size_t i = 0; i < n; i++) order[i] = i;
  pthread_mutex_lock(&rank_lock);
  g_stats = stats;
  qsort(order, n, sizeof *order, by_median);
  pthread_mutex_unlock(&rank_lock);
  size_t tied = 0, pick = 0;
  for (size_t k = 1; n > 0 && k < n && ties_best(stats, order[0], order[k]); k++) {
    tied++;
    if (order[k] < order[pick]) pick = k;
  }
  size_t winner = order[pick]; /* the lowest index of the tie goes first */
  memmove(order + 1, order, pick * sizeof *order);
  if (n > 0) order[0] = winner;
  if (ties) *ties = tied;
  return CUCORE_OK;
}
