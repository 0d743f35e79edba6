/*
 * space_text.c -- a configuration's texts: its parameters, the kernel name with the template
 * holes filled, the compile's defines, JSON.
 */
#include "tune/space.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A growing output: writes what fits in buf, counts all. */
typedef struct sbuf {
  char *buf;
  size_t cap, len;
} sbuf;

static void put(sbuf *b, const char *fmt, ...) CC_PRINTF(2, 3);
static void put(sbuf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *at = b->len < b->cap ? b->buf + b->len : NULL;
  int n = vsnprintf(at, at ? b->cap - b->len : 0, fmt, ap);
  va_end(ap);
  if (n > 0) b->len += (size_t)n;
}

static void put_json_string(sbuf *b, const char *t) {
  put(b, "\"");
  for (; *t; t++) {
    if (*t == '"' || *t == '\\')
      put(b, "\\%c", *t);
    else if ((unsigned char)*t < 0x20)
      put(b, "\\u%04x", (unsigned char)*t);
    else
      put(b, "%c", *t);
  }
  put(b, "\"");
}

static void text_params(const cucore_tune_space *s, const size_t *dg, sbuf *b, int json) {
  if (json) put(b, "{");
  for (size_t i = 0; i < s->nparams; i++) {
    const cc_tparam *p = &s->params[i];
    if (!json) {
      put(b, "%s%s=%s", i ? " " : "", p->name, p->text[dg[i]]);
      continue;
    }
    put(b, "%s", i ? "," : "");
    put_json_string(b, p->name);
    put(b, ":");
    if (cc_tval_is_num(p->val[dg[i]]))
      put(b, "%s", p->text[dg[i]]);
    else
      put_json_string(b, p->text[dg[i]]);
  }
  if (json) put(b, "}");
}

static void text_defines(const cucore_tune_space *s, const size_t *dg, sbuf *b) {
  int first = 1;
  for (size_t i = 0; i < s->nparams; i++) {
    const cc_tparam *p = &s->params[i];
    if (p->resolved != CUCORE_TUNE_PARAM_DEFINE) continue;
    put(b, "%s-D%s=%s", first ? "" : "\n", p->name, p->text[dg[i]]);
    first = 0;
  }
}

static cucore_status text_kernel(const cucore_tune_space *s, const size_t *dg, sbuf *b) {
  const char *k = s->kernel ? s->kernel : "";
  for (const char *p = k; *p;) {
    if (*p != '{') {
      put(b, "%c", *p++);
      continue;
    }
    size_t n = strcspn(p + 1, "}");
    int i = cc_tune_find_param((void *)s, p + 1, n);
    if (i < 0)
      return cc_fail(CUCORE_INVALID_ARGUMENT,
                     "kernel `%s`: `{%.*s}` names no parameter of the "
                     "space",
                     k, (int)n, p + 1);
    put(b, "%s", s->params[i].text[dg[i]]);
    p += n + 2;
  }
  return CUCORE_OK;
}

cucore_status cucore_tune_space_get_config_text(const cucore_tune_space *s, uint64_t index,
                                                cucore_tune_text what, char *buf, size_t cap,
                                                size_t *needed) {
  cc_begin();
  const char *fn = "cucore_tune_space_get_config_text";
  CC_CHECK_HANDLE(s, TUNE_SPACE, fn, "space");
  if (cap > 0) CC_CHECK_ARG(buf, fn, "buf");
  uint64_t raw;
  if (cc_tune_raw(s, &raw) < 0 || index >= raw)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: configuration %llu is not in the space", fn,
                   (unsigned long long)index);
  if ((unsigned)what > CUCORE_TUNE_TEXT_JSON)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: %d is not a cucore_tune_text", fn, (int)what);
  size_t *dg = cc_calloc(s->nparams ? s->nparams : 1, sizeof *dg, "configuration values");
  cc_tval *vals = cc_calloc(s->nparams ? s->nparams : 1, sizeof *vals, "configuration values");
  cucore_status st = dg && vals ? CUCORE_OK : CUCORE_HOST_OUT_OF_MEMORY;
  sbuf b = {buf, cap, 0};
  if (st == CUCORE_OK) {
    cc_tune_values(s, index, vals, dg);
    if (what == CUCORE_TUNE_TEXT_KERNEL)
      st = text_kernel(s, dg, &b);
    else if (what == CUCORE_TUNE_TEXT_DEFINES)
      text_defines(s, dg, &b);
    else
      text_params(s, dg, &b, what == CUCORE_TUNE_TEXT_JSON);
  }
  if (cap > 0) buf[b.len < cap ? b.len : cap - 1] = 0;
  if (needed) *needed = b.len;
  free(dg);
  free(vals);
  return st;
}

const char *cucore_tune_verdict_name(cucore_tune_verdict v) {
  static const char *const names[] = {"runnable", "restricted", "bad-launch", "arch-limit",
                                      "model-rejected"};
  return (unsigned)v < CC_ARRAY_LEN(names) ? names[v] : "unknown";
}
