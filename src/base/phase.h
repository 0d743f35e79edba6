/*
 * base/phase.h -- the phase table behind cucore_phase_get_times (phase.c): cucore's one-time steps
 * (library loads, cuInit, contexts, the compile cache, compiles, module loads) stamp the clock
 * here. Only at those steps: nothing on a launch, copy or allocation path calls these.
 */
#ifndef CUCORE_BASE_PHASE_H
#define CUCORE_BASE_PHASE_H

#include "base/base.h"

#include <stdint.h>

/* Now on the table's clock (CLOCK_BOOTTIME, ns; the clock of /proc/self/stat's start time). */
int64_t cc_phase_clock(void);
/* Adds one run of `phase` from `t0` (a cc_phase_clock value) to now. */
void cc_phase_done(cucore_phase phase, int64_t t0);
/* Adds one run of `phase` from `t0` to `t1` (cc_phase_clock values). */
void cc_phase_span(cucore_phase phase, int64_t t0, int64_t t1);

#endif /* CUCORE_BASE_PHASE_H */
