/* tune.h -- what the parts of `cucore tune` share: the command line (cmd_tune.c), the tune
 * run through the library with the command's callbacks (tune_run.c), the compile processes
 * (tune_worker.c), and the reports and files made from the library's report (tune_report.c,
 * tune_result.c, tune_output.c, tune_plot.c). The --arg, --global and --expect specs are the
 * args module's (args_spec.h), as `cucore run` reads them. Public API only. */
#ifndef CUCORE_CLI_TUNE_H
#define CUCORE_CLI_TUNE_H

#include "args_spec.h"

/* The most GPUs --devices takes (a host with more is refused, the limit named). */
#define TUNE_DEVICES_MAX 64

/* The verb's command line (its table in cmd_tune.c). */
typedef struct tune_line {
  const char *file, *kernel, *space;
  cli_list params, restricts;
  const char *grid, *block, *smem, *problem_size;
  int dry_run, json, no_spills, timings, nvrtc_minimal, yes, no_racing;
  int dry_run_no_arch; /* a dry run with no arch: nothing is compiled */
  double min_occupancy;
  long long jobs, sm_count;
  /* measuring (the library's tune, tune_run.c) */
  cli_list args, expects, globals;
  double rtol, atol, max_noise;
  int has_rtol, has_atol, poison, cache_hot, fresh, launch_single;
  int launch_mode; /* --launch-mode: CUCORE_TUNE_LAUNCH_* (0 auto) */
  int cold_mode;   /* --cold: a cucore_tune_cold (its choices in the enum's order) */
  long long finalists;
  unsigned long long seed;
  const char *db, *csv, *emit_header, *t4, *plot;
  int model_first; /* --strategy model-first */
  int strategy;    /* --strategy: the index of its word in TUNE_STRATEGY_WORDS */
  int strategy_given;
  /* --simulate (tune_simulate.c): a recording replayed, no source, GPU or compiler */
  const char *simulate, *compare, *budgets;
  const char *strategy_options; /* --strategy-options: the search strategy's, as text */
  long long max_evals, repeats, batch;
  double time_limit; /* --time-limit S: a search proposes no batch after S seconds */
  int seed_given;
  double
      compile_timeout; /* --compile-timeout S: a compile process is stopped after S (0: no limit) */
  double top_fraction; /* --top-fraction F (0: all) */
  const char *rows;    /* --rows N|all */
  unsigned long long max_rows; /* the reports list configurations one by one up to this many
                                  (0: all); a dry run without an arch keeps no more */
  /* sharing the work (tune_shard.c) */
  long long device;    /* --device N: the GPU that measures (default 0, or the launcher's local
                        rank modulo the GPUs) */
  int device_given;    /* 1: --device was given */
  const char *shard;   /* --shard I/N (NULL: from the launcher's variables, else none) */
  const char *devices; /* --devices all|LIST: one process per GPU */
  int mixed_devices;   /* --mixed-devices: GPUs of different models allowed (each its own tune) */
  int report_only;     /* --report-only: the store's results, nothing measured */
  int shard_own_only;  /* --shard-own-only: this shard's share only */
  const char *db_dir;  /* --db-dir DIR: the store is DIR/KEY.jsonl */
  unsigned shard_index, shard_count; /* resolved (count 0: no shards) */
  const char *shard_from;  /* where they came from ("--shard", "Slurm (SLURM_PROCID ...)") */
  const char *device_from; /* where the device came from (NULL: --device or the default) */
  /* 1: one GPU's process of a --devices tune (its parent reports); 2: one GPU's process of a
   * --mixed-devices tune, which tunes its own model and prints its report for the parent to
   * pass on (no files written) */
  int device_child;
  int retime_finalists; /* 1: the --devices parent: the finalists re-timed on its device */
  int children;         /* the --devices parent: the GPUs that measured (0: none) */
  int child_devices[TUNE_DEVICES_MAX]; /* their ordinals */
} tune_line;

/* --strategy's words: the measured tune's two orders, then the search strategies
 * (cucore_tune_strategy_from_name's names) that --simulate replays. */
#define TUNE_STRATEGY_WORDS "exhaustive|model-first|random|ils|anneal|genetic|forest|bayes|default"
#define TUNE_STRATEGY_SEARCH 2 /* the index of the first search strategy's word */

/* The search strategy --strategy names: its words from TUNE_STRATEGY_SEARCH on are
 * cucore_tune_strategy's in order, then "default"; bayes when it names none (tune_run.c). */
cucore_tune_strategy tune_search_strategy(const tune_line *l);

/* The reports' default for --rows. */
#define TUNE_ROWS_LISTED 10000

/* Above this many distinct compiles a tune asks first (--yes, or a yes on a terminal). */
#define TUNE_COMPILES_ASK 10000

/* How many of the best configurations the reports list: by the model's score in a dry run
 * (tune_report.c), by median once measured (tune_result.c). */
#define TUNE_TOP 10

/* The compile processes (tune_worker.c): one per compile slot of the library's tune. */
typedef struct tune_workers tune_workers;

/* The state of one `cucore tune`: the command line, the space, and the library's report. */
typedef struct tune_ctx {
  tune_line *line;
  cli_source *src;
  const char *kernel_name; /* --kernel, else the space file's kernel_name */
  cli_list owned;          /* texts made for the command line (freed at the end) */
  cucore_tune_space *space;
  char *source; /* the kernel's source text */
  size_t source_size;
  args_set specs;        /* the --arg buffers and --expect checks, as cucore run has them */
  tune_workers *workers; /* the compile callback's processes */
  /* read from the report (cucore_tune_run) */
  cucore_tune_summary sum;
  cucore_tune_row *rows; /* the configurations past restrictions */
  size_t nrows;
  cucore_tune_report *report; /* owns sum's strings */
} tune_ctx;

/* `cucore tune --simulate FILE` (tune_simulate.c): one strategy replayed over a recording, or
 * --compare's table. Returns 0 or an exit code. */
int tune_simulate(tune_ctx *c);

/* ---- before any compile (tune_check.c) ---- */
/* A -DNAME compile option naming a parameter: exit 2. */
int tune_check_defines(const tune_ctx *c);
/* The stage counts said, parameters nothing names warned of, the compile gate. */
int tune_check_space(tune_ctx *c);
/* The --arg and --global specs against the kernel of the first configuration (compiled for
 * `arch`, 0: the compiler's default), as `cucore run` checks them. 0 or an exit code. */
int tune_check_kernel(tune_ctx *c, int arch);

/* Runs the tune through the library (tune_run.c): the --arg buffers and their binding, the
 * --expect checks, the progress line, the notes and the compile processes as its callbacks;
 * the report's rows and summary into ctx. Returns 0 or an exit code. */
int tune_run(tune_ctx *ctx);
/* The --arg and --expect specs parsed into ctx->o (before any work; tune_run.c). 0 or an exit
 * code. */
int tune_parse_specs(tune_ctx *ctx);

/* ---- the compile processes (tune_worker.c) ---- */
/* Room for `slots` compile processes (none started yet); NULL when out of memory. */
tune_workers *tune_workers_new(const tune_ctx *ctx, int slots);
/* Stops every process and frees w; NULL is a no-op. */
void tune_workers_free(tune_workers *w);
/* The library's compile callback (cucore_tune_run_options::compile); user is the tune_ctx. */
int tune_worker_compile(void *user, const cucore_tune_compile_request *q,
                        cucore_tune_compile_result *out);

/* The measured part of the report (tune_result.c): the top 10 by median, the winner and
 * its ties, the `cucore run` command that reproduces it, the time split, the store. */
void tune_report_measured(const tune_ctx *ctx);
void tune_report_measured_json(const tune_ctx *ctx, json_out *j);

/* The `cucore run` command line that reproduces row r, as shell words (malloc'd; NULL when out
 * of memory; tune_result.c). */
char *tune_run_command(const tune_ctx *c, const cucore_tune_row *r);

/* --csv FILE and --emit-header FILE (tune_output.c). 0 or an exit code. */
int tune_write_csv(const tune_ctx *ctx, const char *path);
int tune_write_header(const tune_ctx *ctx, const char *path);
/* --plot FILE.svg (tune_plot.c): measured time against each parameter and the model's
 * occupancy. */
int tune_write_plot(const tune_ctx *ctx, const char *path);
/* --t4 FILE: the results as TuningSchema T4 JSON (Kernel Tuner, KTT and BAT read it). */
int tune_write_t4(const tune_ctx *ctx, const char *path);
/* --log FILE: the compiles' errors per configuration and the distinct warnings. */
int tune_write_log(const tune_ctx *c, const char *path);

/* ---- a configuration's values (tune_values.c) ---- */
/* Text `what` of configuration `index`, whole (malloc'd; NULL when it could not be made). */
char *tune_text(const tune_ctx *c, uint64_t index, cucore_tune_text what);
/* The values of configuration `index` (malloc'd, *n of them; NULL, *n 0 when they could not be
 * read). */
cucore_tune_value *tune_values(const tune_ctx *c, uint64_t index, size_t *n);
/* One value as JSON (an integer, a real, a bool or a string: its type, not its text). */
void tune_json_value(json_out *j, const char *key, const cucore_tune_value *v);
/* Configuration `index`'s parameters as a JSON object under `key` (NULL in an array). */
void tune_json_params(const tune_ctx *c, json_out *j, const char *key, uint64_t index);

/* The verdict a row is reported with ("compile-error", "compile-timeout", else the checks'
 * verdict; tune_output.c). */
const char *tune_row_verdict(const cucore_tune_row *r);
/* The status a measured row is reported with: its result's name, or "unverified" for a row
 * that was only timed because nothing could be checked (tune_result.c). */
const char *tune_status_name(const tune_ctx *c, const cucore_tune_row *r);

/* ---- what the tune tells besides its rows (tune_notes.c) ---- */
/* Warnings, values that change nothing, restriction errors, "nothing is verified". */
void tune_notes_text(const tune_ctx *c);
void tune_notes_json(const tune_ctx *c, json_out *j);
/* On stderr: the restrictions that could not be evaluated (the first named). */
void tune_restriction_errors_warn(const tune_ctx *c);
/* The configurations that can run in the end (tune_report.c). */
size_t tune_can_run(const tune_ctx *c);

/* Prints the report (text or JSON) on stdout (tune_report.c). */
void tune_report(const tune_ctx *ctx);
/* 1 when the reports list the configurations one by one (not more than --rows). */
int tune_rows_listed(const tune_ctx *ctx);

/* ---- sharing the work (tune_shard.c) ---- */
/* --shard, else the launcher's variables (Open MPI, MPICH/Hydra, Slurm), into the line's
 * shard; --device, else the launcher's local rank modulo the GPUs; a --devices process's own
 * share from its parent. 0 or an exit code (a malformed value, --fresh with shards). */
int tune_shard_resolve(tune_line *l);
/* --devices: the GPUs checked (one model unless --mixed-devices), one process started for each
 * GPU but the first, with its share (the same command line; their reports unprinted); the
 * calling process becomes shard 0 on the first GPU and re-times the finalists of the whole
 * store. 0 (go on) or an exit code. */
int tune_devices_run(tune_ctx *c, int argc, char **argv);
/* After the tune: the --devices processes waited for (a note for each that did not end well);
 * when this process failed (`rc` not 0: it said why, and so would they), stopped first. */
void tune_devices_wait(tune_ctx *c, int rc);
/* The report's lines and JSON members of shards and devices. */
void tune_shard_text(const tune_ctx *c);
void tune_shard_json(const tune_ctx *c, json_out *j);
/* --mixed-devices, text output: the other GPUs' own reports, after this process's report. */
void tune_devices_print_reports(const tune_ctx *c);

/* How many fresh processes this tune went on in after device losses (tune_result.c: the
 * environment's CUCORE_TUNE_RESTART, which cmd_tune.c sets when it starts one). */
int tune_restarts(void);

#endif
