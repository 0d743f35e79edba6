/* file.c -- reading whole files, naming the path and the reason on failure. */
#include "base/base.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

cucore_status cc_read_file(const char *path, unsigned char **data, size_t *size) {
  *data = NULL;
  *size = 0;
  FILE *f = fopen(path, "rb");
  if (!f)
    return cc_fail(cc_status(CUCORE_IO_ERROR, CUCORE_SOURCE_ERRNO, errno), "cannot open `%s`: %s",
                   path, strerror(errno));
  if (fseek(f, 0, SEEK_END) != 0) {
    fclose(f);
    return cc_fail(CUCORE_IO_ERROR, "cannot read `%s`: not a regular file", path);
  }
  long n = ftell(f);
  if (n < 0 || fseek(f, 0, SEEK_SET) != 0) {
    fclose(f);
    return cc_fail(CUCORE_IO_ERROR, "cannot read `%s`: not a regular file", path);
  }
  unsigned char *buf = cc_malloc((size_t)n + 1, path);
  if (!buf) {
    fclose(f);
    return CUCORE_HOST_OUT_OF_MEMORY;
  }
  if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
    int e = errno;
    fclose(f);
    free(buf);
    return cc_fail(cc_status(CUCORE_IO_ERROR, CUCORE_SOURCE_ERRNO, e), "cannot read `%s`: %s",
                   path, strerror(e));
  }
  fclose(f);
  buf[n] = 0;
  *data = buf;
  *size = (size_t)n;
  return CUCORE_OK;
}
