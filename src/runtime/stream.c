/* stream.c -- streams on an open device (foreign.c wraps the caller's, stream_attrs.c holds
 * their attributes). */
#include "runtime/runtime.h"

#include <stdlib.h>

cucore_status cucore_stream_create(cucore_device *dev, unsigned flags, int priority,
                                   cucore_stream **out) {
  cc_begin();
  CC_CHECK_ARG(out, "cucore_stream_create", "out");
  *out = NULL;
  CC_CHECK_HANDLE(dev, DEVICE, "cucore_stream_create", "dev");
  if (flags & ~(unsigned)CUCORE_STREAM_NON_BLOCKING)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "cucore_stream_create: unknown flags 0x%x (expected CUCORE_STREAM_DEFAULT or "
                   "CUCORE_STREAM_NON_BLOCKING)",
                   flags);
  cucore_status st = cc_device_make_current(dev);
  if (st != CUCORE_OK) return st;
  int least = 0, greatest = 0;
  CUresult r = DRV(cuCtxGetStreamPriorityRange)(&least, &greatest);
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuCtxGetStreamPriorityRange", NULL);
  if (priority > least || priority < greatest)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "cucore_stream_create: priority %d is outside device %d's range %d (least) "
                   "to %d (greatest)",
                   priority, dev->ordinal, least, greatest);
  cucore_stream *s = cc_calloc(1, sizeof *s, "a stream handle");
  if (!s) return CUCORE_HOST_OUT_OF_MEMORY;
  cc_handle_init(s, CC_KIND_STREAM);
  unsigned cuflags = (flags & CUCORE_STREAM_NON_BLOCKING) ? CU_STREAM_NON_BLOCKING : 0;
  r = DRV(cuStreamCreateWithPriority)(&s->handle, cuflags, priority);
  if (r != CUDA_SUCCESS) {
    free(s);
    return cc_fail_cu(r, "cuStreamCreateWithPriority", "device %d", dev->ordinal);
  }
  s->dev = dev;
  s->blocking = !(cuflags & CU_STREAM_NON_BLOCKING);
  *out = s;
  return CUCORE_OK;
}

int cc_stream_query_blocking(CUstream h) {
  if (h == NULL || h == CU_STREAM_LEGACY || h == CU_STREAM_PER_THREAD) return 1;
  /* A stream that is capturing is not asked (cuStreamGetFlags would invalidate the capture):
   * it counts as blocking, which only makes cucore's capture checks stricter. */
  CUstreamCaptureStatus cs = CU_STREAM_CAPTURE_STATUS_NONE;
  if (!DRV(cuStreamIsCapturing) || DRV(cuStreamIsCapturing)(h, &cs) != CUDA_SUCCESS ||
      cs != CU_STREAM_CAPTURE_STATUS_NONE)
    return 1;
  unsigned flags = 0;
  if (!DRV(cuStreamGetFlags) || DRV(cuStreamGetFlags)(h, &flags) != CUDA_SUCCESS) return 1;
  return !(flags & CU_STREAM_NON_BLOCKING);
}

cucore_status cucore_stream_default(cucore_device *dev, cucore_stream **out) {
  cc_begin();
  CC_CHECK_ARG(out, "cucore_stream_default", "out");
  *out = NULL;
  CC_CHECK_HANDLE(dev, DEVICE, "cucore_stream_default", "dev");
  *out = &dev->default_stream;
  return CUCORE_OK;
}

cucore_status cucore_stream_destroy(cucore_stream *s) {
  cc_begin();
  if (!s) return CUCORE_OK;
  CC_CHECK_HANDLE(s, STREAM, "cucore_stream_destroy", "stream");
  if (s->is_default) return CUCORE_OK;
  cc_capture_forget_stream(s);
  if (s->borrowed) { /* the caller's stream lives on */
    cc_handle_retire(s, CC_KIND_STREAM);
    return CUCORE_OK;
  }
  cucore_status st = cc_device_make_current(s->dev);
  CUresult r = DRV(cuStreamDestroy)(s->handle);
  cc_handle_retire(s, CC_KIND_STREAM);
  if (st != CUCORE_OK) return st;
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuStreamDestroy", NULL);
  return CUCORE_OK;
}

cucore_status cucore_stream_synchronize(cucore_stream *s) {
  cc_begin();
  CC_CHECK_HANDLE(s, STREAM, "cucore_stream_synchronize", "stream");
  cucore_status st = cc_device_make_current(s->dev);
  if (st == CUCORE_OK) st = cc_capture_check_stream(s, "cucore_stream_synchronize");
  if (st != CUCORE_OK) return st;
  CUresult r = DRV(cuStreamSynchronize)(s->handle);
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, "cuStreamSynchronize", "a stream of device %d", s->dev->ordinal);
  return CUCORE_OK;
}

cucore_status cucore_stream_query(cucore_stream *s) {
  cc_begin();
  CC_CHECK_HANDLE(s, STREAM, "cucore_stream_query", "stream");
  cucore_status st = cc_device_make_current(s->dev);
  if (st == CUCORE_OK) st = cc_capture_check_stream(s, "cucore_stream_query");
  if (st != CUCORE_OK) return st;
  CUresult r = DRV(cuStreamQuery)(s->handle);
  if (r == CUDA_ERROR_NOT_READY) return cc_status(CUCORE_NOT_READY, CUCORE_SOURCE_DRIVER, (int)r);
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuStreamQuery", NULL);
  return CUCORE_OK;
}

cucore_status cucore_stream_wait_event(cucore_stream *s, cucore_event *ev) {
  cc_begin();
  CC_CHECK_HANDLE(s, STREAM, "cucore_stream_wait_event", "stream");
  CC_CHECK_HANDLE(ev, EVENT, "cucore_stream_wait_event", "event");
  cucore_status st = cc_device_make_current(s->dev);
  if (st == CUCORE_OK) st = cc_capture_event_waited(s, ev, "cucore_stream_wait_event");
  if (st != CUCORE_OK) return st;
  CUresult r = DRV(cuStreamWaitEvent)(s->handle, ev->handle, 0);
  if (r != CUDA_SUCCESS) {
    st = cc_fail_cu(r, "cuStreamWaitEvent", NULL);
    if (cc_cu_is_capture_error(r)) cc_capture_note_failure(s);
    return st;
  }
  cc_capture_joined(s, ev); /* a wait on an event recorded in a capture forks it to `s` */
  return CUCORE_OK;
}

cucore_status cucore_stream_get_priority(cucore_stream *s, int *priority) {
  cc_begin();
  CC_CHECK_HANDLE(s, STREAM, "cucore_stream_get_priority", "stream");
  CC_CHECK_ARG(priority, "cucore_stream_get_priority", "priority");
  cucore_status st = cc_device_make_current(s->dev);
  if (st != CUCORE_OK) return st;
  CUresult r = DRV(cuStreamGetPriority)(s->handle, priority);
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuStreamGetPriority", NULL);
  return CUCORE_OK;
}

cucore_status cucore_stream_get_device(cucore_stream *s, cucore_device **dev) {
  cc_begin();
  CC_CHECK_HANDLE(s, STREAM, "cucore_stream_get_device", "stream");
  CC_CHECK_ARG(dev, "cucore_stream_get_device", "dev");
  *dev = s->dev;
  return CUCORE_OK;
}

cucore_status cucore_stream_get_native(cucore_stream *s, void **custream) {
  cc_begin();
  CC_CHECK_HANDLE(s, STREAM, "cucore_stream_get_native", "stream");
  CC_CHECK_ARG(custream, "cucore_stream_get_native", "custream");
  *custream = s->handle;
  return CUCORE_OK;
}

/* Records an event of `waited`'s context in `waited` and makes `waiter` wait on it; the event
 * is created into *ev for the caller to destroy. */
static cucore_status wait_through_event(cucore_stream *waiter, cucore_stream *waited, CUevent *ev,
                                        const char *fn) {
  cucore_status st = cc_device_make_current(waited->dev);
  if (st != CUCORE_OK) return st;
  int relaxed = cc_capture_relax(); /* cucore's own event, not work of a capture under way */
  CUresult r = DRV(cuEventCreate)(ev, CU_EVENT_DISABLE_TIMING);
  cc_capture_unrelax(relaxed);
  if (r != CUDA_SUCCESS) {
    *ev = NULL;
    return cc_fail_cu(r, "cuEventCreate", "%s: device %d", fn, waited->dev->ordinal);
  }
  r = DRV(cuEventRecord)(*ev, waited->handle);
  if (r != CUDA_SUCCESS) {
    st = cc_fail_cu(r, "cuEventRecord", "%s: on `waited`, a stream of device %d", fn,
                    waited->dev->ordinal);
    if (cc_cu_is_capture_error(r)) cc_capture_note_failure(waited);
    return st;
  }
  st = cc_device_make_current(waiter->dev);
  if (st != CUCORE_OK) return st;
  r = DRV(cuStreamWaitEvent)(waiter->handle, *ev, 0);
  if (r != CUDA_SUCCESS) {
    st = cc_fail_cu(r, "cuStreamWaitEvent", "%s: `waiter`, a stream of device %d", fn,
                    waiter->dev->ordinal);
    if (cc_cu_is_capture_error(r)) cc_capture_note_failure(waiter);
  }
  return st;
}

cucore_status cucore_stream_wait_stream(cucore_stream *waiter, cucore_stream *waited) {
  static const char fn[] = "cucore_stream_wait_stream";
  cc_begin();
  CC_CHECK_HANDLE(waiter, STREAM, fn, "waiter");
  CC_CHECK_HANDLE(waited, STREAM, fn, "waited");
  if (waiter == waited ||
      (waiter->handle == waited->handle && waiter->dev->ctx == waited->dev->ctx))
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: `waiter` and `waited` are the same stream (of device %d): work on one "
                   "stream is in order already, and a stream cannot wait for itself",
                   fn, waiter->dev->ordinal);
  cucore_status st = cc_capture_check_wait_stream(waiter, waited, fn);
  if (st != CUCORE_OK) return st;
  CUevent ev = NULL;
  st = wait_through_event(waiter, waited, &ev, fn);
  if (st == CUCORE_OK) cc_capture_join(waiter, cc_capture_of(waited)); /* a fork, in a capture */
  /* The wait keeps what it needs of the event: destroying it now is the driver's rule. */
  if (ev && waiter->dev->ctx != waited->dev->ctx) {
    cucore_status cur = cc_device_make_current(waited->dev);
    if (st == CUCORE_OK) st = cur;
  }
  int relaxed = cc_capture_relax();
  CUresult r = ev ? DRV(cuEventDestroy)(ev) : CUDA_SUCCESS;
  cc_capture_unrelax(relaxed);
  if (r != CUDA_SUCCESS && st == CUCORE_OK)
    st = cc_fail_cu(r, "cuEventDestroy", "%s: the event on device %d", fn, waited->dev->ordinal);
  return st;
}
