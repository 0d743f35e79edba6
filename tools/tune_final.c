/* tune_final.c -- choosing the winner: every configuration that ran and verified is ranked by
 * its screening median; the best and any that tie with it (at most --finalists) are re-timed
 * in interleaved rounds (A B C, B C A, C A B, ...), so slow clock drift hits them all alike,
 * and ranked again by the median of their round medians; a tie goes to the lower
 * configuration index, so repeated tunes choose the same one (cucore_tune_rank). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune.h"

#define TUNE_ROUNDS 5

typedef struct finalist {
  size_t row;
  cucore_kernel *k;
  cucore_args *a;
  double med[TUNE_ROUNDS];
} finalist;

static int by_hash(const void *a, const void *b) {
  uint64_t x = ((const tune_group *)a)->hash, y = ((const tune_group *)b)->hash;
  return x < y ? -1 : x > y;
}

static int by_row(const void *a, const void *b) {
  size_t x = ((const finalist *)a)->row, y = ((const finalist *)b)->row;
  return x < y ? -1 : x > y;
}

/* The rows that ran and verified, and their screening statistics. */
static size_t candidates(const tune_ctx *c, size_t *rows, cucore_tune_stats *stats) {
  size_t n = 0;
  for (size_t i = 0; i < c->nrows; i++)
    if (strcmp(c->rows[i].status, "ok") == 0) {
      rows[n] = i;
      stats[n++] = c->rows[i].stats;
    }
  return n;
}

/* A finalist faulted: recorded so, the device reset, and no finalist re-timed (their kernels
 * belonged to the lost context): their screening results stand. */
static void faulted(tune_ctx *c, finalist *f, size_t m, finalist *x) {
  tune_row *r = &c->rows[x->row];
  snprintf(r->detail, sizeof r->detail, "%s", "while re-timed as a finalist");
  tune_mark_fault(c, r);
  tune_record_row(c, r);
  tune_recover(c, r);
  for (size_t j = 0; j < m; j++) {
    cucore_args_destroy(f[j].a);
    cucore_kernel_destroy(f[j].k);
    f[j].a = NULL, f[j].k = NULL;
  }
}

static void round_robin(tune_ctx *c, finalist *f, size_t m) {
  cucore_tune_timing_options o = tune_timing_of(c);
  o.warmup_ms = 1, o.screen_ms = 2, o.min_samples = 5, o.max_samples = 50, o.max_time_ms = 50;
  for (int round = 0; round < TUNE_ROUNDS; round++)
    for (size_t j = 0; j < m; j++) {
      finalist *x = &f[(j + (size_t)round) % m];
      cucore_tune_timing t;
      cucore_status st = x->k ? tune_time(c, x->k, x->a, &c->rows[x->row], &o, &t) : CUCORE_OK;
      if (x->k && st != CUCORE_OK && tune_device_faulted(c)) faulted(c, f, m, x);
      x->med[round] = x->k && st == CUCORE_OK ? t.stats.median : c->rows[x->row].stats.median;
    }
}

static void retime(tune_ctx *c, finalist *f, size_t m) {
  for (size_t j = 0; j < m; j++) {
    tune_row *r = &c->rows[f[j].row];
    tune_group key = {.hash = r->cfg.compile_hash};
    tune_group *g = bsearch(&key, c->groups, c->ngroups, sizeof key, by_hash);
    if (g && !c->lost && g->deferred) tune_compile_now(c, g); /* a finalist from the store */
    if (c->lost || !g || !g->obj || tune_kernel_of(c, g, &f[j].k, &f[j].a) != 0) f[j].k = NULL;
  }
  round_robin(c, f, m);
  for (size_t j = 0; j < m; j++) {
    tune_row *r = &c->rows[f[j].row];
    if (f[j].k) {
      cucore_tune_stats_compute(f[j].med, TUNE_ROUNDS, &r->stats);
      r->finalist = 1;
      snprintf(r->detail, sizeof r->detail, "finalist: the median of %d interleaved rounds",
               TUNE_ROUNDS);
      tune_record_row(c, r);
    }
    cucore_args_destroy(f[j].a);
    cucore_kernel_destroy(f[j].k);
  }
}

/* The first `m` ranked rows (the best, its ties, up to --finalists) re-timed and ranked. */
static void final_rank(tune_ctx *c, const size_t *rows, const size_t *order, size_t m) {
  finalist *f = calloc(m, sizeof *f);
  cucore_tune_stats *s = calloc(m, sizeof *s);
  size_t *o2 = calloc(m, sizeof *o2);
  if (f && s && o2) {
    for (size_t j = 0; j < m; j++) f[j].row = rows[order[j]];
    qsort(f, m, sizeof *f, by_row); /* a tie goes to the lower configuration index */
    retime(c, f, m);
    for (size_t j = 0; j < m; j++) s[j] = c->rows[f[j].row].stats;
    cucore_tune_rank(s, m, o2, &c->ties);
    c->best = f[o2[0]].row;
    c->have_best = 1;
  }
  free(f), free(s), free(o2);
}

void tune_finalists(tune_ctx *c) {
  size_t *rows = calloc(c->nrows ? c->nrows : 1, sizeof *rows);
  size_t *order = calloc(c->nrows ? c->nrows : 1, sizeof *order);
  cucore_tune_stats *stats = calloc(c->nrows ? c->nrows : 1, sizeof *stats);
  size_t n = rows && order && stats ? candidates(c, rows, stats) : 0, ties = 0;
  if (n) cucore_tune_rank(stats, n, order, &ties);
  size_t m = ties + 1 > (size_t)c->line->finalists ? ties + 1 : (size_t)c->line->finalists;
  if (m > n) m = n;
  if (n && (m < 2 || c->line->finalists == 0 || c->measured == 0)) {
    c->best = rows[order[0]];
    c->ties = ties;
    c->have_best = 1;
  } else if (n) {
    final_rank(c, rows, order, m);
  }
  free(rows), free(order), free(stats);
}
