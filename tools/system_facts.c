/* system_facts.c -- `cucore devices`' live state of a GPU from NVML: clocks, temperature,
 * power, utilisation and why the clocks are held down (see system_facts.h). */
#include "system_facts.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* "1755 MHz" or "unknown". */
static const char *mhz(char *buf, size_t n, int v) {
  if (v < 0)
    snprintf(buf, n, "unknown");
  else
    snprintf(buf, n, "%d MHz", v);
  return buf;
}

static const char *watts(char *buf, size_t n, int mw) {
  if (mw < 0)
    snprintf(buf, n, "unknown");
  else
    snprintf(buf, n, "%.1f W", mw / 1000.0);
  return buf;
}

#define PREFETCH_MAX 64
static cucore_system_info prefetched[PREFETCH_MAX]; /* system_facts_start_all's thread */
static int nprefetched;

/* Device `ordinal`'s facts: the prefetched ones of its UUID, else asked now. */
static cucore_status facts_of(int ordinal, const char *uuid, cucore_system_info *s) {
  system_facts_join();
  for (int i = 0; uuid && uuid[0] && i < nprefetched; i++)
    if (strncmp(prefetched[i].uuid, "GPU-", 4) == 0 && strcmp(prefetched[i].uuid + 4, uuid) == 0) {
      *s = prefetched[i];
      s->ordinal = ordinal;
      return CUCORE_OK;
    }
  return cucore_system_get_device_info(ordinal, s);
}

void system_facts_text(int ordinal, const char *uuid) {
  cucore_system_info s;
  if (facts_of(ordinal, uuid, &s) != CUCORE_OK) {
    printf("  live state           unknown: %s\n", cucore_last_error());
    return;
  }
  char a[32], b[32], c[32], d[32], reasons[256] = "unknown";
  printf("  clocks now           SM %s (max %s), memory %s (max %s)\n",
         mhz(a, sizeof a, s.sm_clock_mhz), mhz(b, sizeof b, s.sm_clock_max_mhz),
         mhz(c, sizeof c, s.mem_clock_mhz), mhz(d, sizeof d, s.mem_clock_max_mhz));
  if (s.temperature_c >= 0)
    printf("  temperature          %d C\n", s.temperature_c);
  else
    printf("  temperature          unknown\n");
  printf("  power                %s of a %s limit\n", watts(a, sizeof a, s.power_mw),
         watts(b, sizeof b, s.power_limit_mw));
  if (s.gpu_util_pct >= 0)
    printf("  utilisation          GPU %d %%, memory %d %%\n", s.gpu_util_pct, s.mem_util_pct);
  if (s.clock_reasons >= 0) cucore_system_reasons_text(s.clock_reasons, reasons, sizeof reasons);
  printf("  clock event reasons  %s%s\n", reasons,
         s.clock_reasons > 0 && (s.clock_reasons & CUCORE_CLOCK_REASONS_THROTTLE)
             ? " (throttled: timings now run slower than the GPU can)"
             : "");
  if (s.mig_current >= 0) printf("  MIG mode             %s\n", s.mig_current ? "on" : "off");
  if (s.nvlink_links > 0)
    printf("  NVLink               %d of %d links active\n", s.nvlink_active, s.nvlink_links);
}

/* A number, or null when NVML does not offer it (-1). */
static void known(json_out *j, const char *key, long long v) {
  if (v < 0)
    json_str(j, key, NULL);
  else
    json_int(j, key, v);
}

void system_facts_json(json_out *j, int ordinal, const char *uuid) {
  cucore_system_info s;
  json_begin_object(j, "system");
  if (facts_of(ordinal, uuid, &s) != CUCORE_OK) {
    json_bool(j, "available", 0);
    json_str(j, "error", cucore_last_error());
    json_end_object(j);
    return;
  }
  json_bool(j, "available", 1);
  known(j, "sm_clock_mhz", s.sm_clock_mhz);
  known(j, "sm_clock_max_mhz", s.sm_clock_max_mhz);
  known(j, "mem_clock_mhz", s.mem_clock_mhz);
  known(j, "mem_clock_max_mhz", s.mem_clock_max_mhz);
  known(j, "temperature_c", s.temperature_c);
  known(j, "power_mw", s.power_mw);
  known(j, "power_limit_mw", s.power_limit_mw);
  known(j, "gpu_util_pct", s.gpu_util_pct);
  known(j, "mem_util_pct", s.mem_util_pct);
  known(j, "clock_reasons", s.clock_reasons);
  char reasons[256] = "";
  if (s.clock_reasons >= 0) cucore_system_reasons_text(s.clock_reasons, reasons, sizeof reasons);
  json_str(j, "clock_reasons_text", s.clock_reasons >= 0 ? reasons : NULL);
  json_bool(j, "throttled",
            s.clock_reasons > 0 && (s.clock_reasons & CUCORE_CLOCK_REASONS_THROTTLE));
  known(j, "mig_current", s.mig_current);
  known(j, "nvlink_links", s.nvlink_links);
  known(j, "nvlink_active", s.nvlink_active);
  json_str(j, "nvml_uuid", s.uuid);
  json_end_object(j);
}

void system_facts_sample(int ordinal, int *sm_mhz, int *max_mhz, long long *reasons) {
  cucore_system_info s;
  int first = *sm_mhz == 0;
  if (first) *sm_mhz = *max_mhz = -1, *reasons = -1;
  if (cucore_system_get_device_info(ordinal, &s) != CUCORE_OK) return;
  if (s.sm_clock_mhz >= 0 && (*sm_mhz < 0 || s.sm_clock_mhz < *sm_mhz)) *sm_mhz = s.sm_clock_mhz;
  if (s.sm_clock_max_mhz >= 0) *max_mhz = s.sm_clock_max_mhz;
  if (s.clock_reasons >= 0) *reasons = (*reasons < 0 ? 0 : *reasons) | s.clock_reasons;
}

static pthread_t loader;
static int loader_started;

/* A failure is said by the query that needs NVML (facts_of asks again). */
static void *load_nvml(void *unused) {
  (void)unused;
  (void)cucore_system_load();
  return NULL;
}

static void *load_and_read_all(void *unused) {
  (void)unused;
  int n = 0;
  if (cucore_system_get_count(&n) != CUCORE_OK) return NULL; /* loads NVML first */
  for (int i = 0; i < n && nprefetched < PREFETCH_MAX; i++)
    if (cucore_system_get_info_by_index(i, &prefetched[nprefetched]) == CUCORE_OK) nprefetched++;
  return NULL;
}

static void start(void *(*fn)(void *)) {
  if (!loader_started) loader_started = pthread_create(&loader, NULL, fn, NULL) == 0;
}

void system_facts_start(void) { start(load_nvml); }
void system_facts_start_all(void) { start(load_and_read_all); }

void system_facts_join(void) {
  if (loader_started) pthread_join(loader, NULL);
  loader_started = 0;
}
