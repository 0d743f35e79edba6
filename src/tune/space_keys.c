/*
 * space_keys.c -- the readers' common ground: where a value or a key of the document is
 * (line and column), failures that say so, and the tables of known keys: a key not in its
 * object's table is refused naming the nearest known one ("did you mean `tune_params`?"), an
 * ignored one recorded with its reason, and the readers run in the table's order; a list read
 * item by item ("key[i]"), and the text a writer makes of a value, in memory.
 */
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include "tune/space_file.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cc_sf_where(const cucore_tune_space *s, size_t at, int *line, int *col) {
  *line = 1, *col = 1;
  const char *doc = s->extras ? s->extras->doc : NULL;
  for (size_t i = 0; doc && i < at; i++) {
    if (doc[i] == '\n')
      ++*line, *col = 1;
    else
      ++*col;
  }
}

static const char *what(const cucore_tune_space *s) {
  return s->extras && s->extras->what ? s->extras->what : "space JSON";
}

const char *cc_sf_clip(const char *t, char buf[128]) {
  cc_escape_text(buf, 84, t, strlen(t));
  return buf;
}

int cc_sf_has_control(const char *t) {
  for (; *t; t++)
    if ((unsigned char)*t < 0x20 || *t == 0x7f) return 1;
  return 0;
}

int cc_sf_one_expr(const char *t) {
  int depth = 0;
  if (!*t) return 0;
  for (; *t; t++) {
    if (*t == '(') depth++;
    if (*t == ')' && depth > 0) depth--;
    if (*t == ',' && depth == 0) return 0;
  }
  return 1;
}

/* "(line L, column C)" of byte `at`. */
static void where_text(const cucore_tune_space *s, size_t at, char *buf, size_t cap) {
  int line, col;
  cc_sf_where(s, at, &line, &col);
  snprintf(buf, cap, "(line %d, column %d)", line, col);
}

cucore_status cc_sf_fail(const cucore_tune_space *s, const cc_json *v, const char *fmt, ...) {
  char at[64];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *msg = n >= 0 ? cc_raw_malloc((size_t)n + 1) : NULL; /* the message whole, any length */
  if (msg) {
    va_start(ap, fmt);
    vsnprintf(msg, (size_t)n + 1, fmt, ap);
    va_end(ap);
  }
  where_text(s, v->at, at, sizeof at);
  cucore_status st = cc_fail(CUCORE_INVALID_ARGUMENT, "%s: %s %s", what(s),
                             msg ? msg : "(out of memory for the message)", at);
  free(msg);
  return st;
}

cucore_status cc_sf_wrong(const cucore_tune_space *s, const char *key, const char *want,
                          const cc_json *v) {
  char k[128];
  return cc_sf_fail(s, v, "`%s` must be %s, found %s", cc_sf_clip(key, k), want,
                    cc_json_type_name(v->type));
}

cucore_status cc_sf_restate(const cucore_tune_space *s, const char *key, const cc_json *v,
                            cucore_status st) {
  char at[64], k[128];
  cc_sb msg = {0};
  where_text(s, v->at, at, sizeof at);
  cc_sb_printf(&msg, "%s: `%s` %s: %s", what(s), cc_sf_clip(key, k), at, cucore_last_error());
  st = cc_fail_restate(st, msg.failed ? cucore_last_error() : cc_sb_text(&msg));
  cc_sb_free(&msg);
  return st;
}

cucore_status cc_sf_text(cucore_tune_space *s, const char *key, const cc_json *v,
                         cc_sf_writer write, void *ctx, char **text) {
  char *buf = NULL;
  size_t len = 0;
  *text = NULL;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return cc_fail(CUCORE_HOST_OUT_OF_MEMORY, "out of memory reading `%s`", key);
  cucore_status st = write(s, key, v, f, ctx);
  if (fclose(f) != 0 || !buf)
    st = st != CUCORE_OK ? st
                         : cc_fail(CUCORE_HOST_OUT_OF_MEMORY, "out of memory reading `%s`", key);
  if (st == CUCORE_OK)
    *text = buf;
  else
    free(buf);
  return st;
}

cucore_status cc_sf_each(cucore_tune_space *s, const char *key, const cc_json *v, const char *want,
                         cc_sf_item item, void *ctx) {
  if (want && v->type != CC_JSON_ARRAY) return cc_sf_wrong(s, key, want, v);
  char k[192];
  for (size_t i = 0; i < v->n; i++) {
    snprintf(k, sizeof k, "%s[%zu]", key, i);
    cucore_status st = item(s, k, &v->items[i], ctx);
    if (st != CUCORE_OK) return st;
  }
  return CUCORE_OK;
}

/* ---- unknown keys ------------------------------------------------------------------------ */

/* Where the key of the member whose value starts at `at` starts: back over `:` and blanks
 * to the key's closing quote, then to its opening one (a quote inside a key is escaped: an
 * odd run of backslashes before it). */
static size_t key_at(const char *doc, size_t at) {
  size_t close = at;
  while (close > 0 && doc[close - 1] != '"') close--;
  if (close-- == 0) return at;
  for (size_t q = close; q-- > 0;) {
    size_t bs = 0;
    while (bs < q && doc[q - 1 - bs] == '\\') bs++;
    if (doc[q] == '"' && bs % 2 == 0) return q;
  }
  return 0;
}

static int lower(int c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; }

/* The edit distance of a and b (letters' case ignored), or a large number when the texts are
 * long. */
static size_t distance(const char *a, const char *b) {
  size_t n = strlen(a), m = strlen(b), row[64];
  if (n >= 64 || m >= 64) return (size_t)-1;
  for (size_t j = 0; j <= m; j++) row[j] = j;
  for (size_t i = 1; i <= n; i++) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= m; j++) {
      size_t up = row[j], best = diag + (lower(a[i - 1]) != lower(b[j - 1]));
      if (up + 1 < best) best = up + 1;
      if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
      diag = up;
      row[j] = best;
    }
  }
  return row[m];
}

/* The known key nearest `key`, or NULL when none is near (a third of its length, at most 3
 * edits, at least 1). */
static const char *nearest(const char *key, const cc_sf_key *keys, size_t n) {
  size_t len = strlen(key), limit = len / 3 < 1 ? 1 : len / 3 > 3 ? 3 : len / 3, best = limit + 1;
  const char *found = NULL;
  for (size_t i = 0; i < n; i++) {
    size_t d = distance(key, keys[i].key);
    if (d < best) best = d, found = keys[i].key;
  }
  return found;
}

static cucore_status unknown(cucore_tune_space *s, const cc_json *obj, size_t i, const char *path,
                             const cc_sf_key *keys, size_t n) {
  char k[128], in[160], at[64], hint[512];
  const char *doc = s->extras ? s->extras->doc : NULL;
  where_text(s, doc ? key_at(doc, obj->items[i].at) : obj->items[i].at, at, sizeof at);
  if (*path)
    snprintf(in, sizeof in, "`%s`", cc_sf_clip(path, k));
  else
    snprintf(in, sizeof in, "the space file");
  const char *near = nearest(obj->keys[i], keys, n);
  if (near) {
    snprintf(hint, sizeof hint, "did you mean `%s`?", near);
  } else if (n > 24) {
    snprintf(hint, sizeof hint,
             "it is neither a tune_kernel() keyword of Kernel Tuner nor one "
             "of cucore's (grid, block, smem, cucore_args, cucore_expect, rtol)");
  } else {
    size_t len = (size_t)snprintf(hint, sizeof hint, "the keys known there are");
    for (size_t j = 0; j < n && len < sizeof hint; j++)
      len += (size_t)snprintf(hint + len, sizeof hint - len, "%s %s", j ? "," : "", keys[j].key);
  }
  return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: unknown key `%s` in %s %s; %s", what(s),
                 cc_sf_clip(obj->keys[i], k), in, at, hint);
}

/* "path.key" (or "key" at the top) into a malloc'd text; `bare`: list indices dropped
 * ("a[2].b" -> "a[].b"), so that an ignored key is recorded once for all the list's items. */
static char *joined(const char *path, const char *key, int bare) {
  size_t a = strlen(path), b = strlen(key);
  char *t = cc_malloc(a + b + 2, "a key's path"), *o = t;
  if (!t) return NULL;
  for (const char *p = path; *p; p++) {
    *o++ = *p;
    if (bare && *p == '[' && p[1] >= '0' && p[1] <= '9')
      while (p[1] >= '0' && p[1] <= '9') p++;
  }
  snprintf(o, b + 2, "%s%s", a ? "." : "", key);
  return t;
}

static const cc_sf_key *find(const char *key, const cc_sf_key *keys, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(keys[i].key, key) == 0) return &keys[i];
  return NULL;
}

cucore_status cc_sf_object(cucore_tune_space *s, const cc_json *obj, const char *path,
                           const cc_sf_key *keys, size_t n) {
  cucore_status st = CUCORE_OK;
  for (size_t i = 0; i < obj->n && st == CUCORE_OK; i++) {
    const cc_sf_key *k = find(obj->keys[i], keys, n);
    if (!k) return unknown(s, obj, i, path, keys, n);
    if (k->read || obj->items[i].type == CC_JSON_NULL) continue;
    char *full = joined(path, k->key, 1);
    st = full ? cc_tune_extras_ignore(s, full, k->reason) : CUCORE_HOST_OUT_OF_MEMORY;
    free(full);
  }
  for (size_t i = 0; i < n && st == CUCORE_OK; i++) {
    const cc_json *v = keys[i].read ? cc_json_get(obj, keys[i].key) : NULL;
    if (!v || (keys[i].nullable && v->type == CC_JSON_NULL)) continue;
    char *full = joined(path, keys[i].key, 0);
    st = full ? keys[i].read(s, full, v, obj) : CUCORE_HOST_OUT_OF_MEMORY;
    free(full);
  }
  return st;
}
