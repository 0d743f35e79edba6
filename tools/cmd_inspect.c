/* cmd_inspect.c -- `cucore inspect FILE`: kernels, parameter layouts, resources and launch
 * attributes of a cubin, fatbin, PTX file or host object, read offline (no GPU needed). */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

static const char cmd_inspect_summary[] =
    "show the kernels of a cubin, fatbin, PTX file or object: parameters, resources";

static const char cmd_inspect_help[] =
    "usage: cucore inspect FILE [--arch sm_XX] [--kernel NAME] [--json]\n"
    "\n"
    "Reads FILE without a GPU and shows its module variables (__device__, __constant__ and\n"
    "__managed__: name, kind, size) and each kernel: its symbol and demangled name, its\n"
    "parameters (offset, size, alignment and type where known), registers, shared, local and\n"
    "constant memory, the largest block it can run with, and its launch attributes (launch\n"
    "bounds, required block size, cluster dimensions, grid sync). FILE may be a cubin, a\n"
    "fatbin, PTX, or a host object holding device code (nvcc -c); the type is read from the\n"
    "bytes. For a fatbin the entries are listed and the kernels come from the entry that\n"
    "--arch would load (the newest cubin when no arch is given).\n"
    "\n"
    "options (`--flag value` or `--flag=value`; compile options for .cu files too):\n"
    "%o"
    "\n"
    "The JSON object: {\"file\", \"type\", \"arch\", \"entries\", \"globals\", \"kernels\": "
    "[...]};\n"
    "each parameter has \"type\" (int, float, pointer, bytes, unknown), \"cpp_type\" (from\n"
    "the signature, or null) and \"type_text\" (what the table shows).\n"
    "\n"
    "PTX records no resource usage: registers and memory sizes show as `?` (null in JSON).\n"
    "Parameter types come from the C++ signature when the kernel has one (`float*`,\n"
    "`const int*`, `unsigned long`, `__half`, struct names), else from PTX (which does not\n"
    "say whether a .u64 is a pointer: `u64 (pointer or 64-bit integer)`); a cubin alone\n"
    "gives offsets and sizes (and, from sm_100 on, which parameters are pointers). A fatbin\n"
    "that carries PTX lends its types to its cubins.\n"
    "\n"
    "Names come from the file as they are, so a damaged or crafted file may hold control\n"
    "characters or bytes that are not UTF-8: the command prints those as \\xHH (and says so\n"
    "on stderr), and in JSON escapes control characters and replaces invalid bytes by U+FFFD,\n"
    "adding \"invalid_utf8_replaced\": N to the object, so the output is always valid JSON.\n"
    "\n"
    "Exit status: 0 success; 1 the file cannot be read or is malformed (the reason names what\n"
    "and where), or the kernel does not exist (the names that do are listed); 2 usage error.\n"
    "With --json the exit status is the same, and a failure leaves stdout empty.\n"
    "\n"
    "examples:\n"
    "  cucore inspect kernels.cubin\n"
    "  cucore inspect app.fatbin --arch sm_90 --kernel saxpy\n"
    "  cucore inspect kernels.ptx --json | jq '.kernels[].params'\n";

/* What the table shows as a parameter's type: the C++ type when the kernel has a signature,
 * else what PTX or the cubin says (PTX does not say whether a .u64 is a pointer). */
static const char *type_text(const cucore_kernel_info *k, uint32_t i, char *buf, size_t n) {
  if (k->param_types) return k->param_types[i];
  const cucore_param_info *p = &k->params[i];
  switch (p->kind) {
  case CUCORE_PARAM_INT:
    if (p->size == 8) return "u64 (pointer or 64-bit integer)";
    snprintf(buf, n, "u%u", p->size * 8);
    return buf;
  case CUCORE_PARAM_FLOAT: snprintf(buf, n, "f%u", p->size * 8); return buf;
  case CUCORE_PARAM_POINTER: return "pointer";
  case CUCORE_PARAM_BYTES:
    snprintf(buf, n, "%u bytes by value (struct, union or vector)", p->size);
    return buf;
  default: return "unknown";
  }
}

static const char *kind_name(cucore_param_kind k) {
  switch (k) {
  case CUCORE_PARAM_INT: return "int";
  case CUCORE_PARAM_FLOAT: return "float";
  case CUCORE_PARAM_POINTER: return "pointer";
  case CUCORE_PARAM_BYTES: return "bytes";
  default: return "unknown";
  }
}

/* "sm_90", "sm_90a", "compute_90", "90" or "9.0" -> 90; -1 when not an arch. */
static int parse_arch(const char *s) {
  if (strncmp(s, "sm_", 3) == 0)
    s += 3;
  else if (strncmp(s, "compute_", 8) == 0)
    s += 8;
  char *end;
  long v = strtol(s, &end, 10);
  if (end == s) return -1;
  if (*end == '.') {
    const char *m = end + 1;
    long minor = strtol(m, &end, 10);
    if (end == m || minor < 0 || minor > 9) return -1;
    v = v * 10 + minor;
  }
  if ((*end == 'a' || *end == 'f') && end[1] == '\0') end++;
  if (*end != '\0' || v < 10 || v > 999) return -1;
  return (int)v;
}

static void json_maybe(json_out *j, const char *key, int32_t v) {
  if (v == CUCORE_UNKNOWN)
    json_str(j, key, NULL);
  else
    json_int(j, key, v);
}

static void json_dims(json_out *j, const char *key, const uint32_t d[3]) {
  if (d[0] == 0) {
    json_str(j, key, NULL);
    return;
  }
  json_begin_array(j, key);
  for (int i = 0; i < 3; i++) json_int(j, NULL, d[i]);
  json_end_array(j);
}

static void kernel_json(json_out *j, const cucore_kernel_info *k) {
  json_begin_object(j, NULL);
  json_str(j, "name", k->name);
  json_str(j, "demangled", k->demangled);
  json_begin_array(j, "params");
  for (uint32_t i = 0; i < k->param_count; i++) {
    const cucore_param_info *p = &k->params[i];
    json_begin_object(j, NULL);
    json_int(j, "offset", p->offset);
    json_int(j, "size", p->size);
    if (p->align)
      json_int(j, "align", p->align);
    else
      json_str(j, "align", NULL);
    /* A C++ pointer type says what PTX cannot: the .u64 is a pointer. */
    const char *cpp = k->param_types ? k->param_types[i] : NULL;
    size_t cpp_len = cpp ? strlen(cpp) : 0;
    json_str(j, "type", cpp_len && cpp[cpp_len - 1] == '*' ? "pointer" : kind_name(p->kind));
    char buf[64];
    json_str(j, "cpp_type", k->param_types ? k->param_types[i] : NULL);
    json_str(j, "type_text", type_text(k, i, buf, sizeof buf));
    json_end_object(j);
  }
  json_end_array(j);
  json_int(j, "param_bytes", k->param_bytes);
  json_maybe(j, "registers", k->registers);
  json_maybe(j, "static_shared_bytes", k->static_shared_bytes);
  json_maybe(j, "reserved_shared_bytes", k->reserved_shared_bytes);
  json_maybe(j, "local_bytes", k->local_bytes);
  json_maybe(j, "stack_bytes", k->stack_bytes);
  json_maybe(j, "const_bytes", k->const_bytes);
  json_maybe(j, "user_const_bytes", k->user_const_bytes);
  json_maybe(j, "max_threads_per_block", k->max_threads_per_block);
  json_dims(j, "maxntid", k->maxntid);
  json_dims(j, "reqntid", k->reqntid);
  json_dims(j, "cluster_dims", k->cluster_dims);
  json_int(j, "max_blocks_per_cluster", k->max_blocks_per_cluster);
  json_bool(j, "explicit_cluster", k->explicit_cluster);
  json_int(j, "min_blocks_per_sm", k->min_blocks_per_sm);
  json_int(j, "max_registers", k->max_registers);
  json_maybe(j, "barriers", k->barriers);
  json_bool(j, "uses_grid_sync", k->uses_grid_sync);
  json_int(j, "param_base", k->param_base);
  json_end_object(j);
}

static const char *num(char *buf, size_t len, int32_t v, const char *unit) {
  if (v == CUCORE_UNKNOWN)
    snprintf(buf, len, "?");
  else
    snprintf(buf, len, "%d%s", v, unit);
  return buf;
}

static const char *dims(char *buf, size_t len, const uint32_t d[3]) {
  snprintf(buf, len, "%u x %u x %u", d[0], d[1], d[2]);
  return buf;
}

static void kernel_text(const cucore_kernel_info *k) {
  char a[64], b[64], c[64];
  printf("\nkernel %s\n", k->name);
  if (k->demangled) printf("  %-20s %s\n", "demangled", k->demangled);
  printf("  %-20s %u (%u bytes", "parameters", k->param_count, k->param_bytes);
  if (k->param_base) printf(", from c[0x0][0x%x]", (unsigned)k->param_base);
  printf(")\n");
  if (k->param_count) {
    printf("    %4s %7s %6s %6s  %s\n", "#", "offset", "size", "align", "type");
    for (uint32_t i = 0; i < k->param_count; i++) {
      const cucore_param_info *p = &k->params[i];
      if (p->align)
        snprintf(a, sizeof a, "%u", p->align);
      else
        snprintf(a, sizeof a, "?");
      char buf[64];
      printf("    %4u %7u %6u %6s  %s\n", i, p->offset, p->size, a,
             type_text(k, i, buf, sizeof buf));
    }
  }
  printf("  %-20s %s\n", "registers", num(a, sizeof a, k->registers, ""));
  printf("  %-20s %s static", "shared memory", num(a, sizeof a, k->static_shared_bytes, " B"));
  if (k->reserved_shared_bytes > 0)
    printf(", %d B reserved by the system", k->reserved_shared_bytes);
  printf("\n");
  printf("  %-20s %s frame, %s stack\n", "local memory/thread",
         num(a, sizeof a, k->local_bytes, " B"), num(b, sizeof b, k->stack_bytes, " B"));
  printf("  %-20s %s bank 0, %s __constant__ (module)\n", "constant memory",
         num(a, sizeof a, k->const_bytes, " B"), num(c, sizeof c, k->user_const_bytes, " B"));
  printf("  %-20s %s\n", "max threads/block", num(a, sizeof a, k->max_threads_per_block, ""));
  if (k->maxntid[0]) printf("  %-20s %s\n", "max block (bounds)", dims(a, sizeof a, k->maxntid));
  if (k->reqntid[0]) printf("  %-20s %s\n", "required block", dims(a, sizeof a, k->reqntid));
  if (k->min_blocks_per_sm) printf("  %-20s %u\n", "min blocks/SM", k->min_blocks_per_sm);
  if (k->max_registers) printf("  %-20s %u\n", "register cap", k->max_registers);
  if (k->cluster_dims[0])
    printf("  %-20s %s\n", "cluster dims", dims(a, sizeof a, k->cluster_dims));
  if (k->max_blocks_per_cluster)
    printf("  %-20s %u\n", "max blocks/cluster", k->max_blocks_per_cluster);
  if (k->explicit_cluster) printf("  %-20s yes\n", "launch as clusters");
  if (k->barriers != CUCORE_UNKNOWN && k->barriers > 0)
    printf("  %-20s %d\n", "named barriers", k->barriers);
  if (k->uses_grid_sync)
    printf("  %-20s yes (a grid-wide sync among them needs a cooperative launch)\n",
           "cooperative groups");
}

static int is_source(const char *file) {
  const char *dot = strrchr(file, '.');
  return dot && (strcmp(dot, ".cu") == 0 || strcmp(dot, ".cuh") == 0 || strcmp(dot, ".cpp") == 0 ||
                 strcmp(dot, ".ll") == 0 || strcmp(dot, ".bc") == 0);
}

/* A .cu (or NVVM IR) file: compile it to a cubin for the arch, keep its PTX for the parameter
 * types, and open the cubin. --kernel is registered as a name expression first. */
static int open_source(cli_source *src, const char *file, const char **kernel,
                       cucore_binary **bin) {
  if (*kernel && cli_source_add_expr(src, *kernel)) return CLI_EXIT_FAILURE;
  cucore_object *obj = NULL;
  int rc = cli_source_compile(src, "inspect", file, CUCORE_CODE_CUBIN, &obj, NULL);
  if (rc) return rc;
  if (*kernel) {
    const char *lowered = NULL;
    if (cucore_object_get_lowered_name(obj, *kernel, &lowered) == CUCORE_OK)
      *kernel = strdup(lowered);
  }
  const void *code = NULL;
  size_t size = 0;
  const char *ptx = NULL;
  size_t ptx_size = 0;
  cucore_object_get_code(obj, NULL, &code, &size);
  cucore_object_get_ptx(obj, &ptx, &ptx_size);
  cucore_status st = cucore_binary_open(code, size, CUCORE_CODE_CUBIN, 0, bin);
  if (st == CUCORE_OK && ptx) st = cucore_binary_attach_ptx(*bin, ptx, ptx_size, NULL);
  cucore_object_destroy(obj);
  if (st != CUCORE_OK) return cli_fail("inspect", file, st);
  return 0;
}

/* 1 for a variable the program did not declare itself: CCCL's and CUB's (cuda::std::,
 * cuda::, cub::, thrust::, cooperative_groups::, std::) and the compiler's string literals
 * ($str, __unnamed_N). */
static int library_variable(const cucore_global_info *g) {
  static const char *const prefixes[] = {"cuda::", "cub::",  "thrust::", "cooperative_groups::",
                                         "std::",  "__cccl", "__cub",    "cuda_cub::"};
  const char *n = g->demangled ? g->demangled : g->name;
  if (g->name[0] == '$' || strncmp(g->name, "__unnamed_", 10) == 0) return 1;
  /* A header's internal-linkage names carry the file's prefix: look past it. */
  if (strncmp(n, "_INTERNAL_", 10) == 0 && strstr(n, "::")) n = strstr(n, "::") + 2;
  for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
    if (strncmp(n, prefixes[i], strlen(prefixes[i])) == 0) return 1;
  return 0;
}

/* The verb's command line (its table below). */
typedef struct inspect_line {
  const char *arch, *kernel;
  int json;
  int timings;
} inspect_line;

static int want_timings; /* --timings: the phase table at the end */

static const cli_opt cmd_inspect_opts[] = {
    {.name = "--arch",
     .kind = CLI_OPT_TEXT,
     CLI_AT(inspect_line, arch),
     .arg = "sm_XX",
     .help = "the GPU to choose for (sm_90, sm_90a, 90, 9.0): picks a fatbin's entry,\n"
             "checks that a cubin can run there, lays PTX parameters out for it, and\n"
             "compiles a .cu file for it"},
    {.name = "--kernel",
     .kind = CLI_OPT_TEXT,
     CLI_AT(inspect_line, kernel),
     .arg = "NAME",
     .help = "only this kernel (symbol, demangled name, or name without parameters)"},
    {.name = "--json", .kind = CLI_OPT_FLAG, CLI_AT(inspect_line, json), .help = CLI_JSON_HELP},
    {.name = "--timings",
     .kind = CLI_OPT_FLAG,
     CLI_AT(inspect_line, timings),
     .help = CLI_TIMINGS_HELP},
    {0}};

/* --arch: the arch number, also set as the compile option for a .cu file. */
static int take_arch(cli_source *srcp, const char *text, int *arch) {
  *arch = parse_arch(text);
  if (*arch < 0)
    return cli_usage("inspect", "--arch `%s`: expected sm_XX (e.g. sm_90, sm_90a) or 9.0", text);
  /* The same arch compiles a .cu file ("8.6" and "sm_86a" both name it). */
  char arch_name[32];
  const char *suffix = strpbrk(text, "af");
  snprintf(arch_name, sizeof arch_name, "sm_%d%s", *arch,
           suffix && suffix[1] == '\0' ? suffix : "");
  if (cucore_options_set_string(srcp->opts, CUCORE_OPT_ARCH, arch_name) != CUCORE_OK)
    return cli_usage("inspect", "%s", cucore_last_error());
  snprintf(srcp->arch, sizeof srcp->arch, "%s", arch_name);
  return 0;
}

/* Reads the command line: the options, FILE and the arch number (0: none). */
static int read_line(cli_source *srcp, int argc, char **argv, inspect_line *line, const char **file,
                     int *arch) {
  cli_parse parse = {"inspect", cmd_inspect_opts, line, srcp, file, 1, 0, "FILE"};
  int rc = cli_opt_parse(&parse, argc, argv);
  *arch = 0;
  if (!rc && line->arch) rc = take_arch(srcp, line->arch, arch);
  return rc;
}

/* What the verb opened, freed once by cmd_inspect. */
typedef struct inspect_job {
  const char *file;
  cucore_binary *bin;
  char *lowered;                  /* --kernel's lowered name, from open_source */
  const cucore_kernel_info *only; /* --kernel's kernel, or NULL for all */
  int json;
} inspect_job;

/* The binary: a source compiled, or a file read (for `arch` when a fatbin). */
static int open_binary(cli_source *srcp, inspect_job *job, const char **kernel, int arch) {
  if (is_source(job->file)) {
    const char *asked = *kernel;
    int rc = open_source(srcp, job->file, kernel, &job->bin);
    if (*kernel != asked) job->lowered = (char *)*kernel; /* open_source's copy */
    return rc;
  }
  cucore_status st = cucore_binary_open_file(job->file, CUCORE_CODE_AUTO, arch, &job->bin);
  if (st != CUCORE_OK) return cli_fail("inspect", job->file, st);
  return 0;
}

/* The file's type, arch and versions. */
static void json_header(json_out *j, const char *file, const cucore_binary_info *info) {
  json_str(j, "file", file);
  json_str(j, "type", cucore_code_type_name(info->type));
  json_str(j, "code_type", cucore_code_type_name(info->code_type));
  json_str(j, "arch", info->arch_name);
  if (info->virtual_arch) json_int(j, "virtual_arch", info->virtual_arch);
  if (info->ptx_version) {
    char v[16];
    snprintf(v, sizeof v, "%d.%d", info->ptx_version / 10, info->ptx_version % 10);
    json_str(j, "ptx_version", v);
  }
}

/* A fatbin's entries and the one chosen. */
static void json_entries(json_out *j, cucore_binary *bin, const cucore_binary_info *info) {
  if (!info->fatbin_entry_count) return;
  json_int(j, "selected_entry", info->selected_entry);
  json_begin_array(j, "entries");
  for (uint32_t i = 0; i < info->fatbin_entry_count; i++) {
    cucore_fatbin_entry e;
    cucore_binary_get_fatbin_entry(bin, i, &e);
    json_begin_object(j, NULL);
    json_str(j, "kind", e.type == CUCORE_CODE_AUTO ? "unknown" : cucore_code_type_name(e.type));
    json_str(j, "arch", e.arch_name);
    json_int(j, "size", (long long)e.size);
    json_int(j, "stored_size", (long long)e.stored_size);
    json_str(j, "compression", e.compression);
    json_bool(j, "debug", e.debug);
    json_end_object(j);
  }
  json_end_array(j);
}

/* Every module variable, library internals included. */
static void json_globals(json_out *j, cucore_binary *bin) {
  uint32_t nglobals = 0;
  cucore_binary_get_global_count(bin, &nglobals);
  json_begin_array(j, "globals");
  for (uint32_t i = 0; i < nglobals; i++) {
    const cucore_global_info *g;
    cucore_binary_get_global(bin, i, &g);
    json_begin_object(j, NULL);
    json_str(j, "name", g->name);
    json_str(j, "demangled", g->demangled);
    json_str(j, "kind", cucore_global_kind_name(g->kind));
    json_uint(j, "size", g->size);
    json_bool(j, "initialized", g->initialized);
    json_end_object(j);
  }
  json_end_array(j);
}

static void inspect_json(const inspect_job *job, const cucore_binary_info *info) {
  json_out j = {stdout, 0, {0}, 1};
  json_begin_object(&j, NULL);
  json_header(&j, job->file, info);
  json_entries(&j, job->bin, info);
  json_globals(&j, job->bin);
  json_begin_array(&j, "kernels");
  for (uint32_t i = 0; i < info->kernel_count; i++) {
    const cucore_kernel_info *k;
    cucore_binary_get_kernel(job->bin, i, &k);
    if (!job->only || job->only == k) kernel_json(&j, k);
  }
  json_end_array(&j);
  json_end_object(&j);
}

/* The file, its type, arch and versions, relocatable and debug. */
static void text_header(const char *file, const cucore_binary_info *info) {
  printf("%-22s %s (%s)\n", "file", file, cucore_code_type_name(info->type));
  printf("%-22s %s", "arch", info->arch_name);
  if (info->virtual_arch) printf(" (from compute_%d", info->virtual_arch);
  if (info->virtual_arch && info->toolkit_version)
    printf(", CUDA %d.%d)", info->toolkit_version / 10, info->toolkit_version % 10);
  else if (info->virtual_arch)
    printf(")");
  if (info->ptx_version) printf(" (PTX ISA %d.%d)", info->ptx_version / 10, info->ptx_version % 10);
  if (info->relocatable) printf(", relocatable (needs linking)");
  if (info->debug) printf(", debug (-G)");
  printf("\n");
}

/* A fatbin's entries, as a table. */
static void text_entries(cucore_binary *bin, const cucore_binary_info *info) {
  if (!info->fatbin_entry_count) return;
  printf("%-22s %u; kernels below come from entry %d\n", "entries", info->fatbin_entry_count,
         info->selected_entry);
  printf("  %4s  %-7s %-14s %10s %10s  %s\n", "#", "kind", "arch", "size", "stored", "compression");
  for (uint32_t i = 0; i < info->fatbin_entry_count; i++) {
    cucore_fatbin_entry e;
    cucore_binary_get_fatbin_entry(bin, i, &e);
    printf("  %4u  %-7s %-14s %10llu %10llu  %s%s\n", i,
           e.type == CUCORE_CODE_AUTO ? "unknown" : cucore_code_type_name(e.type), e.arch_name,
           (unsigned long long)e.size, (unsigned long long)e.stored_size, e.compression,
           e.debug ? " (debug)" : "");
  }
}

/* Library internals (CCCL's constants, the compiler's string literals) can number in the
 * thousands in a file that includes <cooperative_groups.h> or CUB: the text lists the
 * program's own variables and counts the rest (JSON has them all). */
static void text_globals(cucore_binary *bin) {
  uint32_t nglobals = 0;
  cucore_binary_get_global_count(bin, &nglobals);
  uint32_t hidden = 0;
  for (uint32_t i = 0; i < nglobals; i++) {
    const cucore_global_info *g;
    cucore_binary_get_global(bin, i, &g);
    if (library_variable(g)) hidden++;
  }
  if (!nglobals) return;
  printf("%-22s %u", "module variables", nglobals);
  if (hidden) printf(" (%u of them library internals or string literals, not listed)", hidden);
  printf("\n");
  if (hidden < nglobals)
    printf("  %-32s %-9s %10s  %s\n", "name", "kind", "bytes", "initial value");
  for (uint32_t i = 0; i < nglobals; i++) {
    const cucore_global_info *g;
    cucore_binary_get_global(bin, i, &g);
    if (library_variable(g)) continue;
    char name[512];
    if (g->demangled)
      snprintf(name, sizeof name, "%s (%s)", g->demangled, g->name);
    else
      snprintf(name, sizeof name, "%s", g->name);
    printf("  %-32s %-9s %10llu  %s\n", name, cucore_global_kind_name(g->kind),
           (unsigned long long)g->size, g->initialized ? "yes" : "no");
  }
}

static void inspect_text(const inspect_job *job, const cucore_binary_info *info) {
  text_header(job->file, info);
  text_entries(job->bin, info);
  text_globals(job->bin);
  printf("%-22s %u\n", "kernels", info->kernel_count);
  if (info->kernel_count && !info->demangler)
    printf("%-22s libstdc++ not found: C++ names are shown mangled\n", "note");
  for (uint32_t i = 0; i < info->kernel_count; i++) {
    const cucore_kernel_info *k;
    cucore_binary_get_kernel(job->bin, i, &k);
    if (!job->only || job->only == k) kernel_text(k);
  }
}

/* Reads the command line, opens the binary, finds --kernel and prints; what it opened is in
 * *job for the caller to free. */
static int inspect_body(cli_source *srcp, int argc, char **argv, inspect_job *job) {
  inspect_line line = {NULL, NULL, 0, 0};
  int arch = 0, usage = read_line(srcp, argc, argv, &line, &job->file, &arch);
  if (usage) return usage;
  job->json = line.json;
  want_timings = line.timings;
  const char *kernel = line.kernel;
  if (!job->file)
    return cli_usage("inspect", "no FILE given; usage: cucore inspect FILE [--arch sm_XX] "
                                "[--kernel NAME] [--json]");
  int rc = open_binary(srcp, job, &kernel, arch);
  cli_source_free(srcp);
  if (rc) return rc;
  cucore_binary_info info;
  cucore_binary_get_info(job->bin, &info);
  if (kernel) {
    cucore_status st = cucore_binary_find_kernel(job->bin, kernel, &job->only);
    if (st != CUCORE_OK) return cli_fail("inspect", job->file, st);
  }
  if (job->json)
    inspect_json(job, &info);
  else
    inspect_text(job, &info);
  return CLI_EXIT_OK;
}

/* Every exit path frees the verb's options, early usage errors included. */
static int cmd_inspect(int argc, char **argv) {
  cli_source src;
  if (cli_source_init(&src)) return CLI_EXIT_FAILURE;
  inspect_job job;
  memset(&job, 0, sizeof job);
  phases_mark_process_start();
  int rc = inspect_body(&src, argc, argv, &job);
  free(job.lowered);
  if (job.bin) cucore_binary_destroy(job.bin);
  cli_source_free(&src);
  phases_print_timings(want_timings);
  return rc;
}

/* `cucore inspect`'s one help source: the summary and text here, each option's help in its row of
 * cmd_inspect_opts. */
const cli_verb cmd_inspect_verb = {"inspect", cmd_inspect, cmd_inspect_summary, cmd_inspect_help,
                                   cmd_inspect_opts};
