/* run_recover.c -- a kernel fault does not end a tune. A faulting configuration poisons the
 * context (every later call on the device fails), so after any failed row the device is asked
 * (cucore_device_synchronize); on CUCORE_KERNEL_FAULT the row is recorded as a fault, then
 * everything on the device is let go (rotation copies, buffers, stream), the device closed
 * (releasing the primary context resets it) and opened again, the buffers made again from
 * their initial contents, and the tune goes on with the next configuration: callers make
 * their kernels and argument sets again when c->s.resets changes. A device that does not come
 * back is lost: the configurations left are recorded as such. */
#include "tune/run.h"

#include <stdio.h>

int cc_trec_faulted(const cc_trun *c) {
  cucore_device *dev = cc_tdata_device(c);
  return dev && CUCORE_CODE(cucore_device_synchronize(dev)) == CUCORE_KERNEL_FAULT;
}

void cc_trec_mark(cc_trun *c, cucore_tune_row *r) {
  if (r->status != CUCORE_TUNE_FAULT) {
    const char *was = r->detail;
    r->detail = cc_trun_none;
    cc_trun_text(&r->detail, "the kernel faulted (the context was lost): %s", was);
    cc_trun_text_free(&was);
  }
  r->status = CUCORE_TUNE_FAULT;
  c->s.faults++;
}

cucore_status cc_trec_recover(cc_trun *c, const cucore_tune_row *r) {
  cc_trot_release(c);
  cucore_status st = cc_tdata_reopen(c);
  c->s.resets++;
  if (st == CUCORE_OK) st = cc_trot_open(c);
  if (st != CUCORE_OK) c->s.lost = 1;
  cc_trun_note(c, "configuration %llu faulted: the device was %s",
               (unsigned long long)r->config.index,
               st != CUCORE_OK ? "lost (the configurations left are not measured)"
                               : "reset, the tune goes on");
  return st;
}

void cc_trec_after_row(cc_trun *c, cucore_tune_row *r) {
  if (r->status == CUCORE_TUNE_OK || r->status == CUCORE_TUNE_WRONG_ANSWER || !cc_trec_faulted(c))
    return;
  cc_trec_mark(c, r);
  cc_trec_recover(c, r);
}
