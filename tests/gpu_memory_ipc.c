/* gpu_memory_ipc.c -- two processes share device memory through an IPC pool (label gpu).
 *
 * The parent creates a pool with CUCORE_POOL_IPC, fills an allocation, exports the pool as a
 * file descriptor and the allocation as a cucore_ipc_pointer, and passes both over a Unix
 * socket (SCM_RIGHTS) to a child it forks and execs (this binary, `--child FD`: a fresh process,
 * since CUDA does not survive fork). The child imports both, checks what the parent wrote,
 * checks that its copies are bounds-checked at the exporter's size, adds 1 to every element,
 * frees its import and answers. The parent then reads the child's writes. */
#include "gpu_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define N (1 << 20) /* ints shared */

typedef struct reply {
  int status; /* 0: every check passed */
  char message[1024];
} reply;

static int child_fail(int sock, const char *what) {
  reply r;
  memset(&r, 0, sizeof r);
  r.status = 1;
  snprintf(r.message, sizeof r.message, "%s: %s", what, cucore_last_error());
  (void)!write(sock, &r, sizeof r);
  return 1;
}

#define CHILD_OK(call)                                       \
  do {                                                       \
    if ((call) != CUCORE_OK) return child_fail(sock, #call); \
  } while (0)

static int child_main(int sock) {
  cucore_device *dev = NULL;
  cucore_stream *s = NULL;
  CHILD_OK(cucore_device_open(0, &dev));
  CHILD_OK(cucore_stream_create(dev, CUCORE_STREAM_NON_BLOCKING, 0, &s));
  int fd = -1;
  cucore_ipc_pointer ip;
  CHILD_OK(cucore_ipc_recv_fd(sock, &fd, &ip, sizeof ip));
  cucore_mem_pool *pool = NULL;
  CHILD_OK(cucore_mem_pool_import_fd(dev, fd, &pool));
  close(fd);
  cucore_devptr p = 0;
  CHILD_OK(cucore_mem_pool_import_pointer(pool, &ip, &p));
  cucore_pointer_facts f;
  CHILD_OK(cucore_pointer_get_facts(p, &f));
  if (f.kind != CUCORE_MEM_IPC_IMPORTED || f.size != (uint64_t)N * 4) {
    reply r = {1, ""};
    snprintf(r.message, sizeof r.message, "facts of the import: kind %d, size %llu", f.kind,
             (unsigned long long)f.size);
    (void)!write(sock, &r, sizeof r);
    return 1;
  }
  int *h = malloc((size_t)N * 4 + 64);
  CHILD_OK(cucore_memcpy_dtoh(dev, h, p, (size_t)N * 4, NULL));
  for (int i = 0; i < N; i++)
    if (h[i] != i * 3 + 11) {
      reply r = {1, ""};
      snprintf(r.message, sizeof r.message, "the child read %d at %d, the parent wrote %d", h[i], i,
               i * 3 + 11);
      (void)!write(sock, &r, sizeof r);
      return 1;
    }
  /* The importer's copies are checked at the exporter's size. */
  if (CUCORE_CODE(cucore_memcpy_dtoh(dev, h, p, (size_t)N * 4 + 4, NULL)) != CUCORE_OUT_OF_BOUNDS)
    return child_fail(sock, "a copy past the imported allocation was not refused");
  for (int i = 0; i < N; i++) h[i] += 1;
  CHILD_OK(cucore_memcpy_htod(dev, p, h, (size_t)N * 4, NULL));
  /* The imported pool cannot go while its pointer lives; free (and finish) first. */
  if (CUCORE_CODE(cucore_mem_pool_destroy(pool)) != CUCORE_IN_USE)
    return child_fail(sock, "destroying the imported pool with a live import was not refused");
  CHILD_OK(cucore_mem_pool_free_async(pool, s, p));
  CHILD_OK(cucore_stream_synchronize(s));
  CHILD_OK(cucore_mem_pool_destroy(pool));
  CHILD_OK(cucore_stream_destroy(s));
  CHILD_OK(cucore_device_close(dev));
  free(h);
  reply r;
  memset(&r, 0, sizeof r);
  snprintf(r.message, sizeof r.message, "child (pid %d): %d ints read and written back",
           (int)getpid(), N);
  (void)!write(sock, &r, sizeof r);
  return 0;
}

static void two_processes_share_a_pool(void **state) {
  (void)state;
  cucore_device *dev = NULL;
  cucore_stream *s = NULL;
  assert_ok(cucore_device_open(0, &dev));
  assert_ok(cucore_stream_create(dev, CUCORE_STREAM_NON_BLOCKING, 0, &s));
  cucore_mem_pool_props props;
  memset(&props, 0, sizeof props);
  props.flags = CUCORE_POOL_IPC;
  cucore_mem_pool *pool = NULL;
  cucore_status st = cucore_mem_pool_create(dev, &props, &pool);
  if (CUCORE_CODE(st) == CUCORE_NOT_SUPPORTED) {
    print_message("skipped: %s\n", cucore_last_error());
    cucore_stream_destroy(s);
    cucore_device_close(dev);
    skip();
  }
  assert_ok(st);
  cucore_devptr p = 0;
  assert_ok(cucore_mem_pool_alloc_async(pool, s, (size_t)N * 4, &p));
  int *h = malloc((size_t)N * 4);
  for (int i = 0; i < N; i++) h[i] = i * 3 + 11;
  assert_ok(cucore_memcpy_htod(dev, p, h, (size_t)N * 4, s));
  assert_ok(cucore_stream_synchronize(s)); /* complete before another process looks */
  int fd = -1;
  cucore_ipc_pointer ip;
  assert_ok(cucore_mem_pool_export_fd(pool, &fd));
  assert_ok(cucore_mem_pool_export_pointer(pool, p, &ip));
  assert_int_equal(ip.bytes, (uint64_t)N * 4);
  assert_status(cucore_mem_pool_export_pointer(pool, p + 4, &ip), CUCORE_INVALID_ARGUMENT);
  assert_ok(cucore_mem_pool_export_pointer(pool, p, &ip));
  int sv[2];
  assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  char fdarg[16];
  snprintf(fdarg, sizeof fdarg, "%d", sv[1]);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    close(sv[0]);
    execl("/proc/self/exe", "gpu_memory_ipc", "--child", fdarg, (char *)NULL);
    _exit(127);
  }
  close(sv[1]);
  assert_ok(cucore_ipc_send_fd(sv[0], fd, &ip, sizeof ip));
  close(fd);
  reply r;
  memset(&r, 0, sizeof r);
  size_t got = 0;
  while (got < sizeof r) {
    ssize_t n = read(sv[0], (char *)&r + got, sizeof r - got);
    if (n <= 0) break;
    got += (size_t)n;
  }
  int status = 0;
  waitpid(pid, &status, 0);
  close(sv[0]);
  if (got != sizeof r)
    fail_msg("the child answered %zu of %zu bytes (exit status 0x%x)", got, sizeof r, status);
  if (r.status != 0) fail_msg("the child failed: %s", r.message);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  print_message("%s\n", r.message);
  assert_ok(cucore_memcpy_dtoh(dev, h, p, (size_t)N * 4, NULL));
  for (int i = 0; i < N; i++)
    if (h[i] != i * 3 + 12)
      fail_msg("the parent read %d at %d after the child, expected %d", h[i], i, i * 3 + 12);
  print_message(
      "IPC pool: the parent's %d ints reached the child and the child's writes came back: "
      "match\n",
      N);
  assert_ok(cucore_mem_pool_free_async(pool, s, p));
  assert_ok(cucore_stream_synchronize(s));
  assert_ok(cucore_mem_pool_destroy(pool));
  free(h);
  assert_ok(cucore_stream_destroy(s));
  assert_ok(cucore_device_close(dev));
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "--child") == 0) return child_main(atoi(argv[2]));
  if (!cucore_test_have_gpu()) return CUCORE_TEST_SKIP;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(two_processes_share_a_pool),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
