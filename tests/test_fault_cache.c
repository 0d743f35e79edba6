/* test_fault_cache.c -- file-system faults under the compile cache. A full
 * disk, a read-only directory, failures of every step of a store (create the directory,
 * create, write, flush, close, rename) and of a load (open, read) with ENOSPC, EROFS, EIO and
 * EACCES, the directory or a shard replaced by a file, and entries truncated at every byte and
 * bit-flipped at every byte: the compile always succeeds with the bytes of a clean compile, the
 * cache steps aside counting an error (cucore_cache_stats: process.errors), no temporary file
 * is left behind, and a damaged entry is never handed out. Steps fail through the test hook
 * in src/compile/cache_disk.c (so this works as root too, where chmod stops nothing). A clear
 * that cannot remove an entry is an IO_ERROR naming it; one out of memory
 * is HOST_OUT_OF_MEMORY.
 * CUCORE_FAULT_LONG=1 flips every bit of every byte; the default one bit per byte. */
#include "support.h"

#include "compile/cache.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const src =
    "extern \"C\" __global__ void scale(float *x, float a, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= a; }\n";

static char dir[64];
static unsigned char *ref;
static size_t ref_size;

static cucore_status compile(cucore_object **out) {
  cucore_options *o = NULL;
  cucore_program *p = NULL;
  cucore_status st = cucore_options_create(&o);
  if (st == CUCORE_OK) st = cucore_options_set_string(o, CUCORE_OPT_ARCH, "sm_90");
  if (st == CUCORE_OK) st = cucore_program_create(CUCORE_CODE_CUDA_CPP, src, 0, "c.cu", o, &p);
  if (st == CUCORE_OK) st = cucore_program_compile(p, CUCORE_CODE_CUBIN, out);
  cucore_program_destroy(p);
  cucore_options_destroy(o);
  return st;
}

/* A compile that must succeed with the clean bytes, whatever the cache meets. The in-process
 * layer is emptied first so that the disk is what is asked. */
static void compile_gives_the_right_bytes(const char *when) {
  cc_cache_memory_clear();
  cucore_object *obj = NULL;
  if (compile(&obj) != CUCORE_OK) fail_msg("%s: the compile failed: %s", when, cucore_last_error());
  const void *code;
  size_t size;
  assert_ok(cucore_object_get_code(obj, NULL, &code, &size));
  if (size != ref_size || memcmp(code, ref, size) != 0)
    fail_msg("%s: the compile returned %zu bytes that differ from a clean compile's %zu", when,
             size, ref_size);
  cucore_object_destroy(obj);
}

static uint64_t errors(void) {
  cucore_cache_stats s;
  assert_ok(cucore_cache_get_stats(&s));
  return s.process.errors;
}

static uint64_t entries(void) {
  cucore_cache_stats s;
  assert_ok(cucore_cache_get_stats(&s));
  return s.entries;
}

/* Temporary files left in the shards. */
static int leftover_tmp(void) {
  int n = 0;
  DIR *d = opendir(dir);
  if (!d) return 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (strlen(e->d_name) != 2) continue;
    char shard[256];
    snprintf(shard, sizeof shard, "%s/%s", dir, e->d_name);
    DIR *s = opendir(shard);
    if (!s) continue;
    struct dirent *f;
    while ((f = readdir(s))) n += strncmp(f->d_name, ".tmp-", 5) == 0;
    closedir(s);
  }
  closedir(d);
  return n;
}

/* The one entry's path (the cache holds one key in these tests). */
static int entry_path(char *out, size_t cap) {
  DIR *d = opendir(dir);
  if (!d) return 0;
  struct dirent *e;
  int found = 0;
  while (!found && (e = readdir(d))) {
    if (strlen(e->d_name) != 2) continue;
    char shard[256];
    snprintf(shard, sizeof shard, "%s/%s", dir, e->d_name);
    DIR *s = opendir(shard);
    if (!s) continue;
    struct dirent *f;
    while ((f = readdir(s)))
      if (f->d_name[0] != '.' && strlen(f->d_name) == 62) {
        snprintf(out, cap, "%s/%s", shard, f->d_name);
        found = 1;
        break;
      }
    closedir(s);
  }
  closedir(d);
  return found;
}

static const char *fail_step;
static int fail_errno;
static int hook(const char *step) {
  return fail_step && strcmp(step, fail_step) == 0 ? fail_errno : 0;
}

static void every_step_of_a_store_and_a_load_may_fail(void **state) {
  (void)state;
  static const char *const stores[] = {
      "create the directory", "create", "write", "flush", "close", "rename"};
  static const int codes[] = {ENOSPC, EROFS, EIO, EACCES};
  int cases = 0;
  cc_test_cache_io_hook(hook);
  for (size_t i = 0; i < sizeof stores / sizeof stores[0]; i++)
    for (size_t c = 0; c < sizeof codes / sizeof codes[0]; c++) {
      assert_ok(cucore_cache_clear(NULL, NULL));
      uint64_t before = errors();
      fail_step = stores[i];
      fail_errno = codes[c];
      char when[128];
      snprintf(when, sizeof when, "store: `%s` fails with %s", stores[i], strerror(codes[c]));
      compile_gives_the_right_bytes(when);
      if (errors() != before + 1) fail_msg("%s: the error was not counted", when);
      if (entries() != 0) fail_msg("%s: an entry was stored all the same", when);
      if (leftover_tmp()) fail_msg("%s: a temporary file was left behind", when);
      fail_step = NULL;
      compile_gives_the_right_bytes("the step works again");
      if (entries() != 1) fail_msg("%s: no entry once the step worked again", when);
      cases++;
    }
  static const char *const loads[] = {"open", "read"};
  for (size_t i = 0; i < 2; i++) {
    uint64_t before = errors();
    fail_step = loads[i];
    fail_errno = EIO;
    compile_gives_the_right_bytes(loads[i]);
    if (errors() != before + 1) fail_msg("load: `%s` failing was not counted", loads[i]);
    fail_step = NULL;
    cases++;
  }
  cc_test_cache_io_hook(NULL);
  print_message("file-system faults: %d failing steps (store and load x errno): every compile "
                "right, every error counted, no temporary file left\n",
                cases);
}

static void a_read_only_or_missing_directory(void **state) {
  (void)state;
  /* Read-only: chmod stops a non-root user; root is covered by EROFS/EACCES above. */
  if (geteuid() != 0) {
    assert_ok(cucore_cache_clear(NULL, NULL));
    assert_int_equal(chmod(dir, 0555), 0);
    uint64_t before = errors();
    compile_gives_the_right_bytes("a read-only cache directory");
    assert_int_equal(errors(), before + 1);
    assert_int_equal(chmod(dir, 0755), 0);
  } else {
    print_message("running as root: the read-only directory is the EROFS hook case\n");
  }
  /* The directory replaced by a regular file. */
  char file_dir[96];
  snprintf(file_dir, sizeof file_dir, "%s-file", dir);
  FILE *f = fopen(file_dir, "w");
  assert_non_null(f);
  fputs("not a directory", f);
  fclose(f);
  assert_ok(cucore_cache_set_dir(file_dir));
  uint64_t before = errors();
  compile_gives_the_right_bytes("the cache directory is a regular file");
  assert_true(errors() >= before + 1);
  assert_ok(cucore_cache_set_dir(dir));
  unlink(file_dir);
  /* A shard replaced by a file. */
  assert_ok(cucore_cache_clear(NULL, NULL));
  compile_gives_the_right_bytes("a clean store");
  char path[512];
  assert_true(entry_path(path, sizeof path));
  char shard[512];
  snprintf(shard, sizeof shard, "%s", path);
  *strrchr(shard, '/') = '\0';
  assert_ok(cucore_cache_clear(NULL, NULL));
  rmdir(shard);
  f = fopen(shard, "w");
  assert_non_null(f);
  fclose(f);
  before = errors();
  compile_gives_the_right_bytes("a shard directory is a regular file");
  assert_true(errors() >= before + 1);
  unlink(shard);
}

/* A clear that cannot remove an entry says so: IO_ERROR with the count,
 * the first path and the reason, never "removed 0 entries" as if all went. */
static void clear_reports_what_it_could_not_remove(void **state) {
  (void)state;
  assert_ok(cucore_cache_clear(NULL, NULL));
  compile_gives_the_right_bytes("a clean store");
  char path[512];
  assert_true(entry_path(path, sizeof path));
  cc_test_cache_io_hook(hook);
  fail_step = "remove";
  fail_errno = EACCES;
  uint64_t n = 99, b = 99;
  assert_status(cucore_cache_clear(&n, &b), CUCORE_IO_ERROR);
  assert_int_equal(cucore_status_source(cucore_last_status()), CUCORE_SOURCE_ERRNO);
  assert_contains(cucore_last_error(), "1 file could not be removed");
  assert_contains(cucore_last_error(), path);
  assert_contains(cucore_last_error(), strerror(EACCES));
  assert_int_equal(n, 0);
  assert_int_equal(b, 0);
  assert_int_equal(entries(), 1); /* still there, as the error says */
  fail_step = NULL;
  cc_test_cache_io_hook(NULL);
  assert_ok(cucore_cache_clear(&n, &b));
  assert_int_equal(n, 1);
  assert_true(b > 0);
  assert_int_equal(entries(), 0);
}

/* A clear that runs out of memory listing the directory says so: HOST_OUT_OF_MEMORY with
 * cc_grow's message, as its status and as the last status, and nothing is removed. */
static void clear_out_of_memory_says_so(void **state) {
  (void)state;
  assert_ok(cucore_cache_clear(NULL, NULL));
  compile_gives_the_right_bytes("a clean store");
  uint64_t n = 99, b = 99;
  cc_test_alloc_hook(1, 1); /* the first allocation: the list of entries */
  cucore_status st = cucore_cache_clear(&n, &b);
  cc_test_alloc_hook(0, 0);
  assert_status(st, CUCORE_HOST_OUT_OF_MEMORY);
  assert_int_equal(cucore_last_status(), st);
  assert_contains(cucore_last_error(), "the cache's entries");
  assert_int_equal(n, 0);
  assert_int_equal(b, 0);
  assert_int_equal(entries(), 1);
  assert_ok(cucore_cache_clear(&n, &b));
  assert_int_equal(n, 1);
  assert_int_equal(entries(), 0);
}

static unsigned char *read_all(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *b = malloc((size_t)len + 1);
  *n = fread(b, 1, (size_t)len, f);
  fclose(f);
  return b;
}

static void write_all(const char *path, const unsigned char *b, size_t n) {
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(b, 1, n, f), n);
  fclose(f);
}

static int hexval(char c) { return c <= '9' ? c - '0' : c - 'a' + 10; }

/* Loads the entry at `path` straight from the disk layer: a damaged one must be a miss. */
static int damaged_is_refused(const char *path, const unsigned char key[CC_CACHE_KEY_BYTES],
                              const cc_cache_settings *s) {
  cc_cache_record rec;
  char note[1024] = "";
  int hit = cc_cache_disk_load(s, key, &rec, note, sizeof note);
  if (hit) {
    int same = rec.size == ref_size && memcmp(rec.code, ref, ref_size) == 0;
    cc_cache_record_free(&rec);
    if (!same) fail_msg("a damaged entry `%s` was handed out with different code", path);
    return 0; /* a hit with the right code: the damage was somewhere harmless */
  }
  if (!strstr(note, "damaged")) fail_msg("a refused entry gives no reason: %s", note);
  return 1;
}

static void truncated_and_bit_flipped_entries(void **state) {
  (void)state;
  assert_ok(cucore_cache_clear(NULL, NULL));
  compile_gives_the_right_bytes("a clean store");
  char path[512];
  assert_true(entry_path(path, sizeof path));
  size_t n = 0;
  unsigned char *good = read_all(path, &n);
  assert_non_null(good);
  /* The key is the path: <dir>/<2 hex>/<62 hex>. */
  unsigned char key[CC_CACHE_KEY_BYTES];
  char hex[2 * CC_CACHE_KEY_BYTES + 1];
  const char *slash = strrchr(path, '/');
  snprintf(hex, sizeof hex, "%.2s%s", slash - 2, slash + 1);
  for (int i = 0; i < CC_CACHE_KEY_BYTES; i++)
    key[i] = (unsigned char)(hexval(hex[2 * i]) << 4 | hexval(hex[2 * i + 1]));
  cc_cache_settings s;
  cc_cache_settings_get(&s);
  /* Sanity: the good entry is a hit with the right code. */
  write_all(path, good, n);
  cc_cache_record rec;
  char note[1024];
  assert_int_equal(cc_cache_disk_load(&s, key, &rec, note, sizeof note), 1);
  assert_true(rec.size == ref_size && memcmp(rec.code, ref, ref_size) == 0);
  cc_cache_record_free(&rec);

  long truncations = 0, flips = 0, refused = 0;
  for (size_t len = 0; len < n; len++) {
    write_all(path, good, len);
    refused += damaged_is_refused(path, key, &s);
    truncations++;
  }
  const char *l = getenv("CUCORE_FAULT_LONG");
  int all_bits = l && l[0] == '1';
  unsigned char *bad = malloc(n);
  for (size_t i = 0; i < n; i++)
    for (int bit = all_bits ? 0 : (int)(i % 8); bit < (all_bits ? 8 : (int)(i % 8) + 1); bit++) {
      memcpy(bad, good, n);
      bad[i] ^= (unsigned char)(1u << bit);
      write_all(path, bad, n);
      refused += damaged_is_refused(path, key, &s);
      flips++;
    }
  /* End to end: a damaged entry on disk, and the compile still gives the right bytes. */
  for (size_t i = 0; i < n; i += n / 16 + 1) {
    memcpy(bad, good, n);
    bad[i] ^= 0x10;
    write_all(path, bad, n);
    compile_gives_the_right_bytes("a bit-flipped entry on disk");
  }
  write_all(path, good, n / 2);
  compile_gives_the_right_bytes("a truncated entry on disk");
  free(bad);
  free(good);
  print_message("damaged entries: %ld truncations and %ld bit flips of a %zu-byte entry, %ld "
                "refused as damaged, 0 handed out with wrong code\n",
                truncations, flips, n, refused);
  assert_int_equal(refused, truncations + flips);
}

static int setup(void **state) {
  (void)state;
  snprintf(dir, sizeof dir, "/tmp/cucore-fault-cache-XXXXXX");
  if (!mkdtemp(dir)) return -1;
  if (cucore_cache_set_dir(dir) != CUCORE_OK) return -1;
  cucore_cache_set_enabled(0);
  cucore_object *obj = NULL;
  if (compile(&obj) != CUCORE_OK) return -1;
  const void *code;
  cucore_object_get_code(obj, NULL, &code, &ref_size);
  ref = malloc(ref_size);
  memcpy(ref, code, ref_size);
  cucore_object_destroy(obj);
  cucore_cache_set_enabled(1);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  free(ref);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "chmod -R u+w %s 2>/dev/null; rm -rf %s", dir, dir);
  return system(cmd) == 0 ? 0 : -1;
}

int main(void) {
  setenv("CUCORE_LIBCUDA", "/nonexistent/libcuda.so.1", 1); /* the driver plays no part */
  unsetenv("CUCORE_CACHE_DISABLE");
  const struct CMUnitTest tests[] = {cmocka_unit_test(every_step_of_a_store_and_a_load_may_fail),
                                     cmocka_unit_test(a_read_only_or_missing_directory),
                                     cmocka_unit_test(clear_reports_what_it_could_not_remove),
                                     cmocka_unit_test(clear_out_of_memory_says_so),
                                     cmocka_unit_test(truncated_and_bit_flipped_entries)};
  return cmocka_run_group_tests(tests, setup, teardown);
}
