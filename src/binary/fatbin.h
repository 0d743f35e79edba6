/*
 * binary/fatbin.h -- fatbin containers: their entries, choosing one for an arch, and their
 * decompression (fatbin.c).
 */
#ifndef CUCORE_BINARY_FATBIN_H
#define CUCORE_BINARY_FATBIN_H

#include "binary/reader.h"

/* ---- fatbin (fatbin.c) ----------------------------------------------------------------------- */

typedef struct cc_fatbin {
  cucore_fatbin_entry *entries;
  uint64_t *compressed_sizes; /* per entry: bytes of compressed data (0 when stored plain) */
  uint32_t count;
  const uint8_t *base; /* the buffer the entries' offsets refer to (not owned) */
  size_t size;
} cc_fatbin;

/* Lists the entries of the fatbin container at [start, start + len) of `base` (`size` bytes),
 * or of several containers back to back (as in a host object's .nv_fatbin section). Entry
 * offsets count from `base`. Decompresses nothing. */
cucore_status cc_fatbin_parse(const uint8_t *base, size_t size, uint64_t start, uint64_t len,
                              cc_fatbin *out);
void cc_fatbin_free(cc_fatbin *f);
/* Index of the entry to use on `arch` (0: the newest cubin, else the newest PTX): an exact
 * cubin, else the newest compatible cubin of the same major version, else the newest PTX the
 * arch can JIT. CUCORE_NOT_FOUND lists what the fatbin holds. LTO-IR is never chosen. */
cucore_status cc_fatbin_select(const cc_fatbin *f, int arch, uint32_t *index);
/* The bytes of entry `index`, decompressed when stored compressed. *owned is set to 1 when
 * *out was malloc'd (the caller frees it), 0 when it points into the fatbin's buffer. */
cucore_status cc_fatbin_entry_bytes(const cc_fatbin *f, uint32_t index, const uint8_t **out,
                                    size_t *size, int *owned);
/* The same, recording no failure (for optional work). */
cucore_status cc_fatbin_entry_bytes_quiet(const cc_fatbin *f, uint32_t index, const uint8_t **out,
                                          size_t *size, int *owned);

/* ---- tests only ---- */
/* Exported for tests/test_reader_fatbin.c and tests/fuzz/fuzz_reader.c; fatbin.c's entry
 * extraction uses it. LZ4 block decompression (fatbin flag 0x2000): exactly `dst_len` bytes
 * must come out of exactly `src_len` bytes of input. */
cucore_status cc_lz4_decompress(const uint8_t *src, size_t src_len, uint8_t *dst, size_t dst_len);

#endif /* CUCORE_BINARY_FATBIN_H */
