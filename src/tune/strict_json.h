/*
 * tune/strict_json.h -- a small strict JSON reader (RFC 8259) for search-space files and the
 * store's lines: a tree of values; numbers keep their text (a parameter value "64" or "0.5"
 * stays exactly as written). Strict: nesting at most CC_JSON_DEPTH_MAX, no duplicate keys, no
 * trailing commas, no comments, no control characters in strings, nothing after the value.
 * Errors name the line and column.
 */
#ifndef CUCORE_TUNE_STRICT_JSON_H
#define CUCORE_TUNE_STRICT_JSON_H

#include "base/base.h"

#define CC_JSON_DEPTH_MAX 32

typedef enum cc_json_type {
  CC_JSON_NULL,
  CC_JSON_BOOL,
  CC_JSON_NUMBER,
  CC_JSON_STRING,
  CC_JSON_ARRAY,
  CC_JSON_OBJECT
} cc_json_type;

typedef struct cc_json {
  cc_json_type type;
  int boolean;
  double number;
  char *text;            /* a string's bytes (NUL-terminated), a number as written */
  size_t n;              /* items of an array or object */
  struct cc_json *items; /* n values */
  char **keys;           /* an object's n keys */
  size_t at, len;        /* where the value's text is in the parsed text */
} cc_json;

/* Parses text[0..len). Returns 0, or -1 with `why` ("line 3, column 7: ..."). */
int cc_json_parse(const char *text, size_t len, cc_json *out, char *why, size_t why_cap);
void cc_json_free(cc_json *v);
/* An object's member `key`, or NULL (also when `obj` is not an object). */
const cc_json *cc_json_get(const cc_json *obj, const char *key);
/* "null", "a boolean", "a number", "a string", "an array", "an object". */
const char *cc_json_type_name(cc_json_type t);

#endif /* CUCORE_TUNE_STRICT_JSON_H */
