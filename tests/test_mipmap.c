/* test_mipmap.c -- mipmapped arrays through the fake driver: absent entry
 * points (DRIVER_TOO_OLD naming cuMipmappedArrayCreate); the level count against the extents
 * (layers and cube faces do not shrink), formats, flags; with stand-ins set into the loaded
 * driver table: the levels' extents, level views owned by the mipmapped array, copies into a
 * level checked against that level's extents and handed to the driver with them, textures over
 * the chain (normalized coordinates, filter, clamps) and over a level keeping it alive. */
#include "support.h"

#include "loader/loader.h"

#include <stdlib.h>

#ifndef CUCORE_FAKE_DRIVER_PATH
#error "CUCORE_FAKE_DRIVER_PATH is set by tests/CMakeLists.txt"
#endif

/* ---- stand-ins ----------------------------------------------------------------------------- */

static int created, destroyed, textures;
static unsigned asked_levels;
static CUDA_ARRAY3D_DESCRIPTOR asked_desc;
static CUDA_MEMCPY3D last_copy;
static CUDA_RESOURCE_DESC last_res;
static CUDA_TEXTURE_DESC last_tex;
static char mipmap_obj;

static CUresult stand_in_create(CUmipmappedArray *h, const CUDA_ARRAY3D_DESCRIPTOR *d,
                                unsigned levels) {
  created++;
  asked_levels = levels;
  asked_desc = *d;
  *h = (CUmipmappedArray)&mipmap_obj;
  return CUDA_SUCCESS;
}

static CUresult stand_in_level(CUarray *a, CUmipmappedArray h, unsigned level) {
  if (h != (CUmipmappedArray)&mipmap_obj || level >= asked_levels) return CUDA_ERROR_INVALID_VALUE;
  *a = (CUarray)(uintptr_t)(0x5000 + level);
  return CUDA_SUCCESS;
}

static CUresult stand_in_destroy(CUmipmappedArray h) {
  (void)h;
  destroyed++;
  return CUDA_SUCCESS;
}

static CUresult stand_in_copy(const CUDA_MEMCPY3D *c) {
  last_copy = *c;
  return CUDA_SUCCESS;
}

static CUresult stand_in_tex(CUtexObject *t, const CUDA_RESOURCE_DESC *r,
                             const CUDA_TEXTURE_DESC *td, const CUDA_RESOURCE_VIEW_DESC *v) {
  (void)v;
  last_res = *r;
  last_tex = *td;
  *t = (CUtexObject)(++textures);
  return CUDA_SUCCESS;
}

static CUresult stand_in_tex_destroy(CUtexObject t) {
  (void)t;
  return CUDA_SUCCESS;
}

static void use_stand_ins(int on) {
  cc_drv.fn_cuMipmappedArrayCreate = on ? stand_in_create : NULL;
  cc_drv.fn_cuMipmappedArrayGetLevel = on ? stand_in_level : NULL;
  cc_drv.fn_cuMipmappedArrayDestroy = on ? stand_in_destroy : NULL;
  cc_drv.fn_cuMemcpy3D = stand_in_copy;
  cc_drv.fn_cuTexObjectCreate = stand_in_tex;
  cc_drv.fn_cuTexObjectDestroy = stand_in_tex_destroy;
}

static cucore_device *dev;

static int open_fake(void **state) {
  (void)state;
  setenv("CUCORE_LIBCUDA", CUCORE_FAKE_DRIVER_PATH, 1);
  return cucore_device_open(0, &dev) == CUCORE_OK ? 0 : -1;
}

static int close_fake(void **state) {
  (void)state;
  return cucore_device_close(dev) == CUCORE_OK ? 0 : -1;
}

static cucore_array_desc desc2d(size_t w, size_t h) {
  cucore_array_desc d = {w, h, 0, CUCORE_FORMAT_FLOAT, 1, 0};
  return d;
}

static void absent_entry_points(void **state) {
  (void)state;
  use_stand_ins(0);
  cucore_array_desc d = desc2d(64, 16);
  cucore_mipmap *m = (cucore_mipmap *)1;
  assert_status(cucore_mipmap_create(dev, &d, 3, &m), CUCORE_DRIVER_TOO_OLD);
  assert_contains(cucore_last_error(), "cuMipmappedArrayCreate");
  assert_null(m);
  assert_ok(cucore_mipmap_destroy(NULL));
}

static void level_count_and_description(void **state) {
  (void)state;
  use_stand_ins(1);
  cucore_mipmap *m = NULL;
  cucore_array_desc d = desc2d(64, 16);
  assert_status(cucore_mipmap_create(dev, &d, 0, &m), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_mipmap_create(dev, &d, 8, &m), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "which has 1 to 7");
  /* 3D: the depth counts. */
  cucore_array_desc d3 = {8, 8, 32, CUCORE_FORMAT_U8, 4, 0};
  assert_status(cucore_mipmap_create(dev, &d3, 7, &m), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "1 to 6");
  /* Layered: the depth counts layers and does not shrink. */
  d3.flags = CUCORE_ARRAY_LAYERED;
  assert_status(cucore_mipmap_create(dev, &d3, 5, &m), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "1 to 4");
  cucore_array_desc bad = d;
  bad.channels = 3;
  assert_status(cucore_mipmap_create(dev, &bad, 2, &m), CUCORE_INVALID_ARGUMENT);
  bad = d;
  bad.width = 0;
  assert_status(cucore_mipmap_create(dev, &bad, 1, &m), CUCORE_INVALID_ARGUMENT);
  bad = (cucore_array_desc){64, 0, 0, CUCORE_FORMAT_FLOAT, 1, CUCORE_ARRAY_TEXTURE_GATHER};
  assert_status(cucore_mipmap_create(dev, &bad, 2, &m), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "2D");
  bad = d;
  bad.flags = 0x100;
  assert_status(cucore_mipmap_create(dev, &bad, 2, &m), CUCORE_INVALID_ARGUMENT);
  assert_int_equal(created, 0);
  assert_status(cucore_mipmap_create(NULL, &d, 2, &m), CUCORE_INVALID_ARGUMENT);
}

static void levels_views_and_copies(void **state) {
  (void)state;
  use_stand_ins(1);
  cucore_mipmap *m = NULL;
  cucore_array_desc d = desc2d(64, 16);
  assert_ok(cucore_mipmap_create(dev, &d, 3, &m));
  assert_int_equal(asked_levels, 3);
  assert_int_equal(asked_desc.Width, 64);
  assert_int_equal(asked_desc.Height, 16);
  unsigned n = 0;
  assert_ok(cucore_mipmap_get_level_count(m, &n));
  assert_int_equal(n, 3);
  const size_t want_w[3] = {64, 32, 16}, want_h[3] = {16, 8, 4};
  cucore_array *lv[3];
  for (unsigned i = 0; i < 3; i++) {
    assert_ok(cucore_mipmap_get_level(m, i, &lv[i]));
    cucore_array_desc ld;
    assert_ok(cucore_array_get_desc(lv[i], &ld));
    assert_int_equal(ld.width, want_w[i]);
    assert_int_equal(ld.height, want_h[i]);
    assert_int_equal(ld.depth, 0);
  }
  cucore_array *x = NULL;
  assert_status(cucore_mipmap_get_level(m, 3, &x), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "0 .. 2");
  assert_status(cucore_array_destroy(lv[1]), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "level 1");

  /* A copy into level 2 goes to that level's array with its extents... */
  float *host = NULL;
  assert_ok(cucore_host_alloc(dev, 16 * 4 * sizeof(float), (void **)&host));
  assert_ok(cucore_array_copy_from_host(lv[2], host, 0, NULL));
  void *native = NULL;
  assert_ok(cucore_array_get_native(lv[2], &native));
  assert_ptr_equal(last_copy.dstArray, native);
  assert_int_equal(last_copy.WidthInBytes, 16 * sizeof(float));
  assert_int_equal(last_copy.Height, 4);
  /* ... and the same source is too small for level 0: refused before the driver sees it. */
  memset(&last_copy, 0, sizeof last_copy);
  assert_status(cucore_array_copy_from_host(lv[0], host, 0, NULL), CUCORE_OUT_OF_BOUNDS);
  assert_null(last_copy.dstArray);
  assert_ok(cucore_host_free(dev, host));
  assert_ok(cucore_mipmap_destroy(m));
  assert_int_equal(destroyed, 1);
}

static void textures_over_the_chain(void **state) {
  (void)state;
  use_stand_ins(1);
  cucore_mipmap *m = NULL;
  cucore_array_desc d = desc2d(32, 32);
  assert_ok(cucore_mipmap_create(dev, &d, 3, &m));
  cucore_texture_desc td;
  memset(&td, 0, sizeof td);
  cucore_texture *t = NULL;
  assert_status(cucore_texture_create_mipmap(m, &td, NULL, &t), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "normalized coordinates");
  td.flags = CUCORE_TEXTURE_NORMALIZED_COORDS;
  cucore_mipmap_sampling mip = {CUCORE_FILTER_LINEAR, 0.5f, 0.0f, 3.0f};
  assert_status(cucore_texture_create_mipmap(m, &td, &mip, &t), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "max_level <= 2");
  mip.max_level = 2.0f;
  mip.min_level = 2.5f;
  assert_status(cucore_texture_create_mipmap(m, &td, &mip, &t), CUCORE_INVALID_ARGUMENT);
  mip.min_level = 0.0f;
  mip.filter = (cucore_filter_mode)7;
  assert_status(cucore_texture_create_mipmap(m, &td, &mip, &t), CUCORE_INVALID_ARGUMENT);
  mip.filter = CUCORE_FILTER_LINEAR;
  assert_ok(cucore_texture_create_mipmap(m, &td, &mip, &t));
  assert_int_equal(last_res.resType, CU_RESOURCE_TYPE_MIPMAPPED_ARRAY);
  void *native = NULL;
  assert_ok(cucore_mipmap_get_native(m, &native));
  assert_ptr_equal(last_res.res.mipmap.hMipmappedArray, native);
  assert_int_equal(last_tex.mipmapFilterMode, CU_TR_FILTER_MODE_LINEAR);
  assert_true(last_tex.maxMipmapLevelClamp == 2.0f && last_tex.mipmapLevelBias == 0.5f);
  /* Defaults: point filtering over every level. */
  cucore_texture *t2 = NULL;
  assert_ok(cucore_texture_create_mipmap(m, &td, NULL, &t2));
  assert_true(last_tex.maxMipmapLevelClamp == 2.0f && last_tex.minMipmapLevelClamp == 0.0f);
  assert_int_equal(last_tex.mipmapFilterMode, CU_TR_FILTER_MODE_POINT);
  assert_status(cucore_mipmap_destroy(m), CUCORE_IN_USE);
  assert_contains(cucore_last_error(), "2 texture objects");
  assert_ok(cucore_texture_destroy(t));
  assert_ok(cucore_texture_destroy(t2));
  /* A texture over one level keeps the chain too. */
  cucore_array *l1 = NULL;
  assert_ok(cucore_mipmap_get_level(m, 1, &l1));
  assert_ok(cucore_texture_create_array(l1, NULL, &t));
  assert_status(cucore_mipmap_destroy(m), CUCORE_IN_USE);
  assert_contains(cucore_last_error(), "level 1");
  assert_ok(cucore_texture_destroy(t));
  int before = destroyed;
  assert_ok(cucore_mipmap_destroy(m));
  assert_int_equal(destroyed, before + 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(absent_entry_points),
      cmocka_unit_test(level_count_and_description),
      cmocka_unit_test(levels_views_and_copies),
      cmocka_unit_test(textures_over_the_chain),
  };
  return cmocka_run_group_tests(tests, open_fake, close_fake);
}
