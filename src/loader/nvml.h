/*
 * loader/nvml.h -- NVML (libnvidia-ml.so.1), loaded at run time like the driver: the few
 * types and entry points cucore uses, declared here (the toolkit ships no nvml.h; the layouts
 * are NVML's, unchanged since NVML 11). Only nvml.c and runtime/system*.c use it.
 */
#ifndef CUCORE_LOADER_NVML_H
#define CUCORE_LOADER_NVML_H

#include "base/base.h"

typedef int cc_nvml_return;                       /* nvmlReturn_t */
typedef struct cc_nvml_device_st *cc_nvml_device; /* nvmlDevice_t */

#define CC_NVML_SUCCESS 0
#define CC_NVML_ERROR_INVALID_ARGUMENT 2
#define CC_NVML_ERROR_NOT_SUPPORTED 3
#define CC_NVML_ERROR_NO_PERMISSION 4
#define CC_NVML_ERROR_NOT_FOUND 6
#define CC_NVML_ERROR_INSUFFICIENT_SIZE 7
#define CC_NVML_ERROR_TIMEOUT 10
#define CC_NVML_ERROR_FUNCTION_NOT_FOUND 13

#define CC_NVML_CLOCK_GRAPHICS 0 /* nvmlClockType_t */
#define CC_NVML_CLOCK_SM 1
#define CC_NVML_CLOCK_MEM 2
#define CC_NVML_TEMPERATURE_GPU 0 /* nvmlTemperatureSensors_t */
#define CC_NVML_NVLINK_MAX_LINKS 18

typedef struct cc_nvml_pci { /* nvmlPciInfo_t (nvmlDeviceGetPciInfo_v3) */
  char bus_id_legacy[16];
  unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
  char bus_id[32];
} cc_nvml_pci;

typedef struct cc_nvml_utilization { /* nvmlUtilization_t */
  unsigned gpu, memory;
} cc_nvml_utilization;

/* Driver branch (nvmlSystemDriverBranchInfo_v1_t); its version word is NVML_STRUCT_VERSION:
 * the struct's size | 1 << 24. */
#define CC_NVML_DRIVER_TEXT 80 /* NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE */
typedef struct cc_nvml_branch {
  unsigned version;
  char branch[CC_NVML_DRIVER_TEXT];
} cc_nvml_branch;
#define CC_NVML_BRANCH_V1 ((unsigned)sizeof(cc_nvml_branch) | (1u << 24))

typedef struct cc_nvml_process { /* nvmlProcessInfo_t (v2 layout, the _v3 queries') */
  unsigned pid;
  unsigned long long used_memory;                /* NVML_VALUE_NOT_AVAILABLE: all ones */
  unsigned gpu_instance_id, compute_instance_id; /* 0xFFFFFFFF without MIG */
} cc_nvml_process;

typedef struct cc_nvml_event_set_st *cc_nvml_event_set; /* nvmlEventSet_t */
typedef struct cc_nvml_event {                          /* nvmlEventData_t */
  cc_nvml_device device;
  unsigned long long type, data; /* eventType; eventData (the XID of an XID event) */
  unsigned gpu_instance_id, compute_instance_id;
} cc_nvml_event;

#define CC_NVML_AFFINITY_SCOPE_NODE 0 /* nvmlAffinityScope_t */
#define CC_NVML_AFFINITY_SCOPE_SOCKET 1

/* The entry points: X(field, symbol, required, return type, parameters). The clock-event
 * reasons have two names (ThrottleReasons before NVML 12.2); nvml.c tries both. */
#define CC_NVML_FUNCS(X)                                                                           \
  X(init, "nvmlInit_v2", 1, cc_nvml_return, (void))                                                \
  X(error_string, "nvmlErrorString", 1, const char *, (cc_nvml_return))                            \
  X(by_pci, "nvmlDeviceGetHandleByPciBusId_v2", 1, cc_nvml_return,                                 \
    (const char *, cc_nvml_device *))                                                              \
  X(by_uuid, "nvmlDeviceGetHandleByUUID", 1, cc_nvml_return, (const char *, cc_nvml_device *))     \
  X(count, "nvmlDeviceGetCount_v2", 0, cc_nvml_return, (unsigned *))                               \
  X(by_index, "nvmlDeviceGetHandleByIndex_v2", 0, cc_nvml_return, (unsigned, cc_nvml_device *))    \
  X(uuid, "nvmlDeviceGetUUID", 1, cc_nvml_return, (cc_nvml_device, char *, unsigned))              \
  X(name, "nvmlDeviceGetName", 0, cc_nvml_return, (cc_nvml_device, char *, unsigned))              \
  X(clock, "nvmlDeviceGetClockInfo", 0, cc_nvml_return, (cc_nvml_device, int, unsigned *))         \
  X(max_clock, "nvmlDeviceGetMaxClockInfo", 0, cc_nvml_return, (cc_nvml_device, int, unsigned *))  \
  X(temperature, "nvmlDeviceGetTemperature", 0, cc_nvml_return, (cc_nvml_device, int, unsigned *)) \
  X(power, "nvmlDeviceGetPowerUsage", 0, cc_nvml_return, (cc_nvml_device, unsigned *))             \
  X(power_limit, "nvmlDeviceGetEnforcedPowerLimit", 0, cc_nvml_return,                             \
    (cc_nvml_device, unsigned *))                                                                  \
  X(utilization, "nvmlDeviceGetUtilizationRates", 0, cc_nvml_return,                               \
    (cc_nvml_device, cc_nvml_utilization *))                                                       \
  X(reasons, "nvmlDeviceGetCurrentClocksEventReasons", 0, cc_nvml_return,                          \
    (cc_nvml_device, unsigned long long *))                                                        \
  X(pci, "nvmlDeviceGetPciInfo_v3", 0, cc_nvml_return, (cc_nvml_device, cc_nvml_pci *))            \
  X(mig_mode, "nvmlDeviceGetMigMode", 0, cc_nvml_return, (cc_nvml_device, unsigned *, unsigned *)) \
  X(nvlink_state, "nvmlDeviceGetNvLinkState", 0, cc_nvml_return,                                   \
    (cc_nvml_device, unsigned, int *))                                                             \
  CC_NVML_EXTRA_FUNCS(X)

/* Driver, processes, topology, affinity and events: every one optional, refused by name where
 * the loaded NVML lacks it (nvmlSystemGetDriverBranch came with NVML 12.6). */
#define CC_NVML_EXTRA_FUNCS(X)                                                                   \
  X(driver_version, "nvmlSystemGetDriverVersion", 0, cc_nvml_return, (char *, unsigned))         \
  X(driver_branch, "nvmlSystemGetDriverBranch", 0, cc_nvml_return, (cc_nvml_branch *, unsigned)) \
  X(compute_procs, "nvmlDeviceGetComputeRunningProcesses_v3", 0, cc_nvml_return,                 \
    (cc_nvml_device, unsigned *, cc_nvml_process *))                                             \
  X(graphics_procs, "nvmlDeviceGetGraphicsRunningProcesses_v3", 0, cc_nvml_return,               \
    (cc_nvml_device, unsigned *, cc_nvml_process *))                                             \
  X(topology, "nvmlDeviceGetTopologyCommonAncestor", 0, cc_nvml_return,                          \
    (cc_nvml_device, cc_nvml_device, int *))                                                     \
  X(p2p_status, "nvmlDeviceGetP2PStatus", 0, cc_nvml_return,                                     \
    (cc_nvml_device, cc_nvml_device, int, int *))                                                \
  X(cpu_affinity, "nvmlDeviceGetCpuAffinity", 0, cc_nvml_return,                                 \
    (cc_nvml_device, unsigned, unsigned long *))                                                 \
  X(memory_affinity, "nvmlDeviceGetMemoryAffinity", 0, cc_nvml_return,                           \
    (cc_nvml_device, unsigned, unsigned long *, unsigned))                                       \
  X(event_set_create, "nvmlEventSetCreate", 0, cc_nvml_return, (cc_nvml_event_set *))            \
  X(register_events, "nvmlDeviceRegisterEvents", 0, cc_nvml_return,                              \
    (cc_nvml_device, unsigned long long, cc_nvml_event_set))                                     \
  X(supported_events, "nvmlDeviceGetSupportedEventTypes", 0, cc_nvml_return,                     \
    (cc_nvml_device, unsigned long long *))                                                      \
  X(event_wait, "nvmlEventSetWait_v2", 0, cc_nvml_return,                                        \
    (cc_nvml_event_set, cc_nvml_event *, unsigned))                                              \
  X(event_set_free, "nvmlEventSetFree", 0, cc_nvml_return, (cc_nvml_event_set))

typedef struct cc_nvml {
#define CC_NVML_FIELD(field, symbol, required, ret, params) ret(*field) params;
  CC_NVML_FUNCS(CC_NVML_FIELD)
#undef CC_NVML_FIELD
} cc_nvml;

/* The loaded table (valid after cc_nvml_load succeeded; optional entries may be NULL). */
extern cc_nvml cc_nvml_fn;

/* Loads NVML once (CUCORE_LIBNVML names the library, else libnvidia-ml.so.1) and initialises
 * it. Failure, restated on every call: CUCORE_NOT_SUPPORTED naming what was tried and why. */
cucore_status cc_nvml_load(void);
/* An NVML failure: the code (NOT_SUPPORTED, NOT_FOUND, INVALID_ARGUMENT, else DRIVER_ERROR),
 * naming `call`, NVML's code and text, then the caller's context. */
cucore_status cc_fail_nvml(cc_nvml_return r, const char *call, const char *fmt, ...)
    CC_PRINTF(3, 4);
/* CUCORE_NOT_SUPPORTED for an optional entry point the loaded NVML lacks (`fn` the public
 * call, `symbol` NVML's name), naming both and the library's path. */
cucore_status cc_nvml_missing(const char *fn, const char *symbol);

#endif
