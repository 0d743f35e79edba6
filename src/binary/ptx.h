/*
 * binary/ptx.h -- the .entry declarations of a PTX module and the parameter layout rule
 * (ptx.c).
 */
#ifndef CUCORE_BINARY_PTX_H
#define CUCORE_BINARY_PTX_H

#include "binary/reader.h"

/* ---- PTX (ptx.c) ---------------------------------------------------------------------------- */

typedef struct cc_ptx {
  int version;        /* PTX ISA version, major*10 + minor (e.g. 90 for 9.0); 0 when absent */
  int target;         /* .target sm_XX: XX; 0 when absent */
  char target_suffix; /* 'a', 'f' or 0 */
  int layout_arch;    /* the arch the parameter offsets were computed for */
  cc_klist kernels;
  cc_glist globals; /* module-scope .global and .const variables with a known size */
} cc_ptx;

/* Reads every .entry of a PTX module (text, not necessarily NUL-terminated). Parameter
 * offsets follow the driver's layout rule for `arch` (0: the module's .target): each
 * parameter starts at the first offset after the previous one whose address in constant bank
 * 0 (cc_param_base + offset) is a multiple of its alignment. CUCORE_PARSE_ERROR names the line
 * and what was expected. */
cucore_status cc_ptx_parse(const char *text, size_t len, int arch, cc_ptx *out);
/* The same, recording no failure (for optional work such as a fatbin's own PTX). */
cucore_status cc_ptx_parse_quiet(const char *text, size_t len, int arch, cc_ptx *out);
void cc_ptx_free(cc_ptx *p);

/* ---- tests only ---- */
/* Exported for tests/test_args.c alone; ptx.c's layout uses it. Where parameters start in
 * constant bank 0 for `arch` and a buffer of `total` bytes: 0x160 on sm_70-89 (0x1a80 once the
 * buffer passes 4352 bytes), 0x210 on sm_90-99 and 0x380 on sm_100 and newer. */
uint32_t cc_param_base(int arch, uint32_t total);

#endif /* CUCORE_BINARY_PTX_H */
