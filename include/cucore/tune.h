/**
 * @file
 * @brief Autotuning (cucore tune): search spaces, pruning, the model's score, timing, the store.
 *
 * The autotuner as a library: search spaces in Kernel Tuner's conventions and their
 * expression language, restrictions and the occupancy model's verdict per configuration,
 * timing statistics, the result store, cucore_tune_run() and its report.
 *
 * A part of cucore's public header: a program includes `<cucore.h>`, which includes every
 * part in the order of the data path; this part also compiles alone.
 */
#ifndef CUCORE_PART_TUNE_H
#define CUCORE_PART_TUNE_H

#include "base.h"
#include "devices.h"
#include "memory.h"
#include "code.h"
#include "kernels.h"
#include "graphs.h" /* cucore_graph_exec: the replays cucore_tune_time_samples times */

#ifdef __cplusplus
extern "C" {
#endif

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
/** Counts what each stage keeps without listing the space: each restriction and the launch
 * are checked where the parameters they read are bound, so a failing check skips every
 * configuration under it, and configurations no check can tell apart are counted by
 * multiplication (Kernel Tuner's 3 145 728-configuration convolution space in well under a
 * second, in kilobytes). The same counts as checking each configuration.
 * @retval CUCORE_INVALID_ARGUMENT the space's size does not fit 64 bits. */
CUCORE_API cucore_status cucore_tune_space_count(const cucore_tune_space *space,
                                                 cucore_tune_counts *out);
/** The first runnable configuration (every restriction true, a valid launch within the
 * limits) whose index is `from` or more, in *index, found without listing the space: walking
 * from 0 with index + 1 meets the runnable configurations in index order.
 * @retval CUCORE_NOT_FOUND none from `from` on (also when `from` is past the space). */
CUCORE_API cucore_status cucore_tune_space_next_runnable(const cucore_tune_space *space,
                                                         uint64_t from, uint64_t *index);
/** `n` runnable configurations drawn uniformly at random (with repeats) into indices[0..n),
 * the same `seed` giving the same draws, without listing the space: a rank index over the
 * runs of runnable configurations the walk finds (a space cut into more than 4M runs is drawn
 * by rejection over its raw indices instead).
 * @retval CUCORE_INVALID_ARGUMENT NULL, or no runnable configuration (named). */
CUCORE_API cucore_status cucore_tune_space_sample(const cucore_tune_space *space, uint64_t seed,
                                                  size_t n, uint64_t *indices);

/** Which configurations are a configuration's neighbours. */
typedef enum cucore_tune_neighbours {
  CUCORE_TUNE_NEIGHBOURS_HAMMING = 0, /**< one parameter different, any other value */
  CUCORE_TUNE_NEIGHBOURS_ADJACENT = 1 /**< one parameter moved to the value next to it */
} cucore_tune_neighbours;

/** The runnable neighbours of configuration `index` (which need not be runnable itself), in
 * parameter order and, within one, value order: the first `cap` into out[], their number in
 * `*n` (which may exceed cap: call again with a larger out). Kernel Tuner's strategies use
 * both kinds.
 * @retval CUCORE_INVALID_ARGUMENT NULL, `index` past the space, or an unknown kind. */
CUCORE_API cucore_status cucore_tune_space_get_neighbours(const cucore_tune_space *space,
                                                          uint64_t index,
                                                          cucore_tune_neighbours kind,
                                                          uint64_t *out, size_t cap, size_t *n);

/** One configuration as the checks before compiling see it. */
typedef struct cucore_tune_config {
  uint64_t index;              /**< its number in the raw space */
  cucore_tune_verdict verdict; /**< RUNNABLE, or the first check it failed */
  char reason[256];            /**< why, when not RUNNABLE ("restriction 2 is false",
                                  "block.x = 2048, sm_90 allows 1024"); the restriction's text
                                  is cucore_tune_space_get_restriction(restriction - 1); a
                                  reason longer than 255 bytes (an occupancy model's
                                  explanation) ends with " ... (cut: N bytes, the field holds
                                  255)", never cut silently */
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
  double race_best_ms;        /**< racing: the best median per launch so far (ms; 0: no racing).
                         When the launches are single (kernels of 20 us or more), timing stops
                         after the 3 lone launches that choose the mode, with them as its
                         samples, when the fastest is above race_best_ms x (1 + race_margin):
                         no warm-up, no screening (cucore_tune_timing::screened) */
  double race_margin;         /**< racing's margin (>= 0; 0: CUCORE_TUNE_RACE_MARGIN) */
  int skip_first;             /**< 1: the caller has just launched k with these arguments (the
                         tune's checked launch) and it finished: no untimed first launch */
  int long_min_samples;       /**< > 0: a kernel whose 3 lone launches (the ones that choose the
                         mode) took 1 ms or more (CUCORE_TUNE_LONG_MS) keeps them as its first
                         samples, gets no warm-up, and needs only this many samples (at most
                         min_samples) before the noise and screen_ms decide; such a kernel's
                         clocks are up after its first launch, and each sample costs a launch
                         of its length. 0: every kernel as min_samples says (cucore tune: 5) */
} cucore_tune_timing_options;

/** A kernel at least this long (a lone launch, ms) is timed as a long one
 * (cucore_tune_timing_options::long_min_samples; cucore tune's finalists: 3 rounds, not 5). */
#define CUCORE_TUNE_LONG_MS 1.0

/** Racing's least margin: a configuration is stopped early only when its fastest sample is
 * more than 10 % above the best median (or 3 x the best's relative noise, when larger). */
#define CUCORE_TUNE_RACE_MARGIN 0.10

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
  int screened;               /**< 1: stopped by racing (opt->race_best_ms) after its 3 lone
                                 launches, clearly slower than the best so far */
  int saved_launches;         /**< screened: about how many launches the warm-up and the
                                 screening would have made (by the lone launches' time) */
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

/** How cucore_tune_time_samples times: exactly `samples` samples. Zero-initialise, then set. */
typedef struct cucore_tune_sample_options {
  long long warmup;        /**< untimed launches first (replays with `exec`, batches with
                              `batch`), without a flush and without events; >= 0 */
  long long samples;       /**< timed samples, exactly (>= 0; 0: the warm-up alone) */
  int batch;               /**< launches back to back in each sample (0 or 1: one); with `exec`,
                              the kernels one replay holds (0 or 1: the replay's time) */
  cucore_graph_exec *exec; /**< not NULL: each warm-up and sample is one replay of this graph on
                              cfg->stream (k and args are not used; the caller keeps it) */
  size_t l2_bytes; /**< as in cucore_tune_timing_options: 2 x this written before each sample,
                      outside the events (the word 0x5a5a5a5a); 0: no flush */
  cucore_devptr flush_buffer; /**< the caller's memory for the flush (>= 2 x l2_bytes); 0: each
                                 call allocates its own */
} cucore_tune_sample_options;

/** The timing engine of cucore_tune_time_launch with the counts given instead of chosen (what
 * `cucore run --warmup W --repeat R [--graph N] [--flush-l2]` times with): opt->warmup untimed
 * launches, then opt->samples samples, each the flush (when set) then the work between two
 * events, up to 16 queued ahead of the host; ms[i] is sample i's time divided by batch. Returns
 * once the last sample is reached (with no samples, once the warm-up is queued). k NULL only
 * with opt->exec. Needs a GPU. Not for two threads on one stream.
 * @retval CUCORE_INVALID_ARGUMENT a negative count, no kernel and no graph, or samples asked
 *         and `ms` NULL (each named). */
CUCORE_API cucore_status cucore_tune_time_samples(cucore_kernel *k, const cucore_launch_config *cfg,
                                                  cucore_args *args,
                                                  const cucore_tune_sample_options *opt,
                                                  double *ms);

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

/** The environment a result was measured in, as one line ("name=...;cc=9.0;sms=132;
 * l2=52428800;driver=13000;nvrtc=13000;cucore=X.Y.Z;timing=...") into out; `timing` names the
 * measurement policy (cache and launch modes). The model, not the board: two GPUs of one model
 * on one driver have the same fingerprint, so their tunes share one store's results (each
 * record names the UUID of the GPU that measured it). Never cut: a line that would not fit in
 * `cap` with its NUL is refused.
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
  const void *host;      /**< the initial contents (count x elem_size bytes, read during the
                              call: keep them unchanged until cucore_tune_run returns); NULL
                              for outputs (and zeros for inputs) */
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
  CUCORE_TUNE_SKIPPED,          /**< outside top_fraction of the model's order */
  CUCORE_TUNE_COMPILE_ERROR     /**< the store's record of a configuration the compiler refused
                                     (its error the record's detail), kept so that a rerun does
                                     not compile it again; a row that did not compile stays
                                     NOT_MEASURED with the error in cucore_tune_row::error */
} cucore_tune_result;

/** The name of a result as the store keeps it ("ok", "wrong-answer", "launch-error",
 * "verify-error", "bind-error", "fault", "device-lost", "skipped", "compile-error"; "" not
 * measured; "?" for an unknown value). Never NULL. */
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
  int screened;              /**< 1: stopped early by racing ("screened": true) */
  const char *uuid;          /**< "uuid": the UUID of the GPU that measured it ("" none) */
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
  int definite;       /**< ok 0: 1 when the compiler refused the configuration itself (its
                           source or options): the failure is kept in the store as the
                           configuration's result and a rerun does not compile it again; 0 (a
                           callback's default): a failure that says nothing of it (a crashed or
                           killed compiler, out of memory, a time-out) is not kept */
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

/** A search strategy: what proposes the configurations to measure under a budget. */
typedef enum cucore_tune_strategy {
  CUCORE_TUNE_STRATEGY_RANDOM = 0, /**< uniform sampling without repeats */
  CUCORE_TUNE_STRATEGY_ILS,        /**< greedy iterated local search (restarts, perturbations) */
  CUCORE_TUNE_STRATEGY_ANNEAL,     /**< simulated annealing over neighbours */
  CUCORE_TUNE_STRATEGY_GENETIC,    /**< a genetic algorithm (a generation is one batch) */
  CUCORE_TUNE_STRATEGY_FOREST,     /**< model-based: a random forest's expected improvement */
  CUCORE_TUNE_STRATEGY_BAYES,      /**< model-based: a Gaussian process's expected improvement (the
                                      default: Bayesian optimisation) */
  CUCORE_TUNE_STRATEGY_COUNT       /**< how many there are */
} cucore_tune_strategy;

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
  int nvrtc_minimal;  /**< 1: the first configuration that compiles is compiled again with
                          NVRTC's -minimal, and when both cubins are the same bytes every
                          other compile uses it (~20-30 % less compile time on a small
                          kernel; a kernel that needs the runtime's types compiles without) */
  uint64_t max_rows;  /**< a dry run without an arch (nothing compiled) keeps one row per
                          configuration past the restrictions only when there are at most
                          this many; more: the counts alone (cucore_tune_summary::
                          rows_omitted), found without listing the space. 0: no limit */
  uint64_t max_evals; /**< > 0: a search: `strategy` proposes this many configurations in
                           all (failed ones count; fewer when the space has fewer runnable),
                           in batches, each batch compiled and measured before the next is
                           proposed; the rows are those evaluated. 0: every configuration */
  cucore_tune_strategy strategy; /**< the search's strategy (max_evals > 0) */
  uint64_t seed;       /**< the search's seed: the same seed and results, the same search */
  size_t batch;        /**< configurations per batch (0: one per compile thread, 4 to 16) */
  double time_limit_s; /**< > 0: no batch is proposed after this much wall time of the
                            search (the batch under way finishes); 0: none */
  const char *strategy_options; /**< the strategy's options (copied; NULL: its defaults):
                                     `key=value` items separated by commas or spaces, or a
                                     JSON object of numbers; names and ranges from
                                     cucore_tune_strategy_get_option() */
  int no_racing; /**< 1: every configuration gets the full timing. 0 (the default): one whose
                      launches are all clearly slower than the best so far (by
                      CUCORE_TUNE_RACE_MARGIN or 3 x the best's noise, whichever is larger) is
                      stopped early (cucore_tune_row::screened): a kernel of 0.5 ms or more
                      after its checked launch (timed) and one more (or alone, when it took
                      more than twice the best with the margin), a kernel of 20 us or more
                      after the 3 lone launches that choose the launch mode; the winner, its
                      ties and the finalists are timed in full as before */
  /** Sharing one store's work between tunes (processes on one host or across hosts with a
   * shared folder): with shard_count > 1 this tune compiles and measures its share first (the
   * distinct compiles, ordered by their hash, whose position modulo shard_count is
   * shard_index), then takes what the others have not claimed (the store's group locks:
   * cucore_tune_store_lock()), so a fast shard takes more and a shard that died leaves only
   * the configuration it was measuring. Every shard must be given the same inputs. A search
   * (max_evals) shares the budget: shard i proposes its share of it, seeded with seed + i, and
   * before each batch learns the results the others have stored (the strategy observes them
   * and never proposes them again). */
  unsigned shard_index;
  /** The shards sharing the store (0 or 1: none). */
  unsigned shard_count;
  int report_only;       /**< 1: nothing compiled or launched, no device needed: the rows the
                             store holds are reported (the best among them; finalists as
                             stored), the others as not measured. Without a GPU (a login
                             node) the results are those of the store's one device model for
                             this key and problem (several: refused, naming them) */
  int retime_finalists;  /**< 1: the finalists are re-timed on this device even when every
                             configuration came from the store (the closing round of a tune
                             whose shards measured on other devices of one model); a shard
                             with it ranks the whole store, not only what it measured */
  const char *store_dir; /**< with store_path NULL: the folder whose KEY.jsonl is the store
                              (a folder on a shared file system for shards); NULL: the compile
                              cache's tune/ */
  int shard_own_only;    /**< 1: a shard measures its share only, nothing of the others' (each
                              host keeps its own store, gathered after by `cucore cache tune
                              merge`); 0: it takes over what the others left */
} cucore_tune_run_options;

/** Defaults: device 0, measured, the device's arch, 5 finalists, noise 2 %, the automatic cold
 * cache (rotation, else the flush), the automatic launch mode, default tolerances, no
 * callbacks. */
#define CUCORE_TUNE_RUN_DEFAULTS                                                                  \
  {                                                                                               \
    0, 0, 0, 0, 0, 0.0, NULL, 0, 0.02, CUCORE_TUNE_LAUNCH_AUTO, CUCORE_TUNE_COLD_AUTO, 5, 0, 0.0, \
        0.0, 0, 0, -1.0, -1.0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0, 0, 0,           \
        CUCORE_TUNE_STRATEGY_BAYES, 0, 0, 0.0, NULL, 0, 0, 0, 0, 0, NULL, 0                       \
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
  int screened;              /**< 1: timed by racing's early launches only (clearly slower than
                                  the best so far: cucore_tune_run_options::no_racing) */
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
  uint64_t rows_omitted;           /**< configurations past the restrictions that have no row
                                        (a dry run over cucore_tune_run_options::max_rows):
                                        the counts stand for them */
  int searched;                    /**< 1: a search (run options' max_evals): the rows are the
                            configurations it evaluated */
  uint64_t evals;                  /**< a search's configurations evaluated (its rows) */
  int stopped_by_time;             /**< 1: the search stopped at time_limit_s before its budget */
  int exhaustive;                  /**< 1: a search whose budget covers every runnable
                                        configuration (and no time_limit_s): all measured in
                                        one pass, as a tune without max_evals, no strategy */
  size_t screened;                 /**< configurations racing stopped early (2 or 3 launches) */
  size_t race_saved_launches;      /**< about how many launches that saved */
  size_t compile_errors_stored;    /**< of `resumed`, configurations whose compile failed in an
                                        earlier tune (the store keeps the compiler's refusal):
                                        not compiled again */
  size_t taken_over;               /**< shards: distinct compiles of another shard's share
                                        that this tune compiled and measured (its shard was
                                        slower, or gone) */
  unsigned shard_index;            /**< the run options' shard_index (0: not sharded) */
  unsigned shard_count;            /**< and shard_count (0: not sharded) */
  int report_only;                 /**< 1: a report of the store only: nothing measured */
  uint64_t learned;                /**< a sharded search: the other shards' results it
                                        learned from the shared store before proposing */
  char uuid[37];                   /**< the UUID of the tune's GPU (the run options' device;
                                        "" in a dry run) */
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
/* ---- search strategies and recorded spaces -------------------------------------------------- */

/** The strategy a name gives ("random", "ils", "anneal", "genetic", "forest", "bayes";
 * "default": the default, CUCORE_TUNE_STRATEGY_BAYES).
 * @retval CUCORE_INVALID_ARGUMENT NULL, or a name that is none of those (the message lists
 *         them). */
CUCORE_API cucore_status cucore_tune_strategy_from_name(const char *name,
                                                        cucore_tune_strategy *out);
/** The name of `strategy` into `*name` (static text).
 * @retval CUCORE_INVALID_ARGUMENT NULL, or a value that is no strategy. */
CUCORE_API cucore_status cucore_tune_strategy_get_name(cucore_tune_strategy strategy,
                                                       const char **name);

/** One option of a strategy (static text). */
typedef struct cucore_tune_strategy_option {
  const char *name; /**< as strategy_options names it ("trees") */
  double min;       /**< the least value it takes */
  double max;       /**< the largest value it takes */
  int integer;      /**< 1: a whole number */
  const char *help; /**< what it sets, with its default */
} cucore_tune_strategy_option;

/** Option `index` (0, 1, ...) of `strategy` into `*out`: the options strategy_options may
 * set (cucore_tune_run_options, cucore_tune_simulate()).
 * @retval CUCORE_NOT_FOUND `index` is past the strategy's last option (random has none).
 * @retval CUCORE_INVALID_ARGUMENT NULL, or a value that is no strategy. */
CUCORE_API cucore_status cucore_tune_strategy_get_option(cucore_tune_strategy strategy,
                                                         size_t index,
                                                         cucore_tune_strategy_option *out);

/** A recorded space: the results of a tune (each configuration's time or failure, and what
 * measuring it cost), on which strategies are replayed with no GPU and no compiler. */
typedef struct cucore_tune_recording cucore_tune_recording;

/** Reads a recording from a Kernel Tuner cache file's bytes or a TuningSchema T4 file's (the
 * results `cucore tune --t4` writes: a result whose invalidity is "constraints" is outside the
 * space and left out; the parameters' values are those the results use), its JSON plain or
 * gzip-compressed (zlib, libz.so.1, is loaded to inflate it). `name` names the file in errors
 * (NULL: "the recording"). The data is copied; `*out` is destroyed with
 * cucore_tune_recording_destroy.
 * @retval CUCORE_INVALID_ARGUMENT NULL, not JSON, damaged gzip, or a cache without what a
 *         recording needs (each named: the parameters, the configurations, an entry whose
 *         values its parameters do not list, one recorded twice, none with a time).
 * @retval CUCORE_NOT_SUPPORTED gzip data and no zlib to inflate it. */
CUCORE_API cucore_status cucore_tune_recording_read(const void *data, size_t size, const char *name,
                                                    cucore_tune_recording **out);
/** Destroys a recording; NULL is a no-op. */
CUCORE_API cucore_status cucore_tune_recording_destroy(cucore_tune_recording *recording);

/** What a recording holds. Strings are the recording's. */
typedef struct cucore_tune_recording_info {
  const char *kernel;   /**< the kernel's name as recorded ("" when not) */
  const char *device;   /**< the device's name as recorded ("" when not) */
  size_t params;        /**< parameters */
  size_t configs;       /**< recorded configurations */
  size_t valid;         /**< of those, the ones with a time */
  double optimum_ms;    /**< the best recorded time */
  double total_cost_ms; /**< what measuring every recorded configuration cost, as recorded */
  size_t near_optimum;  /**< configurations within 5 % of the optimum (time <= 1.05 x) */
} cucore_tune_recording_info;

/** What `recording` holds into `*out`.
 * @retval CUCORE_INVALID_ARGUMENT NULL. */
CUCORE_API cucore_status cucore_tune_recording_get_info(const cucore_tune_recording *recording,
                                                        cucore_tune_recording_info *out);

/** One simulated search's outcome. */
typedef struct cucore_tune_simulation {
  double best_ms;     /**< the best time found (INFINITY: none) */
  double ratio;       /**< optimum / best_ms (0: none found) */
  uint64_t evals;     /**< configurations evaluated, failed ones included (Kernel Tuner's
                         max_fevals counts them so) */
  double clock_ms;    /**< the simulated tuning time: the recorded costs of those evaluated */
  double strategy_ms; /**< the strategy's own time (wall, this process) */
} cucore_tune_simulation;

/** Replays `strategy` over `recording` with `max_evals` evaluations (all recorded
 * configurations when it is 0 or more than there are), `batch` configurations proposed at a
 * time (0: 1), from `seed` (the same seed and inputs give the same sequence). Each evaluation
 * answers with the recorded time or failure and adds the recorded cost to the simulated clock.
 * `curve` and `clock` (either may be NULL) receive, for evaluation i, the best time so far
 * (INFINITY before any) and the simulated clock in ms; each holds `max_evals` entries (the
 * recording's configuration count when max_evals is 0). Thread-safe: a recording may serve
 * several simulations at once.
 * `strategy_options` (NULL: the defaults) as cucore_tune_run_options reads it.
 * @retval CUCORE_INVALID_ARGUMENT NULL, a strategy that is none, or options it refuses (the
 *         message names the option and what was expected). */
CUCORE_API cucore_status cucore_tune_simulate(const cucore_tune_recording *recording,
                                              cucore_tune_strategy strategy,
                                              const char *strategy_options, uint64_t max_evals,
                                              uint64_t seed, size_t batch, double *curve,
                                              double *clock, cucore_tune_simulation *out);
/** @} */
/* ==== END SECTION: autotuning ==== */

#ifdef __cplusplus
}
#endif
#endif /* CUCORE_PART_TUNE_H */
