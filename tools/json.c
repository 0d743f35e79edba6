/* json.c -- a small JSON writer for the command's --json output. */
#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void escape(FILE *f, const char *s) {
  fputc('"', f);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    switch (*p) {
    case '"': fputs("\\\"", f); break;
    case '\\': fputs("\\\\", f); break;
    case '\n': fputs("\\n", f); break;
    case '\r': fputs("\\r", f); break;
    case '\t': fputs("\\t", f); break;
    default:
      if (*p < 0x20)
        fprintf(f, "\\u%04x", *p);
      else
        fputc(*p, f);
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
    escape(j->f, key);
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
    escape(j->f, value);
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
    escape(j->f, text);
  else
    fputs(text, j->f);
}

void json_bool(json_out *j, const char *key, int value) {
  item(j, key);
  fputs(value ? "true" : "false", j->f);
}
