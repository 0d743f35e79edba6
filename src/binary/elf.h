/*
 * binary/elf.h -- ELF64 little-endian section tables, checked (elf.c).
 */
#ifndef CUCORE_BINARY_ELF_H
#define CUCORE_BINARY_ELF_H

#include "binary/reader.h"

#include <elf.h>    /* the format's names: Elf64_Ehdr, Elf64_Shdr, Elf64_Sym, SHT_*, STT_* */
#include <stddef.h> /* offsetof */

/* ---- reading ELF64 fields -------------------------------------------------------------------- */

/* Field `field` of the ELF structure `type` (Elf64_Ehdr, Elf64_Shdr, Elf64_Phdr, Elf64_Sym)
 * that starts at p, read little-endian at its offset and width. The structures give only the
 * layout: the file is never cast to them (fields may be unaligned, and the input is hostile).
 * The caller checks first that the field lies inside the buffer (usually by checking the
 * whole structure). */
#define CC_ELF_GET(p, type, field) \
  cc_elf_get((p) + offsetof(type, field), sizeof(((type *)0)->field))

static inline uint64_t cc_elf_get(const uint8_t *p, size_t width) {
  switch (width) {
  case 1: return p[0];
  case 2: return cc_le16(p);
  case 4: return cc_le32(p);
  default: return cc_le64(p);
  }
}

/* ---- ELF64 little-endian section tables (elf.c) ---------------------------------------------- */

typedef struct cc_elf_section {
  const char *name; /* NUL-terminated inside the section-name table ("" when it has none) */
  uint32_t type, link, info;
  uint64_t flags, offset, size, entsize;
} cc_elf_section;

typedef struct cc_elf {
  const uint8_t *data;
  size_t size;
  uint16_t type, machine;
  uint8_t osabi, abi_version;
  uint32_t flags;
  cc_elf_section *sections;
  uint32_t count;
} cc_elf;

/* Reads an ELF64 little-endian header and its section table, checking that every section
 * with contents lies inside the file and every name inside the name table. `what` ("cubin",
 * "host object") begins each message. On failure nothing is left to free. */
cucore_status cc_elf_open(const uint8_t *data, size_t size, const char *what, cc_elf *out);
void cc_elf_close(cc_elf *e);
/* The first section named `name`, or NULL. */
const cc_elf_section *cc_elf_find(const cc_elf *e, const char *name);

#endif /* CUCORE_BINARY_ELF_H */
