/* run_store.c -- the store of a measured tune: its key (the source, the compile options, the
 * kernel, the launch expressions, the parameters' names, the buffers and what makes a result
 * right), the device's fingerprint with the timing policy; rows measured before taken from it
 * (a resumed tune measures nothing twice) and every result appended to it. */
#include "compile/cache.h"
#include "tune/run.h"
#include "tune/space.h"

#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* `slot`'s expressions as "a,b,c". */
static void slot_text(const cucore_tune_space *s, int slot, cc_sb *b) {
  for (int i = 0; i < s->slot[slot].n; i++)
    cc_sb_printf(b, "%s%s", i ? "," : "", s->slot[slot].e[i].text);
}

/* "grid=..;block=..;smem=..;problem=..;div=..,..,..": the launch of the key. */
static void launch_text(const cucore_tune_space *s, cc_sb *b) {
  static const char *const name[CC_TUNE_SLOTS] = {"grid",  "block", "smem", "problem",
                                                  "div_x", "div_y", "div_z"};
  for (int i = 0; i < CC_TUNE_SLOTS; i++) {
    cc_sb_printf(b, "%s=", name[i]);
    slot_text(s, i, b);
    cc_sb_puts(b, ";");
  }
}

/* The buffers (role, element, count, a digest of their contents) and the checks. */
static void args_text(const cc_trun *c, cc_sb *b) {
  cc_sb_printf(b, "rtol=%.17g;atol=%.17g;poison=%d;check=%d\n%s\n", c->o.rtol, c->o.atol,
               c->o.poison, c->o.check != NULL, c->o.identity ? c->o.identity : "");
  for (size_t i = 0; i < c->nbufs; i++) {
    const cucore_tune_buffer *b2 = &c->bufs[i];
    char digest[33];
    cc_content_digest(b2->host, cc_tdata_bytes(b2), digest);
    cc_sb_printf(b, "buf %d %d %zu %zu %s\n", (int)b2->role, (int)b2->elem, b2->elem_size,
                 b2->count, digest);
  }
}

/* The tune's key into c->key; the problem size's text into *problem. */
static cucore_status make_key(cc_trun *c, cc_sb *problem) {
  const cucore_tune_space *s = c->space;
  const char *canon = "";
  cc_sb launch = {0}, args = {0}, params = {0};
  if (c->copts) cucore_options_canonical(c->copts, &canon);
  launch_text(s, &launch);
  args_text(c, &args);
  for (size_t i = 0; i < s->nparams; i++) cc_sb_printf(&params, "%s ", s->params[i].name);
  slot_text(s, CUCORE_TUNE_PROBLEM_SIZE, problem);
  cucore_status st = launch.failed || args.failed || params.failed || problem->failed
                         ? CUCORE_HOST_OUT_OF_MEMORY
                         : CUCORE_OK;
  cucore_tune_key_fields f = {.source = s->source,
                              .source_size = s->source ? strlen(s->source) : 0,
                              .options = canon,
                              .kernel = s->kernel,
                              .launch = cc_sb_text(&launch),
                              .args = cc_sb_text(&args),
                              .params = cc_sb_text(&params)};
  if (st == CUCORE_OK) st = cucore_tune_key(&f, c->key);
  cc_sb_free(&launch);
  cc_sb_free(&args);
  cc_sb_free(&params);
  return st;
}

cucore_status cc_tstore_open(cc_trun *c) {
  char timing[128], fp[1024];
  cc_sb problem = {0};
  cucore_status st = make_key(c, &problem);
  cucore_tune_timing_options o = cc_ttime_options(c);
  const char *cold = o.l2_bytes ? "cold" : c->rot ? "rotate" : "hot";
  snprintf(timing, sizeof timing, "%s;launch=%d;noise=%g", cold, o.mode, c->o.max_noise);
  cucore_device_props props;
  if (st == CUCORE_OK) st = cucore_device_get_props(c->o.device, &props);
  if (st == CUCORE_OK) st = cucore_tune_fingerprint(&props, timing, fp, sizeof fp);
  if (st == CUCORE_OK)
    st = cucore_tune_store_open(c->o.store_path, c->key, cc_sb_text(&problem), fp, &c->store);
  cc_sb_free(&problem);
  return st;
}

static double field(const char *json, const char *name) {
  char key[64];
  snprintf(key, sizeof key, "\"%s\":", name);
  const char *p = strstr(json, key);
  return p ? strtod(p + strlen(key), NULL) : 0;
}

/* A result the store kept: the row as it was measured. */
static void resume_row(cc_trun *c, cucore_tune_row *r, const char *json) {
  r->finalist = strstr(json, "\"detail\":\"finalist") != NULL;
  const char *st = strstr(json, "\"status\":\"");
  r->status = st ? cc_tune_result_parse(st + 10, strcspn(st + 10, "\"")) : CUCORE_TUNE_LAUNCH_ERROR;
  r->stats.median = field(json, "median_ms");
  r->stats.p20 = field(json, "p20_ms");
  r->stats.p80 = field(json, "p80_ms");
  r->stats.rel_stddev = field(json, "rel_stddev");
  r->stats.n = (size_t)field(json, "samples");
  r->batch = (int)field(json, "batch");
  r->mode = (int)field(json, "mode");
  r->sm_clock_mhz = strstr(json, "\"sm_clock_mhz\":") ? (int)field(json, "sm_clock_mhz") : -1;
  r->throttled = (int)field(json, "throttled");
  r->max_abs_err = field(json, "max_abs_err"), r->max_rel_err = field(json, "max_rel_err");
  r->has_error = r->status == CUCORE_TUNE_WRONG_ANSWER && strstr(json, "\"max_abs_err\":");
  r->registers = (int)field(json, "registers");
  r->model.occupancy = field(json, "occupancy");
  r->resumed = 1;
  cc_trun_text(&r->detail, "from the store%s", r->finalist ? " (a finalist)" : "");
  c->s.resumed++;
  c->done++;
  /* A failure counts wherever it was recorded: a fault measured by the process that ended on
   * it is a failure of this tune too. */
  c->s.wrong += r->status == CUCORE_TUNE_WRONG_ANSWER;
  c->s.failed += r->status != CUCORE_TUNE_OK && r->status != CUCORE_TUNE_WRONG_ANSWER &&
                 r->status != CUCORE_TUNE_SKIPPED;
  c->s.faults += r->status == CUCORE_TUNE_FAULT;
}

/* An error as the store's JSON keeps it (infinite: the largest double). */
static double stored_err(const cucore_tune_row *r, double e) {
  return !r->has_error ? 0 : e < DBL_MAX ? e : DBL_MAX;
}

void cc_tstore_record(cc_trun *c, const cucore_tune_row *r) {
  cc_sb config = {0}, res = {0};
  cc_tune_index_text(c->space, r->config.index, CUCORE_TUNE_TEXT_JSON, &config);
  cc_sb_printf(&res,
               "{\"status\":\"%s\",\"median_ms\":%.9g,\"p20_ms\":%.9g,\"p80_ms\":%.9g,"
               "\"rel_stddev\":%.6g,\"samples\":%zu,\"batch\":%d,\"registers\":%d,"
               "\"occupancy\":%.6g,\"mode\":%d,\"sm_clock_mhz\":%d,\"throttled\":%d,"
               "\"max_abs_err\":%.9g,\"max_rel_err\":%.9g,\"detail\":",
               cucore_tune_result_name(r->status), r->stats.median, r->stats.p20, r->stats.p80,
               r->stats.rel_stddev, r->stats.n, r->batch, r->registers, r->model.occupancy, r->mode,
               r->sm_clock_mhz, r->throttled, stored_err(r, r->max_abs_err),
               stored_err(r, r->max_rel_err));
  cc_sb_json_string(&res, r->detail, strlen(r->detail));
  cc_sb_puts(&res, "}");
  if (config.failed || res.failed)
    cc_trun_note(c, "the result of configuration %llu was not stored: out of host memory",
                 (unsigned long long)r->config.index);
  else if (cucore_tune_store_append(c->store, cc_sb_text(&config), cc_sb_text(&res)) != CUCORE_OK)
    cc_trun_note(c, "%s", cucore_last_error());
  cc_sb_free(&config);
  cc_sb_free(&res);
}

void cc_tstore_resume(cc_trun *c) {
  cc_sb config = {0};
  for (size_t i = 0; i < c->s.rows && !c->o.fresh; i++) {
    cucore_tune_row *r = &c->rows[i];
    const char *found = NULL;
    if (r->config.verdict != CUCORE_TUNE_RUNNABLE) continue;
    config.len = 0;
    if (cc_tune_index_text(c->space, r->config.index, CUCORE_TUNE_TEXT_JSON, &config) != CUCORE_OK)
      break;
    if (cucore_tune_store_find(c->store, cc_sb_text(&config), &found) == CUCORE_OK && found)
      resume_row(c, r, found);
  }
  cc_sb_free(&config);
}

void cc_tstore_close(cc_trun *c) {
  const char *path = "";
  if (c->store &&
      cucore_tune_store_get_info(c->store, &path, &c->s.store_records, NULL) == CUCORE_OK)
    snprintf(c->store_path, sizeof c->store_path, "%s", path);
  cucore_tune_store_close(c->store);
  c->store = NULL;
}
