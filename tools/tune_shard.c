/* tune_shard.c -- `cucore tune` sharing one store's work: --shard I/N (or the launcher's
 * variables), --device, and --devices (one process per GPU of the host).
 *
 * Shards. Each shard is a whole `cucore tune` with the same command line and one store (a
 * shared --db-dir, or --db, on a file system every host sees). The library splits the distinct
 * compiles between them (their hash order, modulo the count: cucore_tune_run_options::
 * shard_count); each shard compiles and measures its share, then takes over what the others
 * have not claimed, last first, through the store's group locks (a slow shard's tail, a dead
 * shard's rest). A shard that dies loses only the configuration it was measuring: its locks
 * die with it, and whoever comes next (another shard, or the same command again) measures it.
 * Where the shard comes from when --shard is not given, first found first:
 *   Open MPI       OMPI_COMM_WORLD_RANK / _SIZE, OMPI_COMM_WORLD_LOCAL_RANK
 *   MPICH (Hydra)  PMI_RANK / PMI_SIZE, MPI_LOCALRANKID
 *   Slurm (srun)   SLURM_PROCID / SLURM_NTASKS, SLURM_LOCALID
 * No MPI library is linked: the launcher only starts the processes. The local rank picks the
 * GPU (modulo the GPUs this process sees: a launcher that gives each task one GPU through
 * CUDA_VISIBLE_DEVICES leaves device 0) unless --device names one.
 *
 * --devices all|LIST. The calling process checks the GPUs (one model, unless
 * --mixed-devices), then starts one process for each GPU but the first: the same command line,
 * with its share (shard i of N on GPU i) and its compile workers (--jobs / N) in
 * CUCORE_TUNE_DEVICE_CHILD, its report not printed, its finalists left to the first GPU. The
 * calling process is shard 0 on the first GPU: its share, then whatever the others have not
 * claimed, waiting for the groups they hold, so when its loop ends every configuration is in
 * the store (a process that died leaves its share to it); then it re-times the finalists of
 * the whole store on its GPU, in the context it measured with, and reports. Processes, not
 * threads: a kernel fault ends a process's context (the tune goes on in a fresh one,
 * cmd_tune.c), and the store's locks then exclude GPUs exactly as they exclude shards on other
 * hosts, so `--devices all` and srun's tasks give the same results. With --mixed-devices each
 * GPU's process tunes the whole space for its own model (the store keys results by model) and
 * re-times its own finalists; its report (text or JSON, as asked) goes to a temporary file
 * the calling process reads when the process ends and prints after its own report (in JSON,
 * the array "device_reports" holds them). */
#include "tune.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* A whole number from the environment variable `name` into *v; 0 when it is not set or not a
 * number. */
static int env_num(const char *name, long long *v) {
  const char *s = getenv(name);
  if (!s || !*s) return 0;
  char *end = NULL;
  errno = 0;
  long long n = strtoll(s, &end, 10);
  if (*end || errno || n < 0) return 0;
  *v = n;
  return 1;
}

typedef struct launcher {
  const char *name, *rank, *size, *local;
} launcher;

static const launcher launchers[] = {
    {"Open MPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"},
    {"MPICH", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID"},
    {"Slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"},
};

/* "I/N" into *i and *n: 0, or -1 when it is not two whole numbers with 0 <= I < N <= 65536. */
static int parse_share(const char *s, unsigned *i, unsigned *n) {
  char *end = NULL;
  errno = 0;
  unsigned long a = s[0] >= '0' && s[0] <= '9' ? strtoul(s, &end, 10) : 0;
  if (!end || *end != '/' || errno || end[1] < '0' || end[1] > '9') return -1;
  unsigned long b = strtoul(end + 1, &end, 10);
  if (*end || errno || b == 0 || b > 65536 || a >= b) return -1;
  *i = (unsigned)a, *n = (unsigned)b;
  return 0;
}

/* The device from the launcher's local rank (modulo the GPUs this process sees). */
static void device_from_local(tune_line *l, const launcher *w) {
  long long local = 0;
  int n = 0;
  if (l->device_given || !env_num(w->local, &local)) return;
  if (cucore_device_get_count(&n) != CUCORE_OK || n <= 0) return; /* check_gpu says so */
  l->device = local % n;
  l->device_from = w->local;
}

/* The shard from the first launcher whose variables say more than one task. */
static void shard_from_launcher(tune_line *l) {
  for (size_t k = 0; k < sizeof launchers / sizeof *launchers; k++) {
    const launcher *w = &launchers[k];
    long long rank = 0, size = 0;
    if (!env_num(w->rank, &rank) || !env_num(w->size, &size) || size < 2 || rank >= size ||
        size > 65536)
      continue;
    l->shard_index = (unsigned)rank, l->shard_count = (unsigned)size;
    l->shard_from = w->name;
    device_from_local(l, w);
    return;
  }
}

/* A --devices process: its share, GPU and workers from CUCORE_TUNE_DEVICE_CHILD ("I/N/D/J"). */
static int child_share(tune_line *l, const char *v) {
  unsigned i, n, d, j;
  if (sscanf(v, "%u/%u/%u/%u", &i, &n, &d, &j) != 4 || (n > 1 && i >= n))
    return cli_usage("tune",
                     "CUCORE_TUNE_DEVICE_CHILD `%s`: expected I/N/DEVICE/JOBS (set "
                     "by `cucore tune --devices` for its own processes)",
                     v);
  l->device_child = n > 1 ? 1 : 2; /* one share of the whole: --mixed-devices, its own tune */
  l->shard_index = n > 1 ? i : 0, l->shard_count = n > 1 ? n : 0;
  l->shard_from = "--devices";
  l->device = d, l->device_given = 1;
  l->jobs = j;
  l->devices = NULL;
  return 0;
}

int tune_shard_resolve(tune_line *l) {
  const char *child = getenv("CUCORE_TUNE_DEVICE_CHILD");
  if (child) return child_share(l, child);
  if (l->shard && strcmp(l->shard, "none") != 0) {
    if (parse_share(l->shard, &l->shard_index, &l->shard_count))
      return cli_usage("tune",
                       "--shard `%s`: expected I/N, this shard's number I from 0 and "
                       "the count N (at most 65536): 0/4 .. 3/4; or `none`",
                       l->shard);
    if (l->shard_count == 1) l->shard_count = 0;
    l->shard_from = "--shard";
  } else if (!l->shard) {
    shard_from_launcher(l);
  }
  if ((l->shard_count > 1 || l->devices) && l->fresh)
    return cli_usage("tune",
                     "--fresh with %s: shards share what the store holds; start them "
                     "on a new --db-dir (or `cucore cache tune clear KEY` first)",
                     l->devices ? "--devices" : "shards");
  if ((l->shard_count > 1 || l->devices) && l->report_only)
    return cli_usage("tune",
                     "%s with --report-only: a report measures nothing to share; run "
                     "it once, not per shard (--shard none)",
                     l->devices ? "--devices" : "shards");
  if ((l->shard_count > 1 || l->devices) && l->dry_run) { /* compiles and judges only */
    l->shard_count = 0, l->shard_from = NULL, l->devices = NULL;
    fprintf(stderr, "cucore tune: note: a dry run measures nothing: it is not shared between "
                    "GPUs or shards\n");
  }
  if (l->devices && l->shard_count > 1)
    return cli_usage("tune",
                     "--devices with shards (%s): each shard measures on one GPU; "
                     "start one shard per GPU instead",
                     l->shard_from);
  return 0;
}

/* --devices' list into l->child_devices: `all` or ordinals separated by commas. */
static int device_list(tune_line *l, int ndev) {
  l->children = 0;
  if (strcmp(l->devices, "all") == 0) {
    if (ndev > TUNE_DEVICES_MAX)
      return cli_usage("tune", "--devices all: %d GPUs; at most %d (name them: --devices 0,1,...)",
                       ndev, TUNE_DEVICES_MAX);
    for (int d = 0; d < ndev; d++) l->child_devices[l->children++] = d;
    return 0;
  }
  for (const char *s = l->devices; *s;) {
    char *end = NULL;
    long d = *s >= '0' && *s <= '9' ? strtol(s, &end, 10) : -1;
    if (d < 0 || (*end && *end != ','))
      return cli_usage("tune",
                       "--devices `%s`: expected `all` or device numbers separated by "
                       "commas (0,1)",
                       l->devices);
    if (d >= ndev)
      return cli_usage("tune", "--devices: device %ld: there are %d GPUs (0..%d)", d, ndev,
                       ndev - 1);
    for (int k = 0; k < l->children; k++)
      if (l->child_devices[k] == (int)d)
        return cli_usage("tune", "--devices: device %ld is named twice", d);
    if (l->children == TUNE_DEVICES_MAX)
      return cli_usage("tune", "--devices: more than %d GPUs", TUNE_DEVICES_MAX);
    l->child_devices[l->children++] = (int)d;
    s = *end ? end + 1 : end;
  }
  return 0;
}

/* The GPUs of the list of one model and architecture, unless --mixed-devices. */
static int same_model(const tune_line *l) {
  cucore_device_props first, p;
  if (cucore_device_get_props(l->child_devices[0], &first) != CUCORE_OK)
    return cli_fail("tune", "--devices", cucore_last_status());
  for (int k = 1; k < l->children; k++) {
    if (cucore_device_get_props(l->child_devices[k], &p) != CUCORE_OK)
      return cli_fail("tune", "--devices", cucore_last_status());
    int same = strcmp(p.name, first.name) == 0 && p.arch == first.arch &&
               p.sm_count == first.sm_count;
    if (!same && !l->mixed_devices)
      return cli_usage("tune",
                       "--devices: device %d is a %s (sm_%d, %d SMs) and device %d a %s "
                       "(sm_%d, %d SMs): one model shares one tune; --mixed-devices "
                       "tunes each model on its own",
                       l->child_devices[0], first.name, first.arch, first.sm_count,
                       l->child_devices[k], p.name, p.arch, p.sm_count);
  }
  return 0;
}

/* The environment of process k: the caller's and CUCORE_TUNE_DEVICE_CHILD (malloc'd; its
 * strings the caller's but the one made, which *var gets). */
static char **child_env(const tune_line *l, int k, int n, int jobs, char **var) {
  size_t ne = 0;
  while (environ[ne]) ne++;
  char **env = calloc(ne + 2, sizeof *env);
  int share = l->mixed_devices ? 1 : n; /* mixed: each GPU its whole tune */
  if (!env || asprintf(var, "CUCORE_TUNE_DEVICE_CHILD=%d/%d/%d/%d", share > 1 ? k : 0, share,
                       l->child_devices[k], jobs) < 0) {
    free(env);
    return NULL;
  }
  size_t m = 0;
  for (size_t i = 0; i < ne; i++)
    if (strncmp(environ[i], "CUCORE_TUNE_DEVICE_CHILD=", 25) != 0) env[m++] = environ[i];
  env[m++] = *var;
  return env;
}

static pid_t child_pids[TUNE_DEVICES_MAX];   /* the --devices processes (0: none) */
static FILE *child_out[TUNE_DEVICES_MAX];    /* --mixed-devices: where process k reports */
static char *child_report[TUNE_DEVICES_MAX]; /* what it reported (malloc'd), once it ended */
static int child_exit[TUNE_DEVICES_MAX];     /* its exit status (128 + a signal's number) */

/* Starts process k, its stdout to /dev/null (the caller reports) or, with --mixed-devices, to
 * a temporary file for its own report; its pid, or -1. */
static pid_t start_child(const tune_line *l, int k, int jobs, char **argv) {
  char *var = NULL;
  char **env = child_env(l, k, l->children, jobs, &var);
  if (l->mixed_devices) child_out[k] = tmpfile();
  int out = l->mixed_devices ? (child_out[k] ? fileno(child_out[k]) : -1)
                             : open("/dev/null", O_WRONLY | O_CLOEXEC);
  pid_t pid = env && out >= 0 ? fork() : -1;
  if (pid == 0) {
    dup2(out, 1);
    execve("/proc/self/exe", argv, env);
    _exit(127);
  }
  if (out >= 0 && !l->mixed_devices) close(out);
  free(env);
  free(var);
  return pid;
}

/* Reads back the report process k wrote (--mixed-devices) into child_report[k]. */
static void read_child_report(int k) {
  FILE *f = child_out[k];
  child_out[k] = NULL;
  if (!f) return;
  size_t n = 0, cap = 0;
  char *text = NULL;
  rewind(f);
  for (int ch; (ch = getc(f)) != EOF;) {
    if (n + 2 > cap) {
      char *grown = realloc(text, cap = cap ? 2 * cap : 4096);
      if (!grown) break;
      text = grown;
    }
    text[n++] = (char)ch;
  }
  fclose(f);
  while (n && (text[n - 1] == '\n' || text[n - 1] == ' ')) n--;
  if (text) text[n] = '\0';
  child_report[k] = text;
}

/* Waits for process k; a note when it did not end well (what it left is measured here, or,
 * with --mixed-devices, by the next run: its model is measured on its GPU only). */
static void wait_child(const tune_line *l, int k, pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  /* the shell's convention: 128 + the signal for a process a signal ended */
  child_exit[k] = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  read_child_report(k);
  if (WIFEXITED(status) && WEXITSTATUS(status) <= CLI_EXIT_FAILURE) return; /* 1: none verified */
  const char *how = WIFEXITED(status) ? "with exit" : "by signal";
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  if (l->mixed_devices)
    fprintf(stderr,
            "cucore tune: note: the process of device %d ended %s %d; its model's results so "
            "far are in the store: run the tune again to finish it\n",
            l->child_devices[k], how, code);
  else
    fprintf(stderr,
            "cucore tune: note: the process of device %d ended %s %d; what it left is measured "
            "on device %d\n",
            l->child_devices[k], how, code, l->child_devices[0]);
}

/* argv as the processes get it: "cucore" and the verb's words (NULL-terminated, malloc'd). */
static char **child_argv(int argc, char **argv) {
  char **v = calloc((size_t)argc + 2, sizeof *v);
  if (!v) return NULL;
  v[0] = "cucore";
  for (int i = 0; i < argc; i++) v[i + 1] = argv[i];
  return v;
}

int tune_devices_run(tune_ctx *c, int argc, char **argv) {
  tune_line *l = c->line;
  int ndev = 0;
  if (!l->devices) return 0;
  if (cucore_device_get_count(&ndev) != CUCORE_OK || ndev <= 0) return 0; /* check_gpu says */
  int rc = device_list(l, ndev);
  if (!rc && l->children > 1) rc = same_model(l);
  if (rc || l->children < 2) {
    if (!rc && l->children == 1) l->device = l->child_devices[0], l->children = 0;
    return rc;
  }
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  long long jobs = l->jobs ? l->jobs : cores > 2 ? cores - 1 : 1;
  int per = jobs / l->children > 1 ? (int)(jobs / l->children) : 1;
  char **v = child_argv(argc, argv);
  fflush(NULL);
  for (int k = 1; k < l->children; k++) {
    child_pids[k] = v ? start_child(l, k, per, v) : -1;
    if (child_pids[k] < 0)
      fprintf(stderr,
              "cucore tune: note: no process could be started for device %d (%s); its "
              "share is measured by the others\n",
              l->child_devices[k], strerror(errno));
  }
  free(v);
  /* This process is the first GPU's: its share, then the finalists of the whole store. */
  l->device = l->child_devices[0];
  l->jobs = per;
  l->shard_index = 0, l->shard_count = l->mixed_devices ? 0 : (unsigned)l->children;
  l->shard_from = "--devices";
  l->retime_finalists = 1;
  return 0;
}

void tune_devices_wait(tune_ctx *c, int rc) {
  for (int k = 1; k < c->line->children; k++) {
    if (child_pids[k] <= 0) continue;
    if (rc) { /* this process failed before or in its tune: theirs would fail alike */
      kill(child_pids[k], SIGTERM);
      while (waitpid(child_pids[k], NULL, 0) < 0 && errno == EINTR) {}
      if (child_out[k]) fclose(child_out[k]), child_out[k] = NULL;
    } else {
      wait_child(c->line, k, child_pids[k]);
    }
    child_pids[k] = 0;
  }
}

void tune_shard_text(const tune_ctx *c) {
  const tune_line *l = c->line;
  const cucore_tune_summary *s = &c->sum;
  if (s->shard_count > 1 && s->searched)
    printf("shard %u of %u (%s%s): its share of the budget searched, seed + %u; %llu results "
           "of the other shards learned from the store\n",
           s->shard_index, s->shard_count, l->shard_from ? l->shard_from : "--shard",
           l->device_from ? "; its GPU from the local rank" : "", s->shard_index,
           (unsigned long long)s->learned);
  else if (s->shard_count > 1)
    printf("shard %u of %u (%s%s): %zu distinct compiles of the other shards' share taken "
           "over\n",
           s->shard_index, s->shard_count, l->shard_from ? l->shard_from : "--shard",
           l->device_from ? "; its GPU from the local rank" : "", s->taken_over);
  if (l->children > 1) {
    printf("devices: %d GPUs measured, one process each (", l->children);
    for (int k = 0; k < l->children; k++) printf("%s%d", k ? ", " : "", l->child_devices[k]);
    if (l->mixed_devices)
      printf("); each model its own tune and finalists, the other GPUs' reports below\n");
    else
      printf("); the finalists re-timed on device %lld (%s)\n", l->device,
             s->uuid[0] ? s->uuid : "?");
  }
  if (s->report_only) printf("report only: the store's results; nothing compiled or measured\n");
}

/* A report read back is one JSON object when the process printed one (it ends with '}'). */
static int is_json_object(const char *text) {
  size_t n = text ? strlen(text) : 0;
  return n >= 2 && text[0] == '{' && text[n - 1] == '}';
}

/* --mixed-devices: "device_reports", each other GPU's own JSON report, or what became of it. */
static void child_reports_json(const tune_line *l, json_out *j) {
  json_begin_array(j, "device_reports");
  for (int k = 1; k < l->children; k++) {
    if (is_json_object(child_report[k])) {
      json_raw(j, NULL, child_report[k]);
      continue;
    }
    json_begin_object(j, NULL);
    json_int(j, "device", l->child_devices[k]);
    json_int(j, "exit", child_exit[k]);
    json_str(j, "error", "its process printed no report (see the messages on stderr)");
    json_end_object(j);
  }
  json_end_array(j);
}

void tune_shard_json(const tune_ctx *c, json_out *j) {
  const tune_line *l = c->line;
  const cucore_tune_summary *s = &c->sum;
  json_int(j, "device", l->device);
  json_str(j, "device_uuid", s->uuid);
  json_bool(j, "report_only", s->report_only);
  if (s->shard_count > 1) {
    json_begin_object(j, "shard");
    json_uint(j, "index", s->shard_index);
    json_uint(j, "count", s->shard_count);
    json_str(j, "from", l->shard_from ? l->shard_from : "--shard");
    json_uint(j, "taken_over", s->taken_over);
    if (s->searched) json_uint(j, "learned", s->learned);
    json_end_object(j);
  }
  if (l->children > 1) {
    json_begin_array(j, "devices");
    for (int k = 0; k < l->children; k++) json_int(j, NULL, l->child_devices[k]);
    json_end_array(j);
  }
  if (l->children > 1 && l->mixed_devices) child_reports_json(l, j);
}

void tune_devices_print_reports(const tune_ctx *c) {
  const tune_line *l = c->line;
  if (l->children < 2 || !l->mixed_devices) return;
  for (int k = 1; k < l->children; k++) {
    printf("\n== device %d: its own tune ==\n", l->child_devices[k]);
    if (child_report[k] && child_report[k][0])
      printf("%s\n", child_report[k]);
    else
      printf("no report: its process ended with exit %d (its messages are on stderr)\n",
             child_exit[k]);
  }
}
