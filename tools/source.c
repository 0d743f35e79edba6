/* source.c -- what every verb that takes a source file shares: the compile's own flags (the
 * table cli_source_opts, beside the library's compile options; both read by opt.c), name
 * expressions, reading the file, compiling with the log on stderr. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

const cli_opt cli_source_opts[] = {
    {.name = "--name-expr",
     .kind = CLI_OPT_LIST,
     CLI_AT(cli_source, exprs),
     .arg = "EXPR",
     .need = "a C++ name expression such as 'scale<float>'",
     .help = "registers a C++ name expression ('scale<float>', '&ns::table') with NVRTC,\n"
             "so that its lowered name can be looked up; repeatable"},
    {.name = "--nvcc",
     .kind = CLI_OPT_FLAG,
     CLI_AT(cli_source, nvcc),
     .help = "compile .cu files with the toolkit's nvcc, not NVRTC: whole programs with\n"
             "host code (CUDA samples, llm.c); also tried, with a note, when NVRTC\n"
             "cannot compile a file because of host code or a host header"},
    {.name = "--log",
     .kind = CLI_OPT_TEXT,
     CLI_AT(cli_source, log_path),
     .arg = "FILE",
     .need = "a file name for the whole compile log",
     .nonempty = 1,
     .help = "write the whole compile log to FILE (the terminal shows its first 50 lines)"},
    {0}};

int cli_source_init(cli_source *s) {
  memset(s, 0, sizeof *s);
  if (cucore_options_create(&s->opts) != CUCORE_OK) {
    fprintf(stderr, "cucore: %s\n", cucore_last_error());
    return -1;
  }
  return 0;
}

void cli_source_free(cli_source *s) {
  cucore_program_destroy(s->program);
  cucore_options_destroy(s->opts);
  free(s->exprs.v);
  free(s->raw);
  memset(s, 0, sizeof *s);
}

int cli_source_add_expr(cli_source *s, const char *expr) {
  return cli_list_keep(&s->exprs, expr) ? 0 : -1;
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

/* The program of `code` (`size` bytes of `file`) with the name expressions; 0, or an exit code
 * after saying why. */
static int make_program(cli_source *s, const char *verb, const char *file, const char *code,
                        size_t size, cucore_program **prog) {
  *prog = NULL;
  cucore_status st = cucore_program_create(type_from_name(file), code, size, file, s->opts, prog);
  for (int e = 0; e < s->exprs.n && st == CUCORE_OK; e++)
    st = cucore_program_add_name_expression(*prog, s->exprs.v[e]);
  if (st == CUCORE_OK) return 0;
  cucore_program_destroy(*prog);
  *prog = NULL;
  return cli_fail(verb, file, st);
}

int cli_source_program(cli_source *s, const char *verb, const char *file, cucore_program **prog) {
  char *code = NULL;
  size_t size = 0;
  *prog = NULL;
  int rc = read_source(verb, file, &code, &size);
  if (rc == 0) rc = make_program(s, verb, file, code, size, prog);
  free(code);
  return rc;
}

/* The compile's log on stderr (and whole in --log FILE): as records when the verb asked. */
static void show_log(cli_source *s, const char *verb, const cucore_program *prog, const char *log) {
  if (s->diagnostics && prog)
    cli_diag_print(verb, prog, log, s->log_path);
  else
    cli_log_print(verb, log, s->log_path);
}

/* After NVRTC failed: nvcc only for what it can fix (host code, a host header), said in a
 * line; an option NVRTC refused is the command line's error; anything else is the file's. */
static int after_nvrtc_failure(cli_source *s, const char *verb, const char *file,
                               cucore_code_type target, cucore_status st,
                               const cucore_program *prog, const char *log, cucore_object **out,
                               cli_compile_info *info) {
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
  show_log(s, verb, prog, log);
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
    snprintf(info->cache_key, sizeof info->cache_key, "%s", ci.key);
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
  rc = make_program(s, verb, file, code, size, &prog);
  free(code);
  if (rc) return rc;
  /* Progress for people: compiling can take seconds; say what is happening on a terminal. */
  int tty = isatty(2);
  if (tty) fprintf(stderr, "compiling %s ...", file);
  double t0 = cli_now_ms();
  cucore_status st = cucore_program_compile(prog, target, out);
  if (tty) text_terminal_control("\r\033[K");
  fill_info(info, prog, t0);
  const char *log = "";
  cucore_program_get_log(prog, &log);
  if (st != CUCORE_OK)
    rc = after_nvrtc_failure(s, verb, file, target, st, prog, log, out, info);
  else
    show_log(s, verb, prog, log);
  if (s->diagnostics) { /* kept for the verb's report */
    cucore_program_destroy(s->program);
    s->program = prog;
  } else {
    cucore_program_destroy(prog);
  }
  return rc;
}
