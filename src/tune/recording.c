/*
 * recording.c -- a recorded space read from a Kernel Tuner cache file: "tune_params_keys" (the
 * parameters' order), "tune_params" (their values), "cache" (one entry per configuration with
 * each parameter's value, "time" in ms or a failure's name such as "CompilationFailedConfig",
 * and "compile_time", "verification_time", "benchmark_time" in ms). An entry's value is matched
 * to the parameter's values by number (16 and 16.0 are one value) or by text; an entry naming a
 * value the parameter does not list, or a parameter it lacks, is refused naming both.
 */
#include "tune/recording.h"
#include "tune/strict_json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FN "a Kernel Tuner cache file"

static cucore_status bad(const char *name, const char *what) {
  return cc_fail(CUCORE_INVALID_ARGUMENT, "%s (%s): %s", name, FN, what);
}

void cc_trecording_free(cc_trecording *r) {
  if (!r) return;
  for (size_t p = 0; r->names && p < r->nparams; p++) free(r->names[p]);
  size_t nv = r->nparams && r->offset ? r->offset[r->nparams - 1] + r->sizes[r->nparams - 1] : 0;
  for (size_t i = 0; r->texts && i < nv; i++) free(r->texts[i]);
  free(r->kernel), free(r->device), free(r->names), free(r->sizes), free(r->offset);
  free(r->texts), free(r->num), free(r->index), free(r->time), free(r->cost);
  free(r);
}

static char *text_of(const cc_json *v) {
  if (v->type == CC_JSON_STRING || v->type == CC_JSON_NUMBER) return cc_strdup(v->text, FN);
  return cc_strdup(v->type == CC_JSON_BOOL ? (v->boolean ? "true" : "false") : "null", FN);
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
      if (!(r->texts[at] = text_of(x))) return CUCORE_HOST_OUT_OF_MEMORY;
      r->num[at] = x->type == CC_JSON_NUMBER ? x->number : NAN;
    }
  }
  return CUCORE_OK;
}

/* The value index of `v` among parameter p's values, or -1. */
static long value_of(const cc_trecording *r, size_t p, const cc_json *v) {
  for (size_t k = 0; k < r->sizes[p]; k++) {
    size_t at = r->offset[p] + k;
    if (v->type == CC_JSON_NUMBER
            ? r->num[at] == v->number
            : isnan(r->num[at]) && v->type == CC_JSON_STRING && strcmp(r->texts[at], v->text) == 0)
      return (long)k;
  }
  return -1;
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
    long k = v ? value_of(r, p, v) : -1;
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

typedef struct entry {
  uint64_t index;
  double time, cost;
} entry;

static int by_index(const void *a, const void *b) {
  uint64_t x = ((const entry *)a)->index, y = ((const entry *)b)->index;
  return (x > y) - (x < y);
}

/* Sorts the entries by index; a configuration recorded twice is refused. */
static cucore_status sort_entries(cc_trecording *r, const char *name) {
  entry *e = cc_calloc(r->n + 1, sizeof *e, FN);
  if (!e) return CUCORE_HOST_OUT_OF_MEMORY;
  for (size_t i = 0; i < r->n; i++) e[i] = (entry){r->index[i], r->time[i], r->cost[i]};
  qsort(e, r->n, sizeof *e, by_index);
  cucore_status st = CUCORE_OK;
  for (size_t i = 0; i < r->n; i++) {
    r->index[i] = e[i].index, r->time[i] = e[i].time, r->cost[i] = e[i].cost;
    if (i && e[i].index == e[i - 1].index && st == CUCORE_OK)
      st = bad(name, "a configuration recorded twice");
  }
  free(e);
  return st;
}

long cc_trecording_find(const cc_trecording *r, uint64_t index) {
  size_t lo = 0, hi = r->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (r->index[mid] < index)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < r->n && r->index[lo] == index ? (long)lo : -1;
}

static int rec_valid(void *ctx, const size_t *digits) {
  const cc_trecording *r = ctx;
  return cc_trecording_find(r, cc_tdom_index(&r->dom, digits)) >= 0;
}

static void rec_at_rank(void *ctx, uint64_t k, size_t *digits) {
  const cc_trecording *r = ctx;
  cc_tdom_digits(&r->dom, r->index[k], digits);
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
  if (st == CUCORE_OK) st = sort_entries(r, name);
  r->optimum = INFINITY;
  for (size_t i = 0; i < r->n; i++)
    if (!isnan(r->time[i])) {
      r->nvalid++;
      if (r->time[i] < r->optimum) r->optimum = r->time[i];
    }
  if (st == CUCORE_OK && !r->nvalid) st = bad(name, "no configuration with a time");
  return st;
}

static char *str_or_empty(const cc_json *root, const char *key) {
  const cc_json *v = cc_json_get(root, key);
  return cc_strdup(v && v->type == CC_JSON_STRING ? v->text : "", FN);
}

cucore_status cc_trecording_read(const char *text, size_t len, const char *name,
                                 cc_trecording **out) {
  *out = NULL;
  char why[256];
  cc_json root;
  if (cc_json_parse(text, len, &root, why, sizeof why) < 0)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s (%s): %s", name, FN, why);
  cc_trecording *r = cc_calloc(1, sizeof *r, FN);
  cucore_status st = r ? CUCORE_OK : CUCORE_HOST_OUT_OF_MEMORY;
  if (st == CUCORE_OK && root.type != CC_JSON_OBJECT) st = bad(name, "not a JSON object");
  if (st == CUCORE_OK) st = read_params(r, &root, name);
  if (st == CUCORE_OK) st = read_cache(r, &root, name);
  if (st == CUCORE_OK && (!(r->kernel = str_or_empty(&root, "kernel_name")) ||
                          !(r->device = str_or_empty(&root, "device_name"))))
    st = CUCORE_HOST_OUT_OF_MEMORY;
  cc_json_free(&root);
  if (st != CUCORE_OK) {
    cc_trecording_free(r);
    return st;
  }
  r->dom = (cc_tdom){r->nparams, r->sizes, r->num, r->offset, r->n, r, rec_valid, rec_at_rank};
  *out = r;
  return CUCORE_OK;
}
