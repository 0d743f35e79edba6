/* tune_report.c -- what `cucore tune --dry-run` prints: how far each stage shrank the space,
 * the compiles, one line per configuration past the restrictions (launch, resources, the
 * model's occupancy, waves and score, or why it cannot run), and the best ten by the model's
 * score; or all of it as one JSON object. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tune.h"

/* ", launch-only: a, b" for the parameters that never change a compile. */
static void launch_only_names(const tune_ctx *c) {
  size_t n = 0, said = 0;
  cucore_tune_space_get_param_count(c->space, &n);
  for (size_t i = 0; i < n; i++) {
    cucore_tune_param_info p;
    cucore_tune_space_get_param(c->space, i, &p);
    if (p.kind != CUCORE_TUNE_PARAM_LAUNCH_ONLY) continue;
    printf("%s%s", said++ ? ", " : " (launch-only: ", p.name);
  }
  if (said) printf(")");
}

/* The configurations that can run in the end: a valid launch within the limits, compiled (when
 * an arch compiled them), not rejected by the model. */
size_t tune_can_run(const tune_ctx *c) {
  size_t n = 0;
  for (size_t i = 0; i < c->nrows; i++)
    n += c->rows[i].config.verdict == CUCORE_TUNE_RUNNABLE && !c->rows[i].error[0] &&
         (c->rows[i].compiled || !c->sum.limits.arch);
  return n;
}

static void header(const tune_ctx *c) {
  const cucore_tune_counts *k = &c->sum.counts;
  printf("cucore tune: %s, kernel %s, %s", c->line->file, c->kernel_name,
         c->sum.limits.arch ? c->sum.limits.name : "no arch (give --arch sm_XX to compile)");
  if (c->sum.limits.arch && c->sum.limits.sm_count) printf(" with %d SMs", c->sum.limits.sm_count);
  printf("\nspace: %llu raw -> %llu after restrictions -> %llu with a valid launch within the "
         "limits -> %llu distinct compiles",
         (unsigned long long)k->raw, (unsigned long long)k->after_restrictions,
         (unsigned long long)k->runnable, (unsigned long long)k->compiles);
  launch_only_names(c);
  printf("\n");
  if (k->restriction_errors)
    printf("restrictions: %llu configurations could not be evaluated (not run)\n",
           (unsigned long long)k->restriction_errors);
  if (!c->sum.limits.arch) return;
  printf("compiles: %zu with %d job%s in %.2f s (%zu from the cache), %zu failed", c->sum.compiles,
         c->sum.jobs, c->sum.jobs == 1 ? "" : "s", c->sum.compile_wall_ms / 1000, c->sum.cache_hits,
         c->sum.compile_failures);
  if (c->sum.compile_timeouts) printf(" (%zu timed out)", c->sum.compile_timeouts);
  if (c->sum.compile_errors_stored)
    printf("; %zu configurations not compiled again (the store keeps their compile errors)",
           c->sum.compile_errors_stored);
  printf("\n");
  if (c->sum.nvrtc_minimal)
    printf("compile mode: NVRTC's -minimal after the first configuration (its cubin came out "
           "byte-identical with and without it)\n");
  printf("model: %zu rejected by the occupancy model; %zu can run\n", c->sum.model_rejected,
         tune_can_run(c));
}

static const char *const mode_names[] = {"auto", "single", "batch", "graph"};

static const char *mode_name(int mode) { return mode >= 1 && mode <= 3 ? mode_names[mode] : "-"; }

/* "| 0.0123 ms +-1.0% n=20 graph x50 @1755 MHz (2 throttled) | ok": a row's measurement. */
static void measured_text(const tune_ctx *c, const cucore_tune_row *r) {
  printf(" | %.4f ms +-%.1f%% n=%zu", r->stats.median, 100 * r->stats.rel_stddev, r->stats.n);
  if (r->mode) printf(" %s x%d", mode_name(r->mode), r->batch);
  if (r->sm_clock_mhz > 0) printf(" @%d MHz", r->sm_clock_mhz);
  if (r->throttled) printf(" (%d throttled dropped)", r->throttled);
  printf("%s%s%s | %s", r->finalist ? " (finalist)" : "", r->screened ? " (screened)" : "",
         r->resumed ? " (stored)" : "", tune_status_name(c, r));
  if (r->has_error) printf(" (max abs error %g, max rel error %g)", r->max_abs_err, r->max_rel_err);
  printf("%s%s\n", r->detail[0] ? ": " : "", r->detail);
}

static void measured_json(json_out *j, const cucore_tune_row *r) {
  json_str(j, "launch_mode", r->mode ? mode_name(r->mode) : NULL);
  if (r->sm_clock_mhz > 0)
    json_int(j, "sm_clock_mhz", r->sm_clock_mhz);
  else
    json_num(j, "sm_clock_mhz", NAN); /* null: not observed */
  json_int(j, "throttled_samples", r->throttled);
  if (r->has_error) {
    json_double(j, "max_abs_error", r->max_abs_err);
    json_double(j, "max_rel_error", r->max_rel_err);
  }
}

/* The model's waves and tail as text: "n/a" without an SM count (the score leaves them out). */
static void waves_text(const tune_ctx *c, const cucore_tune_row *r) {
  if (c->sum.limits.sm_count > 0)
    printf(" waves %.2f tail %.2f", r->model.waves, r->model.tail_efficiency);
  else
    printf(" waves n/a tail n/a");
}

static void row_text(const tune_ctx *c, const cucore_tune_row *r) {
  char *params = tune_text(c, r->config.index, CUCORE_TUNE_TEXT_PARAMS);
  const cucore_tune_config *g = &r->config;
  printf("[%5llu/%llu] %s | grid %u,%u,%u block %u,%u,%u smem %llu", (unsigned long long)g->index,
         (unsigned long long)c->sum.counts.raw, params ? params : "?", g->grid[0], g->grid[1],
         g->grid[2], g->block[0], g->block[1], g->block[2], (unsigned long long)g->smem);
  free(params);
  if (r->compiled) {
    printf(" | regs %d smem %d local %d | occ %.2f (%s)", r->registers, r->static_shared,
           r->local_bytes, r->model.occupancy, cucore_occupancy_limit_name(r->model.limit));
    waves_text(c, r);
    printf(" score %.3f | cc %.0f ms%s", r->model.score, r->compile_ms,
           r->cache_hit ? " (cached)" : "");
  }
  if (r->status != CUCORE_TUNE_NOT_MEASURED)
    measured_text(c, r);
  else if (r->error[0])
    printf(" | %s\n", r->error);
  else if (g->verdict != CUCORE_TUNE_RUNNABLE)
    printf(" | %s: %s\n", cucore_tune_verdict_name(g->verdict), g->reason);
  else
    printf(" | %s\n", r->compiled ? "can run" : "not compiled");
}

/* Indices of the compiled rows that can run, best model score first; returns their number. */
static size_t ranked(const tune_ctx *c, size_t *order) {
  size_t n = 0;
  return cucore_tune_report_get_model_order(c->report, order, &n) == CUCORE_OK ? n : 0;
}

int tune_rows_listed(const tune_ctx *c) {
  return !c->sum.rows_omitted && (!c->line->max_rows || c->nrows <= c->line->max_rows);
}

/* How many configurations past the restrictions are not listed one by one. */
static unsigned long long not_listed(const tune_ctx *c) {
  return tune_rows_listed(c) ? 0 : c->sum.rows_omitted ? c->sum.rows_omitted : c->nrows;
}

static void text_report(const tune_ctx *c, size_t *order, size_t n) {
  header(c);
  for (size_t i = 0; tune_rows_listed(c) && i < c->nrows; i++) row_text(c, &c->rows[i]);
  if (!tune_rows_listed(c))
    printf("%llu configurations past the restrictions: more than --rows %llu, so not listed "
           "one by one (the counts above stand for them; --rows all lists them)\n",
           not_listed(c), c->line->max_rows);
  tune_notes_text(c);
  if (!c->line->dry_run) {
    tune_report_measured(c);
    return;
  }
  if (!n) return;
  printf("best by the model's score (to be confirmed by measuring):\n");
  for (size_t i = 0; i < n && i < TUNE_TOP; i++) {
    const cucore_tune_row *r = &c->rows[order[i]];
    char *params = tune_text(c, r->config.index, CUCORE_TUNE_TEXT_PARAMS);
    printf("  %2zu. [%llu] %s  score %.3f occ %.2f", i + 1, (unsigned long long)r->config.index,
           params ? params : "?", r->model.score, r->model.occupancy);
    if (c->sum.limits.sm_count > 0) printf(" waves %.2f", r->model.waves);
    printf("\n");
    free(params);
  }
}

static void dims_json(json_out *j, const char *key, const uint32_t d[3]) {
  json_begin_array(j, key);
  for (int i = 0; i < 3; i++) json_uint(j, NULL, d[i]);
  json_end_array(j);
}

static void row_json(const tune_ctx *c, json_out *j, const cucore_tune_row *r) {
  json_begin_object(j, NULL);
  json_uint(j, "index", r->config.index);
  tune_json_params(c, j, "params", r->config.index);
  dims_json(j, "grid", r->config.grid);
  dims_json(j, "block", r->config.block);
  json_uint(j, "smem", r->config.smem);
  json_str(j, "verdict", tune_row_verdict(r));
  json_str(j, "reason", r->error[0] ? r->error : r->config.reason[0] ? r->config.reason : NULL);
  if (r->compiled) {
    json_int(j, "registers", r->registers);
    json_int(j, "static_shared", r->static_shared);
    json_int(j, "local_bytes", r->local_bytes);
    json_int(j, "blocks_per_sm", r->model.blocks_per_sm);
    json_num(j, "occupancy", r->model.occupancy);
    json_str(j, "limit", cucore_occupancy_limit_name(r->model.limit));
    json_num(j, "waves", c->sum.limits.sm_count > 0 ? r->model.waves : NAN);
    json_num(j, "tail_efficiency", c->sum.limits.sm_count > 0 ? r->model.tail_efficiency : NAN);
    json_num(j, "score", r->model.score);
    json_num(j, "compile_ms", r->compile_ms);
  }
  if (r->status != CUCORE_TUNE_NOT_MEASURED) {
    json_str(j, "status", tune_status_name(c, r));
    json_str(j, "detail", r->detail[0] ? r->detail : NULL);
    json_num(j, "median_ms", r->stats.median);
    json_num(j, "p20_ms", r->stats.p20);
    json_num(j, "p80_ms", r->stats.p80);
    json_num(j, "rel_stddev", r->stats.rel_stddev);
    json_uint(j, "samples", r->stats.n);
    json_int(j, "batch", r->batch);
    json_bool(j, "stored", r->resumed);
    json_bool(j, "finalist", r->finalist);
    json_bool(j, "screened", r->screened);
    measured_json(j, r);
  }
  json_end_object(j);
}

static void counts_json(const tune_ctx *c, json_out *j) {
  const cucore_tune_counts *k = &c->sum.counts;
  json_begin_object(j, "counts");
  json_uint(j, "raw", k->raw);
  json_uint(j, "after_restrictions", k->after_restrictions);
  json_uint(j, "valid_launch", k->runnable); /* a valid launch within the arch's limits */
  json_uint(j, "compiles", k->compiles);     /* distinct compiles among them */
  json_uint(j, "can_run", tune_can_run(c));  /* and compiled, and the model lets them run */
  json_uint(j, "restricted", k->restricted);
  json_uint(j, "restriction_errors", k->restriction_errors);
  json_uint(j, "bad_launch", k->bad_launch);
  json_uint(j, "arch_limit", k->arch_limit);
  json_uint(j, "model_rejected", c->sum.model_rejected);
  json_uint(j, "compiles_made", c->sum.compiles); /* in this run (0 when all came from the store) */
  json_uint(j, "compiles_ok", c->sum.compiles - c->sum.compile_failures);
  json_uint(j, "compile_failed", c->sum.compile_failures);
  json_uint(j, "compile_timeouts", c->sum.compile_timeouts);
  json_uint(j, "compile_cache_hits", c->sum.cache_hits);
  json_uint(j, "distinct_cubins", c->sum.distinct_cubins);
  json_bool(j, "nvrtc_minimal", c->sum.nvrtc_minimal);
  json_end_object(j);
}

static void json_report(const tune_ctx *c, size_t *order, size_t n) {
  json_out j;
  memset(&j, 0, sizeof j);
  j.f = stdout;
  j.pretty = 1;
  json_begin_object(&j, NULL);
  json_str(&j, "file", c->line->file);
  json_str(&j, "kernel", c->kernel_name);
  json_str(&j, "arch", c->sum.limits.arch ? c->sum.limits.name : NULL);
  json_int(&j, "sm_count", c->sum.limits.arch ? c->sum.limits.sm_count : 0);
  counts_json(c, &j);
  json_num(&j, "compile_wall_ms", c->sum.compile_wall_ms);
  json_int(&j, "jobs", c->sum.jobs);
  json_begin_array(&j, "configs");
  for (size_t i = 0; tune_rows_listed(c) && i < c->nrows; i++) row_json(c, &j, &c->rows[i]);
  json_end_array(&j);
  json_uint(&j, "configs_not_listed", not_listed(c)); /* more than --rows: the counts stand */
  tune_notes_json(c, &j);
  json_begin_array(&j, "best_by_model");
  for (size_t i = 0; i < n && i < TUNE_TOP; i++)
    json_uint(&j, NULL, c->rows[order[i]].config.index);
  json_end_array(&j);
  if (!c->line->dry_run) tune_report_measured_json(c, &j);
  if (c->line->timings) phases_json(&j);
  json_end_object(&j);
  fputc('\n', stdout);
}

void tune_report(const tune_ctx *c) {
  size_t *order = calloc(c->nrows ? c->nrows : 1, sizeof *order);
  size_t n = order ? ranked(c, order) : 0;
  if (c->line->json)
    json_report(c, order, n);
  else
    text_report(c, order, n);
  free(order);
  if (c->line->timings) {
    fflush(stdout);
    phases_print(stderr);
  }
}
