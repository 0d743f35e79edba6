/* fake_nvml.c -- a fake NVML (libnvidia-ml.so.1) for CPU tests of cucore_system_* and the
 * command's use of it. Load it with CUCORE_LIBNVML. It knows one GPU, the fake
 * driver's (UUID of bytes 0x5a, PCI bus 0x19), with fixed clocks (SM 1755 of 1980 MHz, memory
 * 2619 of 2619), 41 C, 123.456 W of a 700 W limit, utilisation 37 % / 12 %, no MIG, 18 NVLinks
 * of which link 17 is down. CUCORE_FAKE_NVML_REASONS (a number) sets the clock-event reasons
 * (default 0x1, idle); CUCORE_FAKE_NVML_INIT_FAIL=1 makes nvmlInit_v2 fail;
 * CUCORE_FAKE_NVML_NO_LOOKUP=1 finds the GPU only by index. Its error text
 * carries a control character, as a hostile library's might. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static struct fake_nvml_device the_gpu = {0};
static const char uuid[] = "GPU-5a5a5a5a-5a5a-5a5a-5a5a-5a5a5a5a5a5a";

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
  if (dom != 0 || b != 0x19 || dev != 0) return 6;
  *d = &the_gpu;
  return 0;
}
EXPORT nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *u, nvmlDevice_t *d) {
  if (no_lookup()) return 6;
  if (!u || strncmp(u, "GPU-", 4) != 0) return 2;
  if (strcmp(u, uuid) != 0) return 6;
  *d = &the_gpu;
  return 0;
}
EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned *n) {
  if (!n) return 2;
  *n = 1;
  return 0;
}
EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned i, nvmlDevice_t *d) {
  if (!d) return 2;
  if (i != 0) return 2; /* NVML_ERROR_INVALID_ARGUMENT past the count */
  *d = &the_gpu;
  return 0;
}
EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char *out, unsigned n) {
  if (d != &the_gpu) return 2;
  if (n < sizeof uuid) return 7;
  memcpy(out, uuid, sizeof uuid);
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
  (void)d;
  memset(p, 0, sizeof *p);
  snprintf(p->busIdLegacy, sizeof p->busIdLegacy, "0000:19:00.0");
  snprintf(p->busId, sizeof p->busId, "00000000:19:00.0");
  p->bus = 0x19;
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
