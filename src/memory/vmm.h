/*
 * memory/vmm.h -- virtual memory, private to memory/: the physical memory handle,
 * the granularity arithmetic, and the raw steps vmm.c and vmm_buffer.c share.
 */
#ifndef CUCORE_MEMORY_VMM_H
#define CUCORE_MEMORY_VMM_H

#include "memory/memory.h"

struct cucore_vmm_memory {
  cc_handle hdr; /* first: the magic word of base/handle.h */
  CUmemGenericAllocationHandle handle;
  cucore_device *dev;
  size_t bytes;
  size_t granularity; /* the minimum granularity of its device and handle type */
  unsigned flags;     /* CUCORE_VMM_* */
};

/* `bytes` rounded up to a multiple of `granularity` (> 0) into *out; 0 when it would wrap. */
static inline int cc_vmm_round_up(uint64_t bytes, uint64_t granularity, uint64_t *out) {
  uint64_t q = bytes / granularity + (bytes % granularity != 0);
  return cc_mul_u64(q, granularity, out);
}

/* Fails with CUCORE_INVALID_ARGUMENT when `value` (named `what`) is not a multiple of
 * `granularity`, naming both and the value rounded up. */
cucore_status cc_vmm_check_aligned(uint64_t value, uint64_t granularity, const char *fn,
                                   const char *what);
/* The minimum (`which` 0) or recommended (1) granularity of `dev` for `flags`; makes the
 * device current. */
cucore_status cc_vmm_granularity(cucore_device *dev, unsigned flags, int which, size_t *out,
                                 const char *fn);
/* cuMemCreate of `bytes` pinned on `dev` (device current). */
cucore_status cc_vmm_create_raw(cucore_device *dev, size_t bytes, unsigned flags,
                                CUmemGenericAllocationHandle *out, const char *fn);
/* cuMemMap then read-write access for `dev`; on failure nothing stays mapped. */
cucore_status cc_vmm_map_rw(cucore_device *dev, uint64_t addr, size_t bytes,
                            CUmemGenericAllocationHandle h, const char *fn);

#endif /* CUCORE_MEMORY_VMM_H */
