/**
 * @file
 * @brief Base: export and version macros, status codes, last error, files, comparisons, phases.
 *
 * What every other part uses: the export macro CUCORE_API and the version, the status codes
 * (the one table of codes, names and texts) and the calling thread's last error; and the
 * host-only helpers the library and the command share: reading a file, comparing two
 * buffers element by element, the timings of a process's one-time phases.
 *
 * A part of cucore's public header: a program includes `<cucore.h>`, which includes every
 * part in the order of the data path; this part also compiles alone.
 */
#ifndef CUCORE_PART_BASE_H
#define CUCORE_PART_BASE_H

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

/* ==== SECTION: phase timings: where a process's startup and first result went ==== */
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

#ifdef __cplusplus
}
#endif
#endif /* CUCORE_PART_BASE_H */
