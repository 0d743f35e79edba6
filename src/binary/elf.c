/* elf.c -- ELF64 little-endian section tables, every section and name checked to lie inside
 * the file. */
#define _GNU_SOURCE
#include "binary/elf.h"

#include <stdio.h>
#include <stdlib.h>

/* ---- ELF64 section tables ---------------------------------------------------------------- */

cucore_status cc_elf_open(const uint8_t *d, size_t n, const char *what, cc_elf *out) {
  memset(out, 0, sizeof *out);
  if (n < 64)
    return cc_fail(CUCORE_INVALID_BINARY,
                   "%s: %zu bytes is shorter than the 64-byte ELF64 header", what, n);
  if (memcmp(d, "\x7f" "ELF", 4) != 0)
    return cc_fail(CUCORE_INVALID_BINARY, "%s: no ELF magic (7f 45 4c 46) at offset 0", what);
  if (d[4] != 2)
    return cc_fail(CUCORE_INVALID_BINARY,
                   "%s: ELF class %u at offset 4; only 64-bit ELF (class 2) is read", what, d[4]);
  if (d[5] != 1)
    return cc_fail(CUCORE_INVALID_BINARY,
                   "%s: ELF data encoding %u at offset 5; only little-endian (1) is read", what,
                   d[5]);
  uint64_t shoff = cc_le64(d + 0x28);
  uint32_t shentsize = cc_le16(d + 0x3a), shnum = cc_le16(d + 0x3c), shstrndx = cc_le16(d + 0x3e);
  if (shoff == 0)
    return cc_fail(CUCORE_INVALID_BINARY, "%s: no section table (e_shoff is 0)", what);
  if (shentsize < 64)
    return cc_fail(CUCORE_INVALID_BINARY,
                   "%s: section header size %u (e_shentsize at offset 0x3a) is smaller than the "
                   "64 bytes of an ELF64 section header",
                   what, shentsize);
  if (!cc_range_ok(shoff, 64, n))
    return cc_fail(CUCORE_INVALID_BINARY,
                   "%s: the section table (e_shoff %llu) starts past the end of the file (%zu "
                   "bytes)",
                   what, (unsigned long long)shoff, n);
  uint64_t count = shnum;
  if (count == 0) count = cc_le64(d + shoff + 0x20); /* extended numbering: sh_size of section 0 */
  if (shstrndx == 0xffff) shstrndx = cc_le32(d + shoff + 0x28); /* SHN_XINDEX: sh_link */
  if (count == 0)
    return cc_fail(CUCORE_INVALID_BINARY, "%s: the section table is empty", what);
  if (count > n / shentsize || !cc_range_ok(shoff, count * shentsize, n))
    return cc_fail(CUCORE_INVALID_BINARY,
                   "%s: the section table (%llu sections of %u bytes at offset %llu) extends "
                   "past the end of the file (%zu bytes)",
                   what, (unsigned long long)count, shentsize, (unsigned long long)shoff, n);
  if (shstrndx >= count)
    return cc_fail(CUCORE_INVALID_BINARY,
                   "%s: the section-name table index %u (e_shstrndx) is out of range: there are "
                   "%llu sections",
                   what, shstrndx, (unsigned long long)count);
  cc_elf_section *sec = cc_calloc((size_t)count, sizeof *sec, "ELF section table");
  if (!sec) return CUCORE_HOST_OUT_OF_MEMORY;
  uint32_t *name_offs = cc_calloc((size_t)count, sizeof *name_offs, "ELF section names");
  if (!name_offs) {
    free(sec);
    return CUCORE_HOST_OUT_OF_MEMORY;
  }
  for (uint64_t i = 0; i < count; i++) {
    const uint8_t *h = d + shoff + i * shentsize;
    name_offs[i] = cc_le32(h);
    sec[i].type = cc_le32(h + 4);
    sec[i].flags = cc_le64(h + 8);
    sec[i].offset = cc_le64(h + 0x18);
    sec[i].size = cc_le64(h + 0x20);
    sec[i].link = cc_le32(h + 0x28);
    sec[i].info = cc_le32(h + 0x2c);
    sec[i].entsize = cc_le64(h + 0x38);
    sec[i].name = "";
  }
  cucore_status st = CUCORE_OK;
  /* The program header table and the segments it describes lie inside the file too. */
  uint64_t phoff = cc_le64(d + 0x20);
  uint32_t phentsize = cc_le16(d + 0x36), phnum = cc_le16(d + 0x38);
  if (phnum) {
    if (phentsize < 56 || phnum > n / phentsize || !cc_range_ok(phoff, (uint64_t)phnum * phentsize, n)) {
      st = cc_fail(CUCORE_INVALID_BINARY,
                   "%s: the program header table (%u entries of %u bytes at offset %llu) extends "
                   "past the end of the file (%zu bytes) or has entries under 56 bytes",
                   what, phnum, phentsize, (unsigned long long)phoff, n);
      goto done;
    }
    for (uint32_t i = 0; i < phnum; i++) {
      const uint8_t *ph = d + phoff + (uint64_t)i * phentsize;
      uint64_t off = cc_le64(ph + 8), filesz = cc_le64(ph + 0x20);
      if (!cc_range_ok(off, filesz, n)) {
        st = cc_fail(CUCORE_INVALID_BINARY,
                     "%s: segment %u extends past the end of the file: offset %llu + size %llu > "
                     "%zu bytes",
                     what, i, (unsigned long long)off, (unsigned long long)filesz, n);
        goto done;
      }
    }
  }
  const cc_elf_section *names = &sec[shstrndx];
  if (names->type == CC_SHT_NOBITS || !cc_range_ok(names->offset, names->size, n)) {
    st = cc_fail(CUCORE_INVALID_BINARY,
                 "%s: section %u (the section-name table) extends past the end of the file: "
                 "offset %llu + size %llu > %zu bytes",
                 what, shstrndx, (unsigned long long)names->offset,
                 (unsigned long long)names->size, n);
    goto done;
  }
  /* A name is terminated inside the table when a NUL follows it there: when its offset is
   * at most that of the table's last NUL (found once, so this stays linear). */
  uint64_t last_nul = cc_last_nul(d + names->offset, names->size);
  uint64_t name_bytes = 0;
  for (uint64_t i = 0; i < count; i++) {
    uint32_t no = name_offs[i];
    if (no == 0 && names->size == 0) continue;
    if (no >= names->size || last_nul == UINT64_MAX || no > last_nul) {
      st = cc_fail(CUCORE_INVALID_BINARY,
                   "%s: section %llu: its name (offset %u) is not a terminated string inside the "
                   "section-name table (section %u, %llu bytes)",
                   what, (unsigned long long)i, no, shstrndx, (unsigned long long)names->size);
      goto done;
    }
    sec[i].name = (const char *)d + names->offset + no;
    /* Names that overlap each other many times over would make every name comparison
     * expensive; real files never come near this bound. */
    name_bytes += strnlen(sec[i].name, CC_NAME_BYTES_MAX(n) + 1);
    if (name_bytes > CC_NAME_BYTES_MAX(n)) {
      st = cc_fail(CUCORE_INVALID_BINARY,
                   "%s: the section names add up to more than %llu bytes in a file of %zu bytes: "
                   "they overlap far more than any real file's",
                   what, (unsigned long long)CC_NAME_BYTES_MAX(n), n);
      goto done;
    }
  }
  for (uint64_t i = 0; i < count; i++) {
    /* Every section but NOBITS ones, SHT_NULL included: readers find sections by name. */
    if (sec[i].type == CC_SHT_NOBITS) continue;
    if (!cc_range_ok(sec[i].offset, sec[i].size, n)) {
      st = cc_fail(CUCORE_INVALID_BINARY,
                   "%s: section %llu (%.160s) extends past the end of the file: offset %llu + size "
                   "%llu > %zu bytes",
                   what, (unsigned long long)i, sec[i].name, (unsigned long long)sec[i].offset,
                   (unsigned long long)sec[i].size, n);
      goto done;
    }
  }
done:
  free(name_offs);
  if (st != CUCORE_OK) {
    free(sec);
    return st;
  }
  out->data = d;
  out->size = n;
  out->type = cc_le16(d + 0x10);
  out->machine = cc_le16(d + 0x12);
  out->osabi = d[7];
  out->abi_version = d[8];
  out->flags = cc_le32(d + 0x30);
  out->sections = sec;
  out->count = (uint32_t)count;
  return CUCORE_OK;
}

void cc_elf_close(cc_elf *e) {
  free(e->sections);
  memset(e, 0, sizeof *e);
}

const cc_elf_section *cc_elf_find(const cc_elf *e, const char *name) {
  for (uint32_t i = 0; i < e->count; i++)
    if (strcmp(e->sections[i].name, name) == 0) return &e->sections[i];
  return NULL;
}
