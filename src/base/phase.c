/*
 * phase.c -- the phase table (cucore_phase_get_times): per phase, how often it ran, when it first
 * began, when it last ended and its summed wall time, on CLOCK_BOOTTIME, reported in ms after
 * the process's start (/proc/self/stat field 22, in clock ticks since boot).
 */
#define _GNU_SOURCE
#include "base/phase.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct phase_row {
  int count;
  int64_t first, last, total; /* ns on CLOCK_BOOTTIME; total is a duration */
} phase_row;

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static phase_row table[CUCORE_PHASE_COUNT];

static const char *const phase_names[CUCORE_PHASE_COUNT] = {
    "process_start", "load_libcuda", "load_nvrtc", "load_nvjitlink", "load_nvvm",
    "load_zstd",     "cuinit",       "context",    "cache_lookup",   "compile",
    "cache_store",   "module_load",  "alloc",      "copy_in",        "launch",
    "copy_out",      "report",       "teardown",   "load_nvml"};

int64_t cc_phase_clock(void) {
  struct timespec ts;
  clock_gettime(CLOCK_BOOTTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void cc_phase_span(cucore_phase phase, int64_t t0, int64_t t1) {
  pthread_mutex_lock(&table_lock);
  phase_row *r = &table[phase];
  if (r->count == 0 || t0 < r->first) r->first = t0;
  if (r->count == 0 || t1 > r->last) r->last = t1;
  r->total += t1 - t0;
  r->count++;
  pthread_mutex_unlock(&table_lock);
}

void cc_phase_done(cucore_phase phase, int64_t t0) { cc_phase_span(phase, t0, cc_phase_clock()); }

/* ---- the process's start ------------------------------------------------------------------ */

static pthread_once_t start_once = PTHREAD_ONCE_INIT;
static int64_t start_ns;

/* Field 22 of /proc/self/stat (starttime, clock ticks after boot), or -1. The command name
 * (field 2) may hold spaces and parentheses, so fields are counted after its last ')'. */
static long long read_start_ticks(void) {
  FILE *f = fopen("/proc/self/stat", "re");
  if (!f) return -1;
  char buf[1024];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  char *p = strrchr(buf, ')');
  long long ticks = -1;
  for (int field = 2; p && *p; p++) {
    if (*p != ' ') continue;
    if (++field == 22) {
      if (sscanf(p + 1, "%lld", &ticks) != 1) ticks = -1;
      break;
    }
  }
  return ticks;
}

static void find_start(void) {
  long long ticks = read_start_ticks();
  long hz = sysconf(_SC_CLK_TCK);
  int64_t now = cc_phase_clock();
  start_ns = ticks >= 0 && hz > 0 ? (int64_t)(ticks * (1000000000LL / hz)) : now;
  if (start_ns > now) start_ns = now; /* never a start in the future */
}

static int64_t process_start(void) {
  pthread_once(&start_once, find_start);
  return start_ns;
}

static double to_ms(int64_t t) { return (double)(t - process_start()) / 1e6; }

/* ---- public ------------------------------------------------------------------------------- */

cucore_status cucore_phase_get_times(cucore_phase_time *out) {
  cc_begin();
  CC_CHECK_ARG(out, "cucore_phase_get_times", "out");
  phase_row copy[CUCORE_PHASE_COUNT];
  pthread_mutex_lock(&table_lock);
  memcpy(copy, table, sizeof copy);
  pthread_mutex_unlock(&table_lock);
  for (int i = 0; i < CUCORE_PHASE_COUNT; i++) {
    memset(&out[i], 0, sizeof out[i]);
    if (!copy[i].count) continue;
    out[i].count = copy[i].count;
    out[i].start_ms = to_ms(copy[i].first);
    out[i].end_ms = to_ms(copy[i].last);
    out[i].total_ms = (double)copy[i].total / 1e6;
  }
  return CUCORE_OK;
}

cucore_status cucore_phase_now(double *ms) {
  cc_begin();
  CC_CHECK_ARG(ms, "cucore_phase_now", "ms");
  *ms = to_ms(cc_phase_clock());
  return CUCORE_OK;
}

cucore_status cucore_phase_add(cucore_phase phase, double start_ms, double end_ms) {
  cc_begin();
  if ((unsigned)phase >= CUCORE_PHASE_COUNT)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "cucore_phase_add: phase %d is not a phase (0..%d)",
                   (int)phase, CUCORE_PHASE_COUNT - 1);
  if (!(end_ms >= start_ms))
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "cucore_phase_add: the phase ends (%.3f ms) before it starts (%.3f ms)", end_ms,
                   start_ms);
  int64_t base = process_start();
  cc_phase_span(phase, base + (int64_t)(start_ms * 1e6), base + (int64_t)(end_ms * 1e6));
  return CUCORE_OK;
}

const char *cucore_phase_name(cucore_phase phase) {
  return (unsigned)phase < CUCORE_PHASE_COUNT ? phase_names[phase] : "unknown";
}
