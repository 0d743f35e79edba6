/* test_compare_elements.c -- cucore_compare_elements, the one element comparison of the tune's
 * check and `cucore run --expect`: integers byte for byte without a tolerance, floating point
 * within rtol/atol (numpy's defaults for a negative one), NaN equal to NaN, an infinity only to
 * itself, half and bfloat16 decoded from known bit patterns, the list of bad indices and its
 * cap, the largest errors, and every invalid argument refused with a message naming it. */
#include "support.h"

#include <math.h>

/* Compares a and b (n elements) and returns the result (the call must succeed). */
static cucore_compare_result cmp(const void *got, const void *want, size_t n, int code, size_t size,
                                 double rtol, double atol) {
  cucore_compare_result r;
  memset(&r, 0x5a, sizeof r);
  assert_ok(cucore_compare_elements(got, want, n, code, size, rtol, atol, NULL, 0, &r));
  return r;
}

static void exact_integers(void **state) {
  (void)state;
  int32_t got[] = {1, 2, 3, 4}, want[] = {1, 2, 4, 4};
  cucore_compare_result r = cmp(got, want, 4, CUCORE_DTYPE_INT, 4, -1, -1);
  assert_int_equal(r.mismatches, 1);
  assert_int_equal(r.first, 2);
  assert_true(r.max_abs_err == 1);
  assert_true(r.max_rel_err == 0.25);
  /* A tolerance given: integers compare as numbers within it. */
  r = cmp(got, want, 4, CUCORE_DTYPE_INT, 4, -1, 1);
  assert_int_equal(r.mismatches, 0);
  assert_int_equal(r.first, 4);
  assert_true(r.max_abs_err == 0 && r.max_rel_err == 0);
  r = cmp(got, want, 4, CUCORE_DTYPE_INT, 4, 0.5, -1); /* 1 <= 1e-8 + 0.5 * 4 */
  assert_int_equal(r.mismatches, 0);
  /* Exact means the bytes: two u64 values one apart that are the same double. */
  uint64_t big[] = {UINT64_MAX}, big1[] = {UINT64_MAX - 1};
  assert_int_equal(cmp(big, big1, 1, CUCORE_DTYPE_UINT, 8, -1, -1).mismatches, 1);
  assert_int_equal(cmp(big, big1, 1, CUCORE_DTYPE_UINT, 8, 0, 0).mismatches, 0);
  /* Signed and unsigned decoding of each size. */
  int8_t i8g[] = {-128}, i8w[] = {127};
  r = cmp(i8g, i8w, 1, CUCORE_DTYPE_INT, 1, 0, 0);
  assert_true(r.max_abs_err == 255);
  uint8_t u8g[] = {0xff}, u8w[] = {0};
  assert_true(cmp(u8g, u8w, 1, CUCORE_DTYPE_UINT, 1, 0, 0).max_abs_err == 255);
  uint16_t u16g[] = {65535}, u16w[] = {0};
  assert_true(cmp(u16g, u16w, 1, CUCORE_DTYPE_UINT, 2, 0, 0).max_abs_err == 65535);
  int16_t i16g[] = {-1}, i16w[] = {1};
  assert_true(cmp(i16g, i16w, 1, CUCORE_DTYPE_INT, 2, 0, 0).max_abs_err == 2);
  uint32_t u32g[] = {4000000000u}, u32w[] = {0};
  assert_true(cmp(u32g, u32w, 1, CUCORE_DTYPE_UINT, 4, 0, 0).max_abs_err == 4e9);
  int64_t i64g[] = {-5}, i64w[] = {5};
  r = cmp(i64g, i64w, 1, CUCORE_DTYPE_INT, 8, 0, 0);
  assert_true(r.max_abs_err == 10 && r.max_rel_err == 2);
}

static void floats_within_tolerance(void **state) {
  (void)state;
  /* Defaults (rtol 1e-5, atol 1e-8) for floats even when neither is given. */
  double want[] = {1, 100, 0, -2}, got[] = {1 + 1e-6, 100.5, 5e-9, -2};
  cucore_compare_result r = cmp(got, want, 4, CUCORE_DTYPE_FLOAT, 8, -1, -1);
  assert_int_equal(r.mismatches, 1);
  assert_int_equal(r.first, 1);
  assert_true(r.max_abs_err == 0.5);
  assert_true(r.max_rel_err == 0.005);
  /* rtol alone lets 100.5 pass; atol alone too. */
  assert_int_equal(cmp(got, want, 4, CUCORE_DTYPE_FLOAT, 8, 0.01, -1).mismatches, 0);
  assert_int_equal(cmp(got, want, 4, CUCORE_DTYPE_FLOAT, 8, -1, 0.5).mismatches, 0);
  /* No tolerance at all: only equal values, the errors over the mismatches only. */
  r = cmp(got, want, 4, CUCORE_DTYPE_FLOAT, 8, 0, 0);
  assert_int_equal(r.mismatches, 3);
  assert_int_equal(r.first, 0);
  assert_true(r.max_abs_err == 0.5);
  assert_true(isinf(r.max_rel_err)); /* 5e-9 against 0 */
  /* The bound itself passes: |got - want| <= atol + rtol * |want|. */
  float fw[] = {4}, fg[] = {5};
  assert_int_equal(cmp(fg, fw, 1, CUCORE_DTYPE_FLOAT, 4, 0.25, 0).mismatches, 0);
  assert_int_equal(cmp(fg, fw, 1, CUCORE_DTYPE_FLOAT, 4, 0.125, 0.5).mismatches, 0);
  assert_int_equal(cmp(fg, fw, 1, CUCORE_DTYPE_FLOAT, 4, 0.125, 0.375).mismatches, 1);
  assert_int_equal(cmp(fg, fw, 1, CUCORE_DTYPE_FLOAT, 4, 0.2, 0).mismatches, 1);
}

static void nan_and_inf(void **state) {
  (void)state;
  float inf = INFINITY, nan = NAN;
  float got[] = {nan, nan, 1, inf, inf, -inf, inf, 1e30f};
  float want[] = {nan, 1, nan, inf, -inf, -inf, 1e30f, inf};
  /* Any tolerance: NaN matches only NaN, an infinity only itself. */
  cucore_compare_result r = cmp(got, want, 8, CUCORE_DTYPE_FLOAT, 4, 1e30, 1e30);
  assert_int_equal(r.mismatches, 5); /* [1], [2], [4], [6], [7] */
  assert_int_equal(r.first, 1);
  assert_true(isinf(r.max_abs_err) && r.max_abs_err > 0);
  assert_true(isinf(r.max_rel_err) && r.max_rel_err > 0);
  /* Only the matching ones: no error at all. */
  assert_int_equal(cmp(got, want, 1, CUCORE_DTYPE_FLOAT, 4, -1, -1).mismatches, 0);
  r = cmp(got + 3, want + 3, 1, CUCORE_DTYPE_FLOAT, 4, -1, -1);
  assert_int_equal(r.mismatches, 0);
  assert_true(r.max_abs_err == 0);
}

static void half_and_bfloat16(void **state) {
  (void)state;
  /* binary16: 1.0, 1 + 2^-10, the smallest subnormal 2^-24, -2, inf, NaN (two payloads). */
  uint16_t one = 0x3c00, next = 0x3c01, tiny = 0x0001, zero = 0x0000, minus2 = 0xc000;
  cucore_compare_result r = cmp(&next, &one, 1, CUCORE_DTYPE_FLOAT, 2, 0, 0);
  assert_int_equal(r.mismatches, 1);
  assert_true(r.max_abs_err == ldexp(1, -10));
  assert_true(r.max_rel_err == ldexp(1, -10));
  assert_int_equal(cmp(&next, &one, 1, CUCORE_DTYPE_FLOAT, 2, 0, ldexp(1, -10)).mismatches, 0);
  assert_true(cmp(&tiny, &zero, 1, CUCORE_DTYPE_FLOAT, 2, 0, 0).max_abs_err == ldexp(1, -24));
  r = cmp(&minus2, &one, 1, CUCORE_DTYPE_FLOAT, 2, 0, 0);
  assert_true(r.max_abs_err == 3 && r.max_rel_err == 3);
  uint16_t hinf = 0x7c00, hninf = 0xfc00, hnan[] = {0x7e00, 0x7e01}, hmax = 0x7bff;
  assert_int_equal(cmp(&hinf, &hinf, 1, CUCORE_DTYPE_FLOAT, 2, 0, 0).mismatches, 0);
  assert_int_equal(cmp(&hinf, &hninf, 1, CUCORE_DTYPE_FLOAT, 2, 1, 1).mismatches, 1);
  assert_int_equal(cmp(&hnan[0], &hnan[1], 1, CUCORE_DTYPE_FLOAT, 2, 0, 0).mismatches, 0);
  assert_true(cmp(&hmax, &zero, 1, CUCORE_DTYPE_FLOAT, 2, 0, 0).max_abs_err == 65504);
  /* bfloat16: 1.0, 1 + 2^-7, -3; the same 0x3f80 read as a half is 1.875. */
  uint16_t b1 = 0x3f80, bnext = 0x3f81, bm3 = 0xc040;
  r = cmp(&bnext, &b1, 1, CUCORE_DTYPE_BFLOAT, 2, 0, 0);
  assert_true(r.max_abs_err == ldexp(1, -7));
  r = cmp(&bm3, &b1, 1, CUCORE_DTYPE_BFLOAT, 2, 0, 0);
  assert_true(r.max_abs_err == 4 && r.max_rel_err == 4);
  assert_true(cmp(&b1, &one, 1, CUCORE_DTYPE_FLOAT, 2, 0, 0).max_abs_err == 0.875);
  uint16_t binf = 0x7f80, bnan = 0x7fc0;
  assert_int_equal(cmp(&bnan, &bnan, 1, CUCORE_DTYPE_BFLOAT, 2, 0, 0).mismatches, 0);
  assert_int_equal(cmp(&binf, &b1, 1, CUCORE_DTYPE_BFLOAT, 2, 1e30, 1e30).mismatches, 1);
}

static void bad_indices_and_cap(void **state) {
  (void)state;
  int32_t got[10] = {0}, want[10] = {0};
  for (int k = 1; k < 10; k += 2) got[k] = k;
  size_t bad[8];
  for (int k = 0; k < 8; k++) bad[k] = 99;
  cucore_compare_result r;
  assert_ok(cucore_compare_elements(got, want, 10, CUCORE_DTYPE_INT, 4, -1, -1, bad, 3, &r));
  assert_int_equal(r.mismatches, 5);
  assert_int_equal(r.first, 1);
  assert_int_equal(bad[0], 1);
  assert_int_equal(bad[1], 3);
  assert_int_equal(bad[2], 5);
  assert_int_equal(bad[3], 99); /* past the cap: untouched */
  assert_true(r.max_abs_err == 9 && isinf(r.max_rel_err));
  assert_ok(cucore_compare_elements(got, want, 10, CUCORE_DTYPE_INT, 4, -1, -1, bad, 8, &r));
  size_t all[] = {1, 3, 5, 7, 9};
  for (int k = 0; k < 5; k++) assert_int_equal(bad[k], all[k]);
  assert_int_equal(bad[5], 99);
  /* Nothing to compare: no mismatch, `first` is the count, NULL buffers allowed. */
  assert_ok(cucore_compare_elements(NULL, NULL, 0, CUCORE_DTYPE_FLOAT, 4, -1, -1, bad, 8, &r));
  assert_int_equal(r.mismatches, 0);
  assert_int_equal(r.first, 0);
}

/* Refused with INVALID_ARGUMENT, the message naming `what`, *result untouched. */
static void refused(cucore_status st, const cucore_compare_result *r, const char *what) {
  assert_int_equal(CUCORE_CODE(st), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "cucore_compare_elements");
  assert_contains(cucore_last_error(), what);
  assert_int_equal(r->mismatches, 77);
}

static void invalid_arguments(void **state) {
  (void)state;
  float a[2] = {1, 2};
  size_t bad[2];
  cucore_compare_result r = {77, 0, 0, 0};
  const int F = CUCORE_DTYPE_FLOAT;
  assert_status(cucore_compare_elements(a, a, 2, F, 4, -1, -1, NULL, 0, NULL),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "`result` is NULL");
  refused(cucore_compare_elements(NULL, a, 2, F, 4, -1, -1, NULL, 0, &r), &r, "`got` is NULL");
  refused(cucore_compare_elements(a, NULL, 2, F, 4, -1, -1, NULL, 0, &r), &r, "`want` is NULL");
  refused(cucore_compare_elements(a, a, 2, F, 4, -1, -1, NULL, 2, &r), &r, "`bad` is NULL");
  refused(cucore_compare_elements(a, a, 2, CUCORE_DTYPE_OPAQUE, 4, -1, -1, bad, 2, &r), &r,
          "code 3");
  refused(cucore_compare_elements(a, a, 2, CUCORE_DTYPE_COMPLEX, 4, -1, -1, bad, 2, &r), &r,
          "code 5");
  refused(cucore_compare_elements(a, a, 2, -1, 4, -1, -1, bad, 2, &r), &r, "code -1");
  refused(cucore_compare_elements(a, a, 2, CUCORE_DTYPE_INT, 3, -1, -1, bad, 2, &r), &r,
          "elem_size 3");
  refused(cucore_compare_elements(a, a, 2, F, 1, -1, -1, bad, 2, &r), &r, "elem_size 1");
  refused(cucore_compare_elements(a, a, 2, CUCORE_DTYPE_BFLOAT, 4, -1, -1, bad, 2, &r), &r,
          "elem_size 4");
  refused(cucore_compare_elements(a, a, 2, CUCORE_DTYPE_UINT, 0, -1, -1, bad, 2, &r), &r,
          "elem_size 0");
  refused(cucore_compare_elements(a, a, SIZE_MAX / 2, F, 4, -1, -1, bad, 2, &r), &r,
          "count 9223372036854775807");
  refused(cucore_compare_elements(a, a, 2, F, 4, NAN, -1, bad, 2, &r), &r, "`rtol` is NaN");
  refused(cucore_compare_elements(a, a, 2, F, 4, -1, NAN, bad, 2, &r), &r, "`atol` is NaN");
  /* An infinite tolerance is a tolerance. */
  assert_ok(cucore_compare_elements(a, a, 2, F, 4, INFINITY, 0, bad, 2, &r));
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(exact_integers),
                                     cmocka_unit_test(floats_within_tolerance),
                                     cmocka_unit_test(nan_and_inf),
                                     cmocka_unit_test(half_and_bfloat16),
                                     cmocka_unit_test(bad_indices_and_cap),
                                     cmocka_unit_test(invalid_arguments)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
