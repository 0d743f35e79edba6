/* gpu_mipmap.c -- mipmapped arrays on a real GPU (label gpu): 3 levels of a
 * 64 x 64 float array, each level filled with its own value through its level array; a
 * texture over the chain sampled with tex2DLod at each level (and between two levels with a
 * linear mipmap filter) in a kernel; a texture over one level sampled with tex2D; the level
 * arrays read back intact; destroy refused while textures exist. */
#include "gpu_support.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static cucore_device *dev;
static cucore_stream *s;
static cucore_object *obj;

static const char *source =
    "extern \"C\" __global__ void sample_lod(cudaTextureObject_t t, float *out, int n,\n"
    "                                        float step) {\n"
    "  int i = threadIdx.x;\n"
    "  if (i < n) out[i] = tex2DLod<float>(t, 0.3f, 0.6f, step * (float)i);\n"
    "}\n"
    "extern \"C\" __global__ void sample_2d(cudaTextureObject_t t, float *out) {\n"
    "  if (threadIdx.x == 0) out[0] = tex2D<float>(t, 0.5f, 0.5f);\n"
    "}\n";

enum { W = 64, H = 64, LEVELS = 3 };

static int setup(void **state) {
  (void)state;
  return gpu_group_open(source, &dev, &s, &obj);
}

static int teardown(void **state) {
  (void)state;
  return gpu_group_close(dev, s, obj);
}

static float level_value(unsigned level) { return 10.0f * (float)(level + 1); }

/* Runs sample_lod for `n` lods 0, step, 2*step, ... into `out`. */
static void sample_lods(cucore_texture *t, int n, float step, float *out) {
  cucore_kernel *k = gpu_kernel(obj, "sample_lod");
  cucore_devptr d = 0;
  assert_ok(cucore_mem_alloc(dev, sizeof(float) * 8, &d));
  uint64_t th = 0;
  assert_ok(cucore_texture_get_handle(t, &th));
  cucore_args *a = NULL;
  assert_ok(cucore_args_create(k, &a));
  assert_ok(cucore_args_push_texture(a, th));
  assert_ok(cucore_args_push_ptr(a, d));
  assert_ok(cucore_args_push_i32(a, n));
  assert_ok(cucore_args_push_f32(a, step));
  cucore_launch_config c;
  memset(&c, 0, sizeof c);
  c.grid[0] = 1;
  c.block[0] = 32;
  c.stream = s;
  assert_ok(cucore_launch(k, &c, a));
  assert_ok(cucore_memcpy_dtoh(dev, out, d, sizeof(float) * (size_t)n, s));
  assert_ok(cucore_stream_synchronize(s));
  assert_ok(cucore_args_destroy(a));
  assert_ok(cucore_mem_free(dev, d));
}

/* A 3-level chain, each level filled with level_value(level) through its level array. */
static cucore_mipmap *filled_mipmap(void) {
  cucore_array_desc d = {.width = W, .height = H, .format = CUCORE_FORMAT_FLOAT, .channels = 1};
  cucore_mipmap *m = NULL;
  assert_ok(cucore_mipmap_create(dev, &d, LEVELS, &m));
  float *buf = malloc(sizeof(float) * W * H);
  assert_non_null(buf);
  for (unsigned l = 0; l < LEVELS; l++) {
    cucore_array *lv = NULL;
    assert_ok(cucore_mipmap_get_level(m, l, &lv));
    cucore_array_desc ld;
    assert_ok(cucore_array_get_desc(lv, &ld));
    print_message("level %u: %zu x %zu\n", l, ld.width, ld.height);
    assert_int_equal(ld.width, W >> l);
    assert_int_equal(ld.height, H >> l);
    for (size_t i = 0; i < ld.width * ld.height; i++) buf[i] = level_value(l);
    assert_ok(cucore_array_copy_from_host(lv, buf, 0, s));
  }
  assert_ok(cucore_stream_synchronize(s));
  free(buf);
  return m;
}

static cucore_texture_desc normalized(void) {
  cucore_texture_desc td;
  memset(&td, 0, sizeof td);
  td.flags = CUCORE_TEXTURE_NORMALIZED_COORDS;
  return td;
}

/* Point filtering between levels: lod l gives level l's value. */
static cucore_texture *point_lods(cucore_mipmap *m) {
  cucore_texture_desc td = normalized();
  cucore_texture *t = NULL;
  assert_ok(cucore_texture_create_mipmap(m, &td, NULL, &t));
  float out[8];
  sample_lods(t, LEVELS, 1.0f, out);
  for (unsigned l = 0; l < LEVELS; l++) {
    print_message("tex2DLod at lod %u: %g (level value %g)\n", l, (double)out[l],
                  (double)level_value(l));
    if (out[l] != level_value(l))
      fail_msg("lod %u sampled %g, expected level %u's %g", l, (double)out[l], l,
               (double)level_value(l));
  }
  return t;
}

/* Linear filtering between levels: lod 0.5 blends levels 0 and 1. */
static cucore_texture *linear_lods(cucore_mipmap *m) {
  cucore_texture_desc td = normalized();
  cucore_mipmap_sampling mip = {CUCORE_FILTER_LINEAR, 0.0f, 0.0f, (float)(LEVELS - 1)};
  cucore_texture *t = NULL;
  assert_ok(cucore_texture_create_mipmap(m, &td, &mip, &t));
  float out[8];
  sample_lods(t, 2 * LEVELS - 1, 0.5f, out);
  for (int i = 0; i < 2 * LEVELS - 1; i++) {
    float want = 0.5f * (level_value((unsigned)i / 2) + level_value((unsigned)(i + 1) / 2));
    print_message("linear mipmap filter at lod %.1f: %g (expected %g)\n", 0.5 * i, (double)out[i],
                  (double)want);
    if (fabsf(out[i] - want) > 0.05f * want)
      fail_msg("lod %.1f sampled %g, expected about %g", 0.5 * i, (double)out[i], (double)want);
  }
  return t;
}

/* A clamp to levels 1..2: lod 0 gives level 1. */
static cucore_texture *clamped_lods(cucore_mipmap *m) {
  cucore_texture_desc td = normalized();
  cucore_mipmap_sampling mip = {CUCORE_FILTER_POINT, 0.0f, 1.0f, 2.0f};
  cucore_texture *t = NULL;
  assert_ok(cucore_texture_create_mipmap(m, &td, &mip, &t));
  float out[8];
  sample_lods(t, 1, 0.0f, out);
  print_message("clamped to levels 1..2, lod 0 gives %g\n", (double)out[0]);
  assert_true(out[0] == level_value(1));
  return t;
}

/* A texture over level 2 alone, sampled with tex2D. */
static cucore_texture *one_level(cucore_mipmap *m) {
  cucore_array *l2 = NULL;
  assert_ok(cucore_mipmap_get_level(m, 2, &l2));
  cucore_texture *t = NULL;
  assert_ok(cucore_texture_create_array(l2, NULL, &t));
  cucore_kernel *k = gpu_kernel(obj, "sample_2d");
  cucore_devptr dv = 0;
  assert_ok(cucore_mem_alloc(dev, sizeof(float), &dv));
  uint64_t th = 0;
  assert_ok(cucore_texture_get_handle(t, &th));
  cucore_args *a = NULL;
  assert_ok(cucore_args_create(k, &a));
  assert_ok(cucore_args_push_texture(a, th));
  assert_ok(cucore_args_push_ptr(a, dv));
  cucore_launch_config c;
  memset(&c, 0, sizeof c);
  c.grid[0] = c.block[0] = 1;
  c.stream = s;
  assert_ok(cucore_launch(k, &c, a));
  float v = 0;
  assert_ok(cucore_memcpy_dtoh(dev, &v, dv, sizeof v, s));
  assert_ok(cucore_stream_synchronize(s));
  print_message("texture over level 2: %g\n", (double)v);
  assert_true(v == level_value(2));
  assert_ok(cucore_args_destroy(a));
  assert_ok(cucore_mem_free(dev, dv));
  return t;
}

static void levels_sampled_with_lod(void **state) {
  (void)state;
  cucore_mipmap *m = filled_mipmap();
  cucore_texture *t[4] = {point_lods(m), linear_lods(m), clamped_lods(m), one_level(m)};
  /* Level 1 read back intact. */
  cucore_array *l1 = NULL;
  assert_ok(cucore_mipmap_get_level(m, 1, &l1));
  float *buf = calloc((W / 2) * (H / 2), sizeof(float));
  assert_non_null(buf);
  assert_ok(cucore_array_copy_to_host(l1, buf, 0, NULL));
  for (int i = 0; i < (W / 2) * (H / 2); i++)
    if (buf[i] != level_value(1)) fail_msg("level 1 element %d is %g", i, (double)buf[i]);
  free(buf);
  assert_status(cucore_mipmap_destroy(m), CUCORE_IN_USE);
  print_message("destroy refused: %s\n", cucore_last_error());
  for (int i = 0; i < 4; i++) assert_ok(cucore_texture_destroy(t[i]));
  assert_ok(cucore_mipmap_destroy(m));
}

int main(void) {
  if (!cucore_test_have_gpu()) return CUCORE_TEST_SKIP;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(levels_sampled_with_lod),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
