/*
 * store.c -- the crash-safe tune store (cucore_tune_store_*): opened by reading its file
 * (store_file.c; a file whose first line is not a store record is refused), appended to with
 * one write(2) per line on an O_APPEND descriptor, so that a kill loses at most the line being
 * written and a torn line is skipped on the next open. Other processes may append to the same
 * file: a line begins on a line of its own (a newline first when the file's last byte is not
 * one), a refresh reads what they wrote (this process's own lines, known by their offsets, are
 * not read twice), and the groups' locks (store_lock.c) share the work.
 */
#define _POSIX_C_SOURCE 200809L /* open, pread, mkdir */
#include "base/handle.h"
#include "tune/strict_json.h"
#include "tune/store.h"
#include "tune/store_lock.h"

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
  char *source, *kernel; /* written into appended lines (NULL: left out) */
  int fd;                /* read and append; -1 when opened read-only */
  cc_trecs recs;         /* every record of the file; find matches key, problem and device */
  long long *own;        /* where this store's appended lines begin, ascending */
  size_t nown, cap_own;
  cc_tlock lock;
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

static cucore_status open_file(cucore_tune_store *s, int read_only) {
  if (!read_only && mkdir_parents(s->path) != 0)
    return cc_fail(CUCORE_IO_ERROR, "the tune store `%s`: cannot make its folder: %s", s->path,
                   strerror(errno));
  cucore_status st = cc_tune_records_read(s->path, &s->recs);
  if (st != CUCORE_OK) return st;
  if (s->recs.first == 0)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "`%s` is not a tune store (its first line is not a store record); %s", s->path,
                   read_only ? "refusing to read it as one" : "refusing to append to it");
  if (read_only) return CUCORE_OK;
  s->fd = open(s->path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (s->fd < 0)
    return cc_fail(CUCORE_IO_ERROR, "the tune store `%s`: cannot open it for appending: %s",
                   s->path, strerror(errno));
  return CUCORE_OK;
}

/* The store's strings copied (problem and device NULL: ""); CUCORE_OK or out of memory. */
static cucore_status copy_names(cucore_tune_store *s, const char *path, const char *key,
                                const char *problem, const char *device) {
  s->path = cc_strdup(path, "a path");
  s->key = key ? cc_strdup(key, "a key") : NULL;
  s->problem = cc_strdup(problem ? problem : "", "a problem size");
  s->device = cc_strdup(device ? device : "", "a device");
  int ok = s->path && (s->key || !key) && s->problem && s->device;
  return ok ? CUCORE_OK : CUCORE_HOST_OUT_OF_MEMORY;
}

static cucore_status open_store(const char *fn, const char *path, const char *key,
                                const char *problem, const char *device, int read_only,
                                cucore_tune_store **out) {
  CC_CHECK_ARG(out, fn, "out");
  *out = NULL;
  cucore_status st = key || !read_only ? cc_tune_check_key(fn, key) : CUCORE_OK;
  if (st == CUCORE_OK && !key && !path)
    st = cc_fail(CUCORE_INVALID_ARGUMENT, "%s: a NULL key needs a path", fn);
  char *def = NULL;
  if (st == CUCORE_OK && !path && (st = cc_tune_store_default_path(key, &def)) == CUCORE_OK)
    path = def;
  cucore_tune_store *s = st == CUCORE_OK ? cc_calloc(1, sizeof *s, "a tune store") : NULL;
  if (st == CUCORE_OK && !s) st = CUCORE_HOST_OUT_OF_MEMORY;
  if (s) {
    cc_handle_init(s, CC_KIND_TUNE_STORE);
    s->fd = -1;
    cc_tlock_init(&s->lock, key, problem, device);
    st = copy_names(s, path, key, problem, device);
    if (st == CUCORE_OK) st = open_file(s, read_only);
    if (st != CUCORE_OK) cucore_tune_store_close(s);
  }
  free(def);
  if (st == CUCORE_OK) *out = s;
  return st;
}

cucore_status cucore_tune_store_open(const char *path, const char *key, const char *problem,
                                     const char *device, cucore_tune_store **out) {
  cc_begin();
  return open_store("cucore_tune_store_open", path, key, problem, device, 0, out);
}

cucore_status cucore_tune_store_open_read_only(const char *path, const char *key,
                                               const char *problem, const char *device,
                                               cucore_tune_store **out) {
  cc_begin();
  return open_store("cucore_tune_store_open_read_only", path, key, problem, device, 1, out);
}

cucore_status cucore_tune_store_close(cucore_tune_store *s) {
  cc_begin();
  if (!s) return CUCORE_OK;
  CC_CHECK_HANDLE(s, TUNE_STORE, "cucore_tune_store_close", "store");
  if (s->fd >= 0) close(s->fd);
  cc_tlock_close(&s->lock);
  cc_tune_records_free(&s->recs);
  free(s->path), free(s->key), free(s->problem), free(s->device);
  free(s->source), free(s->kernel), free(s->own);
  cc_handle_retire(s, CC_KIND_TUNE_STORE);
  return CUCORE_OK;
}

int cc_tune_store_mine(const cucore_tune_store *s, const cc_trec *r) {
  return s->key && strcmp(r->key, s->key) == 0 && strcmp(r->problem, s->problem) == 0 &&
         strcmp(r->device, s->device) == 0;
}

/* The latest record of `config` under the store's key, problem and device, or NULL. */
static const cc_trec *latest(const cucore_tune_store *s, const char *config) {
  for (size_t i = s->recs.n; i-- > 0;) /* the latest record of a configuration wins */
    if (cc_tune_store_mine(s, &s->recs.r[i]) && strcmp(s->recs.r[i].config, config) == 0)
      return &s->recs.r[i];
  return NULL;
}

cucore_status cucore_tune_store_find(const cucore_tune_store *s, const char *config,
                                     const char **result) {
  cc_begin();
  CC_CHECK_HANDLE(s, TUNE_STORE, "cucore_tune_store_find", "store");
  CC_CHECK_ARG(config, "cucore_tune_store_find", "config");
  CC_CHECK_ARG(result, "cucore_tune_store_find", "result");
  const cc_trec *r = latest(s, config);
  *result = r ? r->result : NULL;
  return CUCORE_OK;
}

cucore_status cucore_tune_store_find_record(const cucore_tune_store *s, const char *config,
                                            cucore_tune_record *out, int *found) {
  cc_begin();
  const char *fn = "cucore_tune_store_find_record";
  CC_CHECK_HANDLE(s, TUNE_STORE, fn, "store");
  CC_CHECK_ARG(config, fn, "config");
  CC_CHECK_ARG(out, fn, "out");
  CC_CHECK_ARG(found, fn, "found");
  const cc_trec *r = latest(s, config);
  if (r)
    *out = *r;
  else
    memset(out, 0, sizeof *out);
  *found = r != NULL;
  return CUCORE_OK;
}

/* The line of a record: a newline first when the file's last line is not finished. */
static char *make_line(const cc_trec_names *nm, const char *config, const char *result,
                       int newline_first, size_t *len) {
  cc_sb b = {0};
  cc_sb_printf(&b, "%s{\"v\":1,\"key\":", newline_first ? "\n" : "");
  cc_sb_json_string(&b, nm->key, strlen(nm->key));
  cc_sb_puts(&b, ",\"problem\":");
  cc_sb_json_string(&b, nm->problem, strlen(nm->problem));
  cc_sb_puts(&b, ",\"device\":");
  cc_sb_json_string(&b, nm->device, strlen(nm->device));
  if (nm->source && *nm->source) cc_sb_puts(&b, ",\"source\":");
  if (nm->source && *nm->source) cc_sb_json_string(&b, nm->source, strlen(nm->source));
  if (nm->kernel && *nm->kernel) cc_sb_puts(&b, ",\"kernel\":");
  if (nm->kernel && *nm->kernel) cc_sb_json_string(&b, nm->kernel, strlen(nm->kernel));
  cc_sb_printf(&b, ",\"config\":%s,\"result\":%s}\n", config, result);
  *len = b.len;
  return cc_sb_take(&b);
}

static cucore_status check_object(const char *fn, const char *what, const char *text) {
  cc_json v;
  char why[160]; /* the reader's messages are fixed words after a line and a column */
  if (cc_json_parse(text, strlen(text), &v, why, sizeof why) < 0)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: %s: %s", fn, what, why);
  int obj = v.type == CC_JSON_OBJECT && !strchr(text, '\n');
  cc_json_free(&v);
  return obj ? CUCORE_OK
             : cc_fail(CUCORE_INVALID_ARGUMENT, "%s: %s must be one JSON object on one line", fn,
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

/* 1 when the file's last byte is not a newline (a line torn by a kill, or being written). */
static int unfinished(const cucore_tune_store *s) {
  struct stat st;
  char last = '\n';
  if (fstat(s->fd, &st) != 0 || st.st_size == 0) return 0;
  return pread(s->fd, &last, 1, st.st_size - 1) == 1 && last != '\n';
}

/* Where the line just written begins (its record, past a newline written first). */
static cucore_status note_own(cucore_tune_store *s, size_t len, int newline_first) {
  off_t end = lseek(s->fd, 0, SEEK_CUR); /* O_APPEND: just past the line */
  if (end < 0) return CUCORE_OK;         /* a refresh then reads the line again: harmless */
  long long *o = cc_grow(s->own, &s->cap_own, s->nown + 1, sizeof *o, "a tune store's lines");
  if (!o) return CUCORE_HOST_OUT_OF_MEMORY;
  s->own = o;
  s->own[s->nown++] = (long long)end - (long long)len + newline_first;
  return CUCORE_OK;
}

static cucore_status write_record(const char *fn, cucore_tune_store *s, const cc_trec_names *nm,
                                  const char *config, const char *result) {
  if (s->fd < 0)
    return cc_fail(CUCORE_IO_ERROR, "%s: the tune store `%s` was opened read-only", fn, s->path);
  size_t len = 0;
  int nl = unfinished(s);
  char *line = make_line(nm, config, result, nl, &len);
  if (!line) return CUCORE_HOST_OUT_OF_MEMORY;
  cucore_status st = write_all(s, line, len);
  free(line);
  if (st == CUCORE_OK) st = note_own(s, len, nl);
  if (st == CUCORE_OK &&
      cc_tune_records_add(&s->recs, nm, config, strlen(config), result, strlen(result)) < 0)
    st = cc_fail(CUCORE_HOST_OUT_OF_MEMORY, "out of memory keeping a tune record");
  return st;
}

cucore_status cucore_tune_store_append(cucore_tune_store *s, const char *config,
                                       const char *result) {
  cc_begin();
  const char *fn = "cucore_tune_store_append";
  CC_CHECK_HANDLE(s, TUNE_STORE, fn, "store");
  CC_CHECK_ARG(config, fn, "config");
  CC_CHECK_ARG(result, fn, "result");
  if (!s->key)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: the store was opened without a key", fn);
  cucore_status st = check_object(fn, "config", config);
  if (st == CUCORE_OK) st = check_object(fn, "result", result);
  if (st != CUCORE_OK) return st;
  cc_trec_names nm = {s->key, s->problem, s->device, s->source, s->kernel};
  return write_record(fn, s, &nm, config, result);
}

/* 1 when the store holds record r already (the same texts). */
static int holds(const cucore_tune_store *s, const cucore_tune_record *r) {
  for (size_t i = 0; i < s->recs.n; i++) {
    const cc_trec *x = &s->recs.r[i];
    if (strcmp(x->config, r->config) == 0 && strcmp(x->result, r->result) == 0 &&
        strcmp(x->key, r->key) == 0 && strcmp(x->problem, r->problem ? r->problem : "") == 0 &&
        strcmp(x->device, r->device ? r->device : "") == 0)
      return 1;
  }
  return 0;
}

cucore_status cucore_tune_store_append_record(cucore_tune_store *s, const cucore_tune_record *rec,
                                              int *appended) {
  cc_begin();
  const char *fn = "cucore_tune_store_append_record";
  CC_CHECK_HANDLE(s, TUNE_STORE, fn, "store");
  CC_CHECK_ARG(rec, fn, "record");
  CC_CHECK_ARG(rec->config, fn, "record->config");
  CC_CHECK_ARG(rec->result, fn, "record->result");
  if (appended) *appended = 0;
  cucore_status st = cc_tune_check_key(fn, rec->key);
  if (st == CUCORE_OK) st = check_object(fn, "config", rec->config);
  if (st == CUCORE_OK) st = check_object(fn, "result", rec->result);
  if (st != CUCORE_OK || holds(s, rec)) return st;
  cc_trec_names nm = {rec->key, rec->problem ? rec->problem : "", rec->device ? rec->device : "",
                      rec->source, rec->kernel};
  st = write_record(fn, s, &nm, rec->config, rec->result);
  if (st == CUCORE_OK && appended) *appended = 1;
  return st;
}

cucore_status cucore_tune_store_set_names(cucore_tune_store *s, const char *source,
                                          const char *kernel) {
  cc_begin();
  CC_CHECK_HANDLE(s, TUNE_STORE, "cucore_tune_store_set_names", "store");
  char *src = source && *source ? cc_strdup(source, "a source's name") : NULL;
  char *k = kernel && *kernel ? cc_strdup(kernel, "a kernel's name") : NULL;
  if ((source && *source && !src) || (kernel && *kernel && !k)) {
    free(src), free(k);
    return CUCORE_HOST_OUT_OF_MEMORY;
  }
  free(s->source), free(s->kernel);
  s->source = src, s->kernel = k;
  return CUCORE_OK;
}

cucore_status cucore_tune_store_get_info(const cucore_tune_store *s, const char **path,
                                         size_t *records, size_t *damaged) {
  cc_begin();
  CC_CHECK_HANDLE(s, TUNE_STORE, "cucore_tune_store_get_info", "store");
  size_t n = 0;
  for (size_t i = 0; i < s->recs.n; i++) n += (size_t)cc_tune_store_mine(s, &s->recs.r[i]);
  if (path) *path = s->path;
  if (records) *records = n;
  if (damaged) *damaged = s->recs.damaged;
  return CUCORE_OK;
}

cucore_status cucore_tune_store_get_record_count(const cucore_tune_store *s, size_t *count) {
  cc_begin();
  CC_CHECK_HANDLE(s, TUNE_STORE, "cucore_tune_store_get_record_count", "store");
  CC_CHECK_ARG(count, "cucore_tune_store_get_record_count", "count");
  *count = s->recs.n;
  return CUCORE_OK;
}

cucore_status cucore_tune_store_get_record(const cucore_tune_store *s, size_t i,
                                           cucore_tune_record *out) {
  cc_begin();
  const char *fn = "cucore_tune_store_get_record";
  CC_CHECK_HANDLE(s, TUNE_STORE, fn, "store");
  CC_CHECK_ARG(out, fn, "out");
  if (i >= s->recs.n)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: record %zu of %zu: past the records", fn, i,
                   s->recs.n);
  *out = s->recs.r[i];
  return CUCORE_OK;
}

cucore_status cucore_tune_store_refresh(cucore_tune_store *s, size_t *added) {
  cc_begin();
  CC_CHECK_HANDLE(s, TUNE_STORE, "cucore_tune_store_refresh", "store");
  size_t n = 0;
  cucore_status st = cc_tune_records_refresh(s->path, &s->recs, s->own, s->nown, &n);
  if (added) *added = n;
  return st;
}

cucore_status cucore_tune_store_lock(cucore_tune_store *s, uint64_t group, int wait, int *locked) {
  cc_begin();
  CC_CHECK_HANDLE(s, TUNE_STORE, "cucore_tune_store_lock", "store");
  CC_CHECK_ARG(locked, "cucore_tune_store_lock", "locked");
  return cc_tlock_take(&s->lock, s->path, group, wait, locked);
}

cucore_status cucore_tune_store_unlock(cucore_tune_store *s, uint64_t group) {
  cc_begin();
  CC_CHECK_HANDLE(s, TUNE_STORE, "cucore_tune_store_unlock", "store");
  return cc_tlock_release(&s->lock, s->path, group);
}
