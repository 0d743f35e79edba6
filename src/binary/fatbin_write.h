/* fatbin_write.h -- building fatbin containers (for Program's fatbin target). */
#ifndef CUCORE_FATBIN_WRITE_H
#define CUCORE_FATBIN_WRITE_H

#include "base/base.h"

typedef struct cc_fatbin_part {
  int is_ptx; /* 1: PTX text (size without NUL); 0: a cubin */
  const unsigned char *data;
  size_t size;
  int arch;                         /* 90 */
  char arch_suffix;                 /* 'a', 'f' or 0 */
  int version_major, version_minor; /* PTX ISA version, or the ELF format (1.8) */
} cc_fatbin_part;

/* A malloc'd fatbin holding `parts` in order. */
cucore_status cc_fatbin_write(const cc_fatbin_part *parts, int count, unsigned char **out,
                              size_t *out_size);

#endif
