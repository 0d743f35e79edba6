/* test_system.c -- system facts through NVML, with the fake driver and the fake
 * NVML of tests/fake/: every fact read and mapped (by cucore ordinal through the PCI bus id,
 * and by UUID in both forms), an unknown UUID refused with NVML's text filtered, the reason
 * names, a wrong ordinal; and, in child processes, NVML absent (CUCORE_LIBNVML names nothing)
 * or failing to start: CUCORE_NOT_SUPPORTED saying what was tried, every time. */
#include "support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef CUCORE_FAKE_NVML_PATH
#error "CUCORE_FAKE_NVML_PATH is set by tests/CMakeLists.txt"
#endif

static const char fake_uuid[] = "GPU-5a5a5a5a-5a5a-5a5a-5a5a-5a5a5a5a5a5a";

static void check_fake_gpu(const cucore_system_info *s) {
  assert_int_equal(s->ordinal, 0);
  assert_string_equal(s->uuid, fake_uuid);
  assert_string_equal(s->name, "cucore fake H100");
  assert_string_equal(s->pci_bus_id, "00000000:19:00.0");
  assert_int_equal(s->pci_device_id, 0x233010de);
  assert_int_equal(s->sm_clock_mhz, 1755);
  assert_int_equal(s->sm_clock_max_mhz, 1980);
  assert_int_equal(s->mem_clock_mhz, 2619);
  assert_int_equal(s->mem_clock_max_mhz, 2619);
  assert_int_equal(s->temperature_c, 41);
  assert_int_equal(s->power_mw, 123456);
  assert_int_equal(s->power_limit_mw, 700000);
  assert_int_equal(s->gpu_util_pct, 37);
  assert_int_equal(s->mem_util_pct, 12);
  assert_int_equal(s->clock_reasons, CUCORE_CLOCK_REASON_GPU_IDLE);
  assert_int_equal(s->mig_current, -1); /* not offered on this GPU */
  assert_int_equal(s->mig_pending, -1);
  assert_int_equal(s->nvlink_links, 18);
  assert_int_equal(s->nvlink_active, 17);
  assert_int_equal(s->nvlink_active_mask, 0x1ffff);
}

static void facts_of_a_device(void **state) {
  (void)state;
  cucore_system_info s;
  assert_ok(cucore_system_get_device_info(0, &s));
  check_fake_gpu(&s);
  assert_status(cucore_system_get_device_info(1, &s), CUCORE_INVALID_DEVICE);
  assert_contains(cucore_last_error(), "device 1 does not exist (expected 0 to 0)");
  assert_int_equal(s.sm_clock_mhz, -1);
  assert_status(cucore_system_get_device_info(0, NULL), CUCORE_INVALID_ARGUMENT);
}

/* The clock alone: the same SM clock and reasons as the whole facts, either pointer NULL. */
static void clock_alone(void **state) {
  (void)state;
  cucore_system_info s;
  assert_ok(cucore_system_get_device_info(0, &s));
  int mhz = 0;
  long long reasons = 0;
  for (int i = 0; i < 2; i++) { /* the second call on the kept handle */
    assert_ok(cucore_system_get_clock(0, &mhz, &reasons));
    assert_int_equal(mhz, s.sm_clock_mhz);
    assert_int_equal(reasons, s.clock_reasons);
  }
  assert_ok(cucore_system_get_clock(0, NULL, &reasons));
  assert_ok(cucore_system_get_clock(0, &mhz, NULL));
  assert_int_equal(mhz, 1755);
  assert_status(cucore_system_get_clock(1, &mhz, &reasons), CUCORE_INVALID_DEVICE);
  assert_contains(cucore_last_error(), "cucore_system_get_clock: device 1 does not exist");
  assert_int_equal(mhz, -1);
  assert_int_equal(reasons, -1);
  assert_status(cucore_system_get_clock(-1, NULL, NULL), CUCORE_INVALID_DEVICE);
}

static void facts_by_uuid(void **state) {
  (void)state;
  cucore_system_info s;
  assert_ok(cucore_system_get_info_by_uuid(fake_uuid, &s));
  check_fake_gpu(&s);
  assert_ok(cucore_system_get_info_by_uuid(fake_uuid + 4, &s)); /* cucore_device_props' form */
  check_fake_gpu(&s);
  assert_status(cucore_system_get_info_by_uuid("GPU-00000000-0000-0000-0000-000000000000", &s),
                CUCORE_NOT_FOUND);
  const char *m = cucore_last_error();
  assert_contains(m, "no GPU has the UUID `GPU-00000000");
  assert_contains(m, "Not Found\\x07"); /* NVML's own text, its bell escaped */
  for (const char *p = m; *p; p++) assert_true((unsigned char)*p >= 0x20);
  assert_status(cucore_system_get_info_by_uuid(NULL, &s), CUCORE_INVALID_ARGUMENT);
}

/* NVML's own list, read without the driver (cucore devices reads it beside cuInit). */
static void facts_by_index(void **state) {
  (void)state;
  int n = -1;
  assert_ok(cucore_system_get_count(&n));
  assert_int_equal(n, 1);
  cucore_system_info s;
  assert_ok(cucore_system_get_info_by_index(0, &s));
  check_fake_gpu(&s); /* the driver is started by the earlier tests: the ordinal is found */
  assert_status(cucore_system_get_info_by_index(1, &s), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "NVML lists 1 GPU, so index 1 does not exist");
  assert_int_equal(s.sm_clock_mhz, -1); /* cleared on failure */
  assert_status(cucore_system_get_info_by_index(-1, &s), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_system_get_info_by_index(0, NULL), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_system_get_count(NULL), CUCORE_INVALID_ARGUMENT);
}

static void reason_names(void **state) {
  (void)state;
  char buf[128];
  assert_ok(cucore_system_reasons_text(0, buf, sizeof buf));
  assert_string_equal(buf, "none");
  assert_ok(
      cucore_system_reasons_text(CUCORE_CLOCK_REASON_SW_POWER_CAP | CUCORE_CLOCK_REASON_HW_THERMAL,
                                 buf, sizeof buf));
  assert_string_equal(buf, "sw_power_cap, hw_thermal");
  assert_ok(cucore_system_reasons_text(0x10001, buf, sizeof buf));
  assert_string_equal(buf, "gpu_idle, 0x10000");
  assert_ok(cucore_system_reasons_text(0x1ff, buf, 12));
  assert_int_equal(strlen(buf), 11);
  assert_status(cucore_system_reasons_text(1, buf, 0), CUCORE_INVALID_ARGUMENT);
  assert_true((CUCORE_CLOCK_REASONS_THROTTLE & CUCORE_CLOCK_REASON_GPU_IDLE) == 0);
  assert_true(CUCORE_CLOCK_REASONS_THROTTLE & CUCORE_CLOCK_REASON_HW_THERMAL);
}

/* A child with NVML set up by `var`=`value`: exit 0 when both calls say NOT_SUPPORTED with
 * `want` in the message. */
static int unusable_child(const char *var, const char *value, const char *want) {
  setenv(var, value, 1);
  for (int i = 0; i < 4; i++) {
    cucore_system_info s;
    int mhz = 0;
    cucore_status st = i == 3   ? cucore_system_get_info_by_index(0, &s)
                       : i == 2 ? cucore_system_get_clock(0, &mhz, NULL)
                       : i == 1 ? cucore_system_get_info_by_uuid(fake_uuid, &s)
                                : cucore_system_get_device_info(0, &s);
    if (st != CUCORE_NOT_SUPPORTED || !strstr(cucore_last_error(), want)) {
      fprintf(stderr, "call %d: %s: %s\n", i, cucore_status_name(st), cucore_last_error());
      return 1 + i;
    }
  }
  return 0;
}

/* The arguments of unusable_child for the child in_child makes. */
static const char *child_var, *child_value, *child_want;

static int unusable_child_of_args(void) {
  return unusable_child(child_var, child_value, child_want);
}

/* Runs body() in a fresh process; fails naming `what` unless it exits 0. */
static void run_in_child(int (*body)(void), const char *what) {
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) _exit(body());
  int ws = 0;
  assert_int_equal(waitpid(pid, &ws, 0), pid);
  if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0)
    fail_msg("%s: the child failed (exit %d, signal %d)", what,
             WIFEXITED(ws) ? WEXITSTATUS(ws) : -1, WIFSIGNALED(ws) ? WTERMSIG(ws) : 0);
}

static void in_child(const char *var, const char *value, const char *want) {
  child_var = var, child_value = value, child_want = want;
  run_in_child(unusable_child_of_args, var);
}

static void nvml_absent_is_not_supported(void **state) {
  (void)state;
  in_child("CUCORE_LIBNVML", "/nonexistent/libnvidia-ml.so.1",
           "NVML (`/nonexistent/libnvidia-ml.so.1`) could not be loaded");
  in_child("CUCORE_LIBNVML", "/nonexistent/libnvidia-ml.so.1", "CUCORE_LIBNVML names it");
}

static void nvml_that_does_not_start_is_not_supported(void **state) {
  (void)state;
  in_child("CUCORE_FAKE_NVML_INIT_FAIL", "1",
           "nvmlInit_v2 failed with NVML error 9 (Driver "
           "Not Loaded)");
}

/* A fresh process: NVML's GPU by index loads no driver (its ordinal is -1 until one is). */
static int by_index_child(void) {
  cucore_system_info s;
  if (cucore_system_get_info_by_index(0, &s) != CUCORE_OK || s.ordinal != -1 ||
      s.sm_clock_mhz != 1755)
    return 1;
  cucore_phase_time t[CUCORE_PHASE_COUNT];
  if (cucore_phase_get_times(t) != CUCORE_OK || t[CUCORE_PHASE_LOAD_LIBCUDA].count != 0) return 2;
  int n = 0;
  if (cucore_device_get_count(&n) != CUCORE_OK || n != 1) return 3;
  if (cucore_system_get_info_by_index(0, &s) != CUCORE_OK || s.ordinal != 0) return 4;
  return 0;
}

static void by_index_needs_no_driver(void **state) {
  (void)state;
  run_in_child(by_index_child, "NVML's GPU by index in a fresh process");
}

int main(void) {
  setenv("CUCORE_LIBCUDA", CUCORE_FAKE_DRIVER_PATH, 1);
  setenv("CUCORE_LIBNVML", CUCORE_FAKE_NVML_PATH, 1);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(by_index_needs_no_driver),
      /* the children first: this process has not loaded NVML yet */
      cmocka_unit_test(nvml_absent_is_not_supported),
      cmocka_unit_test(nvml_that_does_not_start_is_not_supported),
      cmocka_unit_test(facts_of_a_device),
      cmocka_unit_test(clock_alone),
      cmocka_unit_test(facts_by_uuid),
      cmocka_unit_test(facts_by_index),
      cmocka_unit_test(reason_names),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
