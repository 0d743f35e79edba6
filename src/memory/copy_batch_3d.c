/*
 * copy_batch_3d.c -- 2D/3D copies (pitched memory or arrays) in one call
 * (cuMemcpy3DBatchAsync, CUDA 12.8) and one with attributes (cuMemcpy3DWithAttributesAsync,
 * CUDA 13.2). Each copy is checked as cucore_memcpy_3d checks it (copy.c) before any is issued,
 * a refusal naming its index; the attributes follow copy_batch.c's rules and become each
 * operation's order, flags and (for a side that is an address) location hint. The driver's
 * operands count in elements: 1 byte between addresses, the array's element size when an array
 * takes part. Without the batched entry point the copies are made one by one with
 * cuMemcpy3DAsync, a source read during the call honoured by a wait for the stream.
 */
#include "memory/memory.h"

#include <stdlib.h>
#include <string.h>

#define FN_BATCH_3D "cucore_memcpy_3d_batch"
#define FN_ATTR_3D "cucore_memcpy_3d_with_attributes"

/* The operations kept (extents above 0) and the caller's index of each. */
typedef struct plan3 {
  CUDA_MEMCPY3D_BATCH_OP *ops;
  size_t *orig;
  size_t n, total;
  int during_call;
} plan3;

/* The element size of a copy: 1 between addresses, else the array's (two arrays: one size). */
static cucore_status element_size(const cucore_copy_3d *c, size_t *elem, const char *fn) {
  size_t s = c->src_array ? c->src_array->elem_bytes : 0;
  size_t d = c->dst_array ? c->dst_array->elem_bytes : 0;
  if (s && d && s != d)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: the source array's elements are %zu bytes, the destination's %zu: a "
                   "batched copy between arrays needs one element size",
                   fn, s, d);
  *elem = s ? s : d ? d : 1;
  return CUCORE_OK;
}

/* Widths, array x offsets and address pitches in whole elements of `elem` bytes. */
static cucore_status whole_elements(const cucore_copy_3d *c, size_t elem, const char *fn) {
  const char *what = NULL;
  size_t v = 0;
  if (c->width_bytes % elem) what = "the width", v = c->width_bytes;
  if (c->src_array && c->src_x_bytes % elem) what = "the source x offset", v = c->src_x_bytes;
  if (c->dst_array && c->dst_x_bytes % elem) what = "the destination x offset", v = c->dst_x_bytes;
  if (!c->src_array && c->src_pitch % elem) what = "the source pitch", v = c->src_pitch;
  if (!c->dst_array && c->dst_pitch % elem) what = "the destination pitch", v = c->dst_pitch;
  if (!what) return CUCORE_OK;
  return cc_fail(CUCORE_INVALID_ARGUMENT,
                 "%s: %s (%zu bytes) is not a whole number of the array's %zu-byte elements", fn,
                 what, v, elem);
}

/* One side as the driver's operand: an array at an offset in elements, or the address of the
 * region's first byte with its row length (elements) and rows per slice. */
static void put_operand(cucore_array *arr, uint64_t addr, size_t pitch, size_t slice_rows,
                        const size_t xyz[3], size_t elem, const CUmemLocation *hint,
                        CUmemcpy3DOperand *op) {
  memset(op, 0, sizeof *op);
  if (arr) {
    op->type = CU_MEMCPY_OPERAND_TYPE_ARRAY;
    op->op.array.array = arr->handle;
    op->op.array.offset = (CUoffset3D){xyz[0] / elem, xyz[1], xyz[2]};
    return;
  }
  op->type = CU_MEMCPY_OPERAND_TYPE_POINTER;
  /* In range: the footprint check computed this sum without overflow. */
  op->op.ptr.ptr = (CUdeviceptr)(addr + (xyz[2] * slice_rows + xyz[1]) * pitch + xyz[0]);
  op->op.ptr.rowLength = pitch / elem;
  op->op.ptr.layerHeight = slice_rows;
  op->op.ptr.locHint = *hint;
}

/* A checked copy as the driver's operation with the attributes `a`. */
static cucore_status make_op(const cucore_copy_3d *c, const CUmemcpyAttributes *a,
                             CUDA_MEMCPY3D_BATCH_OP *op, const char *fn) {
  size_t elem = 1;
  cucore_status st = element_size(c, &elem, fn);
  if (st == CUCORE_OK) st = whole_elements(c, elem, fn);
  if (st != CUCORE_OK) return st;
  memset(op, 0, sizeof *op);
  const size_t sxyz[3] = {c->src_x_bytes, c->src_y, c->src_z};
  const size_t dxyz[3] = {c->dst_x_bytes, c->dst_y, c->dst_z};
  put_operand(c->src_array, c->src, c->src_pitch, c->src_height, sxyz, elem, &a->srcLocHint,
              &op->src);
  put_operand(c->dst_array, c->dst, c->dst_pitch, c->dst_height, dxyz, elem, &a->dstLocHint,
              &op->dst);
  /* One row, or one slice: the strides the driver would check mean nothing (packed). */
  for (CUmemcpy3DOperand *o = &op->src; o; o = o == &op->src ? &op->dst : NULL) {
    if (o->type != CU_MEMCPY_OPERAND_TYPE_POINTER) continue;
    if (c->height <= 1 && c->depth <= 1) o->op.ptr.rowLength = 0;
    if (c->depth <= 1) o->op.ptr.layerHeight = 0;
  }
  op->extent = (CUextent3D){c->width_bytes / elem, c->height, c->depth};
  op->srcAccessOrder = a->srcAccessOrder;
  op->flags = a->flags;
  return CUCORE_OK;
}

/* Every copy checked and turned into an operation (empty ones left out); a refusal names the
 * copy (*failed) when `name_index`. */
static cucore_status plan_build(cucore_device *dev, cucore_stream *s, const cucore_copy_3d *copies,
                                size_t count, const CUmemcpyAttributes *conv, const size_t *index,
                                size_t nsets, int name_index, plan3 *p, const char *fn,
                                size_t *failed) {
  size_t k = 0;
  p->total = count;
  for (size_t i = 0; i < count; i++) {
    while (index && k + 1 < nsets && index[k + 1] <= i) k++;
    int skip = 0;
    cucore_status st = cc_mem_check_copy_3d(dev, s, &copies[i], fn, &skip);
    if (st == CUCORE_OK && !skip) st = make_op(&copies[i], &conv[k], &p->ops[p->n], fn);
    if (st != CUCORE_OK) {
      *failed = i;
      return name_index ? cc_cbatch_name_copy(st, fn, i, count) : st;
    }
    if (skip) continue;
    if (conv[k].srcAccessOrder == CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL) p->during_call = 1;
    p->orig[p->n++] = i;
  }
  return CUCORE_OK;
}

/* The copies one by one with cuMemcpy3DAsync; a source read during the call waits for the
 * stream. *bad: the kept copy that failed. */
static CUresult run_loop(const plan3 *p, const cucore_copy_3d *copies, CUstream h, size_t *bad,
                         const char **call) {
  *call = "cuMemcpy3DAsync";
  for (size_t i = 0; i < p->n; i++) {
    CUDA_MEMCPY3D m;
    cc_mem_copy_3d_desc(&copies[p->orig[i]], &m);
    CUresult r = DRV(cuMemcpy3DAsync)(&m, h);
    if (r != CUDA_SUCCESS) {
      *bad = i;
      return r;
    }
  }
  *call = "cuStreamSynchronize";
  return p->during_call ? DRV(cuStreamSynchronize)(h) : CUDA_SUCCESS;
}

/* The loop in a capture (copy_batch.c says why), else as copy_batch.c's run_plan. */
static CUresult run_plan(plan3 *p, const cucore_copy_3d *copies, int single, int capturing,
                         CUstream h, size_t *bad, const char **call) {
  *bad = SIZE_MAX;
  if (capturing) return run_loop(p, copies, h, bad, call);
  if (single && DRV(cuMemcpy3DWithAttributesAsync)) {
    *call = "cuMemcpy3DWithAttributesAsync";
    return DRV(cuMemcpy3DWithAttributesAsync)(&p->ops[0], 0, h);
  }
  if (!DRV(cuMemcpy3DBatchAsync)) return run_loop(p, copies, h, bad, call);
  *call = "cuMemcpy3DBatchAsync";
  return DRV(cuMemcpy3DBatchAsync)(p->n, p->ops, bad, 0, h);
}

/* Issues the plan on `s`, a failure naming the caller's copy (*failed). */
static cucore_status issue(cucore_device *dev, plan3 *p, const cucore_copy_3d *copies, int single,
                           cucore_stream *s, const char *fn, size_t *failed) {
  if (p->n == 0) return CUCORE_OK;
  int capturing = 0;
  cucore_status st = cc_device_make_current(dev);
  if (st == CUCORE_OK) st = cc_cbatch_capture(p->during_call, s, fn, &capturing);
  if (st != CUCORE_OK) return st;
  size_t bad;
  const char *call = NULL;
  CUresult r = run_plan(p, copies, single, capturing, s->handle, &bad, &call);
  if (r == CUDA_SUCCESS) return CUCORE_OK;
  if (bad >= p->n)
    return cc_fail_cu(r, call, "%s: %zu 3D cop%s issued; the driver names no copy", fn, p->n,
                      p->n == 1 ? "y" : "ies");
  const cucore_copy_3d *c = &copies[p->orig[bad]];
  *failed = p->orig[bad];
  return cc_fail_cu(r, call, "%s: copy %zu of %zu (%zu x %zu rows of %zu bytes)", fn, *failed,
                    p->total, c->depth, c->height, c->width_bytes);
}

cucore_status cucore_memcpy_3d_batch(cucore_device *dev, const cucore_copy_3d *copies, size_t count,
                                     const cucore_copy_attrs *attrs, const size_t *attr_index,
                                     size_t attr_count, cucore_stream *s, size_t *failed_index) {
  cc_begin();
  const char *fn = FN_BATCH_3D;
  size_t failed = CUCORE_COPY_NO_INDEX;
  if (failed_index) *failed_index = failed;
  cucore_status st = cc_cbatch_stream_checks(dev, s, fn);
  if (st != CUCORE_OK) return st;
  if (!copies || count == 0)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: no copies (`copies` NULL or a count of 0)", fn);
  if (count > SIZE_MAX / (2 * sizeof(CUDA_MEMCPY3D_BATCH_OP)))
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: %zu copies do not fit in memory", fn, count);
  size_t nsets = attrs && attr_count && attr_count <= count ? attr_count : 1;
  plan3 p = {0};
  p.ops = cc_malloc(count * sizeof *p.ops, "a 3D copy batch's operations");
  p.orig = cc_malloc(count * sizeof *p.orig, "a 3D copy batch's indices");
  CUmemcpyAttributes *conv = cc_malloc(nsets * sizeof *conv, "a 3D copy batch's attributes");
  st = p.ops && p.orig && conv ? CUCORE_OK : CUCORE_HOST_OUT_OF_MEMORY;
  if (st == CUCORE_OK) st = cc_cbatch_attrs(attrs, attr_index, attr_count, count, conv, fn);
  if (st == CUCORE_OK)
    st = plan_build(dev, s, copies, count, conv, attrs ? attr_index : NULL, nsets, 1, &p, fn,
                    &failed);
  if (st == CUCORE_OK) st = issue(dev, &p, copies, 0, s, fn, &failed);
  free(p.ops);
  free(p.orig);
  free(conv);
  if (failed_index) *failed_index = failed;
  return st;
}

cucore_status cucore_memcpy_3d_with_attributes(cucore_device *dev, const cucore_copy_3d *copy,
                                               const cucore_copy_attrs *attr, cucore_stream *s) {
  cc_begin();
  const char *fn = FN_ATTR_3D;
  CC_CHECK_ARG(copy, fn, "copy");
  CC_CHECK_ARG(attr, fn, "attr");
  cucore_status st = cc_cbatch_stream_checks(dev, s, fn);
  if (st != CUCORE_OK) return st;
  CUmemcpyAttributes conv;
  CUDA_MEMCPY3D_BATCH_OP op;
  size_t orig, failed;
  plan3 p = {&op, &orig, 0, 0, 0};
  st = cc_cbatch_convert(attr, 0, &conv, fn);
  if (st == CUCORE_OK) st = plan_build(dev, s, copy, 1, &conv, NULL, 1, 0, &p, fn, &failed);
  if (st != CUCORE_OK) return st;
  return issue(dev, &p, copy, 1, s, fn, &failed);
}
