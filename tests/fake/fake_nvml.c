/* fake_nvml.c -- a fake NVML (libnvidia-ml.so.1) for CPU tests of cucore_system_* and the
 * command's use of it. Load it with CUCORE_LIBNVML. It knows one GPU, the fake
 * driver's (UUID of bytes 0x5a, PCI bus 0x19), with fixed clocks (SM 1755 of 1980 MHz, memory
 * 2619 of 2619), 41 C, 123.456 W of a 700 W limit, utilisation 37 % / 12 %, no MIG, 18 NVLinks
 * of which link 17 is down. CUCORE_FAKE_NVML_REASONS (a number) sets the clock-event reasons
 * (default 0x1, idle); CUCORE_FAKE_NVML_INIT_FAIL=1 makes nvmlInit_v2 fail;
 * CUCORE_FAKE_NVML_NO_LOOKUP=1 finds the GPU only by index. Its error text
 * carries a control character, as a hostile library's might.
 * CUCORE_FAKE_NVML_GPUS=2 adds a second GPU (for topology and P2P). The kernel-mode driver is
 * 580.95.05 on branch r580_00 (built with FAKE_NVML_OLD: an NVML without
 * nvmlSystemGetDriverBranch). GPU 0 runs CUCORE_FAKE_NVML_PROCS compute processes (default 40:
 * more than a first buffer of 16), the first the caller itself, and two graphics processes;
 * the first answer that a buffer is short says one more than it holds, the later ones the truth.
 * Between the two GPUs: topology "multiple" (20), P2P read/write/NVLink ok, atomics
 * gpu_not_supported, the PCI index not answered. CPUs near GPU 0: {0}; GPU 1: {0, 1, 1023,
 * 1100} (filling the last word of a 1024-CPU mask, and past it); NUMA nodes: {0} and {1, 63, 70}
 * ({0, 1} by socket). Events: the types
 * 0x1f; registering XID with CUCORE_FAKE_NVML_XID=N set queues one XID N event; a wait with
 * nothing queued sleeps (at most 100 ms) and times out. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

typedef int nvmlReturn_t;
typedef struct fake_nvml_device {
  int id;
} * nvmlDevice_t;
typedef struct nvmlPciInfo_st {
  char busIdLegacy[16];
  unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
} nvmlPciInfo_t;
typedef struct nvmlUtilization_st {
  unsigned gpu, memory;
} nvmlUtilization_t;

static struct fake_nvml_device the_gpu = {0}, second_gpu = {1};
static const char uuid[] = "GPU-5a5a5a5a-5a5a-5a5a-5a5a-5a5a5a5a5a5a";
static const char uuid1[] = "GPU-5a5a5a5a-5a5a-5a5a-5a5a-5a5a5a5a5a01"; /* the fake driver's 1 */

/* CUCORE_FAKE_NVML_GPUS=2: a second GPU (NVML index 1, PCI bus 0x1a, the fake driver's
 * device 1 by UUID). */
static int two_gpus(void) {
  const char *v = getenv("CUCORE_FAKE_NVML_GPUS");
  return v && v[0] == '2';
}

EXPORT nvmlReturn_t nvmlInit_v2(void);
EXPORT const char *nvmlErrorString(nvmlReturn_t r);
EXPORT nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char *bus, nvmlDevice_t *d);
EXPORT nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *u, nvmlDevice_t *d);
EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned *n);
EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned i, nvmlDevice_t *d);
EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char *out, unsigned n);
EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char *out, unsigned n);
EXPORT nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, int type, unsigned *mhz);
EXPORT nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t d, int type, unsigned *mhz);
EXPORT nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor, unsigned *c);
EXPORT nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned *mw);
EXPORT nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t d, unsigned *mw);
EXPORT nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t *u);
EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t d, unsigned long long *r);
EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t *p);
EXPORT nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t d, unsigned *cur, unsigned *pend);
EXPORT nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t d, unsigned link, int *active);

EXPORT nvmlReturn_t nvmlInit_v2(void) {
  const char *f = getenv("CUCORE_FAKE_NVML_INIT_FAIL");
  return f && f[0] == '1' ? 9 /* NVML_ERROR_DRIVER_NOT_LOADED */ : 0;
}
EXPORT const char *nvmlErrorString(nvmlReturn_t r) {
  return r == 6 ? "Not Found\a" : r == 9 ? "Driver Not Loaded" : "fake NVML error";
}
/* CUCORE_FAKE_NVML_NO_LOOKUP=1: no GPU is found by PCI bus id or UUID (only by index). */
static int no_lookup(void) {
  const char *v = getenv("CUCORE_FAKE_NVML_NO_LOOKUP");
  return v && v[0] == '1';
}
EXPORT nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char *bus, nvmlDevice_t *d) {
  unsigned dom = 0, b = 0, dev = 0;
  if (no_lookup()) return 6;
  if (!bus || sscanf(bus, "%x:%x:%x", &dom, &b, &dev) != 3) return 2;
  if (dom == 0 && b == 0x1a && dev == 0 && two_gpus()) {
    *d = &second_gpu;
    return 0;
  }
  if (dom != 0 || b != 0x19 || dev != 0) return 6;
  *d = &the_gpu;
  return 0;
}
EXPORT nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *u, nvmlDevice_t *d) {
  if (no_lookup()) return 6;
  if (!u || strncmp(u, "GPU-", 4) != 0) return 2;
  if (two_gpus() && strcmp(u, uuid1) == 0) {
    *d = &second_gpu;
    return 0;
  }
  if (strcmp(u, uuid) != 0) return 6;
  *d = &the_gpu;
  return 0;
}
EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned *n) {
  if (!n) return 2;
  *n = two_gpus() ? 2 : 1;
  return 0;
}
EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned i, nvmlDevice_t *d) {
  if (!d) return 2;
  if (i == 1 && two_gpus()) {
    *d = &second_gpu;
    return 0;
  }
  if (i != 0) return 2; /* NVML_ERROR_INVALID_ARGUMENT past the count */
  *d = &the_gpu;
  return 0;
}
EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char *out, unsigned n) {
  if (d != &the_gpu && d != &second_gpu) return 2;
  if (n < sizeof uuid) return 7;
  memcpy(out, d == &second_gpu ? uuid1 : uuid, sizeof uuid);
  return 0;
}
EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char *out, unsigned n) {
  (void)d;
  snprintf(out, n, "cucore fake H100");
  return 0;
}
EXPORT nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, int type, unsigned *mhz) {
  (void)d;
  *mhz = type == 2 ? 2619 : 1755;
  return type <= 2 ? 0 : 2;
}
EXPORT nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t d, int type, unsigned *mhz) {
  (void)d;
  *mhz = type == 2 ? 2619 : 1980;
  return type <= 2 ? 0 : 2;
}
EXPORT nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor, unsigned *c) {
  (void)d;
  *c = 41;
  return sensor == 0 ? 0 : 2;
}
EXPORT nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned *mw) {
  (void)d;
  *mw = 123456;
  return 0;
}
EXPORT nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t d, unsigned *mw) {
  (void)d;
  *mw = 700000;
  return 0;
}
EXPORT nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t *u) {
  (void)d;
  u->gpu = 37;
  u->memory = 12;
  return 0;
}
EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t d, unsigned long long *r) {
  (void)d;
  const char *v = getenv("CUCORE_FAKE_NVML_REASONS");
  *r = v && v[0] ? strtoull(v, NULL, 0) : 0x1;
  return 0;
}
EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t *p) {
  memset(p, 0, sizeof *p);
  p->bus = d == &second_gpu ? 0x1a : 0x19;
  snprintf(p->busIdLegacy, sizeof p->busIdLegacy, "0000:%02x:00.0", p->bus);
  snprintf(p->busId, sizeof p->busId, "00000000:%02x:00.0", p->bus);
  p->pciDeviceId = 0x233010de;
  return 0;
}
EXPORT nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t d, unsigned *cur, unsigned *pend) {
  (void)d, (void)cur, (void)pend;
  return 3; /* NVML_ERROR_NOT_SUPPORTED */
}
EXPORT nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t d, unsigned link, int *active) {
  (void)d;
  if (link >= 18) return 2;
  *active = link != 17;
  return 0;
}

/* ---- the kernel-mode driver --------------------------------------------------------------- */
typedef struct nvmlSystemDriverBranchInfo_v1_st {
  unsigned version;
  char branch[80];
} nvmlSystemDriverBranchInfo_t;

EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char *out, unsigned n);
EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char *out, unsigned n) {
  static const char v[] = "580.95.05";
  if (!out) return 2;
  if (n < sizeof v) return 7;
  memcpy(out, v, sizeof v);
  return 0;
}
#ifndef FAKE_NVML_OLD
EXPORT nvmlReturn_t nvmlSystemGetDriverBranch(nvmlSystemDriverBranchInfo_t *b, unsigned n);
EXPORT nvmlReturn_t nvmlSystemGetDriverBranch(nvmlSystemDriverBranchInfo_t *b, unsigned n) {
  if (!b) return 2;
  if (b->version != ((unsigned)sizeof *b | 1u << 24)) return 25; /* ARGUMENT_VERSION_MISMATCH */
  if (n < 8) return 7;
  snprintf(b->branch, n < sizeof b->branch ? n : sizeof b->branch, "r580_00");
  return 0;
}
#endif

/* ---- processes ---------------------------------------------------------------------------- */
typedef struct nvmlProcessInfo_st {
  unsigned pid;
  unsigned long long usedGpuMemory;
  unsigned gpuInstanceId, computeInstanceId;
} nvmlProcessInfo_t;

/* pids past the kernel's largest (4194304): no /proc entry */
#define NO_SUCH_PID 4194400u

static unsigned compute_count(void) {
  const char *v = getenv("CUCORE_FAKE_NVML_PROCS");
  return v && v[0] ? (unsigned)strtoul(v, NULL, 0) : 40;
}

/* Fills infos from `all` (n of them), NVML's way: a short buffer is told the count needed
 * (the first time one more than it holds, as if processes were still starting). */
static nvmlReturn_t give_procs(const nvmlProcessInfo_t *all, unsigned n, unsigned *count,
                               nvmlProcessInfo_t *infos) {
  static int told_short;
  if (!count) return 2;
  if (*count < n) {
    *count = told_short++ ? n : *count + 1;
    return 7;
  }
  if (n && !infos) return 2;
  memcpy(infos, all, n * sizeof *all);
  *count = n;
  return 0;
}

EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d, unsigned *count,
                                                            nvmlProcessInfo_t *infos);
EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d, unsigned *count,
                                                            nvmlProcessInfo_t *infos) {
  unsigned n = d == &the_gpu ? compute_count() : 0;
  nvmlProcessInfo_t *all = calloc(n + 1, sizeof *all);
  if (!all) return 999;
  for (unsigned i = 0; i < n; i++) {
    all[i].pid = i == 0 ? (unsigned)getpid() : NO_SUCH_PID + i;
    all[i].usedGpuMemory = i == 1 ? ~0ull : (unsigned long long)(i == 0 ? 512 : i + 1) << 20;
    all[i].gpuInstanceId = all[i].computeInstanceId = 0xffffffffu;
  }
  nvmlReturn_t r = give_procs(all, n, count, infos);
  free(all);
  return r;
}
EXPORT nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t d, unsigned *count,
                                                             nvmlProcessInfo_t *infos);
EXPORT nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t d, unsigned *count,
                                                             nvmlProcessInfo_t *infos) {
  nvmlProcessInfo_t all[2] = {{(unsigned)getpid(), 256ull << 20, 0xffffffffu, 0xffffffffu},
                              {NO_SUCH_PID - 1, 1ull << 20, 0xffffffffu, 0xffffffffu}};
  return give_procs(all, d == &the_gpu ? 2 : 0, count, infos);
}

/* ---- topology and P2P --------------------------------------------------------------------- */
EXPORT nvmlReturn_t nvmlDeviceGetTopologyCommonAncestor(nvmlDevice_t a, nvmlDevice_t b, int *level);
EXPORT nvmlReturn_t nvmlDeviceGetTopologyCommonAncestor(nvmlDevice_t a, nvmlDevice_t b,
                                                        int *level) {
  if (!a || !b || !level || a == b) return 2;
  *level = 20; /* NVML_TOPOLOGY_MULTIPLE */
  return 0;
}
EXPORT nvmlReturn_t nvmlDeviceGetP2PStatus(nvmlDevice_t a, nvmlDevice_t b, int index, int *status);
EXPORT nvmlReturn_t nvmlDeviceGetP2PStatus(nvmlDevice_t a, nvmlDevice_t b, int index, int *status) {
  if (!a || !b || !status || a == b) return 2;
  if (index == 4) return 3; /* the PCI index: not answered */
  *status = index == 3 ? 2 /* GPU_NOT_SUPPORTED */ : 0;
  return index <= 4 ? 0 : 2;
}

/* ---- affinity ----------------------------------------------------------------------------- */
/* Sets bit `bit` in mask[0..words) when it fits. */
static void set_bit(unsigned long *mask, unsigned words, unsigned bit) {
  unsigned w = bit / (unsigned)(8 * sizeof *mask);
  if (w < words) mask[w] |= 1ul << (bit % (8 * sizeof *mask));
}
EXPORT nvmlReturn_t nvmlDeviceGetCpuAffinity(nvmlDevice_t d, unsigned words, unsigned long *mask);
EXPORT nvmlReturn_t nvmlDeviceGetCpuAffinity(nvmlDevice_t d, unsigned words, unsigned long *mask) {
  if (!mask || !words) return 2;
  memset(mask, 0, words * sizeof *mask);
  set_bit(mask, words, 0);
  if (d == &second_gpu)
    set_bit(mask, words, 1), set_bit(mask, words, 1023), set_bit(mask, words, 1100);
  return 0;
}
EXPORT nvmlReturn_t nvmlDeviceGetMemoryAffinity(nvmlDevice_t d, unsigned words, unsigned long *mask,
                                                unsigned scope);
EXPORT nvmlReturn_t nvmlDeviceGetMemoryAffinity(nvmlDevice_t d, unsigned words, unsigned long *mask,
                                                unsigned scope) {
  if (!mask || !words || scope > 1) return 2;
  memset(mask, 0, words * sizeof *mask);
  if (d == &second_gpu) {
    set_bit(mask, words, 1), set_bit(mask, words, 63), set_bit(mask, words, 70);
  } else {
    set_bit(mask, words, 0);
    if (scope == 1) set_bit(mask, words, 1);
  }
  return 0;
}

/* ---- events ------------------------------------------------------------------------------- */
typedef struct fake_event {
  nvmlDevice_t device;
  unsigned long long type, data;
  unsigned gi, ci;
} fake_event;
typedef struct fake_event_set {
  int queued;
  fake_event q[8];
} * nvmlEventSet_t;

#define FAKE_EVENT_TYPES 0x1full

EXPORT nvmlReturn_t nvmlDeviceGetSupportedEventTypes(nvmlDevice_t d, unsigned long long *types);
EXPORT nvmlReturn_t nvmlDeviceGetSupportedEventTypes(nvmlDevice_t d, unsigned long long *types) {
  if (!d || !types) return 2;
  *types = FAKE_EVENT_TYPES;
  return 0;
}
EXPORT nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t *set);
EXPORT nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t *set) {
  if (!set) return 2;
  *set = calloc(1, sizeof **set);
  return *set ? 0 : 999;
}
EXPORT nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t d, unsigned long long types,
                                             nvmlEventSet_t set);
EXPORT nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t d, unsigned long long types,
                                             nvmlEventSet_t set) {
  if (!d || !set) return 2;
  if (types & ~FAKE_EVENT_TYPES) return 3;
  const char *xid = getenv("CUCORE_FAKE_NVML_XID");
  if ((types & 0x8) && xid && xid[0] && set->queued < 8)
    set->q[set->queued++] = (fake_event){d, 0x8, strtoull(xid, NULL, 0), 0xffffffffu, 0xffffffffu};
  return 0;
}
typedef struct nvmlEventData_st {
  nvmlDevice_t device;
  unsigned long long eventType, eventData;
  unsigned gpuInstanceId, computeInstanceId;
} nvmlEventData_t;
EXPORT nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t *data, unsigned ms);
EXPORT nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t *data, unsigned ms) {
  if (!set || !data) return 2;
  if (!set->queued) {
    usleep((ms < 100 ? ms : 100) * 1000u);
    return 10; /* NVML_ERROR_TIMEOUT */
  }
  fake_event e = set->q[0];
  memmove(set->q, set->q + 1, (size_t)--set->queued * sizeof e);
  *data = (nvmlEventData_t){e.device, e.type, e.data, e.gi, e.ci};
  return 0;
}
EXPORT nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set);
EXPORT nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set) {
  free(set);
  return 0;
}
