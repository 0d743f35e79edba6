/*
 * expr_eval.c -- evaluation of parsed tune expressions (expr.h), with Python's number rules,
 * and the function table the parser reads.
 */
#include "tune/expr_impl.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
  const char *name;
  int fn;
} FUNCS[] = {{"min", CC_FN_MIN},     {"max", CC_FN_MAX}, {"ceil", CC_FN_CEIL},
             {"floor", CC_FN_FLOOR}, {"abs", CC_FN_ABS}, {"log2", CC_FN_LOG2}};

int cc_expr_func(const char *name, size_t len) {
  for (size_t i = 0; i < CC_ARRAY_LEN(FUNCS); i++)
    if (strlen(FUNCS[i].name) == len && memcmp(FUNCS[i].name, name, len) == 0) return FUNCS[i].fn;
  return -1;
}

int cc_expr_func_variadic(int fn) { return fn == CC_FN_MIN || fn == CC_FN_MAX; }

const char *cc_expr_func_name(int fn) {
  for (size_t i = 0; i < CC_ARRAY_LEN(FUNCS); i++)
    if (FUNCS[i].fn == fn) return FUNCS[i].name;
  return "?";
}

int cc_expr_is_keyword(const char *name, size_t len) {
  static const char *const kw[] = {"and", "or", "not", "if", "else", "lambda"};
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

typedef struct ev {
  const cc_expr *e;
  const cc_tval *vars;
  char **why;
} ev;

static int efail(ev *x, const cc_expr_node *n, const char *what) {
  free(*x->why);
  *x->why = cc_expr_why("column %d: %s", n->col, what);
  return -1;
}

static int64_t floordiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

static int64_t pymod(int64_t a, int64_t b) {
  int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

static int ipow(int64_t a, int64_t b, int64_t *out) {
  int64_t r = 1;
  for (int64_t i = 0; i < b; i++)
    if (__builtin_mul_overflow(r, a, &r)) return -1;
  *out = r;
  return 0;
}

/* Integer arithmetic; 1 when the operation is not an integer one (then the caller uses reals). */
static int int_arith(ev *x, const cc_expr_node *n, int64_t a, int64_t b, cc_tval *out) {
  int64_t r = 0;
  int ovf = 0;
  switch (n->op) {
  case CC_OP_ADD: ovf = __builtin_add_overflow(a, b, &r); break;
  case CC_OP_SUB: ovf = __builtin_sub_overflow(a, b, &r); break;
  case CC_OP_MUL: ovf = __builtin_mul_overflow(a, b, &r); break;
  case CC_OP_FLOORDIV:
  case CC_OP_MOD:
    if (b == 0) return efail(x, n, "integer division or modulo by zero");
    if (a == INT64_MIN && b == -1) return efail(x, n, "integer overflow");
    r = n->op == CC_OP_MOD ? pymod(a, b) : floordiv(a, b);
    break;
  case CC_OP_POW:
    if (b < 0) return 1;
    ovf = b > 64 && a != 0 && a != 1 && a != -1 ? 1 : ipow(a, b, &r) < 0;
    break;
  default: return 1;
  }
  if (ovf) return efail(x, n, "integer overflow (results must fit in 64 bits)");
  *out = cc_tval_int(r);
  return 0;
}

static int real_arith(ev *x, const cc_expr_node *n, double a, double b, cc_tval *out) {
  double r;
  switch (n->op) {
  case CC_OP_ADD: r = a + b; break;
  case CC_OP_SUB: r = a - b; break;
  case CC_OP_MUL: r = a * b; break;
  case CC_OP_DIV:
    if (b == 0) return efail(x, n, "division by zero");
    r = a / b;
    break;
  case CC_OP_FLOORDIV:
  case CC_OP_MOD:
    if (b == 0) return efail(x, n, "division or modulo by zero");
    r = n->op == CC_OP_MOD ? a - b * floor(a / b) : floor(a / b);
    break;
  case CC_OP_POW: r = pow(a, b); break;
  default: return efail(x, n, "internal: unknown operator");
  }
  if (isnan(r)) return efail(x, n, "the result is not a number");
  *out = cc_tval_real(r);
  return 0;
}

static int compare(const cc_expr_node *n, cc_tval a, cc_tval b) {
  int c;
  if (cc_tval_is_integral(a) && cc_tval_is_integral(b))
    c = a.i < b.i ? -1 : a.i > b.i;
  else
    c = cc_tval_num(a) < cc_tval_num(b) ? -1 : cc_tval_num(a) > cc_tval_num(b);
  switch (n->op) {
  case CC_OP_LT: return c < 0;
  case CC_OP_LE: return c <= 0;
  case CC_OP_GT: return c > 0;
  case CC_OP_GE: return c >= 0;
  case CC_OP_EQ: return c == 0;
  default: return c != 0;
  }
}

static int eval_node(ev *x, int idx, cc_tval *out);

static int eval_bin(ev *x, const cc_expr_node *n, cc_tval *out) {
  cc_tval a, b;
  if (eval_node(x, n->a, &a) < 0 || eval_node(x, n->b, &b) < 0) return -1;
  if (n->op >= CC_OP_LT && n->op <= CC_OP_NE) {
    *out = cc_tval_int(compare(n, a, b));
    return 0;
  }
  if (n->op == CC_FN_MIN || n->op == CC_FN_MAX) {
    int a_less = compare(&(cc_expr_node){.op = CC_OP_LT}, a, b);
    int b_less = compare(&(cc_expr_node){.op = CC_OP_LT}, b, a);
    *out = (n->op == CC_FN_MIN ? b_less : a_less) ? b : a;
    return 0;
  }
  if (cc_tval_is_integral(a) && cc_tval_is_integral(b)) {
    int r = int_arith(x, n, a.i, b.i, out);
    if (r <= 0) return r;
  }
  return real_arith(x, n, cc_tval_num(a), cc_tval_num(b), out);
}

static int to_int(ev *x, const cc_expr_node *n, double d, cc_tval *out) {
  if (!(d >= -9.2e18 && d <= 9.2e18)) return efail(x, n, "the value does not fit an integer");
  *out = cc_tval_int((int64_t)d);
  return 0;
}

static int eval_un(ev *x, const cc_expr_node *n, cc_tval *out) {
  cc_tval a;
  if (eval_node(x, n->a, &a) < 0) return -1;
  double d = cc_tval_num(a);
  switch (n->op) {
  case CC_OP_NOT: *out = cc_tval_int(!cc_tval_truthy(a)); return 0;
  case CC_OP_POS: *out = a; return 0;
  case CC_OP_NEG:
    if (cc_tval_is_integral(a) && a.i == INT64_MIN) return efail(x, n, "integer overflow");
    *out = cc_tval_is_integral(a) ? cc_tval_int(-a.i) : cc_tval_real(-a.d);
    return 0;
  case CC_FN_ABS:
    if (cc_tval_is_integral(a) && a.i == INT64_MIN) return efail(x, n, "integer overflow");
    *out = cc_tval_is_integral(a) ? cc_tval_int(a.i < 0 ? -a.i : a.i) : cc_tval_real(fabs(a.d));
    return 0;
  case CC_FN_CEIL: return cc_tval_is_integral(a) ? (*out = a, 0) : to_int(x, n, ceil(d), out);
  case CC_FN_FLOOR: return cc_tval_is_integral(a) ? (*out = a, 0) : to_int(x, n, floor(d), out);
  default:
    if (d <= 0) return efail(x, n, "log2 of a value that is not positive");
    *out = cc_tval_real(log2(d));
    return 0;
  }
}

static int eval_node(ev *x, int idx, cc_tval *out) {
  const cc_expr_node *n = &x->e->nodes[idx];
  cc_tval c;
  switch (n->kind) {
  case CC_EX_NUM: *out = n->num; return 0;
  case CC_EX_VAR:
    if (!cc_tval_is_num(x->vars[n->var])) return efail(x, n, "a text value used in an expression");
    *out = x->vars[n->var];
    return 0;
  case CC_EX_UN: return eval_un(x, n, out);
  case CC_EX_BIN: return eval_bin(x, n, out);
  case CC_EX_LOGIC:
    if (eval_node(x, n->a, &c) < 0) return -1;
    if (cc_tval_truthy(c) == (n->op == CC_OP_OR)) return *out = cc_tval_int(n->op == CC_OP_OR), 0;
    if (eval_node(x, n->b, &c) < 0) return -1;
    *out = cc_tval_int(cc_tval_truthy(c));
    return 0;
  default:
    if (eval_node(x, n->a, &c) < 0) return -1;
    return eval_node(x, cc_tval_truthy(c) ? n->b : n->c, out);
  }
}

int cc_expr_eval(const cc_expr *e, const cc_tval *vars, cc_tval *out, char **why) {
  *why = NULL;
  ev x = {e, vars, why};
  return eval_node(&x, e->root, out);
}
