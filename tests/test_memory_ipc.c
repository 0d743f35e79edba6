/* test_memory_ipc.c -- passing a file descriptor and data between processes over a Unix
 * socket (cucore_ipc_send_fd / cucore_ipc_recv_fd), as IPC of memory pools does: a pipe's
 * descriptor goes to a forked child with a payload, the child writes through it, the parent
 * reads what it wrote. Closed peers and messages without a descriptor are errors. No GPU. */
#include "support.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static void a_descriptor_and_data_reach_a_child(void **state) {
  (void)state;
  int sv[2], pipefd[2];
  assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  assert_int_equal(pipe(pipefd), 0);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) { /* the child: receive the descriptor, answer through it */
    close(sv[0]);
    close(pipefd[0]);
    close(pipefd[1]);
    int fd = -1;
    cucore_ipc_pointer got;
    if (cucore_ipc_recv_fd(sv[1], &fd, &got, sizeof got) != CUCORE_OK) _exit(2);
    if (got.bytes != 12345 || got.data[63] != 0x5a) _exit(3);
    char msg[32];
    int n = snprintf(msg, sizeof msg, "child saw %llu", (unsigned long long)got.bytes);
    if (write(fd, msg, (size_t)n) != n) _exit(4);
    close(fd);
    _exit(0);
  }
  close(sv[1]);
  cucore_ipc_pointer out;
  memset(&out, 0, sizeof out);
  out.bytes = 12345;
  out.data[63] = 0x5a;
  assert_ok(cucore_ipc_send_fd(sv[0], pipefd[1], &out, sizeof out));
  close(pipefd[1]); /* the child holds its own copy now */
  char buf[64] = {0};
  ssize_t n = read(pipefd[0], buf, sizeof buf - 1);
  int status = 0;
  waitpid(pid, &status, 0);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
  assert_true(n > 0);
  assert_string_equal(buf, "child saw 12345");
  close(pipefd[0]);
  close(sv[0]);
}

static void failures_say_what_went_wrong(void **state) {
  (void)state;
  int sv[2];
  assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  /* Data without a descriptor. */
  assert_int_equal(write(sv[0], "x", 1), 1);
  int fd = 7;
  char c;
  assert_status(cucore_ipc_recv_fd(sv[1], &fd, &c, 1), CUCORE_IO_ERROR);
  assert_int_equal(fd, -1);
  assert_contains(cucore_last_error(), "without a file descriptor");
  /* The descriptor arrives but the peer closes before all the data. */
  char part[4] = "abc";
  assert_ok(cucore_ipc_send_fd(sv[0], 0, part, 3));
  close(sv[0]);
  char want[8];
  assert_status(cucore_ipc_recv_fd(sv[1], &fd, want, sizeof want), CUCORE_IO_ERROR);
  assert_contains(cucore_last_error(), "after 3 of 8 bytes");
  assert_int_equal(fd, -1);
  /* A closed peer, bad descriptors, NULL data. */
  assert_status(cucore_ipc_recv_fd(sv[1], &fd, NULL, 0), CUCORE_IO_ERROR);
  assert_contains(cucore_last_error(), "closed the socket");
  assert_status(cucore_ipc_send_fd(-1, 0, NULL, 0), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_ipc_send_fd(sv[1], 0, NULL, 4), CUCORE_INVALID_ARGUMENT);
  int devnull = open("/dev/null", 0);
  cucore_status st = cucore_ipc_send_fd(devnull, 0, NULL, 0); /* not a socket */
  assert_int_equal(CUCORE_CODE(st), CUCORE_IO_ERROR);
  assert_int_equal(cucore_status_source(st), CUCORE_SOURCE_ERRNO);
  assert_int_equal(cucore_status_native(st), ENOTSOCK);
  close(devnull);
  close(sv[1]);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_descriptor_and_data_reach_a_child),
      cmocka_unit_test(failures_say_what_went_wrong),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
