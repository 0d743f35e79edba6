/* cache_warn.c -- what is wrong with the compile cache's configuration, said once per run on
 * stderr and never ignored without a word. The library only reports it
 * (cucore_cache_config_problem); the command prints it. */
#include "cli.h"

static int warned; /* the problem was printed already in this run */

/* The problem, or "" (msg holds cap bytes). */
static int cache_problem(char *msg, size_t cap) {
  int problem = 0;
  if (cucore_cache_config_problem(msg, cap, &problem) != CUCORE_OK) return 0;
  return problem;
}

void cli_cache_warn_once(void) {
  char msg[8192];
  if (warned || !cache_problem(msg, sizeof msg)) return;
  warned = 1;
  fprintf(stderr, "cucore: warning: the compile cache: %s\n", msg);
}

int cli_cache_check(const char *verb) {
  char msg[8192];
  if (!cache_problem(msg, sizeof msg)) return 0;
  if (!warned)
    fprintf(stderr, "cucore %s: the compile cache cannot be used as configured: %s\n", verb, msg);
  warned = 1;
  return 1;
}

int cli_cache_dir(const char *what, cucore_cache_stats *s) {
  cucore_status st = cucore_cache_get_stats(s);
  if (st != CUCORE_OK) return cli_fail("cache", what, st);
  if (s->dir[0]) return 0;
  fprintf(stderr, "cucore cache: no cache directory: set CUCORE_CACHE_DIR, XDG_CACHE_HOME or "
                  "HOME\n");
  return CLI_EXIT_FAILURE;
}
