/*
 * cache_config.c -- the compile cache's configuration checked, so that none of it is ignored
 * without a word: the directory (whoever chose it) must be one this process can write or
 * create, and CUCORE_CACHE_MAX_BYTES and CUCORE_CACHE_DISABLE must be well-formed. Nothing
 * here changes the disk or prints; cucore_cache_config_problem hands the text to the caller.
 */
#define _GNU_SOURCE
#include "compile/cache.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Appends "; " and the formatted text to msg. */
static void add(char *msg, size_t cap, const char *fmt, ...) CC_PRINTF(3, 4);
static void add(char *msg, size_t cap, const char *fmt, ...) {
  size_t used = strlen(msg);
  if (used && used + 2 < cap) {
    memcpy(msg + used, "; ", 3);
    used += 2;
  }
  if (used + 1 >= cap) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg + used, cap - used, fmt, ap);
  va_end(ap);
}

static void check_max_bytes(char *msg, size_t cap) {
  const char *m = getenv("CUCORE_CACHE_MAX_BYTES");
  uint64_t n = 0;
  if (!m || !m[0]) return;
  int rc = cc_cache_parse_size(m, &n);
  if (rc == -2)
    add(msg, cap, "CUCORE_CACHE_MAX_BYTES=%.64s does not fit in 64 bits; the default 1G is used",
        m);
  else if (rc != 0 || n == 0)
    add(msg, cap,
        "CUCORE_CACHE_MAX_BYTES=%.64s is not a size; expected bytes, or a number with "
        "a K, M or G suffix (e.g. 512M); the default 1G is used",
        m);
  else if (n < CC_CACHE_MIN_MAX_BYTES)
    add(msg, cap,
        "CUCORE_CACHE_MAX_BYTES=%.64s is below the minimum of %llu bytes, which is "
        "used instead",
        m, CC_CACHE_MIN_MAX_BYTES);
}

static void check_disable(char *msg, size_t cap) {
  const char *off = getenv("CUCORE_CACHE_DISABLE");
  if (off && off[0] && strcmp(off, "0") != 0 && strcmp(off, "1") != 0)
    add(msg, cap,
        "CUCORE_CACHE_DISABLE=%.64s is neither 1 (off) nor 0 (on); taken as 1, so the "
        "cache is off",
        off);
}

/* Why `dir` cannot hold the cache ("" when it can): it must be a directory this process may
 * write, or one it may create (the nearest existing ancestor is a directory it may write). */
static void dir_unusable(const char *dir, char *why, size_t cap) {
  struct stat st;
  why[0] = '\0';
  if (stat(dir, &st) == 0) {
    if (!S_ISDIR(st.st_mode))
      snprintf(why, cap, "it is not a directory (%s)",
               S_ISREG(st.st_mode) ? "a regular file" : "a special file");
    else if (faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS) != 0)
      snprintf(why, cap, "the directory cannot be written: %s", strerror(errno));
    return;
  }
  if (errno == ENOTDIR) {
    snprintf(why, cap, "it cannot be created: a part of its path is not a directory");
    return;
  }
  if (errno != ENOENT) {
    snprintf(why, cap, "it cannot be used: %s", strerror(errno));
    return;
  }
  char up[PATH_MAX];
  snprintf(up, sizeof up, "%s", dir);
  for (;;) {
    char *slash = strrchr(up, '/');
    while (slash && slash > up && slash[1] == '\0') { /* trailing slashes */
      *slash = '\0';
      slash = strrchr(up, '/');
    }
    if (!slash)
      snprintf(up, sizeof up, ".");
    else if (slash == up)
      up[1] = '\0';
    else
      *slash = '\0';
    if (stat(up, &st) == 0) break;
    if (errno != ENOENT || strcmp(up, "/") == 0 || strcmp(up, ".") == 0) {
      snprintf(why, cap, "it cannot be created: `%s`: %s", up, strerror(errno));
      return;
    }
  }
  if (!S_ISDIR(st.st_mode))
    snprintf(why, cap, "it cannot be created: `%s` is not a directory", up);
  else if (faccessat(AT_FDCWD, up, W_OK | X_OK, AT_EACCESS) != 0)
    snprintf(why, cap, "it cannot be created: `%s` cannot be written: %s", up, strerror(errno));
}

static void check_dir(const cc_cache_settings *s, char *msg, size_t cap) {
  if (!s->dir[0]) {
    add(msg, cap,
        "no cache directory: neither CUCORE_CACHE_DIR, XDG_CACHE_HOME nor HOME is "
        "set; only the in-process layer is used");
    return;
  }
  char why[PATH_MAX + 128];
  dir_unusable(s->dir, why, sizeof why);
  if (!why[0]) return;
  const char *from = s->dir_from ? s->dir_from : "the defaults";
  const char *val = getenv(from);
  if (strcmp(from, "cucore_cache_set_dir") == 0)
    add(msg, cap, "cucore_cache_set_dir(\"%s\"): %s; compiles go on without the disk cache", s->dir,
        why);
  else if (strcmp(from, "CUCORE_CACHE_DIR") == 0 || !val)
    add(msg, cap, "%s%s%s: %s; compiles go on without the disk cache",
        val ? from : "the cache directory ", val ? "=" : "", s->dir, why);
  else
    add(msg, cap, "%s=%s (cache directory %s): %s; compiles go on without the disk cache", from,
        val, s->dir, why);
}

int cc_cache_config_check(char *msg, size_t cap) {
  msg[0] = '\0';
  cc_cache_settings s;
  cc_cache_settings_get(&s);
  check_disable(msg, cap);
  check_max_bytes(msg, cap);
  if (s.enabled) check_dir(&s, msg, cap);
  return msg[0] != '\0';
}
