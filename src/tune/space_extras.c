/*
 * space_extras.c -- what a space file gives beyond the space itself: compiler options, Kernel
 * Tuner's defines (and the text of one for a configuration), constant-memory variables as
 * `cucore run --global` specs, and the keys accepted but ignored with the reason. Kept with the
 * space (struct cc_tune_extras), freed by cucore_tune_space_destroy(), read by the public
 * getters here.
 */
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include "tune/space_file.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cc_tune_extras_free(struct cc_tune_extras *x) {
  if (!x) return;
  for (size_t i = 0; i < x->noptions; i++) free(x->options[i]);
  for (size_t i = 0; i < x->ndefs; i++) {
    free((char *)x->defs[i].name);
    free((char *)x->defs[i].text);
  }
  for (size_t i = 0; i < x->ncmem; i++) free(x->cmem[i]);
  for (size_t i = 0; i < x->nignored; i++) free((char *)x->ignored[i].key);
  free(x->options);
  free(x->defs);
  free(x->cmem);
  free(x->ignored);
  free(x);
}

cucore_status cc_tune_extras_of(cucore_tune_space *s, struct cc_tune_extras **out) {
  if (!s->extras && !(s->extras = cc_calloc(1, sizeof *s->extras, "a space file's extras")))
    return CUCORE_HOST_OUT_OF_MEMORY;
  *out = s->extras;
  return CUCORE_OK;
}

/* Appends a copy of `text` to a list of strings. */
static cucore_status push(char ***list, size_t *n, size_t *cap, const char *text,
                          const char *what) {
  char **l = cc_grow(*list, cap, *n + 1, sizeof *l, what);
  if (!l) return CUCORE_HOST_OUT_OF_MEMORY;
  *list = l;
  if (!(l[*n] = cc_strdup(text, what))) return CUCORE_HOST_OUT_OF_MEMORY;
  (*n)++;
  return CUCORE_OK;
}

cucore_status cc_tune_extras_add_option(cucore_tune_space *s, const char *text) {
  struct cc_tune_extras *x;
  cucore_status st = cc_tune_extras_of(s, &x);
  if (st != CUCORE_OK) return st;
  return push(&x->options, &x->noptions, &x->cap_options, text, "the compiler options");
}

cucore_status cc_tune_extras_add_cmem(cucore_tune_space *s, const char *name, const char *spec) {
  struct cc_tune_extras *x;
  cucore_status st = cc_tune_extras_of(s, &x);
  if (st != CUCORE_OK) return st;
  size_t a = strlen(name), b = strlen(spec);
  char *t = cc_malloc(a + b + 2, "a constant-memory spec");
  if (!t) return CUCORE_HOST_OUT_OF_MEMORY;
  memcpy(t, name, a);
  t[a] = '=';
  memcpy(t + a + 1, spec, b + 1);
  st = push(&x->cmem, &x->ncmem, &x->cap_cmem, t, "the constant-memory specs");
  free(t);
  return st;
}

cucore_status cc_tune_extras_add_define(cucore_tune_space *s, const char *name, const char *text,
                                        int literal) {
  struct cc_tune_extras *x;
  cucore_status st = cc_tune_extras_of(s, &x);
  if (st != CUCORE_OK) return st;
  cucore_tune_define *d = cc_grow(x->defs, &x->cap_defs, x->ndefs + 1, sizeof *d, "the defines");
  if (!d) return CUCORE_HOST_OUT_OF_MEMORY;
  x->defs = d;
  cucore_tune_define def = {cc_strdup(name, "a define's name"), cc_strdup(text, "a define"),
                            literal};
  if (!def.name || !def.text) {
    free((char *)def.name);
    free((char *)def.text);
    return CUCORE_HOST_OUT_OF_MEMORY;
  }
  x->defs[x->ndefs++] = def;
  return CUCORE_OK;
}

cucore_status cc_tune_extras_ignore(cucore_tune_space *s, const char *key, const char *reason) {
  struct cc_tune_extras *x;
  cucore_status st = cc_tune_extras_of(s, &x);
  if (st != CUCORE_OK) return st;
  for (size_t i = 0; i < x->nignored; i++)
    if (strcmp(x->ignored[i].key, key) == 0) return CUCORE_OK;
  cucore_tune_ignored_key *k = cc_grow(x->ignored, &x->cap_ignored, x->nignored + 1, sizeof *k,
                                       "the ignored keys");
  if (!k) return CUCORE_HOST_OUT_OF_MEMORY;
  x->ignored = k;
  char *copy = cc_strdup(key, "an ignored key");
  if (!copy) return CUCORE_HOST_OUT_OF_MEMORY;
  x->ignored[x->nignored++] = (cucore_tune_ignored_key){copy, reason};
  return CUCORE_OK;
}

/* ---- rendering one define ------------------------------------------------------------------ */

static int word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* The parameter named t[0..n), or NULL. */
static const cc_tparam *param_named(const cucore_tune_space *s, const char *t, size_t n) {
  int i = cc_tune_find_param((void *)s, t, n);
  return i < 0 ? NULL : &s->params[i];
}

/* Kernel Tuner's replace_param_occurrences: the text split into runs of [a-zA-Z0-9_] and the
 * rest; a run that is a parameter's name becomes its value (as a compile sees it: an integer
 * in decimal, a bool true/false). */
static void substitute(const cucore_tune_space *s, const size_t *digits, const char *t, FILE *f) {
  while (*t) {
    size_t n = 0;
    while (word_char(t[n])) n++;
    if (n == 0) {
      fputc(*t++, f);
      continue;
    }
    const cc_tparam *p = param_named(s, t, n);
    if (p)
      fputs(p->c_text[digits[p - s->params]], f); /* the value as C reads it */
    else
      fwrite(t, 1, n, f);
    t += n;
  }
}

cucore_status cc_tune_define_render(const cucore_tune_space *s, const size_t *digits, size_t i,
                                    char **out, size_t *len) {
  const struct cc_tune_extras *x = s->extras;
  *out = NULL;
  if (!x || i >= x->ndefs)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "define %zu: the space has %zu defines", i,
                   x ? x->ndefs : 0);
  char *buf = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&buf, &n);
  if (!f) return cc_fail(CUCORE_HOST_OUT_OF_MEMORY, "out of memory writing define %zu", i);
  if (x->defs[i].literal)
    fputs(x->defs[i].text, f);
  else
    substitute(s, digits, x->defs[i].text, f);
  if (fclose(f) != 0 || !buf) {
    free(buf);
    return cc_fail(CUCORE_HOST_OUT_OF_MEMORY, "out of memory writing define `%s`", x->defs[i].name);
  }
  *out = buf;
  if (len) *len = n;
  return CUCORE_OK;
}

/* ---- public getters ------------------------------------------------------------------------ */

cucore_status cucore_tune_space_get_ignored_keys(const cucore_tune_space *s,
                                                 const cucore_tune_ignored_key **keys,
                                                 size_t *count) {
  cc_begin();
  const char *fn = "cucore_tune_space_get_ignored_keys";
  CC_CHECK_ARG(keys, fn, "keys");
  CC_CHECK_ARG(count, fn, "count");
  *keys = NULL;
  *count = 0;
  CC_CHECK_HANDLE(s, TUNE_SPACE, fn, "space");
  if (s->extras) *keys = s->extras->ignored, *count = s->extras->nignored;
  return CUCORE_OK;
}

cucore_status cucore_tune_space_get_compiler_options(const cucore_tune_space *s,
                                                     const char *const **options, size_t *count) {
  cc_begin();
  const char *fn = "cucore_tune_space_get_compiler_options";
  CC_CHECK_ARG(options, fn, "options");
  CC_CHECK_ARG(count, fn, "count");
  *options = NULL;
  *count = 0;
  CC_CHECK_HANDLE(s, TUNE_SPACE, fn, "space");
  if (s->extras) *options = (const char *const *)s->extras->options, *count = s->extras->noptions;
  return CUCORE_OK;
}

cucore_status cucore_tune_space_get_defines(const cucore_tune_space *s,
                                            const cucore_tune_define **defines, size_t *count,
                                            int *given) {
  cc_begin();
  const char *fn = "cucore_tune_space_get_defines";
  CC_CHECK_ARG(defines, fn, "defines");
  CC_CHECK_ARG(count, fn, "count");
  CC_CHECK_ARG(given, fn, "given");
  *defines = NULL;
  *count = 0;
  *given = 0;
  CC_CHECK_HANDLE(s, TUNE_SPACE, fn, "space");
  if (!s->extras) return CUCORE_OK;
  *defines = s->extras->defs;
  *count = s->extras->ndefs;
  *given = s->extras->has_defines;
  return CUCORE_OK;
}

cucore_status cucore_tune_space_get_cmem_args(const cucore_tune_space *s,
                                              const char *const **globals, size_t *count) {
  cc_begin();
  const char *fn = "cucore_tune_space_get_cmem_args";
  CC_CHECK_ARG(globals, fn, "globals");
  CC_CHECK_ARG(count, fn, "count");
  *globals = NULL;
  *count = 0;
  CC_CHECK_HANDLE(s, TUNE_SPACE, fn, "space");
  if (s->extras) *globals = (const char *const *)s->extras->cmem, *count = s->extras->ncmem;
  return CUCORE_OK;
}
