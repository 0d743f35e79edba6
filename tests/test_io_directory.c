/* test_io_directory.c -- a directory is CUCORE_IO_ERROR on every library path that reads a
 * file: cucore_object_from_file, cucore_binary_open_file and
 * cucore_linker_add_file all read through the one careful reader (src/base/file.c), which
 * refuses what is not a regular file instead of reporting a bogus size. */
#include "support.h"

static void directory_is_io_error(void **state) {
  (void)state;
  const char *dirs[] = {CUCORE_TEST_BINARY_DIR, "/", ".", "/tmp"};
  for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
    cucore_object *obj = NULL;
    assert_status(cucore_object_from_file(dirs[i], CUCORE_CODE_AUTO, &obj), CUCORE_IO_ERROR);
    assert_null(obj);
    assert_contains(cucore_last_error(), dirs[i]);
    assert_status(cucore_object_from_file(dirs[i], CUCORE_CODE_CUBIN, &obj), CUCORE_IO_ERROR);
    cucore_binary *bin = NULL;
    assert_status(cucore_binary_open_file(dirs[i], CUCORE_CODE_AUTO, 0, &bin), CUCORE_IO_ERROR);
    assert_null(bin);
    assert_contains(cucore_last_error(), dirs[i]);
    cucore_linker *lk = NULL;
    assert_ok(cucore_linker_create(NULL, &lk));
    assert_status(cucore_linker_add_file(lk, dirs[i], CUCORE_CODE_AUTO), CUCORE_IO_ERROR);
    assert_contains(cucore_last_error(), dirs[i]);
    cucore_linker_destroy(lk);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(directory_is_io_error)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
