/* run_time.c -- timing one configuration (cucore_tune_time_launch) with what the options ask:
 * the launch mode, the cold cache (flush, rotated copies, none) and the SM clock observed
 * through NVML (probed once: without NVML a note, and the tune goes on). */
#include "tune/run.h"

#include <stdlib.h>
#include <string.h>

cucore_launch_config cc_ttime_launch_of(const cc_trun *c, const cucore_tune_row *r) {
  cucore_launch_config cfg;
  memset(&cfg, 0, sizeof cfg);
  memcpy(cfg.grid, r->config.grid, sizeof cfg.grid);
  memcpy(cfg.block, r->config.block, sizeof cfg.block);
  cfg.shared_bytes = (unsigned)r->config.smem;
  cfg.stream = cc_tdata_stream(c);
  return cfg;
}

void cc_ttime_probe(cc_trun *c) {
  int mhz = -1; /* the clock alone: every NVML fact would cost milliseconds */
  cucore_status st = cucore_system_get_clock(c->o.device, &mhz, NULL);
  c->observe_clock = st == CUCORE_OK;
  if (st != CUCORE_OK)
    cc_trun_note(c, "the SM clock is not observed, throttled samples are not discarded (%s)",
                 cucore_last_error());
}

cucore_tune_timing_options cc_ttime_options(const cc_trun *c) {
  cucore_tune_timing_options o = CUCORE_TUNE_TIMING_DEFAULTS;
  if (c->o.max_noise > 0) o.max_noise = c->o.max_noise;
  int hot = c->o.cold == CUCORE_TUNE_COLD_NONE;
  o.l2_bytes = hot || c->rot ? 0 : cc_tdata_l2(c);
  o.mode = c->o.launch_mode;
  o.observe_clock = c->observe_clock;
  return o;
}

/* The rotated argument sets of group g's kernel k, each bound to its copies. */
static cucore_status rotate_bind(cc_trun *c, const cc_tgroup *g, cucore_kernel *k,
                                 cucore_args **sets) {
  cucore_status st = CUCORE_OK;
  for (int s = 0; s < cc_trot_sets(c) && st == CUCORE_OK; s++)
    st = cc_tbind(c, g, k, cc_trot_ptrs(c, s), &sets[s]);
  return st;
}

cucore_status cc_ttime(cc_trun *c, cucore_kernel *k, cucore_args *a, const cucore_tune_row *r,
                       cucore_tune_timing_options *o, cucore_tune_timing *t) {
  cucore_launch_config cfg = cc_ttime_launch_of(c, r);
  int n = cc_trot_sets(c);
  const cc_tgroup *g = n ? cc_trun_group_of(c, r) : NULL;
  cucore_args **sets = g && g->obj ? cc_raw_calloc((size_t)n, sizeof *sets) : NULL;
  if (sets && rotate_bind(c, g, k, sets) == CUCORE_OK) {
    o->rotate = sets;
    o->nrotate = n;
  }
  if (o->l2_bytes) o->flush_buffer = cc_tdata_flush(c, o->l2_bytes * 2);
  double t0 = cc_trun_now_ms();
  cucore_status st = cucore_tune_time_launch(k, &cfg, a, o, t);
  c->s.gpu_ms += cc_trun_now_ms() - t0;
  for (int s = 0; sets && s < n; s++) cucore_args_destroy(sets[s]);
  free(sets);
  o->rotate = NULL, o->nrotate = 0;
  return st;
}
