/*
 * store_lock.c -- the advisory locks that let tunes on one store share the work: one byte of
 * `STORE.lock` per configuration group (the configurations that share one compile), at an
 * offset from the group's number and the store's key, problem and device, locked with
 * fcntl(2). Open file description locks (F_OFD_SETLK, Linux 3.15) where the kernel has them:
 * they belong to the descriptor, so two stores of one process exclude each other and closing
 * some other descriptor of the file drops nothing; else process locks (F_SETLK). Either dies
 * with its holder (kill -9 included) and with the descriptor, which the store closes.
 */
#define _GNU_SOURCE /* F_OFD_SETLK */
#include "tune/store_lock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* FNV-1a over s, folded into h. */
static uint64_t fnv(uint64_t h, const char *s) {
  for (; s && *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
  return (h ^ 0xff) * 0x100000001b3ull; /* a separator: ("ab","c") is not ("a","bc") */
}

void cc_tlock_init(cc_tlock *l, const char *key, const char *problem, const char *device) {
  memset(l, 0, sizeof *l);
  l->fd = -1;
  l->salt = fnv(fnv(fnv(0xcbf29ce484222325ull, key), problem), device);
}

/* The byte of `group`: splitmix64 of the group and the salt, 40 bits (any file system takes
 * a lock there; two groups meet at one byte once in 10^12, and then only wait for each
 * other). */
static off_t byte_of(const cc_tlock *l, uint64_t group) {
  uint64_t z = group ^ l->salt;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return (off_t)(z >> 24);
}

static cucore_status open_lock_file(cc_tlock *l, const char *store_path) {
  if (l->fd >= 0) return CUCORE_OK;
  cc_sb p = {0};
  cc_sb_printf(&p, "%s.lock", store_path);
  if (p.failed) return CUCORE_HOST_OUT_OF_MEMORY;
  if (!l->err) {
    l->fd = open(cc_sb_text(&p), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (l->fd < 0) l->err = errno;
  }
  cucore_status st = l->fd >= 0 ? CUCORE_OK
                                : cc_fail(CUCORE_IO_ERROR,
                                          "the tune store `%s`: cannot make its lock file `%s`: %s",
                                          store_path, cc_sb_text(&p), strerror(l->err));
  cc_sb_free(&p);
  return st;
}

/* fcntl on byte b: the OFD command where the kernel has it, else the process one. */
static int lock_byte(cc_tlock *l, off_t b, short type, int wait) {
  struct flock f;
  for (;;) {
    memset(&f, 0, sizeof f);
    f.l_type = type, f.l_whence = SEEK_SET, f.l_start = b, f.l_len = 1;
#ifdef F_OFD_SETLK
    if (!l->process_locks) {
      if (fcntl(l->fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &f) == 0) return 0;
      if (errno == EINVAL) {
        l->process_locks = 1; /* a kernel before 3.15 */
        continue;
      }
      if (errno == EINTR) continue;
      return -1;
    }
#endif
    if (fcntl(l->fd, wait ? F_SETLKW : F_SETLK, &f) == 0) return 0;
    if (errno != EINTR) return -1;
  }
}

cucore_status cc_tlock_take(cc_tlock *l, const char *store_path, uint64_t group, int wait,
                            int *locked) {
  *locked = 0;
  cucore_status st = open_lock_file(l, store_path);
  if (st != CUCORE_OK) return st;
  if (lock_byte(l, byte_of(l, group), F_WRLCK, wait) == 0) {
    *locked = 1;
    return CUCORE_OK;
  }
  if (!wait && (errno == EAGAIN || errno == EACCES)) return CUCORE_OK; /* another holds it */
  return cc_fail(CUCORE_IO_ERROR, "the tune store `%s`: cannot lock its group %llx: %s", store_path,
                 (unsigned long long)group, strerror(errno));
}

cucore_status cc_tlock_release(cc_tlock *l, const char *store_path, uint64_t group) {
  if (l->fd < 0 || lock_byte(l, byte_of(l, group), F_UNLCK, 0) == 0) return CUCORE_OK;
  return cc_fail(CUCORE_IO_ERROR, "the tune store `%s`: cannot unlock its group %llx: %s",
                 store_path, (unsigned long long)group, strerror(errno));
}

void cc_tlock_close(cc_tlock *l) {
  if (l->fd >= 0) close(l->fd); /* every lock of the descriptor goes with it */
  l->fd = -1;
}
