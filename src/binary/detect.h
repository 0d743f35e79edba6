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
/* 1 when the bytes start like LTO-IR (NVRTC -dlto / nvJitLink input). */
int cc_is_ltoir(const uint8_t *data, size_t size);
/* For a host ELF: the offset and size of its embedded fatbin section (.nv_fatbin, or
 * __nv_relfatbin for relocatable device code). CUCORE_INVALID_BINARY when it has none. */
cucore_status cc_host_elf_fatbin(const uint8_t *data, size_t size, uint64_t *off, uint64_t *len);

#endif /* CUCORE_BINARY_DETECT_H */
