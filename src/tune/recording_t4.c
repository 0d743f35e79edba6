/*
 * recording_t4.c -- a recorded space read from a TuningSchema T4 file (what `cucore tune --t4`
 * and Kernel Tuner write): "results", each with its "configuration" (parameter -> value), its
 * "invalidity" ("correct", or why it failed: "compile", "runtime", "correctness", "timeout";
 * "constraints" is a configuration outside the space, left out), its "measurements" (the
 * "time" one, in its "unit") and "times" ("compilation_time" and "runtimes" in seconds, which
 * the simulated clock adds; a time without a "time" measurement is the runtimes' median). T4
 * does not list the parameters' values: they are the ones the results use, numbers in
 * ascending order, then other values in their order of appearance.
 */
#include "tune/recording.h"
#include "tune/strict_json.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define FN "a TuningSchema T4 file"

static cucore_status bad_result(const char *name, size_t i, const char *what) {
  return cc_fail(CUCORE_INVALID_ARGUMENT, "%s (%s): results[%zu]: %s", name, FN, i, what);
}

/* 1 when a result is outside the space (its configuration broke a constraint). */
static int outside(const cc_json *res) {
  const cc_json *inv = cc_json_get(res, "invalidity");
  return inv && inv->type == CC_JSON_STRING && strcmp(inv->text, "constraints") == 0;
}

/* The parameters: the first kept result's configuration keys, in its order. */
static cucore_status take_names(cc_trecording *r, const cc_json *results, const char *name) {
  const cc_json *first = NULL;
  for (size_t i = 0; i < results->n && !first; i++) {
    const cc_json *res = &results->items[i], *c = cc_json_get(res, "configuration");
    if (res->type != CC_JSON_OBJECT || !c || c->type != CC_JSON_OBJECT || c->n == 0)
      return bad_result(name, i, "expected an object with a non-empty \"configuration\" object");
    if (!outside(res)) first = c;
  }
  if (!first)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s (%s): no result inside the space", name, FN);
  r->nparams = first->n;
  r->names = cc_calloc(first->n + 1, sizeof *r->names, FN);
  r->sizes = cc_calloc(first->n + 1, sizeof *r->sizes, FN);
  r->offset = cc_calloc(first->n + 1, sizeof *r->offset, FN);
  if (!r->names || !r->sizes || !r->offset) return CUCORE_HOST_OUT_OF_MEMORY;
  for (size_t p = 0; p < first->n; p++)
    if (!(r->names[p] = cc_strdup(first->keys[p], FN))) return CUCORE_HOST_OUT_OF_MEMORY;
  return CUCORE_OK;
}

/* A list of distinct JSON values of one parameter. */
typedef struct vlist {
  const cc_json **v;
  size_t n, cap;
} vlist;

static int same_value(const cc_json *a, const cc_json *b) {
  if (a->type != b->type) return 0;
  if (a->type == CC_JSON_NUMBER) return a->number == b->number;
  if (a->type == CC_JSON_BOOL) return a->boolean == b->boolean;
  return a->type == CC_JSON_STRING ? strcmp(a->text, b->text) == 0 : 1;
}

static int by_number_first(const void *x, const void *y) {
  const cc_json *a = *(const cc_json *const *)x, *b = *(const cc_json *const *)y;
  int an = a->type == CC_JSON_NUMBER, bn = b->type == CC_JSON_NUMBER;
  if (an != bn) return bn - an;
  if (!an) return (a->at > b->at) - (a->at < b->at); /* order of appearance */
  return (a->number > b->number) - (a->number < b->number);
}

/* Parameter p's values as the results use them, into lists[p]. */
static cucore_status gather(const cc_trecording *r, const cc_json *results, size_t p, vlist *l,
                            const char *name) {
  for (size_t i = 0; i < results->n; i++) {
    const cc_json *res = &results->items[i];
    if (outside(res)) continue;
    const cc_json *c = cc_json_get(res, "configuration");
    const cc_json *v = c && c->type == CC_JSON_OBJECT ? cc_json_get(c, r->names[p]) : NULL;
    if (!v || v->type == CC_JSON_ARRAY || v->type == CC_JSON_OBJECT)
      return cc_fail(CUCORE_INVALID_ARGUMENT, "%s (%s): results[%zu]: parameter `%s` %s", name, FN,
                     i, r->names[p], v ? "is a list or an object, not a value" : "is missing");
    size_t k = 0;
    while (k < l->n && !same_value(l->v[k], v)) k++;
    if (k < l->n) continue;
    const cc_json **grown = cc_grow(l->v, &l->cap, l->n + 1, sizeof *grown, FN);
    if (!grown) return CUCORE_HOST_OUT_OF_MEMORY;
    l->v = grown;
    l->v[l->n++] = v;
  }
  qsort(l->v, l->n, sizeof *l->v, by_number_first);
  return CUCORE_OK;
}

static cucore_status take_values(cc_trecording *r, const cc_json *results, const char *name) {
  vlist *lists = cc_calloc(r->nparams, sizeof *lists, FN);
  if (!lists) return CUCORE_HOST_OUT_OF_MEMORY;
  cucore_status st = CUCORE_OK;
  size_t nv = 0;
  for (size_t p = 0; st == CUCORE_OK && p < r->nparams; p++) {
    st = gather(r, results, p, &lists[p], name);
    r->offset[p] = nv, r->sizes[p] = lists[p].n, nv += lists[p].n;
  }
  if (st == CUCORE_OK) {
    r->texts = cc_calloc(nv + 1, sizeof *r->texts, FN);
    r->num = cc_calloc(nv + 1, sizeof *r->num, FN);
    if (!r->texts || !r->num) st = CUCORE_HOST_OUT_OF_MEMORY;
  }
  for (size_t p = 0; st == CUCORE_OK && p < r->nparams; p++)
    for (size_t k = 0; st == CUCORE_OK && k < lists[p].n; k++) {
      const cc_json *v = lists[p].v[k];
      size_t at = r->offset[p] + k;
      if (!(r->texts[at] = cc_trecording_text_of(v))) st = CUCORE_HOST_OUT_OF_MEMORY;
      r->num[at] = v->type == CC_JSON_NUMBER ? v->number : NAN;
    }
  for (size_t p = 0; p < r->nparams; p++) free(lists[p].v);
  free(lists);
  return st;
}

static double seconds_of(const cc_json *times, const char *key) {
  const cc_json *v = times ? cc_json_get(times, key) : NULL;
  return v && v->type == CC_JSON_NUMBER && isfinite(v->number) && v->number > 0 ? v->number : 0;
}

static int by_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

/* The "time" measurement in ms (NAN: none): its unit "ms", "s", "us" or "ns". */
static double measured_ms(const cc_json *res) {
  const cc_json *ms = cc_json_get(res, "measurements");
  for (size_t i = 0; ms && ms->type == CC_JSON_ARRAY && i < ms->n; i++) {
    const cc_json *m = &ms->items[i], *nm = cc_json_get(m, "name"), *v = cc_json_get(m, "value");
    const cc_json *u = cc_json_get(m, "unit");
    if (!nm || nm->type != CC_JSON_STRING || strcmp(nm->text, "time") != 0 || !v ||
        v->type != CC_JSON_NUMBER)
      continue;
    const char *unit = u && u->type == CC_JSON_STRING ? u->text : "ms";
    double scale = !strcmp(unit, "s")    ? 1e3
                   : !strcmp(unit, "us") ? 1e-3
                   : !strcmp(unit, "ns") ? 1e-6
                                         : 1;
    return v->number * scale;
  }
  return NAN;
}

/* Result i's time (ms; NAN: failed) and what measuring it cost (ms). */
static void time_and_cost(const cc_json *res, double *time, double *cost) {
  const cc_json *inv = cc_json_get(res, "invalidity"), *times = cc_json_get(res, "times");
  const cc_json *rt = times ? cc_json_get(times, "runtimes") : NULL;
  size_t cap = rt && rt->type == CC_JSON_ARRAY ? rt->n : 0, n = 0;
  double *runs = cap ? malloc(cap * sizeof *runs) : NULL, total = 0;
  for (size_t k = 0; k < cap; k++)
    if (rt->items[k].type == CC_JSON_NUMBER && rt->items[k].number >= 0) {
      total += rt->items[k].number;
      if (runs) runs[n++] = rt->items[k].number; /* out of memory: no median from them */
    }
  *cost = 1e3 *
          (seconds_of(times, "compilation_time") + seconds_of(times, "verification_time") + total);
  *time = NAN;
  int correct = !inv || (inv->type == CC_JSON_STRING && strcmp(inv->text, "correct") == 0);
  if (correct) *time = measured_ms(res);
  if (correct && isnan(*time) && n) {
    qsort(runs, n, sizeof *runs, by_double);
    *time = 1e3 * (n % 2 ? runs[n / 2] : 0.5 * (runs[n / 2 - 1] + runs[n / 2]));
  }
  free(runs);
  if (!(*time >= 0 && *time < 1e20)) *time = NAN;
}

cucore_status cc_trecording_read_t4(cc_trecording *r, const cc_json *root, const char *name) {
  const cc_json *results = cc_json_get(root, "results");
  if (!results || results->type != CC_JSON_ARRAY || results->n == 0)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s (%s): no \"results\" list of measured "
                   "configurations",
                   name, FN);
  cucore_status st = take_names(r, results, name);
  if (st == CUCORE_OK) st = take_values(r, results, name);
  if (st != CUCORE_OK) return st;
  double raw = 1;
  for (size_t p = 0; p < r->nparams; p++) raw *= (double)r->sizes[p];
  if (raw > 1.8e19)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s (%s): more configurations than 2^64", name, FN);
  r->index = cc_calloc(results->n, sizeof *r->index, FN);
  r->time = cc_calloc(results->n, sizeof *r->time, FN);
  r->cost = cc_calloc(results->n, sizeof *r->cost, FN);
  if (!r->index || !r->time || !r->cost) return CUCORE_HOST_OUT_OF_MEMORY;
  for (size_t i = 0; i < results->n; i++) {
    const cc_json *res = &results->items[i];
    if (outside(res)) continue;
    const cc_json *c = cc_json_get(res, "configuration");
    if (c->n != r->nparams)
      return bad_result(name, i, "its configuration names other parameters than the first's");
    uint64_t index = 0;
    for (size_t p = 0; p < r->nparams; p++)
      index = index * r->sizes[p] +
              (uint64_t)cc_trecording_value_of(r, p, cc_json_get(c, r->names[p]));
    r->index[r->n] = index;
    time_and_cost(res, &r->time[r->n], &r->cost[r->n]);
    r->n++;
  }
  return cc_trecording_finish(r, name, FN);
}
