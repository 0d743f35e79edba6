/*
 * tune/expr.h -- the expression language of `cucore tune`: restrictions, launch dimensions,
 * shared memory, problem sizes. A small parser builds a tree of nodes; nothing is ever run as
 * code. Values are 64-bit integers or doubles, with Python's rules (Kernel Tuner writes its
 * restrictions in Python): int op int stays int for + - * // % and ** with a non-negative
 * exponent, `/` is true division, `//` floors, `%` takes the divisor's sign; comparisons,
 * `and or not`, `&& || !` give 0 or 1; `a < b < c` chains; `c ? a : b`; min max (2 or more
 * arguments), ceil floor (to integers), abs, log2; names are the space's parameters, bound
 * when the expression is parsed. Integer overflow and division by zero are evaluation errors.
 */
#ifndef CUCORE_TUNE_EXPR_H
#define CUCORE_TUNE_EXPR_H

#include "base/base.h"

#include <stddef.h>
#include <stdint.h>

/* What a value is. Python's rules: a bool is an integer in arithmetic (True + 1 == 2) and
 * compares equal to 1; a string compares only with strings (== != < <= > >= and `in`). */
typedef enum cc_tkind { CC_TV_INT = 0, CC_TV_REAL, CC_TV_STR, CC_TV_BOOL } cc_tkind;

/* A value: an integer (INT: i; d the same as a double), a real (REAL: d), a string (STR: s[0..n),
 * not owned: a parameter's value text or an expression's literal) or a bool (BOOL: i is 0 or 1,
 * d the same). */
typedef struct cc_tval {
  int kind; /* cc_tkind */
  int64_t i;
  double d;
  const char *s;
  size_t n;
} cc_tval;

static inline cc_tval cc_tval_int(int64_t i) {
  cc_tval v = {CC_TV_INT, i, (double)i, NULL, 0};
  return v;
}
static inline cc_tval cc_tval_real(double d) {
  cc_tval v = {CC_TV_REAL, 0, d, NULL, 0};
  return v;
}
static inline cc_tval cc_tval_bool(int b) {
  cc_tval v = {CC_TV_BOOL, b != 0, b != 0 ? 1.0 : 0.0, NULL, 0};
  return v;
}
static inline cc_tval cc_tval_str(const char *s, size_t n) {
  cc_tval v = {CC_TV_STR, 0, 0.0, s, n};
  return v;
}
/* 1 for an integer or a bool (Python's int), which integer arithmetic keeps exact. */
static inline int cc_tval_is_integral(cc_tval v) {
  return v.kind == CC_TV_INT || v.kind == CC_TV_BOOL;
}
/* 1 for a number (an integer, a real or a bool): anything but a string. */
static inline int cc_tval_is_num(cc_tval v) { return v.kind != CC_TV_STR; }
static inline double cc_tval_num(cc_tval v) { return cc_tval_is_integral(v) ? (double)v.i : v.d; }
static inline int cc_tval_truthy(cc_tval v) {
  return v.kind == CC_TV_STR ? v.n != 0 : cc_tval_is_integral(v) ? v.i != 0 : v.d != 0.0;
}

/* One node of a parsed expression (children are indices into the node array). */
typedef struct cc_expr_node {
  uint8_t kind; /* cc_expr_kind (expr.c) */
  uint8_t op;   /* the operator or function */
  int32_t a, b, c;
  int32_t var; /* a parameter's index (kind VAR) */
  int32_t col; /* 1-based column, for evaluation errors */
  cc_tval num; /* kind NUM */
} cc_expr_node;

/* A parsed expression. Owned: cc_expr_free. */
typedef struct cc_expr {
  cc_expr_node *nodes;
  int count;
  size_t cap;
  int root;
  char *text; /* a copy of the source text */
} cc_expr;

/* Maps a name to a variable index, or -1 when the name is unknown. */
typedef int (*cc_expr_lookup_fn)(void *ctx, const char *name, size_t len);

/* Parses `text`. Returns 0, or -1 with *why (malloc'd, the caller frees it; NULL only when out
 * of memory) naming the column and what was expected (an unknown name, a bad token, a missing
 * parenthesis, nesting or a text past their limits, out of memory). */
int cc_expr_parse(const char *text, cc_expr_lookup_fn lookup, void *ctx, cc_expr *out, char **why);
/* Evaluates with the variables' values `vars` (indexed as the lookup answered). Returns 0, or
 * -1 with *why (malloc'd as above): division by zero, integer overflow, a function's domain, a
 * string where a number is needed. Strings in *out point into `vars` or the expression. */
int cc_expr_eval(const cc_expr *e, const cc_tval *vars, cc_tval *out, char **why);
/* 1 when the expression reads variable `var`. */
int cc_expr_uses(const cc_expr *e, int var);
void cc_expr_free(cc_expr *e);

#endif /* CUCORE_TUNE_EXPR_H */
