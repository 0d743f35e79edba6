/*
 * error.c -- status names and texts (from the one table in cucore.h) and the thread-local
 * message. Driver results become statuses in loader/driver_errors.c.
 */
#include "base/base.h"

#include <stdio.h>
#include <string.h>

#define CC_MESSAGE_MAX 2048

typedef struct cc_error_state {
  cucore_status status;
  char message[CC_MESSAGE_MAX];
} cc_error_state;

static _Thread_local cc_error_state tls_error;
/* Set when a message was kept since the last cc_begin. Every public call clears it, so it is
 * kept apart from the message, in the initial-exec TLS model: a plain store, no
 * __tls_get_addr call on the launch path. */
CC_TLS_IE _Thread_local int cc_tls_kept;
#define tls_kept cc_tls_kept

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

const char *cucore_last_error(void) { return tls_error.message; }

cucore_status cucore_last_status(void) { return tls_error.status; }

cucore_status cucore_clear_error(void) {
  tls_error.status = CUCORE_OK;
  tls_error.message[0] = '\0';
  tls_kept = 0;
  return CUCORE_OK;
}

static cucore_status failv(cucore_status st, const char *fmt, va_list ap) {
  if (tls_kept) return st; /* the first error of a failing sequence is the one kept */
  tls_kept = 1;
  tls_error.status = st;
  vsnprintf(tls_error.message, sizeof tls_error.message, fmt, ap);
  return st;
}

cucore_status cc_fail(cucore_status st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  failv(st, fmt, ap);
  va_end(ap);
  return st;
}

cucore_status cc_fail_restate(cucore_status st, const char *msg) {
  tls_kept = 1;
  tls_error.status = st;
  snprintf(tls_error.message, sizeof tls_error.message, "%s", msg);
  return st;
}

int cc_message_kept(void) { return tls_kept; }
