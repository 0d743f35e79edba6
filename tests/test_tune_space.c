/* test_tune_space.c -- search spaces through the public API: parameters from text and ranges,
 * restrictions, Kernel Tuner's launch conventions (block_size_x/y/z, grid =
 * ceil(problem_size / product of grid_div)), template kernel names and defines, the launch-only
 * parameters that never change a compile, the architecture's limits, and the counts per stage.
 * Every expected count is worked out in the comment above its assertion. */
#include "support.h"

#include <stdio.h>

static cucore_tune_space *space_new(void) {
  cucore_tune_space *s = NULL;
  assert_ok(cucore_tune_space_create(&s));
  return s;
}

static void text_of(cucore_tune_space *s, uint64_t i, cucore_tune_text what, char *buf,
                    size_t cap) {
  assert_ok(cucore_tune_space_get_config_text(s, i, what, buf, cap, NULL));
}

static void params_from_text_and_ranges(void **state) {
  (void)state;
  cucore_tune_space *s = space_new();
  assert_ok(cucore_tune_space_parse_param(s, "bs=32,64,128", CUCORE_TUNE_PARAM_AUTO));
  assert_ok(cucore_tune_space_parse_param(s, "t=1..4", CUCORE_TUNE_PARAM_AUTO));
  assert_ok(cucore_tune_space_parse_param(s, "u=0..10:5", CUCORE_TUNE_PARAM_AUTO));
  assert_ok(cucore_tune_space_parse_param(s, "p=pow2:3..5", CUCORE_TUNE_PARAM_AUTO));
  assert_ok(cucore_tune_space_parse_param(s, "T=float,double", CUCORE_TUNE_PARAM_AUTO));
  uint64_t raw = 0;
  assert_ok(cucore_tune_space_get_size(s, &raw));
  assert_int_equal(raw, 3 * 4 * 3 * 3 * 2); /* u = 0,5,10; p = 8,16,32 */
  char buf[256];
  text_of(s, 0, CUCORE_TUNE_TEXT_PARAMS, buf, sizeof buf);
  assert_string_equal(buf, "bs=32 t=1 u=0 p=8 T=float");
  /* the last parameter varies fastest, as itertools.product numbers them */
  text_of(s, raw - 1, CUCORE_TUNE_TEXT_JSON, buf, sizeof buf);
  assert_string_equal(buf, "{\"bs\":128,\"t\":4,\"u\":10,\"p\":32,\"T\":\"double\"}");
  text_of(s, 1, CUCORE_TUNE_TEXT_PARAMS, buf, sizeof buf);
  assert_string_equal(buf, "bs=32 t=1 u=0 p=8 T=double");
  assert_status(cucore_tune_space_parse_param(s, "bs=1", CUCORE_TUNE_PARAM_AUTO),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "in the space already");
  assert_status(cucore_tune_space_parse_param(s, "q=1,2,1", CUCORE_TUNE_PARAM_AUTO),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "twice");
  assert_status(cucore_tune_space_parse_param(s, "r=5..1", CUCORE_TUNE_PARAM_AUTO),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "not a range");
  assert_status(cucore_tune_space_parse_param(s, "1x=1", CUCORE_TUNE_PARAM_AUTO),
                CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_tune_space_parse_param(s, "novalue", CUCORE_TUNE_PARAM_AUTO),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "NAME=V1,V2");
  assert_ok(cucore_tune_space_destroy(s));
  assert_ok(cucore_tune_space_destroy(NULL));
}

/* Kernel Tuner's matmul example, shrunk: bsx in {16,32,64}, bsy in {1,2,4,8,16,32},
 * restriction bsx*bsy >= 64 and <= 1024. Pairs with bsx*bsy < 64: (16,1) (16,2) (32,1) = 3;
 * above 1024: (64,32) = 2048 -> 1. So 18 raw -> 14 after restrictions. */
static void restrictions_and_counts(void **state) {
  (void)state;
  cucore_tune_space *s = space_new();
  assert_ok(cucore_tune_space_parse_param(s, "block_size_x=16,32,64", CUCORE_TUNE_PARAM_AUTO));
  assert_ok(cucore_tune_space_parse_param(s, "block_size_y=1,2,4,8,16,32", CUCORE_TUNE_PARAM_AUTO));
  assert_ok(cucore_tune_space_restrict(s, "block_size_x*block_size_y >= 64"));
  assert_ok(cucore_tune_space_restrict(s, "block_size_x*block_size_y <= 1024"));
  cucore_tune_counts c;
  assert_ok(cucore_tune_space_count(s, &c));
  assert_int_equal(c.raw, 18);
  assert_int_equal(c.after_restrictions, 14);
  assert_int_equal(c.restricted, 4);
  assert_int_equal(c.runnable, 14);
  assert_int_equal(c.compiles, 14); /* both are defines (no source to say otherwise) */
  cucore_tune_config cfg;
  assert_ok(cucore_tune_space_get_config(s, 0, &cfg)); /* (16, 1) */
  assert_int_equal(cfg.verdict, CUCORE_TUNE_RESTRICTED);
  assert_string_equal(cfg.reason, "restriction 1 is false");
  assert_int_equal(cfg.restriction, 1);
  assert_int_equal(cfg.restriction_failed, 0);
  const char *text = NULL;
  assert_ok(cucore_tune_space_get_restriction(s, cfg.restriction - 1, &text));
  assert_string_equal(text, "block_size_x*block_size_y >= 64");
  assert_ok(cucore_tune_space_get_config(s, 17, &cfg)); /* (64, 32) */
  assert_contains(cfg.reason, "restriction 2");
  assert_int_equal(cfg.restriction, 2);
  assert_string_equal(cucore_tune_verdict_name(cfg.verdict), "restricted");
  assert_status(cucore_tune_space_restrict(s, "block_size_x * bsz > 3"), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "column 16: unknown name `bsz`");
  assert_status(cucore_tune_space_get_config(s, 18, &cfg), CUCORE_INVALID_ARGUMENT);
  cucore_tune_space_destroy(s);
}

/* Kernel Tuner's conventions: block from block_size_x/y; grid_div_x = bsx*tile, so a problem
 * of 1000 x 300 with bsx=32, tile=4, bsy=8 has grid ceil(1000/128) = 8, ceil(300/8) = 38. */
static void launch_follows_kernel_tuner(void **state) {
  (void)state;
  cucore_tune_space *s = space_new();
  assert_ok(cucore_tune_space_parse_param(s, "block_size_x=32", CUCORE_TUNE_PARAM_AUTO));
  assert_ok(cucore_tune_space_parse_param(s, "block_size_y=8", CUCORE_TUNE_PARAM_AUTO));
  assert_ok(cucore_tune_space_parse_param(s, "tile=4", CUCORE_TUNE_PARAM_AUTO));
  assert_ok(cucore_tune_space_set_expr(s, CUCORE_TUNE_PROBLEM_SIZE, "1000, 300"));
  assert_ok(cucore_tune_space_set_expr(s, CUCORE_TUNE_GRID_DIV_X, "block_size_x, tile"));
  assert_ok(cucore_tune_space_set_expr(s, CUCORE_TUNE_SMEM, "block_size_x * tile * 4"));
  cucore_tune_config c;
  assert_ok(cucore_tune_space_get_config(s, 0, &c));
  assert_int_equal(c.verdict, CUCORE_TUNE_RUNNABLE);
  assert_int_equal(c.block[0], 32);
  assert_int_equal(c.block[1], 8);
  assert_int_equal(c.block[2], 1);
  assert_int_equal(c.grid[0], 8);
  assert_int_equal(c.grid[1], 38);
  assert_int_equal(c.grid[2], 1);
  assert_int_equal(c.smem, 512);
  /* explicit expressions win; a comma inside min() is not a separator */
  assert_ok(cucore_tune_space_set_expr(s, CUCORE_TUNE_GRID, "min(132, 1000 // tile), 2"));
  assert_ok(cucore_tune_space_set_expr(s, CUCORE_TUNE_BLOCK, "block_size_x * 2"));
  assert_ok(cucore_tune_space_get_config(s, 0, &c));
  assert_int_equal(c.grid[0], 132);
  assert_int_equal(c.grid[1], 2);
  assert_int_equal(c.block[0], 64);
  assert_int_equal(c.block[1], 1); /* the block expression sets x only */
  assert_status(cucore_tune_space_set_expr(s, CUCORE_TUNE_GRID, "1, 2, 3, 4"),
                CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_tune_space_set_expr(s, CUCORE_TUNE_BLOCK, "32 +"), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "column 5");
  assert_ok(cucore_tune_space_set_expr(s, CUCORE_TUNE_GRID, "block_size_x / 3"));
  assert_ok(cucore_tune_space_get_config(s, 0, &c));
  assert_int_equal(c.verdict, CUCORE_TUNE_BAD_LAUNCH);
  assert_string_equal(c.reason, "grid.x is 10.6667, not a whole number");
  cucore_tune_space_destroy(s);
}

/* sm_90 allows 1024 threads per block and 227 KiB (232448 bytes) of opt-in shared memory. */
static void architecture_limits(void **state) {
  (void)state;
  cucore_tune_space *s = space_new();
  cucore_arch_limits lim;
  assert_ok(cucore_arch_get_limits(90, &lim));
  assert_ok(
      cucore_tune_space_parse_param(s, "block_size_x=256,512,1024,2048", CUCORE_TUNE_PARAM_AUTO));
  assert_ok(cucore_tune_space_parse_param(s, "kb=16,300", CUCORE_TUNE_PARAM_AUTO));
  assert_ok(cucore_tune_space_set_expr(s, CUCORE_TUNE_SMEM, "kb * 1024"));
  assert_ok(cucore_tune_space_set_expr(s, CUCORE_TUNE_GRID, "65536"));
  assert_ok(cucore_tune_space_set_limits(s, &lim));
  cucore_tune_counts c;
  assert_ok(cucore_tune_space_count(s, &c));
  /* 8 raw; 2048 threads: 2 configs out; 300 KiB: the 3 others with kb=300 out */
  assert_int_equal(c.raw, 8);
  assert_int_equal(c.arch_limit, 5);
  assert_int_equal(c.runnable, 3);
  cucore_tune_config cfg;
  assert_ok(cucore_tune_space_get_config(s, 6, &cfg)); /* 2048, 16 */
  assert_int_equal(cfg.verdict, CUCORE_TUNE_ARCH_LIMIT);
  assert_contains(cfg.reason, "block.x = 2048, sm_90 allows 1024");
  assert_ok(cucore_tune_space_get_config(s, 1, &cfg)); /* 256, 300 */
  assert_contains(cfg.reason, "307200 bytes of dynamic shared memory, sm_90 allows 232448");
  assert_ok(cucore_tune_space_set_expr(s, CUCORE_TUNE_GRID, "1, 70000"));
  assert_ok(cucore_tune_space_get_config(s, 0, &cfg));
  assert_contains(cfg.reason, "grid.y = 70000, sm_90 allows 65535");
  cucore_tune_space_destroy(s);
}

/* With the source known, a parameter that is no word of the source and is used by a launch
 * expression is launch-only: 3 x 4 configurations but only 3 compiles. */
static void launch_only_parameters_share_compiles(void **state) {
  (void)state;
  cucore_tune_space *s = space_new();
  assert_ok(cucore_tune_space_parse_param(s, "UNROLL=1,2,4", CUCORE_TUNE_PARAM_AUTO));
  assert_ok(cucore_tune_space_parse_param(s, "nb=1,2,3,4", CUCORE_TUNE_PARAM_AUTO));
  assert_ok(cucore_tune_space_set_expr(s, CUCORE_TUNE_GRID, "nb * 132"));
  assert_ok(cucore_tune_space_set_expr(s, CUCORE_TUNE_BLOCK, "128"));
  assert_ok(cucore_tune_space_set_source(
      s, "__global__ void k(float *x) { for (int i = 0; i < UNROLL; i++) x[i] = 0; }", 0));
  cucore_tune_param_info info;
  assert_ok(cucore_tune_space_get_param(s, 0, &info));
  assert_int_equal(info.kind, CUCORE_TUNE_PARAM_DEFINE);
  assert_ok(cucore_tune_space_get_param(s, 1, &info));
  assert_string_equal(info.name, "nb");
  assert_int_equal(info.kind, CUCORE_TUNE_PARAM_LAUNCH_ONLY);
  cucore_tune_counts c;
  assert_ok(cucore_tune_space_count(s, &c));
  assert_int_equal(c.runnable, 12);
  assert_int_equal(c.compiles, 3);
  char buf[128];
  text_of(s, 5, CUCORE_TUNE_TEXT_DEFINES, buf, sizeof buf); /* UNROLL=2, nb=2 */
  assert_string_equal(buf, "-DUNROLL=2");
  cucore_tune_config a, b;
  assert_ok(cucore_tune_space_get_config(s, 4, &a));
  assert_ok(cucore_tune_space_get_config(s, 7, &b));
  assert_true(a.compile_hash == b.compile_hash);
  assert_int_equal(a.grid[0], 132);
  assert_int_equal(b.grid[0], 528);
  cucore_tune_space_destroy(s);
}

static void template_kernel_names(void **state) {
  (void)state;
  cucore_tune_space *s = space_new();
  assert_ok(cucore_tune_space_parse_param(s, "BM=64,128", CUCORE_TUNE_PARAM_AUTO));
  assert_ok(cucore_tune_space_parse_param(s, "T=float,__half", CUCORE_TUNE_PARAM_AUTO));
  assert_ok(cucore_tune_space_parse_param(s, "S=2,3", CUCORE_TUNE_PARAM_AUTO));
  assert_ok(cucore_tune_space_set_kernel(s, "gemm<{T}, {BM}>"));
  char buf[128];
  text_of(s, 7, CUCORE_TUNE_TEXT_KERNEL, buf, sizeof buf);
  assert_string_equal(buf, "gemm<__half, 128>");
  text_of(s, 7, CUCORE_TUNE_TEXT_DEFINES, buf, sizeof buf);
  assert_string_equal(buf, "-DS=3"); /* BM and T are template arguments, not defines */
  size_t need = 0;
  assert_ok(cucore_tune_space_get_config_text(s, 7, CUCORE_TUNE_TEXT_KERNEL, buf, 5, &need));
  assert_int_equal(need, 17);
  assert_string_equal(buf, "gemm");
  assert_status(cucore_tune_space_set_kernel(s, "gemm<{BM>"), CUCORE_INVALID_ARGUMENT);
  assert_ok(cucore_tune_space_set_kernel(s, "gemm<{BN}>"));
  assert_status(cucore_tune_space_get_config_text(s, 0, CUCORE_TUNE_TEXT_KERNEL, buf, sizeof buf,
                                                  NULL),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "`{BN}` names no parameter");
  cucore_tune_space_destroy(s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(params_from_text_and_ranges),
      cmocka_unit_test(restrictions_and_counts),
      cmocka_unit_test(launch_follows_kernel_tuner),
      cmocka_unit_test(architecture_limits),
      cmocka_unit_test(launch_only_parameters_share_compiles),
      cmocka_unit_test(template_kernel_names),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
