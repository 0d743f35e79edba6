/* args_value.c -- one element value of the args module (`cucore run` and `cucore tune`):
 * parsed exactly (integers range-checked, floating point correctly rounded to each width, half
 * and bfloat16 included) and printed as the shortest text that reads back to the same bits. */
#include "args_spec.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- half and bfloat16 ----------------------------------------------------------------------- */

/* `x` rounded to nearest-even on a binary format with `mant` fraction bits, smallest normal
 * exponent `emin` and largest finite value `max` (+-inf beyond the rounding threshold). */
static double round_to(double x, int mant, int emin, double max) {
  if (!isfinite(x) || x == 0) return x;
  int e;
  frexp(fabs(x), &e); /* |x| = m * 2^e, m in [0.5, 1) */
  int exp = e - 1;    /* |x| in [2^exp, 2^(exp+1)) */
  if (exp < emin) exp = emin;
  double quantum = ldexp(1.0, exp - mant);
  double r = nearbyint(x / quantum) * quantum; /* the default mode: to nearest, ties even */
  double limit = max + ldexp(1.0, (int)floor(log2(max)) - mant - 1); /* halfway past max */
  if (fabs(r) > max || fabs(x) >= limit) return copysign(INFINITY, x);
  return r;
}

static uint16_t half_bits(float f) { /* f is exactly a half value (or inf/nan) */
  uint32_t x;
  memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u, mant = x & 0x7fffffu;
  int exp = (int)((x >> 23) & 0xff);
  if (exp == 0xff) return (uint16_t)(sign | 0x7c00u | (mant ? 0x200u : 0));
  if (exp == 0) return (uint16_t)sign;
  int e = exp - 127;
  if (e < -14) { /* subnormal half: value = mant' * 2^-24 */
    uint32_t full = mant | 0x800000u;
    return (uint16_t)(sign | (full >> (uint32_t)(-e - 14 + 13)));
  }
  return (uint16_t)(sign | (uint32_t)(e + 15) << 10 | (mant >> 13));
}

static float half_value(uint16_t h) {
  uint32_t sign = (h & 0x8000u) ? 1 : 0, exp = (h >> 10) & 0x1f, mant = h & 0x3ffu;
  float v;
  if (exp == 0)
    v = ldexpf((float)mant, -24);
  else if (exp == 31)
    v = mant ? NAN : INFINITY;
  else
    v = ldexpf((float)(mant | 0x400u), (int)exp - 25);
  return sign ? -v : v;
}

static uint16_t half_from(double v) {
  if (isnan(v)) return 0x7e00;
  return half_bits((float)round_to(v, 10, -14, 65504.0));
}

static uint16_t bf16_from(double v) {
  if (isnan(v)) return 0x7fc0;
  float f = (float)round_to(v, 7, -126, 3.3895313892515355e38);
  uint32_t x;
  memcpy(&x, &f, 4);
  return (uint16_t)(x >> 16);
}

static float bf16_value(uint16_t b) {
  uint32_t x = (uint32_t)b << 16;
  float f;
  memcpy(&f, &x, 4);
  return f;
}

/* ---- parsing --------------------------------------------------------------------------------- */

/* 1 when the text names an infinity itself ("inf", "-Infinity"), not a number too large. */
static int written_inf(const char *text) {
  const char *s = text + (*text == '-' || *text == '+');
  return strncasecmp(s, "inf", 3) == 0;
}

/* A floating-point value, rounded to nearest; one that rounds to infinity is out of range
 * (-2) unless it was written as an infinity. Subnormals and zero are values. */
static int float_parse(args_elem t, const char *text, void *dst) {
  char *end = NULL;
  double d = strtod(text, &end);
  if (end == text || *end) return -1;
  if (t == ARGS_F32) {
    float f = strtof(text, &end);
    if (isinf(f) && !written_inf(text)) return -2;
    memcpy(dst, &f, 4);
  } else if (t == ARGS_F64) {
    if (isinf(d) && !written_inf(text)) return -2;
    memcpy(dst, &d, 8);
  } else {
    uint16_t h = t == ARGS_F16 ? half_from(d) : bf16_from(d);
    if ((h & 0x7fffu) == (t == ARGS_F16 ? 0x7c00u : 0x7f80u) && !written_inf(text)) return -2;
    memcpy(dst, &h, 2);
  }
  return 0;
}

const char *args_value_range(args_elem t) {
  static const char *const ranges[ARGS_ELEM_COUNT] = {
      "-128..127",
      "0..255",
      "-32768..32767",
      "0..65535",
      "-2147483648..2147483647",
      "0..4294967295",
      "-9223372036854775808..9223372036854775807",
      "0..18446744073709551615",
      "finite values -65504..65504; inf, -inf and nan when written so",
      "finite values -3.3895314e38..3.3895314e38; inf, -inf and nan when written so",
      "finite values -3.4028235e38..3.4028235e38; inf, -inf and nan when written so",
      ("finite values -1.7976931348623157e308..1.7976931348623157e308; inf, -inf and nan when "
       "written so")};
  return ranges[t];
}

int args_value_parse(args_elem t, const char *text, void *dst) {
  char *end = NULL;
  errno = 0;
  if (!*text || *text == ' ') return -1;
  if (args_elem_is_float(t)) return float_parse(t, text, dst);
  static const int64_t lo[] = {INT8_MIN, 0, INT16_MIN, 0, INT32_MIN, 0, INT64_MIN, 0};
  static const uint64_t hi[] = {INT8_MAX,  UINT8_MAX,  INT16_MAX, UINT16_MAX,
                                INT32_MAX, UINT32_MAX, INT64_MAX, UINT64_MAX};
  const char *s = text;
  int negative = *s == '-';
  if (*s == '+' || *s == '-') s++;
  if (*s < '0' || *s > '9') return -1;
  unsigned long long mag = strtoull(s, &end, 0);
  if (end == s || *end) return -1;
  if (errno == ERANGE) return -2;
  if (negative) {
    if (!args_elem_is_signed(t) && mag) return -2;
    if (mag > (unsigned long long)INT64_MAX + 1ull) return -2;
    int64_t v = mag == (unsigned long long)INT64_MAX + 1ull ? INT64_MIN : -(int64_t)mag;
    if (v < lo[t]) return -2;
    memcpy(dst, &v, (size_t)args_elem_sizes[t]); /* little-endian: the low bytes */
  } else {
    if (mag > hi[t]) return -2;
    uint64_t v = mag;
    memcpy(dst, &v, (size_t)args_elem_sizes[t]);
  }
  return 0;
}

/* ---- reading and writing elements ------------------------------------------------------------ */

int64_t args_value_get_i64(const void *buf, args_elem t, size_t i) {
  const unsigned char *p = (const unsigned char *)buf + i * (size_t)args_elem_sizes[t];
  switch (t) {
  case ARGS_I8: {
    int8_t x;
    memcpy(&x, p, 1);
    return x;
  }
  case ARGS_U8: {
    uint8_t x;
    memcpy(&x, p, 1);
    return x;
  }
  case ARGS_I16: {
    int16_t x;
    memcpy(&x, p, 2);
    return x;
  }
  case ARGS_U16: {
    uint16_t x;
    memcpy(&x, p, 2);
    return x;
  }
  case ARGS_I32: {
    int32_t x;
    memcpy(&x, p, 4);
    return x;
  }
  case ARGS_U32: {
    uint32_t x;
    memcpy(&x, p, 4);
    return x;
  }
  case ARGS_I64: {
    int64_t x;
    memcpy(&x, p, 8);
    return x;
  }
  case ARGS_U64: {
    uint64_t x;
    memcpy(&x, p, 8);
    return (int64_t)x;
  }
  default: return 0;
  }
}

uint64_t args_value_get_u64(const void *buf, args_elem t, size_t i) {
  if (t == ARGS_U64) {
    uint64_t x;
    memcpy(&x, (const unsigned char *)buf + i * 8, 8);
    return x;
  }
  return (uint64_t)args_value_get_i64(buf, t, i);
}

double args_value_get(const void *buf, args_elem t, size_t i) {
  const unsigned char *p = (const unsigned char *)buf + i * (size_t)args_elem_sizes[t];
  switch (t) {
  case ARGS_F16: {
    uint16_t h;
    memcpy(&h, p, 2);
    return half_value(h);
  }
  case ARGS_BF16: {
    uint16_t h;
    memcpy(&h, p, 2);
    return bf16_value(h);
  }
  case ARGS_F32: {
    float f;
    memcpy(&f, p, 4);
    return f;
  }
  case ARGS_F64: {
    double d;
    memcpy(&d, p, 8);
    return d;
  }
  case ARGS_U64: return (double)args_value_get_u64(buf, t, i);
  default: return (double)args_value_get_i64(buf, t, i);
  }
}

int args_value_is_nan(const void *buf, args_elem t, size_t i) {
  return args_elem_is_float(t) && isnan(args_value_get(buf, t, i));
}

void args_value_store(void *buf, args_elem t, size_t i, double v) {
  unsigned char *p = (unsigned char *)buf + i * (size_t)args_elem_sizes[t];
  switch (t) {
  case ARGS_I8: {
    int8_t x = (int8_t)v;
    memcpy(p, &x, 1);
    break;
  }
  case ARGS_U8: {
    uint8_t x = (uint8_t)v;
    memcpy(p, &x, 1);
    break;
  }
  case ARGS_I16: {
    int16_t x = (int16_t)v;
    memcpy(p, &x, 2);
    break;
  }
  case ARGS_U16: {
    uint16_t x = (uint16_t)v;
    memcpy(p, &x, 2);
    break;
  }
  case ARGS_I32: {
    int32_t x = (int32_t)v;
    memcpy(p, &x, 4);
    break;
  }
  case ARGS_U32: {
    uint32_t x = (uint32_t)v;
    memcpy(p, &x, 4);
    break;
  }
  case ARGS_I64: {
    int64_t x = (int64_t)v;
    memcpy(p, &x, 8);
    break;
  }
  case ARGS_U64: {
    uint64_t x = (uint64_t)v;
    memcpy(p, &x, 8);
    break;
  }
  case ARGS_F16: {
    uint16_t x = half_from(v);
    memcpy(p, &x, 2);
    break;
  }
  case ARGS_BF16: {
    uint16_t x = bf16_from(v);
    memcpy(p, &x, 2);
    break;
  }
  case ARGS_F32: {
    float x = (float)v;
    memcpy(p, &x, 4);
    break;
  }
  case ARGS_F64: memcpy(p, &v, 8); break;
  default: break;
  }
}

/* ---- printing -------------------------------------------------------------------------------- */

static const char *nonfinite(double v) {
  if (isnan(v)) return "nan";
  return v > 0 ? "inf" : "-inf";
}

/* Whole numbers below 2^53 are written as integers (549755289600, not 5.497552896e+11): the
 * same value, and what a reader of JSON expects of an integer result. */
static int integral(double v) { return fabs(v) < 9007199254740992.0 && v == trunc(v); }

const char *args_value_format_double(double v, char *out, size_t len) {
  if (!isfinite(v)) {
    snprintf(out, len, "%s", nonfinite(v));
    return out;
  }
  if (integral(v)) {
    snprintf(out, len, "%.0f", v);
    return out;
  }
  for (int digits = 1; digits <= 17; digits++) {
    snprintf(out, len, "%.*g", digits, v);
    if (strtod(out, NULL) == v) return out;
  }
  return out;
}

/* The shortest %.Ng text of `v` that parses back to the same bits of type t. */
static const char *shortest(double v, args_elem t, const void *bits, char *out, size_t len) {
  if (!isfinite(v)) {
    snprintf(out, len, "%s", nonfinite(v));
    return out;
  }
  if (integral(v)) {
    snprintf(out, len, "%.0f", v);
    unsigned char back[8];
    if (args_value_parse(t, out, back) == 0 && memcmp(back, bits, (size_t)args_elem_sizes[t]) == 0)
      return out;
  }
  for (int digits = 1; digits <= 17; digits++) {
    snprintf(out, len, "%.*g", digits, v);
    unsigned char back[8];
    if (args_value_parse(t, out, back) == 0 && memcmp(back, bits, (size_t)args_elem_sizes[t]) == 0)
      return out;
  }
  snprintf(out, len, "%.17g", v);
  return out;
}

const char *args_value_format(const void *buf, args_elem t, size_t i, char *out, size_t len) {
  const unsigned char *p = (const unsigned char *)buf + i * (size_t)args_elem_sizes[t];
  if (args_elem_is_float(t)) {
    if (t == ARGS_F64) return args_value_format_double(args_value_get(buf, t, i), out, len);
    return shortest(args_value_get(buf, t, i), t, p, out, len);
  }
  if (t == ARGS_U64)
    snprintf(out, len, "%llu", (unsigned long long)args_value_get_u64(buf, t, i));
  else
    snprintf(out, len, "%lld", (long long)args_value_get_i64(buf, t, i));
  return out;
}
