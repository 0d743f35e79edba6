/* opt.h -- the command's one option table and reader (opt.c) and its one number reader
 * (number.c). Every verb declares its flags in a table of cli_opt (name, short form, value
 * kind and range, help line); cli_opt_parse reads the verb's argv from it (`--flag value` and
 * `--flag=value` alike), hands what the table does not know to the library's compile options
 * (when the verb takes them), and answers an unknown option with the nearest known one.
 * The same table renders the verb's option list in `cucore help VERB` and the man page. */
#ifndef CUCORE_CLI_OPT_H
#define CUCORE_CLI_OPT_H

#include <stddef.h>
#include <stdio.h>

struct cli_source;

typedef enum cli_opt_kind {
  CLI_OPT_FLAG,  /* no value: the int at `offset` becomes 1 */
  CLI_OPT_TEXT,  /* a string: the const char * at `offset` (points into argv) */
  CLI_OPT_LIST,  /* a string that may be given again: appended to the cli_list at `offset` */
  CLI_OPT_INT,   /* a whole number lo..hi into the integer of `size` bytes at `offset` */
  CLI_OPT_DIMS,  /* X[,Y[,Z]] into unsigned[3] at `offset`, each checked (see cli_dims) */
  CLI_OPT_REAL,  /* a finite real number >= 0 into the double at `offset` */
  CLI_OPT_CHOICE /* one of the words of `arg` ("ptx|cubin"): its index, an int at `offset` */
} cli_opt_kind;

/* The limits of a dims value: each of x, y, z and their product (0: no product limit), and
 * what the limit is, for the message ("threads per block"). */
typedef struct cli_dims {
  unsigned max[3];
  unsigned long long product;
  const char *what;
} cli_dims;

/* The launch limits of every GPU: grid (x up to 2^31-1, y and z 65535), block (1024 threads:
 * x, y 1024, z 64) and cluster (16 blocks, the non-portable maximum; 8 is portable). */
extern const cli_dims cli_dims_grid, cli_dims_block, cli_dims_cluster;

typedef struct cli_opt {
  const char *name;  /* "--block"; NULL ends the table */
  const char *alias; /* another spelling ("-o"), or NULL */
  cli_opt_kind kind;
  size_t offset, size;  /* the field in the verb's options struct, and its size */
  size_t seen;          /* 1 + the offset of an int set to 1 when the option is given; 0: none */
  long long lo, hi;     /* CLI_OPT_INT: the range */
  const cli_dims *dims; /* CLI_OPT_DIMS: the limits */
  const char *arg;      /* the value's name in help ("N", "FILE"); CLI_OPT_CHOICE: the words */
  const char *help;     /* one line or more ('\n' starts an indented line) */
  const char *need;     /* a missing value's message, "FLAG needs NEED" ("a file name for the
                           whole compile log"); NULL: "FLAG needs a value (ARG); see ..." */
  int nonempty;         /* 1: an empty value (`--log=`) is refused as a missing one */
} cli_opt;

/* cli_opt.hi of an integer that is a block's dynamic shared memory: the most any known
 * architecture lets a block opt into (cli_smem_cap). */
#define CLI_HI_SMEM (-1LL)

/* A field of the verb's options struct T, for a table entry's designated initializers. */
#define CLI_AT(T, field) .offset = offsetof(T, field), .size = sizeof(((T *)0)->field)
#define CLI_SEEN(T, field) .seen = offsetof(T, field) + 1

/* The help of every verb's --timings (the table is phases_print's). */
#define CLI_TIMINGS_HELP                                                                      \
  "prints on stderr, at the end, the wall time of each phase of the process (process start\n" \
  "to main, each library loaded, the compile cache, the compile, ...; ms after the process\n" \
  "started) and the phases that were not needed, as `cucore run --timings` does"
/* What --json does, the same in every verb. */
#define CLI_JSON_HELP                                                            \
  "one JSON object on stdout instead of text. Without a result (a usage\n"       \
  "error, an unreadable file, no GPU...) stdout stays empty: the reason is on\n" \
  "stderr and the exit status is the one without --json"

/* The options of a verb whose only option is --json (devices, version, cache). */
typedef struct cli_json_only {
  int json;
} cli_json_only;
extern const cli_opt cli_json_opts[];

/* Strings given several times (CLI_OPT_LIST); `v` is malloc'd (free it), the strings are argv's. */
typedef struct cli_list {
  const char **v;
  int n;
  size_t cap;
} cli_list;
/* Appends `text` to the list (the list does not own it); 0 when out of memory. */
int cli_list_keep(cli_list *l, const char *text);

/* One verb's command line. */
typedef struct cli_parse {
  const char *verb;
  const cli_opt *opts;
  void *base;             /* the verb's options struct the table's offsets point into */
  struct cli_source *src; /* compile options go here; NULL when the verb takes none */
  const char **pos;       /* the operands (FILE, ACTION), up to max_pos of them */
  int max_pos, npos;
  const char *pos_name; /* "FILE" or "action", for "one FILE only" */
} cli_parse;

/* Reads argv[1..argc) as the table says. Returns 0, or an exit code (2) after printing a
 * usage error: an unknown option (with the nearest known one), a missing or malformed value,
 * a number out of its range (the message names the range), too many operands. "--" ends the
 * options. */
int cli_opt_parse(cli_parse *p, int argc, char **argv);
/* Prints the table as help lines ("  --block N        help"). */
void cli_opt_help(FILE *f, const cli_opt *opts);
/* The compile options as help lines, in the same layout: the library's (cucore_option_name,
 * cucore_option_help), then the compile's own flags (cli_source_opts). */
void cli_opt_help_compile(FILE *f);
/* Consumes argv[i] (and maybe argv[i+1]) when it is a compile option: a row of
 * cli_source_opts (--name-expr, --nvcc, --log) or one of the library's compile options. Returns
 * the number used, 0 when it is not one, -1 after printing a usage error. cli_opt_parse calls
 * it for a verb that compiles; `cucore tune` for a space file's compiler options. */
int cli_source_option(struct cli_source *s, const char *verb, int argc, char **argv, int i);
/* The value of the last --arch / -arch compile option given, or NULL. */
const char *cli_source_arch(const struct cli_source *s);

/* ---- numbers (number.c): each returns 0, or CLI_EXIT_USAGE after printing
 * "cucore VERB: FLAG `TEXT`: expected ..." naming the range ---------------------------------- */

/* A whole number (decimal) in lo..hi. */
int cli_num_int(const char *verb, const char *flag, const char *text, long long lo, long long hi,
                long long *out);
/* A finite real number >= 0. */
int cli_num_real(const char *verb, const char *flag, const char *text, double *out);
/* X[,Y[,Z]] (or XxYxZ), unused dimensions 1, each 1..its maximum, the product within limits. */
int cli_num_dims(const char *verb, const char *flag, const char *text, const cli_dims *lim,
                 unsigned d[3]);
/* Dynamic shared memory per block: 0..cli_smem_cap(), the message names the cap and its arch. */
int cli_num_smem(const char *verb, const char *flag, const char *text, long long *out);
/* The most dynamic shared memory any known architecture lets a block opt into (bytes), and
 * that architecture. */
long long cli_smem_cap(int *arch);

#endif
