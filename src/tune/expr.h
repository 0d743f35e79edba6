/*
 * tune/expr.h -- the expression language of `cucore tune`: restrictions, launch dimensions,
 * shared memory, problem sizes. Kernel Tuner writes its restrictions as Python boolean
 * expressions over the parameters, and this is that subset of Python (plus C's `&& || ! ?:`);
 * a small parser builds a tree of nodes and nothing is ever run as code.
 *
 * Values are 64-bit integers, doubles, strings and bools, with Python's rules: int op int stays
 * int for + - * // % and ** with a non-negative exponent, `/` is true division, `//` floors,
 * `%` takes the divisor's sign, a bool is the integer 0/1 in arithmetic (True + 1 == 2);
 * `& | ^ << >> ~` on integers; comparisons chain (`a < b <= c`) and include `in`, `not in`,
 * `is`, `is not`; `and`/`or` return an operand, `not` a bool; `a if c else b` and `c ? a : b`;
 * lists, tuples and sets of values (`[1, 2]`, `(1, 2)`, `{1, 2}`) and `range(...)` after `in`
 * or as the argument of any all len min max; strings in quotes (`dtype == "float"`, substring
 * `in`, ordering by bytes); the functions abs all any ceil float floor int len log2 max min
 * range round. Names are the space's parameters, bound when the expression is parsed. Integer
 * overflow (results must fit 64 bits), division by zero, a string where a number is needed and
 * a function's domain are evaluation errors, never a silent wrap or 0. The grammar is at the
 * top of expr_parse.c.
 */
#ifndef CUCORE_TUNE_EXPR_H
#define CUCORE_TUNE_EXPR_H

#include "base/base.h"

#include <stddef.h>
#include <stdint.h>

/* The limits: an expression's text is at most CC_EXPR_TEXT_MAX bytes, and its nesting (of any
 * kind: parentheses, unary chains, `**` chains, left-deep `+`/`*` chains, conditionals, calls,
 * lists) at most CC_EXPR_DEPTH_MAX levels, so that neither the parser nor the evaluator ever
 * recurses deeper than that: at the limit they need about 0.5 MiB of stack (under 1 MiB with
 * ASan and UBSan). Beyond them cc_expr_parse refuses the text, naming the limit. */
#define CC_EXPR_TEXT_MAX 65536
#define CC_EXPR_DEPTH_MAX 1000

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

/* One node of a parsed expression, 20 bytes. Children are indices into the node array; what
 * a, b and c hold depends on the kind (expr_impl.h). */
typedef struct cc_expr_node {
  uint8_t kind;   /* cc_expr_kind (expr_impl.h) */
  uint8_t op;     /* the operator or function */
  uint16_t depth; /* levels of the subtree, 1 for a leaf; at most CC_EXPR_DEPTH_MAX */
  int32_t a, b, c;
  int32_t col; /* 1-based column, for evaluation errors */
} cc_expr_node;

/* A parsed expression. Owned: cc_expr_free. */
typedef struct cc_expr {
  cc_expr_node *nodes;
  int count;
  size_t cap;
  int root;
  int32_t *kids; /* the children of lists, calls and comparison chains, each run contiguous */
  int nkids;
  size_t cap_kids;
  cc_tval *consts; /* the literals (kind NUM: a indexes them) */
  int nconsts;
  size_t cap_consts;
  char *lits; /* the bytes of string literals, escapes decoded; consts of kind STR point here */
  char *text; /* a copy of the source text */
} cc_expr;

/* Maps a name to a variable index, or -1 when the name is unknown. */
typedef int (*cc_expr_lookup_fn)(void *ctx, const char *name, size_t len);

/* Parses `text`. Returns 0, or -1 with *why (malloc'd, the caller frees it; NULL only when out
 * of memory) naming the column and what was expected (an unknown name, a bad token, a missing
 * parenthesis, nesting or a text past their limits, a Python function or lambda, out of
 * memory). A quoted token is cut at 40 characters with "...". */
int cc_expr_parse(const char *text, cc_expr_lookup_fn lookup, void *ctx, cc_expr *out, char **why);
/* Evaluates with the variables' values `vars` (indexed as the lookup answered; any kind).
 * Returns 0, or -1 with *why (malloc'd as above; the column and what went wrong, never a name
 * or a string's value): division by zero, integer overflow, a function's domain, a string where
 * a number is needed; `why` NULL: no reason wanted, none made. Allocates nothing when it
 * succeeds. Strings in *out point into `vars` or
 * the expression. */
int cc_expr_eval(const cc_expr *e, const cc_tval *vars, cc_tval *out, char **why);
/* 1 when the expression reads variable `var`. */
int cc_expr_uses(const cc_expr *e, int var);
void cc_expr_free(cc_expr *e);

#endif /* CUCORE_TUNE_EXPR_H */
