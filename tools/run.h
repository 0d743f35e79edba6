/* run.h -- what the files of `cucore run` share: element types and values (run_value.c),
 * argument, buffer, global and expectation specs (run_spec.c, run_struct.c), host data
 * (run_data.c), the device part (run_device.c), comparisons (run_expect.c) and the report
 * (run_report.c). The verb itself is cmd_run.c. Built only on the public API. */
#ifndef CUCORE_RUN_H
#define CUCORE_RUN_H

#include "cli.h"

#include <stddef.h>
#include <stdint.h>

/* ---- element types and values (run_value.c) ----------------------------------------------- */

typedef enum elem_t {
  T_I8,
  T_U8,
  T_I16,
  T_U16,
  T_I32,
  T_U32,
  T_I64,
  T_U64,
  T_F16,
  T_BF16,
  T_F32,
  T_F64,
  T_COUNT
} elem_t;

extern const char *const elem_names[T_COUNT]; /* "i8" ... "f64" */
extern const int elem_sizes[T_COUNT];
int elem_is_float(elem_t t);
int elem_is_signed(elem_t t);
/* The CUCORE_DTYPE_* code of `t` for cucore_compare_elements (INT, UINT, FLOAT or BFLOAT). */
int elem_dtype_code(elem_t t);
/* The type named by s[0..len), or -1. */
int elem_parse(const char *s, size_t len);
/* The list "i8 u8 ... f64", for messages. */
const char *elem_list(void);

/* Parses `text` as one value of type `t` into `dst` (elem_sizes[t] bytes, little-endian):
 * integers exactly (decimal or 0x hex, range-checked), floating point correctly rounded to the
 * type (nan, inf accepted; a value that would round to infinity is out of range, subnormals
 * and zero are not). Returns 0, or -1 when it is not a number, -2 when out of range
 * (value_range says what fits). */
int value_parse(elem_t t, const char *text, void *dst);
/* The range of type `t`, for messages ("-128..127", "finite values -65504..65504; ..."). */
const char *value_range(elem_t t);
/* Element i of `buf` as a double (for summaries and tolerances). */
double value_get(const void *buf, elem_t t, size_t i);
/* Element i as an exact integer (integer types only). */
int64_t value_get_i64(const void *buf, elem_t t, size_t i);
uint64_t value_get_u64(const void *buf, elem_t t, size_t i);
/* Writes `v` (an index or a generated number) as element i of type t. */
void value_store(void *buf, elem_t t, size_t i, double v);
/* Element i as the shortest text that reads back to the same bits ("2.5", "-7",
 * "18446744073709551615", "0.1", "nan", "inf", "-inf"); returns out. */
const char *value_format(const void *buf, elem_t t, size_t i, char *out, size_t len);
/* A double as the shortest text that reads back to it. */
const char *double_format(double v, char *out, size_t len);
/* 1 when element i is NaN (floating types). */
int value_is_nan(const void *buf, elem_t t, size_t i);

/* ---- NumPy .npy files (npy.c) -------------------------------------------------------------- */
#include "npy.h"

/* ---- specs ---------------------------------------------------------------------------------- */

#define RUN_MAX_DIMS 8

/* How a buffer or array starts. */
typedef enum init_kind {
  INIT_ZERO,
  INIT_VALUE,
  INIT_RANDOM,
  INIT_IOTA,
  INIT_LIST,
  INIT_FILE
} init_kind;

/* A device buffer the command allocates and passes by pointer. */
typedef enum buf_role { ROLE_IN, ROLE_OUT, ROLE_INOUT } buf_role;

typedef struct run_buf {
  char label[32];   /* "2", "3.1": the argument (and struct field) it was given for */
  const char *spec; /* the text that made it (points into argv) */
  elem_t type;
  size_t count;
  buf_role role;
  int ndim; /* the shape kept for .npy outputs (a 1-D count unless an input file
                             gave another) */
  uint64_t shape[RUN_MAX_DIMS];
  unsigned char *host; /* initial data; after the run, the results */
  const char *save;    /* ">FILE": where the results go (.npy or raw .bin), or NULL */
  int save_failed;     /* 1 when writing `save` failed (the report then says null) */
  cucore_devptr ptr;   /* on the device, 0 before allocation */
} run_buf;

/* A pointer to patch into a blob once buffers are allocated. */
typedef struct run_patch {
  size_t offset;
  int buf; /* index into the buffer list */
} run_patch;

typedef enum arg_kind { A_SCALAR, A_POINTER, A_BLOB } arg_kind;

/* One value for a kernel parameter or a module variable. */
typedef struct run_value {
  arg_kind kind;
  elem_t type; /* A_SCALAR */
  unsigned char scalar[8];
  int buf;              /* A_POINTER: the buffer, or -1 for a raw address */
  uint64_t address;     /* A_POINTER with buf -1 (null: 0) */
  unsigned char *bytes; /* A_BLOB: struct, array or bytes, laid out */
  size_t size, align;
  run_patch *patches; /* A_BLOB: buffer pointers inside it */
  int patch_count;
  char *layout; /* A_BLOB from a struct: "f32@0 i32@4 pad 4 f64@8" for messages */
} run_value;

typedef struct run_arg {
  const char *spec;
  run_value v;
} run_arg;

/* --global NAME=SPEC */
typedef struct run_global_set {
  const char *text;
  char *name;
  run_value v;
  cucore_global g; /* on the device */
} run_global_set;

/* --read-global NAME[:TYPE[N][>FILE]] */
typedef struct run_global_read {
  const char *text;
  char *name;
  elem_t type;
  size_t count; /* 0: the whole variable */
  int has_type;
  const char *save;
  int save_failed;     /* 1 when writing `save` failed */
  unsigned char *host; /* the values read */
  cucore_global g;
} run_global_read;

/* --expect ARG=VALUE */
#define RUN_EXPECT_SHOWN 10
typedef struct run_expect {
  const char *text;
  char *target; /* a buffer label ("2", "3.1") or a --read-global name */
  init_kind init;
  char *value_text;      /* the VALUE as given */
  unsigned char *values; /* the values made before the launch (run_prepare_expects), or NULL */
  size_t values_count;
  /* after the comparison */
  size_t count; /* elements compared */
  size_t mismatches;
  int shown; /* entries below */
  size_t bad_index[RUN_EXPECT_SHOWN];
  char got[RUN_EXPECT_SHOWN][48], want[RUN_EXPECT_SHOWN][48];
  int ndim; /* the target's shape, for multi-dimensional indices */
  uint64_t shape[RUN_MAX_DIMS];
  int exact;                       /* 1: integers compared exactly (no tolerance given) */
  double max_abs_err, max_rel_err; /* over the mismatches (inf: a NaN or infinity differs) */
} run_expect;

/* Everything the command line said. */
typedef struct run_opts {
  const char *file, *kernel;
  unsigned grid[3], block[3], cluster[3];
  long long smem, repeat, warmup, show;
  int device, priority, has_priority, pdl, cooperative, flush_l2, json;
  const char *json_out;
  double rtol, atol;
  int has_rtol, has_atol;
  unsigned long long seed;
  run_arg *args;
  int nargs;
  run_buf *bufs;
  int nbufs;
  size_t bufs_cap;
  run_global_set *sets;
  int nsets;
  run_global_read *reads;
  int nreads;
  run_expect *expects;
  int nexpects;
  char **exprs; /* "&NAME" name expressions made for module variables */
  int nexprs;
  size_t exprs_cap;
  long long graph; /* --graph N: kernels per graph (0: direct launches only) */
  int no_pool;     /* --no-pool: cucore_mem_alloc (the default; overrides --pool) */
  int pool;        /* --pool: the stream-ordered pool on the run's stream */
  int timings;     /* --timings: the phase table on stderr at the end */
  int connections; /* CUDA_DEVICE_MAX_CONNECTIONS in effect (run_limit_connections), -1 other */
} run_opts;

/* Keeps "&NAME" in o->exprs (the last entry). Returns 0 or -1 (out of memory). */
int run_expr_keep(run_opts *o, const char *name);

/* Parses one --arg SPEC into `a`, adding the buffers it makes to o->bufs (labelled from
 * `index`). Returns 0, or an exit code after printing the reason (2 for a malformed spec, 1
 * for a file that cannot be used). */
int run_parse_arg(run_opts *o, const char *spec, int index, run_arg *a);
/* --global NAME=SPEC, --read-global NAME[:TYPE[N]][>FILE], --expect ARG=VALUE. */
int run_parse_global_set(run_opts *o, const char *text, run_global_set *g);
int run_parse_global_read(const char *text, run_global_read *r);
int run_parse_expect(const char *text, run_expect *e);
/* Frees what the specs allocated (not the arrays of o). */
void run_value_free(run_value *v);
void run_opts_free(run_opts *o);

/* ---- internal to the spec parser (run_spec.c, run_struct.c) --------------------------------- */

/* A cursor over one spec, for parsing and messages. */
typedef struct spec_cur {
  const char *flag; /* "--arg", "--global" */
  const char *all;  /* the whole text, quoted in messages */
  const char *p, *end;
  run_opts *o;
  char label[32]; /* the label buffers made here get */
  int depth;
} spec_cur;

/* Prints "cucore run: FLAG `SPEC`: <message>" and returns CLI_EXIT_USAGE. */
int spec_usage(const spec_cur *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Parses one item (scalar, pointer, array, struct, bytes, buffer) ending at `end`. */
int spec_item(spec_cur *c, const char *end, run_value *v);
/* `word` at p (before end), as a whole word of the spec (run_spec.c). */
int spec_starts(const char *p, const char *end, const char *word);
/* p..end copied, NUL-terminated (malloc'd; NULL when out of memory). */
char *spec_dup_range(const char *p, const char *end);
/* A buffer or array value: TYPE[N][=INIT] (run_spec.c). */
int spec_buffer(spec_cur *c, const char *end, run_value *v);
/* The usage error for a value value_parse refused (r: -1 not a number, -2 out of range),
 * with the type's range (run_spec.c). */
int spec_bad_value(spec_cur *c, int r, const char *what, const char *text, elem_t t,
                   const char *alternatives);
/* `TYPE[N]` at *pp: the type and count (0 for `[]` when allow_empty); *pp moves past `]`. */
int spec_type_and_count(spec_cur *c, const char **pp, const char *end, elem_t *type, size_t *count,
                        int allow_empty);
/* Parses `struct[@A]:{...}` or `{...}` (c->p at `{`) into a blob. */
int spec_struct(spec_cur *c, const char *end, size_t min_align, run_value *v);
/* Parses `bytes[@A]:HEX` or `bytes[@A]:@FILE` (c->p at `bytes`) into a blob. */
int spec_bytes(spec_cur *c, const char *end, run_value *v);
/* Fills `count` elements of `type` from INIT text (a number, iota, random, {list} or @file;
 * @file may set *count when it was 0, and the shape). Returns 0 or an exit code. */
int spec_fill(spec_cur *c, const char *init, size_t init_len, elem_t type, size_t *count,
              unsigned char **data, int *ndim, uint64_t *shape);
/* ---- data files (run_data.c) ---- */
/* Reads a .npy or raw file of `type` for `what`; *count 0 takes the file's count. */
int data_read_file(const char *what, const char *path, elem_t type, size_t *count,
                   unsigned char **data, int *ndim, uint64_t *shape);
/* Writes `count` elements of `type` to PATH (.npy with `shape`, else raw bytes). */
int data_write_file(const char *what, const char *path, elem_t type, size_t count, const void *data,
                    int ndim, const uint64_t *shape);
/* Writes every output that has a `>FILE` (buffers and --read-global); a failure does not stop
 * the others. Returns 0 or the first failure's exit code. */
int run_save_outputs(run_opts *o);
/* Before the launch: every output file (--json-out, `>FILE` of buffers and --read-global) can
 * be written and is no input (cli_output_check), bf16 not to .npy. 0 or CLI_EXIT_USAGE. */
int run_check_outputs(const run_opts *o);
/* One output's check: `what` names it in messages. 0 or CLI_EXIT_USAGE. */
int data_check_output(const char *what, const char *path, elem_t type);
/* Deterministic random numbers for `random` fills (--seed sets the start; 0: the default;
 * run_spec.c). */
uint64_t run_random_next(void);
void run_random_seed(unsigned long long seed);

/* ---- binding (run_bind.c) ------------------------------------------------------------------- */

/* Binds every --arg to `args` (buffers at their current device address, 0 before they are
 * allocated). Returns 0, or 1 after printing which argument the kernel refused and why. */
int run_bind_args(const run_opts *o, cucore_args *args, cucore_object *obj, const char *symbol);
/* Writes every --global value into the module variable of `obj` on `dev` (sizes must match:
 * else the message names both). 0 or an exit code after printing why. */
int run_write_globals(run_opts *o, cucore_device *dev, cucore_object *obj);
/* The code of the object read offline, PTX types attached (NULL when it cannot be read). */
cucore_binary *run_read_code(cucore_object *obj);
/* Without a GPU: every --global and --read-global against the module variables of the code
 * read offline (each exists; sizes fit). 0 or an exit code after printing why. */
int run_check_globals_offline(run_opts *o, cucore_object *obj);
/* A value's bytes as they go to the device (buffers' addresses patched in); malloc'd. */
unsigned char *run_value_bytes(const run_opts *o, const run_value *v, size_t *size);

/* ---- device (run_device.c) ------------------------------------------------------------------ */

/* Statistics of a set of times, in milliseconds. */
typedef struct run_stats {
  double min_ms, median_ms, max_ms, mean_ms;
} run_stats;
/* The statistics of times[0..n) (n >= 1; the times are sorted in place) (run_report.c). */
run_stats run_stats_of(double *times, long long n);

typedef struct run_timing {
  int timed;          /* launches timed */
  run_stats stats;    /* of the timed launches (of the graph replays with --graph) */
  long long launches; /* every launch, warm-ups included */
  int flushed_l2;     /* a flag: 1 when the L2 cache was flushed (--flush-l2) before
                                 each timed launch, 0 when not */
  long long l2_bytes;
  char device_name[256];
  int arch;
  int pool;         /* 1: buffers came from the stream-ordered pool */
  double launch_ms; /* the median time of one kernel (for the bandwidth) */
  /* --graph N: the timed figures above are per replay of a graph of N launches */
  long long graph_kernels; /* N, 0 without --graph */
  size_t graph_nodes;      /* nodes the captured graph holds */
  run_stats direct;        /* per kernel, of N direct launches back to back */
  /* NVML's view around the timed launches (issue 26.2; system_facts.c): the lower SM clock
   * of the samples before and after, and every clock-event reason seen; -1 when unknown */
  int sm_clock_mhz, sm_clock_max_mhz;
  long long clock_reasons;
} run_timing;

/* Runs the kernel on the GPU as the options say and fills the results (buffers' host data,
 * read globals, timing). Returns 0 or an exit code after printing the reason. */
int run_on_device(run_opts *o, cucore_kernel *k, cucore_object *obj, run_timing *t);
/* cuInit and device `ordinal`'s primary context on a thread of its own, beside the compile,
 * when the run `compiles` (run_early.c; CUCORE_RUN_SERIAL=1 in the environment turns it off,
 * CUCORE_RUN_EARLY=1 on for code that is not compiled, for comparisons), and with `nvml`,
 * NVML's load on another. run_early_join waits for the context's thread (before the GPU
 * part), run_early_end for both (before the command returns); a second start or a join
 * without a start does nothing. */
void run_early_start(int ordinal, int nvml, int compiles);
/* Sets CUDA_DEVICE_MAX_CONNECTIONS=1 unless the environment names it; call before any thread
 * starts. Returns the number in effect, -1 when the user's value is not one (1..32). */
int run_limit_connections(void);
/* 1 when the run times launches apart from the first (--warmup, --repeat > 1, --graph):
 * only then is the SM clock read (NVML's start cost a first result ~14 ms on two H200s). */
int run_is_timed(const run_opts *o);
void run_early_join(void);
void run_early_end(void);
/* Joins the context's thread and closes its handle (`cucore tune`, once the tune has the
 * device open: its reset after a kernel fault must be able to destroy the context). */
void run_early_release(void);

/* ---- checks and report (run_expect.c, run_report.c) ---------------------------------------- */

/* Compares every --expect with its target and stores the results in it. Returns the number of
 * expectations that failed, or -1 after printing why one could not be compared (exit 1). */
int run_check_expects(run_opts *o);
/* Before the launch, on any machine: every --expect's file read, value parsed and count
 * checked against its target (the values kept for the comparison). Returns 0, or
 * CLI_EXIT_USAGE after printing why. */
int run_prepare_expects(run_opts *o);
/* 1 when the expectation's target exists (a buffer label or a --read-global name). */
int run_expect_target_known(const run_opts *o, const char *target);
/* The report: text on stdout, or JSON on `j`. */
void run_report(run_opts *o, const run_timing *t, const char *kernel_symbol, json_out *j);
/* Effective bandwidth numbers: bytes read and written by the buffers. */
void run_traffic(const run_opts *o, unsigned long long *read, unsigned long long *written);

/* ---- names (run_bind.c) ---- */
/* 1 when `name` is a plain C identifier (its own symbol; no name expression needed). */
int run_plain_name(const char *name);
/* The symbol of module variable `name`: for a C++ name (ns::coef<float>) the lowered name of
 * the expression "&NAME" registered at compile time, else `name` itself. */
const char *run_global_symbol(cucore_object *obj, const char *name, char *buf, size_t len);

/* The C++ type of parameter `index` of the kernel (for messages), or NULL. */
const char *run_param_type(cucore_object *obj, const char *symbol, int index, char *buf, size_t len,
                           char *sig, size_t siglen);

/* ---- phase timings (run_phases.c) ----------------------------------------------------------- */

/* Now, for run_phase_end (ms after the process started). */
double run_phase_begin(void);
/* Adds the command's phase `phase`, from `start_ms` (run_phase_begin) to now. */
void run_phase_end(cucore_phase phase, double start_ms);
/* The "phases" object of the JSON report: every phase that ran so far, by its start. */
void run_phases_json(json_out *j);
/* The --timings table, and the phases that did not run, on `f`. */
void run_phases_print(FILE *f);

#endif
