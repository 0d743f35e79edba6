/* gpu_libdevice.c -- libdevice on a real GPU (label gpu): NVVM IR calling __nv_sinf and
 * __nv_expf (tests/kernels/libdevice_math.ll), compiled by libNVVM with libdevice found and
 * added lazily, runs over an array and matches the host's sinf and expf within libdevice's
 * documented error (2 ulp for both, full range). */
#include "gpu_support.h"

#include <float.h>
#include <math.h>
#include <string.h>

#define N 1000

/* Within `ulps` units in the last place of `want` (relative, and absolute near 0). */
static int close_enough(float got, float want, float ulps) {
  float scale = fabsf(want) > 1.0f ? fabsf(want) : 1.0f;
  return fabsf(got - want) <= ulps * FLT_EPSILON * scale;
}

static void libdevice_math_matches_the_host(void **state) {
  (void)state;
  cucore_device *dev = NULL;
  assert_ok(cucore_device_open(0, &dev));
  cucore_stream *stream = NULL;
  assert_ok(cucore_stream_create(dev, CUCORE_STREAM_NON_BLOCKING, 0, &stream));
  size_t n = 0;
  char *ir = cucore_test_read_file(CUCORE_TEST_KERNEL_DIR "/libdevice_math.ll", &n);
  assert_non_null(ir);
  cucore_program *p = NULL;
  assert_ok(cucore_program_create(CUCORE_CODE_NVVM, ir, n, "libdevice_math.ll", NULL, &p));
  cucore_object *obj = NULL;
  if (cucore_program_compile(p, CUCORE_CODE_CUBIN, &obj) != CUCORE_OK) {
    const char *log = "";
    cucore_program_get_log(p, &log);
    fail_msg("compile: %s\n%s", cucore_last_error(), log);
  }
  cucore_kernel *k = gpu_kernel(obj, "math");
  float x[N], s[N], e[N];
  for (int i = 0; i < N; i++) x[i] = -10.0f + 20.0f * (float)i / (float)(N - 1);
  cucore_devptr dx = 0, ds = 0, de = 0;
  assert_ok(cucore_mem_alloc(dev, sizeof x, &dx));
  assert_ok(cucore_mem_alloc(dev, sizeof s, &ds));
  assert_ok(cucore_mem_alloc(dev, sizeof e, &de));
  assert_ok(cucore_memcpy_htod(dev, dx, x, sizeof x, NULL));
  cucore_args *args = NULL;
  assert_ok(cucore_args_create(k, &args));
  int count = N;
  assert_ok(CUCORE_ARGS(args, dx, ds, de, count));
  cucore_launch_config c;
  memset(&c, 0, sizeof c);
  c.grid[0] = (N + 127) / 128;
  c.block[0] = 128;
  c.stream = stream;
  assert_ok(cucore_launch(k, &c, args));
  assert_ok(cucore_stream_synchronize(stream));
  assert_ok(cucore_memcpy_dtoh(dev, s, ds, sizeof s, NULL));
  assert_ok(cucore_memcpy_dtoh(dev, e, de, sizeof e, NULL));
  int bad = 0;
  for (int i = 0; i < N; i++) {
    if (!close_enough(s[i], sinf(x[i]), 4) || !close_enough(e[i], expf(x[i]), 4)) {
      if (bad++ < 5)
        print_message("x = %.9g: sin %.9g (host %.9g), exp %.9g (host %.9g)\n", x[i], s[i],
                      sinf(x[i]), e[i], expf(x[i]));
    }
  }
  assert_int_equal(bad, 0);
  print_message("%d values of __nv_sinf and __nv_expf match the host's sinf and expf\n", N);
  cucore_args_destroy(args);
  cucore_kernel_destroy(k);
  cucore_mem_free(dev, dx);
  cucore_mem_free(dev, ds);
  cucore_mem_free(dev, de);
  cucore_object_destroy(obj);
  cucore_program_destroy(p);
  free(ir);
  cucore_stream_destroy(stream);
  assert_ok(cucore_device_close(dev));
}

int main(void) {
  if (!cucore_test_have_gpu()) return CUCORE_TEST_SKIP;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(libdevice_math_matches_the_host),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
