/*
 * space_config.c -- one configuration of a space before compiling: its values, its
 * restrictions, its launch (Kernel Tuner's conventions), the architecture's limits and the hash
 * that groups configurations sharing one compile. The checks evaluate quietly (no reason
 * built) when no configuration is given, as the walks of space_walk.c call them.
 */
#include "tune/space.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t fnv(uint64_t h, const char *s, size_t n) {
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
  return h;
}

/* The compile hash of the configuration whose value indices are `digits`: the values of
 * DEFINE and TEMPLATE parameters, never LAUNCH_ONLY ones, so configurations sharing one
 * compile share it. */
static uint64_t compile_hash(const cucore_tune_space *s, const size_t *digits) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < s->nparams; i++) {
    const cc_tparam *p = &s->params[i];
    if (p->resolved == CUCORE_TUNE_PARAM_LAUNCH_ONLY) continue;
    h = fnv(h, (const char *)&i, sizeof i);
    h = fnv(h, p->c_text[digits[i]], strlen(p->c_text[digits[i]]) + 1);
  }
  return h;
}

int cc_tune_raw(const cucore_tune_space *s, uint64_t *raw) {
  uint64_t n = 1;
  for (size_t i = 0; i < s->nparams; i++)
    if (__builtin_mul_overflow(n, (uint64_t)s->params[i].n, &n)) return -1;
  *raw = n;
  return 0;
}

void cc_tune_digits(const cucore_tune_space *s, uint64_t index, size_t *digits) {
  for (size_t k = s->nparams; k-- > 0;) {
    digits[k] = (size_t)(index % s->params[k].n);
    index /= s->params[k].n;
  }
}

void cc_tune_values(const cucore_tune_space *s, uint64_t index, cc_tval *vals, size_t *digits) {
  for (size_t k = s->nparams; k-- > 0;) {
    size_t d = (size_t)(index % s->params[k].n);
    index /= s->params[k].n;
    vals[k] = s->params[k].val[d];
    if (digits) digits[k] = d;
  }
}

/* A verdict and its reason (c NULL: neither is wanted, as when counting). Reasons are made of
 * bounded parts only (numbers, a slot's name, an evaluator's message naming a column, never a
 * name, a value or an expression's text), so they always fit; what they refer to is found by
 * number (the restriction, the slot). Returns -1. */
static int reject(cucore_tune_config *c, cucore_tune_verdict v, const char *fmt, const char *a,
                  const char *b) {
  if (!c) return -1;
  c->verdict = v;
  cc_format_field(c->reason, sizeof c->reason, fmt, a, b);
  return -1;
}

int cc_tune_check_restriction(const cucore_tune_space *s, size_t i, const cc_tval *vals,
                              cucore_tune_config *c) {
  char head[64], *why = NULL, **whyp = c ? &why : NULL;
  cc_tval r;
  if (c) c->restriction = (uint32_t)(i + 1);
  if (cc_expr_eval(&s->restr[i], vals, &r, whyp) < 0) {
    if (!c) return 2;
    c->restriction_failed = 1;
    snprintf(head, sizeof head, "restriction %zu", i + 1);
    reject(c, CUCORE_TUNE_RESTRICTED, "%s could not be evaluated: %s", head,
           why ? why : "out of memory");
    free(why);
    return 2;
  }
  if (cc_tval_truthy(r)) return 0;
  if (c) {
    snprintf(head, sizeof head, "restriction %zu", i + 1);
    reject(c, CUCORE_TUNE_RESTRICTED, "%s is false%s", head, "");
  }
  return 1;
}

static int check_restrictions(const cucore_tune_space *s, const cc_tval *vals,
                              cucore_tune_config *c) {
  for (size_t i = 0; i < s->nrestr; i++)
    if (cc_tune_check_restriction(s, i, vals, c)) return -1;
  c->restriction = 0;
  return 0;
}

static const char *const AXIS[3] = {"x", "y", "z"};

/* The name of what is evaluated: `name`, or "name.x" for axis 0..2 (built only for a reason). */
static const char *what_of(char buf[48], const char *name, int axis) {
  if (axis < 0) return name;
  snprintf(buf, 48, "%s.%s", name, AXIS[axis]);
  return buf;
}

/* Evaluates an expression that must give a whole number >= lo; `name` and `axis` name it in
 * a reason. */
static int eval_whole(const cc_expr *e, const cc_tval *vals, int64_t lo, const char *name, int axis,
                      int64_t *out, cucore_tune_config *c) {
  char *why = NULL, w[48], num[64];
  cc_tval v;
  if (cc_expr_eval(e, vals, &v, c ? &why : NULL) < 0) {
    reject(c, CUCORE_TUNE_BAD_LAUNCH, "%s: %s", what_of(w, name, axis),
           why ? why : "out of memory");
    free(why);
    return -1;
  }
  if (!cc_tval_is_num(v))
    return reject(c, CUCORE_TUNE_BAD_LAUNCH, "%s is a string, not a whole number%s",
                  c ? what_of(w, name, axis) : "", "");
  if (!cc_tval_is_integral(v) && (v.d != floor(v.d) || fabs(v.d) > 9e18)) {
    if (c) snprintf(num, sizeof num, "%.6g", v.d);
    return reject(c, CUCORE_TUNE_BAD_LAUNCH, "%s is %s, not a whole number",
                  c ? what_of(w, name, axis) : "", num);
  }
  *out = cc_tval_is_integral(v) ? v.i : (int64_t)v.d;
  if (*out < lo) {
    if (c) snprintf(num, sizeof num, "%lld, below %lld", (long long)*out, (long long)lo);
    return reject(c, CUCORE_TUNE_BAD_LAUNCH, "%s is %s", c ? what_of(w, name, axis) : "", num);
  }
  return 0;
}

/* The parameter that is block dimension d (no block expression), or -1. */
static int block_param(const cucore_tune_space *s, int d) {
  const char *name = cc_tune_block_name(s, d);
  return cc_tune_find_param((void *)s, name, strlen(name));
}

static int block_dims(const cucore_tune_space *s, const cc_tval *vals, int64_t b[3],
                      cucore_tune_config *c) {
  char w[48];
  const cc_texprs *x = &s->slot[CUCORE_TUNE_BLOCK];
  for (int d = 0; d < 3; d++) {
    b[d] = d == 0 && x->n == 0 ? 256 : 1;
    if (x->n > d && eval_whole(&x->e[d], vals, 1, "block", d, &b[d], c) < 0) return -1;
    if (x->n > 0) continue;
    int p = block_param(s, d);
    if (p < 0) continue;
    if (!cc_tval_is_integral(vals[p]) || vals[p].i < 1)
      return reject(c, CUCORE_TUNE_BAD_LAUNCH,
                    "%s (the block-size parameter of that axis) is %s, not a positive integer",
                    what_of(w, "block", d),
                    !cc_tval_is_num(vals[p])       ? "a string"
                    : cc_tval_is_integral(vals[p]) ? "below 1"
                                                   : "a real");
    b[d] = vals[p].i;
  }
  return 0;
}

static int grid_from_problem(const cucore_tune_space *s, const cc_tval *vals, int d,
                             const int64_t b[3], int64_t *g, cucore_tune_config *c) {
  char w[48];
  const cc_texprs *ps = &s->slot[CUCORE_TUNE_PROBLEM_SIZE];
  const cc_texprs *dv = &s->slot[CUCORE_TUNE_GRID_DIV_X + d];
  int64_t size = 1, div = 1, f;
  if (ps->n > d && eval_whole(&ps->e[d], vals, 1, "problem_size", d, &size, c) < 0) return -1;
  if (c) snprintf(w, sizeof w, "grid_div_%s", AXIS[d]);
  for (int i = 0; i < dv->n; i++) {
    if (eval_whole(&dv->e[i], vals, 1, c ? w : "", -1, &f, c) < 0) return -1;
    if (__builtin_mul_overflow(div, f, &div))
      return reject(c, CUCORE_TUNE_BAD_LAUNCH, "%s%s overflows", w, "");
  }
  if (dv->n == 0) div = b[d];
  *g = size / div + (size % div != 0);
  return 0;
}

static int grid_dims(const cucore_tune_space *s, const cc_tval *vals, const int64_t b[3],
                     int64_t g[3], cucore_tune_config *c) {
  const cc_texprs *x = &s->slot[CUCORE_TUNE_GRID];
  for (int d = 0; d < 3; d++) {
    g[d] = 1;
    if (x->n > d && eval_whole(&x->e[d], vals, 1, "grid", d, &g[d], c) < 0) return -1;
    if (x->n == 0 && s->slot[CUCORE_TUNE_PROBLEM_SIZE].n > 0 &&
        grid_from_problem(s, vals, d, b, &g[d], c) < 0)
      return -1;
  }
  return 0;
}

/* A limit passed: "WHAT = V, ARCH allows MAX" (texts built only when one is). */
static int over(cucore_tune_config *c, const char *arch, const char *what, int axis, int64_t v,
                int64_t max, const char *unit) {
  char a[128], l[96], w[48];
  if (!c) return -1;
  if (axis >= 0)
    snprintf(a, sizeof a, "%s = %lld", what_of(w, what, axis), (long long)v);
  else
    snprintf(a, sizeof a, what, (long long)v);
  snprintf(l, sizeof l, "%s allows %lld%s", arch, (long long)max, unit);
  return reject(c, CUCORE_TUNE_ARCH_LIMIT, "%s, %s", a, l);
}

static int check_limits(const cucore_tune_space *s, const int64_t b[3], const int64_t g[3],
                        int64_t smem, cucore_tune_config *c) {
  static const int64_t bmax[3] = {1024, 1024, 64}, gmax[3] = {2147483647, 65535, 65535};
  const char *arch = s->has_limits && s->limits.name ? s->limits.name : "CUDA";
  int64_t threads = b[0] * b[1] * b[2];
  int64_t tmax = s->has_limits ? s->limits.max_threads_per_block : 1024;
  for (int d = 0; d < 3; d++) {
    if (b[d] > bmax[d]) return over(c, arch, "block", d, b[d], bmax[d], "");
    if (g[d] > gmax[d]) return over(c, arch, "grid", d, g[d], gmax[d], "");
  }
  if (threads > tmax) return over(c, arch, "a block of %lld threads", -1, threads, tmax, "");
  int64_t smax = s->has_limits ? s->limits.shared_per_block_optin : INT64_MAX;
  if (smem > smax)
    return over(c, arch, "%lld bytes of dynamic shared memory", -1, smem, smax, " per block");
  return 0;
}

int cc_tune_check_launch(const cucore_tune_space *s, const cc_tval *vals, cucore_tune_config *c) {
  int64_t b[3], g[3], smem = 0;
  if (block_dims(s, vals, b, c) < 0 || grid_dims(s, vals, b, g, c) < 0) return 1;
  const cc_texprs *x = &s->slot[CUCORE_TUNE_SMEM];
  if (x->n > 0 && eval_whole(&x->e[0], vals, 0, "smem", -1, &smem, c) < 0) return 1;
  for (int d = 0; c && d < 3; d++) {
    c->block[d] = b[d] > UINT32_MAX ? UINT32_MAX : (uint32_t)b[d];
    c->grid[d] = g[d] > UINT32_MAX ? UINT32_MAX : (uint32_t)g[d];
  }
  if (c) c->smem = (uint64_t)smem;
  return check_limits(s, b, g, smem, c) < 0 ? 2 : 0;
}

int cc_tune_launch_uses(const cucore_tune_space *s, size_t p) {
  for (int k = 0; k < CC_TUNE_SLOTS; k++)
    for (int i = 0; i < s->slot[k].n; i++)
      if (cc_expr_uses(&s->slot[k].e[i], (int)p)) return 1;
  if (s->slot[CUCORE_TUNE_BLOCK].n > 0) return 0;
  for (int d = 0; d < 3; d++)
    if (block_param(s, d) == (int)p) return 1;
  return 0;
}

/* The whole check of one configuration; vals and digits have nparams entries. */
static void config_eval(const cucore_tune_space *s, uint64_t index, cc_tval *vals, size_t *digits,
                        cucore_tune_config *c) {
  memset(c, 0, sizeof *c);
  c->index = index;
  cc_tune_values(s, index, vals, digits);
  c->compile_hash = compile_hash(s, digits);
  if (check_restrictions(s, vals, c) == 0) cc_tune_check_launch(s, vals, c);
}

static cucore_status scratch(const cucore_tune_space *s, cc_tval **vals, size_t **digits) {
  size_t n = s->nparams ? s->nparams : 1;
  *vals = cc_calloc(n, sizeof **vals, "configuration values");
  *digits = cc_calloc(n, sizeof **digits, "configuration values");
  if (*vals && *digits) return CUCORE_OK;
  free(*vals);
  free(*digits);
  *vals = NULL;
  *digits = NULL;
  return CUCORE_HOST_OUT_OF_MEMORY;
}

static cucore_status check_index(const cucore_tune_space *s, uint64_t index, const char *fn) {
  uint64_t raw;
  if (cc_tune_raw(s, &raw) < 0)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: the space's size does not fit 64 bits", fn);
  if (index >= raw)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: configuration %llu of a space of %llu", fn,
                   (unsigned long long)index, (unsigned long long)raw);
  return CUCORE_OK;
}

cucore_status cucore_tune_space_get_config(const cucore_tune_space *s, uint64_t index,
                                           cucore_tune_config *out) {
  cc_begin();
  CC_CHECK_HANDLE(s, TUNE_SPACE, "cucore_tune_space_get_config", "space");
  CC_CHECK_ARG(out, "cucore_tune_space_get_config", "out");
  cucore_status st = check_index(s, index, "cucore_tune_space_get_config");
  cc_tval *vals;
  size_t *digits;
  if (st == CUCORE_OK) st = scratch(s, &vals, &digits);
  if (st != CUCORE_OK) return st;
  config_eval(s, index, vals, digits, out);
  free(vals);
  free(digits);
  return CUCORE_OK;
}

cucore_status cucore_tune_space_get_size(const cucore_tune_space *s, uint64_t *raw) {
  cc_begin();
  CC_CHECK_HANDLE(s, TUNE_SPACE, "cucore_tune_space_get_size", "space");
  CC_CHECK_ARG(raw, "cucore_tune_space_get_size", "raw");
  if (cc_tune_raw(s, raw) < 0)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "cucore_tune_space_get_size: the product of %zu "
                   "parameters' value counts does not fit 64 bits",
                   s->nparams);
  return CUCORE_OK;
}
