/*
 * cucore.h -- the one public header of cucore.
 *
 * cucore makes CUDA kernels easy and safe to use from C: compile CUDA C++, PTX or NVVM IR at
 * run time, load the code, inspect kernels, compute occupancy, and launch with arguments that
 * are checked against the kernel before the GPU sees them.
 *
 * Conventions (they hold for every declaration below):
 *   - Every function returns a cucore_status. CUCORE_OK (0) is success. On failure a message
 *     naming the call, the object and the limit is kept for the calling thread:
 *     cucore_last_error(). The first error of a failing call is the one kept.
 *   - A status carries the cucore code in its low 8 bits; when the failure came from the driver,
 *     NVRTC, nvJitLink, libNVVM or the C library, the original code is kept in the high bits
 *     (see CUCORE_CODE, cucore_status_source, cucore_status_native).
 *   - Handles are opaque. Constructors take an out-parameter that is set to NULL on failure.
 *     Destroying NULL is a no-op. Inputs are copied unless a declaration says otherwise.
 *   - Nothing is linked against the CUDA driver or toolkit: they are loaded at run time, and a
 *     missing piece is a status with a message, never an abort.
 */
#ifndef CUCORE_H
#define CUCORE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define CUCORE_API
#elif defined(__GNUC__)
#define CUCORE_API __attribute__((visibility("default")))
#else
#define CUCORE_API
#endif

#define CUCORE_VERSION_MAJOR 0
#define CUCORE_VERSION_MINOR 1
#define CUCORE_VERSION_PATCH 0
#define CUCORE_VERSION_STRING "0.1.0"

/* ------------------------------------------------------------------------------------------ */
/* Status codes                                                                               */
/* ------------------------------------------------------------------------------------------ */

/* The one table of status codes: XX(NAME, value, "text"). */
#define CUCORE_STATUS_MAP(XX)                                                                   \
  XX(OK, 0, "success")                                                                          \
  XX(INVALID_ARGUMENT, 1, "invalid argument")                                                   \
  XX(HOST_OUT_OF_MEMORY, 2, "host memory allocation failed")                                   \
  XX(DRIVER_NOT_FOUND, 3, "CUDA driver (libcuda.so.1) not found")                               \
  XX(DRIVER_STUB, 4, "the CUDA toolkit's stub libcuda was loaded instead of a driver")         \
  XX(DRIVER_TOO_OLD, 5, "CUDA driver too old for the requested function")                     \
  XX(NO_DEVICE, 6, "no CUDA-capable device")                                                    \
  XX(INVALID_DEVICE, 7, "device ordinal out of range")                                          \
  XX(DRIVER_ERROR, 8, "CUDA driver call failed")                                                \
  XX(NVRTC_NOT_FOUND, 9, "NVRTC not found")                                                     \
  XX(NVJITLINK_NOT_FOUND, 10, "nvJitLink not found")                                            \
  XX(NVVM_NOT_FOUND, 11, "libNVVM not found")                                                   \
  XX(TOOLKIT_TOO_OLD, 12, "toolkit library too old")                                            \
  XX(NVRTC_ERROR, 13, "NVRTC call failed")                                                      \
  XX(NVJITLINK_ERROR, 14, "nvJitLink call failed")                                              \
  XX(NVVM_ERROR, 15, "libNVVM call failed")                                                     \
  XX(COMPILE_ERROR, 16, "compilation failed")                                                   \
  XX(LINK_ERROR, 17, "link failed")                                                             \
  XX(INVALID_BINARY, 18, "malformed or unsupported binary")                                     \
  XX(NOT_FOUND, 19, "not found")                                                                \
  XX(NOT_SUPPORTED, 20, "not supported")                                                        \
  XX(DEVICE_OUT_OF_MEMORY, 21, "device memory allocation failed")                               \
  XX(ARG_COUNT, 22, "wrong number of kernel arguments")                                         \
  XX(ARG_SIZE, 23, "kernel argument of the wrong size")                                         \
  XX(ARG_TYPE, 24, "kernel argument of the wrong type")                                         \
  XX(ARG_ALIGNMENT, 25, "kernel argument misaligned")                                           \
  XX(ARG_NULL, 26, "NULL where a kernel argument value is needed")                              \
  XX(ARG_UNSET, 27, "kernel argument not set")                                                  \
  XX(LAUNCH_CONFIG, 28, "invalid launch configuration")                                         \
  XX(LAUNCH_OUT_OF_RESOURCES, 29, "launch needs more resources than the device has")           \
  XX(KERNEL_FAULT, 30, "a kernel faulted; the context is unusable")                             \
  XX(NOT_READY, 31, "work not yet complete")                                                    \
  XX(IO_ERROR, 32, "file input/output failed")                                                  \
  XX(VERSION_MISMATCH, 33, "incompatible versions")                                             \
  XX(PARSE_ERROR, 34, "could not parse input")                                                  \
  XX(INTERNAL, 35, "internal error in cucore")

/* A status: the cucore code in bits 0-7, the source in bits 8-11, the native code above. */
typedef int32_t cucore_status;

enum cucore_code {
#define CUCORE_XX_ENUM(name, value, text) CUCORE_##name = value,
  CUCORE_STATUS_MAP(CUCORE_XX_ENUM)
#undef CUCORE_XX_ENUM
  CUCORE_CODE_COUNT
};

/* Where the native code kept in a status came from. */
typedef enum cucore_source {
  CUCORE_SOURCE_NONE = 0,
  CUCORE_SOURCE_DRIVER = 1,    /* a CUresult */
  CUCORE_SOURCE_NVRTC = 2,     /* an nvrtcResult */
  CUCORE_SOURCE_NVJITLINK = 3, /* an nvJitLinkResult */
  CUCORE_SOURCE_NVVM = 4,      /* an nvvmResult */
  CUCORE_SOURCE_ERRNO = 5      /* an errno value */
} cucore_source;

/* The cucore code of a status (what to compare against CUCORE_* names). */
#define CUCORE_CODE(status) ((int)((uint32_t)(status) & 0xffu))

/* Name of a status's code, e.g. "CUCORE_ARG_COUNT". Never NULL. */
CUCORE_API const char *cucore_status_name(cucore_status status);
/* One-line English text of a status's code. Never NULL. */
CUCORE_API const char *cucore_status_text(cucore_status status);
/* Which library the native code of a status came from (CUCORE_SOURCE_NONE when none). */
CUCORE_API cucore_source cucore_status_source(cucore_status status);
/* The native code kept in a status (CUresult, nvrtcResult, ...), 0 when none. */
CUCORE_API int cucore_status_native(cucore_status status);
/* The detailed message of the last failure on this thread ("" when none). Valid until the
 * thread's next cucore call. */
CUCORE_API const char *cucore_last_error(void);
/* The status of the last failure on this thread (CUCORE_OK when none). */
CUCORE_API cucore_status cucore_last_status(void);

/* ------------------------------------------------------------------------------------------ */
/* Versions and loaded libraries                                                              */
/* ------------------------------------------------------------------------------------------ */

/* One run-time-loaded library. Strings are owned by cucore and live until process exit. */
typedef struct cucore_library_info {
  int loaded;              /* 1 when found and usable */
  int version;             /* e.g. 13000 for 13.0; 0 when unknown */
  const char *path;        /* where it was loaded from, or NULL */
  const char *error;       /* why it is not usable, or NULL */
} cucore_library_info;

typedef struct cucore_versions_info {
  const char *cucore;      /* CUCORE_VERSION_STRING */
  cucore_library_info driver;    /* libcuda.so.1; version is cuDriverGetVersion's */
  cucore_library_info nvrtc;
  cucore_library_info nvjitlink;
  cucore_library_info nvvm;      /* version = major*1000 + minor*10 of the NVVM IR version */
  int toolkit_headers;     /* CUDA_VERSION of the headers cucore was built with */
} cucore_versions_info;

/* Loads (once) whatever of the driver and toolkit can be found, and describes it.
 * Never fails for a missing library: each entry says why it is missing. */
CUCORE_API cucore_status cucore_versions(cucore_versions_info *out);

/* ------------------------------------------------------------------------------------------ */
/* Devices                                                                                    */
/* ------------------------------------------------------------------------------------------ */

/* Number of CUDA devices. Fails with CUCORE_DRIVER_NOT_FOUND, CUCORE_DRIVER_STUB, ... when the
 * driver is unusable; a usable driver with no GPU gives *count = 0 and CUCORE_OK. */
CUCORE_API cucore_status cucore_device_count(int *count);

/* Properties of one device, read without creating a context. */
typedef struct cucore_device_props {
  int ordinal;
  char name[256];
  char uuid[37];                 /* "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" */
  char pci_bus_id[32];           /* "0000:00:00.0" */
  int cc_major, cc_minor;        /* compute capability */
  int arch;                      /* cc_major*10 + cc_minor, e.g. 90 */
  int sm_count;
  size_t total_memory;           /* bytes */
  int clock_khz, memory_clock_khz, memory_bus_width_bits;
  int l2_cache_bytes;
  int warp_size;
  int max_threads_per_block;
  int max_block_dim[3];
  int max_grid_dim[3];
  int max_threads_per_sm;
  int max_blocks_per_sm;
  int regs_per_block, regs_per_sm;
  int shared_per_block;          /* default per-block limit (48 KiB) */
  int shared_per_block_optin;    /* opt-in maximum per block */
  int shared_per_sm;
  int reserved_shared_per_block; /* the driver's per-block reservation */
  int const_memory_bytes;
  int cooperative_launch;        /* 1 if supported */
  int cluster_launch;            /* 1 if supported */
  int managed_memory;
  int unified_addressing;
  int async_engines;
  int ecc_enabled;
  int compute_mode;
  int integrated;
} cucore_device_props;

/* Fills *out for device `ordinal` (0-based). CUCORE_INVALID_DEVICE names the range. */
CUCORE_API cucore_status cucore_device_props_get(int ordinal, cucore_device_props *out);

/* A device in use: holds the device's primary context, so users never handle contexts. */
typedef struct cucore_device cucore_device;

/* CONSTRUCTOR: retains the primary context of device `ordinal`. */
CUCORE_API cucore_status cucore_device_open(int ordinal, cucore_device **out);
/* DESTRUCTOR: releases the primary context. NULL is a no-op. Objects created on the device
 * (streams, events, memory) must be destroyed first. */
CUCORE_API cucore_status cucore_device_close(cucore_device *dev);
/* Device ordinal of an open device. */
CUCORE_API cucore_status cucore_device_ordinal(const cucore_device *dev, int *ordinal);
/* Waits until all work on the device is done (cuCtxSynchronize). A faulted kernel is
 * reported as CUCORE_KERNEL_FAULT. */
CUCORE_API cucore_status cucore_device_synchronize(cucore_device *dev);
/* Free and total device memory in bytes. */
CUCORE_API cucore_status cucore_device_mem_info(cucore_device *dev, size_t *free_bytes,
                                                size_t *total_bytes);
/* The range of stream priorities: `least` (numerically largest, usually 0) to `greatest`
 * (numerically smallest, e.g. -5). */
CUCORE_API cucore_status cucore_device_stream_priorities(cucore_device *dev, int *least,
                                                         int *greatest);
/* The native CUcontext (primary context) and CUdevice, for interoperation. */
CUCORE_API cucore_status cucore_device_native(cucore_device *dev, void **cucontext,
                                              int *cudevice);

/* ------------------------------------------------------------------------------------------ */
/* Streams and events                                                                         */
/* ------------------------------------------------------------------------------------------ */

typedef struct cucore_stream cucore_stream;
typedef struct cucore_event cucore_event;

enum {
  CUCORE_STREAM_DEFAULT = 0,
  CUCORE_STREAM_NON_BLOCKING = 1 /* does not synchronise with the legacy default stream */
};

/* CONSTRUCTOR: a new stream on `dev`. `priority` 0 is the default; lower numbers are higher
 * priority; a value outside the device's range is CUCORE_INVALID_ARGUMENT naming the range. */
CUCORE_API cucore_status cucore_stream_create(cucore_device *dev, unsigned flags, int priority,
                                              cucore_stream **out);
/* The device's legacy default stream (stream 0), as a handle owned by `dev`; do not destroy. */
CUCORE_API cucore_status cucore_stream_default(cucore_device *dev, cucore_stream **out);
/* DESTRUCTOR. Pending work completes first (the driver's rule). NULL is a no-op. */
CUCORE_API cucore_status cucore_stream_destroy(cucore_stream *s);
/* Blocks until all work queued on the stream is done. */
CUCORE_API cucore_status cucore_stream_synchronize(cucore_stream *s);
/* CUCORE_OK when all work is done, CUCORE_NOT_READY when some is pending. */
CUCORE_API cucore_status cucore_stream_query(cucore_stream *s);
/* Makes future work on `s` wait for `ev`. */
CUCORE_API cucore_status cucore_stream_wait_event(cucore_stream *s, cucore_event *ev);
/* The stream's priority. */
CUCORE_API cucore_status cucore_stream_priority(cucore_stream *s, int *priority);
/* The device a stream belongs to. */
CUCORE_API cucore_status cucore_stream_device(cucore_stream *s, cucore_device **dev);
/* The native CUstream. */
CUCORE_API cucore_status cucore_stream_native(cucore_stream *s, void **custream);

enum {
  CUCORE_EVENT_DEFAULT = 0,       /* records timing */
  CUCORE_EVENT_BLOCKING_SYNC = 1, /* synchronize sleeps instead of spinning */
  CUCORE_EVENT_DISABLE_TIMING = 2
};

/* CONSTRUCTOR: a new event on `dev`. */
CUCORE_API cucore_status cucore_event_create(cucore_device *dev, unsigned flags,
                                             cucore_event **out);
/* DESTRUCTOR. NULL is a no-op. */
CUCORE_API cucore_status cucore_event_destroy(cucore_event *ev);
/* Records the event on a stream. */
CUCORE_API cucore_status cucore_event_record(cucore_event *ev, cucore_stream *s);
/* Blocks until the event has completed. */
CUCORE_API cucore_status cucore_event_synchronize(cucore_event *ev);
/* CUCORE_OK when complete, CUCORE_NOT_READY otherwise. */
CUCORE_API cucore_status cucore_event_query(cucore_event *ev);
/* Milliseconds between two recorded, completed events. */
CUCORE_API cucore_status cucore_event_elapsed_ms(cucore_event *start, cucore_event *end,
                                                 float *ms);

/* ------------------------------------------------------------------------------------------ */
/* Memory                                                                                     */
/* ------------------------------------------------------------------------------------------ */

/* A device address (CUdeviceptr). */
typedef uint64_t cucore_devptr;

/* Allocates `bytes` (> 0) of device memory. CUCORE_DEVICE_OUT_OF_MEMORY names the size and
 * what was free. *out is 0 on failure. */
CUCORE_API cucore_status cucore_mem_alloc(cucore_device *dev, size_t bytes, cucore_devptr *out);
/* Frees device memory from cucore_mem_alloc. 0 is a no-op. */
CUCORE_API cucore_status cucore_mem_free(cucore_device *dev, cucore_devptr ptr);
/* Allocates page-locked (pinned) host memory, usable for async copies. */
CUCORE_API cucore_status cucore_host_alloc(cucore_device *dev, size_t bytes, void **out);
/* Frees pinned host memory. NULL is a no-op. */
CUCORE_API cucore_status cucore_host_free(cucore_device *dev, void *ptr);

/* Copies. With a stream (may be NULL for synchronous) the copy is queued on it. */
CUCORE_API cucore_status cucore_memcpy_htod(cucore_device *dev, cucore_devptr dst,
                                            const void *src, size_t bytes, cucore_stream *s);
CUCORE_API cucore_status cucore_memcpy_dtoh(cucore_device *dev, void *dst, cucore_devptr src,
                                            size_t bytes, cucore_stream *s);
CUCORE_API cucore_status cucore_memcpy_dtod(cucore_device *dev, cucore_devptr dst,
                                            cucore_devptr src, size_t bytes, cucore_stream *s);
/* Sets `count` bytes to `value` (stream may be NULL). */
CUCORE_API cucore_status cucore_memset_d8(cucore_device *dev, cucore_devptr dst, uint8_t value,
                                          size_t count, cucore_stream *s);
/* Sets `count` 32-bit words to `value` (dst 4-byte aligned; stream may be NULL). */
CUCORE_API cucore_status cucore_memset_d32(cucore_device *dev, cucore_devptr dst,
                                           uint32_t value, size_t count, cucore_stream *s);

/* ------------------------------------------------------------------------------------------ */
/* Code types and kernel parameter descriptions (shared by Program, ObjectCode, Kernel)        */
/* ------------------------------------------------------------------------------------------ */

/* What a buffer of code is. */
typedef enum cucore_code_type {
  CUCORE_CODE_AUTO = 0,   /* detect from the bytes */
  CUCORE_CODE_CUDA_CPP,   /* CUDA C++ source (NVRTC) */
  CUCORE_CODE_PTX,        /* PTX assembly text */
  CUCORE_CODE_NVVM,       /* NVVM IR, text or bitcode (libNVVM) */
  CUCORE_CODE_CUBIN,      /* an ELF for one SM architecture */
  CUCORE_CODE_FATBIN,     /* a fatbin container (several cubins and/or PTX) */
  CUCORE_CODE_LTOIR,      /* LTO intermediate representation (for nvJitLink) */
  CUCORE_CODE_OBJECT,     /* a host object holding device code (nvcc -rdc -c) */
  CUCORE_CODE_LIBRARY     /* a host static library (.a) holding device code */
} cucore_code_type;

/* "cubin", "ptx", ... for a code type. Never NULL. */
CUCORE_API const char *cucore_code_type_name(cucore_code_type type);

/* What is known of a kernel parameter's type. The layout (offset, size) is always known;
 * the kind when the PTX declaration was seen (code cucore compiled, or PTX it loaded). */
typedef enum cucore_param_kind {
  CUCORE_PARAM_UNKNOWN = 0, /* layout only */
  CUCORE_PARAM_INT,         /* .u8/.s8/.b8 ... .u64/.s64/.b64 scalar (signedness not recorded by PTX) */
  CUCORE_PARAM_FLOAT,       /* .f16 .f32 .f64 */
  CUCORE_PARAM_POINTER,     /* .u64 with the .ptr attribute */
  CUCORE_PARAM_BYTES        /* an aligned byte array: a struct, union or vector by value */
} cucore_param_kind;

/* One kernel parameter as the kernel sees it. */
typedef struct cucore_param_info {
  uint32_t offset;          /* byte offset in the parameter buffer */
  uint32_t size;            /* bytes */
  uint32_t align;           /* alignment in bytes (0 when unknown) */
  cucore_param_kind kind;
} cucore_param_info;

/* ==== SECTION: binary inspection (offline reader) ==== */
/*
 * Reads cubins, fatbins and PTX with no GPU and no driver: which kernels a binary holds,
 * each kernel's parameter layout (offset, size, and the type when PTX declares it), its
 * resources (registers, shared, local and constant memory) and its launch attributes (launch
 * bounds, required block size, cluster dimensions, grid sync). The reader treats its input as
 * hostile: a malformed binary is CUCORE_INVALID_BINARY naming what is wrong and where.
 */

/* Detects what a buffer holds from its bytes alone:
 *   CUCORE_CODE_CUBIN    an ELF for EM_CUDA (190)
 *   CUCORE_CODE_FATBIN   a fatbin container (magic 0xBA55ED50)
 *   CUCORE_CODE_OBJECT   a host ELF object with device code (.nv_fatbin or __nv_relfatbin)
 *   CUCORE_CODE_LIBRARY  a static library ("!<arch>\n"; not inspected further)
 *   CUCORE_CODE_PTX      text whose first directive, after comments, is .version or .target
 *   CUCORE_CODE_LTOIR    LTO-IR (NVRTC -dlto output)
 *   CUCORE_CODE_NVVM     LLVM bitcode (raw or wrapped) or LLVM IR text
 * CUDA C++ source is never guessed. CUCORE_INVALID_BINARY names the first bytes seen. */
CUCORE_API cucore_status cucore_code_type_detect(const void *data, size_t size,
                                                 cucore_code_type *out);

/* An opened binary: the kernels of one cubin or PTX module and, for a fatbin or host
 * object, the list of its entries. Immutable except through cucore_binary_attach_ptx. */
typedef struct cucore_binary cucore_binary;

/* A kernel attribute the code does not record (a PTX module records no resource usage). */
#define CUCORE_UNKNOWN (-1)

/* One kernel. Strings and params live as long as the cucore_binary they came from. */
typedef struct cucore_kernel_info {
  const char *name;              /* symbol name; mangled for C++ kernels */
  const char *demangled;         /* "ns::k(int*, float)"; NULL for extern "C" names, or when
                                    libstdc++'s demangler could not be loaded */
  uint32_t param_count;
  const cucore_param_info *params; /* param_count entries by ordinal; NULL when none. From a
                                    cubin: offset and size, kind UNKNOWN (POINTER where the
                                    cubin marks a pointer: always from sm_100 on, and for PTX
                                    `.ptr` parameters) and align 0, until PTX is attached */
  uint32_t param_bytes;          /* size of the parameter buffer */
  int32_t registers;             /* per thread */
  int32_t static_shared_bytes;   /* the kernel's own __shared__ data, not dynamic memory */
  int32_t reserved_shared_bytes; /* system-reserved shared memory the cubin places before
                                    the kernel's own (1 KiB in linked sm_90+ cubins), else 0 */
  int32_t local_bytes;           /* per-thread stack frame of the kernel (local memory) */
  int32_t stack_bytes;           /* per-thread stack including called functions' frames */
  int32_t const_bytes;           /* constant bank 0 of the kernel: driver area + parameters */
  int32_t user_const_bytes;      /* the module's __constant__ data (constant bank 3) */
  int32_t max_threads_per_block; /* the largest block the kernel can be launched with: 1024,
                                    or less by its declared bounds and by its registers
                                    (65536 per block, 256-register allocation granularity
                                    per warp, warps in groups of 4); CUCORE_UNKNOWN for PTX
                                    without declared bounds */
  uint32_t maxntid[3];           /* __launch_bounds__ / .maxntid; 0 when none declared */
  uint32_t reqntid[3];           /* .reqntid (required block size); 0 when none */
  uint32_t cluster_dims[3];      /* __cluster_dims__ / .reqnctapercluster; 0 when none */
  uint32_t max_blocks_per_cluster; /* 3rd __launch_bounds__ argument / .maxclusterrank */
  int explicit_cluster;          /* 1: must be launched as clusters (.explicitcluster) */
  uint32_t min_blocks_per_sm;    /* .minnctapersm; PTX only (a cubin does not keep it) */
  uint32_t max_registers;        /* register cap (__maxnreg__, or the one ptxas derived from
                                    the launch bounds); 0 when none */
  int32_t barriers;              /* named barriers used, barrier 0 included */
  int uses_grid_sync;            /* 1: syncs the whole grid; needs a cooperative launch */
  int32_t param_base;            /* where parameters start in constant bank 0 (0: none) */
} cucore_kernel_info;

/* One entry of a fatbin. */
typedef struct cucore_fatbin_entry {
  cucore_code_type type;     /* CUBIN, PTX or LTOIR; AUTO for a kind cucore does not know */
  uint32_t raw_kind;         /* the container's kind field: 1 PTX, 2 ELF, 8 LTO-IR */
  int arch;                  /* 90 for sm_90 / compute_90 / lto_90 */
  char arch_suffix;          /* 'a', 'f' or 0 */
  char arch_name[16];        /* "sm_90a", "compute_90", "lto_90" */
  uint32_t version_major, version_minor; /* ELF format or PTX ISA version, e.g. 9.0 */
  uint64_t offset;           /* of the stored bytes, from the start of the opened buffer */
  uint64_t stored_size;      /* bytes stored in the container (padded, maybe compressed) */
  uint64_t size;             /* bytes once decompressed (what extract gives) */
  const char *compression;   /* "none", "lz4", "zstd", or "unknown" (compressed LTO-IR is
                                stored in a way cucore cannot read); static strings */
  int debug;                 /* compiled with -G */
  uint64_t flags;            /* the container's raw flags */
} cucore_fatbin_entry;

/* What was opened. */
typedef struct cucore_binary_info {
  cucore_code_type type;      /* CUBIN, FATBIN, PTX or OBJECT: the input */
  cucore_code_type code_type; /* CUBIN or PTX: what the kernels were read from */
  int arch;                   /* of the code read: 90 for sm_90a; PTX: its .target */
  char arch_suffix;           /* 'a', 'f' or 0 */
  char arch_name[16];         /* "sm_90a"; "compute_90" for PTX */
  int virtual_arch;           /* cubin: the compute_XX it came from (0 when not recorded) */
  int ptx_version;            /* PTX: ISA version, major*10 + minor */
  int toolkit_version;        /* cubin: CUDA version of ptxas, major*10 + minor (0: unknown) */
  int relocatable;            /* cubin: 1 when it needs linking (-rdc) */
  int debug;                  /* cubin: 1 when compiled with -G */
  uint32_t kernel_count;
  uint32_t fatbin_entry_count; /* 0 unless a fatbin or host object */
  int32_t selected_entry;     /* the fatbin entry the kernels came from; -1 when none */
  int demangler;              /* 1 when C++ names could be demangled */
} cucore_binary_info;

/* CONSTRUCTOR: reads `size` bytes of code (copied). `type` may be CUCORE_CODE_AUTO. `arch`
 * (e.g. 90; 0 = any) picks the entry of a fatbin (exact cubin, else a compatible cubin of
 * the same major version, else PTX the arch can JIT; with 0 the newest cubin, else PTX),
 * checks that a cubin can run on it, and sets the arch PTX parameter offsets are computed
 * for (0: the PTX's .target). A fatbin that also carries PTX lends its parameter kinds to
 * the chosen cubin. PTX offsets follow ptxas's layout for that arch: each parameter starts
 * at the first offset after the previous one whose address in constant bank 0 (param base +
 * offset) is a multiple of its alignment; the base is 0x160 on sm_70-89 (0x1a80 once the
 * parameters pass 4352 bytes), 0x210 on sm_90 and 0x380 on sm_100 and newer, so a 64-byte
 * aligned struct can sit at different offsets on different GPUs. Fails with CUCORE_INVALID_BINARY (malformed, naming what and where),
 * CUCORE_NOT_FOUND (no entry for `arch`), CUCORE_NOT_SUPPORTED (LTO-IR, NVVM, C++ source,
 * static libraries, or a compressed entry whose decompressor is missing). */
CUCORE_API cucore_status cucore_binary_open(const void *data, size_t size,
                                            cucore_code_type type, int arch,
                                            cucore_binary **out);
/* CONSTRUCTOR: the same for a file; CUCORE_IO_ERROR names the path and the system's reason. */
CUCORE_API cucore_status cucore_binary_open_file(const char *path, cucore_code_type type,
                                                 int arch, cucore_binary **out);
/* DESTRUCTOR. NULL is a no-op. Kernel infos taken from it become invalid. */
CUCORE_API cucore_status cucore_binary_destroy(cucore_binary *bin);
/* What was opened (arch, versions, counts). */
CUCORE_API cucore_status cucore_binary_get_info(const cucore_binary *bin,
                                                cucore_binary_info *out);
/* The number of kernels (as cucore_binary_info.kernel_count). */
CUCORE_API cucore_status cucore_binary_kernel_count(const cucore_binary *bin, uint32_t *count);
/* The kernel at `index` (0 .. kernel_count-1, in the binary's order). *out lives as long as
 * `bin`. CUCORE_INVALID_ARGUMENT names the range. */
CUCORE_API cucore_status cucore_binary_kernel(const cucore_binary *bin, uint32_t index,
                                              const cucore_kernel_info **out);
/* The kernel named `name`: its symbol, its demangled name, or its demangled name without the
 * parameter list when only one kernel has it. CUCORE_NOT_FOUND lists the kernels that exist,
 * the nearest names first. */
CUCORE_API cucore_status cucore_binary_find_kernel(const cucore_binary *bin, const char *name,
                                                   const cucore_kernel_info **out);
/* Entry `index` of the fatbin (0 .. fatbin_entry_count-1). */
CUCORE_API cucore_status cucore_binary_fatbin_entry(const cucore_binary *bin, uint32_t index,
                                                    cucore_fatbin_entry *out);
/* The entry cucore_binary_open would pick for `arch` (see there). */
CUCORE_API cucore_status cucore_binary_fatbin_select(const cucore_binary *bin, int arch,
                                                     uint32_t *index);
/* Copies entry `index`, decompressed, into `buf` of `capacity` bytes and sets *size. With
 * buf NULL only *size is set. CUCORE_INVALID_ARGUMENT when capacity is too small (names both
 * sizes); CUCORE_NOT_SUPPORTED when a compressed entry's decompressor is missing. */
CUCORE_API cucore_status cucore_binary_fatbin_extract(const cucore_binary *bin, uint32_t index,
                                                      void *buf, size_t capacity,
                                                      size_t *size);
/* Merges the parameter types of a PTX module (text, `len` bytes, copied) into the kernels of
 * the same name: each matched kernel's params get the PTX kind and alignment (a POINTER
 * already known stays). *matched (may be NULL) counts the kernels matched. Nothing changes and
 * CUCORE_INVALID_ARGUMENT names the kernel and parameter when a matched kernel's count or
 * sizes differ; CUCORE_PARSE_ERROR when the PTX does not parse. */
CUCORE_API cucore_status cucore_binary_attach_ptx(cucore_binary *bin, const char *ptx,
                                                  size_t len, uint32_t *matched);
/* ==== END SECTION: binary inspection ==== */

/* ==== SECTION: occupancy model (host-only) ==== */
/* ==== END SECTION: occupancy model ==== */

#ifdef __cplusplus
}
#endif
#endif /* CUCORE_H */
