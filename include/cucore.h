/**
 * @file
 * @brief The one public header of cucore.
 *
 * @mainpage cucore API reference
 *
 * cucore makes CUDA kernels easy and safe to use from C: compile CUDA C++, PTX or NVVM IR at
 * run time, load the code, inspect kernels, compute occupancy, and launch with arguments that
 * are checked against the kernel before the GPU sees them. Everything is declared in
 * `include/cucore.h`; its sections are listed under Modules.
 *
 * @par Conventions (they hold for every declaration below)
 * - Every function returns a cucore_status. CUCORE_OK (0) is success. On failure a message
 *   naming the call, the object and the limit is kept for the calling thread:
 *   cucore_last_error(). The first error of a failing call is the one kept. Like `errno`, a
 *   call that succeeds does not clear it (cucore_clear_error() does).
 * - A status carries the cucore code in its low 8 bits; when the failure came from the driver,
 *   NVRTC, nvJitLink, libNVVM or the C library, the original code is kept in the high bits
 *   (see CUCORE_CODE, cucore_status_source, cucore_status_native).
 * - Handles are opaque. Constructors take an out-parameter that is set to NULL on failure.
 *   Destroying NULL is a no-op. Inputs are copied unless a declaration says otherwise.
 *   Pointers handed out (names, logs, code) are borrowed: owned by the handle named, valid
 *   while it lives unless a declaration says less.
 * - Nothing is linked against the CUDA driver or toolkit: they are loaded at run time, and a
 *   missing piece is a status with a message, never an abort.
 *
 * @par Errors
 * Each function lists (as "Return values") the codes it returns beyond these, which any
 * function may return: CUCORE_INVALID_ARGUMENT (a NULL handle or out-parameter, an unknown
 * enum value or flag, a value out of range: the message names it) and
 * CUCORE_HOST_OUT_OF_MEMORY. A function that calls the driver may also return what loading it
 * gives (CUCORE_DRIVER_NOT_FOUND, CUCORE_DRIVER_STUB, CUCORE_DRIVER_TOO_OLD, CUCORE_NO_DEVICE)
 * and the code a failed driver call maps to (CUCORE_DRIVER_ERROR unless a closer one fits;
 * CUCORE_KERNEL_FAULT once a kernel has faulted on the device). Version gates: each driver
 * entry point is resolved with the CUDA version whose ABI it has; where the loaded driver is
 * older than an entry point a call needs, the call returns CUCORE_DRIVER_TOO_OLD (cucore's
 * status for that, never a crash) with a message naming the entry point and the CUDA version
 * it needs. One that runs NVRTC,
 * nvJitLink or libNVVM may return CUCORE_NVRTC_NOT_FOUND, CUCORE_NVJITLINK_NOT_FOUND,
 * CUCORE_NVVM_NOT_FOUND, CUCORE_TOOLKIT_TOO_OLD and CUCORE_NVRTC_ERROR,
 * CUCORE_NVJITLINK_ERROR, CUCORE_NVVM_ERROR.
 *
 * @par Misuse (best effort, like SQLITE_MISUSE)
 * Every function that takes a handle, its destructor included, may also return CUCORE_MISUSE:
 * the handle was destroyed already (a second destroy, a call after destroy), is a handle of
 * another type, or was not made by cucore. The message names the call, the type expected and
 * what was found; nothing is freed or changed. Each handle carries a magic word checked on
 * entry, and a destroyed handle's memory is held in a small quarantine (the last 256 destroyed
 * handles, freed at exit) so the check reads no freed memory. Detection is best effort: using
 * a handle destroyed long ago (its memory freed and reused), a pointer to random memory, or a
 * destroy racing another call on the same handle stay undefined behaviour. Shared handles are
 * dead once no one holds them: a cucore_object lives while a kernel, the compile cache or
 * another handle received for it holds a reference, so destroying it more often than it was
 * received is caught only once nothing holds it (before that, it drops another holder's
 * reference: undefined). A kernel, event or graph is dead to the caller at its destroy even
 * while a graph or an executable graph still uses it. Handles owned by another one (a body
 * graph of a conditional node, a graph node, the default streams of a device) are not
 * destroyed by the caller; a body graph is caught once its graph is destroyed. cucore_device
 * (opened once per ordinal and kept) and the value types (launch configurations, tensor
 * maps) carry no magic word.
 *
 * @par Thread safety
 * cucore may be called from many threads at once. The driver and each toolkit library are
 * loaded once, under a lock; the last error is per thread. A handle's destructor must never
 * race with another call on that handle. Per type:
 * - cucore_device, cucore_stream, cucore_event, device and pinned memory: may be shared; their
 *   calls may run concurrently. Closing a device must not race with any use of it or of what
 *   was made on it. A call that reaches the driver makes the device's primary context current
 *   on the calling thread.
 * - cucore_options, cucore_program, cucore_linker, cucore_args, cucore_launch_config: not
 *   synchronised: calls on one of them must not run concurrently (cucore_options_canonical
 *   caches its text in the set, so it counts as a change). Constructors only read the options
 *   or kernel they take, so one option set may go to several constructors at once while
 *   nothing changes it. Distinct handles are independent.
 * - cucore_object: may be shared. References are counted atomically; the lazy load and the
 *   kernel list are built under the object's lock. Two compiles with the same cache key may
 *   hand out the same object: each handle received is a reference of its own.
 * - cucore_kernel: may be shared: lookups, queries, attribute calls and launches may run
 *   concurrently (per-device facts are read once, under the kernel's lock).
 *   cucore_kernel_declare_signature changes the layout without a lock: it must not race with
 *   any other use of the kernel or of an argument list made for it. An argument list is used
 *   by one thread at a time, including the launch that reads it.
 * - cucore_binary: read-only once opened: concurrent calls are safe, except
 *   cucore_binary_attach_ptx, which must not race with any other call on it.
 * - The status functions, code-type detection, the option table and the host occupancy model
 *   are pure. The compile cache's settings, statistics and directory are process-wide and
 *   locked; many processes may share one directory.
 *
 * @par For contributors
 * Every public declaration (function, type, field, enumerator, macro) needs a Doxygen
 * comment: a block opened with two stars before it, or one opened with two stars and `<`
 * after a field or enumerator. Say what it does, who owns what, the codes it returns beyond
 * the ones above, and thread safety where it differs from this list. Fields declared together
 * (`int a, b;`) share one comment inside a member group (`@{` ... `@}`), as cc_major and
 * cc_minor do. `make docs` builds this reference (build/docs/html); the CTest test `api_docs`
 * fails naming any declaration without one.
 */
#ifndef CUCORE_H
#define CUCORE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @defgroup version Version and export macros
 * @{
 */

/** Marks a public function: default visibility with GCC and Clang (the library is built with
 * hidden visibility), nothing elsewhere. */
#if defined(_WIN32)
#define CUCORE_API
#elif defined(__GNUC__)
#define CUCORE_API __attribute__((visibility("default")))
#else
#define CUCORE_API
#endif

#define CUCORE_VERSION_MAJOR 0        /**< Major version of this header. */
#define CUCORE_VERSION_MINOR 1        /**< Minor version of this header. */
#define CUCORE_VERSION_PATCH 0        /**< Patch version of this header. */
#define CUCORE_VERSION_STRING "0.1.0" /**< "MAJOR.MINOR.PATCH"; cucore_versions() reports it. */

/** @} */

/* ------------------------------------------------------------------------------------------ */
/* Status codes                                                                               */
/* ------------------------------------------------------------------------------------------ */

/**
 * @defgroup status Status codes
 * Statuses, their codes, names and texts, and the last error of the calling thread.
 * @{
 */

/** The one table of status codes: XX(NAME, value, "text"). It makes enum cucore_code and the
 * names and texts of cucore_status_name() and cucore_status_text(). */
#define CUCORE_STATUS_MAP(XX)                                                              \
  XX(OK, 0, "success")                                                                     \
  XX(INVALID_ARGUMENT, 1, "invalid argument")                                              \
  XX(HOST_OUT_OF_MEMORY, 2, "host memory allocation failed")                               \
  XX(DRIVER_NOT_FOUND, 3, "CUDA driver (libcuda.so.1) not found")                          \
  XX(DRIVER_STUB, 4, "the CUDA toolkit's stub libcuda was loaded instead of a driver")     \
  XX(DRIVER_TOO_OLD, 5, "CUDA driver too old for the requested function")                  \
  XX(NO_DEVICE, 6, "no CUDA-capable device")                                               \
  XX(INVALID_DEVICE, 7, "device ordinal out of range")                                     \
  XX(DRIVER_ERROR, 8, "CUDA driver call failed")                                           \
  XX(NVRTC_NOT_FOUND, 9, "NVRTC not found")                                                \
  XX(NVJITLINK_NOT_FOUND, 10, "nvJitLink not found")                                       \
  XX(NVVM_NOT_FOUND, 11, "libNVVM not found")                                              \
  XX(TOOLKIT_TOO_OLD, 12, "toolkit library too old")                                       \
  XX(NVRTC_ERROR, 13, "NVRTC call failed")                                                 \
  XX(NVJITLINK_ERROR, 14, "nvJitLink call failed")                                         \
  XX(NVVM_ERROR, 15, "libNVVM call failed")                                                \
  XX(COMPILE_ERROR, 16, "compilation failed")                                              \
  XX(LINK_ERROR, 17, "link failed")                                                        \
  XX(INVALID_BINARY, 18, "malformed or unsupported binary")                                \
  XX(NOT_FOUND, 19, "not found")                                                           \
  XX(NOT_SUPPORTED, 20, "not supported")                                                   \
  XX(DEVICE_OUT_OF_MEMORY, 21, "device memory allocation failed")                          \
  XX(ARG_COUNT, 22, "wrong number of kernel arguments")                                    \
  XX(ARG_SIZE, 23, "kernel argument of the wrong size")                                    \
  XX(ARG_TYPE, 24, "kernel argument of the wrong type")                                    \
  XX(ARG_ALIGNMENT, 25, "kernel argument misaligned")                                      \
  XX(ARG_NULL, 26, "NULL where a kernel argument value is needed")                         \
  XX(ARG_UNSET, 27, "kernel argument not set")                                             \
  XX(LAUNCH_CONFIG, 28, "invalid launch configuration")                                    \
  XX(LAUNCH_OUT_OF_RESOURCES, 29, "launch needs more resources than the device has")       \
  XX(KERNEL_FAULT, 30, "a kernel faulted; the context is unusable")                        \
  XX(NOT_READY, 31, "work not yet complete")                                               \
  XX(IO_ERROR, 32, "file input/output failed")                                             \
  XX(VERSION_MISMATCH, 33, "incompatible versions")                                        \
  XX(PARSE_ERROR, 34, "could not parse input")                                             \
  XX(INTERNAL, 35, "internal error in cucore")                                             \
  XX(STREAM_CAPTURE, 36, "not allowed while a stream is capturing, or the capture failed") \
  XX(GRAPH_UPDATE, 37, "the executable graph cannot take this update")                     \
  XX(OUT_OF_BOUNDS, 38, "memory range runs past the end of its allocation")                \
  XX(IN_USE, 39, "still in use")                                                           \
  XX(MISUSE, 40, "a handle used after it was destroyed, or not made by cucore")            \
  XX(UNKNOWN_OPTION, 41, "unknown option")

/** A status: the cucore code in bits 0-7, the source in bits 8-11, the native code above.
 * Compare CUCORE_CODE(status) with the CUCORE_* codes; 0 is CUCORE_OK. */
typedef int32_t cucore_status;

/** The cucore codes, one per row of CUCORE_STATUS_MAP (CUCORE_ followed by the row's NAME). */
enum cucore_code {
/** Makes one row of CUCORE_STATUS_MAP an enumerator; undefined again right after. */
#define CUCORE_XX_ENUM(name, value, text) CUCORE_##name = value,
  CUCORE_STATUS_MAP(CUCORE_XX_ENUM)
#undef CUCORE_XX_ENUM
      CUCORE_CODE_COUNT /**< The number of codes (they are 0 .. CUCORE_CODE_COUNT - 1). */
};
/**
 * @var CUCORE_OK
 * Success (always 0).
 * @var CUCORE_INVALID_ARGUMENT
 * A NULL pointer, an unknown enum value or flag, or a value out of range; the message names it.
 * @var CUCORE_HOST_OUT_OF_MEMORY
 * A host memory allocation failed.
 * @var CUCORE_DRIVER_NOT_FOUND
 * `libcuda.so.1` could not be loaded (`CUCORE_LIBCUDA` may name its full path).
 * @var CUCORE_DRIVER_STUB
 * The CUDA toolkit's stub libcuda was loaded instead of the NVIDIA driver.
 * @var CUCORE_DRIVER_TOO_OLD
 * The driver lacks an entry point the call needs; the message names it and the CUDA version.
 * @var CUCORE_NO_DEVICE
 * The driver sees no GPU, or the kernel was looked up where there was none.
 * @var CUCORE_INVALID_DEVICE
 * A device ordinal outside 0 .. count - 1; the message names the range.
 * @var CUCORE_DRIVER_ERROR
 * A driver call failed with a CUresult no other code covers (the CUresult is kept).
 * @var CUCORE_NVRTC_NOT_FOUND
 * NVRTC could not be loaded; the message lists every place looked at.
 * @var CUCORE_NVJITLINK_NOT_FOUND
 * nvJitLink could not be loaded; the message lists every place looked at.
 * @var CUCORE_NVVM_NOT_FOUND
 * libNVVM could not be loaded; the message lists every place looked at.
 * @var CUCORE_TOOLKIT_TOO_OLD
 * A toolkit library older than cucore needs, or lacking a function the call needs.
 * @var CUCORE_NVRTC_ERROR
 * An NVRTC call failed for a reason no other code covers (the nvrtcResult is kept).
 * @var CUCORE_NVJITLINK_ERROR
 * An nvJitLink call failed for a reason no other code covers (the nvJitLinkResult is kept).
 * @var CUCORE_NVVM_ERROR
 * A libNVVM call failed for a reason no other code covers (the nvvmResult is kept).
 * @var CUCORE_COMPILE_ERROR
 * The source did not compile; the program's log holds the compiler's messages.
 * @var CUCORE_LINK_ERROR
 * The inputs did not link; the linker's error log says why.
 * @var CUCORE_INVALID_BINARY
 * Code that is malformed, not of the type given, or holds nothing the GPU can run.
 * @var CUCORE_NOT_FOUND
 * A kernel, name expression or fatbin entry that does not exist; the message lists those that
 * do.
 * @var CUCORE_NOT_SUPPORTED
 * Something cucore, the device or the host model does not do; the message says what to do.
 * @var CUCORE_DEVICE_OUT_OF_MEMORY
 * A device allocation failed; the message names the size and what was free.
 * @var CUCORE_ARG_COUNT
 * Too many or too few kernel arguments.
 * @var CUCORE_ARG_SIZE
 * A kernel argument whose size is not the parameter's.
 * @var CUCORE_ARG_TYPE
 * A kernel argument of the wrong kind (a floating-point value for an integer or a pointer, or
 * the reverse).
 * @var CUCORE_ARG_ALIGNMENT
 * A by-value argument aligned unlike its parameter (also a misaligned cucore_memset_d32()).
 * @var CUCORE_ARG_NULL
 * A NULL value pointer for cucore_args_set_bytes() or cucore_args_push_bytes().
 * @var CUCORE_ARG_UNSET
 * A kernel parameter left without a value.
 * @var CUCORE_LAUNCH_CONFIG
 * A launch (or occupancy query) that can never run: block, grid, shared memory, clusters or a
 * cooperative grid; the message has the arithmetic.
 * @var CUCORE_LAUNCH_OUT_OF_RESOURCES
 * A block needs more registers or shared memory than the device or architecture has.
 * @var CUCORE_KERNEL_FAULT
 * A kernel faulted: the context is unusable and every later call on the device fails.
 * @var CUCORE_NOT_READY
 * Work not yet complete (stream and event queries return it without keeping a message).
 * @var CUCORE_IO_ERROR
 * A file or directory could not be read; the message names the path and the reason.
 * @var CUCORE_VERSION_MISMATCH
 * Code newer than the loaded library or driver can read (PTX ISA, LTO-IR, NVVM IR).
 * @var CUCORE_PARSE_ERROR
 * Text that does not parse (a PTX module, a kernel signature).
 * @var CUCORE_INTERNAL
 * A bug in cucore; please report the message.
 * @var CUCORE_STREAM_CAPTURE
 * A call that cannot be made while a stream is capturing into a graph (refused by cucore
 * before the driver saw it, so the capture goes on), or a capture the driver invalidated or
 * could not end; the message names the call, the capture and what to do.
 * @var CUCORE_GRAPH_UPDATE
 * An executable graph that cannot take an update (another shape, a changed node type or kernel
 * context...); the message names the node and the reason. Instantiate the new graph instead.
 * @var CUCORE_OUT_OF_BOUNDS
 * A copy, fill, texture, tensor map or DLPack tensor whose range runs past the end of the
 * allocation it starts in (or wraps around); the message gives both sizes and the offset.
 * @var CUCORE_IN_USE
 * A free or destroy refused because something still uses the object (texture or surface
 * objects, DLPack exports, live allocations of a pool); the message counts them.
 * @var CUCORE_MISUSE
 * A handle that is not live: destroyed already, or never made by cucore (like SQLITE_MISUSE).
 * Detection is best effort: it is certain for the most recently destroyed handles of each
 * kind and may miss older ones, whose memory the process may have reused; such calls remain
 * undefined behaviour.
 * @var CUCORE_UNKNOWN_OPTION
 * A compile option that no compiler knows (cucore_options_parse()); the message names it and
 * the closest known option where there is one. (An enum value out of range given to
 * cucore_options_set_string() or cucore_options_set_int() is CUCORE_INVALID_ARGUMENT.)
 */

/** Where the native code kept in a status came from. */
typedef enum cucore_source {
  CUCORE_SOURCE_NONE = 0,      /**< No native code is kept. */
  CUCORE_SOURCE_DRIVER = 1,    /**< a CUresult */
  CUCORE_SOURCE_NVRTC = 2,     /**< an nvrtcResult */
  CUCORE_SOURCE_NVJITLINK = 3, /**< an nvJitLinkResult */
  CUCORE_SOURCE_NVVM = 4,      /**< an nvvmResult */
  CUCORE_SOURCE_ERRNO = 5      /**< an errno value */
} cucore_source;

/** The cucore code of a status (what to compare against CUCORE_* names). */
#define CUCORE_CODE(status) ((int)((uint32_t)(status)&0xffu))

/** Name of a status's code, e.g.\ "CUCORE_ARG_COUNT" ("CUCORE_UNKNOWN_STATUS" for a code not
 * in the table). Never NULL; static storage. */
CUCORE_API const char *cucore_status_name(cucore_status status);
/** One-line English text of a status's code ("unknown status" for a code not in the table).
 * Never NULL; static storage. */
CUCORE_API const char *cucore_status_text(cucore_status status);
/** Which library the native code of a status came from (CUCORE_SOURCE_NONE when none). */
CUCORE_API cucore_source cucore_status_source(cucore_status status);
/** The native code kept in a status (CUresult, nvrtcResult, ...), 0 when none. */
CUCORE_API int cucore_status_native(cucore_status status);
/** The detailed message of the most recent failure on this thread: "" when there was none
 * since the thread started or since cucore_clear_error(). Like `errno`, it is NOT cleared when
 * a call succeeds: after a call that returned CUCORE_OK it still holds an older failure (or
 * one the call recovered from on its own), so read it only when the status a call returned is
 * not CUCORE_OK, or call cucore_clear_error() first. The buffer belongs to the thread and its
 * next failure overwrites it (copy the text to keep it); do not free it. */
CUCORE_API const char *cucore_last_error(void);
/** The status that goes with cucore_last_error(): that of the most recent failure on this
 * thread, CUCORE_OK when none since the thread started or since cucore_clear_error(). Like
 * cucore_last_error(), not cleared by a call that succeeds. */
CUCORE_API cucore_status cucore_last_status(void);
/** Forgets this thread's last failure: cucore_last_error() gives "" and cucore_last_status()
 * CUCORE_OK until the next failure. Always returns CUCORE_OK. */
CUCORE_API cucore_status cucore_clear_error(void);

/** @} */

/* ------------------------------------------------------------------------------------------ */
/* Versions and loaded libraries                                                              */
/* ------------------------------------------------------------------------------------------ */

/**
 * @defgroup versions Versions and loaded libraries
 * What was loaded at run time, from where, and which versions.
 * @{
 */

/** One run-time-loaded library. Strings are owned by cucore and live until process exit. */
typedef struct cucore_library_info {
  int loaded;        /**< 1 when found and usable */
  int version;       /**< e.g.\ 13000 for 13.0; 0 when unknown */
  const char *path;  /**< where it was loaded from, or NULL */
  const char *error; /**< why it is not usable, or NULL */
} cucore_library_info;

/** The versions of cucore, the driver and the toolkit libraries (cucore_versions()). */
typedef struct cucore_versions_info {
  const char *cucore;            /**< CUCORE_VERSION_STRING */
  cucore_library_info driver;    /**< libcuda.so.1; version is cuDriverGetVersion's */
  cucore_library_info nvrtc;     /**< NVRTC; version is major*1000 + minor*10 (nvrtcVersion) */
  cucore_library_info nvjitlink; /**< nvJitLink; version is major*1000 + minor*10 */
  cucore_library_info nvvm;      /**< libNVVM; version = major*1000 + minor*10 of nvvmVersion */
  int toolkit_headers;           /**< CUDA_VERSION of the headers cucore was built with */
  /** What turns PTX into cubins: "nvJitLink"; "driver (cuLinkCreate/...; no LTO)" when
   * nvJitLink is missing or too old (CUDA 12.0-12.2 lacks nvJitLinkVersion) and a GPU is
   * present; NULL when neither can (then only NVRTC's own cubins can be made). */
  const char *ptx_linker;
} cucore_versions_info;

/** Loads (once) whatever of the driver and toolkit can be found, and describes it.
 * Never fails for a missing library: each entry says why it is missing. Strings in `*out`
 * live until process exit. */
CUCORE_API cucore_status cucore_versions(cucore_versions_info *out);

/** @} */

/* ------------------------------------------------------------------------------------------ */
/* Files: the one careful reader the library and the command use                              */
/* ------------------------------------------------------------------------------------------ */

/**
 * @defgroup files Reading files
 * A whole file into memory, without surprises: only regular files, a size cap, never waiting.
 * @{
 */

/** The cap cucore_file_read applies when max_bytes is 0: 1 GiB. */
#define CUCORE_FILE_MAX_BYTES_DEFAULT ((uint64_t)1 << 30)

/** Reads the whole file at `path` into `*data` (malloc'd, with a NUL after the `*size` bytes;
 * free it with cucore_file_free). Only a regular file is read: a directory, FIFO, character
 * or block device, or socket is refused, naming its kind, without waiting for a writer or
 * reading an endless device. A file that reports size 0 but has content (/proc files) is
 * read to its end. "-" is standard input (a pipe, file or terminal), read to its end. At
 * most `max_bytes` are read (0: CUCORE_FILE_MAX_BYTES_DEFAULT). On failure `*data` is NULL
 * and `*size` 0.
 * @retval CUCORE_IO_ERROR the file cannot be opened or read (the errno is kept), is not a
 *         regular file, or is larger than the cap (the message names both sizes).
 * @retval CUCORE_HOST_OUT_OF_MEMORY no memory for the contents.
 * @retval CUCORE_INVALID_ARGUMENT a pointer argument is NULL. */
CUCORE_API cucore_status cucore_file_read(const char *path, uint64_t max_bytes, void **data,
                                          size_t *size);
/** Frees what cucore_file_read returned; NULL is a no-op. Always CUCORE_OK. */
CUCORE_API cucore_status cucore_file_free(void *data);

/** @} */

/* ------------------------------------------------------------------------------------------ */
/* Comparing outputs: the one element comparison the library and the command use              */
/* ------------------------------------------------------------------------------------------ */

/**
 * @defgroup compare Comparing outputs
 * Two buffers compared element by element within tolerances, as numpy.allclose does: the rule
 * of cucore_tune_run()'s check against its first configuration and of `cucore run --expect`.
 * @{
 */

/** What cucore_compare_elements() found. */
typedef struct cucore_compare_result {
  size_t mismatches;  /**< elements outside the tolerance */
  size_t first;       /**< index of the first mismatch (`count` when none) */
  double max_abs_err; /**< the largest |got - want| over the mismatches (0 when none; inf when a
                           NaN or an infinity differs) */
  double max_rel_err; /**< the largest |got - want| / |want| over the mismatches (0 when none;
                           inf when want is 0, or a NaN or an infinity differs) */
} cucore_compare_result;

/** Compares `count` elements of `got` with those of `want`, host memory holding elements of
 * `elem_size` bytes of kind `code`: CUCORE_DTYPE_INT or CUCORE_DTYPE_UINT (1, 2, 4 or 8 bytes),
 * CUCORE_DTYPE_FLOAT (2: binary16, 4 or 8) or CUCORE_DTYPE_BFLOAT (2), little-endian. An
 * element matches when |got - want| <= atol + rtol * |want|; a NaN matches only a NaN, an
 * infinity only itself. A negative `rtol` or `atol` takes numpy's default (1e-5, 1e-8); when
 * both are negative, integer elements match only when their bytes are equal. The first
 * min(mismatches, cap) mismatching indices go to `bad` (NULL when cap is 0), the counts and the
 * largest errors to *result (unchanged on failure). Pure.
 * @retval CUCORE_INVALID_ARGUMENT `result` NULL; `got` or `want` NULL with count > 0; `bad`
 *         NULL with cap > 0; `code` not one of the four; `elem_size` not one of its sizes;
 *         count x elem_size overflowing; `rtol` or `atol` NaN. The message names the argument. */
CUCORE_API cucore_status cucore_compare_elements(const void *got, const void *want, size_t count,
                                                 int code, size_t elem_size, double rtol,
                                                 double atol, size_t *bad, size_t cap,
                                                 cucore_compare_result *result);

/** @} */

/* ------------------------------------------------------------------------------------------ */
/* Devices                                                                                    */
/* ------------------------------------------------------------------------------------------ */

/**
 * @defgroup devices Devices
 * Enumeration, properties, and open devices holding the primary context.
 * @{
 */

/** Number of CUDA devices. Fails with CUCORE_DRIVER_NOT_FOUND, CUCORE_DRIVER_STUB, ... when the
 * driver is unusable (also CUCORE_DRIVER_TOO_OLD, or what a failed cuInit maps to); a usable
 * driver with no GPU gives *count = 0 and CUCORE_OK. */
CUCORE_API cucore_status cucore_device_get_count(int *count);

/** Properties of one device, read without creating a context. An attribute the driver does
 * not know reads 0. */
typedef struct cucore_device_props {
  int ordinal;         /**< 0-based device ordinal */
  char name[256];      /**< the device's name, e.g.\ "NVIDIA H100 80GB HBM3" */
  char uuid[37];       /**< "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"; "" when unknown */
  char pci_bus_id[32]; /**< "0000:00:00.0"; "" when unknown */
  /** @{ */
  int cc_major, cc_minor; /**< compute capability (major, minor) */
  /** @} */
  int arch;            /**< cc_major*10 + cc_minor, e.g.\ 90 */
  int sm_count;        /**< streaming multiprocessors */
  size_t total_memory; /**< bytes */
  /** @{ */
  int clock_khz, memory_clock_khz, memory_bus_width_bits; /**< SM clock, memory clock (kHz),
                                                              memory bus width (bits) */
  /** @} */
  int l2_cache_bytes;        /**< L2 cache size */
  int warp_size;             /**< threads per warp */
  int max_threads_per_block; /**< largest block the device allows */
  int max_block_dim[3];      /**< largest block per dimension (x, y, z) */
  int max_grid_dim[3];       /**< largest grid per dimension (x, y, z) */
  int max_threads_per_sm;    /**< resident threads per SM */
  int max_blocks_per_sm;     /**< resident blocks per SM */
  /** @{ */
  int regs_per_block, regs_per_sm; /**< 32-bit registers per block and per SM */
  /** @} */
  int shared_per_block;          /**< default per-block limit (48 KiB) */
  int shared_per_block_optin;    /**< opt-in maximum per block */
  int shared_per_sm;             /**< shared memory per SM */
  int reserved_shared_per_block; /**< the driver's per-block reservation */
  int const_memory_bytes;        /**< constant memory */
  int cooperative_launch;        /**< 1 if supported */
  int cluster_launch;            /**< 1 if supported */
  int managed_memory;            /**< 1 if managed memory is supported */
  int unified_addressing;        /**< 1 if the device shares an address space with the host */
  int async_engines;             /**< asynchronous copy engines */
  int ecc_enabled;               /**< 1 if ECC is on */
  int compute_mode;              /**< CUcomputemode value (0: default) */
  int integrated;                /**< 1 for a GPU integrated with the host's memory */
  int memory_pools;              /**< 1 if stream-ordered memory pools are supported
                                      (cucore_mem_alloc_async, cucore_mem_pool_create) */
  int mempool_ipc_fd;            /**< 1 if pools can be shared between processes through POSIX
                                      file descriptors (CUCORE_POOL_IPC) */
  int pageable_memory_access;    /**< 1 if kernels can read pageable host memory directly (HMM
                                      or ATS) */
  int concurrent_managed_access; /**< 1 if managed memory can be used by the device and the
                                      host at once (prefetch to the device works) */
} cucore_device_props;

/** Fills *out for device `ordinal` (0-based). CUCORE_INVALID_DEVICE names the range.
 * @retval CUCORE_INVALID_DEVICE `ordinal` is out of range.
 * @retval CUCORE_NO_DEVICE the driver sees no GPU. */
CUCORE_API cucore_status cucore_device_get_props(int ordinal, cucore_device_props *out);

/** A device in use: holds the device's primary context, so users never handle contexts.
 * Open with cucore_device_open(), close with cucore_device_close(). */
typedef struct cucore_device cucore_device;

/** CONSTRUCTOR: retains the primary context of device `ordinal` and makes it current on the
 * calling thread. Close `*out` with cucore_device_close().
 * @retval CUCORE_INVALID_DEVICE `ordinal` is out of range.
 * @retval CUCORE_NO_DEVICE the driver sees no GPU. */
CUCORE_API cucore_status cucore_device_open(int ordinal, cucore_device **out);
/** DESTRUCTOR: releases the primary context. NULL is a no-op. Objects created on the device
 * (streams, events, memory) must be destroyed first. The handle is freed even when the
 * release fails. */
CUCORE_API cucore_status cucore_device_close(cucore_device *dev);
/** Device ordinal of an open device. */
CUCORE_API cucore_status cucore_device_get_ordinal(const cucore_device *dev, int *ordinal);
/** Waits until all work on the device is done (cuCtxSynchronize). A faulted kernel is
 * reported as CUCORE_KERNEL_FAULT.
 * @retval CUCORE_KERNEL_FAULT a kernel faulted; the device is unusable from now on. */
CUCORE_API cucore_status cucore_device_synchronize(cucore_device *dev);
/** Free and total device memory in bytes. */
CUCORE_API cucore_status cucore_device_get_mem_info(cucore_device *dev, size_t *free_bytes,
                                                    size_t *total_bytes);
/** The range of stream priorities: `least` (numerically largest, usually 0) to `greatest`
 * (numerically smallest, e.g.\ -5). */
CUCORE_API cucore_status cucore_device_get_stream_priorities(cucore_device *dev, int *least,
                                                             int *greatest);
/** The native CUcontext (primary context) and CUdevice, for interoperation. Either out may be
 * NULL. The context stays owned by `dev`: do not destroy or release it. */
CUCORE_API cucore_status cucore_device_get_native(cucore_device *dev, void **cucontext,
                                                  int *cudevice);

/**
 * A device handle on a context the caller already has (the runtime API's, PyTorch's, one made
 * with cuCtxCreate): `cucontext` is a CUcontext, or NULL for the context current on this
 * thread. The context is borrowed, not retained: it must outlive the handle, and
 * cucore_device_close frees the handle only (the context stays current and alive). Work done
 * through this handle runs in that context.
 * Errors: CUCORE_INVALID_ARGUMENT when `cucontext` is NULL and no context is current;
 * CUCORE_DRIVER_ERROR when the context is unusable; CUCORE_NO_DEVICE without a GPU.
 */
CUCORE_API cucore_status cucore_device_from_context(void *cucontext, cucore_device **out);

/** @} */

/* ------------------------------------------------------------------------------------------ */
/* Streams and events                                                                         */
/* ------------------------------------------------------------------------------------------ */

/**
 * @defgroup streams Streams and events
 * Ordering work on a device, and timing it.
 * @{
 */

/** A stream of a device (CUstream). Create with cucore_stream_create() or take the device's
 * with cucore_stream_default(); destroy with cucore_stream_destroy(). */
typedef struct cucore_stream cucore_stream;
/** An event of a device (CUevent): create with cucore_event_create(), destroy with
 * cucore_event_destroy(). */
typedef struct cucore_event cucore_event;

/** Flags of cucore_stream_create(). */
enum {
  CUCORE_STREAM_DEFAULT = 0,     /**< synchronises with the legacy default stream */
  CUCORE_STREAM_NON_BLOCKING = 1 /**< does not synchronise with the legacy default stream */
};

/** CONSTRUCTOR: a new stream on `dev`. `priority` 0 is the default; lower numbers are higher
 * priority; a value outside the device's range is CUCORE_INVALID_ARGUMENT naming the range.
 * `flags` is CUCORE_STREAM_DEFAULT or CUCORE_STREAM_NON_BLOCKING. Destroy `*out` with
 * cucore_stream_destroy() before closing `dev`. */
CUCORE_API cucore_status cucore_stream_create(cucore_device *dev, unsigned flags, int priority,
                                              cucore_stream **out);
/** The device's legacy default stream (stream 0), as a handle owned by `dev`; do not destroy
 * (cucore_stream_destroy() ignores it). Valid while `dev` is open. */
CUCORE_API cucore_status cucore_stream_default(cucore_device *dev, cucore_stream **out);
/** DESTRUCTOR: destroys the stream. Pending work completes first (the driver's rule). NULL is
 * a no-op. The handle is freed even when the driver call fails. */
CUCORE_API cucore_status cucore_stream_destroy(cucore_stream *s);
/** Blocks until all work queued on the stream is done.
 * @retval CUCORE_KERNEL_FAULT a kernel on the device faulted. */
CUCORE_API cucore_status cucore_stream_synchronize(cucore_stream *s);
/** CUCORE_OK when all work is done, CUCORE_NOT_READY when some is pending.
 * @retval CUCORE_NOT_READY work is pending (no message is kept: it is not a failure). */
CUCORE_API cucore_status cucore_stream_query(cucore_stream *s);
/** Makes future work on `s` wait for `ev`. */
CUCORE_API cucore_status cucore_stream_wait_event(cucore_stream *s, cucore_event *ev);
/** The stream's priority. */
CUCORE_API cucore_status cucore_stream_get_priority(cucore_stream *s, int *priority);
/** The device a stream belongs to (borrowed). */
CUCORE_API cucore_status cucore_stream_get_device(cucore_stream *s, cucore_device **dev);
/** The native CUstream (NULL for the legacy default stream); still owned by `s`. */
CUCORE_API cucore_status cucore_stream_get_native(cucore_stream *s, void **custream);

/** Flags of cucore_event_create(), combined with `|`. */
enum {
  CUCORE_EVENT_DEFAULT = 0,        /**< records timing */
  CUCORE_EVENT_BLOCKING_SYNC = 1,  /**< synchronize sleeps instead of spinning */
  CUCORE_EVENT_DISABLE_TIMING = 2, /**< records no timing (cheaper; cannot be timed) */
  CUCORE_EVENT_INTERPROCESS = 4    /**< may be shared with other processes
                                        (cucore_event_export_ipc()); needs DISABLE_TIMING */
};

/** CONSTRUCTOR: a new event on `dev`. `flags` combines CUCORE_EVENT_BLOCKING_SYNC,
 * CUCORE_EVENT_DISABLE_TIMING and CUCORE_EVENT_INTERPROCESS (which needs DISABLE_TIMING).
 * Destroy `*out` with cucore_event_destroy() before closing `dev`. */
CUCORE_API cucore_status cucore_event_create(cucore_device *dev, unsigned flags,
                                             cucore_event **out);
/** DESTRUCTOR: destroys the event. NULL is a no-op. The handle is freed even when the driver
 * call fails. */
CUCORE_API cucore_status cucore_event_destroy(cucore_event *ev);
/** Records the event on a stream.
 * @retval CUCORE_INVALID_ARGUMENT the stream belongs to another device than the event. */
CUCORE_API cucore_status cucore_event_record(cucore_event *ev, cucore_stream *s);
/** Blocks until the event has completed.
 * @retval CUCORE_KERNEL_FAULT a kernel on the device faulted. */
CUCORE_API cucore_status cucore_event_synchronize(cucore_event *ev);
/** CUCORE_OK when complete, CUCORE_NOT_READY otherwise.
 * @retval CUCORE_NOT_READY not complete yet (no message is kept: it is not a failure). */
CUCORE_API cucore_status cucore_event_query(cucore_event *ev);
/** Milliseconds between two recorded, completed events.
 * @retval CUCORE_INVALID_ARGUMENT an event was created with CUCORE_EVENT_DISABLE_TIMING.
 * @retval CUCORE_NOT_READY an event has not completed yet. */
CUCORE_API cucore_status cucore_event_elapsed_ms(cucore_event *start, cucore_event *end, float *ms);

/**
 * The device's per-thread default stream (CU_STREAM_PER_THREAD: one implicit stream per host
 * thread that does not synchronise with other streams), as a handle owned by `dev`; do not
 * destroy it (destroying it is a no-op).
 */
CUCORE_API cucore_status cucore_stream_per_thread(cucore_device *dev, cucore_stream **out);
/**
 * Wraps a stream the caller created (a CUstream or cudaStream_t, or NULL / CU_STREAM_LEGACY /
 * CU_STREAM_PER_THREAD) so cucore can launch, copy and record on it. Not owned:
 * cucore_stream_destroy frees the wrapper and leaves the stream alone; the stream must
 * outlive the wrapper. The stream must belong to `dev`'s context (checked with
 * cuStreamGetCtx: CUCORE_INVALID_ARGUMENT names the stream's device otherwise; a runtime-API
 * stream belongs to the primary context, which cucore_device_open uses too).
 */
CUCORE_API cucore_status cucore_stream_wrap(cucore_device *dev, void *custream,
                                            cucore_stream **out);
/**
 * Wraps an event the caller created (a CUevent or cudaEvent_t) of `dev`'s context. Not owned:
 * cucore_event_destroy frees the wrapper only. Its creation flags are not known to cucore
 * (timing an event made with timing disabled is refused by the driver).
 * Errors: CUCORE_DRIVER_ERROR (from cuEventQuery) when it is not a usable event.
 */
CUCORE_API cucore_status cucore_event_wrap(cucore_device *dev, void *cuevent, cucore_event **out);

/** @} */

/* ------------------------------------------------------------------------------------------ */
/* Memory                                                                                     */
/* ------------------------------------------------------------------------------------------ */

/**
 * @defgroup memory Memory
 * Device and pinned host memory, copies and fills. Every call takes the device; a stream given
 * must belong to it (else CUCORE_INVALID_ARGUMENT). Without a stream (NULL) a copy or fill is
 * complete when the call returns, also for work later queued on streams created
 * CUCORE_STREAM_NON_BLOCKING: where the driver's synchronous call returns early (copies from
 * pageable memory, device-to-device copies, fills of device memory) cucore waits for the legacy
 * stream before returning (about a microsecond more). Pass a stream for overlap.
 * @{
 */

/** A device address (CUdeviceptr). */
typedef uint64_t cucore_devptr;

/** Allocates `bytes` (> 0) of device memory. CUCORE_DEVICE_OUT_OF_MEMORY names the size and
 * what was free. *out is 0 on failure. Free it with cucore_mem_free() on the same device.
 * @retval CUCORE_DEVICE_OUT_OF_MEMORY the device has not that much free. */
CUCORE_API cucore_status cucore_mem_alloc(cucore_device *dev, size_t bytes, cucore_devptr *out);
/** Frees device memory from cucore_mem_alloc (also cucore_mem_alloc_pitch,
 * cucore_mem_alloc_managed and imported IPC pointers). 0 is a no-op.
 * @retval CUCORE_INVALID_ARGUMENT `ptr` is not the start of a live allocation of `dev` (never
 *         allocated by cucore, freed already, inside an allocation, of another device, or from
 *         a stream-ordered pool: the message says which and names the right free).
 * @retval CUCORE_IN_USE a texture object or DLPack export still uses it. */
CUCORE_API cucore_status cucore_mem_free(cucore_device *dev, cucore_devptr ptr);
/** Allocates `bytes` (> 0) of page-locked (pinned) host memory, usable for async copies (and
 * from every device). *out is NULL on failure; free it with cucore_host_free(). */
CUCORE_API cucore_status cucore_host_alloc(cucore_device *dev, size_t bytes, void **out);
/** Frees pinned host memory from cucore_host_alloc. NULL is a no-op.
 * @retval CUCORE_INVALID_ARGUMENT not live memory of cucore_host_alloc (the message says what it
 *         is).
 * @retval CUCORE_IN_USE a DLPack export still uses it. */
CUCORE_API cucore_status cucore_host_free(cucore_device *dev, void *ptr);

/** Copies `bytes` from host `src` to device `dst`. With a stream (may be NULL for synchronous)
 * the copy is queued on it, and `src` must stay valid until the stream reaches it. A copy of
 * 0 bytes is a no-op; a NULL or 0 address otherwise is CUCORE_INVALID_ARGUMENT.
 * @retval CUCORE_OUT_OF_BOUNDS a range on memory cucore recorded runs past the end of its
 *         allocation (see @ref copies). */
CUCORE_API cucore_status cucore_memcpy_htod(cucore_device *dev, cucore_devptr dst, const void *src,
                                            size_t bytes, cucore_stream *s);
/** Copies `bytes` from device `src` to host `dst`, as cucore_memcpy_htod() (with a stream,
 * `dst` holds the data once the copy is done: synchronise the stream or an event). */
CUCORE_API cucore_status cucore_memcpy_dtoh(cucore_device *dev, void *dst, cucore_devptr src,
                                            size_t bytes, cucore_stream *s);
/** Copies `bytes` from device `src` to device `dst`, as cucore_memcpy_htod(). */
CUCORE_API cucore_status cucore_memcpy_dtod(cucore_device *dev, cucore_devptr dst,
                                            cucore_devptr src, size_t bytes, cucore_stream *s);
/** Sets `count` bytes to `value` (stream may be NULL).
 * @retval CUCORE_OUT_OF_BOUNDS the range runs past the end of its allocation. */
CUCORE_API cucore_status cucore_memset_d8(cucore_device *dev, cucore_devptr dst, uint8_t value,
                                          size_t count, cucore_stream *s);
/** Sets `count` 32-bit words to `value` (dst 4-byte aligned; stream may be NULL).
 * @retval CUCORE_ARG_ALIGNMENT `dst` is not 4-byte aligned. */
CUCORE_API cucore_status cucore_memset_d32(cucore_device *dev, cucore_devptr dst, uint32_t value,
                                           size_t count, cucore_stream *s);

/** @} */

/* ------------------------------------------------------------------------------------------ */
/* Memory facts: what cucore knows of an address, bounds checks, strict pointer checks        */
/* ------------------------------------------------------------------------------------------ */

/**
 * @defgroup memory_facts Memory facts and checks
 * Every allocation cucore makes (device, pitched, pooled, managed, pinned, pinned-pool) and
 * every host range it registers or imports is recorded: its start, size, kind, device and pool.
 * Copies, fills, textures, tensor maps and DLPack exports are checked against that record
 * before the driver sees them: a range that runs past the end of its allocation is
 * CUCORE_OUT_OF_BOUNDS naming both sizes and the offset, never a fault. Addresses cucore did
 * not allocate (the caller's malloc, memory of another library) are passed through unchecked,
 * unless CUCORE_MEM_CHECK_FOREIGN asks the driver about them.
 *
 * The record is a balanced tree under a read-write lock: lookups (every copy) share the lock,
 * allocations and frees take it briefly. All calls here are thread-safe.
 * @{
 */

/** Turns a host pointer into the address type the unified calls take (cucore_memcpy(),
 * cucore_pointer_get_facts(), ...): CUDA uses one address space for host and device. */
#define CUCORE_HOST_ADDR(p) ((cucore_devptr)(uintptr_t)(p))

/** What cucore made an address range with (cucore_pointer_facts::kind). */
typedef enum cucore_mem_kind {
  CUCORE_MEM_UNKNOWN = 0,         /**< not recorded by cucore */
  CUCORE_MEM_DEVICE = 1,          /**< cucore_mem_alloc() */
  CUCORE_MEM_DEVICE_PITCHED = 2,  /**< cucore_mem_alloc_pitch() */
  CUCORE_MEM_POOL = 3,            /**< stream-ordered, from a device pool
                                       (cucore_mem_alloc_async(), cucore_mem_pool_alloc_async()) */
  CUCORE_MEM_MANAGED = 4,         /**< cucore_mem_alloc_managed() */
  CUCORE_MEM_PINNED = 5,          /**< cucore_host_alloc() */
  CUCORE_MEM_PINNED_POOL = 6,     /**< a block of a pinned host pool (cucore_host_pool_alloc()) */
  CUCORE_MEM_REGISTERED = 7,      /**< caller memory page-locked by cucore_host_register() */
  CUCORE_MEM_IPC_IMPORTED = 8,    /**< imported from another process
                                       (cucore_mem_pool_import_pointer()) */
  CUCORE_MEM_DLPACK_IMPORTED = 9, /**< a tensor of another library (cucore_dlpack_import()) */
  CUCORE_MEM_GRAPH = 10,          /**< an allocation node's memory, owned by its graph
                                       (cucore_graph_add_mem_alloc_node()) */
  CUCORE_MEM_VMM = 11             /**< mapped virtual memory (cucore_vmm_map(), a
                                       cucore_vmm_buffer) */
} cucore_mem_kind;

/** "device", "pinned-pool", ... for a kind ("unknown" for a value not in the enum). Never
 * NULL; static storage. */
CUCORE_API const char *cucore_mem_kind_name(cucore_mem_kind kind);

/** Where memory physically is, as the driver reports it (cucore_pointer_facts::type). */
typedef enum cucore_mem_type {
  CUCORE_MEMTYPE_UNKNOWN = 0, /**< the driver does not know the address (pageable host memory,
                                   freed memory, or no address at all) */
  CUCORE_MEMTYPE_DEVICE = 1,  /**< device memory */
  CUCORE_MEMTYPE_HOST = 2,    /**< page-locked host memory (pinned or registered) */
  CUCORE_MEMTYPE_MANAGED = 3  /**< managed (unified) memory */
} cucore_mem_type;

/** Everything known of one address: cucore's record combined with the driver's answers
 * (cuPointerGetAttributes, cuMemGetAddressRange). Filled by cucore_pointer_get_facts(). */
typedef struct cucore_pointer_facts {
  cucore_mem_type type;         /**< the driver's view */
  cucore_mem_kind kind;         /**< cucore's view: CUCORE_MEM_UNKNOWN when cucore did not record
                                 the address */
  int device;                   /**< ordinal of the device the memory belongs to or was registered
                                 with; -1 when none (pinned pools serve every device) */
  cucore_devptr base;           /**< start of the allocation (cucore's record, else the driver's
                                 range; 0 when neither knows) */
  uint64_t size;                /**< bytes of the allocation as asked for (cucore's record), else
                                 the driver's range; 0 when unknown */
  uint64_t offset;              /**< the address minus `base` */
  cucore_devptr device_pointer; /**< the address kernels use (differs from the host address
                                     only for registered host memory); 0 when none */
  void *host_pointer;           /**< the address the host uses; NULL when the host cannot */
  void *cupool;                 /**< the CUmemoryPool it came from; NULL when not pooled */
  int freed;                    /**< 1 when the address is in a range cucore freed recently
                                 (kind is then the kind it had) */
  unsigned users;               /**< texture and surface objects and DLPack exports using it */
} cucore_pointer_facts;

/** Fills *out for any address (host addresses through CUCORE_HOST_ADDR()). Never fails for an
 * address nobody knows: type and kind are then UNKNOWN. Asks the driver only when a device is
 * present (without one, the driver's fields stay zero). */
CUCORE_API cucore_status cucore_pointer_get_facts(cucore_devptr addr, cucore_pointer_facts *out);

/** Process-wide checking flags (cucore_mem_set_checks()), combined with `|`. */
enum {
  /** Unknown addresses in copies and fills are asked of the driver (cuPointerGetAttributes):
   * when the driver knows their allocation, the range is bounds-checked against it. Costs one
   * driver query per unknown address (about 0.3-1 us); off by default. */
  CUCORE_MEM_CHECK_FOREIGN = 1,
  /** Every kernel argument list checks the pointers bound to it (cucore_args_set_ptr(),
   * cucore_args_push_ptr(), host pointers, and 64-bit integers bound to pointer parameters):
   * the address must be NULL or accessible from the device current on the binding thread
   * (device memory of that device or of a peer with access enabled, managed memory, mapped
   * host memory), and not freed. Pageable host memory (malloc, the stack) is refused, except on
   * devices that read it directly (CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS: HMM or ATS
   * systems), where an address the driver does not know passes. An address past the end of a
   * graph allocation, in the 64 KiB page it ends in (addresses the driver keeps for graph
   * memory), is refused as CUCORE_OUT_OF_BOUNDS. Off by default;
   * cucore_args_check_pointers() turns it on for one list and names its device.
   * Cost, per pointer bound: a pointer cucore recorded on the same device (or managed or pinned
   * memory) costs one registry lookup under a shared lock (tens of ns, against about 10 ns for
   * an unchecked bind); any other address asks the driver (cuPointerGetAttributes and three
   * cuPointerGetAttribute calls, about 1-2 us). Checking happens when the argument is bound,
   * not at each launch, so a list bound once and launched many times pays once. */
  CUCORE_MEM_CHECK_KERNEL_POINTERS = 2
};

/** Sets the process-wide checking flags (CUCORE_MEM_CHECK_FOREIGN,
 * CUCORE_MEM_CHECK_KERNEL_POINTERS); 0 turns both off (the default). Takes effect for calls
 * that start afterwards, on every thread. */
CUCORE_API cucore_status cucore_mem_set_checks(unsigned flags);
/** The process-wide checking flags. */
CUCORE_API cucore_status cucore_mem_get_checks(unsigned *flags);

/** Checks that kernels on `dev` may read and write `bytes` at `addr`: the checks
 * CUCORE_MEM_CHECK_KERNEL_POINTERS makes, on demand. `bytes` 0 checks the address only.
 * @retval CUCORE_INVALID_ARGUMENT the address is freed, pageable host memory, or memory of
 *         another device without peer access; the message says which.
 * @retval CUCORE_OUT_OF_BOUNDS the range runs past the end of its allocation, or starts past
 *         the end of a graph allocation in the 64 KiB page it ends in. */
CUCORE_API cucore_status cucore_pointer_check_access(cucore_device *dev, cucore_devptr addr,
                                                     size_t bytes);

/** @cond CUCORE_INTERNAL */
struct cucore_args;
/** @endcond */

/** Turns strict pointer checks on for one kernel argument list: from now on every pointer
 * bound to `args` (as cucore_mem_set_checks()'s CUCORE_MEM_CHECK_KERNEL_POINTERS describes) is
 * checked to be accessible from `dev`, the device the list will be launched on. A failing
 * pointer is the setter's error (kept in the list like any other). NULL `dev` turns the list's
 * checks off again (the process-wide flag still applies). */
CUCORE_API cucore_status cucore_args_check_pointers(struct cucore_args *args, cucore_device *dev);

/** @} */

/* ------------------------------------------------------------------------------------------ */
/* Device memory pools: stream-ordered allocation (cuMemAllocAsync and its pools)             */
/* ------------------------------------------------------------------------------------------ */

/**
 * @defgroup mempool Device memory pools
 * Stream-ordered allocation: an allocation is made and freed in the order of a stream's work,
 * and the pool keeps freed memory for reuse, so an allocation per step costs about as much as
 * a kernel launch instead of a device synchronisation. The device's default pool serves
 * cucore_mem_alloc_async(); cucore_mem_pool_create() makes pools with their own release
 * threshold, reuse policy, maximum size, peer access and IPC sharing.
 *
 * Every allocation is recorded: a free of an address that is not a live allocation, a free on
 * another pool than the one it came from, and destroying a pool that still has allocations are
 * refused with a message. Thread-safe; a pool handle must not be destroyed while other threads
 * use it.
 * @{
 */

/** A device memory pool (CUmemoryPool): create with cucore_mem_pool_create(), take the
 * device's default with cucore_mem_pool_default(), import with cucore_mem_pool_import_fd();
 * destroy with cucore_mem_pool_destroy(). */
typedef struct cucore_mem_pool cucore_mem_pool;

/** Pool flags (cucore_mem_pool_props::flags). */
enum {
  /** The pool can be shared with other processes through a POSIX file descriptor
   * (CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR): cucore_mem_pool_export_fd(). */
  CUCORE_POOL_IPC = 1
};

/** Reuse policies a pool may be denied (cucore_mem_pool_props::reuse_off). All are on by
 * default. */
enum {
  /** Do not reuse memory freed on another stream even when an event orders the two
   * (CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES). */
  CUCORE_POOL_NO_REUSE_FOLLOW_EVENTS = 1,
  /** Do not reuse completed frees that nothing orders
   * (CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC). */
  CUCORE_POOL_NO_REUSE_OPPORTUNISTIC = 2,
  /** Do not insert stream dependencies to reuse memory
   * (CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES). */
  CUCORE_POOL_NO_REUSE_INTERNAL_DEPENDENCIES = 4
};

/** How a new pool behaves. Zero-initialise and set what you need: all zeros is the driver's
 * default pool behaviour. */
typedef struct cucore_mem_pool_props {
  unsigned flags; /**< CUCORE_POOL_IPC, or 0 */
  /** Bytes the pool keeps reserved when synchronising instead of giving them back to the
   * device (CU_MEMPOOL_ATTR_RELEASE_THRESHOLD). 0 gives everything unused back at each
   * synchronisation; UINT64_MAX keeps everything. Keep it high for alloc-per-step loops. */
  uint64_t release_threshold;
  /** Most bytes the pool may reserve; 0 is the driver's default (no limit). A non-zero value
   * needs a driver for CUDA 12.2 or newer (CUCORE_DRIVER_TOO_OLD otherwise). */
  size_t max_size;
  unsigned reuse_off; /**< CUCORE_POOL_NO_REUSE_* bits, or 0 */
} cucore_mem_pool_props;

/** CONSTRUCTOR: a new pool of device memory on `dev` (cuMemPoolCreate). `props` may be NULL
 * for the defaults. Destroy `*out` with cucore_mem_pool_destroy() before closing `dev`.
 * @retval CUCORE_NOT_SUPPORTED the device has no memory pools, or no POSIX descriptor sharing
 *         for CUCORE_POOL_IPC.
 * @retval CUCORE_DRIVER_TOO_OLD `max_size` is set and the driver predates CUDA 12.2. */
CUCORE_API cucore_status cucore_mem_pool_create(cucore_device *dev,
                                                const cucore_mem_pool_props *props,
                                                cucore_mem_pool **out);
/** CONSTRUCTOR: a handle on the device's default pool (cuDeviceGetDefaultMemPool), the pool
 * cucore_mem_alloc_async() uses unless another was made current with cuDeviceSetMemPool.
 * Destroying the handle leaves the pool alone. Each call gives a new handle. */
CUCORE_API cucore_status cucore_mem_pool_default(cucore_device *dev, cucore_mem_pool **out);
/** DESTRUCTOR: destroys a pool cucore created (cuMemPoolDestroy) or frees the handle of a
 * default or imported pool. NULL is a no-op. Refused while allocations made from it (or
 * pointers imported through it) are live: free them first.
 * @retval CUCORE_IN_USE allocations are live; the message counts them. The pool is kept. */
CUCORE_API cucore_status cucore_mem_pool_destroy(cucore_mem_pool *pool);
/** The device a pool belongs to (borrowed). */
CUCORE_API cucore_status cucore_mem_pool_get_device(const cucore_mem_pool *pool,
                                                    cucore_device **dev);
/** The native CUmemoryPool, still owned by `pool`. */
CUCORE_API cucore_status cucore_mem_pool_get_native(const cucore_mem_pool *pool, void **cupool);

/** Allocates `bytes` (> 0) in stream order on `s` from the current pool of the stream's device
 * (cuMemAllocAsync): work queued on `s` after this call may use it; other streams must wait on
 * `s` first. Free it with cucore_mem_free_async().
 * @retval CUCORE_DEVICE_OUT_OF_MEMORY the message gives the bytes asked for, the device's free
 *         and total memory, and the pool's reserved and used bytes. */
CUCORE_API cucore_status cucore_mem_alloc_async(cucore_stream *s, size_t bytes, cucore_devptr *out);
/** Frees in stream order on `s` (cuMemFreeAsync) an allocation of any pool (also a pointer
 * imported from another process). The memory may be reused once `s` reaches the free. 0 is a
 * no-op.
 * @retval CUCORE_INVALID_ARGUMENT not a live stream-ordered allocation (never allocated, freed
 *         already, or allocated otherwise: the message names the right free).
 * @retval CUCORE_IN_USE a texture object or a DLPack export still uses it. */
CUCORE_API cucore_status cucore_mem_free_async(cucore_stream *s, cucore_devptr ptr);
/** Allocates `bytes` (> 0) from `pool` in stream order on `s` (cuMemAllocFromPoolAsync). The
 * stream may be of another device than the pool's when that device has access to the pool.
 * @retval CUCORE_INVALID_ARGUMENT the pool is imported (imported pools cannot allocate).
 * @retval CUCORE_DEVICE_OUT_OF_MEMORY as cucore_mem_alloc_async(), also when the pool's
 *         max_size is reached. */
CUCORE_API cucore_status cucore_mem_pool_alloc_async(cucore_mem_pool *pool, cucore_stream *s,
                                                     size_t bytes, cucore_devptr *out);
/** Frees in stream order an allocation that came from `pool`, as cucore_mem_free_async().
 * @retval CUCORE_INVALID_ARGUMENT it came from another pool (the message names both), or is not
 *         a live allocation. */
CUCORE_API cucore_status cucore_mem_pool_free_async(cucore_mem_pool *pool, cucore_stream *s,
                                                    cucore_devptr ptr);

/** Pool attributes; the values equal CUmemPool_attribute's. */
typedef enum cucore_pool_attr {
  CUCORE_POOL_REUSE_FOLLOW_EVENT_DEPENDENCIES = 1,   /**< 0 or 1 (settable) */
  CUCORE_POOL_REUSE_ALLOW_OPPORTUNISTIC = 2,         /**< 0 or 1 (settable) */
  CUCORE_POOL_REUSE_ALLOW_INTERNAL_DEPENDENCIES = 3, /**< 0 or 1 (settable) */
  CUCORE_POOL_RELEASE_THRESHOLD = 4, /**< bytes kept reserved when idle (settable) */
  CUCORE_POOL_RESERVED_CURRENT = 5,  /**< bytes of device memory the pool holds now */
  CUCORE_POOL_RESERVED_HIGH = 6,     /**< most bytes held since the last reset (settable to 0) */
  CUCORE_POOL_USED_CURRENT = 7,      /**< bytes handed out and not yet freed */
  CUCORE_POOL_USED_HIGH = 8          /**< most bytes handed out since the last reset
                                           (settable to 0) */
} cucore_pool_attr;

/** Reads one attribute (cuMemPoolGetAttribute); the 0/1 attributes read as 0 or 1. */
CUCORE_API cucore_status cucore_mem_pool_get_attr(cucore_mem_pool *pool, cucore_pool_attr attr,
                                                  uint64_t *value);
/** Sets one attribute (cuMemPoolSetAttribute). The high-water marks take only 0 (a reset);
 * the current counters are read-only.
 * @retval CUCORE_INVALID_ARGUMENT a read-only attribute, or a value it cannot take. */
CUCORE_API cucore_status cucore_mem_pool_set_attr(cucore_mem_pool *pool, cucore_pool_attr attr,
                                                  uint64_t value);

/** A pool's state at once (cucore_mem_pool_get_stats()). */
typedef struct cucore_mem_pool_stats {
  uint64_t reserved_current;  /**< bytes of device memory the pool holds */
  uint64_t reserved_high;     /**< most held since the last reset */
  uint64_t used_current;      /**< bytes handed out and not yet freed */
  uint64_t used_high;         /**< most handed out since the last reset */
  uint64_t release_threshold; /**< bytes kept reserved when idle */
  uint64_t live_allocations;  /**< allocations cucore made from the pool and has not freed
                                   (0 for a default pool: its allocations are not counted) */
  uint64_t live_bytes;        /**< their bytes, as asked for */
} cucore_mem_pool_stats;

/** Reads the pool's counters and threshold (several cuMemPoolGetAttribute calls). */
CUCORE_API cucore_status cucore_mem_pool_get_stats(cucore_mem_pool *pool,
                                                   cucore_mem_pool_stats *out);
/** Resets both high-water marks (reserved and used) to the current values. */
CUCORE_API cucore_status cucore_mem_pool_reset_high_water(cucore_mem_pool *pool);
/** Gives unused memory back until the pool holds at most `keep_bytes` (cuMemPoolTrimTo).
 * Memory of live allocations, and of frees not yet reached by their stream, stays. */
CUCORE_API cucore_status cucore_mem_pool_trim(cucore_mem_pool *pool, size_t keep_bytes);

/** Access of a device to memory of another (pools, peers). Values equal CUmemAccess_flags'. */
typedef enum cucore_access {
  CUCORE_ACCESS_NONE = 0,     /**< no access */
  CUCORE_ACCESS_READ = 1,     /**< read only */
  CUCORE_ACCESS_READWRITE = 3 /**< read and write */
} cucore_access;

/** Lets kernels on `peer` access allocations of `pool` (cuMemPoolSetAccess); the pool's own
 * device always has read-write access.
 * @retval CUCORE_NOT_SUPPORTED `peer` cannot access the pool's device (cuDeviceCanAccessPeer
 *         is 0). */
CUCORE_API cucore_status cucore_mem_pool_set_access(cucore_mem_pool *pool, cucore_device *peer,
                                                    cucore_access access);
/** The access `dev` has to allocations of `pool` (cuMemPoolGetAccess). */
CUCORE_API cucore_status cucore_mem_pool_get_access(cucore_mem_pool *pool, cucore_device *dev,
                                                    cucore_access *access);

/** @} */

/* ------------------------------------------------------------------------------------------ */
/* IPC: pools and their allocations shared with other processes                               */
/* ------------------------------------------------------------------------------------------ */

/**
 * @defgroup ipc Sharing memory between processes (IPC)
 * A pool created with CUCORE_POOL_IPC is exported as a POSIX file descriptor
 * (cuMemPoolExportToShareableHandle); another process imports it
 * (cuMemPoolImportFromShareableHandle) after receiving the descriptor over a Unix socket
 * (cucore_ipc_send_fd() / cucore_ipc_recv_fd() pass it with SCM_RIGHTS; a process may also take
 * it from another with pidfd_getfd(2) where ptrace rules allow). Each allocation is then
 * exported as a cucore_ipc_pointer (64 bytes of driver data plus its size), sent any way
 * at all, and imported into the imported pool; the importer's copies are bounds-checked
 * against the exporter's size.
 *
 * Order, from the driver's rules: the exporter's allocation must be complete (its stream
 * synchronised) before the importer uses it; the importer frees its imported pointer, and that
 * free completes, before the exporter frees the allocation. See examples/ipc_pool.c.
 * @{
 */

/** Writes a new file descriptor for `pool` (made with CUCORE_POOL_IPC) into *fd. The caller
 * owns the descriptor: send it, then close it.
 * @retval CUCORE_INVALID_ARGUMENT the pool was not created with CUCORE_POOL_IPC. */
CUCORE_API cucore_status cucore_mem_pool_export_fd(cucore_mem_pool *pool, int *fd);
/** CONSTRUCTOR: imports a pool exported by another process from its descriptor. `fd` stays the
 * caller's (close it after). The imported pool cannot allocate; it hands out the exporter's
 * allocations (cucore_mem_pool_import_pointer()). Destroy it after freeing those. */
CUCORE_API cucore_status cucore_mem_pool_import_fd(cucore_device *dev, int fd,
                                                   cucore_mem_pool **out);

/** One exported allocation: plain bytes, safe to send through a pipe, a socket or a file. */
typedef struct cucore_ipc_pointer {
  unsigned char data[64]; /**< the driver's export data (CUmemPoolPtrExportData) */
  uint64_t bytes;         /**< the allocation's size as asked for, for the importer's checks */
  uint32_t magic;         /**< identifies a cucore_ipc_pointer ("CCIP") */
  uint32_t version;       /**< layout version (1) */
} cucore_ipc_pointer;

/** Describes allocation `ptr` of `pool` for another process (cuMemPoolExportPointer).
 * @retval CUCORE_INVALID_ARGUMENT `ptr` is not the start of a live allocation of `pool`. */
CUCORE_API cucore_status cucore_mem_pool_export_pointer(cucore_mem_pool *pool, cucore_devptr ptr,
                                                        cucore_ipc_pointer *out);
/** Maps an exported allocation into this process through the imported `pool`
 * (cuMemPoolImportPointer). Free it with cucore_mem_pool_free_async() (or
 * cucore_mem_free_async(), or cucore_mem_free()) before the exporter frees it.
 * @retval CUCORE_INVALID_ARGUMENT `in` is not a cucore_ipc_pointer, or `pool` is not imported. */
CUCORE_API cucore_status cucore_mem_pool_import_pointer(cucore_mem_pool *pool,
                                                        const cucore_ipc_pointer *in,
                                                        cucore_devptr *out);

/** Sends file descriptor `fd` over the connected Unix socket `sock` (SCM_RIGHTS), with `bytes`
 * of `data` (at least 1 byte is sent; `data` may be NULL when `bytes` is 0). The descriptor
 * stays open here.
 * @retval CUCORE_IO_ERROR sendmsg failed (the errno is kept in the status). */
CUCORE_API cucore_status cucore_ipc_send_fd(int sock, int fd, const void *data, size_t bytes);
/** Receives a descriptor sent by cucore_ipc_send_fd() into *fd (a new descriptor the caller
 * owns), and exactly `bytes` of data into `data`.
 * @retval CUCORE_IO_ERROR recvmsg failed, the peer closed, no descriptor came, or the data was
 *         shorter than `bytes`. */
CUCORE_API cucore_status cucore_ipc_recv_fd(int sock, int *fd, void *data, size_t bytes);

/** @} */

/* ------------------------------------------------------------------------------------------ */
/* Pinned host memory: a pool of page-locked blocks, and registration of caller memory        */
/* ------------------------------------------------------------------------------------------ */

/**
 * @defgroup hostpool Pinned host memory pools and registration
 * cuMemHostAlloc + cuMemFreeHost cost about a millisecond per pair; a program that needs
 * pinned staging buffers per step keeps them in a cucore_host_pool, whose blocks are reused.
 * After warm-up, a pool without byte limits serves each thread from a small cache of its own
 * (up to 4 free blocks per size class and 64 MiB per thread): an allocation is a few stores,
 * and a free of a block the same thread allocated is one atomic compare-and-swap, which also
 * refuses a second free. Other frees, pools with limits (whose counts are exact at every
 * call) and cache misses take the pool's lock. Sizes are rounded up to classes
 * (4 KiB, then four classes per power of two: 5, 6, 7, 8 KiB, 10, 12, 14, 16 KiB, ...; at most
 * 25 % over the size asked for). Blocks are PORTABLE and mapped: usable for async copies with
 * every device, and by kernels at the same address. Thread-safe.
 *
 * Registration page-locks memory the caller already has (cuMemHostRegister) and records the
 * range, so copies from and to it are bounds-checked.
 * @{
 */

/** A pool of pinned host blocks: create with cucore_host_pool_create(), destroy with
 * cucore_host_pool_destroy(). */
typedef struct cucore_host_pool cucore_host_pool;

/** How a pinned pool behaves. Zero-initialise and set what you need. */
typedef struct cucore_host_pool_props {
  /** Most bytes of free blocks kept for reuse; a freed block that would pass it is given back
   * to the driver at once. 0 means no limit. */
  size_t max_cached_bytes;
  /** Most bytes in use and cached together; an allocation that would pass it fails with
   * CUCORE_HOST_OUT_OF_MEMORY. 0 means no limit. */
  size_t max_total_bytes;
} cucore_host_pool_props;

/** CONSTRUCTOR: an empty pool. Blocks are allocated in `dev`'s context (portable to every
 * device). Destroy `*out` before closing `dev`. `props` may be NULL. */
CUCORE_API cucore_status cucore_host_pool_create(cucore_device *dev,
                                                 const cucore_host_pool_props *props,
                                                 cucore_host_pool **out);
/** DESTRUCTOR: gives every cached block back and frees the pool. NULL is a no-op.
 * @retval CUCORE_IN_USE blocks are still allocated (the message counts them); the pool is
 *         kept. */
CUCORE_API cucore_status cucore_host_pool_destroy(cucore_host_pool *pool);
/** Allocates `bytes` (> 0) of pinned host memory, page-aligned, from a cached block of its size
 * class or a new one. Free it with cucore_host_pool_free() on the same pool.
 * @retval CUCORE_HOST_OUT_OF_MEMORY the driver could not pin that much (after giving the
 *         cache back), or max_total_bytes would be passed. */
CUCORE_API cucore_status cucore_host_pool_alloc(cucore_host_pool *pool, size_t bytes, void **out);
/** Returns a block to its pool for reuse. NULL is a no-op. Async copies using the block must
 * be complete (synchronise their stream first).
 * @retval CUCORE_INVALID_ARGUMENT not a live block of this pool (another pool's, freed
 *         already, or not from a pool); the message says which.
 * @retval CUCORE_IN_USE a DLPack export still uses it. */
CUCORE_API cucore_status cucore_host_pool_free(cucore_host_pool *pool, void *ptr);
/** Gives cached blocks back to the driver until at most `keep_bytes` are cached (largest
 * first). Blocks in use stay. The pool's lists and the calling thread's cache are trimmed at
 * once; another thread's cache (a few blocks) goes back to the pool's lists at that thread's
 * next call on the pool, or when it exits, for the next trim; destroying the pool releases
 * every block wherever it is cached. */
CUCORE_API cucore_status cucore_host_pool_trim(cucore_host_pool *pool, size_t keep_bytes);

/** A pinned pool's counters (cucore_host_pool_get_stats()). */
typedef struct cucore_host_pool_stats {
  uint64_t in_use_blocks;   /**< blocks handed out */
  uint64_t in_use_bytes;    /**< their bytes as asked for */
  uint64_t in_use_capacity; /**< their bytes as allocated (size classes) */
  uint64_t cached_blocks;   /**< free blocks kept for reuse */
  uint64_t cached_bytes;    /**< their bytes */
  uint64_t reserved_high;   /**< most bytes pinned at once (in use + cached) since the last
                                  reset */
  uint64_t hits;            /**< allocations served from the cache */
  uint64_t misses;          /**< allocations that pinned a new block */
  uint64_t driver_frees;    /**< blocks given back to the driver */
} cucore_host_pool_stats;

/** Reads the pool's counters. */
CUCORE_API cucore_status cucore_host_pool_get_stats(cucore_host_pool *pool,
                                                    cucore_host_pool_stats *out);
/** Resets reserved_high to the bytes pinned now, and the hit and miss counts to 0. */
CUCORE_API cucore_status cucore_host_pool_reset_high_water(cucore_host_pool *pool);
/** The bytes a pinned pool allocates for a request of `bytes` (its size class). Pure.
 * @retval CUCORE_INVALID_ARGUMENT `bytes` is 0 or above the largest class (1 TiB). */
CUCORE_API cucore_status cucore_host_pool_get_class_size(size_t bytes, size_t *class_bytes);

/** Flags of cucore_host_register(), combined with `|`; they equal CU_MEMHOSTREGISTER_*. */
enum {
  CUCORE_HOST_REGISTER_PORTABLE = 1,  /**< page-locked for every context, not only `dev`'s */
  CUCORE_HOST_REGISTER_DEVICEMAP = 2, /**< mapped for kernels (cucore_host_get_device_pointer()) */
  CUCORE_HOST_REGISTER_IOMEMORY = 4,  /**< the range is I/O memory (a PCI BAR), not RAM */
  CUCORE_HOST_REGISTER_READ_ONLY = 8  /**< the device only reads it (needs the device's
                                           READ_ONLY_HOST_REGISTER_SUPPORTED) */
};

/** Page-locks `bytes` of the caller's memory at `ptr` (cuMemHostRegister) and records the
 * range: copies from and to it are then async-capable and bounds-checked. Undo with
 * cucore_host_unregister() before freeing the memory.
 * @retval CUCORE_INVALID_ARGUMENT unknown flags, a range that wraps, or a range that overlaps
 *         one already registered or pinned by cucore (the message names it).
 * @retval CUCORE_NOT_SUPPORTED READ_ONLY on a device without support. */
CUCORE_API cucore_status cucore_host_register(cucore_device *dev, void *ptr, size_t bytes,
                                              unsigned flags);
/** Unlocks a range registered with cucore_host_register(); `ptr` is its start.
 * @retval CUCORE_INVALID_ARGUMENT not the start of a range registered through cucore.
 * @retval CUCORE_IN_USE a DLPack export or texture still uses it. */
CUCORE_API cucore_status cucore_host_unregister(cucore_device *dev, void *ptr);
/** The address kernels use for mapped host memory (pinned, pinned-pool, or registered with
 * CUCORE_HOST_REGISTER_DEVICEMAP) (cuMemHostGetDevicePointer). It equals the host address
 * except for registered memory on devices that cannot use host pointers for it. */
CUCORE_API cucore_status cucore_host_get_device_pointer(cucore_device *dev, void *ptr,
                                                        cucore_devptr *out);

/** @} */

/* ------------------------------------------------------------------------------------------ */
/* Managed memory: allocation, prefetch, advice, range attributes                             */
/* ------------------------------------------------------------------------------------------ */

/**
 * @defgroup managed Managed memory
 * Memory the driver migrates between host and devices on demand (cuMemAllocManaged); prefetch
 * and advice tune where it lives. Free it with cucore_mem_free().
 * @{
 */

/** Attach flags of cucore_mem_alloc_managed() (equal to CU_MEM_ATTACH_*). */
enum {
  CUCORE_MANAGED_GLOBAL = 1, /**< any stream of any device may access it */
  CUCORE_MANAGED_HOST = 2    /**< only the host, until attached to a stream */
};

/** Allocates `bytes` (> 0) of managed memory, recorded like device memory (kind
 * CUCORE_MEM_MANAGED). `attach` is CUCORE_MANAGED_GLOBAL or CUCORE_MANAGED_HOST.
 * @retval CUCORE_NOT_SUPPORTED the device has no managed memory.
 * @retval CUCORE_DEVICE_OUT_OF_MEMORY as cucore_mem_alloc(). */
CUCORE_API cucore_status cucore_mem_alloc_managed(cucore_device *dev, size_t bytes, unsigned attach,
                                                  cucore_devptr *out);

/** Kinds of location (equal to CUmemLocationType's). */
typedef enum cucore_location_type {
  CUCORE_LOCATION_NONE = 0,             /**< no location (unset) */
  CUCORE_LOCATION_DEVICE = 1,           /**< a device; `id` is its ordinal */
  CUCORE_LOCATION_HOST = 2,             /**< host memory; `id` is ignored */
  CUCORE_LOCATION_HOST_NUMA = 3,        /**< a host NUMA node; `id` is the node */
  CUCORE_LOCATION_HOST_NUMA_CURRENT = 4 /**< the NUMA node of the calling thread's CPU */
} cucore_location_type;

/** A place memory can live or be accessed from. */
typedef struct cucore_location {
  cucore_location_type type; /**< what `id` means */
  int id;                    /**< device ordinal or NUMA node */
} cucore_location;

/** Migrates `bytes` of managed memory at `ptr` to `to` in stream order on `s`
 * (cuMemPrefetchAsync with a CUmemLocation, CUDA 12.2+). The range must lie in one managed
 * allocation when cucore recorded it (checked).
 * @retval CUCORE_OUT_OF_BOUNDS the range runs past its allocation.
 * @retval CUCORE_NOT_SUPPORTED the target device lacks concurrent managed access. */
CUCORE_API cucore_status cucore_mem_prefetch(cucore_devptr ptr, size_t bytes, cucore_location to,
                                             cucore_stream *s);

/** Advice for managed memory (equal to CUmem_advise). */
typedef enum cucore_mem_advice {
  CUCORE_ADVISE_READ_MOSTLY = 1,              /**< mostly read: reads duplicate the pages */
  CUCORE_ADVISE_UNSET_READ_MOSTLY = 2,        /**< undo READ_MOSTLY */
  CUCORE_ADVISE_PREFERRED_LOCATION = 3,       /**< keep the pages at `where` */
  CUCORE_ADVISE_UNSET_PREFERRED_LOCATION = 4, /**< undo PREFERRED_LOCATION */
  CUCORE_ADVISE_ACCESSED_BY = 5,              /**< keep the pages mapped for `where` */
  CUCORE_ADVISE_UNSET_ACCESSED_BY = 6         /**< undo ACCESSED_BY for `where` */
} cucore_mem_advice;

/** Gives the driver advice about `bytes` at `ptr` (cuMemAdvise with a CUmemLocation, CUDA
 * 12.2+). `where` is ignored for READ_MOSTLY and its undo.
 * @retval CUCORE_OUT_OF_BOUNDS the range runs past its recorded allocation. */
CUCORE_API cucore_status cucore_mem_advise(cucore_devptr ptr, size_t bytes,
                                           cucore_mem_advice advice, cucore_location where);

/** What the driver holds for a managed range (cucore_mem_range_get_info()). */
typedef struct cucore_mem_range_info {
  int read_mostly;               /**< 1 when every page is READ_MOSTLY */
  cucore_location preferred;     /**< the preferred location (type NONE when unset or when
                                       the pages disagree) */
  cucore_location last_prefetch; /**< where it was last prefetched (type NONE when never or
                                       when the pages disagree) */
  int accessed_by_count;         /**< devices set with ACCESSED_BY (at most 32 listed) */
  int accessed_by[32];           /**< their ordinals */
} cucore_mem_range_info;

/** Reads the advice and prefetch state of `bytes` at `ptr` (cuMemRangeGetAttribute). */
CUCORE_API cucore_status cucore_mem_range_get_info(cucore_devptr ptr, size_t bytes,
                                                   cucore_mem_range_info *out);

/** @} */

/* ------------------------------------------------------------------------------------------ */
/* Copies and fills: every direction, peers, 2D and 3D, bounds-checked                        */
/* ------------------------------------------------------------------------------------------ */

/**
 * @defgroup copies Copies and fills
 * Beyond cucore_memcpy_htod() and its siblings: copies that infer the direction from the
 * addresses (unified addressing), between devices, of 2D and 3D regions with pitches, and to
 * and from CUDA arrays; pitched allocation; fills of 8-, 16- and 32-bit values, also in 2D.
 *
 * Every range on memory cucore recorded is checked before the driver sees it (the copies of
 * the Memory section too): a range past the end of its allocation is CUCORE_OUT_OF_BOUNDS with
 * both sizes and the offset; a range that wraps around the address space, or a size that is a
 * negative number converted to size_t, is CUCORE_INVALID_ARGUMENT. Addresses cucore did not
 * record pass unchecked (see CUCORE_MEM_CHECK_FOREIGN). A stream given must belong to the
 * device given; NULL means a synchronous copy (complete on return, see @ref memory). With a
 * stream, host memory must stay valid until the stream reaches the copy; pageable host memory
 * makes the copy synchronous (the driver's rule).
 * @{
 */

/** A CUDA array (CUarray): create with cucore_array_create(), destroy with
 * cucore_array_destroy(). */
typedef struct cucore_array cucore_array;

/** Copies `bytes` from `src` to `dst`, in whatever direction their addresses tell (cuMemcpy /
 * cuMemcpyAsync): host addresses through CUCORE_HOST_ADDR(). Both ranges are checked.
 * @retval CUCORE_OUT_OF_BOUNDS a range runs past the end of its allocation. */
CUCORE_API cucore_status cucore_memcpy(cucore_device *dev, cucore_devptr dst, cucore_devptr src,
                                       size_t bytes, cucore_stream *s);
/** Copies `bytes` between two host buffers through the driver (ordered on `s` when given, like
 * any copy on the stream), as cucore_memcpy(). */
CUCORE_API cucore_status cucore_memcpy_htoh(cucore_device *dev, void *dst, const void *src,
                                            size_t bytes, cucore_stream *s);
/** Copies `bytes` from `src` on `src_dev` to `dst` on `dst_dev` (cuMemcpyPeer /
 * cuMemcpyPeerAsync); works without peer access (staged by the driver) and is direct with it.
 * `s` (may be NULL) belongs to `dst_dev`. Both ranges are checked, and each must belong to its
 * device when cucore recorded it. */
CUCORE_API cucore_status cucore_memcpy_peer(cucore_device *dst_dev, cucore_devptr dst,
                                            cucore_device *src_dev, cucore_devptr src, size_t bytes,
                                            cucore_stream *s);
/** Whether kernels on `dev` can access memory of `peer` once access is enabled
 * (cuDeviceCanAccessPeer); a device with itself answers 1. */
CUCORE_API cucore_status cucore_device_can_access_peer(cucore_device *dev, cucore_device *peer,
                                                       int *can);
/** Lets kernels and copies on `dev` access memory allocated on `peer` with cucore_mem_alloc
 * (cuCtxEnablePeerAccess in `dev`'s context). Enabling twice is not an error. Pool memory needs
 * cucore_mem_pool_set_access() instead.
 * @retval CUCORE_NOT_SUPPORTED the devices cannot access each other, or `dev` is `peer`. */
CUCORE_API cucore_status cucore_device_enable_peer_access(cucore_device *dev, cucore_device *peer);
/** Undoes cucore_device_enable_peer_access(). Disabling access that is not enabled is not an
 * error. */
CUCORE_API cucore_status cucore_device_disable_peer_access(cucore_device *dev, cucore_device *peer);

/** Allocates `height` rows of at least `width_bytes` each, padded so every row starts aligned
 * for the fastest 2D access (cuMemAllocPitch); the row stride is written to *pitch and the
 * allocation (pitch x height bytes) is recorded. `element_bytes` (4, 8 or 16) is the largest
 * access kernels make. Free it with cucore_mem_free(). */
CUCORE_API cucore_status cucore_mem_alloc_pitch(cucore_device *dev, size_t width_bytes,
                                                size_t height, unsigned element_bytes,
                                                cucore_devptr *out, size_t *pitch);

/** A 2D copy: `height` rows of `width_bytes`, from a pitched region (or an array) to another.
 * A side with an array uses the array and its x (bytes) and y; otherwise its address, pitch,
 * x (bytes) and y. */
typedef struct cucore_copy_2d {
  cucore_devptr src;       /**< source address (host addresses through CUCORE_HOST_ADDR) */
  size_t src_pitch;        /**< bytes between source rows (>= width_bytes) */
  cucore_array *src_array; /**< or a source array (then src and src_pitch are ignored) */
  size_t src_x_bytes;      /**< first source byte within a row */
  size_t src_y;            /**< first source row */
  cucore_devptr dst;       /**< destination address */
  size_t dst_pitch;        /**< bytes between destination rows (>= width_bytes) */
  cucore_array *dst_array; /**< or a destination array */
  size_t dst_x_bytes;      /**< first destination byte within a row */
  size_t dst_y;            /**< first destination row */
  size_t width_bytes;      /**< bytes per row to copy */
  size_t height;           /**< rows to copy */
} cucore_copy_2d;

/** Copies a 2D region (cuMemcpy2D / cuMemcpy2DAsync, unified addressing). Each side's
 * footprint (from its first byte to the last byte of its last row) is checked against its
 * allocation or array.
 * @retval CUCORE_OUT_OF_BOUNDS a footprint runs past its allocation or array.
 * @retval CUCORE_INVALID_ARGUMENT a pitch below width_bytes, or arithmetic that overflows. */
CUCORE_API cucore_status cucore_memcpy_2d(cucore_device *dev, const cucore_copy_2d *copy,
                                          cucore_stream *s);

/** A 3D copy: `depth` slices of `height` rows of `width_bytes`. A side with an array uses it
 * and its x (bytes), y and z; otherwise its address, pitch, height (rows per slice), x, y, z. */
typedef struct cucore_copy_3d {
  cucore_devptr src;       /**< source address */
  size_t src_pitch;        /**< bytes between source rows */
  size_t src_height;       /**< rows between source slices (>= height) */
  cucore_array *src_array; /**< or a source array */
  size_t src_x_bytes;      /**< first source byte within a row */
  size_t src_y;            /**< first source row */
  size_t src_z;            /**< first source slice */
  cucore_devptr dst;       /**< destination address */
  size_t dst_pitch;        /**< bytes between destination rows */
  size_t dst_height;       /**< rows between destination slices (>= height) */
  cucore_array *dst_array; /**< or a destination array */
  size_t dst_x_bytes;      /**< first destination byte within a row */
  size_t dst_y;            /**< first destination row */
  size_t dst_z;            /**< first destination slice */
  size_t width_bytes;      /**< bytes per row to copy */
  size_t height;           /**< rows per slice to copy */
  size_t depth;            /**< slices to copy */
} cucore_copy_3d;

/** Copies a 3D region (cuMemcpy3D / cuMemcpy3DAsync), each footprint checked as in
 * cucore_memcpy_2d(). */
CUCORE_API cucore_status cucore_memcpy_3d(cucore_device *dev, const cucore_copy_3d *copy,
                                          cucore_stream *s);

/** Sets `count` 16-bit values at `dst` (2-byte aligned) to `value` (stream may be NULL).
 * @retval CUCORE_ARG_ALIGNMENT `dst` is not 2-byte aligned.
 * @retval CUCORE_OUT_OF_BOUNDS the range runs past its allocation. */
CUCORE_API cucore_status cucore_memset_d16(cucore_device *dev, cucore_devptr dst, uint16_t value,
                                           size_t count, cucore_stream *s);
/** Sets `height` rows of `width` elements of `element_bytes` (1, 2 or 4) each, rows `pitch`
 * bytes apart, to `value` (its low 8 or 16 bits for the smaller sizes) (cuMemsetD2D8/16/32 and
 * their Async forms). The footprint is checked as in cucore_memcpy_2d().
 * @retval CUCORE_ARG_ALIGNMENT `dst` or `pitch` not a multiple of `element_bytes`. */
CUCORE_API cucore_status cucore_memset_2d(cucore_device *dev, cucore_devptr dst, size_t pitch,
                                          uint32_t value, unsigned element_bytes, size_t width,
                                          size_t height, cucore_stream *s);

/** @} */

/* ------------------------------------------------------------------------------------------ */
/* CUDA arrays, texture objects and surface objects                                           */
/* ------------------------------------------------------------------------------------------ */

/**
 * @defgroup textures Arrays, textures and surfaces
 * CUDA arrays (opaque layouts for texture hardware), texture objects over arrays or over
 * cucore memory (linear or pitched 2D), and surface objects over arrays. Their handles go to
 * kernels with cucore_args_set_texture() / cucore_args_set_surface().
 *
 * Lifetimes: a texture or surface holds its memory. Freeing memory (any cucore free) or
 * destroying an array while a texture or surface made from it exists is refused with
 * CUCORE_IN_USE naming the count: destroy the textures first. Memory cucore did not record is
 * accepted for textures but not tracked (the caller keeps it alive). Thread-safe.
 * @{
 */

/** Element formats of arrays and textures (equal to CUarray_format's). */
typedef enum cucore_array_format {
  CUCORE_FORMAT_U8 = 0x01,   /**< unsigned 8-bit integers */
  CUCORE_FORMAT_U16 = 0x02,  /**< unsigned 16-bit integers */
  CUCORE_FORMAT_U32 = 0x03,  /**< unsigned 32-bit integers */
  CUCORE_FORMAT_S8 = 0x08,   /**< signed 8-bit integers */
  CUCORE_FORMAT_S16 = 0x09,  /**< signed 16-bit integers */
  CUCORE_FORMAT_S32 = 0x0a,  /**< signed 32-bit integers */
  CUCORE_FORMAT_HALF = 0x10, /**< 16-bit floating point */
  CUCORE_FORMAT_FLOAT = 0x20 /**< 32-bit floating point */
} cucore_array_format;

/** Array flags (equal to CUDA_ARRAY3D_*), combined with `|`. */
enum {
  CUCORE_ARRAY_LAYERED = 0x01,       /**< a layered array: `depth` counts layers */
  CUCORE_ARRAY_SURFACE = 0x02,       /**< surface loads and stores are allowed (needed for
                                          cucore_surface_create()) */
  CUCORE_ARRAY_CUBEMAP = 0x04,       /**< six square faces (depth 6) */
  CUCORE_ARRAY_TEXTURE_GATHER = 0x08 /**< 2D texture gather is allowed */
};

/** The shape and element of an array. height 0 makes a 1D array; depth 0 a 1D or 2D one. */
typedef struct cucore_array_desc {
  size_t width;               /**< elements per row (> 0) */
  size_t height;              /**< rows (0 for 1D) */
  size_t depth;               /**< slices or layers (0 for 1D and 2D) */
  cucore_array_format format; /**< element format */
  unsigned channels;          /**< channels per element: 1, 2 or 4 */
  unsigned flags;             /**< CUCORE_ARRAY_* bits */
} cucore_array_desc;

/** CONSTRUCTOR: a CUDA array on `dev` (cuArray3DCreate). Destroy it with cucore_array_destroy()
 * after the textures and surfaces made from it.
 * @retval CUCORE_INVALID_ARGUMENT a format or channel count that does not exist, width 0, or a
 *         depth without a height. */
CUCORE_API cucore_status cucore_array_create(cucore_device *dev, const cucore_array_desc *desc,
                                             cucore_array **out);
/** DESTRUCTOR: destroys the array (cuArrayDestroy). NULL is a no-op.
 * @retval CUCORE_IN_USE textures or surfaces still use it; the array is kept. */
CUCORE_API cucore_status cucore_array_destroy(cucore_array *arr);
/** The array's shape and element, as created. */
CUCORE_API cucore_status cucore_array_get_desc(const cucore_array *arr, cucore_array_desc *out);
/** The native CUarray, still owned by `arr`. */
CUCORE_API cucore_status cucore_array_get_native(const cucore_array *arr, void **cuarray);
/** Copies the whole array from packed or pitched host memory: `src_pitch` bytes between rows
 * (0 for packed rows), rows of a slice next to each other (cuMemcpy3D / cuMemcpy3DAsync on
 * `s`, which may be NULL). `src` must hold at least pitch x height x depth bytes; cucore
 * checks that when it recorded `src`. */
CUCORE_API cucore_status cucore_array_copy_from_host(cucore_array *arr, const void *src,
                                                     size_t src_pitch, cucore_stream *s);
/** Copies the whole array to host memory, as cucore_array_copy_from_host(). */
CUCORE_API cucore_status cucore_array_copy_to_host(cucore_array *arr, void *dst, size_t dst_pitch,
                                                   cucore_stream *s);

/** Address modes. Unlike CUaddress_mode, 0 is clamp, so a zeroed description clamps. */
typedef enum cucore_address_mode {
  CUCORE_ADDRESS_CLAMP = 0,  /**< clamp to the edge */
  CUCORE_ADDRESS_WRAP = 1,   /**< wrap around (normalized coordinates only: refused without
                                  them, where the hardware would clamp) */
  CUCORE_ADDRESS_MIRROR = 2, /**< mirror (normalized coordinates only, likewise) */
  CUCORE_ADDRESS_BORDER = 3  /**< return the border color outside */
} cucore_address_mode;

/** Filter modes (equal to CUfilter_mode's). */
typedef enum cucore_filter_mode {
  CUCORE_FILTER_POINT = 0, /**< nearest element */
  CUCORE_FILTER_LINEAR = 1 /**< linear interpolation (floating-point reads only) */
} cucore_filter_mode;

/** Texture flags (equal to CU_TRSF_*), combined with `|`. */
enum {
  CUCORE_TEXTURE_READ_AS_INTEGER = 0x01,   /**< integer formats read as integers, not
                                               normalized floats */
  CUCORE_TEXTURE_NORMALIZED_COORDS = 0x02, /**< coordinates in [0, 1) instead of elements */
  CUCORE_TEXTURE_SRGB = 0x10,              /**< sRGB to linear conversion */
  CUCORE_TEXTURE_SEAMLESS_CUBEMAP = 0x40   /**< seamless cube map filtering */
};

/** How a texture samples. Zero-initialised: clamp, point, element coordinates, normalized
 * floats for integer formats. */
typedef struct cucore_texture_desc {
  cucore_address_mode address_mode[3]; /**< per dimension (x, y, z); the dimensions the
                                            resource does not have are ignored */
  cucore_filter_mode filter;           /**< point or linear */
  unsigned flags;                      /**< CUCORE_TEXTURE_* bits */
  float border_color[4];               /**< for CUCORE_ADDRESS_BORDER */
  unsigned max_anisotropy;             /**< 0 or 1 for none, up to 16 */
} cucore_texture_desc;

/** A texture object (CUtexObject) and what it holds. */
typedef struct cucore_texture cucore_texture;

/** CONSTRUCTOR: a texture over an array (cuTexObjectCreate). `desc` may be NULL for the
 * defaults. The array cannot be destroyed while the texture exists. */
CUCORE_API cucore_status cucore_texture_create_array(cucore_array *arr,
                                                     const cucore_texture_desc *desc,
                                                     cucore_texture **out);
/** CONSTRUCTOR: a 1D texture over `bytes` of linear device memory at `ptr` (read in kernels with
 * tex1Dfetch). `ptr` must be aligned to the device's texture alignment and `bytes` must be a
 * whole number of elements within the device's linear texture limit; both, and the range
 * against its allocation, are checked first. The memory cannot be freed while the texture
 * exists (when cucore recorded it).
 * @retval CUCORE_OUT_OF_BOUNDS the range runs past its allocation.
 * @retval CUCORE_ARG_ALIGNMENT `ptr` is not aligned to the texture alignment. */
CUCORE_API cucore_status cucore_texture_create_linear(cucore_device *dev, cucore_devptr ptr,
                                                      size_t bytes, cucore_array_format format,
                                                      unsigned channels,
                                                      const cucore_texture_desc *desc,
                                                      cucore_texture **out);
/** CONSTRUCTOR: a 2D texture over `height` rows of `width` elements at `ptr`, rows `pitch` bytes
 * apart (e.g. from cucore_mem_alloc_pitch()). The address must be texture-aligned and the
 * pitch a multiple of the device's texture pitch alignment; checked first, with the footprint
 * against its allocation.
 * @retval CUCORE_OUT_OF_BOUNDS the footprint runs past its allocation.
 * @retval CUCORE_ARG_ALIGNMENT the address or pitch is misaligned. */
CUCORE_API cucore_status cucore_texture_create_pitch2d(cucore_device *dev, cucore_devptr ptr,
                                                       size_t width, size_t height, size_t pitch,
                                                       cucore_array_format format,
                                                       unsigned channels,
                                                       const cucore_texture_desc *desc,
                                                       cucore_texture **out);
/** DESTRUCTOR: destroys the texture object and lets go of its memory. NULL is a no-op. */
CUCORE_API cucore_status cucore_texture_destroy(cucore_texture *tex);
/** The CUtexObject value to pass to kernels (cucore_args_set_texture()). */
CUCORE_API cucore_status cucore_texture_get_handle(const cucore_texture *tex, uint64_t *handle);

/** A surface object (CUsurfObject) over an array. */
typedef struct cucore_surface cucore_surface;

/** CONSTRUCTOR: a surface over an array made with CUCORE_ARRAY_SURFACE (cuSurfObjectCreate).
 * @retval CUCORE_INVALID_ARGUMENT the array lacks CUCORE_ARRAY_SURFACE. */
CUCORE_API cucore_status cucore_surface_create(cucore_array *arr, cucore_surface **out);
/** DESTRUCTOR: destroys the surface object. NULL is a no-op. */
CUCORE_API cucore_status cucore_surface_destroy(cucore_surface *surf);
/** The CUsurfObject value to pass to kernels (cucore_args_set_surface()). */
CUCORE_API cucore_status cucore_surface_get_handle(const cucore_surface *surf, uint64_t *handle);

/** @} */

/* ------------------------------------------------------------------------------------------ */
/* Tensor maps for the Tensor Memory Accelerator (TMA, sm_90+)                                */
/* ------------------------------------------------------------------------------------------ */

/**
 * @defgroup tensormap Tensor maps (TMA)
 * Descriptors the Hopper copy engine reads (cp.async.bulk.tensor): a tiled or im2col view of a
 * tensor in global memory. cucore checks every rule the driver documents for
 * cuTensorMapEncodeTiled and cuTensorMapEncodeIm2col, and the tensor's extent against its
 * allocation, before the driver sees them; each failure names the field, the value and the
 * rule. The map is a 128-byte, 64-byte-aligned value passed to kernels by value
 * (`const __grid_constant__ CUtensorMap`) with cucore_args_set_tensor_map().
 *
 * A tensor map holds a raw address: it does not keep the memory alive. Keep the memory until
 * the last kernel using the map has finished.
 * @{
 */

/** Element types of tensor maps (equal to CUtensorMapDataType's). */
typedef enum cucore_tensor_dtype {
  CUCORE_TMAP_UINT8 = 0,          /**< 1 byte */
  CUCORE_TMAP_UINT16 = 1,         /**< 2 bytes */
  CUCORE_TMAP_UINT32 = 2,         /**< 4 bytes */
  CUCORE_TMAP_INT32 = 3,          /**< 4 bytes */
  CUCORE_TMAP_UINT64 = 4,         /**< 8 bytes */
  CUCORE_TMAP_INT64 = 5,          /**< 8 bytes */
  CUCORE_TMAP_FLOAT16 = 6,        /**< 2 bytes */
  CUCORE_TMAP_FLOAT32 = 7,        /**< 4 bytes */
  CUCORE_TMAP_FLOAT64 = 8,        /**< 8 bytes */
  CUCORE_TMAP_BFLOAT16 = 9,       /**< 2 bytes */
  CUCORE_TMAP_FLOAT32_FTZ = 10,   /**< 4 bytes, denormals flushed */
  CUCORE_TMAP_TFLOAT32 = 11,      /**< 4 bytes */
  CUCORE_TMAP_TFLOAT32_FTZ = 12,  /**< 4 bytes, denormals flushed */
  CUCORE_TMAP_16U4_ALIGN8B = 13,  /**< 4-bit values, 16 packed in 8 bytes */
  CUCORE_TMAP_16U4_ALIGN16B = 14, /**< 4-bit values, 16 packed in 8 of every 16 bytes */
  CUCORE_TMAP_16U6_ALIGN16B = 15  /**< 6-bit values, 16 packed in 12 of every 16 bytes */
} cucore_tensor_dtype;

/** Interleaved layouts (equal to CUtensorMapInterleave's). */
typedef enum cucore_tensor_interleave {
  CUCORE_TMAP_INTERLEAVE_NONE = 0, /**< plain layout */
  CUCORE_TMAP_INTERLEAVE_16B = 1,  /**< NC/8HWC8-like: 16-byte channel groups */
  CUCORE_TMAP_INTERLEAVE_32B = 2   /**< NC/16HWC16-like: 32-byte channel groups */
} cucore_tensor_interleave;

/** Shared-memory swizzles (equal to CUtensorMapSwizzle's). */
typedef enum cucore_tensor_swizzle {
  CUCORE_TMAP_SWIZZLE_NONE = 0,                  /**< no swizzle */
  CUCORE_TMAP_SWIZZLE_32B = 1,                   /**< 16B chunks within a 32B span */
  CUCORE_TMAP_SWIZZLE_64B = 2,                   /**< 16B chunks within a 64B span */
  CUCORE_TMAP_SWIZZLE_128B = 3,                  /**< 16B chunks within a 128B span */
  CUCORE_TMAP_SWIZZLE_128B_ATOM_32B = 4,         /**< 32B chunks within a 128B span */
  CUCORE_TMAP_SWIZZLE_128B_ATOM_32B_FLIP_8B = 5, /**< as ATOM_32B, 8B halves swapped on
                                                      alternate rows */
  CUCORE_TMAP_SWIZZLE_128B_ATOM_64B = 6          /**< 64B chunks within a 128B span */
} cucore_tensor_swizzle;

/** L2 promotion sizes (equal to CUtensorMapL2promotion's). */
typedef enum cucore_tensor_l2 {
  CUCORE_TMAP_L2_NONE = 0, /**< no promotion */
  CUCORE_TMAP_L2_64B = 1,  /**< 64-byte L2 fills */
  CUCORE_TMAP_L2_128B = 2, /**< 128-byte L2 fills */
  CUCORE_TMAP_L2_256B = 3  /**< 256-byte L2 fills */
} cucore_tensor_l2;

/** What out-of-bounds elements read as (equal to CUtensorMapFloatOOBfill's). */
typedef enum cucore_tensor_oob {
  CUCORE_TMAP_OOB_ZERO = 0,                /**< zeros */
  CUCORE_TMAP_OOB_NAN_REQUEST_ZERO_FMA = 1 /**< a NaN that FMAs treat as zero (floating-point
                                                types only) */
} cucore_tensor_oob;

/** A tensor in global memory and the box the copy engine moves, as the driver takes them.
 * Dimension 0 is the innermost (contiguous) one. Zero-initialise, then fill. */
typedef struct cucore_tensor_map_desc {
  cucore_tensor_dtype dtype; /**< element type */
  unsigned rank;             /**< dimensions: 1..5 (3..5 for im2col and interleaved maps) */
  cucore_devptr address;     /**< start of the tensor (16-byte aligned; 32 for INTERLEAVE_32B
                                    and the 16-byte-aligned packed types) */
  uint64_t dims[5];          /**< elements per dimension (1 .. 2^32) */
  /** Bytes from one index to the next of dimensions 1 .. rank-1 (strides[0] is dimension 1's).
   * Multiples of 16 (32 for INTERLEAVE_32B and the 16-byte-aligned packed types), below
   * 2^40; strides[0] at least dims[0] elements. */
  uint64_t strides[4];
  uint32_t box[5];                     /**< tiled maps: elements per dimension of the box (1..256);
                                    box[0] times the element size a multiple of 16 bytes
                                    without interleave, and within the swizzle span */
  uint32_t element_strides[5];         /**< step per dimension, 1..8 (0 is taken as 1) */
  cucore_tensor_interleave interleave; /**< interleaved layout */
  cucore_tensor_swizzle swizzle;       /**< shared-memory swizzle */
  cucore_tensor_l2 l2_promotion;       /**< L2 promotion */
  cucore_tensor_oob oob_fill;          /**< out-of-bounds fill */
  /** im2col maps: the box's lower corner offsets {D, H, W} (rank - 2 of them from entry 0:
   * one in [-32768, 32767] for rank 3, two in [-128, 127] for rank 4, three in [-16, 15] for
   * rank 5). */
  int lower_corner[3];
  int upper_corner[3];         /**< im2col maps: the upper corner offsets, same ranges */
  uint32_t channels_per_pixel; /**< im2col maps: elements along C (1..256) */
  uint32_t pixels_per_column;  /**< im2col maps: elements along N, D, H, W (1..1024) */
} cucore_tensor_map_desc;

/** @cond CUCORE_INTERNAL */
#if defined(__cplusplus)
#define CUCORE_ALIGNAS_64 alignas(64)
#else
#define CUCORE_ALIGNAS_64 _Alignas(64)
#endif
/** @endcond */

/** An encoded tensor map (the bytes of a CUtensorMap): 128 bytes aligned to 64, passed to
 * kernels by value with cucore_args_set_tensor_map(). */
typedef struct cucore_tensor_map {
  CUCORE_ALIGNAS_64 uint64_t opaque[16]; /**< the driver's encoding; do not touch */
} cucore_tensor_map;

/** The two kinds of tensor map. */
typedef enum cucore_tensor_map_kind {
  CUCORE_TMAP_TILED = 0, /**< cuTensorMapEncodeTiled: a box of the tensor */
  CUCORE_TMAP_IM2COL = 1 /**< cuTensorMapEncodeIm2col: im2col patches for convolutions */
} cucore_tensor_map_kind;

/** Checks a description against the driver's documented rules without encoding it (no GPU
 * needed): the first broken rule is the error, naming the field and its value. The extent
 * against the allocation is checked too when cucore recorded `address`.
 * @retval CUCORE_ARG_ALIGNMENT the address or a stride breaks its alignment rule.
 * @retval CUCORE_OUT_OF_BOUNDS the tensor runs past the end of its allocation. */
CUCORE_API cucore_status cucore_tensor_map_check(cucore_tensor_map_kind kind,
                                                 const cucore_tensor_map_desc *desc);
/** Encodes a tiled tensor map (cuTensorMapEncodeTiled) after cucore_tensor_map_check().
 * Needs a device of compute capability 9.0 or higher to use. */
CUCORE_API cucore_status cucore_tensor_map_encode_tiled(const cucore_tensor_map_desc *desc,
                                                        cucore_tensor_map *out);
/** Encodes an im2col tensor map (cuTensorMapEncodeIm2col) after cucore_tensor_map_check(). */
CUCORE_API cucore_status cucore_tensor_map_encode_im2col(const cucore_tensor_map_desc *desc,
                                                         cucore_tensor_map *out);

/** Binds a tensor map to kernel parameter `index` by value (128 bytes): the parameter must be
 * 128 bytes, and 64-byte aligned where the kernel's alignment is known (PTX), as
 * cucore_args_set_i8() checks any argument. Copied at once.
 * @retval CUCORE_ARG_SIZE the parameter is not 128 bytes.
 * @retval CUCORE_ARG_ALIGNMENT the parameter is not declared 64-byte aligned. */
CUCORE_API cucore_status cucore_args_set_tensor_map(struct cucore_args *args, int index,
                                                    const cucore_tensor_map *map);
/** cucore_args_set_tensor_map() at the next index. */
CUCORE_API cucore_status cucore_args_push_tensor_map(struct cucore_args *args,
                                                     const cucore_tensor_map *map);

/** @} */

/* ------------------------------------------------------------------------------------------ */
/* DLPack: tensors shared with other libraries                                                */
/* ------------------------------------------------------------------------------------------ */

/**
 * @defgroup dlpack DLPack
 * Export a cucore allocation as a DLManagedTensor (DLPack 0.6, `dlpack/dlpack.h`) for another
 * library (PyTorch, CuPy, JAX...), and import one made by another library. This header does not
 * include dlpack.h: tensors are passed as `void *` pointing to a DLManagedTensor.
 *
 * Ownership, export: the DLManagedTensor and its shape and strides belong to cucore until the
 * consumer calls its deleter (exactly once), which frees them. Without flags the allocation
 * stays the caller's: it must outlive the tensor, and freeing it while the tensor exists is
 * refused (CUCORE_IN_USE). With CUCORE_DLPACK_TRANSFER the tensor owns the allocation: cucore's
 * frees refuse it, and the deleter frees it (device memory with cuMemFree in its context, a
 * pinned-pool block back to its pool, pinned memory with cuMemFreeHost; a device pool's
 * allocation with cuMemFree, so the consumer must have finished with it). A tensor never
 * handed to a consumer is released by calling its deleter yourself.
 *
 * Ownership, import: cucore_dlpack_import() takes the DLManagedTensor: the import handle keeps
 * it alive, its range is recorded (so copies are bounds-checked) unless it lies in memory
 * cucore already recorded, and cucore_dlpack_release() calls its deleter (once; NULL deleters
 * are skipped). If the import fails, the tensor stays the caller's.
 * @{
 */

/** Most dimensions cucore takes in a tensor description. */
#define CUCORE_TENSOR_MAX_DIMS 16

/** Type codes of cucore_dtype (equal to DLDataTypeCode's; BOOL is DLPack 0.8's). */
enum {
  CUCORE_DTYPE_INT = 0,     /**< signed integer */
  CUCORE_DTYPE_UINT = 1,    /**< unsigned integer */
  CUCORE_DTYPE_FLOAT = 2,   /**< IEEE floating point */
  CUCORE_DTYPE_OPAQUE = 3,  /**< opaque handle */
  CUCORE_DTYPE_BFLOAT = 4,  /**< bfloat16 */
  CUCORE_DTYPE_COMPLEX = 5, /**< complex (two floats of bits/2 each) */
  CUCORE_DTYPE_BOOL = 6     /**< boolean */
};

/** An element type, laid out as DLDataType. */
typedef struct cucore_dtype {
  uint8_t code;   /**< CUCORE_DTYPE_* */
  uint8_t bits;   /**< bits per lane: 8, 16, 32, 64 (1 for bool too), 128 for complex128 */
  uint16_t lanes; /**< lanes per element (1 for scalars) */
} cucore_dtype;

/** A strided tensor over memory. */
typedef struct cucore_tensor_desc {
  int ndim;                              /**< dimensions, 0 (a scalar) .. CUCORE_TENSOR_MAX_DIMS */
  int64_t shape[CUCORE_TENSOR_MAX_DIMS]; /**< elements per dimension (>= 0) */
  /** Elements (not bytes) between consecutive indices of each dimension, may be negative;
   * ignored when `compact` is 1. */
  int64_t strides[CUCORE_TENSOR_MAX_DIMS];
  int compact;          /**< 1: compact row-major, strides not given */
  cucore_dtype dtype;   /**< element type */
  uint64_t byte_offset; /**< bytes from the address to element 0 */
} cucore_tensor_desc;

/** The bytes a tensor touches, relative to its address: from *lo (the lowest byte, may be
 * below byte_offset with negative strides) to *hi (one past the highest). A tensor with a zero
 * dimension touches nothing (*lo = *hi = byte_offset). Pure.
 * @retval CUCORE_INVALID_ARGUMENT ndim out of range, a negative shape, a zero-bit dtype, or
 *         arithmetic that overflows 64 bits. */
CUCORE_API cucore_status cucore_tensor_extent(const cucore_tensor_desc *t, int64_t *lo,
                                              int64_t *hi);

/** Flags of cucore_dlpack_export(). */
enum {
  /** The tensor takes over the allocation: its deleter frees it, cucore's frees refuse it. */
  CUCORE_DLPACK_TRANSFER = 1
};

/** Exports `t` over the cucore allocation containing `ptr` as a new DLManagedTensor (written to
 * *managed_tensor as a `DLManagedTensor *`). The tensor's extent must lie within the
 * allocation. The device is kDLCUDA (device, pitched, pooled, IPC-imported memory),
 * kDLCUDAManaged or kDLCUDAHost (pinned, pinned-pool, registered) with the allocation's device.
 * @retval CUCORE_INVALID_ARGUMENT `ptr` is not in a live cucore allocation, or the description
 *         is malformed.
 * @retval CUCORE_OUT_OF_BOUNDS the tensor runs past the end of the allocation.
 * @retval CUCORE_IN_USE TRANSFER of an allocation that textures or other exports use. */
CUCORE_API cucore_status cucore_dlpack_export(cucore_devptr ptr, const cucore_tensor_desc *t,
                                              unsigned flags, void **managed_tensor);

/** A DLPack tensor of another library, held by cucore (cucore_dlpack_import()). */
typedef struct cucore_dlpack_tensor cucore_dlpack_tensor;

/** What an imported tensor is (cucore_dlpack_get_tensor_info()). */
typedef struct cucore_dlpack_info {
  cucore_devptr data;      /**< the tensor's data pointer (element 0 is at data +
                                desc.byte_offset) */
  int device_type;         /**< DLDeviceType value: 1 CPU, 2 CUDA, 3 CUDA host, 13 CUDA
                                managed */
  int device_id;           /**< the DLPack device id (the CUDA ordinal for CUDA devices) */
  cucore_tensor_desc desc; /**< shape, strides (filled in: compact is 0 after import), dtype */
  uint64_t span_bytes;     /**< bytes from the lowest to one past the highest byte touched */
} cucore_dlpack_info;

/** CONSTRUCTOR: takes a `DLManagedTensor *` made by another library and holds it. The tensor is
 * checked: a known device type (CPU, CUDA, CUDA host, CUDA managed), ndim within
 * CUCORE_TENSOR_MAX_DIMS, non-negative shape, a dtype of non-zero bits, an extent that does
 * not overflow. Release it with cucore_dlpack_release().
 * @retval CUCORE_NOT_SUPPORTED a device type cucore cannot use (OpenCL, ROCm, ...).
 * @retval CUCORE_OUT_OF_BOUNDS the tensor lies partly in a cucore allocation and runs past it. */
CUCORE_API cucore_status cucore_dlpack_import(void *managed_tensor, cucore_dlpack_tensor **out);
/** Describes an imported tensor. */
CUCORE_API cucore_status cucore_dlpack_get_tensor_info(const cucore_dlpack_tensor *t,
                                                       cucore_dlpack_info *out);
/** DESTRUCTOR: forgets the recorded range and calls the tensor's deleter. NULL is a no-op.
 * @retval CUCORE_IN_USE a texture still uses the range; the tensor is kept. */
CUCORE_API cucore_status cucore_dlpack_release(cucore_dlpack_tensor *t);

/** @} */

/* ------------------------------------------------------------------------------------------ */
/* Code types and kernel parameter descriptions (shared by Program, ObjectCode, Kernel)        */
/* ------------------------------------------------------------------------------------------ */

/**
 * @defgroup codes Code types and kernel parameter descriptions
 * Shared by Program, ObjectCode, Kernel and the offline reader.
 * @{
 */

/** What a buffer of code is. */
typedef enum cucore_code_type {
  CUCORE_CODE_AUTO = 0, /**< detect from the bytes */
  CUCORE_CODE_CUDA_CPP, /**< CUDA C++ source (NVRTC) */
  CUCORE_CODE_PTX,      /**< PTX assembly text */
  CUCORE_CODE_NVVM,     /**< NVVM IR, text or bitcode (libNVVM) */
  CUCORE_CODE_CUBIN,    /**< an ELF for one SM architecture */
  CUCORE_CODE_FATBIN,   /**< a fatbin container (several cubins and/or PTX) */
  CUCORE_CODE_LTOIR,    /**< LTO intermediate representation (for nvJitLink) */
  CUCORE_CODE_OBJECT,   /**< a host object holding device code (nvcc -rdc -c) */
  CUCORE_CODE_LIBRARY   /**< a host static library (.a) holding device code */
} cucore_code_type;

/** "cubin", "ptx", ... for a code type ("cuda-c++", "auto"; "unknown" for a value not in the
 * enum). Never NULL; static storage. */
CUCORE_API const char *cucore_code_type_name(cucore_code_type type);

/** What is known of a kernel parameter's type. The layout (offset, size) is always known;
 * the kind when the PTX declaration was seen (code cucore compiled, or PTX it loaded). */
typedef enum cucore_param_kind {
  CUCORE_PARAM_UNKNOWN = 0, /**< layout only */
  CUCORE_PARAM_INT,         /**< .u8/.s8/.b8 ... .u64/.s64/.b64 scalar (signedness not
                                 recorded by PTX) */
  CUCORE_PARAM_FLOAT,       /**< .f16 .f32 .f64 */
  CUCORE_PARAM_POINTER,     /**< .u64 with the .ptr attribute */
  CUCORE_PARAM_BYTES        /**< an aligned byte array: a struct, union or vector by value */
} cucore_param_kind;

/** One kernel parameter as the kernel sees it. */
typedef struct cucore_param_info {
  uint32_t offset;        /**< byte offset in the parameter buffer */
  uint32_t size;          /**< bytes */
  uint32_t align;         /**< alignment in bytes (0 when unknown) */
  cucore_param_kind kind; /**< the type, as far as it is known */
} cucore_param_info;

/** @} */

/* ------------------------------------------------------------------------------------------ */
/* Compile options (one table serves the API, the command line and the cache key)             */
/* ------------------------------------------------------------------------------------------ */

/**
 * @defgroup options Compile options
 * One table serves the API, the command line and the cache key.
 * @{
 */

/** Every option cucore knows. Each has a name (cucore_option_name) used on the command line as
 * --NAME, a type (bool, int, string or list: a list option may be given several times), and
 * a rendering for each tool (NVRTC, nvJitLink, libNVVM) that accepts it; a tool ignores the
 * options it has no rendering for. */
typedef enum cucore_option {
  CUCORE_OPT_ARCH = 0,         /**< string: "sm_90", "sm_90a", "sm_100f", "compute_90" */
  CUCORE_OPT_STD,              /**< string: "c++03" .. "c++20" */
  CUCORE_OPT_DEFINE,           /**< list: "NAME", "NAME=VALUE" or "NAME(PARAMS)=VALUE", NAME an
                                   identifier (-D) */
  CUCORE_OPT_UNDEFINE,         /**< list: "NAME", an identifier (-U) */
  CUCORE_OPT_INCLUDE_PATH,     /**< list: a directory (-I) */
  CUCORE_OPT_PRE_INCLUDE,      /**< list: a header included before the source (-include) */
  CUCORE_OPT_TOOLKIT_INCLUDES, /**< bool, default 1: add `<toolkit>/include` and `include/cccl` */
  CUCORE_OPT_DEBUG,            /**< bool: device debug information (-G / -g) */
  CUCORE_OPT_LINEINFO,         /**< bool: line information for profilers */
  CUCORE_OPT_FAST_MATH,        /**< bool: --use_fast_math (ftz, approximate div/sqrt, fmad) */
  CUCORE_OPT_FTZ,              /**< bool: flush denormals to zero */
  CUCORE_OPT_PREC_DIV,         /**< bool: IEEE division (default 1) */
  CUCORE_OPT_PREC_SQRT,        /**< bool: IEEE square root (default 1) */
  CUCORE_OPT_FMAD,             /**< bool: contract multiply-add into fma (default 1) */
  CUCORE_OPT_MAX_REGISTERS,    /**< int 16..255: registers per thread cap (--maxrregcount) */
  CUCORE_OPT_RDC,              /**< bool: relocatable device code (-rdc=true) */
  CUCORE_OPT_LTO,              /**< bool: link-time optimisation (-dlto / -lto) */
  CUCORE_OPT_EXTRA_DEVICE_VECTORIZATION, /**< bool: more aggressive vectorisation */
  CUCORE_OPT_DEFAULT_DEVICE,             /**< bool: functions without a space are `__device__` */
  CUCORE_OPT_DEVICE_INT128,              /**< bool: __int128 in device code */
  CUCORE_OPT_OPT_LEVEL,        /**< int 0..3: optimisation level (nvJitLink -O, libNVVM -opt) */
  CUCORE_OPT_PTXAS_OPTION,     /**< list: passed to ptxas (--ptxas-options / -Xptxas) */
  CUCORE_OPT_SPLIT_COMPILE,    /**< int 0..256: compiler threads (0 = all cores) */
  CUCORE_OPT_DISABLE_WARNINGS, /**< bool: -w */
  CUCORE_OPT_RAW,              /**< list: passed verbatim to the compiler (NVRTC/libNVVM) */
  CUCORE_OPT_GENCODE,          /**< list: the entries of a fatbin: sm_XX adds a cubin, compute_XX
                                   PTX (default: the arch, as cubin and as PTX) */
  CUCORE_OPT_COUNT             /**< the number of options */
} cucore_option;

/** A set of compile options: create with cucore_options_create(), destroy with
 * cucore_options_destroy(). Programs and linkers copy the set they are given. */
typedef struct cucore_options cucore_options;

/** CONSTRUCTOR: an empty option set (toolkit includes on, everything else the tools' defaults).
 * Destroy `*out` with cucore_options_destroy(). */
CUCORE_API cucore_status cucore_options_create(cucore_options **out);
/** CONSTRUCTOR: a deep copy of `src` (which is only read). */
CUCORE_API cucore_status cucore_options_copy(const cucore_options *src, cucore_options **out);
/** DESTRUCTOR: frees the option set. NULL is a no-op. */
CUCORE_API cucore_status cucore_options_destroy(cucore_options *opts);
/** Sets a string option, or appends to a list option. The value is checked (an arch must be
 * sm_XX/compute_XX with a known suffix, std one of the known standards, a macro name an
 * identifier, no value empty) and copied.
 * @retval CUCORE_INVALID_ARGUMENT an unknown or non-string option, or a value that fails its
 *         check (the message says what is expected). */
CUCORE_API cucore_status cucore_options_set_string(cucore_options *opts, cucore_option opt,
                                                   const char *value);
/** Sets an int option (range-checked) or a bool option (0 or 1).
 * @retval CUCORE_INVALID_ARGUMENT an unknown or non-int option, or a value out of its range. */
CUCORE_API cucore_status cucore_options_set_int(cucore_options *opts, cucore_option opt, int value);
/** Adds an in-memory header the source can include by `name`; both strings are copied.
 * @retval CUCORE_INVALID_ARGUMENT a header of that name was added already. */
CUCORE_API cucore_status cucore_options_add_header(cucore_options *opts, const char *name,
                                                   const char *contents);
/** Parses one command-line style option, "--NAME=VALUE", "--NAME VALUE" (value in `next`),
 * "--NAME" for a bool, "-DX", "-IDIR", "-G". *consumed is 1 or 2 (arguments used). A bool also
 * takes "--no-NAME" and the values true/false, on/off, 1/0. `next` may be NULL. Values are
 * checked as cucore_options_set_string() checks them, so what NVRTC would refuse (`-D =1`,
 * `-U ""`) is refused here, before any compiler runs.
 * @retval CUCORE_UNKNOWN_OPTION `arg` is no option of the table (the message names the
 *         nearest known one where there is one: "did you mean `--lineinfo`?").
 * @retval CUCORE_INVALID_ARGUMENT a missing value or a value that fails its check (the message
 *         names the option and what it expects). */
CUCORE_API cucore_status cucore_options_parse(cucore_options *opts, const char *arg,
                                              const char *next, int *consumed);
/** The option's name ("arch", "define", ...); "unknown-option" for a value not in the enum.
 * Never NULL; static storage. */
CUCORE_API const char *cucore_option_name(cucore_option opt);
/** The option's one-line help ("" for a value not in the enum). Never NULL; static storage. */
CUCORE_API const char *cucore_option_help(cucore_option opt);
/** The canonical text of an option set: every option that differs from its default, in table
 * order, "name=value" separated by newlines; in-memory headers as "header=NAME:<sha256>".
 * The same options give the same text. *out is owned by `opts` until its next change.
 * Caches the text in `opts`: not to be called concurrently with any other use of the set. */
CUCORE_API cucore_status cucore_options_canonical(const cucore_options *opts, const char **out);

/** @} */

/* ------------------------------------------------------------------------------------------ */
/* Program: every kind of JIT (CUDA C++ via NVRTC, PTX via nvJitLink, NVVM IR via libNVVM)     */
/* ------------------------------------------------------------------------------------------ */

/**
 * @defgroup program Program
 * Every kind of JIT: CUDA C++ via NVRTC, PTX via nvJitLink, NVVM IR via libNVVM. Compiles go
 * through the compile cache (see @ref cache).
 * @{
 */

/** Source to compile, with its options and name expressions: create with
 * cucore_program_create(), destroy with cucore_program_destroy(). One thread at a time. */
typedef struct cucore_program cucore_program;
/** Compiled code (ObjectCode), loaded lazily and reference-counted: made by
 * cucore_program_compile(), cucore_linker_complete(), cucore_object_from_memory() or
 * cucore_object_from_file(); each handle received is released with cucore_object_destroy(). */
typedef struct cucore_object cucore_object;

/** CONSTRUCTOR: a program from source. `type` is CUCORE_CODE_CUDA_CPP, CUCORE_CODE_PTX or
 * CUCORE_CODE_NVVM (AUTO detects PTX vs NVVM bitcode vs C++). `size` 0 means NUL-terminated
 * text. `name` names the source in messages (e.g.\ "saxpy.cu"; NULL gives "program.cu",
 * "program.ptx" or "program.ll" by type). Source, name and options (`opts` may be NULL) are
 * copied. Destroy `*out` with cucore_program_destroy().
 * @retval CUCORE_INVALID_ARGUMENT empty source, another type, compiled code given to AUTO, or
 *         `size` past PTRDIFF_MAX. */
CUCORE_API cucore_status cucore_program_create(cucore_code_type type, const void *code, size_t size,
                                               const char *name, const cucore_options *opts,
                                               cucore_program **out);
/** DESTRUCTOR: frees the program. NULL is a no-op. Objects it produced stay valid. */
CUCORE_API cucore_status cucore_program_destroy(cucore_program *prog);
/** Registers a C++ name expression ("scale<float>", "&ns::kernel") whose lowered (mangled)
 * name the result will know. CUDA C++ only. Copied; registering one twice is a no-op.
 * @retval CUCORE_INVALID_ARGUMENT the program is not CUDA C++, or `expr` is empty. */
CUCORE_API cucore_status cucore_program_add_name_expression(cucore_program *prog, const char *expr);
/** Adds another NVVM IR module (e.g.\ libdevice) to an NVVM program; `lazy` adds it with
 * nvvmLazyAddModuleToProgram (only what is used is linked). `size` 0 means NUL-terminated
 * text; `name` may be NULL ("module"). Copied.
 * @retval CUCORE_INVALID_ARGUMENT the program is not NVVM IR. */
CUCORE_API cucore_status cucore_program_add_module(cucore_program *prog, const void *code,
                                                   size_t size, const char *name, int lazy);
/** Compiles to `target`: CUCORE_CODE_PTX, CUCORE_CODE_CUBIN, CUCORE_CODE_LTOIR, or
 * CUCORE_CODE_FATBIN (one cubin or PTX entry per gencode option, so one binary runs on several
 * architectures). Without an arch option the current GPU's is used; without a GPU the arch must
 * be given. On failure (CUCORE_COMPILE_ERROR) the log holds the compiler's messages with
 * file:line. CUDA C++ with the lto option gives LTO-IR for a cubin target. `*out` is a new
 * reference (possibly to the object an earlier compile of the same key made; see
 * @ref cache): release it with cucore_object_destroy().
 * @retval CUCORE_COMPILE_ERROR the source did not compile; see cucore_program_get_log().
 * @retval CUCORE_INVALID_ARGUMENT an unknown target, no arch and no GPU, or a rejected option.
 * @retval CUCORE_NOT_SUPPORTED PTX to LTO-IR.
 * @retval CUCORE_NOT_FOUND a name expression names no `__global__` function or variable.
 * @retval CUCORE_VERSION_MISMATCH NVVM IR of a version this libNVVM does not read. */
CUCORE_API cucore_status cucore_program_compile(cucore_program *prog, cucore_code_type target,
                                                cucore_object **out);
/** The full log of the last compile (warnings on success, errors on failure); "" when none.
 * Owned by the program, valid until its next compile. */
CUCORE_API cucore_status cucore_program_get_log(const cucore_program *prog, const char **log);

/** @} */

/* ------------------------------------------------------------------------------------------ */
/* Linker: nvJitLink over cubin, PTX, LTO-IR, fatbin, host object and library inputs          */
/* ------------------------------------------------------------------------------------------ */

/**
 * @defgroup linker Linker
 * nvJitLink over cubin, PTX, LTO-IR, fatbin, host object and library inputs.
 * @{
 */

/** Inputs to link, copied when added: create with cucore_linker_create(), destroy with
 * cucore_linker_destroy(). One thread at a time. */
typedef struct cucore_linker cucore_linker;

/** CONSTRUCTOR: a linker; `opts` gives arch (or the current GPU's), lto, debug, lineinfo,
 * max registers, ftz/prec/fmad, opt level, ptxas options. Copied (NULL: the defaults). */
CUCORE_API cucore_status cucore_linker_create(const cucore_options *opts, cucore_linker **out);
/** DESTRUCTOR: frees the linker. NULL is a no-op. Objects it produced stay valid. */
CUCORE_API cucore_status cucore_linker_destroy(cucore_linker *lk);
/** Adds an input from memory; `type` AUTO detects it; `name` names it in messages (NULL:
 * "input N"). Copied. A declared `type` is checked against the bytes (their magic number;
 * PTX: text whose first directive is .version or .target).
 * @retval CUCORE_INVALID_BINARY empty or unrecognised bytes, or bytes of another type than
 *         `type` (the message names both).
 * @retval CUCORE_INVALID_ARGUMENT source code (CUDA C++ or NVVM IR: compile it first). */
CUCORE_API cucore_status cucore_linker_add(cucore_linker *lk, cucore_code_type type,
                                           const void *data, size_t size, const char *name);
/** Adds an object's code (e.g.\ an LTO-IR program result). An LTO-IR input made by an NVRTC
 * newer than the loaded nvJitLink is refused with CUCORE_VERSION_MISMATCH. The code is copied;
 * `obj` is not kept.
 * @retval CUCORE_VERSION_MISMATCH LTO-IR newer than the loaded nvJitLink. */
CUCORE_API cucore_status cucore_linker_add_object(cucore_linker *lk, const cucore_object *obj);
/** Adds an input read from a file (type from the bytes, or from `type`, checked against them
 * as in cucore_linker_add()), named by its path.
 * @retval CUCORE_IO_ERROR the file cannot be read (a directory or other non-regular file).
 * @retval CUCORE_INVALID_BINARY empty or unrecognised bytes, or another type than `type`. */
CUCORE_API cucore_status cucore_linker_add_file(cucore_linker *lk, const char *path,
                                                cucore_code_type type);
/** Links into CUCORE_CODE_CUBIN or CUCORE_CODE_PTX (PTX needs lto). The inputs stay, so it may
 * be called again. Release `*out` with cucore_object_destroy().
 * @retval CUCORE_INVALID_ARGUMENT another target, no inputs, PTX without lto, or no arch and
 *         no GPU.
 * @retval CUCORE_LINK_ERROR the inputs did not link; see cucore_linker_get_log().
 * @retval CUCORE_INVALID_BINARY nvJitLink refused an input.
 * @retval CUCORE_VERSION_MISMATCH an input is newer than the loaded nvJitLink. */
CUCORE_API cucore_status cucore_linker_complete(cucore_linker *lk, cucore_code_type target,
                                                cucore_object **out);
/** nvJitLink's info and error logs of the last complete ("" when none); owned by `lk`, valid
 * until its next complete. Either out may be NULL. */
CUCORE_API cucore_status cucore_linker_get_log(const cucore_linker *lk, const char **info_log,
                                               const char **error_log);

/** @} */

/* ------------------------------------------------------------------------------------------ */
/* ObjectCode: compiled code that is only loaded, and hands out kernels                        */
/* ------------------------------------------------------------------------------------------ */

/**
 * @defgroup object ObjectCode
 * Compiled code that is only loaded, and hands out kernels.
 * @{
 */

/** CONSTRUCTOR: an object from bytes (cubin, PTX, fatbin, LTO-IR; AUTO detects). Copied. The
 * code is not loaded until it is first needed (a kernel is asked for, or cucore_object_load).
 * `name` names it in messages (NULL: "code in memory"). Release `*out` with
 * cucore_object_destroy().
 * @retval CUCORE_INVALID_BINARY empty or unrecognised bytes, or bytes of another type than
 *         `type` (random bytes declared cubin, fatbin, PTX or LTO-IR; the message names the
 *         type declared and what the bytes are).
 * @retval CUCORE_INVALID_ARGUMENT a type that is not loadable code (source, host object,
 *         library), or `size` past PTRDIFF_MAX. */
CUCORE_API cucore_status cucore_object_from_memory(const void *data, size_t size,
                                                   cucore_code_type type, const char *name,
                                                   cucore_object **out);
/** CONSTRUCTOR: an object from a file; loaded with cuLibraryLoadFromFile (from the bytes read
 * now with cuLibraryLoadData when the driver lacks it; LTO-IR is linked from those bytes).
 * Checked as cucore_object_from_memory(); named by its path.
 * @retval CUCORE_IO_ERROR the file cannot be read (a directory or other non-regular file).
 * @retval CUCORE_INVALID_BINARY empty or unrecognised bytes, or another type than `type`.
 * @retval CUCORE_INVALID_ARGUMENT a type that is not loadable code. */
CUCORE_API cucore_status cucore_object_from_file(const char *path, cucore_code_type type,
                                                 cucore_object **out);
/** DESTRUCTOR: drops the caller's reference. The library is unloaded when the last reference
 * goes: each kernel handed out holds one, so kernels stay valid after this call. NULL no-op. */
CUCORE_API cucore_status cucore_object_destroy(cucore_object *obj);
/** The object's code: type, bytes and size (owned by the object). Any out may be NULL. */
CUCORE_API cucore_status cucore_object_get_code(const cucore_object *obj, cucore_code_type *type,
                                                const void **data, size_t *size);
/** The arch the code was compiled for (e.g.\ 90), 0 when it is not tied to one. */
CUCORE_API cucore_status cucore_object_get_arch(const cucore_object *obj, int *arch);
/** The lowered (mangled) name of a name expression given at compile time. CUCORE_NOT_FOUND
 * lists the expressions that were registered. Owned by the object.
 * @retval CUCORE_NOT_FOUND `expr` was not registered before the compile. */
CUCORE_API cucore_status cucore_object_get_lowered_name(const cucore_object *obj, const char *expr,
                                                        const char **lowered);
/** Loads the code now (cuLibraryLoadData / cuLibraryLoadFromFile) with the object's load
 * options. LTO-IR is linked first for the architecture of the current context's device
 * (device 0's when no context is current). Loading twice is a no-op. Needs a GPU.
 * @retval CUCORE_NO_DEVICE no GPU.
 * @retval CUCORE_INVALID_BINARY the code holds nothing this GPU can run.
 * @retval CUCORE_VERSION_MISMATCH PTX (or LTO-IR) newer than the driver (or nvJitLink) reads.
 * An object made from PTX the driver's JIT rejects fails here, with the JIT's error log in
 * the message (the driver itself would accept it and fail at the first kernel lookup). */
CUCORE_API cucore_status cucore_object_load(cucore_object *obj);

/** Which code the driver prefers when an object (a fatbin) holds both PTX and a cubin that
 * fit the GPU (CU_JIT_FALLBACK_STRATEGY). */
typedef enum cucore_load_fallback {
  CUCORE_LOAD_FALLBACK_DEFAULT = 0,      /**< the driver's choice (the cubin) */
  CUCORE_LOAD_FALLBACK_PREFER_PTX = 1,   /**< JIT the PTX even when a cubin fits */
  CUCORE_LOAD_FALLBACK_PREFER_BINARY = 2 /**< a compatible cubin over the PTX */
} cucore_load_fallback;

/**
 * Options for loading an object's code (the JIT and library options of cuLibraryLoadData /
 * cuLibraryLoadFromFile). Start from CUCORE_LOAD_OPTIONS_INIT. The JIT options matter when
 * the driver compiles PTX (a PTX object, or a fatbin without a fitting cubin).
 */
typedef struct cucore_load_options {
  int optimization_level;  /**< JIT optimisation level 0..4; -1: the driver's default (4) */
  int max_registers;       /**< JIT register limit per thread, 1..255; 0: none */
  int target_arch;         /**< JIT for sm_<target_arch> (e.g. 90) instead of the current
                                context's device; 0: the device's */
  int fallback;            /**< a cucore_load_fallback */
  int generate_debug_info; /**< 1: JIT with debug information (-G) */
  int generate_line_info;  /**< 1: JIT with line information (-lineinfo) */
  int log_verbose;         /**< 1: a verbose JIT log */
  int eager;               /**< 1: right after loading, load every kernel's function into the
                                current context (cuFuncLoad), so no launch pays for it; 0: as
                                the driver's loading mode says (CUDA_MODULE_LOADING, lazy by
                                default since CUDA 12.2) */
  int binary_is_preserved; /**< 1: the object keeps its code for as long as the library is
                                loaded (it always does), so the driver need not copy it
                                (CU_LIBRARY_BINARY_IS_PRESERVED); 0: let the driver copy */
  unsigned log_bytes;      /**< bytes kept of the JIT's info and error logs, 0..1 MiB
                                (cucore_object_get_jit_log); the error log's first line is also
                                put into the message of a failed load */
} cucore_load_options;

/** The defaults: driver JIT defaults, the driver's loading mode, the binary preserved, 16 KiB
 * of JIT log. */
#define CUCORE_LOAD_OPTIONS_INIT \
  { -1, 0, 0, CUCORE_LOAD_FALLBACK_DEFAULT, 0, 0, 0, 0, 1, 16384u }

/**
 * Sets how `obj` will be loaded (copied into the object). Call it before the object is
 * loaded: CUCORE_INVALID_ARGUMENT once it is (a kernel was looked up on a GPU, or
 * cucore_object_load ran), and for a field out of range (named with its range).
 * Not thread-safe against a concurrent load of the same object.
 */
CUCORE_API cucore_status cucore_object_set_load_options(cucore_object *obj,
                                                        const cucore_load_options *opts);
/**
 * The driver JIT's info and error logs of the last load of `obj` ("" when empty or none was
 * kept). Owned by the object; valid until it is destroyed.
 */
CUCORE_API cucore_status cucore_object_get_jit_log(const cucore_object *obj, const char **info_log,
                                                   const char **error_log);
/**
 * The driver's module loading mode (cuModuleGetLoadingMode): *lazy is 1 when kernels are
 * loaded into a context on first use (CUDA_MODULE_LOADING=LAZY, the default since CUDA 12.2),
 * 0 when eagerly.
 * Errors: CUCORE_DRIVER_TOO_OLD before CUDA 11.7; CUCORE_NO_DEVICE without a GPU.
 */
CUCORE_API cucore_status cucore_driver_get_loading_mode(int *lazy);
/** The number of kernels in the object. Uses the driver (cuLibraryEnumerateKernels, loading
 * the code) where a GPU is present, the offline reader otherwise (LTO-IR needs a GPU: it is
 * linked for one first).
 * @retval CUCORE_INVALID_BINARY the reader could not read the code.
 * @retval CUCORE_NO_DEVICE LTO-IR without a GPU. */
CUCORE_API cucore_status cucore_object_get_kernel_count(cucore_object *obj, int *count);
/** The name of kernel `index` (symbol as in the binary), found as cucore_object_get_kernel_count()
 * finds them. Owned by the object.
 * @retval CUCORE_INVALID_ARGUMENT `index` is out of range (the message names the count). */
CUCORE_API cucore_status cucore_object_get_kernel_name(cucore_object *obj, int index,
                                                       const char **name);
/** The native CUlibrary (loads first). Owned by the object: do not unload it. */
CUCORE_API cucore_status cucore_object_get_native(cucore_object *obj, void **culibrary);
/** The PTX the code was made from, when cucore compiled it (it records parameter types that a
 * cubin lacks; see cucore_binary_attach_ptx), or the code itself for a PTX object; *ptx NULL
 * and *size 0 when there is none. Owned by the object; `size` may be NULL. */
CUCORE_API cucore_status cucore_object_get_ptx(const cucore_object *obj, const char **ptx,
                                               size_t *size);

/* ---- Module globals: __device__, __constant__ and __managed__ variables of an object ---- */

/** What kind of module variable a global is. */
typedef enum cucore_global_kind {
  CUCORE_GLOBAL_UNKNOWN = 0,  /**< not known: the driver does not say, and the code could not
                                  be read offline (LTO-IR) */
  CUCORE_GLOBAL_DEVICE = 1,   /**< `__device__` (PTX `.global`; cubin `.nv.global` or, with an
                                  initial value, `.nv.global.init`) */
  CUCORE_GLOBAL_CONSTANT = 2, /**< `__constant__` (PTX `.const`; cubin `.nv.constant3`):
                                   read-only for kernels, written by the host */
  CUCORE_GLOBAL_MANAGED = 3   /**< `__managed__` (PTX `.global .attribute(.managed)`): one
                                  allocation shared by the host and every device */
} cucore_global_kind;

/** "device", "constant", "managed" or "unknown" (also for a value not in the enum). Never
 * NULL; static storage. */
CUCORE_API const char *cucore_global_kind_name(cucore_global_kind kind);

/** A module variable of a loaded object, on one device: filled by cucore_object_get_global(),
 * read and written with cucore_global_read() and cucore_global_write(). A plain value that
 * may be copied; it stays valid while the object and the device do. */
typedef struct cucore_global {
  const char *name;        /**< the symbol (the lowered name when a name expression was asked
                                for); owned by the object */
  cucore_device *device;   /**< the device `address` belongs to (borrowed) */
  cucore_devptr address;   /**< the variable's address on `device`; for a managed variable the
                                one address shared by the host and every device */
  size_t size;             /**< bytes, as the driver reports them */
  cucore_global_kind kind; /**< its kind, read from the code (UNKNOWN when it cannot be) */
} cucore_global;

/**
 * Finds the module variable `name` of `obj` on `dev` (cuLibraryGetGlobal; cuLibraryGetManaged
 * for a `__managed__` variable): a symbol ("table", "_ZN2ns5tableE") or a name expression
 * registered when the object was compiled ("ns::table", "coeffs<float>"), as for kernels.
 * Loads the object first (see cucore_object_load). `*out` is zeroed on failure.
 * @retval CUCORE_NOT_FOUND no variable of that name; the message lists those that exist
 *         (read from the code) and says when a template needs its name expression.
 * @retval CUCORE_NO_DEVICE no GPU.
 */
CUCORE_API cucore_status cucore_object_get_global(cucore_object *obj, cucore_device *dev,
                                                  const char *name, cucore_global *out);
/**
 * Copies `bytes` from host `src` into the global at byte `offset`. With a stream (of the
 * global's device; NULL: synchronous) the copy is queued on it and `src` must stay valid until
 * the stream reaches it. A copy of 0 bytes is a no-op. Checked first: offset + bytes must not
 * pass the variable's size (CUCORE_INVALID_ARGUMENT naming both, e.g. "a copy of 32 bytes at
 * offset 16 runs past the end of `table` (constant, 40 bytes)").
 * @retval CUCORE_INVALID_ARGUMENT the copy does not fit, a NULL `src` with bytes > 0, or a
 *         stream of another device.
 */
CUCORE_API cucore_status cucore_global_write(const cucore_global *g, size_t offset, const void *src,
                                             size_t bytes, cucore_stream *s);
/**
 * Copies `bytes` of the global from byte `offset` into host `dst`; checked and queued as
 * cucore_global_write() (with a stream, `dst` holds the data once the stream is synchronised).
 * @retval CUCORE_INVALID_ARGUMENT the copy does not fit, a NULL `dst` with bytes > 0, or a
 *         stream of another device.
 */
CUCORE_API cucore_status cucore_global_read(const cucore_global *g, size_t offset, void *dst,
                                            size_t bytes, cucore_stream *s);

/** @} */

/* ------------------------------------------------------------------------------------------ */
/* Kernels: lookup, parameter layout, every cuFunc / cuKernel query and setting                */
/* ------------------------------------------------------------------------------------------ */

/**
 * @defgroup kernel Kernels
 * Lookup, parameter layout, every cuFunc / cuKernel query and setting. A call that takes a
 * device needs a kernel looked up where a GPU was present (else CUCORE_NO_DEVICE), and
 * supports up to 16 devices per kernel (else CUCORE_NOT_SUPPORTED).
 * @{
 */

/** A kernel of an object: look up with cucore_object_get_kernel(), destroy with
 * cucore_kernel_destroy(). May be shared between threads (see the thread-safety notes on the
 * main page). */
typedef struct cucore_kernel cucore_kernel;

/** CONSTRUCTOR: the kernel `name` of `obj`: a symbol ("_Z5scalePfi", "saxpy") or a name
 * expression registered at compile time ("scale<float>"). The kernel holds a reference to the
 * object. With a GPU the code is loaded and the layout comes from the driver
 * (cuKernelGetParamInfo) -- except for a cubin under lazy loading (the driver's default),
 * whose own layout is read so the kernel stays unloaded until it is first used (the driver's
 * query would load it); without a GPU, from the offline reader. CUCORE_NOT_FOUND lists the
 * kernels that exist. Destroy `*out` with cucore_kernel_destroy().
 * @retval CUCORE_NOT_FOUND no such kernel (the message lists those that exist).
 * @retval CUCORE_INVALID_BINARY the code cannot be loaded or read.
 * @retval CUCORE_NO_DEVICE LTO-IR without a GPU.
 * @retval CUCORE_VERSION_MISMATCH PTX newer than the driver can compile. */
CUCORE_API cucore_status cucore_object_get_kernel(cucore_object *obj, const char *name,
                                                  cucore_kernel **out);
/** DESTRUCTOR: drops the kernel and its reference to the object. NULL is a no-op. Argument
 * lists made for it must be destroyed first. */
CUCORE_API cucore_status cucore_kernel_destroy(cucore_kernel *k);
/** The kernel's symbol as in the binary (the lowered name for a name expression). Owned by the
 * kernel. */
CUCORE_API cucore_status cucore_kernel_get_name(const cucore_kernel *k, const char **name);
/** The object the kernel came from (borrowed: no reference is added). */
CUCORE_API cucore_status cucore_kernel_get_object(const cucore_kernel *k, cucore_object **obj);
/**
 * A kernel handle over a CUkernel made elsewhere (cuLibraryGetKernel of the caller's own
 * library, or cudaGetKernel). Context-independent: it runs on every device. The parameter
 * layout comes from the driver (cuKernelGetParamInfo, CUDA 12.4+), so counts, sizes and
 * alignments are checked; types are not known unless declared with
 * cucore_kernel_declare_signature. The CUkernel is borrowed: its library must stay loaded
 * while the handle lives; cucore_kernel_destroy frees the handle only, and
 * cucore_kernel_get_object gives NULL.
 * Errors: CUCORE_DRIVER_TOO_OLD before CUDA 12.4; CUCORE_DRIVER_ERROR for a handle the driver
 * does not know.
 */
CUCORE_API cucore_status cucore_kernel_from_cukernel(void *cukernel, cucore_kernel **out);
/**
 * A kernel handle over a CUfunction of `dev`'s context (cuModuleGetFunction, or the runtime's
 * cudaGetFuncBySymbol). It runs on that device only (a launch on another is
 * CUCORE_INVALID_DEVICE). Layout from cuFuncGetParamInfo; the function is borrowed, as for
 * cucore_kernel_from_cukernel.
 */
CUCORE_API cucore_status cucore_kernel_from_cufunction(cucore_device *dev, void *cufunction,
                                                       cucore_kernel **out);
/** Number of parameters. */
CUCORE_API cucore_status cucore_kernel_get_param_count(const cucore_kernel *k, int *count);
/** Layout of parameter `index` (offset, size, alignment, kind when known), copied to `*out`.
 * @retval CUCORE_INVALID_ARGUMENT `index` is out of range. */
CUCORE_API cucore_status cucore_kernel_get_param(const cucore_kernel *k, int index,
                                                 cucore_param_info *out);
/** Total bytes of the parameter buffer. */
CUCORE_API cucore_status cucore_kernel_get_param_bytes(const cucore_kernel *k, size_t *bytes);
/** Declares the parameter types of a kernel whose code did not say them (a cubin loaded from a
 * file records offsets and sizes but not types): a comma-separated list, one per parameter,
 * of i8 u8 i16 u16 i32 u32 i64 u64 (integers), f16 bf16 f32 f64 (floating point), ptr, tex,
 * surf, or bytes (a struct by value), e.g.\ "f32, ptr, ptr, i32". Each is checked against the
 * layout: the count (CUCORE_ARG_COUNT) and each size (CUCORE_ARG_SIZE, naming the parameter);
 * nothing changes on failure. Argument lists made afterwards check against these types.
 * Not synchronised: must not race with any other use of the kernel or its argument lists.
 * @retval CUCORE_PARSE_ERROR an empty or unknown type in the list.
 * @retval CUCORE_ARG_COUNT the list has another number of parameters than the kernel.
 * @retval CUCORE_ARG_SIZE a type's size is not its parameter's. */
CUCORE_API cucore_status cucore_kernel_declare_signature(cucore_kernel *k, const char *signature);
/** Where the layout came from: "driver" (cuKernelGetParamInfo), "cubin" (offline reader) or
 * "ptx" (.entry declaration). Static storage. */
CUCORE_API cucore_status cucore_kernel_get_layout_source(const cucore_kernel *k, const char **src);

/** Kernel attributes; the values equal CUfunction_attribute's. */
typedef enum cucore_kernel_attr {
  CUCORE_KATTR_MAX_THREADS_PER_BLOCK = 0,              /**< largest block it can be launched with */
  CUCORE_KATTR_SHARED_SIZE_BYTES = 1,                  /**< static shared memory */
  CUCORE_KATTR_CONST_SIZE_BYTES = 2,                   /**< constant memory the kernel uses */
  CUCORE_KATTR_LOCAL_SIZE_BYTES = 3,                   /**< local memory per thread */
  CUCORE_KATTR_NUM_REGS = 4,                           /**< registers per thread */
  CUCORE_KATTR_PTX_VERSION = 5,                        /**< PTX ISA version, major*10 + minor */
  CUCORE_KATTR_BINARY_VERSION = 6,                     /**< binary architecture, major*10 + minor */
  CUCORE_KATTR_CACHE_MODE_CA = 7,                      /**< 1 when compiled with -Xptxas -dlcm=ca */
  CUCORE_KATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,      /**< settable */
  CUCORE_KATTR_PREFERRED_SHARED_MEMORY_CARVEOUT = 9,   /**< settable, percent or -1 */
  CUCORE_KATTR_CLUSTER_SIZE_MUST_BE_SET = 10,          /**< 1: launches must give a cluster size */
  CUCORE_KATTR_REQUIRED_CLUSTER_WIDTH = 11,            /**< settable before first launch */
  CUCORE_KATTR_REQUIRED_CLUSTER_HEIGHT = 12,           /**< settable before first launch */
  CUCORE_KATTR_REQUIRED_CLUSTER_DEPTH = 13,            /**< settable before first launch */
  CUCORE_KATTR_NON_PORTABLE_CLUSTER_SIZE_ALLOWED = 14, /**< settable */
  CUCORE_KATTR_CLUSTER_SCHEDULING_POLICY_PREFERENCE = 15, /**< settable */
  CUCORE_KATTR_COUNT                                      /**< the number of attributes */
} cucore_kernel_attr;

/** "max_threads_per_block", ... ("unknown_attribute" for a value not in the enum). Never NULL;
 * static storage. */
CUCORE_API const char *cucore_kernel_attr_name(cucore_kernel_attr attr);
/** Reads an attribute for the kernel on `dev` (cuKernelGetAttribute). */
CUCORE_API cucore_status cucore_kernel_get_attribute(cucore_kernel *k, cucore_device *dev,
                                                     cucore_kernel_attr attr, int *value);
/** Sets a settable attribute for the kernel on `dev` (cuKernelSetAttribute); read-only ones are
 * CUCORE_INVALID_ARGUMENT naming the settable ones. Later launches check against the new value.
 * @retval CUCORE_INVALID_ARGUMENT a read-only attribute, dynamic shared memory beyond the
 *         device's opt-in maximum after static memory, or a carveout outside -1..100. */
CUCORE_API cucore_status cucore_kernel_set_attribute(cucore_kernel *k, cucore_device *dev,
                                                     cucore_kernel_attr attr, int value);

/** Preferred L1 / shared memory split of a kernel; the values equal CUfunc_cache's. */
typedef enum cucore_cache_config {
  CUCORE_CACHE_PREFER_NONE = 0,   /**< no preference */
  CUCORE_CACHE_PREFER_SHARED = 1, /**< prefer more shared memory */
  CUCORE_CACHE_PREFER_L1 = 2,     /**< prefer more L1 cache */
  CUCORE_CACHE_PREFER_EQUAL = 3   /**< prefer equal L1 and shared memory */
} cucore_cache_config;
/** Sets the preferred cache configuration (cuKernelSetCacheConfig). */
CUCORE_API cucore_status cucore_kernel_set_cache_config(cucore_kernel *k, cucore_device *dev,
                                                        cucore_cache_config config);
/** Whether the kernel's function is loaded on `dev` (cuFuncIsLoaded, read without loading it:
 * the function is found in its module's list, since cuKernelGetFunction would load it). Under
 * lazy loading (CUDA_MODULE_LOADING=LAZY, the driver's default) a kernel is loaded by its
 * first launch, which may serialise with other work: load kernels that must run concurrently
 * (programmatic dependent launches, producer/consumer kernels) with cucore_kernel_load()
 * before launching them, or load the object eagerly (cucore_load_options.eager). */
CUCORE_API cucore_status cucore_kernel_is_loaded(cucore_kernel *k, cucore_device *dev, int *loaded);
/** Loads the kernel's function on `dev` explicitly (cuFuncLoad). */
CUCORE_API cucore_status cucore_kernel_load(cucore_kernel *k, cucore_device *dev);
/** The native CUkernel and the CUfunction for `dev` (cuKernelGetFunction). Either may be NULL.
 * Both stay owned by cucore, valid while the kernel lives. */
CUCORE_API cucore_status cucore_kernel_get_native(cucore_kernel *k, cucore_device *dev,
                                                  void **cukernel, void **cufunction);
/** The CUmodule holding the kernel's function on `dev` (cuFuncGetModule); owned by the driver,
 * valid while the kernel lives. */
CUCORE_API cucore_status cucore_kernel_get_module(cucore_kernel *k, cucore_device *dev,
                                                  void **cumodule);
/** The function name the driver reports for the kernel's function on `dev` (cuFuncGetName);
 * owned by the driver, valid while the kernel lives. */
CUCORE_API cucore_status cucore_kernel_get_function_name(cucore_kernel *k, cucore_device *dev,
                                                         const char **name);

/** @} */

/* ------------------------------------------------------------------------------------------ */
/* Kernel arguments: bound by value, checked against the kernel's layout                       */
/* ------------------------------------------------------------------------------------------ */

/**
 * @defgroup args Kernel arguments
 * Bound by value, checked against the kernel's layout.
 * @{
 */

/** The argument values of one launch of a kernel, copied when bound: create with
 * cucore_args_create(), destroy with cucore_args_destroy(). Not thread-safe: one thread at a
 * time, including the launch that reads it. */
typedef struct cucore_args cucore_args;

/** CONSTRUCTOR: an empty argument list for `k` (which must outlive it). */
CUCORE_API cucore_status cucore_args_create(const cucore_kernel *k, cucore_args **out);
/** DESTRUCTOR: frees the argument list. NULL is a no-op. */
CUCORE_API cucore_status cucore_args_destroy(cucore_args *args);
/** Forgets every value and the sticky error; the next push is argument 0. */
CUCORE_API cucore_status cucore_args_reset(cucore_args *args);

/** Sets parameter `index` to an int8_t. Setters by index: each copies the value at once (the
 * caller's variable need not live on) and checks it against parameter `index`: the index
 * exists (CUCORE_ARG_COUNT), the size matches (CUCORE_ARG_SIZE), the kind matches where known
 * (CUCORE_ARG_TYPE: a float for an integer, a double for a float...), the alignment fits the
 * offset (CUCORE_ARG_ALIGNMENT). The first failure is also kept in the list and returned again
 * by cucore_args_check and at launch. */
CUCORE_API cucore_status cucore_args_set_i8(cucore_args *a, int index, int8_t v);
/** As cucore_args_set_i8(), for a uint8_t. */
CUCORE_API cucore_status cucore_args_set_u8(cucore_args *a, int index, uint8_t v);
/** As cucore_args_set_i8(), for an int16_t. */
CUCORE_API cucore_status cucore_args_set_i16(cucore_args *a, int index, int16_t v);
/** As cucore_args_set_i8(), for a uint16_t. */
CUCORE_API cucore_status cucore_args_set_u16(cucore_args *a, int index, uint16_t v);
/** As cucore_args_set_i8(), for an int32_t. */
CUCORE_API cucore_status cucore_args_set_i32(cucore_args *a, int index, int32_t v);
/** As cucore_args_set_i8(), for a uint32_t. */
CUCORE_API cucore_status cucore_args_set_u32(cucore_args *a, int index, uint32_t v);
/** As cucore_args_set_i8(), for an int64_t. */
CUCORE_API cucore_status cucore_args_set_i64(cucore_args *a, int index, int64_t v);
/** As cucore_args_set_i8(), for a uint64_t. */
CUCORE_API cucore_status cucore_args_set_u64(cucore_args *a, int index, uint64_t v);
/** Half and bfloat16 given as their 16-bit patterns: a half, as cucore_args_set_i8(). */
CUCORE_API cucore_status cucore_args_set_f16(cucore_args *a, int index, uint16_t bits);
/** A bfloat16 given as its 16-bit pattern, as cucore_args_set_i8(). */
CUCORE_API cucore_status cucore_args_set_bf16(cucore_args *a, int index, uint16_t bits);
/** As cucore_args_set_i8(), for a float. */
CUCORE_API cucore_status cucore_args_set_f32(cucore_args *a, int index, float v);
/** As cucore_args_set_i8(), for a double. */
CUCORE_API cucore_status cucore_args_set_f64(cucore_args *a, int index, double v);
/** A device pointer, as cucore_args_set_i8(). */
CUCORE_API cucore_status cucore_args_set_ptr(cucore_args *a, int index, cucore_devptr p);
/** A host pointer passed as an address (managed or mapped memory only), as
 * cucore_args_set_i8(). */
CUCORE_API cucore_status cucore_args_set_host_ptr(cucore_args *a, int index, const void *p);
/** A struct/union/vector by value: `size` bytes with the type's alignment (use `_Alignof`),
 * as cucore_args_set_i8(); `data` is copied.
 * @retval CUCORE_ARG_NULL `data` is NULL.
 * @retval CUCORE_ARG_SIZE `size` is 0, above 32764, or not the parameter's.
 * @retval CUCORE_ARG_ALIGNMENT `align` is not a power of two up to 4096, or not the
 *         parameter's. */
CUCORE_API cucore_status cucore_args_set_bytes(cucore_args *a, int index, const void *data,
                                               size_t size, size_t align);
/** Texture and surface objects (CUtexObject / CUsurfObject values): a texture object, as
 * cucore_args_set_i8(). */
CUCORE_API cucore_status cucore_args_set_texture(cucore_args *a, int index, uint64_t tex);
/** A surface object (CUsurfObject value), as cucore_args_set_i8(). */
CUCORE_API cucore_status cucore_args_set_surface(cucore_args *a, int index, uint64_t surf);

/** The same, each at the next index (0, 1, 2, ... since create or reset): here
 * cucore_args_set_i8(). A failed push still uses up its index. */
CUCORE_API cucore_status cucore_args_push_i8(cucore_args *a, int8_t v);
/** cucore_args_set_u8() at the next index. */
CUCORE_API cucore_status cucore_args_push_u8(cucore_args *a, uint8_t v);
/** cucore_args_set_i16() at the next index. */
CUCORE_API cucore_status cucore_args_push_i16(cucore_args *a, int16_t v);
/** cucore_args_set_u16() at the next index. */
CUCORE_API cucore_status cucore_args_push_u16(cucore_args *a, uint16_t v);
/** cucore_args_set_i32() at the next index. */
CUCORE_API cucore_status cucore_args_push_i32(cucore_args *a, int32_t v);
/** cucore_args_set_u32() at the next index. */
CUCORE_API cucore_status cucore_args_push_u32(cucore_args *a, uint32_t v);
/** cucore_args_set_i64() at the next index. */
CUCORE_API cucore_status cucore_args_push_i64(cucore_args *a, int64_t v);
/** cucore_args_set_u64() at the next index. */
CUCORE_API cucore_status cucore_args_push_u64(cucore_args *a, uint64_t v);
/** cucore_args_set_f16() at the next index. */
CUCORE_API cucore_status cucore_args_push_f16(cucore_args *a, uint16_t bits);
/** cucore_args_set_bf16() at the next index. */
CUCORE_API cucore_status cucore_args_push_bf16(cucore_args *a, uint16_t bits);
/** cucore_args_set_f32() at the next index. */
CUCORE_API cucore_status cucore_args_push_f32(cucore_args *a, float v);
/** cucore_args_set_f64() at the next index. */
CUCORE_API cucore_status cucore_args_push_f64(cucore_args *a, double v);
/** cucore_args_set_ptr() at the next index. */
CUCORE_API cucore_status cucore_args_push_ptr(cucore_args *a, cucore_devptr p);
/** cucore_args_set_host_ptr() at the next index. */
CUCORE_API cucore_status cucore_args_push_host_ptr(cucore_args *a, const void *p);
/** cucore_args_set_bytes() at the next index. */
CUCORE_API cucore_status cucore_args_push_bytes(cucore_args *a, const void *data, size_t size,
                                                size_t align);
/** cucore_args_set_texture() at the next index. */
CUCORE_API cucore_status cucore_args_push_texture(cucore_args *a, uint64_t tex);
/** cucore_args_set_surface() at the next index. */
CUCORE_API cucore_status cucore_args_push_surface(cucore_args *a, uint64_t surf);

/** CUCORE_OK when every parameter has a value; otherwise the first error kept, or
 * CUCORE_ARG_COUNT ("kernel `k` takes 4 parameters, 3 were given") / CUCORE_ARG_UNSET.
 * @retval CUCORE_ARG_COUNT the last parameters have no value.
 * @retval CUCORE_ARG_UNSET a parameter before the last one set has no value. */
CUCORE_API cucore_status cucore_args_check(const cucore_args *a);
/** The kernelParams array (one pointer per parameter) and the packed parameter buffer (the
 * `extra` form), both owned by `a`, valid until it is destroyed. Any out may be NULL. */
CUCORE_API cucore_status cucore_args_get_native(cucore_args *a, void ***kernel_params,
                                                void **buffer, size_t *buffer_size);

#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L && !defined(__cplusplus)
/** CUCORE_ARG(args, x): pushes x with the setter its static type picks. cucore_devptr is
 * uint64_t, so it pushes as u64, which a pointer parameter accepts. Any pointer pushes as a
 * host pointer (cucore_args_push_host_ptr); other types do not compile. C11 only. */
#define CUCORE_ARG(a, x)                              \
  _Generic((x), _Bool                                 \
           : cucore_args_push_u8, char                \
           : cucore_args_push_i8, signed char         \
           : cucore_args_push_i8, unsigned char       \
           : cucore_args_push_u8, short               \
           : cucore_args_push_i16, unsigned short     \
           : cucore_args_push_u16, int                \
           : cucore_args_push_i32, unsigned int       \
           : cucore_args_push_u32, long               \
           : cucore_args_push_i64, unsigned long      \
           : cucore_args_push_u64, long long          \
           : cucore_args_push_i64, unsigned long long \
           : cucore_args_push_u64, float              \
           : cucore_args_push_f32, double             \
           : cucore_args_push_f64, default            \
           : cucore_args_push_host_ptr)((a), (x))
/** @cond CUCORE_INTERNAL */
/* Helpers of CUCORE_ARGS (counting and pasting its arguments): not API, left out of the
 * reference. */
#define CUCORE_ARGS_N_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16, N, \
                       ...)                                                                      \
  N
#define CUCORE_ARGS_N(...) \
  CUCORE_ARGS_N_(__VA_ARGS__, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define CUCORE_ARGS_CAT_(a, b) a##b
#define CUCORE_ARGS_CAT(a, b) CUCORE_ARGS_CAT_(a, b)
#define CUCORE_ARGS_1(a, x) CUCORE_ARG(a, x)
#define CUCORE_ARGS_2(a, x, ...) CUCORE_ARG(a, x), CUCORE_ARGS_1(a, __VA_ARGS__)
#define CUCORE_ARGS_3(a, x, ...) CUCORE_ARG(a, x), CUCORE_ARGS_2(a, __VA_ARGS__)
#define CUCORE_ARGS_4(a, x, ...) CUCORE_ARG(a, x), CUCORE_ARGS_3(a, __VA_ARGS__)
#define CUCORE_ARGS_5(a, x, ...) CUCORE_ARG(a, x), CUCORE_ARGS_4(a, __VA_ARGS__)
#define CUCORE_ARGS_6(a, x, ...) CUCORE_ARG(a, x), CUCORE_ARGS_5(a, __VA_ARGS__)
#define CUCORE_ARGS_7(a, x, ...) CUCORE_ARG(a, x), CUCORE_ARGS_6(a, __VA_ARGS__)
#define CUCORE_ARGS_8(a, x, ...) CUCORE_ARG(a, x), CUCORE_ARGS_7(a, __VA_ARGS__)
#define CUCORE_ARGS_9(a, x, ...) CUCORE_ARG(a, x), CUCORE_ARGS_8(a, __VA_ARGS__)
#define CUCORE_ARGS_10(a, x, ...) CUCORE_ARG(a, x), CUCORE_ARGS_9(a, __VA_ARGS__)
#define CUCORE_ARGS_11(a, x, ...) CUCORE_ARG(a, x), CUCORE_ARGS_10(a, __VA_ARGS__)
#define CUCORE_ARGS_12(a, x, ...) CUCORE_ARG(a, x), CUCORE_ARGS_11(a, __VA_ARGS__)
#define CUCORE_ARGS_13(a, x, ...) CUCORE_ARG(a, x), CUCORE_ARGS_12(a, __VA_ARGS__)
#define CUCORE_ARGS_14(a, x, ...) CUCORE_ARG(a, x), CUCORE_ARGS_13(a, __VA_ARGS__)
#define CUCORE_ARGS_15(a, x, ...) CUCORE_ARG(a, x), CUCORE_ARGS_14(a, __VA_ARGS__)
#define CUCORE_ARGS_16(a, x, ...) CUCORE_ARG(a, x), CUCORE_ARGS_15(a, __VA_ARGS__)
/** @endcond */
/** CUCORE_ARGS(args, x, y, ...): resets `args`, pushes up to 16 values by static type, and
 * evaluates to cucore_args_check(args): the first mistake, or a count that is off. Takes 1 to
 * 16 values; C11 only. */
#define CUCORE_ARGS(a, ...)                                                   \
  (cucore_args_reset(a),                                                      \
   CUCORE_ARGS_CAT(CUCORE_ARGS_, CUCORE_ARGS_N(__VA_ARGS__))(a, __VA_ARGS__), \
   cucore_args_check(a))
#endif

/** @} */

/* ------------------------------------------------------------------------------------------ */
/* Launches                                                                                   */
/* ------------------------------------------------------------------------------------------ */

/**
 * @defgroup launch Launches
 * Launch configurations, launches with pre-flight checks, host functions.
 * @{
 */

/** Launch attributes; the values equal CUlaunchAttributeID's. */
typedef enum cucore_launch_attr_id {
  CUCORE_LAUNCH_ACCESS_POLICY_WINDOW = 1,      /**< u.access_policy: L2 persistence window */
  CUCORE_LAUNCH_COOPERATIVE = 2,               /**< u.value 1: grid-wide synchronisation */
  CUCORE_LAUNCH_SYNCHRONIZATION_POLICY = 3,    /**< u.value: CUsynchronizationPolicy (some
                                                       drivers take it on streams only) */
  CUCORE_LAUNCH_CLUSTER_DIMENSION = 4,         /**< u.dim: blocks per cluster */
  CUCORE_LAUNCH_CLUSTER_SCHEDULING_POLICY = 5, /**< u.value: CUclusterSchedulingPolicy */
  CUCORE_LAUNCH_PROGRAMMATIC_STREAM_SERIALIZATION = 6, /**< u.value 1: programmatic dependent
                                                            launch */
  CUCORE_LAUNCH_PROGRAMMATIC_EVENT = 7,            /**< u.event: event triggered by the kernel */
  CUCORE_LAUNCH_PRIORITY = 8,                      /**< u.value: the launch's priority */
  CUCORE_LAUNCH_MEM_SYNC_DOMAIN_MAP = 9,           /**< u.domain_map */
  CUCORE_LAUNCH_MEM_SYNC_DOMAIN = 10,              /**< u.value: CUlaunchMemSyncDomain */
  CUCORE_LAUNCH_PREFERRED_CLUSTER_DIMENSION = 11,  /**< u.dim: preferred blocks per cluster */
  CUCORE_LAUNCH_COMPLETION_EVENT = 12,             /**< u.event: recorded when blocks finish */
  CUCORE_LAUNCH_DEVICE_UPDATABLE_KERNEL_NODE = 13, /**< u.value; graphs only (a launch refuses
                                                        it) */
  CUCORE_LAUNCH_PREFERRED_SHARED_MEMORY_CARVEOUT = 14, /**< u.value: percent */
  CUCORE_LAUNCH_NVLINK_UTIL_CENTRIC_SCHEDULING = 16    /**< u.value: 1 to turn it on */
} cucore_launch_attr_id;

/** One launch attribute. Fill the member its id names. */
typedef struct cucore_launch_attr {
  cucore_launch_attr_id id; /**< which attribute; names the member of `u` to fill */
  /** The attribute's value. */
  union {
    int value;       /**< COOPERATIVE, SYNCHRONIZATION_POLICY, CLUSTER_SCHEDULING_POLICY,
                  PROGRAMMATIC_STREAM_SERIALIZATION, PRIORITY, MEM_SYNC_DOMAIN,
                  DEVICE_UPDATABLE_KERNEL_NODE (graphs only), PREFERRED_SHARED_MEMORY_CARVEOUT,
                  NVLINK_UTIL_CENTRIC_SCHEDULING */
    unsigned dim[3]; /**< CLUSTER_DIMENSION, PREFERRED_CLUSTER_DIMENSION */
    /** ACCESS_POLICY_WINDOW */
    struct {
      cucore_devptr base; /**< start of the window */
      size_t bytes;       /**< size of the window */
      float hit_ratio;    /**< share of accesses given hit_property, 0..1 */
      /** @{ */
      int hit_property, miss_property; /**< 0 normal, 1 streaming, 2 persisting */
      /** @} */
    } access_policy;
    struct {
      cucore_event *event;        /**< an event of the launch's device (borrowed) */
      int flags;                  /**< event record flags (not CU_EVENT_RECORD_EXTERNAL) */
      int trigger_at_block_start; /**< PROGRAMMATIC_EVENT only */
    } event;                      /**< PROGRAMMATIC_EVENT, COMPLETION_EVENT */
    /** MEM_SYNC_DOMAIN_MAP */
    struct {
      /** @{ */
      unsigned char default_domain, remote_domain; /**< domains of default and remote
                                                        accesses */
      /** @} */
    } domain_map;
    /** The value as the driver lays it out (CUlaunchAttributeValue's 64 bytes), for attribute
     * ids newer than cucore: copied to the driver as given when the loaded driver is newer
     * than the headers cucore was built with. */
    unsigned char raw[64];
  } u;
} cucore_launch_attr;

/** Most attributes one launch configuration holds. */
#define CUCORE_MAX_LAUNCH_ATTRS 16

/** Where and how big: grid and block (1-3 D; unused dimensions 0 or 1), dynamic shared memory,
 * the stream (required: it names the device; cucore_stream_default gives stream 0), and
 * attributes. Zero-initialise, then fill. A plain value: not synchronised. */
typedef struct cucore_launch_config {
  unsigned grid[3];      /**< blocks per grid, x y z (x at least 1) */
  unsigned block[3];     /**< threads per block, x y z (x at least 1) */
  unsigned shared_bytes; /**< dynamic shared memory per block */
  cucore_stream *stream; /**< the stream (and so the device) to launch on */
  int attr_count;        /**< attributes used in `attrs`, 0..CUCORE_MAX_LAUNCH_ATTRS */
  cucore_launch_attr attrs[CUCORE_MAX_LAUNCH_ATTRS]; /**< set with cucore_launch_config_set() */
} cucore_launch_config;

/** Sets an attribute, replacing one with the same id. CUCORE_INVALID_ARGUMENT when full or
 * the id is unknown (or attr_count is corrupt). */
CUCORE_API cucore_status cucore_launch_config_set(cucore_launch_config *cfg,
                                                  const cucore_launch_attr *attr);
/** Shorthands for the common attributes: a cluster of x*y*z blocks
 * (CUCORE_LAUNCH_CLUSTER_DIMENSION), as cucore_launch_config_set(). */
CUCORE_API cucore_status cucore_launch_config_cluster(cucore_launch_config *cfg, unsigned x,
                                                      unsigned y, unsigned z);
/** A cooperative launch when `on` is not 0 (CUCORE_LAUNCH_COOPERATIVE), as
 * cucore_launch_config_set(). */
CUCORE_API cucore_status cucore_launch_config_cooperative(cucore_launch_config *cfg, int on);
/** The launch's priority (CUCORE_LAUNCH_PRIORITY), as cucore_launch_config_set(). */
CUCORE_API cucore_status cucore_launch_config_priority(cucore_launch_config *cfg, int priority);
/** Programmatic dependent launch: this launch may start before the previous kernel on the
 * stream finishes (it waits in cudaGridDependencySynchronize). As cucore_launch_config_set(). */
CUCORE_API cucore_status cucore_launch_config_pdl(cucore_launch_config *cfg, int on);

/**
 * Sets a stream attribute (cuStreamSetAttribute): the launch attributes that belong to a
 * stream -- CUCORE_LAUNCH_ACCESS_POLICY_WINDOW, _SYNCHRONIZATION_POLICY, _PRIORITY,
 * _MEM_SYNC_DOMAIN_MAP and _MEM_SYNC_DOMAIN -- apply to the work queued on `s` afterwards.
 * Errors: CUCORE_INVALID_ARGUMENT for another attribute, a value out of range (hit ratio
 * outside 0..1, a priority outside the device's range) or a default stream (legacy or
 * per-thread), which has no attributes of its own; CUCORE_DRIVER_TOO_OLD before CUDA 11.0.
 */
CUCORE_API cucore_status cucore_stream_set_attribute(cucore_stream *s,
                                                     const cucore_launch_attr *attr);
/** Reads a stream attribute (one of those cucore_stream_set_attribute takes) into *out. */
CUCORE_API cucore_status cucore_stream_get_attribute(cucore_stream *s, cucore_launch_attr_id id,
                                                     cucore_launch_attr *out);

/** Launches `k` with `args` after the pre-flight checks: arguments complete and valid; block
 * non-zero and within the kernel's max threads; grid and block within the device's limits;
 * dynamic shared memory within the opt-in maximum after static memory (the kernel's
 * MAX_DYNAMIC_SHARED_SIZE_BYTES is raised when needed, never lowered); cluster dimensions
 * valid and dividing the grid; cooperative grids within max active blocks x SMs. Uses
 * cuLaunchKernel when no attribute is set, cuLaunchKernelEx otherwise. Returns once the launch
 * is queued; the values in `args` are taken at the call, so `args` may change afterwards.
 * The errors of cucore_args_check() (CUCORE_ARG_*) come first.
 * @retval CUCORE_INVALID_ARGUMENT `args` was made for another kernel, or cfg->stream is NULL.
 * @retval CUCORE_LAUNCH_CONFIG a pre-flight check failed; the message has the arithmetic.
 * @retval CUCORE_LAUNCH_OUT_OF_RESOURCES the driver found too few registers or shared memory.
 * @retval CUCORE_NO_DEVICE the kernel was looked up without a GPU. */
CUCORE_API cucore_status cucore_launch(cucore_kernel *k, const cucore_launch_config *cfg,
                                       cucore_args *args);
/** Cooperative launch through cuLaunchCooperativeKernel (grid-wide sync allowed). Checked as
 * cucore_launch(); `cfg` may carry no attributes.
 * @retval CUCORE_INVALID_ARGUMENT `cfg` has attributes (use cucore_launch with
 *         CUCORE_LAUNCH_COOPERATIVE instead).
 * @retval CUCORE_LAUNCH_CONFIG the device has no cooperative launches, or the grid cannot be
 *         co-resident. */
CUCORE_API cucore_status cucore_launch_cooperative(cucore_kernel *k,
                                                   const cucore_launch_config *cfg,
                                                   cucore_args *args);
/** Queues a host function on a stream (cuLaunchHostFunc): it runs after the work before it and
 * before the work after it. It must not call CUDA. It runs on a driver thread, with `user`. */
CUCORE_API cucore_status cucore_launch_host_func(cucore_stream *s, void (*fn)(void *user),
                                                 void *user);

/* ---- Launch checks without a GPU ---- */

/** Flags of cucore_kernel_check_launch_offline(), combined with `|`. */
enum {
  CUCORE_CHECK_DEFAULT = 0,             /**< the portable limits */
  CUCORE_CHECK_NON_PORTABLE_CLUSTER = 1 /**< allow clusters of up to 16 blocks on sm_90 and
                                                newer, as a kernel with
                                                non_portable_cluster_size_allowed set may use */
};

/**
 * Checks a launch configuration against what the code records, with no GPU: the checks of
 * cucore_launch() that need no device, with the same messages. For architecture `arch` (e.g.
 * 90; 0: the arch the object's code is for, or the PTX's .target) it checks: block and grid
 * dimensions against the architecture's limits; the block against the kernel's
 * `__launch_bounds__` (.maxntid) and its required block size (.reqntid); the grid against the
 * compile-time cluster shape (`__cluster_dims__`) or `cfg`'s cluster dimension (a multiple in
 * each dimension; at most 8 blocks, or 16 with CUCORE_CHECK_NON_PORTABLE_CLUSTER; clusters
 * need sm_90); a kernel that must be launched as clusters; and static + dynamic shared memory
 * against the architecture's opt-in maximum per block. Not checked: registers, and whether a
 * kernel synchronises its whole grid (a cubin marks block-level cooperative groups the same
 * way). cfg->stream is not used (it may be NULL). Static shared memory comes from a cubin;
 * PTX does not record it, so only its declared bounds are checked.
 * @retval CUCORE_LAUNCH_CONFIG the launch can never run; the message has the arithmetic.
 * @retval CUCORE_NOT_SUPPORTED `arch` is not in the architecture table.
 * @retval CUCORE_INVALID_BINARY, CUCORE_NO_DEVICE the code cannot be read offline (LTO-IR).
 */
CUCORE_API cucore_status cucore_kernel_check_launch_offline(cucore_kernel *k,
                                                            const cucore_launch_config *cfg,
                                                            int arch, unsigned flags);

/** @} */

/* ==== SECTION: CUDA graphs ==== */
/**
 * @defgroup graph CUDA graphs
 *
 * Work recorded once and replayed many times for a fraction of the launch cost: a graph
 * (cucore_graph) is a set of nodes -- kernels, copies, fills, host functions, event records and
 * waits, child graphs, conditional nodes -- and the dependencies between them; an executable
 * graph (cucore_graph_exec) is a graph instantiated for launching.
 *
 * A graph is made either by **capturing** what cucore does on a stream
 * (cucore_stream_begin_capture ... cucore_stream_end_capture: launches with every attribute,
 * copies and fills given a stream, host functions, and the event records and waits that fork
 * work to other streams and join it back), or **node by node** (cucore_graph_add_kernel_node
 * and the other cucore_graph_add_ functions). A kernel node is checked exactly as
 * cucore_launch checks a launch (the same code: the arguments first, then block, grid, shared
 * memory, clusters, attributes, cooperative grids), and its argument values are copied into the
 * node. An executable graph's kernel nodes can be given new arguments (checked the same way; a
 * wrong list leaves the node as it was) or new dimensions, and be disabled, without
 * instantiating again; cucore_graph_exec_update takes every node's parameters from another
 * graph of the same shape, and explains a refusal (which node, why).
 *
 * **Lifetimes.** What a graph uses stays alive as long as a graph or an executable graph made
 * from it needs it: kernels (and so their objects), events, child graphs, host data given a
 * destructor, argument values. Handles may be destroyed in any order: an executable graph keeps
 * its graph, a graph keeps what its nodes use, and what a graph used is released once the
 * driver reports that no graph or executable graph needs it any more (launches still running
 * included) -- by cucore, at its next graph call or when a device closes (cucore_device_close
 * waits up to a second for launches still running).
 *
 * **Captures cucore knows.** cucore follows the streams of a capture it began: the origin, and
 * each stream that waited (cucore_stream_wait_event) on an event recorded in the capture.
 * Calls that would invalidate such a capture are refused first, naming the call and the
 * capture, and the capture goes on (CUCORE_STREAM_CAPTURE): synchronising with or querying a
 * capturing stream or an event recorded in a capture, device synchronisation, allocations,
 * frees and synchronous copies or fills where the capture's mode forbids them (global mode:
 * every thread; thread-local: the thread that began it), and launches or copies on the legacy
 * default stream while a stream that synchronises with it captures. A capture the driver
 * invalidated anyway (a direct driver call, another library) is reported by the calls that
 * meet it and by cucore_stream_end_capture, which ends it so that the stream is usable again.
 * A capture begun outside cucore is not followed: the driver still refuses what it forbids and
 * cucore explains its answer, but kernels launched into it are not kept alive by cucore.
 *
 * **Thread safety.** Building a graph (adding nodes, dependencies, conditions) is not
 * synchronised: one thread at a time per graph. Launching, uploading and updating an executable
 * graph must not race with each other on the same executable graph. Destroying is safe from
 * any thread once nothing else uses that handle; the references between graphs, executable
 * graphs and kernels are counted atomically.
 *
 * Needs a driver for CUDA 12.0 or newer (12.3 for conditional nodes and capturing into an
 * existing graph, 12.8 for if/else and switch nodes); an older one gives CUCORE_DRIVER_TOO_OLD
 * naming the function.
 * @{
 */

/** A graph being built (a CUgraph and what its nodes use): made by cucore_graph_create() or
 * cucore_stream_end_capture(), destroyed with cucore_graph_destroy(). The body graphs of a
 * conditional node are graphs too, owned by that node. */
typedef struct cucore_graph cucore_graph;
/** A node of a graph, made by a cucore_graph_add_ function. Owned by its graph: valid while the
 * graph (or an executable graph made from it) lives; never destroyed by the caller. */
typedef struct cucore_graph_node cucore_graph_node;
/** An executable graph (CUgraphExec): made by cucore_graph_instantiate(), launched with
 * cucore_graph_launch(), destroyed with cucore_graph_exec_destroy(). */
typedef struct cucore_graph_exec cucore_graph_exec;

/** How a capture limits other calls (the values of CUstreamCaptureMode). */
typedef enum cucore_capture_mode {
  CUCORE_CAPTURE_GLOBAL = 0,       /**< potentially unsafe calls are refused on every thread
                                        (the driver's default) */
  CUCORE_CAPTURE_THREAD_LOCAL = 1, /**< ... on the thread that began the capture only */
  CUCORE_CAPTURE_RELAXED = 2       /**< not refused (calls that conflict with any capture still
                                        are); any thread may end the capture */
} cucore_capture_mode;

/** Begins capturing the work queued on `s` into a new graph (cuStreamBeginCapture). The work
 * does not run; cucore_stream_end_capture() gives the graph. Other streams join the capture by
 * waiting on an event recorded in it (fork) and must be joined back (the origin waits on an
 * event recorded on each) before it ends. A capture begun in global or thread-local mode is
 * ended by the thread that began it.
 * @retval CUCORE_INVALID_ARGUMENT `s` is a default stream (legacy or per-thread: capture on a
 *         stream of your own), or `mode` is not a cucore_capture_mode.
 * @retval CUCORE_STREAM_CAPTURE the stream is capturing already.
 * @retval CUCORE_DRIVER_TOO_OLD the driver has no stream capture. */
CUCORE_API cucore_status cucore_stream_begin_capture(cucore_stream *s, cucore_capture_mode mode);
/** Begins capturing the work queued on `s` into the existing graph `g` (for instance the body
 * of a conditional node), the first captured work depending on `deps` (`dep_count` nodes of
 * `g`; NULL when 0). cucore_stream_end_capture() ends it; `g` then holds the captured nodes.
 * As cucore_stream_begin_capture() otherwise.
 * @retval CUCORE_INVALID_ARGUMENT a dependency is not a node of `g`, or `g` is of another device.
 * @retval CUCORE_DRIVER_TOO_OLD before CUDA 12.3. */
CUCORE_API cucore_status cucore_stream_begin_capture_to_graph(cucore_stream *s, cucore_graph *g,
                                                              cucore_graph_node *const *deps,
                                                              size_t dep_count,
                                                              cucore_capture_mode mode);
/** Ends the capture begun on `s` and gives the captured graph in `*out` (a new graph to destroy
 * with cucore_graph_destroy()). For a capture into an existing graph, `*out` is that graph
 * again (no new reference: destroy it once), and `out` may be NULL. Whatever the outcome, the
 * capture is over and every stream that took part is usable again.
 * @retval CUCORE_STREAM_CAPTURE the stream is not capturing, joined the capture elsewhere
 *         (end it on its origin), is ended by another thread than the one that began it (the
 *         capture goes on), or the driver invalidated the capture (the message names the first
 *         failing call cucore saw) or could not end it (a forked stream not joined back). */
CUCORE_API cucore_status cucore_stream_end_capture(cucore_stream *s, cucore_graph **out);

/** The capture state of a stream. */
typedef enum cucore_capture_status {
  CUCORE_CAPTURE_NONE = 0,       /**< not capturing */
  CUCORE_CAPTURE_ACTIVE = 1,     /**< capturing */
  CUCORE_CAPTURE_INVALIDATED = 2 /**< capturing, but the capture failed: end it to go on */
} cucore_capture_status;

/** What cucore_stream_get_capture_info() tells. */
typedef struct cucore_capture_info {
  cucore_capture_status status; /**< the driver's answer (cuStreamIsCapturing) */
  uint64_t id;       /**< the driver's id of the capture sequence, unique in the process (0
                           when none, or when the driver cannot tell: before CUDA 11.3) */
  size_t node_count; /**< nodes the graph being captured has so far (0 when none or unknown) */
  int by_cucore;     /**< 1 when cucore began the capture and follows this stream in it */
  int mode;          /**< the capture's cucore_capture_mode when by_cucore, else -1 */
  int is_origin;     /**< 1 when the capture began on this stream (and must end here) */
} cucore_capture_info;

/** Whether `s` is capturing, and what cucore knows of the capture.
 * @retval CUCORE_STREAM_CAPTURE `s` is the legacy default stream and a stream that
 *         synchronises with it is capturing (the driver cannot answer for it then). */
CUCORE_API cucore_status cucore_stream_get_capture_info(cucore_stream *s, cucore_capture_info *out);

/** Captures `count` (1..1000000) launches of `k` with `cfg` and `args` on cfg->stream into a
 * new graph (thread-local mode), checked as cucore_launch() checks them: what `cucore run
 * --graph N` replays. Each launch is checked; on a failure the capture is ended and the
 * launch's error returned. Destroy `*out` with cucore_graph_destroy().
 * @retval CUCORE_INVALID_ARGUMENT `count` out of range, or the errors of cucore_launch(). */
CUCORE_API cucore_status cucore_graph_capture_launches(cucore_kernel *k,
                                                       const cucore_launch_config *cfg,
                                                       cucore_args *args, int count,
                                                       cucore_graph **out);

/** CONSTRUCTOR: an empty graph on `dev` (cuGraphCreate); every node added to it runs there.
 * Destroy with cucore_graph_destroy(). */
CUCORE_API cucore_status cucore_graph_create(cucore_device *dev, cucore_graph **out);
/** DESTRUCTOR: drops the caller's graph. Executable graphs made from it keep it (and what its
 * nodes use) until they are destroyed. NULL, and the body graph of a conditional node (owned
 * by its node), are no-ops. */
CUCORE_API cucore_status cucore_graph_destroy(cucore_graph *g);
/** The number of nodes directly in `g` (cuGraphGetNodes: captured nodes included, the nodes of
 * child graphs and conditional bodies not). */
CUCORE_API cucore_status cucore_graph_get_node_count(cucore_graph *g, size_t *count);
/** The device a graph runs on (borrowed). */
CUCORE_API cucore_status cucore_graph_get_device(const cucore_graph *g, cucore_device **dev);
/** The native CUgraph, owned by `g`: do not destroy it. */
CUCORE_API cucore_status cucore_graph_get_native(cucore_graph *g, void **cugraph);

/** Kinds of nodes (the values of CUgraphNodeType). */
typedef enum cucore_graph_node_type {
  CUCORE_GRAPH_NODE_KERNEL = 0,       /**< a kernel launch */
  CUCORE_GRAPH_NODE_MEMCPY = 1,       /**< a copy */
  CUCORE_GRAPH_NODE_MEMSET = 2,       /**< a fill */
  CUCORE_GRAPH_NODE_HOST = 3,         /**< a host function */
  CUCORE_GRAPH_NODE_GRAPH = 4,        /**< a child graph */
  CUCORE_GRAPH_NODE_EMPTY = 5,        /**< nothing (a point to depend on) */
  CUCORE_GRAPH_NODE_WAIT_EVENT = 6,   /**< waits for an event */
  CUCORE_GRAPH_NODE_EVENT_RECORD = 7, /**< records an event */
  CUCORE_GRAPH_NODE_MEM_ALLOC = 10, /**< allocates graph memory (cucore_graph_add_mem_alloc_node) */
  CUCORE_GRAPH_NODE_MEM_FREE = 11,  /**< frees it (cucore_graph_add_mem_free_node) */
  CUCORE_GRAPH_NODE_CONDITIONAL = 13 /**< if, if/else, switch or while over body graphs */
} cucore_graph_node_type;

/** "kernel", "memcpy", "memset", "host", "graph", "empty", "wait_event", "event_record",
 * "conditional", "mem_alloc", "mem_free"; "unknown" otherwise. Never NULL; static storage. */
CUCORE_API const char *cucore_graph_node_type_name(cucore_graph_node_type type);
/** The kind of a node. */
CUCORE_API cucore_status cucore_graph_node_get_type(const cucore_graph_node *node,
                                                    cucore_graph_node_type *type);
/** The native CUgraphNode, owned by the node's graph. */
CUCORE_API cucore_status cucore_graph_node_get_native(const cucore_graph_node *node, void **cunode);

/**
 * Adds a kernel node: `k` launched with `cfg` (grid, block, dynamic shared memory and
 * attributes; cfg->stream is not used and may be NULL, else it must be of the graph's device)
 * and the values of `args` (copied into the node: `args` may change or go afterwards). The
 * node runs after the `dep_count` nodes of `deps` (NULL when 0), all of `g`.
 * Checked as cucore_launch() checks a launch, in the same order: the errors of
 * cucore_args_check() (CUCORE_ARG_*) come first, before `g` is looked at (so they can be had
 * without a GPU), then the dependencies, then the configuration against the kernel on the
 * graph's device. The attribute CUCORE_LAUNCH_DEVICE_UPDATABLE_KERNEL_NODE is accepted here
 * (a launch refuses it). The graph keeps `k` alive.
 * @retval CUCORE_INVALID_ARGUMENT `args` was made for another kernel; a dependency is NULL,
 *         repeated or of another graph; cfg->stream is of another device.
 * @retval CUCORE_LAUNCH_CONFIG a pre-flight check failed; the message has the arithmetic.
 * @retval CUCORE_NO_DEVICE the kernel was looked up without a GPU.
 */
CUCORE_API cucore_status cucore_graph_add_kernel_node(cucore_graph *g,
                                                      cucore_graph_node *const *deps,
                                                      size_t dep_count, cucore_kernel *k,
                                                      const cucore_launch_config *cfg,
                                                      cucore_args *args, cucore_graph_node **out);
/** Adds a copy of `bytes` (> 0) from host `src` to device `dst`. `src` is read when the node
 * runs (it must stay valid while the graph may run; pinned memory from cucore_host_alloc()
 * gives asynchronous copies). Dependencies as cucore_graph_add_kernel_node().
 * @retval CUCORE_INVALID_ARGUMENT a NULL or 0 address, or 0 bytes. */
CUCORE_API cucore_status cucore_graph_add_memcpy_htod_node(cucore_graph *g,
                                                           cucore_graph_node *const *deps,
                                                           size_t dep_count, cucore_devptr dst,
                                                           const void *src, size_t bytes,
                                                           cucore_graph_node **out);
/** Adds a copy of `bytes` from device `src` to host `dst` (written when the node runs), as
 * cucore_graph_add_memcpy_htod_node(). */
CUCORE_API cucore_status cucore_graph_add_memcpy_dtoh_node(cucore_graph *g,
                                                           cucore_graph_node *const *deps,
                                                           size_t dep_count, void *dst,
                                                           cucore_devptr src, size_t bytes,
                                                           cucore_graph_node **out);
/** Adds a copy of `bytes` from device `src` to device `dst`, as
 * cucore_graph_add_memcpy_htod_node(). */
CUCORE_API cucore_status cucore_graph_add_memcpy_dtod_node(cucore_graph *g,
                                                           cucore_graph_node *const *deps,
                                                           size_t dep_count, cucore_devptr dst,
                                                           cucore_devptr src, size_t bytes,
                                                           cucore_graph_node **out);
/** Adds a fill of `count` (> 0) elements of `element_size` bytes (1, 2 or 4) at device `dst`
 * with `value` (its low `element_size` bytes), as cucore_graph_add_memcpy_htod_node().
 * @retval CUCORE_INVALID_ARGUMENT another element size, a value that does not fit it, a 0
 *         address or count.
 * @retval CUCORE_ARG_ALIGNMENT `dst` is not aligned to the element size. */
CUCORE_API cucore_status cucore_graph_add_memset_node(cucore_graph *g,
                                                      cucore_graph_node *const *deps,
                                                      size_t dep_count, cucore_devptr dst,
                                                      uint32_t value, unsigned element_size,
                                                      size_t count, cucore_graph_node **out);
/** Adds a host function node: `fn(user)` runs on a driver thread when the node runs (it must
 * not call CUDA). When `destroy` is not NULL, the graph owns `user`: destroy(user) is called
 * (by cucore, from a later cucore call or when a device closes) once no graph or executable
 * graph can run the node any more -- also when adding the node fails. */
CUCORE_API cucore_status cucore_graph_add_host_node(cucore_graph *g, cucore_graph_node *const *deps,
                                                    size_t dep_count, void (*fn)(void *user),
                                                    void *user, void (*destroy)(void *user),
                                                    cucore_graph_node **out);
/** Adds a node that records `ev` (of the graph's device) when it runs. The graph keeps `ev`
 * alive. */
CUCORE_API cucore_status cucore_graph_add_event_record_node(cucore_graph *g,
                                                            cucore_graph_node *const *deps,
                                                            size_t dep_count, cucore_event *ev,
                                                            cucore_graph_node **out);
/** Adds a node that waits for `ev` (recorded by a stream or another graph) before the nodes
 * that depend on it run. The graph keeps `ev` alive. */
CUCORE_API cucore_status cucore_graph_add_event_wait_node(cucore_graph *g,
                                                          cucore_graph_node *const *deps,
                                                          size_t dep_count, cucore_event *ev,
                                                          cucore_graph_node **out);
/** Adds an empty node: a point other nodes can depend on (joining many into one). */
CUCORE_API cucore_status cucore_graph_add_empty_node(cucore_graph *g,
                                                     cucore_graph_node *const *deps,
                                                     size_t dep_count, cucore_graph_node **out);
/** Adds a node that runs a copy of `child` (cloned now: later changes to `child` do not reach
 * it, and `child` may be destroyed). The graph keeps what `child`'s nodes use.
 * @retval CUCORE_INVALID_ARGUMENT `child` is `g`, of another device, or has conditional nodes
 *         (the driver does not take those in a child graph). */
CUCORE_API cucore_status cucore_graph_add_child_graph_node(cucore_graph *g,
                                                           cucore_graph_node *const *deps,
                                                           size_t dep_count, cucore_graph *child,
                                                           cucore_graph_node **out);
/** Makes `to` depend on `from` (both nodes of `g`).
 * @retval CUCORE_INVALID_ARGUMENT a node of another graph, or `from` == `to`. */
CUCORE_API cucore_status cucore_graph_add_dependency(cucore_graph *g, cucore_graph_node *from,
                                                     cucore_graph_node *to);
/** Gives a kernel node of a graph (not of an executable graph: see
 * cucore_graph_exec_set_kernel_args()) new argument values, checked as cucore_launch() checks
 * them; executable graphs made before are not changed. A wrong list leaves the node as it was.
 * @retval CUCORE_INVALID_ARGUMENT `node` is not a kernel node, or `args` was made for another
 *         kernel. */
CUCORE_API cucore_status cucore_graph_kernel_node_set_args(cucore_graph_node *node,
                                                           cucore_args *args);

/** A condition of a conditional node (the value of a CUgraphConditionalHandle): passed to a
 * kernel as a 64-bit integer (cucore_args_set_u64, or CUCORE_ARG of this type), which sets it
 * from the device with cudaGraphSetConditional (see CUCORE_GRAPH_SET_CONDITIONAL_DECL). */
typedef uint64_t cucore_graph_condition;

/** Flags of cucore_graph_condition_create(). */
enum {
  CUCORE_CONDITION_DEFAULT = 0,       /**< the value stays as the last kernel set it */
  CUCORE_CONDITION_ASSIGN_DEFAULT = 1 /**< the default value is assigned at each launch */
};

/** Kinds of conditional nodes (the values of CUgraphConditionalNodeType). */
typedef enum cucore_conditional_type {
  CUCORE_CONDITIONAL_IF = 0,    /**< body 0 runs when the condition is not 0; with 2 bodies,
                                     body 1 runs when it is 0 (if/else, CUDA 12.8+) */
  CUCORE_CONDITIONAL_WHILE = 1, /**< body 0 runs again and again while the condition is not 0
                                     (tested before each run) */
  CUCORE_CONDITIONAL_SWITCH = 2 /**< body n runs when the condition is n; none when it is not
                                     below the number of bodies (CUDA 12.8+) */
} cucore_conditional_type;

/** The declaration a kernel needs to set a condition from the device: put this text before
 * the kernel's source (C string concatenation: CUCORE_GRAPH_SET_CONDITIONAL_DECL "extern
 * \"C\" __global__ ..."). NVRTC knows the type cudaGraphConditionalHandle but not the function
 * without a header; this declares it as the toolkit's cuda_device_runtime_api.h does, which
 * NVRTC compiles without -rdc and without linking libcudadevrt: the driver resolves the call
 * when it loads the code (CUDA 12.3+; checked with NVRTC 13.0 for cubin and PTX targets).
 * Including <cuda_device_runtime_api.h> instead works too, with a warning about an internal
 * header. */
#define CUCORE_GRAPH_SET_CONDITIONAL_DECL                                              \
  "extern \"C\" __device__ __cudart_builtin__ void CUDARTAPI cudaGraphSetConditional(" \
  "cudaGraphConditionalHandle handle, unsigned int value);\n"

/** Creates a condition for conditional nodes of `g` (cuGraphConditionalHandleCreate): its
 * value at each launch is `default_value` with CUCORE_CONDITION_ASSIGN_DEFAULT, else what a
 * kernel last set. Every condition made must be used by a conditional node of `g` before the
 * graph is instantiated (the driver refuses unused ones).
 * @retval CUCORE_INVALID_ARGUMENT unknown flags.
 * @retval CUCORE_DRIVER_TOO_OLD before CUDA 12.3. */
CUCORE_API cucore_status cucore_graph_condition_create(cucore_graph *g, unsigned default_value,
                                                       unsigned flags, cucore_graph_condition *out);
/** Adds a conditional node over condition `cond` (made for `g` by
 * cucore_graph_condition_create()) with `body_count` body graphs: 1 for WHILE; 1 or 2 for IF
 * (2: if/else); 1 or more for SWITCH. `bodies` (an array of `body_count`) receives the body
 * graphs, empty, owned by the node: fill them with cucore_graph_add_ functions or by
 * capturing into them (cucore_stream_begin_capture_to_graph()). The driver allows in bodies
 * kernel, empty, child-graph, memcpy, memset and conditional nodes, all on one device.
 * @retval CUCORE_INVALID_ARGUMENT an unknown type, or a body count the type does not take.
 * @retval CUCORE_DRIVER_TOO_OLD before CUDA 12.3, or 12.8 for if/else and switch. */
CUCORE_API cucore_status cucore_graph_add_conditional_node(
    cucore_graph *g, cucore_graph_node *const *deps, size_t dep_count, cucore_graph_condition cond,
    cucore_conditional_type type, unsigned body_count, cucore_graph **bodies,
    cucore_graph_node **out);

/** Flags of the DOT output (the values of CUgraphDebugDot_flags; any of its bits may be
 * given). */
enum {
  CUCORE_GRAPH_DOT_DEFAULT = 0,            /**< the nodes, their kinds and the edges */
  CUCORE_GRAPH_DOT_VERBOSE = 1,            /**< everything the driver can print */
  CUCORE_GRAPH_DOT_KERNEL_PARAMS = 1 << 2, /**< kernel nodes' parameters */
  CUCORE_GRAPH_DOT_HANDLES = 1 << 10       /**< node and function handles */
};
/** Writes the graph in Graphviz DOT form to `path` (cuGraphDebugDotPrint), for debugging.
 * @retval CUCORE_INVALID_ARGUMENT `flags` beyond the driver's bits (0..0xffff).
 * @retval CUCORE_IO_ERROR the driver could not write `path`. */
CUCORE_API cucore_status cucore_graph_dot_write(cucore_graph *g, const char *path, unsigned flags);
/** The graph in DOT form as text, owned by `g` until its next cucore_graph_dot() or its
 * destruction (written to a temporary file and read back).
 * @retval CUCORE_IO_ERROR no temporary file could be written ($TMPDIR, else /tmp). */
CUCORE_API cucore_status cucore_graph_dot(cucore_graph *g, unsigned flags, const char **dot);

/** Flags of cucore_graph_instantiate() (the values of CUgraphInstantiate_flags). */
enum {
  CUCORE_GRAPH_INSTANTIATE_DEFAULT = 0,             /**< nothing special */
  CUCORE_GRAPH_INSTANTIATE_AUTO_FREE_ON_LAUNCH = 1, /**< memory a graph allocated and did not
                                                          free is freed before it runs again */
  CUCORE_GRAPH_INSTANTIATE_UPLOAD = 2,              /**< upload at once on the stream given */
  CUCORE_GRAPH_INSTANTIATE_DEVICE_LAUNCH = 4,       /**< launchable from the device (the
                                                          driver checks the graph can be) */
  CUCORE_GRAPH_INSTANTIATE_USE_NODE_PRIORITY = 8    /**< nodes run at their priority
                                                          attribute, not the stream's */
};

/** CONSTRUCTOR: instantiates `g` (cuGraphInstantiateWithParams). With
 * CUCORE_GRAPH_INSTANTIATE_UPLOAD, `upload_stream` (of the graph's device) uploads it at once;
 * it is NULL otherwise. The executable graph keeps `g` (and what its nodes use): `g` may be
 * destroyed afterwards. Later changes to `g` do not reach it (see
 * cucore_graph_exec_update()). Destroy with cucore_graph_exec_destroy().
 * @retval CUCORE_INVALID_ARGUMENT unknown flags, DEVICE_LAUNCH with AUTO_FREE_ON_LAUNCH, UPLOAD
 *         without a stream (or a stream without UPLOAD), `g` a conditional node's body.
 * @retval CUCORE_DRIVER_ERROR the driver refused the graph; the message gives its reason (a
 *         cycle, an operation device launch cannot do, an unused condition) and the node. */
CUCORE_API cucore_status cucore_graph_instantiate(cucore_graph *g, unsigned flags,
                                                  cucore_stream *upload_stream,
                                                  cucore_graph_exec **out);
/** DESTRUCTOR: destroys the executable graph (launches still running complete; the driver
 * frees it then) and drops its graph. NULL is a no-op. */
CUCORE_API cucore_status cucore_graph_exec_destroy(cucore_graph_exec *e);
/** Uploads the executable graph to the device on stream `s` ahead of its first launch, so
 * that launch does not pay for it.
 * @retval CUCORE_INVALID_ARGUMENT `s` is of another device. */
CUCORE_API cucore_status cucore_graph_upload(cucore_graph_exec *e, cucore_stream *s);
/** Launches the executable graph on stream `s` (cuGraphLaunch): it runs after the work queued
 * on `s` before it, and the work queued after it waits for the whole graph. One launch of an
 * executable graph runs at a time; launches on different streams are ordered by the driver.
 * @retval CUCORE_INVALID_ARGUMENT `s` is of another device. */
CUCORE_API cucore_status cucore_graph_launch(cucore_graph_exec *e, cucore_stream *s);
/** Gives every node of `e` the parameters of the matching node of `from`, a graph of the same
 * shape (cuGraphExecUpdate): the usual way to change a captured graph's arguments is to
 * capture again and update. Nodes are matched by the order they were added and their
 * dependencies, as the driver does. Kernel nodes made node by node in the same order as `e`'s
 * are matched by cucore too, so that per-node updates (cucore_graph_exec_set_kernel_args())
 * go on working; otherwise those refuse until the next instantiation. `e` keeps `from` (and
 * what its nodes use) alive from now on. Nothing changes when the update is refused.
 * @retval CUCORE_GRAPH_UPDATE the driver refused: the message says why (another shape: the node
 *         counts; a changed node type, kernel context, or parameters an update cannot change)
 *         and names the node (its kind, kernel and position among `from`'s nodes).
 * @retval CUCORE_INVALID_ARGUMENT `from` is of another device, or a conditional body. */
CUCORE_API cucore_status cucore_graph_exec_update(cucore_graph_exec *e, cucore_graph *from);
/** Gives kernel node `node` (a node of the graph `e` was instantiated from) new argument values
 * in `e` alone (cuGraphExecKernelNodeSetParams), checked as cucore_launch() checks them:
 * count, sizes, types where known, alignment (the checks made when `args` was filled, kept in
 * it) and every parameter set. A wrong list leaves the node as it was and returns the usual
 * CUCORE_ARG_* error. Takes effect at the next launch; allocates nothing. `args` may change or
 * go afterwards.
 * @retval CUCORE_INVALID_ARGUMENT `node` is not a kernel node of `e`'s graph, was added after
 *         `e` was instantiated, or its values are unknown since a whole-graph update from a
 *         graph cucore could not match node by node; `args` made for another kernel. */
CUCORE_API cucore_status cucore_graph_exec_set_kernel_args(cucore_graph_exec *e,
                                                           cucore_graph_node *node,
                                                           cucore_args *args);
/** Gives kernel node `node` of `e` new launch dimensions: `grid` and `block` (3 values each;
 * unused dimensions 0 or 1) and `shared_bytes` of dynamic shared memory, checked against the
 * kernel as a launch is (with the node's attributes). A refusal leaves the node as it was.
 * @retval CUCORE_LAUNCH_CONFIG a pre-flight check failed.
 * @retval CUCORE_INVALID_ARGUMENT as cucore_graph_exec_set_kernel_args(). */
CUCORE_API cucore_status cucore_graph_exec_set_kernel_dims(cucore_graph_exec *e,
                                                           cucore_graph_node *node,
                                                           const unsigned grid[3],
                                                           const unsigned block[3],
                                                           unsigned shared_bytes);
/** Turns node `node` of `e` off (`enabled` 0: it does nothing when the graph runs, its
 * dependencies still hold) or on again (cuGraphNodeSetEnabled). Kernel, memcpy and memset
 * nodes only.
 * @retval CUCORE_INVALID_ARGUMENT `node` is of another kind, or not of `e`'s graph.
 * @retval CUCORE_DRIVER_TOO_OLD before CUDA 11.6. */
CUCORE_API cucore_status cucore_graph_exec_set_node_enabled(cucore_graph_exec *e,
                                                            cucore_graph_node *node, int enabled);
/** Whether node `node` of `e` is enabled (1) or not (0). */
CUCORE_API cucore_status cucore_graph_exec_get_node_enabled(cucore_graph_exec *e,
                                                            cucore_graph_node *node, int *enabled);
/** The native CUgraphExec, owned by `e`: do not destroy it. */
CUCORE_API cucore_status cucore_graph_exec_get_native(cucore_graph_exec *e, void **cugraphexec);

/** @} */
/* ==== END SECTION: CUDA graphs ==== */

/* ==== SECTION: occupancy model (host-only) ==== */
/**
 * @defgroup occupancy_model Occupancy model (host-only)
 *
 * A host-only model of the driver's occupancy answers (no GPU, no driver): from a kernel's
 * resources and an architecture's limits, how many blocks of a given size stay resident on one
 * SM, which limit binds, the best block size, and the dynamic shared memory a block may use.
 * The arithmetic follows the CUDA toolkit's documented host calculator (cuda_occupancy.h); the
 * limits come from one table per compute capability (7.0 to 12.1). The driver's
 * cuOccupancy* functions remain the truth on a real GPU.
 * Queries allocate nothing and take no locks (tens of nanoseconds each); they are thread-safe.
 * @{
 */

/** Most shared-memory carveout sizes an architecture can have. */
#define CUCORE_ARCH_MAX_CARVEOUTS 12

/** The limits of one architecture (one row of cucore's table). All sizes are bytes, all
 * register counts are 32-bit registers. A caller may adjust a copy (for example to a real
 * device: cucore_arch_limits_from_device) and pass it to the model; the queries refuse
 * (CUCORE_INVALID_ARGUMENT, naming the field) a copy that contradicts itself: fields out of
 * 0..2^20, granularities and warp size not powers of two, max_threads_per_sm not
 * max_warps_per_sm * warp_size, carveouts not ascending or not ending at shared_per_sm. */
typedef struct cucore_arch_limits {
  int arch;                      /**< cc_major*10 + cc_minor, e.g.\ 90 */
  const char *name;              /**< "sm_90" (static storage) */
  const char *family;            /**< "Hopper" (static storage) */
  int warp_size;                 /**< threads per warp (32) */
  int max_threads_per_block;     /**< 1024 */
  int max_warps_per_sm;          /**< resident warps per SM */
  int max_threads_per_sm;        /**< max_warps_per_sm * warp_size */
  int max_blocks_per_sm;         /**< resident blocks per SM */
  int regs_per_sm;               /**< register file per SM (64 K) */
  int max_regs_per_block;        /**< 64 K */
  int max_regs_per_thread;       /**< 255 */
  int reg_alloc_unit;            /**< a warp's registers are allocated in units of this (256) */
  int warp_alloc_granularity;    /**< register sub-partitions per SM: a block's warps are
                                     rounded up to this for the per-block register check (4) */
  int shared_per_sm;             /**< largest shared-memory carveout of an SM */
  int shared_per_block;          /**< per-block limit without opt-in (48 KiB) */
  int shared_per_block_optin;    /**< per-block limit after opting in (dynamic memory only) */
  int reserved_shared_per_block; /**< reserved by the driver for each block (1 KiB from 8.0) */
  int shared_alloc_granularity;  /**< a block's shared memory is rounded up to this */
  int carveout_count;            /**< entries in carveout_bytes */
  int carveout_bytes[CUCORE_ARCH_MAX_CARVEOUTS]; /**< the legal shared-memory sizes of an SM
                                     (the L1/shared splits), ascending; the last is
                                     shared_per_sm */
  int max_barriers_per_block;                    /**< named barriers a block may use (16) */
  int barriers_per_sm;       /**< named barriers an SM holds for resident blocks */
  int barrier_limit_applies; /**< 1 when the driver limits occupancy by barriers (9.0+) */
  int sm_count;              /**< SMs of the chip: 0 in the table (it is chip-specific);
                                     set from cucore_device_props.sm_count for grid sizes */
} cucore_arch_limits;

/** Fills *out with the table row of architecture `arch` (e.g.\ 90 for sm_90, 120 for sm_120).
 * An architecture not in the table is CUCORE_NOT_SUPPORTED naming the known ones.
 * @retval CUCORE_NOT_SUPPORTED `arch` is not in the table (then *out is zeroed). */
CUCORE_API cucore_status cucore_arch_get_limits(int arch, cucore_arch_limits *out);
/** The architectures in the table, ascending: copies up to `capacity` of them into `archs`
 * (which may be NULL when capacity is 0) and sets *count to how many there are. */
CUCORE_API cucore_status cucore_arch_get_list(int *archs, int capacity, int *count);
/** The table row of the device's architecture, with every limit the device reports (SM count,
 * warps, blocks, registers, shared memory per SM and per block, the reservation) taken from
 * the device; carveouts above the device's shared memory per SM are dropped.
 * @retval CUCORE_NOT_SUPPORTED the device's architecture is not in the table. */
CUCORE_API cucore_status cucore_arch_limits_from_device(const cucore_device_props *props,
                                                        cucore_arch_limits *out);

/** What a kernel uses, as the model sees it. Start from CUCORE_KERNEL_RESOURCES_INIT: a zero
 * carveout_percent is a real preference (maximum L1), not "unset". */
typedef struct cucore_kernel_resources {
  int registers;                /**< per thread (CU_FUNC_ATTRIBUTE_NUM_REGS), 0..255 */
  int static_shared_bytes;      /**< CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES */
  int max_threads_per_block;    /**< the kernel's own limit
                                   (CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, e.g.\ from
                                   `__launch_bounds__`); 0 = the architecture's */
  int barriers;                 /**< named barriers the kernel uses (0..16); -1 = unknown, taken
                                   as 1 (barrier 0, __syncthreads) */
  int carveout_percent;         /**< CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT: -1 = no
                                   preference, else 0 (max L1) .. 100 (max shared). A legacy
                                   cache config maps as cuda_occupancy.h maps it: PREFER_SHARED
                                   100, PREFER_L1 0, PREFER_EQUAL 50, PREFER_NONE -1 */
  int max_dynamic_shared_bytes; /**< CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES; 0 = raised as
                                   needed up to the opt-in maximum (what cucore's launch does) */
} cucore_kernel_resources;

/** Initialiser of cucore_kernel_resources: nothing used, barriers unknown (-1), no carveout
 * preference (-1), dynamic shared memory raised as needed (0). */
#define CUCORE_KERNEL_RESOURCES_INIT \
  { 0, 0, 0, -1, -1, 0 }

/** Flags of the model queries (the values of the driver's CU_OCCUPANCY_* flags). */
enum {
  CUCORE_OCCUPANCY_DEFAULT = 0, /**< the default answer */
  /** CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE: assume partitioned global caching stays on. Only
   * sm_52 and 6.x have that caching, so on every architecture in the table the answer is the
   * same with or without the flag. */
  CUCORE_OCCUPANCY_DISABLE_CACHING_OVERRIDE = 1
};

/** The resource that limits how many blocks stay resident on an SM. */
typedef enum cucore_occupancy_limit {
  CUCORE_OCCUPANCY_LIMIT_WARPS = 0,     /**< warp slots of the SM */
  CUCORE_OCCUPANCY_LIMIT_REGISTERS,     /**< the register file */
  CUCORE_OCCUPANCY_LIMIT_SHARED_MEMORY, /**< the shared-memory carveout */
  CUCORE_OCCUPANCY_LIMIT_BLOCKS,        /**< resident blocks per SM */
  CUCORE_OCCUPANCY_LIMIT_BARRIERS,      /**< named barriers of the SM */
  CUCORE_OCCUPANCY_LIMIT_COUNT          /**< the number of limits */
} cucore_occupancy_limit;

/** "warps", "registers", "shared_memory", "blocks" or "barriers"; "unknown" otherwise. Never
 * NULL. */
CUCORE_API const char *cucore_occupancy_limit_name(cucore_occupancy_limit limit);

/** One occupancy answer. The blocks_limit_* fields are the blocks per SM each resource alone
 * allows (INT_MAX when it sets no limit, e.g.\ a kernel that uses no registers). */
typedef struct cucore_occupancy_result {
  int active_blocks_per_sm;     /**< the answer: min of the blocks_limit_* below */
  int active_warps_per_sm;      /**< active_blocks_per_sm * warps_per_block */
  double occupancy;             /**< active warps / max warps per SM, 0..1 */
  cucore_occupancy_limit limit; /**< the binding limit; the first in enum order when several bind */
  unsigned limiting_mask;       /**< bit (1u << limit) set for every limit that binds */
  int blocks_limit_warps;       /**< blocks the warp slots allow */
  int blocks_limit_registers;   /**< blocks the register file allows */
  int blocks_limit_shared;      /**< blocks the shared-memory carveout allows */
  int blocks_limit_blocks;      /**< blocks the resident-block limit allows */
  int blocks_limit_barriers;    /**< blocks the named barriers allow */
  int warps_per_block;          /**< ceil(block size / warp size) */
  int registers_per_block;      /**< registers allocated to one block */
  int shared_per_block;         /**< shared memory allocated to one block: static + dynamic +
                                   reserved, rounded up to the allocation granularity */
  int shared_carveout_bytes;    /**< the SM's shared-memory size (carveout) the answer assumes:
                                   with no preference, the smallest carveout that keeps the
                                   answer (the driver's choice); otherwise the preferred
                                   carveout, or the smallest that fits one block if that is
                                   larger */
} cucore_occupancy_result;

/** Max active blocks per SM of a kernel with resources `res` on `limits`, for blocks of
 * `block_size` threads using `dynamic_shared_bytes` of dynamic shared memory
 * (cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags). Launches that can never run are
 * failures whose message has the numbers: CUCORE_LAUNCH_CONFIG for a block size of 0 or above
 * the kernel's or the architecture's limit, or dynamic memory above the kernel's
 * max_dynamic_shared_bytes; CUCORE_LAUNCH_OUT_OF_RESOURCES for a block whose registers or
 * shared memory exceed the per-block limits; CUCORE_INVALID_ARGUMENT for resources outside
 * their ranges. On success active_blocks_per_sm is at least 1. When the launch can never run,
 * *out still holds the per-limit counts, 0 for the limit that cannot be met (and `limit` names
 * it); when an input is invalid, *out is zeroed.
 * @retval CUCORE_LAUNCH_CONFIG the block size or the dynamic memory is not allowed.
 * @retval CUCORE_LAUNCH_OUT_OF_RESOURCES a block needs too many registers or too much shared
 *         memory. */
CUCORE_API cucore_status cucore_occupancy_model_blocks(const cucore_arch_limits *limits,
                                                       const cucore_kernel_resources *res,
                                                       int block_size, size_t dynamic_shared_bytes,
                                                       unsigned flags,
                                                       cucore_occupancy_result *out);

/** Dynamic shared memory a block of `block_size` threads needs, for
 * cucore_occupancy_model_best_block (called on the calling thread, once per size tried). */
typedef size_t (*cucore_block_to_shared_fn)(int block_size, void *userdata);

/** The block size with the most active threads per SM. */
typedef struct cucore_occupancy_best {
  int block_size;               /**< the suggested block size */
  int blocks_per_sm;            /**< active blocks per SM at that size */
  int min_grid_size;            /**< blocks_per_sm * limits->sm_count (0 when sm_count is 0) */
  double occupancy;             /**< active warps / max warps per SM at that size */
  size_t dynamic_shared_bytes;  /**< the dynamic shared memory used at that size */
  cucore_occupancy_limit limit; /**< what binds at that size */
} cucore_occupancy_best;

/** The block size giving the most active threads per SM, tried from the largest allowed size
 * down in steps of the warp size (the largest wins ties; stops at full occupancy), like
 * cuOccupancyMaxPotentialBlockSizeWithFlags. Dynamic shared memory is `dynamic_shared_bytes`
 * for every size, or `shared_fn(size, userdata)` when shared_fn is not NULL. Sizes that
 * cannot run are skipped. `block_size_limit` 0 means the kernel's (or architecture's) limit.
 * CUCORE_LAUNCH_OUT_OF_RESOURCES, naming why, when no size can run.
 * @retval CUCORE_LAUNCH_OUT_OF_RESOURCES no block size can run (or CUCORE_LAUNCH_CONFIG, as
 *         cucore_occupancy_model_blocks() would say for the last size tried). */
CUCORE_API cucore_status cucore_occupancy_model_best_block(
    const cucore_arch_limits *limits, const cucore_kernel_resources *res,
    size_t dynamic_shared_bytes, cucore_block_to_shared_fn shared_fn, void *userdata,
    int block_size_limit, unsigned flags, cucore_occupancy_best *out);

/** The most dynamic shared memory a block of `block_size` threads may use so that
 * `blocks_per_sm` blocks stay resident on one SM (cuOccupancyAvailableDynamicSMemPerBlock): the
 * largest size for which cucore_occupancy_model_blocks answers at least blocks_per_sm.
 * CUCORE_LAUNCH_OUT_OF_RESOURCES, with the limit that stops it, when even no dynamic memory
 * leaves room for that many blocks.
 * @retval CUCORE_LAUNCH_OUT_OF_RESOURCES not even without dynamic memory do that many fit.
 * @retval CUCORE_LAUNCH_CONFIG the block size is not allowed. */
CUCORE_API cucore_status cucore_occupancy_model_available_shared(const cucore_arch_limits *limits,
                                                                 const cucore_kernel_resources *res,
                                                                 int block_size, int blocks_per_sm,
                                                                 size_t *bytes);

/** Max active clusters (cuOccupancyMaxActiveClusters). Always refused by the host model:
 * CUCORE_NOT_SUPPORTED, because how many clusters fit depends on how the chip groups its SMs
 * into GPCs (and on which SMs are enabled), which no table per architecture can tell. Use
 * the driver-backed query on a device. *max_clusters is set to 0. Invalid inputs are
 * CUCORE_INVALID_ARGUMENT first.
 * @retval CUCORE_NOT_SUPPORTED always, for valid inputs. */
CUCORE_API cucore_status cucore_occupancy_model_clusters(const cucore_arch_limits *limits,
                                                         const cucore_kernel_resources *res,
                                                         int block_size, int cluster_size,
                                                         size_t dynamic_shared_bytes,
                                                         int *max_clusters);
/** @} */
/* ==== END SECTION: occupancy model ==== */

/* ------------------------------------------------------------------------------------------ */
/* Occupancy on the GPU: kernel + launch configuration in, the driver's answers out            */
/* ------------------------------------------------------------------------------------------ */

/**
 * @defgroup occupancy_gpu Occupancy on the GPU
 * Kernel + launch configuration in, the driver's answers out. The inputs are checked first;
 * a kernel looked up without a GPU is CUCORE_NO_DEVICE.
 * @{
 */

/** Max active blocks per SM for `k` launched as `cfg` (block, shared_bytes; the device is
 * cfg->stream's) (cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags). `flags`:
 * CUCORE_OCCUPANCY_DEFAULT or CUCORE_OCCUPANCY_DISABLE_CACHING_OVERRIDE. A block of 0 threads
 * or above the kernel's limit, or shared memory above the device's, is refused first. As a
 * launch would, it raises the kernel's MAX_DYNAMIC_SHARED_SIZE_BYTES when needed.
 * @retval CUCORE_LAUNCH_CONFIG the block or the shared memory can never run.
 * @retval CUCORE_INVALID_ARGUMENT cfg->stream is NULL, or unknown flags. */
CUCORE_API cucore_status cucore_occupancy_max_active_blocks(cucore_kernel *k,
                                                            const cucore_launch_config *cfg,
                                                            unsigned flags, int *blocks_per_sm);
/** Best block size for maximum occupancy on `dev` (cuOccupancyMaxPotentialBlockSizeWithFlags):
 * fixed `dynamic_shared_bytes`, or `shared_fn(block_size, user)` bytes when shared_fn is not
 * NULL. `block_size_limit` 0 means the kernel's limit. *min_grid is the grid size that fills
 * the device at that occupancy. `shared_fn` is called on the calling thread during the call
 * and must not call this function. Raises the kernel's MAX_DYNAMIC_SHARED_SIZE_BYTES as a
 * launch would (to the device's maximum with shared_fn).
 * @retval CUCORE_LAUNCH_CONFIG `dynamic_shared_bytes` can never fit.
 * @retval CUCORE_INVALID_ARGUMENT `block_size_limit` outside 0 .. the kernel's limit. */
CUCORE_API cucore_status cucore_occupancy_best_block_size(
    cucore_kernel *k, cucore_device *dev, size_t dynamic_shared_bytes,
    size_t (*shared_fn)(int block_size, void *user), void *user, int block_size_limit,
    unsigned flags, int *min_grid, int *block_size);
/** Dynamic shared memory available per block when `blocks_per_sm` blocks of `block_size`
 * threads share an SM (cuOccupancyAvailableDynamicSMemPerBlock).
 * @retval CUCORE_LAUNCH_CONFIG `block_size` outside 1 .. the kernel's limit.
 * @retval CUCORE_INVALID_ARGUMENT `blocks_per_sm` below 1. */
CUCORE_API cucore_status cucore_occupancy_available_dynamic_shared(cucore_kernel *k,
                                                                   cucore_device *dev,
                                                                   int blocks_per_sm,
                                                                   int block_size, size_t *bytes);
/** Max clusters that can be co-resident for `cfg`, which must give a cluster dimension (or the
 * kernel a compile-time one) (cuOccupancyMaxActiveClusters).
 * @retval CUCORE_LAUNCH_CONFIG no cluster dimension, or a block outside the kernel's range.
 * @retval CUCORE_NOT_SUPPORTED the device has no thread block clusters. */
CUCORE_API cucore_status cucore_occupancy_max_active_clusters(cucore_kernel *k,
                                                              const cucore_launch_config *cfg,
                                                              int *clusters);
/** The largest cluster size `cfg`'s grid and block could use
 * (cuOccupancyMaxPotentialClusterSize).
 * @retval CUCORE_LAUNCH_CONFIG a block outside the kernel's range.
 * @retval CUCORE_NOT_SUPPORTED the device has no thread block clusters. */
CUCORE_API cucore_status cucore_occupancy_max_cluster_size(cucore_kernel *k,
                                                           const cucore_launch_config *cfg,
                                                           int *cluster_size);
/** The kernel's resources on `dev` (registers, static shared memory, max threads, carveout)
 * and the device's limits, ready for the host model, so the driver's answer can be explained
 * (which limit binds). Named barriers come from the cubin when it can be read (else -1);
 * max_dynamic_shared_bytes is 0 (raised as needed, as cucore's launch does).
 * @retval CUCORE_NOT_SUPPORTED the device's architecture is not in the model's table. */
CUCORE_API cucore_status cucore_occupancy_inputs(cucore_kernel *k, cucore_device *dev,
                                                 cucore_arch_limits *limits,
                                                 cucore_kernel_resources *resources);

/** @} */

/* ==== SECTION: binary inspection (offline reader) ==== */
/**
 * @defgroup binary Binary inspection (offline reader)
 *
 * Reads cubins, fatbins and PTX with no GPU and no driver: which kernels a binary holds,
 * each kernel's parameter layout (offset, size, and the type when PTX declares it), its
 * resources (registers, shared, local and constant memory) and its launch attributes (launch
 * bounds, required block size, cluster dimensions, grid sync). The reader treats its input as
 * hostile: a malformed binary is CUCORE_INVALID_BINARY naming what is wrong and where.
 * @{
 */

/** Detects what a buffer holds from its bytes alone:
 * - CUCORE_CODE_CUBIN: an ELF for EM_CUDA (190)
 * - CUCORE_CODE_FATBIN: a fatbin container (magic 0xBA55ED50)
 * - CUCORE_CODE_OBJECT: a host ELF object with device code (.nv_fatbin or __nv_relfatbin)
 * - CUCORE_CODE_LIBRARY: a static library (`"!<arch>\n"`; not inspected further)
 * - CUCORE_CODE_PTX: text whose first directive, after comments, is .version or .target
 * - CUCORE_CODE_LTOIR: LTO-IR (NVRTC -dlto output)
 * - CUCORE_CODE_NVVM: LLVM bitcode (raw or wrapped) or LLVM IR text
 *
 * CUDA C++ source is never guessed. CUCORE_INVALID_BINARY names the first bytes seen.
 * @retval CUCORE_INVALID_BINARY empty, or none of the above (also a host ELF without device
 *         code). */
CUCORE_API cucore_status cucore_code_type_detect(const void *data, size_t size,
                                                 cucore_code_type *out);

/** An opened binary: the kernels of one cubin or PTX module and, for a fatbin or host
 * object, the list of its entries. Immutable except through cucore_binary_attach_ptx.
 * Open with cucore_binary_open() or cucore_binary_open_file(); destroy with
 * cucore_binary_destroy(). */
typedef struct cucore_binary cucore_binary;

/** A kernel attribute the code does not record (a PTX module records no resource usage). */
#define CUCORE_UNKNOWN (-1)

/** One kernel. Strings and params live as long as the cucore_binary they came from. */
typedef struct cucore_kernel_info {
  const char *name;                /**< symbol name; mangled for C++ kernels */
  const char *demangled;           /**< "ns::k(int*, float)"; NULL for extern "C" names, or when
                                    libstdc++'s demangler could not be loaded */
  uint32_t param_count;            /**< entries in params */
  const cucore_param_info *params; /**< param_count entries by ordinal; NULL when none. From a
                                    cubin: offset and size, kind UNKNOWN (POINTER where the
                                    cubin marks a pointer: always from sm_100 on, and for PTX
                                    `.ptr` parameters) and align 0, until PTX is attached */
  uint32_t param_bytes;            /**< size of the parameter buffer */
  int32_t registers;               /**< per thread */
  int32_t static_shared_bytes;     /**< the kernel's own `__shared__` data, not dynamic memory */
  int32_t reserved_shared_bytes;   /**< system-reserved shared memory the cubin places before
                                    the kernel's own (1 KiB in linked sm_90+ cubins), else 0 */
  int32_t local_bytes;             /**< per-thread stack frame of the kernel (local memory) */
  int32_t stack_bytes;             /**< per-thread stack including called functions' frames */
  int32_t const_bytes;             /**< constant bank 0 of the kernel: driver area + parameters */
  int32_t user_const_bytes;        /**< the module's `__constant__` data (constant bank 3) */
  int32_t max_threads_per_block;   /**< the largest block the kernel can be launched with: 1024,
                                    or less by its declared bounds and by its registers
                                    (65536 per block, 256-register allocation granularity
                                    per warp, warps in groups of 4); CUCORE_UNKNOWN for PTX
                                    without declared bounds */
  uint32_t maxntid[3];             /**< `__launch_bounds__` / .maxntid; 0 when none declared */
  uint32_t reqntid[3];             /**< .reqntid (required block size); 0 when none */
  uint32_t cluster_dims[3];        /**< `__cluster_dims__` / .reqnctapercluster; 0 when none */
  uint32_t max_blocks_per_cluster; /**< 3rd `__launch_bounds__` argument / .maxclusterrank */
  int explicit_cluster;            /**< 1: must be launched as clusters (.explicitcluster) */
  uint32_t min_blocks_per_sm;      /**< .minnctapersm; PTX only (a cubin does not keep it) */
  uint32_t max_registers;          /**< register cap (`__maxnreg__`, or the one ptxas derived from
                                    the launch bounds); 0 when none */
  int32_t barriers;                /**< named barriers used, barrier 0 included */
  int uses_grid_sync;              /**< 1: uses cooperative-groups instructions the driver patches
                                    (a cubin's EIATTR_COOP_GROUP_INSTR_OFFSETS). A grid-wide
                                    sync among them needs a cooperative launch, but block-level
                                    groups set it too, so it is a hint, never a refusal */
  int32_t param_base;              /**< where parameters start in constant bank 0 (0: none) */
  /** The C++ type of each parameter as the demangled signature writes it, const first
   * ("float*", "const int*", "unsigned long", "__half", "Params"): param_count entries, or
   * NULL when the kernel has no C++ signature (an extern "C" name, no demangler) or the
   * signature's parameter count differs from the layout's. */
  const char *const *param_types;
} cucore_kernel_info;

/** What the occupancy model needs of a kernel read offline (cucore_binary_find_kernel): its
 * registers, static shared memory, thread limit (0: the architecture's) and named barriers (-1:
 * unknown), the rest as CUCORE_KERNEL_RESOURCES_INIT. Reads `info` only; thread-safe.
 * @retval CUCORE_INVALID_ARGUMENT `info` or `out` is NULL. */
CUCORE_API cucore_status cucore_kernel_info_get_resources(const cucore_kernel_info *info,
                                                          cucore_kernel_resources *out);

/** One entry of a fatbin. */
typedef struct cucore_fatbin_entry {
  cucore_code_type type; /**< CUBIN, PTX or LTOIR; AUTO for a kind cucore does not know */
  uint32_t raw_kind;     /**< the container's kind field: 1 PTX, 2 ELF, 8 LTO-IR */
  int arch;              /**< 90 for sm_90 / compute_90 / lto_90 */
  char arch_suffix;      /**< 'a', 'f' or 0 */
  char arch_name[16];    /**< "sm_90a", "compute_90", "lto_90" */
  /** @{ */
  uint32_t version_major, version_minor; /**< ELF format or PTX ISA version, e.g.\ 9.0 */
  /** @} */
  uint64_t offset;         /**< of the stored bytes, from the start of the opened buffer */
  uint64_t stored_size;    /**< bytes stored in the container (padded, maybe compressed) */
  uint64_t size;           /**< bytes once decompressed (what extract gives) */
  const char *compression; /**< "none", "lz4", "zstd", or "unknown" (compressed LTO-IR is
                                stored in a way cucore cannot read); static strings */
  int debug;               /**< compiled with -G */
  uint64_t flags;          /**< the container's raw flags */
} cucore_fatbin_entry;

/** What was opened. */
typedef struct cucore_binary_info {
  cucore_code_type type;       /**< CUBIN, FATBIN, PTX or OBJECT: the input */
  cucore_code_type code_type;  /**< CUBIN or PTX: what the kernels were read from */
  int arch;                    /**< of the code read: 90 for sm_90a; PTX: its .target */
  char arch_suffix;            /**< 'a', 'f' or 0 */
  char arch_name[16];          /**< "sm_90a"; "compute_90" for PTX */
  int virtual_arch;            /**< cubin: the compute_XX it came from (0 when not recorded) */
  int ptx_version;             /**< PTX: ISA version, major*10 + minor */
  int toolkit_version;         /**< cubin: CUDA version of ptxas, major*10 + minor (0: unknown) */
  int relocatable;             /**< cubin: 1 when it needs linking (-rdc) */
  int debug;                   /**< cubin: 1 when compiled with -G */
  uint32_t kernel_count;       /**< kernels read (cucore_binary_get_kernel()) */
  uint32_t fatbin_entry_count; /**< 0 unless a fatbin or host object */
  int32_t selected_entry;      /**< the fatbin entry the kernels came from; -1 when none */
  int demangler;               /**< 1 when C++ names could be demangled */
} cucore_binary_info;

/** CONSTRUCTOR: reads `size` bytes of code (copied). `type` may be CUCORE_CODE_AUTO. `arch`
 * (e.g.\ 90; 0 = any) picks the entry of a fatbin (exact cubin, else a compatible cubin of
 * the same major version, else PTX the arch can JIT; with 0 the newest cubin, else PTX),
 * checks that a cubin can run on it, and sets the arch PTX parameter offsets are computed
 * for (0: the PTX's .target). A fatbin that also carries PTX lends its parameter kinds to
 * the chosen cubin. PTX offsets follow ptxas's layout for that arch: each parameter starts
 * at the first offset after the previous one whose address in constant bank 0 (param base +
 * offset) is a multiple of its alignment; the base is 0x160 on sm_70-89 (0x1a80 once the
 * parameters pass 4352 bytes), 0x210 on sm_90 and 0x380 on sm_100 and newer, so a 64-byte
 * aligned struct can sit at different offsets on different GPUs. Fails with
 * CUCORE_INVALID_BINARY (malformed, naming what and where, or bytes of another type than the
 * `type` declared: the message names both), CUCORE_PARSE_ERROR (PTX text that does not parse,
 * e.g.\ with no .version or .target directive), CUCORE_NOT_FOUND (no entry for `arch`),
 * CUCORE_NOT_SUPPORTED (LTO-IR, NVVM, C++ source, static libraries, or a compressed entry
 * whose decompressor is missing). Destroy `*out` with cucore_binary_destroy().
 * @retval CUCORE_INVALID_BINARY the code is malformed, empty or unrecognised, or not of the
 *         declared `type` (e.g.\ binary bytes declared PTX).
 * @retval CUCORE_PARSE_ERROR PTX that does not parse (no .version or .target, junk).
 * @retval CUCORE_NOT_FOUND no entry for `arch`.
 * @retval CUCORE_NOT_SUPPORTED a kind the reader does not read.
 * @retval CUCORE_INVALID_ARGUMENT `arch` outside 0..1000, or `size` past PTRDIFF_MAX. */
CUCORE_API cucore_status cucore_binary_open(const void *data, size_t size, cucore_code_type type,
                                            int arch, cucore_binary **out);
/** CONSTRUCTOR: the same for a file; CUCORE_IO_ERROR names the path and the system's reason.
 * @retval CUCORE_IO_ERROR the file cannot be read (or is not a regular file, or too large). */
CUCORE_API cucore_status cucore_binary_open_file(const char *path, cucore_code_type type, int arch,
                                                 cucore_binary **out);
/** DESTRUCTOR: frees the binary. NULL is a no-op. Kernel infos taken from it become invalid. */
CUCORE_API cucore_status cucore_binary_destroy(cucore_binary *bin);
/** What was opened (arch, versions, counts), copied to `*out`. */
CUCORE_API cucore_status cucore_binary_get_info(const cucore_binary *bin, cucore_binary_info *out);
/** The number of kernels (as cucore_binary_info.kernel_count). */
CUCORE_API cucore_status cucore_binary_get_kernel_count(const cucore_binary *bin, uint32_t *count);
/** The kernel at `index` (0 .. kernel_count-1, in the binary's order). *out lives as long as
 * `bin`. CUCORE_INVALID_ARGUMENT names the range. */
CUCORE_API cucore_status cucore_binary_get_kernel(const cucore_binary *bin, uint32_t index,
                                                  const cucore_kernel_info **out);
/** The kernel named `name`: its symbol, its demangled name, or its demangled name without the
 * parameter list when only one kernel has it. CUCORE_NOT_FOUND lists the kernels that exist,
 * the nearest names first. *out lives as long as `bin`.
 * @retval CUCORE_NOT_FOUND no kernel of that name. */
CUCORE_API cucore_status cucore_binary_find_kernel(const cucore_binary *bin, const char *name,
                                                   const cucore_kernel_info **out);
/** Entry `index` of the fatbin (0 .. fatbin_entry_count-1), copied to `*out`.
 * @retval CUCORE_INVALID_ARGUMENT not a fatbin or host object, or `index` out of range. */
CUCORE_API cucore_status cucore_binary_get_fatbin_entry(const cucore_binary *bin, uint32_t index,
                                                        cucore_fatbin_entry *out);
/** The entry cucore_binary_open would pick for `arch` (see there).
 * @retval CUCORE_NOT_FOUND no entry can run on `arch`.
 * @retval CUCORE_INVALID_ARGUMENT not a fatbin or host object, or `arch` outside 0..1000. */
CUCORE_API cucore_status cucore_binary_fatbin_select(const cucore_binary *bin, int arch,
                                                     uint32_t *index);
/** Copies entry `index`, decompressed, into `buf` of `capacity` bytes and sets *size. With
 * buf NULL only *size is set. CUCORE_INVALID_ARGUMENT when capacity is too small (names both
 * sizes); CUCORE_NOT_SUPPORTED when a compressed entry's decompressor is missing.
 * @retval CUCORE_INVALID_ARGUMENT `capacity` is too small, `index` is out of range, or the
 *         binary is not a fatbin or host object.
 * @retval CUCORE_NOT_SUPPORTED the entry's compression cannot be read here.
 * @retval CUCORE_INVALID_BINARY the compressed data is damaged. */
CUCORE_API cucore_status cucore_binary_fatbin_extract(const cucore_binary *bin, uint32_t index,
                                                      void *buf, size_t capacity, size_t *size);
/** Merges the parameter types of a PTX module (text, `len` bytes, copied) into the kernels of
 * the same name: each matched kernel's params get the PTX kind and alignment (a POINTER
 * already known stays). *matched (may be NULL) counts the kernels matched. Nothing changes and
 * CUCORE_INVALID_ARGUMENT names the kernel and parameter when a matched kernel's count or
 * sizes differ; CUCORE_PARSE_ERROR when the PTX does not parse (no .version or .target,
 * junk); CUCORE_INVALID_BINARY when the bytes are not text. Changes `bin`: must not race
 * with any other call on it.
 * @retval CUCORE_INVALID_ARGUMENT a matched kernel's parameters differ.
 * @retval CUCORE_PARSE_ERROR the PTX does not parse.
 * @retval CUCORE_INVALID_BINARY binary bytes (a magic number, or not text) given as PTX. */
CUCORE_API cucore_status cucore_binary_attach_ptx(cucore_binary *bin, const char *ptx, size_t len,
                                                  uint32_t *matched);

/** One module variable (`__device__`, `__constant__`, `__managed__`) as the code records it.
 * Strings live as long as the cucore_binary they came from. */
typedef struct cucore_global_info {
  const char *name;        /**< symbol name; mangled for a C++ name in a namespace or a
                                template */
  const char *demangled;   /**< "ns::table", "coeffs<float>"; NULL for unmangled names */
  uint64_t size;           /**< bytes */
  cucore_global_kind kind; /**< DEVICE, CONSTANT or MANAGED */
  int initialized;         /**< 1 when the code gives it an initial value (a cubin's
                                .nv.global.init or .nv.constant3 data, a PTX initializer) */
} cucore_global_info;

/** The number of module variables of the code read (the chosen entry of a fatbin): from a
 * cubin's symbol table (data symbols of .nv.global, .nv.global.init and .nv.constant3), or a
 * PTX module's `.global` / `.const` declarations with a size (an `.extern` or unsized one is
 * not listed). */
CUCORE_API cucore_status cucore_binary_get_global_count(const cucore_binary *bin, uint32_t *count);
/** The module variable at `index` (0 .. count-1, in the code's order). *out lives as long as
 * `bin`.
 * @retval CUCORE_INVALID_ARGUMENT `index` is out of range (the message names the count). */
CUCORE_API cucore_status cucore_binary_get_global(const cucore_binary *bin, uint32_t index,
                                                  const cucore_global_info **out);
/** The module variable named `name`: its symbol or its demangled name. *out lives as long as
 * `bin`.
 * @retval CUCORE_NOT_FOUND no such variable; the message lists those that exist. */
CUCORE_API cucore_status cucore_binary_find_global(const cucore_binary *bin, const char *name,
                                                   const cucore_global_info **out);
/** @} */
/* ==== END SECTION: binary inspection ==== */

/* ==== SECTION: managed memory: NUMA, discard, batches ==== */
/**
 * @defgroup managed_batch Managed memory: host NUMA nodes, discard, batches
 *
 * Host NUMA locations (CUCORE_LOCATION_HOST_NUMA with a node the system has, checked against
 * /sys/devices/system/node; CUCORE_LOCATION_HOST_NUMA_CURRENT for the calling thread's node) work
 * in cucore_mem_prefetch(), cucore_mem_advise() and the calls below, and
 * cucore_mem_range_get_info() reports them (a driver that keeps no host NUMA preference reports
 * such a preferred location as none). Discarding a range tells the driver its contents are no
 * longer needed: the memory stays valid, its contents are undefined until it is prefetched
 * (cucore_mem_prefetch(), or discard with cucore_mem_discard_prefetch()); writes made before that
 * may be lost (the driver's UVM layer clears a discard on a migration; seen with driver 580: host
 * writes after a discard never reached a kernel). The batched forms take many ranges in one call
 * (CUDA 13.0's cuMemPrefetchBatchAsync, cuMemDiscardBatchAsync, cuMemDiscardAndPrefetchBatchAsync);
 * on an older driver cucore does the same work range by range with cuMemPrefetchAsync, and a
 * discard there does nothing (the contents are kept, which a discard allows). Every range is
 * checked as cucore_mem_prefetch() checks one, and a failure names the range.
 * @{
 */

/** A range of managed memory for the batched calls. */
typedef struct cucore_mem_range {
  cucore_devptr ptr; /**< its start */
  size_t bytes;      /**< its size (> 0) */
} cucore_mem_range;

/** The host NUMA node of the CPU the calling thread runs on now (getcpu(2)).
 * @retval CUCORE_NOT_SUPPORTED the system cannot say. */
CUCORE_API cucore_status cucore_host_get_numa_node(int *node);

/** Prefetches `count` ranges in stream order on `s`: range i to `to[0]` when `to_count` is 1,
 * else to `to[i]` (`to_count` == `count`). The ranges of one batch run in no set order.
 * @retval CUCORE_INVALID_ARGUMENT an empty list, a location count that is neither 1 nor
 *         `count`, a range that is not managed memory (the message names the range).
 * @retval CUCORE_DRIVER_TOO_OLD the driver has neither cuMemPrefetchBatchAsync nor
 *         cuMemPrefetchAsync (CUDA 12.2). */
CUCORE_API cucore_status cucore_mem_prefetch_batch(const cucore_mem_range *ranges, size_t count,
                                                   const cucore_location *to, size_t to_count,
                                                   cucore_stream *s);
/** Discards `bytes` of managed memory at `ptr` in stream order on `s`: the memory stays
 * valid, its contents become undefined (a no-op before CUDA 13.0). */
CUCORE_API cucore_status cucore_mem_discard(cucore_devptr ptr, size_t bytes, cucore_stream *s);
/** Discards `count` ranges (cucore_mem_discard() for each, in one call). */
CUCORE_API cucore_status cucore_mem_discard_batch(const cucore_mem_range *ranges, size_t count,
                                                  cucore_stream *s);
/** Discards `bytes` at `ptr` and prefetches the range to `to`: the pages are made at `to`
 * without moving the old contents (a plain prefetch before CUDA 13.0). */
CUCORE_API cucore_status cucore_mem_discard_prefetch(cucore_devptr ptr, size_t bytes,
                                                     cucore_location to, cucore_stream *s);
/** Discards and prefetches `count` ranges; locations as cucore_mem_prefetch_batch(). */
CUCORE_API cucore_status cucore_mem_discard_prefetch_batch(const cucore_mem_range *ranges,
                                                           size_t count, const cucore_location *to,
                                                           size_t to_count, cucore_stream *s);
/** @} */
/* ==== END SECTION: managed memory: NUMA, discard, batches ==== */

/* ==== SECTION: mipmapped arrays ==== */
/**
 * @defgroup mipmap Mipmapped arrays
 *
 * A chain of levels of one array, each half the extent of the one before (at least 1; the depth
 * of a layered or cube map array counts layers or faces and stays), made with
 * cuMipmappedArrayCreate. Each level is a cucore array owned by the mipmapped array
 * (cucore_mipmap_get_level()): copy into it with cucore_array_copy_from_host() (checked against
 * the level's own extents), or make a texture or surface over it, as over any array. A texture
 * over the whole chain (cucore_texture_create_mipmap()) samples between levels in kernels with
 * tex1DLod / tex2DLod / tex3DLod. The mipmapped array cannot be destroyed while a texture or
 * surface uses it or one of its levels. Thread-safe as the arrays are.
 * @{
 */

/** A mipmapped array (CUmipmappedArray) and its level arrays. */
typedef struct cucore_mipmap cucore_mipmap;

/** How a texture over a mipmapped array picks levels (CUDA_TEXTURE_DESC's mipmap fields). */
typedef struct cucore_mipmap_sampling {
  cucore_filter_mode filter; /**< between two levels: POINT (nearest) or LINEAR (blend) */
  float level_bias;          /**< added to the level the hardware computes */
  float min_level;           /**< the lowest level used (>= 0) */
  float max_level;           /**< the highest level used (<= levels - 1) */
} cucore_mipmap_sampling;

/** CONSTRUCTOR: a mipmapped array of `levels` levels on `dev`, level 0 described by `desc` (as
 * cucore_array_create()'s, with a width of at least 1). `levels` is 1 to 1 + floor(log2) of the
 * largest extent that shrinks.
 * @retval CUCORE_INVALID_ARGUMENT a level count out of that range (the message gives it), a
 *         description cucore_array_create() refuses, texture gather on a non-2D array.
 * @retval CUCORE_DRIVER_TOO_OLD the driver lacks cuMipmappedArrayCreate. */
CUCORE_API cucore_status cucore_mipmap_create(cucore_device *dev, const cucore_array_desc *desc,
                                              unsigned levels, cucore_mipmap **out);
/** DESTRUCTOR: destroys the mipmapped array and its level arrays (cuMipmappedArrayDestroy).
 * NULL is a no-op.
 * @retval CUCORE_IN_USE textures over it, or textures or surfaces over a level, still exist
 *         (the message names the level); nothing is destroyed. */
CUCORE_API cucore_status cucore_mipmap_destroy(cucore_mipmap *m);
/** The number of levels. */
CUCORE_API cucore_status cucore_mipmap_get_level_count(const cucore_mipmap *m, unsigned *levels);
/** Level `level` (0 .. levels - 1) as an array owned by `m` (valid until
 * cucore_mipmap_destroy(); cucore_array_destroy() refuses it). cucore_array_get_desc() gives
 * its extents.
 * @retval CUCORE_INVALID_ARGUMENT `level` out of range. */
CUCORE_API cucore_status cucore_mipmap_get_level(cucore_mipmap *m, unsigned level,
                                                 cucore_array **out);
/** The native CUmipmappedArray, still owned by `m`. */
CUCORE_API cucore_status cucore_mipmap_get_native(const cucore_mipmap *m, void **cumipmap);
/** CONSTRUCTOR: a texture over the whole chain (resource type MIPMAPPED_ARRAY). `desc` must set
 * CUCORE_TEXTURE_NORMALIZED_COORDS (the driver's rule); `mip` may be NULL for point filtering
 * between levels over all of them. Destroy it with cucore_texture_destroy() before the
 * mipmapped array.
 * @retval CUCORE_INVALID_ARGUMENT no normalized coordinates, a filter that does not exist,
 *         level clamps outside 0 .. levels - 1 or reversed, a bias that is not finite. */
CUCORE_API cucore_status cucore_texture_create_mipmap(cucore_mipmap *m,
                                                      const cucore_texture_desc *desc,
                                                      const cucore_mipmap_sampling *mip,
                                                      cucore_texture **out);
/** @} */
/* ==== END SECTION: mipmapped arrays ==== */

/* ==== SECTION: graph memory nodes ==== */
/**
 * @defgroup graph_mem Graph memory nodes
 *
 * Allocation and free nodes of an explicit graph (cuGraphAddMemAllocNode,
 * cuGraphAddMemFreeNode, CUDA 11.4+). The allocation's address is fixed when its node is
 * added, so later nodes of the graph take it as an ordinary pointer: cucore records it (kind
 * CUCORE_MEM_GRAPH) and kernel nodes' pointer checks and copies' bounds checks know it. The
 * graph owns the memory: cucore_mem_free() and the other frees refuse it with a message, and
 * the graph frees it itself -- every allocation node needs a free node for its memory in the
 * same graph (checked by cucore_graph_instantiate()). The memory exists only while a launch
 * runs between the two nodes; the record goes when the graph is destroyed. The driver allows
 * one executable graph at a time of a graph with memory nodes, no memory nodes in conditional
 * bodies, and no such graph as a child graph (refused by cucore).
 * @{
 */

/** Adds a node that allocates `bytes` (> 0) of device memory on the graph's device when it
 * runs, after `deps` (`dep_count` nodes of `g`). *dptr gets the address (fixed for the graph's
 * life), *out the node.
 * @retval CUCORE_DRIVER_TOO_OLD the driver lacks cuGraphAddMemAllocNode (CUDA 11.4).
 * @retval CUCORE_INVALID_ARGUMENT a size of 0, a conditional body, a wrong dependency. */
CUCORE_API cucore_status cucore_graph_add_mem_alloc_node(cucore_graph *g,
                                                         cucore_graph_node *const *deps,
                                                         size_t dep_count, size_t bytes,
                                                         cucore_devptr *dptr,
                                                         cucore_graph_node **out);
/** Adds a node that frees `dptr`, the address an allocation node of the same graph gave, after
 * `deps` (which must order it after the allocation node and every node using the memory).
 * @retval CUCORE_INVALID_ARGUMENT `dptr` is not the start of an allocation of this graph, or
 *         is freed already by another free node (the message says which).
 * @retval CUCORE_DRIVER_TOO_OLD the driver lacks cuGraphAddMemFreeNode (CUDA 11.4). */
CUCORE_API cucore_status cucore_graph_add_mem_free_node(cucore_graph *g,
                                                        cucore_graph_node *const *deps,
                                                        size_t dep_count, cucore_devptr dptr,
                                                        cucore_graph_node **out);
/** @} */
/* ==== END SECTION: graph memory nodes ==== */

/* ==== SECTION: the driver's own log (issue 26.9) ==== */
/**
 * @defgroup driver_log The driver's own log
 *
 * Drivers for CUDA 12.9 and newer log why a call failed (cuLogsRegisterCallback). cucore
 * registers one callback per process when the driver is loaded and the entry point exists:
 * when a driver call fails, the message the driver logged for it on the calling thread is
 * appended to cucore_last_error() as "... the driver says: ...". Every message is bounded
 * (CUCORE_DRIVER_LOG_MESSAGE_MAX bytes) and filtered: control characters and bytes outside
 * ASCII are written as \\xHH. With an older driver these calls say CUCORE_DRIVER_TOO_OLD
 * naming the version needed (cucore_driver_log_available says 0 and succeeds).
 * @{
 */

/** The longest message kept, with its NUL (longer ones end in "..."). */
#define CUCORE_DRIVER_LOG_MESSAGE_MAX 512
/** How many of the newest messages the process keeps for cucore_driver_log_read. */
#define CUCORE_DRIVER_LOG_KEEP 32

/** Severity of a driver log message (CUlogLevel). */
typedef enum cucore_driver_log_level {
  CUCORE_DRIVER_LOG_ERROR = 0,  /**< the driver refused or failed a call */
  CUCORE_DRIVER_LOG_WARNING = 1 /**< a warning */
} cucore_driver_log_level;

/** Receives each driver log message, filtered and NUL-terminated, on the thread the driver
 * logged it from, during the driver call that logged it: it must return quickly and must not
 * call cucore or the driver. */
typedef void (*cucore_driver_log_fn)(void *user, cucore_driver_log_level level,
                                     const char *message);

/** *available = 1 when the driver's log is registered (the driver loaded and offers
 * cuLogsRegisterCallback, CUDA 12.9+), else 0; never fails for an absent log.
 * @retval CUCORE_INVALID_ARGUMENT `available` is NULL.
 * @retval CUCORE_DRIVER_NOT_FOUND the driver itself could not be loaded (or another load
 * failure; *available is 0). */
CUCORE_API cucore_status cucore_driver_log_available(int *available);
/** The messages kept since the process began (or the last cucore_driver_log_clear), oldest
 * first, one per line, into buf (`cap` bytes with the NUL; the newest ones are kept when they
 * do not fit). *needed (may be NULL) is the size all of them need with the NUL.
 * @retval CUCORE_INVALID_ARGUMENT buf is NULL with cap > 0.
 * @retval CUCORE_DRIVER_TOO_OLD the driver has no log (it names the version needed). */
CUCORE_API cucore_status cucore_driver_log_read(char *buf, size_t cap, size_t *needed);
/** The newest message the driver logged on the calling thread ("" if none) into buf.
 * @retval CUCORE_INVALID_ARGUMENT buf is NULL or cap is 0.
 * @retval CUCORE_DRIVER_TOO_OLD the driver has no log. */
CUCORE_API cucore_status cucore_driver_log_last(char *buf, size_t cap);
/** Forwards every later message to fn(user, level, message) as well; fn NULL stops it. One
 * forward at a time: a new one replaces the old.
 * @retval CUCORE_DRIVER_TOO_OLD the driver has no log. */
CUCORE_API cucore_status cucore_driver_log_forward(cucore_driver_log_fn fn, void *user);
/** Forgets the messages kept (the process's and this thread's).
 * @retval CUCORE_DRIVER_TOO_OLD the driver has no log. */
CUCORE_API cucore_status cucore_driver_log_clear(void);
/** @} */
/* ==== END SECTION: the driver's own log ==== */

/* ==== SECTION: green contexts (issue 26.1) ==== */
/**
 * @defgroup green Green contexts
 *
 * A green context owns a share of a device's SMs (CUDA 12.4+ drivers; streams on it 12.5+):
 * work launched on its streams runs only on those SMs, so an inference server can sit beside
 * training, or a tuner can give a kernel N SMs. The device's SMs are split into groups of at
 * least a number of SMs, by the driver's rules: a group is at least
 * cucore_green_sm_info::min_partition_sms and a multiple of
 * cucore_green_sm_info::alignment_sms (on compute capability 9.0, 8 and 8); a split that cannot
 * be made is refused with those numbers in the message. A green context gives a cucore_device
 * (cucore_green_get_device) that works in it: streams made on it (cucore_green_stream_create, or
 * cucore_stream_create on that device) take every cucore call, and launches on them go
 * through the usual checked path. A green context is current to one thread at a time: use
 * each one from one thread. Only SMs are split: work-queue resources (cuda.core's
 * WorkqueueResource) are not offered, since CUDA 13.0's headers, which cucore is built with,
 * do not declare them (CU_DEV_RESOURCE_TYPE_SM is the only resource type there). Version gate:
 * a driver older than an entry point needs returns CUCORE_DRIVER_TOO_OLD (cucore's status for
 * a driver too old for a call) with a message naming the entry point and the CUDA version it
 * needs (12.4 for the split and the green context, 12.5 for cucore_green_stream_create).
 * @{
 */

/** A green context: a share of a device's SMs. */
typedef struct cucore_green cucore_green;

/** What a device's SMs allow (cuDeviceGetDevResource, CU_DEV_RESOURCE_TYPE_SM). */
typedef struct cucore_green_sm_info {
  unsigned sm_count;          /**< SMs of the device */
  unsigned min_partition_sms; /**< the fewest SMs a group may have */
  unsigned alignment_sms;     /**< a group's SMs are a multiple of this (co-scheduled SMs) */
} cucore_green_sm_info;

/** Split flag: treat each SM alone (finer groups, no large thread block clusters). */
#define CUCORE_GREEN_IGNORE_COSCHEDULING 0x1u
/** Split flag (compute capability 9.0+): groups that allow the largest clusters. */
#define CUCORE_GREEN_MAX_CLUSTER 0x2u

/** The SM facts of `dev` that a split follows.
 * @retval CUCORE_INVALID_ARGUMENT `dev` or `out` is NULL.
 * @retval CUCORE_DRIVER_TOO_OLD the driver has no green contexts (CUDA 12.4+). */
CUCORE_API cucore_status cucore_green_get_sm_info(cucore_device *dev, cucore_green_sm_info *out);
/** What a split of `dev` into groups of at least `min_sms` SMs would give, without making
 * contexts: `groups` (how many fit), `sms_per_group` (each group's SMs, `min_sms` rounded
 * up by the driver's rules) and `remaining_sms` (those left over); any output may be NULL.
 * `flags`: 0, CUCORE_GREEN_IGNORE_COSCHEDULING, CUCORE_GREEN_MAX_CLUSTER.
 * @retval CUCORE_INVALID_ARGUMENT `min_sms` is 0 or above the device's SMs, or unknown flags.
 * @retval CUCORE_DRIVER_TOO_OLD the driver has no green contexts. */
CUCORE_API cucore_status cucore_green_split_query(cucore_device *dev, unsigned min_sms,
                                                  unsigned flags, unsigned *groups,
                                                  unsigned *sms_per_group, unsigned *remaining_sms);
/** Splits `dev`'s SMs into `count` groups of at least `min_sms` SMs each and makes a green
 * context of each into out[0..count-1]; with `remainder` not NULL, the SMs left over make one
 * more (NULL when none are left; it has fewer guarantees than the groups). `flags` as for
 * cucore_green_split_query. On failure nothing is made and every output is NULL. Destroy each
 * with cucore_green_destroy.
 * @retval CUCORE_INVALID_ARGUMENT `count` or `min_sms` is 0, or the split cannot give `count`
 * groups: the message gives the device's SMs, the minimum and the granularity, what `min_sms`
 * rounds up to, and how many such groups fit.
 * @retval CUCORE_DRIVER_TOO_OLD the driver has no green contexts. */
CUCORE_API cucore_status cucore_green_split(cucore_device *dev, unsigned count, unsigned min_sms,
                                            unsigned flags, cucore_green **out,
                                            cucore_green **remainder);
/** The SMs the green context owns.
 * @retval CUCORE_INVALID_ARGUMENT a NULL argument. */
CUCORE_API cucore_status cucore_green_get_sm_count(const cucore_green *g, unsigned *sm_count);
/** A device handle that works in the green context (its memory is the device's): streams,
 * events, allocations and launches made through it run on the green context's SMs. It
 * belongs to `g`: cucore_device_close refuses it (CUCORE_MISUSE); it is valid until
 * cucore_green_destroy.
 * @retval CUCORE_INVALID_ARGUMENT a NULL argument. */
CUCORE_API cucore_status cucore_green_get_device(cucore_green *g, cucore_device **dev);
/** A stream of the green context (cuGreenCtxStreamCreate; non-blocking, as the driver
 * requires) at `priority` (as cucore_stream_create). Destroy it with cucore_stream_destroy
 * before the green context.
 * @retval CUCORE_INVALID_ARGUMENT a NULL argument, or `priority` outside the range.
 * @retval CUCORE_DRIVER_TOO_OLD the driver lacks cuGreenCtxStreamCreate (CUDA 12.5+). */
CUCORE_API cucore_status cucore_green_stream_create(cucore_green *g, int priority,
                                                    cucore_stream **out);
/** Destroys a green context (cuGreenCtxDestroy); its streams must be destroyed first (the
 * driver does not). NULL is a no-op. */
CUCORE_API cucore_status cucore_green_destroy(cucore_green *g);
/** @} */
/* ==== END SECTION: green contexts ==== */

/* ==== SECTION: system facts through NVML (issue 26.2) ==== */
/**
 * @defgroup system System facts (NVML)
 *
 * What NVML (libnvidia-ml.so.1, loaded at run time like the driver; CUCORE_LIBNVML names
 * another file) says of a GPU now: clocks, temperature, power, utilisation, the reasons its
 * clocks are held down, PCI, UUID, MIG mode and NVLink. A device is named by its cucore
 * ordinal (matched to NVML by PCI bus id, else by UUID) or by its UUID. A fact NVML does not
 * offer on this GPU is -1. Where NVML is absent or does not start, every call is
 * CUCORE_NOT_SUPPORTED saying what was tried.
 * @{
 */

/** Clock-event reason bits (nvmlClocksEventReasons): why the clocks are where they are. */
#define CUCORE_CLOCK_REASON_GPU_IDLE 0x1ull            /**< nothing runs */
#define CUCORE_CLOCK_REASON_APPLICATIONS_CLOCKS 0x2ull /**< application clocks setting */
#define CUCORE_CLOCK_REASON_SW_POWER_CAP 0x4ull        /**< software power cap */
#define CUCORE_CLOCK_REASON_HW_SLOWDOWN 0x8ull         /**< hardware slowdown */
#define CUCORE_CLOCK_REASON_SYNC_BOOST 0x10ull         /**< held to a group's sync boost */
#define CUCORE_CLOCK_REASON_SW_THERMAL 0x20ull         /**< software thermal slowdown */
#define CUCORE_CLOCK_REASON_HW_THERMAL 0x40ull         /**< hardware thermal slowdown */
#define CUCORE_CLOCK_REASON_HW_POWER_BRAKE 0x80ull     /**< hardware power brake */
#define CUCORE_CLOCK_REASON_DISPLAY_CLOCKS 0x100ull    /**< display clock setting */
/** The reasons that mean a measurement ran slower than the GPU can (power, thermal,
 * hardware slowdown, sync boost): a timing taken under any of them is flagged. */
#define CUCORE_CLOCK_REASONS_THROTTLE                                   \
  (CUCORE_CLOCK_REASON_SW_POWER_CAP | CUCORE_CLOCK_REASON_HW_SLOWDOWN | \
   CUCORE_CLOCK_REASON_SYNC_BOOST | CUCORE_CLOCK_REASON_SW_THERMAL |    \
   CUCORE_CLOCK_REASON_HW_THERMAL | CUCORE_CLOCK_REASON_HW_POWER_BRAKE)

/** What NVML says of one GPU now. Every number is -1 when NVML does not offer it. */
typedef struct cucore_system_info {
  int ordinal;             /**< the cucore device ordinal, -1 when the driver does not list it */
  char name[96];           /**< NVML's name of the product */
  char uuid[96];           /**< NVML's UUID, "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" */
  char pci_bus_id[32];     /**< NVML's PCI bus id, "00000000:19:00.0" */
  long long pci_device_id; /**< the 16-bit device id and 16-bit vendor id */
  int sm_clock_mhz;        /**< SM clock now */
  int sm_clock_max_mhz;    /**< SM clock at most */
  int mem_clock_mhz;       /**< memory clock now */
  int mem_clock_max_mhz;   /**< memory clock at most */
  int graphics_clock_mhz;  /**< graphics clock now */
  int temperature_c;       /**< GPU temperature, degrees Celsius */
  int power_mw;            /**< power drawn now, milliwatts */
  int power_limit_mw;      /**< the enforced power limit, milliwatts */
  int gpu_util_pct;        /**< percent of the last sample period a kernel ran */
  int mem_util_pct;        /**< percent of it device memory was read or written */
  long long clock_reasons; /**< CUCORE_CLOCK_REASON_* bits, -1 when unknown */
  int mig_current;         /**< MIG mode: 1 on, 0 off, -1 not offered */
  int mig_pending;         /**< MIG mode after the next reset */
  int nvlink_links;        /**< NVLinks NVML knows on this GPU (-1 none offered) */
  int nvlink_active;       /**< of them, the active ones */
  unsigned nvlink_active_mask; /**< bit i: link i is active */
} cucore_system_info;

/** What NVML says now of the GPU that is cucore device `ordinal`.
 * @retval CUCORE_INVALID_DEVICE no such ordinal.
 * @retval CUCORE_NOT_SUPPORTED NVML is absent or did not start (the message says why).
 * @retval CUCORE_NOT_FOUND NVML does not list the device (by PCI bus id or UUID). */
CUCORE_API cucore_status cucore_system_get_device_info(int ordinal, cucore_system_info *out);
/** The SM clock now (MHz) and the clock event reasons (CUCORE_CLOCK_REASON_* bits) of cucore
 * device `ordinal`, read alone: two NVML queries on the device's NVML handle, kept after the
 * first call (cucore_system_get_device_info reads every fact, NVLink and PCI included, which
 * costs more than a short timing sample). For sampling beside a timing. Either pointer may be
 * NULL; a value NVML does not give is -1. Thread-safe.
 * @retval CUCORE_INVALID_DEVICE no such ordinal.
 * @retval CUCORE_NOT_SUPPORTED NVML is absent or did not start (the message says why).
 * @retval CUCORE_NOT_FOUND NVML does not list the device (by PCI bus id or UUID). */
CUCORE_API cucore_status cucore_system_get_clock(int ordinal, int *sm_clock_mhz,
                                                 long long *clock_reasons);
/** The same for the GPU whose UUID is `uuid` ("GPU-..." as NVML writes it, or the
 * 36-character form cucore_device_props::uuid holds).
 * @retval CUCORE_NOT_FOUND no GPU has that UUID.
 * @retval CUCORE_NOT_SUPPORTED NVML is absent or did not start. */
CUCORE_API cucore_status cucore_system_get_info_by_uuid(const char *uuid, cucore_system_info *out);
/** The number of GPUs NVML lists (every GPU of the machine, whatever CUDA_VISIBLE_DEVICES says),
 * needing no CUDA driver call: with cucore_system_get_info_by_index, a program reads every
 * GPU's facts on a thread of its own while cuInit runs, and matches them to its devices by
 * UUID afterwards (`cucore devices` does). Thread-safe.
 * @retval CUCORE_INVALID_ARGUMENT count is NULL.
 * @retval CUCORE_NOT_SUPPORTED NVML is absent, did not start, or cannot count. */
CUCORE_API cucore_status cucore_system_get_count(int *count);
/** Every fact of NVML's GPU `index` (0 .. cucore_system_get_count - 1, NVML's order); `ordinal`
 * is the cucore device at its PCI bus id when the driver is started and lists it, else -1
 * (the call never waits for another thread's cuInit). `out` is the caller's; on failure its
 * facts are -1. Thread-safe.
 * @retval CUCORE_INVALID_ARGUMENT no such index, or out is NULL.
 * @retval CUCORE_NOT_SUPPORTED NVML is absent, did not start, or cannot list by index. */
CUCORE_API cucore_status cucore_system_get_info_by_index(int index, cucore_system_info *out);
/** The names of the reason bits in `reasons` ("sw_power_cap, hw_thermal"; "none" for 0;
 * unknown bits as hex), into buf (`cap` bytes with the NUL; cut when it does not fit).
 * @retval CUCORE_INVALID_ARGUMENT buf is NULL or cap is 0. */
CUCORE_API cucore_status cucore_system_reasons_text(long long reasons, char *buf, size_t cap);
/** Loads NVML and starts it (nvmlInit), once per process; later calls return the first one's
 * outcome at once. Thread-safe, and independent of the CUDA driver: a program may call it from
 * a thread of its own while cuInit runs, so that the first cucore_system_* query finds NVML
 * ready (its time is the phase CUCORE_PHASE_LOAD_NVML).
 * @retval CUCORE_NOT_SUPPORTED NVML is absent or did not start (the message says why). */
CUCORE_API cucore_status cucore_system_load(void);
/** @} */
/* ==== END SECTION: system facts ==== */

/* ==== SECTION: compile cache ==== */
/**
 * @defgroup cache Compile cache
 *
 * Program compiles are cached, on by default: on disk (shared by every process of the user)
 * and in the process (the same key compiled twice gives the same object, loaded once).
 *
 * The key is a SHA-256 over everything that decides the output: cucore's version and the
 * cache format, the compiler's identity (path, inode, size and modification time of the
 * NVRTC, nvJitLink or libNVVM library the compile uses, and of the toolkit include
 * directories), the flags each tool will be given, the code type, target and arch, the
 * program's name (it appears in `__FILE__` and line information), the canonical options, the
 * source, every in-memory header (name and bytes), every extra NVVM module and the sorted name
 * expressions.
 *
 * A compile that can read files the key cannot see is not cached, and the reason is kept
 * (cucore_program_get_cache_info): an include-path outside the toolkit's own directories, a
 * pre-include that is not an in-memory header, a raw option naming include paths, PCH or
 * output files, a quoted `#include` that finds a file on disk beside the source, an
 * `#include` whose file is a macro or a computed name, a quoted `__has_include` of a file that
 * is not an in-memory header, or a `??/` line splice (its meaning depends on the dialect). The
 * includes are read as the preprocessor reads them (translation phases 1-3: line splices
 * joined, comments removed, `%:` and `??=` taken as `#`), in the source and in every in-memory
 * header. cucore_program_set_cache_digest makes such a compile cacheable: the caller's digest
 * stands for those files.
 *
 * Where: the directory cucore_cache_set_dir gave, else `$CUCORE_CACHE_DIR`, else
 * `$XDG_CACHE_HOME/cucore`, else `~/.cache/cucore`. `CUCORE_CACHE_DISABLE=1` (any value but ""
 * and "0") turns the cache off, disk and in-process layers both; it wins over
 * cucore_cache_set_enabled. Size cap: cucore_cache_set_max_bytes, else
 * `$CUCORE_CACHE_MAX_BYTES` (bytes, or with a K, M or G suffix), else 1 GiB; when a store
 * passes the cap, the least recently used entries (a hit counts as a use) are removed until
 * the cache is at most 90% of the cap. Each process checks the cap against what it last saw
 * of the directory plus what it stored since, so many processes storing at once can pass it
 * for a while (a soft cap); an entry larger than 90% of the cap is not stored.
 *
 * One file per entry, `<dir>/<2 hex>/<62 hex>`: a header (magic, format version, payload
 * length, the key, a 64-bit checksum of the payload) and the payload (the code, the PTX kept
 * beside a cubin, the name-expression map, the compile log). Entries are written to a
 * temporary file in the same directory, flushed and renamed, so readers never see part of
 * one. An entry that fails its checks is removed and the source is compiled again. The cache
 * never fails a compile: a directory that cannot be written, a full disk or a damaged entry
 * leaves a note in cucore_program_get_cache_info and the compile goes on.
 *
 * The process-wide settings and statistics are locked: they may be used from any thread.
 * @{
 */

/** What the cache did for a program's last compile. */
typedef enum cucore_cache_result {
  CUCORE_CACHE_NOT_USED = 0, /**< no compile yet, or one that failed before the cache */
  CUCORE_CACHE_DISABLED,     /**< the cache is off (reason says by what) */
  CUCORE_CACHE_UNCACHEABLE,  /**< compiled; the compile reads what the key cannot see */
  CUCORE_CACHE_MISS,         /**< compiled, then stored (see stored and note) */
  CUCORE_CACHE_HIT_DISK,     /**< read from the cache directory */
  CUCORE_CACHE_HIT_MEMORY    /**< the object this process already made for the same key */
} cucore_cache_result;

/** "not_used", "disabled", "uncacheable", "miss", "hit_disk", "hit_memory"; "unknown"
 * otherwise. Never NULL. */
CUCORE_API const char *cucore_cache_result_name(cucore_cache_result result);

/** The cache's part in one compile. Strings are owned by the program and stay valid until its
 * next compile; none is NULL. */
typedef struct cucore_cache_info {
  cucore_cache_result result; /**< what the cache did */
  int stored;                 /**< 1 when this compile wrote its entry to disk */
  char key[65];               /**< the key as 64 hex digits; "" when none was computed */
  const char *path;           /**< the entry's file; "" when there is no cache directory */
  const char *reason; /**< DISABLED / UNCACHEABLE: why, naming the option, file or setting */
  const char *note;   /**< what went wrong with the cache, if anything (a damaged entry that was
                        removed, a directory that cannot be written, ...); "" when nothing */
} cucore_cache_info;

/** What the cache did for `prog`'s last compile. */
CUCORE_API cucore_status cucore_program_get_cache_info(const cucore_program *prog,
                                                       cucore_cache_info *out);
/** Turns the cache on (1, the default) or off (0) for `prog` alone. */
CUCORE_API cucore_status cucore_program_set_cache(cucore_program *prog, int enabled);
/** Makes a compile that reads files the key cannot see (include paths, pre-includes, headers
 * beside the source, PCH) cacheable: `digest` (any non-empty text, e.g.\ a hash the caller
 * computed over those files) joins the key and stands for them. The caller promises that the
 * digest changes whenever those files do. NULL removes it. Copied.
 * @retval CUCORE_INVALID_ARGUMENT `digest` is "". */
CUCORE_API cucore_status cucore_program_set_cache_digest(cucore_program *prog, const char *digest);

/** Counts of cache events. */
typedef struct cucore_cache_counters {
  uint64_t hits;        /**< entries read from disk */
  uint64_t memory_hits; /**< objects handed out again by the in-process layer (process only) */
  uint64_t misses;      /**< cacheable compiles that found nothing usable */
  uint64_t stores;      /**< entries written */
  uint64_t evictions;   /**< entries removed to keep under the size cap */
  uint64_t errors;      /**< damaged entries removed, writes that failed */
  uint64_t uncacheable; /**< compiles that could not use the cache */
} cucore_cache_counters;

/** The cache as a whole. */
typedef struct cucore_cache_stats {
  int enabled;        /**< 0 when off (CUCORE_CACHE_DISABLE or cucore_cache_set_enabled) */
  char dir[4096];     /**< the directory; "" when none could be found */
  uint64_t max_bytes; /**< the size cap */
  uint64_t entries;   /**< entries on disk now */
  uint64_t bytes;     /**< their total size */
  cucore_cache_counters process; /**< this process, since it started */
  cucore_cache_counters total;   /**< every process that used the directory, since it was last
                                    cleared (memory_hits stays 0: those never touch disk) */
} cucore_cache_stats;

/** Fills *out: settings, what is on disk (it reads the directory) and the counters. */
CUCORE_API cucore_status cucore_cache_get_stats(cucore_cache_stats *out);
/** Uses `dir` as the cache directory for the rest of the process (created when first
 * written); NULL goes back to the environment's choice. Copied; a relative path is taken
 * from the working directory now.
 * @retval CUCORE_INVALID_ARGUMENT `dir` is "" or too long.
 * @retval CUCORE_IO_ERROR `dir` is relative and the working directory cannot be read. */
CUCORE_API cucore_status cucore_cache_set_dir(const char *dir);
/** Turns the cache on (1) or off (0) for the process; -1 goes back to the default (on unless
 * CUCORE_CACHE_DISABLE is set). CUCORE_CACHE_DISABLE=1 keeps it off whatever is set here. */
CUCORE_API cucore_status cucore_cache_set_enabled(int enabled);
/** Sets the size cap in bytes (at least 4096); 0 goes back to `$CUCORE_CACHE_MAX_BYTES` or
 * 1 GiB. It applies from the next store. */
CUCORE_API cucore_status cucore_cache_set_max_bytes(uint64_t max_bytes);
/** Removes every entry (and stray temporary files) from the directory, resets its counters
 * and empties the in-process layer (objects already handed out stay valid). `entries` and
 * `bytes` (either may be NULL) receive what was removed. A directory that does not exist is
 * empty, not an error; one that cannot be read is CUCORE_IO_ERROR naming it, and so is a file
 * that cannot be removed (the message counts them and names the first with the reason;
 * `entries` and `bytes` still receive what was removed).
 * @retval CUCORE_IO_ERROR the directory cannot be read, or an entry, a temporary file or the
 *         counters cannot be removed or reset. */
CUCORE_API cucore_status cucore_cache_clear(uint64_t *entries, uint64_t *bytes);
/** Checks the cache's configuration without changing anything, so that none of it is
 * ignored without a word (the library itself never prints). *problem is 1 when something is
 * wrong, and `msg` (`cap` bytes, always NUL-terminated; "" when all is well) names the variable
 * or call and the reason, problems joined by "; ": the directory (from cucore_cache_set_dir,
 * `$CUCORE_CACHE_DIR`, `$XDG_CACHE_HOME` or `$HOME`) is not a directory, cannot be written or
 * cannot be created, or there is none (checked only while the cache is on);
 * `$CUCORE_CACHE_MAX_BYTES` is not a size, does not fit in 64 bits or is below 4096;
 * `$CUCORE_CACHE_DISABLE` is neither "", "0" nor "1". Compiles still work: without the disk
 * cache (an unusable directory), with the default cap (a malformed size), with the cache off
 * (any other CUCORE_CACHE_DISABLE value). `msg` may be NULL when `cap` is 0.
 * @retval CUCORE_INVALID_ARGUMENT `problem` is NULL, or `msg` is NULL with `cap` > 0. */
CUCORE_API cucore_status cucore_cache_config_problem(char *msg, size_t cap, int *problem);
/** @} */
/* ==== END SECTION: compile cache ==== */

/* ------------------------------------------------------------------------------------------ */
/* Phase timings: where a process's startup and first result went                            */
/* ------------------------------------------------------------------------------------------ */

/**
 * @defgroup phases Phase timings
 * Wall time of the one-time steps of a process, as cucore saw them: loading each library,
 * cuInit, contexts, the compile cache, compiles and module loads. cucore stamps the clock
 * (CLOCK_BOOTTIME) only at those steps, never on launches, copies or allocations; a program
 * adds its own steps (allocations, copies, the launch, its report, teardown) with
 * cucore_phase_add, so one table tells where its time went (`cucore run --timings`).
 * A library's load phase ran (count >= 1) exactly when cucore loaded or tried to load it, so
 * the table also says which libraries a process did not need.
 * @{
 */

/** The phases, in the order a first result usually passes them. */
typedef enum cucore_phase {
  CUCORE_PHASE_PROCESS_START = 0, /**< from the process's start (exec) to main: added by the
                                     program (cucore_phase_add(..., 0, now)); the start is the
                                     kernel's, to its clock tick (10 ms at USER_HZ 100) */
  CUCORE_PHASE_LOAD_LIBCUDA,      /**< dlopen of libcuda.so.1 and its entry points */
  CUCORE_PHASE_LOAD_NVRTC,        /**< dlopen of NVRTC, its symbols and nvrtcVersion */
  CUCORE_PHASE_LOAD_NVJITLINK,    /**< dlopen of nvJitLink */
  CUCORE_PHASE_LOAD_NVVM,         /**< dlopen of libNVVM */
  CUCORE_PHASE_LOAD_ZSTD,         /**< dlopen of libzstd (compressed fatbin entries) */
  CUCORE_PHASE_CUINIT,            /**< cuInit and the device count */
  CUCORE_PHASE_CONTEXT,           /**< a primary context retained and made current */
  CUCORE_PHASE_CACHE_LOOKUP,      /**< the compile cache: key, in-process and disk lookup */
  CUCORE_PHASE_COMPILE,           /**< NVRTC, libNVVM or nvJitLink making code (cache misses) */
  CUCORE_PHASE_CACHE_STORE,       /**< writing a compiled entry to the cache directory */
  CUCORE_PHASE_MODULE_LOAD,       /**< cuLibraryLoadData / FromFile (the driver's load) */
  CUCORE_PHASE_ALLOC,             /**< device allocations (added by the program) */
  CUCORE_PHASE_COPY_IN,           /**< copies to the device (added by the program) */
  CUCORE_PHASE_LAUNCH,            /**< the launch until it is done (added by the program) */
  CUCORE_PHASE_COPY_OUT,          /**< copies back (added by the program) */
  CUCORE_PHASE_REPORT,            /**< the program's report (added by the program) */
  CUCORE_PHASE_TEARDOWN,          /**< frees and handles destroyed (added by the program) */
  CUCORE_PHASE_LOAD_NVML,         /**< dlopen of NVML and nvmlInit (cucore_system_load) */
  CUCORE_PHASE_COUNT              /**< the number of phases */
} cucore_phase;

/** One phase's figures, in milliseconds after the process's start. */
typedef struct cucore_phase_time {
  int count;       /**< how many times it ran (0: never, and the times below are 0) */
  double start_ms; /**< when it first began */
  double end_ms;   /**< when it last ended */
  double total_ms; /**< wall time summed over its runs (threads may overlap) */
} cucore_phase_time;

/** Fills out[0..CUCORE_PHASE_COUNT) with every phase's figures so far (index = cucore_phase).
 * Cheap enough to call at any time; it reads /proc/self/stat once for the process's start.
 * @retval CUCORE_INVALID_ARGUMENT `out` is NULL. */
CUCORE_API cucore_status cucore_phase_get_times(cucore_phase_time *out);
/** Sets *ms to now, in milliseconds after the process's start (the clock of the table).
 * @retval CUCORE_INVALID_ARGUMENT `ms` is NULL. */
CUCORE_API cucore_status cucore_phase_now(double *ms);
/** Adds one run of `phase` from `start_ms` to `end_ms` (both from cucore_phase_now; 0 is the
 * process's start) to the table. Thread-safe.
 * @retval CUCORE_INVALID_ARGUMENT `phase` is not a phase, or end_ms < start_ms. */
CUCORE_API cucore_status cucore_phase_add(cucore_phase phase, double start_ms, double end_ms);
/** "process_start", "load_libcuda", ..., "teardown" (the keys of `cucore run --json`'s
 * "phases"); "unknown" for anything else. Never NULL. */
CUCORE_API const char *cucore_phase_name(cucore_phase phase);
/** @} */
/* ==== END SECTION: phase timings ==== */

/* ==== SECTION: IPC events (issue 26.4) ==== */
/**
 * @defgroup ipc_events Events shared between processes
 *
 * An event created with CUCORE_EVENT_INTERPROCESS | CUCORE_EVENT_DISABLE_TIMING is exported
 * as plain bytes (cucore_ipc_event_handle: the driver's 64 bytes, a magic and a version), sent
 * any way at all, and imported in another process on the same GPU: a stream there waits on it
 * (cucore_stream_wait_event()), so work of one process is ordered after work of another
 * without a host round trip. A wait on an imported event waits for the exporter's most recent
 * record of it at the time of the wait. Entry points cuIpcGetEventHandle and
 * cuIpcOpenEventHandle (CUDA 4.1; Linux only).
 * @{
 */

/** An event as bytes for another process (cucore_event_export_ipc()). */
typedef struct cucore_ipc_event_handle {
  uint32_t magic;         /**< cucore's mark, checked on import */
  uint32_t version;       /**< of this layout */
  int32_t pid;            /**< the exporting process */
  uint32_t reserved;      /**< 0 */
  unsigned char data[64]; /**< the driver's CUipcEventHandle */
} cucore_ipc_event_handle;

/** Exports `ev` (created with CUCORE_EVENT_INTERPROCESS) into *out.
 * @retval CUCORE_INVALID_ARGUMENT `ev` was not created with CUCORE_EVENT_INTERPROCESS, or it
 *         wraps a CUevent cucore did not create (cucore_event_wrap()).
 * @retval CUCORE_DRIVER_TOO_OLD the driver lacks cuIpcGetEventHandle. */
CUCORE_API cucore_status cucore_event_export_ipc(cucore_event *ev, cucore_ipc_event_handle *out);
/** CONSTRUCTOR: opens an event another process exported, on `dev` (the same GPU as the
 * exporter's). It can be waited on, synchronised, queried and recorded, never timed. Destroy
 * `*out` with cucore_event_destroy().
 * @retval CUCORE_INVALID_ARGUMENT `in` is not a cucore_ipc_event_handle of this version
 *         (damaged or truncated in transit), or it comes from this very process. */
CUCORE_API cucore_status cucore_event_import_ipc(cucore_device *dev,
                                                 const cucore_ipc_event_handle *in,
                                                 cucore_event **out);
/** @} */
/* ==== END SECTION: IPC events ==== */

/* ==== SECTION: virtual memory (issue 26.3) ==== */
/**
 * @defgroup vmm Virtual memory
 *
 * The driver's virtual memory management (CUDA 10.2+ entry points): reserve an address range,
 * create physical memory on a device, map it into the range, give devices access, unmap,
 * release; export physical memory to another process as a POSIX file descriptor. Sizes,
 * offsets and addresses are multiples of the granularity (cucore_vmm_get_granularity()); a
 * misaligned one is refused naming the granularity and the value rounded up. A mapped range is
 * recorded like an allocation (kind CUCORE_MEM_VMM), so cucore's copies into it are
 * bounds-checked. cucore_vmm_buffer is a growable buffer built on these calls: growing keeps
 * its address and its contents. A driver without the entry points gives
 * CUCORE_DRIVER_TOO_OLD naming the version needed.
 * @{
 */

/** Physical memory of a device (CUmemGenericAllocationHandle): create with cucore_vmm_create()
 * or cucore_vmm_import_fd(), release with cucore_vmm_release(). */
typedef struct cucore_vmm_memory cucore_vmm_memory;
/** A growable device buffer over a reserved address range: cucore_vmm_buffer_create(). */
typedef struct cucore_vmm_buffer cucore_vmm_buffer;

/** Flags of cucore_vmm_create() and cucore_vmm_get_granularity(). */
enum {
  CUCORE_VMM_DEFAULT = 0,     /**< device memory, not exportable */
  CUCORE_VMM_SHAREABLE_FD = 1 /**< exportable as a POSIX file descriptor (cucore_vmm_export_fd) */
};

/** Access of a device to a mapped range (cucore_vmm_set_access()); no other value is valid. */
enum {
  CUCORE_VMM_ACCESS_NONE = 0,     /**< no access */
  CUCORE_VMM_ACCESS_READ = 1,     /**< read only */
  CUCORE_VMM_ACCESS_READWRITE = 3 /**< read and write */
};

/** The granularity of physical memory on `dev` for `flags` (CUCORE_VMM_*): `minimum` (every
 * size, offset and address must be a multiple of it) and `recommended` (for performance);
 * either may be NULL.
 * @retval CUCORE_INVALID_ARGUMENT unknown flags.
 * @retval CUCORE_DRIVER_TOO_OLD the driver lacks cuMemGetAllocationGranularity (10.2). */
CUCORE_API cucore_status cucore_vmm_get_granularity(cucore_device *dev, unsigned flags,
                                                    size_t *minimum, size_t *recommended);
/** Reserves `bytes` of address space (a multiple of the minimum granularity) aligned to
 * `alignment` (0: the granularity) for `dev`, at `hint` when the driver can (0: anywhere).
 * *out gets its start; give it back with cucore_vmm_unreserve() after unmapping it.
 * @retval CUCORE_INVALID_ARGUMENT 0 or misaligned bytes (the message names the granularity). */
CUCORE_API cucore_status cucore_vmm_reserve(cucore_device *dev, size_t bytes, size_t alignment,
                                            cucore_devptr hint, cucore_devptr *out);
/** Gives back a range reserved with cucore_vmm_reserve() (its whole `bytes`); nothing may be
 * mapped in it any more.
 * @retval CUCORE_INVALID_ARGUMENT a part of the range is still mapped (the message names it). */
CUCORE_API cucore_status cucore_vmm_unreserve(cucore_device *dev, cucore_devptr base, size_t bytes);
/** CONSTRUCTOR: `bytes` (a multiple of the minimum granularity) of physical memory pinned on
 * `dev`. `flags` CUCORE_VMM_SHAREABLE_FD makes it exportable. Release `*out` with
 * cucore_vmm_release().
 * @retval CUCORE_INVALID_ARGUMENT 0 or misaligned bytes, unknown flags.
 * @retval CUCORE_DEVICE_OUT_OF_MEMORY the device has not that much free. */
CUCORE_API cucore_status cucore_vmm_create(cucore_device *dev, size_t bytes, unsigned flags,
                                           cucore_vmm_memory **out);
/** DESTRUCTOR: releases the handle. Memory still mapped stays usable until it is unmapped (the
 * driver frees it then). NULL is a no-op. */
CUCORE_API cucore_status cucore_vmm_release(cucore_vmm_memory *mem);
/** The size in bytes of physical memory (as created or imported). */
CUCORE_API cucore_status cucore_vmm_get_size(const cucore_vmm_memory *mem, size_t *bytes);
/** Maps `bytes` of `mem` from `offset` at `addr` (inside a reserved range), all multiples of
 * the granularity, and records the range (kind CUCORE_MEM_VMM). No device can access it until
 * cucore_vmm_set_access().
 * @retval CUCORE_INVALID_ARGUMENT misaligned values, `offset + bytes` past `mem`'s size, or a
 *         range overlapping one cucore already records. */
CUCORE_API cucore_status cucore_vmm_map(cucore_devptr addr, cucore_vmm_memory *mem, size_t offset,
                                        size_t bytes);
/** Unmaps `[addr, addr + bytes)`, which must be exactly one or more adjacent ranges mapped by
 * cucore_vmm_map() (not a cucore_vmm_buffer's), and forgets their records.
 * @retval CUCORE_INVALID_ARGUMENT the range cuts a mapped range, covers a buffer's range, or
 *         has addresses no cucore_vmm_map() mapped (the message names the first). */
CUCORE_API cucore_status cucore_vmm_unmap(cucore_devptr addr, size_t bytes);
/** Gives each of the `count` devices (1..64, no repeats) `access` (CUCORE_VMM_ACCESS_*) to
 * the mapped range `[addr, addr + bytes)`.
 * @retval CUCORE_INVALID_ARGUMENT `access` is not one of CUCORE_VMM_ACCESS_NONE, _READ,
 *         _READWRITE (the message names the value), no devices, a NULL or repeated device. */
CUCORE_API cucore_status cucore_vmm_set_access(cucore_devptr addr, size_t bytes,
                                               cucore_device *const *devs, size_t count,
                                               unsigned access);
/** Exports `mem` (created with CUCORE_VMM_SHAREABLE_FD) as a new POSIX file descriptor in
 * *fd (the caller closes it); pass it to another process (cucore_ipc_send_fd) which imports it
 * with cucore_vmm_import_fd().
 * @retval CUCORE_INVALID_ARGUMENT `mem` was not created shareable. */
CUCORE_API cucore_status cucore_vmm_export_fd(cucore_vmm_memory *mem, int *fd);
/** CONSTRUCTOR: imports physical memory exported by cucore_vmm_export_fd() (`fd` stays the
 * caller's) on `dev`; `bytes` is its size as the exporter created it (it bounds later maps).
 * Release `*out` with cucore_vmm_release().
 * @retval CUCORE_INVALID_ARGUMENT a negative fd, 0 or misaligned bytes. */
CUCORE_API cucore_status cucore_vmm_import_fd(cucore_device *dev, int fd, size_t bytes,
                                              cucore_vmm_memory **out);

/** CONSTRUCTOR: a buffer of `bytes` (rounded up to the granularity when mapped; copies are
 * checked against `bytes`) on `dev`, readable and writable by `dev`, in an address range of
 * `max_bytes` reserved up front (0: just `bytes`). Destroy with cucore_vmm_buffer_destroy().
 * @retval CUCORE_INVALID_ARGUMENT `bytes` is 0, or `max_bytes` is below `bytes`. */
CUCORE_API cucore_status cucore_vmm_buffer_create(cucore_device *dev, size_t bytes,
                                                  size_t max_bytes, cucore_vmm_buffer **out);
/** Grows the buffer to `bytes`, keeping its address and its contents: new physical memory is
 * mapped after the existing memory, in the reserved range or, past it, in a range reserved right
 * after it. The record of the buffer grows with it. `bytes` not above the current size changes
 * nothing. Not thread-safe for one buffer: grow, destroy and cucore_vmm_buffer_get_address() of the
 * same buffer must not run at once (different buffers may); kernels and copies already using the
 * old range may run during a grow, since the address does not move.
 * @retval CUCORE_DEVICE_OUT_OF_MEMORY no physical memory for the growth, or the addresses
 *         after the reserved range are taken (the message says which, and to reserve more up
 *         front); the buffer is unchanged either way. */
CUCORE_API cucore_status cucore_vmm_buffer_grow(cucore_vmm_buffer *buf, size_t bytes);
/** The buffer's address (the same for its whole life) and size; either may be NULL. */
CUCORE_API cucore_status cucore_vmm_buffer_get_address(const cucore_vmm_buffer *buf,
                                                       cucore_devptr *addr, size_t *bytes);
/** DESTRUCTOR: unmaps and releases the memory and gives back the address ranges. NULL is a
 * no-op.
 * @retval CUCORE_IN_USE textures or DLPack exports still use the buffer (it stays). */
CUCORE_API cucore_status cucore_vmm_buffer_destroy(cucore_vmm_buffer *buf);
/** @} */
/* ==== END SECTION: virtual memory ==== */

/* ==== SECTION: checkpoint (issue 26.5) ==== */
/**
 * @defgroup checkpoint Checkpointing another process
 *
 * The driver's checkpoint calls (CUDA 12.8+ drivers, Linux) for a CUDA process of this user,
 * named by its pid: lock it (its CUDA calls then block), checkpoint it (its GPU memory moves to
 * host memory and its GPU resources are released; a tool such as CRIU can then save the
 * process), restore it (onto the same GPUs or, by UUID, onto others of the same chip), unlock
 * it. The driver must be loadable here; this process needs no device. A driver without the
 * entry points gives CUCORE_DRIVER_TOO_OLD naming the version needed; one that refuses a step
 * for the process's state says the state it is in.
 * @{
 */

/** The CUDA state of a process (cucore_checkpoint_get_state()). */
typedef enum cucore_process_state {
  CUCORE_PROCESS_RUNNING = 0,      /**< runs (the default) */
  CUCORE_PROCESS_LOCKED = 1,       /**< its CUDA calls block (locked or restored) */
  CUCORE_PROCESS_CHECKPOINTED = 2, /**< its GPU memory is on the host, its GPU resources freed */
  CUCORE_PROCESS_FAILED = 3        /**< a checkpoint or restore failed beyond repair */
} cucore_process_state;

/** A GPU to restore onto another: UUIDs as in cucore_device_props.uuid ("GPU-" prefix
 * allowed). */
typedef struct cucore_checkpoint_gpu_pair {
  char old_uuid[48]; /**< a GPU the process used when checkpointed */
  char new_uuid[48]; /**< the GPU (same chip, enough memory) to restore it onto */
} cucore_checkpoint_gpu_pair;

/** The state of process `pid`.
 * @retval CUCORE_INVALID_ARGUMENT `pid` <= 0.
 * @retval CUCORE_DRIVER_TOO_OLD the driver lacks cuCheckpointProcessGetState (12.8). */
CUCORE_API cucore_status cucore_checkpoint_get_state(int pid, cucore_process_state *out);
/** Locks running process `pid`: waits up to `timeout_ms` (0: no limit) for its CUDA work to
 * reach a point where it can be locked.
 * @retval CUCORE_NOT_READY the timeout passed (the driver's CUDA_ERROR_TIMEOUT or
 *         CUDA_ERROR_NOT_READY, kept as the native code); the process still runs. */
CUCORE_API cucore_status cucore_checkpoint_lock(int pid, unsigned timeout_ms);
/** Checkpoints locked process `pid`: its GPU memory to the host, its GPU resources released. */
CUCORE_API cucore_status cucore_checkpoint_process(int pid);
/** Restores checkpointed process `pid` (it is then locked). `count` pairs (0: none, the same
 * GPUs) remap GPUs; when given, they must name every GPU checkpointed with it, which is every
 * GPU visible to it, not only those it used (two H200s: a pair for device 0 alone is refused
 * with CUDA_ERROR_INVALID_VALUE for a process that used device 0 only).
 * @retval CUCORE_INVALID_ARGUMENT a UUID that is not one, an old GPU named twice, `pairs`
 *         NULL with `count` > 0, more than 64 pairs. */
CUCORE_API cucore_status cucore_checkpoint_restore(int pid, const cucore_checkpoint_gpu_pair *pairs,
                                                   size_t count);
/** Unlocks locked process `pid`: its CUDA calls go on. */
CUCORE_API cucore_status cucore_checkpoint_unlock(int pid);
/** @} */
/* ==== END SECTION: checkpoint ==== */

/* ==== SECTION: autotuning (cucore tune) ==== */
/**
 * @defgroup tune Autotuning: search spaces, pruning and the model's score
 *
 * A search space is a set of parameters, each with a list of values (the Cartesian product
 * of the lists is the raw space), restrictions over them, and expressions that give each
 * configuration's launch: grid, block, dynamic shared memory. It follows Kernel Tuner's
 * conventions: parameters named block_size_x/y/z are the block dimensions unless a block
 * expression is set; without a grid expression the grid is ceil(problem_size / product of
 * grid_div) per dimension (grid_div defaults to the block dimension). Parameters become
 * `-DNAME=value` or template arguments of the kernel name (`gemm<{BM},{BN}>`); one used only
 * by launch expressions never changes the compile.
 *
 * Expressions (restrictions and launch): the Python boolean expressions Kernel Tuner's
 * restrictions are written in, over the space's parameters by name. Values are 64-bit
 * integers, reals, strings ('...' or "...", Python's escapes) and bools (True False true
 * false), with Python's rules: `/` is true division, `//` floors, `%` takes the divisor's
 * sign, a bool is 0/1 in arithmetic; `+ - * / // % **`; `& | ^ << >> ~` on integers;
 * comparisons chained as in Python (`1 < a <= b`) with `in`, `not in`, `is`, `is not`;
 * `and or not` and `&& || !`; `a if c else b` and `c ? a : b`; lists, tuples, sets and
 * `range(...)` after `in` or as the one argument of any all len min max (`x in [1, 4]`,
 * `x in range(32, 1025, 32)`); strings compare with `==` and by bytes, `in` a string is a
 * substring test; the functions abs all any ceil float floor int len log2 max min range
 * round. They are parsed, never run as code: a lambda or def is refused (write the
 * expression itself); a parse error names the column. Integer overflow (past 64 bits),
 * division by zero and a string where a number is needed are errors of the configuration,
 * never a silent wrap or 0. Limits: 64 KiB of text, 1000 levels of nesting. Configurations
 * are numbered 0..raw-1 as itertools.product numbers them (the last parameter varies
 * fastest). A space is used by one thread at a time; reading calls (count, config, text) on a
 * space nobody changes may run concurrently.
 * @{
 */

/** A search space: create with cucore_tune_space_create() or cucore_tune_space_from_json(),
 * destroy with cucore_tune_space_destroy(). */
typedef struct cucore_tune_space cucore_tune_space;

/** How a parameter reaches the kernel. */
typedef enum cucore_tune_param_kind {
  CUCORE_TUNE_PARAM_AUTO = 0,   /**< TEMPLATE when `{NAME}` is in the kernel name, else DEFINE
                                    when the name is a word of the source, else LAUNCH_ONLY when
                                    a launch expression uses it, else DEFINE */
  CUCORE_TUNE_PARAM_DEFINE,     /**< `-DNAME=value` */
  CUCORE_TUNE_PARAM_TEMPLATE,   /**< substituted for `{NAME}` in the kernel name */
  CUCORE_TUNE_PARAM_LAUNCH_ONLY /**< only in launch expressions: never changes the compile */
} cucore_tune_param_kind;

/** What a check found about one configuration (the later the stage, the larger the value). */
typedef enum cucore_tune_verdict {
  CUCORE_TUNE_RUNNABLE = 0,  /**< passed every check made so far */
  CUCORE_TUNE_RESTRICTED,    /**< a restriction is false, or could not be evaluated */
  CUCORE_TUNE_BAD_LAUNCH,    /**< a launch expression gave no valid dimension or size */
  CUCORE_TUNE_ARCH_LIMIT,    /**< block, grid or shared memory beyond the architecture's limits */
  CUCORE_TUNE_MODEL_REJECTED /**< after compiling: no block can be resident (registers, shared
                                 memory, block size), or a filter the caller asked for */
} cucore_tune_verdict;

/** The verdict's name ("runnable", "restricted", "bad-launch", "arch-limit",
 * "model-rejected"); "unknown" for a value not in the enum. Never NULL; static storage. */
CUCORE_API const char *cucore_tune_verdict_name(cucore_tune_verdict verdict);

/** The expressions of a space (cucore_tune_space_set_expr). */
typedef enum cucore_tune_slot {
  CUCORE_TUNE_GRID = 0,     /**< 1 to 3 expressions separated by commas: x[, y[, z]] */
  CUCORE_TUNE_BLOCK,        /**< 1 to 3 expressions: x[, y[, z]] */
  CUCORE_TUNE_SMEM,         /**< one expression: dynamic shared memory in bytes */
  CUCORE_TUNE_PROBLEM_SIZE, /**< 1 to 3 expressions: the problem's extent per dimension */
  CUCORE_TUNE_GRID_DIV_X,   /**< expressions whose product divides problem_size x */
  CUCORE_TUNE_GRID_DIV_Y,   /**< the same for y */
  CUCORE_TUNE_GRID_DIV_Z    /**< the same for z */
} cucore_tune_slot;

/** CONSTRUCTOR: an empty space (one configuration, no parameters). Destroy `*out` with
 * cucore_tune_space_destroy(). */
CUCORE_API cucore_status cucore_tune_space_create(cucore_tune_space **out);
/** DESTRUCTOR: frees the space. NULL is a no-op. */
CUCORE_API cucore_status cucore_tune_space_destroy(cucore_tune_space *space);
/** Adds a parameter with `n` values written as text, each read once by Python 3's literal
 * rules (Kernel Tuner's values are Python values): an integer ("64", "-3", "0x40", "0o17",
 * "0b101"), a real ("0.5", "1e-3"), a bool ("true", "false", "True", "False"), else a string
 * ("float", "unsigned int", "1.0f"). That reading is the value everywhere: restrictions and
 * launch expressions use it, a compile sees it as C reads it (-DNAME=VALUE and template
 * arguments: integers in decimal, reals and strings as written, bools as true/false), JSON
 * and the store write it. A decimal integer with a leading zero ("010": 10 in Python's int(),
 * octal 8 in C) and integers beyond 64 bits are refused, as are values that are empty or hold a
 * control character or bytes that are not UTF-8 (a value is one line of C). Values equal as
 * values ("16" and "0x10") are one value twice. Copied. Names are C identifiers, unique in the
 * space, of any length.
 * @retval CUCORE_INVALID_ARGUMENT a bad or repeated name, no values, a value refused as above or
 *         repeated (both texts named), or a kind not in the enum. */
CUCORE_API cucore_status cucore_tune_space_add_param(cucore_tune_space *space, const char *name,
                                                     const char *const *values, size_t n,
                                                     cucore_tune_param_kind kind);
/** Adds a parameter written as on the command line: "NAME=V1,V2,...", where a value may be a
 * range "LO..HI" (step 1) or "LO..HI:STEP", or powers of two "pow2:LO..HI" (2^LO..2^HI).
 * @retval CUCORE_INVALID_ARGUMENT the text has no `=`, a bad range, or what add_param refuses. */
CUCORE_API cucore_status cucore_tune_space_parse_param(cucore_tune_space *space, const char *text,
                                                       cucore_tune_param_kind kind);
/** Adds a restriction: an expression over parameters added before it; a configuration is
 * kept when every restriction is true (non-zero).
 * @retval CUCORE_INVALID_ARGUMENT a parse error or an unknown name (the message names the
 *         column). */
CUCORE_API cucore_status cucore_tune_space_restrict(cucore_tune_space *space, const char *expr);
/** Sets one of the space's expressions (see cucore_tune_slot); names must be parameters added
 * before. Commas separate dimensions or factors at the top level only (`min(a, b)` is one
 * expression). NULL unsets it.
 * @retval CUCORE_INVALID_ARGUMENT a parse error (the column is named), or more expressions
 *         than the slot takes. */
CUCORE_API cucore_status cucore_tune_space_set_expr(cucore_tune_space *space, cucore_tune_slot slot,
                                                    const char *text);
/** Sets the names of the parameters that are the block's x, y and z dimensions when no block
 * expression is set (Kernel Tuner's block_size_names; default block_size_x, block_size_y,
 * block_size_z). A NULL entry keeps the default. Copied.
 * @retval CUCORE_INVALID_ARGUMENT a name that is not an identifier. */
CUCORE_API cucore_status cucore_tune_space_set_block_names(cucore_tune_space *space,
                                                           const char *const names[3]);
/** Sets the kernel name, a plain name or a template with `{PARAM}` holes
 * ("gemm<{BM},{BN}>"). Copied.
 * @retval CUCORE_INVALID_ARGUMENT empty, an unclosed `{`, or a hole that names no parameter
 *         (checked when the configuration's text is asked for). */
CUCORE_API cucore_status cucore_tune_space_set_kernel(cucore_tune_space *space, const char *name);
/** The kernel name set by cucore_tune_space_set_kernel() or a space file's kernel name (the
 * space's string), or NULL when none was set. */
CUCORE_API cucore_status cucore_tune_space_get_kernel(const cucore_tune_space *space,
                                                      const char **name);
/** Gives the kernel's source text so that AUTO parameters can be resolved (a parameter that
 * is not a word of the source and is used by a launch expression is LAUNCH_ONLY). `size` 0
 * means NUL-terminated. Copied. */
CUCORE_API cucore_status cucore_tune_space_set_source(cucore_tune_space *space, const char *text,
                                                      size_t size);
/** Checks configurations against an architecture's limits (block dimensions and threads,
 * shared memory per block with opt-in); without limits only the CUDA grid and block maxima
 * are checked. Copied; NULL removes them. */
CUCORE_API cucore_status cucore_tune_space_set_limits(cucore_tune_space *space,
                                                      const cucore_arch_limits *limits);

/** How far each stage shrank the space. */
typedef struct cucore_tune_counts {
  uint64_t raw;                     /**< the Cartesian product */
  uint64_t after_restrictions;      /**< restrictions true */
  uint64_t runnable;                /**< and a valid launch within the architecture's limits */
  uint64_t compiles;                /**< distinct compiles among the runnable configurations */
  uint64_t restricted;              /**< configurations a restriction dropped */
  uint64_t bad_launch;              /**< configurations whose launch expressions failed */
  uint64_t arch_limit;              /**< configurations beyond the architecture's limits */
  uint64_t restriction_errors;      /**< configurations whose restriction could not be evaluated
                                    (division by zero, overflow, a string in arithmetic): not
                                    run, not counted in `restricted` */
  uint64_t first_restriction_error; /**< the first of them (valid when restriction_errors > 0):
                                         cucore_tune_space_get_config() gives its reason */
} cucore_tune_counts;

/** The raw size of the space (the product of the value counts).
 * @retval CUCORE_INVALID_ARGUMENT the product does not fit in 64 bits. */
CUCORE_API cucore_status cucore_tune_space_get_size(const cucore_tune_space *space, uint64_t *raw);
/** Checks every configuration before compiling and counts what each stage keeps.
 * @retval CUCORE_INVALID_ARGUMENT the space holds more than 2^32 configurations. */
CUCORE_API cucore_status cucore_tune_space_count(const cucore_tune_space *space,
                                                 cucore_tune_counts *out);

/** One configuration as the checks before compiling see it. */
typedef struct cucore_tune_config {
  uint64_t index;              /**< its number in the raw space */
  cucore_tune_verdict verdict; /**< RUNNABLE, or the first check it failed */
  char reason[256];            /**< why, when not RUNNABLE ("restriction 2 is false",
                                  "block.x = 2048, sm_90 allows 1024"); made of numbers and
                                  fixed words only, so it always fits: the restriction's text is
                                  cucore_tune_space_get_restriction(restriction - 1) */
  uint32_t grid[3];            /**< blocks per dimension (0 when not computed) */
  uint32_t block[3];           /**< threads per dimension */
  uint64_t smem;               /**< dynamic shared memory, bytes */
  uint64_t compile_hash;       /**< equal for configurations that share one compile */
  uint32_t restriction;        /**< RESTRICTED: the restriction (1-based) that was false or
                                  could not be evaluated; 0 otherwise */
  int restriction_failed;      /**< 1: that restriction could not be evaluated (reason says why) */
} cucore_tune_config;

/** Fills *out for configuration `index` (0..raw-1): its launch and the first check it fails.
 * @retval CUCORE_INVALID_ARGUMENT `index` is not below the raw size. */
CUCORE_API cucore_status cucore_tune_space_get_config(const cucore_tune_space *space,
                                                      uint64_t index, cucore_tune_config *out);

/** Texts of a configuration (cucore_tune_space_get_config_text), each written from the
 * values (cucore_tune_space_get_value()); a program that writes another format (CSV, a
 * header, shell words) should read the values, not split these texts. */
typedef enum cucore_tune_text {
  CUCORE_TUNE_TEXT_PARAMS = 0, /**< for people: "BM=16 BN=32 VT=\"unsigned int\"" (every
                                    parameter; a value that would not read back unambiguously
                                    (a space, a quote, `=`, `,`) is quoted as a JSON string) */
  CUCORE_TUNE_TEXT_KERNEL,     /**< the kernel name with template holes filled: "gemm<16,32>" */
  CUCORE_TUNE_TEXT_DEFINES,    /**< the compile's defines, one "-DNAME=VALUE" per line, VALUE
                                    as C reads it (cucore_tune_value::c_text) */
  CUCORE_TUNE_TEXT_JSON        /**< {"BM":16,"BN":32,"T":"float","F":true} */
} cucore_tune_text;

/** Writes text `what` of configuration `index` into buf (NUL-terminated, cut to `cap`);
 * *needed (may be NULL) receives the length without the NUL. buf may be NULL when cap is 0.
 * @retval CUCORE_INVALID_ARGUMENT `index` out of range, `what` not in the enum, or a kernel
 *         template hole naming no parameter. */
CUCORE_API cucore_status cucore_tune_space_get_config_text(const cucore_tune_space *space,
                                                           uint64_t index, cucore_tune_text what,
                                                           char *buf, size_t cap, size_t *needed);

/* Where a parameter is named (cucore_tune_param_info::uses), bits. */
#define CUCORE_TUNE_USED_SOURCE 1u      /**< a word of the kernel's source */
#define CUCORE_TUNE_USED_LAUNCH 2u      /**< a launch expression, or the block-size name in use */
#define CUCORE_TUNE_USED_TEMPLATE 4u    /**< a `{NAME}` hole of the kernel name */
#define CUCORE_TUNE_USED_RESTRICTION 8u /**< a restriction */

/** One parameter, as the space resolved it. Strings live as long as the space is unchanged. */
typedef struct cucore_tune_param_info {
  const char *name;            /**< the parameter's name */
  cucore_tune_param_kind kind; /**< resolved: never AUTO */
  size_t value_count;          /**< its values */
  unsigned uses;               /**< CUCORE_TUNE_USED_* bits: where it is named (0: nowhere, so
                                    each of its values is a compile of the same code) */
} cucore_tune_param_info;

/** What a parameter's value is (cucore_tune_value::type), as Python reads its text. */
typedef enum cucore_tune_value_type {
  CUCORE_TUNE_VALUE_INT = 0, /**< an integer (i) */
  CUCORE_TUNE_VALUE_REAL,    /**< a real (d) */
  CUCORE_TUNE_VALUE_STRING,  /**< a string (text) */
  CUCORE_TUNE_VALUE_BOOL     /**< a bool (i: 0 or 1) */
} cucore_tune_value_type;

/** One value of a parameter. Strings live as long as the space (unchanged). */
typedef struct cucore_tune_value {
  cucore_tune_value_type type; /**< how it reads */
  int64_t i;                   /**< INT, BOOL */
  double d;                    /**< REAL (INT and BOOL as a double too) */
  const char *text;            /**< as written ("0x40", "unsigned int", "True") */
  const char *c_text;          /**< as a compile sees it ("64", "unsigned int", "true"): the
                                    VALUE of -DNAME=VALUE, a template argument, a `\#define` */
} cucore_tune_value;

/** The value parameter `param` has in configuration `index`.
 * @retval CUCORE_INVALID_ARGUMENT `index` or `param` out of range. */
CUCORE_API cucore_status cucore_tune_space_get_value(const cucore_tune_space *space, uint64_t index,
                                                     size_t param, cucore_tune_value *out);
/** The values of the first `n` parameters (n at most the parameter count) in configuration
 * `index`, into out[0..n): one call for a whole configuration (cucore_tune_space_get_value
 * walks the configuration's number for each).
 * @retval CUCORE_INVALID_ARGUMENT `index` out of range, `n` past the parameters, `out` NULL. */
CUCORE_API cucore_status cucore_tune_space_get_values(const cucore_tune_space *space,
                                                      uint64_t index, cucore_tune_value *out,
                                                      size_t n);
/** Value `k` (0-based, in the order given) of parameter `param`.
 * @retval CUCORE_INVALID_ARGUMENT `param` or `k` out of range. */
CUCORE_API cucore_status cucore_tune_space_get_param_value(const cucore_tune_space *space,
                                                           size_t param, size_t k,
                                                           cucore_tune_value *out);
/** The number of restrictions. */
CUCORE_API cucore_status cucore_tune_space_get_restriction_count(const cucore_tune_space *space,
                                                                 size_t *count);
/** The text of restriction `i` (0-based, in the order added), the space's.
 * @retval CUCORE_INVALID_ARGUMENT `i` out of range. */
CUCORE_API cucore_status cucore_tune_space_get_restriction(const cucore_tune_space *space, size_t i,
                                                           const char **text);

/** The number of parameters. */
CUCORE_API cucore_status cucore_tune_space_get_param_count(const cucore_tune_space *space,
                                                           size_t *count);
/** Parameter `i` (0-based, in the order added).
 * @retval CUCORE_INVALID_ARGUMENT `i` out of range. */
CUCORE_API cucore_status cucore_tune_space_get_param(const cucore_tune_space *space, size_t i,
                                                     cucore_tune_param_info *out);

/** CONSTRUCTOR: a space from a JSON object with Kernel Tuner's tune_kernel() keywords, read
 * as Kernel Tuner 1.4 reads them.
 *
 * Read: "tune_params" (name -> list of numbers, strings or booleans; numbers keep their text,
 * booleans are "true"/"false"), "restrictions" (a string or a list), "kernel_name" (a
 * parameter's name appearing in it as a word becomes a template hole: "add<float,
 * block_size_x>"; a name with `{` is cucore's template already), "problem_size" (an integer, a
 * string or a list of 1-3), "grid_div_x/y/z" (an integer, a string or a list whose factors
 * multiply; [] divides by 1; without one, the block-size parameter's value, or 1 when there is
 * no such parameter -- get_grid_dimensions()' rule), "block_size_names", "smem_args"
 * ({"size": EXPR}), "compiler_options", "defines" and "cmem_args" (kept with the space:
 * cucore_tune_space_get_compiler_options(), _get_defines(), _get_cmem_args(); a cmem value is
 * a `cucore run --global` spec or {"type": "f32", "values": [..]}); Kernel Tuner's strings in
 * problem_size, grid_div and smem_args.size are cut to integers as its int() does (floor()
 * around anything but a plain integer or name). cucore's own: "grid", "block", "smem", and
 * what a measured tune checks (cucore_tune_space_get_checks()): "cucore_args", "cucore_expect"
 * (`cucore run` --arg and --expect specs), "atol" and "rtol".
 *
 * Accepted and ignored, each recorded with its reason (cucore_tune_space_get_ignored_keys()):
 * kernel_source, arguments, answer, verify, strategy, strategy_options, iterations, verbose,
 * quiet, log, cache, metrics, observers, simulation_mode, parallel, seed, device, platform,
 * compiler, lang "CUDA"/"CuPy"/"NVCUDA"/"PyCUDA", objective "time",
 * objective_higher_is_better false, objectives {"time": false}; texmem_args {} and a null
 * value (Kernel Tuner's None) of an optional keyword mean nothing. Refused with the reason:
 * another lang, objective or objectives, objective_higher_is_better true, non-empty
 * texmem_args, smem_args.size beside "smem", and any other key, named with its line and
 * column and the nearest known key ("did you mean `tune_params`?").
 *
 * A document with "ConfigurationSpace" or "KernelSpecification" is TuningSchema T1 (Kernel
 * Tuner, KTT, BAT), its keys checked the same way against the schema and what Kernel Tuner's
 * tune_kernel_T1() reads: TuningParameters' Values a JSON list or the Python texts "[1, 'a',
 * True]", "range(A[, B[, C]])", "list(range(..))", "[EXPR for N in range(..) if COND]" (at
 * most 16384 values; never evaluated as Python: EXPR and COND are cucore expressions),
 * Conditions' Expressions, KernelSpecification's Language, KernelName, CompilerOptions,
 * SharedMemory and the launch: with ProblemSize, Kernel Tuner's (ProblemSize, GridDivX/Y/Z --
 * empty means the default -- and the block from block_size_x/y/z); without, LocalSize is the
 * block and GlobalSize the total threads (GlobalSizeType "OpenCL", the default) or the grid
 * in blocks ("CUDA"). General, Search, Budget, KernelFile, Arguments, ReferenceArguments,
 * Device and the like are recorded as ignored.
 *
 * The reader is strict: depth at most 32, no duplicate keys, no trailing commas; every error
 * names the key, its line and column and what was expected. Destroy `*out` with
 * cucore_tune_space_destroy().
 * @retval CUCORE_INVALID_ARGUMENT malformed JSON, an unknown key, a key of the wrong type or
 *         value, a key cucore cannot honour, or what the space's calls refuse. */
CUCORE_API cucore_status cucore_tune_space_from_json(const char *json, size_t size,
                                                     cucore_tune_space **out);

/** What a space file says a measured tune checks (cucore_tune_space_from_json()); the
 * strings belong to the space and live until it is destroyed. */
typedef struct cucore_tune_checks {
  const char *const *args;    /**< `cucore run` --arg specs, in the kernel's order */
  size_t nargs;               /**< 0: the file gives none */
  const char *const *expects; /**< --expect specs */
  size_t nexpects;            /**< 0: the file gives none */
  double rtol;                /**< relative tolerance, where has_rtol */
  double atol;                /**< absolute tolerance, where has_atol */
  int has_rtol;               /**< 1: the file gives "rtol" */
  int has_atol;               /**< 1: the file gives "atol" */
} cucore_tune_checks;
/** The checks the space's file gave ("cucore_args", "cucore_expect", "rtol", "atol") into
 * `*out`; all empty for a space built by calls or from a file without them. The strings stay
 * the space's (valid until cucore_tune_space_destroy()). A reading call: it may run beside
 * other reading calls on a space nobody changes.
 * @retval CUCORE_INVALID_ARGUMENT `space` or `out` NULL. */
CUCORE_API cucore_status cucore_tune_space_get_checks(const cucore_tune_space *space,
                                                      cucore_tune_checks *out);

/** A key of a space file that cucore accepted but does not use (cucore_tune_space_from_json),
 * and why it changes nothing in cucore's result. */
typedef struct cucore_tune_ignored_key {
  const char *key;    /**< as written; a nested key with its path ("KernelSpecification.Device") */
  const char *reason; /**< why ("a Python function: give cucore_expect specs") */
} cucore_tune_ignored_key;
/** The keys the space's file gave that were accepted but ignored, each once, in the order
 * read, with the reason (for a "note: ignored ..." line). `*keys` and its strings belong to the
 * space (valid until cucore_tune_space_destroy()); `*count` 0 for a space built by calls. A
 * reading call.
 * @retval CUCORE_INVALID_ARGUMENT `space`, `keys` or `count` NULL. */
CUCORE_API cucore_status cucore_tune_space_get_ignored_keys(const cucore_tune_space *space,
                                                            const cucore_tune_ignored_key **keys,
                                                            size_t *count);
/** The compiler options of the space's file (Kernel Tuner's "compiler_options", T1's
 * KernelSpecification.CompilerOptions), in order, each one option as written ("-std=c++17",
 * "--use_fast_math"): the tune adds them to every compile. The strings belong to the space
 * (valid until cucore_tune_space_destroy()); `*count` 0 when there are none. A reading call.
 * @retval CUCORE_INVALID_ARGUMENT `space`, `options` or `count` NULL. */
CUCORE_API cucore_status cucore_tune_space_get_compiler_options(const cucore_tune_space *space,
                                                                const char *const **options,
                                                                size_t *count);
/** One define of a space file's "defines" (Kernel Tuner's keyword). */
typedef struct cucore_tune_define {
  const char *name; /**< a C identifier: `#define name value` (or `-Dname=value`) */
  const char *text; /**< the value; unless `literal`, each run of [A-Za-z0-9_] that is a
                         parameter's name is replaced by the configuration's value as written
                         (a JSON boolean as true/false, C++'s words, not Python's True) */
  int literal;      /**< 1: a number or boolean in the file, used as it is */
} cucore_tune_define;
/** The defines of the space's file. With `*given` 1 the file has "defines" and a compile
 * defines exactly these names (none when `*count` is 0) instead of one per parameter: Kernel
 * Tuner's rule. `*given` 0: no "defines" (each parameter is defined as usual). The array
 * belongs to the space (valid until cucore_tune_space_destroy()). A reading call.
 * @retval CUCORE_INVALID_ARGUMENT `space`, `defines`, `count` or `given` NULL. */
CUCORE_API cucore_status cucore_tune_space_get_defines(const cucore_tune_space *space,
                                                       const cucore_tune_define **defines,
                                                       size_t *count, int *given);
/** The constant-memory variables the space's file sets (Kernel Tuner's "cmem_args"), each as
 * the text of a `cucore run --global` option, NAME=SPEC ("coef=f32[3]={1,2,0.5}",
 * "table=f32[]=@table.npy"): written before each configuration runs. The strings belong to the
 * space (valid until cucore_tune_space_destroy()); `*count` 0 when there are none. A reading
 * call.
 * @retval CUCORE_INVALID_ARGUMENT `space`, `globals` or `count` NULL. */
CUCORE_API cucore_status cucore_tune_space_get_cmem_args(const cucore_tune_space *space,
                                                         const char *const **globals,
                                                         size_t *count);

/** What the occupancy model says of one compiled configuration. */
typedef struct cucore_tune_model {
  int blocks_per_sm;            /**< resident blocks per SM (0: cannot run) */
  double occupancy;             /**< active warps / max warps, 0..1 */
  cucore_occupancy_limit limit; /**< what binds */
  uint64_t blocks;              /**< blocks in the grid */
  double waves;                 /**< blocks / (blocks_per_sm x SMs), 0 without an SM count */
  double tail_efficiency;       /**< blocks / (ceil(waves) x blocks_per_sm x SMs); 1 without
                                     an SM count */
  int local_bytes;              /**< per-thread local memory (spills and stack) */
  double score;                 /**< occupancy x tail efficiency, halved with local memory;
                                     0 when it cannot run */
} cucore_tune_model;

/** Filters the model applies on request (all off when zeroed). */
typedef struct cucore_tune_filter {
  double min_occupancy; /**< reject below this occupancy (0: off) */
  int no_spills;        /**< 1: reject any local memory */
} cucore_tune_filter;

/** Runs the host occupancy model on a compiled configuration: `res` are the kernel's
 * resources from its cubin (registers, static shared memory, max threads), `local_bytes` its
 * local memory per thread, `cfg` the configuration from cucore_tune_space_get_config(). A
 * configuration that cannot run (no block resident) or that `filter` (may be NULL) rejects
 * gets verdict MODEL_REJECTED with the reason in cfg->reason; *out gets the model's numbers
 * either way. A configuration already not RUNNABLE is left as it is.
 * @retval CUCORE_INVALID_ARGUMENT limits or resources the model refuses (named). */
CUCORE_API cucore_status cucore_tune_model_check(const cucore_arch_limits *limits,
                                                 const cucore_kernel_resources *res,
                                                 int local_bytes, const cucore_tune_filter *filter,
                                                 cucore_tune_config *cfg, cucore_tune_model *out);
/** Statistics of timing samples (milliseconds). Percentiles interpolate linearly between the
 * sorted samples (numpy's default). */
typedef struct cucore_tune_stats {
  size_t n;          /**< samples */
  double min;        /**< the fastest sample, ms */
  double p20;        /**< the 20th percentile, ms */
  double median;     /**< the median, ms */
  double p80;        /**< the 80th percentile, ms */
  double max;        /**< the slowest sample, ms */
  double mean;       /**< the mean, ms */
  double rel_stddev; /**< sample standard deviation / mean (0 with one sample) */
} cucore_tune_stats;

/** Computes the statistics of `n` samples (not changed; n >= 1).
 * @retval CUCORE_INVALID_ARGUMENT n is 0, or a sample is negative or not finite. */
CUCORE_API cucore_status cucore_tune_stats_compute(const double *samples, size_t n,
                                                   cucore_tune_stats *out);

/** How a configuration is timed (cucore_tune_time_launch). Start from
 * CUCORE_TUNE_TIMING_DEFAULTS. */
typedef struct cucore_tune_timing_options {
  double warmup_ms;           /**< warm-up by time after the untimed first launch (>= 1 launch) */
  double screen_ms;           /**< sample for at least this long */
  int min_samples;            /**< and at least this many samples */
  int max_samples;            /**< stop here even when noisy */
  double max_time_ms;         /**< or when sampling took this long */
  double max_noise;           /**< stop once rel_stddev <= this (0.02 = 2 %) */
  size_t l2_bytes;            /**< the device's L2 size (cucore_device_props.l2_cache_bytes): each
                         sample is preceded, outside the timed events, by writing 2 x this;
                         0: no flush (a hot cache) */
  int batch;                  /**< launches per sample; 0: one, or enough to reach ~50 us when the
                         untimed launch took under 20 us (launch overhead is not ranked) */
  int mode;                   /**< CUCORE_TUNE_LAUNCH_*: how the launches of a sample are made */
  cucore_args *const *rotate; /**< nrotate more argument sets of k (each bound to its own copies
                         of the buffers) cycled launch by launch with `args`, so the data a
                         sample reads is past L2 without a flush; NULL: `args` only */
  int nrotate;                /**< how many sets `rotate` holds (0..1000) */
  int observe_clock;          /**< 1: the SM clock read through NVML (cucore_system_get_clock)
                         between samples, at most every 10 ms; when the clocks are held down
                         (CUCORE_CLOCK_REASONS_THROTTLE) the samples since the previous
                         reading are discarded */
  cucore_devptr flush_buffer; /**< device memory of at least 2 x l2_bytes, the caller's, kept
                         across calls for the flush (0: each call allocates and frees its
                         own, ~0.5 ms of a tune's configuration) */
  int (*more)(void *user);    /**< optional: asked whenever sampling could stop (enough quiet
                         samples, or max_samples); 1 takes 4 more, up to more_max_samples and
                         max_time_ms (a tuner whose GPU would otherwise wait for a compile
                         sharpens the result instead) */
  void *more_user;            /**< more's argument */
  int more_max_samples;       /**< the most samples `more` may ask for (<= 1000000) */
} cucore_tune_timing_options;

/* Launch modes of cucore_tune_timing_options::mode. */
/** Automatic: one launch a sample; a batch when one takes < 20 us, a graph of them under 10 us
 * (samples are queued ahead of the host, so only then do launch calls fall behind). */
#define CUCORE_TUNE_LAUNCH_AUTO 0
#define CUCORE_TUNE_LAUNCH_SINGLE 1 /**< one launch between the events */
#define CUCORE_TUNE_LAUNCH_BATCH 2  /**< `batch` launches back to back between the events */
#define CUCORE_TUNE_LAUNCH_GRAPH \
  3 /**< `batch` launches captured once into a graph (per
                                       configuration), each sample one replay */

/** Defaults: 10 ms warm-up, >= 5 ms and >= 10 samples, <= 200 samples or 200 ms, noise 2 %,
 * no flush, automatic batch. */
#define CUCORE_TUNE_TIMING_DEFAULTS \
  { 10.0, 5.0, 10, 200, 200.0, 0.02, 0, 0 }

/** 1 in *done when screening may stop: at least min_samples and screen_ms, and the noise is
 * at most max_noise, or max_samples or max_time_ms is reached. */
CUCORE_API cucore_status cucore_tune_screen_done(const cucore_tune_stats *stats, double elapsed_ms,
                                                 const cucore_tune_timing_options *opt, int *done);

/** What cucore_tune_time_launch measured. */
typedef struct cucore_tune_timing {
  cucore_tune_stats stats;    /**< per launch (a batch's time / batch) */
  int batch;                  /**< launches per sample */
  double first_ms;            /**< the untimed first launch, host clock (load included) */
  int launches;               /**< every launch made */
  int mode;                   /**< the CUCORE_TUNE_LAUNCH_* used (never AUTO) */
  int sm_clock_mhz;           /**< the median SM clock over the kept samples; -1 not observed */
  int throttled;              /**< samples discarded: the clocks were held down */
  cucore_status clock_status; /**< why the clock was not observed (CUCORE_NOT_SUPPORTED
                                 without NVML); CUCORE_OK when it was or was not asked */
  int more_samples;           /**< samples taken because opt->more asked for them */
} cucore_tune_timing;

/** Times kernel `k` launched with `cfg` (its stream) and `args`: one untimed launch, the
 * launch mode from the least of 3 lone launches, warm-up by time, then samples between two
 * events each (after an L2 flush of 2 x opt->l2_bytes when set, outside the events), up to 16
 * queued ahead of the host, until cucore_tune_screen_done says so (and opt->more asks no
 * more). Needs a GPU. `opt` NULL means the defaults. Not for two threads on one stream. A
 * failed launch ends the call with its status (the tune records it).
 * @retval CUCORE_INVALID_ARGUMENT options out of range (named). */
CUCORE_API cucore_status cucore_tune_time_launch(cucore_kernel *k, const cucore_launch_config *cfg,
                                                 cucore_args *args,
                                                 const cucore_tune_timing_options *opt,
                                                 cucore_tune_timing *out);

/** Medians within this share of the best's (1 %) always tie in cucore_tune_rank(), whatever
 * the noise within one run: GPU timings of one kernel move about that much from one run to
 * the next (clocks, placement), so a narrower winner would not be the same the next time. */
#define CUCORE_TUNE_TIE_FLOOR 0.01

/** Ranks configurations by median time: order[0..n) receives indices, fastest first. A
 * configuration whose median exceeds the best's by at most the larger of their noises
 * (rel_stddev x median) or CUCORE_TUNE_TIE_FLOOR x the best's median ties with the best; the
 * tie is resolved by the lower index so that repeated tunes choose the same one; *ties (may be
 * NULL) receives how many configurations tie with the best (0: a clear best). */
CUCORE_API cucore_status cucore_tune_rank(const cucore_tune_stats *stats, size_t n, size_t *order,
                                          size_t *ties);
/** What a tune's results depend on, for cucore_tune_key(). Every field is text (NULL: ""). */
typedef struct cucore_tune_key_fields {
  const char *source;  /**< the kernel's source text */
  size_t source_size;  /**< its size; 0: NUL-terminated */
  const char *headers; /**< the headers it includes (their text or a digest of them) */
  const char *options; /**< the compile options (cucore_options_canonical()) */
  const char *kernel;  /**< the kernel name or template */
  const char *launch;  /**< the launch expressions: grid; block; smem; problem size */
  const char *args;    /**< the arguments' types and sizes (not their data) */
  const char *params;  /**< the parameters' names (values vary per configuration) */
} cucore_tune_key_fields;

/** The key of a tune: SHA-256 over the labelled, length-prefixed fields, as 64 hexadecimal
 * digits and a NUL in `out`. Any edit of the source, a header, an option, the kernel, the
 * launch expressions or the arguments' shapes gives another key (results are never stale). */
CUCORE_API cucore_status cucore_tune_key(const cucore_tune_key_fields *fields, char out[65]);

/** The environment a result was measured in, as one line ("uuid=...;name=...;cc=9.0;
 * sms=132;l2=52428800;driver=13000;nvrtc=13000;cucore=X.Y.Z;timing=...") into out; `timing`
 * names the measurement policy (cache and launch modes). Never cut: a line that would not fit
 * in `cap` with its NUL is refused.
 * @retval CUCORE_INVALID_ARGUMENT `cap` is 0, or too small (named with the bytes needed). */
CUCORE_API cucore_status cucore_tune_fingerprint(const cucore_device_props *props,
                                                 const char *timing, char *out, size_t cap);

/** A crash-safe store of tune results: one JSON line per measured configuration
 * {"v":1,"key":K,"problem":P,"device":D,"source":S,"kernel":N,"config":{...},"result":{...}}
 * ("source" and "kernel" optional: cucore_tune_store_set_names()), appended with one write(2)
 * each, so a killed tune loses at most the configuration in flight; a torn last line is
 * skipped (and counted) when the store is opened again. Several processes may append to one
 * store (cucore_tune_store_refresh() reads what the others wrote; cucore_tune_store_lock()
 * shares the work). Open with cucore_tune_store_open(), close with cucore_tune_store_close().
 * One thread at a time. */
typedef struct cucore_tune_store cucore_tune_store;

/** CONSTRUCTOR: opens (creating it and its folder when missing) the store at `path`, or with
 * path NULL at `<compile cache folder>/tune/<key>.jsonl`, and reads the records of `key`
 * for `problem` (the problem size as text, e.g.\ "4096,4096"; "" when none) on `device` (a
 * cucore_tune_fingerprint()). An existing file that is not empty must be a store: its first
 * line a store record as the strict reader reads it (or the start of one, torn by a kill), so
 * that a source or a space file named by mistake is never appended to. Close `*out` with
 * cucore_tune_store_close().
 * @retval CUCORE_INVALID_ARGUMENT key is not 64 hexadecimal digits, or the file is not a
 *         store ("`PATH` is not a tune store (its first line is not a store record); refusing
 *         to append to it").
 * @retval CUCORE_IO_ERROR the file or folder cannot be read or made, or the file cannot be
 *         opened for appending (named; cucore_tune_store_open_read_only() may still read it). */
CUCORE_API cucore_status cucore_tune_store_open(const char *path, const char *key,
                                                const char *problem, const char *device,
                                                cucore_tune_store **out);
/** DESTRUCTOR: closes the store. NULL is a no-op. */
CUCORE_API cucore_status cucore_tune_store_close(cucore_tune_store *store);
/** The result recorded for configuration `config` (its CUCORE_TUNE_TEXT_JSON text) under the
 * store's key, problem and device: *result is its JSON text (owned by the store), or NULL when
 * it was never measured there. */
CUCORE_API cucore_status cucore_tune_store_find(const cucore_tune_store *store, const char *config,
                                                const char **result);
/** Appends the result (a JSON object with at least "status"; "median_ms" for measured ones)
 * of configuration `config` (a JSON object) and hands the line to the kernel at once.
 * @retval CUCORE_INVALID_ARGUMENT config or result is not a JSON object (strict reader).
 * @retval CUCORE_IO_ERROR the write failed (named). */
CUCORE_API cucore_status cucore_tune_store_append(cucore_tune_store *store, const char *config,
                                                  const char *result);
/** Where the store is, how many records of its key, problem and device it holds, and how many
 * lines of the file could not be read (a torn last line after a kill). Any out may be NULL. */
CUCORE_API cucore_status cucore_tune_store_get_info(const cucore_tune_store *store,
                                                    const char **path, size_t *records,
                                                    size_t *damaged);

/** How cucore_tune_lookup() found its answer. */
typedef enum cucore_tune_match {
  CUCORE_TUNE_MATCH_EXACT = 0,    /**< this key, problem and device */
  CUCORE_TUNE_MATCH_NEAREST_SIZE, /**< this key and device, the nearest problem size (by the
                                     product of its numbers) */
  CUCORE_TUNE_MATCH_OTHER_DEVICE, /**< this key on another device (same problem first) */
  CUCORE_TUNE_MATCH_DEFAULT       /**< nothing recorded: use the default configuration */
} cucore_tune_match;

/** The best configuration recorded in the store at `path` (NULL: the default path of `key`)
 * for `key`: the lowest "median_ms" among results with "status":"ok", taken from the exact
 * problem and device, else the nearest problem size on this device, else another device.
 * Writes the configuration's JSON into config (cut to `cap`), its median to *median_ms (may be
 * NULL) and the way it was found to *how.
 * @retval CUCORE_NOT_FOUND nothing recorded for the key (*how is DEFAULT, config "").
 * @retval CUCORE_IO_ERROR the store exists and cannot be read. */
CUCORE_API cucore_status cucore_tune_lookup(const char *path, const char *key, const char *problem,
                                            const char *device, char *config, size_t cap,
                                            double *median_ms, cucore_tune_match *how);
/** Roles of a buffer of cucore_tune_run(). */
typedef enum cucore_tune_role {
  CUCORE_TUNE_IN = 0,   /**< read by the kernel: restored before every checked launch */
  CUCORE_TUNE_OUT = 1,  /**< written by the kernel: zeroed (or poisoned) before, checked after */
  CUCORE_TUNE_INOUT = 2 /**< both: restored before, checked after (an in-place kernel) */
} cucore_tune_role;

/** What a buffer's elements are, for the tolerance compares of cucore_tune_run(). */
typedef enum cucore_tune_elem {
  CUCORE_TUNE_ELEM_INT = 0,     /**< signed integers of 1, 2, 4 or 8 bytes */
  CUCORE_TUNE_ELEM_UINT = 1,    /**< unsigned integers of 1, 2, 4 or 8 bytes */
  CUCORE_TUNE_ELEM_FLOAT = 2,   /**< IEEE binary16, binary32 or binary64 (by the size) */
  CUCORE_TUNE_ELEM_BFLOAT16 = 3 /**< bfloat16 (2 bytes) */
} cucore_tune_elem;

/** A device buffer that cucore_tune_run() makes, fills, restores and checks. */
typedef struct cucore_tune_buffer {
  const char *label;     /**< its name in messages ("2", "out"); NULL: its index */
  cucore_tune_role role; /**< in, out or in-place */
  cucore_tune_elem elem; /**< what its elements are */
  size_t elem_size;      /**< bytes per element: 1, 2, 4 or 8 */
  size_t count;          /**< elements */
  const void *host;      /**< the initial contents (count x elem_size bytes, copied at the
                              call); NULL for outputs (and zeros for inputs) */
} cucore_tune_buffer;

/** Cold-cache modes of cucore_tune_run_options::cold. */
typedef enum cucore_tune_cold {
  CUCORE_TUNE_COLD_FLUSH = 0,  /**< 2 x L2 written before each sample */
  CUCORE_TUNE_COLD_ROTATE = 1, /**< the arguments cycled through copies of every buffer past
                                    2 x L2 (the flush when that would take more than 64
                                    copies; no room for the copies: an error) */
  CUCORE_TUNE_COLD_NONE = 2,   /**< a hot cache: samples back to back */
  CUCORE_TUNE_COLD_AUTO = 3    /**< rotation when at most 64 copies pass 2 x L2 and they take
                                    at most 1/8 of the device's memory, else the flush (the
                                    defaults' choice: the flush costs more GPU time than
                                    many kernels it precedes) */
} cucore_tune_cold;

/** What became of one configuration of cucore_tune_run() (cucore_tune_row::status). */
typedef enum cucore_tune_result {
  CUCORE_TUNE_NOT_MEASURED = 0, /**< not measured (a dry run, or it cannot run) */
  CUCORE_TUNE_OK,               /**< verified and timed */
  CUCORE_TUNE_WRONG_ANSWER,     /**< its outputs were wrong: never timed */
  CUCORE_TUNE_LAUNCH_ERROR,     /**< a launch or its timing failed */
  CUCORE_TUNE_VERIFY_ERROR,     /**< its outputs could not be read or compared */
  CUCORE_TUNE_BIND_ERROR,       /**< its kernel or arguments could not be made */
  CUCORE_TUNE_FAULT,            /**< the kernel faulted: the device was reset */
  CUCORE_TUNE_DEVICE_LOST,      /**< not measured: the device did not come back after a fault */
  CUCORE_TUNE_SKIPPED           /**< outside top_fraction of the model's order */
} cucore_tune_result;

/** The name of a result as the store keeps it ("ok", "wrong-answer", "launch-error",
 * "verify-error", "bind-error", "fault", "device-lost", "skipped"; "" not measured; "?" for
 * an unknown value). Never NULL. */
CUCORE_API const char *cucore_tune_result_name(cucore_tune_result result);

/** One record of a tune store as the store's one reader reads it (the strict JSON reader;
 * cucore_tune_store_get_record(), cucore_tune_store_find_record()): the line's texts and the
 * fields of its result. Strings are the store's, valid until it is closed; a field the
 * record lacks reads as said. */
typedef struct cucore_tune_record {
  const char *key;           /**< the tune's key (64 hexadecimal digits) */
  const char *problem;       /**< the problem size as text ("" none) */
  const char *device;        /**< the device's fingerprint (cucore_tune_fingerprint()) */
  const char *source;        /**< the source's name ("": a record written before cucore kept
                                  it, or none was set: cucore_tune_store_set_names()) */
  const char *kernel;        /**< the kernel's name or template ("" likewise) */
  const char *config;        /**< the configuration: a JSON object's text, as written */
  const char *result;        /**< the result: a JSON object's text, as written */
  cucore_tune_result status; /**< its "status" (a name this version does not know, or none:
                                  CUCORE_TUNE_LAUNCH_ERROR, a failure) */
  double median_ms;          /**< "median_ms" (-1: none) */
  double p20_ms;             /**< "p20_ms" (0: none) */
  double p80_ms;             /**< "p80_ms" (0: none) */
  double rel_stddev;         /**< "rel_stddev" (0: none) */
  size_t samples;            /**< "samples" (0: none) */
  int batch;                 /**< "batch": launches per sample (0: none) */
  int mode;                  /**< "mode": the CUCORE_TUNE_LAUNCH_* it was timed with (0: none) */
  int sm_clock_mhz;          /**< "sm_clock_mhz" (-1: not observed, or none) */
  int throttled;             /**< "throttled": samples discarded (0: none) */
  int has_error;             /**< 1: a wrong answer that records its largest errors */
  double max_abs_err;        /**< "max_abs_err" (0: none) */
  double max_rel_err;        /**< "max_rel_err" (0: none) */
  int registers;             /**< "registers" per thread (0: none) */
  double occupancy;          /**< "occupancy" of the model, 0..1 (0: none) */
  double compile_ms;         /**< "compile_ms": its compile's time (0: none) */
  const char *detail;        /**< "detail" ("" none) */
  int finalist;              /**< 1: re-timed as a finalist ("finalist": true, or a detail that
                                  begins with "finalist" in older records) */
} cucore_tune_record;

/** CONSTRUCTOR: the store at `path` (NULL: the default path of `key`) opened for reading only:
 * nothing is created or appended (cucore_tune_store_append() on it fails with
 * CUCORE_IO_ERROR), a missing file holds no records. What a tune does with a store it cannot
 * append to (a read-only file or folder): it still resumes what is there. `key` may be NULL
 * with a `path`: every record of the file is read (cucore_tune_store_get_record()) and none is
 * the store's own. Close `*out` with cucore_tune_store_close().
 * @retval CUCORE_INVALID_ARGUMENT key is not 64 hexadecimal digits (or NULL without a path),
 *         or the file is not a store (as cucore_tune_store_open() says).
 * @retval CUCORE_IO_ERROR the file exists and cannot be read (named). */
CUCORE_API cucore_status cucore_tune_store_open_read_only(const char *path, const char *key,
                                                          const char *problem, const char *device,
                                                          cucore_tune_store **out);
/** Names written into every record appended from now on: `source` (the source file's name) and
 * `kernel` (the kernel's name or template), so that a store says what it was tuned from
 * (`cucore cache tune list`); NULL or "" leaves the field out. Copied.
 * @retval CUCORE_INVALID_ARGUMENT `store` is not a live store. */
CUCORE_API cucore_status cucore_tune_store_set_names(cucore_tune_store *store, const char *source,
                                                     const char *kernel);
/** How many records the store's file held when it was read (every key, problem and device;
 * cucore_tune_store_get_info() counts the store's own), with those appended or refreshed
 * since. */
CUCORE_API cucore_status cucore_tune_store_get_record_count(const cucore_tune_store *store,
                                                            size_t *count);
/** Record `i` (0..count-1, in the file's order) into `*out`; its strings are the store's.
 * @retval CUCORE_INVALID_ARGUMENT `i` past the records (named with the count). */
CUCORE_API cucore_status cucore_tune_store_get_record(const cucore_tune_store *store, size_t i,
                                                      cucore_tune_record *out);
/** The latest record of configuration `config` (its CUCORE_TUNE_TEXT_JSON text) under the
 * store's key, problem and device into `*out`; *found is 1, or 0 (and `*out` zeroed) when it
 * was never measured there. */
CUCORE_API cucore_status cucore_tune_store_find_record(const cucore_tune_store *store,
                                                       const char *config, cucore_tune_record *out,
                                                       int *found);
/** Appends a record read elsewhere (another store's cucore_tune_store_get_record()) as it is:
 * its own key, problem, device, names, configuration and result. *appended (may be NULL) is 0
 * when the store holds that record already (the same key, problem, device, configuration and
 * result texts): nothing is written. What `cucore cache tune import` merges with.
 * @retval CUCORE_INVALID_ARGUMENT the record's key is not 64 hexadecimal digits, or its config
 *         or result is not one JSON object on one line.
 * @retval CUCORE_IO_ERROR the store is read-only, or the write failed (named). */
CUCORE_API cucore_status cucore_tune_store_append_record(cucore_tune_store *store,
                                                         const cucore_tune_record *record,
                                                         int *appended);
/** Reads the records other processes appended to the file since it was read (lines still
 * being written are left for the next call); *added (may be NULL) receives how many (of any
 * key). Records got before stay valid.
 * @retval CUCORE_IO_ERROR the file cannot be read (named). */
CUCORE_API cucore_status cucore_tune_store_refresh(cucore_tune_store *store, size_t *added);
/** The advisory lock of configuration group `group` (any 64-bit number: a tune passes the
 * compile hash of the configurations that share one compile) between processes on this store:
 * one byte of the file `PATH.lock` beside it, at an offset from `group` and the store's key,
 * problem and device, locked with fcntl(2) (an open file description's lock where the kernel
 * has them, so threads with their own stores exclude each other too). The lock dies with its
 * holder (a kill -9 frees it) and with cucore_tune_store_close(). With `wait` 0 it is taken
 * only when free (*locked 0: another holds it); with 1 the call waits for it (*locked 1).
 * Locking a group held already is a no-op.
 * @retval CUCORE_IO_ERROR `PATH.lock` cannot be made or locked (named: a read-only folder);
 *         the caller may go on without locks. */
CUCORE_API cucore_status cucore_tune_store_lock(cucore_tune_store *store, uint64_t group, int wait,
                                                int *locked);
/** Lets group `group`'s lock go (a no-op when not held). */
CUCORE_API cucore_status cucore_tune_store_unlock(cucore_tune_store *store, uint64_t group);

/** Where a cucore_tune_run() is (cucore_tune_run_options::progress). */
typedef struct cucore_tune_progress {
  size_t done;               /**< configurations finished (measured, stored, failed) */
  size_t total;              /**< configurations to measure (shrinks as the model rejects) */
  double elapsed_s;          /**< since measuring began */
  double eta_s;              /**< an estimate of the time left (0 when done) */
  uint64_t config;           /**< the configuration just finished (its index in the space) */
  cucore_tune_result status; /**< and its result */
  int finished;              /**< 1 on the last call: screening is over (finalists follow) */
  int compiling;             /**< 1: a dry run's compile finished (done and total count
                                  compiles, config is one of the compile's configurations) */
} cucore_tune_progress;

/** One compile that cucore_tune_run_options::compile makes. */
typedef struct cucore_tune_compile_request {
  int slot;            /**< 0..jobs-1: the compile thread; jobs: the calling thread */
  int arch;            /**< the SM architecture (90 for sm_90) */
  const char *kernel;  /**< the kernel's name expression ("gemm<64, 32>") */
  const char *options; /**< the configuration's compile options, one per line (-DNAME=V) */
  double timeout_s;    /**< stop the compile after this (0: no limit) */
} cucore_tune_compile_request;

/** What one compile gave (filled by the compile callback or cucore_tune_compile()). */
typedef struct cucore_tune_compile_result {
  int ok;             /**< 1: compiled; cubin and symbol set */
  const void *cubin;  /**< the cubin; owned by the compiler, valid until its next call with
                           the same slot (or the end of the run) */
  size_t cubin_size;  /**< its bytes */
  const char *symbol; /**< the kernel's lowered name in the cubin (any length); owned like the
                           cubin */
  double ms;          /**< how long the compile took */
  int cache_hit;      /**< 1: from the compile cache */
  const char *error;  /**< ok 0: why, one line ("compile error: ...", "compile timeout: ...");
                           owned like the cubin */
  const char *log;    /**< the compiler's whole log (warnings when it compiled), or NULL */
  int timed_out;      /**< 1: the compile was stopped at, or ran past, the timeout (a time-out
                           says nothing of the configuration: it is never kept as its result) */
  int owns_texts;     /**< 1: error and log were allocated by cucore_tune_compile() and are
                           freed by cucore_tune_compile_result_release(); a callback sets 0 */
} cucore_tune_compile_result;

/** Frees what cucore_tune_compile() allocated in `result` (its error and log texts) and sets
 * them to NULL; a no-op for a result a callback filled (owns_texts 0). */
CUCORE_API cucore_status cucore_tune_compile_result_release(cucore_tune_compile_result *result);

/** The compile of one configuration as cucore_tune_run() makes it by default: `source` (named
 * `name` in messages) compiled with `base` (may be NULL), the arch and the request's option
 * lines, to a cubin through the compile cache (CUCORE_OPT_* of `base` apply). A failed compile
 * is data: out->ok 0 and out->error its first error line (the call still returns CUCORE_OK);
 * out->log is the compiler's log either way. out->cubin and out->symbol point into `*obj` (set
 * when ok; destroy it with cucore_object_destroy()); out->error and out->log are freed by
 * cucore_tune_compile_result_release(). The timeout cannot stop a compile in this process: one
 * that ran past it is recorded as a compile timeout. Thread-safe.
 * @retval CUCORE_INVALID_ARGUMENT a NULL pointer, or an option line the parser refuses. */
CUCORE_API cucore_status cucore_tune_compile(const char *source, size_t size, const char *name,
                                             const cucore_options *base,
                                             const cucore_tune_compile_request *request,
                                             cucore_tune_compile_result *out, cucore_object **obj);

/** The callbacks and knobs of cucore_tune_run(). Start from CUCORE_TUNE_RUN_DEFAULTS. */
typedef struct cucore_tune_run_options {
  int device;               /**< the device ordinal that measures (and whose arch compiles) */
  int dry_run;              /**< 1: compile and judge only, no GPU (arch below, or the device's
                             when there is one; without an arch nothing compiles) */
  int arch;                 /**< the SM architecture; 0: the device's */
  int sm_count;             /**< SMs for the model's waves; 0: the device's */
  int jobs;                 /**< compile threads; 0: cores - 1, at least 1 (at most 256) */
  double compile_timeout_s; /**< a compile past this is stopped / recorded (0: no limit) */
  const char *store_path;   /**< the result store; NULL: the compile cache's tune/KEY.jsonl */
  int fresh;                /**< 1: measure everything again (results still appended) */
  double max_noise;         /**< sample until rel_stddev <= this (0: 0.02) */
  int launch_mode;          /**< CUCORE_TUNE_LAUNCH_* */
  cucore_tune_cold cold;    /**< how samples find the cache */
  int finalists;            /**< the best N (and ties) re-timed interleaved (0: none) */
  int model_first;          /**< 1: compile all, then measure by the model's score */
  double top_fraction;      /**< 0..1: measure only the best-scored fraction (0: all) */
  double min_occupancy;     /**< the model rejects below this (0..1; 0: off) */
  int no_spills;            /**< 1: the model rejects local memory */
  int poison;               /**< 1: outputs filled with 0xff bytes before a check, not 0 */
  double rtol;              /**< relative tolerance of the checks; < 0: 1e-5 */
  double atol;              /**< absolute tolerance; < 0: 1e-8 (integers compare exactly
                                   when neither is given) */
  const char *identity;     /**< text naming what the buffers and checks mean beyond their
                                   contents (the store's key includes it); NULL: "" */
  const char *source_name;  /**< the source's name in compile messages; NULL: "tune.cu" */
  void *user;               /**< passed to every callback */
  /** Binds one configuration's arguments: `ptrs` are the buffers' device pointers (in the
   * order given; called again with the copies' pointers for rotated sets, and after a device
   * reset). Required when there are buffers or without a dry run. Returns CUCORE_OK or a
   * failure (recorded as the configuration's bind-error with cucore_last_error()). */
  cucore_status (*bind)(void *user, cucore_object *obj, const char *symbol,
                        const cucore_devptr *ptrs, cucore_args *args);
  /** Optional: checks a configuration's results instead of the comparison with the first
   * configuration that ran. `host[i]` holds buffer i after the launch (inputs as given).
   * Returns 0 right, 1 wrong (*detail: a malloc'd text saying why, which the tune frees; *max_abs
   * and *max_rel the largest errors), -1 when it could not check (*detail may say why). */
  int (*check)(void *user, const void *const *host, char **detail, double *max_abs,
               double *max_rel);
  /** Optional: after each measured configuration (and each compile of a dry run), on the
   * calling thread. */
  void (*progress)(void *user, const cucore_tune_progress *progress);
  /** Optional: compiles one configuration (called from `jobs` threads at once, each with its
   * own slot). Returns 0 compiled, -1 not (out->error says why). Called once more per thread
   * with request->kernel NULL when its slot is done (let go of what it holds; `out` unused).
   * NULL: cucore_tune_compile() in library threads. */
  int (*compile)(void *user, const cucore_tune_compile_request *request,
                 cucore_tune_compile_result *out);
  /** Optional: a note worth telling (no NVML, rotation not possible, a device reset). */
  void (*note)(void *user, const char *text);
  int nvrtc_minimal; /**< 1: the first configuration that compiles is compiled again with
                          NVRTC's -minimal, and when both cubins are the same bytes every
                          other compile uses it (~20-30 % less compile time on a small
                          kernel; a kernel that needs the runtime's types compiles without) */
} cucore_tune_run_options;

/** Defaults: device 0, measured, the device's arch, 5 finalists, noise 2 %, the automatic cold
 * cache (rotation, else the flush), the automatic launch mode, default tolerances, no
 * callbacks. */
#define CUCORE_TUNE_RUN_DEFAULTS                                                                  \
  {                                                                                               \
    0, 0, 0, 0, 0, 0.0, NULL, 0, 0.02, CUCORE_TUNE_LAUNCH_AUTO, CUCORE_TUNE_COLD_AUTO, 5, 0, 0.0, \
        0.0, 0, 0, -1.0, -1.0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0                  \
  }

/** The report of cucore_tune_run(): destroy with cucore_tune_report_destroy(). Read by one
 * thread at a time. */
typedef struct cucore_tune_report cucore_tune_report;

/** One configuration past the restrictions, as cucore_tune_run() left it. */
typedef struct cucore_tune_row {
  cucore_tune_config config; /**< the configuration, its launch and verdict */
  cucore_tune_model model;   /**< the occupancy model's numbers (compiled ones) */
  int compiled;              /**< 1: the model ran on its cubin */
  int registers;             /**< per thread */
  int static_shared;         /**< bytes per block */
  int local_bytes;           /**< per thread */
  double compile_ms;         /**< its compile's time */
  int cache_hit;             /**< 1: its compile came from the cache */
  const char *error;         /**< its compile's failure, its first error line ("": none); the
                                  report's */
  int compile_timed_out;     /**< 1: that failure is a compile time-out */
  cucore_tune_result status; /**< what the measuring made of it */
  const char *detail;        /**< why (a mismatch, an error, "from the store"; "": nothing to
                                  say); the report's */
  int resumed;               /**< 1: the result came from the store */
  cucore_tune_stats stats;   /**< its times (a finalist's: of its round medians) */
  int batch;                 /**< launches per sample */
  int mode;                  /**< the CUCORE_TUNE_LAUNCH_* it was timed with */
  int sm_clock_mhz;          /**< the median SM clock of its samples; -1 not observed */
  int throttled;             /**< samples discarded: the clocks were held down */
  int has_error;             /**< 1: a mismatch, with the largest errors below */
  double max_abs_err;        /**< the largest absolute error */
  double max_rel_err;        /**< the largest relative error */
  int finalist;              /**< 1: re-timed interleaved */
} cucore_tune_row;

/** What a cucore_tune_run() made of its store (cucore_tune_summary::store_use). */
typedef enum cucore_tune_store_use {
  CUCORE_TUNE_STORE_UNUSED = 0, /**< no store: a dry run */
  CUCORE_TUNE_STORE_KEPT,       /**< read (results resumed) and every result appended */
  CUCORE_TUNE_STORE_READ_ONLY,  /**< read (results resumed), but it could not be appended to
                                       (a read-only file or folder): this run's results were
                                       not kept */
  CUCORE_TUNE_STORE_UNREADABLE  /**< it could not even be read: everything was measured and
                                       nothing kept */
} cucore_tune_store_use;

/** Everything a report holds besides its rows. */
typedef struct cucore_tune_summary {
  cucore_tune_counts counts; /**< raw -> restrictions -> valid launches -> distinct compiles */
  cucore_arch_limits limits; /**< the arch compiled for (arch 0: none, nothing compiled) */
  int jobs;                  /**< compile threads */
  size_t rows;               /**< configurations past the restrictions */
  size_t compiles;           /**< compiles made (not the ones all from the store) */
  size_t compile_failures;   /**< of them, failed */
  size_t cache_hits;         /**< of them, from the compile cache */
  int nvrtc_minimal;         /**< 1: compiles after the first used NVRTC's -minimal (asked
                                  for by cucore_tune_run_options::nvrtc_minimal, and the first
                                  configuration's cubin came out byte-identical with and
                                  without it); 0: none did */
  size_t model_rejected;     /**< configurations the model rejected */
  size_t measured;           /**< verified and timed in this run */
  size_t resumed;            /**< taken from the store */
  size_t wrong;              /**< wrong answers */
  size_t failed;             /**< launch, verify, bind errors, faults, device lost */
  size_t skipped;            /**< outside top_fraction */
  size_t faults;             /**< rows that faulted */
  unsigned resets;           /**< device resets after faults */
  int lost;                  /**< 1: the device did not come back after a reset */
  int have_best;             /**< 1: a configuration ran and verified */
  size_t best;               /**< the row that won (have_best) */
  size_t ties;               /**< rows that tie with it within noise */
  cucore_tune_cold cold;     /**< how samples were kept cold (AUTO resolved; ROTATE when
                                   copies were made) */
  double compile_wall_ms;    /**< from the first compile's start to the last one's end */
  double setup_ms;           /**< before measuring: the device, buffers, clock probe, store */
  double gpu_ms;             /**< timing on the GPU */
  double verify_ms;          /**< resets, checked launches, verification */
  double load_ms;            /**< kernels taken from their code and arguments bound */
  double record_ms;          /**< results appended to the store */
  double wait_ms;            /**< the GPU thread waiting for compiles after the first */
  size_t extra_samples;      /**< samples taken (counted in gpu_ms) while the GPU thread would
                                  otherwise have waited for a compile */
  double first_ready_ms;     /**< measuring: from its start to the first compile ready */
  double measure_wall_ms;    /**< measuring: from its start to the last configuration done
                                   (the finalists' re-timing included); GPU busy once code is
                                   ready = (gpu_ms + verify_ms) / (measure_wall_ms -
                                   first_ready_ms) */
  double model_agreement;    /**< Spearman's rank correlation of the model's score and the
                                   measured median (1: as measured); NaN under 3 rows */
  size_t model_agreement_n;  /**< the verified, compiled rows it is over */
  const char *store_path;    /**< the store ("" in a dry run); the report's */
  size_t store_records;      /**< records of this tune in it */
  const char *key;           /**< the tune's key (64 hex digits; "" in a dry run) */
  double final_ms;           /**< the finalists' interleaved re-timing, at the end (part of
                                  measure_wall_ms; its timing is in gpu_ms too) */
  size_t finalists;          /**< configurations re-timed as finalists (0: none, or none
                                  could be after a fault) */
  size_t compile_timeouts;   /**< of the compile failures, time-outs */
  size_t distinct_cubins;    /**< distinct cubins among the compiles that succeeded: fewer than
                                  those compiles means some values change nothing in the code */
  size_t warnings;           /**< distinct compiler warnings (cucore_tune_report_get_warning) */
  size_t inert_params;       /**< parameters whose values all compile to the same cubins
                                  (cucore_tune_report_get_inert_param) */
  int verified;              /**< 1: results were checked (a check callback, or an output or
                                  in-place buffer compared with the first configuration's); 0:
                                  nothing was verified, the rows are only timed */
  cucore_tune_store_use store_use; /**< what became of the store: whether this run's results
                                        were kept (the note callback said why not) */
} cucore_tune_summary;

/** Runs a tune: every configuration of `space` past the restrictions checked against the
 * arch's limits (the space's limits are set), each distinct compile made (in `jobs` threads,
 * or by options->compile) with `compile_options` (may be NULL; copied) and judged by the
 * occupancy model; then, unless a dry run, on the device: `buffers` (copied) made once,
 * each runnable configuration taken from the store when measured before, else reset,
 * launched once, verified (options->check, else against the first that ran) and timed,
 * its result appended to the store; kernel faults reset the device and the tune goes on; the
 * finalists re-timed interleaved. Failures of configurations are data in `*out` (destroy it
 * with cucore_tune_report_destroy()). Callbacks run on the calling thread, but `compile`,
 * which runs in the compile threads. Nobody else may use `space` during the call.
 * @retval CUCORE_INVALID_ARGUMENT a NULL pointer, a buffer or option out of range (named),
 *         buffers without a bind callback, a measured run without a kernel source.
 * @retval CUCORE_NO_DEVICE a measured run without a GPU.
 * @retval CUCORE_IO_ERROR the store cannot be opened. */
CUCORE_API cucore_status cucore_tune_run(cucore_tune_space *space,
                                         const cucore_options *compile_options,
                                         const cucore_tune_buffer *buffers, size_t nbuffers,
                                         const cucore_tune_run_options *options,
                                         cucore_tune_report **out);
/** Frees a report; NULL is a no-op.
 * @retval CUCORE_MISUSE `report` was destroyed already. */
CUCORE_API cucore_status cucore_tune_report_destroy(cucore_tune_report *report);
/** Everything but the rows into `*out`; its strings stay the report's.
 * @retval CUCORE_INVALID_ARGUMENT `report` or `out` NULL. */
CUCORE_API cucore_status cucore_tune_report_get_summary(const cucore_tune_report *report,
                                                        cucore_tune_summary *out);
/** Row `i` (0..summary.rows-1, in configuration order) into `*out`.
 * @retval CUCORE_INVALID_ARGUMENT NULL, or `i` past the rows (named with the count). */
CUCORE_API cucore_status cucore_tune_report_get_row(const cucore_tune_report *report, size_t i,
                                                    cucore_tune_row *out);
/** One distinct warning of the compiler in a cucore_tune_run() (each once, however many
 * compiles gave it). Strings are the report's. */
typedef struct cucore_tune_warning {
  const char *text;      /**< the warning's first line, as the compiler wrote it */
  size_t compiles;       /**< how many compiles gave it */
  uint64_t first_config; /**< a configuration (index in the space) whose compile gave it */
} cucore_tune_warning;

/** Warning `i` (0..summary.warnings-1) into `*out`.
 * @retval CUCORE_INVALID_ARGUMENT NULL, or `i` past the warnings (named with the count). */
CUCORE_API cucore_status cucore_tune_report_get_warning(const cucore_tune_report *report, size_t i,
                                                        cucore_tune_warning *out);
/** The `i`th (0..summary.inert_params-1) parameter whose values change nothing in the code:
 * every pair of compiles that differ only in it gave byte-identical cubins (a parameter the
 * source defines itself with `\#define`, or one the kernel never reads). `*param` is its
 * index in the space.
 * @retval CUCORE_INVALID_ARGUMENT NULL, or `i` out of range. */
CUCORE_API cucore_status cucore_tune_report_get_inert_param(const cucore_tune_report *report,
                                                            size_t i, size_t *param);
/** The rows that compiled and can run, best model score first (a tie: the lower configuration
 * index): the order --strategy model-first measures in and a dry run ranks by. order[0..*n)
 * receives row indices (for cucore_tune_report_get_row); `order` is the caller's and holds at
 * least the summary's `rows` entries. Thread-safe for different reports.
 * @retval CUCORE_INVALID_ARGUMENT `report` is not a live report, `order` or `n` is NULL. */
CUCORE_API cucore_status cucore_tune_report_get_model_order(const cucore_tune_report *report,
                                                            size_t *order, size_t *n);
/** @} */
/* ==== END SECTION: autotuning ==== */

#ifdef __cplusplus
}
#endif
#endif /* CUCORE_H */
