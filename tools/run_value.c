/* run_value.c -- element types of `cucore run` and their values: parsed exactly (integers
 * range-checked, floating point correctly rounded to each width, half and bfloat16 included)
 * and printed as the shortest text that reads back to the same bits. */
#include "run.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *const elem_names[T_COUNT] = {"i8",  "u8",  "i16", "u16",  "i32", "u32",
                                         "i64", "u64", "f16", "bf16", "f32", "f64"};
const int elem_sizes[T_COUNT] = {1, 1, 2, 2, 4, 4, 8, 8, 2, 2, 4, 8};

int elem_is_float(elem_t t) { return t >= T_F16; }
int elem_is_signed(elem_t t) {
  return t == T_I8 || t == T_I16 || t == T_I32 || t == T_I64 || elem_is_float(t);
}

int elem_dtype_code(elem_t t) {
  return t == T_BF16         ? CUCORE_DTYPE_BFLOAT
         : elem_is_float(t)  ? CUCORE_DTYPE_FLOAT
         : elem_is_signed(t) ? CUCORE_DTYPE_INT
                             : CUCORE_DTYPE_UINT;
}

int elem_parse(const char *s, size_t len) {
  for (int i = 0; i < T_COUNT; i++)
    if (strlen(elem_names[i]) == len && strncmp(s, elem_names[i], len) == 0) return i;
  return -1;
}

const char *elem_list(void) { return "i8 u8 i16 u16 i32 u32 i64 u64 f16 bf16 f32 f64"; }

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
static int float_parse(elem_t t, const char *text, void *dst) {
  char *end = NULL;
  double d = strtod(text, &end);
  if (end == text || *end) return -1;
  if (t == T_F32) {
    float f = strtof(text, &end);
    if (isinf(f) && !written_inf(text)) return -2;
    memcpy(dst, &f, 4);
  } else if (t == T_F64) {
    if (isinf(d) && !written_inf(text)) return -2;
    memcpy(dst, &d, 8);
  } else {
    uint16_t h = t == T_F16 ? half_from(d) : bf16_from(d);
    if ((h & 0x7fffu) == (t == T_F16 ? 0x7c00u : 0x7f80u) && !written_inf(text)) return -2;
    memcpy(dst, &h, 2);
  }
  return 0;
}

const char *value_range(elem_t t) {
  static const char *const ranges[T_COUNT] = {
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

int value_parse(elem_t t, const char *text, void *dst) {
  char *end = NULL;
  errno = 0;
  if (!*text || *text == ' ') return -1;
  if (elem_is_float(t)) return float_parse(t, text, dst);
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
    if (!elem_is_signed(t) && mag) return -2;
    if (mag > (unsigned long long)INT64_MAX + 1ull) return -2;
    int64_t v = mag == (unsigned long long)INT64_MAX + 1ull ? INT64_MIN : -(int64_t)mag;
    if (v < lo[t]) return -2;
    memcpy(dst, &v, (size_t)elem_sizes[t]); /* little-endian: the low bytes */
  } else {
    if (mag > hi[t]) return -2;
    uint64_t v = mag;
    memcpy(dst, &v, (size_t)elem_sizes[t]);
  }
  return 0;
}

/* ---- reading and writing elements ------------------------------------------------------------ */

int64_t value_get_i64(const void *buf, elem_t t, size_t i) {
  const unsigned char *p = (const unsigned char *)buf + i * (size_t)elem_sizes[t];
  switch (t) {
  case T_I8: {
    int8_t x;
    memcpy(&x, p, 1);
    return x;
  }
  case T_U8: {
    uint8_t x;
    memcpy(&x, p, 1);
    return x;
  }
  case T_I16: {
    int16_t x;
    memcpy(&x, p, 2);
    return x;
  }
  case T_U16: {
    uint16_t x;
    memcpy(&x, p, 2);
    return x;
  }
  case T_I32: {
    int32_t x;
    memcpy(&x, p, 4);
    return x;
  }
  case T_U32: {
    uint32_t x;
    memcpy(&x, p, 4);
    return x;
  }
  case T_I64: {
    int64_t x;
    memcpy(&x, p, 8);
    return x;
  }
  case T_U64: {
    uint64_t x;
    memcpy(&x, p, 8);
    return (int64_t)x;
  }
  default: return 0;
  }
}

uint64_t value_get_u64(const void *buf, elem_t t, size_t i) {
  if (t == T_U64) {
    uint64_t x;
    memcpy(&x, (const unsigned char *)buf + i * 8, 8);
    return x;
  }
  return (uint64_t)value_get_i64(buf, t, i);
}

double value_get(const void *buf, elem_t t, size_t i) {
  const unsigned char *p = (const unsigned char *)buf + i * (size_t)elem_sizes[t];
  switch (t) {
  case T_F16: {
    uint16_t h;
    memcpy(&h, p, 2);
    return half_value(h);
  }
  case T_BF16: {
    uint16_t h;
    memcpy(&h, p, 2);
    return bf16_value(h);
  }
  case T_F32: {
    float f;
    memcpy(&f, p, 4);
    return f;
  }
  case T_F64: {
    double d;
    memcpy(&d, p, 8);
    return d;
  }
  case T_U64: return (double)value_get_u64(buf, t, i);
  default: return (double)value_get_i64(buf, t, i);
  }
}

int value_is_nan(const void *buf, elem_t t, size_t i) {
  return elem_is_float(t) && isnan(value_get(buf, t, i));
}

void value_store(void *buf, elem_t t, size_t i, double v) {
  unsigned char *p = (unsigned char *)buf + i * (size_t)elem_sizes[t];
  switch (t) {
  case T_I8: {
    int8_t x = (int8_t)v;
    memcpy(p, &x, 1);
    break;
  }
  case T_U8: {
    uint8_t x = (uint8_t)v;
    memcpy(p, &x, 1);
    break;
  }
  case T_I16: {
    int16_t x = (int16_t)v;
    memcpy(p, &x, 2);
    break;
  }
  case T_U16: {
    uint16_t x = (uint16_t)v;
    memcpy(p, &x, 2);
    break;
  }
  case T_I32: {
    int32_t x = (int32_t)v;
    memcpy(p, &x, 4);
    break;
  }
  case T_U32: {
    uint32_t x = (uint32_t)v;
    memcpy(p, &x, 4);
    break;
  }
  case T_I64: {
    int64_t x = (int64_t)v;
    memcpy(p, &x, 8);
    break;
  }
  case T_U64: {
    uint64_t x = (uint64_t)v;
    memcpy(p, &x, 8);
    break;
  }
  case T_F16: {
    uint16_t x = half_from(v);
    memcpy(p, &x, 2);
    break;
  }
  case T_BF16: {
    uint16_t x = bf16_from(v);
    memcpy(p, &x, 2);
    break;
  }
  case T_F32: {
    float x = (float)v;
    memcpy(p, &x, 4);
    break;
  }
  case T_F64: memcpy(p, &v, 8); break;
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

const char *double_format(double v, char *out, size_t len) {
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
static const char *shortest(double v, elem_t t, const void *bits, char *out, size_t len) {
  if (!isfinite(v)) {
    snprintf(out, len, "%s", nonfinite(v));
    return out;
  }
  if (integral(v)) {
    snprintf(out, len, "%.0f", v);
    unsigned char back[8];
    if (value_parse(t, out, back) == 0 && memcmp(back, bits, (size_t)elem_sizes[t]) == 0)
      return out;
  }
  for (int digits = 1; digits <= 17; digits++) {
    snprintf(out, len, "%.*g", digits, v);
    unsigned char back[8];
    if (value_parse(t, out, back) == 0 && memcmp(back, bits, (size_t)elem_sizes[t]) == 0)
      return out;
  }
  snprintf(out, len, "%.17g", v);
  return out;
}

const char *value_format(const void *buf, elem_t t, size_t i, char *out, size_t len) {
  const unsigned char *p = (const unsigned char *)buf + i * (size_t)elem_sizes[t];
  if (elem_is_float(t)) {
    if (t == T_F64) return double_format(value_get(buf, t, i), out, len);
    return shortest(value_get(buf, t, i), t, p, out, len);
  }
  if (t == T_U64)
    snprintf(out, len, "%llu", (unsigned long long)value_get_u64(buf, t, i));
  else
    snprintf(out, len, "%lld", (long long)value_get_i64(buf, t, i));
  return out;
}

/* A parsed argument value's buffers freed (run_spec.c and run_struct.c make them). */
void run_value_free(run_value *v) {
  free(v->bytes);
  free(v->patches);
  free(v->layout);
  memset(v, 0, sizeof *v);
}
