/*
 * runtime/system_map.h -- what runtime/system*.c share: cucore devices and NVML's GPUs, one to
 * the other (system_map.c), the one lookup every cucore_system_* call by ordinal makes; and the
 * CPU and NUMA-node sets (system_set.c). Private to runtime/system*.c.
 */
#ifndef CUCORE_RUNTIME_SYSTEM_MAP_H
#define CUCORE_RUNTIME_SYSTEM_MAP_H

#include "loader/nvml.h"

/* The NVML handle of cucore device `ordinal` for public call `fn`: the ordinal checked
 * (CUCORE_INVALID_DEVICE naming the range), the driver and NVML loaded, the GPU found in NVML
 * by its PCI bus id, else by its UUID (CUCORE_NOT_FOUND naming both). Kept after the first
 * lookup; thread-safe. */
cucore_status cc_sys_handle(const char *fn, int ordinal, cc_nvml_device *h);
/* The same without the kept handles (a fresh lookup each time). */
cucore_status cc_sys_handle_fresh(const char *fn, int ordinal, cc_nvml_device *h);
/* The NVML handles of two different cucore devices `a` and `b` (INVALID_ARGUMENT when equal). */
cucore_status cc_sys_pair(const char *fn, int a, int b, cc_nvml_device *ha, cc_nvml_device *hb);
/* Optional entry point `symbol` present (`present`: its field is not NULL, read after NVML
 * loaded): else
 * CUCORE_NOT_SUPPORTED naming `fn` and `symbol`. */
cucore_status cc_sys_need(const char *fn, int present, const char *symbol);

/* A new set of the bits of mask[0..words) (NUMA nodes when `numa`, else CPUs). */
cucore_status cc_sys_set_of_mask(const unsigned long *mask, size_t words, int numa,
                                 cucore_system_set **out);
int cc_sys_set_numa(const cucore_system_set *s);
size_t cc_sys_set_count(const cucore_system_set *s);
/* The members, increasing (cc_sys_set_count of them). */
const int *cc_sys_set_members(const cucore_system_set *s);
/* Frees a set made here (NULL: nothing). */
void cc_sys_set_free(cucore_system_set *s);
/* The members as ranges, "0-3,8,10-11" ("none" when empty), appended to b. */
void cc_sys_set_text(const cucore_system_set *s, cc_sb *b);

#endif
