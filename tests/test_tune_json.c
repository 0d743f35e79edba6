/* test_tune_json.c -- search spaces from Kernel Tuner's tune_kernel() keywords as JSON, the
 * strict reader underneath (errors with line and column), and the occupancy model's verdict
 * and score per compiled configuration. */
#include "support.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "tune/strict_json.h"
#include "tune/space_file.h"

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

/* ---- Kernel Tuner's files as Kernel Tuner reads them ----------------------------------- */

static cucore_tune_space *space_of(const char *json) {
  cucore_tune_space *s = NULL;
  cucore_status st = cucore_tune_space_from_json(json, 0, &s);
  if (st != CUCORE_OK) fail_msg("`%s` refused: %s", json, cucore_last_error());
  return s;
}

static void config_of(cucore_tune_space *s, uint64_t i, cucore_tune_config *c) {
  assert_ok(cucore_tune_space_get_config(s, i, c));
  if (c->verdict != CUCORE_TUNE_RUNNABLE)
    fail_msg("configuration %llu: %s", (unsigned long long)i, c->reason);
}

static void refused(const char *json, const char *want) {
  cucore_tune_space *s = (cucore_tune_space *)1;
  cucore_status st = cucore_tune_space_from_json(json, 0, &s);
  if (st == CUCORE_OK) fail_msg("`%s` was read; expected: %s", json, want);
  assert_int_equal(CUCORE_CODE(st), CUCORE_INVALID_ARGUMENT);
  assert_null(s);
  assert_contains(cucore_last_error(), want);
}

static void text_of(cucore_tune_space *s, uint64_t i, cucore_tune_text what, const char *want) {
  char buf[256];
  assert_ok(cucore_tune_space_get_config_text(s, i, what, buf, sizeof buf, NULL));
  assert_string_equal(buf, want);
}

/* examples/cuda-c++/vector_add_defines.py: a template kernel whose argument is a parameter
 * written as a word ("vector_add<float, block_size_x>"), defines={} (nothing #defined). */
static void kernel_name_with_parameters(void **state) {
  (void)state;
  cucore_tune_space *s = space_of(
      "{\"kernel_name\": \"vector_add<float, block_size_x>\", \"problem_size\": 10000000,\n"
      " \"tune_params\": {\"block_size_x\": [128, 192, 256]}, \"defines\": {}}");
  text_of(s, 0, CUCORE_TUNE_TEXT_KERNEL, "vector_add<float, 128>");
  text_of(s, 2, CUCORE_TUNE_TEXT_KERNEL, "vector_add<float, 256>");
  cucore_tune_config c;
  config_of(s, 1, &c);
  assert_int_equal(c.grid[0], (10000000 + 191) / 192);
  const cucore_tune_define *d;
  size_t n;
  int given;
  assert_ok(cucore_tune_space_get_defines(s, &d, &n, &given));
  assert_int_equal(n, 0);
  assert_int_equal(given, 1);
  cucore_tune_space_destroy(s);
  /* A name with cucore's {holes} is taken as it is; a word that is no parameter stays. */
  s = space_of("{\"kernel_name\": \"k<{B}, B2>\", \"tune_params\": {\"B\": [1, 2]}}");
  text_of(s, 1, CUCORE_TUNE_TEXT_KERNEL, "k<2, B2>");
  cucore_tune_space_destroy(s);
  s = space_of("{\"kernel_name\": \"k<B, B2>\", \"tune_params\": {\"B\": [1, 2], \"B2\": [7]}}");
  text_of(s, 1, CUCORE_TUNE_TEXT_KERNEL, "k<2, 7>");
  cucore_tune_space_destroy(s);
}

/* examples/cuda/reduction.py: problem_size "num_blocks" with grid_div_x=[] (no division):
 * the grid is num_blocks whatever the block. */
static void grid_div_rules(void **state) {
  (void)state;
  cucore_tune_space *s = space_of(
      "{\"kernel_name\": \"sum_floats\", \"problem_size\": \"num_blocks\", \"grid_div_x\": [],\n"
      " \"tune_params\": {\"block_size_x\": [32, 64], \"num_blocks\": [32, 1024]}}");
  cucore_tune_config c;
  config_of(s, 3, &c); /* block 64, 1024 blocks */
  assert_int_equal(c.block[0], 64);
  assert_int_equal(c.grid[0], 1024);
  config_of(s, 0, &c);
  assert_int_equal(c.grid[0], 32);
  cucore_tune_space_destroy(s);
  /* Nested lists multiply, a null factor is 1; Kernel Tuner's int() cuts a fraction
   * (64 / 3 -> 21: ceil(1000 / 21) = 48). */
  s = space_of(
      "{\"problem_size\": [1000, 1000], \"tune_params\": {\"block_size_x\": [64]},\n"
      " \"grid_div_x\": \"block_size_x/3\", \"grid_div_y\": [[\"block_size_x\"], null, 2]}");
  config_of(s, 0, &c);
  assert_int_equal(c.grid[0], 48);
  assert_int_equal(c.grid[1], (1000 + 127) / 128);
  cucore_tune_space_destroy(s);
  /* Without grid_div_x and without a block_size_x parameter Kernel Tuner divides by 1
   * (params.get("block_size_x", 1)), not by the default block of 256. */
  s = space_of("{\"problem_size\": 1000, \"tune_params\": {\"REPS\": [1, 2]}}");
  config_of(s, 0, &c);
  assert_int_equal(c.block[0], 256);
  assert_int_equal(c.grid[0], 1000);
  cucore_tune_space_destroy(s);
  /* examples/cuda/spmv.py: grid_div_x ["block_size_x/threads_per_row"]. */
  s = space_of("{\"problem_size\": 4096, \"grid_div_x\": [\"block_size_x/threads_per_row\"],\n"
               " \"tune_params\": {\"block_size_x\": [32, 64], \"threads_per_row\": [1, 32]}}");
  config_of(s, 3, &c);
  assert_int_equal(c.grid[0], 4096 / 2);
  cucore_tune_space_destroy(s);
  refused("{\"problem_size\": 4096.5}", "`problem_size` must be an integer or a string, found "
                                        "4096.5 (line 1, column 18)");
  refused("{\"problem_size\": [1, 2, 3, 4]}", "`problem_size` must have 1 to 3 dimensions");
  refused("{\"problem_size\": 8, \"grid_div_x\": [true]}",
          "`grid_div_x[0]` must be an integer or a string, found a boolean");
}

/* A typo is refused naming the nearest key; Kernel Tuner's other keywords are accepted and
 * recorded with the reason they change nothing; those that would are refused. */
static void unknown_and_ignored_keys(void **state) {
  (void)state;
  refused("{\"tune_param\": {\"a\": [1, 2]}}",
          "unknown key `tune_param` in the space file (line 1, column 2); did you mean "
          "`tune_params`?");
  refused("{\"tune_params\": {\"a\": [1, 2]},\n  \"restriction\": [\"a > 1\"]}",
          "unknown key `restriction` in the space file (line 2, column 3); did you mean "
          "`restrictions`?");
  refused("{\"compiler_option\": []}", "did you mean `compiler_options`?");
  refused("{\"smem_args\": {\"sise\": 4}}",
          "unknown key `sise` in `smem_args` (line 1, column 16); "
          "did you mean `size`?");
  refused("{\"zzzzzzzz\": 1}", "neither a tune_kernel() keyword of Kernel Tuner");
  refused("{\"cmem_args\": {\"c\": {\"type\": \"f32\", \"value\": [1]}}}",
          "unknown key `value` in `cmem_args.c`");
  refused("{\"texmem_args\": {\"t\": [1]}}", "texture memory arguments are not supported");
  refused("{\"lang\": \"OpenCL\"}", "cucore tunes CUDA kernels only");
  refused("{\"objective\": \"GFLOP/s\"}", "cucore ranks configurations by time only");
  refused("{\"objective_higher_is_better\": true}", "lower is better");
  refused("{\"objectives\": {\"time\": false, \"energy\": false}}", "only {\"time\": false}");
  cucore_tune_space *s = space_of(
      "{\"tune_params\": {\"a\": [1]}, \"kernel_source\": \"k.cu\", \"answer\": [null],\n"
      " \"verify\": null, \"lang\": \"cupy\", \"objective\": \"time\", \"iterations\": 32,\n"
      " \"grid_div_y\": null, \"texmem_args\": {}, \"strategy\": \"random_sample\"}");
  const cucore_tune_ignored_key *k;
  size_t n;
  assert_ok(cucore_tune_space_get_ignored_keys(s, &k, &n));
  static const char *const want[] = {"kernel_source", "answer", "iterations",
                                     "strategy",      "lang",   "objective"};
  assert_int_equal(n, CC_ARRAY_LEN(want));
  for (size_t i = 0; i < n; i++) {
    assert_string_equal(k[i].key, want[i]);
    assert_true(k[i].reason && k[i].reason[0]);
  }
  assert_contains(k[1].reason, "cucore_expect");
  cucore_tune_space_destroy(s);
  assert_ok(cucore_tune_space_create(&s));
  assert_ok(cucore_tune_space_get_ignored_keys(s, &k, &n));
  assert_int_equal(n, 0);
  cucore_tune_space_destroy(s);
  assert_status(cucore_tune_space_get_ignored_keys(NULL, &k, &n), CUCORE_INVALID_ARGUMENT);
}

/* compiler_options, defines (rendered per configuration: parameters' names replaced as whole
 * words), cmem_args as `cucore run --global` specs, smem_args' size. */
static void keys_that_reach_the_compile(void **state) {
  (void)state;
  cucore_tune_space *s = space_of(
      "{\"tune_params\": {\"block_size_x\": [128, 256], \"T\": [\"float\", \"double\"]},\n"
      " \"compiler_options\": [\"-std=c++17\", \"--use_fast_math\"],\n"
      " \"defines\": {\"BLOCK\": \"block_size_x\", \"TYPE\": \"T\", \"HALF\": \"block_size_x/2\",\n"
      "   \"WORDS\": \"block_size_x_2 + Tx + T\", \"PI\": 3.14, \"ON\": true},\n"
      " \"cmem_args\": {\"d_filter\": {\"type\": \"float32\", \"values\": [1, 2.5]},\n"
      "   \"n\": {\"type\": \"i32\", \"values\": 5}, \"table\": \"f32[]=@t.bin\"},\n"
      " \"smem_args\": {\"size\": \"block_size_x*4\"}, \"problem_size\": 1024}");
  const char *const *opt;
  size_t n;
  assert_ok(cucore_tune_space_get_compiler_options(s, &opt, &n));
  assert_int_equal(n, 2);
  assert_string_equal(opt[1], "--use_fast_math");
  const cucore_tune_define *d;
  int given;
  assert_ok(cucore_tune_space_get_defines(s, &d, &n, &given));
  assert_int_equal(n, 6);
  assert_int_equal(given, 1);
  assert_string_equal(d[2].name, "HALF");
  assert_string_equal(d[2].text, "block_size_x/2");
  assert_int_equal(d[4].literal, 1);
  size_t digits[2];
  cc_tval vals[2];
  cc_tune_values(s, 3, vals, digits); /* block_size_x 256, T double */
  static const char *const want[] = {"256",  "double", "256/2", "block_size_x_2 + Tx + double",
                                     "3.14", "true"};
  for (size_t i = 0; i < n; i++) {
    char *t;
    size_t len;
    assert_ok(cc_tune_define_render(s, digits, i, &t, &len));
    assert_string_equal(t, want[i]);
    assert_int_equal(len, strlen(want[i]));
    free(t);
  }
  char *t = (char *)1;
  assert_status(cc_tune_define_render(s, digits, 6, &t, NULL), CUCORE_INVALID_ARGUMENT);
  assert_null(t);
  assert_ok(cucore_tune_space_get_cmem_args(s, &opt, &n));
  assert_int_equal(n, 3);
  assert_string_equal(opt[0], "d_filter=f32[2]={1,2.5}");
  assert_string_equal(opt[1], "n=i32:5");
  assert_string_equal(opt[2], "table=f32[]=@t.bin");
  cucore_tune_config c;
  config_of(s, 2, &c);
  assert_int_equal(c.smem, 256 * 4);
  cucore_tune_space_destroy(s);
  assert_ok(cucore_tune_space_create(&s)); /* built by calls: none of these */
  assert_ok(cucore_tune_space_get_defines(s, &d, &n, &given));
  assert_int_equal(n + (size_t)given, 0);
  assert_ok(cucore_tune_space_get_cmem_args(s, &opt, &n));
  assert_int_equal(n, 0);
  cucore_tune_space_destroy(s);
  refused("{\"smem\": \"64\", \"smem_args\": {\"size\": 64}}",
          "both give the dynamic shared memory");
  refused("{\"cmem_args\": {\"c\": [1, 2]}}", "a list of numbers without a type");
  refused("{\"cmem_args\": {\"c\": {\"type\": \"i32\", \"values\": [1.5]}}}",
          "`cmem_args.c.values[0]` must be an integer for an integer type, found 1.5");
  refused("{\"cmem_args\": {\"c\": {\"type\": \"f33\", \"values\": 1}}}",
          "`cmem_args.c.type` must be");
  refused("{\"defines\": {\"1X\": \"2\"}}",
          "`defines.1X`: the name of a define must be a C identifier");
  refused("{\"defines\": {\"X\": \"a\\nb\"}}", "`defines.X` holds a control character");
  refused("{\"defines\": {\"X\": [1]}}", "`defines.X` must be a string");
  refused("{\"compiler_options\": \"-O3\"}", "`compiler_options` must be a list of strings");
  refused("{\"compiler_options\": [\"\"]}", "`compiler_options[0]` must be one compiler option");
}

/* Values: booleans and strings as text; an array, an object or null names the parameter and
 * the index. */
static void parameter_values(void **state) {
  (void)state;
  cucore_tune_space *s = space_of(
      "{\"tune_params\": {\"flag\": [true, false], \"T\": [\"float\", \"double\"]}}");
  uint64_t raw;
  assert_ok(cucore_tune_space_get_size(s, &raw));
  assert_int_equal(raw, 4);
  text_of(s, 0, CUCORE_TUNE_TEXT_PARAMS, "flag=true T=float");
  text_of(s, 3, CUCORE_TUNE_TEXT_PARAMS, "flag=false T=double");
  cucore_tune_space_destroy(s);
  refused("{\"tune_params\": {\"a\": [1, [2]]}}",
          "value 1 of `tune_params.a` (`tune_params.a[1]`) is an array; expected a number, a "
          "string or a boolean (line 1, column 27)");
  refused("{\"tune_params\": {\"a\": [null]}}", "(`tune_params.a[0]`) is null");
  refused("{\"tune_params\": {\"a\": [{}]}}", "(`tune_params.a[0]`) is an object");
  refused("{\"tune_params\": {\"a\": []}}", "`tune_params.a` (line 1, column 23): "
                                            "parameter `a` has no values");
}

/* TuningSchema T1 as Kernel Tuner's own test file writes it (test/test_T1_input.json,
 * shortened): Python comprehensions, ProblemSize and GridDivX/Y (Kernel Tuner's launch),
 * CompilerOptions, and keys the schema has that change nothing here. */
static const char *T1_KT =
    "{\"General\": {\"BenchmarkName\": \"convolution\", \"OutputFormat\": \"JSON\"},\n"
    " \"ConfigurationSpace\": {\"TuningParameters\": [\n"
    "  {\"Name\": \"filter_width\", \"Type\": \"int\", \"Values\": \"[i for i in range(3,35,2)]\","
    " \"Default\": 17},\n"
    "  {\"Name\": \"block_size_x\", \"Type\": \"int\", \"Values\": \"[16*i for i in range(1,9)]\","
    " \"Default\": 16},\n"
    "  {\"Name\": \"block_size_y\", \"Type\": \"int\", \"Values\": \"[2**i for i in range(6)]\"},\n"
    "  {\"Name\": \"tile_size_x\", \"Type\": \"int\", \"Values\": \"[i for i in range(1,9)]\"},\n"
    "  {\"Name\": \"use_padding\", \"Type\": \"int\", \"Values\": \"[0, 1]\"},\n"
    "  {\"Name\": \"T\", \"Type\": \"string\", \"Values\": \"['float', 'double']\"}],\n"
    "  \"Conditions\": [{\"Expression\": \"use_padding==0 or (block_size_x % 32 != 0)\",\n"
    "                  \"Parameters\": [\"use_padding\", \"block_size_x\"]}]},\n"
    " \"KernelSpecification\": {\"Language\": \"CUDA\", \"CompilerOptions\": [\"-std=c++11\"],\n"
    "  \"KernelName\": \"convolution_kernel\", \"KernelFile\": \"convolution.cu\",\n"
    "  \"GlobalSizeType\": \"CUDA\", \"LocalSize\": {\"X\": \"block_size_x\", \"Y\": \"1\"},\n"
    "  \"GlobalSize\": {\"X\": \"(262144 // block_size_x) // tile_size_x\"},\n"
    "  \"GridDivX\": [\"block_size_x\", \"tile_size_x\"], \"GridDivY\": [],\n"
    "  \"ProblemSize\": [4096, 4096], \"SharedMemory\": 0, \"Stream\": null,\n"
    "  \"Arguments\": [{\"Name\": \"out\", \"Type\": \"float\", \"MemoryType\": \"Vector\"}]}}";

static void tuning_schema_t1_as_kernel_tuner(void **state) {
  (void)state;
  cucore_tune_space *s = space_of(T1_KT);
  uint64_t raw;
  assert_ok(cucore_tune_space_get_size(s, &raw));
  assert_int_equal(raw, 16 * 8 * 6 * 8 * 2 * 2);
  text_of(s, 0, CUCORE_TUNE_TEXT_PARAMS,
          "filter_width=3 block_size_x=16 block_size_y=1 tile_size_x=1 use_padding=0 T=float");
  text_of(s, raw - 1, CUCORE_TUNE_TEXT_PARAMS,
          "filter_width=33 block_size_x=128 block_size_y=32 tile_size_x=8 use_padding=1 T=double");
  cucore_tune_config c;
  config_of(s, 2 * 2 * 8 * 6 + 2 * 2 * 8 + 2 * 2 * 2, &c); /* bsx 32, bsy 2, tile_x 3 */
  assert_int_equal(c.block[0], 32);
  assert_int_equal(c.block[1], 2);
  assert_int_equal(c.grid[0], (4096 + 95) / 96);
  assert_int_equal(c.grid[1], 4096 / 2); /* GridDivY [] is the default: block_size_y */
  const char *const *opt;
  size_t n;
  assert_ok(cucore_tune_space_get_compiler_options(s, &opt, &n));
  assert_int_equal(n, 1);
  assert_string_equal(opt[0], "-std=c++11");
  const cucore_tune_ignored_key *k;
  assert_ok(cucore_tune_space_get_ignored_keys(s, &k, &n));
  int seen_default = 0, seen_local = 0;
  for (size_t i = 0; i < n; i++) {
    seen_default += strcmp(k[i].key, "ConfigurationSpace.TuningParameters[].Default") == 0;
    seen_local += strcmp(k[i].key, "KernelSpecification.LocalSize") == 0;
  }
  assert_int_equal(seen_default, 1);
  assert_int_equal(seen_local, 1);
  cucore_tune_space_destroy(s);
  /* KTT's reading without ProblemSize: GlobalSizeType CUDA makes GlobalSize the grid. */
  s = space_of("{\"ConfigurationSpace\": {\"TuningParameters\": [{\"Name\": \"B\", \"Type\": "
               "\"int\", \"Values\": \"list(range(32, 129, 32))\"},\n"
               " {\"Name\": \"F\", \"Type\": \"bool\", \"Values\": \"[True, False]\"},\n"
               " {\"Name\": \"W\", \"Type\": \"float\", \"Values\": \"[0.5*i for i in range(1, 4) "
               "if i != 2]\"}]},\n"
               " \"KernelSpecification\": {\"KernelName\": \"k\", \"GlobalSizeType\": \"CUDA\",\n"
               "  \"LocalSize\": {\"X\": \"B\"}, \"GlobalSize\": {\"X\": \"min(B, 64)\"}}}");
  assert_ok(cucore_tune_space_get_size(s, &raw));
  assert_int_equal(raw, 4 * 2 * 2);
  text_of(s, raw - 1, CUCORE_TUNE_TEXT_PARAMS, "B=128 F=false W=1.5");
  text_of(s, 0, CUCORE_TUNE_TEXT_PARAMS, "B=32 F=true W=0.5");
  config_of(s, raw - 1, &c);
  assert_int_equal(c.block[0], 128);
  assert_int_equal(c.grid[0], 64);
  cucore_tune_space_destroy(s);
}

static void t1_errors(void **state) {
  (void)state;
  refused("{\"ConfigurationSpace\": {\"TuningParameters\": [{\"Name\": \"a\", \"Valeus\": "
          "\"[1]\"}]}}",
          "unknown key `Valeus` in `ConfigurationSpace.TuningParameters[0]` (line 1, column 60); "
          "did you mean `Values`?");
  refused("{\"ConfigurationSpace\": {\"TuningParameters\": []},\n \"KernelSpecification\": "
          "{\"KernelNmae\": \"k\"}}",
          "did you mean `KernelName`?");
  refused("{\"ConfigurationSpace\": {\"TuningParameters\": []}, \"Budgets\": []}",
          "did you mean `Budget`?");
  refused("{\"ConfigurationSpace\": {\"TuningParameters\": [{\"Name\": \"a\", \"Type\": \"long\", "
          "\"Values\": \"[1]\"}]}}",
          "`ConfigurationSpace.TuningParameters[0].Type` must be one of int");
  refused("{\"ConfigurationSpace\": {\"TuningParameters\": [{\"Name\": \"a\", \"Values\": "
          "\"range(0, 1000000)\"}]}}",
          "range() makes more than 16384 values");
  refused("{\"ConfigurationSpace\": {\"TuningParameters\": [{\"Name\": \"a\", \"Values\": "
          "\"[2**i for i in range(4)] + [1]\"}]}}",
          "text after the values");
  refused("{\"ConfigurationSpace\": {\"TuningParameters\": []}, \"KernelSpecification\": "
          "{\"Language\": \"OpenCL\"}}",
          "cucore tunes CUDA kernels only");
  /* A LocalSize expression far longer than a fixed buffer: refused with the limit named (it
   * once wrote past a 1024-byte buffer). */
  size_t big = 5000;
  char *doc = malloc(big + 256);
  assert_non_null(doc);
  int at = snprintf(doc, 256,
                    "{\"ConfigurationSpace\": {\"TuningParameters\": []}, "
                    "\"KernelSpecification\": {\"LocalSize\": {\"X\": \"");
  memset(doc + at, '1', big);
  snprintf(doc + at + big, 64, "\", \"Y\": \"2\"}}}");
  refused(doc, "a number out of range"); /* read whole (no 1 KB cut), then refused */
  free(doc);
}

/* Messages say where; names far longer than a message are cut visibly, never silently. */
static void messages_say_where(void **state) {
  (void)state;
  char doc[600];
  memset(doc, 0, sizeof doc);
  strcpy(doc, "{\n\n   \"");
  memset(doc + strlen(doc), 'q', 400);
  strcat(doc, "\": 1}");
  refused(doc, "(line 3, column 4)");
  refused(doc, "qqq...");
  refused("{\"restrictions\": [\"a >\"]}", "`restrictions[0]` (line 1, column 19): restriction "
                                           "`a >`");
  refused("{\"tune_params\": {\"a\": 3}}", "`tune_params.a` must be an array of numbers, strings "
                                           "or booleans, found a number (line 1, column 23)");
}

/* Every allocation of reading a rich file failing in turn: a refusal each time (never a
 * crash or, under ASan, a leak). Without parameters: cucore_tune_space_add_param's own
 * out-of-memory path (space.c) is not this file's to test. */
static void allocation_failures(void **state) {
  (void)state;
  static const char *const docs[] = {
      "{\"kernel_name\": \"k<T, B>\", \"problem_size\": [\"4 * 4\", 64],\n"
      " \"restrictions\": [], \"grid_div_x\": [\"2\", [2]], \"grid_div_y\": [],\n"
      " \"compiler_options\": [\"-O3\"], \"defines\": {\"X\": \"B+1\", \"Y\": 2},\n"
      " \"cmem_args\": {\"c\": {\"type\": \"f32\", \"values\": [1, 2]}, \"d\": \"i32:4\"},\n"
      " \"smem_args\": {\"size\": \"8 * 8\"}, \"answer\": [1], \"lang\": \"CUDA\",\n"
      " \"cucore_args\": [\"out:f32[4]\"], \"atol\": 0.1}",
      "{\"General\": {}, \"ConfigurationSpace\": {\"TuningParameters\": [],\n"
      " \"Conditions\": [{\"Expression\": \"1 < 2\", \"Parameters\": []}]},\n"
      " \"KernelSpecification\": {\"Language\": \"CUDA\", \"CompilerOptions\": [\"-O3\"],\n"
      "  \"KernelName\": \"k\", \"KernelFile\": \"k.cu\", \"LocalSize\": {\"X\": \"32\"},\n"
      "  \"GlobalSize\": {\"X\": \"4096\", \"Y\": 2}, \"SharedMemory\": 64}}"};
  for (size_t d = 0; d < CC_ARRAY_LEN(docs); d++) {
    cc_test_alloc_hook(1, 0);
    cucore_tune_space *s = NULL;
    assert_ok(cucore_tune_space_from_json(docs[d], 0, &s));
    long total = cc_test_alloc_count();
    cc_test_alloc_hook(0, 0);
    cucore_tune_space_destroy(s);
    assert_true(total > 40);
    for (long k = 1; k <= total; k++) {
      cc_test_alloc_hook(1, k);
      s = (cucore_tune_space *)1;
      cucore_status st = cucore_tune_space_from_json(docs[d], 0, &s);
      cc_test_alloc_hook(0, 0);
      if (st == CUCORE_OK) {
        cucore_tune_space_destroy(s);
        continue;
      }
      assert_null(s);
      assert_true(CUCORE_CODE(st) == CUCORE_HOST_OUT_OF_MEMORY ||
                  CUCORE_CODE(st) == CUCORE_INVALID_ARGUMENT);
    }
  }
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
      cmocka_unit_test(kernel_name_with_parameters),
      cmocka_unit_test(grid_div_rules),
      cmocka_unit_test(unknown_and_ignored_keys),
      cmocka_unit_test(keys_that_reach_the_compile),
      cmocka_unit_test(parameter_values),
      cmocka_unit_test(tuning_schema_t1_as_kernel_tuner),
      cmocka_unit_test(t1_errors),
      cmocka_unit_test(messages_say_where),
      cmocka_unit_test(allocation_failures),
      cmocka_unit_test(model_verdicts_and_score),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
