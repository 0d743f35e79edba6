/* run_one.c -- one configuration of a measured tune: taken from the store when it was
 * measured before, else reset, launched (checked), verified and timed; its result recorded in
 * the store; the progress callback after it. */
#include "tune/run.h"

#include <stdio.h>

/* Screening's warm-up: the library's (10 ms, then >= 5 ms and >= 10 samples) for the first
 * configuration and after the GPU was idle for 100 ms or more; while the previous
 * configuration's launches have just kept the GPU busy and its clocks up, 0.1 ms of warm-up
 * and >= 0.5 ms of samples (still >= min_samples and the noise stop), a noisy one stopped at twice
 * min_samples rather than 200 samples (its noise is recorded, and a noisy result ties more
 * easily with the best, which makes it a finalist; a long kernel keeps its min_samples: a cap
 * by time cut a 3 ms kernel to 2 samples on an H100). The finalists are re-timed interleaved
 * with their own warm-up and the library's limits (run_final.c), so screening only has to
 * find them. */
static void screen_options(const cc_trun *c, cucore_tune_timing_options *o) {
  if (c->last_timed_ms <= 0 || cc_trun_now_ms() - c->last_timed_ms >= 100) return;
  if (o->warmup_ms > 0.1) o->warmup_ms = 0.1;
  if (o->screen_ms > 0.5) o->screen_ms = 0.5;
  if (o->max_samples > 2 * o->min_samples) o->max_samples = 2 * o->min_samples;
}

/* Timing's `more`: while the GPU thread's next work is a compile still being made, the row
 * being timed takes more samples instead of the GPU waiting. */
static int more_while_waiting(void *user) {
  cc_trun *c = user;
  return c->last_of_group && cc_tcomp_waiting(c);
}

/* One configuration: reset, checked launch, verification, timing. */
static void measure_row(cc_trun *c, cucore_kernel *k, cucore_args *a, cucore_tune_row *r) {
  cucore_launch_config cfg = cc_ttime_launch_of(c, r);
  double t0 = cc_trun_now_ms();
  cucore_status st = cc_tdata_reset(c);
  if (st == CUCORE_OK) st = cucore_launch(k, &cfg, a);
  if (st == CUCORE_OK) st = cucore_stream_synchronize(cfg.stream);
  if (st != CUCORE_OK) {
    cc_trun_failed(c, r, CUCORE_TUNE_LAUNCH_ERROR, cucore_last_error());
    return;
  }
  int v = cc_tdata_verify(c, r);
  c->s.verify_ms += cc_trun_now_ms() - t0;
  if (v < 0) {
    cc_trun_failed(c, r, CUCORE_TUNE_VERIFY_ERROR, cucore_last_error());
    return;
  }
  if (v > 0) {
    r->status = CUCORE_TUNE_WRONG_ANSWER;
    c->s.wrong++;
    return;
  }
  cucore_tune_timing_options o = cc_ttime_options(c);
  screen_options(c, &o);
  o.more = more_while_waiting, o.more_user = c, o.more_max_samples = 200;
  cucore_tune_timing t;
  st = cc_ttime(c, k, a, r, &o, &t);
  c->last_timed_ms = cc_trun_now_ms();
  if (st != CUCORE_OK) {
    cc_trun_failed(c, r, CUCORE_TUNE_LAUNCH_ERROR, cucore_last_error());
    return;
  }
  c->s.extra_samples += (size_t)t.more_samples;
  r->stats = t.stats;
  r->batch = t.batch;
  r->mode = t.mode, r->sm_clock_mhz = t.sm_clock_mhz, r->throttled = t.throttled;
  r->status = CUCORE_TUNE_OK;
  c->s.measured++;
}

void cc_tone_measure(cc_trun *c, cucore_kernel *k, cucore_args *a, cucore_tune_row *r) {
  if (r->resumed) return; /* from the store (cc_tstore_resume) */
  if (c->s.lost) {
    cc_trun_failed(c, r, CUCORE_TUNE_DEVICE_LOST,
                   "not measured: the device did not come back after a fault");
  } else {
    measure_row(c, k, a, r);
    cc_trec_after_row(c, r); /* a fault: recorded as such, the device reset */
  }
  /* Not measured is not a result: a later run (a fresh process) measures it. */
  double t0 = cc_trun_now_ms();
  if (r->status != CUCORE_TUNE_DEVICE_LOST) cc_tstore_record(c, r);
  c->s.record_ms += cc_trun_now_ms() - t0;
}

void cc_tone_progress(cc_trun *c, const cucore_tune_row *r, int finished) {
  c->done += r && !finished && !r->resumed; /* the resumed were counted as they were found */
  if (!c->o.progress) return;
  cucore_tune_progress p = {0};
  p.done = c->done;
  p.total = (size_t)c->s.counts.runnable - c->s.model_rejected;
  p.elapsed_s = (cc_trun_now_ms() - c->t_start) / 1000;
  p.eta_s = p.done && p.total > p.done ? p.elapsed_s / (double)p.done * (double)(p.total - p.done)
                                       : 0.0;
  p.config = r ? r->config.index : 0;
  p.status = r ? r->status : CUCORE_TUNE_NOT_MEASURED;
  p.finished = finished;
  c->o.progress(c->o.user, &p);
}
