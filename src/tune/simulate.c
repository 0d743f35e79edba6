/*
 * simulate.c -- recorded spaces as public handles and strategies replayed over them
 * (tune/recording.h): `batch` proposals at a time, each answered with its recorded time or
 * failure, the recorded cost of measuring it added to a simulated clock; the best so far
 * after every evaluation. The budget is counted as Kernel Tuner counts max_fevals:
 * configurations evaluated, failed ones included. Also the strategies' names.
 */
#include "tune/recording.h"
#include "base/handle.h"
#include "loader/loader.h"
#include "tune/tuner.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct cucore_tune_recording {
  cc_handle h;
  cc_trecording *r;
  cucore_tune_recording_info info;
};

/* The largest recording text read after inflating (a brute-force cache of 10^6 entries is
 * ~300 MB). */
#define RECORDING_MAX_BYTES ((size_t)4 << 30)

cucore_status cucore_tune_strategy_from_name(const char *name, cucore_tune_strategy *out) {
  cc_begin();
  CC_CHECK_ARG(out, "cucore_tune_strategy_from_name", "out");
  CC_CHECK_ARG(name, "cucore_tune_strategy_from_name", "name");
  if (!strcmp(name, "default")) {
    *out = CUCORE_TUNE_STRATEGY_BAYES;
    return CUCORE_OK;
  }
  for (int k = 0; k < CC_TS_COUNT; k++)
    if (!strcmp(name, cc_tstrategy_names[k])) {
      *out = (cucore_tune_strategy)k;
      return CUCORE_OK;
    }
  return cc_fail(CUCORE_INVALID_ARGUMENT,
                 "cucore_tune_strategy_from_name: `%s` is no strategy: expected random, ils, "
                 "anneal, genetic, forest, bayes or default",
                 name);
}

cucore_status cucore_tune_strategy_get_name(cucore_tune_strategy strategy, const char **name) {
  cc_begin();
  CC_CHECK_ARG(name, "cucore_tune_strategy_get_name", "name");
  if ((unsigned)strategy >= (unsigned)CC_TS_COUNT)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "cucore_tune_strategy_get_name: %d is no cucore_tune_strategy (0 to %d)",
                   (int)strategy, CC_TS_COUNT - 1);
  *name = cc_tstrategy_names[strategy];
  return CUCORE_OK;
}

cucore_status cucore_tune_strategy_get_option(cucore_tune_strategy strategy, size_t index,
                                              cucore_tune_strategy_option *out) {
  cc_begin();
  const char *fn = "cucore_tune_strategy_get_option";
  CC_CHECK_ARG(out, fn, "out");
  if ((unsigned)strategy >= (unsigned)CC_TS_COUNT)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: %d is no cucore_tune_strategy (0 to %d)", fn,
                   (int)strategy, CC_TS_COUNT - 1);
  const cc_tstrat_option *t = cc_tstrategy_options((cc_tstrategy)strategy);
  size_t n = 0;
  while (t && t[n].name) n++;
  if (index >= n)
    return cc_fail(CUCORE_NOT_FOUND, "%s: %s has %zu option%s: index %zu is past the last", fn,
                   cc_tstrategy_names[strategy], n, n == 1 ? "" : "s", index);
  *out = (cucore_tune_strategy_option){t[index].name, t[index].min, t[index].max, t[index].integer,
                                       t[index].help};
  return CUCORE_OK;
}

static void fill_info(cucore_tune_recording *rec) {
  const cc_trecording *r = rec->r;
  cucore_tune_recording_info *i = &rec->info;
  i->kernel = r->kernel;
  i->device = r->device;
  i->params = r->nparams;
  i->configs = r->n;
  i->valid = r->nvalid;
  i->optimum_ms = r->optimum;
  for (size_t e = 0; e < r->n; e++) {
    i->total_cost_ms += r->cost[e];
    i->near_optimum += !isnan(r->time[e]) && r->time[e] <= 1.05 * r->optimum;
  }
}

cucore_status cucore_tune_recording_read(const void *data, size_t size, const char *name,
                                         cucore_tune_recording **out) {
  cc_begin();
  CC_CHECK_ARG(out, "cucore_tune_recording_read", "out");
  *out = NULL;
  CC_CHECK_ARG(data, "cucore_tune_recording_read", "data");
  if (!name) name = "the recording";
  char *inflated = NULL;
  size_t n = 0;
  cucore_status st = CUCORE_OK;
  if (cc_is_gzip(data, size)) {
    st = cc_gunzip(data, size, name, RECORDING_MAX_BYTES, &inflated, &n);
    if (st != CUCORE_OK) return st;
    data = inflated, size = n;
  }
  cucore_tune_recording *rec = cc_calloc(1, sizeof *rec, "a recording");
  if (!rec) st = CUCORE_HOST_OUT_OF_MEMORY;
  if (st == CUCORE_OK) st = cc_trecording_read(data, size, name, &rec->r);
  free(inflated);
  if (st != CUCORE_OK) {
    free(rec);
    return st;
  }
  cc_handle_init(rec, CC_KIND_TUNE_RECORDING);
  fill_info(rec);
  *out = rec;
  return CUCORE_OK;
}

cucore_status cucore_tune_recording_destroy(cucore_tune_recording *recording) {
  cc_begin();
  if (!recording) return CUCORE_OK;
  CC_CHECK_HANDLE(recording, TUNE_RECORDING, "cucore_tune_recording_destroy", "recording");
  cc_trecording_free(recording->r);
  cc_handle_retire(recording, CC_KIND_TUNE_RECORDING);
  return CUCORE_OK;
}

cucore_status cucore_tune_recording_get_info(const cucore_tune_recording *recording,
                                             cucore_tune_recording_info *out) {
  cc_begin();
  CC_CHECK_HANDLE(recording, TUNE_RECORDING, "cucore_tune_recording_get_info", "recording");
  CC_CHECK_ARG(out, "cucore_tune_recording_get_info", "out");
  *out = recording->info;
  return CUCORE_OK;
}

/* The replay: proposals answered from the recording until the budget is spent. */
static cucore_status replay(const cc_trecording *r, cc_tsearch *s, uint64_t budget, size_t batch,
                            double *curve, double *clock, cucore_tune_simulation *out,
                            uint64_t *ask) {
  cucore_status st = CUCORE_OK;
  while (st == CUCORE_OK && out->evals < budget) {
    double t0 = cc_trun_now_ms();
    size_t n = cc_tsearch_propose(s, ask, batch);
    out->strategy_ms += cc_trun_now_ms() - t0;
    if (n == 0) break; /* nothing waits in a simulation: the strategy is done */
    for (size_t i = 0; i < n && st == CUCORE_OK; i++) {
      long e = cc_trecording_find(r, ask[i]);
      double t = e >= 0 ? r->time[e] : NAN;
      out->clock_ms += e >= 0 ? r->cost[e] : 0;
      if (!isnan(t) && t < out->best_ms) out->best_ms = t;
      if (curve) curve[out->evals] = out->best_ms;
      if (clock) clock[out->evals] = out->clock_ms;
      out->evals++;
      t0 = cc_trun_now_ms();
      st = cc_tsearch_observe(s, ask[i], t);
      out->strategy_ms += cc_trun_now_ms() - t0;
    }
  }
  return st;
}

cucore_status cucore_tune_simulate(const cucore_tune_recording *recording,
                                   cucore_tune_strategy strategy, const char *strategy_options,
                                   uint64_t max_evals, uint64_t seed, size_t batch, double *curve,
                                   double *clock, cucore_tune_simulation *out) {
  cc_begin();
  const char *fn = "cucore_tune_simulate";
  CC_CHECK_ARG(out, fn, "out");
  memset(out, 0, sizeof *out);
  out->best_ms = INFINITY;
  CC_CHECK_HANDLE(recording, TUNE_RECORDING, fn, "recording");
  if ((unsigned)strategy >= (unsigned)CC_TS_COUNT)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: strategy %d is no cucore_tune_strategy (0 to %d)",
                   fn, (int)strategy, CC_TS_COUNT - 1);
  const cc_trecording *r = recording->r;
  uint64_t budget = max_evals == 0 || max_evals > r->n ? r->n : max_evals;
  if (batch < 1) batch = 1;
  if (curve)
    for (uint64_t i = 0; i < budget; i++) curve[i] = INFINITY;
  uint64_t *ask = cc_calloc(batch, sizeof *ask, "a simulation's proposals");
  if (!ask) return CUCORE_HOST_OUT_OF_MEMORY;
  cc_tsearch *s = NULL;
  double t0 = cc_trun_now_ms();
  cucore_status st = cc_tsearch_open(&r->dom, (cc_tstrategy)strategy, strategy_options, seed,
                                     budget, &s);
  out->strategy_ms = cc_trun_now_ms() - t0;
  if (st == CUCORE_OK) st = replay(r, s, budget, batch, curve, clock, out, ask);
  out->ratio = isfinite(out->best_ms) ? r->optimum / out->best_ms : 0;
  cc_tsearch_close(s);
  free(ask);
  return st;
}
