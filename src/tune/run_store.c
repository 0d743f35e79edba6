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

/* `slot`'s expressions as "a,b,c" appended at buf[*len] (cap bytes in all). */
static void slot_text(const cucore_tune_space *s, int slot, char *buf, size_t cap, size_t *len) {
  for (int i = 0; i < s->slot[slot].n && *len < cap; i++)
    *len += (size_t)snprintf(buf + *len, cap - *len, "%s%s", i ? "," : "", s->slot[slot].e[i].text);
}

/* "grid=..;block=..;smem=..;problem=..;div=..,..,..": the launch of the key. */
static void launch_text(const cucore_tune_space *s, char *buf, size_t cap) {
  static const char *const name[CC_TUNE_SLOTS] = {"grid",  "block", "smem", "problem",
                                                  "div_x", "div_y", "div_z"};
  size_t len = 0;
  buf[0] = 0;
  for (int i = 0; i < CC_TUNE_SLOTS && len < cap; i++) {
    len += (size_t)snprintf(buf + len, cap - len, "%s=", name[i]);
    slot_text(s, i, buf, cap, &len);
    if (len < cap) len += (size_t)snprintf(buf + len, cap - len, ";");
  }
}

/* The buffers (role, element, count, a digest of their contents) and the checks. */
static void args_text(const cc_trun *c, char *buf, size_t cap) {
  size_t len = (size_t)snprintf(buf, cap, "rtol=%.17g;atol=%.17g;poison=%d;check=%d\n%s\n",
                                c->o.rtol, c->o.atol, c->o.poison, c->o.check != NULL,
                                c->o.identity ? c->o.identity : "");
  for (size_t i = 0; i < c->nbufs && len < cap; i++) {
    const cucore_tune_buffer *b = &c->bufs[i];
    char digest[33];
    cc_content_digest(b->host, cc_tdata_bytes(b), digest);
    len += (size_t)snprintf(buf + len, cap - len, "buf %d %d %zu %zu %s\n", (int)b->role,
                            (int)b->elem, b->elem_size, b->count, digest);
  }
}

static void make_key(cc_trun *c, char *problem, size_t cap) {
  const cucore_tune_space *s = c->space;
  const char *canon = "";
  char launch[4096], args[8192], params[1024] = "";
  if (c->copts) cucore_options_canonical(c->copts, &canon);
  launch_text(s, launch, sizeof launch);
  args_text(c, args, sizeof args);
  size_t len = 0, n = 0;
  cucore_tune_space_get_param_count(s, &n);
  for (size_t i = 0; i < n && len < sizeof params; i++) {
    cucore_tune_param_info p;
    cucore_tune_space_get_param(s, i, &p);
    len += (size_t)snprintf(params + len, sizeof params - len, "%s ", p.name);
  }
  cucore_tune_key_fields f = {.source = s->source,
                              .source_size = s->source ? strlen(s->source) : 0,
                              .options = canon,
                              .kernel = s->kernel,
                              .launch = launch,
                              .args = args,
                              .params = params};
  cucore_tune_key(&f, c->key);
  len = 0;
  problem[0] = 0;
  slot_text(s, CUCORE_TUNE_PROBLEM_SIZE, problem, cap, &len);
}

cucore_status cc_tstore_open(cc_trun *c) {
  char problem[512], timing[128], fp[1024];
  make_key(c, problem, sizeof problem);
  cucore_tune_timing_options o = cc_ttime_options(c);
  const char *cold = o.l2_bytes ? "cold" : c->rot ? "rotate" : "hot";
  snprintf(timing, sizeof timing, "%s;launch=%d;noise=%g", cold, o.mode, c->o.max_noise);
  cucore_device_props props;
  cucore_status st = cucore_device_get_props(c->o.device, &props);
  if (st == CUCORE_OK) st = cucore_tune_fingerprint(&props, timing, fp, sizeof fp);
  if (st == CUCORE_OK) st = cucore_tune_store_open(c->o.store_path, c->key, problem, fp, &c->store);
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
  snprintf(r->detail, sizeof r->detail, "from the store%s", r->finalist ? " (a finalist)" : "");
  c->s.resumed++;
}

/* An error as the store's JSON keeps it (infinite: the largest double). */
static double stored_err(const cucore_tune_row *r, double e) {
  return !r->has_error ? 0 : e < DBL_MAX ? e : DBL_MAX;
}

void cc_tstore_record(cc_trun *c, const cucore_tune_row *r) {
  char config[1024], res[1400], detail[400];
  cucore_tune_space_get_config_text(c->space, r->config.index, CUCORE_TUNE_TEXT_JSON, config,
                                    sizeof config, NULL);
  size_t k = 0;
  for (const char *p = r->detail; *p && k + 2 < sizeof detail; p++) {
    if (*p == '"' || *p == '\\') detail[k++] = '\\';
    detail[k++] = (unsigned char)*p < 0x20 ? ' ' : *p;
  }
  detail[k] = 0;
  snprintf(res, sizeof res,
           "{\"status\":\"%s\",\"median_ms\":%.9g,\"p20_ms\":%.9g,"
           "\"p80_ms\":%.9g,\"rel_stddev\":%.6g,\"samples\":%zu,\"batch\":%d,\"registers\":%d,"
           "\"occupancy\":%.6g,\"mode\":%d,\"sm_clock_mhz\":%d,\"throttled\":%d,"
           "\"max_abs_err\":%.9g,\"max_rel_err\":%.9g,\"detail\":\"%s\"}",
           cucore_tune_result_name(r->status), r->stats.median, r->stats.p20, r->stats.p80,
           r->stats.rel_stddev, r->stats.n, r->batch, r->registers, r->model.occupancy, r->mode,
           r->sm_clock_mhz, r->throttled, stored_err(r, r->max_abs_err),
           stored_err(r, r->max_rel_err), detail);
  if (cucore_tune_store_append(c->store, config, res) != CUCORE_OK)
    cc_trun_note(c, "%s", cucore_last_error());
}

void cc_tstore_resume(cc_trun *c) {
  for (size_t i = 0; i < c->s.rows && !c->o.fresh; i++) {
    cucore_tune_row *r = &c->rows[i];
    char config[1024];
    const char *found = NULL;
    if (r->config.verdict != CUCORE_TUNE_RUNNABLE) continue;
    cucore_tune_space_get_config_text(c->space, r->config.index, CUCORE_TUNE_TEXT_JSON, config,
                                      sizeof config, NULL);
    if (cucore_tune_store_find(c->store, config, &found) == CUCORE_OK && found)
      resume_row(c, r, found);
  }
}

void cc_tstore_close(cc_trun *c) {
  const char *path = "";
  if (c->store &&
      cucore_tune_store_get_info(c->store, &path, &c->s.store_records, NULL) == CUCORE_OK)
    snprintf(c->store_path, sizeof c->store_path, "%s", path);
  cucore_tune_store_close(c->store);
  c->store = NULL;
}
