/*
 * pch.c -- what NVRTC's precompiled headers save: compiles of kernels that share a large
 * header (CUB's block reduce and scan and <cuda/std/complex>), each kernel a different body, to
 * PTX for sm_90, without a PCH, with an automatic PCH (--pch in a temporary --pch-dir: the
 * first compile makes it, the others use it) and with an explicit one (--create-pch once, then
 * --use-pch). Medians of the compiles after the first. The compile cache is off (every compile
 * runs NVRTC). NVRTC needs no GPU, so this runs anywhere the toolkit is installed.
 *   usage: bench_pch [runs]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"

/* Kernel `n`: the shared header, then a body of its own. */
static char *source(int n) {
  char *s = NULL;
  if (asprintf(&s,
               "#include <cub/block/block_reduce.cuh>\n"
               "#include <cub/block/block_scan.cuh>\n"
               "#include <cuda/std/complex>\n"
               "extern \"C\" __global__ void k%d(const float *in, float *out) {\n"
               "  using Reduce = cub::BlockReduce<float, 128>;\n"
               "  __shared__ typename Reduce::TempStorage t;\n"
               "  cuda::std::complex<float> c(in[threadIdx.x], %d.0f);\n"
               "  float sum = Reduce(t).Sum(cuda::std::abs(c));\n"
               "  if (threadIdx.x == 0) out[blockIdx.x] = sum;\n"
               "}\n",
               n, n) < 0)
    exit(1);
  return s;
}

/* The process's CPU time in microseconds (NVRTC compiles on the calling thread, and a loaded
 * machine stretches the wall time). */
static double cpu_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* One compile of kernel `n` with the option words `words` (NULL-terminated); wall microseconds,
 * the CPU's in *cpu. *pch is NVRTC's PCH status after it. */
static double timed(int n, const char *const *words, cucore_pch_status *pch, double *cpu) {
  cucore_options *o = NULL;
  CHECK(cucore_options_create(&o));
  CHECK(cucore_options_set_string(o, CUCORE_OPT_ARCH, "sm_90"));
  for (int i = 0; words[i]; i++) {
    int used = 0;
    CHECK(cucore_options_parse(o, words[i], NULL, &used));
  }
  char *src = source(n);
  cucore_program *p = NULL;
  cucore_object *obj = NULL;
  double t0 = bench_now_us(), c0 = cpu_us();
  CHECK(cucore_program_create(CUCORE_CODE_CUDA_CPP, src, 0, "k.cu", o, &p));
  CHECK(cucore_program_set_cache(p, 0));
  CHECK(cucore_program_compile(p, CUCORE_CODE_PTX, &obj));
  double us = bench_now_us() - t0;
  *cpu = cpu_us() - c0;
  CHECK(cucore_program_get_pch_status(p, pch));
  cucore_object_destroy(obj);
  cucore_program_destroy(p);
  cucore_options_destroy(o);
  free(src);
  return us;
}

/* The first compile with `first` words, then `runs` with `rest`; the median CPU time of the
 * rest (ms). */
static double series(const char *what, int base, int runs, const char *const *first,
                     const char *const *rest) {
  cucore_pch_status pch;
  double cpu = 0, t = timed(base, first, &pch, &cpu);
  printf("  %-24s first compile      %8.1f ms wall %8.1f ms CPU (PCH %s)\n", what, t / 1e3,
         cpu / 1e3, cucore_pch_status_name(pch));
  double *v = calloc((size_t)runs * 2, sizeof *v);
  if (!v) exit(1);
  for (int i = 0; i < runs; i++) v[i] = timed(base + 1 + i, rest, &pch, &v[runs + i]);
  double wall = bench_median(v, runs) / 1e3, med = bench_median(v + runs, runs) / 1e3;
  printf("  %-24s then, median of %d %8.1f ms wall %8.1f ms CPU (PCH %s)\n", what, runs, wall, med,
         cucore_pch_status_name(pch));
  free(v);
  return med;
}

int main(int argc, char **argv) {
  int runs = bench_arg(argc, argv, 1, 5, 100);
  char dir[] = "/tmp/cucore-bench-pch-XXXXXX";
  if (!mkdtemp(dir)) return 1;
  /* sized from the template, so no text is cut */
  char pch_dir[sizeof dir + 16], create[sizeof dir + 32], use[sizeof dir + 32];
  snprintf(pch_dir, sizeof pch_dir, "--pch-dir=%s", dir);
  snprintf(create, sizeof create, "--create-pch=%s/shared.pch", dir);
  snprintf(use, sizeof use, "--use-pch=%s/shared.pch", dir);
  const char *const none[] = {NULL};
  const char *const autopch[] = {"--pch", pch_dir, NULL};
  const char *const made[] = {create, NULL}, *const used[] = {use, NULL};
  printf("NVRTC compiles of kernels sharing CUB + <cuda/std/complex>, to PTX (sm_90):\n");
  double plain = series("no PCH", 0, runs, none, none);
  double autom = series("automatic PCH (--pch)", 100, runs, autopch, autopch);
  double expl = series("--create-pch, --use-pch", 200, runs, made, used);
  printf("PCH: compiles after the first %.2fx faster (automatic), %.2fx (explicit) in CPU time\n",
         plain / autom, plain / expl);
  char rm[sizeof dir + 16];
  snprintf(rm, sizeof rm, "rm -rf %s", dir);
  return system(rm) == 0 ? 0 : 1;
}
