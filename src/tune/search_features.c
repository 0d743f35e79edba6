/*
 * search_features.c -- what the model-based search's forests see of a configuration: each
 * parameter's value index, and for each pair of numeric parameters whose values are all
 * positive, the ratio and the product of their values (as ranks of log2(a) - log2(b) and
 * log2(a) + log2(b)). A kernel's time often hangs on such a pair rather than on either value:
 * work per thread is a tile over a thread count (CLBlast's MWG / MDIMC), a block's threads a
 * product. A tree splits on one feature at a time, so without them it needs several splits and
 * many measurements to draw one such line; with them, one.
 */
#include "tune/search_features.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* 1 when every value of parameter p is a positive number. */
static int positive(const cc_tdom *d, size_t p) {
  if (d->sizes[p] < 2) return 0;
  for (size_t v = 0; v < d->sizes[p]; v++) {
    double x = d->num[d->offset[p] + v];
    if (!(x > 0) || !isfinite(x)) return 0;
  }
  return 1;
}

/* The level table of one derived feature: cell va * sizes[b] + vb holds the rank of
 * log2(a) + sign * log2(b) among its distinct values; returns the number of levels. */
static size_t fill_table(const cc_tdom *d, size_t a, size_t b, double sign, size_t *table,
                         double *scratch) {
  size_t na = d->sizes[a], nb = d->sizes[b], n = 0, levels = 0;
  for (size_t i = 0; i < na; i++)
    for (size_t j = 0; j < nb; j++)
      scratch[n++] = log2(d->num[d->offset[a] + i]) + sign * log2(d->num[d->offset[b] + j]);
  double *sorted = scratch + n;
  memcpy(sorted, scratch, n * sizeof *sorted);
  qsort(sorted, n, sizeof *sorted, cc_cmp_double);
  for (size_t k = 0; k < n; k++) /* distinct values, 1e-9 apart at least */
    if (levels == 0 || sorted[k] - sorted[levels - 1] > 1e-9) sorted[levels++] = sorted[k];
  for (size_t k = 0; k < n; k++) {
    size_t lo = 0, hi = levels - 1;
    while (lo < hi) { /* the first level not below the value, less the rounding */
      size_t mid = (lo + hi) / 2;
      if (sorted[mid] < scratch[k] - 1e-9)
        lo = mid + 1;
      else
        hi = mid;
    }
    table[k] = lo;
  }
  return levels;
}

cucore_status cc_tfeat_open(const cc_tdom *d, size_t max_pairs, cc_tfeat *f) {
  memset(f, 0, sizeof *f);
  size_t np = d->nparams, npos = 0, cells = 0, most = 1;
  for (size_t p = 0; p < np; p++) {
    if (!positive(d, p)) continue;
    npos++;
    most = d->sizes[p] > most ? d->sizes[p] : most;
  }
  size_t pairs = npos * (npos - (npos > 0)) / 2;
  if (pairs > max_pairs) pairs = 0; /* too many to pay for: the value indices alone */
  f->nraw = np;
  f->n = np + 2 * pairs;
  f->levels = cc_calloc(f->n + 1, sizeof *f->levels, "a model's features");
  f->pa = cc_calloc(f->n + 1, sizeof *f->pa, "a model's features");
  f->pb = cc_calloc(f->n + 1, sizeof *f->pb, "a model's features");
  f->at = cc_calloc(f->n + 1, sizeof *f->at, "a model's features");
  if (!f->levels || !f->pa || !f->pb || !f->at) return CUCORE_HOST_OUT_OF_MEMORY;
  for (size_t p = 0; p < np; p++) f->levels[p] = d->sizes[p];
  size_t k = np;
  for (size_t a = 0; pairs && a < np; a++)
    for (size_t b = a + 1; positive(d, a) && b < np; b++)
      if (positive(d, b))
        for (int s = 0; s < 2; s++, k++)
          f->pa[k] = a, f->pb[k] = b, f->at[k] = cells, cells += d->sizes[a] * d->sizes[b];
  f->table = cc_calloc(cells + 1, sizeof *f->table, "a model's features");
  double *scratch = cc_calloc(2 * most * most + 1, sizeof *scratch, "a model's features");
  if (!f->table || !scratch) {
    free(scratch);
    return CUCORE_HOST_OUT_OF_MEMORY;
  }
  for (k = np; k < f->n; k++)
    f->levels[k] = fill_table(d, f->pa[k], f->pb[k], (k - np) % 2 ? 1.0 : -1.0, f->table + f->at[k],
                              scratch);
  free(scratch);
  return CUCORE_OK;
}

void cc_tfeat_row(const cc_tfeat *f, const cc_tdom *d, const size_t *digits, double *row) {
  for (size_t p = 0; p < f->nraw; p++) row[p] = (double)digits[p];
  for (size_t k = f->nraw; k < f->n; k++)
    row[k] = (double)f->table[f->at[k] + digits[f->pa[k]] * d->sizes[f->pb[k]] + digits[f->pb[k]]];
}

void cc_tfeat_fold(const cc_tfeat *f, const double *importance, double *per_param) {
  for (size_t p = 0; p < f->nraw; p++) per_param[p] = importance[p];
  for (size_t k = f->nraw; k < f->n; k++) {
    per_param[f->pa[k]] += 0.5 * importance[k];
    per_param[f->pb[k]] += 0.5 * importance[k];
  }
}

void cc_tfeat_close(cc_tfeat *f) {
  free(f->levels), free(f->pa), free(f->pb), free(f->at), free(f->table);
  memset(f, 0, sizeof *f);
}
