/*
 * search_forest.c -- a random forest of regression trees, the surrogate of the model-based
 * search: each tree grown on a bootstrap sample of the rows, each split the best variance
 * reduction among a random subset of the features (every threshold between two values seen),
 * down to leaves of `min_leaf` rows. A prediction is the trees' mean, and their spread is its
 * uncertainty. Small by design: a tune's surrogate sees at most a few thousand rows of tens of
 * features, so a tree is a flat array of nodes and a fit takes well under a millisecond per
 * hundred rows.
 */
#include "tune/search_forest.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct node {
  int feature; /* -1: a leaf */
  double threshold;
  int left, right; /* node numbers; x[feature] <= threshold goes left */
  double value;    /* a leaf's mean */
} node;

typedef struct tree {
  node *nodes;
  size_t n, cap;
} tree;

struct cc_tforest {
  size_t p;
  int ntrees;
  tree *trees;
  double *importance; /* p: each feature's share of the error its splits removed (sum 1) */
};

typedef struct acc {
  double n, sum, sum2;
} acc;

typedef struct grow {
  const double *x, *y;
  size_t p;
  size_t *rows; /* this tree's bootstrap rows, partitioned in place as it grows */
  size_t *feats;
  size_t mtry, min_leaf;
  cc_rng *rng;
  const size_t *levels; /* feature j takes the values 0 .. levels[j] - 1 */
  acc *per_value;       /* scratch: the rows of each value of one feature */
  double *importance;   /* the squared error each feature's splits removed */
  tree *t;
} grow;

static int add_node(tree *t, node v) {
  node *n = cc_grow(t->nodes, &t->cap, t->n + 1, sizeof *n, "a forest's tree");
  if (!n) return -1;
  t->nodes = n;
  t->nodes[t->n] = v;
  return (int)t->n++;
}

/* The best split of rows[0..n) on feature f: its threshold and the sum of squared errors
 * after it (INFINITY when every row has the same value). The features are small integers, so
 * the rows are counted per value instead of sorted. */
static double best_split(grow *g, const size_t *rows, size_t n, size_t f, double *threshold) {
  size_t nv = g->levels[f];
  acc *a = g->per_value, l = {0, 0, 0}, tot = {0, 0, 0};
  memset(a, 0, nv * sizeof *a);
  for (size_t i = 0; i < n; i++) {
    double y = g->y[rows[i]];
    acc *v = &a[(size_t)g->x[rows[i] * g->p + f]];
    v->n += 1, v->sum += y, v->sum2 += y * y;
  }
  for (size_t v = 0; v < nv; v++) tot.n += a[v].n, tot.sum += a[v].sum, tot.sum2 += a[v].sum2;
  double best = INFINITY;
  size_t last = SIZE_MAX; /* the last value seen on the left */
  for (size_t v = 0; v < nv; v++) {
    if (a[v].n == 0) continue;
    if (last != SIZE_MAX && l.n >= (double)g->min_leaf && tot.n - l.n >= (double)g->min_leaf) {
      double rn = tot.n - l.n, rs = tot.sum - l.sum, r2 = tot.sum2 - l.sum2;
      double sse = (l.sum2 - l.sum * l.sum / l.n) + (r2 - rs * rs / rn);
      if (sse < best) best = sse, *threshold = 0.5 * ((double)last + (double)v);
    }
    l.n += a[v].n, l.sum += a[v].sum, l.sum2 += a[v].sum2;
    last = v;
  }
  return best;
}

/* Grows the subtree of rows[0..n); returns its node, or -1 when out of memory. */
static int grow_node(grow *g, size_t *rows, size_t n, int depth) {
  double mean = 0, err = 0;
  for (size_t i = 0; i < n; i++) mean += g->y[rows[i]];
  mean /= (double)n;
  for (size_t i = 0; i < n; i++) err += (g->y[rows[i]] - mean) * (g->y[rows[i]] - mean);
  node leaf = {-1, 0, -1, -1, mean};
  if (n < 2 * g->min_leaf || depth >= 40) return add_node(g->t, leaf);
  /* mtry random features (a partial shuffle of the list) */
  double best = INFINITY, thr = 0;
  int feature = -1;
  for (size_t k = 0; k < g->mtry && k < g->p; k++) {
    size_t j = k + (size_t)cc_rng_below(g->rng, g->p - k), f = g->feats[j];
    g->feats[j] = g->feats[k], g->feats[k] = f;
    double t = 0, sse = best_split(g, rows, n, f, &t);
    if (sse < best) best = sse, thr = t, feature = (int)f;
  }
  if (feature < 0) return add_node(g->t, leaf);
  if (err > best) g->importance[feature] += err - best;
  size_t nl = 0; /* partition: the left rows first */
  for (size_t i = 0; i < n; i++)
    if (g->x[rows[i] * g->p + (size_t)feature] <= thr) {
      size_t t = rows[i];
      rows[i] = rows[nl], rows[nl++] = t;
    }
  node split = {feature, thr, -1, -1, mean};
  int at = add_node(g->t, split);
  if (at < 0) return -1;
  int left = grow_node(g, rows, nl, depth + 1);
  int right = left < 0 ? -1 : grow_node(g, rows + nl, n - nl, depth + 1);
  if (right < 0) return -1;
  g->t->nodes[at].left = left, g->t->nodes[at].right = right;
  return at;
}

void cc_tforest_free(cc_tforest *f) {
  if (!f) return;
  for (int i = 0; f->trees && i < f->ntrees; i++) free(f->trees[i].nodes);
  free(f->trees);
  free(f->importance);
  free(f);
}

cucore_status cc_tforest_fit(const double *x, const double *y, size_t n, size_t p,
                             const size_t *levels, const cc_tforest_options *o, cc_rng *rng,
                             cc_tforest **out) {
  *out = NULL;
  cc_tforest *f = cc_calloc(1, sizeof *f, "a forest");
  grow g = {x,   y,      p,    NULL, NULL, o->mtry ? o->mtry : p, o->min_leaf ? o->min_leaf : 1,
            rng, levels, NULL, NULL, NULL};
  size_t most = 1;
  for (size_t j = 0; j < p; j++) most = levels[j] > most ? levels[j] : most;
  if (f) {
    f->p = p, f->ntrees = o->ntrees;
    f->trees = cc_calloc((size_t)o->ntrees, sizeof *f->trees, "a forest");
    f->importance = g.importance = cc_calloc(p ? p : 1, sizeof *f->importance, "a forest");
  }
  size_t m = n ? n : 1;
  g.rows = cc_calloc(m, sizeof *g.rows, "a forest");
  g.feats = cc_calloc(p ? p : 1, sizeof *g.feats, "a forest");
  g.per_value = cc_calloc(most, sizeof *g.per_value, "a forest");
  cucore_status st = f && f->trees && f->importance && g.rows && g.feats && g.per_value
                         ? CUCORE_OK
                         : CUCORE_HOST_OUT_OF_MEMORY;
  for (size_t j = 0; j < p && g.feats; j++) g.feats[j] = j;
  for (int t = 0; st == CUCORE_OK && t < o->ntrees; t++) {
    for (size_t i = 0; i < n; i++) g.rows[i] = o->bootstrap ? (size_t)cc_rng_below(rng, n) : i;
    g.t = &f->trees[t];
    if (n && grow_node(&g, g.rows, n, 0) < 0) st = CUCORE_HOST_OUT_OF_MEMORY;
  }
  free(g.rows), free(g.feats), free(g.per_value);
  double total = 0;
  for (size_t j = 0; st == CUCORE_OK && j < p; j++) total += f->importance[j];
  for (size_t j = 0; st == CUCORE_OK && j < p; j++)
    f->importance[j] = total > 0 ? f->importance[j] / total : 1.0 / (double)p;
  if (st != CUCORE_OK) {
    cc_tforest_free(f);
    return st;
  }
  *out = f;
  return CUCORE_OK;
}

void cc_tforest_predict(const cc_tforest *f, const double *x, double *mean, double *sd) {
  double s = 0, s2 = 0;
  for (int t = 0; t < f->ntrees; t++) {
    const node *nd = f->trees[t].nodes;
    int at = 0;
    if (!nd) continue;
    while (nd[at].feature >= 0)
      at = x[nd[at].feature] <= nd[at].threshold ? nd[at].left : nd[at].right;
    s += nd[at].value, s2 += nd[at].value * nd[at].value;
  }
  double m = s / f->ntrees, v = s2 / f->ntrees - m * m;
  *mean = m;
  *sd = v > 0 ? sqrt(v) : 0;
}

const double *cc_tforest_importance(const cc_tforest *f) { return f->importance; }
