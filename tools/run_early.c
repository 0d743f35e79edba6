/* run_early.c -- `cucore run`'s GPU made ready on a thread of its own (issue 25): cuInit and
 * the device's primary context (together ~195 ms on an H200) start as soon as the command line
 * is read, while the main thread reads the code: the compile cache, NVRTC's load and compile
 * (~27 ms cold) and the module load need cuInit (for the arch) but no context, so on a cold
 * run the compile hides behind the context's creation instead of coming before it.
 * The main thread's own cucore_device_open then only retains the context this thread made
 * (the driver makes a caller wait for a creation under way). The thread is joined before the
 * GPU part and before the command returns, so no exit races the driver; its handle is kept
 * until the process exits, which releases the context anyway (see run_device.c).
 * NVML (system_facts.c) starts loading on its own thread at the same time when the run is
 * timed (run_is_timed); a run of one launch records no SM clock and loads no NVML: NVML's
 * start beside cuInit made a first result ~14 ms slower on two H200s (592 -> 578 ms for
 * `cucore run saxpy.cubin` without it, bench/first_result.py's diagnostic). */
#include "run.h"
#include "system_facts.h"

#include <pthread.h>
#include <stdlib.h>

static pthread_t early;
static int early_started, early_ordinal;
static cucore_device *early_dev; /* reachable until exit, like run_device.c's handles */

static void *open_early(void *unused) {
  (void)unused;
  int n = 0;
  /* Failures are said by the main thread's own calls, which meet the same driver state. */
  if (cucore_device_get_count(&n) == CUCORE_OK && early_ordinal < n)
    (void)cucore_device_open(early_ordinal, &early_dev);
  return NULL;
}

int run_is_timed(const run_opts *o) { return o->warmup > 0 || o->repeat > 1 || o->graph > 0; }

void run_early_start(int ordinal, int nvml) {
  if (nvml) system_facts_start(); /* NVML for the SM clock recorded beside the timing */
  if (early_started || getenv("CUCORE_RUN_SERIAL")) return;
  early_ordinal = ordinal;
  early_started = pthread_create(&early, NULL, open_early, NULL) == 0;
}

void run_early_end(void) {
  run_early_join();
  system_facts_join();
}

void run_early_join(void) {
  if (early_started) pthread_join(early, NULL);
  early_started = 0;
}
