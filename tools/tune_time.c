/* tune_time.c -- timing one row of `cucore tune` (cucore_tune_time_launch) with what the
 * command line asked: the launch mode, the cold cache (flush, rotated copies, none) and the
 * SM clock observed through NVML (probed once: without NVML the tune says so and goes on). */
#include <stdlib.h>
#include <string.h>

#include "tune.h"

cucore_launch_config tune_launch_of(const tune_ctx *c, const tune_row *r) {
  cucore_launch_config cfg;
  memset(&cfg, 0, sizeof cfg);
  memcpy(cfg.grid, r->cfg.grid, sizeof cfg.grid);
  memcpy(cfg.block, r->cfg.block, sizeof cfg.block);
  cfg.shared_bytes = (unsigned)r->cfg.smem;
  cfg.stream = tune_dev_stream(c);
  return cfg;
}

void tune_clock_probe(tune_ctx *c) {
  cucore_system_info info;
  cucore_status st = cucore_system_get_device_info(0, &info);
  c->observe_clock = st == CUCORE_OK;
  if (st != CUCORE_OK)
    fprintf(stderr,
            "cucore tune: note: the SM clock is not observed, throttled samples are "
            "not discarded (%s)\n",
            cucore_last_error());
}

cucore_tune_timing_options tune_timing_of(const tune_ctx *c) {
  const tune_line *l = c->line;
  cucore_tune_timing_options o = CUCORE_TUNE_TIMING_DEFAULTS;
  if (l->max_noise > 0) o.max_noise = l->max_noise;
  int hot = l->cache_hot || l->cold_mode == TUNE_COLD_NONE;
  o.l2_bytes = hot || tune_rotating(c) ? 0 : tune_dev_l2(c);
  o.mode = l->launch_mode     ? l->launch_mode
           : l->launch_single ? CUCORE_TUNE_LAUNCH_SINGLE
                              : CUCORE_TUNE_LAUNCH_AUTO;
  o.observe_clock = c->observe_clock;
  return o;
}

static const tune_group *group_of(const tune_ctx *c, const tune_row *r) {
  for (size_t i = 0; i < c->ngroups; i++)
    if (c->groups[i].hash == r->cfg.compile_hash) return &c->groups[i];
  return NULL;
}

cucore_status tune_time(tune_ctx *c, cucore_kernel *k, cucore_args *a, const tune_row *r,
                        cucore_tune_timing_options *o, cucore_tune_timing *t) {
  cucore_launch_config cfg = tune_launch_of(c, r);
  cucore_args **sets = NULL;
  const tune_group *g = tune_rotating(c) ? group_of(c, r) : NULL;
  if (g && g->obj && tune_rotate_bind(c, g, k, &sets) == 0) {
    o->rotate = sets;
    o->nrotate = tune_rotate_sets(c);
  }
  double t0 = cli_now_ms();
  cucore_status st = cucore_tune_time_launch(k, &cfg, a, o, t);
  c->gpu_ms += cli_now_ms() - t0;
  if (g) tune_rotate_unbind(c, sets);
  o->rotate = NULL, o->nrotate = 0;
  return st;
}
