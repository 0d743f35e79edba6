/* checkpoint.c -- checkpoint and restore another CUDA process by its pid.
 *
 *   example_checkpoint PID [TIMEOUT_MS]   locks PID, checkpoints it (its GPU memory moves to
 *                                         the host), restores it and unlocks it, printing its
 *                                         state after each step
 *   example_checkpoint                    does this to a child it starts, which keeps a
 *                                         counter in device memory and checks it survived
 *
 * The driver must be 12.8 or newer (else CUCORE_DRIVER_TOO_OLD says so). Between checkpoint
 * and restore a tool such as CRIU would save the process; this example only shows the calls. */
#define _GNU_SOURCE
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

static const char *names[] = {"running", "locked", "checkpointed", "failed"};

static void show(int pid, const char *after) {
  cucore_process_state s;
  CHECK(cucore_checkpoint_get_state(pid, &s));
  printf("checkpoint: after %-10s process %d is %s\n", after, pid,
         (unsigned)s < 4 ? names[s] : "?");
}

static void cycle(int pid, unsigned timeout_ms) {
  cucore_process_state s;
  if (CUCORE_CODE(cucore_checkpoint_get_state(pid, &s)) == CUCORE_DRIVER_TOO_OLD) {
    printf("checkpoint: %s; nothing to run\n", cucore_last_error());
    exit(0); /* a child waiting for us sees its pipe close */
  }
  show(pid, "nothing:");
  CHECK(cucore_checkpoint_lock(pid, timeout_ms));
  show(pid, "lock:");
  CHECK(cucore_checkpoint_process(pid));
  show(pid, "checkpoint:");
  CHECK(cucore_checkpoint_restore(pid, NULL, 0));
  show(pid, "restore:");
  CHECK(cucore_checkpoint_unlock(pid));
  show(pid, "unlock:");
}

/* The child: a value in device memory, checked after the parent's round trip. */
static int child(int rd, int wr) {
  cucore_device *dev = NULL;
  CHECK(cucore_device_open(0, &dev));
  cucore_devptr p = 0;
  unsigned v = 0x600dcafe, back = 0;
  CHECK(cucore_mem_alloc(dev, 1 << 20, &p));
  CHECK(cucore_memcpy_htod(dev, p, &v, sizeof v, NULL));
  char c = 'r';
  if (write(wr, &c, 1) != 1 || read(rd, &c, 1) != 1) return 1;
  CHECK(cucore_memcpy_dtoh(dev, &back, p, sizeof back, NULL));
  printf("checkpoint: child %d reads 0x%x after restore (wrote 0x%x)\n", (int)getpid(), back, v);
  cucore_mem_free(dev, p);
  cucore_device_close(dev);
  return back != v;
}

int main(int argc, char **argv) {
  if (argc >= 2) {
    cycle(atoi(argv[1]), argc >= 3 ? (unsigned)atoi(argv[2]) : 10000);
    return 0;
  }
  if (getenv("CUCORE_CHECKPOINT_CHILD")) return child(3, 4);
  int n = 0;
  if (cucore_device_get_count(&n) != CUCORE_OK || n == 0) {
    printf("checkpoint: no GPU here; nothing to run\n");
    return 0;
  }
  int to_child[2], from_child[2];
  if (pipe(to_child) || pipe(from_child)) return 1;
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) { /* a fresh process: CUDA does not survive fork */
    dup2(to_child[0], 3);
    dup2(from_child[1], 4);
    setenv("CUCORE_CHECKPOINT_CHILD", "1", 1);
    execl("/proc/self/exe", argv[0], (char *)NULL);
    _exit(127);
  }
  char c = 0;
  if (read(from_child[0], &c, 1) != 1) return 1;
  cycle(pid, 10000);
  c = 'g';
  if (write(to_child[1], &c, 1) != 1) return 1;
  int ws = 0;
  waitpid(pid, &ws, 0);
  return WIFEXITED(ws) ? WEXITSTATUS(ws) : 1;
}
