/* args_cursor.c -- the cursor over one value spec (args_cursor): the usage error that quotes
 * the spec and names the verb the user typed, whole words of the spec, and copies of its parts.
 * The lowest file of the args module's parser. */
#include "args_spec.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int args_cursor_usage(const args_cursor *c, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "cucore %s: %s `%s`: ", cli_verb_name, c->flag, c->all);
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n");
  va_end(ap);
  return CLI_EXIT_USAGE;
}

int args_cursor_starts(const char *p, const char *end, const char *word) {
  size_t n = strlen(word);
  return (size_t)(end - p) >= n && memcmp(p, word, n) == 0;
}

/* A copy of [p, end) as a C string (malloc'd). */
char *args_cursor_dup(const char *p, const char *end) {
  size_t n = (size_t)(end - p);
  char *s = malloc(n + 1);
  if (!s) {
    fprintf(stderr, "cucore %s: out of memory\n", cli_verb_name);
    exit(CLI_EXIT_FAILURE);
  }
  memcpy(s, p, n);
  s[n] = '\0';
  return s;
}
