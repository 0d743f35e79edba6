/* test_tune_expr.c -- the tune expression language: Python's number rules, precedence,
 * chained comparisons, both spellings of the logic operators, Kernel Tuner's idioms (in, range,
 * conditionals, int/float/round, bitwise operators, is, any/all/len, min/max of lists), strings,
 * bools, the refusal of Python functions, errors that name the column and never the values, and
 * the limits on nesting and length. Never evaluated as code. Expected values are what Python 3
 * prints for the same text with a=6, b=4, x=2.5, block_size_x=128, dtype="float", empty="",
 * flag=True (the generated tables were checked with python3). */
#include "support.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "tune/expr.h"

static const char *const NAMES[] = {"a", "b", "x", "block_size_x", "dtype", "empty", "flag"};
#define NVARS 7

static int lookup(void *ctx, const char *name, size_t len) {
  (void)ctx;
  for (int i = 0; i < NVARS; i++)
    if (strlen(NAMES[i]) == len && memcmp(NAMES[i], name, len) == 0) return i;
  return -1;
}

static cc_tval VARS[NVARS];

static void setup_vars(void) {
  VARS[0] = cc_tval_int(6);
  VARS[1] = cc_tval_int(4);
  VARS[2] = cc_tval_real(2.5);
  VARS[3] = cc_tval_int(128);
  VARS[4] = cc_tval_str("float", 5);
  VARS[5] = cc_tval_str("", 0);
  VARS[6] = cc_tval_bool(1);
}

/* Fails the test with `why` (freed first: its text is copied). */
static void fail_why(const char *what, const char *text, char *why) {
  char msg[600];
  snprintf(msg, sizeof msg, "%s", why ? why : "(null)");
  free(why);
  fail_msg("%s `%.200s`: %s", what, text, msg);
}

/* Parses and evaluates `text`; the value's strings point into VARS or *keep (freed by the
 * caller with cc_expr_free). */
static cc_tval eval_keep(const char *text, cc_expr *keep) {
  char *why = NULL;
  if (cc_expr_parse(text, lookup, NULL, keep, &why) < 0) fail_why("parse", text, why);
  cc_tval v;
  setup_vars();
  if (cc_expr_eval(keep, VARS, &v, &why) < 0) {
    cc_expr_free(keep);
    fail_why("eval", text, why);
  }
  assert_null(why);
  return v;
}

static cc_tval eval_ok(const char *text) {
  cc_expr e;
  cc_tval v = eval_keep(text, &e);
  cc_expr_free(&e);
  return v;
}

/* The message of a parse that must fail (the caller frees it). */
static char *parse_error(const char *text) {
  cc_expr e;
  char *why = NULL;
  if (cc_expr_parse(text, lookup, NULL, &e, &why) == 0) {
    cc_expr_free(&e);
    fail_msg("`%.200s` parsed; expected it to be refused", text);
  }
  assert_non_null(why);
  return why;
}

static void expect_parse_error(const char *text, const char *want) {
  char *why = parse_error(text);
  if (!strstr(why, want)) {
    fprintf(stderr, "expected: %s\n", want);
    fail_why("parse", text, why);
  }
  free(why);
}

/* The message of an evaluation that must fail (the caller frees it). */
static char *eval_error(const char *text) {
  cc_expr e;
  char *why = NULL;
  cc_tval v;
  if (cc_expr_parse(text, lookup, NULL, &e, &why) < 0) fail_why("parse", text, why);
  setup_vars();
  int r = cc_expr_eval(&e, VARS, &v, &why);
  cc_expr_free(&e);
  if (r == 0) fail_msg("`%s` evaluated to %g; expected an error", text, cc_tval_num(v));
  assert_non_null(why);
  return why;
}

typedef struct want {
  const char *t;
  int kind;
  int64_t i;     /* INT, BOOL */
  double d;      /* REAL */
  const char *s; /* STR */
} want;

static void check_table(const want *cases, size_t n) {
  for (size_t k = 0; k < n; k++) {
    const want *w = &cases[k];
    cc_expr e;
    cc_tval v = eval_keep(w->t, &e);
    int ok = v.kind == w->kind;
    if (ok && w->kind == CC_TV_REAL) ok = v.d == w->d || fabs(v.d - w->d) <= 1e-12 * fabs(w->d);
    if (ok && w->kind == CC_TV_STR) ok = v.n == strlen(w->s) && memcmp(v.s, w->s, v.n) == 0;
    if (ok && (w->kind == CC_TV_INT || w->kind == CC_TV_BOOL)) ok = v.i == w->i;
    char got[96];
    if (v.kind == CC_TV_STR)
      snprintf(got, sizeof got, "the string \"%.*s\"", (int)(v.n > 40 ? 40 : v.n), v.s);
    else
      snprintf(got, sizeof got, "kind %d, %lld, %.17g", v.kind, (long long)v.i, v.d);
    cc_expr_free(&e);
    if (!ok)
      fail_msg("`%s`: got %s; expected kind %d, %lld, %.17g, %s", w->t, got, w->kind,
               (long long)w->i, w->d, w->s ? w->s : "");
  }
}

static void integers_follow_python(void **state) {
  (void)state;
  static const struct {
    const char *t;
    int64_t v;
  } cases[] = {
      {"1 + 2 * 3", 7},
      {"(1 + 2) * 3", 9},
      {"7 // 2", 3},
      {"-7 // 2", -4},
      {"7 % 3", 1},
      {"-7 % 3", 2},
      {"7 % -3", -2},
      {"2 ** 10", 1024},
      {"-2 ** 2", -4},
      {"2 ** 3 ** 2", 512},
      {"a * b", 24},
      {"a - b - 1", 1},
      {"min(a, b, 3)", 3},
      {"max(1, a, b)", 6},
      {"ceil(a / b)", 2},
      {"floor(a / b)", 1},
      {"abs(-5)", 5},
      {"0x10", 16},
      {"0o17 + 0b101 + 1_000", 1020},
      {"block_size_x // 32", 4},
      {"a > b ? a : b", 6},
      {"a < b ? a : b + 1", 5},
      {"a < b ? 1 : a > 5 ? 2 : 3", 2},
      {"-9223372036854775807 - 1", INT64_MIN},
      {"1 ** 9223372036854775807", 1},
      {"(-1) ** 9223372036854775807", -1},
      {"0 ** 0", 1},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    cc_tval v = eval_ok(cases[i].t);
    if (v.kind != CC_TV_INT || v.i != cases[i].v)
      fail_msg("`%s`: got %s %g, expected the integer %lld", cases[i].t,
               cc_tval_is_integral(v) ? "integer" : "real", cc_tval_num(v), (long long)cases[i].v);
  }
}

static void reals_and_true_division(void **state) {
  (void)state;
  static const struct {
    const char *t;
    double v;
  } cases[] = {
      {"a / b", 1.5},     {"x * 2", 5.0},     {"7.5 // 2", 3.0},    {"-7.5 // 2", -4.0},
      {"-7.5 % 2", 0.5},  {"7.5 % -2", -0.5}, {"2 ** -1", 0.5},     {"log2(block_size_x)", 7.0},
      {"1e3 / 4", 250.0}, {".5 + x", 3.0},    {"1. + 1_0.5", 11.5},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    cc_tval v = eval_ok(cases[i].t);
    if (v.kind != CC_TV_REAL || fabs(v.d - cases[i].v) > 1e-12)
      fail_msg("`%s`: got %g (%s), expected the real %g", cases[i].t, cc_tval_num(v),
               cc_tval_is_integral(v) ? "integer" : "real", cases[i].v);
  }
}

/* The existing table, unchanged: comparisons now give bools, `and`/`or` an operand (Python's
 * rule); both are integral with the same value here. */
static void logic_both_spellings_and_chains(void **state) {
  (void)state;
  static const struct {
    const char *t;
    int v;
  } cases[] = {
      {"a > b and b > 1", 1},
      {"a > b && b > 10", 0},
      {"a < b or b == 4", 1},
      {"a < b || b != 4", 0},
      {"not a < b", 1},
      {"!(a < b)", 1},
      {"!0 == 1", 1},
      {"1 < b < a", 1},
      {"1 < a < b", 0},
      {"2 <= b <= 4 <= a", 1},
      {"true and not false", 1},
      {"True or False", 1},
      {"block_size_x*b>=64", 1},
      {"not not a", 1},
      {"x == 2.5", 1},
      {"0 and 1 / 0", 0},
      {"1 or 1 // 0", 1},    /* short-circuit: no division */
      {"a < b < 1 // 0", 0}, /* a chain stops at its first false comparison */
      {"0 if 1 else 1 // 0", 0},
      {"1 ? 1 : 1 // 0", 1},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    cc_tval v = eval_ok(cases[i].t);
    if (!cc_tval_is_integral(v) || v.i != cases[i].v)
      fail_msg("`%s`: got %g, expected %d", cases[i].t, cc_tval_num(v), cases[i].v);
  }
}

static void kernel_tuner_idioms(void **state) {
  (void)state;
  static const want cases[] = {
      /* membership in lists, tuples, sets and ranges */
      {"a in [1, 4]", CC_TV_BOOL, 0, 0, NULL},
      {"b in [1, 4]", CC_TV_BOOL, 1, 0, NULL},
      {"a not in (2, 3)", CC_TV_BOOL, 1, 0, NULL},
      {"a not in (2, 6)", CC_TV_BOOL, 0, 0, NULL},
      {"a in {6, 7}", CC_TV_BOOL, 1, 0, NULL},
      {"a in ()", CC_TV_BOOL, 0, 0, NULL},
      {"a in (6,)", CC_TV_BOOL, 1, 0, NULL},
      {"x in [1, 2.5]", CC_TV_BOOL, 1, 0, NULL},
      {"2 in [2.0]", CC_TV_BOOL, 1, 0, NULL},
      {"flag in [1]", CC_TV_BOOL, 1, 0, NULL},
      {"a in range(1, 10)", CC_TV_BOOL, 1, 0, NULL},
      {"a in range(0, 10, 4)", CC_TV_BOOL, 0, 0, NULL},
      {"a in range(10, 0, -2)", CC_TV_BOOL, 1, 0, NULL},
      {"b in range(10, 0, -3)", CC_TV_BOOL, 1, 0, NULL},
      {"a in range(b)", CC_TV_BOOL, 0, 0, NULL},
      {"a in range(7)", CC_TV_BOOL, 1, 0, NULL},
      {"-1 in range(-5)", CC_TV_BOOL, 0, 0, NULL},
      {"2.0 in range(5)", CC_TV_BOOL, 1, 0, NULL},
      {"2.5 in range(5)", CC_TV_BOOL, 0, 0, NULL},
      {"9223372036854775806 in range(-9223372036854775807, 9223372036854775807, 2)", CC_TV_BOOL, 0,
       0, NULL},
      {"block_size_x in range(32, 1025, 32)", CC_TV_BOOL, 1, 0, NULL},
      /* conditionals: Python's and C's */
      {"1 if a > b else 2", CC_TV_INT, 1LL, 0, NULL},
      {"1 if a < b else 2 if a == 6 else 3", CC_TV_INT, 2LL, 0, NULL},
      {"a if 0 else b if 0 else x", CC_TV_REAL, 0, 2.5, NULL},
      {"(1 if a else 2) + 10", CC_TV_INT, 11LL, 0, NULL},
      /* int and float */
      {"int(x)", CC_TV_INT, 2LL, 0, NULL},
      {"int(-x)", CC_TV_INT, -2LL, 0, NULL},
      {"int(7.99)", CC_TV_INT, 7LL, 0, NULL},
      {"int(-7.99)", CC_TV_INT, -7LL, 0, NULL},
      {"int(\"12\")", CC_TV_INT, 12LL, 0, NULL},
      {"int(\" -12 \")", CC_TV_INT, -12LL, 0, NULL},
      {"int(\"+1_000\")", CC_TV_INT, 1000LL, 0, NULL},
      {"int(\"007\")", CC_TV_INT, 7LL, 0, NULL},
      {"int(flag)", CC_TV_INT, 1LL, 0, NULL},
      {"int(\"-9223372036854775808\")", CC_TV_INT, INT64_MIN, 0, NULL},
      {"float(3)", CC_TV_REAL, 0, 3.0, NULL},
      {"float(\"1.5\")", CC_TV_REAL, 0, 1.5, NULL},
      {"float(\" -1e3 \")", CC_TV_REAL, 0, -1000.0, NULL},
      {"float(\"1_0.2_5\")", CC_TV_REAL, 0, 10.25, NULL},
      {"float(\".5\")", CC_TV_REAL, 0, 0.5, NULL},
      {"float(\"5.\")", CC_TV_REAL, 0, 5.0, NULL},
      {"float(\"-inf\") < -1e308", CC_TV_BOOL, 1, 0, NULL},
      {"float(flag)", CC_TV_REAL, 0, 1.0, NULL},
      /* bitwise operators on integers */
      {"a & b", CC_TV_INT, 4LL, 0, NULL},
      {"a | b", CC_TV_INT, 6LL, 0, NULL},
      {"a ^ b", CC_TV_INT, 2LL, 0, NULL},
      {"a << 3", CC_TV_INT, 48LL, 0, NULL},
      {"a >> 1", CC_TV_INT, 3LL, 0, NULL},
      {"-a >> 1", CC_TV_INT, -3LL, 0, NULL},
      {"-7 >> 70", CC_TV_INT, -1LL, 0, NULL},
      {"7 >> 64", CC_TV_INT, 0LL, 0, NULL},
      {"~a", CC_TV_INT, -7LL, 0, NULL},
      {"~-1", CC_TV_INT, 0LL, 0, NULL},
      {"~flag", CC_TV_INT, -2LL, 0, NULL},
      {"1 << 62", CC_TV_INT, 4611686018427387904LL, 0, NULL},
      {"-1 << 63", CC_TV_INT, INT64_MIN, 0, NULL},
      {"0 << 100", CC_TV_INT, 0LL, 0, NULL},
      {"flag & True", CC_TV_BOOL, 1, 0, NULL},
      {"flag | 0", CC_TV_INT, 1LL, 0, NULL},
      {"True & False", CC_TV_BOOL, 0, 0, NULL},
      {"True ^ True", CC_TV_BOOL, 0, 0, NULL},
      {"1 | 2 ^ 3 & 4 << 1 + 1", CC_TV_INT, 3LL, 0, NULL},
      {"(1 | 2) ^ 3", CC_TV_INT, 0LL, 0, NULL},
      {"6 & 3 == 2", CC_TV_BOOL, 1, 0, NULL},
      {"a & 1 == 0", CC_TV_BOOL, 1, 0, NULL},
      /* is, is not */
      {"1 is True", CC_TV_BOOL, 0, 0, NULL},
      {"flag is True", CC_TV_BOOL, 1, 0, NULL},
      {"flag is not True", CC_TV_BOOL, 0, 0, NULL},
      {"a is 6", CC_TV_BOOL, 1, 0, NULL},
      {"a is 6.0", CC_TV_BOOL, 0, 0, NULL},
      {"dtype is \"float\"", CC_TV_BOOL, 1, 0, NULL},
      {"1 is not 1.0", CC_TV_BOOL, 1, 0, NULL},
      /* any, all, len */
      {"any([a > 10, b > 1])", CC_TV_BOOL, 1, 0, NULL},
      {"all([a > 10, b > 1])", CC_TV_BOOL, 0, 0, NULL},
      {"any([])", CC_TV_BOOL, 0, 0, NULL},
      {"all([])", CC_TV_BOOL, 1, 0, NULL},
      {"any([0, 0.0, \"\"])", CC_TV_BOOL, 0, 0, NULL},
      {"all([1, \"x\", 2.5])", CC_TV_BOOL, 1, 0, NULL},
      {"any(range(0, 1))", CC_TV_BOOL, 0, 0, NULL},
      {"any(range(3))", CC_TV_BOOL, 1, 0, NULL},
      {"all(range(1, 5))", CC_TV_BOOL, 1, 0, NULL},
      {"all(range(-3, 3))", CC_TV_BOOL, 0, 0, NULL},
      {"any(dtype)", CC_TV_BOOL, 1, 0, NULL},
      {"all(empty)", CC_TV_BOOL, 1, 0, NULL},
      {"len([1, 2, 3])", CC_TV_INT, 3LL, 0, NULL},
      {"len((1,))", CC_TV_INT, 1LL, 0, NULL},
      {"len(())", CC_TV_INT, 0LL, 0, NULL},
      {"len(range(10))", CC_TV_INT, 10LL, 0, NULL},
      {"len(range(10, 0, -3))", CC_TV_INT, 4LL, 0, NULL},
      {"len(range(5, 1))", CC_TV_INT, 0LL, 0, NULL},
      {"len(range(-9223372036854775807, 9223372036854775807, 3))", CC_TV_INT, 6148914691236517205LL,
       0, NULL},
      {"len(dtype)", CC_TV_INT, 5LL, 0, NULL},
      {"len(empty)", CC_TV_INT, 0LL, 0, NULL},
      {"len(\"h\\u00e9llo\")", CC_TV_INT, 5LL, 0, NULL},
      /* round (half to even) and round(x, n) */
      {"round(2.5)", CC_TV_INT, 2LL, 0, NULL},
      {"round(3.5)", CC_TV_INT, 4LL, 0, NULL},
      {"round(-2.5)", CC_TV_INT, -2LL, 0, NULL},
      {"round(-0.5)", CC_TV_INT, 0LL, 0, NULL},
      {"round(x)", CC_TV_INT, 2LL, 0, NULL},
      {"round(flag)", CC_TV_INT, 1LL, 0, NULL},
      {"round(2.675, 2)", CC_TV_REAL, 0, 2.67, NULL},
      {"round(0.125, 2)", CC_TV_REAL, 0, 0.12, NULL},
      {"round(1.5, 0)", CC_TV_REAL, 0, 2.0, NULL},
      {"round(1250, -2)", CC_TV_INT, 1200LL, 0, NULL},
      {"round(1350, -2)", CC_TV_INT, 1400LL, 0, NULL},
      {"round(-25, -1)", CC_TV_INT, -20LL, 0, NULL},
      {"round(a, 2)", CC_TV_INT, 6LL, 0, NULL},
      {"round(1234.5678, -2)", CC_TV_REAL, 0, 1200.0, NULL},
      {"round(1250.0, -2)", CC_TV_REAL, 0, 1200.0, NULL},
      {"round(5000.0, -4)", CC_TV_REAL, 0, 0.0, NULL},
      {"round(123.456, 400)", CC_TV_REAL, 0, 123.456, NULL},
      {"round(1e300, -300)", CC_TV_REAL, 0, 1e+300, NULL},
      /* min and max of lists, ranges, strings and values */
      {"max([a, b])", CC_TV_INT, 6LL, 0, NULL},
      {"min([a, b, x])", CC_TV_REAL, 0, 2.5, NULL},
      {"max((1, 2.0, 2))", CC_TV_REAL, 0, 2.0, NULL},
      {"min(range(10))", CC_TV_INT, 0LL, 0, NULL},
      {"max(range(10))", CC_TV_INT, 9LL, 0, NULL},
      {"min(range(10, 0, -3))", CC_TV_INT, 1LL, 0, NULL},
      {"max(range(10, 0, -3))", CC_TV_INT, 10LL, 0, NULL},
      {"max(dtype)", CC_TV_STR, 0, 0, "t"},
      {"min(dtype)", CC_TV_STR, 0, 0, "a"},
      {"min(a, b)", CC_TV_INT, 4LL, 0, NULL},
      {"max(1, 1.0)", CC_TV_INT, 1LL, 0, NULL},
      {"min(1.0, 1)", CC_TV_REAL, 0, 1.0, NULL},
      {"min(a, b, 3)", CC_TV_INT, 3LL, 0, NULL},
      {"max(\"b\", \"ab\")", CC_TV_STR, 0, 0, "b"},
      /* abs, bools in arithmetic */
      {"abs(-3)", CC_TV_INT, 3LL, 0, NULL},
      {"abs(-x)", CC_TV_REAL, 0, 2.5, NULL},
      {"abs(flag)", CC_TV_INT, 1LL, 0, NULL},
      {"True + 1", CC_TV_INT, 2LL, 0, NULL},
      {"flag * 3", CC_TV_INT, 3LL, 0, NULL},
      {"-flag", CC_TV_INT, -1LL, 0, NULL},
      {"+flag", CC_TV_INT, 1LL, 0, NULL},
      {"True == 1", CC_TV_BOOL, 1, 0, NULL},
      {"True / 2", CC_TV_REAL, 0, 0.5, NULL},
      /* and / or return an operand, not gives a bool */
      {"0 or x", CC_TV_REAL, 0, 2.5, NULL},
      {"a and b", CC_TV_INT, 4LL, 0, NULL},
      {"0 and x", CC_TV_INT, 0LL, 0, NULL},
      {"dtype and 1", CC_TV_INT, 1LL, 0, NULL},
      {"empty or 5", CC_TV_INT, 5LL, 0, NULL},
      {"not empty", CC_TV_BOOL, 1, 0, NULL},
      {"not dtype", CC_TV_BOOL, 0, 0, NULL},
      {"not 0.0", CC_TV_BOOL, 1, 0, NULL},
      /* chains mixing operators */
      {"1 < 2 < 3", CC_TV_BOOL, 1, 0, NULL},
      {"1 < 3 < 2", CC_TV_BOOL, 0, 0, NULL},
      {"a > b > 1 > 0", CC_TV_BOOL, 1, 0, NULL},
      {"0 < a != b in range(10)", CC_TV_BOOL, 1, 0, NULL},
      {"b < a not in [1, 2]", CC_TV_BOOL, 1, 0, NULL},
  };
  check_table(cases, sizeof cases / sizeof cases[0]);
}

static void strings_compare_and_contain(void **state) {
  (void)state;
  static const want cases[] = {
      /* strings: comparisons, membership, escapes */
      {"dtype == \"float\"", CC_TV_BOOL, 1, 0, NULL},
      {"dtype == 'float'", CC_TV_BOOL, 1, 0, NULL},
      {"dtype != \"float\"", CC_TV_BOOL, 0, 0, NULL},
      {"dtype == \"double\"", CC_TV_BOOL, 0, 0, NULL},
      {"dtype in [\"float\", \"double\"]", CC_TV_BOOL, 1, 0, NULL},
      {"dtype not in (\"half\", \"double\")", CC_TV_BOOL, 1, 0, NULL},
      {"dtype in {\"float\"}", CC_TV_BOOL, 1, 0, NULL},
      {"\"oa\" in dtype", CC_TV_BOOL, 1, 0, NULL},
      {"\"\" in dtype", CC_TV_BOOL, 1, 0, NULL},
      {"\"xyz\" in dtype", CC_TV_BOOL, 0, 0, NULL},
      {"dtype not in dtype", CC_TV_BOOL, 0, 0, NULL},
      {"empty in dtype", CC_TV_BOOL, 1, 0, NULL},
      {"dtype < \"g\"", CC_TV_BOOL, 1, 0, NULL},
      {"dtype >= \"float\"", CC_TV_BOOL, 1, 0, NULL},
      {"\"abc\" < \"abd\"", CC_TV_BOOL, 1, 0, NULL},
      {"\"ab\" < \"abc\"", CC_TV_BOOL, 1, 0, NULL},
      {"\"b\" > \"abc\"", CC_TV_BOOL, 1, 0, NULL},
      {"\"a\" < \"b\" < \"c\"", CC_TV_BOOL, 1, 0, NULL},
      {"dtype == 1", CC_TV_BOOL, 0, 0, NULL},
      {"dtype != 1", CC_TV_BOOL, 1, 0, NULL},
      {"dtype == 0", CC_TV_BOOL, 0, 0, NULL},
      {"empty == \"\"", CC_TV_BOOL, 1, 0, NULL},
      {"\"float\" if dtype == \"float\" else \"other\"", CC_TV_STR, 0, 0, "float"},
      {"'a\\tb' == \"a\\tb\"", CC_TV_BOOL, 1, 0, NULL},
      {"\"\\x41\" == \"A\"", CC_TV_BOOL, 1, 0, NULL},
      {"\"\\101\" == \"A\"", CC_TV_BOOL, 1, 0, NULL},
      {"\"\\u00e9\" == \"\\xe9\"", CC_TV_BOOL, 1, 0, NULL},
      {"len(\"\\u00e9\")", CC_TV_INT, 1LL, 0, NULL},
      {"len(\"\\U0001F600\")", CC_TV_INT, 1LL, 0, NULL},
      {"len(\"\\xff\")", CC_TV_INT, 1LL, 0, NULL},
      {"r\"\\n\" == \"\\\\n\"", CC_TV_BOOL, 1, 0, NULL},
      {"len(r\"\\n\")", CC_TV_INT, 2LL, 0, NULL},
      {"R'\\'' == \"\\\\'\"", CC_TV_BOOL, 1, 0, NULL},
      {"u\"abc\" == \"abc\"", CC_TV_BOOL, 1, 0, NULL},
      {"'it\\'s' == \"it's\"", CC_TV_BOOL, 1, 0, NULL},
      {"\"say \\\"hi\\\"\" == 'say \"hi\"'", CC_TV_BOOL, 1, 0, NULL},
      {"\"\\q\" == \"\\\\q\"", CC_TV_BOOL, 1, 0, NULL},
      {"len(\"\"\"abc\"\"\")", CC_TV_INT, 3LL, 0, NULL},
      {"'''a\"b''' == 'a\"b'", CC_TV_BOOL, 1, 0, NULL},
      {"dtype is \"float\"", CC_TV_BOOL, 1, 0, NULL},
      {"max([\"float\", \"double\"])", CC_TV_STR, 0, 0, "float"},
      {"min([\"float\", \"double\", dtype])", CC_TV_STR, 0, 0, "double"},
      {"\"a\\\nb\" == \"ab\"", CC_TV_BOOL, 1, 0, NULL},
      {"\"caf\\xe9\"", CC_TV_STR, 0, 0, "caf\xc3\xa9"},
      {"\"\\0\" != \"\"", CC_TV_BOOL, 1, 0, NULL},
  };
  check_table(cases, sizeof cases / sizeof cases[0]);
  /* A string value points into the variables or into the expression, which keeps it. */
  cc_expr e;
  cc_tval v = eval_keep("dtype if flag else 'other'", &e);
  assert_ptr_equal(v.s, VARS[4].s);
  cc_expr_free(&e);
  v = eval_keep("'it\\'s' if not flag else dtype or 1", &e);
  assert_ptr_equal(v.s, VARS[4].s);
  cc_expr_free(&e);
  v = eval_keep("'x\\ty'", &e);
  assert_int_equal(v.n, 3);
  assert_memory_equal(v.s, "x\ty", 3);
  cc_expr_free(&e);
}

static void bools_are_integers_in_arithmetic(void **state) {
  (void)state;
  static const want cases[] = {
      {"True + 1", CC_TV_INT, 2, 0, NULL},
      {"True + True", CC_TV_INT, 2, 0, NULL},
      {"flag * 2.5", CC_TV_REAL, 0, 2.5, NULL},
      {"True == 1", CC_TV_BOOL, 1, 0, NULL},
      {"True == 1.0", CC_TV_BOOL, 1, 0, NULL},
      {"True is 1", CC_TV_BOOL, 0, 0, NULL},
      {"flag is True", CC_TV_BOOL, 1, 0, NULL},
      {"flag is not False", CC_TV_BOOL, 1, 0, NULL},
      {"a > b", CC_TV_BOOL, 1, 0, NULL},
      {"not a", CC_TV_BOOL, 0, 0, NULL},
      {"(a > b) + (b > 1)", CC_TV_INT, 2, 0, NULL},
      {"True // 1", CC_TV_INT, 1, 0, NULL},
      {"True ** 2", CC_TV_INT, 1, 0, NULL},
      {"True and 5", CC_TV_INT, 5, 0, NULL},
      {"false or flag", CC_TV_BOOL, 1, 0, NULL},
      {"True in [1]", CC_TV_BOOL, 1, 0, NULL},
      {"True in range(2)", CC_TV_BOOL, 1, 0, NULL},
  };
  check_table(cases, sizeof cases / sizeof cases[0]);
}

static void parse_errors_name_the_column(void **state) {
  (void)state;
  static const struct {
    const char *t;
    const char *want;
  } cases[] = {
      {"a +", "column 4: expected a number"},
      {"a + c", "column 5: unknown name `c`"},
      {"(a + b", "column 7: expected `)`"},
      {"a b", "column 3: unexpected `b`"},
      {"a $ b", "column 3: unexpected character `$`"},
      {"", "column 1: an empty expression"},
      {"   ", "column 1: an empty expression"},
      {"system(1)", "column 1: `system` is not a function (the functions: abs all any ceil "
                    "float floor int len log2 max min range round)"},
      {"min()", "column 1: min takes a wrong number of arguments"},
      {"ceil(a, b)", "ceil takes a wrong number of arguments (one)"},
      {"round(1, 2, 3)", "round takes a wrong number of arguments (one or two)"},
      {"range(1, 2, 3, 4)", "range takes a wrong number of arguments (one to three)"},
      {"len(1, 2)", "len takes a wrong number of arguments (one)"},
      {"a ? b", "column 6: expected `:`"},
      {"a if b", "column 7: expected `else`"},
      {"12abc", "column 1: a malformed number"},
      {"1j", "column 1: a malformed number"},
      {"1.5.2", "column 1: a malformed number"},
      {"1__0", "column 1: a malformed number"},
      {"0x", "column 1: a malformed number"},
      {"010", "column 1: leading zeros in a decimal number"},
      {"__import__('os')", "`__import__` is not a function"},
      {"os.system", "unexpected character `.`"},
      {"a and", "column 6: expected a number"},
      {"a = 1", "column 3: unexpected character `=` (compare with `==`)"},
      {"99999999999999999999", "out of range"},
      {"a not b", "column 7: expected `in` after `not`, found `b`"},
      {"a == not b", "column 6: expected a number, a string, a name or `(`, found `not`"},
      {"a in", "column 5: expected a number"},
      {"'abc", "column 1: a string that is not closed"},
      {"'ab\nc'", "column 1: a string that is not closed on its line"},
      {"'\\x4'", "column 2: a \\x escape needs 2 hex digits"},
      {"'\\ud800'", "column 2: a \\u escape that is not a character"},
      {"'\\U00110000'", "column 2: a \\U escape that is not a character"},
      {"'\\N{DASH}'", "column 2: \\N{...} escapes are not supported"},
      {"b'abc'", "column 1: bytes and f-strings are not supported"},
      {"f'{a}'", "column 1: bytes and f-strings are not supported"},
      {"[1, 2]", "column 1: a list, tuple, set or range can only follow `in`"},
      {"range(3)", "column 1: a list, tuple, set or range"},
      {"(1, 2) == (1, 2)", "column 1: a list, tuple, set or range"},
      {"a in [1, 2] == True", "column 6: a list, tuple, set or range"},
      {"a + [1]", "column 5: a list, tuple, set or range"},
      {"[[1]]", "column 2: a list, tuple, set or range"},
      {"abs([1])", "column 5: a list, tuple, set or range"},
      {"max([1], [2])", "column 5: a list, tuple, set or range"},
      {"a in range(range(3))", "column 12: a list, tuple, set or range"},
      {"any(x > 1 for x in [1])", "a generator or comprehension (`for`) is not supported"},
      {"a and or b", "column 7: expected a number, a string, a name or `(`, found `or`"},
      {"{a: 1}", "column 3: expected `}`, found `:`"},
      {"a ? : b", "column 5: expected a number, a string, a name or `(`, found `:`"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    expect_parse_error(cases[i].t, cases[i].want);
}

/* Kernel Tuner also takes a function; as text it is refused with what to write instead. */
static void python_functions_are_refused(void **state) {
  (void)state;
  static const char *const texts[] = {
      "lambda p: p['block_size_x'] <= 1024",
      "lambda: True",
      "def restrict(p): return p['block_size_x'] > 32",
      "p: p > 1",
      "a > 1 and lambda p: 1",
      "a > 1: True",
  };
  for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
    char *why = parse_error(texts[i]);
    if (!strstr(why, "a Python function or lambda is not accepted") ||
        !strstr(why, "a boolean expression over the parameter names, e.g. `block_size_x * "
                     "tile_size_x <= 1024`"))
      fail_why("expected the function hint parsing", texts[i], why);
    free(why);
  }
}

/* A quoted token is cut at 40 characters with "..."; foreign bytes are escaped. */
static void parse_messages_are_bounded(void **state) {
  (void)state;
  char text[300];
  memset(text, 'q', 200);
  text[200] = 0;
  char *why = parse_error(text);
  assert_contains(why, "unknown name `qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq...`");
  assert_true(strlen(why) < 120);
  free(why);
  snprintf(text, sizeof text, "a '%0200d'", 7);
  why = parse_error(text);
  assert_contains(why, "column 3: unexpected `'000000000000000000000000000000000000000...`");
  free(why);
  expect_parse_error("a \x01 b", "column 3: unexpected character `\\x01`");
  expect_parse_error("a \xc3\xa9", "column 3: unexpected character `\\xc3`");
  expect_parse_error("a 'caf\xc3\xa9'", "unexpected `'caf\\xc3\\xa9'` after a complete");
}

static void too_deep(const char *text, const char *col) {
  char *why = parse_error(text);
  if (!strstr(why, col) || !strstr(why, "more than 1000 levels of nested operations (the limit)"))
    fail_why("expected the nesting limit parsing", "(long text)", why);
  free(why);
}

/* Builds `head` n times, then `mid`, then `tail` n times. */
static char *repeat(const char *head, const char *mid, const char *tail, int n) {
  size_t hl = strlen(head), ml = strlen(mid), tl = strlen(tail);
  char *s = malloc((hl + tl) * (size_t)n + ml + 1), *p = s;
  assert_non_null(s);
  for (int i = 0; i < n; i++) memcpy(p, head, hl), p += hl;
  memcpy(p, mid, ml), p += ml;
  for (int i = 0; i < n; i++) memcpy(p, tail, tl), p += tl;
  *p = 0;
  return s;
}

static void nesting_is_limited(void **state) {
  (void)state;
  static const struct {
    const char *head, *mid, *tail;
    int n;
    const char *col;
  } deep[] = {
      {"(", "1", ")", 2000, "column 1001:"}, /* parentheses */
      {"-", "1", "", 2000, "column 1000:"},  /* a unary chain */
      {"~", "1", "", 2000, "column 1000:"},
      {"not ", "1", "", 2000, "column 3997:"},   /* `not` chains */
      {"2 ** ", "2", "", 12000, "column 4998:"}, /* a `**` chain (right-deep) */
      {"1 + ", "1", "", 12000, "column 3999:"},  /* a left-deep sum */
      {"a * ", "a", "", 12000, "column 3999:"},  /* a left-deep product */
      {"abs(", "1", ")", 2000, "column 2001:"},  /* calls (two levels each) */
      {"a in range(", "1", ")", 2000, "column 5501:"},
      {"[", "1", "]", 2000, "column 1001:"},            /* lists */
      {"(1, ", "1", ")", 2000, "column 3998:"},         /* tuples */
      {"a < (", "1", ")", 2000, "column 5001:"},        /* comparisons */
      {"1 if a else ", "1", "", 2000, "column 12001:"}, /* conditionals */
      {"a ? 1 : ", "1", "", 2000, "column 7997:"},
  };
  for (size_t i = 0; i < sizeof deep / sizeof deep[0]; i++) {
    char *text = repeat(deep[i].head, deep[i].mid, deep[i].tail, deep[i].n);
    too_deep(text, deep[i].col);
    free(text);
  }
}

/* Realistic restrictions with hundreds of terms pass; up to the limit the evaluator is safe
 * (this also runs under ASan, whose frames are larger). */
static void the_deepest_accepted_trees_evaluate(void **state) {
  (void)state;
  static const struct {
    const char *head, *mid, *tail;
    int n;
    int64_t v;
  } ok[] = {
      {"1 + ", "1", "", 999, 1000},  /* 1000 terms: depth 1000 */
      {"a - ", "a", "", 300, -1794}, /* a restriction of 300 terms */
      {"(", "7", ")", 999, 7},           {"-", "7", "", 999, -7},
      {"1 ** ", "1", "", 998, 1},        {"abs(", "-3", ")", 498, 3},
      {"0 if 0 else ", "5", "", 998, 5}, {"(1 + ", "1", ")", 998, 999},
  };
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
    char *text = repeat(ok[i].head, ok[i].mid, ok[i].tail, ok[i].n);
    cc_tval v = eval_ok(text);
    free(text);
    if (!cc_tval_is_integral(v) || v.i != ok[i].v)
      fail_msg("case %zu: got %lld, expected %lld", i, (long long)v.i, (long long)ok[i].v);
  }
  char *text = repeat("not ", "a", "", 999);
  cc_tval v = eval_ok(text);
  free(text);
  assert_int_equal(v.kind, CC_TV_BOOL);
  /* a 20 000-item list and a 10 000-link chain of comparisons are flat, not deep */
  text = repeat("", "a in [", "1,", 20000);
  strcpy(text + strlen(text) - 2, "6]");
  v = eval_ok(text);
  assert_true(v.kind == CC_TV_BOOL && v.i == 1);
  free(text);
  text = repeat("1 <= ", "1", "", 10000);
  v = eval_ok(text);
  assert_true(v.kind == CC_TV_BOOL && v.i == 1);
  free(text);
}

static void long_texts_are_refused(void **state) {
  (void)state;
  char *text = repeat("1+", "1", "", 100000); /* a 100 000-term sum */
  char *why = parse_error(text);
  assert_string_equal(
      why, "column 1: the expression is 200001 bytes long, more than the limit of 65536 bytes");
  free(why);
  free(text);
  text = repeat("2**", "2", "", 30000); /* 30 000 chained `**` */
  why = parse_error(text);
  assert_contains(why, "the expression is 90001 bytes long, more than the limit of 65536 bytes");
  free(why);
  free(text);
  text = repeat("2**", "2", "", 21000); /* within the length: refused for its depth */
  why = parse_error(text);
  assert_string_equal(why, "column 2999: more than 1000 levels of nested operations (the limit)");
  free(why);
  free(text);
  text = repeat("1+", "1", "", 32000); /* a 32 000-term sum within the length */
  why = parse_error(text);
  assert_string_equal(why, "column 2000: more than 1000 levels of nested operations (the limit)");
  free(why);
  free(text);
  text = repeat(" ", "1", "", 65535);
  assert_int_equal(eval_ok(text).i, 1); /* 65 536 bytes: the longest text accepted */
  free(text);
}

static void evaluation_errors(void **state) {
  (void)state;
  static const struct {
    const char *t;
    const char *want;
  } cases[] = {
      {"9223372036854775807 + 1", "column 21: integer overflow (results must fit in 64 bits)"},
      {"-9223372036854775807 - 2", "column 22: integer overflow"},
      {"3037000500 * 3037000500", "column 12: integer overflow"},
      {"2 ** 63", "column 3: integer overflow"},
      {"2 ** 1000000", "column 3: integer overflow"},
      {"(-9223372036854775807 - 1) // -1", "integer overflow"},
      {"-(-9223372036854775807 - 1)", "column 1: integer overflow"},
      {"1 << 63", "column 3: integer overflow"},
      {"3 << 62", "column 3: integer overflow"},
      {"1 << 64", "column 3: integer overflow"},
      {"len(range(-9223372036854775807 - 1, 9223372036854775807))", "column 1: integer overflow"},
      {"round(9223372036854775807, -19)", "column 1: integer overflow"},
      {"int('9223372036854775808')", "column 1: integer overflow"},
      {"log2(0)", "column 1: log2 of a value that is not positive"},
      {"1 / 0", "column 3: division by zero"},
      {"a / (b - 4)", "column 3: division by zero"},
      {"a // (b - 4)", "column 3: integer division or modulo by zero"},
      {"a % 0", "column 3: integer division or modulo by zero"},
      {"x % 0", "column 3: division or modulo by zero"},
      {"x // 0.0", "column 3: division or modulo by zero"},
      {"x / 0", "column 3: division by zero"},
      {"0 ** -1", "column 3: zero to a negative power"},
      {"0.0 ** -1", "column 5: zero to a negative power"},
      {"int(\"1.5\")", "column 1: int() of a string that is not an integer literal"},
      {"int(\"0x10\")", "column 1: int() of a string that is not an integer literal"},
      {"int(\"\")", "column 1: int() of a string that is not an integer literal"},
      {"int(\"1__0\")", "column 1: int() of a string that is not an integer literal"},
      {"int(\"_1\")", "column 1: int() of a string that is not an integer literal"},
      {"float(\"abc\")", "column 1: float() of a string that is not a number"},
      {"float(\"0x1p3\")", "column 1: float() of a string that is not a number"},
      {"float(\"1e\")", "column 1: float() of a string that is not a number"},
      {"float(\"\")", "column 1: float() of a string that is not a number"},
      {"a << -1", "column 3: negative shift count"},
      {"a >> -1", "column 3: negative shift count"},
      {"x & 1", "column 3: `&` needs integers, found a real"},
      {"~x", "column 1: `~` needs an integer, found a real"},
      {"x << 1", "column 3: `<<` needs integers, found a real"},
      {"dtype + 1", "column 7: a string where a number is needed"},
      {"dtype * 2", "column 7: a string where a number is needed"},
      {"-dtype", "column 1: a string where a number is needed"},
      {"abs(dtype)", "column 1: a string where a number is needed"},
      {"ceil(dtype)", "column 1: a string where a number is needed"},
      {"round(dtype)", "column 1: a string where a number is needed"},
      {"dtype < 1", "column 7: `<` between a string and a number"},
      {"1 >= dtype", "column 3: `>=` between a string and a number"},
      {"1 in 5", "column 3: `in` needs a list, a tuple, a range or a string on its right"},
      {"1 in dtype", "column 3: `in` a string needs a string on its left"},
      {"\"f\" in 1", "column 5: `in` needs a list, a tuple, a range or a string on its right"},
      {"len(5)", "column 1: len() needs a list, a tuple, a range or a string"},
      {"len(a)", "column 1: len() needs a list, a tuple, a range or a string"},
      {"any(a)", "column 1: any() needs a list, a tuple, a range or a string"},
      {"max(5)", "column 1: max() needs a list, a tuple, a range or a string"},
      {"min(a)", "column 1: min() needs a list, a tuple, a range or a string"},
      {"max([])", "column 1: max() of an empty sequence"},
      {"min(range(0))", "column 1: min() of an empty sequence"},
      {"max(empty)", "column 1: max() of an empty sequence"},
      {"max([1, \"a\"])", "column 1: `>` between a string and a number"},
      {"min(1, dtype)", "column 1: `<` between a string and a number"},
      {"a in range(1, x)", "column 6: range() takes integers, found a real"},
      {"a in range(1, 10, 0)", "column 6: range() step must not be zero"},
      {"a in range(dtype)", "column 6: range() takes integers, found a string"},
      {"round(x, 1.5)", "column 1: round() needs an integer number of digits"},
      {"round(float(\"nan\"))", "column 1: a NaN where an integer is needed"},
      {"round(float(\"inf\"))", "column 1: the value does not fit a 64-bit integer"},
      {"int(float(\"inf\"))", "column 1: the value does not fit a 64-bit integer"},
      {"int(float(\"nan\"))", "column 1: a NaN where an integer is needed"},
      {"ceil(float(\"inf\"))", "column 1: the value does not fit a 64-bit integer"},
      {"log2(0)", "column 1: log2 of a value that is not positive"},
      {"log2(-1)", "column 1: log2 of a value that is not positive"},
      {"abs(-9223372036854775807 - 1)", "column 1: integer overflow (results must fit in 64 bits)"},
      {"(-8) ** 0.5", "column 6: a negative number to a fractional power"},
      {"10.0 ** 400", "column 6: the result is too large for a real"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *why = eval_error(cases[i].t);
    if (!strstr(why, cases[i].want)) fail_why(cases[i].want, cases[i].t, why);
    free(why);
  }
}

/* Evaluation errors name the column, never a parameter or a string's value. */
static void evaluation_messages_are_bounded(void **state) {
  (void)state;
  static const char *const texts[] = {
      "dtype + 1", "int(dtype)", "float(dtype)", "dtype < 1", "max([dtype, 1])", "1 in dtype",
  };
  for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
    char *why = eval_error(texts[i]);
    if (strstr(why, "float") != NULL && strstr(why, "float()") == NULL)
      fail_why("a value in the message of", texts[i], why);
    if (strstr(why, "dtype")) fail_why("a name in the message of", texts[i], why);
    assert_true(strlen(why) < 100);
    free(why);
  }
  char *why = eval_error("dtype + 1");
  assert_string_equal(why, "column 7: a string where a number is needed");
  free(why);
}

/* Evaluation allocates nothing when it succeeds: with every allocation failing, it still
 * gives the value. */
static void evaluation_allocates_nothing(void **state) {
  (void)state;
  static const char *const texts[] = {
      "a in [1, 2, 6] and dtype in ('float', 'double') and a in range(0, 10, 2)",
      "any([a > 1, b < 0]) + len(range(a)) + len(dtype) + max([a, b]) + round(x, 1)",
      "round(1234.5, -2) + round(x) + int('12') + float('1.5') + (1 if a > b else 2)",
      "min(dtype) == 'a' and 'oa' in dtype and a << 2 == 24 and ~a == -7",
  };
  for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
    cc_expr e;
    char *why = NULL;
    cc_tval v;
    if (cc_expr_parse(texts[i], lookup, NULL, &e, &why) < 0) fail_why("parse", texts[i], why);
    setup_vars();
    cc_test_alloc_hook(1, 1);
    int r = cc_expr_eval(&e, VARS, &v, &why);
    cc_test_alloc_hook(0, 0);
    cc_expr_free(&e);
    if (r < 0) fail_why("eval", texts[i], why);
    assert_true(cc_tval_truthy(v));
  }
}

/* Out of memory at any allocation of a parse: refused cleanly (no leak, under ASan). */
static void parse_survives_failed_allocations(void **state) {
  (void)state;
  const char *text = "a in [1, 2] and dtype == 'float' and max(a, b, 3) < 7 and 1 < b < a";
  for (long k = 1; k < 40; k++) {
    cc_expr e;
    char *why = NULL;
    cc_test_alloc_hook(1, k);
    int r = cc_expr_parse(text, lookup, NULL, &e, &why);
    cc_test_alloc_hook(0, 0);
    if (r == 0) {
      cc_expr_free(&e);
      break;
    }
    free(why);
  }
}

static void uses_names_its_variables(void **state) {
  (void)state;
  cc_expr e;
  char *why = NULL;
  assert_int_equal(cc_expr_parse("ceil(a / block_size_x)", lookup, NULL, &e, &why), 0);
  assert_true(cc_expr_uses(&e, 0));
  assert_false(cc_expr_uses(&e, 1));
  assert_true(cc_expr_uses(&e, 3));
  cc_expr_free(&e);
  assert_int_equal(cc_expr_parse("dtype in ['a', a] and 1 < b < max([x])", lookup, NULL, &e, &why),
                   0);
  for (int i = 0; i < 5; i++) assert_int_equal(cc_expr_uses(&e, i), i != 3);
  cc_expr_free(&e);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(integers_follow_python),
      cmocka_unit_test(reals_and_true_division),
      cmocka_unit_test(logic_both_spellings_and_chains),
      cmocka_unit_test(kernel_tuner_idioms),
      cmocka_unit_test(strings_compare_and_contain),
      cmocka_unit_test(bools_are_integers_in_arithmetic),
      cmocka_unit_test(parse_errors_name_the_column),
      cmocka_unit_test(python_functions_are_refused),
      cmocka_unit_test(parse_messages_are_bounded),
      cmocka_unit_test(nesting_is_limited),
      cmocka_unit_test(the_deepest_accepted_trees_evaluate),
      cmocka_unit_test(long_texts_are_refused),
      cmocka_unit_test(evaluation_errors),
      cmocka_unit_test(evaluation_messages_are_bounded),
      cmocka_unit_test(evaluation_allocates_nothing),
      cmocka_unit_test(parse_survives_failed_allocations),
      cmocka_unit_test(uses_names_its_variables),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
