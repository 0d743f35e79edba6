/*
 * memory/resource.h -- memory resources (resource.c: the handle, checking and recording what a
 * resource returns, a device's installed resource; resource_builtin.c: cucore's own allocators
 * as resources). The allocation paths of device_mem.c and pool.c ask cc_mres_of (one load) and
 * route through cc_mres_alloc; the free paths hand a record of kind CUCORE_MEM_RESOURCE to
 * cc_mres_give_back.
 */
#ifndef CUCORE_MEMORY_RESOURCE_H
#define CUCORE_MEMORY_RESOURCE_H

#include "memory/registry_front.h"

/* Devices a resource can be installed on (ordinals 0 .. CC_MRES_MAX_DEVICES - 1). */
#define CC_MRES_MAX_DEVICES 64

/* Driver allocations per resource whose device was verified (resource_alloc.c). */
#define CC_MRES_SPANS 4

struct cucore_mem_resource {
  cc_handle hdr; /* first: the magic word of base/handle.h */
  cucore_mem_resource_ops ops;
  void *user;
  int device;           /* ordinal, or -1 for host memory */
  unsigned flags;       /* CUCORE_MR_* */
  int trusted;          /* cucore's own: the device of what it returns is not asked */
  int self_records;     /* its allocator records its blocks itself (a pinned host pool) */
  atomic_int installed; /* devices it is installed on */
  /* Driver allocations [lo, hi) whose device was verified: addresses inside them are not asked
   * again (a pool's slabs). Each slot is set once: hi claimed first, then lo published. */
  struct {
    _Atomic uint64_t lo, hi;
  } spans[CC_MRES_SPANS];
  char *name;
};

/* Each device's installed resource (NULL: cucore's default). */
extern _Atomic(cucore_mem_resource *) cc_mres_installed[CC_MRES_MAX_DEVICES];

/* The resource installed on `dev`'s device, or NULL: one load on the allocation paths. */
static inline cucore_mem_resource *cc_mres_of(const cucore_device *dev) {
  unsigned o = (unsigned)dev->ordinal;
  if (CC_UNLIKELY(o >= CC_MRES_MAX_DEVICES)) return NULL;
  return atomic_load_explicit(&cc_mres_installed[o], memory_order_acquire);
}

/* Allocates `bytes` from `res` for `dev` on `s` (NULL: the legacy stream), the device current:
 * the address checked (not 0, aligned, on the resource's device) and recorded (kind
 * CUCORE_MEM_RESOURCE, owner `res`); on a refusal the memory goes back to the resource. */
cucore_status cc_mres_alloc(cucore_mem_resource *res, cucore_device *dev, cucore_stream *s,
                            size_t bytes, cucore_devptr *out, const char *fn);
/* Gives the memory of a record of kind CUCORE_MEM_RESOURCE (taken from the registry already)
 * back through its resource on `s`. */
cucore_status cc_mres_give_back(const cc_mem_rec *rec, cucore_stream *s, const char *fn);
/* The same from any thread, stream NULL, in the record's context (a DLPack deleter); a failure
 * is not reported (the deleter has no caller to tell). */
void cc_mres_give_back_anywhere(const cc_mem_rec *rec);
/* A free of `ptr` on `s` (NULL: synchronous) when it is this thread's own front record of a
 * resource allocation (made in context `ctx`, when not NULL): takes it, makes `dev` current and
 * gives it back (*st the result), 1; else 0 and nothing done. */
int cc_mres_free_mine(uint64_t ptr, cucore_device *dev, CUcontext ctx, cucore_stream *s,
                      cucore_status *st, const char *fn);
/* The CUCORE_MR_* facts of a record's resource (the record of kind CUCORE_MEM_RESOURCE is live,
 * so its resource is: destroy is refused meanwhile). */
unsigned cc_mres_rec_flags(const cc_mem_rec *rec);
/* A new resource (resource_builtin.c uses it for cucore's own). */
cucore_status cc_mres_new(const cucore_mem_resource_ops *ops, void *user, int device,
                          unsigned flags, const char *name, cucore_mem_resource **out);

#endif /* CUCORE_MEMORY_RESOURCE_H */
