/* test_cache_backend.c -- the compile cache's pluggable back end (an in-memory store here) and
 * the key computed without compiling: misses put, hits come back equal to a fresh compile and
 * are written to the directory, the back end may replace the directory, damaged, truncated and
 * foreign entries it hands back are refused with a reason and recompiled, a failing back end
 * never fails a compile, and cucore_program_get_cache_key gives the key the compile then uses.
 * Real NVRTC (no GPU needed); every test has its own directory. */
#include "backend_support.h"

typedef struct fixture {
  char *dir;
  memstore store;
} fixture;

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  if (!f || !(f->dir = cache_test_mkdtemp())) return -1;
  if (cache_test_settings(f->dir) != 0) return -1;
  memstore_init(&f->store);
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  cucore_cache_set_backend(NULL);
  cache_test_settings(NULL);
  cache_test_rm_rf(f->dir);
  memstore_free(&f->store);
  free(f->dir);
  free(f);
  return 0;
}

static void install(fixture *f, unsigned flags) {
  cucore_cache_backend b = memstore_backend(&f->store, flags);
  assert_ok(cucore_cache_set_backend(&b));
}

/* A fresh, uncached compile of `src`: what every cached result must equal. */
static cucore_object *reference(const char *src) {
  cucore_object *obj = NULL;
  assert_ok(
      cache_test_compile(src, "k.cu", "sm_90", CUCORE_CODE_CUBIN, NULL, NULL, 0, 0, &obj, NULL));
  return obj;
}

/* Compiles `src` through the cache, checks the object against `ref`, and returns the info. */
static cucore_cache_info compile_checked(const char *src, const cucore_object *ref) {
  cucore_object *obj = NULL;
  cucore_cache_info info;
  assert_ok(
      cache_test_compile(src, "k.cu", "sm_90", CUCORE_CODE_CUBIN, NULL, NULL, 0, 1, &obj, &info));
  assert_true(cache_test_same_object(obj, ref));
  cucore_object_destroy(obj);
  return info;
}

/* ---- hits and misses ---------------------------------------------------------------------- */

static void miss_puts_then_backend_hit_reaches_the_directory(void **state) {
  fixture *f = *state;
  install(f, 0);
  char *src = cache_test_source(101);
  cucore_object *ref = reference(src);
  cucore_cache_info info = compile_checked(src, ref);
  assert_int_equal(info.result, CUCORE_CACHE_MISS);
  assert_int_equal(info.stored, 1);
  assert_int_equal(f->store.puts, 1);
  assert_int_equal(f->store.n, 1);
  assert_string_equal(f->store.keys[0], info.key);
  assert_string_equal(info.note, "");
  /* Gone from this process and the directory: the back end has it. */
  assert_ok(cucore_cache_clear(NULL, NULL));
  assert_int_equal(cache_test_count_files(f->dir, NULL), 0);
  cucore_cache_stats before, after;
  assert_ok(cucore_cache_get_stats(&before));
  info = compile_checked(src, ref);
  assert_int_equal(info.result, CUCORE_CACHE_HIT_BACKEND);
  assert_string_equal(cucore_cache_result_name(info.result), "hit_backend");
  assert_int_equal(f->store.hits, 1);
  assert_int_equal(f->store.outstanding, 0); /* every entry handed out was released */
  assert_int_equal(f->store.puts, 1);        /* a hit is not put again */
  assert_ok(cucore_cache_get_stats(&after));
  assert_int_equal(after.process.backend_hits, before.process.backend_hits + 1);
  /* Read through into the directory: the next process finds it on disk. */
  assert_int_equal(cache_test_count_files(f->dir, NULL), 1);
  cc_cache_memory_clear();
  info = compile_checked(src, ref);
  assert_int_equal(info.result, CUCORE_CACHE_HIT_DISK);
  assert_int_equal(f->store.gets, 2); /* the disk hit did not ask the back end */
  /* The in-process layer still comes first. */
  info = compile_checked(src, ref);
  assert_int_equal(info.result, CUCORE_CACHE_HIT_MEMORY);
  cucore_object_destroy(ref);
  free(src);
}

static void backend_only_leaves_the_directory_alone(void **state) {
  fixture *f = *state;
  install(f, CUCORE_CACHE_BACKEND_ONLY);
  char *src = cache_test_source(102);
  cucore_object *ref = reference(src);
  cucore_cache_info info = compile_checked(src, ref);
  assert_int_equal(info.result, CUCORE_CACHE_MISS);
  assert_int_equal(info.stored, 0);
  assert_string_equal(info.path, "");
  assert_string_equal(info.note, "");
  assert_int_equal(f->store.puts, 1);
  assert_int_equal(cache_test_count_files(f->dir, NULL), 0);
  cc_cache_memory_clear();
  info = compile_checked(src, ref);
  assert_int_equal(info.result, CUCORE_CACHE_HIT_BACKEND);
  assert_int_equal(cache_test_count_files(f->dir, NULL), 0);
  /* Removed: the directory is used again. */
  assert_ok(cucore_cache_set_backend(NULL));
  cc_cache_memory_clear();
  info = compile_checked(src, ref);
  assert_int_equal(info.result, CUCORE_CACHE_MISS);
  assert_int_equal(cache_test_count_files(f->dir, NULL), 1);
  assert_int_equal(f->store.gets, 2);
  cucore_object_destroy(ref);
  free(src);
}

static void read_only_and_write_only_backends(void **state) {
  fixture *f = *state;
  char *src = cache_test_source(103);
  cucore_object *ref = reference(src);
  cucore_cache_backend b = memstore_backend(&f->store, CUCORE_CACHE_BACKEND_ONLY);
  b.get = NULL; /* write-only: filled, never read */
  assert_ok(cucore_cache_set_backend(&b));
  cucore_cache_info info = compile_checked(src, ref);
  assert_int_equal(info.result, CUCORE_CACHE_MISS);
  cc_cache_memory_clear();
  info = compile_checked(src, ref);
  assert_int_equal(info.result, CUCORE_CACHE_MISS);
  assert_int_equal(f->store.puts, 2);
  assert_int_equal(f->store.gets, 0);
  b = memstore_backend(&f->store, CUCORE_CACHE_BACKEND_ONLY);
  b.put = NULL; /* read-only: what another machine filled */
  assert_ok(cucore_cache_set_backend(&b));
  cc_cache_memory_clear();
  info = compile_checked(src, ref);
  assert_int_equal(info.result, CUCORE_CACHE_HIT_BACKEND);
  assert_int_equal(f->store.puts, 2);
  cucore_object_destroy(ref);
  free(src);
}

/* ---- damaged entries ---------------------------------------------------------------------- */

typedef enum { FLIP, TRUNCATE, FOREIGN, EMPTY, GARBAGE, NULL_DATA, DAMAGE_KINDS } damage;
static const char *const damage_names[DAMAGE_KINDS] = {"flip",  "truncate", "foreign",
                                                       "empty", "garbage",  "null data"};

/* Plants a damaged entry for `key` in the store: `good` is a good entry of `key`, `other` a
 * good entry of another key. */
static void plant(fixture *f, damage d, const char *key, const memstore *good_of) {
  const unsigned char *good = good_of->data[0], *other = good_of->data[1];
  size_t n = good_of->size[0], on = good_of->size[1];
  unsigned char *copy = malloc(n);
  memcpy(copy, good, n);
  f->store.mode = MS_NORMAL;
  switch (d) {
  case FLIP:
    copy[n - 3] ^= 0x40;
    assert_ok(memstore_set(&f->store, key, copy, n));
    break;
  case TRUNCATE: assert_ok(memstore_set(&f->store, key, copy, n / 2)); break;
  case FOREIGN: assert_ok(memstore_set(&f->store, key, other, on)); break;
  case EMPTY: assert_ok(memstore_set(&f->store, key, copy, 0)); break;
  case GARBAGE:
    memset(copy, 'x', n);
    assert_ok(memstore_set(&f->store, key, copy, n));
    break;
  case NULL_DATA: f->store.mode = MS_NULL_DATA; break;
  case DAMAGE_KINDS: break;
  }
  free(copy);
}

static void damaged_entries_are_refused_and_recompiled(void **state) {
  fixture *f = *state;
  install(f, CUCORE_CACHE_BACKEND_ONLY);
  char *src = cache_test_source(104), *other_src = cache_test_source(105);
  cucore_object *ref = reference(src), *other_ref = reference(other_src);
  cucore_cache_info info = compile_checked(src, ref);
  char key[65];
  snprintf(key, sizeof key, "%s", info.key);
  compile_checked(other_src, other_ref);
  memstore good; /* the two good entries, [0] for `src` */
  memstore_init(&good);
  for (int i = 0; i < 2; i++) {
    int at = strcmp(f->store.keys[i], key) == 0 ? 0 : 1;
    assert_ok(memstore_set(&good, at == 0 ? key : "other", f->store.data[i], f->store.size[i]));
  }
  if (strcmp(good.keys[0], key) != 0) { /* keep [0] the key's own */
    memstore swapped;
    memstore_init(&swapped);
    assert_ok(memstore_set(&swapped, good.keys[1], good.data[1], good.size[1]));
    assert_ok(memstore_set(&swapped, good.keys[0], good.data[0], good.size[0]));
    memstore_free(&good);
    good = swapped;
  }
  for (int d = 0; d < DAMAGE_KINDS; d++) {
    cc_cache_memory_clear();
    plant(f, (damage)d, key, &good);
    int removes = f->store.removes, puts = f->store.puts;
    cucore_cache_stats before, after;
    assert_ok(cucore_cache_get_stats(&before));
    info = compile_checked(src, ref);
    if (info.result != CUCORE_CACHE_MISS)
      fail_msg("%s: result %s, note %s", damage_names[d], cucore_cache_result_name(info.result),
               info.note);
    assert_contains(info.note, "refused");
    assert_contains(info.note, key);
    assert_ok(cucore_cache_get_stats(&after));
    assert_int_equal(after.process.backend_errors, before.process.backend_errors + 1);
    assert_int_equal(f->store.removes, removes + 1);
    assert_int_equal(f->store.puts, puts + 1); /* the fresh compile replaced it */
    f->store.mode = MS_NORMAL;
    cc_cache_memory_clear();
    info = compile_checked(src, ref);
    assert_int_equal(info.result, CUCORE_CACHE_HIT_BACKEND);
  }
  memstore_free(&good);
  cucore_object_destroy(ref);
  cucore_object_destroy(other_ref);
  free(src);
  free(other_src);
}

/* ---- a failing back end ------------------------------------------------------------------- */

static void failing_backend_never_fails_a_compile(void **state) {
  fixture *f = *state;
  install(f, CUCORE_CACHE_BACKEND_ONLY);
  char *src = cache_test_source(106);
  cucore_object *ref = reference(src);
  f->store.mode = MS_GET_FAILS;
  f->store.put_fails = 1;
  cucore_cache_stats before, after;
  assert_ok(cucore_cache_get_stats(&before));
  cucore_cache_info info = compile_checked(src, ref);
  assert_int_equal(info.result, CUCORE_CACHE_MISS);
  assert_contains(info.note, "get of");
  assert_contains(info.note, strerror(EIO));
  assert_contains(info.note, "put of");
  assert_contains(info.note, strerror(ENOSPC));
  assert_ok(cucore_cache_get_stats(&after));
  assert_int_equal(after.process.backend_errors, before.process.backend_errors + 2);
  assert_int_equal(after.process.backend_stores, before.process.backend_stores);
  /* An answer outside the contract is a failure too, said with the number. */
  f->store.mode = MS_GET_WEIRD;
  f->store.put_fails = 0;
  cc_cache_memory_clear();
  info = compile_checked(src, ref);
  assert_int_equal(info.result, CUCORE_CACHE_MISS);
  assert_contains(info.note, "returned 7");
  f->store.mode = MS_NORMAL;
  cc_cache_memory_clear();
  info = compile_checked(src, ref);
  assert_int_equal(info.result, CUCORE_CACHE_HIT_BACKEND);
  cucore_object_destroy(ref);
  free(src);
}

static void set_backend_checks_its_argument(void **state) {
  fixture *f = *state;
  cucore_cache_backend b = memstore_backend(&f->store, 0);
  b.get = NULL;
  b.put = NULL;
  assert_int_equal(cucore_cache_set_backend(&b), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "neither get nor put");
  b = memstore_backend(&f->store, 0x6);
  assert_int_equal(cucore_cache_set_backend(&b), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "CUCORE_CACHE_BACKEND_ONLY");
  assert_ok(cucore_cache_set_backend(NULL));
  assert_ok(cucore_cache_set_backend(NULL));
  /* The switches turn the back end off with the rest of the cache. */
  install(f, 0);
  assert_ok(cucore_cache_set_enabled(0));
  char *src = cache_test_source(107);
  cucore_object *ref = reference(src);
  cucore_cache_info info = compile_checked(src, ref);
  assert_int_equal(info.result, CUCORE_CACHE_DISABLED);
  assert_int_equal(f->store.gets + f->store.puts, 0);
  cucore_object_destroy(ref);
  free(src);
}

/* ---- the key without compiling ------------------------------------------------------------ */

/* The key cucore_program_get_cache_key gives, then the one the compile used: equal. */
static void key_then_compile(cucore_code_type type, const char *src, const char *name,
                             cucore_options *o, cucore_code_type target, const char *digest,
                             char *key_out, char *reason_out) {
  cucore_program *p = NULL;
  assert_ok(cucore_program_create(type, src, 0, name, o, &p));
  if (digest) assert_ok(cucore_program_set_cache_digest(p, digest));
  char key[65] = "x";
  const char *reason = NULL;
  assert_ok(cucore_program_get_cache_key(p, target, key, &reason));
  cucore_object *obj = NULL;
  assert_ok(cucore_program_compile(p, target, &obj));
  cucore_cache_info info;
  assert_ok(cucore_program_get_cache_info(p, &info));
  assert_string_equal(key, info.key);
  if (key[0]) {
    assert_string_equal(reason, "");
    assert_int_equal(strlen(key), 64);
  } else {
    assert_int_equal(info.result, CUCORE_CACHE_UNCACHEABLE);
    assert_string_equal(reason, info.reason);
  }
  if (key_out) strcpy(key_out, key);
  if (reason_out) snprintf(reason_out, 1024, "%s", reason);
  cucore_object_destroy(obj);
  cucore_program_destroy(p);
}

static cucore_options *arch_options(const char *arch) {
  cucore_options *o = NULL;
  assert_ok(cucore_options_create(&o));
  assert_ok(cucore_options_set_string(o, CUCORE_OPT_ARCH, arch));
  return o;
}

static void computed_key_is_the_compiles_key(void **state) {
  (void)state;
  char *src = cache_test_source(108);
  cucore_options *o = arch_options("sm_90");
  char k_cubin[65], k_ptx[65], k_digest[65], reason[1024];
  key_then_compile(CUCORE_CODE_CUDA_CPP, src, "k.cu", o, CUCORE_CODE_CUBIN, NULL, k_cubin, NULL);
  key_then_compile(CUCORE_CODE_CUDA_CPP, src, "k.cu", o, CUCORE_CODE_PTX, NULL, k_ptx, NULL);
  assert_string_not_equal(k_cubin, k_ptx);
  key_then_compile(CUCORE_CODE_CUDA_CPP, src, "k.cu", o, CUCORE_CODE_CUBIN, "d1", k_digest, NULL);
  assert_string_not_equal(k_cubin, k_digest);
  cucore_options *fat = arch_options("sm_90");
  assert_ok(cucore_options_set_string(fat, CUCORE_OPT_GENCODE, "sm_90"));
  assert_ok(cucore_options_set_string(fat, CUCORE_OPT_GENCODE, "compute_90"));
  key_then_compile(CUCORE_CODE_CUDA_CPP, src, "k.cu", fat, CUCORE_CODE_FATBIN, NULL, NULL, NULL);
  /* Uncacheable: no key, the compile's own reason. */
  cucore_options *inc = arch_options("sm_90");
  assert_ok(cucore_options_set_string(inc, CUCORE_OPT_INCLUDE_PATH, "/tmp"));
  key_then_compile(CUCORE_CODE_CUDA_CPP, src, "k.cu", inc, CUCORE_CODE_CUBIN, NULL, NULL, reason);
  assert_contains(reason, "/tmp");
  /* The switches do not change the key: it is the compile's. */
  assert_ok(cucore_cache_set_enabled(0));
  cucore_program *p = NULL;
  assert_ok(cucore_program_create(CUCORE_CODE_CUDA_CPP, src, 0, "k.cu", o, &p));
  assert_ok(cucore_program_set_cache(p, 0));
  char key[65];
  assert_ok(cucore_program_get_cache_key(p, CUCORE_CODE_CUBIN, key, NULL));
  assert_string_equal(key, k_cubin);
  cucore_program_destroy(p);
  assert_ok(cucore_cache_set_enabled(-1));
  cucore_options_destroy(o);
  cucore_options_destroy(fat);
  cucore_options_destroy(inc);
  free(src);
}

static void computed_key_of_ptx_and_refusals(void **state) {
  (void)state;
  cucore_options *o = arch_options("sm_90");
  const char *ptx = ".version 8.0\n.target sm_90\n.address_size 64\n"
                    ".visible .entry k()\n{\n  ret;\n}\n";
  char reason[1024];
  key_then_compile(CUCORE_CODE_PTX, ptx, "k.ptx", o, CUCORE_CODE_CUBIN, NULL, NULL, NULL);
  key_then_compile(CUCORE_CODE_PTX, ptx, "k.ptx", o, CUCORE_CODE_PTX, NULL, NULL, reason);
  assert_contains(reason, "PTX compiled to PTX");
  cucore_program *p = NULL;
  assert_ok(cucore_program_create(CUCORE_CODE_PTX, ptx, 0, "k.ptx", o, &p));
  char key[65];
  assert_int_equal(cucore_program_get_cache_key(p, CUCORE_CODE_LTOIR, key, NULL),
                   CUCORE_NOT_SUPPORTED);
  assert_string_equal(key, "");
  assert_int_equal(cucore_program_get_cache_key(p, CUCORE_CODE_AUTO, key, NULL),
                   CUCORE_INVALID_ARGUMENT);
  assert_int_equal(cucore_program_get_cache_key(p, CUCORE_CODE_CUBIN, NULL, NULL),
                   CUCORE_INVALID_ARGUMENT);
  assert_int_equal(cucore_program_get_cache_key(NULL, CUCORE_CODE_CUBIN, key, NULL),
                   CUCORE_INVALID_ARGUMENT);
  cucore_program_destroy(p);
  cucore_options_destroy(o);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(miss_puts_then_backend_hit_reaches_the_directory, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(backend_only_leaves_the_directory_alone, setup, teardown),
      cmocka_unit_test_setup_teardown(read_only_and_write_only_backends, setup, teardown),
      cmocka_unit_test_setup_teardown(damaged_entries_are_refused_and_recompiled, setup, teardown),
      cmocka_unit_test_setup_teardown(failing_backend_never_fails_a_compile, setup, teardown),
      cmocka_unit_test_setup_teardown(set_backend_checks_its_argument, setup, teardown),
      cmocka_unit_test_setup_teardown(computed_key_is_the_compiles_key, setup, teardown),
      cmocka_unit_test_setup_teardown(computed_key_of_ptx_and_refusals, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
