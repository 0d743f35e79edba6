/* cpu_spin.c -- is the machine's CPU itself slower at times, or when many processes run?
 * N child processes run the same loop: integer arithmetic alone, or with MEMMB > 0 random reads
 * over MEMMB MiB of memory each (cache- and TLB-bound, the memory written first). Prints the
 * children's mean and longest seconds and the wall time. Used by scripts/gpu-machine-probe.sh.
 * usage: bench_raw_cpu_spin N ITERATIONS [MEMMB] */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* One child's loop; returns its seconds. */
static double spin(int k, long iters, int memmb) {
  double t0 = now_s();
  uint64_t x = 88172645463325252ull + (uint64_t)k, sum = 0;
  size_t words = (size_t)memmb << 17;
  uint64_t *m = memmb ? malloc(words * sizeof *m) : NULL;
  if (memmb && !m) return -1;
  for (size_t i = 0; i < words; i++) m[i] = i * 2654435761u;
  for (long i = 0; i < iters; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift64 */
    sum += m ? m[x % words] : x;
  }
  free(m);
  volatile uint64_t sink = sum;
  (void)sink;
  return now_s() - t0;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s N ITERATIONS [MEMMB]\n", argv[0]);
    return 2;
  }
  int n = atoi(argv[1]), memmb = argc > 3 ? atoi(argv[3]) : 0;
  long iters = atol(argv[2]);
  int fd[2];
  if (n < 1 || n > 1024 || iters < 1 || memmb < 0) {
    fprintf(stderr, "%s: expected N 1..1024, ITERATIONS >= 1 and MEMMB >= 0\n", argv[0]);
    return 2;
  }
  if (pipe(fd) != 0) return 1;
  double t0 = now_s();
  for (int k = 0; k < n; k++) {
    pid_t pid = fork();
    if (pid < 0) return 1;
    if (pid == 0) {
      close(fd[0]);
      double s = spin(k, iters, memmb);
      _exit(s >= 0 && write(fd[1], &s, sizeof s) == sizeof s ? 0 : 1);
    }
  }
  close(fd[1]); /* a child that ended without writing ends the reads below */
  double longest = 0, total = 0;
  int got = 0, failed = 0, status;
  for (double s; got < n && read(fd[0], &s, sizeof s) == sizeof s; got++) {
    total += s;
    if (s > longest) longest = s;
  }
  while (wait(&status) > 0) failed += !WIFEXITED(status) || WEXITSTATUS(status) != 0;
  if (got < n || failed) {
    fprintf(stderr, "%s: %d of %d children failed (out of memory for %d MiB?)\n", argv[0],
            failed ? failed : n - got, n, memmb);
    return 1;
  }
  printf(
      "{\"procs\": %d, \"mem_mib\": %d, \"mean_s\": %.3f, \"longest_s\": %.3f, \"wall_s\": %.3f}\n",
      n, memmb, total / n, longest, now_s() - t0);
  return 0;
}
