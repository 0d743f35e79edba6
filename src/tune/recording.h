/*
 * tune/recording.h -- recorded spaces and the simulation of a search over them. A recording is
 * a brute-force (or any) tuning result: the parameters and their values, and for each recorded
 * configuration its time or its failure, and what measuring it cost (compile, verification,
 * benchmark). Read from a Kernel Tuner cache file (recording.c). A simulation (simulate.c)
 * replays a strategy over it: each evaluation returns the recorded time (or failure) and adds
 * the recorded cost to a simulated clock; no GPU, no compiler. Private to src/tune.
 */
#ifndef CUCORE_TUNE_RECORDING_H
#define CUCORE_TUNE_RECORDING_H

#include "tune/search.h"

typedef struct cc_trecording {
  char *kernel, *device; /* as recorded ("" when not) */
  size_t nparams;
  char **names;    /* nparams */
  size_t *sizes;   /* values per parameter */
  size_t *offset;  /* the first value of parameter p in texts and num */
  char **texts;    /* every value as JSON text */
  double *num;     /* every value as a number (NAN: not one) */
  size_t n;        /* recorded configurations */
  uint64_t *index; /* sorted */
  double *time;    /* ms; NAN: failed */
  double *cost;    /* ms: compile + verification + benchmark, as recorded (0 when not) */
  size_t nvalid;   /* configurations with a time */
  double optimum;  /* the best recorded time */
  cc_tdom dom;     /* exactly the recorded configurations */
} cc_trecording;

/* Reads a Kernel Tuner cache file's JSON text; `name` names it in errors. */
cucore_status cc_trecording_read(const char *text, size_t len, const char *name,
                                 cc_trecording **out);
void cc_trecording_free(cc_trecording *r);
/* The entry of a configuration index, or -1 when it is not recorded. */
long cc_trecording_find(const cc_trecording *r, uint64_t index);

#endif /* CUCORE_TUNE_RECORDING_H */
