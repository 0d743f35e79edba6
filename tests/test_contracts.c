/* test_contracts.c -- the header's promises kept: a declared code type is
 * checked against the bytes, PTX that is not PTX is a parse error, sizes near SIZE_MAX are
 * refused, cucore_last_error() follows its documented errno-like rule, and an optional driver
 * entry point the driver lacks (cuLibraryLoadFromFile, absent from the fake driver) is never
 * called. The fake driver of tests/fake/ is the driver of this whole process. */
#include "support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef CUCORE_FAKE_DRIVER_PATH
#error "CUCORE_FAKE_DRIVER_PATH is set by tests/CMakeLists.txt"
#endif

static const char ptx_text[] = "//\n// a PTX module\n//\n.version 8.0\n.target sm_90\n"
                               ".address_size 64\n"
                               ".visible .entry k(.param .u64 p, .param .u32 n)\n{\n  ret;\n}\n";
/* A valid module with no kernels: only a device function. */
static const char ptx_func_only[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
                                    ".visible .func f(.param .u32 a)\n{\n  ret;\n}\n";

/* `n` bytes of seeded noise: no magic, not text. */
static unsigned char *noise(size_t n, uint64_t seed) {
  unsigned char *b = malloc(n);
  assert_non_null(b);
  for (size_t i = 0; i < n; i++) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    b[i] = (unsigned char)(seed >> 56);
  }
  b[0] = 0x8f; /* never a magic's first byte, never text */
  return b;
}

static const cucore_code_type declared[] = {CUCORE_CODE_CUBIN, CUCORE_CODE_FATBIN, CUCORE_CODE_PTX,
                                            CUCORE_CODE_LTOIR};

/* Random bytes declared as each loadable type: INVALID_BINARY naming the type and the bytes. */
static void object_checks_declared_type(void **state) {
  (void)state;
  unsigned char *junk = noise(4096, 1);
  for (size_t i = 0; i < sizeof declared / sizeof declared[0]; i++) {
    cucore_object *obj = (cucore_object *)&obj;
    assert_status(cucore_object_from_memory(junk, 4096, declared[i], "junk.bin", &obj),
                  CUCORE_INVALID_BINARY);
    assert_null(obj);
    assert_contains(cucore_last_error(), cucore_code_type_name(declared[i]));
    assert_contains(cucore_last_error(), "junk.bin");
    assert_contains(cucore_last_error(), "binary data");
  }
  /* a cubin declared as PTX, PTX declared as a cubin */
  cucore_object *obj = NULL;
  assert_status(cucore_object_from_memory(ptx_text, strlen(ptx_text), CUCORE_CODE_CUBIN, NULL,
                                          &obj),
                CUCORE_INVALID_BINARY);
  assert_contains(cucore_last_error(), "it is ptx (text");
  /* PTX given as text without its NUL still passes, declared or detected */
  char *exact = malloc(sizeof ptx_text - 1);
  memcpy(exact, ptx_text, sizeof ptx_text - 1);
  assert_ok(cucore_object_from_memory(exact, sizeof ptx_text - 1, CUCORE_CODE_PTX, NULL, &obj));
  cucore_object_destroy(obj);
  assert_ok(cucore_object_from_memory(exact, sizeof ptx_text - 1, CUCORE_CODE_AUTO, NULL, &obj));
  cucore_code_type t = CUCORE_CODE_AUTO;
  assert_ok(cucore_object_get_code(obj, &t, NULL, NULL));
  assert_int_equal(t, CUCORE_CODE_PTX);
  cucore_object_destroy(obj);
  free(exact);
  free(junk);
}

static char dir_path[256];

static char *write_temp(const char *name, const void *data, size_t n) {
  char *path = malloc(strlen(dir_path) + strlen(name) + 2);
  sprintf(path, "%s/%s", dir_path, name);
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(data, 1, n, f), n);
  assert_int_equal(fclose(f), 0);
  return path;
}

static void files_and_binaries_check_declared_type(void **state) {
  (void)state;
  unsigned char *junk = noise(512, 2);
  char *path = write_temp("junk.cubin", junk, 512);
  cucore_object *obj = NULL;
  assert_status(cucore_object_from_file(path, CUCORE_CODE_CUBIN, &obj), CUCORE_INVALID_BINARY);
  assert_contains(cucore_last_error(), path);
  assert_contains(cucore_last_error(), "cubin");
  cucore_binary *bin = NULL;
  for (size_t i = 0; i < sizeof declared / sizeof declared[0]; i++) {
    if (declared[i] == CUCORE_CODE_LTOIR) continue; /* the reader does not read LTO-IR */
    assert_status(cucore_binary_open(junk, 512, declared[i], 0, &bin), CUCORE_INVALID_BINARY);
    assert_contains(cucore_last_error(), cucore_code_type_name(declared[i]));
    assert_status(cucore_binary_open_file(path, declared[i], 0, &bin), CUCORE_INVALID_BINARY);
    assert_contains(cucore_last_error(), path);
  }
  assert_null(bin);
  /* linker inputs with a declared type */
  cucore_linker *lk = NULL;
  assert_ok(cucore_linker_create(NULL, &lk));
  for (size_t i = 0; i < sizeof declared / sizeof declared[0]; i++) {
    assert_status(cucore_linker_add(lk, declared[i], junk, 512, "junk"), CUCORE_INVALID_BINARY);
    assert_contains(cucore_last_error(), cucore_code_type_name(declared[i]));
  }
  assert_status(cucore_linker_add_file(lk, path, CUCORE_CODE_PTX), CUCORE_INVALID_BINARY);
  assert_ok(cucore_linker_add(lk, CUCORE_CODE_PTX, ptx_text, strlen(ptx_text), "k.ptx"));
  cucore_linker_destroy(lk);
  unlink(path);
  free(path);
  free(junk);
}

/* PTX that does not parse is CUCORE_PARSE_ERROR; a module of functions only is fine. */
static void ptx_that_is_not_ptx(void **state) {
  (void)state;
  cucore_binary *bin = NULL;
  const char *garbage = "garbage text";
  assert_status(cucore_binary_open(garbage, strlen(garbage), CUCORE_CODE_PTX, 0, &bin),
                CUCORE_PARSE_ERROR);
  assert_contains(cucore_last_error(), "garbage");
  const char *no_target = ".version 8.0\n.visible .entry k()\n{\n ret;\n}\n";
  assert_status(cucore_binary_open(no_target, strlen(no_target), CUCORE_CODE_PTX, 0, &bin),
                CUCORE_PARSE_ERROR);
  assert_contains(cucore_last_error(), ".target");
  assert_ok(cucore_binary_open(ptx_func_only, strlen(ptx_func_only), CUCORE_CODE_PTX, 0, &bin));
  uint32_t n = 99;
  assert_ok(cucore_binary_get_kernel_count(bin, &n));
  assert_int_equal(n, 0);
  cucore_binary_destroy(bin);
  /* attach: junk text is a parse error, binary bytes are not PTX, functions only match none */
  assert_ok(cucore_binary_open(ptx_text, strlen(ptx_text), CUCORE_CODE_PTX, 0, &bin));
  uint32_t matched = 99;
  assert_status(cucore_binary_attach_ptx(bin, garbage, strlen(garbage), &matched),
                CUCORE_PARSE_ERROR);
  assert_int_equal(matched, 0);
  unsigned char *junk = noise(64, 3);
  assert_status(cucore_binary_attach_ptx(bin, (const char *)junk, 64, &matched),
                CUCORE_INVALID_BINARY);
  assert_contains(cucore_last_error(), "ptx");
  assert_ok(cucore_binary_attach_ptx(bin, ptx_func_only, strlen(ptx_func_only), &matched));
  assert_int_equal(matched, 0);
  assert_ok(cucore_binary_attach_ptx(bin, ptx_text, strlen(ptx_text), &matched));
  assert_int_equal(matched, 1);
  cucore_binary_destroy(bin);
  free(junk);
}

/* Sizes past PTRDIFF_MAX are refused before anything is read or copied. */
static void sizes_near_size_max(void **state) {
  (void)state;
  const char *src = "__global__ void k() {}";
  size_t sizes[] = {SIZE_MAX, SIZE_MAX - 1, (size_t)PTRDIFF_MAX + 1};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    size_t n = sizes[i];
    cucore_program *p = (cucore_program *)&p;
    assert_status(cucore_program_create(CUCORE_CODE_CUDA_CPP, src, n, NULL, NULL, &p),
                  CUCORE_INVALID_ARGUMENT);
    assert_null(p);
    assert_contains(cucore_last_error(), "PTRDIFF_MAX");
    assert_status(cucore_program_create(CUCORE_CODE_AUTO, src, n, NULL, NULL, &p),
                  CUCORE_INVALID_ARGUMENT);
    cucore_object *obj = NULL;
    assert_status(cucore_object_from_memory(ptx_text, n, CUCORE_CODE_AUTO, NULL, &obj),
                  CUCORE_INVALID_ARGUMENT);
    cucore_binary *bin = NULL;
    assert_status(cucore_binary_open(ptx_text, n, CUCORE_CODE_AUTO, 0, &bin),
                  CUCORE_INVALID_ARGUMENT);
    cucore_code_type t;
    assert_status(cucore_code_type_detect(ptx_text, n, &t), CUCORE_INVALID_ARGUMENT);
    cucore_linker *lk = NULL;
    assert_ok(cucore_linker_create(NULL, &lk));
    assert_status(cucore_linker_add(lk, CUCORE_CODE_PTX, ptx_text, n, NULL),
                  CUCORE_INVALID_ARGUMENT);
    cucore_linker_destroy(lk);
  }
  cucore_program *nv = NULL;
  assert_ok(cucore_program_create(CUCORE_CODE_NVVM, "; ModuleID = 'm'\n", 0, NULL, NULL, &nv));
  assert_status(cucore_program_add_module(nv, "x", SIZE_MAX, NULL, 0), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "cucore_program_add_module");
  cucore_program_destroy(nv);
}

/* The documented rule: the last FAILURE of the thread, kept across successes (like errno),
 * forgotten by cucore_clear_error(). */
static void last_error_rule(void **state) {
  (void)state;
  assert_ok(cucore_clear_error());
  assert_string_equal(cucore_last_error(), "");
  assert_int_equal(cucore_last_status(), CUCORE_OK);
  cucore_binary *bin = NULL;
  cucore_status st = cucore_binary_open("junk", 4, CUCORE_CODE_PTX, 0, &bin);
  assert_int_equal(CUCORE_CODE(st), CUCORE_PARSE_ERROR);
  assert_int_equal(cucore_last_status(), st);
  char kept[512];
  snprintf(kept, sizeof kept, "%s", cucore_last_error());
  assert_true(kept[0] != '\0');
  cucore_code_type t;
  assert_ok(cucore_code_type_detect(ptx_text, strlen(ptx_text), &t));
  assert_int_equal(cucore_last_status(), st); /* a success leaves it */
  assert_string_equal(cucore_last_error(), kept);
  assert_ok(cucore_clear_error());
  assert_string_equal(cucore_last_error(), "");
  assert_int_equal(cucore_last_status(), CUCORE_OK);
  /* the next failure is recorded in full after a clear */
  assert_status(cucore_binary_open("junk", 4, CUCORE_CODE_PTX, 0, &bin), CUCORE_PARSE_ERROR);
  assert_string_equal(cucore_last_error(), kept);
}

/* The fake driver has cuLibraryLoadData but not the optional cuLibraryLoadFromFile: an object
 * made from a file loads from the bytes it read instead of calling a NULL pointer. */
static void object_from_file_without_load_from_file(void **state) {
  (void)state;
  char *path = write_temp("k.ptx", ptx_text, strlen(ptx_text));
  cucore_object *obj = NULL;
  assert_ok(cucore_object_from_file(path, CUCORE_CODE_AUTO, &obj));
  assert_ok(cucore_object_load(obj));
  int count = 0;
  assert_ok(cucore_object_get_kernel_count(obj, &count));
  assert_int_equal(count, 1);
  cucore_kernel *k = NULL;
  assert_ok(cucore_object_get_kernel(obj, "k", &k));
  cucore_kernel_destroy(k);
  cucore_object_destroy(obj);
  unlink(path);
  free(path);
}

static int make_dir(void **state) {
  (void)state;
  snprintf(dir_path, sizeof dir_path, "%s/cucore-contracts-XXXXXX",
           getenv("TMPDIR") && getenv("TMPDIR")[0] ? getenv("TMPDIR") : "/tmp");
  return mkdtemp(dir_path) ? 0 : -1;
}

static int remove_dir(void **state) {
  (void)state;
  return rmdir(dir_path);
}

int main(void) {
  /* Before anything loads the driver: the fake is this process's driver. */
  setenv("CUCORE_LIBCUDA", CUCORE_FAKE_DRIVER_PATH, 1);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(object_checks_declared_type),
      cmocka_unit_test(files_and_binaries_check_declared_type),
      cmocka_unit_test(ptx_that_is_not_ptx),
      cmocka_unit_test(sizes_near_size_max),
      cmocka_unit_test(last_error_rule),
      cmocka_unit_test(object_from_file_without_load_from_file),
  };
  return cmocka_run_group_tests(tests, make_dir, remove_dir);
}
