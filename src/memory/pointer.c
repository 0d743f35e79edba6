/*
 * pointer.c -- what an address is (cucore's record joined with cuPointerGetAttributes), and
 * the strict check that a pointer handed to a kernel is accessible from the kernel's device.
 *
 * The strict check answers from the record alone when it can (a cucore allocation of the same
 * device, managed or pinned memory: one registry lookup); anything else is asked of the driver
 * in the target device's context (about a microsecond), which knows peer mappings, pool access
 * and registered memory's device addresses.
 */
#include "memory/memory.h"

#include <stdio.h>
#include <string.h>

/* The driver's facts of an address, with `ctx` current (NULL: whatever is current). */
typedef struct drv_facts {
  int ok;        /* the query ran */
  unsigned type; /* CUmemorytype, 0 when unknown */
  unsigned managed;
  int ordinal;
  CUdeviceptr base;
  size_t size;
  CUdeviceptr devptr;
  void *hostptr;
  CUmemoryPool pool;
  CUcontext owner;
  unsigned long long access; /* of the current context's device */
} drv_facts;

static void ask_driver(uint64_t addr, CUcontext ctx, drv_facts *f) {
  memset(f, 0, sizeof *f);
  f->ordinal = -1;
  if (!cc_driver_ready() || !DRV(cuPointerGetAttributes)) return;
  int pushed = 0;
  if (ctx) {
    pushed = DRV(cuCtxPushCurrent)(ctx) == CUDA_SUCCESS;
  } else if (cc_ensure_context() != CUCORE_OK) {
    return;
  }
  /* cuPointerGetAttributes answers for unknown addresses too (with zeros); the attributes it
   * does not take (access flags) and those that fail for memory the context cannot reach
   * (device and host pointers) are asked one by one, their failures ignored. */
  CUpointer_attribute attrs[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                 CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                 CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                 CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                                 CU_POINTER_ATTRIBUTE_RANGE_SIZE,
                                 CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE,
                                 CU_POINTER_ATTRIBUTE_CONTEXT};
  void *data[] = {&f->type, &f->managed, &f->ordinal, &f->base, &f->size, &f->pool, &f->owner};
  CUresult r = DRV(cuPointerGetAttributes)((unsigned)CC_ARRAY_LEN(attrs), attrs, data,
                                           (CUdeviceptr)addr);
  if (r != CUDA_SUCCESS) { /* an older driver: the basic five */
    memset(f, 0, sizeof *f);
    r = DRV(cuPointerGetAttributes)(5, attrs, data, (CUdeviceptr)addr);
  }
  f->ok = r == CUDA_SUCCESS;
  if (f->ok && f->type) {
    (void)DRV(cuPointerGetAttribute)(&f->devptr, CU_POINTER_ATTRIBUTE_DEVICE_POINTER,
                                     (CUdeviceptr)addr);
    (void)DRV(cuPointerGetAttribute)(&f->hostptr, CU_POINTER_ATTRIBUTE_HOST_POINTER,
                                     (CUdeviceptr)addr);
    (void)DRV(cuPointerGetAttribute)(&f->access, CU_POINTER_ATTRIBUTE_ACCESS_FLAGS,
                                     (CUdeviceptr)addr);
  }
  if (!f->ok || f->type == 0) f->ordinal = -1;
  CUcontext old;
  if (pushed) (void)DRV(cuCtxPopCurrent)(&old);
}

cucore_status cucore_pointer_get_facts(cucore_devptr addr, cucore_pointer_facts *out) {
  cc_begin();
  CC_CHECK_ARG(out, "cucore_pointer_get_facts", "out");
  memset(out, 0, sizeof *out);
  out->device = -1;
  cc_mem_rec rec;
  int known = cc_reg_find(&cc_mem_registry, addr, &rec);
  drv_facts f;
  if (!known && cc_reg_was_freed(&cc_mem_registry, addr, &rec)) {
    /* Freed by cucore; unless the driver has handed the range out again (to a caller's own
     * allocation, seen under compute-sanitizer), which makes it that memory now. */
    ask_driver(addr, NULL, &f);
    if (!(f.ok && f.type)) out->freed = 1;
  }
  if (known || out->freed) {
    out->kind = rec.kind;
    out->device = rec.ordinal;
    out->base = rec.base;
    out->size = rec.size;
    out->offset = addr - rec.base;
    out->cupool = rec.cupool;
    out->users = rec.textures + rec.exports;
  }
  if (out->freed) return CUCORE_OK;
  ask_driver(addr, known ? rec.ctx : NULL, &f);
  if (f.ok && f.type) {
    out->type = f.managed                      ? CUCORE_MEMTYPE_MANAGED
                : f.type == CU_MEMORYTYPE_HOST ? CUCORE_MEMTYPE_HOST
                                               : CUCORE_MEMTYPE_DEVICE;
    out->device_pointer = f.devptr;
    out->host_pointer = f.hostptr;
    if (!out->cupool) out->cupool = f.pool;
    if (!known) {
      out->device = f.ordinal;
      out->base = f.base;
      out->size = f.size;
      out->offset = f.base && addr >= f.base ? addr - f.base : 0;
    }
  } else if (known) {
    /* No driver answer (no GPU here): what the record implies. */
    int host = rec.kind == CUCORE_MEM_PINNED || rec.kind == CUCORE_MEM_PINNED_POOL ||
               rec.kind == CUCORE_MEM_REGISTERED || rec.kind == CUCORE_MEM_POOL_PINNED;
    int managed = rec.kind == CUCORE_MEM_MANAGED || rec.kind == CUCORE_MEM_POOL_MANAGED;
    out->type = managed                                  ? CUCORE_MEMTYPE_MANAGED
                : host                                   ? CUCORE_MEMTYPE_HOST
                : rec.kind == CUCORE_MEM_DLPACK_IMPORTED ? CUCORE_MEMTYPE_UNKNOWN
                                                         : CUCORE_MEMTYPE_DEVICE;
    if (host || managed) out->host_pointer = (void *)(uintptr_t)addr;
    if (!host || rec.kind != CUCORE_MEM_REGISTERED) out->device_pointer = addr;
  }
  return CUCORE_OK;
}

/* ---- strict pointer checks ------------------------------------------------------------------- */

static const char *who_text(const char *who, int index, char *buf, size_t n) {
  if (index >= 0)
    snprintf(buf, n, "argument %d of `%s`", index, who ? who : "?");
  else
    snprintf(buf, n, "%s", who ? who : "?");
  return buf;
}

/* 1 when kernels on device `ordinal` can read pageable host memory (malloc, the stack) through
 * HMM or ATS (CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS): then an address the driver does not
 * know may well be valid host memory, and the check cannot refuse it. */
static int pageable_access(int ordinal) {
  CUdevice d = 0;
  int v = 0;
  if (ordinal < 0 || DRV(cuDeviceGet)(&d, ordinal) != CUDA_SUCCESS) return 0;
  if (DRV(cuDeviceGetAttribute)(&v, CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS, d) != CUDA_SUCCESS)
    return 0;
  return v != 0;
}

/* The driver's verdict for an address kernels in `ctx` (device `ordinal`) would use. */
static cucore_status driver_verdict(uint64_t addr, CUcontext ctx, int ordinal, const char *w) {
  drv_facts f;
  ask_driver(addr, ctx, &f);
  if (!f.ok) return CUCORE_OK; /* nothing to ask: no verdict */
  if (f.type == 0 && pageable_access(ordinal)) return CUCORE_OK;
  if (f.type == 0)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: 0x%llx is not memory a kernel can access: the driver does not know it "
                   "(pageable host memory from malloc or the stack, memory freed already, or not "
                   "an address)",
                   w, (unsigned long long)addr);
  if (f.managed) return CUCORE_OK;
  if (f.type == CU_MEMORYTYPE_HOST) {
    if (f.devptr == addr) return CUCORE_OK;
    if (f.devptr)
      return cc_fail(CUCORE_INVALID_ARGUMENT,
                     "%s: 0x%llx is registered host memory whose device address is 0x%llx; pass "
                     "that (cucore_host_get_device_pointer)",
                     w, (unsigned long long)addr, (unsigned long long)f.devptr);
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: 0x%llx is page-locked host memory not mapped for the device (register it "
                   "with CUCORE_HOST_REGISTER_DEVICEMAP)",
                   w, (unsigned long long)addr);
  }
  if (ordinal < 0 || f.ordinal == ordinal) return CUCORE_OK;
  if (f.pool) {
    CUmemLocation loc;
    memset(&loc, 0, sizeof loc);
    loc.type = CU_MEM_LOCATION_TYPE_DEVICE;
    CUdevice d = 0;
    if (DRV(cuDeviceGet)(&d, ordinal) == CUDA_SUCCESS) loc.id = (int)d;
    CUmemAccess_flags fl = CU_MEM_ACCESS_FLAGS_PROT_NONE;
    if (DRV(cuMemPoolGetAccess) && DRV(cuMemPoolGetAccess)(&fl, f.pool, &loc) == CUDA_SUCCESS &&
        fl != CU_MEM_ACCESS_FLAGS_PROT_NONE)
      return CUCORE_OK;
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: 0x%llx is pool memory of device %d, which device %d has no access to "
                   "(cucore_mem_pool_set_access)",
                   w, (unsigned long long)addr, f.ordinal, ordinal);
  }
  if ((ctx && f.owner && cc_peer_enabled(ctx, f.owner)) || f.access) return CUCORE_OK;
  return cc_fail(CUCORE_INVALID_ARGUMENT,
                 "%s: 0x%llx is memory of device %d; device %d has no peer access to it "
                 "(cucore_device_enable_peer_access)",
                 w, (unsigned long long)addr, f.ordinal, ordinal);
}

/* 1 when `addr`, in no record, lies past the end of a graph allocation (*out) in the same 64 KiB
 * (the GPU's page): the driver keeps those addresses for graph memory, so nothing a kernel may
 * use is there, and asked before the graph runs it knows nothing of them. */
static int past_graph_alloc(uint64_t addr, cc_mem_rec *out) {
  uint64_t lo = addr & ~(uint64_t)0xffff;
  int found = 0;
  while (lo < addr && cc_reg_find_overlap(&cc_mem_registry, lo, addr, out)) { /* the last one */
    found = 1;
    lo = out->base + out->size;
  }
  return found && out->kind == CUCORE_MEM_GRAPH && out->base + out->size < addr;
}

cucore_status cc_mem_check_kernel_pointer(cucore_device *dev, uint64_t addr, uint64_t bytes,
                                          const char *who, int index) {
  if (addr == 0) return CUCORE_OK;
  CUcontext ctx = dev ? dev->ctx : NULL;
  int ordinal = dev ? dev->ordinal : -1;
  if (!dev && DRV(cuCtxGetCurrent) && DRV(cuCtxGetCurrent)(&ctx) == CUDA_SUCCESS && ctx) {
    CUdevice d;
    if (DRV(cuCtxGetDevice)(&d) == CUDA_SUCCESS) ordinal = cc_device_ordinal_of(d);
  }
  char w[160];
  cc_mem_rec rec;
  uint64_t end;
  if (!cc_add_u64(addr, bytes ? bytes : 1, &end))
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: %llu bytes at 0x%llx wrap around",
                   who_text(who, index, w, sizeof w), (unsigned long long)bytes,
                   (unsigned long long)addr);
  int where = cc_reg_locate(&cc_mem_registry, addr, end, &rec);
  if (where == CC_LOC_IN) {
    if (bytes) {
      cucore_status st = cc_range_vs_rec(&rec, addr, bytes, who_text(who, index, w, sizeof w),
                                         "range");
      if (st != CUCORE_OK) return st;
    }
    switch (rec.kind) {
    case CUCORE_MEM_DEVICE:
    case CUCORE_MEM_DEVICE_PITCHED:
    case CUCORE_MEM_POOL:
    case CUCORE_MEM_IPC_IMPORTED:
    case CUCORE_MEM_GRAPH:
      if (!ctx || rec.ctx == ctx) return CUCORE_OK;
      break;
    case CUCORE_MEM_MANAGED:
    case CUCORE_MEM_POOL_MANAGED:
    case CUCORE_MEM_POOL_PINNED:
    case CUCORE_MEM_PINNED:
    case CUCORE_MEM_PINNED_POOL: return CUCORE_OK;
    case CUCORE_MEM_REGISTERED:
      if (rec.flags & CC_REC_ALIAS) return CUCORE_OK;
      if (rec.alias)
        return cc_fail(CUCORE_INVALID_ARGUMENT,
                       "%s: 0x%llx is registered host memory whose device address is 0x%llx; "
                       "pass that (cucore_host_get_device_pointer)",
                       who_text(who, index, w, sizeof w), (unsigned long long)addr,
                       (unsigned long long)(rec.alias + (addr - rec.base)));
      break;
    default: break;
    }
    return driver_verdict(addr, ctx, ordinal, who_text(who, index, w, sizeof w));
  }
  if (where == CC_LOC_INTO) {
    char what[256];
    cc_rec_describe(&rec, what, sizeof what);
    return cc_fail(CUCORE_OUT_OF_BOUNDS,
                   "%s: %llu bytes at 0x%llx start outside every cucore allocation but run into "
                   "%s",
                   who_text(who, index, w, sizeof w), (unsigned long long)bytes,
                   (unsigned long long)addr, what);
  }
  if (past_graph_alloc(addr, &rec)) {
    char what[256];
    cc_rec_describe(&rec, what, sizeof what);
    return cc_fail(CUCORE_OUT_OF_BOUNDS, "%s: 0x%llx is %llu bytes past the end of %s",
                   who_text(who, index, w, sizeof w), (unsigned long long)addr,
                   (unsigned long long)(addr - rec.base - rec.size), what);
  }
  if (cc_reg_was_freed(&cc_mem_registry, addr, &rec)) {
    /* Freed by cucore; unless the driver handed the range out again since, it is dangling. */
    drv_facts f;
    ask_driver(addr, ctx, &f);
    if (!f.ok || f.type == 0) {
      char what[256];
      cc_rec_describe(&rec, what, sizeof what);
      return cc_fail(CUCORE_INVALID_ARGUMENT,
                     "%s: 0x%llx was freed: it is %llu bytes into what was %s",
                     who_text(who, index, w, sizeof w), (unsigned long long)addr,
                     (unsigned long long)(addr - rec.base), what);
    }
  }
  return driver_verdict(addr, ctx, ordinal, who_text(who, index, w, sizeof w));
}

cucore_status cucore_pointer_check_access(cucore_device *dev, cucore_devptr addr, size_t bytes) {
  cc_begin();
  CC_CHECK_HANDLE(dev, DEVICE, "cucore_pointer_check_access", "dev");
  if (addr == 0)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "cucore_pointer_check_access: the address is 0");
  cucore_status st = cc_check_size(bytes, "cucore_pointer_check_access", "the size");
  if (st != CUCORE_OK) return st;
  return cc_mem_check_kernel_pointer(dev, addr, bytes, "cucore_pointer_check_access", -1);
}
