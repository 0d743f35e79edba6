/* test_grow.c -- cc_grow, the one growth step of every growable array in src/: capacity
 * doubles from 8, contents survive, overflow and allocation failure leave the array intact
 * and record CUCORE_HOST_OUT_OF_MEMORY naming the array. */
#include "support.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

static void grows_and_keeps_contents(void **state) {
  (void)state;
  int *v = NULL;
  size_t cap = 0;
  for (size_t i = 0; i < 1000; i++) {
    int *n = cc_grow(v, &cap, i + 1, sizeof *n, "the test list");
    assert_non_null(n);
    v = n;
    v[i] = (int)(i * 3);
    assert_true(cap >= i + 1);
    assert_true(cap >= 8);
    assert_int_equal(cap & (cap - 1), 0); /* powers of two from 8 */
  }
  for (size_t i = 0; i < 1000; i++) assert_int_equal(v[i], (int)(i * 3));
  size_t before = cap;
  assert_ptr_equal(cc_grow(v, &cap, 10, sizeof *v, "the test list"), v); /* room already */
  assert_int_equal(cap, before);
  free(v);
}

static void overflow_is_refused_and_named(void **state) {
  (void)state;
  int *v = NULL;
  size_t cap = 0;
  v = cc_grow(v, &cap, 4, sizeof *v, "the test list");
  assert_non_null(v);
  v[0] = 42;
  size_t before = cap;
  cucore_clear_error();
  assert_null(cc_grow(v, &cap, SIZE_MAX / 2, 16, "the huge list"));
  assert_int_equal(cucore_last_status(), CUCORE_HOST_OUT_OF_MEMORY);
  assert_non_null(strstr(cucore_last_error(), "the huge list"));
  assert_int_equal(cap, before);
  assert_int_equal(v[0], 42);
  free(v);
}

static void allocation_failure_keeps_the_array(void **state) {
  (void)state;
  int *v = NULL;
  size_t cap = 0;
  v = cc_grow(v, &cap, 8, sizeof *v, "the test list");
  assert_non_null(v);
  v[7] = 7;
  cucore_clear_error();
  cc_test_alloc_hook(1, 1);
  assert_null(cc_grow(v, &cap, 9, sizeof *v, "the failing list"));
  cc_test_alloc_hook(0, 0);
  assert_int_equal(cucore_last_status(), CUCORE_HOST_OUT_OF_MEMORY);
  assert_non_null(strstr(cucore_last_error(), "the failing list"));
  assert_int_equal(cap, 8);
  assert_int_equal(v[7], 7);
  free(v);
}

/* A fixed field of a public struct: a text that fits is kept whole; a longer one is cut with
 * the cut said, never silently, and the field stays terminated. */
static void a_fixed_field_says_when_it_cuts(void **state) {
  (void)state;
  char field[64];
  cc_format_field(field, sizeof field, "restriction %d is false", 2);
  assert_string_equal(field, "restriction 2 is false");
  char long_text[300];
  memset(long_text, 'x', sizeof long_text - 1);
  long_text[sizeof long_text - 1] = 0;
  cc_format_field(field, sizeof field, "why: %s", long_text);
  assert_int_equal(strlen(field), sizeof field - 1);
  assert_non_null(strstr(field, "(cut: 304 bytes, the field holds 63)"));
  assert_memory_equal(field, "why: xxx", 8);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(grows_and_keeps_contents),
      cmocka_unit_test(overflow_is_refused_and_named),
      cmocka_unit_test(allocation_failure_keeps_the_array),
      cmocka_unit_test(a_fixed_field_says_when_it_cuts),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
