/* test_phases.c -- the phase table (cucore_phase_get_times): its contracts, and
 * what a process that loads PTX on a device stamps (on the project's fake driver): the
 * driver's load, cuInit, the context and the module load, each once, in order; and no
 * compiler library (NVRTC, nvJitLink, libNVVM), since nothing is compiled. */
#include "support.h"

#include <stdlib.h>

#ifndef CUCORE_FAKE_DRIVER_PATH
#error "CUCORE_FAKE_DRIVER_PATH is set by tests/CMakeLists.txt"
#endif

static const char PTX[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
                          ".visible .entry k(.param .u64 p)\n{\n  ret;\n}\n";

static void contracts(void **state) {
  (void)state;
  assert_int_equal(cucore_phase_get_times(NULL), CUCORE_INVALID_ARGUMENT);
  assert_int_equal(cucore_phase_now(NULL), CUCORE_INVALID_ARGUMENT);
  assert_int_equal(cucore_phase_add(CUCORE_PHASE_COUNT, 0, 1), CUCORE_INVALID_ARGUMENT);
  assert_int_equal(cucore_phase_add((cucore_phase)-1, 0, 1), CUCORE_INVALID_ARGUMENT);
  assert_int_equal(cucore_phase_add(CUCORE_PHASE_REPORT, 2, 1), CUCORE_INVALID_ARGUMENT);
  assert_string_equal(cucore_phase_name(CUCORE_PHASE_PROCESS_START), "process_start");
  assert_string_equal(cucore_phase_name(CUCORE_PHASE_LOAD_NVRTC), "load_nvrtc");
  assert_string_equal(cucore_phase_name(CUCORE_PHASE_TEARDOWN), "teardown");
  assert_string_equal(cucore_phase_name(CUCORE_PHASE_COUNT), "unknown");
  for (int p = 0; p < CUCORE_PHASE_COUNT; p++)
    assert_string_not_equal(cucore_phase_name((cucore_phase)p), "unknown");
}

/* A phase the program adds is counted and summed; the clock only goes forward. */
static void program_phases_add_up(void **state) {
  (void)state;
  double a = 0, b = 0;
  assert_int_equal(cucore_phase_now(&a), CUCORE_OK);
  assert_int_equal(cucore_phase_now(&b), CUCORE_OK);
  assert_true(a >= 0 && b >= a);
  assert_int_equal(cucore_phase_add(CUCORE_PHASE_REPORT, a, a + 2), CUCORE_OK);
  assert_int_equal(cucore_phase_add(CUCORE_PHASE_REPORT, a + 3, a + 4), CUCORE_OK);
  cucore_phase_time t[CUCORE_PHASE_COUNT];
  assert_int_equal(cucore_phase_get_times(t), CUCORE_OK);
  assert_int_equal(t[CUCORE_PHASE_REPORT].count, 2);
  assert_true(t[CUCORE_PHASE_REPORT].total_ms > 2.999 && t[CUCORE_PHASE_REPORT].total_ms < 3.001);
  assert_true(t[CUCORE_PHASE_REPORT].start_ms > a - 0.001 &&
              t[CUCORE_PHASE_REPORT].start_ms < a + 0.001);
  assert_true(t[CUCORE_PHASE_REPORT].end_ms > a + 3.999 &&
              t[CUCORE_PHASE_REPORT].end_ms < a + 4.001);
}

static void ptx_on_a_device_loads_no_compiler(void **state) {
  (void)state;
  cucore_device *dev = NULL;
  assert_int_equal(cucore_device_open(0, &dev), CUCORE_OK);
  cucore_object *obj = NULL;
  assert_int_equal(cucore_object_from_memory(PTX, sizeof PTX, CUCORE_CODE_PTX, "k.ptx", &obj),
                   CUCORE_OK);
  cucore_kernel *k = NULL;
  assert_int_equal(cucore_object_get_kernel(obj, "k", &k), CUCORE_OK);
  assert_int_equal(cucore_kernel_load(k, dev), CUCORE_OK);
  double now = 0;
  assert_int_equal(cucore_phase_now(&now), CUCORE_OK);
  cucore_phase_time t[CUCORE_PHASE_COUNT];
  assert_int_equal(cucore_phase_get_times(t), CUCORE_OK);
  assert_int_equal(t[CUCORE_PHASE_LOAD_LIBCUDA].count, 1);
  assert_int_equal(t[CUCORE_PHASE_CUINIT].count, 1);
  assert_true(t[CUCORE_PHASE_CONTEXT].count >= 1);
  assert_true(t[CUCORE_PHASE_MODULE_LOAD].count >= 1);
  /* cuInit follows the library's load; everything ends by now. */
  assert_true(t[CUCORE_PHASE_LOAD_LIBCUDA].start_ms >= 0);
  assert_true(t[CUCORE_PHASE_CUINIT].start_ms >= t[CUCORE_PHASE_LOAD_LIBCUDA].end_ms - 1e-6);
  for (int p = 0; p < CUCORE_PHASE_COUNT; p++) /* REPORT: program_phases_add_up's, ahead */
    if (t[p].count && p != CUCORE_PHASE_REPORT)
      assert_true(t[p].end_ms <= now + 1e-6 && t[p].total_ms >= 0);
  /* Nothing was compiled, so no compiler library was loaded. */
  assert_int_equal(t[CUCORE_PHASE_LOAD_NVRTC].count, 0);
  assert_int_equal(t[CUCORE_PHASE_LOAD_NVJITLINK].count, 0);
  assert_int_equal(t[CUCORE_PHASE_LOAD_NVVM].count, 0);
  assert_int_equal(t[CUCORE_PHASE_COMPILE].count, 0);
  cucore_kernel_destroy(k);
  cucore_object_destroy(obj);
  cucore_device_close(dev);
}

int main(void) {
  setenv("CUCORE_LIBCUDA", CUCORE_FAKE_DRIVER_PATH, 1);
  setenv("CUCORE_CACHE_DISABLE", "1", 1);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(contracts),
      cmocka_unit_test(program_phases_add_up),
      cmocka_unit_test(ptx_on_a_device_loads_no_compiler),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
