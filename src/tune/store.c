/*
 * store.c -- the crash-safe tune store (cucore_tune_store_*): opened by reading its file
 * (store_file.c), appended to with one write(2) per line on an O_APPEND descriptor, so that
 * a kill loses at most the line being written and a torn line is skipped on the next open.
 */
#define _POSIX_C_SOURCE 200809L /* open, write, mkdir */
#include "base/handle.h"
#include "tune/json.h"
#include "tune/store.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct cucore_tune_store {
  cc_handle hdr; /* first: the magic word of base/handle.h */
  char *path, *key, *problem, *device;
  int fd;
  cc_trecs recs; /* every record of the file; find matches key, problem and device */
};

static int mkdir_parents(char *path) {
  for (char *p = path + 1; *p; p++) {
    if (*p != '/') continue;
    *p = 0;
    int r = mkdir(path, 0755);
    *p = '/';
    if (r != 0 && errno != EEXIST) return -1;
  }
  return 0;
}

static cucore_status open_file(cucore_tune_store *s) {
  if (mkdir_parents(s->path) != 0)
    return cc_fail(CUCORE_IO_ERROR, "the tune store `%s`: cannot make its folder: %s", s->path,
                   strerror(errno));
  cucore_status st = cc_tune_records_read(s->path, &s->recs);
  if (st != CUCORE_OK) return st;
  s->fd = open(s->path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (s->fd < 0)
    return cc_fail(CUCORE_IO_ERROR, "the tune store `%s`: cannot open it for appending: %s",
                   s->path, strerror(errno));
  return CUCORE_OK;
}

cucore_status cucore_tune_store_open(const char *path, const char *key, const char *problem,
                                     const char *device, cucore_tune_store **out) {
  cc_begin();
  const char *fn = "cucore_tune_store_open";
  CC_CHECK_ARG(out, fn, "out");
  *out = NULL;
  cucore_status st = cc_tune_check_key(fn, key);
  char def[4200];
  if (st == CUCORE_OK && !path && (st = cc_tune_store_default_path(key, def, sizeof def)) == 0)
    path = def;
  if (st != CUCORE_OK) return st;
  cucore_tune_store *s = cc_calloc(1, sizeof *s, "a tune store");
  if (!s) return CUCORE_HOST_OUT_OF_MEMORY;
  cc_handle_init(s, CC_KIND_TUNE_STORE);
  s->fd = -1;
  s->path = cc_strdup(path, "a path");
  s->key = cc_strdup(key, "a key");
  s->problem = cc_strdup(problem ? problem : "", "a problem size");
  s->device = cc_strdup(device ? device : "", "a device");
  st = s->path && s->key && s->problem && s->device ? open_file(s) : CUCORE_HOST_OUT_OF_MEMORY;
  if (st != CUCORE_OK) {
    cucore_tune_store_close(s);
    return st;
  }
  *out = s;
  return CUCORE_OK;
}

cucore_status cucore_tune_store_close(cucore_tune_store *s) {
  cc_begin();
  if (!s) return CUCORE_OK;
  CC_CHECK_HANDLE(s, TUNE_STORE, "cucore_tune_store_close", "store");
  if (s->fd >= 0) close(s->fd);
  cc_tune_records_free(&s->recs);
  free(s->path), free(s->key), free(s->problem), free(s->device);
  cc_handle_retire(s, CC_KIND_TUNE_STORE);
  return CUCORE_OK;
}

static int mine(const cucore_tune_store *s, const cc_trec *r) {
  return strcmp(r->key, s->key) == 0 && strcmp(r->problem, s->problem) == 0 &&
         strcmp(r->device, s->device) == 0;
}

cucore_status cucore_tune_store_find(const cucore_tune_store *s, const char *config,
                                     const char **result) {
  cc_begin();
  CC_CHECK_HANDLE(s, TUNE_STORE, "cucore_tune_store_find", "store");
  CC_CHECK_ARG(config, "cucore_tune_store_find", "config");
  CC_CHECK_ARG(result, "cucore_tune_store_find", "result");
  *result = NULL;
  for (size_t i = s->recs.n; i-- > 0;) /* the latest record of a configuration wins */
    if (mine(s, &s->recs.r[i]) && strcmp(s->recs.r[i].config, config) == 0) {
      *result = s->recs.r[i].result;
      break;
    }
  return CUCORE_OK;
}

/* A JSON string (quotes, escapes) appended to buf at *len; the caller sized buf. */
static void put_str(char *buf, size_t *len, const char *t) {
  buf[(*len)++] = '"';
  for (; *t; t++) {
    unsigned char c = (unsigned char)*t;
    if (c == '"' || c == '\\')
      buf[(*len)++] = '\\', buf[(*len)++] = (char)c;
    else if (c < 0x20)
      *len += (size_t)sprintf(buf + *len, "\\u%04x", c);
    else
      buf[(*len)++] = (char)c;
  }
  buf[(*len)++] = '"';
}

static char *make_line(const cucore_tune_store *s, const char *config, const char *result,
                       size_t *len) {
  size_t cap = 64 + 6 * (strlen(s->key) + strlen(s->problem) + strlen(s->device)) + strlen(config) +
               strlen(result);
  char *b = cc_malloc(cap, "a tune store line");
  if (!b) return NULL;
  *len = (size_t)sprintf(b, "%s{\"v\":1,\"key\":", s->recs.torn ? "\n" : "");
  put_str(b, len, s->key);
  *len += (size_t)sprintf(b + *len, ",\"problem\":");
  put_str(b, len, s->problem);
  *len += (size_t)sprintf(b + *len, ",\"device\":");
  put_str(b, len, s->device);
  *len += (size_t)sprintf(b + *len, ",\"config\":%s,\"result\":%s}\n", config, result);
  return b;
}

static cucore_status check_object(const char *what, const char *text) {
  cc_json v;
  char why[160];
  if (cc_json_parse(text, strlen(text), &v, why, sizeof why) < 0)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "cucore_tune_store_append: %s: %s", what, why);
  int obj = v.type == CC_JSON_OBJECT && !strchr(text, '\n');
  cc_json_free(&v);
  return obj ? CUCORE_OK
             : cc_fail(CUCORE_INVALID_ARGUMENT,
                       "cucore_tune_store_append: %s "
                       "must be one JSON object on one line",
                       what);
}

static cucore_status write_all(cucore_tune_store *s, const char *b, size_t len) {
  for (size_t done = 0; done < len;) {
    ssize_t n = write(s->fd, b + done, len - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      return cc_fail(CUCORE_IO_ERROR, "the tune store `%s`: write failed: %s", s->path,
                     n < 0 ? strerror(errno) : "nothing written");
    done += (size_t)n;
  }
  return CUCORE_OK;
}

cucore_status cucore_tune_store_append(cucore_tune_store *s, const char *config,
                                       const char *result) {
  cc_begin();
  CC_CHECK_HANDLE(s, TUNE_STORE, "cucore_tune_store_append", "store");
  CC_CHECK_ARG(config, "cucore_tune_store_append", "config");
  CC_CHECK_ARG(result, "cucore_tune_store_append", "result");
  cucore_status st = check_object("config", config);
  if (st == CUCORE_OK) st = check_object("result", result);
  if (st != CUCORE_OK) return st;
  size_t len = 0;
  char *line = make_line(s, config, result, &len);
  if (!line) return CUCORE_HOST_OUT_OF_MEMORY;
  st = write_all(s, line, len);
  free(line);
  if (st != CUCORE_OK) return st;
  s->recs.torn = 0;
  if (cc_tune_records_add(&s->recs, s->key, s->problem, s->device, config, strlen(config), result,
                          strlen(result)) < 0)
    return cc_fail(CUCORE_HOST_OUT_OF_MEMORY, "out of memory keeping a tune record");
  return CUCORE_OK;
}

cucore_status cucore_tune_store_get_info(const cucore_tune_store *s, const char **path,
                                         size_t *records, size_t *damaged) {
  cc_begin();
  CC_CHECK_HANDLE(s, TUNE_STORE, "cucore_tune_store_get_info", "store");
  size_t n = 0;
  for (size_t i = 0; i < s->recs.n; i++) n += (size_t)mine(s, &s->recs.r[i]);
  if (path) *path = s->path;
  if (records) *records = n;
  if (damaged) *damaged = s->recs.damaged;
  return CUCORE_OK;
}
