/*
 * search.c -- the part of a search every strategy shares (tune/search.h): the seeded
 * generator, the budget, the configurations proposed (a hash set: never one twice) and what
 * was observed of them, the best so far.
 */
#include "tune/search.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *const cc_tstrategy_names[CC_TS_COUNT] = {"random",  "ils",    "anneal",
                                                     "genetic", "forest", "bayes"};

static const cc_tstrat_ops *const OPS[CC_TS_COUNT] = {&cc_ts_random_ops, &cc_ts_ils_ops,
                                                      &cc_ts_anneal_ops, &cc_ts_genetic_ops,
                                                      &cc_ts_forest_ops, &cc_ts_bayes_ops};

/* ---- the generator ---- */

static uint64_t splitmix64(uint64_t *x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

void cc_rng_seed(cc_rng *r, uint64_t seed) {
  for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t cc_rng_next(cc_rng *r) {
  uint64_t *s = r->s, out = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
  s[2] ^= s[0], s[3] ^= s[1], s[1] ^= s[2], s[0] ^= s[3], s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return out;
}

uint64_t cc_rng_below(cc_rng *r, uint64_t n) {
  uint64_t limit = UINT64_MAX - UINT64_MAX % n; /* draws at or above it would favour some */
  for (;;) {
    uint64_t x = cc_rng_next(r);
    if (x < limit) return x % n;
  }
}

double cc_rng_unit(cc_rng *r) { return (double)(cc_rng_next(r) >> 11) * 0x1.0p-53; }

/* ---- the domain's numbering ---- */

uint64_t cc_tdom_index(const cc_tdom *d, const size_t *digits) {
  uint64_t index = 0;
  for (size_t p = 0; p < d->nparams; p++) index = index * d->sizes[p] + digits[p];
  return index;
}

void cc_tdom_digits(const cc_tdom *d, uint64_t index, size_t *digits) {
  for (size_t p = d->nparams; p-- > 0;) {
    digits[p] = (size_t)(index % d->sizes[p]);
    index /= d->sizes[p];
  }
}

/* ---- the configurations proposed ---- */

static size_t slot_of(const cc_tsearch *s, uint64_t index) {
  uint64_t h = (index + 1) * 0x9e3779b97f4a7c15ull;
  size_t i = (size_t)(h >> 17) & (s->seen_cap - 1);
  while (s->seen[i] && s->seen[i] != index + 1) i = (i + 1) & (s->seen_cap - 1);
  return i;
}

long cc_tsearch_find(const cc_tsearch *s, uint64_t index) {
  size_t i = slot_of(s, index);
  return s->seen[i] ? (long)s->seen_at[i] : -1;
}

static cucore_status seen_grow(cc_tsearch *s) {
  size_t old_cap = s->seen_cap, cap = old_cap ? old_cap * 2 : 256;
  uint64_t *old = s->seen;
  size_t *old_at = s->seen_at;
  s->seen = cc_calloc(cap, sizeof *s->seen, "a search's configurations");
  s->seen_at = cc_calloc(cap, sizeof *s->seen_at, "a search's configurations");
  if (!s->seen || !s->seen_at) {
    free(s->seen), free(s->seen_at);
    s->seen = old, s->seen_at = old_at;
    return CUCORE_HOST_OUT_OF_MEMORY;
  }
  s->seen_cap = cap;
  for (size_t i = 0; i < old_cap; i++)
    if (old[i]) {
      size_t j = slot_of(s, old[i] - 1);
      s->seen[j] = old[i], s->seen_at[j] = old_at[i];
    }
  free(old);
  free(old_at);
  return CUCORE_OK;
}

int cc_tsearch_fresh(cc_tsearch *s, const size_t *digits) {
  for (size_t p = 0; p < s->dom->nparams; p++)
    if (digits[p] >= s->dom->sizes[p]) return 0;
  return cc_tsearch_find(s, cc_tdom_index(s->dom, digits)) < 0 &&
         s->dom->valid(s->dom->ctx, digits);
}

/* The proposals left: the budget less this search's own proposals (learned results are not
 * its), and no more than the configurations nobody has evaluated. */
uint64_t cc_tsearch_left(const cc_tsearch *s) {
  uint64_t own = s->nobs - s->learned;
  uint64_t budget = s->budget > own ? s->budget - own : 0;
  uint64_t unseen = s->dom->count > s->nobs ? s->dom->count - s->nobs : 0;
  return budget < unseen ? budget : unseen;
}

/* Configuration i recorded as waiting for its result; 0 when out of memory. */
static int add_obs(cc_tsearch *s, uint64_t i) {
  if ((s->nobs + 1) * 2 > s->seen_cap && seen_grow(s) != CUCORE_OK) return 0;
  cc_tobs *o = cc_grow(s->obs, &s->cap, s->nobs + 1, sizeof *o, "a search's observations");
  if (!o) return 0;
  s->obs = o;
  size_t slot = slot_of(s, i);
  s->seen[slot] = i + 1, s->seen_at[slot] = s->nobs;
  s->obs[s->nobs++] = (cc_tobs){i, NAN, 0};
  return 1;
}

int cc_tsearch_take(cc_tsearch *s, const size_t *digits, uint64_t *index) {
  if (!cc_tsearch_left(s) || !cc_tsearch_fresh(s, digits)) return 0;
  uint64_t i = cc_tdom_index(s->dom, digits);
  if (!add_obs(s, i)) return 0;
  *index = i;
  return 1;
}

int cc_tsearch_learn(cc_tsearch *s, uint64_t index, double ms) {
  if (cc_tsearch_find(s, index) >= 0) return 0;
  cc_tdom_digits(s->dom, index, s->scratch2);
  for (size_t p = 0; p < s->dom->nparams; p++)
    if (s->scratch2[p] >= s->dom->sizes[p]) return 0;
  if (cc_tdom_index(s->dom, s->scratch2) != index || !s->dom->valid(s->dom->ctx, s->scratch2) ||
      !add_obs(s, index))
    return 0;
  s->learned++;
  return cc_tsearch_observe(s, index, ms) == CUCORE_OK;
}

int cc_tsearch_random_fresh(cc_tsearch *s, size_t *digits) {
  const cc_tdom *d = s->dom;
  for (int tries = 0; tries < 64; tries++) {
    d->at_rank(d->ctx, cc_rng_below(&s->rng, d->count), digits);
    if (cc_tsearch_find(s, cc_tdom_index(d, digits)) < 0) return 1;
  }
  /* Most of the space proposed already: walk the ranks from a random start. */
  uint64_t start = cc_rng_below(&s->rng, d->count);
  for (uint64_t k = 0; k < d->count && k < (uint64_t)s->nobs + 1; k++) {
    d->at_rank(d->ctx, (start + k) % d->count, digits);
    if (cc_tsearch_find(s, cc_tdom_index(d, digits)) < 0) return 1;
  }
  return 0;
}

/* ---- the search ---- */

const cc_tstrat_option *cc_tstrategy_options(cc_tstrategy kind) {
  return (unsigned)kind < CC_TS_COUNT ? OPS[kind]->options : NULL;
}

cucore_status cc_tstrat_values_read(cc_tstrategy kind, const char *text, cc_tstrat_values *out) {
  memset(out, 0, sizeof *out);
  if ((unsigned)kind >= CC_TS_COUNT)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "strategy options: strategy %d is none", (int)kind);
  cucore_status st = cc_tstrat_values_parse(OPS[kind]->options, cc_tstrategy_names[kind], text,
                                            out);
  return st == CUCORE_OK && OPS[kind]->check ? OPS[kind]->check(out) : st;
}

cucore_status cc_tsearch_open(const cc_tdom *dom, cc_tstrategy kind, const char *options,
                              uint64_t seed, uint64_t budget, cc_tsearch **out) {
  *out = NULL;
  if ((unsigned)kind >= CC_TS_COUNT || dom->count == 0)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "a search: strategy %d over %llu configurations: expected a strategy of "
                   "the list and a space with a valid configuration",
                   (int)kind, (unsigned long long)dom->count);
  cc_tstrat_values opts;
  cucore_status read = cc_tstrat_values_read(kind, options, &opts);
  if (read != CUCORE_OK) return read;
  cc_tsearch *s = cc_calloc(1, sizeof *s, "a search");
  if (!s) return CUCORE_HOST_OUT_OF_MEMORY;
  s->opts = opts;
  s->dom = dom, s->kind = kind, s->ops = OPS[kind], s->budget = budget;
  s->best = INFINITY;
  cc_rng_seed(&s->rng, seed);
  size_t n = dom->nparams ? dom->nparams : 1;
  s->scratch = cc_calloc(n, sizeof *s->scratch, "a search");
  s->scratch2 = cc_calloc(n, sizeof *s->scratch2, "a search");
  cucore_status st = s->scratch && s->scratch2 ? seen_grow(s) : CUCORE_HOST_OUT_OF_MEMORY;
  if (st == CUCORE_OK) st = s->ops->open(s);
  if (st != CUCORE_OK) {
    cc_tsearch_close(s);
    return st;
  }
  *out = s;
  return CUCORE_OK;
}

void cc_tsearch_close(cc_tsearch *s) {
  if (!s) return;
  if (s->state) s->ops->close(s);
  free(s->obs);
  free(s->seen);
  free(s->seen_at);
  free(s->scratch);
  free(s->scratch2);
  free(s);
}

size_t cc_tsearch_propose(cc_tsearch *s, uint64_t *out, size_t want) {
  uint64_t left = cc_tsearch_left(s);
  if (want > left) want = (size_t)left;
  return want ? s->ops->propose(s, out, want) : 0;
}

cucore_status cc_tsearch_observe(cc_tsearch *s, uint64_t index, double ms) {
  long i = cc_tsearch_find(s, index);
  if (i < 0 || s->obs[i].state != 0)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "a search: configuration %llu was %s: expected one proposed and waiting",
                   (unsigned long long)index, i < 0 ? "never proposed" : "observed already");
  cc_tobs *o = &s->obs[i];
  if (isfinite(ms) && ms >= 0) {
    o->value = ms, o->state = 1;
    s->measured++;
    if (ms < s->best) s->best = ms, s->best_obs = (size_t)i;
  } else {
    o->state = 2;
    s->failed++;
  }
  s->ops->observe(s, (size_t)i);
  return CUCORE_OK;
}

int cc_tsearch_repair(cc_tsearch *s, size_t *digits, int tries) {
  const cc_tdom *d = s->dom;
  for (int t = 0; t < tries && !cc_tsearch_fresh(s, digits); t++) {
    size_t p = (size_t)cc_rng_below(&s->rng, d->nparams);
    digits[p] = (size_t)cc_rng_below(&s->rng, d->sizes[p]);
  }
  return cc_tsearch_fresh(s, digits) || cc_tsearch_random_fresh(s, digits);
}
