/* test_tune_json.c -- search spaces from Kernel Tuner's tune_kernel() keywords as JSON, the
 * strict reader underneath (errors with line and column), and the occupancy model's verdict
 * and score per compiled configuration. */
#include "support.h"

#include <math.h>
#include <stdio.h>

#include "tune/json.h"

/* Kernel Tuner's matmul example (examples/cuda/matmul.py), as JSON: 3*6*3*3 = 162 raw.
 * Restrictions: bsx == bsy*tile_y... here bsx*bsy >= 64 and <= 1024 as in the research's
 * sketch, and tile_x <= 4. Pairs (bsx, bsy) with 64 <= bsx*bsy <= 1024: of the 18 pairs, 3 are
 * below 64 ((16,1) (16,2) (32,1)) and 1 above ((64,32)), so 14; tile_x in {1,2,4} (8 refused)
 * and tile_y 3 values: 14 * 3 * 3 = 126 after restrictions. Grid x = ceil(4096 / (bsx *
 * tile_x)), y = ceil(4096 / (bsy * tile_y)). */
static const char *MATMUL =
    "{ \"kernel_name\": \"matmul_kernel\", \"kernel_source\": \"matmul.cu\",\n"
    "  \"problem_size\": [4096, 4096],\n"
    "  \"tune_params\": { \"block_size_x\": [16, 32, 64], \"block_size_y\": [1, 2, 4, 8, 16, 32],\n"
    "                   \"tile_size_x\": [1, 2, 4, 8], \"tile_size_y\": [1, 2, 4] },\n"
    "  \"restrictions\": [\"block_size_x*block_size_y >= 64\",\n"
    "                   \"block_size_x*block_size_y <= 1024\", \"tile_size_x <= 4\"],\n"
    "  \"grid_div_x\": [\"block_size_x\", \"tile_size_x\"],\n"
    "  \"grid_div_y\": [\"block_size_y\", \"tile_size_y\"],\n"
    "  \"smem\": \"4*(block_size_y*tile_size_y*16 + block_size_x*tile_size_x*16)\",\n"
    "  \"atol\": 1e-3, \"answer\": {\"0\": \"@C_ref.npy\"} }";

static void kernel_tuner_keywords(void **state) {
  (void)state;
  cucore_tune_space *s = NULL;
  assert_ok(cucore_tune_space_from_json(MATMUL, 0, &s));
  cucore_tune_counts c;
  assert_ok(cucore_tune_space_count(s, &c));
  assert_int_equal(c.raw, 3 * 6 * 4 * 3);
  assert_int_equal(c.after_restrictions, 14 * 3 * 3);
  /* config 0 of the kept ones: bsx=16, bsy=4, tile_x=1, tile_y=1: index = ((0*6+2)*4+0)*3+0 */
  cucore_tune_config cfg;
  assert_ok(cucore_tune_space_get_config(s, 24, &cfg));
  assert_int_equal(cfg.verdict, CUCORE_TUNE_RUNNABLE);
  assert_int_equal(cfg.block[0], 16);
  assert_int_equal(cfg.block[1], 4);
  assert_int_equal(cfg.grid[0], 4096 / 16);
  assert_int_equal(cfg.grid[1], 4096 / 4);
  assert_int_equal(cfg.smem, 4 * (4 * 16 + 16 * 16));
  char buf[64];
  assert_ok(
      cucore_tune_space_get_config_text(s, 24, CUCORE_TUNE_TEXT_KERNEL, buf, sizeof buf, NULL));
  assert_string_equal(buf, "matmul_kernel");
  cucore_tune_space_destroy(s);
}

/* TuningSchema T1 (a BAT-style GEMM fragment): MWG in [16, 32, 64] (a JSON list), NWG from
 * "[2**i for i in range(4, 7)]" = 16, 32, 64, KWG from "range(8, 33, 8)" = 8, 16, 24, 32;
 * condition MWG <= NWG keeps the 6 of 9 (MWG, NWG) pairs with MWG <= NWG: 6 * 4 = 24 of 36.
 * LocalSize X = MWG / 4 (an expression), GlobalSize X = 4096: block 4 for MWG 16, grid
 * ceil(4096 / 4) = 1024. */
static const char *T1 =
    "{\"ConfigurationSpace\": {\"TuningParameters\": [\n"
    "   {\"Name\": \"MWG\", \"Type\": \"int\", \"Values\": \"[16, 32, 64]\"},\n"
    "   {\"Name\": \"NWG\", \"Type\": \"int\", \"Values\": \"[2**i for i in range(4, 7)]\"},\n"
    "   {\"Name\": \"KWG\", \"Type\": \"int\", \"Values\": \"range(8, 33, 8)\"}],\n"
    "  \"Conditions\": [{\"Parameters\": [\"MWG\", \"NWG\"], \"Expression\": \"MWG <= NWG\"}]},\n"
    " \"KernelSpecification\": {\"Language\": \"CUDA\", \"KernelName\": \"gemm\",\n"
    "  \"LocalSize\": {\"X\": \"MWG / 4\", \"Y\": \"1\", \"Z\": \"1\"},\n"
    "  \"GlobalSize\": {\"X\": 4096, \"Y\": 1, \"Z\": 1}, \"SharedMemory\": \"KWG * 64\"}}";

static void tuning_schema_t1(void **state) {
  (void)state;
  cucore_tune_space *s = NULL;
  assert_ok(cucore_tune_space_from_json(T1, 0, &s));
  cucore_tune_counts c;
  assert_ok(cucore_tune_space_count(s, &c));
  assert_int_equal(c.raw, 36);
  assert_int_equal(c.after_restrictions, 24);
  cucore_tune_config cfg;
  assert_ok(cucore_tune_space_get_config(s, 0, &cfg)); /* MWG 16, NWG 16, KWG 8 */
  assert_int_equal(cfg.verdict, CUCORE_TUNE_RUNNABLE);
  assert_int_equal(cfg.block[0], 4);
  assert_int_equal(cfg.grid[0], 1024);
  assert_int_equal(cfg.smem, 512);
  char buf[64];
  assert_ok(
      cucore_tune_space_get_config_text(s, 35, CUCORE_TUNE_TEXT_PARAMS, buf, sizeof buf, NULL));
  assert_string_equal(buf, "MWG=64 NWG=64 KWG=32");
  cucore_tune_space_destroy(s);
  assert_status(
      cucore_tune_space_from_json("{\"ConfigurationSpace\": {\"TuningParameters\": "
                                  "[{\"Name\": \"a\", \"Values\": \"__import__('os')\"}]}}",
                                  0, &s),
      CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "Values of `a`");
}

static void json_errors_name_line_and_column(void **state) {
  (void)state;
  static const struct {
    const char *t;
    const char *want;
  } cases[] = {
      {"{\"a\": [1, 2,]}", "line 1, column 13: expected a value"},
      {"{\"a\": 1,\n \"a\": 2}", "line 2, column 5: a key given twice"},
      {"{\"a\": 01}", "leading zero"},
      {"{\"a\": \"x\ty\"}", "a control character"},
      {"{\"a\": 1} x", "text after the end"},
      {"{\"a\": \"\\ud800\"}", "high surrogate"},
      {"{\"a\": tru}", "expected a value"},
      {"{\"a\" 1}", "expected `:`"},
      {"[1, 2", "expected `,` or `]`"},
      {"", "found the end of the text"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    cc_json v;
    char why[256] = "";
    if (cc_json_parse(cases[i].t, strlen(cases[i].t), &v, why, sizeof why) == 0)
      fail_msg("`%s` parsed; expected: %s", cases[i].t, cases[i].want);
    assert_contains(why, cases[i].want);
  }
  char deep[80];
  memset(deep, '[', 40);
  memset(deep + 40, ']', 40);
  cc_json v;
  char why[256];
  assert_int_equal(cc_json_parse(deep, 80, &v, why, sizeof why), -1);
  assert_contains(why, "nested deeper than 32");
  const char *ok = "{\"s\": \"\\u00e9\\ud83d\\ude00\\n\", \"n\": -1.5e2, \"b\": [true, null]}";
  assert_int_equal(cc_json_parse(ok, strlen(ok), &v, why, sizeof why), 0);
  assert_string_equal(cc_json_get(&v, "s")->text, "\xc3\xa9\xf0\x9f\x98\x80\n");
  assert_true(cc_json_get(&v, "n")->number == -150.0);
  assert_string_equal(cc_json_get(&v, "n")->text, "-1.5e2");
  assert_int_equal(cc_json_get(&v, "b")->items[0].boolean, 1);
  cc_json_free(&v);
}

static void space_json_type_errors(void **state) {
  (void)state;
  cucore_tune_space *s = (cucore_tune_space *)1;
  assert_status(cucore_tune_space_from_json("{\"tune_params\": {\"a\": 3}}", 0, &s),
                CUCORE_INVALID_ARGUMENT);
  assert_null(s);
  assert_contains(cucore_last_error(), "`tune_params.a` must be an array");
  assert_status(cucore_tune_space_from_json("{\"tune_params\": {\"a\": [1]}, \"restrictions\":"
                                            " [\"a >\"]}",
                                            0, &s),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "restriction `a >`: column 4");
  assert_status(cucore_tune_space_from_json("[1]", 0, &s), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "must be an object");
  assert_status(cucore_tune_space_from_json("{\"x\": }", 0, &s), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "line 1, column 7");
}

/* A space file's checks: cucore's argument and --expect specs and the tolerances (Kernel
 * Tuner's "atol"); none from a file without them; wrong types named. */
static void space_checks(void **state) {
  (void)state;
  cucore_tune_space *s = NULL;
  cucore_tune_checks k;
  assert_status(cucore_tune_space_from_json(MATMUL, 0, &s), CUCORE_OK);
  assert_status(cucore_tune_space_get_checks(s, &k), CUCORE_OK);
  assert_int_equal(k.nargs, 0);
  assert_int_equal(k.has_atol, 1);
  assert_true(fabs(k.atol - 1e-3) < 1e-15);
  assert_int_equal(k.has_rtol, 0);
  cucore_tune_space_destroy(s);
  const char *doc = "{\"tune_params\": {\"B\": [32, 64]},"
                    " \"cucore_args\": [\"buf:f32[1024]=random\", \"out:f32[1024]\", \"i32:1024\"],"
                    " \"cucore_expect\": [\"1=0\"], \"rtol\": 0.01}";
  assert_status(cucore_tune_space_from_json(doc, 0, &s), CUCORE_OK);
  assert_status(cucore_tune_space_get_checks(s, &k), CUCORE_OK);
  assert_int_equal(k.nargs, 3);
  assert_string_equal(k.args[0], "buf:f32[1024]=random");
  assert_string_equal(k.args[2], "i32:1024");
  assert_int_equal(k.nexpects, 1);
  assert_string_equal(k.expects[0], "1=0");
  assert_int_equal(k.has_rtol, 1);
  assert_true(fabs(k.rtol - 0.01) < 1e-15);
  assert_int_equal(k.has_atol, 0);
  cucore_tune_space_destroy(s);
  assert_status(cucore_tune_space_create(&s), CUCORE_OK);
  assert_status(cucore_tune_space_get_checks(s, &k), CUCORE_OK);
  assert_int_equal(k.nargs + k.nexpects + (size_t)k.has_atol + (size_t)k.has_rtol, 0);
  cucore_tune_space_destroy(s);
  s = (cucore_tune_space *)1;
  assert_status(cucore_tune_space_from_json("{\"cucore_args\": \"buf:f32[4]\"}", 0, &s),
                CUCORE_INVALID_ARGUMENT);
  assert_null(s);
  assert_contains(cucore_last_error(), "`cucore_args` must be an array of strings");
  assert_status(cucore_tune_space_from_json("{\"cucore_args\": [\"\"]}", 0, &s),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "`cucore_args[0]` must be a non-empty string");
  assert_status(cucore_tune_space_from_json("{\"atol\": -1}", 0, &s), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "`atol` must be a number >= 0, found -1");
  assert_status(cucore_tune_space_get_checks(NULL, &k), CUCORE_INVALID_ARGUMENT);
}

/* sm_90 with 132 SMs. A 256-thread block with 32 registers: 8 warps; registers per warp 1024,
 * per block 8192 -> 8 blocks; warps 64/8 = 8; so 8 blocks/SM, occupancy 1.0. A grid of 1584
 * blocks = 1.5 waves of 1056: tail efficiency 1584 / (2 * 1056) = 0.75, score 0.75. With 255
 * registers (a warp takes 8192, 8 warps 65536 = the block limit: 1 block of 8 warps, occupancy
 * 0.125). A 1024-thread block of 128 registers needs 131072 > 65536: cannot run. */
static void model_verdicts_and_score(void **state) {
  (void)state;
  cucore_arch_limits lim;
  assert_ok(cucore_arch_get_limits(90, &lim));
  lim.sm_count = 132;
  cucore_kernel_resources res = CUCORE_KERNEL_RESOURCES_INIT;
  res.registers = 32;
  cucore_tune_config cfg = {.verdict = CUCORE_TUNE_RUNNABLE,
                            .grid = {1584, 1, 1},
                            .block = {256, 1, 1}};
  cucore_tune_model m;
  assert_ok(cucore_tune_model_check(&lim, &res, 0, NULL, &cfg, &m));
  assert_int_equal(m.blocks_per_sm, 8);
  assert_true(fabs(m.occupancy - 1.0) < 1e-9);
  assert_true(fabs(m.waves - 1.5) < 1e-9);
  assert_true(fabs(m.tail_efficiency - 0.75) < 1e-9);
  assert_true(fabs(m.score - 0.75) < 1e-9);
  assert_ok(cucore_tune_model_check(&lim, &res, 16, NULL, &cfg, &m));
  assert_true(fabs(m.score - 0.375) < 1e-9); /* local memory halves it */
  cucore_tune_filter f = {.no_spills = 1};
  assert_ok(cucore_tune_model_check(&lim, &res, 16, &f, &cfg, &m));
  assert_int_equal(cfg.verdict, CUCORE_TUNE_MODEL_REJECTED);
  assert_contains(cfg.reason, "16 bytes of local memory");
  cfg.verdict = CUCORE_TUNE_RUNNABLE;
  res.registers = 255;
  f = (cucore_tune_filter){.min_occupancy = 0.25};
  assert_ok(cucore_tune_model_check(&lim, &res, 0, &f, &cfg, &m));
  assert_int_equal(m.blocks_per_sm, 1);
  assert_int_equal(cfg.verdict, CUCORE_TUNE_MODEL_REJECTED);
  assert_contains(cfg.reason, "occupancy 0.125");
  cfg.verdict = CUCORE_TUNE_RUNNABLE;
  cfg.block[0] = 1024;
  res.registers = 128;
  assert_ok(cucore_tune_model_check(&lim, &res, 0, NULL, &cfg, &m));
  assert_int_equal(m.blocks_per_sm, 0);
  assert_true(m.score == 0);
  assert_int_equal(cfg.verdict, CUCORE_TUNE_MODEL_REJECTED);
  assert_contains(cfg.reason, "register");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(kernel_tuner_keywords),
      cmocka_unit_test(tuning_schema_t1),
      cmocka_unit_test(json_errors_name_line_and_column),
      cmocka_unit_test(space_json_type_errors),
      cmocka_unit_test(space_checks),
      cmocka_unit_test(model_verdicts_and_score),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
