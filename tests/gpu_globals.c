/* gpu_globals.c -- module variables on a real GPU (label gpu): a __constant__ table set from
 * the host and read by a kernel that writes a __device__ global, read back and compared with
 * the CPU; a managed variable; copies queued on a stream; copies that do not fit refused. */
#include "gpu_support.h"

#include <string.h>

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

#define N 64

static const char *src =
    "__constant__ float table[64];\n"
    "__device__ float result[64];\n"
    "__device__ int calls;\n"
    "__managed__ int managed_total;\n"
    "namespace ns { template <typename T> __device__ T coef[2]; }\n"
    "template __device__ float ns::coef<float>[2];\n"
    "extern \"C\" __global__ void apply(const float *x, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) result[i] = x[i] * table[i] * ns::coef<float>[0] + ns::coef<float>[1];\n"
    "  if (i == 0) { atomicAdd(&calls, 1); atomicAdd(&managed_total, n); }\n"
    "}\n";

static cucore_launch_config config(unsigned grid, unsigned block) {
  cucore_launch_config c;
  memset(&c, 0, sizeof c);
  c.grid[0] = grid;
  c.block[0] = block;
  c.stream = stream;
  return c;
}

static void constant_table_and_device_result(void **state) {
  (void)state;
  const char *exprs[] = {"ns::coef<float>", NULL};
  cucore_object *obj = gpu_compile(src, CUCORE_CODE_CUBIN, exprs, NULL);
  cucore_global table, result, calls, managed, coef;
  assert_ok(cucore_object_get_global(obj, dev, "table", &table));
  assert_ok(cucore_object_get_global(obj, dev, "result", &result));
  assert_ok(cucore_object_get_global(obj, dev, "calls", &calls));
  assert_ok(cucore_object_get_global(obj, dev, "managed_total", &managed));
  assert_ok(cucore_object_get_global(obj, dev, "ns::coef<float>", &coef));
  assert_int_equal(table.size, N * sizeof(float));
  assert_int_equal(table.kind, CUCORE_GLOBAL_CONSTANT);
  assert_int_equal(result.size, N * sizeof(float));
  assert_int_equal(result.kind, CUCORE_GLOBAL_DEVICE);
  assert_int_equal(managed.kind, CUCORE_GLOBAL_MANAGED);
  assert_int_equal(managed.size, sizeof(int));
  assert_int_equal(coef.size, 2 * sizeof(float));
  assert_string_equal(coef.name, "_ZN2ns4coefIfEE");
  print_message("table at 0x%llx (%zu bytes), result at 0x%llx, managed at 0x%llx\n",
                (unsigned long long)table.address, table.size, (unsigned long long)result.address,
                (unsigned long long)managed.address);

  /* Fill the table synchronously, the coefficients on the stream. */
  float host_table[N], x[N], got[N], coefs[2] = {1.5f, -0.25f};
  for (int i = 0; i < N; i++) {
    host_table[i] = (float)(i % 7) + 0.5f;
    x[i] = (float)i * 0.125f;
  }
  assert_ok(cucore_global_write(&table, 0, host_table, sizeof host_table, NULL));
  assert_ok(cucore_global_write(&coef, 0, coefs, sizeof coefs, stream));
  int zero = 0;
  assert_ok(cucore_global_write(&calls, 0, &zero, sizeof zero, stream));
  assert_ok(cucore_global_write(&managed, 0, &zero, sizeof zero, stream));
  /* Read part of the table back at an offset. */
  float part[4];
  assert_ok(cucore_global_read(&table, 8 * sizeof(float), part, sizeof part, stream));
  assert_ok(cucore_stream_synchronize(stream));
  for (int i = 0; i < 4; i++) assert_true(part[i] == host_table[8 + i]);

  cucore_devptr dx = 0;
  assert_ok(cucore_mem_alloc(dev, sizeof x, &dx));
  assert_ok(cucore_memcpy_htod(dev, dx, x, sizeof x, NULL));
  cucore_kernel *k = gpu_kernel(obj, "apply");
  cucore_args *args = NULL;
  assert_ok(cucore_args_create(k, &args));
  int n = N;
  assert_ok(CUCORE_ARGS(args, dx, n));
  cucore_launch_config c = config(2, 32);
  assert_ok(cucore_launch(k, &c, args));
  assert_ok(cucore_launch(k, &c, args));
  assert_ok(cucore_global_read(&result, 0, got, sizeof got, stream));
  int ncalls = 0, total = 0;
  assert_ok(cucore_global_read(&calls, 0, &ncalls, sizeof ncalls, stream));
  assert_ok(cucore_stream_synchronize(stream));
  assert_ok(cucore_global_read(&managed, 0, &total, sizeof total, NULL));
  for (int i = 0; i < N; i++) {
    float want = x[i] * host_table[i] * coefs[0] + coefs[1];
    if (got[i] != want) fail_msg("result[%d] = %g, the CPU says %g", i, got[i], want);
  }
  assert_int_equal(ncalls, 2);
  assert_int_equal(total, 2 * N);
  print_message("%d results match the CPU; calls = %d, managed_total = %d\n", N, ncalls, total);

  /* Copies that do not fit are refused with both sizes named; nothing is copied. */
  assert_status(cucore_global_write(&table, 4, host_table, sizeof host_table, NULL),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "a copy of 256 bytes at offset 4 runs past the end of "
                                       "`table` (constant, 256 bytes)");
  assert_status(cucore_global_read(&calls, 0, got, 8, stream), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "`calls` (device, 4 bytes)");
  assert_status(cucore_global_read(&calls, (size_t)-1, got, 2, NULL), CUCORE_INVALID_ARGUMENT);
  assert_ok(cucore_global_write(&table, sizeof host_table, host_table, 0, NULL)); /* 0 bytes */

  /* Names that do not exist are listed against what does. */
  cucore_global missing;
  assert_status(cucore_object_get_global(obj, dev, "tabel", &missing), CUCORE_NOT_FOUND);
  assert_contains(cucore_last_error(), "`table` (constant, 256 bytes)");
  assert_null(missing.name);
  assert_status(cucore_object_get_global(obj, dev, "ns::coef<double>", &missing), CUCORE_NOT_FOUND);
  assert_contains(cucore_last_error(), "name expression");

  cucore_args_destroy(args);
  cucore_kernel_destroy(k);
  cucore_mem_free(dev, dx);
  cucore_object_destroy(obj);
}

/* The same variables through PTX (the driver JIT) and a fatbin. */
static void globals_from_ptx_and_fatbin(void **state) {
  (void)state;
  const cucore_code_type types[] = {CUCORE_CODE_PTX, CUCORE_CODE_FATBIN};
  for (int t = 0; t < 2; t++) {
    cucore_object *obj = gpu_compile(src, types[t], NULL, NULL);
    cucore_global table, managed;
    assert_ok(cucore_object_get_global(obj, dev, "table", &table));
    assert_ok(cucore_object_get_global(obj, dev, "managed_total", &managed));
    assert_int_equal(table.size, N * sizeof(float));
    assert_int_equal(table.kind, CUCORE_GLOBAL_CONSTANT);
    assert_int_equal(managed.kind, CUCORE_GLOBAL_MANAGED);
    float v[N];
    for (int i = 0; i < N; i++) v[i] = (float)i;
    float back[N];
    assert_ok(cucore_global_write(&table, 0, v, sizeof v, stream));
    assert_ok(cucore_global_read(&table, 0, back, sizeof back, stream));
    assert_ok(cucore_stream_synchronize(stream));
    assert_memory_equal(v, back, sizeof v);
    print_message("%s: table round-trips through the device\n", cucore_code_type_name(types[t]));
    cucore_object_destroy(obj);
  }
}

int main(void) {
  if (!cucore_test_have_gpu()) return CUCORE_TEST_SKIP;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(constant_table_and_device_result),
      cmocka_unit_test(globals_from_ptx_and_fatbin),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
