/**
 * @file
 * @brief Binary inspection: cubin, PTX and fatbin read offline, without the driver or a GPU.
 *
 * The offline reader behind `cucore inspect`: the kernels of a binary, their parameters,
 * resources and globals, and a fatbin's entries. It follows kernels.h because a kernel's
 * resources are given as the host occupancy model's cucore_kernel_resources.
 *
 * A part of cucore's public header: a program includes `<cucore.h>`, which includes every
 * part in the order of the data path; this part also compiles alone.
 */
#ifndef CUCORE_PART_BINARY_H
#define CUCORE_PART_BINARY_H

#include "base.h"
#include "code.h"
#include "kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

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

#ifdef __cplusplus
}
#endif
#endif /* CUCORE_PART_BINARY_H */
