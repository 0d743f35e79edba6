/*
 * cache_backend.c -- the compile cache's back end: a store a program plugs in
 * (cucore_cache_set_backend), asked after the directory and written after a compile. What it
 * hands back is checked exactly as a disk entry is (cc_cache_entry_decode): it is never
 * trusted. Its failures become notes; they never fail a compile.
 *
 * The installed back end is a copy under a read-write lock: each call reads it under the read
 * lock, so cucore_cache_set_backend (the write lock) waits for calls in flight to the old one
 * to return before the caller may free its user data.
 */
#define _GNU_SOURCE
#include "compile/cache.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_rwlock_t backend_lock = PTHREAD_RWLOCK_INITIALIZER;
static cucore_cache_backend backend; /* installed when `installed` */
static int installed;

cucore_status cucore_cache_set_backend(const cucore_cache_backend *b) {
  cc_begin();
  if (b && !b->get && !b->put)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "cucore_cache_set_backend: the back end has neither get nor put; give at "
                   "least one, or NULL to remove the back end");
  if (b && (b->flags & ~CUCORE_CACHE_BACKEND_ONLY))
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "cucore_cache_set_backend: unknown flags 0x%x; the one flag is "
                   "CUCORE_CACHE_BACKEND_ONLY (0x%x)",
                   b->flags & ~CUCORE_CACHE_BACKEND_ONLY, CUCORE_CACHE_BACKEND_ONLY);
  pthread_rwlock_wrlock(&backend_lock);
  memset(&backend, 0, sizeof backend);
  if (b) backend = *b;
  installed = b != NULL;
  pthread_rwlock_unlock(&backend_lock);
  return CUCORE_OK;
}

int cc_cache_backend_installed(unsigned *flags) {
  pthread_rwlock_rdlock(&backend_lock);
  int on = installed;
  *flags = on ? backend.flags : 0;
  pthread_rwlock_unlock(&backend_lock);
  return on;
}

/* What a negative return means, for a note. */
static void failure_text(int rc, char *out, size_t cap) {
  if (rc < 0 && rc > -4096)
    snprintf(out, cap, "%d (%s)", rc, strerror(-rc));
  else
    snprintf(out, cap, "%d", rc);
}

/* Asks remove() to drop a damaged entry; says what became of it. Called under the read lock. */
static const char *drop_damaged(const char *hex) {
  if (!backend.remove) return "the back end has no remove, so it keeps it";
  return backend.remove(backend.user, hex) == 0 ? "the back end removed it"
                                                : "the back end's remove failed";
}

/* Checks `size` bytes the back end gave for `key`; on success writes them to `disk` too. */
static int take_entry(const unsigned char key[CC_CACHE_KEY_BYTES], const char *hex,
                      const void *data, size_t size, const cc_cache_settings *disk,
                      cc_cache_record *out, char *note, size_t note_cap) {
  char why[512] = "";
  if (!data && size)
    snprintf(why, sizeof why, "get returned 1 with %zu bytes at NULL", size);
  else if (cc_cache_entry_decode(data, size, key, out, why, sizeof why) == 0) {
    if (disk && disk->dir[0])
      (void)cc_cache_disk_store_entry(disk, key, data, size, note, note_cap);
    return 1;
  }
  snprintf(note, note_cap,
           "the cache back end's entry for %s was refused (%s); %s, and the "
           "source was compiled",
           hex, why, drop_damaged(hex));
  cc_cache_count(NULL, CC_EV_BACKEND_ERROR, 1);
  return 0;
}

int cc_cache_backend_load(const unsigned char key[CC_CACHE_KEY_BYTES],
                          const cc_cache_settings *disk, cc_cache_record *out, char *note,
                          size_t note_cap) {
  memset(out, 0, sizeof *out);
  char hex[2 * CC_CACHE_KEY_BYTES + 1];
  cc_hex(key, CC_CACHE_KEY_BYTES, hex);
  pthread_rwlock_rdlock(&backend_lock);
  int hit = 0;
  if (installed && backend.get) {
    const void *data = NULL;
    size_t size = 0;
    int rc = backend.get(backend.user, hex, &data, &size);
    if (rc == 1) {
      hit = take_entry(key, hex, data, size, disk, out, note, note_cap);
      if (backend.release) backend.release(backend.user, data, size);
    } else if (rc != 0) {
      char what[128];
      failure_text(rc, what, sizeof what);
      snprintf(note, note_cap,
               "the cache back end's get of %s failed: it returned %s (expected 1, 0 or a "
               "negative failure); the source was compiled",
               hex, what);
      cc_cache_count(NULL, CC_EV_BACKEND_ERROR, 1);
    }
  }
  pthread_rwlock_unlock(&backend_lock);
  if (hit) cc_cache_count(NULL, CC_EV_BACKEND_HIT, 1);
  return hit;
}

int cc_cache_backend_store(const unsigned char key[CC_CACHE_KEY_BYTES], const unsigned char *entry,
                           size_t size, char *note, size_t note_cap) {
  char hex[2 * CC_CACHE_KEY_BYTES + 1];
  cc_hex(key, CC_CACHE_KEY_BYTES, hex);
  pthread_rwlock_rdlock(&backend_lock);
  int rc = 0, asked = installed && backend.put;
  if (asked) rc = backend.put(backend.user, hex, entry, size);
  pthread_rwlock_unlock(&backend_lock);
  if (!asked) return 0;
  if (rc != 0) {
    char what[128];
    failure_text(rc, what, sizeof what);
    snprintf(note, note_cap,
             "the cache back end's put of %s failed: it returned %s; the compile result is "
             "fine but the back end does not have it",
             hex, what);
    cc_cache_count(NULL, CC_EV_BACKEND_ERROR, 1);
    return 0;
  }
  cc_cache_count(NULL, CC_EV_BACKEND_STORE, 1);
  return 1;
}
