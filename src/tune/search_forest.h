/*
 * tune/search_forest.h -- a random forest of regression trees (search_forest.c), the surrogate
 * of the model-based search. Private to src/tune.
 */
#ifndef CUCORE_TUNE_SEARCH_FOREST_H
#define CUCORE_TUNE_SEARCH_FOREST_H

#include "tune/search.h"

typedef struct cc_tforest cc_tforest;

typedef struct cc_tforest_options {
  int ntrees;      /* trees (>= 1) */
  size_t mtry;     /* features tried at each split (0: all) */
  size_t min_leaf; /* rows in a leaf at least (0: 1) */
  int bootstrap;   /* 1: each tree on a bootstrap sample of the rows */
} cc_tforest_options;

/* Fits the forest to n rows of p features (x[i * p + j], feature j a whole number from 0 to
 * levels[j] - 1) and their targets y[i], drawing from rng. */
cucore_status cc_tforest_fit(const double *x, const double *y, size_t n, size_t p,
                             const size_t *levels, const cc_tforest_options *o, cc_rng *rng,
                             cc_tforest **out);
/* The prediction at x (p features): the trees' mean and their standard deviation. */
void cc_tforest_predict(const cc_tforest *f, const double *x, double *mean, double *sd);
/* Each feature's share (summing to 1) of the squared error its splits removed. */
const double *cc_tforest_importance(const cc_tforest *f);
void cc_tforest_free(cc_tforest *f);

#endif /* CUCORE_TUNE_SEARCH_FOREST_H */
