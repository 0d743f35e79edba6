/*
 * copy_batch.c -- many copies in one call (cuMemcpyBatchAsync, CUDA 12.8) and single copies with
 * attributes (cuMemcpyWithAttributesAsync, CUDA 13.2). Every copy is checked as cucore_memcpy
 * checks one (copy.c, bounds.c) before any is issued; a refusal names the copy's index. The
 * attributes are checked and turned into the driver's runs (an entry per run of copies with one
 * set). On a driver without the batched entry point, and in a stream capture (the driver does
 * not capture the batch), the copies are made one by one with cuMemcpyAsync; a source to be
 * read during the call is then honoured by a wait for the stream (the loop reads sources in
 * stream order only; in a capture it is refused), and the hints, which are hints, are dropped.
 */
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include "memory/memory.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FN_BATCH "cucore_memcpy_batch"
#define FN_ATTR "cucore_memcpy_with_attributes"

/* The driver's arrays for the copies kept (those of more than 0 bytes). */
typedef struct plan {
  CUdeviceptr *dsts, *srcs;
  size_t *sizes;
  size_t *orig;              /* the caller's index of each copy kept */
  size_t *idxs;              /* the first kept copy of each run of one attribute set */
  CUmemcpyAttributes *attrs; /* the set of each run */
  size_t n, nattrs;
  size_t total;    /* the caller's count, for messages */
  int during_call; /* a kept copy reads its source during the call */
  void *block;     /* the one allocation behind the arrays (NULL for a single copy) */
} plan;

/* ---- messages ------------------------------------------------------------------------------ */

/* Restates the kept message of a refused copy with its index: "fn (copy i of n): ...". */
cucore_status cc_cbatch_name_copy(cucore_status st, const char *fn, size_t i, size_t count) {
  const char *msg = cucore_last_error();
  size_t len = strlen(fn);
  const char *rest = strncmp(msg, fn, len) == 0 ? msg + len : msg;
  char *text = NULL;
  size_t size = 0;
  FILE *f = open_memstream(&text, &size);
  if (!f) return st; /* the message without the index is kept */
  fprintf(f, "%s (copy %zu of %zu)%s%s", fn, i, count, rest == msg ? ": " : "", rest);
  if (fclose(f) == 0) cc_fail_restate(st, text);
  free(text);
  return st;
}

/* ---- attributes ---------------------------------------------------------------------------- */

/* A hint: none (type NONE: the driver's zeroed location), else a location checked as a
 * prefetch target is. */
static cucore_status convert_hint(cucore_location in, CUmemLocation *out, const char *fn) {
  memset(out, 0, sizeof *out);
  if (in.type == CUCORE_LOCATION_NONE) return CUCORE_OK;
  return cc_managed_location(in, out, fn);
}

/* One set of attributes into the driver's form; `k` names it in messages. */
cucore_status cc_cbatch_convert(const cucore_copy_attrs *a, size_t k, CUmemcpyAttributes *out,
                                const char *fn) {
  memset(out, 0, sizeof *out);
  if ((int)a->src_order < CUCORE_COPY_SRC_STREAM || (int)a->src_order > CUCORE_COPY_SRC_ANY)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: attributes %zu: src_order %d is not CUCORE_COPY_SRC_STREAM (1), "
                   "_DURING_CALL (2) or _ANY (3)",
                   fn, k, (int)a->src_order);
  if (a->flags & ~(unsigned)CUCORE_COPY_PREFER_OVERLAP)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: attributes %zu: unknown flags 0x%x (expected 0 or "
                   "CUCORE_COPY_PREFER_OVERLAP)",
                   fn, k, a->flags & ~(unsigned)CUCORE_COPY_PREFER_OVERLAP);
  out->srcAccessOrder = (CUmemcpySrcAccessOrder)a->src_order;
  out->flags = a->flags;
  cucore_status st = convert_hint(a->src_hint, &out->srcLocHint, fn);
  if (st == CUCORE_OK) st = convert_hint(a->dst_hint, &out->dstLocHint, fn);
  return st;
}

/* The driver's rules for the attribute list: a count within 1..count, a first index of 0,
 * increasing indices below `count`; `index` may be NULL for one set. */
static cucore_status check_attr_index(const size_t *index, size_t attr_count, size_t count,
                                      const char *fn) {
  if (attr_count > count)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: %zu attribute sets for %zu copies (at most one "
                   "per copy)",
                   fn, attr_count, count);
  if (!index) {
    if (attr_count == 1) return CUCORE_OK;
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: `attr_index` is NULL with %zu attribute sets (NULL is for one set)", fn,
                   attr_count);
  }
  if (index[0] != 0)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: attr_index[0] is %zu; the first set must start at copy 0", fn, index[0]);
  for (size_t k = 1; k < attr_count; k++)
    if (index[k] <= index[k - 1] || index[k] >= count)
      return cc_fail(CUCORE_INVALID_ARGUMENT,
                     "%s: attr_index[%zu] is %zu after %zu: the indices must increase and stay "
                     "below the %zu copies",
                     fn, k, index[k], index[k - 1], count);
  return CUCORE_OK;
}

/* ---- the copies ---------------------------------------------------------------------------- */

/* 1 when the copy lies inside the records the last full check passed (span, as
 * cc_mem_check_copy_spans gives it): it passes as that check would. */
static inline int within_spans(const cucore_copy_desc *c, const uint64_t span[4]) {
  uint64_t dend, send;
  return c->dst >= span[0] && c->src >= span[2] && cc_add_u64(c->dst, c->bytes, &dend) &&
         dend <= span[1] && cc_add_u64(c->src, c->bytes, &send) && send <= span[3] &&
         !(c->bytes >> 63);
}

/* One copy checked as cucore_memcpy checks it (0 bytes pass: skipped later). */
static cucore_status check_one(const cucore_copy_desc *c, const char *fn, uint64_t span[4]) {
  if (c->bytes == 0) return CUCORE_OK;
  if (CC_LIKELY(span[1] && within_spans(c, span))) return CUCORE_OK;
  cucore_status st = cc_check_size(c->bytes, fn, "the byte count");
  if (st != CUCORE_OK) return st;
  if (!c->dst || !c->src)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: the %s is NULL/0 for a copy of %zu bytes", fn,
                   !c->dst ? "destination" : "source", c->bytes);
  return cc_mem_check_copy_spans(c->dst, c->src, c->bytes, fn, span);
}

/* Every copy checked before any is issued; a refusal names its index (*failed). Copies inside
 * the records of the last full check pass without another (one call: the records stay). */
static cucore_status check_copies(const cucore_copy_desc *copies, size_t count, int name_index,
                                  const char *fn, size_t *failed) {
  uint64_t span[4] = {0, 0, 0, 0};
  for (size_t i = 0; i < count; i++) {
    cucore_status st = check_one(&copies[i], fn, span);
    if (CC_LIKELY(st == CUCORE_OK)) continue;
    *failed = i;
    return name_index ? cc_cbatch_name_copy(st, fn, i, count) : st;
  }
  return CUCORE_OK;
}

/* The arrays of a batch of `count` copies with `nsets` attribute sets: room for as many runs
 * and, after them, the converted sets. */
static cucore_status plan_alloc(plan *p, size_t count, size_t nsets, const char *fn) {
  if (count > SIZE_MAX / 64)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: %zu copies do not fit in memory", fn, count);
  size_t words = 5 * count; /* dsts, srcs, sizes, orig, idxs */
  size_t bytes = words * sizeof(size_t) + 2 * nsets * sizeof(CUmemcpyAttributes);
  p->block = cc_malloc(bytes, "a copy batch's arrays");
  if (!p->block) return CUCORE_HOST_OUT_OF_MEMORY;
  size_t *w = p->block;
  p->dsts = (CUdeviceptr *)w;
  p->srcs = (CUdeviceptr *)(w + count);
  p->sizes = w + 2 * count;
  p->orig = w + 3 * count;
  p->idxs = w + 4 * count;
  p->attrs = (CUmemcpyAttributes *)(w + words);
  return CUCORE_OK;
}

/* The kept copies, and the runs of the attribute sets (`conv`, `attr_count` of them, starting
 * at the copies `index` names; none given: one set for all). */
static void plan_fill(plan *p, const cucore_copy_desc *copies, size_t count,
                      const CUmemcpyAttributes *conv, const size_t *index, size_t attr_count) {
  size_t k = 0, last = (size_t)-1;
  p->total = count;
  for (size_t i = 0; i < count; i++) {
    while (index && k + 1 < attr_count && index[k + 1] <= i) k++;
    if (copies[i].bytes == 0) continue;
    if (k != last) {
      p->attrs[p->nattrs] = conv[k];
      p->idxs[p->nattrs++] = p->n;
      last = k;
      if (conv[k].srcAccessOrder == CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL) p->during_call = 1;
    }
    p->dsts[p->n] = (CUdeviceptr)copies[i].dst;
    p->srcs[p->n] = (CUdeviceptr)copies[i].src;
    p->sizes[p->n] = copies[i].bytes;
    p->orig[p->n++] = i;
  }
}

/* ---- the stream ---------------------------------------------------------------------------- */

/* Device and stream: a stream of the device, not the legacy default one (the driver's rule for
 * batches, kept for the loop too), captured as any stream work. */
cucore_status cc_cbatch_stream_checks(cucore_device *dev, cucore_stream *s, const char *fn) {
  cucore_status st = cc_mem_work_check(dev, s, fn);
  if (st != CUCORE_OK) return st;
  if (!s)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: `s` is NULL; batched and attributed copies are queued on a stream", fn);
  if (!s->handle)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: the legacy default stream; batched copies take a stream of their own "
                   "(cucore_stream_create) or a wrapped one",
                   fn);
  return CUCORE_OK;
}

/* Whether `s` is capturing (*capturing): the driver does not capture its batched entry point
 * (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, reported with CUDA 13, where the capture goes on and
 * the graph lacks the copies), so a capture takes the copies one by one. A source read during
 * the call is refused there: a captured copy reads its source when the graph runs. */
cucore_status cc_cbatch_capture(int during_call, cucore_stream *s, const char *fn, int *capturing) {
  *capturing = 0;
  if (!DRV(cuStreamIsCapturing)) return CUCORE_OK;
  CUstreamCaptureStatus cs = CU_STREAM_CAPTURE_STATUS_NONE;
  if (DRV(cuStreamIsCapturing)(s->handle, &cs) != CUDA_SUCCESS ||
      cs == CU_STREAM_CAPTURE_STATUS_NONE)
    return CUCORE_OK;
  *capturing = 1;
  if (!during_call) return CUCORE_OK;
  return cc_fail(CUCORE_INVALID_ARGUMENT,
                 "%s: CUCORE_COPY_SRC_DURING_CALL on a stream that is capturing: a captured copy "
                 "reads its source when the graph runs, after the call; use "
                 "CUCORE_COPY_SRC_STREAM",
                 fn);
}

/* ---- running ------------------------------------------------------------------------------- */

/* The copies one by one in stream order; a source to be read during the call waits for the
 * stream. *failed: the kept copy that failed. */
static CUresult run_loop(const plan *p, CUstream h, size_t *failed, const char **call) {
  *call = "cuMemcpyAsync";
  for (size_t i = 0; i < p->n; i++) {
    CUresult r = DRV(cuMemcpyAsync)(p->dsts[i], p->srcs[i], p->sizes[i], h);
    if (r != CUDA_SUCCESS) {
      *failed = i;
      return r;
    }
  }
  *call = "cuStreamSynchronize";
  return p->during_call ? DRV(cuStreamSynchronize)(h) : CUDA_SUCCESS;
}

/* The batch: the loop in a capture, else CUDA 13.2's single attributed copy for one copy when
 * `single`, else the batched call, else the loop. *failed: the kept copy the driver names
 * (SIZE_MAX: none). */
static CUresult run_plan(plan *p, int single, int capturing, CUstream h, size_t *failed,
                         const char **call) {
  *failed = SIZE_MAX;
  if (capturing) return run_loop(p, h, failed, call);
  if (single && p->n == 1 && DRV(cuMemcpyWithAttributesAsync)) {
    *call = "cuMemcpyWithAttributesAsync";
    return DRV(cuMemcpyWithAttributesAsync)(p->dsts[0], p->srcs[0], p->sizes[0], &p->attrs[0], h);
  }
  if (!DRV(cuMemcpyBatchAsync)) return run_loop(p, h, failed, call);
  *call = "cuMemcpyBatchAsync";
  return DRV(cuMemcpyBatchAsync)(p->dsts, p->srcs, p->sizes, p->n, p->attrs, p->idxs, p->nattrs,
                                 failed, h);
}

/* Issues the plan on `s` and explains a failure, naming the caller's copy. */
static cucore_status issue(cucore_device *dev, plan *p, int single, cucore_stream *s,
                           const char *fn, size_t *failed) {
  if (p->n == 0) return CUCORE_OK;
  int capturing = 0;
  cucore_status st = cc_device_make_current(dev);
  if (st == CUCORE_OK) st = cc_cbatch_capture(p->during_call, s, fn, &capturing);
  if (st != CUCORE_OK) return st;
  size_t bad;
  const char *call = NULL;
  CUresult r = run_plan(p, single, capturing, s->handle, &bad, &call);
  if (r == CUDA_SUCCESS) return CUCORE_OK;
  if (bad >= p->n)
    return cc_fail_cu(r, call, "%s: %zu cop%s issued; the driver names no copy", fn, p->n,
                      p->n == 1 ? "y" : "ies");
  *failed = p->orig[bad];
  return cc_fail_cu(r, call, "%s: copy %zu of %zu (%zu bytes from 0x%llx to 0x%llx)", fn,
                    p->orig[bad], p->total, p->sizes[bad], (unsigned long long)p->srcs[bad],
                    (unsigned long long)p->dsts[bad]);
}

/* ---- the public calls ---------------------------------------------------------------------- */

/* The attribute sets checked and converted into `conv` (attr_count of them; none: one default
 * set). */
cucore_status cc_cbatch_attrs(const cucore_copy_attrs *attrs, const size_t *attr_index,
                              size_t attr_count, size_t count, CUmemcpyAttributes *conv,
                              const char *fn) {
  if (!attrs) {
    if (attr_count != 0)
      return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: `attrs` is NULL with an attr_count of %zu", fn,
                     attr_count);
    memset(conv, 0, sizeof *conv);
    conv->srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
    return CUCORE_OK;
  }
  if (attr_count == 0)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: `attrs` given with an attr_count of 0", fn);
  cucore_status st = check_attr_index(attr_index, attr_count, count, fn);
  for (size_t k = 0; st == CUCORE_OK && k < attr_count; k++)
    st = cc_cbatch_convert(&attrs[k], k, &conv[k], fn);
  return st;
}

cucore_status cucore_memcpy_batch(cucore_device *dev, const cucore_copy_desc *copies, size_t count,
                                  const cucore_copy_attrs *attrs, const size_t *attr_index,
                                  size_t attr_count, cucore_stream *s, size_t *failed_index) {
  cc_begin();
  const char *fn = FN_BATCH;
  size_t failed = CUCORE_COPY_NO_INDEX;
  if (failed_index) *failed_index = failed;
  cucore_status st = cc_cbatch_stream_checks(dev, s, fn);
  if (st != CUCORE_OK) return st;
  if (!copies || count == 0)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: no copies (`copies` NULL or a count of 0)", fn);
  /* One set when none is given (the default); more sets than copies are refused below. */
  size_t nsets = attrs && attr_count && attr_count <= count ? attr_count : 1;
  plan p = {0};
  st = plan_alloc(&p, count, nsets, fn);
  /* The converted sets sit past the runs' room: runs never outnumber the sets. */
  CUmemcpyAttributes *conv = st == CUCORE_OK ? p.attrs + nsets : NULL;
  if (st == CUCORE_OK) st = cc_cbatch_attrs(attrs, attr_index, attr_count, count, conv, fn);
  if (st == CUCORE_OK) st = check_copies(copies, count, 1, fn, &failed);
  if (st == CUCORE_OK) {
    plan_fill(&p, copies, count, conv, attrs ? attr_index : NULL, nsets);
    st = issue(dev, &p, 0, s, fn, &failed);
  }
  free(p.block);
  if (failed_index) *failed_index = failed;
  return st;
}

cucore_status cucore_memcpy_with_attributes(cucore_device *dev, cucore_devptr dst,
                                            cucore_devptr src, size_t bytes,
                                            const cucore_copy_attrs *attr, cucore_stream *s) {
  cc_begin();
  const char *fn = FN_ATTR;
  CC_CHECK_ARG(attr, fn, "attr");
  cucore_status st = cc_cbatch_stream_checks(dev, s, fn);
  if (st != CUCORE_OK) return st;
  cucore_copy_desc c = {dst, src, bytes};
  CUdeviceptr d, sr;
  size_t size, orig, idx;
  CUmemcpyAttributes conv;
  plan p = {&d, &sr, &size, &orig, &idx, &conv, 0, 0, 0, 0, NULL};
  size_t failed;
  st = cc_cbatch_convert(attr, 0, &conv, fn);
  if (st == CUCORE_OK) st = check_copies(&c, 1, 0, fn, &failed);
  if (st != CUCORE_OK) return st;
  plan_fill(&p, &c, 1, &conv, NULL, 1);
  return issue(dev, &p, 1, s, fn, &failed);
}
