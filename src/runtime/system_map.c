/*
 * system_map.c -- from a cucore device to NVML's GPU (see system_map.h). A cucore device is
 * found in NVML by its PCI bus id (cuDeviceGetPCIBusId), else by its UUID, the handle kept
 * after the first lookup.
 */
#define _GNU_SOURCE
#include "runtime/system_map.h"
#include "runtime/runtime.h"

#include <pthread.h>
#include <stdio.h>

/* "GPU-" and the UUID's 16 bytes in NVML's 8-4-4-4-12 form. */
static void uuid_text(const CUuuid *u, char *out, size_t cap) {
  const unsigned char *b = (const unsigned char *)u->bytes;
  snprintf(out, cap, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
           b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
           b[14], b[15]);
}

/* The NVML handle of CUdevice `d` (cucore device `ordinal`). */
static cucore_status nvml_of_cudev(CUdevice d, int ordinal, cc_nvml_device *h) {
  char bus[64] = "", uuid[64] = "";
  cc_nvml_return r = CC_NVML_ERROR_NOT_FOUND;
  if (DRV(cuDeviceGetPCIBusId) && DRV(cuDeviceGetPCIBusId)(bus, sizeof bus, d) == CUDA_SUCCESS)
    r = cc_nvml_fn.by_pci(bus, h);
  CUuuid u;
  if (r != CC_NVML_SUCCESS && DRV(cuDeviceGetUuid) && DRV(cuDeviceGetUuid)(&u, d) == CUDA_SUCCESS) {
    uuid_text(&u, uuid, sizeof uuid);
    r = cc_nvml_fn.by_uuid(uuid, h);
  }
  if (r == CC_NVML_SUCCESS) return CUCORE_OK;
  return cc_fail_nvml(r, "nvmlDeviceGetHandleByPciBusId_v2/ByUUID",
                      "NVML does not list cucore device %d (PCI bus id `%s`, UUID `%s`)", ordinal,
                      bus, uuid[0] ? uuid : "not asked");
}

cucore_status cc_sys_handle_fresh(const char *fn, int ordinal, cc_nvml_device *h) {
  cucore_status st = cc_driver_need_device();
  if (st != CUCORE_OK) return st;
  if (ordinal < 0 || ordinal >= cc_drv.device_count)
    return cc_fail(CUCORE_INVALID_DEVICE, "%s: device %d does not exist (expected 0 to %d)", fn,
                   ordinal, cc_drv.device_count - 1);
  CUdevice d;
  CUresult r = DRV(cuDeviceGet)(&d, ordinal);
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuDeviceGet", "device %d", ordinal);
  st = cc_nvml_load();
  if (st == CUCORE_OK) st = nvml_of_cudev(d, ordinal, h);
  return st;
}

/* NVML's handle of each cucore device, found once. */
#define KEPT_HANDLES 64
static pthread_mutex_t handles_lock = PTHREAD_MUTEX_INITIALIZER;
static cc_nvml_device handles[KEPT_HANDLES];

cucore_status cc_sys_handle(const char *fn, int ordinal, cc_nvml_device *h) {
  *h = NULL;
  if (ordinal >= 0 && ordinal < KEPT_HANDLES) {
    pthread_mutex_lock(&handles_lock);
    *h = handles[ordinal];
    pthread_mutex_unlock(&handles_lock);
  }
  if (*h) return CUCORE_OK;
  cucore_status st = cc_sys_handle_fresh(fn, ordinal, h);
  if (st != CUCORE_OK || ordinal >= KEPT_HANDLES) return st;
  pthread_mutex_lock(&handles_lock);
  handles[ordinal] = *h;
  pthread_mutex_unlock(&handles_lock);
  return CUCORE_OK;
}

cucore_status cc_sys_pair(const char *fn, int a, int b, cc_nvml_device *ha, cc_nvml_device *hb) {
  cucore_status st = cc_sys_handle(fn, a, ha);
  if (st == CUCORE_OK) st = cc_sys_handle(fn, b, hb);
  if (st != CUCORE_OK) return st;
  if (a == b)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: both devices are %d; two different GPUs are expected", fn, a);
  return CUCORE_OK;
}

cucore_status cc_sys_need(const char *fn, int present, const char *symbol) {
  return present ? CUCORE_OK : cc_nvml_missing(fn, symbol);
}
