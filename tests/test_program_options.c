/* test_program_options.c -- the newer options through the real NVRTC and nvJitLink (no GPU):
 * each option compiles a small kernel, the files some of them write appear and keep the compile
 * out of the cache (the reason says which option), and a tool without the flag refuses it. */
#include "cache_support.h"
#include "toolchain/options.h"

static const char *kernel = "extern \"C\" __global__ void twice(float *x) {\n"
                            "  x[threadIdx.x] *= 2.0f;\n"
                            "}\n";

static char *dir;

static int setup(void **state) {
  (void)state;
  dir = cache_test_mkdtemp();
  return dir && cache_test_settings(dir) == 0 ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  cache_test_rm_rf(dir);
  free(dir);
  return 0;
}

/* Compiles `kernel` to PTX with one option (int or string) for `arch`; returns the status. */
static cucore_status compile_with(cucore_option opt, int ival, const char *sval, const char *arch,
                                  cucore_cache_info *info) {
  cucore_options *o = NULL;
  assert_ok(cucore_options_create(&o));
  assert_ok(cucore_options_set_string(o, CUCORE_OPT_ARCH, arch));
  if (sval)
    assert_ok(cucore_options_set_string(o, opt, sval));
  else
    assert_ok(cucore_options_set_int(o, opt, ival));
  cucore_program *p = NULL;
  assert_ok(cucore_program_create(CUCORE_CODE_CUDA_CPP, kernel, 0, "twice.cu", o, &p));
  cucore_object *obj = NULL;
  cucore_status st = cucore_program_compile(p, CUCORE_CODE_PTX, &obj);
  if (info) assert_ok(cucore_program_get_cache_info(p, info));
  cucore_object_destroy(obj);
  cucore_program_destroy(p);
  cucore_options_destroy(o);
  return st;
}

static void every_nvrtc_option_compiles(void **state) {
  (void)state;
  const struct {
    cucore_option opt;
    int ival;
    const char *sval;
  } cases[] = {
      {CUCORE_OPT_EXTENSIBLE_WHOLE_PROGRAM, 1, NULL},
      {CUCORE_OPT_DOPT, 1, NULL},
      {CUCORE_OPT_GEN_OPT_LTO, 1, NULL},
      {CUCORE_OPT_NO_SOURCE_INCLUDE, 1, NULL},
      {CUCORE_OPT_BUILTIN_MOVE_FORWARD, 0, NULL},
      {CUCORE_OPT_BUILTIN_INITIALIZER_LIST, 0, NULL},
      {CUCORE_OPT_RESTRICT, 1, NULL},
      {CUCORE_OPT_OPTIMIZATION_INFO, 0, "inline"},
      {CUCORE_OPT_NO_DISPLAY_ERROR_NUMBER, 1, NULL},
      {CUCORE_OPT_DIAG_ERROR, 0, "1234"},
      {CUCORE_OPT_DIAG_SUPPRESS, 0, "177,550"},
      {CUCORE_OPT_DIAG_WARN, 0, "20012"},
      {CUCORE_OPT_BRIEF_DIAGNOSTICS, 1, NULL},
      {CUCORE_OPT_FDEVICE_SYNTAX_ONLY, 1, NULL},
      {CUCORE_OPT_MINIMAL, 1, NULL},
      {CUCORE_OPT_NO_CACHE, 1, NULL},
      {CUCORE_OPT_FRANDOM_SEED, 0, "42"},
      {CUCORE_OPT_OFAST_COMPILE, 0, "max"},
      {CUCORE_OPT_PCH_VERBOSE, 0, NULL},
      {CUCORE_OPT_PCH_MESSAGES, 0, NULL},
      {CUCORE_OPT_INSTANTIATE_TEMPLATES_IN_PCH, 0, NULL},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    cucore_cache_info info;
    cucore_status st = compile_with(cases[i].opt, cases[i].ival, cases[i].sval, "sm_90", &info);
    if (st != CUCORE_OK)
      fail_msg("option %s: %s", cucore_option_name(cases[i].opt), cucore_last_error());
    /* The PCH options are not in the key: the first one's entry serves the others. */
    int later_pch = !cc_options_in_key(cases[i].opt) && !cc_options_in_key(cases[i - 1].opt);
    assert_int_equal(info.result, later_pch ? CUCORE_CACHE_HIT_MEMORY : CUCORE_CACHE_MISS);
  }
  /* __float128 needs sm_100, as NVRTC says. */
  assert_ok(compile_with(CUCORE_OPT_DEVICE_FLOAT128, 1, NULL, "sm_100", NULL));
  assert_status(compile_with(CUCORE_OPT_DEVICE_FLOAT128, 1, NULL, "sm_90", NULL),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "--device-float128");
}

/* --time and --fdevice-time-trace write their files, and such a compile is never cached. */
static void written_files_appear_and_bypass_the_cache(void **state) {
  (void)state;
  char path[512], trace[512];
  snprintf(path, sizeof path, "%s/times.csv", dir);
  snprintf(trace, sizeof trace, "%s/trace", dir);
  for (int round = 0; round < 2; round++) {
    cucore_cache_info info;
    assert_ok(compile_with(CUCORE_OPT_TIME, 0, path, "sm_90", &info));
    assert_int_equal(info.result, CUCORE_CACHE_UNCACHEABLE);
    assert_contains(info.reason, "option `time`");
    assert_ok(compile_with(CUCORE_OPT_FDEVICE_TIME_TRACE, 0, trace, "sm_90", &info));
    assert_int_equal(info.result, CUCORE_CACHE_UNCACHEABLE);
    assert_contains(info.reason, "option `fdevice-time-trace`");
  }
  size_t n = 0;
  char *csv = cucore_test_read_file(path, &n);
  assert_non_null(csv);
  assert_contains(csv, "CUDA C++ Frontend");
  free(csv);
  char json[600];
  snprintf(json, sizeof json, "%s.json", trace);
  struct stat st;
  assert_int_equal(stat(json, &st), 0);
  /* "-": the timings go to the log. */
  cucore_options *o = NULL;
  assert_ok(cucore_options_create(&o));
  assert_ok(cucore_options_set_string(o, CUCORE_OPT_ARCH, "sm_90"));
  assert_ok(cucore_options_set_string(o, CUCORE_OPT_TIME, "-"));
  cucore_program *p = NULL;
  assert_ok(cucore_program_create(CUCORE_CODE_CUDA_CPP, kernel, 0, "twice.cu", o, &p));
  assert_ok(cucore_program_set_cache_digest(p, "a digest does not make it cacheable"));
  cucore_object *obj = NULL;
  assert_ok(cucore_program_compile(p, CUCORE_CODE_PTX, &obj));
  const char *log = NULL;
  assert_ok(cucore_program_get_log(p, &log));
  assert_contains(log, "phase name");
  cucore_cache_info info;
  assert_ok(cucore_program_get_cache_info(p, &info));
  assert_int_equal(info.result, CUCORE_CACHE_UNCACHEABLE);
  assert_contains(info.reason, "writes timings into the log");
  cucore_object_destroy(obj);
  cucore_program_destroy(p);
  cucore_options_destroy(o);
}

static const char *ptx = ".version 8.0\n.target sm_90\n.address_size 64\n"
                         ".visible .entry used(.param .u64 p) { ret; }\n"
                         ".visible .entry unused(.param .u64 p) { ret; }\n"
                         ".visible .global .u32 gv;\n";

/* nvJitLink's options go to a PTX program's compile and to the linker; NVRTC's are refused. */
static void nvjitlink_options_and_refusals(void **state) {
  (void)state;
  cucore_options *o = NULL;
  assert_ok(cucore_options_create(&o));
  assert_ok(cucore_options_set_string(o, CUCORE_OPT_ARCH, "sm_90"));
  assert_ok(cucore_options_set_int(o, CUCORE_OPT_JITLINK_VERBOSE, 1));
  assert_ok(cucore_options_set_int(o, CUCORE_OPT_JITLINK_TIME, 1));
  assert_ok(cucore_options_set_int(o, CUCORE_OPT_NO_CACHE, 1));
  assert_ok(cucore_options_set_int(o, CUCORE_OPT_OPTIMIZE_UNUSED_VARIABLES, 1));
  assert_ok(cucore_options_set_int(o, CUCORE_OPT_SPLIT_COMPILE_EXTENDED, 2));
  assert_ok(cucore_options_set_string(o, CUCORE_OPT_KERNELS_USED, "used"));
  assert_ok(cucore_options_set_string(o, CUCORE_OPT_VARIABLES_USED, "gv"));
  cucore_program *p = NULL;
  assert_ok(cucore_program_create(CUCORE_CODE_PTX, ptx, 0, "k.ptx", o, &p));
  cucore_object *obj = NULL;
  assert_ok(cucore_program_compile(p, CUCORE_CODE_CUBIN, &obj));
  cucore_object_destroy(obj);
  cucore_program_destroy(p);

  cucore_linker *lk = NULL;
  assert_ok(cucore_linker_create(o, &lk));
  assert_ok(cucore_linker_add(lk, CUCORE_CODE_PTX, ptx, strlen(ptx), "k.ptx"));
  assert_ok(cucore_linker_complete(lk, CUCORE_CODE_CUBIN, &obj));
  const char *info = NULL;
  assert_ok(cucore_linker_get_log(lk, &info, NULL));
  assert_contains(info, "nvJitLink time"); /* -time's lines */
  assert_contains(info, "ptxas info");     /* -verbose's */
  cucore_object_destroy(obj);
  assert_ok(cucore_options_set_int(o, CUCORE_OPT_MINIMAL, 1));
  cucore_linker_destroy(lk);
  assert_ok(cucore_linker_create(o, &lk));
  assert_ok(cucore_linker_add(lk, CUCORE_CODE_PTX, ptx, strlen(ptx), "k.ptx"));
  assert_status(cucore_linker_complete(lk, CUCORE_CODE_CUBIN, &obj), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "option `minimal` is for NVRTC only; a link goes through "
                                       "nvJitLink");
  cucore_linker_destroy(lk);
  assert_ok(cucore_program_create(CUCORE_CODE_PTX, ptx, 0, "k.ptx", o, &p));
  assert_status(cucore_program_compile(p, CUCORE_CODE_CUBIN, &obj), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "`k.ptx` (ptx to cubin) goes through nvJitLink");
  cucore_program_destroy(p);
  cucore_options_destroy(o);

  /* A C++ program does not link: nvJitLink's options are refused by NVRTC's compile. */
  assert_status(compile_with(CUCORE_OPT_KERNELS_USED, 0, "twice", "sm_90", NULL),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "`kernels-used` is for nvJitLink only; `twice.cu` "
                                       "(cuda-c++ to ptx) goes through NVRTC");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(every_nvrtc_option_compiles, setup, teardown),
      cmocka_unit_test_setup_teardown(written_files_appear_and_bypass_the_cache, setup, teardown),
      cmocka_unit_test_setup_teardown(nvjitlink_options_and_refusals, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
