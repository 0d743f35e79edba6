/* cache_program_key.c -- `cucore cache key FILE`: the compile cache's key of a compile, computed
 * without compiling (cucore_program_get_cache_key), with the compile's own options. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

/* The action's command line (its table below; compile options go to the cli_source). */
typedef struct key_line {
  int target; /* index into `key_targets` */
  int json;
} key_line;

static const cucore_code_type key_targets[] = {CUCORE_CODE_PTX, CUCORE_CODE_CUBIN,
                                               CUCORE_CODE_LTOIR, CUCORE_CODE_FATBIN};

static const cli_opt cache_key_opts[] = {
    {.name = "--target",
     .kind = CLI_OPT_CHOICE,
     CLI_AT(key_line, target),
     .arg = "ptx|cubin|ltoir|fatbin",
     .help = "the compile's target (default: cubin)"},
    {.name = "--json",
     .kind = CLI_OPT_FLAG,
     CLI_AT(key_line, json),
     .help = "one JSON object on stdout: {\"input\", \"target\", \"key\"}"},
    {0}};

/* Prints the key of `file`'s compile, or says why there is none (exit 1). */
static int print_key(const char *file, cucore_program *prog, const key_line *line) {
  char key[65];
  const char *reason = "";
  cucore_code_type target = key_targets[line->target];
  cucore_status st = cucore_program_get_cache_key(prog, target, key, &reason);
  if (st != CUCORE_OK) return cli_fail("cache key", file, st);
  if (!key[0]) {
    fprintf(stderr, "cucore cache key: `%s` compiled to %s cannot be cached: %s\n", file,
            cucore_code_type_name(target), reason);
    return CLI_EXIT_FAILURE;
  }
  if (line->json) {
    json_out j = {stdout, 0, {0}, 1};
    json_begin_object(&j, NULL);
    json_str(&j, "input", file);
    json_str(&j, "target", cucore_code_type_name(target));
    json_str(&j, "key", key);
    json_end_object(&j);
  } else {
    printf("%s\n", key);
  }
  return fflush(stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAILURE;
}

static int key_body(cli_source *src, int argc, char **argv) {
  key_line line = {1, 0};
  const char *file = NULL;
  cli_parse parse = {"cache key", cache_key_opts, &line, src, &file, 1, 0, "input file"};
  int rc = cli_opt_parse(&parse, argc, argv);
  if (rc) return rc;
  if (!file) return cli_usage("cache", "`cache key` needs a source file; see `cucore help cache`");
  cucore_program *prog = NULL;
  rc = cli_source_program(src, "cache key", file, &prog);
  if (rc) return rc;
  rc = print_key(file, prog, &line);
  cucore_program_destroy(prog);
  return rc;
}

int cmd_cache_key(int argc, char **argv) {
  cli_source src;
  if (cli_source_init(&src)) return CLI_EXIT_FAILURE;
  int rc = key_body(&src, argc, argv);
  cli_source_free(&src);
  return rc;
}
