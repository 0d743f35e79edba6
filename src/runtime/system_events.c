/*
 * system_events.c -- NVML's events (XID errors, clock and performance-state changes, ECC...):
 * a set over one or more GPUs (nvmlEventSetCreate, nvmlDeviceRegisterEvents), waited on with a
 * timeout (nvmlEventSetWait_v2; a timeout is CUCORE_NOT_READY, not a failure), each event with
 * its type, its cucore device and its data, and freed (nvmlEventSetFree).
 */
#define _GNU_SOURCE
#include "runtime/system_map.h"
#include "base/handle.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

typedef struct set_device {
  cc_nvml_device h;
  int ordinal;
} set_device;

struct cucore_system_event_set {
  cc_handle handle;
  cc_nvml_event_set nvml;
  size_t count, cap;
  set_device *devices; /* those added, in order */
};

static const struct {
  unsigned long long bit;
  const char *name;
} type_names[] = {
    {CUCORE_SYSTEM_EVENT_SINGLE_BIT_ECC, "single_bit_ecc"},
    {CUCORE_SYSTEM_EVENT_DOUBLE_BIT_ECC, "double_bit_ecc"},
    {CUCORE_SYSTEM_EVENT_PSTATE, "pstate"},
    {CUCORE_SYSTEM_EVENT_XID, "xid"},
    {CUCORE_SYSTEM_EVENT_CLOCK, "clock"},
    {CUCORE_SYSTEM_EVENT_POWER_SOURCE, "power_source"},
    {CUCORE_SYSTEM_EVENT_MIG_CONFIG, "mig_config"},
    {CUCORE_SYSTEM_EVENT_ECC_STORM, "ecc_storm"},
    {CUCORE_SYSTEM_EVENT_DRAM_RETIREMENT, "dram_retirement"},
    {CUCORE_SYSTEM_EVENT_DRAM_RETIREMENT_FAIL, "dram_retirement_fail"},
    {CUCORE_SYSTEM_EVENT_NON_FATAL_POISON, "non_fatal_poison"},
    {CUCORE_SYSTEM_EVENT_FATAL_POISON, "fatal_poison"},
};

const char *cucore_system_event_type_name(unsigned long long type) {
  for (size_t i = 0; i < CC_ARRAY_LEN(type_names); i++)
    if (type_names[i].bit == type) return type_names[i].name;
  return "unknown";
}

/* The names of the bits of `types` ("xid, clock"; others as hex), appended to b. */
static void types_text(unsigned long long types, cc_sb *b) {
  size_t start = b->len;
  for (size_t i = 0; i < CC_ARRAY_LEN(type_names); i++)
    if (types & type_names[i].bit) {
      cc_sb_printf(b, "%s%s", b->len > start ? ", " : "", type_names[i].name);
      types &= ~type_names[i].bit;
    }
  if (types) cc_sb_printf(b, "%s0x%llx", b->len > start ? ", " : "", types);
  if (b->len == start) cc_sb_puts(b, "none");
}

/* The supported types of `h` (device `ordinal`) into *types. */
static cucore_status supported(const char *fn, cc_nvml_device h, int ordinal,
                               unsigned long long *types) {
  cucore_status st = cc_sys_need(fn, cc_nvml_fn.supported_events != NULL,
                                 "nvmlDeviceGetSupportedEventTypes");
  if (st != CUCORE_OK) return st;
  cc_nvml_return r = cc_nvml_fn.supported_events(h, types);
  if (r != CC_NVML_SUCCESS)
    return cc_fail_nvml(r, "nvmlDeviceGetSupportedEventTypes", "%s: device %d", fn, ordinal);
  return CUCORE_OK;
}

cucore_status cucore_system_get_event_types(int ordinal, unsigned long long *types) {
  static const char fn[] = "cucore_system_get_event_types";
  cc_begin();
  CC_CHECK_ARG(types, fn, "types");
  *types = 0;
  cc_nvml_device h = NULL;
  cucore_status st = cc_sys_handle(fn, ordinal, &h);
  return st == CUCORE_OK ? supported(fn, h, ordinal, types) : st;
}

cucore_status cucore_system_event_set_create(cucore_system_event_set **out) {
  static const char fn[] = "cucore_system_event_set_create";
  cc_begin();
  CC_CHECK_ARG(out, fn, "out");
  *out = NULL;
  cucore_status st = cc_nvml_load();
  if (st == CUCORE_OK)
    st = cc_sys_need(fn, cc_nvml_fn.event_set_create != NULL, "nvmlEventSetCreate");
  if (st == CUCORE_OK)
    st = cc_sys_need(fn, cc_nvml_fn.register_events != NULL, "nvmlDeviceRegisterEvents");
  if (st == CUCORE_OK) st = cc_sys_need(fn, cc_nvml_fn.event_wait != NULL, "nvmlEventSetWait_v2");
  if (st == CUCORE_OK) st = cc_sys_need(fn, cc_nvml_fn.event_set_free != NULL, "nvmlEventSetFree");
  if (st != CUCORE_OK) return st;
  cucore_system_event_set *s = cc_calloc(1, sizeof *s, "an NVML event set");
  if (!s) return CUCORE_HOST_OUT_OF_MEMORY;
  cc_nvml_return r = cc_nvml_fn.event_set_create(&s->nvml);
  if (r != CC_NVML_SUCCESS) {
    free(s);
    return cc_fail_nvml(r, "nvmlEventSetCreate", "%s", fn);
  }
  cc_handle_init(s, CC_KIND_SYS_EVENTS);
  *out = s;
  return CUCORE_OK;
}

/* Refuses `types` with a bit device `ordinal` does not report, naming both. */
static cucore_status check_types(const char *fn, int ordinal, unsigned long long types,
                                 unsigned long long offered) {
  if (!(types & ~offered)) return CUCORE_OK;
  cc_sb asked = {0}, has = {0};
  types_text(types & ~offered, &asked);
  types_text(offered, &has);
  cucore_status st = cc_fail(CUCORE_INVALID_ARGUMENT,
                             "%s: device %d does not report the event types %s (it reports: %s)",
                             fn, ordinal, cc_sb_text(&asked), cc_sb_text(&has));
  cc_sb_free(&asked);
  cc_sb_free(&has);
  return st;
}

/* Remembers that device `ordinal` (NVML's `h`) is in the set. */
static cucore_status remember(cucore_system_event_set *set, cc_nvml_device h, int ordinal) {
  for (size_t i = 0; i < set->count; i++)
    if (set->devices[i].ordinal == ordinal) return CUCORE_OK;
  set_device *d = cc_grow(set->devices, &set->cap, set->count + 1, sizeof *d,
                          "the devices of an NVML event set");
  if (!d) return CUCORE_HOST_OUT_OF_MEMORY;
  set->devices = d;
  set->devices[set->count++] = (set_device){h, ordinal};
  return CUCORE_OK;
}

cucore_status cucore_system_event_set_add_device(cucore_system_event_set *set, int ordinal,
                                                 unsigned long long types) {
  static const char fn[] = "cucore_system_event_set_add_device";
  cc_begin();
  CC_CHECK_HANDLE(set, SYS_EVENTS, fn, "set");
  if (!types)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: `types` is 0; CUCORE_SYSTEM_EVENT_* bits are expected", fn);
  cc_nvml_device h = NULL;
  unsigned long long offered = 0;
  cucore_status st = cc_sys_handle(fn, ordinal, &h);
  if (st == CUCORE_OK) st = supported(fn, h, ordinal, &offered);
  if (st == CUCORE_OK) st = check_types(fn, ordinal, types, offered);
  if (st != CUCORE_OK) return st;
  cc_nvml_return r = cc_nvml_fn.register_events(h, types, set->nvml);
  if (r != CC_NVML_SUCCESS) {
    cc_sb asked = {0};
    types_text(types, &asked);
    st = cc_fail_nvml(r, "nvmlDeviceRegisterEvents", "%s: device %d, events %s", fn, ordinal,
                      cc_sb_text(&asked));
    cc_sb_free(&asked);
    return st;
  }
  return remember(set, h, ordinal);
}

static long long instance_or_minus(unsigned id) { return id == 0xffffffffu ? -1 : (long long)id; }

cucore_status cucore_system_event_set_wait(cucore_system_event_set *set, unsigned timeout_ms,
                                           cucore_system_event *out) {
  static const char fn[] = "cucore_system_event_set_wait";
  cc_begin();
  CC_CHECK_HANDLE(set, SYS_EVENTS, fn, "set");
  CC_CHECK_ARG(out, fn, "out");
  uint32_t version = out->version;
  if (version < 1 || version > CUCORE_SYSTEM_EVENT_VERSION)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: out->version is %u; set it to CUCORE_SYSTEM_EVENT_VERSION (1 to %u)", fn,
                   version, CUCORE_SYSTEM_EVENT_VERSION);
  cucore_system_event e = {version, -1, 0, 0, -1, -1};
  *out = e;
  if (!set->count)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: no device was added to the set (cucore_system_event_set_add_device); "
                   "the wait could only time out",
                   fn);
  cc_nvml_event got;
  memset(&got, 0, sizeof got);
  cc_nvml_return r = cc_nvml_fn.event_wait(set->nvml, &got, timeout_ms);
  if (r == CC_NVML_ERROR_TIMEOUT) return CUCORE_NOT_READY; /* no message, as a stream query */
  if (r != CC_NVML_SUCCESS)
    return cc_fail_nvml(r, "nvmlEventSetWait_v2", "%s: waiting %u ms", fn, timeout_ms);
  for (size_t i = 0; i < set->count; i++)
    if (set->devices[i].h == got.device) e.ordinal = set->devices[i].ordinal;
  e.type = got.type;
  e.data = got.data;
  e.gpu_instance = instance_or_minus(got.gpu_instance_id);
  e.compute_instance = instance_or_minus(got.compute_instance_id);
  *out = e;
  return CUCORE_OK;
}

cucore_status cucore_system_event_set_destroy(cucore_system_event_set *set) {
  cc_begin();
  if (!set) return CUCORE_OK;
  CC_CHECK_HANDLE(set, SYS_EVENTS, "cucore_system_event_set_destroy", "set");
  cc_nvml_return r = cc_nvml_fn.event_set_free(set->nvml);
  free(set->devices);
  cc_handle_retire(set, CC_KIND_SYS_EVENTS);
  if (r != CC_NVML_SUCCESS)
    return cc_fail_nvml(r, "nvmlEventSetFree", "cucore_system_event_set_destroy");
  return CUCORE_OK;
}
