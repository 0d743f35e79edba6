/*
 * expr_eval.c -- evaluation of parsed tune expressions (expr.h) with Python's rules, and the
 * tables the parser reads (functions, keywords, operator spellings).
 *
 * The evaluator recurses once per level of the tree, whose depth the parser bounds
 * (CC_EXPR_DEPTH_MAX); lists, tuples, ranges and strings are walked in place, and nothing is
 * allocated unless an error is reported. Error messages name the column and what went wrong,
 * never a parameter's name or a string's value.
 */
#define _GNU_SOURCE /* memmem */
#include "tune/expr_impl.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* clang-format off */
static const cc_expr_func_info FUNCS[] = {
    {"abs", CC_FN_ABS, CC_FA_VALUES, 1, 1},     {"all", CC_FN_ALL, CC_FA_ONE_SEQ, 1, 1},
    {"any", CC_FN_ANY, CC_FA_ONE_SEQ, 1, 1},    {"ceil", CC_FN_CEIL, CC_FA_VALUES, 1, 1},
    {"float", CC_FN_FLOAT, CC_FA_VALUES, 1, 1}, {"floor", CC_FN_FLOOR, CC_FA_VALUES, 1, 1},
    {"int", CC_FN_INT, CC_FA_VALUES, 1, 1},     {"len", CC_FN_LEN, CC_FA_ONE_SEQ, 1, 1},
    {"log2", CC_FN_LOG2, CC_FA_VALUES, 1, 1},   {"max", CC_FN_MAX, CC_FA_SEQ_OR_VALUES, 1, 255},
    {"min", CC_FN_MIN, CC_FA_SEQ_OR_VALUES, 1, 255},
    {"range", CC_FN_RANGE, CC_FA_VALUES, 1, 3}, {"round", CC_FN_ROUND, CC_FA_VALUES, 1, 2},
};
static const char *const OP_NAMES[CC_OP_COUNT] = {
    "+", "-", "*", "/", "//", "%", "**", "&", "|", "^", "<<", ">>",
    "<", "<=", ">", ">=", "==", "!=", "in", "not in", "is", "is not",
    "and", "or", "-", "+", "not", "~",
};
/* clang-format on */

const cc_expr_func_info *cc_expr_func(const char *name, size_t len) {
  for (size_t i = 0; i < CC_ARRAY_LEN(FUNCS); i++)
    if (strlen(FUNCS[i].name) == len && memcmp(FUNCS[i].name, name, len) == 0) return &FUNCS[i];
  return NULL;
}

const char *cc_expr_func_names(void) {
  return "abs all any ceil float floor int len log2 max min range round";
}

const char *cc_expr_op_name(int op) { return op >= 0 && op < CC_OP_COUNT ? OP_NAMES[op] : "?"; }

static const char *fn_name(int fn) {
  for (size_t i = 0; i < CC_ARRAY_LEN(FUNCS); i++)
    if (FUNCS[i].fn == fn) return FUNCS[i].name;
  return "?";
}

int cc_expr_is_keyword(const char *name, size_t len) {
  static const char *const kw[] = {"and", "or",   "not", "in",  "is",
                                   "if",  "else", "for", "def", "lambda"};
  for (size_t i = 0; i < CC_ARRAY_LEN(kw); i++)
    if (strlen(kw[i]) == len && memcmp(kw[i], name, len) == 0) return 1;
  return 0;
}

char *cc_expr_why(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *s = n >= 0 ? cc_raw_malloc((size_t)n + 1) : NULL;
  if (!s) return NULL;
  va_start(ap, fmt);
  vsnprintf(s, (size_t)n + 1, fmt, ap);
  va_end(ap);
  return s;
}

/* Kept out of its callers: a function of the recursion (eval_node -> STEP -> eval_node) or a
 * leaf the recursion calls, so that each level's frame holds only its own few locals (about
 * 100 bytes) whatever the compiler inlines. */
#define NOINLINE __attribute__((noinline))

typedef struct ev {
  const cc_expr *e;
  const cc_tval *vars;
  char **why;
} ev;

static CC_COLD int efail(ev *x, int col, const char *fmt, ...) CC_PRINTF(3, 4);
static CC_COLD int efail(ev *x, int col, const char *fmt, ...) {
  if (!x->why) return -1; /* no reason wanted (a count) */
  char msg[160];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  free(*x->why);
  *x->why = cc_expr_why("column %d: %s", col, msg);
  return -1;
}

static CC_COLD int efail_str(ev *x, int col) {
  return efail(x, col, "a string where a number is needed");
}

static int eval_node(ev *x, int idx, cc_tval *out);

/* ---- numbers ---------------------------------------------------------------------------- */

#define TWO63 9223372036854775808.0

/* The integer d (already whole), or an error when it has none. */
static int to_int(ev *x, int col, double d, cc_tval *out) {
  if (isnan(d)) return efail(x, col, "a NaN where an integer is needed");
  if (!(d >= -TWO63 && d < TWO63)) return efail(x, col, "the value does not fit a 64-bit integer");
  *out = cc_tval_int((int64_t)d);
  return 0;
}

/* Compares an integer with a real exactly: -1, 0, 1, or 2 when unordered (a NaN). */
static int cmp_int_real(int64_t i, double d) {
  if (isnan(d)) return 2;
  if (d >= TWO63) return -1;
  if (d < -TWO63) return 1;
  double t = trunc(d);
  int64_t ti = (int64_t)t;
  if (i != ti) return i < ti ? -1 : 1;
  return d > t ? -1 : d < t ? 1 : 0;
}

/* Compares two numbers exactly (Python's rule): -1, 0, 1, or 2 when unordered. */
static int num_cmp(cc_tval a, cc_tval b) {
  int ia = cc_tval_is_integral(a), ib = cc_tval_is_integral(b);
  if (ia && ib) return (a.i > b.i) - (a.i < b.i);
  if (ia) return cmp_int_real(a.i, b.d);
  if (ib) {
    int c = cmp_int_real(b.i, a.d);
    return c == 2 ? 2 : -c;
  }
  if (isnan(a.d) || isnan(b.d)) return 2;
  return (a.d > b.d) - (a.d < b.d);
}

static int64_t floordiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

static int64_t pymod(int64_t a, int64_t b) {
  int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

/* a ** b for b >= 0; -1 on overflow. At most 63 multiplications. */
static int ipow(int64_t a, int64_t b, int64_t *out) {
  if (a == 0 || a == 1) return *out = b == 0 ? 1 : a, 0;
  if (a == -1) return *out = (b & 1) ? -1 : 1, 0;
  if (b >= 64) return -1;
  int64_t r = 1;
  for (int64_t i = 0; i < b; i++)
    if (__builtin_mul_overflow(r, a, &r)) return -1;
  *out = r;
  return 0;
}

static int shift(ev *x, const cc_expr_node *n, int64_t a, int64_t b, int64_t *r) {
  if (b < 0) return efail(x, n->col, "negative shift count");
  if (n->op == CC_OP_SHR) return *r = b >= 64 ? (a < 0 ? -1 : 0) : a >> b, 0;
  if (a == 0) return *r = 0, 0;
  if (b >= 64) return 1;
  *r = (int64_t)((uint64_t)a << b);
  return (*r >> b) != a;
}

/* Integer arithmetic; 1 when the operation is not an integer one (then the caller uses reals). */
static NOINLINE int int_arith(ev *x, const cc_expr_node *n, cc_tval a, cc_tval b, cc_tval *out) {
  int64_t r = 0;
  int ovf = 0;
  switch (n->op) {
  case CC_OP_ADD: ovf = __builtin_add_overflow(a.i, b.i, &r); break;
  case CC_OP_SUB: ovf = __builtin_sub_overflow(a.i, b.i, &r); break;
  case CC_OP_MUL: ovf = __builtin_mul_overflow(a.i, b.i, &r); break;
  case CC_OP_FLOORDIV:
  case CC_OP_MOD:
    if (b.i == 0) return efail(x, n->col, "integer division or modulo by zero");
    if (a.i == INT64_MIN && b.i == -1) ovf = 1;
    r = ovf ? 0 : n->op == CC_OP_MOD ? pymod(a.i, b.i) : floordiv(a.i, b.i);
    break;
  case CC_OP_POW:
    if (b.i < 0 && a.i == 0) return efail(x, n->col, "zero to a negative power");
    if (b.i < 0) return 1;
    ovf = ipow(a.i, b.i, &r) < 0;
    break;
  case CC_OP_SHL:
  case CC_OP_SHR: ovf = shift(x, n, a.i, b.i, &r); break;
  case CC_OP_BITAND: r = a.i & b.i; break;
  case CC_OP_BITOR: r = a.i | b.i; break;
  case CC_OP_BITXOR: r = a.i ^ b.i; break;
  default: return 1;
  }
  if (ovf < 0) return -1;
  if (ovf) return efail(x, n->col, "integer overflow (results must fit in 64 bits)");
  int both_bool = a.kind == CC_TV_BOOL && b.kind == CC_TV_BOOL;
  *out = both_bool && n->op >= CC_OP_BITAND && n->op <= CC_OP_BITXOR ? cc_tval_bool(r != 0)
                                                                     : cc_tval_int(r);
  return 0;
}

/* Python's float // and %: fmod, then the sign of the divisor. */
static double real_floordiv_mod(double a, double b, int want_mod) {
  double mod = fmod(a, b), div = (a - mod) / b;
  if (mod != 0) {
    if ((b < 0) != (mod < 0)) mod += b, div -= 1.0;
  } else {
    mod = copysign(0.0, b);
  }
  if (want_mod) return mod;
  if (div == 0) return copysign(0.0, a / b);
  double q = floor(div);
  return div - q > 0.5 ? q + 1.0 : q;
}

static int real_pow(ev *x, const cc_expr_node *n, double a, double b, double *r) {
  if (a == 0 && b < 0) return efail(x, n->col, "zero to a negative power");
  if (a < 0 && isfinite(b) && b != floor(b))
    return efail(x, n->col, "a negative number to a fractional power");
  *r = pow(a, b);
  if (isinf(*r) && isfinite(a) && isfinite(b))
    return efail(x, n->col, "the result is too large for a real");
  return 0;
}

static NOINLINE int real_arith(ev *x, const cc_expr_node *n, double a, double b, cc_tval *out) {
  double r = 0;
  switch (n->op) {
  case CC_OP_ADD: r = a + b; break;
  case CC_OP_SUB: r = a - b; break;
  case CC_OP_MUL: r = a * b; break;
  case CC_OP_DIV:
    if (b == 0) return efail(x, n->col, "division by zero");
    r = a / b;
    break;
  case CC_OP_FLOORDIV:
  case CC_OP_MOD:
    if (b == 0) return efail(x, n->col, "division or modulo by zero");
    r = real_floordiv_mod(a, b, n->op == CC_OP_MOD);
    break;
  case CC_OP_POW:
    if (real_pow(x, n, a, b, &r) < 0) return -1;
    break;
  default: return efail(x, n->col, "`%s` needs integers, found a real", cc_expr_op_name(n->op));
  }
  if (isnan(r)) return efail(x, n->col, "the result is not a number");
  *out = cc_tval_real(r);
  return 0;
}

static NOINLINE int eval_arith(ev *x, const cc_expr_node *n, cc_tval *out) {
  cc_tval a, b;
  if (eval_node(x, n->a, &a) < 0 || eval_node(x, n->b, &b) < 0) return -1;
  if (a.kind == CC_TV_STR || b.kind == CC_TV_STR) return efail_str(x, n->col);
  if (cc_tval_is_integral(a) && cc_tval_is_integral(b)) {
    int r = int_arith(x, n, a, b, out);
    if (r <= 0) return r;
  }
  return real_arith(x, n, cc_tval_num(a), cc_tval_num(b), out);
}

static NOINLINE int eval_un(ev *x, const cc_expr_node *n, cc_tval *out) {
  cc_tval a;
  if (eval_node(x, n->a, &a) < 0) return -1;
  if (n->op == CC_OP_NOT) return *out = cc_tval_bool(!cc_tval_truthy(a)), 0;
  if (a.kind == CC_TV_STR) return efail_str(x, n->col);
  int integral = cc_tval_is_integral(a);
  switch (n->op) {
  case CC_OP_POS: *out = integral ? cc_tval_int(a.i) : a; return 0;
  case CC_OP_NEG:
    if (integral && a.i == INT64_MIN)
      return efail(x, n->col, "integer overflow (results must fit in 64 bits)");
    *out = integral ? cc_tval_int(-a.i) : cc_tval_real(-a.d);
    return 0;
  default:
    if (!integral) return efail(x, n->col, "`~` needs an integer, found a real");
    *out = cc_tval_int(~a.i);
    return 0;
  }
}

/* ---- comparisons ------------------------------------------------------------------------ */

static int bytes_cmp(const char *a, size_t na, const char *b, size_t nb) {
  int c = na && nb ? memcmp(a, b, na < nb ? na : nb) : 0;
  return c != 0 ? (c > 0) - (c < 0) : (na > nb) - (na < nb);
}

/* a op b for the comparisons but IN / NOT IN: *r is 0 or 1. */
static NOINLINE int cmp_values(ev *x, int col, int op, cc_tval a, cc_tval b, int *r) {
  int sa = a.kind == CC_TV_STR, sb = b.kind == CC_TV_STR, c;
  if (op == CC_OP_IS || op == CC_OP_ISNOT) {
    int same = a.kind == b.kind && (sa                     ? bytes_cmp(a.s, a.n, b.s, b.n) == 0
                                    : a.kind == CC_TV_REAL ? a.d == b.d
                                                           : a.i == b.i);
    return *r = same ^ (op == CC_OP_ISNOT), 0;
  }
  if (sa || sb) {
    if (op == CC_OP_EQ || op == CC_OP_NE)
      return *r = (sa && sb && bytes_cmp(a.s, a.n, b.s, b.n) == 0) ^ (op == CC_OP_NE), 0;
    if (!(sa && sb))
      return efail(x, col, "`%s` between a string and a number", cc_expr_op_name(op));
    c = bytes_cmp(a.s, a.n, b.s, b.n);
  } else {
    c = num_cmp(a, b);
  }
  switch (op) {
  case CC_OP_LT: *r = c == -1; break;
  case CC_OP_LE: *r = c == -1 || c == 0; break;
  case CC_OP_GT: *r = c == 1; break;
  case CC_OP_GE: *r = c == 1 || c == 0; break;
  case CC_OP_EQ: *r = c == 0; break;
  default: *r = c != 0; break;
  }
  return 0;
}

/* A range's start, step and length (Python's formula, in 64 unsigned bits). */
typedef struct rng {
  int64_t start, step;
  uint64_t len;
} rng;

static NOINLINE int range_open(ev *x, const cc_expr_node *n, rng *r) {
  const int32_t *k = &x->e->kids[n->a];
  int64_t v[3] = {0, 0, 1};
  for (int i = 0; i < n->b && i < 3; i++) {
    cc_tval a;
    if (eval_node(x, k[i], &a) < 0) return -1;
    if (!cc_tval_is_integral(a))
      return efail(x, n->col, "range() takes integers, found a %s",
                   a.kind == CC_TV_STR ? "string" : "real");
    v[n->b == 1 ? 1 : i] = a.i;
  }
  if (v[2] == 0) return efail(x, n->col, "range() step must not be zero");
  r->start = v[0], r->step = v[2], r->len = 0;
  if (v[2] > 0 && v[0] < v[1])
    r->len = ((uint64_t)v[1] - (uint64_t)v[0] - 1) / (uint64_t)v[2] + 1;
  else if (v[2] < 0 && v[0] > v[1])
    r->len = ((uint64_t)v[0] - (uint64_t)v[1] - 1) / (0 - (uint64_t)v[2]) + 1;
  return 0;
}

static int range_has(const rng *r, int64_t v) {
  if (r->len == 0 || (r->step > 0 ? v < r->start : v > r->start)) return 0;
  uint64_t off = r->step > 0 ? (uint64_t)v - (uint64_t)r->start : (uint64_t)r->start - (uint64_t)v;
  uint64_t st = r->step > 0 ? (uint64_t)r->step : 0 - (uint64_t)r->step;
  return off % st == 0 && off / st < r->len;
}

static int64_t range_at(const rng *r, uint64_t k) {
  return (int64_t)((uint64_t)r->start + k * (uint64_t)r->step);
}

/* v in the range: Python compares a real by value, a string is never in it. */
static int range_member(const rng *r, cc_tval v) {
  if (cc_tval_is_integral(v)) return range_has(r, v.i);
  if (v.kind == CC_TV_STR || !(v.d >= -TWO63 && v.d < TWO63) || v.d != trunc(v.d)) return 0;
  return range_has(r, (int64_t)v.d);
}

static int is_range(const cc_expr_node *n) { return n->kind == CC_EX_CALL && n->op == CC_FN_RANGE; }

/* v in the value c (a string: a substring test). */
static int member_value(ev *x, int col, cc_tval v, cc_tval c, int *r) {
  if (c.kind != CC_TV_STR)
    return efail(x, col, "`in` needs a list, a tuple, a range or a string on its right");
  if (v.kind != CC_TV_STR) return efail(x, col, "`in` a string needs a string on its left");
  *r = v.n == 0 || (v.n <= c.n && memmem(c.s, c.n, v.s, v.n) != NULL);
  return 0;
}

/* v in node idx: a list or range walked in place, else a value (evaluated into *right). */
static NOINLINE int member(ev *x, int col, cc_tval v, int idx, cc_tval *right, int *r) {
  const cc_expr_node *c = &x->e->nodes[idx];
  if (c->kind == CC_EX_LIST) {
    const int32_t *k = &x->e->kids[c->a];
    *r = 0;
    for (int i = 0; i < c->b; i++) { /* Python builds the whole list first */
      int eq = 0;
      if (eval_node(x, k[i], right) < 0) return -1;
      if (!*r && cmp_values(x, col, CC_OP_EQ, v, *right, &eq) == 0) *r = eq;
    }
    return 0;
  }
  if (is_range(c)) {
    rng g;
    if (range_open(x, c, &g) < 0) return -1;
    return *r = range_member(&g, v), 0;
  }
  if (eval_node(x, idx, right) < 0) return -1;
  return member_value(x, col, v, *right, r);
}

/* One comparison of a chain: `left op (node idx)`; *right is the right operand's value. */
static int cmp_step(ev *x, int col, int op, cc_tval left, int idx, cc_tval *right, int *r) {
  if (op == CC_OP_IN || op == CC_OP_NOTIN) {
    if (member(x, col, left, idx, right, r) < 0) return -1;
    *r ^= op == CC_OP_NOTIN;
    return 0;
  }
  if (eval_node(x, idx, right) < 0) return -1;
  return cmp_values(x, col, op, left, *right, r);
}

static NOINLINE int eval_cmp1(ev *x, const cc_expr_node *n, cc_tval *out) {
  cc_tval a, b;
  int r = 0;
  if (eval_node(x, n->a, &a) < 0 || cmp_step(x, n->col, n->op, a, n->b, &b, &r) < 0) return -1;
  *out = cc_tval_bool(r);
  return 0;
}

static NOINLINE int eval_chain(ev *x, const cc_expr_node *n, cc_tval *out) {
  const int32_t *k = &x->e->kids[n->a];
  cc_tval left, right;
  if (eval_node(x, k[0], &left) < 0) return -1;
  for (int i = 0; i < n->b; i++) {
    int opcol = k[1 + 2 * i], r = 0;
    if (cmp_step(x, opcol >> 8, opcol & 0xff, left, k[2 + 2 * i], &right, &r) < 0) return -1;
    if (!r) return *out = cc_tval_bool(0), 0;
    left = right;
  }
  *out = cc_tval_bool(1);
  return 0;
}

/* ---- functions -------------------------------------------------------------------------- */

/* The length of the UTF-8 character at s (1 for a stray byte), at most n. */
static size_t char_len(const char *s, size_t n) {
  unsigned char c = (unsigned char)s[0];
  size_t k = c < 0xc0 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
  return k < n ? k : n;
}

/* min or max over the values of kids[0..count): the first of the smallest (largest) kept. */
static int minmax(ev *x, int col, int fn, const int32_t *k, int count, cc_tval *out) {
  if (count == 0) return efail(x, col, "%s() of an empty sequence", fn_name(fn));
  if (eval_node(x, k[0], out) < 0) return -1;
  for (int i = 1; i < count; i++) {
    cc_tval v;
    int better = 0;
    if (eval_node(x, k[i], &v) < 0 ||
        cmp_values(x, col, fn == CC_FN_MIN ? CC_OP_LT : CC_OP_GT, v, *out, &better) < 0)
      return -1;
    if (better) *out = v;
  }
  return 0;
}

static int list_fn(ev *x, const cc_expr_node *n, const cc_expr_node *list, cc_tval *out) {
  const int32_t *k = &x->e->kids[list->a];
  if (n->op == CC_FN_MIN || n->op == CC_FN_MAX) return minmax(x, n->col, n->op, k, list->b, out);
  int any = 0, all = 1;
  for (int i = 0; i < list->b; i++) {
    cc_tval v;
    if (eval_node(x, k[i], &v) < 0) return -1;
    any |= cc_tval_truthy(v);
    all &= cc_tval_truthy(v);
  }
  *out = n->op == CC_FN_LEN ? cc_tval_int(list->b) : cc_tval_bool(n->op == CC_FN_ANY ? any : all);
  return 0;
}

static NOINLINE int range_fn(ev *x, const cc_expr_node *n, const rng *r, cc_tval *out) {
  switch (n->op) {
  case CC_FN_LEN:
    if (r->len > (uint64_t)INT64_MAX)
      return efail(x, n->col, "integer overflow (results must fit in 64 bits)");
    return *out = cc_tval_int((int64_t)r->len), 0;
  case CC_FN_ANY: return *out = cc_tval_bool(r->len >= 2 || (r->len == 1 && r->start != 0)), 0;
  case CC_FN_ALL: return *out = cc_tval_bool(!range_has(r, 0)), 0;
  default:
    if (r->len == 0) return efail(x, n->col, "%s() of an empty sequence", fn_name(n->op));
    int first = (n->op == CC_FN_MIN) == (r->step > 0);
    return *out = cc_tval_int(first ? r->start : range_at(r, r->len - 1)), 0;
  }
}

/* len any all min max of a string: its characters (UTF-8 sequences, ordered by bytes). */
static NOINLINE int str_fn(ev *x, const cc_expr_node *n, cc_tval s, cc_tval *out) {
  if (n->op == CC_FN_ANY || n->op == CC_FN_ALL)
    return *out = cc_tval_bool(n->op == CC_FN_ALL || s.n > 0), 0;
  if (n->op != CC_FN_LEN && s.n == 0)
    return efail(x, n->col, "%s() of an empty sequence", fn_name(n->op));
  int64_t count = 0;
  cc_tval best = cc_tval_str(s.s, s.n ? char_len(s.s, s.n) : 0);
  for (size_t i = 0; i < s.n; count++) {
    size_t k = char_len(s.s + i, s.n - i);
    int c = bytes_cmp(s.s + i, k, best.s, best.n);
    if (n->op == CC_FN_MIN ? c < 0 : c > 0) best = cc_tval_str(s.s + i, k);
    i += k;
  }
  *out = n->op == CC_FN_LEN ? cc_tval_int(count) : best;
  return 0;
}

/* len any all, and min max of one argument: a list, a range or a string. */
static NOINLINE int eval_seq_fn(ev *x, const cc_expr_node *n, cc_tval *out) {
  int idx = x->e->kids[n->a];
  const cc_expr_node *c = &x->e->nodes[idx];
  if (c->kind == CC_EX_LIST) return list_fn(x, n, c, out);
  if (is_range(c)) {
    rng r;
    return range_open(x, c, &r) < 0 ? -1 : range_fn(x, n, &r, out);
  }
  cc_tval v;
  if (eval_node(x, idx, &v) < 0) return -1;
  if (v.kind != CC_TV_STR)
    return efail(x, n->col, "%s() needs a list, a tuple, a range or a string", fn_name(n->op));
  return str_fn(x, n, v, out);
}

static int is_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

/* int() of a string: Python's int literal in base 10 (sign, digits, single underscores between
 * them, spaces around). */
static NOINLINE int int_of_str(ev *x, int col, const char *s, size_t n, cc_tval *out) {
  size_t i = 0;
  while (i < n && is_space(s[i])) i++;
  while (n > i && is_space(s[n - 1])) n--;
  int neg = i < n && s[i] == '-';
  i += i < n && (s[i] == '-' || s[i] == '+');
  uint64_t v = 0, lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
  int ok = i < n, ovf = 0;
  for (; i < n && ok; i++) {
    if (s[i] == '_' && i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9' && i + 1 < n &&
        s[i + 1] >= '0' && s[i + 1] <= '9')
      continue;
    ok = s[i] >= '0' && s[i] <= '9';
    ovf |= __builtin_mul_overflow(v, 10, &v) ||
           __builtin_add_overflow(v, (uint64_t)(s[i] - '0'), &v) || v > lim;
  }
  if (!ok) return efail(x, col, "int() of a string that is not an integer literal");
  if (ovf) return efail(x, col, "integer overflow (results must fit in 64 bits)");
  *out = cc_tval_int(neg ? (int64_t)(0 - v) : (int64_t)v);
  return 0;
}

/* Digits with single underscores between them from s[*i..n), copied to buf without them;
 * returns how many digits. */
static size_t float_digits(const char *s, size_t *i, size_t n, char *buf, size_t *k) {
  size_t nd = 0;
  while (*i < n) {
    size_t us = s[*i] == '_' && nd > 0 && *i + 1 < n ? 1 : 0;
    if (!(s[*i + us] >= '0' && s[*i + us] <= '9')) break;
    *i += us;
    buf[(*k)++] = s[*i];
    (*i)++, nd++;
  }
  return nd;
}

/* float() of a string: Python's syntax ([sign] digits [. digits] [e [sign] digits], inf,
 * infinity, nan; spaces around), at most 100 characters. */
static NOINLINE int float_of_str(ev *x, int col, const char *s, size_t n, cc_tval *out) {
  char buf[128];
  size_t i = 0, k = 0;
  while (i < n && is_space(s[i])) i++;
  while (n > i && is_space(s[n - 1])) n--;
  if (n - i > 100) return efail(x, col, "float() of a string longer than 100 characters");
  if (i < n && (s[i] == '+' || s[i] == '-')) buf[k++] = s[i++];
  size_t m = n - i;
  int special = (m == 3 && (!strncasecmp(s + i, "inf", 3) || !strncasecmp(s + i, "nan", 3))) ||
                (m == 8 && !strncasecmp(s + i, "infinity", 8));
  if (special) {
    memcpy(buf + k, s + i, m), k += m, i = n;
  } else {
    size_t nd = float_digits(s, &i, n, buf, &k);
    if (i < n && s[i] == '.') buf[k++] = s[i++], nd += float_digits(s, &i, n, buf, &k);
    if (nd > 0 && i < n && (s[i] == 'e' || s[i] == 'E')) {
      buf[k++] = s[i++];
      if (i < n && (s[i] == '+' || s[i] == '-')) buf[k++] = s[i++];
      if (float_digits(s, &i, n, buf, &k) == 0) nd = 0;
    }
    if (nd == 0) i = n + 1;
  }
  if (i != n) return efail(x, col, "float() of a string that is not a number");
  buf[k] = 0;
  *out = cc_tval_real(strtod(buf, NULL));
  return 0;
}

static NOINLINE int eval_fn1(ev *x, const cc_expr_node *n, cc_tval a, cc_tval *out) {
  if (a.kind == CC_TV_STR && n->op != CC_FN_INT && n->op != CC_FN_FLOAT)
    return efail_str(x, n->col);
  int integral = cc_tval_is_integral(a);
  switch (n->op) {
  case CC_FN_ABS:
    if (integral && a.i == INT64_MIN)
      return efail(x, n->col, "integer overflow (results must fit in 64 bits)");
    *out = integral ? cc_tval_int(a.i < 0 ? -a.i : a.i) : cc_tval_real(fabs(a.d));
    return 0;
  case CC_FN_CEIL:
    return integral ? (*out = cc_tval_int(a.i), 0) : to_int(x, n->col, ceil(a.d), out);
  case CC_FN_FLOOR:
    return integral ? (*out = cc_tval_int(a.i), 0) : to_int(x, n->col, floor(a.d), out);
  case CC_FN_INT:
    if (a.kind == CC_TV_STR) return int_of_str(x, n->col, a.s, a.n, out);
    return integral ? (*out = cc_tval_int(a.i), 0) : to_int(x, n->col, trunc(a.d), out);
  case CC_FN_FLOAT:
    if (a.kind == CC_TV_STR) return float_of_str(x, n->col, a.s, a.n, out);
    return *out = cc_tval_real(cc_tval_num(a)), 0;
  case CC_FN_LOG2:
    if (!(cc_tval_num(a) > 0)) return efail(x, n->col, "log2 of a value that is not positive");
    return *out = cc_tval_real(log2(cc_tval_num(a))), 0;
  default: return efail(x, n->col, "internal: function %d", n->op);
  }
}

/* round(v, -k) of an integer, half to even; k >= 1. */
static int round_int(ev *x, int col, int64_t v, int64_t k, cc_tval *out) {
  if (k > 19) return *out = cc_tval_int(0), 0;
  __int128 p = 1;
  for (int64_t i = 0; i < k; i++) p *= 10;
  __int128 q = v / p, rem = v % p;
  if (rem < 0) rem += p, q -= 1;
  if (2 * rem > p || (2 * rem == p && (q & 1))) q += 1;
  __int128 r = q * p;
  if (r > INT64_MAX || r < INT64_MIN)
    return efail(x, col, "integer overflow (results must fit in 64 bits)");
  *out = cc_tval_int((int64_t)r);
  return 0;
}

/* round(d, -k), k in 1..308, as Python does: the exact decimal value rounded half to even at
 * 10^k, then the nearest double. */
static NOINLINE double round_tens(double d, int k) {
  char digits[330];
  double t = trunc(d);
  int len = snprintf(digits, sizeof digits - 1, "%.0f", fabs(t)); /* exact: t is whole */
  if (len < k) return 0.0 * d;
  int head = len - k, up = digits[head] > '5';
  if (digits[head] == '5') {
    int rest = d != t;
    for (int i = head + 1; i < len; i++) rest |= digits[i] != '0';
    up = rest || (head > 0 && (digits[head - 1] - '0') % 2 == 1);
  }
  memset(digits + head, '0', (size_t)k);
  int i = head - 1;
  for (; up && i >= 0; i--) {
    if (digits[i] != '9') break;
    digits[i] = '0';
  }
  if (up && i >= 0) digits[i]++;
  if (up && i < 0) memmove(digits + 1, digits, (size_t)len + 1), digits[0] = '1';
  double r = strtod(digits, NULL);
  return d < 0 ? -r : r;
}

/* round(d, nd) of a real, as Python: correctly rounded, half to even on the exact value. */
static NOINLINE double round_real(double d, int64_t nd) {
  if (!isfinite(d) || d == 0 || nd > 323) return d;
  if (nd < -308) return 0.0 * d;
  if (nd < 0) return round_tens(d, (int)-nd);
  char buf[720];
  snprintf(buf, sizeof buf, "%.*f", (int)nd, d);
  return strtod(buf, NULL);
}

static NOINLINE int eval_round(ev *x, const cc_expr_node *n, const cc_tval *v, cc_tval *out) {
  if (v[0].kind == CC_TV_STR) return efail_str(x, n->col);
  if (n->b == 2 && !cc_tval_is_integral(v[1]))
    return efail(x, n->col, "round() needs an integer number of digits");
  if (cc_tval_is_integral(v[0]))
    return n->b == 2 && v[1].i < 0 ? round_int(x, n->col, v[0].i, v[1].i < -20 ? 20 : -v[1].i, out)
                                   : (*out = cc_tval_int(v[0].i), 0);
  if (n->b == 2) return *out = cc_tval_real(round_real(v[0].d, v[1].i)), 0;
  double d = v[0].d, r = floor(d), diff = d - r;
  if (diff > 0.5 || (diff == 0.5 && fmod(r, 2.0) != 0)) r += 1.0;
  return to_int(x, n->col, r, out);
}

static NOINLINE int eval_call(ev *x, const cc_expr_node *n, cc_tval *out) {
  const int32_t *k = &x->e->kids[n->a];
  switch (n->op) {
  case CC_FN_LEN:
  case CC_FN_ANY:
  case CC_FN_ALL: return eval_seq_fn(x, n, out);
  case CC_FN_MIN:
  case CC_FN_MAX:
    return n->b == 1 ? eval_seq_fn(x, n, out) : minmax(x, n->col, n->op, k, n->b, out);
  default: break;
  }
  cc_tval v[2];
  if (n->op == CC_FN_RANGE || n->b < 1 || n->b > 2)
    return efail(x, n->col, "internal: a call of %d arguments", n->b);
  for (int i = 0; i < n->b; i++)
    if (eval_node(x, k[i], &v[i]) < 0) return -1;
  return n->op == CC_FN_ROUND ? eval_round(x, n, v, out) : eval_fn1(x, n, v[0], out);
}

/* ---- the tree --------------------------------------------------------------------------- */

static int eval_node(ev *x, int idx, cc_tval *out) {
  const cc_expr_node *n = &x->e->nodes[idx];
  cc_tval c;
  switch (n->kind) {
  case CC_EX_NUM: *out = x->e->consts[n->a]; return 0;
  case CC_EX_VAR: *out = x->vars[n->a]; return 0;
  case CC_EX_UN: return eval_un(x, n, out);
  case CC_EX_BIN: return n->op >= CC_OP_LT ? eval_cmp1(x, n, out) : eval_arith(x, n, out);
  case CC_EX_LOGIC: /* Python's rule: the first operand that decides, or the last */
    if (eval_node(x, n->a, out) < 0) return -1;
    if (cc_tval_truthy(*out) == (n->op == CC_OP_OR)) return 0;
    return eval_node(x, n->b, out);
  case CC_EX_COND:
    if (eval_node(x, n->a, &c) < 0) return -1;
    return eval_node(x, cc_tval_truthy(c) ? n->b : n->c, out);
  case CC_EX_CMP: return eval_chain(x, n, out);
  case CC_EX_CALL: return eval_call(x, n, out);
  default: return efail(x, n->col, "internal: a list where a value is needed");
  }
}

int cc_expr_eval(const cc_expr *e, const cc_tval *vars, cc_tval *out, char **why) {
  if (why) *why = NULL;
  ev x = {e, vars, why};
  if (!e->nodes || e->root < 0 || e->root >= e->count)
    return efail(&x, 1, "an expression that was not parsed");
  return eval_node(&x, e->root, out);
}
