/* test_errors.c -- the status table, status composition, and the kept message. */
#include "support.h"

#include <string.h>

#include "runtime/runtime.h"

static void names_and_texts_come_from_one_table(void **state) {
  (void)state;
  /* Every code has a distinct CUCORE_ name and a non-empty text. */
  for (int a = 0; a < CUCORE_CODE_COUNT; a++) {
    const char *na = cucore_status_name(a);
    assert_true(strncmp(na, "CUCORE_", 7) == 0);
    assert_true(strlen(cucore_status_text(a)) > 0);
    for (int b = a + 1; b < CUCORE_CODE_COUNT; b++)
      assert_string_not_equal(na, cucore_status_name(b));
  }
  assert_string_equal(cucore_status_name(CUCORE_ARG_COUNT), "CUCORE_ARG_COUNT");
  assert_string_equal(cucore_status_name(250), "CUCORE_UNKNOWN_STATUS");
}

static void native_codes_are_kept_in_the_status(void **state) {
  (void)state;
  cucore_status st = cc_status(CUCORE_KERNEL_FAULT, CUCORE_SOURCE_DRIVER, 700);
  assert_int_equal(CUCORE_CODE(st), CUCORE_KERNEL_FAULT);
  assert_int_equal(cucore_status_source(st), CUCORE_SOURCE_DRIVER);
  assert_int_equal(cucore_status_native(st), 700);
  assert_string_equal(cucore_status_name(st), "CUCORE_KERNEL_FAULT");
  assert_int_equal(cc_status(CUCORE_OK, CUCORE_SOURCE_DRIVER, 5), CUCORE_OK);
  /* The largest CUresult and an nvrtcResult survive the round trip. */
  st = cc_status(CUCORE_NVRTC_ERROR, CUCORE_SOURCE_NVRTC, 12);
  assert_int_equal(cucore_status_native(st), 12);
  st = cc_status(CUCORE_DRIVER_ERROR, CUCORE_SOURCE_DRIVER, 999);
  assert_int_equal(cucore_status_native(st), 999);
}

static void first_error_of_a_call_is_kept(void **state) {
  (void)state;
  cc_begin();
  cc_fail(CUCORE_PARSE_ERROR, "first: %d", 1);
  cc_fail(CUCORE_INTERNAL, "second");
  assert_string_equal(cucore_last_error(), "first: 1");
  assert_int_equal(CUCORE_CODE(cucore_last_status()), CUCORE_PARSE_ERROR);
  /* A new public call starts a new sequence. */
  assert_status(cucore_device_get_count(NULL), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "cucore_device_get_count");
  assert_contains(cucore_last_error(), "count");
}

static void cu_results_map_to_codes(void **state) {
  (void)state;
  assert_int_equal(cc_code_for_cu(CUDA_ERROR_OUT_OF_MEMORY), CUCORE_DEVICE_OUT_OF_MEMORY);
  assert_int_equal(cc_code_for_cu(CUDA_ERROR_ILLEGAL_ADDRESS), CUCORE_KERNEL_FAULT);
  assert_int_equal(cc_code_for_cu(CUDA_ERROR_STUB_LIBRARY), CUCORE_DRIVER_STUB);
  assert_int_equal(cc_code_for_cu(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES),
                   CUCORE_LAUNCH_OUT_OF_RESOURCES);
  assert_int_equal(cc_code_for_cu(CUDA_ERROR_NO_BINARY_FOR_GPU), CUCORE_INVALID_BINARY);
  assert_int_equal(cc_code_for_cu(CUDA_ERROR_UNSUPPORTED_PTX_VERSION), CUCORE_VERSION_MISMATCH);
  assert_int_equal(cc_code_for_cu((CUresult)12345), CUCORE_DRIVER_ERROR);
  /* A driver failure message names the call, the CUresult and the context. */
  cc_begin();
  cucore_status st = cc_fail_cu(CUDA_ERROR_ILLEGAL_ADDRESS, "cuStreamSynchronize", "stream %d", 3);
  assert_int_equal(cucore_status_native(st), CUDA_ERROR_ILLEGAL_ADDRESS);
  assert_contains(cucore_last_error(), "cuStreamSynchronize failed");
  assert_contains(cucore_last_error(), "(700)");
  assert_contains(cucore_last_error(), "stream 3");
  assert_contains(cucore_last_error(), "unusable");
}

static void destroying_null_is_a_no_op(void **state) {
  (void)state;
  assert_ok(cucore_device_close(NULL));
  assert_ok(cucore_stream_destroy(NULL));
  assert_ok(cucore_event_destroy(NULL));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(names_and_texts_come_from_one_table),
      cmocka_unit_test(native_codes_are_kept_in_the_status),
      cmocka_unit_test(first_error_of_a_call_is_kept),
      cmocka_unit_test(cu_results_map_to_codes),
      cmocka_unit_test(destroying_null_is_a_no_op),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
