/*
 * tune/measuring.h -- the measuring room of cucore_tune_run() (tuner.h lists the rooms): its
 * state and what its files share. Included by trial.c and gpu_loop.c only; the entry calls
 * cc_tmeas_all (tuner.h). Lowest first:
 *   trial.c     one configuration: its kernel bound, reset, launched, verified, timed,
 *               recorded; the progress callback; the finalists re-timed interleaved and
 *               ranked; the room's state made and let go
 *   gpu_loop.c  the measured tune: the setup, the compiles taken as they finish, groups
 *               claimed on the store, model-first order, the end
 */
#ifndef CUCORE_TUNE_MEASURING_H
#define CUCORE_TUNE_MEASURING_H

#include "tune/tuner.h"

/* The room's state. */
struct cc_tmeas {
  double t_start;       /* when measuring began (the progress's ETA) */
  double last_timed_ms; /* when the last configuration's timing ended (0: none) */
  int last_of_group;    /* 1: the row being timed is its group's last (the GPU thread's next
                           work is the next compile) */
  size_t finished;      /* rows measured here and said to the progress (the rows resumed from
                           the store are c->s.resumed) */
  double best_ms;       /* racing: the best median of a configuration timed in full (0: none) */
  double best_noise;    /* its relative noise */
};

/* ---- trial.c ---- */
/* Group g's kernel and its arguments on the buffers (the bind callback); nothing half made is
 * kept on a failure. */
cucore_status cc_tmeas_bind_kernel(cc_trun *c, const cc_tgroup *g, cucore_kernel **k,
                                   cucore_args **a);
/* One runnable row: from the store, or reset, launched, verified, timed and stored. */
void cc_tmeas_one(cc_trun *c, cucore_kernel *k, cucore_args *a, cucore_tune_row *r);
/* The progress callback after row r (NULL with `finished`: the end). */
void cc_tmeas_progress(cc_trun *c, const cucore_tune_row *r, int finished);
/* The finalists re-timed interleaved; c->s.best and ties set. */
void cc_tmeas_final(cc_trun *c);

#endif /* CUCORE_TUNE_MEASURING_H */
