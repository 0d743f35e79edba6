/* test_tune_stats.c -- the numbers of tune timing: statistics (numpy's percentiles), when
 * screening stops, and ranking with ties resolved by the lower index whatever the order of
 * the measurements. Expected values are computed by hand in the comments. */
#include "support.h"
#include "tune/measure.h" /* cc_tune_race_stop */

#include <math.h>

#define NEAR(a, b) assert_true(fabs((a) - (b)) < 1e-9)

/* 5 samples 1..5 (given unsorted): median 3, p20 = 1 + 0.8*(2-1) = 1.8, p80 = 4.2, mean 3,
 * sample stddev sqrt(10/4) = 1.5811..., rel 0.52704... */
static void statistics(void **state) {
  (void)state;
  const double s[] = {4, 1, 5, 3, 2};
  cucore_tune_stats st;
  assert_ok(cucore_tune_stats_compute(s, 5, &st));
  assert_int_equal(st.n, 5);
  NEAR(st.min, 1);
  NEAR(st.max, 5);
  NEAR(st.median, 3);
  NEAR(st.p20, 1.8);
  NEAR(st.p80, 4.2);
  NEAR(st.mean, 3);
  NEAR(st.rel_stddev, sqrt(2.5) / 3);
  assert_true(s[0] == 4); /* the input is not sorted in place */
  const double two[] = {1, 2};
  assert_ok(cucore_tune_stats_compute(two, 2, &st));
  NEAR(st.median, 1.5);
  assert_ok(cucore_tune_stats_compute(two, 1, &st));
  NEAR(st.rel_stddev, 0);
  assert_status(cucore_tune_stats_compute(s, 0, &st), CUCORE_INVALID_ARGUMENT);
  const double bad[] = {1, NAN};
  assert_status(cucore_tune_stats_compute(bad, 2, &st), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "sample 1");
}

static void screening_stops(void **state) {
  (void)state;
  cucore_tune_timing_options o = CUCORE_TUNE_TIMING_DEFAULTS;
  cucore_tune_stats st = {.n = 9, .rel_stddev = 0.001};
  int done = -1;
  assert_ok(cucore_tune_screen_done(&st, 100, &o, &done));
  assert_int_equal(done, 0); /* 9 < 10 samples */
  st.n = 10;
  assert_ok(cucore_tune_screen_done(&st, 4.9, &o, &done));
  assert_int_equal(done, 0); /* 4.9 ms < 5 ms */
  assert_ok(cucore_tune_screen_done(&st, 5, &o, &done));
  assert_int_equal(done, 1);
  st.rel_stddev = 0.05;
  assert_ok(cucore_tune_screen_done(&st, 50, &o, &done));
  assert_int_equal(done, 0); /* noisy: go on */
  st.n = 200;
  assert_ok(cucore_tune_screen_done(&st, 50, &o, &done));
  assert_int_equal(done, 1); /* the sample cap */
  st.n = 20;
  assert_ok(cucore_tune_screen_done(&st, 200, &o, &done));
  assert_int_equal(done, 1); /* the time cap */
}

/* Medians 1.00 (noise 5 %: +-0.05), 0.98 (1 %), 1.20, 0.50 (1 %), 0.52 (1 %).
 * By median: 3 (0.50), 4 (0.52), 1, 0, 2. 4 is 0.02 slower than 3, within neither 3's
 * 0.005 nor 4's 0.0052: no tie; 3 wins. Making 3's noise 10 % (0.05) makes 4 a tie; the lower
 * index (3) still wins. Then with 4 faster than 3 and a tie, 3 wins again: the same choice
 * whichever of the two measured faster. */
static void ranking_and_ties(void **state) {
  (void)state;
  cucore_tune_stats s[5] = {{.median = 1.00, .rel_stddev = 0.05},
                            {.median = 0.98, .rel_stddev = 0.01},
                            {.median = 1.20, .rel_stddev = 0.01},
                            {.median = 0.50, .rel_stddev = 0.01},
                            {.median = 0.52, .rel_stddev = 0.01}};
  size_t order[5], ties = 99;
  assert_ok(cucore_tune_rank(s, 5, order, &ties));
  assert_int_equal(ties, 0);
  const size_t want[] = {3, 4, 1, 0, 2};
  for (int i = 0; i < 5; i++) assert_int_equal(order[i], want[i]);
  s[3].rel_stddev = 0.10;
  assert_ok(cucore_tune_rank(s, 5, order, &ties));
  assert_int_equal(ties, 1);
  assert_int_equal(order[0], 3);
  s[3].median = 0.53;
  assert_ok(cucore_tune_rank(s, 5, order, &ties));
  assert_int_equal(ties, 1);
  assert_int_equal(order[0], 3); /* 4 measured faster, but they tie: the lower index */
  assert_int_equal(order[1], 4);
  s[3].rel_stddev = 0.001;
  s[4].rel_stddev = 0.001;
  assert_ok(cucore_tune_rank(s, 5, order, &ties));
  assert_int_equal(order[0], 4); /* no tie any more: the faster one */
  /* Noiseless medians 0.6 % apart still tie (CUCORE_TUNE_TIE_FLOOR): the lower index. */
  s[3].median = 0.503, s[4].median = 0.500;
  s[3].rel_stddev = s[4].rel_stddev = 0;
  assert_ok(cucore_tune_rank(s, 5, order, &ties));
  assert_int_equal(ties, 1);
  assert_int_equal(order[0], 3);
  s[3].median = 0.506; /* 1.2 % apart: the faster one */
  assert_ok(cucore_tune_rank(s, 5, order, &ties));
  assert_int_equal(ties, 0);
  assert_int_equal(order[0], 4);
}

/* Racing's decisions on synthetic timings: it never stops the best (nor one within the margin
 * of it, nor one whose fastest launch is), it stops what is clearly slower, its margin is at
 * least CUCORE_TUNE_RACE_MARGIN and grows with the best's noise; no best, no racing. */
static void racing_decisions(void **state) {
  (void)state;
  const double best = 4.0; /* ms */
  const double same[] = {4.0, 4.1, 3.99}, near[] = {4.35, 4.39, 4.38};
  const double one_fast[] = {9.0, 4.3, 9.1}, slow[] = {4.5, 4.7, 5.0}, far[] = {8.0, 8.1, 8.0};
  assert_false(cc_tune_race_stop(same, 3, best, 0));
  assert_false(cc_tune_race_stop(near, 3, best, 0)); /* within 10 % */
  assert_false(cc_tune_race_stop(one_fast, 3, best, 0));
  assert_true(cc_tune_race_stop(slow, 3, best, 0));
  assert_true(cc_tune_race_stop(far, 3, best, 0));
  /* never below the least margin (5 % is taken as 10 %: 4.35 stays), ... */
  assert_false(cc_tune_race_stop(near, 3, best, 0.05));
  assert_false(cc_tune_race_stop(slow, 3, best, 3 * 0.05)); /* ...3 x a noisy best's 5 % */
  assert_true(cc_tune_race_stop(far, 3, best, 3 * 0.05));
  assert_false(cc_tune_race_stop(far, 3, 0, 0)); /* no best yet */
  assert_false(cc_tune_race_stop(far, 0, best, 0));
  /* One launch alone screens only past twice the best and the margin. */
  assert_false(cc_tune_race_far(8.0, best, 0)); /* 2 x 1.1 x 4 = 8.8 */
  assert_true(cc_tune_race_far(9.0, best, 0));
  assert_false(cc_tune_race_far(9.0, best, 0.3)); /* a noisy best: 2 x 1.3 x 4 = 10.4 */
  assert_false(cc_tune_race_far(9.0, 0, 0));      /* no best yet */
  /* The best itself, timed again with noise up to +9 %, is never stopped. */
  for (int i = 0; i < 100; i++) {
    double t[3];
    for (int j = 0; j < 3; j++) t[j] = best * (1 + 0.0009 * ((i * 7 + j * 13) % 100));
    assert_false(cc_tune_race_stop(t, 3, best, 0));
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(statistics),
      cmocka_unit_test(screening_stops),
      cmocka_unit_test(ranking_and_ties),
      cmocka_unit_test(racing_decisions),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
