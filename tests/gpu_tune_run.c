/* gpu_tune_run.c -- cucore_tune_run() on the GPU (label gpu): a kernel whose best
 * configuration is known by construction (REPS dependent multiply-adds per thread, the output
 * the same for every REPS) wins; an in-place kernel verified in every configuration (its
 * buffer restored before each check); two configurations that each write half of the output
 * both fail verification with poison, and nothing wins. */
#include "gpu_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define N 4096

static char db[96];

static cucore_status bind(void *user, cucore_object *obj, const char *symbol,
                          const cucore_devptr *ptrs, cucore_args *args) {
  (void)obj, (void)symbol;
  size_t nbufs = *(const size_t *)user;
  cucore_status st = CUCORE_OK;
  for (size_t i = 0; i < nbufs && st == CUCORE_OK; i++)
    st = cucore_args_set_ptr(args, (int)i, ptrs[i]);
  return st == CUCORE_OK ? cucore_args_set_i32(args, (int)nbufs, N) : st;
}

static cucore_tune_space *space_of(const char *src, const char *param, const char *param2) {
  cucore_tune_space *s = NULL;
  assert_ok(cucore_tune_space_create(&s));
  assert_ok(cucore_tune_space_parse_param(s, param, CUCORE_TUNE_PARAM_AUTO));
  if (param2) assert_ok(cucore_tune_space_parse_param(s, param2, CUCORE_TUNE_PARAM_AUTO));
  assert_ok(cucore_tune_space_set_expr(s, CUCORE_TUNE_PROBLEM_SIZE, "4096"));
  assert_ok(cucore_tune_space_set_kernel(s, "work"));
  assert_ok(cucore_tune_space_set_source(s, src, strlen(src)));
  return s;
}

static cucore_tune_report *run(cucore_tune_space *s, const cucore_tune_buffer *b, size_t *nb,
                               int poison, cucore_tune_summary *sum) {
  cucore_tune_run_options o = CUCORE_TUNE_RUN_DEFAULTS;
  o.store_path = db;
  o.fresh = 1;
  o.poison = poison;
  o.user = nb;
  o.bind = bind;
  cucore_tune_report *r = NULL;
  assert_ok(cucore_tune_run(s, NULL, b, *nb, &o, &r));
  assert_ok(cucore_tune_report_get_summary(r, sum));
  return r;
}

static const char *slow_src =
    "extern \"C\" __global__ void work(const float *x, float *y, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i >= n) return;\n"
    "  float v = x[i];\n"
    "  for (int r = 0; r < REPS * 4096; r++) v = v * 0.999f + 0.5f;\n"
    "  y[i] = x[i] + (v == -1.0f ? 1.0f : 0.0f);\n"
    "}\n";

static void best_known_by_construction(void **state) {
  (void)state;
  float *x = malloc(N * sizeof *x);
  assert_non_null(x);
  for (int i = 0; i < N; i++) x[i] = (float)i;
  cucore_tune_buffer b[2] = {{"x", CUCORE_TUNE_IN, CUCORE_TUNE_ELEM_FLOAT, 4, N, x},
                             {"y", CUCORE_TUNE_OUT, CUCORE_TUNE_ELEM_FLOAT, 4, N, NULL}};
  size_t nb = 2;
  cucore_tune_space *s = space_of(slow_src, "REPS=16,4,1", "block_size_x=128,256");
  cucore_tune_summary sum;
  cucore_tune_report *r = run(s, b, &nb, 0, &sum);
  free(x);
  assert_int_equal(sum.measured, 6);
  assert_int_equal(sum.wrong + sum.failed, 0);
  assert_true(sum.have_best);
  cucore_tune_row best;
  assert_ok(cucore_tune_report_get_row(r, sum.best, &best));
  assert_int_equal(best.status, CUCORE_TUNE_OK);
  assert_true(best.config.index >= 4); /* REPS=1 (the last value): configurations 4 and 5 */
  assert_true(best.stats.median > 0);
  cucore_tune_report_destroy(r);
  cucore_tune_space_destroy(s);
}

static const char *inplace_src = "extern \"C\" __global__ void work(float *y, int n) {\n"
                                 "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                 "  if (i < n) y[i] = y[i] * 2.0f + 1.0f;\n"
                                 "}\n";

static void in_place_verified(void **state) {
  (void)state;
  float *y = malloc(N * sizeof *y);
  assert_non_null(y);
  for (int i = 0; i < N; i++) y[i] = (float)i;
  cucore_tune_buffer b = {"y", CUCORE_TUNE_INOUT, CUCORE_TUNE_ELEM_FLOAT, 4, N, y};
  size_t nb = 1;
  cucore_tune_space *s = space_of(inplace_src, "block_size_x=64,128,256,512", NULL);
  cucore_tune_summary sum;
  cucore_tune_report *r = run(s, &b, &nb, 1, &sum);
  free(y);
  assert_int_equal(sum.measured, 4); /* each saw the restored input: all equal the first */
  assert_int_equal(sum.wrong + sum.failed, 0);
  assert_true(sum.have_best);
  cucore_tune_report_destroy(r);
  cucore_tune_space_destroy(s);
}

static const char *half_src = "extern \"C\" __global__ void work(float *y, int n) {\n"
                              "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                              "  if (i < n && i % 2 == HALF) y[i] = 1.0f;\n"
                              "}\n";

static void halves_both_fail(void **state) {
  (void)state;
  cucore_tune_buffer b = {"y", CUCORE_TUNE_OUT, CUCORE_TUNE_ELEM_FLOAT, 4, N, NULL};
  size_t nb = 1;
  cucore_tune_space *s = space_of(half_src, "HALF=0,1", "block_size_x=256");
  cucore_tune_summary sum;
  cucore_tune_report *r = run(s, &b, &nb, 1, &sum);
  assert_int_equal(sum.wrong, 2);
  assert_int_equal(sum.measured, 0);
  assert_false(sum.have_best);
  for (size_t i = 0; i < sum.rows; i++) {
    cucore_tune_row row;
    assert_ok(cucore_tune_report_get_row(r, i, &row));
    assert_int_equal(row.status, CUCORE_TUNE_WRONG_ANSWER);
    assert_contains(row.detail, "of 4096 elements were never written");
  }
  cucore_tune_report_destroy(r);
  cucore_tune_space_destroy(s);
}

int main(void) {
  if (!cucore_test_have_gpu()) return CUCORE_TEST_SKIP;
  snprintf(db, sizeof db, "/tmp/cucore-gpu-tune-run-%d.jsonl", (int)getpid());
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(best_known_by_construction),
      cmocka_unit_test(in_place_verified),
      cmocka_unit_test(halves_both_fail),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  unlink(db);
  return rc;
}
