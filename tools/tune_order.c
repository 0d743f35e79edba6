/* tune_order.c -- `cucore tune --strategy model-first`: every distinct compile is made and
 * judged by the occupancy model first; the configurations that can run are then measured in
 * order of the model's score (best first, ties by number), and with --top-fraction F only the
 * best-scored F of them: the rest are recorded as skipped, never dropped silently. The report's
 * rank correlation says whether trusting the model was safe for this kernel. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tune.h"

static const tune_row *g_rows; /* for by_score (qsort has no context in C11) */

static int by_score(const void *a, const void *b) {
  const tune_row *x = &g_rows[*(const size_t *)a], *y = &g_rows[*(const size_t *)b];
  if (x->model.score != y->model.score) return x->model.score > y->model.score ? -1 : 1;
  return x->cfg.index < y->cfg.index ? -1 : 1;
}

static int by_hash(const void *a, const void *b) {
  uint64_t x = ((const tune_group *)a)->hash, y = ((const tune_group *)b)->hash;
  return x < y ? -1 : x > y;
}

static void measure_row_of(tune_ctx *c, tune_row *r) {
  tune_group key = {.hash = r->cfg.compile_hash};
  const tune_group *g = bsearch(&key, c->groups, c->ngroups, sizeof key, by_hash);
  cucore_kernel *k = NULL;
  cucore_args *a = NULL;
  if (g && g->obj && tune_kernel_of(c, g, &k, &a) == 0) {
    tune_measure_one(c, k, a, r);
  } else {
    snprintf(r->status, sizeof r->status, "bind-error");
    snprintf(r->detail, sizeof r->detail, "%s", cucore_last_error());
    c->failed++;
  }
  cucore_args_destroy(a);
  cucore_kernel_destroy(k);
  tune_progress(c);
}

void tune_measure_model_first(tune_ctx *c) {
  while (tune_compile_next(c)) {}
  size_t *order = calloc(c->nrows ? c->nrows : 1, sizeof *order), n = 0;
  for (size_t i = 0; order && i < c->nrows; i++)
    if (c->rows[i].compiled && c->rows[i].cfg.verdict == CUCORE_TUNE_RUNNABLE) order[n++] = i;
  g_rows = c->rows;
  qsort(order, n, sizeof *order, by_score);
  double f = c->line->top_fraction;
  size_t take = f > 0 ? (size_t)ceil(f * (double)n) : n;
  for (size_t i = 0; i < n; i++) {
    tune_row *r = &c->rows[order[i]];
    if (i < take) {
      measure_row_of(c, r);
      continue;
    }
    snprintf(r->status, sizeof r->status, "skipped");
    snprintf(r->detail, sizeof r->detail, "model score %.3f is outside --top-fraction %g",
             r->model.score, f);
    c->skipped++;
  }
  free(order);
}
