/* store_results.c -- the store of a measured tune: its key (the source, the compile options, the
 * kernel, the launch expressions, the parameters' names, the buffers and what makes a result
 * right), the device's fingerprint with the timing policy; rows measured before taken from it
 * (a resumed tune measures nothing twice; the store's one reader gives their fields) and every
 * result appended to it with the source's and the kernel's names. A store that cannot be
 * appended to is still read (its results resumed) and the tune goes on keeping nothing, as one
 * that cannot be read at all; the note callback says so once. The claims of configuration
 * groups (gpu_loop.c shares the work of tunes on one store with them) are the store's locks.
 * The room's state (cc_tstore) is this file's alone. */
#include "compile/cache.h"
#include "tune/space.h"
#include "tune/store.h"
#include "tune/tuner.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FN_STORE "cucore_tune_run"

/* The room's state. */
struct cc_tstore {
  cucore_tune_store *store; /* NULL: none (not opened, or unreadable) */
  char key[65];             /* the tune's key ("" before the open) */
  char *path;               /* the store's path (malloc'd; NULL: none) */
  int no_locks;             /* 1: the store's locks cannot be had (said once): no work shared */
  char uuid[37];            /* the measuring GPU's UUID, written in each record ("" unknown) */
  char *given;              /* the path asked for: store_path, or store_dir's KEY.jsonl
                               (malloc'd; NULL: the default path) */
  size_t others_from;       /* cc_tstore_others: the records read so far */
};

cucore_status cc_tstore_init(cc_trun *c) {
  c->store = cc_calloc(1, sizeof *c->store, "cucore_tune_run: the store's state");
  return c->store ? CUCORE_OK : cucore_last_status();
}

const char *cc_tstore_key(const cc_trun *c) { return c->store->key; }

char *cc_tstore_take_path(cc_trun *c) {
  char *p = c->store->path;
  c->store->path = NULL;
  return p;
}

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
    cc_content_digest(b2->host, cc_trun_bytes(b2), digest);
    cc_sb_printf(b, "buf %d %d %zu %zu %s\n", (int)b2->role, (int)b2->elem, b2->elem_size,
                 b2->count, digest);
  }
}

/* The tune's key into the room's; the problem size's text into *problem. */
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
  if (st == CUCORE_OK) st = cucore_tune_key(&f, c->store->key);
  cc_sb_free(&launch);
  cc_sb_free(&args);
  cc_sb_free(&params);
  return st;
}

/* The store's path as given or by default (malloc'd; NULL when there is none). */
static char *wanted_path(const cc_trun *c) {
  char *p = NULL;
  if (c->store->given) return cc_raw_strdup(c->store->given);
  return cc_tune_store_default_path(c->store->key, &p) == CUCORE_OK ? p : NULL;
}

/* The store could not be opened for appending (`why`): read only, or not at all. */
static cucore_status open_read_only(cc_trun *c, const char *problem, const char *fp,
                                    const char *why) {
  cc_tstore *t = c->store;
  cucore_status st = cucore_tune_store_open_read_only(t->given, t->key, problem, fp, &t->store);
  if (st == CUCORE_OK) {
    c->s.store_use = CUCORE_TUNE_STORE_READ_ONLY;
    cc_trun_note(c,
                 "the results of this tune are not kept: %s (what the store holds is "
                 "resumed)",
                 why);
    return CUCORE_OK;
  }
  if (CUCORE_CODE(st) != CUCORE_IO_ERROR) return st; /* not a store: never written or read */
  c->s.store_use = CUCORE_TUNE_STORE_UNREADABLE;
  cc_trun_note(c,
               "the results of this tune are not kept and none is resumed (every "
               "configuration is measured): %s",
               cucore_last_error()); /* why it cannot be read says why it cannot be written */
  free(t->path);
  t->path = wanted_path(c);
  return CUCORE_OK;
}

/* The store opened for appending, else read only, else none; its names set. */
static cucore_status open_store(cc_trun *c, const char *problem, const char *fp) {
  cc_tstore *t = c->store;
  cucore_status st = cucore_tune_store_open(t->given, t->key, problem, fp, &t->store);
  if (CUCORE_CODE(st) == CUCORE_IO_ERROR) {
    char *why = cc_raw_strdup(cucore_last_error());
    st = open_read_only(c, problem, fp, why ? why : "out of host memory");
    free(why);
  } else if (st == CUCORE_OK) {
    c->s.store_use = CUCORE_TUNE_STORE_KEPT;
  }
  if (st == CUCORE_OK && t->store)
    st = cucore_tune_store_set_names(t->store, c->o.source_name ? c->o.source_name : "tune.cu",
                                     c->space->kernel);
  return st;
}

/* The path asked for (the key known): store_path as given, else store_dir's KEY.jsonl. */
static cucore_status given_path(cc_trun *c) {
  cc_tstore *t = c->store;
  free(t->given);
  t->given = NULL;
  if (!c->o.store_path && !c->o.store_dir) return CUCORE_OK;
  cc_sb b = {0};
  if (c->o.store_path)
    cc_sb_puts(&b, c->o.store_path);
  else
    cc_sb_printf(&b, "%s/%s.jsonl", c->o.store_dir, t->key);
  t->given = cc_sb_take(&b);
  return t->given ? CUCORE_OK : cc_fail(CUCORE_HOST_OUT_OF_MEMORY, "the tune store's path");
}

/* A report without a GPU (a login node): the one device fingerprint the store's records of
 * this key and problem have, into fp; several are refused, naming them. */
static cucore_status fingerprint_from_store(cc_trun *c, const char *problem, char *fp, size_t cap) {
  cucore_tune_store *in = NULL;
  size_t n = 0, found = 0;
  cucore_status st = cucore_tune_store_open_read_only(c->store->given, c->store->key, problem, "",
                                                      &in);
  if (st == CUCORE_OK) st = cucore_tune_store_get_record_count(in, &n);
  fp[0] = 0;
  for (size_t i = 0; st == CUCORE_OK && i < n; i++) {
    cucore_tune_record r;
    if (cucore_tune_store_get_record(in, i, &r) != CUCORE_OK || strcmp(r.key, c->store->key) != 0 ||
        strcmp(r.problem, problem) != 0 || strcmp(r.device, fp) == 0)
      continue;
    if (found++)
      st = cc_fail(CUCORE_INVALID_ARGUMENT,
                   FN_STORE ": a report without a GPU: the store has results of more than one "
                            "device (`%s` and `%s`): report on a GPU of the model wanted",
                   fp, r.device);
    else if (snprintf(fp, cap, "%s", r.device) >= (int)cap)
      st = cc_fail(CUCORE_INVALID_ARGUMENT,
                   FN_STORE ": a device fingerprint of %zu bytes in the store; at most %zu",
                   strlen(r.device), cap - 1);
  }
  cucore_tune_store_close(in);
  return st;
}

/* The fingerprint of the tune's device (its model, driver, compiler, cucore and the timing
 * policy) into fp, its UUID kept; a report-only tune without a GPU takes the store's. */
static cucore_status fingerprint(cc_trun *c, const char *problem, char *fp, size_t cap) {
  int ndev = 0;
  if (c->o.report_only && (cucore_device_get_count(&ndev) != CUCORE_OK || ndev <= c->o.device))
    return fingerprint_from_store(c, problem, fp, cap);
  char timing[128]; /* bounded: a word, an int and a %g: never cut */
  cucore_tune_timing_options o = cc_tdev_timing(c);
  const char *cold = o.l2_bytes ? "cold" : cc_tdev_rot_sets(c) ? "rotate" : "hot";
  snprintf(timing, sizeof timing, "%s;launch=%d;noise=%g", cold, o.mode, c->o.max_noise);
  cucore_device_props props;
  cucore_status st = cucore_device_get_props(c->o.device, &props);
  if (st == CUCORE_OK) st = cucore_tune_fingerprint(&props, timing, fp, cap);
  if (st == CUCORE_OK) snprintf(c->store->uuid, sizeof c->store->uuid, "%s", props.uuid);
  if (st == CUCORE_OK) snprintf(c->s.uuid, sizeof c->s.uuid, "%s", props.uuid);
  return st;
}

cucore_status cc_tstore_open(cc_trun *c) {
  char fp[1024]; /* bounded: the fingerprint refuses to be cut */
  cc_sb problem = {0};
  cucore_status st = make_key(c, &problem);
  if (st == CUCORE_OK) st = given_path(c);
  if (st == CUCORE_OK) st = fingerprint(c, cc_sb_text(&problem), fp, sizeof fp);
  if (st == CUCORE_OK) st = open_store(c, cc_sb_text(&problem), fp);
  cc_sb_free(&problem);
  return st;
}

/* A compile failure the store kept: the row as the failed compile left it (not measured, the
 * compiler's error), from the store. */
static void resume_compile_error(cc_trun *c, cucore_tune_row *r, const cucore_tune_record *x) {
  cc_trun_text(&r->error, "%s", x->detail[0] ? x->detail : "compile error");
  r->compile_ms = x->compile_ms;
  r->resumed = 1;
  cc_trun_text(&r->detail, "%s", "from the store");
  c->s.resumed++;
  c->s.compile_errors_stored++;
}

/* A result the store kept: the row as it was measured. */
static void resume_row(cc_trun *c, cucore_tune_row *r, const cucore_tune_record *x) {
  if (x->status == CUCORE_TUNE_COMPILE_ERROR) {
    resume_compile_error(c, r, x);
    return;
  }
  r->finalist = x->finalist;
  r->screened = x->screened;
  r->status = x->status;
  r->stats.median = x->median_ms < 0 ? 0 : x->median_ms;
  r->stats.p20 = x->p20_ms, r->stats.p80 = x->p80_ms;
  r->stats.rel_stddev = x->rel_stddev;
  r->stats.n = x->samples;
  r->batch = x->batch, r->mode = x->mode;
  r->sm_clock_mhz = x->sm_clock_mhz, r->throttled = x->throttled;
  r->max_abs_err = x->max_abs_err, r->max_rel_err = x->max_rel_err;
  r->has_error = x->has_error;
  r->registers = x->registers;
  r->model.occupancy = x->occupancy;
  r->resumed = 1;
  cc_trun_text(&r->detail, "from the store%s", r->finalist ? " (a finalist)" : "");
  c->s.resumed++; /* the progress counts it done */
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

/* Row r's result as the store's JSON (its strings written by the one JSON string writer). */
static void result_text(const cucore_tune_row *r, const char *uuid, cc_sb *res) {
  const char *status = cucore_tune_result_name(r->status);
  cc_sb_puts(res, "{\"status\":");
  cc_sb_json_string(res, status, strlen(status));
  cc_sb_printf(res,
               ",\"median_ms\":%.9g,\"p20_ms\":%.9g,\"p80_ms\":%.9g,"
               "\"rel_stddev\":%.6g,\"samples\":%zu,\"batch\":%d,\"registers\":%d,"
               "\"occupancy\":%.6g,\"mode\":%d,\"sm_clock_mhz\":%d,\"throttled\":%d,"
               "\"max_abs_err\":%.9g,\"max_rel_err\":%.9g,\"compile_ms\":%.6g,\"finalist\":%s,"
               "\"screened\":%s,\"detail\":",
               r->stats.median, r->stats.p20, r->stats.p80, r->stats.rel_stddev, r->stats.n,
               r->batch, r->registers, r->model.occupancy, r->mode, r->sm_clock_mhz, r->throttled,
               stored_err(r, r->max_abs_err), stored_err(r, r->max_rel_err), r->compile_ms,
               r->finalist ? "true" : "false", r->screened ? "true" : "false");
  cc_sb_json_string(res, r->detail, strlen(r->detail));
  cc_sb_puts(res, ",\"uuid\":");
  cc_sb_json_string(res, uuid, strlen(uuid));
  cc_sb_puts(res, "}");
}

void cc_tstore_record(cc_trun *c, const cucore_tune_row *r) {
  if (!c->store->store || c->s.store_use != CUCORE_TUNE_STORE_KEPT) return; /* said at the open */
  cc_sb config = {0}, res = {0};
  cc_tune_index_text(c->space, r->config.index, CUCORE_TUNE_TEXT_JSON, &config);
  result_text(r, c->store->uuid, &res);
  if (config.failed || res.failed) {
    cc_trun_note(c, "the result of configuration %llu was not stored: out of host memory",
                 (unsigned long long)r->config.index);
  } else if (cucore_tune_store_append(c->store->store, cc_sb_text(&config), cc_sb_text(&res)) !=
             CUCORE_OK) {
    cc_trun_note(c, "%s; the results of this tune are not kept from here on", cucore_last_error());
    c->s.store_use = CUCORE_TUNE_STORE_READ_ONLY;
  }
  cc_sb_free(&config);
  cc_sb_free(&res);
}

void cc_tstore_record_compile_error(cc_trun *c, const cc_tgroup *g) {
  for (size_t i = c->round_first; i < c->s.rows; i++) {
    const cucore_tune_row *r = &c->rows[i];
    if (r->config.compile_hash != g->hash || r->config.verdict != CUCORE_TUNE_RUNNABLE ||
        r->resumed || !r->error || !r->error[0])
      continue;
    cucore_tune_row x = *r; /* its texts borrowed */
    x.status = CUCORE_TUNE_COMPILE_ERROR;
    x.detail = r->error;
    cc_tstore_record(c, &x);
  }
}

/* The runnable rows not measured yet (of group `hash` only, unless `all`) that the store has a
 * result for, marked resumed. */
static void resume_rows(cc_trun *c, uint64_t hash, int all) {
  cc_sb config = {0};
  cucore_tune_store *store = c->store->store;
  for (size_t i = 0; store && i < c->s.rows && !c->o.fresh; i++) {
    cucore_tune_row *r = &c->rows[i];
    cucore_tune_record x;
    int found = 0;
    if (r->config.verdict != CUCORE_TUNE_RUNNABLE || r->resumed ||
        r->status != CUCORE_TUNE_NOT_MEASURED || (!all && r->config.compile_hash != hash))
      continue;
    config.len = 0;
    if (cc_tune_index_text(c->space, r->config.index, CUCORE_TUNE_TEXT_JSON, &config) != CUCORE_OK)
      break;
    if (cucore_tune_store_find_record(store, cc_sb_text(&config), &x, &found) == CUCORE_OK && found)
      resume_row(c, r, &x);
  }
  cc_sb_free(&config);
}

void cc_tstore_resume(cc_trun *c) { resume_rows(c, 0, 1); }

int cc_tstore_claim(cc_trun *c, uint64_t hash, int wait) {
  cc_tstore *t = c->store;
  if (!t->store || c->s.store_use != CUCORE_TUNE_STORE_KEPT || c->o.fresh || t->no_locks)
    return 1; /* nothing shared: measured here */
  int locked = 0;
  if (cucore_tune_store_lock(t->store, hash, wait, &locked) != CUCORE_OK) {
    t->no_locks = 1;
    cc_trun_note(c,
                 "%s; measuring without locks (another tune on this store may measure the "
                 "same configurations)",
                 cucore_last_error());
    return 1;
  }
  if (!locked) return 0;
  if (cucore_tune_store_refresh(t->store, NULL) != CUCORE_OK) /* what others measured */
    cc_trun_note(c, "%s", cucore_last_error());
  resume_rows(c, hash, 0);
  return 1;
}

void cc_tstore_release(cc_trun *c, uint64_t hash) {
  cc_tstore *t = c->store;
  if (t->store && !t->no_locks) cucore_tune_store_unlock(t->store, hash);
}

size_t cc_tstore_others(cc_trun *c, cc_tstore_seen fn, void *user) {
  cc_tstore *t = c->store;
  size_t n = 0, told = 0;
  if (!t->store || cucore_tune_store_refresh(t->store, NULL) != CUCORE_OK ||
      cucore_tune_store_get_record_count(t->store, &n) != CUCORE_OK)
    return 0;
  for (; t->others_from < n; t->others_from++) {
    cucore_tune_record r;
    uint64_t index = 0;
    if (cucore_tune_store_get_record(t->store, t->others_from, &r) != CUCORE_OK ||
        !cc_tune_store_mine(t->store, &r) || r.status == CUCORE_TUNE_SKIPPED ||
        !cc_tune_index_of_json(c->space, r.config, &index))
      continue;
    int ok = r.status == CUCORE_TUNE_OK && r.median_ms > 0;
    told += (size_t)fn(user, index, ok ? r.median_ms : NAN);
  }
  return told;
}

void cc_tstore_close(cc_trun *c) {
  cc_tstore *t = c->store;
  const char *path = "";
  if (t->store &&
      cucore_tune_store_get_info(t->store, &path, &c->s.store_records, NULL) == CUCORE_OK) {
    free(t->path);
    t->path = cc_raw_strdup(path); /* NULL when out of memory: the report says "" */
  }
  cucore_tune_store_close(t->store);
  t->store = NULL;
}

void cc_tstore_free(cc_trun *c) {
  if (!c->store) return;
  if (c->store->store) cc_tstore_close(c);
  free(c->store->path);
  free(c->store->given);
  free(c->store);
  c->store = NULL;
}
