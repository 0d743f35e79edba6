/*
 * vmm_buffer.c -- a growable device buffer on virtual memory: an address range
 * reserved up front (and, past it, ranges reserved right after it), physical chunks mapped one
 * after another, one registry record for the whole buffer that grows with it. Growing never
 * moves the address nor copies the contents.
 */
#include "memory/vmm.h"

#include <stdlib.h>
#include <string.h>

typedef struct vmm_range {
  uint64_t base, bytes;
} vmm_range;
typedef struct vmm_chunk {
  CUmemGenericAllocationHandle handle;
  uint64_t bytes;
} vmm_chunk;

struct cucore_vmm_buffer {
  cc_handle hdr; /* first: the magic word of base/handle.h */
  cucore_device *dev;
  uint64_t base, bytes, mapped, reserved, granularity;
  vmm_range *ranges; /* reservations, in address order, adjacent */
  size_t nranges, ranges_cap;
  vmm_chunk *chunks; /* mapped physical memory, in address order from base */
  size_t nchunks, chunks_cap;
};

/* Reserves `bytes` right after the buffer's reservations (or anywhere for the first). */
static cucore_status reserve_more(cucore_vmm_buffer *b, uint64_t bytes, const char *fn) {
  vmm_range *ranges = cc_grow(b->ranges, &b->ranges_cap, b->nranges + 1, sizeof *ranges,
                              "a virtual memory buffer's reservations");
  if (!ranges) return cucore_last_status();
  b->ranges = ranges;
  cucore_status st = CC_DRV_REQUIRE(cuMemAddressReserve);
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuMemAddressFree);
  if (st != CUCORE_OK) return st;
  uint64_t want = b->nranges ? b->base + b->reserved : 0;
  CUdeviceptr p = 0;
  CUresult r = DRV(cuMemAddressReserve)(&p, bytes, 0, (CUdeviceptr)want, 0);
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, "cuMemAddressReserve", "%s: %llu bytes of address space", fn,
                      (unsigned long long)bytes);
  if (want && p != want) {
    (void)DRV(cuMemAddressFree)(p, bytes);
    return cc_fail(CUCORE_DEVICE_OUT_OF_MEMORY,
                   "%s: the addresses after the buffer's %llu "
                   "reserved bytes are taken, so it cannot grow in place (create it with a "
                   "larger max_bytes to reserve more up front)",
                   fn, (unsigned long long)b->reserved);
  }
  b->ranges[b->nranges++] = (vmm_range){p, bytes};
  if (!want) b->base = p;
  b->reserved += bytes;
  return CUCORE_OK;
}

/* Maps `bytes` of new physical memory right after what is mapped. */
static cucore_status map_more(cucore_vmm_buffer *b, uint64_t bytes, const char *fn) {
  vmm_chunk *chunks = cc_grow(b->chunks, &b->chunks_cap, b->nchunks + 1, sizeof *chunks,
                              "a virtual memory buffer's chunks");
  if (!chunks) return cucore_last_status();
  b->chunks = chunks;
  cucore_status st = CC_DRV_REQUIRE(cuMemRelease);
  CUmemGenericAllocationHandle h = 0;
  if (st == CUCORE_OK) st = cc_vmm_create_raw(b->dev, bytes, 0, &h, fn);
  if (st != CUCORE_OK) return st;
  st = cc_vmm_map_rw(b->dev, b->base + b->mapped, bytes, h, fn);
  if (st != CUCORE_OK) {
    (void)DRV(cuMemRelease)(h);
    return st;
  }
  b->chunks[b->nchunks++] = (vmm_chunk){h, bytes};
  b->mapped += bytes;
  return CUCORE_OK;
}

/* The bytes to map next on the way to `need` mapped: up to the end of the reservation that
 * holds the first unmapped byte (a mapping may not span two reservations). */
static uint64_t piece(const cucore_vmm_buffer *b, uint64_t need) {
  uint64_t end = 0;
  for (size_t i = 0; i < b->nranges && end <= b->mapped; i++) end += b->ranges[i].bytes;
  return (end < need ? end : need) - b->mapped;
}

/* Unmaps and releases chunks and gives back reservations until `mapped` and `reserved` bytes
 * stay (a failed growth's undo, and destroy with 0 and 0). */
static void shrink_to(cucore_vmm_buffer *b, uint64_t mapped, uint64_t reserved) {
  while (b->nchunks && b->mapped > mapped) {
    vmm_chunk c = b->chunks[--b->nchunks];
    b->mapped -= c.bytes;
    (void)DRV(cuMemUnmap)((CUdeviceptr)(b->base + b->mapped), c.bytes);
    (void)DRV(cuMemRelease)(c.handle);
  }
  while (b->nranges && b->reserved > reserved) {
    vmm_range r = b->ranges[--b->nranges];
    b->reserved -= r.bytes;
    (void)DRV(cuMemAddressFree)((CUdeviceptr)r.base, r.bytes);
  }
}

/* Records the buffer's [base, base + bytes), replacing its record. */
static cucore_status record(cucore_vmm_buffer *b, uint64_t bytes, const char *fn) {
  cc_mem_rec rec = {.base = b->base,
                    .size = bytes,
                    .kind = CUCORE_MEM_VMM,
                    .ordinal = b->dev->ordinal,
                    .ctx = b->dev->ctx,
                    .owner = b};
  cc_reg_result res = cc_reg_insert(&cc_mem_registry, &rec, 1);
  if (res == CC_REG_OK) return CUCORE_OK;
  return cc_fail(res == CC_REG_NO_MEMORY ? CUCORE_HOST_OUT_OF_MEMORY : CUCORE_INTERNAL,
                 "%s: cannot record the buffer's %llu bytes at 0x%llx", fn,
                 (unsigned long long)bytes, (unsigned long long)b->base);
}

/* Grows to `bytes` (mapped up to a multiple of the granularity), or leaves all as it was. */
static cucore_status grow_to(cucore_vmm_buffer *b, uint64_t bytes, uint64_t reserve,
                             const char *fn) {
  uint64_t old_mapped = b->mapped, old_reserved = b->reserved, need = 0;
  if (!cc_vmm_round_up(bytes, b->granularity, &need) || need >> 62)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: %llu bytes is too large", fn,
                   (unsigned long long)bytes);
  if (reserve < need) reserve = need;
  cucore_status st = CUCORE_OK;
  if (b->reserved < need) st = reserve_more(b, reserve - b->reserved, fn);
  while (st == CUCORE_OK && b->mapped < need) st = map_more(b, piece(b, need), fn);
  if (st == CUCORE_OK) st = record(b, bytes, fn);
  if (st != CUCORE_OK) {
    shrink_to(b, old_mapped, old_reserved);
    return st;
  }
  b->bytes = bytes;
  return CUCORE_OK;
}

cucore_status cucore_vmm_buffer_create(cucore_device *dev, size_t bytes, size_t max_bytes,
                                       cucore_vmm_buffer **out) {
  cc_begin();
  const char *fn = "cucore_vmm_buffer_create";
  CC_CHECK_ARG(out, fn, "out");
  *out = NULL;
  if (bytes == 0) return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: size is 0 (expected > 0)", fn);
  if (max_bytes && max_bytes < bytes)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: max_bytes %zu is below the size %zu (expected "
                   "0 or at least the size)",
                   fn, max_bytes, bytes);
  size_t g = 0;
  uint64_t reserve = 0;
  cucore_status st = cc_vmm_granularity(dev, 0, 0, &g, fn);
  if (st == CUCORE_OK && !cc_vmm_round_up(max_bytes, g, &reserve))
    st = cc_fail(CUCORE_INVALID_ARGUMENT, "%s: max_bytes %zu is too large", fn, max_bytes);
  if (st != CUCORE_OK) return st;
  cucore_vmm_buffer *b = cc_calloc(1, sizeof *b, "a virtual memory buffer");
  if (!b) return CUCORE_HOST_OUT_OF_MEMORY;
  cc_handle_init(b, CC_KIND_VMM_BUFFER);
  b->dev = dev;
  b->granularity = g;
  st = grow_to(b, bytes, reserve, fn);
  if (st != CUCORE_OK) {
    free(b->ranges);
    free(b->chunks);
    free(b);
    return st;
  }
  *out = b;
  return CUCORE_OK;
}

cucore_status cucore_vmm_buffer_grow(cucore_vmm_buffer *buf, size_t bytes) {
  cc_begin();
  const char *fn = "cucore_vmm_buffer_grow";
  CC_CHECK_HANDLE(buf, VMM_BUFFER, fn, "buf");
  if (bytes <= buf->bytes) return CUCORE_OK;
  cucore_status st = cc_mem_enter(buf->dev, NULL, fn);
  if (st != CUCORE_OK) return st;
  return grow_to(buf, bytes, 0, fn);
}

cucore_status cucore_vmm_buffer_get_address(const cucore_vmm_buffer *buf, cucore_devptr *addr,
                                            size_t *bytes) {
  cc_begin();
  if (addr) *addr = 0;
  if (bytes) *bytes = 0;
  CC_CHECK_HANDLE(buf, VMM_BUFFER, "cucore_vmm_buffer_get_address", "buf");
  if (addr) *addr = buf->base;
  if (bytes) *bytes = buf->bytes;
  return CUCORE_OK;
}

static int accept_own(const cc_mem_rec *rec, void *ctx) { return rec->owner == ctx; }

cucore_status cucore_vmm_buffer_destroy(cucore_vmm_buffer *buf) {
  cc_begin();
  if (!buf) return CUCORE_OK;
  const char *fn = "cucore_vmm_buffer_destroy";
  CC_CHECK_HANDLE(buf, VMM_BUFFER, fn, "buf");
  cc_mem_rec rec;
  cc_reg_result res = cc_reg_take(&cc_mem_registry, buf->base, accept_own, buf, 0, &rec);
  if (res == CC_REG_BUSY) {
    char what[256];
    return cc_fail(CUCORE_IN_USE,
                   "%s: textures or DLPack exports still use %s (destroy them "
                   "first)",
                   fn, cc_rec_describe(&rec, what, sizeof what));
  }
  cucore_status st = cc_device_make_current(buf->dev);
  shrink_to(buf, 0, 0);
  free(buf->ranges);
  free(buf->chunks);
  cc_handle_retire(buf, CC_KIND_VMM_BUFFER);
  return st;
}
