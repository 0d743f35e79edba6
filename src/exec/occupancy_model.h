/*
 * occupancy_model.h -- the host-only occupancy model, for cucore's own sources (the
 * driver-backed occupancy code compares against it and reuses its explanations).
 *
 * The fast path is cc_occupancy_model_blocks: no allocation, no locks, no message. It
 * answers 0 active blocks (and says why in *why) for a launch that can never run, which is
 * what the driver's cuOccupancyMaxActiveBlocksPerMultiprocessor answers too, so a model-vs-
 * driver comparison can compare the two numbers directly. The public cucore_occupancy_model_*
 * calls validate with cc_occupancy_check and turn a 0 into a failure with cc_occupancy_explain.
 *
 * A comparison against the driver, for a loaded kernel on a device:
 *   cucore_arch_limits lim;       cucore_arch_limits_from_device(&props, &lim);
 *   cucore_kernel_resources res = CUCORE_KERNEL_RESOURCES_INIT;
 *   res.registers = NUM_REGS; res.static_shared_bytes = SHARED_SIZE_BYTES;
 *   res.max_threads_per_block = MAX_THREADS_PER_BLOCK;
 *   res.max_dynamic_shared_bytes = MAX_DYNAMIC_SHARED_SIZE_BYTES;   (or 0 after raising it)
 *   res.carveout_percent = PREFERRED_SHARED_MEMORY_CARVEOUT;        (-1 when unset)
 *   res.barriers = from the cubin's EIATTR_NUM_BARRIERS when known, else -1
 *   cucore_occupancy_result r; cc_occ_why why;
 *   int model = cc_occupancy_model_blocks(&lim, &res, block, dyn, flags, &r, &why);
 *   ... compare with cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&n, f, block, dyn,
 *   flags); on a mismatch, r.blocks_limit_* say which limit the model applied.
 */
#ifndef CUCORE_OCCUPANCY_MODEL_H
#define CUCORE_OCCUPANCY_MODEL_H

#include "base/base.h"

#include <stddef.h>

typedef cucore_arch_limits cc_arch_limits;

/* ---- the table (arch_table.c) ------------------------------------------------------------ */

/* The table row of `arch` (e.g. 90), or NULL when it is not in the table. */
const cc_arch_limits *cc_arch_limits_find(int arch);
/* "sm_70, sm_72, ..." into buf (for messages); returns buf. */
const char *cc_arch_known(char *buf, size_t len);

/* ---- the model (occupancy_model.c) -------------------------------------------------------- */

/* Why a launch can never run (cc_occupancy_model_blocks answered 0). */
typedef enum cc_occ_why {
  CC_OCC_RUNS = 0,                 /* at least one block fits */
  CC_OCC_BLOCK_SIZE,               /* block size < 1 or above the kernel's / arch's limit */
  CC_OCC_REGS_PER_BLOCK,           /* the block's registers exceed the per-block limit */
  CC_OCC_SHARED_PER_BLOCK,         /* static + dynamic shared memory above the opt-in max */
  CC_OCC_DYNAMIC_ABOVE_KERNEL_MAX, /* dynamic above the kernel's max_dynamic_shared_bytes */
  CC_OCC_SHARED_PER_SM             /* the block's shared memory exceeds the largest carveout
                                      (only with hand-edited limits) */
} cc_occ_why;

/* Checks limits, resources and flags; fails with CUCORE_INVALID_ARGUMENT naming `fn`, the
 * field and its range (or the unknown flags). NULL pointers are checked too. Call cc_begin()
 * first. */
cucore_status cc_occupancy_check(const char *fn, const cc_arch_limits *l,
                                 const cucore_kernel_resources *k, unsigned flags);

/* The model's answer for checked inputs: fills *r (always) and *why, and returns
 * r->active_blocks_per_sm (0 when the launch can never run). */
int cc_occupancy_model_blocks(const cc_arch_limits *l, const cucore_kernel_resources *k,
                              int block_size, size_t dynamic_shared_bytes, unsigned flags,
                              cucore_occupancy_result *r, cc_occ_why *why);

/* Records the failure for a `why` other than CC_OCC_RUNS, with the arithmetic, naming `fn`,
 * and returns its status (CUCORE_LAUNCH_CONFIG or CUCORE_LAUNCH_OUT_OF_RESOURCES). */
cucore_status cc_occupancy_explain(const char *fn, const cc_arch_limits *l,
                                   const cucore_kernel_resources *k, int block_size,
                                   size_t dynamic_shared_bytes, cc_occ_why why);

/* The largest block size the kernel may use on `l` (the kernel's own limit when set). */
int cc_occupancy_max_block(const cc_arch_limits *l, const cucore_kernel_resources *k);

/* ---- tests only ---------------------------------------------------------------------------- */

/* All rows of the table, ascending by arch; *count is set to their number
 * (tests/test_occupancy_model_table.c). */
const cc_arch_limits *cc_arch_table(int *count);

#endif /* CUCORE_OCCUPANCY_MODEL_H */
