/*
 * measure.c -- timing one configuration on the GPU (cucore_tune_time_launch): an untimed
 * first launch (module load, lazy loading and first-touch stay out of the samples), warm-up
 * by time, then samples between two events, each after an L2 flush of twice the device's L2
 * written outside the events; batches of launches per sample for kernels of a few
 * microseconds, so launch overhead is not what is ranked; sampling stops by
 * cucore_tune_screen_done. Built on the public calls of the floors below.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "tune/space.h"

#include <stdlib.h>
#include <time.h>

#define CC_TUNE_SHORT_MS 0.020  /* launches under 20 us are batched */
#define CC_TUNE_BATCH_MS 0.050  /* to about 50 us per sample */
#define CC_TUNE_BATCH_MAX 1000

typedef struct meas {
  cucore_kernel *k;
  const cucore_launch_config *cfg;
  cucore_args *args;
  cucore_device *dev;
  cucore_event *e0, *e1;
  cucore_devptr flush;
  size_t flush_words;
} meas;

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static cucore_status launches(meas *m, int n) {
  cucore_status st = CUCORE_OK;
  for (int i = 0; i < n && st == CUCORE_OK; i++) st = cucore_launch(m->k, m->cfg, m->args);
  return st;
}

/* One sample: flush, then `batch` launches between the events; the time per launch. */
static cucore_status sample(meas *m, int batch, double *ms) {
  cucore_stream *s = m->cfg->stream;
  cucore_status st = CUCORE_OK;
  if (m->flush) st = cucore_memset_d32(m->dev, m->flush, 0x5a5a5a5au, m->flush_words, s);
  if (st == CUCORE_OK) st = cucore_event_record(m->e0, s);
  if (st == CUCORE_OK) st = launches(m, batch);
  if (st == CUCORE_OK) st = cucore_event_record(m->e1, s);
  if (st == CUCORE_OK) st = cucore_event_synchronize(m->e1);
  float f = 0;
  if (st == CUCORE_OK) st = cucore_event_elapsed_ms(m->e0, m->e1, &f);
  *ms = (double)f / batch;
  return st;
}

static cucore_status check_options(const cucore_tune_timing_options *o) {
  if (o->min_samples < 1 || o->max_samples < o->min_samples || o->max_samples > 1000000)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "cucore_tune_time_launch: min_samples %d and "
                   "max_samples %d: expected 1 <= min <= max <= 1000000", o->min_samples,
                   o->max_samples);
  if (!(o->warmup_ms >= 0 && o->screen_ms >= 0 && o->max_noise >= 0 && o->max_time_ms >= 0) ||
      o->batch < 0 || o->batch > CC_TUNE_BATCH_MAX)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "cucore_tune_time_launch: times and noise must be "
                   ">= 0 and batch 0..%d", CC_TUNE_BATCH_MAX);
  return CUCORE_OK;
}

/* The untimed launch, the batch size, and the warm-up by time. */
static cucore_status first_and_warmup(meas *m, const cucore_tune_timing_options *o,
                                      cucore_tune_timing *out) {
  double t0 = now_ms();
  cucore_status st = launches(m, 1);
  if (st == CUCORE_OK) st = cucore_stream_synchronize(m->cfg->stream);
  out->first_ms = now_ms() - t0;
  out->launches = 1;
  double one = 0;
  if (st == CUCORE_OK) st = sample(m, 1, &one); /* an estimate, not a sample */
  out->launches++;
  out->batch = o->batch ? o->batch : 1;
  if (!o->batch && one < CC_TUNE_SHORT_MS) {
    double n = CC_TUNE_BATCH_MS / (one > 1e-4 ? one : 1e-4);
    out->batch = n > CC_TUNE_BATCH_MAX ? CC_TUNE_BATCH_MAX : (int)n + 1;
  }
  for (t0 = now_ms(); st == CUCORE_OK && now_ms() - t0 < o->warmup_ms; out->launches++)
    st = sample(m, 1, &one);
  return st;
}

static cucore_status screen(meas *m, const cucore_tune_timing_options *o,
                            cucore_tune_timing *out) {
  double *t = cc_malloc((size_t)o->max_samples * sizeof *t, "timing samples");
  if (!t) return CUCORE_HOST_OUT_OF_MEMORY;
  cucore_status st = CUCORE_OK;
  double t0 = now_ms();
  int done = 0;
  size_t n = 0;
  while (st == CUCORE_OK && !done) {
    st = sample(m, out->batch, &t[n++]);
    out->launches += out->batch;
    if (st == CUCORE_OK) st = cucore_tune_stats_compute(t, n, &out->stats);
    if (st == CUCORE_OK) cucore_tune_screen_done(&out->stats, now_ms() - t0, o, &done);
  }
  free(t);
  return st;
}

static cucore_status setup(meas *m, const cucore_tune_timing_options *o) {
  cucore_status st = cucore_stream_device(m->cfg->stream, &m->dev);
  if (st == CUCORE_OK) st = cucore_event_create(m->dev, 0, &m->e0);
  if (st == CUCORE_OK) st = cucore_event_create(m->dev, 0, &m->e1);
  m->flush_words = o->l2_bytes * 2 / 4;
  if (st == CUCORE_OK && m->flush_words)
    st = cucore_mem_alloc(m->dev, m->flush_words * 4, &m->flush);
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
  meas m = {k, cfg, args, NULL, NULL, NULL, 0, 0};
  st = setup(&m, o);
  if (st == CUCORE_OK) st = first_and_warmup(&m, o, out);
  if (st == CUCORE_OK) st = screen(&m, o, out);
  if (m.flush) cucore_mem_free(m.dev, m.flush);
  cucore_event_destroy(m.e0);
  cucore_event_destroy(m.e1);
  return st;
}
