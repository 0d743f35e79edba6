/* support.c -- helpers for cucore's cmocka tests. */

#include "support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

int cucore_test_have_gpu(void) {
  int n = 0;
  cucore_status st = cucore_device_get_count(&n);
  if (st != CUCORE_OK) {
    printf("skipped: no usable CUDA driver: %s\n", cucore_last_error());
    return 0;
  }
  if (n == 0) {
    printf("skipped: no CUDA device\n");
    return 0;
  }
  return 1;
}

char *cucore_test_read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)n + 1);
  if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  if (buf) {
    buf[n] = '\0';
    if (size) *size = (size_t)n;
  }
  return buf;
}

int cucore_test_run(const char *cmd, char **output) {
  char *full = NULL;
  if (asprintf(&full, "%s 2>&1", cmd) < 0) return -1;
  FILE *p = popen(full, "r");
  free(full);
  if (!p) return -1;
  size_t cap = 4096, len = 0;
  char *buf = malloc(cap);
  size_t n;
  while (buf && (n = fread(buf + len, 1, cap - len - 1, p)) > 0) {
    len += n;
    if (cap - len < 2) {
      char *nb = realloc(buf, cap * 2);
      if (!nb) break;
      buf = nb;
      cap *= 2;
    }
  }
  if (buf) buf[len] = '\0';
  int status = pclose(p);
  if (output)
    *output = buf;
  else
    free(buf);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}
