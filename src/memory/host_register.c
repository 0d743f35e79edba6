/*
 * host_register.c -- page-locking the caller's memory (cuMemHostRegister) and undoing it, with
 * the range recorded for bounds checks. Registered memory may have a device address of its own
 * (the driver's "disjoint addressing" exception); when it does, that range is recorded too, as
 * an alias of the host range.
 */
#include "memory/memory.h"

#include <stdio.h>

cucore_status cucore_host_register(cucore_device *dev, void *ptr, size_t bytes, unsigned flags) {
  cc_begin();
  const char *fn = "cucore_host_register";
  CC_CHECK_ARG(ptr, fn, "ptr");
  CC_CHECK_HANDLE(dev, DEVICE, fn, "dev");
  unsigned known = CUCORE_HOST_REGISTER_PORTABLE | CUCORE_HOST_REGISTER_DEVICEMAP |
                   CUCORE_HOST_REGISTER_IOMEMORY | CUCORE_HOST_REGISTER_READ_ONLY;
  if (flags & ~known)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: unknown flags 0x%x (expected CUCORE_HOST_REGISTER_PORTABLE, DEVICEMAP, "
                   "IOMEMORY, READ_ONLY)",
                   fn, flags & ~known);
  cucore_status st = cc_mem_check_alloc_size(bytes, fn);
  if (st != CUCORE_OK) return st;
  uint64_t lo = (uint64_t)(uintptr_t)ptr, hi;
  if (!cc_add_u64(lo, bytes, &hi))
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: %zu bytes at %p wrap around the address space", fn,
                   bytes, ptr);
  cc_mem_rec other;
  if (cc_reg_find_overlap(&cc_mem_registry, lo, hi, &other)) {
    char what[256];
    cc_rec_describe(&other, what, sizeof what);
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: %zu bytes at %p overlap %s; a range is registered once, and memory "
                   "cucore pinned is pinned already",
                   fn, bytes, ptr, what);
  }
  st = cc_mem_capture_check(dev, NULL, 0, fn);
  if (st == CUCORE_OK) st = cc_mem_enter(dev, NULL, fn);
  if (st != CUCORE_OK) return st;
  if (flags & CUCORE_HOST_REGISTER_READ_ONLY) {
    int ro = 0;
    if (DRV(cuDeviceGetAttribute)(&ro, CU_DEVICE_ATTRIBUTE_READ_ONLY_HOST_REGISTER_SUPPORTED,
                                  dev->cudev) == CUDA_SUCCESS &&
        !ro)
      return cc_fail(CUCORE_NOT_SUPPORTED,
                     "%s: device %d cannot register host memory read-only "
                     "(CU_DEVICE_ATTRIBUTE_READ_ONLY_HOST_REGISTER_SUPPORTED is 0)",
                     fn, dev->ordinal);
  }
  CUresult r = DRV(cuMemHostRegister)(ptr, bytes, flags);
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, "cuMemHostRegister", "%zu bytes at %p, flags 0x%x", bytes, ptr, flags);
  cc_mem_rec rec = {.base = lo,
                    .size = bytes,
                    .kind = CUCORE_MEM_REGISTERED,
                    .ordinal = (flags & CUCORE_HOST_REGISTER_PORTABLE) ? -1 : dev->ordinal,
                    .ctx = dev->ctx,
                    .aux = flags};
  if (flags & CUCORE_HOST_REGISTER_DEVICEMAP) {
    CUdeviceptr dp = 0;
    if (DRV(cuMemHostGetDevicePointer)(&dp, ptr, 0) == CUDA_SUCCESS && dp && dp != lo) {
      rec.alias = dp;
      cc_mem_rec alias = rec;
      alias.base = dp;
      alias.alias = lo;
      alias.flags = CC_REC_ALIAS;
      st = cc_mem_record(&alias, fn);
      if (st != CUCORE_OK) {
        (void)DRV(cuMemHostUnregister)(ptr);
        return st;
      }
    }
  }
  st = cc_mem_record(&rec, fn);
  if (st != CUCORE_OK) {
    if (rec.alias) (void)cc_reg_take(&cc_mem_registry, rec.alias, NULL, NULL, 1, NULL);
    (void)DRV(cuMemHostUnregister)(ptr);
  }
  return st;
}

static int accept_registered(const cc_mem_rec *rec, void *ctx) {
  (void)ctx;
  return rec->kind == CUCORE_MEM_REGISTERED && !(rec->flags & CC_REC_ALIAS);
}

cucore_status cucore_host_unregister(cucore_device *dev, void *ptr) {
  cc_begin();
  const char *fn = "cucore_host_unregister";
  CC_CHECK_ARG(ptr, fn, "ptr");
  CC_CHECK_HANDLE(dev, DEVICE, fn, "dev");
  cucore_status cst = cc_mem_capture_check(dev, NULL, 0, fn);
  if (cst != CUCORE_OK) return cst;
  uint64_t a = (uint64_t)(uintptr_t)ptr;
  cc_mem_rec rec;
  cc_reg_result res = cc_reg_take(&cc_mem_registry, a, accept_registered, NULL, 0, &rec);
  if (res != CC_REG_OK)
    return cc_mem_explain_take(res, &rec, a, fn,
                               "the start of a range registered with cucore_host_register");
  if (rec.alias) (void)cc_reg_take(&cc_mem_registry, rec.alias, NULL, NULL, 1, NULL);
  cucore_status st = cc_device_make_current(dev);
  if (st != CUCORE_OK) return st;
  CUresult r = DRV(cuMemHostUnregister)(ptr);
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuMemHostUnregister", "%p", ptr);
  return CUCORE_OK;
}

cucore_status cucore_host_get_device_pointer(cucore_device *dev, void *ptr, cucore_devptr *out) {
  cc_begin();
  const char *fn = "cucore_host_get_device_pointer";
  CC_CHECK_ARG(out, fn, "out");
  *out = 0;
  CC_CHECK_ARG(ptr, fn, "ptr");
  cucore_status st = cc_mem_enter(dev, NULL, fn);
  if (st != CUCORE_OK) return st;
  CUdeviceptr dp = 0;
  CUresult r = DRV(cuMemHostGetDevicePointer)(&dp, ptr, 0);
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, "cuMemHostGetDevicePointer",
                      "%p (is it pinned, or registered with CUCORE_HOST_REGISTER_DEVICEMAP?)", ptr);
  *out = dp;
  return CUCORE_OK;
}
