/* strbuf.c -- text of any length built in memory (cc_sb): appends that grow, printf-style
 * appends, and the library's one JSON string writer. A failed allocation is remembered in the
 * builder (and recorded as CUCORE_HOST_OUT_OF_MEMORY); later appends do nothing, so a caller
 * checks once at the end. */
#include "base/base.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int reserve(cc_sb *b, size_t more) {
  if (b->failed) return -1;
  if (b->len + more + 1 <= b->cap) return 0;
  size_t cap = b->cap ? b->cap : 64;
  while (cap < b->len + more + 1) {
    if (cap > SIZE_MAX / 2) goto fail;
    cap *= 2;
  }
  char *s = cc_raw_realloc(b->s, cap);
  if (!s) goto fail;
  b->s = s;
  b->cap = cap;
  return 0;
fail:
  b->failed = 1;
  cc_fail(CUCORE_HOST_OUT_OF_MEMORY, "out of host memory building a text of %zu bytes",
          b->len + more);
  return -1;
}

void cc_sb_add(cc_sb *b, const char *s, size_t n) {
  if (reserve(b, n) < 0) return;
  memcpy(b->s + b->len, s, n);
  b->len += n;
  b->s[b->len] = 0;
}

void cc_sb_puts(cc_sb *b, const char *s) { cc_sb_add(b, s, strlen(s)); }

void cc_sb_printf(cc_sb *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0 || reserve(b, (size_t)n) < 0) return;
  va_start(ap, fmt);
  vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
}

void cc_sb_json_string(cc_sb *b, const char *s, size_t n) {
  static const char hex[] = "0123456789abcdef";
  cc_sb_add(b, "\"", 1);
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '"' || c == '\\') {
      char e[2] = {'\\', (char)c};
      cc_sb_add(b, e, 2);
    } else if (c < 0x20 || c == 0x7f) {
      char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
      cc_sb_add(b, e, 6);
    } else {
      cc_sb_add(b, (const char *)&c, 1);
    }
  }
  cc_sb_add(b, "\"", 1);
}

const char *cc_sb_text(const cc_sb *b) { return b->s && !b->failed ? b->s : ""; }

char *cc_sb_take(cc_sb *b) {
  char *s = b->failed ? NULL : b->s ? b->s : cc_raw_strdup("");
  if (b->failed) free(b->s);
  memset(b, 0, sizeof *b);
  return s;
}

void cc_sb_free(cc_sb *b) {
  free(b->s);
  memset(b, 0, sizeof *b);
}
