/* test_checkpoint.c -- checkpointing (issue 26.5) on the fake driver (tests/fake/), which has
 * no checkpoint entry points: arguments are checked first (pids, GPU UUIDs, pairs), then every
 * call says the driver is too old, naming the entry point and CUDA 12.8. */
#include "support.h"

#include <stdlib.h>

#ifndef CUCORE_FAKE_DRIVER_PATH
#error "CUCORE_FAKE_DRIVER_PATH is set by tests/CMakeLists.txt"
#endif

static void arguments_are_checked(void **state) {
  (void)state;
  cucore_process_state s = CUCORE_PROCESS_FAILED;
  assert_status(cucore_checkpoint_state(0, &s), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "pid 0");
  assert_int_equal(s, CUCORE_PROCESS_RUNNING);
  assert_status(cucore_checkpoint_state(42, NULL), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_checkpoint_lock(-3, 100), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_checkpoint_process(0), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_checkpoint_unlock(-1), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_checkpoint_restore(0, NULL, 0), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_checkpoint_restore(42, NULL, 1), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "NULL");
  cucore_checkpoint_gpu_pair p[2] = {
      {"GPU-0a1b2c3d-0000-1111-2222-333344445555", "0a1b2c3d-0000-1111-2222-333344445556"},
      {"0A1B2C3D-0000-1111-2222-333344445555", "0a1b2c3d-0000-1111-2222-333344445557"}};
  assert_status(cucore_checkpoint_restore(42, p, 2), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "twice"); /* the same GPU, case and prefix aside */
  cucore_checkpoint_gpu_pair q[1] = {{"0a1b2c3d-0000-1111-2222-33334444555", "x"}};
  assert_status(cucore_checkpoint_restore(42, q, 1), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "is not a GPU UUID");
  cucore_checkpoint_gpu_pair r[1] = {{"0a1b2c3d-0000-1111-2222-333344445555", "0a1b2c3d00001111"
                                                                            "2222333344445555"}};
  assert_status(cucore_checkpoint_restore(42, r, 1), CUCORE_DRIVER_TOO_OLD); /* both parse */
  assert_status(cucore_checkpoint_restore(42, p, 65), CUCORE_INVALID_ARGUMENT);
}

static void an_old_driver_is_named(void **state) {
  (void)state;
  cucore_process_state s;
  assert_status(cucore_checkpoint_state(1, &s), CUCORE_DRIVER_TOO_OLD);
  assert_contains(cucore_last_error(), "cuCheckpointProcessGetState");
  assert_contains(cucore_last_error(), "CUDA 12.8");
  assert_status(cucore_checkpoint_lock(1, 0), CUCORE_DRIVER_TOO_OLD);
  assert_contains(cucore_last_error(), "cuCheckpointProcessLock");
  assert_status(cucore_checkpoint_process(1), CUCORE_DRIVER_TOO_OLD);
  assert_contains(cucore_last_error(), "cuCheckpointProcessCheckpoint");
  assert_status(cucore_checkpoint_restore(1, NULL, 0), CUCORE_DRIVER_TOO_OLD);
  assert_contains(cucore_last_error(), "cuCheckpointProcessRestore");
  assert_status(cucore_checkpoint_unlock(1), CUCORE_DRIVER_TOO_OLD);
  assert_contains(cucore_last_error(), "cuCheckpointProcessUnlock");
}

int main(void) {
  setenv("CUCORE_LIBCUDA", CUCORE_FAKE_DRIVER_PATH, 1);
  const struct CMUnitTest tests[] = {cmocka_unit_test(arguments_are_checked),
                                     cmocka_unit_test(an_old_driver_is_named)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
