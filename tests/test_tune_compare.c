/* test_tune_compare.c -- the tune's device comparison (src/tune/compare.c) on the fake driver
 * (tests/fake/), which runs no kernel: the comparison kernel compiles and binds, a run says
 * CUCORE_NOT_SUPPORTED naming why (the tune then compares on the host) rather than calling
 * two buffers equal, and a comparison of 0 bytes is equal without a launch. */
#include "support.h"

#include "tune/compare.h"

#include <stdlib.h>

#ifndef CUCORE_FAKE_DRIVER_PATH
#error "CUCORE_FAKE_DRIVER_PATH is set by tests/CMakeLists.txt"
#endif

static void a_kernel_that_never_ran_is_not_equality(void **state) {
  (void)state;
  cucore_device *dev = NULL;
  cucore_stream *s = NULL;
  cc_tune_cmp *cmp = NULL;
  assert_ok(cucore_device_open(0, &dev));
  assert_ok(cucore_stream_create(dev, CUCORE_STREAM_NON_BLOCKING, 0, &s));
  assert_ok(cc_tune_cmp_create(dev, NULL, &cmp));
  cucore_devptr a = 0, b = 0;
  assert_ok(cucore_mem_alloc(dev, 4096, &a));
  assert_ok(cucore_mem_alloc(dev, 4096, &b));
  size_t first = 1;
  assert_ok(cc_tune_cmp_run(cmp, s, a, b, 0, &first));
  assert_int_equal(first, 0);
  assert_status(cc_tune_cmp_run(cmp, s, a, b, 4096, &first), CUCORE_NOT_SUPPORTED);
  assert_contains(cucore_last_error(), "wrote nothing back");
  assert_int_equal(first, 4096);
  assert_ok(cucore_mem_free(dev, a));
  assert_ok(cucore_mem_free(dev, b));
  cc_tune_cmp_destroy(cmp);
  cc_tune_cmp_destroy(NULL);
  assert_ok(cucore_stream_destroy(s));
  assert_ok(cucore_device_close(dev));
}

int main(void) {
  setenv("CUCORE_LIBCUDA", CUCORE_FAKE_DRIVER_PATH, 1);
  const struct CMUnitTest tests[] = {cmocka_unit_test(a_kernel_that_never_ran_is_not_equality)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
