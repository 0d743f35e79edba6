/* tune.h -- what the parts of `cucore tune` share: the command line (cmd_tune.c), the
 * parallel compiles of the distinct configurations and the model's verdicts
 * (tune_compile.c), and the report (tune_report.c). Public API only. */
#ifndef CUCORE_CLI_TUNE_H
#define CUCORE_CLI_TUNE_H

#include "cli.h"

/* The verb's command line (its table in cmd_tune.c). */
typedef struct tune_line {
  const char *file, *kernel, *space;
  cli_list params, restricts;
  const char *grid, *block, *smem, *problem_size;
  int dry_run, json, no_spills;
  double min_occupancy;
  long long jobs, sm_count;
} tune_line;

/* One configuration as the dry run reports it. */
typedef struct tune_row {
  cucore_tune_config cfg;
  cucore_tune_model model;
  int compiled;           /* 1 when the model ran on its cubin */
  int registers, static_shared, local_bytes;
  double compile_ms;
  int cache_hit;
  char error[200];        /* the compile's failure, first line */
} tune_row;

/* One distinct compile: the configurations that share it, its cubin and resources. */
typedef struct tune_group {
  uint64_t hash;
  uint64_t index;        /* a configuration of the group (its defines and kernel name) */
  int ok, cache_hit;
  cucore_object *obj;    /* kept for measuring (NULL in a dry run or after a failure) */
  char symbol[512];      /* the kernel's symbol in obj */
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
  char *source;            /* the kernel's source text */
  size_t source_size;
  int arch;                /* 0 when no arch is known: no compile stage */
  cucore_arch_limits limits;
  cucore_tune_counts counts;
  tune_row *rows;          /* the configurations past restrictions */
  size_t nrows;
  size_t compiles, compile_failures, cache_hits, model_rejected;
  double compile_wall_ms;
  int jobs;
  int keep_objects;        /* 1: groups keep their objects for measuring */
  tune_group *groups;
  size_t ngroups;
  tune_pipe *pipe;
} tune_ctx;

/* Starts ctx->jobs compile threads over the distinct compiles of the runnable rows. Returns
 * 0 or an exit code. */
int tune_compile_start(tune_ctx *ctx);
/* The next finished group (blocking until one is), its rows judged by the occupancy model;
 * NULL when every group was handed out. */
tune_group *tune_compile_next(tune_ctx *ctx);
/* Joins the threads and frees the pipeline and the groups' objects. */
void tune_compile_finish(tune_ctx *ctx);
/* Dry run: every group compiled and judged, nothing measured. */
int tune_compile_all(tune_ctx *ctx);
/* Prints the dry run's report (text or JSON) on stdout. */
void tune_report(const tune_ctx *ctx);

#endif
