/* tune_simulate.c -- search strategies without a GPU: a recorded space (a brute-force tune,
 * here bench/spaces/h100_gemm.t4.json.gz, or the Kernel Tuner cache or T4 file named on the
 * command line) read, each strategy replayed over it under a budget of 100 evaluations with
 * the same seed, and the best each found against the recorded optimum; then a live space
 * (never listed) sampled uniformly and a configuration's neighbours found.
 *   usage: example_tune_simulate [RECORDING]   (run from the repository's root by default) */
#include <math.h>
#include <string.h>

#include "common.h"

/* The file's bytes (malloc'd), or NULL. */
static char *slurp(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *data = NULL;
  size_t cap = 0, n = 0;
  for (;;) {
    if (n == cap) {
      char *grown = realloc(data, cap = cap ? 2 * cap : 1 << 20);
      if (!grown) break;
      data = grown;
    }
    size_t got = fread(data + n, 1, cap - n, f);
    n += got;
    if (got == 0) break;
  }
  fclose(f);
  *size = n;
  return data;
}

static void replay(const char *path) {
  size_t size = 0;
  char *data = slurp(path, &size);
  if (!data) {
    printf("tune_simulate: no recording at %s (run from the repository's root, or name one)\n",
           path);
    return;
  }
  cucore_tune_recording *rec = NULL;
  CHECK(cucore_tune_recording_read(data, size, path, &rec));
  free(data);
  cucore_tune_recording_info info;
  CHECK(cucore_tune_recording_get_info(rec, &info));
  printf("%s: %zu configurations recorded, %zu with a time, optimum %.5f ms (%zu within 5 %%)\n",
         path, info.configs, info.valid, info.optimum_ms, info.near_optimum);
  double curve[100];
  for (int k = 0; k < CUCORE_TUNE_STRATEGY_COUNT; k++) {
    const char *name = NULL;
    cucore_tune_simulation sim;
    CHECK(cucore_tune_strategy_get_name((cucore_tune_strategy)k, &name));
    CHECK(cucore_tune_simulate(rec, (cucore_tune_strategy)k, NULL, 100, 1, 1, curve, NULL, &sim));
    int at = 0; /* the evaluation that found the best */
    while (at < (int)sim.evals && curve[at] != sim.best_ms) at++;
    printf("  %-8s %3llu evaluations: best %.5f ms = %.3f of the optimum, found at %d, "
           "simulated tuning time %.1f s\n",
           name, (unsigned long long)sim.evals, sim.best_ms, sim.ratio, at + 1, sim.clock_ms / 1e3);
    if (sim.evals != 100 || !(sim.ratio > 0 && sim.ratio <= 1)) {
      fprintf(stderr, "tune_simulate: %s used %llu of 100 evaluations or found nothing\n", name,
              (unsigned long long)sim.evals);
      exit(1);
    }
  }
  CHECK(cucore_tune_recording_destroy(rec));
}

/* A live space: 8 x 8 x 4 values, a restriction; sampled and a neighbourhood, never listed. */
static void live_space(void) {
  static const char *const xs[] = {"1", "2", "3", "4", "5", "6", "7", "8"};
  static const char *const us[] = {"1", "2", "4", "8"};
  cucore_tune_space *s = NULL;
  CHECK(cucore_tune_space_create(&s));
  CHECK(cucore_tune_space_add_param(s, "tile_x", xs, 8, CUCORE_TUNE_PARAM_DEFINE));
  CHECK(cucore_tune_space_add_param(s, "tile_y", xs, 8, CUCORE_TUNE_PARAM_DEFINE));
  CHECK(cucore_tune_space_add_param(s, "unroll", us, 4, CUCORE_TUNE_PARAM_DEFINE));
  CHECK(cucore_tune_space_restrict(s, "tile_x * tile_y <= 16"));
  uint64_t pick[4];
  CHECK(cucore_tune_space_sample(s, 42, 4, pick));
  printf("a live space, sampled: ");
  for (int i = 0; i < 4; i++) {
    char text[128];
    size_t needed = 0;
    CHECK(cucore_tune_space_get_config_text(s, pick[i], CUCORE_TUNE_TEXT_PARAMS, text, sizeof text,
                                            &needed));
    if (needed >= sizeof text) { /* a text is never printed cut */
      fprintf(stderr, "tune_simulate: a configuration's text needs %zu bytes\n", needed + 1);
      exit(1);
    }
    printf("%s[%s]", i ? ", " : "", text);
  }
  uint64_t near[32];
  size_t n = 0;
  CHECK(
      cucore_tune_space_get_neighbours(s, pick[0], CUCORE_TUNE_NEIGHBOURS_ADJACENT, near, 32, &n));
  printf("\n  the first has %zu runnable adjacent neighbours\n", n);
  CHECK(cucore_tune_space_destroy(s));
}

int main(int argc, char **argv) {
  replay(argc > 1 ? argv[1] : "bench/spaces/h100_gemm.t4.json.gz");
  live_space();
  return 0;
}
