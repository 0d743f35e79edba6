/*
 * tune/store_lock.h -- the advisory locks of a tune store's configuration groups
 * (store_lock.c), for the store (store.c): cucore_tune_store_lock() and _unlock().
 */
#ifndef CUCORE_TUNE_STORE_LOCK_H
#define CUCORE_TUNE_STORE_LOCK_H

#include "base/base.h"

#include <stdint.h>

typedef struct cc_tlock {
  int fd;            /* STORE.lock, opened at the first lock (-1: not yet) */
  int err;           /* the errno that stopped it being made (0: none yet) */
  int process_locks; /* 1: the kernel has no open file description locks */
  uint64_t salt;     /* from the key, problem and device: another tune's groups elsewhere */
} cc_tlock;

void cc_tlock_init(cc_tlock *l, const char *key, const char *problem, const char *device);
/* Takes group's byte (waiting when `wait`): *locked 1, or 0 when another holds it.
 * CUCORE_IO_ERROR when the lock file cannot be made or locked (named). */
cucore_status cc_tlock_take(cc_tlock *l, const char *store_path, uint64_t group, int wait,
                            int *locked);
cucore_status cc_tlock_release(cc_tlock *l, const char *store_path, uint64_t group);
/* Every lock let go. */
void cc_tlock_close(cc_tlock *l);

#endif /* CUCORE_TUNE_STORE_LOCK_H */
