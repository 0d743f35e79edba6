/* test_diagnostics.c -- compile logs read into records: logs NVRTC, nvJitLink (ptxas) and
 * libNVVM wrote (kept as fixtures, byte for byte), odd file names (parentheses, spaces,
 * Windows paths), CRLF, no trailing newline, an empty log, a message of a megabyte, every
 * allocation failing in turn; and through the Program API on real NVRTC compiles (no GPU
 * needed), a cache hit giving the same records. */
#include "support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "compile/diag.h"

static cc_diag_list parse_ok(const char *log) {
  cc_diag_list l = {0};
  assert_int_equal(cc_diag_parse(log, &l), 0);
  return l;
}

static void check_rec(const cucore_diagnostic *d, cucore_diag_severity sev, const char *file,
                      int line, int col, int number, const char *message) {
  if (d->severity != sev)
    fail_msg("`%s`: severity %s, expected %s", d->text, cucore_diag_severity_name(d->severity),
             cucore_diag_severity_name(sev));
  assert_string_equal(d->file, file);
  assert_int_equal(d->line, line);
  assert_int_equal(d->column, col);
  assert_int_equal(d->number, number);
  assert_string_equal(d->message, message);
}

/* ---- NVRTC --------------------------------------------------------------------------------- */

static const char nvrtc_log[] =
    "bad.cu(2): error: identifier \"nope\" is undefined\n"
    "    *p = nope;\n"
    "         ^\n"
    "\n"
    "bad.cu(3): warning #177-D: variable \"unused\" was declared but never referenced\n"
    "  \tint unused = 3;\n"
    "  \t    ^\n"
    "\n"
    "Remark: The warnings can be suppressed with \"-diag-suppress <warning-number>\"\n"
    "\n"
    "1 error detected in the compilation of \"bad.cu\".\n";

static void nvrtc_errors_warnings_and_summary(void **state) {
  (void)state;
  cc_diag_list l = parse_ok(nvrtc_log);
  assert_int_equal(l.n, 4);
  check_rec(&l.v[0], CUCORE_DIAG_ERROR, "bad.cu", 2, 8, 0, "identifier \"nope\" is undefined");
  assert_string_equal(l.v[0].text, "bad.cu(2): error: identifier \"nope\" is undefined\n"
                                   "    *p = nope;\n"
                                   "         ^");
  /* The tab is echoed as a tab: the column counts bytes of the source line. */
  check_rec(&l.v[1], CUCORE_DIAG_WARNING, "bad.cu", 3, 6, 177,
            "variable \"unused\" was declared but never referenced");
  check_rec(&l.v[2], CUCORE_DIAG_REMARK, "", 0, 0, 0,
            "The warnings can be suppressed with \"-diag-suppress <warning-number>\"");
  check_rec(&l.v[3], CUCORE_DIAG_TEXT, "", 0, 0, 0,
            "1 error detected in the compilation of \"bad.cu\".");
  cc_diag_free(&l);
  assert_int_equal(l.n, 0);
}

static void nvrtc_odd_names_and_shapes(void **state) {
  (void)state;
  cc_diag_list l = parse_ok(
      "dir (x)/my(file).cu(2): error: identifier \"nope\" is undefined\n"
      "    *p = nope;\n"
      "         ^\n"
      "\n"
      "dir (x)/my(file).cu(3): warning: variable \"unused\" was declared but never referenced\n"
      "\n"
      "C:\\src\\k.cu(1): catastrophic error: cannot open source file \"missing.h\"\n"
      "  #include \"missing.h\"\n"
      "                      ^\n"
      "\n"
      "1 catastrophic error detected in the compilation of \"C:\\src\\k.cu\".\n"
      "Compilation terminated.\n"
      "t.cu(1): error: name followed by \"::\" must be a class or namespace name\n"
      "  template<class T> __global__ void f(T *p){ *p = T::nope; }\n"
      "                                                  ^\n"
      "          detected during instantiation of \"void f(T *) [with T=int]\" at line 2\n"
      "nvrtc: error: unrecognized option --bogus found\n"
      "k.cu(7): internal error: assertion failed\n"
      "s.cu(2): warning #550-D: variable \"m\" was set but never used\n"
      "    const char *m = \"x.cu(1): error: not a record\";\n"
      "                 ^\n");
  assert_int_equal(l.n, 9);
  check_rec(&l.v[0], CUCORE_DIAG_ERROR, "dir (x)/my(file).cu", 2, 8, 0,
            "identifier \"nope\" is undefined");
  check_rec(&l.v[1], CUCORE_DIAG_WARNING, "dir (x)/my(file).cu", 3, 0, 0,
            "variable \"unused\" was declared but never referenced");
  check_rec(&l.v[2], CUCORE_DIAG_FATAL, "C:\\src\\k.cu", 1, 21, 0,
            "cannot open source file \"missing.h\"");
  check_rec(&l.v[3], CUCORE_DIAG_TEXT, "", 0, 0, 0,
            "1 catastrophic error detected in the compilation of \"C:\\src\\k.cu\".");
  check_rec(&l.v[4], CUCORE_DIAG_TEXT, "", 0, 0, 0, "Compilation terminated.");
  check_rec(&l.v[5], CUCORE_DIAG_ERROR, "t.cu", 1, 49, 0,
            "name followed by \"::\" must be a class or namespace name");
  assert_contains(l.v[5].text, "detected during instantiation");
  check_rec(&l.v[6], CUCORE_DIAG_ERROR, "", 0, 0, 0, "unrecognized option --bogus found");
  check_rec(&l.v[7], CUCORE_DIAG_FATAL, "k.cu", 7, 0, 0, "assertion failed");
  /* An echoed source line that reads like a header stays the record's. */
  check_rec(&l.v[8], CUCORE_DIAG_WARNING, "s.cu", 2, 16, 550,
            "variable \"m\" was set but never used");
  assert_contains(l.v[8].text, "not a record");
  cc_diag_free(&l);
}

/* ---- nvJitLink, ptxas, libNVVM -------------------------------------------------------------- */

static void ptxas_and_nvjitlink(void **state) {
  (void)state;
  cc_diag_list l = parse_ok(
      "ptxas application ptx input, line 6; error   : Arguments mismatch for instruction 'ld'\n"
      "ptxas application ptx input, line 7; error   : Unknown modifier '.instr'\n"
      "ptxas /tmp/a, b.ptx, line 12; warning : Double is not supported. Demoting to float\n"
      "ptxas fatal   : Ptx assembly aborted due to errors\n"
      "ERROR NVJITLINK_ERROR_PTX_COMPILE: JIT the PTX (k.ptx)\n"
      "error   : Undefined reference to 'g' in 'u.ptx'\n"
      "ERROR 1: finish\n"
      "ptxas info    : Function properties for _Z1fPi\n"
      "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "info    : 0 bytes gmem\n");
  assert_int_equal(l.n, 9);
  check_rec(&l.v[0], CUCORE_DIAG_ERROR, "application ptx input", 6, 0, 0,
            "Arguments mismatch for instruction 'ld'");
  check_rec(&l.v[1], CUCORE_DIAG_ERROR, "application ptx input", 7, 0, 0,
            "Unknown modifier '.instr'");
  check_rec(&l.v[2], CUCORE_DIAG_WARNING, "/tmp/a, b.ptx", 12, 0, 0,
            "Double is not supported. Demoting to float");
  check_rec(&l.v[3], CUCORE_DIAG_FATAL, "", 0, 0, 0, "Ptx assembly aborted due to errors");
  check_rec(&l.v[4], CUCORE_DIAG_ERROR, "", 0, 0, 0, "JIT the PTX (k.ptx)");
  check_rec(&l.v[5], CUCORE_DIAG_ERROR, "", 0, 0, 0, "Undefined reference to 'g' in 'u.ptx'");
  check_rec(&l.v[6], CUCORE_DIAG_ERROR, "", 0, 0, 1, "finish");
  check_rec(&l.v[7], CUCORE_DIAG_INFO, "", 0, 0, 0, "Function properties for _Z1fPi");
  assert_contains(l.v[7].text, "0 bytes stack frame"); /* its detail line belongs to it */
  check_rec(&l.v[8], CUCORE_DIAG_INFO, "", 0, 0, 0, "0 bytes gmem");
  cc_diag_free(&l);
}

static void nvvm_and_colon_shapes(void **state) {
  (void)state;
  /* libNVVM's log has no trailing newline; CRLF lines read as LF ones. */
  cc_diag_list l = parse_ok("IR version 1.0 incompatible with current version 2.0\r\n"
                            "m.ll: error: incompatible IR detected.\r\n"
                            "m (1).ll (4, 12): parse use of undefined value '%undefined'\r\n"
                            "C:\\x\\m.ll:3:4: warning: something odd\n"
                            "lib.cu:9: note: declared here\n"
                            "g.ll (1, 0): parse expected top-level entity");
  assert_int_equal(l.n, 6);
  check_rec(&l.v[0], CUCORE_DIAG_TEXT, "", 0, 0, 0,
            "IR version 1.0 incompatible with current version 2.0");
  check_rec(&l.v[1], CUCORE_DIAG_ERROR, "m.ll", 0, 0, 0, "incompatible IR detected.");
  check_rec(&l.v[2], CUCORE_DIAG_ERROR, "m (1).ll", 4, 12, 0,
            "parse use of undefined value '%undefined'");
  assert_string_equal(l.v[2].text, "m (1).ll (4, 12): parse use of undefined value '%undefined'");
  check_rec(&l.v[3], CUCORE_DIAG_WARNING, "C:\\x\\m.ll", 3, 4, 0, "something odd");
  check_rec(&l.v[4], CUCORE_DIAG_NOTE, "lib.cu", 9, 0, 0, "declared here");
  check_rec(&l.v[5], CUCORE_DIAG_ERROR, "g.ll", 1, 0, 0, "parse expected top-level entity");
  cc_diag_free(&l);
}

/* ---- limits -------------------------------------------------------------------------------- */

static void empty_long_and_out_of_memory(void **state) {
  (void)state;
  cc_diag_list l = parse_ok(NULL);
  assert_int_equal(l.n, 0);
  l = parse_ok("");
  assert_int_equal(l.n, 0);
  l = parse_ok("\n\n  \n\t\n");
  assert_int_equal(l.n, 0);
  /* A megabyte message and a long file name, read whole. */
  size_t big = 1 << 20;
  char *log = malloc(2 * big + 64);
  char *p = log;
  memset(p, 'd', 5000);
  p += 5000;
  p += sprintf(p, ".cu(123456789): error #20054-D: ");
  memset(p, 'm', big);
  p += big;
  strcpy(p, "\n    x;\n     ^");
  l = parse_ok(log);
  assert_int_equal(l.n, 1);
  assert_int_equal(strlen(l.v[0].file), 5003);
  assert_int_equal(strlen(l.v[0].message), big);
  assert_int_equal(l.v[0].line, 123456789);
  assert_int_equal(l.v[0].number, 20054);
  assert_int_equal(l.v[0].column, 4);
  cc_diag_free(&l);
  /* A line number too long for an int is not taken as one. */
  l = parse_ok("k.cu(12345678901234): error: x");
  assert_int_equal(l.n, 1);
  assert_int_equal(l.v[0].line, 0);
  cc_diag_free(&l);
  /* Every allocation failing in turn: -1, nothing held (ASan and valgrind see leaks). */
  cc_test_alloc_hook(1, 0);
  l = parse_ok(nvrtc_log);
  long count = cc_test_alloc_count();
  cc_test_alloc_hook(0, 0);
  cc_diag_free(&l);
  assert_true(count > 4);
  for (long k = 1; k <= count; k++) {
    cc_test_alloc_hook(1, k);
    int rc = cc_diag_parse(nvrtc_log, &l);
    cc_test_alloc_hook(0, 0);
    assert_int_equal(rc, -1);
    assert_int_equal(l.n, 0);
    assert_null(l.v);
  }
  free(log);
}

/* ---- through Program on real NVRTC -------------------------------------------------------- */

static cucore_program *compile_src(const char *src, const char *name, const char *raw,
                                   cucore_status want) {
  cucore_options *o = NULL;
  assert_ok(cucore_options_create(&o));
  assert_ok(cucore_options_set_string(o, CUCORE_OPT_ARCH, "sm_90"));
  if (raw) assert_ok(cucore_options_set_string(o, CUCORE_OPT_RAW, raw));
  cucore_program *p = NULL;
  assert_ok(cucore_program_create(CUCORE_CODE_CUDA_CPP, src, 0, name, o, &p));
  cucore_object *obj = NULL;
  cucore_status st = cucore_program_compile(p, CUCORE_CODE_CUBIN, &obj);
  assert_int_equal(CUCORE_CODE(st), CUCORE_CODE(want));
  cucore_object_destroy(obj);
  cucore_options_destroy(o);
  return p;
}

static void program_reads_real_nvrtc_logs(void **state) {
  (void)state;
  const char *bad = "__global__ void f(int *p) {\n  *p = nope;\n\tint unused = 3;\n}\n";
  cucore_program *p = compile_src(bad, "my (odd) name.cu", NULL, CUCORE_COMPILE_ERROR);
  int n = -1;
  assert_ok(cucore_program_get_diagnostic_count(p, &n));
  assert_true(n >= 3);
  cucore_diagnostic d;
  assert_ok(cucore_program_get_diagnostic(p, 0, &d));
  check_rec(&d, CUCORE_DIAG_ERROR, "my (odd) name.cu", 2, 8, 0, "identifier \"nope\" is undefined");
  assert_ok(cucore_program_get_diagnostic(p, 1, &d));
  assert_int_equal(d.severity, CUCORE_DIAG_WARNING);
  assert_int_equal(d.line, 3);
  assert_int_equal(d.column, 6);
  assert_true(d.number > 0);
  assert_ok(cucore_program_get_diagnostic(p, n - 1, &d));
  assert_int_equal(d.severity, CUCORE_DIAG_TEXT);
  assert_contains(d.message, "error detected");
  assert_int_equal(cucore_program_get_diagnostic(p, n, &d), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "out of range");
  assert_int_equal(cucore_program_get_diagnostic(p, -1, &d), CUCORE_INVALID_ARGUMENT);
  assert_string_equal(d.message, "");
  cucore_program_destroy(p);
  /* Without numbers. */
  p = compile_src(bad, "k.cu", "--no-display-error-number", CUCORE_COMPILE_ERROR);
  assert_ok(cucore_program_get_diagnostic(p, 1, &d));
  check_rec(&d, CUCORE_DIAG_WARNING, "k.cu", 3, 6, 0,
            "variable \"unused\" was declared but never referenced");
  cucore_program_destroy(p);
  /* A missing header: catastrophic. */
  p = compile_src("#include \"missing.h\"\n", "C:\\src\\k.cu", NULL, CUCORE_COMPILE_ERROR);
  assert_ok(cucore_program_get_diagnostic(p, 0, &d));
  check_rec(&d, CUCORE_DIAG_FATAL, "C:\\src\\k.cu", 1, 21, 0,
            "cannot open source file \"missing.h\"");
  cucore_program_destroy(p);
}

static void warnings_survive_a_cache_hit(void **state) {
  (void)state;
  const char *src = "extern \"C\" __global__ void w(int *p) { int unused = 3; *p = 1; }\n";
  for (int round = 0; round < 2; round++) {
    cucore_program *p = compile_src(src, "w.cu", NULL, CUCORE_OK);
    int n = 0;
    assert_ok(cucore_program_get_diagnostic_count(p, &n));
    assert_true(n >= 1);
    cucore_diagnostic d;
    assert_ok(cucore_program_get_diagnostic(p, 0, &d));
    assert_int_equal(d.severity, CUCORE_DIAG_WARNING);
    assert_string_equal(d.file, "w.cu");
    assert_int_equal(d.line, 1);
    cucore_cache_info info;
    assert_ok(cucore_program_get_cache_info(p, &info));
    if (round == 1) assert_int_equal(info.result, CUCORE_CACHE_HIT_MEMORY);
    cucore_program_destroy(p);
  }
  /* A clean compile has no records; a program never compiled neither. */
  cucore_program *p = compile_src("__global__ void k() {}\n", "k.cu", NULL, CUCORE_OK);
  int n = -1;
  assert_ok(cucore_program_get_diagnostic_count(p, &n));
  assert_int_equal(n, 0);
  assert_int_equal(cucore_program_get_diagnostic_count(NULL, &n), CUCORE_INVALID_ARGUMENT);
  assert_int_equal(cucore_program_get_diagnostic_count(p, NULL), CUCORE_INVALID_ARGUMENT);
  cucore_program_destroy(p);
  assert_string_equal(cucore_diag_severity_name(CUCORE_DIAG_FATAL), "fatal");
  assert_string_equal(cucore_diag_severity_name((cucore_diag_severity)99), "unknown");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(nvrtc_errors_warnings_and_summary),
      cmocka_unit_test(nvrtc_odd_names_and_shapes),
      cmocka_unit_test(ptxas_and_nvjitlink),
      cmocka_unit_test(nvvm_and_colon_shapes),
      cmocka_unit_test(empty_long_and_out_of_memory),
      cmocka_unit_test(program_reads_real_nvrtc_logs),
      cmocka_unit_test(warnings_survive_a_cache_hit),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
