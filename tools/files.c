/* files.c -- reading the files the command is given (sources, binaries, data) through the
 * library's one careful reader (cucore_file_read: regular files only, never waiting on a FIFO
 * or reading an endless device, a size cap, "-" for standard input), and the check that a
 * source meant to be text is text. Below source.c, nvcc.c and args_data.c, which use it. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

int cli_read_file(const char *verb, const char *path, char **data, size_t *size) {
  void *buf = NULL;
  *data = NULL;
  *size = 0;
  if (cucore_file_read(path, 0, &buf, size) != CUCORE_OK) {
    fprintf(stderr, "cucore %s: %s\n", verb, cucore_last_error());
    return CLI_EXIT_FAILURE;
  }
  *data = buf;
  return 0;
}

/* 1 for a byte that has no place in source text: a control character other than the spaces
 * (tab, newline, vertical tab, form feed, carriage return) and DEL. */
static int is_control(unsigned char c) {
  return (c < 0x20 && !(c >= '\t' && c <= '\r')) || c == 0x7f;
}

int cli_check_text(const char *verb, const char *path, const char *data, size_t size) {
  const unsigned char *p = (const unsigned char *)data;
  size_t bad = 0, first_bad = 0;
  for (size_t i = 0; i < size;) {
    if (p[i] == 0) {
      fprintf(stderr, "cucore %s: `%s` is not text: NUL byte at offset %zu\n", verb, path, i);
      return CLI_EXIT_FAILURE;
    }
    int len = text_utf8_len(p + i, size - i);
    if (len <= 0 || (len == 1 && is_control(p[i]))) {
      if (!bad++) first_bad = i;
      i++;
      continue;
    }
    i += (size_t)len;
  }
  /* A stray Latin-1 letter in a comment is tolerated; a file of which more than a tenth is not
   * UTF-8 text is not a source file. */
  if (bad && bad * 10 > size) {
    fprintf(stderr,
            "cucore %s: `%s` is not text: invalid UTF-8 or control byte at offset %zu "
            "(%zu of its %zu bytes)\n",
            verb, path, first_bad, bad, size);
    return CLI_EXIT_FAILURE;
  }
  return 0;
}
