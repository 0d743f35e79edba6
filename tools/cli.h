/* cli.h -- what the cucore command's verbs share. The command uses only the public API. */
#ifndef CUCORE_CLI_H
#define CUCORE_CLI_H

#include "cucore.h"

#include <stdio.h>

/* Exit codes, documented in `cucore help`. */
enum {
  CLI_EXIT_OK = 0,
  CLI_EXIT_FAILURE = 1, /* the work failed (compile error, no GPU, wrong arguments to a kernel) */
  CLI_EXIT_USAGE = 2    /* the command line was wrong */
};

typedef struct cli_verb {
  const char *name;
  int (*run)(int argc, char **argv); /* argv[0] is the verb */
  const char *summary;               /* one line for `cucore --help` */
  const char *help;                  /* the man-page-like text for `cucore help VERB` */
} cli_verb;

/* Prints "cucore VERB: <what>: <cucore_last_error()>" to stderr; returns CLI_EXIT_FAILURE. */
int cli_fail(const char *verb, const char *what, cucore_status st);
/* Prints a usage error to stderr and returns CLI_EXIT_USAGE. */
int cli_usage(const char *verb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Minimal JSON writer on a FILE. */
typedef struct json_out {
  FILE *f;
  int depth;
  int first[32];
  int pretty;
} json_out;
void json_begin_object(json_out *j, const char *key);
void json_end_object(json_out *j);
void json_begin_array(json_out *j, const char *key);
void json_end_array(json_out *j);
void json_str(json_out *j, const char *key, const char *value); /* NULL -> null */
void json_int(json_out *j, const char *key, long long value);
void json_num(json_out *j, const char *key, double value);
void json_bool(json_out *j, const char *key, int value);

int cmd_devices(int argc, char **argv);
int cmd_version(int argc, char **argv);

#endif
