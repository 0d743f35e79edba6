/*
 * space_parse.c -- the space's texts: a parameter written as "NAME=V1,V2,LO..HI:STEP" and a
 * slot's comma-separated expressions (space_kinds.c resolves AUTO parameters to a kind).
 */
#include "tune/space.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CC_TUNE_RANGE_MAX 65536 /* values one range may make */

static const int SLOT_MAX[CC_TUNE_SLOTS] = {
    3, 3, 1, 3, CC_TUNE_MAX_DIV, CC_TUNE_MAX_DIV, CC_TUNE_MAX_DIV};

/* Splits `text` at commas outside parentheses: starts and lengths of at most `max` parts.
 * Returns the number of parts, or -1 when there are more. */
static int split_top(const char *text, const char **start, size_t *len, int max) {
  int n = 0, depth = 0;
  const char *from = text;
  for (const char *p = text;; p++) {
    if (*p == '(') depth++;
    if (*p == ')' && depth > 0) depth--;
    if (*p == 0 || (*p == ',' && depth == 0)) {
      if (n == max) return -1;
      start[n] = from;
      len[n++] = (size_t)(p - from);
      from = p + 1;
    }
    if (*p == 0) return n;
  }
}

static cucore_status parse_part(cucore_tune_space *s, cucore_tune_slot slot, const char *text,
                                const char *part, size_t len, cc_expr *out) {
  char *buf = cc_malloc(len + 1, "an expression"), *why = NULL;
  if (!buf) return CUCORE_HOST_OUT_OF_MEMORY;
  memcpy(buf, part, len);
  buf[len] = 0;
  cucore_status st = CUCORE_OK;
  static const char *const names[] = {"grid",       "block",      "smem",      "problem_size",
                                      "grid_div_x", "grid_div_y", "grid_div_z"};
  char q1[CC_TUNE_QUOTE_MAX], q2[CC_TUNE_QUOTE_MAX];
  if (cc_expr_parse(buf, cc_tune_find_param, s, out, &why) != 0)
    st = cc_fail(CUCORE_INVALID_ARGUMENT, "%s `%s`: in `%s`, %s", names[slot],
                 cc_tune_quote(text, q1), cc_tune_quote(buf, q2), why ? why : "out of memory");
  free(why);
  free(buf);
  return st;
}

cucore_status cucore_tune_space_set_expr(cucore_tune_space *s, cucore_tune_slot slot,
                                         const char *text) {
  cc_begin();
  CC_CHECK_HANDLE(s, TUNE_SPACE, "cucore_tune_space_set_expr", "space");
  if ((unsigned)slot >= CC_TUNE_SLOTS)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "cucore_tune_space_set_expr: slot %d is not a "
                   "cucore_tune_slot",
                   (int)slot);
  cc_texprs x = {0};
  if (text) {
    const char *start[CC_TUNE_MAX_DIV];
    size_t len[CC_TUNE_MAX_DIV];
    int n = split_top(text, start, len, SLOT_MAX[slot]);
    if (n < 0)
      return cc_fail(CUCORE_INVALID_ARGUMENT, "`%s`: more than %d expressions", text,
                     SLOT_MAX[slot]);
    for (int i = 0; i < n; i++, x.n++) {
      cucore_status st = parse_part(s, slot, text, start[i], len[i], &x.e[i]);
      if (st != CUCORE_OK) {
        for (int j = 0; j < x.n; j++) cc_expr_free(&x.e[j]);
        return st;
      }
    }
  }
  for (int i = 0; i < s->slot[slot].n; i++) cc_expr_free(&s->slot[slot].e[i]);
  s->slot[slot] = x;
  cc_tune_resolve_kinds(s);
  return CUCORE_OK;
}

/* ---- "NAME=V1,V2,..." ------------------------------------------------------------------- */

typedef struct vlist {
  char **v;
  size_t n, cap;
} vlist;

static int vpush(vlist *l, const char *t, size_t len) {
  char **v = cc_grow(l->v, &l->cap, l->n + 1, sizeof *v, "a parameter's values");
  if (!v) return -1;
  l->v = v;
  char *c = cc_raw_malloc(len + 1);
  if (!c) return -1;
  memcpy(c, t, len);
  c[len] = 0;
  l->v[l->n++] = c;
  return 0;
}

static int read_ll(const char *p, const char **end, long long *v) {
  char *e;
  errno = 0;
  *v = strtoll(p, &e, 10);
  *end = e;
  return e != p && errno == 0;
}

/* "LO..HI", "LO..HI:STEP" or "pow2:LO..HI" into values; 0 when `t` is no range, -1 on error
 * (message recorded), 1 when expanded. */
static int expand_range(const char *t, size_t len, vlist *l) {
  int pow2 = len > 5 && memcmp(t, "pow2:", 5) == 0;
  const char *p = pow2 ? t + 5 : t, *e;
  long long lo, hi, step = 1;
  size_t dots = 0;
  while (dots + 1 < len && !(t[dots] == '.' && t[dots + 1] == '.')) dots++;
  if (dots + 1 >= len) return 0;
  int ok = read_ll(p, &e, &lo) && e[0] == '.' && e[1] == '.' && read_ll(e + 2, &e, &hi);
  if (ok && !pow2 && *e == ':') ok = read_ll(e + 1, &e, &step);
  ok = ok && (size_t)(e - t) == len && step > 0 && lo <= hi && (!pow2 || (lo >= 0 && hi < 63));
  if (!ok || (hi - lo) / step >= CC_TUNE_RANGE_MAX) {
    cc_fail(CUCORE_INVALID_ARGUMENT,
            "`%.*s` is not a range LO..HI[:STEP] with LO <= HI, "
            "STEP > 0 and at most %d values, nor pow2:LO..HI with 0 <= LO <= HI <= 62",
            (int)len, t, CC_TUNE_RANGE_MAX);
    return -1;
  }
  char buf[32];
  for (long long v = lo; v <= hi; v += step) {
    int n = snprintf(buf, sizeof buf, "%lld", pow2 ? 1LL << v : v);
    if (vpush(l, buf, (size_t)n) < 0) return -1;
  }
  return 1;
}

static cucore_status split_values(const char *list, vlist *l) {
  for (const char *p = list;;) {
    size_t len = strcspn(p, ",");
    while (len && isspace((unsigned char)p[len - 1])) len--;
    int r = expand_range(p, len, l);
    if (r < 0) return CUCORE_INVALID_ARGUMENT;
    if (r == 0 && vpush(l, p, len) < 0)
      return cc_fail(CUCORE_HOST_OUT_OF_MEMORY, "out of memory reading parameter values");
    p += strcspn(p, ",");
    if (!*p++) return CUCORE_OK;
    while (isspace((unsigned char)*p)) p++;
  }
}

cucore_status cucore_tune_space_parse_param(cucore_tune_space *s, const char *text,
                                            cucore_tune_param_kind kind) {
  cc_begin();
  CC_CHECK_HANDLE(s, TUNE_SPACE, "cucore_tune_space_parse_param", "space");
  CC_CHECK_ARG(text, "cucore_tune_space_parse_param", "text");
  const char *eq = strchr(text, '=');
  if (!eq || eq == text)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "parameter `%s`: expected NAME=V1,V2,... (values "
                   "may be ranges LO..HI[:STEP] or pow2:LO..HI)",
                   text);
  char *name = cc_malloc((size_t)(eq - text) + 1, "a parameter name");
  if (!name) return CUCORE_HOST_OUT_OF_MEMORY;
  memcpy(name, text, (size_t)(eq - text));
  name[eq - text] = 0;
  vlist l = {0};
  cucore_status st = split_values(eq + 1, &l);
  if (st == CUCORE_OK)
    st = cucore_tune_space_add_param(s, name, (const char *const *)l.v, l.n, kind);
  for (size_t i = 0; i < l.n; i++) free(l.v[i]);
  free(l.v);
  free(name);
  return st;
}
