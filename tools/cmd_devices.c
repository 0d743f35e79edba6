/* cmd_devices.c -- `cucore devices` and `cucore version`. */
#include "cli.h"

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
  *json = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--json") == 0)
      *json = 1;
    else
      return cli_usage(verb, "unknown option `%s` (expected --json)", argv[i]);
  }
  return 0;
}

int cmd_version(int argc, char **argv) {
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
         v.ptx_linker ? v.ptx_linker : "none: nvJitLink is not usable and there is no GPU for "
                                        "the driver's linker");
  return CLI_EXIT_OK;
}

static void mib(char *buf, size_t n, size_t bytes) {
  snprintf(buf, n, "%.0f MiB", (double)bytes / (1024.0 * 1024.0));
}

static void device_text(const cucore_device_props *p) {
  char mem[32];
  mib(mem, sizeof mem, p->total_memory);
  printf("device %d: %s\n", p->ordinal, p->name);
  printf("  compute capability   %d.%d (sm_%d)\n", p->cc_major, p->cc_minor, p->arch);
  printf("  multiprocessors      %d\n", p->sm_count);
  printf("  memory               %s, bus %d bits, clock %d MHz\n", mem,
         p->memory_bus_width_bits, p->memory_clock_khz / 1000);
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
  json_end_object(j);
}

int cmd_devices(int argc, char **argv) {
  int json;
  int rc = parse_json_flag("devices", argc, argv, &json);
  if (rc) return rc;
  cucore_versions_info v;
  (void)cucore_versions(&v);
  int count = 0;
  cucore_status st = cucore_device_count(&count);
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
  for (int i = 0; i < count; i++) {
    st = cucore_device_props_get(i, &props[i]);
    if (st != CUCORE_OK) {
      free(props);
      return cli_fail("devices", "reading device properties", st);
    }
  }
  if (json) {
    json_out j = {stdout, 0, {0}, 1};
    json_begin_object(&j, NULL);
    json_str(&j, "cucore", v.cucore);
    lib_json(&j, "driver", &v.driver);
    json_begin_object(&j, "libraries");
    lib_json(&j, "nvrtc", &v.nvrtc);
    lib_json(&j, "nvjitlink", &v.nvjitlink);
    lib_json(&j, "nvvm", &v.nvvm);
    json_end_object(&j);
    json_begin_array(&j, "devices");
    for (int i = 0; i < count; i++) device_json(&j, &props[i]);
    json_end_array(&j);
    json_end_object(&j);
  } else {
    printf("CUDA driver %d.%d (%s), %d device%s\n\n", v.driver.version / 1000,
           v.driver.version % 1000 / 10, v.driver.path ? v.driver.path : "?", count,
           count == 1 ? "" : "s");
    for (int i = 0; i < count; i++) {
      device_text(&props[i]);
      printf("\n");
    }
    printf("toolkit libraries:\n");
    print_lib_text("NVRTC", &v.nvrtc);
    print_lib_text("nvJitLink", &v.nvjitlink);
    print_lib_text("libNVVM", &v.nvvm);
  }
  free(props);
  return CLI_EXIT_OK;
}
