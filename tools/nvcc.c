/* nvcc.c -- compiling a .cu file with the toolkit's nvcc instead of NVRTC, for files NVRTC
 * cannot take: whole programs with host code (main, the runtime API, <cstdio>), as CUDA
 * samples and llm.c's kernels are written. nvcc keeps the device code (-cubin / -ptx /
 * -fatbin) and the result is loaded like any binary; kernels are then found by their symbol
 * or their demangled C++ name ("scale_kernel", "fill<float>"). The compile options given on
 * the command line are passed on in nvcc's spelling. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"

/* The nvcc to run: CUCORE_NVCC (alone, when set), CUDA_HOME, CUDA_PATH, the standard install,
 * then PATH. */
static int find_nvcc(char *path, size_t n) {
  const char *override = getenv("CUCORE_NVCC");
  if (override && override[0]) {
    snprintf(path, n, "%s", override);
    return access(path, X_OK) == 0 ? 0 : -1;
  }
  const char *roots[] = {getenv("CUDA_HOME"), getenv("CUDA_PATH"), "/usr/local/cuda"};
  for (size_t i = 0; i < sizeof roots / sizeof roots[0]; i++) {
    if (!roots[i] || !roots[i][0]) continue;
    snprintf(path, n, "%s/bin/nvcc", roots[i]);
    if (access(path, X_OK) == 0) return 0;
  }
  const char *p = getenv("PATH");
  while (p && *p) {
    const char *end = strchr(p, ':');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (len) {
      snprintf(path, n, "%.*s/nvcc", (int)len, p);
      if (access(path, X_OK) == 0) return 0;
    }
    p = end ? end + 1 : NULL;
  }
  return -1;
}

int cli_nvcc_available(void) {
  char path[4096];
  return find_nvcc(path, sizeof path) == 0;
}

/* nvcc's command line, built in place: the words and the text they point into. */
typedef struct nvcc_line {
  char *argv[256];
  int argc;
  char store[8192];
  size_t used;
  char arch[64]; /* the arch given (--arch, or the verb's own), "" for the GPU's */
} nvcc_line;

/* Adds `fmt` with its "%s" (if any) replaced by value[0..len) as one word; a word that does not
 * fit is left out. */
static void add_word(nvcc_line *l, const char *fmt, const char *value, size_t len) {
  const char *pct = strstr(fmt, "%s");
  size_t pre = pct ? (size_t)(pct - fmt) : strlen(fmt), post = pct ? strlen(pct + 2) : 0;
  if (!pct) len = 0;
  if (l->argc >= 240 || pre + len + post + 1 > sizeof l->store - l->used) return;
  char *w = l->store + l->used;
  memcpy(w, fmt, pre);
  memcpy(w + pre, value, len);
  memcpy(w + pre + len, pct ? pct + 2 : "", post + 1);
  l->argv[l->argc++] = w;
  l->used += pre + len + post + 1;
}

/* nvcc's spelling of the library's compile options, one row per option
 * nvcc needs, by its cucore_option: the values are the library's own reading of the command
 * line (cucore_options_canonical: "name=value" for each option that differs from its default,
 * in the library's table order, the order NVRTC gets them in). NVCC_VALUE: "%s" takes the
 * value; NVCC_BOOL: "%s" takes true or false; NVCC_SWITCH: the flag when the bool is on. The
 * arch is taken apart (-arch comes last, the GPU's when none was given); the options nvcc has
 * no use for (toolkit includes, the settings of nvJitLink and libNVVM, NVRTC's raw options, a
 * fatbin's gencodes, NVRTC's own -minimal, builtins, no-cache and precompiled headers) have no
 * row. */
enum { NVCC_VALUE, NVCC_BOOL, NVCC_SWITCH };
/* clang-format off */
static const struct {
  cucore_option opt;
  int kind;
  const char *flag;
} nvcc_flags[] = {
    {CUCORE_OPT_STD,                        NVCC_VALUE,  "-std=%s"},
    {CUCORE_OPT_DEFINE,                     NVCC_VALUE,  "-D%s"},
    {CUCORE_OPT_UNDEFINE,                   NVCC_VALUE,  "-U%s"},
    {CUCORE_OPT_INCLUDE_PATH,               NVCC_VALUE,  "-I%s"},
    {CUCORE_OPT_PRE_INCLUDE,                NVCC_VALUE,  "--pre-include=%s"},
    {CUCORE_OPT_MAX_REGISTERS,              NVCC_VALUE,  "-maxrregcount=%s"},
    {CUCORE_OPT_PTXAS_OPTION,               NVCC_VALUE,  "-Xptxas=%s"},
    {CUCORE_OPT_FTZ,                        NVCC_BOOL,   "-ftz=%s"},
    {CUCORE_OPT_PREC_DIV,                   NVCC_BOOL,   "-prec-div=%s"},
    {CUCORE_OPT_PREC_SQRT,                  NVCC_BOOL,   "-prec-sqrt=%s"},
    {CUCORE_OPT_FMAD,                       NVCC_BOOL,   "-fmad=%s"},
    {CUCORE_OPT_RDC,                        NVCC_BOOL,   "-rdc=%s"},
    {CUCORE_OPT_DEBUG,                      NVCC_SWITCH, "-G"},
    {CUCORE_OPT_LINEINFO,                   NVCC_SWITCH, "-lineinfo"},
    {CUCORE_OPT_FAST_MATH,                  NVCC_SWITCH, "-use_fast_math"},
    {CUCORE_OPT_EXTRA_DEVICE_VECTORIZATION, NVCC_SWITCH, "-extra-device-vectorization"},
    {CUCORE_OPT_DEFAULT_DEVICE,             NVCC_SWITCH, "-default-device"},
    {CUCORE_OPT_EXTENSIBLE_WHOLE_PROGRAM,   NVCC_SWITCH, "--extensible-whole-program"},
    {CUCORE_OPT_DOPT,                       NVCC_SWITCH, "--dopt=on"},
    {CUCORE_OPT_GEN_OPT_LTO,                NVCC_SWITCH, "--gen-opt-lto"},
    {CUCORE_OPT_RESTRICT,                   NVCC_SWITCH, "--restrict"},
    {CUCORE_OPT_OPTIMIZATION_INFO,          NVCC_VALUE,  "--optimization-info=%s"},
    {CUCORE_OPT_NO_DISPLAY_ERROR_NUMBER,    NVCC_SWITCH, "--no-display-error-number"},
    {CUCORE_OPT_DIAG_ERROR,                 NVCC_VALUE,  "--diag-error=%s"},
    {CUCORE_OPT_DIAG_SUPPRESS,              NVCC_VALUE,  "--diag-suppress=%s"},
    {CUCORE_OPT_DIAG_WARN,                  NVCC_VALUE,  "--diag-warn=%s"},
    {CUCORE_OPT_BRIEF_DIAGNOSTICS,          NVCC_BOOL,   "--brief-diagnostics=%s"},
    {CUCORE_OPT_TIME,                       NVCC_VALUE,  "--time=%s"},
    {CUCORE_OPT_FDEVICE_SYNTAX_ONLY,        NVCC_SWITCH, "--fdevice-syntax-only"},
    {CUCORE_OPT_FDEVICE_TIME_TRACE,         NVCC_VALUE,  "--fdevice-time-trace=%s"},
    {CUCORE_OPT_FRANDOM_SEED,               NVCC_VALUE,  "--frandom-seed=%s"},
    {CUCORE_OPT_OFAST_COMPILE,              NVCC_VALUE,  "--Ofast-compile=%s"},
};
/* clang-format on */

/* Option `opt` with value[0..len) (a bool's "0" or "1") in nvcc's spelling. */
static void add_option(nvcc_line *l, int opt, const char *value, size_t len) {
  if (opt == CUCORE_OPT_ARCH) {
    snprintf(l->arch, sizeof l->arch, "%.*s", (int)len, value);
    return;
  }
  int on = len == 1 && value[0] == '1';
  for (size_t k = 0; k < sizeof nvcc_flags / sizeof nvcc_flags[0]; k++) {
    if ((int)nvcc_flags[k].opt != opt) continue;
    if (nvcc_flags[k].kind == NVCC_VALUE) add_word(l, nvcc_flags[k].flag, value, len);
    if (nvcc_flags[k].kind == NVCC_BOOL)
      add_word(l, nvcc_flags[k].flag, on ? "true" : "false", on ? 4 : 5);
    if (nvcc_flags[k].kind == NVCC_SWITCH && on) add_word(l, nvcc_flags[k].flag, "", 0);
  }
}

/* The option of the library's table that line[0..len) names, or -1. */
static int option_named(const char *name, size_t len) {
  for (int i = 0; i < CUCORE_OPT_COUNT; i++) {
    const char *n = cucore_option_name((cucore_option)i);
    if (strlen(n) == len && strncmp(n, name, len) == 0) return i;
  }
  return -1;
}

/* 1 when a line of the canonical text starts an entry ("name=", "header="), 0 when it goes on
 * with the value before it (a value that holds a newline). */
static int starts_entry(const char *line) {
  size_t n = strcspn(line, "=\n");
  return line[n] == '=' && (option_named(line, n) >= 0 || (n == 6 && !strncmp(line, "header", 6)));
}

/* The compile options of `s` in nvcc's spelling (nvcc_flags), the arch given into l->arch.
 * Returns 0, or -1 after saying why. */
static int translate(const cli_source *s, const char *verb, nvcc_line *l) {
  const char *text = NULL;
  if (cucore_options_canonical(s->opts, &text) != CUCORE_OK) {
    fprintf(stderr, "cucore %s: the compile options for nvcc: %s\n", verb, cli_message());
    return -1;
  }
  for (const char *p = text; *p;) {
    size_t n = strcspn(p, "=\n");
    const char *v = p[n] == '=' ? p + n + 1 : p + n, *end = v + strcspn(v, "\n");
    while (*end == '\n' && end[1] && !starts_entry(end + 1)) end += 1 + strcspn(end + 1, "\n");
    if (p[n] == '=' && option_named(p, n) >= 0)
      add_option(l, option_named(p, n), v, (size_t)(end - v));
    p = *end ? end + 1 : end;
  }
  return 0;
}

/* The most of nvcc's messages kept in memory; the rest is counted, not kept. */
#define NVCC_LOG_MAX (4u << 20)

/* Reads the child's messages to their end (kept up to NVCC_LOG_MAX bytes). */
static char *read_messages(int fd, size_t *dropped) {
  size_t cap = 0, len = 0;
  char *buf = cli_grow(NULL, &cap, 4096, 1, "nvcc's messages");
  *dropped = 0;
  char chunk[4096];
  for (;;) {
    ssize_t n = read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (!buf || len + (size_t)n + 1 > NVCC_LOG_MAX) {
      *dropped += (size_t)n;
      continue;
    }
    char *b = cli_grow(buf, &cap, len + (size_t)n + 1, 1, "nvcc's messages");
    if (!b) {
      *dropped += (size_t)n;
      continue;
    }
    buf = b;
    memcpy(buf + len, chunk, (size_t)n);
    len += (size_t)n;
  }
  if (buf) buf[len] = '\0';
  return buf;
}

/* Runs nvcc with its messages on a pipe, shown through cli_log_print once it is done.
 * Returns its wait status, or -1 after saying why it could not run. */
static int run_nvcc(cli_source *s, const char *verb, char **argv) {
  int fds[2];
  if (pipe(fds) != 0) {
    fprintf(stderr, "cucore %s: cannot make a pipe: %s\n", verb, strerror(errno));
    return -1;
  }
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    dup2(fds[1], 1); /* never on stdout (JSON) */
    dup2(fds[1], 2);
    close(fds[1]);
    execv(argv[0], argv);
    _exit(127);
  }
  close(fds[1]);
  if (pid < 0) {
    close(fds[0]);
    fprintf(stderr, "cucore %s: cannot run %s: %s\n", verb, argv[0], strerror(errno));
    return -1;
  }
  size_t dropped = 0;
  char *log = read_messages(fds[0], &dropped);
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  cli_log_print(verb, log, s->log_path);
  if (dropped) fprintf(stderr, "(%zu more bytes of nvcc's messages were not kept)\n", dropped);
  free(log);
  return status;
}

/* The object nvcc made: every name expression must name one of its kernels (nvcc makes only
 * the template instances the file itself makes), and its arch is read from it. */
static int load_output(const char *verb, const char *file, const char *outpath,
                       cucore_code_type target, cli_source *s, cucore_object **out, int *arch) {
  char *data = NULL;
  size_t size = 0;
  int rc = cli_read_file(verb, outpath, &data, &size);
  if (rc) return rc;
  cucore_binary *bin = NULL;
  if (cucore_binary_open(data, size, target, 0, &bin) == CUCORE_OK) {
    cucore_binary_info bi;
    if (cucore_binary_get_info(bin, &bi) == CUCORE_OK && bi.arch) *arch = bi.arch;
    for (int e = 0; e < s->exprs.n && rc == 0; e++) {
      const cucore_kernel_info *k = NULL;
      if (cucore_binary_find_kernel(bin, s->exprs.v[e], &k) != CUCORE_OK) {
        fprintf(stderr,
                "cucore %s: %s: nvcc's result has no kernel `%s`: %s (nvcc makes only "
                "the template instances the file makes: add `template __global__ void "
                "NAME<T>(...);` to it)\n",
                verb, file, s->exprs.v[e], cucore_last_error());
        rc = CLI_EXIT_FAILURE;
      }
    }
    cucore_binary_destroy(bin);
  }
  if (rc == 0) { /* copied by the object; named after the source in messages */
    cucore_status st = cucore_object_from_memory(data, size, target, file, out);
    if (st != CUCORE_OK) rc = cli_fail(verb, file, st);
  }
  free(data);
  return rc;
}

/* The "-arch=" flag for nvcc: the arch given, else the current GPU's (-1 when neither). */
static int arch_flag(const char *verb, char *arch, size_t arch_n, cucore_code_type target,
                     char *flag, size_t flag_n) {
  if (!arch[0]) { /* the current GPU's, as for NVRTC */
    cucore_device_props p;
    if (cucore_device_get_props(0, &p) != CUCORE_OK) {
      fprintf(stderr, "cucore %s: give --arch sm_XX: there is no GPU to take it from (%s)\n", verb,
              cucore_last_error());
      return -1;
    }
    snprintf(arch, arch_n, "sm_%d", p.arch);
  }
  /* nvcc -ptx wants a virtual architecture. */
  const char *digits = arch + strcspn(arch, "0123456789");
  if (target == CUCORE_CODE_PTX)
    snprintf(flag, flag_n, "-arch=compute_%s", digits);
  else
    snprintf(flag, flag_n, "-arch=%s", arch);
  return atoi(digits);
}

int cli_nvcc_compile(cli_source *s, const char *verb, const char *file, cucore_code_type target,
                     cucore_object **out, cli_compile_info *info) {
  *out = NULL;
  char nvcc[4096];
  if (find_nvcc(nvcc, sizeof nvcc) != 0) {
    fprintf(stderr,
            "cucore %s: nvcc not found (looked at $CUCORE_NVCC, or in $CUDA_HOME/bin, "
            "$CUDA_PATH/bin, /usr/local/cuda/bin and PATH)\n",
            verb);
    return CLI_EXIT_FAILURE;
  }
  const char *kind = target == CUCORE_CODE_PTX      ? "-ptx"
                     : target == CUCORE_CODE_FATBIN ? "-fatbin"
                     : target == CUCORE_CODE_CUBIN  ? "-cubin"
                                                    : NULL;
  if (!kind) {
    fprintf(stderr, "cucore %s: with nvcc the target is a cubin, PTX or a fatbin, not %s\n", verb,
            cucore_code_type_name(target));
    return CLI_EXIT_FAILURE;
  }
  nvcc_line line, *l = &line;
  memset(l, 0, sizeof *l);
  snprintf(l->arch, sizeof l->arch, "%s", s->arch);
  l->argv[l->argc++] = nvcc;
  l->argv[l->argc++] = (char *)kind;
  if (translate(s, verb, l)) return CLI_EXIT_FAILURE;
  char archflag[96];
  int arch_num = arch_flag(verb, l->arch, sizeof l->arch, target, archflag, sizeof archflag);
  if (arch_num < 0) return CLI_EXIT_FAILURE;
  char **argv = l->argv;
  int argc = l->argc;
  argv[argc++] = archflag;
  char dir[] = "/tmp/cucore-nvcc-XXXXXX";
  if (!mkdtemp(dir)) {
    fprintf(stderr, "cucore %s: cannot make a temporary directory: %s\n", verb, strerror(errno));
    return CLI_EXIT_FAILURE;
  }
  char outpath[sizeof dir + 16];
  snprintf(outpath, sizeof outpath, "%s/out.bin", dir);
  argv[argc++] = (char *)"-o";
  argv[argc++] = outpath;
  argv[argc++] = (char *)file;
  argv[argc] = NULL;
  double t0 = cli_now_ms();
  int status = run_nvcc(s, verb, argv);
  int rc = CLI_EXIT_FAILURE;
  if (status >= 0 && (!WIFEXITED(status) || WEXITSTATUS(status) != 0))
    fprintf(stderr, "cucore %s: %s: nvcc %s failed (exit %d)\n", verb, file, kind,
            WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  else if (status >= 0)
    rc = load_output(verb, file, outpath, target, s, out, &arch_num);
  if (info) {
    info->ms = cli_now_ms() - t0;
    info->arch = arch_num;
    info->cache = CUCORE_CACHE_NOT_USED;
    snprintf(info->cache_reason, sizeof info->cache_reason,
             "compiled by nvcc, which is not cached");
  }
  unlink(outpath);
  rmdir(dir);
  return rc;
}
