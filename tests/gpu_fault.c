/* gpu_fault.c -- a kernel that faults is reported as CUCORE_KERNEL_FAULT, the message says
 * the context is now unusable, every later call on that device that reaches the GPU fails with
 * the same clear message (never a crash, never a wrong answer). Another device, where there
 * is one, either works or is refused with the same clear status: CUDA says the process must
 * end after such a fault, and on two H200s (driver 580) retaining device 1's context after
 * device 0 faulted returned CUDA_ERROR_ILLEGAL_ADDRESS. Its own process: the context does not
 * recover. */
#include "gpu_support.h"

#include <string.h>

static const char *const store_src =
    "extern \"C\" __global__ void store(int *p, int v) { p[threadIdx.x] = v + threadIdx.x; }\n";

/* A later call on the faulted device: it fails, and says the context is unusable. */
static void later_call_fails(const char *what, cucore_status st) {
  if (st == CUCORE_OK) fail_msg("%s succeeded on a device whose context is unusable", what);
  const char *msg = cucore_last_error();
  print_message("after the fault, %s: %s\n", what, msg);
  if (!strstr(msg, "unusable") && !strstr(msg, "CUDA_ERROR_ILLEGAL_ADDRESS"))
    fail_msg("%s: the message does not say the context is unusable: %s", what, msg);
}

/* Compiles `store` for device `ordinal`, runs it on 32 threads and checks every value. */
static void store_works_on(int ordinal) {
  cucore_device *dev = NULL;
  assert_ok(cucore_device_open(ordinal, &dev));
  cucore_stream *s = NULL;
  assert_ok(cucore_stream_create(dev, 0, 0, &s));
  cucore_object *obj = gpu_compile(store_src, CUCORE_CODE_CUBIN, NULL, NULL);
  cucore_kernel *k = gpu_kernel(obj, "store");
  cucore_devptr p = 0;
  assert_ok(cucore_mem_alloc(dev, 32 * sizeof(int), &p));
  cucore_args *a = NULL;
  assert_ok(cucore_args_create(k, &a));
  assert_ok(cucore_args_push_ptr(a, p));
  assert_ok(cucore_args_push_i32(a, 100));
  cucore_launch_config c = {{1, 1, 1}, {32, 1, 1}, 0, s, 0, {{0}}};
  assert_ok(cucore_launch(k, &c, a));
  int host[32];
  assert_ok(cucore_memcpy_dtoh(dev, host, p, sizeof host, s));
  assert_ok(cucore_stream_synchronize(s));
  for (int i = 0; i < 32; i++) assert_int_equal(host[i], 100 + i);
  print_message("device %d still works after device 0 faulted: 32 values match\n", ordinal);
  assert_ok(cucore_mem_free(dev, p));
  cucore_args_destroy(a);
  cucore_kernel_destroy(k);
  cucore_object_destroy(obj);
  cucore_stream_destroy(s);
  cucore_device_close(dev);
}

/* Device 1 after device 0 faulted, where there is one: it works, or it is refused with the
 * fault and a message saying other devices may be refused too. */
static void second_device_after_the_fault(void) {
  int count = 0;
  assert_ok(cucore_device_get_count(&count));
  if (count < 2) {
    print_message("one device only: the second-device part was not run\n");
    return;
  }
  cucore_device *d1 = NULL;
  cucore_status st = cucore_device_open(1, &d1);
  if (st != CUCORE_OK) {
    assert_int_equal(CUCORE_CODE(st), CUCORE_KERNEL_FAULT);
    assert_contains(cucore_last_error(), "other devices of the process");
    print_message("device 1 after device 0 faulted: refused with the fault too: %s\n",
                  cucore_last_error());
    return;
  }
  cucore_device_close(d1);
  store_works_on(1);
}

static void illegal_address_is_reported(void **state) {
  (void)state;
  cucore_device *dev = NULL;
  assert_ok(cucore_device_open(0, &dev));
  cucore_stream *s = NULL;
  assert_ok(cucore_stream_default(dev, &s));
  cucore_object *obj =
      gpu_compile("extern \"C\" __global__ void bad(int *p) { p[threadIdx.x] = 1; }\n",
                  CUCORE_CODE_CUBIN, NULL, NULL);
  cucore_kernel *k = gpu_kernel(obj, "bad");
  /* Made before the fault, used after it. */
  cucore_object *other = gpu_compile(store_src, CUCORE_CODE_CUBIN, NULL, NULL);
  cucore_kernel *good = gpu_kernel(other, "store");
  cucore_devptr pre = 0;
  assert_ok(cucore_mem_alloc(dev, 64, &pre));
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

  /* Every later call that reaches the GPU fails cleanly, with the same clear message. */
  cucore_devptr p = 0;
  later_call_fails("cucore_mem_alloc", cucore_mem_alloc(dev, 16, &p));
  assert_true(p == 0);
  later_call_fails("cucore_stream_synchronize (again)", cucore_stream_synchronize(s));
  cucore_stream *s2 = NULL;
  st = cucore_stream_create(dev, 0, 0, &s2);
  if (st == CUCORE_OK) {
    /* The driver may hand out a stream; work on it fails. */
    later_call_fails("a launch on a stream made after the fault",
                     cucore_launch(k,
                                   &(cucore_launch_config){{1, 1, 1}, {32, 1, 1}, 0, s2, 0, {{0}}},
                                   a));
    cucore_stream_destroy(s2);
  } else {
    later_call_fails("cucore_stream_create", st);
  }
  cucore_args *ga = NULL;
  assert_ok(cucore_args_create(good, &ga));
  assert_ok(cucore_args_push_ptr(ga, pre));
  assert_ok(cucore_args_push_i32(ga, 1));
  st = cucore_launch(good, &c, ga);
  if (st == CUCORE_OK) st = cucore_stream_synchronize(s);
  later_call_fails("a launch of another, correct kernel", st);
  int host[4] = {0};
  later_call_fails("cucore_memcpy_htod into memory allocated before the fault",
                   cucore_memcpy_htod(dev, pre, host, sizeof host, NULL));
  cucore_event *ev = NULL;
  st = cucore_event_create(dev, 0, &ev);
  if (st == CUCORE_OK) {
    st = cucore_event_record(ev, s);
    if (st == CUCORE_OK) st = cucore_event_synchronize(ev);
    later_call_fails("an event recorded and waited for", st);
    cucore_event_destroy(ev);
  } else {
    later_call_fails("cucore_event_create", st);
  }
  /* Code compiled after the fault compiles (NVRTC needs no GPU) but does not load. */
  cucore_object *late = gpu_compile(store_src, CUCORE_CODE_CUBIN, NULL, NULL);
  cucore_kernel *late_k = NULL;
  st = cucore_object_get_kernel(late, "store", &late_k);
  if (st == CUCORE_OK) {
    /* A library is not tied to a context (and loads lazily): the handle may come; using it
     * on the device may not. */
    cucore_args *la = NULL;
    assert_ok(cucore_args_create(late_k, &la));
    assert_ok(cucore_args_push_ptr(la, pre));
    assert_ok(cucore_args_push_i32(la, 1));
    st = cucore_launch(late_k, &c, la);
    if (st == CUCORE_OK) st = cucore_stream_synchronize(s);
    cucore_args_destroy(la);
    later_call_fails("a launch of code loaded after the fault", st);
  } else {
    later_call_fails("loading new code (cucore_object_get_kernel)", st);
  }
  cucore_kernel_destroy(late_k);
  cucore_object_destroy(late);
  /* A query the driver answers on the host may still answer; the answer must be sound. */
  int blocks = -1;
  st = cucore_occupancy_max_active_blocks(good, &c, 0, &blocks);
  if (st == CUCORE_OK) {
    print_message("after the fault, occupancy (a host-side query) still answers %d\n", blocks);
    assert_true(blocks >= 1 && blocks <= 64);
  } else {
    later_call_fails("cucore_occupancy_max_active_blocks", st);
  }
  cucore_mem_free(dev, pre); /* may fail too; the record is released either way */
  cucore_args_destroy(ga);
  cucore_args_destroy(a);
  cucore_kernel_destroy(good);
  cucore_kernel_destroy(k);
  cucore_object_destroy(other);
  cucore_object_destroy(obj);
  cucore_device_close(dev);
  second_device_after_the_fault();
}

int main(void) {
  if (!cucore_test_have_gpu()) return CUCORE_TEST_SKIP;
  const struct CMUnitTest tests[] = {cmocka_unit_test(illegal_address_is_reported)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
