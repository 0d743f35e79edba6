/* gpu_tune_compare.c -- the tune's device-side comparison (src/tune/compare.c, label gpu): two
 * buffers of an odd size (a 16-byte-aligned body and a tail), equal, then one byte changed at
 * a time at offsets drawn at random (and the first, the last, the body's last): the offset the
 * device finds must be the one a host comparison finds. Misaligned starts take the byte path.
 * Two changed bytes: the lower offset wins. */
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

int main(void) {
  if (!cucore_test_have_gpu()) return CUCORE_TEST_SKIP;
  const struct CMUnitTest tests[] = {cmocka_unit_test(first_differences_match_the_host)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
