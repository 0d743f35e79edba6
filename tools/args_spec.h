/* args_spec.h -- the args module: the value specs of --arg, --global, --read-global and
 * --expect, their grammar, their values and what they make, shared by `cucore run` and
 * `cucore tune` (each holds an args_set). One file per job, each exporting args_FILE_*:
 *   args_elem.c    element types (i8 ... f64): names, sizes, kinds
 *   args_value.c   one element value, parsed exactly and printed as the shortest text
 *   args_cursor.c  the cursor over one spec: quoting it in a usage error, words, copies
 *   args_fill.c    buffers and arrays, TYPE[N]=INIT, and their fills (random numbers too)
 *   args_item.c    one value: scalar, pointer, array, buffer, struct or bytes
 *   args_set.c     the whole options: --arg, --global, --read-global, --expect; freeing
 *   args_data.c    data files: .npy (over npy.c) and raw bytes, read and written
 *   args_bind.c    binding the values to a kernel and writing module variables
 *   args_expect.c  the --expect checks, prepared before the launch, compared after it
 * Built only on the public API. */
#ifndef CUCORE_CLI_ARGS_SPEC_H
#define CUCORE_CLI_ARGS_SPEC_H

#include "cli.h"

#include <stddef.h>
#include <stdint.h>

/* ---- element types (args_elem.c) and values (args_value.c) ---------------------------------- */

typedef enum args_elem {
  ARGS_I8,
  ARGS_U8,
  ARGS_I16,
  ARGS_U16,
  ARGS_I32,
  ARGS_U32,
  ARGS_I64,
  ARGS_U64,
  ARGS_F16,
  ARGS_BF16,
  ARGS_F32,
  ARGS_F64,
  ARGS_ELEM_COUNT
} args_elem;

extern const char *const args_elem_names[ARGS_ELEM_COUNT]; /* "i8" ... "f64" */
extern const int args_elem_sizes[ARGS_ELEM_COUNT];
int args_elem_is_float(args_elem t);
int args_elem_is_signed(args_elem t);
/* The CUCORE_DTYPE_* code of `t` for cucore_compare_elements (INT, UINT, FLOAT or BFLOAT). */
int args_elem_dtype(args_elem t);
/* The type named by s[0..len), or -1. */
int args_elem_parse(const char *s, size_t len);
/* The list "i8 u8 ... f64", for messages. */
const char *args_elem_list(void);

/* Parses `text` as one value of type `t` into `dst` (args_elem_sizes[t] bytes, little-endian):
 * integers exactly (decimal or 0x hex, range-checked), floating point correctly rounded to the
 * type (nan, inf accepted; a value that would round to infinity is out of range, subnormals
 * and zero are not). Returns 0, or -1 when it is not a number, -2 when out of range
 * (args_value_range says what fits). */
int args_value_parse(args_elem t, const char *text, void *dst);
/* The range of type `t`, for messages ("-128..127", "finite values -65504..65504; ..."). */
const char *args_value_range(args_elem t);
/* Element i of `buf` as a double (for summaries and tolerances). */
double args_value_get(const void *buf, args_elem t, size_t i);
/* Element i as an exact integer (integer types only). */
int64_t args_value_get_i64(const void *buf, args_elem t, size_t i);
uint64_t args_value_get_u64(const void *buf, args_elem t, size_t i);
/* Writes `v` (an index or a generated number) as element i of type t. */
void args_value_store(void *buf, args_elem t, size_t i, double v);
/* Element i as the shortest text that reads back to the same bits ("2.5", "-7",
 * "18446744073709551615", "0.1", "nan", "inf", "-inf"); returns out. */
const char *args_value_format(const void *buf, args_elem t, size_t i, char *out, size_t len);
/* A double as the shortest text that reads back to it. */
const char *args_value_format_double(double v, char *out, size_t len);
/* 1 when element i is NaN (floating types). */
int args_value_is_nan(const void *buf, args_elem t, size_t i);

/* ---- NumPy .npy files (npy.c) -------------------------------------------------------------- */
#include "npy.h"

/* ---- specs ---------------------------------------------------------------------------------- */

#define ARGS_MAX_DIMS 8

/* How a buffer or array starts. */
typedef enum args_init {
  ARGS_INIT_ZERO,
  ARGS_INIT_VALUE,
  ARGS_INIT_RANDOM,
  ARGS_INIT_IOTA,
  ARGS_INIT_LIST,
  ARGS_INIT_FILE
} args_init;

/* A device buffer the command allocates and passes by pointer. */
typedef enum args_role { ARGS_IN, ARGS_OUT, ARGS_INOUT } args_role;

typedef struct args_buf {
  char label[32];   /* "2", "3.1": the argument (and struct field) it was given for */
  const char *spec; /* the text that made it (points into argv) */
  args_elem type;
  size_t count;
  args_role role;
  int ndim; /* the shape kept for .npy outputs (a 1-D count unless an input file
                             gave another) */
  uint64_t shape[ARGS_MAX_DIMS];
  unsigned char *host; /* initial data; after the run, the results */
  const char *save;    /* ">FILE": where the results go (.npy or raw .bin), or NULL */
  int save_failed;     /* 1 when writing `save` failed (the report then says null) */
  cucore_devptr ptr;   /* on the device, 0 before allocation */
} args_buf;

/* A pointer to patch into a blob once buffers are allocated. */
typedef struct args_patch {
  size_t offset;
  int buf; /* index into the buffer list */
} args_patch;

typedef enum args_item_kind { ARGS_SCALAR, ARGS_POINTER, ARGS_BLOB } args_item_kind;

/* One value for a kernel parameter or a module variable. */
typedef struct args_item {
  args_item_kind kind;
  args_elem type; /* ARGS_SCALAR */
  unsigned char scalar[8];
  int buf;              /* ARGS_POINTER: the buffer, or -1 for a raw address */
  uint64_t address;     /* ARGS_POINTER with buf -1 (null: 0) */
  unsigned char *bytes; /* ARGS_BLOB: struct, array or bytes, laid out */
  size_t size, align;
  args_patch *patches; /* ARGS_BLOB: buffer pointers inside it */
  int patch_count;
  char *layout; /* ARGS_BLOB from a struct: "f32@0 i32@4 pad 4 f64@8" for messages */
} args_item;

typedef struct args_arg {
  const char *spec;
  args_item v;
} args_arg;

/* --global NAME=SPEC */
typedef struct args_global_set {
  const char *text;
  char *name;
  args_item v;
  cucore_global g; /* on the device */
} args_global_set;

/* --read-global NAME[:TYPE[N][>FILE]] */
typedef struct args_global_read {
  const char *text;
  char *name;
  args_elem type;
  size_t count; /* 0: the whole variable */
  int has_type;
  const char *save;
  int save_failed;     /* 1 when writing `save` failed */
  unsigned char *host; /* the values read */
  cucore_global g;
} args_global_read;

/* --expect ARG=VALUE */
#define ARGS_EXPECT_SHOWN 10
typedef struct args_expect {
  const char *text;
  char *target; /* a buffer label ("2", "3.1") or a --read-global name */
  args_init init;
  char *value_text;      /* the VALUE as given */
  unsigned char *values; /* the values made before the launch (args_expect_prepare), or NULL */
  size_t values_count;
  /* after the comparison */
  size_t count; /* elements compared */
  size_t mismatches;
  int shown; /* entries below */
  size_t bad_index[ARGS_EXPECT_SHOWN];
  char got[ARGS_EXPECT_SHOWN][48], want[ARGS_EXPECT_SHOWN][48];
  int ndim; /* the target's shape, for multi-dimensional indices */
  uint64_t shape[ARGS_MAX_DIMS];
  int exact;                       /* 1: integers compared exactly (no tolerance given) */
  double max_abs_err, max_rel_err; /* over the mismatches (inf: a NaN or infinity differs) */
} args_expect;

/* Every value spec of one command line and what the specs made: the --arg values in the
 * kernel's order, the buffers they allocate, the module variables written (--global) and read
 * (--read-global), the --expect checks and their tolerances. `cucore run` and `cucore tune`
 * each hold one; args_set_free releases it. */
typedef struct args_set {
  args_arg *args;
  int nargs;
  args_buf *bufs;
  int nbufs;
  size_t bufs_cap;
  args_global_set *sets;
  int nsets;
  args_global_read *reads;
  int nreads;
  args_expect *expects;
  int nexpects;
  char **exprs; /* "&NAME" name expressions made for module variables */
  int nexprs;
  size_t exprs_cap;
  double rtol, atol; /* --rtol, --atol of the --expect checks */
  int has_rtol, has_atol;
} args_set;

/* ---- the whole options (args_set.c) ------------------------------------------------------- */

/* Parses one --arg SPEC into `a`, adding the buffers it makes to s->bufs (labelled from
 * `index`). Returns 0, or an exit code after printing the reason (2 for a malformed spec, 1
 * for a file that cannot be used). */
int args_set_parse_arg(args_set *s, const char *spec, int index, args_arg *a);
/* --global NAME=SPEC, --read-global NAME[:TYPE[N]][>FILE], --expect ARG=VALUE. */
int args_set_parse_global(args_set *s, const char *text, args_global_set *g);
int args_set_parse_read(const char *text, args_global_read *r);
int args_set_parse_expect(const char *text, args_expect *e);
/* Keeps "&NAME" in s->exprs (the last entry). Returns 0 or -1 (out of memory). */
int args_set_keep_expr(args_set *s, const char *name);
/* Frees everything the specs made and the set's arrays; the set is left empty. */
void args_set_free(args_set *s);

/* ---- one value (args_item.c) ----------------------------------------------------------------- */

/* A cursor over one spec, for parsing and messages (args_cursor.c). */
typedef struct args_cursor {
  const char *flag; /* "--arg", "--global" */
  const char *all;  /* the whole text, quoted in messages */
  const char *p, *end;
  args_set *o;    /* where buffers made here go (NULL: none may be made) */
  char label[32]; /* the label buffers made here get */
  int depth;
} args_cursor;

/* Parses one item (scalar, pointer, array, struct, bytes, buffer) ending at `end`. */
int args_item_parse(args_cursor *c, const char *end, args_item *v);
/* Frees what parsing an item allocated. */
void args_item_free(args_item *v);

/* ---- the spec cursor (args_cursor.c) --------------------------------------------------------- */

/* Prints "cucore VERB: FLAG `SPEC`: <message>" and returns CLI_EXIT_USAGE. */
int args_cursor_usage(const args_cursor *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* `word` at p (before end), as a whole word of the spec. */
int args_cursor_starts(const char *p, const char *end, const char *word);
/* p..end copied, NUL-terminated (malloc'd; the command exits when out of memory). */
char *args_cursor_dup(const char *p, const char *end);

/* ---- buffers, arrays and their fills (args_fill.c) ------------------------------------------- */

/* A buffer or array value: TYPE[N][=INIT]. */
int args_fill_buffer(args_cursor *c, const char *end, args_item *v);
/* The usage error for a value args_value_parse refused (r: -1 not a number, -2 out of range),
 * with the type's range. */
int args_fill_bad_value(args_cursor *c, int r, const char *what, const char *text, args_elem t,
                        const char *alternatives);
/* `TYPE[N]` at *pp: the type and count (0 for `[]` when allow_empty); *pp moves past `]`. */
int args_fill_type_count(args_cursor *c, const char **pp, const char *end, args_elem *type,
                         size_t *count, int allow_empty);
/* Fills `count` elements of `type` from INIT text (a number, iota, random, {list} or @file;
 * @file may set *count when it was 0, and the shape). Returns 0 or an exit code. */
int args_fill_values(args_cursor *c, const char *init, size_t init_len, args_elem type,
                     size_t *count, unsigned char **data, int *ndim, uint64_t *shape);
/* Deterministic random numbers for `random` fills (--seed sets the start; 0: the default). */
uint64_t args_fill_random_next(void);
void args_fill_random_seed(unsigned long long seed);

/* ---- data files (args_data.c) ---------------------------------------------------------------- */

/* Reads a .npy or raw file of `type` for `what`; *count 0 takes the file's count. */
int args_data_read(const char *what, const char *path, args_elem type, size_t *count,
                   unsigned char **data, int *ndim, uint64_t *shape);
/* Writes `count` elements of `type` to PATH (.npy with `shape`, else raw bytes). */
int args_data_write(const char *what, const char *path, args_elem type, size_t count,
                    const void *data, int ndim, const uint64_t *shape);
/* One output file's check before any work: `what` names it in messages; bf16 not to .npy,
 * and cli_output_check. 0 or CLI_EXIT_USAGE. */
int args_data_check_output(const char *what, const char *path, args_elem type);

/* ---- binding to a kernel and a module (args_bind.c) ------------------------------------------ */

/* Binds every --arg to `args` (buffers at their current device address, 0 before they are
 * allocated). Returns 0, or 1 after printing which argument the kernel refused and why. */
int args_bind_all(const args_set *s, cucore_args *args, cucore_object *obj, const char *symbol);
/* Writes every --global value into the module variable of `obj` on `dev` (sizes must match:
 * else the message names both). 0 or an exit code after printing why. */
int args_bind_write_globals(args_set *s, cucore_device *dev, cucore_object *obj);
/* The code of the object read offline, PTX types attached (NULL when it cannot be read). */
cucore_binary *args_bind_read_code(cucore_object *obj);
/* Without a GPU: every --global and --read-global against the module variables of the code
 * read offline (each exists; sizes fit). 0 or an exit code after printing why. */
int args_bind_check_globals(args_set *s, cucore_object *obj);
/* A value's bytes as they go to the device (buffers' addresses patched in); malloc'd. */
unsigned char *args_bind_item_bytes(const args_set *s, const args_item *v, size_t *size);
/* 1 when `name` is a plain C identifier (its own symbol; no name expression needed). */
int args_bind_plain_name(const char *name);
/* The symbol of module variable `name`: for a C++ name (ns::coef<float>) the lowered name of
 * the expression "&NAME" registered at compile time, else `name` itself. */
const char *args_bind_global_symbol(cucore_object *obj, const char *name, char *buf, size_t len);
/* The C++ type of parameter `index` of the kernel (for messages), or NULL. */
const char *args_bind_param_type(cucore_object *obj, const char *symbol, int index, char *buf,
                                 size_t len, char *sig, size_t siglen);

/* ---- --expect (args_expect.c) ---------------------------------------------------------------- */

/* Before the launch, on any machine: every --expect's file read, value parsed and count
 * checked against its target (the values kept for the comparison). Returns 0, or
 * CLI_EXIT_USAGE after printing why. */
int args_expect_prepare(args_set *s);
/* Compares every --expect with its target and stores the results in it. Returns the number of
 * expectations that failed, or -1 after printing why one could not be compared (exit 1). */
int args_expect_check(args_set *s);
/* 1 when the expectation's target exists (a buffer label or a --read-global name). */
int args_expect_target_known(const args_set *s, const char *target);

#endif
