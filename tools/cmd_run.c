/* cmd_run.c -- `cucore run`: launch any kernel from the command line. The options are read,
 * the specs parsed (run_spec.c), the code compiled or loaded, and everything that needs no
 * GPU checked first -- arguments against the kernel (run_bind.c), the launch configuration and
 * the module variables against the code -- so a wrong command fails on any machine; then the
 * GPU part (run_device.c), the files written, the --expect comparisons (run_expect.c) and the
 * report (run_report.c). */
#include "run.h"

#include <stdlib.h>
#include <string.h>

/* Raw texts of the options given several times, parsed once every option is known. */
typedef struct texts {
  const char **v;
  int n;
} texts;

static int push_text(texts *t, const char *s) {
  const char **nv = realloc(t->v, (size_t)(t->n + 1) * sizeof *nv);
  if (!nv) return -1;
  t->v = nv;
  t->v[t->n++] = s;
  return 0;
}

static int parse_count(const char *flag, const char *v, long long lo, long long hi,
                       long long *out) {
  char *end = NULL;
  long long x = strtoll(v, &end, 10);
  if (end == v || *end || x < lo || x > hi)
    return cli_usage("run", "%s `%s`: expected a whole number from %lld to %lld", flag, v, lo, hi);
  *out = x;
  return 0;
}

static int parse_real(const char *flag, const char *v, double *out) {
  char *end = NULL;
  double x = strtod(v, &end);
  if (end == v || *end || !(x >= 0) || x > 1e300)
    return cli_usage("run", "%s `%s`: expected a number >= 0", flag, v);
  *out = x;
  return 0;
}

static const char *const value_flags[] = {
    "--kernel", "--grid",   "--block",  "--smem",   "--cluster", "--repeat",   "--warmup",
    "--show",   "--device", "--priority", "--json-out", "--rtol", "--atol",  "--seed",
    "--arg",    "--global", "--read-global", "--expect", "--graph", NULL};

static int takes_value(const char *a) {
  for (int i = 0; value_flags[i]; i++)
    if (strcmp(a, value_flags[i]) == 0) return 1;
  return 0;
}

/* Reads the command line into `o` (specs as raw texts in the lists). */
static int read_options(cli_source *src, int argc, char **argv, run_opts *o, texts *args,
                        texts *sets, texts *reads, texts *expects) {
  int have_grid = 0, have_block = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--json")) o->json = 1;
    else if (!strcmp(a, "--cooperative")) o->cooperative = 1;
    else if (!strcmp(a, "--pdl")) o->pdl = 1;
    else if (!strcmp(a, "--flush-l2")) o->flush_l2 = 1;
    else if (!strcmp(a, "--no-pool")) o->no_pool = 1;
    else if (takes_value(a)) {
      if (i + 1 >= argc) return cli_usage("run", "%s needs a value; see `cucore help run`", a);
      const char *v = argv[++i];
      long long x = 0;
      int rc = 0;
      if (!strcmp(a, "--kernel")) o->kernel = v;
      else if (!strcmp(a, "--grid")) {
        if (cli_parse_dims(v, o->grid, 0x7fffffffu))
          return cli_usage("run", "--grid `%s`: expected X[,Y[,Z]] of positive numbers", v);
        have_grid = 1;
      } else if (!strcmp(a, "--block")) {
        if (cli_parse_dims(v, o->block, 0x7fffffffu))
          return cli_usage("run", "--block `%s`: expected X[,Y[,Z]] of positive numbers", v);
        have_block = 1;
      } else if (!strcmp(a, "--cluster")) {
        if (cli_parse_dims(v, o->cluster, 65535))
          return cli_usage("run", "--cluster `%s`: expected X[,Y[,Z]] of positive numbers", v);
      } else if (!strcmp(a, "--smem")) rc = parse_count(a, v, 0, 0x7fffffff, &o->smem);
      else if (!strcmp(a, "--repeat")) rc = parse_count(a, v, 1, 1000000, &o->repeat);
      else if (!strcmp(a, "--warmup")) rc = parse_count(a, v, 0, 1000000, &o->warmup);
      else if (!strcmp(a, "--graph")) rc = parse_count(a, v, 1, 100000, &o->graph);
      else if (!strcmp(a, "--show")) rc = parse_count(a, v, 0, 1 << 30, &o->show);
      else if (!strcmp(a, "--device")) {
        rc = parse_count(a, v, 0, 1023, &x);
        o->device = (int)x;
      } else if (!strcmp(a, "--priority")) {
        rc = parse_count(a, v, -1000, 1000, &x);
        o->priority = (int)x;
        o->has_priority = 1;
      } else if (!strcmp(a, "--seed")) {
        rc = parse_count(a, v, 0, 0x7fffffffffffffffLL, &x);
        o->seed = (unsigned long long)x;
      } else if (!strcmp(a, "--json-out")) o->json_out = v;
      else if (!strcmp(a, "--rtol")) {
        rc = parse_real(a, v, &o->rtol);
        o->has_rtol = 1;
      } else if (!strcmp(a, "--atol")) {
        rc = parse_real(a, v, &o->atol);
        o->has_atol = 1;
      } else {
        texts *t = !strcmp(a, "--arg") ? args : !strcmp(a, "--global") ? sets
                 : !strcmp(a, "--read-global") ? reads : expects;
        if (push_text(t, v)) return cli_fail("run", "options", CUCORE_HOST_OUT_OF_MEMORY);
      }
      if (rc) return rc;
    } else if (a[0] == '-' && a[1]) {
      int used = cli_source_option(src, "run", argc, argv, i);
      if (used <= 0)
        return used < 0 ? CLI_EXIT_USAGE : cli_usage("run", "unknown option `%s`; see `cucore help run`", a);
      i += used - 1;
    } else if (o->file) {
      return cli_usage("run", "one FILE only (got `%s` and `%s`)", o->file, a);
    } else {
      o->file = a;
    }
  }
  if (!o->file || !o->kernel || !have_grid || !have_block)
    return cli_usage("run", "FILE, --kernel, --grid and --block are required; see `cucore help run`");
  if (o->graph && o->graph * (o->repeat + o->warmup) > 100000000LL)
    return cli_usage("run", "--graph %lld with --repeat %lld and --warmup %lld makes %lld "
                     "launches; at most 100000000", o->graph, o->repeat, o->warmup,
                     o->graph * (o->repeat + o->warmup));
  return 0;
}

/* Parses every spec, in the order given (random fills follow --seed in that order). */
static int parse_specs(run_opts *o, texts *args, texts *sets, texts *reads, texts *expects) {
  run_random_seed(o->seed);
  o->args = calloc((size_t)(args->n ? args->n : 1), sizeof *o->args);
  o->sets = calloc((size_t)(sets->n ? sets->n : 1), sizeof *o->sets);
  o->reads = calloc((size_t)(reads->n ? reads->n : 1), sizeof *o->reads);
  o->expects = calloc((size_t)(expects->n ? expects->n : 1), sizeof *o->expects);
  if (!o->args || !o->sets || !o->reads || !o->expects)
    return cli_fail("run", "options", CUCORE_HOST_OUT_OF_MEMORY);
  for (int i = 0; i < args->n; i++) {
    int rc = run_parse_arg(o, args->v[i], i, &o->args[i]);
    o->nargs = i + 1;
    if (rc) return rc;
  }
  for (int i = 0; i < sets->n; i++) {
    int rc = run_parse_global_set(o, sets->v[i], &o->sets[i]);
    o->nsets = i + 1;
    if (rc) return rc;
  }
  for (int i = 0; i < reads->n; i++) {
    int rc = run_parse_global_read(reads->v[i], &o->reads[i]);
    o->nreads = i + 1;
    if (rc) return rc;
  }
  for (int i = 0; i < expects->n; i++) {
    int rc = run_parse_expect(expects->v[i], &o->expects[i]);
    o->nexpects = i + 1;
    if (rc) return rc;
    if (!run_expect_target_known(o, o->expects[i].target)) {
      char list[512] = "";
      size_t n = 0;
      for (int b = 0; b < o->nbufs && n + 40 < sizeof list; b++)
        n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", n ? ", " : "", o->bufs[b].label);
      for (int r = 0; r < o->nreads && n + 40 < sizeof list; r++)
        n += (size_t)snprintf(list + n, sizeof list - n, "%s%.30s", n ? ", " : "", o->reads[r].name);
      return cli_usage("run", "--expect `%s`: `%s` is no buffer argument and no --read-global "
                       "(%s%s)", o->expects[i].text, o->expects[i].target,
                       n ? "these can be expected: " : "there is no output to compare", list);
    }
  }
  return 0;
}

/* The code of the object read offline, PTX types attached (NULL when it cannot be read). */
static cucore_binary *read_code(cucore_object *obj) {
  cucore_code_type type;
  const void *code = NULL;
  size_t size = 0;
  cucore_binary *bin = NULL;
  if (cucore_object_code(obj, &type, &code, &size) != CUCORE_OK ||
      cucore_binary_open(code, size, type, 0, &bin) != CUCORE_OK)
    return NULL;
  return bin;
}

/* The module variable `name` of the code read offline (a name expression through the object). */
static const cucore_global_info *find_global(cucore_object *obj, cucore_binary *bin,
                                             const char *name) {
  const cucore_global_info *g = NULL;
  char buf[512];
  const char *symbol = run_global_symbol(obj, name, buf, sizeof buf);
  if (cucore_binary_find_global(bin, symbol, &g) == CUCORE_OK) return g;
  if (cucore_binary_find_global(bin, name, &g) == CUCORE_OK) return g;
  cucore_binary_find_global(bin, name, &g); /* the message that lists what exists */
  return NULL;
}

/* Without a GPU: the launch configuration and the module variables against the code. */
static int check_offline(run_opts *o, cucore_kernel *k, cucore_object *obj, int *arch) {
  cucore_launch_config cfg;
  memset(&cfg, 0, sizeof cfg);
  memcpy(cfg.grid, o->grid, sizeof cfg.grid);
  memcpy(cfg.block, o->block, sizeof cfg.block);
  cfg.shared_bytes = (unsigned)o->smem;
  if (o->cluster[0]) cucore_launch_config_cluster(&cfg, o->cluster[0], o->cluster[1], o->cluster[2]);
  if (o->cooperative) cucore_launch_config_cooperative(&cfg, 1);
  cucore_binary *bin = read_code(obj);
  *arch = 0;
  if (bin) {
    cucore_binary_info info;
    cucore_binary_get_info(bin, &info);
    *arch = info.arch;
  }
  /* The command allows clusters above 8 blocks where the device can (as on a GPU). */
  cucore_status st = cucore_kernel_check_launch_offline(k, &cfg, 0,
                                                        CUCORE_CHECK_NON_PORTABLE_CLUSTER);
  if (CUCORE_CODE(st) == CUCORE_LAUNCH_CONFIG) {
    cucore_binary_destroy(bin);
    return cli_fail("run", o->kernel, st); /* as the GPU path says it */
  }
  for (int i = 0; bin && i < o->nsets; i++) {
    const run_global_set *s = &o->sets[i];
    const cucore_global_info *g = find_global(obj, bin, s->name);
    if (!g) {
      cucore_binary_destroy(bin);
      return cli_fail("run", s->text, CUCORE_NOT_FOUND);
    }
    size_t size = 0;
    unsigned char *bytes = run_value_bytes(o, &s->v, &size);
    free(bytes);
    if (size != g->size) {
      fprintf(stderr, "cucore run: --global %s: the value is %zu bytes; `%s` (%s) is %llu bytes\n",
              s->text, size, s->name, cucore_global_kind_name(g->kind),
              (unsigned long long)g->size);
      cucore_binary_destroy(bin);
      return CLI_EXIT_FAILURE;
    }
  }
  for (int i = 0; bin && i < o->nreads; i++) {
    const run_global_read *r = &o->reads[i];
    const cucore_global_info *g = find_global(obj, bin, r->name);
    if (!g) {
      cucore_binary_destroy(bin);
      return cli_fail("run", r->text, CUCORE_NOT_FOUND);
    }
    size_t esz = (size_t)elem_sizes[r->type];
    if ((r->count && r->count * esz > g->size) || (!r->count && g->size % esz)) {
      fprintf(stderr, "cucore run: --read-global %s: `%s` (%s) is %llu bytes, which %s\n",
              r->text, r->name, cucore_global_kind_name(g->kind), (unsigned long long)g->size,
              r->count ? "is less than the elements asked for" : "is not a whole number of them");
      cucore_binary_destroy(bin);
      return CLI_EXIT_FAILURE;
    }
  }
  cucore_binary_destroy(bin);
  return 0;
}

/* Compiles a .cu (registering the kernel's and the globals' names) or loads the file. */
static int load_code(cli_source *src, run_opts *o, cucore_object **obj) {
  const char *dot = strrchr(o->file, '.');
  if (dot && (!strcmp(dot, ".cu") || !strcmp(dot, ".ll") || !strcmp(dot, ".bc"))) {
    if (!strcmp(dot, ".cu")) {
      if (cli_source_add_expr(src, o->kernel)) return CLI_EXIT_FAILURE;
      /* C++ names of module variables are registered as "&NAME" (NVRTC takes a variable's
       * name expression as its address); plain names are their own symbols. */
      for (int i = 0; i < o->nsets + o->nreads; i++) {
        const char *name = i < o->nsets ? o->sets[i].name : o->reads[i - o->nsets].name;
        if (run_plain_name(name)) continue;
        if (run_expr_keep(o, name) || cli_source_add_expr(src, o->exprs[o->nexprs - 1]))
          return CLI_EXIT_FAILURE;
      }
    }
    return cli_source_compile(src, "run", o->file, CUCORE_CODE_CUBIN, obj, NULL);
  }
  cucore_status st = cucore_object_from_file(o->file, CUCORE_CODE_AUTO, obj);
  return st == CUCORE_OK ? 0 : cli_fail("run", o->file, st);
}

/* Before any work, on any machine: the --expect values and files, and the output files
 * (none an input; the inputs are the code and every @FILE, noted as the specs were read). */
static int check_before_work(run_opts *o) {
  cli_input_add(o->file);
  int rc = run_prepare_expects(o);
  return rc ? rc : run_check_outputs(o);
}

/* No GPU: everything that needs none is checked, and it is said that nothing was launched. */
static int run_offline(run_opts *o, cucore_kernel *k, cucore_object *obj, int ndev) {
  int arch = 0;
  const char *why = ndev == 0 && !cucore_last_error()[0] ? "no device" : cucore_last_error();
  char reason[512];
  snprintf(reason, sizeof reason, "%s", why);
  int rc = check_offline(o, k, obj, &arch);
  if (rc) return rc;
  fprintf(stderr, "cucore run: the %d arguments match kernel `%s`", o->nargs, o->kernel);
  if (arch) fprintf(stderr, ", the launch configuration fits sm_%d", arch);
  if (o->nsets + o->nreads)
    fprintf(stderr, " and the %d module variables fit", o->nsets + o->nreads);
  fprintf(stderr, "; no GPU here (%s), so nothing was launched\n", reason);
  return CLI_EXIT_FAILURE;
}

/* The report, as JSON in --json-out's file (the text on stdout) or on stdout. */
static int write_report(run_opts *o, const run_timing *t, const char *symbol) {
  if (!o->json_out) {
    json_out j = {stdout, 0, {0}, 1};
    run_report(o, t, symbol, o->json ? &j : NULL);
    return 0;
  }
  cli_outfile f;
  if (cli_out_open(&f, "run", "--json-out", o->json_out)) {
    run_report(o, t, symbol, NULL); /* the text report at least */
    return CLI_EXIT_FAILURE;
  }
  json_out j = {f.f, 0, {0}, 1};
  run_report(o, t, symbol, &j);
  return cli_out_close(&f, 1);
}

/* After the launch: the files, the --expect comparisons and the report, each done even when
 * an earlier one failed, so the timing is never lost. */
static int run_finish(run_opts *o, const run_timing *t, const char *symbol) {
  int rc = run_save_outputs(o);
  int failed = run_check_expects(o);
  int report = write_report(o, t, symbol);
  if (failed > 0)
    fprintf(stderr, "cucore run: %d --expect check%s failed\n", failed, failed == 1 ? "" : "s");
  if (!rc && failed) rc = CLI_EXIT_FAILURE;
  return rc ? rc : report;
}

static int run_body(cli_source *src, int argc, char **argv, run_opts *o) {
  texts args = {0}, sets = {0}, reads = {0}, expects = {0};
  o->show = 8;
  o->repeat = 1;
  int rc = read_options(src, argc, argv, o, &args, &sets, &reads, &expects);
  if (!rc) rc = parse_specs(o, &args, &sets, &reads, &expects);
  free(args.v);
  free(sets.v);
  free(reads.v);
  free(expects.v);
  if (!rc) rc = check_before_work(o);
  if (rc) return rc;

  /* 1. The code and the kernel -- offline when there is no GPU. */
  cucore_object *obj = NULL;
  rc = load_code(src, o, &obj);
  cli_source_free(src);
  if (rc) return rc;
  cucore_kernel *k = NULL;
  cucore_args *list = NULL;
  const char *symbol = o->kernel;
  cucore_status st = cucore_object_get_kernel(obj, o->kernel, &k);
  if (st != CUCORE_OK) {
    rc = cli_fail("run", o->file, st);
    goto done;
  }
  cucore_kernel_name(k, &symbol);
  st = cucore_args_create(k, &list);
  if (st != CUCORE_OK) {
    rc = cli_fail("run", o->kernel, st);
    goto done;
  }
  /* 2. The arguments against the kernel, before any GPU is opened. */
  rc = run_bind_args(o, list, obj, symbol);
  if (rc) goto done;
  int ndev = 0;
  if (cucore_device_count(&ndev) != CUCORE_OK || ndev == 0) {
    rc = run_offline(o, k, obj, ndev);
    goto done;
  }
  if (o->device >= ndev) {
    rc = cli_usage("run", "--device %d: there %s %d GPU%s (0..%d)", o->device,
                   ndev == 1 ? "is" : "are", ndev, ndev == 1 ? "" : "s", ndev - 1);
    goto done;
  }
  /* 3. The GPU, then files, checks and the report. */
  run_timing t;
  rc = run_on_device(o, k, obj, &t);
  if (rc) goto done;
  rc = run_finish(o, &t, symbol);
done:
  cucore_args_destroy(list);
  cucore_kernel_destroy(k);
  cucore_object_destroy(obj);
  return rc;
}

/* Every exit path frees the verb's options and specs, early usage errors included. */
int cmd_run(int argc, char **argv) {
  cli_source src;
  if (cli_source_init(&src)) return CLI_EXIT_FAILURE;
  run_opts o;
  memset(&o, 0, sizeof o);
  int rc = run_body(&src, argc, argv, &o);
  cli_source_free(&src);
  run_opts_free(&o);
  return rc;
}
