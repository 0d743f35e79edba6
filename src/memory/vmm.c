/*
 * vmm.c -- virtual memory: granularity, address reservations, physical memory,
 * mapping and access, POSIX-fd export and import. Mapped ranges are recorded in the registry
 * (kind CUCORE_MEM_VMM) so copies into them are bounds-checked.
 */
#include "memory/vmm.h"

#include <stdlib.h>
#include <string.h>

cucore_status cc_vmm_check_aligned(uint64_t value, uint64_t granularity, const char *fn,
                                   const char *what) {
  if (value % granularity == 0) return CUCORE_OK;
  uint64_t up = 0;
  if (!cc_vmm_round_up(value, granularity, &up))
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: %s %llu is not a multiple of the granularity "
                   "%llu (and rounding it up overflows)",
                   fn, what, (unsigned long long)value, (unsigned long long)granularity);
  return cc_fail(CUCORE_INVALID_ARGUMENT,
                 "%s: %s %llu is not a multiple of the granularity %llu "
                 "(expected e.g. %llu, rounded up; cucore_vmm_get_granularity gives it)",
                 fn, what, (unsigned long long)value, (unsigned long long)granularity,
                 (unsigned long long)up);
}

static void vmm_prop(cucore_device *dev, unsigned flags, CUmemAllocationProp *p) {
  memset(p, 0, sizeof *p);
  p->type = CU_MEM_ALLOCATION_TYPE_PINNED;
  p->location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  p->location.id = (int)dev->cudev;
  p->requestedHandleTypes = (flags & CUCORE_VMM_SHAREABLE_FD)
                                ? CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR
                                : CU_MEM_HANDLE_TYPE_NONE;
}

static cucore_status check_flags(unsigned flags, const char *fn) {
  if (flags & ~(unsigned)CUCORE_VMM_SHAREABLE_FD)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: unknown flags 0x%x (expected 0 or "
                   "CUCORE_VMM_SHAREABLE_FD)",
                   fn, flags);
  return CUCORE_OK;
}

cucore_status cc_vmm_granularity(cucore_device *dev, unsigned flags, int which, size_t *out,
                                 const char *fn) {
  cucore_status st = CC_DRV_REQUIRE(cuMemGetAllocationGranularity);
  if (st == CUCORE_OK) st = cc_mem_enter(dev, NULL, fn);
  if (st != CUCORE_OK) return st;
  CUmemAllocationProp p;
  vmm_prop(dev, flags, &p);
  CUresult r = DRV(cuMemGetAllocationGranularity)(out, &p,
                                                  which ? CU_MEM_ALLOC_GRANULARITY_RECOMMENDED
                                                        : CU_MEM_ALLOC_GRANULARITY_MINIMUM);
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, "cuMemGetAllocationGranularity", "%s: device %d", fn, dev->ordinal);
  if (*out == 0)
    return cc_fail(CUCORE_DRIVER_ERROR, "%s: the driver says device %d's granularity is 0", fn,
                   dev->ordinal);
  return CUCORE_OK;
}

cucore_status cucore_vmm_get_granularity(cucore_device *dev, unsigned flags, size_t *minimum,
                                         size_t *recommended) {
  cc_begin();
  const char *fn = "cucore_vmm_get_granularity";
  if (minimum) *minimum = 0;
  if (recommended) *recommended = 0;
  cucore_status st = check_flags(flags, fn);
  size_t g = 0;
  if (st == CUCORE_OK && minimum) st = cc_vmm_granularity(dev, flags, 0, &g, fn);
  if (st == CUCORE_OK && minimum) *minimum = g;
  if (st == CUCORE_OK && recommended) st = cc_vmm_granularity(dev, flags, 1, recommended, fn);
  return st;
}

/* ---- address ranges ----------------------------------------------------------------------- */

cucore_status cucore_vmm_reserve(cucore_device *dev, size_t bytes, size_t alignment,
                                 cucore_devptr hint, cucore_devptr *out) {
  cc_begin();
  const char *fn = "cucore_vmm_reserve";
  CC_CHECK_ARG(out, fn, "out");
  *out = 0;
  if (bytes == 0) return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: size is 0 (expected > 0)", fn);
  size_t g = 0;
  cucore_status st = cc_vmm_granularity(dev, 0, 0, &g, fn);
  if (st == CUCORE_OK) st = cc_vmm_check_aligned(bytes, g, fn, "the size");
  if (st == CUCORE_OK) st = cc_vmm_check_aligned(hint, g, fn, "the hint address");
  if (st == CUCORE_OK && alignment & (alignment - 1))
    st = cc_fail(CUCORE_INVALID_ARGUMENT, "%s: alignment %zu is not a power of two (or 0)", fn,
                 alignment);
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuMemAddressReserve);
  if (st != CUCORE_OK) return st;
  CUdeviceptr p = 0;
  CUresult r = DRV(cuMemAddressReserve)(&p, bytes, alignment, (CUdeviceptr)hint, 0);
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuMemAddressReserve", "%s: %zu bytes", fn, bytes);
  *out = (cucore_devptr)p;
  return CUCORE_OK;
}

cucore_status cucore_vmm_unreserve(cucore_device *dev, cucore_devptr base, size_t bytes) {
  cc_begin();
  const char *fn = "cucore_vmm_unreserve";
  if (base == 0 || bytes == 0)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: an empty range (address 0x%llx, %zu bytes)", fn,
                   (unsigned long long)base, bytes);
  uint64_t end;
  if (!cc_add_u64(base, bytes, &end))
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: the range wraps around", fn);
  cc_mem_rec rec;
  if (cc_reg_find_overlap(&cc_mem_registry, base, end, &rec)) {
    char what[256];
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: %s is still in the range (unmap it first)", fn,
                   cc_rec_describe(&rec, what, sizeof what));
  }
  cucore_status st = CC_DRV_REQUIRE(cuMemAddressFree);
  if (st == CUCORE_OK) st = cc_mem_enter(dev, NULL, fn);
  if (st != CUCORE_OK) return st;
  CUresult r = DRV(cuMemAddressFree)((CUdeviceptr)base, bytes);
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, "cuMemAddressFree",
                      "%s: 0x%llx, %zu bytes (is it a whole range of "
                      "cucore_vmm_reserve?)",
                      fn, (unsigned long long)base, bytes);
  return CUCORE_OK;
}

/* ---- physical memory ------------------------------------------------------------------------ */

cucore_status cc_vmm_create_raw(cucore_device *dev, size_t bytes, unsigned flags,
                                CUmemGenericAllocationHandle *out, const char *fn) {
  cucore_status st = CC_DRV_REQUIRE(cuMemCreate);
  if (st != CUCORE_OK) return st;
  CUmemAllocationProp p;
  vmm_prop(dev, flags, &p);
  CUresult r = DRV(cuMemCreate)(out, bytes, &p, 0);
  if (r != CUDA_SUCCESS) return cc_mem_fail_alloc(r, "cuMemCreate", fn, dev->ordinal, bytes, NULL);
  return CUCORE_OK;
}

static cucore_status new_memory(cucore_device *dev, CUmemGenericAllocationHandle h, size_t bytes,
                                size_t g, unsigned flags, cucore_vmm_memory **out) {
  cucore_vmm_memory *m = cc_calloc(1, sizeof *m, "a virtual memory handle");
  if (!m) {
    (void)DRV(cuMemRelease)(h);
    return CUCORE_HOST_OUT_OF_MEMORY;
  }
  *m = (cucore_vmm_memory){.handle = h,
                           .dev = dev,
                           .bytes = bytes,
                           .granularity = g,
                           .flags = flags};
  cc_handle_init(m, CC_KIND_VMM_MEMORY);
  *out = m;
  return CUCORE_OK;
}

cucore_status cucore_vmm_create(cucore_device *dev, size_t bytes, unsigned flags,
                                cucore_vmm_memory **out) {
  cc_begin();
  const char *fn = "cucore_vmm_create";
  CC_CHECK_ARG(out, fn, "out");
  *out = NULL;
  if (bytes == 0) return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: size is 0 (expected > 0)", fn);
  size_t g = 0;
  cucore_status st = check_flags(flags, fn);
  if (st == CUCORE_OK) st = cc_vmm_granularity(dev, flags, 0, &g, fn);
  if (st == CUCORE_OK) st = cc_vmm_check_aligned(bytes, g, fn, "the size");
  CUmemGenericAllocationHandle h = 0;
  if (st == CUCORE_OK) st = cc_vmm_create_raw(dev, bytes, flags, &h, fn);
  if (st != CUCORE_OK) return st;
  return new_memory(dev, h, bytes, g, flags, out);
}

cucore_status cucore_vmm_release(cucore_vmm_memory *mem) {
  cc_begin();
  if (!mem) return CUCORE_OK;
  CC_CHECK_HANDLE(mem, VMM_MEMORY, "cucore_vmm_release", "mem");
  cucore_status st = cc_device_make_current(mem->dev);
  CUresult r = DRV(cuMemRelease)(mem->handle);
  cc_handle_retire(mem, CC_KIND_VMM_MEMORY);
  if (st != CUCORE_OK) return st;
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuMemRelease", "cucore_vmm_release");
  return CUCORE_OK;
}

cucore_status cucore_vmm_get_size(const cucore_vmm_memory *mem, size_t *bytes) {
  cc_begin();
  CC_CHECK_ARG(bytes, "cucore_vmm_get_size", "bytes");
  *bytes = 0;
  CC_CHECK_HANDLE(mem, VMM_MEMORY, "cucore_vmm_get_size", "mem");
  *bytes = mem->bytes;
  return CUCORE_OK;
}

/* ---- export and import ---------------------------------------------------------------------- */

cucore_status cucore_vmm_export_fd(cucore_vmm_memory *mem, int *fd) {
  cc_begin();
  const char *fn = "cucore_vmm_export_fd";
  CC_CHECK_ARG(fd, fn, "fd");
  *fd = -1;
  CC_CHECK_HANDLE(mem, VMM_MEMORY, fn, "mem");
  if (!(mem->flags & CUCORE_VMM_SHAREABLE_FD))
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: the memory was not created shareable (create it "
                   "with CUCORE_VMM_SHAREABLE_FD to export it)",
                   fn);
  cucore_status st = CC_DRV_REQUIRE(cuMemExportToShareableHandle);
  if (st == CUCORE_OK) st = cc_device_make_current(mem->dev);
  if (st != CUCORE_OK) return st;
  int h = -1;
  CUresult r = DRV(cuMemExportToShareableHandle)(&h, mem->handle,
                                                 CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, "cuMemExportToShareableHandle", "%s: %zu bytes of device %d", fn,
                      mem->bytes, mem->dev->ordinal);
  *fd = h;
  return CUCORE_OK;
}

cucore_status cucore_vmm_import_fd(cucore_device *dev, int fd, size_t bytes,
                                   cucore_vmm_memory **out) {
  cc_begin();
  const char *fn = "cucore_vmm_import_fd";
  CC_CHECK_ARG(out, fn, "out");
  *out = NULL;
  if (fd < 0)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: file descriptor %d is not valid", fn, fd);
  if (bytes == 0) return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: size is 0 (expected > 0)", fn);
  size_t g = 0;
  cucore_status st = cc_vmm_granularity(dev, CUCORE_VMM_SHAREABLE_FD, 0, &g, fn);
  if (st == CUCORE_OK) st = cc_vmm_check_aligned(bytes, g, fn, "the size");
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuMemImportFromShareableHandle);
  if (st != CUCORE_OK) return st;
  CUmemGenericAllocationHandle h = 0;
  CUresult r = DRV(cuMemImportFromShareableHandle)(&h, (void *)(uintptr_t)fd,
                                                   CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, "cuMemImportFromShareableHandle",
                      "%s: file descriptor %d on device %d "
                      "(is it from cucore_vmm_export_fd?)",
                      fn, fd, dev->ordinal);
  return new_memory(dev, h, bytes, g, CUCORE_VMM_SHAREABLE_FD, out);
}
