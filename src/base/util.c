/* util.c -- allocation that records failures, and small formatting helpers. */
#include "base/base.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *cc_malloc(size_t bytes, const char *what) {
  void *p = malloc(bytes ? bytes : 1);
  if (!p) cc_fail(CUCORE_HOST_OUT_OF_MEMORY, "out of host memory allocating %zu bytes for %s",
                  bytes, what);
  return p;
}

void *cc_calloc(size_t count, size_t size, const char *what) {
  void *p = calloc(count ? count : 1, size ? size : 1);
  if (!p) cc_fail(CUCORE_HOST_OUT_OF_MEMORY, "out of host memory allocating %zu x %zu bytes for %s",
                  count, size, what);
  return p;
}

char *cc_strdup(const char *s, const char *what) {
  size_t n = strlen(s) + 1;
  char *p = cc_malloc(n, what);
  if (p) memcpy(p, s, n);
  return p;
}

unsigned char *cc_copy_code(const void *data, size_t size) {
  unsigned char *c = cc_malloc(size + 1, "a copy of the code");
  if (!c) return NULL;
  memcpy(c, data, size);
  c[size] = 0;
  return c;
}

const char *cc_format_bytes(size_t bytes, char *buf, size_t buflen) {
  static const char *const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  double v = (double)bytes;
  int u = 0;
  while (v >= 1024.0 && u < 4) {
    v /= 1024.0;
    u++;
  }
  if (u == 0)
    snprintf(buf, buflen, "%zu bytes", bytes);
  else
    snprintf(buf, buflen, "%.1f %s", v, units[u]);
  return buf;
}

const char *cucore_code_type_name(cucore_code_type type) {
  switch (type) {
  case CUCORE_CODE_AUTO: return "auto";
  case CUCORE_CODE_CUDA_CPP: return "cuda-c++";
  case CUCORE_CODE_PTX: return "ptx";
  case CUCORE_CODE_NVVM: return "nvvm";
  case CUCORE_CODE_CUBIN: return "cubin";
  case CUCORE_CODE_FATBIN: return "fatbin";
  case CUCORE_CODE_LTOIR: return "ltoir";
  case CUCORE_CODE_OBJECT: return "object";
  case CUCORE_CODE_LIBRARY: return "library";
  }
  return "unknown";
}

const char *cucore_global_kind_name(cucore_global_kind kind) {
  switch (kind) {
  case CUCORE_GLOBAL_DEVICE: return "device";
  case CUCORE_GLOBAL_CONSTANT: return "constant";
  case CUCORE_GLOBAL_MANAGED: return "managed";
  case CUCORE_GLOBAL_UNKNOWN: break;
  }
  return "unknown";
}
