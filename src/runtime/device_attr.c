/*
 * device_attr.c -- device attributes by id and by name, over the one table of
 * device_attr_table.c: cucore_device_get_attribute reads any of them (an id the table lacks is
 * refused naming the range, one newer than the loaded driver names both versions), the names
 * go both ways.
 */
#include "runtime/runtime.h"

#include <string.h>
#include <strings.h>

/* CUCORE_INVALID_ARGUMENT for an id the table lacks, naming the range and its ends. */
static cucore_status unknown_id(int id, const char *fn) {
  const cc_devattr *first = cc_devattr_find(CUCORE_DEVICE_ATTRIBUTE_FIRST);
  const cc_devattr *last = cc_devattr_find(CUCORE_DEVICE_ATTRIBUTE_LAST);
  return cc_fail(CUCORE_INVALID_ARGUMENT,
                 "%s: %d is not a device attribute cucore knows: the ids run %d (%s) to %d (%s), "
                 "with no gap%s",
                 fn, id, first->id, first->driver_name, last->id, last->driver_name,
                 id > CUCORE_DEVICE_ATTRIBUTE_LAST
                     ? "; a larger id is newer than cucore's table (CUDA 13.1's)"
                     : "");
}

static cucore_status lookup(int id, const cc_devattr **out, const char *fn) {
  *out = cc_devattr_find(id);
  return *out ? CUCORE_OK : unknown_id(id, fn);
}

/* CUCORE_DRIVER_TOO_OLD: the attribute came with a later CUDA than the loaded driver's. */
static cucore_status too_old(const cc_devattr *a, const char *fn) {
  return cc_fail(cc_status(CUCORE_DRIVER_TOO_OLD, CUCORE_SOURCE_NONE, 0),
                 "%s: %s (%s, id %d) came with CUDA %d.%d; the loaded driver is version %d.%d", fn,
                 a->name, a->driver_name, a->id, a->since / 1000, a->since % 1000 / 10,
                 cc_drv.version / 1000, cc_drv.version % 1000 / 10);
}

cucore_status cucore_device_get_attribute(int ordinal, int id, int *value) {
  static const char fn[] = "cucore_device_get_attribute";
  cc_begin();
  CC_CHECK_ARG(value, fn, "value");
  *value = 0;
  const cc_devattr *a;
  cucore_status st = lookup(id, &a, fn);
  if (st != CUCORE_OK) return st;
  CUdevice d;
  st = cc_device_cudev(ordinal, &d, fn);
  if (st != CUCORE_OK) return st;
  /* An id after the headers cucore is built with: a driver older than it is not asked. */
  if (a->since > CUDA_VERSION && cc_drv.version < a->since) return too_old(a, fn);
  CUresult r = DRV(cuDeviceGetAttribute)(value, (CUdevice_attribute)id, d);
  if (r == CUDA_SUCCESS) return CUCORE_OK;
  *value = 0;
  if (r == CUDA_ERROR_INVALID_VALUE && cc_drv.version < a->since) return too_old(a, fn);
  return cc_fail_cu(r, "cuDeviceGetAttribute", "%s: device %d, %s (%s, id %d%s)", fn, ordinal,
                    a->name, a->driver_name, id, a->deprecated ? ", deprecated" : "");
}

/* 1 when `name` is `full` without its "CU_DEVICE_ATTRIBUTE_" prefix or with it, in any case. */
static int names_match(const char *name, const char *full) {
  static const char prefix[] = "CU_DEVICE_ATTRIBUTE_";
  if (strcasecmp(name, full) == 0) return 1;
  return strncmp(full, prefix, sizeof prefix - 1) == 0 &&
         strcasecmp(name, full + sizeof prefix - 1) == 0;
}

/* 1 when `text` contains `part`, in any case. */
static int contains(const char *text, const char *part) {
  size_t n = strlen(part);
  for (; *text; text++)
    if (strncasecmp(text, part, n) == 0) return 1;
  return 0;
}

/* The first attribute whose name contains `name`, for a hint (NULL when none does). */
static const char *containing(const char *name) {
  if (strlen(name) < 3) return NULL;
  for (int id = CUCORE_DEVICE_ATTRIBUTE_FIRST; id <= CUCORE_DEVICE_ATTRIBUTE_LAST; id++)
    if (contains(cc_devattr_find(id)->name, name)) return cc_devattr_find(id)->name;
  return NULL;
}

cucore_status cucore_device_attribute_from_name(const char *name, int *id) {
  static const char fn[] = "cucore_device_attribute_from_name";
  cc_begin();
  CC_CHECK_ARG(id, fn, "id");
  *id = 0;
  CC_CHECK_ARG(name, fn, "name");
  for (int i = CUCORE_DEVICE_ATTRIBUTE_FIRST; i <= CUCORE_DEVICE_ATTRIBUTE_LAST; i++) {
    const cc_devattr *a = cc_devattr_find(i);
    if (strcasecmp(name, a->name) == 0 || names_match(name, a->driver_name)) {
      *id = a->id;
      return CUCORE_OK;
    }
  }
  int alias_id = 0;
  for (int i = 0; i < cc_devattr_alias_count(); i++)
    if (names_match(name, cc_devattr_alias(i, &alias_id))) {
      *id = alias_id;
      return CUCORE_OK;
    }
  const char *near = containing(name);
  return cc_fail(CUCORE_NOT_FOUND,
                 "%s: no device attribute is named `%s` (names are cucore's, e.g. "
                 "`max_threads_per_block`, or the driver's, `CU_DEVICE_ATTRIBUTE_...`)%s%s%s",
                 fn, name, near ? "; did you mean `" : "", near ? near : "", near ? "`?" : "");
}

cucore_status cucore_device_attribute_get_name(int id, const char **name) {
  static const char fn[] = "cucore_device_attribute_get_name";
  cc_begin();
  CC_CHECK_ARG(name, fn, "name");
  *name = NULL;
  const cc_devattr *a;
  cucore_status st = lookup(id, &a, fn);
  if (st != CUCORE_OK) return st;
  *name = a->name;
  return CUCORE_OK;
}

cucore_status cucore_device_attribute_get_info(int id, cucore_device_attribute_info *out) {
  static const char fn[] = "cucore_device_attribute_get_info";
  cc_begin();
  CC_CHECK_ARG(out, fn, "out");
  memset(out, 0, sizeof *out);
  const cc_devattr *a;
  cucore_status st = lookup(id, &a, fn);
  if (st != CUCORE_OK) return st;
  *out = (cucore_device_attribute_info){a->id,         a->name,    a->driver_name, a->since,
                                        a->deprecated, a->meaning, a->props_field};
  return CUCORE_OK;
}
