/*
 * cache_key.c -- the compile cache's key: a SHA-256 over labelled, length-prefixed fields
 * holding everything that decides a compile's output, and the check that the key sees
 * everything the compile reads.
 *
 * The compiler's identity is the file the loader would open (path, device, inode, size,
 * modification time), found without loading it: loading NVRTC costs ~8 ms, more than a whole disk
 * hit, and a patch release changes the file while nvrtcVersion() stays the same.
 */
#define _GNU_SOURCE
#include "compile/cache.h"

#include "base/le.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- fields --------------------------------------------------------------------------------- */

void cc_cache_key_field(cc_sha256 *sha, const char *label, const void *data, size_t size) {
  unsigned char len[8];
  size_t ll = strlen(label);
  cc_le_put32(len, (uint32_t)ll);
  cc_sha256_update(sha, len, 4);
  cc_sha256_update(sha, label, ll);
  cc_le_put64(len, (uint64_t)size);
  cc_sha256_update(sha, len, 8);
  if (size) cc_sha256_update(sha, data, size);
}

static void field_str(cc_sha256 *sha, const char *label, const char *s) {
  cc_cache_key_field(sha, label, s ? s : "", s ? strlen(s) : 0);
}

static void field_u64(cc_sha256 *sha, const char *label, uint64_t v) {
  unsigned char b[8];
  cc_le_put64(b, v);
  cc_cache_key_field(sha, label, b, 8);
}

/* ---- the compiler's identity ---------------------------------------------------------------- */

/* The tools' names and override variables (toolkit.c searches with the same ones). */
static const struct {
  const char *display, *env;
} tools[] = {{"NVRTC", "CUCORE_NVRTC"},
             {"nvJitLink", "CUCORE_NVJITLINK"},
             {"libNVVM", "CUCORE_NVVM"}};

/* The file the loader would open for `tool` (toolkit.c's search, without loading). */
static int find_tool_file(cc_cache_tool tool, char *out, size_t cap) {
  return tool == CC_CACHE_NVRTC       ? cc_nvrtc_locate(out, cap)
         : tool == CC_CACHE_NVJITLINK ? cc_nvjitlink_locate(out, cap)
                                      : cc_nvvm_locate(out, cap);
}

/* The path from loading the library (the fallback: the loader path decides). */
static int loaded_tool_file(cc_cache_tool tool, char *out, size_t cap) {
  cucore_library_info info;
  if (tool == CC_CACHE_NVRTC)
    cc_nvrtc_describe(&info);
  else if (tool == CC_CACHE_NVJITLINK)
    cc_nvjitlink_describe(&info);
  else
    cc_nvvm_describe(&info);
  if (!info.loaded || !info.path) return -1;
  snprintf(out, cap, "%s", info.path);
  return 0;
}

/* The file as found (not resolved: its device and inode identify it, and resolving every
 * link costs a system call per path component, in every new process). */
static int tool_file(cc_cache_tool tool, char *out, size_t cap) {
  if (find_tool_file(tool, out, cap) == 0 || loaded_tool_file(tool, out, cap) == 0) return 0;
  return -1;
}

int cc_cache_tool_path(cc_cache_tool tool, char *out, size_t cap) {
  char p[PATH_MAX];
  if (tool_file(tool, p, sizeof p) != 0) return -1;
  char real[PATH_MAX];
  snprintf(out, cap, "%s", realpath(p, real) ? real : p);
  return 0;
}

static void stat_text(const char *path, char *out, size_t cap) {
  struct stat st;
  if (stat(path, &st) != 0) {
    snprintf(out, cap, "%s missing", path);
    return;
  }
  snprintf(out, cap, "%s dev %llu ino %llu size %lld mtime %lld.%09ld", path,
           (unsigned long long)st.st_dev, (unsigned long long)st.st_ino, (long long)st.st_size,
           (long long)st.st_mtim.tv_sec, (long)st.st_mtim.tv_nsec);
}

/* Memoised per process while the variables that choose the files stay the same: the files
 * loaded into this process do not change under it, and stat calls are not free. */
typedef struct memo {
  char env[2048];
  char text[PATH_MAX + 128];
  int ok;
} memo;

static pthread_mutex_t memo_lock = PTHREAD_MUTEX_INITIALIZER;
static memo tool_memo[3];
static memo include_memo;

static void env_fingerprint(const char *extra, char *out, size_t cap) {
  const char *h = getenv("CUDA_HOME"), *p = getenv("CUDA_PATH"), *x = extra ? getenv(extra) : NULL;
  snprintf(out, cap, "%s\x1f%s\x1f%s", h ? h : "", p ? p : "", x ? x : "");
}

int cc_cache_tool_identity(cc_cache_tool tool, char *out, size_t cap) {
  char env[2048];
  env_fingerprint(tools[tool].env, env, sizeof env);
  pthread_mutex_lock(&memo_lock);
  memo *m = &tool_memo[tool];
  if (m->ok && strcmp(m->env, env) == 0) {
    snprintf(out, cap, "%s", m->text);
    pthread_mutex_unlock(&memo_lock);
    return 0;
  }
  pthread_mutex_unlock(&memo_lock);
  char path[PATH_MAX], text[PATH_MAX + 128];
  if (tool_file(tool, path, sizeof path) != 0) return -1;
  stat_text(path, text, sizeof text);
  pthread_mutex_lock(&memo_lock);
  snprintf(m->env, sizeof m->env, "%s", env);
  snprintf(m->text, sizeof m->text, "%s", text);
  m->ok = 1;
  pthread_mutex_unlock(&memo_lock);
  snprintf(out, cap, "%s", text);
  return 0;
}

/* The toolkit's include directories (added by the toolkit-includes option): the root and
 * the identity of include/ and include/cccl (an upgrade replaces files, which changes the
 * directories' modification times). */
static void toolkit_include_identity(char *out, size_t cap) {
  char env[2048];
  env_fingerprint(NULL, env, sizeof env);
  pthread_mutex_lock(&memo_lock);
  if (include_memo.ok && strcmp(include_memo.env, env) == 0) {
    snprintf(out, cap, "%s", include_memo.text);
    pthread_mutex_unlock(&memo_lock);
    return;
  }
  pthread_mutex_unlock(&memo_lock);
  const char *root = cc_toolkit_root();
  char text[PATH_MAX + 128] = "no toolkit root";
  if (root) {
    char p[PATH_MAX], a[PATH_MAX + 64], b[PATH_MAX + 64];
    snprintf(p, sizeof p, "%s/include", root);
    stat_text(p, a, sizeof a);
    snprintf(p, sizeof p, "%s/include/cccl", root);
    stat_text(p, b, sizeof b);
    snprintf(text, sizeof text, "%s|%s|%s", root, a, b);
  }
  pthread_mutex_lock(&memo_lock);
  snprintf(include_memo.env, sizeof include_memo.env, "%s", env);
  snprintf(include_memo.text, sizeof include_memo.text, "%s", text);
  include_memo.ok = 1;
  pthread_mutex_unlock(&memo_lock);
  snprintf(out, cap, "%s", text);
}

/* ---- what the key cannot see ---------------------------------------------------------------- */

static void uncacheable(cc_cache_key *key, const char *fmt, ...) CC_PRINTF(2, 3);
static void uncacheable(cc_cache_key *key, const char *fmt, ...) {
  if (key->uncacheable) return; /* the first reason is the one reported */
  key->uncacheable = 1;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(key->why, sizeof key->why, fmt, ap);
  va_end(ap);
}

static const char fix_hint[] =
    "; add the files as in-memory headers (cucore_options_add_header) or give a digest of "
    "them (cucore_program_set_cache_digest)";

static int is_memory_header(const cucore_options *o, const char *name, size_t len) {
  for (int h = 0; h < o->header_count; h++)
    if (strlen(o->headers[h].name) == len && memcmp(o->headers[h].name, name, len) == 0) return 1;
  return 0;
}

/* The toolkit's own include directories are part of the compiler's identity. */
static int is_toolkit_include(const char *dir) {
  const char *root = cc_toolkit_root();
  char real[PATH_MAX], want[PATH_MAX], p[PATH_MAX];
  if (!root || !realpath(dir, real)) return 0;
  snprintf(p, sizeof p, "%s/include", root);
  if (realpath(p, want) && strcmp(real, want) == 0) return 1;
  snprintf(p, sizeof p, "%s/include/cccl", root);
  return realpath(p, want) && strcmp(real, want) == 0;
}

/* Raw options that read or write files: include paths, pre-includes, PCH, dependency and
 * timing output. */
static const char *const raw_file_options[] = {"-I",
                                               "--include-path",
                                               "-include",
                                               "--pre-include",
                                               "-isystem",
                                               "--system-include",
                                               "-pch",
                                               "--pch",
                                               "--create-pch",
                                               "--use-pch",
                                               "--pch-dir",
                                               "-M",
                                               "--generate-dependen",
                                               "--dependency",
                                               "-time",
                                               "--time",
                                               "--fdevice-time-trace",
                                               "-fdevice-time-trace",
                                               NULL};

static void check_options(cc_cache_key *key, const cucore_options *o) {
  const cc_option_value *inc = &o->v[CUCORE_OPT_INCLUDE_PATH];
  for (int k = 0; k < inc->count; k++)
    if (!is_toolkit_include(inc->items[k]))
      uncacheable(key, "include-path `%s` lets the compiler read files the cache key cannot see%s",
                  inc->items[k], fix_hint);
  const cc_option_value *pre = &o->v[CUCORE_OPT_PRE_INCLUDE];
  for (int k = 0; k < pre->count; k++)
    if (!is_memory_header(o, pre->items[k], strlen(pre->items[k])))
      uncacheable(key,
                  "pre-include `%s` is not an in-memory header: the compiler reads it from "
                  "disk, where the cache key cannot see it%s",
                  pre->items[k], fix_hint);
  const cc_option_value *raw = &o->v[CUCORE_OPT_RAW];
  for (int k = 0; k < raw->count; k++)
    for (int r = 0; raw_file_options[r]; r++)
      if (strncmp(raw->items[k], raw_file_options[r], strlen(raw_file_options[r])) == 0) {
        uncacheable(key,
                    "raw option `%s` makes the compiler read or write files the cache key "
                    "cannot see%s",
                    raw->items[k], fix_hint);
        break;
      }
}

/* NVRTC resolves `#include "X"` beside the including file (its name's directory, relative
 * to the working directory) before the include path; a file found there is read from disk.
 * `#include <X>` searches only the include path (the toolkit's, or an include-path already
 * refused above). */
static void check_quoted(cc_cache_key *key, const cucore_options *o, const char *from,
                         const char *name, size_t len, const char *how) {
  if (len == 0 || len >= PATH_MAX / 2 || is_memory_header(o, name, len)) return;
  char path[PATH_MAX];
  const char *slash = strrchr(from, '/');
  if (name[0] == '/' || !slash)
    snprintf(path, sizeof path, "%.*s", (int)len, name);
  else
    snprintf(path, sizeof path, "%.*s/%.*s", (int)(slash - from), from, (int)len, name);
  struct stat st;
  if (stat(path, &st) == 0)
    uncacheable(key, "%s \"%.*s\" in `%s` reads `%s` from disk, which the cache key cannot see%s",
                how, (int)len, name, from, path, fix_hint);
}

/* What the scanner found in `from`, judged: a quoted include is checked beside `from`; a
 * quoted __has_include asks about a file on disk whether or not it is there now (creating it
 * later changes the output), so only an in-memory header keeps it cacheable; <name> searches
 * only the include path (the toolkit's, or one refused by check_options); anything else
 * cannot be resolved before compiling. */
typedef struct scan_ctx {
  cc_cache_key *key;
  const cucore_options *o;
  const char *from;
} scan_ctx;

static int on_include(void *ctx, const cc_include_ref *r) {
  scan_ctx *c = ctx;
  int has = strncmp(r->how, "__has_include", 13) == 0;
  if (r->kind == CC_INCLUDE_QUOTED && !has) {
    check_quoted(c->key, c->o, c->from, r->text, r->len, r->how);
  } else if (r->kind == CC_INCLUDE_QUOTED && !is_memory_header(c->o, r->text, r->len)) {
    uncacheable(c->key,
                "%s(\"%.*s\") in `%s` asks about a file on disk, which the cache key "
                "cannot see%s",
                r->how, (int)r->len, r->text, c->from, fix_hint);
  } else if (r->kind == CC_INCLUDE_UNKNOWN && r->how[0] != '#' && !has) {
    uncacheable(c->key,
                "%s in `%s` makes the includes uncertain (it joins lines only under "
                "C++14 and older), so the cache key cannot list them%s",
                r->how, c->from, fix_hint);
  } else if (r->kind == CC_INCLUDE_UNKNOWN) {
    uncacheable(c->key,
                "`%s %.*s` in `%s` names its file through a macro or a computed name, "
                "which the cache key cannot resolve%s",
                r->how, (int)r->len, r->text, c->from, fix_hint);
  }
  return c->key->uncacheable;
}

static void scan_text(cc_cache_key *key, const cucore_options *o, const char *from,
                      const char *text, size_t n) {
  scan_ctx c = {key, o, from};
  if (cc_cache_scan_includes(text, n, on_include, &c) != 0)
    uncacheable(key, "out of host memory listing the includes of `%s`", from);
}

/* ---- the key -------------------------------------------------------------------------------- */

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void tool_field(cc_cache_key *key, cc_cache_tool tool, const char *label) {
  char id[PATH_MAX + 128];
  if (cc_cache_tool_identity(tool, id, sizeof id) != 0) {
    cc_begin(); /* the compile itself reports the missing library */
    uncacheable(key, "%s could not be found, so the cache cannot name the compiler",
                tools[tool].display);
    return;
  }
  field_str(&key->sha, label, id);
}

/* The flags the tool will be given, as rendered now: a change in how cucore renders options
 * (with the version string unchanged, as during development) still changes the key. */
static int rendered_field(cc_cache_key *key, const cc_cache_request *rq, cc_tool tool,
                          int virtual_arch) {
  cc_argv args = {0};
  if (cc_options_render_key(rq->opts, tool, rq->arch, rq->suffix, virtual_arch, &args) !=
      CUCORE_OK) {
    cc_argv_free(&args);
    cc_begin();
    uncacheable(key, "out of host memory computing the cache key");
    return -1;
  }
  field_u64(&key->sha, "argv", (uint64_t)args.n);
  for (int i = 0; i < args.n; i++) field_str(&key->sha, "arg", args.v[i]);
  cc_argv_free(&args);
  return 0;
}

/* The compilers and the flags each will be given. Returns 0, or -1 when out of memory. */
static int compiler_fields(cc_cache_key *key, const cc_cache_request *rq) {
  if (rq->type == CUCORE_CODE_CUDA_CPP) {
    tool_field(key, CC_CACHE_NVRTC, "nvrtc");
    if (cc_options_int(rq->opts, CUCORE_OPT_TOOLKIT_INCLUDES)) {
      char id[3 * PATH_MAX];
      toolkit_include_identity(id, sizeof id);
      field_str(&key->sha, "toolkit-includes", id);
    }
  } else if (rq->type == CUCORE_CODE_NVVM) {
    tool_field(key, CC_CACHE_NVVM, "nvvm");
  }
  /* nvJitLink makes the cubins of PTX and NVVM programs (a fatbin may hold some). */
  int jitlink = rq->type != CUCORE_CODE_CUDA_CPP &&
                (rq->target == CUCORE_CODE_CUBIN || rq->target == CUCORE_CODE_FATBIN);
  if (jitlink) tool_field(key, CC_CACHE_NVJITLINK, "nvjitlink");
  int rendered = 0;
  if (rq->type == CUCORE_CODE_CUDA_CPP)
    rendered = rendered_field(key, rq, CC_TOOL_NVRTC, rq->target != CUCORE_CODE_CUBIN);
  else if (rq->type == CUCORE_CODE_NVVM)
    rendered = rendered_field(key, rq, CC_TOOL_NVVM, 1);
  if (rendered == 0 && jitlink) rendered = rendered_field(key, rq, CC_TOOL_NVJITLINK, 0);
  return rendered;
}

/* The options: canonical text, then each value again, length-prefixed. */
static int option_fields(cc_cache_key *key, const cucore_options *o) {
  const char *canon = NULL;
  if (cc_options_key_canonical(o, &canon) != CUCORE_OK) {
    cc_begin();
    uncacheable(key, "out of host memory computing the cache key");
    return -1;
  }
  field_str(&key->sha, "options", canon);
  /* The canonical text joins values with newlines; the values again, length-prefixed, keep
   * the key unambiguous when a value holds one. */
  for (int i = 0; i < CUCORE_OPT_COUNT; i++) {
    const cc_option_value *v = &o->v[i];
    if ((!v->sval && !v->count) || !cc_options_in_key((cucore_option)i)) continue;
    field_str(&key->sha, "option", cucore_option_name((cucore_option)i));
    if (v->sval) field_str(&key->sha, "value", v->sval);
    for (int k = 0; k < v->count; k++) field_str(&key->sha, "item", v->items[k]);
  }
  return 0;
}

/* The name expressions, sorted. */
static int expression_fields(cc_cache_key *key, const cc_cache_request *rq) {
  field_u64(&key->sha, "name-expressions", (uint64_t)rq->expr_count);
  if (!rq->expr_count) return 0;
  const char **sorted = cc_raw_malloc((size_t)rq->expr_count * sizeof *sorted);
  if (!sorted) {
    uncacheable(key, "out of host memory computing the cache key");
    return -1;
  }
  memcpy(sorted, rq->exprs, (size_t)rq->expr_count * sizeof *sorted);
  qsort(sorted, (size_t)rq->expr_count, sizeof *sorted, cmp_str);
  for (int i = 0; i < rq->expr_count; i++) field_str(&key->sha, "name-expression", sorted[i]);
  free(sorted);
  return 0;
}

int cc_cache_key_begin(cc_cache_key *key, const cc_cache_request *rq) {
  memset(key, 0, sizeof *key);
  cc_sha256 *sha = &key->sha;
  cc_sha256_init(sha);
  field_u64(sha, "format", CC_CACHE_FORMAT_VERSION);
  field_str(sha, "cucore", CUCORE_VERSION_STRING);
  field_u64(sha, "type", (uint64_t)rq->type);
  field_u64(sha, "target", (uint64_t)rq->target);
  field_u64(sha, "arch", (uint64_t)rq->arch);
  field_str(sha, "suffix", rq->suffix);
  field_str(sha, "name", rq->name);
  const cucore_options *o = rq->opts;
  if (compiler_fields(key, rq) != 0 || option_fields(key, o) != 0) return -1;
  cc_cache_key_field(sha, "source", rq->code, rq->size);
  field_u64(sha, "headers", (uint64_t)o->header_count);
  for (int h = 0; h < o->header_count; h++) {
    field_str(sha, "header-name", o->headers[h].name);
    field_str(sha, "header", o->headers[h].contents);
  }
  if (expression_fields(key, rq) != 0) return -1;
  /* Files the compiler writes as it runs: a hit would not write them, digest or not. */
  char side[CC_CACHE_NOTE_MAX];
  if (cc_options_side_files(o, side, sizeof side)) uncacheable(key, "%s", side);
  if (rq->digest) {
    field_str(sha, "digest", rq->digest);
    return 0;
  }
  check_options(key, o);
  if (rq->type == CUCORE_CODE_CUDA_CPP) {
    scan_text(key, o, rq->name, (const char *)rq->code, rq->size);
    for (int h = 0; h < o->header_count && !key->uncacheable; h++)
      scan_text(key, o, o->headers[h].name, o->headers[h].contents, strlen(o->headers[h].contents));
  }
  return 0;
}

void cc_cache_key_add_module(cc_cache_key *key, const char *name, const void *code, size_t size,
                             int lazy) {
  field_str(&key->sha, "module-name", name);
  field_u64(&key->sha, "module-lazy", (uint64_t)(lazy != 0));
  cc_cache_key_field(&key->sha, "module", code, size);
}

void cc_cache_key_end(cc_cache_key *key, unsigned char out[CC_CACHE_KEY_BYTES]) {
  cc_sha256_final(&key->sha, out);
}
