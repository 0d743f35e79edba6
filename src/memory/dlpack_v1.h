/*
 * dlpack_v1.h -- DLPack 1.x's versioned tensor, for builds whose dlpack/dlpack.h is older.
 *
 * Debian's libdlpack-dev is DLPack 0.6 (DLPACK_VERSION 60), which has DLTensor and
 * DLManagedTensor but not the versioned struct DLPack 1.0 added. When the installed header
 * lacks it, the declarations below are DLPack's own, as dlpack/dlpack.h of DLPack 1.1 defines
 * them (https://github.com/dmlc/dlpack/blob/v1.1/include/dlpack/dlpack.h: DLPackVersion,
 * DLPACK_FLAG_BITMASK_*, DLManagedTensorVersioned; the layout is 1.0's, 1.1 added the sub-byte
 * flag). DLTensor is the same struct in 0.6 and 1.x, so the 0.6 header's serves both. With a
 * DLPack 1.x header installed, its declarations are used instead.
 */
#ifndef CUCORE_MEMORY_DLPACK_V1_H
#define CUCORE_MEMORY_DLPACK_V1_H

#include <dlpack/dlpack.h>
#include <stdint.h>

#if !defined(DLPACK_MAJOR_VERSION) || DLPACK_MAJOR_VERSION < 1

/* The version of the DLPack ABI a versioned tensor follows. A consumer must refuse a major
 * version it does not know; minor versions only add (new flags, device and type codes). */
typedef struct {
  uint32_t major;
  uint32_t minor;
} DLPackVersion;

/* The tensor's data must not be written (DLPack 1.0). */
#define DLPACK_FLAG_BITMASK_READ_ONLY (1UL << 0UL)
/* The producer copied the data for this tensor: the consumer may own it freely (DLPack 1.0). */
#define DLPACK_FLAG_BITMASK_IS_COPIED (1UL << 1UL)
/* Sub-byte elements are padded to whole bytes (DLPack 1.1). */
#define DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED (1UL << 2UL)

/* A DLTensor with its version, flags and owner (DLPack 1.0). `deleter` (may be NULL when the
 * producer has nothing to free) is called once by the consumer when done; it frees `self`. */
typedef struct DLManagedTensorVersioned {
  DLPackVersion version;
  void *manager_ctx;
  void (*deleter)(struct DLManagedTensorVersioned *self);
  uint64_t flags;
  DLTensor dl_tensor;
} DLManagedTensorVersioned;

#endif

/* The DLPack version cucore writes into its versioned exports and reads up to: 1.1 (minor
 * versions below are accepted; a higher major version is refused). */
#define CC_DLPACK_MAJOR 1u
#define CC_DLPACK_MINOR 1u

#endif
