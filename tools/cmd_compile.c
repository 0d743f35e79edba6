/* cmd_compile.c -- `cucore compile`: CUDA C++, PTX or NVVM IR to PTX, cubin or LTO-IR. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

const char cmd_compile_help[] =
    "usage: cucore compile FILE [-o OUT] [--arch sm_XX] [--target ptx|cubin|ltoir|fatbin]\n"
    "                      [-D NAME[=VALUE]] [-I DIR] [--std c++17] [--name-expr EXPR]...\n"
    "                      [--json] [any compile option]\n"
    "\n"
    "Compiles FILE (.cu: CUDA C++ through NVRTC; .ptx: PTX through nvJitLink; .ll/.bc: NVVM\n"
    "IR through libNVVM) and writes the result to OUT (default: FILE with the target's\n"
    "extension). Without --arch, the current GPU's architecture is used; without a GPU,\n"
    "--arch is required. The compiler log goes to stderr. Each --name-expr (a C++ name\n"
    "expression such as 'scale<float>') is registered with NVRTC and its lowered name\n"
    "printed.\n"
    "\n"
    "options (`--flag value` or `--flag=value`):\n"
    "%o"
    "\n"
    "compile options (also accepted by inspect, occupancy and run for .cu files):\n"
    "%s"
    "\n"
    "exit status: 0 compiled; 1 compile error (log on stderr) or unreadable input; 2 usage.\n"
    "With --json the exit status is the same, and a failure leaves stdout empty.\n"
    "\n"
    "examples:\n"
    "  cucore compile saxpy.cu --arch sm_90 -o saxpy.cubin\n"
    "  cucore compile kernels.cu --target ptx --arch sm_80 -DBLOCK=256 --std c++17\n"
    "  cucore compile kernels.cu --target fatbin --gencode sm_80 --gencode sm_90 --gencode compute_90\n"
    "  cucore compile scale.cu --arch sm_90 --name-expr 'scale<float>' --name-expr 'scale<double>'\n";

static const char *ext_of(cucore_code_type t) {
  return t == CUCORE_CODE_PTX      ? ".ptx"
         : t == CUCORE_CODE_LTOIR  ? ".ltoir"
         : t == CUCORE_CODE_FATBIN ? ".fatbin"
                                   : ".cubin";
}

/* The verb's command line (its table below). */
typedef struct compile_line {
  const char *out;
  int target; /* index into `targets` */
  int json;
} compile_line;

static const cucore_code_type targets[] = {CUCORE_CODE_PTX, CUCORE_CODE_CUBIN, CUCORE_CODE_LTOIR,
                                           CUCORE_CODE_FATBIN};

const cli_opt cmd_compile_opts[] = {
    {.name = "--output", .alias = "-o", .kind = CLI_OPT_TEXT, CLI_AT(compile_line, out),
     .arg = "OUT", .help = "where the result goes (default: FILE with the target's extension)"},
    {.name = "--target", .kind = CLI_OPT_CHOICE, CLI_AT(compile_line, target),
     .arg = "ptx|cubin|ltoir|fatbin", .help = "what to make (default: cubin)"},
    {.name = "--json", .kind = CLI_OPT_FLAG, CLI_AT(compile_line, json),
     .help = "one JSON object on stdout: {\"input\", \"output\", \"target\", \"arch\",\n"
             "\"bytes\", \"compile_ms\", \"cache\", \"lowered_names\"}; on failure stdout\n"
             "stays empty and the reason is on stderr"},
    {0}};

static int compile_body(cli_source *srcp, int argc, char **argv) {
  compile_line line = {NULL, 1, 0};
  const char *file = NULL;
  cli_parse parse = {"compile", cmd_compile_opts, &line, srcp, &file, 1, 0, "input file"};
  int rc = cli_opt_parse(&parse, argc, argv);
  if (rc) return rc;
  const char *out_path = line.out;
  cucore_code_type target = targets[line.target];
  int json = line.json;
  if (!file) {
    cli_source_free(srcp);
    return cli_usage("compile", "no input file; see `cucore help compile`");
  }
  cucore_object *obj = NULL;
  cli_compile_info ci;
  rc = cli_source_compile(srcp, "compile", file, target, &obj, &ci);
  if (rc != 0) {
    cli_source_free(srcp);
    return rc;
  }
  /* What was made: the lto option makes LTO-IR even when a cubin was asked for (it is linked for
   * the GPU when loaded), so the file is named and reported for what it holds. */
  cucore_code_type made = target;
  cucore_object_code(obj, &made, NULL, NULL);
  char *default_out = NULL;
  if (!out_path) {
    const char *dot = strrchr(file, '.'), *slash = strrchr(file, '/');
    size_t stem = dot && (!slash || dot > slash) ? (size_t)(dot - file) : strlen(file);
    default_out = malloc(stem + 8);
    if (!default_out) return CLI_EXIT_FAILURE;
    memcpy(default_out, file, stem);
    strcpy(default_out + stem, ext_of(made));
    out_path = default_out;
  }
  const void *data = NULL;
  size_t size = 0;
  cucore_object_code(obj, NULL, &data, &size);
  FILE *f = fopen(out_path, "wb");
  if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0) {
    fprintf(stderr, "cucore compile: cannot write `%s`\n", out_path);
    if (f) fclose(f);
    rc = CLI_EXIT_FAILURE;
  } else if (json) {
    json_out j = {stdout, 0, {0}, 1};
    json_begin_object(&j, NULL);
    json_str(&j, "input", file);
    json_str(&j, "output", out_path);
    json_str(&j, "target", cucore_code_type_name(made));
    if (made != target) json_str(&j, "asked", cucore_code_type_name(target));
    int arch = 0;
    cucore_object_arch(obj, &arch);
    json_int(&j, "arch", arch);
    json_int(&j, "bytes", (long long)size);
    json_num(&j, "compile_ms", ci.ms);
    json_str(&j, "cache", cucore_cache_result_name(ci.cache));
    if (ci.cache_reason[0]) json_str(&j, "cache_reason", ci.cache_reason);
    json_begin_object(&j, "lowered_names");
    for (int e = 0; e < srcp->expr_count; e++) {
      const char *low = NULL;
      if (cucore_object_lowered_name(obj, srcp->exprs[e], &low) == CUCORE_OK) json_str(&j, srcp->exprs[e], low);
    }
    json_end_object(&j);
    json_end_object(&j);
  } else {
    printf("%s -> %s (%s, %zu bytes) in %.1f ms, cache: %s%s%s\n", file, out_path,
           cucore_code_type_name(made), size, ci.ms, cucore_cache_result_name(ci.cache),
           ci.cache_reason[0] ? ": " : "", ci.cache_reason);
    if (made != target)
      printf("  note: %s was asked for; the lto option makes %s, which is linked for the GPU "
             "when loaded (or with cucore_linker_* / nvJitLink)\n",
             cucore_code_type_name(target), cucore_code_type_name(made));
    for (int e = 0; e < srcp->expr_count; e++) {
      const char *low = NULL;
      if (cucore_object_lowered_name(obj, srcp->exprs[e], &low) == CUCORE_OK)
        printf("  %s = %s\n", srcp->exprs[e], low);
    }
  }
  free(default_out);
  cucore_object_destroy(obj);
  cli_source_free(srcp);
  return rc;
}

/* Every exit path frees the verb's options, early usage errors included. */
int cmd_compile(int argc, char **argv) {
  cli_source src;
  if (cli_source_init(&src)) return CLI_EXIT_FAILURE;
  int rc = compile_body(&src, argc, argv);
  cli_source_free(&src);
  return rc;
}
