/*
 * diagnostics.c -- a compiler's log read into records (compile/diag.h), and the public
 * severity names. Lines are read one at a time, any length; a header line starts a record,
 * the non-blank lines after a located or graded record (the source line and caret NVRTC
 * echoes, "detected during ..." lines, ptxas's detail lines) are its continuation, and any
 * other line is a record of its own with no location. NVRTC echoes the source line indented
 * by two columns with the caret under the column, so the column is the caret's offset less
 * two, plus one (tabs are echoed as tabs, so bytes count the same on both lines).
 */
#define _GNU_SOURCE
#include "compile/diag.h"

#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *cucore_diag_severity_name(cucore_diag_severity s) {
  switch (s) {
  case CUCORE_DIAG_TEXT: return "text";
  case CUCORE_DIAG_NOTE: return "note";
  case CUCORE_DIAG_REMARK: return "remark";
  case CUCORE_DIAG_INFO: return "info";
  case CUCORE_DIAG_WARNING: return "warning";
  case CUCORE_DIAG_ERROR: return "error";
  case CUCORE_DIAG_FATAL: return "fatal";
  }
  return "unknown";
}

/* ---- one line ------------------------------------------------------------------------------ */

typedef struct span {
  const char *p;
  size_t n;
} span;

/* What a header line says; `edg` when NVRTC's shape (the caret gives the column). */
typedef struct header {
  cucore_diag_severity sev;
  span file, msg;
  int line, column, number, edg;
} header;

/* The severity words, longest first where one begins another. */
static const struct {
  const char *word;
  cucore_diag_severity sev;
} severities[] = {
    {"catastrophic error", CUCORE_DIAG_FATAL},
    {"fatal error", CUCORE_DIAG_FATAL},
    {"internal error", CUCORE_DIAG_FATAL},
    {"command-line error", CUCORE_DIAG_ERROR},
    {"error", CUCORE_DIAG_ERROR},
    {"warning", CUCORE_DIAG_WARNING},
    {"remark", CUCORE_DIAG_REMARK},
    {"note", CUCORE_DIAG_NOTE},
    {"info", CUCORE_DIAG_INFO},
    {"fatal", CUCORE_DIAG_FATAL},
};

/* The severity word at s[0..n) (any case); its length, or 0. */
static size_t severity_at(const char *s, size_t n, cucore_diag_severity *sev) {
  for (size_t i = 0; i < sizeof severities / sizeof severities[0]; i++) {
    size_t k = strlen(severities[i].word);
    if (k <= n && strncasecmp(s, severities[i].word, k) == 0 &&
        (k == n || !isalnum((unsigned char)s[k]))) {
      *sev = severities[i].sev;
      return k;
    }
  }
  return 0;
}

/* Digits at s[*i..n) (at most 9) into *v; 1 when there were some. */
static int digits(const char *s, size_t n, size_t *i, int *v) {
  size_t start = *i;
  long long x = 0;
  while (*i < n && isdigit((unsigned char)s[*i]) && *i - start < 9) x = x * 10 + (s[(*i)++] - '0');
  if (*i == start || (*i < n && isdigit((unsigned char)s[*i]))) return 0;
  *v = (int)x;
  return 1;
}

/* `text` at s[*i..n): advances past it, 1; or 0. */
static int lit(const char *s, size_t n, size_t *i, const char *text) {
  size_t k = strlen(text);
  if (n - *i < k || memcmp(s + *i, text, k) != 0) return 0;
  *i += k;
  return 1;
}

static void skip_blanks(const char *s, size_t n, size_t *i) {
  while (*i < n && (s[*i] == ' ' || s[*i] == '\t')) (*i)++;
}

/* The message from s[i..n): leading blanks skipped. */
static span rest(const char *s, size_t n, size_t i) {
  skip_blanks(s, n, &i);
  return (span){s + i, n - i};
}

/* A severity word, blanks, ':' at s[*i..n); 1 with *sev and *i past the colon. */
static int severity_colon(const char *s, size_t n, size_t *i, cucore_diag_severity *sev) {
  size_t k = severity_at(s + *i, n - *i, sev);
  if (!k) return 0;
  size_t j = *i + k;
  skip_blanks(s, n, &j);
  if (j >= n || s[j] != ':') return 0;
  *i = j + 1;
  return 1;
}

/* NVRTC: FILE(LINE): SEVERITY[ #N[-D]]: MESSAGE; FILE may hold parentheses. */
static int edg_header(const char *s, size_t n, header *h) {
  for (size_t open = 1; open < n; open++) {
    size_t i = open + 1;
    if (s[open] != '(' || !digits(s, n, &i, &h->line) || !lit(s, n, &i, "): ")) continue;
    size_t k = severity_at(s + i, n - i, &h->sev);
    if (!k) continue;
    i += k;
    if (lit(s, n, &i, " #")) {
      if (!digits(s, n, &i, &h->number)) continue;
      if (i + 1 < n && s[i] == '-' && isalpha((unsigned char)s[i + 1])) i += 2;
    }
    if (!lit(s, n, &i, ":")) continue;
    h->file = (span){s, open};
    h->msg = rest(s, n, i);
    h->edg = 1;
    return 1;
  }
  return 0;
}

/* ptxas: `ptxas NAME, line N; SEVERITY : MESSAGE` or `ptxas SEVERITY : MESSAGE`. */
static int ptxas_header(const char *s, size_t n, header *h) {
  size_t i = 0;
  if (!lit(s, n, &i, "ptxas ")) return 0;
  size_t start = i;
  if (severity_colon(s, n, &i, &h->sev)) {
    h->msg = rest(s, n, i);
    return 1;
  }
  for (size_t at = start; at + 7 < n; at++) {
    i = at;
    if (!lit(s, n, &i, ", line ") || !digits(s, n, &i, &h->line) || !lit(s, n, &i, "; ")) continue;
    if (!severity_colon(s, n, &i, &h->sev)) continue;
    h->file = (span){s + start, at - start};
    h->msg = rest(s, n, i);
    return 1;
  }
  return 0;
}

/* libNVVM: `NAME (LINE, COL): MESSAGE`, an error. */
static int nvvm_header(const char *s, size_t n, header *h) {
  for (size_t at = 1; at + 1 < n; at++) {
    size_t i = at;
    if (!lit(s, n, &i, " (") || !digits(s, n, &i, &h->line) || !lit(s, n, &i, ", ") ||
        !digits(s, n, &i, &h->column) || !lit(s, n, &i, "): "))
      continue;
    h->sev = CUCORE_DIAG_ERROR;
    h->file = (span){s, at};
    h->msg = rest(s, n, i);
    return 1;
  }
  return 0;
}

/* A tool's name where a file would be (`nvrtc: error: ...`): no file. */
static int is_tool(span f) {
  static const char *const tools[] = {"nvrtc", "nvJitLink", "nvjitlink", "nvvm",  "libnvvm",
                                      "ptxas", "nvlink",    "cicc",      "cucore"};
  for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++)
    if (strlen(tools[i]) == f.n && memcmp(tools[i], f.p, f.n) == 0) return 1;
  return 0;
}

/* `FILE:LINE:COL: SEVERITY: MESSAGE`, `FILE:LINE: SEVERITY: ...`, `FILE: SEVERITY: ...`. */
static int colon_header(const char *s, size_t n, header *h) {
  for (size_t at = 1; at < n; at++) {
    if (s[at] != ':') continue;
    size_t i = at + 1;
    h->line = h->column = 0;
    if (digits(s, n, &i, &h->line) && lit(s, n, &i, ":")) {
      size_t j = i;
      if (digits(s, n, &j, &h->column) && lit(s, n, &j, ":")) i = j;
    }
    if (!lit(s, n, &i, " ") || !severity_colon(s, n, &i, &h->sev)) continue;
    h->file = (span){s, at};
    if (!h->line && is_tool(h->file)) h->file = (span){s, 0};
    h->msg = rest(s, n, i);
    return 1;
  }
  return 0;
}

/* `SEVERITY : MESSAGE` (nvJitLink, "Remark: ...") or nvJitLink's `ERROR N: MESSAGE`. */
static int bare_header(const char *s, size_t n, header *h) {
  size_t i = 0;
  if (severity_colon(s, n, &i, &h->sev)) {
    h->msg = rest(s, n, i);
    return 1;
  }
  i = 0;
  if (!lit(s, n, &i, "ERROR ")) return 0;
  size_t name = i;
  while (i < n && (isalnum((unsigned char)s[i]) || s[i] == '_')) i++;
  if (i == name || !lit(s, n, &i, ": ")) return 0;
  size_t j = name;
  if (!digits(s, n, &j, &h->number) || j != i - 2) h->number = 0;
  h->sev = CUCORE_DIAG_ERROR;
  h->msg = rest(s, n, i);
  return 1;
}

static int parse_header(const char *s, size_t n, header *h) {
  memset(h, 0, sizeof *h);
  if (ptxas_header(s, n, h)) return 1;
  memset(h, 0, sizeof *h);
  if (edg_header(s, n, h)) return 1;
  memset(h, 0, sizeof *h);
  if (nvvm_header(s, n, h)) return 1;
  memset(h, 0, sizeof *h);
  if (colon_header(s, n, h)) return 1;
  memset(h, 0, sizeof *h);
  return bare_header(s, n, h);
}

/* ---- records ------------------------------------------------------------------------------- */

/* The record being read: its header and the span of its lines in the log. */
typedef struct open_rec {
  int open;
  header h;
  const char *text, *text_end;
  const char *prev; /* the record's last line so far (a caret needs a source line above) */
} open_rec;

static void trim_end(span *s) {
  while (s->n && isspace((unsigned char)s->p[s->n - 1])) s->n--;
}

/* A line that is only blanks and one caret: the caret's offset, or -1. */
static long caret_offset(const char *s, size_t n) {
  long at = -1;
  for (size_t i = 0; i < n; i++) {
    if (s[i] == '^' && at < 0)
      at = (long)i;
    else if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
      return -1;
  }
  return at;
}

static char *copy_span(span s) {
  char *c = cc_raw_malloc(s.n + 1);
  if (c) {
    if (s.n) memcpy(c, s.p, s.n); /* an empty span may have no pointer */
    c[s.n] = '\0';
  }
  return c;
}

/* Appends the open record to `out`; -1 when out of memory. */
static int close_rec(open_rec *r, cc_diag_list *out) {
  if (!r->open) return 0;
  r->open = 0;
  cucore_diagnostic *v = cc_grow(out->v, &out->cap, out->n + 1, sizeof *v, "the diagnostics");
  if (!v) return -1;
  out->v = v;
  span file = r->h.file, msg = r->h.msg, text = {r->text, (size_t)(r->text_end - r->text)};
  trim_end(&file);
  trim_end(&msg);
  trim_end(&text);
  cucore_diagnostic d = {r->h.sev,    copy_span(file), r->h.line,      r->h.column,
                         r->h.number, copy_span(msg),  copy_span(text)};
  if (!d.file || !d.message || !d.text) {
    free((char *)d.file);
    free((char *)d.message);
    free((char *)d.text);
    cc_fail(CUCORE_HOST_OUT_OF_MEMORY, "out of host memory reading a compile log");
    return -1;
  }
  out->v[out->n++] = d;
  return 0;
}

/* A continuation line of the open record: the caret gives NVRTC's column. */
static void continue_rec(open_rec *r, const char *line, size_t n) {
  long caret = caret_offset(line, n);
  if (r->h.edg && !r->h.column && caret >= 0 && r->prev)
    r->h.column = caret >= 2 ? (int)(caret - 1) : (int)caret + 1;
  r->prev = line;
  r->text_end = line + n;
}

/* One line of the log into the records. */
static int take_line(open_rec *r, const char *line, size_t n, cc_diag_list *out) {
  size_t b = 0;
  skip_blanks(line, n, &b);
  if (b == n || (b + 1 == n && line[b] == '\r')) return close_rec(r, out); /* blank */
  /* NVRTC indents what belongs to a record: an echoed source line that reads like a header
   * (a string holding "x(1): error: ...") is still the record's. */
  int indented = line[0] == ' ' || line[0] == '\t';
  header h;
  int is_header = !(r->open && r->h.edg && indented) && parse_header(line, n, &h);
  if (!is_header && r->open && r->h.sev != CUCORE_DIAG_TEXT) {
    continue_rec(r, line, n);
    return 0;
  }
  if (close_rec(r, out) != 0) return -1;
  if (!is_header) {
    memset(&h, 0, sizeof h);
    h.msg = (span){line, n};
  }
  *r = (open_rec){1, h, line, line + n, NULL};
  if (h.sev == CUCORE_DIAG_TEXT) return close_rec(r, out);
  r->prev = line;
  return 0;
}

void cc_diag_free(cc_diag_list *l) {
  for (size_t i = 0; i < l->n; i++) {
    free((char *)l->v[i].file);
    free((char *)l->v[i].message);
    free((char *)l->v[i].text);
  }
  free(l->v);
  memset(l, 0, sizeof *l);
}

int cc_diag_parse(const char *log, cc_diag_list *out) {
  cc_diag_free(out);
  open_rec r = {0};
  for (const char *p = log; p && *p;) {
    const char *eol = strchr(p, '\n');
    size_t n = eol ? (size_t)(eol - p) : strlen(p);
    if (n && p[n - 1] == '\r') n--;
    if (take_line(&r, p, n, out) != 0) goto fail;
    p = eol ? eol + 1 : p + n;
    if (!eol) break;
  }
  if (close_rec(&r, out) == 0) return 0;
fail:
  cc_diag_free(out);
  return -1;
}
