/* fake_copy_batch.c -- the fake driver's batched and attributed copies (part of
 * libcucore_fake_driver; looked up by fake_driver.c's fake_extra_symbol, so CUCORE_FAKE_HIDE
 * hides them as an older driver would): cuMemcpyBatchAsync and cuMemcpy3DBatchAsync at CUDA
 * 12.8's ABI (with the failed copy's index; absent when CUCORE_FAKE_DRIVER_VERSION is below
 * 12080) and, when CUCORE_FAKE_DRIVER_VERSION is 13020 or more, CUDA 13.2's
 * cuMemcpyWithAttributesAsync and cuMemcpy3DWithAttributesAsync (3D operations between
 * addresses only: an array operand is CUDA_ERROR_NOT_SUPPORTED here). "Device" memory is host
 * memory, so the copies really move bytes. The argument rules are the driver's as documented
 * (a stream that is not the legacy one, a first attribute index of 0, increasing indices below
 * the count, at most one set per copy, a source access order of 1..3, flags 0 or 1; for 3D
 * batches, flags 0); a broken rule is CUDA_ERROR_INVALID_VALUE with no
 * copy named (failIdx SIZE_MAX). CUCORE_FAKE_COPY_FAIL_AT=K makes copy K of a batch fail with
 * CUDA_ERROR_INVALID_VALUE, naming it, after the copies before it were made. fake_copy_stats()
 * (dlsym) says how many calls each entry point took and what the last batch was given. */
#include <cuda.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

/* What the last batch was given, for the tests. */
typedef struct fake_copy_stats_t {
  long batch_calls, attr_calls;
  size_t last_count, last_nattrs;
  CUmemcpyAttributes last_attrs[8]; /* the first 8 sets */
  size_t last_idxs[8];
} fake_copy_stats_t;

static fake_copy_stats_t stats;

EXPORT const fake_copy_stats_t *fake_copy_stats(void);
EXPORT const fake_copy_stats_t *fake_copy_stats(void) { return &stats; }

static int attrs_ok(const CUmemcpyAttributes *a) {
  return a->srcAccessOrder >= CU_MEMCPY_SRC_ACCESS_ORDER_STREAM &&
         a->srcAccessOrder <= CU_MEMCPY_SRC_ACCESS_ORDER_ANY &&
         (a->flags & ~(unsigned)CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE) == 0;
}

static int batch_args_ok(size_t count, const CUmemcpyAttributes *attrs, const size_t *idxs,
                         size_t nattrs, CUstream h) {
  if (!h || count == 0 || nattrs == 0 || nattrs > count || !attrs || !idxs || idxs[0] != 0)
    return 0;
  for (size_t k = 0; k < nattrs; k++) {
    if (!attrs_ok(&attrs[k])) return 0;
    if (k > 0 && (idxs[k] <= idxs[k - 1] || idxs[k] >= count)) return 0;
  }
  return 1;
}

static long fail_at(void) {
  const char *v = getenv("CUCORE_FAKE_COPY_FAIL_AT");
  return v && *v ? atol(v) : -1;
}

static void note_batch(size_t count, const CUmemcpyAttributes *attrs, const size_t *idxs,
                       size_t nattrs) {
  stats.batch_calls++;
  stats.last_count = count;
  stats.last_nattrs = nattrs;
  for (size_t k = 0; k < nattrs && k < 8; k++) {
    stats.last_attrs[k] = attrs[k];
    stats.last_idxs[k] = idxs[k];
  }
}

static CUresult fake_cuMemcpyBatchAsync(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes,
                                        size_t count, CUmemcpyAttributes *attrs, size_t *idxs,
                                        size_t nattrs, size_t *failIdx, CUstream h) {
  if (failIdx) *failIdx = SIZE_MAX;
  if (!batch_args_ok(count, attrs, idxs, nattrs, h)) return CUDA_ERROR_INVALID_VALUE;
  note_batch(count, attrs, idxs, nattrs);
  long bad = fail_at();
  for (size_t i = 0; i < count; i++) {
    if (bad >= 0 && (size_t)bad == i) {
      if (failIdx) *failIdx = i;
      return CUDA_ERROR_INVALID_VALUE;
    }
    memmove((void *)(uintptr_t)dsts[i], (const void *)(uintptr_t)srcs[i], sizes[i]);
  }
  return CUDA_SUCCESS;
}

static CUresult fake_cuMemcpyWithAttributesAsync(CUdeviceptr dst, CUdeviceptr src, size_t size,
                                                 CUmemcpyAttributes *attr, CUstream h) {
  if (!h || !attr || !attrs_ok(attr)) return CUDA_ERROR_INVALID_VALUE;
  stats.attr_calls++;
  stats.last_attrs[0] = *attr;
  memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, size);
  return CUDA_SUCCESS;
}

/* One 3D operation between addresses (arrays: not supported by this fake). */
static CUresult copy_3d_op(const CUDA_MEMCPY3D_BATCH_OP *op) {
  const CUmemcpy3DOperand *s = &op->src, *d = &op->dst;
  const CUextent3D *e = &op->extent;
  if (s->type != CU_MEMCPY_OPERAND_TYPE_POINTER || d->type != CU_MEMCPY_OPERAND_TYPE_POINTER)
    return CUDA_ERROR_NOT_SUPPORTED;
  if (!e->width || !e->height || !e->depth) return CUDA_ERROR_INVALID_VALUE;
  size_t srl = s->op.ptr.rowLength ? s->op.ptr.rowLength : e->width;
  size_t slh = s->op.ptr.layerHeight ? s->op.ptr.layerHeight : e->height;
  size_t drl = d->op.ptr.rowLength ? d->op.ptr.rowLength : e->width;
  size_t dlh = d->op.ptr.layerHeight ? d->op.ptr.layerHeight : e->height;
  if (srl < e->width || drl < e->width || slh < e->height || dlh < e->height)
    return CUDA_ERROR_INVALID_VALUE;
  for (size_t z = 0; z < e->depth; z++)
    for (size_t y = 0; y < e->height; y++)
      memmove((void *)(uintptr_t)(d->op.ptr.ptr + (z * dlh + y) * drl),
              (const void *)(uintptr_t)(s->op.ptr.ptr + (z * slh + y) * srl), e->width);
  return CUDA_SUCCESS;
}

static int op_ok(const CUDA_MEMCPY3D_BATCH_OP *op) {
  CUmemcpyAttributes a = {.srcAccessOrder = op->srcAccessOrder, .flags = op->flags};
  return attrs_ok(&a);
}

static CUresult fake_cuMemcpy3DBatchAsync(size_t n, CUDA_MEMCPY3D_BATCH_OP *ops, size_t *failIdx,
                                          unsigned long long flags, CUstream h) {
  if (failIdx) *failIdx = SIZE_MAX;
  if (!h || n == 0 || !ops || flags) return CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; i < n; i++)
    if (!op_ok(&ops[i])) return CUDA_ERROR_INVALID_VALUE;
  stats.batch_calls++;
  stats.last_count = n;
  stats.last_nattrs = 0;
  stats.last_attrs[0] = (CUmemcpyAttributes){.srcAccessOrder = ops[0].srcAccessOrder,
                                             .srcLocHint = ops[0].src.op.ptr.locHint,
                                             .flags = ops[0].flags};
  long bad = fail_at();
  for (size_t i = 0; i < n; i++) {
    CUresult r = bad >= 0 && (size_t)bad == i ? CUDA_ERROR_INVALID_VALUE : copy_3d_op(&ops[i]);
    if (r != CUDA_SUCCESS) {
      if (failIdx) *failIdx = i;
      return r;
    }
  }
  return CUDA_SUCCESS;
}

static CUresult fake_cuMemcpy3DWithAttributesAsync(CUDA_MEMCPY3D_BATCH_OP *op,
                                                   unsigned long long flags, CUstream h) {
  if (!h || !op || flags || !op_ok(op)) return CUDA_ERROR_INVALID_VALUE;
  stats.attr_calls++;
  stats.last_attrs[0] = (CUmemcpyAttributes){.srcAccessOrder = op->srcAccessOrder,
                                             .flags = op->flags};
  return copy_3d_op(op);
}

/* The entry point named `symbol` (NULL: not one of these, or too new for the version). */
void *fake_copy_batch_symbol(const char *symbol);
void *fake_copy_batch_symbol(const char *symbol) {
  const char *v = getenv("CUCORE_FAKE_DRIVER_VERSION"); /* as fake_driver.c reads it */
  int v12_8 = !v || !*v || atoi(v) >= 12080, v13_2 = v && atoi(v) >= 13020;
  if (strcmp(symbol, "cuMemcpyBatchAsync") == 0 && v12_8) return (void *)fake_cuMemcpyBatchAsync;
  if (strcmp(symbol, "cuMemcpy3DBatchAsync") == 0 && v12_8)
    return (void *)fake_cuMemcpy3DBatchAsync;
  if (strcmp(symbol, "cuMemcpyWithAttributesAsync") == 0 && v13_2)
    return (void *)fake_cuMemcpyWithAttributesAsync;
  if (strcmp(symbol, "cuMemcpy3DWithAttributesAsync") == 0 && v13_2)
    return (void *)fake_cuMemcpy3DWithAttributesAsync;
  return NULL;
}
