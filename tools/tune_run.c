/* tune_run.c -- `cucore tune` as a client of the library's tune (cucore_tune_run): the --arg
 * specs become the tune's buffers and a bind callback (args_bind_all with the pointers the
 * library gives), the --expect specs its check callback, the progress line and the notes go
 * to stderr, the compiles to the worker processes (tune_worker.c); the report's summary and
 * rows are read into the command's state for every output format. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tune.h"

int tune_parse_specs(tune_ctx *c) {
  args_set *o = &c->specs;
  const tune_line *l = c->line;
  o->rtol = l->rtol, o->atol = l->atol, o->has_rtol = l->has_rtol, o->has_atol = l->has_atol;
  args_fill_random_seed(l->seed);
  o->args = calloc((size_t)(l->args.n ? l->args.n : 1), sizeof *o->args);
  o->expects = calloc((size_t)(l->expects.n ? l->expects.n : 1), sizeof *o->expects);
  if (!o->args || !o->expects) return cli_fail("tune", "options", CUCORE_HOST_OUT_OF_MEMORY);
  for (int i = 0; i < l->args.n; i++) {
    int rc = args_set_parse_arg(o, l->args.v[i], i, &o->args[i]);
    o->nargs = i + 1;
    if (rc) return rc;
  }
  o->sets = calloc((size_t)(l->globals.n ? l->globals.n : 1), sizeof *o->sets);
  if (!o->sets) return cli_fail("tune", "options", CUCORE_HOST_OUT_OF_MEMORY);
  for (int i = 0; i < l->globals.n; i++) {
    int rc = args_set_parse_global(o, l->globals.v[i], &o->sets[i]);
    o->nsets = i + 1;
    if (rc) return rc;
  }
  for (int i = 0; i < l->expects.n; i++) {
    int rc = args_set_parse_expect(l->expects.v[i], &o->expects[i]);
    o->nexpects = i + 1;
    if (rc) return rc;
    if (!args_expect_target_known(o, o->expects[i].target))
      return cli_usage("tune", "--expect %s: no buffer argument is `%s`", l->expects.v[i],
                       o->expects[i].target);
  }
  return args_expect_prepare(o);
}

/* The bind callback: the buffers at the library's pointers, every --arg bound. */
static cucore_status bind(void *user, cucore_object *obj, const char *symbol,
                          const cucore_devptr *ptrs, cucore_args *args) {
  tune_ctx *c = user;
  args_set *o = &c->specs;
  early_gpu_release(); /* the tune has the device open now (cmd_tune.c made it early) */
  for (int i = 0; i < o->nbufs; i++) o->bufs[i].ptr = ptrs[i];
  if (args_bind_all(o, args, obj, symbol)) return CUCORE_INVALID_ARGUMENT;
  if (!o->nsets) return CUCORE_OK;
  cucore_device *dev = NULL; /* the module variables of this configuration's module */
  cucore_status st = cucore_device_open((int)c->line->device, &dev);
  int rc = st == CUCORE_OK ? args_bind_write_globals(o, dev, obj) : 1;
  cucore_device_close(dev);
  return rc ? CUCORE_INVALID_ARGUMENT : CUCORE_OK;
}

/* The check callback: the outputs against every --expect. */
static int check(void *user, const void *const *host, char **detail, double *max_abs,
                 double *max_rel) {
  args_set *o = &((tune_ctx *)user)->specs;
  for (int i = 0; i < o->nbufs; i++)
    if (o->bufs[i].role != ARGS_IN)
      memcpy(o->bufs[i].host, host[i], o->bufs[i].count * (size_t)args_elem_sizes[o->bufs[i].type]);
  int failed = args_expect_check(o);
  if (failed <= 0) return failed;
  int said = 0;
  for (int i = 0; i < o->nexpects; i++) {
    const args_expect *e = &o->expects[i];
    if (!e->mismatches) continue;
    if (e->max_abs_err > *max_abs) *max_abs = e->max_abs_err;
    if (e->max_rel_err > *max_rel) *max_rel = e->max_rel_err;
    if (said++) continue;
    if (asprintf(detail,
                 "--expect %s: %zu of %zu differ, first at [%zu]: got %s, want %s, max abs error "
                 "%g, max rel error %g",
                 e->target, e->mismatches, e->count, e->shown ? e->bad_index[0] : 0,
                 e->shown ? e->got[0] : "?", e->shown ? e->want[0] : "?", e->max_abs_err,
                 e->max_rel_err) < 0)
      *detail = NULL;
  }
  return 1;
}

/* "[ 12/120] 3.1 s left" on a terminal ("compiles [...]" while a dry run compiles), rewritten in
 * place; cleared when screening (or the compiles) end. */
static void progress(void *user, const cucore_tune_progress *p) {
  const tune_ctx *c = user;
  if (c->line->json || c->line->device_child || !isatty(2)) return;
  if (p->finished) {
    text_terminal_control("\r\033[K");
    return;
  }
  fprintf(stderr, "\r\033[K%s[%5zu/%zu] %.1f s left", p->compiling ? "compiles " : "", p->done,
          p->total, p->eta_s);
}

static void note(void *user, const char *text) {
  const tune_line *l = ((const tune_ctx *)user)->line;
  if (l->device_child)
    fprintf(stderr, "cucore tune (device %lld): note: %s\n", l->device, text);
  else
    fprintf(stderr, "cucore tune: note: %s\n", text);
}

/* The --arg buffers as the library's. */
static cucore_tune_buffer *buffers_of(const args_set *o) {
  cucore_tune_buffer *b = calloc((size_t)(o->nbufs ? o->nbufs : 1), sizeof *b);
  for (int i = 0; b && i < o->nbufs; i++) {
    const args_buf *r = &o->bufs[i];
    b[i].label = r->label;
    b[i].role = r->role == ARGS_IN    ? CUCORE_TUNE_IN
                : r->role == ARGS_OUT ? CUCORE_TUNE_OUT
                                      : CUCORE_TUNE_INOUT;
    b[i].elem = r->type == ARGS_BF16           ? CUCORE_TUNE_ELEM_BFLOAT16
                : args_elem_is_float(r->type)  ? CUCORE_TUNE_ELEM_FLOAT
                : args_elem_is_signed(r->type) ? CUCORE_TUNE_ELEM_INT
                                               : CUCORE_TUNE_ELEM_UINT;
    b[i].elem_size = (size_t)args_elem_sizes[r->type];
    b[i].count = r->count;
    b[i].host = r->host;
  }
  return b;
}

/* What the buffers mean beyond their contents: the --arg and --expect specs (a stored "ok"
 * is only reused under the same checks). */
static char *identity(const tune_line *l) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (!f) return NULL;
  for (int i = 0; i < l->args.n; i++) fprintf(f, "arg %s\n", l->args.v[i]);
  for (int i = 0; i < l->globals.n; i++) fprintf(f, "global %s\n", l->globals.v[i]);
  for (int i = 0; i < l->expects.n; i++) fprintf(f, "expect %s\n", l->expects.v[i]);
  if (fclose(f) == 0) return text;
  free(text);
  return NULL;
}

cucore_tune_strategy tune_search_strategy(const tune_line *l) {
  int k = l->strategy_given ? l->strategy - TUNE_STRATEGY_SEARCH : -1;
  return k >= 0 && k < CUCORE_TUNE_STRATEGY_COUNT ? (cucore_tune_strategy)k
                                                  : CUCORE_TUNE_STRATEGY_BAYES;
}

/* The command line as the library's options. */
static cucore_tune_run_options options_of(tune_ctx *c, const char *ident) {
  const tune_line *l = c->line;
  const char *arch = cli_source_arch(c->src);
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  cucore_tune_run_options o = CUCORE_TUNE_RUN_DEFAULTS;
  o.dry_run = l->dry_run;
  o.arch = arch ? atoi(strchr(arch, '_') ? strchr(arch, '_') + 1 : arch) : 0;
  o.sm_count = (int)l->sm_count;
  o.jobs = l->jobs ? (int)l->jobs : cores > 2 ? (int)cores - 1 : 1;
  o.compile_timeout_s = l->compile_timeout, o.store_path = l->db, o.fresh = l->fresh;
  o.store_dir = l->db_dir, o.device = (int)l->device, o.report_only = l->report_only;
  o.shard_index = l->shard_index, o.shard_count = l->shard_count;
  o.shard_own_only = l->shard_own_only;
  o.retime_finalists = l->retime_finalists;
  if (l->device_child && l->shard_count > 1) o.finalists = 0; /* the parent re-times them all */
  o.max_noise = l->max_noise;
  o.launch_mode = l->launch_mode     ? l->launch_mode
                  : l->launch_single ? CUCORE_TUNE_LAUNCH_SINGLE
                                     : CUCORE_TUNE_LAUNCH_AUTO;
  o.cold = l->cache_hot ? CUCORE_TUNE_COLD_NONE : (cucore_tune_cold)l->cold_mode;
  o.finalists = (int)l->finalists, o.model_first = l->model_first;
  o.top_fraction = l->top_fraction, o.min_occupancy = l->min_occupancy;
  o.no_spills = l->no_spills, o.poison = l->poison, o.nvrtc_minimal = l->nvrtc_minimal;
  o.no_racing = l->no_racing;
  o.rtol = l->has_rtol ? l->rtol : -1, o.atol = l->has_atol ? l->atol : -1;
  o.identity = ident;
  o.source_name = l->file;
  o.max_rows = l->max_rows;
  if (l->max_evals) { /* a search (check_line refused the rest) */
    o.max_evals = (uint64_t)l->max_evals, o.strategy = tune_search_strategy(l), o.seed = l->seed;
    o.batch = (size_t)l->batch, o.time_limit_s = l->time_limit;
    o.strategy_options = l->strategy_options;
  }
  o.user = c;
  o.bind = bind, o.check = c->specs.nexpects ? check : NULL;
  o.progress = progress, o.note = note, o.compile = tune_worker_compile;
  return o;
}

/* The report's summary and rows into c. */
static int read_report(tune_ctx *c) {
  if (cucore_tune_report_get_summary(c->report, &c->sum) != CUCORE_OK)
    return cli_fail("tune", "the report", cucore_last_status());
  c->rows = calloc(c->sum.rows ? c->sum.rows : 1, sizeof *c->rows);
  if (!c->rows) return cli_fail("tune", "the report", CUCORE_HOST_OUT_OF_MEMORY);
  for (c->nrows = 0; c->nrows < c->sum.rows; c->nrows++)
    cucore_tune_report_get_row(c->report, c->nrows, &c->rows[c->nrows]);
  return 0;
}

int tune_run(tune_ctx *c) {
  char *ident = identity(c->line); /* whole: the store's key depends on every spec */
  cucore_tune_run_options o = options_of(c, ident);
  cucore_tune_buffer *b = buffers_of(&c->specs);
  c->workers = tune_workers_new(c, o.jobs + 1);
  if (!b || !c->workers || !ident) {
    free(b);
    free(ident);
    return cli_fail("tune", "the tune", CUCORE_HOST_OUT_OF_MEMORY);
  }
  cucore_status st = cucore_tune_run(c->space, c->src->opts, b, (size_t)c->specs.nbufs, &o,
                                     &c->report);
  free(b);
  free(ident);
  tune_workers_free(c->workers);
  c->workers = NULL;
  if (st != CUCORE_OK) return cli_fail("tune", o.dry_run ? "the space" : "the tune", st);
  return read_report(c);
}
