/*
 * error.c -- status names and texts (from the one table in cucore.h) and the thread-local
 * message. Driver results become statuses in loader/driver_errors.c.
 */
#include "base/base.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CC_MESSAGE_MAX 2048

/* A message that fits CC_MESSAGE_MAX stays in the thread's array; a longer one (a restriction
 * or a value quoted whole) goes to `long_message`, grown as needed: no message is ever cut.
 * Both are on the heap, made at the thread's first failure and freed when the thread ends, so
 * that the library's thread-local block stays small: a program that loads cucore after it
 * started (Python's ctypes, an extension module) finds room for it in the static TLS glibc
 * keeps for late loads. */
typedef struct cc_error_heap {
  char message[CC_MESSAGE_MAX];
  char *long_message; /* malloc'd; in use when the state's long_used */
} cc_error_heap;

typedef struct cc_error_state {
  cucore_status status;
  cc_error_heap *heap; /* NULL until the thread's first failure */
  int long_used;
  int no_memory; /* the heap could not be made: the message is lost, and said to be */
} cc_error_state;

static _Thread_local cc_error_state tls_error;
static pthread_key_t heap_key;
static pthread_once_t heap_once = PTHREAD_ONCE_INIT;

static void free_heap(void *p) {
  cc_error_heap *h = p;
  if (!h) return;
  free(h->long_message);
  free(h);
}
static void make_heap_key(void) { (void)pthread_key_create(&heap_key, free_heap); }

/* The thread's message storage, made on first use (NULL when there is no memory). */
static cc_error_heap *heap(void) {
  if (CC_LIKELY(tls_error.heap != NULL)) return tls_error.heap;
  cc_error_heap *h = calloc(1, sizeof *h);
  if (!h) return NULL;
  pthread_once(&heap_once, make_heap_key);
  (void)pthread_setspecific(heap_key, h);
  tls_error.heap = h;
  return h;
}

/* Set when a message was kept since the last cc_begin. Every public call clears it, so it is
 * kept apart from the message, in the initial-exec TLS model: a plain store, no
 * __tls_get_addr call on the launch path. */
CC_TLS_IE _Thread_local int cc_tls_kept;
#define tls_kept cc_tls_kept

/* The message of fmt/ap kept: in the array when it fits, else in a long buffer of its own. It
 * is formatted into new storage first, so an argument may be the message kept before (as
 * callers that add context to an earlier failure do). */
static void keep_message(const char *fmt, va_list ap) {
  va_list again;
  va_copy(again, ap);
  char buf[CC_MESSAGE_MAX];
  int n = vsnprintf(buf, sizeof buf, fmt, ap);
  if (n < 0) n = 0, buf[0] = 0;
  cc_error_heap *h = heap();
  tls_error.no_memory = h == NULL;
  if (!h) {
    va_end(again);
    return;
  }
  if ((size_t)n < sizeof buf) {
    memcpy(h->message, buf, (size_t)n + 1);
    tls_error.long_used = 0;
  } else {
    char *p = malloc((size_t)n + 1);
    if (p) {
      vsnprintf(p, (size_t)n + 1, fmt, again);
      free(h->long_message);
      h->long_message = p;
      tls_error.long_used = 1;
    } else { /* out of memory: the cut is said, never silent */
      static const char mark[] = " ... (message cut: no memory for its whole length)";
      memcpy(buf + sizeof buf - sizeof mark, mark, sizeof mark);
      memcpy(h->message, buf, sizeof buf);
      tls_error.long_used = 0;
    }
  }
  va_end(again);
}

const char *cucore_status_name(cucore_status status) {
  switch (CUCORE_CODE(status)) {
#define CC_XX(name, value, text) \
  case value: return "CUCORE_" #name;
    CUCORE_STATUS_MAP(CC_XX)
#undef CC_XX
  default: return "CUCORE_UNKNOWN_STATUS";
  }
}

const char *cucore_status_text(cucore_status status) {
  switch (CUCORE_CODE(status)) {
#define CC_XX(name, value, text) \
  case value: return text;
    CUCORE_STATUS_MAP(CC_XX)
#undef CC_XX
  default: return "unknown status";
  }
}

cucore_source cucore_status_source(cucore_status status) {
  return (cucore_source)(((uint32_t)status >> 8) & 0xfu);
}

int cucore_status_native(cucore_status status) { return (int)((uint32_t)status >> 12); }

const char *cucore_last_error(void) {
  if (tls_error.no_memory) return "(no memory to keep the message of this failure)";
  if (!tls_error.heap) return "";
  return tls_error.long_used ? tls_error.heap->long_message : tls_error.heap->message;
}

cucore_status cucore_last_status(void) { return tls_error.status; }

cucore_status cucore_clear_error(void) {
  tls_error.status = CUCORE_OK;
  if (tls_error.heap) tls_error.heap->message[0] = '\0';
  tls_error.long_used = 0;
  tls_error.no_memory = 0;
  tls_kept = 0;
  return CUCORE_OK;
}

static cucore_status failv(cucore_status st, const char *fmt, va_list ap) {
  if (tls_kept) return st; /* the first error of a failing sequence is the one kept */
  tls_kept = 1;
  tls_error.status = st;
  keep_message(fmt, ap);
  return st;
}

cucore_status cc_fail(cucore_status st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  failv(st, fmt, ap);
  va_end(ap);
  return st;
}

static cucore_status restate(cucore_status st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  keep_message(fmt, ap);
  va_end(ap);
  return st;
}

cucore_status cc_fail_restate(cucore_status st, const char *msg) {
  tls_kept = 1;
  tls_error.status = st;
  if (msg == cucore_last_error()) return st; /* the message kept already */
  return restate(st, "%s", msg);
}

int cc_message_kept(void) { return tls_kept; }
