/* outfile.c -- the files the command writes: never an input, never half-written.
 *
 * Every file the command reads is remembered by device and inode (cli_input_add), and an
 * output that is one of them -- through any spelling: `./k.cu`, an absolute path, a symlink, a
 * hard link -- is refused before any work (cli_output_check, which also refuses a folder, a
 * missing or unwritable folder and a read-only file, and creates or truncates nothing).
 * A regular file is written to a temporary beside it (NAME.XXXXXX), flushed, synced, given
 * the mode a new file gets (the old file's when it is replaced) and renamed over the target
 * only when every write and the close succeeded; on any failure the temporary is removed and
 * the previous file is left as it was. Anything else (/dev/null, a FIFO, a terminal) cannot
 * be renamed over: it is written in place, every write and the close checked. */
#include "cli.h"

#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- inputs ----------------------------------------------------------------------------- */

typedef struct input_file {
  dev_t dev;
  ino_t ino;
  char *name;
} input_file;

static input_file *inputs;
static int ninputs;
static size_t inputs_cap;

void cli_input_add(const char *path) {
  struct stat st;
  int std_in = path && strcmp(path, "-") == 0; /* standard input: the file behind it */
  if (!path || (std_in ? fstat(0, &st) : stat(path, &st)) != 0) return; /* its reader says */
  if (std_in && !S_ISREG(st.st_mode)) return;
  if (std_in) path = "standard input";
  for (int i = 0; i < ninputs; i++)
    if (inputs[i].dev == st.st_dev && inputs[i].ino == st.st_ino) return;
  input_file *n = cli_grow(inputs, &inputs_cap, (size_t)ninputs + 1, sizeof *n,
                           "the list of input files");
  char *name = strdup(path);
  if (!n || !name) { /* the check is a safety net; out of memory it is skipped */
    if (n) inputs = n;
    free(name);
    return;
  }
  inputs = n;
  inputs[ninputs++] = (input_file){st.st_dev, st.st_ino, name};
}

/* The input that is the file `st` describes, or NULL. */
static const char *input_named(const struct stat *st) {
  for (int i = 0; i < ninputs; i++)
    if (inputs[i].dev == st->st_dev && inputs[i].ino == st->st_ino) return inputs[i].name;
  return NULL;
}

/* ---- checks before any work -------------------------------------------------------------- */

/* The folder that holds `path` ("." for a bare name), in buf. */
static void folder_of(const char *path, char *buf, size_t len) {
  const char *slash = strrchr(path, '/');
  if (!slash)
    snprintf(buf, len, ".");
  else if (slash == path)
    snprintf(buf, len, "/");
  else
    snprintf(buf, len, "%.*s", (int)(slash - path), path);
}

/* The folder a new file or the temporary goes to must exist and take new files. */
static int check_folder(const char *verb, const char *what, const char *path) {
  char *real = realpath(path, NULL); /* a symlink's target is what gets replaced */
  char folder[PATH_MAX];
  folder_of(real ? real : path, folder, sizeof folder);
  free(real);
  struct stat st;
  if (stat(folder, &st) != 0)
    return cli_usage(verb, "%s `%s`: the folder `%s` %s", what, path, folder,
                     errno == ENOENT ? "does not exist" : strerror(errno));
  if (!S_ISDIR(st.st_mode))
    return cli_usage(verb, "%s `%s`: `%s` is not a folder", what, path, folder);
  if (access(folder, W_OK | X_OK) != 0)
    return cli_usage(verb,
                     "%s `%s`: cannot create files in the folder `%s`: %s (the file is "
                     "written beside its target and renamed into place)",
                     what, path, folder, strerror(errno));
  return 0;
}

/* ---- outputs: no two the same file -------------------------------------------------------- */

typedef struct output_file {
  char *key;  /* the canonical path: realpath of the file, or of its folder + its name */
  char *name; /* as given, with what it is ("--json-out `r.json`") */
} output_file;

static output_file *outputs;
static int noutputs;
static size_t outputs_cap;

/* The canonical path of `path`, which may not exist yet (malloc'd; NULL when unknown). */
static char *canonical(const char *path) {
  char *real = realpath(path, NULL);
  if (real) return real;
  char folder[PATH_MAX];
  folder_of(path, folder, sizeof folder);
  char *dir = realpath(folder, NULL);
  const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
  size_t n = dir ? strlen(dir) + strlen(base) + 2 : 0;
  char *key = dir ? malloc(n) : NULL;
  if (key) snprintf(key, n, "%s/%s", dir, base);
  free(dir);
  return key;
}

/* Refuses (exit 2) a regular-file output that another output of this command names already;
 * remembers it otherwise. Non-regular targets (/dev/null) may be named twice. */
static int output_once(const char *verb, const char *what, const char *path) {
  struct stat st;
  if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) return 0;
  char *key = canonical(path);
  if (!key) return 0; /* the folder check has said what is wrong */
  for (int i = 0; i < noutputs; i++)
    if (strcmp(outputs[i].key, key) == 0) {
      free(key);
      return cli_usage(verb, "%s `%s` is the same file as %s; each output needs its own file", what,
                       path, outputs[i].name);
    }
  output_file *n = cli_grow(outputs, &outputs_cap, (size_t)noutputs + 1, sizeof *n,
                            "the list of output files");
  size_t len = strlen(what) + strlen(path) + 4;
  char *name = malloc(len);
  if (!n || !name) { /* a safety net; out of memory it is skipped */
    if (n) outputs = n;
    free(key);
    free(name);
    return 0;
  }
  snprintf(name, len, "%s `%s`", what, path);
  outputs = n;
  outputs[noutputs++] = (output_file){key, name};
  return 0;
}

static int output_check_one(const char *verb, const char *what, const char *path, int writable);

int cli_output_check(const char *verb, const char *what, const char *path) {
  int rc = output_check_one(verb, what, path, 1);
  return rc ? rc : output_once(verb, what, path);
}

int cli_store_check(const char *verb, const char *what, const char *path) {
  int rc = output_check_one(verb, what, path, 0);
  if (!rc) rc = output_once(verb, what, path);
  if (!rc) cli_input_add(path); /* no other output may be it */
  return rc;
}

static int output_check_one(const char *verb, const char *what, const char *path, int writable) {
  struct stat st;
  if (!path[0]) return cli_usage(verb, "%s: the file name is empty", what);
  if (stat(path, &st) != 0) {
    if (errno != ENOENT)
      return cli_usage(verb, "%s `%s` cannot be used: %s", what, path, strerror(errno));
    return check_folder(verb, what, path);
  }
  const char *in = input_named(&st);
  if (in)
    return cli_usage(verb,
                     "%s `%s` is the same file as the input `%s`; refusing to overwrite "
                     "an input (name another output)",
                     what, path, in);
  if (S_ISDIR(st.st_mode)) return cli_usage(verb, "%s `%s` is a folder; name a file", what, path);
  if (!writable) return 0;
  if (access(path, W_OK) != 0)
    return cli_usage(verb, "%s `%s` cannot be written: %s", what, path, strerror(errno));
  return S_ISREG(st.st_mode) ? check_folder(verb, what, path) : 0;
}

/* ---- writing ----------------------------------------------------------------------------- */

/* The temporary being written (one at a time), removed if the command is interrupted
 * meanwhile. */
static volatile sig_atomic_t have_pending;
static char pending_tmp[PATH_MAX + 8];
static const int caught[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
static struct sigaction previous[sizeof caught / sizeof caught[0]];

static void on_signal(int sig) {
  if (have_pending) unlink(pending_tmp);
  signal(sig, SIG_DFL);
  raise(sig);
}

static void guard_tmp(const char *tmp) {
  snprintf(pending_tmp, sizeof pending_tmp, "%s", tmp);
  have_pending = 1;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  for (size_t i = 0; i < sizeof caught / sizeof caught[0]; i++)
    sigaction(caught[i], &sa, &previous[i]);
}

static void unguard_tmp(void) {
  if (!have_pending) return;
  for (size_t i = 0; i < sizeof caught / sizeof caught[0]; i++)
    sigaction(caught[i], &previous[i], NULL);
  have_pending = 0;
}

static int out_error(cli_outfile *o, const char *doing, int err) {
  fprintf(stderr, "cucore %s: %s: %s `%s`: %s\n", o->verb, o->what, doing, o->path, strerror(err));
  return CLI_EXIT_FAILURE;
}

/* The mode of the file written: the replaced file's, else what a new file gets (umask). */
static mode_t mode_for(const struct stat *old, int exists) {
  if (exists) return old->st_mode & 07777;
  mode_t mask = umask(0);
  umask(mask);
  return 0666 & ~mask;
}

int cli_out_open(cli_outfile *o, const char *verb, const char *what, const char *path) {
  memset(o, 0, sizeof *o);
  o->verb = verb;
  o->what = what;
  o->path = path;
  char *real = realpath(path, NULL);
  struct stat st;
  int exists = stat(real ? real : path, &st) == 0;
  if (exists && !S_ISREG(st.st_mode)) { /* /dev/null, a FIFO, a terminal: in place */
    free(real);
    o->f = fopen(path, "wb");
    return o->f ? 0 : out_error(o, "cannot open", errno);
  }
  o->mode = (unsigned)mode_for(&st, exists);
  o->target = real ? real : strdup(path);
  size_t n = o->target ? strlen(o->target) : 0;
  o->tmp = o->target && n < PATH_MAX ? malloc(n + 8) : NULL;
  if (!o->tmp) {
    cli_out_close(o, 0);
    return out_error(o, "cannot write", ENAMETOOLONG);
  }
  memcpy(o->tmp, o->target, n);
  memcpy(o->tmp + n, ".XXXXXX", 8);
  int fd = mkstemp(o->tmp);
  if (fd < 0 || !(o->f = fdopen(fd, "wb"))) {
    int err = errno;
    if (fd >= 0) {
      close(fd);
      unlink(o->tmp);
    }
    free(o->tmp);
    o->tmp = NULL;
    cli_out_close(o, 0);
    return out_error(o, "cannot create a temporary file beside", err);
  }
  guard_tmp(o->tmp);
  return 0;
}

/* Flushes, syncs, sets the mode of and closes o->f; 0 or the first error's errno. */
static int finish_stream(cli_outfile *o) {
  errno = 0;
  int err = fflush(o->f) != 0 ? (errno ? errno : EIO) : 0;
  if (!err && ferror(o->f)) err = errno ? errno : EIO;
  if (!err && o->tmp && fsync(fileno(o->f)) != 0) err = errno;
  if (!err && o->tmp && fchmod(fileno(o->f), (mode_t)o->mode) != 0) err = errno;
  if (fclose(o->f) != 0 && !err) err = errno ? errno : EIO;
  o->f = NULL;
  return err;
}

int cli_out_close(cli_outfile *o, int ok) {
  int err = 0;
  if (o->f && ok) {
    err = finish_stream(o);
  } else if (o->f) { /* the caller said why; what was written is dropped */
    fclose(o->f);
    o->f = NULL;
  }
  if (!err && ok && o->tmp && rename(o->tmp, o->target) != 0) err = errno;
  if (o->tmp && (err || !ok)) unlink(o->tmp); /* the previous file stays as it was */
  if (o->tmp) unguard_tmp();
  free(o->tmp);
  free(o->target);
  o->tmp = o->target = NULL;
  if (err) return out_error(o, "writing", err);
  return ok ? 0 : CLI_EXIT_FAILURE;
}

int cli_write_file(const char *verb, const char *what, const char *path, const void *data,
                   size_t size) {
  cli_outfile o;
  int rc = cli_out_open(&o, verb, what, path);
  if (rc) return rc;
  errno = 0;
  int ok = size == 0 || fwrite(data, 1, size, o.f) == size;
  if (!ok) {
    int err = errno ? errno : EIO;
    cli_out_close(&o, 0);
    return out_error(&o, "writing", err);
  }
  return cli_out_close(&o, 1);
}
