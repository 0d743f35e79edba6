/*
 * loader/loader.h -- the CUDA driver and the toolkit libraries (NVRTC, nvJitLink, libNVVM),
 * loaded at run time: their entry-point tables, the one-time loading, what was found where,
 * and failures of their calls turned into cucore statuses.
 *
 * Files: driver.c (libcuda.so.1 through cuGetProcAddress), driver_errors.c (CUresult to
 * cucore status and message), driver_log.c and driver_log_api.c (the driver's own log),
 * toolkit.c (the toolkit libraries), nvml.c (NVML, its own header nvml.h), versions.c
 * (cucore_versions).
 */
#ifndef CUCORE_LOADER_H
#define CUCORE_LOADER_H

#include "base/base.h"
#include "base/handle.h"

#include <cuda.h>
#include <cudaTypedefs.h>

/* One entry point taken with dlsym into its slot (toolkit.c, nvml.c); a required one missing
 * makes the library unusable. */
typedef struct cc_symbol_slot {
  const char *name;
  void **slot;
  int required;
} cc_symbol_slot;

/* ---- the driver (driver.c) ----------------------------------------------------------------- */

/* Entry points of drivers newer than the toolkit headers cucore is built with: their types as
 * the CUDA 13.1 headers declare them, so that the table holds them either way. */
#if CUDA_VERSION < 13010
typedef CUresult(CUDAAPI *PFN_cuGraphGetId_v13010)(CUgraph hGraph, unsigned int *graphId);
typedef CUresult(CUDAAPI *PFN_cuGraphExecGetId_v13010)(CUgraphExec hGraphExec,
                                                       unsigned int *graphId);
typedef CUresult(CUDAAPI *PFN_cuGraphNodeGetLocalId_v13010)(CUgraphNode hNode,
                                                            unsigned int *nodeId);
typedef CUresult(CUDAAPI *PFN_cuGraphNodeGetToolsId_v13010)(CUgraphNode hNode,
                                                            unsigned long long *toolsNodeId);
typedef CUresult(CUDAAPI *PFN_cuGraphNodeGetContainingGraph_v13010)(CUgraphNode hNode,
                                                                    CUgraph *phGraph);
typedef CUresult(CUDAAPI *PFN_cuGraphNodeGetParams_v13010)(CUgraphNode hNode,
                                                           CUgraphNodeParams *nodeParams);
#endif

#if CUDA_VERSION < 13020
/* CUDA 13.2's attributed copies (memory/copy_batch.c), for headers older than 13.2. */
typedef CUresult(CUDAAPI *PFN_cuMemcpyWithAttributesAsync_v13020)(CUdeviceptr dst, CUdeviceptr src,
                                                                  size_t size,
                                                                  CUmemcpyAttributes *attr,
                                                                  CUstream hStream);
typedef CUresult(CUDAAPI *PFN_cuMemcpy3DWithAttributesAsync_v13020)(CUDA_MEMCPY3D_BATCH_OP *op,
                                                                    unsigned long long flags,
                                                                    CUstream hStream);
#endif

typedef struct cc_driver {
#define CC_DRV(name, ver, req) PFN_##name##_v##ver fn_##name;
#include "loader/driver_symbols.h"
#undef CC_DRV
  int version;      /* cuDriverGetVersion */
  int device_count; /* after cuInit; 0 when CUDA_ERROR_NO_DEVICE */
} cc_driver;

extern cc_driver cc_drv;
#define DRV(name) (cc_drv.fn_##name)

/* Loads and initialises the driver once (thread-safe). On failure the cause is restated on
 * every call. */
cucore_status cc_driver_load(void);
/* Same, and also fails with CUCORE_NO_DEVICE when the driver sees no GPU. */
cucore_status cc_driver_need_device(void);
/* 1 when the driver loads and sees a GPU; records no failure (for optional questions, such as
 * asking the driver about a pointer when one can). */
int cc_driver_ready(void);
/* The same without loading: 0 while the driver's load (another thread's cuInit) is not over. */
int cc_driver_ready_now(void);
/* Fails with CUCORE_DRIVER_TOO_OLD naming `symbol` and the version it needs when an optional
 * driver entry point is missing. */
cucore_status cc_driver_require(const void *fn, const char *symbol, int version_needed);
/* (`name` is pasted, never expanded: cuda.h defines some names to their _v2 forms.) */
/* The symbol's version is looked up (a scan of the symbol table) only when it is missing:
 * this check sits on hot paths (node updates, launches into captures). */
#define CC_DRV_REQUIRE(name)           \
  (CC_LIKELY(cc_drv.fn_##name != NULL) \
       ? CUCORE_OK                     \
       : cc_driver_require(NULL, #name, cc_driver_symbol_version(#name)))
int cc_driver_symbol_version(const char *symbol);
/* Where the driver was loaded from, and why not (for cucore_versions). */
void cc_driver_describe(cucore_library_info *out);

/* ---- driver failures (driver_errors.c) ------------------------------------------------------ */

/* A CUresult failure: maps it to a cucore code, keeps the CUresult, names `call` and the
 * driver's own name and text, then the caller's context. */
cucore_status cc_fail_cu(CUresult r, const char *call, const char *fmt, ...) CC_PRINTF(3, 4);
/* The cucore code a CUresult maps to. */
int cc_code_for_cu(CUresult r);
/* 1 for the CUDA_ERROR_STREAM_CAPTURE_* codes and CUDA_ERROR_CAPTURED_EVENT. */
int cc_cu_is_capture_error(CUresult r);
/* "CUDA_ERROR_X" for a CUresult, without requiring the driver to be loaded. */
const char *cc_cu_name(CUresult r);

/* ---- the driver's own log (driver_log.c) ---------------------------------------------------- */

/* Registers the log callback once, when the driver has loaded (CUDA 12.9+ drivers). */
void cc_driver_log_register(void);
/* The message the driver logged on this thread for the call that just failed, filtered, into
 * buf; "" and 0 when none (or only an old one). Each message is taken once. */
size_t cc_driver_log_take(char *buf, size_t cap);
/* driver_log.c, for driver_log_api.c: 1 when the callback is registered (*why: the driver's
 * answer to the registration); the kept messages, oldest first, a line each, as many of the
 * newest as fit `cap` (returns the bytes all of them need); this thread's newest message; the
 * forward callback; the ring and this thread's message emptied. */
int cc_driver_log_registered(CUresult *why);
size_t cc_driver_log_copy(char *buf, size_t cap);
void cc_driver_log_last_text(char *buf, size_t cap);
void cc_driver_log_set_forward(cucore_driver_log_fn fn, void *user);
void cc_driver_log_reset(void);

/* ---- gzip (zlib.c): libz.so.1 loaded on first use (CUCORE_LIBZ overrides the name) ------ */

/* 1 when `data` starts with gzip's magic bytes. */
int cc_is_gzip(const void *data, size_t size);
/* Inflates gzip `data` into *out (malloc'd, NUL-terminated, *out_size bytes without the NUL);
 * `what` names the data in errors; more than `limit` bytes inflated is refused. A missing
 * zlib is CUCORE_NOT_SUPPORTED saying so; damaged or cut data CUCORE_INVALID_ARGUMENT. */
cucore_status cc_gunzip(const void *data, size_t size, const char *what, size_t limit, char **out,
                        size_t *out_size);

/* ---- toolkit libraries (toolkit.c) --------------------------------------------------------- */

/* The loaded toolkit library tables (filled by cc_nvrtc_load etc.). */
#include "loader/toolkit_symbols.h"

/* ---- libdevice (libdevice.c): the toolkit's bitcode of the __nv_* math functions, found and
 * read for NVVM IR compiles ---------------------------------------------------------------- */

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

#endif /* CUCORE_LOADER_H */
