/*
 * texture.c -- CUDA arrays, texture objects (over arrays, linear memory and pitched 2D memory)
 * and surface objects (over arrays).
 *
 * Lifetimes: a texture or surface counts as a user of what it reads -- the array's counter, or
 * the record of the memory (cc_reg_use) -- so destroying the array or freeing the memory while
 * it exists is refused with CUCORE_IN_USE. The texture lets go when destroyed. Memory cucore did
 * not record is accepted but not tracked.
 */
#include "memory/memory.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cucore_texture {
  cc_handle hdr; /* first: the magic word of base/handle.h */
  CUtexObject handle;
  cucore_device *dev;
  cucore_array *arr; /* the array it reads, or NULL */
  atomic_uint *held; /* another counter of users it counts in (a mipmapped array's), or NULL */
  uint64_t rec_addr; /* an address in the recorded memory it reads, or 0 */
};

struct cucore_surface {
  cc_handle hdr; /* first: the magic word of base/handle.h */
  CUsurfObject handle;
  cucore_array *arr;
};

/* Bytes of a format; 0 when it is not a cucore_array_format. */
static unsigned cc_array_format_bytes(int format) {
  switch (format) {
  case CUCORE_FORMAT_U8:
  case CUCORE_FORMAT_S8: return 1;
  case CUCORE_FORMAT_U16:
  case CUCORE_FORMAT_S16:
  case CUCORE_FORMAT_HALF: return 2;
  case CUCORE_FORMAT_U32:
  case CUCORE_FORMAT_S32:
  case CUCORE_FORMAT_FLOAT: return 4;
  default: return 0;
  }
}

/* The format and channel check of arrays and textures over memory. */
static cucore_status cc_array_check_format(cucore_array_format format, unsigned channels,
                                           const char *fn) {
  if (!cc_array_format_bytes((int)format))
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: format 0x%x is not a cucore_array_format (U8, U16, U32, S8, S16, S32, "
                   "HALF, FLOAT)",
                   fn, (unsigned)format);
  if (channels != 1 && channels != 2 && channels != 4)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: %u channels (expected 1, 2 or 4)", fn, channels);
  return CUCORE_OK;
}

/* ---- arrays ---------------------------------------------------------------------------------- */

cucore_status cucore_array_create(cucore_device *dev, const cucore_array_desc *desc,
                                  cucore_array **out) {
  cc_begin();
  const char *fn = "cucore_array_create";
  CC_CHECK_ARG(out, fn, "out");
  *out = NULL;
  CC_CHECK_HANDLE(dev, DEVICE, fn, "dev");
  CC_CHECK_ARG(desc, fn, "desc");
  cucore_status st = cc_array_check_desc(desc, fn);
  if (st == CUCORE_OK) st = cc_mem_enter(dev, NULL, fn);
  if (st != CUCORE_OK) return st;
  CUDA_ARRAY3D_DESCRIPTOR d;
  cc_array_to_cu_desc(desc, &d);
  CUarray h = NULL;
  CUresult r = DRV(cuArray3DCreate)(&h, &d);
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, "cuArray3DCreate",
                      "%zu x %zu x %zu elements of %u channel%s, format "
                      "0x%x, flags 0x%x, on device %d",
                      desc->width, desc->height, desc->depth, desc->channels,
                      desc->channels == 1 ? "" : "s", (unsigned)desc->format, desc->flags,
                      dev->ordinal);
  cucore_array *a = cc_array_wrap(dev, h, desc);
  if (!a) {
    (void)DRV(cuArrayDestroy)(h);
    return CUCORE_HOST_OUT_OF_MEMORY;
  }
  *out = a;
  return CUCORE_OK;
}

cucore_status cc_array_check_desc(const cucore_array_desc *desc, const char *fn) {
  cucore_status st = cc_array_check_format(desc->format, desc->channels, fn);
  if (st != CUCORE_OK) return st;
  unsigned known = CUCORE_ARRAY_LAYERED | CUCORE_ARRAY_SURFACE | CUCORE_ARRAY_CUBEMAP |
                   CUCORE_ARRAY_TEXTURE_GATHER;
  if (desc->flags & ~known)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: unknown flags 0x%x (expected CUCORE_ARRAY_*)", fn,
                   desc->flags & ~known);
  if (desc->width == 0)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: width is 0 (expected > 0 elements)", fn);
  if (desc->depth && !desc->height && !(desc->flags & CUCORE_ARRAY_LAYERED))
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: depth %zu without a height: a 3D array needs height > 0 (or "
                   "CUCORE_ARRAY_LAYERED for layers of 1D arrays)",
                   fn, desc->depth);
  return CUCORE_OK;
}

void cc_array_to_cu_desc(const cucore_array_desc *desc, CUDA_ARRAY3D_DESCRIPTOR *d) {
  memset(d, 0, sizeof *d);
  d->Width = desc->width;
  d->Height = desc->height;
  d->Depth = desc->depth;
  d->Format = (CUarray_format)desc->format;
  d->NumChannels = desc->channels;
  d->Flags = desc->flags;
}

cucore_array *cc_array_wrap(cucore_device *dev, CUarray h, const cucore_array_desc *desc) {
  cucore_array *a = cc_calloc(1, sizeof *a, "an array handle");
  if (!a) return NULL;
  cc_handle_init(a, CC_KIND_ARRAY);
  a->handle = h;
  a->dev = dev;
  a->desc = *desc;
  a->elem_bytes = (size_t)cc_array_format_bytes((int)desc->format) * desc->channels;
  atomic_init(&a->users, 0);
  return a;
}

cucore_status cucore_array_destroy(cucore_array *arr) {
  cc_begin();
  if (!arr) return CUCORE_OK;
  CC_CHECK_HANDLE(arr, ARRAY, "cucore_array_destroy", "arr");
  if (arr->parent)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "cucore_array_destroy: the array is level %u of a "
                   "mipmapped array, which owns it (it goes with cucore_mipmap_destroy)",
                   arr->level);
  unsigned users = atomic_load(&arr->users);
  if (users)
    return cc_fail(CUCORE_IN_USE,
                   "cucore_array_destroy: %u texture or surface object%s still use%s the array; "
                   "destroy them first",
                   users, users == 1 ? "" : "s", users == 1 ? "s" : "");
  cucore_status st = cc_device_make_current(arr->dev);
  CUresult r = st == CUCORE_OK ? DRV(cuArrayDestroy)(arr->handle) : CUDA_SUCCESS;
  cc_handle_retire(arr, CC_KIND_ARRAY);
  if (st != CUCORE_OK) return st;
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuArrayDestroy", NULL);
  return CUCORE_OK;
}

cucore_status cucore_array_get_desc(const cucore_array *arr, cucore_array_desc *out) {
  cc_begin();
  CC_CHECK_HANDLE(arr, ARRAY, "cucore_array_get_desc", "arr");
  CC_CHECK_ARG(out, "cucore_array_get_desc", "out");
  *out = arr->desc;
  return CUCORE_OK;
}

cucore_status cucore_array_get_native(const cucore_array *arr, void **cuarray) {
  cc_begin();
  CC_CHECK_HANDLE(arr, ARRAY, "cucore_array_get_native", "arr");
  CC_CHECK_ARG(cuarray, "cucore_array_get_native", "cuarray");
  *cuarray = arr->handle;
  return CUCORE_OK;
}

/* Whole-array copies between the array and host memory (`to_host` picks the direction). */
static cucore_status array_host_copy(cucore_array *arr, void *host, size_t pitch, cucore_stream *s,
                                     int to_host, const char *fn) {
  CC_CHECK_HANDLE(arr, ARRAY, fn, "arr");
  CC_CHECK_ARG(host, fn, to_host ? "dst" : "src");
  cucore_status st = cc_mem_work_check(arr->dev, s, fn);
  if (st != CUCORE_OK) return st;
  uint64_t row = (uint64_t)arr->desc.width * arr->elem_bytes;
  uint64_t rows = arr->desc.height ? arr->desc.height : 1;
  uint64_t slices = arr->desc.depth ? arr->desc.depth : 1;
  if (pitch == 0) pitch = row;
  if (pitch < row)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: the host pitch %zu is below the array's %llu bytes per row", fn, pitch,
                   (unsigned long long)row);
  uint64_t first, end;
  if (!cc_footprint_3d(0, 0, 0, pitch, rows, row, rows, slices, &first, &end))
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: the host footprint overflows", fn);
  char shape[128];
  snprintf(shape, sizeof shape, "%llu slices of %llu rows of %llu bytes, pitch %zu",
           (unsigned long long)slices, (unsigned long long)rows, (unsigned long long)row, pitch);
  st = cc_mem_check_region((uint64_t)(uintptr_t)host, first, end, fn,
                           to_host ? "destination" : "source", shape);
  if (st == CUCORE_OK) st = cc_device_make_current(arr->dev);
  if (st != CUCORE_OK) return st;
  CUDA_MEMCPY3D m;
  memset(&m, 0, sizeof m);
  if (to_host) {
    m.srcMemoryType = CU_MEMORYTYPE_ARRAY;
    m.srcArray = arr->handle;
    m.dstMemoryType = CU_MEMORYTYPE_HOST;
    m.dstHost = host;
    m.dstPitch = pitch;
    m.dstHeight = rows;
  } else {
    m.srcMemoryType = CU_MEMORYTYPE_HOST;
    m.srcHost = host;
    m.srcPitch = pitch;
    m.srcHeight = rows;
    m.dstMemoryType = CU_MEMORYTYPE_ARRAY;
    m.dstArray = arr->handle;
  }
  m.WidthInBytes = row;
  m.Height = rows;
  m.Depth = slices;
  CUresult r = s ? DRV(cuMemcpy3DAsync)(&m, s->handle) : DRV(cuMemcpy3D)(&m);
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, s ? "cuMemcpy3DAsync" : "cuMemcpy3D", "%s an array (%s)",
                      to_host ? "from" : "to", shape);
  return s || to_host ? CUCORE_OK : cc_mem_finish_sync("copy to an array");
}

cucore_status cucore_array_copy_from_host(cucore_array *arr, const void *src, size_t src_pitch,
                                          cucore_stream *s) {
  cc_begin();
  return array_host_copy(arr, (void *)(uintptr_t)src, src_pitch, s, 0,
                         "cucore_array_copy_from_host");
}

cucore_status cucore_array_copy_to_host(cucore_array *arr, void *dst, size_t dst_pitch,
                                        cucore_stream *s) {
  cc_begin();
  return array_host_copy(arr, dst, dst_pitch, s, 1, "cucore_array_copy_to_host");
}

/* ---- textures ------------------------------------------------------------------------------ */

static int is_integer_format(cucore_array_format f) {
  return f != CUCORE_FORMAT_HALF && f != CUCORE_FORMAT_FLOAT;
}

/* `dims`: how many dimensions the resource has (address modes past them are ignored). */
cucore_status cc_tex_desc(const cucore_texture_desc *in, cucore_array_format format, int dims,
                          CUDA_TEXTURE_DESC *out, const char *fn) {
  static const CUaddress_mode modes[4] = {CU_TR_ADDRESS_MODE_CLAMP, CU_TR_ADDRESS_MODE_WRAP,
                                          CU_TR_ADDRESS_MODE_MIRROR, CU_TR_ADDRESS_MODE_BORDER};
  memset(out, 0, sizeof *out);
  cucore_texture_desc def;
  memset(&def, 0, sizeof def);
  const cucore_texture_desc *d = in ? in : &def;
  unsigned known = CUCORE_TEXTURE_READ_AS_INTEGER | CUCORE_TEXTURE_NORMALIZED_COORDS |
                   CUCORE_TEXTURE_SRGB | CUCORE_TEXTURE_SEAMLESS_CUBEMAP;
  if (d->flags & ~known)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: unknown texture flags 0x%x", fn,
                   d->flags & ~known);
  for (int i = 0; i < 3; i++) {
    int m = (int)d->address_mode[i];
    if (i >= dims) {
      out->addressMode[i] = CU_TR_ADDRESS_MODE_CLAMP;
      continue;
    }
    if (m < CUCORE_ADDRESS_CLAMP || m > CUCORE_ADDRESS_BORDER)
      return cc_fail(CUCORE_INVALID_ARGUMENT,
                     "%s: address_mode[%d] is %d (expected CLAMP 0, WRAP 1, MIRROR 2, BORDER 3)",
                     fn, i, m);
    if ((m == CUCORE_ADDRESS_WRAP || m == CUCORE_ADDRESS_MIRROR) &&
        !(d->flags & CUCORE_TEXTURE_NORMALIZED_COORDS))
      return cc_fail(CUCORE_INVALID_ARGUMENT,
                     "%s: address_mode[%d] is %s, which works only with normalized coordinates "
                     "(CUCORE_TEXTURE_NORMALIZED_COORDS); without them it would clamp",
                     fn, i, m == CUCORE_ADDRESS_WRAP ? "WRAP" : "MIRROR");
    out->addressMode[i] = modes[m];
  }
  if ((int)d->filter != CUCORE_FILTER_POINT && (int)d->filter != CUCORE_FILTER_LINEAR)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: filter %d is not POINT (0) or LINEAR (1)", fn,
                   (int)d->filter);
  if (d->filter == CUCORE_FILTER_LINEAR && is_integer_format(format) &&
      (d->flags & CUCORE_TEXTURE_READ_AS_INTEGER))
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: linear filtering returns floating-point values; it cannot read an integer "
                   "format as integers (drop CUCORE_TEXTURE_READ_AS_INTEGER)",
                   fn);
  if (d->max_anisotropy > 16)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: max_anisotropy %u is above 16", fn,
                   d->max_anisotropy);
  out->filterMode = (CUfilter_mode)d->filter;
  out->flags = d->flags;
  out->maxAnisotropy = d->max_anisotropy;
  memcpy(out->borderColor, d->border_color, sizeof out->borderColor);
  return CUCORE_OK;
}

cucore_status cc_texture_make(cucore_device *dev, const CUDA_RESOURCE_DESC *res,
                              const CUDA_TEXTURE_DESC *td, atomic_uint *held, cucore_texture **out,
                              const char *fn) {
  cucore_texture *t = cc_calloc(1, sizeof *t, "a texture handle");
  if (!t) return CUCORE_HOST_OUT_OF_MEMORY;
  cc_handle_init(t, CC_KIND_TEXTURE);
  CUresult r = DRV(cuTexObjectCreate)(&t->handle, res, td, NULL);
  if (r != CUDA_SUCCESS) {
    free(t);
    return cc_fail_cu(r, "cuTexObjectCreate", "%s on device %d", fn, dev->ordinal);
  }
  t->dev = dev;
  t->held = held;
  if (held) atomic_fetch_add(held, 1);
  *out = t;
  return CUCORE_OK;
}

cucore_status cucore_texture_create_array(cucore_array *arr, const cucore_texture_desc *desc,
                                          cucore_texture **out) {
  cc_begin();
  const char *fn = "cucore_texture_create_array";
  CC_CHECK_ARG(out, fn, "out");
  *out = NULL;
  CC_CHECK_HANDLE(arr, ARRAY, fn, "arr");
  CUDA_TEXTURE_DESC td;
  int dims = arr->desc.depth && !(arr->desc.flags & CUCORE_ARRAY_LAYERED) ? 3
             : arr->desc.height                                           ? 2
                                                                          : 1;
  cucore_status st = cc_tex_desc(desc, arr->desc.format, dims, &td, fn);
  if (st == CUCORE_OK) st = cc_device_make_current(arr->dev);
  if (st != CUCORE_OK) return st;
  CUDA_RESOURCE_DESC res;
  memset(&res, 0, sizeof res);
  res.resType = CU_RESOURCE_TYPE_ARRAY;
  res.res.array.hArray = arr->handle;
  atomic_fetch_add(&arr->users, 1);
  st = cc_texture_make(arr->dev, &res, &td, NULL, out, fn);
  if (st != CUCORE_OK) {
    atomic_fetch_sub(&arr->users, 1);
    return st;
  }
  (*out)->arr = arr;
  return CUCORE_OK;
}

static int dev_attr(cucore_device *dev, CUdevice_attribute a) {
  int v = 0;
  if (DRV(cuDeviceGetAttribute)(&v, a, dev->cudev) != CUDA_SUCCESS) return 0;
  return v;
}

/* Takes a use of recorded memory for a texture; refuses memory handed to a DLPack consumer. */
static cucore_status hold_memory(uint64_t addr, int *held, const char *fn) {
  *held = 0;
  cc_mem_rec rec;
  if (!cc_reg_find(&cc_mem_registry, addr, &rec)) return CUCORE_OK; /* not tracked */
  if (rec.flags & CC_REC_DLPACK_OWNED) {
    char what[256];
    return cc_fail(CUCORE_IN_USE, "%s: 0x%llx (%s) was handed to a DLPack consumer", fn,
                   (unsigned long long)addr, cc_rec_describe(&rec, what, sizeof what));
  }
  if (cc_reg_use(&cc_mem_registry, addr, 0, 1, NULL) == CC_REG_OK) *held = 1;
  return CUCORE_OK;
}

/* ptr is aligned to the device's texture alignment (textures over memory). */
static cucore_status check_texture_alignment(cucore_device *dev, cucore_devptr ptr,
                                             const char *fn) {
  int align = dev_attr(dev, CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT);
  if (align > 0 && ptr % (uint64_t)align)
    return cc_fail(CUCORE_ARG_ALIGNMENT,
                   "%s: 0x%llx is not aligned to device %d's texture alignment (%d bytes)", fn,
                   (unsigned long long)ptr, dev->ordinal, align);
  return CUCORE_OK;
}

/* The tail of a texture over memory at `ptr` (linear or pitched 2D, described by `res`): a use
 * of its record taken (hold_memory), the texture made, the use given back if that fails. */
static cucore_status texture_over_memory(cucore_device *dev, cucore_devptr ptr,
                                         const CUDA_RESOURCE_DESC *res, const CUDA_TEXTURE_DESC *td,
                                         cucore_texture **out, const char *fn) {
  int held;
  cucore_status st = hold_memory(ptr, &held, fn);
  if (st != CUCORE_OK) return st;
  st = cc_texture_make(dev, res, td, NULL, out, fn);
  if (st != CUCORE_OK) {
    if (held) (void)cc_reg_use(&cc_mem_registry, ptr, 0, -1, NULL);
    return st;
  }
  if (held) (*out)->rec_addr = ptr;
  return CUCORE_OK;
}

cucore_status cucore_texture_create_linear(cucore_device *dev, cucore_devptr ptr, size_t bytes,
                                           cucore_array_format format, unsigned channels,
                                           const cucore_texture_desc *desc, cucore_texture **out) {
  cc_begin();
  const char *fn = "cucore_texture_create_linear";
  CC_CHECK_ARG(out, fn, "out");
  *out = NULL;
  CC_CHECK_HANDLE(dev, DEVICE, fn, "dev");
  cucore_status st = cc_array_check_format(format, channels, fn);
  if (st != CUCORE_OK) return st;
  CUDA_TEXTURE_DESC td;
  st = cc_tex_desc(desc, format, 1, &td, fn);
  if (st != CUCORE_OK) return st;
  if (!ptr || !bytes)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: the address and size must be non-zero", fn);
  st = cc_check_size(bytes, fn, "the size");
  if (st != CUCORE_OK) return st;
  size_t elem = (size_t)cc_array_format_bytes((int)format) * channels;
  if (bytes % elem)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: %zu bytes is not a whole number of %zu-byte elements", fn, bytes, elem);
  st = cc_mem_check_range(ptr, bytes, fn, "texture range");
  if (st == CUCORE_OK) st = cc_mem_enter(dev, NULL, fn);
  if (st != CUCORE_OK) return st;
  st = check_texture_alignment(dev, ptr, fn);
  if (st != CUCORE_OK) return st;
  int max_w = dev_attr(dev, CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LINEAR_WIDTH);
  if (max_w > 0 && bytes / elem > (size_t)max_w)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: %zu elements is more than device %d's linear texture limit (%d)", fn,
                   bytes / elem, dev->ordinal, max_w);
  CUDA_RESOURCE_DESC res;
  memset(&res, 0, sizeof res);
  res.resType = CU_RESOURCE_TYPE_LINEAR;
  res.res.linear.devPtr = (CUdeviceptr)ptr;
  res.res.linear.format = (CUarray_format)format;
  res.res.linear.numChannels = channels;
  res.res.linear.sizeInBytes = bytes;
  return texture_over_memory(dev, ptr, &res, &td, out, fn);
}

cucore_status cucore_texture_create_pitch2d(cucore_device *dev, cucore_devptr ptr, size_t width,
                                            size_t height, size_t pitch, cucore_array_format format,
                                            unsigned channels, const cucore_texture_desc *desc,
                                            cucore_texture **out) {
  cc_begin();
  const char *fn = "cucore_texture_create_pitch2d";
  CC_CHECK_ARG(out, fn, "out");
  *out = NULL;
  CC_CHECK_HANDLE(dev, DEVICE, fn, "dev");
  cucore_status st = cc_array_check_format(format, channels, fn);
  if (st != CUCORE_OK) return st;
  CUDA_TEXTURE_DESC td;
  st = cc_tex_desc(desc, format, 2, &td, fn);
  if (st != CUCORE_OK) return st;
  if (!ptr || !width || !height)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: the address, width and height must be non-zero",
                   fn);
  size_t elem = (size_t)cc_array_format_bytes((int)format) * channels;
  uint64_t row, first, end;
  if (!cc_mul_u64(width, elem, &row) || pitch < row)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: the pitch %zu is below a row of %zu elements of %zu bytes", fn, pitch,
                   width, elem);
  if (!cc_footprint_2d(0, 0, pitch, row, height, &first, &end))
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: %zu rows of pitch %zu overflow", fn, height,
                   pitch);
  char shape[128];
  snprintf(shape, sizeof shape, "%zu rows of %zu elements, pitch %zu", height, width, pitch);
  st = cc_mem_check_region(ptr, first, end, fn, "texture", shape);
  if (st == CUCORE_OK) st = cc_mem_enter(dev, NULL, fn);
  if (st != CUCORE_OK) return st;
  st = check_texture_alignment(dev, ptr, fn);
  if (st != CUCORE_OK) return st;
  int palign = dev_attr(dev, CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT);
  if (palign > 0 && pitch % (size_t)palign)
    return cc_fail(CUCORE_ARG_ALIGNMENT,
                   "%s: the pitch %zu is not a multiple of device %d's texture pitch alignment "
                   "(%d bytes; cucore_mem_alloc_pitch gives one that is)",
                   fn, pitch, dev->ordinal, palign);
  int max_w = dev_attr(dev, CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_WIDTH);
  int max_h = dev_attr(dev, CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_HEIGHT);
  int max_p = dev_attr(dev, CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_PITCH);
  if ((max_w > 0 && width > (size_t)max_w) || (max_h > 0 && height > (size_t)max_h) ||
      (max_p > 0 && pitch > (size_t)max_p))
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: %zu x %zu elements with pitch %zu passes device %d's 2D linear texture "
                   "limits (%d x %d, pitch %d)",
                   fn, width, height, pitch, dev->ordinal, max_w, max_h, max_p);
  CUDA_RESOURCE_DESC res;
  memset(&res, 0, sizeof res);
  res.resType = CU_RESOURCE_TYPE_PITCH2D;
  res.res.pitch2D.devPtr = (CUdeviceptr)ptr;
  res.res.pitch2D.format = (CUarray_format)format;
  res.res.pitch2D.numChannels = channels;
  res.res.pitch2D.width = width;
  res.res.pitch2D.height = height;
  res.res.pitch2D.pitchInBytes = pitch;
  return texture_over_memory(dev, ptr, &res, &td, out, fn);
}

cucore_status cucore_texture_destroy(cucore_texture *tex) {
  cc_begin();
  if (!tex) return CUCORE_OK;
  CC_CHECK_HANDLE(tex, TEXTURE, "cucore_texture_destroy", "tex");
  cucore_status st = cc_device_make_current(tex->dev);
  CUresult r = st == CUCORE_OK ? DRV(cuTexObjectDestroy)(tex->handle) : CUDA_SUCCESS;
  if (tex->arr) atomic_fetch_sub(&tex->arr->users, 1);
  if (tex->held) atomic_fetch_sub(tex->held, 1);
  if (tex->rec_addr) (void)cc_reg_use(&cc_mem_registry, tex->rec_addr, 0, -1, NULL);
  cc_handle_retire(tex, CC_KIND_TEXTURE);
  if (st != CUCORE_OK) return st;
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuTexObjectDestroy", NULL);
  return CUCORE_OK;
}

cucore_status cucore_texture_get_handle(const cucore_texture *tex, uint64_t *handle) {
  cc_begin();
  CC_CHECK_HANDLE(tex, TEXTURE, "cucore_texture_get_handle", "tex");
  CC_CHECK_ARG(handle, "cucore_texture_get_handle", "handle");
  *handle = (uint64_t)tex->handle;
  return CUCORE_OK;
}

/* ---- surfaces ------------------------------------------------------------------------------ */

cucore_status cucore_surface_create(cucore_array *arr, cucore_surface **out) {
  cc_begin();
  const char *fn = "cucore_surface_create";
  CC_CHECK_ARG(out, fn, "out");
  *out = NULL;
  CC_CHECK_HANDLE(arr, ARRAY, fn, "arr");
  if (!(arr->desc.flags & CUCORE_ARRAY_SURFACE))
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: the array was created without CUCORE_ARRAY_SURFACE; surfaces need it", fn);
  cucore_status st = cc_device_make_current(arr->dev);
  if (st != CUCORE_OK) return st;
  cucore_surface *sf = cc_calloc(1, sizeof *sf, "a surface handle");
  if (!sf) return CUCORE_HOST_OUT_OF_MEMORY;
  cc_handle_init(sf, CC_KIND_SURFACE);
  CUDA_RESOURCE_DESC res;
  memset(&res, 0, sizeof res);
  res.resType = CU_RESOURCE_TYPE_ARRAY;
  res.res.array.hArray = arr->handle;
  CUresult r = DRV(cuSurfObjectCreate)(&sf->handle, &res);
  if (r != CUDA_SUCCESS) {
    free(sf);
    return cc_fail_cu(r, "cuSurfObjectCreate", "an array of device %d", arr->dev->ordinal);
  }
  sf->arr = arr;
  atomic_fetch_add(&arr->users, 1);
  *out = sf;
  return CUCORE_OK;
}

cucore_status cucore_surface_destroy(cucore_surface *surf) {
  cc_begin();
  if (!surf) return CUCORE_OK;
  CC_CHECK_HANDLE(surf, SURFACE, "cucore_surface_destroy", "surf");
  cucore_status st = cc_device_make_current(surf->arr->dev);
  CUresult r = st == CUCORE_OK ? DRV(cuSurfObjectDestroy)(surf->handle) : CUDA_SUCCESS;
  atomic_fetch_sub(&surf->arr->users, 1);
  cc_handle_retire(surf, CC_KIND_SURFACE);
  if (st != CUCORE_OK) return st;
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuSurfObjectDestroy", NULL);
  return CUCORE_OK;
}

cucore_status cucore_surface_get_handle(const cucore_surface *surf, uint64_t *handle) {
  cc_begin();
  CC_CHECK_HANDLE(surf, SURFACE, "cucore_surface_get_handle", "surf");
  CC_CHECK_ARG(handle, "cucore_surface_get_handle", "handle");
  *handle = (uint64_t)surf->handle;
  return CUCORE_OK;
}
