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
    "--json with --block prints one object {\"block\", \"smem\", \"active_blocks_per_sm\",\n"
    "\"active_warps_per_sm\", \"occupancy\", \"limit\", \"source\"}; without --block\n"
    "{\"rows\": [...], \"best_block\": B}.\n"
    "\n"
    "compile options:\n"
    "%s"
    "\n"
    "exit status: 0 answered; 1 the kernel cannot run or the file is unusable; 2 usage.\n"
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

static int occupancy_body(cli_source *srcp, int argc, char **argv) {
  const char *file = NULL, *kernel = NULL;
  int block = 0, json = 0, arch = 0;
  long long smem = 0;
  unsigned cluster[3] = {0, 0, 0};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "--json") == 0) {
      json = 1;
    } else if (strcmp(a, "--kernel") == 0 || strcmp(a, "--block") == 0 || strcmp(a, "--smem") == 0 ||
               strcmp(a, "--cluster") == 0) {
      if (!v) return cli_usage("occupancy", "%s needs a value", a);
      i++;
      char *end = NULL;
      if (a[2] == 'k') {
        kernel = v;
      } else if (a[2] == 'b') {
        block = (int)strtol(v, &end, 10);
        if (*end || block < 1 || block > 1024)
          return cli_usage("occupancy", "--block `%s`: expected 1..1024 threads", v);
      } else if (a[2] == 's') {
        smem = strtoll(v, &end, 10);
        if (*end || smem < 0) return cli_usage("occupancy", "--smem `%s`: expected bytes >= 0", v);
      } else if (cli_parse_dims(v, cluster, 65535)) {
        return cli_usage("occupancy", "--cluster `%s`: expected X[,Y[,Z]] with each 1..65535", v);
      }
    } else if (a[0] == '-' && a[1]) {
      int used = cli_source_option(srcp, "occupancy", argc, argv, i);
      if (used <= 0) return used < 0 ? CLI_EXIT_USAGE : cli_usage("occupancy", "unknown option `%s`", a);
      if (strcmp(a, "--arch") == 0 || strncmp(a, "--arch=", 7) == 0) {
        const char *s = a[6] == '=' ? a + 7 : v;
        arch = (int)strtol(strchr(s, '_') ? strchr(s, '_') + 1 : s, NULL, 10);
      }
      i += used - 1;
    } else if (file) {
      return cli_usage("occupancy", "one FILE only (got `%s` and `%s`)", file, a);
    } else {
      file = a;
    }
  }
  if (!file || !kernel)
    return cli_usage("occupancy", "usage: cucore occupancy FILE --kernel NAME [--block N] [--smem BYTES]");

  /* The code: compiled from source, or read. */
  cucore_object *obj = NULL;
  const char *dot = strrchr(file, '.');
  int source = dot && (strcmp(dot, ".cu") == 0 || strcmp(dot, ".ll") == 0 || strcmp(dot, ".bc") == 0 ||
                       strcmp(dot, ".ptx") == 0);
  int rc = 0;
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
      if (!r.ok) rc = CLI_EXIT_FAILURE;
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
      if (best < 0) rc = CLI_EXIT_FAILURE;
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
