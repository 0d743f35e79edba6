/*
 * binary/binary.h -- the offline binary reader's facade: cucore_binary (binary.c), the
 * internal API that ObjectCode and Kernel call without going through the public wrappers (no
 * cc_begin, no argument checks beyond what each function states).
 *
 * Files, lowest first: reader.c (shared helpers, kernel and variable lists), elf.c (section
 * tables), detect.c (code type from bytes), cubin.c, fatbin.c, ptx.c, demangle.c, signature.c
 * (parameter types from demangled names), fatbin_write.c (building fatbins), binary.c (this
 * facade and the public API).
 */
#ifndef CUCORE_BINARY_H
#define CUCORE_BINARY_H

#include "binary/cubin.h"
#include "binary/detect.h"
#include "binary/fatbin.h"
#include "binary/ptx.h"
#include "base/handle.h"

/* ---- cucore_binary (binary.c) ---------------------------------------------------------------- */

struct cucore_binary {
  cc_handle hdr; /* first: the magic word of base/handle.h */
  cucore_binary_info info;
  uint8_t *data; /* the caller's bytes, copied */
  size_t size;
  cc_fatbin fatbin; /* entries when a fatbin or host object was opened */
  cc_klist kernels; /* of the cubin or PTX that was read */
  cc_glist globals; /* its module variables */
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

#endif /* CUCORE_BINARY_H */
