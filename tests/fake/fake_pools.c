/* fake_pools.c -- the fake driver's stream-ordered pools (part of libcucore_fake_driver; looked
 * up by fake_driver.c's fake_extra_symbol, so CUCORE_FAKE_HIDE hides them as an older driver
 * would): cuMemPoolCreate with the driver's documented rules for locations (a device of the
 * fake's; HOST, whose pools take no shareable handle types; HOST_NUMA with node 0, the fake
 * host's only node; HOST_NUMA_CURRENT refused) and the managed allocation type (from
 * CUCORE_FAKE_DRIVER_VERSION 13000 on, the default; location NONE, DEVICE, HOST or HOST_NUMA;
 * no handle types), destroy, allocation from a pool (host memory underneath: copies and host
 * reads really move bytes), attributes with their counters (used and reserved bytes and their
 * high-water marks; a reset sets a mark to the current value), trimming, access per device,
 * POSIX descriptor export, each device's default and current pool (cuDeviceSetMemPool takes a
 * pool of that device only) and the device's graph memory counters (used 1 MiB, reserved 4 MiB,
 * highs 3 and 6 MiB until reset; a trim gives back what is not used). Allocations by
 * cuMemAllocAsync count on the device's current pool (fake_pools_note, called by
 * fake_driver.c), frees by cuMemFreeAsync are taken off their pool. Not counted as calls.
 * CUCORE_FAKE_NO_POOLS=1 hides every entry point here. */
#define _GNU_SOURCE
#include <cuda.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

typedef struct fake_pool {
  CUmemPoolProps props;
  cuuint64_t threshold, reserved, reserved_high, used, used_high;
  int reuse[3];                /* follow events, opportunistic, internal dependencies */
  CUmemAccess_flags access[2]; /* devices 0 and 1 */
  int is_default;
} fake_pool;

/* A live allocation of a pool (a short list: tests make few). */
typedef struct fake_block {
  CUdeviceptr p;
  size_t bytes;
  fake_pool *pool;
  struct fake_block *next;
} fake_block;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static fake_pool defaults[2];
static fake_pool *current[2];
static fake_block *blocks;
static cuuint64_t graph_mem[4] = {1u << 20, 3u << 20, 4u << 20, 6u << 20};

static int version(void) {
  const char *v = getenv("CUCORE_FAKE_DRIVER_VERSION");
  return v && *v ? atoi(v) : 13000;
}
static int devices(void) {
  const char *v = getenv("CUCORE_FAKE_DEVICES");
  return v && *v == '2' ? 2 : 1;
}

/* The device's default pool, made on first use (the lock held). */
static fake_pool *default_of(CUdevice d) {
  fake_pool *p = &defaults[d];
  if (!p->is_default) {
    p->is_default = 1;
    p->props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    p->props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    p->props.location.id = d;
    p->reuse[0] = p->reuse[1] = p->reuse[2] = 1;
    p->access[d] = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  }
  return p;
}

static int location_ok(const CUmemPoolProps *pp) {
  int managed = pp->allocType == CU_MEM_ALLOCATION_TYPE_MANAGED;
  switch (pp->location.type) {
  case CU_MEM_LOCATION_TYPE_DEVICE: return pp->location.id >= 0 && pp->location.id < devices();
  case CU_MEM_LOCATION_TYPE_HOST: return pp->handleTypes == CU_MEM_HANDLE_TYPE_NONE;
  case CU_MEM_LOCATION_TYPE_HOST_NUMA: return pp->location.id == 0;
  case CU_MEM_LOCATION_TYPE_NONE: return managed;
  default: return 0;
  }
}

static CUresult fake_cuMemPoolCreate(CUmemoryPool *out, const CUmemPoolProps *pp) {
  if (!out || !pp) return CUDA_ERROR_INVALID_VALUE;
  int managed = pp->allocType == CU_MEM_ALLOCATION_TYPE_MANAGED;
  if (managed && (version() < 13000 || pp->handleTypes != CU_MEM_HANDLE_TYPE_NONE))
    return CUDA_ERROR_INVALID_VALUE;
  if (!managed && pp->allocType != CU_MEM_ALLOCATION_TYPE_PINNED) return CUDA_ERROR_INVALID_VALUE;
  if (!location_ok(pp)) return CUDA_ERROR_INVALID_VALUE;
  fake_pool *p = calloc(1, sizeof *p);
  if (!p) return CUDA_ERROR_OUT_OF_MEMORY;
  p->props = *pp;
  p->reuse[0] = p->reuse[1] = p->reuse[2] = 1;
  if (pp->location.type == CU_MEM_LOCATION_TYPE_DEVICE)
    p->access[pp->location.id] = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  *out = (CUmemoryPool)p;
  return CUDA_SUCCESS;
}
static CUresult fake_cuMemPoolDestroy(CUmemoryPool h) {
  fake_pool *p = (fake_pool *)h;
  if (!p || p->is_default) return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&lock);
  for (int d = 0; d < 2; d++)
    if (current[d] == p) current[d] = NULL; /* the default is current again */
  for (fake_block *b = blocks; b; b = b->next)
    if (b->pool == p) b->pool = NULL;
  pthread_mutex_unlock(&lock);
  free(p);
  return CUDA_SUCCESS;
}

/* Counts `bytes` at `ptr` on pool `p` (NULL: the current pool of device 0). */
static void note_alloc(fake_pool *p, CUdeviceptr ptr, size_t bytes) {
  fake_block *b = malloc(sizeof *b);
  pthread_mutex_lock(&lock);
  if (!p) p = current[0] ? current[0] : default_of(0);
  p->used += bytes;
  if (p->used > p->used_high) p->used_high = p->used;
  if (p->used > p->reserved) p->reserved = p->used;
  if (p->reserved > p->reserved_high) p->reserved_high = p->reserved;
  if (b) {
    *b = (fake_block){ptr, bytes, p, blocks};
    blocks = b;
  }
  pthread_mutex_unlock(&lock);
}

void fake_pools_note(CUdeviceptr ptr, size_t bytes, int freed);
void fake_pools_note(CUdeviceptr ptr, size_t bytes, int freed) {
  if (!freed) {
    note_alloc(NULL, ptr, bytes);
    return;
  }
  pthread_mutex_lock(&lock);
  for (fake_block **b = &blocks; *b; b = &(*b)->next)
    if ((*b)->p == ptr) {
      fake_block *dead = *b;
      if (dead->pool) dead->pool->used -= dead->bytes;
      *b = dead->next;
      free(dead);
      break;
    }
  pthread_mutex_unlock(&lock);
}

static CUresult fake_cuMemAllocFromPoolAsync(CUdeviceptr *out, size_t bytes, CUmemoryPool h,
                                             CUstream s) {
  (void)s;
  fake_pool *p = (fake_pool *)h;
  if (!out || !p || !bytes) return CUDA_ERROR_INVALID_VALUE;
  if (p->props.maxSize && p->used + bytes > p->props.maxSize) return CUDA_ERROR_OUT_OF_MEMORY;
  size_t whole = (bytes + 255) / 256 * 256; /* the driver's 256-byte alignment */
  void *m = aligned_alloc(256, whole);
  if (!m) return CUDA_ERROR_OUT_OF_MEMORY;
  memset(m, 0, whole);
  *out = (CUdeviceptr)(uintptr_t)m;
  note_alloc(p, *out, bytes);
  return CUDA_SUCCESS;
}

static CUresult fake_cuMemPoolGetAttribute(CUmemoryPool h, CUmemPool_attribute a, void *v) {
  fake_pool *p = (fake_pool *)h;
  if (!p || !v) return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&lock);
  cuuint64_t x = 0;
  int is_int = a >= CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES &&
               a <= CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES;
  switch (a) {
  case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD: x = p->threshold; break;
  case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT: x = p->reserved; break;
  case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH: x = p->reserved_high; break;
  case CU_MEMPOOL_ATTR_USED_MEM_CURRENT: x = p->used; break;
  case CU_MEMPOOL_ATTR_USED_MEM_HIGH: x = p->used_high; break;
  default:
    if (is_int) x = (cuuint64_t)p->reuse[a - CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES];
  }
  pthread_mutex_unlock(&lock);
  if (is_int)
    *(int *)v = (int)x;
  else
    *(cuuint64_t *)v = x;
  return CUDA_SUCCESS;
}
static CUresult fake_cuMemPoolSetAttribute(CUmemoryPool h, CUmemPool_attribute a, void *v) {
  fake_pool *p = (fake_pool *)h;
  if (!p || !v) return CUDA_ERROR_INVALID_VALUE;
  CUresult r = CUDA_SUCCESS;
  pthread_mutex_lock(&lock);
  switch (a) {
  case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD: p->threshold = *(cuuint64_t *)v; break;
  case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH: p->reserved_high = p->reserved; break;
  case CU_MEMPOOL_ATTR_USED_MEM_HIGH: p->used_high = p->used; break;
  case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
  case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
  case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
    p->reuse[a - CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES] = *(int *)v != 0;
    break;
  default: r = CUDA_ERROR_INVALID_VALUE;
  }
  pthread_mutex_unlock(&lock);
  return r;
}
static CUresult fake_cuMemPoolTrimTo(CUmemoryPool h, size_t keep) {
  fake_pool *p = (fake_pool *)h;
  if (!p) return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&lock);
  if (p->reserved > keep) p->reserved = keep > p->used ? keep : p->used;
  pthread_mutex_unlock(&lock);
  return CUDA_SUCCESS;
}
static CUresult fake_cuMemPoolSetAccess(CUmemoryPool h, const CUmemAccessDesc *d, size_t n) {
  fake_pool *p = (fake_pool *)h;
  if (!p || !d) return CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; i < n; i++)
    if (d[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE || d[i].location.id < 0 ||
        d[i].location.id >= devices())
      return CUDA_ERROR_INVALID_DEVICE;
  for (size_t i = 0; i < n; i++) p->access[d[i].location.id] = d[i].flags;
  return CUDA_SUCCESS;
}
static CUresult fake_cuMemPoolGetAccess(CUmemAccess_flags *f, CUmemoryPool h, CUmemLocation *l) {
  fake_pool *p = (fake_pool *)h;
  if (!p || !f || !l || l->type != CU_MEM_LOCATION_TYPE_DEVICE || l->id < 0 || l->id >= devices())
    return CUDA_ERROR_INVALID_VALUE;
  *f = p->access[l->id];
  return CUDA_SUCCESS;
}
static CUresult fake_cuMemPoolExportToShareableHandle(void *out, CUmemoryPool h,
                                                      CUmemAllocationHandleType t,
                                                      unsigned long long flags) {
  fake_pool *p = (fake_pool *)h;
  (void)flags;
  if (!p || !out || t != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR ||
      !(p->props.handleTypes & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR))
    return CUDA_ERROR_INVALID_VALUE;
  int fd = memfd_create("fake-pool", MFD_CLOEXEC);
  if (fd < 0) return CUDA_ERROR_OUT_OF_MEMORY;
  *(int *)out = fd;
  return CUDA_SUCCESS;
}

static CUresult fake_cuDeviceGetDefaultMemPool(CUmemoryPool *out, CUdevice d) {
  if (!out || d < 0 || d >= devices()) return CUDA_ERROR_INVALID_DEVICE;
  pthread_mutex_lock(&lock);
  *out = (CUmemoryPool)default_of(d);
  pthread_mutex_unlock(&lock);
  return CUDA_SUCCESS;
}
static CUresult fake_cuDeviceGetMemPool(CUmemoryPool *out, CUdevice d) {
  if (!out || d < 0 || d >= devices()) return CUDA_ERROR_INVALID_DEVICE;
  pthread_mutex_lock(&lock);
  *out = (CUmemoryPool)(current[d] ? current[d] : default_of(d));
  pthread_mutex_unlock(&lock);
  return CUDA_SUCCESS;
}
static CUresult fake_cuDeviceSetMemPool(CUdevice d, CUmemoryPool h) {
  fake_pool *p = (fake_pool *)h;
  if (d < 0 || d >= devices()) return CUDA_ERROR_INVALID_DEVICE;
  if (!p || p->props.location.type != CU_MEM_LOCATION_TYPE_DEVICE || p->props.location.id != d ||
      p->props.allocType != CU_MEM_ALLOCATION_TYPE_PINNED)
    return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&lock);
  current[d] = p->is_default ? NULL : p;
  pthread_mutex_unlock(&lock);
  return CUDA_SUCCESS;
}

static CUresult fake_cuDeviceGetGraphMemAttribute(CUdevice d, CUgraphMem_attribute a, void *v) {
  if (d < 0 || d >= devices()) return CUDA_ERROR_INVALID_DEVICE;
  if (!v || (int)a < 0 || (int)a > 3) return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&lock);
  *(cuuint64_t *)v = graph_mem[a];
  pthread_mutex_unlock(&lock);
  return CUDA_SUCCESS;
}
static CUresult fake_cuDeviceSetGraphMemAttribute(CUdevice d, CUgraphMem_attribute a, void *v) {
  if (d < 0 || d >= devices()) return CUDA_ERROR_INVALID_DEVICE;
  if (!v || *(cuuint64_t *)v != 0 ||
      (a != CU_GRAPH_MEM_ATTR_USED_MEM_HIGH && a != CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH))
    return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&lock);
  graph_mem[a] = graph_mem[a - 1]; /* a high mark is reset to the current value */
  pthread_mutex_unlock(&lock);
  return CUDA_SUCCESS;
}
static CUresult fake_cuDeviceGraphMemTrim(CUdevice d) {
  if (d < 0 || d >= devices()) return CUDA_ERROR_INVALID_DEVICE;
  pthread_mutex_lock(&lock);
  graph_mem[CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT] = graph_mem[CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT];
  pthread_mutex_unlock(&lock);
  return CUDA_SUCCESS;
}

#define E(name) \
  { #name, (void *)fake_##name }
void *fake_pools_symbol(const char *symbol);
void *fake_pools_symbol(const char *symbol) {
  static const struct {
    const char *name;
    void *fn;
  } table[] = {E(cuMemPoolCreate),
               E(cuMemPoolDestroy),
               E(cuMemAllocFromPoolAsync),
               E(cuMemPoolGetAttribute),
               E(cuMemPoolSetAttribute),
               E(cuMemPoolTrimTo),
               E(cuMemPoolSetAccess),
               E(cuMemPoolGetAccess),
               E(cuMemPoolExportToShareableHandle),
               E(cuDeviceGetDefaultMemPool),
               E(cuDeviceGetMemPool),
               E(cuDeviceSetMemPool),
               E(cuDeviceGetGraphMemAttribute),
               E(cuDeviceSetGraphMemAttribute),
               E(cuDeviceGraphMemTrim)};
  const char *off = getenv("CUCORE_FAKE_NO_POOLS");
  if (off && off[0] == '1') return NULL;
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    if (strcmp(table[i].name, symbol) == 0) return table[i].fn;
  return NULL;
}
