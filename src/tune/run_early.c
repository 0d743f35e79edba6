/* run_early.c -- the device's context made on a helper thread from the start of a measured
 * tune, while the calling thread prepares on the host (rows, the store's key, the compiles
 * started, the comparison kernel compiled): making a context takes ~250 ms on an H100, most of
 * a tune's start. cc_tdata_open waits for it, then opens the device itself (the driver's
 * primary context, already made) and lets the early handle go. */
#include "tune/run.h"

#include <pthread.h>
#include <stdlib.h>

struct cc_tearly {
  pthread_t th;
  int joined;
  int ordinal;
  cucore_device *dev; /* NULL when the open failed: cc_tdata_open says why */
};

static void *open_early(void *arg) {
  cc_tearly *e = arg;
  if (cucore_device_open(e->ordinal, &e->dev) != CUCORE_OK) e->dev = NULL;
  return NULL;
}

void cc_tearly_start(cc_trun *c) {
  cc_tearly *e = cc_raw_calloc(1, sizeof *e);
  if (!e) return; /* cc_tdata_open opens it then */
  e->ordinal = c->o.device;
  if (pthread_create(&e->th, NULL, open_early, e) != 0) {
    free(e);
    return;
  }
  c->early = e;
}

void cc_tearly_wait(cc_trun *c) {
  cc_tearly *e = c->early;
  if (e && !e->joined) pthread_join(e->th, NULL), e->joined = 1;
}

void cc_tearly_finish(cc_trun *c) {
  cc_tearly *e = c->early;
  if (!e) return;
  cc_tearly_wait(c);
  cucore_device_close(e->dev);
  free(e);
  c->early = NULL;
}
