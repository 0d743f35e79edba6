/* messages.c -- how every verb reports a failure or a usage error on stderr, and the clock
 * the verbs time their steps with. */
#include <stdarg.h>
#include <time.h>

#include "cli.h"

#include <string.h>

const char *cli_message(void) {
  const char *msg = cucore_last_error(), *p = msg;
  if (!msg || strncmp(msg, "cucore_", 7) != 0) return msg ? msg : "";
  p += strspn(p, "abcdefghijklmnopqrstuvwxyz0123456789_");
  return p[0] == ':' && p[1] == ' ' ? p + 2 : msg;
}

int cli_fail(const char *verb, const char *what, cucore_status st) {
  const char *msg = cli_message();
  fprintf(stderr, "cucore %s: %s: %s\n", verb, what, msg[0] ? msg : cucore_status_text(st));
  return CLI_EXIT_FAILURE;
}

int cli_usage(const char *verb, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "cucore %s: ", verb);
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n");
  va_end(ap);
  return CLI_EXIT_USAGE;
}

double cli_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}
