/*
 * main.c -- the cucore command: verb table, help, dispatch.
 */
#include "cli.h"
#include "cmd_inspect.h"

#include <stdio.h>
#include <string.h>

static int cmd_help(int argc, char **argv);

static const cli_verb verbs[] = {
    {"devices", cmd_devices, "list GPUs, their properties, the driver and toolkit libraries",
     "usage: cucore devices [--json] [--pools]\n"
     "\n"
     "Lists every CUDA device with its compute capability, SM count, memory, shared-memory\n"
     "and register limits, cluster and cooperative-launch support, managed and pageable\n"
     "memory access, stream-ordered memory pools (and whether they can be shared between\n"
     "processes), then the driver and the toolkit libraries (NVRTC,\n"
     "nvJitLink, libNVVM) cucore loaded, with paths and versions.\n"
     "Each device's live state comes from NVML (libnvidia-ml.so.1; CUCORE_LIBNVML names\n"
     "another): SM and memory clocks now and at most, temperature, power and its limit,\n"
     "utilisation, clock-event reasons (throttling flagged), MIG mode, NVLinks; without\n"
     "NVML one line says why.\n"
     "With --json: one object {\"driver\": {...}, \"libraries\": {...}, \"devices\": [...]};\n"
     "each device has \"system\": {\"available\": ..., the facts, or \"error\"}.\n"
     "The listing needs no context on any device (cuInit alone), so it costs about what\n"
     "cuInit does. With --pools the default pool's state is read too: its release\n"
     "threshold, the bytes it holds reserved and in use and their high-water marks (pools\n"
     "belong to a process: a fresh process shows what it starts with); that opens a context\n"
     "on every device. Without --pools, \"default_pool\" is null in the JSON.\n"
     "\n"
     "options:\n"
     "%o"
     "\n"
     "Exit status: 0 when at least one device is listed; 1 with a one-line reason when there\n"
     "is no driver, only the toolkit's stub driver, or no GPU; 2 usage error.\n"
     "\n"
     "examples:\n"
     "  cucore devices\n"
     "  cucore devices --json | jq '.devices[0].sm_count'\n"
     "  cucore devices --json --pools | jq '.devices[0].default_pool.release_threshold'\n",
     cmd_devices_opts},
    {"version", cmd_version, "print cucore's version and the libraries it loaded",
     "usage: cucore version [--json]\n"
     "\n"
     "Prints cucore's version, the CUDA headers it was built with, and for the driver,\n"
     "NVRTC, nvJitLink and libNVVM: whether each was found, where, and its version.\n"
     "Environment: CUCORE_LIBCUDA, CUCORE_NVRTC, CUCORE_NVJITLINK, CUCORE_NVVM name a\n"
     "library's full path; CUDA_HOME and CUDA_PATH name the toolkit.\n"
     "\n"
     "options:\n"
     "%o",
     cli_json_opts},
    {"compile", cmd_compile, "compile CUDA C++, PTX or NVVM IR to PTX, cubin or LTO-IR",
     cmd_compile_help, cmd_compile_opts},
    {"inspect", cmd_inspect, cmd_inspect_summary, cmd_inspect_help, cmd_inspect_opts},
    {"occupancy", cmd_occupancy, "blocks per SM, occupancy and the binding limit of a kernel",
     cmd_occupancy_help, cmd_occupancy_opts},
    {"run", cmd_run, "launch a kernel with checked arguments, time it, summarise its outputs",
     cmd_run_help, cmd_run_opts},
    {"tune", cmd_tune, "search a kernel's parameters: space, pruning, compiles, model (--dry-run)",
     cmd_tune_help, cmd_tune_opts},
    {"cache", cmd_cache, "show, locate or clear the compile cache", cmd_cache_help, cli_json_opts},
    {"help", cmd_help, "show help for a verb", "usage: cucore help [VERB]\n", NULL},
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
    fprintf(f, "  %-10s %s\n", verbs[i].name, verbs[i].summary);
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
      cli_print_option_help(stdout);
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
    if (strcmp(verbs[i].name, argv[1]) == 0) {
      print_help(&verbs[i]);
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
    if (strcmp(verbs[i].name, argv[1]) != 0) continue;
    for (int a = 2; a < argc; a++)
      if (strcmp(argv[a], "--help") == 0 || strcmp(argv[a], "-h") == 0) {
        print_help(&verbs[i]);
        return CLI_EXIT_OK;
      }
    cli_verb_name = verbs[i].name;
    return cli_close_stdout(verbs[i].name, verbs[i].run(argc - 1, argv + 1)); /* writes checked */
  }
  fprintf(stderr, "cucore: unknown verb `%s`; run `cucore --help` for the list\n", argv[1]);
  return CLI_EXIT_USAGE;
}
