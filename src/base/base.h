/*
 * base/base.h -- the ground floor every cucore source stands on: status composition, the
 * thread-local error message, allocation that records its failures, and small helpers.
 * Nothing here knows the driver or the toolkit (loader/ is the floor above).
 *
 * Naming: cc_ for internal functions and types; CC_ for internal macros.
 */
#ifndef CUCORE_BASE_H
#define CUCORE_BASE_H

#include "cucore.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CC_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

#if defined(__GNUC__)
#define CC_PRINTF(fmt_index, first_arg) __attribute__((format(printf, fmt_index, first_arg)))
#define CC_LIKELY(x) __builtin_expect(!!(x), 1)
#define CC_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define CC_COLD __attribute__((cold, noinline))
#else
#define CC_PRINTF(a, b)
#define CC_LIKELY(x) (x)
#define CC_UNLIKELY(x) (x)
#define CC_COLD
#endif

/* ---- errors (error.c) -------------------------------------------------------------------- */

/* Composes a status from a code, the source of a native code and the native code. */
static inline cucore_status cc_status(int code, cucore_source source, int native) {
  if (code == CUCORE_OK) return CUCORE_OK;
  return (cucore_status)((uint32_t)code | ((uint32_t)source << 8) | ((uint32_t)native << 12));
}

/* Marks the start of a public call: the next failure's message is the one kept. */
#if defined(__GNUC__)
#define CC_TLS_IE __attribute__((tls_model("initial-exec")))
#else
#define CC_TLS_IE
#endif
/* Set when a message was kept since the last cc_begin (error.c). */
#ifdef __cplusplus
extern CC_TLS_IE thread_local int cc_tls_kept;
#else
extern CC_TLS_IE _Thread_local int cc_tls_kept;
#endif
/* Every public call starts here (inline: it runs on every launch and allocation). */
static inline void cc_begin(void) { cc_tls_kept = 0; }
/* Records a failure on this thread (only the first since cc_begin is kept) and returns it. */
cucore_status cc_fail(cucore_status st, const char *fmt, ...) CC_PRINTF(2, 3);
/* Replaces the kept message even when one is kept already (to restate a cached failure). */
cucore_status cc_fail_restate(cucore_status st, const char *msg);
/* 1 when a message was kept since cc_begin (a later cc_fail would not replace it): callers
 * that build an expensive message may skip it. */
int cc_message_kept(void);
/* Checks a pointer argument; fails with CUCORE_INVALID_ARGUMENT naming `what` in `fn`. */
#define CC_CHECK_ARG(ptr, fn, what)                                              \
  do {                                                                           \
    if (CC_UNLIKELY((ptr) == NULL))                                              \
      return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: `%s` is NULL", (fn), (what)); \
  } while (0)

/* ---- comparing outputs (compare_elements.c) --------------------------------------------- */

/* 1 when an element of kind `code` (CUCORE_DTYPE_INT, _UINT, _FLOAT or _BFLOAT) may be `size`
 * bytes wide: integers 1, 2, 4 or 8, floats 2, 4 or 8, bfloat16 2 (cucore_compare_elements'
 * rule, which the tune's buffers follow too). */
int cc_dtype_size_ok(int code, size_t size);
/* The tolerances a negative rtol / atol stands for (numpy.allclose's). */
#define CC_COMPARE_RTOL 1e-5
#define CC_COMPARE_ATOL 1e-8

/* ---- small utilities (util.c) --------------------------------------------------------------- */

/* malloc that records CUCORE_HOST_OUT_OF_MEMORY with `what` on failure. */
void *cc_malloc(size_t bytes, const char *what);
void *cc_calloc(size_t count, size_t size, const char *what);
/* The C library's allocators behind the allocation fault hook: every allocation in src/ goes
 * through these (or the recording ones above); they record nothing, the caller does. */
void *cc_raw_malloc(size_t bytes);
void *cc_raw_calloc(size_t count, size_t size);
void *cc_raw_realloc(void *p, size_t bytes);
/* The one growth step of a growable array: returns `items` (capacity *cap elements of `size`
 * bytes) with room for at least `need` elements, doubling from 8, or NULL with
 * CUCORE_HOST_OUT_OF_MEMORY recorded naming `what` when the size overflows or allocation fails;
 * the old array is then untouched. *cap is updated only on success. Use:
 *   T *n = cc_grow(a->v, &a->cap, a->count + 1, sizeof *n, "the list of X");
 *   if (!n) return cucore_last_status(); a->v = n; */
void *cc_grow(void *items, size_t *cap, size_t need, size_t size, const char *what);
/* Formats into the fixed field buf[cap] (a public struct's text, cap >= 64); a text longer than
 * the field is never cut silently: its end becomes " ... (cut: N bytes, the field holds M)". */
void cc_format_field(char *buf, size_t cap, const char *fmt, ...) CC_PRINTF(3, 4);
/* Zeroed memory aligned to `align` (a power of two), freed with free(). */
void *cc_raw_aligned_calloc(size_t align, size_t bytes);
char *cc_raw_strdup(const char *s);
/* Tests only (tests/test_fault_alloc.c): on = 1 counts every allocation from now and fails the
 * one numbered fail_at (1-based; 0 = none); on = 0 turns the hook off. */
void cc_test_alloc_hook(int on, long fail_at);
/* Allocations counted since the hook was last armed. */
long cc_test_alloc_count(void);
/* strdup, recording a failure. */
char *cc_strdup(const char *s, const char *what);
/* Copies bytes into a malloc'd buffer of size + 1 with a NUL at [size] (PTX and other text
 * need one); NULL when out of memory (failure recorded). */
unsigned char *cc_copy_code(const void *data, size_t size);
/* Bytes as "12.5 MiB" etc. into buf. */
const char *cc_format_bytes(size_t bytes, char *buf, size_t buflen);
/* qsort's comparison of two doubles, ascending (NaN compares equal to anything). */
int cc_cmp_double(const void *a, const void *b);

/* ---- text of any length (strbuf.c) -------------------------------------------------------- */

/* A growing text: zero-initialise, append, then cc_sb_take (or cc_sb_free). s is NUL-terminated
 * whenever len > 0. After a failed allocation `failed` is 1 (CUCORE_HOST_OUT_OF_MEMORY recorded)
 * and appends do nothing. */
typedef struct cc_sb {
  char *s;
  size_t len, cap;
  int failed;
} cc_sb;
void cc_sb_add(cc_sb *b, const char *s, size_t n);
void cc_sb_puts(cc_sb *b, const char *s);
void cc_sb_printf(cc_sb *b, const char *fmt, ...) CC_PRINTF(2, 3);
/* The library's one JSON string writer: s[0..n) quoted, `"` and `\` escaped, control
 * characters (and DEL) as \u00XX; other bytes as they are (the caller's text is UTF-8). */
void cc_sb_json_string(cc_sb *b, const char *s, size_t n);
/* The text so far ("" when empty or failed); valid until the next append. */
const char *cc_sb_text(const cc_sb *b);
/* The text, malloc'd (the caller frees it; "" when empty), or NULL after a failure; b is
 * empty again. */
char *cc_sb_take(cc_sb *b);
void cc_sb_free(cc_sb *b);

/* ---- files (file.c) ------------------------------------------------------------------------- */

/* Reads a whole file into a malloc'd, NUL-terminated buffer; names the path and errno on
 * failure (CUCORE_IO_ERROR, or CUCORE_HOST_OUT_OF_MEMORY). */
cucore_status cc_read_file(const char *path, unsigned char **data, size_t *size);
/* The cap cc_read_file applies: 1 GiB. */
#define CC_READ_DEFAULT_MAX ((size_t)CUCORE_FILE_MAX_BYTES_DEFAULT)

/* ---- foreign text (escape.c) ------------------------------------------------------------- */

/* Copies `len` bytes of text another library wrote into dst (cap bytes with the NUL): trailing
 * line ends dropped, control characters and bytes outside ASCII written as \xHH, cut with
 * "..." when it does not fit. Returns the length written. */
size_t cc_escape_text(char *dst, size_t cap, const char *src, size_t len);

#endif /* CUCORE_BASE_H */
