/* gpu_driver_log.c -- the driver's own log on a real GPU (label gpu). Calls the
 * driver refuses are made through cucore; for each, what the driver logged on this thread
 * during the call (seen through cucore_driver_log_forward) must end up in the failure's
 * message as "the driver says: ...". At least one of the calls must be logged by the driver
 * (CUDA 12.9+ drivers log why a call failed); each call's message and the driver's log are
 * printed so a failure can be read. Skipped when the driver has no log (older than 12.9). */
#include "support.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

static cucore_device *dev;
static char seen[CUCORE_DRIVER_LOG_MESSAGE_MAX];
static int seen_count;
static pthread_t main_thread;
static int seen_elsewhere;

static void on_message(void *user, cucore_driver_log_level level, const char *message) {
  (void)user, (void)level;
  if (!pthread_equal(pthread_self(), main_thread)) {
    seen_elsewhere++;
    return;
  }
  snprintf(seen, sizeof seen, "%s", message);
  seen_count++;
}

/* Out of memory: twice the device's memory. */
static cucore_status refuse_alloc(char *msg, size_t cap) {
  size_t free_b = 0, total_b = 0;
  assert_ok(cucore_device_get_mem_info(dev, &free_b, &total_b));
  cucore_devptr p = 0;
  cucore_status st = cucore_mem_alloc(dev, total_b * 2, &p);
  snprintf(msg, cap, "%s", cucore_last_error());
  return st;
}

/* The time between two events never recorded. */
static cucore_status refuse_elapsed(char *msg, size_t cap) {
  cucore_event *a = NULL, *b = NULL;
  float ms = 0;
  assert_ok(cucore_event_create(dev, 0, &a));
  assert_ok(cucore_event_create(dev, 0, &b));
  cucore_status st = cucore_event_elapsed_ms(a, b, &ms);
  snprintf(msg, cap, "%s", cucore_last_error());
  assert_ok(cucore_event_destroy(a));
  assert_ok(cucore_event_destroy(b));
  return st;
}

static const struct {
  const char *what;
  cucore_status (*call)(char *msg, size_t cap);
} refusals[] = {{"cuMemAlloc of twice the device's memory", refuse_alloc},
                {"cuEventElapsedTime on events never recorded", refuse_elapsed}};

static void a_refused_call_says_what_the_driver_logged(void **state) {
  (void)state;
  int avail = 0;
  assert_ok(cucore_driver_log_available(&avail));
  if (!avail) {
    print_message("the driver has no log (cuLogsRegisterCallback needs CUDA 12.9+)\n");
    skip();
  }
  main_thread = pthread_self();
  assert_ok(cucore_driver_log_forward(on_message, NULL));
  int logged = 0;
  for (size_t i = 0; i < sizeof refusals / sizeof refusals[0]; i++) {
    seen_count = 0;
    seen[0] = '\0';
    char msg[2048];
    cucore_status st = refusals[i].call(msg, sizeof msg);
    print_message("%s: %s (%d driver message%s on this thread, last: \"%s\"): %s\n",
                  refusals[i].what, cucore_status_name(st), seen_count, seen_count == 1 ? "" : "s",
                  seen, msg);
    assert_int_not_equal(st, CUCORE_OK);
    if (seen_count == 0) continue;
    logged++;
    char want[CUCORE_DRIVER_LOG_MESSAGE_MAX + 32];
    snprintf(want, sizeof want, "the driver says: %.200s", seen);
    assert_contains(msg, want);
  }
  char all[8192];
  size_t needed = 0;
  assert_ok(cucore_driver_log_read(all, sizeof all, &needed));
  print_message("driver log kept by cucore (%zu bytes; %d message(s) on other threads):\n%s",
                needed, seen_elsewhere, all);
  assert_ok(cucore_driver_log_forward(NULL, NULL));
  if (logged == 0) fail_msg("the driver logged none of the refused calls on the calling thread");
}

int main(void) {
  if (!cucore_test_have_gpu()) return CUCORE_TEST_SKIP;
  if (cucore_device_open(0, &dev) != CUCORE_OK) return 1;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_refused_call_says_what_the_driver_logged),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  cucore_device_close(dev);
  return rc;
}
