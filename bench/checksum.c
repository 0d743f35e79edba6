/* checksum.c -- how fast the compile cache's entry checksum (XXH3_64bits, cache_entry.c) runs.
 *
 * Prints GB/s and the time for a 1.5 MB entry (the size the entry comment quotes), the median of
 * ROUNDS rounds, at whatever optimisation the build uses (the default is RelWithDebInfo, -O2).
 * Usage: bench_checksum [bytes] */
#include <stdio.h>
#include <stdlib.h>

#include "bench_util.h"
#include "compile/cache.h"

#define ROUNDS 21

static volatile uint64_t g_sink;

int main(int argc, char **argv) {
  size_t n = argc > 1 ? (size_t)strtoull(argv[1], NULL, 10) : 1536u * 1024u;
  if (n == 0) n = 1;
  unsigned char *buf = malloc(n);
  if (!buf) return 1;
  for (size_t i = 0; i < n; i++) buf[i] = (unsigned char)(i * 131u + (i >> 9));
  int reps = (int)(64u * 1024u * 1024u / n) + 1; /* about 64 MB hashed per round */
  double per[ROUNDS];
  for (int r = 0; r < ROUNDS; r++) {
    uint64_t sum = 0;
    double t0 = bench_now_ns();
    for (int i = 0; i < reps; i++) sum += cc_cache_checksum(buf, n);
    per[r] = (bench_now_ns() - t0) / reps;
    g_sink = sum;
  }
  double ns = bench_median(per, ROUNDS);
  printf("cache entry checksum (XXH3_64bits): %zu bytes in %.3f ms, %.2f GB/s (median of %d)\n", n,
         ns / 1e6, n / ns, ROUNDS);
  free(buf);
  return 0;
}
