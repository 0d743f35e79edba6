/*
 * measure_sample.c -- the samples of cucore_tune_time_launch, and cucore_tune_time_samples
 * (exactly N of them, what `cucore run` times with): launches with the argument sets
 * rotated (inputs past L2 without a flush), a graph of launches captured once per
 * configuration and replayed (launch overhead is not what is ranked), the L2 flush outside
 * the events, samples enqueued ahead of the host (CC_MEAS_QUEUE), and the SM clock read through
 * NVML between them (cucore_system_get_clock: the clock and the reasons alone).
 */
#include "tune/measure.h"

#include <stdlib.h>

cucore_status cc_meas_open(cc_meas *m, size_t l2_bytes, cucore_devptr flush_buffer, int pairs) {
  cucore_status st = cucore_stream_get_device(m->cfg->stream, &m->dev);
  if (st == CUCORE_OK) st = cucore_device_get_ordinal(m->dev, &m->ordinal);
  for (; m->pairs < pairs && st == CUCORE_OK; m->pairs++) {
    st = cucore_event_create(m->dev, 0, &m->ev[2 * m->pairs]);
    if (st == CUCORE_OK) st = cucore_event_create(m->dev, 0, &m->ev[2 * m->pairs + 1]);
  }
  m->flush_words = l2_bytes * 2 / 4;
  if (m->flush_words && flush_buffer) {
    m->flush = flush_buffer; /* the caller's, checked by the fill's bounds check */
  } else if (st == CUCORE_OK && m->flush_words) {
    st = cucore_mem_alloc(m->dev, m->flush_words * 4, &m->flush);
    m->own_flush = st == CUCORE_OK;
  }
  return st;
}

void cc_meas_close(cc_meas *m) {
  cucore_graph_exec_destroy(m->exec);
  if (m->own_flush) cucore_mem_free(m->dev, m->flush);
  for (int i = 0; i < 2 * CC_MEAS_QUEUE; i++) cucore_event_destroy(m->ev[i]);
}

cucore_status cc_meas_launches(cc_meas *m, int n) {
  cucore_status st = CUCORE_OK;
  int sets = m->o->rotate ? m->o->nrotate + 1 : 1;
  for (int i = 0; i < n && st == CUCORE_OK; i++) {
    cucore_args *a = m->next ? m->o->rotate[m->next - 1] : m->args;
    m->next = (m->next + 1) % sets;
    st = cucore_launch(m->k, m->cfg, a);
  }
  return st;
}

cucore_status cc_meas_capture(cc_meas *m, int n) {
  cucore_stream *s = m->cfg->stream;
  cucore_graph *g = NULL;
  cucore_status st = cucore_stream_begin_capture(s, CUCORE_CAPTURE_THREAD_LOCAL);
  if (st != CUCORE_OK) return st;
  st = cc_meas_launches(m, n);
  cucore_status end = cucore_stream_end_capture(s, &g);
  if (st == CUCORE_OK) st = end;
  if (st == CUCORE_OK)
    st = cucore_graph_instantiate(g, CUCORE_GRAPH_INSTANTIATE_UPLOAD, s, &m->exec);
  cucore_graph_destroy(g); /* the executable graph keeps what it needs */
  if (st == CUCORE_OK) st = cucore_stream_synchronize(s);
  return st;
}

cucore_status cc_meas_samples(cc_meas *m, int batch, int n, double *ms) {
  cucore_stream *s = m->cfg->stream;
  cucore_status st = CUCORE_OK;
  for (int i = 0; i < n && st == CUCORE_OK; i++) {
    if (m->flush) st = cucore_memset_d32(m->dev, m->flush, 0x5a5a5a5au, m->flush_words, s);
    if (st == CUCORE_OK) st = cucore_event_record(m->ev[2 * i], s);
    if (st == CUCORE_OK)
      st = m->exec ? cucore_graph_launch(m->exec, s) : cc_meas_launches(m, batch);
    if (st == CUCORE_OK) st = cucore_event_record(m->ev[2 * i + 1], s);
  }
  if (st == CUCORE_OK) st = cucore_event_synchronize(m->ev[2 * n - 1]);
  for (int i = 0; i < n && st == CUCORE_OK; i++) {
    float f = 0;
    st = cucore_event_elapsed_ms(m->ev[2 * i], m->ev[2 * i + 1], &f);
    ms[i] = (double)f / batch;
  }
  return st;
}

int cc_meas_throttled(cc_meas *m, cucore_tune_timing *out, int *mhz) {
  *mhz = -1;
  if (!m->o->observe_clock || out->clock_status != CUCORE_OK) return 0;
  long long reasons = -1;
  cucore_status st = cucore_system_get_clock(m->ordinal, mhz, &reasons); /* two NVML queries */
  if (st != CUCORE_OK) {
    out->clock_status = st;
    return 0;
  }
  return reasons > 0 && (reasons & (long long)CUCORE_CLOCK_REASONS_THROTTLE);
}

static int by_value(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

int cc_meas_median_clock(int *mhz, size_t n) {
  qsort(mhz, n, sizeof *mhz, by_value);
  size_t first = 0;
  while (first < n && mhz[first] < 0) first++;
  return first < n ? mhz[first + (n - first) / 2] : -1;
}

static cucore_status check_exact(cucore_kernel *k, const cucore_launch_config *cfg,
                                 const cucore_tune_sample_options *o, double *ms) {
  const char *fn = "cucore_tune_time_samples";
  CC_CHECK_ARG(cfg, fn, "cfg");
  CC_CHECK_ARG(cfg->stream, fn, "cfg->stream");
  CC_CHECK_ARG(o, fn, "opt");
  if (!k && !o->exec)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: no kernel `k` and no graph `opt->exec` to time",
                   fn);
  if (o->warmup < 0 || o->samples < 0 || o->batch < 0)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: warmup %lld, samples %lld and batch %d: expected each >= 0", fn, o->warmup,
                   o->samples, o->batch);
  if (o->samples && !ms)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: %lld samples asked and no `ms` to hold them", fn,
                   o->samples);
  return CUCORE_OK;
}

cucore_status cucore_tune_time_samples(cucore_kernel *k, const cucore_launch_config *cfg,
                                       cucore_args *args, const cucore_tune_sample_options *opt,
                                       double *ms) {
  cc_begin();
  cucore_status st = check_exact(k, cfg, opt, ms);
  if (st != CUCORE_OK) return st;
  static const cucore_tune_timing_options none = {0}; /* no rotation, no clock */
  int batch = opt->batch > 1 ? opt->batch : 1;
  long long pairs = opt->samples < CC_MEAS_QUEUE ? opt->samples : CC_MEAS_QUEUE;
  cc_meas m = {.k = k, .cfg = cfg, .args = args, .o = &none};
  st = cc_meas_open(&m, opt->samples ? opt->l2_bytes : 0, opt->flush_buffer, (int)pairs);
  m.exec = NULL; /* the caller's graph is replayed below, never destroyed here */
  for (long long w = 0; w < opt->warmup && st == CUCORE_OK; w++) /* no flush, no events */
    st = opt->exec ? cucore_graph_launch(opt->exec, cfg->stream) : cc_meas_launches(&m, batch);
  for (long long i = 0; i < opt->samples && st == CUCORE_OK; i += pairs) {
    long long n = opt->samples - i < pairs ? opt->samples - i : pairs;
    m.exec = opt->exec;
    st = cc_meas_samples(&m, batch, (int)n, &ms[i]);
    m.exec = NULL;
  }
  cc_meas_close(&m);
  return st;
}
