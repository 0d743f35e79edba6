/*
 * managed.c -- managed memory's prefetch (cuMemPrefetchAsync with a CUmemLocation, the CUDA
 * 12.2 ABI that CUDA 13 makes the only one), advice (cuMemAdvise, same) and range attributes
 * (cuMemRangeGetAttribute). Ranges on recorded memory are checked to lie in one managed
 * allocation first.
 */
#include "memory/memory.h"

#include <string.h>

/* A cucore location as the driver's; CUCORE_INVALID_DEVICE for an ordinal out of range. */
static cucore_status to_cu_location(cucore_location in, CUmemLocation *out, const char *fn) {
  memset(out, 0, sizeof *out);
  switch (in.type) {
  case CUCORE_LOCATION_DEVICE: {
    if (in.id < 0 || in.id >= cc_drv.device_count)
      return cc_fail(CUCORE_INVALID_DEVICE, "%s: device %d does not exist (%d present)", fn,
                     in.id, cc_drv.device_count);
    CUdevice d = 0;
    CUresult r = DRV(cuDeviceGet)(&d, in.id);
    if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuDeviceGet", "device %d", in.id);
    out->type = CU_MEM_LOCATION_TYPE_DEVICE;
    out->id = (int)d;
    return CUCORE_OK;
  }
  case CUCORE_LOCATION_HOST: out->type = CU_MEM_LOCATION_TYPE_HOST; return CUCORE_OK;
  case CUCORE_LOCATION_HOST_NUMA:
    out->type = CU_MEM_LOCATION_TYPE_HOST_NUMA;
    out->id = in.id;
    return CUCORE_OK;
  case CUCORE_LOCATION_HOST_NUMA_CURRENT:
    out->type = CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT;
    return CUCORE_OK;
  default:
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: location type %d is not DEVICE (1), HOST (2), HOST_NUMA (3) or "
                   "HOST_NUMA_CURRENT (4)", fn, (int)in.type);
  }
}

/* The range lies in one allocation, and when cucore recorded it, a managed one. */
static cucore_status managed_range(uint64_t ptr, size_t bytes, const char *fn, cc_mem_rec *rec,
                                   int *known) {
  *known = 0;
  if (!ptr) return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: the address is 0", fn);
  if (bytes == 0) return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: the size is 0", fn);
  cucore_status st = cc_check_size(bytes, fn, "the size");
  if (st == CUCORE_OK) st = cc_mem_check_range(ptr, bytes, fn, "range");
  if (st != CUCORE_OK) return st;
  if (cc_reg_find(&cc_mem_registry, ptr, rec)) {
    *known = 1;
    if (rec->kind != CUCORE_MEM_MANAGED) {
      char what[256];
      cc_rec_describe(rec, what, sizeof what);
      return cc_fail(CUCORE_INVALID_ARGUMENT,
                     "%s: 0x%llx is in %s; prefetch and advice apply to managed memory "
                     "(cucore_mem_alloc_managed)", fn, (unsigned long long)ptr, what);
    }
  }
  return CUCORE_OK;
}

cucore_status cucore_mem_prefetch(cucore_devptr ptr, size_t bytes, cucore_location to,
                                  cucore_stream *s) {
  cc_begin();
  const char *fn = "cucore_mem_prefetch";
  CC_CHECK_HANDLE(s, STREAM, fn, "stream");
  cc_mem_rec rec;
  int known;
  cucore_status st = managed_range(ptr, bytes, fn, &rec, &known);
  if (st == CUCORE_OK) st = cc_driver_need_device();
  if (st != CUCORE_OK) return st;
  st = CC_DRV_REQUIRE(cuMemPrefetchAsync);
  if (st != CUCORE_OK) return st;
  CUmemLocation loc;
  st = to_cu_location(to, &loc, fn);
  if (st != CUCORE_OK) return st;
  if (to.type == CUCORE_LOCATION_DEVICE) {
    int cma = 0;
    if (DRV(cuDeviceGetAttribute)(&cma, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS,
                                  (CUdevice)loc.id) == CUDA_SUCCESS && !cma)
      return cc_fail(CUCORE_NOT_SUPPORTED,
                     "%s: device %d lacks concurrent managed access "
                     "(CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS is 0): prefetching to it is "
                     "not possible", fn, to.id);
  }
  st = cc_device_make_current(s->dev);
  if (st != CUCORE_OK) return st;
  CUresult r = DRV(cuMemPrefetchAsync)((CUdeviceptr)ptr, bytes, loc, 0, s->handle);
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, "cuMemPrefetchAsync", "%zu bytes at 0x%llx", bytes,
                      (unsigned long long)ptr);
  return CUCORE_OK;
}

/* Makes a context current for calls that need one: the record's, else any. Returns 1 when a
 * context was pushed (pop it after). */
static int enter_rec_context(const cc_mem_rec *rec, int known, cucore_status *st) {
  *st = CUCORE_OK;
  if (known && rec->ctx && DRV(cuCtxPushCurrent)(rec->ctx) == CUDA_SUCCESS) return 1;
  *st = cc_ensure_context();
  return 0;
}

cucore_status cucore_mem_advise(cucore_devptr ptr, size_t bytes, cucore_mem_advice advice,
                                cucore_location where) {
  cc_begin();
  const char *fn = "cucore_mem_advise";
  if ((int)advice < CUCORE_ADVISE_READ_MOSTLY || (int)advice > CUCORE_ADVISE_UNSET_ACCESSED_BY)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: advice %d is not a cucore_mem_advice (1..6)",
                   fn, (int)advice);
  cc_mem_rec rec;
  int known;
  cucore_status st = managed_range(ptr, bytes, fn, &rec, &known);
  if (st == CUCORE_OK) st = cc_driver_need_device();
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuMemAdvise);
  if (st != CUCORE_OK) return st;
  CUmemLocation loc;
  memset(&loc, 0, sizeof loc);
  int needs_where = advice != CUCORE_ADVISE_READ_MOSTLY &&
                    advice != CUCORE_ADVISE_UNSET_READ_MOSTLY &&
                    advice != CUCORE_ADVISE_UNSET_PREFERRED_LOCATION;
  if (needs_where) {
    st = to_cu_location(where, &loc, fn);
    if (st != CUCORE_OK) return st;
  } else {
    loc.type = CU_MEM_LOCATION_TYPE_HOST; /* ignored by the driver for these */
  }
  int pushed = enter_rec_context(&rec, known, &st);
  if (st != CUCORE_OK) return st;
  CUresult r = DRV(cuMemAdvise)((CUdeviceptr)ptr, bytes, (CUmem_advise)advice, loc);
  CUcontext old;
  if (pushed) (void)DRV(cuCtxPopCurrent)(&old);
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, "cuMemAdvise", "advice %d on %zu bytes at 0x%llx", (int)advice, bytes,
                      (unsigned long long)ptr);
  return CUCORE_OK;
}

/* A device id the range attributes report (a CUdevice, CU_DEVICE_CPU or CU_DEVICE_INVALID). */
static cucore_location from_device_id(int id) {
  cucore_location l = {CUCORE_LOCATION_NONE, 0};
  if (id == CU_DEVICE_CPU) {
    l.type = CUCORE_LOCATION_HOST;
  } else if (id >= 0) {
    int ordinal = cc_device_ordinal_of((CUdevice)id);
    if (ordinal >= 0) {
      l.type = CUCORE_LOCATION_DEVICE;
      l.id = ordinal;
    }
  }
  return l;
}

cucore_status cucore_mem_range_get_info(cucore_devptr ptr, size_t bytes,
                                        cucore_mem_range_info *out) {
  cc_begin();
  const char *fn = "cucore_mem_range_get_info";
  CC_CHECK_ARG(out, fn, "out");
  memset(out, 0, sizeof *out);
  cc_mem_rec rec;
  int known;
  cucore_status st = managed_range(ptr, bytes, fn, &rec, &known);
  if (st == CUCORE_OK) st = cc_driver_need_device();
  if (st != CUCORE_OK) return st;
  int pushed = enter_rec_context(&rec, known, &st);
  if (st != CUCORE_OK) return st;
  int read_mostly = 0, preferred = CU_DEVICE_INVALID, last = CU_DEVICE_INVALID;
  int accessed[32];
  for (int i = 0; i < 32; i++) accessed[i] = CU_DEVICE_INVALID;
  CUresult r = DRV(cuMemRangeGetAttribute)(&read_mostly, sizeof read_mostly,
                                           CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, ptr, bytes);
  if (r == CUDA_SUCCESS)
    r = DRV(cuMemRangeGetAttribute)(&preferred, sizeof preferred,
                                    CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION, ptr, bytes);
  if (r == CUDA_SUCCESS)
    r = DRV(cuMemRangeGetAttribute)(&last, sizeof last,
                                    CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, ptr, bytes);
  if (r == CUDA_SUCCESS)
    r = DRV(cuMemRangeGetAttribute)(accessed, sizeof accessed,
                                    CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY, ptr, bytes);
  CUcontext old;
  if (pushed) (void)DRV(cuCtxPopCurrent)(&old);
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, "cuMemRangeGetAttribute", "%zu bytes at 0x%llx", bytes,
                      (unsigned long long)ptr);
  out->read_mostly = read_mostly != 0;
  out->preferred = from_device_id(preferred);
  out->last_prefetch = from_device_id(last);
  for (int i = 0; i < 32; i++) {
    if (accessed[i] == CU_DEVICE_INVALID) continue;
    cucore_location l = from_device_id(accessed[i]);
    out->accessed_by[out->accessed_by_count++] = l.type == CUCORE_LOCATION_DEVICE ? l.id : -1;
  }
  return CUCORE_OK;
}
