/* gpu_options_pch.c -- the newer compile options and NVRTC's precompiled headers on a real GPU
 * (label gpu): code compiled with each option, with a PCH made and used in this process, and
 * linked by nvJitLink with its options, runs and gives the CPU's answer. On a CUDA 13.0 toolkit
 * every option is there (device-float128 needs sm_100 and is left out). */
#include "gpu_support.h"

#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static cucore_device *dev;
static cucore_stream *stream;

static int setup(void **state) {
  (void)state;
  if (cucore_device_open(0, &dev) != CUCORE_OK) return -1;
  return cucore_stream_create(dev, CUCORE_STREAM_NON_BLOCKING, 0, &stream) == CUCORE_OK ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  cucore_stream_destroy(stream);
  return cucore_device_close(dev) == CUCORE_OK ? 0 : -1;
}

static const char *saxpy_src =
    "#include <cuda/std/complex>\n"
    "extern \"C\" __global__ void saxpy(float a, const float *x, float *y, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  cuda::std::complex<float> c(a, 0.0f);\n"
    "  if (i < n) y[i] = c.real() * x[i] + y[i];\n"
    "}\n";

/* Runs saxpy of `obj` on 4096 elements and checks y = 2x + y. */
static void run_saxpy(cucore_object *obj, const char *what) {
  enum { N = 4096 };
  static float x[N], y[N], out[N];
  for (int i = 0; i < N; i++) x[i] = (float)(i % 100), y[i] = (float)(i % 7);
  cucore_devptr dx, dy;
  assert_ok(cucore_mem_alloc(dev, sizeof x, &dx));
  assert_ok(cucore_mem_alloc(dev, sizeof y, &dy));
  assert_ok(cucore_memcpy_htod(dev, dx, x, sizeof x, NULL));
  assert_ok(cucore_memcpy_htod(dev, dy, y, sizeof y, NULL));
  cucore_kernel *k = gpu_kernel(obj, "saxpy");
  cucore_args *args = NULL;
  assert_ok(cucore_args_create(k, &args));
  float a = 2.0f;
  int n = N;
  assert_ok(CUCORE_ARGS(args, a, dx, dy, n));
  cucore_launch_config c;
  memset(&c, 0, sizeof c);
  c.grid[0] = N / 256;
  c.block[0] = 256;
  c.stream = stream;
  assert_ok(cucore_launch(k, &c, args));
  assert_ok(cucore_stream_synchronize(stream));
  assert_ok(cucore_memcpy_dtoh(dev, out, dy, sizeof out, NULL));
  for (int i = 0; i < N; i++)
    if (out[i] != 2.0f * x[i] + y[i]) fail_msg("%s: y[%d] = %g", what, i, out[i]);
  cucore_args_destroy(args);
  cucore_kernel_destroy(k);
  cucore_mem_free(dev, dx);
  cucore_mem_free(dev, dy);
}

static void each_new_option_runs(void **state) {
  (void)state;
  const char *const sets[][3] = {
      {"--minimal", NULL, NULL},           {"-restrict", NULL, NULL},
      {"--ofast-compile=max", NULL, NULL}, {"--dopt", NULL, NULL},
      {"--frandom-seed=7", NULL, NULL},    {"--no-cache", NULL, NULL},
      {"--diag-suppress=177", NULL, NULL}, {"-ewp", NULL, NULL},
      {"--brief-diagnostics", NULL, NULL}, {"--no-builtin-initializer-list", NULL, NULL},
  };
  for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++) {
    cucore_object *obj = gpu_compile(saxpy_src, CUCORE_CODE_CUBIN, NULL, sets[i]);
    run_saxpy(obj, sets[i][0]);
    cucore_object_destroy(obj);
  }
}

/* A PCH made by one compile and used by the next, in this process; both codes run. */
static void pch_made_and_used(void **state) {
  (void)state;
  char dir[] = "/tmp/cucore-gpu-pch-XXXXXX";
  assert_non_null(mkdtemp(dir));
  char create[96], use[96], path[96];
  snprintf(path, sizeof path, "%s/saxpy.pch", dir);
  snprintf(create, sizeof create, "--create-pch=%s", path);
  snprintf(use, sizeof use, "--use-pch=%s", path);
  const char *const words[2][2] = {{create, NULL}, {use, NULL}};
  const cucore_pch_status want[2] = {CUCORE_PCH_CREATED, CUCORE_PCH_NOT_ATTEMPTED};
  for (int round = 0; round < 2; round++) {
    cucore_options *o = NULL;
    assert_ok(cucore_options_create(&o));
    int used = 0;
    assert_ok(cucore_options_parse(o, words[round][0], NULL, &used));
    cucore_program *p = NULL;
    cucore_object *obj = NULL;
    assert_ok(cucore_program_create(CUCORE_CODE_CUDA_CPP, saxpy_src, 0, "saxpy.cu", o, &p));
    assert_ok(cucore_program_compile(p, CUCORE_CODE_CUBIN, &obj));
    cucore_pch_status st;
    assert_ok(cucore_program_get_pch_status(p, &st));
    assert_int_equal(st, want[round]);
    run_saxpy(obj, round ? "used PCH" : "made PCH");
    cucore_object_destroy(obj);
    cucore_program_destroy(p);
    cucore_options_destroy(o);
  }
  unlink(path);
  rmdir(dir);
}

/* PTX linked by nvJitLink with its options (kernels used, verbose, timing) runs. */
static void nvjitlink_options_run(void **state) {
  (void)state;
  cucore_object *ptx = gpu_compile(saxpy_src, CUCORE_CODE_PTX, NULL, NULL);
  cucore_options *o = NULL;
  assert_ok(cucore_options_create(&o));
  assert_ok(cucore_options_set_string(o, CUCORE_OPT_KERNELS_USED, "saxpy"));
  assert_ok(cucore_options_set_int(o, CUCORE_OPT_JITLINK_VERBOSE, 1));
  assert_ok(cucore_options_set_int(o, CUCORE_OPT_JITLINK_TIME, 1));
  assert_ok(cucore_options_set_int(o, CUCORE_OPT_NO_CACHE, 1));
  cucore_linker *lk = NULL;
  assert_ok(cucore_linker_create(o, &lk));
  assert_ok(cucore_linker_add_object(lk, ptx));
  cucore_object *cubin = NULL;
  assert_ok(cucore_linker_complete(lk, CUCORE_CODE_CUBIN, &cubin));
  const char *info = NULL;
  assert_ok(cucore_linker_get_log(lk, &info, NULL));
  assert_non_null(strstr(info, "nvJitLink time"));
  run_saxpy(cubin, "nvJitLink options");
  cucore_object_destroy(cubin);
  cucore_linker_destroy(lk);
  cucore_options_destroy(o);
  cucore_object_destroy(ptx);
}

int main(void) {
  if (!cucore_test_have_gpu()) return CUCORE_TEST_SKIP;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(each_new_option_runs),
      cmocka_unit_test(pch_made_and_used),
      cmocka_unit_test(nvjitlink_options_run),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
