/*
 * resource_alloc.c -- allocating through a memory resource and giving memory back: what the
 * resource returned is checked (not 0, aligned, on the resource's device) and recorded in this
 * thread's front table like a pool's allocation (registry_front.h), so an allocation through an
 * installed resource costs the resource's own call plus a few loads and stores; the check that
 * asks the driver runs once per driver allocation the resource carves its memory from.
 */
#define _POSIX_C_SOURCE 200809L /* open_memstream */

#include "memory/resource.h"
#include "runtime/current.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ALIGN ((uint64_t)CUCORE_MR_DEFAULT_ALIGNMENT)

/* A resource's failure (`st` its status; CUCORE_OK when it gave address 0), naming it; the
 * message of a cucore call that failed inside the callback is kept after it. */
CC_COLD static cucore_status fail_alloc(const cucore_mem_resource *res, const cucore_device *dev,
                                        size_t bytes, cucore_status st, const char *fn) {
  int inner = st != CUCORE_OK && cc_message_kept();
  const char *said = st == CUCORE_OK ? "address 0" : cucore_status_name(st);
  if (st == CUCORE_OK)
    st = res->device < 0 ? CUCORE_HOST_OUT_OF_MEMORY : CUCORE_DEVICE_OUT_OF_MEMORY;
  char want[32], *msg = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&msg, &len);
  if (!f) return cc_fail(st, "%s: memory resource '%s' failed", fn, res->name);
  fprintf(f, "%s: memory resource '%s' could not allocate %s (%zu bytes) for device %d: ", fn,
          res->name, cc_format_bytes(bytes, want, sizeof want), bytes, dev->ordinal);
  if (inner)
    fprintf(f, "%s", cucore_last_error());
  else
    fprintf(f, "it returned %s", said);
  fclose(f);
  st = cc_fail_restate(st, msg);
  free(msg);
  return st;
}

/* Gives a refused or unrecordable allocation back to its resource (its failure is not
 * reported: the refusal is). */
static void undo(cucore_mem_resource *res, cucore_devptr p, size_t bytes, cucore_stream *s) {
  (void)res->ops.deallocate(res->user, p, bytes, ALIGN, s);
}

/* Remembers a checked driver allocation in a free slot (none free: not remembered). */
static void remember(cucore_mem_resource *res, uint64_t lo, uint64_t hi) {
  for (int i = 0; i < CC_MRES_SPANS && lo; i++) {
    uint64_t zero = 0;
    if (atomic_compare_exchange_strong(&res->spans[i].hi, &zero, hi)) {
      atomic_store_explicit(&res->spans[i].lo, lo, memory_order_release);
      return;
    }
  }
}

/* The driver's view of `p`: on another device than the resource's is refused; the driver
 * allocation it lies in is remembered as checked. Memory the driver does not know passes. */
CC_COLD static cucore_status check_device(cucore_mem_resource *res, cucore_devptr p, size_t bytes,
                                          const char *fn) {
  int ord = -1;
  if (!DRV(cuPointerGetAttribute) ||
      DRV(cuPointerGetAttribute)(&ord, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, (CUdeviceptr)p) !=
          CUDA_SUCCESS)
    return CUCORE_OK;
  if (ord != res->device)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: memory resource '%s' returned 0x%llx, memory of device %d; it allocates "
                   "for device %d (cuPointerGetAttribute DEVICE_ORDINAL)",
                   fn, res->name, (unsigned long long)p, ord, res->device);
  CUdeviceptr lo = 0;
  size_t size = 0;
  if (DRV(cuPointerGetAttribute)(&lo, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, (CUdeviceptr)p) ==
          CUDA_SUCCESS &&
      DRV(cuPointerGetAttribute)(&size, CU_POINTER_ATTRIBUTE_RANGE_SIZE, (CUdeviceptr)p) ==
          CUDA_SUCCESS &&
      lo <= p && p + bytes <= lo + size)
    remember(res, lo, lo + size);
  return CUCORE_OK;
}

/* The checks a resource's address needs beyond its span: aligned, then its device. */
CC_COLD static cucore_status check_address(cucore_mem_resource *res, cucore_devptr p, size_t bytes,
                                           const char *fn) {
  if (p & (ALIGN - 1))
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: memory resource '%s' returned 0x%llx, which is not aligned to the %llu "
                   "bytes asked for (it is %llu bytes past a multiple)",
                   fn, res->name, (unsigned long long)p, (unsigned long long)ALIGN,
                   (unsigned long long)(p & (ALIGN - 1)));
  if (res->trusted || res->device < 0) return CUCORE_OK;
  return check_device(res, p, bytes, fn);
}

static inline int in_span(const cucore_mem_resource *res, cucore_devptr p, size_t bytes) {
  for (int i = 0; i < CC_MRES_SPANS; i++) {
    uint64_t lo = atomic_load_explicit(&res->spans[i].lo, memory_order_acquire);
    if (!lo) return 0; /* slots fill in order */
    uint64_t hi = atomic_load_explicit(&res->spans[i].hi, memory_order_relaxed);
    if (p >= lo && p < hi && bytes <= hi - p) return 1;
  }
  return 0;
}

CC_COLD static cucore_status record_slow(cucore_mem_resource *res, const cucore_device *dev,
                                         cucore_devptr p, size_t bytes, const char *fn) {
  cc_mem_rec rec = {.base = p,
                    .size = bytes,
                    .kind = CUCORE_MEM_RESOURCE,
                    .ordinal = res->device,
                    .ctx = dev->ctx,
                    .owner = res};
  if (cc_front_insert(&rec) || cc_reg_insert(&cc_mem_registry, &rec, 1) == CC_REG_OK)
    return CUCORE_OK;
  return cc_fail(CUCORE_HOST_OUT_OF_MEMORY,
                 "%s: out of host memory recording a %zu-byte allocation of memory resource '%s'",
                 fn, bytes, res->name);
}

/* The resource whose allocate runs on this thread: one that calls cucore to allocate from
 * itself again (cucore_mem_alloc on the device it is installed on) is refused, not recursed. */
static _Thread_local const cucore_mem_resource *tls_allocating;

CC_COLD static cucore_status fail_reentry(const cucore_mem_resource *res, const char *fn) {
  return cc_fail(CUCORE_INVALID_ARGUMENT,
                 "%s: called from inside memory resource '%s''s own allocate, which would call "
                 "it again; a resource takes its memory from the driver or another resource",
                 fn, res->name);
}

cucore_status cc_mres_alloc(cucore_mem_resource *res, cucore_device *dev, cucore_stream *s,
                            size_t bytes, cucore_devptr *out, const char *fn) {
  if (CC_UNLIKELY(tls_allocating == res)) return fail_reentry(res, fn);
  const cucore_mem_resource *outer = tls_allocating;
  tls_allocating = res;
  cucore_devptr p = 0;
  cucore_status st = res->ops.allocate(res->user, bytes, ALIGN, s, &p);
  tls_allocating = outer;
  if (CC_UNLIKELY(st != CUCORE_OK || p == 0)) return fail_alloc(res, dev, bytes, st, fn);
  if (CC_UNLIKELY(res->self_records)) {
    *out = p;
    return CUCORE_OK;
  }
  if (CC_UNLIKELY((p & (ALIGN - 1)) || !in_span(res, p, bytes))) {
    st = check_address(res, p, bytes, fn);
    if (st != CUCORE_OK) {
      undo(res, p, bytes, s);
      return st;
    }
  }
  if (CC_UNLIKELY(!cc_front_put(p, bytes, dev->ctx, NULL, res, CUCORE_MEM_RESOURCE, res->device))) {
    st = record_slow(res, dev, p, bytes, fn);
    if (st != CUCORE_OK) {
      undo(res, p, bytes, s);
      return st;
    }
  }
  *out = p;
  return CUCORE_OK;
}

/* The resource's deallocate of [base, base + size) on `s`, its failure named. */
static cucore_status give_back(cucore_mem_resource *res, uint64_t base, uint64_t size,
                               cucore_stream *s, const char *fn) {
  cucore_status st = res->ops.deallocate(res->user, base, size, ALIGN, s);
  if (CC_LIKELY(st == CUCORE_OK)) return CUCORE_OK;
  if (cc_message_kept()) return st;
  return cc_fail(st, "%s: memory resource '%s' failed to deallocate %llu bytes at 0x%llx: %s", fn,
                 res->name, (unsigned long long)size, (unsigned long long)base,
                 cucore_status_name(st));
}

cucore_status cc_mres_give_back(const cc_mem_rec *rec, cucore_stream *s, const char *fn) {
  return give_back(rec->owner, rec->base, rec->size, s, fn);
}

void cc_mres_give_back_anywhere(const cc_mem_rec *rec) {
  CUcontext old = NULL;
  int pushed = rec->ctx && DRV(cuCtxPushCurrent)(rec->ctx) == CUDA_SUCCESS;
  (void)give_back(rec->owner, rec->base, rec->size, NULL, "a DLPack deleter");
  if (pushed) (void)DRV(cuCtxPopCurrent)(&old);
}

int cc_mres_free_mine(uint64_t ptr, cucore_device *dev, CUcontext ctx, cucore_stream *s,
                      cucore_status *st, const char *fn) {
  uint64_t state;
  cc_front_view v;
  cc_front_entry *e = cc_front_find(ptr, &state, &v);
  if (CC_LIKELY(!e) || v.kind != CUCORE_MEM_RESOURCE || (ctx && v.ctx != ctx)) return 0;
  *st = cc_device_make_current_fast(dev); /* first: on its failure nothing is taken */
  if (CC_UNLIKELY(*st != CUCORE_OK)) return 1;
  if (!cc_front_commit(e, state)) return 0; /* drained meanwhile: the registry has it */
  *st = give_back(v.owner, ptr, v.size, s, fn);
  return 1;
}

/* ---- the public calls ------------------------------------------------------------------------ */

/* `dev` may allocate from `res` on `s`: the resource's device (any for a host resource), and
 * the stream's. */
static cucore_status check_use(const cucore_mem_resource *res, cucore_device *dev, cucore_stream *s,
                               const char *fn) {
  cucore_status st = cc_mem_pair_check(dev, s, fn);
  if (st != CUCORE_OK) return st;
  if (res->device >= 0 && res->device != dev->ordinal)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: memory resource '%s' allocates memory of device %d, not of device %d", fn,
                   res->name, res->device, dev->ordinal);
  return CUCORE_OK;
}

cucore_status cucore_mem_resource_allocate(cucore_mem_resource *res, cucore_device *dev,
                                           cucore_stream *stream, size_t bytes,
                                           cucore_devptr *out) {
  cc_begin();
  const char *fn = "cucore_mem_resource_allocate";
  CC_CHECK_ARG(out, fn, "out");
  *out = 0;
  CC_CHECK_HANDLE(res, MEM_RESOURCE, fn, "res");
  cucore_status st = cc_mem_check_alloc_size(bytes, fn);
  if (st == CUCORE_OK) st = check_use(res, dev, stream, fn);
  if (st == CUCORE_OK) st = cc_device_make_current(dev);
  if (st != CUCORE_OK) return st;
  return cc_mres_alloc(res, dev, stream, bytes, out, fn);
}

typedef struct from_ctx {
  const cucore_mem_resource *res;
  int other; /* a resource allocation of another resource */
} from_ctx;

static int accept_from(const cc_mem_rec *rec, void *ctx) {
  from_ctx *c = ctx;
  if (rec->kind != CUCORE_MEM_RESOURCE) return 0;
  c->other = rec->owner != c->res;
  return !c->other;
}

cucore_status cucore_mem_resource_deallocate(cucore_mem_resource *res, cucore_stream *stream,
                                             cucore_devptr ptr) {
  cc_begin();
  const char *fn = "cucore_mem_resource_deallocate";
  CC_CHECK_HANDLE(res, MEM_RESOURCE, fn, "res");
  if (stream) CC_CHECK_HANDLE(stream, STREAM, fn, "stream");
  if (ptr == 0) return CUCORE_OK;
  cc_mem_rec rec;
  if (res->self_records) { /* its pool checks and forgets its own blocks */
    uint64_t size = cc_reg_find(&cc_mem_registry, ptr, &rec) ? rec.size : 0;
    return give_back(res, ptr, size, stream, fn);
  }
  from_ctx c = {res, 0};
  cc_reg_result r = cc_reg_take(&cc_mem_registry, ptr, accept_from, &c, 0, &rec);
  if (r == CC_REG_REJECTED && c.other)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: 0x%llx came from memory resource '%s', not from '%s'; give it back to the "
                   "resource it came from",
                   fn, (unsigned long long)ptr, ((cucore_mem_resource *)rec.owner)->name,
                   res->name);
  if (r != CC_REG_OK)
    return cc_mem_explain_take(r, &rec, ptr, fn, "an allocation of this memory resource");
  return cc_mres_give_back(&rec, stream, fn);
}
