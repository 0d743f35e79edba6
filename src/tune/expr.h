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

/* A value: an integer (is_int 1, i) or a real (is_int 0, d). */
typedef struct cc_tval {
  int is_int;
  int64_t i;
  double d;
} cc_tval;

static inline cc_tval cc_tval_int(int64_t i) {
  cc_tval v = {1, i, (double)i};
  return v;
}
static inline cc_tval cc_tval_real(double d) {
  cc_tval v = {0, 0, d};
  return v;
}
static inline double cc_tval_num(cc_tval v) { return v.is_int ? (double)v.i : v.d; }
static inline int cc_tval_truthy(cc_tval v) { return v.is_int ? v.i != 0 : v.d != 0.0; }

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

#define CC_EXPR_WHY_MAX 256

/* Parses `text`. Returns 0, or -1 with `why` naming the column and what was expected (an
 * unknown name, a bad token, a missing parenthesis, nesting deeper than 64, out of memory). */
int cc_expr_parse(const char *text, cc_expr_lookup_fn lookup, void *ctx, cc_expr *out, char *why,
                  size_t why_cap);
/* Evaluates with the variables' values `vars` (indexed as the lookup answered). Returns 0, or
 * -1 with `why` (division by zero, integer overflow, a function's domain, a text value used in
 * arithmetic: vars[i] with is_int < 0). */
int cc_expr_eval(const cc_expr *e, const cc_tval *vars, cc_tval *out, char *why, size_t why_cap);
/* 1 when the expression reads variable `var`. */
int cc_expr_uses(const cc_expr *e, int var);
void cc_expr_free(cc_expr *e);

#endif /* CUCORE_TUNE_EXPR_H */
