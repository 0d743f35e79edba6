/* compare_elements.c -- cucore_compare_elements: two buffers compared element by element within
 * rtol/atol as numpy.allclose does (a NaN equal to a NaN, an infinity only to itself, integers
 * byte for byte when no tolerance is given), with the count, the first indices and the largest
 * errors of the mismatches. The one copy of that rule and of the element decoding (half and
 * bfloat16 included): cucore_tune_run's check against its baseline and the command's --expect
 * both call it. It needs only the C library, so it sits on the lowest floor. */
#include "base/base.h"

#include <math.h>
#include <string.h>

#define FN "cucore_compare_elements"

/* A half (binary16) or bfloat16 as a double. */
static double half_value(uint16_t h, int bf16) {
  if (bf16) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
  }
  int e = (h >> 10) & 31, m = h & 1023;
  double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
  return h & 0x8000 ? -v : v;
}

/* Element k of `p` (elements of `size` bytes of kind `code`, both checked) as a double. */
static double value_of(const unsigned char *p, size_t k, int code, size_t size) {
  union {
    int8_t i8;
    int16_t i16;
    int32_t i32;
    int64_t i64;
    uint8_t u8;
    uint16_t u16;
    uint32_t u32;
    uint64_t u64;
    float f;
    double d;
  } v;
  memcpy(&v, p + k * size, size);
  int s = code == CUCORE_DTYPE_INT, u = code == CUCORE_DTYPE_UINT;
  switch (size) {
  case 1: return s ? v.i8 : v.u8;
  case 2: return s ? v.i16 : u ? v.u16 : half_value(v.u16, code == CUCORE_DTYPE_BFLOAT);
  case 4: return s ? (double)v.i32 : u ? (double)v.u32 : v.f;
  default: return s ? (double)v.i64 : u ? (double)v.u64 : v.d;
  }
}

/* |got - want| <= atol + rtol * |want|; a NaN matches only a NaN, an infinity only itself. */
static int within(double got, double want, double rtol, double atol) {
  if (isnan(got) || isnan(want)) return isnan(got) && isnan(want);
  if (isinf(got) || isinf(want)) return got == want;
  return fabs(got - want) <= atol + rtol * fabs(want);
}

/* The largest errors so far of `got` against `want`: |got - want| and that over |want| (inf
 * when want is 0, or a NaN or infinity differs). */
static void track_error(double got, double want, double *max_abs, double *max_rel) {
  double e = fabs(got - want);
  if (isnan(e) || isinf(e)) e = INFINITY;
  double rel = want != 0 && !isinf(e) ? e / fabs(want) : INFINITY;
  if (e > *max_abs) *max_abs = e;
  if (rel > *max_rel) *max_rel = rel;
}

int cc_dtype_size_ok(int code, size_t size) {
  return code == CUCORE_DTYPE_BFLOAT  ? size == 2
         : code == CUCORE_DTYPE_FLOAT ? size == 2 || size == 4 || size == 8
                                      : size == 1 || size == 2 || size == 4 || size == 8;
}

static cucore_status check_args(const void *got, const void *want, size_t count, int code,
                                size_t size, double rtol, double atol, const size_t *bad,
                                size_t cap, const cucore_compare_result *result) {
  if (!result) return cc_fail(CUCORE_INVALID_ARGUMENT, FN ": `result` is NULL");
  if (count && (!got || !want))
    return cc_fail(CUCORE_INVALID_ARGUMENT, FN ": `%s` is NULL (count %zu)", got ? "want" : "got",
                   count);
  if (cap && !bad) return cc_fail(CUCORE_INVALID_ARGUMENT, FN ": `bad` is NULL with cap %zu", cap);
  if (code != CUCORE_DTYPE_INT && code != CUCORE_DTYPE_UINT && code != CUCORE_DTYPE_FLOAT &&
      code != CUCORE_DTYPE_BFLOAT)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   FN ": code %d: expected CUCORE_DTYPE_INT, CUCORE_DTYPE_UINT, CUCORE_DTYPE_FLOAT "
                      "or CUCORE_DTYPE_BFLOAT",
                   code);
  if (!cc_dtype_size_ok(code, size))
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   FN ": elem_size %zu for code %d: expected 1, 2, 4 or 8 bytes (floats 2, 4 or "
                      "8, bfloat16 2)",
                   size, code);
  if (count > SIZE_MAX / size)
    return cc_fail(CUCORE_INVALID_ARGUMENT, FN ": count %zu of %zu-byte elements overflows", count,
                   size);
  if (isnan(rtol) || isnan(atol))
    return cc_fail(CUCORE_INVALID_ARGUMENT, FN ": `%s` is NaN (negative: the default)",
                   isnan(rtol) ? "rtol" : "atol");
  return CUCORE_OK;
}

cucore_status cucore_compare_elements(const void *got, const void *want, size_t count, int code,
                                      size_t elem_size, double rtol, double atol, size_t *bad,
                                      size_t cap, cucore_compare_result *result) {
  cc_begin();
  cucore_status st = check_args(got, want, count, code, elem_size, rtol, atol, bad, cap, result);
  if (st != CUCORE_OK) return st;
  cucore_compare_result r = {0, count, 0, 0};
  int exact = code != CUCORE_DTYPE_FLOAT && code != CUCORE_DTYPE_BFLOAT && rtol < 0 && atol < 0;
  if (rtol < 0) rtol = CC_COMPARE_RTOL;
  if (atol < 0) atol = CC_COMPARE_ATOL;
  const unsigned char *g = got, *w = want;
  for (size_t k = 0; k < count; k++) {
    if (exact
            ? memcmp(g + k * elem_size, w + k * elem_size, elem_size) == 0
            : within(value_of(g, k, code, elem_size), value_of(w, k, code, elem_size), rtol, atol))
      continue;
    if (r.mismatches < cap) bad[r.mismatches] = k;
    if (!r.mismatches++) r.first = k;
    track_error(value_of(g, k, code, elem_size), value_of(w, k, code, elem_size), &r.max_abs_err,
                &r.max_rel_err);
  }
  *result = r;
  return CUCORE_OK;
}
