/* compare.c -- two device buffers compared on the device. The first differing byte: 16 bytes
 * a thread at a time where both are 16-byte aligned, single bytes for the rest; atomicMin
 * keeps the lowest offset. And, for floating-point elements whose bytes differ, how many lie
 * outside rtol/atol by cucore_compare_elements' rule, to the bit: the same decoding (half and
 * bfloat16 exactly), the same double arithmetic, compiled without fused multiply-adds as the
 * host's C is (ISO C11: no contraction). Block 0's first thread also marks each run, so a
 * driver that runs no kernel is told from two equal buffers. */
#include "tune/compare.h"

#include <stdlib.h>

#define CMP_KERNEL "cucore_tune_first_difference"
#define WITHIN_KERNEL "cucore_tune_count_outside"
#define CMP_THREADS 256

static const char cmp_source[] =
    "extern \"C\" __global__ void " CMP_KERNEL "(\n"
    "    const uint4 *a, const uint4 *b, unsigned long long n16, const unsigned char *ab,\n"
    "    const unsigned char *bb, unsigned long long from, unsigned long long bytes,\n"
    "    unsigned long long *out) {\n"
    "  unsigned long long t = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;\n"
    "  unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;\n"
    "  if (t == 0) out[1] = 1ull;\n"
    "  for (unsigned long long i = t; i < n16; i += stride) {\n"
    "    uint4 x = a[i], y = b[i];\n"
    "    unsigned d[4] = {x.x ^ y.x, x.y ^ y.y, x.z ^ y.z, x.w ^ y.w};\n"
    "    for (int w = 0; w < 4; w++)\n"
    "      if (d[w]) {\n"
    "        atomicMin(out, i * 16 + w * 4 + (unsigned)((__ffs(d[w]) - 1) >> 3));\n"
    "        break;\n"
    "      }\n"
    "  }\n"
    "  for (unsigned long long i = from + t; i < bytes; i += stride)\n"
    "    if (ab[i] != bb[i]) atomicMin(out, i);\n"
    "}\n"
    /* kind 0 float, 1 double, 2 half, 3 bfloat16 (cc_tune_cmp_kind) */
    "__device__ double cucore_elem(const void *p, unsigned long long k, int kind) {\n"
    "  if (kind == 0) return (double)((const float *)p)[k];\n"
    "  if (kind == 1) return ((const double *)p)[k];\n"
    "  unsigned h = ((const unsigned short *)p)[k];\n"
    "  if (kind == 3) return (double)__uint_as_float(h << 16);\n"
    "  int e = (h >> 10) & 31, m = h & 1023;\n"
    "  double v = e == 0 ? ldexp((double)m, -24)\n"
    "           : e == 31 ? (m ? __longlong_as_double(0x7ff8000000000000ll)\n"
    "                          : __longlong_as_double(0x7ff0000000000000ll))\n"
    "                     : ldexp((double)(m + 1024), e - 25);\n"
    "  return (h & 0x8000) ? -v : v;\n"
    "}\n"
    "extern \"C\" __global__ void " WITHIN_KERNEL "(\n"
    "    const void *got, const void *want, unsigned long long count, int kind, double rtol,\n"
    "    double atol, unsigned long long *out) {\n"
    "  unsigned long long t = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;\n"
    "  unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x, bad = 0;\n"
    "  if (t == 0) out[1] = 1ull;\n"
    "  for (unsigned long long i = t; i < count; i += stride) {\n"
    "    double g = cucore_elem(got, i, kind), w = cucore_elem(want, i, kind);\n"
    "    int ok = isnan(g) || isnan(w) ? isnan(g) && isnan(w)\n"
    "           : isinf(g) || isinf(w) ? g == w\n"
    "                                  : fabs(g - w) <= atol + rtol * fabs(w);\n"
    "    bad += !ok;\n"
    "  }\n"
    "  if (bad) atomicAdd(out, bad);\n"
    "}\n";

struct cc_tune_cmp {
  cucore_device *dev;
  cucore_object *obj;
  cucore_kernel *k, *within;
  cucore_args *args, *within_args;
  cucore_devptr result;       /* [0] the first difference, [1] 1 once the kernel ran */
  unsigned long long *pinned; /* its copy on the host */
  unsigned blocks;
};

cucore_status cc_tune_cmp_compile(cucore_object **obj) {
  cucore_program *p = NULL;
  cucore_options *opts = NULL;
  *obj = NULL;
  cucore_status st = cucore_options_create(&opts);
  if (st == CUCORE_OK) st = cucore_options_set_int(opts, CUCORE_OPT_FMAD, 0); /* as the host */
  if (st == CUCORE_OK)
    st = cucore_program_create(CUCORE_CODE_CUDA_CPP, cmp_source, sizeof cmp_source - 1,
                               "cucore_tune_compare.cu", opts, &p);
  if (st == CUCORE_OK) st = cucore_program_compile(p, CUCORE_CODE_CUBIN, obj);
  cucore_program_destroy(p);
  cucore_options_destroy(opts);
  return st;
}

cucore_status cc_tune_cmp_create(cucore_device *dev, cucore_object *obj, cc_tune_cmp **out) {
  *out = NULL;
  cc_tune_cmp *c = cc_malloc(sizeof *c, "the device comparison");
  if (!c) {
    cucore_object_destroy(obj);
    return CUCORE_HOST_OUT_OF_MEMORY;
  }
  *c = (cc_tune_cmp){.dev = dev, .obj = obj};
  int ordinal = 0;
  cucore_device_props props;
  cucore_status st = cucore_device_get_ordinal(dev, &ordinal);
  if (st == CUCORE_OK) st = cucore_device_get_props(ordinal, &props);
  if (st == CUCORE_OK) c->blocks = (unsigned)(props.sm_count > 0 ? props.sm_count : 1) * 4;
  if (st == CUCORE_OK && !c->obj) st = cc_tune_cmp_compile(&c->obj);
  if (st == CUCORE_OK) st = cucore_object_get_kernel(c->obj, CMP_KERNEL, &c->k);
  if (st == CUCORE_OK) st = cucore_args_create(c->k, &c->args);
  if (st == CUCORE_OK) st = cucore_object_get_kernel(c->obj, WITHIN_KERNEL, &c->within);
  if (st == CUCORE_OK) st = cucore_args_create(c->within, &c->within_args);
  if (st == CUCORE_OK) st = cucore_mem_alloc(dev, 2 * sizeof(unsigned long long), &c->result);
  if (st == CUCORE_OK)
    st = cucore_host_alloc(dev, 2 * sizeof(unsigned long long), (void **)&c->pinned);
  if (st != CUCORE_OK) {
    cc_tune_cmp_destroy(c);
    return st;
  }
  *out = c;
  return CUCORE_OK;
}

void cc_tune_cmp_destroy(cc_tune_cmp *c) {
  if (!c) return;
  cucore_args_destroy(c->args);
  cucore_kernel_destroy(c->k);
  cucore_args_destroy(c->within_args);
  cucore_kernel_destroy(c->within);
  cucore_object_destroy(c->obj);
  if (c->result) cucore_mem_free(c->dev, c->result);
  if (c->pinned) cucore_host_free(c->dev, c->pinned);
  free(c);
}

static cucore_status bind(cc_tune_cmp *c, cucore_devptr a, cucore_devptr b, size_t bytes) {
  uint64_t n16 = ((a | b) & 15) ? 0 : bytes / 16;
  cucore_status st = cucore_args_set_ptr(c->args, 0, a);
  if (st == CUCORE_OK) st = cucore_args_set_ptr(c->args, 1, b);
  if (st == CUCORE_OK) st = cucore_args_set_u64(c->args, 2, n16);
  if (st == CUCORE_OK) st = cucore_args_set_ptr(c->args, 3, a);
  if (st == CUCORE_OK) st = cucore_args_set_ptr(c->args, 4, b);
  if (st == CUCORE_OK) st = cucore_args_set_u64(c->args, 5, n16 * 16);
  if (st == CUCORE_OK) st = cucore_args_set_u64(c->args, 6, bytes);
  if (st == CUCORE_OK) st = cucore_args_set_ptr(c->args, 7, c->result);
  return st;
}

/* Launches `k` with `args` on `s` over c->result (cleared first: [0] to `init0`, [1] to 0),
 * then reads the result back into c->pinned; CUCORE_NOT_SUPPORTED when the kernel did not
 * run. */
static cucore_status run_and_read(cc_tune_cmp *c, cucore_stream *s, cucore_kernel *k,
                                  cucore_args *args, unsigned init0) {
  cucore_launch_config cfg = {{c->blocks, 1, 1}, {CMP_THREADS, 1, 1}, 0, s, 0, {{0}}};
  cucore_status st = cucore_memset_d32(c->dev, c->result, init0, 2, s);
  if (st == CUCORE_OK) st = cucore_memset_d32(c->dev, c->result + 8, 0, 2, s);
  if (st == CUCORE_OK) st = cucore_launch(k, &cfg, args);
  if (st == CUCORE_OK)
    st = cucore_memcpy_dtoh(c->dev, c->pinned, c->result, 2 * sizeof *c->pinned, s);
  if (st == CUCORE_OK) st = cucore_stream_synchronize(s);
  if (st != CUCORE_OK) return st;
  if (c->pinned[1] != 1)
    return cc_fail(CUCORE_NOT_SUPPORTED,
                   "the comparison kernel wrote nothing back (a driver that runs no kernels?)");
  return CUCORE_OK;
}

cucore_status cc_tune_cmp_run(cc_tune_cmp *c, cucore_stream *s, cucore_devptr a, cucore_devptr b,
                              size_t bytes, size_t *first) {
  *first = bytes;
  if (!bytes) return CUCORE_OK;
  cucore_status st = bind(c, a, b, bytes);
  if (st == CUCORE_OK) st = run_and_read(c, s, c->k, c->args, 0xffffffffu);
  if (st == CUCORE_OK) *first = c->pinned[0] < bytes ? (size_t)c->pinned[0] : bytes;
  return st;
}

int cc_tune_cmp_kind(int code, size_t elem_size) {
  if (code == CUCORE_DTYPE_BFLOAT && elem_size == 2) return 3;
  if (code != CUCORE_DTYPE_FLOAT) return -1;
  return elem_size == 4 ? 0 : elem_size == 8 ? 1 : elem_size == 2 ? 2 : -1;
}

cucore_status cc_tune_cmp_within(cc_tune_cmp *c, cucore_stream *s, cucore_devptr got,
                                 cucore_devptr want, size_t count, int kind, double rtol,
                                 double atol, size_t *outside) {
  *outside = count;
  if (!count) return *outside = 0, CUCORE_OK;
  cucore_status st = cucore_args_set_ptr(c->within_args, 0, got);
  if (st == CUCORE_OK) st = cucore_args_set_ptr(c->within_args, 1, want);
  if (st == CUCORE_OK) st = cucore_args_set_u64(c->within_args, 2, count);
  if (st == CUCORE_OK) st = cucore_args_set_i32(c->within_args, 3, kind);
  if (st == CUCORE_OK) st = cucore_args_set_f64(c->within_args, 4, rtol);
  if (st == CUCORE_OK) st = cucore_args_set_f64(c->within_args, 5, atol);
  if (st == CUCORE_OK) st = cucore_args_set_ptr(c->within_args, 6, c->result);
  if (st == CUCORE_OK) st = run_and_read(c, s, c->within, c->within_args, 0);
  if (st == CUCORE_OK) *outside = c->pinned[0] < count ? (size_t)c->pinned[0] : count;
  return st;
}
