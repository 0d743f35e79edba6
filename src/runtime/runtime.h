/*
 * runtime/runtime.h -- devices, their primary contexts, streams and events: the handles every
 * later floor runs on (memory/ is the floor above).
 *
 * Files: device.c (devices, properties, primary contexts, the context made current on each
 * thread), stream.c, event.c.
 */
#ifndef CUCORE_RUNTIME_H
#define CUCORE_RUNTIME_H

#include "loader/loader.h"

struct cucore_stream {
  CUstream handle;
  cucore_device *dev;
  int is_default; /* owned by the device (legacy or per-thread stream), not destroyable */
  int borrowed;   /* wraps the caller's CUstream: destroying the wrapper leaves it alone */
};

struct cucore_device {
  int ordinal;
  CUdevice cudev;
  CUcontext ctx;
  int borrowed; /* the caller's context, not retained: closing leaves it alone */
  struct cucore_stream default_stream;    /* the legacy default stream (NULL handle) */
  struct cucore_stream per_thread_stream; /* CU_STREAM_PER_THREAD */
};

struct cucore_event {
  CUevent handle;
  cucore_device *dev;
  unsigned flags;
  int borrowed; /* wraps the caller's CUevent: destroying the wrapper leaves it alone */
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
/* Sets up the streams a device owns (legacy default, per-thread). */
void cc_device_init_streams(cucore_device *dev);
/* The ordinal of a CUdevice (-1 when the driver lists no such device). */
int cc_device_ordinal_of(CUdevice d);

/* ---- attributes shared by launches and streams (attrs.c) ------------------------------------ */

/* 1 when cucore knows launch attribute `id` (CUDA 13.0's list). */
int cc_launch_attr_known(int id);
/* The driver's form of an attribute (events as their CUevent). Unknown ids (for a newer
 * driver) pass their raw value bytes through. */
void cc_launch_attr_to_cu(const cucore_launch_attr *a, CUlaunchAttribute *c);
/* The cucore form of a driver attribute value (streams' attributes: access policy window,
 * synchronization policy, priority, memory sync domain and its map). */
void cc_launch_attr_from_cu(CUlaunchAttributeID id, const CUlaunchAttributeValue *v,
                            cucore_launch_attr *a);

#endif /* CUCORE_RUNTIME_H */
