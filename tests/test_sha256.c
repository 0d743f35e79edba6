/* test_sha256.c -- SHA-256 against FIPS 180-4 vectors and against sha256sum. */
#include "support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/sha256.h"

static void fips_vectors(void **state) {
  (void)state;
  char hex[65];
  cc_sha256_hex("abc", 3, hex);
  assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  cc_sha256_hex("", 0, hex);
  assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  cc_sha256_hex(two, strlen(two), hex);
  assert_string_equal(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

/* Piecewise updates of odd sizes give the one-shot digest, and sha256sum agrees. */
static void streaming_matches_sha256sum(void **state) {
  (void)state;
  size_t n = 100003;
  unsigned char *buf = malloc(n);
  for (size_t i = 0; i < n; i++) buf[i] = (unsigned char)(i * 7 + (i >> 8));
  char one[65], parts[65];
  cc_sha256_hex(buf, n, one);
  cc_sha256 s;
  cc_sha256_init(&s);
  for (size_t off = 0, step = 1; off < n; off += step, step = step * 3 % 97 + 1)
    cc_sha256_update(&s, buf + off, off + step > n ? n - off : step);
  unsigned char d[32];
  cc_sha256_final(&s, d);
  cc_hex(d, 32, parts);
  assert_string_equal(one, parts);
  char path[] = "/tmp/cucore_sha_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  FILE *f = fdopen(fd, "wb");
  fwrite(buf, 1, n, f);
  fclose(f);
  char cmd[128], *out = NULL;
  snprintf(cmd, sizeof cmd, "sha256sum %s", path);
  if (cucore_test_run(cmd, &out) == 0) assert_true(strncmp(out, one, 64) == 0);
  free(out);
  remove(path);
  free(buf);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(fips_vectors),
                                     cmocka_unit_test(streaming_matches_sha256sum)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
