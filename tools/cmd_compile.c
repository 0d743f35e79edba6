/* cmd_compile.c -- `cucore compile`: CUDA C++, PTX or NVVM IR to PTX, cubin or LTO-IR. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char cmd_compile_help[] =
    "usage: cucore compile FILE [-o OUT] [--arch sm_XX] [--target ptx|cubin|ltoir|fatbin]\n"
    "                      [-D NAME[=VALUE]] [-I DIR] [--std c++17] [--name-expr EXPR]...\n"
    "                      [--json] [any compile option]\n"
    "\n"
    "Compiles FILE (.cu: CUDA C++ through NVRTC; .ptx: PTX through nvJitLink; .ll/.bc: NVVM\n"
    "IR through libNVVM) and writes the result to OUT (default: FILE with the target's\n"
    "extension). Without --arch, the current GPU's architecture is used; without a GPU,\n"
    "--arch is required. The compiler's messages go to stderr, one per record as\n"
    "`file:line:col: severity: message [#number]` followed by the source line and caret the\n"
    "compiler showed (a line of the log it cannot read is shown as it is; --log FILE keeps\n"
    "the raw log). Each --name-expr (a C++ name expression such as 'scale<float>') is\n"
    "registered with NVRTC and its lowered name printed.\n"
    "\n"
    "options (`--flag value` or `--flag=value`):\n"
    "%o"
    "\n"
    "compile options (also accepted by inspect, occupancy and run for .cu files):\n"
    "%s"
    "\n"
    "OUT is written to a temporary beside it and renamed into place, so a failure never leaves\n"
    "a half-written file or removes the previous one.\n"
    "\n"
    "exit status: 0 compiled; 1 compile error (log on stderr), unreadable input or a failed\n"
    "write; 2 usage, or an OUT that is an input (under any name) or cannot be written (both\n"
    "found before compiling). With --json the exit status is the same; a compile error prints\n"
    "{\"input\", \"target\", \"error\", \"diagnostics\"} on stdout, and any other failure\n"
    "leaves stdout empty.\n"
    "\n"
    "examples:\n"
    "  cucore compile saxpy.cu --arch sm_90 -o saxpy.cubin\n"
    "  cucore compile kernels.cu --target ptx --arch sm_80 -DBLOCK=256 --std c++17\n"
    "  cucore compile kernels.cu --target fatbin --gencode sm_80 --gencode sm_90 --gencode "
    "compute_90\n"
    "  cucore compile scale.cu --arch sm_90 --name-expr 'scale<float>' --name-expr "
    "'scale<double>'\n";

static const char *ext_of(cucore_code_type t) {
  return t == CUCORE_CODE_PTX      ? ".ptx"
         : t == CUCORE_CODE_LTOIR  ? ".ltoir"
         : t == CUCORE_CODE_FATBIN ? ".fatbin"
                                   : ".cubin";
}

/* FILE with the extension of `t` in place of its own (malloc'd; NULL out of memory). */
static char *default_output(const char *file, cucore_code_type t) {
  const char *dot = strrchr(file, '.'), *slash = strrchr(file, '/');
  size_t stem = dot && (!slash || dot > slash) ? (size_t)(dot - file) : strlen(file);
  char *out = malloc(stem + 8);
  if (!out) return NULL;
  memcpy(out, file, stem);
  strcpy(out + stem, ext_of(t));
  return out;
}

/* What was compiled and written, for the report. */
typedef struct compiled {
  const char *file, *out;
  cucore_code_type target, made; /* asked for, and made (the lto option makes LTO-IR) */
  cucore_object *obj;
  size_t size;
  cli_compile_info ci;
} compiled;

static void report_json(const cli_source *srcp, const compiled *c) {
  json_out j = {stdout, 0, {0}, 1};
  json_begin_object(&j, NULL);
  json_str(&j, "input", c->file);
  json_str(&j, "output", c->out);
  json_str(&j, "target", cucore_code_type_name(c->made));
  if (c->made != c->target) json_str(&j, "asked", cucore_code_type_name(c->target));
  int arch = 0;
  cucore_object_get_arch(c->obj, &arch);
  if (!arch) arch = c->ci.arch; /* nvcc's object: the arch read from it, or the one given */
  json_int(&j, "arch", arch);
  json_int(&j, "bytes", (long long)c->size);
  json_num(&j, "compile_ms", c->ci.ms);
  json_str(&j, "cache", cucore_cache_result_name(c->ci.cache));
  if (c->ci.cache_reason[0]) json_str(&j, "cache_reason", c->ci.cache_reason);
  if (c->ci.cache_key[0]) json_str(&j, "cache_key", c->ci.cache_key);
  cli_diag_json(&j, "diagnostics", srcp->program);
  json_begin_object(&j, "lowered_names");
  for (int e = 0; e < srcp->exprs.n; e++) {
    const char *low = NULL;
    if (cucore_object_get_lowered_name(c->obj, srcp->exprs.v[e], &low) == CUCORE_OK)
      json_str(&j, srcp->exprs.v[e], low);
  }
  json_end_object(&j);
  json_end_object(&j);
}

/* A compile that ran and failed, with --json: what it said, as records (the exit status stays
 * 1); a failure before the compiler ran, or one that left no record, keeps stdout empty. */
static void report_json_failure(const cli_source *srcp, const compiled *c, const char *error) {
  int n = 0;
  if (!srcp->program || cucore_program_get_diagnostic_count(srcp->program, &n) != CUCORE_OK ||
      n == 0)
    return;
  json_out j = {stdout, 0, {0}, 1};
  json_begin_object(&j, NULL);
  json_str(&j, "input", c->file);
  json_str(&j, "target", cucore_code_type_name(c->target));
  json_str(&j, "error", error);
  cli_diag_json(&j, "diagnostics", srcp->program);
  json_end_object(&j);
}

static void report_text(const cli_source *srcp, const compiled *c) {
  printf("%s -> %s (%s, %zu bytes) in %.1f ms, cache: %s%s%s\n", c->file, c->out,
         cucore_code_type_name(c->made), c->size, c->ci.ms, cucore_cache_result_name(c->ci.cache),
         c->ci.cache_reason[0] ? ": " : "", c->ci.cache_reason);
  if (c->made != c->target)
    printf("  note: %s was asked for; the lto option makes %s, which is linked for the GPU "
           "when loaded (or with cucore_linker_* / nvJitLink)\n",
           cucore_code_type_name(c->target), cucore_code_type_name(c->made));
  for (int e = 0; e < srcp->exprs.n; e++) {
    const char *low = NULL;
    if (cucore_object_get_lowered_name(c->obj, srcp->exprs.v[e], &low) == CUCORE_OK)
      printf("  %s = %s\n", srcp->exprs.v[e], low);
  }
}

/* The output named by -o, or FILE with the extension of `t`; checked (not an input, its folder
 * writable) before any work. *owned holds what was allocated. */
static int output_for(const char *file, const char *out_path, cucore_code_type t, char **owned,
                      const char **out) {
  free(*owned);
  *owned = out_path ? NULL : default_output(file, t);
  *out = out_path ? out_path : *owned;
  if (!*out) return cli_fail("compile", "the output's name", CUCORE_HOST_OUT_OF_MEMORY);
  return cli_output_check("compile", "output", *out);
}

/* Compiles `file` and writes the result to a temporary renamed into place: a failure never
 * leaves a half-written output or removes the previous one. */
static int compile_and_write(cli_source *srcp, const char *file, const char *out_path,
                             cucore_code_type target, int json) {
  compiled c = {file, NULL, target, target, NULL, 0, {0}};
  char *owned = NULL;
  cli_input_add(file);
  int rc = output_for(file, out_path, target, &owned, &c.out);
  if (!rc) {
    rc = cli_source_compile(srcp, "compile", file, target, &c.obj, &c.ci);
    if (rc && json) report_json_failure(srcp, &c, cucore_last_error());
  }
  const void *data = NULL;
  if (!rc) cucore_object_get_code(c.obj, &c.made, &data, &c.size);
  if (!rc && c.made != target && !out_path) /* named for what it holds */
    rc = output_for(file, out_path, c.made, &owned, &c.out);
  if (!rc) rc = cli_write_file("compile", "output", c.out, data, c.size);
  if (!rc && json)
    report_json(srcp, &c);
  else if (!rc)
    report_text(srcp, &c);
  free(owned);
  cucore_object_destroy(c.obj);
  cli_source_free(srcp);
  return rc;
}

/* The verb's command line (its table below). */
typedef struct compile_line {
  const char *out;
  int target; /* index into `targets` */
  int json;
  int timings;
} compile_line;

static int want_timings; /* --timings: the phase table at the end */

static const cucore_code_type targets[] = {CUCORE_CODE_PTX, CUCORE_CODE_CUBIN, CUCORE_CODE_LTOIR,
                                           CUCORE_CODE_FATBIN};

static const cli_opt cmd_compile_opts[] = {
    {.name = "--output",
     .alias = "-o",
     .kind = CLI_OPT_TEXT,
     CLI_AT(compile_line, out),
     .arg = "OUT",
     .help = "where the result goes (default: FILE with the target's extension)"},
    {.name = "--target",
     .kind = CLI_OPT_CHOICE,
     CLI_AT(compile_line, target),
     .arg = "ptx|cubin|ltoir|fatbin",
     .help = "what to make (default: cubin)"},
    {.name = "--json",
     .kind = CLI_OPT_FLAG,
     CLI_AT(compile_line, json),
     .help =
         "one JSON object on stdout: {\"input\", \"output\", \"target\", \"arch\",\n"
         "\"bytes\", \"compile_ms\", \"cache\", \"cache_key\", \"diagnostics\": [{\"severity\",\n"
         "\"file\", \"line\", \"column\", \"number\", \"message\"}], \"lowered_names\"};\n"
         "on a compile error {\"input\", \"target\", \"error\", \"diagnostics\"} (exit status\n"
         "1); on any other failure stdout stays empty and the reason is on stderr"},
    {.name = "--timings",
     .kind = CLI_OPT_FLAG,
     CLI_AT(compile_line, timings),
     .help = CLI_TIMINGS_HELP},
    {0}};

static int compile_body(cli_source *srcp, int argc, char **argv) {
  compile_line line = {NULL, 1, 0, 0};
  const char *file = NULL;
  cli_parse parse = {"compile", cmd_compile_opts, &line, srcp, &file, 1, 0, "input file"};
  int rc = cli_opt_parse(&parse, argc, argv);
  want_timings = line.timings;
  if (rc) return rc;
  const char *out_path = line.out;
  cucore_code_type target = targets[line.target];
  int json = line.json;
  if (!file) {
    cli_source_free(srcp);
    return cli_usage("compile", "no input file; see `cucore help compile`");
  }
  return compile_and_write(srcp, file, out_path, target, json);
}

/* Every exit path frees the verb's options, early usage errors included. */
static int cmd_compile(int argc, char **argv) {
  cli_source src;
  if (cli_source_init(&src)) return CLI_EXIT_FAILURE;
  src.diagnostics = 1; /* the log as records, and the program kept for the report */
  phases_mark_process_start();
  int rc = compile_body(&src, argc, argv);
  cli_source_free(&src);
  phases_print_timings(want_timings);
  return rc;
}

/* `cucore compile`'s one help source: the summary and text here, each option's help in its row of
 * cmd_compile_opts. */
const cli_verb cmd_compile_verb = {"compile", cmd_compile,
                                   "compile CUDA C++, PTX or NVVM IR to PTX, cubin or LTO-IR",
                                   cmd_compile_help, cmd_compile_opts};
