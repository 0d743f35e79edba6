/*
 * space_t1.c -- a search space from the TuningSchema T1 input that Kernel Tuner, KTT and the
 * BAT suite share: ConfigurationSpace.TuningParameters [{Name, Values}], Conditions
 * [{Expression}], KernelSpecification {KernelName, GlobalSize, LocalSize, SharedMemory}.
 * GlobalSize is the total threads per dimension (OpenCL's global size), so it is the problem
 * size and the grid is ceil(GlobalSize / LocalSize). Values are JSON lists, or the Python
 * texts T1 files use for them: "[1, 2, 4]", "range(A, B[, S])", "list(range(...))" and
 * "[2**i for i in range(A, B)]"; no other Python is read (nothing is ever evaluated).
 */
#include "tune/json.h"
#include "tune/space.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CC_T1_VALUES_MAX 65536

static cucore_status t1_wrong(const char *what) {
  return cc_fail(CUCORE_INVALID_ARGUMENT, "T1 space: %s", what);
}

/* "range(A, B[, S])" (with or without list( ) around), or "[2**i for i in range(A, B)]":
 * the values as "V1,V2,..." into buf. 0, or -1 when the text is neither. */
static int python_values(const char *t, char *buf, size_t cap) {
  long a = 0, b = 0, s = 1;
  int pow2 = 0, n = 0;
  if (sscanf(t, "[2**i for i in range(%ld, %ld)]%n", &a, &b, &n) == 2 && !t[n])
    pow2 = 1;
  else if (sscanf(t, "[2 ** i for i in range(%ld, %ld)]%n", &a, &b, &n) == 2 && !t[n])
    pow2 = 1;
  else if (!(sscanf(t, "range(%ld, %ld, %ld)%n", &a, &b, &s, &n) == 3 && !t[n]) &&
           !(sscanf(t, "list(range(%ld, %ld, %ld))%n", &a, &b, &s, &n) == 3 && !t[n]) &&
           !(sscanf(t, "range(%ld, %ld)%n", &a, &b, &n) == 2 && !t[n]) &&
           !(sscanf(t, "list(range(%ld, %ld))%n", &a, &b, &n) == 2 && !t[n]))
    return -1;
  if (s <= 0 || b <= a || (b - a) / s > CC_T1_VALUES_MAX || (pow2 && (a < 0 || b > 63))) return -1;
  size_t len = 0;
  buf[0] = 0;
  for (long v = a; v < b && len < cap; v += s)
    len += (size_t)snprintf(buf + len, cap - len, "%s%ld", len ? "," : "", pow2 ? 1L << v : v);
  return len < cap ? 0 : -1;
}

static cucore_status add_values(cucore_tune_space *s, const char *name, const cc_json *v) {
  char *text = cc_malloc(1 << 20, "T1 values");
  if (!text) return CUCORE_HOST_OUT_OF_MEMORY;
  size_t len = (size_t)snprintf(text, 1 << 20, "%s=", name);
  cc_json list;
  char why[128];
  int ok = 0, parsed = 0;
  if (v->type == CC_JSON_STRING && python_values(v->text, text + len, (1 << 20) - len) == 0)
    ok = 1;
  else if (v->type == CC_JSON_STRING)
    ok = parsed = cc_json_parse(v->text, strlen(v->text), &list, why, sizeof why) == 0;
  else
    ok = v->type == CC_JSON_ARRAY;
  if (ok && (parsed || v->type == CC_JSON_ARRAY)) {
    const cc_json *l = parsed ? &list : v;
    ok = l->type == CC_JSON_ARRAY && l->n > 0;
    for (size_t i = 0; ok && i < l->n; i++) {
      ok = l->items[i].type == CC_JSON_NUMBER || l->items[i].type == CC_JSON_STRING;
      if (ok)
        len += (size_t)snprintf(text + len, (1 << 20) - len, "%s%s", i ? "," : "",
                                l->items[i].text);
    }
  }
  if (parsed) cc_json_free(&list);
  cucore_status st = ok ? cucore_tune_space_parse_param(s, text, CUCORE_TUNE_PARAM_AUTO)
                        : cc_fail(CUCORE_INVALID_ARGUMENT,
                                  "T1 space: the Values of `%s` are "
                                  "not a list, a range() or [2**i for i in range()]",
                                  name);
  free(text);
  return st;
}

static cucore_status params(cucore_tune_space *s, const cc_json *tp) {
  if (!tp || tp->type != CC_JSON_ARRAY)
    return t1_wrong("ConfigurationSpace.TuningParameters must be an array");
  for (size_t i = 0; i < tp->n; i++) {
    const cc_json *name = cc_json_get(&tp->items[i], "Name");
    const cc_json *vals = cc_json_get(&tp->items[i], "Values");
    if (!name || name->type != CC_JSON_STRING || !vals)
      return t1_wrong("each TuningParameter needs a Name (string) and Values");
    cucore_status st = add_values(s, name->text, vals);
    if (st != CUCORE_OK) return st;
  }
  return CUCORE_OK;
}

static cucore_status conditions(cucore_tune_space *s, const cc_json *c) {
  for (size_t i = 0; c && i < c->n; i++) {
    const cc_json *e = cc_json_get(&c->items[i], "Expression");
    if (!e || e->type != CC_JSON_STRING) return t1_wrong("each Condition needs an Expression");
    cucore_status st = cucore_tune_space_restrict(s, e->text);
    if (st != CUCORE_OK) return st;
  }
  return CUCORE_OK;
}

/* {"X": .., "Y": .., "Z": ..} (numbers or expressions) as "x, y, z" into a slot. */
static cucore_status dims(cucore_tune_space *s, const cc_json *d, cucore_tune_slot slot) {
  if (!d) return CUCORE_OK;
  static const char *const axes[] = {"X", "Y", "Z"};
  char text[1024];
  size_t len = 0;
  for (int a = 0; a < 3; a++) {
    const cc_json *v = cc_json_get(d, axes[a]);
    int ok = v && (v->type == CC_JSON_NUMBER || v->type == CC_JSON_STRING);
    len += (size_t)snprintf(text + len, sizeof text - len, "%s%s", a ? ", " : "",
                            ok ? v->text : "1");
  }
  return len < sizeof text ? cucore_tune_space_set_expr(s, slot, text)
                           : t1_wrong("a size expression is too long");
}

cucore_status cc_tune_space_t1(cucore_tune_space *s, const struct cc_json *root) {
  const cc_json *cs = cc_json_get(root, "ConfigurationSpace");
  const cc_json *ks = cc_json_get(root, "KernelSpecification");
  cucore_status st = params(s, cc_json_get(cs, "TuningParameters"));
  if (st == CUCORE_OK) st = conditions(s, cc_json_get(cs, "Conditions"));
  const cc_json *name = cc_json_get(ks, "KernelName"), *smem = cc_json_get(ks, "SharedMemory");
  if (st == CUCORE_OK && name && name->type == CC_JSON_STRING)
    st = cucore_tune_space_set_kernel(s, name->text);
  if (st == CUCORE_OK) st = dims(s, cc_json_get(ks, "LocalSize"), CUCORE_TUNE_BLOCK);
  if (st == CUCORE_OK) st = dims(s, cc_json_get(ks, "GlobalSize"), CUCORE_TUNE_PROBLEM_SIZE);
  if (st == CUCORE_OK && smem && (smem->type == CC_JSON_NUMBER || smem->type == CC_JSON_STRING))
    st = cucore_tune_space_set_expr(s, CUCORE_TUNE_SMEM, smem->text);
  return st;
}
