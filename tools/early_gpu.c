/* early_gpu.c -- the GPU made ready on a thread of its own for `cucore run` and `cucore tune`
 * (below), to shorten the time to a first result: cuInit and the device's primary context
 * (together ~195 ms on an H200) start as soon as the command line is read, while the main
 * thread reads the code: the compile cache, NVRTC's load and compile (~27 ms cold) and the
 * module load need cuInit (for the arch) but no context, so on a cold run the compile hides
 * behind the context's creation instead of coming before it.
 * The main thread's own cucore_device_open then only retains the context this thread made
 * (the driver makes a caller wait for a creation under way). The thread is joined before the
 * GPU part and before the command returns, so no exit races the driver; its handle is kept
 * until the process exits, which releases the context anyway (see run_device.c).
 * NVML (system_facts.c) starts loading on its own thread at the same time when the run is
 * timed (run_is_timed); a run of one launch records no SM clock and loads no NVML: NVML's
 * start beside cuInit made a first result ~14 ms slower on two H200s (592 -> 578 ms for
 * `cucore run saxpy.cubin` without it, bench/first_result.py's diagnostic).
 * A cubin or fatbin has nothing to compile beside the context, and the run is serial: in
 * three H100 rounds the `.cubin` run with the thread was 1, 15 and 11 ms slower than without
 * (CUCORE_RUN_EARLY=1 starts it anyway, for the bench's comparison).
 * A run makes the context with one hardware work queue (CUDA_DEVICE_MAX_CONNECTIONS=1, unless
 * the environment names a number): it launches into one stream, and the driver's default
 * number of queues made the context ~50 ms slower to create and ~64 ms slower to tear down on
 * an H100 (bench/first_result.py's cubin_driver_queues).
 * `cucore tune` (cmd_tune.c) starts this thread as soon as its command line is read with cuInit
 * alone (early_gpu_start_init): the context is the library's to make, on its own helper thread
 * once the tune's store says something is left to measure (src/tune, cc_tdev_early_start),
 * while the compiles run; a finished tune (its store has every configuration) then makes no
 * context at all: on an H200 its rerun took 0.52 s with the context made early. The bind
 * callback's early_gpu_release closes no handle then. */
#include "cli.h"
#include "system_facts.h"

#include <pthread.h>
#include <stdlib.h>

static pthread_t early;
static int early_started, early_ordinal, early_init_only;
static cucore_device *early_dev; /* reachable until exit, like run_device.c's handles */

static void *open_early(void *unused) {
  (void)unused;
  int n = 0;
  /* Failures are said by the main thread's own calls, which meet the same driver state. */
  if (cucore_device_get_count(&n) == CUCORE_OK && early_ordinal < n && !early_init_only)
    (void)cucore_device_open(early_ordinal, &early_dev);
  return NULL;
}

int early_gpu_limit_connections(void) {
  const char *v = getenv("CUDA_DEVICE_MAX_CONNECTIONS");
  if (!v || !*v) {
    if (getenv("CUCORE_RUN_DRIVER_QUEUES")) return -1;   /* the driver's own number: comparisons */
    (void)setenv("CUDA_DEVICE_MAX_CONNECTIONS", "1", 1); /* before any thread or driver call */
    return 1;
  }
  char *end;
  long n = strtol(v, &end, 10);
  return *end || n < 1 || n > 32 ? -1 : (int)n;
}

void early_gpu_start(int ordinal, int nvml, int compiles) {
  if (nvml) system_facts_start(); /* NVML for the SM clock recorded beside the timing */
  if (early_started || getenv("CUCORE_RUN_SERIAL")) return;
  if (!compiles && !getenv("CUCORE_RUN_EARLY")) return;
  early_ordinal = ordinal;
  early_started = pthread_create(&early, NULL, open_early, NULL) == 0;
}

void early_gpu_start_init(void) {
  if (early_started || getenv("CUCORE_RUN_SERIAL")) return;
  early_init_only = 1;
  early_started = pthread_create(&early, NULL, open_early, NULL) == 0;
}

void early_gpu_end(void) {
  early_gpu_join();
  system_facts_join();
}

void early_gpu_join(void) {
  if (early_started) pthread_join(early, NULL);
  early_started = 0;
}

void early_gpu_release(void) {
  early_gpu_join();
  cucore_device_close(early_dev);
  early_dev = NULL;
}
