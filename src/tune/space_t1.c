/*
 * space_t1.c -- a search space from the TuningSchema T1 input that Kernel Tuner, KTT and the
 * BAT suite share, its keys checked against the schema's (kernel_tuner/schema/T1/1.0.0) and
 * what Kernel Tuner's tune_kernel_T1() reads beside them: ConfigurationSpace.TuningParameters
 * [{Name, Type, Values}] (Values the Python texts of space_pyvals.c, or a JSON list),
 * Conditions [{Expression}], KernelSpecification {Language, KernelName, CompilerOptions,
 * SharedMemory, and the launch}. The launch as Kernel Tuner reads it when ProblemSize is given
 * (problem_size, GridDivX/Y/Z -- an empty one is the default -- and the block from the
 * block_size_x/y/z parameters; LocalSize and GlobalSize unused); otherwise as KTT does:
 * LocalSize is the block, GlobalSize the total threads (GlobalSizeType OpenCL, the default),
 * so the problem size, or the grid in blocks (GlobalSizeType CUDA).
 */
#include "tune/space_file.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static cucore_status later(cucore_tune_space *s, const char *key, const cc_json *v,
                           const cc_json *obj) {
  (void)s, (void)key, (void)v, (void)obj;
  return CUCORE_OK; /* read by the object's reader */
}

/* ---- ConfigurationSpace ------------------------------------------------------------------ */

/* A JSON list of values: numbers as written, strings, booleans "true"/"false". */
static cucore_status json_values(cucore_tune_space *s, const char *key, const cc_json *v,
                                 const char **texts) {
  char k[192];
  for (size_t i = 0; i < v->n; i++) {
    const cc_json *e = &v->items[i];
    snprintf(k, sizeof k, "%s[%zu]", key, i);
    if (e->type == CC_JSON_BOOL)
      texts[i] = e->boolean ? "true" : "false";
    else if (e->type == CC_JSON_NUMBER || e->type == CC_JSON_STRING)
      texts[i] = e->text;
    else
      return cc_sf_wrong(s, k, "a number, a string or a boolean", e);
  }
  return CUCORE_OK;
}

/* Values: a JSON list, or a Python text. */
static cucore_status add_values(cucore_tune_space *s, const char *key, const char *name,
                                const cc_json *v) {
  char **py = NULL, why[256], nm[128];
  size_t n = 0;
  const char **texts = NULL;
  cucore_status st = CUCORE_OK;
  if (v->type == CC_JSON_STRING && cc_py_values(v->text, &py, &n, why, sizeof why) < 0)
    st = cc_sf_fail(s, v,
                    "`%s`: the Values of `%s` are not a list, a range() or a "
                    "comprehension over one: %s",
                    key, cc_sf_clip(name, nm), why);
  else if (v->type != CC_JSON_STRING && v->type != CC_JSON_ARRAY)
    st = cc_sf_wrong(s, key, "a string (Python) or a list", v);
  if (st == CUCORE_OK && v->type == CC_JSON_ARRAY) {
    n = v->n;
    texts = cc_calloc(n ? n : 1, sizeof *texts, "T1 values");
    st = texts ? json_values(s, key, v, texts) : CUCORE_HOST_OUT_OF_MEMORY;
  }
  if (st == CUCORE_OK) {
    st = cucore_tune_space_add_param(s, name, py ? (const char *const *)py : texts, n,
                                     CUCORE_TUNE_PARAM_AUTO);
    if (st != CUCORE_OK) st = cc_sf_restate(s, key, v, st);
  }
  if (py) cc_py_values_free(py, n);
  free(texts);
  return st;
}

static cucore_status param(cucore_tune_space *s, const char *key, const cc_json *p, void *ctx) {
  (void)ctx;
  static const cc_sf_key keys[] = {{"Name", later, NULL, 0},
                                   {"Type", later, NULL, 0},
                                   {"Values", later, NULL, 0},
                                   {"Default", NULL,
                                    "a parameter's default: cucore measures every configuration",
                                    0}};
  static const char *const TYPES[] = {"int", "uint", "float", "bool", "string"};
  if (p->type != CC_JSON_OBJECT) return cc_sf_wrong(s, key, "an object {Name, Type, Values}", p);
  cucore_status st = cc_sf_object(s, p, key, keys, CC_ARRAY_LEN(keys));
  const cc_json *name = cc_json_get(p, "Name"), *type = cc_json_get(p, "Type");
  const cc_json *vals = cc_json_get(p, "Values");
  if (st != CUCORE_OK) return st;
  if (!name || name->type != CC_JSON_STRING || !vals)
    return cc_sf_fail(s, p, "`%s` needs a Name (a string) and Values", key);
  int known = 0;
  for (size_t i = 0; type && type->type == CC_JSON_STRING && i < CC_ARRAY_LEN(TYPES); i++)
    known |= strcmp(type->text, TYPES[i]) == 0;
  if (type && !known)
    return cc_sf_fail(s, type, "`%s.Type` must be one of int, uint, float, bool, string", key);
  char k[192];
  snprintf(k, sizeof k, "%s.Values", key);
  return add_values(s, k, name->text, vals);
}

static cucore_status params(cucore_tune_space *s, const char *key, const cc_json *v,
                            const cc_json *obj) {
  (void)obj;
  return cc_sf_each(s, key, v, "a list of parameters", param, NULL);
}

static cucore_status condition(cucore_tune_space *s, const char *key, const cc_json *c, void *ctx) {
  (void)ctx;
  static const cc_sf_key keys[] = {{"Expression", later, NULL, 0},
                                   {"Parameters", NULL, "the Expression names its parameters", 0}};
  if (c->type != CC_JSON_OBJECT) return cc_sf_wrong(s, key, "an object {Expression}", c);
  cucore_status st = cc_sf_object(s, c, key, keys, CC_ARRAY_LEN(keys));
  const cc_json *e = cc_json_get(c, "Expression");
  if (st != CUCORE_OK) return st;
  if (!e || e->type != CC_JSON_STRING)
    return e ? cc_sf_wrong(s, key, "an object whose Expression is a string", e)
             : cc_sf_fail(s, c, "`%s` needs an Expression", key);
  st = cucore_tune_space_restrict(s, e->text);
  return st == CUCORE_OK ? st : cc_sf_restate(s, key, e, st);
}

static cucore_status conditions(cucore_tune_space *s, const char *key, const cc_json *v,
                                const cc_json *obj) {
  (void)obj;
  return cc_sf_each(s, key, v, "a list of conditions", condition, NULL);
}

static cucore_status config_space(cucore_tune_space *s, const char *key, const cc_json *v,
                                  const cc_json *obj) {
  (void)obj;
  static const cc_sf_key keys[] = {{"TuningParameters", params, NULL, 0},
                                   {"Conditions", conditions, NULL, 1}};
  if (v->type != CC_JSON_OBJECT) return cc_sf_wrong(s, key, "an object", v);
  if (!cc_json_get(v, "TuningParameters"))
    return cc_sf_fail(s, v, "`%s.TuningParameters` is missing", key);
  return cc_sf_object(s, v, key, keys, CC_ARRAY_LEN(keys));
}

/* ---- KernelSpecification ----------------------------------------------------------------- */

/* 1 when the launch is Kernel Tuner's (ProblemSize given). */
static int kt_launch(const cc_json *ks) {
  const cc_json *p = cc_json_get(ks, "ProblemSize");
  return p && p->type != CC_JSON_NULL;
}

static const char KT_UNUSED[] = "with ProblemSize, Kernel Tuner's launch is used (ProblemSize, "
                                "GridDivX/Y/Z and the block_size_x/y/z parameters)";

/* {"X": .., "Y": .., "Z": ..} (numbers or expressions, 1 when absent) as "x, y, z". */
static cucore_status dims_text(cucore_tune_space *s, const char *key, const cc_json *d, FILE *f,
                               void *ctx) {
  (void)ctx;
  static const cc_sf_key keys[] = {{"X", later, NULL, 0},
                                   {"Y", later, NULL, 0},
                                   {"Z", later, NULL, 0}};
  if (d->type != CC_JSON_OBJECT) return cc_sf_wrong(s, key, "an object {X, Y, Z}", d);
  cucore_status st = cc_sf_object(s, d, key, keys, CC_ARRAY_LEN(keys));
  char k[192];
  for (int a = 0; a < 3 && st == CUCORE_OK; a++) {
    const cc_json *v = cc_json_get(d, keys[a].key);
    snprintf(k, sizeof k, "%s.%s", key, keys[a].key);
    if (v && v->type != CC_JSON_NUMBER && v->type != CC_JSON_STRING)
      return cc_sf_wrong(s, k, "a number or a string (an expression)", v);
    if (v && !cc_sf_one_expr(v->text)) return cc_sf_fail(s, v, "`%s` must be one expression", k);
    fprintf(f, "%s%s", a ? ", " : "", v ? v->text : "1");
  }
  return st;
}

static cucore_status local_size(cucore_tune_space *s, const char *key, const cc_json *v,
                                const cc_json *ks) {
  if (kt_launch(ks)) return cc_tune_extras_ignore(s, key, KT_UNUSED);
  return cc_kt_set_text(s, key, v, CUCORE_TUNE_BLOCK, dims_text);
}

/* GlobalSizeType: "OpenCL" (the default) or "CUDA"; 0 or 1 into *cuda. */
static cucore_status size_type(cucore_tune_space *s, const cc_json *ks, int *cuda) {
  const cc_json *t = cc_json_get(ks, "GlobalSizeType");
  *cuda = 0;
  if (!t || t->type == CC_JSON_NULL) return CUCORE_OK;
  if (t->type == CC_JSON_STRING && strcmp(t->text, "OpenCL") == 0) return CUCORE_OK;
  if (t->type == CC_JSON_STRING && strcmp(t->text, "CUDA") == 0) return *cuda = 1, CUCORE_OK;
  return cc_sf_fail(s, t,
                    "`KernelSpecification.GlobalSizeType` must be \"OpenCL\" (GlobalSize "
                    "counts threads) or \"CUDA\" (GlobalSize counts blocks)");
}

static cucore_status global_size(cucore_tune_space *s, const char *key, const cc_json *v,
                                 const cc_json *ks) {
  if (kt_launch(ks)) return cc_tune_extras_ignore(s, key, KT_UNUSED);
  int cuda;
  cucore_status st = size_type(s, ks, &cuda);
  if (st != CUCORE_OK) return st;
  return cc_kt_set_text(s, key, v, cuda ? CUCORE_TUNE_GRID : CUCORE_TUNE_PROBLEM_SIZE, dims_text);
}

static cucore_status global_size_type(cucore_tune_space *s, const char *key, const cc_json *v,
                                      const cc_json *ks) {
  (void)v;
  int cuda;
  cucore_status st = size_type(s, ks, &cuda);
  if (st == CUCORE_OK && kt_launch(ks)) st = cc_tune_extras_ignore(s, key, KT_UNUSED);
  return st;
}

/* GridDivX/Y/Z: the axis is the key's last letter. */
static cucore_status grid_div(cucore_tune_space *s, const char *key, const cc_json *v,
                              const cc_json *ks) {
  int cuda = 0;
  cucore_status st = kt_launch(ks) ? CUCORE_OK : size_type(s, ks, &cuda);
  if (st != CUCORE_OK) return st;
  if (cuda) return cc_tune_extras_ignore(s, key, "the grid is GlobalSize (GlobalSizeType CUDA)");
  return cc_kt_grid_div(s, key, v, key[strlen(key) - 1] - 'X', 1);
}

/* In the order read: the launch's keys need the parameters (read before), GridDiv the block. */
static const cc_sf_key KERNEL_KEYS[] = {
    {"Language", cc_kt_lang, NULL, 1},
    {"KernelName", cc_kt_kernel_name, NULL, 0},
    {"CompilerOptions", cc_kt_compiler_options, NULL, 1},
    {"GlobalSizeType", global_size_type, NULL, 1},
    {"ProblemSize", cc_kt_problem_size, NULL, 1},
    {"LocalSize", local_size, NULL, 1},
    {"GlobalSize", global_size, NULL, 1},
    {"GridDivX", grid_div, NULL, 1},
    {"GridDivY", grid_div, NULL, 1},
    {"GridDivZ", grid_div, NULL, 1},
    {"SharedMemory", cc_kt_smem_size, NULL, 1},
    {"KernelFile", NULL, "the kernel's source is the command's FILE", 0},
    {"Arguments", NULL, "T1 arguments are not read: give the command --arg specs", 0},
    {"ReferenceArguments", NULL, "T1 reference outputs are not read: give --expect specs", 0},
    {"Device", NULL, "the GPU is chosen by the command, not the file", 0},
    {"Profiling", NULL, "profiling counters are not measured", 0},
    {"SimulationInput", NULL, "Kernel Tuner's simulation cache: cucore measures on the GPU", 0},
    {"BenchmarkName", NULL, "a label", 0},
    {"Stream", NULL, "cucore chooses the stream", 0}};

static cucore_status kernel_spec(cucore_tune_space *s, const char *key, const cc_json *v,
                                 const cc_json *obj) {
  (void)obj;
  if (v->type != CC_JSON_OBJECT) return cc_sf_wrong(s, key, "an object", v);
  cucore_status st = cc_sf_object(s, v, key, KERNEL_KEYS, CC_ARRAY_LEN(KERNEL_KEYS));
  if (st == CUCORE_OK && kt_launch(v)) st = cc_kt_default_div_x(s);
  return st;
}

static const cc_sf_key ROOT_KEYS[] = {
    {"ConfigurationSpace", config_space, NULL, 0},
    {"KernelSpecification", kernel_spec, NULL, 0},
    {"General", NULL, "output settings: cucore's are on its command line", 0},
    {"Search", NULL, "the search strategy: cucore measures every runnable configuration", 0},
    {"Budget", NULL, "a search budget: cucore measures every runnable configuration", 0},
    {"$schema", NULL, "a JSON Schema reference", 0}};

cucore_status cc_tune_space_t1(cucore_tune_space *s, const struct cc_json *root) {
  struct cc_tune_extras *x;
  cucore_status st = cc_tune_extras_of(s, &x);
  if (st != CUCORE_OK) return st;
  x->what = "T1 space";
  if (!cc_json_get(root, "ConfigurationSpace"))
    return cc_sf_fail(s, root, "the document has no ConfigurationSpace");
  return cc_sf_object(s, root, "", ROOT_KEYS, CC_ARRAY_LEN(ROOT_KEYS));
}
