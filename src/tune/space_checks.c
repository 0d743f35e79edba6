/*
 * space_checks.c -- what a space file says a measured tune checks: "cucore_args" and
 * "cucore_expect" (lists of `cucore run` --arg and --expect specs) and the tolerances "rtol"
 * and "atol" (Kernel Tuner's tune_kernel() keyword). Kept with the space, copied, and read by
 * cucore_tune_space_get_checks(); the command uses them when its own line gives none.
 */
#include "tune/space_file.h"

#include <stdlib.h>
#include <string.h>

struct cc_tune_checks {
  char **args, **expects;
  size_t nargs, nexpects;
  double rtol, atol;
  int has_rtol, has_atol;
};

void cc_tune_checks_free(struct cc_tune_checks *c) {
  if (!c) return;
  for (size_t i = 0; i < c->nargs; i++) free(c->args[i]);
  for (size_t i = 0; i < c->nexpects; i++) free(c->expects[i]);
  free(c->args);
  free(c->expects);
  free(c);
}

/* `key`'s list of non-empty strings copied into *out (*n of them); absent: none. */
static cucore_status strings(cucore_tune_space *s, const cc_json *root, const char *key,
                             char ***out, size_t *n) {
  const cc_json *v = cc_json_get(root, key);
  if (!v) return CUCORE_OK;
  if (v->type != CC_JSON_ARRAY) return cc_sf_wrong(s, key, "an array of strings", v);
  *out = cc_calloc(v->n ? v->n : 1, sizeof **out, key);
  if (!*out) return CUCORE_HOST_OUT_OF_MEMORY;
  for (size_t i = 0; i < v->n; i++) {
    const cc_json *e = &v->items[i];
    if (e->type != CC_JSON_STRING || !e->text[0] || cc_sf_has_control(e->text))
      return cc_sf_fail(s, e,
                        "`%s[%zu]` must be a non-empty string (a cucore run spec such as "
                        "\"buf:f32[1024]=random\"), found %s",
                        key, i,
                        e->type != CC_JSON_STRING ? cc_json_type_name(e->type)
                        : e->text[0]              ? "a control character"
                                                  : "an empty string");
    if (!((*out)[i] = cc_strdup(e->text, key))) return CUCORE_HOST_OUT_OF_MEMORY;
    (*n)++;
  }
  return CUCORE_OK;
}

/* `key` as a finite number >= 0; absent: *has stays 0. */
static cucore_status tolerance(cucore_tune_space *s, const cc_json *root, const char *key,
                               double *out, int *has) {
  const cc_json *v = cc_json_get(root, key);
  if (!v) return CUCORE_OK;
  if (v->type != CC_JSON_NUMBER || !(v->number >= 0) || v->number > 1e300)
    return cc_sf_fail(s, v, "`%s` must be a number >= 0, found %s", key,
                      v->type == CC_JSON_NUMBER ? v->text : cc_json_type_name(v->type));
  *out = v->number;
  *has = 1;
  return CUCORE_OK;
}

cucore_status cc_tune_checks_read(cucore_tune_space *s, const struct cc_json *root) {
  struct cc_tune_checks *c = cc_calloc(1, sizeof *c, "the space's checks");
  if (!c) return CUCORE_HOST_OUT_OF_MEMORY;
  cucore_status st = strings(s, root, "cucore_args", &c->args, &c->nargs);
  if (st == CUCORE_OK) st = strings(s, root, "cucore_expect", &c->expects, &c->nexpects);
  if (st == CUCORE_OK) st = tolerance(s, root, "rtol", &c->rtol, &c->has_rtol);
  if (st == CUCORE_OK) st = tolerance(s, root, "atol", &c->atol, &c->has_atol);
  if (st != CUCORE_OK) {
    cc_tune_checks_free(c);
    return st;
  }
  cc_tune_checks_free(s->checks);
  s->checks = c;
  return CUCORE_OK;
}

cucore_status cucore_tune_space_get_checks(const cucore_tune_space *s, cucore_tune_checks *out) {
  cc_begin();
  CC_CHECK_ARG(out, "cucore_tune_space_get_checks", "out");
  memset(out, 0, sizeof *out);
  CC_CHECK_HANDLE(s, TUNE_SPACE, "cucore_tune_space_get_checks", "space");
  const struct cc_tune_checks *c = s->checks;
  if (!c) return CUCORE_OK;
  out->args = (const char *const *)c->args;
  out->nargs = c->nargs;
  out->expects = (const char *const *)c->expects;
  out->nexpects = c->nexpects;
  out->rtol = c->rtol, out->atol = c->atol;
  out->has_rtol = c->has_rtol, out->has_atol = c->has_atol;
  return CUCORE_OK;
}
