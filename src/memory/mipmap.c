/*
 * mipmap.c -- mipmapped arrays (cuMipmappedArrayCreate): a chain of levels,
 * each half the extent of the one before; every level is a cucore array owned by the
 * mipmapped array (cuMipmappedArrayGetLevel), so copies into a level, textures and surfaces
 * over one are the array calls, bounds-checked by the level's own extents; texture objects
 * over the whole chain (CU_RESOURCE_TYPE_MIPMAPPED_ARRAY) with a mipmap filter and level
 * clamps. The mipmapped array cannot be destroyed while a texture or surface uses it or one
 * of its levels.
 */
#include "memory/memory.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cucore_mipmap {
  cc_handle hdr; /* first: the magic word of base/handle.h */
  CUmipmappedArray handle;
  cucore_device *dev;
  cucore_array_desc desc; /* level 0 */
  unsigned levels;
  cucore_array **views; /* `levels` level arrays, owned */
  atomic_uint users;    /* textures over the whole chain */
};

/* 3D without layers or cube faces: depth shrinks with the levels (else it counts layers). */
static int is_3d(const cucore_array_desc *d) {
  return d->depth && !(d->flags & (CUCORE_ARRAY_LAYERED | CUCORE_ARRAY_CUBEMAP));
}

/* 1 + floor(log2) of the largest extent that shrinks. */
static unsigned max_levels(const cucore_array_desc *d) {
  size_t m = d->width;
  if (d->height > m) m = d->height;
  if (is_3d(d) && d->depth > m) m = d->depth;
  unsigned n = 0;
  for (; m; m >>= 1) n++;
  return n;
}

static size_t halve(size_t v, unsigned level) {
  if (!v) return 0;
  v = level >= 8 * sizeof v ? 0 : v >> level;
  return v ? v : 1;
}

/* The extents of `level`. */
static cucore_array_desc level_desc(const cucore_array_desc *d0, unsigned level) {
  cucore_array_desc d = *d0;
  d.width = halve(d0->width, level);
  d.height = halve(d0->height, level);
  if (is_3d(d0)) d.depth = halve(d0->depth, level);
  return d;
}

static cucore_status mipmap_checks(const cucore_array_desc *desc, unsigned levels, const char *fn) {
  cucore_status st = cc_array_check_desc(desc, fn);
  if (st != CUCORE_OK) return st;
  unsigned most = max_levels(desc);
  if (levels == 0 || levels > most)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: %u levels for a %zu x %zu x %zu array, which has 1 to %u (1 + floor(log2) "
                   "of its largest extent%s)",
                   fn, levels, desc->width, desc->height, desc->depth, most,
                   is_3d(desc) ? "" : "; depth counts layers or faces and does not shrink");
  if ((desc->flags & CUCORE_ARRAY_TEXTURE_GATHER) && (!desc->height || desc->depth))
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: CUCORE_ARRAY_TEXTURE_GATHER needs a 2D "
                   "mipmapped array (height > 0, depth 0)",
                   fn);
  return CUCORE_OK;
}

static void free_views(cucore_mipmap *m) {
  for (unsigned i = 0; m->views && i < m->levels; i++)
    if (m->views[i]) cc_handle_retire(m->views[i], CC_KIND_ARRAY); /* a level kept is misuse */
  free(m->views);
}

/* The level arrays, as cucore arrays owned by `m`. */
static cucore_status make_views(cucore_mipmap *m, const char *fn) {
  m->views = cc_calloc(m->levels, sizeof *m->views, "a mipmapped array's levels");
  if (!m->views) return CUCORE_HOST_OUT_OF_MEMORY;
  for (unsigned i = 0; i < m->levels; i++) {
    CUarray h = NULL;
    CUresult r = DRV(cuMipmappedArrayGetLevel)(&h, m->handle, i);
    if (r != CUDA_SUCCESS)
      return cc_fail_cu(r, "cuMipmappedArrayGetLevel", "%s: level %u of %u", fn, i, m->levels);
    cucore_array_desc d = level_desc(&m->desc, i);
    m->views[i] = cc_array_wrap(m->dev, h, &d);
    if (!m->views[i]) return CUCORE_HOST_OUT_OF_MEMORY;
    m->views[i]->parent = m;
    m->views[i]->level = i;
  }
  return CUCORE_OK;
}

cucore_status cucore_mipmap_create(cucore_device *dev, const cucore_array_desc *desc,
                                   unsigned levels, cucore_mipmap **out) {
  cc_begin();
  const char *fn = "cucore_mipmap_create";
  CC_CHECK_ARG(out, fn, "out");
  *out = NULL;
  CC_CHECK_HANDLE(dev, DEVICE, fn, "dev");
  CC_CHECK_ARG(desc, fn, "desc");
  cucore_status st = mipmap_checks(desc, levels, fn);
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuMipmappedArrayCreate);
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuMipmappedArrayGetLevel);
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuMipmappedArrayDestroy);
  if (st == CUCORE_OK) st = cc_mem_enter(dev, NULL, fn);
  if (st != CUCORE_OK) return st;
  cucore_mipmap *m = cc_calloc(1, sizeof *m, "a mipmapped array handle");
  if (!m) return CUCORE_HOST_OUT_OF_MEMORY;
  cc_handle_init(m, CC_KIND_MIPMAP);
  CUDA_ARRAY3D_DESCRIPTOR d;
  cc_array_to_cu_desc(desc, &d);
  CUresult r = DRV(cuMipmappedArrayCreate)(&m->handle, &d, levels);
  if (r != CUDA_SUCCESS) {
    free(m);
    return cc_fail_cu(r, "cuMipmappedArrayCreate",
                      "%s: %u levels of %zu x %zu x %zu elements "
                      "of %u channel%s, format 0x%x, flags 0x%x, on device %d (the device's "
                      "mipmapped texture limits apply)",
                      fn, levels, desc->width, desc->height, desc->depth, desc->channels,
                      desc->channels == 1 ? "" : "s", (unsigned)desc->format, desc->flags,
                      dev->ordinal);
  }
  m->dev = dev;
  m->desc = *desc;
  m->levels = levels;
  atomic_init(&m->users, 0);
  st = make_views(m, fn);
  if (st != CUCORE_OK) {
    free_views(m);
    (void)DRV(cuMipmappedArrayDestroy)(m->handle);
    free(m);
    return st;
  }
  *out = m;
  return CUCORE_OK;
}

cucore_status cucore_mipmap_destroy(cucore_mipmap *m) {
  cc_begin();
  if (!m) return CUCORE_OK;
  CC_CHECK_HANDLE(m, MIPMAP, "cucore_mipmap_destroy", "mipmap");
  unsigned users = atomic_load(&m->users);
  if (users)
    return cc_fail(CUCORE_IN_USE,
                   "cucore_mipmap_destroy: %u texture object%s still use%s the "
                   "mipmapped array; destroy them first",
                   users, users == 1 ? "" : "s", users == 1 ? "s" : "");
  for (unsigned i = 0; i < m->levels; i++) {
    users = atomic_load(&m->views[i]->users);
    if (users)
      return cc_fail(CUCORE_IN_USE,
                     "cucore_mipmap_destroy: %u texture or surface object%s "
                     "still use%s level %u; destroy them first",
                     users, users == 1 ? "" : "s", users == 1 ? "s" : "", i);
  }
  cucore_status st = cc_device_make_current(m->dev);
  CUresult r = st == CUCORE_OK ? DRV(cuMipmappedArrayDestroy)(m->handle) : CUDA_SUCCESS;
  free_views(m);
  cc_handle_retire(m, CC_KIND_MIPMAP);
  if (st != CUCORE_OK) return st;
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuMipmappedArrayDestroy", NULL);
  return CUCORE_OK;
}

cucore_status cucore_mipmap_get_level_count(const cucore_mipmap *m, unsigned *levels) {
  cc_begin();
  CC_CHECK_HANDLE(m, MIPMAP, "cucore_mipmap_get_level_count", "mipmap");
  CC_CHECK_ARG(levels, "cucore_mipmap_get_level_count", "levels");
  *levels = m->levels;
  return CUCORE_OK;
}

cucore_status cucore_mipmap_get_level(cucore_mipmap *m, unsigned level, cucore_array **out) {
  cc_begin();
  const char *fn = "cucore_mipmap_get_level";
  CC_CHECK_ARG(out, fn, "out");
  *out = NULL;
  CC_CHECK_HANDLE(m, MIPMAP, fn, "mipmap");
  if (level >= m->levels)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: level %u of a mipmapped array of %u level%s "
                   "(0 .. %u)",
                   fn, level, m->levels, m->levels == 1 ? "" : "s", m->levels - 1);
  *out = m->views[level];
  return CUCORE_OK;
}

cucore_status cucore_mipmap_get_native(const cucore_mipmap *m, void **cumipmap) {
  cc_begin();
  CC_CHECK_HANDLE(m, MIPMAP, "cucore_mipmap_get_native", "mipmap");
  CC_CHECK_ARG(cumipmap, "cucore_mipmap_get_native", "cumipmap");
  *cumipmap = m->handle;
  return CUCORE_OK;
}

/* ---- textures over the chain ----------------------------------------------------------------- */

static cucore_status mip_sampling(const cucore_mipmap *m, const cucore_texture_desc *desc,
                                  const cucore_mipmap_sampling *mip, CUDA_TEXTURE_DESC *td,
                                  const char *fn) {
  if (!desc || !(desc->flags & CUCORE_TEXTURE_NORMALIZED_COORDS))
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: a texture over a mipmapped array needs "
                   "normalized coordinates (CUCORE_TEXTURE_NORMALIZED_COORDS in desc->flags; the "
                   "driver's rule: the levels have different extents)",
                   fn);
  cucore_mipmap_sampling def = {CUCORE_FILTER_POINT, 0.0f, 0.0f, (float)(m->levels - 1)};
  const cucore_mipmap_sampling *s = mip ? mip : &def;
  if ((int)s->filter != CUCORE_FILTER_POINT && (int)s->filter != CUCORE_FILTER_LINEAR)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: mipmap filter %d is not POINT (0) or LINEAR (1)",
                   fn, (int)s->filter);
  float top = (float)(m->levels - 1);
  if (!isfinite(s->level_bias) || !(s->min_level >= 0.0f) || !(s->max_level <= top) ||
      !(s->min_level <= s->max_level))
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: level bias %g, clamps [%g, %g]: expected a "
                   "finite bias and 0 <= min_level <= max_level <= %g (the last of %u levels)",
                   fn, (double)s->level_bias, (double)s->min_level, (double)s->max_level,
                   (double)top, m->levels);
  td->mipmapFilterMode = (CUfilter_mode)s->filter;
  td->mipmapLevelBias = s->level_bias;
  td->minMipmapLevelClamp = s->min_level;
  td->maxMipmapLevelClamp = s->max_level;
  return CUCORE_OK;
}

cucore_status cucore_texture_create_mipmap(cucore_mipmap *m, const cucore_texture_desc *desc,
                                           const cucore_mipmap_sampling *mip,
                                           cucore_texture **out) {
  cc_begin();
  const char *fn = "cucore_texture_create_mipmap";
  CC_CHECK_ARG(out, fn, "out");
  *out = NULL;
  CC_CHECK_HANDLE(m, MIPMAP, fn, "mipmap");
  int dims = is_3d(&m->desc) ? 3 : m->desc.height ? 2 : 1;
  CUDA_TEXTURE_DESC td;
  cucore_status st = cc_tex_desc(desc, m->desc.format, dims, &td, fn);
  if (st == CUCORE_OK) st = mip_sampling(m, desc, mip, &td, fn);
  if (st == CUCORE_OK && mip && mip->filter == CUCORE_FILTER_LINEAR &&
      m->desc.format != CUCORE_FORMAT_HALF && m->desc.format != CUCORE_FORMAT_FLOAT &&
      (desc->flags & CUCORE_TEXTURE_READ_AS_INTEGER))
    st = cc_fail(CUCORE_INVALID_ARGUMENT,
                 "%s: a linear mipmap filter returns floating-point "
                 "values; it cannot read an integer format as integers (drop "
                 "CUCORE_TEXTURE_READ_AS_INTEGER)",
                 fn);
  if (st == CUCORE_OK) st = cc_device_make_current(m->dev);
  if (st != CUCORE_OK) return st;
  CUDA_RESOURCE_DESC res;
  memset(&res, 0, sizeof res);
  res.resType = CU_RESOURCE_TYPE_MIPMAPPED_ARRAY;
  res.res.mipmap.hMipmappedArray = m->handle;
  return cc_texture_make(m->dev, &res, &td, &m->users, out, fn);
}
