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

/* Options that take a value, in cucore's spelling, and nvcc's flag for them. */
static const struct {
  const char *name, *flag;
} valued[] = {
    {"define", "-D"},
    {"undefine", "-U"},
    {"include-path", "-I"},
    {"pre-include", "-include"},
    {"std", "-std="},
    {"maxrregcount", "-maxrregcount="},
    {"ptxas-option", "-Xptxas="},
};
/* Switches, and nvcc's flag for them. */
static const struct {
  const char *name, *flag;
} switches[] = {
    {"use-fast-math", "-use_fast_math"},
    {"lineinfo", "-lineinfo"},
    {"debug", "-G"},
    {"relocatable-device-code", "-rdc=true"},
    {"extra-device-vectorization", "-extra-device-vectorization"},
    {"ftz", "-ftz=true"},
    {"prec-div", "-prec-div=true"},
    {"prec-sqrt", "-prec-sqrt=true"},
    {"fmad", "-fmad=true"},
    {"default-device", "-default-device"},
};

/* Adds flag + value to argv through the string store. */
static void add_joined(const char *flag, const char *value, char **argv, int *argc, char *store,
                       size_t *store_used, size_t store_n) {
  int n = snprintf(store + *store_used, store_n - *store_used, "%s%s", flag, value);
  if (n < 0 || (size_t)n >= store_n - *store_used) return;
  argv[(*argc)++] = store + *store_used;
  *store_used += (size_t)n + 1;
}

/* Adds nvcc's spelling of the compile option in raw[i] (and raw[i+1]) to argv; returns the
 * number of raw tokens used. Sets *arch from
 * --arch. Options nvcc has no use for (the toolkit-include switch, NVRTC-only settings) are
 * dropped. */
static int translate(char **raw, int count, int i, char **argv, int *argc, char *arch,
                     size_t arch_n, char *store, size_t *store_used, size_t store_n) {
  const char *a = raw[i];
  if (strcmp(a, "-G") == 0) return argv[(*argc)++] = raw[i], 1;
  if (a[0] == '-' && (a[1] == 'D' || a[1] == 'U' || a[1] == 'I') && (!a[2] || a[2] == '=')) {
    const char *v = a[2] ? a + 3 : (i + 1 < count ? raw[i + 1] : NULL);
    char flag[3] = {'-', a[1], 0};
    if (v) add_joined(flag, v, argv, argc, store, store_used, store_n);
    return a[2] ? 1 : 2;
  }
  if (a[0] == '-' && (a[1] == 'D' || a[1] == 'U' || a[1] == 'I'))
    return argv[(*argc)++] = raw[i], 1;
  const char *name = a;
  while (*name == '-') name++;
  const char *eq = strchr(name, '=');
  size_t nlen = eq ? (size_t)(eq - name) : strlen(name);
  const char *value = eq ? eq + 1 : (i + 1 < count ? raw[i + 1] : NULL);
  int used_value = eq ? 0 : 1;
  if (nlen == 4 && strncmp(name, "arch", 4) == 0 && value) {
    snprintf(arch, arch_n, "%s", value);
    return 1 + used_value;
  }
  for (size_t k = 0; k < sizeof valued / sizeof valued[0]; k++)
    if (strlen(valued[k].name) == nlen && strncmp(name, valued[k].name, nlen) == 0 && value) {
      add_joined(valued[k].flag, value, argv, argc, store, store_used, store_n);
      return 1 + used_value;
    }
  for (size_t k = 0; k < sizeof switches / sizeof switches[0]; k++)
    if (strlen(switches[k].name) == nlen && strncmp(name, switches[k].name, nlen) == 0) {
      argv[(*argc)++] = (char *)switches[k].flag;
      /* A switch may carry a value (--fmad=false, or --fmad false): only a true one adds. */
      if (eq &&
          (strcmp(value, "false") == 0 || strcmp(value, "0") == 0 || strcmp(value, "off") == 0))
        (*argc)--;
      return 1;
    }
  return 1; /* an option nvcc does not need */
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
    for (int e = 0; e < s->expr_count && rc == 0; e++) {
      const cucore_kernel_info *k = NULL;
      if (cucore_binary_find_kernel(bin, s->exprs[e], &k) != CUCORE_OK) {
        fprintf(stderr,
                "cucore %s: %s: nvcc's result has no kernel `%s`: %s (nvcc makes only "
                "the template instances the file makes: add `template __global__ void "
                "NAME<T>(...);` to it)\n",
                verb, file, s->exprs[e], cucore_last_error());
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
  char *argv[256], store[8192], arch[64];
  snprintf(arch, sizeof arch, "%s", s->arch);
  size_t store_used = 0;
  int argc = 0;
  argv[argc++] = nvcc;
  argv[argc++] = (char *)kind;
  for (int i = 0; i < s->raw_count && argc < 240;)
    i += translate(s->raw, s->raw_count, i, argv, &argc, arch, sizeof arch, store, &store_used,
                   sizeof store);
  char archflag[96];
  int arch_num = arch_flag(verb, arch, sizeof arch, target, archflag, sizeof archflag);
  if (arch_num < 0) return CLI_EXIT_FAILURE;
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
