/* run_final.c -- choosing the winner: every configuration that ran and verified is ranked by
 * its screening median; the best and any that tie with it (at most `finalists`) are re-timed
 * in interleaved rounds (A B C, B C A, C A B, ...), so slow clock drift hits them all alike,
 * and ranked again by the median of their round medians; a tie goes to the lower
 * configuration index, so repeated tunes choose the same one (cucore_tune_rank). */
#include "tune/run.h"

#include <stdio.h>
#include <stdlib.h>

#define CC_TFINAL_ROUNDS 5

typedef struct finalist {
  size_t row;
  cucore_kernel *k;
  cucore_args *a;
  double med[CC_TFINAL_ROUNDS];
} finalist;

static int by_row(const void *a, const void *b) {
  size_t x = ((const finalist *)a)->row, y = ((const finalist *)b)->row;
  return x < y ? -1 : x > y;
}

/* The rows that ran and verified, and their screening statistics. */
static size_t candidates(const cc_trun *c, size_t *rows, cucore_tune_stats *stats) {
  size_t n = 0;
  for (size_t i = 0; i < c->s.rows; i++)
    if (c->rows[i].status == CUCORE_TUNE_OK) {
      rows[n] = i;
      stats[n++] = c->rows[i].stats;
    }
  return n;
}

/* A finalist faulted: recorded so, the device reset, and no finalist re-timed (their kernels
 * belonged to the lost context): their screening results stand. */
static void faulted(cc_trun *c, finalist *f, size_t m, finalist *x) {
  cucore_tune_row *r = &c->rows[x->row];
  cc_trun_text(&r->detail, "%s", "while re-timed as a finalist");
  cc_trec_mark(c, r);
  cc_tstore_record(c, r);
  cc_trec_recover(c, r);
  for (size_t j = 0; j < m; j++) {
    cucore_args_destroy(f[j].a);
    cucore_kernel_destroy(f[j].k);
    f[j].a = NULL, f[j].k = NULL;
  }
}

/* Each visit of a round: 0.25 ms of warm-up, then >= 5 samples, up to 30 or 1 ms of them (was
 * 1 ms and up to 50 in 2 ms). On the H100 the tune bench's 17 finalists x 5 rounds took
 * 0.18-0.19 s, ~2.1 ms a visit, most of it the visit's fixed steps (the untimed launch, three
 * lone launches for the mode, the waits for the batched samples); they come after the last
 * compile, so a tune's end waits for them. */
static void round_robin(cc_trun *c, finalist *f, size_t m) {
  cucore_tune_timing_options o = cc_ttime_options(c);
  o.warmup_ms = 0.25, o.screen_ms = 1, o.min_samples = 5, o.max_samples = 30, o.max_time_ms = 50;
  for (int round = 0; round < CC_TFINAL_ROUNDS; round++)
    for (size_t j = 0; j < m; j++) {
      finalist *x = &f[(j + (size_t)round) % m];
      cucore_tune_timing t;
      cucore_status st = x->k ? cc_ttime(c, x->k, x->a, &c->rows[x->row], &o, &t) : CUCORE_OK;
      if (x->k && st != CUCORE_OK && cc_trec_faulted(c)) faulted(c, f, m, x);
      x->med[round] = x->k && st == CUCORE_OK ? t.stats.median : c->rows[x->row].stats.median;
    }
}

/* Binds and re-times the finalists; returns how many were re-timed (none after a fault). */
static size_t retime(cc_trun *c, finalist *f, size_t m) {
  for (size_t j = 0; j < m; j++) {
    cucore_tune_row *r = &c->rows[f[j].row];
    cc_tgroup *g = cc_trun_group_of(c, r);
    if (g && !c->s.lost && g->deferred) cc_tcomp_now(c, g); /* a finalist from the store */
    if (c->s.lost || !g || !g->obj || cc_tbind_kernel(c, g, &f[j].k, &f[j].a) != CUCORE_OK)
      f[j].k = NULL;
  }
  round_robin(c, f, m);
  size_t done = 0;
  for (size_t j = 0; j < m; j++) {
    cucore_tune_row *r = &c->rows[f[j].row];
    if (f[j].k) {
      done++;
      cucore_tune_stats_compute(f[j].med, CC_TFINAL_ROUNDS, &r->stats);
      r->finalist = 1;
      cc_trun_text(&r->detail, "finalist: the median of %d interleaved rounds", CC_TFINAL_ROUNDS);
      cc_tstore_record(c, r);
    }
    cucore_args_destroy(f[j].a);
    cucore_kernel_destroy(f[j].k);
  }
  return done;
}

/* The first `m` ranked rows (the best, its ties, up to `finalists`) re-timed and ranked;
 * returns how many were re-timed. */
static size_t final_rank(cc_trun *c, const size_t *rows, const size_t *order, size_t m) {
  size_t done = 0;
  finalist *f = cc_raw_calloc(m, sizeof *f);
  cucore_tune_stats *s = cc_raw_calloc(m, sizeof *s);
  size_t *o2 = cc_raw_calloc(m, sizeof *o2);
  if (f && s && o2) {
    for (size_t j = 0; j < m; j++) f[j].row = rows[order[j]];
    qsort(f, m, sizeof *f, by_row); /* a tie goes to the lower configuration index */
    done = retime(c, f, m);
    for (size_t j = 0; j < m; j++) s[j] = c->rows[f[j].row].stats;
    cucore_tune_rank(s, m, o2, &c->s.ties);
    c->s.best = f[o2[0]].row;
    c->s.have_best = 1;
  }
  free(f), free(s), free(o2);
  return done;
}

void cc_tfinal(cc_trun *c) {
  size_t n0 = c->s.rows ? c->s.rows : 1;
  size_t *rows = cc_raw_calloc(n0, sizeof *rows), *order = cc_raw_calloc(n0, sizeof *order);
  cucore_tune_stats *stats = cc_raw_calloc(n0, sizeof *stats);
  size_t n = rows && order && stats ? candidates(c, rows, stats) : 0, ties = 0;
  if (n) cucore_tune_rank(stats, n, order, &ties);
  size_t want = (size_t)c->o.finalists;
  size_t m = ties + 1 > want ? ties + 1 : want;
  if (m > n) m = n;
  if (n && (m < 2 || c->o.finalists == 0 || c->s.measured == 0)) {
    c->s.best = rows[order[0]];
    c->s.ties = ties;
    c->s.have_best = 1;
  } else if (n) {
    double t0 = cc_trun_now_ms();
    c->s.finalists = final_rank(c, rows, order, m);
    c->s.final_ms = cc_trun_now_ms() - t0;
  }
  free(rows), free(order), free(stats);
}
