/*
 * search_gp.c -- a Gaussian process, the other surrogate of the model-based search. Its inputs
 * are the value indices, each scaled to 0 .. 1 (index / (levels - 1)), so an ordinal and a
 * binary parameter are read alike; its targets are standardised (mean 0, variance 1) and its
 * mean is constant (0). The kernel is
 *   k(a, b) = s2 * exp(-sum_j w_j * dist(a_j, b_j)) (+ noise on the diagonal),
 * dist |a - b| (the default), (a - b)^2 or a - b != 0, with a weight w_j per feature (automatic
 * relevance: a feature the times do not depend on gets a small weight). The hyperparameters
 * (log w_j, log s2, log noise) maximise the log marginal likelihood plus weak normal priors (so
 * a fit to a dozen rows stays sane), by a few steps of Adam per fit, each fit going on from the
 * last one's. All of it by hand: a fit of n rows costs about n^3 (a Cholesky, the inverse the
 * gradient needs) per step and a prediction n^2 / 2, so the rows are capped (CC_TGP_MAX_ROWS).
 */
#include "tune/search_gp.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LR 0.1           /* Adam's step in log space */
#define FIRST_STEPS 4    /* the first fit takes this many times the steps */
#define W_PRIOR -0.7     /* log w_j ~ N(W_PRIOR, W_SPREAD^2): w_j about 0.5 */
#define W_SPREAD 1.5     /*   (a full-range change of one value: correlation e^-0.5) */
#define S2_SPREAD 1.0    /* log s2 ~ N(0, 1) */
#define NOISE_PRIOR -4.6 /* log noise ~ N(log 0.01, 2^2) */
#define NOISE_SPREAD 2.0
#define JITTER 1e-8 /* added to the diagonal, times 10 until the Cholesky holds */

struct cc_tgp {
  size_t p, n, cap;
  cc_tgp_kernel kernel;
  double clip;     /* the options' */
  size_t np;       /* hyperparameters: p weights, then log s2, then log noise */
  double *h;       /* their values (logs) */
  double *am, *av; /* Adam's moments */
  double *grad;
  int fits;
  double *rel;   /* p: each weight's share */
  double *u;     /* n x p: the training rows, scaled to 0 .. 1 */
  double *yt;    /* n: the standardised targets */
  double *k;     /* n x n: the kernel matrix (noise included) */
  double *l;     /* n x n: its Cholesky factor (lower), then its inverse */
  double *inv;   /* n x n: the kernel matrix's inverse */
  double *alpha; /* n: K^-1 yt */
  double *v;     /* n: scratch */
  double *scale; /* p: 1 / (levels - 1), 0 for a feature of one value */
  double *w;     /* p: the weights, exp of their logs (as of the last factorisation) */
  size_t *lev;   /* p: the features' levels */
  size_t *off;   /* p: where each feature's levels start in tab */
  double *tab;   /* (sum of levels) x n: exp(-w_j dist(value, row i's)) per feature and value */
  size_t tab_cap;
  double ymean, ysd;
};

static double dist(cc_tgp_kernel kernel, double d) {
  return kernel == CC_TGP_SQUARED ? d * d : kernel == CC_TGP_MISMATCH ? (d != 0) : fabs(d);
}

void cc_tgp_free(cc_tgp *g) {
  if (!g) return;
  free(g->h), free(g->am), free(g->av), free(g->grad), free(g->rel), free(g->u), free(g->yt);
  free(g->k), free(g->l), free(g->inv), free(g->alpha), free(g->v), free(g->scale);
  free(g->w), free(g->lev), free(g->off), free(g->tab);
  free(g);
}

cucore_status cc_tgp_open(size_t p, const cc_tgp_options *o, cc_tgp **out) {
  *out = NULL;
  cc_tgp *g = cc_calloc(1, sizeof *g, "a Gaussian process");
  if (!g) return CUCORE_HOST_OUT_OF_MEMORY;
  g->p = p, g->kernel = o->kernel, g->clip = o->clip, g->np = p + 2;
  g->h = cc_calloc(g->np, sizeof *g->h, "a Gaussian process");
  g->am = cc_calloc(g->np, sizeof *g->am, "a Gaussian process");
  g->av = cc_calloc(g->np, sizeof *g->av, "a Gaussian process");
  g->grad = cc_calloc(g->np, sizeof *g->grad, "a Gaussian process");
  g->rel = cc_calloc(p + 1, sizeof *g->rel, "a Gaussian process");
  g->scale = cc_calloc(p + 1, sizeof *g->scale, "a Gaussian process");
  g->w = cc_calloc(p + 1, sizeof *g->w, "a Gaussian process");
  g->lev = cc_calloc(p + 1, sizeof *g->lev, "a Gaussian process");
  g->off = cc_calloc(p + 1, sizeof *g->off, "a Gaussian process");
  if (!g->h || !g->am || !g->av || !g->grad || !g->rel || !g->scale || !g->w || !g->lev ||
      !g->off) {
    cc_tgp_free(g);
    return CUCORE_HOST_OUT_OF_MEMORY;
  }
  for (size_t j = 0; j < p; j++) g->h[j] = W_PRIOR, g->rel[j] = 1.0 / (double)p;
  g->h[p] = 0, g->h[p + 1] = NOISE_PRIOR;
  *out = g;
  return CUCORE_OK;
}

/* Room for n rows; 0 when out of memory. */
static int reserve(cc_tgp *g, size_t n) {
  if (n <= g->cap) return 1;
  size_t p = g->p ? g->p : 1;
  free(g->u), free(g->yt), free(g->k), free(g->l), free(g->inv), free(g->alpha), free(g->v);
  g->u = cc_calloc(n * p, sizeof *g->u, "a Gaussian process");
  g->yt = cc_calloc(n, sizeof *g->yt, "a Gaussian process");
  g->k = cc_calloc(n * n, sizeof *g->k, "a Gaussian process");
  g->l = cc_calloc(n * n, sizeof *g->l, "a Gaussian process");
  g->inv = cc_calloc(n * n, sizeof *g->inv, "a Gaussian process");
  g->alpha = cc_calloc(n, sizeof *g->alpha, "a Gaussian process");
  g->v = cc_calloc(n, sizeof *g->v, "a Gaussian process");
  int ok = g->u && g->yt && g->k && g->l && g->inv && g->alpha && g->v;
  g->cap = ok ? n : 0;
  return ok;
}

/* The q quantile of y over the n rows (rows[i]); INFINITY when out of memory. */
static double quantile(const double *y, const size_t *rows, size_t n, double q) {
  double *sorted = malloc((n ? n : 1) * sizeof *sorted), cut = INFINITY;
  if (!sorted) return cut;
  for (size_t i = 0; i < n; i++) sorted[i] = rows ? y[rows[i]] : y[i];
  qsort(sorted, n, sizeof *sorted, cc_cmp_double);
  size_t at = (size_t)(q * (double)(n - 1) + 0.5);
  cut = n ? sorted[at < n ? at : n - 1] : INFINITY;
  free(sorted);
  return cut;
}

/* The rows a fit keeps (into out; returns how many): all of them up to `max`, else the fastest
 * half of that and the most recent of the others. */
static size_t keep_rows(const double *y, size_t n, size_t max, size_t *out) {
  if (n <= max) {
    for (size_t i = 0; i < n; i++) out[i] = i;
    return n;
  }
  /* the fastest half's slowest target */
  double cut = quantile(y, NULL, n, (double)(max / 2 - 1) / (double)(n - 1));
  size_t fast = 0, kept = 0;
  for (size_t i = 0; i < n; i++) fast += y[i] <= cut && fast < max / 2;
  size_t others = max - fast, seen_fast = 0;
  for (size_t i = 0; i < n; i++) { /* the fast ones (ties: the first) */
    int is_fast = y[i] <= cut && seen_fast < fast;
    seen_fast += is_fast;
    if (is_fast) out[kept++] = i;
  }
  for (size_t i = n; i-- > 0 && others > 0;) { /* the most recent others, newest first */
    int taken = 0;
    for (size_t k = 0; k < kept && !taken; k++) taken = out[k] == i;
    if (!taken) out[kept++] = i, others--;
  }
  return kept;
}

/* The sum of a[i] * b[i], i < n, in four chains (a single chain waits on each add). */
static double dot(const double *a, const double *b, size_t n) {
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  size_t i = 0;
  for (; i + 4 <= n; i += 4)
    s0 += a[i] * b[i], s1 += a[i + 1] * b[i + 1], s2 += a[i + 2] * b[i + 2],
        s3 += a[i + 3] * b[i + 3];
  for (; i < n; i++) s0 += a[i] * b[i];
  return (s0 + s1) + (s2 + s3);
}

/* The kernel between two scaled rows (the signal part, no noise). */
static double kern(const cc_tgp *g, const double *a, const double *b) {
  double s = 0;
  for (size_t j = 0; j < g->p; j++) s += g->w[j] * dist(g->kernel, a[j] - b[j]);
  return exp(g->h[g->p] - s);
}

/* The kernel matrix into g->k and its Cholesky factor into g->l (jitter added until it holds);
 * returns the log determinant's half (sum of log L_ii), NAN when it never held. */
static double factor(cc_tgp *g) {
  size_t n = g->n, p = g->p;
  double s2 = exp(g->h[p]), noise = exp(g->h[p + 1]);
  for (size_t j = 0; j < p; j++) g->w[j] = exp(g->h[j]);
  for (size_t a = 0; a < n; a++) {
    g->k[a * n + a] = s2 + noise;
    for (size_t b = 0; b < a; b++)
      g->k[a * n + b] = g->k[b * n + a] = kern(g, &g->u[a * p], &g->u[b * p]);
  }
  for (double jitter = JITTER; jitter < 1e-1; jitter *= 10) {
    int ok = 1;
    double half = 0;
    for (size_t i = 0; i < n && ok; i++)
      for (size_t j = 0; j <= i && ok; j++) {
        double s = g->k[i * n + j] + (i == j ? jitter * (s2 + noise) : 0);
        s -= dot(&g->l[i * n], &g->l[j * n], j);
        if (i == j) {
          ok = s > 0;
          g->l[i * n + i] = ok ? sqrt(s) : 0;
          half += ok ? log(g->l[i * n + i]) : 0;
        } else {
          g->l[i * n + j] = s / g->l[j * n + j];
        }
      }
    if (ok) return half;
  }
  return NAN;
}

/* x = L^-1 b (forward) into x; then, with `back`, L^-T of it in place. */
static void solve(const double *l, size_t n, const double *b, double *x, int back) {
  for (size_t i = 0; i < n; i++) x[i] = (b[i] - dot(&l[i * n], x, i)) / l[i * n + i];
  for (size_t i = n; back && i-- > 0;) {
    double s = x[i];
    for (size_t r = i + 1; r < n; r++) s -= l[r * n + i] * x[r];
    x[i] = s / l[i * n + i];
  }
}

/* The inverse of the kernel matrix into g->inv, from its factor (g->l is scratch after). */
static void invert(cc_tgp *g) {
  size_t n = g->n;
  const double *l = g->l;
  double *m = g->inv; /* row j: column j of L^-1 (zero above the diagonal) */
  for (size_t j = 0; j < n; j++) {
    double *x = &m[j * n];
    memset(x, 0, j * sizeof *x);
    x[j] = 1 / l[j * n + j];
    for (size_t i = j + 1; i < n; i++) x[i] = -dot(&l[i * n + j], &x[j], i - j) / l[i * n + i];
  }
  double *inv = g->l; /* K^-1 = L^-T L^-1: (a, b) the dot of rows a and b of m from max(a, b) */
  for (size_t a = 0; a < n; a++)
    for (size_t b = 0; b <= a; b++)
      inv[a * n + b] = inv[b * n + a] = dot(&m[a * n + a], &m[b * n + a], n - a);
  g->l = m, g->inv = inv;
}

/* The gradient of the log marginal likelihood (plus the priors) into g->grad; 0 when the
 * kernel matrix would not factor. */
static int gradient(cc_tgp *g) {
  size_t n = g->n, p = g->p;
  if (isnan(factor(g))) return 0;
  solve(g->l, n, g->yt, g->alpha, 1);
  invert(g);
  double *gr = g->grad, s2 = exp(g->h[p]), noise = exp(g->h[p + 1]);
  memset(gr, 0, g->np * sizeof *gr);
  for (size_t a = 0; a < n; a++) {
    double waa = g->alpha[a] * g->alpha[a] - g->inv[a * n + a];
    gr[p] += 0.5 * waa * s2, gr[p + 1] += 0.5 * waa * noise;
    for (size_t b = 0; b < a; b++) { /* the pair (a, b) and (b, a) */
      double wk = (g->alpha[a] * g->alpha[b] - g->inv[a * n + b]) * g->k[a * n + b];
      gr[p] += wk;
      for (size_t j = 0; j < p; j++)
        gr[j] -= wk * g->w[j] * dist(g->kernel, g->u[a * p + j] - g->u[b * p + j]);
    }
  }
  for (size_t j = 0; j < p; j++) gr[j] -= (g->h[j] - W_PRIOR) / (W_SPREAD * W_SPREAD);
  gr[p] -= g->h[p] / (S2_SPREAD * S2_SPREAD);
  gr[p + 1] -= (g->h[p + 1] - NOISE_PRIOR) / (NOISE_SPREAD * NOISE_SPREAD);
  return 1;
}

/* One step of Adam up the gradient (step t, from 1), the logs kept in sane bounds. */
static void adam(cc_tgp *g, int t) {
  const double b1 = 0.9, b2 = 0.999;
  for (size_t i = 0; i < g->np; i++) {
    g->am[i] = b1 * g->am[i] + (1 - b1) * g->grad[i];
    g->av[i] = b2 * g->av[i] + (1 - b2) * g->grad[i] * g->grad[i];
    double mh = g->am[i] / (1 - pow(b1, t)), vh = g->av[i] / (1 - pow(b2, t));
    g->h[i] += LR * mh / (sqrt(vh) + 1e-8);
    double lo = i < g->p ? -9 : i == g->p ? -4 : -14, hi = i < g->p ? 5 : i == g->p ? 4 : 0;
    g->h[i] = g->h[i] < lo ? lo : g->h[i] > hi ? hi : g->h[i];
  }
}

/* The kept rows scaled and the targets standardised into g->u and g->yt. */
static void load(cc_tgp *g, const double *x, const double *y, const size_t *rows,
                 const size_t *levels) {
  size_t n = g->n, p = g->p;
  for (size_t j = 0; j < p; j++) g->scale[j] = levels[j] > 1 ? 1.0 / (double)(levels[j] - 1) : 0;
  double mean = 0, var = 0, cut = g->clip < 1 ? quantile(y, rows, n, g->clip) : INFINITY;
  for (size_t i = 0; i < n; i++) g->yt[i] = y[rows[i]] < cut ? y[rows[i]] : cut;
  for (size_t i = 0; i < n; i++) mean += g->yt[i] / (double)n;
  for (size_t i = 0; i < n; i++) var += (g->yt[i] - mean) * (g->yt[i] - mean);
  g->ymean = mean;
  g->ysd = n > 1 && var > 0 ? sqrt(var / (double)(n - 1)) : 1;
  for (size_t i = 0; i < n; i++) {
    g->yt[i] = (g->yt[i] - mean) / g->ysd;
    for (size_t j = 0; j < p; j++) g->u[i * p + j] = x[rows[i] * p + j] * g->scale[j];
  }
}

/* The table of each feature's factor of the kernel, per value and training row, so a
 * prediction multiplies p factors per row instead of taking an exp; 0 when out of memory. */
static int tabulate(cc_tgp *g, const size_t *levels) {
  size_t n = g->n, p = g->p, total = 0;
  for (size_t j = 0; j < p; j++) g->lev[j] = levels[j] ? levels[j] : 1;
  for (size_t j = 0; j < p; j++) g->off[j] = total, total += g->lev[j];
  double *t = cc_grow(g->tab, &g->tab_cap, total * n + 1, sizeof *t, "a Gaussian process");
  if (!t) return 0;
  g->tab = t;
  for (size_t j = 0; j < p; j++)
    for (size_t v = 0; v < g->lev[j]; v++) {
      double *r = &t[(g->off[j] + v) * n], at = (double)v * g->scale[j];
      for (size_t i = 0; i < n; i++) r[i] = exp(-g->w[j] * dist(g->kernel, at - g->u[i * p + j]));
    }
  return 1;
}

cucore_status cc_tgp_fit(cc_tgp *g, const double *x, const double *y, size_t n,
                         const size_t *levels, int steps) {
  size_t *rows = cc_calloc(n ? n : 1, sizeof *rows, "a Gaussian process");
  if (!rows) return CUCORE_HOST_OUT_OF_MEMORY;
  int total = g->fits++ ? steps : FIRST_STEPS * steps;
  /* The steps on at most CC_TGP_STEP_ROWS rows, the factorisation on all that are kept. */
  size_t kept = keep_rows(y, n, total > 0 ? CC_TGP_STEP_ROWS : CC_TGP_MAX_ROWS, rows);
  if (!reserve(g, n < CC_TGP_MAX_ROWS ? n : CC_TGP_MAX_ROWS)) {
    free(rows);
    return CUCORE_HOST_OUT_OF_MEMORY;
  }
  g->n = kept;
  load(g, x, y, rows, levels);
  memset(g->am, 0, g->np * sizeof *g->am);
  memset(g->av, 0, g->np * sizeof *g->av);
  for (int t = 1; t <= total && kept > 1 && gradient(g); t++) adam(g, t);
  if (total > 0 && n > CC_TGP_STEP_ROWS) {
    g->n = kept = keep_rows(y, n, CC_TGP_MAX_ROWS, rows);
    load(g, x, y, rows, levels);
  }
  free(rows);
  if (isnan(factor(g))) { /* never on a sane kernel: back to the priors' values */
    for (size_t j = 0; j < g->p; j++) g->h[j] = W_PRIOR;
    g->h[g->p] = 0, g->h[g->p + 1] = 0;
    if (isnan(factor(g))) return CUCORE_HOST_OUT_OF_MEMORY;
  }
  solve(g->l, g->n, g->yt, g->alpha, 1);
  if (!tabulate(g, levels)) return CUCORE_HOST_OUT_OF_MEMORY;
  double total_w = 0;
  for (size_t j = 0; j < g->p; j++) total_w += exp(g->h[j]) * (g->scale[j] > 0);
  for (size_t j = 0; j < g->p; j++)
    g->rel[j] = total_w > 0 ? exp(g->h[j]) * (g->scale[j] > 0) / total_w : 1.0 / (double)g->p;
  return CUCORE_OK;
}

void cc_tgp_predict(cc_tgp *g, const double *x, double *mean, double *sd) {
  size_t n = g->n, p = g->p;
  double s2 = exp(g->h[p]), *v = g->v;
  for (size_t i = 0; i < n; i++) v[i] = s2;
  for (size_t j = 0; j < p; j++) {
    size_t at = x[j] > 0 ? (size_t)x[j] : 0;
    const double *r = &g->tab[(g->off[j] + (at < g->lev[j] ? at : g->lev[j] - 1)) * n];
    for (size_t i = 0; i < n; i++) v[i] *= r[i];
  }
  double m = dot(v, g->alpha, n);
  *mean = g->ymean + g->ysd * m;
  if (!sd) return;
  solve(g->l, n, v, v, 0);
  double var = s2 - dot(v, v, n);
  *sd = g->ysd * sqrt(var > 1e-12 ? var : 1e-12);
}

double cc_tgp_sd_max(const cc_tgp *g) {
  double s2 = exp(g->h[g->p]);
  return g->ysd * sqrt(s2 > 1e-12 ? s2 : 1e-12);
}

const double *cc_tgp_relevance(const cc_tgp *g) { return g->rel; }
