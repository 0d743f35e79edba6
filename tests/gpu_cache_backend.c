/* gpu_cache_backend.c -- on a real GPU (label gpu): code that came back from a compile-cache
 * back end (an in-memory store in place of the directory) loads and runs with the CPU's
 * answer; the key computed without compiling uses the current GPU's arch as the compile does;
 * and a compile for the GPU's arch reads its warning into a record. */
#include "backend_support.h"
#include "gpu_support.h"

static const char *scale_src =
    "extern \"C\" __global__ void scale_add(float *y, float a, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  int unused = 3;\n"
    "  if (i < n) y[i] = a * y[i] + 1.0f;\n"
    "}\n";

/* Compiles scale_src for the current GPU (no arch option) through the cache. */
static cucore_object *compile_here(cucore_cache_result *result, char key_before[65]) {
  cucore_program *p = NULL;
  assert_ok(cucore_program_create(CUCORE_CODE_CUDA_CPP, scale_src, 0, "scale.cu", NULL, &p));
  const char *reason = NULL;
  assert_ok(cucore_program_get_cache_key(p, CUCORE_CODE_CUBIN, key_before, &reason));
  assert_int_equal(strlen(key_before), 64);
  cucore_object *obj = NULL;
  assert_ok(cucore_program_compile(p, CUCORE_CODE_CUBIN, &obj));
  cucore_cache_info info;
  assert_ok(cucore_program_get_cache_info(p, &info));
  assert_string_equal(info.key, key_before);
  *result = info.result;
  int n = 0;
  assert_ok(cucore_program_get_diagnostic_count(p, &n));
  if (*result != CUCORE_CACHE_HIT_MEMORY) {
    assert_true(n >= 1);
    cucore_diagnostic d;
    assert_ok(cucore_program_get_diagnostic(p, 0, &d));
    assert_int_equal(d.severity, CUCORE_DIAG_WARNING);
    assert_string_equal(d.file, "scale.cu");
    assert_int_equal(d.line, 3);
    assert_int_equal(d.column, 7);
  }
  cucore_program_destroy(p);
  return obj;
}

static void run_scale(cucore_device *dev, cucore_stream *s, cucore_object *obj) {
  const int n = 4096;
  float *y = malloc(n * sizeof *y), *out = malloc(n * sizeof *out);
  for (int i = 0; i < n; i++) y[i] = (float)(i % 100);
  cucore_devptr dy;
  assert_ok(cucore_mem_alloc(dev, n * sizeof(float), &dy));
  assert_ok(cucore_memcpy_htod(dev, dy, y, n * sizeof(float), NULL));
  cucore_kernel *k = gpu_kernel(obj, "scale_add");
  cucore_args *args = NULL;
  assert_ok(cucore_args_create(k, &args));
  float a = 3.0f;
  assert_ok(CUCORE_ARGS(args, dy, a, n));
  cucore_launch_config c;
  memset(&c, 0, sizeof c);
  c.grid[0] = (n + 255) / 256;
  c.block[0] = 256;
  c.stream = s;
  assert_ok(cucore_launch(k, &c, args));
  assert_ok(cucore_stream_synchronize(s));
  assert_ok(cucore_memcpy_dtoh(dev, out, dy, n * sizeof(float), NULL));
  for (int i = 0; i < n; i++)
    if (out[i] != a * y[i] + 1.0f) fail_msg("y[%d] = %g, expected %g", i, out[i], a * y[i] + 1);
  cucore_args_destroy(args);
  cucore_kernel_destroy(k);
  cucore_mem_free(dev, dy);
  free(y);
  free(out);
}

static void code_from_the_backend_runs(void **state) {
  (void)state;
  char *dir = cache_test_mkdtemp();
  assert_int_equal(cache_test_settings(dir), 0);
  memstore store;
  memstore_init(&store);
  cucore_cache_backend b = memstore_backend(&store, CUCORE_CACHE_BACKEND_ONLY);
  assert_ok(cucore_cache_set_backend(&b));
  cucore_device *dev = NULL;
  cucore_stream *s = NULL;
  assert_ok(cucore_device_open(0, &dev));
  assert_ok(cucore_stream_create(dev, CUCORE_STREAM_NON_BLOCKING, 0, &s));
  cucore_cache_result result;
  char key1[65], key2[65];
  cucore_object *first = compile_here(&result, key1);
  assert_int_equal(result, CUCORE_CACHE_MISS);
  assert_int_equal(store.puts, 1);
  cucore_object_destroy(first);
  cc_cache_memory_clear();
  cucore_object *again = compile_here(&result, key2);
  assert_int_equal(result, CUCORE_CACHE_HIT_BACKEND);
  assert_string_equal(key1, key2);
  run_scale(dev, s, again);
  print_message("a kernel read from the back end ran with the CPU's answer\n");
  cucore_object_destroy(again);
  cucore_stream_destroy(s);
  assert_ok(cucore_device_close(dev));
  assert_ok(cucore_cache_set_backend(NULL));
  memstore_free(&store);
  cache_test_settings(NULL);
  cache_test_rm_rf(dir);
  free(dir);
}

int main(void) {
  if (!cucore_test_have_gpu()) return CUCORE_TEST_SKIP;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(code_from_the_backend_runs),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
