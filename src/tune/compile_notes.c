/* compile_notes.c -- what a tune's compiles say beyond their cubins: the compiler's warnings (each
 * distinct one once, with how many compiles gave it), the parameters whose values change
 * nothing in the code (every pair of compiles differing only in one of them gave byte-identical
 * cubins: a parameter the source #defines itself, or one the kernel never reads), and a kernel
 * name that names nothing in the source (said once, with the kernels the source has, instead of
 * one compile error per configuration). */
#include "tune/compiles.h"
#include "tune/space.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cc_tcomp_warn {
  char *text;
  size_t compiles;
  uint64_t first;
};

/* ---- warnings ------------------------------------------------------------------------------- */

static int is_warning_line(const char *line, size_t n) {
  for (size_t i = 0; i + 9 <= n; i++)
    if (memcmp(line + i, "warning", 7) == 0 && (line[i + 7] == ':' || line[i + 7] == ' ')) return 1;
  return 0;
}

static void add_warning(cc_tcomp *t, const char *line, size_t n, uint64_t config) {
  for (size_t i = 0; i < t->nwarns; i++)
    if (strlen(t->warns[i].text) == n && memcmp(t->warns[i].text, line, n) == 0) {
      t->warns[i].compiles++;
      return;
    }
  cc_tcomp_warn *w = cc_grow(t->warns, &t->cap_warns, t->nwarns + 1, sizeof *w,
                             "the compile warnings");
  char *text = cc_raw_malloc(n + 1);
  if (!w || !text) { /* a note lost to out of memory: the tune goes on */
    free(text);
    if (w) t->warns = w;
    return;
  }
  memcpy(text, line, n);
  text[n] = 0;
  t->warns = w;
  t->warns[t->nwarns++] = (cc_tcomp_warn){text, 1, config};
}

void cc_tcomp_warnings(cc_trun *c, const cc_tgroup *g) {
  for (const char *p = g->log; p && *p;) {
    size_t n = strcspn(p, "\n");
    if (is_warning_line(p, n)) add_warning(c->comp, p, n, g->index);
    p += n + (p[n] != 0);
  }
  c->s.warnings = c->comp->nwarns;
}

void cc_tcomp_free_warnings(cc_tcomp_warn *w, size_t n) {
  for (size_t i = 0; i < n; i++) free(w[i].text);
  free(w);
}

cucore_status cc_tcomp_get_warning(const cc_tcomp_warn *w, size_t n, size_t i,
                                   cucore_tune_warning *out) {
  if (i >= n)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "cucore_tune_report_get_warning: warning %zu of a report with %zu", i, n);
  out->text = w[i].text;
  out->compiles = w[i].compiles;
  out->first_config = w[i].first;
  return CUCORE_OK;
}

/* ---- values that change nothing -------------------------------------------------------------- */

/* The compile key of group g without parameter `skip`: a hash of the other compile parameters'
 * value indices. */
static uint64_t key_without(const cucore_tune_space *s, const size_t *dg, size_t skip) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < s->nparams; i++) {
    if (i == skip || s->params[i].resolved == CUCORE_TUNE_PARAM_LAUNCH_ONLY) continue;
    h = (h ^ (uint64_t)dg[i]) * 0x100000001b3ull;
    h = (h ^ i) * 0x100000001b3ull;
  }
  return h;
}

typedef struct keyed_group {
  uint64_t key;
  const cc_tgroup *g;
} keyed_group;

static int by_key(const void *a, const void *b) {
  uint64_t x = ((const keyed_group *)a)->key, y = ((const keyed_group *)b)->key;
  return x < y ? -1 : x > y;
}

/* 1 when parameter p changes nothing: some groups differ only in it, and all of those compiled
 * to the same bytes. */
static int inert(const cc_trun *c, size_t p, keyed_group *k, size_t *dg) {
  size_t n = 0;
  for (size_t i = 0; i < c->comp->ngroups; i++) {
    const cc_tgroup *g = &c->comp->groups[i];
    if (!g->ok || !g->digest[0]) continue;
    cc_tune_digits(c->space, g->index, dg);
    k[n++] = (keyed_group){key_without(c->space, dg, p), g};
  }
  qsort(k, n, sizeof *k, by_key);
  int evidence = 0;
  for (size_t i = 1; i < n; i++) {
    if (k[i].key != k[i - 1].key) continue;
    if (strcmp(k[i].g->digest, k[i - 1].g->digest) != 0) return 0;
    evidence = 1;
  }
  return evidence;
}

static int by_digest(const void *a, const void *b) {
  return strcmp(((const keyed_group *)a)->g->digest, ((const keyed_group *)b)->g->digest);
}

static size_t distinct_cubins(const cc_tcomp *t, keyed_group *k) {
  size_t n = 0, d = 0;
  for (size_t i = 0; i < t->ngroups; i++)
    if (t->groups[i].ok && t->groups[i].digest[0]) k[n++].g = &t->groups[i];
  qsort(k, n, sizeof *k, by_digest);
  for (size_t i = 0; i < n; i++) d += i == 0 || strcmp(k[i].g->digest, k[i - 1].g->digest) != 0;
  return d;
}

void cc_tcomp_inert(cc_trun *c) {
  const cucore_tune_space *s = c->space;
  cc_tcomp *t = c->comp;
  keyed_group *k = cc_raw_calloc(t->ngroups ? t->ngroups : 1, sizeof *k);
  size_t *dg = cc_raw_calloc(s->nparams ? s->nparams : 1, sizeof *dg);
  t->inert = cc_raw_calloc(s->nparams ? s->nparams : 1, sizeof *t->inert);
  if (k && dg && t->inert) {
    c->s.distinct_cubins = distinct_cubins(t, k);
    for (size_t p = 0;
         c->s.distinct_cubins < c->s.compiles - c->s.compile_failures && p < s->nparams; p++)
      if (s->params[p].resolved != CUCORE_TUNE_PARAM_LAUNCH_ONLY && s->params[p].n > 1 &&
          inert(c, p, k, dg))
        t->inert[c->s.inert_params++] = p;
  }
  free(k);
  free(dg);
}

/* ---- a kernel the source does not have ------------------------------------------------------ */

/* The kernel name up to its template arguments, without spaces. */
static size_t base_name(const char *kernel, const char **start) {
  while (*kernel == ' ') kernel++;
  *start = kernel;
  size_t n = strcspn(kernel, "< (");
  return n;
}

/* 1 when NVRTC said the kernel's own name is undefined in the name map. */
static int names_nothing(const char *log, const char *kernel) {
  const char *base;
  size_t n = base_name(kernel, &base);
  if (!log || !n || !strstr(log, "__nv_name_map")) return 0;
  for (const char *p = strstr(log, "identifier \""); p; p = strstr(p + 1, "identifier \""))
    if (strncmp(p + 12, base, n) == 0 && p[12 + n] == '"' && strstr(p, "is undefined")) return 1;
  return 0;
}

/* "a, b, c": the kernels of the source compiled without a name expression (to PTX, with the
 * group's defines), or "" when that does not compile either. */
static void kernels_of(const cc_trun *c, const char *defines, cc_sb *out) {
  cucore_options *o = NULL;
  cucore_program *prog = NULL;
  cucore_object *obj = NULL;
  cucore_binary *bin = NULL;
  const void *code = NULL;
  size_t size = 0;
  cucore_code_type type;
  uint32_t n = 0;
  cucore_status st = c->copts ? cucore_options_copy(c->copts, &o) : cucore_options_create(&o);
  for (const char *d = defines; st == CUCORE_OK && *d;) {
    size_t len = strcspn(d, "\n");
    char *line = cc_raw_malloc(len + 1);
    int used = 0;
    if (line) memcpy(line, d, len), line[len] = 0;
    st = line ? cucore_options_parse(o, line, NULL, &used) : CUCORE_HOST_OUT_OF_MEMORY;
    free(line);
    d += len + (d[len] != 0);
  }
  const char *src = c->space->source ? c->space->source : "";
  if (st == CUCORE_OK)
    st = cucore_program_create(CUCORE_CODE_CUDA_CPP, src, strlen(src), c->o.source_name, o, &prog);
  if (st == CUCORE_OK) st = cucore_program_compile(prog, CUCORE_CODE_PTX, &obj);
  if (st == CUCORE_OK) st = cucore_object_get_code(obj, &type, &code, &size);
  if (st == CUCORE_OK) st = cucore_binary_open(code, size, CUCORE_CODE_PTX, 0, &bin);
  if (st == CUCORE_OK) st = cucore_binary_get_kernel_count(bin, &n);
  for (uint32_t i = 0; st == CUCORE_OK && i < n; i++) {
    const cucore_kernel_info *k = NULL;
    if (cucore_binary_get_kernel(bin, i, &k) != CUCORE_OK) break;
    cc_sb_printf(out, "%s%s", i ? ", " : "", k->demangled ? k->demangled : k->name);
  }
  cucore_binary_destroy(bin);
  cucore_object_destroy(obj);
  cucore_program_destroy(prog);
  cucore_options_destroy(o);
}

char *cc_tcomp_missing_kernel(const cc_trun *c, const cc_tgroup *g, const char *kernel,
                              const char *defines) {
  if (!names_nothing(g->log ? g->log : g->error, kernel)) return NULL;
  cc_sb list = {0}, msg = {0};
  kernels_of(c, defines, &list);
  const char *base;
  size_t n = base_name(kernel, &base);
  cc_sb_printf(&msg, "no kernel `%.*s` in %s (%s%s%s)", (int)n, base,
               c->o.source_name ? c->o.source_name : "the source",
               list.len ? "it has: " : "its kernels could not be listed", cc_sb_text(&list),
               "; --kernel names a __global__ function, or a template with {PARAM} holes");
  cc_sb_free(&list);
  return cc_sb_take(&msg);
}
