/* cli.h -- what the cucore command's verbs share. The command uses only the public API. */
#ifndef CUCORE_CLI_H
#define CUCORE_CLI_H

#include "cucore.h"

#include <errno.h>
#include <stdio.h>

#include "opt.h"

/* Exit codes, documented in `cucore help`. */
enum {
  CLI_EXIT_OK = 0,
  CLI_EXIT_FAILURE = 1, /* the work failed (compile error, no GPU, wrong arguments to a kernel) */
  CLI_EXIT_USAGE = 2    /* the command line was wrong */
};

/* A verb, and its one help source: each verb's record is defined in its own file
 * (cmd_VERB.c) beside its option table, whose rows hold each option's help; main.c only lists
 * the records. */
typedef struct cli_verb {
  const char *name;
  int (*run)(int argc, char **argv); /* argv[0] is the verb */
  const char *summary;               /* one line for `cucore --help` */
  const char *help;                  /* the man-page-like text for `cucore help VERB`: "%o" stands
                                        for the option table, "%s" for the compile options
                                        (cli_opt_help_compile) */
  const cli_opt *opts;               /* the verb's option table (opt.h) */
} cli_verb;

/* The verb being run ("run", "tune", ...; main.c sets it): messages of parts two verbs share
 * (the --arg grammar, the checks of --expect) name the verb the user typed. */
extern const char *cli_verb_name;

/* cucore_last_error() without the C API call's name it may begin with ("cucore_x_y: "): the
 * command's user typed no C call. */
const char *cli_message(void);
/* Prints "cucore VERB: <what>: <cli_message()>" to stderr; returns CLI_EXIT_FAILURE. */
int cli_fail(const char *verb, const char *what, cucore_status st);
/* Prints a usage error to stderr and returns CLI_EXIT_USAGE. */
int cli_usage(const char *verb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The one growth step for the command's growable arrays (grow.c): `items` (NULL at first)
 * grown, doubling from 8, to hold at least `need` items of `size` bytes, *cap updated. NULL
 * when the size overflows or memory runs out, after printing "cucore: out of host memory
 * growing WHAT to N items (B bytes)" on stderr; `items` is then untouched (still the caller's
 * to free). Usage, with `cap` a size_t beside the array:
 *   T *n = cli_grow(a->v, &a->cap, a->count + 1, sizeof *n, "the list of X");
 *   if (!n) return ...; a->v = n; */
void *cli_grow(void *items, size_t *cap, size_t need, size_t size, const char *what);

/* ---- safe text (text.c) ---------------------------------------------------------------------
 * Text from binaries and the library's messages may hold control characters and bytes that
 * are not UTF-8. main() filters stdout and stderr once: such bytes are printed as \xHH, and a
 * note on stderr at exit says how many were. */
void text_guard_streams(void);
/* Writes a terminal control sequence (the progress line's erase) past the filter. */
void text_terminal_control(const char *seq);
/* Length of the valid UTF-8 sequence at p[0..n): 1..4; 0 when invalid; -1 when cut short. */
int text_utf8_len(const unsigned char *p, size_t n);
/* Escapes p[0..n) into dst (room for 4 * n bytes): valid UTF-8, '\n' and '\t' copied, every
 * other control character and invalid byte as \xHH (counted in *escaped). Stops before a
 * sequence cut short unless `final`; *used is the count of input bytes consumed. Returns the
 * bytes written. */
size_t text_escape(const unsigned char *p, size_t n, char *dst, size_t *used,
                   unsigned long long *escaped, int final);

/* ---- the JSON writer (json_write.c): one for every verb ---- */
/* Minimal JSON writer on a FILE. */
typedef struct json_out {
  FILE *f;
  int depth;
  int first[32];
  int pretty;
  unsigned long long replaced; /* invalid UTF-8 bytes written as U+FFFD so far; the top-level
                                  object ends with "invalid_utf8_replaced": N when any were */
} json_out;
void json_begin_object(json_out *j, const char *key);
void json_end_object(json_out *j);
void json_begin_array(json_out *j, const char *key);
void json_end_array(json_out *j);
void json_str(json_out *j, const char *key, const char *value); /* NULL -> null */
void json_int(json_out *j, const char *key, long long value);
void json_num(json_out *j, const char *key, double value); /* shortest exact; non-finite: null */
void json_uint(json_out *j, const char *key, unsigned long long value);
/* A double, exactly (the shortest text that reads back to it); NaN and infinities, which JSON
 * cannot write as numbers, as the strings "nan", "inf" and "-inf". */
void json_double(json_out *j, const char *key, double value);
/* A number already formatted exactly ("2.5", "18446744073709551615", "nan" as a string). */
void json_number_text(json_out *j, const char *key, const char *text);
void json_bool(json_out *j, const char *key, int value);
/* A value written as given: `text` must be one whole JSON value (another JSON writer's
 * object, read back from where it was written). */
void json_raw(json_out *j, const char *key, const char *text);

/* ---- phases (phases.c): the library's phase table with the command's own phases ---------- */
/* Stamps the clock at main, for the process_start phase (main calls it first). */
void phases_mark_main(void);
/* Adds process_start: from the process's start to main (phases_mark_main). */
void phases_mark_process_start(void);
/* Now, for phases_add (ms after the process started). */
double phases_now(void);
/* Adds the command's phase `phase`, from `start_ms` (phases_now) to now. */
void phases_add(cucore_phase phase, double start_ms);
/* The "phases" object of a JSON report: every phase that ran so far, by its start. */
void phases_json(json_out *j);
/* The --timings table, and the phases that did not run, on `f`. */
void phases_print(FILE *f);
/* --timings of a verb: the phase table on stderr (stdout flushed first); nothing when !asked. */
void phases_print_timings(int asked);

/* ---- the GPU made ready early (early_gpu.c): `cucore run` and `cucore tune` ---------------
 * cuInit and device `ordinal`'s primary context on a thread of its own, beside the host's work
 * (the compile, the space), when the verb `compiles` (CUCORE_RUN_SERIAL=1 in the environment
 * turns it off, CUCORE_RUN_EARLY=1 on for code that is not compiled, for comparisons), and
 * with `nvml`, NVML's load on another. early_gpu_join waits for the context's thread (before
 * the GPU part), early_gpu_end for both (before the command returns); a second start or a join
 * without a start does nothing. */
void early_gpu_start(int ordinal, int nvml, int compiles);
/* `cucore tune`'s: cuInit alone on that thread (the store may say the tune is finished, which
 * needs no context; the library makes the context when there is something to measure). */
void early_gpu_start_init(void);
void early_gpu_join(void);
void early_gpu_end(void);
/* Joins the context's thread and closes its handle (`cucore tune`, once the tune has the
 * device open: its reset after a kernel fault must be able to destroy the context). */
void early_gpu_release(void);
/* Sets CUDA_DEVICE_MAX_CONNECTIONS=1 unless the environment names it; call before any thread
 * starts. Returns the number in effect, -1 when the user's value is not one (1..32). */
int early_gpu_limit_connections(void);

/* ---- plain-text formats (formats.c): one writer each ---- */
/* One CSV field (RFC 4180): quoted when it holds a comma, a quote, CR or LF or begins or ends
 * with a space; quotes doubled. */
void csv_field(FILE *f, const char *text);
/* One POSIX shell word: bare when it is only letters, digits and _@%+=:,./-; else in single
 * quotes (a quote written '\''). */
void shell_word(FILE *f, const char *word);

/* Compile options and name expressions given on a verb's command line: the library's compile
 * options (read by cucore_options_parse into `opts`) and the compile's own flags, the rows of
 * cli_source_opts (source.c) read by the one option reader (opt.c). */
typedef struct cli_source {
  cucore_options *opts;
  cli_list exprs; /* --name-expr EXPR, and the names a verb registers (point into argv or into
                     the verb's own strings) */
  char **raw;     /* the compile options as given (point into argv), for cli_source_arch */
  int raw_count;
  size_t raw_cap;
  int nvcc;                /* --nvcc: compile .cu files with nvcc, not NVRTC */
  char arch[32];           /* an arch a verb took as its own option (inspect --arch), for nvcc */
  const char *log_path;    /* --log FILE: the whole compile log goes there (the terminal gets
                           CLI_LOG_LINES lines of it) */
  int diagnostics;         /* set by the verb: the log on stderr as records (cli_diag_print),
                              and the program kept in `program` for its report */
  cucore_program *program; /* with `diagnostics`: the last program compiled (freed by
                              cli_source_free) */
} cli_source;
/* The compile's own flags, --name-expr, --nvcc and --log: an option table (opt.h) whose
 * offsets are into a cli_source. Every verb that compiles takes them beside the library's
 * compile options. */
extern const cli_opt cli_source_opts[];
int cli_source_init(cli_source *s);
void cli_source_free(cli_source *s);
int cli_source_add_expr(cli_source *s, const char *expr);
/* What a compile cost and where the result came from (may be ignored). */
typedef struct cli_compile_info {
  double ms; /* wall time of cucore_program_compile */
  cucore_cache_result cache;
  char cache_reason[1024]; /* why it was not cached, when it was not (the library keeps at most
                           1023 bytes of it, CC_CACHE_NOTE_MAX) */
  char cache_key[65];      /* the compile's cache key; "" when none */
  int arch;                /* the arch compiled for when the object does not say (nvcc's) */
} cli_compile_info;
/* Reads `file` (type from its extension) and makes its program with the name expressions;
 * 0, or an exit code after printing why (*prog is then NULL). */
int cli_source_program(cli_source *s, const char *verb, const char *file, cucore_program **prog);
/* A monotonic clock in milliseconds, for compile times. */
double cli_now_ms(void);
/* Reads and compiles `file` (type from its extension) to `target`; the log goes to stderr.
 * Returns 0 or an exit code after printing the reason. `info` may be NULL. */
int cli_source_compile(cli_source *s, const char *verb, const char *file, cucore_code_type target,
                       cucore_object **out, cli_compile_info *info);
/* ---- compile logs and NVRTC's failures (compile_log.c) ---- */
/* The most lines of a compile log printed on the terminal; the rest is counted. */
#define CLI_LOG_LINES 50
/* Prints the log on stderr (through the text filter), at most CLI_LOG_LINES lines and then
 * "(N more lines: --log FILE)"; with log_path, writes the whole log there too. Returns 0, or
 * -1 when the log file could not be written (said on stderr). */
int cli_log_print(const char *verb, const char *log, const char *log_path);
/* The same for a program's log read into records (cucore_program_get_diagnostic): each as
 * `file:line:col: severity: message [#N]` and the lines that belong to it (the source line and
 * caret), a line without structure as it is; the whole raw log goes to `log_path`. */
int cli_diag_print(const char *verb, const cucore_program *prog, const char *log,
                   const char *log_path);
/* Writes the program's records as the JSON array `key` (severity, file, line, column, number,
 * message); nothing when they cannot be read. */
void cli_diag_json(json_out *j, const char *key, const cucore_program *prog);
/* What an NVRTC failure is, for the nvcc fallback. */
typedef enum cli_nvrtc_failure {
  CLI_NVRTC_OTHER,    /* a syntax or type error, ...: nvcc would fail too; not tried */
  CLI_NVRTC_HOST,     /* host code or a host header: nvcc can compile it */
  CLI_NVRTC_OPTION,   /* an option NVRTC refused: the command line's error (exit 2) */
  CLI_NVRTC_NAME_EXPR /* a name expression that names nothing: never sent to nvcc */
} cli_nvrtc_failure;
/* Classifies a failed NVRTC compile from its status and log; `why` gets a line saying what
 * (for HOST, what nvcc can do that NVRTC cannot). */
cli_nvrtc_failure cli_nvrtc_classify(cucore_status st, const char *log, char *why, size_t n);

/* 1 when the toolkit's nvcc can be found. */
int cli_nvcc_available(void);
/* Compiles `file` with nvcc to `target` (cubin, PTX or fatbin), passing the compile options in
 * nvcc's spelling; the arch is --arch or the current GPU's. nvcc's messages go through
 * cli_log_print. Every --name-expr must name a kernel of the result (nvcc makes only the
 * template instances the file makes). `info` (may be NULL) gets the time and the arch.
 * Returns 0 or an exit code after printing why. */
int cli_nvcc_compile(cli_source *s, const char *verb, const char *file, cucore_code_type target,
                     cucore_object **out, cli_compile_info *info);
/* Reads a whole file (NUL-terminated, malloc'd) through cucore_file_read: regular files only
 * ("-" is standard input), at most CUCORE_FILE_MAX_BYTES_DEFAULT; returns 0, or
 * CLI_EXIT_FAILURE after printing "cucore VERB: <reason>". */
int cli_read_file(const char *verb, const char *path, char **data, size_t *size);
/* Checks that a source meant to be text (CUDA C++, PTX, NVVM IR text) is: no NUL byte, and
 * at most a tenth of it bytes that are not UTF-8 or are control characters. Returns 0, or
 * CLI_EXIT_FAILURE after printing "cucore VERB: `PATH` is not text: ... at offset N". */
int cli_check_text(const char *verb, const char *path, const char *data, size_t size);

/* The verbs, in the order `cucore --help` lists them: each record (name, run, summary, help
 * text, option table) is the verb's one help source, in its file. */
extern const cli_verb cmd_devices_verb, cmd_version_verb; /* cmd_devices.c */
extern const cli_verb cmd_compile_verb;                   /* cmd_compile.c */
extern const cli_verb cmd_inspect_verb;                   /* cmd_inspect.c */
extern const cli_verb cmd_occupancy_verb;                 /* cmd_occupancy.c */
extern const cli_verb cmd_run_verb;                       /* cmd_run.c */
extern const cli_verb cmd_tune_verb;  /* cmd_tune.c (tune_run.c over cucore_tune_run) */
extern const cli_verb cmd_cache_verb; /* cmd_cache.c (cache_tune.c) */
/* `cucore __tune-worker`: a compile process of `cucore tune` (tune_worker.c), not a user verb. */
int tune_worker_main(int argc, char **argv);
/* `cucore cache tune list|show KEY|clear [KEY]` (cache_tune.c); argv[0] is "tune". */
int cmd_cache_tune(int argc, char **argv);
/* `cucore cache key FILE [--target T] [--json] [compile options]` (cache_program_key.c). */
int cmd_cache_key(int argc, char **argv);

/* ---- outputs (outfile.c) ---------------------------------------------------------------
 * No output may be an input, and no failure leaves a half-written file: a regular file is
 * written to a temporary beside it and renamed into place only when every write succeeded
 * (its mode: the replaced file's, or what a new file gets under the umask); a non-regular
 * target (/dev/null, a FIFO) is written in place with every write and the close checked. */
/* Remembers `path` as an input of this command (device and inode; "-" is the regular file
 * behind standard input, if any; one that cannot be stat'ed is left to its reader). Every
 * reader of a user-named file calls it (compile and run: the code, each @FILE, --expect). */
void cli_input_add(const char *path);
/* Checks an output path before any work, creating and truncating nothing: not an input under
 * any spelling (symlink, hard link), not a folder, writable, in a folder that exists and takes
 * new files. Returns 0, or CLI_EXIT_USAGE after printing "cucore VERB: WHAT `PATH` ...". */
int cli_output_check(const char *verb, const char *what, const char *path);
/* A file the command reads and appends to (a store): checked as an output, except that it may
 * exist read-only (it is then read, and the command says it kept nothing); then remembered as
 * an input so that no other output can be it. */
int cli_store_check(const char *verb, const char *what, const char *path);
typedef struct cli_outfile {
  FILE *f;            /* write here */
  char *tmp, *target; /* the temporary and what it replaces; NULL when written in place */
  const char *verb, *what, *path;
  unsigned mode;
} cli_outfile;
/* Opens `path` for writing as above. Returns 0, or CLI_EXIT_FAILURE after printing why. */
int cli_out_open(cli_outfile *o, const char *verb, const char *what, const char *path);
/* ok: flushes, syncs and closes, then renames the temporary into place; returns 0, or
 * CLI_EXIT_FAILURE after printing the reason (the temporary removed, the target untouched).
 * !ok (the caller failed and said why): drops what was written; returns CLI_EXIT_FAILURE. */
int cli_out_close(cli_outfile *o, int ok);
/* cli_out_open, one write, cli_out_close. */
int cli_write_file(const char *verb, const char *what, const char *path, const void *data,
                   size_t size);
/* text.c: flushes and closes standard output (through the text filter), so that a failed
 * write or close is seen. Returns rc, or CLI_EXIT_FAILURE (when rc was 0) after printing
 * "cucore VERB: writing standard output: REASON". Called once, when the verb returns; other
 * exits (--version, --help) are checked at exit. */
int cli_close_stdout(const char *verb, int rc);

/* ---- the compile cache's configuration (cache_warn.c) --------------------------------------
 * Prints what is wrong with the cache's configuration (an unusable CUCORE_CACHE_DIR, a
 * malformed CUCORE_CACHE_MAX_BYTES or CUCORE_CACHE_DISABLE) once per run on stderr, as a
 * warning; the work goes on without the cache. Every verb that compiles calls it. */
void cli_cache_warn_once(void);
/* For verbs about the cache itself: prints the problem (once) as an error and returns 1, or
 * returns 0 when the configuration is usable. */
int cli_cache_check(const char *verb);
/* The cache's stats (cucore_cache_get_stats) into *s when they name a directory; else an exit
 * code after saying why on stderr: the call's failure (as `cucore cache: WHAT: ...`) or that
 * there is no cache directory. */
int cli_cache_dir(const char *what, cucore_cache_stats *s);

#endif
