/* test_options_typed.c -- the newer options of the table (NVRTC's and nvJitLink's typed flags,
 * PCH): values checked, the command line, rendering per tool, the cache key's view, the tools
 * and versions a compile needs. No GPU, no compiler. */
#include "support.h"

#include <stdio.h>
#include <string.h>

#include "toolchain/options.h"

static int has_arg(const cc_argv *a, const char *s) {
  for (int i = 0; i < a->n; i++)
    if (strcmp(a->v[i], s) == 0) return 1;
  return 0;
}

static void values_are_checked_naming_the_option(void **state) {
  (void)state;
  cucore_options *o = NULL;
  assert_ok(cucore_options_create(&o));
  assert_ok(cucore_options_set_string(o, CUCORE_OPT_DIAG_SUPPRESS, "177"));
  assert_ok(cucore_options_set_string(o, CUCORE_OPT_DIAG_SUPPRESS, "177,550"));
  assert_status(cucore_options_set_string(o, CUCORE_OPT_DIAG_ERROR, "177-D"),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "`diag-error`");
  assert_contains(cucore_last_error(), "e.g. 177 or 177,550");
  assert_status(cucore_options_set_string(o, CUCORE_OPT_DIAG_WARN, "0"), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_options_set_string(o, CUCORE_OPT_DIAG_WARN, "1,,2"),
                CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_options_set_string(o, CUCORE_OPT_OFAST_COMPILE, "fast"),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "`ofast-compile`: `fast` is not accepted; expected 0, min, "
                                       "mid or max");
  for (const char *v = "0\0min\0mid\0max\0"; *v; v += strlen(v) + 1)
    assert_ok(cucore_options_set_string(o, CUCORE_OPT_OFAST_COMPILE, v));
  assert_status(cucore_options_set_string(o, CUCORE_OPT_OPTIMIZATION_INFO, "all"),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "expected inline");
  assert_ok(cucore_options_set_string(o, CUCORE_OPT_OPTIMIZATION_INFO, "inline"));
  assert_status(cucore_options_set_string(o, CUCORE_OPT_KERNELS_USED, "a b"),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "`kernels-used`");
  assert_ok(cucore_options_set_string(o, CUCORE_OPT_KERNELS_USED, "_Z5scalePf"));
  assert_status(cucore_options_set_int(o, CUCORE_OPT_SPLIT_COMPILE_EXTENDED, 300),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "`split-compile-extended` = 300 is out of range; expected "
                                       "0..256");
  assert_status(cucore_options_set_string(o, CUCORE_OPT_TIME, ""), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "`time` needs a non-empty value");
  assert_status(cucore_options_set_int(o, CUCORE_OPT_CREATE_PCH, 1), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "use cucore_options_set_string");
  assert_status(cucore_options_set_int(o, CUCORE_OPT_MINIMAL, 2), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "`minimal` = 2 is out of range; expected 0..1");
  cucore_options_destroy(o);
}

static void command_line_takes_every_new_option(void **state) {
  (void)state;
  cucore_options *o = NULL;
  assert_ok(cucore_options_create(&o));
  const char *const words[] = {"--no-cache",
                               "--no-source-include",
                               "--no-builtin-move-forward",
                               "-ewp",
                               "-restrict",
                               "--dopt",
                               "--gen-opt-lto",
                               "--minimal",
                               "--ofast-compile=mid",
                               "--jitlink-verbose",
                               "--jitlink-time",
                               "--brief-diagnostics",
                               "--pch",
                               "--no-pch-messages",
                               NULL};
  int used = 0;
  for (int i = 0; words[i]; i++) {
    assert_ok(cucore_options_parse(o, words[i], NULL, &used));
    assert_int_equal(used, 1);
  }
  assert_ok(cucore_options_parse(o, "--diag-suppress", "177,550", &used));
  assert_int_equal(used, 2);
  assert_ok(cucore_options_parse(o, "--kernels-used=k", NULL, &used));
  assert_ok(cucore_options_parse(o, "--split-compile-extended=4", NULL, &used));
  assert_ok(cucore_options_parse(o, "--pch-dir", "/tmp", &used));
  assert_status(cucore_options_parse(o, "--ofast-compile", "turbo", &used),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "expected 0, min, mid or max");
  assert_status(cucore_options_parse(o, "--minimall", NULL, &used), CUCORE_UNKNOWN_OPTION);
  assert_contains(cucore_last_error(), "did you mean `--minimal`");
  assert_int_equal(cc_options_int(o, CUCORE_OPT_NO_CACHE), 1);
  assert_int_equal(cc_options_int(o, CUCORE_OPT_BUILTIN_MOVE_FORWARD), 0);
  assert_int_equal(cc_options_int(o, CUCORE_OPT_RESTRICT), 1);
  assert_int_equal(cc_options_int(o, CUCORE_OPT_PCH_MESSAGES), 0);
  assert_string_equal(cucore_option_name(CUCORE_OPT_RESTRICT), "restrict-pointers");
  assert_true(strlen(cucore_option_help(CUCORE_OPT_OFAST_COMPILE)) > 10);

  /* NVRTC's spelling; nvJitLink's flags stay out of it, and the other way round. */
  cc_argv a = {0};
  assert_ok(cc_options_render(o, CC_TOOL_NVRTC, 90, "", 0, &a));
  const char *const nvrtc[] = {"--no-cache",
                               "--no-source-include",
                               "--builtin-move-forward=false",
                               "--extensible-whole-program",
                               "--restrict",
                               "--dopt=on",
                               "--gen-opt-lto",
                               "--minimal",
                               "--Ofast-compile=mid",
                               "--brief-diagnostics=true",
                               "--diag-suppress=177,550",
                               "--pch",
                               "--pch-messages=false",
                               "--pch-dir=/tmp",
                               NULL};
  for (int i = 0; nvrtc[i]; i++) assert_true(has_arg(&a, nvrtc[i]));
  assert_false(has_arg(&a, "-verbose"));
  assert_false(has_arg(&a, "-kernels-used=k"));
  cc_argv_free(&a);
  assert_ok(cc_options_render(o, CC_TOOL_NVJITLINK, 90, "", 0, &a));
  const char *const jl[] = {
      "-no-cache", "-verbose", "-time", "-kernels-used=k", "-split-compile-extended=4", NULL};
  for (int i = 0; jl[i]; i++) assert_true(has_arg(&a, jl[i]));
  assert_false(has_arg(&a, "--minimal"));
  assert_false(has_arg(&a, "--pch"));
  cc_argv_free(&a);
  assert_ok(cc_options_render(o, CC_TOOL_NVVM, 90, "", 1, &a));
  assert_int_equal(a.n, 1); /* the arch alone */
  cc_argv_free(&a);
  cucore_options_destroy(o);
}

/* The PCH options make no difference to the key: neither its flags nor its canonical text. */
static void pch_options_stay_out_of_the_key(void **state) {
  (void)state;
  cucore_options *plain = NULL, *pch = NULL;
  assert_ok(cucore_options_create(&plain));
  assert_ok(cucore_options_set_int(plain, CUCORE_OPT_MINIMAL, 1));
  assert_ok(cucore_options_copy(plain, &pch));
  assert_ok(cucore_options_set_int(pch, CUCORE_OPT_PCH, 1));
  assert_ok(cucore_options_set_string(pch, CUCORE_OPT_PCH_DIR, "/tmp"));
  assert_ok(cucore_options_set_string(pch, CUCORE_OPT_USE_PCH, "x.pch"));
  assert_ok(cucore_options_set_int(pch, CUCORE_OPT_INSTANTIATE_TEMPLATES_IN_PCH, 0));
  const char *whole = NULL, *k1 = NULL, *k2 = NULL;
  assert_ok(cucore_options_canonical(pch, &whole));
  assert_contains(whole, "pch=1\n");
  assert_contains(whole, "pch-dir=/tmp\n");
  assert_ok(cc_options_key_canonical(plain, &k1));
  assert_ok(cc_options_key_canonical(pch, &k2));
  assert_string_equal(k1, k2);
  assert_contains(k2, "minimal=1\n");
  cc_argv a = {0}, b = {0};
  assert_ok(cc_options_render_key(plain, CC_TOOL_NVRTC, 90, "", 0, &a));
  assert_ok(cc_options_render_key(pch, CC_TOOL_NVRTC, 90, "", 0, &b));
  assert_int_equal(a.n, b.n);
  for (int i = 0; i < a.n; i++) assert_string_equal(a.v[i], b.v[i]);
  cc_argv_free(&a);
  cc_argv_free(&b);
  assert_false(cc_options_in_key(CUCORE_OPT_USE_PCH));
  assert_true(cc_options_in_key(CUCORE_OPT_CREATE_PCH));
  assert_true(cc_options_in_key(CUCORE_OPT_DEBUG));
  cucore_options_destroy(plain);
  cucore_options_destroy(pch);
}

static void files_written_as_it_compiles_are_named(void **state) {
  (void)state;
  char why[512];
  cucore_options *o = NULL;
  assert_ok(cucore_options_create(&o));
  assert_ok(cucore_options_set_int(o, CUCORE_OPT_PCH, 1));
  assert_false(cc_options_side_files(o, why, sizeof why));
  assert_ok(cucore_options_set_string(o, CUCORE_OPT_CREATE_PCH, "k.pch"));
  assert_true(cc_options_side_files(o, why, sizeof why));
  assert_contains(why, "option `create-pch` (`k.pch`) writes a file");
  cucore_options_destroy(o);
  assert_ok(cucore_options_create(&o));
  assert_ok(cucore_options_set_string(o, CUCORE_OPT_TIME, "-"));
  assert_true(cc_options_side_files(o, why, sizeof why));
  assert_contains(why, "writes timings into the log");
  cucore_options_destroy(o);
  assert_ok(cucore_options_create(&o));
  assert_ok(cucore_options_set_string(o, CUCORE_OPT_FDEVICE_TIME_TRACE, "/tmp/trace"));
  assert_true(cc_options_side_files(o, why, sizeof why));
  cucore_options_destroy(o);
}

static void a_tool_without_the_flag_refuses_it(void **state) {
  (void)state;
  const unsigned rtc = 1u << CC_TOOL_NVRTC, jl = 1u << CC_TOOL_NVJITLINK, vm = 1u << CC_TOOL_NVVM;
  cucore_options *o = NULL;
  assert_ok(cucore_options_create(&o));
  assert_ok(cucore_options_set_int(o, CUCORE_OPT_DEBUG, 1)); /* an older option: no refusal */
  assert_ok(cc_options_check_tools(o, vm, "f", "`x`"));
  assert_ok(cucore_options_set_int(o, CUCORE_OPT_MINIMAL, 1));
  assert_ok(cc_options_check_tools(o, rtc, "f", "`x`"));
  assert_status(cc_options_check_tools(o, jl, "cucore_linker_complete", "a link"),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "cucore_linker_complete: option `minimal` is for NVRTC "
                                       "only; a link goes through nvJitLink, which has no such "
                                       "flag");
  cucore_options_destroy(o);
  assert_ok(cucore_options_create(&o));
  assert_ok(cucore_options_set_string(o, CUCORE_OPT_VARIABLES_USED, "g"));
  assert_ok(cc_options_check_tools(o, vm | jl, "f", "`x`"));
  assert_status(cc_options_check_tools(o, vm, "f", "`k.ll`"), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "is for nvJitLink only; `k.ll` goes through libNVVM");
  cucore_options_destroy(o);
  assert_ok(cucore_options_create(&o));
  assert_ok(cucore_options_set_int(o, CUCORE_OPT_NO_CACHE, 1));
  assert_ok(cc_options_check_tools(o, jl, "f", "`x`"));
  assert_status(cc_options_check_tools(o, vm, "f", "`x`"), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "is for NVRTC and nvJitLink only");
  cucore_options_destroy(o);
}

/* A tool older than the option's version is refused when it renders (the loaded version is
 * played here by the loader's variable itself). */
static void an_older_tool_is_refused_by_version(void **state) {
  (void)state;
  cucore_options *o = NULL;
  assert_ok(cucore_options_create(&o));
  assert_ok(cucore_options_set_string(o, CUCORE_OPT_OFAST_COMPILE, "max"));
  int kept = cc_rtc.version, kept_jl = cc_jl.version;
  cc_rtc.version = 12080;
  cc_argv a = {0};
  assert_status(cc_options_render(o, CC_TOOL_NVRTC, 90, "", 0, &a), CUCORE_TOOLKIT_TOO_OLD);
  assert_contains(cucore_last_error(), "option `ofast-compile` needs NVRTC 12.9 or newer; the "
                                       "loaded NVRTC is 12.8");
  cc_argv_free(&a);
  /* The key's rendering judges no version (it runs before the tool is loaded). */
  assert_ok(cc_options_render_key(o, CC_TOOL_NVRTC, 90, "", 0, &a));
  cc_argv_free(&a);
  cc_rtc.version = 12090;
  assert_ok(cc_options_render(o, CC_TOOL_NVRTC, 90, "", 0, &a));
  cc_argv_free(&a);
  cucore_options_destroy(o);
  assert_ok(cucore_options_create(&o));
  assert_ok(cucore_options_set_int(o, CUCORE_OPT_SPLIT_COMPILE_EXTENDED, 2));
  cc_jl.version = 12020;
  assert_status(cc_options_render(o, CC_TOOL_NVJITLINK, 90, "", 0, &a), CUCORE_TOOLKIT_TOO_OLD);
  assert_contains(cucore_last_error(), "needs nvJitLink 12.3 or newer; the loaded nvJitLink is "
                                       "12.2");
  cc_argv_free(&a);
  cucore_options_destroy(o);
  /* One option, two tools, two versions: no-cache came to NVRTC in 12.9, to nvJitLink in 12.5. */
  assert_ok(cucore_options_create(&o));
  assert_ok(cucore_options_set_int(o, CUCORE_OPT_NO_CACHE, 1));
  cc_rtc.version = 12080, cc_jl.version = 12080;
  assert_status(cc_options_render(o, CC_TOOL_NVRTC, 90, "", 0, &a), CUCORE_TOOLKIT_TOO_OLD);
  assert_contains(cucore_last_error(), "needs NVRTC 12.9 or newer; the loaded NVRTC is 12.8");
  cc_argv_free(&a);
  assert_ok(cc_options_render(o, CC_TOOL_NVJITLINK, 90, "", 0, &a));
  cc_argv_free(&a);
  cc_jl.version = 12040;
  cc_begin(); /* a new call: its message is not the NVRTC refusal's, kept as the first */
  assert_status(cc_options_render(o, CC_TOOL_NVJITLINK, 90, "", 0, &a), CUCORE_TOOLKIT_TOO_OLD);
  assert_contains(cucore_last_error(), "needs nvJitLink 12.5 or newer; the loaded nvJitLink is "
                                       "12.4");
  cc_argv_free(&a);
  cc_rtc.version = kept;
  cc_jl.version = kept_jl;
  cucore_options_destroy(o);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(values_are_checked_naming_the_option),
      cmocka_unit_test(command_line_takes_every_new_option),
      cmocka_unit_test(pch_options_stay_out_of_the_key),
      cmocka_unit_test(files_written_as_it_compiles_are_named),
      cmocka_unit_test(a_tool_without_the_flag_refuses_it),
      cmocka_unit_test(an_older_tool_is_refused_by_version),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
