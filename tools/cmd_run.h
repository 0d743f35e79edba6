/* cmd_run.h -- what the files of `cucore run` share (the run verb only): its options, the GPU
 * part (run_device.c), the output files (run_outputs.c) and the report (run_result.c). The
 * value specs it shares with `cucore tune` are the args module's (args_spec.h); the verb
 * itself, its option table and its help are cmd_run.c. Built only on the public API. */
#ifndef CUCORE_CLI_CMD_RUN_H
#define CUCORE_CLI_CMD_RUN_H

#include "args_spec.h"

/* Everything the command line said. */
typedef struct run_opts {
  const char *file, *kernel;
  unsigned grid[3], block[3], cluster[3];
  long long smem, repeat, warmup, show;
  int device, priority, has_priority, pdl, cooperative, flush_l2, json;
  const char *json_out;
  unsigned long long seed;
  args_set specs;  /* --arg, --global, --read-global, --expect, --rtol, --atol */
  long long graph; /* --graph N: kernels per graph (0: direct launches only) */
  int no_pool;     /* --no-pool: cucore_mem_alloc (the default; overrides --pool) */
  int pool;        /* --pool: the stream-ordered pool on the run's stream */
  int timings;     /* --timings: the phase table on stderr at the end */
  int connections; /* CUDA_DEVICE_MAX_CONNECTIONS in effect (early_gpu_limit_connections), -1
                      other */
} run_opts;

/* ---- the GPU part (run_device.c) ------------------------------------------------------------ */

/* Statistics of a set of times, in milliseconds. */
typedef struct run_stats {
  double min_ms, median_ms, max_ms, mean_ms;
} run_stats;

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
  /* NVML's view around the timed launches (system_facts.c): the lower SM clock
   * of the samples before and after, and every clock-event reason seen; -1 when unknown */
  int sm_clock_mhz, sm_clock_max_mhz;
  long long clock_reasons;
} run_timing;

/* Runs the kernel on the GPU as the options say and fills the results (buffers' host data,
 * read globals, timing). Returns 0 or an exit code after printing the reason. */
int run_on_device(run_opts *o, cucore_kernel *k, cucore_object *obj, run_timing *t);
/* 1 when the run times launches apart from the first (--warmup, --repeat > 1, --graph):
 * only then is the SM clock read (NVML's start cost a first result ~14 ms on two H200s). */
int run_is_timed(const run_opts *o);

/* ---- output files (run_outputs.c) ----------------------------------------------------------- */

/* Before the launch: every output file (--json-out, `>FILE` of buffers and --read-global) can
 * be written and is no input (cli_output_check), bf16 not to .npy. 0 or CLI_EXIT_USAGE. */
int run_outputs_check(const run_opts *o);
/* Writes every output that has a `>FILE` (buffers and --read-global); a failure does not stop
 * the others. Returns 0 or the first failure's exit code. */
int run_outputs_save(run_opts *o);

/* ---- the report (run_result.c) -------------------------------------------------------------- */

/* The report: text on stdout, or JSON on `j`. */
void run_result_print(run_opts *o, const run_timing *t, const char *kernel_symbol, json_out *j);
/* Effective bandwidth numbers: bytes read and written by the buffers. */
void run_result_traffic(const run_opts *o, unsigned long long *read, unsigned long long *written);
/* The statistics of times[0..n) (n >= 1), as the tune computes them (cucore_tune_stats_compute);
 * zeros after saying why when they cannot be made (out of memory). */
run_stats run_result_stats(const double *times, long long n);

#endif
