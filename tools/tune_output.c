/* tune_output.c -- what `cucore tune` writes besides its report: --csv (one row per
 * configuration past the restrictions), --emit-header (the best configuration as #defines,
 * Kernel Tuner's create_device_targets layout: a block for this GPU and the same as the
 * default), and --t4 (TuningSchema T4 JSON). */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "t4.h"
#include "tune.h"

static void csv_header(const tune_ctx *c, FILE *f) {
  size_t n = 0;
  cucore_tune_space_get_param_count(c->space, &n);
  fputs("index", f);
  for (size_t i = 0; i < n; i++) {
    cucore_tune_param_info p;
    cucore_tune_space_get_param(c->space, i, &p);
    fputc(',', f);
    csv_field(f, p.name);
  }
  fputs(",grid_x,grid_y,grid_z,block_x,block_y,block_z,smem,verdict,registers,local_bytes,"
        "occupancy,waves,score,compile_ms,status,median_ms,p20_ms,p80_ms,rel_stddev,samples,"
        "detail\n",
        f);
}

/* The verdict a row is reported with: a compile's failure first, then the checks'. */
const char *tune_row_verdict(const cucore_tune_row *r) {
  if (r->error[0]) return r->compile_timed_out ? "compile-timeout" : "compile-error";
  return cucore_tune_verdict_name(r->config.verdict);
}

/* The values of a row, one CSV field each (as C reads them: the value, not a text to split). */
static void csv_values(const tune_ctx *c, FILE *f, uint64_t index) {
  size_t n = 0, np = 0;
  cucore_tune_space_get_param_count(c->space, &np);
  cucore_tune_value *v = tune_values(c, index, &n);
  for (size_t i = 0; i < np; i++) {
    fputc(',', f);
    if (i < n) csv_field(f, v[i].c_text);
  }
  free(v);
}

static void csv_row(const tune_ctx *c, FILE *f, const cucore_tune_row *r) {
  const cucore_tune_config *g = &r->config;
  fprintf(f, "%llu", (unsigned long long)g->index);
  csv_values(c, f, g->index);
  fprintf(f, ",%u,%u,%u,%u,%u,%u,%llu,%s,", g->grid[0], g->grid[1], g->grid[2], g->block[0],
          g->block[1], g->block[2], (unsigned long long)g->smem, tune_row_verdict(r));
  if (r->compiled) {
    fprintf(f, "%d,%d,%.4f,", r->registers, r->local_bytes, r->model.occupancy);
    if (c->sum.limits.sm_count > 0) fprintf(f, "%.4f", r->model.waves);
    fprintf(f, ",%.4f,%.1f", r->model.score, r->compile_ms);
  } else {
    fputs(",,,,,", f);
  }
  if (r->status != CUCORE_TUNE_NOT_MEASURED)
    fprintf(f, ",%s,%.6g,%.6g,%.6g,%.4g,%zu,", tune_status_name(c, r), r->stats.median,
            r->stats.p20, r->stats.p80, r->stats.rel_stddev, r->stats.n);
  else
    fputs(",,,,,,,", f);
  csv_field(f, r->error[0] ? r->error : r->detail[0] ? r->detail : r->config.reason);
  fputc('\n', f);
}

int tune_write_csv(const tune_ctx *c, const char *path) {
  cli_outfile o;
  if (cli_out_open(&o, "tune", "--csv", path)) return CLI_EXIT_FAILURE;
  csv_header(c, o.f);
  for (size_t i = 0; i < c->nrows; i++) csv_row(c, o.f, &c->rows[i]);
  return cli_out_close(&o, 1);
}

/* `#define NAME VALUE` for every parameter of the row, VALUE as the compile saw it. */
static void header_block(const tune_ctx *c, FILE *f, const cucore_tune_row *b) {
  size_t n = 0;
  cucore_tune_value *v = tune_values(c, b->config.index, &n);
  for (size_t i = 0; i < n; i++) {
    cucore_tune_param_info p;
    if (cucore_tune_space_get_param(c->space, i, &p) == CUCORE_OK)
      fprintf(f, "#define %s %s\n", p.name, v[i].c_text);
  }
  free(v);
}

/* Text inside a C comment: a `*` `/` pair would end it early. */
static void comment_text(FILE *f, const char *t) {
  for (; *t; t++) {
    fputc(*t, f);
    if (*t == '*' && t[1] == '/') fputc(' ', f);
  }
}

int tune_write_header(const tune_ctx *c, const char *path) {
  if (!c->sum.have_best) {
    fprintf(stderr,
            "cucore tune: --emit-header %s: no configuration verified; nothing "
            "written\n",
            path);
    return CLI_EXIT_FAILURE;
  }
  cucore_device_props p;
  char target[300];
  size_t k = 0;
  if (cucore_device_get_props((int)c->line->device, &p) != CUCORE_OK)
    snprintf(p.name, sizeof p.name, "gpu");
  for (const char *s = p.name; *s && k + 1 < sizeof target; s++)
    target[k++] = isalnum((unsigned char)*s) ? (char)toupper((unsigned char)*s) : '_';
  target[k] = 0;
  const cucore_tune_row *b = &c->rows[c->sum.best];
  cli_outfile o;
  if (cli_out_open(&o, "tune", "--emit-header", path)) return CLI_EXIT_FAILURE;
  fputs("/* The best configuration of ", o.f);
  comment_text(o.f, c->kernel_name);
  fputs(" (", o.f);
  comment_text(o.f, c->line->file);
  fprintf(o.f,
          ") found by cucore tune: %.4f ms on %s,\n"
          " * grid %u,%u,%u block %u,%u,%u smem %llu. Define TARGET_%s for this GPU. */\n",
          b->stats.median, p.name, b->config.grid[0], b->config.grid[1], b->config.grid[2],
          b->config.block[0], b->config.block[1], b->config.block[2],
          (unsigned long long)b->config.smem, target);
  fprintf(o.f, "#ifdef TARGET_%s\n", target);
  header_block(c, o.f, b);
  fprintf(o.f, "#else /* default: the same */\n");
  header_block(c, o.f, b);
  fprintf(o.f, "#endif\n");
  return cli_out_close(&o, 1);
}

/* --t4: the rows through the one T4 writer (t4.c; `cache tune export --t4` uses it too). */
static void t4_result_of(const void *user, size_t i, t4_result *out) {
  t4_row_result(&((const tune_ctx *)user)->rows[i], out);
}

static void t4_config_of(const void *user, size_t i, json_out *j, const char *key) {
  const tune_ctx *c = user;
  tune_json_params(c, j, key, c->rows[i].config.index);
}

int tune_write_t4(const tune_ctx *c, const char *path) {
  t4_source src = {c->nrows, c, t4_result_of, t4_config_of};
  return t4_write("tune", "--t4", path, &src);
}

/* The compile log of the tune (--log FILE): each configuration whose compile failed with the
 * compiler's error line, then each distinct warning once with how many compiles gave it. */
int tune_write_log(const tune_ctx *c, const char *path) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (!f) return cli_fail("tune", "--log", CUCORE_HOST_OUT_OF_MEMORY);
  fprintf(f, "cucore tune: %s, kernel %s: %zu compiles, %zu failed, %zu warnings\n", c->line->file,
          c->kernel_name, c->sum.compiles, c->sum.compile_failures, c->sum.warnings);
  for (size_t i = 0; i < c->nrows; i++) {
    const cucore_tune_row *r = &c->rows[i];
    if (!r->error[0]) continue;
    char *params = tune_text(c, r->config.index, CUCORE_TUNE_TEXT_PARAMS);
    fprintf(f, "[%llu] %s: %s\n", (unsigned long long)r->config.index, params ? params : "?",
            r->error);
    free(params);
  }
  for (size_t i = 0; i < c->sum.warnings; i++) {
    cucore_tune_warning w;
    if (cucore_tune_report_get_warning(c->report, i, &w) == CUCORE_OK)
      fprintf(f, "warning (%zu compiles, e.g. configuration %llu): %s\n", w.compiles,
              (unsigned long long)w.first_config, w.text);
  }
  if (fclose(f) != 0) {
    free(text);
    return cli_fail("tune", "--log", CUCORE_HOST_OUT_OF_MEMORY);
  }
  int rc = cli_write_file("tune", "--log", path, text, len);
  free(text);
  return rc;
}
