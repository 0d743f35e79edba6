/*
 * mem_common.c -- what every allocating file of memory/ shares: entering a device, out-of-memory
 * messages with what the device has, recording an allocation, explaining a refused free,
 * freeing by record, and a pool's live counts (so that no file of the floor calls back into
 * one that calls it).
 */
#include "memory/memory.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/sysinfo.h>

cucore_status cc_mem_pair_check(const cucore_device *dev, const cucore_stream *s, const char *fn) {
  CC_CHECK_HANDLE(dev, DEVICE, fn, "dev");
  if (s) CC_CHECK_HANDLE(s, STREAM, fn, "stream");
  if (s && s->dev->ctx != dev->ctx)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: the stream belongs to device %d, not device %d",
                   fn, s->dev->ordinal, dev->ordinal);
  return CUCORE_OK;
}

cucore_status cc_mem_check_alloc_size(size_t bytes, const char *fn) {
  if (bytes == 0) return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: size is 0 (expected > 0 bytes)", fn);
  return cc_check_size(bytes, fn, "the size");
}

cucore_status cc_mem_work_check(cucore_device *dev, cucore_stream *s, const char *fn) {
  cucore_status st = cc_mem_pair_check(dev, s, fn);
  if (st != CUCORE_OK) return st;
  return cc_mem_capture_check(dev, s, 1, fn);
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

cucore_status cc_mem_record_or_free(const cc_mem_rec *rec, const char *fn) {
  cucore_status st = cc_mem_record(rec, fn);
  if (st != CUCORE_OK) (void)DRV(cuMemFree)((CUdeviceptr)rec->base);
  return st;
}

/* The call that frees memory of a kind. */
static const char *freer(const cc_mem_rec *rec) {
  switch (rec->kind) {
  case CUCORE_MEM_DEVICE:
  case CUCORE_MEM_DEVICE_PITCHED:
  case CUCORE_MEM_MANAGED: return "cucore_mem_free";
  case CUCORE_MEM_POOL:
  case CUCORE_MEM_POOL_PINNED:
  case CUCORE_MEM_POOL_MANAGED:
    return "cucore_mem_free_async or cucore_mem_pool_free_async on a stream";
  case CUCORE_MEM_IPC_IMPORTED: return "cucore_mem_pool_free_async or cucore_mem_free";
  case CUCORE_MEM_PINNED: return "cucore_host_free";
  case CUCORE_MEM_PINNED_POOL: return "cucore_host_pool_free on its pool";
  case CUCORE_MEM_REGISTERED: return "cucore_host_unregister";
  case CUCORE_MEM_DLPACK_IMPORTED: return "cucore_dlpack_release";
  case CUCORE_MEM_GRAPH:
    return "a free node in its graph (cucore_graph_add_mem_free_node): the graph owns it while "
           "the graph lives";
  case CUCORE_MEM_VMM: return "cucore_vmm_unmap or cucore_vmm_buffer_destroy";
  case CUCORE_MEM_RESOURCE:
    return "cucore_mem_free, cucore_mem_free_async or cucore_mem_resource_deallocate";
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
                   fn, (unsigned long long)addr, what, rec->textures, rec->textures == 1 ? "" : "s",
                   rec->exports, rec->exports == 1 ? "" : "s");
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
  case CUCORE_MEM_POOL_PINNED:
  case CUCORE_MEM_POOL_MANAGED:
  case CUCORE_MEM_IPC_IMPORTED: r = DRV(cuMemFree)((CUdeviceptr)rec->base); break;
  case CUCORE_MEM_PINNED: r = DRV(cuMemFreeHost)((void *)(uintptr_t)rec->base); break;
  default: break;
  }
  if (pushed) (void)DRV(cuCtxPopCurrent)(&old);
  return r;
}
