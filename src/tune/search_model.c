/*
 * search_model.c -- the model-based searches, "bayes" (the default) and "forest": after a few
 * random samples a model learns log(time) (bayes: a Gaussian process, search_gp.c; forest: a
 * random forest, search_forest.c) from the value indices of every measured
 * configuration (with the `pairs` option, also the ratios and products of numeric parameters:
 * search_features.c), and a second forest learns which configurations fail (a failure is
 * information about its region, never a time); each proposal is the candidate with the largest
 * expected improvement over the best time, times its chance not to fail. Candidates are every
 * fresh Hamming neighbour of the best few configurations and a pool of random fresh ones, so a
 * proposal costs the same on a space of a thousand configurations or of millions. A batch takes
 * the next best candidates, halving the improvement expected of a neighbour of one already
 * taken, so a batch spreads out instead of crowding one spot. Two kinds of turn break the
 * forest's habit of polishing one basin: every 4th proposal explores (value pairs never
 * measured), every 8th takes the best of an additive model (one effect per value, which
 * carries a good value of one parameter over to configurations the forest has not linked it
 * with). Options weigh a candidate's uncertainty: the trees' spread (tree_doubt) and its value
 * pairs never measured (pair_doubt); the budget's last proposals can polish the best (polish),
 * its Hamming neighbours by expected improvement; turns can take a grey-wolf pack's children
 * (wolves, wolf_every: search_wolf.c). The time model's targets can be clipped at a quantile
 * (clip), so it models the fast region rather than how slow the slow configurations are. The
 * forest's defaults: the turns on, no clip; bayes's: no turns, clip 0.5, hyperparameter steps
 * at 10 % more rows (BAYES_* below). The rest is off by default in both.
 */
#include "tune/search_features.h"
#include "tune/search_forest.h"
#include "tune/search_gp.h"
#include "tune/search_wolf.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifndef POOL
#define POOL 1024 /* random candidates per proposal */
#endif
#define TOP 4 /* neighbours of the best this many join the candidates */
#ifndef NTREES
#define NTREES 32 /* trees of the time forest (the failure forest has 16) */
#endif
/* The start: a Latin hypercube of budget / 10 samples, at least 8, at most 20. */
#define INIT_DIV 10
#define INIT_MIN 8
#define INIT_MAX 20
/* Every EXPLORE_EVERY-th proposal explores: the candidate with the most important pairs of
 * values no measured configuration has (pairs weighed by the forest's importances), the
 * predicted time breaking ties. On the recorded spaces (bench/strategies.py, 50 seeds, 100
 * evaluations) it lifted the 10th percentile of optimum / best from 0.868 to 0.949 on pnpoly
 * and from 0.879 to 0.936 on GEMM, the medians staying 1.000; every 3rd, 5th or 6th did
 * less. */
#ifndef EXPLORE_EVERY
#define EXPLORE_EVERY 4
#endif
/* Every ADD_EVERY-th proposal (offset ADD_PHASE, never an exploring one) takes the candidate
 * the additive model finds fastest. 200 seeds, 100 evaluations: the share of runs within 0.95 of
 * the optimum went from 0.82 to 0.94 on pnpoly and from 0.90 to 0.91 on the H100 conv2d (10th
 * percentile 0.949 -> 0.994, 0.944 -> 0.959), GEMM 0.85 -> 0.83 (within its noise); every
 * 4th or 6th did less. */
#define ADD_EVERY 8
#define ADD_PHASE 2
/* The Gaussian process's hyperparameter steps per fit (search_gp.c; 4x on the first fit). On
 * the CLBlast GEMM recording (100 evaluations, bayes with clip=0.5 and the turns) 3 steps did
 * as well as 10 over 200 seeds (92 % of runs within 0.95 both) at a third of the cost, but
 * worse over seeds 0-49 on GEMM, pnpoly and the H100 conv2d (10th percentiles 0.921, 0.951,
 * median 0.977). */
#define GP_STEPS 10
/* bayes's defaults. The process alone or the clip alone did not move the CLBlast GEMM's share
 * of runs within 0.95 of the optimum (100 evaluations, 200 seeds: forest 0.82, the process
 * 0.78, the forest clipped 0.78); together 0.92, and without the exploring and additive turns
 * 0.96 (the turns help the forest, which the process's uncertainty does not need); stepping
 * the hyperparameters only at 10 % more rows keeps the share (0.96) at the forest's cost per
 * proposal (docs/BENCHMARKS.md). */
#define BAYES_CLIP 0.5
#define BAYES_GP_GROW 0.1
#define NOVEL_WEIGHT 0.5 /* a value never measured: this share of the times' spread as its doubt */
/* On a space of many parameters `tree_doubt=0.5,pair_doubt=1,polish=`budget / 10 do better
 * than the defaults, but not yet enough: on the CLBlast GEMM recording (10 parameters of
 * several values), 100 evaluations, the share of runs within 0.95 of the optimum went from
 * 0.82-0.86 to 0.91-0.93 (three sets of 200 seeds), yet seeds 0-49's 10th percentile is 0.897
 * (0.905 with the defaults), and on the spaces of 4-6 parameters the same options lowered it
 * (H100 conv2d 0.905 -> 0.84, pnpoly 0.925 -> 0.865): options, not defaults
 * (docs/BENCHMARKS.md). */

#define TOP_MAX 64              /* neighbours_of at most */
#define WOLF_NEAR (TOP_MAX + 1) /* a candidate's `near`: a child of the pack (search_wolf.c) */
#define DESC_NEAR (TOP_MAX + 2) /* a candidate's `near`: a neighbour of the descent's anchor */
#define WOLF_PHASE 1            /* wolf_every's turns: proposal n with n % wolf_every == 1 */
#define WOLF_SHAKE 0.2          /* a child's chance to move one parameter to an adjacent value */

typedef struct cand {
  uint64_t index;
  double score;      /* expected improvement times the chance not to fail (-INFINITY: taken) */
  double explore;    /* the share of important value pairs never measured, for exploring turns */
  double additive;   /* the additive model's log time, the chance of failing as a cost */
  size_t near;       /* the first of the best few whose neighbour it is (TOP_MAX: none) */
  double mu, pn, pf; /* the predicted log time, the share of new pairs, the chance to fail */
} cand;

typedef struct bound {
  double b; /* a candidate's score at most */
  size_t i;
} bound;

/* The options (OPTIONS below), their defaults the macros above. */
enum {
  OPT_TREES,
  OPT_POOL,
  OPT_INIT,
  OPT_EXPLORE_EVERY,
  OPT_ADDITIVE_EVERY,
  OPT_NEIGHBOURS_OF,
  OPT_PAIRS,
  OPT_TREE_DOUBT,
  OPT_PAIR_DOUBT,
  OPT_POLISH,
  OPT_WOLVES,
  OPT_WOLF_EVERY,
  OPT_WOLF_PICK,
  OPT_PACK,
  OPT_WOLF_APART,
  OPT_DESCEND,
  OPT_DESCEND_APART,
  OPT_GP_STEPS,
  OPT_GP_KERNEL,
  OPT_CLIP,
  OPT_GP_GROW
};

typedef struct model {
  size_t init;                                        /* random samples before the model */
  size_t pool, top, explore_every, add_every, polish; /* the options */
  size_t near; /* the best few's place of the neighbours being added (TOP_MAX: none) */
  size_t wolves, wolf_every, wolf_pick, pack, wolf_apart; /* the pack's options */
  size_t *wolf_work;                                      /* its scratch: 4 x nparams */
  size_t descend, descend_apart;                          /* the descent's options */
  long anchor; /* the descent's configuration (an observation; -1: none) */
  int trees;
  cc_tgp *gp;     /* bayes's model of log time (NULL: the forest's search) */
  int gp_steps;   /* its hyperparameters' steps per fit */
  double gp_grow; /* the `gp_grow` option: the rows' growth between fits that take steps */
  size_t gp_rows; /* the rows at the last fit that took steps */
  double tree_doubt, pair_doubt; /* the options: the uncertainty's two parts, weighed */
  cc_tfeat feat;                 /* what the forests see of a configuration */
  double *imp;                   /* the time forest's importances per parameter (nparams) */
  double *x, *y;                 /* the training rows (feat.n features each) and targets */
  size_t cap_x, cap_y;
  double clip; /* the `clip` option: the time model's targets past this quantile cut to it */
  double *yc;  /* the forest's clipped targets (clip < 1) */
  size_t cap_yc;
  cand *c; /* the candidates of one proposal */
  size_t nc, cap_c;
  bound *order; /* the Gaussian process's candidates by their bounds (gp_exact) */
  size_t cap_order;
  double *best_exact; /* the best exact scores so far (gp_exact) */
  size_t cap_best_exact;
  uint64_t *set; /* their indices + 1, open addressing */
  size_t set_cap;
  double *row; /* one candidate's features */
  double *eff; /* the additive model: each value's effect on log time (by the domain's offsets) */
  double eff_mean;
  double *eff_sum; /* its scratch */
  size_t *eff_cnt;
  size_t *seen; /* measured configurations with each value (by the domain's offsets) */
  size_t *perm; /* the start's strata: init per parameter */
  /* nparams x nparams: where the cells of the pair (p < q) start; SIZE_MAX: not kept */
  size_t *pair_base;
  unsigned *pair_seen; /* measured configurations with each pair of values */
  size_t npair_cells;
} model;

/* The pair counts: a cell per pair of values of two parameters, up to 2^22 cells in all (a
 * pair past that is not tracked). */
static cucore_status pairs_open(cc_tsearch *s, model *m) {
  const cc_tdom *d = s->dom;
  size_t np = d->nparams, cells = 0;
  m->pair_base = cc_calloc(np * np + 1, sizeof *m->pair_base, "a model-based search");
  if (!m->pair_base) return CUCORE_HOST_OUT_OF_MEMORY;
  for (size_t p = 0; p < np; p++)
    for (size_t q = 0; q < np; q++) {
      size_t c = d->sizes[p] * d->sizes[q];
      int keep = p < q && d->sizes[p] > 1 && d->sizes[q] > 1 && cells + c <= (1u << 22);
      m->pair_base[p * np + q] = keep ? cells : SIZE_MAX;
      cells += keep ? c : 0;
    }
  m->npair_cells = cells;
  m->pair_seen = cc_calloc(cells + 1, sizeof *m->pair_seen, "a model-based search");
  return m->pair_seen ? CUCORE_OK : CUCORE_HOST_OUT_OF_MEMORY;
}

static cucore_status model_open(cc_tsearch *s) {
  model *m = cc_calloc(1, sizeof *m, "a model-based search");
  if (!m) return CUCORE_HOST_OUT_OF_MEMORY;
  s->state = m;
  uint64_t init = s->budget / INIT_DIV;
  init = init < INIT_MIN ? INIT_MIN : init > INIT_MAX ? INIT_MAX : init;
  init = (uint64_t)cc_tsearch_option(s, OPT_INIT, (double)init);
  m->init = (size_t)(init < s->budget ? init : s->budget); /* never past the budget */
  m->pool = (size_t)cc_tsearch_option(s, OPT_POOL, POOL);
  m->top = (size_t)cc_tsearch_option(s, OPT_NEIGHBOURS_OF, TOP);
  m->trees = (int)cc_tsearch_option(s, OPT_TREES, NTREES);
  const cc_tdom *d = s->dom;
  int bayes = s->kind == CC_TS_BAYES; /* the Gaussian process and its defaults */
  m->tree_doubt = cc_tsearch_option(s, OPT_TREE_DOUBT, 1);
  m->clip = cc_tsearch_option(s, OPT_CLIP, bayes ? BAYES_CLIP : 1);
  m->pair_doubt = cc_tsearch_option(s, OPT_PAIR_DOUBT, 0);
  m->polish = (size_t)cc_tsearch_option(s, OPT_POLISH, 0);
  m->explore_every = (size_t)cc_tsearch_option(s, OPT_EXPLORE_EVERY, bayes ? 0 : EXPLORE_EVERY);
  m->add_every = (size_t)cc_tsearch_option(s, OPT_ADDITIVE_EVERY, bayes ? 0 : ADD_EVERY);
  m->wolves = (size_t)cc_tsearch_option(s, OPT_WOLVES, 0);
  m->wolf_every = (size_t)cc_tsearch_option(s, OPT_WOLF_EVERY, 0);
  m->wolf_pick = (size_t)cc_tsearch_option(s, OPT_WOLF_PICK, 1);
  m->pack = (size_t)cc_tsearch_option(s, OPT_PACK, 8);
  m->wolf_apart = (size_t)cc_tsearch_option(s, OPT_WOLF_APART, 2);
  m->descend = (size_t)cc_tsearch_option(s, OPT_DESCEND, 0);
  m->descend_apart = (size_t)cc_tsearch_option(s, OPT_DESCEND_APART, 3);
  m->anchor = -1;
  m->gp_steps = (int)cc_tsearch_option(s, OPT_GP_STEPS, GP_STEPS);
  m->gp_grow = cc_tsearch_option(s, OPT_GP_GROW, BAYES_GP_GROW);
  size_t total = d->nparams ? d->offset[d->nparams - 1] + d->sizes[d->nparams - 1] : 0;
  cucore_status st = cc_tfeat_open(d, (size_t)cc_tsearch_option(s, OPT_PAIRS, 0), &m->feat);
  cc_tgp_options go = {(cc_tgp_kernel)cc_tsearch_option(s, OPT_GP_KERNEL, 0), m->clip};
  if (st == CUCORE_OK && bayes) st = cc_tgp_open(m->feat.n, &go, &m->gp);
  if (st != CUCORE_OK) return st;
  m->row = cc_calloc(m->feat.n + 1, sizeof *m->row, "a model-based search");
  m->imp = cc_calloc(d->nparams + 1, sizeof *m->imp, "a model-based search");
  m->seen = cc_calloc(total + 1, sizeof *m->seen, "a model-based search");
  m->perm = cc_calloc(d->nparams * m->init + 1, sizeof *m->perm, "a model-based search");
  m->eff = cc_calloc(total + 1, sizeof *m->eff, "a model-based search");
  m->eff_sum = cc_calloc(total + 1, sizeof *m->eff_sum, "a model-based search");
  m->eff_cnt = cc_calloc(total + 1, sizeof *m->eff_cnt, "a model-based search");
  m->wolf_work = cc_calloc(4 * d->nparams + 1, sizeof *m->wolf_work, "a model-based search");
  if (!m->wolf_work || !m->row || !m->imp || !m->seen || !m->perm || !m->eff || !m->eff_sum ||
      !m->eff_cnt)
    return CUCORE_HOST_OUT_OF_MEMORY;
  for (size_t p = 0; p < d->nparams; p++) { /* the Latin hypercube's strata, shuffled */
    size_t *v = &m->perm[p * m->init];
    for (size_t i = 0; i < m->init; i++) v[i] = i;
    for (size_t i = m->init; i > 1; i--) {
      size_t j = (size_t)cc_rng_below(&s->rng, i), t = v[i - 1];
      v[i - 1] = v[j], v[j] = t;
    }
  }
  return pairs_open(s, m);
}

static void model_close(cc_tsearch *s) {
  model *m = s->state;
  cc_tfeat_close(&m->feat);
  cc_tgp_free(m->gp);
  free(m->yc), free(m->order), free(m->best_exact);
  free(m->imp), free(m->x), free(m->y), free(m->c), free(m->set), free(m->row), free(m->seen),
      free(m->perm);
  free(m->eff), free(m->eff_sum), free(m->eff_cnt), free(m->wolf_work);
  free(m->pair_base), free(m->pair_seen);
  free(m);
  s->state = NULL;
}

static void features(const cc_tsearch *s, const model *m, uint64_t index, double *row) {
  cc_tdom_digits(s->dom, index, s->scratch2);
  cc_tfeat_row(&m->feat, s->dom, s->scratch2, row);
}

/* The training rows: every measured configuration (`fail` 0: log of its time) or every
 * observed one (`fail` 1: 1 when it failed). Returns the row count (0: out of memory). */
static size_t training(cc_tsearch *s, model *m, int fail) {
  size_t p = m->feat.n, n = 0;
  for (size_t i = 0; i < s->nobs; i++) {
    const cc_tobs *o = &s->obs[i];
    if (o->state == 0 || (!fail && o->state != 1)) continue;
    double *x = cc_grow(m->x, &m->cap_x, (n + 1) * p, sizeof *x, "a model's rows");
    double *y = x ? cc_grow(m->y, &m->cap_y, n + 1, sizeof *y, "a model's rows") : NULL;
    if (x) m->x = x;
    if (!y) return 0;
    m->y = y;
    features(s, m, o->index, &m->x[n * p]);
    m->y[n++] = fail ? (o->state == 2) : log(o->value);
  }
  return n;
}

/* Adds a fresh configuration to the candidates (once); `valid` 1: known valid (drawn by rank),
 * so only "never proposed" is checked (a live space's validity is its walk's checks, the
 * larger part of a proposal's cost on a space of millions). */
static void add_cand_known(cc_tsearch *s, model *m, const size_t *digits, int valid) {
  uint64_t index = cc_tdom_index(s->dom, digits);
  if (valid ? cc_tsearch_find(s, index) >= 0 : !cc_tsearch_fresh(s, digits)) return;
  if ((m->nc + 1) * 2 > m->set_cap) {
    size_t cap = m->set_cap ? m->set_cap * 2 : 4096;
    uint64_t *set = cc_calloc(cap, sizeof *set, "a model's candidates");
    if (!set) return;
    for (size_t i = 0; i < m->nc; i++) {
      uint64_t h = (m->c[i].index + 1) * 0x9e3779b97f4a7c15ull;
      size_t j = (size_t)(h >> 17) & (cap - 1);
      while (set[j]) j = (j + 1) & (cap - 1);
      set[j] = m->c[i].index + 1;
    }
    free(m->set);
    m->set = set, m->set_cap = cap;
  }
  uint64_t h = (index + 1) * 0x9e3779b97f4a7c15ull;
  size_t j = (size_t)(h >> 17) & (m->set_cap - 1);
  while (m->set[j] && m->set[j] != index + 1) j = (j + 1) & (m->set_cap - 1);
  if (m->set[j]) return;
  cand *c = cc_grow(m->c, &m->cap_c, m->nc + 1, sizeof *c, "a model's candidates");
  if (!c) return;
  m->c = c;
  m->set[j] = index + 1;
  m->c[m->nc++] = (cand){index, 0, 0, 0, m->near, 0, 0, 0};
}

static void add_cand(cc_tsearch *s, model *m, const size_t *digits) {
  add_cand_known(s, m, digits, 0);
}

/* The measured observations' places, fastest first, at most k of them. */
static size_t best_few(const cc_tsearch *s, size_t *top, size_t k) {
  size_t n = 0;
  if (!k) return 0;
  for (size_t i = 0; i < s->nobs; i++) {
    if (s->obs[i].state != 1) continue;
    size_t at = n < k ? n++ : k;
    if (at == k && s->obs[i].value >= s->obs[top[k - 1]].value) continue;
    if (at == k) at = k - 1;
    while (at > 0 && s->obs[top[at - 1]].value > s->obs[i].value) top[at] = top[at - 1], at--;
    top[at] = i;
  }
  return n;
}

/* The additive model of log time over the n training rows: their mean plus one effect per
 * value, fitted by backfitting (8 sweeps) with shrinkage (a value measured c times keeps
 * c / (c + 1) of its mean residual; one never measured has no effect). */
static void additive_fit(cc_tsearch *s, model *m, size_t n) {
  const cc_tdom *d = s->dom;
  size_t np = d->nparams, nf = m->feat.n, total = d->offset[np - 1] + d->sizes[np - 1];
  memset(m->eff, 0, total * sizeof *m->eff);
  m->eff_mean = 0;
  for (size_t i = 0; i < n; i++) m->eff_mean += m->y[i] / (double)n;
  for (int sweep = 0; sweep < 8; sweep++)
    for (size_t q = 0; q < np; q++) {
      double *sum = m->eff_sum + d->offset[q], *eff = m->eff + d->offset[q];
      size_t *cnt = m->eff_cnt + d->offset[q];
      memset(sum, 0, d->sizes[q] * sizeof *sum);
      memset(cnt, 0, d->sizes[q] * sizeof *cnt);
      for (size_t i = 0; i < n; i++) {
        double r = m->y[i] - m->eff_mean;
        for (size_t j = 0; j < np; j++)
          if (j != q) r -= m->eff[d->offset[j] + (size_t)m->x[i * nf + j]];
        size_t v = (size_t)m->x[i * nf + q];
        sum[v] += r, cnt[v]++;
      }
      for (size_t v = 0; v < d->sizes[q]; v++) eff[v] = sum[v] / ((double)cnt[v] + 1);
    }
}

static double additive_predict(const cc_tdom *d, const model *m, const double *row) {
  double y = m->eff_mean;
  for (size_t q = 0; q < d->nparams; q++) y += m->eff[d->offset[q] + (size_t)row[q]];
  return y;
}

/* The additive model's fastest configuration (the best effect of each parameter) joins the
 * candidates, fitted on the n measured rows (training's, in m->x and m->y). */
static void additive_best(cc_tsearch *s, model *m, size_t n) {
  const cc_tdom *d = s->dom;
  additive_fit(s, m, n);
  for (size_t q = 0; q < d->nparams; q++) {
    const double *eff = m->eff + d->offset[q];
    size_t b = 0;
    for (size_t v = 1; v < d->sizes[q]; v++) b = eff[v] < eff[b] ? v : b;
    s->scratch[q] = b;
  }
  add_cand(s, m, s->scratch);
}

static size_t wolf_children(const cc_tsearch *s, const model *m, size_t want);
static int descending(cc_tsearch *s, model *m, size_t want);

/* The fresh Hamming neighbours of configuration `index` join the candidates, tagged `near`. */
static void neighbours_of(cc_tsearch *s, model *m, uint64_t index, size_t near) {
  const cc_tdom *d = s->dom;
  m->near = near;
  cc_tdom_digits(d, index, s->scratch);
  for (size_t p = 0; p < d->nparams; p++) {
    size_t keep = s->scratch[p];
    for (size_t v = 0; v < d->sizes[p]; v++) {
      s->scratch[p] = v;
      if (v != keep) add_cand(s, m, s->scratch);
    }
    s->scratch[p] = keep;
  }
}

/* The candidates of one proposal; n: the measured rows training() left in m->x and m->y. */
static void candidates(cc_tsearch *s, model *m, size_t n, size_t want) {
  const cc_tdom *d = s->dom;
  size_t top[TOP_MAX], ntop = best_few(s, top, m->top);
  m->nc = 0;
  if (m->set) memset(m->set, 0, m->set_cap * sizeof *m->set);
  m->near = WOLF_NEAR; /* the pack's children first, so none is taken for a neighbour */
  for (size_t k = 0, nk = wolf_children(s, m, want); k < nk; k++)
    if (cc_twolf_child(s, m->pack, m->wolf_apart, WOLF_SHAKE, m->wolf_work, s->scratch))
      add_cand(s, m, s->scratch);
  if (descending(s, m, want)) /* then the anchor's neighbours */
    neighbours_of(s, m, s->obs[m->anchor].index, DESC_NEAR);
  for (size_t t = 0; t < ntop; t++) neighbours_of(s, m, s->obs[top[t]].index, t);
  m->near = TOP_MAX;
  for (size_t k = 0; k < m->pool && m->nc + s->nobs < d->count; k++) {
    d->at_rank(d->ctx, cc_rng_below(&s->rng, d->count), s->scratch);
    add_cand_known(s, m, s->scratch, 1);
  }
  additive_best(s, m, n);
}

static double expected_improvement(double best, double mu, double sd) {
  if (sd <= 1e-12) return best > mu ? best - mu : 0;
  double z = (best - mu) / sd;
  return (best - mu) * 0.5 * erfc(-z / sqrt(2.0)) +
         sd * exp(-0.5 * z * z) * 0.3989422804014327; /* 1 / sqrt(2 pi) */
}

/* Scores every candidate: the expected improvement of log(time) over the best, times the
 * chance not to fail (when anything failed); ties broken by the lower predicted time. */
/* The values of each parameter among the measured configurations (m->seen), and the
 * standard deviation of the log-times of the n training rows. */
static double novelty_scale(model *m, size_t n) {
  double mean = 0, var = 0;
  for (size_t i = 0; i < n; i++) mean += m->y[i];
  mean /= (double)n;
  for (size_t i = 0; i < n; i++) var += (m->y[i] - mean) * (m->y[i] - mean);
  return n > 1 ? NOVEL_WEIGHT * sqrt(var / (double)(n - 1)) : 0;
}

static void count_values(cc_tsearch *s, model *m) {
  const cc_tdom *d = s->dom;
  size_t total = d->offset[d->nparams - 1] + d->sizes[d->nparams - 1], np = d->nparams;
  memset(m->seen, 0, total * sizeof *m->seen);
  if (m->pair_seen) memset(m->pair_seen, 0, m->npair_cells * sizeof *m->pair_seen);
  for (size_t i = 0; i < s->nobs; i++) {
    if (s->obs[i].state != 1) continue;
    cc_tdom_digits(d, s->obs[i].index, s->scratch2);
    for (size_t q = 0; q < np; q++) m->seen[d->offset[q] + s->scratch2[q]]++;
    for (size_t p = 0; m->pair_seen && p < np; p++)
      for (size_t q = p + 1; q < np; q++)
        if (m->pair_base[p * np + q] != SIZE_MAX)
          m->pair_seen[m->pair_base[p * np + q] + s->scratch2[p] * d->sizes[q] + s->scratch2[q]]++;
  }
}

/* The share of the important pairs of values in `row` that no measured configuration has:
 * each pair of parameters weighs the product of their importances. */
static double pair_novelty(const cc_tsearch *s, const model *m, const double *row,
                           const double *imp) {
  const cc_tdom *d = s->dom;
  size_t np = d->nparams;
  double novel = 0, total = 0;
  for (size_t p = 0; m->pair_seen && p < np; p++)
    for (size_t q = p + 1; q < np; q++) {
      if (m->pair_base[p * np + q] == SIZE_MAX) continue;
      double w = imp[p] * imp[q];
      total += w;
      size_t cell = m->pair_base[p * np + q] + (size_t)row[p] * d->sizes[q] + (size_t)row[q];
      if (!m->pair_seen[cell]) novel += w;
    }
  return total > 0 ? novel / total : 0;
}

/* A candidate's uncertainty in log time: the trees' spread sd (times the `tree_doubt`
 * option); a value no measured configuration has adds the spread of the times seen (the
 * forest cannot tell it from its neighbour values: its trees agree, so it looks certain); with
 * the `pair_doubt` option, the share pn of its important value pairs never measured adds that
 * many standard deviations of the log times, scaled by sqrt(pn) (a value seen only with bad
 * partners is not known to be bad with these). */
static double doubt(const cc_tsearch *s, const model *m, double sd, double spread, double pn) {
  const cc_tdom *d = s->dom;
  size_t novel = 0;
  for (size_t q = 0; q < d->nparams; q++) novel += m->seen[d->offset[q] + (size_t)m->row[q]] == 0;
  double pair = m->pair_doubt * spread / NOVEL_WEIGHT;
  sd *= m->tree_doubt;
  if (!novel && pair * pn == 0) return sd;
  return sqrt(sd * sd + spread * spread * (double)novel + pair * pair * pn);
}

/* The forest's targets: the n in m->y, or with `clip` below 1 those above its quantile cut to
 * it (NULL: out of memory). */
static const double *forest_targets(model *m, size_t n) {
  if (m->clip >= 1) return m->y;
  double *yc = cc_grow(m->yc, &m->cap_yc, n + 1, sizeof *yc, "a model's rows");
  if (!yc) return NULL;
  m->yc = yc;
  memcpy(yc, m->y, n * sizeof *yc);
  qsort(yc, n, sizeof *yc, cc_cmp_double);
  size_t at = (size_t)(m->clip * (double)(n - 1) + 0.5);
  double cut = yc[at < n ? at : n - 1];
  for (size_t i = 0; i < n; i++) yc[i] = m->y[i] < cut ? m->y[i] : cut;
  return yc;
}

/* The Gaussian process's hyperparameter steps for a fit to n rows: gp_steps when the rows
 * have grown by gp_grow (a share) since the last fit that took steps, else none (the fit then
 * only factors the kernel matrix again). */
static int gp_steps(model *m, size_t n) {
  if (m->gp_rows && (double)n < (double)m->gp_rows * (1 + m->gp_grow)) return 0;
  m->gp_rows = n;
  return m->gp_steps;
}

static int by_bound(const void *a, const void *b) {
  double x = ((const bound *)a)->b, y = ((const bound *)b)->b;
  size_t i = ((const bound *)a)->i, j = ((const bound *)b)->i;
  return x != y ? (x < y) - (x > y) : (i > j) - (i < j); /* the largest first */
}

/* The exact score of candidate i with the Gaussian process (its posterior's spread). */
static double gp_score(cc_tsearch *s, model *m, size_t i, double best, double spread) {
  cand *c = &m->c[i];
  double mu, sd;
  features(s, m, c->index, m->row);
  cc_tgp_predict(m->gp, m->row, &mu, &sd);
  sd = doubt(s, m, sd, spread, c->pn);
  return expected_improvement(best, mu, sd) * (1 - c->pf) - 1e-9 * mu;
}

/* With the Gaussian process the candidates' scores are bounds at first (their doubt from the
 * prior's spread, which no posterior's exceeds; the posterior's costs a triangular solve per
 * candidate). The exact scores are computed in the order of the bounds until `want` are exact
 * and the next bound is below the want-th best exact score halved `want` times: the picks of a
 * batch (each halving its neighbours' scores) then never reach a candidate left at its bound,
 * so the proposals are those of scoring every candidate exactly. */
static int gp_exact(cc_tsearch *s, model *m, size_t want, double best, double spread) {
  bound *o = cc_grow(m->order, &m->cap_order, m->nc + 1, sizeof *o, "a model's candidates");
  double *top = o ? cc_grow(m->best_exact, &m->cap_best_exact, want + 1, sizeof *top,
                            "a model's rows")
                  : NULL;
  if (o) m->order = o;
  if (!top) return 0;
  m->best_exact = top;
  for (size_t i = 0; i < m->nc; i++) o[i] = (bound){m->c[i].score, i};
  qsort(o, m->nc, sizeof *o, by_bound);
  size_t exact = 0;
  for (size_t k = 0; k < m->nc; k++) {
    double kth = exact >= want ? top[want - 1] : 0;
    if (kth > 0 && o[k].b < kth * pow(0.5, (double)want)) break;
    double v = gp_score(s, m, o[k].i, best, spread);
    m->c[o[k].i].score = v;
    size_t at = exact < want ? exact++ : want; /* the best `want` exact scores, largest first */
    if (at == want && v <= top[want - 1]) continue;
    if (at == want) at = want - 1;
    while (at > 0 && top[at - 1] < v) top[at] = top[at - 1], at--;
    top[at] = v;
  }
  return 1;
}

/* n: the measured rows training() left in m->x and m->y (the time forest's); want: the
 * proposals to make from them. */
static cucore_status score(cc_tsearch *s, model *m, size_t n, size_t want) {
  size_t p = m->feat.n;
  cc_tforest_options fo = {m->trees, p > 3 ? (p + 1) / 2 : p, 1, 1};
  cc_tforest *f = NULL, *fails = NULL;
  count_values(s, m);
  double best = log(s->best), spread = novelty_scale(m, n); /* before the failure rows */
  const double *yf = m->gp ? m->y : forest_targets(m, n);
  cucore_status st = !yf     ? CUCORE_HOST_OUT_OF_MEMORY
                     : m->gp ? cc_tgp_fit(m->gp, m->x, m->y, n, m->feat.levels, gp_steps(m, n))
                             : cc_tforest_fit(m->x, yf, n, p, m->feat.levels, &fo, &s->rng, &f);
  if (st == CUCORE_OK && s->failed) {
    cc_tforest_options fc = {16, fo.mtry, 2, 1};
    size_t nf = training(s, m, 1);
    st = nf ? cc_tforest_fit(m->x, m->y, nf, p, m->feat.levels, &fc, &s->rng, &fails)
            : CUCORE_HOST_OUT_OF_MEMORY;
  }
  const cc_tdom *d = s->dom;
  const double *imp = m->imp;
  if (st == CUCORE_OK)
    cc_tfeat_fold(&m->feat, m->gp ? cc_tgp_relevance(m->gp) : cc_tforest_importance(f), m->imp);
  /* bounds first where the turns take candidates by score only at the top (gp_exact) */
  int bounds = m->gp && !m->polish && !m->wolves && !m->wolf_every && !m->descend;
  for (size_t i = 0; st == CUCORE_OK && i < m->nc; i++) {
    double mu, sd, pf = 0, sdf;
    features(s, m, m->c[i].index, m->row);
    if (m->gp)
      cc_tgp_predict(m->gp, m->row, &mu, bounds ? NULL : &sd);
    else
      cc_tforest_predict(f, m->row, &mu, &sd);
    if (bounds) sd = cc_tgp_sd_max(m->gp);
    double pn = pair_novelty(s, m, m->row, imp);
    sd = doubt(s, m, sd, spread, pn);
    if (fails) cc_tforest_predict(fails, m->row, &pf, &sdf);
    m->c[i].mu = mu, m->c[i].pn = pn, m->c[i].pf = pf;
    m->c[i].score = expected_improvement(best, mu, sd) * (1 - pf) - 1e-9 * mu;
    m->c[i].explore = pn - 1e-3 * (mu - best) / (spread + 1e-9);
    m->c[i].additive = -additive_predict(d, m, m->row) + log(1 - pf + 1e-9) - 1e-3 * mu;
  }
  if (st == CUCORE_OK && bounds && !gp_exact(s, m, want ? want : 1, best, spread))
    st = CUCORE_HOST_OUT_OF_MEMORY;
  cc_tforest_free(f);
  cc_tforest_free(fails);
  return st;
}

/* 1 when two configurations differ in exactly one parameter. */
static int neighbours(const cc_tsearch *s, uint64_t a, uint64_t b) {
  size_t diff = 0;
  for (size_t p = s->dom->nparams; p-- > 0 && diff < 2;) {
    diff += a % s->dom->sizes[p] != b % s->dom->sizes[p];
    a /= s->dom->sizes[p], b /= s->dom->sizes[p];
  }
  return diff == 1;
}

/* Sample i of the start into s->scratch: a Latin hypercube over the value indices (each
 * parameter's values spread evenly over the start's samples, in a random order per
 * parameter), so the model sees every value of a parameter with few values; one that is
 * invalid or proposed already has parameters redrawn, else a random one is taken. */
static int first_design(cc_tsearch *s, model *m, size_t i) {
  const cc_tdom *d = s->dom;
  if (i >= m->init) return cc_tsearch_random_fresh(s, s->scratch);
  for (size_t p = 0; p < d->nparams; p++) {
    double u = ((double)m->perm[p * m->init + i] + cc_rng_unit(&s->rng)) / (double)m->init;
    size_t v = (size_t)(u * (double)d->sizes[p]);
    s->scratch[p] = v < d->sizes[p] ? v : d->sizes[p] - 1;
  }
  return cc_tsearch_repair(s, s->scratch, 32);
}

/* This proposal's turn: 1 exploring, 2 additive, 3 polishing (the budget's last `polish`
 * proposals), 4 the pack's (the `wolves` proposals before those, and every `wolf_every`-th),
 * 0 expected improvement. */
static int turn_at(const model *m, size_t nobs, uint64_t left) {
  size_t ex = m->explore_every, add = m->add_every, we = m->wolf_every;
  if (left <= m->polish) return 3;
  if (left <= m->polish + m->wolves) return 4;
  if (left <= m->polish + m->wolves + m->descend) return 5;
  if (ex && nobs % ex == 0) return 1;
  if (add && nobs % add == ADD_PHASE % add) return 2;
  return we && nobs % we == WOLF_PHASE % we ? 4 : 0;
}

static int this_turn(const cc_tsearch *s, const model *m) {
  return turn_at(m, s->nobs, cc_tsearch_left(s));
}

/* The pack's children to make for the next `want` proposals: wolf_pick + want - 1 when one of
 * them is the pack's turn, else none (so a search without such turns is the same). */
static size_t wolf_children(const cc_tsearch *s, const model *m, size_t want) {
  uint64_t left = cc_tsearch_left(s);
  for (size_t j = 0; j < want && j < left; j++)
    if (turn_at(m, s->nobs + j, left - j) == 4) return m->wolf_pick + want - 1;
  return 0;
}

/* Parameters in which configurations a and b differ. */
static size_t distance(const cc_tsearch *s, uint64_t a, uint64_t b) {
  size_t diff = 0;
  for (size_t p = s->dom->nparams; p-- > 0;) {
    diff += a % s->dom->sizes[p] != b % s->dom->sizes[p];
    a /= s->dom->sizes[p], b /= s->dom->sizes[p];
  }
  return diff;
}

/* 1 when configuration `index` has a Hamming neighbour never proposed. */
static int has_fresh_neighbour(cc_tsearch *s, uint64_t index) {
  const cc_tdom *d = s->dom;
  cc_tdom_digits(d, index, s->scratch);
  for (size_t p = 0; p < d->nparams; p++) {
    size_t keep = s->scratch[p];
    for (size_t v = 0; v < d->sizes[p]; v++) {
      s->scratch[p] = v;
      if (v != keep && cc_tsearch_fresh(s, s->scratch)) return 1;
    }
    s->scratch[p] = keep;
  }
  return 0;
}

/* The descent from observation a: while a measured neighbour is faster, to the fastest. */
static long descend_from(const cc_tsearch *s, long a) {
  for (long next = a; next >= 0; a = next < 0 ? a : next) {
    next = -1;
    for (size_t i = 0; i < s->nobs; i++) {
      const cc_tobs *o = &s->obs[i];
      double top = next < 0 ? s->obs[a].value : s->obs[next].value;
      if (o->state == 1 && o->value < top && distance(s, o->index, s->obs[a].index) == 1)
        next = (long)i;
    }
  }
  return a;
}

/* The descent's anchor brought up to date (descend_from); where it has no fresh neighbour
 * left, a new one: of the measured configurations at least `descend_apart` parameters from
 * the best, the fastest whose descent ends where a neighbour is fresh (the best's own where
 * none is). 1 when one of the next `want` proposals is the descent's and the anchor holds. */
static int descending(cc_tsearch *s, model *m, size_t want) {
  uint64_t left = cc_tsearch_left(s);
  int turn = 0;
  for (size_t j = 0; j < want && j < left && !turn; j++)
    turn = turn_at(m, s->nobs + j, left - j) == 5;
  if (!turn || !s->measured) return 0;
  if (m->anchor >= 0) m->anchor = descend_from(s, m->anchor);
  if (m->anchor >= 0 && has_fresh_neighbour(s, s->obs[m->anchor].index)) return 1;
  m->anchor = -1;
  uint64_t best = s->obs[s->best_obs].index;
  for (int near = 0; near < 2 && m->anchor < 0; near++) { /* far from the best, then any */
    double after = -INFINITY;
    for (;;) { /* the measured ones in order of time */
      long pick = -1;
      for (size_t i = 0; i < s->nobs; i++) {
        const cc_tobs *o = &s->obs[i];
        if (o->state != 1 || o->value <= after || (pick >= 0 && o->value >= s->obs[pick].value))
          continue;
        if (near || distance(s, o->index, best) >= m->descend_apart) pick = (long)i;
      }
      if (pick < 0) break;
      after = s->obs[pick].value;
      long a = descend_from(s, pick);
      if (has_fresh_neighbour(s, s->obs[a].index)) {
        m->anchor = a;
        break;
      }
    }
  }
  return m->anchor >= 0;
}

/* The candidate of this proposal's turn (this_turn; polishing: a neighbour of the best
 * configuration first, else of the next best, by expected improvement; the pack's: its
 * children by expected improvement, else expected improvement); SIZE_MAX when none is left. */
static size_t next_candidate(const cc_tsearch *s, const model *m, int turn) {
  size_t best = SIZE_MAX;
  double top = -INFINITY;
  for (size_t i = 0; i < m->nc; i++) {
    const cand *c = &m->c[i];
    if (c->score == -INFINITY || (turn == 4 && c->near != WOLF_NEAR) ||
        (turn == 5 && c->near != DESC_NEAR))
      continue;
    double v = turn == 1 ? c->explore : turn == 2 ? c->additive : c->score;
    int closer = turn == 3 && best != SIZE_MAX && c->near != m->c[best].near;
    if (closer ? c->near < m->c[best].near : best == SIZE_MAX || v > top) best = i, top = v;
  }
  return best == SIZE_MAX && turn >= 4 ? next_candidate(s, m, 0) : best;
}

static size_t model_propose(cc_tsearch *s, uint64_t *out, size_t want) {
  model *m = s->state;
  size_t n = 0;
  while (n < want && (s->nobs < m->init || !s->measured)) { /* a spread-out start first */
    if (!first_design(s, m, s->nobs) || !cc_tsearch_take(s, s->scratch, &out[n])) break;
    n++;
  }
  if (n == want || !s->measured) return n;
  size_t rows = training(s, m, 0); /* once: the additive model and the time forest's rows */
  if (!rows) return n;
  candidates(s, m, rows, want - n);
  if (m->nc && score(s, m, rows, want - n) != CUCORE_OK) return n;
  while (n < want) {
    size_t best = next_candidate(s, m, this_turn(s, m));
    if (best == SIZE_MAX) { /* the candidates are spent: random fresh ones fill the batch */
      while (n < want && cc_tsearch_random_fresh(s, s->scratch) &&
             cc_tsearch_take(s, s->scratch, &out[n]))
        n++;
      break;
    }
    uint64_t index = m->c[best].index;
    m->c[best].score = -INFINITY;
    cc_tdom_digits(s->dom, index, s->scratch);
    if (!cc_tsearch_take(s, s->scratch, &out[n])) continue;
    n++;
    for (size_t i = 0; i < m->nc; i++) /* a batch spreads out */
      if (m->c[i].score > -INFINITY && neighbours(s, m->c[i].index, index)) m->c[i].score *= 0.5;
  }
  return n;
}

static void model_observe(cc_tsearch *s, size_t i) { (void)s, (void)i; }

static const cc_tstrat_option OPTIONS[] = {
    {"trees", 1, 1024, 1, "forest: trees of the time forest; default 32"},
    {"pool", 1, 1 << 24, 1, "random candidates scored per proposal; default 1024"},
    {"init", 1, 1e6, 1, "the first design's samples; default budget / 10, 8 to 20"},
    {"explore_every", 0, 1e6, 1,
     "every n-th proposal explores value pairs never measured (0: "
     "never); default 4 (bayes: 0)"},
    {"additive_every", 0, 1e6, 1,
     "every n-th proposal takes the additive model's best (0: "
     "never); default 8 (bayes: 0)"},
    {"neighbours_of", 0, TOP_MAX, 1,
     "the best this many configurations' neighbours join the "
     "candidates; default 4"},
    {"pairs", 0, 1e6, 1,
     "the ratio and product of each pair of numeric parameters join the forests' features "
     "when there are at most this many pairs (0: never); default 0"},
    {"tree_doubt", 0, 100, 0,
     "the uncertainty of a candidate's predicted time (the trees' spread; bayes: the "
     "process's standard deviation), times this; default 1"},
    {"pair_doubt", 0, 100, 0,
     "a candidate's uncertainty gains this many standard deviations of the measured log "
     "times, times the square root of its share of important value pairs never measured "
     "(0: none); default 0"},
    {"polish", 0, 1e6, 1,
     "the budget's last this many proposals polish the best: its Hamming neighbours first, "
     "then the next best's, each by expected improvement (0: never); default 0"},
    {"wolves", 0, 1e6, 1,
     "this many proposals before the polish take a grey-wolf pack's children (its leaders "
     "the best measured configurations of different basins, recombined with one of the pack "
     "per parameter; 0: never); default 0"},
    {"wolf_every", 0, 1e6, 1,
     "every n-th proposal takes a child of the pack as well (0: never); default 0"},
    {"wolf_pick", 1, 1024, 1,
     "the pack's children made for a turn, the forest's expected improvement picking one; "
     "default 1"},
    {"pack", 4, CC_TWOLF_PACK_MAX, 1, "the pack: the best this many measured; default 8"},
    {"wolf_apart", 1, 1e6, 1,
     "the pack's leaders differ from each other in this many parameters at least (the next "
     "best where none does); default 2"},
    {"descend", 0, 1e6, 1,
     "this many proposals before the pack's and the polish descend from another basin: the "
     "fastest measured configuration at least descend_apart parameters from the best, moved "
     "to a faster neighbour as soon as one is measured, its neighbours by expected "
     "improvement (0: never); default 0"},
    {"descend_apart", 1, 1e6, 1,
     "the descent starts this many parameters from the best at least; default 3"},
    {"gp_steps", 0, 1000, 1,
     "bayes: the Gaussian process's hyperparameters take this many gradient steps per fit, "
     "going on from the last fit (4x on the first); default 10"},
    {"gp_kernel", 0, 2, 1,
     "bayes: the Gaussian process's distance per parameter between scaled value indices: "
     "0 |a - b|, 1 (a - b)^2, 2 a != b; default 0"},
    {"clip", 0.05, 1, 0,
     "the time model's targets (log times) above this quantile of them count as that quantile, "
     "so the model spends its fit on the fast region (1: none); default 1 (bayes: 0.5)"},
    {"gp_grow", 0, 100, 0,
     "bayes: the Gaussian process's hyperparameters take their steps only when the rows have "
     "grown by this share since they last did (0: every fit); default 0.1"},
    {NULL, 0, 0, 0, NULL}};

/* The options one of the two searches has no use for are refused, named. */
static cucore_status refuse_unused(const cc_tstrat_values *v, const char *who, const size_t *k,
                                   size_t n, const char *why) {
  for (size_t i = 0; i < n; i++)
    if (v->set & (1u << k[i]))
      return cc_fail(CUCORE_INVALID_ARGUMENT, "%s has no option `%s`: %s", who, OPTIONS[k[i]].name,
                     why);
  return CUCORE_OK;
}

static cucore_status forest_check(const cc_tstrat_values *v) {
  static const size_t gp_only[] = {OPT_GP_STEPS, OPT_GP_KERNEL, OPT_GP_GROW};
  return refuse_unused(v, "forest", gp_only, CC_ARRAY_LEN(gp_only),
                       "it is the Gaussian process's (strategy bayes)");
}

static cucore_status bayes_check(const cc_tstrat_values *v) {
  static const size_t forest_only[] = {OPT_TREES};
  return refuse_unused(v, "bayes", forest_only, CC_ARRAY_LEN(forest_only),
                       "its time model is a Gaussian process, not a forest (strategy forest)");
}

const cc_tstrat_ops cc_ts_forest_ops = {model_open,  model_propose, model_observe,
                                        model_close, OPTIONS,       forest_check};
const cc_tstrat_ops cc_ts_bayes_ops = {model_open,  model_propose, model_observe,
                                       model_close, OPTIONS,       bayes_check};
