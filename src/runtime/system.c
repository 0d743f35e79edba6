/*
 * system.c -- cucore_system_*: what NVML (loader/nvml.c) says of a GPU now. A cucore device is
 * found in NVML by its PCI bus id (cuDeviceGetPCIBusId), else by its UUID (system_map.c); a
 * fact NVML does not offer on the GPU is -1, so one missing query never hides the others. The
 * driver, processes, topology, affinity and events have files of their own (system_*.c).
 */
#define _GNU_SOURCE
#include "runtime/system_map.h"
#include "runtime/runtime.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

/* Reads a clock into *mhz (left -1 when not offered). */
static void read_clock(cc_nvml_device h, int which, int max, int *mhz) {
  unsigned v = 0;
  cc_nvml_return (*fn)(cc_nvml_device, int, unsigned *) = max ? cc_nvml_fn.max_clock
                                                              : cc_nvml_fn.clock;
  if (fn && fn(h, which, &v) == CC_NVML_SUCCESS) *mhz = (int)v;
}

static void read_unsigned(cc_nvml_return (*fn)(cc_nvml_device, unsigned *), cc_nvml_device h,
                          int *out) {
  unsigned v = 0;
  if (fn && fn(h, &v) == CC_NVML_SUCCESS) *out = (int)v;
}

static void read_links(cc_nvml_device h, cucore_system_info *out) {
  if (!cc_nvml_fn.nvlink_state) return;
  for (unsigned link = 0; link < CC_NVML_NVLINK_MAX_LINKS; link++) {
    int active = 0;
    if (cc_nvml_fn.nvlink_state(h, link, &active) != CC_NVML_SUCCESS) continue;
    out->nvlink_links = out->nvlink_links < 0 ? 1 : out->nvlink_links + 1;
    if (out->nvlink_active < 0) out->nvlink_active = 0;
    if (active) {
      out->nvlink_active++;
      out->nvlink_active_mask |= 1u << link;
    }
  }
}

/* Identity: UUID, name, PCI. */
static void read_identity(cc_nvml_device h, cucore_system_info *out) {
  char text[96];
  if (cc_nvml_fn.uuid(h, text, sizeof text) == CC_NVML_SUCCESS)
    cc_escape_text(out->uuid, sizeof out->uuid, text, strnlen(text, sizeof text));
  if (cc_nvml_fn.name && cc_nvml_fn.name(h, text, sizeof text) == CC_NVML_SUCCESS)
    cc_escape_text(out->name, sizeof out->name, text, strnlen(text, sizeof text));
  cc_nvml_pci pci;
  memset(&pci, 0, sizeof pci);
  if (cc_nvml_fn.pci && cc_nvml_fn.pci(h, &pci) == CC_NVML_SUCCESS) {
    cc_escape_text(out->pci_bus_id, sizeof out->pci_bus_id, pci.bus_id,
                   strnlen(pci.bus_id, sizeof pci.bus_id));
    out->pci_device_id = pci.pci_device_id;
  }
}

/* Every fact NVML offers of `h`. */
static void read_all(cc_nvml_device h, cucore_system_info *out) {
  read_identity(h, out);
  read_clock(h, CC_NVML_CLOCK_SM, 0, &out->sm_clock_mhz);
  read_clock(h, CC_NVML_CLOCK_SM, 1, &out->sm_clock_max_mhz);
  read_clock(h, CC_NVML_CLOCK_MEM, 0, &out->mem_clock_mhz);
  read_clock(h, CC_NVML_CLOCK_MEM, 1, &out->mem_clock_max_mhz);
  read_clock(h, CC_NVML_CLOCK_GRAPHICS, 0, &out->graphics_clock_mhz);
  unsigned v = 0;
  if (cc_nvml_fn.temperature &&
      cc_nvml_fn.temperature(h, CC_NVML_TEMPERATURE_GPU, &v) == CC_NVML_SUCCESS)
    out->temperature_c = (int)v;
  read_unsigned(cc_nvml_fn.power, h, &out->power_mw);
  read_unsigned(cc_nvml_fn.power_limit, h, &out->power_limit_mw);
  cc_nvml_utilization u;
  if (cc_nvml_fn.utilization && cc_nvml_fn.utilization(h, &u) == CC_NVML_SUCCESS) {
    out->gpu_util_pct = (int)u.gpu;
    out->mem_util_pct = (int)u.memory;
  }
  unsigned long long reasons = 0;
  if (cc_nvml_fn.reasons && cc_nvml_fn.reasons(h, &reasons) == CC_NVML_SUCCESS)
    out->clock_reasons = (long long)reasons;
  unsigned cur = 0, pend = 0;
  if (cc_nvml_fn.mig_mode && cc_nvml_fn.mig_mode(h, &cur, &pend) == CC_NVML_SUCCESS) {
    out->mig_current = (int)cur;
    out->mig_pending = (int)pend;
  }
  read_links(h, out);
}

/* Every number unknown until read. */
static void clear_info(cucore_system_info *out) {
  memset(out, 0, sizeof *out);
  out->ordinal = -1;
  out->pci_device_id = out->clock_reasons = -1;
  int *nums[] = {&out->sm_clock_mhz,      &out->sm_clock_max_mhz,   &out->mem_clock_mhz,
                 &out->mem_clock_max_mhz, &out->graphics_clock_mhz, &out->temperature_c,
                 &out->power_mw,          &out->power_limit_mw,     &out->gpu_util_pct,
                 &out->mem_util_pct,      &out->mig_current,        &out->mig_pending,
                 &out->nvlink_links,      &out->nvlink_active};
  for (size_t i = 0; i < CC_ARRAY_LEN(nums); i++) *nums[i] = -1;
}

cucore_status cucore_system_get_device_info(int ordinal, cucore_system_info *out) {
  cc_begin();
  CC_CHECK_ARG(out, "cucore_system_get_device_info", "out");
  clear_info(out);
  cc_nvml_device h = NULL;
  cucore_status st = cc_sys_handle("cucore_system_get_device_info", ordinal, &h);
  if (st != CUCORE_OK) return st;
  read_all(h, out);
  out->ordinal = ordinal;
  return CUCORE_OK;
}

cucore_status cucore_system_get_clock(int ordinal, int *sm_clock_mhz, long long *clock_reasons) {
  cc_begin();
  if (sm_clock_mhz) *sm_clock_mhz = -1;
  if (clock_reasons) *clock_reasons = -1;
  cc_nvml_device h = NULL;
  cucore_status st = cc_sys_handle("cucore_system_get_clock", ordinal, &h);
  if (st != CUCORE_OK) return st;
  if (sm_clock_mhz) read_clock(h, CC_NVML_CLOCK_SM, 0, sm_clock_mhz);
  unsigned long long reasons = 0;
  if (clock_reasons && cc_nvml_fn.reasons && cc_nvml_fn.reasons(h, &reasons) == CC_NVML_SUCCESS)
    *clock_reasons = (long long)reasons;
  return CUCORE_OK;
}

/* The cucore ordinal of the GPU at NVML PCI bus id `bus` (-1 when none, or no driver). With
 * `may_load` 0 the driver is asked only when its load is over (no wait for another thread's
 * cuInit). */
static int ordinal_of_bus(const char *bus, int may_load) {
  unsigned dom = 0, b = 0, dev = 0;
  if (!bus[0] || !(may_load ? cc_driver_ready() : cc_driver_ready_now()) ||
      sscanf(bus, "%x:%x:%x", &dom, &b, &dev) != 3)
    return -1;
  for (int i = 0; i < cc_drv.device_count; i++) {
    CUdevice d;
    char mine[64];
    unsigned dom2 = 0, b2 = 0, dev2 = 0;
    if (DRV(cuDeviceGet)(&d, i) != CUDA_SUCCESS || !DRV(cuDeviceGetPCIBusId) ||
        DRV(cuDeviceGetPCIBusId)(mine, sizeof mine, d) != CUDA_SUCCESS)
      continue;
    if (sscanf(mine, "%x:%x:%x", &dom2, &b2, &dev2) == 3 && dom == dom2 && b == b2 && dev == dev2)
      return i;
  }
  return -1;
}

cucore_status cucore_system_get_info_by_uuid(const char *uuid, cucore_system_info *out) {
  cc_begin();
  CC_CHECK_ARG(out, "cucore_system_get_info_by_uuid", "out");
  clear_info(out);
  CC_CHECK_ARG(uuid, "cucore_system_get_info_by_uuid", "uuid");
  char full[64];
  snprintf(full, sizeof full, "%s%s",
           strncmp(uuid, "GPU-", 4) && strncmp(uuid, "MIG-", 4) ? "GPU-" : "", uuid);
  cucore_status st = cc_nvml_load();
  if (st != CUCORE_OK) return st;
  cc_nvml_device h = NULL;
  cc_nvml_return r = cc_nvml_fn.by_uuid(full, &h);
  if (r != CC_NVML_SUCCESS) {
    char shown[80];
    cc_escape_text(shown, sizeof shown, uuid, strlen(uuid));
    return cc_fail_nvml(r == CC_NVML_ERROR_INVALID_ARGUMENT ? CC_NVML_ERROR_NOT_FOUND : r,
                        "nvmlDeviceGetHandleByUUID", "no GPU has the UUID `%s`", shown);
  }
  read_all(h, out);
  out->ordinal = ordinal_of_bus(out->pci_bus_id, 1);
  return CUCORE_OK;
}

cucore_status cucore_system_get_count(int *count) {
  cc_begin();
  CC_CHECK_ARG(count, "cucore_system_get_count", "count");
  *count = 0;
  cucore_status st = cc_nvml_load();
  if (st != CUCORE_OK) return st;
  if (!cc_nvml_fn.count)
    return cc_fail(CUCORE_NOT_SUPPORTED,
                   "cucore_system_get_count: this NVML has no nvmlDeviceGetCount_v2");
  unsigned n = 0;
  cc_nvml_return r = cc_nvml_fn.count(&n);
  if (r != CC_NVML_SUCCESS) return cc_fail_nvml(r, "nvmlDeviceGetCount_v2", "counting GPUs");
  *count = n > INT_MAX ? INT_MAX : (int)n;
  return CUCORE_OK;
}

cucore_status cucore_system_get_info_by_index(int index, cucore_system_info *out) {
  cc_begin();
  CC_CHECK_ARG(out, "cucore_system_get_info_by_index", "out");
  clear_info(out);
  int n = 0;
  cucore_status st = cucore_system_get_count(&n);
  if (st != CUCORE_OK) return st;
  if (!cc_nvml_fn.by_index)
    return cc_fail(CUCORE_NOT_SUPPORTED, "cucore_system_get_info_by_index: this NVML has no "
                                         "nvmlDeviceGetHandleByIndex_v2");
  if (index < 0 || index >= n)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "cucore_system_get_info_by_index: NVML lists %d GPU%s, so index %d does not "
                   "exist (expected 0 to %d)",
                   n, n == 1 ? "" : "s", index, n - 1);
  cc_nvml_device h = NULL;
  cc_nvml_return r = cc_nvml_fn.by_index((unsigned)index, &h);
  if (r != CC_NVML_SUCCESS)
    return cc_fail_nvml(r, "nvmlDeviceGetHandleByIndex_v2", "NVML's GPU %d", index);
  read_all(h, out);
  out->ordinal = ordinal_of_bus(out->pci_bus_id, 0);
  return CUCORE_OK;
}

static const struct {
  long long bit;
  const char *name;
} reason_names[] = {
    {CUCORE_CLOCK_REASON_GPU_IDLE, "gpu_idle"},
    {CUCORE_CLOCK_REASON_APPLICATIONS_CLOCKS, "applications_clocks"},
    {CUCORE_CLOCK_REASON_SW_POWER_CAP, "sw_power_cap"},
    {CUCORE_CLOCK_REASON_HW_SLOWDOWN, "hw_slowdown"},
    {CUCORE_CLOCK_REASON_SYNC_BOOST, "sync_boost"},
    {CUCORE_CLOCK_REASON_SW_THERMAL, "sw_thermal"},
    {CUCORE_CLOCK_REASON_HW_THERMAL, "hw_thermal"},
    {CUCORE_CLOCK_REASON_HW_POWER_BRAKE, "hw_power_brake"},
    {CUCORE_CLOCK_REASON_DISPLAY_CLOCKS, "display_clocks"},
};

cucore_status cucore_system_load(void) { return cc_nvml_load(); }

cucore_status cucore_system_reasons_text(long long reasons, char *buf, size_t cap) {
  cc_begin();
  CC_CHECK_ARG(buf, "cucore_system_reasons_text", "buf");
  if (cap == 0) return cc_fail(CUCORE_INVALID_ARGUMENT, "cucore_system_reasons_text: `cap` is 0");
  size_t o = 0;
  buf[0] = '\0';
  long long rest = reasons;
  for (size_t i = 0; i < CC_ARRAY_LEN(reason_names) && o < cap; i++)
    if (reasons & reason_names[i].bit) {
      o += (size_t)snprintf(buf + o, cap - o, "%s%s", o ? ", " : "", reason_names[i].name);
      rest &= ~reason_names[i].bit;
    }
  if (rest && o < cap)
    o += (size_t)snprintf(buf + o, cap - o, "%s0x%llx", o ? ", " : "", (unsigned long long)rest);
  if (!reasons) snprintf(buf, cap, "none");
  return CUCORE_OK;
}
