/*
 * strided_copy.c -- a copy between two layouts of one tensor (shape, and strides in elements
 * for each side, as DLPack gives them): every element of the shape moved from its place in the
 * source to its place in the destination on the device, by a small kernel compiled once with
 * NVRTC to PTX and loaded as a context-independent library (cuLibraryLoadData), launched on the
 * caller's stream. Two layouts that are the same dense one become a plain copy. Each side's
 * footprint (its lowest and highest element) is checked against its allocation first, and
 * overlapping sides are refused.
 */
#include "memory/memory.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_DIMS = 8 };

/* The kernel's one parameter (laid out the same in C and in the CUDA source below). */
typedef struct strided_plan {
  uint64_t shape[MAX_DIMS];
  int64_t src[MAX_DIMS];
  int64_t dst[MAX_DIMS];
  uint32_t ndim, elem;
} strided_plan;

static const char kernel_source[] =
    "struct plan { unsigned long long shape[8]; long long src[8]; long long dst[8];\n"
    "              unsigned ndim, elem; };\n"
    "extern \"C\" __global__ void cc_strided_copy(char *dst, const char *src, plan p,\n"
    "                                             unsigned long long total) {\n"
    "  unsigned long long step = (unsigned long long)gridDim.x * blockDim.x;\n"
    "  for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
    "       i < total; i += step) {\n"
    "    unsigned long long idx = i; long long so = 0, dof = 0;\n"
    "    for (int k = (int)p.ndim - 1; k >= 0; k--) {\n"
    "      unsigned long long c = idx % p.shape[k]; idx /= p.shape[k];\n"
    "      so += (long long)c * p.src[k]; dof += (long long)c * p.dst[k]; }\n"
    "    const char *s = src + so * (long long)p.elem; char *t = dst + dof * (long long)p.elem;\n"
    "    switch (p.elem) {\n"
    "    case 1: *t = *s; break;\n"
    "    case 2: *(short *)t = *(const short *)s; break;\n"
    "    case 4: *(int *)t = *(const int *)s; break;\n"
    "    case 8: *(long long *)t = *(const long long *)s; break;\n"
    "    default: *(int4 *)t = *(const int4 *)s; } } }\n";

/* ---- the kernel, made once ------------------------------------------------------------------ */

static pthread_once_t kernel_once = PTHREAD_ONCE_INIT;
static CUkernel kernel;
static cucore_status kernel_status;
static char kernel_message[512];

static cucore_status compile_ptx(char **ptx) {
  cucore_status st = cc_nvrtc_load();
  if (st != CUCORE_OK) return st;
  nvrtcProgram prog = NULL;
  nvrtcResult r = NVRTC(nvrtcCreateProgram)(&prog, kernel_source, "cc_strided_copy.cu", 0, NULL,
                                            NULL);
  if (r != NVRTC_SUCCESS) return cc_fail_nvrtc(r, "nvrtcCreateProgram", "the strided copy kernel");
  const char *opts[] = {"--gpu-architecture=compute_75"}; /* CUDA 13's oldest: JIT for the rest */
  r = NVRTC(nvrtcCompileProgram)(prog, 1, opts);
  size_t size = 0;
  if (r == NVRTC_SUCCESS) r = NVRTC(nvrtcGetPTXSize)(prog, &size);
  *ptx = r == NVRTC_SUCCESS ? malloc(size ? size : 1) : NULL;
  if (r == NVRTC_SUCCESS && *ptx) r = NVRTC(nvrtcGetPTX)(prog, *ptx);
  NVRTC(nvrtcDestroyProgram)(&prog);
  if (r != NVRTC_SUCCESS) {
    free(*ptx);
    *ptx = NULL;
    return cc_fail_nvrtc(r, "nvrtcCompileProgram", "the strided copy kernel");
  }
  return *ptx ? CUCORE_OK : cc_fail(CUCORE_HOST_OUT_OF_MEMORY, "out of memory for PTX");
}

static void make_kernel(void) {
  char *ptx = NULL;
  cucore_status st = compile_ptx(&ptx);
  CUlibrary lib = NULL;
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuLibraryLoadData);
  if (st == CUCORE_OK) {
    CUresult r = DRV(cuLibraryLoadData)(&lib, ptx, NULL, NULL, 0, NULL, NULL, 0);
    if (r == CUDA_SUCCESS) r = DRV(cuLibraryGetKernel)(&kernel, lib, "cc_strided_copy");
    if (r != CUDA_SUCCESS) st = cc_fail_cu(r, "cuLibraryLoadData", "the strided copy kernel");
  }
  free(ptx);
  kernel_status = st;
  if (st != CUCORE_OK) snprintf(kernel_message, sizeof kernel_message, "%s", cucore_last_error());
}

/* ---- the checks ----------------------------------------------------------------------------- */

/* The lowest and one past the highest byte one side touches, relative to its base. */
static int footprint(const uint64_t *shape, const int64_t *strides, unsigned ndim, unsigned elem,
                     int64_t *lo, int64_t *hi) {
  __int128 a = 0, b = 0;
  for (unsigned k = 0; k < ndim; k++) {
    __int128 span = (__int128)(shape[k] - 1) * strides[k];
    if (span < 0)
      a += span;
    else
      b += span;
  }
  a *= elem;
  b = b * elem + elem;
  if (a < INT64_MIN || b > INT64_MAX) return 0;
  *lo = (int64_t)a;
  *hi = (int64_t)b;
  return 1;
}

static cucore_status check_side(cucore_devptr base, const uint64_t *shape, const int64_t *strides,
                                unsigned ndim, unsigned elem, const char *role, uint64_t *first,
                                uint64_t *end, const char *fn) {
  if (!base) return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: the %s address is 0", fn, role);
  if (!strides) return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: the %s strides are NULL", fn, role);
  if (base % elem)
    return cc_fail(CUCORE_ARG_ALIGNMENT, "%s: the %s address 0x%llx is not aligned to its %u-byte "
                                         "elements",
                   fn, role, (unsigned long long)base, elem);
  int64_t lo = 0, hi = 0;
  if (!footprint(shape, strides, ndim, elem, &lo, &hi) || lo < -(int64_t)base)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: the %s strides reach outside the address space from 0x%llx", fn, role,
                   (unsigned long long)base);
  *first = base + (uint64_t)lo;
  *end = base + (uint64_t)hi;
  return cc_mem_check_range(*first, *end - *first, fn, role);
}

static cucore_status check_shape(const uint64_t *shape, unsigned ndim, unsigned elem,
                                 uint64_t *total, const char *fn) {
  if (ndim < 1 || ndim > MAX_DIMS)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: %u dimensions (expected 1..%d)", fn, ndim,
                   MAX_DIMS);
  if (elem != 1 && elem != 2 && elem != 4 && elem != 8 && elem != 16)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: elements of %u bytes (expected 1, 2, 4, 8 or 16)",
                   fn, elem);
  if (!shape) return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: `shape` is NULL", fn);
  *total = 1;
  for (unsigned k = 0; k < ndim; k++)
    if (!shape[k] || !cc_mul_u64(*total, shape[k], total))
      return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: shape[%u] is %llu%s", fn, k,
                     (unsigned long long)shape[k],
                     shape[k] ? " (the element count overflows)" : " (each at least 1)");
  return CUCORE_OK;
}

/* 1 when both sides are the same dense row-major layout (a plain copy). */
static int both_dense(const uint64_t *shape, const int64_t *a, const int64_t *b, unsigned ndim) {
  int64_t want = 1;
  for (int k = (int)ndim - 1; k >= 0; k--) {
    if (shape[k] > 1 && (a[k] != want || b[k] != want)) return 0;
    want *= (int64_t)shape[k];
  }
  return 1;
}

static cucore_status launch(cucore_devptr dst, cucore_devptr src, const strided_plan *p,
                            uint64_t total, cucore_stream *s, const char *fn) {
  pthread_once(&kernel_once, make_kernel);
  if (kernel_status != CUCORE_OK)
    return cc_fail(kernel_status, "%s: the strided copy kernel could not be made: %s", fn,
                   kernel_message);
  unsigned block = 256;
  uint64_t blocks = (total + block - 1) / block;
  unsigned grid = blocks > 65535u * 8 ? 65535u * 8 : (unsigned)blocks;
  void *params[] = {(void *)&dst, (void *)&src, (void *)p, (void *)&total};
  CUresult r = DRV(cuLaunchKernel)((CUfunction)kernel, grid, 1, 1, block, 1, 1, 0,
                                   s ? s->handle : NULL, params, NULL);
  return r == CUDA_SUCCESS ? CUCORE_OK
                           : cc_fail_cu(r, "cuLaunchKernel", "%s: %llu elements", fn,
                                        (unsigned long long)total);
}

cucore_status cucore_memcpy_strided(cucore_device *dev, cucore_devptr dst,
                                    const int64_t *dst_strides, cucore_devptr src,
                                    const int64_t *src_strides, const uint64_t *shape,
                                    unsigned ndim, unsigned elem_bytes, cucore_stream *s) {
  cc_begin();
  const char *fn = "cucore_memcpy_strided";
  uint64_t total = 0, d0 = 0, d1 = 0, s0 = 0, s1 = 0;
  cucore_status st = cc_mem_work_check(dev, s, fn);
  if (st == CUCORE_OK) st = check_shape(shape, ndim, elem_bytes, &total, fn);
  if (st == CUCORE_OK)
    st = check_side(dst, shape, dst_strides, ndim, elem_bytes, "destination", &d0, &d1, fn);
  if (st == CUCORE_OK)
    st = check_side(src, shape, src_strides, ndim, elem_bytes, "source", &s0, &s1, fn);
  if (st != CUCORE_OK) return st;
  if (d0 < s1 && s0 < d1)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: the destination [0x%llx, 0x%llx) and the source [0x%llx, 0x%llx) "
                   "overlap; a layout conversion needs two buffers",
                   fn, (unsigned long long)d0, (unsigned long long)d1, (unsigned long long)s0,
                   (unsigned long long)s1);
  st = cc_device_make_current(dev);
  if (st != CUCORE_OK) return st;
  if (both_dense(shape, dst_strides, src_strides, ndim)) {
    CUresult r = s ? DRV(cuMemcpyAsync)((CUdeviceptr)dst, (CUdeviceptr)src, total * elem_bytes,
                                        s->handle)
                   : DRV(cuMemcpy)((CUdeviceptr)dst, (CUdeviceptr)src, total * elem_bytes);
    return r == CUDA_SUCCESS ? CUCORE_OK : cc_fail_cu(r, "cuMemcpy", "%s", fn);
  }
  strided_plan p;
  memset(&p, 0, sizeof p);
  memcpy(p.shape, shape, ndim * sizeof *shape);
  memcpy(p.src, src_strides, ndim * sizeof *src_strides);
  memcpy(p.dst, dst_strides, ndim * sizeof *dst_strides);
  p.ndim = ndim;
  p.elem = elem_bytes;
  st = launch(dst, src, &p, total, s, fn);
  if (st != CUCORE_OK || s) return st;
  return cc_mem_finish_sync("strided copy");
}
