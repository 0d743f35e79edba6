/*
 * measure.c -- timing one configuration on the GPU (cucore_tune_time_launch): an untimed
 * first launch (module load, lazy loading and first-touch stay out of the samples), the
 * launch mode (kernels of a few microseconds: a graph of launches captured once and replayed,
 * or a batch, so launch overhead is not what is ranked), warm-up by time, then samples
 * between two events, each after an L2 flush of twice the device's L2 written outside the
 * events (or with the argument sets rotated), samples taken while the clocks were held down
 * discarded; sampling stops by cucore_tune_screen_done. Built on the public calls of the
 * floors below; the samples are in measure_sample.c.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "tune/measure.h"

#include <stdlib.h>
#include <time.h>

/* Launches under 20 us are batched (the events' resolution); under 10 us (a lone launch's time,
 * the GPU's own ~3-5 us of start included) a graph of them: back-to-back launch calls (~3 us
 * each) would fall behind the GPU. */
#define CC_TUNE_SHORT_MS 0.020
#define CC_TUNE_TINY_MS 0.010
#define CC_TUNE_BATCH_MS 0.050 /* to about 50 us per sample */
#define CC_TUNE_BATCH_MAX 1000
#define CC_TUNE_CLOCK_MS 10.0 /* the SM clock read at most this often */

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static cucore_status check_options(const cucore_tune_timing_options *o) {
  if (o->min_samples < 1 || o->max_samples < o->min_samples || o->max_samples > 1000000)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "cucore_tune_time_launch: min_samples %d and "
                   "max_samples %d: expected 1 <= min <= max <= 1000000",
                   o->min_samples, o->max_samples);
  if (!(o->warmup_ms >= 0 && o->screen_ms >= 0 && o->max_noise >= 0 && o->max_time_ms >= 0) ||
      o->batch < 0 || o->batch > CC_TUNE_BATCH_MAX)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "cucore_tune_time_launch: times and noise must be "
                   ">= 0 and batch 0..%d",
                   CC_TUNE_BATCH_MAX);
  if (!(o->race_best_ms >= 0 && o->race_margin >= 0))
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "cucore_tune_time_launch: race_best_ms %g and race_margin %g: expected >= 0",
                   o->race_best_ms, o->race_margin);
  if (o->more && (o->more_max_samples < 0 || o->more_max_samples > 1000000))
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "cucore_tune_time_launch: more_max_samples %d: expected 0..1000000",
                   o->more_max_samples);
  if (o->mode < CUCORE_TUNE_LAUNCH_AUTO || o->mode > CUCORE_TUNE_LAUNCH_GRAPH || o->nrotate < 0 ||
      o->nrotate > CC_TUNE_BATCH_MAX || (o->nrotate && !o->rotate))
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "cucore_tune_time_launch: mode %d and nrotate %d: "
                   "expected a CUCORE_TUNE_LAUNCH_* and 0..%d sets in rotate",
                   o->mode, o->nrotate, CC_TUNE_BATCH_MAX);
  return CUCORE_OK;
}

/* The mode and the launches per sample, from the untimed launch's estimate `one` (ms). */
static void choose_mode(const cucore_tune_timing_options *o, double one, cucore_tune_timing *out) {
  int sets = o->rotate ? o->nrotate + 1 : 1;
  out->mode = o->mode                  ? o->mode
              : one < CC_TUNE_TINY_MS  ? CUCORE_TUNE_LAUNCH_GRAPH
              : one < CC_TUNE_SHORT_MS ? CUCORE_TUNE_LAUNCH_BATCH
                                       : CUCORE_TUNE_LAUNCH_SINGLE;
  out->batch = o->batch ? o->batch : 1;
  if (out->mode == CUCORE_TUNE_LAUNCH_SINGLE)
    out->batch = 1;
  else if (!o->batch) {
    double n = CC_TUNE_BATCH_MS / (one > 1e-4 ? one : 1e-4);
    out->batch = n > CC_TUNE_BATCH_MAX ? CC_TUNE_BATCH_MAX : (int)n + 1;
  }
  if (out->mode != CUCORE_TUNE_LAUNCH_SINGLE && out->batch < sets) out->batch = sets;
}

/* How many samples to enqueue next: enough for `left_ms` at `per_ms` a sample (4 when no
 * time is left: the noise decides), 1..CC_MEAS_QUEUE and at most `cap`. */
static int chunk_for(double left_ms, double per_ms, int cap) {
  double want = left_ms <= 0 ? 4 : per_ms > 0 ? left_ms / per_ms + 1 : 1;
  int k = want > CC_MEAS_QUEUE ? CC_MEAS_QUEUE : (int)want;
  if (k > cap) k = cap;
  return k < 1 ? 1 : k;
}

int cc_tune_race_stop(const double *t, size_t n, double best_ms, double margin) {
  if (!n || !(best_ms > 0)) return 0;
  double fastest = t[0];
  for (size_t i = 1; i < n; i++) fastest = t[i] < fastest ? t[i] : fastest;
  if (margin < CUCORE_TUNE_RACE_MARGIN) margin = CUCORE_TUNE_RACE_MARGIN;
  return fastest > best_ms * (1 + margin);
}

int cc_tune_race_far(double t_ms, double best_ms, double margin) {
  if (!(best_ms > 0)) return 0;
  if (margin < CUCORE_TUNE_RACE_MARGIN) margin = CUCORE_TUNE_RACE_MARGIN;
  return t_ms > CC_TUNE_RACE_FAR * best_ms * (1 + margin);
}

/* Racing: lone launches `t` (n of them) that are all clearly slower than the best so far
 * become the result (out->screened), with the launches the warm-up and screening would have
 * made estimated from their time. 1 when it stopped. */
static int race(const cucore_tune_timing_options *o, const double *t, int n,
                cucore_tune_timing *out) {
  if (o->race_best_ms <= 0 || out->mode != CUCORE_TUNE_LAUNCH_SINGLE ||
      !cc_tune_race_stop(t, (size_t)n, o->race_best_ms, o->race_margin))
    return 0;
  if (cucore_tune_stats_compute(t, (size_t)n, &out->stats) != CUCORE_OK) return 0;
  out->saved_launches = cc_tune_race_saved(o, out->stats.median);
  out->screened = 1;
  return 1;
}

int cc_tune_race_saved(const cucore_tune_timing_options *o, double one_ms) {
  double one = one_ms > 1e-6 ? one_ms : 1e-6;
  double samples = o->screen_ms / one > o->min_samples ? o->screen_ms / one : o->min_samples;
  if (samples > o->max_samples) samples = o->max_samples;
  double would = o->warmup_ms / one + samples;
  return (int)(would > 1e6 ? 1e6 : would);
}

/* The lone launches a long kernel keeps as its first samples (n 0: none kept). */
typedef struct lone {
  double t[3];
  int n;
} lone;

/* 1 when the kernel is timed as a long one: single launches of CUCORE_TUNE_LONG_MS or more and
 * the caller asked for it. */
static int is_long(const cucore_tune_timing_options *o, double one, const cucore_tune_timing *out) {
  return o->long_min_samples > 0 && out->mode == CUCORE_TUNE_LAUNCH_SINGLE &&
         one >= CUCORE_TUNE_LONG_MS;
}

/* The untimed launch (none when the caller has just made it), the mode (a graph captured
 * once), racing, and the warm-up by time (none for a long kernel: its 3 lone launches are
 * kept in `kept` as samples). */
static cucore_status first_and_warmup(cc_meas *m, const cucore_tune_timing_options *o,
                                      cucore_tune_timing *out, lone *kept) {
  double t0 = now_ms();
  cucore_status st = CUCORE_OK;
  if (!o->skip_first) {
    st = cc_meas_launches(m, 1);
    if (st == CUCORE_OK) st = cucore_stream_synchronize(m->cfg->stream);
    out->first_ms = now_ms() - t0;
    out->launches = 1;
  }
  double one = 0, per = 0, dropped[CC_MEAS_QUEUE] = {0};
  /* The estimate (not a sample): the least of 3 lone launches, so one slow start does not
   * pick the mode (a 5 us kernel once measured over 10 us alone). */
  if (st == CUCORE_OK) st = cc_meas_samples(m, 1, 3, dropped);
  one = dropped[0];
  for (int i = 1; i < 3; i++) one = dropped[i] < one ? dropped[i] : one;
  out->launches += 3;
  choose_mode(o, one, out);
  if (st == CUCORE_OK && race(o, dropped, 3, out)) return st;
  if (st == CUCORE_OK && is_long(o, one, out)) {
    for (int i = 0; i < 3; i++) kept->t[i] = dropped[i];
    kept->n = 3;
    return st;
  }
  if (st == CUCORE_OK && out->mode == CUCORE_TUNE_LAUNCH_GRAPH) {
    st = cc_meas_capture(m, out->batch);
    if (st != CUCORE_OK && CUCORE_CODE(st) != CUCORE_KERNEL_FAULT &&
        !o->mode) { /* auto: a batch then */
      out->mode = CUCORE_TUNE_LAUNCH_BATCH;
      st = cucore_stream_synchronize(m->cfg->stream);
    }
  }
  for (t0 = now_ms(); st == CUCORE_OK && now_ms() - t0 < o->warmup_ms;) {
    int k = chunk_for(o->warmup_ms - (now_ms() - t0), per, CC_MEAS_QUEUE);
    double c0 = now_ms();
    st = cc_meas_samples(m, out->batch, k, dropped);
    per = (now_ms() - c0) / k;
    out->launches += out->batch * k;
  }
  return st;
}

typedef struct samples {
  double *t;
  int *mhz;
  size_t n;
  size_t since;     /* the first sample the clock has not been read for */
  double last_read; /* when it was last read (ms) */
} samples;

/* The SM clock, read at most every CC_TUNE_CLOCK_MS (NVML's queries cost more than a short
 * sample): when the clocks are held down, the samples since the previous reading are dropped
 * (while that leaves time and samples), else they get the clock read. */
static void clock_check(cc_meas *m, samples *s, double t0, cucore_tune_timing *out) {
  double now = now_ms();
  if (!m->o->observe_clock || now - s->last_read < CC_TUNE_CLOCK_MS) return;
  s->last_read = now;
  int mhz = -1;
  if (cc_meas_throttled(m, out, &mhz) && out->throttled < m->o->max_samples &&
      now - t0 < m->o->max_time_ms) {
    out->throttled += (int)(s->n - s->since);
    s->n = s->since;
    return;
  }
  for (size_t i = s->since; i < s->n; i++) s->mhz[i] = mhz;
  s->since = s->n;
}

/* The first chunk is min_samples (up to the queue; a long kernel's kept lone launches count,
 * and its least is long_min_samples), then enough for screen_ms, then a few at a time while
 * the noise is above max_noise, or while the caller's `more` asks for them. */
static cucore_status screen(cc_meas *m, const cucore_tune_timing_options *opt,
                            cucore_tune_timing *out, const lone *kept) {
  cucore_tune_timing_options lo = *opt; /* a long kernel: its own least number of samples */
  if (kept->n && lo.long_min_samples < lo.min_samples) lo.min_samples = lo.long_min_samples;
  const cucore_tune_timing_options *o = &lo;
  int most = o->more && o->more_max_samples > o->max_samples ? o->more_max_samples : o->max_samples;
  samples s = {cc_malloc((size_t)most * sizeof *s.t, "timing samples"),
               cc_malloc((size_t)most * sizeof *s.mhz, "clock samples"), 0, 0, 0};
  cucore_status st = s.t && s.mhz ? CUCORE_OK : CUCORE_HOST_OUT_OF_MEMORY;
  double t0 = now_ms(), per = 0;
  for (int i = 0; st == CUCORE_OK && i < kept->n && (int)s.n < most; i++)
    s.t[s.n] = kept->t[i], s.mhz[s.n++] = -1;
  for (int done = 0, extra = 0; st == CUCORE_OK && !done;) {
    int cap = (extra ? most : o->max_samples) - (int)s.n;
    if (cap <= 0) { /* the kept lone launches reached max_samples already */
      st = cucore_tune_stats_compute(s.t, s.n, &out->stats);
      break;
    }
    int need = o->min_samples - (int)s.n > 1 ? o->min_samples - (int)s.n : 1;
    int first = need < cap ? need : cap;
    int k = s.n > (size_t)kept->n ? chunk_for(o->screen_ms - (now_ms() - t0), per, cap)
                                  : (first < CC_MEAS_QUEUE ? first : CC_MEAS_QUEUE);
    double c0 = now_ms();
    st = cc_meas_samples(m, out->batch, k, &s.t[s.n]);
    per = (now_ms() - c0) / k;
    out->launches += out->batch * k;
    if (st != CUCORE_OK) break;
    out->more_samples += extra ? k : 0;
    for (int i = 0; i < k; i++) s.mhz[s.n++] = -1;
    clock_check(m, &s, t0, out);
    if (s.n) st = cucore_tune_stats_compute(s.t, s.n, &out->stats);
    if (st == CUCORE_OK && s.n) cucore_tune_screen_done(&out->stats, now_ms() - t0, o, &done);
    if (done && (int)s.n < most && now_ms() - t0 < o->max_time_ms && o->more &&
        o->more(o->more_user))
      done = 0, extra = 1; /* more samples while the caller has nothing else to do */
  }
  if (s.mhz) out->sm_clock_mhz = cc_meas_median_clock(s.mhz, s.n);
  free(s.t);
  free(s.mhz);
  return st;
}

cucore_status cucore_tune_time_launch(cucore_kernel *k, const cucore_launch_config *cfg,
                                      cucore_args *args, const cucore_tune_timing_options *opt,
                                      cucore_tune_timing *out) {
  cc_begin();
  const char *fn = "cucore_tune_time_launch";
  CC_CHECK_ARG(k, fn, "k");
  CC_CHECK_ARG(cfg, fn, "cfg");
  CC_CHECK_ARG(cfg->stream, fn, "cfg->stream");
  CC_CHECK_ARG(out, fn, "out");
  static const cucore_tune_timing_options defaults = CUCORE_TUNE_TIMING_DEFAULTS;
  const cucore_tune_timing_options *o = opt ? opt : &defaults;
  cucore_tune_timing zero = {0};
  *out = zero;
  cucore_status st = check_options(o);
  if (st != CUCORE_OK) return st;
  out->sm_clock_mhz = -1;
  cc_meas m = {.k = k, .cfg = cfg, .args = args, .o = o};
  st = cc_meas_open(&m, o->l2_bytes, o->flush_buffer, CC_MEAS_QUEUE);
  lone kept = {{0}, 0};
  if (st == CUCORE_OK) st = first_and_warmup(&m, o, out, &kept);
  if (st == CUCORE_OK && !out->screened) st = screen(&m, o, out, &kept);
  cc_meas_close(&m);
  return st;
}
