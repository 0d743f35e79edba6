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

/* What the fault test holds across its steps: the faulted kernel and its arguments, a correct
 * kernel and memory made before the fault, the launch configuration. */
typedef struct faulted {
  cucore_device *dev;
  cucore_stream *s;
  cucore_object *obj, *other;
  cucore_kernel *k, *good;
  cucore_args *a, *ga;
  cucore_devptr pre;
  cucore_launch_config c;
} faulted;

/* A kernel that stores through address 0x10: the fault reported as such on the next sync. */
static void make_the_fault(faulted *f) {
  assert_ok(cucore_device_open(0, &f->dev));
  assert_ok(cucore_stream_default(f->dev, &f->s));
  f->obj = gpu_compile("extern \"C\" __global__ void bad(int *p) { p[threadIdx.x] = 1; }\n",
                       CUCORE_CODE_CUBIN, NULL, NULL);
  f->k = gpu_kernel(f->obj, "bad");
  /* Made before the fault, used after it. */
  f->other = gpu_compile(store_src, CUCORE_CODE_CUBIN, NULL, NULL);
  f->good = gpu_kernel(f->other, "store");
  assert_ok(cucore_mem_alloc(f->dev, 64, &f->pre));
  assert_ok(cucore_args_create(f->k, &f->a));
  assert_ok(cucore_args_push_u64(f->a, 0x10)); /* an address nothing is mapped at */
  f->c = (cucore_launch_config){{1, 1, 1}, {32, 1, 1}, 0, f->s, 0, {{0}}};
  assert_ok(cucore_launch(f->k, &f->c, f->a));
  cucore_status st = cucore_stream_synchronize(f->s);
  assert_int_equal(CUCORE_CODE(st), CUCORE_KERNEL_FAULT);
  assert_int_equal(cucore_status_source(st), CUCORE_SOURCE_DRIVER);
  print_message("fault: %s\n", cucore_last_error());
  assert_contains(cucore_last_error(), "CUDA_ERROR_ILLEGAL_ADDRESS");
  assert_contains(cucore_last_error(), "unusable");
}

/* Memory, streams and launches after the fault fail cleanly, with the same clear message. */
static void memory_streams_and_launches_fail(faulted *f) {
  cucore_devptr p = 0;
  later_call_fails("cucore_mem_alloc", cucore_mem_alloc(f->dev, 16, &p));
  assert_true(p == 0);
  later_call_fails("cucore_stream_synchronize (again)", cucore_stream_synchronize(f->s));
  cucore_stream *s2 = NULL;
  cucore_status st = cucore_stream_create(f->dev, 0, 0, &s2);
  if (st == CUCORE_OK) {
    /* The driver may hand out a stream; work on it fails. */
    later_call_fails("a launch on a stream made after the fault",
                     cucore_launch(f->k,
                                   &(cucore_launch_config){{1, 1, 1}, {32, 1, 1}, 0, s2, 0, {{0}}},
                                   f->a));
    cucore_stream_destroy(s2);
  } else {
    later_call_fails("cucore_stream_create", st);
  }
  assert_ok(cucore_args_create(f->good, &f->ga));
  assert_ok(cucore_args_push_ptr(f->ga, f->pre));
  assert_ok(cucore_args_push_i32(f->ga, 1));
  st = cucore_launch(f->good, &f->c, f->ga);
  if (st == CUCORE_OK) st = cucore_stream_synchronize(f->s);
  later_call_fails("a launch of another, correct kernel", st);
  int host[4] = {0};
  later_call_fails("cucore_memcpy_htod into memory allocated before the fault",
                   cucore_memcpy_htod(f->dev, f->pre, host, sizeof host, NULL));
}

/* Events after the fault fail (or cannot be made). */
static void events_fail(faulted *f) {
  cucore_event *ev = NULL;
  cucore_status st = cucore_event_create(f->dev, 0, &ev);
  if (st == CUCORE_OK) {
    st = cucore_event_record(ev, f->s);
    if (st == CUCORE_OK) st = cucore_event_synchronize(ev);
    later_call_fails("an event recorded and waited for", st);
    cucore_event_destroy(ev);
  } else {
    later_call_fails("cucore_event_create", st);
  }
}

/* Code compiled after the fault compiles (NVRTC needs no GPU) but does not load. */
static void code_compiled_later_does_not_run(faulted *f) {
  cucore_object *late = gpu_compile(store_src, CUCORE_CODE_CUBIN, NULL, NULL);
  cucore_kernel *late_k = NULL;
  cucore_status st = cucore_object_get_kernel(late, "store", &late_k);
  if (st == CUCORE_OK) {
    /* A library is not tied to a context (and loads lazily): the handle may come; using it
     * on the device may not. */
    cucore_args *la = NULL;
    assert_ok(cucore_args_create(late_k, &la));
    assert_ok(cucore_args_push_ptr(la, f->pre));
    assert_ok(cucore_args_push_i32(la, 1));
    st = cucore_launch(late_k, &f->c, la);
    if (st == CUCORE_OK) st = cucore_stream_synchronize(f->s);
    cucore_args_destroy(la);
    later_call_fails("a launch of code loaded after the fault", st);
  } else {
    later_call_fails("loading new code (cucore_object_get_kernel)", st);
  }
  cucore_kernel_destroy(late_k);
  cucore_object_destroy(late);
}

/* A query the driver answers on the host may still answer; the answer must be sound. */
static void host_queries_stay_sound(faulted *f) {
  int blocks = -1;
  cucore_status st = cucore_occupancy_max_active_blocks(f->good, &f->c, 0, &blocks);
  if (st == CUCORE_OK) {
    print_message("after the fault, occupancy (a host-side query) still answers %d\n", blocks);
    assert_true(blocks >= 1 && blocks <= 64);
  } else {
    later_call_fails("cucore_occupancy_max_active_blocks", st);
  }
}

static void release(faulted *f) {
  cucore_mem_free(f->dev, f->pre); /* may fail too; the record is released either way */
  cucore_args_destroy(f->ga);
  cucore_args_destroy(f->a);
  cucore_kernel_destroy(f->good);
  cucore_kernel_destroy(f->k);
  cucore_object_destroy(f->other);
  cucore_object_destroy(f->obj);
  cucore_device_close(f->dev);
}

static void illegal_address_is_reported(void **state) {
  (void)state;
  faulted f;
  memset(&f, 0, sizeof f);
  make_the_fault(&f);
  memory_streams_and_launches_fail(&f);
  events_fail(&f);
  code_compiled_later_does_not_run(&f);
  host_queries_stay_sound(&f);
  release(&f);
  second_device_after_the_fault();
}

int main(void) {
  if (!cucore_test_have_gpu()) return CUCORE_TEST_SKIP;
  const struct CMUnitTest tests[] = {cmocka_unit_test(illegal_address_is_reported)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
