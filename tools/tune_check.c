/* tune_check.c -- what `cucore tune` checks before it compiles anything, on any machine (the dry
 * run is the offline check of a tune command and gives no false green):
 *   - a -DNAME compile option that names a parameter (the parameter's values would replace it
 *     without a word);
 *   - the stage counts, said before compiling, with each parameter nothing names (no word of the
 *     source, no launch expression, no template hole: its values compile the same code again),
 *     and a gate on the number of compiles (TUNE_COMPILES_ASK: --yes, or a yes on a terminal);
 *   - the --arg and --global specs against the kernel, exactly as `cucore run` checks them (one
 *     checker for both): the first configuration compiled as the tune compiles it (so its compile
 *     is in the cache for the tune), its kernel looked up, the arguments bound and checked (count,
 *     size, type, alignment), the module variables found and their sizes matched. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tune.h"

/* The name a -D option defines ("-DNAME=V", "-DNAME", "-D NAME=V"), length in *n; NULL when the
 * option is no -D. */
static const char *define_name(const char *opt, const char *next, size_t *n) {
  const char *p = NULL;
  if (strncmp(opt, "-D", 2) == 0) p = opt[2] ? opt + 2 : next;
  if (strncmp(opt, "--define-macro=", 15) == 0) p = opt + 15;
  if (!p) return NULL;
  *n = strcspn(p, "=");
  return p;
}

int tune_check_defines(const tune_ctx *c) {
  const cli_source *s = c->src;
  for (int i = 0; i < s->raw_count; i++) {
    size_t n = 0;
    const char *name = define_name(s->raw[i], i + 1 < s->raw_count ? s->raw[i + 1] : NULL, &n);
    size_t np = 0;
    cucore_tune_space_get_param_count(c->space, &np);
    for (size_t k = 0; name && k < np; k++) {
      cucore_tune_param_info p;
      cucore_tune_space_get_param(c->space, k, &p);
      if (strlen(p.name) == n && strncmp(p.name, name, n) == 0 &&
          p.kind == CUCORE_TUNE_PARAM_DEFINE)
        return cli_usage("tune",
                         "the compile option `%s` defines `%s`, which is a parameter of the space: "
                         "each configuration's -D%s=VALUE would replace it; drop one of them",
                         s->raw[i], p.name, p.name);
    }
  }
  return 0;
}

/* Each parameter that nothing names: a warning with what its values cost. */
static void unused_params(const tune_ctx *c) {
  size_t np = 0;
  cucore_tune_space_get_param_count(c->space, &np);
  for (size_t k = 0; k < np; k++) {
    cucore_tune_param_info p;
    cucore_tune_space_get_param(c->space, k, &p);
    unsigned code = CUCORE_TUNE_USED_SOURCE | CUCORE_TUNE_USED_LAUNCH | CUCORE_TUNE_USED_TEMPLATE;
    if ((p.uses & code) || p.value_count < 2) continue;
    fprintf(stderr,
            "cucore tune: warning: parameter `%s` is named by no word of %s, no launch expression "
            "and no template hole%s: its %zu values compile the same code %zu times\n",
            p.name, c->line->file,
            p.uses & CUCORE_TUNE_USED_RESTRICTION ? " (only by restrictions)" : "", p.value_count,
            p.value_count);
  }
}

/* The gate: above TUNE_COMPILES_ASK distinct compiles, --yes, or a yes typed on a terminal. */
static int gate(const tune_ctx *c, unsigned long long compiles) {
  if (compiles <= TUNE_COMPILES_ASK || c->line->yes || c->line->dry_run_no_arch) return 0;
  int ask = isatty(0) && isatty(2);
  fprintf(stderr, "cucore tune: %llu distinct compiles to make (more than %d): %s", compiles,
          TUNE_COMPILES_ASK,
          ask ? "go on? [y/N] "
              : "pass --yes to go on, or narrow the space (--restrict, fewer "
                "values)\n");
  if (!ask) return CLI_EXIT_USAGE;
  char answer[16] = "";
  if (!fgets(answer, sizeof answer, stdin) || (answer[0] != 'y' && answer[0] != 'Y'))
    return CLI_EXIT_USAGE;
  return 0;
}

int tune_check_space(tune_ctx *c) {
  cucore_tune_counts k;
  cucore_status st = cucore_tune_space_count(c->space, &k);
  if (st != CUCORE_OK) return cli_fail("tune", "the space", st);
  unused_params(c);
  if (!c->line->json && (isatty(2) || k.compiles > 100))
    fprintf(stderr,
            "cucore tune: %llu raw -> %llu after restrictions -> %llu with a valid launch -> %llu "
            "distinct compiles%s\n",
            (unsigned long long)k.raw, (unsigned long long)k.after_restrictions,
            (unsigned long long)k.runnable, (unsigned long long)k.compiles,
            c->line->dry_run_no_arch ? " (none made without an arch)" : "");
  if (k.restriction_errors && k.after_restrictions == 0) {
    c->sum.counts = k;
    tune_restriction_errors_warn(c);
    return CLI_EXIT_FAILURE;
  }
  const tune_line *l = c->line;
  if (l->dry_run_no_arch && l->csv && l->max_rows && k.after_restrictions > l->max_rows) {
    fprintf(stderr,
            "cucore tune: --csv %s would list %llu configurations, more than --rows %llu; give "
            "--rows all (or a larger --rows) to write them\n",
            l->csv, (unsigned long long)k.after_restrictions, l->max_rows);
    return CLI_EXIT_USAGE;
  }
  unsigned long long compiles = k.compiles; /* a search compiles at most its budget */
  if (l->max_evals && (unsigned long long)l->max_evals < compiles)
    compiles = (unsigned long long)l->max_evals;
  return gate(c, compiles);
}

/* The first configuration with a valid launch (its kernel name and defines are a compile the
 * tune makes); -1 when there is none. */
static long long first_runnable(const tune_ctx *c) {
  uint64_t index = 0;
  return cucore_tune_space_next_runnable(c->space, 0, &index) == CUCORE_OK ? (long long)index : -1;
}

/* The arguments bound to the kernel of `obj` (every check of `cucore run`), and the module
 * variables against its code. */
static int check_binding(tune_ctx *c, cucore_object *obj, const char *symbol) {
  cucore_kernel *k = NULL;
  cucore_args *args = NULL;
  cucore_status st = cucore_object_get_kernel(obj, symbol, &k);
  if (st == CUCORE_OK) st = cucore_args_create(k, &args);
  int rc = st == CUCORE_OK ? 0 : cli_fail("tune", c->kernel_name, st);
  for (int i = 0; !rc && i < c->specs.nbufs; i++) c->specs.bufs[i].ptr = 0;
  if (!rc) rc = args_bind_all(&c->specs, args, obj, symbol);
  if (!rc) rc = args_bind_check_globals(&c->specs, obj);
  cucore_args_destroy(args);
  cucore_kernel_destroy(k);
  return rc;
}

int tune_check_kernel(tune_ctx *c, int arch) {
  long long first = first_runnable(c);
  if (first < 0) return 0; /* nothing runs: the report says why */
  char *kernel = tune_text(c, (uint64_t)first, CUCORE_TUNE_TEXT_KERNEL);
  char *defines = tune_text(c, (uint64_t)first, CUCORE_TUNE_TEXT_DEFINES);
  if (!kernel || !defines) {
    free(kernel), free(defines);
    return cli_fail("tune", "the first configuration", cucore_last_status());
  }
  cucore_tune_compile_request q = {0, arch, kernel, defines, 0};
  cucore_tune_compile_result r;
  cucore_object *obj = NULL;
  int rc = 0;
  cucore_status st = cucore_tune_compile(c->source, c->source_size, c->line->file, c->src->opts, &q,
                                         &r, &obj);
  if (st != CUCORE_OK) rc = cli_fail("tune", "the first configuration", st);
  /* A compile error is the tune's to report (per configuration, or a kernel not in the file). */
  if (!rc && r.ok) rc = check_binding(c, obj, r.symbol);
  cucore_tune_compile_result_release(&r);
  cucore_object_destroy(obj);
  free(kernel);
  free(defines);
  return rc;
}
