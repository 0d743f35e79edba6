/* tune_worker.c -- `cucore tune`'s compile processes. Each compile thread of the tune drives
 * one worker process (this program, run as the hidden verb `__tune-worker`), which keeps
 * NVRTC loaded and compiles one configuration per request, through the compile cache, to a
 * cubin for the exact arch. Why processes: NVRTC compiles in threads of one process scale
 * badly (measured on a 16-core H200 host, raw NVRTC, 128 distinct programs: 57/s with 4
 * threads and 64/s with 8, against 156/s with 4 processes and 193/s with 8:
 * bench/compile_scaling.sh). A process is also the only way to stop a compile that runs past
 * --compile-timeout, and a compiler crash takes only its worker; both are recorded for that
 * configuration and the tune goes on with a new worker.
 *
 * The conversation, over a socketpair (send with MSG_NOSIGNAL: a dead worker is an error,
 * never a SIGPIPE): first the source (u64 size, bytes); then per compile a request (u32 size
 * and the kernel's name expression, u32 size and the configuration's options, one per line)
 * and a response (resp_head, then the lowered symbol, the error text and the cubin). The
 * compile itself is the library's (cucore_tune_compile), as the tune makes it without
 * processes. The tune's side is its compile callback (cucore_tune_run_options::compile): one
 * process per compile slot. */
#include <errno.h>
#include <stdarg.h>
#ifdef __GLIBC__
#include <malloc.h> /* mallopt */
#endif
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tune.h"

extern char **environ;

typedef struct resp_head {
  int32_t ok, cache_hit, timed_out, definite;
  double ms;
  uint32_t symbol_len, error_len, log_len;
  uint64_t cubin_len;
} resp_head;

/* ---- bytes over the socket ----------------------------------------------------------------- */

static int send_all(int fd, const void *p, size_t n) {
  const char *b = p;
  while (n) {
    ssize_t w = send(fd, b, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    b += w;
    n -= (size_t)w;
  }
  return 0;
}

/* Reads n bytes, waiting at most until `deadline_ms` (cli_now_ms; 0: no limit). 0, -1 when
 * the other end is gone or failed, -2 when the deadline passed. */
static int recv_all(int fd, void *p, size_t n, double deadline_ms) {
  char *b = p;
  while (n) {
    if (deadline_ms > 0) {
      double left = deadline_ms - cli_now_ms();
      if (left <= 0) return -2;
      struct pollfd pf = {fd, POLLIN, 0};
      int r = poll(&pf, 1, left > 1e6 ? 1000000 : (int)left + 1);
      if (r < 0 && errno == EINTR) continue;
      if (r == 0) continue; /* the deadline is checked again */
      if (r < 0) return -1;
    }
    ssize_t got = recv(fd, b, n, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return -1;
    b += got;
    n -= (size_t)got;
  }
  return 0;
}

/* The most one request carries: a kernel name (NVRTC's lowered names run to a few KiB) and
 * the configuration's options, one line each (100 000 parameters make ~1.2 MB). The tune
 * refuses a longer one with the limit named before sending it. */
#define WORKER_KERNEL_MAX (1u << 16)
#define WORKER_OPTIONS_MAX (1u << 30)

static int send_text(int fd, const char *s, size_t n) {
  uint32_t len = (uint32_t)n;
  return send_all(fd, &len, sizeof len) || send_all(fd, s, n) ? -1 : 0;
}

/* A u32-sized text into a malloc'd, NUL-terminated string (at most `cap` bytes). */
static char *recv_text(int fd, uint32_t cap) {
  uint32_t len;
  if (recv_all(fd, &len, sizeof len, 0) || len > cap) return NULL;
  char *s = malloc((size_t)len + 1);
  if (s && recv_all(fd, s, len, 0) == 0) {
    s[len] = 0;
    return s;
  }
  free(s);
  return NULL;
}

/* ---- the worker process ---------------------------------------------------------------------- */

typedef struct worker_state {
  const char *file;
  char *source;
  size_t source_size;
  cucore_options *base; /* the command's compile options and the arch */
} worker_state;

/* Tests only (tests/cli/test_tune.sh): CUCORE_TEST_TUNE_WORKER_CRASH=TEXT makes the worker die
 * of SIGSEGV, as a crashing compiler would, on a request whose kernel or options contain TEXT. */
static void crash_if_asked(const char *kernel, const char *lines) {
  const char *t = getenv("CUCORE_TEST_TUNE_WORKER_CRASH");
  if (!t || !*t || (!strstr(kernel, t) && !strstr(lines, t))) return;
  signal(SIGSEGV, SIG_DFL);
  raise(SIGSEGV);
}

/* Compiles one request (cucore_tune_compile) and sends the response. -1 only when the socket
 * failed. */
/* A text's length as the response carries it (u32; longer texts are not sent whole: a log
 * past 4 GiB is not a log). */
static uint32_t text_len(const char *t) {
  size_t n = t ? strlen(t) : 0;
  return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

static int serve_one(int fd, const worker_state *w, const char *kernel, const char *lines) {
  crash_if_asked(kernel, lines);
  cucore_tune_compile_request q = {.kernel = kernel, .options = lines};
  cucore_tune_compile_result r;
  memset(&r, 0, sizeof r);
  cucore_object *obj = NULL;
  const char *failed = NULL;
  if (cucore_tune_compile(w->source, w->source_size, w->file, w->base, &q, &r, &obj) != CUCORE_OK)
    failed = cucore_last_error();
  resp_head h = {0};
  h.ok = r.ok && !failed;
  h.cache_hit = r.cache_hit;
  h.timed_out = r.timed_out;
  h.definite = !failed && r.definite;
  h.ms = r.ms;
  const char *error = failed ? failed : r.error;
  h.symbol_len = h.ok ? text_len(r.symbol) : 0;
  h.error_len = h.ok ? 0 : text_len(error);
  h.log_len = text_len(r.log);
  h.cubin_len = h.ok ? r.cubin_size : 0;
  int rc = send_all(fd, &h, sizeof h) || send_all(fd, r.symbol, h.symbol_len) ||
                   send_all(fd, error, h.error_len) || send_all(fd, r.log, h.log_len) ||
                   send_all(fd, r.cubin, h.cubin_len)
               ? -1
               : 0;
  cucore_tune_compile_result_release(&r);
  cucore_object_destroy(obj);
  return rc;
}

/* The base options: the command's compile options (argv) and the arch. */
static int worker_options(worker_state *w, const char *arch, int argc, char **argv) {
  if (cucore_options_create(&w->base) != CUCORE_OK) return -1;
  if (cucore_options_set_string(w->base, CUCORE_OPT_ARCH, arch) != CUCORE_OK) return -1;
  for (int i = 0; i < argc;) {
    int used = 0;
    if (cucore_options_parse(w->base, argv[i], i + 1 < argc ? argv[i + 1] : NULL, &used) !=
            CUCORE_OK ||
        used < 1)
      return -1;
    i += used;
  }
  return 0;
}

/* NVRTC takes and gives back tens of MB per compile. glibc hands blocks over 128 KiB back to
 * the kernel at each free (mmap) and trims the heap's top, so every compile faulted the same
 * memory in again: 61 000 page faults for 64 compiles in 2 processes, 12 000 with the memory
 * kept (sys time 0.19 -> 0.07 s, wall 1.63 -> 1.57 s on the 2-core machine). On the GPU
 * machine a slow compile burst makes 3.4x the faults of a fast one (docs/BENCHMARKS.md), so
 * the worker keeps what it was given. */
static void keep_freed_memory(void) {
#ifdef __GLIBC__
  mallopt(M_MMAP_THRESHOLD, 32 << 20); /* glibc's largest: blocks up to 32 MiB from the heap */
  mallopt(M_TRIM_THRESHOLD, 1 << 30);  /* the heap's top is not handed back */
#endif
}

/* `cucore __tune-worker FILE ARCH [COMPILE OPTIONS...]`, its socket on fd 0: serves requests
 * until the tune closes the socket. Not a user verb: `cucore tune` starts it. */
int tune_worker_main(int argc, char **argv) {
  keep_freed_memory();
  worker_state w = {0};
  uint64_t n = 0;
  int rc = argc < 3 ? 2 : 0;
  if (!rc) w.file = argv[1];
  if (!rc && worker_options(&w, argv[2], argc - 3, argv + 3)) rc = 1;
  if (!rc && (recv_all(0, &n, sizeof n, 0) || n > (1ull << 30))) rc = 1;
  if (!rc && !(w.source = malloc(n + 1))) rc = 1;
  if (!rc && recv_all(0, w.source, n, 0)) rc = 1;
  if (!rc) w.source_size = n;
  while (!rc) {
    char *kernel = recv_text(0, WORKER_KERNEL_MAX),
         *lines = kernel ? recv_text(0, WORKER_OPTIONS_MAX) : NULL;
    if (!kernel || !lines) {
      free(kernel);
      break; /* the tune is done with this worker */
    }
    rc = serve_one(0, &w, kernel, lines) ? 1 : 0;
    free(kernel);
    free(lines);
  }
  free(w.source);
  cucore_options_destroy(w.base);
  return rc;
}

/* ---- the tune's side: the compile callback ------------------------------------------------- */

/* One compile slot's process and its last response (until the slot's next call). */
typedef struct tune_worker {
  pid_t pid;
  int fd;
  unsigned char *cubin;
  char *symbol, *error, *log;
} tune_worker;

/* The slot's last response let go. */
static void forget(tune_worker *w) {
  free(w->cubin), free(w->symbol), free(w->error), free(w->log);
  w->cubin = NULL;
  w->symbol = w->error = w->log = NULL;
}

/* out->error = the slot's own copy of the printf text (kept until its next call). */
static void say(tune_worker *w, cucore_tune_compile_result *out, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void say(tune_worker *w, cucore_tune_compile_result *out, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  free(w->error);
  if (vasprintf(&w->error, fmt, ap) < 0) w->error = NULL;
  va_end(ap);
  out->error = w->error ? w->error : "compile error: out of memory";
}

struct tune_workers {
  const tune_ctx *c;
  int n;
  tune_worker w[];
};

tune_workers *tune_workers_new(const tune_ctx *c, int slots) {
  tune_workers *ws = calloc(1, sizeof *ws + (size_t)slots * sizeof ws->w[0]);
  if (!ws) return NULL;
  ws->c = c;
  ws->n = slots;
  for (int i = 0; i < slots; i++) ws->w[i].fd = -1;
  return ws;
}

/* Stops the process: the socket closed (it exits), killed if it was busy. */
static void stop(tune_worker *w, int kill_it) {
  if (w->fd >= 0) close(w->fd);
  if (w->pid > 0) {
    if (kill_it) kill(w->pid, SIGKILL);
    int status;
    while (waitpid(w->pid, &status, 0) < 0 && errno == EINTR) {}
  }
  w->fd = -1;
  w->pid = 0;
}

void tune_workers_free(tune_workers *ws) {
  for (int i = 0; ws && i < ws->n; i++) {
    stop(&ws->w[i], 0);
    forget(&ws->w[i]);
  }
  free(ws);
}

/* The worker's command line: this program, the verb, the file, the arch, the options. */
static char **worker_argv(const tune_ctx *c, char *arch) {
  char **a = calloc((size_t)c->src->raw_count + 5, sizeof *a);
  if (!a) return NULL;
  static char exe[] = "/proc/self/exe", verb[] = "__tune-worker";
  int n = 0;
  a[n++] = exe, a[n++] = verb, a[n++] = (char *)c->line->file, a[n++] = arch;
  for (int i = 0; i < c->src->raw_count; i++) a[n++] = c->src->raw[i];
  a[n] = NULL;
  return a;
}

/* A new process with the source sent. 0, or -1 with out->error saying why. */
static int start(tune_worker *w, const tune_ctx *c, int arch_num, cucore_tune_compile_result *out) {
  int sv[2];
  char arch[16];
  snprintf(arch, sizeof arch, "sm_%d", arch_num);
  char **argv = worker_argv(c, arch);
  if (!argv || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    free(argv);
    say(w, out, "compile error: no compile process (%s)", strerror(errno));
    return -1;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, sv[1], 0); /* dup2 clears CLOEXEC on fd 0 */
  int r = posix_spawn(&w->pid, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  free(argv);
  close(sv[1]);
  w->fd = sv[0];
  if (r != 0) w->pid = 0; /* unspecified after a failed spawn: never waited for or killed */
  uint64_t n = c->source_size;
  if (r != 0 || send_all(w->fd, &n, sizeof n) || send_all(w->fd, c->source, c->source_size)) {
    say(w, out, "compile error: the compile process could not start (%s)", strerror(r ? r : errno));
    stop(w, 1);
    return -1;
  }
  return 0;
}

/* What became of a worker that answered nothing: out->error says, and the worker is gone. */
static void lost(tune_worker *w, double timeout_s, cucore_tune_compile_result *out, int timed_out) {
  if (timed_out) {
    say(w, out, "compile timeout: stopped after %g s (--compile-timeout)", timeout_s);
    out->timed_out = 1;
    stop(w, 1);
    return;
  }
  close(w->fd);
  w->fd = -1;
  int status = 0;
  while (w->pid > 0 && waitpid(w->pid, &status, 0) < 0 && errno == EINTR) {}
  w->pid = 0;
  if (WIFSIGNALED(status))
    say(w, out, "compile error: the compiler process ended with signal %d (%s)", WTERMSIG(status),
        strsignal(WTERMSIG(status)));
  else
    say(w, out, "compile error: the compiler process ended (exit status %d)",
        WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

/* The response's texts and cubin into out and w->cubin. 0, -1 (worker lost) or -2 (time
 * out). */
/* A text of n bytes from the worker into *out (malloc'd, NUL-terminated). 0, -1 or -2 as
 * recv_all. */
static int recv_str(int fd, uint32_t n, double deadline, char **out) {
  *out = malloc((size_t)n + 1);
  if (!*out) return -1;
  int r = recv_all(fd, *out, n, deadline);
  (*out)[r ? 0 : n] = 0;
  return r;
}

static int read_response(tune_worker *w, const resp_head *h, double deadline,
                         cucore_tune_compile_result *out) {
  int r = recv_str(w->fd, h->symbol_len, deadline, &w->symbol);
  if (!r) r = recv_str(w->fd, h->error_len, deadline, &w->error);
  if (!r) r = recv_str(w->fd, h->log_len, deadline, &w->log);
  if (!r && h->cubin_len) {
    w->cubin = malloc(h->cubin_len);
    r = w->cubin ? recv_all(w->fd, w->cubin, h->cubin_len, deadline) : -1;
  }
  if (!r) {
    out->symbol = w->symbol;
    out->error = w->error;
    out->log = w->log;
  }
  return r;
}

int tune_worker_compile(void *user, const cucore_tune_compile_request *q,
                        cucore_tune_compile_result *out) {
  tune_workers *ws = ((const tune_ctx *)user)->workers;
  if (!ws || q->slot < 0 || q->slot >= ws->n) {
    out->error = "compile error: no compile process for this compile slot";
    return -1;
  }
  tune_worker *w = &ws->w[q->slot];
  forget(w);
  if (!q->kernel) { /* the slot is done */
    stop(w, 0);
    return 0;
  }
  size_t kernel_len = strlen(q->kernel), options_len = strlen(q->options);
  if (kernel_len > WORKER_KERNEL_MAX || options_len > WORKER_OPTIONS_MAX) {
    say(w, out, "compile error: the %s is %zu bytes, more than a compile process takes (%u)",
        kernel_len > WORKER_KERNEL_MAX ? "kernel name" : "configuration's option text",
        kernel_len > WORKER_KERNEL_MAX ? kernel_len : options_len,
        kernel_len > WORKER_KERNEL_MAX ? WORKER_KERNEL_MAX : WORKER_OPTIONS_MAX);
    return -1;
  }
  if (w->fd < 0 && start(w, ws->c, q->arch, out)) return -1;
  double t0 = cli_now_ms();
  double deadline = q->timeout_s > 0 ? t0 + q->timeout_s * 1000 : 0;
  resp_head h;
  int r = send_text(w->fd, q->kernel, kernel_len) || send_text(w->fd, q->options, options_len)
              ? -1
              : recv_all(w->fd, &h, sizeof h, deadline);
  if (!r) r = read_response(w, &h, deadline, out);
  out->ms = r ? cli_now_ms() - t0 : h.ms;
  if (r) {
    forget(w);
    out->symbol = out->log = NULL;
    lost(w, q->timeout_s, out, r == -2);
    return -1;
  }
  out->ok = h.ok;
  out->cache_hit = h.cache_hit;
  out->timed_out = h.timed_out;
  out->definite = !h.ok && h.definite;
  out->cubin = w->cubin;
  out->cubin_size = h.cubin_len;
  return h.ok ? 0 : -1;
}
