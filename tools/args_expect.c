/* args_expect.c -- --expect ARG=VALUE (`cucore run`, and `cucore tune`'s check): an output (a
 * buffer by its argument number, "3.1" for one inside a struct, or a --read-global variable by
 * name) compared with a number, iota, a {list} or a file. Floating point is compared as
 * numpy.allclose does, |got - want| <= atol + rtol * |want| (rtol 1e-5 and atol 1e-8 unless
 * given), NaN equal to NaN; integers exactly unless a tolerance is given. */
#include "args_spec.h"

#include <stdlib.h>
#include <string.h>

/* The values compared: a buffer or a global read. */
typedef struct target {
  args_elem type;
  size_t count;
  const unsigned char *data;
  int ndim;
  const uint64_t *shape;
} target;

static int find_target(const args_set *o, const char *name, target *t) {
  for (int i = 0; i < o->nbufs; i++)
    if (strcmp(o->bufs[i].label, name) == 0) {
      *t = (target){o->bufs[i].type, o->bufs[i].count, o->bufs[i].host, o->bufs[i].ndim,
                    o->bufs[i].shape};
      return 1;
    }
  for (int i = 0; i < o->nreads; i++)
    if (strcmp(o->reads[i].name, name) == 0) {
      *t = (target){o->reads[i].type, o->reads[i].count, o->reads[i].host, 1, NULL};
      return 1;
    }
  return 0;
}

int args_expect_target_known(const args_set *o, const char *name) {
  target t;
  return find_target(o, name, &t);
}

/* The expected values of `type`, malloc'd (*count elements; 0: as many as a list or file
 * holds); NULL after printing why. */
static unsigned char *expected(const args_expect *e, args_elem type, size_t *count) {
  unsigned char *data = NULL;
  if (e->init == ARGS_INIT_FILE) {
    int ndim = 1;
    uint64_t shape[ARGS_MAX_DIMS];
    char what[300];
    snprintf(what, sizeof what, "--expect `%s`", e->text);
    if (args_data_read(what, e->value_text + 1, type, count, &data, &ndim, shape)) return NULL;
    return data;
  }
  args_cursor c = {"--expect", e->text, e->value_text, e->value_text + strlen(e->value_text), NULL,
                   "",         0};
  if (args_fill_values(&c, e->value_text, strlen(e->value_text), type, count, &data, NULL, NULL))
    return NULL;
  return data;
}

/* Before the launch: the file read, the value parsed and the count checked against the
 * target; what can be made now is kept for the comparison. A --read-global of the whole
 * variable has no count yet: a list or file is kept with its own count (compared after the
 * run), a number is only parsed. */
static int prepare(args_expect *e, const target *t) {
  if (e->init == ARGS_INIT_FILE) cli_input_add(e->value_text + 1);
  size_t count = t->count ? t->count : 1;
  if (!t->count && e->init == ARGS_INIT_IOTA) return 0;
  if (!t->count && e->init != ARGS_INIT_VALUE) count = 0;
  unsigned char *want = expected(e, t->type, &count);
  if (!want) return CLI_EXIT_USAGE;
  if (!t->count && e->init == ARGS_INIT_VALUE) {
    free(want);
    return 0;
  }
  e->values = want;
  e->values_count = count;
  return 0;
}

int args_expect_prepare(args_set *o) {
  for (int i = 0; i < o->nexpects; i++) {
    target t;
    if (!find_target(o, o->expects[i].target, &t)) continue; /* refused when parsed */
    int rc = prepare(&o->expects[i], &t);
    if (rc) return rc;
  }
  return 0;
}

/* The values `e` expects of `t`: those kept before the launch, or made now. NULL after
 * printing why. */
static unsigned char *wanted(args_expect *e, const target *t) {
  size_t count = t->count;
  if (!e->values) return expected(e, t->type, &count);
  unsigned char *want = e->values;
  e->values = NULL;
  if (e->values_count == t->count) return want;
  fprintf(stderr, "cucore %s: --expect %s: %zu values were given; `%s` holds %zu\n", cli_verb_name,
          e->text, e->values_count, e->target, t->count);
  free(want);
  return NULL;
}

/* Compares target `t` with `want` (cucore_compare_elements: integers exactly unless a tolerance
 * was given) and keeps in `e` the mismatches, the largest errors and the first few shown. */
static int compare(const args_set *o, args_expect *e, const target *t, const unsigned char *want) {
  size_t bad[ARGS_EXPECT_SHOWN];
  cucore_compare_result m;
  cucore_status st = cucore_compare_elements(t->data, want, t->count, args_elem_dtype(t->type),
                                             (size_t)args_elem_sizes[t->type],
                                             o->has_rtol ? o->rtol : -1, o->has_atol ? o->atol : -1,
                                             bad, ARGS_EXPECT_SHOWN, &m);
  if (st != CUCORE_OK) {
    fprintf(stderr, "cucore %s: --expect %s: %s\n", cli_verb_name, e->text, cucore_last_error());
    return -1;
  }
  e->mismatches = m.mismatches;
  e->max_abs_err = m.max_abs_err;
  e->max_rel_err = m.max_rel_err;
  for (e->shown = 0; (size_t)e->shown < m.mismatches && e->shown < ARGS_EXPECT_SHOWN; e->shown++) {
    size_t k = bad[e->shown];
    e->bad_index[e->shown] = k;
    args_value_format(t->data, t->type, k, e->got[e->shown], sizeof e->got[0]);
    args_value_format(want, t->type, k, e->want[e->shown], sizeof e->want[0]);
  }
  return 0;
}

int args_expect_check(args_set *o) {
  int failed = 0;
  for (int i = 0; i < o->nexpects; i++) {
    args_expect *e = &o->expects[i];
    target t;
    if (!find_target(o, e->target, &t)) {
      fprintf(stderr, "cucore %s: --expect %s: no buffer argument or --read-global is `%s`\n",
              cli_verb_name, e->text, e->target);
      return -1;
    }
    unsigned char *want = wanted(e, &t);
    if (!want) return -1;
    e->count = t.count;
    e->mismatches = 0;
    e->shown = 0;
    e->max_abs_err = e->max_rel_err = 0;
    e->ndim = t.shape && t.ndim > 1 ? t.ndim : 1;
    if (t.shape && t.ndim > 1) memcpy(e->shape, t.shape, (size_t)t.ndim * sizeof *t.shape);
    e->exact = !args_elem_is_float(t.type) && !o->has_rtol && !o->has_atol;
    int rc = compare(o, e, &t, want);
    free(want);
    if (rc) return -1;
    if (e->mismatches) failed++;
  }
  return failed;
}
