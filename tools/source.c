/* source.c -- what every verb that takes a source file shares: the compile options (from the
 * library's option table), name expressions, reading the file, compiling with the log on
 * stderr. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

int cli_source_init(cli_source *s) {
  memset(s, 0, sizeof *s);
  if (cucore_options_create(&s->opts) != CUCORE_OK) {
    fprintf(stderr, "cucore: %s\n", cucore_last_error());
    return -1;
  }
  return 0;
}

void cli_source_free(cli_source *s) {
  cucore_options_destroy(s->opts);
  free(s->exprs);
  free(s->raw);
  memset(s, 0, sizeof *s);
}

int cli_source_add_expr(cli_source *s, const char *expr) {
  const char **e = realloc(s->exprs, (size_t)(s->expr_count + 1) * sizeof *e);
  if (!e) return -1;
  s->exprs = e;
  s->exprs[s->expr_count++] = expr;
  return 0;
}

int cli_source_option(cli_source *s, const char *verb, int argc, char **argv, int i) {
  const char *a = argv[i];
  if (strcmp(a, "--name-expr") == 0 || strncmp(a, "--name-expr=", 12) == 0) {
    const char *v = a[11] == '=' ? a + 12 : (i + 1 < argc ? argv[i + 1] : NULL);
    if (!v) {
      cli_usage(verb, "--name-expr needs a C++ name expression such as 'scale<float>'");
      return -1;
    }
    if (cli_source_add_expr(s, v)) return -1;
    return a[11] == '=' ? 1 : 2;
  }
  if (strcmp(a, "--nvcc") == 0) {
    s->nvcc = 1;
    return 1;
  }
  if (a[0] != '-' || !a[1]) return 0;
  int used = 0;
  cucore_status st = cucore_options_parse(s->opts, a, i + 1 < argc ? argv[i + 1] : NULL, &used);
  if (st == CUCORE_OK) {
    char **r = realloc(s->raw, (size_t)(s->raw_count + used) * sizeof *r);
    if (!r) return -1;
    s->raw = r;
    for (int k = 0; k < used; k++) s->raw[s->raw_count++] = argv[i + k];
    return used;
  }
  /* Not a compile option: the verb says so (with the nearest of its own and the compile
   * options). UNKNOWN_OPTION is the library's status for it; the message test is for a library
   * from before that status and goes when both are merged. */
  if (CUCORE_CODE(st) == CUCORE_UNKNOWN_OPTION || strstr(cucore_last_error(), "unknown option") ||
      strstr(cucore_last_error(), "is not an option"))
    return 0;
  cli_usage(verb, "%s", cucore_last_error());
  return -1;
}

static cucore_code_type type_from_name(const char *file) {
  const char *dot = strrchr(file, '.');
  if (!dot) return CUCORE_CODE_AUTO;
  if (strcmp(dot, ".cu") == 0 || strcmp(dot, ".cuh") == 0 || strcmp(dot, ".cpp") == 0)
    return CUCORE_CODE_CUDA_CPP;
  if (strcmp(dot, ".ptx") == 0) return CUCORE_CODE_PTX;
  if (strcmp(dot, ".ll") == 0 || strcmp(dot, ".bc") == 0 || strcmp(dot, ".nvvm") == 0)
    return CUCORE_CODE_NVVM;
  return CUCORE_CODE_AUTO;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int cli_source_compile(cli_source *s, const char *verb, const char *file, cucore_code_type target,
                       cucore_object **out, cli_compile_info *info) {
  *out = NULL;
  if (s->nvcc && type_from_name(file) == CUCORE_CODE_CUDA_CPP) {
    if (info) memset(info, 0, sizeof *info);
    return cli_nvcc_compile(s, verb, file, target, out);
  }
  char *code = NULL;
  size_t size = 0;
  int rc = cli_read_file(verb, file, &code, &size);
  if (rc) return rc;
  if (size == 0) {
    free(code);
    fprintf(stderr, "cucore %s: `%s` is empty\n", verb, file);
    return CLI_EXIT_FAILURE;
  }
  cucore_program *prog = NULL;
  cucore_status st = cucore_program_create(type_from_name(file), code, size, file, s->opts, &prog);
  free(code);
  if (st != CUCORE_OK) return cli_fail(verb, file, st);
  for (int e = 0; e < s->expr_count && st == CUCORE_OK; e++)
    st = cucore_program_add_name_expression(prog, s->exprs[e]);
  /* Progress for people: compiling can take seconds; say what is happening on a terminal. */
  int tty = isatty(2);
  if (tty) fprintf(stderr, "compiling %s ...", file);
  double t0 = now_ms();
  if (st == CUCORE_OK) st = cucore_program_compile(prog, target, out);
  if (tty) text_terminal_control("\r\033[K");
  if (info) {
    memset(info, 0, sizeof *info);
    info->ms = now_ms() - t0;
    cucore_cache_info ci;
    if (cucore_program_cache_info(prog, &ci) == CUCORE_OK) {
      info->cache = ci.result;
      snprintf(info->cache_reason, sizeof info->cache_reason, "%s", ci.reason);
    }
  }
  const char *log = "";
  cucore_program_log(prog, &log);
  /* A whole program (host code, <cstdio>, the runtime API: CUDA samples, llm.c) is beyond
   * NVRTC; nvcc takes it and keeps the device code. Its messages decide from here. */
  if (CUCORE_CODE(st) == CUCORE_COMPILE_ERROR && type_from_name(file) == CUCORE_CODE_CUDA_CPP &&
      cli_nvcc_available()) {
    fprintf(stderr, "note: NVRTC could not compile `%s` (%.*s); compiling it with nvcc instead "
            "(--nvcc goes there directly)\n", file, (int)strcspn(log ? log : "", "\n"),
            log ? log : "");
    cucore_program_destroy(prog);
    return cli_nvcc_compile(s, verb, file, target, out);
  }
  if (log && log[0]) fprintf(stderr, "%s%s", log, log[strlen(log) - 1] == '\n' ? "" : "\n");
  cucore_program_destroy(prog);
  if (st != CUCORE_OK) return cli_fail(verb, file, st);
  return 0;
}

void cli_print_option_help(FILE *f) {
  for (int i = 0; i < CUCORE_OPT_COUNT; i++)
    fprintf(f, "  --%-28s %s\n", cucore_option_name((cucore_option)i),
            cucore_option_help((cucore_option)i));
  fprintf(f, "  --%-28s %s\n", "nvcc",
          "compile .cu files with the toolkit's nvcc, not NVRTC: whole programs with host code "
          "(CUDA samples, llm.c); also tried, with a note, when NVRTC cannot compile a file");
}

int cli_parse_dims(const char *s, unsigned d[3], unsigned max) {
  d[0] = d[1] = d[2] = 1;
  char *end = NULL;
  for (int i = 0; i < 3; i++) {
    if (*s == '-' || *s == '+') return -1;
    unsigned long v = strtoul(s, &end, 10);
    if (end == s || v < 1 || v > max) return -1;
    d[i] = (unsigned)v;
    if (*end == '\0') return 0;
    if (*end != ',' && *end != 'x') return -1;
    s = end + 1;
  }
  return *end ? -1 : 0;
}
