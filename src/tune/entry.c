/* entry.c -- cucore_tune_run(), the entry of the tune's rooms (tuner.h): the inputs checked
 * (each refusal names the field and what was expected) and copied, the arch and its limits
 * (the options', else the device's), every configuration past the restrictions made a row;
 * the rooms' states made; then the dry run's compiles (compile_pipe.c), or the measured tune
 * (gpu_loop.c); the report made from what is left; the rooms let go. */
#define _POSIX_C_SOURCE 200809L /* sysconf */
#include "tune/search.h"
#include "tune/space.h"
#include "tune/tuner.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FN "cucore_tune_run"

static cucore_status bad(const char *what, const char *expected) {
  return cc_fail(CUCORE_INVALID_ARGUMENT, FN ": %s: expected %s", what, expected);
}

static cucore_status check_options(const cucore_tune_run_options *o, size_t nbuffers) {
  if (o->device < 0) return bad("options->device", "a device ordinal >= 0");
  if (o->arch < 0 || o->sm_count < 0) return bad("options->arch and sm_count", "0 or more");
  if (o->jobs < 0 || o->jobs > 256) return bad("options->jobs", "0 (automatic) to 256");
  if (!(o->compile_timeout_s >= 0) || !(o->max_noise >= 0))
    return bad("options->compile_timeout_s and max_noise", "0 or more");
  if (o->launch_mode < CUCORE_TUNE_LAUNCH_AUTO || o->launch_mode > CUCORE_TUNE_LAUNCH_GRAPH)
    return bad("options->launch_mode", "a CUCORE_TUNE_LAUNCH_* (0..3)");
  if ((unsigned)o->cold > CUCORE_TUNE_COLD_AUTO)
    return bad("options->cold", "a cucore_tune_cold (0..3)");
  if (o->finalists < 0) return bad("options->finalists", "0 or more");
  if (!(o->top_fraction >= 0 && o->top_fraction <= 1))
    return bad("options->top_fraction", "0..1 (0: all)");
  if (!(o->min_occupancy >= 0 && o->min_occupancy <= 1))
    return bad("options->min_occupancy", "0..1 (0: off)");
  if (o->max_evals && (o->dry_run || o->model_first || o->top_fraction > 0))
    return bad("options->max_evals with dry_run, model_first or top_fraction",
               "a search measures what it proposes: max_evals 0, or a measured tune without "
               "model_first and top_fraction");
  if ((unsigned)o->strategy >= (unsigned)CUCORE_TUNE_STRATEGY_COUNT)
    return bad("options->strategy", "a cucore_tune_strategy (0..4)");
  if (!(o->time_limit_s >= 0)) return bad("options->time_limit_s", "0 (none) or more seconds");
  if (o->strategy_options && !o->max_evals)
    return bad("options->strategy_options without max_evals",
               "a search (max_evals > 0): the options are its strategy's");
  if (o->shard_count > 1 && o->shard_index >= o->shard_count)
    return bad("options->shard_index", "0 to shard_count - 1");
  if (o->report_only && (o->dry_run || o->max_evals || o->retime_finalists))
    return bad("options->report_only with dry_run, max_evals or retime_finalists",
               "report_only alone: it reports what the store holds and launches nothing (a "
               "search's results are reported by a report_only tune without max_evals)");
  if (o->retime_finalists && o->dry_run)
    return bad("options->retime_finalists with dry_run", "a measured tune");
  cc_tstrat_values given; /* read now: a mistake is found before any compile */
  cucore_status read = cc_tstrat_values_read((cc_tstrategy)o->strategy, o->strategy_options,
                                             &given);
  if (read != CUCORE_OK) return read;
  if (!o->bind && (nbuffers || !o->dry_run))
    return bad("options->bind is NULL",
               "a bind callback: a measured tune (or one with buffers) binds every "
               "configuration's arguments through it");
  return CUCORE_OK;
}

static cucore_status check_buffer(const cucore_tune_buffer *b, size_t i) {
  size_t es = b->elem_size;
  if ((unsigned)b->role > CUCORE_TUNE_INOUT || (unsigned)b->elem > CUCORE_TUNE_ELEM_BFLOAT16)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   FN ": buffer %zu: role %d or elem %d: expected a cucore_tune_role and a "
                      "cucore_tune_elem",
                   i, (int)b->role, (int)b->elem);
  if (!cc_dtype_size_ok(cc_trun_dtype(b->elem), es))
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   FN ": buffer %zu: elem_size %zu: expected 1, 2, 4 or 8 bytes (floats 2, 4 "
                      "or 8, bfloat16 2)",
                   i, es);
  if (b->count > SIZE_MAX / es)
    return cc_fail(CUCORE_INVALID_ARGUMENT, FN ": buffer %zu: %zu elements of %zu bytes overflow",
                   i, b->count, es);
  return CUCORE_OK;
}

/* Buffer i into c->bufs[i]: its label (or its index) copied, its initial contents read from
 * the caller's memory during the call (a tune's inputs are often hundreds of MB, and a
 * finished tune's rerun never reads them but for the key's digest), or zeros allocated here. */
static cucore_status copy_buffer(cc_trun *c, const cucore_tune_buffer *b, size_t i) {
  cucore_tune_buffer *d = &c->bufs[i];
  char index[32];
  snprintf(index, sizeof index, "%zu", i);
  *d = *b;
  d->label = cc_strdup(b->label ? b->label : index, FN ": a buffer's label");
  if (!d->label) return cucore_last_status();
  if (b->host) return CUCORE_OK;
  size_t bytes = cc_trun_bytes(b);
  d->host = cc_calloc(bytes ? bytes : 1, 1, FN ": a buffer's contents");
  c->host_owned[i] = 1;
  return d->host ? CUCORE_OK : cucore_last_status();
}

/* The options, the compile options and the buffers copied into c. */
static cucore_status copy_inputs(cc_trun *c, const cucore_options *copts,
                                 const cucore_tune_buffer *buffers, size_t n,
                                 const cucore_tune_run_options *o) {
  c->o = *o;
  c->o.identity = c->o.source_name = c->o.strategy_options = NULL;
  if (o->identity && !(c->o.identity = cc_strdup(o->identity, FN ": options->identity")))
    return cucore_last_status();
  if (o->source_name && !(c->o.source_name = cc_strdup(o->source_name, FN ": source_name")))
    return cucore_last_status();
  if (o->strategy_options &&
      !(c->o.strategy_options = cc_strdup(o->strategy_options, FN ": strategy_options")))
    return cucore_last_status();
  if (c->o.max_noise <= 0) c->o.max_noise = 0.02;
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  c->s.jobs = o->jobs ? o->jobs : cores > 2 ? (int)cores - 1 : 1;
  c->s.shard_index = o->shard_count > 1 ? o->shard_index : 0;
  c->s.shard_count = o->shard_count > 1 ? o->shard_count : 0;
  c->s.report_only = o->report_only;
  if (copts) {
    cucore_status st = cucore_options_copy(copts, &c->copts);
    if (st != CUCORE_OK) return st;
  }
  c->bufs = cc_calloc(n ? n : 1, sizeof *c->bufs, FN ": the buffers");
  c->host_owned = cc_calloc(n ? n : 1, 1, FN ": the buffers");
  if (!c->bufs || !c->host_owned) return cucore_last_status();
  for (; c->nbufs < n; c->nbufs++) {
    cucore_status st = check_buffer(&buffers[c->nbufs], c->nbufs);
    if (st == CUCORE_OK) st = copy_buffer(c, &buffers[c->nbufs], c->nbufs);
    if (st != CUCORE_OK) return c->nbufs++, st; /* counted: its copies are freed */
  }
  return CUCORE_OK;
}

/* The arch and its limits: the options', else the device's (with its SM count), else the
 * space's own limits; none: nothing compiles. The space's limits are set. */
static cucore_status find_arch(cc_trun *c) {
  int ndev = 0, arch = c->o.arch;
  cucore_device_props props;
  int gpu = cucore_device_get_count(&ndev) == CUCORE_OK && ndev > c->o.device &&
            cucore_device_get_props(c->o.device, &props) == CUCORE_OK;
  if (!c->o.dry_run && !c->o.report_only && !gpu)
    return cc_fail(CUCORE_NO_DEVICE,
                   FN ": no GPU %d to measure on (a dry run, or a report of the store, needs "
                      "none)",
                   c->o.device);
  if (!arch && gpu) arch = props.arch;
  if (gpu) c->l2_bytes = (size_t)props.l2_cache_bytes, c->mem_bytes = props.total_memory;
  cucore_arch_limits lim;
  cucore_status st = CUCORE_OK;
  if (!arch && c->space->has_limits)
    lim = c->space->limits;
  else if (!arch)
    return CUCORE_OK; /* no arch: no compile stage */
  else
    st = gpu && props.arch == arch ? cucore_arch_limits_from_device(&props, &lim)
                                   : cucore_arch_get_limits(arch, &lim);
  if (st != CUCORE_OK) return st;
  if (c->o.sm_count) lim.sm_count = c->o.sm_count;
  c->s.limits = lim;
  return cucore_tune_space_set_limits(c->space, &lim);
}

/* Every configuration past the restrictions, checked, as a row. */
static cucore_status collect_rows(cc_trun *c) {
  cucore_status st = cucore_tune_space_count(c->space, &c->s.counts);
  if (st != CUCORE_OK) return st;
  uint64_t keep = c->s.counts.after_restrictions;
  if (c->o.dry_run && !c->s.limits.arch && c->o.max_rows && keep > c->o.max_rows) {
    c->s.rows_omitted = keep; /* nothing compiled: the counts say all there is */
    return CUCORE_OK;
  }
  if (keep > SIZE_MAX / sizeof *c->rows)
    return cc_fail(CUCORE_INVALID_ARGUMENT, FN ": %llu configurations: too many rows to keep",
                   (unsigned long long)keep);
  c->rows = cc_calloc(keep ? (size_t)keep : 1, sizeof *c->rows, FN ": the rows");
  if (!c->rows) return cucore_last_status();
  for (uint64_t i = 0; i < c->s.counts.raw; i++) {
    cucore_tune_row r;
    memset(&r, 0, sizeof r);
    r.error = r.detail = cc_trun_none;
    cucore_tune_space_get_config(c->space, i, &r.config);
    if (r.config.verdict != CUCORE_TUNE_RESTRICTED && c->s.rows < keep) c->rows[c->s.rows++] = r;
  }
  return CUCORE_OK;
}

/* Whether the results are checked at all: a check callback, or an output or in-place buffer
 * compared with the first configuration's. */
static int verifies(const cc_trun *c) {
  int out = 0;
  for (size_t i = 0; i < c->nbufs; i++) out |= c->bufs[i].role != CUCORE_TUNE_IN;
  return c->o.check != NULL || out;
}

/* Each room's state made (the rooms let go of what they hold in free_run). */
static cucore_status make_rooms(cc_trun *c) {
  cucore_status st = cc_tcomp_init(c);
  if (st == CUCORE_OK) st = cc_tdev_init(c);
  if (st == CUCORE_OK) st = cc_tstore_init(c);
  if (st == CUCORE_OK) st = cc_tmeas_init(c);
  return st;
}

static void free_run(cc_trun *c) {
  cc_tmeas_free(c);
  cc_tstore_free(c);
  cc_tdev_free(c); /* the helper thread joined */
  cc_tcomp_free(c);
  for (size_t i = 0; c->rows && i < c->s.rows; i++) {
    cc_trun_text_free(&c->rows[i].error);
    cc_trun_text_free(&c->rows[i].detail);
  }
  for (size_t i = 0; c->bufs && i < c->nbufs; i++) {
    free((char *)c->bufs[i].label);
    if (c->host_owned && c->host_owned[i]) free((void *)c->bufs[i].host);
  }
  free(c->bufs);
  free(c->host_owned);
  free(c->rows);
  free((char *)c->o.identity);
  free((char *)c->o.source_name);
  free((char *)c->o.strategy_options);
  cucore_options_destroy(c->copts);
}

static cucore_status run(cc_trun *c, const cucore_options *copts, const cucore_tune_buffer *b,
                         size_t nb, const cucore_tune_run_options *o, cucore_tune_report **out) {
  cucore_status st = make_rooms(c);
  if (st == CUCORE_OK) st = copy_inputs(c, copts, b, nb, o);
  if (st == CUCORE_OK) st = cc_tune_kernel_holes(c->space); /* before any compile: exit 2 */
  c->s.verified = verifies(c);
  if (st == CUCORE_OK && !c->o.dry_run && (!c->space->kernel || !c->space->source))
    st = cc_fail(CUCORE_INVALID_ARGUMENT,
                 FN ": the space has no %s: expected one set (cucore_tune_space_set_%s) before a "
                    "measured tune",
                 c->space->kernel ? "source" : "kernel", c->space->kernel ? "source" : "kernel");
  if (st == CUCORE_OK) st = find_arch(c);
  if (st == CUCORE_OK && c->o.max_evals) st = cc_tmeas_search(c);
  if (st == CUCORE_OK && (!c->o.max_evals || c->s.exhaustive)) {
    st = collect_rows(c);
    if (st == CUCORE_OK && c->o.dry_run && c->s.limits.arch) st = cc_tcomp_dry_run(c);
    if (st == CUCORE_OK && !c->o.dry_run) st = cc_tmeas_all(c);
    if (c->s.exhaustive) c->s.evals = c->s.counts.runnable; /* the rows the limits let run */
  }
  if (st == CUCORE_OK) st = cc_treport_make(c, out);
  return st;
}

cucore_status cucore_tune_run(cucore_tune_space *space, const cucore_options *compile_options,
                              const cucore_tune_buffer *buffers, size_t nbuffers,
                              const cucore_tune_run_options *options, cucore_tune_report **out) {
  cc_begin();
  CC_CHECK_HANDLE(space, TUNE_SPACE, FN, "space");
  CC_CHECK_ARG(options, FN, "options");
  CC_CHECK_ARG(out, FN, "out");
  *out = NULL;
  if (nbuffers && !buffers)
    return cc_fail(CUCORE_INVALID_ARGUMENT, FN ": `buffers` is NULL with nbuffers %zu", nbuffers);
  cucore_status st = check_options(options, nbuffers);
  if (st != CUCORE_OK) return st;
  cc_trun c;
  memset(&c, 0, sizeof c);
  c.space = space;
  st = run(&c, compile_options, buffers, nbuffers, options, out);
  free_run(&c);
  return st;
}
