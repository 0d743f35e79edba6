/* measure.h -- the parts of cucore_tune_time_launch (measure.c) shared with the samples
 * (measure_sample.c): the launches of one configuration (single, a batch, or one replay of a
 * graph of them), argument sets rotated launch by launch, the L2 flush, and the SM clock
 * observed after each sample. Private to src/tune. */
#ifndef CUCORE_TUNE_MEASURE_H
#define CUCORE_TUNE_MEASURE_H

#include "tune/space.h"

/* Samples enqueued before the host waits for them: the GPU goes from one sample's flush and
 * launches to the next without waiting for the host, so neither the host's turnaround nor a
 * launch call delayed on the host (another thread in the driver) lands between a pair of
 * events while the queue is ahead. */
#define CC_MEAS_QUEUE 16

/* Racing's verdict on lone launches t[0..n) against the best median so far (both ms per
 * launch): 1 when even the fastest is above best_ms x (1 + margin), the margin at least
 * CUCORE_TUNE_RACE_MARGIN (`margin` 0: that). A launch can be slowed by the host or the clocks
 * but not sped up past the kernel's time, so the fastest is the lower bound; a configuration
 * that could still be the winner is never stopped. */
int cc_tune_race_stop(const double *t, size_t n, double best_ms, double margin);
/* A single launch so far above the best (CC_TUNE_RACE_FAR times best_ms x (1 + margin), the
 * margin as cc_tune_race_stop takes it) that no second launch is needed to screen it: the host
 * or a clock dip slows one launch by a few percent, not by half. 1 when it is. */
#define CC_TUNE_RACE_FAR 2.0
int cc_tune_race_far(double t_ms, double best_ms, double margin);
/* About how many launches a screened configuration spares: the warm-up and the screening
 * cucore_tune_time_launch would have made with options o for a kernel of one_ms. */
int cc_tune_race_saved(const cucore_tune_timing_options *o, double one_ms);

typedef struct cc_meas {
  cucore_kernel *k;
  const cucore_launch_config *cfg;
  cucore_args *args;
  const cucore_tune_timing_options *o;
  cucore_device *dev;
  int ordinal;                         /* the device's, for the SM clock */
  cucore_event *ev[2 * CC_MEAS_QUEUE]; /* a pair around each queued sample */
  cucore_devptr flush;
  size_t flush_words;
  int own_flush;           /* 1: allocated here (freed at the end), 0: the caller's flush_buffer */
  int pairs;               /* event pairs created (samples that may be queued at once) */
  int next;                /* the argument set of the next launch (0: args, i: rotate[i-1]) */
  cucore_graph_exec *exec; /* CUCORE_TUNE_LAUNCH_GRAPH: `batch` launches captured once */
} cc_meas;

/* The device of cfg->stream, `pairs` (1..CC_MEAS_QUEUE) event pairs, and the flush: 2 x
 * l2_bytes, `flush_buffer` when not 0, else allocated here (0 bytes: none). */
cucore_status cc_meas_open(cc_meas *m, size_t l2_bytes, cucore_devptr flush_buffer, int pairs);
/* Everything cc_meas_open and cc_meas_capture made, released. */
void cc_meas_close(cc_meas *m);
/* n launches, the argument sets cycled. */
cucore_status cc_meas_launches(cc_meas *m, int n);
/* Captures n launches (the sets cycled) into m->exec. */
cucore_status cc_meas_capture(cc_meas *m, int n);
/* n (1..m->pairs) samples enqueued, then waited for: each the flush, then `batch`
 * launches (or one replay of m->exec) between a pair of events; the times per launch in
 * ms[0..n). */
cucore_status cc_meas_samples(cc_meas *m, int batch, int n, double *ms);
/* After a sample: the SM clock in *mhz (-1 unknown) and 1 when the clocks were held down.
 * A failed read stops observing (out->clock_status says why). */
int cc_meas_throttled(cc_meas *m, cucore_tune_timing *out, int *mhz);
/* The median of the known clocks (-1 when none). */
int cc_meas_median_clock(int *mhz, size_t n);

#endif
