/*
 * memory/memory.h -- the memory floor: what cucore allocated and registered, and everything
 * built on that record (copies checked against it, pools, pinned pools, managed memory, IPC,
 * DLPack, tensor maps, textures). It stands on runtime/ (devices, streams); exec/ reads it for
 * strict pointer checks of kernel arguments.
 *
 * Files: registry.c (the record: an AVL tree of address ranges under a mutex),
 * registry_front.c (each thread's table of its own stream-ordered allocations, drained into
 * the tree before any other use),
 * bounds.c (range arithmetic, the checks every copy makes, their messages), device_mem.c
 * (device, pitched, managed and pinned allocations), copy.c (copies and fills), peer.c (peer
 * access and peer copies), pool.c (device pools), pool_kinds.c (pinned host and managed pools),
 * device_pool.c and pool_current.c (the device's current pool), graph_mem.c (the device's graph
 * memory), ipc.c (pools shared between processes),
 * host_pool_core.c (size classes, free lists and per-thread caches of the pinned pool, over
 * any allocator),
 * host_pool.c (the pinned pool's API), host_register.c, managed.c (prefetch, advice, range
 * attributes; host NUMA nodes), managed_batch.c (discard, discard-and-prefetch, the batched
 * forms and their fallbacks), pointer.c (pointer facts, strict kernel pointer checks), dlpack.c,
 * tensor_map.c, texture.c (arrays, textures, surfaces), mipmap.c (mipmapped arrays, their
 * levels and textures), resource.c, resource_alloc.c and resource_builtin.c (memory resources:
 * pluggable allocators, a device's installed one; resource.h).
 */
#ifndef CUCORE_MEMORY_H
#define CUCORE_MEMORY_H

#include "base/asym_fence.h"
#include "runtime/runtime.h"

#include <pthread.h>
#include <stdatomic.h>

/* 1 when the driver refused a call for a context reason: the hot paths, which trust the context
 * cucore last made current (runtime/current.h), make it current for real and call again. */
static inline int cc_mem_context_refusal(CUresult r) {
  return r == CUDA_ERROR_INVALID_CONTEXT || r == CUDA_ERROR_CONTEXT_IS_DESTROYED;
}

/* ---- the record (registry.c) ---------------------------------------------------------------- */

enum {
  CC_REC_DLPACK_OWNED = 1, /* handed to a DLPack consumer: its deleter frees it */
  CC_REC_ALIAS = 2,        /* the device address of registered memory (the host range is the
                              main record; `alias` points at it) */
  CC_REC_LIVE = 4,         /* a pinned-pool block: the record stays while the block is pinned;
                              `aux` is its cc_hpool_block, whose state says whether it is
                              handed out (only then is the record seen) and how many bytes
                              were asked for */
  CC_REC_READ_ONLY = 8     /* a DLPack tensor imported read-only: cucore's copies and fills
                              refuse to write into it (bounds.c) */
};

/* One allocation or registered range: [base, base + size). */
typedef struct cc_mem_rec {
  uint64_t base, size; /* size as the caller asked for it */
  cucore_mem_kind kind;
  int ordinal;       /* the device; -1 for none */
  CUcontext ctx;     /* the context it was made in (NULL for imports of unknown origin) */
  void *cupool;      /* the CUmemoryPool it came from, or NULL */
  void *owner;       /* the cucore pool (device or pinned) that must outlive it, or NULL */
  uint64_t aux;      /* pinned pool: its cc_hpool_block; pitched: pitch; registered: flags */
  uint64_t alias;    /* registered memory: the other address of the pair, or 0 */
  uint32_t textures; /* texture and surface objects over it */
  uint32_t exports;  /* live DLPack exports of it */
  uint32_t flags;    /* CC_REC_* */
} cc_mem_rec;

/* The tree and its lock (registry.c; the struct is private to it, which alone needs the
 * POSIX lock declarations). */
typedef struct cc_registry cc_registry;

typedef enum cc_reg_result {
  CC_REG_OK = 0,
  CC_REG_NOT_FOUND, /* no record contains the address */
  CC_REG_NOT_BASE,  /* a record contains it, but it is not the record's start */
  CC_REG_REJECTED,  /* the caller's predicate refused the record */
  CC_REG_BUSY,      /* textures or exports use it, or a DLPack consumer owns it */
  CC_REG_OVERLAP,   /* an insert would overlap a record (and eviction was not asked) */
  CC_REG_NO_MEMORY
} cc_reg_result;

/* The process's record. */
extern cc_registry cc_mem_registry;

/* Records `rec`. With `evict`, records overlapping it are dropped first (the driver just
 * handed out the range, so they are stale: memory freed by a destroyed context). */
cc_reg_result cc_reg_insert(cc_registry *r, const cc_mem_rec *rec, int evict);
/* The record containing `addr` (copied to *out); 0 when none. */
int cc_reg_find(cc_registry *r, uint64_t addr, cc_mem_rec *out);
/* The lowest record overlapping [lo, hi); 0 when none. */
int cc_reg_find_overlap(cc_registry *r, uint64_t lo, uint64_t hi, cc_mem_rec *out);
/* Where a range [lo, hi) lies: CC_LOC_IN (a record contains lo; *out is it), CC_LOC_INTO (no
 * record contains lo, but one starts before hi; *out is it) or CC_LOC_NONE. */
enum { CC_LOC_NONE = 0, CC_LOC_IN = 1, CC_LOC_INTO = 2 };
int cc_reg_locate(cc_registry *r, uint64_t lo, uint64_t hi, cc_mem_rec *out);
/* What a lookup saw of a record it found (CC_LOC_IN), so that a thread may trust it later
 * without the lock while nothing changed: the generation of the process's registry, which
 * every removal or change of a record renews (0: not to be trusted), and for a pinned-pool
 * block its cc_hpool_block and state (the pool hands blocks out and takes them back without the
 * registry's lock, changing the state each time). */
typedef struct cc_reg_seen {
  uint64_t gen;
  struct cc_hpool_block *block;
  uint64_t block_state;
} cc_reg_seen;
/* The generation of cc_mem_registry (starts at 1). */
extern _Atomic uint64_t cc_mem_reg_gen;
/* Two ranges of the same length under one lock (the two sides of a copy); `sa`, `sb` (may be
 * NULL) get what was seen of records found in cc_mem_registry. */
void cc_reg_locate2(cc_registry *r, uint64_t a, uint64_t b, uint64_t bytes, cc_mem_rec *ra, int *la,
                    cc_mem_rec *rb, int *lb, cc_reg_seen *sa, cc_reg_seen *sb);
/* Removes the record starting at `base` when `accept` (may be NULL) says yes, it has no
 * users and (unless `take_owned`) no DLPack owner; *out gets the record whenever one contains
 * `base` (for messages). Removed records go to the freed ring. */
typedef int (*cc_reg_accept)(const cc_mem_rec *rec, void *ctx);
cc_reg_result cc_reg_take(cc_registry *r, uint64_t base, cc_reg_accept accept, void *ctx,
                          int take_owned, cc_mem_rec *out);
/* Adds `delta` to the texture (`which` 0) or export (`which` 1) count of the record containing
 * `addr`. A decrement below 0 is ignored. */
cc_reg_result cc_reg_use(cc_registry *r, uint64_t addr, int which, int delta, cc_mem_rec *out);
/* Marks the record containing `addr` as handed to a DLPack consumer (CC_REC_DLPACK_OWNED),
 * unless textures or exports use it or it is handed over already (CC_REG_BUSY). */
cc_reg_result cc_reg_claim(cc_registry *r, uint64_t addr, cc_mem_rec *out);
/* Removes the record starting at `base` whatever its state (a pinned-pool block given back to
 * the driver); it goes to the freed ring. 0 when there is none. */
int cc_reg_remove(cc_registry *r, uint64_t base);
/* The most recently freed record containing `addr`; 0 when none is remembered. */
int cc_reg_was_freed(cc_registry *r, uint64_t addr, cc_mem_rec *out);
/* The live allocations a device pool or a memory resource (`owner`) handed out or imported, and
 * their bytes: a walk of the tree (for destroy and statistics; the hot paths keep no counts). */
void cc_reg_pool_live(cc_registry *r, const void *owner, uint64_t *count, uint64_t *bytes);

/* ---- this thread's front table of the registry (registry_front.c) ---------------------------- */

/* Records a plain record (no users, no flags) in this thread's table instead of the tree: 1
 * when done, 0 when the caller must use cc_reg_insert (the table's slot is taken, or no
 * memory). Only for cc_mem_registry. */
int cc_front_insert(const cc_mem_rec *rec);
/* Moves every table's live records into the registry: `sink(r, rec, 1)` records one (0 when
 * out of memory: it stays in its table), `sink(r, rec, 0)` takes it out again. Called by the
 * registry under its lock, before anything else it does. */
typedef int (*cc_front_sink)(void *r, const cc_mem_rec *rec, int add);
void cc_front_drain(cc_front_sink sink, void *r);
/* A record taken back from a table that contains `addr`; 0 when none is remembered. */
int cc_front_was_freed(uint64_t addr, cc_mem_rec *out);
/* 1 when some thread's table may hold records not drained into the tree yet (a few loads per
 * thread, no lock). */
int cc_front_pending(void);

/* ---- ranges and their checks (bounds.c) ----------------------------------------------------- */

/* The process-wide CUCORE_MEM_CHECK_* flags. */
extern atomic_uint cc_mem_check_flags;

/* A size whose top bit is set is a negative number converted to size_t: fails naming `what`
 * and the signed value. */
cucore_status cc_check_size(uint64_t bytes, const char *fn, const char *what);
/* a + b without wrapping; 0 when it would wrap. */
static inline int cc_add_u64(uint64_t a, uint64_t b, uint64_t *out) {
  return !__builtin_add_overflow(a, b, out);
}
static inline int cc_mul_u64(uint64_t a, uint64_t b, uint64_t *out) {
  return !__builtin_mul_overflow(a, b, out);
}
/* The bytes of a 2D region relative to its base: first byte at y*pitch + x, one past the last
 * at (y+height-1)*pitch + x + width. 0 on overflow. height or width 0: first == end. */
int cc_footprint_2d(uint64_t x, uint64_t y, uint64_t pitch, uint64_t width, uint64_t height,
                    uint64_t *first, uint64_t *end);
/* The same for 3D, slices `slice_rows` rows of `pitch` bytes apart. */
int cc_footprint_3d(uint64_t x, uint64_t y, uint64_t z, uint64_t pitch, uint64_t slice_rows,
                    uint64_t width, uint64_t height, uint64_t depth, uint64_t *first,
                    uint64_t *end);
/* "a 4096-byte device allocation (cucore_mem_alloc) at 0x... on device 0" into buf. */
const char *cc_rec_describe(const cc_mem_rec *rec, char *buf, size_t n);
/* Checks [addr, addr + bytes) against `rec`, which contains addr: CUCORE_OUT_OF_BOUNDS naming
 * both sizes and the offset when it runs past the end. */
cucore_status cc_range_vs_rec(const cc_mem_rec *rec, uint64_t addr, uint64_t bytes, const char *fn,
                              const char *role);
/* Checks a range against what cucore knows: wrapping, the record containing `addr`, a range
 * that starts in unknown memory but runs into a record, and (with CUCORE_MEM_CHECK_FOREIGN)
 * the driver's range for unknown addresses. bytes 0 checks nothing. `role` names the side
 * ("destination", "source"); a "destination" is written, so a record imported read-only
 * (CC_REC_READ_ONLY) refuses it. The same holds for cc_mem_check_copy and cc_mem_check_region. */
cucore_status cc_mem_check_range(uint64_t addr, uint64_t bytes, const char *fn, const char *role);
/* Both sides of a copy under one lookup. */
cucore_status cc_mem_check_copy(uint64_t dst, uint64_t src, uint64_t bytes, const char *fn);
/* The same; when both sides passed inside records cucore keeps, span[0..1] and span[2..3] are
 * the destination's and the source's record as [base, end), else all 0: a batch trusts a later
 * copy inside both within the same call (copy_batch.c), as this thread's seen records are
 * trusted between calls. */
cucore_status cc_mem_check_copy_spans(uint64_t dst, uint64_t src, uint64_t bytes, const char *fn,
                                      uint64_t span[4]);

/* ---- shared by the files that allocate ------------------------------------------------------ */

/* A non-NULL device, and a stream (may be NULL) of that device; no driver call. */
cucore_status cc_mem_pair_check(const cucore_device *dev, const cucore_stream *s, const char *fn);
/* The size of an allocation: above 0 ("size is 0"), and within cc_check_size's limit. */
cucore_status cc_mem_check_alloc_size(size_t bytes, const char *fn);
/* cc_mem_pair_check, then makes the device current. */
cucore_status cc_mem_enter(cucore_device *dev, cucore_stream *s, const char *fn);
/* Synchronous allocations and frees (`legacy` 0), and copies and fills without a stream
 * (`legacy` 1: they run on the legacy default stream), are refused while a capture forbids
 * them (runtime/capture_state.c), before the driver would invalidate the capture. Nothing
 * to do with a stream, or when no capture is active (one atomic load). */
static inline cucore_status cc_mem_capture_check(cucore_device *dev, const cucore_stream *s,
                                                 int legacy, const char *fn) {
  /* (A NULL `dev` passes here: the caller's own check names it.) */
  if (s || !dev || CC_LIKELY(!cc_captures_active())) return CUCORE_OK;
  return cc_capture_check_unsafe(dev, legacy, 0, fn);
}
/* The first checks of a copy or fill: cc_mem_pair_check, then cc_mem_capture_check for work
 * on `s` (without one, on the legacy stream). */
cucore_status cc_mem_work_check(cucore_device *dev, cucore_stream *s, const char *fn);
/* Checks a region given by its start address and its footprint [first, end) relative to it
 * (2D/3D copies and fills, textures): against the record containing `addr` when there is
 * one, else as the range [addr + first, addr + end). `shape` describes the region for
 * messages ("12 rows of 100 bytes, pitch 128"). */
cucore_status cc_mem_check_region(uint64_t addr, uint64_t first, uint64_t end, const char *fn,
                                  const char *role, const char *shape);

/* A 3D copy (cucore_copy_3d: arrays or addresses with pitches) checked as cucore_memcpy_3d
 * checks it -- each side's footprint against its allocation or array, an array of `dev` -- and
 * made the driver's descriptor (unified addressing for addresses); a copy of nothing refused
 * (copy.c: graph copy nodes). */
cucore_status cc_copy3d_to_driver(cucore_device *dev, const cucore_copy_3d *c, CUDA_MEMCPY3D *m,
                                  const char *fn);
/* The checks of cucore_memcpy_3d (copy.c): device and stream, then each side's footprint
 * against its allocation or array; *skip = 1 for an empty copy. */
cucore_status cc_mem_check_copy_3d(cucore_device *dev, cucore_stream *s, const cucore_copy_3d *c,
                                   const char *fn, int *skip);
/* The driver's descriptor of a checked 3D copy (unified addresses or arrays). */
void cc_mem_copy_3d_desc(const cucore_copy_3d *c, CUDA_MEMCPY3D *m);

/* ---- batched and attributed copies (copy_batch.c), for copy_batch_3d.c ---------------------- */

/* Restates the kept message of a refused copy with its index: "fn (copy i of n): ...". */
cucore_status cc_cbatch_name_copy(cucore_status st, const char *fn, size_t i, size_t count);
/* One set of attributes into the driver's form; `k` names it in messages. */
cucore_status cc_cbatch_convert(const cucore_copy_attrs *a, size_t k, CUmemcpyAttributes *out,
                                const char *fn);
/* The attribute sets of a batch of `count` copies checked (the driver's index rules) and
 * converted into `conv` (attr_count of them; `attrs` NULL and attr_count 0: one set, stream
 * order). */
cucore_status cc_cbatch_attrs(const cucore_copy_attrs *attrs, const size_t *attr_index,
                              size_t attr_count, size_t count, CUmemcpyAttributes *conv,
                              const char *fn);
/* A stream of the device that is not the legacy default one. */
cucore_status cc_cbatch_stream_checks(cucore_device *dev, cucore_stream *s, const char *fn);
/* *capturing: `s` is capturing (then the copies are made one by one: the driver cannot capture
 * the batched entry points); a source read during the call (`during_call`) refused there. */
cucore_status cc_cbatch_capture(int during_call, cucore_stream *s, const char *fn, int *capturing);

/* A CUDA array (texture.c). */
struct cucore_array {
  cc_handle hdr; /* first: the magic word of base/handle.h */
  CUarray handle;
  cucore_device *dev;
  cucore_array_desc desc;
  size_t elem_bytes;            /* channels x the format's size */
  atomic_uint users;            /* textures and surfaces over it */
  struct cucore_mipmap *parent; /* a level of this mipmapped array (owned by it), or NULL */
  unsigned level;
};
/* texture.c, shared with mipmap.c: the whole description check of cucore_array_create; the
 * driver's description; a handle over `h` (NULL when out of memory). */
cucore_status cc_array_check_desc(const cucore_array_desc *desc, const char *fn);
void cc_array_to_cu_desc(const cucore_array_desc *desc, CUDA_ARRAY3D_DESCRIPTOR *d);
cucore_array *cc_array_wrap(cucore_device *dev, CUarray h, const cucore_array_desc *desc);
/* A texture description as the driver's, for a resource of `dims` dimensions. */
cucore_status cc_tex_desc(const cucore_texture_desc *in, cucore_array_format format, int dims,
                          CUDA_TEXTURE_DESC *out, const char *fn);
/* A texture over `res`; `held` (may be NULL) counts it as a user until it is destroyed. */
cucore_status cc_texture_make(cucore_device *dev, const CUDA_RESOURCE_DESC *res,
                              const CUDA_TEXTURE_DESC *td, atomic_uint *held, cucore_texture **out,
                              const char *fn);
/* A device allocation failure: CUCORE_DEVICE_OUT_OF_MEMORY (or the driver's code) with the
 * bytes asked for and the device's free and total memory. `extra` (may be NULL) is appended. */
cucore_status cc_mem_fail_alloc(CUresult r, const char *call, const char *fn, int ordinal,
                                size_t bytes, const char *extra);
/* After a synchronous (NULL-stream) copy or fill that the driver may return from early (from
 * pageable memory, device to device, fills of device memory: the driver's "synchronous" calls
 * only stage the data), waits for the legacy stream so the work is complete when cucore
 * returns, also for streams created non-blocking. `call` names the copy for the message. */
cucore_status cc_mem_finish_sync(const char *call);
/* Host memory the kernel says is available (MemAvailable of /proc/meminfo, else sysinfo's free
 * RAM), in bytes; 0 when unknown. For out-of-memory messages. */
size_t cc_host_mem_available(void);
/* Records an allocation just made; on failure (out of host memory) the caller frees it. */
cucore_status cc_mem_record(const cc_mem_rec *rec, const char *fn);
/* cc_mem_record for device memory the driver gave with cuMemAlloc* or an IPC import: on
 * failure the memory is given back (cuMemFree) before the status is returned. */
cucore_status cc_mem_record_or_free(const cc_mem_rec *rec, const char *fn);
/* Explains why cc_reg_take refused `addr` (not found / freed / inside / wrong kind / busy).
 * `expected` says what the function frees ("device memory from cucore_mem_alloc"). */
cucore_status cc_mem_explain_take(cc_reg_result res, const cc_mem_rec *rec, uint64_t addr,
                                  const char *fn, const char *expected);
/* Frees memory of a record with the driver call its kind needs, in its context (for DLPack
 * deleters, which run on any thread). Returns the CUresult. */
CUresult cc_mem_free_rec_raw(const cc_mem_rec *rec);

/* ---- device pools (pool.c), pinned pools (host_pool.c) --------------------------------------- */

struct cucore_mem_pool {
  cc_handle hdr; /* first: the magic word of base/handle.h */
  CUmemoryPool handle;
  cucore_device *dev;
  int owned;    /* cucore created it: cuMemPoolDestroy on destroy */
  int imported; /* imported from another process: cannot allocate */
  int ipc;      /* created with CUCORE_POOL_IPC */

  /* What its allocations are recorded as: CUCORE_MEM_POOL_PINNED or CUCORE_MEM_POOL_MANAGED
   * (pool_kinds.c); 0 is CUCORE_MEM_POOL. */
  cucore_mem_kind kind;
  /* A handle borrowing a pool cucore created (cucore_device_get_mem_pool): that pool's own
   * handle, which its allocations are counted for; else NULL. */
  struct cucore_mem_pool *origin;
};

/* A new handle over CUmemoryPool `h`. */
cucore_status cc_pool_new_handle(cucore_device *dev, CUmemoryPool h, int owned, int imported,
                                 int ipc, cucore_mem_pool **out);
/* The kind a pool's allocations are recorded as. */
static inline cucore_mem_kind cc_pool_rec_kind(const cucore_mem_pool *p) {
  return p->kind ? p->kind : CUCORE_MEM_POOL;
}
/* The cucore pool a pool's allocations are counted for (its live count, the destroy refusal):
 * the pool itself when cucore created it, the creating pool's handle for a handle borrowing it,
 * else NULL. */
static inline void *cc_pool_rec_owner(const cucore_mem_pool *p) {
  return p->owned ? (void *)p : (void *)p->origin;
}
/* 1 for the kinds a stream-ordered pool hands out (freed with cuMemFreeAsync). */
static inline int cc_mem_kind_is_pooled(cucore_mem_kind k) {
  return k == CUCORE_MEM_POOL || k == CUCORE_MEM_POOL_PINNED || k == CUCORE_MEM_POOL_MANAGED;
}

/* ---- pool kinds (pool_kinds.c): pinned host and managed pools ------------------------------- */

/* Checks the flags and the kind's settings of `p` (refusing unknown flags, settings that do not
 * go together, a driver too old for the kind) and fills the driver's properties `cp`
 * (allocation type, handle types, location) for a pool on `dev`. */
cucore_status cc_pool_kind_props(const cucore_device *dev, const cucore_mem_pool_props *p,
                                 CUmemPoolProps *cp, const char *fn);
/* After cuMemPoolCreate: a pinned pool's device is given read-write access (the driver gives
 * only the host access by default), and the handle's kind is set. */
cucore_status cc_pool_kind_finish(cucore_mem_pool *pool, const cucore_mem_pool_props *p);
/* ", pinned host memory at CUCORE_POOL_LOC_HOST_NUMA 1" (the kind and location of `p`, for
 * messages; "" for a device pool) into buf. */
const char *cc_pool_kind_text(const cucore_mem_pool_props *p, char *buf, size_t n);

/* ---- the current pool of each device, as cucore set it (pool_current.c) --------------------- */

/* Nonzero once cucore_device_set_mem_pool has been called in this process: until then,
 * cucore_mem_alloc_async records its allocations as "the device's current pool" without asking
 * anything (one relaxed load on the hot path). */
extern atomic_int cc_pool_current_used;
/* Remembers `pool` (NULL: none) as the handle cucore made current on CUdevice `cudev`.
 * CUCORE_HOST_OUT_OF_MEMORY (recorded) when the table cannot grow. */
cucore_status cc_pool_current_remember(CUdevice cudev, cucore_mem_pool *pool);
/* The handle cucore last made current on `cudev` (NULL: none), if the driver's current pool of
 * the device is still its CUmemoryPool; *cupool gets the driver's current pool (NULL when the
 * driver cannot say). */
cucore_mem_pool *cc_pool_current_find(CUdevice cudev, CUmemoryPool *cupool);
/* Forgets `pool` wherever it is remembered (its handle is being destroyed). */
void cc_pool_current_forget(const cucore_mem_pool *pool);
/* A pinned-pool block goes back to its pool (for DLPack deleters). */
void cc_hpool_give_back(const cc_mem_rec *rec);

/* ---- the pinned pool's core (host_pool_core.c): pure, over any allocator --------------------- */

#define CC_HPOOL_MIN_SHIFT 12 /* 4 KiB */
#define CC_HPOOL_MAX_SHIFT 40 /* 1 TiB */
#define CC_HPOOL_CLASSES (1 + 4 * (CC_HPOOL_MAX_SHIFT - CC_HPOOL_MIN_SHIFT))

/* A pinned block and what is known of it. Its memory is recycled for other blocks but never
 * freed, so a stale pointer to one may always be read: the state's generation, which changes
 * at every free, tells a stale view from a current one. */
typedef struct cc_hpool_block cc_hpool_block;
struct cc_hpool_block {
  _Atomic uint64_t state;     /* generation * CC_HPOOL_GEN | CC_HPOOL_IN_USE | CC_HPOOL_BUSY */
  _Atomic uint64_t requested; /* the bytes its holder asked for */
  /* The thread that handed it out (its owner record), which may free it with plain stores
   * (asym_fence.h): any other update of the state goes through cc_hpool_block_update_remote. */
  _Atomic(cc_asym_owner *) holder;
  void *base; /* set by the allocator */
  int cls;
  size_t class_bytes;
  struct cc_hpool *pool;
  cc_hpool_block *next;                /* the pool's free list of its class, or the spare list */
  cc_hpool_block *prev_all, *next_all; /* every block the pool has pinned */
};

enum {
  CC_HPOOL_IN_USE = 1, /* handed out */
  CC_HPOOL_BUSY = 2,   /* textures, exports or a DLPack consumer use it: not freeable */
  CC_HPOOL_GEN = 4
};

/* The state a block gets when it is freed from `seen` (a new generation, not handed out). */
static inline uint64_t cc_hpool_block_freed(uint64_t seen) {
  return (seen & ~(uint64_t)3) + CC_HPOOL_GEN;
}

/* State `seen` -> `want` by a thread that is not (or may not be) the block's holder, while the
 * holder is kept out of its plain-store section (asym_fence.h): 1 when done. `seen` must have
 * been read before the holder is (the holder of that state is the one read after it). */
static inline int cc_hpool_block_update_remote(cc_hpool_block *b, uint64_t seen, uint64_t want) {
  cc_asym_owner *h = atomic_load_explicit(&b->holder, memory_order_acquire);
  cc_asym_remote_begin(h);
  int done = atomic_compare_exchange_strong_explicit(&b->state, &seen, want, memory_order_acq_rel,
                                                     memory_order_relaxed);
  cc_asym_remote_end(h);
  return done;
}

/* Handed out -> free, when the state is still `seen` (handed out, not busy), by any thread; 1
 * when done. (The holder's own free is cc_hpool_free_recent.) */
static inline int cc_hpool_block_unuse(cc_hpool_block *b, uint64_t seen) {
  return cc_hpool_block_update_remote(b, seen, cc_hpool_block_freed(seen));
}

typedef struct cc_hpool_allocator {
  /* Pins `bytes` into b->base (and may record the block): 0, or a non-zero error (a
   * CUresult: CUDA_ERROR_OUT_OF_MEMORY makes the pool give its cache back and retry). */
  int (*alloc)(void *ctx, size_t bytes, cc_hpool_block *b);
  void (*release)(void *ctx, cc_hpool_block *b);
  void *ctx;
} cc_hpool_allocator;

typedef struct cc_hpool {
  pthread_mutex_t lock;
  cc_hpool_allocator ops;
  size_t max_cached, max_total; /* 0: no limit; with either, no thread keeps blocks */
  uint64_t id;                  /* unique in the process: names the pool to thread caches */
  atomic_uint epoch;            /* changed by a trim: thread caches give their blocks back */
  cc_hpool_block *free_head[CC_HPOOL_CLASSES];
  uint32_t free_count[CC_HPOOL_CLASSES];
  uint64_t shared_bytes;     /* bytes on the free lists */
  cc_hpool_block *all;       /* every pinned block */
  cucore_host_pool_stats st; /* plus what thread caches counted (cc_hpool_stats) */
  uint64_t pinned_now;       /* in use + cached, in class bytes */
  struct cc_hpool *next_live;
} cc_hpool;

#define CC_HPOOL_LIMIT (-1)     /* cc_hpool_get: max_total would be passed */
#define CC_HPOOL_NO_MEMORY (-2) /* cc_hpool_get: no host memory for the block's bookkeeping */
#define CC_HPOOL_BAD_SIZE (-3)  /* cc_hpool_get: 0 bytes, or above the largest class */

/* (The size classes, the thread caches and the inline allocation and free from them:
 * host_pool_core.h.) */
void cc_hpool_init(cc_hpool *p, const cc_hpool_allocator *ops, size_t max_cached, size_t max_total);
/* A block for `bytes`, handed out (*base, when not NULL, gets its address): from this
 * thread's cache, the pool's free lists, or the allocator (the lock is not held while it runs;
 * on its failure the cache is given back and it is tried once more). 0, CC_HPOOL_BAD_SIZE,
 * CC_HPOOL_LIMIT, CC_HPOOL_NO_MEMORY or the allocator's error. */
int cc_hpool_get(cc_hpool *p, size_t bytes, cc_hpool_block **out, void **base);
/* Takes back a block the caller has moved from handed out to free (cc_hpool_block_unuse). */
void cc_hpool_put(cc_hpool *p, cc_hpool_block *b);
/* Gives cached blocks back until at most `keep_bytes` stay: the free lists and this thread's
 * cache at once, other threads' caches (a few blocks each) at their next call on the pool. */
void cc_hpool_trim(cc_hpool *p, size_t keep_bytes);
void cc_hpool_stats(cc_hpool *p, cucore_host_pool_stats *out);
void cc_hpool_reset_high(cc_hpool *p);
/* Gives every pinned block back and destroys the lock (no block may be in use). */
void cc_hpool_fini(cc_hpool *p);

/* 1 when cucore enabled access from context `from` to memory of context `to` (peer.c). */
int cc_peer_enabled(CUcontext from, CUcontext to);

/* ---- strict pointer checks (pointer.c), for exec/args.c -------------------------------------- */

static inline int cc_mem_strict_global(void) {
  return (int)(atomic_load_explicit(&cc_mem_check_flags, memory_order_relaxed) &
               CUCORE_MEM_CHECK_KERNEL_POINTERS);
}
/* Checks that kernels on `dev` (NULL: the device of the current context) may access `bytes`
 * (0: just the address) at `addr`. Messages start with "argument INDEX of `WHO`" when index is
 * >= 0, else with "WHO". NULL addresses pass. */
cucore_status cc_mem_check_kernel_pointer(cucore_device *dev, uint64_t addr, uint64_t bytes,
                                          const char *who, int index);

/* ---- managed memory (managed.c), for managed_batch.c and copy_batch.c ----------------------- */

/* A cucore location as the driver's (devices that exist, host NUMA nodes the system has);
 * CUCORE_INVALID_DEVICE for an ordinal out of range (copy_batch.c: location hints). */
cucore_status cc_managed_location(cucore_location in, CUmemLocation *out, const char *fn);

/* A cucore location as the driver's (devices that exist, host NUMA nodes the system has); a
 * device target must have concurrent managed access. */
cucore_status cc_managed_prefetch_target(cucore_location to, CUmemLocation *loc, const char *fn);
/* The range is not empty, lies in one allocation, and when cucore recorded it, a managed one
 * (*known 1, *rec the record). */
cucore_status cc_managed_range(uint64_t ptr, size_t bytes, const char *fn, cc_mem_rec *rec,
                               int *known);

/* ---- tests only ------------------------------------------------------------------------------ */
/* Exported for the CPU tests (tests/test_memory_*.c); the library itself does not call these
 * from another file. */

/* registry.c: a registry of one's own (NULL when out of memory), freed with cc_reg_free. */
cc_registry *cc_reg_create(void);
void cc_reg_free(cc_registry *r);
/* Sets and clears flags of the record starting at `base`. */
cc_reg_result cc_reg_set_flags(cc_registry *r, uint64_t base, uint32_t set, uint32_t clear);
size_t cc_reg_count(cc_registry *r);
/* Checks the tree's invariants (order, no overlap, AVL balance, count); 1 when they hold. */
int cc_reg_verify(cc_registry *r);

/* registry_front.c: takes back a record this thread put in its table, starting at `base`, when
 * `accept` (may be NULL) says yes: CC_REG_OK, else CC_REG_NOT_FOUND (the caller then asks the
 * registry, which explains). The library's free paths use cc_front_find and cc_front_commit. */
cc_reg_result cc_front_take(uint64_t base, cc_reg_accept accept, void *ctx, cc_mem_rec *out);
/* How many tables exist (exited threads' tables are adopted by new threads, never freed). */
size_t cc_front_table_count(void);

/* host_pool_core.c: cc_hpool_block_unuse then cc_hpool_put; 0 when the block was not handed
 * out or is busy. */
int cc_hpool_free_block(cc_hpool *p, cc_hpool_block *b);

/* tensor_map.c: the bytes the tensor spans from its address (for the allocation check); 0 on
 * overflow. */
int cc_tmap_extent(const cucore_tensor_map_desc *d, uint64_t *bytes);

#endif /* CUCORE_MEMORY_H */
