/*
 * pool_kinds.c -- the kinds of stream-ordered pool besides device memory: pinned host memory
 * (cuMemPoolCreate at location HOST or HOST_NUMA, CUDA 12.6) and managed memory
 * (CU_MEM_ALLOCATION_TYPE_MANAGED with a preferred location, CUDA 13.0). The settings of a
 * pool's props are checked together here, so that a combination the driver would refuse with a
 * bare CUDA_ERROR_INVALID_VALUE (IPC of a HOST pool, a device location for pinned host memory)
 * is refused by name; pool.c creates the pool with the properties filled here.
 */
#include "memory/memory.h"

#include <stdio.h>
#include <string.h>

/* The driver's values, spelled out so that cucore builds with headers older than CUDA 13
 * (which lack the managed allocation type and the NONE location). */
enum {
  POOL_ALLOC_PINNED = 1,  /* CU_MEM_ALLOCATION_TYPE_PINNED */
  POOL_ALLOC_MANAGED = 2, /* CU_MEM_ALLOCATION_TYPE_MANAGED (CUDA 13.0) */
  POOL_LOC_NONE = 0,      /* CU_MEM_LOCATION_TYPE_NONE (CUDA 13.0) */
  POOL_LOC_DEVICE = 1,    /* CU_MEM_LOCATION_TYPE_DEVICE */
  POOL_LOC_HOST = 2,      /* CU_MEM_LOCATION_TYPE_HOST */
  POOL_LOC_HOST_NUMA = 3  /* CU_MEM_LOCATION_TYPE_HOST_NUMA */
};

/* Driver versions the kinds need (the CUDA versions that documented them). */
#define PINNED_POOL_VERSION 12060
#define MANAGED_POOL_VERSION 13000

static const char *loc_name(cucore_pool_location l) {
  switch (l) {
  case CUCORE_POOL_LOC_DEFAULT: return "CUCORE_POOL_LOC_DEFAULT";
  case CUCORE_POOL_LOC_DEVICE: return "CUCORE_POOL_LOC_DEVICE";
  case CUCORE_POOL_LOC_HOST: return "CUCORE_POOL_LOC_HOST";
  case CUCORE_POOL_LOC_HOST_NUMA: return "CUCORE_POOL_LOC_HOST_NUMA";
  }
  return "?";
}

static cucore_status check_flags(unsigned flags, const char *fn) {
  unsigned known = CUCORE_POOL_IPC | CUCORE_POOL_PINNED_HOST | CUCORE_POOL_MANAGED;
  if (flags & ~known)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: unknown flags 0x%x (expected CUCORE_POOL_IPC, CUCORE_POOL_PINNED_HOST, "
                   "CUCORE_POOL_MANAGED)",
                   fn, flags & ~known);
  if ((flags & CUCORE_POOL_PINNED_HOST) && (flags & CUCORE_POOL_MANAGED))
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: CUCORE_POOL_PINNED_HOST and CUCORE_POOL_MANAGED together: a pool hands "
                   "out one kind of memory; set one of them",
                   fn);
  if ((flags & CUCORE_POOL_MANAGED) && (flags & CUCORE_POOL_IPC))
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: CUCORE_POOL_MANAGED with CUCORE_POOL_IPC: managed pools cannot be shared "
                   "with other processes; use a device pool or a pinned pool at "
                   "CUCORE_POOL_LOC_HOST_NUMA",
                   fn);
  return CUCORE_OK;
}

/* The location and its id, checked for the kind (`pinned` 1, managed 0). */
static cucore_status check_location(const cucore_mem_pool_props *p, int pinned, const char *fn) {
  const char *kind = pinned ? "a pinned host pool" : "a managed pool";
  if ((unsigned)p->location > (unsigned)CUCORE_POOL_LOC_HOST_NUMA)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: location %d is not a cucore_pool_location (CUCORE_POOL_LOC_DEFAULT, "
                   "_DEVICE, _HOST or _HOST_NUMA)",
                   fn, (int)p->location);
  if (pinned && p->location == CUCORE_POOL_LOC_DEVICE)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: CUCORE_POOL_LOC_DEVICE for a pinned host pool: its memory is the host's "
                   "(CUCORE_POOL_LOC_HOST or CUCORE_POOL_LOC_HOST_NUMA); for device memory leave "
                   "out CUCORE_POOL_PINNED_HOST",
                   fn);
  if (p->location == CUCORE_POOL_LOC_HOST_NUMA && p->location_id < 0)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: location_id %d for CUCORE_POOL_LOC_HOST_NUMA (expected a host NUMA node, "
                   ">= 0)",
                   fn, p->location_id);
  if (p->location != CUCORE_POOL_LOC_HOST_NUMA && p->location_id != 0)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: location_id %d with %s for %s: only CUCORE_POOL_LOC_HOST_NUMA takes an id "
                   "(expected 0)",
                   fn, p->location_id, loc_name(p->location), kind);
  if (pinned && (p->flags & CUCORE_POOL_IPC) && p->location != CUCORE_POOL_LOC_HOST_NUMA)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: CUCORE_POOL_IPC for a pinned host pool at %s: the driver shares host "
                   "pools only at a NUMA node (CUCORE_POOL_LOC_HOST_NUMA)",
                   fn, loc_name(p->location));
  return CUCORE_OK;
}

static cucore_status need_version(int version, const char *what, const char *fn) {
  if (cc_drv.version >= version) return CUCORE_OK;
  return cc_fail(cc_status(CUCORE_DRIVER_TOO_OLD, CUCORE_SOURCE_NONE, 0),
                 "%s: %s needs a driver for CUDA %d.%d or newer; the loaded driver is version "
                 "%d.%d",
                 fn, what, version / 1000, version % 1000 / 10, cc_drv.version / 1000,
                 cc_drv.version % 1000 / 10);
}

/* The driver's location for a pinned or managed pool. */
static void fill_location(const cucore_device *dev, const cucore_mem_pool_props *p, int pinned,
                          CUmemPoolProps *cp) {
  int type = POOL_LOC_NONE, id = 0;
  switch (p->location) {
  case CUCORE_POOL_LOC_DEFAULT: type = pinned ? POOL_LOC_HOST : POOL_LOC_NONE; break;
  case CUCORE_POOL_LOC_DEVICE:
    type = POOL_LOC_DEVICE;
    id = (int)dev->cudev;
    break;
  case CUCORE_POOL_LOC_HOST: type = POOL_LOC_HOST; break;
  case CUCORE_POOL_LOC_HOST_NUMA:
    type = POOL_LOC_HOST_NUMA;
    id = p->location_id;
    break;
  }
  cp->location.type = (CUmemLocationType)type;
  cp->location.id = id;
}

cucore_status cc_pool_kind_props(const cucore_device *dev, const cucore_mem_pool_props *p,
                                 CUmemPoolProps *cp, const char *fn) {
  cucore_status st = check_flags(p->flags, fn);
  if (st != CUCORE_OK) return st;
  memset(cp, 0, sizeof *cp);
  cp->handleTypes = (p->flags & CUCORE_POOL_IPC) ? CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR
                                                 : CU_MEM_HANDLE_TYPE_NONE;
  cp->maxSize = p->max_size;
  int pinned = (p->flags & CUCORE_POOL_PINNED_HOST) != 0;
  if (!pinned && !(p->flags & CUCORE_POOL_MANAGED)) { /* a device pool: today's props only */
    cp->allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    cp->location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    cp->location.id = (int)dev->cudev;
    return CUCORE_OK;
  }
  st = check_location(p, pinned, fn);
  if (st == CUCORE_OK)
    st = pinned ? need_version(PINNED_POOL_VERSION,
                               "a pinned host pool (CUCORE_POOL_PINNED_HOST, "
                               "cuMemPoolCreate at a host location)",
                               fn)
                : need_version(MANAGED_POOL_VERSION,
                               "a managed pool (CUCORE_POOL_MANAGED, "
                               "CU_MEM_ALLOCATION_TYPE_MANAGED)",
                               fn);
  if (st != CUCORE_OK) return st;
  cp->allocType = (CUmemAllocationType)(pinned ? POOL_ALLOC_PINNED : POOL_ALLOC_MANAGED);
  fill_location(dev, p, pinned, cp);
  return CUCORE_OK;
}

const char *cc_pool_kind_text(const cucore_mem_pool_props *p, char *buf, size_t n) {
  buf[0] = '\0';
  if (!(p->flags & (CUCORE_POOL_PINNED_HOST | CUCORE_POOL_MANAGED))) return buf;
  snprintf(buf, n, ", %s memory at %s",
           (p->flags & CUCORE_POOL_MANAGED) ? "managed" : "pinned host", loc_name(p->location));
  if (p->location == CUCORE_POOL_LOC_HOST_NUMA)
    snprintf(buf + strlen(buf), n - strlen(buf), " %d", p->location_id);
  return buf;
}

cucore_status cc_pool_kind_finish(cucore_mem_pool *pool, const cucore_mem_pool_props *p) {
  if (p->flags & CUCORE_POOL_MANAGED) {
    pool->kind = CUCORE_MEM_POOL_MANAGED;
    return CUCORE_OK;
  }
  if (!(p->flags & CUCORE_POOL_PINNED_HOST)) return CUCORE_OK;
  pool->kind = CUCORE_MEM_POOL_PINNED;
  cucore_status st = CC_DRV_REQUIRE(cuMemPoolSetAccess);
  if (st != CUCORE_OK) return st;
  CUmemAccessDesc d;
  memset(&d, 0, sizeof d);
  d.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  d.location.id = (int)pool->dev->cudev;
  d.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  CUresult r = DRV(cuMemPoolSetAccess)(pool->handle, &d, 1);
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, "cuMemPoolSetAccess",
                      "read-write access of device %d to its new pinned host pool",
                      pool->dev->ordinal);
  return CUCORE_OK;
}
