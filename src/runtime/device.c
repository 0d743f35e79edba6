/*
 * device.c -- device enumeration and properties, and open devices holding the primary
 * context (users never handle contexts).
 */
#include "runtime/current.h"
#include "base/phase.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

cucore_status cucore_device_get_count(int *count) {
  cc_begin();
  CC_CHECK_ARG(count, "cucore_device_get_count", "count");
  *count = 0;
  cucore_status st = cc_driver_load();
  if (st != CUCORE_OK) return st;
  *count = cc_drv.device_count;
  return CUCORE_OK;
}

cucore_status cc_device_cudev(int ordinal, CUdevice *out, const char *fn) {
  cucore_status st = cc_driver_need_device();
  if (st != CUCORE_OK) return st;
  if (ordinal < 0 || ordinal >= cc_drv.device_count)
    return cc_fail(CUCORE_INVALID_DEVICE,
                   "%s: device %d does not exist; %d device%s present (valid ordinals 0..%d)", fn,
                   ordinal, cc_drv.device_count, cc_drv.device_count == 1 ? " is" : "s are",
                   cc_drv.device_count - 1);
  CUresult r = DRV(cuDeviceGet)(out, ordinal);
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuDeviceGet", "%s: device %d", fn, ordinal);
  return CUCORE_OK;
}

/* Fills the fields of `out` that device_attr_table.c reads from an attribute. Every one of them
 * is older than CUDA 12.0, the oldest driver cucore loads: a failure is a failure, never a zero
 * that would pass for a limit (fault injection found a block y-dimension limit of 0 taken from
 * a failed query). */
static cucore_status read_prop_attrs(CUdevice d, int ordinal, cucore_device_props *out) {
  for (int id = CUCORE_DEVICE_ATTRIBUTE_FIRST; id <= CUCORE_DEVICE_ATTRIBUTE_LAST; id++) {
    const cc_devattr *a = cc_devattr_find(id);
    if (a->props_offset < 0) continue;
    int *field = (int *)((char *)out + a->props_offset);
    CUresult r = DRV(cuDeviceGetAttribute)(field, (CUdevice_attribute)id, d);
    if (r != CUDA_SUCCESS)
      return cc_fail_cu(r, "cuDeviceGetAttribute", "device %d, attribute %d (%s)", ordinal, id,
                        a->name);
  }
  return CUCORE_OK;
}

cucore_status cucore_device_get_props(int ordinal, cucore_device_props *out) {
  cc_begin();
  CC_CHECK_ARG(out, "cucore_device_get_props", "out");
  memset(out, 0, sizeof *out);
  CUdevice d;
  cucore_status st = cc_device_cudev(ordinal, &d, "cucore_device_get_props");
  if (st != CUCORE_OK) return st;
  out->ordinal = ordinal;
  CUresult r = DRV(cuDeviceGetName)(out->name, (int)sizeof out->name, d);
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuDeviceGetName", "device %d", ordinal);
  st = read_prop_attrs(d, ordinal, out);
  if (st != CUCORE_OK) return st;
  out->arch = out->cc_major * 10 + out->cc_minor;
  /* The attribute is a mask of CUmemAllocationHandleType; the field says yes or no for one. */
  out->mempool_ipc_fd = (out->mempool_ipc_fd & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) != 0;
  size_t total = 0;
  r = DRV(cuDeviceTotalMem)(&total, d);
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuDeviceTotalMem", "device %d", ordinal);
  out->total_memory = total;
  if (DRV(cuDeviceGetUuid)) {
    CUuuid u;
    if (DRV(cuDeviceGetUuid)(&u, d) == CUDA_SUCCESS) {
      const unsigned char *b = (const unsigned char *)u.bytes;
      snprintf(out->uuid, sizeof out->uuid,
               "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
               b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
               b[15]);
    }
  }
  if (DRV(cuDeviceGetPCIBusId))
    (void)DRV(cuDeviceGetPCIBusId)(out->pci_bus_id, (int)sizeof out->pci_bus_id, d);
  return CUCORE_OK;
}

/* The context cucore last saw or made current on this thread: the launch path trusts it
 * instead of asking the driver each time (a launch refused for a context mismatch is retried
 * after a real check, see launch.c). */
CC_TLS_IE _Thread_local CUcontext cc_tls_current;

cucore_status cc_device_make_current(cucore_device *dev) {
  CUcontext cur = NULL;
  CUresult r = DRV(cuCtxGetCurrent)(&cur);
  if (CC_LIKELY(r == CUDA_SUCCESS && cur == dev->ctx)) {
    cc_tls_current = cur;
    return CUCORE_OK;
  }
  r = DRV(cuCtxSetCurrent)(dev->ctx);
  if (r != CUDA_SUCCESS) {
    cc_tls_current = NULL;
    return cc_fail_cu(r, "cuCtxSetCurrent", "primary context of device %d", dev->ordinal);
  }
  cc_tls_current = dev->ctx;
  return CUCORE_OK;
}

void cc_device_forget_current(void) { cc_tls_current = NULL; }

/* The primary contexts retained through cucore, per device: open handles (and the fallback of
 * cc_ensure_context) and retains under way, counted from the moment cucore_device_open knows
 * the device, before the driver makes the context: another thread can tell without waiting
 * that the context is made or being made (cc_device_primary_started). Ordinals past the table
 * are not counted; the driver is asked about them. */
#define CC_COUNTED_DEVICES 64
static atomic_int primary_holds[CC_COUNTED_DEVICES];

static void count_hold(int ordinal, int delta) {
  if (ordinal >= 0 && ordinal < CC_COUNTED_DEVICES)
    atomic_fetch_add(&primary_holds[ordinal], delta);
}

int cc_device_primary_started(int ordinal) {
  if (ordinal >= 0 && ordinal < CC_COUNTED_DEVICES && atomic_load(&primary_holds[ordinal]) > 0)
    return 1;
  /* Made by the caller through the driver or the CUDA runtime: the driver knows (asked only
   * once it is loaded, so that no cuInit under way on another thread is waited for). */
  if (!cc_driver_ready_now() || ordinal < 0 || ordinal >= cc_drv.device_count ||
      !DRV(cuDevicePrimaryCtxGetState))
    return 0;
  CUdevice d;
  unsigned flags = 0;
  int active = 0;
  return DRV(cuDeviceGet)(&d, ordinal) == CUDA_SUCCESS &&
         DRV(cuDevicePrimaryCtxGetState)(d, &flags, &active) == CUDA_SUCCESS && active;
}

cucore_status cucore_device_open(int ordinal, cucore_device **out) {
  cc_begin();
  CC_CHECK_ARG(out, "cucore_device_open", "out");
  *out = NULL;
  CUdevice d;
  cucore_status st = cc_device_cudev(ordinal, &d, "cucore_device_open");
  if (st != CUCORE_OK) return st;
  cucore_device *dev = cc_calloc(1, sizeof *dev, "a device handle");
  if (!dev) return CUCORE_HOST_OUT_OF_MEMORY;
  cc_handle_init(dev, CC_KIND_DEVICE);
  dev->ordinal = ordinal;
  dev->cudev = d;
  count_hold(ordinal, 1); /* being made, from now on */
  int64_t t0 = cc_phase_clock();
  CUresult r = DRV(cuDevicePrimaryCtxRetain)(&dev->ctx, d);
  if (r != CUDA_SUCCESS) {
    count_hold(ordinal, -1);
    free(dev);
    return cc_fail_cu(r, "cuDevicePrimaryCtxRetain", "device %d", ordinal);
  }
  cc_device_init_streams(dev);
  st = cc_device_make_current(dev);
  cc_phase_done(CUCORE_PHASE_CONTEXT, t0);
  if (st != CUCORE_OK) {
    (void)DRV(cuDevicePrimaryCtxRelease)(d);
    count_hold(ordinal, -1);
    free(dev);
    return st;
  }
  *out = dev;
  return CUCORE_OK;
}

void cc_device_init_streams(cucore_device *dev) {
  dev->default_stream = (struct cucore_stream){.hdr = {CC_KIND_STREAM},
                                               .handle = NULL,
                                               .dev = dev,
                                               .is_default = 1,
                                               .blocking = 1};
  dev->per_thread_stream = (struct cucore_stream){.hdr = {CC_KIND_STREAM},
                                                  .handle = CU_STREAM_PER_THREAD,
                                                  .dev = dev,
                                                  .is_default = 1,
                                                  .blocking = 1};
}

int cc_device_ordinal_of(CUdevice d) {
  for (int i = 0; i < cc_drv.device_count; i++) {
    CUdevice c;
    if (DRV(cuDeviceGet)(&c, i) == CUDA_SUCCESS && c == d) return i;
  }
  return -1;
}

/* The handle and its default streams dead, its shell to the quarantine. */
static void device_retire(cucore_device *dev) {
  cc_handle_kill(&dev->default_stream, CC_KIND_STREAM);
  cc_handle_kill(&dev->per_thread_stream, CC_KIND_STREAM);
  cc_handle_retire(dev, CC_KIND_DEVICE);
}

cucore_status cucore_device_close(cucore_device *dev) {
  cc_begin();
  if (!dev) return CUCORE_OK;
  CC_CHECK_HANDLE(dev, DEVICE, "cucore_device_close", "dev");
  if (dev->green) /* the green context owns it (green.c) */
    return cc_fail(CUCORE_MISUSE,
                   "cucore_device_close: this device handle belongs to a green "
                   "context (cucore_green_get_device); it goes with cucore_green_destroy");
  cc_refs_flush();     /* what destroyed graphs held (events of this device among it) goes first */
  if (dev->borrowed) { /* the caller's context: neither released nor unset */
    if (cc_tls_current == dev->ctx) cc_tls_current = NULL;
    device_retire(dev);
    return CUCORE_OK;
  }
  CUcontext cur = NULL;
  if (DRV(cuCtxGetCurrent)(&cur) == CUDA_SUCCESS && cur == dev->ctx)
    (void)DRV(cuCtxSetCurrent)(NULL);
  if (cc_tls_current == dev->ctx) cc_tls_current = NULL;
  CUresult r = DRV(cuDevicePrimaryCtxRelease)(dev->cudev);
  int ordinal = dev->ordinal;
  count_hold(ordinal, -1);
  device_retire(dev);
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuDevicePrimaryCtxRelease", "device %d", ordinal);
  return CUCORE_OK;
}

cucore_status cucore_device_get_ordinal(const cucore_device *dev, int *ordinal) {
  cc_begin();
  CC_CHECK_HANDLE(dev, DEVICE, "cucore_device_get_ordinal", "dev");
  CC_CHECK_ARG(ordinal, "cucore_device_get_ordinal", "ordinal");
  *ordinal = dev->ordinal;
  return CUCORE_OK;
}

cucore_status cucore_device_synchronize(cucore_device *dev) {
  cc_begin();
  CC_CHECK_HANDLE(dev, DEVICE, "cucore_device_synchronize", "dev");
  cucore_status st = cc_capture_check_unsafe(dev, 0, 1, "cucore_device_synchronize");
  if (st == CUCORE_OK) st = cc_device_make_current(dev);
  if (st != CUCORE_OK) return st;
  CUresult r = DRV(cuCtxSynchronize)();
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuCtxSynchronize", "device %d", dev->ordinal);
  return CUCORE_OK;
}

cucore_status cucore_device_get_mem_info(cucore_device *dev, size_t *free_bytes,
                                         size_t *total_bytes) {
  cc_begin();
  CC_CHECK_HANDLE(dev, DEVICE, "cucore_device_get_mem_info", "dev");
  CC_CHECK_ARG(free_bytes, "cucore_device_get_mem_info", "free_bytes");
  CC_CHECK_ARG(total_bytes, "cucore_device_get_mem_info", "total_bytes");
  cucore_status st = cc_device_make_current(dev);
  if (st != CUCORE_OK) return st;
  CUresult r = DRV(cuMemGetInfo)(free_bytes, total_bytes);
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuMemGetInfo", "device %d", dev->ordinal);
  return CUCORE_OK;
}

cucore_status cucore_device_get_stream_priorities(cucore_device *dev, int *least, int *greatest) {
  cc_begin();
  CC_CHECK_HANDLE(dev, DEVICE, "cucore_device_get_stream_priorities", "dev");
  CC_CHECK_ARG(least, "cucore_device_get_stream_priorities", "least");
  CC_CHECK_ARG(greatest, "cucore_device_get_stream_priorities", "greatest");
  cucore_status st = cc_device_make_current(dev);
  if (st != CUCORE_OK) return st;
  CUresult r = DRV(cuCtxGetStreamPriorityRange)(least, greatest);
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, "cuCtxGetStreamPriorityRange", "device %d", dev->ordinal);
  return CUCORE_OK;
}

cucore_status cucore_device_get_native(cucore_device *dev, void **cucontext, int *cudevice) {
  cc_begin();
  CC_CHECK_HANDLE(dev, DEVICE, "cucore_device_get_native", "dev");
  if (cucontext) *cucontext = dev->ctx;
  if (cudevice) *cudevice = (int)dev->cudev;
  return CUCORE_OK;
}

/* A context for calls that need one when the caller has none current (parameter queries of a
 * kernel looked up before any device was opened): device 0's primary context, retained once
 * for the life of the process. */
static pthread_once_t fallback_once = PTHREAD_ONCE_INIT;
static CUcontext fallback_ctx;
static CUresult fallback_result;

static void retain_fallback(void) {
  CUdevice d;
  int64_t t0 = cc_phase_clock();
  fallback_result = DRV(cuDeviceGet)(&d, 0);
  if (fallback_result == CUDA_SUCCESS)
    fallback_result = DRV(cuDevicePrimaryCtxRetain)(&fallback_ctx, d);
  if (fallback_result == CUDA_SUCCESS) count_hold(0, 1); /* held for the life of the process */
  cc_phase_done(CUCORE_PHASE_CONTEXT, t0);
}

cucore_status cc_ensure_context(void) {
  CUcontext cur = NULL;
  CUresult r = DRV(cuCtxGetCurrent)(&cur);
  if (r != CUDA_SUCCESS) /* not "none is current": the fallback would replace the caller's */
    return cc_fail_cu(r, "cuCtxGetCurrent", "asking for the current context");
  if (cur) return CUCORE_OK;
  pthread_once(&fallback_once, retain_fallback);
  if (fallback_result != CUDA_SUCCESS)
    return cc_fail_cu(fallback_result, "cuDevicePrimaryCtxRetain",
                      "device 0, for a query that needs a context");
  r = DRV(cuCtxSetCurrent)(fallback_ctx);
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuCtxSetCurrent", "device 0's primary context");
  return CUCORE_OK;
}
