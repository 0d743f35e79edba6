/*
 * space_text.c -- a configuration's texts, each made by one writer from the structured values
 * (space_values.c): the parameters as people read them ("BM=64 VT=\"unsigned int\""), the
 * kernel name with its template holes filled, the compile's defines (one -DNAME=VALUE a line,
 * the value as C reads it) and JSON. Texts of any length: the caller's buffer gets what fits and
 * *needed says how much the whole text is; the library's own callers build them in a cc_sb.
 */
#include "tune/space_file.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void text_params(const cucore_tune_space *s, const size_t *dg, cc_sb *b, int json) {
  if (json) cc_sb_puts(b, "{");
  for (size_t i = 0; i < s->nparams; i++) {
    const cc_tparam *p = &s->params[i];
    if (!json) {
      cc_sb_printf(b, "%s%s=", i ? " " : "", p->name);
      cc_tune_value_shown(b, p->text[dg[i]]);
      continue;
    }
    if (i) cc_sb_puts(b, ",");
    cc_sb_json_string(b, p->name, strlen(p->name));
    cc_sb_puts(b, ":");
    cc_tune_value_json(b, &p->val[dg[i]]);
  }
  if (json) cc_sb_puts(b, "}");
}

/* A space file's defines (Kernel Tuner's "defines"): exactly those, each rendered for the
 * configuration. */
static cucore_status file_defines(const cucore_tune_space *s, const size_t *dg, cc_sb *b) {
  for (size_t d = 0; d < s->extras->ndefs; d++) {
    char *text = NULL;
    cucore_status st = cc_tune_define_render(s, dg, d, &text, NULL);
    if (st != CUCORE_OK) return st;
    cc_sb_printf(b, "%s-D%s=%s", b->len ? "\n" : "", s->extras->defs[d].name, text);
    free(text);
  }
  return CUCORE_OK;
}

static void text_defines(const cucore_tune_space *s, const size_t *dg, cc_sb *b) {
  for (size_t i = 0; i < s->nparams; i++) {
    const cc_tparam *p = &s->params[i];
    if (p->resolved != CUCORE_TUNE_PARAM_DEFINE) continue;
    cc_sb_printf(b, "%s-D%s=%s", b->len ? "\n" : "", p->name, p->c_text[dg[i]]);
  }
}

cucore_status cc_tune_kernel_holes(const cucore_tune_space *s) {
  const char *k = s->kernel ? s->kernel : "";
  for (const char *p = strchr(k, '{'); p; p = strchr(p + 1, '{')) {
    size_t n = strcspn(p + 1, "}");
    if (cc_tune_find_param((void *)s, p + 1, n) < 0)
      return cc_fail(CUCORE_INVALID_ARGUMENT,
                     "kernel `%s`: the template hole `{%.*s}` names no parameter of the space", k,
                     (int)n, p + 1);
  }
  return CUCORE_OK;
}

static cucore_status text_kernel(const cucore_tune_space *s, const size_t *dg, cc_sb *b) {
  cucore_status st = cc_tune_kernel_holes(s);
  const char *k = s->kernel ? s->kernel : "";
  for (const char *p = k; st == CUCORE_OK && *p;) {
    size_t plain = strcspn(p, "{");
    cc_sb_add(b, p, plain);
    p += plain;
    if (!*p) break;
    size_t n = strcspn(p + 1, "}");
    int i = cc_tune_find_param((void *)s, p + 1, n);
    cc_sb_puts(b, s->params[i].c_text[dg[i]]);
    p += n + 2;
  }
  return st;
}

cucore_status cc_tune_config_text(const cucore_tune_space *s, const size_t *dg,
                                  cucore_tune_text what, cc_sb *b) {
  cucore_status st = CUCORE_OK;
  if (what == CUCORE_TUNE_TEXT_KERNEL)
    st = text_kernel(s, dg, b);
  else if (what == CUCORE_TUNE_TEXT_DEFINES && s->extras && s->extras->has_defines)
    st = file_defines(s, dg, b);
  else if (what == CUCORE_TUNE_TEXT_DEFINES)
    text_defines(s, dg, b);
  else
    text_params(s, dg, b, what == CUCORE_TUNE_TEXT_JSON);
  return st != CUCORE_OK ? st : b->failed ? CUCORE_HOST_OUT_OF_MEMORY : CUCORE_OK;
}

cucore_status cc_tune_index_text(const cucore_tune_space *s, uint64_t index, cucore_tune_text what,
                                 cc_sb *b) {
  size_t *dg = cc_calloc(s->nparams ? s->nparams : 1, sizeof *dg, "configuration values");
  if (!dg) return CUCORE_HOST_OUT_OF_MEMORY;
  cc_tune_digits(s, index, dg);
  cucore_status st = cc_tune_config_text(s, dg, what, b);
  free(dg);
  return st;
}

/* The length of value k of p's JSON text when `t` starts with it, followed by ',' or '}'. */
static size_t value_at(const cc_tparam *p, size_t k, const char *t, cc_sb *b) {
  b->len = 0;
  cc_tune_value_json(b, &p->val[k]);
  if (b->failed || strncmp(t, cc_sb_text(b), b->len) != 0) return 0;
  return t[b->len] == ',' || t[b->len] == '}' ? b->len : 0;
}

int cc_tune_index_of_json(const cucore_tune_space *s, const char *text, uint64_t *index) {
  cc_sb b = {0};
  const char *t = text;
  uint64_t ix = 0;
  int ok = *t++ == '{';
  for (size_t i = 0; ok && i < s->nparams; i++) {
    const cc_tparam *p = &s->params[i];
    b.len = 0;
    if (i) cc_sb_puts(&b, ",");
    cc_sb_json_string(&b, p->name, strlen(p->name));
    cc_sb_puts(&b, ":");
    ok = !b.failed && strncmp(t, cc_sb_text(&b), b.len) == 0;
    t += ok ? b.len : 0;
    size_t k = 0, n = 0;
    while (ok && k < p->n && !(n = value_at(p, k, t, &b))) k++;
    ok = ok && k < p->n;
    t += n;
    ix = ix * p->n + k;
  }
  cc_sb_free(&b);
  if (!ok || strcmp(t, "}") != 0) return 0;
  *index = ix;
  return 1;
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
  cc_sb b = {0};
  cucore_status st = cc_tune_index_text(s, index, what, &b);
  if (st == CUCORE_OK && cap > 0) {
    size_t n = b.len < cap ? b.len : cap - 1;
    memcpy(buf, cc_sb_text(&b), n);
    buf[n] = 0;
  }
  if (needed) *needed = b.len;
  cc_sb_free(&b);
  return st;
}

static cucore_status value_of(const cc_tparam *p, size_t k, cucore_tune_value *out) {
  const cc_tval *v = &p->val[k];
  out->type = (cucore_tune_value_type)v->kind;
  out->i = v->i;
  out->d = v->d;
  out->text = p->text[k];
  out->c_text = p->c_text[k];
  return CUCORE_OK;
}

cucore_status cucore_tune_space_get_param_value(const cucore_tune_space *s, size_t param, size_t k,
                                                cucore_tune_value *out) {
  cc_begin();
  const char *fn = "cucore_tune_space_get_param_value";
  CC_CHECK_HANDLE(s, TUNE_SPACE, fn, "space");
  CC_CHECK_ARG(out, fn, "out");
  if (param >= s->nparams)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: parameter %zu of %zu", fn, param, s->nparams);
  if (k >= s->params[param].n)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: value %zu of `%s`, which has %zu", fn, k,
                   s->params[param].name, s->params[param].n);
  return value_of(&s->params[param], k, out);
}

cucore_status cucore_tune_space_get_value(const cucore_tune_space *s, uint64_t index, size_t param,
                                          cucore_tune_value *out) {
  cc_begin();
  const char *fn = "cucore_tune_space_get_value";
  CC_CHECK_HANDLE(s, TUNE_SPACE, fn, "space");
  CC_CHECK_ARG(out, fn, "out");
  uint64_t raw;
  if (cc_tune_raw(s, &raw) < 0 || index >= raw)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: configuration %llu is not in the space", fn,
                   (unsigned long long)index);
  if (param >= s->nparams)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: parameter %zu of %zu", fn, param, s->nparams);
  for (size_t k = s->nparams; k-- > param + 1;) index /= s->params[k].n;
  return value_of(&s->params[param], (size_t)(index % s->params[param].n), out);
}

cucore_status cucore_tune_space_get_values(const cucore_tune_space *s, uint64_t index,
                                           cucore_tune_value *out, size_t n) {
  cc_begin();
  const char *fn = "cucore_tune_space_get_values";
  CC_CHECK_HANDLE(s, TUNE_SPACE, fn, "space");
  if (n) CC_CHECK_ARG(out, fn, "out");
  uint64_t raw;
  if (cc_tune_raw(s, &raw) < 0 || index >= raw)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: configuration %llu is not in the space", fn,
                   (unsigned long long)index);
  if (n > s->nparams)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: %zu values asked of a space of %zu parameters", fn,
                   n, s->nparams);
  for (size_t k = s->nparams; k-- > 0;) {
    size_t d = (size_t)(index % s->params[k].n);
    index /= s->params[k].n;
    if (k < n) value_of(&s->params[k], d, &out[k]);
  }
  return CUCORE_OK;
}

const char *cucore_tune_verdict_name(cucore_tune_verdict v) {
  static const char *const names[] = {"runnable", "restricted", "bad-launch", "arch-limit",
                                      "model-rejected"};
  return (unsigned)v < CC_ARRAY_LEN(names) ? names[v] : "unknown";
}
