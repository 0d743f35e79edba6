/*
 * detect.c -- what a buffer of code is, from its bytes alone.
 *
 * Magic numbers: ELF "\x7fELF" (e_machine 190 = EM_CUDA for a cubin); fatbin 0xBA55ED50;
 * static library "!<arch>\n"; LTO-IR 0x7F4E43ED (the first four bytes of what NVRTC -dlto
 * and nvcc -dlto produce: ed 43 4e 7f); LLVM bitcode "BC\xC0\xDE" or its wrapper 0x0B17C0DE.
 * PTX is text whose first directive after whitespace and comments is .version (or .target);
 * LLVM IR text starts with a comment (;), source_filename, target, define, declare, a global
 * (@), a type (%), metadata (!) or attributes.
 */
#include "binary/detect.h"
#include "binary/elf.h"

#include <ctype.h>
#include <stdio.h>

#define CC_EM_CUDA 190

int cc_is_ltoir(const uint8_t *d, size_t n) {
  return n >= 4 && d[0] == 0xed && d[1] == 0x43 && d[2] == 0x4e && d[3] == 0x7f;
}

static int starts_with(const uint8_t *d, size_t n, const char *s) {
  size_t k = strlen(s);
  return n >= k && memcmp(d, s, k) == 0;
}

/* Skips whitespace and C/C++ comments; returns the offset of the first other byte. */
static size_t skip_c_comments(const uint8_t *d, size_t n) {
  size_t i = 0;
  for (;;) {
    while (i < n && (isspace(d[i]) || d[i] == 0xef || d[i] == 0xbb || d[i] == 0xbf)) i++;
    if (i + 1 < n && d[i] == '/' && d[i + 1] == '/') {
      while (i < n && d[i] != '\n') i++;
    } else if (i + 1 < n && d[i] == '/' && d[i + 1] == '*') {
      i += 2;
      while (i + 1 < n && !(d[i] == '*' && d[i + 1] == '/')) i++;
      i = i + 1 < n ? i + 2 : n;
    } else {
      return i;
    }
  }
}

static int is_word_end(const uint8_t *d, size_t n, size_t i) {
  return i >= n || !(isalnum(d[i]) || d[i] == '_');
}

static int looks_like_ptx(const uint8_t *d, size_t n) {
  size_t i = skip_c_comments(d, n);
  static const char *const first[] = {".version", ".target"};
  for (size_t k = 0; k < CC_ARRAY_LEN(first); k++) {
    size_t len = strlen(first[k]);
    if (starts_with(d + i, n - i, first[k]) && is_word_end(d, n, i + len)) return 1;
  }
  return 0;
}

static int looks_like_llvm_text(const uint8_t *d, size_t n) {
  size_t i = 0;
  for (;;) {
    while (i < n && isspace(d[i])) i++;
    if (i < n && d[i] == ';') {
      while (i < n && d[i] != '\n') i++;
      continue;
    }
    break;
  }
  if (i >= n) return 0; /* only comments and blanks */
  static const char *const words[] = {"source_filename", "target", "define", "declare",
                                      "attributes", "module"};
  for (size_t k = 0; k < CC_ARRAY_LEN(words); k++) {
    size_t len = strlen(words[k]);
    if (starts_with(d + i, n - i, words[k]) && is_word_end(d, n, i + len)) return 1;
  }
  if (i < n && (d[i] == '@' || d[i] == '%' || d[i] == '!') && i + 1 < n &&
      (isalnum(d[i + 1]) || d[i + 1] == '_' || d[i + 1] == '"' || d[i + 1] == '.'))
    return 1;
  /* A leading "; ModuleID" comment is what LLVM writes first. */
  return starts_with(d, n, "; ModuleID");
}

/* Text: no control bytes, and after a NUL only NULs (the padding of a fatbin's PTX). */
static int is_text(const uint8_t *d, size_t n) {
  size_t check = n < 65536 ? n : 65536;
  for (size_t i = 0; i < check; i++) {
    if (d[i] == 0) {
      if (i == 0) return 0;
      for (size_t j = i; j < n; j++)
        if (d[j] != 0) return 0;
      return 1;
    }
    if (d[i] < 0x20 && d[i] != '\n' && d[i] != '\r' && d[i] != '\t' && d[i] != '\f' &&
        d[i] != '\v')
      return 0;
  }
  return 1;
}

cucore_status cc_host_elf_fatbin(const uint8_t *data, size_t size, uint64_t *off,
                                 uint64_t *len) {
  cc_elf e;
  cucore_status st = cc_elf_open(data, size, "host object", &e);
  if (st != CUCORE_OK) return st;
  if (e.machine == CC_EM_CUDA) {
    cc_elf_close(&e);
    return cc_fail(CUCORE_INVALID_BINARY,
                   "this ELF is a cubin (e_machine EM_CUDA, 190), not a host object: open it as "
                   "CUCORE_CODE_CUBIN or CUCORE_CODE_AUTO");
  }
  const cc_elf_section *s = cc_elf_find(&e, ".nv_fatbin");
  if (!s) s = cc_elf_find(&e, "__nv_relfatbin");
  if (!s || s->type == CC_SHT_NOBITS) {
    cc_elf_close(&e);
    return cc_fail(CUCORE_INVALID_BINARY,
                   "an ELF file for machine %u (not EM_CUDA, 190) with no device code: it has no "
                   ".nv_fatbin or __nv_relfatbin section",
                   (unsigned)e.machine);
  }
  *off = s->offset;
  *len = s->size;
  cc_elf_close(&e);
  return CUCORE_OK;
}

cucore_code_type cc_code_type_by_magic(const uint8_t *d, size_t n) {
  if (starts_with(d, n, "\x7f" "ELF")) {
    int le = n > 5 && d[5] == 1;
    if (n >= 20 && (le ? cc_rd16(d + 18) : (unsigned)((d[18] << 8) | d[19])) == CC_EM_CUDA)
      return CUCORE_CODE_CUBIN;
    return CUCORE_CODE_OBJECT;
  }
  if (n >= 4 && cc_rd32(d) == 0xBA55ED50u) return CUCORE_CODE_FATBIN;
  if (starts_with(d, n, "!<arch>\n")) return CUCORE_CODE_LIBRARY;
  if (cc_is_ltoir(d, n)) return CUCORE_CODE_LTOIR;
  if (n >= 4 && ((d[0] == 'B' && d[1] == 'C' && d[2] == 0xc0 && d[3] == 0xde) ||
                 cc_rd32(d) == 0x0B17C0DEu))
    return CUCORE_CODE_NVVM;
  return CUCORE_CODE_AUTO;
}

cucore_status cc_code_type_detect(const uint8_t *d, size_t n, cucore_code_type *out) {
  *out = CUCORE_CODE_AUTO;
  if (n == 0)
    return cc_fail(CUCORE_INVALID_BINARY, "the buffer is empty (0 bytes): expected a cubin, "
                                          "fatbin, PTX, LTO-IR or NVVM IR");
  if (starts_with(d, n, "\x7f" "ELF")) {
    if (n >= 20) {
      int le = n > 5 && d[5] == 1;
      unsigned machine = le ? cc_rd16(d + 18) : (unsigned)((d[18] << 8) | d[19]);
      if (machine == CC_EM_CUDA) {
        *out = CUCORE_CODE_CUBIN;
        return CUCORE_OK;
      }
      uint64_t off, len;
      cucore_status st = cc_host_elf_fatbin(d, n, &off, &len);
      if (st == CUCORE_OK) *out = CUCORE_CODE_OBJECT;
      return st;
    }
    return cc_fail(CUCORE_INVALID_BINARY,
                   "an ELF file of only %zu bytes: the ELF header alone is 64 bytes", n);
  }
  if (n >= 4 && cc_rd32(d) == 0xBA55ED50u) {
    *out = CUCORE_CODE_FATBIN;
    return CUCORE_OK;
  }
  if (starts_with(d, n, "!<arch>\n")) {
    *out = CUCORE_CODE_LIBRARY;
    return CUCORE_OK;
  }
  if (cc_is_ltoir(d, n)) {
    *out = CUCORE_CODE_LTOIR;
    return CUCORE_OK;
  }
  if (n >= 4 && ((d[0] == 'B' && d[1] == 'C' && d[2] == 0xc0 && d[3] == 0xde) ||
                 cc_rd32(d) == 0x0B17C0DEu)) {
    *out = CUCORE_CODE_NVVM;
    return CUCORE_OK;
  }
  if (is_text(d, n)) {
    if (looks_like_ptx(d, n)) {
      *out = CUCORE_CODE_PTX;
      return CUCORE_OK;
    }
    if (looks_like_llvm_text(d, n)) {
      *out = CUCORE_CODE_NVVM;
      return CUCORE_OK;
    }
    size_t i = skip_c_comments(d, n), k = 0;
    char excerpt[33];
    while (i < n && k < sizeof excerpt - 1 && d[i] != '\n' && d[i] != 0) excerpt[k++] = (char)d[i++];
    excerpt[k] = '\0';
    return cc_fail(CUCORE_INVALID_BINARY,
                   "text that is neither PTX (no .version directive first) nor NVVM IR "
                   "(starts \"%s\"); CUDA C++ source is not detected from its bytes: give its "
                   "type (CUCORE_CODE_CUDA_CPP) explicitly",
                   excerpt);
  }
  char hex[3 * 8 + 1] = "";
  for (size_t i = 0; i < n && i < 8; i++) snprintf(hex + 3 * i, 4, "%02x ", d[i]);
  if (hex[0]) hex[strlen(hex) - 1] = '\0';
  return cc_fail(CUCORE_INVALID_BINARY,
                 "unrecognised code: the first bytes are %s; expected a cubin (7f 45 4c 46, "
                 "ELF), a fatbin (50 ed 55 ba), LTO-IR (ed 43 4e 7f), LLVM bitcode (42 43 c0 "
                 "de), a static library (!<arch>) or PTX/NVVM text",
                 hex);
}
