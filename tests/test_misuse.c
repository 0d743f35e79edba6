/* test_misuse.c -- misuse is detected, not a crash (like SQLITE_MISUSE). A
 * second destroy, a call after destroy, a handle of another kind or a pointer cucore did not
 * make returns CUCORE_MISUSE with a message naming the call and what was found; the shells of
 * destroyed handles sit in a quarantine, so nothing here reads freed memory (ASan, valgrind).
 * CPU only: handles that need no GPU (options, program, linker, binary, object, kernel, args),
 * then, in a child process over the fake driver of tests/fake/, devices, streams, events, graphs
 * and executable graphs.
 */
#include "support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef CUCORE_FAKE_DRIVER_PATH
#error "CUCORE_FAKE_DRIVER_PATH is set by tests/CMakeLists.txt"
#endif

static const char ptx[] = ".version 7.0\n"
                          ".target sm_70\n"
                          ".address_size 64\n"
                          ".visible .entry twice(.param .u32 twice_param_0)\n"
                          "{\n"
                          "  ret;\n"
                          "}\n";

static const char cuda_src[] = "extern \"C\" __global__ void k(int *p) { *p = 1; }\n";

/* A pointer cucore never made: zeroed memory at least as large as any handle. */
static _Alignas(64) unsigned char foreign[1 << 16];

/* Asserts `expr` is CUCORE_MISUSE and the message names `fn` and contains `what`. */
#define assert_misuse(expr, fn, what)             \
  do {                                            \
    assert_status((expr), CUCORE_MISUSE);         \
    assert_contains(cucore_last_error(), (fn));   \
    assert_contains(cucore_last_error(), (what)); \
  } while (0)

static cucore_object *ptx_object(void) {
  cucore_object *obj = NULL;
  assert_ok(cucore_object_from_memory(ptx, sizeof ptx - 1, CUCORE_CODE_PTX, "twice.ptx", &obj));
  return obj;
}

static cucore_kernel *ptx_kernel(cucore_object *obj) {
  cucore_kernel *k = NULL;
  assert_ok(cucore_object_get_kernel(obj, "twice", &k));
  return k;
}

static void destroying_null_stays_a_no_op(void **state) {
  (void)state;
  assert_ok(cucore_options_destroy(NULL));
  assert_ok(cucore_program_destroy(NULL));
  assert_ok(cucore_linker_destroy(NULL));
  assert_ok(cucore_binary_destroy(NULL));
  assert_ok(cucore_object_destroy(NULL));
  assert_ok(cucore_kernel_destroy(NULL));
  assert_ok(cucore_args_destroy(NULL));
  assert_ok(cucore_stream_destroy(NULL));
  assert_ok(cucore_event_destroy(NULL));
  assert_ok(cucore_graph_destroy(NULL));
  assert_ok(cucore_graph_exec_destroy(NULL));
}

static void a_second_destroy_is_misuse(void **state) {
  (void)state;
  cucore_options *o = NULL;
  assert_ok(cucore_options_create(&o));
  assert_ok(cucore_options_set_string(o, CUCORE_OPT_ARCH, "sm_90"));
  assert_ok(cucore_options_destroy(o));
  assert_misuse(cucore_options_destroy(o), "cucore_options_destroy", "a destroyed cucore_options");

  cucore_program *p = NULL;
  assert_ok(cucore_program_create(CUCORE_CODE_CUDA_CPP, cuda_src, 0, "k.cu", NULL, &p));
  assert_ok(cucore_program_destroy(p));
  assert_misuse(cucore_program_destroy(p), "cucore_program_destroy", "a destroyed cucore_program");

  cucore_linker *lk = NULL;
  assert_ok(cucore_linker_create(NULL, &lk));
  assert_ok(cucore_linker_destroy(lk));
  assert_misuse(cucore_linker_destroy(lk), "cucore_linker_destroy", "a destroyed cucore_linker");

  cucore_binary *bin = NULL;
  assert_ok(cucore_binary_open(ptx, sizeof ptx - 1, CUCORE_CODE_PTX, 0, &bin));
  assert_ok(cucore_binary_destroy(bin));
  assert_misuse(cucore_binary_destroy(bin), "cucore_binary_destroy", "a destroyed cucore_binary");

  cucore_object *obj = ptx_object();
  cucore_kernel *k = ptx_kernel(obj);
  cucore_args *a = NULL;
  assert_ok(cucore_args_create(k, &a));
  assert_ok(cucore_args_destroy(a));
  assert_misuse(cucore_args_destroy(a), "cucore_args_destroy", "a destroyed cucore_args");
  assert_ok(cucore_kernel_destroy(k));
  assert_misuse(cucore_kernel_destroy(k), "cucore_kernel_destroy", "a destroyed cucore_kernel");
  assert_ok(cucore_object_destroy(obj));
  assert_misuse(cucore_object_destroy(obj), "cucore_object_destroy", "a destroyed cucore_object");
}

static void a_call_after_destroy_is_misuse(void **state) {
  (void)state;
  cucore_options *o = NULL;
  assert_ok(cucore_options_create(&o));
  assert_ok(cucore_options_destroy(o));
  assert_misuse(cucore_options_set_string(o, CUCORE_OPT_ARCH, "sm_90"), "cucore_options_set_string",
                "a destroyed cucore_options");
  const char *text = NULL;
  assert_misuse(cucore_options_canonical(o, &text), "cucore_options_canonical", "destroyed");
  cucore_program *p = NULL;
  assert_misuse(cucore_program_create(CUCORE_CODE_CUDA_CPP, cuda_src, 0, "k.cu", o, &p),
                "cucore_program_create", "a destroyed cucore_options");
  assert_null(p);

  assert_ok(cucore_program_create(CUCORE_CODE_CUDA_CPP, cuda_src, 0, "k.cu", NULL, &p));
  assert_ok(cucore_program_destroy(p));
  cucore_object *out = NULL;
  assert_misuse(cucore_program_compile(p, CUCORE_CODE_PTX, &out), "cucore_program_compile",
                "a destroyed cucore_program");
  assert_null(out);
  assert_misuse(cucore_program_add_name_expression(p, "k"), "cucore_program_add_name_expression",
                "destroyed");

  cucore_linker *lk = NULL;
  assert_ok(cucore_linker_create(NULL, &lk));
  assert_ok(cucore_linker_destroy(lk));
  assert_misuse(cucore_linker_add(lk, CUCORE_CODE_PTX, ptx, sizeof ptx - 1, "x.ptx"),
                "cucore_linker_add", "a destroyed cucore_linker");

  cucore_binary *bin = NULL;
  assert_ok(cucore_binary_open(ptx, sizeof ptx - 1, CUCORE_CODE_PTX, 0, &bin));
  assert_ok(cucore_binary_destroy(bin));
  uint32_t n = 0;
  assert_misuse(cucore_binary_get_kernel_count(bin, &n), "cucore_binary_get_kernel_count",
                "destroyed");
}

static void kernels_and_arguments_after_destroy(void **state) {
  (void)state;
  cucore_object *obj = ptx_object();
  cucore_kernel *k = ptx_kernel(obj);
  cucore_args *a = NULL;
  assert_ok(cucore_args_create(k, &a));
  int v = 7;
  assert_ok(cucore_args_set_bytes(a, 0, &v, sizeof v, sizeof v));
  assert_ok(cucore_args_destroy(a));
  assert_misuse(cucore_args_set_bytes(a, 0, &v, sizeof v, sizeof v), "cucore_args_set_bytes",
                "a destroyed cucore_args");
  assert_misuse(cucore_args_push_bytes(a, &v, sizeof v, sizeof v), "cucore_args_push_bytes",
                "destroyed");
  assert_misuse(cucore_args_reset(a), "cucore_args_reset", "destroyed");
  assert_misuse(cucore_args_check(a), "cucore_args_check", "destroyed");
  /* A launch is refused before anything reaches a device (none here). */
  cucore_launch_config cfg = {.grid = {1, 1, 1}, .block = {1, 1, 1}};
  assert_misuse(cucore_launch(k, &cfg, a), "cucore_launch", "a destroyed cucore_args");

  /* The object outlives its first destroy while the kernel holds it. */
  assert_ok(cucore_object_destroy(obj));
  const char *name = NULL;
  assert_ok(cucore_kernel_get_name(k, &name));
  assert_string_equal(name, "twice");
  assert_ok(cucore_kernel_destroy(k));
  assert_misuse(cucore_kernel_get_name(k, &name), "cucore_kernel_get_name",
                "a destroyed cucore_kernel");
  assert_misuse(cucore_args_create(k, &a), "cucore_args_create", "a destroyed cucore_kernel");
  assert_null(a);
  assert_misuse(cucore_launch(k, &cfg, (cucore_args *)foreign), "cucore_launch",
                "a destroyed cucore_kernel");
  int count = 0;
  assert_misuse(cucore_object_get_kernel_count(obj, &count), "cucore_object_get_kernel_count",
                "a destroyed cucore_object");
}

static void a_foreign_pointer_is_misuse(void **state) {
  (void)state;
  memset(foreign, 0, sizeof foreign);
  assert_misuse(cucore_options_destroy((cucore_options *)foreign), "cucore_options_destroy",
                "not a cucore_options (magic 0x00000000)");
  assert_misuse(cucore_program_destroy((cucore_program *)foreign), "cucore_program_destroy",
                "not a cucore_program");
  assert_misuse(cucore_linker_destroy((cucore_linker *)foreign), "cucore_linker_destroy",
                "not a cucore_linker");
  assert_misuse(cucore_binary_destroy((cucore_binary *)foreign), "cucore_binary_destroy",
                "not a cucore_binary");
  assert_misuse(cucore_object_destroy((cucore_object *)foreign), "cucore_object_destroy",
                "not a cucore_object");
  assert_misuse(cucore_kernel_destroy((cucore_kernel *)foreign), "cucore_kernel_destroy",
                "not a cucore_kernel");
  assert_misuse(cucore_args_destroy((cucore_args *)foreign), "cucore_args_destroy",
                "not a cucore_args");
  assert_misuse(cucore_stream_destroy((cucore_stream *)foreign), "cucore_stream_destroy",
                "not a cucore_stream");
  assert_misuse(cucore_event_destroy((cucore_event *)foreign), "cucore_event_destroy",
                "not a cucore_event");
  assert_misuse(cucore_graph_destroy((cucore_graph *)foreign), "cucore_graph_destroy",
                "not a cucore_graph");
  assert_misuse(cucore_graph_exec_destroy((cucore_graph_exec *)foreign),
                "cucore_graph_exec_destroy", "not a cucore_graph_exec");
  cucore_object *out = NULL;
  assert_misuse(cucore_program_compile((cucore_program *)foreign, CUCORE_CODE_PTX, &out),
                "cucore_program_compile", "not a cucore_program");
  int v = 1;
  assert_misuse(cucore_args_push_bytes((cucore_args *)foreign, &v, sizeof v, sizeof v),
                "cucore_args_push_bytes", "not a cucore_args");
  /* The zeroed memory is untouched: nothing was freed or written through it. */
  for (size_t i = 0; i < sizeof foreign; i++) assert_int_equal(foreign[i], 0);
}

static void a_handle_of_another_kind_is_misuse(void **state) {
  (void)state;
  cucore_options *o = NULL;
  assert_ok(cucore_options_create(&o));
  cucore_object *out = NULL;
  assert_misuse(cucore_program_compile((cucore_program *)(void *)o, CUCORE_CODE_PTX, &out),
                "cucore_program_compile", "a cucore_options, not a cucore_program");
  assert_misuse(cucore_args_destroy((cucore_args *)(void *)o), "cucore_args_destroy",
                "a cucore_options, not a cucore_args");
  /* Still live and whole. */
  assert_ok(cucore_options_set_string(o, CUCORE_OPT_ARCH, "sm_80"));
  assert_ok(cucore_options_destroy(o));
  assert_misuse(cucore_linker_destroy((cucore_linker *)(void *)o), "cucore_linker_destroy",
                "a destroyed cucore_options, and a cucore_linker was expected");
}

/* Many more handles than the quarantine holds: its oldest shells are freed as it turns (ASan
 * and valgrind see every free once), and every handle stays usable until destroyed. */
static void many_cycles_past_the_quarantine_stay_clean(void **state) {
  (void)state;
  cucore_object *obj = ptx_object();
  cucore_kernel *k = ptx_kernel(obj);
  for (int i = 0; i < 2000; i++) {
    cucore_options *o = NULL;
    cucore_args *a = NULL;
    assert_ok(cucore_options_create(&o));
    assert_ok(cucore_options_set_string(o, CUCORE_OPT_ARCH, "sm_90"));
    assert_ok(cucore_args_create(k, &a));
    assert_ok(cucore_args_push_bytes(a, &i, sizeof i, sizeof i));
    assert_ok(cucore_args_check(a));
    assert_ok(cucore_args_destroy(a));
    assert_ok(cucore_options_destroy(o));
    /* Recently destroyed: still caught. */
    assert_status(cucore_args_destroy(a), CUCORE_MISUSE);
    assert_status(cucore_options_destroy(o), CUCORE_MISUSE);
  }
  assert_ok(cucore_kernel_destroy(k));
  assert_ok(cucore_object_destroy(obj));
}

/* Over the fake driver: a stream, an event, a graph and an executable graph destroyed twice
 * or used after destroy; a device's default stream dies with the device. */
static void device_handles_after_destroy(void **state) {
  (void)state;
  cucore_device *dev = NULL;
  cucore_stream *s = NULL, *def = NULL;
  cucore_event *ev = NULL;
  assert_ok(cucore_device_open(0, &dev));
  assert_ok(cucore_stream_create(dev, 0, 0, &s));
  assert_ok(cucore_stream_destroy(s));
  assert_misuse(cucore_stream_destroy(s), "cucore_stream_destroy", "a destroyed cucore_stream");
  assert_misuse(cucore_stream_synchronize(s), "cucore_stream_synchronize", "destroyed");
  static const char host[16];
  assert_misuse(cucore_memcpy_htod(dev, 0x1000, host, sizeof host, s), "cucore_memcpy_htod",
                "a destroyed cucore_stream");
  assert_ok(cucore_event_create(dev, 0, &ev));
  assert_ok(cucore_event_destroy(ev));
  assert_misuse(cucore_event_destroy(ev), "cucore_event_destroy", "a destroyed cucore_event");
  assert_misuse(cucore_event_query(ev), "cucore_event_query", "a destroyed cucore_event");
  cucore_graph *g = NULL;
  cucore_graph_exec *e = NULL;
  assert_ok(cucore_graph_create(dev, &g));
  assert_ok(cucore_graph_instantiate(g, 0, NULL, &e));
  assert_ok(cucore_stream_default(dev, &def));
  assert_ok(cucore_graph_exec_destroy(e));
  assert_misuse(cucore_graph_exec_destroy(e), "cucore_graph_exec_destroy", "destroyed");
  assert_misuse(cucore_graph_launch(e, def), "cucore_graph_launch",
                "a destroyed cucore_graph_exec");
  assert_ok(cucore_graph_destroy(g));
  assert_misuse(cucore_graph_destroy(g), "cucore_graph_destroy", "a destroyed cucore_graph");
  assert_ok(cucore_stream_destroy(def)); /* owned by the device: a no-op */
  assert_ok(cucore_stream_synchronize(def));
  assert_ok(cucore_device_close(dev));
  assert_misuse(cucore_device_close(dev), "cucore_device_close", "a destroyed cucore_device");
  assert_misuse(cucore_stream_synchronize(def), "cucore_stream_synchronize",
                "a destroyed cucore_stream");
  assert_misuse(cucore_memcpy_htod(dev, 0x1000, host, sizeof host, NULL), "cucore_memcpy_htod",
                "a destroyed cucore_device");
}

/* The driver is loaded once per process: the fake one gets a child of its own. */
static int run_over_the_fake_driver(void) {
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    setenv("CUCORE_LIBCUDA", CUCORE_FAKE_DRIVER_PATH, 1);
    const struct CMUnitTest tests[] = {cmocka_unit_test(device_handles_after_destroy)};
    exit(cmocka_run_group_tests_name("misuse over the fake driver", tests, NULL, NULL));
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid) return 1;
  return !WIFEXITED(status) || WEXITSTATUS(status) != 0;
}

int main(void) {
  int failed = run_over_the_fake_driver();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(destroying_null_stays_a_no_op),
      cmocka_unit_test(a_second_destroy_is_misuse),
      cmocka_unit_test(a_call_after_destroy_is_misuse),
      cmocka_unit_test(kernels_and_arguments_after_destroy),
      cmocka_unit_test(a_foreign_pointer_is_misuse),
      cmocka_unit_test(a_handle_of_another_kind_is_misuse),
      cmocka_unit_test(many_cycles_past_the_quarantine_stay_clean),
  };
  return cmocka_run_group_tests(tests, NULL, NULL) || failed;
}
