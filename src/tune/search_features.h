/*
 * tune/search_features.h -- the features the model-based search's forests learn from
 * (search_features.c): the value indices, and the ratio and product of each pair of numeric
 * parameters. Private to src/tune.
 */
#ifndef CUCORE_TUNE_SEARCH_FEATURES_H
#define CUCORE_TUNE_SEARCH_FEATURES_H

#include "tune/search.h"

typedef struct cc_tfeat {
  size_t nraw;     /* the parameters: features 0 .. nraw - 1 are their value indices */
  size_t n;        /* features in all */
  size_t *levels;  /* feature k takes the values 0 .. levels[k] - 1 */
  size_t *pa, *pb; /* a derived feature's two parameters */
  size_t *at;      /* where its level table starts in `table` */
  size_t *table;   /* level of (value index of pa) * sizes[pb] + (value index of pb) */
} cc_tfeat;

/* The features of domain d: the pairs' only when there are at most max_pairs pairs of
 * positive numeric parameters (0: none). */
cucore_status cc_tfeat_open(const cc_tdom *d, size_t max_pairs, cc_tfeat *f);
/* The features of the configuration with value indices `digits` into row (f->n of them). */
void cc_tfeat_row(const cc_tfeat *f, const cc_tdom *d, const size_t *digits, double *row);
/* Each parameter's share of the features' importances (a pair's split evenly between its two
 * parameters) into per_param (f->nraw). */
void cc_tfeat_fold(const cc_tfeat *f, const double *importance, double *per_param);
/* Frees what cc_tfeat_open made (a zeroed f is fine). */
void cc_tfeat_close(cc_tfeat *f);

#endif /* CUCORE_TUNE_SEARCH_FEATURES_H */
