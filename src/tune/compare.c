/* compare.c -- the first differing byte of two device buffers, found on the device: 16 bytes
 * a thread at a time where both are 16-byte aligned, single bytes for the rest; atomicMin
 * keeps the lowest offset. Block 0's first thread also marks the run, so a driver that runs
 * no kernel is told from two equal buffers. */
#include "tune/compare.h"

#include <stdlib.h>

#define CMP_KERNEL "cucore_tune_first_difference"
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
    "}\n";

struct cc_tune_cmp {
  cucore_device *dev;
  cucore_object *obj;
  cucore_kernel *k;
  cucore_args *args;
  cucore_devptr result;       /* [0] the first difference, [1] 1 once the kernel ran */
  unsigned long long *pinned; /* its copy on the host */
  unsigned blocks;
};

cucore_status cc_tune_cmp_compile(cucore_object **obj) {
  cucore_program *p = NULL;
  *obj = NULL;
  cucore_status st = cucore_program_create(CUCORE_CODE_CUDA_CPP, cmp_source, sizeof cmp_source - 1,
                                           "cucore_tune_compare.cu", NULL, &p);
  if (st == CUCORE_OK) st = cucore_program_compile(p, CUCORE_CODE_CUBIN, obj);
  cucore_program_destroy(p);
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

cucore_status cc_tune_cmp_run(cc_tune_cmp *c, cucore_stream *s, cucore_devptr a, cucore_devptr b,
                              size_t bytes, size_t *first) {
  *first = bytes;
  if (!bytes) return CUCORE_OK;
  cucore_launch_config cfg = {{c->blocks, 1, 1}, {CMP_THREADS, 1, 1}, 0, s, 0, {{0}}};
  cucore_status st = cucore_memset_d32(c->dev, c->result, 0xffffffffu, 2, s);
  if (st == CUCORE_OK) st = cucore_memset_d32(c->dev, c->result + 8, 0, 2, s);
  if (st == CUCORE_OK) st = bind(c, a, b, bytes);
  if (st == CUCORE_OK) st = cucore_launch(c->k, &cfg, c->args);
  if (st == CUCORE_OK)
    st = cucore_memcpy_dtoh(c->dev, c->pinned, c->result, 2 * sizeof *c->pinned, s);
  if (st == CUCORE_OK) st = cucore_stream_synchronize(s);
  if (st != CUCORE_OK) return st;
  if (c->pinned[1] != 1)
    return cc_fail(CUCORE_NOT_SUPPORTED,
                   "the comparison kernel wrote nothing back (a driver that runs no kernels?)");
  *first = c->pinned[0] < bytes ? (size_t)c->pinned[0] : bytes;
  return CUCORE_OK;
}
