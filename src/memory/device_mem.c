/*
 * device_mem.c -- device, pitched, managed and pinned host allocations, each recorded so later
 * copies are bounds-checked and frees of anything else are refused with a reason (the helpers
 * every allocating file shares are in mem_common.c).
 */
#include "memory/resource.h"

#include <stdio.h>
#include <string.h>

/* ---- device memory ------------------------------------------------------------------------ */

/* Before a synchronous allocation: refused while a capture forbids it, then the device entered
 * (cc_mem_enter). */
static cucore_status alloc_enter(cucore_device *dev, const char *fn) {
  cucore_status st = cc_mem_capture_check(dev, NULL, 0, fn);
  if (st == CUCORE_OK) st = cc_mem_enter(dev, NULL, fn);
  return st;
}

cucore_status cucore_mem_alloc(cucore_device *dev, size_t bytes, cucore_devptr *out) {
  cc_begin();
  CC_CHECK_ARG(out, "cucore_mem_alloc", "out");
  *out = 0;
  cucore_status st = cc_mem_check_alloc_size(bytes, "cucore_mem_alloc");
  if (st == CUCORE_OK) st = alloc_enter(dev, "cucore_mem_alloc");
  if (st != CUCORE_OK) return st;
  cucore_mem_resource *res = cc_mres_of(dev);
  if (res) return cc_mres_alloc(res, dev, NULL, bytes, out, "cucore_mem_alloc");
  CUdeviceptr p = 0;
  CUresult r = DRV(cuMemAlloc)(&p, bytes);
  if (r != CUDA_SUCCESS)
    return cc_mem_fail_alloc(r, "cuMemAlloc", "cucore_mem_alloc", dev->ordinal, bytes, NULL);
  cc_mem_rec rec = {.base = p,
                    .size = bytes,
                    .kind = CUCORE_MEM_DEVICE,
                    .ordinal = dev->ordinal,
                    .ctx = dev->ctx};
  st = cc_mem_record_or_free(&rec, "cucore_mem_alloc");
  if (st != CUCORE_OK) return st;
  *out = (cucore_devptr)p;
  return CUCORE_OK;
}

typedef struct device_free_ctx {
  const cucore_device *dev;
  int wrong_device;
} device_free_ctx;

static int accept_device_free(const cc_mem_rec *rec, void *ctx) {
  device_free_ctx *c = ctx;
  switch (rec->kind) {
  case CUCORE_MEM_DEVICE:
  case CUCORE_MEM_DEVICE_PITCHED:
  case CUCORE_MEM_MANAGED:
  case CUCORE_MEM_RESOURCE:
  case CUCORE_MEM_IPC_IMPORTED: break;
  default: return 0;
  }
  if (rec->ctx && rec->ctx != c->dev->ctx) {
    c->wrong_device = 1;
    return 0;
  }
  return 1;
}

cucore_status cucore_mem_free(cucore_device *dev, cucore_devptr ptr) {
  cc_begin();
  if (ptr == 0) return CUCORE_OK;
  CC_CHECK_HANDLE(dev, DEVICE, "cucore_mem_free", "dev");
  cucore_status cst = cc_mem_capture_check(dev, NULL, 0, "cucore_mem_free");
  if (cst != CUCORE_OK) return cst;
  if (cc_mres_free_mine(ptr, dev, dev->ctx, NULL, &cst, "cucore_mem_free")) return cst;
  device_free_ctx c = {dev, 0};
  cc_mem_rec rec;
  cc_reg_result res = cc_reg_take(&cc_mem_registry, ptr, accept_device_free, &c, 0, &rec);
  if (res != CC_REG_OK) {
    if (res == CC_REG_REJECTED && c.wrong_device)
      return cc_fail(CUCORE_INVALID_ARGUMENT,
                     "cucore_mem_free: 0x%llx was allocated on device %d; it is freed through "
                     "device %d (pass the device it belongs to)",
                     (unsigned long long)ptr, rec.ordinal, dev->ordinal);
    return cc_mem_explain_take(res, &rec, ptr, "cucore_mem_free",
                               "device memory from cucore_mem_alloc, cucore_mem_alloc_pitch, "
                               "cucore_mem_alloc_managed or an IPC import");
  }

  cucore_status st = cc_device_make_current(dev);
  if (st != CUCORE_OK) return st;
  if (rec.kind == CUCORE_MEM_RESOURCE) return cc_mres_give_back(&rec, NULL, "cucore_mem_free");
  CUresult r = DRV(cuMemFree)((CUdeviceptr)ptr);
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, "cuMemFree", "address 0x%llx on device %d", (unsigned long long)ptr,
                      dev->ordinal);
  return CUCORE_OK;
}

cucore_status cucore_mem_alloc_pitch(cucore_device *dev, size_t width_bytes, size_t height,
                                     unsigned element_bytes, cucore_devptr *out, size_t *pitch) {
  cc_begin();
  const char *fn = "cucore_mem_alloc_pitch";
  CC_CHECK_ARG(out, fn, "out");
  *out = 0;
  CC_CHECK_ARG(pitch, fn, "pitch");
  *pitch = 0;
  if (width_bytes == 0 || height == 0)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: %zu x %zu bytes is empty (expected width and "
                   "height > 0)",
                   fn, width_bytes, height);
  if (element_bytes != 4 && element_bytes != 8 && element_bytes != 16)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: element size %u is not 4, 8 or 16 (the largest access kernels make)", fn,
                   element_bytes);
  cucore_status st = cc_check_size(width_bytes, fn, "the width");
  if (st == CUCORE_OK) st = cc_check_size(height, fn, "the height");
  if (st != CUCORE_OK) return st;
  uint64_t total;
  if (!cc_mul_u64(width_bytes, height, &total) || total >> 63)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: %zu x %zu bytes overflows", fn, width_bytes,
                   height);
  st = alloc_enter(dev, fn);
  if (st != CUCORE_OK) return st;
  CUdeviceptr p = 0;
  size_t pp = 0;
  CUresult r = DRV(cuMemAllocPitch)(&p, &pp, width_bytes, height, element_bytes);
  if (r != CUDA_SUCCESS)
    return cc_mem_fail_alloc(r, "cuMemAllocPitch", fn, dev->ordinal, total, NULL);
  cc_mem_rec rec = {.base = p,
                    .size = (uint64_t)pp * height,
                    .kind = CUCORE_MEM_DEVICE_PITCHED,
                    .ordinal = dev->ordinal,
                    .ctx = dev->ctx,
                    .aux = pp};
  st = cc_mem_record_or_free(&rec, fn);
  if (st != CUCORE_OK) return st;
  *out = p;
  *pitch = pp;
  return CUCORE_OK;
}

cucore_status cucore_mem_alloc_managed(cucore_device *dev, size_t bytes, unsigned attach,
                                       cucore_devptr *out) {
  cc_begin();
  const char *fn = "cucore_mem_alloc_managed";
  CC_CHECK_ARG(out, fn, "out");
  *out = 0;
  cucore_status st = cc_mem_check_alloc_size(bytes, fn);
  if (st != CUCORE_OK) return st;
  if (attach != CUCORE_MANAGED_GLOBAL && attach != CUCORE_MANAGED_HOST)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: attach flags 0x%x are not CUCORE_MANAGED_GLOBAL (1) or CUCORE_MANAGED_HOST "
                   "(2)",
                   fn, attach);
  st = alloc_enter(dev, fn);
  if (st != CUCORE_OK) return st;
  int managed = 0;
  if (DRV(cuDeviceGetAttribute)(&managed, CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, dev->cudev) ==
          CUDA_SUCCESS &&
      !managed)
    return cc_fail(CUCORE_NOT_SUPPORTED, "%s: device %d does not support managed memory", fn,
                   dev->ordinal);
  CUdeviceptr p = 0;
  CUresult r = DRV(cuMemAllocManaged)(&p, bytes, attach);
  if (r != CUDA_SUCCESS)
    return cc_mem_fail_alloc(r, "cuMemAllocManaged", fn, dev->ordinal, bytes, NULL);
  cc_mem_rec rec = {.base = p,
                    .size = bytes,
                    .kind = CUCORE_MEM_MANAGED,
                    .ordinal = dev->ordinal,
                    .ctx = dev->ctx};
  st = cc_mem_record_or_free(&rec, fn);
  if (st != CUCORE_OK) return st;
  *out = p;
  return CUCORE_OK;
}

/* ---- pinned host memory ------------------------------------------------------------------- */

cucore_status cucore_host_alloc(cucore_device *dev, size_t bytes, void **out) {
  cc_begin();
  CC_CHECK_ARG(out, "cucore_host_alloc", "out");
  *out = NULL;
  cucore_status st = cc_mem_check_alloc_size(bytes, "cucore_host_alloc");
  if (st == CUCORE_OK) st = alloc_enter(dev, "cucore_host_alloc");
  if (st != CUCORE_OK) return st;
  void *p = NULL;
  CUresult r = DRV(cuMemHostAlloc)(&p, bytes, CU_MEMHOSTALLOC_PORTABLE);
  if (r != CUDA_SUCCESS) {
    char want[32], avail[32];
    size_t av = cc_host_mem_available();
    cucore_status st2 = cc_fail_cu(r, "cuMemHostAlloc",
                                   "cucore_host_alloc asked for %s (%zu bytes) of pinned host "
                                   "memory; the host has %s (%zu bytes) available (MemAvailable)",
                                   cc_format_bytes(bytes, want, sizeof want), bytes,
                                   cc_format_bytes(av, avail, sizeof avail), av);
    /* Pinned memory is host memory: out of it is CUCORE_HOST_OUT_OF_MEMORY. */
    return r == CUDA_ERROR_OUT_OF_MEMORY
               ? cc_status(CUCORE_HOST_OUT_OF_MEMORY, CUCORE_SOURCE_DRIVER, (int)r)
               : st2;
  }
  cc_mem_rec rec = {.base = (uint64_t)(uintptr_t)p,
                    .size = bytes,
                    .kind = CUCORE_MEM_PINNED,
                    .ordinal = -1,
                    .ctx = dev->ctx};
  st = cc_mem_record(&rec, "cucore_host_alloc");
  if (st != CUCORE_OK) {
    (void)DRV(cuMemFreeHost)(p);
    return st;
  }
  *out = p;
  return CUCORE_OK;
}

static int accept_pinned(const cc_mem_rec *rec, void *ctx) {
  (void)ctx;
  return rec->kind == CUCORE_MEM_PINNED;
}

cucore_status cucore_host_free(cucore_device *dev, void *ptr) {
  cc_begin();
  if (!ptr) return CUCORE_OK;
  CC_CHECK_HANDLE(dev, DEVICE, "cucore_host_free", "dev");
  cucore_status cst = cc_mem_capture_check(dev, NULL, 0, "cucore_host_free");
  if (cst != CUCORE_OK) return cst;
  uint64_t a = (uint64_t)(uintptr_t)ptr;
  cc_mem_rec rec;
  cc_reg_result res = cc_reg_take(&cc_mem_registry, a, accept_pinned, NULL, 0, &rec);
  if (res != CC_REG_OK)
    return cc_mem_explain_take(res, &rec, a, "cucore_host_free",
                               "pinned host memory from cucore_host_alloc");
  cucore_status st = cc_device_make_current(dev);
  if (st != CUCORE_OK) return st;
  CUresult r = DRV(cuMemFreeHost)(ptr);
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuMemFreeHost", NULL);
  return CUCORE_OK;
}
