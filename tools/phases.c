/* phases.c -- every verb's --timings and the "phases" object of `run --json` and `tune --json`:
 * the library's phase table (cucore_phase_get_times) with the command's own phases added
 * (process start to main, allocations, copies, the launch, the report, teardown), in the
 * order they began. */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

long long main_boot_ns;

void phases_mark_main(void) {
  struct timespec ts;
  clock_gettime(CLOCK_BOOTTIME, &ts);
  main_boot_ns = (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

double phases_now(void) {
  double ms = 0;
  cucore_phase_now(&ms);
  return ms;
}

void phases_add(cucore_phase phase, double start_ms) {
  cucore_phase_add(phase, start_ms, phases_now());
}

/* Process start to main: the clock at main (phases_mark_main) on the library's time line. */
void phases_mark_process_start(void) {
  if (!main_boot_ns) return;
  struct timespec ts;
  clock_gettime(CLOCK_BOOTTIME, &ts);
  double now = phases_now();
  long long ago = (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec - main_boot_ns;
  double at_main = now - (double)ago / 1e6;
  cucore_phase_add(CUCORE_PHASE_PROCESS_START, 0, at_main > 0 ? at_main : 0);
}

typedef struct ran {
  int phase;
  cucore_phase_time t;
} ran;

static int by_start(const void *a, const void *b) {
  const ran *x = a, *y = b;
  if (x->t.start_ms != y->t.start_ms) return x->t.start_ms < y->t.start_ms ? -1 : 1;
  return x->phase - y->phase;
}

/* The phases that ran, by their start; returns how many. */
static int phases_ran(ran out[CUCORE_PHASE_COUNT]) {
  cucore_phase_time all[CUCORE_PHASE_COUNT];
  if (cucore_phase_get_times(all) != CUCORE_OK) return 0;
  int n = 0;
  for (int i = 0; i < CUCORE_PHASE_COUNT; i++)
    if (all[i].count) out[n++] = (ran){i, all[i]};
  qsort(out, (size_t)n, sizeof *out, by_start);
  return n;
}

void phases_json(json_out *j) {
  ran r[CUCORE_PHASE_COUNT];
  int n = phases_ran(r);
  json_begin_object(j, "phases");
  for (int i = 0; i < n; i++) {
    json_begin_object(j, cucore_phase_name((cucore_phase)r[i].phase));
    json_double(j, "start_ms", r[i].t.start_ms);
    json_double(j, "ms", r[i].t.total_ms);
    json_int(j, "count", r[i].t.count);
    json_end_object(j);
  }
  json_end_object(j);
}

void phases_print_timings(int asked) {
  if (!asked) return;
  fflush(stdout);
  phases_print(stderr);
}

void phases_print(FILE *f) {
  ran r[CUCORE_PHASE_COUNT];
  int n = phases_ran(r);
  double now = phases_now();
  long hz = sysconf(_SC_CLK_TCK);
  fprintf(f,
          "phase timings (wall clock, ms after the process started; the kernel gives the "
          "start to a clock tick, %.0f ms):\n",
          hz > 0 ? 1000.0 / (double)hz : 10.0);
  fprintf(f, "  %-16s %10s %10s %6s\n", "phase", "start", "took", "runs");
  int shown[CUCORE_PHASE_COUNT] = {0};
  for (int i = 0; i < n; i++) {
    fprintf(f, "  %-16s %10.3f %10.3f %6d\n", cucore_phase_name((cucore_phase)r[i].phase),
            r[i].t.start_ms, r[i].t.total_ms, r[i].t.count);
    shown[r[i].phase] = 1;
  }
  fprintf(f, "  %-16s %10.3f\n", "now", now);
  fprintf(f, "  not needed:");
  int none = 1;
  for (int p = 0; p < CUCORE_PHASE_COUNT; p++)
    if (!shown[p]) {
      fprintf(f, " %s", cucore_phase_name((cucore_phase)p));
      none = 0;
    }
  fprintf(f, "%s\n", none ? " (every phase ran)" : "");
}
