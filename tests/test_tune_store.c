/* test_tune_store.c -- the crash-safe tune store: keys that change with every input (no stale
 * results), records kept per key, problem and device, resume (a reopened store finds every
 * configuration it measured; adding one value to a parameter leaves only the new
 * configurations to measure), a torn last line and a kill -9 in the middle of appends, the
 * lookup's fallbacks, the default path under the cache folder; a file that is not a store is
 * never appended to; read-only stores; the one reader of a record (old lines without the
 * newer fields included); the source's and kernel's names; two processes on one store (a
 * refresh reads the other's lines, never its own twice; group locks exclude each other and die
 * with their holder); merging records; a fingerprint never cut. */
#define _POSIX_C_SOURCE 200809L
#include "support.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[256], path[320];
static const char *DEV = "uuid=1;name=H100;cc=9.0";

static int setup(void **state) {
  (void)state;
  snprintf(dir, sizeof dir, "/tmp/cucore-tune-store-XXXXXX");
  if (!mkdtemp(dir)) return -1;
  snprintf(path, sizeof path, "%s/sub/store.jsonl", dir);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  char cmd[400];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  return system(cmd) == 0 ? 0 : -1;
}

static void key_of(const char *source, const char *options, char out[65]) {
  cucore_tune_key_fields f = {.source = source,
                              .options = options,
                              .kernel = "k",
                              .launch = "grid=n/bs",
                              .args = "f32[1024]",
                              .params = "bs"};
  assert_ok(cucore_tune_key(&f, out));
}

/* Each test writes its own file. */
static void use_file(const char *name) {
  snprintf(path, sizeof path, "%s/sub/%s.jsonl", dir, name);
}

static void keys_see_every_input(void **state) {
  (void)state;
  char a[65], b[65], c[65], d[65];
  key_of("__global__ void k() {}", "arch=sm_90", a);
  key_of("__global__ void k() {}", "arch=sm_90", b);
  key_of("__global__ void k() { }", "arch=sm_90", c); /* one space added to the kernel */
  key_of("__global__ void k() {}", "arch=sm_80", d);
  assert_int_equal(strlen(a), 64);
  assert_string_equal(a, b);
  assert_true(strcmp(a, c) != 0);
  assert_true(strcmp(a, d) != 0);
  cucore_device_props p;
  memset(&p, 0, sizeof p);
  strcpy(p.uuid, "GPU-1234");
  strcpy(p.name, "NVIDIA H100");
  p.cc_major = 9, p.sm_count = 132, p.l2_cache_bytes = 52428800;
  char fp[512];
  assert_ok(cucore_tune_fingerprint(&p, "cold,single", fp, sizeof fp));
  assert_contains(fp, "name=NVIDIA H100;cc=9.0;sms=132;l2=52428800;driver=");
  assert_contains(fp, "timing=cold,single");
  assert_null(strstr(fp, "GPU-1234")); /* the model, not the board: two boards share results */
  char fp2[512];
  strcpy(p.uuid, "GPU-5678");
  assert_ok(cucore_tune_fingerprint(&p, "cold,single", fp2, sizeof fp2));
  assert_string_equal(fp, fp2);
}

static cucore_tune_store *open_store(const char *key, const char *problem, const char *dev) {
  cucore_tune_store *s = NULL;
  assert_ok(cucore_tune_store_open(path, key, problem, dev, &s));
  return s;
}

static void resume_finds_every_record(void **state) {
  (void)state;
  char key[65];
  key_of("resume", "", key);
  use_file("resume");
  cucore_tune_space *sp = NULL;
  assert_ok(cucore_tune_space_create(&sp));
  assert_ok(cucore_tune_space_parse_param(sp, "bs=64,128", CUCORE_TUNE_PARAM_AUTO));
  assert_ok(cucore_tune_space_parse_param(sp, "u=1,2", CUCORE_TUNE_PARAM_AUTO));
  cucore_tune_store *s = open_store(key, "1024", DEV);
  char cfg[128], res[128];
  for (uint64_t i = 0; i < 4; i++) { /* "measure" all four */
    assert_ok(
        cucore_tune_space_get_config_text(sp, i, CUCORE_TUNE_TEXT_JSON, cfg, sizeof cfg, NULL));
    snprintf(res, sizeof res, "{\"status\":\"ok\",\"median_ms\":%g}", 1.0 + (double)i);
    assert_ok(cucore_tune_store_append(s, cfg, res));
  }
  cucore_tune_store_close(s);
  cucore_tune_space_destroy(sp);
  /* bs gets one more value: 6 configurations, of which only the 2 with bs=256 are new */
  assert_ok(cucore_tune_space_create(&sp));
  assert_ok(cucore_tune_space_parse_param(sp, "bs=64,128,256", CUCORE_TUNE_PARAM_AUTO));
  assert_ok(cucore_tune_space_parse_param(sp, "u=1,2", CUCORE_TUNE_PARAM_AUTO));
  s = open_store(key, "1024", DEV);
  size_t records = 0, damaged = 9, todo = 0;
  assert_ok(cucore_tune_store_get_info(s, NULL, &records, &damaged));
  assert_int_equal(records, 4);
  assert_int_equal(damaged, 0);
  for (uint64_t i = 0; i < 6; i++) {
    const char *found = NULL;
    assert_ok(
        cucore_tune_space_get_config_text(sp, i, CUCORE_TUNE_TEXT_JSON, cfg, sizeof cfg, NULL));
    assert_ok(cucore_tune_store_find(s, cfg, &found));
    if (!found) {
      todo++;
      assert_contains(cfg, "\"bs\":256");
    } else if (i == 3) {
      assert_string_equal(found, "{\"status\":\"ok\",\"median_ms\":4}");
    }
  }
  assert_int_equal(todo, 2);
  cucore_tune_store_close(s);
  /* another device or problem sees none of them */
  s = open_store(key, "2048", DEV);
  assert_ok(cucore_tune_store_get_info(s, NULL, &records, NULL));
  assert_int_equal(records, 0);
  cucore_tune_store_close(s);
  cucore_tune_space_destroy(sp);
}

static void torn_line_is_skipped(void **state) {
  (void)state;
  char key[65];
  key_of("torn", "", key);
  use_file("torn");
  cucore_tune_store *s = open_store(key, "", DEV);
  assert_ok(cucore_tune_store_append(s, "{\"a\":1}", "{\"status\":\"ok\",\"median_ms\":2}"));
  cucore_tune_store_close(s);
  FILE *f = fopen(path, "a"); /* what a kill in the middle of a write leaves */
  assert_non_null(f);
  fputs("{\"v\":1,\"key\":\"", f);
  fclose(f);
  s = open_store(key, "", DEV);
  size_t records, damaged;
  assert_ok(cucore_tune_store_get_info(s, NULL, &records, &damaged));
  assert_int_equal(records, 1);
  assert_int_equal(damaged, 1);
  assert_ok(cucore_tune_store_append(s, "{\"a\":2}", "{\"status\":\"ok\",\"median_ms\":1}"));
  cucore_tune_store_close(s);
  s = open_store(key, "", DEV); /* the new line did not join the torn one */
  assert_ok(cucore_tune_store_get_info(s, NULL, &records, &damaged));
  assert_int_equal(records, 2);
  assert_int_equal(damaged, 1);
  assert_status(cucore_tune_store_append(s, "{\"a\":", "{}"), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_tune_store_append(s, "[1]", "{}"), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "one JSON object");
  cucore_tune_store_close(s);
}

/* A child appends as fast as it can; SIGKILL stops it mid-stream. Every line it finished is
 * found again; at most one (the one in flight) is lost or torn. */
static void kill_minus_nine_loses_at_most_one(void **state) {
  (void)state;
  char key[65];
  key_of("kill", "", key);
  use_file("kill");
  int fds[2];
  assert_int_equal(pipe(fds), 0);
  pid_t pid = fork();
  if (pid == 0) {
    cucore_tune_store *s = NULL;
    if (cucore_tune_store_open(path, key, "", DEV, &s) != CUCORE_OK) _exit(3);
    char cfg[64];
    for (long i = 0;; i++) {
      snprintf(cfg, sizeof cfg, "{\"i\":%ld}", i);
      if (cucore_tune_store_append(s, cfg, "{\"status\":\"ok\",\"median_ms\":1}") != CUCORE_OK)
        _exit(4);
      if (i == 200 && write(fds[1], "x", 1) != 1) _exit(5);
    }
  }
  char c;
  assert_int_equal(read(fds[0], &c, 1), 1); /* 200 lines are done */
  kill(pid, SIGKILL);
  int status;
  waitpid(pid, &status, 0);
  close(fds[0]), close(fds[1]);
  assert_true(WIFSIGNALED(status));
  cucore_tune_store *s = open_store(key, "", DEV);
  size_t records, damaged;
  assert_ok(cucore_tune_store_get_info(s, NULL, &records, &damaged));
  assert_true(records >= 201);
  assert_true(damaged <= 1);
  const char *found = NULL;
  char cfg[64];
  for (size_t i = 0; i < records; i++) { /* every one, in order, none lost in the middle */
    snprintf(cfg, sizeof cfg, "{\"i\":%zu}", i);
    assert_ok(cucore_tune_store_find(s, cfg, &found));
    if (!found) fail_msg("record %zu of %zu is missing", i, records);
  }
  cucore_tune_store_close(s);
}

static void lookup_fallbacks(void **state) {
  (void)state;
  char key[65], cfg[64];
  key_of("lookup", "", key);
  use_file("lookup");
  double ms = 0;
  cucore_tune_match how;
  assert_status(cucore_tune_lookup(path, key, "1024", DEV, cfg, sizeof cfg, &ms, &how),
                CUCORE_NOT_FOUND);
  assert_int_equal(how, CUCORE_TUNE_MATCH_DEFAULT);
  cucore_tune_store *s = open_store(key, "1024", "other-gpu");
  assert_ok(cucore_tune_store_append(s, "{\"bs\":32}", "{\"status\":\"ok\",\"median_ms\":3}"));
  cucore_tune_store_close(s);
  assert_ok(cucore_tune_lookup(path, key, "1024", DEV, cfg, sizeof cfg, &ms, &how));
  assert_int_equal(how, CUCORE_TUNE_MATCH_OTHER_DEVICE);
  assert_string_equal(cfg, "{\"bs\":32}");
  s = open_store(key, "4096", DEV);
  assert_ok(cucore_tune_store_append(s, "{\"bs\":64}", "{\"status\":\"ok\",\"median_ms\":5}"));
  cucore_tune_store_close(s);
  s = open_store(key, "100000", DEV);
  assert_ok(cucore_tune_store_append(s, "{\"bs\":512}", "{\"status\":\"ok\",\"median_ms\":1}"));
  cucore_tune_store_close(s);
  assert_ok(cucore_tune_lookup(path, key, "1024", DEV, cfg, sizeof cfg, &ms, &how));
  assert_int_equal(how, CUCORE_TUNE_MATCH_NEAREST_SIZE);
  assert_string_equal(cfg, "{\"bs\":64}"); /* 4096 is nearer 1024 than 100000 */
  s = open_store(key, "1024", DEV);
  assert_ok(cucore_tune_store_append(s, "{\"bs\":128}", "{\"status\":\"ok\",\"median_ms\":2}"));
  assert_ok(cucore_tune_store_append(s, "{\"bs\":256}",
                                     "{\"status\":\"wrong-answer\","
                                     "\"median_ms\":0.5}"));
  assert_ok(cucore_tune_store_append(s, "{\"bs\":1024}", "{\"status\":\"ok\",\"median_ms\":1.5}"));
  cucore_tune_store_close(s);
  assert_ok(cucore_tune_lookup(path, key, "1024", DEV, cfg, sizeof cfg, &ms, &how));
  assert_int_equal(how, CUCORE_TUNE_MATCH_EXACT);
  assert_string_equal(cfg, "{\"bs\":1024}"); /* the fastest ok one; a wrong answer never wins */
  assert_true(ms == 1.5);
}

static void default_path_under_the_cache(void **state) {
  (void)state;
  char key[65], cache[300], want[400];
  key_of("default", "", key);
  snprintf(cache, sizeof cache, "%s/cache", dir);
  assert_ok(cucore_cache_set_dir(cache));
  cucore_tune_store *s = NULL;
  assert_ok(cucore_tune_store_open(NULL, key, "", DEV, &s));
  const char *p = NULL;
  assert_ok(cucore_tune_store_get_info(s, &p, NULL, NULL));
  snprintf(want, sizeof want, "%s/tune/%s.jsonl", cache, key);
  assert_string_equal(p, want);
  cucore_tune_store_close(s);
  assert_ok(cucore_cache_set_dir(NULL));
  assert_status(cucore_tune_store_open(path, "abc", "", DEV, &s), CUCORE_INVALID_ARGUMENT);
  assert_null(s);
  assert_ok(cucore_tune_store_close(NULL));
}

static void write_text(const char *p, const char *text) {
  FILE *f = fopen(p, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

/* A source file or a space file given as the store is refused and left as it was; an empty
 * file, and a store whose first line a kill cut, are stores. */
static void a_file_that_is_not_a_store_is_never_appended_to(void **state) {
  (void)state;
  char key[65];
  key_of("notastore", "", key);
  use_file("notastore");
  static const char *const texts[] = {"extern \"C\" __global__ void k() {}\n",
                                      "{\"tune_params\": {\"BS\": [32, 64]}}\n",
                                      "{\"v\":2,\"key\":\"x\"}\n", "\n{\"v\":1}\n"};
  for (size_t i = 0; i < 4; i++) {
    write_text(path, texts[i]);
    cucore_tune_store *s = NULL;
    assert_status(cucore_tune_store_open(path, key, "", DEV, &s), CUCORE_INVALID_ARGUMENT);
    assert_null(s);
    assert_contains(cucore_last_error(), "is not a tune store (its first line is not a store "
                                         "record); refusing to append to it");
    assert_contains(cucore_last_error(), path);
    char *after = cucore_test_read_file(path, NULL);
    assert_string_equal(after, texts[i]);
    free(after);
    assert_status(cucore_tune_store_open_read_only(path, key, "", DEV, &s),
                  CUCORE_INVALID_ARGUMENT);
  }
  write_text(path, "");
  cucore_tune_store *s = open_store(key, "", DEV);
  assert_ok(cucore_tune_store_close(s));
  write_text(path, "{\"v\":1,\"key\":\"ab\n"); /* torn by a kill, then appended to */
  s = open_store(key, "", DEV);
  assert_ok(cucore_tune_store_append(s, "{\"a\":1}", "{\"status\":\"ok\",\"median_ms\":2}"));
  cucore_tune_store_close(s);
  s = open_store(key, "", DEV);
  size_t records = 0, damaged = 0;
  assert_ok(cucore_tune_store_get_info(s, NULL, &records, &damaged));
  assert_int_equal(records, 1);
  assert_int_equal(damaged, 1);
  cucore_tune_store_close(s);
}

/* Read only: what is there is read, nothing is created or appended; with no key every record
 * of the file is read. */
static void read_only_stores(void **state) {
  (void)state;
  char key[65], other[65];
  key_of("readonly", "", key);
  key_of("readonly2", "", other);
  use_file("readonly");
  cucore_tune_store *s = NULL;
  assert_ok(cucore_tune_store_open_read_only(path, key, "", DEV, &s)); /* missing: no records */
  size_t n = 9;
  assert_ok(cucore_tune_store_get_record_count(s, &n));
  assert_int_equal(n, 0);
  assert_status(cucore_tune_store_append(s, "{\"a\":1}", "{\"status\":\"ok\"}"), CUCORE_IO_ERROR);
  assert_contains(cucore_last_error(), "opened read-only");
  cucore_tune_store_close(s);
  struct stat st;
  assert_int_equal(stat(path, &st), -1); /* not created */
  s = open_store(key, "", DEV);
  assert_ok(cucore_tune_store_append(s, "{\"a\":1}", "{\"status\":\"ok\",\"median_ms\":2}"));
  cucore_tune_store_close(s);
  s = open_store(other, "64", DEV);
  assert_ok(cucore_tune_store_append(s, "{\"a\":2}", "{\"status\":\"ok\",\"median_ms\":3}"));
  cucore_tune_store_close(s);
  assert_ok(cucore_tune_store_open_read_only(path, NULL, NULL, NULL, &s));
  assert_ok(cucore_tune_store_get_record_count(s, &n));
  assert_int_equal(n, 2);
  cucore_tune_record r;
  assert_ok(cucore_tune_store_get_record(s, 1, &r));
  assert_string_equal(r.key, other);
  assert_string_equal(r.problem, "64");
  assert_true(r.median_ms == 3);
  assert_status(cucore_tune_store_get_record(s, 2, &r), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "record 2 of 2");
  cucore_tune_store_close(s);
  assert_status(cucore_tune_store_open_read_only(NULL, NULL, NULL, NULL, &s),
                CUCORE_INVALID_ARGUMENT);
}

/* The one reader: every field of a result, and an old line (no names, no compile_ms, no
 * finalist flag, a finalist said by its detail) reads too. */
static void one_reader_of_a_record(void **state) {
  (void)state;
  char key[65], line[1024];
  key_of("reader", "", key);
  use_file("reader");
  snprintf(line, sizeof line,
           "{\"v\":1,\"key\":\"%s\",\"problem\":\"\",\"device\":\"d\",\"config\":{\"b\":1},"
           "\"result\":{\"status\":\"wrong-answer\",\"median_ms\":0,\"p20_ms\":0,\"p80_ms\":0,"
           "\"rel_stddev\":0,\"samples\":0,\"batch\":0,\"registers\":40,\"occupancy\":0.5,"
           "\"mode\":1,\"sm_clock_mhz\":1980,\"throttled\":0,\"max_abs_err\":1.5,"
           "\"max_rel_err\":0.25,\"detail\":\"3 of 8 differ\"}}\n"
           "{\"v\":1,\"key\":\"%s\",\"problem\":\"\",\"device\":\"d\",\"config\":{\"b\":2},"
           "\"result\":{\"status\":\"ok\",\"median_ms\":1.25,\"p20_ms\":1.2,\"p80_ms\":1.3,"
           "\"rel_stddev\":0.01,\"samples\":50,\"batch\":4,\"detail\":\"finalist: rounds\"}}\n"
           "{\"v\":1,\"key\":\"%s\",\"problem\":\"\",\"device\":\"d\",\"config\":{\"b\":3},"
           "\"result\":{\"status\":\"a-status-from-the-future\"}}\n",
           key, key, key);
  write_text(path, line);
  cucore_tune_store *s = open_store(key, "", "d");
  cucore_tune_record r;
  int found = 0;
  assert_ok(cucore_tune_store_find_record(s, "{\"b\":1}", &r, &found));
  assert_int_equal(found, 1);
  assert_int_equal(r.status, CUCORE_TUNE_WRONG_ANSWER);
  assert_int_equal(r.has_error, 1);
  assert_true(r.max_abs_err == 1.5 && r.max_rel_err == 0.25);
  assert_int_equal(r.registers, 40);
  assert_true(r.occupancy == 0.5);
  assert_int_equal(r.sm_clock_mhz, 1980);
  assert_string_equal(r.detail, "3 of 8 differ");
  assert_string_equal(r.source, "");
  assert_int_equal(r.finalist, 0);
  assert_ok(cucore_tune_store_find_record(s, "{\"b\":2}", &r, &found));
  assert_int_equal(r.status, CUCORE_TUNE_OK);
  assert_true(r.median_ms == 1.25 && r.p20_ms == 1.2 && r.p80_ms == 1.3);
  assert_int_equal(r.samples, 50);
  assert_int_equal(r.batch, 4);
  assert_int_equal(r.sm_clock_mhz, -1); /* not in the record */
  assert_int_equal(r.finalist, 1);      /* by its detail: an old record */
  assert_ok(cucore_tune_store_find_record(s, "{\"b\":3}", &r, &found));
  assert_int_equal(r.status, CUCORE_TUNE_LAUNCH_ERROR); /* unknown: a failure */
  assert_true(r.median_ms == -1);
  assert_ok(cucore_tune_store_find_record(s, "{\"b\":4}", &r, &found));
  assert_int_equal(found, 0);
  assert_null(r.config);
  /* names, written from now on */
  assert_ok(cucore_tune_store_set_names(s, "gemm.cu", "gemm<{BM}>"));
  assert_ok(cucore_tune_store_append(s, "{\"b\":5}",
                                     "{\"status\":\"ok\",\"median_ms\":2,\"finalist\":true,"
                                     "\"detail\":\"\"}"));
  assert_ok(cucore_tune_store_find_record(s, "{\"b\":5}", &r, &found));
  assert_string_equal(r.source, "gemm.cu");
  assert_string_equal(r.kernel, "gemm<{BM}>");
  assert_int_equal(r.finalist, 1);
  cucore_tune_store_close(s);
  char *text = cucore_test_read_file(path, NULL);
  assert_contains(text, "\"device\":\"d\",\"source\":\"gemm.cu\",\"kernel\":\"gemm<{BM}>\","
                        "\"config\":{\"b\":5}");
  free(text);
}

/* Two handles on one file, as two processes have: each refresh reads the other's lines (a
 * line still being written waits), never its own twice. */
static void refresh_reads_what_others_appended(void **state) {
  (void)state;
  char key[65];
  key_of("refresh", "", key);
  use_file("refresh");
  cucore_tune_store *a = open_store(key, "", DEV), *b = open_store(key, "", DEV);
  assert_ok(cucore_tune_store_append(a, "{\"i\":1}", "{\"status\":\"ok\",\"median_ms\":1}"));
  assert_ok(cucore_tune_store_append(b, "{\"i\":2}", "{\"status\":\"ok\",\"median_ms\":2}"));
  assert_ok(cucore_tune_store_append(a, "{\"i\":3}", "{\"status\":\"ok\",\"median_ms\":3}"));
  size_t added = 9, n = 0;
  assert_ok(cucore_tune_store_refresh(b, &added));
  assert_int_equal(added, 2); /* a's two, not b's own */
  assert_ok(cucore_tune_store_get_record_count(b, &n));
  assert_int_equal(n, 3);
  assert_ok(cucore_tune_store_refresh(b, &added));
  assert_int_equal(added, 0);
  const char *found = NULL;
  assert_ok(cucore_tune_store_find(b, "{\"i\":3}", &found));
  assert_non_null(found);
  FILE *f = fopen(path, "a"); /* a line being written */
  fputs("{\"v\":1,\"key\":\"", f);
  fflush(f);
  assert_ok(cucore_tune_store_refresh(a, &added));
  assert_int_equal(added, 1); /* b's line; the unfinished one waits */
  fprintf(f,
          "%s\",\"problem\":\"\",\"device\":\"%s\",\"config\":{\"i\":4},"
          "\"result\":{\"status\":\"ok\",\"median_ms\":4}}\n",
          key, DEV);
  fclose(f);
  assert_ok(cucore_tune_store_refresh(a, &added));
  assert_int_equal(added, 1);
  size_t damaged = 9;
  assert_ok(cucore_tune_store_get_info(a, NULL, &n, &damaged));
  assert_int_equal(n, 4);
  assert_int_equal(damaged, 0);
  cucore_tune_store_close(a);
  cucore_tune_store_close(b);
}

/* Records merged from another store: the same record twice is written once. */
static void append_record_skips_duplicates(void **state) {
  (void)state;
  char key[65];
  key_of("merge", "", key);
  use_file("merge-from");
  cucore_tune_store *s = open_store(key, "128", DEV);
  assert_ok(cucore_tune_store_set_names(s, "k.cu", "k"));
  assert_ok(cucore_tune_store_append(s, "{\"i\":1}", "{\"status\":\"ok\",\"median_ms\":1}"));
  cucore_tune_store_close(s);
  char from[400];
  snprintf(from, sizeof from, "%s", path);
  use_file("merge-to");
  cucore_tune_store *in = NULL, *out = NULL;
  assert_ok(cucore_tune_store_open_read_only(from, NULL, NULL, NULL, &in));
  assert_ok(cucore_tune_store_open(path, key, NULL, NULL, &out));
  cucore_tune_record r;
  int appended = 0;
  assert_ok(cucore_tune_store_get_record(in, 0, &r));
  assert_ok(cucore_tune_store_append_record(out, &r, &appended));
  assert_int_equal(appended, 1);
  assert_ok(cucore_tune_store_append_record(out, &r, &appended));
  assert_int_equal(appended, 0);
  cucore_tune_record bad = r;
  bad.key = "abc";
  assert_status(cucore_tune_store_append_record(out, &bad, &appended), CUCORE_INVALID_ARGUMENT);
  cucore_tune_store_close(out);
  cucore_tune_store_close(in);
  s = open_store(key, "128", DEV);
  size_t n = 0;
  assert_ok(cucore_tune_store_get_info(s, NULL, &n, NULL));
  assert_int_equal(n, 1);
  assert_ok(cucore_tune_store_get_record(s, 0, &r));
  assert_string_equal(r.source, "k.cu");
  cucore_tune_store_close(s);
}

/* Group locks: two stores exclude each other per group; a holder killed with -9 frees its
 * locks; a lock file that cannot be made is named. */
static void group_locks(void **state) {
  (void)state;
  char key[65];
  key_of("locks", "", key);
  use_file("locks");
  cucore_tune_store *a = open_store(key, "", DEV), *b = open_store(key, "", DEV);
  int locked = 9;
  assert_ok(cucore_tune_store_lock(a, 7, 0, &locked));
  assert_int_equal(locked, 1);
  assert_ok(cucore_tune_store_lock(b, 7, 0, &locked));
  assert_int_equal(locked, 0); /* a holds it */
  assert_ok(cucore_tune_store_lock(b, 8, 0, &locked));
  assert_int_equal(locked, 1); /* another group */
  assert_ok(cucore_tune_store_unlock(a, 7));
  assert_ok(cucore_tune_store_lock(b, 7, 0, &locked));
  assert_int_equal(locked, 1);
  cucore_tune_store_close(b); /* its locks go with it */
  int fds[2];
  assert_int_equal(pipe(fds), 0);
  pid_t pid = fork();
  if (pid == 0) {
    cucore_tune_store *c = NULL;
    int got = 0;
    if (cucore_tune_store_open(path, key, "", DEV, &c) != CUCORE_OK) _exit(3);
    if (cucore_tune_store_lock(c, 9, 0, &got) != CUCORE_OK || !got) _exit(4);
    if (write(fds[1], "x", 1) != 1) _exit(5);
    pause();
  }
  char ch;
  assert_int_equal(read(fds[0], &ch, 1), 1); /* the child holds group 9 */
  assert_ok(cucore_tune_store_lock(a, 9, 0, &locked));
  assert_int_equal(locked, 0);
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
  close(fds[0]), close(fds[1]);
  assert_ok(cucore_tune_store_lock(a, 9, 1, &locked)); /* freed by the kill */
  assert_int_equal(locked, 1);
  cucore_tune_store_close(a);
  char nowhere[400];
  snprintf(nowhere, sizeof nowhere, "%s/no-such-folder/s.jsonl", dir);
  assert_ok(cucore_tune_store_open_read_only(nowhere, key, "", DEV, &a));
  assert_status(cucore_tune_store_lock(a, 1, 0, &locked), CUCORE_IO_ERROR);
  assert_contains(cucore_last_error(), "cannot make its lock file");
  assert_contains(cucore_last_error(), "s.jsonl.lock");
  cucore_tune_store_close(a);
}

static void fingerprint_is_never_cut(void **state) {
  (void)state;
  cucore_device_props p;
  memset(&p, 0, sizeof p);
  strcpy(p.name, "NVIDIA H100");
  char fp[16];
  assert_status(cucore_tune_fingerprint(&p, "hot", fp, sizeof fp), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "cap is 16");
  assert_string_equal(fp, "");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(keys_see_every_input),
      cmocka_unit_test(resume_finds_every_record),
      cmocka_unit_test(torn_line_is_skipped),
      cmocka_unit_test(kill_minus_nine_loses_at_most_one),
      cmocka_unit_test(lookup_fallbacks),
      cmocka_unit_test(default_path_under_the_cache),
      cmocka_unit_test(a_file_that_is_not_a_store_is_never_appended_to),
      cmocka_unit_test(read_only_stores),
      cmocka_unit_test(one_reader_of_a_record),
      cmocka_unit_test(refresh_reads_what_others_appended),
      cmocka_unit_test(append_record_skips_duplicates),
      cmocka_unit_test(group_locks),
      cmocka_unit_test(fingerprint_is_never_cut),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
