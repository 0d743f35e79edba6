/* event_ipc.c -- events shared between processes: an interprocess event exported
 * as bytes (cuIpcGetEventHandle) and opened in another process (cuIpcOpenEventHandle), where
 * streams wait on it like on any event. */
#include "runtime/runtime.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define IPC_EVENT_MAGIC 0x45504343u /* "CCPE" */
#define IPC_EVENT_VERSION 1u

_Static_assert(sizeof(CUipcEventHandle) == sizeof(((cucore_ipc_event_handle *)0)->data),
               "cucore_ipc_event_handle carries the driver's handle");

cucore_status cucore_event_export_ipc(cucore_event *ev, cucore_ipc_event_handle *out) {
  cc_begin();
  const char *fn = "cucore_event_export_ipc";
  CC_CHECK_ARG(out, fn, "out");
  memset(out, 0, sizeof *out);
  CC_CHECK_HANDLE(ev, EVENT, fn, "ev");
  if (ev->borrowed || !(ev->flags & CUCORE_EVENT_INTERPROCESS))
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: the event %s", fn,
                   ev->borrowed ? "wraps a CUevent cucore did not create (its flags are "
                                  "unknown)"
                                : "was not created with CUCORE_EVENT_INTERPROCESS | "
                                  "CUCORE_EVENT_DISABLE_TIMING");
  cucore_status st = CC_DRV_REQUIRE(cuIpcGetEventHandle);
  if (st == CUCORE_OK) st = cc_device_make_current(ev->dev);
  if (st != CUCORE_OK) return st;
  CUipcEventHandle h;
  memset(&h, 0, sizeof h);
  CUresult r = DRV(cuIpcGetEventHandle)(&h, ev->handle);
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, "cuIpcGetEventHandle", "%s: an event of device %d", fn, ev->dev->ordinal);
  memcpy(out->data, h.reserved, sizeof out->data);
  out->magic = IPC_EVENT_MAGIC;
  out->version = IPC_EVENT_VERSION;
  out->pid = (int32_t)getpid();
  return CUCORE_OK;
}

static cucore_status check_handle(const cucore_ipc_event_handle *in, const char *fn) {
  if (in->magic != IPC_EVENT_MAGIC || in->version != IPC_EVENT_VERSION)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: the data is not a cucore_ipc_event_handle of "
                   "version %u (magic 0x%x, version %u): was it damaged or truncated in "
                   "transit?",
                   fn, IPC_EVENT_VERSION, in->magic, in->version);
  if (in->pid == (int32_t)getpid())
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: the event was exported by this process (pid "
                   "%d); use the event itself here, the driver opens only other processes' "
                   "events",
                   fn, (int)in->pid);
  return CUCORE_OK;
}

cucore_status cucore_event_import_ipc(cucore_device *dev, const cucore_ipc_event_handle *in,
                                      cucore_event **out) {
  cc_begin();
  const char *fn = "cucore_event_import_ipc";
  CC_CHECK_ARG(out, fn, "out");
  *out = NULL;
  CC_CHECK_HANDLE(dev, DEVICE, fn, "dev");
  CC_CHECK_ARG(in, fn, "in");
  cucore_status st = check_handle(in, fn);
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuIpcOpenEventHandle);
  if (st == CUCORE_OK) st = cc_device_make_current(dev);
  if (st != CUCORE_OK) return st;
  cucore_event *ev = cc_calloc(1, sizeof *ev, "an event handle");
  if (!ev) return CUCORE_HOST_OUT_OF_MEMORY;
  cc_handle_init(ev, CC_KIND_EVENT);
  CUipcEventHandle h;
  memcpy(h.reserved, in->data, sizeof h.reserved);
  CUresult r = DRV(cuIpcOpenEventHandle)(&ev->handle, h);
  if (r != CUDA_SUCCESS) {
    free(ev);
    return cc_fail_cu(r, "cuIpcOpenEventHandle",
                      "%s: an event of process %d on device %d (is "
                      "the exporter alive, and on the same GPU?)",
                      fn, (int)in->pid, dev->ordinal);
  }
  ev->dev = dev;
  ev->flags = CUCORE_EVENT_INTERPROCESS | CUCORE_EVENT_DISABLE_TIMING;
  atomic_init(&ev->refs, 1);
  *out = ev;
  return CUCORE_OK;
}
