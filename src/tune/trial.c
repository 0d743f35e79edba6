/* trial.c -- timing the configurations of a measured tune.
 *
 * One configuration: its kernel bound to the buffers (the caller's bind callback, given the
 * buffers' device pointers, or a rotated set's copies), taken from the store when it was
 * measured before, else reset, launched (checked), verified and timed with what the options
 * ask (the launch mode, the cold cache, the SM clock); its result recorded in the store; the
 * progress callback after it.
 *
 * Choosing the winner: every configuration that ran and verified is ranked by its screening
 * median; the best and any that tie with it (at most `finalists`) are re-timed in interleaved
 * rounds (A B C, B C A, C A B, ...), so slow clock drift hits them all alike, and ranked again
 * by the median of their round medians; a tie goes to the lower configuration index, so
 * repeated tunes choose the same one (cucore_tune_rank).
 *
 * Also the room's state, made and let go. */
#include "tune/measure.h" /* racing's verdict */
#include "tune/measuring.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

cucore_status cc_tmeas_init(cc_trun *c) {
  c->meas = cc_calloc(1, sizeof *c->meas, "cucore_tune_run: the measuring's state");
  return c->meas ? CUCORE_OK : cucore_last_status();
}

void cc_tmeas_free(cc_trun *c) {
  free(c->meas);
  c->meas = NULL;
}

/* Group g's kernel with `ptrs` bound to a new argument set (the bind callback). */
static cucore_status bind(cc_trun *c, const cc_tgroup *g, cucore_kernel *k,
                          const cucore_devptr *ptrs, cucore_args **a) {
  cucore_status st = cucore_args_create(k, a);
  if (st != CUCORE_OK) return st;
  cc_begin(); /* the callback's own calls begin again: its failure is the one kept */
  st = c->o.bind(c->o.user, g->obj, g->symbol, ptrs, *a);
  if (st != CUCORE_OK && !cc_message_kept())
    st = cc_fail(st, "cucore_tune_run: the bind callback failed for kernel %s", g->symbol);
  return st;
}

cucore_status cc_tmeas_bind_kernel(cc_trun *c, const cc_tgroup *g, cucore_kernel **k,
                                   cucore_args **a) {
  cucore_status st = cucore_object_get_kernel(g->obj, g->symbol, k);
  if (st == CUCORE_OK) st = bind(c, g, *k, cc_tdev_ptrs(c), a);
  if (st != CUCORE_OK) { /* nothing half made is kept */
    cucore_args_destroy(*a);
    cucore_kernel_destroy(*k);
    *a = NULL, *k = NULL;
  }
  return st;
}

/* The launch of row r on the tune's stream. */
static cucore_launch_config launch_of(const cc_trun *c, const cucore_tune_row *r) {
  cucore_launch_config cfg;
  memset(&cfg, 0, sizeof cfg);
  memcpy(cfg.grid, r->config.grid, sizeof cfg.grid);
  memcpy(cfg.block, r->config.block, sizeof cfg.block);
  cfg.shared_bytes = (unsigned)r->config.smem;
  cfg.stream = cc_tdev_stream(c);
  return cfg;
}

/* The rotated argument sets of group g's kernel k, each bound to its copies. */
static cucore_status rotate_bind(cc_trun *c, const cc_tgroup *g, cucore_kernel *k,
                                 cucore_args **sets) {
  cucore_status st = CUCORE_OK;
  for (int s = 0; s < cc_tdev_rot_sets(c) && st == CUCORE_OK; s++)
    st = bind(c, g, k, cc_tdev_rot_ptrs(c, s), &sets[s]);
  return st;
}

/* Times row r (o from cc_tdev_timing) with the rotated argument sets when there are any. */
static cucore_status time_row(cc_trun *c, cucore_kernel *k, cucore_args *a,
                              const cucore_tune_row *r, cucore_tune_timing_options *o,
                              cucore_tune_timing *t) {
  cucore_launch_config cfg = launch_of(c, r);
  int n = cc_tdev_rot_sets(c);
  const cc_tgroup *g = n ? cc_tcomp_group_of(c, r) : NULL;
  cucore_args **sets = g && g->obj ? cc_raw_calloc((size_t)n, sizeof *sets) : NULL;
  if (sets && rotate_bind(c, g, k, sets) == CUCORE_OK) {
    o->rotate = sets;
    o->nrotate = n;
  }
  if (o->l2_bytes) o->flush_buffer = cc_tdev_flush(c, o->l2_bytes * 2);
  double t0 = cc_trun_now_ms();
  cucore_status st = cucore_tune_time_launch(k, &cfg, a, o, t);
  c->s.gpu_ms += cc_trun_now_ms() - t0;
  for (int s = 0; sets && s < n; s++) cucore_args_destroy(sets[s]);
  free(sets);
  o->rotate = NULL, o->nrotate = 0;
  return st;
}

/* Screening's warm-up: the library's (10 ms, then >= 5 ms and >= 10 samples) for the first
 * configuration and after the GPU was idle for 100 ms or more; while the previous
 * configuration's launches have just kept the GPU busy and its clocks up, 0.1 ms of warm-up
 * and >= 0.5 ms of samples (still >= min_samples and the noise stop), a noisy one stopped at twice
 * min_samples rather than 200 samples (its noise is recorded, and a noisy result ties more
 * easily with the best, which makes it a finalist; a long kernel keeps its min_samples: a cap
 * by time cut a 3 ms kernel to 2 samples on an H100). The finalists are re-timed interleaved
 * with their own warm-up and the library's limits (below), so screening only has to
 * find them. */
static void screen_options(const cc_trun *c, cucore_tune_timing_options *o) {
  double last = c->meas->last_timed_ms;
  if (last <= 0 || cc_trun_now_ms() - last >= 100) return;
  if (o->warmup_ms > 0.1) o->warmup_ms = 0.1;
  if (o->screen_ms > 0.5) o->screen_ms = 0.5;
  if (o->max_samples > 2 * o->min_samples) o->max_samples = 2 * o->min_samples;
}

/* 1 when the GPU has just been busy with the previous configuration (its clocks up): racing
 * judges lone launches only then, never on a GPU that was idle. */
static int last_busy(const cc_trun *c) {
  double last = c->meas->last_timed_ms;
  return last > 0 && cc_trun_now_ms() - last < 100;
}

/* Timing's `more`: while the GPU thread's next work is a compile still being made, the row
 * being timed takes more samples instead of the GPU waiting. */
static int more_while_waiting(void *user) {
  cc_trun *c = user;
  return c->meas->last_of_group && cc_tcomp_waiting(c);
}

/* Racing on the checked launch: a kernel of RACE_CHECKED_MS or more (a few microseconds of
 * host time between an event and the launch are then under 1 %) whose checked launch, timed
 * between two events after its function was loaded explicitly, and one more lone launch are
 * both clearly slower than the best so far is screened on those two launches: no lone
 * launches for the mode, no warm-up, no screening. The checked launch runs right after the
 * data's reset (its inputs partly in L2), so it errs fast: it can spare a contender, never
 * screen one. */
#define RACE_CHECKED_MS 0.5

typedef struct race_timer {
  cucore_event *e0, *e1;
} race_timer;

/* The events, and the kernel's function loaded (no lazy loading inside the first timed
 * launch): 1 when racing can time the checked launch. */
static int race_timer_open(cc_trun *c, cucore_kernel *k, race_timer *t) {
  cucore_device *dev = cc_tdev_device(c);
  return dev && cucore_kernel_load(k, dev) == CUCORE_OK &&
         cucore_event_create(dev, 0, &t->e0) == CUCORE_OK &&
         cucore_event_create(dev, 0, &t->e1) == CUCORE_OK;
}

static void race_timer_close(race_timer *t) {
  cucore_event_destroy(t->e0);
  cucore_event_destroy(t->e1);
  t->e0 = t->e1 = NULL;
}

/* The milliseconds between the timer's events (-1: none). */
static double race_timer_ms(race_timer *t) {
  float ms = -1;
  if (cucore_event_elapsed_ms(t->e0, t->e1, &ms) != CUCORE_OK) return -1;
  return ms;
}

/* One more lone launch of k, timed (-1: it failed; the full timing meets the failure). */
static double race_lone(cucore_kernel *k, cucore_args *a, const cucore_launch_config *cfg,
                        race_timer *t) {
  cucore_status st = cucore_event_record(t->e0, cfg->stream);
  if (st == CUCORE_OK) st = cucore_launch(k, cfg, a);
  if (st == CUCORE_OK) st = cucore_event_record(t->e1, cfg->stream);
  if (st == CUCORE_OK) st = cucore_event_synchronize(t->e1);
  return st == CUCORE_OK ? race_timer_ms(t) : -1;
}

/* Row r screened on its checked launch (timed by t) alone when that is far above the best
 * so far (cc_tune_race_far), else on it and one more: 1 when it was. */
static int race_checked(cc_trun *c, cucore_kernel *k, cucore_args *a, cucore_tune_row *r,
                        const cucore_launch_config *cfg, race_timer *t) {
  double best = c->meas->best_ms, margin = 3 * c->meas->best_noise, ms[2];
  ms[0] = race_timer_ms(t);
  if (ms[0] < RACE_CHECKED_MS || !cc_tune_race_stop(ms, 1, best, margin)) return 0;
  size_t n = cc_tune_race_far(ms[0], best, margin) ? 1 : 2;
  if (n == 2) {
    double t0 = cc_trun_now_ms();
    ms[1] = race_lone(k, a, cfg, t);
    c->s.gpu_ms += cc_trun_now_ms() - t0;
    c->meas->last_timed_ms = cc_trun_now_ms();
    if (ms[1] < 0 || !cc_tune_race_stop(ms, 2, best, margin)) return 0;
  }
  if (cucore_tune_stats_compute(ms, n, &r->stats) != CUCORE_OK) return 0;
  cucore_tune_timing_options o = cc_tdev_timing(c);
  screen_options(c, &o);
  r->screened = 1, r->batch = 1, r->mode = CUCORE_TUNE_LAUNCH_SINGLE, r->sm_clock_mhz = -1;
  r->status = CUCORE_TUNE_OK;
  c->s.measured++, c->s.screened++;
  c->s.race_saved_launches += (n == 1 ? 4 : 3) + (size_t)cc_tune_race_saved(&o, r->stats.median);
  if (n == 1)
    cc_trun_text(&r->detail,
                 "screened: its checked launch (%.4g ms) was more than %g times the best so far "
                 "(%.4g ms)",
                 ms[0], CC_TUNE_RACE_FAR, best);
  else
    cc_trun_text(&r->detail,
                 "screened: its checked launch and one more (fastest %.4g ms) were clearly "
                 "slower than the best so far (%.4g ms)",
                 r->stats.min, best);
  return 1;
}

/* One configuration: reset, checked launch (timed for racing), verification, timing. */
static void measure_row(cc_trun *c, cucore_kernel *k, cucore_args *a, cucore_tune_row *r) {
  cucore_launch_config cfg = launch_of(c, r);
  double t0 = cc_trun_now_ms();
  race_timer rt = {NULL, NULL};
  int racing = !c->o.no_racing && c->meas->best_ms > 0 && last_busy(c) &&
               race_timer_open(c, k, &rt);
  cucore_status st = cc_tdev_reset(c);
  if (st == CUCORE_OK && racing) st = cucore_event_record(rt.e0, cfg.stream);
  if (st == CUCORE_OK) st = cucore_launch(k, &cfg, a);
  if (st == CUCORE_OK && racing) st = cucore_event_record(rt.e1, cfg.stream);
  if (st == CUCORE_OK) st = cucore_stream_synchronize(cfg.stream);
  if (st != CUCORE_OK) race_timer_close(&rt);
  if (st != CUCORE_OK) {
    cc_trun_failed(c, r, CUCORE_TUNE_LAUNCH_ERROR, cucore_last_error());
    return;
  }
  int v = cc_tdev_verify(c, r);
  c->s.verify_ms += cc_trun_now_ms() - t0;
  if (v != 0) race_timer_close(&rt);
  if (v < 0) {
    cc_trun_failed(c, r, CUCORE_TUNE_VERIFY_ERROR, cucore_last_error());
    return;
  }
  if (v > 0) {
    r->status = CUCORE_TUNE_WRONG_ANSWER;
    c->s.wrong++;
    return;
  }
  int screened = racing && race_checked(c, k, a, r, &cfg, &rt);
  race_timer_close(&rt);
  if (screened) return;
  cucore_tune_timing_options o = cc_tdev_timing(c);
  screen_options(c, &o);
  o.more = more_while_waiting, o.more_user = c, o.more_max_samples = 200;
  o.skip_first = 1; /* the checked launch above was the first: module loaded, lazy loading done */
  if (!c->o.no_racing && c->meas->best_ms > 0 && last_busy(c)) {
    o.race_best_ms = c->meas->best_ms;
    o.race_margin = 3 * c->meas->best_noise;
  }
  cucore_tune_timing t;
  st = time_row(c, k, a, r, &o, &t);
  c->meas->last_timed_ms = cc_trun_now_ms();
  if (st != CUCORE_OK) {
    cc_trun_failed(c, r, CUCORE_TUNE_LAUNCH_ERROR, cucore_last_error());
    return;
  }
  c->s.extra_samples += (size_t)t.more_samples;
  if (t.screened) {
    r->screened = 1;
    c->s.screened++;
    c->s.race_saved_launches += (size_t)t.saved_launches;
    cc_trun_text(&r->detail,
                 "screened: its 3 lone launches (fastest %.4g ms) were clearly slower than the "
                 "best so far (%.4g ms)",
                 t.stats.min, c->meas->best_ms);
  }
  r->stats = t.stats;
  r->batch = t.batch;
  r->mode = t.mode, r->sm_clock_mhz = t.sm_clock_mhz, r->throttled = t.throttled;
  r->status = CUCORE_TUNE_OK;
  c->s.measured++;
}

/* Row r's result as racing's best so far (a configuration timed in full). */
static void race_best(cc_trun *c, const cucore_tune_row *r) {
  cc_tmeas *m = c->meas;
  if (r->status != CUCORE_TUNE_OK || r->screened || !(r->stats.median > 0)) return;
  if (m->best_ms <= 0 || r->stats.median < m->best_ms)
    m->best_ms = r->stats.median, m->best_noise = r->stats.rel_stddev;
}

void cc_tmeas_one(cc_trun *c, cucore_kernel *k, cucore_args *a, cucore_tune_row *r) {
  if (r->resumed) { /* from the store (cc_tstore_resume) */
    race_best(c, r);
    return;
  }
  if (c->s.lost) {
    cc_trun_failed(c, r, CUCORE_TUNE_DEVICE_LOST,
                   "not measured: the device did not come back after a fault");
  } else {
    measure_row(c, k, a, r);
    cc_tdev_fault_after_row(c, r); /* a fault: recorded as such, the device reset */
  }
  race_best(c, r);
  /* Not measured is not a result: a later run (a fresh process) measures it. */
  double t0 = cc_trun_now_ms();
  if (r->status != CUCORE_TUNE_DEVICE_LOST) cc_tstore_record(c, r);
  c->s.record_ms += cc_trun_now_ms() - t0;
}

void cc_tmeas_progress(cc_trun *c, const cucore_tune_row *r, int finished) {
  cc_tmeas *m = c->meas;
  m->finished += r && !finished && !r->resumed; /* the resumed were counted as they were found */
  if (!c->o.progress) return;
  cucore_tune_progress p = {0};
  p.done = c->s.resumed + m->finished;
  p.total = (size_t)c->s.counts.runnable - c->s.model_rejected;
  p.elapsed_s = (cc_trun_now_ms() - m->t_start) / 1000;
  p.eta_s = p.done && p.total > p.done ? p.elapsed_s / (double)p.done * (double)(p.total - p.done)
                                       : 0.0;
  p.config = r ? r->config.index : 0;
  p.status = r ? r->status : CUCORE_TUNE_NOT_MEASURED;
  p.finished = finished;
  c->o.progress(c->o.user, &p);
}

/* ---- the finalists ------------------------------------------------------------------------- */

#define CC_TFINAL_ROUNDS 5
#define CC_TFINAL_ROUNDS_LONG 3

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

/* The rows that ran and verified (only those measured here when `own`), and their screening
 * statistics. A shard ranks only what it measured itself: the others' finalists are re-timed
 * where they were measured, and the whole store is ranked by a report-only tune or re-timed
 * on one device by a tune with retime_finalists (`cucore tune --devices`'s first GPU is such
 * a shard). */
static size_t candidates_of(const cc_trun *c, int own, size_t *rows, cucore_tune_stats *stats) {
  size_t n = 0;
  for (size_t i = 0; i < c->s.rows; i++)
    if (c->rows[i].status == CUCORE_TUNE_OK && !(own && c->rows[i].resumed)) {
      rows[n] = i;
      stats[n++] = c->rows[i].stats;
    }
  return n;
}

/* A shard that measured nothing itself ranks what the store gave it (nothing re-timed). */
static size_t candidates(const cc_trun *c, size_t *rows, cucore_tune_stats *stats) {
  int own = c->o.shard_count > 1 && !c->o.retime_finalists;
  size_t n = own ? candidates_of(c, 1, rows, stats) : 0;
  return n ? n : candidates_of(c, 0, rows, stats);
}

/* A finalist faulted: recorded so, the device reset, and no finalist re-timed (their kernels
 * belonged to the lost context): their screening results stand. */
static void faulted(cc_trun *c, finalist *f, size_t m, finalist *x) {
  cucore_tune_row *r = &c->rows[x->row];
  cc_trun_text(&r->detail, "%s", "while re-timed as a finalist");
  cc_tdev_fault_mark(c, r);
  cc_tstore_record(c, r);
  cc_tdev_fault_recover(c, r);
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
static void round_robin(cc_trun *c, finalist *f, size_t m, int rounds) {
  cucore_tune_timing_options o = cc_tdev_timing(c);
  o.warmup_ms = 0.25, o.screen_ms = 1, o.min_samples = 5, o.max_samples = 30, o.max_time_ms = 50;
  for (int round = 0; round < rounds; round++)
    for (size_t j = 0; j < m; j++) {
      finalist *x = &f[(j + (size_t)round) % m];
      cucore_tune_timing t;
      /* After the first round a long kernel needs no untimed launch: it is loaded, and its
       * first lone launch after the others' is as warm as any (the flush comes before each) */
      o.skip_first = round > 0 && c->rows[x->row].stats.median >= CUCORE_TUNE_LONG_MS;
      cucore_status st = x->k ? time_row(c, x->k, x->a, &c->rows[x->row], &o, &t) : CUCORE_OK;
      if (x->k && st != CUCORE_OK && cc_tdev_fault_check(c)) faulted(c, f, m, x);
      x->med[round] = x->k && st == CUCORE_OK ? t.stats.median : c->rows[x->row].stats.median;
    }
}

/* The rounds: CC_TFINAL_ROUNDS, or CC_TFINAL_ROUNDS_LONG when every finalist is a long kernel
 * (CUCORE_TUNE_LONG_MS: on an H200, 5 finalists of 6.5 ms matmuls still took 0.69 s in 3). */
static int rounds_of(const cc_trun *c, const finalist *f, size_t m) {
  for (size_t j = 0; j < m; j++)
    if (!(c->rows[f[j].row].stats.median >= CUCORE_TUNE_LONG_MS)) return CC_TFINAL_ROUNDS;
  return CC_TFINAL_ROUNDS_LONG;
}

/* Binds and re-times the finalists; returns how many were re-timed (none after a fault). */
static size_t retime(cc_trun *c, finalist *f, size_t m) {
  for (size_t j = 0; j < m; j++) {
    cucore_tune_row *r = &c->rows[f[j].row];
    cc_tgroup *g = cc_tcomp_group_of(c, r);
    if (g && !c->s.lost && g->deferred) cc_tcomp_now(c, g); /* a finalist from the store */
    if (c->s.lost || !g || !g->obj || cc_tmeas_bind_kernel(c, g, &f[j].k, &f[j].a) != CUCORE_OK)
      f[j].k = NULL;
  }
  int rounds = rounds_of(c, f, m);
  round_robin(c, f, m, rounds);
  size_t done = 0;
  for (size_t j = 0; j < m; j++) {
    cucore_tune_row *r = &c->rows[f[j].row];
    if (f[j].k) {
      done++;
      cucore_tune_stats_compute(f[j].med, (size_t)rounds, &r->stats);
      r->finalist = 1;
      r->screened = 0; /* timed in full now */
      cc_trun_text(&r->detail, "finalist: the median of %d interleaved rounds", rounds);
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

/* Of the first m ranked, how many to re-time: a long kernel's (CUCORE_TUNE_LONG_MS) finalists
 * end at the first one slower than the best by more than CC_TFINAL_LONG_WINDOW or 3 x the
 * best's noise (its ties always stay): interleaved rounds of launches of milliseconds move a
 * median by the noise, not by such a gap, and each visit costs five of them. */
#define CC_TFINAL_LONG_WINDOW 0.05
static size_t close_ones(const cucore_tune_stats *stats, const size_t *order, size_t m,
                         size_t ties) {
  const cucore_tune_stats *b = &stats[order[0]];
  if (!(b->median >= CUCORE_TUNE_LONG_MS)) return m;
  double w = 3 * b->rel_stddev > CC_TFINAL_LONG_WINDOW ? 3 * b->rel_stddev : CC_TFINAL_LONG_WINDOW;
  size_t k = 1;
  while (k < m && (k <= ties || stats[order[k]].median <= b->median * (1 + w))) k++;
  return k;
}

void cc_tmeas_final(cc_trun *c) {
  size_t n0 = c->s.rows ? c->s.rows : 1;
  size_t *rows = cc_raw_calloc(n0, sizeof *rows), *order = cc_raw_calloc(n0, sizeof *order);
  cucore_tune_stats *stats = cc_raw_calloc(n0, sizeof *stats);
  size_t n = rows && order && stats ? candidates(c, rows, stats) : 0, ties = 0;
  if (n) cucore_tune_rank(stats, n, order, &ties);
  size_t want = (size_t)c->o.finalists;
  size_t m = ties + 1 > want ? ties + 1 : want;
  if (m > n) m = n;
  if (n) m = close_ones(stats, order, m, ties);
  int retime = c->s.measured > 0 || (c->o.retime_finalists && !c->o.report_only);
  if (n && (m < 2 || c->o.finalists == 0 || !retime)) {
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
