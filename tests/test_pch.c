/* test_pch.c -- NVRTC's precompiled headers through the real NVRTC, behind the fake toolkit
 * (tests/fake/fake_toolkit.c) that can report the PCH heap exhausted: a PCH created in a
 * temporary directory and used again, the statuses, automatic mode with the compile cache (a hit
 * never says a PCH was made), the heap raised and the compile run once more, and a PCH option
 * refused by an NVRTC older than 12.8 (a child process that loads NVRTC believing it is 12.2). */
#include "cache_support.h"

#include <dlfcn.h>
#include <sys/wait.h>

static char *dir;
static void *shim;
static char header[1 << 17];

/* A header of many templates: long enough for a PCH to pay off. */
static void make_header(void) {
  size_t n = 0;
  n += (size_t)snprintf(header + n, sizeof header - n, "#pragma once\n");
  for (int i = 0; i < 600 && n + 256 < sizeof header; i++)
    n += (size_t)snprintf(header + n, sizeof header - n,
                          "template <typename T> struct S%d { T v; __device__ T get() const "
                          "{ return v * (T)%d; } };\n",
                          i, i);
}

static const char *source_a = "#include \"big.h\"\n"
                              "extern \"C\" __global__ void a(float *x) { S1<float> s{x[0]}; "
                              "x[1] = s.get(); }\n";
static const char *source_b = "#include \"big.h\"\n"
                              "extern \"C\" __global__ void b(float *x) { S2<float> s{x[0]}; "
                              "x[1] = s.get(); }\n";

/* Compiles `src` to PTX with the options `set` gives; the status, PCH status, log and cache
 * result come back. */
typedef struct run {
  cucore_status st;
  cucore_pch_status pch;
  cucore_cache_result cache;
  char log[4096];
} run;

static run compile(const char *src, const char *name, const char *opt_words[]) {
  cucore_options *o = NULL;
  assert_ok(cucore_options_create(&o));
  assert_ok(cucore_options_set_string(o, CUCORE_OPT_ARCH, "sm_90"));
  assert_ok(cucore_options_add_header(o, "big.h", header));
  for (int i = 0; opt_words[i]; i++) {
    int used = 0;
    assert_ok(cucore_options_parse(o, opt_words[i], NULL, &used));
  }
  cucore_program *p = NULL;
  assert_ok(cucore_program_create(CUCORE_CODE_CUDA_CPP, src, 0, name, o, &p));
  cucore_object *obj = NULL;
  run r;
  memset(&r, 0, sizeof r);
  r.st = cucore_program_compile(p, CUCORE_CODE_PTX, &obj);
  assert_ok(cucore_program_get_pch_status(p, &r.pch));
  const char *log = NULL;
  assert_ok(cucore_program_get_log(p, &log));
  snprintf(r.log, sizeof r.log, "%s", log);
  cucore_cache_info info;
  assert_ok(cucore_program_get_cache_info(p, &info));
  r.cache = info.result;
  cucore_object_destroy(obj);
  cucore_program_destroy(p);
  cucore_options_destroy(o);
  return r;
}

static int setup(void **state) {
  (void)state;
  dir = cache_test_mkdtemp();
  char pch[600];
  snprintf(pch, sizeof pch, "%s/pch", dir ? dir : "");
  return dir && mkdir(pch, 0700) == 0 && cache_test_settings(dir) == 0 ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  cache_test_rm_rf(dir);
  free(dir);
  return 0;
}

static void create_then_use(void **state) {
  (void)state;
  char create[600], use[600];
  snprintf(create, sizeof create, "--create-pch=%s/pch/big.pch", dir);
  snprintf(use, sizeof use, "--use-pch=%s/pch/big.pch", dir);
  const char *c[] = {create, NULL}, *u[] = {use, NULL};
  run r = compile(source_a, "a.cu", c);
  assert_ok(r.st);
  assert_int_equal(r.pch, CUCORE_PCH_CREATED);
  assert_string_equal(cucore_pch_status_name(r.pch), "created");
  assert_int_equal(r.cache, CUCORE_CACHE_UNCACHEABLE); /* it writes the PCH file */
  assert_contains(r.log, "creating precompiled header file");
  struct stat st;
  char path[600];
  snprintf(path, sizeof path, "%s/pch/big.pch", dir);
  assert_int_equal(stat(path, &st), 0);
  assert_true(st.st_size > 0);
  r = compile(source_b, "b.cu", u);
  assert_ok(r.st);
  assert_int_equal(r.pch, CUCORE_PCH_NOT_ATTEMPTED);
  assert_contains(r.log, "using precompiled header file");
  assert_int_equal(r.cache, CUCORE_CACHE_MISS); /* use-pch is not in the key */
  /* The same compile without the PCH is a hit on that entry, and claims no PCH. */
  const char *none[] = {NULL};
  r = compile(source_b, "b.cu", none);
  assert_int_equal(r.cache, CUCORE_CACHE_HIT_MEMORY);
  assert_int_equal(r.pch, CUCORE_PCH_NONE);
  assert_null(strstr(r.log, "precompiled header file"));
  /* No PCH option: NVRTC is not asked. */
  r = compile(source_a, "a.cu", none);
  assert_int_equal(r.pch, CUCORE_PCH_NONE);
}

static void automatic_pch_and_the_cache(void **state) {
  (void)state;
  char pdir[600];
  snprintf(pdir, sizeof pdir, "--pch-dir=%s/pch", dir);
  const char *words[] = {"--pch", pdir, NULL};
  run r = compile(source_a, "a.cu", words);
  assert_ok(r.st);
  assert_int_equal(r.pch, CUCORE_PCH_CREATED);
  assert_int_equal(r.cache, CUCORE_CACHE_MISS);
  r = compile(source_b, "b.cu", words);
  assert_ok(r.st);
  assert_int_equal(r.pch, CUCORE_PCH_NOT_ATTEMPTED);
  /* From the disk this time: the entry's log has no PCH line, the status says none. */
  cc_cache_memory_clear();
  r = compile(source_a, "a.cu", words);
  assert_int_equal(r.cache, CUCORE_CACHE_HIT_DISK);
  assert_int_equal(r.pch, CUCORE_PCH_NONE);
  assert_null(strstr(r.log, "creating precompiled header"));
}

/* The fake says the heap was exhausted: cucore asks for the size, raises the heap once and
 * compiles again; exhausted twice, the status says so (the code is still made). */
static void exhausted_heap_is_raised_and_retried_once(void **state) {
  (void)state;
  void (*exhaust)(int) = (void (*)(int))(uintptr_t)dlsym(shim, "fake_tk_pch_exhaust");
  long (*sets)(void) = (long (*)(void))(uintptr_t)dlsym(shim, "fake_tk_pch_heap_sets");
  size_t (*last)(void) = (size_t(*)(void))(uintptr_t)dlsym(shim, "fake_tk_pch_heap_last");
  assert_non_null(exhaust);
  char create[600];
  snprintf(create, sizeof create, "--create-pch=%s/pch/retry.pch", dir);
  const char *c[] = {create, NULL};
  size_t before = 0;
  assert_int_equal(NVRTC(nvrtcGetPCHHeapSize)(&before), NVRTC_SUCCESS);
  long sets0 = sets();
  exhaust(1);
  run r = compile(source_a, "a.cu", c);
  assert_ok(r.st);
  assert_int_equal(r.pch, CUCORE_PCH_CREATED);
  assert_int_equal(sets() - sets0, 1);
  assert_int_equal(last(), before + ((size_t)1 << 20));
  exhaust(2);
  r = compile(source_a, "a.cu", c);
  assert_ok(r.st);
  assert_int_equal(r.pch, CUCORE_PCH_HEAP_EXHAUSTED);
  assert_string_equal(cucore_pch_status_name(r.pch), "heap_exhausted");
  assert_int_equal(sets() - sets0, 2);
  assert_string_equal(cucore_pch_status_name((cucore_pch_status)99), "unknown");
}

/* In a child: NVRTC loaded as 12.2 refuses the pch option, naming both versions. */
static void an_older_nvrtc_refuses_pch(void **state) {
  (void)state;
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    void (*setv)(int, int) = (void (*)(int, int))(uintptr_t)dlsym(shim,
                                                                  "fake_tk_set_nvrtc_version");
    setv(12, 2);
    cucore_options *o = NULL;
    cucore_program *p = NULL;
    cucore_object *obj = NULL;
    cucore_options_create(&o);
    cucore_options_set_string(o, CUCORE_OPT_ARCH, "sm_90");
    cucore_options_set_int(o, CUCORE_OPT_PCH, 1);
    cucore_program_create(CUCORE_CODE_CUDA_CPP, source_a, 0, "a.cu", o, &p);
    cucore_status st = cucore_program_compile(p, CUCORE_CODE_PTX, &obj);
    int ok = CUCORE_CODE(st) == CUCORE_TOOLKIT_TOO_OLD &&
             strstr(cucore_last_error(), "option `pch` needs NVRTC 12.8 or newer; the loaded "
                                         "NVRTC is 12.2");
    if (!ok) fprintf(stderr, "child: %s\n", cucore_last_error());
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(void) {
  /* Every NVRTC call of this process goes through the fake, to the real NVRTC. Loaded here, in
   * the parent, only after the child test has forked (it must load NVRTC itself). */
  char real_nvrtc[4096], real_jl[4096];
  if (cc_nvrtc_locate(real_nvrtc, sizeof real_nvrtc) != 0 ||
      cc_nvjitlink_locate(real_jl, sizeof real_jl) != 0) {
    fprintf(stderr, "test_pch: no NVRTC or nvJitLink found; skipped\n");
    return 77;
  }
  setenv("CUCORE_NVRTC", CUCORE_FAKE_TOOLKIT_PATH, 1);
  setenv("CUCORE_NVJITLINK", CUCORE_FAKE_TOOLKIT_PATH, 1);
  setenv("CUCORE_FAKE_REAL_NVRTC", real_nvrtc, 1);
  setenv("CUCORE_FAKE_REAL_NVJITLINK", real_jl, 1);
  shim = dlopen(CUCORE_FAKE_TOOLKIT_PATH, RTLD_NOW);
  if (!shim) return 1;
  make_header();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(an_older_nvrtc_refuses_pch),
      cmocka_unit_test_setup_teardown(create_then_use, setup, teardown),
      cmocka_unit_test_setup_teardown(automatic_pch_and_the_cache, setup, teardown),
      cmocka_unit_test_setup_teardown(exhausted_heap_is_raised_and_retried_once, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
