/*
 * driver_log.c -- the driver's own log (CUDA 12.9+, cuLogsRegisterCallback): one callback per
 * process, registered when the driver loads. Each message is filtered (base/escape.c) and kept
 * three ways: as the calling thread's newest message (cc_fail_cu appends it to the failure it
 * explains), in a ring of the process's newest messages (cucore_driver_log_read), and handed to
 * the user's forward callback. The driver calls back on the thread whose call it logs, during
 * that call; a thread's message older than a second is not taken for a failure (it belongs to
 * a call that failed earlier and was absorbed). The public calls over this state are in
 * driver_log_api.c, above the driver's loading and its errors.
 */
#define _GNU_SOURCE
#include "loader/loader.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define LOG_MAX CUCORE_DRIVER_LOG_MESSAGE_MAX
#define LOG_KEEP CUCORE_DRIVER_LOG_KEEP
#define FRESH_NS 1000000000LL /* a thread's message explains a failure within this time */

typedef struct log_entry {
  cucore_driver_log_level level;
  char text[LOG_MAX];
} log_entry;

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static log_entry ring[LOG_KEEP];
static unsigned long long ring_total; /* messages written; ring[i % LOG_KEEP] */
static cucore_driver_log_fn forward_fn;
static void *forward_user;
static atomic_int registered;    /* 1 once the callback is registered */
static CUresult register_result; /* cuLogsRegisterCallback's answer */

typedef struct thread_log {
  char text[LOG_MAX];
  long long when_ns;
  int fresh; /* not yet taken for a failure */
} thread_log;
/* On the heap, made at the thread's first driver message and freed when it ends: the
 * library's thread-local block stays small enough for programs that load it late (Python). */
static _Thread_local thread_log *tls_log;
static pthread_key_t log_key;
static pthread_once_t log_key_once = PTHREAD_ONCE_INIT;
static void make_log_key(void) { (void)pthread_key_create(&log_key, free); }

static thread_log *thread_log_get(void) {
  if (tls_log) return tls_log;
  thread_log *t = calloc(1, sizeof *t);
  if (!t) return NULL; /* the message still reaches the ring and the forward */
  pthread_once(&log_key_once, make_log_key);
  (void)pthread_setspecific(log_key, t);
  tls_log = t;
  return t;
}

static long long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void CUDA_CB on_driver_log(void *data, CUlogLevel level, char *message, size_t length) {
  (void)data;
  char text[LOG_MAX];
  size_t n = message ? strnlen(message, length) : 0;
  cc_escape_text(text, sizeof text, message ? message : "", n);
  thread_log *t = thread_log_get();
  if (t) {
    memcpy(t->text, text, sizeof text);
    t->when_ns = now_ns();
    t->fresh = 1;
  }
  cucore_driver_log_level lv = level == CU_LOG_LEVEL_WARNING ? CUCORE_DRIVER_LOG_WARNING
                                                             : CUCORE_DRIVER_LOG_ERROR;
  pthread_mutex_lock(&log_lock);
  log_entry *e = &ring[ring_total % LOG_KEEP];
  e->level = lv;
  memcpy(e->text, text, sizeof text);
  ring_total++;
  cucore_driver_log_fn fn = forward_fn;
  void *user = forward_user;
  pthread_mutex_unlock(&log_lock);
  if (fn) fn(user, lv, text); /* outside the lock: fn may set another forward */
}

void cc_driver_log_register(void) {
  if (!DRV(cuLogsRegisterCallback)) return;
  CUlogsCallbackHandle handle = NULL; /* kept for the process's life */
  register_result = DRV(cuLogsRegisterCallback)(on_driver_log, NULL, &handle);
  if (register_result == CUDA_SUCCESS) atomic_store(&registered, 1);
}

size_t cc_driver_log_take(char *buf, size_t cap) {
  if (cap == 0) return 0;
  buf[0] = '\0';
  if (!tls_log || !tls_log->fresh) return 0;
  tls_log->fresh = 0;
  if (now_ns() - tls_log->when_ns > FRESH_NS) return 0;
  snprintf(buf, cap, "%s", tls_log->text);
  return strlen(buf);
}

int cc_driver_log_registered(CUresult *why) {
  *why = register_result;
  return atomic_load(&registered);
}

/* The first kept message whose lines, with those after it, fit `cap` bytes; *needed is the
 * size all the kept messages need. Under log_lock. */
static unsigned long long first_fitting(size_t cap, size_t *needed) {
  unsigned long long first = ring_total > LOG_KEEP ? ring_total - LOG_KEEP : 0;
  size_t all = 1, fit = 1;
  unsigned long long start = ring_total;
  for (unsigned long long i = ring_total; i > first; i--) {
    size_t line = strlen(ring[(i - 1) % LOG_KEEP].text) + 1;
    all += line;
    if (start == i && fit + line <= cap) {
      fit += line;
      start = i - 1;
    }
  }
  *needed = all;
  return start;
}

size_t cc_driver_log_copy(char *buf, size_t cap) {
  pthread_mutex_lock(&log_lock);
  size_t all = 0, o = 0;
  unsigned long long start = first_fitting(cap, &all);
  for (unsigned long long i = start; i < ring_total && cap > 0; i++)
    o += (size_t)snprintf(buf + o, cap - o, "%s\n", ring[i % LOG_KEEP].text);
  pthread_mutex_unlock(&log_lock);
  if (cap > 0) buf[o] = '\0';
  return all;
}

void cc_driver_log_last_text(char *buf, size_t cap) {
  snprintf(buf, cap, "%s", tls_log ? tls_log->text : "");
}

void cc_driver_log_set_forward(cucore_driver_log_fn fn, void *user) {
  pthread_mutex_lock(&log_lock);
  forward_fn = fn;
  forward_user = fn ? user : NULL;
  pthread_mutex_unlock(&log_lock);
}

void cc_driver_log_reset(void) {
  pthread_mutex_lock(&log_lock);
  ring_total = 0;
  pthread_mutex_unlock(&log_lock);
  if (tls_log) memset(tls_log, 0, sizeof *tls_log);
}
