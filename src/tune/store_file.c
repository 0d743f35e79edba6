/*
 * store_file.c -- reading a tune store file: one JSON object per line, each checked by the
 * strict reader, and the one reading of a record (its names, its configuration and result as
 * written, the result's fields: cucore_tune_record); a line that does not read (the torn last
 * line of a killed tune, an edit) is counted and skipped, never fatal. A refresh reads only
 * what other processes appended since. Also the store's default path under the cache folder.
 */
#define _POSIX_C_SOURCE 200809L /* pread, stat */
#include "compile/cache.h"
#include "tune/strict_json.h"
#include "tune/store.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* How every record line begins (the writer's bytes): a first line that begins so is a store's
 * even when a kill cut it. */
static const char record_start[] = "{\"v\":1,\"key\":";

cucore_status cc_tune_check_key(const char *fn, const char *key) {
  CC_CHECK_ARG(key, fn, "key");
  size_t n = 0;
  while (n < 64 && isxdigit((unsigned char)key[n])) n++;
  if (n == 64 && !key[64]) return CUCORE_OK;
  size_t len = strlen(key);
  if (len > 80) /* shown cut, and said so */
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: key `%.64s...` (%zu bytes) is not 64 hexadecimal digits (cucore_tune_key)",
                   fn, key, len);
  return cc_fail(CUCORE_INVALID_ARGUMENT,
                 "%s: key `%s` is not 64 hexadecimal digits (cucore_tune_key)", fn, key);
}

cucore_status cc_tune_store_default_path(const char *key, char **out) {
  cc_cache_settings s;
  cc_cache_settings_get(&s);
  *out = NULL;
  if (!s.dir[0])
    return cc_fail(CUCORE_IO_ERROR, "the tune store: no cache folder (set CUCORE_CACHE_DIR or "
                                    "HOME), and no path was given");
  cc_sb b = {0};
  cc_sb_printf(&b, "%s/tune/%s.jsonl", s.dir, key);
  *out = cc_sb_take(&b);
  return *out ? CUCORE_OK : CUCORE_HOST_OUT_OF_MEMORY;
}

static const char *str_member(const cc_json *o, const char *key) {
  const cc_json *v = cc_json_get(o, key);
  return v && v->type == CC_JSON_STRING ? v->text : NULL;
}

/* Member `key` of o as a number, or `none`. */
static double num(const cc_json *o, const char *key, double none) {
  const cc_json *v = cc_json_get(o, key);
  return v && v->type == CC_JSON_NUMBER ? v->number : none;
}

/* The result named `name` (NULL or unknown: a launch error, a failure). */
static cucore_tune_result status_of(const char *name) {
  for (int i = CUCORE_TUNE_OK; name && i <= CUCORE_TUNE_COMPILE_ERROR; i++)
    if (strcmp(cucore_tune_result_name((cucore_tune_result)i), name) == 0)
      return (cucore_tune_result)i;
  return CUCORE_TUNE_LAUNCH_ERROR;
}

/* The result's fields into t (its detail copied); -1 when out of memory. */
static int read_result(const cc_json *res, cc_trec *t) {
  t->status = status_of(str_member(res, "status"));
  t->median_ms = num(res, "median_ms", -1);
  t->p20_ms = num(res, "p20_ms", 0), t->p80_ms = num(res, "p80_ms", 0);
  t->rel_stddev = num(res, "rel_stddev", 0);
  double samples = num(res, "samples", 0);
  t->samples = samples > 0 && samples < 1e15 ? (size_t)samples : 0;
  t->batch = (int)num(res, "batch", 0), t->mode = (int)num(res, "mode", 0);
  t->sm_clock_mhz = (int)num(res, "sm_clock_mhz", -1);
  t->throttled = (int)num(res, "throttled", 0);
  t->max_abs_err = num(res, "max_abs_err", 0), t->max_rel_err = num(res, "max_rel_err", 0);
  t->has_error = t->status == CUCORE_TUNE_WRONG_ANSWER && cc_json_get(res, "max_abs_err");
  t->registers = (int)num(res, "registers", 0);
  t->occupancy = num(res, "occupancy", 0);
  t->compile_ms = num(res, "compile_ms", 0);
  const char *detail = str_member(res, "detail");
  const cc_json *fin = cc_json_get(res, "finalist");
  t->finalist = fin ? fin->type == CC_JSON_BOOL && fin->boolean
                    : detail && strncmp(detail, "finalist", 8) == 0;
  const cc_json *scr = cc_json_get(res, "screened");
  t->screened = scr && scr->type == CC_JSON_BOOL && scr->boolean;
  t->detail = cc_raw_strdup(detail ? detail : "");
  const char *uuid = str_member(res, "uuid");
  t->uuid = cc_raw_strdup(uuid ? uuid : "");
  return t->detail && t->uuid ? 0 : -1;
}

static char *copy_n(const char *s, size_t n) {
  char *t = cc_raw_malloc(n + 1);
  if (t) memcpy(t, s, n), t[n] = 0;
  return t;
}

static void free_rec(cc_trec *t) {
  free((char *)t->key), free((char *)t->problem), free((char *)t->device);
  free((char *)t->source), free((char *)t->kernel), free((char *)t->config);
  free((char *)t->result), free((char *)t->detail), free((char *)t->uuid);
}

/* Adds a record whose result `res` (its text result[0..result_len)) is parsed already. */
static int add_parsed(cc_trecs *rs, const cc_trec_names *nm, const char *config, size_t config_len,
                      const char *result, size_t result_len, const cc_json *res) {
  cc_trec *r = cc_grow(rs->r, &rs->cap, rs->n + 1, sizeof *r, "a tune store's records");
  if (!r) return -1;
  rs->r = r;
  cc_trec t = {0};
  t.key = cc_raw_strdup(nm->key ? nm->key : "");
  t.problem = cc_raw_strdup(nm->problem ? nm->problem : "");
  t.device = cc_raw_strdup(nm->device ? nm->device : "");
  t.source = cc_raw_strdup(nm->source ? nm->source : "");
  t.kernel = cc_raw_strdup(nm->kernel ? nm->kernel : "");
  t.config = copy_n(config, config_len);
  t.result = copy_n(result, result_len);
  int ok = t.key && t.problem && t.device && t.source && t.kernel && t.config && t.result;
  if (!ok || read_result(res, &t) < 0) {
    free_rec(&t);
    return -1;
  }
  rs->r[rs->n++] = t;
  return 0;
}

int cc_tune_records_add(cc_trecs *rs, const cc_trec_names *names, const char *config,
                        size_t config_len, const char *result, size_t result_len) {
  cc_json res;
  char why[64];
  if (cc_json_parse(result, result_len, &res, why, sizeof why) < 0)
    memset(&res, 0, sizeof res); /* checked by the caller: not reached */
  int r = add_parsed(rs, names, config, config_len, result, result_len, &res);
  cc_json_free(&res);
  return r;
}

/* One line; 0 when kept, 1 when it is not a record, -1 when out of memory. */
static int read_line(cc_trecs *rs, const char *line, size_t len) {
  cc_json o;
  char why[128];
  if (cc_json_parse(line, len, &o, why, sizeof why) < 0) return 1;
  const cc_json *v = cc_json_get(&o, "v"), *cfg = cc_json_get(&o, "config");
  const cc_json *res = cc_json_get(&o, "result");
  cc_trec_names nm = {str_member(&o, "key"), str_member(&o, "problem"), str_member(&o, "device"),
                      str_member(&o, "source"), str_member(&o, "kernel")};
  int r = 1;
  if (v && v->type == CC_JSON_NUMBER && v->number == 1 && nm.key && nm.problem && nm.device &&
      cfg && cfg->type == CC_JSON_OBJECT && res && res->type == CC_JSON_OBJECT)
    r = add_parsed(rs, &nm, line + cfg->at, cfg->len, line + res->at, res->len, res);
  cc_json_free(&o);
  return r;
}

/* Where the lines are read from and what to skip. */
typedef struct span {
  const char *data;
  size_t size;
  long long base;       /* the file offset of data[0] */
  int tail;             /* 1: a last line without a newline is read too (as damaged) */
  const long long *own; /* line offsets to skip, sorted */
  size_t nown;
} span;

/* The lines of sp: returns the bytes consumed (a torn last line is read as damaged but not
 * consumed: a refresh reads it again once it is whole), or -1 when out of memory; *added
 * counts the records read. */
static long long read_lines(cc_trecs *rs, const span *sp, size_t *added) {
  size_t at = 0, j = 0, hi = sp->nown;
  while (j < hi) { /* the first own line at or past base */
    size_t mid = j + (hi - j) / 2;
    if (sp->own[mid] < sp->base)
      j = mid + 1;
    else
      hi = mid;
  }
  while (at < sp->size) {
    const char *nl = memchr(sp->data + at, '\n', sp->size - at);
    if (!nl && !sp->tail) break;
    size_t len = nl ? (size_t)(nl - sp->data) - at : sp->size - at;
    long long off = sp->base + (long long)at;
    while (j < sp->nown && sp->own[j] < off) j++;
    int skip = !len || (j < sp->nown && sp->own[j] == off);
    int r = skip ? 0 : read_line(rs, sp->data + at, len);
    if (r < 0) return -1;
    if (off == 0)
      rs->first = len &&
                  (r == 0 ||
                   strncmp(sp->data, record_start,
                           len < sizeof record_start - 1 ? len : sizeof record_start - 1) == 0);
    rs->damaged += (size_t)(r > 0);
    *added += (size_t)(!skip && r == 0);
    if (!nl) break;
    at += len + 1;
  }
  return (long long)at;
}

cucore_status cc_tune_records_read(const char *path, cc_trecs *out) {
  memset(out, 0, sizeof *out);
  out->first = -1;
  struct stat st;
  if (stat(path, &st) != 0 && errno == ENOENT) return CUCORE_OK;
  unsigned char *data = NULL;
  size_t size = 0, added = 0;
  cucore_status s = cc_read_file(path, &data, &size);
  if (s != CUCORE_OK) return s;
  span sp = {(const char *)data, size, 0, 1, NULL, 0};
  long long end = read_lines(out, &sp, &added);
  out->torn = size > 0 && data[size - 1] != '\n';
  free(data);
  if (end < 0) return cc_fail(CUCORE_HOST_OUT_OF_MEMORY, "out of memory reading `%s`", path);
  out->end = end;
  return CUCORE_OK;
}

/* The bytes of fd from `from` to its end (malloc'd, *size); NULL with *size 0 when none. */
static cucore_status read_from(const char *path, int fd, long long from, char **data,
                               size_t *size) {
  struct stat st;
  *data = NULL, *size = 0;
  if (fstat(fd, &st) != 0)
    return cc_fail(CUCORE_IO_ERROR, "the tune store `%s`: %s", path, strerror(errno));
  if ((long long)st.st_size <= from) return CUCORE_OK;
  size_t want = (size_t)((long long)st.st_size - from);
  char *b = cc_malloc(want, "the new records of a tune store");
  if (!b) return CUCORE_HOST_OUT_OF_MEMORY;
  size_t got = 0;
  while (got < want) {
    ssize_t n = pread(fd, b + got, want - got, (off_t)(from + (long long)got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      free(b);
      return cc_fail(CUCORE_IO_ERROR, "the tune store `%s`: %s", path, strerror(errno));
    }
    if (n == 0) break; /* cut meanwhile */
    got += (size_t)n;
  }
  *data = b, *size = got;
  return CUCORE_OK;
}

cucore_status cc_tune_records_refresh(const char *path, cc_trecs *rs, const long long *own,
                                      size_t nown, size_t *added) {
  *added = 0;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT) return CUCORE_OK;
  if (fd < 0)
    return cc_fail(CUCORE_IO_ERROR, "the tune store `%s`: cannot read it: %s", path,
                   strerror(errno));
  char *data = NULL;
  size_t size = 0;
  cucore_status st = read_from(path, fd, rs->end, &data, &size);
  close(fd);
  if (st != CUCORE_OK || !size) return st;
  if (rs->torn && memchr(data, '\n', size)) /* the torn line counted damaged is whole now */
    rs->damaged -= rs->damaged > 0, rs->torn = 0;
  span sp = {data, size, rs->end, 0, own, nown}; /* an unfinished line waits, uncounted */
  long long used = read_lines(rs, &sp, added);
  free(data);
  if (used < 0) return cc_fail(CUCORE_HOST_OUT_OF_MEMORY, "out of memory reading `%s`", path);
  rs->end += used;
  return CUCORE_OK;
}

void cc_tune_records_free(cc_trecs *rs) {
  for (size_t i = 0; i < rs->n; i++) free_rec(&rs->r[i]);
  free(rs->r);
  memset(rs, 0, sizeof *rs);
}
