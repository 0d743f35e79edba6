/* test_tune_expr.c -- the tune expression language: Python's number rules, precedence,
 * chained comparisons, both spellings of the logic operators, functions, and errors that name
 * the column; never evaluated as code. Expected values are worked out by hand in the tables
 * (what Python 3 prints for the same text, with a=6, b=4, x=2.5). */
#include "support.h"

#include <math.h>
#include <stdio.h>

#include "tune/expr.h"

static const char *const NAMES[] = {"a", "b", "x", "block_size_x"};

static int lookup(void *ctx, const char *name, size_t len) {
  (void)ctx;
  for (int i = 0; i < 4; i++)
    if (strlen(NAMES[i]) == len && memcmp(NAMES[i], name, len) == 0) return i;
  return -1;
}

static cc_tval VARS[4];

static void setup_vars(void) {
  VARS[0] = cc_tval_int(6);
  VARS[1] = cc_tval_int(4);
  VARS[2] = cc_tval_real(2.5);
  VARS[3] = cc_tval_int(128);
}

static cc_tval eval_ok(const char *text) {
  cc_expr e;
  char *why = NULL;
  if (cc_expr_parse(text, lookup, NULL, &e, &why) < 0) fail_msg("parse `%s`: %s", text, why);
  cc_tval v;
  setup_vars();
  if (cc_expr_eval(&e, VARS, &v, &why) < 0) fail_msg("eval `%s`: %s", text, why);
  cc_expr_free(&e);
  return v;
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
      {"block_size_x // 32", 4},
      {"a > b ? a : b", 6},
      {"a < b ? a : b + 1", 5},
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
      {"a / b", 1.5},
      {"x * 2", 5.0},
      {"7.5 // 2", 3.0},
      {"2 ** -1", 0.5},
      {"log2(block_size_x)", 7.0},
      {"1e3 / 4", 250.0},
      {".5 + x", 3.0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    cc_tval v = eval_ok(cases[i].t);
    if (cc_tval_is_integral(v) || fabs(v.d - cases[i].v) > 1e-12)
      fail_msg("`%s`: got %g (%s), expected the real %g", cases[i].t, cc_tval_num(v),
               cc_tval_is_integral(v) ? "integer" : "real", cases[i].v);
  }
}

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
      {"1 or 1 // 0", 1}, /* short-circuit: no division */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    cc_tval v = eval_ok(cases[i].t);
    if (!cc_tval_is_integral(v) || v.i != cases[i].v)
      fail_msg("`%s`: got %g, expected %d", cases[i].t, cc_tval_num(v), cases[i].v);
  }
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
      {"system(1)", "column 1: `system` is not a function"},
      {"min(a)", "min takes a wrong number of arguments"},
      {"ceil(a, b)", "ceil takes a wrong number"},
      {"a ? b", "column 6: expected `:`"},
      {"12abc", "column 1: a malformed number"},
      {"__import__('os')", "`__import__` is not a function"},
      {"os.system", "unexpected character `.`"},
      {"a and", "column 6: expected a number"},
      {"99999999999999999999", "out of range"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    cc_expr e;
    char *why = NULL;
    if (cc_expr_parse(cases[i].t, lookup, NULL, &e, &why) == 0)
      fail_msg("`%s` parsed; expected: %s", cases[i].t, cases[i].want);
    assert_contains(why, cases[i].want);
  }
}

static void deep_nesting_is_refused(void **state) {
  (void)state;
  char text[400];
  memset(text, '(', 200);
  strcpy(text + 200, "1");
  memset(text + 201, ')', 198);
  text[399] = 0;
  cc_expr e;
  char *why = NULL;
  assert_int_equal(cc_expr_parse(text, lookup, NULL, &e, &why), -1);
  assert_contains(why, "nested too deeply");
  char minus[300];
  memset(minus, '-', 200);
  strcpy(minus + 200, "1");
  assert_int_equal(cc_expr_parse(minus, lookup, NULL, &e, &why), -1);
  assert_contains(why, "nested too deeply");
}

static void evaluation_errors(void **state) {
  (void)state;
  static const struct {
    const char *t;
    const char *want;
  } cases[] = {
      {"a // (b - 4)", "column 3: integer division or modulo by zero"},
      {"a % 0", "modulo by zero"},
      {"x / 0", "division by zero"},
      {"9223372036854775807 + 1", "integer overflow"},
      {"2 ** 63", "integer overflow"},
      {"log2(0)", "log2 of a value that is not positive"},
  };
  setup_vars();
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    cc_expr e;
    char *why = NULL;
    if (cc_expr_parse(cases[i].t, lookup, NULL, &e, &why) < 0)
      fail_msg("parse `%s`: %s", cases[i].t, why);
    cc_tval v;
    int r = cc_expr_eval(&e, VARS, &v, &why);
    cc_expr_free(&e);
    if (r == 0)
      fail_msg("`%s` evaluated to %g; expected: %s", cases[i].t, cc_tval_num(v), cases[i].want);
    assert_contains(why, cases[i].want);
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
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(integers_follow_python),
      cmocka_unit_test(reals_and_true_division),
      cmocka_unit_test(logic_both_spellings_and_chains),
      cmocka_unit_test(parse_errors_name_the_column),
      cmocka_unit_test(deep_nesting_is_refused),
      cmocka_unit_test(evaluation_errors),
      cmocka_unit_test(uses_names_its_variables),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
