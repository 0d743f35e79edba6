/* gpu_memory_descriptors.c -- descriptors over memory on a real GPU (label gpu), each result
 * compared with a CPU reference: a TMA copy kernel (cp.async.bulk.tensor through a tiled tensor
 * map passed by value, out-of-bounds elements filled with zeros), texture sampling (point and
 * bilinear from an array, tex1Dfetch from linear memory, pitched 2D memory), a surface written
 * by a kernel, and the lifetimes that tie textures and surfaces to their memory. */
#include "gpu_support.h"
#include "runtime/runtime.h" /* DRV(): the driver's own verdict on tensor maps */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static cucore_device *dev;
static cucore_stream *s;
static cucore_device_props props;

static int setup(void **state) {
  (void)state;
  if (cucore_device_open(0, &dev) != CUCORE_OK) return -1;
  if (cucore_device_get_props(0, &props) != CUCORE_OK) return -1;
  return cucore_stream_create(dev, CUCORE_STREAM_NON_BLOCKING, 0, &s) == CUCORE_OK ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  cucore_stream_destroy(s);
  return cucore_device_close(dev) == CUCORE_OK ? 0 : -1;
}

static cucore_launch_config cfg(unsigned gx, unsigned gy, unsigned bx, unsigned by) {
  cucore_launch_config c;
  memset(&c, 0, sizeof c);
  c.grid[0] = gx;
  c.grid[1] = gy;
  c.block[0] = bx;
  c.block[1] = by;
  c.stream = s;
  return c;
}

/* ---- TMA ----------------------------------------------------------------------------------- */

#define BOX_W 32
#define BOX_H 8

static const char *tma_src =
    "struct alignas(64) TMap { unsigned long long v[16]; };\n"
    "#define BOX_W 32\n"
    "#define BOX_H 8\n"
    "extern \"C\" __global__ void tma_copy(const __grid_constant__ TMap map, float *out, int "
    "out_w) {\n"
    "  __shared__ alignas(128) float tile[BOX_H * BOX_W];\n"
    "  __shared__ alignas(8) unsigned long long bar;\n"
    "  const int tx = blockIdx.x * BOX_W, ty = blockIdx.y * BOX_H;\n"
    "  const unsigned bar_addr = (unsigned)__cvta_generic_to_shared(&bar);\n"
    "  const unsigned tile_addr = (unsigned)__cvta_generic_to_shared(tile);\n"
    "  if (threadIdx.x == 0) {\n"
    "    asm volatile(\"mbarrier.init.shared::cta.b64 [%0], 1;\" ::\"r\"(bar_addr) : \"memory\");\n"
    "    asm volatile(\"fence.mbarrier_init.release.cluster;\" ::: \"memory\");\n"
    "  }\n"
    "  __syncthreads();\n"
    "  if (threadIdx.x == 0) {\n"
    "    asm volatile(\"mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\" "
    "::\"r\"(bar_addr),\n"
    "                 \"r\"((unsigned)sizeof(tile)) : \"memory\");\n"
    "    asm "
    "volatile(\"cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes\"\n"
    "                 \" [%0], [%1, {%2, %3}], [%4];\" ::\"r\"(tile_addr),\n"
    "                 \"l\"((unsigned long long)&map), \"r\"(tx), \"r\"(ty), \"r\"(bar_addr) : "
    "\"memory\");\n"
    "  }\n"
    "  asm volatile(\"{\\n.reg .pred p;\\nWAIT_%=:\\n\"\n"
    "               \"mbarrier.try_wait.parity.shared::cta.b64 p, [%0], 0;\\n\"\n"
    "               \"@!p bra WAIT_%=;\\n}\\n\" ::\"r\"(bar_addr) : \"memory\");\n"
    "  for (int i = threadIdx.x; i < BOX_W * BOX_H; i += blockDim.x)\n"
    "    out[(size_t)(ty + i / BOX_W) * out_w + tx + i % BOX_W] = tile[i];\n"
    "}\n";

/* The map of tma_copy_through_a_tensor_map pointed at another tensor of its shape
 * (cuTensorMapReplaceAddress) and the copy made again through it; the new tensor's address is
 * given back (the caller frees it). */
static cucore_devptr replace_address_then_copy(cucore_tensor_map *map,
                                               const cucore_tensor_map_desc *d, cucore_kernel *k,
                                               cucore_args *a, const cucore_launch_config *c,
                                               cucore_devptr dout, float *in, float *out, int W,
                                               int H, int OW, int OH) {
  /* The same map pointed at another tensor of the shape (cuTensorMapReplaceAddress): the copy
   * reads it; an address past what the allocation holds, or misaligned, is refused first. */
  cucore_devptr din2 = 0;
  int bad_count = 0;
  assert_ok(cucore_mem_alloc(dev, sizeof(float) * W * H, &din2));
  for (int i = 0; i < W * H; i++) in[i] = (float)(i % 89) - 7.0f;
  assert_ok(cucore_memcpy_htod(dev, din2, in, sizeof(float) * W * H, NULL));
  assert_int_equal(cucore_tensor_map_replace_address(map, CUCORE_TMAP_TILED, d, din2 + 16),
                   CUCORE_OUT_OF_BOUNDS);
  assert_int_equal(cucore_tensor_map_replace_address(map, CUCORE_TMAP_TILED, d, din2 + 4),
                   CUCORE_ARG_ALIGNMENT);
  assert_ok(cucore_tensor_map_replace_address(map, CUCORE_TMAP_TILED, d, din2));
  assert_ok(cucore_args_reset(a));
  assert_ok(cucore_args_push_tensor_map(a, map));
  assert_ok(cucore_args_push_ptr(a, dout));
  assert_ok(cucore_args_push_i32(a, OW));
  assert_ok(cucore_launch(k, c, a));
  assert_ok(cucore_stream_synchronize(s));
  assert_ok(cucore_memcpy_dtoh(dev, out, dout, sizeof(float) * OW * OH, NULL));
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++)
      if (out[y * OW + x] != in[y * W + x] && bad_count++ < 5)
        print_message("after the new address: out[%d][%d] = %g, expected %g\n", y, x,
                      out[y * OW + x], in[y * W + x]);
  print_message("the map given another tensor's address: %d mismatches\n", bad_count);
  assert_int_equal(bad_count, 0);
  return din2;
}

/* Wide im2col maps over `addr`: encoded on compute capability 10.0+, refused by name below. */
static void wide_im2col_on_this_device(cucore_devptr addr) {
  /* Wide im2col maps: encoded on compute capability 10.0+, refused by name below it. */
  cucore_tensor_map_desc w;
  memset(&w, 0, sizeof w);
  w.dtype = CUCORE_TMAP_FLOAT16;
  w.rank = 3; /* C, W, N */
  w.address = addr;
  w.dims[0] = 64;
  w.dims[1] = 8;
  w.dims[2] = 1;
  w.strides[0] = 128;
  w.strides[1] = 128 * 8;
  w.channels_per_pixel = 64;
  w.pixels_per_column = 8;
  w.swizzle = CUCORE_TMAP_SWIZZLE_128B;
  cucore_tensor_map wm;
  cucore_status wst = cucore_tensor_map_encode_im2col_wide(&w, &wm);
  if (props.arch >= 100)
    assert_ok(wst);
  else
    assert_true(wst == CUCORE_NOT_SUPPORTED || wst == CUCORE_DRIVER_TOO_OLD);
  print_message("wide im2col map on sm_%d: %s\n", props.arch, cucore_status_name(wst));
}

static void tma_copy_through_a_tensor_map(void **state) {
  (void)state;
  if (props.arch < 90) {
    print_message("skipped: TMA needs sm_90 or newer; device 0 is sm_%d\n", props.arch);
    skip();
  }
  const int W = 100, H = 37; /* not multiples of the box: the edges read out of bounds */
  const int GX = (W + BOX_W - 1) / BOX_W, GY = (H + BOX_H - 1) / BOX_H;
  const int OW = GX * BOX_W, OH = GY * BOX_H;
  float *in = malloc(sizeof(float) * W * H), *out = malloc(sizeof(float) * OW * OH);
  for (int i = 0; i < W * H; i++) in[i] = (float)(i % 1013) * 0.25f + 1.0f;
  cucore_devptr din = 0, dout = 0;
  assert_ok(cucore_mem_alloc(dev, sizeof(float) * W * H, &din));
  assert_ok(cucore_mem_alloc(dev, sizeof(float) * OW * OH, &dout));
  assert_ok(cucore_memcpy_htod(dev, din, in, sizeof(float) * W * H, NULL));
  assert_ok(cucore_memset_d32(dev, dout, 0x7fc00000u, (size_t)OW * OH, NULL)); /* NaN */
  cucore_tensor_map_desc d;
  memset(&d, 0, sizeof d);
  d.dtype = CUCORE_TMAP_FLOAT32;
  d.rank = 2;
  d.address = din;
  d.dims[0] = (uint64_t)W;
  d.dims[1] = (uint64_t)H;
  d.strides[0] = sizeof(float) * W; /* 400: a multiple of 16 */
  d.box[0] = BOX_W;
  d.box[1] = BOX_H;
  cucore_tensor_map map;
  assert_ok(cucore_tensor_map_encode_tiled(&d, &map));
  /* A row more than the allocation holds is refused before the driver. */
  cucore_tensor_map_desc bad = d;
  bad.dims[1] = (uint64_t)H + 1;
  cucore_tensor_map unused;
  assert_status(cucore_tensor_map_encode_tiled(&bad, &unused), CUCORE_OUT_OF_BOUNDS);
  const char *flags[] = {"--arch", props.arch == 90 ? "sm_90a" : NULL, NULL};
  cucore_object *obj = gpu_compile(tma_src, CUCORE_CODE_CUBIN, NULL,
                                   props.arch == 90 ? flags : NULL);
  cucore_kernel *k = gpu_kernel(obj, "tma_copy");
  cucore_object_destroy(obj);
  cucore_args *a = NULL;
  assert_ok(cucore_args_create(k, &a));
  assert_ok(cucore_args_push_tensor_map(a, &map));
  assert_ok(cucore_args_push_ptr(a, dout));
  assert_ok(cucore_args_push_i32(a, OW));
  cucore_launch_config c = cfg((unsigned)GX, (unsigned)GY, 128, 1);
  assert_ok(cucore_launch(k, &c, a));
  assert_ok(cucore_stream_synchronize(s));
  assert_ok(cucore_memcpy_dtoh(dev, out, dout, sizeof(float) * OW * OH, NULL));
  int bad_count = 0;
  for (int y = 0; y < OH; y++)
    for (int x = 0; x < OW; x++) {
      float want = (x < W && y < H) ? in[y * W + x] : 0.0f; /* OOB fill: zeros */
      if (out[y * OW + x] != want && bad_count++ < 5)
        print_message("out[%d][%d] = %g, expected %g\n", y, x, out[y * OW + x], want);
    }
  print_message("TMA copy of a %d x %d float tensor in %d x %d boxes (padded %d x %d): %d "
                "mismatches\n",
                W, H, BOX_W, BOX_H, OW, OH, bad_count);
  assert_int_equal(bad_count, 0);
  cucore_devptr din2 = replace_address_then_copy(&map, &d, k, a, &c, dout, in, out, W, H, OW, OH);
  wide_im2col_on_this_device(din2);
  assert_ok(cucore_mem_free(dev, din2));
  cucore_args_destroy(a);
  cucore_kernel_destroy(k);
  assert_ok(cucore_mem_free(dev, din));
  assert_ok(cucore_mem_free(dev, dout));
  free(in);
  free(out);
}

/* ---- the rules against the driver ------------------------------------------------------------ */

static const unsigned elem_bytes[13] = {1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4}; /* dtypes 0..12 */

/* A tiled description the documentation allows: rank `rank`, dtype `dt`, swizzle `sw` (0..3),
 * no interleave, over memory at `base`: the box's inner dimension is the swizzle's span (64
 * bytes without swizzle), the tensor two boxes wide and 8 deep in every other dimension. */
static cucore_tensor_map_desc valid_tiled(cucore_devptr base, unsigned rank, int dt, int sw) {
  cucore_tensor_map_desc d;
  memset(&d, 0, sizeof d);
  d.dtype = (cucore_tensor_dtype)dt;
  d.rank = rank;
  d.address = base;
  d.swizzle = (cucore_tensor_swizzle)sw;
  unsigned inner = sw == 0 ? 64 : 16u << sw; /* 32, 64, 128 bytes */
  d.box[0] = inner / elem_bytes[dt];
  d.dims[0] = 2u * d.box[0];
  uint64_t stride = d.dims[0] * elem_bytes[dt];
  for (unsigned i = 1; i < rank; i++) {
    d.dims[i] = 8;
    d.box[i] = 4;
    d.strides[i - 1] = stride;
    stride *= 8;
  }
  return d;
}

/* The driver's own answer for a description, called directly (no cucore checks first). */
static CUresult driver_encode(const cucore_tensor_map_desc *d) {
  cuuint64_t dims[5] = {0}, strides[4] = {0};
  cuuint32_t box[5] = {0}, es[5] = {0};
  for (unsigned i = 0; i < d->rank && i < 5; i++) {
    dims[i] = d->dims[i];
    box[i] = d->box[i];
    es[i] = d->element_strides[i] ? d->element_strides[i] : 1;
    if (i + 1 < d->rank && i < 4) strides[i] = d->strides[i];
  }
  CUtensorMap m;
  return DRV(cuTensorMapEncodeTiled)(&m, (CUtensorMapDataType)d->dtype, d->rank,
                                     (void *)(uintptr_t)d->address, dims, strides, box, es,
                                     (CUtensorMapInterleave)d->interleave,
                                     (CUtensorMapSwizzle)d->swizzle,
                                     (CUtensorMapL2promotion)d->l2_promotion,
                                     (CUtensorMapFloatOOBfill)d->oob_fill);
}

static void tensor_map_rules_agree_with_the_driver(void **state) {
  (void)state;
  if (props.arch < 90) {
    print_message("skipped: tensor maps need sm_90 or newer; device 0 is sm_%d\n", props.arch);
    skip();
  }
  cucore_devptr base = 0;
  assert_ok(cucore_mem_alloc(dev, 2u << 20, &base));
  /* Every rank, the 13 data types every sm_90 driver has, the four classic swizzles (a
   * swizzle from rank 2 on: it permutes rows): cucore and the driver both accept. */
  int cases = 0;
  for (unsigned rank = 1; rank <= 5; rank++)
    for (int dt = 0; dt <= 12; dt++)
      for (int sw = 0; sw <= (rank == 1 ? 0 : 3); sw++) {
        cucore_tensor_map_desc d = valid_tiled(base, rank, dt, sw);
        cucore_tensor_map m;
        cucore_status st = cucore_tensor_map_encode_tiled(&d, &m);
        if (st != CUCORE_OK)
          fail_msg("rank %u dtype %d swizzle %d: cucore refused: %s", rank, dt, sw,
                   cucore_last_error());
        assert_int_equal(driver_encode(&d), CUDA_SUCCESS);
        cases++;
      }
  /* Descriptions that break one documented rule each: both refuse. */
  struct {
    const char *what;
    cucore_tensor_map_desc d;
  } bad[8];
  int nbad = 0;
  cucore_tensor_map_desc d = valid_tiled(base, 2, CUCORE_TMAP_FLOAT32, 0);
  bad[nbad].what = "box[0] of 12 bytes (not a multiple of 16)";
  bad[nbad].d = d, bad[nbad].d.box[0] = 3, nbad++;
  bad[nbad].what = "box[1] of 257";
  bad[nbad].d = d, bad[nbad].d.box[1] = 257, nbad++;
  bad[nbad].what = "strides[0] not a multiple of 16";
  bad[nbad].d = d, bad[nbad].d.strides[0] += 8, nbad++;
  bad[nbad].what = "an address 8 bytes past 16-byte alignment";
  bad[nbad].d = d, bad[nbad].d.address += 8, nbad++;
  bad[nbad].what = "element_strides[1] of 9"; /* [0] is ignored without interleave */
  bad[nbad].d = d, bad[nbad].d.element_strides[1] = 9, nbad++;
  bad[nbad].what = "a 64-byte inner box under the 32-byte swizzle";
  bad[nbad].d = d, bad[nbad].d.swizzle = CUCORE_TMAP_SWIZZLE_32B, nbad++;
  bad[nbad].what = "interleave 16B with rank 2";
  bad[nbad].d = d, bad[nbad].d.interleave = CUCORE_TMAP_INTERLEAVE_16B, nbad++;
  bad[nbad].what = "dims[1] of 0";
  bad[nbad].d = d, bad[nbad].d.dims[1] = 0, nbad++;
  for (int i = 0; i < nbad; i++) {
    assert_int_not_equal(cucore_tensor_map_check(CUCORE_TMAP_TILED, &bad[i].d), CUCORE_OK);
    CUresult r = driver_encode(&bad[i].d);
    if (r == CUDA_SUCCESS) fail_msg("%s: cucore refused, the driver accepted", bad[i].what);
  }
  /* An im2col map (NHWC, 3x3 window with a padding of 1) encodes. */
  cucore_tensor_map_desc ic;
  memset(&ic, 0, sizeof ic);
  ic.dtype = CUCORE_TMAP_FLOAT32;
  ic.rank = 4;
  ic.address = base;
  ic.dims[0] = 64; /* C */
  ic.dims[1] = 16; /* W */
  ic.dims[2] = 16; /* H */
  ic.dims[3] = 2;  /* N */
  ic.strides[0] = 64 * 4;
  ic.strides[1] = 64 * 4 * 16;
  ic.strides[2] = 64 * 4 * 16 * 16;
  ic.lower_corner[0] = ic.lower_corner[1] = -1;
  ic.upper_corner[0] = ic.upper_corner[1] = -1;
  ic.channels_per_pixel = 32;
  ic.pixels_per_column = 64;
  cucore_tensor_map im;
  assert_ok(cucore_tensor_map_encode_im2col(&ic, &im));
  print_message("tensor maps: %d valid tiled descriptions (ranks 1-5, 13 types, 4 swizzles) "
                "encoded by cucore and the driver alike; %d broken rules refused by both; an "
                "im2col map encoded\n",
                cases, nbad);
  assert_ok(cucore_mem_free(dev, base));
}

/* ---- textures and surfaces ----------------------------------------------------------------- */

static const char *tex_src =
    "extern \"C\" __global__ void sample2d(cudaTextureObject_t tex, float *out, int w, int h,\n"
    "                                      float ox, float oy) {\n"
    "  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;\n"
    "  if (x < w && y < h) out[y * w + x] = tex2D<float>(tex, x + ox, y + oy);\n"
    "}\n"
    "extern \"C\" __global__ void fetch1d(cudaTextureObject_t tex, float *out, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) out[i] = tex1Dfetch<float>(tex, i);\n"
    "}\n"
    "extern \"C\" __global__ void surf_fill(cudaSurfaceObject_t s, int w, int h) {\n"
    "  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;\n"
    "  if (x < w && y < h) surf2Dwrite((float)(y * 1000 + x), s, x * (int)sizeof(float), y);\n"
    "}\n";

static cucore_kernel *k_sample, *k_fetch, *k_surf;

static void compile_tex_kernels(void) {
  if (k_sample) return;
  cucore_object *obj = gpu_compile(tex_src, CUCORE_CODE_CUBIN, NULL, NULL);
  k_sample = gpu_kernel(obj, "sample2d");
  k_fetch = gpu_kernel(obj, "fetch1d");
  k_surf = gpu_kernel(obj, "surf_fill");
  cucore_object_destroy(obj);
}

/* Samples a 2D texture at (x + ox, y + oy) for every x < w, y < h into host `out`. */
static void sample(cucore_texture *tex, int w, int h, float ox, float oy, float *out) {
  cucore_devptr d = 0;
  assert_ok(cucore_mem_alloc(dev, sizeof(float) * w * h, &d));
  uint64_t th = 0;
  assert_ok(cucore_texture_get_handle(tex, &th));
  cucore_args *a = NULL;
  assert_ok(cucore_args_create(k_sample, &a));
  assert_ok(cucore_args_push_texture(a, th));
  assert_ok(cucore_args_push_ptr(a, d));
  assert_ok(cucore_args_push_i32(a, w));
  assert_ok(cucore_args_push_i32(a, h));
  assert_ok(cucore_args_push_f32(a, ox));
  assert_ok(cucore_args_push_f32(a, oy));
  cucore_launch_config c = cfg((unsigned)(w + 15) / 16, (unsigned)(h + 15) / 16, 16, 16);
  assert_ok(cucore_launch(k_sample, &c, a));
  assert_ok(cucore_memcpy_dtoh(dev, out, d, sizeof(float) * w * h, s));
  assert_ok(cucore_stream_synchronize(s));
  cucore_args_destroy(a);
  assert_ok(cucore_mem_free(dev, d));
}

static float texel(const float *t, int w, int h, int x, int y) {
  x = x < 0 ? 0 : x >= w ? w - 1 : x; /* clamp */
  y = y < 0 ? 0 : y >= h ? h - 1 : y;
  return t[y * w + x];
}

/* A texture over an array: point sampling gives the texels, bilinear filtering the CPU's
 * weights; the array cannot go while textures read it. */
static void array_textures(void) {
  const int W = 20, H = 12;
  float img[20 * 12], out[20 * 12];
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) img[y * W + x] = (float)((x * 7 + y * 13) % 17) + 0.5f * (float)x;
  cucore_array *arr = NULL;
  cucore_array_desc ad = {.width = W, .height = H, .format = CUCORE_FORMAT_FLOAT, .channels = 1};
  assert_ok(cucore_array_create(dev, &ad, &arr));
  assert_ok(cucore_array_copy_from_host(arr, img, 0, s));
  /* Point sampling at texel centres gives the texels. */
  cucore_texture *tp = NULL;
  assert_ok(cucore_texture_create_array(arr, NULL, &tp));
  sample(tp, W, H, 0.5f, 0.5f, out);
  assert_memory_equal(img, out, sizeof img);
  /* Bilinear at offsets whose weights are exact in the hardware's 8-bit fractions. */
  cucore_texture_desc td;
  memset(&td, 0, sizeof td);
  td.filter = CUCORE_FILTER_LINEAR;
  cucore_texture *tl = NULL;
  assert_ok(cucore_texture_create_array(arr, &td, &tl));
  sample(tl, W, H, 0.75f, 0.375f, out); /* x + 0.25 and y - 0.125 from the texel centres */
  double worst = 0;
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) {
      float a = 0.25f, b = 0.875f;
      int i = x, j = y - 1;
      float want = (1 - a) * (1 - b) * texel(img, W, H, i, j) +
                   a * (1 - b) * texel(img, W, H, i + 1, j) +
                   (1 - a) * b * texel(img, W, H, i, j + 1) +
                   a * b * texel(img, W, H, i + 1, j + 1);
      double err = fabs((double)out[y * W + x] - want);
      if (err > worst) worst = err;
    }
  print_message("texture from an array: point sampling matches; bilinear worst error %.2g\n",
                worst);
  assert_true(worst < 1e-3);
  /* The array cannot go while textures read it. */
  assert_status(cucore_array_destroy(arr), CUCORE_IN_USE);
  assert_contains(cucore_last_error(), "2 texture or surface objects");
  assert_ok(cucore_texture_destroy(tp));
  assert_ok(cucore_texture_destroy(tl));
  assert_ok(cucore_array_destroy(arr));
}

/* A linear texture over device memory: tex1Dfetch returns the elements; the memory cannot be
 * freed while the texture reads it. Returns the elements checked. */
static int linear_texture(void) {
  const int n = 1000;
  float lin[1000], got[1000];
  for (int i = 0; i < n; i++) lin[i] = (float)i * 1.5f - 7.0f;
  cucore_devptr buf = 0, dout = 0;
  assert_ok(cucore_mem_alloc(dev, 2u << 20, &buf)); /* large: aligned for textures */
  assert_ok(cucore_mem_alloc(dev, sizeof got, &dout));
  assert_ok(cucore_memcpy_htod(dev, buf, lin, sizeof lin, NULL));
  cucore_texture *t1 = NULL;
  assert_status(cucore_texture_create_linear(dev, buf + 4, sizeof lin, CUCORE_FORMAT_FLOAT, 1, NULL,
                                             &t1),
                CUCORE_ARG_ALIGNMENT);
  assert_status(cucore_texture_create_linear(dev, buf + (2u << 20) - 512, 1024, CUCORE_FORMAT_FLOAT,
                                             1, NULL, &t1),
                CUCORE_OUT_OF_BOUNDS);
  assert_ok(cucore_texture_create_linear(dev, buf, sizeof lin, CUCORE_FORMAT_FLOAT, 1, NULL, &t1));
  uint64_t th = 0;
  assert_ok(cucore_texture_get_handle(t1, &th));
  cucore_args *a = NULL;
  assert_ok(cucore_args_create(k_fetch, &a));
  assert_ok(cucore_args_push_texture(a, th));
  assert_ok(cucore_args_push_ptr(a, dout));
  assert_ok(cucore_args_push_i32(a, n));
  cucore_launch_config c = cfg((unsigned)(n + 127) / 128, 1, 128, 1);
  assert_ok(cucore_launch(k_fetch, &c, a));
  assert_ok(cucore_memcpy_dtoh(dev, got, dout, sizeof got, s));
  assert_ok(cucore_stream_synchronize(s));
  assert_memory_equal(lin, got, sizeof lin);
  cucore_args_destroy(a);
  /* The memory cannot be freed while the texture reads it. */
  assert_status(cucore_mem_free(dev, buf), CUCORE_IN_USE);
  assert_contains(cucore_last_error(), "1 texture or surface object");
  assert_ok(cucore_texture_destroy(t1));
  assert_ok(cucore_mem_free(dev, buf));
  assert_ok(cucore_mem_free(dev, dout));
  return n;
}

/* A pitched 2D texture over cucore_mem_alloc_pitch memory. Returns the texels checked. */
static int pitched_texture(void) {
  const int PW = 50, PH = 20;
  float *p2 = malloc(sizeof(float) * PW * PH), *p2out = malloc(sizeof(float) * PW * PH);
  for (int i = 0; i < PW * PH; i++) p2[i] = (float)(i * 3 % 101);
  cucore_devptr pd = 0;
  size_t pitch = 0;
  assert_ok(cucore_mem_alloc_pitch(dev, sizeof(float) * PW, PH, 4, &pd, &pitch));
  cucore_copy_2d cp;
  memset(&cp, 0, sizeof cp);
  cp.src = CUCORE_HOST_ADDR(p2);
  cp.src_pitch = sizeof(float) * PW;
  cp.dst = pd;
  cp.dst_pitch = pitch;
  cp.width_bytes = sizeof(float) * PW;
  cp.height = PH;
  assert_ok(cucore_memcpy_2d(dev, &cp, NULL));
  cucore_texture *t2 = NULL;
  assert_status(cucore_texture_create_pitch2d(dev, pd, PW, PH + 1, pitch, CUCORE_FORMAT_FLOAT, 1,
                                              NULL, &t2),
                CUCORE_OUT_OF_BOUNDS);
  assert_ok(
      cucore_texture_create_pitch2d(dev, pd, PW, PH, pitch, CUCORE_FORMAT_FLOAT, 1, NULL, &t2));
  sample(t2, PW, PH, 0.5f, 0.5f, p2out);
  assert_memory_equal(p2, p2out, sizeof(float) * PW * PH);
  assert_ok(cucore_texture_destroy(t2));
  assert_ok(cucore_mem_free(dev, pd));
  free(p2);
  free(p2out);
  return PW * PH;
}

static void textures_sample_like_the_cpu(void **state) {
  (void)state;
  compile_tex_kernels();
  array_textures();
  int n = linear_texture();
  int texels = pitched_texture();
  print_message("textures over linear and pitched memory: %d and %d texels match\n", n, texels);
}

static void a_surface_written_by_a_kernel(void **state) {
  (void)state;
  compile_tex_kernels();
  const int W = 40, H = 24;
  cucore_array *plain = NULL, *arr = NULL;
  cucore_array_desc ad = {.width = W, .height = H, .format = CUCORE_FORMAT_FLOAT, .channels = 1};
  assert_ok(cucore_array_create(dev, &ad, &plain));
  cucore_surface *sf = NULL;
  assert_status(cucore_surface_create(plain, &sf), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "CUCORE_ARRAY_SURFACE");
  assert_ok(cucore_array_destroy(plain));
  ad.flags = CUCORE_ARRAY_SURFACE;
  assert_ok(cucore_array_create(dev, &ad, &arr));
  assert_ok(cucore_surface_create(arr, &sf));
  uint64_t sh = 0;
  assert_ok(cucore_surface_get_handle(sf, &sh));
  cucore_args *a = NULL;
  assert_ok(cucore_args_create(k_surf, &a));
  assert_ok(cucore_args_push_surface(a, sh));
  assert_ok(cucore_args_push_i32(a, W));
  assert_ok(cucore_args_push_i32(a, H));
  cucore_launch_config c = cfg((W + 15) / 16, (H + 15) / 16, 16, 16);
  assert_ok(cucore_launch(k_surf, &c, a));
  assert_ok(cucore_stream_synchronize(s));
  float got[40 * 24];
  assert_ok(cucore_array_copy_to_host(arr, got, 0, NULL));
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) assert_true(got[y * W + x] == (float)(y * 1000 + x));
  assert_status(cucore_array_destroy(arr), CUCORE_IN_USE);
  assert_ok(cucore_surface_destroy(sf));
  assert_ok(cucore_array_destroy(arr));
  cucore_args_destroy(a);
  print_message("surface written by a kernel: %d texels match\n", W * H);
  cucore_kernel_destroy(k_sample);
  cucore_kernel_destroy(k_fetch);
  cucore_kernel_destroy(k_surf);
  k_sample = NULL;
}

int main(void) {
  if (!cucore_test_have_gpu()) return CUCORE_TEST_SKIP;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(tma_copy_through_a_tensor_map),
      cmocka_unit_test(tensor_map_rules_agree_with_the_driver),
      cmocka_unit_test(textures_sample_like_the_cpu),
      cmocka_unit_test(a_surface_written_by_a_kernel),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
