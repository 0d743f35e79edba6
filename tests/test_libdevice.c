/* test_libdevice.c -- libdevice for NVVM IR programs, with the real libNVVM and no GPU: IR that
 * calls __nv_sinf / __nv_expf compiles (to PTX with the functions defined, and on to a cubin);
 * IR that calls none never looks for libdevice; an override naming a missing file, a directory
 * or a file that is not bitcode is an error naming the path; the search order over the toolkit
 * roots (a fake root); the compile cache's key follows the libdevice file. */
#include "support.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "loader/loader.h" /* white-box: the scan */

#define NVVM_HEAD                                                       \
  "target datalayout = \"e-i64:64-i128:128-v16:16-v32:32-n16:32:64\"\n" \
  "target triple = \"nvptx64-nvidia-cuda\"\n"
#define NVVM_TAIL                                                          \
  "!nvvm.annotations = !{!0}\n"                                            \
  "!0 = !{void (float addrspace(1)*, float)* @kern, !\"kernel\", i32 1}\n" \
  "!nvvmir.version = !{!1}\n!1 = !{i32 2, i32 0, i32 3, i32 2}\n"

/* out[0] = sinf(v) + expf(v), through libdevice. */
static const char *math_ir = NVVM_HEAD
    "declare float @__nv_sinf(float)\n"
    "declare float @__nv_expf(float)\n"
    "define void @kern(float addrspace(1)* %p, float %v) {\n"
    "  %s = call float @__nv_sinf(float %v)\n"
    "  %e = call float @__nv_expf(float %v)\n"
    "  %r = fadd float %s, %e\n"
    "  store float %r, float addrspace(1)* %p\n  ret void\n}\n" NVVM_TAIL;

static const char *plain_ir = NVVM_HEAD
    "define void @kern(float addrspace(1)* %p, float %v) {\n"
    "  store float %v, float addrspace(1)* %p\n  ret void\n}\n" NVVM_TAIL;

static char *tmp_dir;

static char *tprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *tprintf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *s = NULL;
  if (vasprintf(&s, fmt, ap) < 0) s = NULL;
  va_end(ap);
  if (!s) abort();
  return s;
}

static cucore_program *program(const char *ir, const char *libdevice) {
  cucore_options *o = NULL;
  assert_ok(cucore_options_create(&o));
  assert_ok(cucore_options_set_string(o, CUCORE_OPT_ARCH, "sm_90"));
  if (libdevice) assert_ok(cucore_options_set_string(o, CUCORE_OPT_LIBDEVICE, libdevice));
  cucore_program *p = NULL;
  assert_ok(cucore_program_create(CUCORE_CODE_NVVM, ir, 0, "k.ll", o, &p));
  assert_ok(cucore_program_set_cache(p, 0));
  cucore_options_destroy(o);
  return p;
}

static void scan_finds_libdevice_calls(void **state) {
  (void)state;
  size_t len = 0;
  const char *ir = "call float @__nv_sinf(float %v)";
  const char *hit = cc_libdevice_wanted(ir, strlen(ir), &len);
  assert_non_null(hit);
  assert_int_equal(len, 9);
  assert_memory_equal(hit, "__nv_sinf", 9);
  assert_null(cc_libdevice_wanted("x__nv_sinf __nv_ __nv_", 22, &len));
  assert_null(cc_libdevice_wanted(plain_ir, strlen(plain_ir), &len));
  /* Bitcode keeps names as plain bytes (LLVM's string table). */
  const char bc[] = "BC\xc0\xde\x00\x01__nv_expf\x00";
  assert_non_null(cc_libdevice_wanted(bc, sizeof bc - 1, &len));
  assert_int_equal(len, 9);
}

static void ir_calling_libdevice_compiles(void **state) {
  (void)state;
  cucore_program *p = program(math_ir, NULL);
  cucore_object *ptx = NULL, *cubin = NULL;
  assert_ok(cucore_program_compile(p, CUCORE_CODE_PTX, &ptx));
  const void *d = NULL;
  size_t n = 0;
  assert_ok(cucore_object_get_code(ptx, NULL, &d, &n));
  /* The functions came from libdevice: nothing is left for a later link to find. */
  assert_null(strstr(d, ".extern .func"));
  assert_non_null(strstr(d, ".entry kern"));
  /* The cubin needs every function resolved (nvJitLink refuses an unresolved one). */
  assert_ok(cucore_program_compile(p, CUCORE_CODE_CUBIN, &cubin));
  cucore_object *lto = NULL; /* LTO-IR (-gen-lto) takes libdevice the same way */
  assert_ok(cucore_program_compile(p, CUCORE_CODE_LTOIR, &lto));
  cucore_object_destroy(lto);
  cucore_object_destroy(ptx);
  cucore_object_destroy(cubin);
  cucore_program_destroy(p);
}

/* The GPU test's kernel (tests/kernels/libdevice_math.ll) compiles here too, to a cubin, with
 * its parameters read from the PTX. */
static void the_gpu_kernel_compiles(void **state) {
  (void)state;
  size_t n = 0;
  char *ir = cucore_test_read_file(CUCORE_TEST_KERNEL_DIR "/libdevice_math.ll", &n);
  assert_non_null(ir);
  cucore_program *p = program(ir, NULL);
  cucore_object *obj = NULL;
  assert_ok(cucore_program_compile(p, CUCORE_CODE_CUBIN, &obj));
  cucore_kernel *k = NULL;
  assert_ok(cucore_object_get_kernel(obj, "math", &k));
  cucore_param_info pi;
  assert_ok(cucore_kernel_get_param(k, 0, &pi)); /* .u64: libNVVM writes no .ptr attribute */
  assert_int_equal(pi.size, 8);
  assert_ok(cucore_kernel_get_param(k, 3, &pi));
  assert_int_equal(pi.kind, CUCORE_PARAM_INT);
  assert_int_equal(pi.size, 4);
  cucore_kernel_destroy(k);
  cucore_object_destroy(obj);
  cucore_program_destroy(p);
  free(ir);
}

static void ir_without_calls_never_looks_for_libdevice(void **state) {
  (void)state;
  setenv("CUCORE_LIBDEVICE", "/nonexistent/libdevice.10.bc", 1);
  cucore_program *p = program(plain_ir, "/nonexistent/by-option.bc");
  cucore_object *obj = NULL;
  assert_ok(cucore_program_compile(p, CUCORE_CODE_PTX, &obj));
  cucore_object_destroy(obj);
  cucore_program_destroy(p);
  unsetenv("CUCORE_LIBDEVICE");
}

static void missing_libdevice_is_named(void **state) {
  (void)state;
  cucore_object *obj = NULL;
  /* The option. */
  cucore_program *p = program(math_ir, "/nonexistent/dir/libdevice.10.bc");
  assert_status(cucore_program_compile(p, CUCORE_CODE_PTX, &obj), CUCORE_NOT_FOUND);
  assert_null(obj);
  const char *msg = cucore_last_error();
  assert_contains(msg, "`k.ll` calls __nv_sinf (a libdevice function)");
  assert_contains(msg, "/nonexistent/dir/libdevice.10.bc (the libdevice option): no such file");
  assert_contains(msg, "Set the libdevice option");
  cucore_program_destroy(p);
  /* The variable, when no option is given. */
  setenv("CUCORE_LIBDEVICE", "/nonexistent/env.bc", 1);
  p = program(math_ir, NULL);
  assert_status(cucore_program_compile(p, CUCORE_CODE_CUBIN, &obj), CUCORE_NOT_FOUND);
  assert_contains(cucore_last_error(), "/nonexistent/env.bc (CUCORE_LIBDEVICE): no such file");
  cucore_program_destroy(p);
  unsetenv("CUCORE_LIBDEVICE");
  /* A directory. */
  p = program(math_ir, tmp_dir);
  assert_status(cucore_program_compile(p, CUCORE_CODE_PTX, &obj), CUCORE_NOT_FOUND);
  assert_contains(cucore_last_error(), "not a regular file");
  cucore_program_destroy(p);
}

/* A file that is there but is not libdevice: libNVVM's failure names the file. */
static void libdevice_that_is_not_bitcode(void **state) {
  (void)state;
  char *path = tprintf("%s/garbage.bc", tmp_dir);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs("this is not bitcode\n", f);
  fclose(f);
  cucore_program *p = program(math_ir, path);
  cucore_object *obj = NULL;
  cucore_status st = cucore_program_compile(p, CUCORE_CODE_PTX, &obj);
  assert_int_not_equal(st, CUCORE_OK);
  assert_contains(cucore_last_error(), path);
  cucore_program_destroy(p);
  /* Unreadable (not for root, who reads anything). */
  if (geteuid() != 0) {
    chmod(path, 0);
    p = program(math_ir, path);
    assert_status(cucore_program_compile(p, CUCORE_CODE_PTX, &obj), CUCORE_IO_ERROR);
    assert_contains(cucore_last_error(), "cannot be read");
    cucore_program_destroy(p);
  }
  unlink(path);
  free(path);
}

/* The search: CUDA_HOME first (a fake toolkit whose libdevice is garbage is the one used), a
 * root without libdevice is passed over, and every place looked at is named when none has it. */
static void toolkit_roots_are_searched_in_order(void **state) {
  (void)state;
  const char *saved_home = getenv("CUDA_HOME"), *saved_path = getenv("CUDA_PATH");
  char *home = saved_home ? strdup(saved_home) : NULL,
       *cpath = saved_path ? strdup(saved_path) : NULL;
  char *fake = tprintf("%s/fake-toolkit", tmp_dir), *dir = tprintf("%s/nvvm/libdevice", fake);
  char *cmd = tprintf("mkdir -p %s", dir);
  assert_int_equal(system(cmd), 0);
  char *file = tprintf("%s/libdevice.10.bc", dir);
  FILE *f = fopen(file, "w");
  assert_non_null(f);
  fputs("not bitcode either\n", f);
  fclose(f);
  setenv("CUDA_HOME", fake, 1);
  unsetenv("CUDA_PATH");
  cucore_program *p = program(math_ir, NULL);
  cucore_object *obj = NULL;
  assert_int_not_equal(cucore_program_compile(p, CUCORE_CODE_PTX, &obj), CUCORE_OK);
  assert_contains(cucore_last_error(), file);
  /* Without the file there, the next root (the real toolkit) is used. */
  unlink(file);
  assert_ok(cucore_program_compile(p, CUCORE_CODE_PTX, &obj));
  cucore_object_destroy(obj);
  cucore_program_destroy(p);
  if (home)
    setenv("CUDA_HOME", home, 1);
  else
    unsetenv("CUDA_HOME");
  if (cpath) setenv("CUDA_PATH", cpath, 1);
  free(home);
  free(cpath);
  free(fake);
  free(dir);
  free(cmd);
  free(file);
}

/* The compile cache: the same compile is found again, and another libdevice file is another
 * key (its identity is in the key, as the compiler's is). */
static void cache_key_follows_libdevice(void **state) {
  (void)state;
  char *real = NULL, *copy = tprintf("%s/copy.bc", tmp_dir);
  const char *root = getenv("CUDA_HOME") ? getenv("CUDA_HOME") : "/usr/local/cuda";
  real = tprintf("%s/nvvm/libdevice/libdevice.10.bc", root);
  char *cmd = tprintf("cp %s %s", real, copy);
  assert_int_equal(system(cmd), 0);
  const char *paths[] = {real, real, copy};
  const cucore_cache_result want[] = {CUCORE_CACHE_MISS, CUCORE_CACHE_HIT_MEMORY,
                                      CUCORE_CACHE_MISS};
  char keys[3][sizeof(((cucore_cache_info *)0)->key)];
  for (int i = 0; i < 3; i++) {
    cucore_program *p = program(math_ir, paths[i]);
    assert_ok(cucore_program_set_cache(p, 1));
    cucore_object *obj = NULL;
    assert_ok(cucore_program_compile(p, CUCORE_CODE_PTX, &obj));
    cucore_cache_info info;
    assert_ok(cucore_program_get_cache_info(p, &info));
    assert_int_equal(info.result, want[i]);
    memcpy(keys[i], info.key, sizeof keys[i]);
    cucore_object_destroy(obj);
    cucore_program_destroy(p);
  }
  assert_memory_equal(keys[0], keys[1], sizeof keys[0]);
  assert_memory_not_equal(keys[0], keys[2], sizeof keys[0]);
  unlink(copy);
  free(real);
  free(copy);
  free(cmd);
}

int main(void) {
  tmp_dir = tprintf("%s/libdevice-XXXXXX", CUCORE_TEST_BINARY_DIR);
  if (!mkdtemp(tmp_dir)) return 1;
  char *cache = tprintf("%s/cache", tmp_dir); /* each run starts cold */
  setenv("CUCORE_CACHE_DIR", cache, 1);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(scan_finds_libdevice_calls),
      cmocka_unit_test(ir_calling_libdevice_compiles),
      cmocka_unit_test(the_gpu_kernel_compiles),
      cmocka_unit_test(ir_without_calls_never_looks_for_libdevice),
      cmocka_unit_test(missing_libdevice_is_named),
      cmocka_unit_test(libdevice_that_is_not_bitcode),
      cmocka_unit_test(toolkit_roots_are_searched_in_order),
      cmocka_unit_test(cache_key_follows_libdevice),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  char *rm = tprintf("rm -rf %s", tmp_dir);
  if (system(rm) != 0) rc = 1;
  free(rm);
  free(cache);
  free(tmp_dir);
  return rc;
}
