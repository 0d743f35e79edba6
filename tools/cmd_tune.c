/* cmd_tune.c -- `cucore tune`: the search space from --param/--restrict or a Kernel Tuner
 * JSON file, checked before the GPU (restrictions, launch expressions, the arch's limits),
 * every distinct compile made in parallel and judged by the occupancy model; then (without
 * --dry-run) each configuration verified and timed on the GPU, the results kept in a
 * crash-safe store, the finalists re-timed interleaved: all of it the library's tune
 * (cucore_tune_run), with the command's callbacks (tune_run.c). */
#include <limits.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tune.h"

static const char cmd_tune_help[] =
    "usage: cucore tune FILE.cu --kernel NAME_OR_TEMPLATE\n"
    "                   (--param NAME=V1,V2,... [--restrict EXPR]... | --space SPACE.json)\n"
    "                   [--grid EXPRS] [--block EXPRS] [--smem EXPR] [--problem-size EXPRS]\n"
    "                   (--arg SPEC... [--expect ARG=VALUE]... [--rtol R] [--atol A]\n"
    "                    [--poison] [--cold auto|flush|rotate|none] [--cache cold|hot]\n"
    "                    [--launch-mode auto|single|batch|graph] [--launch batch|single]\n"
    "                    [--max-noise F] [--finalists N] [--no-racing]\n"
    "                    [--strategy exhaustive|model-first] [--top-fraction F]\n"
    "                    [--db FILE] [--fresh] | --dry-run [--arch sm_XX] [--sm-count N])\n"
    "                   [--jobs N] [--compile-timeout S] [--nvrtc-minimal] [--no-spills]\n"
    "                   [--min-occupancy F]\n"
    "                   [--json]\n"
    "                   [compile options]\n"
    "\n"
    "Checks every configuration of a search space before any GPU time is spent: the raw\n"
    "space (the product of the parameters' values) -> the restrictions -> a valid launch\n"
    "within the architecture's limits -> the distinct compiles. Each distinct compile is\n"
    "made once (parameters become -DNAME=value, or template arguments in\n"
    "--kernel 'gemm<{BM},{BN}>'; a parameter used only by launch expressions never makes\n"
    "one) to a cubin for the exact arch, through the compile cache, by --jobs threads;\n"
    "registers, shared and local memory from the cubin go through the host occupancy\n"
    "model: a configuration no block of which can be resident is rejected with the reason.\n"
    "Each configuration gets the model's occupancy, waves, tail efficiency and score.\n"
    "With --nvrtc-minimal the first configuration that compiles is compiled again with\n"
    "NVRTC's -minimal (the runtime's types left out: 20-30 % less compile time on a small\n"
    "kernel); when the two cubins are the same bytes, every other compile uses it\n"
    "(\"nvrtc_minimal\" in --json).\n"
    "\n"
    "Values: 32,64,128, ranges 1..8 or 0..64:16, powers of two pow2:5..10. Expressions\n"
    "(restrictions, --grid/--block/--smem/--problem-size) are Python's, as Kernel Tuner's\n"
    "restrictions: parameter names, 64-bit integers, reals, 'strings', True/False;\n"
    "+ - * / // % **, & | ^ << >> ~, comparisons (chained), in, not in, is, and or not\n"
    "(&& || !), a if c else b (c ? a : b), x in [1, 4], x in range(0, 64, 8), abs all any\n"
    "ceil float floor int len log2 max min round; never run as code (no lambda). Overflow,\n"
    "division by zero, a string in arithmetic reject the configuration; at most 64 KiB and\n"
    "1000 levels of nesting.\n"
    "Kernel Tuner's conventions: parameters block_size_x/y/z are the block unless\n"
    "--block is given; without --grid, grid = ceil(problem_size / grid_div) per dimension.\n"
    "--space reads tune_kernel()'s keywords as JSON (tune_params, restrictions,\n"
    "problem_size, grid_div_x/y/z, block_size_names, kernel_name, atol) and grid, block,\n"
    "smem, rtol, cucore_args and cucore_expect (lists of --arg and --expect specs);\n"
    "options on the command line are added to it, and its --arg, --expect, --rtol and\n"
    "--atol are used where the command line gives none.\n"
    "\n"
    "The arch: --arch, else the GPU's; with neither, only the checks before compiling run.\n"
    "\n"
    "Measuring (without --dry-run; device 0): the GPU thread takes each compile as it\n"
    "finishes. Before each configuration's checked launch, inputs and in-place buffers are\n"
    "restored from pristine copies and outputs zeroed (--poison: 0xff bytes); the outputs\n"
    "are compared with --expect, else with the first configuration that ran. A wrong answer,\n"
    "a launch error or a compile error is recorded and the tune goes on. Timing: one untimed\n"
    "launch, warm-up by time, samples between events with the arguments cycled through\n"
    "copies of every buffer past 2 x L2 (--cold rotate; the default where they fit) or\n"
    "after writing 2 x L2 (--cold flush), 16 samples queued ahead of the host; kernels under\n"
    "20 us as a batch of launches per sample (under 10 us a graph captured once and replayed),\n"
    "until the noise is at most --max-noise. With NVML the SM clock is read after each\n"
    "sample: samples taken while the clocks were held down (power, thermal) are discarded\n"
    "and the median clock recorded; without NVML the tune says so and goes on. A wrong\n"
    "answer records the largest absolute and relative errors. A kernel fault (the context\n"
    "is lost) records the configuration as \"fault\"; the device is reset, the buffers made\n"
    "again, and the tune goes on with the next configuration.\n"
    "the best --finalists (and ties) are re-timed in interleaved rounds and ranked by median;\n"
    "a tie goes to the lower configuration number. Every result is appended to the store at\n"
    "once, keyed by the source, options, kernel, launch expressions, arguments and the\n"
    "device: running the same tune again measures only what is not there. The context has\n"
    "one hardware work queue (CUDA_DEVICE_MAX_CONNECTIONS=1 unless the environment names a\n"
    "number), as in `cucore run`: the tune uses one stream.\n"
    "\n"
    "options (`--flag value` or `--flag=value`):\n"
    "%o"
    "\n"
    "compile options (applied to every configuration):\n"
    "%s"
    "\n"
    "exit status: 0 at least one configuration can run; 1 none can, or a file is unusable;\n"
    "2 usage. The same with --json.\n"
    "\n"
    "examples:\n"
    "  cucore tune saxpy.cu --kernel saxpy --param block_size_x=32..1024:32 \\\n"
    "      --problem-size 1048576 --arch sm_90 --sm-count 132 --dry-run\n"
    "  cucore tune mm.cu --kernel 'mm<{BM},{BN}>' --param BM=32,64 --param BN=32,64 \\\n"
    "      --restrict 'BM*BN <= 4096' --grid '4096/BM, 4096/BN' --block 256 --dry-run\n"
    "  cucore tune matmul.cu --kernel matmul_kernel --space matmul.json --dry-run --json\n";

#define TUNE_AT(field) CLI_AT(tune_line, field)

static const cli_opt cmd_tune_opts[] = {
    {.name = "--kernel",
     .kind = CLI_OPT_TEXT,
     TUNE_AT(kernel),
     .arg = "NAME",
     .help = "the kernel, or a template with {PARAM} holes: 'gemm<{BM},{BN}>'"},
    {.name = "--param",
     .kind = CLI_OPT_LIST,
     TUNE_AT(params),
     .arg = "NAME=V1,V2,...",
     .help = "a parameter and its values (again for more); LO..HI[:STEP], pow2:LO..HI"},
    {.name = "--restrict",
     .kind = CLI_OPT_LIST,
     TUNE_AT(restricts),
     .arg = "EXPR",
     .help = "keep configurations for which EXPR is true (again for more)"},
    {.name = "--space",
     .kind = CLI_OPT_TEXT,
     TUNE_AT(space),
     .arg = "FILE.json",
     .help = "the space as Kernel Tuner's tune_kernel() keywords in JSON"},
    {.name = "--grid",
     .kind = CLI_OPT_TEXT,
     TUNE_AT(grid),
     .arg = "EXPRS",
     .help = "blocks per dimension: x[, y[, z]] expressions over the parameters"},
    {.name = "--block",
     .kind = CLI_OPT_TEXT,
     TUNE_AT(block),
     .arg = "EXPRS",
     .help = "threads per dimension (default: block_size_x/y/z, else 256)"},
    {.name = "--smem",
     .kind = CLI_OPT_TEXT,
     TUNE_AT(smem),
     .arg = "EXPR",
     .help = "dynamic shared memory per block, bytes (default 0)"},
    {.name = "--problem-size",
     .kind = CLI_OPT_TEXT,
     TUNE_AT(problem_size),
     .arg = "EXPRS",
     .help = "without --grid: grid = ceil(problem_size / block) per dimension"},
    {.name = "--dry-run",
     .kind = CLI_OPT_FLAG,
     TUNE_AT(dry_run),
     .help = "no GPU: counts per stage, compiles and the model's verdicts"},
    {.name = "--jobs",
     .kind = CLI_OPT_INT,
     TUNE_AT(jobs),
     .lo = 1,
     .hi = 256,
     .arg = "N",
     .help = "compile processes (default: cores - 1, at least 1)"},
    {.name = "--compile-timeout",
     .kind = CLI_OPT_REAL,
     TUNE_AT(compile_timeout),
     .arg = "S",
     .help = "a compile that runs past S seconds is stopped (its process killed) and\n"
             "recorded as a compile timeout; the tune goes on (default: no limit)"},
    {.name = "--sm-count",
     .kind = CLI_OPT_INT,
     TUNE_AT(sm_count),
     .lo = 1,
     .hi = 100000,
     .arg = "N",
     .help = "SMs, for waves without a GPU (an H100 SXM has 132)"},
    {.name = "--min-occupancy",
     .kind = CLI_OPT_REAL,
     TUNE_AT(min_occupancy),
     .arg = "F",
     .help = "reject configurations below this occupancy (0..1; default: keep all)"},
    {.name = "--no-spills",
     .kind = CLI_OPT_FLAG,
     TUNE_AT(no_spills),
     .help = "reject configurations that use local memory"},
    {.name = "--no-racing",
     .kind = CLI_OPT_FLAG,
     TUNE_AT(no_racing),
     .help = "time every configuration in full (default: one whose first launches are all\n"
             "clearly slower than the best so far, by 10 % or 3 x the best's noise, stops there:\n"
             "after its timed checked launch and one more (0.5 ms and up; alone past twice\n"
             "the best), else after 3)"},
    {.name = "--nvrtc-minimal",
     .kind = CLI_OPT_FLAG,
     TUNE_AT(nvrtc_minimal),
     .help = "compile with NVRTC's -minimal once the first cubin is the same bytes with it"},
    {.name = "--arg",
     .kind = CLI_OPT_LIST,
     TUNE_AT(args),
     .arg = "SPEC",
     .help = "a kernel argument, as `cucore run --arg` takes it (again for each)"},
    {.name = "--global",
     .kind = CLI_OPT_LIST,
     TUNE_AT(globals),
     .arg = "NAME=SPEC",
     .help = "a __constant__/__device__ variable's value, as `cucore run --global` takes it,\n"
             "written into each configuration's module before its launches (again for each)"},
    {.name = "--expect",
     .kind = CLI_OPT_LIST,
     TUNE_AT(expects),
     .arg = "ARG=VALUE",
     .help = "what an output must hold, as `cucore run --expect`; without it every\n"
             "configuration is compared with the first that ran"},
    {.name = "--rtol",
     .kind = CLI_OPT_REAL,
     TUNE_AT(rtol),
     CLI_SEEN(tune_line, has_rtol),
     .arg = "R",
     .help = "relative tolerance of the checks (default 1e-5)"},
    {.name = "--atol",
     .kind = CLI_OPT_REAL,
     TUNE_AT(atol),
     CLI_SEEN(tune_line, has_atol),
     .arg = "A",
     .help = "absolute tolerance of the checks (default 1e-8)"},
    {.name = "--poison",
     .kind = CLI_OPT_FLAG,
     TUNE_AT(poison),
     .help = "fill outputs with 0xff bytes (NaN) before each check, not zeros: an\n"
             "element a configuration never writes fails it"},
    {.name = "--cache",
     .kind = CLI_OPT_CHOICE,
     TUNE_AT(cache_hot),
     .arg = "cold|hot",
     .help = "older spelling: cold is --cold auto, hot --cold none"},
    {.name = "--cold",
     .kind = CLI_OPT_CHOICE,
     TUNE_AT(cold_mode),
     .arg = "flush|rotate|none|auto",
     .help = "auto (default): rotate when <= 64 copies pass 2 x L2 and fit 1/8 of the\n"
             "device's memory, else flush; flush: 2 x L2 written before each sample;\n"
             "rotate: the arguments cycled through copies of every buffer past 2 x L2;\n"
             "none: hot"},
    {.name = "--launch-mode",
     .kind = CLI_OPT_CHOICE,
     TUNE_AT(launch_mode),
     .arg = "auto|single|batch|graph",
     .help = "auto (default): one launch per sample; a batch when one takes < 20 us, a\n"
             "graph under 10 us; single: one launch between the events; batch: back-to-back;\n"
             "graph: launches captured once per configuration, one replay per sample"},
    {.name = "--launch",
     .kind = CLI_OPT_CHOICE,
     TUNE_AT(launch_single),
     .arg = "batch|single",
     .help = "older spelling: batch is --launch-mode auto, single --launch-mode single"},
    {.name = "--strategy",
     .kind = CLI_OPT_CHOICE,
     TUNE_AT(strategy),
     CLI_SEEN(tune_line, strategy_given),
     .arg = TUNE_STRATEGY_WORDS,
     .help = "exhaustive (default): measure as compiles finish; model-first: compile all,\n"
             "then measure in order of the occupancy model's score; random, ils,\n"
             "anneal, genetic, forest, bayes (default: bayes): a search under --max-evals\n"
             "(with --simulate)"},
    {.name = "--strategy-options",
     .kind = CLI_OPT_TEXT,
     TUNE_AT(strategy_options),
     .arg = "K=V,..|JSON",
     .help = "the search strategy's options, key=value items or a JSON object of numbers:\n"
             "bayes and forest pool, init, explore_every, additive_every, neighbours_of, pairs,\n"
             "tree_doubt, pair_doubt, polish, wolves, wolf_every, wolf_pick, pack, wolf_apart,\n"
             "descend, descend_apart, clip; bayes gp_steps, gp_kernel, gp_grow; forest trees;\n"
             "genetic population, mutation, tournament; ils init, perturb; anneal t_start,\n"
             "t_end\n"
             "(ranges and defaults: README, or a wrong name's message)"},
    {.name = "--simulate",
     .kind = CLI_OPT_TEXT,
     TUNE_AT(simulate),
     .arg = "FILE",
     .help = "replay a search over a recorded space (a Kernel Tuner cache file or a\n"
             "TuningSchema T4 file such as --t4 and `cucore cache tune export --t4` write;\n"
             "JSON, plain or gzip): no FILE, GPU or compiler; each evaluation answers with\n"
             "the recorded time or failure and adds its recorded cost to a simulated clock"},
    {.name = "--max-evals",
     .kind = CLI_OPT_INT,
     TUNE_AT(max_evals),
     .lo = 1,
     .hi = LLONG_MAX,
     .arg = "N",
     .help = "a search's budget: configurations evaluated, failed ones included\n"
             "(Kernel Tuner's max_fevals): with it a tune measures what --strategy\n"
             "(default bayes) proposes, in batches, instead of every configuration\n"
             "(--simulate default 100)"},
    {.name = "--time-limit",
     .kind = CLI_OPT_REAL,
     TUNE_AT(time_limit),
     .arg = "S",
     .help = "a search proposes no batch after S seconds (the batch under way finishes)"},
    {.name = "--compare",
     .kind = CLI_OPT_TEXT,
     TUNE_AT(compare),
     .arg = "S1,S2|all",
     .help = "with --simulate: each strategy at each --budgets, over --repeats seeds: the\n"
             "median and 10th percentile of optimum / best found, the share of runs\n"
             "reaching 0.95 and 0.99 of the optimum"},
    {.name = "--budgets",
     .kind = CLI_OPT_TEXT,
     TUNE_AT(budgets),
     .arg = "B1,B2",
     .help = "--compare's budgets (default 100,200)"},
    {.name = "--repeats",
     .kind = CLI_OPT_INT,
     TUNE_AT(repeats),
     .lo = 1,
     .hi = 100000,
     .arg = "R",
     .help = "--compare's runs per strategy and budget, seeds --seed .. --seed + R - 1\n"
             "(default 20)"},
    {.name = "--batch",
     .kind = CLI_OPT_INT,
     TUNE_AT(batch),
     .lo = 1,
     .hi = 4096,
     .arg = "N",
     .help = "configurations a search proposes at a time (--simulate default 1; a\n"
             "measured search: one per compile worker, 4 to 16)"},
    {.name = "--top-fraction",
     .kind = CLI_OPT_REAL,
     TUNE_AT(top_fraction),
     .arg = "F",
     .help = "model-first: measure only the best-scored fraction F (0..1) of the runnable\n"
             "configurations; the rest are recorded as skipped"},
    {.name = "--max-noise",
     .kind = CLI_OPT_REAL,
     TUNE_AT(max_noise),
     .arg = "F",
     .help = "sample until the relative standard deviation is at most F (default 0.02)"},
    {.name = "--finalists",
     .kind = CLI_OPT_INT,
     TUNE_AT(finalists),
     .lo = 0,
     .hi = 1000,
     .arg = "N",
     .help = "re-time the best N (and ties) interleaved (default 5; 0: none)"},
    {.name = "--db",
     .kind = CLI_OPT_TEXT,
     TUNE_AT(db),
     .arg = "FILE",
     .help = "the result store (default: the cache folder's tune/KEY.jsonl); never a file\n"
             "that is not a store, never an input; a read-only store is read and the run\n"
             "keeps nothing; two tunes on one store share its groups (each measured once)"},
    {.name = "--db-dir",
     .kind = CLI_OPT_TEXT,
     TUNE_AT(db_dir),
     .arg = "DIR",
     .help = "the result store is DIR/KEY.jsonl (a folder every shard sees, on a shared\n"
             "file system; made when missing)",
     .nonempty = 1},
    {.name = "--fresh",
     .kind = CLI_OPT_FLAG,
     TUNE_AT(fresh),
     .help = "measure everything again (results are still appended)"},
    {.name = "--device",
     .kind = CLI_OPT_INT,
     TUNE_AT(device),
     CLI_SEEN(tune_line, device_given),
     .lo = 0,
     .hi = 4096,
     .arg = "N",
     .help = "the GPU that measures (default 0; a shard started by a launcher: its local\n"
             "rank modulo the GPUs it sees)"},
    {.name = "--devices",
     .kind = CLI_OPT_TEXT,
     TUNE_AT(devices),
     .arg = "all|LIST",
     .help = "measure on several GPUs of this host (all, or numbers: 0,1): one process per\n"
             "GPU, each with its share and --jobs / N compile workers, sharing the store;\n"
             "the finalists are re-timed on the first; one model unless --mixed-devices",
     .nonempty = 1},
    {.name = "--mixed-devices",
     .kind = CLI_OPT_FLAG,
     TUNE_AT(mixed_devices),
     .help = "--devices with GPUs of different models: each GPU tunes the whole space for\n"
             "its model (the store keys results by model; GPUs of one model share it) and\n"
             "re-times its own finalists; every GPU's report is printed, the first's first\n"
             "(JSON: the others' in \"device_reports\"); --csv, --log etc. are the first's"},
    {.name = "--shard",
     .kind = CLI_OPT_TEXT,
     TUNE_AT(shard),
     .arg = "I/N|none",
     .help = "this process is shard I of N (from 0) sharing one store (--db-dir on a\n"
             "shared file system): its share of the compiles first, then what the others\n"
             "left; default: the launcher's variables (Open MPI's OMPI_COMM_WORLD_RANK/SIZE,\n"
             "MPICH's PMI_RANK/SIZE, Slurm's SLURM_PROCID/NTASKS), none: not a shard",
     .nonempty = 1},
    {.name = "--retime-finalists",
     .kind = CLI_OPT_FLAG,
     TUNE_AT(retime_finalists),
     .help = "re-time the finalists on this GPU even when the store had every result (the\n"
             "closing step after shards: one ranking on one device)"},
    {.name = "--shard-own-only",
     .kind = CLI_OPT_FLAG,
     TUNE_AT(shard_own_only),
     .help = "a shard measures its share only, not what the others left (hosts without a\n"
             "shared file system: each its own --db-dir, gathered after with `cucore cache\n"
             "tune merge DIR`)"},
    {.name = "--report-only",
     .kind = CLI_OPT_FLAG,
     TUNE_AT(report_only),
     .help = "report what the store holds (every shard's results), compile and measure\n"
             "nothing; configurations not there are reported as not measured; needs no GPU\n"
             "(then the store's one device model is reported)"},
    {.name = "--seed",
     .kind = CLI_OPT_INT,
     TUNE_AT(seed),
     CLI_SEEN(tune_line, seed_given),
     .lo = 0,
     .hi = LLONG_MAX,
     .arg = "N",
     .help = "seed of `random` argument fills and of a search (the same seed, the same\n"
             "sequence)"},
    {.name = "--csv",
     .kind = CLI_OPT_TEXT,
     TUNE_AT(csv),
     .arg = "FILE",
     .help = "one row per configuration past the restrictions"},
    {.name = "--t4",
     .kind = CLI_OPT_TEXT,
     TUNE_AT(t4),
     .arg = "FILE",
     .help = "the results as TuningSchema T4 JSON (read by Kernel Tuner, KTT, BAT)"},
    {.name = "--plot",
     .kind = CLI_OPT_TEXT,
     TUNE_AT(plot),
     .arg = "FILE.svg",
     .help = "measured time against each parameter and the model's occupancy (SVG)"},
    {.name = "--emit-header",
     .kind = CLI_OPT_TEXT,
     TUNE_AT(emit_header),
     .arg = "FILE",
     .help = "the best configuration as #defines (a TARGET_<GPU> block and the default)"},
    {.name = "--timings",
     .kind = CLI_OPT_FLAG,
     TUNE_AT(timings),
     .help = "the phase table on stderr at the end (process start, library loads, cuInit,\n"
             "context, module loads ...; as `cucore run --timings`), \"phases\" in --json"},
    {.name = "--yes",
     .kind = CLI_OPT_FLAG,
     TUNE_AT(yes),
     .help = "go on above 10000 distinct compiles without asking (without a terminal and\n"
             "without --yes such a tune is refused, exit 2)"},
    {.name = "--rows",
     .kind = CLI_OPT_TEXT,
     TUNE_AT(rows),
     .arg = "N|all",
     .help = "list configurations one by one in the reports only up to N of them (default\n"
             "10000); above, the counts and the best stand for them (a dry run without an\n"
             "arch then never lists the space); all: always list them"},
    {.name = "--json", .kind = CLI_OPT_FLAG, TUNE_AT(json), .help = CLI_JSON_HELP},
    {0}};

static int space_fail(const char *what, cucore_status st) { return cli_fail("tune", what, st); }

static int add_exprs(tune_ctx *c) {
  const tune_line *l = c->line;
  const char *text[] = {l->grid, l->block, l->smem, l->problem_size};
  const cucore_tune_slot slot[] = {CUCORE_TUNE_GRID, CUCORE_TUNE_BLOCK, CUCORE_TUNE_SMEM,
                                   CUCORE_TUNE_PROBLEM_SIZE};
  static const char *const flag[] = {"--grid", "--block", "--smem", "--problem-size"};
  for (int i = 0; i < 4; i++)
    if (text[i]) {
      cucore_status st = cucore_tune_space_set_expr(c->space, slot[i], text[i]);
      if (st != CUCORE_OK) return cli_usage("tune", "%s: %s", flag[i], cucore_last_error());
    }
  return 0;
}

static int build_space(tune_ctx *c) {
  const tune_line *l = c->line;
  cucore_status st;
  if (l->space) {
    char *json = NULL;
    size_t size = 0;
    int rc = cli_read_file("tune", l->space, &json, &size);
    if (rc) return rc;
    st = cucore_tune_space_from_json(json, size, &c->space);
    free(json);
    if (st != CUCORE_OK) return space_fail(l->space, st);
  } else if ((st = cucore_tune_space_create(&c->space)) != CUCORE_OK) {
    return space_fail("the space", st);
  }
  for (int i = 0; i < l->params.n; i++)
    if (cucore_tune_space_parse_param(c->space, l->params.v[i], CUCORE_TUNE_PARAM_AUTO))
      return cli_usage("tune", "--param %s: %s", l->params.v[i], cucore_last_error());
  for (int i = 0; i < l->restricts.n; i++)
    if (cucore_tune_space_restrict(c->space, l->restricts.v[i]))
      return cli_usage("tune", "--restrict: %s", cucore_last_error());
  int rc = add_exprs(c);
  if (rc) return rc;
  if (l->kernel && (st = cucore_tune_space_set_kernel(c->space, l->kernel)) != CUCORE_OK)
    return cli_usage("tune", "--kernel: %s", cucore_last_error());
  cucore_tune_space_get_kernel(c->space, &c->kernel_name);
  size_t need = 0; /* every {NAME} hole names a parameter: exit 2 before any compile */
  if (c->kernel_name &&
      cucore_tune_space_get_config_text(c->space, 0, CUCORE_TUNE_TEXT_KERNEL, NULL, 0, &need) !=
          CUCORE_OK &&
      CUCORE_CODE(cucore_last_status()) == CUCORE_INVALID_ARGUMENT && strchr(c->kernel_name, '{'))
    return cli_usage("tune", "--kernel: %s", cli_message());
  if (!c->kernel_name)
    return cli_usage("tune", "no kernel: give --kernel NAME (or \"kernel_name\" in the --space "
                             "file)");
  st = cucore_tune_space_set_source(c->space, c->source, c->source_size);
  return st == CUCORE_OK ? 0 : space_fail(l->file, st);
}

static int check_line(tune_line *l) {
  if (!l->file) return cli_usage("tune", "FILE is required; see `cucore help tune`");
  l->model_first = l->strategy == 1;
  if (l->compare || l->budgets || l->repeats)
    return cli_usage("tune", "--compare, --budgets and --repeats compare strategies over a "
                             "recording: --simulate FILE");
  if ((l->strategy >= TUNE_STRATEGY_SEARCH || l->batch || l->time_limit > 0 ||
       l->strategy_options) &&
      !l->max_evals)
    return cli_usage("tune",
                     "a search (--strategy random, ils, anneal, genetic, forest, "
                     "bayes or default, --strategy-options, --batch, --time-limit) needs its "
                     "budget: --max-evals N");
  if (l->max_evals && (l->dry_run || (l->strategy_given && l->strategy < TUNE_STRATEGY_SEARCH) ||
                       l->top_fraction > 0))
    return cli_usage("tune", "--max-evals searches and measures what the strategy proposes: "
                             "not with --dry-run, --strategy exhaustive or model-first, or "
                             "--top-fraction");
  l->max_rows = TUNE_ROWS_LISTED;
  if (l->rows && strcmp(l->rows, "all") == 0) {
    l->max_rows = 0;
  } else if (l->rows) {
    char *end = NULL;
    errno = 0;
    unsigned long long n = l->rows[0] >= '0' && l->rows[0] <= '9' ? strtoull(l->rows, &end, 10) : 0;
    if (!end || *end || errno || n == 0)
      return cli_usage("tune", "--rows `%s`: expected a whole number of rows (1 or more) or `all`",
                       l->rows);
    l->max_rows = n;
  }
  if (!l->kernel && !l->space)
    return cli_usage("tune", "--kernel NAME is required (or a --space file with \"kernel_name\"); "
                             "see `cucore help tune`");
  const char *dot = strrchr(l->file, '.');
  if (!dot || strcmp(dot, ".cu") != 0)
    return cli_usage("tune", "`%s`: tune compiles CUDA C++ sources (.cu)", l->file);
  if (l->emit_header && l->dry_run)
    return cli_usage("tune", "--emit-header needs a measured tune (no --dry-run)");
  if (l->top_fraction > 1)
    return cli_usage("tune", "--top-fraction %g: expected 0..1", l->top_fraction);
  if (l->min_occupancy > 1)
    return cli_usage("tune", "--min-occupancy %g: expected 0..1", l->min_occupancy);
  if (l->report_only && (l->max_evals || l->dry_run))
    return cli_usage("tune", "--report-only reports the store of a plain tune: not with "
                             "--max-evals or --dry-run (a search's results are reported by "
                             "the same command without --max-evals)");
  if (l->db && l->db_dir)
    return cli_usage("tune", "--db and --db-dir both name the store: give one");
  return tune_shard_resolve(l);
}

/* A GPU to measure on (after everything the host prepares: cuInit runs on the early thread
 * meanwhile). */
static int check_gpu(const tune_line *l) {
  int ndev = 0;
  if (l->report_only && (cucore_device_get_count(&ndev) != CUCORE_OK || ndev == 0))
    return 0; /* a report needs no GPU: the store's records name their device */
  if (!l->dry_run && (cucore_device_get_count(&ndev) != CUCORE_OK || ndev == 0)) {
    fprintf(stderr, "cucore tune: no GPU to measure on; --dry-run checks the space, compiles "
                    "and the model's verdicts without one\n");
    return CLI_EXIT_FAILURE;
  }
  if (!l->dry_run && l->device >= ndev)
    return cli_usage("tune", "--device %lld: there %s %d GPU%s (0..%d)%s", l->device,
                     ndev == 1 ? "is" : "are", ndev, ndev == 1 ? "" : "s", ndev - 1,
                     l->device_from ? " (the device came from the launcher's local rank)" : "");
  return 0;
}

/* Every output: writable, none an input (the source, the space file, each @FILE of the specs,
 * the store) and no two the same file. The store is an output first (it must not be an input),
 * then an input (no other output may be it). */
static int check_outputs(const tune_line *l, const cli_source *src) {
  if (l->db && cli_store_check("tune", "--db", l->db)) return CLI_EXIT_USAGE;
  if (src->log_path && cli_output_check("tune", "--log", src->log_path)) return CLI_EXIT_USAGE;
  if (l->csv && cli_output_check("tune", "--csv", l->csv)) return CLI_EXIT_USAGE;
  if (l->emit_header && cli_output_check("tune", "--emit-header", l->emit_header))
    return CLI_EXIT_USAGE;
  if (l->t4 && cli_output_check("tune", "--t4", l->t4)) return CLI_EXIT_USAGE;
  if (l->plot && cli_output_check("tune", "--plot", l->plot)) return CLI_EXIT_USAGE;
  return 0;
}

/* `n` strings of the space into a list of the line (the space outlives the line's use). */
static int list_take(cli_list *l, const char *const *v, size_t n) {
  l->v = malloc(n * sizeof *l->v);
  if (!l->v) return cli_fail("tune", "the space's checks", CUCORE_HOST_OUT_OF_MEMORY);
  for (size_t i = 0; i < n; i++) l->v[i] = v[i];
  l->n = (int)n;
  l->cap = n;
  return 0;
}

/* Kernel Tuner's compiler_options of a space file, added to every compile (before the command
 * line's own, which come later and so win): each read as a compile option of the command line,
 * and one cucore does not know passed to NVRTC as it is (--raw=OPTION), as Kernel Tuner does. */
static int take_compiler_options(tune_ctx *c) {
  const char *const *opts = NULL;
  size_t n = 0;
  if (cucore_tune_space_get_compiler_options(c->space, &opts, &n) != CUCORE_OK)
    return cli_fail("tune", "the space's compiler options", cucore_last_status());
  for (size_t i = 0; i < n;) {
    char **argv = (char **)opts; /* the space's strings outlive the compiles */
    int used = cli_source_option(c->src, "tune", (int)n, argv, (int)i);
    if (used < 0) return CLI_EXIT_USAGE;
    if (used == 0) {
      char *raw = NULL;
      if (asprintf(&raw, "--raw=%s", opts[i]) < 0 || !cli_list_keep(&c->owned, raw))
        return cli_fail("tune", "the space's compiler options", CUCORE_HOST_OUT_OF_MEMORY);
      char *one[] = {raw};
      if (cli_source_option(c->src, "tune", 1, one, 0) != 1) return CLI_EXIT_USAGE;
      used = 1;
    }
    i += (size_t)used;
  }
  return 0;
}

/* The space file's keys that were read but change nothing here, each said once. */
static void ignored_notes(const tune_ctx *c) {
  const cucore_tune_ignored_key *keys = NULL;
  size_t n = 0;
  if (cucore_tune_space_get_ignored_keys(c->space, &keys, &n) != CUCORE_OK) return;
  for (size_t i = 0; i < n; i++)
    fprintf(stderr, "cucore tune: note: %s: `%s` is not used: %s\n", c->line->space, keys[i].key,
            keys[i].reason);
}

/* A space file's checks where the command line gives none: its --arg specs when there is no
 * --arg, its --expect specs when there is no --expect, its tolerances when no --rtol/--atol. */
static int take_space_checks(tune_ctx *c) {
  tune_line *l = c->line;
  cucore_tune_checks k;
  if (cucore_tune_space_get_checks(c->space, &k) != CUCORE_OK)
    return cli_fail("tune", "the space's checks", cucore_last_status());
  int rc = 0;
  if (!l->args.n && k.nargs) rc = list_take(&l->args, k.args, k.nargs);
  if (!rc && !l->expects.n && k.nexpects) rc = list_take(&l->expects, k.expects, k.nexpects);
  if (!l->has_rtol && k.has_rtol) l->rtol = k.rtol, l->has_rtol = 1;
  if (!l->has_atol && k.has_atol) l->atol = k.atol, l->has_atol = 1;
  const char *const *cmem = NULL;
  size_t ncmem = 0; /* Kernel Tuner's cmem_args: --global specs where the line gives none */
  if (!rc && cucore_tune_space_get_cmem_args(c->space, &cmem, &ncmem) == CUCORE_OK && ncmem &&
      !l->globals.n)
    rc = list_take(&l->globals, cmem, ncmem);
  if (!rc) rc = take_compiler_options(c);
  if (!rc) ignored_notes(c);
  return rc;
}

/* After a kernel fault the device does not come back in this process (CUDA: the process must
 * end; two H200s: the context retained again fails with the fault): the tune goes on in a fresh
 * process, the same command line without --fresh, which resumes from the store (the fault is
 * recorded there, the configurations not measured are not), at most TUNE_RESTARTS times in a
 * row. Returns only when no fresh process was started. */
#define TUNE_RESTARTS 16
static void restart_after_loss(const tune_ctx *c, int argc, char **argv) {
  if (!c->sum.lost || c->line->dry_run) return;
  int n = tune_restarts();
  if (n >= TUNE_RESTARTS) {
    fprintf(stderr,
            "cucore tune: note: the device was lost %d times in a row; the "
            "configurations left are reported as not measured\n",
            n);
    return;
  }
  char **v = calloc((size_t)argc + 2, sizeof *v);
  if (!v) return;
  int k = 0;
  v[k++] = "cucore";
  for (int i = 0; i < argc; i++)
    if (strcmp(argv[i], "--fresh") != 0) v[k++] = argv[i];
  char num[16];
  snprintf(num, sizeof num, "%d", n + 1);
  setenv("CUCORE_TUNE_RESTART", num, 1);
  fprintf(stderr,
          "cucore tune: note: the device was lost after a kernel fault; the tune goes "
          "on in a fresh process (restart %d of at most %d), resuming from the store\n",
          n + 1, TUNE_RESTARTS);
  fflush(NULL);
  execv("/proc/self/exe", v);
  fprintf(stderr,
          "cucore tune: note: no fresh process could be started (%s); the "
          "configurations left are reported as not measured\n",
          strerror(errno));
  free(v);
}

/* The arch the checks before the tune compile for: --arch, else the GPU's (a dry run too: the
 * library compiles a dry run for the device it finds, so the gate must count those compiles);
 * 0 when there is none (a dry run compiles nothing then). */
static int check_arch(const tune_ctx *c) {
  const char *arch = cli_source_arch(c->src);
  if (arch) return atoi(strchr(arch, '_') ? strchr(arch, '_') + 1 : arch);
  cucore_device_props p;
  if (cucore_device_get_props((int)c->line->device, &p) == CUCORE_OK) return p.arch;
  return 0;
}

/* Everything before the tune, on any machine: the source, the space, the specs (each @FILE an
 * input), the outputs against every input, the compile options against the parameters, the
 * counts and the gate, and the specs against the kernel of the first configuration. */
static int prepare(tune_ctx *c) {
  int rc = cli_read_file("tune", c->line->file, &c->source, &c->source_size);
  cli_input_add(c->line->file);
  if (c->line->space) cli_input_add(c->line->space);
  if (!rc) rc = build_space(c);
  if (!rc) rc = take_space_checks(c);
  if (!rc) rc = tune_parse_specs(c);
  if (!rc) rc = check_outputs(c->line, c->src);
  if (!rc) rc = tune_check_defines(c);
  int arch = rc ? 0 : check_arch(c);
  c->line->dry_run_no_arch = c->line->dry_run && !arch;
  if (!rc) rc = tune_check_space(c);
  /* A dry run without --arg judges the space only; with them, or measured, the arguments are
   * checked against the kernel as `cucore run` checks them. */
  if (!rc && arch && (c->specs.nargs || c->specs.nsets || !c->line->dry_run))
    rc = tune_check_kernel(c, arch);
  return rc;
}

static int tune_body(tune_ctx *c, int argc, char **argv) {
  cli_parse parse = {"tune", cmd_tune_opts, c->line, c->src, &c->line->file, 1, 0, "FILE"};
  int rc = cli_opt_parse(&parse, argc, argv);
  /* cuInit on a thread of its own while the space and the arguments are prepared
   * (early_gpu.c); the context is the library's to make, once the store says something is
   * left to measure (a finished tune needs none). */
  if (!rc && c->line->simulate) return tune_simulate(c);
  if (!rc && !c->line->dry_run) early_gpu_start_init();
  if (!rc) rc = check_line(c->line);
  /* --devices: the other GPUs' processes start now, preparing while this one does */
  if (!rc) rc = tune_devices_run(c, argc, argv);
  if (!rc) rc = prepare(c);
  if (!rc) rc = check_gpu(c->line);
  if (!rc) rc = tune_run(c);
  tune_devices_wait(c, rc);
  if (rc) return rc;
  if (c->line->device_child == 1)
    return c->sum.have_best ? 0 : CLI_EXIT_FAILURE; /* the parent reports */
  restart_after_loss(c, argc, argv);
  tune_restriction_errors_warn(c);
  tune_report(c);
  /* --mixed-devices: a GPU's own tune reports to its parent and writes no files (they are the
   * parent's: its model's results are in the store, `--report-only` on that GPU writes them) */
  if (c->line->device_child == 2) return c->sum.have_best ? 0 : CLI_EXIT_FAILURE;
  if (!c->line->json) tune_devices_print_reports(c);
  if (c->src->log_path && (rc = tune_write_log(c, c->src->log_path))) return rc;
  if (c->line->csv && (rc = tune_write_csv(c, c->line->csv))) return rc;
  if (c->line->emit_header && (rc = tune_write_header(c, c->line->emit_header))) return rc;
  if (c->line->t4 && (rc = tune_write_t4(c, c->line->t4))) return rc;
  if (c->line->plot && (rc = tune_write_plot(c, c->line->plot))) return rc;
  if (!c->line->dry_run) return c->sum.have_best ? 0 : CLI_EXIT_FAILURE;
  size_t ok = c->sum.rows_omitted ? (size_t)(c->sum.counts.runnable > 0) : 0;
  for (size_t i = 0; i < c->nrows; i++)
    ok += c->rows[i].config.verdict == CUCORE_TUNE_RUNNABLE && !c->rows[i].error[0];
  return ok ? 0 : CLI_EXIT_FAILURE;
}

static int cmd_tune(int argc, char **argv) {
  (void)early_gpu_limit_connections(); /* before any thread: one stream needs one work queue */
  tune_line line;
  memset(&line, 0, sizeof line);
  line.finalists = 5;
  line.cold_mode = CUCORE_TUNE_COLD_AUTO;
  line.max_noise = 0.02;
  cli_source src;
  if (cli_source_init(&src)) return CLI_EXIT_FAILURE;
  tune_ctx c;
  memset(&c, 0, sizeof c);
  c.line = &line;
  c.src = &src;
  phases_mark_process_start();
  int rc = tune_body(&c, argc, argv);
  early_gpu_join();
  rc = cli_close_stdout("tune", rc);
  cucore_tune_space_destroy(c.space);
  cucore_tune_report_destroy(c.report);
  free(c.rows);
  free(c.source);
  free(line.params.v);
  free(line.restricts.v);
  free(line.args.v);
  free(line.expects.v);
  free(line.globals.v);
  for (int i = 0; i < c.owned.n; i++) free((char *)c.owned.v[i]);
  free(c.owned.v);
  args_set_free(&c.specs);
  cli_source_free(&src);
  return rc;
}

/* `cucore tune`'s one help source: the summary and text here, each option's help in its row of
 * cmd_tune_opts. */
const cli_verb cmd_tune_verb = {
    "tune", cmd_tune, "search a kernel's parameters: space, pruning, compiles, model (--dry-run)",
    cmd_tune_help, cmd_tune_opts};
