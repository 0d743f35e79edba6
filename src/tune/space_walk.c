/*
 * space_walk.c -- a space walked without listing it. A configuration is a path down a tree
 * whose depth d binds one parameter; each check (restriction i in order, then the launch
 * within the limits) is evaluated at the depth where the last parameter it reads is bound, so
 * a check that fails skips the whole subtree below it, and a subtree with no check left below
 * is counted by multiplication. Kernel Tuner's convolution example (3 145 728 raw
 * configurations) is counted in well under a second this way, where evaluating every
 * configuration took 11 s.
 *
 * Two orders of the parameters: the space's own (the walk meets configurations in index order,
 * a settled subtree is an interval of indices), and for the counts, the compiled parameters
 * first, so that a distinct compile is a prefix of the path and the distinct compiles are
 * counted without remembering any.
 */
#include "tune/space.h"

#include <stdlib.h>
#include <string.h>

#define NONE SIZE_MAX /* no check failed */

/* What made a configuration fail (the counts' stages). */
enum { FAIL_FALSE = 1, FAIL_ERROR, FAIL_LAUNCH, FAIL_LIMIT };

struct cc_twalk {
  const cucore_tune_space *s;
  size_t n;         /* parameters */
  size_t nchecks;   /* restrictions, then the launch */
  size_t *order;    /* order[d]: the parameter bound at depth d */
  size_t *first;    /* the checks complete at depth d: group[first[d] .. first[d + 1]) */
  size_t *group;    /* check numbers, ascending within a depth */
  size_t *pending;  /* pending[d]: the lowest check not complete at depth d (NONE: none) */
  uint64_t *below;  /* below[d]: configurations under one node of depth d */
  uint64_t *stride; /* stride[p]: parameter p's place value in the index */
  size_t ncompiled; /* with compile_first: parameters at depths 0..ncompiled-1 compile */
  cc_tval *vals;    /* by parameter */
  size_t *digit;    /* by depth: the value bound */
  size_t *fail;     /* by depth: the lowest failed check so far (NONE: none) */
  int *why;         /* by depth: FAIL_* of fail[d] */
};

static size_t size_at(const cc_twalk *w, size_t d) { return w->s->params[w->order[d]].n; }

/* 1 + the deepest depth of a parameter check k reads (0: it reads none). */
static size_t done_depth(const cc_twalk *w, const size_t *pos, size_t k) {
  size_t done = 0;
  for (size_t p = 0; p < w->n; p++) {
    int uses = k < w->s->nrestr ? cc_expr_uses(&w->s->restr[k], (int)p)
                                : cc_tune_launch_uses(w->s, p);
    if (uses && pos[p] + 1 > done) done = pos[p] + 1;
  }
  return done;
}

/* The parameters' order: the space's, or the compiled ones first. */
static void plan_order(cc_twalk *w, int compile_first) {
  size_t d = 0;
  for (int pass = 0; pass < 2; pass++)
    for (size_t p = 0; p < w->n; p++) {
      int launch_only = w->s->params[p].resolved == CUCORE_TUNE_PARAM_LAUNCH_ONLY;
      if (!compile_first ? pass == 0 : launch_only == pass) w->order[d++] = p;
    }
  for (d = 0; compile_first && d < w->n; d++)
    if (w->s->params[w->order[d]].resolved != CUCORE_TUNE_PARAM_LAUNCH_ONLY) w->ncompiled = d + 1;
}

/* Each check's depth, grouped by depth (a counting sort, so ascending within one). */
static void plan_checks(cc_twalk *w, size_t *pos) {
  for (size_t d = 0; d < w->n; d++) pos[w->order[d]] = d;
  size_t *at = w->digit; /* scratch until the walk starts */
  memset(w->first, 0, (w->n + 2) * sizeof *w->first);
  for (size_t k = 0; k < w->nchecks; k++) w->first[(at[k] = done_depth(w, pos, k)) + 1]++;
  for (size_t d = 0; d <= w->n; d++) w->first[d + 1] += w->first[d];
  memcpy(pos, w->first, (w->n + 1) * sizeof *pos); /* pos reused: the next free slot */
  for (size_t k = 0; k < w->nchecks; k++) w->group[pos[at[k]]++] = k;
  for (size_t d = w->n + 1; d-- > 0;) {
    w->pending[d] = d == w->n ? NONE : w->pending[d + 1];
    for (size_t i = w->first[d + 1]; d < w->n && i < w->first[d + 2]; i++)
      if (w->group[i] < w->pending[d]) w->pending[d] = w->group[i];
  }
  w->below[w->n] = 1;
  for (size_t d = w->n; d-- > 0;) w->below[d] = w->below[d + 1] * size_at(w, d);
  uint64_t st = 1;
  for (size_t p = w->n; p-- > 0;) w->stride[p] = st, st *= w->s->params[p].n;
}

void cc_twalk_close(cc_twalk *w) {
  if (!w) return;
  free(w->order);
  free(w->first);
  free(w->group);
  free(w->pending);
  free(w->below);
  free(w->stride);
  free(w->vals);
  free(w->digit);
  free(w->fail);
  free(w->why);
  free(w);
}

cucore_status cc_twalk_open(const cucore_tune_space *s, int compile_first, cc_twalk **out) {
  uint64_t raw;
  *out = NULL;
  if (cc_tune_raw(s, &raw) < 0)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "the space's %zu parameters make more than 2^64 "
                   "configurations",
                   s->nparams);
  cc_twalk *w = cc_calloc(1, sizeof *w, "a space walk");
  if (!w) return CUCORE_HOST_OUT_OF_MEMORY;
  w->s = s;
  w->n = s->nparams;
  w->nchecks = s->nrestr + 1;
  size_t n1 = w->n + 2, nc = w->nchecks > n1 ? w->nchecks : n1;
  w->order = cc_calloc(n1, sizeof *w->order, "a space walk");
  w->first = cc_calloc(n1 + 1, sizeof *w->first, "a space walk");
  w->group = cc_calloc(nc, sizeof *w->group, "a space walk");
  w->pending = cc_calloc(n1, sizeof *w->pending, "a space walk");
  w->below = cc_calloc(n1, sizeof *w->below, "a space walk");
  w->stride = cc_calloc(n1, sizeof *w->stride, "a space walk");
  w->vals = cc_calloc(n1, sizeof *w->vals, "a space walk");
  w->digit = cc_calloc(nc, sizeof *w->digit, "a space walk");
  w->fail = cc_calloc(n1, sizeof *w->fail, "a space walk");
  w->why = cc_calloc(n1, sizeof *w->why, "a space walk");
  size_t *pos = cc_calloc(nc, sizeof *pos, "a space walk");
  if (!w->order || !w->first || !w->group || !w->pending || !w->below || !w->stride || !w->vals ||
      !w->digit || !w->fail || !w->why || !pos) {
    free(pos);
    cc_twalk_close(w);
    return CUCORE_HOST_OUT_OF_MEMORY;
  }
  plan_order(w, compile_first);
  plan_checks(w, pos);
  free(pos);
  *out = w;
  return CUCORE_OK;
}

/* Check k on the bound values: 0 passed, else FAIL_*. */
static int run_check(cc_twalk *w, size_t k) {
  if (k < w->s->nrestr) {
    int r = cc_tune_check_restriction(w->s, k, w->vals, NULL);
    return r == 0 ? 0 : r == 1 ? FAIL_FALSE : FAIL_ERROR;
  }
  int r = cc_tune_check_launch(w->s, w->vals, NULL);
  return r == 0 ? 0 : r == 1 ? FAIL_LAUNCH : FAIL_LIMIT;
}

/* The checks complete at depth d run (the ones below the lowest failed so far), from the state
 * of depth d - 1 (or none at the root). */
static void check_depth(cc_twalk *w, size_t d) {
  w->fail[d] = d ? w->fail[d - 1] : NONE;
  w->why[d] = d ? w->why[d - 1] : 0;
  for (size_t i = w->first[d]; i < w->first[d + 1]; i++) {
    size_t k = w->group[i];
    if (k >= w->fail[d]) break; /* ascending: nothing lower is left here */
    int r = run_check(w, k);
    if (r) w->fail[d] = k, w->why[d] = r;
  }
}

/* Binds value digit[d] of the parameter at depth d, then runs the checks of depth d + 1. */
static void bind(cc_twalk *w, size_t d) {
  const cc_tparam *p = &w->s->params[w->order[d]];
  w->vals[w->order[d]] = p->val[w->digit[d]];
  check_depth(w, d + 1);
}

/* 1 when nothing below depth d can change what is known there: no check left, or (`settle_fail`)
 * none that would come before the one that failed. */
static int settled(const cc_twalk *w, size_t d, int settle_fail) {
  if (w->fail[d] != NONE) return settle_fail ? w->pending[d] >= w->fail[d] : 1;
  return w->pending[d] == NONE;
}

/* The next node after a settled one at depth *d: the deepest depth with a value left advanced
 * and bound. 0 when the walk is over. */
static int next_node(cc_twalk *w, size_t *d) {
  while (*d > 0) {
    size_t up = *d - 1;
    if (++w->digit[up] < size_at(w, up)) {
      bind(w, up);
      return 1;
    }
    *d = up;
  }
  return 0;
}

/* The index of the first configuration under the node at depth d (values bound above, zeros
 * below). */
static uint64_t node_index(const cc_twalk *w, size_t d) {
  uint64_t index = 0;
  for (size_t i = 0; i < d; i++) index += w->digit[i] * w->stride[w->order[i]];
  return index;
}

/* ---- the counts ------------------------------------------------------------------------- */

typedef struct count_state {
  cucore_tune_counts *out;
  int compile_counted; /* the current compile prefix has a runnable configuration counted */
} count_state;

/* A settled node of depth d counted: below[d] configurations of one stage. */
static void count_visit(cc_twalk *w, size_t d, count_state *cs) {
  cucore_tune_counts *o = cs->out;
  uint64_t block = w->below[d];
  switch (w->fail[d] == NONE ? 0 : w->why[d]) {
  case 0:
    o->runnable += block;
    if (d <= w->ncompiled) {
      o->compiles += block / w->below[w->ncompiled];
    } else if (!cs->compile_counted) {
      o->compiles++;
    }
    cs->compile_counted = d > w->ncompiled;
    break;
  case FAIL_FALSE: o->restricted += block; break;
  case FAIL_ERROR: {
    uint64_t first = node_index(w, d);
    if (o->restriction_errors == 0 || first < o->first_restriction_error)
      o->first_restriction_error = first;
    o->restriction_errors += block;
    break;
  }
  case FAIL_LAUNCH: o->bad_launch += block; break;
  default: o->arch_limit += block; break;
  }
}

/* Every configuration counted by its stage, the compiled parameters first: a node at depth <=
 * ncompiled settles whole compiles, and a new compile starts whenever a compiled parameter's
 * value changes. A failed node is settled only when no check before the failed one is left
 * below it (the stage is the first check that fails). */
static void count_walk(cc_twalk *w, count_state *cs) {
  size_t d = 0;
  check_depth(w, 0);
  for (;;) {
    while (!settled(w, d, 1)) {
      w->digit[d] = 0;
      bind(w, d);
      if (d < w->ncompiled) cs->compile_counted = 0;
      d++;
    }
    count_visit(w, d, cs);
    for (;;) { /* the next node, noting a new compile prefix */
      if (d == 0) return;
      size_t up = d - 1;
      if (++w->digit[up] < size_at(w, up)) {
        if (up < w->ncompiled) cs->compile_counted = 0;
        bind(w, up);
        break;
      }
      d = up;
    }
  }
}

cucore_status cucore_tune_space_count(const cucore_tune_space *s, cucore_tune_counts *out) {
  cc_begin();
  CC_CHECK_HANDLE(s, TUNE_SPACE, "cucore_tune_space_count", "space");
  CC_CHECK_ARG(out, "cucore_tune_space_count", "out");
  memset(out, 0, sizeof *out);
  cc_twalk *w = NULL;
  cucore_status st = cucore_tune_space_get_size(s, &out->raw);
  if (st == CUCORE_OK) st = cc_twalk_open(s, 1, &w);
  if (st != CUCORE_OK) return st;
  count_state cs = {out, 0};
  count_walk(w, &cs);
  out->after_restrictions = out->raw - out->restricted - out->restriction_errors;
  cc_twalk_close(w);
  return CUCORE_OK;
}

/* ---- runnable configurations in index order ------------------------------------------- */

int cc_twalk_intervals(cc_twalk *w, uint64_t from, int (*interval)(uint64_t, uint64_t, void *),
                       void *user) {
  size_t d = 0;
  check_depth(w, 0);
  int tight = from > 0;
  for (;;) {
    while (!settled(w, d, 0)) {
      w->digit[d] = tight ? (size_t)(from / w->stride[w->order[d]] % size_at(w, d)) : 0;
      bind(w, d);
      d++;
    }
    if (w->fail[d] == NONE) {
      uint64_t first = node_index(w, d), last = first + w->below[d];
      if (last > from) {
        int stop = interval(first > from ? first : from, last, user);
        if (stop) return stop;
      }
    }
    tight = 0;
    if (!next_node(w, &d)) return 0;
  }
}

int cc_twalk_check(cc_twalk *w, uint64_t index) {
  check_depth(w, 0);
  size_t d = 0;
  for (; d < w->n && w->fail[d] == NONE; d++) {
    w->digit[d] = (size_t)(index / w->stride[w->order[d]] % size_at(w, d));
    bind(w, d);
  }
  /* a check that failed above the bottom ends the walk there: fail[n] is the last call's */
  return w->fail[d] == NONE;
}

static int first_interval(uint64_t first, uint64_t last, void *user) {
  (void)last;
  *(uint64_t *)user = first;
  return 1;
}

cucore_status cucore_tune_space_next_runnable(const cucore_tune_space *s, uint64_t from,
                                              uint64_t *index) {
  cc_begin();
  const char *fn = "cucore_tune_space_next_runnable";
  CC_CHECK_HANDLE(s, TUNE_SPACE, fn, "space");
  CC_CHECK_ARG(index, fn, "index");
  uint64_t raw = 0, found = 0;
  cucore_status st = cucore_tune_space_get_size(s, &raw);
  cc_twalk *w = NULL;
  if (st == CUCORE_OK && from < raw) st = cc_twalk_open(s, 0, &w);
  if (st != CUCORE_OK) return st;
  int any = w && cc_twalk_intervals(w, from, first_interval, &found);
  cc_twalk_close(w);
  if (!any)
    return cc_fail(CUCORE_NOT_FOUND, "%s: no runnable configuration from %llu of %llu", fn,
                   (unsigned long long)from, (unsigned long long)raw);
  *index = found;
  return CUCORE_OK;
}
