/*
 * search_wolf.c -- a grey-wolf pack's children (tune/search_wolf.h), after Kernel Tuner's
 * adaptive tabu grey wolf: the pack's three leaders and one wolf give each parameter's value
 * of a child, a shake moves one parameter to an adjacent value, and a child proposed already
 * (the tabu list is the search's set of proposals) is moved to a fresh neighbour. The pack is
 * the best measured configurations, so it sees every observation, the forest's proposals too;
 * the leaders are taken from different basins (`apart` parameters from each other) so that a
 * child mixes basins instead of polishing one.
 */
#include "tune/search_wolf.h"

/* Parameters in which the value indices a and b (n each) differ. */
static size_t apart_by(const size_t *a, const size_t *b, size_t n) {
  size_t d = 0;
  for (size_t p = 0; p < n; p++) d += a[p] != b[p];
  return d;
}

/* The pack: the measured observations' places, fastest first, at most k of them. */
static size_t pack_of(const cc_tsearch *s, size_t *top, size_t k) {
  size_t n = 0;
  for (size_t i = 0; i < s->nobs; i++) {
    if (s->obs[i].state != 1) continue;
    size_t at = n < k ? n++ : k;
    if (at == k && s->obs[i].value >= s->obs[top[k - 1]].value) continue;
    if (at == k) at = k - 1;
    while (at > 0 && s->obs[top[at - 1]].value > s->obs[i].value) top[at] = top[at - 1], at--;
    top[at] = i;
  }
  return n;
}

/* The leaders into work (alpha, beta, delta: nparams each), marked in `led`. */
static void leaders(const cc_tsearch *s, const size_t *top, size_t n, size_t apart, size_t *work,
                    int *led) {
  size_t np = s->dom->nparams;
  for (size_t l = 0; l < 3; l++) {
    size_t pick = SIZE_MAX, first = SIZE_MAX;
    for (size_t i = 0; i < n && pick == SIZE_MAX; i++) {
      if (led[i]) continue;
      cc_tdom_digits(s->dom, s->obs[top[i]].index, &work[l * np]);
      int far = 1;
      for (size_t k = 0; k < l; k++) far &= apart_by(&work[l * np], &work[k * np], np) >= apart;
      if (first == SIZE_MAX) first = i;
      if (far) pick = i;
    }
    pick = pick == SIZE_MAX ? first : pick;
    led[pick] = 1;
    cc_tdom_digits(s->dom, s->obs[top[pick]].index, &work[l * np]);
  }
}

int cc_twolf_child(cc_tsearch *s, size_t pack, size_t apart, double shake, size_t *work,
                   size_t *digits) {
  const cc_tdom *d = s->dom;
  size_t np = d->nparams, top[CC_TWOLF_PACK_MAX];
  int led[CC_TWOLF_PACK_MAX] = {0};
  pack = pack < 4 ? 4 : pack > CC_TWOLF_PACK_MAX ? CC_TWOLF_PACK_MAX : pack;
  size_t n = pack_of(s, top, pack);
  if (n < 4) return 0;
  leaders(s, top, n, apart, work, led);
  size_t w = (size_t)cc_rng_below(&s->rng, n - 3), i = 0; /* the w-th of the rest */
  while (led[i] || w) w -= !led[i], i++;
  cc_tdom_digits(d, s->obs[top[i]].index, &work[3 * np]);
  for (size_t p = 0; p < np; p++) digits[p] = work[cc_rng_below(&s->rng, 4) * np + p];
  size_t p = (size_t)cc_rng_below(&s->rng, np);
  if (cc_rng_unit(&s->rng) < shake && d->sizes[p] > 1) {
    int up = cc_rng_below(&s->rng, 2) ? digits[p] + 1 < d->sizes[p] : digits[p] == 0;
    digits[p] = up ? digits[p] + 1 : digits[p] ? digits[p] - 1 : 0;
  }
  return cc_tsearch_repair(s, digits, 32);
}
