/*
 * base/le.h -- the one little-endian load and store of every reader and writer of binary
 * formats (ELF, cubin, fatbin, the compile cache's entries): cc_le16/32/64 read an unaligned
 * little-endian field, cc_le_put16/32/64 write one. Through memcpy, which compilers turn into
 * one load or store, plus a byte swap on a big-endian host.
 */
#ifndef CUCORE_BASE_LE_H
#define CUCORE_BASE_LE_H

#include <stdint.h>
#include <string.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define CC_LE16(x) __builtin_bswap16(x)
#define CC_LE32(x) __builtin_bswap32(x)
#define CC_LE64(x) __builtin_bswap64(x)
#else
#define CC_LE16(x) (x)
#define CC_LE32(x) (x)
#define CC_LE64(x) (x)
#endif

static inline uint16_t cc_le16(const void *p) {
  uint16_t v;
  memcpy(&v, p, sizeof v);
  return CC_LE16(v);
}
static inline uint32_t cc_le32(const void *p) {
  uint32_t v;
  memcpy(&v, p, sizeof v);
  return CC_LE32(v);
}
static inline uint64_t cc_le64(const void *p) {
  uint64_t v;
  memcpy(&v, p, sizeof v);
  return CC_LE64(v);
}
static inline void cc_le_put16(void *p, uint16_t v) {
  v = CC_LE16(v);
  memcpy(p, &v, sizeof v);
}
static inline void cc_le_put32(void *p, uint32_t v) {
  v = CC_LE32(v);
  memcpy(p, &v, sizeof v);
}
static inline void cc_le_put64(void *p, uint64_t v) {
  v = CC_LE64(v);
  memcpy(p, &v, sizeof v);
}

#endif /* CUCORE_BASE_LE_H */
