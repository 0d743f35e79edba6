/* tune_one.c -- one configuration of `cucore tune` on the GPU: taken from the store when it was
 * measured before, else reset, launched (checked), verified and timed; each result recorded in
 * the store; a group's kernel bound; the progress line. */
#include <float.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tune.h"

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
  r->registers = (int)field(json, "registers");
  r->model.occupancy = field(json, "occupancy");
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
  snprintf(res, sizeof res,
           "{\"status\":\"%s\",\"median_ms\":%.9g,\"p20_ms\":%.9g,"
           "\"p80_ms\":%.9g,\"rel_stddev\":%.6g,\"samples\":%zu,\"batch\":%d,\"registers\":%d,"
           "\"occupancy\":%.6g,\"mode\":%d,\"sm_clock_mhz\":%d,\"throttled\":%d,"
           "\"max_abs_err\":%.9g,\"max_rel_err\":%.9g,\"detail\":\"%s\"}",
           r->status, r->stats.median, r->stats.p20, r->stats.p80, r->stats.rel_stddev, r->stats.n,
           r->batch, r->registers, r->model.occupancy, r->mode, r->sm_clock_mhz, r->throttled,
           stored_err(r, r->max_abs_err), stored_err(r, r->max_rel_err), detail);
  if (cucore_tune_store_append(c->store, config, res) != CUCORE_OK)
    fprintf(stderr, "cucore tune: note: %s\n", cucore_last_error());
}

void tune_row_failed(tune_ctx *c, tune_row *r, const char *status, const char *detail) {
  snprintf(r->status, sizeof r->status, "%s", status);
  snprintf(r->detail, sizeof r->detail, "%s", detail);
  c->failed++;
}

/* Screening's warm-up: the library's (10 ms, then >= 5 ms and >= 10 samples) for the first
 * configuration and after the GPU was idle for 100 ms or more; while the previous
 * configuration's launches have just kept the GPU busy and its clocks up, 1 ms of warm-up and
 * >= 2 ms of samples (still >= 10 samples and the noise stop). The finalists are re-timed
 * interleaved with their own warm-up (tune_final.c). */
static void screen_options(const tune_ctx *c, cucore_tune_timing_options *o) {
  if (c->last_timed_ms <= 0 || cli_now_ms() - c->last_timed_ms >= 100) return;
  if (o->warmup_ms > 1) o->warmup_ms = 1;
  if (o->screen_ms > 2) o->screen_ms = 2;
}

/* One configuration: reset, checked launch, verification, timing. */
static void measure_row(tune_ctx *c, cucore_kernel *k, cucore_args *a, tune_row *r) {
  cucore_launch_config cfg = tune_launch_of(c, r);
  double t0 = cli_now_ms();
  cucore_status st = tune_dev_reset(c);
  if (st == CUCORE_OK) st = cucore_launch(k, &cfg, a);
  if (st == CUCORE_OK) st = cucore_stream_synchronize(cfg.stream);
  if (st != CUCORE_OK) {
    tune_row_failed(c, r, "launch-error", cucore_last_error());
    return;
  }
  int v = tune_dev_verify(c, r);
  c->verify_ms += cli_now_ms() - t0;
  if (v < 0) {
    tune_row_failed(c, r, "verify-error", cucore_last_error());
    return;
  }
  if (v > 0) {
    snprintf(r->status, sizeof r->status, "wrong-answer");
    c->wrong++;
    return;
  }
  cucore_tune_timing_options o = tune_timing_of(c);
  screen_options(c, &o);
  cucore_tune_timing t;
  st = tune_time(c, k, a, r, &o, &t);
  c->last_timed_ms = cli_now_ms();
  if (st != CUCORE_OK) {
    tune_row_failed(c, r, "launch-error", cucore_last_error());
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
  cucore_tune_space_get_config_text(c->space, r->cfg.index, CUCORE_TUNE_TEXT_JSON, config,
                                    sizeof config, NULL);
  record(c, r, config);
}

void tune_resume_stored(tune_ctx *c) {
  for (size_t i = 0; i < c->nrows && !c->line->fresh; i++) {
    tune_row *r = &c->rows[i];
    char config[1024];
    const char *found = NULL;
    if (r->cfg.verdict != CUCORE_TUNE_RUNNABLE) continue;
    cucore_tune_space_get_config_text(c->space, r->cfg.index, CUCORE_TUNE_TEXT_JSON, config,
                                      sizeof config, NULL);
    if (cucore_tune_store_find(c->store, config, &found) == CUCORE_OK && found)
      resume_row(c, r, found);
  }
}

void tune_measure_one(tune_ctx *c, cucore_kernel *k, cucore_args *a, tune_row *r) {
  char config[1024];
  if (r->resumed) return; /* from the store (tune_resume_stored) */
  cucore_tune_space_get_config_text(c->space, r->cfg.index, CUCORE_TUNE_TEXT_JSON, config,
                                    sizeof config, NULL);
  if (c->lost) {
    tune_row_failed(c, r, "device-lost",
                    "not measured: the device did not come back after a fault");
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
