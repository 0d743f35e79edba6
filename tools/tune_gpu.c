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
  cucore_tune_space_get_param_count(c->space, &n);
  for (size_t i = 0; i < n && len < sizeof params; i++) {
    cucore_tune_param_info p;
    cucore_tune_space_get_param(c->space, i, &p);
    len += (size_t)snprintf(params + len, sizeof params - len, "%s ", p.name);
  }
  cucore_tune_key_fields f = {.source = c->source,
                              .source_size = c->source_size,
                              .options = canon,
                              .kernel = l->kernel,
                              .launch = launch,
                              .args = arg_specs(c, args, sizeof args),
                              .params = params};
  cucore_tune_key(&f, c->key);
  cucore_tune_timing_options o = tune_timing_of(c);
  const char *cold = o.l2_bytes ? "cold" : tune_rotating(c) ? "rotate" : "hot";
  snprintf(timing, sizeof timing, "%s;launch=%d;noise=%g", cold, o.mode, l->max_noise);
  cucore_device_props props;
  cucore_device_get_props(0, &props);
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
                                l->has_rtol ? l->rtol : -1, l->has_atol ? l->atol : -1, l->poison);
  for (int i = 0; i < l->args.n && len < cap; i++)
    len += (size_t)snprintf(buf + len, cap - len, "arg %s\n", l->args.v[i]);
  for (int i = 0; i < l->expects.n && len < cap; i++)
    len += (size_t)snprintf(buf + len, cap - len, "expect %s\n", l->expects.v[i]);
  return buf;
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
    if (ok)
      tune_measure_one(c, k, a, r);
    else
      tune_row_failed(c, r, "bind-error", cucore_last_error());
    tune_progress(c);
  }
  cucore_args_destroy(a);
  cucore_kernel_destroy(k);
}

int tune_measure_all(tune_ctx *c) {
  int rc = tune_dev_open(c);
  if (!rc) tune_clock_probe(c), tune_rotate_open(c);
  if (!rc) rc = open_store(c);
  if (!rc) tune_resume_stored(c);
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
  if (c->store && cucore_tune_store_get_info(c->store, &path, &c->store_records, NULL) == CUCORE_OK)
    snprintf(c->store_path, sizeof c->store_path, "%s", path);
  cucore_tune_store_close(c->store);
  c->store = NULL;
  return rc;
}
