/* test_cache_entry_format.c -- the cache entry's reference checksum and format version, and the
 * one little-endian helper (base/le.h) every binary reader and writer uses.
 *
 * The checksum is XXH3_64bits with seed 0: its answers must be the published ones of xxHash's
 * own sanity check (cli/xsum_sanity_check.c, XSUM_XXH3_testdata, seed 0, over the buffer that
 * XSUM_fillTestBuffer makes). An entry of format 1 (the home-grown sum) must miss. */
#include "support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/le.h"
#include "compile/cache.h"

#define PRIME32 2654435761u
#define PRIME64 11400714785074694797ull

/* XSUM_fillTestBuffer: byte i is the top byte of PRIME32 * PRIME64^i. */
static void fill_test_buffer(unsigned char *buf, size_t len) {
  uint64_t gen = PRIME32;
  for (size_t i = 0; i < len; i++) {
    buf[i] = (unsigned char)(gen >> 56);
    gen *= PRIME64;
  }
}

static void checksum_is_xxh3_64(void **state) {
  (void)state;
  static const struct {
    size_t len;
    uint64_t hash;
  } vec[] = {
      {0, 0x2D06800538D394C2ull},    {1, 0xC44BDFF4074EECDBull},    {6, 0x27B56A84CD2D7325ull},
      {12, 0xA713DAF0DFBB77E7ull},   {24, 0xA3FE70BF9D3510EBull},   {48, 0x397DA259ECBA1F11ull},
      {80, 0xBCDEFBBB2C47C90Aull},   {195, 0xCD94217EE362EC3Aull},  {403, 0xCDEB804D65C6DEA4ull},
      {512, 0x617E49599013CB6Bull},  {2048, 0xDD59E2C3A5F038E0ull}, {2240, 0x6E73A90539CF2948ull},
      {2367, 0xCB37AEB9E5D361EDull},
  };
  unsigned char *buf = malloc(2367 + 1);
  assert_non_null(buf);
  fill_test_buffer(buf, 2367);
  for (size_t i = 0; i < sizeof vec / sizeof vec[0]; i++) {
    uint64_t got = cc_cache_checksum(buf, vec[i].len);
    if (got != vec[i].hash)
      fail_msg("XXH3_64bits of %zu test bytes: got 0x%016llx, the reference is 0x%016llx",
               vec[i].len, (unsigned long long)got, (unsigned long long)vec[i].hash);
  }
  /* The same bytes at an odd address give the same sum (no aligned-load assumption). */
  memmove(buf + 1, buf, 2367);
  assert_true(cc_cache_checksum(buf + 1, 2367) == 0xCB37AEB9E5D361EDull);
  free(buf);
}

static unsigned char *sample_entry(const unsigned char *key, size_t *size) {
  char cubin[] = "\x7f"
                 "ELF pretend cubin";
  cc_cache_record rec = {.type = CUCORE_CODE_CUBIN,
                         .arch = 90,
                         .suffix = "",
                         .producer_version = 13000,
                         .code = (unsigned char *)cubin,
                         .size = sizeof cubin};
  return cc_cache_entry_encode(key, &rec, size);
}

/* An entry whose header says format 1, with a checksum that matches its payload, misses. */
static void format_1_entry_misses(void **state) {
  (void)state;
  assert_true(CC_CACHE_FORMAT_VERSION >= 2);
  unsigned char key[CC_CACHE_KEY_BYTES];
  memset(key, 0xab, sizeof key);
  size_t size = 0;
  unsigned char *entry = sample_entry(key, &size);
  assert_non_null(entry);
  assert_int_equal(cc_le32(entry + 8), CC_CACHE_FORMAT_VERSION);
  assert_true(cc_le64(entry + 56) ==
              cc_cache_checksum(entry + CC_CACHE_HEADER_BYTES, size - CC_CACHE_HEADER_BYTES));
  cc_cache_record back;
  char why[256];
  assert_int_equal(cc_cache_entry_decode(entry, size, key, &back, why, sizeof why), 0);
  cc_cache_record_free(&back);

  cc_le_put32(entry + 8, 1);
  assert_int_equal(cc_cache_entry_decode(entry, size, key, &back, why, sizeof why), -1);
  char expect[64];
  snprintf(expect, sizeof expect, "format version 1, expected %u", CC_CACHE_FORMAT_VERSION);
  assert_non_null(strstr(why, expect));
  free(entry);
}

/* cc_le* read and write little-endian at any address, whatever the host's byte order. */
static void le_helpers_round_trip(void **state) {
  (void)state;
  unsigned char b[17] = {0};
  const unsigned char bytes[8] = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x88};
  memcpy(b + 1, bytes, 8);
  assert_int_equal(cc_le16(b + 1), 0x0201);
  assert_int_equal(cc_le32(b + 1), 0x04030201u);
  assert_true(cc_le64(b + 1) == 0x8807060504030201ull);
  memset(b, 0, sizeof b);
  cc_le_put16(b + 3, 0xbeef);
  cc_le_put32(b + 5, 0xdeadbeefu);
  cc_le_put64(b + 9, 0x0123456789abcdefull);
  const unsigned char want[17] = {0,    0,    0,    0xef, 0xbe, 0xef, 0xbe, 0xad, 0xde,
                                  0xef, 0xcd, 0xab, 0x89, 0x67, 0x45, 0x23, 0x01};
  assert_memory_equal(b, want, sizeof want);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(checksum_is_xxh3_64),
      cmocka_unit_test(format_1_entry_misses),
      cmocka_unit_test(le_helpers_round_trip),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
