/* devices_nvml.h -- `cucore devices`: what NVML says beyond a GPU's live state: the
 * kernel-mode driver's version and branch, the processes on each GPU, and with --topology the
 * CPUs and NUMA nodes nearest each GPU and the topology and P2P status of every pair. Where
 * NVML is absent these print nothing (the live state's line says why) and write nulls. */
#ifndef CUCORE_TOOLS_DEVICES_NVML_H
#define CUCORE_TOOLS_DEVICES_NVML_H

#include "cli.h"

/* "kernel-mode driver   580.95.05 (branch r580_00)". */
void devices_nvml_driver_text(void);
/* "kernel_driver": {"version": ..., "branch": ..., "error": ...} of the top object. */
void devices_nvml_driver_json(json_out *j);
/* "  processes            N: PID NAME (MEMORY, compute+graphics), ..." for device `ordinal`. */
void devices_nvml_processes_text(int ordinal);
/* "processes": [{"pid", "name", "used_memory", "compute", "graphics"}] of a device (null when
 * NVML cannot say; "processes_error" then says why). */
void devices_nvml_processes_json(json_out *j, int ordinal);
/* "  nearest CPUs ..." and "  nearest NUMA nodes ..." of device `ordinal`. */
void devices_nvml_affinity_text(int ordinal);
/* "cpu_affinity": [CPU, ...] and "numa_affinity": [node, ...] of a device (null when unknown). */
void devices_nvml_affinity_json(json_out *j, int ordinal);
/* The topology section: one line per pair of the `count` devices, its level and P2P. */
void devices_nvml_topology_text(int count);
/* "topology": [{"a", "b", "level", "p2p": {"read", ...}}] of the top object. */
void devices_nvml_topology_json(json_out *j, int count);

#endif /* CUCORE_TOOLS_DEVICES_NVML_H */
