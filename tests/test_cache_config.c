/* test_cache_config.c -- the compile cache's configuration is never ignored without a word: an
 * unusable directory (a regular file, one that cannot be created, a read-only one), a malformed
 * CUCORE_CACHE_MAX_BYTES and an odd CUCORE_CACHE_DISABLE are reported by
 * cucore_cache_config_problem naming the variable and the reason, and the compile still works
 * without the cache. */
#include "cache_support.h"

#include <errno.h>
#include <fcntl.h>

typedef struct fixture {
  char *dir;
} fixture;

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  if (!f || !(f->dir = cache_test_mkdtemp())) return -1;
  if (cache_test_settings(NULL) != 0) return -1;
  setenv("CUCORE_CACHE_DIR", f->dir, 1);
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  cache_test_settings(NULL);
  char sub[4200];
  snprintf(sub, sizeof sub, "%s/ro", f->dir);
  chmod(sub, 0755); /* a read-only folder is never left behind */
  cache_test_rm_rf(f->dir);
  free(f->dir);
  free(f);
  return 0;
}

/* The problem text, or "" when there is none. */
static const char *problem(void) {
  static char msg[8192];
  int p = -1;
  assert_ok(cucore_cache_config_problem(msg, sizeof msg, &p));
  assert_int_equal(p, msg[0] != '\0');
  return msg;
}

static void expect_problem(const char *want1, const char *want2) {
  const char *m = problem();
  if (!m[0]) fail_msg("no problem reported; expected one naming \"%s\"", want1);
  assert_contains(m, want1);
  if (want2) assert_contains(m, want2);
}

static void a_usable_configuration_has_no_problem(void **state) {
  fixture *f = *state;
  assert_string_equal(problem(), "");
  char sub[4200];
  snprintf(sub, sizeof sub, "%s/not/yet/made", f->dir); /* creatable */
  setenv("CUCORE_CACHE_DIR", sub, 1);
  assert_string_equal(problem(), "");
  setenv("CUCORE_CACHE_MAX_BYTES", "64M", 1);
  setenv("CUCORE_CACHE_DISABLE", "0", 1);
  assert_string_equal(problem(), "");
  int p = 7;
  assert_ok(cucore_cache_config_problem(NULL, 0, &p));
  assert_int_equal(p, 0);
  assert_status(cucore_cache_config_problem(NULL, 10, &p), CUCORE_INVALID_ARGUMENT);
  char one[1];
  assert_status(cucore_cache_config_problem(one, sizeof one, NULL), CUCORE_INVALID_ARGUMENT);
}

static int last_stored; /* whether compile_anyway's compile wrote its entry */

/* A small compile through the cache that must succeed whatever the configuration. */
static cucore_cache_result compile_anyway(void) {
  cucore_object *obj = NULL;
  cucore_cache_info info;
  char *src = cache_test_source(41);
  cucore_status st = cache_test_compile(src, "k.cu", "sm_80", CUCORE_CODE_PTX, NULL, NULL, 0, 1,
                                        &obj, &info);
  free(src);
  if (st != CUCORE_OK) fail_msg("the compile failed: %s", cucore_last_error());
  last_stored = info.stored;
  cucore_object_destroy(obj);
  cc_cache_memory_clear();
  return info.result;
}

static void an_unusable_directory_is_named(void **state) {
  fixture *f = *state;
  char file[4200], below[4300];
  snprintf(file, sizeof file, "%s/file", f->dir);
  int fd = open(file, O_WRONLY | O_CREAT, 0644);
  assert_true(fd >= 0);
  close(fd);
  setenv("CUCORE_CACHE_DIR", file, 1);
  expect_problem("CUCORE_CACHE_DIR=", "not a directory (a regular file)");
  assert_contains(problem(), file);
  compile_anyway();
  assert_int_equal(last_stored, 0);
  snprintf(below, sizeof below, "%s/sub/deeper", file);
  setenv("CUCORE_CACHE_DIR", below, 1);
  expect_problem("CUCORE_CACHE_DIR=", "cannot be created");
  compile_anyway();
  assert_int_equal(last_stored, 0);
  /* The same directory from the API is named by its call. */
  unsetenv("CUCORE_CACHE_DIR");
  assert_ok(cucore_cache_set_dir(file));
  expect_problem("cucore_cache_set_dir(", "not a directory");
  assert_ok(cucore_cache_set_dir(NULL));
  /* From XDG_CACHE_HOME: the variable and the directory made of it. */
  char *old_xdg = getenv("XDG_CACHE_HOME") ? strdup(getenv("XDG_CACHE_HOME")) : NULL;
  setenv("XDG_CACHE_HOME", file, 1);
  expect_problem("XDG_CACHE_HOME=", "/file/cucore");
  if (old_xdg)
    setenv("XDG_CACHE_HOME", old_xdg, 1);
  else
    unsetenv("XDG_CACHE_HOME");
  free(old_xdg);
  /* Off: the directory does not matter. */
  setenv("CUCORE_CACHE_DIR", file, 1);
  setenv("CUCORE_CACHE_DISABLE", "1", 1);
  assert_string_equal(problem(), "");
}

static void a_read_only_directory_is_named(void **state) {
  fixture *f = *state;
  char ro[4200], below[4300];
  snprintf(ro, sizeof ro, "%s/ro", f->dir);
  assert_int_equal(mkdir(ro, 0555), 0);
  if (access(ro, W_OK) == 0) { /* root: the mode stops nothing (the CLI test uses chattr) */
    print_message("the read-only folder is writable here (root); checked by tests/cli\n");
    return;
  }
  setenv("CUCORE_CACHE_DIR", ro, 1);
  expect_problem("CUCORE_CACHE_DIR=", "cannot be written");
  compile_anyway();
  assert_int_equal(last_stored, 0);
  snprintf(below, sizeof below, "%s/new", ro);
  setenv("CUCORE_CACHE_DIR", below, 1);
  expect_problem("cannot be created", ro);
}

static void malformed_variables_are_named(void **state) {
  (void)state;
  static const struct {
    const char *value, *says;
  } sizes[] = {{"abc", "is not a size"},
               {"12x", "is not a size"},
               {"-5", "is not a size"},
               {" 5", "is not a size"},
               {"", NULL},
               {"0", "is not a size"},
               {"1.5G", "is not a size"},
               {"99999999999999999999", "does not fit in 64 bits"},
               {"20000000000G", "does not fit in 64 bits"},
               {"100", "below the minimum of 4096"},
               {"512M", NULL},
               {"2GiB", NULL},
               {"18446744073709551615", NULL}};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    setenv("CUCORE_CACHE_MAX_BYTES", sizes[i].value, 1);
    if (!sizes[i].says) {
      assert_string_equal(problem(), "");
      continue;
    }
    expect_problem("CUCORE_CACHE_MAX_BYTES=", sizes[i].says);
    assert_contains(problem(), sizes[i].value);
    cucore_cache_stats s;
    assert_ok(cucore_cache_get_stats(&s));
    assert_true(s.max_bytes >= CC_CACHE_MIN_MAX_BYTES); /* a default is in force */
  }
  setenv("CUCORE_CACHE_MAX_BYTES", "abc", 1);
  assert_int_equal(compile_anyway(), CUCORE_CACHE_MISS); /* under the default cap */
  assert_int_equal(last_stored, 1);
  unsetenv("CUCORE_CACHE_MAX_BYTES");
  static const char *const odd[] = {"yes", "true", "2", "off", " 1"};
  for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++) {
    setenv("CUCORE_CACHE_DISABLE", odd[i], 1);
    expect_problem("CUCORE_CACHE_DISABLE=", "neither 1 (off) nor 0 (on)");
    assert_int_equal(compile_anyway(), CUCORE_CACHE_DISABLED);
  }
  /* Two problems at once: both said. */
  setenv("CUCORE_CACHE_MAX_BYTES", "12x", 1);
  expect_problem("CUCORE_CACHE_DISABLE=", "CUCORE_CACHE_MAX_BYTES=12x");
  /* A short buffer is cut, still terminated. */
  char small[8];
  int p = 0;
  assert_ok(cucore_cache_config_problem(small, sizeof small, &p));
  assert_int_equal(p, 1);
  assert_int_equal(strlen(small), sizeof small - 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(a_usable_configuration_has_no_problem, setup, teardown),
      cmocka_unit_test_setup_teardown(an_unusable_directory_is_named, setup, teardown),
      cmocka_unit_test_setup_teardown(a_read_only_directory_is_named, setup, teardown),
      cmocka_unit_test_setup_teardown(malformed_variables_are_named, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
