/* gpu_copy_strided.c -- layout conversions on a real GPU (label gpu), each against the CPU: a
 * 37 x 53 float matrix transposed, a 3D permutation with one axis flipped (a negative stride)
 * of 16-byte elements, both on a stream and without one; a dense copy; and a footprint past
 * its allocation refused with the destination left alone. */
#include "gpu_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static cucore_device *dev;
static cucore_stream *s;

static int setup(void **state) {
  (void)state;
  if (cucore_device_open(0, &dev) != CUCORE_OK) return -1;
  return cucore_stream_create(dev, CUCORE_STREAM_NON_BLOCKING, 0, &s) == CUCORE_OK ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  cucore_stream_destroy(s);
  return cucore_device_close(dev) == CUCORE_OK ? 0 : -1;
}

static void transpose(void **state) {
  (void)state;
  enum { R = 37, C = 53 };
  float in[R * C], out[R * C];
  for (int i = 0; i < R * C; i++) in[i] = (float)i * 0.5f - 3.0f;
  cucore_devptr a = 0, b = 0;
  assert_ok(cucore_mem_alloc(dev, sizeof in, &a));
  assert_ok(cucore_mem_alloc(dev, sizeof in, &b));
  assert_ok(cucore_memcpy_htod(dev, a, in, sizeof in, NULL));
  uint64_t shape[2] = {R, C};
  int64_t rows[2] = {C, 1}, cols[2] = {1, R};
  assert_ok(cucore_memcpy_strided(dev, b, cols, a, rows, shape, 2, 4, s));
  assert_ok(cucore_stream_synchronize(s));
  assert_ok(cucore_memcpy_dtoh(dev, out, b, sizeof out, NULL));
  for (int r = 0; r < R; r++)
    for (int c = 0; c < C; c++)
      if (out[c * R + r] != in[r * C + c])
        fail_msg("transpose: out[%d][%d] = %g, the CPU says %g", c, r, out[c * R + r],
                 in[r * C + c]);
  print_message("37 x 53 floats transposed on the device: every element matches the CPU\n");
  /* A dense copy, and a footprint past the end refused with the destination unchanged. */
  assert_ok(cucore_memcpy_strided(dev, b, rows, a, rows, shape, 2, 4, NULL));
  assert_ok(cucore_memcpy_dtoh(dev, out, b, sizeof out, NULL));
  assert_memory_equal(in, out, sizeof in);
  uint64_t big[2] = {R + 1, C};
  assert_int_equal(cucore_memcpy_strided(dev, b, cols, a, rows, big, 2, 4, NULL),
                   CUCORE_OUT_OF_BOUNDS);
  assert_ok(cucore_memcpy_dtoh(dev, out, b, sizeof out, NULL));
  assert_memory_equal(in, out, sizeof in);
  cucore_mem_free(dev, a);
  cucore_mem_free(dev, b);
}

typedef struct quad {
  int32_t v[4];
} quad;

static void permute_and_flip_16_byte_elements(void **state) {
  (void)state;
  enum { X = 5, Y = 7, Z = 9, NE = X * Y * Z };
  quad *in = malloc(sizeof(quad) * NE), *out = malloc(sizeof(quad) * NE);
  for (int i = 0; i < NE; i++)
    for (int j = 0; j < 4; j++) in[i].v[j] = i * 4 + j;
  cucore_devptr a = 0, b = 0;
  assert_ok(cucore_mem_alloc(dev, sizeof(quad) * NE, &a));
  assert_ok(cucore_mem_alloc(dev, sizeof(quad) * NE, &b));
  assert_ok(cucore_memcpy_htod(dev, a, in, sizeof(quad) * NE, NULL));
  uint64_t shape[3] = {X, Y, Z};       /* source is [x][y][z], dense */
  int64_t src[3] = {Y * Z, Z, 1};
  int64_t dst[3] = {-1, Z * X, X};     /* dest is [y][z][x], x reversed */
  assert_ok(cucore_memcpy_strided(dev, b + (X - 1) * sizeof(quad), dst, a, src, shape, 3, 16,
                                  NULL));
  assert_ok(cucore_memcpy_dtoh(dev, out, b, sizeof(quad) * NE, NULL));
  for (int x = 0; x < X; x++)
    for (int y = 0; y < Y; y++)
      for (int z = 0; z < Z; z++) {
        const quad *want = &in[(x * Y + y) * Z + z];
        const quad *got = &out[(y * Z + z) * X + (X - 1 - x)];
        if (memcmp(want, got, sizeof *want))
          fail_msg("permute: element (%d, %d, %d) is %d, the CPU says %d", x, y, z, got->v[0],
                   want->v[0]);
      }
  print_message("%d x %d x %d 16-byte elements permuted with a flipped axis: all match\n", X, Y,
                Z);
  free(in);
  free(out);
  cucore_mem_free(dev, a);
  cucore_mem_free(dev, b);
}

int main(void) {
  if (!cucore_test_have_gpu()) return CUCORE_TEST_SKIP;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(transpose),
      cmocka_unit_test(permute_and_flip_16_byte_elements),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
