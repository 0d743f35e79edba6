/* elf.c -- ELF64 little-endian section tables, every section and name checked to lie inside
 * the file. Fields are named as <elf.h> names them and read at their offsets (CC_ELF_GET). */
#define _GNU_SOURCE
#include "binary/elf.h"

#include <stdio.h>
#include <stdlib.h>

/* ---- ELF64 section tables ---------------------------------------------------------------- */

/* Where the section table is and how it is laid out, from the ELF header (and from section 0
 * under extended numbering). */
typedef struct shdr_table {
  uint64_t offset, count;
  uint32_t entsize, names; /* e_shentsize; e_shstrndx, the section-name table's index */
} shdr_table;

/* The identification bytes: magic, 64-bit, little-endian. */
static cucore_status check_ident(const uint8_t *d, size_t n, const char *what) {
  if (n < sizeof(Elf64_Ehdr))
    return cc_fail(CUCORE_INVALID_BINARY, "%s: %zu bytes is shorter than the 64-byte ELF64 header",
                   what, n);
  if (memcmp(d, ELFMAG, SELFMAG) != 0)
    return cc_fail(CUCORE_INVALID_BINARY, "%s: no ELF magic (7f 45 4c 46) at offset 0", what);
  if (d[EI_CLASS] != ELFCLASS64)
    return cc_fail(CUCORE_INVALID_BINARY,
                   "%s: ELF class %u at offset 4; only 64-bit ELF (class 2) is read", what,
                   d[EI_CLASS]);
  if (d[EI_DATA] != ELFDATA2LSB)
    return cc_fail(CUCORE_INVALID_BINARY,
                   "%s: ELF data encoding %u at offset 5; only little-endian (1) is read", what,
                   d[EI_DATA]);
  return CUCORE_OK;
}

/* Finds the section table (e_shoff, e_shentsize, e_shnum, e_shstrndx) and checks that it lies
 * inside the file. */
static cucore_status find_shdr_table(const uint8_t *d, size_t n, const char *what, shdr_table *t) {
  t->offset = CC_ELF_GET(d, Elf64_Ehdr, e_shoff);
  t->entsize = (uint32_t)CC_ELF_GET(d, Elf64_Ehdr, e_shentsize);
  uint32_t shnum = (uint32_t)CC_ELF_GET(d, Elf64_Ehdr, e_shnum);
  t->names = (uint32_t)CC_ELF_GET(d, Elf64_Ehdr, e_shstrndx);
  if (t->offset == 0)
    return cc_fail(CUCORE_INVALID_BINARY, "%s: no section table (e_shoff is 0)", what);
  if (t->entsize < sizeof(Elf64_Shdr))
    return cc_fail(CUCORE_INVALID_BINARY,
                   "%s: section header size %u (e_shentsize at offset 0x3a) is smaller than the "
                   "64 bytes of an ELF64 section header",
                   what, t->entsize);
  if (!cc_range_ok(t->offset, sizeof(Elf64_Shdr), n))
    return cc_fail(CUCORE_INVALID_BINARY,
                   "%s: the section table (e_shoff %llu) starts past the end of the file (%zu "
                   "bytes)",
                   what, (unsigned long long)t->offset, n);
  /* Extended numbering keeps the count in section 0's sh_size and the name table's index in
   * its sh_link. */
  const uint8_t *sh0 = d + t->offset;
  t->count = shnum != 0 ? shnum : CC_ELF_GET(sh0, Elf64_Shdr, sh_size);
  if (t->names == SHN_XINDEX) t->names = (uint32_t)CC_ELF_GET(sh0, Elf64_Shdr, sh_link);
  if (t->count == 0) return cc_fail(CUCORE_INVALID_BINARY, "%s: the section table is empty", what);
  if (t->count > n / t->entsize || !cc_range_ok(t->offset, t->count * t->entsize, n))
    return cc_fail(CUCORE_INVALID_BINARY,
                   "%s: the section table (%llu sections of %u bytes at offset %llu) extends "
                   "past the end of the file (%zu bytes)",
                   what, (unsigned long long)t->count, t->entsize, (unsigned long long)t->offset,
                   n);
  if (t->names >= t->count)
    return cc_fail(CUCORE_INVALID_BINARY,
                   "%s: the section-name table index %u (e_shstrndx) is out of range: there are "
                   "%llu sections",
                   what, t->names, (unsigned long long)t->count);
  return CUCORE_OK;
}

/* Reads every section header; names are resolved later (name_sections). */
static void read_shdrs(const uint8_t *d, const shdr_table *t, cc_elf_section *sec,
                       uint32_t *name_offs) {
  for (uint64_t i = 0; i < t->count; i++) {
    const uint8_t *h = d + t->offset + i * t->entsize;
    name_offs[i] = (uint32_t)CC_ELF_GET(h, Elf64_Shdr, sh_name);
    sec[i].type = (uint32_t)CC_ELF_GET(h, Elf64_Shdr, sh_type);
    sec[i].flags = CC_ELF_GET(h, Elf64_Shdr, sh_flags);
    sec[i].offset = CC_ELF_GET(h, Elf64_Shdr, sh_offset);
    sec[i].size = CC_ELF_GET(h, Elf64_Shdr, sh_size);
    sec[i].link = (uint32_t)CC_ELF_GET(h, Elf64_Shdr, sh_link);
    sec[i].info = (uint32_t)CC_ELF_GET(h, Elf64_Shdr, sh_info);
    sec[i].entsize = CC_ELF_GET(h, Elf64_Shdr, sh_entsize);
    sec[i].name = "";
  }
}

/* The program header table and the segments it describes lie inside the file too. */
static cucore_status check_segments(const uint8_t *d, size_t n, const char *what) {
  uint64_t phoff = CC_ELF_GET(d, Elf64_Ehdr, e_phoff);
  uint32_t phentsize = (uint32_t)CC_ELF_GET(d, Elf64_Ehdr, e_phentsize);
  uint32_t phnum = (uint32_t)CC_ELF_GET(d, Elf64_Ehdr, e_phnum);
  if (!phnum) return CUCORE_OK;
  if (phentsize < sizeof(Elf64_Phdr) || phnum > n / phentsize ||
      !cc_range_ok(phoff, (uint64_t)phnum * phentsize, n))
    return cc_fail(CUCORE_INVALID_BINARY,
                   "%s: the program header table (%u entries of %u bytes at offset %llu) extends "
                   "past the end of the file (%zu bytes) or has entries under 56 bytes",
                   what, phnum, phentsize, (unsigned long long)phoff, n);
  for (uint32_t i = 0; i < phnum; i++) {
    const uint8_t *ph = d + phoff + (uint64_t)i * phentsize;
    uint64_t off = CC_ELF_GET(ph, Elf64_Phdr, p_offset);
    uint64_t filesz = CC_ELF_GET(ph, Elf64_Phdr, p_filesz);
    if (!cc_range_ok(off, filesz, n))
      return cc_fail(CUCORE_INVALID_BINARY,
                     "%s: segment %u extends past the end of the file: offset %llu + size %llu > "
                     "%zu bytes",
                     what, i, (unsigned long long)off, (unsigned long long)filesz, n);
  }
  return CUCORE_OK;
}

/* Points every section at its name, each checked to be a terminated string inside the
 * section-name table. */
static cucore_status name_sections(const uint8_t *d, size_t n, const char *what,
                                   const shdr_table *t, cc_elf_section *sec,
                                   const uint32_t *name_offs) {
  const cc_elf_section *names = &sec[t->names];
  if (names->type == SHT_NOBITS || !cc_range_ok(names->offset, names->size, n))
    return cc_fail(CUCORE_INVALID_BINARY,
                   "%s: section %u (the section-name table) extends past the end of the file: "
                   "offset %llu + size %llu > %zu bytes",
                   what, t->names, (unsigned long long)names->offset,
                   (unsigned long long)names->size, n);
  /* A name is terminated inside the table when a NUL follows it there: when its offset is
   * at most that of the table's last NUL (found once, so this stays linear). */
  uint64_t last_nul = cc_last_nul(d + names->offset, names->size);
  uint64_t name_bytes = 0;
  for (uint64_t i = 0; i < t->count; i++) {
    uint32_t no = name_offs[i];
    if (no == 0 && names->size == 0) continue;
    if (no >= names->size || last_nul == UINT64_MAX || no > last_nul)
      return cc_fail(CUCORE_INVALID_BINARY,
                     "%s: section %llu: its name (offset %u) is not a terminated string inside "
                     "the section-name table (section %u, %llu bytes)",
                     what, (unsigned long long)i, no, t->names, (unsigned long long)names->size);
    sec[i].name = (const char *)d + names->offset + no;
    /* Names that overlap each other many times over would make every name comparison
     * expensive; real files never come near this bound. */
    name_bytes += strnlen(sec[i].name, CC_NAME_BYTES_MAX(n) + 1);
    if (name_bytes > CC_NAME_BYTES_MAX(n))
      return cc_fail(CUCORE_INVALID_BINARY,
                     "%s: the section names add up to more than %llu bytes in a file of %zu "
                     "bytes: they overlap far more than any real file's",
                     what, (unsigned long long)CC_NAME_BYTES_MAX(n), n);
  }
  return CUCORE_OK;
}

/* Every section with contents lies inside the file. */
static cucore_status check_sections(size_t n, const char *what, const cc_elf_section *sec,
                                    uint64_t count) {
  for (uint64_t i = 0; i < count; i++) {
    /* Every section but NOBITS ones, SHT_NULL included: readers find sections by name. */
    if (sec[i].type == SHT_NOBITS) continue;
    if (!cc_range_ok(sec[i].offset, sec[i].size, n))
      return cc_fail(CUCORE_INVALID_BINARY,
                     "%s: section %llu (%.160s) extends past the end of the file: offset %llu + "
                     "size %llu > %zu bytes",
                     what, (unsigned long long)i, sec[i].name, (unsigned long long)sec[i].offset,
                     (unsigned long long)sec[i].size, n);
  }
  return CUCORE_OK;
}

/* The section table once it is known to lie inside the file: read, then checked. */
static cucore_status read_sections(const uint8_t *d, size_t n, const char *what,
                                   const shdr_table *t, cc_elf_section *sec, uint32_t *name_offs) {
  read_shdrs(d, t, sec, name_offs);
  cucore_status st = check_segments(d, n, what);
  if (st == CUCORE_OK) st = name_sections(d, n, what, t, sec, name_offs);
  if (st == CUCORE_OK) st = check_sections(n, what, sec, t->count);
  return st;
}

cucore_status cc_elf_open(const uint8_t *d, size_t n, const char *what, cc_elf *out) {
  memset(out, 0, sizeof *out);
  shdr_table t = {0, 0, 0, 0};
  cucore_status st = check_ident(d, n, what);
  if (st == CUCORE_OK) st = find_shdr_table(d, n, what, &t);
  if (st != CUCORE_OK) return st;
  cc_elf_section *sec = cc_calloc((size_t)t.count, sizeof *sec, "ELF section table");
  if (!sec) return CUCORE_HOST_OUT_OF_MEMORY;
  uint32_t *name_offs = cc_calloc((size_t)t.count, sizeof *name_offs, "ELF section names");
  st = name_offs ? read_sections(d, n, what, &t, sec, name_offs) : CUCORE_HOST_OUT_OF_MEMORY;
  free(name_offs);
  if (st != CUCORE_OK) {
    free(sec);
    return st;
  }
  out->data = d;
  out->size = n;
  out->type = (uint16_t)CC_ELF_GET(d, Elf64_Ehdr, e_type);
  out->machine = (uint16_t)CC_ELF_GET(d, Elf64_Ehdr, e_machine);
  out->osabi = d[EI_OSABI];
  out->abi_version = d[EI_ABIVERSION];
  out->flags = (uint32_t)CC_ELF_GET(d, Elf64_Ehdr, e_flags);
  out->sections = sec;
  out->count = (uint32_t)t.count;
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
