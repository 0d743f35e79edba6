/* test_tune_values.c -- one value, one meaning: a parameter's texts read once by Python 3's
 * literal rules (integers in any base, reals, bools, strings), refused where Python and C would
 * read them apart ("010") or where they cannot be one line of C; repeats found by value; every
 * text of a configuration written from those values (people's, the compile's, JSON) with names
 * and values of any length; spaces of many values and many parameters built in linear time;
 * restrictions that cannot be evaluated counted apart, the first named. */
#include "support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static cucore_tune_space *space_new(void) {
  cucore_tune_space *s = NULL;
  assert_ok(cucore_tune_space_create(&s));
  return s;
}

static void add(cucore_tune_space *s, const char *name, const char *const *v, size_t n) {
  assert_ok(cucore_tune_space_add_param(s, name, v, n, CUCORE_TUNE_PARAM_AUTO));
}

static void refused(const char *name, const char *const *v, size_t n, const char *want) {
  cucore_tune_space *s = space_new();
  assert_status(cucore_tune_space_add_param(s, name, v, n, CUCORE_TUNE_PARAM_AUTO),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), want);
  size_t count = 1;
  assert_ok(cucore_tune_space_get_param_count(s, &count));
  assert_int_equal(count, 0); /* nothing half-added */
  cucore_tune_space_destroy(s);
}

/* Each text read as Python 3 reads the literal; c_text is what a compile sees. */
static void values_read_as_python_literals(void **state) {
  (void)state;
  static const struct {
    const char *text;
    cucore_tune_value_type type;
    long long i;
    double d;
    const char *c_text;
  } cases[] = {
      {"64", CUCORE_TUNE_VALUE_INT, 64, 64, "64"},
      {"-3", CUCORE_TUNE_VALUE_INT, -3, -3, "-3"},
      {"+7", CUCORE_TUNE_VALUE_INT, 7, 7, "7"},
      {"0x40", CUCORE_TUNE_VALUE_INT, 64, 64, "64"},
      {"0o17", CUCORE_TUNE_VALUE_INT, 15, 15, "15"},
      {"0b101", CUCORE_TUNE_VALUE_INT, 5, 5, "5"},
      {"00", CUCORE_TUNE_VALUE_INT, 0, 0, "0"},
      {"-9223372036854775808", CUCORE_TUNE_VALUE_INT, INT64_MIN, -9223372036854775808.0,
       "(-9223372036854775807-1)"},
      {"0.5", CUCORE_TUNE_VALUE_REAL, 0, 0.5, "0.5"},
      {"1e-3", CUCORE_TUNE_VALUE_REAL, 0, 1e-3, "1e-3"},
      {"2.", CUCORE_TUNE_VALUE_REAL, 0, 2.0, "2."},
      {".25", CUCORE_TUNE_VALUE_REAL, 0, 0.25, ".25"},
      {"true", CUCORE_TUNE_VALUE_BOOL, 1, 1, "true"},
      {"False", CUCORE_TUNE_VALUE_BOOL, 0, 0, "false"},
      {"float", CUCORE_TUNE_VALUE_STRING, 0, 0, "float"},
      {"unsigned int", CUCORE_TUNE_VALUE_STRING, 0, 0, "unsigned int"},
      {"1.0f", CUCORE_TUNE_VALUE_STRING, 0, 0, "1.0f"},
      {"inf", CUCORE_TUNE_VALUE_STRING, 0, 0, "inf"},
      {"0x", CUCORE_TUNE_VALUE_STRING, 0, 0, "0x"},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    cucore_tune_space *s = space_new();
    const char *v[] = {cases[k].text};
    add(s, "P", v, 1);
    cucore_tune_value got;
    assert_ok(cucore_tune_space_get_value(s, 0, 0, &got));
    if (got.type != cases[k].type || strcmp(got.c_text, cases[k].c_text) != 0 ||
        strcmp(got.text, cases[k].text) != 0)
      fail_msg("`%s`: type %d c_text `%s`, want type %d `%s`", cases[k].text, (int)got.type,
               got.c_text, (int)cases[k].type, cases[k].c_text);
    if (got.type == CUCORE_TUNE_VALUE_INT || got.type == CUCORE_TUNE_VALUE_BOOL)
      assert_true(got.i == cases[k].i);
    if (got.type != CUCORE_TUNE_VALUE_STRING) assert_true(got.d == cases[k].d);
    cucore_tune_space_destroy(s);
  }
}

static void texts_that_mean_two_things_are_refused(void **state) {
  (void)state;
  const char *octal[] = {"8", "010"};
  refused("REPS", octal, 2, "value 2 `010` has a leading zero");
  const char *big[] = {"99999999999999999999"};
  refused("N", big, 1, "outside 64-bit integers");
  const char *huge[] = {"1e999"};
  refused("F", huge, 1, "beyond a double's range");
  const char *nl[] = {"a\nb"};
  refused("VT", nl, 1, "the control byte 0x0a at offset 1");
  const char *bad[] = {"ok", "\xff"};
  refused("VT", bad, 2, "value 2 has the non-UTF-8 byte 0xff");
  const char *empty[] = {""};
  refused("E", empty, 1, "value 1 is empty");
}

/* "0x10" and "16" are one value; "1" and "1.0" are an int and a real (-D1 and -D1.0 differ). */
static void repeats_are_found_by_value(void **state) {
  (void)state;
  const char *hex[] = {"4", "0x10", "8", "16"};
  refused("BS", hex, 4, "`0x10` (value 2) and `16` (value 4) are equal");
  const char *same[] = {"float", "double", "float"};
  refused("T", same, 3, "the value `float` twice (values 1 and 3)");
  const char *bools[] = {"true", "True"};
  refused("B", bools, 2, "are equal");
  cucore_tune_space *s = space_new();
  const char *kinds[] = {"1", "1.0", "true", "\"1\""};
  add(s, "K", kinds, 4); /* an int, a real, a bool and a string */
  cucore_tune_space_destroy(s);
}

static char *text(cucore_tune_space *s, uint64_t index, cucore_tune_text what) {
  size_t need = 0;
  assert_ok(cucore_tune_space_get_config_text(s, index, what, NULL, 0, &need));
  char *buf = malloc(need + 1);
  assert_non_null(buf);
  assert_ok(cucore_tune_space_get_config_text(s, index, what, buf, need + 1, NULL));
  assert_int_equal(strlen(buf), need);
  return buf;
}

static void expect_text(cucore_tune_space *s, uint64_t index, cucore_tune_text what,
                        const char *want) {
  char *got = text(s, index, what);
  assert_string_equal(got, want);
  free(got);
}

/* A value with a space stays one value in every text: never `#define VT unsigned` + `int`. */
static void every_text_is_written_from_the_values(void **state) {
  (void)state;
  cucore_tune_space *s = space_new();
  const char *vt[] = {"unsigned int", "float"}, *bs[] = {"0x40"}, *f[] = {"True"};
  const char *r[] = {"0.50"}, *q[] = {"a\"b=c"};
  add(s, "VT", vt, 2);
  add(s, "BS", bs, 1);
  add(s, "F", f, 1);
  add(s, "R", r, 1);
  add(s, "Q", q, 1);
  expect_text(s, 0, CUCORE_TUNE_TEXT_PARAMS,
              "VT=\"unsigned int\" BS=0x40 F=True R=0.50 Q=\"a\\\"b=c\"");
  expect_text(s, 0, CUCORE_TUNE_TEXT_DEFINES,
              "-DVT=unsigned int\n-DBS=64\n-DF=true\n-DR=0.50\n-DQ=a\"b=c");
  expect_text(s, 0, CUCORE_TUNE_TEXT_JSON,
              "{\"VT\":\"unsigned int\",\"BS\":64,\"F\":true,\"R\":0.5,\"Q\":\"a\\\"b=c\"}");
  assert_ok(cucore_tune_space_set_kernel(s, "k<{VT}, {BS}>"));
  expect_text(s, 1, CUCORE_TUNE_TEXT_KERNEL, "k<float, 64>");
  cucore_tune_value v;
  assert_ok(cucore_tune_space_get_param_value(s, 0, 1, &v));
  assert_string_equal(v.text, "float");
  assert_status(cucore_tune_space_get_param_value(s, 0, 2, &v), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_tune_space_get_value(s, 2, 0, &v), CUCORE_INVALID_ARGUMENT);
  cucore_tune_space_destroy(s);
}

/* Names and values longer than any buffer the tune ever had (128-byte names, 1 KB of text,
 * 4 KB of defines) come back whole. */
static void long_names_and_values_come_back_whole(void **state) {
  (void)state;
  size_t n = 5000;
  char *name = malloc(n + 1), *value = malloc(n + 1);
  assert_non_null(name);
  assert_non_null(value);
  memset(name, 'N', n);
  memset(value, '7', n);
  name[n] = value[n] = 0;
  value[0] = '1';
  cucore_tune_space *s = space_new();
  const char *v1[] = {"12345"}, *v2[] = {"float"};
  add(s, name, v1, 1);
  add(s, "T", v2, 1);
  cucore_tune_param_info info;
  assert_ok(cucore_tune_space_get_param(s, 0, &info));
  assert_int_equal(strlen(info.name), n);
  char *defines = text(s, 0, CUCORE_TUNE_TEXT_DEFINES);
  assert_int_equal(strlen(defines), 2 + n + 1 + 5 + 1 + 9);
  assert_non_null(strstr(defines, "=12345\n-DT=float"));
  free(defines);
  cucore_tune_space_destroy(s);
  const char *v3[] = {value};
  refused("S", v3, 1, "outside 64-bit integers"); /* 5000 digits */
  memset(value, 'x', n);                          /* 5000 letters: a string, whole */
  s = space_new();
  add(s, "S", v3, 1);
  char *json = text(s, 0, CUCORE_TUNE_TEXT_JSON);
  assert_int_equal(strlen(json), n + 8); /* {"S":"..."} */
  free(json);
  cucore_tune_space_destroy(s);
  free(name);
  free(value);
}

/* 200 000 values of one parameter and 100 000 one-value parameters: built, counted and their
 * texts written in linear time (the repeat check sorts; names are hashed). */
static void many_values_and_many_parameters(void **state) {
  (void)state;
  size_t n = 200000;
  char **v = malloc(n * sizeof *v);
  assert_non_null(v);
  for (size_t i = 0; i < n; i++) {
    v[i] = malloc(16);
    snprintf(v[i], 16, "%zu", i);
  }
  cucore_tune_space *s = space_new();
  add(s, "P", (const char *const *)v, n);
  cucore_tune_counts c;
  assert_ok(cucore_tune_space_count(s, &c));
  assert_int_equal(c.raw, n);
  assert_int_equal(c.compiles, n);
  snprintf(v[n - 1], 16, "%zu", n / 2); /* one value twice, found by sorting */
  assert_status(cucore_tune_space_add_param(s, "Q", (const char *const *)v, n,
                                            CUCORE_TUNE_PARAM_AUTO),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "twice");
  cucore_tune_space_destroy(s);
  s = space_new();
  size_t np = 100000;
  for (size_t i = 0; i < np; i++) {
    char pname[32];
    snprintf(pname, sizeof pname, "p%zu", i);
    const char *one[] = {v[i]};
    add(s, pname, one, 1);
  }
  assert_ok(cucore_tune_space_restrict(s, "p99999 == 99999 and p0 == 0"));
  assert_ok(cucore_tune_space_count(s, &c));
  assert_int_equal(c.raw, 1);
  assert_int_equal(c.runnable, 1);
  cucore_tune_space_destroy(s);
  for (size_t i = 0; i < n; i++) free(v[i]);
  free(v);
}

/* A restriction that fails to evaluate is not a false one: counted apart, the first named. */
static void restriction_errors_are_counted_apart(void **state) {
  (void)state;
  cucore_tune_space *s = space_new();
  const char *a[] = {"1", "2", "3"}, *b[] = {"0", "1", "2"};
  add(s, "A", a, 3);
  add(s, "B", b, 3);
  assert_ok(cucore_tune_space_restrict(s, "A > 1"));
  assert_ok(cucore_tune_space_restrict(s, "A % B == 0"));
  cucore_tune_counts c;
  assert_ok(cucore_tune_space_count(s, &c));
  /* A=1: 3 false; A=2,3 with B=0: 2 errors; A=2: B=1 ok, B=2 ok; A=3: B=1 ok, B=2 false */
  assert_int_equal(c.raw, 9);
  assert_int_equal(c.restricted, 4);
  assert_int_equal(c.restriction_errors, 2);
  assert_int_equal(c.first_restriction_error, 3); /* A=2 B=0 */
  assert_int_equal(c.after_restrictions, 3);
  cucore_tune_config cfg;
  assert_ok(cucore_tune_space_get_config(s, c.first_restriction_error, &cfg));
  assert_int_equal(cfg.verdict, CUCORE_TUNE_RESTRICTED);
  assert_int_equal(cfg.restriction, 2);
  assert_int_equal(cfg.restriction_failed, 1);
  assert_contains(cfg.reason, "restriction 2 could not be evaluated: column 3:");
  assert_contains(cfg.reason, "by zero");
  cucore_tune_space_destroy(s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(values_read_as_python_literals),
      cmocka_unit_test(texts_that_mean_two_things_are_refused),
      cmocka_unit_test(repeats_are_found_by_value),
      cmocka_unit_test(every_text_is_written_from_the_values),
      cmocka_unit_test(long_names_and_values_come_back_whole),
      cmocka_unit_test(many_values_and_many_parameters),
      cmocka_unit_test(restriction_errors_are_counted_apart),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
