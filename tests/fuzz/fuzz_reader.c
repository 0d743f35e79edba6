/*
 * fuzz_reader.c -- libFuzzer target for the offline binary reader: code-type detection,
 * cucore_binary_open with every code type and a few arches, every accessor on what opened
 * (kernels, lookups by name, fatbin entries, extraction with decompression, attaching the
 * input as PTX), and the LZ4 decoder on its own. Every name the reader hands out is also put
 * through the command's terminal filter and JSON writer (tools/text.c, tools/json_write.c),
 * which must give text without control characters and valid UTF-8 whatever the bytes.
 *
 * Built with -DCUCORE_FUZZ=ON and clang (tests/fuzz/CMakeLists.txt); run by
 * scripts/fuzz-reader.sh.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "binary/binary.h"
#include "cucore.h"

#include "../../tools/json_write.c"
#include "../../tools/text.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* 1 when b[0..n) is valid UTF-8 with no control character but '\n' and '\t' (C1 included). */
static int safe_text(const unsigned char *b, size_t n) {
  for (size_t i = 0; i < n;) {
    int len = text_utf8_len(b + i, n - i);
    if (len <= 0) return 0;
    if (len == 1 && ((b[i] < 0x20 && b[i] != '\n' && b[i] != '\t') || b[i] == 0x7f)) return 0;
    if (len == 2 && b[i] == 0xc2 && b[i + 1] <= 0x9f) return 0;
    i += (size_t)len;
  }
  return 1;
}

/* A name from the binary, as `cucore inspect` prints it on a terminal and in JSON. */
static void check_printable(const char *name) {
  if (!name) return;
  size_t n = strlen(name);
  char *out = malloc(4 * n + 1);
  size_t used = 0;
  unsigned long long escaped = 0;
  size_t o = text_escape((const unsigned char *)name, n, out, &used, &escaped, 1);
  if (used != n || !safe_text((const unsigned char *)out, o)) abort();
  free(out);
  char *json = NULL;
  size_t jn = 0;
  FILE *f = open_memstream(&json, &jn);
  if (!f) return;
  json_out j = {f, 0, {0}, 0, 0};
  json_begin_object(&j, NULL);
  json_str(&j, "name", name);
  json_end_object(&j);
  fclose(f);
  if (!safe_text((const unsigned char *)json, jn)) abort();
  free(json);
}

static void exercise(const cucore_binary *bin, const uint8_t *data, size_t size) {
  cucore_binary_info info;
  uint32_t count;
  if (cucore_binary_get_info(bin, &info) != CUCORE_OK) abort();
  if (cucore_binary_get_kernel_count(bin, &count) != CUCORE_OK || count != info.kernel_count)
    abort();
  for (uint32_t i = 0; i < info.kernel_count; i++) {
    const cucore_kernel_info *k, *f;
    if (cucore_binary_get_kernel(bin, i, &k) != CUCORE_OK) abort();
    if (cucore_binary_find_kernel(bin, k->name, &f) != CUCORE_OK) abort();
    check_printable(k->name);
    check_printable(k->demangled);
    if (k->demangled) cucore_binary_find_kernel(bin, k->demangled, &f);
    uint64_t sum = 0;
    for (uint32_t p = 0; p < k->param_count; p++) {
      if ((uint64_t)k->params[p].offset + k->params[p].size > k->param_bytes) abort();
      sum += k->params[p].size;
    }
    (void)sum;
  }
  const cucore_kernel_info *none;
  cucore_binary_find_kernel(bin, "no such kernel", &none);
  for (uint32_t i = 0; i < info.fatbin_entry_count; i++) {
    cucore_fatbin_entry e;
    if (cucore_binary_get_fatbin_entry(bin, i, &e) != CUCORE_OK) abort();
    size_t n = 0;
    cucore_binary_fatbin_extract(bin, i, NULL, 0, &n);
    if (n <= ((size_t)1 << 22)) {
      void *buf = malloc(n ? n : 1);
      cucore_binary_fatbin_extract(bin, i, buf, n, &n);
      free(buf);
    }
  }
  uint32_t idx;
  cucore_binary_fatbin_select(bin, 90, &idx);
  /* the input read as PTX, merged into what opened */
  uint32_t matched;
  cucore_binary_attach_ptx((cucore_binary *)bin, (const char *)data, size, &matched);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  cucore_code_type type;
  cucore_code_type_detect(data, size, &type);

  /* The LZ4 decoder alone: "LZ4" + u16 output size + block. */
  if (size >= 5 && memcmp(data, "LZ4", 3) == 0) {
    size_t out = (size_t)(data[3] | data[4] << 8);
    uint8_t *dst = malloc(out ? out : 1);
    cc_begin();
    cc_lz4_decompress(data + 5, size - 5, dst, out);
    free(dst);
    return 0;
  }

  static const cucore_code_type types[] = {CUCORE_CODE_AUTO, CUCORE_CODE_CUBIN, CUCORE_CODE_FATBIN,
                                           CUCORE_CODE_PTX, CUCORE_CODE_OBJECT};
  static const int arches[] = {0, 80, 90, 120};
  int arch = arches[size ? data[size - 1] % 4 : 0];
  for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
    cucore_binary *bin = NULL;
    cucore_status st = cucore_binary_open(data, size, types[t], arch, &bin);
    if (st == CUCORE_OK) {
      if (!bin) abort();
      exercise(bin, data, size);
    } else if (bin) {
      abort(); /* a failed constructor leaves NULL */
    } else if (cucore_last_error()[0] == '\0') {
      abort(); /* every failure says why */
    }
    cucore_binary_destroy(bin);
  }
  return 0;
}
