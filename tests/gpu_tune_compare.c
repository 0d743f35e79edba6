/* gpu_tune_compare.c -- the tune's device-side comparison (src/tune/compare.c, label gpu): two
 * buffers of an odd size (a 16-byte-aligned body and a tail), equal, then one byte changed at
 * a time at offsets drawn at random (and the first, the last, the body's last): the offset the
 * device finds must be the one a host comparison finds. Misaligned starts take the byte path.
 * Two changed bytes: the lower offset wins. Then the count of elements outside rtol/atol, for
 * float, double, half and bfloat16 elements near the tolerance's edge (and NaN, infinities,
 * signed zeros, denormals): the device's count must be cucore_compare_elements' on the host,
 * for several tolerances. */
#include "gpu_support.h"

#include "tune/compare.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BYTES (((size_t)16 << 20) + 7)

static size_t host_first(const unsigned char *a, const unsigned char *b, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (a[i] != b[i]) return i;
  return n;
}

static void first_differences_match_the_host(void **state) {
  (void)state;
  cucore_device *dev = NULL;
  cucore_stream *s = NULL;
  cc_tune_cmp *cmp = NULL;
  assert_ok(cucore_device_open(0, &dev));
  assert_ok(cucore_stream_create(dev, CUCORE_STREAM_NON_BLOCKING, 0, &s));
  assert_ok(cc_tune_cmp_create(dev, NULL, &cmp));
  unsigned char *a = malloc(BYTES), *b = malloc(BYTES);
  assert_non_null(a);
  assert_non_null(b);
  srand(42);
  for (size_t i = 0; i < BYTES; i++) a[i] = b[i] = (unsigned char)rand();
  cucore_devptr da = 0, db = 0;
  assert_ok(cucore_mem_alloc(dev, BYTES, &da));
  assert_ok(cucore_mem_alloc(dev, BYTES, &db));
  assert_ok(cucore_memcpy_htod(dev, da, a, BYTES, NULL));
  size_t first = 0, checked = 0;
  size_t at[24] = {0, BYTES - 1, BYTES / 16 * 16 - 1, BYTES / 16 * 16, 15, 16};
  for (size_t i = 6; i < 24; i++) at[i] = (size_t)rand() % BYTES;
  for (size_t i = 0; i < 24; i++) {
    memcpy(b, a, BYTES);
    b[at[i]] ^= (unsigned char)(1u << (i % 8));
    if (i % 3 == 0) b[(at[i] + BYTES / 2) % BYTES] ^= 0x80; /* a second change */
    assert_ok(cucore_memcpy_htod(dev, db, b, BYTES, NULL));
    assert_ok(cc_tune_cmp_run(cmp, s, da, db, BYTES, &first));
    assert_int_equal(first, host_first(a, b, BYTES));
    assert_ok(cc_tune_cmp_run(cmp, s, da + 1, db + 1, BYTES - 1, &first)); /* misaligned */
    size_t want = host_first(a + 1, b + 1, BYTES - 1);
    assert_int_equal(first, want);
    checked += 2;
  }
  assert_ok(cucore_memcpy_htod(dev, db, a, BYTES, NULL));
  assert_ok(cc_tune_cmp_run(cmp, s, da, db, BYTES, &first));
  assert_int_equal(first, BYTES);
  print_message("device comparison: %zu first differences match the host's; equal buffers of "
                "%zu bytes found equal\n",
                checked, BYTES);
  free(a);
  free(b);
  assert_ok(cucore_mem_free(dev, da));
  assert_ok(cucore_mem_free(dev, db));
  cc_tune_cmp_destroy(cmp);
  assert_ok(cucore_stream_destroy(s));
  assert_ok(cucore_device_close(dev));
}

#define ELEMS 100003

/* want[k] random bits of `size` bytes (NaN and infinity patterns included), got[k] = want[k]
 * nudged by a few units in the last place, or the same, or other bits entirely. */
static void edge_pairs(unsigned char *got, unsigned char *want, size_t size) {
  for (size_t k = 0; k < ELEMS; k++) {
    uint64_t w = 0, g;
    for (size_t j = 0; j < size; j++) w |= (uint64_t)(rand() & 0xff) << (8 * j);
    switch (rand() % 4) {
    case 0: g = w; break;
    case 1: g = w + (uint64_t)(rand() % 64) - 32; break;                /* a few ulps apart */
    case 2: g = w ^ ((uint64_t)1 << (rand() % (int)(8 * size))); break; /* one bit */
    default:
      g = 0;
      for (size_t j = 0; j < size; j++) g |= (uint64_t)(rand() & 0xff) << (8 * j);
    }
    memcpy(want + k * size, &w, size); /* little-endian: the low bytes */
    memcpy(got + k * size, &g, size);
  }
}

static void tolerance_counts_match_the_host(void **state) {
  (void)state;
  cucore_device *dev = NULL;
  cucore_stream *s = NULL;
  cc_tune_cmp *cmp = NULL;
  assert_ok(cucore_device_open(0, &dev));
  assert_ok(cucore_stream_create(dev, CUCORE_STREAM_NON_BLOCKING, 0, &s));
  assert_ok(cc_tune_cmp_create(dev, NULL, &cmp));
  const struct {
    int code;
    size_t size;
  } kinds[] = {{CUCORE_DTYPE_FLOAT, 4},
               {CUCORE_DTYPE_FLOAT, 8},
               {CUCORE_DTYPE_FLOAT, 2},
               {CUCORE_DTYPE_BFLOAT, 2}};
  const double tol[][2] = {{1e-5, 1e-8}, {0, 0}, {1e-3, 0}, {0, 1e-30}, {0.5, 1e-3}};
  unsigned char *got = malloc(ELEMS * 8), *want = malloc(ELEMS * 8);
  assert_non_null(got);
  assert_non_null(want);
  cucore_devptr dg = 0, dw = 0;
  assert_ok(cucore_mem_alloc(dev, ELEMS * 8, &dg));
  assert_ok(cucore_mem_alloc(dev, ELEMS * 8, &dw));
  srand(7);
  for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
    size_t size = kinds[k].size;
    int kind = cc_tune_cmp_kind(kinds[k].code, size);
    assert_true(kind >= 0);
    edge_pairs(got, want, size);
    assert_ok(cucore_memcpy_htod(dev, dg, got, ELEMS * size, NULL));
    assert_ok(cucore_memcpy_htod(dev, dw, want, ELEMS * size, NULL));
    for (size_t t = 0; t < sizeof tol / sizeof *tol; t++) {
      cucore_compare_result host;
      size_t outside = 0;
      assert_ok(cucore_compare_elements(got, want, ELEMS, kinds[k].code, size, tol[t][0], tol[t][1],
                                        NULL, 0, &host));
      assert_ok(cc_tune_cmp_within(cmp, s, dg, dw, ELEMS, kind, tol[t][0], tol[t][1], &outside));
      printf("tolerance count: kind %d (%zu bytes), rtol %g atol %g: device %zu, host %zu of %d\n",
             kind, size, tol[t][0], tol[t][1], outside, host.mismatches, ELEMS);
      assert_int_equal(outside, host.mismatches);
    }
  }
  assert_int_equal(cc_tune_cmp_kind(CUCORE_DTYPE_INT, 4), -1);
  free(got);
  free(want);
  assert_ok(cucore_mem_free(dev, dg));
  assert_ok(cucore_mem_free(dev, dw));
  cc_tune_cmp_destroy(cmp);
  assert_ok(cucore_stream_destroy(s));
  assert_ok(cucore_device_close(dev));
}

int main(void) {
  if (!cucore_test_have_gpu()) return CUCORE_TEST_SKIP;
  const struct CMUnitTest tests[] = {cmocka_unit_test(first_differences_match_the_host),
                                     cmocka_unit_test(tolerance_counts_match_the_host)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
