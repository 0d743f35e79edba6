/*
 * bounds.c -- range arithmetic and the checks every copy, fill, texture and tensor map makes
 * against the record before the driver sees an address. Messages name the function, the side
 * (destination, source), both sizes and the offset.
 */
#include "memory/memory.h"

#include <stdio.h>
#include <string.h>

atomic_uint cc_mem_check_flags;

const char *cucore_mem_kind_name(cucore_mem_kind kind) {
  switch (kind) {
  case CUCORE_MEM_UNKNOWN: return "unknown";
  case CUCORE_MEM_DEVICE: return "device";
  case CUCORE_MEM_DEVICE_PITCHED: return "pitched device";
  case CUCORE_MEM_POOL: return "stream-ordered pool";
  case CUCORE_MEM_MANAGED: return "managed";
  case CUCORE_MEM_PINNED: return "pinned host";
  case CUCORE_MEM_PINNED_POOL: return "pinned-pool host";
  case CUCORE_MEM_REGISTERED: return "registered host";
  case CUCORE_MEM_IPC_IMPORTED: return "IPC-imported device";
  case CUCORE_MEM_DLPACK_IMPORTED: return "DLPack-imported";
  case CUCORE_MEM_GRAPH: return "graph";
  case CUCORE_MEM_VMM: return "virtual-memory";
  case CUCORE_MEM_POOL_PINNED: return "stream-ordered pinned host pool";
  case CUCORE_MEM_POOL_MANAGED: return "stream-ordered managed pool";
  case CUCORE_MEM_RESOURCE: return "memory-resource";
  }
  return "unknown";
}

/* The call that makes memory of a kind, for messages. */
static const char *maker(cucore_mem_kind kind) {
  switch (kind) {
  case CUCORE_MEM_DEVICE: return "cucore_mem_alloc";
  case CUCORE_MEM_DEVICE_PITCHED: return "cucore_mem_alloc_pitch";
  case CUCORE_MEM_POOL: return "cucore_mem_alloc_async / cucore_mem_pool_alloc_async";
  case CUCORE_MEM_MANAGED: return "cucore_mem_alloc_managed";
  case CUCORE_MEM_PINNED: return "cucore_host_alloc";
  case CUCORE_MEM_PINNED_POOL: return "cucore_host_pool_alloc";
  case CUCORE_MEM_REGISTERED: return "cucore_host_register";
  case CUCORE_MEM_IPC_IMPORTED: return "cucore_mem_pool_import_pointer";
  case CUCORE_MEM_DLPACK_IMPORTED: return "cucore_dlpack_import";
  case CUCORE_MEM_GRAPH: return "an allocation node, cucore_graph_add_mem_alloc_node";
  case CUCORE_MEM_VMM: return "cucore_vmm_map / cucore_vmm_buffer_create";
  case CUCORE_MEM_POOL_PINNED:
  case CUCORE_MEM_POOL_MANAGED: return "cucore_mem_pool_alloc_async";
  case CUCORE_MEM_RESOURCE: return "a memory resource, cucore_mem_resource_allocate";
  default: return "?";
  }
}

const char *cc_rec_describe(const cc_mem_rec *rec, char *buf, size_t n) {
  char dev[32] = "";
  if (rec->ordinal >= 0) snprintf(dev, sizeof dev, " on device %d", rec->ordinal);
  snprintf(buf, n, "a %llu-byte %s %s (%s) at 0x%llx%s", (unsigned long long)rec->size,
           cucore_mem_kind_name(rec->kind),
           (rec->flags & CC_REC_ALIAS) ? "range (device address)" : "allocation", maker(rec->kind),
           (unsigned long long)rec->base, dev);
  return buf;
}

cucore_status cc_check_size(uint64_t bytes, const char *fn, const char *what) {
  if (CC_LIKELY(bytes >> 63 == 0)) return CUCORE_OK;
  return cc_fail(CUCORE_INVALID_ARGUMENT,
                 "%s: %s is %llu, which is %lld as a signed number: a negative value converted "
                 "to size_t?",
                 fn, what, (unsigned long long)bytes, (long long)bytes);
}

int cc_footprint_2d(uint64_t x, uint64_t y, uint64_t pitch, uint64_t width, uint64_t height,
                    uint64_t *first, uint64_t *end) {
  uint64_t row0, last_row, t;
  if (!cc_mul_u64(y, pitch, &row0) || !cc_add_u64(row0, x, first)) return 0;
  if (width == 0 || height == 0) {
    *end = *first;
    return 1;
  }
  if (!cc_add_u64(y, height - 1, &t) || !cc_mul_u64(t, pitch, &last_row) ||
      !cc_add_u64(last_row, x, &t) || !cc_add_u64(t, width, end))
    return 0;
  return 1;
}

int cc_footprint_3d(uint64_t x, uint64_t y, uint64_t z, uint64_t pitch, uint64_t slice_rows,
                    uint64_t width, uint64_t height, uint64_t depth, uint64_t *first,
                    uint64_t *end) {
  /* Rows counted from the base: z * slice_rows + y; the last is (z + depth - 1) * slice_rows +
   * y + height - 1. */
  uint64_t r0, rz, t;
  if (!cc_mul_u64(z, slice_rows, &rz) || !cc_add_u64(rz, y, &r0)) return 0;
  if (width == 0 || height == 0 || depth == 0) {
    if (!cc_mul_u64(r0, pitch, &t) || !cc_add_u64(t, x, first)) return 0;
    *end = *first;
    return 1;
  }
  uint64_t last_z, last_row;
  if (!cc_add_u64(z, depth - 1, &last_z) || !cc_mul_u64(last_z, slice_rows, &t) ||
      !cc_add_u64(t, y, &t) || !cc_add_u64(t, height - 1, &last_row))
    return 0;
  return cc_footprint_2d(x, r0, pitch, 0, 0, first, &t) &&
         cc_footprint_2d(x, last_row, pitch, width, 1, &t, end);
}

cucore_status cc_range_vs_rec(const cc_mem_rec *rec, uint64_t addr, uint64_t bytes, const char *fn,
                              const char *role) {
  uint64_t off = addr - rec->base;
  if (CC_LIKELY(bytes <= rec->size - off)) return CUCORE_OK;
  char what[256];
  cc_rec_describe(rec, what, sizeof what);
  return cc_fail(CUCORE_OUT_OF_BOUNDS,
                 "%s: the %s runs past the end of its allocation: %llu bytes at offset %llu of "
                 "%s; it would end %llu bytes past it (at most %llu bytes fit from that offset)",
                 fn, role, (unsigned long long)bytes, (unsigned long long)off, what,
                 (unsigned long long)(bytes - (rec->size - off)),
                 (unsigned long long)(rec->size - off));
}

/* A range that starts where cucore knows nothing but reaches into a record. */
static cucore_status runs_into(const cc_mem_rec *rec, uint64_t addr, uint64_t bytes, const char *fn,
                               const char *role) {
  char what[256];
  cc_rec_describe(rec, what, sizeof what);
  return cc_fail(CUCORE_OUT_OF_BOUNDS,
                 "%s: the %s (%llu bytes at 0x%llx) starts outside every cucore allocation but "
                 "runs into %s, %llu bytes in: a range spans two allocations",
                 fn, role, (unsigned long long)bytes, (unsigned long long)addr, what,
                 (unsigned long long)(addr + bytes - rec->base));
}

static cucore_status wraps(uint64_t addr, uint64_t bytes, const char *fn, const char *role) {
  return cc_fail(CUCORE_INVALID_ARGUMENT,
                 "%s: the %s range of %llu bytes at 0x%llx wraps around the end of the address "
                 "space (offset + size overflows)",
                 fn, role, (unsigned long long)bytes, (unsigned long long)addr);
}

/* The driver's range for an address cucore does not know (CUCORE_MEM_CHECK_FOREIGN); 0 when
 * the driver does not know it either. */
static int cc_mem_driver_range(uint64_t addr, cc_mem_rec *out) {
  if (!cc_driver_ready()) return 0;
  if (!DRV(cuPointerGetAttributes)) return 0;
  CUpointer_attribute attrs[3] = {CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                                  CU_POINTER_ATTRIBUTE_RANGE_SIZE,
                                  CU_POINTER_ATTRIBUTE_MEMORY_TYPE};
  CUdeviceptr start = 0;
  size_t size = 0;
  unsigned type = 0;
  void *data[3] = {&start, &size, &type};
  if (DRV(cuPointerGetAttributes)(3, attrs, data, (CUdeviceptr)addr) != CUDA_SUCCESS) return 0;
  if (type == 0 || size == 0 || addr < start || addr - start >= size) return 0;
  memset(out, 0, sizeof *out);
  out->base = start;
  out->size = size;
  out->kind = CUCORE_MEM_UNKNOWN;
  out->ordinal = -1;
  return 1;
}

/* A write into a record imported read-only (CC_REC_READ_ONLY), refused; CUCORE_OK for any
 * other record or a side that is read. Every side cucore writes is named "destination". */
static cucore_status check_writable(const cc_mem_rec *rec, uint64_t addr, const char *fn,
                                    const char *role) {
  if (CC_LIKELY(!(rec->flags & CC_REC_READ_ONLY)) || strcmp(role, "destination") != 0)
    return CUCORE_OK;
  char what[256];
  cc_rec_describe(rec, what, sizeof what);
  return cc_fail(CUCORE_INVALID_ARGUMENT,
                 "%s: the destination 0x%llx lies in %s, which its producer marked read-only "
                 "(DLPack's READ_ONLY flag): cucore does not write into it",
                 fn, (unsigned long long)addr, what);
}

/* The check of one side, given where the lookup found it. */
static cucore_status check_side(uint64_t addr, uint64_t bytes, int where, const cc_mem_rec *rec,
                                const char *fn, const char *role) {
  if (CC_LIKELY(where == CC_LOC_IN)) {
    cucore_status st = check_writable(rec, addr, fn, role);
    return st != CUCORE_OK ? st : cc_range_vs_rec(rec, addr, bytes, fn, role);
  }
  if (where == CC_LOC_INTO) return runs_into(rec, addr, bytes, fn, role);
  /* Unknown to cucore: when asked, it must fit the driver's idea of its allocation. */
  if (CC_UNLIKELY(atomic_load_explicit(&cc_mem_check_flags, memory_order_relaxed) &
                  CUCORE_MEM_CHECK_FOREIGN)) {
    cc_mem_rec drv;
    if (cc_mem_driver_range(addr, &drv)) {
      uint64_t off = addr - drv.base;
      if (bytes > drv.size - off)
        return cc_fail(CUCORE_OUT_OF_BOUNDS,
                       "%s: the %s runs past the end of its allocation: %llu bytes at offset %llu "
                       "of a %llu-byte allocation at 0x%llx that cucore did not make (the "
                       "driver's range); at most %llu bytes fit from that offset",
                       fn, role, (unsigned long long)bytes, (unsigned long long)off,
                       (unsigned long long)drv.size, (unsigned long long)drv.base,
                       (unsigned long long)(drv.size - off));
    }
  }
  return CUCORE_OK;
}

cucore_status cc_mem_check_range(uint64_t addr, uint64_t bytes, const char *fn, const char *role) {
  if (bytes == 0) return CUCORE_OK;
  uint64_t end;
  if (CC_UNLIKELY(!cc_add_u64(addr, bytes, &end))) return wraps(addr, bytes, fn, role);
  cc_mem_rec rec;
  int where = cc_reg_locate(&cc_mem_registry, addr, end, &rec);
  return check_side(addr, bytes, where, &rec, fn, role);
}

/* ---- what this thread saw ------------------------------------------------------------------ */

/* The records the last copies of this thread were checked against, trusted again without the
 * registry's lock while they stay valid: the registry's generation is the same (no record was
 * removed or changed since), a pinned-pool block is still in the hand-out it was in, and no
 * thread's front table holds records that a drain would add (which could evict these). Then
 * the locked lookup would find the same record, so a range inside it passes as it would. Only
 * records that contained a whole checked range are kept; anything else takes the lock. */
#define SEEN_SLOTS 4

typedef struct seen_range {
  uint64_t base, end, gen; /* gen 0: empty */
  struct cc_hpool_block *block;
  uint64_t block_state;
} seen_range;

static CC_TLS_IE _Thread_local seen_range tls_seen[SEEN_SLOTS];
static CC_TLS_IE _Thread_local unsigned tls_seen_next;

/* The slot whose record holds [addr, end) and is still valid (NULL: none). */
static inline const seen_range *seen_slot(uint64_t addr, uint64_t end, uint64_t gen) {
  for (int i = 0; i < SEEN_SLOTS; i++) {
    const seen_range *r = &tls_seen[i];
    if (r->gen == gen && addr >= r->base && end <= r->end &&
        (!r->block ||
         atomic_load_explicit(&r->block->state, memory_order_acquire) == r->block_state))
      return r;
  }
  return NULL;
}

static inline int seen_covers(uint64_t addr, uint64_t end, uint64_t gen) {
  return seen_slot(addr, end, gen) != NULL;
}

static void remember_seen(const cc_mem_rec *rec, const cc_reg_seen *seen) {
  /* (A read-only record is never trusted unlocked: the fast path does not know the side.) */
  if (!seen->gen || (rec->flags & CC_REC_READ_ONLY)) return;
  unsigned slot = tls_seen_next;
  for (unsigned i = 0; i < SEEN_SLOTS; i++)
    if (tls_seen[i].base == rec->base) slot = i; /* renewed in place */
  if (slot == tls_seen_next) tls_seen_next = (tls_seen_next + 1) % SEEN_SLOTS;
  tls_seen[slot] = (seen_range){rec->base, rec->base + rec->size, seen->gen, seen->block,
                                seen->block_state};
}

/* The locked check of both sides, remembering what passed. */
static cucore_status check_copy_locked(uint64_t dst, uint64_t src, uint64_t bytes, const char *fn) {
  cc_mem_rec d, s;
  cc_reg_seen sd, ss;
  int ld = 0, ls = 0;
  cc_reg_locate2(&cc_mem_registry, dst, src, bytes, &d, &ld, &s, &ls, &sd, &ss);
  cucore_status st = check_side(dst, bytes, ld, &d, fn, "destination");
  if (st != CUCORE_OK) return st;
  st = check_side(src, bytes, ls, &s, fn, "source");
  if (st != CUCORE_OK) return st;
  if (ld == CC_LOC_IN) remember_seen(&d, &sd);
  if (ls == CC_LOC_IN) remember_seen(&s, &ss);
  return CUCORE_OK;
}

cucore_status cc_mem_check_copy(uint64_t dst, uint64_t src, uint64_t bytes, const char *fn) {
  if (bytes == 0) return CUCORE_OK;
  uint64_t dend, send;
  if (CC_UNLIKELY(!cc_add_u64(dst, bytes, &dend))) return wraps(dst, bytes, fn, "destination");
  if (CC_UNLIKELY(!cc_add_u64(src, bytes, &send))) return wraps(src, bytes, fn, "source");
  uint64_t gen = atomic_load_explicit(&cc_mem_reg_gen, memory_order_acquire);
  if (CC_LIKELY(seen_covers(dst, dend, gen) && seen_covers(src, send, gen) && !cc_front_pending()))
    return CUCORE_OK;
  return check_copy_locked(dst, src, bytes, fn);
}

cucore_status cc_mem_check_copy_spans(uint64_t dst, uint64_t src, uint64_t bytes, const char *fn,
                                      uint64_t span[4]) {
  span[0] = span[1] = span[2] = span[3] = 0;
  if (bytes == 0) return CUCORE_OK;
  uint64_t dend, send;
  if (CC_UNLIKELY(!cc_add_u64(dst, bytes, &dend))) return wraps(dst, bytes, fn, "destination");
  if (CC_UNLIKELY(!cc_add_u64(src, bytes, &send))) return wraps(src, bytes, fn, "source");
  uint64_t gen = atomic_load_explicit(&cc_mem_reg_gen, memory_order_acquire);
  const seen_range *d = seen_slot(dst, dend, gen), *s = d ? seen_slot(src, send, gen) : NULL;
  if (CC_LIKELY(d && s && !cc_front_pending())) {
    span[0] = d->base, span[1] = d->end, span[2] = s->base, span[3] = s->end;
    return CUCORE_OK;
  }
  cucore_status st = check_copy_locked(dst, src, bytes, fn);
  if (st != CUCORE_OK) return st;
  /* Both records passed and were remembered when both sides lie in one: take their spans. */
  d = seen_slot(dst, dend, gen);
  s = d ? seen_slot(src, send, gen) : NULL;
  if (d && s) span[0] = d->base, span[1] = d->end, span[2] = s->base, span[3] = s->end;
  return CUCORE_OK;
}

cucore_status cucore_mem_set_checks(unsigned flags) {
  cc_begin();
  unsigned known = CUCORE_MEM_CHECK_FOREIGN | CUCORE_MEM_CHECK_KERNEL_POINTERS;
  if (flags & ~known)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "cucore_mem_set_checks: unknown flags 0x%x (expected CUCORE_MEM_CHECK_FOREIGN "
                   "and/or CUCORE_MEM_CHECK_KERNEL_POINTERS)",
                   flags & ~known);
  atomic_store(&cc_mem_check_flags, flags);
  return CUCORE_OK;
}

cucore_status cucore_mem_get_checks(unsigned *flags) {
  cc_begin();
  CC_CHECK_ARG(flags, "cucore_mem_get_checks", "flags");
  *flags = atomic_load(&cc_mem_check_flags);
  return CUCORE_OK;
}

cucore_status cc_mem_check_region(uint64_t addr, uint64_t first, uint64_t end, const char *fn,
                                  const char *role, const char *shape) {
  if (end <= first) return CUCORE_OK;
  uint64_t lo, hi;
  if (!cc_add_u64(addr, first, &lo) || !cc_add_u64(addr, end, &hi))
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: the %s (%s) at 0x%llx ends past the end of the address space", fn, role,
                   shape, (unsigned long long)addr);
  cc_mem_rec rec;
  if (cc_reg_find(&cc_mem_registry, addr, &rec)) {
    cucore_status st = check_writable(&rec, addr, fn, role);
    if (st != CUCORE_OK) return st;
    uint64_t off = addr - rec.base;
    if (end <= rec.size - off) return CUCORE_OK;
    char what[256];
    cc_rec_describe(&rec, what, sizeof what);
    return cc_fail(CUCORE_OUT_OF_BOUNDS,
                   "%s: the %s (%s) spans bytes %llu to %llu from 0x%llx, which is at offset "
                   "%llu of %s: it ends %llu bytes past the allocation (at most %llu bytes fit "
                   "from that offset)",
                   fn, role, shape, (unsigned long long)first, (unsigned long long)end,
                   (unsigned long long)addr, (unsigned long long)off, what,
                   (unsigned long long)(end - (rec.size - off)),
                   (unsigned long long)(rec.size - off));
  }
  return cc_mem_check_range(lo, hi - lo, fn, role);
}
