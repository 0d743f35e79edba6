/* cmd_occupancy.c -- `cucore occupancy`: blocks per SM, occupancy and the binding limit for a
 * kernel, from the driver when a GPU of that arch is present, from the host model otherwise. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char cmd_occupancy_help[] =
    "usage: cucore occupancy FILE --kernel NAME [--arch sm_XX] [--block N] [--smem BYTES]\n"
    "                        [--cluster X,Y,Z] [--json] [compile options for .cu files]\n"
    "\n"
    "How many blocks of NAME fit on one SM, the occupancy (active warps / max warps) and the\n"
    "limit that binds (warps, registers, shared_memory, blocks or barriers). FILE is .cu\n"
    "(compiled for --arch), .cubin, .fatbin or .ptx compiled by ptxas into a cubin first.\n"
    "NAME may be a C++ name expression ('scale<float>') for .cu files.\n"
    "\n"
    "With --block, the answer for that block size; without, a table over block sizes\n"
    "32..1024 (step 32) with the best block size marked, like NVIDIA's occupancy calculator.\n"
    "--smem is dynamic shared memory per block (default 0). --cluster asks the driver how many\n"
    "clusters of that shape fit (needs a GPU: it depends on how the chip groups its SMs).\n"
    "\n"
    "Source of the answers: the driver (cuOccupancy*) when a GPU of the arch is present, the\n"
    "host model (same answers on every kernel and size tested on an H100) otherwise; the\n"
    "output says which.\n"
    "\n"
    "options (`--flag value` or `--flag=value`):\n"
    "%o"
    "\n"
    "--json with --block prints one object {\"block\", \"smem\", \"active_blocks_per_sm\",\n"
    "\"active_warps_per_sm\", \"occupancy\", \"limit\", \"source\"}; without --block\n"
    "{\"rows\": [...], \"best_block\": B}.\n"
    "\n"
    "compile options:\n"
    "%s"
    "\n"
    "exit status: 0 answered; 1 the kernel cannot run (the answer is printed, the reason is\n"
    "on stderr) or the file is unusable; 2 usage. The same with --json.\n"
    "\n"
    "examples:\n"
    "  cucore occupancy saxpy.cu --kernel saxpy --arch sm_90\n"
    "  cucore occupancy k.cubin --kernel heavy --block 256 --smem 49152 --json\n";

typedef struct occ_row {
  int block;
  int blocks, warps;
  double occupancy;
  const char *limit;
  int ok;
} occ_row;

typedef struct occ_ctx {
  int use_driver;
  cucore_kernel *kernel; /* driver mode */
  cucore_stream *stream;
  cucore_device *dev;
  cucore_arch_limits limits; /* both modes (explanations) */
  cucore_kernel_resources res;
} occ_ctx;

static int row_for(occ_ctx *c, int block, size_t smem, occ_row *row) {
  memset(row, 0, sizeof *row);
  row->block = block;
  cucore_occupancy_result r;
  memset(&r, 0, sizeof r);
  cucore_status ms = cucore_occupancy_model_blocks(&c->limits, &c->res, block, smem, 0, &r);
  if (c->use_driver) {
    cucore_launch_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.block[0] = (unsigned)block;
    cfg.shared_bytes = (unsigned)smem;
    cfg.stream = c->stream;
    int n = 0;
    if (cucore_occupancy_max_active_blocks(c->kernel, &cfg, 0, &n) != CUCORE_OK) return -1;
    row->blocks = n;
  } else {
    if (ms != CUCORE_OK) return -1;
    row->blocks = r.active_blocks_per_sm;
  }
  int warps_per_block = (block + c->limits.warp_size - 1) / c->limits.warp_size;
  row->warps = row->blocks * warps_per_block;
  row->occupancy = (double)row->warps / c->limits.max_warps_per_sm;
  row->limit = ms == CUCORE_OK ? cucore_occupancy_limit_name(r.limit) : "none";
  row->ok = row->blocks > 0;
  return 0;
}

static void row_json(json_out *j, const occ_row *r, size_t smem, const char *source) {
  json_begin_object(j, NULL);
  json_int(j, "block", r->block);
  json_int(j, "smem", (long long)smem);
  json_int(j, "active_blocks_per_sm", r->blocks);
  json_int(j, "active_warps_per_sm", r->warps);
  json_num(j, "occupancy", r->occupancy);
  json_str(j, "limit", r->limit);
  json_str(j, "source", source);
  json_end_object(j);
}

/* The kernel's resources without a GPU, from the offline reader. */
static int model_inputs(cucore_object *obj, const char *name, int arch, occ_ctx *c,
                        const char *file) {
  const void *code = NULL;
  size_t size = 0;
  cucore_code_type type;
  cucore_object_get_code(obj, &type, &code, &size);
  cucore_binary *bin = NULL;
  cucore_status st = cucore_binary_open(code, size, type, arch, &bin);
  if (st != CUCORE_OK) return cli_fail("occupancy", file, st);
  cucore_binary_info info;
  cucore_binary_get_info(bin, &info);
  const cucore_kernel_info *k = NULL;
  st = cucore_binary_find_kernel(bin, name, &k);
  if (st != CUCORE_OK) {
    cucore_binary_destroy(bin);
    return cli_fail("occupancy", file, st);
  }
  if (k->registers == CUCORE_UNKNOWN) {
    cucore_binary_destroy(bin);
    fprintf(stderr,
            "cucore occupancy: %s: PTX records no register use; compile it to a cubin "
            "first (cucore compile %s --arch sm_XX)\n",
            file, file);
    return CLI_EXIT_FAILURE;
  }
  if (!arch) arch = info.arch;
  st = cucore_arch_get_limits(arch, &c->limits);
  if (st != CUCORE_OK) {
    cucore_binary_destroy(bin);
    return cli_fail("occupancy", file, st);
  }
  cucore_kernel_info_get_resources(k, &c->res);
  cucore_binary_destroy(bin);
  return 0;
}

/* The verb's command line (its table below). */
typedef struct occ_line {
  const char *kernel;
  long long block, smem;
  unsigned cluster[3];
  int json;
  int timings;
} occ_line;

static int want_timings; /* --timings: the phase table at the end */

static const cli_opt cmd_occupancy_opts[] = {
    {.name = "--kernel",
     .kind = CLI_OPT_TEXT,
     CLI_AT(occ_line, kernel),
     .arg = "NAME",
     .help = "the kernel (a C++ name expression such as 'scale<float>' for .cu files)"},
    {.name = "--block",
     .kind = CLI_OPT_INT,
     CLI_AT(occ_line, block),
     .lo = 1,
     .hi = 1024,
     .arg = "N",
     .help = "threads per block: the answer for that size (else a table)"},
    {.name = "--smem",
     .kind = CLI_OPT_INT,
     CLI_AT(occ_line, smem),
     .lo = 0,
     .hi = CLI_HI_SMEM,
     .arg = "BYTES",
     .help = "dynamic shared memory per block (default 0)"},
    {.name = "--cluster",
     .kind = CLI_OPT_DIMS,
     CLI_AT(occ_line, cluster),
     .dims = &cli_dims_cluster,
     .arg = "X[,Y,Z]",
     .help = "how many clusters of this shape fit (needs a GPU)"},
    {.name = "--json", .kind = CLI_OPT_FLAG, CLI_AT(occ_line, json), .help = CLI_JSON_HELP},
    {.name = "--timings",
     .kind = CLI_OPT_FLAG,
     CLI_AT(occ_line, timings),
     .help = CLI_TIMINGS_HELP},
    {0}};

/* What the verb asked and opened; the handles are freed once by cmd_occupancy. */
typedef struct occ_job {
  const char *file, *kernel, *symbol; /* symbol: the kernel's lowered name */
  int block, json, arch;
  long long smem;
  unsigned cluster[3];
  cucore_object *obj;
  occ_ctx c;
  const char *source; /* "driver" or "model" */
} occ_job;

/* Reads the command line into *job. */
static int occ_read_line(cli_source *srcp, int argc, char **argv, occ_job *job) {
  occ_line line = {NULL, 0, 0, {0, 0, 0}, 0, 0};
  cli_parse parse = {"occupancy", cmd_occupancy_opts, &line, srcp, &job->file, 1, 0, "FILE"};
  int rc = cli_opt_parse(&parse, argc, argv);
  want_timings = line.timings;
  if (rc) return rc;
  const char *arch_text = cli_source_arch(srcp);
  job->kernel = line.kernel;
  job->block = (int)line.block;
  job->json = line.json;
  job->arch = arch_text ? atoi(strchr(arch_text, '_') ? strchr(arch_text, '_') + 1 : arch_text) : 0;
  job->smem = line.smem;
  memcpy(job->cluster, line.cluster, sizeof job->cluster);
  if (!job->file || !job->kernel)
    return cli_usage("occupancy",
                     "usage: cucore occupancy FILE --kernel NAME [--block N] [--smem BYTES]");
  return 0;
}

/* The code: compiled from source, or read; the kernel's symbol in it. */
static int occ_load(cli_source *srcp, occ_job *job) {
  int rc = 0;
  const char *dot = strrchr(job->file, '.');
  int source = dot && (strcmp(dot, ".cu") == 0 || strcmp(dot, ".ll") == 0 ||
                       strcmp(dot, ".bc") == 0 || strcmp(dot, ".ptx") == 0);
  if (source) {
    if (strcmp(dot, ".cu") == 0 && cli_source_add_expr(srcp, job->kernel)) return CLI_EXIT_FAILURE;
    rc = cli_source_compile(srcp, "occupancy", job->file, CUCORE_CODE_CUBIN, &job->obj, NULL);
  } else {
    cucore_status st = cucore_object_from_file(job->file, CUCORE_CODE_AUTO, &job->obj);
    if (st != CUCORE_OK) rc = cli_fail("occupancy", job->file, st);
  }
  cli_source_free(srcp);
  if (rc) return rc;
  /* The lowered name of a name expression; `kernel` itself when it is not one. */
  job->symbol = job->kernel;
  cucore_object_get_lowered_name(job->obj, job->kernel, &job->symbol);
  if (!job->symbol) job->symbol = job->kernel;
  return 0;
}

/* The inputs of the answers: from the driver when a GPU of the arch is here, from the
 * offline reader for the host model otherwise. */
static int occ_inputs(occ_job *job) {
  occ_ctx *c = &job->c;
  int ndev = 0;
  cucore_device_props props;
  if (cucore_device_get_count(&ndev) == CUCORE_OK && ndev > 0 &&
      cucore_device_get_props(0, &props) == CUCORE_OK && (!job->arch || job->arch == props.arch)) {
    c->use_driver = 1;
    job->source = "driver";
    cucore_status st = cucore_device_open(0, &c->dev);
    if (st == CUCORE_OK) st = cucore_stream_default(c->dev, &c->stream);
    if (st == CUCORE_OK) st = cucore_object_get_kernel(job->obj, job->symbol, &c->kernel);
    if (st == CUCORE_OK) st = cucore_occupancy_inputs(c->kernel, c->dev, &c->limits, &c->res);
    if (st != CUCORE_OK) return cli_fail("occupancy", job->file, st);
    return 0;
  }
  job->source = "model";
  return model_inputs(job->obj, job->symbol, job->arch, c, job->file);
}

/* --cluster: how many clusters of the shape fit (the driver only). */
static int occ_clusters(const occ_job *job) {
  const unsigned *cluster = job->cluster;
  if (!job->c.use_driver) {
    fprintf(stderr, "cucore occupancy: cluster answers need a GPU of this arch: how many "
                    "clusters fit depends on how the chip groups its SMs, which the host model "
                    "cannot see\n");
    return CLI_EXIT_FAILURE;
  }
  cucore_launch_config cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.block[0] = (unsigned)(job->block ? job->block : 128);
  cfg.grid[0] = cluster[0] * cluster[1] * cluster[2] * 64;
  cfg.shared_bytes = (unsigned)job->smem;
  cfg.stream = job->c.stream;
  int clusters = 0, max_size = 0;
  cucore_status st = cucore_launch_config_cluster(&cfg, cluster[0], cluster[1], cluster[2]);
  if (st == CUCORE_OK) st = cucore_occupancy_max_active_clusters(job->c.kernel, &cfg, &clusters);
  if (st == CUCORE_OK) st = cucore_occupancy_max_cluster_size(job->c.kernel, &cfg, &max_size);
  if (st != CUCORE_OK) return cli_fail("occupancy", job->file, st);
  if (job->json) {
    json_out j = {stdout, 0, {0}, 1};
    json_begin_object(&j, NULL);
    json_int(&j, "block", cfg.block[0]);
    json_begin_array(&j, "cluster");
    for (int i = 0; i < 3; i++) json_int(&j, NULL, cluster[i]);
    json_end_array(&j);
    json_int(&j, "max_active_clusters", clusters);
    json_int(&j, "max_cluster_size", max_size);
    json_str(&j, "source", job->source);
    json_end_object(&j);
  } else {
    printf("%s: clusters of %ux%ux%u blocks of %u threads: %d co-resident; largest cluster "
           "size %d (driver)\n",
           job->kernel, cluster[0], cluster[1], cluster[2], cfg.block[0], clusters, max_size);
  }
  return 0;
}

/* --block N: the answer for that block size. */
static int occ_one(occ_job *job) {
  occ_row r;
  size_t smem = (size_t)job->smem;
  if (row_for(&job->c, job->block, smem, &r) != 0)
    return cli_fail("occupancy", job->kernel, cucore_last_status());
  if (job->json) {
    json_out j = {stdout, 0, {0}, 1};
    row_json(&j, &r, smem, job->source);
  } else {
    printf("%s on %s (%s): block %d, %lld B dynamic shared: %d blocks/SM, %d warps/SM, "
           "occupancy %.1f %%, limited by %s\n",
           job->kernel, job->c.limits.name, job->source, job->block, job->smem, r.blocks, r.warps,
           100.0 * r.occupancy, r.limit);
  }
  if (!r.ok) { /* the same exit status with --json */
    fprintf(stderr, "cucore occupancy: %s cannot run with block %d (limited by %s)\n", job->kernel,
            job->block, r.limit);
    return CLI_EXIT_FAILURE;
  }
  return 0;
}

/* The rows of the table, block sizes 32..1024 step 32 (up to the kernel's largest); returns
 * their number, *best the row with the most warps (the largest block among ties), -1 when
 * none can run. */
static int occ_rows(occ_job *job, occ_row rows[32], int *best) {
  int n = 0;
  *best = -1;
  int max_block = job->c.res.max_threads_per_block > 0 ? job->c.res.max_threads_per_block : 1024;
  for (int b = 32; b <= 1024 && b <= max_block; b += 32) {
    if (row_for(&job->c, b, (size_t)job->smem, &rows[n]) != 0) {
      rows[n].block = b;
      rows[n].blocks = rows[n].warps = 0;
      rows[n].occupancy = 0;
      rows[n].limit = "cannot run";
    }
    if (rows[n].warps > 0 && (*best < 0 || rows[n].warps >= rows[*best].warps)) *best = n;
    n++;
  }
  return n;
}

/* Without --block: the table over block sizes, the best marked. */
static int occ_table(occ_job *job) {
  occ_row rows[32];
  int best = -1, n = occ_rows(job, rows, &best);
  if (job->json) {
    json_out j = {stdout, 0, {0}, 1};
    json_begin_object(&j, NULL);
    json_begin_array(&j, "rows");
    for (int i = 0; i < n; i++) row_json(&j, &rows[i], (size_t)job->smem, job->source);
    json_end_array(&j);
    if (best >= 0)
      json_int(&j, "best_block", rows[best].block);
    else
      json_str(&j, "best_block", NULL);
    json_end_object(&j);
  } else {
    printf("%s on %s (%s), %d registers/thread, %d B static + %lld B dynamic shared per block\n",
           job->kernel, job->c.limits.name, job->source, job->c.res.registers,
           job->c.res.static_shared_bytes, job->smem);
    printf("  %6s  %9s  %8s  %9s  %s\n", "block", "blocks/SM", "warps/SM", "occupancy",
           "limited by");
    for (int i = 0; i < n; i++)
      printf("  %6d  %9d  %8d  %8.1f%%  %s%s\n", rows[i].block, rows[i].blocks, rows[i].warps,
             100.0 * rows[i].occupancy, rows[i].limit, i == best ? "   <- best" : "");
  }
  if (best < 0) { /* the same exit status with --json */
    fprintf(stderr, "cucore occupancy: %s cannot run with any block size\n", job->kernel);
    return CLI_EXIT_FAILURE;
  }
  return 0;
}

/* Reads the command line, loads the code, gathers the inputs and answers; what it opened is
 * in *job for the caller to free. */
static int occupancy_body(cli_source *srcp, int argc, char **argv, occ_job *job) {
  int rc = occ_read_line(srcp, argc, argv, job);
  if (!rc) rc = occ_load(srcp, job);
  if (!rc) rc = occ_inputs(job);
  if (rc) return rc;
  if (job->cluster[0] > 1 || job->cluster[1] > 1 || job->cluster[2] > 1) return occ_clusters(job);
  return job->block ? occ_one(job) : occ_table(job);
}

/* Every exit path frees the verb's options, early usage errors included. */
static int cmd_occupancy(int argc, char **argv) {
  cli_source src;
  if (cli_source_init(&src)) return CLI_EXIT_FAILURE;
  occ_job job;
  memset(&job, 0, sizeof job);
  phases_mark_process_start();
  int rc = occupancy_body(&src, argc, argv, &job);
  cucore_kernel_destroy(job.c.kernel);
  cucore_object_destroy(job.obj);
  cucore_device_close(job.c.dev);
  cli_source_free(&src);
  phases_print_timings(want_timings);
  return rc;
}

/* `cucore occupancy`'s one help source: the summary and text here, each option's help in its row of
 * cmd_occupancy_opts. */
const cli_verb cmd_occupancy_verb = {"occupancy", cmd_occupancy,
                                     "blocks per SM, occupancy and the binding limit of a kernel",
                                     cmd_occupancy_help, cmd_occupancy_opts};
