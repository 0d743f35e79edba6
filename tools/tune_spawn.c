/* tune_spawn.c -- `cucore tune --compile-timeout S`: a compile in a child process (this
 * program's own `cucore compile`, through the same compile cache), killed when it runs past
 * S seconds and recorded as a compile timeout; the tune goes on. NVRTC cannot be stopped from
 * inside a process, so a time-out needs a process of its own. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tune.h"

extern char **environ;

#define TUNE_ARGV_MAX 512

typedef struct child {
  char dir[64], out[96], json[96], err[96];
  char arch[16], defines[4096];
  char *argv[TUNE_ARGV_MAX];
} child;

/* The child's command line: compile FILE for the arch with the configuration's defines, the
 * command's compile options and the kernel as a name expression, the cubin to ch->out. */
static void child_argv(tune_ctx *c, const tune_group *g, const char *kernel, child *ch) {
  static char exe[] = "/proc/self/exe", verb[] = "compile", arch_flag[] = "--arch";
  static char expr_flag[] = "--name-expr", o_flag[] = "-o", json[] = "--json";
  char **a = ch->argv, *save = NULL;
  int n = 0;
  snprintf(ch->arch, sizeof ch->arch, "sm_%d", c->arch);
  a[n++] = exe, a[n++] = verb, a[n++] = (char *)c->line->file, a[n++] = arch_flag;
  a[n++] = ch->arch;
  cucore_tune_space_config_text(c->space, g->index, CUCORE_TUNE_TEXT_DEFINES, ch->defines,
                                sizeof ch->defines, NULL);
  for (char *d = strtok_r(ch->defines, "\n", &save); d && n < TUNE_ARGV_MAX - 8;
       d = strtok_r(NULL, "\n", &save))
    a[n++] = d;
  for (int i = 0; i < c->src->raw_count && n < TUNE_ARGV_MAX - 8; i++) a[n++] = c->src->raw[i];
  a[n++] = expr_flag, a[n++] = (char *)kernel, a[n++] = o_flag, a[n++] = ch->out;
  a[n++] = json;
  a[n] = NULL;
}

/* Waits for the child until `timeout_s`; 1 when it had to be killed. */
static int wait_child(pid_t pid, double timeout_s, int *status) {
  double t0 = cli_now_ms();
  struct timespec nap = {0, 2000000};
  for (;;) {
    pid_t r = waitpid(pid, status, WNOHANG);
    if (r == pid || (r < 0 && errno != EINTR)) return 0;
    if (cli_now_ms() - t0 > timeout_s * 1000) {
      kill(pid, SIGKILL);
      waitpid(pid, status, 0);
      return 1;
    }
    nanosleep(&nap, NULL);
  }
}

static int spawn(child *ch, pid_t *pid) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, ch->json, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&fa, 2, ch->err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  int r = posix_spawn(pid, ch->argv[0], &fa, NULL, ch->argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  return r;
}

/* The first line of a file that says "error" (else the first line), into out. */
static void first_error(const char *path, char *out, size_t cap) {
  char *data = NULL;
  size_t size = 0;
  out[0] = 0;
  if (cli_read_file("tune", path, &data, &size)) return;
  char *e = strstr(data, "error");
  char *start = e ? e : data;
  while (e && start > data && start[-1] != '\n') start--;
  snprintf(out, cap, "%.*s", (int)strcspn(start, "\n"), start);
  free(data);
}

/* The lowered name of `kernel` from the child's JSON ("lowered_names": {"k<1>": "_Z..."}). */
static void lowered(const child *ch, const char *kernel, char *out, size_t cap) {
  char *data = NULL, key[1100];
  size_t size = 0;
  snprintf(out, cap, "%s", kernel);
  if (cli_read_file("tune", ch->json, &data, &size)) return;
  snprintf(key, sizeof key, "\"%s\": \"", kernel);
  char *p = strstr(data, key);
  if (p) snprintf(out, cap, "%.*s", (int)strcspn(p + strlen(key), "\""), p + strlen(key));
  free(data);
}

static void cleanup(const child *ch) {
  unlink(ch->out), unlink(ch->json), unlink(ch->err);
  rmdir(ch->dir);
}

int tune_compile_in_child(tune_ctx *c, tune_group *g, const char *kernel, cucore_object **obj) {
  child *ch = calloc(1, sizeof *ch);
  if (!ch) return -1;
  snprintf(ch->dir, sizeof ch->dir, "/tmp/cucore-tune-XXXXXX");
  int rc = mkdtemp(ch->dir) ? 0 : -1, status = 0;
  snprintf(ch->out, sizeof ch->out, "%s/k.cubin", ch->dir);
  snprintf(ch->json, sizeof ch->json, "%s/out.json", ch->dir);
  snprintf(ch->err, sizeof ch->err, "%s/err.txt", ch->dir);
  child_argv(c, g, kernel, ch);
  pid_t pid;
  if (rc == 0 && spawn(ch, &pid) != 0) rc = -1;
  if (rc == 0 && wait_child(pid, c->line->compile_timeout, &status)) {
    snprintf(g->error, sizeof g->error, "compile timeout: stopped after %g s "
             "(--compile-timeout)", c->line->compile_timeout);
    rc = -1;
  } else if (rc == 0 && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
    char why[160];
    first_error(ch->err, why, sizeof why);
    snprintf(g->error, sizeof g->error, "compile error: %s", why);
    rc = -1;
  } else if (rc == 0) {
    lowered(ch, kernel, g->symbol, sizeof g->symbol);
    char *cubin = NULL;
    size_t size = 0;
    rc = cli_read_file("tune", ch->out, &cubin, &size) ? -1 : 0;
    if (rc == 0 && cucore_object_from_memory(cubin, size, CUCORE_CODE_CUBIN, kernel, obj) != 0)
      rc = -1;
    free(cubin);
  }
  if (rc && !g->error[0]) snprintf(g->error, sizeof g->error, "compile error: the child "
                                   "compile could not run");
  if (ch->dir[0]) cleanup(ch);
  free(ch);
  return rc;
}
