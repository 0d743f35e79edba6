/*
 * space_config.c -- one configuration of a space before compiling: its values, its
 * restrictions, its launch (Kernel Tuner's conventions), the architecture's limits and the hash
 * that groups configurations sharing one compile; and the counts of a whole space, stage by
 * stage.
 */
#include "tune/space.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CC_TUNE_COUNT_MAX (1ull << 32)

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

/* A verdict and its reason. Reasons are made of bounded parts only (numbers, a slot's name,
 * an evaluator's message naming a column, never a name, a value or an expression's text), so
 * they always fit; what they refer to is found by number (the restriction, the slot). */
static int reject(cucore_tune_config *c, cucore_tune_verdict v, const char *fmt, const char *a,
                  const char *b) {
  c->verdict = v;
  snprintf(c->reason, sizeof c->reason, fmt, a, b);
  return -1;
}

static int check_restrictions(const cucore_tune_space *s, const cc_tval *vals,
                              cucore_tune_config *c) {
  char head[64], *why = NULL;
  for (size_t i = 0; i < s->nrestr; i++) {
    cc_tval r;
    snprintf(head, sizeof head, "restriction %zu", i + 1);
    c->restriction = (uint32_t)(i + 1);
    if (cc_expr_eval(&s->restr[i], vals, &r, &why) < 0) {
      c->restriction_failed = 1;
      reject(c, CUCORE_TUNE_RESTRICTED, "%s could not be evaluated: %s", head,
             why ? why : "out of memory");
      free(why);
      return -1;
    }
    if (!cc_tval_truthy(r)) return reject(c, CUCORE_TUNE_RESTRICTED, "%s is false%s", head, "");
  }
  c->restriction = 0;
  return 0;
}

/* Evaluates an expression that must give a whole number >= lo. */
static int eval_whole(const cc_expr *e, const cc_tval *vals, int64_t lo, const char *what,
                      int64_t *out, cucore_tune_config *c) {
  char *why = NULL;
  cc_tval v;
  if (cc_expr_eval(e, vals, &v, &why) < 0) {
    reject(c, CUCORE_TUNE_BAD_LAUNCH, "%s: %s", what, why ? why : "out of memory");
    free(why);
    return -1;
  }
  if (!cc_tval_is_num(v))
    return reject(c, CUCORE_TUNE_BAD_LAUNCH, "%s is a string, not a whole number%s", what, "");
  if (!cc_tval_is_integral(v) && (v.d != floor(v.d) || fabs(v.d) > 9e18)) {
    char num[64];
    snprintf(num, sizeof num, "%.6g", v.d);
    return reject(c, CUCORE_TUNE_BAD_LAUNCH, "%s is %s, not a whole number", what, num);
  }
  *out = cc_tval_is_integral(v) ? v.i : (int64_t)v.d;
  if (*out < lo) {
    char num[64];
    snprintf(num, sizeof num, "%lld, below %lld", (long long)*out, (long long)lo);
    return reject(c, CUCORE_TUNE_BAD_LAUNCH, "%s is %s", what, num);
  }
  return 0;
}

static const char *const AXIS[3] = {"x", "y", "z"};

static int block_dims(const cucore_tune_space *s, const cc_tval *vals, int64_t b[3],
                      cucore_tune_config *c) {
  char what[32];
  const cc_texprs *x = &s->slot[CUCORE_TUNE_BLOCK];
  for (int d = 0; d < 3; d++) {
    snprintf(what, sizeof what, "block.%s", AXIS[d]);
    b[d] = d == 0 && x->n == 0 ? 256 : 1;
    if (x->n > d && eval_whole(&x->e[d], vals, 1, what, &b[d], c) < 0) return -1;
    if (x->n > 0) continue;
    const char *name = cc_tune_block_name(s, d);
    int p = cc_tune_find_param((void *)s, name, strlen(name));
    if (p < 0) continue;
    if (!cc_tval_is_integral(vals[p]) || vals[p].i < 1)
      return reject(c, CUCORE_TUNE_BAD_LAUNCH,
                    "%s (the block-size parameter of that axis) is %s, not a positive integer",
                    what,
                    !cc_tval_is_num(vals[p])       ? "a string"
                    : cc_tval_is_integral(vals[p]) ? "below 1"
                                                   : "a real");
    b[d] = vals[p].i;
  }
  return 0;
}

static int grid_from_problem(const cucore_tune_space *s, const cc_tval *vals, int d,
                             const int64_t b[3], int64_t *g, cucore_tune_config *c) {
  char what[32];
  const cc_texprs *ps = &s->slot[CUCORE_TUNE_PROBLEM_SIZE];
  const cc_texprs *dv = &s->slot[CUCORE_TUNE_GRID_DIV_X + d];
  int64_t size = 1, div = 1, f;
  snprintf(what, sizeof what, "problem_size.%s", AXIS[d]);
  if (ps->n > d && eval_whole(&ps->e[d], vals, 1, what, &size, c) < 0) return -1;
  snprintf(what, sizeof what, "grid_div_%s", AXIS[d]);
  for (int i = 0; i < dv->n; i++) {
    if (eval_whole(&dv->e[i], vals, 1, what, &f, c) < 0) return -1;
    if (__builtin_mul_overflow(div, f, &div))
      return reject(c, CUCORE_TUNE_BAD_LAUNCH, "%s%s overflows", what, "");
  }
  if (dv->n == 0) div = b[d];
  *g = size / div + (size % div != 0);
  return 0;
}

static int grid_dims(const cucore_tune_space *s, const cc_tval *vals, const int64_t b[3],
                     int64_t g[3], cucore_tune_config *c) {
  char what[32];
  const cc_texprs *x = &s->slot[CUCORE_TUNE_GRID];
  for (int d = 0; d < 3; d++) {
    g[d] = 1;
    snprintf(what, sizeof what, "grid.%s", AXIS[d]);
    if (x->n > d && eval_whole(&x->e[d], vals, 1, what, &g[d], c) < 0) return -1;
    if (x->n == 0 && s->slot[CUCORE_TUNE_PROBLEM_SIZE].n > 0 &&
        grid_from_problem(s, vals, d, b, &g[d], c) < 0)
      return -1;
  }
  return 0;
}

static int check_limits(const cucore_tune_space *s, const int64_t b[3], const int64_t g[3],
                        int64_t smem, cucore_tune_config *c) {
  static const int64_t bmax[3] = {1024, 1024, 64}, gmax[3] = {2147483647, 65535, 65535};
  char a[96], l[96];
  const char *arch = s->has_limits && s->limits.name ? s->limits.name : "CUDA";
  int64_t threads = b[0] * b[1] * b[2];
  int64_t tmax = s->has_limits ? s->limits.max_threads_per_block : 1024;
  for (int d = 0; d < 3; d++) {
    snprintf(l, sizeof l, "%s allows %lld", arch, (long long)bmax[d]);
    snprintf(a, sizeof a, "block.%s = %lld", AXIS[d], (long long)b[d]);
    if (b[d] > bmax[d]) return reject(c, CUCORE_TUNE_ARCH_LIMIT, "%s, %s", a, l);
    snprintf(l, sizeof l, "%s allows %lld", arch, (long long)gmax[d]);
    snprintf(a, sizeof a, "grid.%s = %lld", AXIS[d], (long long)g[d]);
    if (g[d] > gmax[d]) return reject(c, CUCORE_TUNE_ARCH_LIMIT, "%s, %s", a, l);
  }
  snprintf(a, sizeof a, "a block of %lld threads", (long long)threads);
  snprintf(l, sizeof l, "%s allows %lld", arch, (long long)tmax);
  if (threads > tmax) return reject(c, CUCORE_TUNE_ARCH_LIMIT, "%s, %s", a, l);
  int64_t smax = s->has_limits ? s->limits.shared_per_block_optin : INT64_MAX;
  snprintf(a, sizeof a, "%lld bytes of dynamic shared memory", (long long)smem);
  snprintf(l, sizeof l, "%s allows %lld per block", arch, (long long)smax);
  if (smem > smax) return reject(c, CUCORE_TUNE_ARCH_LIMIT, "%s, %s", a, l);
  return 0;
}

static int launch(const cucore_tune_space *s, const cc_tval *vals, cucore_tune_config *c) {
  int64_t b[3], g[3], smem = 0;
  if (block_dims(s, vals, b, c) < 0 || grid_dims(s, vals, b, g, c) < 0) return -1;
  const cc_texprs *x = &s->slot[CUCORE_TUNE_SMEM];
  if (x->n > 0 && eval_whole(&x->e[0], vals, 0, "smem", &smem, c) < 0) return -1;
  for (int d = 0; d < 3; d++) {
    c->block[d] = b[d] > UINT32_MAX ? UINT32_MAX : (uint32_t)b[d];
    c->grid[d] = g[d] > UINT32_MAX ? UINT32_MAX : (uint32_t)g[d];
  }
  c->smem = (uint64_t)smem;
  return check_limits(s, b, g, smem, c);
}

/* The whole check of one configuration; vals and digits have nparams entries. */
static void config_eval(const cucore_tune_space *s, uint64_t index, cc_tval *vals, size_t *digits,
                        cucore_tune_config *c) {
  memset(c, 0, sizeof *c);
  c->index = index;
  cc_tune_values(s, index, vals, digits);
  c->compile_hash = compile_hash(s, digits);
  if (check_restrictions(s, vals, c) == 0) launch(s, vals, c);
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

/* Counts distinct hashes in an open-addressing set of `cap` slots (a power of two). */
static int hash_add(uint64_t *set, uint64_t cap, uint64_t h) {
  h |= 1; /* 0 marks an empty slot */
  for (uint64_t i = h & (cap - 1);; i = (i + 1) & (cap - 1)) {
    if (set[i] == h) return 0;
    if (set[i] == 0) return set[i] = h, 1;
  }
}

static void tally(cucore_tune_counts *o, const cucore_tune_config *c, uint64_t *set, uint64_t cap) {
  if (c->restriction_failed && o->restriction_errors++ == 0) o->first_restriction_error = c->index;
  switch (c->verdict) {
  case CUCORE_TUNE_RESTRICTED: o->restricted += !c->restriction_failed; break;
  case CUCORE_TUNE_BAD_LAUNCH: o->bad_launch++; break;
  case CUCORE_TUNE_ARCH_LIMIT: o->arch_limit++; break;
  default:
    o->runnable++;
    o->compiles += (uint64_t)hash_add(set, cap, c->compile_hash);
    break;
  }
}

cucore_status cucore_tune_space_count(const cucore_tune_space *s, cucore_tune_counts *out) {
  cc_begin();
  CC_CHECK_HANDLE(s, TUNE_SPACE, "cucore_tune_space_count", "space");
  CC_CHECK_ARG(out, "cucore_tune_space_count", "out");
  memset(out, 0, sizeof *out);
  cucore_status st = cucore_tune_space_get_size(s, &out->raw);
  if (st == CUCORE_OK && out->raw > CC_TUNE_COUNT_MAX)
    st = cc_fail(CUCORE_INVALID_ARGUMENT,
                 "cucore_tune_space_count: %llu configurations, more "
                 "than the 2^32 a count walks",
                 (unsigned long long)out->raw);
  uint64_t cap = 16;
  while (st == CUCORE_OK && cap < 2 * out->raw) cap *= 2;
  cc_tval *vals = NULL;
  size_t *digits = NULL;
  uint64_t *set = st == CUCORE_OK ? cc_calloc(cap, sizeof *set, "a count's hash set") : NULL;
  if (st == CUCORE_OK) st = set ? scratch(s, &vals, &digits) : CUCORE_HOST_OUT_OF_MEMORY;
  for (uint64_t i = 0; st == CUCORE_OK && i < out->raw; i++) {
    cucore_tune_config c;
    config_eval(s, i, vals, digits, &c);
    tally(out, &c, set, cap);
  }
  out->after_restrictions = out->raw - out->restricted - out->restriction_errors;
  free(set);
  free(vals);
  free(digits);
  return st;
}
