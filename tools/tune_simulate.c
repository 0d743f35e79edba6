/* tune_simulate.c -- `cucore tune --simulate FILE`: a search replayed over a recorded space
 * (cucore_tune_simulate), with no source, GPU or compiler. One strategy: the best found, its
 * ratio to the recorded optimum, the evaluations, the simulated tuning time, the curve (best
 * so far against evaluations and simulated time) in JSON and as an SVG (--plot). --compare:
 * each strategy at each budget over --repeats seeds, run on every core: the median and 10th
 * percentile of optimum / best found (linear interpolation between order statistics, as
 * numpy's default), and the share of runs reaching 0.95 and 0.99 of the optimum. */
#include "cli.h"
#include "tune.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_EVALS 100
#define DEFAULT_REPEATS 20
#define MAX_LIST 64 /* strategies or budgets in one --compare */

/* The search strategy --strategy names (a default when it names none). */
static int chosen_strategy(const tune_line *l, cucore_tune_strategy *out) {
  if (l->strategy_given && l->strategy < TUNE_STRATEGY_SEARCH)
    return cli_usage("tune",
                     "--simulate replays a search: --strategy random, ils, anneal, "
                     "genetic, forest, bayes or default (not %s)",
                     l->strategy ? "model-first" : "exhaustive");
  *out = tune_search_strategy(l);
  return 0;
}

/* A comma list of numbers (1 or more each) into v; n = how many. */
static int budget_list(const char *text, unsigned long long *v, int *n) {
  *n = 0;
  for (const char *p = text; *p;) {
    char *end = NULL;
    errno = 0;
    unsigned long long b = *p >= '0' && *p <= '9' ? strtoull(p, &end, 10) : 0;
    if (!end || errno || b == 0 || (*end && *end != ',') || *n == MAX_LIST)
      return cli_usage("tune",
                       "--budgets `%s`: expected up to %d whole numbers of 1 or more, "
                       "comma-separated (100,200)",
                       text, MAX_LIST);
    v[(*n)++] = b;
    p = *end ? end + 1 : end;
  }
  return *n ? 0 : cli_usage("tune", "--budgets is empty: expected numbers such as 100,200");
}

/* A comma list of strategy names ("all": every one) into v; n = how many. */
static int strategy_list(const char *text, cucore_tune_strategy *v, int *n) {
  *n = 0;
  if (strcmp(text, "all") == 0) {
    for (int k = 0; k < CUCORE_TUNE_STRATEGY_COUNT; k++) v[(*n)++] = (cucore_tune_strategy)k;
    return 0;
  }
  char *copy = strdup(text), *save = NULL;
  if (!copy) return cli_usage("tune", "out of memory reading --compare");
  int rc = 0;
  for (char *w = strtok_r(copy, ",", &save); w && !rc; w = strtok_r(NULL, ",", &save)) {
    if (*n == MAX_LIST)
      rc = cli_usage("tune", "--compare: more than %d strategies", MAX_LIST);
    else if (cucore_tune_strategy_from_name(w, &v[*n]) != CUCORE_OK)
      rc = cli_usage("tune", "--compare: %s", cucore_last_error());
    else
      (*n)++;
  }
  free(copy);
  return rc || *n ? rc : cli_usage("tune", "--compare is empty: expected strategies or `all`");
}

/* ---- the comparison: every (strategy, budget, seed) run on a pool of threads ---- */

typedef struct cmp_job {
  const cucore_tune_recording *rec;
  const cucore_tune_strategy *strategies;
  const unsigned long long *budgets;
  int nstrat, nbudget;
  long long repeats;
  unsigned long long seed;
  size_t batch;
  const char *options;        /* --strategy-options: every strategy compared takes them */
  double *ratio, *evals, *ms; /* [cell * repeats + r], cell = s * nbudget + b */
  atomic_size_t next;
  atomic_int failed;
} cmp_job;

static void *cmp_worker(void *arg) {
  cmp_job *j = arg;
  size_t total = (size_t)j->nstrat * (size_t)j->nbudget * (size_t)j->repeats;
  for (size_t i; (i = atomic_fetch_add(&j->next, 1)) < total && !atomic_load(&j->failed);) {
    size_t cell = i / (size_t)j->repeats, r = i % (size_t)j->repeats;
    cucore_tune_simulation sim;
    if (cucore_tune_simulate(j->rec, j->strategies[cell / (size_t)j->nbudget], j->options,
                             j->budgets[cell % (size_t)j->nbudget], j->seed + r, j->batch, NULL,
                             NULL, &sim) != CUCORE_OK) {
      atomic_store(&j->failed, 1);
      break;
    }
    j->ratio[i] = sim.ratio, j->evals[i] = (double)sim.evals;
    j->ms[i] = sim.evals ? sim.strategy_ms / (double)sim.evals : 0;
  }
  return NULL;
}

static int by_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The q-quantile of n sorted values, linear between order statistics. */
static double quantile(const double *v, size_t n, double q) {
  double pos = q * (double)(n - 1);
  size_t lo = (size_t)pos;
  return lo + 1 < n ? v[lo] + (pos - (double)lo) * (v[lo + 1] - v[lo]) : v[n - 1];
}

typedef struct cmp_cell {
  double median, p10, at95, at99, evals, ms;
} cmp_cell;

static cmp_cell summarise(double *ratio, const double *evals, const double *ms, size_t n) {
  cmp_cell c = {0};
  for (size_t i = 0; i < n; i++) {
    c.at95 += ratio[i] >= 0.95, c.at99 += ratio[i] >= 0.99;
    c.evals += evals[i], c.ms += ms[i];
  }
  qsort(ratio, n, sizeof *ratio, by_double);
  c.median = quantile(ratio, n, 0.5);
  c.p10 = quantile(ratio, n, 0.1);
  c.at95 /= (double)n, c.at99 /= (double)n, c.evals /= (double)n, c.ms /= (double)n;
  return c;
}

static void recording_json(json_out *j, const char *file, const cucore_tune_recording_info *i) {
  json_begin_object(j, "recording");
  json_str(j, "file", file);
  json_str(j, "kernel", i->kernel);
  json_str(j, "device", i->device);
  json_uint(j, "params", i->params);
  json_uint(j, "configs", i->configs);
  json_uint(j, "valid", i->valid);
  json_num(j, "optimum_ms", i->optimum_ms);
  json_uint(j, "within_5_percent", i->near_optimum);
  json_num(j, "brute_force_ms", i->total_cost_ms);
  json_end_object(j);
}

static void recording_text(const char *file, const cucore_tune_recording_info *i) {
  printf("%s: kernel %s on %s, %zu parameters, %zu configurations recorded (%zu with a time), "
         "optimum %.6g ms, %zu within 5 %% of it (%.3g %%); measuring them all took %.1f s\n",
         file, i->kernel[0] ? i->kernel : "(unnamed)", i->device[0] ? i->device : "(unnamed)",
         i->params, i->configs, i->valid, i->optimum_ms, i->near_optimum,
         100.0 * (double)i->near_optimum / (double)(i->valid ? i->valid : 1),
         i->total_cost_ms / 1e3);
}

static void compare_report(const tune_ctx *c, const cmp_job *j, const cmp_cell *cells,
                           const cucore_tune_recording_info *info) {
  const char *name;
  if (c->line->json) {
    json_out o = {stdout, 0, {0}, 1};
    json_begin_object(&o, NULL);
    recording_json(&o, c->line->simulate, info);
    json_int(&o, "repeats", j->repeats);
    json_uint(&o, "first_seed", j->seed);
    json_uint(&o, "batch", j->batch);
    json_begin_array(&o, "results");
    for (int s = 0; s < j->nstrat; s++)
      for (int b = 0; b < j->nbudget; b++) {
        const cmp_cell *x = &cells[s * j->nbudget + b];
        cucore_tune_strategy_get_name(j->strategies[s], &name);
        json_begin_object(&o, NULL);
        json_str(&o, "strategy", name);
        json_uint(&o, "budget", j->budgets[b]);
        json_num(&o, "median", x->median);
        json_num(&o, "p10", x->p10);
        json_num(&o, "share_095", x->at95);
        json_num(&o, "share_099", x->at99);
        json_num(&o, "mean_evals", x->evals);
        json_num(&o, "strategy_ms_per_eval", x->ms);
        json_end_object(&o);
      }
    json_end_array(&o);
    json_end_object(&o);
    return;
  }
  recording_text(c->line->simulate, info);
  printf("%lld runs each (seeds %llu..%llu), batch %zu; ratio = optimum / best found\n", j->repeats,
         j->seed, j->seed + (unsigned long long)j->repeats - 1, j->batch);
  printf("%-8s %-9s %8s %8s %8s %8s %8s %12s\n", "budget", "strategy", "median", "p10", ">=0.95",
         ">=0.99", "evals", "ms/eval");
  for (int b = 0; b < j->nbudget; b++)
    for (int s = 0; s < j->nstrat; s++) {
      const cmp_cell *x = &cells[s * j->nbudget + b];
      cucore_tune_strategy_get_name(j->strategies[s], &name);
      printf("%-8llu %-9s %8.3f %8.3f %7.0f%% %7.0f%% %8.1f %12.3f\n", j->budgets[b], name,
             x->median, x->p10, 100 * x->at95, 100 * x->at99, x->evals, x->ms);
    }
}

static int compare(const tune_ctx *c, const cucore_tune_recording *rec,
                   const cucore_tune_recording_info *info) {
  const tune_line *l = c->line;
  cucore_tune_strategy strategies[MAX_LIST];
  unsigned long long budgets[MAX_LIST];
  int ns = 0, nb = 0;
  int rc = strategy_list(l->compare, strategies, &ns);
  if (!rc) rc = budget_list(l->budgets ? l->budgets : "100,200", budgets, &nb);
  for (int s = 0; !rc && l->strategy_options && s < ns; s++) { /* each refusal named here */
    cucore_tune_simulation probe;
    if (cucore_tune_simulate(rec, strategies[s], l->strategy_options, 1, l->seed, 1, NULL, NULL,
                             &probe) != CUCORE_OK)
      rc = cli_fail("tune", "--strategy-options", CUCORE_INVALID_ARGUMENT);
  }
  if (rc) return rc;
  cmp_job j = {.rec = rec,
               .strategies = strategies,
               .budgets = budgets,
               .nstrat = ns,
               .nbudget = nb,
               .repeats = l->repeats ? l->repeats : DEFAULT_REPEATS,
               .seed = l->seed,
               .batch = l->batch ? (size_t)l->batch : 1,
               .options = l->strategy_options};
  size_t total = (size_t)ns * (size_t)nb * (size_t)j.repeats, cells_n = (size_t)ns * (size_t)nb;
  j.ratio = calloc(total, sizeof *j.ratio);
  j.evals = calloc(total, sizeof *j.evals);
  j.ms = calloc(total, sizeof *j.ms);
  cmp_cell *cells = calloc(cells_n, sizeof *cells);
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  int nthreads = cores < 1 ? 1 : cores > 64 ? 64 : (int)cores;
  pthread_t th[64];
  int started = 0;
  if (j.ratio && j.evals && j.ms && cells)
    for (; started < nthreads; started++)
      if (pthread_create(&th[started], NULL, cmp_worker, &j) != 0) break;
  if (started == 0 && j.ratio && j.evals && j.ms && cells) cmp_worker(&j);
  for (int t = 0; t < started; t++) pthread_join(th[t], NULL);
  if (!j.ratio || !j.evals || !j.ms || !cells)
    rc = cli_usage("tune", "out of memory comparing");
  else if (atomic_load(&j.failed))
    rc = cli_fail("tune", "a simulation", CUCORE_INVALID_ARGUMENT);
  for (size_t k = 0; !rc && k < cells_n; k++) {
    size_t at = k * (size_t)j.repeats;
    cells[k] = summarise(j.ratio + at, j.evals + at, j.ms + at, (size_t)j.repeats);
  }
  if (!rc) compare_report(c, &j, cells, info);
  free(j.ratio), free(j.evals), free(j.ms), free(cells);
  return rc;
}

/* ---- one strategy ---- */

/* The curve as an SVG: optimum / best so far against evaluations (left) and against the
 * simulated tuning time (right). */
static void curve_svg(FILE *f, const double *curve, const double *clock, uint64_t n, double optimum,
                      const char *title) {
  const int w = 420, h = 300, m = 50;
  fprintf(f,
          "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
          "font-family=\"sans-serif\" font-size=\"12\">\n",
          2 * w, h + 30);
  fprintf(f, "<text x=\"10\" y=\"18\">");
  for (const char *p = title; *p; p++) /* the title is the user's: escaped */
    fputs(*p == '<' ? "&lt;" : *p == '>' ? "&gt;" : *p == '&' ? "&amp;" : (char[2]){*p, 0}, f);
  fprintf(f, "</text>\n");
  double tmax = n ? clock[n - 1] : 1;
  for (int panel = 0; panel < 2; panel++) {
    int x0 = panel * w + m, y0 = 30 + h - m, pw = w - m - 20, ph = h - m - 20;
    fprintf(f,
            "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" "
            "stroke=\"#888\"/>\n",
            x0, y0 - ph, pw, ph);
    fprintf(f, "<text x=\"%d\" y=\"%d\">%s</text>\n", x0, y0 + 30,
            panel ? "simulated tuning time (s)" : "evaluations");
    fprintf(f, "<text x=\"%d\" y=\"%d\">1.0</text><text x=\"%d\" y=\"%d\">0.0</text>\n", x0 - 30,
            y0 - ph + 4, x0 - 30, y0 + 4);
    fprintf(f, "<text x=\"%d\" y=\"%d\">%.4g</text>\n", x0 + pw - 30, y0 + 15,
            panel ? tmax / 1e3 : (double)n);
    fprintf(f, "<polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"1.5\" points=\"");
    for (uint64_t i = 0; i < n; i++) {
      double r = isfinite(curve[i]) ? optimum / curve[i] : 0;
      double x = panel ? (tmax > 0 ? clock[i] / tmax : 1)
                       : (n > 1 ? (double)i / (double)(n - 1) : 1);
      fprintf(f, "%.1f,%.1f ", x0 + x * pw, y0 - r * ph);
    }
    fprintf(f, "\"/>\n");
  }
  fprintf(f, "<text x=\"10\" y=\"%d\">optimum / best so far</text>\n</svg>\n", h + 25);
}

static int write_plot(const tune_ctx *c, const double *curve, const double *clock, uint64_t n,
                      const cucore_tune_recording_info *info, const char *strategy) {
  cli_outfile o;
  int rc = cli_out_open(&o, "tune", "--plot", c->line->plot);
  if (rc) return rc;
  char *title = NULL;
  if (asprintf(&title, "%s: %s, %llu evaluations (kernel %s on %s)", c->line->simulate, strategy,
               (unsigned long long)n, info->kernel, info->device) < 0)
    title = NULL;
  curve_svg(o.f, curve, clock, n, info->optimum_ms, title ? title : "");
  free(title);
  return cli_out_close(&o, 1);
}

static void one_report(const tune_ctx *c, const cucore_tune_simulation *s, const double *curve,
                       const double *clock, const cucore_tune_recording_info *info,
                       const char *strategy, uint64_t found_at) {
  const tune_line *l = c->line;
  size_t batch = l->batch ? (size_t)l->batch : 1;
  if (l->json) {
    json_out o = {stdout, 0, {0}, 1};
    json_begin_object(&o, NULL);
    recording_json(&o, l->simulate, info);
    json_str(&o, "strategy", strategy);
    json_uint(&o, "seed", l->seed);
    json_uint(&o, "batch", batch);
    json_uint(&o, "evals", s->evals);
    json_num(&o, "best_ms", s->best_ms);
    json_num(&o, "ratio", s->ratio);
    json_uint(&o, "best_found_at", found_at);
    json_num(&o, "simulated_ms", s->clock_ms);
    json_num(&o, "strategy_ms", s->strategy_ms);
    json_begin_array(&o, "curve_best_ms");
    for (uint64_t i = 0; i < s->evals; i++) json_num(&o, NULL, curve[i]);
    json_end_array(&o);
    json_begin_array(&o, "curve_clock_ms");
    for (uint64_t i = 0; i < s->evals; i++) json_num(&o, NULL, clock[i]);
    json_end_array(&o);
    json_end_object(&o);
    return;
  }
  recording_text(l->simulate, info);
  printf("%s (seed %llu, batch %zu): %llu evaluations; best %.6g ms = %.4f of the optimum, found "
         "at evaluation %llu; simulated tuning time %.1f s (%.2g %% of measuring all); strategy "
         "%.3f ms per evaluation\n",
         strategy, l->seed, batch, (unsigned long long)s->evals, s->best_ms, s->ratio,
         (unsigned long long)found_at, s->clock_ms / 1e3,
         info->total_cost_ms > 0 ? 100 * s->clock_ms / info->total_cost_ms : 0,
         s->evals ? s->strategy_ms / (double)s->evals : 0);
}

static int one(const tune_ctx *c, const cucore_tune_recording *rec,
               const cucore_tune_recording_info *info) {
  const tune_line *l = c->line;
  cucore_tune_strategy k = CUCORE_TUNE_STRATEGY_BAYES;
  int rc = chosen_strategy(l, &k);
  if (rc) return rc;
  uint64_t evals = l->max_evals ? (uint64_t)l->max_evals : DEFAULT_EVALS;
  if (evals > info->configs) evals = info->configs;
  double *curve = calloc(evals ? evals : 1, sizeof *curve);
  double *clock = calloc(evals ? evals : 1, sizeof *clock);
  cucore_tune_simulation s;
  if (!curve || !clock)
    rc = cli_usage("tune", "out of memory for a curve of %llu points", (unsigned long long)evals);
  else if (cucore_tune_simulate(rec, k, l->strategy_options, evals, l->seed,
                                l->batch ? (size_t)l->batch : 1, curve, clock, &s) != CUCORE_OK)
    rc = cli_fail("tune", "the simulation", CUCORE_INVALID_ARGUMENT);
  const char *name = NULL;
  cucore_tune_strategy_get_name(k, &name);
  uint64_t found_at = 0;
  for (uint64_t i = 0; !rc && i < s.evals; i++)
    if (curve[i] == s.best_ms) {
      found_at = i + 1;
      break;
    }
  if (!rc) one_report(c, &s, curve, clock, info, name, found_at);
  if (!rc && l->plot) rc = write_plot(c, curve, clock, s.evals, info, name);
  free(curve), free(clock);
  return rc;
}

int tune_simulate(tune_ctx *c) {
  const tune_line *l = c->line;
  if (l->file)
    return cli_usage("tune", "--simulate replays the recording `%s`; it takes no FILE (`%s`)",
                     l->simulate, l->file);
  if (l->kernel || l->space || l->params.n || l->restricts.n || l->args.n || l->dry_run || l->db ||
      l->csv || l->t4 || l->emit_header)
    return cli_usage("tune", "--simulate replays a recording: the space, kernel and arguments "
                             "are the recording's (no --kernel, --space, --param, --restrict, "
                             "--arg, --dry-run, --db, --csv, --t4 or --emit-header)");
  if (l->compare && (l->max_evals || l->strategy_given || l->plot))
    return cli_usage("tune", "--compare takes --budgets (not --max-evals), its own list of "
                             "strategies (not --strategy) and writes no --plot");
  if (!l->compare && (l->budgets || l->repeats))
    return cli_usage("tune", "--budgets and --repeats belong to --compare");
  cli_input_add(l->simulate);
  if (l->plot && cli_output_check("tune", "--plot", l->plot)) return CLI_EXIT_USAGE;
  char *data = NULL;
  size_t size = 0;
  int rc = cli_read_file("tune", l->simulate, &data, &size);
  if (rc) return rc;
  cucore_tune_recording *rec = NULL;
  cucore_status st = cucore_tune_recording_read(data, size, l->simulate, &rec);
  free(data);
  if (st != CUCORE_OK) return cli_fail("tune", "--simulate", st);
  cucore_tune_recording_info info;
  cucore_tune_recording_get_info(rec, &info);
  rc = l->compare ? compare(c, rec, &info) : one(c, rec, &info);
  cucore_tune_recording_destroy(rec);
  return rc;
}
