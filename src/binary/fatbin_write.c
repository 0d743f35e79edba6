/*
 * fatbin_write.c -- writes a fatbin container from cubins and PTX, in the layout nvcc 13.0's
 * fatbinary writes uncompressed (see fatbin.c for the fields): a 16-byte container header,
 * then per entry a 64-byte header (80 for PTX, whose header carries an empty compile-options
 * string, as fatbinary writes it) and the data padded to 8 bytes.
 */
#include "binary/fatbin_write.h"

#include "base/le.h"

#include <stdlib.h>
#include <string.h>

static uint64_t pad8(uint64_t n) { return (n + 7) & ~(uint64_t)7; }

cucore_status cc_fatbin_write(const cc_fatbin_part *parts, int count, unsigned char **out,
                              size_t *out_size) {
  *out = NULL;
  *out_size = 0;
  uint64_t total = 0;
  for (int i = 0; i < count; i++) {
    uint64_t data = parts[i].is_ptx ? parts[i].size + 1 : parts[i].size; /* PTX with its NUL */
    total += (parts[i].is_ptx ? 80 : 64) + pad8(data);
  }
  unsigned char *buf = cc_calloc(1, (size_t)(16 + total), "a fatbin");
  if (!buf) return CUCORE_HOST_OUT_OF_MEMORY;
  cc_le_put32(buf, 0xBA55ED50u);
  cc_le_put16(buf + 4, 1);
  cc_le_put16(buf + 6, 16);
  cc_le_put64(buf + 8, total);
  unsigned char *p = buf + 16;
  for (int i = 0; i < count; i++) {
    const cc_fatbin_part *e = &parts[i];
    uint32_t hsize = e->is_ptx ? 80 : 64;
    uint64_t data = e->is_ptx ? e->size + 1 : e->size;
    cc_le_put16(p, e->is_ptx ? 1 : 2);
    cc_le_put16(p + 2, 0x0101);
    cc_le_put32(p + 4, hsize);
    cc_le_put64(p + 8, pad8(data));
    cc_le_put16(p + 24, (uint16_t)e->version_minor);
    cc_le_put16(p + 26, (uint16_t)e->version_major);
    cc_le_put32(p + 28, (uint32_t)e->arch);
    uint64_t flags = 0x1 | 0x10; /* 64-bit, Linux */
    if (e->arch_suffix == 'a') flags |= 0x100000;
    if (e->arch_suffix == 'f') flags |= 0x200000;
    cc_le_put64(p + 40, flags);
    if (e->is_ptx) {
      cc_le_put32(p + 20, 64); /* where the options block starts in the header */
      cc_le_put64(p + 64, 72); /* the options string: empty, at +72 */
    }
    memcpy(p + hsize, e->data, e->size);
    p += hsize + pad8(data);
  }
  *out = buf;
  *out_size = (size_t)(16 + total);
  return CUCORE_OK;
}
