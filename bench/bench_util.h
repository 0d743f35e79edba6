/* bench_util.h -- what every benchmark shares: a monotonic clock, the median, its command-line
 * numbers, the no-GPU exit, and exits on a failed call. */
#ifndef CUCORE_BENCH_UTIL_H
#define CUCORE_BENCH_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cucore.h"

/* Nanoseconds on the monotonic clock. */
static inline double bench_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static inline double bench_now_us(void) { return bench_now_ns() / 1e3; }

static inline int bench_cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* The median of v[0..n) (sorts v in place). */
static inline double bench_median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* argv[i] as a number in 1..max (max 0: no upper bound); `def` when it is absent or outside. */
/* Every benchmark target ends its line the same way, so scripts/gpu-check.sh counts them all
 * (`: PASS` / `: MISS`): "within 20 %: PASS" for an overhead, ">= 100x: MISS" for a ratio. */
static inline const char *bench_verdict(int met) { return met ? "PASS" : "MISS"; }

static inline int bench_arg(int argc, char **argv, int i, int def, int max) {
  int v = argc > i ? atoi(argv[i]) : def;
  return v < 1 || (max > 0 && v > max) ? def : v;
}

/* 1, after saying "NAME: no GPU (why); nothing measured", when the driver lists no device. */
static inline int bench_no_gpu(const char *name) {
  int n = 0;
  if (cucore_device_get_count(&n) == CUCORE_OK && n > 0) return 0;
  printf("%s: no GPU (%s); nothing measured\n", name, cucore_last_error());
  return 1;
}

/* Exits with the call and cucore's message when a cucore call fails. */
#define CHECK(x)                                            \
  do {                                                      \
    cucore_status st_ = (x);                                \
    if (st_ != CUCORE_OK) {                                 \
      fprintf(stderr, "%s: %s\n", #x, cucore_last_error()); \
      exit(1);                                              \
    }                                                       \
  } while (0)

/* Exits with the call and its CUresult when a raw driver call fails (driver types needed). */
#define CU(x)                                            \
  do {                                                   \
    CUresult r_ = (x);                                   \
    if (r_ != CUDA_SUCCESS) {                            \
      fprintf(stderr, "%s: CUresult %d\n", #x, (int)r_); \
      exit(2);                                           \
    }                                                    \
  } while (0)

#endif
