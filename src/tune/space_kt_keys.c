/*
 * space_kt_keys.c -- Kernel Tuner's tune_kernel() keys that reach the compile and the run,
 * kept with the space (space_extras.c): compiler_options, defines (prepare_kernel_string's
 * rule: when given, exactly these names are defined), cmem_args (as `cucore run --global`
 * specs) and smem_args (the dynamic shared memory); and the keys whose Kernel Tuner values
 * cucore checks: lang, objective, objective_higher_is_better, objectives and texmem_args are
 * accepted when they change nothing (recorded as ignored) and refused when cucore cannot
 * give the result they ask for.
 */
#define _POSIX_C_SOURCE 200809L /* strncasecmp */
#include "tune/space_file.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int is_ident(const char *t) {
  if (!isalpha((unsigned char)*t) && *t != '_') return 0;
  for (; *t; t++)
    if (!isalnum((unsigned char)*t) && *t != '_') return 0;
  return 1;
}

/* One compiler option, `k` its place ("compiler_options[2]"). */
static cucore_status option(cucore_tune_space *s, const char *k, const cc_json *o, void *ctx) {
  (void)ctx;
  if (o->type != CC_JSON_STRING) return cc_sf_wrong(s, k, "a string (one option)", o);
  if (!*o->text || cc_sf_has_control(o->text))
    return cc_sf_fail(s, o, "`%s` must be one compiler option such as \"-std=c++17\", found %s", k,
                      *o->text ? "a control character" : "an empty string");
  return cc_tune_extras_add_option(s, o->text);
}

cucore_status cc_kt_compiler_options(cucore_tune_space *s, const char *key, const cc_json *v,
                                     const cc_json *obj) {
  (void)obj;
  return cc_sf_each(s, key, v, "a list of strings", option, NULL);
}

/* ---- defines ----------------------------------------------------------------------------- */

static cucore_status define(cucore_tune_space *s, const char *key, const char *name,
                            const cc_json *d) {
  char k[160], n[128];
  snprintf(k, sizeof k, "%s.%s", key, cc_sf_clip(name, n));
  if (!is_ident(name))
    return cc_sf_fail(s, d, "`%s`: the name of a define must be a C identifier", k);
  if (d->type == CC_JSON_BOOL)
    return cc_tune_extras_add_define(s, name, d->boolean ? "true" : "false", 1);
  if (d->type == CC_JSON_NUMBER) return cc_tune_extras_add_define(s, name, d->text, 1);
  if (d->type != CC_JSON_STRING)
    return cc_sf_wrong(s, k,
                       "a string (parameters' names are replaced by their values), a number "
                       "or a boolean",
                       d);
  if (cc_sf_has_control(d->text))
    return cc_sf_fail(s, d, "`%s` holds a control character (a define is one line)", k);
  return cc_tune_extras_add_define(s, name, d->text, 0);
}

cucore_status cc_kt_defines(cucore_tune_space *s, const char *key, const cc_json *v,
                            const cc_json *obj) {
  (void)obj;
  if (v->type != CC_JSON_OBJECT) return cc_sf_wrong(s, key, "an object (name -> value)", v);
  struct cc_tune_extras *x;
  cucore_status st = cc_tune_extras_of(s, &x);
  if (st != CUCORE_OK) return st;
  x->has_defines = 1;
  for (size_t i = 0; i < v->n && st == CUCORE_OK; i++)
    st = define(s, key, v->keys[i], &v->items[i]);
  return st;
}

/* ---- cmem_args --------------------------------------------------------------------------- */

/* cucore's element types, and NumPy's names for them. */
static const char *const TYPES[][2] = {{"i8", "int8"},     {"u8", "uint8"},
                                       {"i16", "int16"},   {"u16", "uint16"},
                                       {"i32", "int32"},   {"u32", "uint32"},
                                       {"i64", "int64"},   {"u64", "uint64"},
                                       {"f16", "float16"}, {"bf16", "bfloat16"},
                                       {"f32", "float32"}, {"f64", "float64"}};

static const char *cucore_type(const char *t) {
  for (size_t i = 0; i < CC_ARRAY_LEN(TYPES); i++)
    if (strcmp(t, TYPES[i][0]) == 0 || strcmp(t, TYPES[i][1]) == 0) return TYPES[i][0];
  return NULL;
}

static cucore_status later(cucore_tune_space *s, const char *key, const cc_json *v,
                           const cc_json *obj) {
  (void)s, (void)key, (void)v, (void)obj;
  return CUCORE_OK; /* read by typed_values() */
}

/* One number of a typed value: an integer for an integer type. */
static cucore_status number(cucore_tune_space *s, const char *k, const cc_json *e, int integer,
                            FILE *f) {
  char t[128];
  if (e->type != CC_JSON_NUMBER) return cc_sf_wrong(s, k, "a number", e);
  if (integer && strpbrk(e->text, ".eE"))
    return cc_sf_fail(s, e, "`%s` must be an integer for an integer type, found %s", k,
                      cc_sf_clip(e->text, t));
  fputs(e->text, f);
  return CUCORE_OK;
}

/* {"type": T, "values": N or [N, ...]} as "T:N" or "T[n]={N,...}". */
static cucore_status typed_values(cucore_tune_space *s, const char *k, const cc_json *v, FILE *f) {
  static const cc_sf_key keys[] = {{"type", later, NULL, 0}, {"values", later, NULL, 0}};
  cucore_status st = cc_sf_object(s, v, k, keys, CC_ARRAY_LEN(keys));
  const cc_json *type = cc_json_get(v, "type"), *vals = cc_json_get(v, "values");
  if (st != CUCORE_OK) return st;
  const char *t = type && type->type == CC_JSON_STRING ? cucore_type(type->text) : NULL;
  if (!t)
    return cc_sf_fail(s, type ? type : v,
                      "`%s.type` must be one of i8 u8 i16 u16 i32 u32 i64 u64 "
                      "f16 bf16 f32 f64 (or NumPy's int8 ... float64)",
                      k);
  int integer = t[0] != 'f' && t[0] != 'b';
  if (!vals || (vals->type == CC_JSON_ARRAY && vals->n == 0))
    return cc_sf_fail(s, vals ? vals : v, "`%s.values` must be a number or a non-empty list", k);
  char ki[192];
  snprintf(ki, sizeof ki, "%s.values", k);
  if (vals->type != CC_JSON_ARRAY) {
    fprintf(f, "%s:", t);
    return number(s, ki, vals, integer, f);
  }
  fprintf(f, "%s[%zu]={", t, vals->n);
  for (size_t i = 0; i < vals->n && st == CUCORE_OK; i++) {
    if (i) fputc(',', f);
    snprintf(ki, sizeof ki, "%s.values[%zu]", k, i);
    st = number(s, ki, &vals->items[i], integer, f);
  }
  fputc('}', f);
  return st;
}

/* The spec of one constant-memory variable into f. */
static cucore_status cmem_spec(cucore_tune_space *s, const char *k, const cc_json *v, FILE *f,
                               void *ctx) {
  (void)ctx;
  if (v->type == CC_JSON_OBJECT) return typed_values(s, k, v, f);
  if (v->type == CC_JSON_ARRAY)
    return cc_sf_fail(s, v,
                      "`%s` is a list of numbers without a type: write {\"type\": \"f32\", "
                      "\"values\": [...]} or a `cucore run --global` spec such as "
                      "\"f32[3]={1,2,3}\"",
                      k);
  if (v->type != CC_JSON_STRING)
    return cc_sf_wrong(s, k,
                       "a `cucore run --global` spec (\"f32[64]=@table.bin\") or {\"type\": "
                       "T, \"values\": [...]}",
                       v);
  if (!*v->text || cc_sf_has_control(v->text))
    return cc_sf_fail(s, v,
                      "`%s` must be a `cucore run --global` spec such as \"f32:1.5\", found "
                      "%s",
                      k, *v->text ? "a control character" : "an empty string");
  fputs(v->text, f);
  return CUCORE_OK;
}

static cucore_status cmem_one(cucore_tune_space *s, const char *key, const char *name,
                              const cc_json *v) {
  char k[160], n[128];
  snprintf(k, sizeof k, "%s.%s", key, cc_sf_clip(name, n));
  if (!*name || strchr(name, '=') || cc_sf_has_control(name))
    return cc_sf_fail(s, v,
                      "`%s`: a constant-memory variable's name must be non-empty, without "
                      "`=` or control characters",
                      k);
  char *spec;
  cucore_status st = cc_sf_text(s, k, v, cmem_spec, NULL, &spec);
  if (st == CUCORE_OK) st = cc_tune_extras_add_cmem(s, name, spec);
  free(spec);
  return st;
}

cucore_status cc_kt_cmem_args(cucore_tune_space *s, const char *key, const cc_json *v,
                              const cc_json *obj) {
  (void)obj;
  if (v->type != CC_JSON_OBJECT) return cc_sf_wrong(s, key, "an object (name -> value)", v);
  cucore_status st = CUCORE_OK;
  for (size_t i = 0; i < v->n && st == CUCORE_OK; i++)
    st = cmem_one(s, key, v->keys[i], &v->items[i]);
  return st;
}

/* ---- smem_args --------------------------------------------------------------------------- */

cucore_status cc_kt_smem_size(cucore_tune_space *s, const char *key, const cc_json *v,
                              const cc_json *obj) {
  (void)obj;
  char *e;
  cucore_status st = cc_kt_expr(s, key, v, &e);
  if (st == CUCORE_OK) st = cc_kt_set_expr(s, key, v, CUCORE_TUNE_SMEM, e);
  free(e);
  return st;
}

cucore_status cc_kt_smem_args(cucore_tune_space *s, const char *key, const cc_json *v,
                              const cc_json *obj) {
  static const cc_sf_key keys[] = {{"size", cc_kt_smem_size, NULL, 1}};
  if (v->type != CC_JSON_OBJECT)
    return cc_sf_wrong(s, key, "an object such as {\"size\": 4096}", v);
  const cc_json *smem = cc_json_get(obj, "smem");
  if (smem && smem->type != CC_JSON_NULL && cc_json_get(v, "size"))
    return cc_sf_fail(s, v, "`%s` and `smem` both give the dynamic shared memory; keep one", key);
  return cc_sf_object(s, v, key, keys, CC_ARRAY_LEN(keys));
}

/* ---- what cucore checks ------------------------------------------------------------------ */

cucore_status cc_kt_lang(cucore_tune_space *s, const char *key, const cc_json *v,
                         const cc_json *obj) {
  (void)obj;
  static const char *const CUDA[] = {"CUDA", "CUPY", "NVCUDA", "PYCUDA"};
  if (v->type != CC_JSON_STRING) return cc_sf_wrong(s, key, "a string", v);
  for (size_t i = 0; i < CC_ARRAY_LEN(CUDA); i++)
    if (strcasecmp(v->text, CUDA[i]) == 0)
      return cc_tune_extras_ignore(s, key, "cucore compiles CUDA with its own NVRTC path");
  char t[128];
  return cc_sf_fail(s, v,
                    "`%s` is \"%s\": cucore tunes CUDA kernels only (CUDA, CuPy, NVCUDA or "
                    "PyCUDA)",
                    key, cc_sf_clip(v->text, t));
}

cucore_status cc_kt_objective(cucore_tune_space *s, const char *key, const cc_json *v,
                              const cc_json *obj) {
  (void)obj;
  if (v->type != CC_JSON_STRING) return cc_sf_wrong(s, key, "a string", v);
  if (strcmp(v->text, "time") == 0)
    return cc_tune_extras_ignore(s, key, "cucore ranks configurations by time");
  char t[128];
  return cc_sf_fail(s, v,
                    "`%s` is \"%s\": cucore ranks configurations by time only (another "
                    "objective needs Kernel Tuner's metrics or observers)",
                    key, cc_sf_clip(v->text, t));
}

cucore_status cc_kt_higher_is_better(cucore_tune_space *s, const char *key, const cc_json *v,
                                     const cc_json *obj) {
  (void)obj;
  if (v->type != CC_JSON_BOOL) return cc_sf_wrong(s, key, "a boolean", v);
  if (!v->boolean) return cc_tune_extras_ignore(s, key, "cucore ranks by time, lower is better");
  return cc_sf_fail(s, v, "`%s` is true: cucore ranks by time, lower is better", key);
}

cucore_status cc_kt_objectives(cucore_tune_space *s, const char *key, const cc_json *v,
                               const cc_json *obj) {
  (void)obj;
  const cc_json *t = cc_json_get(v, "time");
  if (v->type != CC_JSON_OBJECT) return cc_sf_wrong(s, key, "an object (objective -> bool)", v);
  if (v->n == 1 && t && t->type == CC_JSON_BOOL && !t->boolean)
    return cc_tune_extras_ignore(s, key, "cucore ranks configurations by time");
  return cc_sf_fail(s, v,
                    "`%s`: cucore ranks by one objective, time (lower is better); only "
                    "{\"time\": false} can be given",
                    key);
}

cucore_status cc_kt_texmem_args(cucore_tune_space *s, const char *key, const cc_json *v,
                                const cc_json *obj) {
  (void)obj;
  if (v->type != CC_JSON_OBJECT) return cc_sf_wrong(s, key, "an object", v);
  if (v->n == 0) return CUCORE_OK;
  return cc_sf_fail(s, v, "`%s`: texture memory arguments are not supported by cucore tune", key);
}
