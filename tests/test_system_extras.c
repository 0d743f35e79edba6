/* test_system_extras.c -- NVML's driver, process, topology, affinity and event facts with the
 * fake driver (two devices) and the fake NVML of tests/fake/ (two GPUs): the driver's version
 * and branch (an NVML without nvmlSystemGetDriverBranch refuses it by name), the processes of a
 * GPU past the first buffer and merged by pid with their names, the topology level and P2P
 * statuses with their names, CPU and NUMA-node sets larger than a first mask, the calling
 * thread bound to a GPU's CPUs and put back, an XID event waited for and a timeout that is
 * CUCORE_NOT_READY without a message; and NVML absent: CUCORE_NOT_SUPPORTED. */
#include "support.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef CUCORE_FAKE_NVML_OLD_PATH
#error "CUCORE_FAKE_NVML_OLD_PATH is set by tests/CMakeLists.txt"
#endif

static void driver_version_and_branch(void **state) {
  (void)state;
  char buf[64];
  size_t needed = 0;
  assert_ok(cucore_system_get_driver_version(buf, sizeof buf, &needed));
  assert_string_equal(buf, "580.95.05");
  assert_int_equal(needed, 10);
  assert_ok(cucore_system_get_driver_version(NULL, 0, &needed)); /* the size alone */
  assert_int_equal(needed, 10);
  assert_status(cucore_system_get_driver_version(buf, 9, &needed), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "`cap` is 9 bytes; the text `580.95.05` needs 10");
  assert_string_equal(buf, ""); /* never a cut text */
  assert_ok(cucore_system_get_driver_branch(buf, sizeof buf, NULL));
  assert_string_equal(buf, "r580_00");
  assert_status(cucore_system_get_driver_branch(NULL, 4, NULL), CUCORE_INVALID_ARGUMENT);
}

static void check_set(const cucore_system_set *s, const int *want, size_t n) {
  size_t count = 99;
  assert_ok(cucore_system_set_get_count(s, &count));
  assert_int_equal(count, n);
  for (size_t i = 0; i < n; i++) {
    int m = -1, yes = 0;
    assert_ok(cucore_system_set_get_member(s, i, &m));
    assert_int_equal(m, want[i]);
    assert_ok(cucore_system_set_is_member(s, want[i], &yes));
    assert_true(yes);
  }
  int m = 0;
  assert_status(cucore_system_set_get_member(s, n, &m), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "past the end of the set");
}

static void processes_of_a_gpu(void **state) {
  (void)state;
  cucore_system_processes *list = NULL;
  assert_ok(cucore_system_get_processes(0, &list));
  size_t n = 0;
  assert_ok(cucore_system_processes_get_count(list, &n));
  assert_int_equal(n, 41); /* 40 compute (one also graphics) and one graphics only */
  cucore_system_process p = {.version = CUCORE_SYSTEM_PROCESS_VERSION};
  assert_ok(cucore_system_processes_get_item(list, 0, &p)); /* by pid: this process first */
  assert_int_equal(p.pid, getpid());
  assert_int_equal(p.kinds, CUCORE_SYSTEM_PROCESS_COMPUTE | CUCORE_SYSTEM_PROCESS_GRAPHICS);
  assert_int_equal(p.used_memory, 512ll << 20); /* the larger of its two entries */
  assert_int_equal(p.gpu_instance, -1);
  assert_int_equal(p.compute_instance, -1);
  assert_non_null(p.name);
  char comm[64] = "";
  FILE *f = fopen("/proc/self/comm", "r");
  assert_non_null(f);
  assert_non_null(fgets(comm, sizeof comm, f));
  fclose(f);
  comm[strcspn(comm, "\n")] = '\0';
  assert_string_equal(p.name, comm); /* "test_system_ext": the kernel keeps 15 bytes */
  assert_ok(cucore_system_processes_get_item(list, 1, &p));
  assert_int_equal(p.kinds, CUCORE_SYSTEM_PROCESS_GRAPHICS);
  assert_int_equal(p.used_memory, 1 << 20);
  assert_null(p.name); /* no such pid: no name */
  assert_ok(cucore_system_processes_get_item(list, 2, &p));
  assert_int_equal(p.kinds, CUCORE_SYSTEM_PROCESS_COMPUTE);
  assert_int_equal(p.used_memory, -1); /* NVML_VALUE_NOT_AVAILABLE */
  assert_status(cucore_system_processes_get_item(list, 41, &p), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "index 41 is past the end of the list (41 processes)");
  p.version = 0;
  assert_status(cucore_system_processes_get_item(list, 0, &p), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "out->version is 0");
  assert_ok(cucore_system_processes_destroy(list));
  assert_status(cucore_system_processes_get_count(list, &n), CUCORE_MISUSE);
  assert_ok(cucore_system_processes_destroy(NULL));
  assert_ok(cucore_system_get_processes(1, &list)); /* the second GPU runs nothing */
  assert_ok(cucore_system_processes_get_count(list, &n));
  assert_int_equal(n, 0);
  assert_ok(cucore_system_processes_destroy(list));
  assert_status(cucore_system_get_processes(2, &list), CUCORE_INVALID_DEVICE);
  assert_null(list);
}

static void topology_and_p2p(void **state) {
  (void)state;
  cucore_system_topology level = CUCORE_TOPOLOGY_SYSTEM;
  assert_ok(cucore_system_get_topology(0, 1, &level));
  assert_int_equal(level, CUCORE_TOPOLOGY_MULTIPLE);
  assert_string_equal(cucore_system_topology_name(level), "multiple");
  assert_string_equal(cucore_system_topology_name(CUCORE_TOPOLOGY_NODE), "node");
  assert_string_equal(cucore_system_topology_name((cucore_system_topology)7), "unknown");
  assert_status(cucore_system_get_topology(0, 0, &level), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "both devices are 0; two different GPUs are expected");
  assert_status(cucore_system_get_topology(0, 2, &level), CUCORE_INVALID_DEVICE);
  cucore_system_p2p p = {.version = CUCORE_SYSTEM_P2P_VERSION};
  assert_ok(cucore_system_get_p2p(0, 1, &p));
  assert_int_equal(p.read, CUCORE_P2P_OK);
  assert_int_equal(p.write, CUCORE_P2P_OK);
  assert_int_equal(p.nvlink, CUCORE_P2P_OK);
  assert_int_equal(p.atomics, CUCORE_P2P_GPU_NOT_SUPPORTED);
  assert_int_equal(p.prop, CUCORE_P2P_UNKNOWN); /* NVML does not answer that index */
  assert_string_equal(cucore_system_p2p_status_name(p.atomics), "gpu_not_supported");
  assert_string_equal(cucore_system_p2p_status_name(CUCORE_P2P_OK), "ok");
  assert_string_equal(cucore_system_p2p_status_name(CUCORE_P2P_DISABLED_BY_REGKEY),
                      "disabled_by_regkey");
  p.version = 2;
  assert_status(cucore_system_get_p2p(0, 1, &p), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "out->version is 2");
}

static void affinity_sets(void **state) {
  (void)state;
  cucore_system_set *s = NULL;
  assert_ok(cucore_system_get_cpu_affinity(1, &s));
  check_set(s, (const int[]){0, 1, 1023, 1100}, 4); /* past a first mask of 1024 */
  int yes = 1, numa = 1;
  assert_ok(cucore_system_set_is_member(s, 2, &yes));
  assert_false(yes);
  assert_ok(cucore_system_set_is_member(s, -1, &yes));
  assert_false(yes);
  assert_ok(cucore_system_set_is_numa(s, &numa));
  assert_false(numa);
  assert_ok(cucore_system_set_destroy(s));
  assert_ok(cucore_system_get_memory_affinity(1, CUCORE_SCOPE_NODE, &s));
  check_set(s, (const int[]){1, 63, 70}, 3); /* node 70: past a first mask of 64 */
  assert_ok(cucore_system_set_is_numa(s, &numa));
  assert_true(numa);
  assert_status(cucore_system_set_thread_affinity(s), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "is a set of NUMA nodes");
  assert_ok(cucore_system_set_destroy(s));
  assert_ok(cucore_system_get_memory_affinity(0, CUCORE_SCOPE_SOCKET, &s));
  check_set(s, (const int[]){0, 1}, 2);
  assert_ok(cucore_system_set_destroy(s));
  assert_status(cucore_system_get_memory_affinity(0, (cucore_system_scope)5, &s),
                CUCORE_INVALID_ARGUMENT);
  assert_ok(cucore_system_set_destroy(NULL));
}

/* The calling thread's CPUs equal `want`. */
static void thread_cpus_are(const cucore_system_set *want) {
  cucore_system_set *now = NULL;
  assert_ok(cucore_system_get_thread_affinity(&now));
  size_t a = 0, b = 0;
  assert_ok(cucore_system_set_get_count(now, &a));
  assert_ok(cucore_system_set_get_count(want, &b));
  assert_int_equal(a, b);
  for (size_t i = 0; i < a; i++) {
    int x = -1, y = -2;
    assert_ok(cucore_system_set_get_member(now, i, &x));
    assert_ok(cucore_system_set_get_member(want, i, &y));
    assert_int_equal(x, y);
  }
  assert_ok(cucore_system_set_destroy(now));
}

static void bind_and_restore(void **state) {
  (void)state;
  cucore_system_set *before = NULL, *prev = NULL, *gpu0 = NULL;
  assert_ok(cucore_system_get_thread_affinity(&before));
  int cpu0 = 0;
  assert_ok(cucore_system_set_is_member(before, 0, &cpu0));
  if (!cpu0) { /* CPU 0 not ours (a cpuset): binding to it is refused, the thread unchanged */
    assert_status(cucore_system_bind_thread(0, &prev), CUCORE_NOT_SUPPORTED);
    assert_contains(cucore_last_error(), "none of those CPUs is allowed");
    assert_null(prev);
    thread_cpus_are(before);
    assert_ok(cucore_system_set_destroy(before));
    return;
  }
  assert_ok(cucore_system_bind_thread(0, &prev));
  assert_ok(cucore_system_get_cpu_affinity(0, &gpu0));
  thread_cpus_are(gpu0); /* {0} */
  thread_cpus_are(gpu0);
  assert_ok(cucore_system_set_thread_affinity(prev)); /* put back */
  thread_cpus_are(before);
  assert_ok(cucore_system_bind_thread(0, NULL)); /* without keeping the old CPUs */
  thread_cpus_are(gpu0);
  assert_ok(cucore_system_set_thread_affinity(before));
  thread_cpus_are(before);
  assert_ok(cucore_system_set_destroy(prev));
  assert_ok(cucore_system_set_destroy(gpu0));
  assert_ok(cucore_system_set_destroy(before));
  assert_status(cucore_system_bind_thread(5, NULL), CUCORE_INVALID_DEVICE);
}

static void events_and_timeout(void **state) {
  (void)state;
  cucore_system_event_set *set = NULL;
  assert_ok(cucore_system_event_set_create(&set));
  cucore_system_event e = {.version = CUCORE_SYSTEM_EVENT_VERSION};
  assert_status(cucore_system_event_set_wait(set, 10, &e), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "no device was added to the set");
  unsigned long long types = 0;
  assert_ok(cucore_system_get_event_types(1, &types));
  assert_int_equal(types, 0x1f);
  assert_status(cucore_system_event_set_add_device(set, 1,
                                                   CUCORE_SYSTEM_EVENT_POWER_SOURCE |
                                                       CUCORE_SYSTEM_EVENT_XID),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(),
                  "device 1 does not report the event types power_source (it reports: "
                  "single_bit_ecc, double_bit_ecc, pstate, xid, clock)");
  assert_status(cucore_system_event_set_add_device(set, 1, 0), CUCORE_INVALID_ARGUMENT);
  assert_ok(
      cucore_system_event_set_add_device(set, 1,
                                         CUCORE_SYSTEM_EVENT_XID | CUCORE_SYSTEM_EVENT_CLOCK));
  assert_ok(cucore_system_event_set_wait(set, 1000, &e)); /* the fake's XID 79 */
  assert_int_equal(e.ordinal, 1);
  assert_int_equal(e.type, CUCORE_SYSTEM_EVENT_XID);
  assert_int_equal(e.data, 79);
  assert_int_equal(e.gpu_instance, -1);
  assert_int_equal(e.compute_instance, -1);
  assert_string_equal(cucore_system_event_type_name(e.type), "xid");
  cucore_clear_error();
  assert_int_equal(cucore_system_event_set_wait(set, 20, &e), CUCORE_NOT_READY);
  assert_string_equal(cucore_last_error(), ""); /* a timeout keeps no message */
  assert_int_equal(e.type, 0);
  assert_int_equal(e.ordinal, -1);
  e.version = 0;
  assert_status(cucore_system_event_set_wait(set, 20, &e), CUCORE_INVALID_ARGUMENT);
  assert_string_equal(cucore_system_event_type_name(CUCORE_SYSTEM_EVENT_CLOCK), "clock");
  assert_string_equal(cucore_system_event_type_name(0x3), "unknown");
  assert_ok(cucore_system_event_set_destroy(set));
  assert_status(cucore_system_event_set_wait(set, 20, &e), CUCORE_MISUSE);
  assert_ok(cucore_system_event_set_destroy(NULL));
}

/* Runs body() in a fresh process; fails naming `what` unless it exits 0. */
static void run_in_child(int (*body)(void), const char *what) {
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) _exit(body());
  int ws = 0;
  assert_int_equal(waitpid(pid, &ws, 0), pid);
  if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0)
    fail_msg("%s: the child failed (exit %d, signal %d)", what,
             WIFEXITED(ws) ? WEXITSTATUS(ws) : -1, WIFSIGNALED(ws) ? WTERMSIG(ws) : 0);
}

/* An NVML older than 12.6: the version still read, the branch refused naming the symbol. */
static int old_nvml_child(void) {
  setenv("CUCORE_LIBNVML", CUCORE_FAKE_NVML_OLD_PATH, 1);
  char buf[64];
  if (cucore_system_get_driver_version(buf, sizeof buf, NULL) != CUCORE_OK) return 1;
  cucore_status st = cucore_system_get_driver_branch(buf, sizeof buf, NULL);
  if (st != CUCORE_NOT_SUPPORTED) return 2;
  const char *m = cucore_last_error();
  if (!strstr(m, "cucore_system_get_driver_branch: the loaded NVML (") ||
      !strstr(m, ") has no nvmlSystemGetDriverBranch")) {
    fprintf(stderr, "message: %s\n", m);
    return 3;
  }
  return buf[0] == '\0' ? 0 : 4;
}

static void old_nvml_refuses_the_branch(void **state) {
  (void)state;
  run_in_child(old_nvml_child, "an NVML without nvmlSystemGetDriverBranch");
}

/* No NVML: each new call says CUCORE_NOT_SUPPORTED with the reason. */
static int no_nvml_child(void) {
  setenv("CUCORE_LIBNVML", "/nonexistent/libnvidia-ml.so.1", 1);
  char buf[64];
  cucore_system_processes *list = NULL;
  cucore_system_topology level;
  cucore_system_set *set = NULL;
  cucore_system_event_set *events = NULL;
  cucore_status st[] = {cucore_system_get_driver_version(buf, sizeof buf, NULL),
                        cucore_system_get_processes(0, &list),
                        cucore_system_get_topology(0, 1, &level),
                        cucore_system_get_cpu_affinity(0, &set),
                        cucore_system_bind_thread(0, NULL),
                        cucore_system_event_set_create(&events)};
  for (size_t i = 0; i < sizeof st / sizeof st[0]; i++)
    if (st[i] != CUCORE_NOT_SUPPORTED) return 1 + (int)i;
  return list || set || events ? 20 : 0;
}

static void no_nvml_is_not_supported(void **state) {
  (void)state;
  run_in_child(no_nvml_child, "NVML absent");
}

int main(void) {
  setenv("CUCORE_LIBCUDA", CUCORE_FAKE_DRIVER_PATH, 1);
  setenv("CUCORE_LIBNVML", CUCORE_FAKE_NVML_PATH, 1);
  setenv("CUCORE_FAKE_DEVICES", "2", 1);
  setenv("CUCORE_FAKE_NVML_GPUS", "2", 1);
  setenv("CUCORE_FAKE_NVML_XID", "79", 1);
  const struct CMUnitTest tests[] = {
      /* the children first: this process has not loaded NVML yet */
      cmocka_unit_test(old_nvml_refuses_the_branch),
      cmocka_unit_test(no_nvml_is_not_supported),
      cmocka_unit_test(driver_version_and_branch),
      cmocka_unit_test(processes_of_a_gpu),
      cmocka_unit_test(topology_and_p2p),
      cmocka_unit_test(affinity_sets),
      cmocka_unit_test(bind_and_restore),
      cmocka_unit_test(events_and_timeout),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
