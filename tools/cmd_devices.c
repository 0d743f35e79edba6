/* cmd_devices.c -- `cucore devices` (properties, memory pools, NVML's live state and, with
 * --pools, the default pool's state) and `cucore version`.
 * The listing needs only cuInit: every property is a device attribute. The default pool's
 * figures need a context on each device (tens of ms each, about half of the command's time on
 * an H200), so they are read only with --pools; NVML loads on a thread of its own beside
 * cuInit. */
#include "cli.h"
#include "devices_attrs.h"
#include "system_facts.h"
#include "devices_nvml.h"

#include <stdlib.h>
#include <string.h>

static void print_lib_text(const char *name, const cucore_library_info *l) {
  if (l->loaded)
    printf("  %-10s %d.%d  %s\n", name, l->version / 1000, l->version % 1000 / 10,
           l->path ? l->path : "?");
  else
    printf("  %-10s not usable: %s\n", name, l->error ? l->error : "unknown reason");
}

static void lib_json(json_out *j, const char *key, const cucore_library_info *l) {
  json_begin_object(j, key);
  json_bool(j, "loaded", l->loaded);
  if (l->version) {
    char v[32];
    snprintf(v, sizeof v, "%d.%d", l->version / 1000, l->version % 1000 / 10);
    json_str(j, "version", v);
  } else {
    json_str(j, "version", NULL);
  }
  json_str(j, "path", l->path);
  json_str(j, "error", l->error);
  json_end_object(j);
}

static int parse_json_flag(const char *verb, int argc, char **argv, int *json) {
  cli_json_only line = {0};
  cli_parse parse = {verb, cli_json_opts, &line, NULL, NULL, 0, 0, NULL};
  int rc = cli_opt_parse(&parse, argc, argv);
  *json = line.json;
  return rc;
}

typedef struct devices_line {
  int json;
  int pools;
  int all_attributes;
  int topology;
} devices_line;

static const cli_opt cmd_devices_opts[] = {
    {.name = "--json", .kind = CLI_OPT_FLAG, CLI_AT(devices_line, json), .help = CLI_JSON_HELP},
    {.name = "--pools",
     .kind = CLI_OPT_FLAG,
     CLI_AT(devices_line, pools),
     .help = "also read each device's default memory pool (release threshold, reserved and\n"
             "used bytes): this opens a context on every device, which costs tens of ms\n"
             "each; without it \"default_pool\" is null in the JSON"},
    {.name = "--all-attributes",
     .kind = CLI_OPT_FLAG,
     CLI_AT(devices_line, all_attributes),
     .help = "also list every device attribute cucore knows (every CU_DEVICE_ATTRIBUTE_*\n"
             "of CUDA 13.0 and 13.1's atomic_reduction_supported), name = value, as\n"
             "cucore_device_get_attribute reads them; in the JSON \"attributes\""},
    {.name = "--topology",
     .kind = CLI_OPT_FLAG,
     CLI_AT(devices_line, topology),
     .help = "also show, from NVML, the CPUs and NUMA nodes nearest each device and, for\n"
             "every pair of devices, how they are connected (internal, single, multiple,\n"
             "hostbridge, node, system) and their P2P status for reads, writes, NVLink,\n"
             "atomics and PCIe; in the JSON \"cpu_affinity\", \"numa_affinity\" and\n"
             "\"topology\""},
    {0}};

static int cmd_version(int argc, char **argv) {
  int json;
  int rc = parse_json_flag("version", argc, argv, &json);
  if (rc) return rc;
  cucore_versions_info v;
  cucore_status st = cucore_versions(&v);
  if (st != CUCORE_OK) return cli_fail("version", "reading versions", st);
  if (json) {
    json_out j = {stdout, 0, {0}, 1};
    json_begin_object(&j, NULL);
    json_str(&j, "cucore", v.cucore);
    json_int(&j, "toolkit_headers", v.toolkit_headers);
    lib_json(&j, "driver", &v.driver);
    lib_json(&j, "nvrtc", &v.nvrtc);
    lib_json(&j, "nvjitlink", &v.nvjitlink);
    lib_json(&j, "nvvm", &v.nvvm);
    json_str(&j, "ptx_linker", v.ptx_linker);
    json_end_object(&j);
    return CLI_EXIT_OK;
  }
  printf("cucore %s (built with CUDA %d.%d headers)\n", v.cucore, v.toolkit_headers / 1000,
         v.toolkit_headers % 1000 / 10);
  print_lib_text("driver", &v.driver);
  print_lib_text("NVRTC", &v.nvrtc);
  print_lib_text("nvJitLink", &v.nvjitlink);
  print_lib_text("libNVVM", &v.nvvm);
  printf("  %-10s %s\n", "PTX linker",
         v.ptx_linker ? v.ptx_linker
                      : "none: nvJitLink is not usable and there is no GPU for "
                        "the driver's linker");
  return CLI_EXIT_OK;
}

static int list_devices(const devices_line *line);

static void mib(char *buf, size_t n, size_t bytes) {
  snprintf(buf, n, "%.0f MiB", (double)bytes / (1024.0 * 1024.0));
}

/* The device's default memory pool as this process sees it (pools belong to a process: a
 * fresh one holds nothing until it allocates, but the release threshold is the pool's
 * setting). `ok` is 0 with `why` when it cannot be read. */
typedef struct pool_state {
  int asked; /* 0: not read (no --pools) */
  int ok;
  char why[256];
  cucore_mem_pool_stats st;
} pool_state;

/* The devices read_pool opened: left open until the process exits, which releases their
 * contexts anyway (cucore_device_close's release is synchronous: tens of ms a device, for
 * nothing). Kept here so that leak checkers see them reachable. */
static cucore_device *opened[64];

static void read_pool(int ordinal, pool_state *ps) {
  memset(ps, 0, sizeof *ps);
  ps->asked = 1;
  cucore_device *dev = NULL;
  cucore_mem_pool *pool = NULL;
  cucore_status st = cucore_device_open(ordinal, &dev);
  if (st == CUCORE_OK) st = cucore_mem_pool_default(dev, &pool);
  if (st == CUCORE_OK) st = cucore_mem_pool_get_stats(pool, &ps->st);
  if (st == CUCORE_OK)
    ps->ok = 1;
  else
    snprintf(ps->why, sizeof ps->why, "%s", cucore_last_error());
  cucore_mem_pool_destroy(pool); /* the handle only: the default pool stays */
  if (ordinal >= 0 && ordinal < (int)(sizeof opened / sizeof opened[0]) && !opened[ordinal])
    opened[ordinal] = dev;
  else
    cucore_device_close(dev);
}

static const char *bytes_text(char *buf, size_t n, uint64_t bytes) {
  if (bytes == UINT64_MAX)
    snprintf(buf, n, "unlimited");
  else if (bytes >= (1u << 20))
    snprintf(buf, n, "%.1f MiB", (double)bytes / (1024.0 * 1024.0));
  else
    snprintf(buf, n, "%llu bytes", (unsigned long long)bytes);
  return buf;
}

static void pool_text(const cucore_device_props *p, const pool_state *ps) {
  printf("  memory pools         %s%s\n", p->memory_pools ? "yes" : "no",
         !p->memory_pools    ? ""
         : p->mempool_ipc_fd ? ", shareable between processes (POSIX fd)"
                             : ", not shareable between processes");
  if (!p->memory_pools || !ps->asked) return; /* --pools reads the default pool */
  if (!ps->ok) {
    printf("  default pool         unreadable: %s\n", ps->why);
    return;
  }
  char a[32], b[32], c[32], d[32], e[32];
  printf("  default pool         release threshold %s; reserved %s (high %s), used %s (high %s) "
         "in this process\n",
         bytes_text(a, sizeof a, ps->st.release_threshold),
         bytes_text(b, sizeof b, ps->st.reserved_current),
         bytes_text(c, sizeof c, ps->st.reserved_high),
         bytes_text(d, sizeof d, ps->st.used_current), bytes_text(e, sizeof e, ps->st.used_high));
}

static void pool_json(json_out *j, const cucore_device_props *p, const pool_state *ps) {
  json_bool(j, "memory_pools", p->memory_pools);
  json_bool(j, "mempool_ipc_fd", p->mempool_ipc_fd);
  json_bool(j, "pageable_memory_access", p->pageable_memory_access);
  json_bool(j, "concurrent_managed_access", p->concurrent_managed_access);
  if (!p->memory_pools) return;
  if (!ps->asked) { /* not read: it needs a context (--pools) */
    json_str(j, "default_pool", NULL);
    return;
  }
  json_begin_object(j, "default_pool");
  json_bool(j, "readable", ps->ok);
  if (ps->ok) {
    /* UINT64_MAX (keep everything) does not fit a JSON integer exactly: -1 stands for it. */
    json_int(j, "release_threshold",
             ps->st.release_threshold == UINT64_MAX ? -1 : (long long)ps->st.release_threshold);
    json_int(j, "reserved_current", (long long)ps->st.reserved_current);
    json_int(j, "reserved_high", (long long)ps->st.reserved_high);
    json_int(j, "used_current", (long long)ps->st.used_current);
    json_int(j, "used_high", (long long)ps->st.used_high);
  } else {
    json_str(j, "error", ps->why);
  }
  json_end_object(j);
}

static void device_text(const cucore_device_props *p) {
  char mem[32];
  mib(mem, sizeof mem, p->total_memory);
  printf("device %d: %s\n", p->ordinal, p->name);
  printf("  compute capability   %d.%d (sm_%d)\n", p->cc_major, p->cc_minor, p->arch);
  printf("  multiprocessors      %d\n", p->sm_count);
  printf("  memory               %s, bus %d bits, clock %d MHz\n", mem, p->memory_bus_width_bits,
         p->memory_clock_khz / 1000);
  printf("  L2 cache             %d KiB\n", p->l2_cache_bytes / 1024);
  printf("  SM clock             %d MHz\n", p->clock_khz / 1000);
  printf("  threads              %d per block, %d per SM, warp %d\n", p->max_threads_per_block,
         p->max_threads_per_sm, p->warp_size);
  printf("  blocks per SM        %d\n", p->max_blocks_per_sm);
  printf("  registers            %d per block, %d per SM\n", p->regs_per_block, p->regs_per_sm);
  printf("  shared memory        %d per block (opt-in %d), %d per SM, %d reserved per block\n",
         p->shared_per_block, p->shared_per_block_optin, p->shared_per_sm,
         p->reserved_shared_per_block);
  printf("  block dims max       %d x %d x %d\n", p->max_block_dim[0], p->max_block_dim[1],
         p->max_block_dim[2]);
  printf("  grid dims max        %d x %d x %d\n", p->max_grid_dim[0], p->max_grid_dim[1],
         p->max_grid_dim[2]);
  printf("  cooperative launch   %s\n", p->cooperative_launch ? "yes" : "no");
  printf("  cluster launch       %s\n", p->cluster_launch ? "yes" : "no");
  printf("  ECC                  %s\n", p->ecc_enabled ? "on" : "off");
  printf("  UUID                 GPU-%s\n", p->uuid);
  printf("  PCI bus              %s\n", p->pci_bus_id);
  printf("  managed memory       %s%s\n", p->managed_memory ? "yes" : "no",
         p->managed_memory && p->concurrent_managed_access ? " (concurrent access)" : "");
  printf("  pageable access      %s\n",
         p->pageable_memory_access ? "yes (kernels read malloc'd memory: HMM or ATS)" : "no");
}

static void device_json(json_out *j, const cucore_device_props *p) {
  char arch[16], uuid[48];
  snprintf(arch, sizeof arch, "sm_%d", p->arch);
  snprintf(uuid, sizeof uuid, "GPU-%s", p->uuid);
  json_begin_object(j, NULL);
  json_int(j, "ordinal", p->ordinal);
  json_str(j, "name", p->name);
  json_str(j, "uuid", uuid);
  json_str(j, "pci_bus_id", p->pci_bus_id);
  json_str(j, "arch", arch);
  json_int(j, "cc_major", p->cc_major);
  json_int(j, "cc_minor", p->cc_minor);
  json_int(j, "sm_count", p->sm_count);
  json_int(j, "total_memory", (long long)p->total_memory);
  json_int(j, "clock_khz", p->clock_khz);
  json_int(j, "memory_clock_khz", p->memory_clock_khz);
  json_int(j, "memory_bus_width_bits", p->memory_bus_width_bits);
  json_int(j, "l2_cache_bytes", p->l2_cache_bytes);
  json_int(j, "warp_size", p->warp_size);
  json_int(j, "max_threads_per_block", p->max_threads_per_block);
  json_int(j, "max_threads_per_sm", p->max_threads_per_sm);
  json_int(j, "max_blocks_per_sm", p->max_blocks_per_sm);
  json_int(j, "regs_per_block", p->regs_per_block);
  json_int(j, "regs_per_sm", p->regs_per_sm);
  json_int(j, "shared_per_block", p->shared_per_block);
  json_int(j, "shared_per_block_optin", p->shared_per_block_optin);
  json_int(j, "shared_per_sm", p->shared_per_sm);
  json_int(j, "reserved_shared_per_block", p->reserved_shared_per_block);
  json_int(j, "const_memory_bytes", p->const_memory_bytes);
  json_begin_array(j, "max_block_dim");
  for (int i = 0; i < 3; i++) json_int(j, NULL, p->max_block_dim[i]);
  json_end_array(j);
  json_begin_array(j, "max_grid_dim");
  for (int i = 0; i < 3; i++) json_int(j, NULL, p->max_grid_dim[i]);
  json_end_array(j);
  json_bool(j, "cooperative_launch", p->cooperative_launch);
  json_bool(j, "cluster_launch", p->cluster_launch);
  json_bool(j, "ecc_enabled", p->ecc_enabled);
  json_bool(j, "managed_memory", p->managed_memory);
  json_int(j, "async_engines", p->async_engines);
}

static int cmd_devices(int argc, char **argv) {
  devices_line line = {0};
  cli_parse parse = {"devices", cmd_devices_opts, &line, NULL, NULL, 0, 0, NULL};
  int rc = cli_opt_parse(&parse, argc, argv);
  if (rc) return rc;
  system_facts_start_all(); /* NVML and its queries beside cuInit; the output waits for it */
  rc = list_devices(&line);
  system_facts_join();
  return rc;
}

/* The listing as one JSON object. */
static void devices_json(const devices_line *line, const cucore_versions_info *v,
                         const cucore_device_props *props, const pool_state *pools, int count) {
  json_out j = {stdout, 0, {0}, 1};
  json_begin_object(&j, NULL);
  json_str(&j, "cucore", v->cucore);
  lib_json(&j, "driver", &v->driver);
  devices_nvml_driver_json(&j);
  json_begin_object(&j, "libraries");
  lib_json(&j, "nvrtc", &v->nvrtc);
  lib_json(&j, "nvjitlink", &v->nvjitlink);
  lib_json(&j, "nvvm", &v->nvvm);
  json_end_object(&j);
  json_begin_array(&j, "devices");
  for (int i = 0; i < count; i++) {
    device_json(&j, &props[i]);
    pool_json(&j, &props[i], &pools[i]);
    system_facts_json(&j, i, props[i].uuid);
    devices_nvml_processes_json(&j, i);
    if (line->topology) devices_nvml_affinity_json(&j, i);
    if (line->all_attributes) devices_attrs_json(&j, i);
    json_end_object(&j);
  }
  json_end_array(&j);
  if (line->topology) devices_nvml_topology_json(&j, count);
  json_end_object(&j);
}

/* The listing as text. */
static void devices_text(const devices_line *line, const cucore_versions_info *v,
                         const cucore_device_props *props, const pool_state *pools, int count) {
  printf("CUDA driver %d.%d (%s), %d device%s\n", v->driver.version / 1000,
         v->driver.version % 1000 / 10, v->driver.path ? v->driver.path : "?", count,
         count == 1 ? "" : "s");
  devices_nvml_driver_text();
  printf("\n");
  for (int i = 0; i < count; i++) {
    device_text(&props[i]);
    pool_text(&props[i], &pools[i]);
    system_facts_text(i, props[i].uuid);
    devices_nvml_processes_text(i);
    if (line->topology) devices_nvml_affinity_text(i);
    if (line->all_attributes) devices_attrs_text(i);
    printf("\n");
  }
  if (line->topology) {
    devices_nvml_topology_text(count);
    printf("\n");
  }
  printf("toolkit libraries:\n");
  print_lib_text("NVRTC", &v->nvrtc);
  print_lib_text("nvJitLink", &v->nvjitlink);
  print_lib_text("libNVVM", &v->nvvm);
}

static int list_devices(const devices_line *line) {
  int json = line->json, with_pools = line->pools;
  cucore_versions_info v;
  (void)cucore_versions(&v);
  int count = 0;
  cucore_status st = cucore_device_get_count(&count);
  if (st != CUCORE_OK) return cli_fail("devices", "no usable CUDA driver", st);
  if (count == 0) {
    fprintf(stderr, "cucore devices: no CUDA-capable device (driver %s, version %d.%d)\n",
            v.driver.path ? v.driver.path : "?", v.driver.version / 1000,
            v.driver.version % 1000 / 10);
    return CLI_EXIT_FAILURE;
  }
  cucore_device_props *props = calloc((size_t)count, sizeof *props);
  if (!props) {
    fprintf(stderr, "cucore devices: out of memory\n");
    return CLI_EXIT_FAILURE;
  }
  pool_state *pools = calloc((size_t)count, sizeof *pools);
  if (!pools) {
    free(props);
    fprintf(stderr, "cucore devices: out of memory\n");
    return CLI_EXIT_FAILURE;
  }
  for (int i = 0; i < count; i++) {
    st = cucore_device_get_props(i, &props[i]);
    if (st != CUCORE_OK) {
      free(props);
      free(pools);
      return cli_fail("devices", "reading device properties", st);
    }
    if (props[i].memory_pools && with_pools) read_pool(i, &pools[i]);
  }
  if (json)
    devices_json(line, &v, props, pools, count);
  else
    devices_text(line, &v, props, pools, count);
  free(props);
  free(pools);
  return CLI_EXIT_OK;
}

/* `cucore devices` and `cucore version`: their summaries and texts (the options' help is in
 * cmd_devices_opts and cli_json_opts). */
const cli_verb cmd_devices_verb = {
    "devices", cmd_devices, "list GPUs, their properties, the driver and toolkit libraries",
    "usage: cucore devices [--json] [--pools] [--all-attributes] [--topology]\n"
    "\n"
    "Lists every CUDA device with its compute capability, SM count, memory, shared-memory\n"
    "and register limits, cluster and cooperative-launch support, managed and pageable\n"
    "memory access, stream-ordered memory pools (and whether they can be shared between\n"
    "processes), then the driver and the toolkit libraries (NVRTC,\n"
    "nvJitLink, libNVVM) cucore loaded, with paths and versions.\n"
    "Each device's live state comes from NVML (libnvidia-ml.so.1; CUCORE_LIBNVML names\n"
    "another): SM and memory clocks now and at most, temperature, power and its limit,\n"
    "utilisation, clock-event reasons (throttling flagged), MIG mode, NVLinks, and the\n"
    "processes on it (pid, name, memory, compute or graphics); the kernel-mode driver's\n"
    "version and branch head the list; without NVML one line says why.\n"
    "With --json: one object {\"driver\": {...}, \"libraries\": {...}, \"devices\": [...]};\n"
    "each device has \"system\": {\"available\": ..., the facts, or \"error\"} and\n"
    "\"processes\": [...]; the top object \"kernel_driver\": {\"version\", \"branch\"}.\n"
    "With --topology: the CPUs and NUMA nodes nearest each device and each pair's\n"
    "topology level and P2P status (NVML).\n"
    "The listing needs no context on any device (cuInit alone), so it costs about what\n"
    "cuInit does. With --pools the default pool's state is read too: its release\n"
    "threshold, the bytes it holds reserved and in use and their high-water marks (pools\n"
    "belong to a process: a fresh process shows what it starts with); that opens a context\n"
    "on every device. Without --pools, \"default_pool\" is null in the JSON.\n"
    "With --all-attributes every device attribute cucore knows is listed too, by cucore's\n"
    "name (the driver's CU_DEVICE_ATTRIBUTE_* name in lower case, without the prefix):\n"
    "name = value, deprecated ones marked, one the driver does not answer with the reason;\n"
    "in the JSON \"attributes\": {name: value or null} and \"attribute_errors\".\n"
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
    "  cucore devices --json --pools | jq '.devices[0].default_pool.release_threshold'\n"
    "  cucore devices --all-attributes --json | jq '.devices[0].attributes.warp_size'\n"
    "  cucore devices --topology --json | jq '.topology[0].level'\n",
    cmd_devices_opts};
const cli_verb cmd_version_verb = {
    "version", cmd_version, "print cucore's version and the libraries it loaded",
    "usage: cucore version [--json]\n"
    "\n"
    "Prints cucore's version, the CUDA headers it was built with, and for the driver,\n"
    "NVRTC, nvJitLink and libNVVM: whether each was found, where, and its version.\n"
    "Environment: CUCORE_LIBCUDA, CUCORE_NVRTC, CUCORE_NVJITLINK, CUCORE_NVVM name a\n"
    "library's full path; CUDA_HOME and CUDA_PATH name the toolkit.\n"
    "\n"
    "options:\n"
    "%o",
    cli_json_opts};
