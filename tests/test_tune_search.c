/* test_tune_search.c -- the search strategies under a budget (src/tune/search*.c) and the
 * recorded spaces they are proven on (recording.c, simulate.c), without a GPU: every strategy
 * proposes only valid configurations, never one twice, never more than its budget, the same
 * sequence for the same seed; with the whole space as its budget it finds the optimum; batches
 * of proposals keep those rules; a Kernel Tuner cache file is read with its failures and
 * costs, and a malformed one is refused with what was wrong named. The recordings are
 * generated here (a smooth bowl with a narrow best, failures in one region), not bundled. */
#include "support.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune/recording.h"
#include "tune/search_features.h"
#include "tune/search_gp.h"

/* A strict JSON text that grows (the recordings are built as text, as Kernel Tuner writes
 * them). */
typedef struct text {
  char *s;
  size_t n, cap;
} text;

static void put(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(text *t, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int need = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (t->n + (size_t)need + 1 > t->cap) {
    t->cap = (t->n + (size_t)need + 1) * 2;
    t->s = realloc(t->s, t->cap);
    assert_non_null(t->s);
  }
  va_start(ap, fmt);
  vsnprintf(t->s + t->n, t->cap - t->n, fmt, ap);
  va_end(ap);
  t->n += (size_t)need;
}

/* A recording of three parameters (x 0..nx-1, y 0..ny-1, a string parameter "mode" of two
 * values): time = a bowl around (cx, cy) plus 0.5 ms for mode "b", with a narrow best at
 * (cx, cy, "a"); configurations with x + y > limit failed to compile; `holes` leaves every
 * 7th configuration out of the cache (a space pruned by restrictions). */
static char *make_recording(int nx, int ny, int cx, int cy, int limit, int holes) {
  text t = {0};
  put(&t, "{\"device_name\": \"Fake GPU\", \"kernel_name\": \"bowl\",\n"
          " \"tune_params_keys\": [\"x\", \"y\", \"mode\"],\n \"tune_params\": {\"x\": [");
  for (int x = 0; x < nx; x++) put(&t, "%s%d", x ? ", " : "", x * 16);
  put(&t, "], \"y\": [");
  for (int y = 0; y < ny; y++) put(&t, "%s%d", y ? ", " : "", y);
  put(&t, "], \"mode\": [\"a\", \"b\"]},\n \"cache\": {");
  int first = 1, k = 0;
  for (int x = 0; x < nx; x++)
    for (int y = 0; y < ny; y++)
      for (int m = 0; m < 2; m++, k++) {
        if (holes && k % 7 == 3) continue;
        put(&t, "%s\n  \"%d,%d,%s\": {\"x\": %d, \"y\": %d, \"mode\": \"%s\", ", first ? "" : ",",
            x * 16, y, m ? "b" : "a", x * 16, y, m ? "b" : "a");
        first = 0;
        if (x + y > limit) {
          put(&t, "\"time\": \"CompilationFailedConfig\", \"compile_time\": 40}");
          continue;
        }
        double dx = x - cx, dy = y - cy;
        double ms = 1.0 + 0.05 * (dx * dx + dy * dy) + 0.5 * m;
        if (x == cx && y == cy && m == 0) ms = 0.6; /* the narrow best */
        put(&t,
            "\"time\": %.6f, \"compile_time\": 30, \"verification_time\": 2, "
            "\"benchmark_time\": %.6f}",
            ms, 7 * ms);
      }
  put(&t, "\n }\n}\n");
  return t.s;
}

static cc_trecording *read_recording(const char *json) {
  cc_trecording *r = NULL;
  if (cc_trecording_read(json, strlen(json), "bowl.json", &r) != CUCORE_OK)
    fail_msg("bowl.json: %s", cucore_last_error());
  return r;
}

static void a_cache_file_is_read_with_failures_and_costs(void **state) {
  (void)state;
  char *json = make_recording(6, 5, 2, 3, 7, 0);
  cc_trecording *r = read_recording(json);
  assert_string_equal(r->kernel, "bowl");
  assert_string_equal(r->device, "Fake GPU");
  assert_int_equal(r->nparams, 3);
  assert_int_equal(r->n, 6 * 5 * 2);
  /* x + y > 7 failed: x = 5 with y 3, 4; x = 4 with y 4 (times two modes). */
  assert_int_equal(r->nvalid, r->n - 6);
  assert_true(fabs(r->optimum - 0.6) < 1e-9);
  /* The best configuration, found by its values' indices, and a failed one. */
  size_t best[3] = {2, 3, 0}, failed[3] = {5, 4, 1};
  long e = cc_trecording_find(r, cc_tdom_index(&r->dom, best));
  assert_true(e >= 0);
  assert_true(fabs(r->time[e] - 0.6) < 1e-9);
  assert_true(fabs(r->cost[e] - (30 + 2 + 4.2)) < 1e-9);
  e = cc_trecording_find(r, cc_tdom_index(&r->dom, failed));
  assert_true(e >= 0);
  assert_true(isnan(r->time[e]));
  assert_true(fabs(r->cost[e] - 40) < 1e-9);
  cc_trecording_free(r);
  free(json);
}

/* What each malformed file is refused for. */
static void a_malformed_cache_file_is_refused(void **state) {
  (void)state;
  static const struct {
    const char *json, *said;
  } cases[] = {
      {"[1, 2]", "not a JSON object"},
      {"{\"cache\": {}}", "tune_params_keys"},
      {"{\"tune_params_keys\": [\"x\"], \"tune_params\": {\"x\": [1]}}", "no \"cache\" object"},
      {"{\"tune_params_keys\": [\"x\"], \"tune_params\": {\"x\": []}, \"cache\": {\"1\": {}}}",
       "tune_params_keys[0]"},
      {"{\"tune_params_keys\": [\"x\"], \"tune_params\": {\"x\": [1]}, \"cache\": {\"1\": 5}}",
       "cache entry \"1\" is"},
      {"{\"tune_params_keys\": [\"x\"], \"tune_params\": {\"x\": [1]}, "
       "\"cache\": {\"2\": {\"x\": 2, \"time\": 1}}}",
       "has a value its tune_params do not list"},
      {"{\"tune_params_keys\": [\"x\"], \"tune_params\": {\"x\": [1]}, "
       "\"cache\": {\"1\": {\"time\": 1}}}",
       "`x` is missing"},
      {"{\"tune_params_keys\": [\"x\"], \"tune_params\": {\"x\": [1]}, "
       "\"cache\": {\"1\": {\"x\": 1, \"time\": \"RuntimeFailedConfig\"}}}",
       "no configuration with a time"},
      {"{\"tune_params_keys\": [\"x\"], \"tune_params\": {\"x\": [1, 2]}, \"cache\": {\"1\": "
       "{\"x\": 1, \"time\": 1}, \"1 \": {\"x\": 1, \"time\": 2}}}",
       "recorded twice"},
      {"{\"tune_params_keys\": [\"x\"], \"tune_params\": {\"x\": [1]}, \"cache\": {\"1\": "
       "{\"x\": 1, \"time\": 1}",
       "bowl.json"},
      /* TuningSchema T4 */
      {"{\"results\": []}", "no \"results\" list"},
      {"{\"results\": [5]}", "results[0]: expected an object"},
      {"{\"results\": [{\"configuration\": {\"x\": 1}, \"invalidity\": \"constraints\"}]}",
       "no result inside the space"},
      {"{\"results\": [{\"configuration\": {\"x\": [1]}, \"invalidity\": \"correct\"}]}",
       "`x` is a list or an object"},
      {"{\"results\": [{\"configuration\": {\"x\": 1}, \"invalidity\": \"compile\"}]}",
       "TuningSchema T4 file): no configuration with a time"},
      {"{\"results\": [{\"configuration\": {\"x\": 1}, \"invalidity\": \"correct\", "
       "\"measurements\": [{\"name\": \"time\", \"value\": 2, \"unit\": \"s\"}]}, "
       "{\"configuration\": {\"x\": 1}, \"invalidity\": \"correct\"}]}",
       "recorded twice"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    cc_trecording *r = NULL;
    cc_begin(); /* a public call's start: the message of this case, not the first kept */
    cucore_status st = cc_trecording_read(cases[i].json, strlen(cases[i].json), "bowl.json", &r);
    if (st == CUCORE_OK) fail_msg("case %zu was read: %s", i, cases[i].json);
    assert_null(r);
    assert_contains(cucore_last_error(), "bowl.json");
    assert_contains(cucore_last_error(), cases[i].said);
  }
}

/* Runs `kind` over r with `budget` and `batch`, checking every proposal as it comes; fills
 * order (budget entries) with the indices proposed; returns how many. */
static size_t replay_with(const cc_trecording *r, cc_tstrategy kind, const char *options,
                          uint64_t seed, uint64_t budget, size_t batch, uint64_t *order,
                          double *best) {
  cc_tsearch *s = NULL;
  assert_ok(cc_tsearch_open(&r->dom, kind, options, seed, budget, &s));
  uint64_t ask[8];
  size_t n = 0, got;
  *best = INFINITY;
  size_t *digits = calloc(r->nparams, sizeof *digits);
  while ((got = cc_tsearch_propose(s, ask, batch)) > 0) {
    assert_true(got <= batch);
    for (size_t i = 0; i < got; i++) {
      if (n >= budget)
        fail_msg("%s proposed more than its budget of %llu", cc_tstrategy_names[kind],
                 (unsigned long long)budget);
      long e = cc_trecording_find(r, ask[i]);
      if (e < 0) /* the domain is exactly the recorded configurations */
        fail_msg("%s proposed configuration %llu, which is not in the space",
                 cc_tstrategy_names[kind], (unsigned long long)ask[i]);
      for (size_t j = 0; j < n; j++)
        if (order[j] == ask[i])
          fail_msg("%s proposed configuration %llu twice (proposals %zu and %zu)",
                   cc_tstrategy_names[kind], (unsigned long long)ask[i], j, n);
      order[n++] = ask[i];
      if (!isnan(r->time[e]) && r->time[e] < *best) *best = r->time[e];
    }
    for (size_t i = 0; i < got; i++) {
      long e = cc_trecording_find(r, ask[i]);
      assert_ok(cc_tsearch_observe(s, ask[i], r->time[e]));
    }
  }
  /* An index never proposed is refused, and so is one observed twice. */
  assert_int_not_equal(cc_tsearch_observe(s, UINT64_MAX, 1.0), CUCORE_OK);
  if (n) assert_int_not_equal(cc_tsearch_observe(s, order[0], 1.0), CUCORE_OK);
  free(digits);
  cc_tsearch_close(s);
  return n;
}

static size_t replay(const cc_trecording *r, cc_tstrategy kind, uint64_t seed, uint64_t budget,
                     size_t batch, uint64_t *order, double *best) {
  return replay_with(r, kind, NULL, seed, budget, batch, order, best);
}

static void every_strategy_keeps_the_rules(void **state) {
  (void)state;
  char *json = make_recording(8, 9, 5, 2, 12, 1);
  cc_trecording *r = read_recording(json);
  uint64_t *a = calloc(r->n, sizeof *a), *b = calloc(r->n, sizeof *b);
  for (int k = 0; k < CC_TS_COUNT; k++) {
    cc_tstrategy kind = (cc_tstrategy)k;
    for (size_t batch = 1; batch <= 8; batch += 7) {
      double best1, best2;
      /* A budget below the space: exactly that many, the same sequence for the same seed. */
      size_t n1 = replay(r, kind, 42, 30, batch, a, &best1);
      size_t n2 = replay(r, kind, 42, 30, batch, b, &best2);
      if (n1 != 30)
        fail_msg("%s (batch %zu) made %zu of 30 proposals", cc_tstrategy_names[k], batch, n1);
      assert_int_equal(n1, n2);
      assert_memory_equal(a, b, n1 * sizeof *a);
      /* Another seed: another sequence (the first 30 of 132 alike would be chance). */
      replay(r, kind, 43, 30, batch, b, &best2);
      assert_memory_not_equal(a, b, n1 * sizeof *a);
      /* The whole space as the budget: every configuration once, the optimum found. */
      size_t all = replay(r, kind, 7, r->n, batch, a, &best1);
      if (all != r->n)
        fail_msg("%s (batch %zu) proposed %zu of the space's %zu configurations",
                 cc_tstrategy_names[k], batch, all, r->n);
      assert_true(best1 == r->optimum);
      print_message("%s, batch %zu: 30 proposals repeatable by seed, the whole space of %zu "
                    "covered once\n",
                    cc_tstrategy_names[k], batch, r->n);
    }
  }
  free(a);
  free(b);
  cc_trecording_free(r);
  free(json);
}

/* Results learned from another tune (a shard's): observed, never proposed, not of the budget;
 * every strategy still makes its whole budget of its own proposals. */
static void learned_results_are_not_proposed(void **state) {
  (void)state;
  char *json = make_recording(8, 9, 5, 2, 12, 1);
  cc_trecording *r = read_recording(json);
  for (int k = 0; k < CC_TS_COUNT; k++) {
    cc_tsearch *s = NULL;
    assert_ok(cc_tsearch_open(&r->dom, (cc_tstrategy)k, NULL, 5, 20, &s));
    uint64_t learned[10], ask[4];
    size_t nl = 0;
    for (size_t e = 0; e < r->n && nl < 10; e += 7) { /* every 7th recorded configuration */
      learned[nl] = r->index[e];
      assert_int_equal(cc_tsearch_learn(s, learned[nl], r->time[e]), 1);
      assert_int_equal(cc_tsearch_learn(s, learned[nl], r->time[e]), 0); /* known now */
      nl++;
    }
    size_t own = 0, got;
    while ((got = cc_tsearch_propose(s, ask, 4)) > 0) {
      for (size_t i = 0; i < got; i++) {
        for (size_t j = 0; j < nl; j++)
          if (ask[i] == learned[j])
            fail_msg("%s proposed configuration %llu, learned from another tune",
                     cc_tstrategy_names[k], (unsigned long long)ask[i]);
        assert_ok(cc_tsearch_observe(s, ask[i], r->time[cc_trecording_find(r, ask[i])]));
      }
      own += got;
    }
    if (own != 20)
      fail_msg("%s made %zu of its 20 own proposals beside %zu learned", cc_tstrategy_names[k], own,
               nl);
    cc_tsearch_close(s);
  }
  cc_trecording_free(r);
  free(json);
}

/* A simulation (the public cucore_tune_simulate over a recording read from its bytes) counts
 * failures against the budget, adds the recorded costs to its clock and reports the best so
 * far after each evaluation. */
static void a_simulation_counts_and_clocks(void **state) {
  (void)state;
  char *json = make_recording(6, 5, 2, 3, 7, 0);
  cucore_tune_recording *rec = NULL;
  assert_ok(cucore_tune_recording_read(json, strlen(json), "bowl.json", &rec));
  cucore_tune_recording_info info;
  assert_ok(cucore_tune_recording_get_info(rec, &info));
  assert_int_equal(info.configs, 60);
  assert_int_equal(info.valid, 54);
  assert_int_equal(info.near_optimum, 1); /* the narrow best alone */
  assert_string_equal(info.kernel, "bowl");
  double curve[60], clock[60];
  for (int k = 0; k < CUCORE_TUNE_STRATEGY_COUNT; k++) {
    cucore_tune_simulation sim;
    assert_ok(
        cucore_tune_simulate(rec, (cucore_tune_strategy)k, NULL, 20, 3, 4, curve, clock, &sim));
    assert_int_equal(sim.evals, 20);
    double at = 0, best = INFINITY;
    for (uint64_t i = 0; i < sim.evals; i++) {
      assert_true(clock[i] > at); /* every evaluation costs its recorded time */
      assert_true(curve[i] <= best);
      at = clock[i], best = curve[i];
    }
    assert_true(sim.clock_ms == at);
    assert_true(sim.best_ms == best);
    assert_true(sim.ratio > 0 && sim.ratio <= 1);
    /* A budget past the space (or 0) is the space: the optimum, the brute-force clock. */
    assert_ok(cucore_tune_simulate(rec, (cucore_tune_strategy)k, NULL, 0, 3, 1, NULL, NULL, &sim));
    assert_int_equal(sim.evals, info.configs);
    assert_true(sim.ratio == 1);
    assert_true(fabs(sim.clock_ms - info.total_cost_ms) < 1e-6 * info.total_cost_ms);
  }
  /* What is refused. */
  cucore_tune_simulation sim;
  assert_status(cucore_tune_simulate(rec, CUCORE_TUNE_STRATEGY_COUNT, NULL, 5, 0, 1, NULL, NULL,
                                     &sim),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "no cucore_tune_strategy");
  assert_status(cucore_tune_simulate(NULL, CUCORE_TUNE_STRATEGY_RANDOM, NULL, 5, 0, 1, NULL, NULL,
                                     &sim),
                CUCORE_INVALID_ARGUMENT);
  cucore_tune_strategy k;
  assert_ok(cucore_tune_strategy_from_name("default", &k));
  assert_status(cucore_tune_strategy_from_name("pso", &k), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "`pso` is no strategy");
  const char *name = NULL;
  assert_ok(cucore_tune_strategy_get_name(CUCORE_TUNE_STRATEGY_GENETIC, &name));
  assert_string_equal(name, "genetic");
  assert_ok(cucore_tune_recording_destroy(rec));
  assert_ok(cucore_tune_recording_destroy(NULL));
  /* Gzip data that is cut, and bytes that start like gzip but are not. */
  static const unsigned char cut[] = {0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03};
  cucore_status st = cucore_tune_recording_read(cut, sizeof cut, "cut.json.gz", &rec);
  assert_int_not_equal(st, CUCORE_OK);
  assert_null(rec);
  assert_contains(cucore_last_error(), "cut.json.gz");
  static const unsigned char junk[] = {0x1f, 0x8b, 'n', 'o', 't', ' ', 'g', 'z', 'i', 'p'};
  assert_int_not_equal(cucore_tune_recording_read(junk, sizeof junk, "junk.gz", &rec), CUCORE_OK);
  assert_contains(cucore_last_error(), "junk.gz");
  free(json);
}

/* Each strategy's options as the public getter lists them, read from key=value text and from
 * JSON; every mistake refused with what was expected. */
static void strategy_options_are_read_and_checked(void **state) {
  (void)state;
  size_t counts[CC_TS_COUNT] = {0};
  for (int k = 0; k < CC_TS_COUNT; k++) {
    cucore_tune_strategy_option o;
    while (cucore_tune_strategy_get_option((cucore_tune_strategy)k, counts[k], &o) == CUCORE_OK) {
      assert_non_null(o.name);
      assert_true(o.min <= o.max);
      assert_true(strlen(o.help) > 10);
      counts[k]++;
    }
    assert_int_equal(cucore_last_status(), CUCORE_NOT_FOUND);
    assert_contains(cucore_last_error(), "past the last");
  }
  assert_int_equal(counts[CC_TS_RANDOM], 0);
  assert_int_equal(counts[CC_TS_FOREST], 21);
  assert_int_equal(counts[CC_TS_BAYES], 21);
  assert_int_equal(counts[CC_TS_GENETIC], 3);
  cucore_tune_strategy_option o;
  assert_status(cucore_tune_strategy_get_option(CUCORE_TUNE_STRATEGY_COUNT, 0, &o),
                CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_tune_strategy_get_option(CUCORE_TUNE_STRATEGY_FOREST, 0, NULL),
                CUCORE_INVALID_ARGUMENT);

  cc_tstrat_values v;
  assert_ok(cc_tstrat_values_read(CC_TS_FOREST, "trees=8, pool=64 explore_every=0", &v));
  assert_int_equal(v.set, 1u << 0 | 1u << 1 | 1u << 3);
  assert_true(v.value[0] == 8 && v.value[1] == 64 && v.value[3] == 0);
  assert_ok(cc_tstrat_values_read(CC_TS_GENETIC, " {\"mutation\": 0.25, \"population\": 10}", &v));
  assert_true(v.value[1] == 0.25 && v.value[0] == 10);
  assert_ok(cc_tstrat_values_read(CC_TS_RANDOM, NULL, &v));
  assert_ok(cc_tstrat_values_read(CC_TS_RANDOM, "  ", &v));
  assert_int_equal(v.set, 0);
  static const struct {
    cc_tstrategy kind;
    const char *text, *said;
  } bad[] = {
      {CC_TS_FOREST, "tres=8", "`tres` is no option of forest: expected trees, pool, init"},
      {CC_TS_FOREST, "trees=0", "forest `trees` is 0: expected a whole number from 1 to 1024"},
      {CC_TS_FOREST, "trees=2.5", "expected a whole number"},
      {CC_TS_FOREST, "trees=many", "`trees` has value `many`: expected a number"},
      {CC_TS_FOREST, "trees=1e999", "expected a number"},
      {CC_TS_FOREST, "trees", "`trees` is no key=value item"},
      {CC_TS_FOREST, "=3", "no key=value item"},
      {CC_TS_FOREST, "trees=2,trees=3", "`trees` is given twice"},
      {CC_TS_FOREST, "max_fevals=100", "`max_fevals` is the search's budget"},
      {CC_TS_ANNEAL, "time_limit=5", "time_limit_s (--time-limit)"},
      {CC_TS_RANDOM, "init=3", "`init` is no option of random: it has none"},
      {CC_TS_GENETIC, "mutation=1.5", "genetic `mutation` is 1.5: expected a number from 0 to 1"},
      {CC_TS_GENETIC, "{\"population\": \"ten\"}", "`population` is a string: expected a number"},
      {CC_TS_GENETIC, "[3]", "the JSON is an array: expected an object"},
      {CC_TS_GENETIC, "{\"population\": 10,}", "not JSON"},
      {CC_TS_FOREST, "{\"trees\": true}", "`trees` is a boolean: expected a number"},
      {CC_TS_FOREST, "trees=0x10", "`trees` has value `0x10`: expected a number"},
      {CC_TS_ANNEAL, "t_end=1", "`t_end` 1 is above `t_start` 0.5 (its default)"},
      {CC_TS_ANNEAL, "init=3", "`init` is no option of anneal: expected t_start or t_end"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    cc_begin();
    if (cc_tstrat_values_read(bad[i].kind, bad[i].text, &v) == CUCORE_OK)
      fail_msg("`%s` was read for %s", bad[i].text, cc_tstrategy_names[bad[i].kind]);
    assert_contains(cucore_last_error(), bad[i].said);
  }
  /* A rule between two options, checked when the search opens. */
  char *json = make_recording(4, 5, 3, 0, 6, 0);
  cc_trecording *r = read_recording(json);
  cc_tsearch *s = NULL;
  cc_begin();
  assert_status(cc_tsearch_open(&r->dom, CC_TS_ANNEAL, "t_start=0.1,t_end=0.2", 1, 10, &s),
                CUCORE_INVALID_ARGUMENT);
  assert_null(s);
  assert_contains(cucore_last_error(), "`t_end` 0.2 is above `t_start` 0.1");
  cc_trecording_free(r);
  free(json);
}

/* Options change what a strategy proposes, never the rules: the budget, no repeats, only
 * configurations of the space, the same sequence for the same seed; extreme settings too. */
static void options_keep_the_rules(void **state) {
  (void)state;
  char *json = make_recording(8, 9, 5, 2, 12, 1);
  cc_trecording *r = read_recording(json);
  uint64_t *a = calloc(r->n, sizeof *a), *b = calloc(r->n, sizeof *b);
  static const struct {
    cc_tstrategy kind;
    const char *options;
  } cases[] = {
      {CC_TS_FOREST, "trees=4,pool=16,init=3"},
      {CC_TS_FOREST, "pairs=66"},
      {CC_TS_FOREST, "explore_every=0,additive_every=0,neighbours_of=0"},
      {CC_TS_FOREST, "explore_every=1,additive_every=1,neighbours_of=64"},
      {CC_TS_FOREST, "tree_doubt=0,pair_doubt=100"},
      {CC_TS_FOREST, "tree_doubt=0.5,pair_doubt=1"},
      {CC_TS_FOREST, "polish=8"},
      {CC_TS_FOREST, "polish=1000000"},
      {CC_TS_FOREST, "wolves=20"},
      {CC_TS_FOREST, "wolves=1000000,pack=4,wolf_apart=1000000"},
      {CC_TS_FOREST, "wolf_every=2,wolf_pick=16,pack=64,wolf_apart=1"},
      {CC_TS_FOREST, "wolves=10,polish=5,wolf_every=1"},
      {CC_TS_FOREST, "descend=20"},
      {CC_TS_FOREST, "descend=1000000,descend_apart=1000000"},
      {CC_TS_FOREST, "descend=10,descend_apart=1,wolves=10,polish=5"},
      {CC_TS_BAYES, NULL},
      {CC_TS_FOREST, "clip=0.5"},
      {CC_TS_BAYES, "gp_kernel=2,gp_steps=0,pairs=66"},
      {CC_TS_BAYES, "gp_kernel=1,gp_steps=2,clip=0.05,gp_grow=0.5,explore_every=4"},
      {CC_TS_GENETIC, "population=2,mutation=0,tournament=1"},
      {CC_TS_GENETIC, "{\"population\": 40, \"mutation\": 1}"},
      {CC_TS_ILS, "init=1,perturb=64"},
      {CC_TS_ANNEAL, "t_start=2,t_end=2"},
      {CC_TS_ANNEAL, "t_start=0.001"},
      {CC_TS_FOREST, "init=100000,pool=100000"},
      {CC_TS_GENETIC, "population=100000"},
      {CC_TS_ILS, "init=100000"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    for (size_t batch = 1; batch <= 8; batch += 7) {
      double best1, best2;
      size_t n1 = replay_with(r, cases[i].kind, cases[i].options, 5, 30, batch, a, &best1);
      size_t n2 = replay_with(r, cases[i].kind, cases[i].options, 5, 30, batch, b, &best2);
      if (n1 != 30)
        fail_msg("%s with %s made %zu of 30 proposals", cc_tstrategy_names[cases[i].kind],
                 cases[i].options, n1);
      assert_int_equal(n2, n1);
      assert_memory_equal(a, b, n1 * sizeof *a);
      size_t all = replay_with(r, cases[i].kind, cases[i].options, 5, r->n, batch, a, &best1);
      if (all != r->n)
        fail_msg("%s with %s (batch %zu) proposed %zu of the space's %zu",
                 cc_tstrategy_names[cases[i].kind], cases[i].options, batch, all, r->n);
      assert_true(best1 == r->optimum);
    }
  /* The options are heard: a forest of 1 tree over a pool of 1 searches otherwise. */
  double best;
  replay_with(r, CC_TS_FOREST, NULL, 9, 40, 1, a, &best);
  replay_with(r, CC_TS_FOREST, "trees=1,pool=1,neighbours_of=0", 9, 40, 1, b, &best);
  assert_memory_not_equal(a, b, 40 * sizeof *a);
  free(a);
  free(b);
  cc_trecording_free(r);
  free(json);
}

/* The distinct pairs of values (of any two parameters) among the first n configurations. */
static size_t pairs_covered(const cc_trecording *r, const uint64_t *order, size_t n) {
  size_t np = r->dom.nparams, count = 0, *a = calloc(np, sizeof *a), *b = calloc(np, sizeof *b);
  for (size_t i = 0; i < n; i++) {
    cc_tdom_digits(&r->dom, order[i], a);
    for (size_t p = 0; p < np; p++)
      for (size_t q = p + 1; q < np; q++) {
        size_t before = 0;
        for (size_t j = 0; j < i && !before; j++) {
          cc_tdom_digits(&r->dom, order[j], b);
          before = a[p] == b[p] && a[q] == b[q];
        }
        count += !before;
      }
  }
  free(a);
  free(b);
  return count;
}

/* pair_doubt: a candidate whose value pairs were never measured is less certain, so a
 * forest that trusts its trees alone (tree_doubt=0, no exploring or additive turns) spreads
 * over more pairs of values with it than without it. */
static void pair_doubt_spreads_the_search(void **state) {
  (void)state;
  char *json = make_recording(12, 12, 7, 4, 100, 0);
  cc_trecording *r = read_recording(json);
  uint64_t *a = calloc(r->n, sizeof *a);
  size_t plain = 0, doubt = 0;
  double best;
  for (uint64_t seed = 1; seed <= 5; seed++) {
    replay_with(r, CC_TS_FOREST, "tree_doubt=0,explore_every=0,additive_every=0", seed, 40, 1, a,
                &best);
    plain += pairs_covered(r, a, 40);
    replay_with(r, CC_TS_FOREST, "tree_doubt=0,explore_every=0,additive_every=0,pair_doubt=4", seed,
                40, 1, a, &best);
    doubt += pairs_covered(r, a, 40);
  }
  if (doubt <= plain) fail_msg("pairs covered: %zu with pair_doubt, %zu without", doubt, plain);
  free(a);
  cc_trecording_free(r);
  free(json);
}

/* The forest's pair features: the ratio and product of two positive numeric parameters as
 * ranks, no pair for a parameter with a zero, a text value or one value, none past the limit;
 * a pair's importance split between its parameters. */
static void pair_features_rank_ratios_and_products(void **state) {
  (void)state;
  /* a: 16 32 64; b: 8 16; c: 0 1 (a zero); d: one text value; e: 2 4 */
  static const size_t sizes[] = {3, 2, 2, 1, 2}, offset[] = {0, 3, 5, 7, 8};
  const double num[] = {16, 32, 64, 8, 16, 0, 1, NAN, 2, 4};
  cc_tdom d = {5, sizes, num, offset, 3 * 2 * 2 * 2, NULL, NULL, NULL};
  cc_tfeat f;
  assert_int_equal(cc_tfeat_open(&d, 3, &f), CUCORE_OK);
  assert_int_equal(f.nraw, 5);
  assert_int_equal(f.n, 5 + 2 * 3); /* pairs (a, b), (a, e), (b, e) */
  double row[11];
  /* a = 32, b = 16, c = 1, d, e = 2: a / b = 2 (log2 1: rank 1 of 0..3), a * b = 512 (log2 9:
   * rank 2 of 7..10); a / e = 16 (log2 4: rank 2 of 2..5), a * e = 64 (log2 6: rank 1 of
   * 5..8); b / e = 8 (log2 3: of 1, 2, 3: rank 2), b * e = 32 (log2 5: of 4, 5, 6: rank 1) */
  const size_t digits[] = {1, 1, 1, 0, 0};
  cc_tfeat_row(&f, &d, digits, row);
  const double want[] = {1, 1, 1, 0, 0, 1, 2, 2, 1, 2, 1};
  for (size_t k = 0; k < 11; k++)
    if (row[k] != want[k]) fail_msg("feature %zu: %g, expected %g", k, row[k], want[k]);
  const size_t levels[] = {3, 2, 2, 1, 2, 4, 4, 4, 4, 3, 3};
  for (size_t k = 0; k < 11; k++) assert_int_equal(f.levels[k], levels[k]);
  double imp[11] = {0.1, 0, 0, 0, 0, 0.4, 0, 0, 0, 0, 0.5}, per[5];
  cc_tfeat_fold(&f, imp, per);
  assert_true(fabs(per[0] - 0.3) < 1e-12 && fabs(per[1] - 0.45) < 1e-12);
  assert_true(per[2] == 0 && per[3] == 0 && fabs(per[4] - 0.25) < 1e-12);
  cc_tfeat_close(&f);
  assert_int_equal(cc_tfeat_open(&d, 2, &f), CUCORE_OK); /* 3 pairs past a limit of 2 */
  assert_int_equal(f.n, 5);
  cc_tfeat_close(&f);
  cc_tfeat_close(&f); /* twice is fine */
}

/* 1 when configurations a and b differ in exactly one parameter. */
static int one_apart(const cc_tdom *d, uint64_t a, uint64_t b) {
  size_t diff = 0;
  for (size_t p = d->nparams; p-- > 0;) {
    diff += a % d->sizes[p] != b % d->sizes[p];
    a /= d->sizes[p], b /= d->sizes[p];
  }
  return diff == 1;
}

/* polish: each of the budget's last proposals is a Hamming neighbour of the best measured
 * before it, while the best has a neighbour never proposed (one proposal at a time). */
static void polish_ends_on_the_best_neighbours(void **state) {
  (void)state;
  char *json = make_recording(10, 10, 6, 7, 100, 1);
  cc_trecording *r = read_recording(json);
  const cc_tdom *d = &r->dom;
  uint64_t *a = calloc(r->n, sizeof *a);
  double best;
  size_t checked = 0;
  for (uint64_t seed = 1; seed <= 4; seed++) {
    assert_int_equal(replay_with(r, CC_TS_FOREST, "polish=8", seed, 40, 1, a, &best), 40);
    for (size_t i = 32; i < 40; i++) {
      uint64_t at = 0; /* the best measured before proposal i */
      double t = INFINITY;
      for (size_t j = 0; j < i; j++) {
        double tj = r->time[cc_trecording_find(r, a[j])];
        if (tj < t) t = tj, at = a[j];
      }
      size_t fresh = 0; /* its neighbours in the space never proposed before i */
      for (uint64_t x = 0; x < 10 * 10 * 2; x++) {
        if (cc_trecording_find(r, x) < 0 || !one_apart(d, x, at)) continue;
        int before = 0;
        for (size_t j = 0; j < i; j++) before |= a[j] == x;
        fresh += !before;
      }
      if (!fresh) continue;
      checked++;
      if (!one_apart(d, a[i], at))
        fail_msg("seed %llu, proposal %zu: %llu is no neighbour of the best %llu",
                 (unsigned long long)seed, i, (unsigned long long)a[i], (unsigned long long)at);
    }
  }
  assert_true(checked >= 16);
  free(a);
  cc_trecording_free(r);
  free(json);
}

/* A domain of `np` parameters of 2 values each: every configuration valid, rank = index. */
static int all_valid(void *ctx, const size_t *digits) { return (void)ctx, (void)digits, 1; }
static void rank_is_index(void *ctx, uint64_t r, size_t *digits) {
  const cc_tdom *d = ctx;
  cc_tdom_digits(d, r, digits);
}

/* The forest's search of the domain d, its times a fixed function of the index: the
 * proposals into order. */
static void replay_domain(const cc_tdom *d, const char *options, uint64_t budget, uint64_t *order) {
  cc_tsearch *s = NULL;
  assert_ok(cc_tsearch_open(d, CC_TS_FOREST, options, 3, budget, &s));
  size_t n = 0;
  while (n < budget && cc_tsearch_propose(s, &order[n], 1) == 1) {
    uint64_t x = order[n++];
    assert_ok(cc_tsearch_observe(s, x, 1.0 + (double)((x * 2654435761u) % 1000) / 100.0));
  }
  assert_int_equal(n, budget);
  cc_tsearch_close(s);
}

/* The defaults are the same on a space of 8 parameters of several values and of 7:
 * tree_doubt 1, pair_doubt 0, polish 0 (the settings for many parameters are options). */
static void defaults_hold_on_many_parameters(void **state) {
  (void)state;
  static const size_t sizes[] = {2, 2, 2, 2, 2, 2, 2, 2, 1};
  static const size_t offset[] = {0, 2, 4, 6, 8, 10, 12, 14, 16};
  double num[17];
  for (size_t i = 0; i < 17; i++) num[i] = (double)(i % 2);
  uint64_t a[40], b[40];
  for (size_t np = 9; np >= 8; np--) { /* 8 parameters of 2 values, then 7 (and one of 1) */
    size_t sz[9];
    memcpy(sz, sizes, sizeof sz);
    if (np == 8) sz[7] = 1;
    cc_tdom d = {9, sz, num, offset, 0, NULL, all_valid, rank_is_index};
    d.count = 1;
    for (size_t p = 0; p < 9; p++) d.count *= sz[p];
    d.ctx = &d;
    replay_domain(&d, NULL, 40, a);
    replay_domain(&d, "tree_doubt=1,pair_doubt=0,polish=0,wolves=0,wolf_every=0", 40, b);
    assert_memory_equal(a, b, sizeof a);
    replay_domain(&d, "tree_doubt=0.5,pair_doubt=1,polish=4", 40, b);
    assert_memory_not_equal(a, b, sizeof a);
  }
}

/* wolves, descend: the budget's last proposals are the pack's or the descent's; the ones
 * before them are the same as without the option, and theirs differ (one proposal at a time,
 * and in batches). */
static void wolves_take_the_last_proposals(void **state) {
  (void)state;
  char *json = make_recording(10, 10, 6, 7, 100, 1);
  cc_trecording *r = read_recording(json);
  uint64_t *a = calloc(r->n, sizeof *a), *b = calloc(r->n, sizeof *b);
  double best;
  static const char *const phases[] = {"wolves=16", "descend=16,descend_apart=1"};
  for (size_t k = 0; k < 2; k++)
    for (size_t batch = 1; batch <= 8; batch *= 8) {
      size_t differ = 0;
      for (uint64_t seed = 1; seed <= 4; seed++) {
        assert_int_equal(replay_with(r, CC_TS_FOREST, NULL, seed, 48, batch, a, &best), 48);
        assert_int_equal(replay_with(r, CC_TS_FOREST, phases[k], seed, 48, batch, b, &best), 48);
        assert_memory_equal(a, b, 32 * sizeof *a);
        differ += memcmp(a + 32, b + 32, 16 * sizeof *a) != 0;
      }
      if (differ < 3) fail_msg("%s, batch %zu: %zu of 4 seeds differ", phases[k], batch, differ);
    }
  free(a);
  free(b);
  cc_trecording_free(r);
  free(json);
}

/* The Gaussian process: its predictions at the rows it was fitted to come back close to their
 * targets with a small standard deviation, and far from them its doubt is larger; no standard
 * deviation is above the prior's (cc_tgp_sd_max). */
static void a_gaussian_process_interpolates(void **state) {
  (void)state;
  static const size_t levels[3] = {6, 5, 2};
  double x[18 * 3], y[18];
  size_t n = 0;
  for (size_t a = 0; a < 6; a++)
    for (size_t b = 0; b < 5; b += 2) {
      x[n * 3] = (double)a, x[n * 3 + 1] = (double)b, x[n * 3 + 2] = (double)((a + b) % 2);
      y[n] = 0.3 * (double)a + 0.1 * (double)(b * b) - 0.5 * x[n * 3 + 2];
      n++;
    }
  for (int kernel = 0; kernel < 3; kernel++)
    for (int steps = 0; steps <= 40; steps += 40) {
      cc_tgp *g = NULL;
      cc_tgp_options o = {(cc_tgp_kernel)kernel, 1};
      assert_ok(cc_tgp_open(3, &o, &g));
      assert_ok(cc_tgp_fit(g, x, y, n, levels, steps));
      double worst = 0, sd_in = 0, mean, sd;
      for (size_t i = 0; i < n; i++) {
        double alone;
        cc_tgp_predict(g, &x[i * 3], &alone, NULL); /* the mean alone: the same */
        cc_tgp_predict(g, &x[i * 3], &mean, &sd);
        assert_true(alone == mean && sd <= cc_tgp_sd_max(g));
        worst = fabs(mean - y[i]) > worst ? fabs(mean - y[i]) : worst;
        sd_in = sd > sd_in ? sd : sd_in;
      }
      const double far[3] = {0, 1, 1}; /* b odd: never fitted */
      cc_tgp_predict(g, far, &mean, &sd);
      assert_true(sd <= cc_tgp_sd_max(g)); /* the bound the scoring relies on */
      print_message("kernel %d, %d steps: worst error %.4f, sd at the rows <= %.4f, away %.4f\n",
                    kernel, steps, worst, sd_in, sd);
      if (worst > 0.1 || sd_in > 0.2 || sd <= sd_in)
        fail_msg("kernel %d, %d steps: error %g, sd %g at the rows, %g away", kernel, steps, worst,
                 sd_in, sd);
      double total = 0;
      for (size_t j = 0; j < 3; j++) total += cc_tgp_relevance(g)[j];
      assert_true(fabs(total - 1) < 1e-9);
      cc_tgp_free(g);
    }
}

/* Past CC_TGP_MAX_ROWS rows a fit keeps the fastest half of that and the most recent others:
 * the fastest row is predicted close to its target. */
static void a_gaussian_process_keeps_its_rows_bounded(void **state) {
  (void)state;
  static const size_t levels[2] = {20, 20};
  size_t n = CC_TGP_MAX_ROWS + 100;
  double *x = calloc(2 * n, sizeof *x), *y = calloc(n, sizeof *y);
  for (size_t i = 0; i < n; i++) {
    double a = (double)(i % 20), b = (double)((i * 7) % 20);
    x[2 * i] = a, x[2 * i + 1] = b, y[i] = 0.05 * (a - 3) * (a - 3) + 0.02 * (b - 11) * (b - 11);
  }
  cc_tgp *g = NULL;
  cc_tgp_options o = {CC_TGP_L1, 0.5};
  assert_ok(cc_tgp_open(2, &o, &g));
  assert_ok(cc_tgp_fit(g, x, y, n, levels, 5));
  size_t low = 0; /* the fastest row */
  for (size_t i = 1; i < n; i++) low = y[i] < y[low] ? i : low;
  double mean, sd;
  cc_tgp_predict(g, &x[2 * low], &mean, &sd);
  print_message("%zu rows: the fastest (%g) predicted %.4f (sd %.4f)\n", n, y[low], mean, sd);
  assert_true(fabs(mean - y[low]) < 0.1 && sd <= cc_tgp_sd_max(g));
  cc_tgp_free(g);
  free(x);
  free(y);
}

/* bayes: the same seed gives the same proposals, one at a time and in batches, within the
 * budget, and they are not the forest's; each refuses the other's own options, named. */
static void the_gaussian_process_keeps_the_rules(void **state) {
  (void)state;
  char *json = make_recording(10, 10, 6, 7, 100, 1);
  cc_trecording *r = read_recording(json);
  uint64_t *a = calloc(r->n, sizeof *a), *b = calloc(r->n, sizeof *b);
  double best;
  for (size_t batch = 1; batch <= 8; batch *= 8) {
    assert_int_equal(replay_with(r, CC_TS_BAYES, NULL, 11, 40, batch, a, &best), 40);
    assert_int_equal(replay_with(r, CC_TS_BAYES, NULL, 11, 40, batch, b, &best), 40);
    assert_memory_equal(a, b, 40 * sizeof *a);
    assert_int_equal(replay_with(r, CC_TS_FOREST, NULL, 11, 40, batch, b, &best), 40);
    assert_memory_not_equal(a, b, 40 * sizeof *a);
  }
  cc_tsearch *s = NULL;
  cc_begin(); /* a new call: not the message an earlier test's refusal kept */
  assert_status(cc_tsearch_open(&r->dom, CC_TS_BAYES, "trees=8", 1, 10, &s),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "bayes has no option `trees`");
  cc_begin();
  assert_status(cc_tsearch_open(&r->dom, CC_TS_FOREST, "gp_grow=0.5", 1, 10, &s),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "forest has no option `gp_grow`");
  assert_null(s);
  free(a);
  free(b);
  cc_trecording_free(r);
  free(json);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_cache_file_is_read_with_failures_and_costs),
      cmocka_unit_test(a_malformed_cache_file_is_refused),
      cmocka_unit_test(every_strategy_keeps_the_rules),
      cmocka_unit_test(learned_results_are_not_proposed),
      cmocka_unit_test(a_simulation_counts_and_clocks),
      cmocka_unit_test(strategy_options_are_read_and_checked),
      cmocka_unit_test(options_keep_the_rules),
      cmocka_unit_test(pair_doubt_spreads_the_search),
      cmocka_unit_test(pair_features_rank_ratios_and_products),
      cmocka_unit_test(polish_ends_on_the_best_neighbours),
      cmocka_unit_test(defaults_hold_on_many_parameters),
      cmocka_unit_test(wolves_take_the_last_proposals),
      cmocka_unit_test(a_gaussian_process_interpolates),
      cmocka_unit_test(the_gaussian_process_keeps_the_rules),
      cmocka_unit_test(a_gaussian_process_keeps_its_rows_bounded),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
