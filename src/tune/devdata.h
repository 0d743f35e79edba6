/*
 * tune/devdata.h -- the device's room of cucore_tune_run() (tuner.h lists the rooms): its
 * state and what its files share. Included by dev_*.c only; the other rooms use the cc_tdev_
 * calls of tuner.h. Lowest first:
 *   dev_verify.c  the outputs checked after a configuration's checked launch
 *   dev_data.c    the context (made early), the device opened, the buffers made and restored;
 *                 the cold cache (the L2 flush buffer, rotated copies of the buffers) and the
 *                 timing options that follow; a kernel fault's recovery; the room's state
 */
#ifndef CUCORE_TUNE_DEVDATA_H
#define CUCORE_TUNE_DEVDATA_H

#include "tune/compare.h"
#include "tune/tuner.h"

#include <pthread.h>

/* The room's state. */
struct cc_tdev {
  /* The context made on a helper thread (dev_data.c). */
  pthread_t early;
  int early_running;        /* 1: started, not joined yet */
  cucore_device *early_dev; /* its handle (NULL: none, or the open failed) */
  /* The device and the buffers (dev_data.c; the arrays made by cc_tdev_open, freed by
   * cc_tdev_close). */
  int opened; /* 1: cc_tdev_open ran, cc_tdev_close has something to let go */
  cucore_device *dev;
  cucore_stream *stream;
  cucore_devptr *ptr;      /* per buffer: on the device */
  cucore_devptr *pristine; /* per buffer: the initial contents of inputs and in-place ones */
  unsigned char **host;    /* per buffer: its contents after a launch (inputs as given) */
  /* The check of the outputs (dev_verify.c). */
  unsigned char **baseline; /* per buffer: the first configuration's outputs */
  cucore_devptr *base_dev;  /* per buffer: the same on the device (with cmp) */
  cc_tune_cmp *cmp;         /* the device comparison (NULL: compare on the host) */
  cucore_object *cmp_obj;   /* its code, compiled while the device opens (taken by cmp) */
  int cmp_failed;           /* 1: it could not be made or run once; the host compares */
  int have_baseline;
  uint64_t baseline_index;
  /* The cold cache and the timing (dev_data.c). */
  cucore_devptr flush; /* the timing's L2 flush buffer, made at its first use */
  int rot_sets;        /* rotated argument sets (copies of every buffer; 0: no rotation) */
  cucore_devptr *rot;  /* rot_sets x nbufs */
  int observe_clock;   /* 1: NVML answers, the SM clock is read per sample */
};

/* ---- dev_verify.c ---- */
/* The comparison kernel, and the baseline's device copies when there is a baseline already
 * (the device opened again after a fault). A failure leaves the host comparing. */
void cc_tdev_verify_open(cc_trun *c);

#endif /* CUCORE_TUNE_DEVDATA_H */
