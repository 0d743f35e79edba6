/*
 * search_space.c -- a live space as a search domain (tune/search.h), without listing it: a
 * configuration is valid when the walk's checks pass (cc_twalk_check), and the r-th runnable
 * configuration comes from a rank index: the walk's intervals of runnable configurations
 * (runs of consecutive indices, as many as the restrictions cut the space into) with their
 * running counts, searched by bisection. Kernel Tuner's convolution space (3.1M raw, 1.87M
 * runnable) is a few thousand intervals. A space cut into more than RANK_MAX_INTERVALS has no
 * index; it is sampled by rejection (uniform raw indices, checked) instead. Also the public
 * sampling and neighbour queries over a space.
 */
#include "tune/search_space.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define RANK_MAX_INTERVALS ((size_t)1 << 22) /* 4M intervals: 64 MB of index */
#define REJECTION_TRIES 1000000              /* raw draws before a sample is given up */

#define GUIDE_MIN 64    /* intervals: fewer are searched whole */
#define GUIDE_MAX 65536 /* guide entries at most (512 KB) */

struct cc_tlive {
  const cucore_tune_space *space;
  cc_twalk *walk;
  uint64_t raw, runnable;
  uint64_t *first, *cum; /* interval k: [first[k], first[k] + cum[k+1] - cum[k]) */
  size_t n, cap_first, cap_cum;
  int indexed; /* 0: too many intervals, sampled by rejection */
  /* A guide to the rank index: guide[b] is the last interval whose running count is at most
   * b * step (nguide + 1 entries; NULL for a short index), so a rank is found by a binary
   * search over a few intervals instead of all of them (a space of millions: one cache miss
   * instead of twenty). */
  size_t *guide, nguide;
  uint64_t step;
  size_t *sizes, *offset, *digits;
  double *num;
  cc_tdom dom;
};

typedef struct collect {
  cc_tlive *l;
  cucore_status st;
} collect;

static int take_interval(uint64_t first, uint64_t last, void *user) {
  collect *c = user;
  cc_tlive *l = c->l;
  if (l->n >= RANK_MAX_INTERVALS) return 1; /* too many: no index */
  uint64_t *f = cc_grow(l->first, &l->cap_first, l->n + 1, sizeof *f, "a space's rank index");
  uint64_t *s = f ? cc_grow(l->cum, &l->cap_cum, l->n + 2, sizeof *s, "a space's rank index")
                  : NULL;
  if (f) l->first = f;
  if (!s) {
    c->st = CUCORE_HOST_OUT_OF_MEMORY;
    return 1;
  }
  l->cum = s;
  if (l->n == 0) l->cum[0] = 0;
  l->first[l->n] = first;
  l->cum[l->n + 1] = l->cum[l->n] + (last - first);
  l->n++;
  return 0;
}

static cucore_status build_index(cc_tlive *l) {
  collect c = {l, CUCORE_OK};
  int stopped = cc_twalk_intervals(l->walk, 0, take_interval, &c);
  if (c.st != CUCORE_OK) return c.st;
  l->indexed = !stopped;
  if (l->indexed) l->runnable = l->n ? l->cum[l->n] : 0;
  if (!l->indexed || l->n < GUIDE_MIN || !l->runnable) return CUCORE_OK;
  size_t ng = l->n < GUIDE_MAX ? l->n : GUIDE_MAX;
  l->step = (l->runnable + ng - 1) / ng;
  l->nguide = (size_t)((l->runnable + l->step - 1) / l->step);
  l->guide = cc_calloc(l->nguide + 1, sizeof *l->guide, "a space's rank guide");
  if (!l->guide) return CUCORE_HOST_OUT_OF_MEMORY;
  size_t i = 0;
  for (size_t b = 0; b <= l->nguide; b++) {
    uint64_t r = (uint64_t)b * l->step;
    while (i + 1 < l->n && l->cum[i + 1] <= r) i++;
    l->guide[b] = i;
  }
  return CUCORE_OK;
}

/* The domain's values as numbers (NAN: not one) and their offsets. */
static cucore_status take_values(cc_tlive *l) {
  const cucore_tune_space *s = l->space;
  size_t np = s->nparams, total = 0;
  l->sizes = cc_calloc(np + 1, sizeof *l->sizes, "a live domain");
  l->offset = cc_calloc(np + 1, sizeof *l->offset, "a live domain");
  l->digits = cc_calloc(np + 1, sizeof *l->digits, "a live domain");
  if (!l->sizes || !l->offset || !l->digits) return CUCORE_HOST_OUT_OF_MEMORY;
  for (size_t p = 0; p < np; p++)
    l->offset[p] = total, l->sizes[p] = s->params[p].n, total += s->params[p].n;
  l->num = cc_calloc(total + 1, sizeof *l->num, "a live domain");
  if (!l->num) return CUCORE_HOST_OUT_OF_MEMORY;
  for (size_t p = 0; p < np; p++)
    for (size_t k = 0; k < s->params[p].n; k++) {
      const cc_tval *v = &s->params[p].val[k];
      l->num[l->offset[p] + k] = v->kind == CC_TV_INT || v->kind == CC_TV_BOOL ? (double)v->i
                                 : v->kind == CC_TV_REAL                       ? v->d
                                                                               : NAN;
    }
  return CUCORE_OK;
}

static int live_valid(void *ctx, const size_t *digits) {
  cc_tlive *l = ctx;
  return cc_twalk_check(l->walk, cc_tdom_index(&l->dom, digits));
}

uint64_t cc_tlive_at_rank(cc_tlive *l, uint64_t r) {
  size_t lo = 0, hi = l->n; /* the last interval whose running count is <= r */
  if (l->guide && r / l->step < l->nguide) {
    size_t b = (size_t)(r / l->step);
    lo = l->guide[b], hi = l->guide[b + 1] + 1 < l->n ? l->guide[b + 1] + 1 : l->n;
  }
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if (l->cum[mid] <= r)
      lo = mid;
    else
      hi = mid;
  }
  return l->first[lo] + (r - l->cum[lo]);
}

static void live_at_rank(void *ctx, uint64_t r, size_t *digits) {
  cc_tlive *l = ctx;
  cc_tdom_digits(&l->dom, cc_tlive_at_rank(l, r), digits);
}

/* Without an index, "rank r" is a uniformly random runnable configuration drawn by rejection
 * from a generator seeded with r: the same r, the same configuration, so a search stays
 * repeatable (a walk over the ranks is no longer every configuration once). */
static void live_at_rank_drawn(void *ctx, uint64_t r, size_t *digits) {
  cc_tlive *l = ctx;
  cc_rng rng;
  cc_rng_seed(&rng, r);
  uint64_t index = 0;
  if (!cc_tlive_sample(l, &rng, &index)) index = 0; /* checked by the search: not valid */
  cc_tdom_digits(&l->dom, index, digits);
}

void cc_tlive_close(cc_tlive *l) {
  if (!l) return;
  cc_twalk_close(l->walk);
  free(l->first), free(l->cum), free(l->sizes), free(l->offset), free(l->digits), free(l->num);
  free(l->guide);
  free(l);
}

cucore_status cc_tlive_open(const cucore_tune_space *s, cc_tlive **out) {
  *out = NULL;
  cc_tlive *l = cc_calloc(1, sizeof *l, "a live domain");
  if (!l) return CUCORE_HOST_OUT_OF_MEMORY;
  l->space = s;
  cucore_status st = cucore_tune_space_get_size(s, &l->raw);
  if (st == CUCORE_OK) st = take_values(l);
  if (st == CUCORE_OK) st = cc_twalk_open(s, 0, &l->walk);
  if (st == CUCORE_OK) st = build_index(l);
  if (st == CUCORE_OK && !l->indexed) {
    cucore_tune_counts k;
    st = cucore_tune_space_count(s, &k);
    l->runnable = k.runnable;
  }
  if (st != CUCORE_OK) {
    cc_tlive_close(l);
    return st;
  }
  l->dom = (cc_tdom){s->nparams,  l->sizes,
                     l->num,      l->offset,
                     l->runnable, l,
                     live_valid,  l->indexed ? live_at_rank : live_at_rank_drawn};
  *out = l;
  return CUCORE_OK;
}

const cc_tdom *cc_tlive_domain(const cc_tlive *l) { return &l->dom; }

int cc_tlive_indexed(const cc_tlive *l) { return l->indexed; }

int cc_tlive_sample(cc_tlive *l, cc_rng *rng, uint64_t *index) {
  if (l->runnable == 0) return 0;
  if (l->indexed) {
    *index = cc_tlive_at_rank(l, cc_rng_below(rng, l->runnable));
    return 1;
  }
  for (long t = 0; t < REJECTION_TRIES; t++) {
    uint64_t i = cc_rng_below(rng, l->raw);
    if (cc_twalk_check(l->walk, i)) {
      *index = i;
      return 1;
    }
  }
  return 0;
}

int cc_tlive_runnable(cc_tlive *l, uint64_t index) {
  return index < l->raw && cc_twalk_check(l->walk, index);
}

/* ---- the public queries ---------------------------------------------------------------- */

cucore_status cucore_tune_space_sample(const cucore_tune_space *space, uint64_t seed, size_t n,
                                       uint64_t *indices) {
  cc_begin();
  const char *fn = "cucore_tune_space_sample";
  CC_CHECK_HANDLE(space, TUNE_SPACE, fn, "space");
  if (n && !indices) return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: `indices` is NULL", fn);
  cc_tlive *l = NULL;
  cucore_status st = cc_tlive_open(space, &l);
  if (st != CUCORE_OK) return st;
  cc_rng rng;
  cc_rng_seed(&rng, seed);
  for (size_t i = 0; st == CUCORE_OK && i < n; i++)
    if (!cc_tlive_sample(l, &rng, &indices[i]))
      st = l->runnable == 0
               ? cc_fail(CUCORE_INVALID_ARGUMENT, "%s: the space has no runnable configuration", fn)
               : cc_fail(CUCORE_INVALID_ARGUMENT,
                         "%s: no runnable configuration in %d random draws of the space's %llu "
                         "(it is cut into more than %zu runs, too many to index)",
                         fn, REJECTION_TRIES, (unsigned long long)l->raw, RANK_MAX_INTERVALS);
  cc_tlive_close(l);
  return st;
}

cucore_status cucore_tune_space_get_neighbours(const cucore_tune_space *space, uint64_t index,
                                               cucore_tune_neighbours kind, uint64_t *out,
                                               size_t cap, size_t *n) {
  cc_begin();
  const char *fn = "cucore_tune_space_get_neighbours";
  CC_CHECK_ARG(n, fn, "n");
  *n = 0;
  CC_CHECK_HANDLE(space, TUNE_SPACE, fn, "space");
  if (cap && !out)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: `out` is NULL with cap %zu", fn, cap);
  if (kind != CUCORE_TUNE_NEIGHBOURS_HAMMING && kind != CUCORE_TUNE_NEIGHBOURS_ADJACENT)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: kind %d: expected CUCORE_TUNE_NEIGHBOURS_HAMMING or _ADJACENT", fn,
                   (int)kind);
  uint64_t raw = 0;
  cucore_status st = cucore_tune_space_get_size(space, &raw);
  if (st == CUCORE_OK && index >= raw)
    st = cc_fail(CUCORE_INVALID_ARGUMENT, "%s: index %llu is past the space's %llu configurations",
                 fn, (unsigned long long)index, (unsigned long long)raw);
  cc_twalk *w = NULL;
  if (st == CUCORE_OK) st = cc_twalk_open(space, 0, &w);
  if (st != CUCORE_OK) return st;
  uint64_t stride = raw;
  for (size_t p = 0; p < space->nparams; p++) { /* the last parameter varies fastest */
    size_t size = space->params[p].n;
    stride /= size;
    size_t at = (size_t)(index / stride % size);
    for (size_t v = 0; v < size; v++) {
      int adjacent = v + 1 == at || v == at + 1;
      if (v == at || (kind == CUCORE_TUNE_NEIGHBOURS_ADJACENT && !adjacent)) continue;
      uint64_t other = index - (uint64_t)at * stride + (uint64_t)v * stride;
      if (!cc_twalk_check(w, other)) continue;
      if (*n < cap) out[*n] = other;
      (*n)++;
    }
  }
  cc_twalk_close(w);
  return CUCORE_OK;
}
