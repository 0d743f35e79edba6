/* devices_nvml.c -- `cucore devices`' NVML extras (see devices_nvml.h): the kernel-mode driver,
 * the processes on a GPU, the CPUs and NUMA nodes nearest it, the topology and P2P of pairs. */
#include "devices_nvml.h"

#include <stdio.h>
#include <stdlib.h>

/* The driver's version or branch, malloc'd (NULL with cucore_last_error set when unknown). */
static char *driver_text(cucore_status (*get)(char *, size_t, size_t *)) {
  size_t need = 0;
  if (get(NULL, 0, &need) != CUCORE_OK) return NULL;
  char *s = malloc(need ? need : 1);
  if (s && get(s, need, NULL) != CUCORE_OK) {
    free(s);
    return NULL;
  }
  return s;
}

void devices_nvml_driver_text(void) {
  char *v = driver_text(cucore_system_get_driver_version);
  if (!v) return; /* no NVML: each device's live state says why */
  char *b = driver_text(cucore_system_get_driver_branch);
  printf("kernel-mode driver %s (branch %s)\n", v, b ? b : "unknown: this NVML does not say");
  free(v);
  free(b);
}

void devices_nvml_driver_json(json_out *j) {
  json_begin_object(j, "kernel_driver");
  char *v = driver_text(cucore_system_get_driver_version);
  json_str(j, "version", v);
  if (!v) json_str(j, "error", cucore_last_error());
  char *b = v ? driver_text(cucore_system_get_driver_branch) : NULL;
  json_str(j, "branch", b);
  if (v && !b) json_str(j, "branch_error", cucore_last_error());
  json_end_object(j);
  free(v);
  free(b);
}

static const char *kinds_text(unsigned kinds) {
  if (kinds == (CUCORE_SYSTEM_PROCESS_COMPUTE | CUCORE_SYSTEM_PROCESS_GRAPHICS))
    return "compute+graphics";
  return kinds & CUCORE_SYSTEM_PROCESS_GRAPHICS ? "graphics" : "compute";
}

void devices_nvml_processes_text(int ordinal) {
  cucore_system_processes *list = NULL;
  size_t n = 0;
  if (cucore_system_get_processes(ordinal, &list) != CUCORE_OK ||
      cucore_system_processes_get_count(list, &n) != CUCORE_OK) {
    if (cucore_system_load() == CUCORE_OK) /* NVML is there: say why this one is not */
      printf("  processes            unknown: %s\n", cucore_last_error());
    cucore_system_processes_destroy(list);
    return;
  }
  printf("  processes            %zu%s", n, n ? ":" : "");
  for (size_t i = 0; i < n; i++) {
    cucore_system_process p = {.version = CUCORE_SYSTEM_PROCESS_VERSION};
    if (cucore_system_processes_get_item(list, i, &p) != CUCORE_OK) continue;
    printf("%s %lld %s (", i ? "," : "", p.pid, p.name ? p.name : "?");
    if (p.used_memory >= 0) printf("%.1f MiB, ", p.used_memory / (1024.0 * 1024.0));
    printf("%s)", kinds_text(p.kinds));
  }
  printf("\n");
  cucore_system_processes_destroy(list);
}

void devices_nvml_processes_json(json_out *j, int ordinal) {
  cucore_system_processes *list = NULL;
  size_t n = 0;
  if (cucore_system_get_processes(ordinal, &list) != CUCORE_OK ||
      cucore_system_processes_get_count(list, &n) != CUCORE_OK) {
    json_str(j, "processes", NULL);
    json_str(j, "processes_error", cucore_last_error());
    cucore_system_processes_destroy(list);
    return;
  }
  json_begin_array(j, "processes");
  for (size_t i = 0; i < n; i++) {
    cucore_system_process p = {.version = CUCORE_SYSTEM_PROCESS_VERSION};
    if (cucore_system_processes_get_item(list, i, &p) != CUCORE_OK) continue;
    json_begin_object(j, NULL);
    json_int(j, "pid", p.pid);
    json_str(j, "name", p.name);
    if (p.used_memory >= 0)
      json_int(j, "used_memory", p.used_memory);
    else
      json_str(j, "used_memory", NULL);
    json_bool(j, "compute", (p.kinds & CUCORE_SYSTEM_PROCESS_COMPUTE) != 0);
    json_bool(j, "graphics", (p.kinds & CUCORE_SYSTEM_PROCESS_GRAPHICS) != 0);
    json_end_object(j);
  }
  json_end_array(j);
  cucore_system_processes_destroy(list);
}

/* The members of `s` as ranges, "0-55,112-167". */
static void print_ranges(const cucore_system_set *s) {
  size_t n = 0;
  cucore_system_set_get_count(s, &n);
  if (!n) printf("none");
  for (size_t i = 0; i < n;) {
    int first = 0, last = 0, next = 0;
    cucore_system_set_get_member(s, i, &first);
    last = first;
    size_t k = i + 1;
    while (k < n && cucore_system_set_get_member(s, k, &next) == CUCORE_OK && next == last + 1)
      last = next, k++;
    printf(i ? ",%d" : "%d", first);
    if (last > first) printf("-%d", last);
    i = k;
  }
}

/* The CPUs (numa 0) or NUMA nodes (numa 1) nearest device `ordinal`. */
static cucore_status nearest(int ordinal, int numa, cucore_system_set **s) {
  return numa ? cucore_system_get_memory_affinity(ordinal, CUCORE_SCOPE_NODE, s)
              : cucore_system_get_cpu_affinity(ordinal, s);
}

void devices_nvml_affinity_text(int ordinal) {
  if (cucore_system_load() != CUCORE_OK) return; /* the live state's line says why */
  for (int numa = 0; numa < 2; numa++) {
    cucore_system_set *s = NULL;
    printf(numa ? "  nearest NUMA nodes   " : "  nearest CPUs         ");
    if (nearest(ordinal, numa, &s) == CUCORE_OK)
      print_ranges(s);
    else
      printf("unknown: %s", cucore_last_error());
    printf("\n");
    cucore_system_set_destroy(s);
  }
}

void devices_nvml_affinity_json(json_out *j, int ordinal) {
  for (int numa = 0; numa < 2; numa++) {
    const char *key = numa ? "numa_affinity" : "cpu_affinity";
    cucore_system_set *s = NULL;
    size_t n = 0;
    if (nearest(ordinal, numa, &s) != CUCORE_OK || cucore_system_set_get_count(s, &n)) {
      json_str(j, key, NULL);
      continue;
    }
    json_begin_array(j, key);
    for (size_t i = 0; i < n; i++) {
      int m = 0;
      if (cucore_system_set_get_member(s, i, &m) == CUCORE_OK) json_int(j, NULL, m);
    }
    json_end_array(j);
    cucore_system_set_destroy(s);
  }
}

void devices_nvml_topology_text(int count) {
  printf("topology (NVML):\n");
  if (cucore_system_load() != CUCORE_OK) {
    printf("  unknown: %s\n", cucore_last_error());
    return;
  }
  if (count < 2) printf("  one device: no pair to show\n");
  for (int a = 0; a < count; a++)
    for (int b = a + 1; b < count; b++) {
      cucore_system_topology level;
      cucore_system_p2p p = {.version = CUCORE_SYSTEM_P2P_VERSION};
      printf("  device %d - device %d  ", a, b);
      if (cucore_system_get_topology(a, b, &level) != CUCORE_OK ||
          cucore_system_get_p2p(a, b, &p) != CUCORE_OK) {
        printf("unknown: %s\n", cucore_last_error());
        continue;
      }
      printf("%s; P2P read %s, write %s, NVLink %s, atomics %s, PCIe %s\n",
             cucore_system_topology_name(level), cucore_system_p2p_status_name(p.read),
             cucore_system_p2p_status_name(p.write), cucore_system_p2p_status_name(p.nvlink),
             cucore_system_p2p_status_name(p.atomics), cucore_system_p2p_status_name(p.prop));
    }
}

void devices_nvml_topology_json(json_out *j, int count) {
  json_begin_array(j, "topology");
  for (int a = 0; a < count; a++)
    for (int b = a + 1; b < count; b++) {
      cucore_system_topology level;
      cucore_system_p2p p = {.version = CUCORE_SYSTEM_P2P_VERSION};
      json_begin_object(j, NULL);
      json_int(j, "a", a);
      json_int(j, "b", b);
      if (cucore_system_get_topology(a, b, &level) != CUCORE_OK ||
          cucore_system_get_p2p(a, b, &p) != CUCORE_OK) {
        json_str(j, "level", NULL);
        json_str(j, "error", cucore_last_error());
      } else {
        json_str(j, "level", cucore_system_topology_name(level));
        json_begin_object(j, "p2p");
        json_str(j, "read", cucore_system_p2p_status_name(p.read));
        json_str(j, "write", cucore_system_p2p_status_name(p.write));
        json_str(j, "nvlink", cucore_system_p2p_status_name(p.nvlink));
        json_str(j, "atomics", cucore_system_p2p_status_name(p.atomics));
        json_str(j, "pci", cucore_system_p2p_status_name(p.prop));
        json_end_object(j);
      }
      json_end_object(j);
    }
  json_end_array(j);
}
