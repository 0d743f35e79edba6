/*
 * search_options.c -- a strategy's options (tune/search.h): the text a user gives
 * (`key=value,key=value` or a JSON object `{"key": value}`) read against the strategy's table,
 * each value a number within the option's range. A mistake is named with what was expected:
 * an option the strategy does not have (with the ones it has), a value that is not a number, a
 * value out of range (with the range), an option given twice; Kernel Tuner's budget names
 * (max_fevals, time_limit) point at the run options that hold them.
 */
#include "tune/search.h"
#include "tune/strict_json.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static size_t count_options(const cc_tstrat_option *t) {
  size_t n = 0;
  while (t && t[n].name) n++;
  return n;
}

/* "a, b or c": the table's option names, for errors (malloc'ed; NULL: out of memory). */
static char *option_names(const cc_tstrat_option *t) {
  size_t n = count_options(t), cap = 1;
  for (size_t i = 0; i < n; i++) cap += strlen(t[i].name) + 4;
  char *buf = malloc(cap);
  if (!buf) return NULL;
  buf[0] = 0;
  for (size_t i = 0; i < n; i++) {
    strcat(buf, i == 0 ? "" : i + 1 == n ? " or " : ", ");
    strcat(buf, t[i].name);
  }
  return buf;
}

/* Sets option `key` (len bytes) to `value` (the number's text, for errors). */
static cucore_status set_one(const cc_tstrat_option *t, const char *who, const char *key,
                             size_t len, double value, const char *text, cc_tstrat_values *out) {
  static const char *const budget_names[][2] = {{"max_fevals", "max_evals (--max-evals)"},
                                                {"time_limit", "time_limit_s (--time-limit)"}};
  for (size_t b = 0; b < 2; b++)
    if (strlen(budget_names[b][0]) == len && !strncmp(key, budget_names[b][0], len))
      return cc_fail(CUCORE_INVALID_ARGUMENT,
                     "strategy options: `%s` is the search's budget, not an option of %s: give "
                     "it as the run's %s",
                     budget_names[b][0], who, budget_names[b][1]);
  size_t n = count_options(t);
  for (size_t i = 0; i < n; i++) {
    if (strlen(t[i].name) != len || strncmp(key, t[i].name, len)) continue;
    if (out->set & (1u << i))
      return cc_fail(CUCORE_INVALID_ARGUMENT, "strategy options: `%s` is given twice", t[i].name);
    if (!(value >= t[i].min && value <= t[i].max) || (t[i].integer && value != floor(value)))
      return cc_fail(CUCORE_INVALID_ARGUMENT,
                     "strategy options: %s `%s` is %s: expected %s from %g to %g (%s)", who,
                     t[i].name, text, t[i].integer ? "a whole number" : "a number", t[i].min,
                     t[i].max, t[i].help);
    out->value[i] = value, out->set |= 1u << i;
    return CUCORE_OK;
  }
  if (!n)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "strategy options: `%.*s` is no option of %s: it has none", (int)len, key, who);
  char *names = option_names(t);
  cucore_status st = cc_fail(CUCORE_INVALID_ARGUMENT,
                             "strategy options: `%.*s` is no option of %s: expected %s", (int)len,
                             key, who, names ? names : "one of its options");
  free(names);
  return st;
}

static cucore_status read_json(const cc_tstrat_option *t, const char *who, const char *text,
                               cc_tstrat_values *out) {
  cc_json v;
  char why[256];
  if (cc_json_parse(text, strlen(text), &v, why, sizeof why) != 0)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "strategy options: not JSON: %s", why);
  cucore_status st = CUCORE_OK;
  if (v.type != CC_JSON_OBJECT)
    st = cc_fail(CUCORE_INVALID_ARGUMENT,
                 "strategy options: the JSON is %s: expected an object such as {\"trees\": 64}",
                 cc_json_type_name(v.type));
  for (size_t i = 0; st == CUCORE_OK && i < v.n; i++) {
    const cc_json *x = &v.items[i];
    if (x->type == CC_JSON_NUMBER)
      st = set_one(t, who, v.keys[i], strlen(v.keys[i]), x->number, x->text, out);

    else
      st = cc_fail(CUCORE_INVALID_ARGUMENT, "strategy options: `%s` is %s: expected a number",
                   v.keys[i], cc_json_type_name(x->type));
  }
  cc_json_free(&v);
  return st;
}

/* key=value items separated by commas or white space. */
static cucore_status read_pairs(const cc_tstrat_option *t, const char *who, const char *text,
                                cc_tstrat_values *out) {
  const char *p = text;
  for (;;) {
    while (*p == ',' || *p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
    if (!*p) return CUCORE_OK;
    const char *key = p, *eq = p;
    while (*eq && *eq != '=' && !strchr(", \t\n\r", *eq)) eq++;
    if (*eq != '=' || eq == key)
      return cc_fail(CUCORE_INVALID_ARGUMENT,
                     "strategy options: `%.*s` is no key=value item: expected items such as "
                     "trees=64,pool=2048 or a JSON object",
                     (int)(eq > key ? (eq - key) : 1), key);
    const char *val = eq + 1, *end = val;
    while (*end && !strchr(", \t\n\r", *end)) end++;
    size_t vlen = (size_t)(end - val);
    char num[64];
    double x = NAN;
    if (vlen && vlen < sizeof num) {
      memcpy(num, val, vlen);
      num[vlen] = 0;
      char *stop = NULL;
      errno = 0;
      x = strspn(num, "0123456789+-.eE") == vlen ? strtod(num, &stop) : NAN; /* decimal only */
      if (isnan(x) || *stop || errno || !isfinite(x)) x = NAN;
    }
    if (isnan(x))
      return cc_fail(CUCORE_INVALID_ARGUMENT,
                     "strategy options: `%.*s` has value `%.*s`: "
                     "expected a number (at most 63 characters)",
                     (int)(eq - key), key, (int)vlen, val);
    cucore_status st = set_one(t, who, key, (size_t)(eq - key), x, num, out);
    if (st != CUCORE_OK) return st;
    p = end;
  }
}

cucore_status cc_tstrat_values_parse(const cc_tstrat_option *table, const char *who,
                                     const char *text, cc_tstrat_values *out) {
  memset(out, 0, sizeof *out);
  if (!text) return CUCORE_OK;
  const char *p = text;
  while (*p == ' ' || *p == '\t' || *p == '\n') p++;
  return *p == '{' || *p == '[' ? read_json(table, who, text, out)
                                : read_pairs(table, who, text, out);
}

double cc_tsearch_option(const cc_tsearch *s, size_t k, double fallback) {
  return s->opts.set & (1u << k) ? s->opts.value[k] : fallback;
}
