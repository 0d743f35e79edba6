/*
 * device_mem.c -- device, pitched, managed and pinned host allocations, each recorded so later
 * copies are bounds-checked and frees of anything else are refused with a reason; and the
 * helpers every allocating file shares (entering a device, out-of-memory messages, explaining a
 * refused free).
 */
#include "memory/memory.h"

#include <stdio.h>
#include <string.h>
#include <sys/sysinfo.h>

cucore_status cc_mem_pair_check(const cucore_device *dev, const cucore_stream *s,
                                const char *fn) {
  if (CC_UNLIKELY(!dev)) return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: `dev` is NULL", fn);
  if (s && s->dev->ctx != dev->ctx)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: the stream belongs to device %d, not device %d",
                   fn, s->dev->ordinal, dev->ordinal);
  return CUCORE_OK;
}

cucore_status cc_mem_enter(cucore_device *dev, cucore_stream *s, const char *fn) {
  cucore_status st = cc_mem_pair_check(dev, s, fn);
  if (st != CUCORE_OK) return st;
  return cc_device_make_current(dev);
}

cucore_status cc_mem_fail_alloc(CUresult r, const char *call, const char *fn, int ordinal,
                                size_t bytes, const char *extra) {
  size_t free_b = 0, total_b = 0;
  char want[32], fr[32], tot[32], have[160] = "";
  /* What the device has, when the driver can still say (not after a kernel fault). */
  if (DRV(cuMemGetInfo)(&free_b, &total_b) == CUDA_SUCCESS)
    snprintf(have, sizeof have, ", which has %s (%zu bytes) free of %s (cuMemGetInfo)",
             cc_format_bytes(free_b, fr, sizeof fr), free_b,
             cc_format_bytes(total_b, tot, sizeof tot));
  return cc_fail_cu(r, call, "%s asked for %s (%zu bytes) on device %d%s%s%s", fn,
                    cc_format_bytes(bytes, want, sizeof want), bytes, ordinal, have,
                    extra ? "; " : "", extra ? extra : "");
}

cucore_status cc_mem_finish_sync(const char *call) {
  CUresult r = DRV(cuStreamSynchronize)(NULL);
  if (CC_UNLIKELY(r != CUDA_SUCCESS))
    return cc_fail_cu(r, "cuStreamSynchronize", "waiting for a synchronous %s to complete", call);
  return CUCORE_OK;
}

size_t cc_host_mem_available(void) {
  FILE *f = fopen("/proc/meminfo", "r");
  if (f) {
    char line[128];
    unsigned long long kib = 0;
    int found = 0;
    while (!found && fgets(line, sizeof line, f))
      found = sscanf(line, "MemAvailable: %llu kB", &kib) == 1;
    fclose(f);
    if (found) return (size_t)kib * 1024;
  }
  struct sysinfo si;
  if (sysinfo(&si) == 0) return (size_t)si.freeram * si.mem_unit;
  return 0;
}

cucore_status cc_mem_record(const cc_mem_rec *rec, const char *fn) {
  cc_reg_result r = cc_reg_insert(&cc_mem_registry, rec, 1);
  if (CC_LIKELY(r == CC_REG_OK)) return CUCORE_OK;
  return cc_fail(CUCORE_HOST_OUT_OF_MEMORY,
                 "%s: out of host memory recording a %llu-byte allocation at 0x%llx", fn,
                 (unsigned long long)rec->size, (unsigned long long)rec->base);
}

/* The call that frees memory of a kind. */
static const char *freer(const cc_mem_rec *rec) {
  switch (rec->kind) {
  case CUCORE_MEM_DEVICE:
  case CUCORE_MEM_DEVICE_PITCHED:
  case CUCORE_MEM_MANAGED: return "cucore_mem_free";
  case CUCORE_MEM_POOL: return "cucore_mem_free_async or cucore_mem_pool_free_async on a stream";
  case CUCORE_MEM_IPC_IMPORTED: return "cucore_mem_pool_free_async or cucore_mem_free";
  case CUCORE_MEM_PINNED: return "cucore_host_free";
  case CUCORE_MEM_PINNED_POOL: return "cucore_host_pool_free on its pool";
  case CUCORE_MEM_REGISTERED: return "cucore_host_unregister";
  case CUCORE_MEM_DLPACK_IMPORTED: return "cucore_dlpack_release";
  default: return "nothing in cucore";
  }
}

cucore_status cc_mem_explain_take(cc_reg_result res, const cc_mem_rec *rec, uint64_t addr,
                                  const char *fn, const char *expected) {
  char what[256];
  switch (res) {
  case CC_REG_OK: return CUCORE_OK;
  case CC_REG_NOT_FOUND: {
    cc_mem_rec old;
    if (cc_reg_was_freed(&cc_mem_registry, addr, &old)) {
      cc_rec_describe(&old, what, sizeof what);
      if (old.base == addr)
        return cc_fail(CUCORE_INVALID_ARGUMENT,
                       "%s: 0x%llx was freed already (it was %s): a double free?", fn,
                       (unsigned long long)addr, what);
      return cc_fail(CUCORE_INVALID_ARGUMENT,
                     "%s: 0x%llx lies in memory freed already (%llu bytes into what was %s)", fn,
                     (unsigned long long)addr, (unsigned long long)(addr - old.base), what);
    }
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: 0x%llx is not %s: cucore did not allocate it (a foreign pointer, one "
                   "freed long ago, or a wrong value); cucore frees only what it allocated",
                   fn, (unsigned long long)addr, expected);
  }
  case CC_REG_NOT_BASE:
    cc_rec_describe(rec, what, sizeof what);
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: 0x%llx is %llu bytes inside %s; pass the start of the allocation", fn,
                   (unsigned long long)addr, (unsigned long long)(addr - rec->base), what);
  case CC_REG_REJECTED:
    cc_rec_describe(rec, what, sizeof what);
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: 0x%llx is %s, not %s; free it with %s", fn,
                   (unsigned long long)addr, what, expected, freer(rec));
  case CC_REG_BUSY:
    cc_rec_describe(rec, what, sizeof what);
    if (rec->flags & CC_REC_DLPACK_OWNED)
      return cc_fail(CUCORE_IN_USE,
                     "%s: 0x%llx (%s) was handed to a DLPack consumer with "
                     "CUCORE_DLPACK_TRANSFER: its deleter frees it",
                     fn, (unsigned long long)addr, what);
    return cc_fail(CUCORE_IN_USE,
                   "%s: 0x%llx (%s) is still used by %u texture or surface object%s and %u "
                   "DLPack export%s; destroy those first (or, for an export, wait for its "
                   "consumer to call the deleter)",
                   fn, (unsigned long long)addr, what, rec->textures,
                   rec->textures == 1 ? "" : "s", rec->exports, rec->exports == 1 ? "" : "s");
  default:
    return cc_fail(CUCORE_INTERNAL, "%s: unexpected registry result %d for 0x%llx", fn, (int)res,
                   (unsigned long long)addr);
  }
}

CUresult cc_mem_free_rec_raw(const cc_mem_rec *rec) {
  CUcontext old = NULL;
  int pushed = rec->ctx && DRV(cuCtxPushCurrent)(rec->ctx) == CUDA_SUCCESS;
  CUresult r = CUDA_SUCCESS;
  switch (rec->kind) {
  case CUCORE_MEM_DEVICE:
  case CUCORE_MEM_DEVICE_PITCHED:
  case CUCORE_MEM_MANAGED:
  case CUCORE_MEM_POOL:
  case CUCORE_MEM_IPC_IMPORTED: r = DRV(cuMemFree)((CUdeviceptr)rec->base); break;
  case CUCORE_MEM_PINNED: r = DRV(cuMemFreeHost)((void *)(uintptr_t)rec->base); break;
  default: break;
  }
  if (pushed) (void)DRV(cuCtxPopCurrent)(&old);
  return r;
}

/* ---- device memory ------------------------------------------------------------------------ */

cucore_status cucore_mem_alloc(cucore_device *dev, size_t bytes, cucore_devptr *out) {
  cc_begin();
  CC_CHECK_ARG(out, "cucore_mem_alloc", "out");
  *out = 0;
  if (bytes == 0)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "cucore_mem_alloc: size is 0 (expected > 0 bytes)");
  cucore_status st = cc_check_size(bytes, "cucore_mem_alloc", "the size");
  if (st != CUCORE_OK) return st;
  st = cc_mem_capture_check(dev, NULL, 0, "cucore_mem_alloc");
  if (st == CUCORE_OK) st = cc_mem_enter(dev, NULL, "cucore_mem_alloc");
  if (st != CUCORE_OK) return st;
  CUdeviceptr p = 0;
  CUresult r = DRV(cuMemAlloc)(&p, bytes);
  if (r != CUDA_SUCCESS)
    return cc_mem_fail_alloc(r, "cuMemAlloc", "cucore_mem_alloc", dev->ordinal, bytes, NULL);
  cc_mem_rec rec = {.base = p, .size = bytes, .kind = CUCORE_MEM_DEVICE, .ordinal = dev->ordinal,
                    .ctx = dev->ctx};
  st = cc_mem_record(&rec, "cucore_mem_alloc");
  if (st != CUCORE_OK) {
    (void)DRV(cuMemFree)(p);
    return st;
  }
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
  CC_CHECK_ARG(dev, "cucore_mem_free", "dev");
  cucore_status cst = cc_mem_capture_check(dev, NULL, 0, "cucore_mem_free");
  if (cst != CUCORE_OK) return cst;
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
  if (rec.kind == CUCORE_MEM_IPC_IMPORTED) cc_pool_forget(&rec);
  cucore_status st = cc_device_make_current(dev);
  if (st != CUCORE_OK) return st;
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
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: %zu x %zu bytes is empty (expected width and "
                   "height > 0)", fn, width_bytes, height);
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
  st = cc_mem_capture_check(dev, NULL, 0, fn);
  if (st == CUCORE_OK) st = cc_mem_enter(dev, NULL, fn);
  if (st != CUCORE_OK) return st;
  CUdeviceptr p = 0;
  size_t pp = 0;
  CUresult r = DRV(cuMemAllocPitch)(&p, &pp, width_bytes, height, element_bytes);
  if (r != CUDA_SUCCESS) return cc_mem_fail_alloc(r, "cuMemAllocPitch", fn, dev->ordinal, total, NULL);
  cc_mem_rec rec = {.base = p, .size = (uint64_t)pp * height, .kind = CUCORE_MEM_DEVICE_PITCHED,
                    .ordinal = dev->ordinal, .ctx = dev->ctx, .aux = pp};
  st = cc_mem_record(&rec, fn);
  if (st != CUCORE_OK) {
    (void)DRV(cuMemFree)(p);
    return st;
  }
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
  if (bytes == 0) return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: size is 0 (expected > 0 bytes)", fn);
  cucore_status st = cc_check_size(bytes, fn, "the size");
  if (st != CUCORE_OK) return st;
  if (attach != CUCORE_MANAGED_GLOBAL && attach != CUCORE_MANAGED_HOST)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: attach flags 0x%x are not CUCORE_MANAGED_GLOBAL (1) or CUCORE_MANAGED_HOST "
                   "(2)", fn, attach);
  st = cc_mem_capture_check(dev, NULL, 0, fn);
  if (st == CUCORE_OK) st = cc_mem_enter(dev, NULL, fn);
  if (st != CUCORE_OK) return st;
  int managed = 0;
  if (DRV(cuDeviceGetAttribute)(&managed, CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, dev->cudev) ==
          CUDA_SUCCESS && !managed)
    return cc_fail(CUCORE_NOT_SUPPORTED, "%s: device %d does not support managed memory", fn,
                   dev->ordinal);
  CUdeviceptr p = 0;
  CUresult r = DRV(cuMemAllocManaged)(&p, bytes, attach);
  if (r != CUDA_SUCCESS) return cc_mem_fail_alloc(r, "cuMemAllocManaged", fn, dev->ordinal, bytes, NULL);
  cc_mem_rec rec = {.base = p, .size = bytes, .kind = CUCORE_MEM_MANAGED, .ordinal = dev->ordinal,
                    .ctx = dev->ctx};
  st = cc_mem_record(&rec, fn);
  if (st != CUCORE_OK) {
    (void)DRV(cuMemFree)(p);
    return st;
  }
  *out = p;
  return CUCORE_OK;
}

/* ---- pinned host memory ------------------------------------------------------------------- */

cucore_status cucore_host_alloc(cucore_device *dev, size_t bytes, void **out) {
  cc_begin();
  CC_CHECK_ARG(out, "cucore_host_alloc", "out");
  *out = NULL;
  if (bytes == 0)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "cucore_host_alloc: size is 0 (expected > 0 bytes)");
  cucore_status st = cc_check_size(bytes, "cucore_host_alloc", "the size");
  if (st != CUCORE_OK) return st;
  st = cc_mem_capture_check(dev, NULL, 0, "cucore_host_alloc");
  if (st == CUCORE_OK) st = cc_mem_enter(dev, NULL, "cucore_host_alloc");
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
  cc_mem_rec rec = {.base = (uint64_t)(uintptr_t)p, .size = bytes, .kind = CUCORE_MEM_PINNED,
                    .ordinal = -1, .ctx = dev->ctx};
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
  CC_CHECK_ARG(dev, "cucore_host_free", "dev");
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
