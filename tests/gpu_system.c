/* gpu_system.c -- NVML's facts on a real GPU (label gpu), checked against what
 * the driver says: the UUID equals cuDeviceGetUuid's, the PCI bus matches, the SM clock's
 * maximum is the driver's clock rate (within 10 %), clocks, power, temperature and
 * utilisation are in range, and the lookup by UUID finds the same device. Every fact is
 * printed. Skipped where NVML is not usable (the message says why). */
#include "support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

static void print_info(const cucore_system_info *s) {
  char reasons[256];
  cucore_system_reasons_text(s->clock_reasons, reasons, sizeof reasons);
  print_message("NVML: device %d %s %s pci %s; SM %d/%d MHz, mem %d/%d MHz, graphics %d MHz; "
                "%d C; %d of %d mW; util %d/%d %%; reasons %lld (%s); MIG %d/%d; NVLink %d of "
                "%d (mask 0x%x)\n",
                s->ordinal, s->name, s->uuid, s->pci_bus_id, s->sm_clock_mhz, s->sm_clock_max_mhz,
                s->mem_clock_mhz, s->mem_clock_max_mhz, s->graphics_clock_mhz, s->temperature_c,
                s->power_mw, s->power_limit_mw, s->gpu_util_pct, s->mem_util_pct, s->clock_reasons,
                reasons, s->mig_current, s->mig_pending, s->nvlink_active, s->nvlink_links,
                s->nvlink_active_mask);
}

static void facts_agree_with_the_driver(void **state) {
  (void)state;
  int n = 0;
  assert_ok(cucore_device_get_count(&n));
  for (int i = 0; i < n; i++) {
    cucore_device_props p;
    assert_ok(cucore_device_get_props(i, &p));
    cucore_system_info s;
    assert_ok(cucore_system_get_device_info(i, &s));
    print_info(&s);
    assert_int_equal(s.ordinal, i);
    char want[64];
    snprintf(want, sizeof want, "GPU-%s", p.uuid);
    if (s.mig_current != 1 && strcasecmp(s.uuid, want) != 0)
      fail_msg("device %d: NVML's UUID %s, the driver's %s", i, s.uuid, want);
    unsigned d1 = 0, b1 = 0, d2 = 0, b2 = 0;
    assert_int_equal(sscanf(s.pci_bus_id, "%x:%x", &d1, &b1), 2);
    assert_int_equal(sscanf(p.pci_bus_id, "%x:%x", &d2, &b2), 2);
    assert_true(d1 == d2 && b1 == b2);
    assert_true(s.sm_clock_mhz > 0 && s.sm_clock_mhz <= s.sm_clock_max_mhz);
    assert_true(s.mem_clock_mhz > 0 && s.mem_clock_max_mhz > 0);
    int drv_mhz = p.clock_khz / 1000;
    if (drv_mhz > 0 && abs(s.sm_clock_max_mhz - drv_mhz) * 10 > drv_mhz) /* 0: not given */
      fail_msg("device %d: NVML's max SM clock %d MHz, the driver's clock rate %d MHz", i,
               s.sm_clock_max_mhz, drv_mhz);
    assert_true(s.temperature_c > 0 && s.temperature_c < 120);
    assert_true(s.power_limit_mw > 0 && s.power_mw > 0 && s.power_mw < 2 * s.power_limit_mw);
    assert_true(s.gpu_util_pct >= 0 && s.gpu_util_pct <= 100);
    assert_true(s.clock_reasons >= 0);
    cucore_system_info u;
    assert_ok(cucore_system_get_info_by_uuid(s.uuid, &u));
    assert_int_equal(u.ordinal, i);
    assert_string_equal(u.uuid, s.uuid);
    assert_ok(cucore_system_get_info_by_uuid(p.uuid, &u)); /* the 36-character form */
    assert_int_equal(u.ordinal, i);
  }
  cucore_system_info none;
  assert_status(cucore_system_get_info_by_uuid("GPU-00000000-0000-0000-0000-000000000000", &none),
                CUCORE_NOT_FOUND);
}

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

/* The clock alone (cucore_system_get_clock) against every fact: a plausible SM clock, within the
 * device's maximum, and what each costs per call (printed, not asserted). */
static void clock_alone_is_cheap(void **state) {
  (void)state;
  cucore_system_info s;
  assert_ok(cucore_system_get_device_info(0, &s));
  int mhz = 0;
  long long reasons = 0;
  assert_ok(cucore_system_get_clock(0, &mhz, &reasons));
  assert_true(mhz > 0 && (s.sm_clock_max_mhz <= 0 || mhz <= s.sm_clock_max_mhz));
  assert_true(reasons >= 0);
  double t0 = now_us();
  for (int i = 0; i < 50; i++) assert_ok(cucore_system_get_clock(0, &mhz, &reasons));
  double t1 = now_us();
  for (int i = 0; i < 50; i++) assert_ok(cucore_system_get_device_info(0, &s));
  double t2 = now_us();
  print_message("SM clock %d MHz (max %d); cucore_system_get_clock %.1f us per call, "
                "cucore_system_get_device_info %.1f us\n",
                mhz, s.sm_clock_max_mhz, (t1 - t0) / 50, (t2 - t1) / 50);
}

int main(void) {
  if (!cucore_test_have_gpu()) return CUCORE_TEST_SKIP;
  cucore_system_info s;
  cucore_status st = cucore_system_get_device_info(0, &s);
  if (st == CUCORE_NOT_SUPPORTED) {
    printf("NVML not usable: %s\n", cucore_last_error());
    return CUCORE_TEST_SKIP;
  }
  const struct CMUnitTest tests[] = {cmocka_unit_test(facts_agree_with_the_driver),
                                     cmocka_unit_test(clock_alone_is_cheap)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
