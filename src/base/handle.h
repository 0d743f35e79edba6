/*
 * base/handle.h -- misuse detection for opaque handles, in the manner of SQLITE_MISUSE.
 *
 * Every opaque handle struct begins with a cc_handle: a magic word naming its kind, written
 * by cc_handle_init when it is made. A public call checks it before use (CC_CHECK_HANDLE: one
 * inline load and compare, no lock); a destroy turns it into the kind's "dead" word (its bit
 * complement) and hands the struct's shell, its parts already freed, to a small quarantine
 * (handle.c) instead of free(), so a second destroy or a call after destroy reads memory that
 * is still allocated and fails with CUCORE_MISUSE instead of crashing. The quarantine is a
 * ring: when full, its oldest shell is freed; whatever it holds is freed at exit.
 *
 * Best effort: a handle destroyed long ago (its shell freed and the memory reused), a pointer
 * to random memory, or a destroy racing another call on the same handle stay undefined.
 */
#ifndef CUCORE_HANDLE_H
#define CUCORE_HANDLE_H

#include "base/base.h"

/* Four characters as one word, the first in the low byte ("PROG" reads as such in memory). */
#define CC_FOURCC(a, b, c, d) \
  ((uint32_t)(a) | ((uint32_t)(b) << 8) | ((uint32_t)(c) << 16) | ((uint32_t)(d) << 24))

/* Every kind of handle: X(KIND, four characters, public type name). */
#define CC_HANDLE_KINDS(X)                                       \
  X(OPTIONS, 'O', 'P', 'T', 'S', "cucore_options")               \
  X(PROGRAM, 'P', 'R', 'O', 'G', "cucore_program")               \
  X(LINKER, 'L', 'I', 'N', 'K', "cucore_linker")                 \
  X(OBJECT, 'O', 'B', 'J', ' ', "cucore_object")                 \
  X(BINARY, 'B', 'I', 'N', ' ', "cucore_binary")                 \
  X(KERNEL, 'K', 'E', 'R', 'N', "cucore_kernel")                 \
  X(ARGS, 'A', 'R', 'G', 'S', "cucore_args")                     \
  X(STREAM, 'S', 'T', 'R', 'M', "cucore_stream")                 \
  X(EVENT, 'E', 'V', 'N', 'T', "cucore_event")                   \
  X(GRAPH, 'G', 'R', 'P', 'H', "cucore_graph")                   \
  X(GRAPH_EXEC, 'G', 'E', 'X', 'E', "cucore_graph_exec")         \
  X(MEM_POOL, 'M', 'P', 'O', 'L', "cucore_mem_pool")             \
  X(HOST_POOL, 'H', 'P', 'O', 'L', "cucore_host_pool")           \
  X(ARRAY, 'A', 'R', 'R', 'Y', "cucore_array")                   \
  X(TEXTURE, 'T', 'E', 'X', ' ', "cucore_texture")               \
  X(SURFACE, 'S', 'U', 'R', 'F', "cucore_surface")               \
  X(DEVICE, 'D', 'E', 'V', ' ', "cucore_device")                 \
  X(DLPACK, 'D', 'L', 'P', 'K', "cucore_dlpack_tensor")          \
  X(MIPMAP, 'M', 'I', 'P', 'M', "cucore_mipmap")                 \
  X(VMM_MEMORY, 'V', 'M', 'E', 'M', "cucore_vmm_memory")         \
  X(VMM_BUFFER, 'V', 'B', 'U', 'F', "cucore_vmm_buffer")         \
  X(TUNE_SPACE, 'T', 'S', 'P', 'C', "cucore_tune_space")         \
  X(TUNE_STORE, 'T', 'S', 'T', 'O', "cucore_tune_store")         \
  X(TUNE_REPORT, 'T', 'R', 'P', 'T', "cucore_tune_report")       \
  X(TUNE_RECORDING, 'T', 'R', 'E', 'C', "cucore_tune_recording") \
  X(GREEN, 'G', 'R', 'E', 'N', "cucore_green")                   \
  X(SYS_PROCS, 'S', 'P', 'R', 'C', "cucore_system_processes")    \
  X(SYS_SET, 'S', 'S', 'E', 'T', "cucore_system_set")            \
  X(SYS_EVENTS, 'S', 'E', 'V', 'S', "cucore_system_event_set")   \
  X(MEM_RESOURCE, 'M', 'R', 'E', 'S', "cucore_mem_resource")

#define CC_HANDLE_KIND_ENUM(kind, a, b, c, d, name) CC_KIND_##kind = CC_FOURCC(a, b, c, d),
/* A kind is its live magic word. */
typedef enum cc_kind { CC_HANDLE_KINDS(CC_HANDLE_KIND_ENUM) } cc_kind;
#undef CC_HANDLE_KIND_ENUM

/* The header every handle struct begins with. */
typedef struct cc_handle {
  uint32_t magic; /* the kind while live; its complement once destroyed */
} cc_handle;

/* Marks a handle live; called right after its struct is allocated (zeroed). */
static inline void cc_handle_init(void *h, cc_kind kind) {
  ((cc_handle *)h)->magic = (uint32_t)kind;
}
/* 1 when `h` is not NULL and is a live handle of `kind`. */
static inline int cc_handle_live(const void *h, cc_kind kind) {
  return h && ((const cc_handle *)h)->magic == (uint32_t)kind;
}
/* The failure for a handle that is not live: CUCORE_INVALID_ARGUMENT naming `what` when NULL,
 * else CUCORE_MISUSE saying what was found (a destroyed handle, another kind, foreign memory). */
cucore_status cc_handle_fail(const void *h, cc_kind kind, const char *fn, const char *what) CC_COLD;
/* Checks a handle argument at a public call's entry; returns the failure when not live. */
#define CC_CHECK_HANDLE(h, kind, fn, what)                      \
  do {                                                          \
    if (CC_UNLIKELY(!cc_handle_live((h), CC_KIND_##kind)))      \
      return cc_handle_fail((h), CC_KIND_##kind, (fn), (what)); \
  } while (0)
/* Marks a handle dead without freeing it (a reference-counted handle whose user reference is
 * gone while others still hold it). */
static inline void cc_handle_kill(void *h, cc_kind kind) {
  ((cc_handle *)h)->magic = ~(uint32_t)kind;
}
/* Marks a handle dead and hands its shell (malloc'd, its parts freed already) to the
 * quarantine, which frees it later. */
void cc_handle_retire(void *h, cc_kind kind);

#endif /* CUCORE_HANDLE_H */
