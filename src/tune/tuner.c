/* tuner.c -- the core of cucore_tune_run(), what every room uses: a monotonic clock, the
 * notes for the caller, a row's texts, a failed row counted, the model's order of the rows,
 * the results' names and a buffer's bytes. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "tune/tuner.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double cc_trun_now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

void cc_trun_note(const cc_trun *c, const char *fmt, ...) {
  if (!c->o.note) return;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *text = n >= 0 ? cc_raw_malloc((size_t)n + 1) : NULL; /* a note of any length, whole */
  if (!text) return;
  va_start(ap, fmt);
  vsnprintf(text, (size_t)n + 1, fmt, ap);
  va_end(ap);
  c->o.note(c->o.user, text);
  free(text);
}

const char cc_trun_none[] = "";

void cc_trun_text(const char **slot, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *t = n >= 0 ? cc_raw_malloc((size_t)n + 1) : NULL;
  if (t) {
    va_start(ap, fmt);
    vsnprintf(t, (size_t)n + 1, fmt, ap);
    va_end(ap);
  }
  cc_trun_text_free(slot);
  *slot = t ? t : "(no memory for this text)";
}

void cc_trun_text_free(const char **slot) {
  if (*slot && *slot != cc_trun_none && strcmp(*slot, "(no memory for this text)") != 0)
    free((char *)*slot);
  *slot = cc_trun_none;
}

char *cc_trun_error_line(const char *what, const char *msg) {
  const char *line = msg;
  for (const char *p = msg; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
    size_t n = strcspn(p, "\n");
    const char *e = strstr(p, "error");
    if (e && (size_t)(e - p) < n) {
      line = p;
      break;
    }
  }
  size_t n = strcspn(line, "\n");
  size_t len = strlen(what) + n + 3;
  char *t = cc_raw_malloc(len);
  if (t) snprintf(t, len, "%s: %.*s", what, (int)n, line);
  return t;
}

void cc_trun_failed(cc_trun *c, cucore_tune_row *r, cucore_tune_result status, const char *detail) {
  r->status = status;
  cc_trun_text(&r->detail, "%s", detail);
  c->s.failed++;
}

static const char *const result_names[] = {
    "",           "ok",    "wrong-answer", "launch-error", "verify-error",
    "bind-error", "fault", "device-lost",  "skipped",      "compile-error"};

const char *cucore_tune_result_name(cucore_tune_result result) {
  return (unsigned)result < CC_ARRAY_LEN(result_names) ? result_names[result] : "?";
}

static _Thread_local const cucore_tune_row *tls_rows; /* for by_score (no qsort_r in C11) */

static int by_score(const void *a, const void *b) {
  const cucore_tune_row *x = &tls_rows[*(const size_t *)a], *y = &tls_rows[*(const size_t *)b];
  if (x->model.score != y->model.score) return x->model.score > y->model.score ? -1 : 1;
  return x->config.index < y->config.index ? -1 : 1;
}

size_t cc_trun_model_order(const cucore_tune_row *rows, size_t nrows, size_t *order) {
  size_t n = 0;
  for (size_t i = 0; i < nrows; i++)
    if (rows[i].compiled && rows[i].config.verdict == CUCORE_TUNE_RUNNABLE) order[n++] = i;
  tls_rows = rows;
  qsort(order, n, sizeof *order, by_score);
  return n;
}

size_t cc_trun_bytes(const cucore_tune_buffer *b) { return b->count * b->elem_size; }

int cc_trun_dtype(cucore_tune_elem elem) {
  static const int codes[] = {CUCORE_DTYPE_INT, CUCORE_DTYPE_UINT, CUCORE_DTYPE_FLOAT,
                              CUCORE_DTYPE_BFLOAT};
  return codes[elem];
}
