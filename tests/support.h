/* support.h -- helpers for cucore's cmocka tests. */
#ifndef CUCORE_TEST_SUPPORT_H
#define CUCORE_TEST_SUPPORT_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
/* cmocka needs the above first. */
#include <cmocka.h>

#include "cucore.h"

/* Exit code CTest counts as "skipped". */
#define CUCORE_TEST_SKIP 77

/* Asserts a status is CUCORE_OK, printing cucore_last_error() when it is not. */
#define assert_ok(expr)                                                                    \
  do {                                                                                     \
    cucore_status st_ = (expr);                                                            \
    if (st_ != CUCORE_OK)                                                                  \
      fail_msg("%s returned %s: %s", #expr, cucore_status_name(st_), cucore_last_error()); \
  } while (0)

/* Asserts a status has cucore code `code`, and that a message was kept. */
#define assert_status(expr, code)                                                  \
  do {                                                                             \
    cucore_status st_ = (expr);                                                    \
    if (CUCORE_CODE(st_) != (code))                                                \
      fail_msg("%s returned %s (expected %s): %s", #expr, cucore_status_name(st_), \
               cucore_status_name(code), cucore_last_error());                     \
    assert_true(cucore_last_error()[0] != '\0');                                   \
  } while (0)

/* Asserts that `haystack` contains `needle`, printing both when it does not. */
#define assert_contains(haystack, needle)                                                   \
  do {                                                                                      \
    const char *h_ = (haystack), *n_ = (needle);                                            \
    if (!h_ || !strstr(h_, n_)) fail_msg("expected \"%s\" in: %s", n_, h_ ? h_ : "(null)"); \
  } while (0)

/* For gpu_ tests: returns 1 when a usable GPU is present; otherwise prints why and returns 0
 * (the caller then exits CUCORE_TEST_SKIP). */
int cucore_test_have_gpu(void);

/* Reads a whole file into a malloc'd buffer (NUL-terminated); NULL on failure. */
char *cucore_test_read_file(const char *path, size_t *size);

/* Runs a shell command, capturing stdout+stderr into a malloc'd string; returns the exit
 * status (or -1). */
int cucore_test_run(const char *cmd, char **output);

#endif
