/* test_link_stages.c -- incremental linking on the fake toolkit's nvJitLink made to report 13.3
 * (tests/fake/fake_toolkit.c: every link's output carries the options and inputs it got). A
 * two-stage link: two LTO-IR inputs into linked LTO-IR (-lto -r), or into a relocatable cubin
 * (-r), then that and a third input into a cubin; what each stage got is read back from the
 * output. Also: the checks before a link, the enum's names, an input the linker refuses, and (in
 * a child process whose fake reports 13.2) LTO-IR refused with both versions named. */
#include "support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "object/object.h" /* white-box: the producer version of a linked LTO-IR object */

/* Not real LTO-IR: the fake nvJitLink only needs the magic cucore checks, and a name. */
static const unsigned char fake_ltoir[] = {0xed, 0x43, 0x4e, 0x7f, 'l', 't', 'o', 0};

static cucore_linker *linker(void) {
  cucore_options *o = NULL;
  assert_ok(cucore_options_create(&o));
  assert_ok(cucore_options_set_string(o, CUCORE_OPT_ARCH, "sm_90"));
  cucore_linker *lk = NULL;
  assert_ok(cucore_linker_create(o, &lk));
  cucore_options_destroy(o);
  return lk;
}

/* The fake's text in an output of type `want` (after the header the kind needs). */
static const char *code_of(const cucore_object *obj, cucore_code_type want) {
  cucore_code_type type;
  const void *data = NULL;
  size_t size = 0;
  assert_ok(cucore_object_get_code(obj, &type, &data, &size));
  assert_int_equal(type, want);
  const char *text = memmem(data, size, "FAKELINK ", 9);
  assert_non_null(text);
  assert_true(((const char *)data)[size - 1] == 0); /* the text, whole */
  return text;
}

/* Stage 1 makes `kind` of a.ltoir and b.ltoir; stage 2 links it with c.ltoir into a cubin. */
static void two_stages(cucore_link_output kind) {
  cucore_linker *lk = linker();
  assert_ok(cucore_linker_add(lk, CUCORE_CODE_LTOIR, fake_ltoir, sizeof fake_ltoir, "a.ltoir"));
  assert_ok(cucore_linker_add(lk, CUCORE_CODE_AUTO, fake_ltoir, sizeof fake_ltoir, "b.ltoir"));
  cucore_object *stage1 = NULL;
  assert_ok(cucore_linker_complete_output(lk, kind, &stage1));
  cucore_linker_destroy(lk);
  int lto = kind == CUCORE_LINK_OUTPUT_LTOIR;
  const char *one = code_of(stage1, lto ? CUCORE_CODE_LTOIR : CUCORE_CODE_CUBIN);
  print_message("stage 1 (%s): %s", cucore_link_output_name(kind), one);
  assert_contains(one, lto ? "FAKELINK out=ltoir" : "FAKELINK out=cubin");
  assert_contains(one, "-arch=sm_90");
  assert_contains(one, "-lto -r]");
  assert_contains(one, "inputs=[a.ltoir b.ltoir]");
  if (lto) assert_int_equal(stage1->producer_version, 13030);

  lk = linker();
  assert_ok(cucore_linker_add_object(lk, stage1));
  assert_ok(cucore_linker_add(lk, CUCORE_CODE_LTOIR, fake_ltoir, sizeof fake_ltoir, "c.ltoir"));
  cucore_object *stage2 = NULL;
  assert_ok(cucore_linker_complete(lk, CUCORE_CODE_CUBIN, &stage2));
  const char *two = code_of(stage2, CUCORE_CODE_CUBIN);
  print_message("stage 2: %s", two);
  assert_contains(two, "FAKELINK out=cubin");
  assert_null(strstr(two, "-r]")); /* a final link */
  assert_contains(two, "inputs=[linked code{a.ltoir b.ltoir} c.ltoir]");
  cucore_object_destroy(stage1);
  cucore_object_destroy(stage2);
  cucore_linker_destroy(lk);
}

static void two_stages_through_linked_ltoir(void **state) {
  (void)state;
  two_stages(CUCORE_LINK_OUTPUT_LTOIR);
}

static void two_stages_through_a_relocatable_cubin(void **state) {
  (void)state;
  two_stages(CUCORE_LINK_OUTPUT_RELOCATABLE);
}

/* cucore_linker_complete with an LTO-IR target is the LTO-IR output. */
static void complete_with_an_ltoir_target(void **state) {
  (void)state;
  cucore_linker *lk = linker();
  assert_ok(cucore_linker_add(lk, CUCORE_CODE_LTOIR, fake_ltoir, sizeof fake_ltoir, "a.ltoir"));
  cucore_object *obj = NULL;
  assert_ok(cucore_linker_complete(lk, CUCORE_CODE_LTOIR, &obj));
  assert_contains(code_of(obj, CUCORE_CODE_LTOIR), "FAKELINK out=ltoir");
  cucore_object_destroy(obj);
  assert_status(cucore_linker_complete(lk, CUCORE_CODE_FATBIN, &obj), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "the linker produces cubin, ptx or ltoir");
  cucore_linker_destroy(lk);
}

static void checks_before_a_link(void **state) {
  (void)state;
  assert_string_equal(cucore_link_output_name(CUCORE_LINK_OUTPUT_CUBIN), "cubin");
  assert_string_equal(cucore_link_output_name(CUCORE_LINK_OUTPUT_PTX), "ptx");
  assert_string_equal(cucore_link_output_name(CUCORE_LINK_OUTPUT_RELOCATABLE), "relocatable");
  assert_string_equal(cucore_link_output_name(CUCORE_LINK_OUTPUT_LTOIR), "ltoir");
  assert_string_equal(cucore_link_output_name((cucore_link_output)9), "unknown");
  cucore_linker *lk = linker();
  cucore_object *obj = (cucore_object *)1;
  assert_status(cucore_linker_complete_output(lk, CUCORE_LINK_OUTPUT_LTOIR, &obj),
                CUCORE_INVALID_ARGUMENT);
  assert_null(obj);
  assert_contains(cucore_last_error(), "no inputs were added");
  assert_status(cucore_linker_complete_output(lk, (cucore_link_output)4, &obj),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "output kind 4 is not one of cubin (0)");
  assert_status(cucore_linker_complete_output(NULL, CUCORE_LINK_OUTPUT_CUBIN, &obj),
                CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_linker_complete_output(lk, CUCORE_LINK_OUTPUT_CUBIN, NULL),
                CUCORE_INVALID_ARGUMENT);
  /* Linked LTO-IR is made of LTO-IR only; a relocatable output takes the rest. */
  static const char ptx[] = ".version 8.0\n.target sm_90\n.address_size 64\n";
  assert_ok(cucore_linker_add(lk, CUCORE_CODE_LTOIR, fake_ltoir, sizeof fake_ltoir, "a.ltoir"));
  assert_ok(cucore_linker_add(lk, CUCORE_CODE_PTX, ptx, sizeof ptx - 1, "b.ptx"));
  assert_status(cucore_linker_complete_output(lk, CUCORE_LINK_OUTPUT_LTOIR, &obj),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "input `b.ptx` is ptx");
  assert_ok(cucore_linker_complete_output(lk, CUCORE_LINK_OUTPUT_RELOCATABLE, &obj));
  assert_contains(code_of(obj, CUCORE_CODE_CUBIN), "inputs=[a.ltoir b.ptx]");
  cucore_object_destroy(obj);
  cucore_linker_destroy(lk);
}

/* An input nvJitLink refuses is named. */
static void a_refused_input_is_named(void **state) {
  (void)state;
  setenv("CUCORE_FAKE_TK_JITLINK_REFUSE", "b.ltoir", 1);
  cucore_linker *lk = linker();
  assert_ok(cucore_linker_add(lk, CUCORE_CODE_LTOIR, fake_ltoir, sizeof fake_ltoir, "a.ltoir"));
  assert_ok(cucore_linker_add(lk, CUCORE_CODE_LTOIR, fake_ltoir, sizeof fake_ltoir, "b.ltoir"));
  cucore_object *obj = NULL;
  assert_status(cucore_linker_complete_output(lk, CUCORE_LINK_OUTPUT_LTOIR, &obj),
                CUCORE_INVALID_BINARY);
  assert_contains(cucore_last_error(), "input `b.ltoir`");
  cucore_linker_destroy(lk);
  unsetenv("CUCORE_FAKE_TK_JITLINK_REFUSE");
}

/* A child whose fake nvJitLink reports 13.2: a relocatable output links, LTO-IR is refused
 * with both versions named. Returns what went wrong, or NULL. */
static const char *as_13_2(void) {
  setenv("CUCORE_FAKE_TK_JITLINK_VERSION", "13.2", 1);
  cucore_options *o = NULL;
  cucore_linker *lk = NULL;
  cucore_object *obj = NULL;
  if (cucore_options_create(&o) || cucore_options_set_string(o, CUCORE_OPT_ARCH, "sm_90") ||
      cucore_linker_create(o, &lk) ||
      cucore_linker_add(lk, CUCORE_CODE_LTOIR, fake_ltoir, sizeof fake_ltoir, "a.ltoir"))
    return "setting up";
  if (cucore_linker_complete_output(lk, CUCORE_LINK_OUTPUT_RELOCATABLE, &obj) != CUCORE_OK)
    return "a relocatable output on 13.2";
  cucore_object_destroy(obj);
  if (CUCORE_CODE(cucore_linker_complete_output(lk, CUCORE_LINK_OUTPUT_LTOIR, &obj)) !=
      CUCORE_TOOLKIT_TOO_OLD)
    return "LTO-IR on 13.2 was not refused as CUCORE_TOOLKIT_TOO_OLD";
  if (!strstr(cucore_last_error(), "cucore_linker_complete_output: linked LTO-IR as a link "
                                   "output needs nvJitLink 13.3, found 13.2"))
    return cucore_last_error();
  cucore_linker_destroy(lk);
  cucore_options_destroy(o);
  return NULL;
}

static int check_13_2_in_child(void) {
  int fd[2];
  if (pipe(fd) != 0) return 1;
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    close(fd[0]);
    const char *why = as_13_2();
    if (why && write(fd[1], why, strlen(why)) < 0) _exit(2);
    _exit(why ? 1 : 0);
  }
  close(fd[1]);
  char why[2048] = "";
  ssize_t n = read(fd[0], why, sizeof why - 1);
  why[n > 0 ? n : 0] = 0;
  close(fd[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  int ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  printf("as nvJitLink 13.2: %s%s\n", ok ? "relocatable linked, LTO-IR refused" : "FAILED: ", why);
  return ok ? 0 : 1;
}

int main(void) {
  setenv("CUCORE_NVJITLINK", CUCORE_FAKE_TOOLKIT_PATH, 1);
  unsetenv("CUCORE_FAKE_TK_FAIL_AT");
  if (check_13_2_in_child() != 0) return 1;
  setenv("CUCORE_FAKE_TK_JITLINK_VERSION", "13.3", 1);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(two_stages_through_linked_ltoir),
      cmocka_unit_test(two_stages_through_a_relocatable_cubin),
      cmocka_unit_test(complete_with_an_ltoir_target),
      cmocka_unit_test(checks_before_a_link),
      cmocka_unit_test(a_refused_input_is_named),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
