/* report_handle.c -- the report of cucore_tune_run(): an opaque handle holding the rows and the
 * summary (counts, results, the time split, the winner, the store), and the model's agreement
 * with the measurements (Spearman's rank correlation of score and median). */
#include "tune/tuner.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

struct cucore_tune_report {
  cc_handle hdr; /* first: the magic word of base/handle.h */
  cucore_tune_summary s;
  cucore_tune_row *rows; /* their error and detail texts are the report's */
  cc_tcomp_warn *warns;
  size_t *inert;
  char key[65];
  char *store_path; /* malloc'd (NULL: none, said as "") */
};

static _Thread_local const double *tls_key; /* for by_key (no qsort_r in C11) */

static int by_key(const void *a, const void *b) {
  double x = tls_key[*(const size_t *)a], y = tls_key[*(const size_t *)b];
  return x < y ? -1 : x > y;
}

/* Ranks of v[0..n) (average ranks for ties) into rank. */
static void ranks(const double *v, size_t n, size_t *idx, double *rank) {
  for (size_t i = 0; i < n; i++) idx[i] = i;
  tls_key = v;
  qsort(idx, n, sizeof *idx, by_key);
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j + 1 < n && v[idx[j + 1]] == v[idx[i]]) j++;
    for (size_t k = i; k <= j; k++) rank[idx[k]] = (double)(i + j) / 2;
    i = j + 1;
  }
}

static double pearson(const double *a, const double *b, size_t n) {
  double ma = 0, mb = 0, sab = 0, saa = 0, sbb = 0;
  for (size_t i = 0; i < n; i++) ma += a[i] / (double)n, mb += b[i] / (double)n;
  for (size_t i = 0; i < n; i++) {
    sab += (a[i] - ma) * (b[i] - mb);
    saa += (a[i] - ma) * (a[i] - ma);
    sbb += (b[i] - mb) * (b[i] - mb);
  }
  return saa > 0 && sbb > 0 ? sab / sqrt(saa * sbb) : NAN;
}

/* The model's agreement over the verified, compiled rows into c->s. */
static void agreement(cc_trun *c) {
  size_t n = 0, m = c->s.rows ? c->s.rows : 1;
  double *score = cc_raw_calloc(m, sizeof *score), *time = cc_raw_calloc(m, sizeof *time);
  double *rs = cc_raw_calloc(m, sizeof *rs), *rt = cc_raw_calloc(m, sizeof *rt);
  size_t *idx = cc_raw_calloc(m, sizeof *idx);
  double r = NAN;
  for (size_t i = 0; score && time && i < c->s.rows; i++)
    if (c->rows[i].compiled && c->rows[i].status == CUCORE_TUNE_OK) {
      score[n] = -c->rows[i].model.score; /* a high score should mean a short time */
      time[n++] = c->rows[i].stats.median;
    }
  if (n >= 3 && rs && rt && idx) {
    ranks(score, n, idx, rs);
    ranks(time, n, idx, rt);
    r = pearson(rs, rt, n);
  }
  free(score), free(time), free(rs), free(rt), free(idx);
  c->s.model_agreement = r;
  c->s.model_agreement_n = n;
}

cucore_status cc_treport_make(cc_trun *c, cucore_tune_report **out) {
  cucore_tune_report *r = cc_calloc(1, sizeof *r, "cucore_tune_run: the report");
  if (!r) return cucore_last_status();
  cc_handle_init(r, CC_KIND_TUNE_REPORT);
  agreement(c);
  r->s = c->s;
  r->rows = c->rows;
  c->rows = NULL;
  cc_tcomp_take_notes(c, &r->warns, &r->inert);
  snprintf(r->key, sizeof r->key, "%s", cc_tstore_key(c));
  r->store_path = cc_tstore_take_path(c);
  r->s.key = r->key;
  r->s.store_path = r->store_path ? r->store_path : "";
  *out = r;
  return CUCORE_OK;
}

cucore_status cucore_tune_report_destroy(cucore_tune_report *report) {
  cc_begin();
  if (!report) return CUCORE_OK;
  CC_CHECK_HANDLE(report, TUNE_REPORT, "cucore_tune_report_destroy", "report");
  for (size_t i = 0; report->rows && i < report->s.rows; i++) {
    cc_trun_text_free(&report->rows[i].error);
    cc_trun_text_free(&report->rows[i].detail);
  }
  free(report->rows);
  report->rows = NULL;
  cc_tcomp_free_warnings(report->warns, report->s.warnings);
  free(report->store_path);
  free(report->inert);
  cc_handle_retire(report, CC_KIND_TUNE_REPORT);
  return CUCORE_OK;
}

cucore_status cucore_tune_report_get_summary(const cucore_tune_report *report,
                                             cucore_tune_summary *out) {
  cc_begin();
  CC_CHECK_HANDLE(report, TUNE_REPORT, "cucore_tune_report_get_summary", "report");
  CC_CHECK_ARG(out, "cucore_tune_report_get_summary", "out");
  *out = report->s;
  return CUCORE_OK;
}

cucore_status cucore_tune_report_get_row(const cucore_tune_report *report, size_t i,
                                         cucore_tune_row *out) {
  cc_begin();
  CC_CHECK_HANDLE(report, TUNE_REPORT, "cucore_tune_report_get_row", "report");
  CC_CHECK_ARG(out, "cucore_tune_report_get_row", "out");
  if (i >= report->s.rows)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "cucore_tune_report_get_row: row %zu is past the report's %zu rows", i,
                   report->s.rows);
  *out = report->rows[i];
  return CUCORE_OK;
}

cucore_status cucore_tune_report_get_model_order(const cucore_tune_report *report, size_t *order,
                                                 size_t *n) {
  cc_begin();
  CC_CHECK_HANDLE(report, TUNE_REPORT, "cucore_tune_report_get_model_order", "report");
  CC_CHECK_ARG(n, "cucore_tune_report_get_model_order", "n");
  *n = 0;
  CC_CHECK_ARG(order, "cucore_tune_report_get_model_order", "order");
  *n = cc_trun_model_order(report->rows, report->s.rows, order);
  return CUCORE_OK;
}

cucore_status cucore_tune_report_get_warning(const cucore_tune_report *report, size_t i,
                                             cucore_tune_warning *out) {
  cc_begin();
  CC_CHECK_HANDLE(report, TUNE_REPORT, "cucore_tune_report_get_warning", "report");
  CC_CHECK_ARG(out, "cucore_tune_report_get_warning", "out");
  return cc_tcomp_get_warning(report->warns, report->s.warnings, i, out);
}

cucore_status cucore_tune_report_get_inert_param(const cucore_tune_report *report, size_t i,
                                                 size_t *param) {
  cc_begin();
  CC_CHECK_HANDLE(report, TUNE_REPORT, "cucore_tune_report_get_inert_param", "report");
  CC_CHECK_ARG(param, "cucore_tune_report_get_inert_param", "param");
  if (i >= report->s.inert_params)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "cucore_tune_report_get_inert_param: %zu of a report with %zu", i,
                   report->s.inert_params);
  *param = report->inert[i];
  return CUCORE_OK;
}
