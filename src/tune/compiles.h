/*
 * tune/compiles.h -- the compiles' room of cucore_tune_run() (tuner.h lists the rooms): its
 * state and what its files share. Included by compile_*.c only; the other rooms use the
 * cc_tcomp_ calls of tuner.h. Lowest first:
 *   compile_notes.c  what compiles say beyond cubins: warnings once each, values that change
 *                    nothing, a kernel name the source does not have
 *   compile_group.c  one group compiled (by the callback or the default compiler,
 *                    cucore_tune_compile); the -minimal check shared by the threads
 *   compile_pipe.c   the groups collected, the threads, the hand-out with the model's
 *                    verdicts, the dry run
 */
#ifndef CUCORE_TUNE_COMPILES_H
#define CUCORE_TUNE_COMPILES_H

#include "tune/tuner.h"

#include <pthread.h>
#include <stdatomic.h>

#define CC_TCOMP_MAX_JOBS 256

/* The compile threads (compile_pipe.c starts and joins them; compile_group.c takes the lock
 * for the -minimal verdict and to stop the compiles when the kernel names nothing). */
typedef struct cc_tcomp_pipe {
  cc_trun *ctx;
  atomic_size_t next;     /* the next group a thread takes */
  atomic_int minimal;     /* NVRTC's -minimal: 0 not known yet, 1 in use, -1 not used */
  size_t check_index;     /* the group that checks it (under mu) */
  pthread_cond_t verdict; /* minimal known, or check_index moved */
  pthread_mutex_t mu;
  pthread_cond_t cv;
  size_t *ready; /* finished groups, in the order they finished */
  size_t nready, taken;
  pthread_t th[CC_TCOMP_MAX_JOBS];
  atomic_int slots; /* the slot the next thread takes */
  int started;
  double t0;
  double last_done_ms; /* when the latest compile ended (from t0) */
} cc_tcomp_pipe;

/* The room's state. */
struct cc_tcomp {
  cc_tgroup *groups; /* the distinct compiles of the runnable rows, sorted by hash */
  size_t ngroups;
  cc_tcomp_pipe *pipe;  /* the threads, from cc_tcomp_start to cc_tcomp_finish */
  int keep_objects;     /* 1: groups keep their objects for measuring */
  cc_tcomp_warn *warns; /* distinct compiler warnings (compile_notes.c) */
  size_t nwarns, cap_warns;
  size_t *inert;        /* parameters whose values change nothing in the code */
  char *kernel_missing; /* set by a compile thread: the kernel names nothing in the source */
};

/* ---- compile_notes.c ---- */
/* Group g's warnings added to the tune's distinct ones (the calling thread). */
void cc_tcomp_warnings(cc_trun *c, const cc_tgroup *g);
/* After the compiles: the distinct cubins and the parameters that change nothing. */
void cc_tcomp_inert(cc_trun *c);
/* When group g's failed compile says `kernel` names nothing in the source: the message (malloc'd,
 * naming the kernels the source has, compiled with `defines`); else NULL. */
char *cc_tcomp_missing_kernel(const cc_trun *c, const cc_tgroup *g, const char *kernel,
                              const char *defines);

/* ---- compile_group.c ---- */
/* The first group at or after `i` that is compiled (not deferred); ngroups when none. */
size_t cc_tcomp_next_compiled(const cc_trun *c, size_t i);
/* 1 when group `i` is the one to check -minimal; otherwise waits for the verdict. */
int cc_tcomp_wait_verdict(cc_tcomp_pipe *p, size_t i);
/* Group g compiled (in compile slot `slot`; `first`: it checks -minimal), its resources read,
 * its object kept for measuring; g->ok says whether it compiled, g->error why not. */
void cc_tcomp_compile_group(cc_trun *c, int slot, cc_tgroup *g, int first);

#endif /* CUCORE_TUNE_COMPILES_H */
