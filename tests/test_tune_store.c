/* test_tune_store.c -- the crash-safe tune store: keys that change with every input (no stale
 * results), records kept per key, problem and device, resume (a reopened store finds every
 * configuration it measured; adding one value to a parameter leaves only the new
 * configurations to measure), a torn last line and a kill -9 in the middle of appends, the
 * lookup's fallbacks, the default path under the cache folder. */
#define _POSIX_C_SOURCE 200809L
#include "support.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
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
  assert_contains(fp, "uuid=GPU-1234;name=NVIDIA H100;cc=9.0;sms=132;l2=52428800;driver=");
  assert_contains(fp, "timing=cold,single");
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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(keys_see_every_input), cmocka_unit_test(resume_finds_every_record),
      cmocka_unit_test(torn_line_is_skipped), cmocka_unit_test(kill_minus_nine_loses_at_most_one),
      cmocka_unit_test(lookup_fallbacks),     cmocka_unit_test(default_path_under_the_cache),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
