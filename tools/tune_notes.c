/* tune_notes.c -- what `cucore tune` tells besides its rows: the compiler's warnings (each
 * distinct one once), the parameters whose values change nothing in the code, the restrictions
 * that could not be evaluated (counted, the first named with its configuration), and whether
 * anything was verified. In the text report and in --json. */
#include <stdlib.h>
#include <string.h>

#include "tune.h"

/* "restriction 2 `A % B == 0` could not be evaluated for 12 configurations; the first, [3]
 * A=2 B=0: column 3: integer division or modulo by zero". */
static void restriction_error_text(const tune_ctx *c, FILE *f) {
  const cucore_tune_counts *k = &c->sum.counts;
  cucore_tune_config cfg;
  const char *text = "?";
  if (!k->restriction_errors ||
      cucore_tune_space_get_config(c->space, k->first_restriction_error, &cfg) != CUCORE_OK)
    return;
  if (cfg.restriction) cucore_tune_space_get_restriction(c->space, cfg.restriction - 1, &text);
  char *params = tune_text(c, cfg.index, CUCORE_TUNE_TEXT_PARAMS);
  const char *why = strstr(cfg.reason, "evaluated: ");
  fprintf(f,
          "restriction %u `%s` could not be evaluated for %llu configuration%s (not run); the "
          "first, [%llu] %s: %s\n",
          cfg.restriction, text, (unsigned long long)k->restriction_errors,
          k->restriction_errors == 1 ? "" : "s", (unsigned long long)cfg.index,
          params ? params : "?", why ? why + 11 : cfg.reason);
  free(params);
}

void tune_restriction_errors_warn(const tune_ctx *c) {
  if (!c->sum.counts.restriction_errors) return;
  fputs("cucore tune: warning: ", stderr);
  restriction_error_text(c, stderr);
}

static void inert_text(const tune_ctx *c) {
  for (size_t i = 0; i < c->sum.inert_params; i++) {
    size_t p = 0;
    cucore_tune_param_info info;
    if (cucore_tune_report_get_inert_param(c->report, i, &p) != CUCORE_OK ||
        cucore_tune_space_get_param(c->space, p, &info) != CUCORE_OK)
      continue;
    printf("note: parameter `%s` changes nothing in the code: its %zu values compile to identical "
           "cubins (does the source #define it, or never read it?)\n",
           info.name, info.value_count);
  }
}

void tune_notes_text(const tune_ctx *c) {
  for (size_t i = 0; i < c->sum.warnings; i++) {
    cucore_tune_warning w;
    if (cucore_tune_report_get_warning(c->report, i, &w) != CUCORE_OK) continue;
    printf("compiler warning (%zu compile%s, e.g. configuration %llu): %s\n", w.compiles,
           w.compiles == 1 ? "" : "s", (unsigned long long)w.first_config, w.text);
  }
  inert_text(c);
  if (c->sum.limits.arch && c->sum.distinct_cubins &&
      c->sum.distinct_cubins < c->sum.compiles - c->sum.compile_failures)
    printf("note: %zu compiles gave %zu distinct cubins\n",
           c->sum.compiles - c->sum.compile_failures, c->sum.distinct_cubins);
  if (c->sum.counts.restriction_errors) restriction_error_text(c, stdout);
  if (!c->line->dry_run && !c->sum.verified)
    printf("note: nothing is verified: no output or in-place --arg and no --expect, so the "
           "configurations are only timed (status \"unverified\")\n");
}

void tune_notes_json(const tune_ctx *c, json_out *j) {
  json_begin_array(j, "compile_warnings");
  for (size_t i = 0; i < c->sum.warnings; i++) {
    cucore_tune_warning w;
    if (cucore_tune_report_get_warning(c->report, i, &w) != CUCORE_OK) continue;
    json_begin_object(j, NULL);
    json_str(j, "text", w.text);
    json_uint(j, "compiles", w.compiles);
    json_uint(j, "first_config", w.first_config);
    json_end_object(j);
  }
  json_end_array(j);
  json_begin_array(j, "params_changing_nothing");
  for (size_t i = 0; i < c->sum.inert_params; i++) {
    size_t p = 0;
    cucore_tune_param_info info;
    if (cucore_tune_report_get_inert_param(c->report, i, &p) == CUCORE_OK &&
        cucore_tune_space_get_param(c->space, p, &info) == CUCORE_OK)
      json_str(j, NULL, info.name);
  }
  json_end_array(j);
  const cucore_tune_counts *k = &c->sum.counts;
  cucore_tune_config cfg;
  if (k->restriction_errors &&
      cucore_tune_space_get_config(c->space, k->first_restriction_error, &cfg) == CUCORE_OK) {
    json_begin_object(j, "first_restriction_error");
    json_uint(j, "index", cfg.index);
    json_uint(j, "restriction", cfg.restriction);
    json_str(j, "reason", cfg.reason);
    tune_json_params(c, j, "params", cfg.index);
    json_end_object(j);
  }
  if (!c->line->dry_run) json_bool(j, "verified", c->sum.verified);
}
