/* json_write.c -- the JSON writer (json_out) for the command's --json output. */
#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A JSON string: quotes, backslashes and every control character escaped (C1 and DEL too, so
 * the text is safe on a terminal); a byte that is not part of valid UTF-8 (a name read from a
 * damaged binary) becomes U+FFFD and is counted in j->replaced. */
static void escape(json_out *j, const char *s) {
  FILE *f = j->f;
  fputc('"', f);
  size_t n = strlen(s);
  const unsigned char *p = (const unsigned char *)s;
  for (size_t i = 0; i < n;) {
    unsigned c = p[i];
    switch (c) {
    case '"':
      fputs("\\\"", f);
      i++;
      continue;
    case '\\':
      fputs("\\\\", f);
      i++;
      continue;
    case '\n':
      fputs("\\n", f);
      i++;
      continue;
    case '\r':
      fputs("\\r", f);
      i++;
      continue;
    case '\t':
      fputs("\\t", f);
      i++;
      continue;
    default: break;
    }
    if (c < 0x20 || c == 0x7f) {
      fprintf(f, "\\u%04x", c);
      i++;
      continue;
    }
    int len = text_utf8_len(p + i, n - i);
    if (len <= 0) {
      fputs("\\ufffd", f);
      j->replaced++;
      i++;
    } else if (len == 2 && c == 0xc2 && p[i + 1] <= 0x9f) {
      fprintf(f, "\\u%04x", p[i + 1]); /* a C1 control */
      i += 2;
    } else {
      fwrite(p + i, 1, (size_t)len, f);
      i += (size_t)len;
    }
  }
  fputc('"', f);
}

static void indent(json_out *j) {
  if (!j->pretty) return;
  fputc('\n', j->f);
  for (int i = 0; i < j->depth; i++) fputs("  ", j->f);
}

static void item(json_out *j, const char *key) {
  if (j->depth > 0) {
    if (!j->first[j->depth]) fputc(',', j->f);
    j->first[j->depth] = 0;
    indent(j);
  }
  if (key) {
    escape(j, key);
    fputs(j->pretty ? ": " : ":", j->f);
  }
}

static void open_(json_out *j, const char *key, char c) {
  item(j, key);
  fputc(c, j->f);
  if (j->depth < 31) j->depth++;
  j->first[j->depth] = 1;
}

static void close_(json_out *j, char c) {
  /* The top-level object says when text had to be repaired to stay valid UTF-8. */
  if (j->depth == 1 && c == '}' && j->replaced) {
    unsigned long long n = j->replaced;
    j->replaced = 0;
    json_uint(j, "invalid_utf8_replaced", n);
  }
  int empty = j->first[j->depth];
  if (j->depth > 0) j->depth--;
  if (!empty) indent(j);
  fputc(c, j->f);
  if (j->depth == 0) fputc('\n', j->f);
}

void json_begin_object(json_out *j, const char *key) { open_(j, key, '{'); }
void json_end_object(json_out *j) { close_(j, '}'); }
void json_begin_array(json_out *j, const char *key) { open_(j, key, '['); }
void json_end_array(json_out *j) { close_(j, ']'); }

void json_str(json_out *j, const char *key, const char *value) {
  item(j, key);
  if (value)
    escape(j, value);
  else
    fputs("null", j->f);
}

void json_int(json_out *j, const char *key, long long value) {
  item(j, key);
  fprintf(j->f, "%lld", value);
}

/* The shortest %.Ng text that reads back to `value` (at most 17 digits). */
static void shortest(FILE *f, double value) {
  char buf[40];
  for (int digits = 1; digits <= 17; digits++) {
    snprintf(buf, sizeof buf, "%.*g", digits, value);
    if (strtod(buf, NULL) == value) break;
  }
  fputs(buf, f);
}

void json_num(json_out *j, const char *key, double value) {
  item(j, key);
  if (isfinite(value))
    shortest(j->f, value);
  else
    fputs("null", j->f);
}

void json_uint(json_out *j, const char *key, unsigned long long value) {
  item(j, key);
  fprintf(j->f, "%llu", value);
}

void json_double(json_out *j, const char *key, double value) {
  item(j, key);
  if (isfinite(value))
    shortest(j->f, value);
  else
    fputs(isnan(value) ? "\"nan\"" : value > 0 ? "\"inf\"" : "\"-inf\"", j->f);
}

void json_number_text(json_out *j, const char *key, const char *text) {
  item(j, key);
  if (strcmp(text, "nan") == 0 || strcmp(text, "inf") == 0 || strcmp(text, "-inf") == 0)
    escape(j, text);
  else
    fputs(text, j->f);
}

void json_raw(json_out *j, const char *key, const char *text) {
  item(j, key);
  fputs(text, j->f);
}

void json_bool(json_out *j, const char *key, int value) {
  item(j, key);
  fputs(value ? "true" : "false", j->f);
}
