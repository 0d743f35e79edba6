/*
 * copy.c -- copies in every direction (by kind, and by address under unified addressing), 2D
 * and 3D copies with pitches and arrays, and fills of 8-, 16- and 32-bit values (also 2D).
 * Every range is checked against the record (bounds.c) before the device is entered and the
 * driver is called; with a stream the work is queued on it. Without one it is synchronous:
 * complete when the call returns. The driver's own "synchronous" calls return early for copies
 * from pageable memory, device-to-device copies and fills of device memory (they only order
 * the work on the legacy stream, which streams made non-blocking do not wait for), so those
 * end with a wait for the legacy stream (cc_mem_finish_sync).
 */
#include "memory/memory.h"
#include "runtime/current.h"

#include <stdio.h>
#include <string.h>

/* The checks every copy and fill of `n` bytes or elements starts with: device and stream
 * (cc_mem_work_check), then *skip = 1 for an empty one, else `n` checked as a size (`what`). */
static cucore_status first_checks(cucore_device *dev, cucore_stream *s, size_t n, const char *what,
                                  const char *fn, int *skip) {
  cucore_status st = cc_mem_work_check(dev, s, fn);
  *skip = st == CUCORE_OK && n == 0;
  if (st != CUCORE_OK || *skip) return st;
  return cc_check_size(n, fn, what);
}

/* The checks of a copy before the driver: device and stream, the size, NULL addresses, then
 * both ranges against the record. Returns CUCORE_OK with *skip = 1 for an empty copy. */
CC_COLD static cucore_status precheck_slow(cucore_device *dev, cucore_stream *s, uint64_t dst,
                                           uint64_t src, size_t bytes, const char *fn, int *skip) {
  cucore_status st = first_checks(dev, s, bytes, "the byte count", fn, skip);
  if (st != CUCORE_OK || *skip) return st;
  if (!dst || !src)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: the %s is NULL/0 for a copy of %zu bytes", fn,
                   !dst ? "destination" : "source", bytes);
  return cc_mem_check_copy(dst, src, bytes, fn);
}

/* The same, the common case inline: a device, a stream of it or none, no capture under way, a
 * size, two addresses; then the ranges (cc_mem_check_copy trusts what this thread saw last). */
static inline cucore_status precheck(cucore_device *dev, cucore_stream *s, uint64_t dst,
                                     uint64_t src, size_t bytes, const char *fn, int *skip) {
  if (CC_LIKELY(cc_handle_live(dev, CC_KIND_DEVICE) &&
                (!s || (cc_handle_live(s, CC_KIND_STREAM) && s->dev->ctx == dev->ctx)) &&
                !cc_captures_active() && bytes && !((uint64_t)bytes >> 63) && dst && src)) {
    *skip = 0;
    return cc_mem_check_copy(dst, src, bytes, fn);
  }
  return precheck_slow(dev, s, dst, src, bytes, fn, skip);
}

/* The checks, then the device made current (trusting what cucore last saw on the thread: the
 * copy's call is made again after a real check when the driver refuses it for a context
 * reason, copy_call). CUCORE_OK with *skip = 1 for an empty copy: nothing more to do. */
static inline cucore_status copy_begin(cucore_device *dev, cucore_stream *s, uint64_t dst,
                                       uint64_t src, size_t bytes, const char *fn, int *skip) {
  cucore_status st = precheck(dev, s, dst, src, bytes, fn, skip);
  if (CC_UNLIKELY(st != CUCORE_OK || *skip)) return st;
  return cc_device_make_current_fast(dev);
}

/* One copy as the driver's call takes it: the asynchronous form on `s`, the synchronous one
 * without a stream. */
typedef struct copy_args {
  uint64_t dst, src;
  size_t bytes;
  cucore_stream *s;
} copy_args;
typedef CUresult (*copy_driver_call)(const copy_args *a);

/* *r = the call; refused for a context reason, the device is made current for real (asking
 * the driver) and the call made once more. Fails only when that making current fails. */
static inline cucore_status copy_call(cucore_device *dev, copy_driver_call call, const copy_args *a,
                                      CUresult *r) {
  *r = call(a);
  if (CC_LIKELY(*r == CUDA_SUCCESS) || !cc_mem_context_refusal(*r)) return CUCORE_OK;
  cc_device_forget_current();
  cucore_status st = cc_device_make_current(dev);
  if (st != CUCORE_OK) return st;
  *r = call(a);
  return CUCORE_OK;
}

static CUresult call_htod(const copy_args *a) {
  const void *src = (const void *)(uintptr_t)a->src;
  return a->s ? DRV(cuMemcpyHtoDAsync)((CUdeviceptr)a->dst, src, a->bytes, a->s->handle)
              : DRV(cuMemcpyHtoD)((CUdeviceptr)a->dst, src, a->bytes);
}

static CUresult call_dtoh(const copy_args *a) {
  void *dst = (void *)(uintptr_t)a->dst;
  return a->s ? DRV(cuMemcpyDtoHAsync)(dst, (CUdeviceptr)a->src, a->bytes, a->s->handle)
              : DRV(cuMemcpyDtoH)(dst, (CUdeviceptr)a->src, a->bytes);
}

static CUresult call_dtod(const copy_args *a) {
  return a->s ? DRV(cuMemcpyDtoDAsync)((CUdeviceptr)a->dst, (CUdeviceptr)a->src, a->bytes,
                                       a->s->handle)
              : DRV(cuMemcpyDtoD)((CUdeviceptr)a->dst, (CUdeviceptr)a->src, a->bytes);
}

/* By address under unified addressing (also between host buffers). */
static CUresult call_unified(const copy_args *a) {
  return a->s ? DRV(cuMemcpyAsync)((CUdeviceptr)a->dst, (CUdeviceptr)a->src, a->bytes, a->s->handle)
              : DRV(cuMemcpy)((CUdeviceptr)a->dst, (CUdeviceptr)a->src, a->bytes);
}

/* The typed call (host to device, device to host, device to device), and when the driver
 * refuses its address kinds (CUDA_ERROR_INVALID_VALUE: a "device" address that is host memory,
 * as a pinned-host pool's, or a host address that is device-mapped), the copy by address,
 * whose kinds the driver reads from the addresses. Both ends were bounds-checked before. */
static cucore_status copy_call_typed(cucore_device *dev, copy_driver_call typed, const copy_args *a,
                                     CUresult *r) {
  cucore_status st = copy_call(dev, typed, a, r);
  if (st == CUCORE_OK && *r == CUDA_ERROR_INVALID_VALUE) {
    CUresult unified;
    st = copy_call(dev, call_unified, a, &unified);
    if (st == CUCORE_OK && unified == CUDA_SUCCESS) *r = CUDA_SUCCESS;
  }
  return st;
}

cucore_status cucore_memcpy_htod(cucore_device *dev, cucore_devptr dst, const void *src,
                                 size_t bytes, cucore_stream *s) {
  cc_begin();
  copy_args a = {dst, (uint64_t)(uintptr_t)src, bytes, s};
  int skip;
  cucore_status st = copy_begin(dev, s, a.dst, a.src, bytes, "cucore_memcpy_htod", &skip);
  if (st != CUCORE_OK || skip) return st;
  CUresult r;
  st = copy_call_typed(dev, call_htod, &a, &r);
  if (st != CUCORE_OK) return st;
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, s ? "cuMemcpyHtoDAsync" : "cuMemcpyHtoD", "%zu bytes to 0x%llx", bytes,
                      (unsigned long long)dst);
  return s ? CUCORE_OK : cc_mem_finish_sync("host-to-device copy");
}

cucore_status cucore_memcpy_dtoh(cucore_device *dev, void *dst, cucore_devptr src, size_t bytes,
                                 cucore_stream *s) {
  cc_begin();
  copy_args a = {(uint64_t)(uintptr_t)dst, src, bytes, s};
  int skip;
  cucore_status st = copy_begin(dev, s, a.dst, a.src, bytes, "cucore_memcpy_dtoh", &skip);
  if (st != CUCORE_OK || skip) return st;
  CUresult r;
  st = copy_call_typed(dev, call_dtoh, &a, &r);
  if (st != CUCORE_OK) return st;
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, s ? "cuMemcpyDtoHAsync" : "cuMemcpyDtoH", "%zu bytes from 0x%llx", bytes,
                      (unsigned long long)src);
  return CUCORE_OK;
}

cucore_status cucore_memcpy_dtod(cucore_device *dev, cucore_devptr dst, cucore_devptr src,
                                 size_t bytes, cucore_stream *s) {
  cc_begin();
  copy_args a = {dst, src, bytes, s};
  int skip;
  cucore_status st = copy_begin(dev, s, dst, src, bytes, "cucore_memcpy_dtod", &skip);
  if (st != CUCORE_OK || skip) return st;
  CUresult r;
  st = copy_call_typed(dev, call_dtod, &a, &r);
  if (st != CUCORE_OK) return st;
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, s ? "cuMemcpyDtoDAsync" : "cuMemcpyDtoD", "%zu bytes", bytes);
  return s ? CUCORE_OK : cc_mem_finish_sync("device-to-device copy");
}

cucore_status cucore_memcpy(cucore_device *dev, cucore_devptr dst, cucore_devptr src, size_t bytes,
                            cucore_stream *s) {
  cc_begin();
  copy_args a = {dst, src, bytes, s};
  int skip;
  cucore_status st = copy_begin(dev, s, dst, src, bytes, "cucore_memcpy", &skip);
  if (st != CUCORE_OK || skip) return st;
  CUresult r;
  st = copy_call(dev, call_unified, &a, &r);
  if (st != CUCORE_OK) return st;
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, s ? "cuMemcpyAsync" : "cuMemcpy", "%zu bytes from 0x%llx to 0x%llx", bytes,
                      (unsigned long long)src, (unsigned long long)dst);
  return s ? CUCORE_OK : cc_mem_finish_sync("copy");
}

cucore_status cucore_memcpy_htoh(cucore_device *dev, void *dst, const void *src, size_t bytes,
                                 cucore_stream *s) {
  cc_begin();
  copy_args a = {(uint64_t)(uintptr_t)dst, (uint64_t)(uintptr_t)src, bytes, s};
  int skip;
  cucore_status st = copy_begin(dev, s, a.dst, a.src, bytes, "cucore_memcpy_htoh", &skip);
  if (st != CUCORE_OK || skip) return st;
  CUresult r;
  st = copy_call(dev, call_unified, &a, &r);
  if (st != CUCORE_OK) return st;
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, s ? "cuMemcpyAsync" : "cuMemcpy", "%zu bytes between host buffers", bytes);
  return CUCORE_OK;
}

/* ---- fills ----------------------------------------------------------------------------------- */

/* The checks of a fill of `count` elements of `size` bytes. */
static cucore_status fill_precheck(cucore_device *dev, cucore_stream *s, cucore_devptr dst,
                                   size_t count, unsigned size, const char *fn, int *skip) {
  cucore_status st = first_checks(dev, s, count, "the element count", fn, skip);
  if (st != CUCORE_OK || *skip) return st;
  if (!dst)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: the destination is 0 for a fill of %zu elements",
                   fn, count);
  if (dst % size)
    return cc_fail(CUCORE_ARG_ALIGNMENT, "%s: address 0x%llx is not %u-byte aligned", fn,
                   (unsigned long long)dst, size);
  uint64_t bytes;
  if (!cc_mul_u64(count, size, &bytes))
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: %zu elements of %u bytes overflow", fn, count,
                   size);
  st = cc_mem_check_range(dst, bytes, fn, "destination");
  if (st != CUCORE_OK) return st;
  return cc_device_make_current(dev);
}

/* The one fill of `count` elements of `size` (1, 2 or 4) bytes, for the three widths. */
static cucore_status fill(cucore_device *dev, cucore_devptr dst, uint32_t value, unsigned size,
                          size_t count, cucore_stream *s, const char *fn) {
  int skip;
  cucore_status st = fill_precheck(dev, s, dst, count, size, fn, &skip);
  if (st != CUCORE_OK || skip) return st;
  CUdeviceptr d = (CUdeviceptr)dst;
  CUresult r;
  const char *call, *what;
  if (size == 1) {
    call = s ? "cuMemsetD8Async" : "cuMemsetD8";
    what = "bytes";
    r = s ? DRV(cuMemsetD8Async)(d, (unsigned char)value, count, s->handle)
          : DRV(cuMemsetD8)(d, (unsigned char)value, count);
  } else if (size == 2) {
    call = s ? "cuMemsetD16Async" : "cuMemsetD16";
    what = "values";
    r = s ? DRV(cuMemsetD16Async)(d, (unsigned short)value, count, s->handle)
          : DRV(cuMemsetD16)(d, (unsigned short)value, count);
  } else {
    call = s ? "cuMemsetD32Async" : "cuMemsetD32";
    what = "words";
    r = s ? DRV(cuMemsetD32Async)(d, value, count, s->handle) : DRV(cuMemsetD32)(d, value, count);
  }
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, call, "%zu %s", count, what);
  return s ? CUCORE_OK : cc_mem_finish_sync("fill");
}

cucore_status cucore_memset_d8(cucore_device *dev, cucore_devptr dst, uint8_t value, size_t count,
                               cucore_stream *s) {
  cc_begin();
  return fill(dev, dst, value, 1, count, s, "cucore_memset_d8");
}

cucore_status cucore_memset_d16(cucore_device *dev, cucore_devptr dst, uint16_t value, size_t count,
                                cucore_stream *s) {
  cc_begin();
  return fill(dev, dst, value, 2, count, s, "cucore_memset_d16");
}

cucore_status cucore_memset_d32(cucore_device *dev, cucore_devptr dst, uint32_t value, size_t count,
                                cucore_stream *s) {
  cc_begin();
  return fill(dev, dst, value, 4, count, s, "cucore_memset_d32");
}

cucore_status cucore_memset_2d(cucore_device *dev, cucore_devptr dst, size_t pitch, uint32_t value,
                               unsigned element_bytes, size_t width, size_t height,
                               cucore_stream *s) {
  cc_begin();
  const char *fn = "cucore_memset_2d";
  cucore_status st = cc_mem_work_check(dev, s, fn);
  if (st != CUCORE_OK) return st;
  if (element_bytes != 1 && element_bytes != 2 && element_bytes != 4)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: element size %u is not 1, 2 or 4 bytes", fn,
                   element_bytes);
  if (width == 0 || height == 0) return CUCORE_OK;
  st = cc_check_size(width, fn, "the width");
  if (st == CUCORE_OK) st = cc_check_size(height, fn, "the height");
  if (st == CUCORE_OK) st = cc_check_size(pitch, fn, "the pitch");
  if (st != CUCORE_OK) return st;
  if (!dst) return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: the destination is 0", fn);
  if (dst % element_bytes || pitch % element_bytes)
    return cc_fail(CUCORE_ARG_ALIGNMENT,
                   "%s: the address 0x%llx and the pitch %zu must be multiples of the element "
                   "size %u",
                   fn, (unsigned long long)dst, pitch, element_bytes);
  uint64_t row_bytes, first, end;
  if (!cc_mul_u64(width, element_bytes, &row_bytes) || (height > 1 && pitch < row_bytes) ||
      !cc_footprint_2d(0, 0, pitch, row_bytes, height, &first, &end))
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: %zu rows of %zu elements of %u bytes with pitch %zu: the pitch is below "
                   "the row's bytes, or the size overflows",
                   fn, height, width, element_bytes, pitch);
  char shape[128];
  snprintf(shape, sizeof shape, "%zu rows of %llu bytes, pitch %zu", height,
           (unsigned long long)row_bytes, pitch);
  st = cc_mem_check_region(dst, first, end, fn, "destination", shape);
  if (st != CUCORE_OK) return st;
  st = cc_device_make_current(dev);
  if (st != CUCORE_OK) return st;
  CUresult r;
  CUdeviceptr d = (CUdeviceptr)dst;
  const char *call;
  if (element_bytes == 1) {
    call = s ? "cuMemsetD2D8Async" : "cuMemsetD2D8";
    r = s ? DRV(cuMemsetD2D8Async)(d, pitch, (unsigned char)value, width, height, s->handle)
          : DRV(cuMemsetD2D8)(d, pitch, (unsigned char)value, width, height);
  } else if (element_bytes == 2) {
    call = s ? "cuMemsetD2D16Async" : "cuMemsetD2D16";
    r = s ? DRV(cuMemsetD2D16Async)(d, pitch, (unsigned short)value, width, height, s->handle)
          : DRV(cuMemsetD2D16)(d, pitch, (unsigned short)value, width, height);
  } else {
    call = s ? "cuMemsetD2D32Async" : "cuMemsetD2D32";
    r = s ? DRV(cuMemsetD2D32Async)(d, pitch, value, width, height, s->handle)
          : DRV(cuMemsetD2D32)(d, pitch, value, width, height);
  }
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, call, "%s at 0x%llx", shape, (unsigned long long)dst);
  return s ? CUCORE_OK : cc_mem_finish_sync("2D fill");
}

/* ---- 2D and 3D copies ------------------------------------------------------------------------ */

/* One side of a 2D/3D copy: an array, or an address with pitch (and rows per slice). */
typedef struct side {
  const char *role;
  cucore_array *arr;
  uint64_t addr, pitch, slice_rows, x, y, z;
} side;

static cucore_status check_side(const side *sd, uint64_t width, uint64_t height, uint64_t depth,
                                int three_d, cucore_device *dev, const char *fn) {
  if (sd->arr) {
    const cucore_array_desc *a = &sd->arr->desc;
    if (sd->arr->dev->ctx != dev->ctx)
      return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: the %s array belongs to device %d, not %d", fn,
                     sd->role, sd->arr->dev->ordinal, dev->ordinal);
    uint64_t row_bytes = (uint64_t)a->width * sd->arr->elem_bytes;
    uint64_t rows = a->height ? a->height : 1, slices = a->depth ? a->depth : 1;
    uint64_t xe, ye, ze;
    if (!cc_add_u64(sd->x, width, &xe) || xe > row_bytes || !cc_add_u64(sd->y, height, &ye) ||
        ye > rows || !cc_add_u64(sd->z, depth, &ze) || ze > slices)
      return cc_fail(CUCORE_OUT_OF_BOUNDS,
                     "%s: the %s region (x %llu + %llu bytes, y %llu + %llu rows%s) does not fit "
                     "the array (%llu bytes per row, %llu rows, %llu slices)",
                     fn, sd->role, (unsigned long long)sd->x, (unsigned long long)width,
                     (unsigned long long)sd->y, (unsigned long long)height,
                     three_d ? ", and z as given" : "", (unsigned long long)row_bytes,
                     (unsigned long long)rows, (unsigned long long)slices);
    return CUCORE_OK;
  }
  if (!sd->addr) return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: the %s address is 0", fn, sd->role);
  if (height > 1 && sd->pitch < width)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: the %s pitch %llu is below the %llu bytes copied per row", fn, sd->role,
                   (unsigned long long)sd->pitch, (unsigned long long)width);
  if (three_d && depth > 1 && sd->slice_rows < height)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: the %s height %llu (rows per slice) is below the %llu rows copied", fn,
                   sd->role, (unsigned long long)sd->slice_rows, (unsigned long long)height);
  uint64_t first, end;
  int ok = three_d ? cc_footprint_3d(sd->x, sd->y, sd->z, sd->pitch, sd->slice_rows, width, height,
                                     depth, &first, &end)
                   : cc_footprint_2d(sd->x, sd->y, sd->pitch, width, height, &first, &end);
  if (!ok)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: the %s footprint overflows 64 bits", fn, sd->role);
  char shape[160];
  if (three_d)
    snprintf(shape, sizeof shape,
             "%llu slices of %llu rows of %llu bytes, pitch %llu, %llu rows "
             "per slice",
             (unsigned long long)depth, (unsigned long long)height, (unsigned long long)width,
             (unsigned long long)sd->pitch, (unsigned long long)sd->slice_rows);
  else
    snprintf(shape, sizeof shape, "%llu rows of %llu bytes, pitch %llu", (unsigned long long)height,
             (unsigned long long)width, (unsigned long long)sd->pitch);
  return cc_mem_check_region(sd->addr, first, end, fn, sd->role, shape);
}

/* The checks of a 2D/3D copy: device and stream (cc_mem_work_check), none for an empty copy
 * (*skip = 1), else the destination, then the source. */
static cucore_status check_copy(cucore_device *dev, cucore_stream *s, const side *dst,
                                const side *src, uint64_t width, uint64_t height, uint64_t depth,
                                int three_d, const char *fn, int *skip) {
  cucore_status st = cc_mem_work_check(dev, s, fn);
  *skip = st == CUCORE_OK && (width == 0 || height == 0 || depth == 0);
  if (st != CUCORE_OK || *skip) return st;
  st = check_side(dst, width, height, depth, three_d, dev, fn);
  if (st == CUCORE_OK) st = check_side(src, width, height, depth, three_d, dev, fn);
  return st;
}

/* Where one side goes in a driver's copy descriptor (CUDA_MEMCPY2D has no z and no rows per
 * slice: NULL there). */
typedef struct side_fields {
  size_t *x, *y, *z, *pitch, *height;
  CUmemorytype *type;
  CUdeviceptr *ptr;
  CUarray *array;
} side_fields;

/* Puts one side into a zeroed descriptor: an array, or unified memory with its pitch (and rows
 * per slice). */
static void put_side(const side *sd, side_fields f) {
  *f.x = sd->x;
  *f.y = sd->y;
  if (f.z) *f.z = sd->z;
  if (sd->arr) {
    *f.type = CU_MEMORYTYPE_ARRAY;
    *f.array = sd->arr->handle;
    return;
  }
  *f.type = CU_MEMORYTYPE_UNIFIED;
  *f.ptr = (CUdeviceptr)sd->addr;
  *f.pitch = sd->pitch;
  if (f.height) *f.height = sd->slice_rows;
}

cucore_status cucore_memcpy_2d(cucore_device *dev, const cucore_copy_2d *c, cucore_stream *s) {
  cc_begin();
  const char *fn = "cucore_memcpy_2d";
  CC_CHECK_ARG(c, fn, "copy");
  side src = {"source", c->src_array, c->src, c->src_pitch, 0, c->src_x_bytes, c->src_y, 0};
  side dst = {"destination", c->dst_array, c->dst, c->dst_pitch, 0, c->dst_x_bytes, c->dst_y, 0};
  int skip;
  cucore_status st = check_copy(dev, s, &dst, &src, c->width_bytes, c->height, 1, 0, fn, &skip);
  if (st != CUCORE_OK || skip) return st;
  CUDA_MEMCPY2D m = {.WidthInBytes = c->width_bytes, .Height = c->height};
  put_side(&src, (side_fields){&m.srcXInBytes, &m.srcY, NULL, &m.srcPitch, NULL, &m.srcMemoryType,
                               &m.srcDevice, &m.srcArray});
  put_side(&dst, (side_fields){&m.dstXInBytes, &m.dstY, NULL, &m.dstPitch, NULL, &m.dstMemoryType,
                               &m.dstDevice, &m.dstArray});
  st = cc_device_make_current(dev);
  if (st != CUCORE_OK) return st;
  CUresult r;
  if (s) {
    r = DRV(cuMemcpy2DAsync)(&m, s->handle);
  } else {
    r = DRV(cuMemcpy2D)(&m);
    /* Device-side pitches not made by cuMemAllocPitch may need the unaligned copy. */
    if (r == CUDA_ERROR_INVALID_VALUE) r = DRV(cuMemcpy2DUnaligned)(&m);
  }
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, s ? "cuMemcpy2DAsync" : "cuMemcpy2D", "%zu rows of %zu bytes", c->height,
                      c->width_bytes);
  return s ? CUCORE_OK : cc_mem_finish_sync("2D copy");
}

/* The two sides of a 3D copy. */
static void sides_3d(const cucore_copy_3d *c, side *src, side *dst) {
  *src = (side){"source",      c->src_array,   c->src,   c->src_pitch,
                c->src_height, c->src_x_bytes, c->src_y, c->src_z};
  *dst = (side){"destination", c->dst_array,   c->dst,   c->dst_pitch,
                c->dst_height, c->dst_x_bytes, c->dst_y, c->dst_z};
}

void cc_mem_copy_3d_desc(const cucore_copy_3d *c, CUDA_MEMCPY3D *m) {
  side src, dst;
  sides_3d(c, &src, &dst);
  *m = (CUDA_MEMCPY3D){.WidthInBytes = c->width_bytes, .Height = c->height, .Depth = c->depth};
  put_side(&src, (side_fields){&m->srcXInBytes, &m->srcY, &m->srcZ, &m->srcPitch, &m->srcHeight,
                               &m->srcMemoryType, &m->srcDevice, &m->srcArray});
  put_side(&dst, (side_fields){&m->dstXInBytes, &m->dstY, &m->dstZ, &m->dstPitch, &m->dstHeight,
                               &m->dstMemoryType, &m->dstDevice, &m->dstArray});
}

cucore_status cc_copy3d_to_driver(cucore_device *dev, const cucore_copy_3d *c, CUDA_MEMCPY3D *m,
                                  const char *fn) {
  side src, dst;
  sides_3d(c, &src, &dst);
  if (!c->width_bytes || !c->height || !c->depth)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: a copy of %zu bytes x %zu rows x %zu slices (each at least 1)", fn,
                   c->width_bytes, c->height, c->depth);
  cucore_status st = check_side(&dst, c->width_bytes, c->height, c->depth, 1, dev, fn);
  if (st == CUCORE_OK) st = check_side(&src, c->width_bytes, c->height, c->depth, 1, dev, fn);
  if (st != CUCORE_OK) return st;
  cc_mem_copy_3d_desc(c, m);
  return CUCORE_OK;
}

cucore_status cc_mem_check_copy_3d(cucore_device *dev, cucore_stream *s, const cucore_copy_3d *c,
                                   const char *fn, int *skip) {
  side src, dst;
  sides_3d(c, &src, &dst);
  return check_copy(dev, s, &dst, &src, c->width_bytes, c->height, c->depth, 1, fn, skip);
}

cucore_status cucore_memcpy_3d(cucore_device *dev, const cucore_copy_3d *c, cucore_stream *s) {
  cc_begin();
  const char *fn = "cucore_memcpy_3d";
  CC_CHECK_ARG(c, fn, "copy");
  int skip;
  cucore_status st = cc_mem_check_copy_3d(dev, s, c, fn, &skip);
  if (st != CUCORE_OK || skip) return st;
  CUDA_MEMCPY3D m;
  cc_mem_copy_3d_desc(c, &m);
  st = cc_device_make_current(dev);
  if (st != CUCORE_OK) return st;
  CUresult r = s ? DRV(cuMemcpy3DAsync)(&m, s->handle) : DRV(cuMemcpy3D)(&m);
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, s ? "cuMemcpy3DAsync" : "cuMemcpy3D", "%zu x %zu rows of %zu bytes",
                      c->depth, c->height, c->width_bytes);
  return s ? CUCORE_OK : cc_mem_finish_sync("3D copy");
}
