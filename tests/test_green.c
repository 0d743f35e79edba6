/* test_green.c -- green contexts through the fake driver of tests/fake/ (an H100's
 * 132 SMs, groups of at least 8 and a multiple of 8): the SM facts, what a split gives, splits
 * made and refused (the message names the SMs, the rules and what fits), arguments refused,
 * a launch on a green context's stream through the checked path (it runs in the green
 * context's CUcontext), nothing left behind; and, in a child whose driver lacks the entry
 * points, CUCORE_DRIVER_TOO_OLD naming CUDA 12.4; in a child whose driver has the CUDA 12.4
 * entry points but not cuGreenCtxStreamCreate (12.5), splits work and a stream is
 * CUCORE_DRIVER_TOO_OLD naming it and CUDA 12.5. */
#include "support.h"
#include "runtime/runtime.h" /* DRV(): which context is current after a launch */

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef CUCORE_FAKE_DRIVER_PATH
#error "CUCORE_FAKE_DRIVER_PATH is set by tests/CMakeLists.txt"
#endif

static const char ptx_text[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
                               ".visible .entry k(.param .u64 p, .param .u32 n)\n{\n  ret;\n}\n";

static cucore_device *dev;

static int live_greens(void) {
  void *lib = dlopen(CUCORE_FAKE_DRIVER_PATH, RTLD_NOW | RTLD_NOLOAD);
  assert_non_null(lib);
  int (*live)(void) = (int (*)(void))(uintptr_t)dlsym(lib, "fake_green_live");
  assert_non_null(live);
  int n = live();
  dlclose(lib);
  return n;
}

static void sm_facts_and_split_query(void **state) {
  (void)state;
  cucore_green_sm_info info;
  assert_ok(cucore_green_get_sm_info(dev, &info));
  assert_int_equal(info.sm_count, 132);
  assert_int_equal(info.min_partition_sms, 8);
  assert_int_equal(info.alignment_sms, 8);
  unsigned groups = 0, per = 0, rest = 0;
  assert_ok(cucore_green_split_query(dev, 20, 0, &groups, &per, &rest));
  assert_int_equal(groups, 5); /* 20 rounds up to 24: 5 × 24 = 120, 12 left */
  assert_int_equal(per, 24);
  assert_int_equal(rest, 12);
  assert_ok(
      cucore_green_split_query(dev, 3, CUCORE_GREEN_IGNORE_COSCHEDULING, &groups, &per, NULL));
  assert_int_equal(per, 4);
  assert_int_equal(groups, 33);
}

static void split_makes_groups_and_remainder(void **state) {
  (void)state;
  cucore_green *g[2] = {NULL, NULL}, *rest = NULL;
  assert_ok(cucore_green_split(dev, 2, 16, 0, g, &rest));
  assert_int_equal(live_greens(), 3);
  unsigned sms = 0;
  assert_ok(cucore_green_get_sm_count(g[0], &sms));
  assert_int_equal(sms, 16);
  assert_ok(cucore_green_get_sm_count(g[1], &sms));
  assert_int_equal(sms, 16);
  assert_non_null(rest);
  assert_ok(cucore_green_get_sm_count(rest, &sms));
  assert_int_equal(sms, 100);
  assert_ok(cucore_green_destroy(g[0]));
  assert_ok(cucore_green_destroy(g[1]));
  assert_ok(cucore_green_destroy(rest));
  assert_ok(cucore_green_destroy(NULL));
  assert_int_equal(live_greens(), 0);
  /* nothing left over: no remainder context */
  cucore_green *one = NULL;
  rest = (cucore_green *)&rest;
  assert_ok(cucore_green_split(dev, 1, 132, CUCORE_GREEN_IGNORE_COSCHEDULING, &one, &rest));
  assert_null(rest);
  assert_ok(cucore_green_get_sm_count(one, &sms));
  assert_int_equal(sms, 132);
  assert_ok(cucore_green_destroy(one));
  assert_int_equal(live_greens(), 0);
}

static void impossible_split_names_the_rules(void **state) {
  (void)state;
  cucore_green *g[10], *rest = (cucore_green *)&rest;
  for (int i = 0; i < 10; i++) g[i] = (cucore_green *)&g[i];
  assert_status(cucore_green_split(dev, 2, 70, 0, g, &rest), CUCORE_INVALID_ARGUMENT);
  const char *m = cucore_last_error();
  assert_contains(m, "cannot give 2 groups of at least 70 SMs");
  assert_contains(m, "has 132 SMs");
  assert_contains(m, "at least 8 SMs and a multiple of 8, so 70 rounds up to 72");
  assert_contains(m, "makes 1 such group.");
  assert_contains(m, "The SMs left over after the groups (60 here) go to one remainder group");
  assert_contains(m, "CUCORE_GREEN_IGNORE_COSCHEDULING");
  assert_null(g[0]);
  assert_null(g[1]);
  assert_null(rest);
  assert_status(cucore_green_split(dev, 10, 16, 0, g, NULL), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "makes 8 such groups");
  assert_contains(cucore_last_error(), "left over after the groups (4 here)");
  assert_status(cucore_green_split(dev, 10, 14, CUCORE_GREEN_IGNORE_COSCHEDULING, g, NULL),
                CUCORE_INVALID_ARGUMENT); /* groups of 14: 9 fit */
  assert_contains(cucore_last_error(), "makes 9 such groups");
  assert_contains(cucore_last_error(), "The SMs left over after the groups go to one remainder "
                                       "group");
  for (int i = 0; i < 10; i++) assert_null(g[i]);
  assert_int_equal(live_greens(), 0);
}

static void bad_arguments_are_refused(void **state) {
  (void)state;
  cucore_green *g = NULL;
  assert_status(cucore_green_split(dev, 0, 8, 0, &g, NULL), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_green_split(dev, 1, 0, 0, &g, NULL), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_green_split(dev, 1, 133, 0, &g, NULL), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "has 132 SMs (expected 1 to 132)");
  assert_status(cucore_green_split(dev, 1, 8, 0x10, &g, NULL), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "unknown flags 0x10");
  assert_status(cucore_green_split(NULL, 1, 8, 0, &g, NULL), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_green_split(dev, 1, 8, 0, NULL, NULL), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_green_get_sm_info(dev, NULL), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_green_stream_create(NULL, 0, NULL), CUCORE_INVALID_ARGUMENT);
  assert_int_equal(live_greens(), 0);
}

static void launch_on_a_green_stream_runs_in_its_context(void **state) {
  (void)state;
  cucore_green *g = NULL;
  assert_ok(cucore_green_split(dev, 1, 8, 0, &g, NULL));
  cucore_device *gdev = NULL;
  assert_ok(cucore_green_get_device(g, &gdev));
  cucore_stream *s = NULL;
  assert_status(cucore_green_stream_create(g, 7, &s), CUCORE_INVALID_ARGUMENT);
  assert_ok(cucore_green_stream_create(g, 0, &s));
  assert_status(cucore_device_close(gdev), CUCORE_MISUSE); /* it goes with the green context */
  assert_contains(cucore_last_error(), "cucore_green_destroy");
  cucore_object *obj = NULL;
  cucore_kernel *k = NULL;
  cucore_args *args = NULL;
  cucore_devptr p = 0;
  assert_ok(cucore_object_from_memory(ptx_text, sizeof ptx_text, CUCORE_CODE_PTX, "k.ptx", &obj));
  assert_ok(cucore_object_get_kernel(obj, "k", &k));
  assert_ok(cucore_mem_alloc(gdev, 64, &p));
  assert_ok(cucore_args_create(k, &args));
  assert_ok(cucore_args_set_ptr(args, 0, p));
  assert_ok(cucore_args_set_u32(args, 1, 16));
  cucore_launch_config c;
  memset(&c, 0, sizeof c);
  c.grid[0] = c.block[0] = 1;
  c.stream = s;
  assert_ok(DRV(cuCtxSetCurrent)(NULL) == CUDA_SUCCESS ? CUCORE_OK : CUCORE_DRIVER_ERROR);
  assert_ok(cucore_launch(k, &c, args));
  void *gctx = NULL;
  assert_ok(cucore_device_get_native(gdev, &gctx, NULL));
  CUcontext cur = NULL;
  assert_int_equal(DRV(cuCtxGetCurrent)(&cur), CUDA_SUCCESS);
  assert_ptr_equal(cur, gctx); /* the launch went in through the green context */
  c.block[0] = 4096;           /* the usual checks apply */
  assert_status(cucore_launch(k, &c, args), CUCORE_LAUNCH_CONFIG);
  c.block[0] = 32; /* a cooperative grid is bounded by the green context's 8 SMs */
  c.grid[0] = 100000;
  assert_ok(cucore_launch_config_cooperative(&c, 1));
  assert_status(cucore_launch(k, &c, args), CUCORE_LAUNCH_CONFIG);
  assert_contains(cucore_last_error(), "SM x 8 SMs");
  assert_ok(cucore_stream_synchronize(s));
  assert_ok(cucore_mem_free(gdev, p));
  cucore_args_destroy(args);
  cucore_kernel_destroy(k);
  cucore_object_destroy(obj);
  assert_ok(cucore_stream_destroy(s));
  assert_ok(cucore_green_destroy(g));
  assert_int_equal(live_greens(), 0);
}

/* In a child whose driver has no green contexts: exit 0 when all is as it should be. */
static int absent_child(void) {
  setenv("CUCORE_FAKE_NO_GREEN", "1", 1);
  cucore_device *d = NULL;
  if (cucore_device_open(0, &d) != CUCORE_OK) return 1;
  cucore_green_sm_info info;
  cucore_status st = cucore_green_get_sm_info(d, &info);
  if (CUCORE_CODE(st) != CUCORE_DRIVER_TOO_OLD || !strstr(cucore_last_error(), "12.4")) {
    fprintf(stderr, "%s: %s\n", cucore_status_name(st), cucore_last_error());
    return 2;
  }
  cucore_green *g = (cucore_green *)&g;
  if (CUCORE_CODE(cucore_green_split(d, 1, 8, 0, &g, NULL)) != CUCORE_DRIVER_TOO_OLD || g) return 3;
  cucore_device_close(d);
  return 0;
}

/* In a child whose driver has the CUDA 12.4 green entry points but not cuGreenCtxStreamCreate
 * (12.5): exit 0 when a split works and a stream is refused as too old, naming both. */
static int no_stream_child(void) {
  setenv("CUCORE_FAKE_HIDE", "cuGreenCtxStreamCreate", 1);
  cucore_device *d = NULL;
  if (cucore_device_open(0, &d) != CUCORE_OK) return 1;
  cucore_green *g = NULL;
  if (cucore_green_split(d, 1, 8, 0, &g, NULL) != CUCORE_OK || !g) return 2;
  cucore_stream *s = (cucore_stream *)&s;
  cucore_status st = cucore_green_stream_create(g, 0, &s);
  if (CUCORE_CODE(st) != CUCORE_DRIVER_TOO_OLD || s || !strstr(cucore_last_error(), "CUDA 12.5") ||
      !strstr(cucore_last_error(), "cuGreenCtxStreamCreate")) {
    fprintf(stderr, "%s: %s\n", cucore_status_name(st), cucore_last_error());
    return 3;
  }
  if (cucore_green_destroy(g) != CUCORE_OK) return 4;
  cucore_device_close(d);
  return 0;
}

static void green_stream_needs_12_5(void **state) {
  (void)state;
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) _exit(no_stream_child());
  int ws = 0;
  assert_int_equal(waitpid(pid, &ws, 0), pid);
  if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0)
    fail_msg("the child without cuGreenCtxStreamCreate failed (exit %d, signal %d)",
             WIFEXITED(ws) ? WEXITSTATUS(ws) : -1, WIFSIGNALED(ws) ? WTERMSIG(ws) : 0);
}

static void absent_green_is_too_old_not_a_crash(void **state) {
  (void)state;
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) _exit(absent_child());
  int ws = 0;
  assert_int_equal(waitpid(pid, &ws, 0), pid);
  if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0)
    fail_msg("the child without green contexts failed (exit %d, signal %d)",
             WIFEXITED(ws) ? WEXITSTATUS(ws) : -1, WIFSIGNALED(ws) ? WTERMSIG(ws) : 0);
}

static int open_dev(void **state) {
  (void)state;
  return cucore_device_open(0, &dev) == CUCORE_OK ? 0 : -1;
}
static int close_dev(void **state) {
  (void)state;
  return cucore_device_close(dev) == CUCORE_OK ? 0 : -1;
}

int main(void) {
  setenv("CUCORE_LIBCUDA", CUCORE_FAKE_DRIVER_PATH, 1);
  /* first, in a child, before this process loads the driver */
  const struct CMUnitTest first[] = {cmocka_unit_test(absent_green_is_too_old_not_a_crash),
                                     cmocka_unit_test(green_stream_needs_12_5)};
  int rc = cmocka_run_group_tests_name("absent", first, NULL, NULL);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(sm_facts_and_split_query),
      cmocka_unit_test(split_makes_groups_and_remainder),
      cmocka_unit_test(impossible_split_names_the_rules),
      cmocka_unit_test(bad_arguments_are_refused),
      cmocka_unit_test(launch_on_a_green_stream_runs_in_its_context),
  };
  return rc | cmocka_run_group_tests_name("green", tests, open_dev, close_dev);
}
