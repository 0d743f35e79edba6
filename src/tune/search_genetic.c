/*
 * search_genetic.c -- a genetic algorithm: a first generation of random configurations, then
 * each generation bred from the best configurations measured so far (elitist: the parents are
 * the fastest `pop` of everything measured): two parents by tournament, uniform crossover, each
 * parameter redrawn with probability 1 / parameters, and a child that is invalid or proposed
 * before mutated again (then a random one). A generation is proposed whole, so the compiles of
 * a generation run together; a failed configuration never becomes a parent.
 */
#include "tune/search.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct genetic {
  size_t pop;      /* a generation's size */
  size_t *parents; /* observations of the fastest measured, best first */
  size_t nparents;
  size_t *a, *b;  /* two parents' value indices */
  int tournament; /* its size */
} genetic;

enum { OPT_POPULATION, OPT_MUTATION, OPT_TOURNAMENT }; /* OPTIONS below */

static cucore_status genetic_open(cc_tsearch *s) {
  genetic *g = cc_calloc(1, sizeof *g, "a genetic search");
  if (!g) return CUCORE_HOST_OUT_OF_MEMORY;
  s->state = g;
  uint64_t pop = s->budget / 6;
  pop = pop < 8 ? 8 : pop > 24 ? 24 : pop;
  g->pop = (size_t)cc_tsearch_option(s, OPT_POPULATION, (double)pop);
  if (g->pop > s->budget && s->budget >= 2) g->pop = (size_t)s->budget; /* never past it */
  g->tournament = (int)cc_tsearch_option(s, OPT_TOURNAMENT, 3);
  size_t n = s->dom->nparams + 1;
  g->parents = cc_calloc(g->pop, sizeof *g->parents, "a genetic search");
  g->a = cc_calloc(n, sizeof *g->a, "a genetic search");
  g->b = cc_calloc(n, sizeof *g->b, "a genetic search");
  return g->parents && g->a && g->b ? CUCORE_OK : CUCORE_HOST_OUT_OF_MEMORY;
}

static void genetic_close(cc_tsearch *s) {
  genetic *g = s->state;
  free(g->parents);
  free(g->a);
  free(g->b);
  free(g);
  s->state = NULL;
}

/* The fastest `pop` measured configurations, best first (insertion into a short list). */
static void elite(cc_tsearch *s, genetic *g) {
  g->nparents = 0;
  for (size_t i = 0; i < s->nobs; i++) {
    if (s->obs[i].state != 1) continue;
    size_t k = g->nparents < g->pop ? g->nparents++ : g->pop;
    if (k == g->pop && s->obs[i].value >= s->obs[g->parents[g->pop - 1]].value) continue;
    if (k == g->pop) k = g->pop - 1;
    while (k > 0 && s->obs[g->parents[k - 1]].value > s->obs[i].value) {
      g->parents[k] = g->parents[k - 1];
      k--;
    }
    g->parents[k] = i;
  }
}

/* A parent by a tournament among the elite (the fastest of `tournament` drawn, 3 unless
 * told). */
static size_t tournament(cc_tsearch *s, const genetic *g) {
  size_t best = (size_t)cc_rng_below(&s->rng, g->nparents);
  for (int t = 1; t < g->tournament; t++) {
    size_t c = (size_t)cc_rng_below(&s->rng, g->nparents);
    if (c < best) best = c; /* the list is sorted: a lower place is faster */
  }
  return g->parents[best];
}

/* A child of two parents into s->scratch: crossover, mutation, repair; 0 when none is fresh. */
static int child(cc_tsearch *s, genetic *g) {
  const cc_tdom *d = s->dom;
  cc_tdom_digits(d, s->obs[tournament(s, g)].index, g->a);
  cc_tdom_digits(d, s->obs[tournament(s, g)].index, g->b);
  for (size_t p = 0; p < d->nparams; p++)
    s->scratch[p] = cc_rng_below(&s->rng, 2) ? g->a[p] : g->b[p];
  int told = (s->opts.set >> OPT_MUTATION) & 1; /* else 1 / parameters */
  for (size_t p = 0; p < d->nparams; p++)
    if (told ? cc_rng_unit(&s->rng) < s->opts.value[OPT_MUTATION]
             : cc_rng_below(&s->rng, d->nparams) == 0)
      s->scratch[p] = (size_t)cc_rng_below(&s->rng, d->sizes[p]);
  return cc_tsearch_repair(s, s->scratch, 16);
}

static size_t genetic_propose(cc_tsearch *s, uint64_t *out, size_t want) {
  genetic *g = s->state;
  size_t n = 0;
  elite(s, g);
  while (n < want) {
    int ok = s->nobs < g->pop || g->nparents < 2 ? cc_tsearch_random_fresh(s, s->scratch)
                                                 : child(s, g);
    if (!ok || !cc_tsearch_take(s, s->scratch, &out[n])) break;
    n++;
  }
  return n;
}

static void genetic_observe(cc_tsearch *s, size_t i) { (void)s, (void)i; }

static const cc_tstrat_option OPTIONS[] = {
    {"population", 2, 1e5, 1, "a generation's size and the elite's; default budget / 6, 8 to 24"},
    {"mutation", 0, 1, 0,
     "the chance each parameter of a child is redrawn; default 1 / parameters"},
    {"tournament", 1, 64, 1, "parents drawn per tournament, the fastest wins; default 3"},
    {NULL, 0, 0, 0, NULL}};

const cc_tstrat_ops cc_ts_genetic_ops = {genetic_open,  genetic_propose, genetic_observe,
                                         genetic_close, OPTIONS,         NULL};
