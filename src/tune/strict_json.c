/*
 * strict_json.c -- the strict JSON reader of tune/strict_json.h: recursive descent over the
 * text, bounded depth, every failure with its line and column.
 */
#include "tune/strict_json.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct jp {
  const char *s, *end, *p;
  int depth;
  char *why;
  size_t cap;
  int failed;
} jp;

static int jfail(jp *j, const char *what) {
  if (j->failed++) return -1;
  int line = 1, col = 1;
  for (const char *q = j->s; q < j->p; q++) {
    if (*q == '\n')
      line++, col = 1;
    else
      col++;
  }
  snprintf(j->why, j->cap, "line %d, column %d: %s", line, col, what);
  return -1;
}

static void ws(jp *j) {
  while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r')) j->p++;
}

static int lit(jp *j, const char *word) {
  size_t n = strlen(word);
  if ((size_t)(j->end - j->p) < n || memcmp(j->p, word, n) != 0) return 0;
  j->p += n;
  return 1;
}

static int hex4(jp *j, unsigned *out) {
  *out = 0;
  for (int i = 0; i < 4; i++, j->p++) {
    if (j->p >= j->end || !isxdigit((unsigned char)*j->p))
      return jfail(j, "a \\u escape needs four hexadecimal digits");
    char c = *j->p;
    *out = *out * 16 + (unsigned)(isdigit((unsigned char)c) ? c - '0' : (c | 32) - 'a' + 10);
  }
  return 0;
}

static int put_utf8(char *o, unsigned cp) {
  if (cp < 0x80) return o[0] = (char)cp, 1;
  if (cp < 0x800) return o[0] = (char)(0xc0 | cp >> 6), o[1] = (char)(0x80 | (cp & 63)), 2;
  if (cp < 0x10000) {
    o[0] = (char)(0xe0 | cp >> 12), o[1] = (char)(0x80 | ((cp >> 6) & 63));
    return o[2] = (char)(0x80 | (cp & 63)), 3;
  }
  o[0] = (char)(0xf0 | cp >> 18), o[1] = (char)(0x80 | ((cp >> 12) & 63));
  o[2] = (char)(0x80 | ((cp >> 6) & 63)), o[3] = (char)(0x80 | (cp & 63));
  return 4;
}

static int unicode_escape(jp *j, char *o) {
  unsigned cp, lo;
  if (hex4(j, &cp) < 0) return -1;
  if (cp >= 0xdc00 && cp <= 0xdfff) return jfail(j, "a lone low surrogate in \\u escapes");
  if (cp >= 0xd800 && cp <= 0xdbff) {
    if (!lit(j, "\\u") || hex4(j, &lo) < 0 || lo < 0xdc00 || lo > 0xdfff)
      return jfail(j, "a high surrogate not followed by a low one");
    cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
  }
  return put_utf8(o, cp);
}

static int escape(jp *j, char *o) {
  static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
  if (j->p >= j->end) return jfail(j, "the text ends inside a string");
  const char *k = strchr(from, *j->p);
  if (*j->p == 'u') return j->p++, unicode_escape(j, o);
  if (!k || !*j->p) return jfail(j, "an unknown escape in a string");
  j->p++;
  return o[0] = to[k - from], 1;
}

static int string(jp *j, char **out) {
  j->p++; /* the quote */
  /* The raw length to the closing quote bounds the decoded one (an escape never grows): the
   * string's own size, not the rest of the text's (that was a page per string, 2 GB for a
   * 16 MB Kernel Tuner cache). */
  const char *q = j->p;
  while (q < j->end && *q != '"') q += *q == '\\' && q + 1 < j->end ? 2 : 1;
  char *o = cc_raw_malloc((size_t)(q - j->p) + 1);
  if (!o) return jfail(j, "out of memory");
  size_t n = 0;
  for (;;) {
    if (j->p >= j->end) return free(o), jfail(j, "the text ends inside a string");
    unsigned char c = (unsigned char)*j->p;
    if (c == '"') break;
    if (c < 0x20) return free(o), jfail(j, "a control character inside a string");
    int k = 1;
    if (c == '\\')
      j->p++, k = escape(j, o + n);
    else
      o[n] = *j->p++;
    if (k < 0) return free(o), -1;
    n += (size_t)k;
  }
  j->p++;
  o[n] = 0;
  *out = o;
  return 0;
}

static int number(jp *j, cc_json *v) {
  const char *a = j->p;
  if (j->p < j->end && *j->p == '-') j->p++;
  if (j->p >= j->end || !isdigit((unsigned char)*j->p)) return jfail(j, "a malformed number");
  if (*j->p == '0' && j->p + 1 < j->end && isdigit((unsigned char)j->p[1]))
    return jfail(j, "a number with a leading zero");
  while (j->p < j->end && isdigit((unsigned char)*j->p)) j->p++;
  if (j->p < j->end && *j->p == '.') {
    if (++j->p >= j->end || !isdigit((unsigned char)*j->p)) return jfail(j, "no digit after `.`");
    while (j->p < j->end && isdigit((unsigned char)*j->p)) j->p++;
  }
  if (j->p < j->end && (*j->p | 32) == 'e') {
    j->p++;
    if (j->p < j->end && (*j->p == '+' || *j->p == '-')) j->p++;
    if (j->p >= j->end || !isdigit((unsigned char)*j->p)) return jfail(j, "a malformed exponent");
    while (j->p < j->end && isdigit((unsigned char)*j->p)) j->p++;
  }
  v->type = CC_JSON_NUMBER;
  v->text = cc_raw_malloc((size_t)(j->p - a) + 1);
  if (!v->text) return jfail(j, "out of memory");
  memcpy(v->text, a, (size_t)(j->p - a));
  v->text[j->p - a] = 0;
  v->number = strtod(v->text, NULL);
  return 0;
}

static int value(jp *j, cc_json *v);

/* Room for one more member in v->items (and v->keys, with_keys), of capacities *cap and
 * *key_cap. */
static int grow(jp *j, cc_json *v, size_t *cap, size_t *key_cap, int with_keys) {
  cc_json *items = cc_grow(v->items, cap, v->n + 1, sizeof *items, "a JSON array or object");
  if (!items) return jfail(j, "out of memory");
  v->items = items;
  if (!with_keys) return 0;
  char **keys = cc_grow(v->keys, key_cap, v->n + 1, sizeof *keys, "a JSON object's keys");
  if (!keys) return jfail(j, "out of memory");
  v->keys = keys;
  return 0;
}

/* An object's keys seen so far, hashed: a key given twice is found in O(1) (objects of 10^5
 * keys are read in linear time). slot[] holds key index + 1, 0 empty; cap a power of two. */
typedef struct key_set {
  size_t *slot;
  size_t cap;
} key_set;

static uint64_t key_hash(const char *k) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (; *k; k++) h = (h ^ (unsigned char)*k) * 0x100000001b3ull;
  return h;
}

/* 1 when keys[n] (just read) is among keys[0..n); else it is added. -1 when out of memory. */
static int key_seen(key_set *ks, char **keys, size_t n) {
  if (2 * (n + 1) > ks->cap) {
    size_t cap = ks->cap ? ks->cap * 2 : 16;
    while (cap < 2 * (n + 1)) cap *= 2;
    size_t *slot = cc_raw_calloc(cap, sizeof *slot);
    if (!slot) return -1;
    for (size_t i = 0; i < n; i++) {
      size_t at = (size_t)key_hash(keys[i]) & (cap - 1);
      while (slot[at]) at = (at + 1) & (cap - 1);
      slot[at] = i + 1;
    }
    free(ks->slot);
    ks->slot = slot, ks->cap = cap;
  }
  size_t at = (size_t)key_hash(keys[n]) & (ks->cap - 1);
  for (; ks->slot[at]; at = (at + 1) & (ks->cap - 1))
    if (strcmp(keys[ks->slot[at] - 1], keys[n]) == 0) return 1;
  ks->slot[at] = n + 1;
  return 0;
}

static int members_of(jp *j, cc_json *v, int keys, char close, key_set *ks);

/* The members of an array (keys 0) or object (keys 1), after the opening bracket. */
static int members(jp *j, cc_json *v, int keys, char close) {
  key_set ks = {NULL, 0};
  int r = members_of(j, v, keys, close, &ks);
  free(ks.slot);
  return r;
}

static int members_of(jp *j, cc_json *v, int keys, char close, key_set *ks) {
  size_t cap = 0, key_cap = 0;
  ws(j);
  if (j->p < j->end && *j->p == close) return j->p++, 0;
  for (;;) {
    ws(j);
    if (grow(j, v, &cap, &key_cap, keys) < 0) return -1;
    char *key = NULL;
    if (keys) {
      if (j->p >= j->end || *j->p != '"') return jfail(j, "expected a key in quotes");
      if (string(j, &key) < 0) return -1;
      v->keys[v->n] = key;
      int seen = key_seen(ks, v->keys, v->n);
      if (seen != 0) return free(key), jfail(j, seen > 0 ? "a key given twice" : "out of memory");
      ws(j);
      if (j->p >= j->end || *j->p++ != ':') return free(key), jfail(j, "expected `:`");
    }
    memset(&v->items[v->n], 0, sizeof v->items[0]);
    v->n++;
    if (value(j, &v->items[v->n - 1]) < 0) return -1;
    ws(j);
    if (j->p < j->end && *j->p == close) return j->p++, 0;
    if (j->p >= j->end || *j->p++ != ',')
      return jfail(j, keys ? "expected `,` or `}`" : "expected `,` or `]`");
  }
}

static int value_at(jp *j, cc_json *v);

/* A value, with where its text is. */
static int value(jp *j, cc_json *v) {
  ws(j);
  v->at = (size_t)(j->p - j->s);
  int r = value_at(j, v);
  v->len = (size_t)(j->p - j->s) - v->at;
  return r;
}

static int value_at(jp *j, cc_json *v) {
  if (j->p >= j->end) return jfail(j, "expected a value, found the end of the text");
  char c = *j->p;
  if (c == '{' || c == '[') {
    if (++j->depth > CC_JSON_DEPTH_MAX) return jfail(j, "nested deeper than 32 levels");
    j->p++;
    v->type = c == '{' ? CC_JSON_OBJECT : CC_JSON_ARRAY;
    int r = members(j, v, c == '{', c == '{' ? '}' : ']');
    j->depth--;
    return r;
  }
  if (c == '"') return v->type = CC_JSON_STRING, string(j, &v->text);
  if (c == '-' || isdigit((unsigned char)c)) return number(j, v);
  if (lit(j, "true") || lit(j, "false")) return v->type = CC_JSON_BOOL, v->boolean = c == 't', 0;
  if (lit(j, "null")) return v->type = CC_JSON_NULL, 0;
  return jfail(j, "expected a value (an object, array, string, number, true, false or null)");
}

int cc_json_parse(const char *text, size_t len, cc_json *out, char *why, size_t why_cap) {
  memset(out, 0, sizeof *out);
  jp j = {text, text + len, text, 0, why, why_cap, 0};
  int r = value(&j, out);
  ws(&j);
  if (r == 0 && j.p < j.end) r = jfail(&j, "text after the end of the value");
  if (r < 0) cc_json_free(out);
  return r;
}

void cc_json_free(cc_json *v) {
  if (!v) return;
  for (size_t i = 0; i < v->n; i++) {
    cc_json_free(&v->items[i]);
    if (v->keys) free(v->keys[i]);
  }
  free(v->items);
  free(v->keys);
  free(v->text);
  memset(v, 0, sizeof *v);
}

const cc_json *cc_json_get(const cc_json *obj, const char *key) {
  if (!obj || obj->type != CC_JSON_OBJECT) return NULL;
  for (size_t i = 0; i < obj->n; i++)
    if (strcmp(obj->keys[i], key) == 0) return &obj->items[i];
  return NULL;
}

const char *cc_json_type_name(cc_json_type t) {
  static const char *const names[] = {"null",     "a boolean", "a number",
                                      "a string", "an array",  "an object"};
  return (unsigned)t < CC_ARRAY_LEN(names) ? names[t] : "?";
}
