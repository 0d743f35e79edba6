/* t4.h -- TuningSchema T4 JSON (the results format Kernel Tuner, KTT and BAT read), one
 * writer (t4.c) for `cucore tune --t4` (tune_output.c, from the tune's rows) and `cucore cache
 * tune export KEY --t4 FILE` (cache_tune.c, from a store's records). Public API only. */
#ifndef CUCORE_CLI_T4_H
#define CUCORE_CLI_T4_H

#include "cli.h"

/* What T4 says of one result. */
typedef struct t4_result {
  const char *invalidity; /* T4's: "correct", "compile", "timeout", "constraints",
                             "correctness" or "runtime" */
  int timed;              /* 1: correct and measured: median_ms is its runtime */
  double median_ms;       /* its time, ms */
  double compile_ms;      /* its compile's time, ms */
} t4_result;

/* The results to write: n of them, read through the callbacks with `user`. */
typedef struct t4_source {
  size_t n;
  const void *user;
  /* Result i into *out. */
  void (*result)(const void *user, size_t i, t4_result *out);
  /* Result i's configuration as a JSON object under `key` (the parameters and their values). */
  void (*config)(const void *user, size_t i, json_out *j, const char *key);
} t4_source;

/* T4's view of a tune row: a compile's failure first, then the checks' verdict, then what the
 * measuring made of it. */
void t4_row_result(const cucore_tune_row *r, t4_result *out);
/* Writes the T4 document of `src` to `path` (atomically: cli_out_open) for `verb`'s option
 * `what` ("--t4"). 0, or an exit code after printing why. */
int t4_write(const char *verb, const char *what, const char *path, const t4_source *src);

#endif
