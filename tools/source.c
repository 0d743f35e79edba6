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
  const char **e = cli_grow(s->exprs, &s->expr_cap, (size_t)s->expr_count + 1, sizeof *e,
                            "the list of name expressions");
  if (!e) return -1;
  s->exprs = e;
  s->exprs[s->expr_count++] = expr;
  return 0;
}

/* --log FILE / --log=FILE: where the whole compile log goes (the terminal shows its head). */
static int log_option(cli_source *s, const char *verb, int argc, char **argv, int i) {
  const char *a = argv[i];
  const char *v = a[5] == '=' ? a + 6 : (i + 1 < argc ? argv[i + 1] : NULL);
  if (!v || !v[0]) return cli_usage(verb, "--log needs a file name for the whole compile log"), -1;
  s->log_path = v;
  return a[5] == '=' ? 1 : 2;
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
  if (strcmp(a, "--log") == 0 || strncmp(a, "--log=", 6) == 0)
    return log_option(s, verb, argc, argv, i);
  if (a[0] != '-' || !a[1]) return 0;
  int used = 0;
  cucore_status st = cucore_options_parse(s->opts, a, i + 1 < argc ? argv[i + 1] : NULL, &used);
  if (st == CUCORE_OK) {
    char **r = cli_grow(s->raw, &s->raw_cap, (size_t)s->raw_count + (size_t)used, sizeof *r,
                        "the list of compile options");
    if (!r) return -1;
    s->raw = r;
    for (int k = 0; k < used; k++) s->raw[s->raw_count++] = argv[i + k];
    return used;
  }
  /* Not a compile option (CUCORE_UNKNOWN_OPTION): the verb says so, with the nearest of its
   * own and the compile options. */
  if (CUCORE_CODE(st) == CUCORE_UNKNOWN_OPTION) return 0;
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

/* Sources that must be text: CUDA C++, PTX, NVVM IR text (.bc is bitcode, binary). */
static int is_text_source(const char *file) {
  const char *dot = strrchr(file, '.');
  return dot && type_from_name(file) != CUCORE_CODE_AUTO && strcmp(dot, ".bc") != 0;
}

/* Reads `file` and checks it is something to compile: not empty, text where it must be. */
static int read_source(const char *verb, const char *file, char **code, size_t *size) {
  int rc = cli_read_file(verb, file, code, size);
  if (rc) return rc;
  if (*size == 0) {
    fprintf(stderr, "cucore %s: `%s` is empty\n", verb, file);
    rc = CLI_EXIT_FAILURE;
  } else if (is_text_source(file)) {
    rc = cli_check_text(verb, file, *code, *size);
  }
  if (rc) {
    free(*code);
    *code = NULL;
  }
  return rc;
}

/* After NVRTC failed: nvcc only for what it can fix (host code, a host header), said in a
 * line; an option NVRTC refused is the command line's error; anything else is the file's. */
static int after_nvrtc_failure(cli_source *s, const char *verb, const char *file,
                               cucore_code_type target, cucore_status st, const char *log,
                               cucore_object **out, cli_compile_info *info) {
  char why[1024];
  cli_nvrtc_failure kind = cli_nvrtc_classify(st, log, why, sizeof why);
  if (kind == CLI_NVRTC_HOST && type_from_name(file) == CUCORE_CODE_CUDA_CPP &&
      cli_nvcc_available()) {
    fprintf(stderr,
            "note: NVRTC cannot compile `%s`: %s; compiling it with nvcc instead "
            "(--nvcc goes there directly)\n",
            file, why);
    return cli_nvcc_compile(s, verb, file, target, out, info);
  }
  cli_log_print(verb, log, s->log_path);
  if (kind == CLI_NVRTC_OPTION)
    return cli_usage(verb, "a compile option was refused: %s (not tried with nvcc)", why);
  if (kind == CLI_NVRTC_NAME_EXPR)
    fprintf(stderr,
            "cucore %s: %s: a name expression (--name-expr, or inspect's --kernel) names "
            "no __global__ function or variable of the file (%s); not tried with nvcc\n",
            verb, file, why);
  else if (kind == CLI_NVRTC_HOST)
    fprintf(stderr, "note: nvcc could compile `%s` (%s), but none was found\n", file, why);
  return kind == CLI_NVRTC_NAME_EXPR ? CLI_EXIT_FAILURE : cli_fail(verb, file, st);
}

static void fill_info(cli_compile_info *info, cucore_program *prog, double t0) {
  if (!info) return;
  memset(info, 0, sizeof *info);
  info->ms = cli_now_ms() - t0;
  cucore_cache_info ci;
  if (cucore_program_get_cache_info(prog, &ci) == CUCORE_OK) {
    info->cache = ci.result;
    snprintf(info->cache_reason, sizeof info->cache_reason, "%s", ci.reason);
  }
}

int cli_source_compile(cli_source *s, const char *verb, const char *file, cucore_code_type target,
                       cucore_object **out, cli_compile_info *info) {
  *out = NULL;
  if (info) memset(info, 0, sizeof *info);
  char *code = NULL;
  size_t size = 0;
  int rc = 0;
  if (s->log_path) { /* the log file is an output like any other: never the input */
    cli_input_add(file);
    rc = cli_output_check(verb, "--log", s->log_path);
  }
  if (rc == 0) rc = read_source(verb, file, &code, &size);
  if (rc) return rc;
  cli_cache_warn_once(); /* an unusable cache is said once; the compile goes on without it */
  if (s->nvcc && type_from_name(file) == CUCORE_CODE_CUDA_CPP) {
    free(code);
    return cli_nvcc_compile(s, verb, file, target, out, info);
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
  double t0 = cli_now_ms();
  if (st == CUCORE_OK) st = cucore_program_compile(prog, target, out);
  if (tty) text_terminal_control("\r\033[K");
  fill_info(info, prog, t0);
  const char *log = "";
  cucore_program_get_log(prog, &log);
  if (st != CUCORE_OK)
    rc = after_nvrtc_failure(s, verb, file, target, st, log, out, info);
  else
    cli_log_print(verb, log, s->log_path);
  cucore_program_destroy(prog);
  return rc;
}

void cli_print_option_help(FILE *f) {
  for (int i = 0; i < CUCORE_OPT_COUNT; i++)
    fprintf(f, "  --%-28s %s\n", cucore_option_name((cucore_option)i),
            cucore_option_help((cucore_option)i));
  fprintf(f, "  --%-28s %s\n", "nvcc",
          "compile .cu files with the toolkit's nvcc, not NVRTC: whole programs with host code "
          "(CUDA samples, llm.c); also tried, with a note, when NVRTC cannot compile a file "
          "because of host code or a host header");
  fprintf(f, "  --%-28s %s\n", "log FILE",
          "write the whole compile log to FILE (the terminal shows its first 50 lines)");
}
