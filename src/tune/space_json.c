/*
 * space_json.c -- a search space from Kernel Tuner's tune_kernel() keywords written as JSON
 * (tune_params, restrictions, problem_size, grid_div_x/y/z, block_size_names, kernel_name)
 * plus cucore's grid, block and smem expressions.
 */
#include "tune/json.h"
#include "tune/space.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CC_TUNE_JSON_TEXT_MAX 4096

static cucore_status wrong(const char *key, const char *want, const cc_json *v) {
  return cc_fail(CUCORE_INVALID_ARGUMENT, "space JSON: `%s` must be %s, found %s", key, want,
                 cc_json_type_name(v->type));
}

static int scalar(const cc_json *v) {
  return v->type == CC_JSON_NUMBER || v->type == CC_JSON_STRING;
}

static cucore_status add_params(cucore_tune_space *s, const cc_json *tp) {
  if (tp->type != CC_JSON_OBJECT) return wrong("tune_params", "an object", tp);
  for (size_t i = 0; i < tp->n; i++) {
    const cc_json *list = &tp->items[i];
    char key[160];
    snprintf(key, sizeof key, "tune_params.%s", tp->keys[i]);
    if (list->type != CC_JSON_ARRAY) return wrong(key, "an array of numbers or strings", list);
    const char **vals = cc_calloc(list->n ? list->n : 1, sizeof *vals, "parameter values");
    if (!vals) return CUCORE_HOST_OUT_OF_MEMORY;
    cucore_status st = CUCORE_OK;
    for (size_t k = 0; k < list->n && st == CUCORE_OK; k++) {
      if (!scalar(&list->items[k]))
        st = wrong(key, "an array of numbers or strings", &list->items[k]);
      vals[k] = list->items[k].text;
    }
    if (st == CUCORE_OK)
      st = cucore_tune_space_add_param(s, tp->keys[i], vals, list->n, CUCORE_TUNE_PARAM_AUTO);
    free(vals);
    if (st != CUCORE_OK) return st;
  }
  return CUCORE_OK;
}

/* A scalar or an array of scalars joined with ", " (one slot's text). */
static cucore_status join(const char *key, const cc_json *v, char *buf, size_t cap) {
  if (scalar(v))
    return snprintf(buf, cap, "%s", v->text) < (int)cap
               ? CUCORE_OK
               : cc_fail(CUCORE_INVALID_ARGUMENT, "space JSON: `%s` is too long", key);
  if (v->type != CC_JSON_ARRAY) return wrong(key, "a number, a string or an array of them", v);
  size_t len = 0;
  buf[0] = 0;
  for (size_t i = 0; i < v->n; i++) {
    if (!scalar(&v->items[i])) return wrong(key, "an array of numbers or strings", &v->items[i]);
    int n = snprintf(buf + len, cap - len, "%s%s", i ? ", " : "", v->items[i].text);
    if (n < 0 || (size_t)n >= cap - len)
      return cc_fail(CUCORE_INVALID_ARGUMENT, "space JSON: `%s` is too long", key);
    len += (size_t)n;
  }
  return CUCORE_OK;
}

static cucore_status add_restrictions(cucore_tune_space *s, const cc_json *r) {
  if (r->type == CC_JSON_STRING) return cucore_tune_space_restrict(s, r->text);
  if (r->type != CC_JSON_ARRAY) return wrong("restrictions", "a string or an array of them", r);
  for (size_t i = 0; i < r->n; i++) {
    if (r->items[i].type != CC_JSON_STRING)
      return wrong("restrictions", "an array of strings", &r->items[i]);
    cucore_status st = cucore_tune_space_restrict(s, r->items[i].text);
    if (st != CUCORE_OK) return st;
  }
  return CUCORE_OK;
}

static cucore_status block_names(cucore_tune_space *s, const cc_json *v) {
  const char *names[3] = {NULL, NULL, NULL};
  if (v->type != CC_JSON_ARRAY || v->n > 3)
    return wrong("block_size_names", "an array of up to 3 strings", v);
  for (size_t i = 0; i < v->n; i++) {
    if (v->items[i].type != CC_JSON_STRING)
      return wrong("block_size_names", "an array of strings", &v->items[i]);
    names[i] = v->items[i].text;
  }
  return cucore_tune_space_set_block_names(s, names);
}

static const struct {
  const char *key;
  cucore_tune_slot slot;
} SLOTS[] = {{"problem_size", CUCORE_TUNE_PROBLEM_SIZE},
             {"grid_div_x", CUCORE_TUNE_GRID_DIV_X},
             {"grid_div_y", CUCORE_TUNE_GRID_DIV_Y},
             {"grid_div_z", CUCORE_TUNE_GRID_DIV_Z},
             {"grid", CUCORE_TUNE_GRID},
             {"block", CUCORE_TUNE_BLOCK},
             {"smem", CUCORE_TUNE_SMEM}};

static cucore_status build(cucore_tune_space *s, const cc_json *root) {
  if (root->type != CC_JSON_OBJECT) return wrong("the space", "an object", root);
  if (cc_json_get(root, "ConfigurationSpace")) return cc_tune_space_t1(s, root);
  const cc_json *v;
  cucore_status st = CUCORE_OK;
  if ((v = cc_json_get(root, "tune_params"))) st = add_params(s, v);
  if (st == CUCORE_OK && (v = cc_json_get(root, "block_size_names"))) st = block_names(s, v);
  if (st == CUCORE_OK && (v = cc_json_get(root, "restrictions"))) st = add_restrictions(s, v);
  if (st == CUCORE_OK && (v = cc_json_get(root, "kernel_name")))
    st = v->type == CC_JSON_STRING ? cucore_tune_space_set_kernel(s, v->text)
                                   : wrong("kernel_name", "a string", v);
  if (st == CUCORE_OK) st = cc_tune_checks_read(s, root);
  char text[CC_TUNE_JSON_TEXT_MAX];
  for (size_t i = 0; st == CUCORE_OK && i < CC_ARRAY_LEN(SLOTS); i++) {
    if (!(v = cc_json_get(root, SLOTS[i].key))) continue;
    st = join(SLOTS[i].key, v, text, sizeof text);
    if (st == CUCORE_OK) st = cucore_tune_space_set_expr(s, SLOTS[i].slot, text);
  }
  return st;
}

cucore_status cucore_tune_space_from_json(const char *json, size_t size, cucore_tune_space **out) {
  cc_begin();
  CC_CHECK_ARG(out, "cucore_tune_space_from_json", "out");
  *out = NULL;
  CC_CHECK_ARG(json, "cucore_tune_space_from_json", "json");
  if (size == 0) size = strlen(json);
  cc_json root;
  char why[256];
  if (cc_json_parse(json, size, &root, why, sizeof why) < 0)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "space JSON: %s", why);
  cucore_tune_space *s = NULL;
  cucore_status st = cucore_tune_space_create(&s);
  if (st == CUCORE_OK) st = build(s, &root);
  cc_json_free(&root);
  if (st != CUCORE_OK) {
    cucore_tune_space_destroy(s);
    return st;
  }
  *out = s;
  return CUCORE_OK;
}
