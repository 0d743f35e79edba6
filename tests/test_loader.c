/* test_loader.c -- run-time loading of the driver and the toolkit libraries. */
#include "support.h"

#include <string.h>

static void versions_describe_every_library(void **state) {
  (void)state;
  cucore_versions_info v;
  assert_ok(cucore_versions(&v));
  assert_string_equal(v.cucore, CUCORE_VERSION_STRING);
  assert_true(v.toolkit_headers >= 12000);
  const cucore_library_info *libs[] = {&v.driver, &v.nvrtc, &v.nvjitlink, &v.nvvm};
  for (size_t i = 0; i < 4; i++) {
    /* Either loaded with a path and a version, or not loaded with a reason. */
    if (libs[i]->loaded) {
      assert_non_null(libs[i]->path);
      assert_true(libs[i]->version > 0);
      assert_null(libs[i]->error);
    } else {
      assert_non_null(libs[i]->error);
      assert_true(strlen(libs[i]->error) > 20);
    }
  }
  /* The toolkit is installed wherever these tests run (CI and the GPU machine). */
  assert_true(v.nvrtc.loaded);
  assert_non_null(strstr(v.nvrtc.path, "nvrtc"));
  assert_true(v.nvjitlink.loaded);
  assert_non_null(strstr(v.nvjitlink.path, "nvJitLink"));
}

static void device_count_agrees_with_the_driver_state(void **state) {
  (void)state;
  cucore_versions_info v;
  assert_ok(cucore_versions(&v));
  int n = -1;
  cucore_status st = cucore_device_get_count(&n);
  if (v.driver.loaded) {
    assert_ok(st);
    assert_true(n >= 0);
  } else {
    /* No driver: a status naming what is missing, and count 0. */
    assert_int_not_equal(st, CUCORE_OK);
    assert_int_equal(n, 0);
    assert_true(CUCORE_CODE(st) == CUCORE_DRIVER_NOT_FOUND ||
                CUCORE_CODE(st) == CUCORE_DRIVER_STUB || CUCORE_CODE(st) == CUCORE_DRIVER_TOO_OLD);
    assert_string_equal(cucore_last_error(), v.driver.error);
  }
}

static void device_calls_without_a_device_fail_cleanly(void **state) {
  (void)state;
  int n = 0;
  if (cucore_device_get_count(&n) == CUCORE_OK && n > 0) skip();
  cucore_device *dev = (cucore_device *)0x1;
  cucore_status st = cucore_device_open(0, &dev);
  assert_int_not_equal(st, CUCORE_OK);
  assert_null(dev);
  assert_true(strlen(cucore_last_error()) > 0);
  cucore_device_props p;
  assert_int_not_equal(cucore_device_get_props(0, &p), CUCORE_OK);
}

static void null_arguments_are_named(void **state) {
  (void)state;
  assert_status(cucore_versions(NULL), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_device_open(0, NULL), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_stream_create(NULL, 0, 0, NULL), CUCORE_INVALID_ARGUMENT);
  cucore_stream *s = (cucore_stream *)0x1;
  assert_status(cucore_stream_create(NULL, 0, 0, &s), CUCORE_INVALID_ARGUMENT);
  assert_null(s);
  assert_contains(cucore_last_error(), "dev");
  cucore_devptr p = 1;
  assert_status(cucore_mem_alloc(NULL, 16, &p), CUCORE_INVALID_ARGUMENT);
  assert_int_equal(p, 0);
  float ms = 1.0f;
  assert_status(cucore_event_elapsed_ms(NULL, NULL, &ms), CUCORE_INVALID_ARGUMENT);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(versions_describe_every_library),
      cmocka_unit_test(device_count_agrees_with_the_driver_state),
      cmocka_unit_test(device_calls_without_a_device_fail_cleanly),
      cmocka_unit_test(null_arguments_are_named),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
