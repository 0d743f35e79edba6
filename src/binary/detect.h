/*
 * binary/detect.h -- the code type of a buffer, from its bytes (detect.c).
 */
#ifndef CUCORE_BINARY_DETECT_H
#define CUCORE_BINARY_DETECT_H

#include "binary/reader.h"

/* ---- detection --------------------------------------------------------------------- */

/* The code type of a buffer; CUCORE_INVALID_BINARY naming the first bytes when none fits. */
cucore_status cc_code_type_detect(const uint8_t *data, size_t size, cucore_code_type *out);
/* The type the first bytes' magic number names (ELF: CUBIN for EM_CUDA, else OBJECT), or
 * CUCORE_CODE_AUTO for text or anything else. Records nothing. */
cucore_code_type cc_code_type_by_magic(const uint8_t *data, size_t size);
/* What the bytes are, in words, for messages ("a cubin (...)", "PTX text", "binary data of no
 * known kind (the first bytes are ...)"); returns `buf` or a static string. */
const char *cc_code_describe(const uint8_t *data, size_t size, char *buf, size_t cap);
/* The type the bytes show without failing: the magic's (cc_code_type_by_magic), else PTX for
 * text whose first directive is .version or .target, else CUCORE_CODE_AUTO. */
cucore_code_type cc_code_type_guess(const uint8_t *data, size_t size);
/* 1 when the bytes can be code of the `declared` type: for CUBIN, FATBIN, LTOIR, OBJECT,
 * LIBRARY and PTX, cc_code_type_guess gives that type; source types (CUDA C++, NVVM IR) are
 * left to their compiler (always 1). */
int cc_code_type_fits(const uint8_t *data, size_t size, cucore_code_type declared);
/* CUCORE_INVALID_BINARY "FN: `NAME` was declared TYPE (what that looks like), but its bytes
 * are WHAT (cc_code_describe)"; CUCORE_OK when cc_code_type_fits. */
cucore_status cc_code_type_check(const uint8_t *data, size_t size, cucore_code_type declared,
                                 const char *fn, const char *name);
/* The failure of cc_code_type_check, unconditionally. */
cucore_status cc_code_type_mismatch(const uint8_t *data, size_t size, cucore_code_type declared,
                                    const char *fn, const char *name);
/* 1 for non-empty text with no binary magic: what a PTX parser may be given. */
int cc_is_plain_text(const uint8_t *data, size_t size);
/* The most bytes of code a call takes: PTRDIFF_MAX, the largest object C allows (so the copy
 * with its NUL, size + 1, cannot overflow). */
#define CC_CODE_SIZE_MAX ((size_t)PTRDIFF_MAX)
/* CUCORE_INVALID_ARGUMENT naming `fn`, `what` and the limit when size > CC_CODE_SIZE_MAX. */
cucore_status cc_check_code_size(size_t size, const char *fn, const char *what);
/* For a host ELF: the offset and size of its embedded fatbin section (.nv_fatbin, or
 * __nv_relfatbin for relocatable device code). CUCORE_INVALID_BINARY when it has none. */
cucore_status cc_host_elf_fatbin(const uint8_t *data, size_t size, uint64_t *off, uint64_t *len);

#endif /* CUCORE_BINARY_DETECT_H */
