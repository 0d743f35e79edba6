/*
 * binary/elf.h -- ELF64 little-endian section tables, checked (elf.c).
 */
#ifndef CUCORE_BINARY_ELF_H
#define CUCORE_BINARY_ELF_H

#include "binary/reader.h"

/* Section types this reader uses. */
#define CC_SHT_SYMTAB 2
#define CC_SHT_STRTAB 3
#define CC_SHT_NOBITS 8

/* ---- ELF64 little-endian section tables (elf_cubin.c) ----------------------------------------- */

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
