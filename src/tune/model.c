/*
 * model.c -- what the host occupancy model says of one compiled configuration: whether any
 * block can be resident (a configuration that cannot is never launched), occupancy, waves and
 * tail efficiency over the device's SMs, local memory; and the score that orders the search
 * (--strategy model-first): occupancy x tail efficiency, halved when the kernel uses local
 * memory. Filters (minimum occupancy, no spills) apply only when asked for.
 */
#include "exec/occupancy_model.h"
#include "tune/space.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static void waves(const cucore_arch_limits *l, cucore_tune_model *m) {
  m->waves = 0;
  m->tail_efficiency = 1;
  if (l->sm_count <= 0 || m->blocks_per_sm <= 0) return;
  double per_wave = (double)m->blocks_per_sm * l->sm_count;
  m->waves = (double)m->blocks / per_wave;
  m->tail_efficiency = (double)m->blocks / (ceil(m->waves) * per_wave);
}

static void filter(const cucore_tune_filter *f, const cucore_tune_model *m,
                   cucore_tune_config *cfg) {
  if (!f) return;
  if (f->no_spills && m->local_bytes > 0) {
    cfg->verdict = CUCORE_TUNE_MODEL_REJECTED;
    cc_format_field(cfg->reason, sizeof cfg->reason,
                    "%d bytes of local memory per thread (spills "
                    "or stack), and spills were refused",
                    m->local_bytes);
  } else if (f->min_occupancy > 0 && m->occupancy < f->min_occupancy) {
    cfg->verdict = CUCORE_TUNE_MODEL_REJECTED;
    cc_format_field(cfg->reason, sizeof cfg->reason,
                    "occupancy %.3f (%s) is below the minimum %.3f", m->occupancy,
                    cucore_occupancy_limit_name(m->limit), f->min_occupancy);
  }
}

cucore_status cucore_tune_model_check(const cucore_arch_limits *l,
                                      const cucore_kernel_resources *res, int local_bytes,
                                      const cucore_tune_filter *f, cucore_tune_config *cfg,
                                      cucore_tune_model *out) {
  cc_begin();
  const char *fn = "cucore_tune_model_check";
  CC_CHECK_ARG(cfg, fn, "cfg");
  CC_CHECK_ARG(out, fn, "out");
  cucore_status st = cc_occupancy_check(fn, l, res, 0);
  if (st != CUCORE_OK) return st;
  memset(out, 0, sizeof *out);
  uint64_t threads = (uint64_t)cfg->block[0] * cfg->block[1] * cfg->block[2];
  out->blocks = (uint64_t)cfg->grid[0] * cfg->grid[1] * cfg->grid[2];
  out->local_bytes = local_bytes;
  if (cfg->verdict != CUCORE_TUNE_RUNNABLE) return CUCORE_OK;
  cucore_occupancy_result r;
  cc_occ_why why;
  int block = threads > 1u << 20 ? 1 << 20 : (int)threads;
  out->blocks_per_sm = cc_occupancy_model_blocks(l, res, block, (size_t)cfg->smem, 0, &r, &why);
  out->occupancy = r.occupancy;
  out->limit = r.limit;
  waves(l, out);
  if (out->blocks_per_sm == 0) {
    /* the explanation is the model's own: record it, then take it back from this thread */
    cc_occupancy_explain(fn, l, res, block, (size_t)cfg->smem, why);
    cfg->verdict = CUCORE_TUNE_MODEL_REJECTED;
    cc_format_field(cfg->reason, sizeof cfg->reason, "%s", cucore_last_error());
    cc_begin();
    return CUCORE_OK;
  }
  out->score = out->occupancy * out->tail_efficiency * (local_bytes > 0 ? 0.5 : 1.0);
  filter(f, out, cfg);
  return CUCORE_OK;
}
