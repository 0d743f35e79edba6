/*
 * dlpack.c -- DLPack (0.6, Debian's libdlpack-dev): cucore allocations exported as
 * DLManagedTensor, tensors of other libraries imported and held. The public header passes
 * tensors as `void *` so it needs no dlpack.h; only this file includes it.
 *
 * Export: the DLManagedTensor, its shape and strides are one malloc'd block owned by cucore
 * until the consumer calls the deleter. A plain export counts as a user of the allocation (a
 * free is refused while it lives); CUCORE_DLPACK_TRANSFER marks the allocation as the
 * consumer's, and the deleter frees it. Import: the range is recorded (for bounds checks) unless
 * it lies in memory cucore knows, and release calls the producer's deleter.
 *
 * DLPack 1.x (memory/dlpack_v1.h declares its struct when the installed header is 0.x): the
 * export block holds either struct (both start at the block), the deleter of each ends the
 * export the same way; an import remembers which struct it holds, its version and flags, and
 * records a read-only tensor's range read-only (bounds.c refuses writes into it).
 */
#include "memory/resource.h"

#include "memory/dlpack_v1.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Validates a description (ndim, shape, dtype) and computes its extent, as
 * cucore_tensor_extent; `fn` names the caller in messages. */
static cucore_status tensor_extent(const cucore_tensor_desc *t, int64_t *lo, int64_t *hi,
                                   const char *fn) {
  if (t->ndim < 0 || t->ndim > CUCORE_TENSOR_MAX_DIMS)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: ndim %d is outside 0..%d", fn, t->ndim,
                   CUCORE_TENSOR_MAX_DIMS);
  if (t->dtype.bits == 0 || t->dtype.lanes == 0)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: dtype (code %u, %u bits, %u lanes) has no size",
                   fn, t->dtype.code, t->dtype.bits, t->dtype.lanes);
  if (t->dtype.code > CUCORE_DTYPE_BOOL)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: dtype code %u is not a DLPack type code (0 int .. 6 bool)", fn,
                   t->dtype.code);
  if (t->byte_offset > (uint64_t)INT64_MAX)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: byte_offset %llu is too large", fn,
                   (unsigned long long)t->byte_offset);
  int64_t elem = ((int64_t)t->dtype.bits * t->dtype.lanes + 7) / 8;
  int64_t off = (int64_t)t->byte_offset;
  int64_t strides[CUCORE_TENSOR_MAX_DIMS];
  int empty = 0;
  for (int i = 0; i < t->ndim; i++) {
    if (t->shape[i] < 0)
      return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: shape[%d] is %lld (expected >= 0)", fn, i,
                     (long long)t->shape[i]);
    if (t->shape[i] == 0) empty = 1;
  }
  if (empty) {
    *lo = *hi = off;
    return CUCORE_OK;
  }
  if (t->compact) {
    int64_t s = 1;
    for (int i = t->ndim - 1; i >= 0; i--) {
      strides[i] = s;
      if (__builtin_mul_overflow(s, t->shape[i], &s))
        return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: the shape's element count overflows", fn);
    }
  } else {
    memcpy(strides, t->strides, sizeof(int64_t) * (size_t)t->ndim);
  }
  int64_t min_e = 0, max_e = 0;
  for (int i = 0; i < t->ndim; i++) {
    int64_t span;
    if (__builtin_mul_overflow(t->shape[i] - 1, strides[i], &span) ||
        __builtin_add_overflow(span < 0 ? min_e : max_e, span, span < 0 ? &min_e : &max_e))
      return cc_fail(CUCORE_INVALID_ARGUMENT,
                     "%s: dimension %d (%lld elements, stride %lld) overflows 64 bits", fn, i,
                     (long long)t->shape[i], (long long)strides[i]);
  }
  int64_t a, b;
  if (__builtin_mul_overflow(min_e, elem, &a) || __builtin_add_overflow(off, a, lo) ||
      __builtin_add_overflow(max_e, 1, &b) || __builtin_mul_overflow(b, elem, &b) ||
      __builtin_add_overflow(off, b, hi))
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: the tensor's extent overflows 64 bits", fn);
  return CUCORE_OK;
}

cucore_status cucore_tensor_extent(const cucore_tensor_desc *t, int64_t *lo, int64_t *hi) {
  cc_begin();
  CC_CHECK_ARG(t, "cucore_tensor_extent", "t");
  CC_CHECK_ARG(lo, "cucore_tensor_extent", "lo");
  CC_CHECK_ARG(hi, "cucore_tensor_extent", "hi");
  *lo = *hi = 0;
  return tensor_extent(t, lo, hi, "cucore_tensor_extent");
}

/* The strides of a compact (row-major) tensor, in elements; an extent of 0 counts as 1. */
static void compact_strides(int ndim, const int64_t *shape, int64_t *strides) {
  int64_t s = 1;
  for (int i = ndim - 1; i >= 0; i--) {
    strides[i] = s;
    (void)__builtin_mul_overflow(s, shape[i] ? shape[i] : 1, &s);
  }
}

/* ---- export ---------------------------------------------------------------------------- */

typedef struct cc_dl_export {
  union { /* first: the pointer handed out is the block's */
    DLManagedTensor mt;
    DLManagedTensorVersioned mtv;
  } u;
  int64_t shape[CUCORE_TENSOR_MAX_DIMS];
  int64_t strides[CUCORE_TENSOR_MAX_DIMS];
  uint64_t rec_base; /* the allocation's start */
  unsigned flags;
} cc_dl_export;

/* The end of an export, whichever struct it was: the use it held ends, or with
 * CUCORE_DLPACK_TRANSFER the allocation is freed. */
static void export_end(cc_dl_export *e) {
  if (e->flags & CUCORE_DLPACK_TRANSFER) {
    cc_mem_rec rec;
    if (cc_reg_take(&cc_mem_registry, e->rec_base, NULL, NULL, 1, &rec) == CC_REG_OK) {
      if (rec.kind == CUCORE_MEM_PINNED_POOL)
        cc_hpool_give_back(&rec);
      else if (rec.kind == CUCORE_MEM_RESOURCE)
        cc_mres_give_back_anywhere(&rec);
      else
        (void)cc_mem_free_rec_raw(&rec);
    }
  } else {
    (void)cc_reg_use(&cc_mem_registry, e->rec_base, 1, -1, NULL);
  }
  free(e);
}

static void export_deleter(DLManagedTensor *self) {
  if (self) export_end(self->manager_ctx);
}

static void export_deleter_versioned(DLManagedTensorVersioned *self) {
  if (self) export_end(self->manager_ctx);
}

static int dl_device_type(cucore_mem_kind kind) {
  switch (kind) {
  case CUCORE_MEM_DEVICE:
  case CUCORE_MEM_DEVICE_PITCHED:
  case CUCORE_MEM_POOL:
  case CUCORE_MEM_IPC_IMPORTED: return kDLCUDA;
  case CUCORE_MEM_MANAGED:
  case CUCORE_MEM_POOL_MANAGED: return kDLCUDAManaged;
  case CUCORE_MEM_POOL_PINNED:
  case CUCORE_MEM_PINNED:
  case CUCORE_MEM_PINNED_POOL:
  case CUCORE_MEM_REGISTERED: return kDLCUDAHost;
  default: return 0;
  }
}

/* A resource's memory by its facts: managed, host (pinned, not of a device), else device. */
static int dl_resource_type(unsigned flags) {
  if (flags & CUCORE_MR_MANAGED) return kDLCUDAManaged;
  if (flags & CUCORE_MR_PINNED) return kDLCUDAHost;
  return (flags & CUCORE_MR_DEVICE_ACCESSIBLE) ? kDLCUDA : 0;
}

/* The allocation `ptr` lies in (*rec) may be exported as a tensor touching bytes [lo, hi) from
 * ptr: cucore recorded it, exports its kind (*dev_type, the DLPack device type), has not handed
 * it to a consumer, and the bytes lie within it. */
static cucore_status export_target(cucore_devptr ptr, int64_t lo, int64_t hi, cc_mem_rec *rec,
                                   int *dev_type, const char *fn) {
  if (!cc_reg_find(&cc_mem_registry, ptr, rec))
    return cc_mem_explain_take(CC_REG_NOT_FOUND, rec, ptr, fn, "in a live cucore allocation");
  char what[256];
  *dev_type = dl_device_type(rec->kind);
  if (rec->kind == CUCORE_MEM_RESOURCE) *dev_type = dl_resource_type(cc_mres_rec_flags(rec));
  if (!*dev_type || (rec->flags & CC_REC_ALIAS))
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: 0x%llx is in %s, which cucore does not export%s",
                   fn, (unsigned long long)ptr, cc_rec_describe(rec, what, sizeof what),
                   (rec->flags & CC_REC_ALIAS) ? " (export the host address instead)" : "");
  if (rec->flags & CC_REC_DLPACK_OWNED)
    return cc_fail(CUCORE_IN_USE, "%s: 0x%llx (%s) was handed to a DLPack consumer already", fn,
                   (unsigned long long)ptr, cc_rec_describe(rec, what, sizeof what));
  /* The bytes the tensor touches must lie in the allocation. */
  int64_t from = (int64_t)(ptr - rec->base) + lo, to = (int64_t)(ptr - rec->base) + hi;
  if (hi > lo && (from < 0 || (uint64_t)to > rec->size))
    return cc_fail(CUCORE_OUT_OF_BOUNDS,
                   "%s: the tensor touches bytes %lld to %lld of %s (from offset %llu, its bytes "
                   "%lld to %lld); they must lie within its %llu bytes",
                   fn, (long long)from, (long long)to, cc_rec_describe(rec, what, sizeof what),
                   (unsigned long long)(ptr - rec->base), (long long)lo, (long long)hi,
                   (unsigned long long)rec->size);
  return CUCORE_OK;
}

/* The export's block: the DLManagedTensor of `t` at `ptr` in `rec` (a DLManagedTensorVersioned
 * of version `v` when `v.major` is above 0), with its shape and strides; NULL when out of host
 * memory. */
static cc_dl_export *export_block(cucore_devptr ptr, const cucore_tensor_desc *t,
                                  const cc_mem_rec *rec, int dev_type, unsigned flags,
                                  cucore_dlpack_version v) {
  cc_dl_export *e = cc_calloc(1, sizeof *e, "a DLPack export");
  if (!e) return NULL;
  memcpy(e->shape, t->shape, sizeof(int64_t) * (size_t)t->ndim);
  if (t->compact)
    compact_strides(t->ndim, t->shape, e->strides);
  else
    memcpy(e->strides, t->strides, sizeof(int64_t) * (size_t)t->ndim);
  e->rec_base = rec->base;
  e->flags = flags;
  DLTensor *dl = v.major ? &e->u.mtv.dl_tensor : &e->u.mt.dl_tensor;
  dl->data = (void *)(uintptr_t)ptr;
  dl->device.device_type = (DLDeviceType)dev_type;
  dl->device.device_id = rec->ordinal >= 0 ? rec->ordinal : 0;
  dl->ndim = t->ndim;
  dl->dtype.code = t->dtype.code;
  dl->dtype.bits = t->dtype.bits;
  dl->dtype.lanes = t->dtype.lanes;
  dl->shape = t->ndim ? e->shape : NULL;
  dl->strides = t->ndim ? e->strides : NULL;
  dl->byte_offset = t->byte_offset;
  if (v.major) {
    e->u.mtv.version.major = v.major;
    e->u.mtv.version.minor = v.minor;
    e->u.mtv.manager_ctx = e;
    e->u.mtv.deleter = export_deleter_versioned;
    e->u.mtv.flags = ((flags & CUCORE_DLPACK_READ_ONLY) ? DLPACK_FLAG_BITMASK_READ_ONLY : 0) |
                     ((flags & CUCORE_DLPACK_COPIED) ? DLPACK_FLAG_BITMASK_IS_COPIED : 0);
  } else {
    e->u.mt.manager_ctx = e;
    e->u.mt.deleter = export_deleter;
  }
  return e;
}

/* Counts the export as a user of the allocation at `ptr`, or with CUCORE_DLPACK_TRANSFER
 * hands the allocation to the consumer. */
static cucore_status export_claim(cucore_devptr ptr, unsigned flags, const char *fn) {
  cc_mem_rec rec;
  cc_reg_result res = (flags & CUCORE_DLPACK_TRANSFER)
                          ? cc_reg_claim(&cc_mem_registry, ptr, &rec)
                          : cc_reg_use(&cc_mem_registry, ptr, 1, 1, &rec);
  if (res == CC_REG_OK) return CUCORE_OK;
  if (res == CC_REG_BUSY) {
    char what[256];
    return cc_fail(CUCORE_IN_USE,
                   "%s: CUCORE_DLPACK_TRANSFER of 0x%llx (%s): %u texture or surface object%s "
                   "and %u DLPack export%s still use it",
                   fn, (unsigned long long)ptr, cc_rec_describe(&rec, what, sizeof what),
                   rec.textures, rec.textures == 1 ? "" : "s", rec.exports,
                   rec.exports == 1 ? "" : "s");
  }
  return cc_mem_explain_take(res, &rec, ptr, fn, "in a live cucore allocation");
}

/* The flags an export of version `v` takes: TRANSFER always, READ_ONLY and COPIED only in the
 * versioned struct (the legacy one has no flags word to carry them). `asked` is the consumer's
 * newest version when it was given (cucore_dlpack_export_max_version), else NULL. */
static cucore_status export_flags_check(unsigned flags, cucore_dlpack_version v,
                                        const cucore_dlpack_version *asked, const char *fn) {
  unsigned all = CUCORE_DLPACK_TRANSFER | CUCORE_DLPACK_READ_ONLY | CUCORE_DLPACK_COPIED;
  if (flags & ~all)
    return cc_fail(
        CUCORE_INVALID_ARGUMENT,
        "%s: unknown flags 0x%x (expected CUCORE_DLPACK_TRANSFER, CUCORE_DLPACK_READ_ONLY, "
        "CUCORE_DLPACK_COPIED or 0)",
        fn, flags & ~all);
  unsigned versioned_only = flags & (CUCORE_DLPACK_READ_ONLY | CUCORE_DLPACK_COPIED);
  if (v.major || !versioned_only) return CUCORE_OK;
  const char *flag = (flags & CUCORE_DLPACK_READ_ONLY) ? "CUCORE_DLPACK_READ_ONLY"
                                                       : "CUCORE_DLPACK_COPIED";
  if (asked)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: %s needs a DLManagedTensorVersioned (DLPack 1.0 or later), but the "
                   "consumer reads DLPack %u.%u at most, whose DLManagedTensor has no flags: "
                   "export for a 1.x consumer, or without the flag",
                   fn, flag, asked->major, asked->minor);
  return cc_fail(CUCORE_INVALID_ARGUMENT,
                 "%s: %s needs a DLManagedTensorVersioned (DLPack 1.0 or later); the legacy "
                 "DLManagedTensor this call makes has no flags: use "
                 "cucore_dlpack_export_versioned",
                 fn, flag);
}

/* One export of either struct (`v.major` 0: legacy), as the public calls describe. */
static cucore_status export_as(cucore_devptr ptr, const cucore_tensor_desc *t, unsigned flags,
                               cucore_dlpack_version v, const cucore_dlpack_version *asked,
                               void **managed_tensor, const char *fn) {
  CC_CHECK_ARG(managed_tensor, fn, "managed_tensor");
  *managed_tensor = NULL;
  CC_CHECK_ARG(t, fn, "t");
  cucore_status st = export_flags_check(flags, v, asked, fn);
  if (st != CUCORE_OK) return st;
  int64_t lo, hi;
  cc_mem_rec rec;
  int dev_type = 0;
  st = tensor_extent(t, &lo, &hi, fn);
  if (st == CUCORE_OK) st = export_target(ptr, lo, hi, &rec, &dev_type, fn);
  if (st != CUCORE_OK) return st;
  cc_dl_export *e = export_block(ptr, t, &rec, dev_type, flags, v);
  if (!e) return CUCORE_HOST_OUT_OF_MEMORY;
  st = export_claim(ptr, flags, fn);
  if (st != CUCORE_OK) {
    free(e);
    return st;
  }
  *managed_tensor = &e->u;
  return CUCORE_OK;
}

cucore_status cucore_dlpack_export(cucore_devptr ptr, const cucore_tensor_desc *t, unsigned flags,
                                   void **managed_tensor) {
  cc_begin();
  cucore_dlpack_version legacy = {0, 0};
  return export_as(ptr, t, flags, legacy, NULL, managed_tensor, "cucore_dlpack_export");
}

cucore_status cucore_dlpack_export_versioned(cucore_devptr ptr, const cucore_tensor_desc *t,
                                             unsigned flags, void **managed_tensor) {
  cc_begin();
  cucore_dlpack_version v = {CC_DLPACK_MAJOR, CC_DLPACK_MINOR};
  return export_as(ptr, t, flags, v, NULL, managed_tensor, "cucore_dlpack_export_versioned");
}

cucore_status cucore_dlpack_export_max_version(cucore_devptr ptr, const cucore_tensor_desc *t,
                                               unsigned flags, cucore_dlpack_version max_version,
                                               void **managed_tensor, cucore_dlpack_version *made) {
  cc_begin();
  if (made) made->major = made->minor = 0;
  /* Major 0 reads the legacy struct; 1 reads 1.x up to its minor (cucore uses nothing past
   * 1.0, so it claims no more than asked); a newer major reads 1.x too, by the array API's rule
   * that a producer gives its newest version at or below the consumer's. */
  cucore_dlpack_version v = {0, 0};
  if (max_version.major >= 1) {
    v.major = CC_DLPACK_MAJOR;
    v.minor = (max_version.major == 1 && max_version.minor < CC_DLPACK_MINOR) ? max_version.minor
                                                                              : CC_DLPACK_MINOR;
  }
  cucore_status st = export_as(ptr, t, flags, v, &max_version, managed_tensor,
                               "cucore_dlpack_export_max_version");
  if (st == CUCORE_OK && made) *made = v;
  return st;
}

/* ---- import ---------------------------------------------------------------------------- */

struct cucore_dlpack_tensor {
  cc_handle hdr;               /* first: the magic word of base/handle.h */
  DLManagedTensor *mt;         /* the legacy tensor held, or NULL */
  DLManagedTensorVersioned *v; /* the versioned tensor held, or NULL */
  cucore_dlpack_info info;
  cucore_dlpack_version version; /* {0, 0} for a legacy tensor */
  uint64_t flags;                /* the versioned tensor's flags word */
  uint64_t reg_base;             /* the recorded range's start; 0 when nothing was recorded */
};

static const char *device_type_name(int t) {
  switch (t) {
  case kDLCPU: return "CPU";
  case kDLCUDA: return "CUDA";
  case kDLCUDAHost: return "CUDA host";
  case kDLOpenCL: return "OpenCL";
  case kDLVulkan: return "Vulkan";
  case kDLMetal: return "Metal";
  case kDLVPI: return "VPI";
  case kDLROCM: return "ROCm";
  case kDLROCMHost: return "ROCm host";
  case kDLExtDev: return "an external device";
  case kDLCUDAManaged: return "CUDA managed";
  default: return "an unknown device type";
  }
}

/* The tensor's device, dimensions and shape are ones cucore takes. */
static cucore_status import_check(const DLTensor *dl, const char *fn) {
  int dt = (int)dl->device.device_type;
  if (dt != kDLCPU && dt != kDLCUDA && dt != kDLCUDAHost && dt != kDLCUDAManaged)
    return cc_fail(CUCORE_NOT_SUPPORTED,
                   "%s: the tensor lives on %s (DLDeviceType %d); cucore takes CPU, CUDA, CUDA "
                   "host and CUDA managed tensors",
                   fn, device_type_name(dt), dt);
  if (dl->ndim < 0 || dl->ndim > CUCORE_TENSOR_MAX_DIMS)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: ndim %d is outside 0..%d", fn, dl->ndim,
                   CUCORE_TENSOR_MAX_DIMS);
  if (dl->ndim > 0 && !dl->shape)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: the tensor has %d dimensions but no shape", fn,
                   dl->ndim);
  return CUCORE_OK;
}

/* The description of a DLPack tensor, validated, with its extent [*lo, *hi) in bytes from its
 * address; the strides of a compact one are filled in. */
static cucore_status import_desc(const DLTensor *dl, cucore_tensor_desc *d, int64_t *lo,
                                 int64_t *hi, const char *fn) {
  d->ndim = dl->ndim;
  d->dtype.code = dl->dtype.code;
  d->dtype.bits = dl->dtype.bits;
  d->dtype.lanes = dl->dtype.lanes;
  d->byte_offset = dl->byte_offset;
  for (int i = 0; i < dl->ndim; i++) d->shape[i] = dl->shape[i];
  if (dl->strides) {
    for (int i = 0; i < dl->ndim; i++) d->strides[i] = dl->strides[i];
  } else {
    d->compact = 1;
  }
  cucore_status st = tensor_extent(d, lo, hi, fn);
  if (st != CUCORE_OK) return st;
  if (d->compact) {
    compact_strides(d->ndim, d->shape, d->strides);
    d->compact = 0;
  }
  return CUCORE_OK;
}

/* The bytes [*a, *b) a tensor at `data` touches: data + lo to data + hi, lo negative with
 * negative strides. 0 when that is no valid range (no address, or it wraps). */
static int touched_bytes(uint64_t data, int64_t lo, int64_t hi, uint64_t *a, uint64_t *b) {
  *a = *b = 0;
  if (!data) return 0;
  if (lo < 0) {
    if ((uint64_t)-lo > data) return 0;
    *a = data - (uint64_t)-lo;
  } else if (!cc_add_u64(data, (uint64_t)lo, a)) {
    return 0;
  }
  return cc_add_u64(*a, (uint64_t)(hi - lo), b);
}

/* The touched bytes [a, b) against cucore's record: in an allocation they must fit it; outside
 * every allocation they are recorded as an imported tensor (*reg_base = a), read-only when
 * `read_only`. */
static cucore_status import_record(uint64_t a, uint64_t b, int ordinal, int read_only,
                                   uint64_t *reg_base, const char *fn) {
  cc_mem_rec rec;
  int where = cc_reg_locate(&cc_mem_registry, a, b, &rec);
  if (where == CC_LOC_IN) return cc_range_vs_rec(&rec, a, b - a, fn, "tensor");
  if (where == CC_LOC_INTO) {
    char what[256];
    return cc_fail(CUCORE_OUT_OF_BOUNDS,
                   "%s: the tensor (%llu bytes at 0x%llx) starts outside cucore's allocations "
                   "but runs into %s",
                   fn, (unsigned long long)(b - a), (unsigned long long)a,
                   cc_rec_describe(&rec, what, sizeof what));
  }
  cc_mem_rec nr = {.base = a,
                   .size = b - a,
                   .kind = CUCORE_MEM_DLPACK_IMPORTED,
                   .ordinal = ordinal,
                   .flags = read_only ? CC_REC_READ_ONLY : 0};
  if (cc_reg_insert(&cc_mem_registry, &nr, 0) != CC_REG_OK)
    return cc_fail(CUCORE_HOST_OUT_OF_MEMORY, "%s: could not record the tensor's range", fn);
  *reg_base = a;
  return CUCORE_OK;
}

/* The handle's facts of `dl`: its description and where it lies, its bytes checked against or
 * added to the record. */
static cucore_status import_fill(cucore_dlpack_tensor *h, const DLTensor *dl, const char *fn) {
  cucore_dlpack_info *in = &h->info;
  int64_t lo = 0, hi = 0;
  cucore_status st = import_desc(dl, &in->desc, &lo, &hi, fn);
  if (st != CUCORE_OK) return st;
  int dt = (int)dl->device.device_type;
  uint64_t data = (uint64_t)(uintptr_t)dl->data;
  in->data = data;
  in->device_type = dt;
  in->device_id = dl->device.device_id;
  in->span_bytes = (uint64_t)(hi - lo);
  if (hi <= lo) return CUCORE_OK;
  uint64_t a, b;
  if (!touched_bytes(data, lo, hi, &a, &b))
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: the tensor at %p (bytes %lld to %lld from it) is not a valid range", fn,
                   dl->data, (long long)lo, (long long)hi);
  int ordinal = (dt == kDLCUDA || dt == kDLCUDAManaged) ? dl->device.device_id : -1;
  int read_only = (h->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0;
  return import_record(a, b, ordinal, read_only, &h->reg_base, fn);
}

/* The handle of an import of `dl` (checked, its range recorded), with the version and flags of
 * the struct that holds it; the caller sets which struct. */
static cucore_status import_handle(const DLTensor *dl, cucore_dlpack_version version,
                                   uint64_t flags, cucore_dlpack_tensor **out, const char *fn) {
  cucore_status st = import_check(dl, fn);
  if (st != CUCORE_OK) return st;
  cucore_dlpack_tensor *h = cc_calloc(1, sizeof *h, "a DLPack import");
  if (!h) return CUCORE_HOST_OUT_OF_MEMORY;
  cc_handle_init(h, CC_KIND_DLPACK);
  h->version = version;
  h->flags = flags;
  st = import_fill(h, dl, fn);
  if (st != CUCORE_OK) {
    free(h);
    return st;
  }
  *out = h;
  return CUCORE_OK;
}

cucore_status cucore_dlpack_import(void *managed_tensor, cucore_dlpack_tensor **out) {
  cc_begin();
  const char *fn = "cucore_dlpack_import";
  CC_CHECK_ARG(out, fn, "out");
  *out = NULL;
  CC_CHECK_ARG(managed_tensor, fn, "managed_tensor");
  DLManagedTensor *mt = managed_tensor;
  cucore_dlpack_version legacy = {0, 0};
  cucore_status st = import_handle(&mt->dl_tensor, legacy, 0, out, fn);
  if (st == CUCORE_OK) (*out)->mt = mt;
  return st;
}

/* A versioned tensor's version is one cucore reads: major 1, any minor. */
static cucore_status import_version_check(const DLPackVersion *v, const char *fn) {
  if (v->major == CC_DLPACK_MAJOR) return CUCORE_OK;
  if (v->major > CC_DLPACK_MAJOR)
    return cc_fail(CUCORE_VERSION_MISMATCH,
                   "%s: the tensor is DLPack %u.%u; cucore reads DLPack %u.%u at most (major "
                   "version %u): ask the producer for a version %u tensor",
                   fn, v->major, v->minor, CC_DLPACK_MAJOR, CC_DLPACK_MINOR, CC_DLPACK_MAJOR,
                   CC_DLPACK_MAJOR);
  return cc_fail(CUCORE_VERSION_MISMATCH,
                 "%s: the tensor says DLPack %u.%u, but a DLManagedTensorVersioned is DLPack 1.0 "
                 "or later (cucore reads 1.x up to %u.%u): a legacy DLManagedTensor passed as a "
                 "versioned one? (cucore_dlpack_import takes those)",
                 fn, v->major, v->minor, CC_DLPACK_MAJOR, CC_DLPACK_MINOR);
}

cucore_status cucore_dlpack_import_versioned(void *managed_tensor, cucore_dlpack_tensor **out) {
  cc_begin();
  const char *fn = "cucore_dlpack_import_versioned";
  CC_CHECK_ARG(out, fn, "out");
  *out = NULL;
  CC_CHECK_ARG(managed_tensor, fn, "managed_tensor");
  DLManagedTensorVersioned *v = managed_tensor;
  cucore_status st = import_version_check(&v->version, fn);
  if (st != CUCORE_OK) return st;
  cucore_dlpack_version version = {v->version.major, v->version.minor};
  st = import_handle(&v->dl_tensor, version, v->flags, out, fn);
  if (st == CUCORE_OK) (*out)->v = v;
  return st;
}

cucore_status cucore_dlpack_get_tensor_info(const cucore_dlpack_tensor *t,
                                            cucore_dlpack_info *out) {
  cc_begin();
  CC_CHECK_HANDLE(t, DLPACK, "cucore_dlpack_get_tensor_info", "t");
  CC_CHECK_ARG(out, "cucore_dlpack_get_tensor_info", "out");
  *out = t->info;
  return CUCORE_OK;
}

cucore_status cucore_dlpack_get_version(const cucore_dlpack_tensor *t, cucore_dlpack_version *out) {
  cc_begin();
  CC_CHECK_HANDLE(t, DLPACK, "cucore_dlpack_get_version", "t");
  CC_CHECK_ARG(out, "cucore_dlpack_get_version", "out");
  *out = t->version;
  return CUCORE_OK;
}

cucore_status cucore_dlpack_get_flags(const cucore_dlpack_tensor *t, uint64_t *out) {
  cc_begin();
  CC_CHECK_HANDLE(t, DLPACK, "cucore_dlpack_get_flags", "t");
  CC_CHECK_ARG(out, "cucore_dlpack_get_flags", "out");
  *out = t->flags;
  return CUCORE_OK;
}

cucore_status cucore_dlpack_is_read_only(const cucore_dlpack_tensor *t, int *out) {
  cc_begin();
  CC_CHECK_HANDLE(t, DLPACK, "cucore_dlpack_is_read_only", "t");
  CC_CHECK_ARG(out, "cucore_dlpack_is_read_only", "out");
  *out = (t->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0;
  return CUCORE_OK;
}

static int accept_import(const cc_mem_rec *rec, void *ctx) {
  (void)ctx;
  return rec->kind == CUCORE_MEM_DLPACK_IMPORTED;
}

cucore_status cucore_dlpack_release(cucore_dlpack_tensor *t) {
  cc_begin();
  if (!t) return CUCORE_OK;
  CC_CHECK_HANDLE(t, DLPACK, "cucore_dlpack_release", "tensor");
  if (t->reg_base) {
    cc_mem_rec rec;
    cc_reg_result res = cc_reg_take(&cc_mem_registry, t->reg_base, accept_import, NULL, 0, &rec);
    if (res == CC_REG_BUSY)
      return cc_mem_explain_take(res, &rec, t->reg_base, "cucore_dlpack_release",
                                 "an imported tensor");
  }
  if (t->mt && t->mt->deleter) t->mt->deleter(t->mt);
  if (t->v && t->v->deleter) t->v->deleter(t->v);
  cc_handle_retire(t, CC_KIND_DLPACK);
  return CUCORE_OK;
}
