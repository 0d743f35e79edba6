/*
 * space_values.c -- one value of a parameter, one meaning everywhere: the text as written is
 * read once by Python 3's literal rules (Kernel Tuner's parameters are Python values) into an
 * integer, a real, a bool or a string, and every output is made from that reading: the C text
 * a compile sees (-DNAME=..., template arguments), JSON, the text shown to people. A text that
 * would mean one thing to the restrictions and another to the compiler is refused ("010": 10 in
 * Python's int(), octal 8 in C); values equal as values ("0x10" and "16") are one value twice.
 */
#include "tune/space.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The length of the UTF-8 sequence at s[0..n) (1..4), or 0 when it is not valid UTF-8. */
static size_t utf8_len(const unsigned char *s, size_t n) {
  unsigned c = s[0];
  size_t len = c < 0x80             ? 1
               : (c & 0xe0) == 0xc0 ? 2
               : (c & 0xf0) == 0xe0 ? 3
               : (c & 0xf8) == 0xf0 ? 4
                                    : 0;
  if (!len || len > n || (len == 2 && c < 0xc2) || (len == 4 && c > 0xf4)) return 0;
  for (size_t i = 1; i < len; i++)
    if ((s[i] & 0xc0) != 0x80) return 0;
  if (len == 3 && ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] >= 0xa0))) return 0;
  if (len == 4 && ((c == 0xf0 && s[1] < 0x90) || (c == 0xf4 && s[1] >= 0x90))) return 0;
  return len;
}

/* A value text that cannot become one line of C: empty, a control character, not UTF-8. */
static cucore_status check_text(const char *param, size_t k, const char *t) {
  size_t n = strlen(t);
  if (n == 0)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "parameter `%s`: value %zu is empty", param, k + 1);
  for (size_t i = 0; i < n;) {
    unsigned char c = (unsigned char)t[i];
    size_t len = c < 0x20 || c == 0x7f ? 0 : utf8_len((const unsigned char *)t + i, n - i);
    if (len == 0)
      return cc_fail(CUCORE_INVALID_ARGUMENT,
                     "parameter `%s`: value %zu has %s byte 0x%02x at offset %zu: a value becomes "
                     "one line of C (-DNAME=VALUE, a template argument), so it is printable UTF-8",
                     param, k + 1, c < 0x20 || c == 0x7f ? "the control" : "the non-UTF-8", c, i);
    i += len;
  }
  return CUCORE_OK;
}

/* Digits of `base` in t (at least one), as an unsigned value; -1 on overflow or a bad digit. */
static int read_digits(const char *t, int base, uint64_t *out) {
  uint64_t v = 0;
  if (!*t) return -1;
  for (; *t; t++) {
    int d = *t >= '0' && *t <= '9'   ? *t - '0'
            : *t >= 'a' && *t <= 'f' ? *t - 'a' + 10
            : *t >= 'A' && *t <= 'F' ? *t - 'A' + 10
                                     : 99;
    if (d >= base || v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base) return -1;
    v = v * (uint64_t)base + (uint64_t)d;
  }
  *out = v;
  return 0;
}

static int all_of(const char *t, const char *set) { return *t && t[strspn(t, set)] == 0; }

/* A Python 3 integer literal with an optional sign: 1 read (*v set), 0 not an integer, -1
 * refused (message recorded). */
static int read_int(const char *param, size_t k, const char *text, int64_t *v) {
  const char *t = text + (*text == '+' || *text == '-');
  int base = 10;
  const char *digits = t;
  if (t[0] == '0' && (t[1] | 32) == 'x') base = 16, digits = t + 2;
  if (t[0] == '0' && (t[1] | 32) == 'o') base = 8, digits = t + 2;
  if (t[0] == '0' && (t[1] | 32) == 'b') base = 2, digits = t + 2;
  static const char *const sets[] = {"01", "01234567", "0123456789", "0123456789abcdefABCDEF"};
  const char *set = sets[base == 2 ? 0 : base == 8 ? 1 : base == 10 ? 2 : 3];
  if (!all_of(digits, set)) return 0;
  if (base == 10 && digits[0] == '0' && !all_of(digits, "0")) {
    cc_fail(CUCORE_INVALID_ARGUMENT,
            "parameter `%s`: value %zu `%s` has a leading zero: it would be octal in C and is "
            "not an integer in Python 3; write it without the zero (or 0o... for octal, 0x... "
            "for hexadecimal)",
            param, k + 1, text);
    return -1;
  }
  uint64_t u;
  int neg = *text == '-';
  if (read_digits(digits, base, &u) < 0 || u > (uint64_t)INT64_MAX + (uint64_t)neg) {
    cc_fail(CUCORE_INVALID_ARGUMENT,
            "parameter `%s`: value %zu `%s` is outside 64-bit integers (-2^63 .. 2^63-1)", param,
            k + 1, text);
    return -1;
  }
  *v = neg ? (int64_t)(0 - u) : (int64_t)u;
  return 1;
}

/* A Python float literal (digits with a point and/or an exponent, optional sign): 1 read, 0
 * not one, -1 refused (not finite). */
static int read_real(const char *param, size_t k, const char *text, double *d) {
  const char *t = text + (*text == '+' || *text == '-');
  size_t a = strspn(t, "0123456789"), b = 0;
  const char *p = t + a;
  int point = *p == '.';
  if (point) b = strspn(++p, "0123456789"), p += b;
  if (a + b == 0) return 0;
  int expo = (*p | 32) == 'e';
  if (expo) {
    p += 1 + (p[1] == '+' || p[1] == '-');
    size_t e = strspn(p, "0123456789");
    if (!e) return 0;
    p += e;
  }
  if (*p || !(point || expo)) return 0;
  errno = 0;
  *d = strtod(text, NULL);
  if (!isfinite(*d)) {
    cc_fail(CUCORE_INVALID_ARGUMENT, "parameter `%s`: value %zu `%s` is beyond a double's range",
            param, k + 1, text);
    return -1;
  }
  return 1;
}

/* The C text of an integer (INT64_MIN has no literal of its own). */
static char *int_c_text(int64_t i) {
  char buf[32];
  if (i == INT64_MIN)
    snprintf(buf, sizeof buf, "(-9223372036854775807-1)");
  else
    snprintf(buf, sizeof buf, "%lld", (long long)i);
  return cc_raw_strdup(buf);
}

cucore_status cc_tune_value_read(const char *param, size_t k, const char *text, cc_tval *v,
                                 char **c_text) {
  cucore_status st = check_text(param, k, text);
  if (st != CUCORE_OK) return st;
  int64_t i;
  double d;
  int r = read_int(param, k, text, &i);
  if (r < 0) return cucore_last_status();
  int rr = r ? 0 : read_real(param, k, text, &d);
  if (rr < 0) return cucore_last_status();
  int is_bool = !r && !rr &&
                (!strcmp(text, "true") || !strcmp(text, "True") || !strcmp(text, "false") ||
                 !strcmp(text, "False"));
  if (r)
    *v = cc_tval_int(i), *c_text = int_c_text(i);
  else if (rr)
    *v = cc_tval_real(d), *c_text = cc_raw_strdup(text);
  else if (is_bool)
    *v = cc_tval_bool(text[0] == 't' || text[0] == 'T'),
    *c_text = cc_raw_strdup(v->i ? "true" : "false");
  else
    *v = cc_tval_str(text, strlen(text)), *c_text = cc_raw_strdup(text);
  if (!*c_text) return cc_fail(CUCORE_HOST_OUT_OF_MEMORY, "out of host memory (a parameter value)");
  return CUCORE_OK;
}

/* ---- one value twice ------------------------------------------------------------------------ */

typedef struct keyed {
  cc_tval v;
  size_t k;
} keyed;

static int cmp_val(const cc_tval *a, const cc_tval *b) {
  if (a->kind != b->kind) return a->kind < b->kind ? -1 : 1;
  if (a->kind == CC_TV_REAL) return a->d < b->d ? -1 : a->d > b->d;
  if (a->kind != CC_TV_STR) return a->i < b->i ? -1 : a->i > b->i;
  size_t n = a->n < b->n ? a->n : b->n;
  int c = memcmp(a->s, b->s, n);
  return c ? c : a->n < b->n ? -1 : a->n > b->n;
}

static int cmp_keyed(const void *x, const void *y) {
  const keyed *a = x, *b = y;
  int c = cmp_val(&a->v, &b->v);
  return c ? c : a->k < b->k ? -1 : a->k > b->k;
}

cucore_status cc_tune_values_unique(const char *param, const cc_tval *vals, char *const *texts,
                                    size_t n) {
  if (n < 2) return CUCORE_OK;
  keyed *ks = cc_calloc(n, sizeof *ks, "a parameter's values");
  if (!ks) return cucore_last_status();
  for (size_t k = 0; k < n; k++) ks[k].v = vals[k], ks[k].k = k;
  qsort(ks, n, sizeof *ks, cmp_keyed);
  cucore_status st = CUCORE_OK;
  for (size_t k = 1; k < n && st == CUCORE_OK; k++) {
    if (cmp_val(&ks[k - 1].v, &ks[k].v) != 0) continue;
    const char *a = texts[ks[k - 1].k], *b = texts[ks[k].k];
    if (strcmp(a, b) == 0)
      st = cc_fail(CUCORE_INVALID_ARGUMENT,
                   "parameter `%s` has the value `%s` twice (values %zu and %zu)", param, a,
                   ks[k - 1].k + 1, ks[k].k + 1);
    else
      st = cc_fail(CUCORE_INVALID_ARGUMENT,
                   "parameter `%s` has one value twice: `%s` (value %zu) and `%s` (value %zu) are "
                   "equal",
                   param, a, ks[k - 1].k + 1, b, ks[k].k + 1);
  }
  free(ks);
  return st;
}

/* ---- the writers ---------------------------------------------------------------------------- */

/* The shortest text of d that reads back as d (JSON's number grammar: finite values only). */
static void real_json(cc_sb *b, double d) {
  char buf[40];
  for (int prec = 1; prec <= 17; prec++) {
    snprintf(buf, sizeof buf, "%.*g", prec, d);
    if (strtod(buf, NULL) == d) break;
  }
  cc_sb_puts(b, buf);
  if (!strpbrk(buf, ".eEn")) cc_sb_puts(b, ".0"); /* stays a real when read back */
}

void cc_tune_value_json(cc_sb *b, const cc_tval *v) {
  switch (v->kind) {
  case CC_TV_INT: cc_sb_printf(b, "%lld", (long long)v->i); break;
  case CC_TV_REAL: real_json(b, v->d); break;
  case CC_TV_BOOL: cc_sb_puts(b, v->i ? "true" : "false"); break;
  default: cc_sb_json_string(b, v->s, v->n); break;
  }
}

/* 1 when `t` reads unambiguously bare in "NAME=VALUE NAME=VALUE": no space, quote, `=`,
 * backslash. */
static int plain(const char *t) {
  for (; *t; t++)
    if (*t == ' ' || *t == '"' || *t == '\'' || *t == '=' || *t == '\\' || *t == ',') return 0;
  return 1;
}

void cc_tune_value_shown(cc_sb *b, const char *text) {
  if (plain(text)) {
    cc_sb_puts(b, text);
    return;
  }
  cc_sb_json_string(b, text, strlen(text)); /* a quoted, escaped string: "unsigned int" */
}

const char *cc_tune_quote(const char *text, char buf[CC_TUNE_QUOTE_MAX]) {
  size_t n = strlen(text);
  if (n <= 160) return text;
  snprintf(buf, CC_TUNE_QUOTE_MAX, "%.120s... (%zu bytes)", text, n);
  return buf;
}
