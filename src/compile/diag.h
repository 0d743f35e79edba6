/*
 * compile/diag.h -- a compiler's log read into records (diagnostics.c): NVRTC's (EDG's)
 * `file(LINE): severity #N-D: message` with its source line and caret, ptxas's
 * `ptxas NAME, line N; severity : message`, nvJitLink's `severity : message` and
 * `ERROR N: message`, libNVVM's `NAME (LINE, COL): message`, and `file:line:col: severity:`.
 * A line of no known shape is kept as a record without a location; nothing is dropped but
 * blank lines. Program (program.c) keeps the records of its last log.
 */
#ifndef CUCORE_DIAG_H
#define CUCORE_DIAG_H

#include "base/base.h"

#include <stddef.h>

/* The records of one log; each record's strings are its own allocations. */
typedef struct cc_diag_list {
  cucore_diagnostic *v;
  size_t n, cap;
} cc_diag_list;

/* Reads `log` (NUL-terminated; NULL is empty) into `out` (emptied first). Returns 0, or -1
 * when out of memory (recorded by cc_grow or cc_fail; `out` is then empty). */
int cc_diag_parse(const char *log, cc_diag_list *out);
/* Frees what `l` holds; the list is then empty. */
void cc_diag_free(cc_diag_list *l);

#endif
