/*
 * tensor_map.c -- tensor maps for the Tensor Memory Accelerator (cuTensorMapEncodeTiled,
 * cuTensorMapEncodeIm2col). Every rule the driver's documentation states is checked first, in
 * the order it states them, each failure naming the field, its value and the rule; then the
 * tensor's extent against its allocation when cucore recorded the address. The rules need no
 * GPU (cucore_tensor_map_check) and are what the CPU tests pin down.
 */
#include "memory/memory.h"

#include <string.h>

/* Bits per element of a tensor-map data type as laid out in memory (gaps of the packed types
 * included); 0 for an unknown type. */
static unsigned cc_tmap_elem_bits(int dtype) {
  switch (dtype) {
  case CUCORE_TMAP_UINT8: return 8;
  case CUCORE_TMAP_UINT16:
  case CUCORE_TMAP_FLOAT16:
  case CUCORE_TMAP_BFLOAT16: return 16;
  case CUCORE_TMAP_UINT32:
  case CUCORE_TMAP_INT32:
  case CUCORE_TMAP_FLOAT32:
  case CUCORE_TMAP_FLOAT32_FTZ:
  case CUCORE_TMAP_TFLOAT32:
  case CUCORE_TMAP_TFLOAT32_FTZ: return 32;
  case CUCORE_TMAP_UINT64:
  case CUCORE_TMAP_INT64:
  case CUCORE_TMAP_FLOAT64: return 64;
  case CUCORE_TMAP_16U4_ALIGN8B: return 4;  /* 16 values in 8 bytes */
  case CUCORE_TMAP_16U4_ALIGN16B: return 8; /* 16 values in 8 of every 16 bytes */
  case CUCORE_TMAP_16U6_ALIGN16B: return 8; /* 16 values in 12 of every 16 bytes */
  default: return 0;
  }
}

static int is_float(int dtype) {
  switch (dtype) {
  case CUCORE_TMAP_FLOAT16:
  case CUCORE_TMAP_FLOAT32:
  case CUCORE_TMAP_FLOAT64:
  case CUCORE_TMAP_BFLOAT16:
  case CUCORE_TMAP_FLOAT32_FTZ:
  case CUCORE_TMAP_TFLOAT32:
  case CUCORE_TMAP_TFLOAT32_FTZ: return 1;
  default: return 0;
  }
}

static int is_packed16(int dtype) {
  return dtype == CUCORE_TMAP_16U4_ALIGN16B || dtype == CUCORE_TMAP_16U6_ALIGN16B;
}

static const char *dtype_name(int dtype) {
  static const char *const names[] = {"UINT8",        "UINT16",       "UINT32",
                                      "INT32",        "UINT64",       "INT64",
                                      "FLOAT16",      "FLOAT32",      "FLOAT64",
                                      "BFLOAT16",     "FLOAT32_FTZ",  "TFLOAT32",
                                      "TFLOAT32_FTZ", "16U4_ALIGN8B", "16U4_ALIGN16B",
                                      "16U6_ALIGN16B"};
  return dtype >= 0 && dtype < 16 ? names[dtype] : "?";
}

static unsigned swizzle_span(int swizzle) {
  switch (swizzle) {
  case CUCORE_TMAP_SWIZZLE_32B: return 32;
  case CUCORE_TMAP_SWIZZLE_64B: return 64;
  case CUCORE_TMAP_SWIZZLE_NONE: return 0;
  default: return 128; /* the 128B swizzles */
  }
}

/* ---- the documented rules, in steps: each a flat list of checks in the order the driver's
 * documentation states them, each trusting what the steps before it checked (a known type, a
 * rank of 1..5). */

/* The enumerations: kind, data type, interleave, swizzle, L2 promotion, OOB fill. */
static cucore_status rules_enums(cucore_tensor_map_kind kind, const cucore_tensor_map_desc *d,
                                 const char *fn) {
  if (kind != CUCORE_TMAP_TILED && kind != CUCORE_TMAP_IM2COL && kind != CUCORE_TMAP_IM2COL_WIDE)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: kind %d is not TILED (0), IM2COL (1) or IM2COL_WIDE (2)", fn, (int)kind);
  int dt = (int)d->dtype;
  if (!cc_tmap_elem_bits(dt))
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: dtype %d is not a tensor map data type (0 UINT8 .. 15 16U6_ALIGN16B)", fn,
                   dt);
  if ((int)d->interleave < 0 || (int)d->interleave > CUCORE_TMAP_INTERLEAVE_32B)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: interleave %d is not NONE, 16B or 32B", fn,
                   (int)d->interleave);
  if ((int)d->swizzle < 0 || (int)d->swizzle > CUCORE_TMAP_SWIZZLE_128B_ATOM_64B)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: swizzle %d is not a cucore_tensor_swizzle (0..6)",
                   fn, (int)d->swizzle);
  if ((int)d->l2_promotion < 0 || (int)d->l2_promotion > CUCORE_TMAP_L2_256B)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: L2 promotion %d is not NONE, 64B, 128B or 256B",
                   fn, (int)d->l2_promotion);
  if ((int)d->oob_fill < 0 || (int)d->oob_fill > CUCORE_TMAP_OOB_NAN_REQUEST_ZERO_FMA)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: OOB fill %d is not ZERO or NAN_REQUEST_ZERO_FMA",
                   fn, (int)d->oob_fill);
  return CUCORE_OK;
}

/* The rank (im2col and interleaved layouts need 3 or more) and the global address. */
static cucore_status rules_rank_address(cucore_tensor_map_kind kind,
                                        const cucore_tensor_map_desc *d, const char *fn) {
  const int im2col = kind != CUCORE_TMAP_TILED;
  const int interleaved = d->interleave != CUCORE_TMAP_INTERLEAVE_NONE;
  int dt = (int)d->dtype;
  unsigned min_rank = im2col || interleaved ? 3 : 1;
  if (d->rank < min_rank || d->rank > 5)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: rank %u is outside %u..5 (%s)", fn, d->rank,
                   min_rank,
                   im2col        ? "im2col maps have 3 to 5 dimensions"
                   : interleaved ? "interleaved layouts need at least 3 dimensions"
                                 : "tensor maps have 1 to 5 dimensions");
  unsigned addr_align = d->interleave == CUCORE_TMAP_INTERLEAVE_32B || is_packed16(dt) ? 32 : 16;
  if (!d->address) return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: the address is 0", fn);
  if (d->address % addr_align)
    return cc_fail(CUCORE_ARG_ALIGNMENT,
                   "%s: the address 0x%llx is not %u-byte aligned (the driver needs %u%s)", fn,
                   (unsigned long long)d->address, addr_align, addr_align,
                   addr_align == 32 ? (is_packed16(dt) ? " for the 16-byte-aligned packed types"
                                                       : " with INTERLEAVE_32B")
                                    : "");
  return CUCORE_OK;
}

/* The dimensions, and the strides (bytes, of dimensions 1 .. rank-1). */
static cucore_status rules_dims_strides(const cucore_tensor_map_desc *d, const char *fn) {
  int dt = (int)d->dtype;
  unsigned bits = cc_tmap_elem_bits(dt);
  for (unsigned i = 0; i < d->rank; i++)
    if (d->dims[i] == 0 || d->dims[i] > ((uint64_t)1 << 32))
      return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: dims[%u] is %llu (expected 1 .. 2^32)", fn, i,
                     (unsigned long long)d->dims[i]);
  if (is_packed16(dt) && d->dims[0] % 128)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: dims[0] is %llu; with %s it must be a multiple of 128", fn,
                   (unsigned long long)d->dims[0], dtype_name(dt));
  if (dt == CUCORE_TMAP_16U4_ALIGN8B && d->dims[0] % 2)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: dims[0] is %llu; with 16U4_ALIGN8B it must be even", fn,
                   (unsigned long long)d->dims[0]);
  unsigned stride_align = d->interleave == CUCORE_TMAP_INTERLEAVE_32B || is_packed16(dt) ? 32 : 16;
  for (unsigned i = 0; i + 1 < d->rank; i++) {
    if (d->strides[i] % stride_align)
      return cc_fail(CUCORE_ARG_ALIGNMENT,
                     "%s: strides[%u] (dimension %u) is %llu bytes, not a multiple of %u", fn, i,
                     i + 1, (unsigned long long)d->strides[i], stride_align);
    if (d->strides[i] >= ((uint64_t)1 << 40))
      return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: strides[%u] is %llu bytes (expected below 2^40)",
                     fn, i, (unsigned long long)d->strides[i]);
  }
  uint64_t row_bytes = (d->dims[0] * bits + 7) / 8;
  if (d->rank > 1 && d->strides[0] < row_bytes)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: strides[0] is %llu bytes, less than one row of dimension 0 (%llu "
                   "elements of %s = %llu bytes): rows would overlap",
                   fn, (unsigned long long)d->strides[0], (unsigned long long)d->dims[0],
                   dtype_name(dt), (unsigned long long)row_bytes);
  return CUCORE_OK;
}

/* The box of a tiled map; *inner_bytes gets its inner dimension in bytes. */
static cucore_status rules_box(const cucore_tensor_map_desc *d, uint64_t *inner_bytes,
                               const char *fn) {
  int dt = (int)d->dtype;
  unsigned bits = cc_tmap_elem_bits(dt);
  const int interleaved = d->interleave != CUCORE_TMAP_INTERLEAVE_NONE;
  for (unsigned i = 0; i < d->rank; i++)
    if (d->box[i] == 0 || d->box[i] > 256)
      return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: box[%u] is %u (expected 1..256)", fn, i,
                     d->box[i]);
  *inner_bytes = ((uint64_t)d->box[0] * bits + 7) / 8;
  if (!interleaved && *inner_bytes % 16)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: box[0] is %u elements of %s = %llu bytes, not a multiple of 16 (the "
                   "driver's rule without interleave)",
                   fn, d->box[0], dtype_name(dt), (unsigned long long)*inner_bytes);
  if (is_packed16(dt) && d->box[0] != 128)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: box[0] is %u; with %s it must be 128", fn,
                   d->box[0], dtype_name(dt));
  return CUCORE_OK;
}

/* The pixel box of an im2col map; *inner_bytes gets its inner dimension (the channels of a
 * pixel) in bytes. */
static cucore_status rules_pixel_box(const cucore_tensor_map_desc *d, uint64_t *inner_bytes,
                                     const char *fn) {
  int dt = (int)d->dtype;
  unsigned bits = cc_tmap_elem_bits(dt);
  static const int range[6] = {0, 0, 0, 32768, 128, 16}; /* by rank */
  int lim = range[d->rank];
  for (unsigned j = 0; j + 2 < d->rank; j++) {
    if (d->lower_corner[j] < -lim || d->lower_corner[j] > lim - 1)
      return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: lower_corner[%u] is %d; rank %u allows %d..%d",
                     fn, j, d->lower_corner[j], d->rank, -lim, lim - 1);
    if (d->upper_corner[j] < -lim || d->upper_corner[j] > lim - 1)
      return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: upper_corner[%u] is %d; rank %u allows %d..%d",
                     fn, j, d->upper_corner[j], d->rank, -lim, lim - 1);
  }
  if (d->channels_per_pixel == 0 || d->channels_per_pixel > 256)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: channels_per_pixel is %u (expected 1..256)", fn,
                   d->channels_per_pixel);
  if (is_packed16(dt) && d->channels_per_pixel != 128)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: channels_per_pixel is %u; with %s it must be 128",
                   fn, d->channels_per_pixel, dtype_name(dt));
  if (d->pixels_per_column == 0 || d->pixels_per_column > 1024)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: pixels_per_column is %u (expected 1..1024)", fn,
                   d->pixels_per_column);
  *inner_bytes = ((uint64_t)d->channels_per_pixel * bits + 7) / 8;
  return CUCORE_OK;
}

/* The W box and mode of a wide im2col map, and the swizzles it takes; *inner_bytes gets the
 * channels of a pixel in bytes. */
static cucore_status rules_wide_box(const cucore_tensor_map_desc *d, uint64_t *inner_bytes,
                                    const char *fn) {
  int dt = (int)d->dtype;
  for (int j = 0; j < 2; j++) {
    int v = j ? d->upper_corner[0] : d->lower_corner[0];
    if (v < -32768 || v > 32767)
      return cc_fail(CUCORE_INVALID_ARGUMENT,
                     "%s: %s_corner[0] (the W offset) is %d; wide maps allow -32768..32767", fn,
                     j ? "upper" : "lower", v);
  }
  if ((int64_t)d->dims[1] + d->upper_corner[0] - d->lower_corner[0] <= 0)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: the box along W is empty (W %llu, lower offset %d, upper offset %d): the "
                   "driver needs a box of non-zero area",
                   fn, (unsigned long long)d->dims[1], d->lower_corner[0], d->upper_corner[0]);
  if (d->wide_mode != 0 && d->wide_mode != 1)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: wide_mode %d is not W (0) or W128 (1)", fn,
                   d->wide_mode);
  if (d->swizzle != CUCORE_TMAP_SWIZZLE_64B && d->swizzle != CUCORE_TMAP_SWIZZLE_128B &&
      d->swizzle != CUCORE_TMAP_SWIZZLE_128B_ATOM_32B)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: wide im2col maps take swizzle 64B, 128B or 128B_ATOM_32B, not %d", fn,
                   (int)d->swizzle);
  if (d->channels_per_pixel == 0 || d->channels_per_pixel > 256)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: channels_per_pixel is %u (expected 1..256)", fn,
                   d->channels_per_pixel);
  if (is_packed16(dt) && d->channels_per_pixel != 128)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: channels_per_pixel is %u; with %s it must be 128",
                   fn, d->channels_per_pixel, dtype_name(dt));
  if (d->wide_mode == 0 && (d->pixels_per_column == 0 || d->pixels_per_column > 1024))
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: pixels_per_column is %u (expected 1..1024 in mode W)", fn,
                   d->pixels_per_column);
  *inner_bytes = ((uint64_t)d->channels_per_pixel * cc_tmap_elem_bits(dt) + 7) / 8;
  return CUCORE_OK;
}

/* Element strides, then interleave, swizzle and the packed types together (the swizzle's span
 * against the box's inner dimension, `inner_bytes`). */
static cucore_status rules_layout(cucore_tensor_map_kind kind, const cucore_tensor_map_desc *d,
                                  uint64_t inner_bytes, const char *fn) {
  const int im2col = kind != CUCORE_TMAP_TILED;
  const int interleaved = d->interleave != CUCORE_TMAP_INTERLEAVE_NONE;
  int dt = (int)d->dtype;
  /* Element strides. */
  for (unsigned i = 0; i < d->rank; i++)
    if (d->element_strides[i] > 8)
      return cc_fail(CUCORE_INVALID_ARGUMENT,
                     "%s: element_strides[%u] is %u (expected 1..8; 0 is taken as 1)", fn, i,
                     d->element_strides[i]);
  /* Interleave, swizzle and the packed types. */
  if (!interleaved && d->swizzle != CUCORE_TMAP_SWIZZLE_NONE &&
      inner_bytes > swizzle_span((int)d->swizzle))
    return cc_fail(
        CUCORE_INVALID_ARGUMENT,
        "%s: the box's inner dimension is %llu bytes (%s %u x %s), more than the %u-byte "
        "span of swizzle %d",
        fn, (unsigned long long)inner_bytes, im2col ? "channels_per_pixel" : "box[0]",
        im2col ? d->channels_per_pixel : d->box[0], dtype_name(dt), swizzle_span((int)d->swizzle),
        (int)d->swizzle);
  if (dt == CUCORE_TMAP_16U6_ALIGN16B && interleaved)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: 16U6_ALIGN16B needs interleave NONE", fn);
  if (d->interleave == CUCORE_TMAP_INTERLEAVE_32B && d->swizzle != CUCORE_TMAP_SWIZZLE_32B)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: INTERLEAVE_32B needs SWIZZLE_32B (swizzle is %d)",
                   fn, (int)d->swizzle);
  if (dt == CUCORE_TMAP_16U6_ALIGN16B && d->swizzle != CUCORE_TMAP_SWIZZLE_NONE &&
      d->swizzle != CUCORE_TMAP_SWIZZLE_128B && d->swizzle != CUCORE_TMAP_SWIZZLE_128B_ATOM_32B &&
      d->swizzle != CUCORE_TMAP_SWIZZLE_128B_ATOM_64B)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: 16U6_ALIGN16B takes swizzle NONE, 128B, 128B_ATOM_32B or 128B_ATOM_64B, "
                   "not %d",
                   fn, (int)d->swizzle);
  if (dt == CUCORE_TMAP_16U4_ALIGN16B && d->swizzle != CUCORE_TMAP_SWIZZLE_NONE &&
      d->swizzle != CUCORE_TMAP_SWIZZLE_128B && d->swizzle != CUCORE_TMAP_SWIZZLE_128B_ATOM_32B)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: 16U4_ALIGN16B takes swizzle NONE, 128B or 128B_ATOM_32B, not %d", fn,
                   (int)d->swizzle);
  if (d->oob_fill == CUCORE_TMAP_OOB_NAN_REQUEST_ZERO_FMA && !is_float(dt))
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: OOB fill NAN_REQUEST_ZERO_FMA needs a floating-point type, not %s", fn,
                   dtype_name(dt));
  return CUCORE_OK;
}

/* The documented rules, without the allocation check; `fn` names the caller. */
static cucore_status cc_tmap_rules(cucore_tensor_map_kind kind, const cucore_tensor_map_desc *d,
                                   const char *fn) {
  cucore_status st = rules_enums(kind, d, fn);
  if (st == CUCORE_OK) st = rules_rank_address(kind, d, fn);
  if (st == CUCORE_OK) st = rules_dims_strides(d, fn);
  if (st != CUCORE_OK) return st;
  uint64_t inner_bytes = 0;
  st = kind == CUCORE_TMAP_IM2COL        ? rules_pixel_box(d, &inner_bytes, fn)
       : kind == CUCORE_TMAP_IM2COL_WIDE ? rules_wide_box(d, &inner_bytes, fn)
                                         : rules_box(d, &inner_bytes, fn);
  if (st != CUCORE_OK) return st;
  return rules_layout(kind, d, inner_bytes, fn);
}

int cc_tmap_extent(const cucore_tensor_map_desc *d, uint64_t *bytes) {
  unsigned bits = cc_tmap_elem_bits((int)d->dtype);
  uint64_t total, t;
  if (!cc_mul_u64(d->dims[0], bits, &t)) return 0;
  total = (t + 7) / 8;
  for (unsigned i = 1; i < d->rank && i < 5; i++) {
    if (!cc_mul_u64(d->dims[i] - 1, d->strides[i - 1], &t) || !cc_add_u64(total, t, &total))
      return 0;
  }
  *bytes = total;
  return 1;
}

static cucore_status check_all(cucore_tensor_map_kind kind, const cucore_tensor_map_desc *d,
                               const char *fn) {
  cucore_status st = cc_tmap_rules(kind, d, fn);
  if (st != CUCORE_OK) return st;
  uint64_t bytes;
  if (!cc_tmap_extent(d, &bytes))
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: the tensor's extent overflows 64 bits", fn);
  return cc_mem_check_range(d->address, bytes, fn, "tensor");
}

cucore_status cucore_tensor_map_check(cucore_tensor_map_kind kind,
                                      const cucore_tensor_map_desc *desc) {
  cc_begin();
  CC_CHECK_ARG(desc, "cucore_tensor_map_check", "desc");
  return check_all(kind, desc, "cucore_tensor_map_check");
}

/* The driver's arrays, element strides of 0 taken as 1. */
typedef struct cu_arrays {
  cuuint64_t dims[5], strides[4];
  cuuint32_t box[5], estrides[5];
} cu_arrays;

static void fill_arrays(const cucore_tensor_map_desc *d, cu_arrays *a) {
  memset(a, 0, sizeof *a);
  for (unsigned i = 0; i < d->rank; i++) {
    a->dims[i] = d->dims[i];
    a->box[i] = d->box[i];
    a->estrides[i] = d->element_strides[i] ? d->element_strides[i] : 1;
    if (i + 1 < d->rank) a->strides[i] = d->strides[i];
  }
}

/* The steps before either encode: the arguments, *out zeroed, the checks of `kind`, the driver
 * call and a context; then the driver's arrays in *a. */
static cucore_status encode_prelude(cucore_tensor_map_kind kind, const cucore_tensor_map_desc *d,
                                    cucore_tensor_map *out, cu_arrays *a, const char *fn) {
  CC_CHECK_ARG(d, fn, "desc");
  CC_CHECK_ARG(out, fn, "out");
  memset(out, 0, sizeof *out);
  if ((uintptr_t)out % 64)
    return cc_fail(CUCORE_ARG_ALIGNMENT,
                   "%s: the output %p is not 64-byte aligned (declare a cucore_tensor_map, or "
                   "allocate it with aligned_alloc(64, ...))",
                   fn, (void *)out);
  cucore_status st = check_all(kind, d, fn);
  if (st == CUCORE_OK) st = cc_driver_need_device();
  if (st == CUCORE_OK)
    st = kind == CUCORE_TMAP_TILED    ? CC_DRV_REQUIRE(cuTensorMapEncodeTiled)
         : kind == CUCORE_TMAP_IM2COL ? CC_DRV_REQUIRE(cuTensorMapEncodeIm2col)
                                      : CC_DRV_REQUIRE(cuTensorMapEncodeIm2colWide);
  if (st == CUCORE_OK) st = cc_ensure_context();
  if (st == CUCORE_OK) fill_arrays(d, a);
  return st;
}

cucore_status cucore_tensor_map_encode_tiled(const cucore_tensor_map_desc *desc,
                                             cucore_tensor_map *out) {
  cc_begin();
  const char *fn = "cucore_tensor_map_encode_tiled";
  cu_arrays a;
  cucore_status st = encode_prelude(CUCORE_TMAP_TILED, desc, out, &a, fn);
  if (st != CUCORE_OK) return st;
  CUresult r = DRV(cuTensorMapEncodeTiled)((CUtensorMap *)out, (CUtensorMapDataType)desc->dtype,
                                           desc->rank, (void *)(uintptr_t)desc->address, a.dims,
                                           a.strides, a.box, a.estrides,
                                           (CUtensorMapInterleave)desc->interleave,
                                           (CUtensorMapSwizzle)desc->swizzle,
                                           (CUtensorMapL2promotion)desc->l2_promotion,
                                           (CUtensorMapFloatOOBfill)desc->oob_fill);
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, "cuTensorMapEncodeTiled",
                      "rank %u %s tensor at 0x%llx (cucore's checks passed: a rule the driver "
                      "does not document, or a newer type or swizzle than this driver knows)",
                      desc->rank, dtype_name((int)desc->dtype), (unsigned long long)desc->address);
  return CUCORE_OK;
}

cucore_status cucore_tensor_map_encode_im2col(const cucore_tensor_map_desc *desc,
                                              cucore_tensor_map *out) {
  cc_begin();
  const char *fn = "cucore_tensor_map_encode_im2col";
  cu_arrays a;
  cucore_status st = encode_prelude(CUCORE_TMAP_IM2COL, desc, out, &a, fn);
  if (st != CUCORE_OK) return st;
  int lower[3] = {0}, upper[3] = {0};
  for (unsigned j = 0; j + 2 < desc->rank; j++) {
    lower[j] = desc->lower_corner[j];
    upper[j] = desc->upper_corner[j];
  }
  CUresult r = DRV(cuTensorMapEncodeIm2col)((CUtensorMap *)out, (CUtensorMapDataType)desc->dtype,
                                            desc->rank, (void *)(uintptr_t)desc->address, a.dims,
                                            a.strides, lower, upper, desc->channels_per_pixel,
                                            desc->pixels_per_column, a.estrides,
                                            (CUtensorMapInterleave)desc->interleave,
                                            (CUtensorMapSwizzle)desc->swizzle,
                                            (CUtensorMapL2promotion)desc->l2_promotion,
                                            (CUtensorMapFloatOOBfill)desc->oob_fill);
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, "cuTensorMapEncodeIm2col",
                      "rank %u %s tensor at 0x%llx (cucore's checks passed: a rule the driver "
                      "does not document, such as an empty pixel box, or a newer type)",
                      desc->rank, dtype_name((int)desc->dtype), (unsigned long long)desc->address);
  return CUCORE_OK;
}

/* Wide im2col maps need a device of compute capability 10.0 or higher: the current one's. */
static cucore_status wide_device(const char *fn) {
  CUdevice dev = 0;
  int major = 0, minor = 0;
  if (DRV(cuCtxGetDevice)(&dev) != CUDA_SUCCESS ||
      DRV(cuDeviceGetAttribute)(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev) !=
          CUDA_SUCCESS ||
      DRV(cuDeviceGetAttribute)(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev) !=
          CUDA_SUCCESS)
    return CUCORE_OK; /* the driver's answer will say */
  if (major >= 10) return CUCORE_OK;
  return cc_fail(CUCORE_NOT_SUPPORTED,
                 "%s: wide im2col maps need a device of compute capability 10.0 or higher; the "
                 "current device (%d) is %d.%d",
                 fn, (int)dev, major, minor);
}

cucore_status cucore_tensor_map_encode_im2col_wide(const cucore_tensor_map_desc *desc,
                                                   cucore_tensor_map *out) {
  cc_begin();
  const char *fn = "cucore_tensor_map_encode_im2col_wide";
  cu_arrays a;
  cucore_status st = encode_prelude(CUCORE_TMAP_IM2COL_WIDE, desc, out, &a, fn);
  if (st == CUCORE_OK) st = wide_device(fn);
  if (st != CUCORE_OK) return st;
  CUresult r = DRV(cuTensorMapEncodeIm2colWide)(
      (CUtensorMap *)out, (CUtensorMapDataType)desc->dtype, desc->rank,
      (void *)(uintptr_t)desc->address, a.dims, a.strides, desc->lower_corner[0],
      desc->upper_corner[0], desc->channels_per_pixel, desc->pixels_per_column, a.estrides,
      (CUtensorMapInterleave)desc->interleave, (CUtensorMapIm2ColWideMode)desc->wide_mode,
      (CUtensorMapSwizzle)desc->swizzle, (CUtensorMapL2promotion)desc->l2_promotion,
      (CUtensorMapFloatOOBfill)desc->oob_fill);
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, "cuTensorMapEncodeIm2colWide",
                      "rank %u %s tensor at 0x%llx (cucore's checks passed: a rule the driver "
                      "does not document)",
                      desc->rank, dtype_name((int)desc->dtype), (unsigned long long)desc->address);
  return CUCORE_OK;
}

cucore_status cucore_tensor_map_replace_address(cucore_tensor_map *map, cucore_tensor_map_kind kind,
                                                const cucore_tensor_map_desc *desc,
                                                cucore_devptr address) {
  cc_begin();
  const char *fn = "cucore_tensor_map_replace_address";
  CC_CHECK_ARG(map, fn, "map");
  CC_CHECK_ARG(desc, fn, "desc");
  if ((uintptr_t)map % 64)
    return cc_fail(CUCORE_ARG_ALIGNMENT, "%s: the map %p is not 64-byte aligned", fn, (void *)map);
  cucore_tensor_map_desc moved = *desc;
  moved.address = address;
  cucore_status st = check_all(kind, &moved, fn);
  if (st == CUCORE_OK) st = cc_driver_need_device();
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuTensorMapReplaceAddress);
  if (st == CUCORE_OK) st = cc_ensure_context();
  if (st != CUCORE_OK) return st;
  CUresult r = DRV(cuTensorMapReplaceAddress)((CUtensorMap *)map, (void *)(uintptr_t)address);
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, "cuTensorMapReplaceAddress", "%s: address 0x%llx", fn,
                      (unsigned long long)address);
  return CUCORE_OK;
}
