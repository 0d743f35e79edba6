/* gpu_link_stages.c -- incremental linking on a real GPU (label gpu) with the installed
 * nvJitLink. An nvJitLink older than an output needs (13.2 for a relocatable output, 13.3 for
 * linked LTO-IR; CUDA 13.0 on the lab's machines) refuses it by name with both versions. A new
 * enough one links in two stages: a kernel and one device function (relocatable cubins, or
 * LTO-IR) into one relocatable output, then that and the second device function into a cubin
 * that runs and computes f_b(2) + f_c(3) = 14. */
#include "gpu_support.h"

#include <string.h>

static const char *srcs[3] = {
    "extern __device__ int f_b(int); extern __device__ int f_c(int);\n"
    "extern \"C\" __global__ void combine(int *out) { out[0] = f_b(2) + f_c(3); }\n",
    "__device__ int f_b(int x) { return x * x; }\n",
    "__device__ int f_c(int x) { return 3 * x + 1; }\n"};

/* Runs `combine` of `obj` and returns out[0]. */
static int run_combine(cucore_object *obj) {
  cucore_device *dev = NULL;
  cucore_stream *s = NULL;
  assert_ok(cucore_device_open(0, &dev));
  assert_ok(cucore_stream_create(dev, CUCORE_STREAM_NON_BLOCKING, 0, &s));
  cucore_kernel *k = gpu_kernel(obj, "combine");
  cucore_devptr d = 0;
  assert_ok(cucore_mem_alloc(dev, sizeof(int), &d));
  cucore_args *args = NULL;
  assert_ok(cucore_args_create(k, &args));
  assert_ok(CUCORE_ARGS(args, d));
  cucore_launch_config c;
  memset(&c, 0, sizeof c);
  c.grid[0] = c.block[0] = 1;
  c.stream = s;
  assert_ok(cucore_launch(k, &c, args));
  assert_ok(cucore_stream_synchronize(s));
  int got = 0;
  assert_ok(cucore_memcpy_dtoh(dev, &got, d, sizeof got, NULL));
  cucore_args_destroy(args);
  cucore_kernel_destroy(k);
  cucore_mem_free(dev, d);
  cucore_stream_destroy(s);
  assert_ok(cucore_device_close(dev));
  return got;
}

/* Stage 1 links sources 0 and 1 (compiled to `type`) into `kind`; stage 2 adds source 2. */
static void two_stages(cucore_link_output kind, cucore_code_type type, int found) {
  const char *flags[] = {"-rdc", NULL};
  cucore_object *in[3];
  for (int i = 0; i < 3; i++) in[i] = gpu_compile(srcs[i], type, NULL, flags);
  cucore_linker *lk = NULL;
  assert_ok(cucore_linker_create(NULL, &lk));
  assert_ok(cucore_linker_add_object(lk, in[0]));
  assert_ok(cucore_linker_add_object(lk, in[1]));
  cucore_object *stage1 = NULL;
  cucore_status st = cucore_linker_complete_output(lk, kind, &stage1);
  int need = kind == CUCORE_LINK_OUTPUT_LTOIR ? 13030 : 13020;
  if (found < need) {
    assert_int_equal(CUCORE_CODE(st), CUCORE_TOOLKIT_TOO_OLD);
    char want[64];
    snprintf(want, sizeof want, "needs nvJitLink %d.%d, found %d.%d", need / 1000, need % 1000 / 10,
             found / 1000, found % 1000 / 10);
    assert_contains(cucore_last_error(), want);
    print_message("refused as it should be: %s\n", cucore_last_error());
  } else {
    if (st != CUCORE_OK) {
      const char *info = "", *err = "";
      cucore_linker_get_log(lk, &info, &err);
      fail_msg("stage 1 (%s): %s\n%s", cucore_link_output_name(kind), cucore_last_error(), err);
    }
    cucore_linker *lk2 = NULL;
    assert_ok(cucore_linker_create(NULL, &lk2));
    assert_ok(cucore_linker_add_object(lk2, stage1));
    assert_ok(cucore_linker_add_object(lk2, in[2]));
    cucore_object *linked = NULL;
    assert_ok(cucore_linker_complete(lk2, CUCORE_CODE_CUBIN, &linked));
    int got = run_combine(linked);
    assert_int_equal(got, 14);
    print_message("%s in two stages: f_b(2) + f_c(3) = %d\n", cucore_link_output_name(kind), got);
    cucore_object_destroy(linked);
    cucore_object_destroy(stage1);
    cucore_linker_destroy(lk2);
  }
  cucore_linker_destroy(lk);
  for (int i = 0; i < 3; i++) cucore_object_destroy(in[i]);
}

static int nvjitlink_version(void) {
  cucore_versions_info v;
  assert_ok(cucore_versions(&v));
  if (!v.nvjitlink.loaded) {
    print_message("no nvJitLink: %s\n", v.nvjitlink.error ? v.nvjitlink.error : "?");
    skip();
  }
  print_message("nvJitLink %d.%d\n", v.nvjitlink.version / 1000, v.nvjitlink.version % 1000 / 10);
  return v.nvjitlink.version;
}

static void relocatable_cubin_in_two_stages(void **state) {
  (void)state;
  two_stages(CUCORE_LINK_OUTPUT_RELOCATABLE, CUCORE_CODE_CUBIN, nvjitlink_version());
}

static void linked_ltoir_in_two_stages(void **state) {
  (void)state;
  two_stages(CUCORE_LINK_OUTPUT_LTOIR, CUCORE_CODE_LTOIR, nvjitlink_version());
}

int main(void) {
  if (!cucore_test_have_gpu()) return CUCORE_TEST_SKIP;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(relocatable_cubin_in_two_stages),
      cmocka_unit_test(linked_ltoir_in_two_stages),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
