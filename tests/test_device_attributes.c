/* test_device_attributes.c -- device attributes and streams waiting on streams, on the fake
 * driver (tests/fake/): the attribute table whole and its names both ways, unknown ids and
 * names refused with the range or a hint, every id read as the driver answers it, the
 * properties struct read from the same rows, the version gates (forked children with an
 * older or newer fake driver); cucore_stream_wait_stream within a device, across devices,
 * its refusals and the capture rules. */
#include "support.h"
#include "runtime/runtime.h"

#include <ctype.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef CUCORE_FAKE_DRIVER_PATH
#error "CUCORE_FAKE_DRIVER_PATH is set by tests/CMakeLists.txt"
#endif

static cucore_device *dev, *dev1;

/* Runs `body` in a forked child; the test fails unless it exits 0. */
static void in_child(int (*body)(void)) {
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) _exit(body());
  int ws = 0;
  assert_int_equal(waitpid(pid, &ws, 0), pid);
  assert_true(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
}

static int child_fails(const char *what, cucore_status st) {
  fprintf(stderr, "child: %s: %s: %s\n", what, cucore_status_name(st), cucore_last_error());
  return 1;
}

/* A 13.1 driver answers id 148. */
static int newer_driver_child(void) {
  setenv("CUCORE_FAKE_DRIVER_VERSION", "13010", 1);
  int v = 0;
  cucore_status st = cucore_device_get_attribute(0, 148, &v);
  return st == CUCORE_OK ? 0 : child_fails("13.1, id 148", st);
}

/* A 12.8 driver refuses 13.0's ids: DRIVER_TOO_OLD naming both versions. */
static int older_driver_child(void) {
  setenv("CUCORE_FAKE_DRIVER_VERSION", "12080", 1);
  int v = 7;
  cucore_status st = cucore_device_get_attribute(0, 144, &v);
  if (CUCORE_CODE(st) != CUCORE_DRIVER_TOO_OLD || v != 0 ||
      !strstr(cucore_last_error(), "host_memory_pools_supported") ||
      !strstr(cucore_last_error(), "CUDA 13.0") || !strstr(cucore_last_error(), "12.8"))
    return child_fails("12.8, id 144", st);
  st = cucore_device_get_attribute(0, 143, &v); /* 12.9's: the driver is asked, and refuses */
  if (CUCORE_CODE(st) != CUCORE_DRIVER_TOO_OLD || !strstr(cucore_last_error(), "12.9"))
    return child_fails("12.8, id 143", st);
  st = cucore_device_get_attribute(0, 16, &v);
  return st == CUCORE_OK && v == 132 ? 0 : child_fails("12.8, id 16", st);
}

static void version_gates(void **state) {
  (void)state;
  in_child(newer_driver_child);
  in_child(older_driver_child);
}

static void table_is_whole_and_names_go_both_ways(void **state) {
  (void)state;
  for (int id = CUCORE_DEVICE_ATTRIBUTE_FIRST; id <= CUCORE_DEVICE_ATTRIBUTE_LAST; id++) {
    cucore_device_attribute_info info;
    assert_ok(cucore_device_attribute_get_info(id, &info));
    assert_int_equal(info.id, id);
    assert_true(info.since >= 12000 && info.meaning && info.meaning[0]);
    char upper[128] = "CU_DEVICE_ATTRIBUTE_";
    size_t n = strlen(upper);
    for (const char *c = info.name; *c && n + 1 < sizeof upper; c++) {
      assert_false(isupper((unsigned char)*c));
      upper[n++] = (char)toupper((unsigned char)*c);
    }
    upper[n] = '\0';
    assert_string_equal(upper, info.driver_name);
    int back = 0;
    assert_ok(cucore_device_attribute_from_name(info.name, &back));
    assert_int_equal(back, id);
    assert_ok(cucore_device_attribute_from_name(info.driver_name, &back));
    assert_int_equal(back, id);
    const char *name = NULL;
    assert_ok(cucore_device_attribute_get_name(id, &name));
    assert_string_equal(name, info.name);
    if (id <= 147) /* the headers cucore builds with (13.0) */
      assert_true(info.since <= 13000);
  }
  cucore_device_attribute_info info;
  assert_ok(cucore_device_attribute_get_info(15, &info));
  assert_int_equal(info.deprecated, 1);
  assert_ok(cucore_device_attribute_get_info(16, &info));
  assert_string_equal(info.props_field, "sm_count");
  assert_ok(cucore_device_attribute_get_info(148, &info));
  assert_string_equal(info.name, "atomic_reduction_supported");
  assert_int_equal(info.since, 13010);
}

static void names_aliases_and_hints(void **state) {
  (void)state;
  int id = -1;
  assert_ok(cucore_device_attribute_from_name("Max_Threads_Per_Block", &id));
  assert_int_equal(id, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  assert_ok(cucore_device_attribute_from_name("MULTIPROCESSOR_COUNT", &id));
  assert_int_equal(id, 16);
  /* The driver's older spellings of an id give that id; the name stays cucore's. */
  assert_ok(cucore_device_attribute_from_name("CU_DEVICE_ATTRIBUTE_SHARED_MEMORY_PER_BLOCK", &id));
  assert_int_equal(id, 8);
  assert_ok(cucore_device_attribute_from_name("virtual_address_management_supported", &id));
  assert_int_equal(id, 102);
  const char *name = NULL;
  assert_ok(cucore_device_attribute_get_name(102, &name));
  assert_string_equal(name, "virtual_memory_management_supported");
  assert_status(cucore_device_attribute_from_name("threads_per_blok", &id), CUCORE_NOT_FOUND);
  assert_int_equal(id, 0);
  assert_contains(cucore_last_error(), "`threads_per_blok`");
  assert_status(cucore_device_attribute_from_name("max_threads", &id), CUCORE_NOT_FOUND);
  assert_contains(cucore_last_error(), "did you mean `max_threads_per_block`?");
  assert_status(cucore_device_attribute_from_name(NULL, &id), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "`name` is NULL");
  assert_status(cucore_device_attribute_from_name("warp_size", NULL), CUCORE_INVALID_ARGUMENT);
}

static void unknown_ids_name_the_range(void **state) {
  (void)state;
  int v = 5;
  const int bad[] = {0, -3, 149, 100000};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    assert_status(cucore_device_get_attribute(0, bad[i], &v), CUCORE_INVALID_ARGUMENT);
    assert_int_equal(v, 0);
    assert_contains(cucore_last_error(),
                    "the ids run 1 (CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK) "
                    "to 148 (CU_DEVICE_ATTRIBUTE_ATOMIC_REDUCTION_SUPPORTED)");
  }
  assert_status(cucore_device_get_attribute(0, 149, &v), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "newer than cucore's table");
  const char *name = "x";
  assert_status(cucore_device_attribute_get_name(0, &name), CUCORE_INVALID_ARGUMENT);
  assert_null(name);
  cucore_device_attribute_info info;
  assert_status(cucore_device_attribute_get_info(149, &info), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_device_get_attribute(0, 1, NULL), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_device_get_attribute(7, 1, &v), CUCORE_INVALID_DEVICE);
  assert_contains(cucore_last_error(), "valid ordinals 0..1");
}

/* The fake's cuDeviceGetAttribute, called directly (the handle cucore loaded). */
typedef CUresult (*get_attr_fn)(int *, CUdevice_attribute, CUdevice);
static get_attr_fn direct_get_attribute(void) {
  void *h = dlopen(CUCORE_FAKE_DRIVER_PATH, RTLD_NOW | RTLD_NOLOAD);
  assert_non_null(h);
  CUresult (*gpa)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *) =
      (CUresult(*)(const char *, void **, int, cuuint64_t,
                   CUdriverProcAddressQueryResult *))dlsym(h, "cuGetProcAddress_v2");
  assert_non_null(gpa);
  void *fn = NULL;
  CUdriverProcAddressQueryResult found;
  assert_int_equal(gpa("cuDeviceGetAttribute", &fn, 2000, 0, &found), CUDA_SUCCESS);
  dlclose(h);
  return (get_attr_fn)fn;
}

static void every_id_reads_what_the_driver_says(void **state) {
  (void)state;
  setenv("CUCORE_FAKE_ATTR_IDS", "1", 1); /* attributes without a value of their own: 1000+id */
  get_attr_fn direct = direct_get_attribute();
  for (int id = CUCORE_DEVICE_ATTRIBUTE_FIRST; id <= CUCORE_DEVICE_ATTRIBUTE_LAST; id++) {
    int want = -1, got = -2;
    CUresult r = direct(&want, (CUdevice_attribute)id, 1);
    cucore_status st = cucore_device_get_attribute(1, id, &got);
    if (id == 148) { /* the fake is 13.0: refused before the driver is asked */
      assert_int_equal(r, CUDA_ERROR_INVALID_VALUE);
      assert_status(st, CUCORE_DRIVER_TOO_OLD);
      assert_contains(cucore_last_error(),
                      "atomic_reduction_supported (CU_DEVICE_ATTRIBUTE_ATOMIC_REDUCTION_SUPPORTED, "
                      "id 148) came with CUDA 13.1; the loaded driver is version 13.0");
      continue;
    }
    assert_int_equal(r, CUDA_SUCCESS);
    assert_ok(st);
    assert_int_equal(got, want);
  }
  int v = 0;
  assert_ok(cucore_device_get_attribute(0, CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT, &v));
  assert_int_equal(v, 1000 + CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT);
  unsetenv("CUCORE_FAKE_ATTR_IDS");
}

/* cucore_device_props's attribute fields come from the same rows: each equals the getter's. */
static void props_are_the_same_attributes(void **state) {
  (void)state;
  cucore_device_props p;
  assert_ok(cucore_device_get_props(0, &p));
  int fields = 0;
  for (int id = CUCORE_DEVICE_ATTRIBUTE_FIRST; id <= CUCORE_DEVICE_ATTRIBUTE_LAST; id++) {
    const cc_devattr *a = cc_devattr_find(id);
    if (a->props_offset < 0) continue;
    fields++;
    int v = 0;
    assert_ok(cucore_device_get_attribute(0, id, &v));
    int field = *(const int *)((const char *)&p + a->props_offset);
    if (id == CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES) /* one bit of the mask */
      assert_int_equal(field, (v & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) != 0);
    else
      assert_int_equal(field, v);
  }
  assert_int_equal(fields, 36);
  assert_int_equal(p.sm_count, 132);
}

/* ---- streams waiting on streams ------------------------------------------------------------ */

typedef void (*last_wait_fn)(CUstream *, CUstream *, CUcontext *, long *);
static last_wait_fn last_wait(void) {
  void *h = dlopen(CUCORE_FAKE_DRIVER_PATH, RTLD_NOW | RTLD_NOLOAD);
  assert_non_null(h);
  last_wait_fn f = (last_wait_fn)dlsym(h, "fake_last_wait");
  dlclose(h);
  assert_non_null(f);
  return f;
}

static void wait_stream_orders_through_an_event(void **state) {
  (void)state;
  cucore_stream *a = NULL, *b = NULL, *c = NULL;
  assert_ok(cucore_stream_create(dev, CUCORE_STREAM_NON_BLOCKING, 0, &a));
  assert_ok(cucore_stream_create(dev, CUCORE_STREAM_NON_BLOCKING, 0, &b));
  assert_ok(cucore_stream_create(dev1, CUCORE_STREAM_NON_BLOCKING, 0, &c));
  CUstream waiter, on;
  CUcontext ctx;
  long live_before, live;
  last_wait()(&waiter, &on, &ctx, &live_before);
  assert_ok(cucore_stream_wait_stream(a, b));
  last_wait()(&waiter, &on, &ctx, &live);
  assert_ptr_equal(waiter, a->handle);
  assert_ptr_equal(on, b->handle);
  assert_ptr_equal(ctx, dev->ctx);
  assert_int_equal(live, live_before); /* the event is gone */
  /* Across devices: the event is made in the waited-on stream's context. */
  assert_ok(cucore_stream_wait_stream(a, c));
  last_wait()(&waiter, &on, &ctx, &live);
  assert_ptr_equal(waiter, a->handle);
  assert_ptr_equal(on, c->handle);
  assert_ptr_equal(ctx, dev1->ctx);
  assert_int_equal(live, live_before);
  cucore_stream *legacy0 = NULL;
  assert_ok(cucore_stream_default(dev, &legacy0));
  assert_ok(cucore_stream_wait_stream(c, legacy0));
  last_wait()(&waiter, &on, &ctx, &live);
  assert_ptr_equal(waiter, c->handle);
  assert_null(on);
  assert_ptr_equal(ctx, dev->ctx);
  assert_ok(cucore_stream_destroy(a));
  assert_ok(cucore_stream_destroy(b));
  assert_ok(cucore_stream_destroy(c));
}

static void wait_stream_refusals(void **state) {
  (void)state;
  cucore_stream *a = NULL, *legacy0 = NULL, *legacy1 = NULL;
  assert_ok(cucore_stream_create(dev, 0, 0, &a));
  assert_status(cucore_stream_wait_stream(NULL, a), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "cucore_stream_wait_stream: `waiter` is NULL");
  assert_status(cucore_stream_wait_stream(a, NULL), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "cucore_stream_wait_stream: `waited` is NULL");
  assert_status(cucore_stream_wait_stream(a, a), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "the same stream (of device 0)");
  assert_ok(cucore_stream_default(dev, &legacy0));
  assert_ok(cucore_stream_default(dev1, &legacy1));
  assert_status(cucore_stream_wait_stream(legacy0, legacy0), CUCORE_INVALID_ARGUMENT);
  assert_ok(cucore_stream_wait_stream(legacy0, legacy1)); /* two devices' legacy streams */
  assert_ok(cucore_stream_destroy(a));
  assert_status(cucore_stream_wait_stream(a, legacy0), CUCORE_MISUSE);
}

static void wait_stream_follows_capture_rules(void **state) {
  (void)state;
  cucore_stream *origin = NULL, *helper = NULL, *outside = NULL, *legacy = NULL;
  assert_ok(cucore_stream_create(dev, 0, 0, &origin)); /* blocking: the legacy stream waits */
  assert_ok(cucore_stream_create(dev, CUCORE_STREAM_NON_BLOCKING, 0, &helper));
  assert_ok(cucore_stream_create(dev, CUCORE_STREAM_NON_BLOCKING, 0, &outside));
  assert_ok(cucore_stream_default(dev, &legacy));
  assert_ok(cucore_stream_begin_capture(origin, CUCORE_CAPTURE_RELAXED));
  /* A fork: the helper waits on the capturing stream and joins its capture. */
  assert_ok(cucore_stream_wait_stream(helper, origin));
  cucore_capture_info info;
  assert_ok(cucore_stream_get_capture_info(helper, &info));
  assert_int_equal(info.by_cucore, 1);
  assert_int_equal(info.is_origin, 0);
  /* A capturing stream may not wait on work outside its capture. */
  assert_status(cucore_stream_wait_stream(origin, outside), CUCORE_STREAM_CAPTURE);
  assert_contains(cucore_last_error(), "cross the capture's boundary");
  assert_contains(cucore_last_error(), "the capture goes on");
  /* The legacy stream waits for the capturing (blocking) origin: refused. */
  assert_status(cucore_stream_wait_stream(legacy, helper), CUCORE_STREAM_CAPTURE);
  assert_contains(cucore_last_error(), "`waiter` is the legacy default stream");
  /* The join back, inside the capture, then the end. */
  assert_ok(cucore_stream_wait_stream(origin, helper));
  cucore_graph *g = NULL;
  assert_ok(cucore_stream_end_capture(origin, &g));
  assert_ok(cucore_stream_get_capture_info(helper, &info));
  assert_int_equal(info.by_cucore, 0);
  assert_ok(cucore_graph_destroy(g));
  /* Two captures do not merge. */
  assert_ok(cucore_stream_begin_capture(origin, CUCORE_CAPTURE_RELAXED));
  assert_ok(cucore_stream_begin_capture(outside, CUCORE_CAPTURE_RELAXED));
  assert_status(cucore_stream_wait_stream(origin, outside), CUCORE_STREAM_CAPTURE);
  assert_contains(cucore_last_error(), "merge two captures");
  assert_ok(cucore_stream_end_capture(outside, &g));
  assert_ok(cucore_graph_destroy(g));
  assert_ok(cucore_stream_end_capture(origin, &g));
  assert_ok(cucore_graph_destroy(g));
  assert_ok(cucore_stream_destroy(origin));
  assert_ok(cucore_stream_destroy(helper));
  assert_ok(cucore_stream_destroy(outside));
}

static int setup(void **state) {
  (void)state;
  if (cucore_device_open(0, &dev) != CUCORE_OK) return -1;
  return cucore_device_open(1, &dev1) == CUCORE_OK ? 0 : -1;
}
static int teardown(void **state) {
  (void)state;
  cucore_device_close(dev1);
  cucore_device_close(dev);
  return 0;
}

int main(void) {
  setenv("CUCORE_LIBCUDA", CUCORE_FAKE_DRIVER_PATH, 1);
  setenv("CUCORE_FAKE_DEVICES", "2", 1);
  /* First, before this process loads the driver: each child loads its own version. */
  const struct CMUnitTest first[] = {cmocka_unit_test(version_gates)};
  int rc = cmocka_run_group_tests(first, NULL, NULL);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(table_is_whole_and_names_go_both_ways),
      cmocka_unit_test(names_aliases_and_hints),
      cmocka_unit_test(unknown_ids_name_the_range),
      cmocka_unit_test(every_id_reads_what_the_driver_says),
      cmocka_unit_test(props_are_the_same_attributes),
      cmocka_unit_test(wait_stream_orders_through_an_event),
      cmocka_unit_test(wait_stream_refusals),
      cmocka_unit_test(wait_stream_follows_capture_rules),
  };
  return rc | cmocka_run_group_tests(tests, setup, teardown);
}
