/*
 * managed_batch.c -- managed memory's discard, discard-and-prefetch and the batched prefetch
 * (cuMemDiscardBatchAsync, cuMemDiscardAndPrefetchBatchAsync, cuMemPrefetchBatchAsync, CUDA
 * 13.0). Every range is checked as cucore_mem_prefetch checks one, and the
 * locations are given one for all ranges or one per range (runs of equal ones become the
 * driver's location list). On a driver without the batched entry points the same work is done
 * by a loop of cuMemPrefetchAsync; a discard there does nothing, which a discard allows (the
 * contents become undefined: keeping them is one such content).
 */
#include "memory/memory.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { OP_PREFETCH, OP_DISCARD, OP_DISCARD_PREFETCH };

/* The driver's arrays for a batch. */
typedef struct batch {
  CUdeviceptr *ptrs;
  size_t *sizes;
  CUmemLocation *locs; /* runs of ranges with one location each */
  size_t *idxs;        /* the first range of each run */
  size_t nlocs;
} batch;

static void batch_free(batch *b) {
  free(b->ptrs);
  free(b->sizes);
  free(b->locs);
  free(b->idxs);
}

static int same_location(cucore_location a, cucore_location b) {
  return a.type == b.type && (a.id == b.id || a.type == CUCORE_LOCATION_HOST ||
                              a.type == CUCORE_LOCATION_HOST_NUMA_CURRENT);
}

static cucore_status batch_alloc(batch *b, size_t count, int with_locs) {
  b->ptrs = cc_calloc(count, sizeof *b->ptrs, "a batch's addresses");
  b->sizes = cc_calloc(count, sizeof *b->sizes, "a batch's sizes");
  if (with_locs) {
    b->locs = cc_calloc(count, sizeof *b->locs, "a batch's locations");
    b->idxs = cc_calloc(count, sizeof *b->idxs, "a batch's location indices");
  }
  if (!b->ptrs || !b->sizes || (with_locs && (!b->locs || !b->idxs)))
    return CUCORE_HOST_OUT_OF_MEMORY;
  return CUCORE_OK;
}

/* The count of locations: 1 (for every range) or one per range. */
static cucore_status check_locations(const cucore_location *to, size_t to_count, size_t count,
                                     const char *fn) {
  if (!to) return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: `to` is NULL", fn);
  if (to_count != 1 && to_count != count)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: %zu locations for %zu ranges; give 1 (for every "
                   "range) or one per range",
                   fn, to_count, count);
  return CUCORE_OK;
}

/* Checks the ranges and locations and fills `b`. */
static cucore_status batch_build(const cucore_mem_range *ranges, size_t count,
                                 const cucore_location *to, size_t to_count, int op, batch *b,
                                 const char *fn) {
  memset(b, 0, sizeof *b);
  if (!ranges || count == 0)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: no ranges (`ranges` NULL or a count of 0)", fn);
  cucore_status st = op == OP_DISCARD ? CUCORE_OK : check_locations(to, to_count, count, fn);
  if (st == CUCORE_OK) st = batch_alloc(b, count, op != OP_DISCARD);
  for (size_t i = 0; st == CUCORE_OK && i < count; i++) {
    char what[96];
    snprintf(what, sizeof what, count > 1 ? "%s (range %zu)" : "%s", fn, i);
    cc_mem_rec rec;
    int known;
    st = cc_managed_range(ranges[i].ptr, ranges[i].bytes, what, &rec, &known);
    b->ptrs[i] = (CUdeviceptr)ranges[i].ptr;
    b->sizes[i] = ranges[i].bytes;
    if (st != CUCORE_OK || op == OP_DISCARD) continue;
    size_t j = to_count == 1 ? 0 : i;
    if (i > 0 && (j == 0 || same_location(to[j], to[j - 1]))) continue;
    st = cc_managed_prefetch_target(to[j], &b->locs[b->nlocs], what);
    b->idxs[b->nlocs++] = i;
  }
  return st;
}

static CUresult run_batch(int op, batch *b, size_t count, CUstream h) {
  switch (op) {
  case OP_PREFETCH:
    return DRV(cuMemPrefetchBatchAsync)(b->ptrs, b->sizes, count, b->locs, b->idxs, b->nlocs, 0, h);
  case OP_DISCARD: return DRV(cuMemDiscardBatchAsync)(b->ptrs, b->sizes, count, 0, h);
  default:
    return DRV(cuMemDiscardAndPrefetchBatchAsync)(b->ptrs, b->sizes, count, b->locs, b->idxs,
                                                  b->nlocs, 0, h);
  }
}

/* The same work, range by range (a discard does nothing). *failed: the range that failed. */
static CUresult run_loop(int op, batch *b, size_t count, CUstream h, size_t *failed) {
  if (op == OP_DISCARD) return CUDA_SUCCESS;
  size_t run = 0;
  for (size_t i = 0; i < count; i++) {
    if (run + 1 < b->nlocs && b->idxs[run + 1] == i) run++;
    CUresult r = DRV(cuMemPrefetchAsync)(b->ptrs[i], b->sizes[i], b->locs[run], 0, h);
    if (r != CUDA_SUCCESS) {
      *failed = i;
      return r;
    }
  }
  return CUDA_SUCCESS;
}

static const void *batch_entry(int op, const char **call) {
  switch (op) {
  case OP_PREFETCH:
    *call = "cuMemPrefetchBatchAsync";
    return (const void *)DRV(cuMemPrefetchBatchAsync);
  case OP_DISCARD:
    *call = "cuMemDiscardBatchAsync";
    return (const void *)DRV(cuMemDiscardBatchAsync);
  default:
    *call = "cuMemDiscardAndPrefetchBatchAsync";
    return (const void *)DRV(cuMemDiscardAndPrefetchBatchAsync);
  }
}

/* Runs `b` on `s`: the batched entry point when the driver has it, else the loop. */
static cucore_status batch_run(int op, batch *b, size_t count, cucore_stream *s, const char *fn) {
  const char *call = NULL;
  const void *entry = batch_entry(op, &call);
  cucore_status st = CUCORE_OK;
  if (!entry && op != OP_DISCARD) st = CC_DRV_REQUIRE(cuMemPrefetchAsync);
  if (entry && !s->handle)
    st = cc_fail(CUCORE_INVALID_ARGUMENT,
                 "%s: the legacy default stream; %s takes a stream of "
                 "its own (cucore_stream_create)",
                 fn, call);
  if (st == CUCORE_OK) st = cc_device_make_current(s->dev);
  if (st != CUCORE_OK) return st;
  size_t failed = 0;
  CUresult r = entry ? run_batch(op, b, count, s->handle)
                     : run_loop(op, b, count, s->handle, &failed);
  if (r == CUDA_SUCCESS) return CUCORE_OK;
  if (entry)
    return cc_fail_cu(r, call, "%s: %zu range%s (the first: %zu bytes at 0x%llx)", fn, count,
                      count == 1 ? "" : "s", b->sizes[0], (unsigned long long)b->ptrs[0]);
  return cc_fail_cu(r, "cuMemPrefetchAsync",
                    "%s: range %zu of %zu, %zu bytes at 0x%llx (the "
                    "driver has no %s: cucore prefetches range by range)",
                    fn, failed, count, b->sizes[failed], (unsigned long long)b->ptrs[failed], call);
}

static cucore_status managed_op(int op, const cucore_mem_range *ranges, size_t count,
                                const cucore_location *to, size_t to_count, cucore_stream *s,
                                const char *fn) {
  CC_CHECK_HANDLE(s, STREAM, fn, "stream");
  batch b;
  cucore_status st = batch_build(ranges, count, to, to_count, op, &b, fn);
  if (st == CUCORE_OK) st = cc_driver_need_device();
  if (st == CUCORE_OK) st = batch_run(op, &b, count, s, fn);
  batch_free(&b);
  return st;
}

cucore_status cucore_mem_prefetch_batch(const cucore_mem_range *ranges, size_t count,
                                        const cucore_location *to, size_t to_count,
                                        cucore_stream *s) {
  cc_begin();
  return managed_op(OP_PREFETCH, ranges, count, to, to_count, s, "cucore_mem_prefetch_batch");
}

cucore_status cucore_mem_discard(cucore_devptr ptr, size_t bytes, cucore_stream *s) {
  cc_begin();
  cucore_mem_range r = {ptr, bytes};
  return managed_op(OP_DISCARD, &r, 1, NULL, 0, s, "cucore_mem_discard");
}

cucore_status cucore_mem_discard_batch(const cucore_mem_range *ranges, size_t count,
                                       cucore_stream *s) {
  cc_begin();
  return managed_op(OP_DISCARD, ranges, count, NULL, 0, s, "cucore_mem_discard_batch");
}

cucore_status cucore_mem_discard_prefetch(cucore_devptr ptr, size_t bytes, cucore_location to,
                                          cucore_stream *s) {
  cc_begin();
  cucore_mem_range r = {ptr, bytes};
  return managed_op(OP_DISCARD_PREFETCH, &r, 1, &to, 1, s, "cucore_mem_discard_prefetch");
}

cucore_status cucore_mem_discard_prefetch_batch(const cucore_mem_range *ranges, size_t count,
                                                const cucore_location *to, size_t to_count,
                                                cucore_stream *s) {
  cc_begin();
  return managed_op(OP_DISCARD_PREFETCH, ranges, count, to, to_count, s,
                    "cucore_mem_discard_prefetch_batch");
}
