/*
 * libdevice.c -- finds libdevice (the toolkit's nvvm/libdevice/libdevice.10.bc, the bitcode of
 * the __nv_* math functions NVVM IR calls) and keeps its bytes for the process: a compile that
 * needs it pays for the read once, a compile that does not never looks for it.
 */
#define _GNU_SOURCE
#include "loader/loader.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define LIBDEVICE_FILE "libdevice.10.bc"

/* One file read, kept until the process ends. */
typedef struct entry {
  struct entry *next;
  char *path;
  char *identity;
  dev_t dev;
  ino_t ino;
  off_t size;
  struct timespec mtime;
  unsigned char *data;
} entry;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static entry *entries;

/* Frees the kept files when the library is unloaded or the process exits (so leak checkers see
 * none); nothing uses them by then. */
__attribute__((destructor)) static void free_entries(void) {
  while (entries) {
    entry *e = entries;
    entries = e->next;
    free(e->path);
    free(e->identity);
    free(e->data);
    free(e);
  }
}

static int is_name_char(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

const char *cc_libdevice_wanted(const void *code, size_t size, size_t *len) {
  const char *p = code, *end = p + size;
  while (p < end) {
    const char *hit = memmem(p, (size_t)(end - p), "__nv_", 5);
    if (!hit) return NULL;
    /* A name that starts here (not the tail of a longer identifier) and goes on past the
     * prefix: "__nv_sinf", not "x__nv_" or a bare "__nv_". */
    const char *q = hit + 5;
    while (q < end && is_name_char((unsigned char)*q)) q++;
    if (q > hit + 5 && (hit == (const char *)code || !is_name_char((unsigned char)hit[-1]))) {
      *len = (size_t)(q - hit);
      return hit;
    }
    p = hit + 5;
  }
  return NULL;
}

static int same_file(const entry *e, const char *path, const struct stat *st) {
  return strcmp(e->path, path) == 0 && e->dev == st->st_dev && e->ino == st->st_ino &&
         e->size == st->st_size && e->mtime.tv_sec == st->st_mtim.tv_sec &&
         e->mtime.tv_nsec == st->st_mtim.tv_nsec;
}

static void fill(cc_libdevice *out, const entry *e) {
  out->data = e->data;
  out->size = (size_t)e->size;
  out->path = e->path;
  out->identity = e->identity;
}

/* Reads `path` (a regular file, stat in `st`) into a new entry; under the lock. */
static cucore_status read_entry(const char *path, const struct stat *st, const char *why,
                                entry **out) {
  unsigned char *data = NULL;
  size_t size = 0;
  cucore_status st_read = cc_read_file(path, &data, &size);
  if (st_read != CUCORE_OK) {
    cc_sb reason = {0};
    cc_sb_puts(&reason, cucore_last_error());
    cc_begin(); /* this message replaces the reader's, and names it */
    cucore_status r = cc_fail(CUCORE_IO_ERROR, "%s; libdevice at %s cannot be read: %s", why, path,
                              cc_sb_text(&reason));
    cc_sb_free(&reason);
    return r;
  }
  entry *e = cc_calloc(1, sizeof *e, "a libdevice entry");
  cc_sb id = {0};
  cc_sb_printf(&id, "%s dev %llu ino %llu size %zu mtime %lld.%09ld", path,
               (unsigned long long)st->st_dev, (unsigned long long)st->st_ino, size,
               (long long)st->st_mtim.tv_sec, (long)st->st_mtim.tv_nsec);
  if (e) {
    e->path = cc_strdup(path, "a libdevice path");
    e->identity = cc_sb_take(&id);
  }
  cc_sb_free(&id);
  if (!e || !e->path || !e->identity) {
    if (e) {
      free(e->path);
      free(e->identity);
    }
    free(e);
    free(data);
    return CUCORE_HOST_OUT_OF_MEMORY;
  }
  e->dev = st->st_dev;
  e->ino = st->st_ino;
  e->size = (off_t)size;
  e->mtime = st->st_mtim;
  e->data = data;
  *out = e;
  return CUCORE_OK;
}

/* 1 with *out when `path` is a regular file (read or found kept); 0 when it is not there (the
 * reason appended to `tried`); -1 when it exists but cannot be read (recorded). */
static int try_path(const char *path, const char *label, const char *why, cc_sb *tried,
                    cc_libdevice *out) {
  struct stat st;
  int rc = stat(path, &st);
  if (rc != 0 || !S_ISREG(st.st_mode)) {
    const char *reason = rc == 0           ? "not a regular file"
                         : errno == ENOENT ? "no such file"
                                           : strerror(errno);
    cc_sb_printf(tried, "\n  %s%s%s%s: %s", path, label ? " (" : "", label ? label : "",
                 label ? ")" : "", reason);
    return 0;
  }
  pthread_mutex_lock(&lock);
  entry *e = entries;
  while (e && !same_file(e, path, &st)) e = e->next;
  cucore_status r = CUCORE_OK;
  if (!e) {
    r = read_entry(path, &st, why, &e);
    if (r == CUCORE_OK) {
      e->next = entries;
      entries = e;
    }
  }
  if (r == CUCORE_OK) fill(out, e);
  pthread_mutex_unlock(&lock);
  return r == CUCORE_OK ? 1 : -1;
}

/* The places beside the loaded libNVVM: <dir>/../nvvm/libdevice and <dir>/../libdevice (the
 * toolkit's lib/ and nvvm/lib64/ layouts). */
static int try_beside_nvvm(const char *why, cc_sb *tried, cc_libdevice *out) {
  cucore_library_info info;
  cc_nvvm_describe(&info);
  if (!info.loaded || !info.path || !strchr(info.path, '/')) return 0;
  static const char *const rel[] = {"../nvvm/libdevice/" LIBDEVICE_FILE,
                                    "../libdevice/" LIBDEVICE_FILE};
  size_t dir_len = (size_t)(strrchr(info.path, '/') - info.path);
  int found = 0;
  for (size_t i = 0; !found && i < CC_ARRAY_LEN(rel); i++) {
    cc_sb p = {0};
    cc_sb_printf(&p, "%.*s/%s", (int)dir_len, info.path, rel[i]);
    found = p.failed ? -1 : try_path(cc_sb_text(&p), "beside libNVVM", why, tried, out);
    cc_sb_free(&p);
  }
  return found;
}

/* The search after the overrides: each toolkit root, then beside libNVVM. */
static int search(const char *why, cc_sb *tried, cc_libdevice *out) {
  const char *roots[3];
  int nroots = cc_toolkit_roots(roots), found = 0;
  if (nroots == 0) cc_sb_puts(tried, "\n  no toolkit root (CUDA_HOME, CUDA_PATH, /usr/local/cuda)");
  for (int r = 0; !found && r < nroots; r++) {
    cc_sb p = {0};
    cc_sb_printf(&p, "%s/nvvm/libdevice/%s", roots[r], LIBDEVICE_FILE);
    found = p.failed ? -1 : try_path(cc_sb_text(&p), NULL, why, tried, out);
    cc_sb_free(&p);
  }
  return found ? found : try_beside_nvvm(why, tried, out);
}

cucore_status cc_libdevice_get(const char *override, const char *need, cc_libdevice *out) {
  memset(out, 0, sizeof *out);
  const char *env = getenv("CUCORE_LIBDEVICE");
  cc_sb tried = {0};
  int found;
  if (override)
    found = try_path(override, "the libdevice option", need, &tried, out);
  else if (env && env[0])
    found = try_path(env, "CUCORE_LIBDEVICE", need, &tried, out);
  else
    found = search(need, &tried, out);
  cucore_status st = CUCORE_OK;
  if (found < 0)
    st = cucore_last_status();
  else if (tried.failed)
    st = CUCORE_HOST_OUT_OF_MEMORY;
  else if (!found)
    st = cc_fail(CUCORE_NOT_FOUND,
                 "%s, but libdevice was not found; looked at:%s\nSet the libdevice option (or "
                 "CUCORE_LIBDEVICE) to the file " LIBDEVICE_FILE
                 ", or CUDA_HOME to a toolkit that has nvvm/libdevice",
                 need, cc_sb_text(&tried));
  cc_sb_free(&tried);
  return st;
}
