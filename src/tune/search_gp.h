/*
 * tune/search_gp.h -- a Gaussian process over value indices (search_gp.c), the other surrogate
 * of the model-based search (option `surrogate`). Private to src/tune.
 */
#ifndef CUCORE_TUNE_SEARCH_GP_H
#define CUCORE_TUNE_SEARCH_GP_H

#include "tune/search.h"

/* Past this many training rows a fit keeps half of them the fastest and the rest the most
 * recent of the others, so a fit's cost stays bounded (its Cholesky is cubic in the rows). */
#define CC_TGP_MAX_ROWS 256
/* The hyperparameters' steps, cubic in the rows per step, see at most this many (chosen the same
 * way); the factorisation the predictions use sees all that are kept. A search of 100
 * evaluations never reaches it; at 200 it keeps a fit's steps to an eighth of their cost. */
#define CC_TGP_STEP_ROWS 100

typedef struct cc_tgp cc_tgp;

/* How two values of a feature (their indices scaled to 0 .. 1) are apart: |a - b|, (a - b)^2,
 * or 1 when they differ at all. */
typedef enum { CC_TGP_L1 = 0, CC_TGP_SQUARED = 1, CC_TGP_MISMATCH = 2 } cc_tgp_kernel;

typedef struct cc_tgp_options {
  cc_tgp_kernel kernel;
  /* The targets above this quantile of them are taken as that quantile (1: as they are), so
   * the process spends its fit on the fast region rather than on how slow the slow ones are. */
  double clip;
} cc_tgp_options;

/* A process of p features; its hyperparameters start at their defaults and each fit goes on
 * from the last one's. */
cucore_status cc_tgp_open(size_t p, const cc_tgp_options *o, cc_tgp **out);
/* Fits the process to n rows of p features (x[i * p + j], feature j a whole number from 0 to
 * levels[j] - 1) and their targets y[i]: `steps` steps of gradient ascent (Adam) on the log
 * marginal likelihood from the hyperparameters of the last fit (4x as many on the first
 * fit), then the factorisation the predictions use. */
cucore_status cc_tgp_fit(cc_tgp *g, const double *x, const double *y, size_t n,
                         const size_t *levels, int steps);
/* The prediction at x (p features): the posterior mean and standard deviation (of the
 * latent function, in the units of y; sd NULL: the mean only, a tenth of the cost or less).
 * Uses the process's scratch: one caller at a time. */
void cc_tgp_predict(cc_tgp *g, const double *x, double *mean, double *sd);
/* The prior's standard deviation (in the units of y): no prediction's exceeds it. */
double cc_tgp_sd_max(const cc_tgp *g);
/* Each feature's share (summing to 1) of the kernel's weights: how fast the prediction
 * changes along that feature. */
const double *cc_tgp_relevance(const cc_tgp *g);
void cc_tgp_free(cc_tgp *g);

#endif /* CUCORE_TUNE_SEARCH_GP_H */
