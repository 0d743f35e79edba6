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
#include <stddef.h>
#include <stdio.h>

/* 1 when the bytes start like LTO-IR (NVRTC -dlto / nvJitLink input). */
static int is_ltoir(const uint8_t *d, size_t n) {
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
  static const char *const words[] = {"source_filename", "target",     "define",
                                      "declare",         "attributes", "module"};
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
    if (d[i] < 0x20 && d[i] != '\n' && d[i] != '\r' && d[i] != '\t' && d[i] != '\f' && d[i] != '\v')
      return 0;
  }
  return 1;
}

cucore_status cc_host_elf_fatbin(const uint8_t *data, size_t size, uint64_t *off, uint64_t *len) {
  cc_elf e;
  cucore_status st = cc_elf_open(data, size, "host object", &e);
  if (st != CUCORE_OK) return st;
  if (e.machine == EM_CUDA) {
    cc_elf_close(&e);
    return cc_fail(CUCORE_INVALID_BINARY,
                   "this ELF is a cubin (e_machine EM_CUDA, 190), not a host object: open it as "
                   "CUCORE_CODE_CUBIN or CUCORE_CODE_AUTO");
  }
  const cc_elf_section *s = cc_elf_find(&e, ".nv_fatbin");
  if (!s) s = cc_elf_find(&e, "__nv_relfatbin");
  if (!s || s->type == SHT_NOBITS) {
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

/* e_machine of an ELF header (either byte order), 0 when too short. */
static unsigned elf_machine(const uint8_t *d, size_t n) {
  const size_t at = offsetof(Elf64_Ehdr, e_machine); /* the same in Elf32_Ehdr */
  if (n < at + sizeof(Elf64_Half)) return 0;
  if (d[EI_DATA] == ELFDATA2LSB) return (unsigned)CC_ELF_GET(d, Elf64_Ehdr, e_machine);
  return (unsigned)((d[at] << 8) | d[at + 1]);
}

cucore_code_type cc_code_type_by_magic(const uint8_t *d, size_t n) {
  if (starts_with(d, n,
                  "\x7f"
                  "ELF")) {
    if (elf_machine(d, n) == EM_CUDA) return CUCORE_CODE_CUBIN;
    return CUCORE_CODE_OBJECT;
  }
  if (n >= 4 && cc_le32(d) == 0xBA55ED50u) return CUCORE_CODE_FATBIN;
  if (starts_with(d, n, "!<arch>\n")) return CUCORE_CODE_LIBRARY;
  if (is_ltoir(d, n)) return CUCORE_CODE_LTOIR;
  if (n >= 4 &&
      ((d[0] == 'B' && d[1] == 'C' && d[2] == 0xc0 && d[3] == 0xde) || cc_le32(d) == 0x0B17C0DEu))
    return CUCORE_CODE_NVVM;
  return CUCORE_CODE_AUTO;
}

/* Up to 32 bytes of the first line after comments, as text (for messages). */
static void text_excerpt(const uint8_t *d, size_t n, char *out, size_t cap) {
  size_t i = skip_c_comments(d, n), k = 0;
  while (i < n && k + 1 < cap && k < 32 && d[i] != '\n' && d[i] != '\r' && d[i] != 0)
    out[k++] = (char)d[i++];
  out[k] = '\0';
}

/* The first (up to 8) bytes in hex, "7f 45 4c 46". */
static void hex_excerpt(const uint8_t *d, size_t n, char *out, size_t cap) {
  size_t used = 0;
  out[0] = '\0';
  for (size_t i = 0; i < n && i < 8; i++) {
    int w = snprintf(out + used, cap - used, i ? " %02x" : "%02x", d[i]);
    if (w < 0 || (size_t)w >= cap - used) break;
    used += (size_t)w;
  }
}

const char *cc_code_describe(const uint8_t *d, size_t n, char *buf, size_t cap) {
  char ex[40];
  switch (cc_code_type_by_magic(d, n)) {
  case CUCORE_CODE_CUBIN: return "a cubin (an ELF file for EM_CUDA, 190)";
  case CUCORE_CODE_OBJECT:
    if (n < 20) return "an ELF file cut short (under 20 bytes, no e_machine)";
    snprintf(buf, cap,
             "an ELF file for machine %u, not EM_CUDA (190): a host object, or no "
             "device code at all",
             elf_machine(d, n));
    return buf;
  case CUCORE_CODE_FATBIN: return "a fatbin (container magic 50 ed 55 ba)";
  case CUCORE_CODE_LIBRARY: return "a static library (!<arch>)";
  case CUCORE_CODE_LTOIR: return "ltoir (LTO-IR, ed 43 4e 7f)";
  case CUCORE_CODE_NVVM: return "nvvm (NVVM IR as LLVM bitcode)";
  default: break;
  }
  if (n == 0) return "empty (0 bytes)";
  if (is_text(d, n)) {
    if (looks_like_ptx(d, n)) return "ptx (text whose first directive is .version or .target)";
    if (looks_like_llvm_text(d, n)) return "nvvm (NVVM IR as LLVM assembly text)";
    text_excerpt(d, n, ex, sizeof ex);
    snprintf(buf, cap,
             "text that is not PTX (no .version or .target directive first; it "
             "starts \"%s\")",
             ex);
    return buf;
  }
  hex_excerpt(d, n, ex, sizeof ex);
  snprintf(buf, cap, "binary data of no known kind (the first bytes are %s)", ex);
  return buf;
}

/* What bytes of a declared type look like, for the message when they do not. */
static const char *expected_bytes(cucore_code_type t) {
  switch (t) {
  case CUCORE_CODE_CUBIN: return "an ELF file for EM_CUDA (190), starting 7f 45 4c 46";
  case CUCORE_CODE_FATBIN: return "a fatbin, starting with the container magic 50 ed 55 ba";
  case CUCORE_CODE_PTX: return "text whose first directive is .version (or .target)";
  case CUCORE_CODE_LTOIR: return "LTO-IR, starting ed 43 4e 7f";
  case CUCORE_CODE_OBJECT: return "a host ELF object (not EM_CUDA) holding device code";
  case CUCORE_CODE_LIBRARY: return "a static library, starting !<arch>";
  default: return "";
  }
}

cucore_status cc_check_code_size(size_t size, const char *fn, const char *what) {
  if (CC_LIKELY(size <= CC_CODE_SIZE_MAX)) return CUCORE_OK;
  return cc_fail(CUCORE_INVALID_ARGUMENT,
                 "%s: %s is %zu bytes, past the limit of %zu (PTRDIFF_MAX, the largest object C "
                 "allows): the size is wrong",
                 fn, what, size, CC_CODE_SIZE_MAX);
}

int cc_is_plain_text(const uint8_t *d, size_t n) {
  return n > 0 && cc_code_type_by_magic(d, n) == CUCORE_CODE_AUTO && is_text(d, n);
}

cucore_code_type cc_code_type_guess(const uint8_t *d, size_t n) {
  cucore_code_type t = cc_code_type_by_magic(d, n);
  if (t == CUCORE_CODE_AUTO && is_text(d, n) && looks_like_ptx(d, n)) t = CUCORE_CODE_PTX;
  return t;
}

int cc_code_type_fits(const uint8_t *d, size_t n, cucore_code_type declared) {
  switch (declared) {
  case CUCORE_CODE_CUBIN:
  case CUCORE_CODE_FATBIN:
  case CUCORE_CODE_LTOIR:
  case CUCORE_CODE_OBJECT:
  case CUCORE_CODE_LIBRARY:
  case CUCORE_CODE_PTX: return cc_code_type_guess(d, n) == declared;
  default: return 1; /* source (CUDA C++, NVVM IR) is checked by its compiler */
  }
}

cucore_status cc_code_type_mismatch(const uint8_t *d, size_t n, cucore_code_type declared,
                                    const char *fn, const char *name) {
  char buf[200];
  return cc_fail(CUCORE_INVALID_BINARY, "%s: `%s` was declared %s (%s), but it is %s", fn, name,
                 cucore_code_type_name(declared), expected_bytes(declared),
                 cc_code_describe(d, n, buf, sizeof buf));
}

cucore_status cc_code_type_check(const uint8_t *d, size_t n, cucore_code_type declared,
                                 const char *fn, const char *name) {
  if (cc_code_type_fits(d, n, declared)) return CUCORE_OK;
  return cc_code_type_mismatch(d, n, declared, fn, name);
}

cucore_status cc_code_type_detect(const uint8_t *d, size_t n, cucore_code_type *out) {
  *out = CUCORE_CODE_AUTO;
  if (n == 0)
    return cc_fail(CUCORE_INVALID_BINARY, "the buffer is empty (0 bytes): expected a cubin, "
                                          "fatbin, PTX, LTO-IR or NVVM IR");
  if (starts_with(d, n,
                  "\x7f"
                  "ELF")) {
    if (n >= 20) {
      if (elf_machine(d, n) == EM_CUDA) {
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
  cucore_code_type t = cc_code_type_by_magic(d, n);
  if (t != CUCORE_CODE_AUTO) {
    *out = t;
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
    char excerpt[40];
    text_excerpt(d, n, excerpt, sizeof excerpt);
    return cc_fail(CUCORE_INVALID_BINARY,
                   "text that is neither PTX (no .version directive first) nor NVVM IR "
                   "(starts \"%s\"); CUDA C++ source is not detected from its bytes: give its "
                   "type (CUCORE_CODE_CUDA_CPP) explicitly",
                   excerpt);
  }
  char hex[40];
  hex_excerpt(d, n, hex, sizeof hex);
  return cc_fail(CUCORE_INVALID_BINARY,
                 "unrecognised code: the first bytes are %s; expected a cubin (7f 45 4c 46, "
                 "ELF), a fatbin (50 ed 55 ba), LTO-IR (ed 43 4e 7f), LLVM bitcode (42 43 c0 "
                 "de), a static library (!<arch>) or PTX/NVVM text",
                 hex);
}
