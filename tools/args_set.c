/* args_set.c -- the options made of value specs, as `cucore run` and `cucore tune` read them
 * into an args_set: --arg (one value each, args_item_parse), --global NAME=VALUE,
 * --read-global NAME:TYPE[N][>FILE] and --expect ARG=VALUE, and freeing what they made. */
#include "args_spec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int args_set_parse_arg(args_set *o, const char *spec, int index, args_arg *a) {
  memset(a, 0, sizeof *a);
  a->spec = spec;
  args_cursor c = {"--arg", spec, spec, spec + strlen(spec), o, "", 0};
  snprintf(c.label, sizeof c.label, "%d", index);
  return args_item_parse(&c, c.end, &a->v);
}

/* ---- globals and expectations ------------------------------------------------------------- */

int args_set_parse_global(args_set *o, const char *text, args_global_set *g) {
  memset(g, 0, sizeof *g);
  g->text = text;
  args_cursor c = {"--global", text, text, text + strlen(text), o, "", 0};
  const char *eq = strchr(text, '=');
  if (!eq || eq == text)
    return args_cursor_usage(&c, "expected NAME=VALUE (e.g. table=f32[64]=@table.npy, n=i32:5, "
                                 "params=struct:{f32:1,i32:2})");
  g->name = args_cursor_dup(text, eq);
  snprintf(c.label, sizeof c.label, "%.*s", (int)sizeof c.label - 1, g->name);
  c.p = eq + 1;
  return args_item_parse(&c, c.end, &g->v);
}

int args_set_parse_read(const char *text, args_global_read *r) {
  memset(r, 0, sizeof *r);
  r->text = text;
  args_cursor c = {"--read-global", text, text, text + strlen(text), NULL, "", 0};
  /* NAME:TYPE[N]>FILE; the name may hold ':' and '>' (ns::coef<float>): the type part is the
   * first ':' followed by a known type. */
  const char *end = text + strlen(text);
  for (const char *colon = strchr(text, ':'); colon; colon = strchr(colon + 1, ':')) {
    const char *t = colon + 1, *q = t;
    while (q < end && ((*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9'))) q++;
    int type = args_elem_parse(t, (size_t)(q - t));
    if (type < 0 || colon == text) continue;
    if (q < end && *q != '[' && *q != '>') continue;
    r->name = args_cursor_dup(text, colon);
    r->type = (args_elem)type;
    r->has_type = 1;
    if (q < end && *q == '[') {
      const char *close = strchr(q, ']');
      if (!close) return args_cursor_usage(&c, "`[` without `]`");
      if (close > q + 1) {
        char *n = args_cursor_dup(q + 1, close), *e = NULL;
        unsigned long long count = strtoull(n, &e, 10);
        int bad = n[0] < '0' || n[0] > '9' || *e || count == 0 || count > (1ull << 34);
        free(n);
        if (bad) return args_cursor_usage(&c, "the element count in [N] must be 1..2^34");
        r->count = (size_t)count;
      }
      q = close + 1;
    }
    if (q < end) {
      if (*q != '>' || q + 1 >= end)
        return args_cursor_usage(&c, "expected NAME:TYPE[N] or NAME:TYPE[N]>FILE after the type");
      r->save = q + 1;
    }
    return 0;
  }
  /* No type: the whole variable, shown as bytes (u8). */
  r->name = args_cursor_dup(text, end);
  r->type = ARGS_U8;
  return 0;
}

int args_set_parse_expect(const char *text, args_expect *e) {
  memset(e, 0, sizeof *e);
  e->text = text;
  args_cursor c = {"--expect", text, text, text + strlen(text), NULL, "", 0};
  /* ARG=VALUE: ARG is an argument number ("2", "3.1" for a buffer in a struct) or a
   * --read-global name; VALUE a number, iota, {list} or @file. */
  const char *eq = strchr(text, '=');
  if (!eq || eq == text || !eq[1])
    return args_cursor_usage(&c, "expected ARG=VALUE: an argument number (or a --read-global name) "
                                 "and a number, iota, {list} or @file.npy");
  e->target = args_cursor_dup(text, eq);
  e->value_text = args_cursor_dup(eq + 1, text + strlen(text));
  const char *v = e->value_text;
  if (v[0] == '@')
    e->init = ARGS_INIT_FILE;
  else if (v[0] == '{')
    e->init = ARGS_INIT_LIST;
  else if (strcmp(v, "iota") == 0)
    e->init = ARGS_INIT_IOTA;
  else if (strcmp(v, "random") == 0)
    return args_cursor_usage(&c, "random values cannot be expected; give a number, iota, {list} or "
                                 "@file");
  else
    e->init = ARGS_INIT_VALUE;
  return 0;
}

int args_set_keep_expr(args_set *o, const char *name) {
  char **n = cli_grow(o->exprs, &o->exprs_cap, (size_t)o->nexprs + 1, sizeof *n,
                      "the list of name expressions");
  if (!n) return -1;
  o->exprs = n;
  size_t len = strlen(name);
  char *e = malloc(len + 2);
  if (!e) return -1;
  e[0] = '&';
  memcpy(e + 1, name, len + 1);
  o->exprs[o->nexprs++] = e;
  return 0;
}

void args_set_free(args_set *o) {
  for (int i = 0; i < o->nexprs; i++) free(o->exprs[i]);
  free(o->exprs);
  for (int i = 0; i < o->nargs; i++) args_item_free(&o->args[i].v);
  for (int i = 0; i < o->nbufs; i++) {
    free(o->bufs[i].host);
    free((void *)o->bufs[i].save);
  }
  for (int i = 0; i < o->nsets; i++) {
    free(o->sets[i].name);
    args_item_free(&o->sets[i].v);
  }
  for (int i = 0; i < o->nreads; i++) {
    free(o->reads[i].name);
    free(o->reads[i].host);
  }
  for (int i = 0; i < o->nexpects; i++) {
    free(o->expects[i].target);
    free(o->expects[i].value_text);
    free(o->expects[i].values);
  }
  free(o->args);
  free(o->bufs);
  free(o->sets);
  free(o->reads);
  free(o->expects);
  memset(o, 0, sizeof *o);
}
