/*
 * main.c -- the cucore command: verb table, help, dispatch.
 */
#include "cli.h"

#include <stdio.h>
#include <string.h>

static int cmd_help(int argc, char **argv);

static const cli_verb help_verb = {"help", cmd_help, "show help for a verb",
                                   "usage: cucore help [VERB]\n", NULL};

/* The verbs, each record defined with its help in the verb's own file. */
static const cli_verb *const verbs[] = {
    &cmd_devices_verb, &cmd_version_verb, &cmd_compile_verb, &cmd_inspect_verb, &cmd_occupancy_verb,
    &cmd_run_verb,     &cmd_tune_verb,    &cmd_cache_verb,   &help_verb,
};

static void print_overview(FILE *f) {
  fprintf(f,
          "cucore %s -- compile, load, inspect and launch CUDA kernels safely\n"
          "\n"
          "usage: cucore VERB [options]\n"
          "\n"
          "verbs:\n",
          CUCORE_VERSION_STRING);
  for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
    fprintf(f, "  %-10s %s\n", verbs[i]->name, verbs[i]->summary);
  fprintf(f, "\n"
             "Run `cucore help VERB` for a verb's options and examples. Every verb reads its\n"
             "options the same way: `--flag value` or `--flag=value`, numbers range-checked, an\n"
             "unknown option answered with the nearest known one, `--` before operands that\n"
             "start with a dash.\n"
             "\n"
             "exit status: 0 success; 1 the work failed (the reason is on stderr); 2 usage error.\n"
             "With --json, stdout holds one JSON object when the verb has a result and nothing\n"
             "otherwise; the exit status is the same as without --json.\n");
}

/* Prints a verb's help: "%o" in it stands for the verb's option table, "%s" for the list of
 * compile options. */
static void print_help(const cli_verb *v) {
  for (const char *h = v->help; *h; h++) {
    if (h[0] == '%' && h[1] == 'o' && v->opts) {
      cli_opt_help(stdout, v->opts);
      h++;
    } else if (h[0] == '%' && h[1] == 's') {
      cli_opt_help_compile(stdout);
      h++;
    } else {
      fputc(*h, stdout);
    }
  }
}

static int cmd_help(int argc, char **argv) {
  if (argc < 2) {
    print_overview(stdout);
    return CLI_EXIT_OK;
  }
  for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
    if (strcmp(verbs[i]->name, argv[1]) == 0) {
      print_help(verbs[i]);
      return CLI_EXIT_OK;
    }
  return cli_usage("help", "unknown verb `%s`; run `cucore --help` for the list", argv[1]);
}

int main(int argc, char **argv) {
  phases_mark_main();   /* one clock read: where main began, for `run --timings` */
  text_guard_streams(); /* names from binaries never reach the terminal raw (text.c) */
  if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
    print_overview(argc < 2 ? stderr : stdout);
    return argc < 2 ? CLI_EXIT_USAGE : CLI_EXIT_OK;
  }
  if (strcmp(argv[1], "--version") == 0) {
    printf("cucore %s\n", CUCORE_VERSION_STRING);
    return CLI_EXIT_OK;
  }
  if (strcmp(argv[1], "__tune-worker") == 0) return tune_worker_main(argc - 1, argv + 1);
  for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++) {
    if (strcmp(verbs[i]->name, argv[1]) != 0) continue;
    for (int a = 2; a < argc; a++)
      if (strcmp(argv[a], "--help") == 0 || strcmp(argv[a], "-h") == 0) {
        print_help(verbs[i]);
        return CLI_EXIT_OK;
      }
    cli_verb_name = verbs[i]->name;
    return cli_close_stdout(verbs[i]->name, verbs[i]->run(argc - 1, argv + 1)); /* writes checked */
  }
  fprintf(stderr, "cucore: unknown verb `%s`; run `cucore --help` for the list\n", argv[1]);
  return CLI_EXIT_USAGE;
}
