/* gpu_system_extras.c -- NVML's driver, process, topology, affinity and event facts on a real
 * GPU (label gpu): the kernel-mode driver's version (and branch, or its refusal by name on an
 * NVML without it), this process among the compute processes once it has a context, the
 * topology level and P2P statuses of devices 0 and 1 (checked against the driver's peer access
 * where two GPUs are present, skipped with a note otherwise), the CPUs nearest the GPU with the
 * thread bound to them and put back, and an XID event wait with a short timeout that returns
 * CUCORE_NOT_READY. Every fact is printed. Skipped where NVML is not usable. */
#include "support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void driver_version_and_branch(void **state) {
  (void)state;
  char v[128], b[128];
  assert_ok(cucore_system_get_driver_version(v, sizeof v, NULL));
  int major = 0, minor = 0;
  assert_int_equal(sscanf(v, "%d.%d", &major, &minor), 2);
  assert_true(major >= 500);
  cucore_status st = cucore_system_get_driver_branch(b, sizeof b, NULL);
  if (st == CUCORE_OK) {
    assert_true(b[0] != '\0');
    print_message("kernel-mode driver %s, branch %s\n", v, b);
  } else { /* an NVML before 12.6: refused by name */
    assert_int_equal(CUCORE_CODE(st), CUCORE_NOT_SUPPORTED);
    assert_contains(cucore_last_error(), "nvmlSystemGetDriverBranch");
    print_message("kernel-mode driver %s; branch: %s\n", v, cucore_last_error());
  }
}

static void our_process_is_listed(void **state) {
  (void)state;
  cucore_device *dev = NULL;
  assert_ok(cucore_device_open(0, &dev)); /* the primary context: a compute process now */
  cucore_devptr p = 0;
  assert_ok(cucore_mem_alloc(dev, 64 << 20, &p));
  cucore_system_processes *list = NULL;
  assert_ok(cucore_system_get_processes(0, &list));
  size_t n = 0, ours = (size_t)-1;
  assert_ok(cucore_system_processes_get_count(list, &n));
  for (size_t i = 0; i < n; i++) {
    cucore_system_process pr = {.version = CUCORE_SYSTEM_PROCESS_VERSION};
    assert_ok(cucore_system_processes_get_item(list, i, &pr));
    print_message("process %lld %s: %lld bytes, kinds 0x%x\n", pr.pid, pr.name ? pr.name : "?",
                  pr.used_memory, pr.kinds);
    if (pr.pid == (long long)getpid()) {
      ours = i;
      assert_true(pr.kinds & CUCORE_SYSTEM_PROCESS_COMPUTE);
      assert_true(pr.used_memory < 0 || pr.used_memory >= (64ll << 20));
      assert_non_null(pr.name);
    }
  }
  if (ours == (size_t)-1) { /* another pid namespace: NVML gives the host's pids */
    print_message("this process (pid %d) is not among NVML's pids: another pid namespace\n",
                  (int)getpid());
    assert_true(n >= 1);
  }
  assert_ok(cucore_system_processes_destroy(list));
  assert_ok(cucore_mem_free(dev, p));
  assert_ok(cucore_device_close(dev));
}

static void topology_of_two_gpus(void **state) {
  (void)state;
  int count = 0;
  assert_ok(cucore_device_get_count(&count));
  if (count < 2) {
    print_message("one GPU: topology and P2P between two GPUs skipped\n");
    cucore_system_topology level;
    assert_status(cucore_system_get_topology(0, 0, &level), CUCORE_INVALID_ARGUMENT);
    return;
  }
  cucore_system_topology level = (cucore_system_topology)-1;
  assert_ok(cucore_system_get_topology(0, 1, &level));
  assert_string_not_equal(cucore_system_topology_name(level), "unknown");
  cucore_system_p2p p = {.version = CUCORE_SYSTEM_P2P_VERSION};
  assert_ok(cucore_system_get_p2p(0, 1, &p));
  print_message("devices 0-1: %s; P2P read %s, write %s, NVLink %s, atomics %s, PCIe %s\n",
                cucore_system_topology_name(level), cucore_system_p2p_status_name(p.read),
                cucore_system_p2p_status_name(p.write), cucore_system_p2p_status_name(p.nvlink),
                cucore_system_p2p_status_name(p.atomics), cucore_system_p2p_status_name(p.prop));
  cucore_device *d0 = NULL, *d1 = NULL;
  int can = -1;
  assert_ok(cucore_device_open(0, &d0));
  assert_ok(cucore_device_open(1, &d1));
  assert_ok(cucore_device_can_access_peer(d0, d1, &can));
  if (p.read == CUCORE_P2P_OK) assert_int_equal(can, 1); /* NVML and the driver agree */
  assert_ok(cucore_device_close(d1));
  assert_ok(cucore_device_close(d0));
}

static size_t count_of(const cucore_system_set *s) {
  size_t n = 0;
  assert_ok(cucore_system_set_get_count(s, &n));
  return n;
}

static void bind_to_the_gpu(void **state) {
  (void)state;
  cucore_system_set *gpu = NULL, *numa = NULL, *before = NULL, *prev = NULL, *now = NULL;
  assert_ok(cucore_system_get_cpu_affinity(0, &gpu));
  assert_true(count_of(gpu) > 0);
  cucore_status st = cucore_system_get_memory_affinity(0, CUCORE_SCOPE_NODE, &numa);
  print_message("device 0: %zu CPUs near it; NUMA nodes: %s (%zu)\n", count_of(gpu),
                st == CUCORE_OK ? "known" : cucore_last_error(), numa ? count_of(numa) : 0);
  assert_ok(cucore_system_get_thread_affinity(&before));
  st = cucore_system_bind_thread(0, &prev);
  if (st != CUCORE_OK) { /* a cpuset that allows none of the GPU's CPUs */
    assert_int_equal(CUCORE_CODE(st), CUCORE_NOT_SUPPORTED);
    assert_contains(cucore_last_error(), "none of those CPUs is allowed");
  } else {
    assert_ok(cucore_system_get_thread_affinity(&now));
    for (size_t i = 0; i < count_of(now); i++) {
      int cpu = -1, yes = 0;
      assert_ok(cucore_system_set_get_member(now, i, &cpu));
      assert_ok(cucore_system_set_is_member(gpu, cpu, &yes));
      assert_true(yes); /* only the GPU's CPUs */
    }
    print_message("bound to %zu of them\n", count_of(now));
    assert_ok(cucore_system_set_thread_affinity(prev));
    assert_ok(cucore_system_set_destroy(now));
    now = NULL;
    assert_ok(cucore_system_get_thread_affinity(&now));
    assert_int_equal(count_of(now), count_of(before)); /* put back */
  }
  cucore_system_set_destroy(now);
  cucore_system_set_destroy(prev);
  cucore_system_set_destroy(before);
  cucore_system_set_destroy(numa);
  cucore_system_set_destroy(gpu);
}

static void event_wait_times_out(void **state) {
  (void)state;
  unsigned long long types = 0;
  assert_ok(cucore_system_get_event_types(0, &types));
  print_message("device 0 reports event types 0x%llx\n", types);
  if (!(types & CUCORE_SYSTEM_EVENT_XID)) {
    print_message("no XID events on this GPU: the wait skipped\n");
    return;
  }
  cucore_system_event_set *set = NULL;
  assert_ok(cucore_system_event_set_create(&set));
  cucore_status st = cucore_system_event_set_add_device(set, 0, CUCORE_SYSTEM_EVENT_XID);
  if (CUCORE_CODE(st) == CUCORE_NOT_SUPPORTED) { /* NVML refused (a permission, a platform) */
    print_message("XID events not registered: %s; the wait skipped\n", cucore_last_error());
    assert_ok(cucore_system_event_set_destroy(set));
    return;
  }
  assert_ok(st);
  cucore_system_event e = {.version = CUCORE_SYSTEM_EVENT_VERSION};
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  st = cucore_system_event_set_wait(set, 50, &e);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
  if (st == CUCORE_OK)
    fail_msg("an XID %llu arrived on device %d during the test: the GPU reports a fault", e.data,
             e.ordinal);
  assert_int_equal(st, CUCORE_NOT_READY);
  assert_int_equal(e.type, 0);
  print_message("a wait of 50 ms timed out after %.1f ms\n", ms);
  assert_ok(cucore_system_event_set_destroy(set));
}

int main(void) {
  if (!cucore_test_have_gpu()) return CUCORE_TEST_SKIP;
  cucore_system_info s;
  if (cucore_system_get_device_info(0, &s) == CUCORE_NOT_SUPPORTED) {
    printf("NVML not usable: %s\n", cucore_last_error());
    return CUCORE_TEST_SKIP;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(driver_version_and_branch), cmocka_unit_test(our_process_is_listed),
      cmocka_unit_test(topology_of_two_gpus),      cmocka_unit_test(bind_to_the_gpu),
      cmocka_unit_test(event_wait_times_out),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
