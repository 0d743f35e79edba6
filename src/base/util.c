/* util.c -- allocation that records failures, and small formatting helpers. */
#include "base/base.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the allocation fault hook (tests only) -----------------------------------------------
 * Off: one relaxed atomic load per allocation. On: every allocation cucore makes is counted,
 * and the one numbered `fail_at` (from 1, counted since the hook was armed) fails. */
static _Atomic long hook_on;
static _Atomic long hook_count;
static _Atomic long hook_fail_at;

void cc_test_alloc_hook(int on, long fail_at) {
  atomic_store(&hook_count, 0);
  atomic_store(&hook_fail_at, fail_at);
  atomic_store(&hook_on, on);
}

long cc_test_alloc_count(void) { return atomic_load(&hook_count); }

static int hook_says_fail(void) {
  if (CC_LIKELY(atomic_load_explicit(&hook_on, memory_order_relaxed) == 0)) return 0;
  long n = atomic_fetch_add(&hook_count, 1) + 1;
  return n == atomic_load(&hook_fail_at);
}

void *cc_raw_malloc(size_t bytes) { return hook_says_fail() ? NULL : malloc(bytes); }
void *cc_raw_calloc(size_t count, size_t size) {
  return hook_says_fail() ? NULL : calloc(count, size);
}
void *cc_raw_aligned_calloc(size_t align, size_t bytes) {
  if (hook_says_fail()) return NULL;
  size_t n = (bytes + align - 1) / align * align;
  void *p = aligned_alloc(align, n);
  if (p) memset(p, 0, n);
  return p;
}
void *cc_raw_realloc(void *p, size_t bytes) { return hook_says_fail() ? NULL : realloc(p, bytes); }
char *cc_raw_strdup(const char *s) {
  if (hook_says_fail()) return NULL;
  size_t n = strlen(s) + 1;
  char *p = malloc(n);
  if (p) memcpy(p, s, n);
  return p;
}

void *cc_malloc(size_t bytes, const char *what) {
  void *p = cc_raw_malloc(bytes ? bytes : 1);
  if (!p)
    cc_fail(CUCORE_HOST_OUT_OF_MEMORY, "out of host memory allocating %zu bytes for %s", bytes,
            what);
  return p;
}

void *cc_grow(void *items, size_t *cap, size_t need, size_t size, const char *what) {
  if (need <= *cap && items) return items;
  size_t n = *cap ? *cap : 8;
  while (n < need) n = n > SIZE_MAX / 2 ? SIZE_MAX : n * 2;
  if (size == 0 || n > SIZE_MAX / size) {
    cc_fail(CUCORE_HOST_OUT_OF_MEMORY, "%s cannot grow to %zu items of %zu bytes", what, need,
            size);
    return NULL;
  }
  void *p = cc_raw_realloc(items, n * size);
  if (!p) {
    cc_fail(CUCORE_HOST_OUT_OF_MEMORY, "out of host memory growing %s to %zu items (%zu bytes)",
            what, n, n * size);
    return NULL;
  }
  *cap = n;
  return p;
}

void *cc_calloc(size_t count, size_t size, const char *what) {
  void *p = cc_raw_calloc(count ? count : 1, size ? size : 1);
  if (!p)
    cc_fail(CUCORE_HOST_OUT_OF_MEMORY, "out of host memory allocating %zu x %zu bytes for %s",
            count, size, what);
  return p;
}

char *cc_strdup(const char *s, const char *what) {
  char *p = cc_raw_strdup(s);
  if (!p)
    cc_fail(CUCORE_HOST_OUT_OF_MEMORY, "out of host memory copying %zu bytes for %s", strlen(s) + 1,
            what);
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

void cc_format_field(char *buf, size_t cap, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, cap, fmt, ap);
  va_end(ap);
  if (n < 0) buf[0] = '\0'; /* an encoding error: nothing is kept */
  if (n < 0 || (size_t)n < cap) return;
  char tail[80];
  int t = snprintf(tail, sizeof tail, " ... (cut: %d bytes, the field holds %zu)", n, cap - 1);
  if (t > 0 && (size_t)t < cap) memcpy(buf + cap - 1 - (size_t)t, tail, (size_t)t + 1);
}

int cc_cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}
