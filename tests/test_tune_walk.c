/* test_tune_walk.c -- a space walked without listing it (space_walk.c) gives what checking
 * every configuration gives: on hundreds of generated spaces (integer and string values,
 * compiled and launch-only parameters, restrictions that are false or cannot be evaluated,
 * launch expressions that fail, block and shared-memory sizes beyond an architecture's limits)
 * the counts of every stage, the first configuration whose restriction failed, the distinct
 * compiles, and the runnable configurations in index order (cucore_tune_space_next_runnable)
 * are those of the configuration-by-configuration check (cucore_tune_space_get_config); so are
 * the neighbours (cucore_tune_space_get_neighbours, Hamming and adjacent) and the samples
 * (cucore_tune_space_sample: runnable only, repeatable by seed, uniform); a search over the
 * live space (search_space.c) proposes runnable configurations only, each once. */
#include "support.h"

#include "tune/search_space.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng_state;

static unsigned rnd(unsigned n) {
  rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
  return (unsigned)((rng_state >> 33) % n);
}

static const char *const INTS[] = {"0", "1", "2", "3", "4", "8", "16", "32", "64", "1024", "2048"};
static const char *const STRS[] = {"'a'", "'bb'", "'float'", "'x'"};
static const char *const RESTR[] = {
    "P0 %% P1 == 0",       "P0 + P1 <= 16",     "P0 != P1", "P0 * 2 > P1 or P2 == 1",
    "P0 // P1 < 3",        "P1 in [0, 2, 8]",   "P2 >= P0", "len(P0) > 1 if P1 else True",
    "P0 == 'a' or P1 > 1", "P2 - P1 * P0 != 4", "P0 <= 32",
};

/* A generated space: up to 6 parameters (a string parameter now and then), each compiled or
 * launch-only, up to 3 restrictions over them, a block size parameter, a grid and shared
 * memory from expressions, and (half the time) sm_90's limits. */
static cucore_tune_space *generate(void) {
  cucore_tune_space *s = NULL;
  assert_ok(cucore_tune_space_create(&s));
  int np = 1 + (int)rnd(6);
  char name[32];
  for (int p = 0; p < np; p++) {
    const char *v[5];
    int nv = 1 + (int)rnd(5), strings = p > 0 && rnd(5) == 0;
    if (strings && nv > 4) nv = 4;
    int start = (int)rnd(strings ? 1 : 11 - (unsigned)nv + 1); /* distinct values: a run */
    for (int i = 0; i < nv; i++) v[i] = strings ? STRS[i] : INTS[start + i];
    snprintf(name, sizeof name, p == 0 && rnd(2) ? "block_size_x" : "P%d", p);
    cucore_tune_param_kind kind = rnd(3) == 0 ? CUCORE_TUNE_PARAM_LAUNCH_ONLY
                                              : CUCORE_TUNE_PARAM_DEFINE;
    assert_ok(cucore_tune_space_add_param(s, name, v, (size_t)nv, kind));
  }
  /* The names the templates use: P0..P2, each an existing parameter. */
  size_t count = 0;
  assert_ok(cucore_tune_space_get_param_count(s, &count));
  const char *names[3];
  for (int i = 0; i < 3; i++) {
    cucore_tune_param_info info;
    assert_ok(cucore_tune_space_get_param(s, rnd((unsigned)count), &info));
    names[i] = info.name;
  }
  int nr = (int)rnd(4);
  for (int r = 0; r < nr; r++) {
    char text[256], out[512];
    size_t len = 0;
    snprintf(text, sizeof text, RESTR[rnd(sizeof RESTR / sizeof *RESTR)], 0);
    for (const char *c = text; *c; c++) { /* P0..P2 replaced by the parameters' names */
      if (c[0] == 'P' && c[1] >= '0' && c[1] <= '2') {
        len += (size_t)snprintf(out + len, sizeof out - len, "%s", names[c[1] - '0']);
        c++;
      } else {
        out[len++] = *c;
      }
    }
    out[len] = '\0';
    cucore_status st = cucore_tune_space_restrict(s, out);
    (void)st; /* a template may not fit the values' kinds: then it is refused, fine */
  }
  char expr[256];
  if (rnd(2)) { /* grid from an expression that can be 0 (a bad launch) or fail */
    snprintf(expr, sizeof expr, "%s * 2, 1", names[1]);
    cucore_tune_space_set_expr(s, CUCORE_TUNE_GRID, expr);
  }
  if (rnd(2)) {
    snprintf(expr, sizeof expr, "%s * 100", names[2]);
    cucore_tune_space_set_expr(s, CUCORE_TUNE_SMEM, expr);
  }
  if (rnd(2)) {
    cucore_arch_limits lim;
    assert_ok(cucore_arch_get_limits(90, &lim));
    lim.shared_per_block_optin = 3000;
    assert_ok(cucore_tune_space_set_limits(s, &lim));
  }
  return s;
}

/* Counts of every configuration checked one by one, as the walk must count them. */
static void brute_counts(const cucore_tune_space *s, cucore_tune_counts *k) {
  memset(k, 0, sizeof *k);
  assert_ok(cucore_tune_space_get_size(s, &k->raw));
  uint64_t *hashes = calloc(k->raw + 1, sizeof *hashes);
  assert_non_null(hashes);
  for (uint64_t i = 0; i < k->raw; i++) {
    cucore_tune_config c;
    assert_ok(cucore_tune_space_get_config(s, i, &c));
    if (c.restriction_failed && k->restriction_errors++ == 0) k->first_restriction_error = i;
    if (c.verdict == CUCORE_TUNE_RESTRICTED) k->restricted += !c.restriction_failed;
    if (c.verdict == CUCORE_TUNE_BAD_LAUNCH) k->bad_launch++;
    if (c.verdict == CUCORE_TUNE_ARCH_LIMIT) k->arch_limit++;
    if (c.verdict != CUCORE_TUNE_RUNNABLE) continue;
    int seen = 0;
    for (uint64_t j = 0; j < k->compiles && !seen; j++) seen = hashes[j] == c.compile_hash;
    if (!seen) hashes[k->compiles++] = c.compile_hash;
    k->runnable++;
  }
  k->after_restrictions = k->raw - k->restricted - k->restriction_errors;
  free(hashes);
}

static void same_counts(const cucore_tune_counts *a, const cucore_tune_counts *b) {
  assert_int_equal(a->raw, b->raw);
  assert_int_equal(a->after_restrictions, b->after_restrictions);
  assert_int_equal(a->runnable, b->runnable);
  assert_int_equal(a->compiles, b->compiles);
  assert_int_equal(a->restricted, b->restricted);
  assert_int_equal(a->bad_launch, b->bad_launch);
  assert_int_equal(a->arch_limit, b->arch_limit);
  assert_int_equal(a->restriction_errors, b->restriction_errors);
  if (a->restriction_errors)
    assert_int_equal(a->first_restriction_error, b->first_restriction_error);
}

/* The runnable configurations from next_runnable, in order, are those get_config passes. */
static void same_order(const cucore_tune_space *s, uint64_t raw) {
  uint64_t at = 0, next = 0;
  for (uint64_t i = 0; i < raw; i++) {
    cucore_tune_config c;
    assert_ok(cucore_tune_space_get_config(s, i, &c));
    if (c.verdict != CUCORE_TUNE_RUNNABLE) continue;
    assert_ok(cucore_tune_space_next_runnable(s, at, &next));
    assert_int_equal(next, i);
    /* and from any index between the previous one and this one */
    uint64_t mid = at + (i - at) / 2;
    assert_ok(cucore_tune_space_next_runnable(s, mid, &next));
    assert_int_equal(next, i);
    at = i + 1;
  }
  assert_status(cucore_tune_space_next_runnable(s, at, &next), CUCORE_NOT_FOUND);
  assert_status(cucore_tune_space_next_runnable(s, raw + 5, &next), CUCORE_NOT_FOUND);
}

static int runnable(const cucore_tune_space *s, uint64_t i) {
  cucore_tune_config c;
  assert_ok(cucore_tune_space_get_config(s, i, &c));
  return c.verdict == CUCORE_TUNE_RUNNABLE;
}

/* The neighbours of a few configurations, both kinds, against checking every configuration:
 * the same ones in the same order (parameter order, then value order). */
static void same_neighbours(const cucore_tune_space *s, uint64_t raw) {
  size_t np = 0;
  assert_ok(cucore_tune_space_get_param_count(s, &np));
  uint64_t got[64], want[64];
  for (uint64_t i = 0; i < raw; i += 1 + raw / 7) {
    for (int kind = 0; kind < 2; kind++) {
      size_t n = 0, nw = 0;
      assert_ok(cucore_tune_space_get_neighbours(s, i, (cucore_tune_neighbours)kind, got, 64, &n));
      uint64_t stride = raw;
      for (size_t p = 0; p < np; p++) {
        cucore_tune_param_info info;
        assert_ok(cucore_tune_space_get_param(s, p, &info));
        stride /= info.value_count;
        uint64_t at = i / stride % info.value_count;
        for (uint64_t v = 0; v < info.value_count; v++) {
          uint64_t j = i - at * stride + v * stride;
          if (v == at || (kind == 1 && v + 1 != at && v != at + 1) || !runnable(s, j)) continue;
          if (nw < 64) want[nw] = j;
          nw++;
        }
      }
      assert_int_equal(n, nw);
      assert_memory_equal(got, want, (n < 64 ? n : 64) * sizeof *got);
    }
  }
}

/* Samples are runnable and repeatable by seed; a search over the live domain proposes only
 * runnable configurations, each once. */
static void samples_and_search(const cucore_tune_space *s, uint64_t runnable_count) {
  uint64_t a[40], b[40];
  if (runnable_count == 0) {
    assert_status(cucore_tune_space_sample(s, 1, 40, a), CUCORE_INVALID_ARGUMENT);
    return;
  }
  assert_ok(cucore_tune_space_sample(s, 9, 40, a));
  assert_ok(cucore_tune_space_sample(s, 9, 40, b));
  assert_memory_equal(a, b, sizeof a);
  for (int i = 0; i < 40; i++) assert_true(runnable(s, a[i]));
  cc_tlive *l = NULL;
  assert_ok(cc_tlive_open(s, &l));
  assert_int_equal(cc_tlive_domain(l)->count, runnable_count);
  cc_tsearch *search = NULL;
  uint64_t budget = runnable_count < 25 ? runnable_count : 25, ask[4], seen[25];
  assert_ok(cc_tsearch_open(cc_tlive_domain(l), CC_TS_FOREST, NULL, 3, budget, &search));
  size_t n = 0, got;
  while ((got = cc_tsearch_propose(search, ask, 4)) > 0)
    for (size_t k = 0; k < got; k++) {
      assert_true(runnable(s, ask[k]));
      for (size_t j = 0; j < n; j++) assert_true(seen[j] != ask[k]);
      seen[n++] = ask[k];
      assert_ok(cc_tsearch_observe(search, ask[k], 1.0 + (double)(ask[k] % 17)));
    }
  assert_int_equal(n, budget);
  cc_tsearch_close(search);
  cc_tlive_close(l);
}

static void walk_matches_checking_each(void **state) {
  (void)state;
  int with_errors = 0, with_limits = 0, with_launch_only = 0;
  for (int t = 0; t < 400; t++) {
    rng_state = (uint64_t)t * 7919u + 17u;
    cucore_tune_space *s = generate();
    cucore_tune_counts walked, each;
    assert_ok(cucore_tune_space_count(s, &walked));
    brute_counts(s, &each);
    same_counts(&walked, &each);
    same_order(s, each.raw);
    same_neighbours(s, each.raw);
    samples_and_search(s, each.runnable);
    with_errors += each.restriction_errors > 0;
    with_limits += each.arch_limit > 0;
    with_launch_only += each.compiles < each.runnable;
    cucore_tune_space_destroy(s);
  }
  /* the generator reached every case it is there for */
  assert_true(with_errors > 5);
  assert_true(with_limits > 5);
  assert_true(with_launch_only > 5);
}

/* Kernel Tuner's convolution example: 3 145 728 raw configurations counted without listing
 * them: the counts Kernel Tuner reports (1 867 776 valid). */
static void convolution_space_counted(void **state) {
  (void)state;
  static const char json[] =
      "{\"kernel_name\": \"convolution_kernel\", \"tune_params\": {"
      "\"filter_height\": [3,5,7,9,11,13,15,17,19,21,23,25,27,29,31,33],"
      "\"filter_width\": [3,5,7,9,11,13,15,17,19,21,23,25,27,29,31,33],"
      "\"block_size_x\": [16,32,48,64,80,96,112,128], \"block_size_y\": [1,2,4,8,16,32],"
      "\"tile_size_x\": [1,2,3,4,5,6,7,8], \"tile_size_y\": [1,2,3,4,5,6,7,8],"
      "\"use_padding\": [0,1], \"read_only\": [0,1]},"
      "\"restrictions\": [\"use_padding==0 or (block_size_x % 32 != 0)\"],"
      "\"problem_size\": [4096, 4096],"
      "\"grid_div_x\": [\"block_size_x\", \"tile_size_x\"],"
      "\"grid_div_y\": [\"block_size_y\", \"tile_size_y\"]}";
  cucore_tune_space *s = NULL;
  assert_ok(cucore_tune_space_from_json(json, sizeof json - 1, &s));
  cucore_tune_counts k;
  assert_ok(cucore_tune_space_count(s, &k));
  assert_int_equal(k.raw, 3145728);
  assert_int_equal(k.after_restrictions, 2359296);
  assert_int_equal(k.runnable, 1867776);
  assert_int_equal(k.compiles, 1867776);
  uint64_t first = 0;
  assert_ok(cucore_tune_space_next_runnable(s, 0, &first));
  assert_int_equal(first, 0);
  /* Sampled through the rank index, never listed: every draw runnable, ranks in order. */
  cc_tlive *l = NULL;
  assert_ok(cc_tlive_open(s, &l));
  assert_true(cc_tlive_indexed(l));
  assert_int_equal(cc_tlive_domain(l)->count, 1867776);
  assert_int_equal(cc_tlive_at_rank(l, 0), 0);
  uint64_t want = 0; /* rank r is the r-th from next_runnable, for the first 2 000 */
  for (uint64_t r = 0; r < 2000; r++) {
    assert_ok(cucore_tune_space_next_runnable(s, r ? want + 1 : 0, &want));
    assert_int_equal(cc_tlive_at_rank(l, r), want);
  }
  /* Across the whole index (the guide's every region): rank r + 1 is the runnable
   * configuration right after rank r, and the last rank is the last runnable one. */
  for (uint64_t r = 0; r + 1 < 1867776; r += 1867776 / 997) {
    uint64_t at = cc_tlive_at_rank(l, r), next = 0;
    assert_ok(cucore_tune_space_next_runnable(s, at + 1, &next));
    assert_int_equal(cc_tlive_at_rank(l, r + 1), next);
  }
  uint64_t last = cc_tlive_at_rank(l, 1867775), after = 0;
  assert_int_not_equal(cucore_tune_space_next_runnable(s, last + 1, &after), CUCORE_OK);
  cc_tlive_close(l);
  uint64_t d[1000];
  assert_ok(cucore_tune_space_sample(s, 11, 1000, d));
  for (int i = 0; i < 1000; i++) assert_true(runnable(s, d[i]));
  cucore_tune_space_destroy(s);
}

/* Samples are uniform over the runnable configurations: a space of 6 x 6 with a restriction
 * (21 runnable), 42 000 draws, each configuration within 12 % of 2 000; and the refusals. */
static void samples_are_uniform(void **state) {
  (void)state;
  cucore_tune_space *s = NULL;
  static const char *const v[] = {"1", "2", "3", "4", "5", "6"};
  assert_ok(cucore_tune_space_create(&s));
  assert_ok(cucore_tune_space_add_param(s, "a", v, 6, CUCORE_TUNE_PARAM_DEFINE));
  assert_ok(cucore_tune_space_add_param(s, "b", v, 6, CUCORE_TUNE_PARAM_DEFINE));
  assert_ok(cucore_tune_space_restrict(s, "a <= b"));
  enum { DRAWS = 42000 };
  uint64_t *d = calloc(DRAWS, sizeof *d);
  unsigned counts[36] = {0};
  assert_ok(cucore_tune_space_sample(s, 5, DRAWS, d));
  for (int i = 0; i < DRAWS; i++) counts[d[i]]++;
  for (uint64_t i = 0; i < 36; i++) {
    if (!runnable(s, i)) {
      assert_int_equal(counts[i], 0);
      continue;
    }
    if (counts[i] < 1760 || counts[i] > 2240)
      fail_msg("configuration %llu drawn %u times of %d (expected ~2000)", (unsigned long long)i,
               counts[i], DRAWS);
  }
  free(d);
  uint64_t out[4];
  size_t n = 0;
  assert_status(cucore_tune_space_get_neighbours(s, 36, CUCORE_TUNE_NEIGHBOURS_HAMMING, out, 4, &n),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "index 36 is past the space's 36");
  assert_status(cucore_tune_space_get_neighbours(s, 0, (cucore_tune_neighbours)7, out, 4, &n),
                CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_tune_space_get_neighbours(s, 0, CUCORE_TUNE_NEIGHBOURS_HAMMING, NULL, 4, &n),
                CUCORE_INVALID_ARGUMENT);
  assert_ok(cucore_tune_space_get_neighbours(s, 0, CUCORE_TUNE_NEIGHBOURS_HAMMING, NULL, 0, &n));
  assert_int_equal(n, 5); /* a = 1: b = 2..6 (a = 2..6 with b = 1 break a <= b) */
  assert_status(cucore_tune_space_sample(s, 1, 3, NULL), CUCORE_INVALID_ARGUMENT);
  assert_ok(cucore_tune_space_restrict(s, "a > b"));
  assert_status(cucore_tune_space_sample(s, 1, 3, out), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "no runnable configuration");
  cucore_tune_space_destroy(s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(walk_matches_checking_each),
      cmocka_unit_test(samples_are_uniform),
      cmocka_unit_test(convolution_space_counted),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
