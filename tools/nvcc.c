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
    {"define", "-D"},       {"undefine", "-U"},     {"include-path", "-I"},
    {"pre-include", "-include"}, {"std", "-std="}, {"maxrregcount", "-maxrregcount="},
    {"ptxas-option", "-Xptxas="},
};
/* Switches, and nvcc's flag for them. */
static const struct {
  const char *name, *flag;
} switches[] = {
    {"use-fast-math", "-use_fast_math"}, {"lineinfo", "-lineinfo"},
    {"debug", "-G"},                     {"relocatable-device-code", "-rdc=true"},
    {"extra-device-vectorization", "-extra-device-vectorization"},
    {"ftz", "-ftz=true"},                {"prec-div", "-prec-div=true"},
    {"prec-sqrt", "-prec-sqrt=true"},    {"fmad", "-fmad=true"},
    {"default-device", "-default-device"},
};

/* Adds nvcc's spelling of the compile option in raw[i] (and raw[i+1]) to argv; returns the
 * number of raw tokens used. Sets *arch from --arch. Options nvcc has no use for (the
 * toolkit-include switch, NVRTC-only settings) are dropped. */
static int translate(char **raw, int count, int i, char **argv, int *argc, char *arch,
                     size_t arch_n, char *store, size_t *store_used, size_t store_n) {
  const char *a = raw[i];
  if (strncmp(a, "-D", 2) == 0 && a[2]) return argv[(*argc)++] = raw[i], 1;
  if (strncmp(a, "-I", 2) == 0 && a[2]) return argv[(*argc)++] = raw[i], 1;
  if (strcmp(a, "-G") == 0) return argv[(*argc)++] = raw[i], 1;
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
      int n = snprintf(store + *store_used, store_n - *store_used, "%s%s", valued[k].flag, value);
      if (n < 0 || (size_t)n >= store_n - *store_used) return 1 + used_value;
      argv[(*argc)++] = store + *store_used;
      *store_used += (size_t)n + 1;
      return 1 + used_value;
    }
  for (size_t k = 0; k < sizeof switches / sizeof switches[0]; k++)
    if (strlen(switches[k].name) == nlen && strncmp(name, switches[k].name, nlen) == 0) {
      argv[(*argc)++] = (char *)switches[k].flag;
      /* A switch may carry a value (--fmad=false, or --fmad false): only a true one adds. */
      if (eq && (strcmp(value, "false") == 0 || strcmp(value, "0") == 0 ||
                 strcmp(value, "off") == 0))
        (*argc)--;
      return 1;
    }
  return 1; /* an option nvcc does not need */
}

int cli_nvcc_compile(cli_source *s, const char *verb, const char *file, cucore_code_type target,
                     cucore_object **out) {
  *out = NULL;
  char nvcc[4096];
  if (find_nvcc(nvcc, sizeof nvcc) != 0) {
    fprintf(stderr, "cucore %s: nvcc not found (looked at $CUCORE_NVCC, or in $CUDA_HOME/bin, "
            "$CUDA_PATH/bin, /usr/local/cuda/bin and PATH)\n", verb);
    return CLI_EXIT_FAILURE;
  }
  const char *kind = target == CUCORE_CODE_PTX      ? "-ptx"
                     : target == CUCORE_CODE_FATBIN ? "-fatbin"
                     : target == CUCORE_CODE_CUBIN  ? "-cubin"
                                                    : NULL;
  if (!kind) {
    fprintf(stderr, "cucore %s: with nvcc the target is a cubin, PTX or a fatbin, not %s\n",
            verb, cucore_code_type_name(target));
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
  if (!arch[0]) { /* the current GPU's, as for NVRTC */
    cucore_device_props p;
    if (cucore_device_props_get(0, &p) != CUCORE_OK) {
      fprintf(stderr, "cucore %s: give --arch sm_XX: there is no GPU to take it from (%s)\n",
              verb, cucore_last_error());
      return CLI_EXIT_FAILURE;
    }
    snprintf(arch, sizeof arch, "sm_%d", p.arch);
  }
  /* nvcc -ptx wants a virtual architecture. */
  char archflag[96];
  const char *digits = arch + strcspn(arch, "0123456789");
  if (target == CUCORE_CODE_PTX)
    snprintf(archflag, sizeof archflag, "-arch=compute_%s", digits);
  else
    snprintf(archflag, sizeof archflag, "-arch=%s", arch);
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
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(2, 1); /* nvcc's messages go with the other compile logs, never on stdout (JSON) */
    execv(nvcc, argv);
    _exit(127);
  }
  int status = 0;
  int rc = CLI_EXIT_FAILURE;
  if (pid < 0 || waitpid(pid, &status, 0) < 0) {
    fprintf(stderr, "cucore %s: cannot run %s: %s\n", verb, nvcc, strerror(errno));
  } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "cucore %s: %s: nvcc %s failed (exit %d)\n", verb, file, kind,
            WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  } else {
    char *data = NULL;
    size_t size = 0;
    rc = cli_read_file(verb, outpath, &data, &size);
    if (rc == 0) { /* copied by the object; named after the source in messages */
      cucore_status st = cucore_object_from_memory(data, size, target, file, out);
      free(data);
      if (st != CUCORE_OK) rc = cli_fail(verb, file, st);
    }
  }
  unlink(outpath);
  rmdir(dir);
  return rc;
}
