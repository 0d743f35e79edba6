/* tune_gpu.c -- `cucore tune` on the GPU: while the compile threads work, this thread takes
 * each finished compile, and for each of its configurations that the model lets run: looks it
 * up in the store (a resumed tune measures nothing twice), else resets the data, launches once
 * and checks the outputs (a wrong answer is recorded, never timed), then times it
 * (cucore_tune_time_launch: warm-up by time, cold L2, batches for short kernels, until the
 * noise goal) and appends the result to the store. Failures are data: the tune goes on. */
#include <float.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tune.h"

static const char *arg_specs(const tune_ctx *c, char *buf, size_t cap);

int tune_parse_specs(tune_ctx *c) {
  run_opts *o = &c->o;
  const tune_line *l = c->line;
  o->file = l->file, o->kernel = l->kernel;
  o->rtol = l->rtol, o->atol = l->atol, o->has_rtol = l->has_rtol, o->has_atol = l->has_atol;
  run_random_seed(l->seed);
  o->args = calloc((size_t)(l->args.n ? l->args.n : 1), sizeof *o->args);
  o->expects = calloc((size_t)(l->expects.n ? l->expects.n : 1), sizeof *o->expects);
  if (!o->args || !o->expects) return cli_fail("tune", "options", CUCORE_HOST_OUT_OF_MEMORY);
  for (int i = 0; i < l->args.n; i++) {
    int rc = run_parse_arg(o, l->args.v[i], i, &o->args[i]);
    o->nargs = i + 1;
    if (rc) return rc;
  }
  for (int i = 0; i < l->expects.n; i++) {
    int rc = run_parse_expect(l->expects.v[i], &o->expects[i]);
    o->nexpects = i + 1;
    if (rc) return rc;
    if (!run_expect_target_known(o, o->expects[i].target))
      return cli_usage("tune", "--expect %s: no buffer argument is `%s`", l->expects.v[i],
                       o->expects[i].target);
  }
  return run_prepare_expects(o);
}

/* The store of this tune: its key (source, options, kernel, launch, arguments, parameters)
 * and the device's fingerprint with the timing policy. */
static int open_store(tune_ctx *c) {
  const tune_line *l = c->line;
  const char *canon = "";
  char launch[2048], args[4096], params[1024] = "", timing[128];
  cucore_options_canonical(c->src->opts, &canon);
  snprintf(launch, sizeof launch, "grid=%s;block=%s;smem=%s;problem=%s;space=%s",
           l->grid ? l->grid : "", l->block ? l->block : "", l->smem ? l->smem : "",
           l->problem_size ? l->problem_size : "", c->space_digest);
  size_t n = 0, len = 0;
  cucore_tune_space_param_count(c->space, &n);
  for (size_t i = 0; i < n && len < sizeof params; i++) {
    cucore_tune_param_info p;
    cucore_tune_space_param(c->space, i, &p);
    len += (size_t)snprintf(params + len, sizeof params - len, "%s ", p.name);
  }
  cucore_tune_key_fields f = {.source = c->source, .source_size = c->source_size,
                              .options = canon, .kernel = l->kernel, .launch = launch,
                              .args = arg_specs(c, args, sizeof args), .params = params};
  cucore_tune_key(&f, c->key);
  cucore_tune_timing_options o = tune_timing_of(c);
  const char *cold = o.l2_bytes ? "cold" : tune_rotating(c) ? "rotate" : "hot";
  snprintf(timing, sizeof timing, "%s;launch=%d;noise=%g", cold, o.mode, l->max_noise);
  cucore_device_props props;
  cucore_device_props_get(0, &props);
  cucore_tune_fingerprint(&props, timing, c->device_fp, sizeof c->device_fp);
  cucore_status st = cucore_tune_store_open(l->db, c->key, l->problem_size ? l->problem_size : "",
                                            c->device_fp, &c->store);
  return st == CUCORE_OK ? 0 : cli_fail("tune", l->db ? l->db : "the tune store", st);
}

/* The arguments and what makes a result right (checks, tolerances, poison): a stored "ok"
 * is only reused under the same checks. */
static const char *arg_specs(const tune_ctx *c, char *buf, size_t cap) {
  const tune_line *l = c->line;
  size_t len = (size_t)snprintf(buf, cap, "rtol=%.17g;atol=%.17g;poison=%d\n",
                                l->has_rtol ? l->rtol : -1, l->has_atol ? l->atol : -1,
                                l->poison);
  for (int i = 0; i < l->args.n && len < cap; i++)
    len += (size_t)snprintf(buf + len, cap - len, "arg %s\n", l->args.v[i]);
  for (int i = 0; i < l->expects.n && len < cap; i++)
    len += (size_t)snprintf(buf + len, cap - len, "expect %s\n", l->expects.v[i]);
  return buf;
}

static double field(const char *json, const char *name) {
  char key[64];
  snprintf(key, sizeof key, "\"%s\":", name);
  const char *p = strstr(json, key);
  return p ? strtod(p + strlen(key), NULL) : 0;
}

/* A result the store kept: the row as it was measured. */
static void resume_row(tune_ctx *c, tune_row *r, const char *json) {
  r->finalist = strstr(json, "\"detail\":\"finalist") != NULL;
  const char *st = strstr(json, "\"status\":\"");
  size_t n = st ? strcspn(st + 10, "\"") : 0;
  snprintf(r->status, sizeof r->status, "%.*s", (int)n, st ? st + 10 : "");
  r->stats.median = field(json, "median_ms");
  r->stats.p20 = field(json, "p20_ms");
  r->stats.p80 = field(json, "p80_ms");
  r->stats.rel_stddev = field(json, "rel_stddev");
  r->stats.n = (size_t)field(json, "samples");
  r->batch = (int)field(json, "batch");
  r->mode = (int)field(json, "mode");
  r->sm_clock_mhz = strstr(json, "\"sm_clock_mhz\":") ? (int)field(json, "sm_clock_mhz") : -1;
  r->throttled = (int)field(json, "throttled");
  r->max_abs_err = field(json, "max_abs_err"), r->max_rel_err = field(json, "max_rel_err");
  r->has_error = strcmp(r->status, "wrong-answer") == 0 && strstr(json, "\"max_abs_err\":");
  r->resumed = 1;
  snprintf(r->detail, sizeof r->detail, "from the store%s", r->finalist ? " (a finalist)" : "");
  c->resumed++;
}

/* An error as the store's JSON keeps it (infinite: the largest double). */
static double stored_err(const tune_row *r, double e) {
  return !r->has_error ? 0 : e < DBL_MAX ? e : DBL_MAX;
}

static void record(tune_ctx *c, const tune_row *r, const char *config) {
  char res[1400], detail[400];
  size_t k = 0;
  for (const char *p = r->detail; *p && k + 2 < sizeof detail; p++) {
    if (*p == '"' || *p == '\\') detail[k++] = '\\';
    detail[k++] = (unsigned char)*p < 0x20 ? ' ' : *p;
  }
  detail[k] = 0;
  snprintf(res, sizeof res, "{\"status\":\"%s\",\"median_ms\":%.9g,\"p20_ms\":%.9g,"
           "\"p80_ms\":%.9g,\"rel_stddev\":%.6g,\"samples\":%zu,\"batch\":%d,\"registers\":%d,"
           "\"occupancy\":%.6g,\"mode\":%d,\"sm_clock_mhz\":%d,\"throttled\":%d,"
           "\"max_abs_err\":%.9g,\"max_rel_err\":%.9g,\"detail\":\"%s\"}", r->status,
           r->stats.median, r->stats.p20, r->stats.p80, r->stats.rel_stddev, r->stats.n, r->batch,
           r->registers, r->model.occupancy, r->mode, r->sm_clock_mhz, r->throttled,
           stored_err(r, r->max_abs_err), stored_err(r, r->max_rel_err), detail);
  if (cucore_tune_store_append(c->store, config, res) != CUCORE_OK)
    fprintf(stderr, "cucore tune: note: %s\n", cucore_last_error());
}

cucore_launch_config tune_launch_of(const tune_ctx *c, const tune_row *r) {
  cucore_launch_config cfg;
  memset(&cfg, 0, sizeof cfg);
  memcpy(cfg.grid, r->cfg.grid, sizeof cfg.grid);
  memcpy(cfg.block, r->cfg.block, sizeof cfg.block);
  cfg.shared_bytes = (unsigned)r->cfg.smem;
  cfg.stream = tune_dev_stream(c);
  return cfg;
}

static void failed(tune_ctx *c, tune_row *r, const char *status, const char *detail) {
  snprintf(r->status, sizeof r->status, "%s", status);
  snprintf(r->detail, sizeof r->detail, "%s", detail);
  c->failed++;
}

/* One configuration: reset, checked launch, verification, timing. */
static void measure_row(tune_ctx *c, cucore_kernel *k, cucore_args *a, tune_row *r) {
  cucore_launch_config cfg = tune_launch_of(c, r);
  double t0 = cli_now_ms();
  cucore_status st = tune_dev_reset(c);
  if (st == CUCORE_OK) st = cucore_launch(k, &cfg, a);
  if (st == CUCORE_OK) st = cucore_stream_synchronize(cfg.stream);
  if (st != CUCORE_OK) {
    failed(c, r, "launch-error", cucore_last_error());
    return;
  }
  int v = tune_dev_verify(c, r);
  c->verify_ms += cli_now_ms() - t0;
  if (v < 0) {
    failed(c, r, "verify-error", cucore_last_error());
    return;
  }
  if (v > 0) {
    snprintf(r->status, sizeof r->status, "wrong-answer");
    c->wrong++;
    return;
  }
  cucore_tune_timing_options o = tune_timing_of(c);
  cucore_tune_timing t;
  st = tune_time(c, k, a, r, &o, &t);
  if (st != CUCORE_OK) {
    failed(c, r, "launch-error", cucore_last_error());
    return;
  }
  r->stats = t.stats;
  r->batch = t.batch;
  r->mode = t.mode, r->sm_clock_mhz = t.sm_clock_mhz, r->throttled = t.throttled;
  snprintf(r->status, sizeof r->status, "ok");
  c->measured++;
}

void tune_record_row(tune_ctx *c, const tune_row *r) {
  char config[1024];
  cucore_tune_space_config_text(c->space, r->cfg.index, CUCORE_TUNE_TEXT_JSON, config,
                                sizeof config, NULL);
  record(c, r, config);
}

void tune_measure_one(tune_ctx *c, cucore_kernel *k, cucore_args *a, tune_row *r) {
  char config[1024];
  const char *found = NULL;
  cucore_tune_space_config_text(c->space, r->cfg.index, CUCORE_TUNE_TEXT_JSON, config,
                                sizeof config, NULL);
  if (!c->line->fresh) cucore_tune_store_find(c->store, config, &found);
  if (found) {
    resume_row(c, r, found);
    return;
  }
  if (c->lost) {
    failed(c, r, "device-lost", "not measured: the device did not come back after a fault");
  } else {
    measure_row(c, k, a, r);
    tune_after_row(c, r); /* a fault: recorded as such, the device reset */
  }
  record(c, r, config);
}

/* A group's kernel with its arguments bound. 0, or -1 with the reason in every row. */
int tune_kernel_of(tune_ctx *c, const tune_group *g, cucore_kernel **k, cucore_args **a) {
  cucore_status st = cucore_object_get_kernel(g->obj, g->symbol, k);
  if (st == CUCORE_OK) st = cucore_args_create(*k, a);
  if (st == CUCORE_OK && run_bind_args(&c->o, *a, g->obj, g->symbol) != 0)
    st = CUCORE_INVALID_ARGUMENT;
  return st == CUCORE_OK ? 0 : -1;
}

/* "[ 12/120] 3.1 s left" on a terminal, rewritten in place. */
void tune_progress(tune_ctx *c) {
  if (c->line->json || !isatty(2)) return;
  size_t done = c->measured + c->resumed + c->wrong + c->failed;
  size_t total = (size_t)c->counts.runnable - c->model_rejected;
  double spent = (cli_now_ms() - c->t_start) / 1000;
  fprintf(stderr, "\r\033[K[%5zu/%zu] %.1f s left", done, total,
          done && total > done ? spent / (double)done * (double)(total - done) : 0.0);
}

static void measure_group(tune_ctx *c, const tune_group *g) {
  cucore_kernel *k = NULL;
  cucore_args *a = NULL;
  int ok = g->ok && tune_kernel_of(c, g, &k, &a) == 0;
  unsigned resets = c->resets;
  for (size_t i = 0; i < c->nrows; i++) {
    tune_row *r = &c->rows[i];
    if (r->cfg.compile_hash != g->hash || r->cfg.verdict != CUCORE_TUNE_RUNNABLE || !g->ok)
      continue;
    if (resets != c->resets) { /* the device was reset: the kernel and its arguments anew */
      cucore_args_destroy(a);
      cucore_kernel_destroy(k);
      k = NULL, a = NULL, resets = c->resets;
      ok = c->lost || tune_kernel_of(c, g, &k, &a) == 0;
    }
    if (ok) tune_measure_one(c, k, a, r);
    else failed(c, r, "bind-error", cucore_last_error());
    tune_progress(c);
  }
  cucore_args_destroy(a);
  cucore_kernel_destroy(k);
}

int tune_measure_all(tune_ctx *c) {
  int rc = tune_dev_open(c);
  if (!rc) tune_clock_probe(c), tune_rotate_open(c);
  if (!rc) rc = open_store(c);
  c->keep_objects = 1;
  c->t_start = cli_now_ms();
  if (!rc) rc = tune_compile_start(c);
  if (!rc && (c->line->model_first || c->line->top_fraction > 0)) tune_measure_model_first(c);
  for (tune_group *g; !rc;) {
    double t0 = cli_now_ms();
    if (!(g = tune_compile_next(c))) break;
    c->wait_ms += cli_now_ms() - t0;
    measure_group(c, g);
  }
  if (!c->line->json && isatty(2)) text_terminal_control("\r\033[K");
  if (!rc) tune_finalists(c); /* before the store closes: finalists are recorded again */
  tune_compile_finish(c);
  tune_rotate_close(c);
  tune_dev_close(c);
  const char *path = "";
  if (c->store && cucore_tune_store_info(c->store, &path, &c->store_records, NULL) == CUCORE_OK)
    snprintf(c->store_path, sizeof c->store_path, "%s", path);
  cucore_tune_store_close(c->store);
  c->store = NULL;
  return rc;
}
