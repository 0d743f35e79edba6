/* cmd_occupancy.c -- `cucore occupancy`: blocks per SM, occupancy and the binding limit for a
 * kernel, from the driver when a GPU of that arch is present, from the host model otherwise. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

const char cmd_occupancy_help[] =
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
  cucore_kernel *kernel;           /* driver mode */
  cucore_stream *stream;
  cucore_device *dev;
  cucore_arch_limits limits;       /* both modes (explanations) */
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
  cucore_object_code(obj, &type, &code, &size);
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
    fprintf(stderr, "cucore occupancy: %s: PTX records no register use; compile it to a cubin "
                    "first (cucore compile %s --arch sm_XX)\n", file, file);
    return CLI_EXIT_FAILURE;
  }
  if (!arch) arch = info.arch;
  st = cucore_arch_limits_get(arch, &c->limits);
  if (st != CUCORE_OK) {
    cucore_binary_destroy(bin);
    return cli_fail("occupancy", file, st);
  }
  cucore_kernel_resources r = CUCORE_KERNEL_RESOURCES_INIT;
  r.registers = k->registers;
  r.static_shared_bytes = k->static_shared_bytes;
  r.max_threads_per_block = k->max_threads_per_block > 0 ? k->max_threads_per_block : 0;
  r.barriers = k->barriers > 0 ? k->barriers : -1;
  c->res = r;
  cucore_binary_destroy(bin);
  return 0;
}

/* The verb's command line (its table below). */
typedef struct occ_line {
  const char *kernel;
  long long block, smem;
  unsigned cluster[3];
  int json;
} occ_line;

const cli_opt cmd_occupancy_opts[] = {
    {.name = "--kernel", .kind = CLI_OPT_TEXT, CLI_AT(occ_line, kernel), .arg = "NAME",
     .help = "the kernel (a C++ name expression such as 'scale<float>' for .cu files)"},
    {.name = "--block", .kind = CLI_OPT_INT, CLI_AT(occ_line, block), .lo = 1, .hi = 1024,
     .arg = "N", .help = "threads per block: the answer for that size (else a table)"},
    {.name = "--smem", .kind = CLI_OPT_INT, CLI_AT(occ_line, smem), .lo = 0,
     .hi = CLI_HI_SMEM, .arg = "BYTES", .help = "dynamic shared memory per block (default 0)"},
    {.name = "--cluster", .kind = CLI_OPT_DIMS, CLI_AT(occ_line, cluster), .dims = &cli_dims_cluster,
     .arg = "X[,Y,Z]", .help = "how many clusters of this shape fit (needs a GPU)"},
    {.name = "--json", .kind = CLI_OPT_FLAG, CLI_AT(occ_line, json), .help = CLI_JSON_HELP},
    {0}};

static int occupancy_body(cli_source *srcp, int argc, char **argv) {
  const char *file = NULL;
  occ_line line = {NULL, 0, 0, {0, 0, 0}, 0};
  cli_parse parse = {"occupancy", cmd_occupancy_opts, &line, srcp, &file, 1, 0, "FILE"};
  int rc = cli_opt_parse(&parse, argc, argv);
  if (rc) return rc;
  const char *kernel = line.kernel, *arch_text = cli_source_arch(srcp);
  int block = (int)line.block, json = line.json;
  int arch = arch_text ? atoi(strchr(arch_text, '_') ? strchr(arch_text, '_') + 1 : arch_text) : 0;
  long long smem = line.smem;
  unsigned *cluster = line.cluster;
  if (!file || !kernel)
    return cli_usage("occupancy", "usage: cucore occupancy FILE --kernel NAME [--block N] [--smem BYTES]");

  /* The code: compiled from source, or read. */
  cucore_object *obj = NULL;
  const char *dot = strrchr(file, '.');
  int source = dot && (strcmp(dot, ".cu") == 0 || strcmp(dot, ".ll") == 0 || strcmp(dot, ".bc") == 0 ||
                       strcmp(dot, ".ptx") == 0);
  if (source) {
    if (strcmp(dot, ".cu") == 0 && cli_source_add_expr(srcp, kernel)) return CLI_EXIT_FAILURE;
    rc = cli_source_compile(srcp, "occupancy", file, CUCORE_CODE_CUBIN, &obj, NULL);
  } else {
    cucore_status st = cucore_object_from_file(file, CUCORE_CODE_AUTO, &obj);
    if (st != CUCORE_OK) rc = cli_fail("occupancy", file, st);
  }
  cli_source_free(srcp);
  if (rc) return rc;
  const char *symbol = kernel;
  cucore_object_lowered_name(obj, kernel, &symbol); /* keeps `kernel` when not an expression */
  if (!symbol) symbol = kernel;

  /* The driver when a GPU of the arch is here; the model otherwise. */
  occ_ctx c;
  memset(&c, 0, sizeof c);
  int ndev = 0;
  cucore_device_props props;
  if (cucore_device_count(&ndev) == CUCORE_OK && ndev > 0 &&
      cucore_device_props_get(0, &props) == CUCORE_OK && (!arch || arch == props.arch)) {
    c.use_driver = 1;
    cucore_status st = cucore_device_open(0, &c.dev);
    if (st == CUCORE_OK) st = cucore_stream_default(c.dev, &c.stream);
    if (st == CUCORE_OK) st = cucore_object_get_kernel(obj, symbol, &c.kernel);
    if (st == CUCORE_OK) st = cucore_occupancy_inputs(c.kernel, c.dev, &c.limits, &c.res);
    if (st != CUCORE_OK) rc = cli_fail("occupancy", file, st);
  } else {
    rc = model_inputs(obj, symbol, arch, &c, file);
  }
  const char *srcname = c.use_driver ? "driver" : "model";
  if (rc == 0 && (cluster[0] > 1 || cluster[1] > 1 || cluster[2] > 1)) {
    if (!c.use_driver) {
      fprintf(stderr, "cucore occupancy: cluster answers need a GPU of this arch: how many "
                      "clusters fit depends on how the chip groups its SMs, which the host model "
                      "cannot see\n");
      rc = CLI_EXIT_FAILURE;
    } else {
      cucore_launch_config cfg;
      memset(&cfg, 0, sizeof cfg);
      cfg.block[0] = (unsigned)(block ? block : 128);
      cfg.grid[0] = cluster[0] * cluster[1] * cluster[2] * 64;
      cfg.shared_bytes = (unsigned)smem;
      cfg.stream = c.stream;
      int clusters = 0, max_size = 0;
      cucore_status st = cucore_launch_config_cluster(&cfg, cluster[0], cluster[1], cluster[2]);
      if (st == CUCORE_OK) st = cucore_occupancy_max_active_clusters(c.kernel, &cfg, &clusters);
      if (st == CUCORE_OK) st = cucore_occupancy_max_cluster_size(c.kernel, &cfg, &max_size);
      if (st != CUCORE_OK) {
        rc = cli_fail("occupancy", file, st);
      } else if (json) {
        json_out j = {stdout, 0, {0}, 1};
        json_begin_object(&j, NULL);
        json_int(&j, "block", cfg.block[0]);
        json_begin_array(&j, "cluster");
        for (int i = 0; i < 3; i++) json_int(&j, NULL, cluster[i]);
        json_end_array(&j);
        json_int(&j, "max_active_clusters", clusters);
        json_int(&j, "max_cluster_size", max_size);
        json_str(&j, "source", srcname);
        json_end_object(&j);
      } else {
        printf("%s: clusters of %ux%ux%u blocks of %u threads: %d co-resident; largest cluster "
               "size %d (driver)\n", kernel, cluster[0], cluster[1], cluster[2], cfg.block[0],
               clusters, max_size);
      }
    }
  } else if (rc == 0 && block) {
    occ_row r;
    if (row_for(&c, block, (size_t)smem, &r) != 0) {
      rc = cli_fail("occupancy", kernel, cucore_last_status());
    } else if (json) {
      json_out j = {stdout, 0, {0}, 1};
      row_json(&j, &r, (size_t)smem, srcname);
    } else {
      printf("%s on %s (%s): block %d, %lld B dynamic shared: %d blocks/SM, %d warps/SM, "
             "occupancy %.1f %%, limited by %s\n", kernel, c.limits.name, srcname, block, smem,
             r.blocks, r.warps, 100.0 * r.occupancy, r.limit);
    }
    if (rc == 0 && !r.ok) { /* the same exit status with --json */
      fprintf(stderr, "cucore occupancy: %s cannot run with block %d (limited by %s)\n", kernel,
              block, r.limit);
      rc = CLI_EXIT_FAILURE;
    }
  } else if (rc == 0) {
    occ_row rows[32];
    int n = 0, best = -1;
    int max_block = c.res.max_threads_per_block > 0 ? c.res.max_threads_per_block : 1024;
    for (int b = 32; b <= 1024 && b <= max_block; b += 32) {
      if (row_for(&c, b, (size_t)smem, &rows[n]) != 0) {
        rows[n].block = b;
        rows[n].blocks = rows[n].warps = 0;
        rows[n].occupancy = 0;
        rows[n].limit = "cannot run";
      }
      if (rows[n].warps > 0 && (best < 0 || rows[n].warps >= rows[best].warps)) best = n;
      n++;
    }
    if (json) {
      json_out j = {stdout, 0, {0}, 1};
      json_begin_object(&j, NULL);
      json_begin_array(&j, "rows");
      for (int i = 0; i < n; i++) row_json(&j, &rows[i], (size_t)smem, srcname);
      json_end_array(&j);
      if (best >= 0) json_int(&j, "best_block", rows[best].block);
      else json_str(&j, "best_block", NULL);
      json_end_object(&j);
    } else {
      printf("%s on %s (%s), %d registers/thread, %d B static + %lld B dynamic shared per block\n",
             kernel, c.limits.name, srcname, c.res.registers, c.res.static_shared_bytes, smem);
      printf("  %6s  %9s  %8s  %9s  %s\n", "block", "blocks/SM", "warps/SM", "occupancy", "limited by");
      for (int i = 0; i < n; i++)
        printf("  %6d  %9d  %8d  %8.1f%%  %s%s\n", rows[i].block, rows[i].blocks, rows[i].warps,
               100.0 * rows[i].occupancy, rows[i].limit, i == best ? "   <- best" : "");
    }
    if (best < 0) { /* the same exit status with --json */
      fprintf(stderr, "cucore occupancy: %s cannot run with any block size\n", kernel);
      rc = CLI_EXIT_FAILURE;
    }
  }
  cucore_kernel_destroy(c.kernel);
  cucore_object_destroy(obj);
  cucore_device_close(c.dev);
  return rc;
}

/* Every exit path frees the verb's options, early usage errors included. */
int cmd_occupancy(int argc, char **argv) {
  cli_source src;
  if (cli_source_init(&src)) return CLI_EXIT_FAILURE;
  int rc = occupancy_body(&src, argc, argv);
  cli_source_free(&src);
  return rc;
}
