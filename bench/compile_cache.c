/*
 * compile_cache.c -- what the compile cache saves: a cold NVRTC compile against a hit on disk
 * (in a new process, and in this one) and a hit in the in-process layer, for a small kernel
 * and a large file (CUB block reduce and scan, 16 instantiations). Medians of several runs.
 * NVRTC needs no GPU, so this runs anywhere the toolkit is installed.
 *   usage: bench_compile_cache [runs_small] [runs_large]
 * New processes are this program re-executed with --child; each child times one compile
 * (program create + compile + destroy) and prints microseconds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "compile/cache.h" /* cc_cache_memory_clear: reach the disk layer within one process */

static const char small_src[] =
    "extern \"C\" __global__ void saxpy(float a, const float *x, float *y, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = a * x[i] + y[i];\n"
    "}\n";

static char *large_src(void) {
  static const char *const types[] = {"float", "double", "int", "unsigned"};
  static const int blocks[] = {64, 128, 256, 512};
  size_t cap = 16384, len = 0;
  char *s = malloc(cap);
  if (!s) exit(1);
  len += (size_t)snprintf(s + len, cap - len,
                          "#include <cub/block/block_reduce.cuh>\n"
                          "#include <cub/block/block_scan.cuh>\n"
                          "template <typename T, int BLOCK>\n"
                          "__global__ void reduce_scan(const T *in, T *out, T *scanned, int n) {\n"
                          "  using Reduce = cub::BlockReduce<T, BLOCK>;\n"
                          "  using Scan = cub::BlockScan<T, BLOCK>;\n"
                          "  __shared__ typename Reduce::TempStorage rt;\n"
                          "  __shared__ typename Scan::TempStorage st;\n"
                          "  int i = blockIdx.x * BLOCK + threadIdx.x;\n"
                          "  T v = i < n ? in[i] : T(0);\n"
                          "  T sum = Reduce(rt).Sum(v);\n"
                          "  if (threadIdx.x == 0) out[blockIdx.x] = sum;\n"
                          "  __syncthreads();\n"
                          "  T pre;\n"
                          "  Scan(st).ExclusiveSum(v, pre);\n"
                          "  if (i < n) scanned[i] = pre;\n"
                          "}\n");
  for (int t = 0; t < 4; t++)
    for (int b = 0; b < 4; b++)
      len += (size_t)snprintf(s + len, cap - len,
                              "template __global__ void reduce_scan<%s, %d>(const %s *, %s *, "
                              "%s *, int);\n",
                              types[t], blocks[b], types[t], types[t], types[t]);
  return s;
}

/* One timed compile; *result is the cache's answer. Exits on failure. */
static double timed_compile(const char *src, int cache, cucore_cache_result *result,
                            size_t *code_size) {
  double t0 = bench_now_us();
  cucore_options *o = NULL;
  cucore_program *p = NULL;
  cucore_object *obj = NULL;
  cucore_status st = cucore_options_create(&o);
  if (st == CUCORE_OK) st = cucore_options_set_string(o, CUCORE_OPT_ARCH, "sm_90");
  if (st == CUCORE_OK) st = cucore_program_create(CUCORE_CODE_CUDA_CPP, src, 0, "bench.cu", o, &p);
  if (st == CUCORE_OK && !cache) st = cucore_program_set_cache(p, 0);
  if (st == CUCORE_OK) st = cucore_program_compile(p, CUCORE_CODE_CUBIN, &obj);
  if (st != CUCORE_OK) {
    fprintf(stderr, "bench_compile_cache: compile failed: %s\n", cucore_last_error());
    exit(1);
  }
  cucore_cache_info info;
  cucore_program_get_cache_info(p, &info);
  if (result) *result = info.result;
  if (code_size) cucore_object_get_code(obj, NULL, NULL, code_size);
  cucore_program_destroy(p);
  cucore_options_destroy(o);
  cucore_object_destroy(obj);
  return bench_now_us() - t0;
}

/* Child: one compile in a fresh process. Prints "<microseconds> <result>". */
static int child(const char *which, int cache) {
  char *src = strcmp(which, "large") == 0 ? large_src() : strdup(small_src);
  cucore_cache_result r;
  double us = timed_compile(src, cache, &r, NULL);
  printf("%.1f %s\n", us, cucore_cache_result_name(r));
  free(src);
  return 0;
}

/* Runs this program with --child and returns the microseconds it printed. */
static double in_new_process(const char *self, const char *which, int cache,
                             cucore_cache_result want) {
  int fds[2];
  if (pipe(fds) != 0) exit(1);
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 1);
    close(fds[0]);
    close(fds[1]);
    execl(self, self, "--child", which, cache ? "cached" : "uncached", (char *)NULL);
    _exit(127);
  }
  close(fds[1]);
  char buf[256] = "";
  ssize_t n = read(fds[0], buf, sizeof buf - 1);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  buf[n > 0 ? n : 0] = '\0';
  double us = 0;
  char result[64] = "";
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || sscanf(buf, "%lf %63s", &us, result) != 2) {
    fprintf(stderr, "bench_compile_cache: child failed: %s\n", buf);
    exit(1);
  }
  if (strcmp(result, cucore_cache_result_name(want)) != 0) {
    fprintf(stderr, "bench_compile_cache: child got %s, expected %s\n", result,
            cucore_cache_result_name(want));
    exit(1);
  }
  return us;
}

typedef struct row {
  const char *name;
  size_t src_bytes, code_bytes;
  double cold_new, cold_in, disk_new, disk_in, memory;
} row;

static void measure(const char *self, const char *which, const char *src, int runs, row *r) {
  double *v = calloc((size_t)runs, sizeof *v);
  cucore_cache_result res;
  r->name = which;
  r->src_bytes = strlen(src);
  /* Cold, in a new process: loading NVRTC is part of a program's first compile. */
  for (int i = 0; i < runs; i++) v[i] = in_new_process(self, which, 0, CUCORE_CACHE_DISABLED);
  r->cold_new = bench_median(v, runs);
  /* Cold, in this process, NVRTC already loaded: the compile alone. */
  timed_compile(src, 0, NULL, NULL);
  for (int i = 0; i < runs; i++) v[i] = timed_compile(src, 0, NULL, &r->code_bytes);
  r->cold_in = bench_median(v, runs);
  /* Store the entry once, then hits. */
  cucore_cache_clear(NULL, NULL);
  timed_compile(src, 1, &res, NULL);
  if (res != CUCORE_CACHE_MISS) {
    fprintf(stderr, "bench_compile_cache: first cached compile was %s, not a miss\n",
            cucore_cache_result_name(res));
    exit(1);
  }
  int hits = runs < 9 ? 9 : runs;
  double *h = calloc((size_t)hits * 20, sizeof *h);
  for (int i = 0; i < hits; i++) h[i] = in_new_process(self, which, 1, CUCORE_CACHE_HIT_DISK);
  r->disk_new = bench_median(h, hits);
  for (int i = 0; i < hits * 20; i++) {
    cc_cache_memory_clear();
    h[i] = timed_compile(src, 1, &res, NULL);
    if (res != CUCORE_CACHE_HIT_DISK) exit(1);
  }
  r->disk_in = bench_median(h, hits * 20);
  timed_compile(src, 1, &res, NULL);
  for (int i = 0; i < hits * 20; i++) {
    h[i] = timed_compile(src, 1, &res, NULL);
    if (res != CUCORE_CACHE_HIT_MEMORY) exit(1);
  }
  r->memory = bench_median(h, hits * 20);
  free(h);
  free(v);
}

static void fmt_time(double us, char *buf, size_t n) {
  if (us >= 1e6)
    snprintf(buf, n, "%.2f s", us / 1e6);
  else if (us >= 1e3)
    snprintf(buf, n, "%.1f ms", us / 1e3);
  else
    snprintf(buf, n, "%.1f us", us);
}

int main(int argc, char **argv) {
  if (argc == 4 && strcmp(argv[1], "--child") == 0)
    return child(argv[2], strcmp(argv[3], "cached") == 0);
  int runs_small = argc > 1 ? atoi(argv[1]) : 9;
  int runs_large = argc > 2 ? atoi(argv[2]) : 3;
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return 1;
  self[n] = '\0';
  char dir[] = "/tmp/cucore-bench-cache-XXXXXX";
  if (!mkdtemp(dir)) return 1;
  setenv("CUCORE_CACHE_DIR", dir, 1); /* children inherit it */
  unsetenv("CUCORE_CACHE_DISABLE");

  row rows[2];
  char *large = large_src();
  measure(self, "small", small_src, runs_small, &rows[0]);
  measure(self, "large", large, runs_large, &rows[1]);
  free(large);
  cucore_cache_clear(NULL, NULL);
  rmdir(dir);

  printf("compile cache, sm_90 cubin; medians (cold: %d small / %d large runs; hits: more)\n",
         runs_small, runs_large);
  printf("%-6s %8s %9s | %12s %12s | %12s %12s %12s | %9s %9s\n", "source", "src B", "cubin B",
         "cold newproc", "cold in-proc", "disk newproc", "disk in-proc", "memory hit", "cold/disk",
         "cold/mem");
  for (int i = 0; i < 2; i++) {
    row *r = &rows[i];
    char a[32], b[32], c[32], d[32], e[32];
    fmt_time(r->cold_new, a, sizeof a);
    fmt_time(r->cold_in, b, sizeof b);
    fmt_time(r->disk_new, c, sizeof c);
    fmt_time(r->disk_in, d, sizeof d);
    fmt_time(r->memory, e, sizeof e);
    printf("%-6s %8zu %9zu | %12s %12s | %12s %12s %12s | %8.0fx %8.0fx\n", r->name, r->src_bytes,
           r->code_bytes, a, b, c, d, e, r->cold_in / r->disk_new, r->cold_in / r->memory);
  }
  printf("cold/disk: the in-process cold compile (NVRTC already loaded) over the disk hit in a "
         "new process;\ncold/mem: the same over the in-process hit. A disk hit in a new process "
         "does not load NVRTC.\n");
  return 0;
}
