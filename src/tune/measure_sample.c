/*
 * measure_sample.c -- the samples of cucore_tune_time_launch: launches with the argument sets
 * rotated (inputs past L2 without a flush), a graph of launches captured once per
 * configuration and replayed (launch overhead is not what is ranked), the L2 flush outside
 * the events, samples enqueued ahead of the host (CC_MEAS_QUEUE), and the SM clock read through
 * NVML between them (cucore_system_get_clock: the clock and the reasons alone).
 */
#include "tune/measure.h"

#include <stdlib.h>

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
