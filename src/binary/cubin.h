/*
 * binary/cubin.h -- the cubin reader: kernels, parameters and resources of a CUDA ELF
 * (cubin.c).
 */
#ifndef CUCORE_BINARY_CUBIN_H
#define CUCORE_BINARY_CUBIN_H

#include "binary/elf.h"

/* ---- cubin ELF (cubin.c) --------------------------------------------------------------------- */

typedef struct cc_cubin {
  int arch;            /* 90 for sm_90 and sm_90a */
  char suffix;         /* 'a', 'f' or 0 */
  int virtual_arch;    /* compute_XX the cubin was compiled from; 0 when not recorded */
  int abi_version;     /* ELF EI_ABIVERSION: 7 (CUDA <= 12) or 8 (CUDA 13) */
  int relocatable;     /* ET_REL: needs linking (nvcc -rdc / -dc) */
  int debug;           /* compiled with -G */
  int toolkit_version; /* CUDA version that wrote it, e.g. 130 for 13.0; 0 when unknown */
  int32_t user_const_bytes;
  cc_klist kernels;
  cc_glist globals; /* module variables: data symbols of .nv.global, .nv.global.init and
                             .nv.constant3 */
} cc_cubin;

/* Reads a cubin. On failure *out holds nothing to free, and the message names the part of
 * the file that is wrong and where (section index and name, offsets, sizes). */
cucore_status cc_cubin_parse(const uint8_t *data, size_t size, cc_cubin *out);
void cc_cubin_free(cc_cubin *c);

#endif /* CUCORE_BINARY_CUBIN_H */
