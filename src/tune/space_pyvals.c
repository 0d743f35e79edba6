/*
 * space_pyvals.c -- the values of a TuningSchema T1 parameter, which T1 files write as Python
 * and Kernel Tuner eval()s: a list literal ("[1, 2.5, 'float', True]"), "range(A[, B[, C]])",
 * "list(range(...))" and comprehensions "[EXPR for N in ITER [if COND]]" over a range or a list
 * (as "[2**i for i in range(6)]" and "[16*i for i in range(1,9)]" in Kernel Tuner's own T1
 * files). Read here, never run: range arguments, EXPR and COND are cucore expressions
 * (tune/expr.h), evaluated for each value of N.
 */
#include "tune/space_file.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CC_PY_VALUES_MAX 16384 /* values one text may make */

/* ---- the text ---------------------------------------------------------------------------- */

typedef struct pcur {
  const char *p, *end;
  char *why; /* the reason of a failure */
  size_t cap;
} pcur;

static int fail(pcur *c, const char *what) {
  snprintf(c->why, c->cap, "%s", what);
  return -1;
}

/* Values: texts (owned) and what they are (strings point into their text). */
typedef struct pylist {
  char **text;
  cc_tval *val;
  size_t n, cap_text, cap_val;
} pylist;

static void pylist_free(pylist *l) {
  for (size_t i = 0; i < l->n; i++) free(l->text[i]);
  free(l->text);
  free(l->val);
  memset(l, 0, sizeof *l);
}

/* Appends t[0..len) with its value v (a string's pointer is set to the copy). */
static int push(pylist *l, const char *t, size_t len, cc_tval v, pcur *c) {
  if (l->n >= CC_PY_VALUES_MAX) return fail(c, "more than 16384 values");
  char **tx = cc_grow(l->text, &l->cap_text, l->n + 1, sizeof *tx, "T1 values");
  if (tx) l->text = tx;
  cc_tval *vs = tx ? cc_grow(l->val, &l->cap_val, l->n + 1, sizeof *vs, "T1 values") : NULL;
  if (vs) l->val = vs;
  char *copy = vs ? cc_raw_malloc(len + 1) : NULL;
  if (!copy) return fail(c, "out of memory");
  memcpy(copy, t, len);
  copy[len] = 0;
  if (v.kind == CC_TV_STR) v = cc_tval_str(copy, len);
  l->text[l->n] = copy;
  l->val[l->n++] = v;
  return 0;
}

/* A real as Python's repr writes it: the shortest text that reads back, with ".0" when it
 * would look like an integer. */
static void real_text(double d, char *buf, size_t cap) {
  if (isnan(d) || isinf(d)) {
    snprintf(buf, cap, "%s", isnan(d) ? "nan" : d > 0 ? "inf" : "-inf");
    return;
  }
  int p = 1; /* significant digits: 17 always read back */
  for (;; p++) {
    snprintf(buf, cap, "%.*e", p - 1, d);
    if (p == 17 || strtod(buf, NULL) == d) break;
  }
  int exp10 = d == 0 ? 0 : (int)floor(log10(fabs(d)));
  if (exp10 >= -4 && exp10 < 16) {
    snprintf(buf, cap, "%.*f", p - 1 - exp10 > 0 ? p - 1 - exp10 : 0, d);
    if (!strchr(buf, '.')) strncat(buf, ".0", cap - strlen(buf) - 1);
  }
}

static int push_value(pylist *l, cc_tval v, pcur *c) {
  char buf[64];
  if (v.kind == CC_TV_STR) return push(l, v.s, v.n, v, c);
  if (v.kind == CC_TV_BOOL) snprintf(buf, sizeof buf, "%s", v.i ? "true" : "false");
  if (v.kind == CC_TV_INT) snprintf(buf, sizeof buf, "%lld", (long long)v.i);
  if (v.kind == CC_TV_REAL) real_text(v.d, buf, sizeof buf);
  return push(l, buf, strlen(buf), v, c);
}

static void skip(pcur *c) {
  while (c->p < c->end && isspace((unsigned char)*c->p)) c->p++;
}

static int word_char(char ch) { return isalnum((unsigned char)ch) || ch == '_'; }

/* Takes `w` (after blanks) when it is next; a word must end there. */
static int take(pcur *c, const char *w) {
  skip(c);
  size_t n = strlen(w);
  if ((size_t)(c->end - c->p) < n || memcmp(c->p, w, n) != 0) return 0;
  if (word_char(w[n - 1]) && c->p + n < c->end && word_char(c->p[n])) return 0;
  c->p += n;
  return 1;
}

/* Past a quoted string starting at p (its quote), or NULL when it does not end. */
static const char *past_string(const char *p, const char *end) {
  char q = *p++;
  for (; p < end && *p != q; p++)
    if (*p == '\\' && p + 1 < end) p++;
  return p < end ? p + 1 : NULL;
}

/* The first `kw` (a word, or a `,`) in [p, end) outside strings and brackets, or NULL. */
static const char *find_kw(const char *p, const char *end, const char *kw) {
  size_t n = strlen(kw);
  int depth = 0, w = word_char(kw[0]);
  for (const char *q = p; q && q < end;) {
    if (*q == '\'' || *q == '"') {
      q = past_string(q, end);
      continue;
    }
    depth += (*q == '(' || *q == '[') - (*q == ')' || *q == ']');
    if (depth == 0 && (size_t)(end - q) >= n && memcmp(q, kw, n) == 0 &&
        (!w || ((q == p || !word_char(q[-1])) && (q + n == end || !word_char(q[n])))))
      return q;
    q++;
  }
  return NULL;
}

/* The bracket closing the one before p (p just after it), or NULL. */
static const char *closing(const char *p, const char *end) {
  int depth = 1;
  while (p && p < end) {
    if (*p == '\'' || *p == '"') {
      p = past_string(p, end);
      continue;
    }
    depth += (*p == '(' || *p == '[') - (*p == ')' || *p == ']');
    if (depth == 0) return p;
    p++;
  }
  return NULL;
}

static int values(pcur *c, pylist *out);

/* ---- expressions over the loop's name ---------------------------------------------------- */

typedef struct loopvar {
  const char *name;
  size_t len;
} loopvar;

static int lookup(void *ctx, const char *name, size_t len) {
  const loopvar *v = ctx;
  return v && v->len == len && memcmp(v->name, name, len) == 0 ? 0 : -1;
}

/* Parses [p, end) as an expression over `var` (NULL: no names); `what` names it in messages. */
static int parse_expr(pcur *c, const char *p, const char *end, loopvar *var, cc_expr *e,
                      const char *what) {
  char *t = cc_raw_malloc((size_t)(end - p) + 1), *why = NULL;
  if (!t) return fail(c, "out of memory");
  memcpy(t, p, (size_t)(end - p));
  t[end - p] = 0;
  int r = cc_expr_parse(t, lookup, var, e, &why);
  if (r < 0) snprintf(c->why, c->cap, "%s `%s`: %s", what, t, why ? why : "out of memory");
  free(t);
  free(why);
  return r;
}

/* Evaluates e with the loop's value v; -1 with the reason on an error. */
static int eval(pcur *c, const cc_expr *e, cc_tval v, cc_tval *out, const char *what) {
  char *why = NULL;
  if (cc_expr_eval(e, &v, out, &why) == 0) return 0;
  snprintf(c->why, c->cap, "%s `%s`: %s", what, e->text, why ? why : "out of memory");
  free(why);
  return -1;
}

/* ---- range(A[, B[, C]]) ------------------------------------------------------------------ */

/* The integer argument [p, end) of range(). */
static int range_arg(pcur *c, const char *p, const char *end, long long *out) {
  cc_expr e;
  cc_tval v;
  if (parse_expr(c, p, end, NULL, &e, "a range() argument") < 0) return -1;
  int r = eval(c, &e, cc_tval_int(0), &v, "a range() argument");
  cc_expr_free(&e);
  if (r == 0 && !cc_tval_is_integral(v)) r = fail(c, "a range() argument is not an integer");
  *out = v.i;
  return r;
}

/* After "range(": the arguments up to the closing parenthesis, and the values. */
static int range_values(pcur *c, pylist *out) {
  const char *close = closing(c->p, c->end), *p = c->p;
  if (!close) return fail(c, "range( is not closed");
  long long arg[3] = {0, 0, 1};
  int n = 0;
  for (const char *comma; n < 4 && p <= close; p = comma + 1, n++) {
    comma = find_kw(p, close, ",");
    if (!comma) comma = close;
    if (n < 3 && range_arg(c, p, comma, &arg[n]) < 0) return -1;
  }
  if (n < 1 || n > 3) return fail(c, "range() takes 1 to 3 arguments");
  if (n == 1) arg[1] = arg[0], arg[0] = 0;
  long long a = arg[0], b = arg[1], s = n == 3 ? arg[2] : 1;
  if (s == 0) return fail(c, "range() step is zero");
  __int128 span = s > 0 ? (__int128)b - a : (__int128)a - b, step = s > 0 ? s : -(__int128)s;
  __int128 count = span > 0 ? (span + step - 1) / step : 0;
  if (count > CC_PY_VALUES_MAX) return fail(c, "range() makes more than 16384 values");
  for (long long k = 0; k < (long long)count; k++)
    if (push_value(out, cc_tval_int((long long)(a + (__int128)k * s)), c) < 0) return -1;
  c->p = close + 1;
  return 0;
}

/* ---- list literals ----------------------------------------------------------------------- */

/* A quoted string (c->p at its quote) with the escapes \\ \' \". */
static int string_item(pcur *c, pylist *out) {
  const char *end = past_string(c->p, c->end);
  if (!end) return fail(c, "a string is not closed");
  char *t = cc_raw_malloc((size_t)(end - c->p)), *o = t;
  if (!t) return fail(c, "out of memory");
  int r = 0;
  for (const char *p = c->p + 1; p < end - 1 && r == 0; p++) {
    if (*p == '\\' && !strchr("\\'\"", p[1])) r = fail(c, "an escape other than \\\\, \\' or \\\"");
    if (*p == '\\') p++;
    *o++ = *p;
  }
  if (r == 0) r = push(out, t, (size_t)(o - t), cc_tval_str(NULL, 0), c);
  free(t);
  c->p = end;
  return r;
}

/* A number as Python writes one: [+-]digits[.digits][e[+-]digits] (or .digits). */
static int number_item(pcur *c, pylist *out) {
  const char *p = c->p, *d0;
  if (*p == '+' || *p == '-') p++;
  d0 = p;
  while (p < c->end && isdigit((unsigned char)*p)) p++;
  int real = p < c->end && *p == '.';
  if (real)
    for (p++; p < c->end && isdigit((unsigned char)*p);) p++;
  if (p == d0 || (real && p == d0 + 1))
    return fail(c, "an item that is not a number, a string, "
                   "True or False");
  if (p < c->end && (*p == 'e' || *p == 'E')) {
    const char *e = p + 1 + (p + 1 < c->end && (p[1] == '+' || p[1] == '-'));
    if (e >= c->end || !isdigit((unsigned char)*e)) return fail(c, "a malformed exponent");
    for (p = e; p < c->end && isdigit((unsigned char)*p);) p++;
    real = 1;
  }
  char t[64];
  if ((size_t)(p - c->p) >= sizeof t) return fail(c, "a number longer than 63 characters");
  snprintf(t, sizeof t, "%.*s", (int)(p - c->p), c->p);
  errno = 0;
  cc_tval v = real ? cc_tval_real(strtod(t, NULL)) : cc_tval_int(strtoll(t, NULL, 10));
  if (errno) return fail(c, "a number out of range");
  c->p = p;
  return push(out, t, strlen(t), v, c);
}

static int item(pcur *c, pylist *out) {
  if (*c->p == '\'' || *c->p == '"') return string_item(c, out);
  if (take(c, "True")) return push(out, "true", 4, cc_tval_bool(1), c);
  if (take(c, "False")) return push(out, "false", 5, cc_tval_bool(0), c);
  return number_item(c, out);
}

/* The items of [ ... ] up to `close` (a trailing comma allowed). */
static int list_items(pcur *c, const char *close, pylist *out) {
  for (;;) {
    skip(c);
    if (c->p >= close) return 0;
    if (item(c, out) < 0) return -1;
    skip(c);
    if (c->p < close && *c->p++ != ',') return fail(c, "expected `,` between the list's items");
  }
}

/* ---- comprehensions ---------------------------------------------------------------------- */

/* Each value of `it` for which cond (may be NULL) holds, through e. */
static int comprehend(pcur *c, const pylist *it, const cc_expr *e, const cc_expr *cond,
                      pylist *out) {
  for (size_t i = 0; i < it->n; i++) {
    cc_tval r;
    if (cond && eval(c, cond, it->val[i], &r, "the condition") < 0) return -1;
    if (cond && !cc_tval_truthy(r)) continue;
    if (eval(c, e, it->val[i], &r, "the expression") < 0 || push_value(out, r, c) < 0) return -1;
  }
  return 0;
}

/* "EXPR for NAME in ITER [if COND]" in [c->p, close), `at_for` where "for" is. */
static int comprehension(pcur *c, const char *at_for, const char *close, pylist *out) {
  pcur d = {at_for + 3, close, c->why, c->cap};
  skip(&d);
  loopvar var = {d.p, 0};
  while (d.p + var.len < close && word_char(d.p[var.len])) var.len++;
  d.p += var.len;
  if (var.len == 0 || isdigit((unsigned char)*var.name) || !take(&d, "in"))
    return fail(c, "expected `for NAME in` in the comprehension");
  const char *at_if = find_kw(d.p, close, "if");
  pylist it = {0};
  pcur r = {d.p, at_if ? at_if : close, c->why, c->cap};
  cc_expr e = {0}, cond = {0};
  int rc = values(&r, &it);
  if (rc == 0 && (skip(&r), r.p != r.end)) rc = fail(c, "text after the comprehension's range");
  if (rc == 0) rc = parse_expr(c, c->p, at_for, &var, &e, "the expression");
  if (rc == 0 && at_if) rc = parse_expr(c, at_if + 2, close, &var, &cond, "the condition");
  if (rc == 0) rc = comprehend(c, &it, &e, at_if ? &cond : NULL, out);
  cc_expr_free(&e);
  cc_expr_free(&cond);
  pylist_free(&it);
  return rc;
}

/* ---- a whole text ------------------------------------------------------------------------ */

static int values(pcur *c, pylist *out) {
  if (take(c, "list")) {
    if (!take(c, "(") || values(c, out) < 0) return c->why[0] ? -1 : fail(c, "expected list(...)");
    return take(c, ")") ? 0 : fail(c, "list( is not closed");
  }
  if (take(c, "range")) return take(c, "(") ? range_values(c, out) : fail(c, "expected range(");
  if (!take(c, "["))
    return fail(c, "expected a list [...], range(...), list(range(...)) or a comprehension "
                   "[EXPR for N in range(...)]");
  const char *close = closing(c->p, c->end);
  if (!close) return fail(c, "`[` is not closed");
  const char *at_for = find_kw(c->p, close, "for");
  int r = at_for ? comprehension(c, at_for, close, out) : list_items(c, close, out);
  c->p = close + 1;
  return r;
}

int cc_py_values(const char *text, char ***vals, size_t *n, char *why, size_t cap) {
  pcur c = {text, text + strlen(text), why, cap};
  pylist l = {0};
  why[0] = 0;
  int r = values(&c, &l);
  if (r == 0 && (skip(&c), c.p != c.end)) r = fail(&c, "text after the values");
  if (r < 0) {
    pylist_free(&l);
    return -1;
  }
  free(l.val);
  *vals = l.text;
  *n = l.n;
  return 0;
}

void cc_py_values_free(char **vals, size_t n) {
  for (size_t i = 0; i < n; i++) free(vals[i]);
  free(vals);
}
