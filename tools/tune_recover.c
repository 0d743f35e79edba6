/* tune_recover.c -- a kernel fault does not end `cucore tune`. A faulting configuration
 * poisons the context (every later call on the device fails), so after any failed row the
 * device is asked (cucore_device_synchronize); on CUCORE_KERNEL_FAULT the row is recorded as
 * "fault", then everything on the device is let go (rotation copies, buffers, stream), the
 * device closed (releasing the primary context resets it) and opened again, the buffers made
 * again from their initial host values, and the tune goes on with the next configuration:
 * callers make their kernels and argument sets again when ctx->resets changes. A device that
 * does not come back is lost: the configurations left are recorded as such. */
#include <string.h>

#include "tune.h"

int tune_device_faulted(tune_ctx *c) {
  cucore_device *dev = tune_dev_device(c);
  return dev && CUCORE_CODE(cucore_device_synchronize(dev)) == CUCORE_KERNEL_FAULT;
}

void tune_mark_fault(tune_ctx *c, tune_row *r) {
  if (strcmp(r->status, "fault") != 0) {
    char was[sizeof r->detail];
    snprintf(was, sizeof was, "%s", r->detail);
    snprintf(r->detail, sizeof r->detail, "the kernel faulted (the context was lost): %s", was);
  }
  snprintf(r->status, sizeof r->status, "fault");
  c->faults++;
}

int tune_recover(tune_ctx *c, const tune_row *r) {
  tune_rotate_close(c);
  int rc = tune_dev_reopen(c);
  c->resets++;
  if (!rc) tune_rotate_open(c);
  if (rc) c->lost = 1;
  fprintf(stderr, "cucore tune: note: configuration %llu faulted: the device was %s\n",
          (unsigned long long)r->cfg.index,
          rc ? "lost (the configurations left are not measured)" : "reset, the tune goes on");
  return rc ? -1 : 0;
}

/* After row r: when it failed and the device has faulted, r is a fault and the device reset. */
void tune_after_row(tune_ctx *c, tune_row *r) {
  if (!strcmp(r->status, "ok") || !strcmp(r->status, "wrong-answer") || !tune_device_faulted(c))
    return;
  tune_mark_fault(c, r);
  tune_recover(c, r);
}
