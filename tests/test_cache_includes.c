/* test_cache_includes.c -- the cache key sees every include the preprocessor sees (a header the
 * include scanner missed once gave stale code from the cache after an edit). For each spelling of
 * an include of a header beside the source (comments around the directive or holding a newline
 * before it, `%:`, `?\?=`, line splices in the directive and in the name), a compile through the
 * cache, an edit of the header and a second compile must give the new value, never a stale hit. The
 * scanner itself is checked on texts, and what it must not take for an include (comments, raw
 * strings, digit separators) stays cacheable. */
#include "cache_support.h"

typedef struct fixture {
  char *cache, *src; /* the cache directory, the source directory */
} fixture;

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  if (!f || !(f->cache = cache_test_mkdtemp()) || !(f->src = cache_test_mkdtemp())) return -1;
  if (cache_test_settings(f->cache) != 0) return -1;
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  cache_test_settings(NULL);
  cache_test_rm_rf(f->cache);
  cache_test_rm_rf(f->src);
  free(f->cache);
  free(f->src);
  free(f);
  return 0;
}

static void write_file(const char *dir, const char *name, const char *text) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *fp = fopen(path, "w");
  assert_non_null(fp);
  assert_int_equal(fputs(text, fp) >= 0, 1);
  assert_int_equal(fclose(fp), 0);
}

/* The PTX immediate NVRTC writes for a float constant stored to memory. */
static void float_bits(float v, char *out, size_t cap) {
  uint32_t u;
  memcpy(&u, &v, sizeof u);
  snprintf(out, cap, " %u;", u);
}

/* Compiles `src` (named k.cu beside w.h) through the cache; returns its result and checks
 * that the PTX stores `want` and not `old`. */
static cucore_cache_result compile_expect(const fixture *f, const char *src, const char *std,
                                          float want, float old) {
  char name[4096], w[32], o[32];
  snprintf(name, sizeof name, "%s/k.cu", f->src);
  cucore_options *opts = NULL;
  assert_ok(cucore_options_create(&opts));
  if (std) assert_ok(cucore_options_set_string(opts, CUCORE_OPT_STD, std));
  cucore_object *obj = NULL;
  cucore_cache_info info;
  cucore_status st = cache_test_compile(src, name, "sm_80", CUCORE_CODE_PTX, opts, NULL, 0, 1, &obj,
                                        &info);
  if (st != CUCORE_OK) fail_msg("compile: %s", cucore_last_error());
  float_bits(want, w, sizeof w);
  float_bits(old, o, sizeof o);
  const char *ptx = (const char *)obj->code;
  if (!strstr(ptx, w) || strstr(ptx, o))
    fail_msg("stale PTX (cache %s: %s) for:\n%s\nwant%s\n%s", cucore_cache_result_name(info.result),
             info.reason, src, w, ptx);
  cucore_object_destroy(obj);
  cucore_options_destroy(opts);
  return info.result;
}

static const char KERNEL[] = "\nextern \"C\" __global__ void k(float *x) { *x = VAL; }\n";

static void check_spelling(const fixture *f, const char *include, const char *std) {
  char src[1024];
  snprintf(src, sizeof src, "%s%s", include, KERNEL);
  write_file(f->src, "w.h", "#define VAL 1.0f\n");
  cucore_cache_result r = compile_expect(f, src, std, 1.0f, 2.0f);
  assert_int_not_equal(r, CUCORE_CACHE_MISS); /* never stored: it reads a file from disk */
  write_file(f->src, "w.h", "#define VAL 2.0f\n");
  cc_cache_memory_clear(); /* as a new process would */
  r = compile_expect(f, src, std, 2.0f, 1.0f);
  assert_int_equal(r, CUCORE_CACHE_UNCACHEABLE);
}

static void comment_before_the_hash(void **state) {
  check_spelling(*state, "/**/#include \"w.h\"", NULL);
}
static void comment_after_include(void **state) {
  check_spelling(*state, "#include/**/\"w.h\"", NULL);
}
static void comment_across_lines_in_the_directive(void **state) {
  check_spelling(*state, "# /* a\n b */ include /*\n*/ \"w.h\"", NULL);
}
static void hash_after_a_comment_holding_a_newline(void **state) {
  check_spelling(*state, "struct S; /* a\n */ #include \"w.h\"", NULL);
}
static void digraph_hash(void **state) { check_spelling(*state, "%:include \"w.h\"", NULL); }
static void digraph_hash_with_blanks(void **state) {
  check_spelling(*state, " \t%:\f include\v\"w.h\"", NULL);
}
static void trigraph_hash(void **state) { check_spelling(*state, "?\?=include \"w.h\"", "c++14"); }
static void splice_in_the_directive(void **state) {
  check_spelling(*state, "#inc\\\nlude \"w.h\"", NULL);
}
static void splice_in_the_name(void **state) {
  check_spelling(*state, "#include \"w\\\n.h\"", NULL);
}
static void splice_crlf_in_the_name(void **state) {
  check_spelling(*state, "#include \"w\\\r\n.h\"\r\n", NULL);
}
static void splice_before_the_hash(void **state) {
  check_spelling(*state, "\\\n#\\\ninclude \\\n\"w.h\"", NULL);
}

/* ---- the scanner on texts ---------------------------------------------------------------- */

typedef struct found {
  char text[512];
} found;

/* Appends "kind:how:name;" for each reference. */
static int collect(void *ctx, const cc_include_ref *r) {
  found *f = ctx;
  size_t n = strlen(f->text);
  snprintf(f->text + n, sizeof f->text - n, "%c:%s:%.*s;",
           r->kind == CC_INCLUDE_QUOTED  ? 'Q'
           : r->kind == CC_INCLUDE_ANGLE ? 'A'
                                         : 'U',
           r->how, (int)r->len, r->text);
  return 0;
}

static const char *scan(found *f, const char *text) {
  f->text[0] = '\0';
  assert_int_equal(cc_cache_scan_includes(text, strlen(text), collect, f), 0);
  return f->text;
}

static void scanner_reads_the_phases_1_to_3_view(void **state) {
  (void)state;
  found f;
  /* What is an include. */
  assert_string_equal(scan(&f, "#include <a.h>\n# include_next \"b.h\"\n"),
                      "A:#include:a.h;Q:#include_next:b.h;");
  assert_string_equal(scan(&f, "/**/#include \"w.h\""), "Q:#include:w.h;");
  assert_string_equal(scan(&f, "#include/**/\"w.h\""), "Q:#include:w.h;");
  assert_string_equal(scan(&f, "%:include \"w.h\""), "Q:#include:w.h;");
  assert_string_equal(scan(&f, "?\?=include \"w.h\""), "Q:#include:w.h;");
  assert_string_equal(scan(&f, "#include \"w\\\n.h\""), "Q:#include:w.h;");
  assert_string_equal(scan(&f, "x = 1; /* \n */ y = 2;\n#include \"w.h\""), "Q:#include:w.h;");
  assert_string_equal(scan(&f, "x = 1; /* \n */ #include \"w.h\""), "Q:#include:w.h;");
  assert_string_equal(scan(&f, "x = 1; /* */ #include \"a.h\"\ny; \\\n#include \"b.h\""), "");
  static const char nul[] = "#include \"w.h\"\0\n#include \"a.h\""; /* NVRTC stops at NUL */
  f.text[0] = '\0';
  assert_int_equal(cc_cache_scan_includes(nul, sizeof nul - 1, collect, &f), 0);
  assert_string_equal(f.text, "Q:#include:w.h;");
  assert_string_equal(scan(&f, "#if __has_include(\"h.h\") && __has_include_next(<n.h>)\n"),
                      "Q:__has_include:h.h;A:__has_include_next:n.h;");
  /* What cannot be resolved. */
  assert_string_equal(scan(&f, "#include HDR\n"), "U:#include:HDR;");
  assert_string_equal(scan(&f, "#include\n"), "U:#include:;");
  assert_string_equal(scan(&f, "#include \"a?\?=b.h\"\n"), "U:#include:\"a#b.h\";");
  assert_string_equal(scan(&f, "#include \"w?\?/.h\"\n"), "U:#include:\"w?\?/.h\";");
  assert_string_equal(scan(&f, "#if __has_include(X)\n"), "U:__has_include:X;");
  assert_string_equal(scan(&f, "#define HI __has_include\n"), "U:__has_include:;");
  assert_contains(scan(&f, "// x ?\?/\n#include \"w.h\"\n"), "U:a `?\?/` trigraph");
  /* What is not an include. */
  assert_string_equal(scan(&f, "// #include \"a.h\"\n/*\n#include \"b.h\"\n*/\n"), "");
  assert_string_equal(scan(&f, "const char *s = R\"x(\n#include \"a.h\"\n)x\";\n"), "");
  assert_string_equal(scan(&f, "auto s = u8R\"(\n#include \"a.h\"\n)\";\n"), "");
  assert_string_equal(scan(&f, "int a = 1'000; /*\n#include \"a.h\"\n*/\n"), "");
  assert_string_equal(scan(&f, "char c = '\"'; /*\n#include \"a.h\"\n*/\n"), "");
  assert_string_equal(scan(&f, "const char *s = \"/*\";\n#include \"w.h\"\n"), "Q:#include:w.h;");
  assert_string_equal(scan(&f, "// a \\\n#include \"a.h\"\n"), "");
  assert_string_equal(scan(&f, "// a \\ \n#include \"w.h\"\n"), "Q:#include:w.h;");
  assert_string_equal(scan(&f, "x \r#include \"a.h\"\n"), "");
  assert_string_equal(scan(&f, "#ifdef __has_include\n#elif defined(__has_include)\n"), "");
  assert_string_equal(scan(&f, "my__has_include(\"a.h\")\n"), "");
}

/* Every reference points into the view, whose length never passes the text's. */
static int bounded(void *ctx, const cc_include_ref *r) {
  size_t *n = ctx;
  assert_true(r->len <= *n);
  assert_non_null(r->how);
  return 0;
}

/* Texts made of the characters the phases and the directives care about, cut anywhere: the
 * scanner reads none of them out of bounds (run under ASan in CI) and never fails. */
static void scanner_survives_any_text(void **state) {
  (void)state;
  static const char alphabet[] = "#\"'/*\\\n\r?=%:<>()Ru8LU_x1. \tinclude__has_";
  char text[64];
  unsigned seed = 12345;
  for (int round = 0; round < 20000; round++) {
    size_t n = (size_t)(round % 64);
    for (size_t i = 0; i < n; i++) {
      seed = seed * 1103515245u + 12345u;
      text[i] = alphabet[(seed >> 16) % (sizeof alphabet - 1)];
    }
    char *exact = malloc(n ? n : 1); /* no terminator: ASan sees any read past n */
    assert_non_null(exact);
    memcpy(exact, text, n);
    assert_int_equal(cc_cache_scan_includes(exact, n, bounded, &n), 0);
    free(exact);
  }
}

/* What looks like an include but is none keeps the compile cacheable; what cannot be listed
 * does not. */
static void only_real_includes_make_it_uncacheable(void **state) {
  fixture *f = *state;
  write_file(f->src, "w.h", "#define VAL 1.0f\n");
  char src[1024];
  snprintf(src, sizeof src,
           "#define VAL 3.0f\n// #include \"w.h\"\n/*\n#include \"w.h\"\n*/\n"
           "#define S \"#include \\\"w.h\\\"\"\n%s",
           KERNEL);
  assert_int_equal(compile_expect(f, src, NULL, 3.0f, 1.0f), CUCORE_CACHE_MISS);
  cucore_cache_info info;
  cucore_object *obj = NULL;
  char name[4096];
  snprintf(name, sizeof name, "%s/k.cu", f->src);
  const char *has = "#if __has_include(\"nothing-here.h\")\n#define VAL 4.0f\n#else\n"
                    "#define VAL 3.0f\n#endif\n"
                    "extern \"C\" __global__ void k(float *x) { *x = VAL; }\n";
  assert_ok(cache_test_compile(has, name, "sm_80", CUCORE_CODE_PTX, NULL, NULL, 0, 1, &obj, &info));
  assert_int_equal(info.result, CUCORE_CACHE_UNCACHEABLE);
  assert_contains(info.reason, "__has_include(\"nothing-here.h\")");
  cucore_object_destroy(obj);
  obj = NULL;
  const char *trig = "// a ?\?/\n#define VAL 3.0f\n"
                     "extern \"C\" __global__ void k(float *x) { *x = VAL; }\n";
  assert_ok(
      cache_test_compile(trig, name, "sm_80", CUCORE_CODE_PTX, NULL, NULL, 0, 1, &obj, &info));
  assert_int_equal(info.result, CUCORE_CACHE_UNCACHEABLE);
  assert_contains(info.reason, "trigraph");
  cucore_object_destroy(obj);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(scanner_reads_the_phases_1_to_3_view),
      cmocka_unit_test(scanner_survives_any_text),
      cmocka_unit_test_setup_teardown(comment_before_the_hash, setup, teardown),
      cmocka_unit_test_setup_teardown(comment_after_include, setup, teardown),
      cmocka_unit_test_setup_teardown(comment_across_lines_in_the_directive, setup, teardown),
      cmocka_unit_test_setup_teardown(hash_after_a_comment_holding_a_newline, setup, teardown),
      cmocka_unit_test_setup_teardown(digraph_hash, setup, teardown),
      cmocka_unit_test_setup_teardown(digraph_hash_with_blanks, setup, teardown),
      cmocka_unit_test_setup_teardown(trigraph_hash, setup, teardown),
      cmocka_unit_test_setup_teardown(splice_in_the_directive, setup, teardown),
      cmocka_unit_test_setup_teardown(splice_in_the_name, setup, teardown),
      cmocka_unit_test_setup_teardown(splice_crlf_in_the_name, setup, teardown),
      cmocka_unit_test_setup_teardown(splice_before_the_hash, setup, teardown),
      cmocka_unit_test_setup_teardown(only_real_includes_make_it_uncacheable, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
