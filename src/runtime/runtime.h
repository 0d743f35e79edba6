/*
 * runtime/runtime.h -- devices, their primary contexts, streams, events and memory: the
 * handles every later floor runs on.
 *
 * Files: device.c (devices, properties, primary contexts, the context made current on each
 * thread), stream.c, event.c, memory.c (device and pinned memory, copies, fills).
 */
#ifndef CUCORE_RUNTIME_H
#define CUCORE_RUNTIME_H

#include "loader/loader.h"

struct cucore_stream {
  CUstream handle;
  cucore_device *dev;
  int is_default; /* owned by the device, not destroyable */
};

struct cucore_device {
  int ordinal;
  CUdevice cudev;
  CUcontext ctx;
  struct cucore_stream default_stream;
};

struct cucore_event {
  CUevent handle;
  cucore_device *dev;
  unsigned flags;
};

/* Makes some context current when none is (device 0's primary context, retained once for the
 * life of the process), for queries the driver answers only inside a context. */
cucore_status cc_ensure_context(void);
/* Makes the device's primary context current on this thread (cheap when it already is). */
cucore_status cc_device_make_current(cucore_device *dev);
/* The same, trusting what cucore last saw on this thread instead of asking the driver (for the
 * launch path, which checks again when the driver refuses). */
cucore_status cc_device_make_current_fast(cucore_device *dev);
/* Forgets what cucore last saw current on this thread. */
void cc_device_forget_current(void);

#endif /* CUCORE_RUNTIME_H */
