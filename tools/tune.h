/* tune.h -- what the parts of `cucore tune` share: the command line (cmd_tune.c), the
 * parallel compiles of the distinct configurations and the model's verdicts
 * (tune_compile.c), and the report (tune_report.c). Public API only. */
#ifndef CUCORE_CLI_TUNE_H
#define CUCORE_CLI_TUNE_H

#include "run.h"

/* The verb's command line (its table in cmd_tune.c). */
typedef struct tune_line {
  const char *file, *kernel, *space;
  cli_list params, restricts;
  const char *grid, *block, *smem, *problem_size;
  int dry_run, json, no_spills;
  double min_occupancy;
  long long jobs, sm_count;
  /* measuring (tune_gpu.c, tune_check.c) */
  cli_list args, expects;
  double rtol, atol, max_noise;
  int has_rtol, has_atol, poison, cache_hot, fresh, launch_single;
  int launch_mode; /* --launch-mode: CUCORE_TUNE_LAUNCH_* (0 auto) */
  int cold_mode;   /* --cold: TUNE_COLD_* */
  long long finalists;
  unsigned long long seed;
  const char *db, *csv, *emit_header, *t4, *plot;
  int model_first; /* --strategy model-first */
  double
      compile_timeout; /* --compile-timeout S: a compile process is stopped after S (0: no limit) */
  double top_fraction; /* --top-fraction F (0: all) */
} tune_line;

/* --cold flush|rotate|none (the order of its choices). */
#define TUNE_COLD_FLUSH 0
#define TUNE_COLD_ROTATE 1
#define TUNE_COLD_NONE 2

/* How many of the best configurations the reports list: by the model's score in a dry run
 * (tune_report.c), by median once measured (tune_result.c). */
#define TUNE_TOP 10

/* One configuration as the dry run reports it. */
typedef struct tune_row {
  cucore_tune_config cfg;
  cucore_tune_model model;
  int compiled; /* 1 when the model ran on its cubin */
  int registers, static_shared, local_bytes;
  double compile_ms;
  int cache_hit;
  char error[200]; /* the compile's failure, first line */
  /* measured (or resumed from the store) */
  char status[24];  /* "ok", "wrong-answer", "launch-error", ...; "" when not measured */
  char detail[200]; /* what went wrong */
  int resumed;      /* 1: the result came from the store */
  cucore_tune_stats stats;
  int batch;
  int mode;         /* the CUCORE_TUNE_LAUNCH_* it was timed with */
  int sm_clock_mhz; /* the median SM clock of its samples; -1 not observed */
  int throttled;    /* samples discarded: the clocks were held down */
  int has_error;    /* a mismatch: the largest errors below */
  double max_abs_err, max_rel_err;
  int finalist; /* 1: re-timed interleaved */
} tune_row;

/* One distinct compile: the configurations that share it, its cubin and resources. */
typedef struct tune_group {
  uint64_t hash;
  uint64_t index; /* a configuration of the group (its defines and kernel name) */
  int ok, cache_hit;
  int deferred;       /* 1: every configuration came from the store; not compiled (yet) */
  cucore_object *obj; /* kept for measuring (NULL in a dry run or after a failure) */
  char symbol[512];   /* the kernel's symbol in obj */
  cucore_kernel_resources res;
  int local_bytes;
  double ms;
  char error[200];
} tune_group;

/* The compile pipeline: workers take groups in order and hand finished ones to the consumer
 * (the GPU thread, or the dry run) in the order they finish. */
typedef struct tune_pipe tune_pipe;

/* The state of one tune. */
typedef struct tune_ctx {
  tune_line *line;
  cli_source *src;
  cucore_tune_space *space;
  char *source; /* the kernel's source text */
  size_t source_size;
  int arch; /* 0 when no arch is known: no compile stage */
  cucore_arch_limits limits;
  cucore_tune_counts counts;
  tune_row *rows; /* the configurations past restrictions */
  size_t nrows;
  size_t compiles, compile_failures, cache_hits, model_rejected;
  double compile_wall_ms;
  int jobs;
  int keep_objects; /* 1: groups keep their objects for measuring */
  tune_group *groups;
  size_t ngroups;
  tune_pipe *pipe;
  /* measuring */
  run_opts o; /* the --arg buffers and --expect checks, as cucore run has them */
  struct tune_dev *dev;
  cucore_tune_store *store;
  char key[65], device_fp[1024];
  char space_digest[65];
  char store_path[4200];             /* where the results went, and how many it holds */
  size_t store_records;              /* of the --space file's text ("" without one) */
  double gpu_ms, verify_ms, wait_ms; /* the time split */
  double last_timed_ms; /* when the last configuration's timing ended (cli_now_ms; 0 none) */
  size_t measured, resumed, wrong, failed, skipped;
  int have_best;
  size_t best;          /* the row that won */
  size_t ties;          /* rows that tie with it */
  double t_start;       /* when measuring began (the progress line's ETA) */
  struct tune_rot *rot; /* --cold rotate: the copies (NULL: none) */
  int observe_clock;    /* 1: NVML answers, the SM clock is read per sample */
  unsigned resets;      /* device resets after kernel faults (kernels made again) */
  size_t faults;        /* rows that faulted */
  int lost;             /* 1: the device did not come back after a reset */
} tune_ctx;

/* Starts ctx->jobs compile threads (each driving a compile process, tune_worker.c) over the
 * distinct compiles of the runnable rows. Returns 0 or an exit code. */
int tune_compile_start(tune_ctx *ctx);
/* The next finished group (blocking until one is), its rows judged by the occupancy model;
 * NULL when every group was handed out. */
tune_group *tune_compile_next(tune_ctx *ctx);
/* A deferred group (its configurations all from the store) compiled now, for a finalist:
 * 0, or -1 with g->error. Already compiled: its result. */
int tune_compile_now(tune_ctx *ctx, tune_group *g);
/* Every runnable configuration the store has a result for marked resumed (before the compiles
 * start, so that groups of resumed configurations are not compiled). */
void tune_resume_stored(tune_ctx *ctx);
/* Joins the threads and frees the pipeline and the groups' objects. */
void tune_compile_finish(tune_ctx *ctx);
/* A compile process (tune_worker.c): one per compile thread, started at its first compile,
 * started again after a crash or a time-out. */
typedef struct tune_worker tune_worker;
tune_worker *tune_worker_new(void);
/* Stops the process (if any) and frees w; NULL is a no-op. */
void tune_worker_free(tune_worker *w);
/* Compiles `kernel` (a name expression) with `options` (the configuration's, one per line) in
 * w's process: 0 with the cubin in *cubin (malloc'd), g->symbol, g->ms and g->cache_hit set;
 * -1 with g->error ("compile error: ...", "compile timeout: ..."). */
int tune_worker_compile(tune_worker *w, const tune_ctx *ctx, tune_group *g, const char *kernel,
                        const char *options, unsigned char **cubin, size_t *size);
/* Dry run: every group compiled and judged, nothing measured. */
int tune_compile_all(tune_ctx *ctx);
/* Measures every configuration that can run on the GPU (device 0), pipelined with the
 * compiles, verified, stored; finalists re-timed interleaved. Returns 0 or an exit code. */
int tune_measure_all(tune_ctx *ctx);
/* The finalists (the best --finalists by median, and every one that ties with the best)
 * re-timed in interleaved rounds, the order rotated each round, and recorded again; when
 * nothing was measured in this run (all from the store) the stored results decide, so a
 * resumed tune measures nothing. Sets ctx->best and ctx->ties. */
void tune_finalists(tune_ctx *ctx);
/* Appends row r's result to the store (a later record of a configuration wins). */
void tune_record_row(tune_ctx *ctx, const tune_row *r);
/* A group's kernel with the tune's arguments bound. 0, or -1 (cucore_last_error says why). */
int tune_kernel_of(tune_ctx *ctx, const tune_group *g, cucore_kernel **k, cucore_args **a);
/* The launch and the timing options of a row. */
cucore_launch_config tune_launch_of(const tune_ctx *ctx, const tune_row *r);
cucore_tune_timing_options tune_timing_of(const tune_ctx *ctx);

/* ---- kernel faults (tune_recover.c) ---- */
/* 1 when the device has faulted (every later call would fail). */
int tune_device_faulted(tune_ctx *ctx);
/* Row r recorded as "fault" (its detail kept after the reason). */
void tune_mark_fault(tune_ctx *ctx, tune_row *r);
/* Everything on the device let go, the device closed and opened again, the buffers made
 * again; ctx->resets counted. 0, or -1 with ctx->lost set. */
int tune_recover(tune_ctx *ctx, const tune_row *r);
/* After a failed row r: on a fault, r marked and the device recovered. */
void tune_after_row(tune_ctx *ctx, tune_row *r);
/* The device after a fault (tune_check.c): let go and opened again, buffers made again. */
int tune_dev_reopen(tune_ctx *ctx);

/* ---- timing (tune_time.c), --cold rotate (tune_rotate.c), one row (tune_one.c) ---- */
/* Whether NVML answers for device 0 (else a note on stderr): ctx->observe_clock. */
void tune_clock_probe(tune_ctx *ctx);
/* Times row r (o from tune_timing_of) with the rotated argument sets when there are any. */
cucore_status tune_time(tune_ctx *ctx, cucore_kernel *k, cucore_args *a, const tune_row *r,
                        cucore_tune_timing_options *o, cucore_tune_timing *t);
/* With --cold rotate: the copies past 2 x L2 (else a note, and the flush). */
void tune_rotate_open(tune_ctx *ctx);
void tune_rotate_close(tune_ctx *ctx);
int tune_rotating(const tune_ctx *ctx);
int tune_rotate_sets(const tune_ctx *ctx);
/* The extra argument sets of group g's kernel k, each bound to its copies. 0 or -1. */
int tune_rotate_bind(tune_ctx *ctx, const tune_group *g, cucore_kernel *k, cucore_args ***sets);
void tune_rotate_unbind(const tune_ctx *ctx, cucore_args **sets);
/* One runnable row (tune_one.c): from the store, or reset, launched, verified, timed and
 * stored. */
void tune_measure_one(tune_ctx *ctx, cucore_kernel *k, cucore_args *a, tune_row *r);
/* The progress line on a terminal. */
void tune_progress(tune_ctx *ctx);
/* --strategy model-first (tune_order.c): every compile first, then the rows measured best
 * model score first; with --top-fraction F only the best-scored F of them. */
void tune_measure_model_first(tune_ctx *ctx);
/* The --arg and --expect specs parsed into ctx->o (before any work; tune_gpu.c). 0 or an exit
 * code. */
int tune_parse_specs(tune_ctx *ctx);

/* ---- the data of a measured tune (tune_check.c) ---- */
/* Opens device 0, allocates and fills every buffer and keeps pristine copies of inputs. */
int tune_dev_open(tune_ctx *ctx);
/* Before a checked launch: inputs and in-place buffers restored, outputs zeroed or poisoned. */
cucore_status tune_dev_reset(tune_ctx *ctx);
/* After it: the outputs compared with --expect, or with the first configuration that ran;
 * 0 when right, 1 wrong (r->detail says how), -1 when the data could not be read. */
int tune_dev_verify(tune_ctx *ctx, tune_row *r);
void tune_dev_close(tune_ctx *ctx);
cucore_stream *tune_dev_stream(const tune_ctx *ctx);
size_t tune_dev_l2(const tune_ctx *ctx);
cucore_device *tune_dev_device(const tune_ctx *ctx);

/* The measured part of the report (tune_result.c): the top 10 by median, the winner and
 * its ties, the `cucore run` command that reproduces it, the time split, the store. */
void tune_report_measured(const tune_ctx *ctx);
void tune_report_measured_json(const tune_ctx *ctx, json_out *j);

/* --csv FILE and --emit-header FILE (tune_output.c). 0 or an exit code. */
int tune_write_csv(const tune_ctx *ctx, const char *path);
int tune_write_header(const tune_ctx *ctx, const char *path);
/* --plot FILE.svg (tune_plot.c): measured time against each parameter and the model's
 * occupancy. */
int tune_write_plot(const tune_ctx *ctx, const char *path);
/* --t4 FILE: the results as TuningSchema T4 JSON (Kernel Tuner, KTT and BAT read it). */
int tune_write_t4(const tune_ctx *ctx, const char *path);
/* Spearman's rank correlation between the model's score and the measured median over the
 * verified rows (1: the model ordered them exactly as measured); NAN under 3 rows. */
double tune_model_agreement(const tune_ctx *ctx, size_t *count);

/* Prints the dry run's report (text or JSON) on stdout (tune_report.c). */
void tune_report(const tune_ctx *ctx);

/* tune_one.c: a row failed with `status` and why (counted). */
void tune_row_failed(tune_ctx *c, tune_row *r, const char *status, const char *detail);

#endif
