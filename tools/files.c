/* files.c -- reading the files the command is given (sources, binaries, data), with the
 * path and the system's reason on failure. Below source.c and nvcc.c, which both use it. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

int cli_read_file(const char *verb, const char *path, char **data, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "cucore %s: cannot open `%s`: %s\n", verb, path, strerror(errno));
    return CLI_EXIT_FAILURE;
  }
  size_t cap = 1 << 16, len = 0;
  char *buf = malloc(cap + 1);
  size_t n;
  while (buf && (n = fread(buf + len, 1, cap - len, f)) > 0) {
    len += n;
    if (len == cap) {
      char *nb = realloc(buf, cap * 2 + 1);
      if (!nb) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = nb;
      cap *= 2;
    }
  }
  int err = ferror(f);
  fclose(f);
  if (!buf || err) {
    free(buf);
    fprintf(stderr, "cucore %s: cannot read `%s`\n", verb, path);
    return CLI_EXIT_FAILURE;
  }
  buf[len] = '\0';
  *data = buf;
  *size = len;
  return 0;
}
