/* test_ipc_event.c -- events shared between processes on the fake driver
 * (tests/fake/): the interprocess flag and its rule, export refused for other events, handles
 * checked on import (damaged, from this very process), import and wait in a forked child, and
 * a driver without the entry points. */
#include "support.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef CUCORE_FAKE_DRIVER_PATH
#error "CUCORE_FAKE_DRIVER_PATH is set by tests/CMakeLists.txt"
#endif

static cucore_device *dev;

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

static int old_driver_child(void) {
  setenv("CUCORE_FAKE_HIDE", "cuIpcGetEventHandle", 1);
  cucore_device *d = NULL;
  cucore_event *ev = NULL;
  cucore_ipc_event_handle h;
  cucore_status st = cucore_device_open(0, &d);
  if (st == CUCORE_OK)
    st = cucore_event_create(d, CUCORE_EVENT_INTERPROCESS | CUCORE_EVENT_DISABLE_TIMING, &ev);
  if (st == CUCORE_OK) st = cucore_event_export_ipc(ev, &h);
  int ok = CUCORE_CODE(st) == CUCORE_DRIVER_TOO_OLD &&
           strstr(cucore_last_error(), "cuIpcGetEventHandle");
  if (!ok) fprintf(stderr, "child: %s: %s\n", cucore_status_name(st), cucore_last_error());
  cucore_event_destroy(ev);
  cucore_device_close(d);
  return !ok;
}

static void absent_entry_points_are_named(void **state) {
  (void)state;
  in_child(old_driver_child);
}

static void flags_and_export_are_checked(void **state) {
  (void)state;
  cucore_event *ev = NULL;
  assert_status(cucore_event_create(dev, CUCORE_EVENT_INTERPROCESS, &ev), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "CUCORE_EVENT_DISABLE_TIMING");
  assert_null(ev);
  assert_status(cucore_event_create(dev, 8, &ev), CUCORE_INVALID_ARGUMENT);
  cucore_ipc_event_handle h;
  assert_ok(cucore_event_create(dev, CUCORE_EVENT_DISABLE_TIMING, &ev));
  assert_status(cucore_event_export_ipc(ev, &h), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "CUCORE_EVENT_INTERPROCESS");
  assert_ok(cucore_event_destroy(ev));
  assert_status(cucore_event_export_ipc(NULL, &h), CUCORE_INVALID_ARGUMENT);
}

static cucore_ipc_event_handle exported;

static int importer_child(void) {
  cucore_event *ev = NULL;
  cucore_stream *s = NULL;
  cucore_status st = cucore_event_import_ipc(dev, &exported, &ev);
  if (st == CUCORE_OK) st = cucore_stream_create(dev, CUCORE_STREAM_NON_BLOCKING, 0, &s);
  if (st == CUCORE_OK) st = cucore_stream_wait_event(s, ev);
  if (st == CUCORE_OK) st = cucore_stream_synchronize(s);
  float ms = 0;
  if (st == CUCORE_OK && cucore_event_elapsed_ms(ev, ev, &ms) == CUCORE_OK) {
    fprintf(stderr, "child: an imported event was timed\n");
    return 1;
  }
  if (st != CUCORE_OK) fprintf(stderr, "child: %s\n", cucore_last_error());
  cucore_stream_destroy(s);
  if (cucore_event_destroy(ev) != CUCORE_OK) return 1;
  return st != CUCORE_OK;
}

static void exported_and_imported(void **state) {
  (void)state;
  cucore_event *ev = NULL;
  cucore_stream *s = NULL;
  assert_ok(cucore_event_create(dev, CUCORE_EVENT_INTERPROCESS | CUCORE_EVENT_DISABLE_TIMING, &ev));
  assert_ok(cucore_stream_create(dev, CUCORE_STREAM_NON_BLOCKING, 0, &s));
  assert_ok(cucore_event_record(ev, s));
  assert_ok(cucore_event_export_ipc(ev, &exported));
  cucore_event *back = NULL;
  assert_status(cucore_event_import_ipc(dev, &exported, &back), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "this process");
  cucore_ipc_event_handle bad = exported;
  bad.magic ^= 1;
  assert_status(cucore_event_import_ipc(dev, &bad, &back), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "damaged");
  bad = exported;
  bad.version = 99;
  assert_status(cucore_event_import_ipc(dev, &bad, &back), CUCORE_INVALID_ARGUMENT);
  assert_null(back);
  in_child(importer_child); /* the fake's handle holds the event's address: fork keeps it */
  assert_ok(cucore_stream_destroy(s));
  assert_ok(cucore_event_destroy(ev));
}

static int setup(void **state) {
  (void)state;
  return cucore_device_open(0, &dev) == CUCORE_OK ? 0 : -1;
}
static int teardown(void **state) {
  (void)state;
  cucore_device_close(dev);
  return 0;
}

int main(void) {
  setenv("CUCORE_LIBCUDA", CUCORE_FAKE_DRIVER_PATH, 1);
  /* First, before this process loads the driver: the child loads it with symbols hidden. */
  const struct CMUnitTest first[] = {cmocka_unit_test(absent_entry_points_are_named)};
  int rc = cmocka_run_group_tests(first, NULL, NULL);
  const struct CMUnitTest tests[] = {cmocka_unit_test(flags_and_export_are_checked),
                                     cmocka_unit_test(exported_and_imported)};
  return rc | cmocka_run_group_tests(tests, setup, teardown);
}
