/* test_memory_tmap.c -- tensor-map descriptions against every rule the driver documents for
 * cuTensorMapEncodeTiled / Im2col (one broken rule at a time, each named in the message), the
 * tensor's extent against its allocation, and the by-value kernel argument: a 128-byte,
 * 64-aligned parameter takes a tensor map, others refuse it. Also the strict pointer checks of
 * an argument list. No GPU needed. */
#include "support.h"

#include <stdio.h>
#include <stdlib.h>

#include "memory/memory.h"

#define DBASE 0x7d0000000000ull

static struct cucore_device dev0;

/* A valid tiled map: 64 x 32 floats, rows of 256 bytes, a 32 x 16 box. */
static cucore_tensor_map_desc good(void) {
  cucore_tensor_map_desc d;
  memset(&d, 0, sizeof d);
  d.dtype = CUCORE_TMAP_FLOAT32;
  d.rank = 2;
  d.address = DBASE;
  d.dims[0] = 64;
  d.dims[1] = 32;
  d.strides[0] = 256;
  d.box[0] = 32;
  d.box[1] = 16;
  return d;
}

#define REFUSED(d, code, text)                                            \
  do {                                                                    \
    cucore_tensor_map_desc d_ = (d);                                      \
    assert_status(cucore_tensor_map_check(CUCORE_TMAP_TILED, &d_), code); \
    assert_contains(cucore_last_error(), text);                           \
  } while (0)

static void tiled_rules_one_at_a_time(void **state) {
  (void)state;
  cucore_tensor_map_desc d = good();
  assert_ok(cucore_tensor_map_check(CUCORE_TMAP_TILED, &d));
  for (unsigned rank = 1; rank <= 5; rank++) { /* every rank */
    cucore_tensor_map_desc r = good();
    r.rank = rank;
    for (unsigned i = 0; i < 5; i++) {
      r.dims[i] = i == 0 ? 64 : 3;
      r.box[i] = i == 0 ? 32 : 2;
      if (i < 4) r.strides[i] = 256u << (2 * i);
    }
    assert_ok(cucore_tensor_map_check(CUCORE_TMAP_TILED, &r));
  }
  d = good();
  d.dtype = (cucore_tensor_dtype)16;
  REFUSED(d, CUCORE_INVALID_ARGUMENT, "dtype 16 is not a tensor map data type");
  d = good();
  d.rank = 0;
  REFUSED(d, CUCORE_INVALID_ARGUMENT, "rank 0 is outside 1..5");
  d = good();
  d.rank = 6;
  REFUSED(d, CUCORE_INVALID_ARGUMENT, "rank 6");
  d = good();
  d.interleave = CUCORE_TMAP_INTERLEAVE_16B;
  REFUSED(d, CUCORE_INVALID_ARGUMENT, "interleaved layouts need at least 3 dimensions");
  d = good();
  d.address = DBASE + 8;
  REFUSED(d, CUCORE_ARG_ALIGNMENT, "is not 16-byte aligned");
  d = good();
  d.address = 0;
  REFUSED(d, CUCORE_INVALID_ARGUMENT, "the address is 0");
  d = good();
  d.dims[1] = 0;
  REFUSED(d, CUCORE_INVALID_ARGUMENT, "dims[1] is 0 (expected 1 .. 2^32)");
  d = good();
  d.dims[0] = ((uint64_t)1 << 32) + 1;
  REFUSED(d, CUCORE_INVALID_ARGUMENT, "dims[0] is 4294967297");
  d = good();
  d.strides[0] = 264;
  REFUSED(d, CUCORE_ARG_ALIGNMENT, "strides[0] (dimension 1) is 264 bytes, not a multiple of 16");
  d = good();
  d.strides[0] = (uint64_t)1 << 40;
  REFUSED(d, CUCORE_INVALID_ARGUMENT, "below 2^40");
  d = good();
  d.strides[0] = 240;
  REFUSED(d, CUCORE_INVALID_ARGUMENT,
          "less than one row of dimension 0 (64 elements of FLOAT32 = 256 bytes)");
  d = good();
  d.box[1] = 257;
  REFUSED(d, CUCORE_INVALID_ARGUMENT, "box[1] is 257 (expected 1..256)");
  d = good();
  d.box[0] = 6; /* 24 bytes */
  REFUSED(d, CUCORE_INVALID_ARGUMENT,
          "box[0] is 6 elements of FLOAT32 = 24 bytes, not a multiple of 16");
  d = good();
  d.element_strides[1] = 9;
  REFUSED(d, CUCORE_INVALID_ARGUMENT, "element_strides[1] is 9 (expected 1..8");
  d = good();
  d.swizzle = CUCORE_TMAP_SWIZZLE_64B; /* box[0] = 128 bytes > 64 */
  REFUSED(d, CUCORE_INVALID_ARGUMENT, "more than the 64-byte span of swizzle 2");
  d = good();
  d.swizzle = CUCORE_TMAP_SWIZZLE_128B;
  assert_ok(cucore_tensor_map_check(CUCORE_TMAP_TILED, &d));
  d = good();
  d.swizzle = (cucore_tensor_swizzle)7;
  REFUSED(d, CUCORE_INVALID_ARGUMENT, "swizzle 7");
  d = good();
  d.l2_promotion = (cucore_tensor_l2)4;
  REFUSED(d, CUCORE_INVALID_ARGUMENT, "L2 promotion 4");
  d = good();
  d.dtype = CUCORE_TMAP_INT32;
  d.oob_fill = CUCORE_TMAP_OOB_NAN_REQUEST_ZERO_FMA;
  REFUSED(d, CUCORE_INVALID_ARGUMENT, "needs a floating-point type, not INT32");
  /* Interleave 32B: 32-byte address and strides, SWIZZLE_32B, rank >= 3. */
  d = good();
  d.rank = 3;
  d.dims[2] = 4;
  d.strides[1] = 256 * 32;
  d.box[2] = 1;
  d.interleave = CUCORE_TMAP_INTERLEAVE_32B;
  d.box[0] = 8;
  d.swizzle = CUCORE_TMAP_SWIZZLE_32B;
  assert_ok(cucore_tensor_map_check(CUCORE_TMAP_TILED, &d));
  d.address = DBASE + 16;
  REFUSED(d, CUCORE_ARG_ALIGNMENT, "not 32-byte aligned (the driver needs 32 with INTERLEAVE_32B)");
  d.address = DBASE;
  d.strides[0] = 272;
  REFUSED(d, CUCORE_ARG_ALIGNMENT, "not a multiple of 32");
  d.strides[0] = 256;
  d.swizzle = CUCORE_TMAP_SWIZZLE_NONE;
  REFUSED(d, CUCORE_INVALID_ARGUMENT, "INTERLEAVE_32B needs SWIZZLE_32B");
  /* The packed 4- and 6-bit types. */
  d = good();
  d.dtype = CUCORE_TMAP_16U4_ALIGN16B;
  d.dims[0] = 128;
  d.box[0] = 128;
  d.address = DBASE + 32;
  d.strides[0] = 256;
  assert_ok(cucore_tensor_map_check(CUCORE_TMAP_TILED, &d));
  d.dims[0] = 100;
  REFUSED(d, CUCORE_INVALID_ARGUMENT, "with 16U4_ALIGN16B it must be a multiple of 128");
  d.dims[0] = 128;
  d.box[0] = 64;
  REFUSED(d, CUCORE_INVALID_ARGUMENT, "box[0] is 64; with 16U4_ALIGN16B it must be 128");
  d.box[0] = 128;
  d.swizzle = CUCORE_TMAP_SWIZZLE_64B;
  REFUSED(d, CUCORE_INVALID_ARGUMENT, "more than the 64-byte span"); /* 128 bytes > 64 */
  d.swizzle = CUCORE_TMAP_SWIZZLE_128B_ATOM_64B;
  REFUSED(d, CUCORE_INVALID_ARGUMENT, "16U4_ALIGN16B takes swizzle NONE, 128B or 128B_ATOM_32B");
  d.swizzle = CUCORE_TMAP_SWIZZLE_NONE;
  d.address = DBASE + 16;
  REFUSED(d, CUCORE_ARG_ALIGNMENT, "for the 16-byte-aligned packed types");
  d = good();
  d.dtype = CUCORE_TMAP_16U4_ALIGN8B;
  d.dims[0] = 63;
  REFUSED(d, CUCORE_INVALID_ARGUMENT, "with 16U4_ALIGN8B it must be even");
  d = good();
  d.dtype = CUCORE_TMAP_16U6_ALIGN16B;
  d.dims[0] = 128;
  d.box[0] = 128;
  d.rank = 3;
  d.dims[2] = 2;
  d.strides[1] = 4096;
  d.box[2] = 1;
  d.address = DBASE;
  d.interleave = CUCORE_TMAP_INTERLEAVE_16B;
  REFUSED(d, CUCORE_INVALID_ARGUMENT, "16U6_ALIGN16B needs interleave NONE");
}

static void im2col_rules(void **state) {
  (void)state;
  cucore_tensor_map_desc d;
  memset(&d, 0, sizeof d);
  d.dtype = CUCORE_TMAP_FLOAT16;
  d.rank = 4; /* C, W, H, N */
  d.address = DBASE;
  d.dims[0] = 64;
  d.dims[1] = 16;
  d.dims[2] = 16;
  d.dims[3] = 2;
  d.strides[0] = 128;
  d.strides[1] = 128 * 16;
  d.strides[2] = 128 * 16 * 16;
  d.lower_corner[0] = d.lower_corner[1] = -1;
  d.upper_corner[0] = d.upper_corner[1] = -1;
  d.channels_per_pixel = 64;
  d.pixels_per_column = 256;
  assert_ok(cucore_tensor_map_check(CUCORE_TMAP_IM2COL, &d));
  cucore_tensor_map_desc e = d;
  e.rank = 2;
  assert_status(cucore_tensor_map_check(CUCORE_TMAP_IM2COL, &e), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "im2col maps have 3 to 5 dimensions");
  e = d;
  e.lower_corner[1] = -129;
  assert_status(cucore_tensor_map_check(CUCORE_TMAP_IM2COL, &e), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "lower_corner[1] is -129; rank 4 allows -128..127");
  e = d;
  e.rank = 5;
  e.dims[4] = 2;
  e.strides[3] = e.strides[2] * 2;
  e.lower_corner[2] = 0;
  e.upper_corner[0] = 16;
  assert_status(cucore_tensor_map_check(CUCORE_TMAP_IM2COL, &e), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "upper_corner[0] is 16; rank 5 allows -16..15");
  e = d;
  e.rank = 3;
  e.lower_corner[0] = -32768;
  e.upper_corner[0] = 32767;
  assert_ok(cucore_tensor_map_check(CUCORE_TMAP_IM2COL, &e));
  e = d;
  e.channels_per_pixel = 257;
  assert_status(cucore_tensor_map_check(CUCORE_TMAP_IM2COL, &e), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "channels_per_pixel is 257 (expected 1..256)");
  e = d;
  e.pixels_per_column = 1025;
  assert_status(cucore_tensor_map_check(CUCORE_TMAP_IM2COL, &e), CUCORE_INVALID_ARGUMENT);
  e = d;
  e.swizzle = CUCORE_TMAP_SWIZZLE_32B; /* 64 halves = 128 bytes > 32 */
  assert_status(cucore_tensor_map_check(CUCORE_TMAP_IM2COL, &e), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "channels_per_pixel 64 x FLOAT16");
  assert_status(cucore_tensor_map_check((cucore_tensor_map_kind)3, &d), CUCORE_INVALID_ARGUMENT);
}

/* Wide im2col maps: the W box, the mode, the swizzles they take; a new address checked as the
 * map's own would be. */
static void im2col_wide_rules_and_new_addresses(void **state) {
  (void)state;
  cucore_tensor_map_desc d;
  memset(&d, 0, sizeof d);
  d.dtype = CUCORE_TMAP_FLOAT16;
  d.rank = 3; /* C, W, N */
  d.address = DBASE;
  d.dims[0] = 64;
  d.dims[1] = 16;
  d.dims[2] = 2;
  d.strides[0] = 128;
  d.strides[1] = 128 * 16;
  d.lower_corner[0] = -1;
  d.upper_corner[0] = 1;
  d.channels_per_pixel = 64;
  d.pixels_per_column = 16;
  d.swizzle = CUCORE_TMAP_SWIZZLE_128B;
  assert_ok(cucore_tensor_map_check(CUCORE_TMAP_IM2COL_WIDE, &d));
  cucore_tensor_map_desc e = d;
  e.lower_corner[0] = -40000;
  assert_status(cucore_tensor_map_check(CUCORE_TMAP_IM2COL_WIDE, &e), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "lower_corner[0] (the W offset) is -40000");
  e = d;
  e.lower_corner[0] = 20;
  e.upper_corner[0] = 0;
  assert_status(cucore_tensor_map_check(CUCORE_TMAP_IM2COL_WIDE, &e), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "the box along W is empty");
  e = d;
  e.wide_mode = 2;
  assert_status(cucore_tensor_map_check(CUCORE_TMAP_IM2COL_WIDE, &e), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "wide_mode 2 is not W (0) or W128 (1)");
  e = d;
  e.swizzle = CUCORE_TMAP_SWIZZLE_NONE;
  assert_status(cucore_tensor_map_check(CUCORE_TMAP_IM2COL_WIDE, &e), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "take swizzle 64B, 128B or 128B_ATOM_32B");
  e = d;
  e.swizzle = CUCORE_TMAP_SWIZZLE_64B; /* 128 bytes of channels > 64 */
  assert_status(cucore_tensor_map_check(CUCORE_TMAP_IM2COL_WIDE, &e), CUCORE_INVALID_ARGUMENT);
  e = d;
  e.wide_mode = 1;
  e.pixels_per_column = 0; /* ignored in W128 */
  assert_ok(cucore_tensor_map_check(CUCORE_TMAP_IM2COL_WIDE, &e));
  e.rank = 2;
  assert_status(cucore_tensor_map_check(CUCORE_TMAP_IM2COL_WIDE, &e), CUCORE_INVALID_ARGUMENT);
  /* A new address: checked before anything (no driver needed for the refusals). */
  cucore_tensor_map map;
  memset(&map, 0, sizeof map);
  assert_status(cucore_tensor_map_replace_address(&map, CUCORE_TMAP_IM2COL_WIDE, &d, DBASE + 8),
                CUCORE_ARG_ALIGNMENT);
  assert_contains(cucore_last_error(), "not 16-byte aligned");
  assert_status(cucore_tensor_map_replace_address(NULL, CUCORE_TMAP_TILED, &d, DBASE),
                CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_tensor_map_replace_address(&map, CUCORE_TMAP_IM2COL_WIDE, NULL, DBASE),
                CUCORE_INVALID_ARGUMENT);
}

static void the_extent_must_fit_its_allocation(void **state) {
  (void)state;
  cc_mem_rec r;
  memset(&r, 0, sizeof r);
  r.base = DBASE;
  r.size = 64 * 32 * 4;
  r.kind = CUCORE_MEM_DEVICE;
  assert_int_equal(cc_reg_insert(&cc_mem_registry, &r, 0), CC_REG_OK);
  cucore_tensor_map_desc d = good();
  uint64_t bytes = 0;
  assert_true(cc_tmap_extent(&d, &bytes));
  assert_int_equal(bytes, 31 * 256 + 256);
  assert_ok(cucore_tensor_map_check(CUCORE_TMAP_TILED, &d));
  d.dims[1] = 33;
  assert_status(cucore_tensor_map_check(CUCORE_TMAP_TILED, &d), CUCORE_OUT_OF_BOUNDS);
  assert_contains(cucore_last_error(),
                  "the tensor runs past the end of its allocation: 8448 bytes");
  d = good();
  d.address = DBASE + 4096; /* half the rows fit */
  assert_status(cucore_tensor_map_check(CUCORE_TMAP_TILED, &d), CUCORE_OUT_OF_BOUNDS);
  d = good();
  d.dtype = CUCORE_TMAP_16U4_ALIGN8B; /* 64 four-bit values: 32 bytes per row */
  assert_true(cc_tmap_extent(&d, &bytes));
  assert_int_equal(bytes, 31 * 256 + 32);
  cucore_tensor_map m;
  assert_int_equal((uintptr_t)&m % 64, 0);
  assert_int_equal(sizeof m, 128);
  assert_status(cucore_tensor_map_encode_tiled(NULL, &m), CUCORE_INVALID_ARGUMENT);
  unsigned char raw[256];
  cucore_tensor_map *odd = (cucore_tensor_map *)(void *)(raw + ((64 - (uintptr_t)raw % 64) % 64) +
                                                         16);
  d = good();
  assert_status(cucore_tensor_map_encode_tiled(&d, odd), CUCORE_ARG_ALIGNMENT);
  (void)cc_reg_take(&cc_mem_registry, DBASE, NULL, NULL, 1, NULL);
}

/* ---- the argument setter and strict pointers (kernels compiled offline) -------------------- */

static cucore_object *obj;

static const char *src =
    "struct alignas(64) TMap { unsigned long long v[16]; };\n"
    "struct __align__(16) B128 { char b[128]; };\n"
    "extern \"C\" __global__ void tma(const __grid_constant__ TMap m, int *out) {\n"
    "  out[0] = (int)m.v[0]; }\n"
    "extern \"C\" __global__ void b16(B128 b, int *out) { out[0] = b.b[0]; }\n"
    "extern \"C\" __global__ void small(int x, float *p, unsigned long long q) {}\n";

static int setup(void **state) {
  (void)state;
  cc_handle_init(&dev0, CC_KIND_DEVICE);
  dev0.ordinal = 0;
  dev0.ctx = (CUcontext)(uintptr_t)0x1000;
  cucore_options *o = NULL;
  cucore_program *p = NULL;
  if (cucore_options_create(&o) || cucore_options_set_string(o, CUCORE_OPT_ARCH, "sm_90") ||
      cucore_program_create(CUCORE_CODE_CUDA_CPP, src, 0, "tmap.cu", o, &p) ||
      cucore_program_compile(p, CUCORE_CODE_CUBIN, &obj)) {
    fprintf(stderr, "setup: %s\n", cucore_last_error());
    return -1;
  }
  cucore_program_destroy(p);
  cucore_options_destroy(o);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  return cucore_object_destroy(obj);
}

static void tensor_maps_bind_to_64_aligned_128_byte_parameters(void **state) {
  (void)state;
  cucore_kernel *k = NULL, *k16 = NULL;
  assert_ok(cucore_object_get_kernel(obj, "tma", &k));
  assert_ok(cucore_object_get_kernel(obj, "b16", &k16));
  cucore_args *a = NULL, *a16 = NULL;
  assert_ok(cucore_args_create(k, &a));
  assert_ok(cucore_args_create(k16, &a16));
  cucore_tensor_map m;
  for (int i = 0; i < 16; i++) m.opaque[i] = 0x0101010101010101ull * (uint64_t)i;
  assert_ok(cucore_args_set_tensor_map(a, 0, &m));
  assert_status(cucore_args_set_tensor_map(a, 1, &m), CUCORE_ARG_SIZE); /* an int * */
  assert_contains(cucore_last_error(), "a tensor map (128 bytes, 64-aligned)");
  assert_ok(cucore_args_reset(a));
  assert_ok(cucore_args_push_tensor_map(a, &m));
  assert_ok(cucore_args_push_ptr(a, 0x1000));
  assert_ok(cucore_args_check(a));
  void *buf = NULL;
  size_t bytes = 0;
  assert_ok(cucore_args_get_native(a, NULL, &buf, &bytes));
  cucore_param_info pi;
  assert_ok(cucore_kernel_get_param(k, 0, &pi));
  assert_int_equal(pi.size, 128);
  assert_int_equal(pi.align, 64);
  assert_memory_equal((char *)buf + pi.offset, &m, sizeof m); /* copied by value */
  assert_status(cucore_args_set_tensor_map(a16, 0, &m), CUCORE_ARG_ALIGNMENT);
  assert_contains(cucore_last_error(), "alignment 16");
  assert_status(cucore_args_set_tensor_map(a, 0, NULL), CUCORE_ARG_NULL);
  cucore_args_destroy(a);
  cucore_args_destroy(a16);
  cucore_kernel_destroy(k);
  cucore_kernel_destroy(k16);
}

static void strict_pointer_checks_of_an_argument_list(void **state) {
  (void)state;
  cucore_kernel *k = NULL;
  assert_ok(cucore_object_get_kernel(obj, "small", &k));
  cucore_args *a = NULL;
  assert_ok(cucore_args_create(k, &a));
  cc_mem_rec r;
  memset(&r, 0, sizeof r);
  r.base = DBASE;
  r.size = 4096;
  r.kind = CUCORE_MEM_DEVICE;
  r.ctx = dev0.ctx;
  assert_int_equal(cc_reg_insert(&cc_mem_registry, &r, 0), CC_REG_OK);
  /* Off (the default): any value binds. */
  assert_ok(cucore_args_set_ptr(a, 1, DBASE + 0x100000));
  assert_ok(cucore_args_check_pointers(a, &dev0));
  assert_ok(cucore_args_set_ptr(a, 1, DBASE + 64)); /* recorded, same device */
  assert_ok(cucore_args_set_ptr(a, 1, 0));          /* NULL */
  assert_ok(cucore_args_set_u64(a, 2, 12345));      /* not a pointer parameter */
  (void)cc_reg_take(&cc_mem_registry, DBASE, NULL, NULL, 1, NULL);
  assert_status(cucore_args_set_ptr(a, 1, DBASE + 64), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "argument 1 of `small`");
  assert_contains(cucore_last_error(), "was freed");
  /* The failure is kept in the list like any other. */
  assert_status(cucore_args_check(a), CUCORE_INVALID_ARGUMENT);
  assert_ok(cucore_args_reset(a));
  assert_ok(cucore_args_check_pointers(a, NULL)); /* off again */
  assert_ok(cucore_args_set_ptr(a, 1, DBASE + 64));
  /* The process-wide switch works without a device on the list. */
  assert_ok(cucore_mem_set_checks(CUCORE_MEM_CHECK_KERNEL_POINTERS));
  assert_status(cucore_args_set_ptr(a, 1, DBASE + 64), CUCORE_INVALID_ARGUMENT);
  assert_ok(cucore_mem_set_checks(0));
  cucore_args_destroy(a);
  cucore_kernel_destroy(k);
}

int main(void) {
  /* White-box checks over made-up devices and records: the driver is kept out (a real one
   * would be handed the made-up contexts), so a machine with a GPU runs the same test; the
   * gpu_memory_* tests cover the device. */
  setenv("CUCORE_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(tiled_rules_one_at_a_time),
      cmocka_unit_test(im2col_rules),
      cmocka_unit_test(im2col_wide_rules_and_new_addresses),
      cmocka_unit_test(the_extent_must_fit_its_allocation),
      cmocka_unit_test(tensor_maps_bind_to_64_aligned_128_byte_parameters),
      cmocka_unit_test(strict_pointer_checks_of_an_argument_list),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
