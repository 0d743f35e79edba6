/* gpu_child.h -- GPU tests that need a second process: this binary again (fork, then exec at
 * once: CUDA does not survive a fork), as `NAME --child FD` with one end of a socket pair. */
#ifndef CUCORE_GPU_CHILD_H
#define CUCORE_GPU_CHILD_H

#include "support.h"

#include <stdio.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

/* Starts the child; *sock is the parent's end. Fails the test when it cannot. */
static inline pid_t gpu_child_start(const char *name, int *sock) {
  int sv[2];
  assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  char arg[16];
  snprintf(arg, sizeof arg, "%d", sv[1]);
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    close(sv[0]);
    execl("/proc/self/exe", name, "--child", arg, (char *)NULL);
    _exit(127);
  }
  close(sv[1]);
  *sock = sv[0];
  return pid;
}

/* Reads the child's final answer (`n` bytes: "" when all went well, else what failed), waits
 * for it and closes the socket; fails the test with the answer and the exit status. */
static inline void gpu_child_finish(pid_t pid, int sock, char *msg, size_t n) {
  snprintf(msg, n, "(no answer)");
  size_t got = 0;
  while (got < n) {
    ssize_t r = read(sock, msg + got, n - got);
    if (r <= 0) break;
    got += (size_t)r;
  }
  int ws = 0;
  waitpid(pid, &ws, 0);
  close(sock);
  if (got != n || msg[0] || !WIFEXITED(ws) || WEXITSTATUS(ws) != 0)
    fail_msg("the child: %s (exit status 0x%x)", got == n ? msg : "(no answer)", ws);
}

#endif
