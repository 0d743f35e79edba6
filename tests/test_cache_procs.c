/* test_cache_procs.c -- the compile cache across processes and threads, and when the
 * directory cannot be written: 16 processes compiling one source into an empty cache at once;
 * threads doing the same in one process; a read-only directory (empty, holding a good entry,
 * holding a damaged one); writes failing as on a full disk; temporary files left by a crash.
 * Every expectation is a fresh uncached compile of the same source. */
#include "cache_support.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

#define NPROCS 16
#define NTHREADS 8

/* The reference: a fresh compile with the cache off. */
static cucore_object *reference(const char *src) {
  cucore_object *obj = NULL;
  cucore_cache_info info;
  assert_ok(
      cache_test_compile(src, "k.cu", "sm_90", CUCORE_CODE_CUBIN, NULL, NULL, 0, 0, &obj, &info));
  return obj;
}

/* ---- 16 processes ------------------------------------------------------------------------ */

/* Child: waits for the gate to open (its write end closes), compiles, writes the code. */
static int child_main(const char *out_path, int gate) {
  char c;
  while (read(gate, &c, 1) < 0 && errno == EINTR) {}
  char *src = cache_test_source(700);
  cucore_object *obj = NULL;
  cucore_cache_info info;
  cucore_status st = cache_test_compile(src, "k.cu", "sm_90", CUCORE_CODE_CUBIN, NULL, NULL, 0, 1,
                                        &obj, &info);
  if (st != CUCORE_OK) {
    fprintf(stderr, "child: compile failed: %s\n", cucore_last_error());
    return 1;
  }
  if (info.note[0]) fprintf(stderr, "child: cache note: %s\n", info.note);
  FILE *f = fopen(out_path, "wb");
  if (!f || fwrite(obj->code, 1, obj->size, f) != obj->size || fclose(f) != 0) return 2;
  printf("%s\n", cucore_cache_result_name(info.result));
  cucore_object_destroy(obj);
  free(src);
  return info.result == CUCORE_CACHE_MISS || info.result == CUCORE_CACHE_HIT_DISK ? 0 : 3;
}

static void sixteen_processes_leave_one_entry(void **state) {
  (void)state;
  char *dir = cache_test_mkdtemp();
  char *src = cache_test_source(700);
  cucore_object *ref = reference(src);
  int gate[2];
  assert_int_equal(pipe(gate), 0);
  setenv("CUCORE_CACHE_DIR", dir, 1);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addclose(&fa, gate[1]);
  pid_t pids[NPROCS];
  char outs[NPROCS][4200];
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  assert_true(n > 0);
  self[n] = '\0';
  for (int i = 0; i < NPROCS; i++) {
    snprintf(outs[i], sizeof outs[i], "%s/out-%d.cubin", dir, i);
    char fd[16];
    snprintf(fd, sizeof fd, "%d", gate[0]);
    char *argv[] = {self, "--child", outs[i], fd, NULL};
    assert_int_equal(posix_spawn(&pids[i], self, &fa, NULL, argv, environ), 0);
  }
  unsetenv("CUCORE_CACHE_DIR");
  posix_spawn_file_actions_destroy(&fa);
  close(gate[0]);
  close(gate[1]); /* all start now */
  for (int i = 0; i < NPROCS; i++) {
    int status = 0;
    assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
      fail_msg("process %d ended with status %d", i, status);
  }
  for (int i = 0; i < NPROCS; i++) {
    size_t size = 0;
    char *code = cucore_test_read_file(outs[i], &size);
    assert_non_null(code);
    if (size != ref->size || memcmp(code, ref->code, size) != 0)
      fail_msg("process %d got %zu bytes that differ from the fresh compile's %zu", i, size,
               ref->size);
    free(code);
    unlink(outs[i]);
  }
  int tmps = -1;
  assert_int_equal(cache_test_count_files(dir, &tmps), 1);
  assert_int_equal(tmps, 0);
  assert_ok(cucore_cache_set_dir(dir));
  cucore_cache_stats s;
  assert_ok(cucore_cache_get_stats(&s));
  assert_int_equal(s.entries, 1);
  assert_int_equal(s.total.hits + s.total.misses, NPROCS);
  assert_true(s.total.stores >= 1 && s.total.stores <= NPROCS);
  assert_int_equal(s.total.stores, s.total.misses);
  assert_int_equal(s.total.errors, 0);
  assert_ok(cucore_cache_set_dir(NULL));
  cucore_object_destroy(ref);
  free(src);
  cache_test_rm_rf(dir);
  free(dir);
}

/* ---- threads ----------------------------------------------------------------------------- */

typedef struct thread_arg {
  pthread_barrier_t *barrier;
  const char *src;
  cucore_object *obj;
  cucore_status st;
  char error[512];
} thread_arg;

static void *thread_main(void *p) {
  thread_arg *a = p;
  pthread_barrier_wait(a->barrier);
  cucore_cache_info info;
  a->st = cache_test_compile(a->src, "k.cu", "sm_90", CUCORE_CODE_CUBIN, NULL, NULL, 0, 1, &a->obj,
                             &info);
  snprintf(a->error, sizeof a->error, "%s", a->st == CUCORE_OK ? "" : cucore_last_error());
  return NULL;
}

static void threads_share_one_object(void **state) {
  (void)state;
  char *dir = cache_test_mkdtemp();
  assert_ok(cucore_cache_set_dir(dir));
  cc_cache_memory_clear();
  char *src = cache_test_source(701);
  cucore_object *ref = reference(src);
  pthread_barrier_t barrier;
  pthread_barrier_init(&barrier, NULL, NTHREADS);
  thread_arg args[NTHREADS];
  pthread_t th[NTHREADS];
  for (int i = 0; i < NTHREADS; i++) {
    args[i] = (thread_arg){&barrier, src, NULL, CUCORE_OK, ""};
    assert_int_equal(pthread_create(&th[i], NULL, thread_main, &args[i]), 0);
  }
  for (int i = 0; i < NTHREADS; i++) pthread_join(th[i], NULL);
  pthread_barrier_destroy(&barrier);
  for (int i = 0; i < NTHREADS; i++) {
    if (args[i].st != CUCORE_OK) fail_msg("thread %d: %s", i, args[i].error);
    assert_true(cache_test_same_object(args[i].obj, ref));
    assert_ptr_equal(args[i].obj, args[0].obj); /* one object per key in a process */
  }
  for (int i = 0; i < NTHREADS; i++) cucore_object_destroy(args[i].obj);
  int tmps = -1;
  assert_int_equal(cache_test_count_files(dir, &tmps), 1);
  assert_int_equal(tmps, 0);
  cc_cache_memory_clear();
  assert_ok(cucore_cache_set_dir(NULL));
  cucore_object_destroy(ref);
  free(src);
  cache_test_rm_rf(dir);
  free(dir);
}

/* ---- a directory that cannot be written -------------------------------------------------- */

/* Runs `fn` in a child process; its exit status: 0 passed, 77 skipped, other failed. */
static void in_child(int (*fn)(const char *dir), const char *dir) {
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) _exit(fn(dir));
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  if (WEXITSTATUS(status) == 77) skip();
  if (WEXITSTATUS(status) != 0)
    fail_msg("the child failed (status %d); see its output above", WEXITSTATUS(status));
}

#define CHILD_CHECK(cond, ...)                \
  do {                                        \
    if (!(cond)) {                            \
      fprintf(stderr, "child: " __VA_ARGS__); \
      fprintf(stderr, "\n");                  \
      return 1;                               \
    }                                         \
  } while (0)

/* Compiles source `n` with the cache and checks the result against a fresh compile. */
static int child_compile_check(int n, cucore_cache_result want, const char *note_has,
                               int want_stored) {
  char *src = cache_test_source(n);
  cucore_object *ref = NULL, *obj = NULL;
  cucore_cache_info info;
  CHILD_CHECK(cache_test_compile(src, "k.cu", "sm_90", CUCORE_CODE_CUBIN, NULL, NULL, 0, 0, &ref,
                                 &info) == CUCORE_OK,
              "reference compile: %s", cucore_last_error());
  CHILD_CHECK(cache_test_compile(src, "k.cu", "sm_90", CUCORE_CODE_CUBIN, NULL, NULL, 0, 1, &obj,
                                 &info) == CUCORE_OK,
              "cached compile failed: %s", cucore_last_error());
  CHILD_CHECK(cache_test_same_object(obj, ref), "source %d: result differs from a fresh compile",
              n);
  CHILD_CHECK(info.result == want, "source %d: result %s, expected %s (note: %s)", n,
              cucore_cache_result_name(info.result), cucore_cache_result_name(want), info.note);
  CHILD_CHECK(!note_has || strstr(info.note, note_has), "source %d: note \"%s\" lacks \"%s\"", n,
              info.note, note_has);
  CHILD_CHECK(info.stored == want_stored, "source %d: stored %d, expected %d", n, info.stored,
              want_stored);
  cucore_object_destroy(obj);
  cucore_object_destroy(ref);
  free(src);
  return 0;
}

static int read_only_child(const char *dir) {
  if (geteuid() == 0) { /* root writes anywhere: become nobody */
    if (setgid(65534) != 0 || setuid(65534) != 0) {
      printf("skipped: running as root and cannot become nobody: %s\n", strerror(errno));
      return 77;
    }
  }
  char probe[4200];
  snprintf(probe, sizeof probe, "%s/probe", dir);
  int fd = open(probe, O_WRONLY | O_CREAT | O_EXCL, 0644);
  if (fd >= 0) {
    close(fd);
    printf("skipped: the directory stays writable after chmod (a file system without "
           "permissions?)\n");
    return 77;
  }
  CHILD_CHECK(cucore_cache_set_dir(dir) == CUCORE_OK, "set_dir");
  /* Nothing stored yet: compiled, and a note says why nothing was stored. */
  if (child_compile_check(800, CUCORE_CACHE_MISS, "Permission denied", 0)) return 1;
  /* A good entry: read (its time cannot be touched, which is fine). */
  cc_cache_memory_clear();
  if (child_compile_check(801, CUCORE_CACHE_HIT_DISK, NULL, 0)) return 1;
  /* A damaged entry that cannot be removed: compiled again, and said so. */
  cc_cache_memory_clear();
  if (child_compile_check(802, CUCORE_CACHE_MISS, "could not remove it", 0)) return 1;
  return 0;
}

static void read_only_directory_never_fails_a_compile(void **state) {
  (void)state;
  char *dir = cache_test_mkdtemp();
  assert_ok(cucore_cache_set_dir(dir));
  /* A good entry for source 801 and a truncated one for 802. */
  for (int n = 801; n <= 802; n++) {
    char *src = cache_test_source(n);
    cucore_object *obj = NULL;
    cucore_cache_info info;
    assert_ok(
        cache_test_compile(src, "k.cu", "sm_90", CUCORE_CODE_CUBIN, NULL, NULL, 0, 1, &obj, &info));
    assert_int_equal(info.stored, 1);
    if (n == 802) assert_int_equal(truncate(info.path, 100), 0);
    cucore_object_destroy(obj);
    free(src);
  }
  assert_ok(cucore_cache_set_dir(NULL));
  cc_cache_memory_clear();
  char cmd[4300];
  snprintf(cmd, sizeof cmd, "chmod -R a-w,a+rX '%s'", dir);
  assert_int_equal(system(cmd), 0);
  in_child(read_only_child, dir);
  snprintf(cmd, sizeof cmd, "chmod -R u+w '%s'", dir);
  assert_int_equal(system(cmd), 0);
  cache_test_rm_rf(dir);
  free(dir);
}

/* Writes fail past 1 KiB, as on a full disk: the compile still succeeds, nothing partial is
 * left behind. */
static int full_disk_child(const char *dir) {
  signal(SIGXFSZ, SIG_IGN);
  struct rlimit rl = {1024, RLIM_INFINITY};
  getrlimit(RLIMIT_FSIZE, &rl);
  rl.rlim_cur = 1024;
  CHILD_CHECK(setrlimit(RLIMIT_FSIZE, &rl) == 0, "setrlimit: %s", strerror(errno));
  CHILD_CHECK(cucore_cache_set_dir(dir) == CUCORE_OK, "set_dir");
  if (child_compile_check(810, CUCORE_CACHE_MISS, "could not write", 0)) return 1;
  int tmps = -1;
  int entries = cache_test_count_files(dir, &tmps);
  CHILD_CHECK(entries == 0 && tmps == 0, "%d entries and %d temporary files left", entries, tmps);
  return 0;
}

static void failed_writes_never_fail_a_compile(void **state) {
  (void)state;
  char *dir = cache_test_mkdtemp();
  cc_cache_memory_clear();
  in_child(full_disk_child, dir);
  cache_test_rm_rf(dir);
  free(dir);
}

/* A crash while writing leaves only a temporary file (never a partial entry): old ones are
 * swept by the next store's walk, recent ones (maybe still being written) are left alone. */
static void stale_temporary_files_are_swept(void **state) {
  (void)state;
  char *dir = cache_test_mkdtemp();
  char shard[4200], stale[4300], fresh[4300];
  snprintf(shard, sizeof shard, "%s/7f", dir);
  assert_int_equal(mkdir(shard, 0755), 0);
  snprintf(stale, sizeof stale, "%s/.tmp-1-1-dead", shard);
  snprintf(fresh, sizeof fresh, "%s/.tmp-1-2-live", shard);
  for (int i = 0; i < 2; i++) {
    FILE *f = fopen(i ? fresh : stale, "w");
    assert_non_null(f);
    fputs("partial", f);
    fclose(f);
  }
  struct timespec old[2] = {{time(NULL) - 2 * 3600, 0}, {time(NULL) - 2 * 3600, 0}};
  assert_int_equal(utimensat(AT_FDCWD, stale, old, 0), 0);
  assert_ok(cucore_cache_set_dir(dir));
  cc_cache_memory_clear();
  char *src = cache_test_source(820);
  cucore_object *obj = NULL;
  cucore_cache_info info;
  assert_ok(
      cache_test_compile(src, "k.cu", "sm_90", CUCORE_CODE_CUBIN, NULL, NULL, 0, 1, &obj, &info));
  assert_int_equal(info.stored, 1);
  assert_int_equal(access(stale, F_OK), -1);
  assert_int_equal(access(fresh, F_OK), 0);
  cucore_object_destroy(obj);
  cc_cache_memory_clear();
  assert_ok(cucore_cache_set_dir(NULL));
  free(src);
  cache_test_rm_rf(dir);
  free(dir);
}

int main(int argc, char **argv) {
  if (argc == 4 && strcmp(argv[1], "--child") == 0) return child_main(argv[2], atoi(argv[3]));
  unsetenv("CUCORE_CACHE_DISABLE");
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(sixteen_processes_leave_one_entry),
      cmocka_unit_test(threads_share_one_object),
      cmocka_unit_test(read_only_directory_never_fails_a_compile),
      cmocka_unit_test(failed_writes_never_fail_a_compile),
      cmocka_unit_test(stale_temporary_files_are_swept),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
