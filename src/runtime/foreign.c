/*
 * foreign.c -- handles made elsewhere, taken in: a device on the caller's context, a stream
 * or an event the caller created (runtime API, PyTorch, a renderer), and the per-thread
 * default stream. cucore never destroys what it did not create: closing or destroying these
 * wrappers frees the wrapper only.
 */
#include "runtime/runtime.h"

#include <stdlib.h>

/* The device of context `ctx` (made current for the question, then the caller's restored). */
static cucore_status device_of_context(CUcontext ctx, CUdevice *out, const char *fn) {
  CUresult r = DRV(cuCtxPushCurrent)(ctx);
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, "cuCtxPushCurrent", "%s: the context given is not usable", fn);
  r = DRV(cuCtxGetDevice)(out);
  CUcontext popped = NULL;
  (void)DRV(cuCtxPopCurrent)(&popped);
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuCtxGetDevice", "%s", fn);
  return CUCORE_OK;
}

cucore_status cucore_device_from_context(void *cucontext, cucore_device **out) {
  cc_begin();
  CC_CHECK_ARG(out, "cucore_device_from_context", "out");
  *out = NULL;
  cucore_status st = cc_driver_need_device();
  if (st != CUCORE_OK) return st;
  CUcontext ctx = (CUcontext)cucontext;
  if (!ctx) {
    CUresult r = DRV(cuCtxGetCurrent)(&ctx);
    if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuCtxGetCurrent", "cucore_device_from_context");
    if (!ctx)
      return cc_fail(CUCORE_INVALID_ARGUMENT,
                     "cucore_device_from_context: no context is current on this thread; make "
                     "one current first (a runtime-API call such as cudaFree(0) does), pass a "
                     "CUcontext, or use cucore_device_open");
  }
  CUdevice d;
  st = device_of_context(ctx, &d, "cucore_device_from_context");
  if (st != CUCORE_OK) return st;
  cucore_device *dev = cc_calloc(1, sizeof *dev, "a device handle");
  if (!dev) return CUCORE_HOST_OUT_OF_MEMORY;
  cc_handle_init(dev, CC_KIND_DEVICE);
  dev->cudev = d;
  dev->ordinal = cc_device_ordinal_of(d);
  dev->ctx = ctx;
  dev->borrowed = 1;
  cc_device_init_streams(dev);
  *out = dev;
  return CUCORE_OK;
}

cucore_status cucore_stream_per_thread(cucore_device *dev, cucore_stream **out) {
  cc_begin();
  CC_CHECK_ARG(out, "cucore_stream_per_thread", "out");
  *out = NULL;
  CC_CHECK_HANDLE(dev, DEVICE, "cucore_stream_per_thread", "dev");
  *out = &dev->per_thread_stream;
  return CUCORE_OK;
}

cucore_status cucore_stream_wrap(cucore_device *dev, void *custream, cucore_stream **out) {
  cc_begin();
  CC_CHECK_ARG(out, "cucore_stream_wrap", "out");
  *out = NULL;
  CC_CHECK_HANDLE(dev, DEVICE, "cucore_stream_wrap", "dev");
  CUstream h = (CUstream)custream;
  cucore_status st = cc_device_make_current(dev);
  if (st != CUCORE_OK) return st;
  /* The legacy and per-thread handles name a stream of whatever context is current, which
   * is now the device's; any other stream must belong to the device's context. */
  if (h && h != CU_STREAM_LEGACY && h != CU_STREAM_PER_THREAD) {
    st = CC_DRV_REQUIRE(cuStreamGetCtx);
    if (st != CUCORE_OK) return st;
    CUcontext ctx = NULL;
    CUresult r = DRV(cuStreamGetCtx)(h, &ctx);
    if (r != CUDA_SUCCESS)
      return cc_fail_cu(r, "cuStreamGetCtx",
                        "cucore_stream_wrap: %p is not a usable CUstream (destroyed, or never "
                        "one?)",
                        custream);
    if (ctx != dev->ctx) {
      CUdevice d;
      int other = device_of_context(ctx, &d, "cucore_stream_wrap") == CUCORE_OK
                      ? cc_device_ordinal_of(d)
                      : -1;
      cc_begin();
      return cc_fail(CUCORE_INVALID_ARGUMENT,
                     "cucore_stream_wrap: the stream belongs to another context (of device %d) "
                     "than the one of device %d given; wrap it with a device made by "
                     "cucore_device_from_context on the stream's own context",
                     other, dev->ordinal);
    }
  }
  cucore_stream *s = cc_calloc(1, sizeof *s, "a stream handle");
  if (!s) return CUCORE_HOST_OUT_OF_MEMORY;
  cc_handle_init(s, CC_KIND_STREAM);
  s->handle = h;
  s->dev = dev;
  s->borrowed = 1;
  s->blocking = cc_stream_query_blocking(h);
  *out = s;
  return CUCORE_OK;
}

cucore_status cucore_event_wrap(cucore_device *dev, void *cuevent, cucore_event **out) {
  cc_begin();
  CC_CHECK_ARG(out, "cucore_event_wrap", "out");
  *out = NULL;
  CC_CHECK_HANDLE(dev, DEVICE, "cucore_event_wrap", "dev");
  CC_CHECK_ARG(cuevent, "cucore_event_wrap", "cuevent");
  cucore_status st = cc_device_make_current(dev);
  if (st != CUCORE_OK) return st;
  CUresult r = DRV(cuEventQuery)((CUevent)cuevent);
  if (r != CUDA_SUCCESS && r != CUDA_ERROR_NOT_READY)
    return cc_fail_cu(r, "cuEventQuery",
                      "cucore_event_wrap: %p is not a usable CUevent of device %d", cuevent,
                      dev->ordinal);
  cucore_event *ev = cc_calloc(1, sizeof *ev, "an event handle");
  if (!ev) return CUCORE_HOST_OUT_OF_MEMORY;
  cc_handle_init(ev, CC_KIND_EVENT);
  ev->handle = (CUevent)cuevent;
  ev->dev = dev;
  ev->borrowed = 1;
  atomic_init(&ev->refs, 1);
  *out = ev;
  return CUCORE_OK;
}
