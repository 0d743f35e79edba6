/*
 * vmm_map.c -- mapping physical memory into reserved ranges, unmapping, and access per device.
 * Each range cucore_vmm_map maps is one registry record of kind CUCORE_MEM_VMM.
 */
#include "memory/vmm.h"

#include <string.h>

#define VMM_MAX_DEVICES 64

/* The CUmemAccessDesc flags for CUCORE_VMM_ACCESS_* `access`; -1 when it is not one. */
static int cc_vmm_access_flags(unsigned access) {
  switch (access) {
  case CUCORE_VMM_ACCESS_NONE: return CU_MEM_ACCESS_FLAGS_PROT_NONE;
  case CUCORE_VMM_ACCESS_READ: return CU_MEM_ACCESS_FLAGS_PROT_READ;
  case CUCORE_VMM_ACCESS_READWRITE: return CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  default: return -1;
  }
}

cucore_status cc_vmm_map_rw(cucore_device *dev, uint64_t addr, size_t bytes,
                            CUmemGenericAllocationHandle h, const char *fn) {
  cucore_status st = CC_DRV_REQUIRE(cuMemMap);
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuMemSetAccess);
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuMemUnmap);
  if (st != CUCORE_OK) return st;
  CUresult r = DRV(cuMemMap)((CUdeviceptr)addr, bytes, 0, h, 0);
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, "cuMemMap", "%s: %zu bytes at 0x%llx", fn, bytes,
                      (unsigned long long)addr);
  CUmemAccessDesc d;
  memset(&d, 0, sizeof d);
  d.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  d.location.id = (int)dev->cudev;
  d.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  r = DRV(cuMemSetAccess)((CUdeviceptr)addr, bytes, &d, 1);
  if (r == CUDA_SUCCESS) return CUCORE_OK;
  (void)DRV(cuMemUnmap)((CUdeviceptr)addr, bytes);
  return cc_fail_cu(r, "cuMemSetAccess",
                    "%s: read-write access of device %d to %zu bytes at "
                    "0x%llx",
                    fn, dev->ordinal, bytes, (unsigned long long)addr);
}

/* The checks of cucore_vmm_map before the driver is called. */
static cucore_status map_checks(cucore_devptr addr, const cucore_vmm_memory *mem, size_t offset,
                                size_t bytes, const char *fn) {
  if (addr == 0 || bytes == 0)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: an empty range (address 0x%llx, %zu bytes)", fn,
                   (unsigned long long)addr, bytes);
  uint64_t g = mem->granularity, end;
  cucore_status st = cc_vmm_check_aligned(addr, g, fn, "the address");
  if (st == CUCORE_OK) st = cc_vmm_check_aligned(offset, g, fn, "the offset");
  if (st == CUCORE_OK) st = cc_vmm_check_aligned(bytes, g, fn, "the size");
  if (st != CUCORE_OK) return st;
  if (!cc_add_u64(offset, bytes, &end) || end > mem->bytes)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: offset %zu + %zu bytes runs past the end of the "
                   "%zu-byte physical memory",
                   fn, offset, bytes, mem->bytes);
  if (!cc_add_u64(addr, bytes, &end))
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: the range wraps around", fn);
  cc_mem_rec rec;
  if (cc_reg_find_overlap(&cc_mem_registry, addr, end, &rec)) {
    char what[256];
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: [0x%llx, +%zu) overlaps %s", fn,
                   (unsigned long long)addr, bytes, cc_rec_describe(&rec, what, sizeof what));
  }
  return CUCORE_OK;
}

cucore_status cucore_vmm_map(cucore_devptr addr, cucore_vmm_memory *mem, size_t offset,
                             size_t bytes) {
  cc_begin();
  const char *fn = "cucore_vmm_map";
  CC_CHECK_HANDLE(mem, VMM_MEMORY, fn, "mem");
  cucore_status st = map_checks(addr, mem, offset, bytes, fn);
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuMemMap);
  if (st == CUCORE_OK) st = cc_device_make_current(mem->dev);
  if (st != CUCORE_OK) return st;
  CUresult r = DRV(cuMemMap)((CUdeviceptr)addr, bytes, offset, mem->handle, 0);
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, "cuMemMap",
                      "%s: %zu bytes at 0x%llx (inside a range of "
                      "cucore_vmm_reserve, not mapped yet?)",
                      fn, bytes, (unsigned long long)addr);
  cc_mem_rec rec = {.base = addr,
                    .size = bytes,
                    .kind = CUCORE_MEM_VMM,
                    .ordinal = mem->dev->ordinal,
                    .ctx = mem->dev->ctx};
  st = cc_mem_record(&rec, fn);
  if (st != CUCORE_OK) (void)DRV(cuMemUnmap)((CUdeviceptr)addr, bytes);
  return st;
}

/* ---- unmap ---------------------------------------------------------------------------------- */

/* [lo, hi) must be tiled by plain mappings (no buffer's), without gaps: the driver unmaps
 * only whole mapped ranges. */
static cucore_status unmap_checks(uint64_t lo, uint64_t hi, const char *fn) {
  cc_mem_rec rec;
  char what[256];
  uint64_t at = lo;
  for (; at < hi && cc_reg_find_overlap(&cc_mem_registry, at, hi, &rec); at = rec.base + rec.size) {
    if (rec.kind != CUCORE_MEM_VMM || rec.owner)
      return cc_fail(CUCORE_INVALID_ARGUMENT,
                     "%s: the range covers %s, which is not unmapped "
                     "here (%s)",
                     fn, cc_rec_describe(&rec, what, sizeof what),
                     rec.owner ? "cucore_vmm_buffer_destroy unmaps a buffer"
                               : "only ranges of cucore_vmm_map are");
    if (rec.base < lo || rec.base + rec.size > hi)
      return cc_fail(CUCORE_INVALID_ARGUMENT,
                     "%s: the range [0x%llx, 0x%llx) cuts %s (unmap "
                     "whole mapped ranges)",
                     fn, (unsigned long long)lo, (unsigned long long)hi,
                     cc_rec_describe(&rec, what, sizeof what));
    if (rec.base != at) break;
  }
  if (at < hi)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: nothing mapped by cucore_vmm_map is at 0x%llx, "
                   "inside [0x%llx, 0x%llx) (unmap exactly what was mapped)",
                   fn, (unsigned long long)at, (unsigned long long)lo, (unsigned long long)hi);
  return CUCORE_OK;
}

static int accept_vmm(const cc_mem_rec *rec, void *ctx) {
  (void)ctx;
  return rec->kind == CUCORE_MEM_VMM && !rec->owner;
}

cucore_status cucore_vmm_unmap(cucore_devptr addr, size_t bytes) {
  cc_begin();
  const char *fn = "cucore_vmm_unmap";
  uint64_t end;
  if (addr == 0 || bytes == 0 || !cc_add_u64(addr, bytes, &end))
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: an empty or wrapping range (address 0x%llx, "
                   "%zu bytes)",
                   fn, (unsigned long long)addr, bytes);
  cucore_status st = unmap_checks(addr, end, fn);
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuMemUnmap);
  if (st != CUCORE_OK) return st;
  CUresult r = DRV(cuMemUnmap)((CUdeviceptr)addr, bytes);
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, "cuMemUnmap", "%s: %zu bytes at 0x%llx", fn, bytes,
                      (unsigned long long)addr);
  cc_mem_rec rec;
  while (cc_reg_find_overlap(&cc_mem_registry, addr, end, &rec))
    if (cc_reg_take(&cc_mem_registry, rec.base, accept_vmm, NULL, 1, &rec) != CC_REG_OK) break;
  return CUCORE_OK;
}

/* ---- access --------------------------------------------------------------------------------- */

static cucore_status access_checks(cucore_device *const *devs, size_t count, unsigned access,
                                   const char *fn) {
  if (cc_vmm_access_flags(access) < 0)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: access flags 0x%x are not "
                   "CUCORE_VMM_ACCESS_NONE (0), CUCORE_VMM_ACCESS_READ (1) or "
                   "CUCORE_VMM_ACCESS_READWRITE (3)",
                   fn, access);
  CC_CHECK_ARG(devs, fn, "devs");
  if (count == 0 || count > VMM_MAX_DEVICES)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: %zu devices (expected 1 to %d)", fn, count,
                   VMM_MAX_DEVICES);
  for (size_t i = 0; i < count; i++) {
    if (!devs[i]) return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: devs[%zu] is NULL", fn, i);
    for (size_t j = 0; j < i; j++)
      if (devs[j]->cudev == devs[i]->cudev)
        return cc_fail(CUCORE_INVALID_ARGUMENT,
                       "%s: device %d is given twice (devs[%zu] and "
                       "devs[%zu])",
                       fn, devs[i]->ordinal, j, i);
  }
  return CUCORE_OK;
}

cucore_status cucore_vmm_set_access(cucore_devptr addr, size_t bytes, cucore_device *const *devs,
                                    size_t count, unsigned access) {
  cc_begin();
  const char *fn = "cucore_vmm_set_access";
  cucore_status st = access_checks(devs, count, access, fn);
  if (st == CUCORE_OK && (addr == 0 || bytes == 0))
    st = cc_fail(CUCORE_INVALID_ARGUMENT, "%s: an empty range (address 0x%llx, %zu bytes)", fn,
                 (unsigned long long)addr, bytes);
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuMemSetAccess);
  if (st == CUCORE_OK) st = cc_device_make_current(devs[0]);
  if (st != CUCORE_OK) return st;
  CUmemAccessDesc d[VMM_MAX_DEVICES];
  memset(d, 0, sizeof d);
  for (size_t i = 0; i < count; i++) {
    d[i].location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    d[i].location.id = (int)devs[i]->cudev;
    d[i].flags = (CUmemAccess_flags)cc_vmm_access_flags(access);
  }
  CUresult r = DRV(cuMemSetAccess)((CUdeviceptr)addr, bytes, d, count);
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, "cuMemSetAccess",
                      "%s: access 0x%x for %zu device(s) to %zu bytes at "
                      "0x%llx (is the whole range mapped?)",
                      fn, access, count, bytes, (unsigned long long)addr);
  return CUCORE_OK;
}
