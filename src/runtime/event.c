/* event.c -- events: ordering between streams and timing. */
#include "runtime/runtime.h"

#include <stdlib.h>

cucore_status cucore_event_create(cucore_device *dev, unsigned flags, cucore_event **out) {
  cc_begin();
  CC_CHECK_ARG(out, "cucore_event_create", "out");
  *out = NULL;
  CC_CHECK_HANDLE(dev, DEVICE, "cucore_event_create", "dev");
  if (flags & ~(unsigned)(CUCORE_EVENT_BLOCKING_SYNC | CUCORE_EVENT_DISABLE_TIMING |
                          CUCORE_EVENT_INTERPROCESS))
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "cucore_event_create: unknown flags 0x%x (expected a combination of "
                   "CUCORE_EVENT_BLOCKING_SYNC, CUCORE_EVENT_DISABLE_TIMING and "
                   "CUCORE_EVENT_INTERPROCESS)",
                   flags);
  if ((flags & CUCORE_EVENT_INTERPROCESS) && !(flags & CUCORE_EVENT_DISABLE_TIMING))
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "cucore_event_create: CUCORE_EVENT_INTERPROCESS needs "
                   "CUCORE_EVENT_DISABLE_TIMING too (the driver shares only untimed events)");
  cucore_status st = cc_device_make_current(dev);
  if (st != CUCORE_OK) return st;
  unsigned cuflags = ((flags & CUCORE_EVENT_BLOCKING_SYNC) ? CU_EVENT_BLOCKING_SYNC : 0) |
                     ((flags & CUCORE_EVENT_DISABLE_TIMING) ? CU_EVENT_DISABLE_TIMING : 0) |
                     ((flags & CUCORE_EVENT_INTERPROCESS) ? CU_EVENT_INTERPROCESS : 0);
  cucore_event *ev = cc_calloc(1, sizeof *ev, "an event handle");
  if (!ev) return CUCORE_HOST_OUT_OF_MEMORY;
  cc_handle_init(ev, CC_KIND_EVENT);
  CUresult r = DRV(cuEventCreate)(&ev->handle, cuflags);
  if (r != CUDA_SUCCESS) {
    free(ev);
    return cc_fail_cu(r, "cuEventCreate", "device %d", dev->ordinal);
  }
  ev->dev = dev;
  ev->flags = flags;
  atomic_init(&ev->refs, 1);
  *out = ev;
  return CUCORE_OK;
}

void cc_event_retain(void *p) { atomic_fetch_add(&((cucore_event *)p)->refs, 1); }

/* Drops a reference; the last one destroys the event (the CUevent too unless borrowed). */
static cucore_status event_release(cucore_event *ev) {
  if (atomic_fetch_sub(&ev->refs, 1) != 1) return CUCORE_OK;
  cc_capture_forget_event(ev);
  if (ev->borrowed) { /* the caller's event lives on */
    cc_handle_retire(ev, CC_KIND_EVENT);
    return CUCORE_OK;
  }
  cucore_status st = cc_device_make_current(ev->dev);
  CUresult r = DRV(cuEventDestroy)(ev->handle);
  cc_handle_retire(ev, CC_KIND_EVENT);
  if (st != CUCORE_OK) return st;
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuEventDestroy", NULL);
  return CUCORE_OK;
}

void cc_event_release(void *p) { (void)event_release(p); }

cucore_status cucore_event_destroy(cucore_event *ev) {
  cc_begin();
  if (!ev) return CUCORE_OK;
  CC_CHECK_HANDLE(ev, EVENT, "cucore_event_destroy", "event");
  cc_handle_kill(ev, CC_KIND_EVENT); /* graphs that use it keep it until they are done */
  return event_release(ev);
}

cucore_status cucore_event_record(cucore_event *ev, cucore_stream *s) {
  cc_begin();
  CC_CHECK_HANDLE(ev, EVENT, "cucore_event_record", "event");
  CC_CHECK_HANDLE(s, STREAM, "cucore_event_record", "stream");
  if (s->dev->ctx != ev->dev->ctx)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "cucore_event_record: the event belongs to device %d, the stream to device %d",
                   ev->dev->ordinal, s->dev->ordinal);
  cucore_status st = cc_device_make_current(ev->dev);
  if (st != CUCORE_OK) return st;
  CUresult r = DRV(cuEventRecord)(ev->handle, s->handle);
  if (r != CUDA_SUCCESS) {
    st = cc_fail_cu(r, "cuEventRecord", NULL);
    if (cc_cu_is_capture_error(r)) cc_capture_note_failure(s);
    return st;
  }
  cc_capture_event_recorded(ev, s); /* in a capture it marks a point of the graph */
  return CUCORE_OK;
}

cucore_status cucore_event_synchronize(cucore_event *ev) {
  cc_begin();
  CC_CHECK_HANDLE(ev, EVENT, "cucore_event_synchronize", "event");
  cucore_status st = cc_capture_check_event(ev, "cucore_event_synchronize");
  if (st == CUCORE_OK) st = cc_device_make_current(ev->dev);
  if (st != CUCORE_OK) return st;
  CUresult r = DRV(cuEventSynchronize)(ev->handle);
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuEventSynchronize", NULL);
  return CUCORE_OK;
}

cucore_status cucore_event_query(cucore_event *ev) {
  cc_begin();
  CC_CHECK_HANDLE(ev, EVENT, "cucore_event_query", "event");
  cucore_status st = cc_capture_check_event(ev, "cucore_event_query");
  if (st == CUCORE_OK) st = cc_device_make_current(ev->dev);
  if (st != CUCORE_OK) return st;
  CUresult r = DRV(cuEventQuery)(ev->handle);
  if (r == CUDA_ERROR_NOT_READY) return cc_status(CUCORE_NOT_READY, CUCORE_SOURCE_DRIVER, (int)r);
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuEventQuery", NULL);
  return CUCORE_OK;
}

cucore_status cucore_event_elapsed_ms(cucore_event *start, cucore_event *end, float *ms) {
  cc_begin();
  CC_CHECK_HANDLE(start, EVENT, "cucore_event_elapsed_ms", "start");
  CC_CHECK_HANDLE(end, EVENT, "cucore_event_elapsed_ms", "end");
  CC_CHECK_ARG(ms, "cucore_event_elapsed_ms", "ms");
  *ms = 0.0f;
  if ((start->flags | end->flags) & CUCORE_EVENT_DISABLE_TIMING)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "cucore_event_elapsed_ms: an event was created with "
                                            "CUCORE_EVENT_DISABLE_TIMING and cannot be timed");
  cucore_status st = cc_capture_check_event(start, "cucore_event_elapsed_ms");
  if (st == CUCORE_OK) st = cc_capture_check_event(end, "cucore_event_elapsed_ms");
  if (st == CUCORE_OK) st = cc_device_make_current(start->dev);
  if (st != CUCORE_OK) return st;
  CUresult r = DRV(cuEventElapsedTime)(ms, start->handle, end->handle);
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, "cuEventElapsedTime",
                      "both events must have been recorded and have completed");
  return CUCORE_OK;
}
