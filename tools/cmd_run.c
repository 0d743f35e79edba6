/* cmd_run.c -- `cucore run`: launch any kernel from the command line. The options are read,
 * the specs parsed (args_set.c), the code compiled or loaded, and everything that needs no
 * GPU checked first -- arguments against the kernel (args_bind.c), the launch configuration and
 * the module variables against the code -- so a wrong command fails on any machine; then the
 * GPU part (run_device.c), the files written, the --expect comparisons (args_expect.c) and the
 * report (run_result.c). */
#include "cmd_run.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* The text of `cucore help run` (and of the man page's run section). */
static const char cmd_run_help[] =
    "usage: cucore run FILE --kernel NAME --grid X[,Y,Z] --block X[,Y,Z] --arg SPEC ...\n"
    "                  [--smem BYTES] [--cluster X[,Y,Z]] [--cooperative] [--priority N] [--pdl]\n"
    "                  [--global NAME=SPEC] [--read-global NAME[:TYPE[N]][>FILE]]\n"
    "                  [--expect ARG=VALUE] [--rtol R] [--atol A]\n"
    "                  [--repeat N] [--warmup N] [--graph N] [--flush-l2] [--pool]\n"
    "                  [--device N] [--seed N]\n"
    "                  [--show N] [--json | --json-out FILE] [compile options for .cu files]\n"
    "\n"
    "Launches kernel NAME of FILE (.cu, .ptx, .cubin, .fatbin; for .cu files NAME may be a C++\n"
    "name expression such as 'scale<float>') with the arguments given by --arg, in the\n"
    "kernel's order. The arguments (count, sizes, types where known, struct alignment), the\n"
    "launch configuration (block against __launch_bounds__ and .reqntid, grid against the\n"
    "compile-time cluster shape, static + dynamic shared memory against the arch's limit)\n"
    "and the module variables named by --global / --read-global (their sizes) are checked\n"
    "before any GPU is opened, so a wrong command is reported on any machine.\n"
    "\n"
    "argument specs (--arg; quote specs with braces for the shell):\n"
    "  TYPE:VALUE            a scalar; TYPE is i8 u8 i16 u16 i32 u32 i64 u64 f16 bf16 f32 f64\n"
    "                        (f32:2.5, i32:-7, u64:0xffffffffffffffff, f64:nan, f16:inf).\n"
    "                        A value must fit its type: integers their range, f16 +-65504,\n"
    "                        bf16 +-3.3895314e38, f32 +-3.4028235e38, f64 +-1.7976931e308\n"
    "                        (a value that would round to infinity is refused; write inf,\n"
    "                        -inf or nan for those); tiny values round to subnormals or 0\n"
    "  null, ptr:ADDR        a pointer parameter given as an address (null is 0)\n"
    "  buf:TYPE[N]=INIT      a device buffer of N elements, passed as a pointer. INIT is a\n"
    "                        number (every element), iota (0, 1, 2, ...), random (seeded by\n"
    "                        --seed: floats in [0,1), integers 0..99), {v0,v1,...} (N values),\n"
    "                        @FILE.npy (NumPy: dtype and size must match the spec) or @FILE\n"
    "                        (raw little-endian bytes). With @FILE, [] takes N from the file.\n"
    "  out:TYPE[N]           a zeroed device buffer, printed after the run\n"
    "  inout:TYPE[N]=INIT    an initialised buffer, printed after the run (in-place kernels)\n"
    "  ...>FILE              after any buffer: its contents after the run are written to FILE\n"
    "                        (.npy with the input file's shape, or raw bytes), e.g.\n"
    "                        out:f32[1024]>y.npy, inout:f32[]=@x.npy>x_after.npy\n"
    "  struct:{FIELD,...}    a struct by value, laid out by C rules: each field at the next\n"
    "                        multiple of its alignment (a scalar's size; 8 for pointers; an\n"
    "                        array's element; a nested struct's largest), the size rounded up\n"
    "                        to the largest alignment. A FIELD is any spec above or below (a\n"
    "                        buffer field passes its pointer), TYPE[N]=INIT for an array,\n"
    "                        {FIELD,...} for a nested struct, or pad:N for N zero bytes.\n"
    "  struct@A:{FIELD,...}  the same with alignas(A) (A a power of two up to 4096)\n"
    "  bytes:HEX, bytes:@FILE   any by-value blob, given as hex pairs (00ff_10a0) or read from\n"
    "  bytes@A:HEX              a file; alignment 1 unless @A gives one\n"
    "The size and alignment of a struct or blob are checked against the parameter's; a\n"
    "mismatch shows the layout that was built (f32@0 i32@4 pad 4 f64@8).\n"
    "Buffers are numbered by the argument that made them: \"2\" for --arg number 2 (from 0),\n"
    "\"3.1\" for field 1 of the struct given as argument 3.\n"
    "\n"
    "options (`--flag value` or `--flag=value`):\n"
    "%o"
    "\n"
    "timing (device events): the outputs, --read-global and --expect always see exactly one\n"
    "launch on the inputs as given. With --repeat N or --warmup W that launch is followed by\n"
    "W untimed and N timed launches, and min / median / max / mean are reported; otherwise\n"
    "the one launch is timed. The kernel is loaded before any launch, so lazy loading is not\n"
    "timed. The effective bandwidth is the bytes of every buffer read (buf, inout) and\n"
    "written (out, inout) once, over the median time.\n"
    "\n"
    "startup: cuInit and the device's context are made on a second thread as soon as the\n"
    "command line is read, beside the compile (which needs no context; a .cubin or .fatbin\n"
    "has none, and its run is serial), and NVML's load on a third; buffers come from\n"
    "cuMemAlloc unless --pool. --timings shows each phase and when it ran.\n"
    "CUCORE_RUN_SERIAL=1 in the environment makes the context after the compile instead,\n"
    "CUCORE_RUN_EARLY=1 on its thread for a cubin too (for comparisons). The context has one\n"
    "hardware work queue (CUDA_DEVICE_MAX_CONNECTIONS=1; the run launches into one stream,\n"
    "and the driver's default number makes a context ~50 ms slower to create and to tear\n"
    "down); a CUDA_DEVICE_MAX_CONNECTIONS in the environment is kept. --json says which\n"
    "(\"max_connections\").\n"
    "\n"
    "Exit status: 0 ran (and every --expect matched); 1 wrong arguments, a launch that cannot\n"
    "run, an input file that cannot be used, a failed launch, a failed write, an --expect\n"
    "that differs, or no GPU (after every check that needs none); 2 a malformed command line\n"
    "or spec, an --expect whose file, value or count is wrong, or an output file (--json-out,\n"
    ">FILE) that cannot be written or is an input -- all found before the launch.\n"
    "\n"
    "compile options:\n"
    "%s"
    "\n"
    "examples:\n"
    "  cucore run saxpy.cu --kernel saxpy --grid 4096 --block 256 \\\n"
    "      --arg f32:2.5 --arg buf:f32[1048576]=random --arg out:f32[1048576] \\\n"
    "      --arg i32:1048576 --repeat 100 --flush-l2\n"
    "  # a struct by value, a __constant__ table and .npy files, checked against a reference\n"
    "  # (examples/fir: fir.cu, and make_data.py, which writes x.npy, taps.npy, y_ref.npy):\n"
    "  #   struct FirParams { float gain; int n; double bias; };\n"
    "  #   __constant__ float taps[16];\n"
    "  #   extern \"C\" __global__ void fir(FirParams p, const float *x, float *y);\n"
    "  cucore run fir.cu --kernel fir --grid 4 --block 256 \\\n"
    "      --arg 'struct:{f32:0.5,i32:1024,f64:0.25}' \\\n"
    "      --arg 'buf:f32[]=@x.npy' --arg 'out:f32[1024]>y.npy' \\\n"
    "      --global 'taps=f32[]=@taps.npy' \\\n"
    "      --expect '2=@y_ref.npy' --rtol 1e-5 --atol 1e-6\n"
    "  # the same launch replayed from a CUDA graph of 100 launches, 20 timed replays:\n"
    "  cucore run fir.cu --kernel fir --grid 4 --block 256 ... --graph 100 --repeat 20\n"
    "  cucore run k.cubin --kernel 'scale<float>' --grid 1 --block 64 \\\n"
    "      --arg 'inout:f32[64]=iota' --arg f32:3 --arg i32:64 --expect 0=@scaled.npy\n"
    "  cucore run k.cu --kernel count --grid 1 --block 32 --arg i32:32 \\\n"
    "      --read-global hits:u64 --expect hits=32 --json\n";

/* The verb's command line: the options and the raw texts of the specs given several times,
 * parsed once every option is known. */
typedef struct run_line {
  run_opts o;
  cli_list args, sets, reads, expects;
  int have_grid, have_block;
} run_line;

#define RUN_AT(field) CLI_AT(run_line, field)

static const cli_opt cmd_run_opts[] = {
    {.name = "--kernel",
     .kind = CLI_OPT_TEXT,
     RUN_AT(o.kernel),
     .arg = "NAME",
     .help = "the kernel (for .cu files also a C++ name expression such as 'scale<float>')"},
    {.name = "--grid",
     .kind = CLI_OPT_DIMS,
     RUN_AT(o.grid),
     CLI_SEEN(run_line, have_grid),
     .dims = &cli_dims_grid,
     .arg = "X[,Y,Z]",
     .help = "blocks in the grid"},
    {.name = "--block",
     .kind = CLI_OPT_DIMS,
     RUN_AT(o.block),
     CLI_SEEN(run_line, have_block),
     .dims = &cli_dims_block,
     .arg = "X[,Y,Z]",
     .help = "threads per block, at most 1024 in all"},
    {.name = "--arg",
     .kind = CLI_OPT_LIST,
     RUN_AT(args),
     .arg = "SPEC",
     .help = "the next kernel argument (see argument specs above)"},
    {.name = "--global",
     .kind = CLI_OPT_LIST,
     RUN_AT(sets),
     .arg = "NAME=SPEC",
     .help = "writes a __device__, __constant__ or __managed__ variable before the run;\n"
             "SPEC is a value spec whose size must be the variable's\n"
             "(table=f32[64]=@table.npy, n=i32:5, p=struct:{f32:1,i32:2},\n"
             "ptr=buf:f32[16]=iota). NAME is the symbol or, for .cu files, a C++\n"
             "name ('ns::coef<float>': it is registered as a name expression)"},
    {.name = "--read-global",
     .kind = CLI_OPT_LIST,
     RUN_AT(reads),
     .arg = "NAME[:TYPE[N]][>FILE]",
     .help = "prints the variable after the run (as u8 bytes without a TYPE; N\n"
             "defaults to the whole variable) and saves it"},
    {.name = "--expect",
     .kind = CLI_OPT_LIST,
     RUN_AT(expects),
     .arg = "ARG=VALUE",
     .help = "compares an output after the run: ARG is a buffer's number (2, 3.1) or a\n"
             "--read-global NAME; VALUE a number (every element), iota, {v0,v1,...}\n"
             "or @FILE (.npy of the same dtype, or raw). Floating point matches when\n"
             "|got - want| <= atol + rtol * |want| (NaN matches NaN); integers match\n"
             "exactly unless a tolerance is given. The first mismatches are printed\n"
             "with their indices, and the exit status is 1 when any element differs"},
    {.name = "--rtol",
     .kind = CLI_OPT_REAL,
     RUN_AT(o.specs.rtol),
     CLI_SEEN(run_line, o.specs.has_rtol),
     .arg = "R",
     .help = "relative tolerance, a finite number >= 0 (default 1e-05, as numpy)"},
    {.name = "--atol",
     .kind = CLI_OPT_REAL,
     RUN_AT(o.specs.atol),
     CLI_SEEN(run_line, o.specs.has_atol),
     .arg = "A",
     .help = "absolute tolerance, a finite number >= 0 (default 1e-08)"},
    {.name = "--smem",
     .kind = CLI_OPT_INT,
     RUN_AT(o.smem),
     .lo = 0,
     .hi = CLI_HI_SMEM,
     .arg = "BYTES",
     .help = "dynamic shared memory (the kernel's limit is raised above 48 KiB\n"
             "as needed; the arch's own limit is checked before the launch)"},
    {.name = "--cluster",
     .kind = CLI_OPT_DIMS,
     RUN_AT(o.cluster),
     .dims = &cli_dims_cluster,
     .arg = "X[,Y,Z]",
     .help = "blocks per cluster; clusters above the portable 8 blocks (from\n"
             "--cluster or the kernel's __cluster_dims__) are allowed on the\n"
             "kernel automatically where the device supports them"},
    {.name = "--cooperative",
     .kind = CLI_OPT_FLAG,
     RUN_AT(o.cooperative),
     .help = "a cooperative launch (grid-wide synchronisation)"},
    {.name = "--priority",
     .kind = CLI_OPT_INT,
     RUN_AT(o.priority),
     CLI_SEEN(run_line, o.has_priority),
     .lo = -1000,
     .hi = 1000,
     .arg = "N",
     .help = "the launch's priority (lower is higher, as for streams)"},
    {.name = "--pdl",
     .kind = CLI_OPT_FLAG,
     RUN_AT(o.pdl),
     .help = "programmatic dependent launch (overlaps the previous launch)"},
    {.name = "--device",
     .kind = CLI_OPT_INT,
     RUN_AT(o.device),
     .lo = 0,
     .hi = 1023,
     .arg = "N",
     .help = "the GPU to use (default 0; checked against the GPUs present)"},
    {.name = "--pool",
     .kind = CLI_OPT_FLAG,
     RUN_AT(o.pool),
     .help = "device buffers from the device's stream-ordered pool on the run's stream\n"
             "(cuMemAllocAsync; cuMemAlloc with a note where the device has no pools).\n"
             "By default they come from cuMemAlloc: the pool's first use costs a run\n"
             "of a few launches 10-15 ms, which a plain allocation does not"},
    {.name = "--no-pool",
     .kind = CLI_OPT_FLAG,
     RUN_AT(o.no_pool),
     .help = "device buffers from cuMemAlloc (the default; overrides --pool)"},
    {.name = "--repeat",
     .kind = CLI_OPT_INT,
     RUN_AT(o.repeat),
     .lo = 1,
     .hi = 1000000,
     .arg = "N",
     .help = "timed launches after the first"},
    {.name = "--warmup",
     .kind = CLI_OPT_INT,
     RUN_AT(o.warmup),
     .lo = 0,
     .hi = 1000000,
     .arg = "W",
     .help = "untimed launches before the timed ones"},
    {.name = "--flush-l2",
     .kind = CLI_OPT_FLAG,
     RUN_AT(o.flush_l2),
     .help = "writes a buffer of twice the device's L2 size before each timed launch,\n"
             "so each starts with a cold cache"},
    {.name = "--graph",
     .kind = CLI_OPT_INT,
     RUN_AT(o.graph),
     .lo = 1,
     .hi = 100000,
     .arg = "N",
     .help = "captures N launches once into a CUDA graph (each checked as a direct\n"
             "launch is), instantiates and uploads it; the --warmup and --repeat\n"
             "counts are then replays of the graph, reported per replay and per\n"
             "launch, beside the same N launches made directly back to back (also per\n"
             "launch). The outputs still see the one launch. At most 10^8 launches\n"
             "in all (N * (repeat + warmup))"},
    {.name = "--seed",
     .kind = CLI_OPT_INT,
     RUN_AT(o.seed),
     .lo = 0,
     .hi = LLONG_MAX,
     .arg = "N",
     .help = "the start of `random` fills (0: the default)"},
    {.name = "--show",
     .kind = CLI_OPT_INT,
     RUN_AT(o.show),
     .lo = 0,
     .hi = 1 << 30,
     .arg = "N",
     .help = "values printed of each output (default 8)"},
    {.name = "--timings",
     .kind = CLI_OPT_FLAG,
     RUN_AT(o.timings),
     .help = "prints on stderr, at the end, the wall time of each phase of the process:\n"
             "process start to main, each library loaded (libcuda, NVRTC, nvJitLink,\n"
             "libNVVM, libzstd), cuInit, the context, the compile cache, the compile,\n"
             "the module load, allocations, copies in, the launch, copies out, the\n"
             "report and teardown (ms after the process started), and the phases that\n"
             "were not needed. --json reports the same as \"phases\" (those before the\n"
             "report)"},
    {.name = "--json",
     .kind = CLI_OPT_FLAG,
     RUN_AT(o.json),
     .help = "one JSON object on stdout instead of text: integers exact (up to 2^64-1),\n"
             "floating point as the shortest text that reads back to the same value,\n"
             "NaN and infinities as the strings \"nan\", \"inf\", \"-inf\". Device\n"
             "printf output goes to stderr while the kernel runs, so stdout holds only\n"
             "the JSON. Without a result (a usage error, a wrong argument, no GPU...)\n"
             "stdout stays empty: the reason is on stderr and the exit status is the\n"
             "one without --json; a run whose --expect differs reports, exit 1"},
    {.name = "--json-out",
     .kind = CLI_OPT_TEXT,
     RUN_AT(o.json_out),
     .arg = "FILE",
     .help = "the same JSON written to FILE; the text report stays on stdout"},
    {0}};

/* Reads the command line into `o` (specs as raw texts in the lists). */
static int read_options(cli_source *src, int argc, char **argv, run_line *l) {
  run_opts *o = &l->o;
  cli_parse parse = {"run", cmd_run_opts, l, src, &o->file, 1, 0, "FILE"};
  int rc = cli_opt_parse(&parse, argc, argv);
  if (rc) return rc;
  if (!o->file || !o->kernel || !l->have_grid || !l->have_block)
    return cli_usage("run",
                     "FILE, --kernel, --grid and --block are required; see `cucore help run`");
  if (o->graph && o->graph * (o->repeat + o->warmup) > 100000000LL)
    return cli_usage("run",
                     "--graph %lld with --repeat %lld and --warmup %lld makes %lld "
                     "launches; at most 100000000",
                     o->graph, o->repeat, o->warmup, o->graph * (o->repeat + o->warmup));
  return 0;
}

/* Parses every spec, in the order given (random fills follow --seed in that order). */
static int parse_specs(args_set *s, unsigned long long seed, cli_list *args, cli_list *sets,
                       cli_list *reads, cli_list *expects) {
  args_fill_random_seed(seed);
  s->args = calloc((size_t)(args->n ? args->n : 1), sizeof *s->args);
  s->sets = calloc((size_t)(sets->n ? sets->n : 1), sizeof *s->sets);
  s->reads = calloc((size_t)(reads->n ? reads->n : 1), sizeof *s->reads);
  s->expects = calloc((size_t)(expects->n ? expects->n : 1), sizeof *s->expects);
  if (!s->args || !s->sets || !s->reads || !s->expects)
    return cli_fail("run", "options", CUCORE_HOST_OUT_OF_MEMORY);
  for (int i = 0; i < args->n; i++) {
    int rc = args_set_parse_arg(s, args->v[i], i, &s->args[i]);
    s->nargs = i + 1;
    if (rc) return rc;
  }
  for (int i = 0; i < sets->n; i++) {
    int rc = args_set_parse_global(s, sets->v[i], &s->sets[i]);
    s->nsets = i + 1;
    if (rc) return rc;
  }
  for (int i = 0; i < reads->n; i++) {
    int rc = args_set_parse_read(reads->v[i], &s->reads[i]);
    s->nreads = i + 1;
    if (rc) return rc;
  }
  for (int i = 0; i < expects->n; i++) {
    int rc = args_set_parse_expect(expects->v[i], &s->expects[i]);
    s->nexpects = i + 1;
    if (rc) return rc;
    if (!args_expect_target_known(s, s->expects[i].target)) {
      char list[512] = "";
      size_t n = 0;
      for (int b = 0; b < s->nbufs && n + 40 < sizeof list; b++)
        n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", n ? ", " : "", s->bufs[b].label);
      for (int r = 0; r < s->nreads && n + 40 < sizeof list; r++)
        n += (size_t)snprintf(list + n, sizeof list - n, "%s%.30s", n ? ", " : "",
                              s->reads[r].name);
      return cli_usage("run",
                       "--expect `%s`: `%s` is no buffer argument and no --read-global "
                       "(%s%s)",
                       s->expects[i].text, s->expects[i].target,
                       n ? "these can be expected: " : "there is no output to compare", list);
    }
  }
  return 0;
}

/* Without a GPU: the launch configuration and the module variables against the code. */
static int check_offline(run_opts *o, cucore_kernel *k, cucore_object *obj, int *arch) {
  cucore_launch_config cfg;
  memset(&cfg, 0, sizeof cfg);
  memcpy(cfg.grid, o->grid, sizeof cfg.grid);
  memcpy(cfg.block, o->block, sizeof cfg.block);
  cfg.shared_bytes = (unsigned)o->smem;
  if (o->cluster[0])
    cucore_launch_config_cluster(&cfg, o->cluster[0], o->cluster[1], o->cluster[2]);
  if (o->cooperative) cucore_launch_config_cooperative(&cfg, 1);
  cucore_binary *bin = args_bind_read_code(obj);
  *arch = 0;
  if (bin) {
    cucore_binary_info info;
    cucore_binary_get_info(bin, &info);
    *arch = info.arch;
  }
  /* The command allows clusters above 8 blocks where the device can (as on a GPU). */
  cucore_status st = cucore_kernel_check_launch_offline(k, &cfg, 0,
                                                        CUCORE_CHECK_NON_PORTABLE_CLUSTER);
  if (CUCORE_CODE(st) == CUCORE_LAUNCH_CONFIG) {
    cucore_binary_destroy(bin);
    return cli_fail("run", o->kernel, st); /* as the GPU path says it */
  }
  cucore_binary_destroy(bin);
  return args_bind_check_globals(&o->specs, obj);
}

/* 1 when `file` is compiled by the run (CUDA C++ or NVVM IR), or JIT-compiled by the driver
 * as it loads (PTX, and code cucore_object_from_file tells by its bytes); 0 for a cubin or a
 * fatbin, which load as they are. */
static int run_compiles(const char *file) {
  const char *dot = strrchr(file, '.');
  return !dot || (strcmp(dot, ".cubin") != 0 && strcmp(dot, ".fatbin") != 0);
}

/* Compiles a .cu (registering the kernel's and the globals' names) or loads the file. */
static int load_code(cli_source *src, run_opts *o, cucore_object **obj) {
  const char *dot = strrchr(o->file, '.');
  if (dot && (!strcmp(dot, ".cu") || !strcmp(dot, ".ll") || !strcmp(dot, ".bc"))) {
    if (!strcmp(dot, ".cu")) {
      if (cli_source_add_expr(src, o->kernel)) return CLI_EXIT_FAILURE;
      /* C++ names of module variables are registered as "&NAME" (NVRTC takes a variable's
       * name expression as its address); plain names are their own symbols. */
      for (int i = 0; i < o->specs.nsets + o->specs.nreads; i++) {
        const char *name = i < o->specs.nsets ? o->specs.sets[i].name
                                              : o->specs.reads[i - o->specs.nsets].name;
        if (args_bind_plain_name(name)) continue;
        if (args_set_keep_expr(&o->specs, name) ||
            cli_source_add_expr(src, o->specs.exprs[o->specs.nexprs - 1]))
          return CLI_EXIT_FAILURE;
      }
    }
    return cli_source_compile(src, "run", o->file, CUCORE_CODE_CUBIN, obj, NULL);
  }
  cucore_status st = cucore_object_from_file(o->file, CUCORE_CODE_AUTO, obj);
  return st == CUCORE_OK ? 0 : cli_fail("run", o->file, st);
}

/* Before any work, on any machine: the --expect values and files, and the output files
 * (none an input; the inputs are the code and every @FILE, noted as the specs were read). */
static int check_before_work(run_opts *o) {
  cli_input_add(o->file);
  int rc = args_expect_prepare(&o->specs);
  return rc ? rc : run_outputs_check(o);
}

/* No GPU: everything that needs none is checked, and it is said that nothing was launched. */
static int run_offline(run_opts *o, cucore_kernel *k, cucore_object *obj, int ndev) {
  int arch = 0;
  const char *why = ndev == 0 && !cucore_last_error()[0] ? "no device" : cucore_last_error();
  char reason[512];
  snprintf(reason, sizeof reason, "%s", why);
  int rc = check_offline(o, k, obj, &arch);
  if (rc) return rc;
  fprintf(stderr, "cucore run: the %d arguments match kernel `%s`", o->specs.nargs, o->kernel);
  if (arch) fprintf(stderr, ", the launch configuration fits sm_%d", arch);
  if (o->specs.nsets + o->specs.nreads)
    fprintf(stderr, " and the %d module variables fit", o->specs.nsets + o->specs.nreads);
  fprintf(stderr, "; no GPU here (%s), so nothing was launched\n", reason);
  return CLI_EXIT_FAILURE;
}

/* The report, as JSON in --json-out's file (the text on stdout) or on stdout. */
static int write_report(run_opts *o, const run_timing *t, const char *symbol) {
  if (!o->json_out) {
    json_out j = {stdout, 0, {0}, 1};
    run_result_print(o, t, symbol, o->json ? &j : NULL);
    return 0;
  }
  cli_outfile f;
  if (cli_out_open(&f, "run", "--json-out", o->json_out)) {
    run_result_print(o, t, symbol, NULL); /* the text report at least */
    return CLI_EXIT_FAILURE;
  }
  json_out j = {f.f, 0, {0}, 1};
  run_result_print(o, t, symbol, &j);
  return cli_out_close(&f, 1);
}

/* After the launch: the files, the --expect comparisons and the report, each done even when
 * an earlier one failed, so the timing is never lost. */
static int run_finish(run_opts *o, const run_timing *t, const char *symbol) {
  int rc = run_outputs_save(o);
  int failed = args_expect_check(&o->specs);
  int report = write_report(o, t, symbol);
  if (failed > 0)
    fprintf(stderr, "cucore run: %d --expect check%s failed\n", failed, failed == 1 ? "" : "s");
  if (!rc && failed) rc = CLI_EXIT_FAILURE;
  return rc ? rc : report;
}

static int run_body(cli_source *src, int argc, char **argv, run_opts *o) {
  run_line l;
  memset(&l, 0, sizeof l);
  l.o = *o;
  l.o.show = 8;
  l.o.repeat = 1;
  int rc = read_options(src, argc, argv, &l);
  *o = l.o;
  if (!rc) rc = parse_specs(&o->specs, o->seed, &l.args, &l.sets, &l.reads, &l.expects);
  free(l.args.v);
  free(l.sets.v);
  free(l.reads.v);
  free(l.expects.v);
  if (!rc) rc = check_before_work(o);
  if (rc) return rc;
  o->connections = early_gpu_limit_connections(); /* one work queue: before cuInit and any thread */
  early_gpu_start(o->device, run_is_timed(o), run_compiles(o->file)); /* beside the compile */

  /* 1. The code and the kernel -- offline when there is no GPU. */
  cucore_object *obj = NULL;
  rc = load_code(src, o, &obj);
  cli_source_free(src);
  if (rc) return rc;
  cucore_kernel *k = NULL;
  cucore_args *list = NULL;
  const char *symbol = o->kernel;
  double t0 = 0;
  cucore_status st = cucore_object_get_kernel(obj, o->kernel, &k);
  if (st != CUCORE_OK) {
    rc = cli_fail("run", o->file, st);
    goto done;
  }
  cucore_kernel_get_name(k, &symbol);
  st = cucore_args_create(k, &list);
  if (st != CUCORE_OK) {
    rc = cli_fail("run", o->kernel, st);
    goto done;
  }
  /* 2. The arguments against the kernel, before any GPU is opened. */
  rc = args_bind_all(&o->specs, list, obj, symbol);
  if (rc) goto done;
  int ndev = 0;
  if (cucore_device_get_count(&ndev) != CUCORE_OK || ndev == 0) {
    rc = run_offline(o, k, obj, ndev);
    goto done;
  }
  if (o->device >= ndev) {
    rc = cli_usage("run", "--device %d: there %s %d GPU%s (0..%d)", o->device,
                   ndev == 1 ? "is" : "are", ndev, ndev == 1 ? "" : "s", ndev - 1);
    goto done;
  }
  /* 3. The GPU, then files, checks and the report. */
  early_gpu_join();
  run_timing t;
  rc = run_on_device(o, k, obj, &t);
  if (rc) goto done;
  t0 = phases_now();
  rc = run_finish(o, &t, symbol);
  phases_add(CUCORE_PHASE_REPORT, t0);
done:
  t0 = phases_now();
  cucore_args_destroy(list);
  cucore_kernel_destroy(k);
  cucore_object_destroy(obj);
  phases_add(CUCORE_PHASE_TEARDOWN, t0);
  return rc;
}

/* Every exit path frees the verb's options and specs, early usage errors included. */
static int cmd_run(int argc, char **argv) {
  cli_source src;
  if (cli_source_init(&src)) return CLI_EXIT_FAILURE;
  run_opts o;
  memset(&o, 0, sizeof o);
  phases_mark_process_start();
  int rc = run_body(&src, argc, argv, &o);
  early_gpu_end();
  cli_source_free(&src);
  int timings = o.timings;
  args_set_free(&o.specs);
  if (timings) {
    fflush(stdout);
    phases_print(stderr);
  }
  return rc;
}

/* `cucore run`'s one help source: the summary and text here (cmd_run_help), each option's help
 * in its row of cmd_run_opts. */
const cli_verb cmd_run_verb = {
    "run", cmd_run, "launch a kernel with checked arguments, time it, summarise its outputs",
    cmd_run_help, cmd_run_opts};
