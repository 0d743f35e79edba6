/* system_facts.h -- what NVML says of a GPU now (cucore_system_*), as `cucore devices` shows
 * it and as `cucore run` records it beside a timing. */
#ifndef CUCORE_TOOLS_SYSTEM_FACTS_H
#define CUCORE_TOOLS_SYSTEM_FACTS_H

#include "cli.h"

/* The live state of device `ordinal` (whose UUID is `uuid`, as cucore_device_props holds it)
 * as text lines ("  clocks now ..."), or one line saying why it is not known. The facts read
 * by system_facts_start_all's thread are used when one has that UUID. */
void system_facts_text(int ordinal, const char *uuid);
/* The same as the object "system" of a device's JSON: the facts, or {"available": false,
 * "error": "..."}. */
void system_facts_json(json_out *j, int ordinal, const char *uuid);

/* Samples device `ordinal`'s SM clock and clock-event reasons into a timing's record: the
 * lower clock and the union of the reasons over every sample (all -1 when NVML cannot say;
 * the first sample starts from *sm_mhz == 0). */
void system_facts_sample(int ordinal, int *sm_mhz, int *max_mhz, long long *reasons);

/* NVML loaded and started (cucore_system_load) on a thread of its own, so that it runs beside
 * cuInit, the compile and the launch instead of before the first query (dlopen of
 * libnvidia-ml.so.1 and nvmlInit take milliseconds). The queries above wait for it if it is
 * still under way. system_facts_join waits for the thread; call it before the process exits
 * (a second start or a join without a start does nothing). */
void system_facts_start(void);
void system_facts_join(void);
/* The same, and the thread then reads every GPU NVML lists (cucore_system_get_info_by_index),
 * so that `cucore devices` pays for NVML's queries beside cuInit (~17 ms on an H100 after it,
 * before). */
void system_facts_start_all(void);

#endif
