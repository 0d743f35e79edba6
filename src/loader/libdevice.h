/* loader/libdevice.h -- libdevice, the toolkit's bitcode library of the __nv_* math functions,
 * found and read for NVVM IR compiles (libdevice.c). */
#ifndef CUCORE_LOADER_LIBDEVICE_H
#define CUCORE_LOADER_LIBDEVICE_H

#include "loader/loader.h"

/* A libdevice file read into the process. The bytes stay valid and unchanged for the life of
 * the process (a file changed on disk is read again as a new entry); `identity` names the file
 * for the compile cache's key: path, device, inode, size and modification time. */
typedef struct cc_libdevice {
  const unsigned char *data;
  size_t size;
  const char *path;
  const char *identity;
} cc_libdevice;

/* The first libdevice function (`__nv_` followed by a name) that `code` names, NVVM IR text or
 * bitcode (LLVM keeps symbol names as plain bytes in both): a pointer into `code` and its length
 * in *len, or NULL when there is none. A scan of the bytes, nothing more: microseconds. */
const char *cc_libdevice_wanted(const void *code, size_t size, size_t *len);

/* Finds and reads libdevice. `override` (the libdevice option; NULL when unset) alone when given,
 * else $CUCORE_LIBDEVICE alone when set, else <root>/nvvm/libdevice/libdevice.10.bc under each
 * toolkit root (CUDA_HOME, CUDA_PATH, /usr/local/cuda), then beside the loaded libNVVM
 * (<dir>/../nvvm/libdevice and <dir>/../libdevice). `need` says why it is needed; it begins the
 * message. CUCORE_NOT_FOUND names every path tried; CUCORE_IO_ERROR names the file that exists
 * but cannot be read. */
cucore_status cc_libdevice_get(const char *override, const char *need, cc_libdevice *out);

#endif /* CUCORE_LOADER_LIBDEVICE_H */
