/* nvrtc_scaling.c -- how NVRTC itself scales with parallel compiles (the floor for `cucore tune`'s
 * parallel compiles), linked as a C programmer links it, not through cucore. COUNT distinct small
 * programs (the bench's unrolled axpy with a different UNROLL/block per program) are compiled by
 * JOBS threads of one process, or by JOBS child processes, to a cubin for sm_ARCH (or PTX), and the
 * wall time is printed as one JSON line. Nothing here needs a GPU.
 * With `exec`, each child process is a fresh exec of this program (NVRTC loaded by each, as
 * `cucore tune`'s compile processes load it) instead of a fork of a parent that loaded it.
 * With `zygote`, the parent compiles one program first and forks the children after.
 * Environment: NVRTC_SCALING_SALT (a #define that makes other programs of the same work),
 * NVRTC_SCALING_KERNEL=1|2 (another kernel), NVRTC_SCALING_OPTS (more options, space-separated).
 * usage: bench_raw_nvrtc_scaling threads|procs|exec|zygote JOBS COUNT [ARCH] [cubin|ptx] */
#define _GNU_SOURCE
#include <nvrtc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *const body =
    "extern \"C\" __global__ void axpy_u(const float *x, float *y, int n) {\n"
    "  int base = (blockIdx.x * block_size_x + threadIdx.x) * UNROLL;\n"
    "  #pragma unroll\n"
    "  for (int u = 0; u < UNROLL; u++) {\n"
    "    int i = base + u;\n"
    "    if (i < n) y[i] = 2.0f * x[i] + y[i];\n"
    "  }\n"
    "}\n";

/* NVRTC_SCALING_KERNEL=1 or 2: another kernel of the same size (other work for NVRTC) */
static const char *const bodies[] = {
    "extern \"C\" __global__ void scale_v(float *y, const float *x, float a, int n) {\n"
    "  int i = (blockIdx.x * block_size_x + threadIdx.x) * UNROLL;\n"
    "  #pragma unroll\n"
    "  for (int v = 0; v < UNROLL; v++)\n"
    "    if (i + v < n) y[i + v] = a * x[i + v] - y[i + v] * 0.5f;\n"
    "}\n",
    "extern \"C\" __global__ void sum_sq(const double *x, double *out, int n) {\n"
    "  __shared__ double s[block_size_x];\n"
    "  double acc = 0;\n"
    "  #pragma unroll\n"
    "  for (int u = 0; u < UNROLL; u++) {\n"
    "    int i = (blockIdx.x * block_size_x + threadIdx.x) * UNROLL + u;\n"
    "    if (i < n) acc += x[i] * x[i];\n"
    "  }\n"
    "  s[threadIdx.x] = acc;\n"
    "  __syncthreads();\n"
    "  if (threadIdx.x == 0) { double t = 0; for (int k = 0; k < block_size_x; k++) t += s[k]; "
    "atomicAdd(out, t); }\n"
    "}\n"};

static int count, arch = 90, want_cubin = 1;
static atomic_int next_index;
static atomic_int failures;

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Compiles program `i`; returns 0 when NVRTC produced the code. */
static int compile_one(int i) {
  char src[2048], opt_arch[64];
  const char *salt = getenv("NVRTC_SCALING_SALT"); /* other programs, the same work */
  const char *which = getenv("NVRTC_SCALING_KERNEL");
  int k = which ? atoi(which) : 0;
  snprintf(src, sizeof src, "#define SALT_%s 1\n#define block_size_x %d\n#define UNROLL %d\n%s",
           salt ? salt : "none", 32 * (1 + i % 32), 1 + (i / 32) % 16,
           k == 1 || k == 2 ? bodies[k - 1] : body);
  snprintf(opt_arch, sizeof opt_arch, "-arch=%s_%d", want_cubin ? "sm" : "compute", arch);
  /* NVRTC_SCALING_OPTS: more options, separated by spaces (as another caller would pass) */
  char extra[1024] = "", *opts[17] = {opt_arch}, *save = NULL;
  int n = 1;
  snprintf(extra, sizeof extra, "%s",
           getenv("NVRTC_SCALING_OPTS") ? getenv("NVRTC_SCALING_OPTS") : "");
  for (char *t = strtok_r(extra, " ", &save); t && n < 17; t = strtok_r(NULL, " ", &save))
    opts[n++] = t;
  nvrtcProgram p;
  if (nvrtcCreateProgram(&p, src, "k.cu", 0, NULL, NULL) != NVRTC_SUCCESS) return -1;
  int rc = nvrtcCompileProgram(p, n, (const char *const *)opts) == NVRTC_SUCCESS ? 0 : -1;
  size_t size = 0;
  if (rc == 0)
    rc = (want_cubin ? nvrtcGetCUBINSize(p, &size) : nvrtcGetPTXSize(p, &size)) == NVRTC_SUCCESS &&
                 size > 0
             ? 0
             : -1;
  nvrtcDestroyProgram(&p);
  return rc;
}

static void *worker(void *arg) {
  (void)arg;
  for (int i; (i = atomic_fetch_add(&next_index, 1)) < count;)
    if (compile_one(i) != 0) atomic_fetch_add(&failures, 1);
  return NULL;
}

/* Child `k` of `jobs`: compiles programs k, k + jobs, ...; the failures, at most 255. */
static int run_share(int k, int jobs) {
  int bad = 0;
  for (int i = k; i < count; i += jobs) bad += compile_one(i) != 0;
  return bad > 255 ? 255 : bad;
}

/* Child process `k` of `jobs` runs its share, forked (NVRTC loaded by the parent) or, with
 * `exec_args`, as a fresh exec of this program; exits with the failures. */
static int run_procs(int jobs, char **exec_args) {
  for (int k = 0; k < jobs; k++) {
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0 && exec_args) {
      char kk[16];
      snprintf(kk, sizeof kk, "%d", k);
      exec_args[1] = kk;
      execv("/proc/self/exe", exec_args);
      _exit(127);
    }
    if (pid == 0) _exit(run_share(k, jobs));
  }
  int bad = 0, status;
  while (wait(&status) > 0) bad += WIFEXITED(status) ? WEXITSTATUS(status) : 1;
  return bad;
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: %s threads|procs|exec|zygote JOBS COUNT [ARCH] [cubin|ptx]\n", argv[0]);
    return 2;
  }
  int zygote = strcmp(argv[1], "zygote") == 0, threads = strcmp(argv[1], "threads") == 0;
  int procs = zygote || strcmp(argv[1], "procs") == 0, exec = strcmp(argv[1], "exec") == 0;
  int jobs = atoi(argv[2]);
  count = atoi(argv[3]);
  if (argc > 4) arch = atoi(argv[4]);
  if (argc > 5) want_cubin = strcmp(argv[5], "ptx") != 0;
  if (jobs < 1 || jobs > 256 || count < 1) {
    fprintf(stderr, "%s: expected JOBS 1..256 and COUNT >= 1\n", argv[0]);
    return 2;
  }
  /* An exec'd child of `exec` mode: CHILD_NUMBER JOBS COUNT ARCH TARGET child */
  if (argc > 6 && strcmp(argv[6], "child") == 0) return run_share(atoi(argv[1]), jobs);
  if (!threads && !procs && !exec) {
    fprintf(stderr, "%s: unknown mode `%s` (threads, procs, exec or zygote)\n", argv[0], argv[1]);
    return 2;
  }
  int major, minor;
  nvrtcVersion(&major, &minor); /* loads NVRTC before the clock starts */
  double t0 = now_s();
  int bad = 0;
  char *exec_args[] = {
      argv[0], NULL, argv[2], argv[3], argc > 4 ? argv[4] : "90", argc > 5 ? argv[5] : "cubin",
      "child", NULL};
  /* zygote: one compile before the children fork, inside the timed wall (its cost is the
   * mode's) */
  if (zygote && compile_one(count) != 0) bad++;
  if (procs || exec) {
    bad += run_procs(jobs, exec ? exec_args : NULL);
  } else {
    pthread_t th[256];
    int started = 0;
    for (int k = 0; k < jobs; k++) started += pthread_create(&th[started], NULL, worker, NULL) == 0;
    for (int k = 0; k < started; k++) pthread_join(th[k], NULL);
    bad = atomic_load(&failures);
  }
  double wall = now_s() - t0;
  printf(
      "{\"mode\": \"%s\", \"jobs\": %d, \"count\": %d, \"target\": \"%s\", \"nvrtc\": \"%d.%d\", "
      "\"wall_s\": %.3f, \"per_s\": %.1f, \"failures\": %d}\n",
      zygote  ? "zygote"
      : exec  ? "exec"
      : procs ? "procs"
              : "threads",
      jobs, count, want_cubin ? "cubin" : "ptx", major, minor, wall, count / wall, bad);
  return bad ? 1 : 0;
}
