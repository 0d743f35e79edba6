/* cache_support.h -- helpers shared by the compile-cache tests (test_cache*.c). */
#ifndef CUCORE_TEST_CACHE_SUPPORT_H
#define CUCORE_TEST_CACHE_SUPPORT_H

#include "support.h"

#include <dirent.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compile/cache.h"
#include "object/object.h"

/* A small kernel; `n` makes distinct sources (distinct keys). */
static inline char *cache_test_source(int n) {
  char *s = NULL;
  if (asprintf(&s,
               "template <typename T> __global__ void scale(T *x, T a, int n) {\n"
               "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
               "  if (i < n) x[i] = x[i] * a + (T)%d;\n"
               "}\n"
               "extern \"C\" __global__ void variant_%d(float *x) { x[threadIdx.x] += %d.0f; }\n",
               n, n, n) < 0)
    return NULL;
  return s;
}

/* The cache as a test starts and leaves it: on, in `dir` (NULL: the environment's choice), the
 * default cap, CUCORE_CACHE_DISABLE and CUCORE_CACHE_MAX_BYTES unset, the in-process layer
 * empty. Returns 0, or -1. */
static inline int cache_test_settings(const char *dir) {
  if (cucore_cache_set_dir(dir) != CUCORE_OK || cucore_cache_set_enabled(-1) != CUCORE_OK ||
      cucore_cache_set_max_bytes(0) != CUCORE_OK)
    return -1;
  unsetenv("CUCORE_CACHE_DISABLE");
  unsetenv("CUCORE_CACHE_MAX_BYTES");
  cc_cache_memory_clear();
  return 0;
}

/* A fresh empty directory under /tmp (the caller removes it with cache_test_rm_rf). */
static inline char *cache_test_mkdtemp(void) {
  char *d = strdup("/tmp/cucore-cache-test-XXXXXX");
  if (!d || !mkdtemp(d)) {
    free(d);
    return NULL;
  }
  return d;
}

static inline int cache_test_rm_one(const char *path, const struct stat *st, int flag,
                                    struct FTW *ftw) {
  (void)st;
  (void)flag;
  (void)ftw;
  return remove(path);
}

static inline void cache_test_rm_rf(const char *dir) {
  if (dir) nftw(dir, cache_test_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* Entry files (<dir>/<2 hex>/<62 hex>) and temporary files in a cache directory. */
static inline int cache_test_count_files(const char *dir, int *tmp_files) {
  int entries = 0, tmps = 0;
  DIR *d = opendir(dir);
  if (!d) return 0;
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    if (strlen(de->d_name) != 2 || de->d_name[0] == '.') continue;
    char sub[4096];
    snprintf(sub, sizeof sub, "%s/%s", dir, de->d_name);
    DIR *sd = opendir(sub);
    if (!sd) continue;
    struct dirent *e;
    while ((e = readdir(sd)) != NULL) {
      if (strncmp(e->d_name, ".tmp-", 5) == 0)
        tmps++;
      else if (strlen(e->d_name) == 62)
        entries++;
    }
    closedir(sd);
  }
  closedir(d);
  if (tmp_files) *tmp_files = tmps;
  return entries;
}

/* Compiles `src` for `arch` to `target` with `opts` (may be NULL), registering `exprs`.
 * `cache` 0 turns the cache off for this program (a fresh reference compile). Fills *info. */
static inline cucore_status cache_test_compile(const char *src, const char *name, const char *arch,
                                               cucore_code_type target, const cucore_options *opts,
                                               const char *const *exprs, int nexprs, int cache,
                                               cucore_object **out, cucore_cache_info *info) {
  cucore_options *o = NULL;
  cucore_status st = opts ? cucore_options_copy(opts, &o) : cucore_options_create(&o);
  if (st == CUCORE_OK && arch) st = cucore_options_set_string(o, CUCORE_OPT_ARCH, arch);
  cucore_program *p = NULL;
  if (st == CUCORE_OK) st = cucore_program_create(CUCORE_CODE_CUDA_CPP, src, 0, name, o, &p);
  for (int i = 0; st == CUCORE_OK && i < nexprs; i++)
    st = cucore_program_add_name_expression(p, exprs[i]);
  if (st == CUCORE_OK && !cache) st = cucore_program_set_cache(p, 0);
  if (st == CUCORE_OK) st = cucore_program_compile(p, target, out);
  if (p && info) {
    /* info's strings belong to the program: copy what the tests read into static storage. */
    static char reason[1024], note[1024], path[4096];
    cucore_program_get_cache_info(p, info);
    snprintf(reason, sizeof reason, "%s", info->reason);
    snprintf(note, sizeof note, "%s", info->note);
    snprintf(path, sizeof path, "%s", info->path);
    info->reason = reason;
    info->note = note;
    info->path = path;
  }
  cucore_program_destroy(p);
  cucore_options_destroy(o);
  return st;
}

/* 1 when two objects hold the same code and the same facts about it. */
static inline int cache_test_same_object(const cucore_object *a, const cucore_object *b) {
  if (a->type != b->type || a->size != b->size || memcmp(a->code, b->code, a->size) != 0) return 0;
  if (a->arch != b->arch || strcmp(a->arch_suffix, b->arch_suffix) != 0) return 0;
  if (a->producer_version != b->producer_version) return 0;
  if ((a->ptx == NULL) != (b->ptx == NULL)) return 0;
  if (a->ptx && (a->ptx_size != b->ptx_size || memcmp(a->ptx, b->ptx, a->ptx_size) != 0)) return 0;
  if (a->expr_count != b->expr_count) return 0;
  for (int i = 0; i < a->expr_count; i++)
    if (strcmp(a->exprs[i], b->exprs[i]) != 0 || strcmp(a->lowered[i], b->lowered[i]) != 0)
      return 0;
  return 1;
}

/* What the cache stores of an object (a view borrowing its bytes; no log). */
static inline cc_cache_record cache_test_record_of(const cucore_object *o) {
  cc_cache_record r = {.type = o->type,
                       .arch = o->arch,
                       .producer_version = o->producer_version,
                       .code = o->code,
                       .size = o->size,
                       .ptx = o->ptx,
                       .ptx_size = o->ptx_size,
                       .expr_count = o->expr_count,
                       .exprs = o->exprs,
                       .lowered = o->lowered};
  memcpy(r.suffix, o->arch_suffix, sizeof r.suffix);
  return r;
}

/* 1 when two records hold the same code and the same facts about it (logs aside). */
static inline int cache_test_same_record(const cc_cache_record *a, const cc_cache_record *b) {
  if (a->type != b->type || a->size != b->size || memcmp(a->code, b->code, a->size) != 0) return 0;
  if (a->arch != b->arch || strcmp(a->suffix, b->suffix) != 0) return 0;
  if (a->producer_version != b->producer_version) return 0;
  if ((a->ptx == NULL) != (b->ptx == NULL)) return 0;
  if (a->ptx && (a->ptx_size != b->ptx_size || memcmp(a->ptx, b->ptx, a->ptx_size) != 0)) return 0;
  if (a->expr_count != b->expr_count) return 0;
  for (int i = 0; i < a->expr_count; i++)
    if (strcmp(a->exprs[i], b->exprs[i]) != 0 || strcmp(a->lowered[i], b->lowered[i]) != 0)
      return 0;
  return 1;
}

#endif
