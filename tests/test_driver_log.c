/* test_driver_log.c -- the driver's own log, through the fake driver of
 * tests/fake/: its cuLogsRegisterCallback keeps cucore's callback, and fake_log_emit (dlsym)
 * calls it as the driver does while a call fails. Checked: the message of the next failed
 * driver call ends in "the driver says: ..." (filtered: control characters as \xHH; bounded),
 * and only once; cucore_driver_log_read/_last/_forward/_clear; and, in a child process whose
 * fake hides cuLogs* (a driver older than 12.9), that nothing is appended, _available says 0
 * and the others say CUCORE_DRIVER_TOO_OLD naming CUDA 12.9. */
#include "support.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef CUCORE_FAKE_DRIVER_PATH
#error "CUCORE_FAKE_DRIVER_PATH is set by tests/CMakeLists.txt"
#endif

typedef int (*emit_fn)(int level, const char *text, size_t length);

/* The fake's emitter (the driver must be loaded: cucore_driver_log_available loads it). */
static emit_fn emitter(void) {
  int avail = -1;
  assert_ok(cucore_driver_log_available(&avail));
  assert_int_equal(avail, 1);
  void *lib = dlopen(CUCORE_FAKE_DRIVER_PATH, RTLD_NOW | RTLD_NOLOAD);
  assert_non_null(lib);
  emit_fn f = (emit_fn)(uintptr_t)dlsym(lib, "fake_log_emit");
  assert_non_null(f);
  dlclose(lib);
  return f;
}

static void emit(const char *text) { assert_int_equal(emitter()(0, text, strlen(text)), 1); }

/* A driver call that fails in the fake (cuEventElapsedTime on events never recorded); the
 * failure's message is copied to out. */
static void failing_call(char *out, size_t cap) {
  cucore_device *dev = NULL;
  cucore_event *a = NULL, *b = NULL;
  float ms = 0;
  assert_ok(cucore_device_open(0, &dev));
  assert_ok(cucore_event_create(dev, 0, &a));
  assert_ok(cucore_event_create(dev, 0, &b));
  cucore_status st = cucore_event_elapsed_ms(a, b, &ms);
  snprintf(out, cap, "%s", cucore_last_error());
  assert_int_not_equal(st, CUCORE_OK);
  assert_contains(out, "cuEventElapsedTime");
  assert_ok(cucore_event_destroy(a));
  assert_ok(cucore_event_destroy(b));
  assert_ok(cucore_device_close(dev));
}

static int no_control_bytes(const char *s) {
  for (; *s; s++)
    if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f) return 0;
  return 1;
}

static void failure_says_what_the_driver_logged(void **state) {
  (void)state;
  char msg[4096];
  emit("event \x01not recorded\x1b[2J \xff\n");
  failing_call(msg, sizeof msg);
  assert_contains(msg, "; the driver says: event \\x01not recorded\\x1b[2J \\xff.");
  assert_true(no_control_bytes(msg));
  /* taken once: the next failure, which logged nothing, does not repeat it */
  failing_call(msg, sizeof msg);
  if (strstr(msg, "the driver says")) fail_msg("a taken driver message came back: %s", msg);
}

static void long_message_is_bounded(void **state) {
  (void)state;
  static char big[3000];
  memset(big, 'a', sizeof big - 1);
  emit(big);
  char last[1024];
  assert_ok(cucore_driver_log_last(last, sizeof last));
  assert_int_equal(strlen(last), CUCORE_DRIVER_LOG_MESSAGE_MAX - 1);
  assert_string_equal(last + strlen(last) - 3, "...");
  char msg[4096];
  failing_call(msg, sizeof msg);
  assert_contains(msg, "the driver says: aaaa");
  assert_true(strlen(msg) < 2048);
}

static void read_keeps_the_newest(void **state) {
  (void)state;
  assert_ok(cucore_driver_log_clear());
  size_t needed = 99;
  assert_ok(cucore_driver_log_read(NULL, 0, &needed));
  assert_int_equal(needed, 1);
  emit("first");
  emit("second\n");
  emit("third");
  char buf[64];
  assert_ok(cucore_driver_log_read(buf, sizeof buf, &needed));
  assert_string_equal(buf, "first\nsecond\nthird\n");
  assert_int_equal(needed, strlen("first\nsecond\nthird\n") + 1);
  assert_ok(cucore_driver_log_read(buf, 14, &needed)); /* room for the two newest only */
  assert_string_equal(buf, "second\nthird\n");
  assert_ok(cucore_driver_log_last(buf, sizeof buf));
  assert_string_equal(buf, "third");
  for (int i = 0; i < CUCORE_DRIVER_LOG_KEEP + 5; i++) emit("x");
  static char all[CUCORE_DRIVER_LOG_KEEP * 4];
  assert_ok(cucore_driver_log_read(all, sizeof all, &needed));
  assert_int_equal(needed, CUCORE_DRIVER_LOG_KEEP * 2 + 1); /* only the newest are kept */
  assert_status(cucore_driver_log_read(NULL, 8, NULL), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_driver_log_last(buf, 0), CUCORE_INVALID_ARGUMENT);
}

static char forwarded[256];
static int forwarded_level = -1, forwarded_count;
static void on_message(void *user, cucore_driver_log_level level, const char *message) {
  assert_ptr_equal(user, &forwarded_count);
  snprintf(forwarded, sizeof forwarded, "%s", message);
  forwarded_level = (int)level;
  forwarded_count++;
}

static void forward_hands_on_filtered_messages(void **state) {
  (void)state;
  assert_ok(cucore_driver_log_forward(on_message, &forwarded_count));
  assert_int_equal(emitter()(1, "warn\ting", 8), 1);
  assert_int_equal(forwarded_count, 1);
  assert_string_equal(forwarded, "warn\\x09ing");
  assert_int_equal(forwarded_level, CUCORE_DRIVER_LOG_WARNING);
  assert_ok(cucore_driver_log_forward(NULL, NULL));
  emit("not forwarded");
  assert_int_equal(forwarded_count, 1);
}

/* In a child whose driver has no cuLogs*: exit 0 when everything is as it should be. */
static int absent_log_child(void) {
  setenv("CUCORE_FAKE_NO_LOGS", "1", 1);
  int avail = -1;
  if (cucore_driver_log_available(&avail) != CUCORE_OK || avail != 0) return 1;
  char buf[64];
  cucore_status st = cucore_driver_log_read(buf, sizeof buf, NULL);
  if (CUCORE_CODE(st) != CUCORE_DRIVER_TOO_OLD || !strstr(cucore_last_error(), "12.9")) {
    fprintf(stderr, "read: %s: %s\n", cucore_status_name(st), cucore_last_error());
    return 2;
  }
  if (CUCORE_CODE(cucore_driver_log_forward(on_message, NULL)) != CUCORE_DRIVER_TOO_OLD) return 3;
  if (CUCORE_CODE(cucore_driver_log_last(buf, sizeof buf)) != CUCORE_DRIVER_TOO_OLD) return 4;
  if (CUCORE_CODE(cucore_driver_log_clear()) != CUCORE_DRIVER_TOO_OLD) return 5;
  char msg[4096];
  failing_call(msg, sizeof msg);
  return strstr(msg, "driver says") ? 6 : 0;
}

static void absent_log_is_too_old_not_a_crash(void **state) {
  (void)state;
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) _exit(absent_log_child());
  int ws = 0;
  assert_int_equal(waitpid(pid, &ws, 0), pid);
  if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0)
    fail_msg("the child without cuLogs* failed (exit %d, signal %d)",
             WIFEXITED(ws) ? WEXITSTATUS(ws) : -1, WIFSIGNALED(ws) ? WTERMSIG(ws) : 0);
}

int main(void) {
  /* Before anything loads the driver: the fake is this process's driver. */
  setenv("CUCORE_LIBCUDA", CUCORE_FAKE_DRIVER_PATH, 1);
  const struct CMUnitTest tests[] = {
      /* first: its child must load the driver itself (this process has not yet) */
      cmocka_unit_test(absent_log_is_too_old_not_a_crash),
      cmocka_unit_test(failure_says_what_the_driver_logged),
      cmocka_unit_test(long_message_is_bounded),
      cmocka_unit_test(read_keeps_the_newest),
      cmocka_unit_test(forward_hands_on_filtered_messages),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
