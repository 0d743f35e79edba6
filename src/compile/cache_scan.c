/*
 * cache_scan.c -- the include scanner behind the compile cache's key: which files a CUDA C++
 * text names, read as the preprocessor reads it. The text is first brought to the view of
 * translation phases 1-3, as NVRTC 13's front end does them (each rule checked against it):
 *   phase 1  `??=` is `#` (trigraphs are on for C++14 and older). A `??/` before a newline
 *            joins the lines only in those dialects, so the scanner cannot tell: unresolvable.
 *   phase 2  a backslash right before a newline (LF or CR LF) joins the lines; one followed
 *            by blanks does not. A lone CR is a blank.
 *   phase 3  a comment (`//` or slash-star) is one space, even across lines (but a `#` after
 *            one that held a newline starts a directive, as after a newline); string and
 *            character literals stay whole (pp-numbers with digit separators too, so `1'000`
 *            opens no literal); a raw string becomes `""` (its lines are no directives);
 *            the digraph `%:` is `#`.
 * Then every line of the view is read: `#include` and `#include_next` with "name", <name> or
 * anything else (a macro or a computed name: unresolvable), and `__has_include` and
 * `__has_include_next` with the same three forms. The scanner never misses an include the
 * preprocessor sees; it may see a few the preprocessor skips (in `#if 0`), which only costs
 * a cache entry.
 */
#define _GNU_SOURCE
#include "compile/cache.h"

#include <stdlib.h>
#include <string.h>

/* ---- phases 1 and 2 ------------------------------------------------------------------------- */

/* The width of the newline at s[i] (LF 1, CR LF 2), or 0. */
static size_t newline_at(const char *s, size_t n, size_t i) {
  if (i < n && s[i] == '\n') return 1;
  if (i + 1 < n && s[i] == '\r' && s[i + 1] == '\n') return 2;
  return 0;
}

/* Trigraph `??=` to `#`, line splices removed; *trigraph_splice set on `??/` + newline.
 * Returns the length written to `out` (at most n). */
static size_t phases_1_2(const char *s, size_t n, char *out, int *trigraph_splice) {
  size_t o = 0;
  for (size_t i = 0; i < n;) {
    if (s[i] == '?' && i + 2 < n && s[i + 1] == '?') {
      if (s[i + 2] == '=') {
        out[o++] = '#';
        i += 3;
        continue;
      }
      if (s[i + 2] == '/' && newline_at(s, n, i + 3)) *trigraph_splice = 1;
    }
    size_t nl = s[i] == '\\' ? newline_at(s, n, i + 1) : 0;
    if (nl) {
      i += 1 + nl;
      continue;
    }
    out[o++] = s[i++];
  }
  return o;
}

/* ---- phase 3 -------------------------------------------------------------------------------- */

static int is_digit(char c) { return c >= '0' && c <= '9'; }

static int ident_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '_' || c == '$' ||
         (unsigned char)c >= 0x80;
}

/* In the view, a comment that held a newline is this byte: a blank that, like a newline, lets
 * a `#` after it start a directive (NVRTC takes `int x;`, such a comment, then `#include "a.h"`
 * on the comment's last line as an include). The source never holds the byte: NVRTC reads the
 * source up to its first NUL, and so does the scan. */
#define COMMENT_NEWLINE '\0'

static int is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\f' || c == '\v' || c == '\r' || c == COMMENT_NEWLINE;
}

/* The end of the "..." or '...' literal opening at b[i] (it ends at its quote or, unclosed,
 * before the newline). */
static size_t literal_end(const char *b, size_t n, size_t i) {
  char q = b[i];
  size_t j = i + 1;
  while (j < n && b[j] != q && b[j] != '\n')
    j += (b[j] == '\\' && j + 1 < n && b[j + 1] != '\n') ? 2 : 1;
  return j < n && b[j] == q ? j + 1 : j;
}

/* The end of the raw string whose quote is b[i] (after R, u8R, uR, UR or LR), or 0 when its
 * delimiter is malformed (then it is an ordinary string). Unclosed, it runs to the end. */
static size_t raw_end(const char *b, size_t n, size_t i) {
  size_t d = i + 1;
  while (d < n && d - i - 1 <= 16 && b[d] != '(') {
    if (b[d] == ')' || b[d] == '\\' || b[d] == '\n' || is_blank(b[d])) return 0;
    d++;
  }
  if (d >= n || b[d] != '(') return 0;
  size_t dlen = d - i - 1;
  for (size_t j = d + 1; j + dlen + 1 < n; j++)
    if (b[j] == ')' && memcmp(b + j + 1, b + i + 1, dlen) == 0 && b[j + dlen + 1] == '"')
      return j + dlen + 2;
  return n;
}

static int is_raw_prefix(const char *p, size_t len) {
  static const char *const prefixes[] = {"R", "u8R", "uR", "UR", "LR"};
  for (size_t k = 0; k < CC_ARRAY_LEN(prefixes); k++)
    if (strlen(prefixes[k]) == len && memcmp(p, prefixes[k], len) == 0) return 1;
  return 0;
}

/* The end of the pp-number at b[i] (digits, letters, `.`, e+ p- and `'` digit separators). */
static size_t ppnumber_end(const char *b, size_t n, size_t i) {
  size_t j = i + 1;
  while (j < n) {
    if ((b[j] == '+' || b[j] == '-') && b[j - 1] && strchr("eEpP", b[j - 1]))
      j++;
    else if (b[j] == '\'' && j + 1 < n && ident_char(b[j + 1]))
      j += 2;
    else if (ident_char(b[j]) || b[j] == '.')
      j++;
    else
      break;
  }
  return j;
}

/* One token of phase 3 at b[i]: writes its view to v[*o] and returns where the next starts. */
static size_t phase_3_token(const char *b, size_t n, size_t i, char *v, size_t *o) {
  if (b[i] == '/' && i + 1 < n && (b[i + 1] == '/' || b[i + 1] == '*')) {
    const char *end = b[i + 1] == '/' ? memchr(b + i, '\n', n - i)
                                      : memmem(b + i + 2, n - i - 2, "*/", 2);
    size_t stop = end ? (size_t)(end - b) : n;
    v[(*o)++] = b[i + 1] == '*' && memchr(b + i, '\n', stop - i) ? COMMENT_NEWLINE : ' ';
    if (!end) return n;
    return (size_t)(end - b) + (b[i + 1] == '*' ? 2 : 0);
  }
  size_t e = i + 1;
  if (b[i] == '"' || b[i] == '\'') {
    e = literal_end(b, n, i);
  } else if (ident_char(b[i]) && !is_digit(b[i])) {
    while (e < n && ident_char(b[e])) e++;
    size_t r = e < n && b[e] == '"' && is_raw_prefix(b + i, e - i) ? raw_end(b, n, e) : 0;
    if (r) {
      memcpy(v + *o, "\"\"", 2);
      *o += 2;
      return r;
    }
  } else if (is_digit(b[i]) || (b[i] == '.' && i + 1 < n && is_digit(b[i + 1]))) {
    e = ppnumber_end(b, n, i);
  } else if (b[i] == '%' && i + 1 < n && b[i + 1] == ':') {
    v[(*o)++] = '#';
    return i + 2;
  }
  memcpy(v + *o, b + i, e - i);
  *o += e - i;
  return e;
}

/* ---- the directives ------------------------------------------------------------------------- */

static const char *skip_blanks(const char *p, const char *end) {
  while (p < end && is_blank(*p)) p++;
  return p;
}

/* Reports the file named at p ("name", <name>, or anything else) by `how`. */
static int report_name(const char *how, const char *p, const char *eol, char close_paren,
                       cc_include_fn fn, void *ctx) {
  cc_include_ref ref = {CC_INCLUDE_UNKNOWN, how, p, 0};
  const char *close = NULL;
  if (p < eol && (*p == '"' || *p == '<'))
    close = memchr(p + 1, *p == '"' ? '"' : '>', (size_t)(eol - p - 1));
  /* A `#` in a quoted name may be a `??=` that only C++14 and older read as `#`, and a `??` may
   * begin a trigraph: the file's name depends on the dialect. */
  size_t len = close ? (size_t)(close - p - 1) : 0;
  if (close && *p == '"' && (memchr(p + 1, '#', len) || memmem(p + 1, len, "??", 2))) close = NULL;
  if (close) {
    ref.kind = *p == '"' ? CC_INCLUDE_QUOTED : CC_INCLUDE_ANGLE;
    ref.text = p + 1;
    ref.len = len;
  } else {
    const char *stop = close_paren ? memchr(p, close_paren, (size_t)(eol - p)) : NULL;
    ref.len = (size_t)((stop ? stop : eol) - p);
    if (ref.len > 80) ref.len = 80;
  }
  return fn(ctx, &ref);
}

/* 1 when `word` (len bytes at p) is a whole identifier there. */
static int word_at(const char *p, const char *line, const char *eol, const char *word, size_t len) {
  return (size_t)(eol - p) >= len && memcmp(p, word, len) == 0 &&
         (p == line || !ident_char(p[-1])) && (p + len == eol || !ident_char(p[len]));
}

/* `__has_include` and `__has_include_next` in a line. In a #define, one not called at once
 * may be called with any name later: unresolvable. */
static int scan_has_include(const char *line, const char *eol, int in_define, cc_include_fn fn,
                            void *ctx) {
  for (const char *h = line; h < eol;) {
    const char *hit = memmem(h, (size_t)(eol - h), "__has_include", 13);
    if (!hit) break;
    h = hit + 13;
    int next = word_at(hit, line, eol, "__has_include_next", 18);
    if (!next && !word_at(hit, line, eol, "__has_include", 13)) continue;
    const char *how = next ? "__has_include_next" : "__has_include";
    const char *r = skip_blanks(hit + strlen(how), eol);
    int rc = 0;
    if (r < eol && *r == '(')
      rc = report_name(how, skip_blanks(r + 1, eol), eol, ')', fn, ctx);
    else if (in_define)
      rc = report_name(how, r, eol, 0, fn, ctx);
    if (rc) return rc;
  }
  return 0;
}

/* The directive starting at p, if it is one; *in_define set for a #define. */
static int directive_at(const char *p, const char *eol, int *in_define, cc_include_fn fn,
                        void *ctx) {
  const char *q = skip_blanks(p, eol);
  if (q >= eol || *q != '#') return 0;
  q = skip_blanks(q + 1, eol);
  size_t word = 0;
  while (q + word < eol && ident_char(q[word])) word++;
  if (word == 6 && memcmp(q, "define", 6) == 0) *in_define = 1;
  const char *how = word == 7 && memcmp(q, "include", 7) == 0          ? "#include"
                    : word == 12 && memcmp(q, "include_next", 12) == 0 ? "#include_next"
                                                                       : NULL;
  return how ? report_name(how, skip_blanks(q + word, eol), eol, 0, fn, ctx) : 0;
}

/* A line of the view: a directive at its start or after a comment that held a newline, and
 * every __has_include in it. */
static int scan_line(const char *line, const char *eol, cc_include_fn fn, void *ctx) {
  int in_define = 0, rc = directive_at(line, eol, &in_define, fn, ctx);
  for (const char *m = memchr(line, COMMENT_NEWLINE, (size_t)(eol - line)); !rc && m;
       m = memchr(m + 1, COMMENT_NEWLINE, (size_t)(eol - m - 1)))
    rc = directive_at(m + 1, eol, &in_define, fn, ctx);
  return rc ? rc : scan_has_include(line, eol, in_define, fn, ctx);
}

int cc_cache_scan_includes(const char *text, size_t n, cc_include_fn fn, void *ctx) {
  char *b = cc_raw_malloc(n + 1), *v = cc_raw_malloc(n + 1);
  if (!b || !v) {
    free(b);
    free(v);
    return -1;
  }
  n = strnlen(text, n); /* NVRTC reads up to the first NUL */
  int trigraph_splice = 0, rc = 0;
  size_t m = phases_1_2(text, n, b, &trigraph_splice), o = 0;
  if (trigraph_splice) {
    cc_include_ref ref = {CC_INCLUDE_UNKNOWN, "a `?\?/` trigraph before a newline", "", 0};
    rc = fn(ctx, &ref);
  }
  for (size_t i = 0; i < m;) i = phase_3_token(b, m, i, v, &o);
  for (const char *p = v, *end = v + o; !rc && p < end;) {
    const char *eol = memchr(p, '\n', (size_t)(end - p));
    if (!eol) eol = end;
    rc = scan_line(p, eol, fn, ctx);
    p = eol + 1;
  }
  free(b);
  free(v);
  return 0;
}
