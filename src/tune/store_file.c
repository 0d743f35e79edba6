/*
 * store_file.c -- reading a tune store file: one JSON object per line, each checked by the
 * strict reader; a line that does not read (the torn last line of a killed tune, an edit) is
 * counted and skipped, never fatal. Also the store's default path under the compile cache.
 */
#define _POSIX_C_SOURCE 200809L /* stat */
#include "compile/cache.h"
#include "tune/json.h"
#include "tune/store.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

cucore_status cc_tune_check_key(const char *fn, const char *key) {
  CC_CHECK_ARG(key, fn, "key");
  size_t n = 0;
  while (n < 64 && isxdigit((unsigned char)key[n])) n++;
  if (n != 64 || key[64])
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: key `%.80s` is not 64 hexadecimal digits "
                   "(cucore_tune_key)",
                   fn, key);
  return CUCORE_OK;
}

cucore_status cc_tune_store_default_path(const char *key, char *out, size_t cap) {
  cc_cache_settings s;
  cc_cache_settings_get(&s);
  if (!s.dir[0])
    return cc_fail(CUCORE_IO_ERROR, "the tune store: no cache folder (set CUCORE_CACHE_DIR or "
                                    "HOME), and no path was given");
  if ((size_t)snprintf(out, cap, "%s/tune/%s.jsonl", s.dir, key) >= cap)
    return cc_fail(CUCORE_IO_ERROR, "the tune store: the path under `%s` is too long", s.dir);
  return CUCORE_OK;
}

int cc_tune_records_add(cc_trecs *rs, const char *key, const char *problem, const char *device,
                        const char *config, size_t config_len, const char *result,
                        size_t result_len) {
  cc_trec *r = cc_grow(rs->r, &rs->cap, rs->n + 1, sizeof *r, "a tune store's records");
  if (!r) return -1;
  rs->r = r;
  cc_trec t = {cc_raw_strdup(key),
               cc_raw_strdup(problem),
               cc_raw_strdup(device),
               cc_raw_malloc(config_len + 1),
               cc_raw_malloc(result_len + 1),
               -1,
               0};
  if (!t.key || !t.problem || !t.device || !t.config || !t.result) {
    free(t.key), free(t.problem), free(t.device), free(t.config), free(t.result);
    return -1;
  }
  memcpy(t.config, config, config_len);
  t.config[config_len] = 0;
  memcpy(t.result, result, result_len);
  t.result[result_len] = 0;
  cc_json res;
  char why[64];
  if (cc_json_parse(t.result, result_len, &res, why, sizeof why) == 0) {
    const cc_json *st = cc_json_get(&res, "status"), *med = cc_json_get(&res, "median_ms");
    t.ok = st && st->type == CC_JSON_STRING && strcmp(st->text, "ok") == 0;
    if (med && med->type == CC_JSON_NUMBER) t.median = med->number;
    cc_json_free(&res);
  }
  rs->r[rs->n++] = t;
  return 0;
}

static const char *str_member(const cc_json *o, const char *key) {
  const cc_json *v = cc_json_get(o, key);
  return v && v->type == CC_JSON_STRING ? v->text : NULL;
}

/* One line; 0 when kept, 1 when it does not read, -1 when out of memory. */
static int read_line(cc_trecs *rs, const char *line, size_t len) {
  cc_json o;
  char why[128];
  if (cc_json_parse(line, len, &o, why, sizeof why) < 0) return 1;
  const cc_json *v = cc_json_get(&o, "v"), *cfg = cc_json_get(&o, "config");
  const cc_json *res = cc_json_get(&o, "result");
  const char *key = str_member(&o, "key"), *problem = str_member(&o, "problem");
  const char *device = str_member(&o, "device");
  int r = 1;
  if (v && v->type == CC_JSON_NUMBER && v->number == 1 && key && problem && device && cfg &&
      cfg->type == CC_JSON_OBJECT && res && res->type == CC_JSON_OBJECT)
    r = cc_tune_records_add(rs, key, problem, device, line + cfg->at, cfg->len, line + res->at,
                            res->len);
  cc_json_free(&o);
  return r;
}

static cucore_status read_lines(cc_trecs *rs, const char *path, const char *data, size_t size) {
  for (size_t at = 0; at < size;) {
    const char *nl = memchr(data + at, '\n', size - at);
    size_t len = nl ? (size_t)(nl - data) - at : size - at;
    int r = len ? read_line(rs, data + at, len) : 0;
    if (r < 0) return cc_fail(CUCORE_HOST_OUT_OF_MEMORY, "out of memory reading `%s`", path);
    rs->damaged += (size_t)r;
    at += len + 1;
  }
  rs->torn = size > 0 && data[size - 1] != '\n';
  return CUCORE_OK;
}

cucore_status cc_tune_records_read(const char *path, cc_trecs *out) {
  memset(out, 0, sizeof *out);
  struct stat st;
  if (stat(path, &st) != 0 && errno == ENOENT) return CUCORE_OK;
  unsigned char *data = NULL;
  size_t size = 0;
  cucore_status s = cc_read_file(path, &data, &size);
  if (s != CUCORE_OK) return s;
  s = read_lines(out, path, (const char *)data, size);
  free(data);
  return s;
}

void cc_tune_records_free(cc_trecs *rs) {
  for (size_t i = 0; i < rs->n; i++) {
    cc_trec *t = &rs->r[i];
    free(t->key), free(t->problem), free(t->device), free(t->config), free(t->result);
  }
  free(rs->r);
  memset(rs, 0, sizeof *rs);
}
