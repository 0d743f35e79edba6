/* test_checkpoint.c -- checkpointing on the fake driver (tests/fake/). First, in a
 * child whose fake has no checkpoint entry points (CUCORE_FAKE_NO_CHECKPOINT=1): arguments are
 * checked first (pids, GPU UUIDs, pairs), then every call says the driver is too old, naming
 * the entry point and CUDA 12.8. Then with the fake's entry points: the states a process goes
 * through, a move from the wrong state refused naming the state it is in and the one needed,
 * and a lock whose timeout passed (CUDA_ERROR_TIMEOUT, or CUDA_ERROR_NOT_READY) is
 * CUCORE_NOT_READY with a message naming the timeout. */
#include "support.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef CUCORE_FAKE_DRIVER_PATH
#error "CUCORE_FAKE_DRIVER_PATH is set by tests/CMakeLists.txt"
#endif

static void arguments_are_checked(void **state) {
  (void)state;
  cucore_process_state s = CUCORE_PROCESS_FAILED;
  assert_status(cucore_checkpoint_get_state(0, &s), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "pid 0");
  assert_int_equal(s, CUCORE_PROCESS_RUNNING);
  assert_status(cucore_checkpoint_get_state(42, NULL), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_checkpoint_lock(-3, 100), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_checkpoint_process(0), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_checkpoint_unlock(-1), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_checkpoint_restore(0, NULL, 0), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_checkpoint_restore(42, NULL, 1), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "NULL");
  cucore_checkpoint_gpu_pair p[2] = {{"GPU-0a1b2c3d-0000-1111-2222-333344445555",
                                      "0a1b2c3d-0000-1111-2222-333344445556"},
                                     {"0A1B2C3D-0000-1111-2222-333344445555",
                                      "0a1b2c3d-0000-1111-2222-333344445557"}};
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
  assert_status(cucore_checkpoint_get_state(1, &s), CUCORE_DRIVER_TOO_OLD);
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

/* The fake's process put in `state` (a cucore_process_state: the values are CUprocessState's). */
static void fake_set_state(cucore_process_state state) {
  void *lib = dlopen(CUCORE_FAKE_DRIVER_PATH, RTLD_NOW | RTLD_NOLOAD);
  assert_non_null(lib);
  void (*set)(int) = (void (*)(int))(uintptr_t)dlsym(lib, "fake_checkpoint_set_state");
  assert_non_null(set);
  set((int)state);
  dlclose(lib);
}

static void expect_state(int pid, cucore_process_state want) {
  cucore_process_state s = CUCORE_PROCESS_FAILED;
  assert_ok(cucore_checkpoint_get_state(pid, &s));
  assert_int_equal(s, want);
}

/* running -> locked -> checkpointed -> (restored) locked -> running; each move from another
 * state is refused naming the state the process is in and the one it needs. */
static void states_and_their_messages(void **state) {
  (void)state;
  fake_set_state(CUCORE_PROCESS_RUNNING);
  expect_state(42, CUCORE_PROCESS_RUNNING);
  assert_status(cucore_checkpoint_process(42), CUCORE_DRIVER_ERROR);
  assert_contains(cucore_last_error(), "cuCheckpointProcessCheckpoint");
  assert_contains(cucore_last_error(), "CUDA_ERROR_ILLEGAL_STATE");
  assert_contains(cucore_last_error(), "process 42 is running (expected locked "
                                       "(cucore_checkpoint_lock))");
  assert_status(cucore_checkpoint_unlock(42), CUCORE_DRIVER_ERROR);
  assert_contains(cucore_last_error(), "process 42 is running (expected locked)");

  assert_ok(cucore_checkpoint_lock(42, 1000));
  expect_state(42, CUCORE_PROCESS_LOCKED);
  assert_status(cucore_checkpoint_lock(42, 1000), CUCORE_DRIVER_ERROR);
  assert_contains(cucore_last_error(), "cuCheckpointProcessLock");
  assert_contains(cucore_last_error(), "process 42 is locked (expected running)");
  assert_status(cucore_checkpoint_restore(42, NULL, 0), CUCORE_DRIVER_ERROR);
  assert_contains(cucore_last_error(), "process 42 is locked (expected checkpointed "
                                       "(cucore_checkpoint_process))");

  assert_ok(cucore_checkpoint_process(42));
  expect_state(42, CUCORE_PROCESS_CHECKPOINTED);
  assert_status(cucore_checkpoint_unlock(42), CUCORE_DRIVER_ERROR);
  assert_contains(cucore_last_error(), "process 42 is checkpointed (expected locked)");
  cucore_checkpoint_gpu_pair p[1] = {
      {"GPU-0a1b2c3d-0000-1111-2222-333344445555", "0a1b2c3d-0000-1111-2222-333344445556"}};
  assert_ok(cucore_checkpoint_restore(42, p, 1));
  expect_state(42, CUCORE_PROCESS_LOCKED);
  assert_ok(cucore_checkpoint_unlock(42));
  expect_state(42, CUCORE_PROCESS_RUNNING);

  /* A process whose checkpoint failed. */
  fake_set_state(CUCORE_PROCESS_FAILED);
  expect_state(7, CUCORE_PROCESS_FAILED);
  assert_status(cucore_checkpoint_lock(7, 0), CUCORE_DRIVER_ERROR);
  assert_contains(cucore_last_error(), "process 7 is failed (expected running)");
  fake_set_state(CUCORE_PROCESS_RUNNING);
}

/* A lock whose timeout passes is CUCORE_NOT_READY, the driver's code kept as the native one,
 * the message naming the timeout; any other failure keeps its own status. */
static void a_lock_timeout_is_not_ready(void **state) {
  (void)state;
  fake_set_state(CUCORE_PROCESS_RUNNING);
  setenv("CUCORE_FAKE_CHECKPOINT_LOCK", "909", 1); /* CUDA_ERROR_TIMEOUT */
  cucore_status st = cucore_checkpoint_lock(42, 250);
  assert_status(st, CUCORE_NOT_READY);
  assert_int_equal(cucore_status_native(st), 909);
  assert_int_equal(cucore_status_source(st), CUCORE_SOURCE_DRIVER);
  assert_int_equal(CUCORE_CODE(cucore_last_status()), CUCORE_NOT_READY);
  assert_contains(cucore_last_error(), "cuCheckpointProcessLock failed: CUDA_ERROR_TIMEOUT (909)");
  assert_contains(cucore_last_error(), "process 42 did not reach a point where it can be locked "
                                       "within 250 ms; it is still running");
  expect_state(42, CUCORE_PROCESS_RUNNING);

  setenv("CUCORE_FAKE_CHECKPOINT_LOCK", "600", 1); /* CUDA_ERROR_NOT_READY */
  st = cucore_checkpoint_lock(42, 5);
  assert_status(st, CUCORE_NOT_READY);
  assert_int_equal(cucore_status_native(st), 600);
  assert_contains(cucore_last_error(), "CUDA_ERROR_NOT_READY");
  assert_contains(cucore_last_error(), "within 5 ms");

  setenv("CUCORE_FAKE_CHECKPOINT_LOCK", "999", 1); /* CUDA_ERROR_UNKNOWN: not a timeout */
  assert_status(cucore_checkpoint_lock(42, 5), CUCORE_DRIVER_ERROR);
  assert_contains(cucore_last_error(), "CUDA_ERROR_UNKNOWN");
  unsetenv("CUCORE_FAKE_CHECKPOINT_LOCK");
  assert_ok(cucore_checkpoint_lock(42, 5));
  assert_ok(cucore_checkpoint_unlock(42));
  expect_state(42, CUCORE_PROCESS_RUNNING);
}

/* First, in a child whose fake driver lacks the checkpoint entry points, before this process
 * loads the driver (no cmocka group is running when it forks): 0 when its tests passed. */
static int old_driver_in_a_child(void) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) return 1;
  if (pid == 0) {
    setenv("CUCORE_FAKE_NO_CHECKPOINT", "1", 1);
    const struct CMUnitTest tests[] = {cmocka_unit_test(arguments_are_checked),
                                       cmocka_unit_test(an_old_driver_is_named)};
    int failed = cmocka_run_group_tests_name("old driver", tests, NULL, NULL);
    fflush(NULL);
    _exit(failed ? 1 : 0);
  }
  int ws = 0;
  if (waitpid(pid, &ws, 0) != pid) return 1;
  if (WIFEXITED(ws) && WEXITSTATUS(ws) == 0) return 0;
  fprintf(stderr, "the child without checkpoint entry points failed (exit %d, signal %d)\n",
          WIFEXITED(ws) ? WEXITSTATUS(ws) : -1, WIFSIGNALED(ws) ? WTERMSIG(ws) : 0);
  return 1;
}

/* Loads the driver (the fake's controls are looked up in the loaded library). */
static int load_driver(void **state) {
  (void)state;
  cucore_process_state s;
  return cucore_checkpoint_get_state(1, &s) == CUCORE_OK ? 0 : -1;
}

int main(void) {
  setenv("CUCORE_LIBCUDA", CUCORE_FAKE_DRIVER_PATH, 1);
  int rc = old_driver_in_a_child();
  const struct CMUnitTest tests[] = {cmocka_unit_test(states_and_their_messages),
                                     cmocka_unit_test(a_lock_timeout_is_not_ready)};
  return rc | cmocka_run_group_tests_name("checkpoint", tests, load_driver, NULL);
}
