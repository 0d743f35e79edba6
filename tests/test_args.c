/* test_args.c -- every argument check that needs no GPU, against offline layouts: count,
 * size, kind, alignment, NULL, unset, sticky first error, copies at bind time, the _Generic
 * convenience, both native forms. */
#include "support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binary/ptx.h" /* cc_param_base: where parameters start in constant bank 0 */

static cucore_object *obj;

static const char *src =
    "struct __align__(16) V16 { float x, y, z, w; };\n"
    "struct __align__(64) D64 { char tag; int data[30]; };\n"
    "struct Big { char bytes[5000]; };\n"
    "struct Huge { char bytes[32000]; };\n"
    "extern \"C\" __global__ void scalars(char c, short s, int i, long long l, float f, double d,\n"
    "                                    unsigned char uc, unsigned short us, unsigned u,\n"
    "                                    unsigned long long ul, float *p) {}\n"
    "extern \"C\" __global__ void padded(char c, V16 v, int tail) {}\n"
    "extern \"C\" __global__ void aligned64(int a, D64 d) {}\n"
    "extern \"C\" __global__ void none() {}\n"
    "extern \"C\" __global__ void big(Big b, int after) {}\n"
    "extern \"C\" __global__ void huge(Huge h) {}\n"
    "extern \"C\" __global__ void gc(const __grid_constant__ V16 v, int *out) { out[0] = (int)v.x; "
    "}\n"
    "extern \"C\" __global__ void many(int a0, int a1, int a2, int a3, int a4, int a5, int a6,\n"
    "  int a7, int a8, int a9, int a10, int a11, int a12, int a13, int a14, int a15, int a16,\n"
    "  int a17, int a18, int a19, int a20, int a21, int a22) {}\n";

static int setup(void **state) {
  (void)state;
  cucore_options *o = NULL;
  cucore_program *p = NULL;
  if (cucore_options_create(&o) || cucore_options_set_string(o, CUCORE_OPT_ARCH, "sm_90") ||
      cucore_program_create(CUCORE_CODE_CUDA_CPP, src, 0, "args.cu", o, &p) ||
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

static cucore_kernel *kernel(const char *name) {
  cucore_kernel *k = NULL;
  if (cucore_object_get_kernel(obj, name, &k) != CUCORE_OK)
    fail_msg("%s: %s", name, cucore_last_error());
  return k;
}

static void every_scalar_width_by_static_type(void **state) {
  (void)state;
  cucore_kernel *k = kernel("scalars");
  cucore_args *a = NULL;
  assert_ok(cucore_args_create(k, &a));
  char c = 1;
  short s = 2;
  int i = 3;
  long long l = 4;
  float f = 5.5f;
  double d = 6.25;
  unsigned char uc = 7;
  unsigned short us = 8;
  unsigned u = 9;
  unsigned long long ul = 10;
  cucore_devptr p = 0x1000;
  assert_ok(CUCORE_ARGS(a, c, s, i, l, f, d, uc, us, u, ul, p));
  /* The packed buffer holds each value at the kernel's offset. */
  void **params = NULL;
  void *buf = NULL;
  size_t bytes = 0;
  assert_ok(cucore_args_get_native(a, &params, &buf, &bytes));
  size_t total = 0;
  assert_ok(cucore_kernel_get_param_bytes(k, &total));
  assert_int_equal(bytes, total);
  cucore_param_info pi;
  assert_ok(cucore_kernel_get_param(k, 5, &pi));
  double got_d;
  memcpy(&got_d, (char *)buf + pi.offset, 8);
  assert_true(got_d == d);
  assert_ptr_equal(params[5], (char *)buf + pi.offset);
  assert_ok(cucore_kernel_get_param(k, 10, &pi));
  cucore_devptr got_p;
  memcpy(&got_p, (char *)buf + pi.offset, 8);
  assert_int_equal(got_p, 0x1000);
  /* Kinds the PTX declared: an int for the float, a float for the int, a double for the float. */
  assert_status(CUCORE_ARGS(a, c, s, 3.0f, l, f, d, uc, us, u, ul, p), CUCORE_ARG_TYPE);
  assert_contains(cucore_last_error(), "argument 2 of `scalars` is an integer");
  assert_status(CUCORE_ARGS(a, c, s, i, l, 5, d, uc, us, u, ul, p), CUCORE_ARG_TYPE);
  assert_contains(cucore_last_error(), "floating-point");
  assert_status(CUCORE_ARGS(a, c, s, i, l, 5.5, d, uc, us, u, ul, p), CUCORE_ARG_SIZE);
  assert_contains(cucore_last_error(), "a double given for a float?");
  /* Half and bf16 patterns fit 2-byte integer slots by size only where the kind allows. */
  cucore_args_reset(a);
  assert_ok(cucore_args_set_i16(a, 1, -2));
  assert_status(cucore_args_set_f16(a, 1, 0x3c00), CUCORE_ARG_TYPE);
  cucore_args_destroy(a);
  cucore_kernel_destroy(k);
}

/* cucore_args_set_values (what CUCORE_ARGS calls) packs the bytes the setters pack, names the
 * same mistakes, and refuses a list it cannot read. */
static void a_list_at_once_packs_as_the_setters(void **state) {
  (void)state;
  cucore_kernel *k = kernel("scalars");
  cucore_args *one = NULL, *all = NULL;
  assert_ok(cucore_args_create(k, &one));
  assert_ok(cucore_args_create(k, &all));
  int x = 0;
  assert_ok(cucore_args_push_i8(one, -1));
  assert_ok(cucore_args_push_i16(one, -2));
  assert_ok(cucore_args_push_i32(one, -3));
  assert_ok(cucore_args_push_i64(one, -4));
  assert_ok(cucore_args_push_f32(one, 5.5f));
  assert_ok(cucore_args_push_f64(one, 6.25));
  assert_ok(cucore_args_push_u8(one, 7));
  assert_ok(cucore_args_push_u16(one, 8));
  assert_ok(cucore_args_push_u32(one, 9));
  assert_ok(cucore_args_push_u64(one, 10));
  assert_ok(cucore_args_push_host_ptr(one, &x));
  cucore_value v[11];
  memset(v, 0xab, sizeof v); /* every byte not written by a member must not matter */
  v[0].type = CUCORE_VALUE_I8, v[0].v.i8 = -1;
  v[1].type = CUCORE_VALUE_I16, v[1].v.i16 = -2;
  v[2].type = CUCORE_VALUE_I32, v[2].v.i32 = -3;
  v[3].type = CUCORE_VALUE_I64, v[3].v.i64 = -4;
  v[4].type = CUCORE_VALUE_F32, v[4].v.f32 = 5.5f;
  v[5].type = CUCORE_VALUE_F64, v[5].v.f64 = 6.25;
  v[6].type = CUCORE_VALUE_U8, v[6].v.u8 = 7;
  v[7].type = CUCORE_VALUE_U16, v[7].v.u16 = 8;
  v[8].type = CUCORE_VALUE_U32, v[8].v.u32 = 9;
  v[9].type = CUCORE_VALUE_U64, v[9].v.u64 = 10;
  v[10].type = CUCORE_VALUE_HOST_PTR, v[10].v.p = &x;
  assert_ok(cucore_args_set_values(all, v, 11));
  void *b1 = NULL, *b2 = NULL;
  size_t n1 = 0, n2 = 0;
  assert_ok(cucore_args_get_native(one, NULL, &b1, &n1));
  assert_ok(cucore_args_get_native(all, NULL, &b2, &n2));
  assert_int_equal(n1, n2);
  assert_memory_equal(b1, b2, n1);
  /* A short list, a long one, a wrong size: the setters' messages. */
  assert_status(cucore_args_set_values(all, v, 10), CUCORE_ARG_COUNT);
  assert_contains(cucore_last_error(), "takes 11 parameters, 10 were given");
  cucore_value more[12];
  memcpy(more, v, sizeof v);
  more[11] = v[2];
  assert_status(cucore_args_set_values(all, more, 12), CUCORE_ARG_COUNT);
  assert_contains(cucore_last_error(), "a 12th argument (an int32) was given");
  v[2].type = CUCORE_VALUE_I64;
  assert_status(cucore_args_set_values(all, v, 11), CUCORE_ARG_SIZE);
  assert_contains(cucore_last_error(), "argument 2 of `scalars` is 4 bytes");
  /* The list itself. */
  v[2].type = (cucore_value_type)99;
  assert_status(cucore_args_set_values(all, v, 11), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "values[2].type is 99");
  assert_status(cucore_args_set_values(all, NULL, 3), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "values NULL");
  assert_status(cucore_args_set_values(all, v, -1), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_args_set_values(NULL, v, 1), CUCORE_INVALID_ARGUMENT);
  /* An empty list: a reset and the count check. */
  assert_status(cucore_args_set_values(all, NULL, 0), CUCORE_ARG_COUNT);
  assert_contains(cucore_last_error(), "takes 11 parameters, 0 were given");
  cucore_args_destroy(one);
  cucore_args_destroy(all);
  cucore_kernel_destroy(k);
}

static void counts_are_checked_both_ways(void **state) {
  (void)state;
  cucore_kernel *k = kernel("padded");
  cucore_args *a = NULL;
  assert_ok(cucore_args_create(k, &a));
  assert_ok(cucore_args_push_i8(a, 1));
  assert_status(cucore_args_check(a), CUCORE_ARG_COUNT);
  assert_contains(cucore_last_error(), "takes 3 parameters, 1 was given");
  assert_contains(cucore_last_error(), "argument 1, 16 bytes at offset 16");
  /* Index 0 and 2 set, 1 not: a hole, not a short list. */
  assert_ok(cucore_args_reset(a));
  assert_ok(cucore_args_set_i8(a, 0, 1));
  assert_ok(cucore_args_set_i32(a, 2, 1));
  assert_status(cucore_args_check(a), CUCORE_ARG_UNSET);
  assert_contains(cucore_last_error(), "argument 1");
  /* Past the end, by push and by index. */
  float v[4] __attribute__((aligned(16))) = {1, 2, 3, 4};
  assert_ok(cucore_args_set_bytes(a, 1, v, sizeof v, 16));
  assert_ok(cucore_args_check(a));
  assert_status(cucore_args_set_i32(a, 3, 0), CUCORE_ARG_COUNT);
  assert_status(cucore_args_set_i32(a, -1, 0), CUCORE_ARG_COUNT);
  /* The first error sticks until reset, even after later good calls. */
  assert_ok(cucore_args_set_i32(a, 2, 5));
  assert_status(cucore_args_check(a), CUCORE_ARG_COUNT);
  assert_ok(cucore_args_reset(a));
  assert_status(CUCORE_ARGS(a, (char)1, 2, 3, 4), CUCORE_ARG_SIZE); /* int for the struct */
  cucore_args_destroy(a);
  cucore_kernel_destroy(k);
  /* 0 parameters: an empty list is complete; anything pushed is one too many. */
  k = kernel("none");
  assert_ok(cucore_args_create(k, &a));
  assert_ok(cucore_args_check(a));
  assert_status(cucore_args_push_i32(a, 1), CUCORE_ARG_COUNT);
  assert_contains(cucore_last_error(), "takes 0 parameters");
  cucore_args_destroy(a);
  cucore_kernel_destroy(k);
  /* More than 20 parameters. */
  k = kernel("many");
  assert_ok(cucore_args_create(k, &a));
  for (int i = 0; i < 23; i++) assert_ok(cucore_args_push_i32(a, i));
  assert_ok(cucore_args_check(a));
  assert_status(cucore_args_push_i32(a, 23), CUCORE_ARG_COUNT);
  assert_contains(cucore_last_error(), "24th");
  cucore_args_destroy(a);
  cucore_kernel_destroy(k);
}

typedef struct {
  _Alignas(64) char tag;
  int data[30];
} d64;

static void structs_sizes_and_alignment(void **state) {
  (void)state;
  cucore_kernel *k = kernel("aligned64");
  cucore_param_info pi;
  assert_ok(cucore_kernel_get_param(k, 1, &pi));
  assert_int_equal(pi.size, sizeof(d64));
  /* Over-aligned parameters are aligned in constant bank 0 (base 0x210 on sm_90), not at
   * offsets that are multiples of 64: the PTX gives the alignment. */
  assert_int_equal(pi.align, 64);
  size_t total = 0;
  assert_ok(cucore_kernel_get_param_bytes(k, &total));
  assert_int_equal((cc_param_base(90, (uint32_t)total) + pi.offset) % 64, 0);
  cucore_args *a = NULL;
  assert_ok(cucore_args_create(k, &a));
  d64 val;
  memset(&val, 0, sizeof val);
  val.tag = 9;
  assert_ok(cucore_args_set_i32(a, 0, 1));
  assert_ok(cucore_args_set_bytes(a, 1, &val, sizeof val, _Alignof(d64)));
  val.tag = 10; /* copied at bind time */
  void *buf = NULL;
  assert_ok(cucore_args_get_native(a, NULL, &buf, NULL));
  assert_int_equal(((char *)buf)[pi.offset], 9);
  /* Wrong size, NULL data, absurd alignment. */
  assert_ok(cucore_args_reset(a));
  assert_status(cucore_args_set_bytes(a, 1, &val, sizeof val - 4, 64), CUCORE_ARG_SIZE);
  assert_contains(cucore_last_error(), "128 bytes");
  assert_ok(cucore_args_reset(a));
  assert_status(cucore_args_set_bytes(a, 1, NULL, sizeof val, 64), CUCORE_ARG_NULL);
  assert_ok(cucore_args_reset(a));
  assert_status(cucore_args_set_bytes(a, 1, &val, sizeof val, 48), CUCORE_ARG_ALIGNMENT);
  assert_contains(cucore_last_error(), "power of two");
  cucore_args_destroy(a);
  cucore_kernel_destroy(k);
  /* A 16-byte-aligned struct where the kernel put it at offset 16; a 64-byte one is refused. */
  k = kernel("padded");
  assert_ok(cucore_kernel_get_param(k, 1, &pi));
  assert_int_equal(pi.offset, 16);
  assert_ok(cucore_args_create(k, &a));
  char raw[16] = {0};
  assert_status(cucore_args_set_bytes(a, 1, raw, 16, 64), CUCORE_ARG_ALIGNMENT);
  assert_contains(cucore_last_error(), "offset 16");
  cucore_args_destroy(a);
  cucore_kernel_destroy(k);
}

static void large_by_value_parameters(void **state) {
  (void)state;
  /* > 4 KB (the cubin's parameter records change format past ~4.3 KB) and ~32 KB. */
  cucore_kernel *k = kernel("big");
  cucore_param_info pi;
  assert_ok(cucore_kernel_get_param(k, 0, &pi));
  assert_int_equal(pi.size, 5000);
  assert_ok(cucore_kernel_get_param(k, 1, &pi));
  assert_int_equal(pi.size, 4);
  assert_true(pi.offset >= 5000);
  cucore_args *a = NULL;
  assert_ok(cucore_args_create(k, &a));
  char *blob = calloc(1, 32000);
  assert_ok(cucore_args_set_bytes(a, 0, blob, 5000, 1));
  assert_ok(cucore_args_set_i32(a, 1, 7));
  assert_ok(cucore_args_check(a));
  cucore_args_destroy(a);
  cucore_kernel_destroy(k);
  k = kernel("huge");
  assert_ok(cucore_kernel_get_param(k, 0, &pi));
  assert_int_equal(pi.size, 32000);
  assert_ok(cucore_args_create(k, &a));
  assert_ok(cucore_args_push_bytes(a, blob, 32000, 1));
  assert_ok(cucore_args_check(a));
  cucore_args_destroy(a);
  assert_ok(cucore_args_create(k, &a));
  assert_status(cucore_args_push_bytes(a, blob, 40000, 1), CUCORE_ARG_SIZE);
  assert_contains(cucore_last_error(), "32764");
  cucore_args_destroy(a);
  cucore_kernel_destroy(k);
  free(blob);
  /* __grid_constant__ parameters bind like any by-value one. */
  k = kernel("gc");
  assert_ok(cucore_args_create(k, &a));
  float v[4] __attribute__((aligned(16))) = {1, 2, 3, 4};
  assert_ok(cucore_args_push_bytes(a, v, 16, 16));
  assert_ok(cucore_args_push_u64(a, 0x2000));
  assert_ok(cucore_args_check(a));
  cucore_args_destroy(a);
  cucore_kernel_destroy(k);
}

/* A cubin read from a file records no types; a declared signature supplies them. */
static void declared_signatures(void **state) {
  (void)state;
  const void *code;
  size_t size;
  assert_ok(cucore_object_get_code(obj, NULL, &code, &size));
  cucore_object *bare = NULL; /* the cubin alone, without the PTX cucore kept */
  assert_ok(cucore_object_from_memory(code, size, CUCORE_CODE_CUBIN, "bare.cubin", &bare));
  cucore_kernel *k = NULL;
  assert_ok(cucore_object_get_kernel(bare, "padded", &k));
  cucore_param_info pi;
  assert_ok(cucore_kernel_get_param(k, 2, &pi));
  assert_int_equal(pi.kind, CUCORE_PARAM_UNKNOWN);
  cucore_args *a = NULL;
  assert_ok(cucore_args_create(k, &a));
  assert_ok(cucore_args_set_f32(a, 2, 1.0f)); /* unknown type: only the size is checked */
  cucore_args_destroy(a);
  assert_status(cucore_kernel_declare_signature(k, "i8, bytes"), CUCORE_ARG_COUNT);
  assert_contains(cucore_last_error(), "takes 3");
  assert_status(cucore_kernel_declare_signature(k, "i8, bytes, f64"), CUCORE_ARG_SIZE);
  assert_contains(cucore_last_error(), "parameter 2");
  assert_status(cucore_kernel_declare_signature(k, "i8, bytes, float"), CUCORE_PARSE_ERROR);
  assert_contains(cucore_last_error(), "`float`");
  assert_ok(cucore_kernel_get_param(k, 2, &pi));
  assert_int_equal(pi.kind, CUCORE_PARAM_UNKNOWN); /* failures change nothing */
  assert_ok(cucore_kernel_declare_signature(k, " i8 ,bytes, i32 "));
  assert_ok(cucore_args_create(k, &a));
  assert_status(cucore_args_set_f32(a, 2, 1.0f), CUCORE_ARG_TYPE);
  assert_ok(cucore_args_set_i32(a, 2, 1));
  cucore_args_destroy(a);
  cucore_kernel_destroy(k);
  assert_ok(cucore_object_get_kernel(bare, "none", &k));
  assert_ok(cucore_kernel_declare_signature(k, ""));
  cucore_kernel_destroy(k);
  cucore_object_destroy(bare);
}

static void a_list_belongs_to_its_kernel(void **state) {
  (void)state;
  cucore_kernel *k1 = kernel("none"), *k2 = kernel("padded");
  cucore_args *a = NULL;
  assert_ok(cucore_args_create(k1, &a));
  cucore_launch_config cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.grid[0] = cfg.block[0] = 1;
  /* Launching k2 with k1's list is refused before anything else. */
  assert_status(cucore_launch(k2, &cfg, a), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "made for kernel `none`");
  cucore_args_destroy(a);
  cucore_kernel_destroy(k1);
  cucore_kernel_destroy(k2);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_scalar_width_by_static_type),
      cmocka_unit_test(a_list_at_once_packs_as_the_setters),
      cmocka_unit_test(counts_are_checked_both_ways),
      cmocka_unit_test(structs_sizes_and_alignment),
      cmocka_unit_test(large_by_value_parameters),
      cmocka_unit_test(declared_signatures),
      cmocka_unit_test(a_list_belongs_to_its_kernel),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
