/*
 * binary.h -- the offline binary reader: what its source files share, and the internal API
 * that the rest of cucore (ObjectCode, Kernel) calls without going through the public
 * wrappers (no cc_begin, no argument checks beyond what each function states).
 *
 * Files: detect.c (code type from bytes), elf_cubin.c (cubin ELF), fatbin.c (fatbin
 * containers and their decompression), ptx_entry.c (PTX .entry declarations), demangle.c
 * (libstdc++'s __cxa_demangle, loaded at run time), binary.c (cucore_binary and the public
 * API). Every reader takes hostile input: offsets and sizes are checked before use, no
 * arithmetic overflows, no recursion, and no allocation larger than a bound derived from the
 * input's own size.
 */
#ifndef CUCORE_BINARY_H
#define CUCORE_BINARY_H

#include "internal.h"

#include <stdint.h>
#include <string.h>

/* ---- bounds-checked little-endian reads ------------------------------------------------------ */

static inline uint16_t cc_rd16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static inline uint32_t cc_rd32(const uint8_t *p) {
  return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static inline uint64_t cc_rd64(const uint8_t *p) {
  return (uint64_t)cc_rd32(p) | ((uint64_t)cc_rd32(p + 4) << 32);
}
/* 1 when [off, off + len) lies within a buffer of `total` bytes (no overflow possible). */
static inline int cc_range_ok(uint64_t off, uint64_t len, uint64_t total) {
  return off <= total && len <= total - off;
}

/* The largest parameter buffer a kernel may have (CUDA 12.1+). */
#define CC_PARAM_BYTES_MAX 32764u
/* The largest decompressed fatbin entry cucore accepts, and the largest expansion ratio. */
#define CC_DECOMPRESSED_MAX ((uint64_t)1 << 30)
#define CC_DECOMPRESS_RATIO_MAX 4096u

/* ---- kernels ---------------------------------------------------------------------------------- */

/* A growable list of kernels; every string and params array is owned by the list. */
typedef struct cc_kernel_list {
  cucore_kernel_info *items;
  uint32_t count, cap;
} cc_kernel_list;

/* Appends a zeroed kernel named `name` (copied); returns it, or NULL (failure recorded). */
cucore_kernel_info *cc_kernel_list_add(cc_kernel_list *l, const char *name, size_t name_len);
/* Frees every kernel and the list's storage; the list is empty afterwards. */
void cc_kernel_list_free(cc_kernel_list *l);
/* Sets k->max_threads_per_block from its declared bounds and register count (see cucore.h). */
void cc_kernel_finish_limits(cucore_kernel_info *k);

/* ---- detection (detect.c) --------------------------------------------------------------------- */

/* The code type of a buffer; CUCORE_INVALID_BINARY naming the first bytes when none fits. */
cucore_status cc_code_type_detect(const uint8_t *data, size_t size, cucore_code_type *out);
/* 1 when the bytes start like LTO-IR (NVRTC -dlto / nvJitLink input). */
int cc_is_ltoir(const uint8_t *data, size_t size);
/* For a host ELF: the offset and size of its embedded fatbin section (.nv_fatbin, or
 * __nv_relfatbin for relocatable device code). CUCORE_NOT_FOUND when it has none. */
cucore_status cc_host_elf_fatbin(const uint8_t *data, size_t size, uint64_t *off, uint64_t *len);

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

/* ---- cubin ELF (elf_cubin.c) -------------------------------------------------------------------- */

typedef struct cc_cubin {
  int arch;              /* 90 for sm_90 and sm_90a */
  char suffix;           /* 'a', 'f' or 0 */
  int virtual_arch;      /* compute_XX the cubin was compiled from; 0 when not recorded */
  int abi_version;       /* ELF EI_ABIVERSION: 7 (CUDA <= 12) or 8 (CUDA 13) */
  int relocatable;       /* ET_REL: needs linking (nvcc -rdc / -dc) */
  int debug;             /* compiled with -G */
  int toolkit_version;   /* CUDA version that wrote it, e.g. 130 for 13.0; 0 when unknown */
  int32_t user_const_bytes;
  cc_kernel_list kernels;
} cc_cubin;

/* Reads a cubin. On failure *out holds nothing to free, and the message names the part of
 * the file that is wrong and where (section index and name, offsets, sizes). */
cucore_status cc_cubin_parse(const uint8_t *data, size_t size, cc_cubin *out);
void cc_cubin_free(cc_cubin *c);
/* "sm_90a" etc. into buf. */
const char *cc_arch_name(int arch, char suffix, const char *prefix, char *buf, size_t len);

/* ---- fatbin (fatbin.c) --------------------------------------------------------------------------- */

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
cucore_status cc_fatbin_entry_bytes_quiet(const cc_fatbin *f, uint32_t index,
                                          const uint8_t **out, size_t *size, int *owned);
/* LZ4 block decompression (fatbin flag 0x2000): exactly `dst_len` bytes must come out of
 * exactly `src_len` bytes of input. */
cucore_status cc_lz4_decompress(const uint8_t *src, size_t src_len, uint8_t *dst, size_t dst_len);

/* ---- PTX (ptx_entry.c) ---------------------------------------------------------------------------- */

typedef struct cc_ptx {
  int version;        /* PTX ISA version, major*10 + minor (e.g. 90 for 9.0); 0 when absent */
  int target;         /* .target sm_XX: XX; 0 when absent */
  char target_suffix; /* 'a', 'f' or 0 */
  int layout_arch;    /* the arch the parameter offsets were computed for */
  cc_kernel_list kernels;
} cc_ptx;

/* Reads every .entry of a PTX module (text, not necessarily NUL-terminated). Parameter
 * offsets follow the driver's layout rule for `arch` (0: the module's .target); see
 * cc_param_layout. CUCORE_PARSE_ERROR names the line and what was expected. */
cucore_status cc_ptx_parse(const char *text, size_t len, int arch, cc_ptx *out);
/* The same, recording no failure (for optional work such as a fatbin's own PTX). */
cucore_status cc_ptx_parse_quiet(const char *text, size_t len, int arch, cc_ptx *out);
void cc_ptx_free(cc_ptx *p);
/* Lays out parameters (size and align set, align 0 meaning 1) the way ptxas does for `arch`:
 * each parameter starts at the first offset after the previous one whose address in
 * constant bank 0 (param base + offset) is a multiple of its alignment. The param base is
 * 0x160 on sm_70-89 (0x1a80 once the buffer passes 4352 bytes), 0x210 on sm_90-99 and 0x380 on
 * sm_100 and newer. Sets offsets and *total; CUCORE_INVALID_ARGUMENT past 32764 bytes. */
cucore_status cc_param_layout(cucore_param_info *params, uint32_t count, int arch,
                              uint32_t *total);
/* Where parameters start in constant bank 0 for `arch` and a buffer of `total` bytes. */
uint32_t cc_param_base(int arch, uint32_t total);

/* ---- demangling (demangle.c) ------------------------------------------------------------------------- */

/* The demangled form of an Itanium C++ name (malloc'd), or NULL when `name` is not mangled,
 * cannot be demangled, or libstdc++ could not be loaded (never an error). */
char *cc_demangle(const char *name);
/* 1 when a demangler was loaded (libstdc++.so.6 with __cxa_demangle). */
int cc_demangler_available(void);

/* ---- cucore_binary (binary.c) ------------------------------------------------------------------------- */

struct cucore_binary {
  cucore_binary_info info;
  uint8_t *data;           /* the caller's bytes, copied */
  size_t size;
  cc_fatbin fatbin;        /* entries when a fatbin or host object was opened */
  cc_kernel_list kernels;  /* of the cubin or PTX that was read */
};

/* cucore_binary_open without cc_begin: the lead's ObjectCode calls this on code it holds. */
cucore_status cc_binary_open(const void *data, size_t size, cucore_code_type type, int arch,
                             cucore_binary **out);
/* A kernel by symbol name, demangled name, or demangled name without its parameter list
 * (when that is unique). NULL when none matches (no failure recorded). */
const cucore_kernel_info *cc_binary_lookup(const cucore_binary *bin, const char *name);
/* CUCORE_NOT_FOUND for `name`, listing the kernels that exist, the nearest names first. */
cucore_status cc_binary_fail_not_found(const cucore_binary *bin, const char *name);
/* Merges PTX parameter kinds and alignments into the kernels of the same name; see
 * cucore_binary_attach_ptx. */
cucore_status cc_binary_attach_ptx(cucore_binary *bin, const char *ptx, size_t len,
                                   uint32_t *matched);
/* The same, from an already parsed kernel list (used for a fatbin's own PTX entry). */
cucore_status cc_kernels_attach(cc_kernel_list *dst, const cc_kernel_list *src,
                                uint32_t *matched);

#endif /* CUCORE_BINARY_H */
