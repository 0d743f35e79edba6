/*
 * globals.c -- module variables of a loaded object: `__device__` and `__constant__` ones
 * through cuLibraryGetGlobal, `__managed__` ones through cuLibraryGetManaged, found by symbol
 * or by a name expression registered at compile time; their kind read from the code by the
 * offline reader; copies to and from them checked against their size.
 */
#include "binary/binary.h"
#include "object/object.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The code read offline for the device's arch (the entry a fatbin would load), or NULL when it
 * cannot be read (LTO-IR): the kinds and the list of variables come from it. */
static cucore_binary *read_code(const cucore_object *obj, const cucore_device *dev) {
  if (obj->type == CUCORE_CODE_LTOIR) return NULL;
  int major = 0, minor = 0;
  DRV(cuDeviceGetAttribute)(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev->cudev);
  DRV(cuDeviceGetAttribute)(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev->cudev);
  cucore_binary *bin = NULL;
  if (cc_binary_open(obj->code, obj->size, obj->type, major * 10 + minor, &bin) != CUCORE_OK &&
      cc_binary_open(obj->code, obj->size, obj->type, 0, &bin) != CUCORE_OK)
    bin = NULL;
  cc_begin(); /* optional: a failure here is not the caller's */
  return bin;
}

/* The object's own copy of `symbol` (cucore_global.name), kept until the object goes. */
static const char *intern(cucore_object *o, const char *symbol) {
  const char *found = NULL;
  pthread_mutex_lock(&o->lock);
  for (int i = 0; i < o->global_name_count && !found; i++)
    if (strcmp(o->global_names[i], symbol) == 0) found = o->global_names[i];
  if (!found) {
    char **names = cc_grow(o->global_names, &o->global_name_cap, (size_t)o->global_name_count + 1,
                           sizeof *names, "an object's variable names");
    char *copy = names ? cc_strdup(symbol, "a variable name") : NULL;
    if (names) o->global_names = names;
    if (copy) found = o->global_names[o->global_name_count++] = copy;
  }
  pthread_mutex_unlock(&o->lock);
  return found;
}

static cucore_status not_found(cucore_object *obj, const cucore_binary *bin, const char *name,
                               const char *symbol, CUresult r) {
  char list[1024] = "";
  size_t used = 0;
  for (uint32_t i = 0; bin && i < bin->globals.count && used + 8 < sizeof list; i++) {
    const cucore_global_info *g = &bin->globals.items[i];
    int n = snprintf(list + used, sizeof list - used, "%s`%s` (%s, %llu bytes)", i ? ", " : "",
                     g->demangled ? g->demangled : g->name, cucore_global_kind_name(g->kind),
                     (unsigned long long)g->size);
    if (n < 0) break;
    used += (size_t)n;
  }
  if (used >= sizeof list) snprintf(list + sizeof list - 5, 5, "...");
  return cc_fail(cc_status(CUCORE_NOT_FOUND, CUCORE_SOURCE_DRIVER, (int)r),
                 "cucore_object_get_global: no module variable `%s` in `%s`%s%s%s", name, obj->name,
                 bin ? (bin->globals.count ? "; its variables are: "
                                           : "; it has no "
                                             "__device__, __constant__ or __managed__ variables")
                     : "",
                 list,
                 strcmp(symbol, name) == 0 && (strchr(name, '<') || strstr(name, "::"))
                     ? " (a C++ name needs its name expression registered before compiling)"
                     : "");
}

cucore_status cucore_object_get_global(cucore_object *obj, cucore_device *dev, const char *name,
                                       cucore_global *out) {
  cc_begin();
  const char *fn = "cucore_object_get_global";
  CC_CHECK_ARG(out, fn, "out");
  memset(out, 0, sizeof *out);
  CC_CHECK_HANDLE(obj, OBJECT, fn, "obj");
  CC_CHECK_HANDLE(dev, DEVICE, fn, "dev");
  CC_CHECK_ARG(name, fn, "name");
  cucore_status st = CC_DRV_REQUIRE(cuLibraryGetGlobal);
  if (st == CUCORE_OK) st = cc_device_make_current(dev);
  if (st == CUCORE_OK) st = cc_object_load(obj);
  if (st != CUCORE_OK) return st;
  const char *symbol = cc_object_symbol(obj, name);
  cucore_binary *bin = read_code(obj, dev);
  const cucore_global_info *info = bin ? cc_glist_find(&bin->globals, symbol) : NULL;
  cucore_global_kind kind = info ? info->kind : CUCORE_GLOBAL_UNKNOWN;
  CUdeviceptr addr = 0;
  size_t size = 0;
  CUresult r;
  const char *call = "cuLibraryGetGlobal";
  if (kind == CUCORE_GLOBAL_MANAGED && DRV(cuLibraryGetManaged)) {
    call = "cuLibraryGetManaged";
    r = DRV(cuLibraryGetManaged)(&addr, &size, obj->library, symbol);
    if (r == CUDA_ERROR_NOT_FOUND) {
      call = "cuLibraryGetGlobal";
      r = DRV(cuLibraryGetGlobal)(&addr, &size, obj->library, symbol);
    }
  } else {
    r = DRV(cuLibraryGetGlobal)(&addr, &size, obj->library, symbol);
    if (r == CUDA_ERROR_NOT_FOUND && kind == CUCORE_GLOBAL_UNKNOWN && DRV(cuLibraryGetManaged)) {
      call = "cuLibraryGetManaged";
      r = DRV(cuLibraryGetManaged)(&addr, &size, obj->library, symbol);
      if (r == CUDA_SUCCESS) kind = CUCORE_GLOBAL_MANAGED;
    }
  }
  if (r == CUDA_ERROR_NOT_FOUND) {
    st = not_found(obj, bin, name, symbol, r);
  } else if (r != CUDA_SUCCESS) {
    st = cc_fail_cu(r, call, "module variable `%s` of `%s` on device %d", name, obj->name,
                    dev->ordinal);
  } else {
    const char *kept = intern(obj, symbol);
    if (!kept) {
      st = CUCORE_HOST_OUT_OF_MEMORY;
    } else {
      out->name = kept;
      out->device = dev;
      out->address = (cucore_devptr)addr;
      out->size = size;
      out->kind = kind;
    }
  }
  cucore_binary_destroy(bin);
  return st;
}

/* Checks a copy of `bytes` at `offset` against the variable and the stream. */
static cucore_status check_copy(const cucore_global *g, size_t offset, const void *host,
                                size_t bytes, const cucore_stream *s, const char *fn) {
  if (!g->device || !g->address || !g->name)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: the global has no device or address; fill it with "
                   "cucore_object_get_global",
                   fn);
  if (offset > g->size || bytes > g->size - offset)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: a copy of %zu bytes at offset %zu runs past the end of `%s` (%s, %zu "
                   "bytes)",
                   fn, bytes, offset, g->name, cucore_global_kind_name(g->kind), g->size);
  if (bytes && !host)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: the host buffer is NULL for a copy of %zu "
                   "bytes of `%s`",
                   fn, bytes, g->name);
  if (s && s->dev->ctx != g->device->ctx)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: the stream belongs to device %d; `%s` was looked up on device %d", fn,
                   s->dev->ordinal, g->name, g->device->ordinal);
  return cc_device_make_current(g->device);
}

cucore_status cucore_global_write(const cucore_global *g, size_t offset, const void *src,
                                  size_t bytes, cucore_stream *s) {
  cc_begin();
  CC_CHECK_ARG(g, "cucore_global_write", "global");
  cucore_status st = check_copy(g, offset, src, bytes, s, "cucore_global_write");
  if (st != CUCORE_OK || bytes == 0) return st;
  CUdeviceptr dst = (CUdeviceptr)(g->address + offset);
  CUresult r = s ? DRV(cuMemcpyHtoDAsync)(dst, src, bytes, s->handle)
                 : DRV(cuMemcpyHtoD)(dst, src, bytes);
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, s ? "cuMemcpyHtoDAsync" : "cuMemcpyHtoD",
                      "%zu bytes into `%s` at offset %zu", bytes, g->name, offset);
  return CUCORE_OK;
}

cucore_status cucore_global_read(const cucore_global *g, size_t offset, void *dst, size_t bytes,
                                 cucore_stream *s) {
  cc_begin();
  CC_CHECK_ARG(g, "cucore_global_read", "global");
  cucore_status st = check_copy(g, offset, dst, bytes, s, "cucore_global_read");
  if (st != CUCORE_OK || bytes == 0) return st;
  CUdeviceptr src = (CUdeviceptr)(g->address + offset);
  CUresult r = s ? DRV(cuMemcpyDtoHAsync)(dst, src, bytes, s->handle)
                 : DRV(cuMemcpyDtoH)(dst, src, bytes);
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, s ? "cuMemcpyDtoHAsync" : "cuMemcpyDtoH",
                      "%zu bytes of `%s` from offset %zu", bytes, g->name, offset);
  return CUCORE_OK;
}
