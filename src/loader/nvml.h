/*
 * loader/nvml.h -- NVML (libnvidia-ml.so.1), loaded at run time like the driver: the few
 * types and entry points cucore uses, declared here (the toolkit ships no nvml.h; the layouts
 * are NVML's, unchanged since NVML 11). Only nvml.c and runtime/system.c use it.
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
  X(nvlink_state, "nvmlDeviceGetNvLinkState", 0, cc_nvml_return, (cc_nvml_device, unsigned, int *))

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

#endif
