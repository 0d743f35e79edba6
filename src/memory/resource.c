/*
 * resource.c -- the memory resource handle: created over a program's callbacks (or by
 * resource_builtin.c over cucore's own allocators), its facts, its live allocations (a walk of
 * the record, as pools count theirs: the hot paths keep no counts), and each device's installed
 * resource. Allocating through a resource and giving memory back is resource_alloc.c.
 */
#include "memory/resource.h"

#include <string.h>

_Atomic(cucore_mem_resource *) cc_mres_installed[CC_MRES_MAX_DEVICES];

static const unsigned known_flags = CUCORE_MR_DEVICE_ACCESSIBLE | CUCORE_MR_HOST_ACCESSIBLE |
                                    CUCORE_MR_PINNED | CUCORE_MR_MANAGED;

cucore_status cc_mres_new(const cucore_mem_resource_ops *ops, void *user, int device,
                          unsigned flags, const char *name, cucore_mem_resource **out) {
  cucore_mem_resource *r = cc_calloc(1, sizeof *r, "a memory resource");
  if (!r) return CUCORE_HOST_OUT_OF_MEMORY;
  r->name = cc_strdup(name ? name : "a memory resource", "a memory resource's name");
  if (!r->name) {
    free(r);
    return CUCORE_HOST_OUT_OF_MEMORY;
  }
  cc_handle_init(r, CC_KIND_MEM_RESOURCE);
  r->ops = *ops;
  r->user = user;
  r->device = device;
  r->flags = flags;
  *out = r;
  return CUCORE_OK;
}

static cucore_status check_props(const cucore_mem_resource_props *p, unsigned *flags,
                                 const char *fn) {
  if (p->device < -1)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: device %d is not a device ordinal (>= 0) or -1 (host memory)", fn,
                   p->device);
  if (p->flags & ~known_flags)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: unknown flags 0x%x (expected CUCORE_MR_* bits)",
                   fn, p->flags & ~known_flags);
  *flags = p->flags;
  if (!*flags) *flags = p->device >= 0 ? CUCORE_MR_DEVICE_ACCESSIBLE : CUCORE_MR_HOST_ACCESSIBLE;
  if (p->device < 0 && (*flags & CUCORE_MR_DEVICE_ACCESSIBLE) &&
      !(*flags & (CUCORE_MR_PINNED | CUCORE_MR_MANAGED)))
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: host memory (device -1) that kernels can access must be pinned or managed "
                   "(CUCORE_MR_PINNED or CUCORE_MR_MANAGED); flags are 0x%x",
                   fn, *flags);
  return CUCORE_OK;
}

cucore_status cucore_mem_resource_create(const cucore_mem_resource_ops *ops, void *user,
                                         const cucore_mem_resource_props *props,
                                         cucore_mem_resource **out) {
  cc_begin();
  const char *fn = "cucore_mem_resource_create";
  CC_CHECK_ARG(out, fn, "out");
  *out = NULL;
  CC_CHECK_ARG(ops, fn, "ops");
  CC_CHECK_ARG(props, fn, "props");
  if (!ops->allocate || !ops->deallocate)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: ops->%s is NULL (allocate and deallocate are "
                   "required)",
                   fn, ops->allocate ? "deallocate" : "allocate");
  unsigned flags = 0;
  cucore_status st = check_props(props, &flags, fn);
  if (st != CUCORE_OK) return st;
  return cc_mres_new(ops, user, props->device, flags, props->name, out);
}

cucore_status cucore_mem_resource_destroy(cucore_mem_resource *res) {
  cc_begin();
  const char *fn = "cucore_mem_resource_destroy";
  if (!res) return CUCORE_OK;
  CC_CHECK_HANDLE(res, MEM_RESOURCE, fn, "res");
  int installed = atomic_load(&res->installed);
  if (installed)
    return cc_fail(CUCORE_IN_USE,
                   "%s: memory resource '%s' is installed on %d device%s: restore the default "
                   "first (cucore_device_set_mem_resource(dev, NULL))",
                   fn, res->name, installed, installed == 1 ? "" : "s");
  uint64_t live = 0, bytes = 0;
  cc_reg_pool_live(&cc_mem_registry, res, &live, &bytes);
  if (live) {
    char b[32];
    return cc_fail(CUCORE_IN_USE,
                   "%s: memory resource '%s' still has %llu live allocation%s (%s): free them "
                   "(cucore_mem_free, cucore_mem_free_async) before destroying it",
                   fn, res->name, (unsigned long long)live, live == 1 ? "" : "s",
                   cc_format_bytes((size_t)bytes, b, sizeof b));
  }
  if (res->ops.destroy) res->ops.destroy(res->user);
  free(res->name);
  cc_handle_retire(res, CC_KIND_MEM_RESOURCE);
  return CUCORE_OK;
}

cucore_status cucore_mem_resource_get_device(const cucore_mem_resource *res, int *device) {
  cc_begin();
  CC_CHECK_HANDLE(res, MEM_RESOURCE, "cucore_mem_resource_get_device", "res");
  CC_CHECK_ARG(device, "cucore_mem_resource_get_device", "device");
  *device = res->device;
  return CUCORE_OK;
}

cucore_status cucore_mem_resource_get_flags(const cucore_mem_resource *res, unsigned *flags) {
  cc_begin();
  CC_CHECK_HANDLE(res, MEM_RESOURCE, "cucore_mem_resource_get_flags", "res");
  CC_CHECK_ARG(flags, "cucore_mem_resource_get_flags", "flags");
  *flags = res->flags;
  return CUCORE_OK;
}

cucore_status cucore_mem_resource_get_name(const cucore_mem_resource *res, const char **name) {
  cc_begin();
  CC_CHECK_HANDLE(res, MEM_RESOURCE, "cucore_mem_resource_get_name", "res");
  CC_CHECK_ARG(name, "cucore_mem_resource_get_name", "name");
  *name = res->name;
  return CUCORE_OK;
}

cucore_status cucore_mem_resource_get_stats(const cucore_mem_resource *res,
                                            cucore_mem_resource_stats *out) {
  cc_begin();
  CC_CHECK_HANDLE(res, MEM_RESOURCE, "cucore_mem_resource_get_stats", "res");
  CC_CHECK_ARG(out, "cucore_mem_resource_get_stats", "out");
  memset(out, 0, sizeof *out);
  cc_reg_pool_live(&cc_mem_registry, res, &out->live_allocations, &out->live_bytes);
  return CUCORE_OK;
}

unsigned cc_mres_rec_flags(const cc_mem_rec *rec) {
  return ((const cucore_mem_resource *)rec->owner)->flags;
}

/* ---- a device's installed resource --------------------------------------------------------- */

static cucore_status check_installable(const cucore_device *dev, const cucore_mem_resource *res,
                                       const char *fn) {
  if ((unsigned)dev->ordinal >= CC_MRES_MAX_DEVICES)
    return cc_fail(CUCORE_NOT_SUPPORTED,
                   "%s: device %d is past the %d devices a resource can be installed on", fn,
                   dev->ordinal, CC_MRES_MAX_DEVICES);
  if (!res) return CUCORE_OK;
  if (res->self_records)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: memory resource '%s' records its blocks itself (a pinned host pool), so "
                   "cucore_mem_free could not give them back; allocate from it with "
                   "cucore_mem_resource_allocate instead",
                   fn, res->name);
  if (res->device >= 0 && res->device != dev->ordinal)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: memory resource '%s' allocates memory of device %d, not of device %d", fn,
                   res->name, res->device, dev->ordinal);
  if (!(res->flags & CUCORE_MR_DEVICE_ACCESSIBLE))
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: memory resource '%s' is not device-accessible (flags 0x%x lack "
                   "CUCORE_MR_DEVICE_ACCESSIBLE): a device's allocations must be",
                   fn, res->name, res->flags);
  return CUCORE_OK;
}

cucore_status cucore_device_set_mem_resource(cucore_device *dev, cucore_mem_resource *res) {
  cc_begin();
  const char *fn = "cucore_device_set_mem_resource";
  CC_CHECK_HANDLE(dev, DEVICE, fn, "dev");
  if (res) CC_CHECK_HANDLE(res, MEM_RESOURCE, fn, "res");
  cucore_status st = check_installable(dev, res, fn);
  if (st != CUCORE_OK) return st;
  if (res) atomic_fetch_add(&res->installed, 1);
  cucore_mem_resource *old = atomic_exchange(&cc_mres_installed[dev->ordinal], res);
  if (old) atomic_fetch_sub(&old->installed, 1);
  return CUCORE_OK;
}

cucore_status cucore_device_get_mem_resource(cucore_device *dev, cucore_mem_resource **res) {
  cc_begin();
  CC_CHECK_ARG(res, "cucore_device_get_mem_resource", "res");
  *res = NULL;
  CC_CHECK_HANDLE(dev, DEVICE, "cucore_device_get_mem_resource", "dev");
  *res = cc_mres_of(dev);
  return CUCORE_OK;
}
