/*
 * system_topo.c -- how two GPUs are connected, as NVML sees it: the topology level of their
 * nearest common ancestor (nvmlDeviceGetTopologyCommonAncestor) and the peer-to-peer status
 * of each kind of access (nvmlDeviceGetP2PStatus), with their names.
 */
#define _GNU_SOURCE
#include "runtime/system_map.h"

const char *cucore_system_topology_name(cucore_system_topology level) {
  switch (level) {
  case CUCORE_TOPOLOGY_INTERNAL: return "internal";
  case CUCORE_TOPOLOGY_SINGLE: return "single";
  case CUCORE_TOPOLOGY_MULTIPLE: return "multiple";
  case CUCORE_TOPOLOGY_HOSTBRIDGE: return "hostbridge";
  case CUCORE_TOPOLOGY_NODE: return "node";
  case CUCORE_TOPOLOGY_SYSTEM: return "system";
  }
  return "unknown";
}

const char *cucore_system_p2p_status_name(cucore_system_p2p_status status) {
  switch (status) {
  case CUCORE_P2P_OK: return "ok";
  case CUCORE_P2P_CHIPSET_NOT_SUPPORTED: return "chipset_not_supported";
  case CUCORE_P2P_GPU_NOT_SUPPORTED: return "gpu_not_supported";
  case CUCORE_P2P_IOH_TOPOLOGY_NOT_SUPPORTED: return "ioh_topology_not_supported";
  case CUCORE_P2P_DISABLED_BY_REGKEY: return "disabled_by_regkey";
  case CUCORE_P2P_NOT_SUPPORTED: return "not_supported";
  case CUCORE_P2P_UNKNOWN: return "unknown";
  }
  return "unknown";
}

cucore_status cucore_system_get_topology(int a, int b, cucore_system_topology *out) {
  static const char fn[] = "cucore_system_get_topology";
  cc_begin();
  CC_CHECK_ARG(out, fn, "out");
  cc_nvml_device ha = NULL, hb = NULL;
  cucore_status st = cc_sys_pair(fn, a, b, &ha, &hb);
  if (st == CUCORE_OK)
    st = cc_sys_need(fn, cc_nvml_fn.topology != NULL, "nvmlDeviceGetTopologyCommonAncestor");
  if (st != CUCORE_OK) return st;
  int level = -1;
  cc_nvml_return r = cc_nvml_fn.topology(ha, hb, &level);
  if (r != CC_NVML_SUCCESS)
    return cc_fail_nvml(r, "nvmlDeviceGetTopologyCommonAncestor", "%s: devices %d and %d", fn, a,
                        b);
  if (level < 0 || level > CUCORE_TOPOLOGY_SYSTEM || level % 10)
    return cc_fail(CUCORE_DRIVER_ERROR,
                   "%s: NVML gave topology level %d between devices %d and %d, which no "
                   "cucore_system_topology names (0, 10, ..., 50)",
                   fn, level, a, b);
  *out = (cucore_system_topology)level;
  return CUCORE_OK;
}

/* NVML's index (nvmlGpuP2PCapsIndex_t) of each field of cucore_system_p2p. */
enum { P2P_READ = 0, P2P_WRITE = 1, P2P_NVLINK = 2, P2P_ATOMICS = 3, P2P_PCI = 4 };

/* One kind's status into *status: NOT_SUPPORTED for the index is UNKNOWN. */
static cucore_status p2p_one(const char *fn, cc_nvml_device ha, cc_nvml_device hb, int index,
                             const char *kind, cucore_system_p2p_status *status) {
  int v = CUCORE_P2P_UNKNOWN;
  cc_nvml_return r = cc_nvml_fn.p2p_status(ha, hb, index, &v);
  if (r == CC_NVML_ERROR_NOT_SUPPORTED)
    v = CUCORE_P2P_UNKNOWN;
  else if (r != CC_NVML_SUCCESS)
    return cc_fail_nvml(r, "nvmlDeviceGetP2PStatus", "%s: the %s status", fn, kind);
  *status = v < CUCORE_P2P_OK || v > CUCORE_P2P_UNKNOWN ? CUCORE_P2P_UNKNOWN
                                                        : (cucore_system_p2p_status)v;
  return CUCORE_OK;
}

cucore_status cucore_system_get_p2p(int a, int b, cucore_system_p2p *out) {
  static const char fn[] = "cucore_system_get_p2p";
  cc_begin();
  CC_CHECK_ARG(out, fn, "out");
  uint32_t version = out->version;
  if (version < 1 || version > CUCORE_SYSTEM_P2P_VERSION)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: out->version is %u; set it to CUCORE_SYSTEM_P2P_VERSION (1 to %u)", fn,
                   version, CUCORE_SYSTEM_P2P_VERSION);
  cucore_system_p2p p = {version,
                         CUCORE_P2P_UNKNOWN,
                         CUCORE_P2P_UNKNOWN,
                         CUCORE_P2P_UNKNOWN,
                         CUCORE_P2P_UNKNOWN,
                         CUCORE_P2P_UNKNOWN};
  *out = p;
  cc_nvml_device ha = NULL, hb = NULL;
  cucore_status st = cc_sys_pair(fn, a, b, &ha, &hb);
  if (st == CUCORE_OK)
    st = cc_sys_need(fn, cc_nvml_fn.p2p_status != NULL, "nvmlDeviceGetP2PStatus");
  if (st == CUCORE_OK) st = p2p_one(fn, ha, hb, P2P_READ, "read", &p.read);
  if (st == CUCORE_OK) st = p2p_one(fn, ha, hb, P2P_WRITE, "write", &p.write);
  if (st == CUCORE_OK) st = p2p_one(fn, ha, hb, P2P_NVLINK, "NVLink", &p.nvlink);
  if (st == CUCORE_OK) st = p2p_one(fn, ha, hb, P2P_ATOMICS, "atomics", &p.atomics);
  if (st == CUCORE_OK) st = p2p_one(fn, ha, hb, P2P_PCI, "PCIe (prop)", &p.prop);
  if (st != CUCORE_OK) return st;
  *out = p;
  return CUCORE_OK;
}
