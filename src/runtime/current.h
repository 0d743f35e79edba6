/*
 * runtime/current.h -- the context cucore last saw current on this thread, checked inline by
 * the hot paths (launches, node updates, copies, stream-ordered allocations); otherwise they
 * ask the driver through cc_device_make_current (device.c). Apart from runtime.h so that the
 * files which never switch contexts (capture_state.c and the like) do not reach device.c
 * through the folder's header.
 */
#ifndef CUCORE_RUNTIME_CURRENT_H
#define CUCORE_RUNTIME_CURRENT_H

#include "runtime/runtime.h"

/* The context cucore last saw or made current on this thread (device.c). */
extern CC_TLS_IE _Thread_local CUcontext cc_tls_current;

/* 1 when cucore last saw the device's context current on this thread. */
static inline int cc_device_is_current(const cucore_device *dev) {
  return cc_tls_current == dev->ctx;
}

/* cc_device_make_current, trusting what cucore last saw on this thread instead of asking the
 * driver (for hot paths, which check again when the driver refuses for a context reason). */
static inline cucore_status cc_device_make_current_fast(cucore_device *dev) {
  if (CC_LIKELY(cc_device_is_current(dev))) return CUCORE_OK;
  return cc_device_make_current(dev);
}

#endif
