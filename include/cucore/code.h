/**
 * @file
 * @brief Code: code types, compile options, Program, Linker, the compile cache, ObjectCode.
 *
 * From source text to loaded code: the code types and kernel parameter descriptions, the
 * compile options, Program (NVRTC, libNVVM, PTX), Linker (nvJitLink), the compile cache,
 * and ObjectCode with its module globals.
 *
 * A part of cucore's public header: a program includes `<cucore.h>`, which includes every
 * part in the order of the data path; this part also compiles alone.
 */
#ifndef CUCORE_PART_CODE_H
#define CUCORE_PART_CODE_H

#include "base.h"
#include "devices.h"
#include "memory.h"

#ifdef __cplusplus
extern "C" {
#endif

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
  /* The options below are refused by a compile or link whose tools have no flag for them
   * (naming the tool), and by a tool older than the version that brought them. */
  CUCORE_OPT_EXTENSIBLE_WHOLE_PROGRAM, /**< bool: extensible whole-program compile (NVRTC -ewp) */
  CUCORE_OPT_DOPT,                     /**< bool: --dopt=on, optimise device code (with debug: line
                                      information only) (NVRTC) */
  CUCORE_OPT_GEN_OPT_LTO,              /**< bool: run the optimiser before writing LTO-IR (NVRTC) */
  CUCORE_OPT_NO_SOURCE_INCLUDE,        /**< bool: no include search beside the source (NVRTC) */
  CUCORE_OPT_BUILTIN_MOVE_FORWARD,     /**< bool, default 1: builtin std::move/forward (NVRTC) */
  CUCORE_OPT_BUILTIN_INITIALIZER_LIST, /**< bool, default 1: builtin std::initializer_list
                                           (NVRTC) */
  CUCORE_OPT_RESTRICT,          /**< bool: every kernel pointer parameter is restrict (NVRTC) */
  CUCORE_OPT_OPTIMIZATION_INFO, /**< string: "inline", remarks in the log (NVRTC) */
  CUCORE_OPT_NO_DISPLAY_ERROR_NUMBER, /**< bool: no diagnostic numbers in the log (NVRTC) */
  CUCORE_OPT_DIAG_ERROR,              /**< list: diagnostic numbers ("177" or "177,550") made
                                      errors (NVRTC) */
  CUCORE_OPT_DIAG_SUPPRESS,           /**< list: diagnostic numbers suppressed (NVRTC) */
  CUCORE_OPT_DIAG_WARN,               /**< list: diagnostic numbers made warnings (NVRTC) */
  CUCORE_OPT_BRIEF_DIAGNOSTICS,       /**< bool: diagnostics without the source line (NVRTC) */
  CUCORE_OPT_TIME,                    /**< string: a CSV file NVRTC appends its phase times to ("-":
                                      the log); such a compile bypasses the compile cache */
  CUCORE_OPT_FDEVICE_SYNTAX_ONLY, /**< bool: stop after the syntax check, no valid code (NVRTC) */
  CUCORE_OPT_MINIMAL,             /**< bool: leave out runtime types and functions (NVRTC 12.4+) */
  CUCORE_OPT_NO_CACHE,            /**< bool: the tool's own internal cache off (NVRTC and
                                      nvJitLink; not cucore's compile cache) */
  CUCORE_OPT_FDEVICE_TIME_TRACE,  /**< string: a time-trace JSON file (NVRTC 12.8+); such a
                                      compile bypasses the compile cache */
  CUCORE_OPT_DEVICE_FLOAT128,     /**< bool: __float128 in device code (NVRTC 12.8+, sm_100+) */
  CUCORE_OPT_FRANDOM_SEED,        /**< string: the seed of generated names (NVRTC 12.8+) */
  CUCORE_OPT_OFAST_COMPILE,       /**< string: "0", "min", "mid" or "max" (NVRTC 12.9+) */
  CUCORE_OPT_JITLINK_VERBOSE,     /**< bool: verbose messages in the info log (nvJitLink) */
  CUCORE_OPT_JITLINK_TIME,        /**< bool: timing in the info log (nvJitLink) */
  CUCORE_OPT_KERNELS_USED,        /**< list: the kernels used; the others may go (nvJitLink) */
  CUCORE_OPT_VARIABLES_USED,      /**< list: the variables used; the others may go (nvJitLink) */
  CUCORE_OPT_OPTIMIZE_UNUSED_VARIABLES, /**< bool: variables device code does not use may go
                                            (nvJitLink) */
  CUCORE_OPT_SPLIT_COMPILE_EXTENDED,    /**< int 0..256: LTO split compile threads (nvJitLink) */
  CUCORE_OPT_PCH,                       /**< bool: automatic precompiled headers (NVRTC 12.8+) */
  CUCORE_OPT_CREATE_PCH,   /**< string: create this PCH file (NVRTC 12.8+); such a compile
                                      bypasses the compile cache */
  CUCORE_OPT_USE_PCH,      /**< string: use this PCH file (NVRTC 12.8+) */
  CUCORE_OPT_PCH_DIR,      /**< string: an existing directory for PCH files (NVRTC 12.8+) */
  CUCORE_OPT_PCH_VERBOSE,  /**< bool, default 1: why a PCH was not used (NVRTC 12.8+) */
  CUCORE_OPT_PCH_MESSAGES, /**< bool, default 1: say when a PCH is made or used (NVRTC
                                      12.8+) */
  CUCORE_OPT_INSTANTIATE_TEMPLATES_IN_PCH, /**< bool, default 1: instantiate templates before
                                               the PCH is written (NVRTC 12.8+) */
  CUCORE_OPT_LIBDEVICE, /**< string: the libdevice bitcode an NVVM IR program links when
                                   it calls `__nv_*` functions (default: $CUCORE_LIBDEVICE, else
                                   the toolkit's nvvm/libdevice/libdevice.10.bc) */
  CUCORE_OPT_COUNT      /**< the number of options */
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
 * takes "--no-NAME" and the values true/false, on/off, 1/0 ("--no-cache" is the option no-cache
 * itself: a whole name is found first). `next` may be NULL. Values are
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
/** Adds another NVVM IR module to an NVVM program; `lazy` adds it with
 * nvvmLazyAddModuleToProgram (only what is used is linked). libdevice need not be added: a
 * compile adds it itself when the IR calls `__nv_*` functions (see cucore_program_compile()).
 * `size` 0 means NUL-terminated text; `name` may be NULL ("module"). Copied.
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
 * NVVM IR (or an added module) that names a libdevice function (`__nv_sinf`, ...) is compiled
 * with libdevice added lazily (only what is called is linked): the file the libdevice option
 * names, else `$CUCORE_LIBDEVICE`, else `<toolkit>/nvvm/libdevice/libdevice.10.bc` under
 * CUDA_HOME, CUDA_PATH and /usr/local/cuda, else beside the loaded libNVVM. IR that names none
 * is compiled without it, and libdevice is not looked for.
 * @retval CUCORE_COMPILE_ERROR the source did not compile; see cucore_program_get_log().
 * @retval CUCORE_INVALID_ARGUMENT an unknown target, no arch and no GPU, or a rejected option.
 * @retval CUCORE_NOT_SUPPORTED PTX to LTO-IR.
 * @retval CUCORE_NOT_FOUND a name expression names no `__global__` function or variable, or
 *         NVVM IR calls a libdevice function and libdevice is not found (the message names
 *         the function and every path tried).
 * @retval CUCORE_VERSION_MISMATCH NVVM IR of a version this libNVVM does not read.
 * @retval CUCORE_IO_ERROR the libdevice file exists but cannot be read. */
CUCORE_API cucore_status cucore_program_compile(cucore_program *prog, cucore_code_type target,
                                                cucore_object **out);
/** The full log of the last compile (warnings on success, errors on failure); "" when none.
 * Owned by the program, valid until its next compile. */
CUCORE_API cucore_status cucore_program_get_log(const cucore_program *prog, const char **log);

/** What NVRTC said of a precompiled header (PCH) in a program's last compile. A PCH only makes
 * compiling faster: NVRTC uses one only in the process that made it (the PCH heap's address is
 * in the file), and the compile cache keys no PCH option, so a cache hit reports NONE, never
 * CREATED. */
typedef enum cucore_pch_status {
  CUCORE_PCH_NONE = 0,      /**< NVRTC was not asked: no compile yet, a cache hit, no pch or
                                 create-pch option, not CUDA C++ */
  CUCORE_PCH_CREATED,       /**< NVRTC created a PCH file */
  CUCORE_PCH_NOT_ATTEMPTED, /**< NVRTC did not try (it used a PCH, or chose not to make one) */
  CUCORE_PCH_FAILED,        /**< an error kept NVRTC from creating it (the log says which) */
  CUCORE_PCH_HEAP_EXHAUSTED /**< the PCH heap was too small even after cucore raised it to the
                                 size NVRTC asked for and compiled once more */
} cucore_pch_status;

/** "none", "created", "not_attempted", "failed", "heap_exhausted"; "unknown" otherwise. Never
 * NULL; static storage. */
CUCORE_API const char *cucore_pch_status_name(cucore_pch_status status);
/** The PCH status of `prog`'s last compile (with the pch or create-pch option). When NVRTC
 * reports its process-wide PCH heap exhausted, cucore raises the heap to the size NVRTC asks
 * for (nvrtcSetPCHHeapSize, under a lock that waits for other PCH compiles) and compiles once
 * more, as cuda.core does; the status is that of the second compile. */
CUCORE_API cucore_status cucore_program_get_pch_status(const cucore_program *prog,
                                                       cucore_pch_status *out);

/** How grave a diagnostic is. */
typedef enum cucore_diag_severity {
  CUCORE_DIAG_TEXT = 0, /**< a line of the log in no shape the reader knows, kept as written
                             (no location): "1 error detected in the compilation of ..." */
  CUCORE_DIAG_NOTE,     /**< a note */
  CUCORE_DIAG_REMARK,   /**< a remark */
  CUCORE_DIAG_INFO,     /**< information (ptxas's and nvJitLink's `info`) */
  CUCORE_DIAG_WARNING,  /**< a warning */
  CUCORE_DIAG_ERROR,    /**< an error (also a command-line error, libNVVM's parse errors) */
  CUCORE_DIAG_FATAL     /**< the compile stopped: a catastrophic, fatal or internal error */
} cucore_diag_severity;

/** "text", "note", "remark", "info", "warning", "error", "fatal"; "unknown" otherwise. Never
 * NULL; static storage. */
CUCORE_API const char *cucore_diag_severity_name(cucore_diag_severity severity);

/** One message of a compile log, read from the log's text (never NULL strings; "" and 0 when
 * a part is absent). The shapes read: NVRTC's `file(LINE): severity #N-D: message` (or without
 * the number) with the source line and caret it echoes, from which the column comes; ptxas's
 * `ptxas NAME, line N; severity : message`; nvJitLink's `severity : message` and
 * `ERROR N: message`; libNVVM's `NAME (LINE, COL): message` (an error); and
 * `file:line:col: severity: message`. Any other line is a record of its own with severity
 * CUCORE_DIAG_TEXT and no location; only blank lines are left out. */
typedef struct cucore_diagnostic {
  cucore_diag_severity severity; /**< how grave */
  const char *file;    /**< the file as the log names it (parentheses, spaces, `C:\` kept); "" */
  int line;            /**< 1-based line; 0 when the log gives none */
  int column;          /**< 1-based byte column (from NVRTC's caret, or given); 0 when none */
  int number;          /**< the diagnostic's number (NVRTC's `#177-D` is 177); 0 when none */
  const char *message; /**< the message, without location, severity or number */
  const char *text;    /**< the record's lines as the log has them: the header line and those
                            that belong to it (source line, caret, "detected during ...") */
} cucore_diagnostic;

/** How many records the last compile's log holds (0 when the log is empty). A hit of the
 * cache gives the log of the compile that made the entry, so the same records.
 * @retval CUCORE_HOST_OUT_OF_MEMORY the log could not be read into records. */
CUCORE_API cucore_status cucore_program_get_diagnostic_count(const cucore_program *prog,
                                                             int *count);
/** Record `index` (0 .. count-1) of the last compile's log, in the log's order. The strings are
 * owned by the program, valid until its next compile or its destruction.
 * @retval CUCORE_INVALID_ARGUMENT `index` out of range (the message gives the count). */
CUCORE_API cucore_status cucore_program_get_diagnostic(const cucore_program *prog, int index,
                                                       cucore_diagnostic *out);

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
/** Links into CUCORE_CODE_CUBIN or CUCORE_CODE_PTX (PTX needs lto), or CUCORE_CODE_LTOIR
 * (linked LTO-IR, as cucore_linker_complete_output() with CUCORE_LINK_OUTPUT_LTOIR: nvJitLink
 * 13.3 or newer). The inputs stay, so it may be called again. Release `*out` with
 * cucore_object_destroy().
 * @retval CUCORE_INVALID_ARGUMENT another target, no inputs, PTX without lto, or no arch and
 *         no GPU.
 * @retval CUCORE_LINK_ERROR the inputs did not link; see cucore_linker_get_log().
 * @retval CUCORE_INVALID_BINARY nvJitLink refused an input.
 * @retval CUCORE_VERSION_MISMATCH an input is newer than the loaded nvJitLink.
 * @retval CUCORE_TOOLKIT_TOO_OLD LTO-IR asked of an nvJitLink older than 13.3. */
CUCORE_API cucore_status cucore_linker_complete(cucore_linker *lk, cucore_code_type target,
                                                cucore_object **out);
/** nvJitLink's info and error logs of the last complete ("" when none); owned by `lk`, valid
 * until its next complete. Either out may be NULL. */
CUCORE_API cucore_status cucore_linker_get_log(const cucore_linker *lk, const char **info_log,
                                               const char **error_log);
/** How many records the last complete's logs hold, read as a program's log is
 * (cucore_diagnostic): nvJitLink's and ptxas's errors, warnings and info, the error log's
 * records first; after a failed link too (0 before any complete).
 * @retval CUCORE_HOST_OUT_OF_MEMORY the logs could not be read into records. */
CUCORE_API cucore_status cucore_linker_get_diagnostic_count(const cucore_linker *lk, int *count);
/** Record `index` (0 .. count-1) of the last complete's logs. The strings are owned by `lk`,
 * valid until its next complete or its destruction.
 * @retval CUCORE_INVALID_ARGUMENT `index` out of range (the message gives the count). */
CUCORE_API cucore_status cucore_linker_get_diagnostic(const cucore_linker *lk, int index,
                                                      cucore_diagnostic *out);

/** What a link makes (cucore_linker_complete_output()). The first two are final code; the
 * last two are inputs to a later link (incremental linking): add the object they give to
 * another linker with cucore_linker_add_object(). */
typedef enum cucore_link_output {
  CUCORE_LINK_OUTPUT_CUBIN = 0,       /**< a loadable cubin (what cucore_linker_complete() makes
                                           for CUCORE_CODE_CUBIN) */
  CUCORE_LINK_OUTPUT_PTX = 1,         /**< PTX; needs link-time optimisation (the lto option or
                                           LTO-IR inputs) */
  CUCORE_LINK_OUTPUT_RELOCATABLE = 2, /**< a relocatable cubin (nvJitLink -r): the inputs linked
                                           into one, unresolved symbols left for a later link;
                                           not loadable. Needs nvJitLink 13.2 or newer */
  CUCORE_LINK_OUTPUT_LTOIR = 3        /**< linked LTO-IR (nvJitLink -lto -r,
                                           nvJitLinkGetLinkedLTOIR): the inputs, which must all
                                           be LTO-IR, as one LTO-IR module for a later link.
                                           Needs nvJitLink 13.3 or newer */
} cucore_link_output;

/** "cubin", "ptx", "relocatable" or "ltoir"; "unknown" for a value not in the enum. Never
 * NULL; static storage. */
CUCORE_API const char *cucore_link_output_name(cucore_link_output kind);
/** Links the inputs into `kind` of output, as cucore_linker_complete() does for a cubin or
 * PTX. A relocatable output is a CUCORE_CODE_CUBIN object and linked LTO-IR a
 * CUCORE_CODE_LTOIR object; both are made to be inputs of another link (the object records the
 * nvJitLink version that made it, so a later link by an older nvJitLink is refused). The
 * version needed is checked before anything is linked. The inputs stay, so it may be called
 * again. Release `*out` with cucore_object_destroy().
 * @retval CUCORE_TOOLKIT_TOO_OLD the loaded nvJitLink is older than the output needs (13.2
 *         for a relocatable output, 13.3 for LTO-IR), or lacks the entry point; the message
 *         names both versions ("needs nvJitLink 13.2, found 13.0").
 * @retval CUCORE_NVJITLINK_NOT_FOUND a relocatable or LTO-IR output without nvJitLink (the
 *         driver's linker makes neither).
 * @retval CUCORE_INVALID_ARGUMENT a value not in the enum, no inputs, PTX without lto, an
 *         LTO-IR output with an input that is not LTO-IR, or no arch and no GPU.
 * @retval CUCORE_LINK_ERROR the inputs did not link; see cucore_linker_get_log(). */
CUCORE_API cucore_status cucore_linker_complete_output(cucore_linker *lk, cucore_link_output kind,
                                                       cucore_object **out);

/** @} */

/* ==== SECTION: compile cache ==== */
/**
 * @defgroup cache Compile cache
 *
 * Program compiles are cached, on by default: on disk (shared by every process of the user)
 * and in the process (the same key compiled twice gives the same object, loaded once). A
 * program may plug a store of its own in below the directory or in its place
 * (cucore_cache_set_backend: a shared or remote store), and compute a compile's key without
 * compiling (cucore_program_get_cache_key).
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
 * is not an in-memory header, or a `??/` line splice (its meaning depends on the dialect). A
 * compile that writes files beside its code (the time, fdevice-time-trace and create-pch
 * options) is never cached, digest or not: a hit would not write them. The other PCH options
 * (pch, use-pch, pch-dir, pch-verbose, pch-messages, instantiate-templates-in-pch) are not in
 * the key: a PCH only makes compiling faster, the code is the same; the PCH lines of the log
 * are left out of the log an entry keeps. The
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
  CUCORE_CACHE_HIT_MEMORY,   /**< the object this process already made for the same key */
  CUCORE_CACHE_HIT_BACKEND   /**< read from the back end (cucore_cache_set_backend) */
} cucore_cache_result;

/** "not_used", "disabled", "uncacheable", "miss", "hit_disk", "hit_memory", "hit_backend";
 * "unknown" otherwise. Never NULL. */
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
/** The key a compile of `prog` to `target` would use now, computed without compiling (the
 * same fields, the same arch rule and the same checks as cucore_program_compile, so a compile
 * that follows with nothing changed uses this key: cucore_cache_info.key). `key` receives 64
 * hex digits and a NUL; or "" when the compile cannot be cached, and then `*reason` (when
 * `reason` is not NULL) says why, as cucore_cache_info.reason would (an include path, a file
 * the key cannot see, PTX compiled to PTX, ...); `*reason` is "" when there is a key. The
 * reason is owned by `prog`, valid until the next call of this on it or its destruction. The
 * cache's switches (cucore_cache_set_enabled, cucore_program_set_cache) do not change the key:
 * it is the compile's. A program that keeps entries in a store of its own can name them by it.
 * @retval CUCORE_INVALID_ARGUMENT a target a program does not make, `key` NULL, or no arch and
 *         no GPU (as cucore_program_compile).
 * @retval CUCORE_NOT_SUPPORTED PTX to LTO-IR. */
CUCORE_API cucore_status cucore_program_get_cache_key(cucore_program *prog, cucore_code_type target,
                                                      char key[65], const char **reason);

/** Counts of cache events. */
typedef struct cucore_cache_counters {
  uint64_t hits;           /**< entries read from disk */
  uint64_t memory_hits;    /**< objects handed out again by the in-process layer (process only) */
  uint64_t misses;         /**< cacheable compiles that found nothing usable */
  uint64_t stores;         /**< entries written */
  uint64_t evictions;      /**< entries removed to keep under the size cap */
  uint64_t errors;         /**< damaged entries removed, writes that failed */
  uint64_t uncacheable;    /**< compiles that could not use the cache */
  uint64_t backend_hits;   /**< entries read from the back end (process only) */
  uint64_t backend_stores; /**< entries the back end's put took (process only) */
  uint64_t backend_errors; /**< back-end calls that failed, damaged entries it gave (process
                                only) */
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

/** cucore_cache_backend.flags: the back end replaces the directory (no entry is read from or
 * written to disk; the in-process layer stays). Without it the back end sits below the
 * directory. */
#define CUCORE_CACHE_BACKEND_ONLY 1u

/**
 * A store of cache entries a program plugs in below (or in place of) the directory: a
 * shared or remote store. An entry is opaque bytes in the directory's own format, named by
 * its key (64 hex digits, the text of cucore_cache_info.key). Every callback may be called
 * from any thread that compiles, at the same time as others: they must be thread-safe, and
 * must not call cucore's cache functions. A negative return is a failure; when it is minus an
 * errno value (-ENOENT, -EIO, ...) the note names that error.
 *
 * Order of a compile: the in-process layer, then the directory (unless
 * CUCORE_CACHE_BACKEND_ONLY), then the back end's get; a back-end hit is checked exactly as a
 * disk entry is (magic, format version, length, its key, checksum, every field in bounds),
 * written to the directory (read-through) and kept in the process. A damaged, truncated or
 * foreign entry is never used: the note says why, the back end's remove (when given) is asked
 * to drop it, and the source is compiled. After a compile the entry is written to the
 * directory and handed to put (write-through). A failing back end never fails a compile: the
 * note of cucore_program_get_cache_info says what it answered and the compile goes on.
 */
typedef struct cucore_cache_backend {
  void *user; /**< passed to every callback as it is */
  /** Finds `key`'s entry: returns 1 with `*data` and `*size` set (bytes the back end owns
   * until release() is called with them, or until the next call when release is NULL), 0
   * when it has none, or a negative failure. NULL: the back end is only written to. */
  int (*get)(void *user, const char *key, const void **data, size_t *size);
  /** Gives back what get() handed out, once cucore has read it. May be NULL. */
  void (*release)(void *user, const void *data, size_t size);
  /** Stores `size` bytes as `key`'s entry (copy them: they are cucore's), replacing any.
   * Returns 0, or a negative failure. NULL: the back end is only read from. */
  int (*put)(void *user, const char *key, const void *data, size_t size);
  /** Drops `key`'s entry after get() gave one that failed its checks. Returns 0, or a
   * negative failure. May be NULL. */
  int (*remove)(void *user, const char *key);
  unsigned flags; /**< 0, or CUCORE_CACHE_BACKEND_ONLY */
} cucore_cache_backend;

/** Installs `backend` (copied; its `user` and callbacks must stay usable until another
 * back end or NULL is installed) for every later compile of the process; NULL removes it.
 * The call waits for callbacks of the previous back end that are running to return, so its
 * `user` may be freed once this returns. The cache's switches apply to it as to the
 * directory (CUCORE_CACHE_DISABLE turns it off too); cucore_cache_clear leaves the back
 * end's entries alone, and its counters are the process's (cucore_cache_stats.process).
 * @retval CUCORE_INVALID_ARGUMENT neither get nor put, or an unknown flag. */
CUCORE_API cucore_status cucore_cache_set_backend(const cucore_cache_backend *backend);
/** @} */
/* ==== END SECTION: compile cache ==== */

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

#ifdef __cplusplus
}
#endif
#endif /* CUCORE_PART_CODE_H */
