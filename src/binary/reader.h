/*
 * binary/reader.h -- what every reader of binaries shares, and nothing else: bounds-checked
 * little-endian reads, the limits that keep hostile input linear, the kernel list each
 * reader fills, and architecture names (reader.c).
 *
 * Names: cc_klist_* is a reader's list of kernels (cucore_kernel_info), cc_glist_* its list of
 * module variables, cc_kinfo_* works on one cucore_kernel_info. (cc_kernel_* is the loaded
 * kernel handle of src/exec/, not the reader's.)
 *
 * Every reader takes hostile input: offsets and sizes are checked before use, no arithmetic
 * overflows, no recursion, and no allocation larger than a bound derived from the input's
 * own size.
 */
#ifndef CUCORE_BINARY_READER_H
#define CUCORE_BINARY_READER_H

#include "base/base.h"
#include "base/le.h" /* cc_le16/32/64: every little-endian field */

#include <stdint.h>
#include <string.h>

/* ---- bounds ---------------------------------------------------------------------------------- */

/* 1 when [off, off + len) lies within a buffer of `total` bytes (no overflow possible). */
static inline int cc_range_ok(uint64_t off, uint64_t len, uint64_t total) {
  return off <= total && len <= total - off;
}

/* The offset of the last NUL in [p, p + n), or UINT64_MAX when there is none. */
static inline uint64_t cc_last_nul(const uint8_t *p, uint64_t n) {
  while (n > 0)
    if (p[--n] == 0) return n;
  return UINT64_MAX;
}
/* The most bytes of names (sections, kernels) read from a file of n bytes: names may share
 * bytes (tail merging), but not without end. */
#define CC_NAME_BYTES_MAX(n) ((uint64_t)(n)*4 + 65536)

/* The largest parameter buffer a kernel may have (CUDA 12.1+). */
#define CC_PARAM_BYTES_MAX 32764u
/* The largest decompressed fatbin entry cucore accepts, and the largest expansion ratio. */
#define CC_DECOMPRESSED_MAX ((uint64_t)1 << 30)
#define CC_DECOMPRESS_RATIO_MAX 4096u

/* ---- kernels --------------------------------------------------------------------------------- */

/* A growable list of kernels; every string and params array is owned by the list. */
typedef struct cc_klist {
  cucore_kernel_info *items;
  uint32_t count;
  size_t cap; /* items allocated (cc_grow) */
} cc_klist;

/* Appends a zeroed kernel named `name` (copied); returns it, or NULL (failure recorded). */
cucore_kernel_info *cc_klist_add(cc_klist *l, const char *name, size_t name_len);
/* Frees every kernel and the list's storage; the list is empty afterwards. */
void cc_klist_free(cc_klist *l);
/* Sets k->max_threads_per_block from its declared bounds and register count (see cucore.h). */
void cc_kinfo_finish_limits(cucore_kernel_info *k);

/* ---- module variables ----------------------------------------------------------------------- */

/* A growable list of module variables; names are owned by the list. */
typedef struct cc_glist {
  cucore_global_info *items;
  uint32_t count;
  size_t cap; /* items allocated (cc_grow) */
} cc_glist;

/* Appends a zeroed variable named `name` (copied, demangled when mangled); returns it, or NULL
 * (failure recorded). */
cucore_global_info *cc_glist_add(cc_glist *l, const char *name, size_t name_len);
/* Frees every variable and the list's storage; the list is empty afterwards. */
void cc_glist_free(cc_glist *l);
/* The variable named `name` (its symbol or demangled name), or NULL. */
const cucore_global_info *cc_glist_find(const cc_glist *l, const char *name);

/* "sm_90a" etc. into buf. */
const char *cc_arch_name(int arch, char suffix, const char *prefix, char *buf, size_t len);

#endif /* CUCORE_BINARY_READER_H */
