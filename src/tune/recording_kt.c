/*
 * recording_kt.c -- a recorded space read from a Kernel Tuner cache file: "tune_params_keys" (the
 * parameters' order), "tune_params" (their values), "cache" (one entry per configuration with
 * each parameter's value, "time" in ms or a failure's name such as "CompilationFailedConfig",
 * and "compile_time", "verification_time", "benchmark_time" in ms). An entry's value is matched
 * to its parameter's values by number (or text for strings); the simulated clock adds the
 * three times.
 */
#include "tune/recording.h"
#include "tune/strict_json.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define FN "a Kernel Tuner cache file"

static cucore_status bad(const char *name, const char *what) {
  return cc_fail(CUCORE_INVALID_ARGUMENT, "%s (%s): %s", name, FN, what);
}

/* The parameters and their values. */
static cucore_status read_params(cc_trecording *r, const cc_json *root, const char *name) {
  const cc_json *keys = cc_json_get(root, "tune_params_keys");
  const cc_json *tp = cc_json_get(root, "tune_params");
  if (!keys || keys->type != CC_JSON_ARRAY || !tp || tp->type != CC_JSON_OBJECT)
    return bad(name, "no \"tune_params_keys\" list and \"tune_params\" object");
  r->nparams = keys->n;
  size_t n1 = keys->n + 1, nv = 0;
  r->names = cc_calloc(n1, sizeof *r->names, FN);
  r->sizes = cc_calloc(n1, sizeof *r->sizes, FN);
  r->offset = cc_calloc(n1, sizeof *r->offset, FN);
  if (!r->names || !r->sizes || !r->offset) return CUCORE_HOST_OUT_OF_MEMORY;
  for (size_t p = 0; p < keys->n; p++) {
    const cc_json *k = &keys->items[p];
    const cc_json *vals = k->type == CC_JSON_STRING ? cc_json_get(tp, k->text) : NULL;
    if (!vals || vals->type != CC_JSON_ARRAY || vals->n == 0)
      return cc_fail(CUCORE_INVALID_ARGUMENT,
                     "%s (%s): tune_params_keys[%zu]: expected a name with a non-empty list "
                     "of values in \"tune_params\"",
                     name, FN, p);
    if (!(r->names[p] = cc_strdup(k->text, FN))) return CUCORE_HOST_OUT_OF_MEMORY;
    r->offset[p] = nv, r->sizes[p] = vals->n, nv += vals->n;
  }
  r->texts = cc_calloc(nv + 1, sizeof *r->texts, FN);
  r->num = cc_calloc(nv + 1, sizeof *r->num, FN);
  if (!r->texts || !r->num) return CUCORE_HOST_OUT_OF_MEMORY;
  for (size_t p = 0; p < keys->n; p++) {
    const cc_json *vals = cc_json_get(tp, keys->items[p].text);
    for (size_t v = 0; v < vals->n; v++) {
      const cc_json *x = &vals->items[v];
      size_t at = r->offset[p] + v;
      if (!(r->texts[at] = cc_trecording_text_of(x))) return CUCORE_HOST_OUT_OF_MEMORY;
      r->num[at] = x->type == CC_JSON_NUMBER ? x->number : NAN;
    }
  }
  return CUCORE_OK;
}

static double ms_of(const cc_json *e, const char *key) {
  const cc_json *v = cc_json_get(e, key);
  return v && v->type == CC_JSON_NUMBER && isfinite(v->number) && v->number > 0 ? v->number : 0;
}

/* One entry (`key` its name in the cache) into slot i. */
static cucore_status read_entry(cc_trecording *r, const cc_json *e, const char *key, size_t i,
                                const char *name) {
  if (e->type != CC_JSON_OBJECT)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s (%s): cache entry \"%s\" is %s, not an object",
                   name, FN, key, cc_json_type_name(e->type));
  uint64_t index = 0;
  for (size_t p = 0; p < r->nparams; p++) {
    const cc_json *v = cc_json_get(e, r->names[p]);
    long k = v ? cc_trecording_value_of(r, p, v) : -1;
    if (k < 0)
      return cc_fail(CUCORE_INVALID_ARGUMENT, "%s (%s): cache entry \"%s\": parameter `%s` %s",
                     name, FN, key, r->names[p],
                     v ? "has a value its tune_params do not list" : "is missing");
    index = index * r->sizes[p] + (uint64_t)k;
  }
  const cc_json *t = cc_json_get(e, "time");
  r->index[i] = index;
  r->time[i] = t && t->type == CC_JSON_NUMBER && isfinite(t->number) && t->number >= 0 &&
                       t->number < 1e20
                   ? t->number
                   : NAN;
  r->cost[i] = ms_of(e, "compile_time") + ms_of(e, "verification_time") +
               ms_of(e, "benchmark_time");
  return CUCORE_OK;
}

static cucore_status read_cache(cc_trecording *r, const cc_json *root, const char *name) {
  const cc_json *cache = cc_json_get(root, "cache");
  if (!cache || cache->type != CC_JSON_OBJECT || cache->n == 0)
    return bad(name, "no \"cache\" object of recorded configurations");
  double raw = 1;
  for (size_t p = 0; p < r->nparams; p++) raw *= (double)r->sizes[p];
  if (raw > 1.8e19) return bad(name, "more configurations than 2^64");
  r->n = cache->n;
  r->index = cc_calloc(r->n, sizeof *r->index, FN);
  r->time = cc_calloc(r->n, sizeof *r->time, FN);
  r->cost = cc_calloc(r->n, sizeof *r->cost, FN);
  if (!r->index || !r->time || !r->cost) return CUCORE_HOST_OUT_OF_MEMORY;
  cucore_status st = CUCORE_OK;
  for (size_t i = 0; st == CUCORE_OK && i < r->n; i++)
    st = read_entry(r, &cache->items[i], cache->keys[i], i, name);
  return st == CUCORE_OK ? cc_trecording_finish(r, name, FN) : st;
}

cucore_status cc_trecording_read_kt(cc_trecording *r, const cc_json *root, const char *name) {
  cucore_status st = read_params(r, root, name);
  return st == CUCORE_OK ? read_cache(r, root, name) : st;
}
