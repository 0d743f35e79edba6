/* opt.c -- the command's one option reader (model: curl's tool_getparam.c table): every verb
 * reads its argv from its table of cli_opt (opt.h); what the table does not know goes to the
 * library's compile options when the verb takes them; an unknown option gets the nearest
 * known one. The same table renders the verb's option list for its help and the man page. */
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
    consider(&n, "", "--name-expr");
    consider(&n, "", "--nvcc");
    consider(&n, "", "--log");
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

static int store(cli_parse *p, const cli_opt *o, const char *v) {
  char *field = (char *)p->base + o->offset;
  long long x = 0;
  double r = 0;
  int rc = 0, k;
  switch (o->kind) {
  case CLI_OPT_FLAG: *(int *)(void *)field = 1; break;
  case CLI_OPT_TEXT: *(const char **)(void *)field = v; break;
  case CLI_OPT_LIST:
    if (push_list((cli_list *)(void *)field, v))
      return cli_fail(p->verb, o->name, CUCORE_HOST_OUT_OF_MEMORY);
    break;
  case CLI_OPT_INT:
    rc = o->hi == CLI_HI_SMEM ? cli_num_smem(p->verb, o->name, v, &x)
                              : cli_num_int(p->verb, o->name, v, o->lo, o->hi, &x);
    if (!rc) store_int(field, o->size, x);
    break;
  case CLI_OPT_DIMS:
    rc = cli_num_dims(p->verb, o->name, v, o->dims, (unsigned *)(void *)field);
    break;
  case CLI_OPT_REAL:
    rc = cli_num_real(p->verb, o->name, v, &r);
    if (!rc) memcpy(field, &r, sizeof r);
    break;
  case CLI_OPT_CHOICE:
    k = choice_index(o->arg, v);
    if (k < 0) return cli_usage(p->verb, "%s `%s`: expected one of %s", o->name, v, o->arg);
    *(int *)(void *)field = k;
    break;
  }
  if (!rc && o->seen) *(int *)(void *)((char *)p->base + o->seen - 1) = 1;
  return rc;
}

/* One option at argv[*i] the table knows; *i moves past its value. */
static int take_option(cli_parse *p, const cli_opt *o, int argc, char **argv, int *i) {
  const char *a = argv[*i], *eq = strncmp(a, "--", 2) == 0 ? strchr(a, '=') : NULL;
  if (o->kind == CLI_OPT_FLAG) {
    if (eq) return cli_usage(p->verb, "%.*s takes no value (got `%s`)", (int)(eq - a), a, a);
    return store(p, o, NULL);
  }
  const char *v = eq ? eq + 1 : *i + 1 < argc ? argv[++*i] : NULL;
  if (!v)
    return cli_usage(p->verb, "%s needs a value (%s); see `cucore help %s`", a, o->arg, p->verb);
  return store(p, o, v);
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
      size_t len = strncmp(a, "--", 2) == 0 ? strcspn(a, "=") : strlen(a);
      const cli_opt *o = find_opt(p->opts, a, len);
      int used = o || !p->src ? 0 : cli_source_option(p->src, p->verb, argc, argv, i);
      if (used < 0) return CLI_EXIT_USAGE;
      if (o)
        rc = take_option(p, o, argc, argv, &i);
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
