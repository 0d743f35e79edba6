/* cache_api.c -- the compile cache's public API (cucore.h, section "compile cache"): settings,
 * statistics, clearing. */
#define _GNU_SOURCE
#include "compile/cache.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *cucore_cache_result_name(cucore_cache_result result) {
  switch (result) {
  case CUCORE_CACHE_NOT_USED: return "not_used";
  case CUCORE_CACHE_DISABLED: return "disabled";
  case CUCORE_CACHE_UNCACHEABLE: return "uncacheable";
  case CUCORE_CACHE_MISS: return "miss";
  case CUCORE_CACHE_HIT_DISK: return "hit_disk";
  case CUCORE_CACHE_HIT_MEMORY: return "hit_memory";
  case CUCORE_CACHE_HIT_BACKEND: return "hit_backend";
  }
  return "unknown";
}

cucore_status cucore_cache_get_stats(cucore_cache_stats *out) {
  cc_begin();
  CC_CHECK_ARG(out, "cucore_cache_get_stats", "out");
  memset(out, 0, sizeof *out);
  cc_cache_settings s;
  cc_cache_settings_get(&s);
  out->enabled = s.enabled;
  snprintf(out->dir, sizeof out->dir, "%s", s.dir);
  out->max_bytes = s.max_bytes;
  cc_cache_disk_usage(s.dir, &out->entries, &out->bytes);
  cc_cache_counters_process(&out->process);
  cc_cache_counters_dir(s.dir, &out->total);
  return CUCORE_OK;
}

cucore_status cucore_cache_set_dir(const char *dir) {
  cc_begin();
  if (dir && !dir[0])
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "cucore_cache_set_dir: the directory is \"\"; give a path, or NULL to use "
                   "the environment's (CUCORE_CACHE_DIR, XDG_CACHE_HOME, HOME)");
  if (dir && strlen(dir) >= PATH_MAX - 80)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "cucore_cache_set_dir: the path is %zu bytes; at most %d fit", strlen(dir),
                   PATH_MAX - 81);
  if (dir && dir[0] != '/') { /* relative to the working directory of this call */
    char cwd[PATH_MAX], abs[PATH_MAX + PATH_MAX];
    if (!getcwd(cwd, sizeof cwd))
      return cc_fail(cc_status(CUCORE_IO_ERROR, CUCORE_SOURCE_ERRNO, errno),
                     "cucore_cache_set_dir: `%s` is relative and the working directory cannot "
                     "be read: %s",
                     dir, strerror(errno));
    snprintf(abs, sizeof abs, "%s/%s", cwd, dir);
    return cc_cache_settings_set_dir(abs);
  }
  return cc_cache_settings_set_dir(dir);
}

cucore_status cucore_cache_set_enabled(int enabled) {
  cc_begin();
  if (enabled < -1 || enabled > 1)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "cucore_cache_set_enabled: %d; expected 1 (on), 0 (off) or -1 (the default)",
                   enabled);
  cc_cache_settings_set_enabled(enabled);
  return CUCORE_OK;
}

cucore_status cucore_cache_set_max_bytes(uint64_t max_bytes) {
  cc_begin();
  if (max_bytes && max_bytes < CC_CACHE_MIN_MAX_BYTES)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "cucore_cache_set_max_bytes: %llu bytes is below the minimum of %llu (or 0 "
                   "for the default)",
                   (unsigned long long)max_bytes, CC_CACHE_MIN_MAX_BYTES);
  cc_cache_settings_set_max_bytes(max_bytes);
  return CUCORE_OK;
}

cucore_status cucore_cache_clear(uint64_t *entries, uint64_t *bytes) {
  cc_begin();
  if (entries) *entries = 0;
  if (bytes) *bytes = 0;
  cc_cache_memory_clear();
  cc_cache_settings s;
  cc_cache_settings_get(&s);
  if (!s.dir[0]) return CUCORE_OK;
  cc_cache_clear_report r;
  int rc = cc_cache_disk_clear(s.dir, &r);
  if (entries) *entries = r.entries;
  if (bytes) *bytes = r.bytes;
  if (rc == -2) return cucore_last_status(); /* out of memory, as cc_grow recorded */
  if (rc != 0 && !r.failed)
    return cc_fail(cc_status(CUCORE_IO_ERROR, CUCORE_SOURCE_ERRNO, errno),
                   "cucore_cache_clear: cannot read the cache directory `%s`: %s", s.dir,
                   strerror(errno));
  if (rc != 0)
    return cc_fail(cc_status(CUCORE_IO_ERROR, CUCORE_SOURCE_ERRNO, r.first_errno),
                   "cucore_cache_clear: removed %llu entries from `%s`, but %llu file%s could "
                   "not be removed or read; the first: `%s`: %s",
                   (unsigned long long)r.entries, s.dir, (unsigned long long)r.failed,
                   r.failed == 1 ? "" : "s", r.first, strerror(r.first_errno));
  return CUCORE_OK;
}

cucore_status cucore_cache_config_problem(char *msg, size_t cap, int *problem) {
  cc_begin();
  CC_CHECK_ARG(problem, "cucore_cache_config_problem", "problem");
  *problem = 0;
  if (!msg && cap)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "cucore_cache_config_problem: `msg` is NULL with cap %zu; give a buffer, or "
                   "cap 0 to ask only whether there is a problem",
                   cap);
  char text[2 * PATH_MAX];
  *problem = cc_cache_config_check(text, sizeof text);
  if (cap) snprintf(msg, cap, "%s", text);
  return CUCORE_OK;
}
