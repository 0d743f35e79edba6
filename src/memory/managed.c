/*
 * managed.c -- managed memory's prefetch (cuMemPrefetchAsync with a CUmemLocation, the CUDA
 * 12.2 ABI that CUDA 13 makes the only one), advice (cuMemAdvise, same) and range attributes
 * (cuMemRangeGetAttribute). Ranges on recorded memory are checked to lie in one managed
 * allocation first.
 */
#define _GNU_SOURCE
#include "memory/memory.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* A host NUMA node the system has: node N exists when /sys/devices/system/node/nodeN does
 * (a system without that folder has node 0 only). */
static cucore_status check_numa_node(int id, const char *fn) {
  if (id < 0)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: host NUMA node %d is negative (nodes are 0, 1, "
                   "...; CUCORE_LOCATION_HOST_NUMA_CURRENT names the calling thread's)",
                   fn, id);
  char path[64];
  struct stat sb;
  if (stat("/sys/devices/system/node", &sb) != 0) {
    if (id == 0) return CUCORE_OK;
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: host NUMA node %d does not exist (the system "
                   "shows no NUMA nodes: only node 0)",
                   fn, id);
  }
  snprintf(path, sizeof path, "/sys/devices/system/node/node%d", id);
  if (stat(path, &sb) == 0) return CUCORE_OK;
  int count = 0;
  for (int i = 0; i < 1024; i++) {
    snprintf(path, sizeof path, "/sys/devices/system/node/node%d", i);
    if (stat(path, &sb) == 0) count = i + 1;
  }
  return cc_fail(CUCORE_INVALID_ARGUMENT,
                 "%s: host NUMA node %d does not exist (the highest is "
                 "node %d, /sys/devices/system/node)",
                 fn, id, count - 1);
}

cucore_status cucore_host_get_numa_node(int *node) {
  cc_begin();
  CC_CHECK_ARG(node, "cucore_host_get_numa_node", "node");
  *node = 0;
  unsigned cpu = 0, numa = 0;
  if (syscall(SYS_getcpu, &cpu, &numa, NULL) != 0)
    return cc_fail(cc_status(CUCORE_NOT_SUPPORTED, CUCORE_SOURCE_ERRNO, errno),
                   "cucore_host_get_numa_node: getcpu(2) failed: %s", strerror(errno));
  *node = (int)numa;
  return CUCORE_OK;
}

/* A cucore location as the driver's (devices that exist, host NUMA nodes the system has);
 * CUCORE_INVALID_DEVICE for an ordinal out of range. */
cucore_status cc_managed_location(cucore_location in, CUmemLocation *out, const char *fn) {
  memset(out, 0, sizeof *out);
  switch (in.type) {
  case CUCORE_LOCATION_DEVICE: {
    if (in.id < 0 || in.id >= cc_drv.device_count)
      return cc_fail(CUCORE_INVALID_DEVICE, "%s: device %d does not exist (%d present)", fn, in.id,
                     cc_drv.device_count);
    CUdevice d = 0;
    CUresult r = DRV(cuDeviceGet)(&d, in.id);
    if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuDeviceGet", "device %d", in.id);
    out->type = CU_MEM_LOCATION_TYPE_DEVICE;
    out->id = (int)d;
    return CUCORE_OK;
  }
  case CUCORE_LOCATION_HOST: out->type = CU_MEM_LOCATION_TYPE_HOST; return CUCORE_OK;
  case CUCORE_LOCATION_HOST_NUMA: {
    cucore_status st = check_numa_node(in.id, fn);
    if (st != CUCORE_OK) return st;
    out->type = CU_MEM_LOCATION_TYPE_HOST_NUMA;
    out->id = in.id;
    return CUCORE_OK;
  }
  case CUCORE_LOCATION_HOST_NUMA_CURRENT:
    out->type = CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT;
    return CUCORE_OK;
  default:
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: location type %d is not DEVICE (1), HOST (2), HOST_NUMA (3) or "
                   "HOST_NUMA_CURRENT (4)",
                   fn, (int)in.type);
  }
}

/* The range lies in one allocation, and when cucore recorded it, a managed one. */
cucore_status cc_managed_range(uint64_t ptr, size_t bytes, const char *fn, cc_mem_rec *rec,
                               int *known) {
  *known = 0;
  if (!ptr) return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: the address is 0", fn);
  if (bytes == 0) return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: the size is 0", fn);
  cucore_status st = cc_check_size(bytes, fn, "the size");
  if (st == CUCORE_OK) st = cc_mem_check_range(ptr, bytes, fn, "range");
  if (st != CUCORE_OK) return st;
  if (cc_reg_find(&cc_mem_registry, ptr, rec)) {
    *known = 1;
    if (rec->kind != CUCORE_MEM_MANAGED && rec->kind != CUCORE_MEM_POOL_MANAGED) {
      char what[256];
      cc_rec_describe(rec, what, sizeof what);
      return cc_fail(CUCORE_INVALID_ARGUMENT,
                     "%s: 0x%llx is in %s; prefetch and advice apply to managed memory "
                     "(cucore_mem_alloc_managed)",
                     fn, (unsigned long long)ptr, what);
    }
  }
  return CUCORE_OK;
}

cucore_status cc_managed_prefetch_target(cucore_location to, CUmemLocation *loc, const char *fn) {
  cucore_status st = cc_managed_location(to, loc, fn);
  if (st != CUCORE_OK || to.type != CUCORE_LOCATION_DEVICE) return st;
  int cma = 0;
  if (DRV(cuDeviceGetAttribute)(&cma, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS,
                                (CUdevice)loc->id) == CUDA_SUCCESS &&
      !cma)
    return cc_fail(CUCORE_NOT_SUPPORTED,
                   "%s: device %d lacks concurrent managed access "
                   "(CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS is 0): prefetching to it is "
                   "not possible",
                   fn, to.id);
  return CUCORE_OK;
}

/* The checks of a range call: the range (cc_managed_range), then a driver with a device. */
static cucore_status range_enter(uint64_t ptr, size_t bytes, const char *fn, cc_mem_rec *rec,
                                 int *known) {
  cucore_status st = cc_managed_range(ptr, bytes, fn, rec, known);
  if (st == CUCORE_OK) st = cc_driver_need_device();
  return st;
}

cucore_status cucore_mem_prefetch(cucore_devptr ptr, size_t bytes, cucore_location to,
                                  cucore_stream *s) {
  cc_begin();
  const char *fn = "cucore_mem_prefetch";
  CC_CHECK_HANDLE(s, STREAM, fn, "stream");
  cc_mem_rec rec;
  int known;
  cucore_status st = range_enter(ptr, bytes, fn, &rec, &known);
  if (st != CUCORE_OK) return st;
  CUmemLocation loc;
  st = cc_managed_prefetch_target(to, &loc, fn);
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuMemPrefetchAsync);
  if (st != CUCORE_OK) return st;
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
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: advice %d is not a cucore_mem_advice (1..6)", fn,
                   (int)advice);
  cc_mem_rec rec;
  int known;
  cucore_status st = range_enter(ptr, bytes, fn, &rec, &known);
  if (st != CUCORE_OK) return st;
  CUmemLocation loc;
  memset(&loc, 0, sizeof loc);
  int needs_where = advice != CUCORE_ADVISE_READ_MOSTLY &&
                    advice != CUCORE_ADVISE_UNSET_READ_MOSTLY &&
                    advice != CUCORE_ADVISE_UNSET_PREFERRED_LOCATION;
  if (needs_where) {
    st = cc_managed_location(where, &loc, fn);
    if (st != CUCORE_OK) return st;
  } else {
    loc.type = CU_MEM_LOCATION_TYPE_HOST; /* ignored by the driver for these */
  }
  st = CC_DRV_REQUIRE(cuMemAdvise);
  if (st != CUCORE_OK) return st;
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

/* The typed form of a location attribute (CUDA 12.2: HOST_NUMA nodes too) into *out; left as
 * it is when the driver does not answer. */
static void typed_location(uint64_t ptr, size_t bytes, CUmem_range_attribute type_attr,
                           CUmem_range_attribute id_attr, cucore_location *out) {
  CUmemLocationType type = CU_MEM_LOCATION_TYPE_INVALID;
  int id = 0;
  if (DRV(cuMemRangeGetAttribute)(&type, sizeof type, type_attr, ptr, bytes) != CUDA_SUCCESS ||
      DRV(cuMemRangeGetAttribute)(&id, sizeof id, id_attr, ptr, bytes) != CUDA_SUCCESS)
    return;
  cucore_location l = {CUCORE_LOCATION_NONE, 0};
  if (type == CU_MEM_LOCATION_TYPE_DEVICE) {
    l = from_device_id(id);
  } else if (type == CU_MEM_LOCATION_TYPE_HOST) {
    l.type = CUCORE_LOCATION_HOST;
  } else if (type == CU_MEM_LOCATION_TYPE_HOST_NUMA) {
    l.type = CUCORE_LOCATION_HOST_NUMA;
    l.id = id;
  }
  *out = l;
}

cucore_status cucore_mem_range_get_info(cucore_devptr ptr, size_t bytes,
                                        cucore_mem_range_info *out) {
  cc_begin();
  const char *fn = "cucore_mem_range_get_info";
  CC_CHECK_ARG(out, fn, "out");
  memset(out, 0, sizeof *out);
  cc_mem_rec rec;
  int known;
  cucore_status st = range_enter(ptr, bytes, fn, &rec, &known);
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
    r = DRV(cuMemRangeGetAttribute)(accessed, sizeof accessed, CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY,
                                    ptr, bytes);
  out->preferred = from_device_id(preferred);
  out->last_prefetch = from_device_id(last);
  if (r == CUDA_SUCCESS) {
    typed_location(ptr, bytes, CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE,
                   CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID, &out->preferred);
    typed_location(ptr, bytes, CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE,
                   CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID, &out->last_prefetch);
  }
  CUcontext old;
  if (pushed) (void)DRV(cuCtxPopCurrent)(&old);
  if (r != CUDA_SUCCESS) {
    memset(out, 0, sizeof *out);
    return cc_fail_cu(r, "cuMemRangeGetAttribute", "%zu bytes at 0x%llx", bytes,
                      (unsigned long long)ptr);
  }
  out->read_mostly = read_mostly != 0;
  for (int i = 0; i < 32; i++) {
    if (accessed[i] == CU_DEVICE_INVALID) continue;
    cucore_location l = from_device_id(accessed[i]);
    out->accessed_by[out->accessed_by_count++] = l.type == CUCORE_LOCATION_DEVICE ? l.id : -1;
  }
  return CUCORE_OK;
}
