/*
 * search_local.c -- two local searches over Hamming neighbours (one parameter changed to
 * another of its values):
 *   ils     greedy iterated local search: the best of a few random samples, then its
 *           neighbours in random order, moving to the first that is faster (first
 *           improvement); at a local optimum (every neighbour proposed, none faster) a
 *           perturbation of the best so far (a few parameters redrawn) starts the next descent
 *   anneal  simulated annealing: a random neighbour of the current configuration, taken when
 *           faster or, when slower, with probability exp(-(log t' - log t) / T), T cooling
 *           geometrically from 0.5 to 0.005 over the whole budget (so the budget is used to the
 *           last configuration, never stopped early by the schedule)
 * A failed configuration is never moved to. Both propose several at once when asked (the next
 * neighbours in the order), and take results in any order.
 */
#include "tune/search.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The options (ILS_OPTIONS and ANNEAL_OPTIONS below: `init` first in both). */
enum { OPT_INIT = 0, OPT_PERTURB = 1 };  /* ILS_OPTIONS */
enum { OPT_T_START = 0, OPT_T_END = 1 }; /* ANNEAL_OPTIONS */

typedef struct local {
  size_t *cur;    /* the current configuration */
  double cur_val; /* its time (INFINITY: none yet) */
  uint64_t cur_index;
  size_t *moves; /* (param, value) pairs of the neighbourhood, shuffled: p * maxv + v */
  size_t nmoves, next;
  size_t maxv;      /* the most values of any parameter */
  size_t init;      /* random samples before the first descent */
  uint64_t restart; /* the perturbation proposed to start the next descent (+1; 0: none) */
} local;

static void shuffle(cc_tsearch *s, size_t *v, size_t n) {
  for (size_t i = n; i > 1; i--) {
    size_t j = (size_t)cc_rng_below(&s->rng, i), t = v[i - 1];
    v[i - 1] = v[j], v[j] = t;
  }
}

/* The current configuration becomes observation i; its neighbourhood reshuffled. */
static void move_to(cc_tsearch *s, local *l, size_t i) {
  cc_tdom_digits(s->dom, s->obs[i].index, l->cur);
  l->cur_val = s->obs[i].value;
  l->cur_index = s->obs[i].index;
  l->nmoves = 0, l->next = 0;
  for (size_t p = 0; p < s->dom->nparams; p++)
    for (size_t v = 0; v < s->dom->sizes[p]; v++)
      if (v != l->cur[p]) l->moves[l->nmoves++] = p * l->maxv + v;
  shuffle(s, l->moves, l->nmoves);
}

static cucore_status local_open(cc_tsearch *s) {
  local *l = cc_calloc(1, sizeof *l, "a local search");
  if (!l) return CUCORE_HOST_OUT_OF_MEMORY;
  s->state = l;
  size_t total = 0;
  for (size_t p = 0; p < s->dom->nparams; p++) {
    total += s->dom->sizes[p];
    if (s->dom->sizes[p] > l->maxv) l->maxv = s->dom->sizes[p];
  }
  l->cur = cc_calloc(s->dom->nparams + 1, sizeof *l->cur, "a local search");
  l->moves = cc_calloc(total + 1, sizeof *l->moves, "a local search");
  if (!l->cur || !l->moves) return CUCORE_HOST_OUT_OF_MEMORY;
  l->cur_val = INFINITY;
  size_t init = s->budget / 20 < 3 ? 3 : s->budget / 20 > 10 ? 10 : (size_t)(s->budget / 20);
  if (s->kind == CC_TS_ILS) init = (size_t)cc_tsearch_option(s, OPT_INIT, (double)init);
  l->init = init < s->budget ? init : (size_t)s->budget;
  return CUCORE_OK;
}

static void local_close(cc_tsearch *s) {
  local *l = s->state;
  free(l->cur);
  free(l->moves);
  free(l);
  s->state = NULL;
}

/* The next untried neighbour of the current configuration into s->scratch; 0 when none. */
static int next_neighbour(cc_tsearch *s, local *l) {
  while (l->next < l->nmoves) {
    size_t m = l->moves[l->next++];
    memcpy(s->scratch, l->cur, s->dom->nparams * sizeof *l->cur);
    s->scratch[m / l->maxv] = m % l->maxv;
    if (cc_tsearch_fresh(s, s->scratch)) return 1;
  }
  return 0;
}

/* The best so far with `k` random parameters redrawn (a fresh valid one), else a random one. */
static void perturb(cc_tsearch *s, size_t k) {
  for (int tries = 0; tries < 32; tries++) {
    cc_tdom_digits(s->dom, s->obs[s->best_obs].index, s->scratch);
    for (size_t j = 0; j < k; j++) {
      size_t p = (size_t)cc_rng_below(&s->rng, s->dom->nparams);
      s->scratch[p] = (size_t)cc_rng_below(&s->rng, s->dom->sizes[p]);
    }
    if (cc_tsearch_fresh(s, s->scratch)) return;
  }
  cc_tsearch_random_fresh(s, s->scratch);
}

/* 1 while a proposal waits for its result. */
static int pending(const cc_tsearch *s) {
  for (size_t i = s->nobs; i-- > 0;)
    if (s->obs[i].state == 0) return 1;
  return 0;
}

static size_t ils_propose(cc_tsearch *s, uint64_t *out, size_t want) {
  local *l = s->state;
  size_t n = 0;
  while (n < want) {
    if (!isfinite(l->cur_val)) { /* the random start: `init` samples, more while all fail */
      if (s->nobs >= l->init && (pending(s) || s->measured)) break;
      if (!cc_tsearch_random_fresh(s, s->scratch)) break;
    } else if (!next_neighbour(s, l)) {
      /* A local optimum: the descent's last results must be in before the next one starts
       * from a perturbation of the best so far. */
      if (pending(s) || l->restart) break;
      size_t k = s->opts.set & (1u << OPT_PERTURB) ? (size_t)s->opts.value[OPT_PERTURB]
                                                   : 2 + (size_t)cc_rng_below(&s->rng, 2);
      perturb(s, k);
      if (cc_tsearch_take(s, s->scratch, &out[n])) l->restart = out[n++] + 1;
      break;
    }
    if (!cc_tsearch_take(s, s->scratch, &out[n])) break;
    n++;
  }
  return n;
}

static void ils_observe(cc_tsearch *s, size_t i) {
  local *l = s->state;
  const cc_tobs *o = &s->obs[i];
  if (l->restart && o->index + 1 == l->restart) { /* the next descent starts here */
    l->restart = 0;
    if (o->state == 1) move_to(s, l, i);
    return;
  }
  if (!isfinite(l->cur_val)) { /* the start: the best of the random samples */
    if (s->measured && s->measured + s->failed >= l->init) move_to(s, l, s->best_obs);
    return;
  }
  if (o->state == 1 && o->value < l->cur_val) move_to(s, l, i);
}

/* ---- simulated annealing ---- */

static double temperature(const cc_tsearch *s) {
  double f = s->budget > 1 ? (double)s->nobs / (double)(s->budget - 1) : 1;
  double hot = cc_tsearch_option(s, OPT_T_START, 0.5);
  double cold = cc_tsearch_option(s, OPT_T_END, hot < 0.005 ? hot : 0.005);
  return hot * pow(cold / hot, f > 1 ? 1 : f);
}

static size_t anneal_propose(cc_tsearch *s, uint64_t *out, size_t want) {
  local *l = s->state;
  size_t n = 0;
  for (int tries = 0; n < want && tries < 64; tries++) {
    int ok = 0;
    if (isfinite(l->cur_val)) { /* a random neighbour */
      memcpy(s->scratch, l->cur, s->dom->nparams * sizeof *l->cur);
      size_t p = (size_t)cc_rng_below(&s->rng, s->dom->nparams);
      s->scratch[p] = (size_t)cc_rng_below(&s->rng, s->dom->sizes[p]);
      ok = cc_tsearch_fresh(s, s->scratch);
    }
    if (!ok && (tries >= 16 || !isfinite(l->cur_val))) ok = cc_tsearch_random_fresh(s, s->scratch);
    if (ok && cc_tsearch_take(s, s->scratch, &out[n])) n++;
  }
  return n;
}

static void anneal_observe(cc_tsearch *s, size_t i) {
  local *l = s->state;
  const cc_tobs *o = &s->obs[i];
  if (o->state != 1) return;
  if (!isfinite(l->cur_val) || o->value <= l->cur_val) {
    move_to(s, l, i);
    return;
  }
  double worse = log(o->value / l->cur_val);
  if (cc_rng_unit(&s->rng) < exp(-worse / temperature(s))) move_to(s, l, i);
}

static const cc_tstrat_option ILS_OPTIONS[] = {
    {"init", 1, 1e6, 1, "random samples before the first descent; default budget / 20, 3 to 10"},
    {"perturb", 1, 64, 1, "parameters redrawn to start the next descent; default 2 or 3"},
    {NULL, 0, 0, 0, NULL}};
static const cc_tstrat_option ANNEAL_OPTIONS[] = {
    {"t_start", 1e-6, 100, 0, "the first temperature, in log time; default 0.5"},
    {"t_end", 1e-9, 100, 0,
     "the last temperature (geometric cooling), at most t_start; "
     "default 0.005 (t_start when that is lower)"},
    {NULL, 0, 0, 0, NULL}};

/* The temperature must fall: t_end above t_start (given, or its default) is refused. */
static cucore_status anneal_check(const cc_tstrat_values *v) {
  double hot = v->set & (1u << OPT_T_START) ? v->value[OPT_T_START] : 0.5;
  if (!(v->set & (1u << OPT_T_END)) || v->value[OPT_T_END] <= hot) return CUCORE_OK;
  return cc_fail(CUCORE_INVALID_ARGUMENT,
                 "strategy options: anneal `t_end` %g is above `t_start` %g%s: expected the "
                 "temperature to fall (t_end <= t_start)",
                 v->value[OPT_T_END], hot, v->set & (1u << OPT_T_START) ? "" : " (its default)");
}

const cc_tstrat_ops cc_ts_ils_ops = {local_open,  ils_propose, ils_observe,
                                     local_close, ILS_OPTIONS, NULL};
const cc_tstrat_ops cc_ts_anneal_ops = {local_open,  anneal_propose, anneal_observe,
                                        local_close, ANNEAL_OPTIONS, anneal_check};
