/*
 * space.c -- building a search space: parameters and their values, restrictions, the launch
 * expressions, the kernel name and the source that resolves AUTO parameters.
 */
#include "tune/space.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

cucore_status cucore_tune_space_create(cucore_tune_space **out) {
  cc_begin();
  CC_CHECK_ARG(out, "cucore_tune_space_create", "out");
  *out = cc_calloc(1, sizeof **out, "a tune space");
  if (!*out) return CUCORE_HOST_OUT_OF_MEMORY;
  cc_handle_init(*out, CC_KIND_TUNE_SPACE);
  return CUCORE_OK;
}

static void free_param(cc_tparam *p) {
  for (size_t i = 0; p->text && i < p->n; i++) free(p->text[i]);
  for (size_t i = 0; p->c_text && i < p->n; i++) free(p->c_text[i]);
  free(p->text);
  free(p->c_text);
  free(p->val);
  free(p->name);
}

static void free_slot(cc_texprs *x) {
  for (int i = 0; i < x->n; i++) cc_expr_free(&x->e[i]);
  x->n = 0;
}

cucore_status cucore_tune_space_destroy(cucore_tune_space *s) {
  cc_begin();
  if (!s) return CUCORE_OK;
  CC_CHECK_HANDLE(s, TUNE_SPACE, "cucore_tune_space_destroy", "space");
  for (size_t i = 0; i < s->nparams; i++) free_param(&s->params[i]);
  for (size_t i = 0; i < s->nrestr; i++) cc_expr_free(&s->restr[i]);
  for (int i = 0; i < CC_TUNE_SLOTS; i++) free_slot(&s->slot[i]);
  for (int i = 0; i < 3; i++) free(s->block_names[i]);
  free(s->params);
  free(s->names);
  free(s->restr);
  free(s->kernel);
  free(s->source);
  cc_tune_checks_free(s->checks);
  cc_tune_extras_free(s->extras);
  cc_handle_retire(s, CC_KIND_TUNE_SPACE);
  return CUCORE_OK;
}

static int is_ident(const char *s) {
  if (!s || !(isalpha((unsigned char)*s) || *s == '_')) return 0;
  for (; *s; s++)
    if (!isalnum((unsigned char)*s) && *s != '_') return 0;
  return 1;
}

static cucore_status check_param(const cucore_tune_space *s, const char *name,
                                 const char *const *values, size_t n, cucore_tune_param_kind kind) {
  if (!is_ident(name))
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "`%s` is not a parameter name (a C identifier is expected)",
                   name ? name : "(null)");
  if (cc_tune_find_param((void *)s, name, strlen(name)) >= 0)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "parameter `%s` is in the space already", name);
  if (n == 0 || !values)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "parameter `%s` has no values", name);
  if ((unsigned)kind > CUCORE_TUNE_PARAM_LAUNCH_ONLY)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "parameter `%s`: kind %d is not a cucore_tune_param_kind", name, (int)kind);
  for (size_t i = 0; i < n; i++)
    if (!values[i])
      return cc_fail(CUCORE_INVALID_ARGUMENT, "parameter `%s`: value %zu is NULL", name, i + 1);
  return CUCORE_OK;
}

static cucore_status grow_params(cucore_tune_space *s) {
  cc_tparam *p = cc_grow(s->params, &s->cap, s->nparams + 1, sizeof *p,
                         "a tune space's parameters");
  if (!p) return CUCORE_HOST_OUT_OF_MEMORY;
  s->params = p;
  return cc_tune_names_reserve(s, s->nparams + 1);
}

/* The values of p read from `values` (copies kept), checked one by one and for repeats. */
static cucore_status read_values(cc_tparam *p, const char *const *values) {
  p->text = cc_calloc(p->n, sizeof *p->text, "parameter values");
  p->c_text = cc_calloc(p->n, sizeof *p->c_text, "parameter values");
  p->val = cc_calloc(p->n, sizeof *p->val, "parameter values");
  if (!p->text || !p->c_text || !p->val) return CUCORE_HOST_OUT_OF_MEMORY;
  for (size_t i = 0; i < p->n; i++) {
    if (!(p->text[i] = cc_strdup(values[i], "a parameter value"))) return CUCORE_HOST_OUT_OF_MEMORY;
    cucore_status st = cc_tune_value_read(p->name, i, p->text[i], &p->val[i], &p->c_text[i]);
    if (st != CUCORE_OK) return st;
  }
  return cc_tune_values_unique(p->name, p->val, p->text, p->n);
}

cucore_status cucore_tune_space_add_param(cucore_tune_space *s, const char *name,
                                          const char *const *values, size_t n,
                                          cucore_tune_param_kind kind) {
  cc_begin();
  CC_CHECK_HANDLE(s, TUNE_SPACE, "cucore_tune_space_add_param", "space");
  cucore_status st = check_param(s, name, values, n, kind);
  if (st == CUCORE_OK) st = grow_params(s);
  if (st != CUCORE_OK) return st;
  cc_tparam p = {.name = cc_strdup(name, "a parameter name"), .kind = kind, .n = n};
  st = p.name ? read_values(&p, values) : CUCORE_HOST_OUT_OF_MEMORY;
  if (st != CUCORE_OK) {
    free_param(&p);
    return st;
  }
  s->params[s->nparams++] = p;
  cc_tune_names_add(s, s->nparams - 1);
  cc_tune_resolve_kind(s, s->nparams - 1);
  return CUCORE_OK;
}

cucore_status cucore_tune_space_restrict(cucore_tune_space *s, const char *expr) {
  cc_begin();
  CC_CHECK_HANDLE(s, TUNE_SPACE, "cucore_tune_space_restrict", "space");
  CC_CHECK_ARG(expr, "cucore_tune_space_restrict", "expr");
  cc_expr *r = cc_grow(s->restr, &s->cap_r, s->nrestr + 1, sizeof *r,
                       "a tune space's restrictions");
  if (!r) return CUCORE_HOST_OUT_OF_MEMORY;
  s->restr = r;
  char *why = NULL;
  if (cc_expr_parse(expr, cc_tune_find_param, s, &s->restr[s->nrestr], &why) < 0) {
    char q[CC_TUNE_QUOTE_MAX];
    cucore_status st = cc_fail(CUCORE_INVALID_ARGUMENT, "restriction `%s`: %s",
                               cc_tune_quote(expr, q), why ? why : "out of memory");
    free(why);
    return st;
  }
  const cc_expr *e = &s->restr[s->nrestr++];
  for (size_t i = 0; i < s->nparams; i++) /* uses: kept current without a walk per query */
    if (cc_expr_uses(e, (int)i)) s->params[i].uses |= CUCORE_TUNE_USED_RESTRICTION;
  return CUCORE_OK;
}

static cucore_status set_name(char **slot, const char *value, const char *what) {
  char *copy = NULL;
  if (value && !(copy = cc_strdup(value, what))) return CUCORE_HOST_OUT_OF_MEMORY;
  free(*slot);
  *slot = copy;
  return CUCORE_OK;
}

cucore_status cucore_tune_space_set_block_names(cucore_tune_space *s, const char *const names[3]) {
  cc_begin();
  CC_CHECK_HANDLE(s, TUNE_SPACE, "cucore_tune_space_set_block_names", "space");
  CC_CHECK_ARG(names, "cucore_tune_space_set_block_names", "names");
  for (int d = 0; d < 3; d++)
    if (names[d] && !is_ident(names[d]))
      return cc_fail(CUCORE_INVALID_ARGUMENT,
                     "cucore_tune_space_set_block_names: `%s` is not "
                     "a parameter name (a C identifier is expected)",
                     names[d]);
  for (int d = 0; d < 3; d++) {
    cucore_status st = set_name(&s->block_names[d], names[d], "a block-size name");
    if (st != CUCORE_OK) return st;
  }
  return CUCORE_OK;
}

cucore_status cucore_tune_space_set_kernel(cucore_tune_space *s, const char *name) {
  cc_begin();
  CC_CHECK_HANDLE(s, TUNE_SPACE, "cucore_tune_space_set_kernel", "space");
  CC_CHECK_ARG(name, "cucore_tune_space_set_kernel", "name");
  int open = 0;
  for (const char *p = name; *p; p++) {
    if (*p == '{' && open++)
      return cc_fail(CUCORE_INVALID_ARGUMENT, "kernel `%s`: `{` inside a `{...}` hole", name);
    if (*p == '}' && !open--)
      return cc_fail(CUCORE_INVALID_ARGUMENT, "kernel `%s`: `}` without a `{`", name);
  }
  if (!*name || open)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "kernel `%s`: %s", name,
                   *name ? "a `{` is not closed" : "the name is empty");
  cucore_status st = set_name(&s->kernel, name, "a kernel name");
  cc_tune_resolve_kinds(s);
  return st;
}

cucore_status cucore_tune_space_set_source(cucore_tune_space *s, const char *text, size_t size) {
  cc_begin();
  CC_CHECK_HANDLE(s, TUNE_SPACE, "cucore_tune_space_set_source", "space");
  CC_CHECK_ARG(text, "cucore_tune_space_set_source", "text");
  if (size == 0) size = strlen(text);
  char *copy = cc_malloc(size + 1, "a kernel source");
  if (!copy) return CUCORE_HOST_OUT_OF_MEMORY;
  memcpy(copy, text, size);
  copy[size] = 0;
  free(s->source);
  s->source = copy;
  cc_tune_resolve_kinds(s);
  return CUCORE_OK;
}

cucore_status cucore_tune_space_set_limits(cucore_tune_space *s, const cucore_arch_limits *limits) {
  cc_begin();
  CC_CHECK_HANDLE(s, TUNE_SPACE, "cucore_tune_space_set_limits", "space");
  s->has_limits = limits != NULL;
  if (limits) s->limits = *limits;
  return CUCORE_OK;
}

cucore_status cucore_tune_space_get_param_count(const cucore_tune_space *s, size_t *count) {
  cc_begin();
  CC_CHECK_HANDLE(s, TUNE_SPACE, "cucore_tune_space_get_param_count", "space");
  CC_CHECK_ARG(count, "cucore_tune_space_get_param_count", "count");
  *count = s->nparams;
  return CUCORE_OK;
}

cucore_status cucore_tune_space_get_param(const cucore_tune_space *s, size_t i,
                                          cucore_tune_param_info *out) {
  cc_begin();
  CC_CHECK_HANDLE(s, TUNE_SPACE, "cucore_tune_space_get_param", "space");
  CC_CHECK_ARG(out, "cucore_tune_space_get_param", "out");
  if (i >= s->nparams)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "cucore_tune_space_get_param: parameter %zu of %zu", i,
                   s->nparams);
  out->name = s->params[i].name;
  out->kind = s->params[i].resolved;
  out->value_count = s->params[i].n;
  out->uses = s->params[i].uses;
  return CUCORE_OK;
}

cucore_status cucore_tune_space_get_kernel(const cucore_tune_space *s, const char **name) {
  cc_begin();
  CC_CHECK_HANDLE(s, TUNE_SPACE, "cucore_tune_space_get_kernel", "space");
  CC_CHECK_ARG(name, "cucore_tune_space_get_kernel", "name");
  *name = s->kernel;
  return CUCORE_OK;
}

cucore_status cucore_tune_space_get_restriction_count(const cucore_tune_space *s, size_t *count) {
  cc_begin();
  CC_CHECK_HANDLE(s, TUNE_SPACE, "cucore_tune_space_get_restriction_count", "space");
  CC_CHECK_ARG(count, "cucore_tune_space_get_restriction_count", "count");
  *count = s->nrestr;
  return CUCORE_OK;
}

cucore_status cucore_tune_space_get_restriction(const cucore_tune_space *s, size_t i,
                                                const char **text) {
  cc_begin();
  CC_CHECK_HANDLE(s, TUNE_SPACE, "cucore_tune_space_get_restriction", "space");
  CC_CHECK_ARG(text, "cucore_tune_space_get_restriction", "text");
  if (i >= s->nrestr)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "cucore_tune_space_get_restriction: restriction %zu of %zu", i, s->nrestr);
  *text = s->restr[i].text;
  return CUCORE_OK;
}
