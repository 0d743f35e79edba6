/**
 * @file
 * @brief Memory: allocations, checks, pools, managed memory, copies, VMM, arrays, tensors.
 *
 * Device and pinned host allocations; what cucore knows of an address and the checks made
 * against it; stream-ordered device pools and their IPC; pinned host pools and registration;
 * managed memory (prefetch, advice, host NUMA nodes, discard, batches); copies and fills;
 * virtual memory; CUDA arrays, textures and surfaces, mipmapped arrays; tensor maps (TMA);
 * DLPack.
 *
 * A part of cucore's public header: a program includes `<cucore.h>`, which includes every
 * part in the order of the data path; this part also compiles alone.
 */
#ifndef CUCORE_PART_MEMORY_H
#define CUCORE_PART_MEMORY_H

#include "base.h"
#include "devices.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------------ */
/* Memory                                                                                     */
/* ------------------------------------------------------------------------------------------ */

/**
 * @defgroup memory Memory
 * Device and pinned host memory, copies and fills. Every call takes the device; a stream given
 * must belong to it (else CUCORE_INVALID_ARGUMENT). Without a stream (NULL) a copy or fill is
 * complete when the call returns, also for work later queued on streams created
 * CUCORE_STREAM_NON_BLOCKING: where the driver's synchronous call returns early (copies from
 * pageable memory, device-to-device copies, fills of device memory) cucore waits for the legacy
 * stream before returning (about a microsecond more). Pass a stream for overlap.
 * @{
 */

/** A device address (CUdeviceptr). */
typedef uint64_t cucore_devptr;

/** Allocates `bytes` (> 0) of device memory. CUCORE_DEVICE_OUT_OF_MEMORY names the size and
 * what was free. *out is 0 on failure. Free it with cucore_mem_free() on the same device.
 * @retval CUCORE_DEVICE_OUT_OF_MEMORY the device has not that much free. */
CUCORE_API cucore_status cucore_mem_alloc(cucore_device *dev, size_t bytes, cucore_devptr *out);
/** Frees device memory from cucore_mem_alloc (also cucore_mem_alloc_pitch,
 * cucore_mem_alloc_managed and imported IPC pointers). 0 is a no-op.
 * @retval CUCORE_INVALID_ARGUMENT `ptr` is not the start of a live allocation of `dev` (never
 *         allocated by cucore, freed already, inside an allocation, of another device, or from
 *         a stream-ordered pool: the message says which and names the right free).
 * @retval CUCORE_IN_USE a texture object or DLPack export still uses it. */
CUCORE_API cucore_status cucore_mem_free(cucore_device *dev, cucore_devptr ptr);
/** Allocates `bytes` (> 0) of page-locked (pinned) host memory, usable for async copies (and
 * from every device). *out is NULL on failure; free it with cucore_host_free(). */
CUCORE_API cucore_status cucore_host_alloc(cucore_device *dev, size_t bytes, void **out);
/** Frees pinned host memory from cucore_host_alloc. NULL is a no-op.
 * @retval CUCORE_INVALID_ARGUMENT not live memory of cucore_host_alloc (the message says what it
 *         is).
 * @retval CUCORE_IN_USE a DLPack export still uses it. */
CUCORE_API cucore_status cucore_host_free(cucore_device *dev, void *ptr);

/** Copies `bytes` from host `src` to device `dst`. With a stream (may be NULL for synchronous)
 * the copy is queued on it, and `src` must stay valid until the stream reaches it. A copy of
 * 0 bytes is a no-op; a NULL or 0 address otherwise is CUCORE_INVALID_ARGUMENT.
 * @retval CUCORE_OUT_OF_BOUNDS a range on memory cucore recorded runs past the end of its
 *         allocation (see @ref copies). */
CUCORE_API cucore_status cucore_memcpy_htod(cucore_device *dev, cucore_devptr dst, const void *src,
                                            size_t bytes, cucore_stream *s);
/** Copies `bytes` from device `src` to host `dst`, as cucore_memcpy_htod() (with a stream,
 * `dst` holds the data once the copy is done: synchronise the stream or an event). */
CUCORE_API cucore_status cucore_memcpy_dtoh(cucore_device *dev, void *dst, cucore_devptr src,
                                            size_t bytes, cucore_stream *s);
/** Copies `bytes` from device `src` to device `dst`, as cucore_memcpy_htod(). */
CUCORE_API cucore_status cucore_memcpy_dtod(cucore_device *dev, cucore_devptr dst,
                                            cucore_devptr src, size_t bytes, cucore_stream *s);
/** Sets `count` bytes to `value` (stream may be NULL).
 * @retval CUCORE_OUT_OF_BOUNDS the range runs past the end of its allocation. */
CUCORE_API cucore_status cucore_memset_d8(cucore_device *dev, cucore_devptr dst, uint8_t value,
                                          size_t count, cucore_stream *s);
/** Sets `count` 32-bit words to `value` (dst 4-byte aligned; stream may be NULL).
 * @retval CUCORE_ARG_ALIGNMENT `dst` is not 4-byte aligned. */
CUCORE_API cucore_status cucore_memset_d32(cucore_device *dev, cucore_devptr dst, uint32_t value,
                                           size_t count, cucore_stream *s);

/** @} */

/* ------------------------------------------------------------------------------------------ */
/* Memory facts: what cucore knows of an address, bounds checks, strict pointer checks        */
/* ------------------------------------------------------------------------------------------ */

/**
 * @defgroup memory_facts Memory facts and checks
 * Every allocation cucore makes (device, pitched, pooled, managed, pinned, pinned-pool) and
 * every host range it registers or imports is recorded: its start, size, kind, device and pool.
 * Copies, fills, textures, tensor maps and DLPack exports are checked against that record
 * before the driver sees them: a range that runs past the end of its allocation is
 * CUCORE_OUT_OF_BOUNDS naming both sizes and the offset, never a fault. Addresses cucore did
 * not allocate (the caller's malloc, memory of another library) are passed through unchecked,
 * unless CUCORE_MEM_CHECK_FOREIGN asks the driver about them.
 *
 * The record is a balanced tree under a read-write lock: lookups (every copy) share the lock,
 * allocations and frees take it briefly. All calls here are thread-safe.
 * @{
 */

/** Turns a host pointer into the address type the unified calls take (cucore_memcpy(),
 * cucore_pointer_get_facts(), ...): CUDA uses one address space for host and device. */
#define CUCORE_HOST_ADDR(p) ((cucore_devptr)(uintptr_t)(p))

/** What cucore made an address range with (cucore_pointer_facts::kind). */
typedef enum cucore_mem_kind {
  CUCORE_MEM_UNKNOWN = 0,         /**< not recorded by cucore */
  CUCORE_MEM_DEVICE = 1,          /**< cucore_mem_alloc() */
  CUCORE_MEM_DEVICE_PITCHED = 2,  /**< cucore_mem_alloc_pitch() */
  CUCORE_MEM_POOL = 3,            /**< stream-ordered, from a device pool
                                       (cucore_mem_alloc_async(), cucore_mem_pool_alloc_async()) */
  CUCORE_MEM_MANAGED = 4,         /**< cucore_mem_alloc_managed() */
  CUCORE_MEM_PINNED = 5,          /**< cucore_host_alloc() */
  CUCORE_MEM_PINNED_POOL = 6,     /**< a block of a pinned host pool (cucore_host_pool_alloc()) */
  CUCORE_MEM_REGISTERED = 7,      /**< caller memory page-locked by cucore_host_register() */
  CUCORE_MEM_IPC_IMPORTED = 8,    /**< imported from another process
                                       (cucore_mem_pool_import_pointer()) */
  CUCORE_MEM_DLPACK_IMPORTED = 9, /**< a tensor of another library (cucore_dlpack_import()) */
  CUCORE_MEM_GRAPH = 10,          /**< an allocation node's memory, owned by its graph
                                       (cucore_graph_add_mem_alloc_node()) */
  CUCORE_MEM_VMM = 11,            /**< mapped virtual memory (cucore_vmm_map(), a
                                       cucore_vmm_buffer) */
  CUCORE_MEM_POOL_PINNED = 12,    /**< stream-ordered, from a pinned host pool
                                       (cucore_mem_pool_create() with CUCORE_POOL_PINNED_HOST):
                                       page-locked host memory the host reads directly */
  CUCORE_MEM_POOL_MANAGED = 13,   /**< stream-ordered, from a managed pool
                                       (cucore_mem_pool_create() with CUCORE_POOL_MANAGED) */
  CUCORE_MEM_RESOURCE = 14        /**< from a memory resource (cucore_mem_resource_allocate(),
                                       or a device's installed resource) */
} cucore_mem_kind;

/** "device", "pinned-pool", ... for a kind ("unknown" for a value not in the enum). Never
 * NULL; static storage. */
CUCORE_API const char *cucore_mem_kind_name(cucore_mem_kind kind);

/** Where memory physically is, as the driver reports it (cucore_pointer_facts::type). */
typedef enum cucore_mem_type {
  CUCORE_MEMTYPE_UNKNOWN = 0, /**< the driver does not know the address (pageable host memory,
                                   freed memory, or no address at all) */
  CUCORE_MEMTYPE_DEVICE = 1,  /**< device memory */
  CUCORE_MEMTYPE_HOST = 2,    /**< page-locked host memory (pinned or registered) */
  CUCORE_MEMTYPE_MANAGED = 3  /**< managed (unified) memory */
} cucore_mem_type;

/** Everything known of one address: cucore's record combined with the driver's answers
 * (cuPointerGetAttributes, cuMemGetAddressRange). Filled by cucore_pointer_get_facts(). */
typedef struct cucore_pointer_facts {
  cucore_mem_type type;         /**< the driver's view */
  cucore_mem_kind kind;         /**< cucore's view: CUCORE_MEM_UNKNOWN when cucore did not record
                                 the address */
  int device;                   /**< ordinal of the device the memory belongs to or was registered
                                 with; -1 when none (pinned pools serve every device) */
  cucore_devptr base;           /**< start of the allocation (cucore's record, else the driver's
                                 range; 0 when neither knows) */
  uint64_t size;                /**< bytes of the allocation as asked for (cucore's record), else
                                 the driver's range; 0 when unknown */
  uint64_t offset;              /**< the address minus `base` */
  cucore_devptr device_pointer; /**< the address kernels use (differs from the host address
                                     only for registered host memory); 0 when none */
  void *host_pointer;           /**< the address the host uses; NULL when the host cannot */
  void *cupool;                 /**< the CUmemoryPool it came from; NULL when not pooled */
  int freed;                    /**< 1 when the address is in a range cucore freed recently
                                 (kind is then the kind it had) */
  unsigned users;               /**< texture and surface objects and DLPack exports using it */
} cucore_pointer_facts;

/** Fills *out for any address (host addresses through CUCORE_HOST_ADDR()). Never fails for an
 * address nobody knows: type and kind are then UNKNOWN. Asks the driver only when a device is
 * present (without one, the driver's fields stay zero). */
CUCORE_API cucore_status cucore_pointer_get_facts(cucore_devptr addr, cucore_pointer_facts *out);

/** Process-wide checking flags (cucore_mem_set_checks()), combined with `|`. */
enum {
  /** Unknown addresses in copies and fills are asked of the driver (cuPointerGetAttributes):
   * when the driver knows their allocation, the range is bounds-checked against it. Costs one
   * driver query per unknown address (about 0.3-1 us); off by default. */
  CUCORE_MEM_CHECK_FOREIGN = 1,
  /** Every kernel argument list checks the pointers bound to it (cucore_args_set_ptr(),
   * cucore_args_push_ptr(), host pointers, and 64-bit integers bound to pointer parameters):
   * the address must be NULL or accessible from the device current on the binding thread
   * (device memory of that device or of a peer with access enabled, managed memory, mapped
   * host memory), and not freed. Pageable host memory (malloc, the stack) is refused, except on
   * devices that read it directly (CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS: HMM or ATS
   * systems), where an address the driver does not know passes. An address past the end of a
   * graph allocation, in the 64 KiB page it ends in (addresses the driver keeps for graph
   * memory), is refused as CUCORE_OUT_OF_BOUNDS. Off by default;
   * cucore_args_check_pointers() turns it on for one list and names its device.
   * Cost, per pointer bound: a pointer cucore recorded on the same device (or managed or pinned
   * memory) costs one registry lookup under a shared lock (tens of ns, against about 10 ns for
   * an unchecked bind); any other address asks the driver (cuPointerGetAttributes and three
   * cuPointerGetAttribute calls, about 1-2 us). Checking happens when the argument is bound,
   * not at each launch, so a list bound once and launched many times pays once. */
  CUCORE_MEM_CHECK_KERNEL_POINTERS = 2
};

/** Sets the process-wide checking flags (CUCORE_MEM_CHECK_FOREIGN,
 * CUCORE_MEM_CHECK_KERNEL_POINTERS); 0 turns both off (the default). Takes effect for calls
 * that start afterwards, on every thread. */
CUCORE_API cucore_status cucore_mem_set_checks(unsigned flags);
/** The process-wide checking flags. */
CUCORE_API cucore_status cucore_mem_get_checks(unsigned *flags);

/** Checks that kernels on `dev` may read and write `bytes` at `addr`: the checks
 * CUCORE_MEM_CHECK_KERNEL_POINTERS makes, on demand. `bytes` 0 checks the address only.
 * @retval CUCORE_INVALID_ARGUMENT the address is freed, pageable host memory, or memory of
 *         another device without peer access; the message says which.
 * @retval CUCORE_OUT_OF_BOUNDS the range runs past the end of its allocation, or starts past
 *         the end of a graph allocation in the 64 KiB page it ends in. */
CUCORE_API cucore_status cucore_pointer_check_access(cucore_device *dev, cucore_devptr addr,
                                                     size_t bytes);

/** @cond CUCORE_INTERNAL */
struct cucore_args;
/** @endcond */

/** Turns strict pointer checks on for one kernel argument list: from now on every pointer
 * bound to `args` (as cucore_mem_set_checks()'s CUCORE_MEM_CHECK_KERNEL_POINTERS describes) is
 * checked to be accessible from `dev`, the device the list will be launched on. A failing
 * pointer is the setter's error (kept in the list like any other). NULL `dev` turns the list's
 * checks off again (the process-wide flag still applies). */
CUCORE_API cucore_status cucore_args_check_pointers(struct cucore_args *args, cucore_device *dev);

/** @} */

/* ------------------------------------------------------------------------------------------ */
/* Device memory pools: stream-ordered allocation (cuMemAllocAsync and its pools)             */
/* ------------------------------------------------------------------------------------------ */

/**
 * @defgroup mempool Device memory pools
 * Stream-ordered allocation: an allocation is made and freed in the order of a stream's work,
 * and the pool keeps freed memory for reuse, so an allocation per step costs about as much as
 * a kernel launch instead of a device synchronisation. The device's default pool serves
 * cucore_mem_alloc_async(); cucore_mem_pool_create() makes pools with their own release
 * threshold, reuse policy, maximum size, peer access and IPC sharing.
 *
 * Every allocation is recorded: a free of an address that is not a live allocation, a free on
 * another pool than the one it came from, and destroying a pool that still has allocations are
 * refused with a message. Thread-safe; a pool handle must not be destroyed while other threads
 * use it.
 * @{
 */

/** A device memory pool (CUmemoryPool): create with cucore_mem_pool_create(), take the
 * device's default with cucore_mem_pool_default(), import with cucore_mem_pool_import_fd();
 * destroy with cucore_mem_pool_destroy(). */
typedef struct cucore_mem_pool cucore_mem_pool;

/** Pool flags (cucore_mem_pool_props::flags). */
enum {
  /** The pool can be shared with other processes through a POSIX file descriptor
   * (CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR): cucore_mem_pool_export_fd(). */
  CUCORE_POOL_IPC = 1,
  /** The pool hands out page-locked host memory (cuMemPoolCreate with location
   * CU_MEM_LOCATION_TYPE_HOST or HOST_NUMA; a driver for CUDA 12.6 or newer): the host reads and
   * writes it directly, the pool's device (read-write access is granted at creation) and devices
   * given access with cucore_mem_pool_set_access() use it in kernels. Its allocations are
   * CUCORE_MEM_POOL_PINNED. cucore_mem_pool_props::location says where (default: the host). */
  CUCORE_POOL_PINNED_HOST = 2,
  /** The pool hands out managed memory (CU_MEM_ALLOCATION_TYPE_MANAGED; a driver for CUDA 13.0
   * or newer, not on Windows): host and devices use it, pages migrate on demand. Its
   * allocations are CUCORE_MEM_POOL_MANAGED. cucore_mem_pool_props::location is the preferred
   * location (default: none). Cannot be combined with CUCORE_POOL_IPC or
   * CUCORE_POOL_PINNED_HOST. */
  CUCORE_POOL_MANAGED = 4
};

/** Where a pinned or managed pool's memory lives (cucore_mem_pool_props::location). Read only
 * with CUCORE_POOL_PINNED_HOST or CUCORE_POOL_MANAGED (a device pool's memory is its device's).
 */
typedef enum cucore_pool_location {
  /** Pinned: the host (as CUCORE_POOL_LOC_HOST). Managed: no preferred location
   * (CU_MEM_LOCATION_TYPE_NONE). */
  CUCORE_POOL_LOC_DEFAULT = 0,
  /** Managed only: prefer the pool's device (CU_MEM_LOCATION_TYPE_DEVICE). */
  CUCORE_POOL_LOC_DEVICE = 1,
  /** The host, any NUMA node (CU_MEM_LOCATION_TYPE_HOST). A pinned pool here cannot be shared
   * between processes (the driver refuses it): use CUCORE_POOL_LOC_HOST_NUMA with
   * CUCORE_POOL_IPC. */
  CUCORE_POOL_LOC_HOST = 2,
  /** Host NUMA node cucore_mem_pool_props::location_id (CU_MEM_LOCATION_TYPE_HOST_NUMA). */
  CUCORE_POOL_LOC_HOST_NUMA = 3
} cucore_pool_location;

/** Reuse policies a pool may be denied (cucore_mem_pool_props::reuse_off). All are on by
 * default. */
enum {
  /** Do not reuse memory freed on another stream even when an event orders the two
   * (CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES). */
  CUCORE_POOL_NO_REUSE_FOLLOW_EVENTS = 1,
  /** Do not reuse completed frees that nothing orders
   * (CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC). */
  CUCORE_POOL_NO_REUSE_OPPORTUNISTIC = 2,
  /** Do not insert stream dependencies to reuse memory
   * (CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES). */
  CUCORE_POOL_NO_REUSE_INTERNAL_DEPENDENCIES = 4
};

/** How a new pool behaves. Zero-initialise and set what you need: all zeros is the driver's
 * default pool behaviour. */
typedef struct cucore_mem_pool_props {
  unsigned flags; /**< CUCORE_POOL_IPC, or 0 */
  /** Bytes the pool keeps reserved when synchronising instead of giving them back to the
   * device (CU_MEMPOOL_ATTR_RELEASE_THRESHOLD). 0 gives everything unused back at each
   * synchronisation; UINT64_MAX keeps everything. Keep it high for alloc-per-step loops. */
  uint64_t release_threshold;
  /** Most bytes the pool may reserve; 0 is the driver's default (no limit). A non-zero value
   * needs a driver for CUDA 12.2 or newer (CUCORE_DRIVER_TOO_OLD otherwise). */
  size_t max_size;
  unsigned reuse_off; /**< CUCORE_POOL_NO_REUSE_* bits, or 0 */
  /** Where the memory of a pinned or managed pool lives; read only when `flags` has
   * CUCORE_POOL_PINNED_HOST or CUCORE_POOL_MANAGED (so a program built before this field
   * existed, whose struct ends above, is read as before). 0 is the kind's default. */
  cucore_pool_location location;
  /** The host NUMA node with CUCORE_POOL_LOC_HOST_NUMA (>= 0); 0 otherwise. */
  int location_id;
} cucore_mem_pool_props;

/** CONSTRUCTOR: a new pool on `dev` (cuMemPoolCreate): of device memory, or with
 * CUCORE_POOL_PINNED_HOST of pinned host memory, or with CUCORE_POOL_MANAGED of managed memory.
 * `props` may be NULL for the defaults (a device pool). Destroy `*out` with
 * cucore_mem_pool_destroy() before closing `dev`.
 * @retval CUCORE_INVALID_ARGUMENT unknown flags or reuse bits, or settings that do not go
 *         together (both kinds, a device location for a pinned pool, IPC for a host or managed
 *         pool, a location_id without CUCORE_POOL_LOC_HOST_NUMA); the message names them.
 * @retval CUCORE_NOT_SUPPORTED the device has no memory pools, or no POSIX descriptor sharing
 *         for CUCORE_POOL_IPC.
 * @retval CUCORE_DRIVER_TOO_OLD `max_size` is set and the driver predates CUDA 12.2; a pinned
 *         pool and a driver before CUDA 12.6; a managed pool and a driver before CUDA 13.0. */
CUCORE_API cucore_status cucore_mem_pool_create(cucore_device *dev,
                                                const cucore_mem_pool_props *props,
                                                cucore_mem_pool **out);
/** CONSTRUCTOR: a handle on the device's default pool (cuDeviceGetDefaultMemPool), the pool
 * cucore_mem_alloc_async() uses unless another was made current (cucore_device_set_mem_pool(),
 * cuDeviceSetMemPool).
 * Destroying the handle leaves the pool alone. Each call gives a new handle. */
CUCORE_API cucore_status cucore_mem_pool_default(cucore_device *dev, cucore_mem_pool **out);
/** DESTRUCTOR: destroys a pool cucore created (cuMemPoolDestroy) or frees the handle of a
 * default or imported pool. NULL is a no-op. Refused while allocations made from it (or
 * pointers imported through it) are live: free them first.
 * @retval CUCORE_IN_USE allocations are live; the message counts them. The pool is kept. */
CUCORE_API cucore_status cucore_mem_pool_destroy(cucore_mem_pool *pool);
/** The device a pool belongs to (borrowed). */
CUCORE_API cucore_status cucore_mem_pool_get_device(const cucore_mem_pool *pool,
                                                    cucore_device **dev);
/** The native CUmemoryPool, still owned by `pool`. */
CUCORE_API cucore_status cucore_mem_pool_get_native(const cucore_mem_pool *pool, void **cupool);
/** The kind of memory `pool` hands out: CUCORE_MEM_POOL (device memory),
 * CUCORE_MEM_POOL_PINNED or CUCORE_MEM_POOL_MANAGED; CUCORE_MEM_IPC_IMPORTED for an imported
 * pool. */
CUCORE_API cucore_status cucore_mem_pool_get_kind(const cucore_mem_pool *pool,
                                                  cucore_mem_kind *kind);

/** Makes `pool` the current pool of `dev` (cuDeviceSetMemPool): the pool
 * cucore_mem_alloc_async() allocates from on the device's streams, in this process, until
 * another is made current. cucore then records those allocations as the pool's (its live count
 * and cucore_mem_pool_free_async() on it), and cucore_mem_pool_destroy() of a pool cucore made
 * is refused while it is current. NULL makes the device's default pool current again. Set it
 * while no other thread allocates on the device.
 * @retval CUCORE_INVALID_ARGUMENT `pool` belongs to another device, is imported, or is a pinned
 *         or managed pool (cuMemAllocAsync hands out device memory only: allocate from it with
 *         cucore_mem_pool_alloc_async()). */
CUCORE_API cucore_status cucore_device_set_mem_pool(cucore_device *dev, cucore_mem_pool *pool);
/** CONSTRUCTOR: a new handle on the current pool of `dev` (cuDeviceGetMemPool): the default
 * pool, or the last one made current. The handle never owns the driver's pool: destroying it
 * leaves the pool alone (a pool cucore created stays owned by its own handle, and allocations
 * through this handle count as that pool's). Destroy `*out` with cucore_mem_pool_destroy(). */
CUCORE_API cucore_status cucore_device_get_mem_pool(cucore_device *dev, cucore_mem_pool **out);

/** Allocates `bytes` (> 0) in stream order on `s` from the current pool of the stream's device
 * (cuMemAllocAsync): work queued on `s` after this call may use it; other streams must wait on
 * `s` first. Free it with cucore_mem_free_async().
 * @retval CUCORE_DEVICE_OUT_OF_MEMORY the message gives the bytes asked for, the device's free
 *         and total memory, and the pool's reserved and used bytes. */
CUCORE_API cucore_status cucore_mem_alloc_async(cucore_stream *s, size_t bytes, cucore_devptr *out);
/** Frees in stream order on `s` (cuMemFreeAsync) an allocation of any pool (also a pointer
 * imported from another process). The memory may be reused once `s` reaches the free. 0 is a
 * no-op.
 * @retval CUCORE_INVALID_ARGUMENT not a live stream-ordered allocation (never allocated, freed
 *         already, or allocated otherwise: the message names the right free).
 * @retval CUCORE_IN_USE a texture object or a DLPack export still uses it. */
CUCORE_API cucore_status cucore_mem_free_async(cucore_stream *s, cucore_devptr ptr);
/** Allocates `bytes` (> 0) from `pool` in stream order on `s` (cuMemAllocFromPoolAsync). The
 * stream may be of another device than the pool's when that device has access to the pool.
 * @retval CUCORE_INVALID_ARGUMENT the pool is imported (imported pools cannot allocate).
 * @retval CUCORE_DEVICE_OUT_OF_MEMORY as cucore_mem_alloc_async(), also when the pool's
 *         max_size is reached. */
CUCORE_API cucore_status cucore_mem_pool_alloc_async(cucore_mem_pool *pool, cucore_stream *s,
                                                     size_t bytes, cucore_devptr *out);
/** Frees in stream order an allocation that came from `pool`, as cucore_mem_free_async().
 * @retval CUCORE_INVALID_ARGUMENT it came from another pool (the message names both), or is not
 *         a live allocation. */
CUCORE_API cucore_status cucore_mem_pool_free_async(cucore_mem_pool *pool, cucore_stream *s,
                                                    cucore_devptr ptr);

/** Pool attributes; the values equal CUmemPool_attribute's. */
typedef enum cucore_pool_attr {
  CUCORE_POOL_REUSE_FOLLOW_EVENT_DEPENDENCIES = 1,   /**< 0 or 1 (settable) */
  CUCORE_POOL_REUSE_ALLOW_OPPORTUNISTIC = 2,         /**< 0 or 1 (settable) */
  CUCORE_POOL_REUSE_ALLOW_INTERNAL_DEPENDENCIES = 3, /**< 0 or 1 (settable) */
  CUCORE_POOL_RELEASE_THRESHOLD = 4, /**< bytes kept reserved when idle (settable) */
  CUCORE_POOL_RESERVED_CURRENT = 5,  /**< bytes of device memory the pool holds now */
  CUCORE_POOL_RESERVED_HIGH = 6,     /**< most bytes held since the last reset (settable to 0) */
  CUCORE_POOL_USED_CURRENT = 7,      /**< bytes handed out and not yet freed */
  CUCORE_POOL_USED_HIGH = 8          /**< most bytes handed out since the last reset
                                           (settable to 0) */
} cucore_pool_attr;

/** Reads one attribute (cuMemPoolGetAttribute); the 0/1 attributes read as 0 or 1. */
CUCORE_API cucore_status cucore_mem_pool_get_attr(cucore_mem_pool *pool, cucore_pool_attr attr,
                                                  uint64_t *value);
/** Sets one attribute (cuMemPoolSetAttribute). The high-water marks take only 0 (a reset);
 * the current counters are read-only.
 * @retval CUCORE_INVALID_ARGUMENT a read-only attribute, or a value it cannot take. */
CUCORE_API cucore_status cucore_mem_pool_set_attr(cucore_mem_pool *pool, cucore_pool_attr attr,
                                                  uint64_t value);

/** A pool's state at once (cucore_mem_pool_get_stats()). */
typedef struct cucore_mem_pool_stats {
  uint64_t reserved_current;  /**< bytes of device memory the pool holds */
  uint64_t reserved_high;     /**< most held since the last reset */
  uint64_t used_current;      /**< bytes handed out and not yet freed */
  uint64_t used_high;         /**< most handed out since the last reset */
  uint64_t release_threshold; /**< bytes kept reserved when idle */
  uint64_t live_allocations;  /**< allocations cucore made from the pool and has not freed
                                   (0 for a default pool: its allocations are not counted) */
  uint64_t live_bytes;        /**< their bytes, as asked for */
} cucore_mem_pool_stats;

/** Reads the pool's counters and threshold (several cuMemPoolGetAttribute calls). */
CUCORE_API cucore_status cucore_mem_pool_get_stats(cucore_mem_pool *pool,
                                                   cucore_mem_pool_stats *out);
/** Resets both high-water marks (reserved and used) to the current values. */
CUCORE_API cucore_status cucore_mem_pool_reset_high_water(cucore_mem_pool *pool);
/** Gives unused memory back until the pool holds at most `keep_bytes` (cuMemPoolTrimTo).
 * Memory of live allocations, and of frees not yet reached by their stream, stays. */
CUCORE_API cucore_status cucore_mem_pool_trim(cucore_mem_pool *pool, size_t keep_bytes);

/** Access of a device to memory of another (pools, peers). Values equal CUmemAccess_flags'. */
typedef enum cucore_access {
  CUCORE_ACCESS_NONE = 0,     /**< no access */
  CUCORE_ACCESS_READ = 1,     /**< read only */
  CUCORE_ACCESS_READWRITE = 3 /**< read and write */
} cucore_access;

/** Lets kernels on `peer` access allocations of `pool` (cuMemPoolSetAccess); the pool's own
 * device always has read-write access.
 * @retval CUCORE_NOT_SUPPORTED `peer` cannot access the pool's device (cuDeviceCanAccessPeer
 *         is 0). */
CUCORE_API cucore_status cucore_mem_pool_set_access(cucore_mem_pool *pool, cucore_device *peer,
                                                    cucore_access access);
/** The access `dev` has to allocations of `pool` (cuMemPoolGetAccess). */
CUCORE_API cucore_status cucore_mem_pool_get_access(cucore_mem_pool *pool, cucore_device *dev,
                                                    cucore_access *access);

/** @} */

/* ------------------------------------------------------------------------------------------ */
/* Graph memory: the device's pool behind graph allocation nodes                              */
/* ------------------------------------------------------------------------------------------ */

/**
 * @defgroup graphmem Graph memory of a device
 * Graph allocation nodes (cucore_graph_add_mem_alloc_node()) take their memory from a pool of
 * the device's own, apart from the stream-ordered pools: its counters are read, its high-water
 * marks reset and its unused memory given back here. Thread-safe.
 * @{
 */

/** The graph memory counters of a device (cuDeviceGetGraphMemAttribute). */
typedef struct cucore_graph_mem_stats {
  uint64_t used_current;     /**< bytes graphs' allocations use now
                                  (CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT) */
  uint64_t used_high;        /**< the most used since the last reset */
  uint64_t reserved_current; /**< bytes the graph allocator holds now, used or not
                                  (CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT) */
  uint64_t reserved_high;    /**< the most reserved since the last reset */
} cucore_graph_mem_stats;

/** Reads the graph memory counters of `dev` (four cuDeviceGetGraphMemAttribute calls; a driver
 * for CUDA 11.4 or newer). */
CUCORE_API cucore_status cucore_device_get_graph_mem_stats(cucore_device *dev,
                                                           cucore_graph_mem_stats *out);
/** Resets both high-water marks of `dev`'s graph memory to the current values
 * (cuDeviceSetGraphMemAttribute with 0, the only value the driver takes). */
CUCORE_API cucore_status cucore_device_reset_graph_mem_high_water(cucore_device *dev);
/** Gives the graph memory `dev` holds but no graph uses back to the system
 * (cuDeviceGraphMemTrim). Memory of allocations a launched or instantiated graph still holds
 * stays. */
CUCORE_API cucore_status cucore_device_graph_mem_trim(cucore_device *dev);

/** @} */

/* ------------------------------------------------------------------------------------------ */
/* IPC: pools and their allocations shared with other processes                               */
/* ------------------------------------------------------------------------------------------ */

/**
 * @defgroup ipc Sharing memory between processes (IPC)
 * A pool created with CUCORE_POOL_IPC is exported as a POSIX file descriptor
 * (cuMemPoolExportToShareableHandle); another process imports it
 * (cuMemPoolImportFromShareableHandle) after receiving the descriptor over a Unix socket
 * (cucore_ipc_send_fd() / cucore_ipc_recv_fd() pass it with SCM_RIGHTS; a process may also take
 * it from another with pidfd_getfd(2) where ptrace rules allow). Each allocation is then
 * exported as a cucore_ipc_pointer (64 bytes of driver data plus its size), sent any way
 * at all, and imported into the imported pool; the importer's copies are bounds-checked
 * against the exporter's size.
 *
 * Order, from the driver's rules: the exporter's allocation must be complete (its stream
 * synchronised) before the importer uses it; the importer frees its imported pointer, and that
 * free completes, before the exporter frees the allocation. See examples/ipc_pool.c.
 * @{
 */

/** Writes a new file descriptor for `pool` (made with CUCORE_POOL_IPC) into *fd. The caller
 * owns the descriptor: send it, then close it.
 * @retval CUCORE_INVALID_ARGUMENT the pool was not created with CUCORE_POOL_IPC. */
CUCORE_API cucore_status cucore_mem_pool_export_fd(cucore_mem_pool *pool, int *fd);
/** CONSTRUCTOR: imports a pool exported by another process from its descriptor. `fd` stays the
 * caller's (close it after). The imported pool cannot allocate; it hands out the exporter's
 * allocations (cucore_mem_pool_import_pointer()). Destroy it after freeing those. */
CUCORE_API cucore_status cucore_mem_pool_import_fd(cucore_device *dev, int fd,
                                                   cucore_mem_pool **out);

/** One exported allocation: plain bytes, safe to send through a pipe, a socket or a file. */
typedef struct cucore_ipc_pointer {
  unsigned char data[64]; /**< the driver's export data (CUmemPoolPtrExportData) */
  uint64_t bytes;         /**< the allocation's size as asked for, for the importer's checks */
  uint32_t magic;         /**< identifies a cucore_ipc_pointer ("CCIP") */
  uint32_t version;       /**< layout version (1) */
} cucore_ipc_pointer;

/** Describes allocation `ptr` of `pool` for another process (cuMemPoolExportPointer).
 * @retval CUCORE_INVALID_ARGUMENT `ptr` is not the start of a live allocation of `pool`. */
CUCORE_API cucore_status cucore_mem_pool_export_pointer(cucore_mem_pool *pool, cucore_devptr ptr,
                                                        cucore_ipc_pointer *out);
/** Maps an exported allocation into this process through the imported `pool`
 * (cuMemPoolImportPointer). Free it with cucore_mem_pool_free_async() (or
 * cucore_mem_free_async(), or cucore_mem_free()) before the exporter frees it.
 * @retval CUCORE_INVALID_ARGUMENT `in` is not a cucore_ipc_pointer, or `pool` is not imported. */
CUCORE_API cucore_status cucore_mem_pool_import_pointer(cucore_mem_pool *pool,
                                                        const cucore_ipc_pointer *in,
                                                        cucore_devptr *out);

/** Sends file descriptor `fd` over the connected Unix socket `sock` (SCM_RIGHTS), with `bytes`
 * of `data` (at least 1 byte is sent; `data` may be NULL when `bytes` is 0). The descriptor
 * stays open here.
 * @retval CUCORE_IO_ERROR sendmsg failed (the errno is kept in the status). */
CUCORE_API cucore_status cucore_ipc_send_fd(int sock, int fd, const void *data, size_t bytes);
/** Receives a descriptor sent by cucore_ipc_send_fd() into *fd (a new descriptor the caller
 * owns), and exactly `bytes` of data into `data`.
 * @retval CUCORE_IO_ERROR recvmsg failed, the peer closed, no descriptor came, or the data was
 *         shorter than `bytes`. */
CUCORE_API cucore_status cucore_ipc_recv_fd(int sock, int *fd, void *data, size_t bytes);

/** @} */

/* ------------------------------------------------------------------------------------------ */
/* Pinned host memory: a pool of page-locked blocks, and registration of caller memory        */
/* ------------------------------------------------------------------------------------------ */

/**
 * @defgroup hostpool Pinned host memory pools and registration
 * cuMemHostAlloc + cuMemFreeHost cost about a millisecond per pair; a program that needs
 * pinned staging buffers per step keeps them in a cucore_host_pool, whose blocks are reused.
 * After warm-up, a pool without byte limits serves each thread from a small cache of its own
 * (up to 4 free blocks per size class and 64 MiB per thread): an allocation is a few stores,
 * and a free of a block the same thread allocated is one atomic compare-and-swap, which also
 * refuses a second free. Other frees, pools with limits (whose counts are exact at every
 * call) and cache misses take the pool's lock. Sizes are rounded up to classes
 * (4 KiB, then four classes per power of two: 5, 6, 7, 8 KiB, 10, 12, 14, 16 KiB, ...; at most
 * 25 % over the size asked for). Blocks are PORTABLE and mapped: usable for async copies with
 * every device, and by kernels at the same address. Thread-safe.
 *
 * Registration page-locks memory the caller already has (cuMemHostRegister) and records the
 * range, so copies from and to it are bounds-checked.
 * @{
 */

/** A pool of pinned host blocks: create with cucore_host_pool_create(), destroy with
 * cucore_host_pool_destroy(). */
typedef struct cucore_host_pool cucore_host_pool;

/** How a pinned pool behaves. Zero-initialise and set what you need. */
typedef struct cucore_host_pool_props {
  /** Most bytes of free blocks kept for reuse; a freed block that would pass it is given back
   * to the driver at once. 0 means no limit. */
  size_t max_cached_bytes;
  /** Most bytes in use and cached together; an allocation that would pass it fails with
   * CUCORE_HOST_OUT_OF_MEMORY. 0 means no limit. */
  size_t max_total_bytes;
} cucore_host_pool_props;

/** CONSTRUCTOR: an empty pool. Blocks are allocated in `dev`'s context (portable to every
 * device). Destroy `*out` before closing `dev`. `props` may be NULL. */
CUCORE_API cucore_status cucore_host_pool_create(cucore_device *dev,
                                                 const cucore_host_pool_props *props,
                                                 cucore_host_pool **out);
/** DESTRUCTOR: gives every cached block back and frees the pool. NULL is a no-op.
 * @retval CUCORE_IN_USE blocks are still allocated (the message counts them); the pool is
 *         kept. */
CUCORE_API cucore_status cucore_host_pool_destroy(cucore_host_pool *pool);
/** Allocates `bytes` (> 0) of pinned host memory, page-aligned, from a cached block of its size
 * class or a new one. Free it with cucore_host_pool_free() on the same pool.
 * @retval CUCORE_HOST_OUT_OF_MEMORY the driver could not pin that much (after giving the
 *         cache back), or max_total_bytes would be passed. */
CUCORE_API cucore_status cucore_host_pool_alloc(cucore_host_pool *pool, size_t bytes, void **out);
/** Returns a block to its pool for reuse. NULL is a no-op. Async copies using the block must
 * be complete (synchronise their stream first).
 * @retval CUCORE_INVALID_ARGUMENT not a live block of this pool (another pool's, freed
 *         already, or not from a pool); the message says which.
 * @retval CUCORE_IN_USE a DLPack export still uses it. */
CUCORE_API cucore_status cucore_host_pool_free(cucore_host_pool *pool, void *ptr);
/** Gives cached blocks back to the driver until at most `keep_bytes` are cached (largest
 * first). Blocks in use stay. The pool's lists and the calling thread's cache are trimmed at
 * once; another thread's cache (a few blocks) goes back to the pool's lists at that thread's
 * next call on the pool, or when it exits, for the next trim; destroying the pool releases
 * every block wherever it is cached. */
CUCORE_API cucore_status cucore_host_pool_trim(cucore_host_pool *pool, size_t keep_bytes);

/** A pinned pool's counters (cucore_host_pool_get_stats()). */
typedef struct cucore_host_pool_stats {
  uint64_t in_use_blocks;   /**< blocks handed out */
  uint64_t in_use_bytes;    /**< their bytes as asked for */
  uint64_t in_use_capacity; /**< their bytes as allocated (size classes) */
  uint64_t cached_blocks;   /**< free blocks kept for reuse */
  uint64_t cached_bytes;    /**< their bytes */
  uint64_t reserved_high;   /**< most bytes pinned at once (in use + cached) since the last
                                  reset */
  uint64_t hits;            /**< allocations served from the cache */
  uint64_t misses;          /**< allocations that pinned a new block */
  uint64_t driver_frees;    /**< blocks given back to the driver */
} cucore_host_pool_stats;

/** Reads the pool's counters. */
CUCORE_API cucore_status cucore_host_pool_get_stats(cucore_host_pool *pool,
                                                    cucore_host_pool_stats *out);
/** Resets reserved_high to the bytes pinned now, and the hit and miss counts to 0. */
CUCORE_API cucore_status cucore_host_pool_reset_high_water(cucore_host_pool *pool);
/** The bytes a pinned pool allocates for a request of `bytes` (its size class). Pure.
 * @retval CUCORE_INVALID_ARGUMENT `bytes` is 0 or above the largest class (1 TiB). */
CUCORE_API cucore_status cucore_host_pool_get_class_size(size_t bytes, size_t *class_bytes);

/** Flags of cucore_host_register(), combined with `|`; they equal CU_MEMHOSTREGISTER_*. */
enum {
  CUCORE_HOST_REGISTER_PORTABLE = 1,  /**< page-locked for every context, not only `dev`'s */
  CUCORE_HOST_REGISTER_DEVICEMAP = 2, /**< mapped for kernels (cucore_host_get_device_pointer()) */
  CUCORE_HOST_REGISTER_IOMEMORY = 4,  /**< the range is I/O memory (a PCI BAR), not RAM */
  CUCORE_HOST_REGISTER_READ_ONLY = 8  /**< the device only reads it (needs the device's
                                           READ_ONLY_HOST_REGISTER_SUPPORTED) */
};

/** Page-locks `bytes` of the caller's memory at `ptr` (cuMemHostRegister) and records the
 * range: copies from and to it are then async-capable and bounds-checked. Undo with
 * cucore_host_unregister() before freeing the memory.
 * @retval CUCORE_INVALID_ARGUMENT unknown flags, a range that wraps, or a range that overlaps
 *         one already registered or pinned by cucore (the message names it).
 * @retval CUCORE_NOT_SUPPORTED READ_ONLY on a device without support. */
CUCORE_API cucore_status cucore_host_register(cucore_device *dev, void *ptr, size_t bytes,
                                              unsigned flags);
/** Unlocks a range registered with cucore_host_register(); `ptr` is its start.
 * @retval CUCORE_INVALID_ARGUMENT not the start of a range registered through cucore.
 * @retval CUCORE_IN_USE a DLPack export or texture still uses it. */
CUCORE_API cucore_status cucore_host_unregister(cucore_device *dev, void *ptr);
/** The address kernels use for mapped host memory (pinned, pinned-pool, or registered with
 * CUCORE_HOST_REGISTER_DEVICEMAP) (cuMemHostGetDevicePointer). It equals the host address
 * except for registered memory on devices that cannot use host pointers for it. */
CUCORE_API cucore_status cucore_host_get_device_pointer(cucore_device *dev, void *ptr,
                                                        cucore_devptr *out);

/** @} */

/* ------------------------------------------------------------------------------------------ */
/* Managed memory: allocation, prefetch, advice, range attributes                             */
/* ------------------------------------------------------------------------------------------ */

/**
 * @defgroup managed Managed memory
 * Memory the driver migrates between host and devices on demand (cuMemAllocManaged); prefetch
 * and advice tune where it lives. Free it with cucore_mem_free().
 * @{
 */

/** Attach flags of cucore_mem_alloc_managed() (equal to CU_MEM_ATTACH_*). */
enum {
  CUCORE_MANAGED_GLOBAL = 1, /**< any stream of any device may access it */
  CUCORE_MANAGED_HOST = 2    /**< only the host, until attached to a stream */
};

/** Allocates `bytes` (> 0) of managed memory, recorded like device memory (kind
 * CUCORE_MEM_MANAGED). `attach` is CUCORE_MANAGED_GLOBAL or CUCORE_MANAGED_HOST.
 * @retval CUCORE_NOT_SUPPORTED the device has no managed memory.
 * @retval CUCORE_DEVICE_OUT_OF_MEMORY as cucore_mem_alloc(). */
CUCORE_API cucore_status cucore_mem_alloc_managed(cucore_device *dev, size_t bytes, unsigned attach,
                                                  cucore_devptr *out);

/** Kinds of location (equal to CUmemLocationType's). */
typedef enum cucore_location_type {
  CUCORE_LOCATION_NONE = 0,             /**< no location (unset) */
  CUCORE_LOCATION_DEVICE = 1,           /**< a device; `id` is its ordinal */
  CUCORE_LOCATION_HOST = 2,             /**< host memory; `id` is ignored */
  CUCORE_LOCATION_HOST_NUMA = 3,        /**< a host NUMA node; `id` is the node */
  CUCORE_LOCATION_HOST_NUMA_CURRENT = 4 /**< the NUMA node of the calling thread's CPU */
} cucore_location_type;

/** A place memory can live or be accessed from. */
typedef struct cucore_location {
  cucore_location_type type; /**< what `id` means */
  int id;                    /**< device ordinal or NUMA node */
} cucore_location;

/** Migrates `bytes` of managed memory at `ptr` to `to` in stream order on `s`
 * (cuMemPrefetchAsync with a CUmemLocation, CUDA 12.2+). The range must lie in one managed
 * allocation when cucore recorded it (checked).
 * @retval CUCORE_OUT_OF_BOUNDS the range runs past its allocation.
 * @retval CUCORE_NOT_SUPPORTED the target device lacks concurrent managed access. */
CUCORE_API cucore_status cucore_mem_prefetch(cucore_devptr ptr, size_t bytes, cucore_location to,
                                             cucore_stream *s);

/** Advice for managed memory (equal to CUmem_advise). */
typedef enum cucore_mem_advice {
  CUCORE_ADVISE_READ_MOSTLY = 1,              /**< mostly read: reads duplicate the pages */
  CUCORE_ADVISE_UNSET_READ_MOSTLY = 2,        /**< undo READ_MOSTLY */
  CUCORE_ADVISE_PREFERRED_LOCATION = 3,       /**< keep the pages at `where` */
  CUCORE_ADVISE_UNSET_PREFERRED_LOCATION = 4, /**< undo PREFERRED_LOCATION */
  CUCORE_ADVISE_ACCESSED_BY = 5,              /**< keep the pages mapped for `where` */
  CUCORE_ADVISE_UNSET_ACCESSED_BY = 6         /**< undo ACCESSED_BY for `where` */
} cucore_mem_advice;

/** Gives the driver advice about `bytes` at `ptr` (cuMemAdvise with a CUmemLocation, CUDA
 * 12.2+). `where` is ignored for READ_MOSTLY and its undo.
 * @retval CUCORE_OUT_OF_BOUNDS the range runs past its recorded allocation. */
CUCORE_API cucore_status cucore_mem_advise(cucore_devptr ptr, size_t bytes,
                                           cucore_mem_advice advice, cucore_location where);

/** What the driver holds for a managed range (cucore_mem_range_get_info()). */
typedef struct cucore_mem_range_info {
  int read_mostly;               /**< 1 when every page is READ_MOSTLY */
  cucore_location preferred;     /**< the preferred location (type NONE when unset or when
                                       the pages disagree) */
  cucore_location last_prefetch; /**< where it was last prefetched (type NONE when never or
                                       when the pages disagree) */
  int accessed_by_count;         /**< devices set with ACCESSED_BY (at most 32 listed) */
  int accessed_by[32];           /**< their ordinals */
} cucore_mem_range_info;

/** Reads the advice and prefetch state of `bytes` at `ptr` (cuMemRangeGetAttribute). */
CUCORE_API cucore_status cucore_mem_range_get_info(cucore_devptr ptr, size_t bytes,
                                                   cucore_mem_range_info *out);

/** @} */

/* ==== SECTION: managed memory: NUMA, discard, batches ==== */
/**
 * @defgroup managed_batch Managed memory: host NUMA nodes, discard, batches
 *
 * Host NUMA locations (CUCORE_LOCATION_HOST_NUMA with a node the system has, checked against
 * /sys/devices/system/node; CUCORE_LOCATION_HOST_NUMA_CURRENT for the calling thread's node) work
 * in cucore_mem_prefetch(), cucore_mem_advise() and the calls below, and
 * cucore_mem_range_get_info() reports them (a driver that keeps no host NUMA preference reports
 * such a preferred location as none). Discarding a range tells the driver its contents are no
 * longer needed: the memory stays valid, its contents are undefined until it is prefetched
 * (cucore_mem_prefetch(), or discard with cucore_mem_discard_prefetch()); writes made before that
 * may be lost (the driver's UVM layer clears a discard on a migration; seen with driver 580: host
 * writes after a discard never reached a kernel). The batched forms take many ranges in one call
 * (CUDA 13.0's cuMemPrefetchBatchAsync, cuMemDiscardBatchAsync, cuMemDiscardAndPrefetchBatchAsync);
 * on an older driver cucore does the same work range by range with cuMemPrefetchAsync, and a
 * discard there does nothing (the contents are kept, which a discard allows). Every range is
 * checked as cucore_mem_prefetch() checks one, and a failure names the range.
 * @{
 */

/** A range of managed memory for the batched calls. */
typedef struct cucore_mem_range {
  cucore_devptr ptr; /**< its start */
  size_t bytes;      /**< its size (> 0) */
} cucore_mem_range;

/** The host NUMA node of the CPU the calling thread runs on now (getcpu(2)).
 * @retval CUCORE_NOT_SUPPORTED the system cannot say. */
CUCORE_API cucore_status cucore_host_get_numa_node(int *node);

/** Prefetches `count` ranges in stream order on `s`: range i to `to[0]` when `to_count` is 1,
 * else to `to[i]` (`to_count` == `count`). The ranges of one batch run in no set order.
 * @retval CUCORE_INVALID_ARGUMENT an empty list, a location count that is neither 1 nor
 *         `count`, a range that is not managed memory (the message names the range).
 * @retval CUCORE_DRIVER_TOO_OLD the driver has neither cuMemPrefetchBatchAsync nor
 *         cuMemPrefetchAsync (CUDA 12.2). */
CUCORE_API cucore_status cucore_mem_prefetch_batch(const cucore_mem_range *ranges, size_t count,
                                                   const cucore_location *to, size_t to_count,
                                                   cucore_stream *s);
/** Discards `bytes` of managed memory at `ptr` in stream order on `s`: the memory stays
 * valid, its contents become undefined (a no-op before CUDA 13.0). */
CUCORE_API cucore_status cucore_mem_discard(cucore_devptr ptr, size_t bytes, cucore_stream *s);
/** Discards `count` ranges (cucore_mem_discard() for each, in one call). */
CUCORE_API cucore_status cucore_mem_discard_batch(const cucore_mem_range *ranges, size_t count,
                                                  cucore_stream *s);
/** Discards `bytes` at `ptr` and prefetches the range to `to`: the pages are made at `to`
 * without moving the old contents (a plain prefetch before CUDA 13.0). */
CUCORE_API cucore_status cucore_mem_discard_prefetch(cucore_devptr ptr, size_t bytes,
                                                     cucore_location to, cucore_stream *s);
/** Discards and prefetches `count` ranges; locations as cucore_mem_prefetch_batch(). */
CUCORE_API cucore_status cucore_mem_discard_prefetch_batch(const cucore_mem_range *ranges,
                                                           size_t count, const cucore_location *to,
                                                           size_t to_count, cucore_stream *s);
/** @} */
/* ==== END SECTION: managed memory: NUMA, discard, batches ==== */

/* ------------------------------------------------------------------------------------------ */
/* Copies and fills: every direction, peers, 2D and 3D, bounds-checked                        */
/* ------------------------------------------------------------------------------------------ */

/**
 * @defgroup copies Copies and fills
 * Beyond cucore_memcpy_htod() and its siblings: copies that infer the direction from the
 * addresses (unified addressing), between devices, of 2D and 3D regions with pitches, and to
 * and from CUDA arrays; pitched allocation; fills of 8-, 16- and 32-bit values, also in 2D.
 *
 * Every range on memory cucore recorded is checked before the driver sees it (the copies of
 * the Memory section too): a range past the end of its allocation is CUCORE_OUT_OF_BOUNDS with
 * both sizes and the offset; a range that wraps around the address space, or a size that is a
 * negative number converted to size_t, is CUCORE_INVALID_ARGUMENT. Addresses cucore did not
 * record pass unchecked (see CUCORE_MEM_CHECK_FOREIGN). A stream given must belong to the
 * device given; NULL means a synchronous copy (complete on return, see @ref memory). With a
 * stream, host memory must stay valid until the stream reaches the copy; pageable host memory
 * makes the copy synchronous (the driver's rule).
 * @{
 */

/** A CUDA array (CUarray): create with cucore_array_create(), destroy with
 * cucore_array_destroy(). */
typedef struct cucore_array cucore_array;

/** Copies `bytes` from `src` to `dst`, in whatever direction their addresses tell (cuMemcpy /
 * cuMemcpyAsync): host addresses through CUCORE_HOST_ADDR(). Both ranges are checked.
 * @retval CUCORE_OUT_OF_BOUNDS a range runs past the end of its allocation. */
CUCORE_API cucore_status cucore_memcpy(cucore_device *dev, cucore_devptr dst, cucore_devptr src,
                                       size_t bytes, cucore_stream *s);
/** Copies `bytes` between two host buffers through the driver (ordered on `s` when given, like
 * any copy on the stream), as cucore_memcpy(). */
CUCORE_API cucore_status cucore_memcpy_htoh(cucore_device *dev, void *dst, const void *src,
                                            size_t bytes, cucore_stream *s);
/** Copies `bytes` from `src` on `src_dev` to `dst` on `dst_dev` (cuMemcpyPeer /
 * cuMemcpyPeerAsync); works without peer access (staged by the driver) and is direct with it.
 * `s` (may be NULL) belongs to `dst_dev`. Both ranges are checked, and each must belong to its
 * device when cucore recorded it. */
CUCORE_API cucore_status cucore_memcpy_peer(cucore_device *dst_dev, cucore_devptr dst,
                                            cucore_device *src_dev, cucore_devptr src, size_t bytes,
                                            cucore_stream *s);
/** Whether kernels on `dev` can access memory of `peer` once access is enabled
 * (cuDeviceCanAccessPeer); a device with itself answers 1. */
CUCORE_API cucore_status cucore_device_can_access_peer(cucore_device *dev, cucore_device *peer,
                                                       int *can);
/** Lets kernels and copies on `dev` access memory allocated on `peer` with cucore_mem_alloc
 * (cuCtxEnablePeerAccess in `dev`'s context). Enabling twice is not an error. Pool memory needs
 * cucore_mem_pool_set_access() instead.
 * @retval CUCORE_NOT_SUPPORTED the devices cannot access each other, or `dev` is `peer`. */
CUCORE_API cucore_status cucore_device_enable_peer_access(cucore_device *dev, cucore_device *peer);
/** Undoes cucore_device_enable_peer_access(). Disabling access that is not enabled is not an
 * error. */
CUCORE_API cucore_status cucore_device_disable_peer_access(cucore_device *dev, cucore_device *peer);

/** Allocates `height` rows of at least `width_bytes` each, padded so every row starts aligned
 * for the fastest 2D access (cuMemAllocPitch); the row stride is written to *pitch and the
 * allocation (pitch x height bytes) is recorded. `element_bytes` (4, 8 or 16) is the largest
 * access kernels make. Free it with cucore_mem_free(). */
CUCORE_API cucore_status cucore_mem_alloc_pitch(cucore_device *dev, size_t width_bytes,
                                                size_t height, unsigned element_bytes,
                                                cucore_devptr *out, size_t *pitch);

/** A 2D copy: `height` rows of `width_bytes`, from a pitched region (or an array) to another.
 * A side with an array uses the array and its x (bytes) and y; otherwise its address, pitch,
 * x (bytes) and y. */
typedef struct cucore_copy_2d {
  cucore_devptr src;       /**< source address (host addresses through CUCORE_HOST_ADDR) */
  size_t src_pitch;        /**< bytes between source rows (>= width_bytes) */
  cucore_array *src_array; /**< or a source array (then src and src_pitch are ignored) */
  size_t src_x_bytes;      /**< first source byte within a row */
  size_t src_y;            /**< first source row */
  cucore_devptr dst;       /**< destination address */
  size_t dst_pitch;        /**< bytes between destination rows (>= width_bytes) */
  cucore_array *dst_array; /**< or a destination array */
  size_t dst_x_bytes;      /**< first destination byte within a row */
  size_t dst_y;            /**< first destination row */
  size_t width_bytes;      /**< bytes per row to copy */
  size_t height;           /**< rows to copy */
} cucore_copy_2d;

/** Copies a 2D region (cuMemcpy2D / cuMemcpy2DAsync, unified addressing). Each side's
 * footprint (from its first byte to the last byte of its last row) is checked against its
 * allocation or array.
 * @retval CUCORE_OUT_OF_BOUNDS a footprint runs past its allocation or array.
 * @retval CUCORE_INVALID_ARGUMENT a pitch below width_bytes, or arithmetic that overflows. */
CUCORE_API cucore_status cucore_memcpy_2d(cucore_device *dev, const cucore_copy_2d *copy,
                                          cucore_stream *s);

/** A 3D copy: `depth` slices of `height` rows of `width_bytes`. A side with an array uses it
 * and its x (bytes), y and z; otherwise its address, pitch, height (rows per slice), x, y, z. */
typedef struct cucore_copy_3d {
  cucore_devptr src;       /**< source address */
  size_t src_pitch;        /**< bytes between source rows */
  size_t src_height;       /**< rows between source slices (>= height) */
  cucore_array *src_array; /**< or a source array */
  size_t src_x_bytes;      /**< first source byte within a row */
  size_t src_y;            /**< first source row */
  size_t src_z;            /**< first source slice */
  cucore_devptr dst;       /**< destination address */
  size_t dst_pitch;        /**< bytes between destination rows */
  size_t dst_height;       /**< rows between destination slices (>= height) */
  cucore_array *dst_array; /**< or a destination array */
  size_t dst_x_bytes;      /**< first destination byte within a row */
  size_t dst_y;            /**< first destination row */
  size_t dst_z;            /**< first destination slice */
  size_t width_bytes;      /**< bytes per row to copy */
  size_t height;           /**< rows per slice to copy */
  size_t depth;            /**< slices to copy */
} cucore_copy_3d;

/** Copies a 3D region (cuMemcpy3D / cuMemcpy3DAsync), each footprint checked as in
 * cucore_memcpy_2d(). */
CUCORE_API cucore_status cucore_memcpy_3d(cucore_device *dev, const cucore_copy_3d *copy,
                                          cucore_stream *s);

/** Copies a tensor between two layouts on the device (a layout conversion): the `ndim`
 * (1..8) dimensions of `shape` (outermost first), each element `elem_bytes` (1, 2, 4, 8 or 16)
 * from `src` + src_strides . index to `dst` + dst_strides . index, strides in elements (as
 * DLPack gives them; negative ones allowed). Each side's footprint, from its lowest to its
 * highest element, is checked against its allocation first; two sides that overlap are
 * refused. The same dense layout on both sides is one plain copy; any other runs a small
 * kernel compiled once with NVRTC (the first call pays for it; without NVRTC it is refused,
 * naming why). Asynchronous on `s`; with `s` NULL it returns when the copy is done.
 * @retval CUCORE_INVALID_ARGUMENT a count, size or shape out of range, NULL strides or
 *         shape, overlapping sides.
 * @retval CUCORE_ARG_ALIGNMENT a side's address not aligned to the element.
 * @retval CUCORE_OUT_OF_BOUNDS a side's footprint runs past its allocation. */
CUCORE_API cucore_status cucore_memcpy_strided(cucore_device *dev, cucore_devptr dst,
                                               const int64_t *dst_strides, cucore_devptr src,
                                               const int64_t *src_strides, const uint64_t *shape,
                                               unsigned ndim, unsigned elem_bytes,
                                               cucore_stream *s);

/** Sets `count` 16-bit values at `dst` (2-byte aligned) to `value` (stream may be NULL).
 * @retval CUCORE_ARG_ALIGNMENT `dst` is not 2-byte aligned.
 * @retval CUCORE_OUT_OF_BOUNDS the range runs past its allocation. */
CUCORE_API cucore_status cucore_memset_d16(cucore_device *dev, cucore_devptr dst, uint16_t value,
                                           size_t count, cucore_stream *s);
/** Sets `height` rows of `width` elements of `element_bytes` (1, 2 or 4) each, rows `pitch`
 * bytes apart, to `value` (its low 8 or 16 bits for the smaller sizes) (cuMemsetD2D8/16/32 and
 * their Async forms). The footprint is checked as in cucore_memcpy_2d().
 * @retval CUCORE_ARG_ALIGNMENT `dst` or `pitch` not a multiple of `element_bytes`. */
CUCORE_API cucore_status cucore_memset_2d(cucore_device *dev, cucore_devptr dst, size_t pitch,
                                          uint32_t value, unsigned element_bytes, size_t width,
                                          size_t height, cucore_stream *s);

/** @} */

/* ==== SECTION: batched and attributed copies ==== */
/**
 * @defgroup copy_batch Batched and attributed copies
 *
 * Many copies in one call (cuMemcpyBatchAsync and, for 2D/3D regions and arrays,
 * cuMemcpy3DBatchAsync, CUDA 12.8), and copies that carry attributes:
 * when the source may be read (in stream order, during the call, or at any time), where the
 * operands are expected to be (location hints, used by the driver for managed and pageable
 * memory only) and whether the copy should rather overlap with kernels
 * (CUCORE_COPY_PREFER_OVERLAP). Every copy is checked exactly as cucore_memcpy() checks one
 * (NULL addresses, sizes that are negative numbers, ranges against their allocations) before
 * any is issued, and a refusal names the copy's index. Copies of 0 bytes are skipped. The
 * copies of one batch run in no set order among themselves (the batch as a whole is in stream
 * order): copies that depend on each other belong in different batches.
 *
 * On a driver without the batched entry point (before CUDA 12.8) the same copies are made one
 * by one with cuMemcpyAsync on the stream: location hints and the overlap flag (hints to the
 * driver) are then ignored; a source to be read during the call is honoured by waiting for the
 * stream before the call returns. The stream must be one of the device's own or a wrapped one,
 * not the legacy default stream (the driver's rule for batches, kept on every driver). Inside a
 * stream capture the copies are captured one by one, as cuMemcpyAsync / cuMemcpy3DAsync nodes
 * (the driver does not capture its batched entry point: CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
 * reported with CUDA 13, where the capture goes on without the copies);
 * a source read during the call is refused there (a captured copy reads its source when the
 * graph runs).
 * @{
 */

/** When a copy's source may be read (equal to CUmemcpySrcAccessOrder's values). */
typedef enum cucore_copy_src_order {
  CUCORE_COPY_SRC_STREAM = 1,      /**< in stream order, after the work queued before the copy */
  CUCORE_COPY_SRC_DURING_CALL = 2, /**< before the call returns, out of stream order: for
                                        short-lived sources (stack variables) that no earlier
                                        work on the stream touches */
  CUCORE_COPY_SRC_ANY = 3          /**< out of stream order, also after the call returns: for
                                        host memory no earlier work on the stream touches */
} cucore_copy_src_order;

/** Flags of cucore_copy_attrs (equal to CUmemcpyFlags'). */
enum {
  CUCORE_COPY_PREFER_OVERLAP = 1 /**< rather overlap with kernels (a hint the driver may ignore) */
};

/** The attributes of copies: the order its source is read in, location hints (type
 * CUCORE_LOCATION_NONE: no hint) and flags. A zeroed struct is invalid (no order): set
 * `src_order`. */
typedef struct cucore_copy_attrs {
  cucore_copy_src_order src_order; /**< when the source may be read */
  cucore_location src_hint;        /**< where the source is expected (managed or pageable
                                        memory only; else ignored by the driver) */
  cucore_location dst_hint;        /**< where the destination is expected (as `src_hint`) */
  unsigned flags;                  /**< 0 or CUCORE_COPY_PREFER_OVERLAP */
} cucore_copy_attrs;

/** One copy of a batch: `bytes` from `src` to `dst`, in the direction their addresses tell
 * (host addresses through CUCORE_HOST_ADDR()). */
typedef struct cucore_copy_desc {
  cucore_devptr dst; /**< destination address */
  cucore_devptr src; /**< source address */
  size_t bytes;      /**< bytes to copy (0: skipped) */
} cucore_copy_desc;

/** The value of a failed index that names no copy (the failure is the batch's). */
#define CUCORE_COPY_NO_INDEX ((size_t)-1)

/** Queues `count` copies on `s` in one call (cuMemcpyBatchAsync; one by one on a driver before
 * CUDA 12.8, see above). Attributes: `attrs` NULL and `attr_count` 0 give every copy
 * CUCORE_COPY_SRC_STREAM without hints; else `attrs[k]` applies from copy `attr_index[k]` up to
 * the next entry's first copy (the driver's rule: `attr_index[0]` is 0, the entries increase,
 * each is below `count`, and `attr_count` <= `count`); `attr_index` may be NULL when
 * `attr_count` is 1 (one set for every copy). `failed_index` (may be NULL) receives the index
 * of the copy refused by cucore's checks or named by the driver's failure (the loop's copy on an
 * older driver), else CUCORE_COPY_NO_INDEX.
 * @retval CUCORE_INVALID_ARGUMENT no copies, a NULL address, a negative size, attributes that
 *         break the rules above (the entry named), the legacy default stream, a source read
 *         during the call inside a capture.
 * @retval CUCORE_OUT_OF_BOUNDS a copy runs past its allocation (the message names the copy). */
CUCORE_API cucore_status cucore_memcpy_batch(cucore_device *dev, const cucore_copy_desc *copies,
                                             size_t count, const cucore_copy_attrs *attrs,
                                             const size_t *attr_index, size_t attr_count,
                                             cucore_stream *s, size_t *failed_index);

/** Queues one copy of `bytes` from `src` to `dst` on `s` with the attributes `attr`
 * (cuMemcpyWithAttributesAsync, CUDA 13.2; before it, a batch of one copy with
 * cuMemcpyBatchAsync, CUDA 12.8; before that, cuMemcpyAsync as for a batch). Checked as
 * cucore_memcpy() and cucore_memcpy_batch() check a copy. */
CUCORE_API cucore_status cucore_memcpy_with_attributes(cucore_device *dev, cucore_devptr dst,
                                                       cucore_devptr src, size_t bytes,
                                                       const cucore_copy_attrs *attr,
                                                       cucore_stream *s);
/** Queues `count` 3D copies (cucore_copy_3d: pitched memory or arrays on either side) on `s` in
 * one call (cuMemcpy3DBatchAsync, CUDA 12.8; one by one with cuMemcpy3DAsync before it, as a
 * batch of cucore_memcpy_batch()). Each footprint is checked as cucore_memcpy_3d() checks it,
 * a refusal naming the copy; attributes and `failed_index` as in cucore_memcpy_batch() (a
 * location hint applies to a side that is an address, not an array). Copies with an extent of
 * 0 are skipped. With an array on a side, widths and x offsets are in bytes as in
 * cucore_copy_3d and must be whole elements of the array; two arrays must have one element
 * size.
 * @retval CUCORE_INVALID_ARGUMENT as cucore_memcpy_batch(), or a width or x offset that is not
 *         a whole number of the array's elements.
 * @retval CUCORE_OUT_OF_BOUNDS a footprint runs past its allocation or array. */
CUCORE_API cucore_status cucore_memcpy_3d_batch(cucore_device *dev, const cucore_copy_3d *copies,
                                                size_t count, const cucore_copy_attrs *attrs,
                                                const size_t *attr_index, size_t attr_count,
                                                cucore_stream *s, size_t *failed_index);
/** Queues one 3D copy on `s` with the attributes `attr` (cuMemcpy3DWithAttributesAsync, CUDA
 * 13.2; before it a batch of one, then cuMemcpy3DAsync), checked as cucore_memcpy_3d(). */
CUCORE_API cucore_status cucore_memcpy_3d_with_attributes(cucore_device *dev,
                                                          const cucore_copy_3d *copy,
                                                          const cucore_copy_attrs *attr,
                                                          cucore_stream *s);
/** @} */
/* ==== END SECTION: batched and attributed copies ==== */

/* ==== SECTION: virtual memory ==== */
/**
 * @defgroup vmm Virtual memory
 *
 * The driver's virtual memory management (CUDA 10.2+ entry points): reserve an address range,
 * create physical memory on a device, map it into the range, give devices access, unmap,
 * release; export physical memory to another process as a POSIX file descriptor. Sizes,
 * offsets and addresses are multiples of the granularity (cucore_vmm_get_granularity()); a
 * misaligned one is refused naming the granularity and the value rounded up. A mapped range is
 * recorded like an allocation (kind CUCORE_MEM_VMM), so cucore's copies into it are
 * bounds-checked. cucore_vmm_buffer is a growable buffer built on these calls: growing keeps
 * its address and its contents. A driver without the entry points gives
 * CUCORE_DRIVER_TOO_OLD naming the version needed.
 * @{
 */

/** Physical memory of a device (CUmemGenericAllocationHandle): create with cucore_vmm_create()
 * or cucore_vmm_import_fd(), release with cucore_vmm_release(). */
typedef struct cucore_vmm_memory cucore_vmm_memory;
/** A growable device buffer over a reserved address range: cucore_vmm_buffer_create(). */
typedef struct cucore_vmm_buffer cucore_vmm_buffer;

/** Flags of cucore_vmm_create() and cucore_vmm_get_granularity(). */
enum {
  CUCORE_VMM_DEFAULT = 0,     /**< device memory, not exportable */
  CUCORE_VMM_SHAREABLE_FD = 1 /**< exportable as a POSIX file descriptor (cucore_vmm_export_fd) */
};

/** Access of a device to a mapped range (cucore_vmm_set_access()); no other value is valid. */
enum {
  CUCORE_VMM_ACCESS_NONE = 0,     /**< no access */
  CUCORE_VMM_ACCESS_READ = 1,     /**< read only */
  CUCORE_VMM_ACCESS_READWRITE = 3 /**< read and write */
};

/** The granularity of physical memory on `dev` for `flags` (CUCORE_VMM_*): `minimum` (every
 * size, offset and address must be a multiple of it) and `recommended` (for performance);
 * either may be NULL.
 * @retval CUCORE_INVALID_ARGUMENT unknown flags.
 * @retval CUCORE_DRIVER_TOO_OLD the driver lacks cuMemGetAllocationGranularity (10.2). */
CUCORE_API cucore_status cucore_vmm_get_granularity(cucore_device *dev, unsigned flags,
                                                    size_t *minimum, size_t *recommended);
/** Reserves `bytes` of address space (a multiple of the minimum granularity) aligned to
 * `alignment` (0: the granularity) for `dev`, at `hint` when the driver can (0: anywhere).
 * *out gets its start; give it back with cucore_vmm_unreserve() after unmapping it.
 * @retval CUCORE_INVALID_ARGUMENT 0 or misaligned bytes (the message names the granularity). */
CUCORE_API cucore_status cucore_vmm_reserve(cucore_device *dev, size_t bytes, size_t alignment,
                                            cucore_devptr hint, cucore_devptr *out);
/** Gives back a range reserved with cucore_vmm_reserve() (its whole `bytes`); nothing may be
 * mapped in it any more.
 * @retval CUCORE_INVALID_ARGUMENT a part of the range is still mapped (the message names it). */
CUCORE_API cucore_status cucore_vmm_unreserve(cucore_device *dev, cucore_devptr base, size_t bytes);
/** CONSTRUCTOR: `bytes` (a multiple of the minimum granularity) of physical memory pinned on
 * `dev`. `flags` CUCORE_VMM_SHAREABLE_FD makes it exportable. Release `*out` with
 * cucore_vmm_release().
 * @retval CUCORE_INVALID_ARGUMENT 0 or misaligned bytes, unknown flags.
 * @retval CUCORE_DEVICE_OUT_OF_MEMORY the device has not that much free. */
CUCORE_API cucore_status cucore_vmm_create(cucore_device *dev, size_t bytes, unsigned flags,
                                           cucore_vmm_memory **out);
/** DESTRUCTOR: releases the handle. Memory still mapped stays usable until it is unmapped (the
 * driver frees it then). NULL is a no-op. */
CUCORE_API cucore_status cucore_vmm_release(cucore_vmm_memory *mem);
/** The size in bytes of physical memory (as created or imported). */
CUCORE_API cucore_status cucore_vmm_get_size(const cucore_vmm_memory *mem, size_t *bytes);
/** Maps `bytes` of `mem` from `offset` at `addr` (inside a reserved range), all multiples of
 * the granularity, and records the range (kind CUCORE_MEM_VMM). No device can access it until
 * cucore_vmm_set_access().
 * @retval CUCORE_INVALID_ARGUMENT misaligned values, `offset + bytes` past `mem`'s size, or a
 *         range overlapping one cucore already records. */
CUCORE_API cucore_status cucore_vmm_map(cucore_devptr addr, cucore_vmm_memory *mem, size_t offset,
                                        size_t bytes);
/** Unmaps `[addr, addr + bytes)`, which must be exactly one or more adjacent ranges mapped by
 * cucore_vmm_map() (not a cucore_vmm_buffer's), and forgets their records.
 * @retval CUCORE_INVALID_ARGUMENT the range cuts a mapped range, covers a buffer's range, or
 *         has addresses no cucore_vmm_map() mapped (the message names the first). */
CUCORE_API cucore_status cucore_vmm_unmap(cucore_devptr addr, size_t bytes);
/** Gives each of the `count` devices (1..64, no repeats) `access` (CUCORE_VMM_ACCESS_*) to
 * the mapped range `[addr, addr + bytes)`.
 * @retval CUCORE_INVALID_ARGUMENT `access` is not one of CUCORE_VMM_ACCESS_NONE, _READ,
 *         _READWRITE (the message names the value), no devices, a NULL or repeated device. */
CUCORE_API cucore_status cucore_vmm_set_access(cucore_devptr addr, size_t bytes,
                                               cucore_device *const *devs, size_t count,
                                               unsigned access);
/** Exports `mem` (created with CUCORE_VMM_SHAREABLE_FD) as a new POSIX file descriptor in
 * *fd (the caller closes it); pass it to another process (cucore_ipc_send_fd) which imports it
 * with cucore_vmm_import_fd().
 * @retval CUCORE_INVALID_ARGUMENT `mem` was not created shareable. */
CUCORE_API cucore_status cucore_vmm_export_fd(cucore_vmm_memory *mem, int *fd);
/** CONSTRUCTOR: imports physical memory exported by cucore_vmm_export_fd() (`fd` stays the
 * caller's) on `dev`; `bytes` is its size as the exporter created it (it bounds later maps).
 * Release `*out` with cucore_vmm_release().
 * @retval CUCORE_INVALID_ARGUMENT a negative fd, 0 or misaligned bytes. */
CUCORE_API cucore_status cucore_vmm_import_fd(cucore_device *dev, int fd, size_t bytes,
                                              cucore_vmm_memory **out);

/** CONSTRUCTOR: a buffer of `bytes` (rounded up to the granularity when mapped; copies are
 * checked against `bytes`) on `dev`, readable and writable by `dev`, in an address range of
 * `max_bytes` reserved up front (0: just `bytes`). Destroy with cucore_vmm_buffer_destroy().
 * @retval CUCORE_INVALID_ARGUMENT `bytes` is 0, or `max_bytes` is below `bytes`. */
CUCORE_API cucore_status cucore_vmm_buffer_create(cucore_device *dev, size_t bytes,
                                                  size_t max_bytes, cucore_vmm_buffer **out);
/** Grows the buffer to `bytes`, keeping its address and its contents: new physical memory is
 * mapped after the existing memory, in the reserved range or, past it, in a range reserved right
 * after it. The record of the buffer grows with it. `bytes` not above the current size changes
 * nothing. Not thread-safe for one buffer: grow, destroy and cucore_vmm_buffer_get_address() of the
 * same buffer must not run at once (different buffers may); kernels and copies already using the
 * old range may run during a grow, since the address does not move.
 * @retval CUCORE_DEVICE_OUT_OF_MEMORY no physical memory for the growth, or the addresses
 *         after the reserved range are taken (the message says which, and to reserve more up
 *         front); the buffer is unchanged either way. */
CUCORE_API cucore_status cucore_vmm_buffer_grow(cucore_vmm_buffer *buf, size_t bytes);
/** The buffer's address (the same for its whole life) and size; either may be NULL. */
CUCORE_API cucore_status cucore_vmm_buffer_get_address(const cucore_vmm_buffer *buf,
                                                       cucore_devptr *addr, size_t *bytes);
/** DESTRUCTOR: unmaps and releases the memory and gives back the address ranges. NULL is a
 * no-op.
 * @retval CUCORE_IN_USE textures or DLPack exports still use the buffer (it stays). */
CUCORE_API cucore_status cucore_vmm_buffer_destroy(cucore_vmm_buffer *buf);
/** @} */
/* ==== END SECTION: virtual memory ==== */

/* ------------------------------------------------------------------------------------------ */
/* CUDA arrays, texture objects and surface objects                                           */
/* ------------------------------------------------------------------------------------------ */

/**
 * @defgroup textures Arrays, textures and surfaces
 * CUDA arrays (opaque layouts for texture hardware), texture objects over arrays or over
 * cucore memory (linear or pitched 2D), and surface objects over arrays. Their handles go to
 * kernels with cucore_args_set_texture() / cucore_args_set_surface().
 *
 * Lifetimes: a texture or surface holds its memory. Freeing memory (any cucore free) or
 * destroying an array while a texture or surface made from it exists is refused with
 * CUCORE_IN_USE naming the count: destroy the textures first. Memory cucore did not record is
 * accepted for textures but not tracked (the caller keeps it alive). Thread-safe.
 * @{
 */

/** Element formats of arrays and textures (equal to CUarray_format's). */
typedef enum cucore_array_format {
  CUCORE_FORMAT_U8 = 0x01,   /**< unsigned 8-bit integers */
  CUCORE_FORMAT_U16 = 0x02,  /**< unsigned 16-bit integers */
  CUCORE_FORMAT_U32 = 0x03,  /**< unsigned 32-bit integers */
  CUCORE_FORMAT_S8 = 0x08,   /**< signed 8-bit integers */
  CUCORE_FORMAT_S16 = 0x09,  /**< signed 16-bit integers */
  CUCORE_FORMAT_S32 = 0x0a,  /**< signed 32-bit integers */
  CUCORE_FORMAT_HALF = 0x10, /**< 16-bit floating point */
  CUCORE_FORMAT_FLOAT = 0x20 /**< 32-bit floating point */
} cucore_array_format;

/** Array flags (equal to CUDA_ARRAY3D_*), combined with `|`. */
enum {
  CUCORE_ARRAY_LAYERED = 0x01,       /**< a layered array: `depth` counts layers */
  CUCORE_ARRAY_SURFACE = 0x02,       /**< surface loads and stores are allowed (needed for
                                          cucore_surface_create()) */
  CUCORE_ARRAY_CUBEMAP = 0x04,       /**< six square faces (depth 6) */
  CUCORE_ARRAY_TEXTURE_GATHER = 0x08 /**< 2D texture gather is allowed */
};

/** The shape and element of an array. height 0 makes a 1D array; depth 0 a 1D or 2D one. */
typedef struct cucore_array_desc {
  size_t width;               /**< elements per row (> 0) */
  size_t height;              /**< rows (0 for 1D) */
  size_t depth;               /**< slices or layers (0 for 1D and 2D) */
  cucore_array_format format; /**< element format */
  unsigned channels;          /**< channels per element: 1, 2 or 4 */
  unsigned flags;             /**< CUCORE_ARRAY_* bits */
} cucore_array_desc;

/** CONSTRUCTOR: a CUDA array on `dev` (cuArray3DCreate). Destroy it with cucore_array_destroy()
 * after the textures and surfaces made from it.
 * @retval CUCORE_INVALID_ARGUMENT a format or channel count that does not exist, width 0, or a
 *         depth without a height. */
CUCORE_API cucore_status cucore_array_create(cucore_device *dev, const cucore_array_desc *desc,
                                             cucore_array **out);
/** DESTRUCTOR: destroys the array (cuArrayDestroy). NULL is a no-op.
 * @retval CUCORE_IN_USE textures or surfaces still use it; the array is kept. */
CUCORE_API cucore_status cucore_array_destroy(cucore_array *arr);
/** The array's shape and element, as created. */
CUCORE_API cucore_status cucore_array_get_desc(const cucore_array *arr, cucore_array_desc *out);
/** The native CUarray, still owned by `arr`. */
CUCORE_API cucore_status cucore_array_get_native(const cucore_array *arr, void **cuarray);
/** Copies the whole array from packed or pitched host memory: `src_pitch` bytes between rows
 * (0 for packed rows), rows of a slice next to each other (cuMemcpy3D / cuMemcpy3DAsync on
 * `s`, which may be NULL). `src` must hold at least pitch x height x depth bytes; cucore
 * checks that when it recorded `src`. */
CUCORE_API cucore_status cucore_array_copy_from_host(cucore_array *arr, const void *src,
                                                     size_t src_pitch, cucore_stream *s);
/** Copies the whole array to host memory, as cucore_array_copy_from_host(). */
CUCORE_API cucore_status cucore_array_copy_to_host(cucore_array *arr, void *dst, size_t dst_pitch,
                                                   cucore_stream *s);

/** Address modes. Unlike CUaddress_mode, 0 is clamp, so a zeroed description clamps. */
typedef enum cucore_address_mode {
  CUCORE_ADDRESS_CLAMP = 0,  /**< clamp to the edge */
  CUCORE_ADDRESS_WRAP = 1,   /**< wrap around (normalized coordinates only: refused without
                                  them, where the hardware would clamp) */
  CUCORE_ADDRESS_MIRROR = 2, /**< mirror (normalized coordinates only, likewise) */
  CUCORE_ADDRESS_BORDER = 3  /**< return the border color outside */
} cucore_address_mode;

/** Filter modes (equal to CUfilter_mode's). */
typedef enum cucore_filter_mode {
  CUCORE_FILTER_POINT = 0, /**< nearest element */
  CUCORE_FILTER_LINEAR = 1 /**< linear interpolation (floating-point reads only) */
} cucore_filter_mode;

/** Texture flags (equal to CU_TRSF_*), combined with `|`. */
enum {
  CUCORE_TEXTURE_READ_AS_INTEGER = 0x01,   /**< integer formats read as integers, not
                                               normalized floats */
  CUCORE_TEXTURE_NORMALIZED_COORDS = 0x02, /**< coordinates in [0, 1) instead of elements */
  CUCORE_TEXTURE_SRGB = 0x10,              /**< sRGB to linear conversion */
  CUCORE_TEXTURE_SEAMLESS_CUBEMAP = 0x40   /**< seamless cube map filtering */
};

/** How a texture samples. Zero-initialised: clamp, point, element coordinates, normalized
 * floats for integer formats. */
typedef struct cucore_texture_desc {
  cucore_address_mode address_mode[3]; /**< per dimension (x, y, z); the dimensions the
                                            resource does not have are ignored */
  cucore_filter_mode filter;           /**< point or linear */
  unsigned flags;                      /**< CUCORE_TEXTURE_* bits */
  float border_color[4];               /**< for CUCORE_ADDRESS_BORDER */
  unsigned max_anisotropy;             /**< 0 or 1 for none, up to 16 */
} cucore_texture_desc;

/** A texture object (CUtexObject) and what it holds. */
typedef struct cucore_texture cucore_texture;

/** CONSTRUCTOR: a texture over an array (cuTexObjectCreate). `desc` may be NULL for the
 * defaults. The array cannot be destroyed while the texture exists. */
CUCORE_API cucore_status cucore_texture_create_array(cucore_array *arr,
                                                     const cucore_texture_desc *desc,
                                                     cucore_texture **out);
/** CONSTRUCTOR: a 1D texture over `bytes` of linear device memory at `ptr` (read in kernels with
 * tex1Dfetch). `ptr` must be aligned to the device's texture alignment and `bytes` must be a
 * whole number of elements within the device's linear texture limit; both, and the range
 * against its allocation, are checked first. The memory cannot be freed while the texture
 * exists (when cucore recorded it).
 * @retval CUCORE_OUT_OF_BOUNDS the range runs past its allocation.
 * @retval CUCORE_ARG_ALIGNMENT `ptr` is not aligned to the texture alignment. */
CUCORE_API cucore_status cucore_texture_create_linear(cucore_device *dev, cucore_devptr ptr,
                                                      size_t bytes, cucore_array_format format,
                                                      unsigned channels,
                                                      const cucore_texture_desc *desc,
                                                      cucore_texture **out);
/** CONSTRUCTOR: a 2D texture over `height` rows of `width` elements at `ptr`, rows `pitch` bytes
 * apart (e.g. from cucore_mem_alloc_pitch()). The address must be texture-aligned and the
 * pitch a multiple of the device's texture pitch alignment; checked first, with the footprint
 * against its allocation.
 * @retval CUCORE_OUT_OF_BOUNDS the footprint runs past its allocation.
 * @retval CUCORE_ARG_ALIGNMENT the address or pitch is misaligned. */
CUCORE_API cucore_status cucore_texture_create_pitch2d(cucore_device *dev, cucore_devptr ptr,
                                                       size_t width, size_t height, size_t pitch,
                                                       cucore_array_format format,
                                                       unsigned channels,
                                                       const cucore_texture_desc *desc,
                                                       cucore_texture **out);
/** DESTRUCTOR: destroys the texture object and lets go of its memory. NULL is a no-op. */
CUCORE_API cucore_status cucore_texture_destroy(cucore_texture *tex);
/** The CUtexObject value to pass to kernels (cucore_args_set_texture()). */
CUCORE_API cucore_status cucore_texture_get_handle(const cucore_texture *tex, uint64_t *handle);

/** A surface object (CUsurfObject) over an array. */
typedef struct cucore_surface cucore_surface;

/** CONSTRUCTOR: a surface over an array made with CUCORE_ARRAY_SURFACE (cuSurfObjectCreate).
 * @retval CUCORE_INVALID_ARGUMENT the array lacks CUCORE_ARRAY_SURFACE. */
CUCORE_API cucore_status cucore_surface_create(cucore_array *arr, cucore_surface **out);
/** DESTRUCTOR: destroys the surface object. NULL is a no-op. */
CUCORE_API cucore_status cucore_surface_destroy(cucore_surface *surf);
/** The CUsurfObject value to pass to kernels (cucore_args_set_surface()). */
CUCORE_API cucore_status cucore_surface_get_handle(const cucore_surface *surf, uint64_t *handle);

/** @} */

/* ==== SECTION: mipmapped arrays ==== */
/**
 * @defgroup mipmap Mipmapped arrays
 *
 * A chain of levels of one array, each half the extent of the one before (at least 1; the depth
 * of a layered or cube map array counts layers or faces and stays), made with
 * cuMipmappedArrayCreate. Each level is a cucore array owned by the mipmapped array
 * (cucore_mipmap_get_level()): copy into it with cucore_array_copy_from_host() (checked against
 * the level's own extents), or make a texture or surface over it, as over any array. A texture
 * over the whole chain (cucore_texture_create_mipmap()) samples between levels in kernels with
 * tex1DLod / tex2DLod / tex3DLod. The mipmapped array cannot be destroyed while a texture or
 * surface uses it or one of its levels. Thread-safe as the arrays are.
 * @{
 */

/** A mipmapped array (CUmipmappedArray) and its level arrays. */
typedef struct cucore_mipmap cucore_mipmap;

/** How a texture over a mipmapped array picks levels (CUDA_TEXTURE_DESC's mipmap fields). */
typedef struct cucore_mipmap_sampling {
  cucore_filter_mode filter; /**< between two levels: POINT (nearest) or LINEAR (blend) */
  float level_bias;          /**< added to the level the hardware computes */
  float min_level;           /**< the lowest level used (>= 0) */
  float max_level;           /**< the highest level used (<= levels - 1) */
} cucore_mipmap_sampling;

/** CONSTRUCTOR: a mipmapped array of `levels` levels on `dev`, level 0 described by `desc` (as
 * cucore_array_create()'s, with a width of at least 1). `levels` is 1 to 1 + floor(log2) of the
 * largest extent that shrinks.
 * @retval CUCORE_INVALID_ARGUMENT a level count out of that range (the message gives it), a
 *         description cucore_array_create() refuses, texture gather on a non-2D array.
 * @retval CUCORE_DRIVER_TOO_OLD the driver lacks cuMipmappedArrayCreate. */
CUCORE_API cucore_status cucore_mipmap_create(cucore_device *dev, const cucore_array_desc *desc,
                                              unsigned levels, cucore_mipmap **out);
/** DESTRUCTOR: destroys the mipmapped array and its level arrays (cuMipmappedArrayDestroy).
 * NULL is a no-op.
 * @retval CUCORE_IN_USE textures over it, or textures or surfaces over a level, still exist
 *         (the message names the level); nothing is destroyed. */
CUCORE_API cucore_status cucore_mipmap_destroy(cucore_mipmap *m);
/** The number of levels. */
CUCORE_API cucore_status cucore_mipmap_get_level_count(const cucore_mipmap *m, unsigned *levels);
/** Level `level` (0 .. levels - 1) as an array owned by `m` (valid until
 * cucore_mipmap_destroy(); cucore_array_destroy() refuses it). cucore_array_get_desc() gives
 * its extents.
 * @retval CUCORE_INVALID_ARGUMENT `level` out of range. */
CUCORE_API cucore_status cucore_mipmap_get_level(cucore_mipmap *m, unsigned level,
                                                 cucore_array **out);
/** The native CUmipmappedArray, still owned by `m`. */
CUCORE_API cucore_status cucore_mipmap_get_native(const cucore_mipmap *m, void **cumipmap);
/** CONSTRUCTOR: a texture over the whole chain (resource type MIPMAPPED_ARRAY). `desc` must set
 * CUCORE_TEXTURE_NORMALIZED_COORDS (the driver's rule); `mip` may be NULL for point filtering
 * between levels over all of them. Destroy it with cucore_texture_destroy() before the
 * mipmapped array.
 * @retval CUCORE_INVALID_ARGUMENT no normalized coordinates, a filter that does not exist,
 *         level clamps outside 0 .. levels - 1 or reversed, a bias that is not finite. */
CUCORE_API cucore_status cucore_texture_create_mipmap(cucore_mipmap *m,
                                                      const cucore_texture_desc *desc,
                                                      const cucore_mipmap_sampling *mip,
                                                      cucore_texture **out);
/** @} */
/* ==== END SECTION: mipmapped arrays ==== */

/* ------------------------------------------------------------------------------------------ */
/* Tensor maps for the Tensor Memory Accelerator (TMA, sm_90+)                                */
/* ------------------------------------------------------------------------------------------ */

/**
 * @defgroup tensormap Tensor maps (TMA)
 * Descriptors the Hopper copy engine reads (cp.async.bulk.tensor): a tiled or im2col view of a
 * tensor in global memory. cucore checks every rule the driver documents for
 * cuTensorMapEncodeTiled and cuTensorMapEncodeIm2col, and the tensor's extent against its
 * allocation, before the driver sees them; each failure names the field, the value and the
 * rule. The map is a 128-byte, 64-byte-aligned value passed to kernels by value
 * (`const __grid_constant__ CUtensorMap`) with cucore_args_set_tensor_map().
 *
 * A tensor map holds a raw address: it does not keep the memory alive. Keep the memory until
 * the last kernel using the map has finished.
 * @{
 */

/** Element types of tensor maps (equal to CUtensorMapDataType's). */
typedef enum cucore_tensor_dtype {
  CUCORE_TMAP_UINT8 = 0,          /**< 1 byte */
  CUCORE_TMAP_UINT16 = 1,         /**< 2 bytes */
  CUCORE_TMAP_UINT32 = 2,         /**< 4 bytes */
  CUCORE_TMAP_INT32 = 3,          /**< 4 bytes */
  CUCORE_TMAP_UINT64 = 4,         /**< 8 bytes */
  CUCORE_TMAP_INT64 = 5,          /**< 8 bytes */
  CUCORE_TMAP_FLOAT16 = 6,        /**< 2 bytes */
  CUCORE_TMAP_FLOAT32 = 7,        /**< 4 bytes */
  CUCORE_TMAP_FLOAT64 = 8,        /**< 8 bytes */
  CUCORE_TMAP_BFLOAT16 = 9,       /**< 2 bytes */
  CUCORE_TMAP_FLOAT32_FTZ = 10,   /**< 4 bytes, denormals flushed */
  CUCORE_TMAP_TFLOAT32 = 11,      /**< 4 bytes */
  CUCORE_TMAP_TFLOAT32_FTZ = 12,  /**< 4 bytes, denormals flushed */
  CUCORE_TMAP_16U4_ALIGN8B = 13,  /**< 4-bit values, 16 packed in 8 bytes */
  CUCORE_TMAP_16U4_ALIGN16B = 14, /**< 4-bit values, 16 packed in 8 of every 16 bytes */
  CUCORE_TMAP_16U6_ALIGN16B = 15  /**< 6-bit values, 16 packed in 12 of every 16 bytes */
} cucore_tensor_dtype;

/** Interleaved layouts (equal to CUtensorMapInterleave's). */
typedef enum cucore_tensor_interleave {
  CUCORE_TMAP_INTERLEAVE_NONE = 0, /**< plain layout */
  CUCORE_TMAP_INTERLEAVE_16B = 1,  /**< NC/8HWC8-like: 16-byte channel groups */
  CUCORE_TMAP_INTERLEAVE_32B = 2   /**< NC/16HWC16-like: 32-byte channel groups */
} cucore_tensor_interleave;

/** Shared-memory swizzles (equal to CUtensorMapSwizzle's). */
typedef enum cucore_tensor_swizzle {
  CUCORE_TMAP_SWIZZLE_NONE = 0,                  /**< no swizzle */
  CUCORE_TMAP_SWIZZLE_32B = 1,                   /**< 16B chunks within a 32B span */
  CUCORE_TMAP_SWIZZLE_64B = 2,                   /**< 16B chunks within a 64B span */
  CUCORE_TMAP_SWIZZLE_128B = 3,                  /**< 16B chunks within a 128B span */
  CUCORE_TMAP_SWIZZLE_128B_ATOM_32B = 4,         /**< 32B chunks within a 128B span */
  CUCORE_TMAP_SWIZZLE_128B_ATOM_32B_FLIP_8B = 5, /**< as ATOM_32B, 8B halves swapped on
                                                      alternate rows */
  CUCORE_TMAP_SWIZZLE_128B_ATOM_64B = 6          /**< 64B chunks within a 128B span */
} cucore_tensor_swizzle;

/** L2 promotion sizes (equal to CUtensorMapL2promotion's). */
typedef enum cucore_tensor_l2 {
  CUCORE_TMAP_L2_NONE = 0, /**< no promotion */
  CUCORE_TMAP_L2_64B = 1,  /**< 64-byte L2 fills */
  CUCORE_TMAP_L2_128B = 2, /**< 128-byte L2 fills */
  CUCORE_TMAP_L2_256B = 3  /**< 256-byte L2 fills */
} cucore_tensor_l2;

/** What out-of-bounds elements read as (equal to CUtensorMapFloatOOBfill's). */
typedef enum cucore_tensor_oob {
  CUCORE_TMAP_OOB_ZERO = 0,                /**< zeros */
  CUCORE_TMAP_OOB_NAN_REQUEST_ZERO_FMA = 1 /**< a NaN that FMAs treat as zero (floating-point
                                                types only) */
} cucore_tensor_oob;

/** A tensor in global memory and the box the copy engine moves, as the driver takes them.
 * Dimension 0 is the innermost (contiguous) one. Zero-initialise, then fill. */
typedef struct cucore_tensor_map_desc {
  cucore_tensor_dtype dtype; /**< element type */
  unsigned rank;             /**< dimensions: 1..5 (3..5 for im2col and interleaved maps) */
  cucore_devptr address;     /**< start of the tensor (16-byte aligned; 32 for INTERLEAVE_32B
                                    and the 16-byte-aligned packed types) */
  uint64_t dims[5];          /**< elements per dimension (1 .. 2^32) */
  /** Bytes from one index to the next of dimensions 1 .. rank-1 (strides[0] is dimension 1's).
   * Multiples of 16 (32 for INTERLEAVE_32B and the 16-byte-aligned packed types), below
   * 2^40; strides[0] at least dims[0] elements. */
  uint64_t strides[4];
  uint32_t box[5];                     /**< tiled maps: elements per dimension of the box (1..256);
                                    box[0] times the element size a multiple of 16 bytes
                                    without interleave, and within the swizzle span */
  uint32_t element_strides[5];         /**< step per dimension, 1..8 (0 is taken as 1) */
  cucore_tensor_interleave interleave; /**< interleaved layout */
  cucore_tensor_swizzle swizzle;       /**< shared-memory swizzle */
  cucore_tensor_l2 l2_promotion;       /**< L2 promotion */
  cucore_tensor_oob oob_fill;          /**< out-of-bounds fill */
  /** im2col maps: the box's lower corner offsets {D, H, W} (rank - 2 of them from entry 0:
   * one in [-32768, 32767] for rank 3, two in [-128, 127] for rank 4, three in [-16, 15] for
   * rank 5). */
  int lower_corner[3];
  int upper_corner[3];         /**< im2col maps: the upper corner offsets, same ranges */
  uint32_t channels_per_pixel; /**< im2col maps: elements along C (1..256) */
  uint32_t pixels_per_column;  /**< im2col maps: elements along N, D, H, W (1..1024; ignored by
                                    wide maps in W128 mode) */
  /** Wide im2col maps: how elements are loaded along W (0: W, `pixels_per_column` of them;
   * 1: W128). Their box's W offsets are lower_corner[0] and upper_corner[0], each in
   * [-32768, 32767] (the box is one deep along D and H). */
  int wide_mode;
} cucore_tensor_map_desc;

/** @cond CUCORE_INTERNAL */
#if defined(__cplusplus)
#define CUCORE_ALIGNAS_64 alignas(64)
#else
#define CUCORE_ALIGNAS_64 _Alignas(64)
#endif
/** @endcond */

/** An encoded tensor map (the bytes of a CUtensorMap): 128 bytes aligned to 64, passed to
 * kernels by value with cucore_args_set_tensor_map(). */
typedef struct cucore_tensor_map {
  CUCORE_ALIGNAS_64 uint64_t opaque[16]; /**< the driver's encoding; do not touch */
} cucore_tensor_map;

/** The two kinds of tensor map. */
typedef enum cucore_tensor_map_kind {
  CUCORE_TMAP_TILED = 0,      /**< cuTensorMapEncodeTiled: a box of the tensor */
  CUCORE_TMAP_IM2COL = 1,     /**< cuTensorMapEncodeIm2col: im2col patches for convolutions */
  CUCORE_TMAP_IM2COL_WIDE = 2 /**< cuTensorMapEncodeIm2colWide: im2col rows loaded along W
                                   only (CUDA 12.8, devices of compute capability 10.0+) */
} cucore_tensor_map_kind;

/** Checks a description against the driver's documented rules without encoding it (no GPU
 * needed): the first broken rule is the error, naming the field and its value. The extent
 * against the allocation is checked too when cucore recorded `address`.
 * @retval CUCORE_ARG_ALIGNMENT the address or a stride breaks its alignment rule.
 * @retval CUCORE_OUT_OF_BOUNDS the tensor runs past the end of its allocation. */
CUCORE_API cucore_status cucore_tensor_map_check(cucore_tensor_map_kind kind,
                                                 const cucore_tensor_map_desc *desc);
/** Encodes a tiled tensor map (cuTensorMapEncodeTiled) after cucore_tensor_map_check().
 * Needs a device of compute capability 9.0 or higher to use. */
CUCORE_API cucore_status cucore_tensor_map_encode_tiled(const cucore_tensor_map_desc *desc,
                                                        cucore_tensor_map *out);
/** Encodes an im2col tensor map (cuTensorMapEncodeIm2col) after cucore_tensor_map_check(). */
CUCORE_API cucore_status cucore_tensor_map_encode_im2col(const cucore_tensor_map_desc *desc,
                                                         cucore_tensor_map *out);

/** Encodes a wide im2col tensor map (cuTensorMapEncodeIm2colWide: NWC, NHWC or NDHWC tensors
 * whose rows are loaded along W) after cucore_tensor_map_check(CUCORE_TMAP_IM2COL_WIDE): rank
 * 3..5, the W offsets in lower_corner[0] and upper_corner[0] within [-32768, 32767] and a box of
 * non-zero width, `wide_mode` W or W128, swizzle 64B, 128B or 128B_ATOM_32B, with the other
 * im2col rules.
 * @retval CUCORE_DRIVER_TOO_OLD before CUDA 12.8.
 * @retval CUCORE_NOT_SUPPORTED the current device's compute capability is below 10.0 (named). */
CUCORE_API cucore_status cucore_tensor_map_encode_im2col_wide(const cucore_tensor_map_desc *desc,
                                                              cucore_tensor_map *out);
/** Points an encoded map at another tensor of the same shape (cuTensorMapReplaceAddress):
 * `desc` is the description `map` was encoded from, as `kind`; `address` is checked as its
 * address would be (alignment for its type and interleave, and the tensor's extent against
 * the allocation there), and only then written into `map`. A refusal leaves `map` as it was.
 * @retval CUCORE_ARG_ALIGNMENT `address` breaks the alignment rule.
 * @retval CUCORE_OUT_OF_BOUNDS the tensor at `address` runs past its allocation. */
CUCORE_API cucore_status cucore_tensor_map_replace_address(cucore_tensor_map *map,
                                                           cucore_tensor_map_kind kind,
                                                           const cucore_tensor_map_desc *desc,
                                                           cucore_devptr address);

/** Binds a tensor map to kernel parameter `index` by value (128 bytes): the parameter must be
 * 128 bytes, and 64-byte aligned where the kernel's alignment is known (PTX), as
 * cucore_args_set_i8() checks any argument. Copied at once.
 * @retval CUCORE_ARG_SIZE the parameter is not 128 bytes.
 * @retval CUCORE_ARG_ALIGNMENT the parameter is not declared 64-byte aligned. */
CUCORE_API cucore_status cucore_args_set_tensor_map(struct cucore_args *args, int index,
                                                    const cucore_tensor_map *map);
/** cucore_args_set_tensor_map() at the next index. */
CUCORE_API cucore_status cucore_args_push_tensor_map(struct cucore_args *args,
                                                     const cucore_tensor_map *map);

/** @} */

/* ------------------------------------------------------------------------------------------ */
/* DLPack: tensors shared with other libraries                                                */
/* ------------------------------------------------------------------------------------------ */

/**
 * @defgroup dlpack DLPack
 * Export a cucore allocation as a DLManagedTensor (DLPack 0.6, `dlpack/dlpack.h`) or a
 * DLManagedTensorVersioned (DLPack 1.x) for another library (PyTorch, CuPy, JAX...), and import
 * one made by another library. This header does not include dlpack.h: tensors are passed as
 * `void *` pointing to a DLManagedTensor or DLManagedTensorVersioned, as each call says.
 *
 * Ownership, export: the DLManagedTensor and its shape and strides belong to cucore until the
 * consumer calls its deleter (exactly once), which frees them. Without flags the allocation
 * stays the caller's: it must outlive the tensor, and freeing it while the tensor exists is
 * refused (CUCORE_IN_USE). With CUCORE_DLPACK_TRANSFER the tensor owns the allocation: cucore's
 * frees refuse it, and the deleter frees it (device memory with cuMemFree in its context, a
 * pinned-pool block back to its pool, pinned memory with cuMemFreeHost; a device pool's
 * allocation with cuMemFree, so the consumer must have finished with it). A tensor never
 * handed to a consumer is released by calling its deleter yourself.
 *
 * Ownership, import: cucore_dlpack_import() takes the DLManagedTensor: the import handle keeps
 * it alive, its range is recorded (so copies are bounds-checked) unless it lies in memory
 * cucore already recorded, and cucore_dlpack_release() calls its deleter (once; NULL deleters
 * are skipped). If the import fails, the tensor stays the caller's.
 *
 * DLPack 1.x: cucore_dlpack_export_versioned() and cucore_dlpack_import_versioned() do the same
 * with a DLManagedTensorVersioned (DLPack 1.0's struct: a version, the owner, the deleter, a
 * flags word, then the same DLTensor). cucore writes version 1.1 (it uses nothing newer than
 * 1.0) and reads any 1.x; a higher major version is refused, naming both. Its flags carry
 * read-only (CUCORE_DLPACK_READ_ONLY on export; on import reported by
 * cucore_dlpack_is_read_only(), and an imported read-only range outside cucore's allocations
 * refuses cucore's copies and fills into it) and "is a copy" (CUCORE_DLPACK_COPIED).
 * cucore_dlpack_export_max_version() chooses for a consumer that says the newest version it
 * reads: major 0 gets the legacy DLManagedTensor, major 1 or above a versioned one. The 0.x
 * calls are unchanged for old consumers; the legacy struct has no flags, so a read-only export
 * for a 0.x consumer is refused rather than made writable.
 *
 * Python (the array API's `__dlpack__` protocol) passes these in capsules; a C extension wraps
 * them so:
 * - export, versioned (the consumer called `__dlpack__(max_version=(1, 0))` or newer):
 *   `PyCapsule_New(tensor, "dltensor_versioned", destructor)`, where the destructor calls the
 *   tensor's deleter only if the capsule is still named "dltensor_versioned" (a consumer that
 *   took the tensor renamed it "used_dltensor_versioned" and calls the deleter itself);
 * - export, legacy (no max_version, or major 0): the same with "dltensor" and "used_dltensor";
 * - import: `PyCapsule_GetPointer(capsule, "dltensor_versioned")` (or "dltensor") to
 *   cucore_dlpack_import_versioned() (or cucore_dlpack_import()); on success rename the capsule
 *   to "used_dltensor_versioned" (or "used_dltensor") with `PyCapsule_SetName`, so its
 *   destructor leaves the tensor to cucore_dlpack_release(). On failure leave the name: the
 *   capsule's destructor calls the producer's deleter.
 * `tests/dlpack_peers.py` does this with ctypes against PyTorch and CuPy. libcucore keeps its
 * thread-local state in initial-exec TLS, which glibc may refuse to a library dlopened into a
 * running process ("cannot allocate memory in static TLS block": seen with Python 3.11 on
 * glibc 2.36): load it at start (LD_PRELOAD) or raise glibc.rtld.optional_static_tls
 * (GLIBC_TUNABLES) for an extension or ctypes.
 * @{
 */

/** Most dimensions cucore takes in a tensor description. */
#define CUCORE_TENSOR_MAX_DIMS 16

/** Type codes of cucore_dtype (equal to DLDataTypeCode's; BOOL is DLPack 0.8's). */
enum {
  CUCORE_DTYPE_INT = 0,     /**< signed integer */
  CUCORE_DTYPE_UINT = 1,    /**< unsigned integer */
  CUCORE_DTYPE_FLOAT = 2,   /**< IEEE floating point */
  CUCORE_DTYPE_OPAQUE = 3,  /**< opaque handle */
  CUCORE_DTYPE_BFLOAT = 4,  /**< bfloat16 */
  CUCORE_DTYPE_COMPLEX = 5, /**< complex (two floats of bits/2 each) */
  CUCORE_DTYPE_BOOL = 6     /**< boolean */
};

/** An element type, laid out as DLDataType. */
typedef struct cucore_dtype {
  uint8_t code;   /**< CUCORE_DTYPE_* */
  uint8_t bits;   /**< bits per lane: 8, 16, 32, 64 (1 for bool too), 128 for complex128 */
  uint16_t lanes; /**< lanes per element (1 for scalars) */
} cucore_dtype;

/** A strided tensor over memory. */
typedef struct cucore_tensor_desc {
  int ndim;                              /**< dimensions, 0 (a scalar) .. CUCORE_TENSOR_MAX_DIMS */
  int64_t shape[CUCORE_TENSOR_MAX_DIMS]; /**< elements per dimension (>= 0) */
  /** Elements (not bytes) between consecutive indices of each dimension, may be negative;
   * ignored when `compact` is 1. */
  int64_t strides[CUCORE_TENSOR_MAX_DIMS];
  int compact;          /**< 1: compact row-major, strides not given */
  cucore_dtype dtype;   /**< element type */
  uint64_t byte_offset; /**< bytes from the address to element 0 */
} cucore_tensor_desc;

/** The bytes a tensor touches, relative to its address: from *lo (the lowest byte, may be
 * below byte_offset with negative strides) to *hi (one past the highest). A tensor with a zero
 * dimension touches nothing (*lo = *hi = byte_offset). Pure.
 * @retval CUCORE_INVALID_ARGUMENT ndim out of range, a negative shape, a zero-bit dtype, or
 *         arithmetic that overflows 64 bits. */
CUCORE_API cucore_status cucore_tensor_extent(const cucore_tensor_desc *t, int64_t *lo,
                                              int64_t *hi);

/** Flags of cucore_dlpack_export() and the versioned exports. */
enum {
  /** The tensor takes over the allocation: its deleter frees it, cucore's frees refuse it. */
  CUCORE_DLPACK_TRANSFER = 1,
  /** Versioned exports only: the consumer must not write the data (DLPack's
   * DLPACK_FLAG_BITMASK_READ_ONLY). */
  CUCORE_DLPACK_READ_ONLY = 2,
  /** Versioned exports only: the data is a copy made for this consumer (DLPack's
   * DLPACK_FLAG_BITMASK_IS_COPIED), as Python's `__dlpack__(copy=True)` asks. */
  CUCORE_DLPACK_COPIED = 4
};

/** The bits of a versioned tensor's flags word (DLPACK_FLAG_BITMASK_*; cucore_dlpack_get_flags()):
 * read-only data. */
#define CUCORE_DLPACK_FLAG_READ_ONLY (1ull << 0)
/** A flags bit: the producer copied the data for the consumer. */
#define CUCORE_DLPACK_FLAG_IS_COPIED (1ull << 1)
/** A flags bit (DLPack 1.1): sub-byte elements are padded to a byte each. */
#define CUCORE_DLPACK_FLAG_IS_SUBBYTE_TYPE_PADDED (1ull << 2)

/** A DLPack ABI version, laid out as DLPackVersion. */
typedef struct cucore_dlpack_version {
  uint32_t major; /**< incompatible changes: a reader refuses a major version it does not know */
  uint32_t minor; /**< additions only (flags, codes) */
} cucore_dlpack_version;

/** Exports `t` over the cucore allocation containing `ptr` as a new DLManagedTensor (written to
 * *managed_tensor as a `DLManagedTensor *`). The tensor's extent must lie within the
 * allocation. The device is kDLCUDA (device, pitched, pooled, IPC-imported memory),
 * kDLCUDAManaged or kDLCUDAHost (pinned, pinned-pool, registered) with the allocation's device.
 * @retval CUCORE_INVALID_ARGUMENT `ptr` is not in a live cucore allocation, or the description
 *         is malformed.
 * @retval CUCORE_OUT_OF_BOUNDS the tensor runs past the end of the allocation.
 * @retval CUCORE_IN_USE TRANSFER of an allocation that textures or other exports use. */
CUCORE_API cucore_status cucore_dlpack_export(cucore_devptr ptr, const cucore_tensor_desc *t,
                                              unsigned flags, void **managed_tensor);

/** The same export as a DLManagedTensorVersioned (written to *managed_tensor as a
 * `DLManagedTensorVersioned *`): version 1.1, flags READ_ONLY and IS_COPIED as `flags` asks,
 * the same device, checks, ownership and deleter rules as cucore_dlpack_export().
 * @retval CUCORE_INVALID_ARGUMENT as cucore_dlpack_export(), or unknown flags.
 * @retval CUCORE_OUT_OF_BOUNDS the tensor runs past the end of the allocation.
 * @retval CUCORE_IN_USE TRANSFER of an allocation that textures or other exports use. */
CUCORE_API cucore_status cucore_dlpack_export_versioned(cucore_devptr ptr,
                                                        const cucore_tensor_desc *t, unsigned flags,
                                                        void **managed_tensor);

/** Version negotiation: exports for a consumer whose newest readable DLPack version is
 * `max_version`. Major 0: a legacy DLManagedTensor (as cucore_dlpack_export()); major 1 or more:
 * a DLManagedTensorVersioned (as cucore_dlpack_export_versioned(), its version 1.1, or 1.0
 * when the consumer reads 1.0 only). *made (may be NULL) gets the version made: {0, 0} for the
 * legacy struct, whose DLPack version the struct does not carry.
 * @retval CUCORE_INVALID_ARGUMENT as the export made, or READ_ONLY or COPIED for a major-0
 *         consumer (the legacy struct cannot carry them), naming the version asked for. */
CUCORE_API cucore_status cucore_dlpack_export_max_version(
    cucore_devptr ptr, const cucore_tensor_desc *t, unsigned flags,
    cucore_dlpack_version max_version, void **managed_tensor, cucore_dlpack_version *made);

/** A DLPack tensor of another library, held by cucore (cucore_dlpack_import()). */
typedef struct cucore_dlpack_tensor cucore_dlpack_tensor;

/** What an imported tensor is (cucore_dlpack_get_tensor_info()). */
typedef struct cucore_dlpack_info {
  cucore_devptr data;      /**< the tensor's data pointer (element 0 is at data +
                                desc.byte_offset) */
  int device_type;         /**< DLDeviceType value: 1 CPU, 2 CUDA, 3 CUDA host, 13 CUDA
                                managed */
  int device_id;           /**< the DLPack device id (the CUDA ordinal for CUDA devices) */
  cucore_tensor_desc desc; /**< shape, strides (filled in: compact is 0 after import), dtype */
  uint64_t span_bytes;     /**< bytes from the lowest to one past the highest byte touched */
} cucore_dlpack_info;

/** CONSTRUCTOR: takes a `DLManagedTensor *` made by another library and holds it. The tensor is
 * checked: a known device type (CPU, CUDA, CUDA host, CUDA managed), ndim within
 * CUCORE_TENSOR_MAX_DIMS, non-negative shape, a dtype of non-zero bits, an extent that does
 * not overflow. Release it with cucore_dlpack_release().
 * @retval CUCORE_NOT_SUPPORTED a device type cucore cannot use (OpenCL, ROCm, ...).
 * @retval CUCORE_OUT_OF_BOUNDS the tensor lies partly in a cucore allocation and runs past it. */
CUCORE_API cucore_status cucore_dlpack_import(void *managed_tensor, cucore_dlpack_tensor **out);
/** CONSTRUCTOR: takes a `DLManagedTensorVersioned *` (DLPack 1.x) and holds it, with the checks
 * of cucore_dlpack_import(). Any 1.x version is read; the flags are kept
 * (cucore_dlpack_get_flags()). A read-only tensor whose range lies outside cucore's
 * allocations is recorded read-only: cucore's copies (1D, 2D, 3D, peer), fills and graph copy
 * and fill nodes with a destination in it are refused (CUCORE_INVALID_ARGUMENT naming the flag);
 * kernels are not checked, and one inside a cucore allocation is reported by
 * cucore_dlpack_is_read_only() only. cucore_dlpack_release() calls its deleter once (a NULL
 * deleter, which DLPack allows, is skipped). If the import fails, the tensor stays the caller's.
 * @retval CUCORE_VERSION_MISMATCH a major version other than 1 (a newer one, named with 1.1,
 *         the newest cucore reads; or 0, which no versioned tensor has).
 * @retval CUCORE_NOT_SUPPORTED a device type cucore cannot use.
 * @retval CUCORE_OUT_OF_BOUNDS the tensor lies partly in a cucore allocation and runs past it. */
CUCORE_API cucore_status cucore_dlpack_import_versioned(void *managed_tensor,
                                                        cucore_dlpack_tensor **out);
/** Describes an imported tensor. */
CUCORE_API cucore_status cucore_dlpack_get_tensor_info(const cucore_dlpack_tensor *t,
                                                       cucore_dlpack_info *out);
/** The DLPack version of an imported tensor: the versioned tensor's own, {0, 0} for a legacy
 * DLManagedTensor (cucore_dlpack_import()). */
CUCORE_API cucore_status cucore_dlpack_get_version(const cucore_dlpack_tensor *t,
                                                   cucore_dlpack_version *out);
/** The flags word of an imported versioned tensor (CUCORE_DLPACK_FLAG_* bits, unknown bits
 * kept as given); 0 for a legacy DLManagedTensor. */
CUCORE_API cucore_status cucore_dlpack_get_flags(const cucore_dlpack_tensor *t, uint64_t *out);
/** *out = 1 when an imported tensor is read-only (the versioned tensor's READ_ONLY flag), else
 * 0. */
CUCORE_API cucore_status cucore_dlpack_is_read_only(const cucore_dlpack_tensor *t, int *out);
/** DESTRUCTOR: forgets the recorded range and calls the tensor's deleter. NULL is a no-op.
 * @retval CUCORE_IN_USE a texture still uses the range; the tensor is kept. */
CUCORE_API cucore_status cucore_dlpack_release(cucore_dlpack_tensor *t);

/** @} */

/* ------------------------------------------------------------------------------------------ */
/* Memory resources: allocators a program plugs in                                             */
/* ------------------------------------------------------------------------------------------ */

/**
 * @defgroup memres Memory resources
 * A memory resource is an allocator behind a table of callbacks, the shape of cuda.core's
 * MemoryResource and RMM's device_memory_resource: allocate(bytes, alignment, stream) and
 * deallocate(ptr, bytes, alignment, stream), stream-ordered, with facts (the device the memory
 * belongs to, whether the device and the host can access it, pinned, managed). A program wraps
 * its own allocator (an RMM-like pool) with cucore_mem_resource_create(); cucore's own
 * allocators are resources too: a stream-ordered pool (cucore_mem_resource_from_pool()), a
 * pinned host pool (cucore_mem_resource_from_host_pool()) and virtual memory mapped per
 * allocation (cucore_mem_resource_vmm()).
 *
 * Installed as a device's default (cucore_device_set_mem_resource()), a resource serves every
 * device allocation cucore makes on that device: cucore_mem_alloc() (stream NULL) and
 * cucore_mem_alloc_async() (its stream), and through them the tune's buffers. Memory from a
 * resource is recorded like any other (kind CUCORE_MEM_RESOURCE): copies and fills are
 * bounds-checked against it, cucore_pointer_get_facts() knows it, DLPack exports it (as
 * kDLCUDA, kDLCUDAHost or kDLCUDAManaged from the resource's facts), and cucore_mem_free() or
 * cucore_mem_free_async() gives it back through the resource's deallocate with the size asked
 * for, the alignment and the stream of the free (NULL for cucore_mem_free()). A DLPack
 * consumer that took it over (CUCORE_DLPACK_TRANSFER) gives it back the same way, stream NULL.
 *
 * Not routed: cucore_mem_alloc_pitch() and cucore_mem_alloc_managed() (their driver calls
 * shape the memory), pools used explicitly (cucore_mem_pool_alloc_async()), and graph
 * allocation nodes (cucore_graph_add_mem_alloc_node()): the driver allocates those from its
 * graph memory pool when the graph is launched, and no callback can run there. A stream
 * capture that calls cucore_mem_alloc_async() runs the resource's allocate once, at capture
 * time, as RMM does; the memory is not a graph allocation.
 *
 * What cucore checks of what a resource returns: a failure or 0 is
 * CUCORE_DEVICE_OUT_OF_MEMORY (CUCORE_HOST_OUT_OF_MEMORY for a host resource), or the
 * resource's own failure status, naming the resource; an address not a multiple of the
 * alignment asked for, and memory the driver places on another device than the resource's, are
 * refused by name (the memory is given back first). The device is asked of the driver once per
 * driver allocation (one cuPointerGetAttribute); later addresses inside the same driver
 * allocation (a pool's slab) are not asked again.
 *
 * Lifetime: a resource is destroyed with cucore_mem_resource_destroy(), which is refused while
 * it is installed on a device or has live allocations. A call that started before the resource
 * was uninstalled may still be using it: destroy it only once such calls have returned (as
 * with any handle another thread uses). The objects a built-in resource wraps (the pool, the
 * device) must outlive it. Callbacks may run on any thread at once; they must be thread-safe
 * as the allocator they wrap is. Callbacks may call cucore, but an allocate that asks cucore to
 * allocate from the same resource again (cucore_mem_alloc() on the device it is installed on)
 * is refused with CUCORE_INVALID_ARGUMENT; a program's own allocator takes its memory from the
 * driver or another library, not from cucore's recorded allocations, since cucore records each
 * range it hands out once.
 * @{
 */

/** A memory resource: create with cucore_mem_resource_create() (a program's allocator) or a
 * cucore_mem_resource_from_* call; destroy with cucore_mem_resource_destroy(). */
typedef struct cucore_mem_resource cucore_mem_resource;

/** Facts about a resource's memory (cucore_mem_resource_props::flags), combined with `|`. */
enum {
  CUCORE_MR_DEVICE_ACCESSIBLE = 1, /**< kernels of its device can access it */
  CUCORE_MR_HOST_ACCESSIBLE = 2,   /**< the host can read and write it */
  CUCORE_MR_PINNED = 4,            /**< page-locked host memory */
  CUCORE_MR_MANAGED = 8            /**< managed (unified) memory */
};

/** The alignment cucore asks a resource for when the caller names none: 256 bytes, what
 * cuMemAlloc guarantees (CUDA's allocation alignment, RMM's default). */
#define CUCORE_MR_DEFAULT_ALIGNMENT 256

/** A resource's callbacks. `user` is the pointer given to cucore_mem_resource_create(). */
typedef struct cucore_mem_resource_ops {
  /** Allocates `bytes` (> 0) aligned to `alignment` (a power of two) in stream order on
   * `stream` (NULL: the legacy default stream; the memory must be usable at once, as
   * cuMemAlloc's). Sets *out and returns CUCORE_OK, or returns a failure status (or leaves
   * *out 0), which cucore reports naming the resource. Required. */
  cucore_status (*allocate)(void *user, size_t bytes, size_t alignment, cucore_stream *stream,
                            cucore_devptr *out);
  /** Gives back what allocate returned for `bytes` and `alignment`, in stream order on
   * `stream` (NULL: the legacy default stream). A failure is reported to the caller of the
   * free; cucore forgets the allocation either way. Required. */
  cucore_status (*deallocate)(void *user, cucore_devptr ptr, size_t bytes, size_t alignment,
                              cucore_stream *stream);
  /** Called once by cucore_mem_resource_destroy() to free `user`; may be NULL. */
  void (*destroy)(void *user);
} cucore_mem_resource_ops;

/** What a resource's memory is. Zero-initialise and set what you need. */
typedef struct cucore_mem_resource_props {
  /** The ordinal of the device the memory belongs to; -1 for host memory of no device. */
  int device;
  /** CUCORE_MR_* facts; 0 is read as CUCORE_MR_DEVICE_ACCESSIBLE for a device (>= 0) and
   * CUCORE_MR_HOST_ACCESSIBLE for the host (-1). */
  unsigned flags;
  /** A name for messages (copied); NULL is "a memory resource". */
  const char *name;
} cucore_mem_resource_props;

/** Allocations and bytes a resource has live through cucore (cucore_mem_resource_get_stats). */
typedef struct cucore_mem_resource_stats {
  uint64_t live_allocations; /**< allocations cucore recorded and has not given back yet */
  uint64_t live_bytes;       /**< their bytes as asked for */
} cucore_mem_resource_stats;

/** CONSTRUCTOR: a resource over a program's allocator. `ops` and `props` are copied (the name
 * too); `user` is passed to every callback. Destroy with cucore_mem_resource_destroy().
 * @retval CUCORE_INVALID_ARGUMENT allocate or deallocate is NULL, the device is below -1,
 *         unknown flags, or a host resource (-1) said to be device-accessible without being
 *         pinned or managed. */
CUCORE_API cucore_status cucore_mem_resource_create(const cucore_mem_resource_ops *ops, void *user,
                                                    const cucore_mem_resource_props *props,
                                                    cucore_mem_resource **out);
/** CONSTRUCTOR: a resource over a stream-ordered pool (cuMemAllocFromPoolAsync and
 * cuMemFreeAsync; stream NULL allocates on the legacy stream and waits for it). Its facts are
 * the pool's: memory of the pool's device, and host-accessible pinned memory for a pool made
 * with CUCORE_POOL_PINNED_HOST or host-accessible managed memory for CUCORE_POOL_MANAGED. The
 * pool must outlive the resource. An imported pool cannot allocate and is refused. */
CUCORE_API cucore_status cucore_mem_resource_from_pool(cucore_mem_pool *pool,
                                                       cucore_mem_resource **out);
/** CONSTRUCTOR: a resource over a pinned host pool (cucore_host_pool_alloc and _free; the
 * stream is not used: pinned blocks are ready at once). Facts: host memory (device -1),
 * host- and device-accessible, pinned. The pool records its blocks itself (kind
 * CUCORE_MEM_PINNED_POOL), so they are given back with cucore_mem_resource_deallocate() or
 * cucore_host_pool_free(), and such a resource cannot be a device's default
 * (cucore_device_set_mem_resource() refuses it by name). The pool must outlive the resource. */
CUCORE_API cucore_status cucore_mem_resource_from_host_pool(cucore_host_pool *pool,
                                                            cucore_mem_resource **out);
/** CONSTRUCTOR: a resource of virtual memory on `dev`, one mapping per allocation: allocate
 * reserves an address range, creates physical memory rounded up to the device's granularity,
 * maps it read-write for `dev`; deallocate unmaps it and gives both back at once (the stream
 * is waited for first). Each allocation is its own physical memory, so a free returns memory to
 * the device at once and nothing fragments; a cucore_vmm_buffer (one growable range) is a
 * buffer, not an allocator. Costs a few driver calls per allocation: for large, long-lived
 * buffers. `dev` must outlive the resource.
 * @retval CUCORE_DRIVER_TOO_OLD the driver has no virtual memory calls (CUDA 10.2). */
CUCORE_API cucore_status cucore_mem_resource_vmm(cucore_device *dev, cucore_mem_resource **out);
/** DESTRUCTOR: destroys a resource and calls its destroy callback. NULL is a no-op.
 * @retval CUCORE_IN_USE it is installed on a device, or has live allocations (the message
 *         counts them); the resource is kept. */
CUCORE_API cucore_status cucore_mem_resource_destroy(cucore_mem_resource *res);

/** Allocates `bytes` (> 0) from `res` on `stream` (NULL: the legacy default stream) with
 * alignment CUCORE_MR_DEFAULT_ALIGNMENT, checked and recorded as the installed resource's
 * allocations are; *out is 0 on failure. `dev` is the device the allocation is for: the
 * resource's own device (or any device for a host resource), and the stream's device. */
CUCORE_API cucore_status cucore_mem_resource_allocate(cucore_mem_resource *res, cucore_device *dev,
                                                      cucore_stream *stream, size_t bytes,
                                                      cucore_devptr *out);
/** Gives back an allocation of `res` on `stream` (NULL: the legacy default stream). 0 is a
 * no-op.
 * @retval CUCORE_INVALID_ARGUMENT it did not come from `res` (the message says what it is). */
CUCORE_API cucore_status cucore_mem_resource_deallocate(cucore_mem_resource *res,
                                                        cucore_stream *stream, cucore_devptr ptr);
/** The ordinal of the device a resource's memory belongs to; -1 for host memory. */
CUCORE_API cucore_status cucore_mem_resource_get_device(const cucore_mem_resource *res,
                                                        int *device);
/** The resource's CUCORE_MR_* facts. */
CUCORE_API cucore_status cucore_mem_resource_get_flags(const cucore_mem_resource *res,
                                                       unsigned *flags);
/** The resource's name (static while it lives). */
CUCORE_API cucore_status cucore_mem_resource_get_name(const cucore_mem_resource *res,
                                                      const char **name);
/** The live allocations and bytes cucore handed out from `res` (a walk of the record: cold). */
CUCORE_API cucore_status cucore_mem_resource_get_stats(const cucore_mem_resource *res,
                                                       cucore_mem_resource_stats *out);

/** Installs `res` as the default resource of `dev`'s device (by ordinal: every handle of the
 * device sees it), or restores cucore's default (cuMemAlloc and cuMemAllocAsync on the device's
 * current pool) with NULL. Allocations made before keep the resource they came from and are
 * given back to it. Takes effect for calls that start afterwards, on every thread.
 * @retval CUCORE_INVALID_ARGUMENT the resource is of another device, not device-accessible, or
 *         records its blocks itself (a pinned host pool). */
CUCORE_API cucore_status cucore_device_set_mem_resource(cucore_device *dev,
                                                        cucore_mem_resource *res);
/** The resource installed on `dev`'s device; *res is NULL for cucore's default. */
CUCORE_API cucore_status cucore_device_get_mem_resource(cucore_device *dev,
                                                        cucore_mem_resource **res);

/** @} */

#ifdef __cplusplus
}
#endif
#endif /* CUCORE_PART_MEMORY_H */
