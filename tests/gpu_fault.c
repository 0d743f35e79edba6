/* gpu_fault.c -- a kernel that faults is reported as CUCORE_KERNEL_FAULT, and the message says
 * the context is now unusable. Its own process: the context does not recover. */
#include "gpu_support.h"

static void illegal_address_is_reported(void **state) {
  (void)state;
  cucore_device *dev = NULL;
  assert_ok(cucore_device_open(0, &dev));
  cucore_stream *s = NULL;
  assert_ok(cucore_stream_default(dev, &s));
  cucore_object *obj = gpu_compile(
      "extern \"C\" __global__ void bad(int *p) { p[threadIdx.x] = 1; }\n", CUCORE_CODE_CUBIN,
      NULL, NULL);
  cucore_kernel *k = gpu_kernel(obj, "bad");
  cucore_args *a = NULL;
  assert_ok(cucore_args_create(k, &a));
  assert_ok(cucore_args_push_u64(a, 0x10)); /* an address nothing is mapped at */
  cucore_launch_config c = {{1, 1, 1}, {32, 1, 1}, 0, s, 0, {{0}}};
  assert_ok(cucore_launch(k, &c, a));
  cucore_status st = cucore_stream_synchronize(s);
  assert_int_equal(CUCORE_CODE(st), CUCORE_KERNEL_FAULT);
  assert_int_equal(cucore_status_source(st), CUCORE_SOURCE_DRIVER);
  print_message("fault: %s\n", cucore_last_error());
  assert_contains(cucore_last_error(), "CUDA_ERROR_ILLEGAL_ADDRESS");
  assert_contains(cucore_last_error(), "unusable");
  /* Later calls fail cleanly too; nothing crashes. */
  cucore_devptr p = 0;
  assert_int_not_equal(cucore_mem_alloc(dev, 16, &p), CUCORE_OK);
  cucore_args_destroy(a);
  cucore_kernel_destroy(k);
  cucore_object_destroy(obj);
  cucore_device_close(dev);
}

int main(void) {
  if (!cucore_test_have_gpu()) return CUCORE_TEST_SKIP;
  const struct CMUnitTest tests[] = {cmocka_unit_test(illegal_address_is_reported)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
