/* backend_support.h -- an in-memory compile-cache back end for the tests
 * (test_cache_backend*.c): entries by key under a mutex, counts of every call, and switches
 * that make it fail or hand back damaged entries. */
#ifndef CUCORE_TEST_BACKEND_SUPPORT_H
#define CUCORE_TEST_BACKEND_SUPPORT_H

#include "cache_support.h"

#include <errno.h>
#include <pthread.h>

#define MEMSTORE_MAX 64

/* How get() answers. */
typedef enum memstore_mode {
  MS_NORMAL,    /* the stored entry, or none */
  MS_GET_FAILS, /* -EIO */
  MS_GET_WEIRD, /* returns 7 */
  MS_NULL_DATA, /* 1 with data NULL and 5 bytes */
} memstore_mode;

typedef struct memstore {
  pthread_mutex_t lock;
  char keys[MEMSTORE_MAX][65];
  unsigned char *data[MEMSTORE_MAX];
  size_t size[MEMSTORE_MAX];
  int n;
  memstore_mode mode;
  int put_fails; /* put returns -ENOSPC */
  int gets, hits, puts, removes, releases;
  int outstanding; /* entries handed out and not yet released */
} memstore;

static inline int memstore_find(memstore *m, const char *key) {
  for (int i = 0; i < m->n; i++)
    if (strcmp(m->keys[i], key) == 0) return i;
  return -1;
}

/* Stores a copy of `size` bytes as `key`'s entry (the tests' way to plant one too). */
static inline int memstore_set(memstore *m, const char *key, const void *data, size_t size) {
  int i = memstore_find(m, key);
  if (i < 0) {
    if (m->n == MEMSTORE_MAX) return -ENOSPC;
    i = m->n++;
    snprintf(m->keys[i], sizeof m->keys[i], "%s", key);
    m->data[i] = NULL;
  }
  unsigned char *copy = malloc(size ? size : 1);
  if (!copy) return -ENOMEM;
  if (size) memcpy(copy, data, size);
  free(m->data[i]);
  m->data[i] = copy;
  m->size[i] = size;
  return 0;
}

static inline int memstore_get(void *user, const char *key, const void **data, size_t *size) {
  memstore *m = user;
  pthread_mutex_lock(&m->lock);
  m->gets++;
  int rc = 0;
  if (m->mode == MS_GET_FAILS) {
    rc = -EIO;
  } else if (m->mode == MS_GET_WEIRD) {
    rc = 7;
  } else if (m->mode == MS_NULL_DATA) {
    *data = NULL;
    *size = 5;
    rc = 1;
  } else {
    int i = memstore_find(m, key);
    if (i >= 0) {
      /* A copy the caller releases: the entry may be replaced meanwhile by another thread. */
      unsigned char *copy = malloc(m->size[i] ? m->size[i] : 1);
      if (!copy) {
        rc = -ENOMEM;
      } else {
        memcpy(copy, m->data[i], m->size[i]);
        *data = copy;
        *size = m->size[i];
        m->hits++;
        m->outstanding++;
        rc = 1;
      }
    }
  }
  pthread_mutex_unlock(&m->lock);
  return rc;
}

static inline void memstore_release(void *user, const void *data, size_t size) {
  (void)size;
  memstore *m = user;
  pthread_mutex_lock(&m->lock);
  m->releases++;
  if (data) m->outstanding--;
  pthread_mutex_unlock(&m->lock);
  free((void *)data);
}

static inline int memstore_put(void *user, const char *key, const void *data, size_t size) {
  memstore *m = user;
  pthread_mutex_lock(&m->lock);
  m->puts++;
  int rc = m->put_fails ? -ENOSPC : memstore_set(m, key, data, size);
  pthread_mutex_unlock(&m->lock);
  return rc;
}

static inline int memstore_remove(void *user, const char *key) {
  memstore *m = user;
  pthread_mutex_lock(&m->lock);
  m->removes++;
  int i = memstore_find(m, key);
  if (i >= 0) {
    free(m->data[i]);
    m->n--;
    if (i != m->n) {
      memcpy(m->keys[i], m->keys[m->n], sizeof m->keys[i]);
      m->data[i] = m->data[m->n];
      m->size[i] = m->size[m->n];
    }
  }
  pthread_mutex_unlock(&m->lock);
  return 0;
}

static inline void memstore_init(memstore *m) {
  memset(m, 0, sizeof *m);
  pthread_mutex_init(&m->lock, NULL);
}

static inline void memstore_free(memstore *m) {
  for (int i = 0; i < m->n; i++) free(m->data[i]);
  pthread_mutex_destroy(&m->lock);
  memset(m, 0, sizeof *m);
}

/* The back end over `m`, with every callback. */
static inline cucore_cache_backend memstore_backend(memstore *m, unsigned flags) {
  cucore_cache_backend b = {m,    memstore_get, memstore_release, memstore_put, memstore_remove,
                            flags};
  return b;
}

#endif
