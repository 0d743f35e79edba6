/* test_copy_strided.c -- cucore_memcpy_strided through the fake driver: a count, element size or
 * shape out of range, NULL strides, a misaligned side, a footprint past its allocation (with
 * negative strides too) and overlapping sides, each refused by name before anything runs; the
 * same dense layout on both sides a plain copy whose bytes arrive; another layout a launch of
 * the kernel compiled once with NVRTC (nothing runs on the fake: the GPU test checks values). */
#include "support.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#ifndef CUCORE_FAKE_DRIVER_PATH
#error "CUCORE_FAKE_DRIVER_PATH is set by tests/CMakeLists.txt"
#endif

static cucore_device *dev;
static cucore_devptr a, b; /* 4096 bytes each */

static int open_fake(void **state) {
  (void)state;
  setenv("CUCORE_LIBCUDA", CUCORE_FAKE_DRIVER_PATH, 1);
  if (cucore_device_open(0, &dev) != CUCORE_OK) return -1;
  if (cucore_mem_alloc(dev, 4096, &a) != CUCORE_OK) return -1;
  return cucore_mem_alloc(dev, 4096, &b) == CUCORE_OK ? 0 : -1;
}

static int close_fake(void **state) {
  (void)state;
  cucore_mem_free(dev, a);
  cucore_mem_free(dev, b);
  return cucore_device_close(dev) == CUCORE_OK ? 0 : -1;
}

static long fake_launches(void) {
  void *lib = dlopen(CUCORE_FAKE_DRIVER_PATH, RTLD_NOW | RTLD_NOLOAD);
  long (*fn)(void) = lib ? (long (*)(void))dlsym(lib, "fake_launches") : NULL;
  long n = fn ? fn() : -1;
  if (lib) dlclose(lib);
  return n;
}

static void refusals_name_what_is_wrong(void **state) {
  (void)state;
  uint64_t shape[2] = {16, 32};
  int64_t rows[2] = {32, 1}, cols[2] = {1, 16};
  assert_status(cucore_memcpy_strided(dev, b, cols, a, rows, shape, 0, 4, NULL),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "0 dimensions (expected 1..8)");
  assert_status(cucore_memcpy_strided(dev, b, cols, a, rows, shape, 2, 3, NULL),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "elements of 3 bytes");
  uint64_t zero[2] = {16, 0};
  assert_status(cucore_memcpy_strided(dev, b, cols, a, rows, zero, 2, 4, NULL),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "shape[1] is 0");
  assert_status(cucore_memcpy_strided(dev, b, NULL, a, rows, shape, 2, 4, NULL),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "the destination strides are NULL");
  assert_status(cucore_memcpy_strided(dev, b + 2, cols, a, rows, shape, 2, 4, NULL),
                CUCORE_ARG_ALIGNMENT);
  /* 16 x 32 floats with rows 70 apart: (15 x 70 + 32) x 4 = 4328 bytes, past a 4096 one. */
  int64_t wide[2] = {70, 1};
  assert_status(cucore_memcpy_strided(dev, b, cols, a, wide, shape, 2, 4, NULL),
                CUCORE_OUT_OF_BOUNDS);
  assert_contains(cucore_last_error(), "source");
  /* A negative stride reaches below the start. */
  int64_t back[2] = {32, -1};
  assert_status(cucore_memcpy_strided(dev, b, cols, a, back, shape, 2, 4, NULL),
                CUCORE_OUT_OF_BOUNDS);
  assert_ok(cucore_memcpy_strided(dev, b, cols, a + 124, back, shape, 2, 4, NULL));
  /* The same buffer on both sides. */
  assert_status(cucore_memcpy_strided(dev, a + 1024, cols, a, rows, shape, 2, 4, NULL),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "overlap");
}

static void dense_is_a_copy_and_others_a_kernel(void **state) {
  (void)state;
  unsigned char in[2048], out[2048];
  for (int i = 0; i < 2048; i++) in[i] = (unsigned char)(i * 7);
  assert_ok(cucore_memcpy_htod(dev, a, in, sizeof in, NULL));
  uint64_t shape[3] = {4, 16, 8};
  int64_t dense[3] = {128, 8, 1};
  long before = fake_launches();
  assert_ok(cucore_memcpy_strided(dev, b, dense, a, dense, shape, 3, 4, NULL));
  assert_int_equal(fake_launches(), before); /* no kernel */
  assert_ok(cucore_memcpy_dtoh(dev, out, b, sizeof out, NULL));
  assert_memory_equal(in, out, sizeof in);
  int64_t perm[3] = {1, 32, 4}; /* another layout: the kernel */
  assert_ok(cucore_memcpy_strided(dev, b, perm, a, dense, shape, 3, 4, NULL));
  assert_int_equal(fake_launches(), before + 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(refusals_name_what_is_wrong),
      cmocka_unit_test(dense_is_a_copy_and_others_a_kernel),
  };
  return cmocka_run_group_tests(tests, open_fake, close_fake);
}
