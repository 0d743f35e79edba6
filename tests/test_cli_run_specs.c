/* test_cli_run_specs.c -- the parsers of `cucore run` tested directly (tools/args_*.c, npy.c
 * and run_result.c through the cucore_cli_parts library): element values (every type's range,
 * float parsing with nan/inf/hex, shortest round-trip printing), struct layout by C rules
 * (sizes, alignment, padding, nesting, arrays, alignas, pointers patched in), bytes:HEX and
 * bytes:@FILE, buffers, null, hostile specs (exit 2 with the spec quoted, never a crash),
 * .npy files read and written byte for byte against the references in tests/data/npy
 * (made by make_refs.py, which spells numpy's header out by hand), dtype/shape/endianness/
 * order mismatches, and --expect comparisons. No GPU needed. */
#include "cmd_run.h"

#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#define NPY_DIR CUCORE_TEST_DATA_DIR "/npy/"

/* ---- stderr captured, so messages can be checked -------------------------------------------- */

static char captured[8192];
static int saved_fd = -1;
static FILE *cap_file;

static void capture_begin(void) {
  fflush(stderr);
  cap_file = tmpfile();
  assert_non_null(cap_file);
  saved_fd = dup(2);
  dup2(fileno(cap_file), 2);
}

static const char *capture_end(void) {
  fflush(stderr);
  dup2(saved_fd, 2);
  close(saved_fd);
  rewind(cap_file);
  size_t n = fread(captured, 1, sizeof captured - 1, cap_file);
  captured[n] = '\0';
  fclose(cap_file);
  return captured;
}

static void assert_has(const char *text, const char *needle) {
  if (!strstr(text, needle)) fail_msg("expected `%s` in: %s", needle, text);
}

/* One --arg through the parser; the message (if any) in `msg`. */
typedef struct parsed {
  args_set o;
  args_arg a;
  int rc;
  const char *msg;
} parsed;

static void parse(parsed *p, const char *spec) {
  memset(p, 0, sizeof *p);
  capture_begin();
  p->rc = args_set_parse_arg(&p->o, spec, 0, &p->a);
  p->msg = capture_end();
  p->o.args = &p->a;
}

static void parsed_free(parsed *p) {
  args_item_free(&p->a.v);
  p->o.args = NULL;
  p->o.nargs = 0;
  args_set_free(&p->o);
}

/* A spec that must be refused as a usage error (2), naming the spec. */
static void refused(const char *spec, const char *why) {
  parsed p;
  parse(&p, spec);
  if (p.rc != CLI_EXIT_USAGE) fail_msg("spec `%s`: rc %d, expected 2 (%s)", spec, p.rc, p.msg);
  assert_has(p.msg, spec);
  if (why) assert_has(p.msg, why);
  parsed_free(&p);
}

/* ---- values ----------------------------------------------------------------------------- */

static void ints_exact_and_ranged(void **state) {
  (void)state;
  unsigned char b[8];
  struct {
    args_elem t;
    const char *lo, *hi, *below, *above;
  } r[] = {
      {ARGS_I8, "-128", "127", "-129", "128"},
      {ARGS_U8, "0", "255", "-1", "256"},
      {ARGS_I16, "-32768", "32767", "-32769", "32768"},
      {ARGS_U16, "0", "65535", "-1", "65536"},
      {ARGS_I32, "-2147483648", "2147483647", "-2147483649", "2147483648"},
      {ARGS_U32, "0", "4294967295", "-1", "4294967296"},
      {ARGS_I64, "-9223372036854775808", "9223372036854775807", "-9223372036854775809",
       "9223372036854775808"},
      {ARGS_U64, "0", "18446744073709551615", "-1", "18446744073709551616"},
  };
  for (size_t i = 0; i < sizeof r / sizeof r[0]; i++) {
    char back[64];
    assert_int_equal(args_value_parse(r[i].t, r[i].lo, b), 0);
    assert_string_equal(args_value_format(b, r[i].t, 0, back, sizeof back), r[i].lo);
    assert_int_equal(args_value_parse(r[i].t, r[i].hi, b), 0);
    assert_string_equal(args_value_format(b, r[i].t, 0, back, sizeof back), r[i].hi);
    assert_int_equal(args_value_parse(r[i].t, r[i].below, b), -2);
    assert_int_equal(args_value_parse(r[i].t, r[i].above, b), -2);
  }
  /* Hex, +, garbage. */
  assert_int_equal(args_value_parse(ARGS_U32, "0xffffffff", b), 0);
  assert_int_equal(args_value_get_u64(b, ARGS_U32, 0), 0xffffffffu);
  assert_int_equal(args_value_parse(ARGS_I32, "+7", b), 0);
  assert_int_equal(args_value_get_i64(b, ARGS_I32, 0), 7);
  assert_int_equal(args_value_parse(ARGS_I32, "-0x10", b), 0);
  assert_int_equal(args_value_get_i64(b, ARGS_I32, 0), -16);
  const char *junk[] = {"", " 1", "1 ", "abc", "1.5", "1e3", "0x", "--1", "nan", "inf", "12a"};
  for (size_t i = 0; i < sizeof junk / sizeof junk[0]; i++)
    if (args_value_parse(ARGS_I32, junk[i], b) != -1) fail_msg("i32 `%s` was accepted", junk[i]);
  assert_int_equal(args_value_parse(ARGS_U64, "99999999999999999999999", b), -2);
  assert_int_equal(args_value_parse(ARGS_U8, "-0", b), 0); /* -0 is 0 */
}

static void floats_parse_and_round_trip(void **state) {
  (void)state;
  unsigned char b[8];
  char out[64];
  /* f32 rounding: 0.1 prints as 0.1 and reads back to the same bits. */
  assert_int_equal(args_value_parse(ARGS_F32, "0.1", b), 0);
  float f;
  memcpy(&f, b, 4);
  assert_true(f == 0.1f);
  assert_string_equal(args_value_format(b, ARGS_F32, 0, out, sizeof out), "0.1");
  /* f64: the shortest text that reads back. */
  assert_int_equal(args_value_parse(ARGS_F64, "0.1", b), 0);
  assert_string_equal(args_value_format(b, ARGS_F64, 0, out, sizeof out), "0.1");
  assert_int_equal(args_value_parse(ARGS_F64, "549755289600", b), 0);
  assert_string_equal(args_value_format(b, ARGS_F64, 0, out, sizeof out), "549755289600");
  assert_int_equal(args_value_parse(ARGS_F64, "2.2250738585072014e-308", b), 0);
  double d;
  memcpy(&d, b, 8);
  assert_true(d == 2.2250738585072014e-308);
  args_value_format(b, ARGS_F64, 0, out, sizeof out);
  assert_true(strtod(out, NULL) == d);
  /* Hex floats, nan, inf. */
  assert_int_equal(args_value_parse(ARGS_F64, "0x1.8p1", b), 0);
  memcpy(&d, b, 8);
  assert_true(d == 3.0);
  assert_int_equal(args_value_parse(ARGS_F32, "-0x1p-3", b), 0);
  memcpy(&f, b, 4);
  assert_true(f == -0.125f);
  const args_elem fl[] = {ARGS_F16, ARGS_BF16, ARGS_F32, ARGS_F64};
  for (size_t i = 0; i < 4; i++) {
    assert_int_equal(args_value_parse(fl[i], "nan", b), 0);
    assert_true(args_value_is_nan(b, fl[i], 0));
    assert_string_equal(args_value_format(b, fl[i], 0, out, sizeof out), "nan");
    assert_int_equal(args_value_parse(fl[i], "inf", b), 0);
    assert_string_equal(args_value_format(b, fl[i], 0, out, sizeof out), "inf");
    assert_int_equal(args_value_parse(fl[i], "-inf", b), 0);
    assert_string_equal(args_value_format(b, fl[i], 0, out, sizeof out), "-inf");
    assert_int_equal(args_value_parse(fl[i], "1.5", b), 0);
    assert_string_equal(args_value_format(b, fl[i], 0, out, sizeof out), "1.5");
    assert_int_equal(args_value_parse(fl[i], "1.5x", b), -1);
    assert_int_equal(args_value_parse(fl[i], "", b), -1);
  }
}

/* f16: the largest finite value, overflow to inf past the halfway point, subnormals; bf16's
 * ties to even and its largest value. */
static void half_floats_round_to_nearest_even(void **state) {
  (void)state;
  unsigned char b[8];
  char out[64];
  uint16_t h;
  assert_int_equal(args_value_parse(ARGS_F16, "65504", b), 0);
  memcpy(&h, b, 2);
  assert_int_equal(h, 0x7bff);
  assert_int_equal(args_value_parse(ARGS_F16, "65519", b),
                   0); /* below halfway to 65536: rounds down */
  memcpy(&h, b, 2);
  assert_int_equal(h, 0x7bff);
  /* Halfway to 65536 rounds (ties to even) to inf: out of range unless written inf (values
   * are what was typed). */
  assert_int_equal(args_value_parse(ARGS_F16, "65520", b), -2);
  assert_int_equal(args_value_parse(ARGS_F16, "70000", b), -2);
  assert_int_equal(args_value_parse(ARGS_F16, "-70000", b), -2);
  assert_int_equal(args_value_parse(ARGS_F16, "1e-9", b), 0); /* below the smallest subnormal: 0 */
  memcpy(&h, b, 2);
  assert_int_equal(h, 0x0000);
  assert_int_equal(args_value_parse(ARGS_F16, "5.960464477539063e-08", b), 0); /* 2^-24 */
  memcpy(&h, b, 2);
  assert_int_equal(h, 0x0001);
  assert_int_equal(args_value_parse(ARGS_F16, "-2", b), 0);
  memcpy(&h, b, 2);
  assert_int_equal(h, 0xc000);
  assert_int_equal(args_value_parse(ARGS_F16, "0.1", b), 0); /* 0.1 in half: 0x2e66 */
  memcpy(&h, b, 2);
  assert_int_equal(h, 0x2e66);
  assert_string_equal(args_value_format(b, ARGS_F16, 0, out, sizeof out), "0.1");
  /* bf16: 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even gives 1. */
  assert_int_equal(args_value_parse(ARGS_BF16, "1.00390625", b), 0);
  memcpy(&h, b, 2);
  assert_int_equal(h, 0x3f80);
  assert_int_equal(args_value_parse(ARGS_BF16, "3.3895313892515355e38", b), 0); /* the largest */
  memcpy(&h, b, 2);
  assert_int_equal(h, 0x7f7f);
  assert_int_equal(args_value_parse(ARGS_BF16, "3.4e38", b), -2); /* past max + half an ulp: inf */
}

/* f32 and f64 overflow: refused; underflow: a subnormal or zero, accepted. */
static void float_overflow_refused_underflow_kept(void **state) {
  (void)state;
  unsigned char b[8];
  float f;
  assert_int_equal(args_value_parse(ARGS_F32, "1e39", b), -2);
  assert_int_equal(args_value_parse(ARGS_F32, "-3.5e38", b), -2);
  assert_int_equal(args_value_parse(ARGS_F32, "3.4028235e38", b), 0);
  assert_int_equal(args_value_parse(ARGS_F64, "1e309", b), -2);
  assert_int_equal(args_value_parse(ARGS_F32, "1e-45", b), 0);
  memcpy(&f, b, 4);
  assert_true(f > 0 && f < 1e-44f);
  assert_int_equal(args_value_parse(ARGS_F32, "1e-50", b), 0);
  memcpy(&f, b, 4);
  assert_true(f == 0);
  assert_int_equal(args_value_parse(ARGS_F32, "-Infinity", b), 0);
  memcpy(&f, b, 4);
  assert_true(isinf(f) && f < 0);
}

/* ---- structs ------------------------------------------------------------------------------ */

/* Arrays, alignas, padding fields and a 4 KiB parameter block. */
static void struct_arrays_and_alignment(void) {
  parsed p;
  float f;
  /* An array field: struct { float v[3]; int n; } = 16, align 4; list values in order. */
  parse(&p, "struct:{f32[3]={1,2,3},i32:7}");
  assert_int_equal(p.rc, 0);
  assert_int_equal(p.a.v.size, 16);
  assert_int_equal(p.a.v.align, 4);
  for (int k = 0; k < 3; k++) {
    memcpy(&f, p.a.v.bytes + 4 * k, 4);
    assert_true(f == (float)(k + 1));
  }
  parsed_free(&p);
  /* alignas(64): size rounds up to 64. */
  parse(&p, "struct@64:{f32[3]=1}");
  assert_int_equal(p.rc, 0);
  assert_int_equal(p.a.v.size, 64);
  assert_int_equal(p.a.v.align, 64);
  parsed_free(&p);
  /* pad:N and a 16-byte complex pair. */
  parse(&p, "struct:{f64:1,f64:-1,pad:8}");
  assert_int_equal(p.rc, 0);
  assert_int_equal(p.a.v.size, 24);
  parsed_free(&p);
  /* A 4 KiB parameter block. */
  parse(&p, "struct:{u32[1024]=iota}");
  assert_int_equal(p.rc, 0);
  assert_int_equal(p.a.v.size, 4096);
  uint32_t u;
  memcpy(&u, p.a.v.bytes + 4 * 1023, 4);
  assert_int_equal(u, 1023);
  parsed_free(&p);
}

/* Pointers inside a struct: null stays 0, a buffer's address is patched in. */
static void struct_pointers_patched(void) {
  parsed p;
  /* Pointers inside: null at 0, a buffer patched in at offset 8, labelled "0.1". */
  parse(&p, "struct:{null,buf:f32[4]=iota,i32:4}");
  assert_int_equal(p.rc, 0);
  assert_int_equal(p.a.v.size, 24);
  assert_int_equal(p.a.v.align, 8);
  assert_int_equal(p.a.v.patch_count, 1);
  assert_int_equal(p.a.v.patches[0].offset, 8);
  assert_int_equal(p.o.nbufs, 1);
  assert_string_equal(p.o.bufs[0].label, "0.1");
  p.o.bufs[0].ptr = 0x7f0000001000ull;
  size_t size = 0;
  unsigned char *bytes = args_bind_item_bytes(&p.o, &p.a.v, &size);
  assert_int_equal(size, 24);
  uint64_t addr;
  memcpy(&addr, bytes + 8, 8);
  assert_true(addr == 0x7f0000001000ull);
  memcpy(&addr, bytes, 8);
  assert_true(addr == 0);
  free(bytes);
  parsed_free(&p);
}

static void struct_layout_by_c_rules(void **state) {
  (void)state;
  parsed p;
  /* struct { float a; int n; double b; }: 4 + 4 + 8 = 16, align 8. */
  parse(&p, "struct:{f32:1.5,i32:2,f64:3}");
  assert_int_equal(p.rc, 0);
  assert_int_equal(p.a.v.kind, ARGS_BLOB);
  assert_int_equal(p.a.v.size, 16);
  assert_int_equal(p.a.v.align, 8);
  float f;
  int32_t i;
  double d;
  memcpy(&f, p.a.v.bytes, 4);
  memcpy(&i, p.a.v.bytes + 4, 4);
  memcpy(&d, p.a.v.bytes + 8, 8);
  assert_true(f == 1.5f && i == 2 && d == 3.0);
  assert_string_equal(p.a.v.layout, "f32@0 i32@4 f64@8");
  parsed_free(&p);
  /* struct { char c; double d; }: 7 bytes of padding; size 16. */
  parse(&p, "struct:{i8:-1,f64:2}");
  assert_int_equal(p.rc, 0);
  assert_int_equal(p.a.v.size, 16);
  assert_int_equal(p.a.v.align, 8);
  assert_int_equal((signed char)p.a.v.bytes[0], -1);
  for (int k = 1; k < 8; k++) assert_int_equal(p.a.v.bytes[k], 0);
  assert_string_equal(p.a.v.layout, "i8@0 pad 7 f64@8");
  parsed_free(&p);
  /* struct { double d; char c; }: tail padding to 16. */
  parse(&p, "struct:{f64:1,u8:9}");
  assert_int_equal(p.rc, 0);
  assert_int_equal(p.a.v.size, 16);
  assert_int_equal(p.a.v.bytes[8], 9);
  parsed_free(&p);
  /* Nested: struct { char a; struct { short s; int i; } in; char z; } = 1+1pad+... :
   * inner {i16,i32} is 8 bytes align 4 at offset 4; z at 12; size 16, align 4. */
  parse(&p, "struct:{i8:1,{i16:2,i32:3},i8:4}");
  assert_int_equal(p.rc, 0);
  assert_int_equal(p.a.v.size, 16);
  assert_int_equal(p.a.v.align, 4);
  int16_t s;
  memcpy(&s, p.a.v.bytes + 4, 2);
  memcpy(&i, p.a.v.bytes + 8, 4);
  assert_int_equal(s, 2);
  assert_int_equal(i, 3);
  assert_int_equal(p.a.v.bytes[12], 4);
  parsed_free(&p);
  struct_arrays_and_alignment();
  struct_pointers_patched();
}

static void struct_specs_refused(void **state) {
  (void)state;
  refused("struct:{}", "no fields");
  refused("struct:{f32:1,,i32:2}", "field 1 is empty");
  refused("struct@3:{f32:1}", "power of two");
  refused("struct@8192:{f32:1}", "power of two");
  refused("struct@2:{f64:1}", "natural alignment of 8");
  refused("struct:{f32:1", "{FIELD,...}");
  refused("struct:f32:1", "{FIELD,...}");
  refused("struct:{f32:x}", "not a f32 value");
  refused("struct:{pad:0}", "pad:N");
  refused("struct:{pad:-4}", "pad:N");
  refused("struct:{pad:99999999999999}", "pad:N");
  refused("struct:{u8[300000000]=1}", "grows past");
  /* 17 levels of nesting. */
  char deep[128] = "struct:";
  for (int k = 0; k < 17; k++) strcat(deep, "{");
  strcat(deep, "i32:1");
  for (int k = 0; k < 17; k++) strcat(deep, "}");
  refused(deep, "nest deeper");
}

/* ---- bytes, scalars, pointers, buffers ----------------------------------------------------- */

static void bytes_specs(void **state) {
  (void)state;
  parsed p;
  parse(&p, "bytes:00ff_10A0");
  assert_int_equal(p.rc, 0);
  assert_int_equal(p.a.v.size, 4);
  assert_int_equal(p.a.v.align, 1);
  const unsigned char want[] = {0x00, 0xff, 0x10, 0xa0};
  assert_memory_equal(p.a.v.bytes, want, 4);
  parsed_free(&p);
  parse(&p, "bytes@16:"
            "00112233445566778899aabbccddeeff");
  assert_int_equal(p.rc, 0);
  assert_int_equal(p.a.v.size, 16);
  assert_int_equal(p.a.v.align, 16);
  parsed_free(&p);
  /* From a file: every byte as is. */
  char path[] = "/tmp/cucore_specs_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  unsigned char blob[40];
  for (int k = 0; k < 40; k++) blob[k] = (unsigned char)(k * 7);
  assert_int_equal(write(fd, blob, sizeof blob), (ssize_t)sizeof blob);
  close(fd);
  char spec[128];
  snprintf(spec, sizeof spec, "bytes@8:@%s", path);
  parse(&p, spec);
  assert_int_equal(p.rc, 0);
  assert_int_equal(p.a.v.size, 40);
  assert_int_equal(p.a.v.align, 8);
  assert_memory_equal(p.a.v.bytes, blob, 40);
  parsed_free(&p);
  /* An empty file is no blob (exit 1: the file, not the command line). */
  fd = open(path, O_WRONLY | O_TRUNC);
  close(fd);
  parse(&p, spec);
  assert_int_equal(p.rc, CLI_EXIT_FAILURE);
  assert_has(p.msg, "is empty");
  parsed_free(&p);
  unlink(path);
  parse(&p, "bytes:@/nonexistent/blob.bin");
  assert_int_equal(p.rc, CLI_EXIT_FAILURE);
  assert_has(p.msg, "/nonexistent/blob.bin");
  parsed_free(&p);
  refused("bytes:abc", "3 hex digits");
  refused("bytes:", "0 hex digits");
  refused("bytes:0g", "`g` is not a hex digit");
  refused("bytes@0:00", "power of two");
  refused("bytes00", "bytes:HEX");
}

static void scalars_pointers_buffers(void **state) {
  (void)state;
  parsed p;
  parse(&p, "null");
  assert_int_equal(p.rc, 0);
  assert_int_equal(p.a.v.kind, ARGS_POINTER);
  assert_int_equal(p.a.v.buf, -1);
  assert_true(p.a.v.address == 0);
  parsed_free(&p);
  parse(&p, "ptr:0x7f00deadbeef");
  assert_int_equal(p.rc, 0);
  assert_true(p.a.v.address == 0x7f00deadbeefull);
  parsed_free(&p);
  parse(&p, "u64:18446744073709551615");
  assert_int_equal(p.rc, 0);
  assert_int_equal(p.a.v.kind, ARGS_SCALAR);
  assert_int_equal(p.a.v.size, 8);
  assert_true(args_value_get_u64(p.a.v.scalar, ARGS_U64, 0) == UINT64_MAX);
  parsed_free(&p);
  parse(&p, "buf:i32[5]=iota");
  assert_int_equal(p.rc, 0);
  assert_int_equal(p.o.nbufs, 1);
  assert_int_equal(p.o.bufs[0].role, ARGS_IN);
  assert_int_equal(p.o.bufs[0].count, 5);
  for (int k = 0; k < 5; k++)
    assert_int_equal(args_value_get_i64(p.o.bufs[0].host, ARGS_I32, (size_t)k), k);
  parsed_free(&p);
  parse(&p, "inout:f64[3]={1,nan,-inf}>after.npy");
  assert_int_equal(p.rc, 0);
  assert_int_equal(p.o.bufs[0].role, ARGS_INOUT);
  assert_string_equal(p.o.bufs[0].save, "after.npy");
  assert_true(args_value_is_nan(p.o.bufs[0].host, ARGS_F64, 1));
  assert_true(isinf(args_value_get(p.o.bufs[0].host, ARGS_F64, 2)));
  parsed_free(&p);
  parse(&p, "out:u8[7]");
  assert_int_equal(p.rc, 0);
  assert_int_equal(p.o.bufs[0].role, ARGS_OUT);
  for (int k = 0; k < 7; k++) assert_int_equal(p.o.bufs[0].host[k], 0);
  parsed_free(&p);
  /* random is deterministic for a seed. */
  args_fill_random_seed(42);
  parse(&p, "buf:f32[4]=random");
  float first = (float)args_value_get(p.o.bufs[0].host, ARGS_F32, 0);
  parsed_free(&p);
  args_fill_random_seed(42);
  parse(&p, "buf:f32[4]=random");
  assert_true(first == (float)args_value_get(p.o.bufs[0].host, ARGS_F32, 0));
  assert_true(first >= 0 && first < 1);
  parsed_free(&p);
}

static void hostile_specs(void **state) {
  (void)state;
  const char *bad[][2] = {
      {"f32:abc", "not a f32 value"},
      {"i8:300", "out of range for i8"},
      {"u32:-1", "out of range for u32"},
      {"u64:18446744073709551616", "out of range"},
      {"i32:", "not a i32 value"},
      {"q32:1", "unknown type `q32`"},
      {"x", "expected TYPE:VALUE"},
      {"", "empty"},
      {"buf:f32[0]=1", "1..2^34"},
      {"buf:f32[-1]=1", "1..2^34"},
      {"buf:f32[99999999999999999999]=1", "1..2^34"},
      {"buf:f32[17179869185]=1", "1..2^34"},
      {"buf:f32[8]", "=INIT"},
      {"buf:f32[8=1", "without `]`"},
      {"buf:f32[8]=1>", "followed by a file"},
      {"buf:q32[8]=1", "TYPE[N]"},
      {"buf:f32[]=1", "element count"},
      {"buf:f32[2]={1,2,3}", "the list has 3 values"},
      {"buf:f32[2]={1,x}", "value 1 of the list"},
      {"buf:f32[2]={}", "empty"},
      {"buf:f32[2]={1,2", "end with `}`"},
      {"out:f32[8]=1", "takes no initial value"},
      {"out:f32[]", "element count"},
      {"ptr:xyz", "ptr:VALUE"},
      {"ptr:-1", "ptr:VALUE"},
      {"f32[4]", "=INIT"},
  };
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) refused(bad[k][0], bad[k][1]);
  /* More host memory than half the machine's is refused before any allocation (exit 1: the
   * command is right, the machine too small), not allocated lazily and killed while filled. */
  unsigned long long host = (unsigned long long)sysconf(_SC_PHYS_PAGES) *
                            (unsigned long long)sysconf(_SC_PAGESIZE);
  if (host < (1ull << 38)) {
    parsed p;
    parse(&p, "buf:f64[17179869184]=1");
    assert_int_equal(p.rc, CLI_EXIT_FAILURE);
    assert_has(p.msg, "need more host memory");
    parsed_free(&p);
  }
}

/* Random specs built from the specs' own characters: each is parsed or refused (0, 1 or 2),
 * never a crash or a leak (the suite runs under ASan in `make asan`). */
static void random_specs(void **state) {
  (void)state;
  static const char *pieces[] = {"struct",      "@",   "8",   "64",  ":",    "{",     "}",
                                 ",",           "f32", "i8",  "u64", "f16",  "bf16",  "[",
                                 "]",           "4",   "0",   "=",   "iota", "1.5",   "-",
                                 "nan",         "0x",  "ff",  "buf", "out",  "inout", "bytes",
                                 "null",        "ptr", "pad", ">",   "@",    "x.npy", "{1,2}",
                                 "99999999999", "e",   "_"};
  const size_t np = sizeof pieces / sizeof pieces[0];
  args_fill_random_seed(1234);
  fflush(stderr);
  int null_fd = open("/dev/null", O_WRONLY), saved = dup(2);
  dup2(null_fd, 2);
  int counts[3] = {0, 0, 0};
  static const char *valid[] = {"struct:{f32:1.5,i32:2,f64:3}",
                                "struct@64:{f32[3]={1,2,3}}",
                                "struct:{i8:1,{i16:2,i32:3},pad:4,null,buf:f32[4]=iota}",
                                "bytes@8:00112233_44556677",
                                "inout:f64[3]={1,nan,-inf}>a.npy",
                                "buf:u8[16]=random",
                                "out:bf16[8]",
                                "u64:0xffffffffffffffff",
                                "f16:-0x1p-14",
                                "ptr:0x1000",
                                "i32[4]={1,2,3,4}"};
  const size_t nv = sizeof valid / sizeof valid[0];
  for (int round = 0; round < 60000; round++) {
    char spec[256] = "";
    if (round % 2) { /* pieces strung together */
      size_t n = 1 + args_fill_random_next() % 12;
      for (size_t k = 0; k < n; k++) {
        const char *piece = pieces[args_fill_random_next() % np];
        if (strlen(spec) + strlen(piece) + 1 < sizeof spec) strcat(spec, piece);
      }
    } else { /* a valid spec with a few characters deleted, replaced or inserted */
      snprintf(spec, sizeof spec, "%s", valid[args_fill_random_next() % nv]);
      for (size_t edits = 1 + args_fill_random_next() % 3; edits; edits--) {
        size_t len = strlen(spec), at = len ? args_fill_random_next() % len : 0;
        const char alphabet[] = "{}[],:=@>-._0123456789abcfinx";
        char ch = alphabet[args_fill_random_next() % (sizeof alphabet - 1)];
        switch (args_fill_random_next() % 3) {
        case 0: memmove(spec + at, spec + at + 1, len - at); break;
        case 1:
          if (len) spec[at] = ch;
          break;
        default:
          if (len + 2 < sizeof spec) {
            memmove(spec + at + 1, spec + at, len - at + 1);
            spec[at] = ch;
          }
        }
      }
    }
    args_set o;
    memset(&o, 0, sizeof o);
    args_arg a;
    int rc = args_set_parse_arg(&o, spec, 0, &a);
    if (rc < 0 || rc > 2) {
      dup2(saved, 2);
      fail_msg("spec `%s`: rc %d", spec, rc);
    }
    counts[rc]++;
    args_item_free(&a.v);
    args_set_free(&o);
  }
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  close(null_fd);
  print_message("random specs: %d parsed, %d refused as files, %d as usage\n", counts[0], counts[1],
                counts[2]);
  assert_true(counts[0] > 0 && counts[2] > 0);
}

/* ---- globals and expectations ------------------------------------------------------------- */

static void global_and_expect_specs(void **state) {
  (void)state;
  args_set o;
  memset(&o, 0, sizeof o);
  args_global_set g;
  assert_int_equal(args_set_parse_global(&o, "ns::coef<float>=f32[4]={1,2,3,4}", &g), 0);
  assert_string_equal(g.name, "ns::coef<float>");
  assert_int_equal(g.v.size, 16);
  free(g.name);
  args_item_free(&g.v);
  capture_begin();
  int rc = args_set_parse_global(&o, "=f32:1", &g);
  assert_has(capture_end(), "NAME=VALUE");
  assert_int_equal(rc, CLI_EXIT_USAGE);
  free(g.name);
  args_global_read r;
  assert_int_equal(args_set_parse_read("ns::hits<int>:u64[2]>h.npy", &r), 0);
  assert_string_equal(r.name, "ns::hits<int>");
  assert_int_equal(r.type, ARGS_U64);
  assert_int_equal(r.count, 2);
  assert_string_equal(r.save, "h.npy");
  free(r.name);
  assert_int_equal(args_set_parse_read("blob", &r), 0);
  assert_int_equal(r.type, ARGS_U8);
  assert_int_equal(r.has_type, 0);
  free(r.name);
  capture_begin();
  rc = args_set_parse_read("x:f32[0]", &r);
  capture_end();
  assert_int_equal(rc, CLI_EXIT_USAGE);
  free(r.name);
  args_expect e;
  assert_int_equal(args_set_parse_expect("2=@y.npy", &e), 0);
  assert_int_equal(e.init, ARGS_INIT_FILE);
  assert_string_equal(e.target, "2");
  free(e.target);
  free(e.value_text);
  capture_begin();
  rc = args_set_parse_expect("2=random", &e);
  assert_has(capture_end(), "random values cannot be expected");
  assert_int_equal(rc, CLI_EXIT_USAGE);
  free(e.target);
  free(e.value_text);
  capture_begin();
  rc = args_set_parse_expect("=1", &e);
  capture_end();
  assert_int_equal(rc, CLI_EXIT_USAGE);
  assert_int_equal(args_bind_plain_name("taps"), 1);
  assert_int_equal(args_bind_plain_name("ns::taps"), 0);
  assert_int_equal(args_bind_plain_name("coef<float>"), 0);
  assert_int_equal(args_bind_plain_name("9x"), 0);
}

/* An output buffer compared with --expect after a (simulated) run. */
static void expect_comparisons(void **state) {
  (void)state;
  parsed p;
  parse(&p, "inout:f32[6]={0,1,2,3,4,5}");
  assert_int_equal(p.rc, 0);
  p.o.nargs = 1;
  args_expect e[3];
  assert_int_equal(args_set_parse_expect("0=iota", &e[0]), 0);
  assert_int_equal(args_set_parse_expect("0={0,1,2,3,4,5.0001}", &e[1]), 0);
  assert_int_equal(args_set_parse_expect("0=1", &e[2]), 0);
  p.o.expects = e;
  p.o.nexpects = 3;
  assert_int_equal(args_expect_check(&p.o), 2);
  assert_int_equal(e[0].mismatches, 0);
  assert_int_equal(e[1].mismatches, 1); /* 5.0001 vs 5: 1e-4 > 1e-8 + 1e-5 * 5 */
  assert_int_equal(e[1].bad_index[0], 5);
  assert_string_equal(e[1].got[0], "5");
  assert_string_equal(e[1].want[0], "5.0001");
  assert_int_equal(e[2].mismatches, 5);
  assert_int_equal(e[2].shown, 5);
  /* A looser rtol accepts it. */
  p.o.has_rtol = 1;
  p.o.rtol = 1e-4;
  assert_int_equal(args_expect_check(&p.o), 1);
  for (int k = 0; k < 3; k++) {
    free(e[k].target);
    free(e[k].value_text);
  }
  p.o.expects = NULL;
  p.o.nexpects = 0;
  parsed_free(&p);
  /* Integers exactly: 2^64-1 against 2^64-2 differs (doubles would call them equal). */
  parse(&p, "inout:u64[1]={18446744073709551615}");
  args_expect x;
  assert_int_equal(args_set_parse_expect("0=18446744073709551614", &x), 0);
  p.o.expects = &x;
  p.o.nexpects = 1;
  assert_int_equal(args_expect_check(&p.o), 1);
  assert_int_equal(x.exact, 1);
  assert_string_equal(x.got[0], "18446744073709551615");
  assert_string_equal(x.want[0], "18446744073709551614");
  free(x.target);
  free(x.value_text);
  p.o.expects = NULL;
  p.o.nexpects = 0;
  parsed_free(&p);
}

/* ---- .npy ---------------------------------------------------------------------------------- */

static unsigned char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) fail_msg("cannot open %s", path);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *b = malloc((size_t)n + 1);
  assert_non_null(b);
  assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
  fclose(f);
  *len = (size_t)n;
  return b;
}

/* Reads a reference file as TYPE, writes it back, and compares the bytes with the file. */
static void round_trip(const char *name, args_elem type, size_t want_count, int want_ndim,
                       int same_bytes) {
  char path[512], out[] = "/tmp/cucore_npy_XXXXXX.npy";
  snprintf(path, sizeof path, NPY_DIR "%s", name);
  size_t count = 0;
  unsigned char *data = NULL;
  int ndim = 0;
  uint64_t shape[ARGS_MAX_DIMS];
  capture_begin();
  int rc = args_data_read("test", path, type, &count, &data, &ndim, shape);
  const char *msg = capture_end();
  if (rc) fail_msg("%s: %s", name, msg);
  assert_int_equal(count, want_count);
  assert_int_equal(ndim, want_ndim);
  int fd = mkstemps(out, 4);
  assert_true(fd >= 0);
  close(fd);
  assert_int_equal(args_data_write("test", out, type, count, data, ndim, shape), 0);
  size_t a_len, b_len;
  unsigned char *a = slurp(path, &a_len), *b = slurp(out, &b_len);
  if (same_bytes) {
    assert_int_equal(a_len, b_len);
    assert_memory_equal(a, b, a_len);
  }
  npy_array arr;
  char err[256];
  assert_int_equal(npy_parse(b, b_len, &arr, err, sizeof err), 0);
  assert_memory_equal(arr.data, data, count * (size_t)args_elem_sizes[type]);
  npy_free(&arr);
  free(a);
  free(b);
  free(data);
  unlink(out);
}

static void npy_round_trips(void **state) {
  (void)state;
  round_trip("f32_3.npy", ARGS_F32, 3, 1, 1);
  round_trip("i64_2x3.npy", ARGS_I64, 6, 2, 1);
  round_trip("u64_2.npy", ARGS_U64, 2, 1, 1);
  round_trip("u8_4.npy", ARGS_U8, 4, 1, 1);
  round_trip("f16_2.npy", ARGS_F16, 2, 1, 1);
  /* A 0-d array is read as one element and written back 1-d, shape (1,): the data only. */
  round_trip("f64_0d.npy", ARGS_F64, 1, 1, 0);
  /* Values as written by make_refs.py. */
  size_t count = 0;
  unsigned char *data = NULL;
  int ndim;
  uint64_t shape[ARGS_MAX_DIMS];
  assert_int_equal(args_data_read("t", NPY_DIR "i64_2x3.npy", ARGS_I64, &count, &data, &ndim,
                                  shape),
                   0);
  assert_true(shape[0] == 2 && shape[1] == 3);
  assert_true(args_value_get_i64(data, ARGS_I64, 2) == INT64_MAX);
  assert_true(args_value_get_i64(data, ARGS_I64, 3) == INT64_MIN);
  assert_true(args_value_get_i64(data, ARGS_I64, 5) == 549755289600LL);
  free(data);
  count = 0;
  assert_int_equal(args_data_read("t", NPY_DIR "f64_v2.npy", ARGS_F64, &count, &data, &ndim, shape),
                   0);
  assert_true(args_value_get(data, ARGS_F64, 0) == 1e300);
  assert_true(signbit(args_value_get(data, ARGS_F64, 1)));
  free(data);
  /* The header numpy writes for a large first axis and many dimensions stays 64-aligned. */
  uint64_t big[3] = {123456789012ull, 3, 1};
  unsigned char *h = NULL;
  size_t hlen = 0;
  assert_int_equal(npy_header("<f8", 3, big, &h, &hlen), 0);
  assert_int_equal(hlen % 64, 0);
  assert_memory_equal(h, "\x93NUMPY\x01\x00", 8);
  assert_non_null(memmem(h, hlen, "'shape': (123456789012, 3, 1), }", 32));
  free(h);
}

static void npy_refusals(void **state) {
  (void)state;
  struct {
    const char *file;
    args_elem type;
    size_t count;
    const char *why;
  } bad[] = {
      {"bad_big_endian.npy", ARGS_F32, 0, "big-endian"},
      {"bad_fortran.npy", ARGS_F32, 0, "Fortran order"},
      {"bad_truncated.npy", ARGS_F32, 0, "truncated"},
      {"bad_extra.npy", ARGS_F32, 0, "extra bytes"},
      {"bad_huge_shape.npy", ARGS_F32, 0, "overflows"},
      {"bad_overflow_shape.npy", ARGS_F64, 0, "overflows"},
      {"bad_structured.npy", ARGS_F32, 0, "structured"},
      {"bad_header_len.npy", ARGS_F32, 0, "truncated"},
      {"bad_magic.npy", ARGS_F32, 0, "not a .npy file"},
      {"bad_short.npy", ARGS_F32, 0, "not a .npy file"},
      {"bad_dict.npy", ARGS_F32, 0, "fortran_order"},
      {"f32_3.npy", ARGS_F64, 0, "holds dtype '<f4'; the spec says f64"},
      {"f32_3.npy", ARGS_I32, 0, "holds dtype '<f4'; the spec says i32"},
      {"f32_3.npy", ARGS_F32, 4, "holds 3 elements; the spec says [4]"},
      {"u8_4.npy", ARGS_I8, 0, "holds dtype '|u1'"},
      {"f16_2.npy", ARGS_BF16, 0, "bfloat16"},
      {"missing.npy", ARGS_F32, 0, "cannot open"},
  };
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    char path[512];
    snprintf(path, sizeof path, NPY_DIR "%s", bad[k].file);
    size_t count = bad[k].count;
    unsigned char *data = NULL;
    int ndim;
    uint64_t shape[ARGS_MAX_DIMS];
    capture_begin();
    int rc = args_data_read("test", path, bad[k].type, &count, &data, &ndim, shape);
    const char *msg = capture_end();
    if (rc != CLI_EXIT_FAILURE)
      fail_msg("%s as %s: rc %d", bad[k].file, args_elem_names[bad[k].type], rc);
    assert_null(data);
    assert_has(msg, bad[k].why);
    assert_has(msg, bad[k].file);
  }
}

/* Every prefix of a good file is refused, never read past; random garbage after a valid
 * preamble is parsed or refused (under ASan: never read past). */
static void npy_prefixes_and_garbage_refused(void **state) {
  (void)state;
  size_t len;
  unsigned char *good = slurp(NPY_DIR "i64_2x3.npy", &len);
  for (size_t n = 0; n < len; n++) {
    unsigned char *copy = malloc(n ? n : 1);
    memcpy(copy, good, n);
    npy_array a;
    char err[256];
    assert_int_equal(npy_parse(copy, n, &a, err, sizeof err), -1);
    assert_true(err[0] != '\0');
    free(copy);
  }
  /* Random garbage after a valid preamble. */
  args_fill_random_seed(7);
  for (int round = 0; round < 2000; round++) {
    unsigned char buf[200];
    memcpy(buf, good, sizeof buf < len ? sizeof buf : len);
    size_t flips = 1 + args_fill_random_next() % 8;
    for (size_t f = 0; f < flips; f++)
      buf[6 + args_fill_random_next() % (sizeof buf - 6)] = (unsigned char)args_fill_random_next();
    npy_array a;
    char err[256];
    if (npy_parse(buf, sizeof buf, &a, err, sizeof err) == 0) npy_free(&a);
  }
  free(good);
}

/* Raw files: the size must be a whole number of elements and match [N]. */
static void raw_files_hold_whole_elements(void **state) {
  (void)state;
  char raw[] = "/tmp/cucore_raw_XXXXXX";
  int fd = mkstemp(raw);
  assert_int_equal(write(fd, "abcdefg", 7), 7);
  close(fd);
  size_t count = 0;
  unsigned char *data = NULL;
  int ndim;
  uint64_t shape[ARGS_MAX_DIMS];
  capture_begin();
  int rc = args_data_read("test", raw, ARGS_F32, &count, &data, &ndim, shape);
  assert_has(capture_end(), "is 7 bytes");
  assert_int_equal(rc, CLI_EXIT_FAILURE);
  count = 0;
  assert_int_equal(args_data_read("test", raw, ARGS_U8, &count, &data, &ndim, shape), 0);
  assert_int_equal(count, 7);
  free(data);
  unlink(raw);
}

/* ---- the JSON report: exact numbers, read back by python3's json module ---------------------- */

static void json_exact(void **state) {
  (void)state;
  if (system("python3 -c 'import json' 2>/dev/null") != 0) skip();
  run_opts o;
  memset(&o, 0, sizeof o);
  o.kernel = "k";
  o.show = 8;
  o.grid[0] = o.grid[1] = o.grid[2] = 1;
  o.block[0] = 32, o.block[1] = o.block[2] = 1;
  args_arg a[3];
  const char *specs[] = {"inout:u64[3]={18446744073709551615,0,549755289600}",
                         "inout:f64[5]={549755289600,0.1,1e-300,-2.5e+300,0.30000000000000004}",
                         "inout:f32[3]={0.1,nan,-inf}"};
  for (int k = 0; k < 3; k++) assert_int_equal(args_set_parse_arg(&o.specs, specs[k], k, &a[k]), 0);
  o.specs.args = a;
  o.specs.nargs = 3;
  run_timing t;
  memset(&t, 0, sizeof t);
  t.timed = 1;
  t.stats.min_ms = t.stats.median_ms = t.stats.max_ms = t.stats.mean_ms = 0.0123456789012345;
  t.launch_ms = 0.0123456789012345;
  t.launches = 1;
  snprintf(t.device_name, sizeof t.device_name, "a \"quoted\" GPU");
  t.arch = 90;
  t.pool = 1;
  char path[] = "/tmp/cucore_json_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  FILE *f = fdopen(fd, "w");
  json_out j = {f, 0, {0}, 1};
  run_result_print(&o, &t, "k", &j);
  fclose(f);
  char cmd[1024];
  snprintf(cmd, sizeof cmd,
           "python3 -c 'import json,sys,math\n"
           "d=json.load(open(sys.argv[1]))\n"
           "o=d[\"outputs\"]\n"
           "assert o[0][\"first\"]==[2**64-1,0,549755289600], o[0]\n"
           "assert o[0][\"max\"]==2**64-1 and type(o[0][\"sum\"]) is float, o[0]\n"
           "assert o[1][\"first\"]==[549755289600,0.1,1e-300,-2.5e300,0.30000000000000004], o[1]\n"
           "assert type(o[1][\"first\"][0]) is int\n"
           "import struct\n"
           "assert struct.pack(\"<f\",o[2][\"first\"][0])==struct.pack(\"<f\",0.1)\n"
           "assert o[2][\"first\"][1:]==[\"nan\",\"-inf\"] and o[2][\"nan_count\"]==1\n"
           "assert d[\"ms_per_launch\"]==0.0123456789012345 and d[\"allocator\"]==\"pool\"\n"
           "assert d[\"device\"]==\"a \\\"quoted\\\" GPU\" and d[\"graph\"] is None\n"
           "' %s",
           path);
  int rc = system(cmd);
  unlink(path);
  for (int k = 0; k < 3; k++) args_item_free(&a[k].v);
  o.specs.args = NULL;
  o.specs.nargs = 0;
  args_set_free(&o.specs);
  assert_int_equal(rc, 0);
}

/* Shortest round-trip printing of many doubles and floats. */
static void formats_round_trip(void **state) {
  (void)state;
  args_fill_random_seed(99);
  char out[64];
  for (int k = 0; k < 100000; k++) {
    uint64_t bits = args_fill_random_next();
    double d;
    memcpy(&d, &bits, 8);
    if (!isfinite(d)) continue;
    args_value_format_double(d, out, sizeof out);
    if (strtod(out, NULL) != d) fail_msg("%s does not read back to %a", out, d);
    uint32_t fb = (uint32_t)bits;
    unsigned char b[4], back[4];
    memcpy(b, &fb, 4);
    float f;
    memcpy(&f, b, 4);
    if (!isfinite(f)) continue;
    args_value_format(b, ARGS_F32, 0, out, sizeof out);
    assert_int_equal(args_value_parse(ARGS_F32, out, back), 0);
    assert_memory_equal(b, back, 4);
  }
  for (uint32_t h = 0; h < 0x10000; h++) { /* every half and bfloat16 value */
    unsigned char b[2] = {(unsigned char)h, (unsigned char)(h >> 8)}, back[2];
    const args_elem ts[] = {ARGS_F16, ARGS_BF16};
    for (int i = 0; i < 2; i++) {
      if (args_value_is_nan(b, ts[i], 0)) continue;
      args_value_format(b, ts[i], 0, out, sizeof out);
      assert_int_equal(args_value_parse(ts[i], out, back), 0);
      if (memcmp(b, back, 2))
        fail_msg("%s %04x prints as %s, reads back as %02x%02x", args_elem_names[ts[i]], h, out,
                 back[1], back[0]);
    }
  }
}

/* cli_grow (tools/grow.c): doubling from 8, contents kept, an overflowing size refused with
 * a message and the array left as it was. */
static void growth_step(void **state) {
  (void)state;
  size_t cap = 0;
  int *v = cli_grow(NULL, &cap, 1, sizeof *v, "the test list");
  assert_non_null(v);
  assert_int_equal(cap, 8);
  for (int i = 0; i < 1000; i++) {
    int *n = cli_grow(v, &cap, (size_t)i + 1, sizeof *n, "the test list");
    assert_non_null(n);
    assert_true(cap >= (size_t)i + 1 && (cap & (cap - 1)) == 0);
    v = n;
    v[i] = i;
  }
  assert_int_equal(cap, 1024);
  for (int i = 0; i < 1000; i++) assert_int_equal(v[i], i);
  assert_ptr_equal(cli_grow(v, &cap, 10, sizeof *v, "the test list"), v); /* room already */
  capture_begin();
  void *big = cli_grow(v, &cap, SIZE_MAX / 2, sizeof *v, "the test list");
  const char *msg = capture_end();
  assert_null(big);
  assert_int_equal(cap, 1024);
  assert_has(msg, "the test list cannot grow to");
  for (int i = 0; i < 1000; i++) assert_int_equal(v[i], i);
  free(v);
}

/* run_result_stats (tools/run_result.c): min, median (the middle two averaged for an even
 * count), max and mean of unsorted times. */
static void timing_statistics(void **state) {
  (void)state;
  double odd[] = {3, 1, 2}, even[] = {4, 1, 3, 2}, one[] = {0.5};
  run_stats s = run_result_stats(odd, 3);
  assert_true(s.min_ms == 1 && s.median_ms == 2 && s.max_ms == 3 && s.mean_ms == 2);
  s = run_result_stats(even, 4);
  assert_true(s.min_ms == 1 && s.median_ms == 2.5 && s.max_ms == 4 && s.mean_ms == 2.5);
  s = run_result_stats(one, 1);
  assert_true(s.min_ms == 0.5 && s.median_ms == 0.5 && s.max_ms == 0.5 && s.mean_ms == 0.5);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(ints_exact_and_ranged),
      cmocka_unit_test(floats_parse_and_round_trip),
      cmocka_unit_test(half_floats_round_to_nearest_even),
      cmocka_unit_test(float_overflow_refused_underflow_kept),
      cmocka_unit_test(struct_layout_by_c_rules),
      cmocka_unit_test(struct_specs_refused),
      cmocka_unit_test(bytes_specs),
      cmocka_unit_test(scalars_pointers_buffers),
      cmocka_unit_test(hostile_specs),
      cmocka_unit_test(random_specs),
      cmocka_unit_test(global_and_expect_specs),
      cmocka_unit_test(expect_comparisons),
      cmocka_unit_test(npy_round_trips),
      cmocka_unit_test(npy_refusals),
      cmocka_unit_test(npy_prefixes_and_garbage_refused),
      cmocka_unit_test(raw_files_hold_whole_elements),
      cmocka_unit_test(json_exact),
      cmocka_unit_test(formats_round_trip),
      cmocka_unit_test(growth_step),
      cmocka_unit_test(timing_statistics),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
