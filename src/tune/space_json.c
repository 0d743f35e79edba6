/*
 * space_json.c -- a search space from Kernel Tuner's tune_kernel() keywords written as JSON,
 * read as Kernel Tuner 1.4 reads them (KEYS below: every keyword of tune_kernel() is read,
 * recorded as ignored with the reason, or refused when cucore cannot give what it asks for;
 * any other key is refused naming the nearest known one), plus cucore's grid, block and smem
 * expressions and the checks (space_checks.c). A document with ConfigurationSpace or
 * KernelSpecification is TuningSchema T1 (space_t1.c).
 */
#include "tune/space_file.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static cucore_status params(cucore_tune_space *s, const char *key, const cc_json *tp,
                            const cc_json *root) {
  (void)root;
  if (tp->type != CC_JSON_OBJECT) return cc_sf_wrong(s, key, "an object (name -> values)", tp);
  char k[192], n[128];
  cucore_status st = CUCORE_OK;
  for (size_t i = 0; i < tp->n && st == CUCORE_OK; i++) {
    const cc_json *list = &tp->items[i];
    snprintf(k, sizeof k, "%s.%s", key, cc_sf_clip(tp->keys[i], n));
    if (list->type != CC_JSON_ARRAY)
      return cc_sf_wrong(s, k, "an array of numbers, strings or booleans", list);
    const char **vals = cc_calloc(list->n ? list->n : 1, sizeof *vals, "parameter values");
    if (!vals) return CUCORE_HOST_OUT_OF_MEMORY;
    for (size_t j = 0; j < list->n && st == CUCORE_OK; j++) {
      const cc_json *v = &list->items[j];
      vals[j] = v->type == CC_JSON_BOOL ? (v->boolean ? "true" : "false") : v->text;
      if (v->type != CC_JSON_NUMBER && v->type != CC_JSON_STRING && v->type != CC_JSON_BOOL)
        st = cc_sf_fail(s, v,
                        "value %zu of `%s` (`%s[%zu]`) is %s; expected a number, a string "
                        "or a boolean",
                        j, k, k, j, cc_json_type_name(v->type));
    }
    if (st == CUCORE_OK && (st = cucore_tune_space_add_param(s, tp->keys[i], vals, list->n,
                                                             CUCORE_TUNE_PARAM_AUTO)) != CUCORE_OK)
      st = cc_sf_restate(s, k, list, st);
    free(vals);
  }
  return st;
}

static cucore_status restrictions(cucore_tune_space *s, const char *key, const cc_json *r,
                                  const cc_json *root) {
  (void)root;
  if (r->type != CC_JSON_STRING && r->type != CC_JSON_ARRAY)
    return cc_sf_wrong(s, key, "a string or an array of them", r);
  size_t n = r->type == CC_JSON_STRING ? 1 : r->n;
  char k[192];
  for (size_t i = 0; i < n; i++) {
    const cc_json *e = r->type == CC_JSON_STRING ? r : &r->items[i];
    snprintf(k, sizeof k, "%s[%zu]", key, i);
    if (e->type != CC_JSON_STRING) return cc_sf_wrong(s, k, "a string", e);
    cucore_status st = cucore_tune_space_restrict(s, e->text);
    if (st != CUCORE_OK) return cc_sf_restate(s, r->type == CC_JSON_STRING ? key : k, e, st);
  }
  return CUCORE_OK;
}

static cucore_status block_names(cucore_tune_space *s, const char *key, const cc_json *v,
                                 const cc_json *root) {
  (void)root;
  const char *names[3] = {NULL, NULL, NULL};
  if (v->type != CC_JSON_ARRAY || v->n > 3)
    return cc_sf_wrong(s, key, "an array of up to 3 strings", v);
  for (size_t i = 0; i < v->n; i++) {
    if (v->items[i].type != CC_JSON_STRING)
      return cc_sf_wrong(s, key, "an array of strings", &v->items[i]);
    names[i] = v->items[i].text;
  }
  cucore_status st = cucore_tune_space_set_block_names(s, names);
  return st == CUCORE_OK ? st : cc_sf_restate(s, key, v, st);
}

/* grid_div_x/y/z: the axis is the key's last letter. */
static cucore_status grid_div(cucore_tune_space *s, const char *key, const cc_json *v,
                              const cc_json *root) {
  (void)root;
  return cc_kt_grid_div(s, key, v, key[strlen(key) - 1] - 'x', 0);
}

/* cucore's grid, block and smem: a text of expressions separated by commas, or a list of
 * them (one per dimension). */
static cucore_status slot_text(cucore_tune_space *s, const char *key, const cc_json *v, FILE *f,
                               void *ctx) {
  (void)ctx;
  int scalar = v->type == CC_JSON_NUMBER || v->type == CC_JSON_STRING;
  if (!scalar && v->type != CC_JSON_ARRAY)
    return cc_sf_wrong(s, key, "a number, a string or an array of them", v);
  size_t n = scalar ? 1 : v->n;
  for (size_t i = 0; i < n; i++) {
    const cc_json *e = scalar ? v : &v->items[i];
    if (e->type != CC_JSON_NUMBER && e->type != CC_JSON_STRING)
      return cc_sf_wrong(s, key, "an array of numbers or strings", e);
    if (!scalar && !cc_sf_one_expr(e->text))
      return cc_sf_fail(s, e, "`%s` must list one expression each", key);
    fprintf(f, "%s%s", i ? ", " : "", e->text);
  }
  return CUCORE_OK;
}

static cucore_status cucore_slot(cucore_tune_space *s, const char *key, const cc_json *v,
                                 const cc_json *root) {
  (void)root;
  cucore_tune_slot slot = strcmp(key, "grid") == 0    ? CUCORE_TUNE_GRID
                          : strcmp(key, "block") == 0 ? CUCORE_TUNE_BLOCK
                                                      : CUCORE_TUNE_SMEM;
  return cc_kt_set_text(s, key, v, slot, slot_text);
}

static cucore_status later(cucore_tune_space *s, const char *key, const cc_json *v,
                           const cc_json *root) {
  (void)s, (void)key, (void)v, (void)root;
  return CUCORE_OK; /* read by cc_tune_checks_read() */
}

/* Every tune_kernel() keyword of Kernel Tuner 1.4 (interface.py) and cucore's own, in the
 * order read: the parameters first (everything else names them), the block names before the
 * launch. */
/* clang-format off */
static const cc_sf_key KEYS[] = {
  {"tune_params",       params,             NULL, 0},
  {"block_size_names",  block_names,        NULL, 1},
  {"kernel_name",       cc_kt_kernel_name,  NULL, 0},
  {"restrictions",      restrictions,       NULL, 1},
  {"problem_size",      cc_kt_problem_size, NULL, 0},
  {"grid_div_x",        grid_div,           NULL, 1},
  {"grid_div_y",        grid_div,           NULL, 1},
  {"grid_div_z",        grid_div,           NULL, 1},
  {"grid",              cucore_slot,        NULL, 0},
  {"block",             cucore_slot,        NULL, 0},
  {"smem",              cucore_slot,        NULL, 0},
  {"smem_args",         cc_kt_smem_args,        NULL, 1},
  {"compiler_options",  cc_kt_compiler_options, NULL, 1},
  {"defines",           cc_kt_defines,          NULL, 1},
  {"cmem_args",         cc_kt_cmem_args,        NULL, 1},
  {"texmem_args",       cc_kt_texmem_args,      NULL, 1},
  {"lang",              cc_kt_lang,             NULL, 1},
  {"objective",         cc_kt_objective,        NULL, 1},
  {"objective_higher_is_better", cc_kt_higher_is_better, NULL, 1},
  {"objectives",        cc_kt_objectives,       NULL, 1},
  {"cucore_args",       later, NULL, 0},
  {"cucore_expect",     later, NULL, 0},
  {"atol",              later, NULL, 0},
  {"rtol",              later, NULL, 0},
  {"kernel_source",     NULL, "the kernel's source is the command's FILE", 0},
  {"arguments",         NULL, "Python objects (NumPy arrays): give cucore_args specs "
                              "(`cucore run --arg`)", 0},
  {"answer",            NULL, "NumPy arrays: give cucore_expect specs (`--expect`)", 0},
  {"verify",            NULL, "a Python function: give cucore_expect specs (`--expect`)", 0},
  {"strategy",          NULL, "cucore measures every runnable configuration", 0},
  {"strategy_options",  NULL, "cucore measures every runnable configuration", 0},
  {"iterations",        NULL, "cucore times each configuration until its stop rule says", 0},
  {"verbose",           NULL, "Kernel Tuner's output", 0},
  {"quiet",             NULL, "Kernel Tuner's output", 0},
  {"log",               NULL, "Kernel Tuner's Python logging", 0},
  {"cache",             NULL, "cucore keeps its own result store (--db)", 0},
  {"metrics",           NULL, "Python functions of the results", 0},
  {"observers",         NULL, "Python objects", 0},
  {"simulation_mode",   NULL, "cucore measures on the GPU", 0},
  {"parallel",          NULL, "Kernel Tuner's Ray workers", 0},
  {"seed",              NULL, "the seed of Kernel Tuner's search strategies", 0},
  {"device",            NULL, "the GPU is chosen by the command, not the file", 0},
  {"platform",          NULL, "OpenCL's platform", 0},
  {"compiler",          NULL, "Kernel Tuner's compiler for lang C and Fortran", 0},
};
/* clang-format on */

static cucore_status build(cucore_tune_space *s, const cc_json *root) {
  if (root->type != CC_JSON_OBJECT) return cc_sf_wrong(s, "the space", "an object", root);
  if (cc_json_get(root, "ConfigurationSpace") || cc_json_get(root, "KernelSpecification"))
    return cc_tune_space_t1(s, root);
  cucore_status st = cc_sf_object(s, root, "", KEYS, CC_ARRAY_LEN(KEYS));
  if (st == CUCORE_OK) st = cc_tune_checks_read(s, root);
  if (st == CUCORE_OK && cc_json_get(root, "problem_size")) st = cc_kt_default_div_x(s);
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
  struct cc_tune_extras *x = NULL;
  cucore_status st = cucore_tune_space_create(&s);
  if (st == CUCORE_OK) st = cc_tune_extras_of(s, &x);
  if (st == CUCORE_OK) {
    x->doc = json;
    st = build(s, &root);
    x->doc = NULL;
  }
  cc_json_free(&root);
  if (st != CUCORE_OK) {
    cucore_tune_space_destroy(s);
    return st;
  }
  *out = s;
  return CUCORE_OK;
}
