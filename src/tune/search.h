/*
 * tune/search.h -- search strategies under a budget: what a strategy sees of a space (a
 * domain), the search's state, and the strategies. Private to src/tune.
 *
 * A domain is the set of configurations a strategy may propose: parameters with their value
 * counts (a configuration is one value index per parameter, its index the mixed-radix number
 * of those, the last parameter fastest, as in a space), whether one is valid, and the r-th
 * valid one for uniform sampling. A live space gives one (search_space.c: the walk and its rank
 * index); so does a recording of measured results (recording.c), where exactly the recorded
 * configurations are valid.
 *
 * A search (search.c) keeps what every strategy needs: the seeded generator, the budget, every
 * configuration proposed (never proposed twice) and what was observed of it (a time, or a
 * failure, which is information: the region is worse, never a number that looks measured).
 * A strategy proposes batches (a generation, parallel restarts, several acquisitions at once)
 * so that compiles and the GPU stay busy; a proposal still waiting for its result counts
 * against the budget and is never proposed again.
 *
 *   search.c          the search: budget, proposals, observations, the generator
 *   search_options.c  a strategy's options, read from key=value text or a JSON object
 *   search_space.c    a live space as a domain (valid by the walk, sampled by rank)
 *   search_random.c   uniform random sampling without repeats
 *   search_local.c    greedy iterated local search; simulated annealing
 *   search_genetic.c  a genetic algorithm
 *   search_forest.c   a random forest surrogate (bagged regression trees)
 *   search_gp.c       a Gaussian process surrogate (bayes, the default)
 *   search_model.c    model-based searches (bayes, forest): the time model's expected
 *                     improvement over a pool of candidates (random, and neighbours of the
 *                     best), batches spread by halving a taken one's neighbours
 *   search_wolf.c     a grey-wolf pack's children, for the model-based search's turns
 */
#ifndef CUCORE_TUNE_SEARCH_H
#define CUCORE_TUNE_SEARCH_H

#include "base/base.h"

#include <stddef.h>
#include <stdint.h>

/* ---- the generator: xoshiro256** seeded through splitmix64 (so seeds 0, 1, 2 ... give
 * unrelated streams) ---- */
typedef struct cc_rng {
  uint64_t s[4];
} cc_rng;
void cc_rng_seed(cc_rng *r, uint64_t seed);
uint64_t cc_rng_next(cc_rng *r);
/* Uniform in [0, n) without modulo bias (n >= 1). */
uint64_t cc_rng_below(cc_rng *r, uint64_t n);
/* Uniform in [0, 1). */
double cc_rng_unit(cc_rng *r);

/* ---- a domain ---- */
typedef struct cc_tdom {
  size_t nparams;
  const size_t *sizes; /* values per parameter */
  const double *num;   /* num[offset[p] + v]: value v of parameter p as a number (NAN: not one) */
  const size_t *offset;
  uint64_t count; /* valid configurations (>= 1) */
  void *ctx;
  /* 1 when the configuration with value indices `digits` may be proposed. */
  int (*valid)(void *ctx, const size_t *digits);
  /* The r-th valid configuration (0 <= r < count, a fixed order) into digits. */
  void (*at_rank)(void *ctx, uint64_t r, size_t *digits);
} cc_tdom;

/* The index of a configuration from its value indices, and back. */
uint64_t cc_tdom_index(const cc_tdom *d, const size_t *digits);
void cc_tdom_digits(const cc_tdom *d, uint64_t index, size_t *digits);

/* ---- the search ---- */
typedef enum cc_tstrategy {
  CC_TS_RANDOM = 0,
  CC_TS_ILS,     /* greedy iterated local search */
  CC_TS_ANNEAL,  /* simulated annealing */
  CC_TS_GENETIC, /* a genetic algorithm */
  CC_TS_FOREST,  /* model-based: a random forest's expected improvement */
  CC_TS_BAYES,   /* model-based: a Gaussian process's expected improvement (the default) */
  CC_TS_COUNT
} cc_tstrategy;

/* The strategies' names, by cc_tstrategy ("random", "ils", "anneal", "genetic", "forest"). */
extern const char *const cc_tstrategy_names[CC_TS_COUNT];

/* ---- a strategy's options ---- */
/* One option of a strategy; a strategy's table ends with a NULL name. */
typedef struct cc_tstrat_option {
  const char *name;
  double min, max;
  int integer;      /* 1: a whole number */
  const char *help; /* what it sets, with its default */
} cc_tstrat_option;

#define CC_TS_OPTIONS_MAX 24 /* options of one strategy at most (bits of `set`) */

/* The options given (bit k of `set`: option k of the table). */
typedef struct cc_tstrat_values {
  double value[CC_TS_OPTIONS_MAX];
  unsigned set;
} cc_tstrat_values;

/* The options table of a strategy (NULL when it has none). */
const cc_tstrat_option *cc_tstrategy_options(cc_tstrategy kind);
/* Reads `text` (NULL or blank: none; `key=value` items separated by commas or spaces, or a
 * JSON object of numbers) against the strategy's table (search.c, through
 * cc_tstrat_values_parse): unknown names, values out of range and repeats are refused with
 * what was expected. */
cucore_status cc_tstrat_values_read(cc_tstrategy kind, const char *text, cc_tstrat_values *out);
/* The same against `table` (NULL: no options), `who` naming the strategy in errors
 * (search_options.c). */
cucore_status cc_tstrat_values_parse(const cc_tstrat_option *table, const char *who,
                                     const char *text, cc_tstrat_values *out);

/* What was observed of a proposed configuration. */
typedef struct cc_tobs {
  uint64_t index;
  double value; /* the time (ms); for a failure, NAN */
  int state;    /* 0 waiting, 1 measured, 2 failed */
} cc_tobs;

typedef struct cc_tsearch cc_tsearch;

/* A strategy's own part: made by open, called by the search. */
typedef struct cc_tstrat_ops {
  cucore_status (*open)(cc_tsearch *s);
  /* Up to `want` new configurations into out (each valid and never proposed; the search
   * checks and marks them): returns how many (0: none left to propose now). */
  size_t (*propose)(cc_tsearch *s, uint64_t *out, size_t want);
  /* Observation i of the search (s->obs[i]) has its result. */
  void (*observe)(cc_tsearch *s, size_t i);
  void (*close)(cc_tsearch *s);
  const cc_tstrat_option *options; /* its options (NULL: none) */
  /* Rules between its options, once they are read (NULL: none). */
  cucore_status (*check)(const cc_tstrat_values *v);
} cc_tstrat_ops;

struct cc_tsearch {
  const cc_tdom *dom;
  cc_tstrategy kind;
  const cc_tstrat_ops *ops;
  void *state; /* the strategy's */
  cc_rng rng;
  uint64_t budget; /* configurations to propose in all */
  cc_tobs *obs;    /* every proposal, in order */
  size_t nobs, cap;
  uint64_t *seen; /* open addressing over index + 1 (0: empty) -> obs position */
  size_t *seen_at;
  size_t seen_cap;
  size_t measured, failed;
  size_t learned;        /* of nobs, the other tunes' results (cc_tsearch_learn): no budget */
  double best;           /* the best time observed (INFINITY: none) */
  size_t best_obs;       /* its observation */
  size_t *scratch;       /* nparams value indices, for the strategies */
  size_t *scratch2;      /* and another */
  cc_tstrat_values opts; /* the options given */
};

/* A search over `dom` (kept; it must outlive the search) with `budget` proposals in all, the
 * strategy's `options` text read as cc_tstrat_values_read reads it (NULL: the defaults). */
cucore_status cc_tsearch_open(const cc_tdom *dom, cc_tstrategy kind, const char *options,
                              uint64_t seed, uint64_t budget, cc_tsearch **out);
/* Option k of the strategy's table as given, else `fallback`. */
double cc_tsearch_option(const cc_tsearch *s, size_t k, double fallback);
void cc_tsearch_close(cc_tsearch *s);
/* Up to `want` configurations to evaluate next (their indices into out); 0 when the budget is
 * spent or the strategy has nothing more to propose. */
size_t cc_tsearch_propose(cc_tsearch *s, uint64_t *out, size_t want);
/* The result of a proposed configuration: its time in ms, or NAN when it failed (a compile
 * error, a resource limit, a wrong answer, a launch error). */
cucore_status cc_tsearch_observe(cc_tsearch *s, uint64_t index, double ms);
/* A result another tune evaluated (a shard's, read from the shared store): kept as if proposed
 * here and observed, so the strategy learns from it and never proposes it; not counted against
 * the budget. 1 when it was new, 0 when known already (or out of memory). */
int cc_tsearch_learn(cc_tsearch *s, uint64_t index, double ms);

/* For the strategies. Proposes the configuration `digits` when it is valid, never proposed
 * and the budget has room: recorded as waiting, its index in *index; 1 when taken, else 0. */
int cc_tsearch_take(cc_tsearch *s, const size_t *digits, uint64_t *index);
/* The observation of `index`, or -1 when it was never proposed. */
long cc_tsearch_find(const cc_tsearch *s, uint64_t index);
/* 1 when the configuration `digits` is valid and was never proposed. */
int cc_tsearch_fresh(cc_tsearch *s, const size_t *digits);
/* A uniformly random valid configuration never proposed into digits; 0 when none was found
 * (tries many draws, then walks the ranks from a random start). */
int cc_tsearch_random_fresh(cc_tsearch *s, size_t *digits);
/* `digits` made proposable: while it is invalid or proposed already, one random parameter is
 * redrawn (at most `tries` times); then, failing that, a random fresh configuration. 1 when
 * digits holds one, else 0. */
int cc_tsearch_repair(cc_tsearch *s, size_t *digits, int tries);
/* Proposals left in the budget. */
uint64_t cc_tsearch_left(const cc_tsearch *s);

/* The strategies (one table each). */
extern const cc_tstrat_ops cc_ts_random_ops, cc_ts_ils_ops, cc_ts_anneal_ops, cc_ts_genetic_ops,
    cc_ts_forest_ops, cc_ts_bayes_ops;

#endif /* CUCORE_TUNE_SEARCH_H */
