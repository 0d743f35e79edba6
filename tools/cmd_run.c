/* cmd_run.c -- `cucore run`: launch any kernel from the command line, with arguments checked
 * against the kernel before a GPU is opened. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

const char cmd_run_help[] =
    "usage: cucore run FILE --kernel NAME --grid X[,Y,Z] --block X[,Y,Z] [--smem BYTES]\n"
    "                  [--cluster X,Y,Z] [--cooperative] [--repeat N] --arg SPEC ...\n"
    "                  [--json] [compile options for .cu files]\n"
    "\n"
    "Launches kernel NAME of FILE (.cu, .ptx, .cubin, .fatbin; NAME may be a C++ name\n"
    "expression for .cu files) with the arguments given by --arg, in the kernel's order.\n"
    "The arguments are checked against the kernel's parameters (count, sizes, types where\n"
    "known) before any GPU is opened, so a wrong list is reported on any machine.\n"
    "\n"
    "argument specs:\n"
    "  TYPE:VALUE            a scalar; TYPE is i8 u8 i16 u16 i32 u32 i64 u64 f16 bf16 f32 f64\n"
    "                        (e.g. f32:2.5, i32:1024, u64:0x10)\n"
    "  buf:TYPE[N]=INIT      a device buffer of N elements, passed as a pointer; INIT is a\n"
    "                        number (every element), random (seeded, floats in [0,1), ints\n"
    "                        0..99) or iota (0, 1, 2, ...)\n"
    "  out:TYPE[N]           a zeroed device buffer, printed after the run (first values,\n"
    "                        sum, min, max)\n"
    "\n"
    "Prints the time per launch (device events, median of --repeat launches) and a summary\n"
    "of every out buffer. Exit status: 0 ran; 1 wrong arguments, a failed launch, or no GPU\n"
    "(after checking the arguments); 2 usage.\n"
    "\n"
    "compile options:\n"
    "%s"
    "\n"
    "examples:\n"
    "  cucore run saxpy.cu --kernel saxpy --grid 4096 --block 256 \\\n"
    "      --arg f32:2.5 --arg buf:f32[1048576]=random --arg out:f32[1048576] --arg i32:1048576\n"
    "  cucore run k.cubin --kernel 'scale<float>' --grid 1 --block 64 --arg out:f32[64] \\\n"
    "      --arg f32:3 --arg i32:64\n";

typedef enum { T_I8, T_U8, T_I16, T_U16, T_I32, T_U32, T_I64, T_U64, T_F16, T_BF16, T_F32, T_F64 } elem_t;
static const char *const type_names[] = {"i8", "u8", "i16", "u16", "i32", "u32",
                                         "i64", "u64", "f16", "bf16", "f32", "f64"};
static const int type_sizes[] = {1, 1, 2, 2, 4, 4, 8, 8, 2, 2, 4, 8};

typedef enum { A_SCALAR, A_BUF, A_OUT } arg_kind;
typedef enum { INIT_VALUE, INIT_RANDOM, INIT_IOTA } init_kind;

typedef struct run_arg {
  const char *spec;
  arg_kind kind;
  elem_t type;
  double fvalue;            /* scalar or fill value */
  long long ivalue;
  unsigned long long uvalue;
  size_t count;             /* buffers */
  init_kind init;
  cucore_devptr ptr;
} run_arg;

static int parse_type(const char *s, size_t len, elem_t *t) {
  for (int i = 0; i <= T_F64; i++)
    if (strlen(type_names[i]) == len && strncmp(s, type_names[i], len) == 0) {
      *t = (elem_t)i;
      return 0;
    }
  return -1;
}

static int is_float(elem_t t) { return t >= T_F16; }

static int parse_number(run_arg *a, const char *v) {
  char *end = NULL;
  if (is_float(a->type)) {
    a->fvalue = strtod(v, &end);
    return (end == v || *end) ? -1 : 0;
  }
  if (a->type == T_U64 || a->type == T_U32 || a->type == T_U16 || a->type == T_U8) {
    if (*v == '-') return -1;
    a->uvalue = strtoull(v, &end, 0);
    a->ivalue = (long long)a->uvalue;
  } else {
    a->ivalue = strtoll(v, &end, 0);
    a->uvalue = (unsigned long long)a->ivalue;
  }
  if (end == v || *end) return -1;
  static const long long lo[] = {-128, 0, -32768, 0, INT32_MIN, 0};
  static const long long hi[] = {127, 255, 32767, 65535, INT32_MAX, UINT32_MAX};
  if (a->type <= T_U32 && (a->ivalue < lo[a->type] || a->ivalue > hi[a->type])) return -2;
  return 0;
}

static int parse_arg(const char *spec, run_arg *a) {
  memset(a, 0, sizeof *a);
  a->spec = spec;
  const char *colon = strchr(spec, ':');
  if (!colon) return cli_usage("run", "--arg `%s`: expected TYPE:VALUE, buf:TYPE[N]=INIT or out:TYPE[N]", spec);
  if (strncmp(spec, "buf:", 4) == 0 || strncmp(spec, "out:", 4) == 0) {
    a->kind = spec[0] == 'b' ? A_BUF : A_OUT;
    const char *t = spec + 4, *br = strchr(t, '[');
    if (!br || parse_type(t, (size_t)(br - t), &a->type))
      return cli_usage("run", "--arg `%s`: expected %s:TYPE[N] with TYPE one of i8 u8 i16 u16 i32 u32 i64 u64 f16 bf16 f32 f64",
                       spec, spec[0] == 'b' ? "buf" : "out");
    char *end = NULL;
    unsigned long long n = strtoull(br + 1, &end, 10);
    if (end == br + 1 || *end != ']' || n == 0 || n > (1ull << 34))
      return cli_usage("run", "--arg `%s`: the element count in [N] must be 1..2^34", spec);
    a->count = (size_t)n;
    const char *rest = end + 1;
    if (a->kind == A_OUT) {
      if (*rest) return cli_usage("run", "--arg `%s`: an out buffer takes no initial value (it starts zeroed)", spec);
      return 0;
    }
    if (*rest != '=') return cli_usage("run", "--arg `%s`: expected =INIT after [N] (a number, random or iota)", spec);
    rest++;
    if (strcmp(rest, "random") == 0) a->init = INIT_RANDOM;
    else if (strcmp(rest, "iota") == 0) a->init = INIT_IOTA;
    else if (parse_number(a, rest) != 0)
      return cli_usage("run", "--arg `%s`: `%s` is not a %s value, random or iota", spec, rest, type_names[a->type]);
    return 0;
  }
  a->kind = A_SCALAR;
  if (parse_type(spec, (size_t)(colon - spec), &a->type))
    return cli_usage("run", "--arg `%s`: unknown type `%.*s` (expected i8 u8 i16 u16 i32 u32 i64 u64 f16 bf16 f32 f64, buf or out)",
                     spec, (int)(colon - spec), spec);
  int r = parse_number(a, colon + 1);
  if (r == -2) return cli_usage("run", "--arg `%s`: %s is out of range for %s", spec, colon + 1, type_names[a->type]);
  if (r) return cli_usage("run", "--arg `%s`: `%s` is not a %s value", spec, colon + 1, type_names[a->type]);
  return 0;
}

static uint16_t to_half(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u, mant = x & 0x7fffffu;
  int exp = (int)((x >> 23) & 0xff) - 127 + 15;
  if (((x >> 23) & 0xff) == 0xff) return (uint16_t)(sign | 0x7c00u | (mant ? 0x200u : 0));
  if (exp >= 31) return (uint16_t)(sign | 0x7c00u);
  if (exp <= 0) {
    if (exp < -10) return (uint16_t)sign;
    mant |= 0x800000u;
    uint32_t shift = (uint32_t)(14 - exp);
    uint32_t h = mant >> shift, rem = mant & ((1u << shift) - 1), halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (h & 1))) h++;
    return (uint16_t)(sign | h);
  }
  uint32_t h = sign | ((uint32_t)exp << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1))) h++;
  return (uint16_t)h;
}

static uint16_t to_bf16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40);
  return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1)) >> 16);
}

static float from_half(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ffu, x;
  if (exp == 0) {
    if (!mant) x = sign;
    else {
      int e = -1;
      do { mant <<= 1; e++; } while (!(mant & 0x400u));
      x = sign | ((uint32_t)(127 - 15 - e) << 23) | ((mant & 0x3ffu) << 13);
    }
  } else if (exp == 31) x = sign | 0x7f800000u | (mant << 13);
  else x = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  float f;
  memcpy(&f, &x, 4);
  return f;
}

static float from_bf16(uint16_t b) {
  uint32_t x = (uint32_t)b << 16;
  float f;
  memcpy(&f, &x, 4);
  return f;
}

/* Writes element i of type t with value v into buf. */
static void store(void *buf, elem_t t, size_t i, double v) {
  char *p = (char *)buf + i * (size_t)type_sizes[t];
  switch (t) {
  case T_I8: { int8_t x = (int8_t)v; memcpy(p, &x, 1); break; }
  case T_U8: { uint8_t x = (uint8_t)v; memcpy(p, &x, 1); break; }
  case T_I16: { int16_t x = (int16_t)v; memcpy(p, &x, 2); break; }
  case T_U16: { uint16_t x = (uint16_t)v; memcpy(p, &x, 2); break; }
  case T_I32: { int32_t x = (int32_t)v; memcpy(p, &x, 4); break; }
  case T_U32: { uint32_t x = (uint32_t)v; memcpy(p, &x, 4); break; }
  case T_I64: { int64_t x = (int64_t)v; memcpy(p, &x, 8); break; }
  case T_U64: { uint64_t x = (uint64_t)v; memcpy(p, &x, 8); break; }
  case T_F16: { uint16_t x = to_half((float)v); memcpy(p, &x, 2); break; }
  case T_BF16: { uint16_t x = to_bf16((float)v); memcpy(p, &x, 2); break; }
  case T_F32: { float x = (float)v; memcpy(p, &x, 4); break; }
  case T_F64: memcpy(p, &v, 8); break;
  }
}

static double load(const void *buf, elem_t t, size_t i) {
  const char *p = (const char *)buf + i * (size_t)type_sizes[t];
  switch (t) {
  case T_I8: { int8_t x; memcpy(&x, p, 1); return x; }
  case T_U8: { uint8_t x; memcpy(&x, p, 1); return x; }
  case T_I16: { int16_t x; memcpy(&x, p, 2); return x; }
  case T_U16: { uint16_t x; memcpy(&x, p, 2); return x; }
  case T_I32: { int32_t x; memcpy(&x, p, 4); return x; }
  case T_U32: { uint32_t x; memcpy(&x, p, 4); return x; }
  case T_I64: { int64_t x; memcpy(&x, p, 8); return (double)x; }
  case T_U64: { uint64_t x; memcpy(&x, p, 8); return (double)x; }
  case T_F16: { uint16_t x; memcpy(&x, p, 2); return from_half(x); }
  case T_BF16: { uint16_t x; memcpy(&x, p, 2); return from_bf16(x); }
  case T_F32: { float x; memcpy(&x, p, 4); return x; }
  case T_F64: { double x; memcpy(&x, p, 8); return x; }
  }
  return 0;
}

/* Pushes argument `a` (buffers as their device pointer, 0 before allocation). */
static cucore_status push(cucore_args *args, const run_arg *a) {
  if (a->kind != A_SCALAR) return cucore_args_push_ptr(args, a->ptr);
  switch (a->type) {
  case T_I8: return cucore_args_push_i8(args, (int8_t)a->ivalue);
  case T_U8: return cucore_args_push_u8(args, (uint8_t)a->uvalue);
  case T_I16: return cucore_args_push_i16(args, (int16_t)a->ivalue);
  case T_U16: return cucore_args_push_u16(args, (uint16_t)a->uvalue);
  case T_I32: return cucore_args_push_i32(args, (int32_t)a->ivalue);
  case T_U32: return cucore_args_push_u32(args, (uint32_t)a->uvalue);
  case T_I64: return cucore_args_push_i64(args, a->ivalue);
  case T_U64: return cucore_args_push_u64(args, a->uvalue);
  case T_F16: return cucore_args_push_f16(args, to_half((float)a->fvalue));
  case T_BF16: return cucore_args_push_bf16(args, to_bf16((float)a->fvalue));
  case T_F32: return cucore_args_push_f32(args, (float)a->fvalue);
  case T_F64: return cucore_args_push_f64(args, a->fvalue);
  }
  return CUCORE_INTERNAL;
}

static int bind_all(cucore_args *args, run_arg *list, int n, const char *kernel) {
  cucore_args_reset(args);
  for (int i = 0; i < n; i++) {
    cucore_status st = push(args, &list[i]);
    if (st != CUCORE_OK) {
      fprintf(stderr, "cucore run: --arg %s: %s\n", list[i].spec, cucore_last_error());
      return CLI_EXIT_FAILURE;
    }
  }
  cucore_status st = cucore_args_check(args);
  if (st != CUCORE_OK) {
    fprintf(stderr, "cucore run: %s\n", cucore_last_error());
    (void)kernel;
    return CLI_EXIT_FAILURE;
  }
  return 0;
}


static int cmp_float(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return x < y ? -1 : x > y;
}

#define RUN_MAX_ARGS 64

static int run_body(cli_source *srcp, int argc, char **argv) {
  const char *file = NULL, *kernel = NULL;
  unsigned grid[3] = {0, 0, 0}, block[3] = {0, 0, 0}, cluster[3] = {0, 0, 0};
  long long smem = 0, repeat = 1;
  int cooperative = 0, json = 0, nargs = 0, have_grid = 0, have_block = 0;
  run_arg args[RUN_MAX_ARGS];
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "--json") == 0) json = 1;
    else if (strcmp(a, "--cooperative") == 0) cooperative = 1;
    else if (!strcmp(a, "--kernel") || !strcmp(a, "--grid") || !strcmp(a, "--block") ||
             !strcmp(a, "--smem") || !strcmp(a, "--cluster") || !strcmp(a, "--repeat") ||
             !strcmp(a, "--arg")) {
      if (!v) return cli_usage("run", "%s needs a value; see `cucore help run`", a);
      i++;
      char *end = NULL;
      if (!strcmp(a, "--kernel")) kernel = v;
      else if (!strcmp(a, "--grid")) {
        if (cli_parse_dims(v, grid, 0x7fffffffu)) return cli_usage("run", "--grid `%s`: expected X[,Y[,Z]] of positive numbers", v);
        have_grid = 1;
      } else if (!strcmp(a, "--block")) {
        if (cli_parse_dims(v, block, 0x7fffffffu)) return cli_usage("run", "--block `%s`: expected X[,Y[,Z]] of positive numbers", v);
        have_block = 1;
      } else if (!strcmp(a, "--cluster")) {
        if (cli_parse_dims(v, cluster, 65535)) return cli_usage("run", "--cluster `%s`: expected X[,Y[,Z]]", v);
      } else if (!strcmp(a, "--smem")) {
        smem = strtoll(v, &end, 10);
        if (*end || smem < 0 || smem > 0x7fffffff) return cli_usage("run", "--smem `%s`: expected bytes >= 0", v);
      } else if (!strcmp(a, "--repeat")) {
        repeat = strtoll(v, &end, 10);
        if (*end || repeat < 1 || repeat > 1000000) return cli_usage("run", "--repeat `%s`: expected 1..1000000", v);
      } else {
        if (nargs == RUN_MAX_ARGS) return cli_usage("run", "more than %d --arg", RUN_MAX_ARGS);
        int rc = parse_arg(v, &args[nargs]);
        if (rc) return rc;
        nargs++;
      }
    } else if (a[0] == '-' && a[1]) {
      int used = cli_source_option(srcp, "run", argc, argv, i);
      if (used <= 0) return used < 0 ? CLI_EXIT_USAGE : cli_usage("run", "unknown option `%s`", a);
      i += used - 1;
    } else if (file) {
      return cli_usage("run", "one FILE only (got `%s` and `%s`)", file, a);
    } else {
      file = a;
    }
  }
  if (!file || !kernel || !have_grid || !have_block)
    return cli_usage("run", "FILE, --kernel, --grid and --block are required; see `cucore help run`");

  /* 1. The code and the kernel -- offline when there is no GPU. */
  cucore_object *obj = NULL;
  const char *dot = strrchr(file, '.');
  int rc = 0;
  if (dot && (!strcmp(dot, ".cu") || !strcmp(dot, ".ll") || !strcmp(dot, ".bc"))) {
    if (!strcmp(dot, ".cu") && cli_source_add_expr(srcp, kernel)) return CLI_EXIT_FAILURE;
    rc = cli_source_compile(srcp, "run", file, CUCORE_CODE_CUBIN, &obj, NULL);
  } else {
    cucore_status st = cucore_object_from_file(file, CUCORE_CODE_AUTO, &obj);
    if (st != CUCORE_OK) rc = cli_fail("run", file, st);
  }
  cli_source_free(srcp);
  if (rc) return rc;
  cucore_kernel *k = NULL;
  cucore_args *list = NULL;
  cucore_device *dev = NULL;
  cucore_stream *stream = NULL;
  cucore_event *e0 = NULL, *e1 = NULL;
  float *times = NULL;
  cucore_status st = cucore_object_get_kernel(obj, kernel, &k);
  if (st != CUCORE_OK) {
    rc = cli_fail("run", file, st);
    goto done;
  }
  st = cucore_args_create(k, &list);
  if (st != CUCORE_OK) {
    rc = cli_fail("run", kernel, st);
    goto done;
  }
  /* 2. The arguments against the kernel, before any GPU is opened. */
  rc = bind_all(list, args, nargs, kernel);
  if (rc) goto done;
  int ndev = 0;
  if (cucore_device_count(&ndev) != CUCORE_OK || ndev == 0) {
    fprintf(stderr, "cucore run: the %d arguments match kernel `%s`; no GPU here (%s), so nothing "
                    "was launched\n", nargs, kernel,
            ndev == 0 && !cucore_last_error()[0] ? "no device" : cucore_last_error());
    rc = CLI_EXIT_FAILURE;
    goto done;
  }
  /* 3. Buffers, launch, results. */
  if ((st = cucore_device_open(0, &dev)) != CUCORE_OK ||
      (st = cucore_stream_create(dev, CUCORE_STREAM_NON_BLOCKING, 0, &stream)) != CUCORE_OK ||
      (st = cucore_event_create(dev, 0, &e0)) != CUCORE_OK ||
      (st = cucore_event_create(dev, 0, &e1)) != CUCORE_OK) {
    rc = cli_fail("run", "opening the GPU", st);
    goto done;
  }
  uint64_t seed = 0x9e3779b97f4a7c15ull;
  for (int i = 0; i < nargs; i++) {
    run_arg *a = &args[i];
    if (a->kind == A_SCALAR) continue;
    size_t bytes = a->count * (size_t)type_sizes[a->type];
    if ((st = cucore_mem_alloc(dev, bytes, &a->ptr)) != CUCORE_OK) {
      rc = cli_fail("run", a->spec, st);
      goto done;
    }
    if (a->kind == A_OUT) {
      st = cucore_memset_d8(dev, a->ptr, 0, bytes, NULL);
    } else {
      void *host = malloc(bytes);
      if (!host) { rc = CLI_EXIT_FAILURE; goto done; }
      for (size_t e = 0; e < a->count; e++) {
        double v = a->init == INIT_IOTA ? (double)e
                   : a->init == INIT_VALUE ? (is_float(a->type) ? a->fvalue : (double)a->ivalue)
                                           : 0;
        if (a->init == INIT_RANDOM) {
          seed ^= seed << 13; seed ^= seed >> 7; seed ^= seed << 17;
          v = is_float(a->type) ? (double)(seed >> 11) / 9007199254740992.0 : (double)(seed % 100);
        }
        store(host, a->type, e, v);
      }
      st = cucore_memcpy_htod(dev, a->ptr, host, bytes, NULL);
      free(host);
    }
    if (st != CUCORE_OK) {
      rc = cli_fail("run", a->spec, st);
      goto done;
    }
  }
  rc = bind_all(list, args, nargs, kernel);
  if (rc) goto done;
  cucore_launch_config cfg;
  memset(&cfg, 0, sizeof cfg);
  memcpy(cfg.grid, grid, sizeof grid);
  memcpy(cfg.block, block, sizeof block);
  cfg.shared_bytes = (unsigned)smem;
  cfg.stream = stream;
  if (cluster[0]) cucore_launch_config_cluster(&cfg, cluster[0], cluster[1], cluster[2]);
  if (cooperative) cucore_launch_config_cooperative(&cfg, 1);
  times = calloc((size_t)repeat, sizeof *times);
  if (!times) { rc = CLI_EXIT_FAILURE; goto done; }
  for (long long r = 0; r < repeat; r++) {
    if ((st = cucore_event_record(e0, stream)) != CUCORE_OK ||
        (st = cucore_launch(k, &cfg, list)) != CUCORE_OK ||
        (st = cucore_event_record(e1, stream)) != CUCORE_OK ||
        (st = cucore_event_synchronize(e1)) != CUCORE_OK ||
        (st = cucore_event_elapsed_ms(e0, e1, &times[r])) != CUCORE_OK) {
      rc = cli_fail("run", kernel, st);
      goto done;
    }
  }
  qsort(times, (size_t)repeat, sizeof *times, cmp_float);
  float median = times[repeat / 2];
  json_out j = {stdout, 0, {0}, 1};
  if (json) {
    json_begin_object(&j, NULL);
    json_str(&j, "kernel", kernel);
    json_int(&j, "launches", repeat);
    json_num(&j, "ms_per_launch", median);
    json_begin_array(&j, "outputs");
  } else {
    printf("%s: grid %ux%ux%u, block %ux%ux%u, %lld B dynamic shared: %.4f ms per launch "
           "(median of %lld)\n", kernel, grid[0], grid[1], grid[2], block[0], block[1], block[2],
           smem, median, repeat);
  }
  for (int i = 0; i < nargs; i++) {
    run_arg *a = &args[i];
    if (a->kind != A_OUT) continue;
    size_t bytes = a->count * (size_t)type_sizes[a->type];
    void *host = malloc(bytes);
    if (!host || (st = cucore_memcpy_dtoh(dev, host, a->ptr, bytes, NULL)) != CUCORE_OK) {
      free(host);
      rc = host ? cli_fail("run", a->spec, st) : CLI_EXIT_FAILURE;
      goto done;
    }
    double sum = 0, lo = INFINITY, hi = -INFINITY;
    for (size_t e = 0; e < a->count; e++) {
      double v = load(host, a->type, e);
      sum += v;
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    }
    if (json) {
      json_begin_object(&j, NULL);
      json_int(&j, "argument", i);
      json_str(&j, "spec", a->spec);
      json_num(&j, "sum", sum);
      json_num(&j, "min", lo);
      json_num(&j, "max", hi);
      json_begin_array(&j, "first");
      for (size_t e = 0; e < a->count && e < 8; e++) json_num(&j, NULL, load(host, a->type, e));
      json_end_array(&j);
      json_end_object(&j);
    } else {
      printf("  argument %d (%s): sum %.9g, min %.9g, max %.9g; first:", i, a->spec, sum, lo, hi);
      for (size_t e = 0; e < a->count && e < 8; e++) printf(" %.6g", load(host, a->type, e));
      printf("%s\n", a->count > 8 ? " ..." : "");
    }
    free(host);
  }
  if (json) {
    json_end_array(&j);
    json_end_object(&j);
  }
done:
  free(times);
  for (int i = 0; i < nargs; i++)
    if (args[i].ptr) cucore_mem_free(dev, args[i].ptr);
  cucore_event_destroy(e0);
  cucore_event_destroy(e1);
  cucore_stream_destroy(stream);
  cucore_args_destroy(list);
  cucore_kernel_destroy(k);
  cucore_object_destroy(obj);
  cucore_device_close(dev);
  return rc;
}

/* Every exit path frees the verb's options, early usage errors included. */
int cmd_run(int argc, char **argv) {
  cli_source src;
  if (cli_source_init(&src)) return CLI_EXIT_FAILURE;
  int rc = run_body(&src, argc, argv);
  cli_source_free(&src);
  return rc;
}
