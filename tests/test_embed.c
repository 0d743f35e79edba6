/* test_embed.c -- what embedding needs, checked without a GPU: load options are validated
 * field by field, foreign handles and stream attributes refuse NULL and missing devices with
 * a message, and a launch attribute newer than cucore is refused when the driver cannot be
 * newer either. */
#include "support.h"

#include <stdlib.h>

static void load_options_are_validated(void **state) {
  (void)state;
  static const char ptx[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
                            ".visible .entry k(.param .u64 p) { ret; }\n";
  cucore_object *obj = NULL;
  assert_ok(cucore_object_from_memory(ptx, sizeof ptx - 1, CUCORE_CODE_PTX, "k.ptx", &obj));
  cucore_load_options ok = CUCORE_LOAD_OPTIONS_INIT;
  assert_ok(cucore_object_set_load_options(obj, &ok));
  struct {
    const char *field;
    cucore_load_options o;
  } bad[] = {
      {"optimization_level", ok},
      {"max_registers", ok},
      {"target_arch", ok},
      {"fallback", ok},
      {"eager", ok},
      {"log_bytes", ok},
      {"binary_is_preserved", ok},
  };
  bad[0].o.optimization_level = 5;
  bad[1].o.max_registers = 256;
  bad[2].o.target_arch = 7;
  bad[3].o.fallback = 3;
  bad[4].o.eager = 2;
  bad[5].o.log_bytes = 1u << 24;
  bad[6].o.binary_is_preserved = -1;
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    assert_status(cucore_object_set_load_options(obj, &bad[i].o), CUCORE_INVALID_ARGUMENT);
    assert_contains(cucore_last_error(), bad[i].field);
  }
  assert_status(cucore_object_set_load_options(obj, NULL), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_object_set_load_options(NULL, &ok), CUCORE_INVALID_ARGUMENT);
  const char *info = NULL, *error = NULL;
  assert_ok(cucore_object_get_jit_log(obj, &info, &error)); /* nothing loaded: empty logs */
  assert_string_equal(info, "");
  assert_string_equal(error, "");
  cucore_object_destroy(obj);
}

static void foreign_handles_refuse_bad_input(void **state) {
  (void)state;
  cucore_device *dev = (cucore_device *)1;
  cucore_status st = cucore_device_from_context(NULL, &dev);
  assert_true(st != CUCORE_OK); /* no driver or no GPU here: a clear refusal */
  assert_null(dev);
  assert_true(cucore_last_error()[0] != '\0');
  assert_status(cucore_device_from_context(NULL, NULL), CUCORE_INVALID_ARGUMENT);
  cucore_stream *s = (cucore_stream *)1;
  assert_status(cucore_stream_wrap(NULL, NULL, &s), CUCORE_INVALID_ARGUMENT);
  assert_null(s);
  assert_status(cucore_stream_per_thread(NULL, &s), CUCORE_INVALID_ARGUMENT);
  cucore_event *ev = (cucore_event *)1;
  assert_status(cucore_event_wrap(NULL, NULL, &ev), CUCORE_INVALID_ARGUMENT);
  assert_null(ev);
  cucore_kernel *k = (cucore_kernel *)1;
  assert_status(cucore_kernel_from_cukernel(NULL, &k), CUCORE_INVALID_ARGUMENT);
  assert_null(k);
  assert_status(cucore_kernel_from_cufunction(NULL, NULL, &k), CUCORE_INVALID_ARGUMENT);
  cucore_launch_attr a = {.id = CUCORE_LAUNCH_PRIORITY};
  assert_status(cucore_stream_set_attribute(NULL, &a), CUCORE_INVALID_ARGUMENT);
  cucore_launch_attr out;
  assert_status(cucore_stream_get_attribute(NULL, CUCORE_LAUNCH_PRIORITY, &out),
                CUCORE_INVALID_ARGUMENT);
}

static void unknown_launch_attribute_without_a_newer_driver(void **state) {
  (void)state;
  cucore_launch_config c;
  memset(&c, 0, sizeof c);
  cucore_launch_attr future = {.id = (cucore_launch_attr_id)99};
  /* No driver here, so none newer than the headers: refused, saying why. */
  assert_status(cucore_launch_config_set(&c, &future), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "launch attribute 99");
  assert_int_equal(c.attr_count, 0);
  cucore_launch_attr prio = {.id = CUCORE_LAUNCH_PRIORITY};
  assert_ok(cucore_launch_config_set(&c, &prio)); /* known ids still go in */
  assert_int_equal(c.attr_count, 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(load_options_are_validated),
      cmocka_unit_test(foreign_handles_refuse_bad_input),
      cmocka_unit_test(unknown_launch_attribute_without_a_newer_driver),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
