/*
 * handle.c -- the cold half of misuse detection (base/handle.h): the message for a handle
 * that is not live, and the quarantine of destroyed handles' shells.
 */
#include "base/handle.h"

#include <pthread.h>
#include <stdlib.h>

/* Shells held before the oldest is freed. */
#define CC_QUARANTINE_SIZE 256

static pthread_mutex_t q_lock = PTHREAD_MUTEX_INITIALIZER;
static void *q_ring[CC_QUARANTINE_SIZE];
static unsigned q_next;  /* the slot the next shell goes to (the oldest when full) */
static int q_registered; /* drain_at_exit is registered with atexit */
static int q_closed;     /* drained at exit: shells are freed at once from now */

typedef struct kind_name {
  uint32_t magic;
  const char *name;
} kind_name;

#define CC_HANDLE_KIND_ROW(kind, a, b, c, d, name) {CC_FOURCC(a, b, c, d), name},
static const kind_name kinds[] = {CC_HANDLE_KINDS(CC_HANDLE_KIND_ROW)};
#undef CC_HANDLE_KIND_ROW

/* The type name of a live (dead = 0) or destroyed (dead = 1) magic word, or NULL. */
static const char *kind_of(uint32_t magic, int dead) {
  for (size_t i = 0; i < CC_ARRAY_LEN(kinds); i++)
    if ((dead ? ~kinds[i].magic : kinds[i].magic) == magic) return kinds[i].name;
  return NULL;
}

CC_COLD cucore_status cc_handle_fail(const void *h, cc_kind kind, const char *fn,
                                     const char *what) {
  if (!h) return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: `%s` is NULL", fn, what);
  const char *want = kind_of((uint32_t)kind, 0);
  uint32_t magic = ((const cc_handle *)h)->magic;
  const char *live = kind_of(magic, 0), *dead = kind_of(magic, 1);
  if (dead && magic == ~(uint32_t)kind)
    return cc_fail(CUCORE_MISUSE,
                   "%s: `%s` is a destroyed %s (used after destroy, or destroyed "
                   "twice)",
                   fn, what, want);
  if (dead)
    return cc_fail(CUCORE_MISUSE, "%s: `%s` is a destroyed %s, and a %s was expected", fn, what,
                   dead, want);
  if (live) return cc_fail(CUCORE_MISUSE, "%s: `%s` is a %s, not a %s", fn, what, live, want);
  return cc_fail(CUCORE_MISUSE,
                 "%s: `%s` is not a %s (magic 0x%08x): a pointer cucore did not "
                 "make, or one destroyed long ago",
                 fn, what, want, (unsigned)magic);
}

/* Frees every shell held, at exit (LeakSanitizer and valgrind find nothing left); a handle
 * destroyed after this is freed at once. */
static void drain_at_exit(void) {
  pthread_mutex_lock(&q_lock);
  for (unsigned i = 0; i < CC_QUARANTINE_SIZE; i++) {
    free(q_ring[i]);
    q_ring[i] = NULL;
  }
  q_next = 0;
  q_closed = 1;
  pthread_mutex_unlock(&q_lock);
}

void cc_handle_retire(void *h, cc_kind kind) {
  cc_handle_kill(h, kind);
  void *oldest = h;
  pthread_mutex_lock(&q_lock);
  if (!q_closed) {
    if (!q_registered) q_registered = atexit(drain_at_exit) == 0;
    oldest = q_ring[q_next];
    q_ring[q_next] = h;
    q_next = (q_next + 1) % CC_QUARANTINE_SIZE;
  }
  pthread_mutex_unlock(&q_lock);
  free(oldest);
}
