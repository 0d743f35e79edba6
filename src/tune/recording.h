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

/* Reads a Kernel Tuner cache file's or a TuningSchema T4 file's JSON text; `name` names it
 * in errors. */
cucore_status cc_trecording_read(const char *text, size_t len, const char *name,
                                 cc_trecording **out);
void cc_trecording_free(cc_trecording *r);
/* The entry of a configuration index, or -1 when it is not recorded. */
long cc_trecording_find(const cc_trecording *r, uint64_t index);

/* For the readers (recording.c, recording_t4.c). */
typedef struct cc_json cc_json;
/* The value index of JSON value `v` among parameter p's values (numbers by value, strings by
 * text), or -1. */
long cc_trecording_value_of(const cc_trecording *r, size_t p, const cc_json *v);
/* A value's text as a recording keeps it (malloc'd; NULL when out of memory). */
char *cc_trecording_text_of(const cc_json *v);
/* Once index, time and cost are filled for the n entries: sorted (a configuration twice is
 * refused), the optimum and the count with a time (none is refused), the domain made.
 * `format` names the file's kind in errors. */
cucore_status cc_trecording_finish(cc_trecording *r, const char *name, const char *format);
/* The readers, root the file's parsed JSON: a Kernel Tuner cache file (recording_kt.c), a
 * TuningSchema T4 file (recording_t4.c). */
cucore_status cc_trecording_read_kt(cc_trecording *r, const cc_json *root, const char *name);
cucore_status cc_trecording_read_t4(cc_trecording *r, const cc_json *root, const char *name);
#endif /* CUCORE_TUNE_RECORDING_H */
