/* opt.c -- the command's one option reader (model: curl's tool_getparam.c table): every verb
 * reads its argv from its table of cli_opt (opt.h); what the table does not know goes, when
 * the verb compiles, to the compile's own table (cli_source_opts: --name-expr, --nvcc, --log)
 * and then to the library's compile options; an unknown option gets the nearest known one.
 * The same tables render the verb's option list for its help and the man page. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

const cli_opt cli_json_opts[] = {
    {.name = "--json", .kind = CLI_OPT_FLAG, CLI_AT(cli_json_only, json), .help = CLI_JSON_HELP},
    {0}};

static const cli_opt *find_opt(const cli_opt *t, const char *name, size_t len) {
  for (; t->name; t++) {
    if (strlen(t->name) == len && strncmp(t->name, name, len) == 0) return t;
    if (t->alias && strlen(t->alias) == len && strncmp(t->alias, name, len) == 0) return t;
  }
  return NULL;
}

/* ---- did you mean ------------------------------------------------------------------------- */

/* The optimal string alignment distance: insertions, deletions, substitutions and swaps of
 * two neighbours ("--arhc" is one from "--arch") each count 1. */
static size_t typo_distance(const char *a, size_t la, const char *b) {
  size_t lb = strlen(b);
  if (la > 63 || lb > 63) return 99;
  size_t d[64][64];
  for (size_t i = 0; i <= la; i++) d[i][0] = i;
  for (size_t j = 0; j <= lb; j++) d[0][j] = j;
  for (size_t i = 1; i <= la; i++)
    for (size_t j = 1; j <= lb; j++) {
      size_t best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
      if (d[i - 1][j] + 1 < best) best = d[i - 1][j] + 1;
      if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
          d[i - 2][j - 2] + 1 < best)
        best = d[i - 2][j - 2] + 1;
      d[i][j] = best;
    }
  return d[la][lb];
}

typedef struct nearest {
  const char *want;
  size_t len, best;
  char name[64];
} nearest;

static void consider(nearest *n, const char *prefix, const char *name) {
  char full[64];
  snprintf(full, sizeof full, "%s%s", prefix, name);
  size_t d = typo_distance(n->want, n->len, full);
  if (d < n->best) {
    n->best = d;
    snprintf(n->name, sizeof n->name, "%s", full);
  }
}

static int unknown_option(const cli_parse *p, const char *a) {
  nearest n = {a, strcspn(a, "="), 99, ""};
  for (const cli_opt *t = p->opts; t->name; t++) {
    consider(&n, "", t->name);
    if (t->alias) consider(&n, "", t->alias);
  }
  if (p->src) {
    for (const cli_opt *t = cli_source_opts; t->name; t++) consider(&n, "", t->name);
    for (int i = 0; i < CUCORE_OPT_COUNT; i++)
      consider(&n, "--", cucore_option_name((cucore_option)i));
  }
  if (n.best <= 3 && n.best * 3 <= n.len)
    return cli_usage(p->verb, "unknown option `%.*s`; did you mean `%s`? (see `cucore help %s`)",
                     (int)n.len, a, n.name, p->verb);
  return cli_usage(p->verb, "unknown option `%.*s`; see `cucore help %s`", (int)n.len, a, p->verb);
}

/* ---- values --------------------------------------------------------------------------------- */

int cli_list_keep(cli_list *l, const char *s) {
  const char **v = cli_grow(l->v, &l->cap, (size_t)l->n + 1, sizeof *v, "an option's values");
  if (!v) return 0;
  l->v = v;
  l->v[l->n++] = s;
  return 1;
}

static int push_list(cli_list *l, const char *s) { return cli_list_keep(l, s) ? 0 : -1; }

static void store_int(void *field, size_t size, long long v) {
  if (size == sizeof(int)) {
    int x = (int)v; /* the table's range fits an int */
    memcpy(field, &x, sizeof x);
  } else {
    memcpy(field, &v, sizeof v);
  }
}

/* The index of `v` among the words of `words` ("ptx|cubin"), or -1. */
static int choice_index(const char *words, const char *v) {
  size_t len = strlen(v);
  int i = 0;
  for (const char *w = words; *w; i++) {
    size_t n = strcspn(w, "|");
    if (n == len && strncmp(w, v, n) == 0) return i;
    w += n + (w[n] == '|');
  }
  return -1;
}

/* Stores value `v` of option `o` into the options struct at `base`. */
static int store(const char *verb, const cli_opt *o, void *base, const char *v) {
  char *field = (char *)base + o->offset;
  long long x = 0;
  double r = 0;
  int rc = 0, k;
  switch (o->kind) {
  case CLI_OPT_FLAG: *(int *)(void *)field = 1; break;
  case CLI_OPT_TEXT: *(const char **)(void *)field = v; break;
  case CLI_OPT_LIST:
    if (push_list((cli_list *)(void *)field, v))
      return cli_fail(verb, o->name, CUCORE_HOST_OUT_OF_MEMORY);
    break;
  case CLI_OPT_INT:
    rc = o->hi == CLI_HI_SMEM ? cli_num_smem(verb, o->name, v, &x)
                              : cli_num_int(verb, o->name, v, o->lo, o->hi, &x);
    if (!rc) store_int(field, o->size, x);
    break;
  case CLI_OPT_DIMS: rc = cli_num_dims(verb, o->name, v, o->dims, (unsigned *)(void *)field); break;
  case CLI_OPT_REAL:
    rc = cli_num_real(verb, o->name, v, &r);
    if (!rc) memcpy(field, &r, sizeof r);
    break;
  case CLI_OPT_CHOICE:
    k = choice_index(o->arg, v);
    if (k < 0) return cli_usage(verb, "%s `%s`: expected one of %s", o->name, v, o->arg);
    *(int *)(void *)field = k;
    break;
  }
  if (!rc && o->seen) *(int *)(void *)((char *)base + o->seen - 1) = 1;
  return rc;
}

/* One option at argv[*i] that table row `o` knows, stored at `base`; *i moves past its value. */
static int take_option(const char *verb, const cli_opt *o, void *base, int argc, char **argv,
                       int *i) {
  const char *a = argv[*i], *eq = strncmp(a, "--", 2) == 0 ? strchr(a, '=') : NULL;
  if (o->kind == CLI_OPT_FLAG) {
    if (eq) return cli_usage(verb, "%.*s takes no value (got `%s`)", (int)(eq - a), a, a);
    return store(verb, o, base, NULL);
  }
  const char *v = eq ? eq + 1 : *i + 1 < argc ? argv[++*i] : NULL;
  if ((!v || (o->nonempty && !v[0])) && o->need)
    return cli_usage(verb, "%s needs %s", o->name, o->need);
  if (!v) return cli_usage(verb, "%s needs a value (%s); see `cucore help %s`", a, o->arg, verb);
  return store(verb, o, base, v);
}

/* The length of option `a`'s name: up to '=' for a long option, all of it for a short one. */
static size_t name_length(const char *a) {
  return strncmp(a, "--", 2) == 0 ? strcspn(a, "=") : strlen(a);
}

/* One of the library's compile options at argv[i], through its own parser; its words are kept
 * in s->raw (cli_source_arch). */
static int library_option(cli_source *s, const char *verb, int argc, char **argv, int i) {
  const char *a = argv[i];
  if (a[0] != '-' || !a[1]) return 0;
  int used = 0;
  cucore_status st = cucore_options_parse(s->opts, a, i + 1 < argc ? argv[i + 1] : NULL, &used);
  if (st == CUCORE_OK) {
    char **r = cli_grow(s->raw, &s->raw_cap, (size_t)s->raw_count + (size_t)used, sizeof *r,
                        "the list of compile options");
    if (!r) return -1;
    s->raw = r;
    for (int k = 0; k < used; k++) s->raw[s->raw_count++] = argv[i + k];
    return used;
  }
  /* Not a compile option (CUCORE_UNKNOWN_OPTION): the verb says so, with the nearest of its
   * own and the compile options. */
  if (CUCORE_CODE(st) == CUCORE_UNKNOWN_OPTION) return 0;
  cli_usage(verb, "%s", cucore_last_error());
  return -1;
}

int cli_source_option(cli_source *s, const char *verb, int argc, char **argv, int i) {
  const cli_opt *o = find_opt(cli_source_opts, argv[i], name_length(argv[i]));
  if (!o) return library_option(s, verb, argc, argv, i);
  int next = i;
  return take_option(verb, o, s, argc, argv, &next) ? -1 : next - i + 1;
}

static int operand(cli_parse *p, const char *a) {
  if (p->npos < p->max_pos) {
    p->pos[p->npos++] = a;
    return 0;
  }
  if (p->max_pos == 0) return cli_usage(p->verb, "unexpected operand `%s`", a);
  return cli_usage(p->verb, "one %s only (got `%s` and `%s`)", p->pos_name, p->pos[0], a);
}

int cli_opt_parse(cli_parse *p, int argc, char **argv) {
  int options_end = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    int rc;
    if (options_end || a[0] != '-' || !a[1]) {
      rc = operand(p, a);
    } else if (strcmp(a, "--") == 0) {
      options_end = 1;
      rc = 0;
    } else {
      const cli_opt *o = find_opt(p->opts, a, name_length(a));
      int used = o || !p->src ? 0 : cli_source_option(p->src, p->verb, argc, argv, i);
      if (used < 0) return CLI_EXIT_USAGE;
      if (o)
        rc = take_option(p->verb, o, p->base, argc, argv, &i);
      else if (used > 0)
        rc = (i += used - 1, 0);
      else
        rc = unknown_option(p, a);
    }
    if (rc) return rc;
  }
  return 0;
}

/* ---- help ----------------------------------------------------------------------------------- */

/* The option's range, for its help line ("" when it has none). */
static void range_text(const cli_opt *o, char *buf, size_t len) {
  int arch = 0;
  buf[0] = '\0';
  if (o->kind == CLI_OPT_INT && o->hi == CLI_HI_SMEM) {
    long long cap = cli_smem_cap(&arch);
    snprintf(buf, len, "(0 to %lld: sm_%d's opt-in limit, the largest)", cap, arch);
  } else if (o->kind == CLI_OPT_INT && o->hi == LLONG_MAX) {
    snprintf(buf, len, "(%lld or more)", o->lo);
  } else if (o->kind == CLI_OPT_INT) {
    snprintf(buf, len, "(%lld to %lld)", o->lo, o->hi);
  } else if (o->kind == CLI_OPT_DIMS) {
    snprintf(buf, len, "(x 1..%u, y 1..%u, z 1..%u)", o->dims->max[0], o->dims->max[1],
             o->dims->max[2]);
  }
}

#define HELP_INDENT "                        "

void cli_opt_help(FILE *f, const cli_opt *opts) {
  for (const cli_opt *o = opts; o->name; o++) {
    char left[64], range[96];
    snprintf(left, sizeof left, "%s%s%s%s%s", o->alias ? o->alias : "", o->alias ? ", " : "",
             o->name, o->kind == CLI_OPT_FLAG ? "" : " ", o->kind == CLI_OPT_FLAG ? "" : o->arg);
    fprintf(f, "  %-22s%s", left, strlen(left) > 21 ? "\n" HELP_INDENT : "");
    size_t col = 24;
    for (const char *h = o->help; *h; h++) {
      fputc(*h, f);
      col++;
      if (*h == '\n') {
        fputs(HELP_INDENT, f);
        col = 24;
      }
    }
    range_text(o, range, sizeof range);
    if (range[0]) fprintf(f, "%s%s", col + 1 + strlen(range) > 92 ? "\n" HELP_INDENT : " ", range);
    fputc('\n', f);
  }
}

const char *cli_source_arch(const cli_source *s) {
  const char *arch = NULL;
  for (int k = 0; k < s->raw_count; k++) {
    const char *r = s->raw[k];
    const char *name = strncmp(r, "--", 2) == 0 ? r + 2 : r + 1;
    if (strncmp(name, "arch", 4) != 0) continue;
    if (name[4] == '=')
      arch = name + 5;
    else if (!name[4] && k + 1 < s->raw_count)
      arch = s->raw[k + 1];
  }
  return arch;
}

void cli_opt_help_compile(FILE *f) {
  /* The library's options as rows of a table: their names and one-line help come from it. */
  static char names[CUCORE_OPT_COUNT][64];
  cli_opt rows[CUCORE_OPT_COUNT + 1];
  memset(rows, 0, sizeof rows);
  for (int i = 0; i < CUCORE_OPT_COUNT; i++) {
    snprintf(names[i], sizeof names[i], "--%s", cucore_option_name((cucore_option)i));
    rows[i] = (cli_opt){.name = names[i],
                        .kind = CLI_OPT_FLAG,
                        .help = cucore_option_help((cucore_option)i)};
  }
  cli_opt_help(f, rows);
  cli_opt_help(f, cli_source_opts);
}
