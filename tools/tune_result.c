/* tune_result.c -- the measured part of `cucore tune`'s report: the ten fastest verified
 * configurations, the winner (and how many tie with it within noise), its speed-up over the
 * first configuration, the `cucore run` command that reproduces it, what happened to the
 * rest, where the time went and where the results are kept. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tune.h"

/* The verified rows, fastest first (ties to the lower number). Returns their count. */
static size_t measured_order(const tune_ctx *c, size_t *rows) {
  size_t n = 0;
  cucore_tune_stats *s = calloc(c->nrows ? c->nrows : 1, sizeof *s);
  size_t m = c->nrows ? c->nrows : 1;
  size_t *idx = calloc(m, sizeof *idx), *order = calloc(m, sizeof *order);
  for (size_t i = 0; s && idx && order && i < c->nrows; i++)
    if (c->rows[i].status == CUCORE_TUNE_OK) s[n] = c->rows[i].stats, idx[n++] = i;
  if (n) cucore_tune_rank(s, n, order, NULL);
  for (size_t i = 0; i < n; i++) rows[i] = idx[order[i]];
  if (n && c->sum.have_best) { /* the finalists' verdict comes first */
    for (size_t i = 0; i < n; i++)
      if (rows[i] == c->sum.best) memmove(rows + 1, rows, i * sizeof *rows), rows[0] = c->sum.best;
  }
  free(s), free(idx), free(order);
  return n;
}

/* " --flag WORD" with WORD as one shell word. */
static void flag_word(FILE *f, const char *flag, const char *word) {
  fprintf(f, " %s ", flag);
  shell_word(f, word);
}

/* The compile's defines of the row, one shell word each (-DNAME=VALUE as the compile saw it). */
static void define_words(const tune_ctx *c, FILE *f, uint64_t index) {
  char *defines = tune_text(c, index, CUCORE_TUNE_TEXT_DEFINES);
  for (char *d = defines; d && *d;) {
    char *nl = strchr(d, '\n');
    if (nl) *nl = 0;
    fputc(' ', f);
    shell_word(f, d);
    d = nl ? nl + 1 : d + strlen(d);
  }
  free(defines);
}

/* The checks and data of the tune as `cucore run` takes them. */
static void check_words(const tune_ctx *c, FILE *f) {
  const tune_line *l = c->line;
  char num[64];
  for (int i = 0; i < l->args.n; i++) flag_word(f, "--arg", l->args.v[i]);
  for (int i = 0; i < l->globals.n; i++) flag_word(f, "--global", l->globals.v[i]);
  for (int i = 0; i < l->expects.n; i++) flag_word(f, "--expect", l->expects.v[i]);
  if (l->has_rtol) snprintf(num, sizeof num, "%.17g", l->rtol), flag_word(f, "--rtol", num);
  if (l->has_atol) snprintf(num, sizeof num, "%.17g", l->atol), flag_word(f, "--atol", num);
  if (l->seed) snprintf(num, sizeof num, "%llu", l->seed), flag_word(f, "--seed", num);
}

/* `cucore run` with this configuration's kernel, launch, defines, options and arguments, as
 * shell words (malloc'd; NULL when out of memory). */
char *tune_run_command(const tune_ctx *c, const cucore_tune_row *r) {
  char *text = NULL, arch[32];
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (!f) return NULL;
  const cucore_tune_config *g = &r->config;
  char *kernel = tune_text(c, g->index, CUCORE_TUNE_TEXT_KERNEL);
  fputs("cucore run ", f);
  shell_word(f, c->line->file);
  flag_word(f, "--kernel", kernel ? kernel : c->kernel_name);
  free(kernel);
  fprintf(f, " --grid %u,%u,%u --block %u,%u,%u --smem %llu", g->grid[0], g->grid[1], g->grid[2],
          g->block[0], g->block[1], g->block[2], (unsigned long long)g->smem);
  snprintf(arch, sizeof arch, "sm_%d", c->sum.limits.arch);
  flag_word(f, "--arch", arch);
  define_words(c, f, g->index);
  for (int i = 0; i < c->src->raw_count; i++) {
    fputc(' ', f);
    shell_word(f, c->src->raw[i]);
  }
  check_words(c, f);
  if (fclose(f) != 0) {
    free(text);
    return NULL;
  }
  return text;
}

const char *tune_status_name(const tune_ctx *c, const cucore_tune_row *r) {
  if (r->status == CUCORE_TUNE_OK && !c->sum.verified) return "unverified";
  return cucore_tune_result_name(r->status);
}

int tune_restarts(void) {
  const char *e = getenv("CUCORE_TUNE_RESTART");
  return e ? atoi(e) : 0;
}

/* The first verified configuration by number: the speed-up is over it. */
static const cucore_tune_row *first_ok(const tune_ctx *c) {
  for (size_t i = 0; i < c->nrows; i++)
    if (c->rows[i].status == CUCORE_TUNE_OK) return &c->rows[i];
  return NULL;
}

static void top_text(const tune_ctx *c, const size_t *rows, size_t n) {
  printf("fastest verified configurations:\n");
  for (size_t i = 0; i < n && i < TUNE_TOP; i++) {
    const cucore_tune_row *r = &c->rows[rows[i]];
    char *params = tune_text(c, r->config.index, CUCORE_TUNE_TEXT_PARAMS);
    printf("  %2zu. [%llu] %s  %.4f ms +-%.1f%%%s\n", i + 1, (unsigned long long)r->config.index,
           params ? params : "?", r->stats.median, 100 * r->stats.rel_stddev,
           r->finalist ? " (finalist)" : "");
    free(params);
  }
}

void tune_report_measured(const tune_ctx *c) {
  size_t *rows = calloc(c->nrows ? c->nrows : 1, sizeof *rows);
  size_t n = rows ? measured_order(c, rows) : 0;
  if (n) top_text(c, rows, n);
  if (c->sum.searched && c->sum.exhaustive) {
    printf("search: the budget (%lld) covers all %llu runnable configurations: each measured "
           "once, in one pass (exhaustive, no strategy)\n",
           c->line->max_evals, (unsigned long long)c->sum.counts.runnable);
  } else if (c->sum.searched) {
    const char *name = "?";
    cucore_tune_strategy_get_name(tune_search_strategy(c->line), &name);
    printf("search: %s (seed %llu), %llu of %llu runnable configurations evaluated (budget "
           "%lld)%s\n",
           name, c->line->seed, (unsigned long long)c->sum.evals,
           (unsigned long long)c->sum.counts.runnable, c->line->max_evals,
           c->sum.stopped_by_time ? "; stopped at --time-limit" : "");
  }
  printf("results: %zu measured, %zu from the store, %zu wrong answers, %zu failed",
         c->sum.measured, c->sum.resumed, c->sum.wrong, c->sum.failed);
  if (c->sum.skipped) printf(", %zu skipped (--top-fraction)", c->sum.skipped);
  if (c->sum.screened)
    printf(", %zu screened by racing (clearly slower than the best so far after 2 or 3 "
           "launches: about %zu launches saved)",
           c->sum.screened, c->sum.race_saved_launches);
  if (c->sum.faults)
    printf(", %zu kernel faults (%u device resets%s)", c->sum.faults, c->sum.resets,
           c->sum.lost ? ", then the device was lost" : "");
  printf("\n");
  tune_shard_text(c);
  if (tune_restarts())
    printf("the tune went on in a fresh process %d times after the device was lost to a kernel "
           "fault (earlier results from the store)\n",
           tune_restarts());
  printf("cold L2: %s\n", c->sum.cold == CUCORE_TUNE_COLD_ROTATE ? "the arguments rotated "
                                                                   "through copies past 2 x L2"
                          : c->sum.cold == CUCORE_TUNE_COLD_NONE
                              ? "no (a hot cache)"
                              : "2 x L2 flushed before each sample");
  printf("time: setup %.2f s, compile wall %.2f s; on the GPU thread: timing %.2f s, "
         "verification %.2f s, loading %.2f s, store %.2f s, waiting for compiles %.2f s; "
         "%zu finalists re-timed at the end in %.2f s\n",
         c->sum.setup_ms / 1000, c->sum.compile_wall_ms / 1000, c->sum.gpu_ms / 1000,
         c->sum.verify_ms / 1000, c->sum.load_ms / 1000, c->sum.record_ms / 1000,
         c->sum.wait_ms / 1000, c->sum.finalists, c->sum.final_ms / 1000);
  double span = c->sum.measure_wall_ms - c->sum.first_ready_ms;
  if (span > 0)
    printf("GPU thread busy %.0f %% of the %.2f s after the first code was ready (%.2f s); "
           "%zu samples taken while compiles ran\n",
           100 * (c->sum.gpu_ms + c->sum.verify_ms) / span, span / 1000,
           c->sum.first_ready_ms / 1000, c->sum.extra_samples);
  size_t agreed = c->sum.model_agreement_n;
  double rho = c->sum.model_agreement;
  if (agreed >= 3 && isfinite(rho))
    printf("model vs measured: rank correlation %.2f over %zu configurations (1: the model's "
           "score ordered them as measured)\n",
           rho, agreed);
  static const char *const use[] = {"", "", " (read only: this run's results were not kept)",
                                    " (unreadable: nothing resumed, nothing kept)"};
  printf("store: %s (%zu records of this tune)%s\n", c->sum.store_path, c->sum.store_records,
         use[(unsigned)c->sum.store_use < 4 ? c->sum.store_use : 0]);
  if (c->sum.have_best) {
    const cucore_tune_row *b = &c->rows[c->sum.best], *f = first_ok(c);
    char *cmd = tune_run_command(c, b);
    printf("best: [%llu] %.4f ms, %.2fx the first configuration [%llu]%s\n",
           (unsigned long long)b->config.index, b->stats.median,
           f && b->stats.median > 0 ? f->stats.median / b->stats.median : 0,
           f ? (unsigned long long)f->config.index : 0ULL,
           c->sum.ties ? " (a tie within noise or 1 %, chosen by the lower number)" : "");
    printf("reproduce: %s\n", cmd ? cmd : "(out of memory)");
    free(cmd);
  } else {
    printf("best: none (no configuration ran and verified)\n");
  }
  free(rows);
}

void tune_report_measured_json(const tune_ctx *c, json_out *j) {
  json_uint(j, "measured", c->sum.measured);
  json_uint(j, "from_store", c->sum.resumed);
  json_uint(j, "compile_errors_from_store", c->sum.compile_errors_stored);
  json_uint(j, "screened", c->sum.screened);
  json_uint(j, "racing_saved_launches", c->sum.race_saved_launches);
  json_uint(j, "wrong_answers", c->sum.wrong);
  json_uint(j, "failed", c->sum.failed);
  json_uint(j, "faults", c->sum.faults);
  json_uint(j, "device_resets", c->sum.resets);
  json_bool(j, "device_lost", c->sum.lost);
  json_uint(j, "process_restarts", (size_t)tune_restarts());
  json_uint(j, "skipped", c->sum.skipped);
  tune_shard_json(c, j);
  if (c->sum.searched) {
    const char *name = "?";
    cucore_tune_strategy_get_name(tune_search_strategy(c->line), &name);
    json_begin_object(j, "search");
    json_str(j, "strategy", c->sum.exhaustive ? "exhaustive" : name);
    json_str(j, "strategy_options", c->line->strategy_options);
    json_uint(j, "evals", c->sum.evals);
    json_int(j, "budget", c->line->max_evals);
    json_uint(j, "seed", c->line->seed);
    json_bool(j, "stopped_by_time", c->sum.stopped_by_time);
    /* the best time after each evaluation, in the order the search evaluated them (null
     * before the first time), as --simulate's curve_best_ms */
    json_begin_array(j, "curve_best_ms");
    double best = INFINITY;
    for (size_t i = 0; i < c->nrows; i++) {
      const cucore_tune_row *r = &c->rows[i];
      if (r->config.verdict != CUCORE_TUNE_RUNNABLE) continue; /* never evaluated */
      if (r->status == CUCORE_TUNE_OK && r->stats.median < best) best = r->stats.median;
      json_num(j, NULL, best);
    }
    json_end_array(j);
    json_end_object(j);
  }
  static const char *const cold[] = {"flush", "rotate", "none", "auto"};
  json_str(j, "cold", cold[c->sum.cold & 3]);
  json_begin_object(j, "time_s");
  json_num(j, "setup", c->sum.setup_ms / 1000);
  json_num(j, "compile_wall", c->sum.compile_wall_ms / 1000);
  json_num(j, "gpu_busy", c->sum.gpu_ms / 1000);
  json_num(j, "verification", c->sum.verify_ms / 1000);
  json_num(j, "loading", c->sum.load_ms / 1000);
  json_num(j, "store", c->sum.record_ms / 1000);
  json_num(j, "waiting", c->sum.wait_ms / 1000);
  json_num(j, "first_ready", c->sum.first_ready_ms / 1000);
  json_num(j, "measuring", c->sum.measure_wall_ms / 1000);
  json_num(j, "finalists", c->sum.final_ms / 1000);
  json_end_object(j);
  json_uint(j, "finalists_retimed", c->sum.finalists);
  json_uint(j, "samples_while_compiles_ran", c->sum.extra_samples);
  double busy_span = c->sum.measure_wall_ms - c->sum.first_ready_ms;
  json_num(j, "gpu_busy_fraction",
           busy_span > 0 ? (c->sum.gpu_ms + c->sum.verify_ms) / busy_span : 0);
  json_str(j, "key", c->sum.key);
  json_num(j, "model_rank_correlation", c->sum.model_agreement);
  json_str(j, "store", c->sum.store_path);
  static const char *const use[] = {"none", "kept", "read-only", "unreadable"};
  json_str(j, "store_use", use[(unsigned)c->sum.store_use < 4 ? c->sum.store_use : 0]);
  if (!c->sum.have_best) {
    json_str(j, "best", NULL);
    return;
  }
  const cucore_tune_row *b = &c->rows[c->sum.best];
  char *cmd = tune_run_command(c, b);
  json_begin_object(j, "best");
  json_uint(j, "index", b->config.index);
  json_num(j, "median_ms", b->stats.median);
  json_uint(j, "ties", c->sum.ties);
  json_str(j, "run_command", cmd);
  json_end_object(j);
  free(cmd);
}
