/* search_tune.c -- a measured tune that searches (cucore_tune_run_options::max_evals): the
 * strategy proposes a batch of runnable configurations over the live space (search_space.c,
 * never listed); the batch becomes rows, compiled by the compile threads and measured by the
 * GPU loop as any tune's rows are (the store resumes what it has, failures are recorded); the
 * batch's times, failures as failures, go back to the strategy, which proposes the next. The
 * device, the store and the rotation stay open from the first batch to the last; each batch
 * starts the compile threads again over its rows (the earlier batches' compiles are deferred,
 * remade only for a finalist). The rows are the configurations evaluated, in order. */
#include "tune/search_space.h"
#include "tune/tuner.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FN "cucore_tune_run"

/* Rows for the proposed configurations, appended. */
static void add_rows(cc_trun *c, const uint64_t *index, size_t n) {
  for (size_t i = 0; i < n; i++) {
    cucore_tune_row *r = &c->rows[c->s.rows++];
    memset(r, 0, sizeof *r);
    r->error = r->detail = cc_trun_none;
    cucore_tune_space_get_config(c->space, index[i], &r->config);
  }
}

/* A time as the strategy sees it: 6 significant digits, fewer than the store keeps, so a
 * search resumed from the store sees the times the measuring one saw and proposes the same
 * configurations. */
static double as_observed(double ms) {
  char text[32];
  snprintf(text, sizeof text, "%.6g", ms);
  return strtod(text, NULL);
}

/* The batch's results to the strategy: a measured time, else a failure. */
static cucore_status observe(cc_trun *c, cc_tsearch *s) {
  cucore_status st = CUCORE_OK;
  for (size_t i = c->round_first; st == CUCORE_OK && i < c->s.rows; i++) {
    const cucore_tune_row *r = &c->rows[i];
    int timed = r->config.verdict == CUCORE_TUNE_RUNNABLE && r->status == CUCORE_TUNE_OK &&
                r->stats.median > 0;
    st = cc_tsearch_observe(s, r->config.index, timed ? as_observed(r->stats.median) : NAN);
  }
  return st;
}

/* The batch: the run options', else one per compile thread, 4 to 16. Larger batches give
 * the strategy fewer rounds to learn from: replayed on the recordings (50 seeds, 200
 * evaluations) batches of 30 left 64 % of CLBlast GEMM runs within 0.99 of the optimum and 86 %
 * of the H100 conv2d's, batches of 16 90 % and 96 %. */
static size_t batch_of(const cc_trun *c) {
  if (c->o.batch) return c->o.batch;
  size_t b = (size_t)(c->s.jobs > 0 ? c->s.jobs : 1);
  return b < 4 ? 4 : b > 16 ? 16 : b;
}

/* Proposes the next batch into rows; returns how many. */
static size_t next_batch(cc_trun *c, cc_tsearch *s, uint64_t *ask, size_t batch) {
  size_t n = cc_tsearch_propose(s, ask, batch);
  c->round_first = c->s.rows;
  add_rows(c, ask, n);
  return n;
}

static int learn(void *user, uint64_t index, double ms) {
  return cc_tsearch_learn(user, index, isfinite(ms) ? as_observed(ms) : NAN);
}

/* Shards cooperate: what the others measured (the shared store) joins this search's
 * observations before it proposes again (never proposed here, not of its budget). */
static void learn_from_others(cc_trun *c, cc_tsearch *s) {
  if (c->o.shard_count > 1) c->s.learned += cc_tstore_others(c, learn, s);
}

static cucore_status search(cc_trun *c, cc_tsearch *s, uint64_t budget) {
  size_t batch = batch_of(c);
  uint64_t *ask = cc_calloc(batch, sizeof *ask, FN ": a search's batch");
  if (!ask) return cucore_last_status();
  double t0 = cc_trun_now_ms();
  cucore_status st = CUCORE_OK;
  if (!next_batch(c, s, ask, batch))
    st = cc_fail(CUCORE_INVALID_ARGUMENT, FN ": the search proposed no configuration");
  if (st == CUCORE_OK) st = cc_tmeas_begin(c);
  while (st == CUCORE_OK) {
    cc_tmeas_groups(c);
    st = observe(c, s);
    if (st != CUCORE_OK || c->s.rows >= budget || c->s.lost) break;
    if (c->o.time_limit_s > 0 && cc_trun_now_ms() - t0 >= c->o.time_limit_s * 1e3) {
      c->s.stopped_by_time = 1;
      break;
    }
    learn_from_others(c, s);
    if (!next_batch(c, s, ask, batch)) break;
    cc_tstore_resume(c); /* the new rows the store has */
    st = cc_tcomp_restart(c);
  }
  free(ask);
  c->round_first = 0;
  c->s.evals = c->s.rows;
  return cc_tmeas_end(c, st);
}

cucore_status cc_tmeas_search(cc_trun *c) {
  c->s.searched = 1;
  cucore_status st = cucore_tune_space_count(c->space, &c->s.counts);
  cc_tlive *l = NULL;
  if (st == CUCORE_OK) st = cc_tlive_open(c->space, &l);
  if (st != CUCORE_OK) return st;
  uint64_t count = cc_tlive_domain(l)->count;
  uint64_t budget = c->o.max_evals < count ? c->o.max_evals : count;
  unsigned n = c->o.shard_count > 1 ? c->o.shard_count : 1, i = n > 1 ? c->o.shard_index : 0;
  if (count && budget == count && !(c->o.time_limit_s > 0)) { /* the budget covers the space */
    c->s.exhaustive = 1; /* the caller measures every configuration in one pass */
    cc_tlive_close(l);
    return CUCORE_OK;
  }
  if (budget == 0) {
    cc_tlive_close(l);
    return cc_fail(CUCORE_INVALID_ARGUMENT, FN ": the space has no runnable configuration to "
                                               "search");
  }
  budget = budget / n + (i < budget % n); /* a shard's share; the store shares the results */
  if (budget == 0) {
    cc_tlive_close(l);
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   FN ": shard %u of %u has no share of a budget of %llu evaluations", i, n,
                   (unsigned long long)c->o.max_evals);
  }
  c->rows = cc_calloc((size_t)budget, sizeof *c->rows, FN ": the rows");
  cc_tsearch *s = NULL;
  if (!c->rows) st = cucore_last_status();
  if (st == CUCORE_OK)
    st = cc_tsearch_open(cc_tlive_domain(l), (cc_tstrategy)c->o.strategy, c->o.strategy_options,
                         c->o.seed + i, budget, &s);
  if (st == CUCORE_OK) st = search(c, s, budget);
  cc_tsearch_close(s);
  cc_tlive_close(l);
  return st;
}
