/* test_options.c -- the option table: setters, parsing, rendering, canonical text. */
#include "support.h"

#include <stdio.h>
#include <string.h>

#include "toolchain/options.h"

static int has_arg(const cc_argv *a, const char *s) {
  for (int i = 0; i < a->n; i++)
    if (strcmp(a->v[i], s) == 0) return 1;
  return 0;
}

static void typed_setters_check_values(void **state) {
  (void)state;
  cucore_options *o = NULL;
  assert_ok(cucore_options_create(&o));
  assert_ok(cucore_options_set_string(o, CUCORE_OPT_ARCH, "sm_90a"));
  assert_status(cucore_options_set_string(o, CUCORE_OPT_ARCH, "sm90"), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "sm_XX");
  assert_status(cucore_options_set_string(o, CUCORE_OPT_STD, "c++98"), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_options_set_int(o, CUCORE_OPT_MAX_REGISTERS, 300), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "16..255");
  assert_status(cucore_options_set_int(o, CUCORE_OPT_ARCH, 90), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "set_string");
  assert_status(cucore_options_set_string(o, CUCORE_OPT_DEBUG, "1"), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_options_set_string(o, (cucore_option)999, "x"), CUCORE_INVALID_ARGUMENT);
  assert_ok(cucore_options_add_header(o, "my.h", "#define X 1\n"));
  assert_status(cucore_options_add_header(o, "my.h", "again"), CUCORE_INVALID_ARGUMENT);
  assert_ok(cucore_options_destroy(o));
  assert_ok(cucore_options_destroy(NULL));
}

static void command_line_forms_parse(void **state) {
  (void)state;
  cucore_options *o = NULL;
  assert_ok(cucore_options_create(&o));
  int used = 0;
  assert_ok(cucore_options_parse(o, "--arch", "sm_80", &used));
  assert_int_equal(used, 2);
  assert_ok(cucore_options_parse(o, "-DN=4", NULL, &used));
  assert_int_equal(used, 1);
  assert_ok(cucore_options_parse(o, "-D", "M", &used));
  assert_int_equal(used, 2);
  assert_ok(cucore_options_parse(o, "-I/tmp/inc", NULL, &used));
  assert_ok(cucore_options_parse(o, "--std=c++17", NULL, &used));
  assert_ok(cucore_options_parse(o, "-G", NULL, &used));
  assert_ok(cucore_options_parse(o, "--no-fmad", NULL, &used));
  assert_ok(cucore_options_parse(o, "--maxrregcount=64", NULL, &used));
  assert_status(cucore_options_parse(o, "--maxrregcount=lots", NULL, &used),
                CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_options_parse(o, "--std", NULL, &used), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "needs a value");
  assert_status(cucore_options_parse(o, "--lineinf", NULL, &used), CUCORE_UNKNOWN_OPTION);
  assert_contains(cucore_last_error(), "did you mean `--lineinfo`");
  assert_status(cucore_options_parse(o, "plain", NULL, &used), CUCORE_UNKNOWN_OPTION);

  const char *canon = NULL;
  assert_ok(cucore_options_canonical(o, &canon));
  /* Every set option appears once, in table order, defaults omitted. */
  assert_contains(canon, "arch=sm_80\n");
  assert_contains(canon, "define=N=4\ndefine=M\n");
  assert_contains(canon, "include-path=/tmp/inc\n");
  assert_contains(canon, "debug=1\n");
  assert_contains(canon, "fmad=0\n");
  assert_contains(canon, "maxrregcount=64\n");
  assert_null(strstr(canon, "prec-div"));
  assert_true(strstr(canon, "arch=") < strstr(canon, "define="));

  /* Rendering for each tool uses that tool's spelling. */
  cc_argv a = {0};
  assert_ok(cc_options_render(o, CC_TOOL_NVRTC, 80, "", 0, &a));
  assert_true(has_arg(&a, "-arch=sm_80"));
  assert_true(has_arg(&a, "-DN=4"));
  assert_true(has_arg(&a, "-G"));
  assert_true(has_arg(&a, "--fmad=false"));
  assert_true(has_arg(&a, "--maxrregcount=64"));
  assert_true(has_arg(&a, "-std=c++17"));
  cc_argv_free(&a);
  assert_ok(cc_options_render(o, CC_TOOL_NVJITLINK, 80, "", 0, &a));
  assert_true(has_arg(&a, "-arch=sm_80"));
  assert_true(has_arg(&a, "-g"));
  assert_true(has_arg(&a, "-fma=false"));
  assert_false(has_arg(&a, "-DN=4"));
  cc_argv_free(&a);
  assert_ok(cc_options_render(o, CC_TOOL_NVVM, 80, "", 1, &a));
  assert_true(has_arg(&a, "-arch=compute_80"));
  assert_true(has_arg(&a, "-fma=0"));
  cc_argv_free(&a);

  /* A copy has the same canonical text; a change changes it. */
  cucore_options *c = NULL;
  assert_ok(cucore_options_copy(o, &c));
  const char *canon2 = NULL;
  assert_ok(cucore_options_canonical(c, &canon2));
  assert_string_equal(canon, canon2);
  assert_ok(cucore_options_set_string(c, CUCORE_OPT_DEFINE, "EXTRA"));
  assert_ok(cucore_options_canonical(c, &canon2));
  assert_string_not_equal(canon, canon2);
  cucore_options_destroy(c);
  cucore_options_destroy(o);
}

static void toolkit_includes_are_on_by_default_and_switchable(void **state) {
  (void)state;
  cucore_options *o = NULL;
  assert_ok(cucore_options_create(&o));
  cc_argv a = {0};
  assert_ok(cc_options_render(o, CC_TOOL_NVRTC, 90, "", 0, &a));
  int found = 0;
  for (int i = 0; i < a.n; i++) found += strstr(a.v[i], "/include/cccl") != NULL;
  assert_int_equal(found, 1);
  cc_argv_free(&a);
  int used;
  assert_ok(cucore_options_parse(o, "--no-toolkit-includes", NULL, &used));
  assert_ok(cc_options_render(o, CC_TOOL_NVRTC, 90, "", 0, &a));
  for (int i = 0; i < a.n; i++) assert_null(strstr(a.v[i], "/include"));
  cc_argv_free(&a);
  cucore_options_destroy(o);
}

static void header_digests_enter_the_canonical_text(void **state) {
  (void)state;
  cucore_options *a = NULL, *b = NULL;
  assert_ok(cucore_options_create(&a));
  assert_ok(cucore_options_create(&b));
  assert_ok(cucore_options_add_header(a, "h.h", "int x;"));
  assert_ok(cucore_options_add_header(b, "h.h", "int y;"));
  const char *ca, *cb;
  assert_ok(cucore_options_canonical(a, &ca));
  assert_ok(cucore_options_canonical(b, &cb));
  assert_contains(ca, "header=h.h:");
  assert_string_not_equal(ca, cb);
  cucore_options_destroy(a);
  cucore_options_destroy(b);
}

/* An option no compiler knows has its own status, whatever its spelling, so a caller tells it
 * from a bad value without reading the message. */
/* Lists, headers and rendered flags grow past any first capacity (cc_grow), in order, and a
 * copy keeps growing from where its source was; the canonical text is exactly the lines. */
static void long_lists_grow_and_keep_their_order(void **state) {
  (void)state;
  cucore_options *o = NULL;
  const char *canon = NULL;
  assert_ok(cucore_options_create(&o));
  assert_ok(cucore_options_canonical(o, &canon));
  assert_string_equal(canon, ""); /* nothing given: no lines */
  char expect[4096] = "", item[64];
  size_t len = 0;
  for (int i = 0; i < 40; i++) {
    snprintf(item, sizeof item, "M%d=%d", i, i * 7);
    assert_ok(cucore_options_set_string(o, CUCORE_OPT_DEFINE, item));
    len += (size_t)snprintf(expect + len, sizeof expect - len, "define=%s\n", item);
  }
  for (int h = 0; h < 20; h++) {
    char name[32];
    snprintf(name, sizeof name, "h%d.h", h);
    assert_ok(cucore_options_add_header(o, name, "int x;\n"));
  }
  assert_ok(cucore_options_canonical(o, &canon));
  assert_true(strncmp(canon, expect, len) == 0);
  assert_contains(canon, "header=h19.h:");
  assert_int_equal(strlen(canon), len + 20 * strlen("header=h0.h:\n") + 10 + 20 * 64);

  cucore_options *c = NULL;
  assert_ok(cucore_options_copy(o, &c));
  assert_ok(cucore_options_set_string(c, CUCORE_OPT_DEFINE, "LAST"));
  assert_ok(cucore_options_add_header(c, "last.h", ""));
  const char *canon2 = NULL;
  assert_ok(cucore_options_canonical(c, &canon2));
  assert_true(strncmp(canon2, expect, len) == 0);
  assert_true(strncmp(canon2 + len, "define=LAST\n", 12) == 0);
  assert_contains(canon2, "header=last.h:");

  cc_argv a = {0};
  assert_ok(cc_options_render(c, CC_TOOL_NVRTC, 90, "", 0, &a));
  assert_true(a.n > 41);
  assert_null(a.v[a.n]); /* NULL-terminated after every growth */
  assert_true(has_arg(&a, "-DM0=0") && has_arg(&a, "-DM39=273") && has_arg(&a, "-DLAST"));
  cc_argv_free(&a);
  assert_ok(cucore_options_destroy(c));
  assert_ok(cucore_options_destroy(o));
}

static void unknown_options_have_their_own_status(void **state) {
  (void)state;
  cucore_options *o = NULL;
  assert_ok(cucore_options_create(&o));
  int used = 7;
  static const char *const unknown[] = {"--lineinf", "--frobnicate", "--frobnicate=1", "-x",
                                        "-Q",        "--no-arch",    "plain",          "--"};
  for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
    assert_status(cucore_options_parse(o, unknown[i], "next", &used), CUCORE_UNKNOWN_OPTION);
    assert_int_equal(used, 0);
    assert_contains(cucore_last_error(), unknown[i]);
  }
  assert_ok(cucore_options_parse(o, "--lineinfo", NULL, &used));
  assert_status(cucore_options_parse(o, "--no-arc", NULL, &used), CUCORE_UNKNOWN_OPTION);
  assert_contains(cucore_last_error(), "did you mean `--arch`");
  /* Known options with bad values stay INVALID_ARGUMENT. */
  assert_status(cucore_options_parse(o, "--maxrregcount=lots", NULL, &used),
                CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_options_parse(o, "--arch", NULL, &used), CUCORE_INVALID_ARGUMENT);
  cucore_options_destroy(o);
}

/* What NVRTC refuses ("invalid macro definition") is refused while parsing, naming the
 * option and what it expects. The forms NVRTC 13 takes stay. */
static void macro_names_and_empty_values_are_checked(void **state) {
  (void)state;
  cucore_options *o = NULL;
  assert_ok(cucore_options_create(&o));
  int used = 0;
  static const char *const bad_defines[] = {"=1",    "",      "1X",          "$X=1", "X Y=1",
                                            "X\t=1", "F(x=1", "-arch=sm_90", " ",    "X-1"};
  for (size_t i = 0; i < sizeof bad_defines / sizeof bad_defines[0]; i++) {
    assert_status(cucore_options_parse(o, "-D", bad_defines[i], &used), CUCORE_INVALID_ARGUMENT);
    assert_contains(cucore_last_error(), "define");
    assert_contains(cucore_last_error(), bad_defines[i][0] ? "NAME=VALUE" : "non-empty");
    assert_status(cucore_options_set_string(o, CUCORE_OPT_DEFINE, bad_defines[i]),
                  CUCORE_INVALID_ARGUMENT);
  }
  assert_status(cucore_options_parse(o, "-D=1", NULL, &used), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_options_parse(o, "--define==1", NULL, &used), CUCORE_INVALID_ARGUMENT);
  static const char *const good_defines[] = {"X",      "X=",       "X=1", "_x9=a b", "F()=1",
                                             "F(x,y)", "F(a)=a*2", " X",  "X==1"};
  for (size_t i = 0; i < sizeof good_defines / sizeof good_defines[0]; i++)
    assert_ok(cucore_options_parse(o, "-D", good_defines[i], &used));
  static const char *const bad_undefines[] = {"=1", "", "F(x)", "X=1", "1X"};
  for (size_t i = 0; i < sizeof bad_undefines / sizeof bad_undefines[0]; i++) {
    assert_status(cucore_options_parse(o, "-U", bad_undefines[i], &used), CUCORE_INVALID_ARGUMENT);
    assert_contains(cucore_last_error(), "undefine");
  }
  assert_ok(cucore_options_parse(o, "-UX", NULL, &used));
  /* Every option that takes a value refuses an empty one, in every spelling. */
  static const char *const empty[] = {"--std=",          "--arch=",        "--define=",
                                      "--include-path=", "--pre-include=", "--ptxas-option=",
                                      "--raw=",          "--gencode=",     "--maxrregcount=",
                                      "--opt-level=",    "-arch="};
  for (size_t i = 0; i < sizeof empty / sizeof empty[0]; i++)
    assert_status(cucore_options_parse(o, empty[i], NULL, &used), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_options_parse(o, "-I", "", &used), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_options_parse(o, "-Xptxas", "", &used), CUCORE_INVALID_ARGUMENT);
  const char *canon = NULL;
  assert_ok(cucore_options_canonical(o, &canon));
  assert_null(strstr(canon, "define==")); /* nothing refused was kept */
  cucore_options_destroy(o);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(typed_setters_check_values),
      cmocka_unit_test(command_line_forms_parse),
      cmocka_unit_test(toolkit_includes_are_on_by_default_and_switchable),
      cmocka_unit_test(header_digests_enter_the_canonical_text),
      cmocka_unit_test(long_lists_grow_and_keep_their_order),
      cmocka_unit_test(unknown_options_have_their_own_status),
      cmocka_unit_test(macro_names_and_empty_values_are_checked),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
