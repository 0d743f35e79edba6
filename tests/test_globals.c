/* test_globals.c -- module variables and parameter types read offline (cubins and PTX made
 * by NVRTC, PTX written by hand), and launch configurations checked without a GPU. */
#include "support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "binary/signature.h" /* white-box: the signature splitter on hand-made names */

static const char *globals_src =
    "#include <cuda_fp16.h>\n"
    "struct P { float a; int b; double c; };\n"
    "__constant__ float table[64];\n"
    "__constant__ int cscalar = 5;\n"
    "__device__ float out_sum;\n"
    "__device__ int dinit[4] = {1, 2, 3, 4};\n"
    "__managed__ int counter;\n"
    "__managed__ float mtable[8];\n"
    "namespace ns { __device__ double nsvar[3]; }\n"
    "template <typename T> __device__ T tvar[2];\n"
    "template __device__ float tvar<float>[2];\n"
    "__device__ __half hv;\n"
    "extern \"C\" __global__ void k(const float *x, float *y, int n, P p) {\n"
    "  int i = threadIdx.x;\n"
    "  if (i < n) y[i] = x[i] * table[i % 64] + cscalar + p.a + dinit[i % 4] + ns::nsvar[0] +\n"
    "                    tvar<float>[0] + mtable[i % 8];\n"
    "  if (i == 0) { out_sum = y[0]; counter++; hv = __float2half(1.0f); }\n"
    "}\n"
    "template <typename T> __global__ void scale(T *x, T a, int n) { x[threadIdx.x] *= a; }\n"
    "template __global__ void scale<float>(float *, float, int);\n"
    "template <bool B> __global__ void pick(int *x) { x[0] = B; }\n"
    "template __global__ void pick<(3 > 2)>(int *);\n"
    "__global__ void h(const __half *a, const int *__restrict__ b, unsigned long c, P p,\n"
    "                  float4 v, long long q, unsigned char u, const char *s, int *const *pp) {}\n";

/* What the source declares: name as looked up, size from the declaration, kind. */
static const struct {
  const char *name;
  uint64_t size;
  cucore_global_kind kind;
  int initialized;
} expected[] = {
    {"table", 64 * sizeof(float), CUCORE_GLOBAL_CONSTANT, 0},
    {"cscalar", sizeof(int), CUCORE_GLOBAL_CONSTANT, 1},
    {"out_sum", sizeof(float), CUCORE_GLOBAL_DEVICE, 0},
    {"dinit", 4 * sizeof(int), CUCORE_GLOBAL_DEVICE, 1},
    {"counter", sizeof(int), CUCORE_GLOBAL_MANAGED, 0},
    {"mtable", 8 * sizeof(float), CUCORE_GLOBAL_MANAGED, 0},
    {"ns::nsvar", 3 * sizeof(double), CUCORE_GLOBAL_DEVICE, 0},
    {"tvar<float>", 2 * sizeof(float), CUCORE_GLOBAL_DEVICE, 0},
    {"hv", 2, CUCORE_GLOBAL_DEVICE, 0},
};

static cucore_object *compile(const char *src, cucore_code_type target, const char *arch) {
  cucore_options *o = NULL;
  cucore_program *p = NULL;
  cucore_object *obj = NULL;
  assert_ok(cucore_options_create(&o));
  assert_ok(cucore_options_set_string(o, CUCORE_OPT_ARCH, arch));
  assert_ok(cucore_program_create(CUCORE_CODE_CUDA_CPP, src, 0, "globals.cu", o, &p));
  cucore_status st = cucore_program_compile(p, target, &obj);
  if (st != CUCORE_OK) {
    const char *log = "";
    cucore_program_get_log(p, &log);
    fail_msg("compile: %s\n%s", cucore_last_error(), log);
  }
  cucore_program_destroy(p);
  cucore_options_destroy(o);
  return obj;
}

static cucore_binary *open_object(cucore_object *obj) {
  cucore_code_type type;
  const void *data;
  size_t size;
  assert_ok(cucore_object_get_code(obj, &type, &data, &size));
  cucore_binary *bin = NULL;
  assert_ok(cucore_binary_open(data, size, type, 0, &bin));
  return bin;
}

static void check_globals(cucore_binary *bin, const char *what) {
  uint32_t n = 0;
  assert_ok(cucore_binary_get_global_count(bin, &n));
  assert_int_equal(n, sizeof expected / sizeof expected[0]);
  for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++) {
    const cucore_global_info *g = NULL;
    assert_ok(cucore_binary_find_global(bin, expected[i].name, &g));
    if (g->size != expected[i].size || g->kind != expected[i].kind ||
        g->initialized != expected[i].initialized)
      fail_msg("%s: `%s` is %llu bytes, %s, initialized %d; the source says %llu, %s, %d", what,
               expected[i].name, (unsigned long long)g->size, cucore_global_kind_name(g->kind),
               g->initialized, (unsigned long long)expected[i].size,
               cucore_global_kind_name(expected[i].kind), expected[i].initialized);
    /* The symbol finds the same entry. */
    const cucore_global_info *again = NULL;
    assert_ok(cucore_binary_find_global(bin, g->name, &again));
    assert_ptr_equal(again, g);
  }
  const cucore_global_info *g = NULL;
  assert_status(cucore_binary_find_global(bin, "tabel", &g), CUCORE_NOT_FOUND);
  assert_null(g);
  assert_contains(cucore_last_error(), "table (constant, 256 bytes)");
  assert_status(cucore_binary_get_global(bin, n, &g), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "9 module variables");
}

/* readelf's view of the cubin's data symbols: the sizes must be the reader's. */
static void readelf_agrees(cucore_object *obj, cucore_binary *bin) {
  char *out = NULL;
  if (cucore_test_run("readelf --version", &out) != 0) {
    free(out);
    print_message("readelf not found: the symbol-table oracle is skipped\n");
    return;
  }
  free(out);
  const void *data;
  size_t size;
  assert_ok(cucore_object_get_code(obj, NULL, &data, &size));
  char path[256];
  snprintf(path, sizeof path, "%s/globals.%ld.cubin", CUCORE_TEST_BINARY_DIR, (long)getpid());
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(data, 1, size, f), size);
  fclose(f);
  char cmd[512];
  snprintf(cmd, sizeof cmd,
           "readelf -sW %s | awk '$4 == \"OBJECT\" && $7 != \"UND\" {print $3, $NF}'", path);
  assert_int_equal(cucore_test_run(cmd, &out), 0);
  remove(path);
  int seen = 0;
  for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
    unsigned long long sz = 0;
    char name[256];
    if (sscanf(line, "%llu %255s", &sz, name) != 2) continue;
    const cucore_global_info *g = NULL;
    assert_ok(cucore_binary_find_global(bin, name, &g));
    if (g->size != sz)
      fail_msg("`%s`: readelf says %llu bytes, the reader %llu", name, sz,
               (unsigned long long)g->size);
    seen++;
  }
  free(out);
  assert_int_equal(seen, sizeof expected / sizeof expected[0]);
}

static void globals_from_cubin_and_ptx(void **state) {
  (void)state;
  cucore_object *cubin = compile(globals_src, CUCORE_CODE_CUBIN, "sm_90");
  cucore_object *ptx = compile(globals_src, CUCORE_CODE_PTX, "sm_90");
  cucore_binary *a = open_object(cubin), *b = open_object(ptx);
  check_globals(a, "cubin");
  check_globals(b, "ptx");
  readelf_agrees(cubin, a);
  /* The fatbin's chosen entry gives the same list. */
  cucore_object *fat = compile(globals_src, CUCORE_CODE_FATBIN, "sm_90");
  cucore_binary *c = open_object(fat);
  check_globals(c, "fatbin");
  cucore_binary_destroy(a);
  cucore_binary_destroy(b);
  cucore_binary_destroy(c);
  cucore_object_destroy(cubin);
  cucore_object_destroy(ptx);
  cucore_object_destroy(fat);
}

/* PTX written by hand: forms the reader follows, and forms it skips without failing. */
static void ptx_declarations(void **state) {
  (void)state;
  const char *ptx = ".version 8.0\n.target sm_80\n.address_size 64\n"
                    ".global .align 4 .u32 a, b[3] = {1, 2, 3};\n"
                    ".visible .global .v4 .f32 v4;\n"
                    ".global .f32 m[2][3];\n"
                    ".const .align 8 .f64 c = 0d3FF0000000000000;\n"
                    ".global .align 8 .u64 p = generic(a);\n"
                    ".weak .global .attribute(.managed) .align 4 .b8 mm[12];\n"
                    "// skipped: declarations, unsized and huge arrays, handles, banks\n"
                    ".extern .global .u32 e;\n"
                    ".global .b8 unsized[] = {1, 2};\n"
                    ".global .b8 huge[99999999999999999];\n"
                    ".global .texref t;\n"
                    ".const[2] .u32 old;\n"
                    ".global .b8 after_skips[5];\n"
                    ".visible .entry k(.param .u64 k_param_0) { ret; }\n";
  cucore_binary *bin = NULL;
  assert_ok(cucore_binary_open(ptx, strlen(ptx), CUCORE_CODE_PTX, 0, &bin));
  struct {
    const char *name;
    uint64_t size;
    cucore_global_kind kind;
    int init;
  } want[] = {{"a", 4, CUCORE_GLOBAL_DEVICE, 0},    {"b", 12, CUCORE_GLOBAL_DEVICE, 1},
              {"v4", 16, CUCORE_GLOBAL_DEVICE, 0},  {"m", 24, CUCORE_GLOBAL_DEVICE, 0},
              {"c", 8, CUCORE_GLOBAL_CONSTANT, 1},  {"p", 8, CUCORE_GLOBAL_DEVICE, 1},
              {"mm", 12, CUCORE_GLOBAL_MANAGED, 0}, {"after_skips", 5, CUCORE_GLOBAL_DEVICE, 0}};
  uint32_t n = 0;
  assert_ok(cucore_binary_get_global_count(bin, &n));
  assert_int_equal(n, sizeof want / sizeof want[0]);
  for (uint32_t i = 0; i < n; i++) {
    const cucore_global_info *g = NULL;
    assert_ok(cucore_binary_get_global(bin, i, &g));
    assert_string_equal(g->name, want[i].name);
    assert_int_equal(g->size, want[i].size);
    assert_int_equal(g->kind, want[i].kind);
    assert_int_equal(g->initialized, want[i].init);
  }
  uint32_t kernels = 0;
  assert_ok(cucore_binary_get_kernel_count(bin, &kernels));
  assert_int_equal(kernels, 1);
  cucore_binary_destroy(bin);
  /* Truncated text: whatever was read is kept, nothing crashes. */
  for (size_t cut = 60; cut < strlen(ptx); cut += 7) {
    if (cucore_binary_open(ptx, cut, CUCORE_CODE_PTX, 0, &bin) == CUCORE_OK) {
      assert_ok(cucore_binary_get_global_count(bin, &n));
      assert_true(n <= 8);
      cucore_binary_destroy(bin);
    }
  }
}

/* Parameter types from the demangled signature, const first. */
static void parameter_types(void **state) {
  (void)state;
  cucore_object *obj = compile(globals_src, CUCORE_CODE_CUBIN, "sm_90");
  cucore_binary *bin = open_object(obj);
  const cucore_kernel_info *k = NULL;
  assert_ok(cucore_binary_find_kernel(bin, "h", &k));
  if (!k->demangled) {
    print_message("no demangler: parameter types are not read\n");
  } else {
    const char *want[] = {"const __half*", "const int*",    "unsigned long", "P",          "float4",
                          "long long",     "unsigned char", "const char*",   "int* const*"};
    assert_non_null(k->param_types);
    assert_int_equal(k->param_count, 9);
    for (int i = 0; i < 9; i++) assert_string_equal(k->param_types[i], want[i]);
    assert_ok(cucore_binary_find_kernel(bin, "scale<float>", &k));
    assert_non_null(k->param_types);
    assert_string_equal(k->param_types[0], "float*");
    assert_string_equal(k->param_types[1], "float");
    assert_string_equal(k->param_types[2], "int");
  }
  assert_ok(cucore_binary_find_kernel(bin, "k", &k));
  assert_null(k->param_types); /* extern "C": no signature */
  cucore_binary_destroy(bin);
  cucore_object_destroy(obj);

  /* The splitter on names no kernel of ours has. */
  struct {
    const char *name;
    const char *types[4];
    uint32_t count;
  } cases[] = {
      {"void f<(3>2)>(A<int, (1<2)>, float const* const*)",
       {"A<int, (1<2)>", "const float* const*"},
       2},
      {"(anonymous namespace)::k(int)", {"int"}, 1},
      {"void f()", {NULL}, 0},
      {"f(void)", {NULL}, 0},
      {"void g(void (*)(int, float), S<T<int>, 2>, int [3])",
       {"void (*)(int, float)", "S<T<int>, 2>", "int [3]"},
       3},
      {"k(unsigned long const, double const&)", {"const unsigned long", "const double&"}, 2},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    uint32_t n = 99;
    char **types = cc_signature_params(cases[c].name, &n);
    assert_non_null(types);
    assert_int_equal(n, cases[c].count);
    for (uint32_t i = 0; i < n; i++) assert_string_equal(types[i], cases[c].types[i]);
    free(types);
  }
  uint32_t n = 0;
  assert_null(cc_signature_params("no_parameter_list", &n));
  assert_null(cc_signature_params("broken(int", &n));
  assert_null(cc_signature_params("", &n));
}

static cucore_launch_config cfg1(unsigned grid, unsigned block, unsigned smem) {
  cucore_launch_config c;
  memset(&c, 0, sizeof c);
  c.grid[0] = grid;
  c.block[0] = block;
  c.shared_bytes = smem;
  return c;
}

static const char *bounded_src =
    "#include <cooperative_groups.h>\n"
    "extern \"C\" __global__ void __launch_bounds__(128) bounded(float *x) { x[threadIdx.x] = 1; "
    "}\n"
    "extern \"C\" __global__ void __cluster_dims__(2, 1, 1) clustered(float *x) { x[0] = 1; }\n"
    "extern \"C\" __global__ void big_static(float *x) {\n"
    "  __shared__ float s[10240]; s[threadIdx.x] = x[0]; __syncthreads(); x[1] = s[5]; }\n"
    "extern \"C\" __global__ void grid_synced(float *x) {\n"
    "  cooperative_groups::this_grid().sync(); x[0] = 1; }\n"
    "extern \"C\" __global__ void block_cg(float *x) {\n"
    "  cooperative_groups::thread_block b = cooperative_groups::this_thread_block();\n"
    "  x[threadIdx.x] = 1; cooperative_groups::sync(b); x[threadIdx.x] += 1; }\n"
    "extern \"C\" __global__ void plain(float *x) { x[0] = 1; }\n";

/* PTX: a required block size and clusters on an arch without them. */
static void ptx_launch_checks(void) {
  cucore_object *obj = NULL;
  cucore_launch_config c;
  const char *ptx = ".version 8.0\n.target sm_80\n.address_size 64\n"
                    ".visible .entry req(.param .u64 p) .reqntid 64, 2 { ret; }\n"
                    ".visible .entry clus(.param .u64 p) .reqnctapercluster 2 { ret; }\n";
  assert_ok(cucore_object_from_memory(ptx, strlen(ptx), CUCORE_CODE_PTX, "hand.ptx", &obj));
  cucore_kernel *req = NULL, *clus = NULL;
  assert_ok(cucore_object_get_kernel(obj, "req", &req));
  assert_ok(cucore_object_get_kernel(obj, "clus", &clus));
  c = cfg1(1, 64, 0);
  c.block[1] = 2;
  assert_ok(cucore_kernel_check_launch_offline(req, &c, 0, 0));
  c.block[1] = 1;
  assert_status(cucore_kernel_check_launch_offline(req, &c, 0, 0), CUCORE_LAUNCH_CONFIG);
  assert_contains(cucore_last_error(), "exactly 64x2x1 threads (.reqntid); the launch asks for "
                                       "64x1x1");
  c = cfg1(2, 32, 0);
  assert_status(cucore_kernel_check_launch_offline(clus, &c, 0, 0), CUCORE_LAUNCH_CONFIG);
  assert_contains(cucore_last_error(), "which sm_80 does not support (sm_90 or newer)");
  assert_ok(cucore_kernel_check_launch_offline(clus, &c, 90, 0));
  cucore_kernel_destroy(req);
  cucore_kernel_destroy(clus);
  cucore_object_destroy(obj);
}

/* The offline check refuses what a GPU would, in the same words. */
static void offline_launch_checks(void **state) {
  (void)state;
  cucore_object *obj = compile(bounded_src, CUCORE_CODE_CUBIN, "sm_90");
  cucore_kernel *bounded = NULL, *clustered = NULL, *big = NULL, *synced = NULL, *plain = NULL;
  assert_ok(cucore_object_get_kernel(obj, "bounded", &bounded));
  assert_ok(cucore_object_get_kernel(obj, "clustered", &clustered));
  assert_ok(cucore_object_get_kernel(obj, "big_static", &big));
  assert_ok(cucore_object_get_kernel(obj, "grid_synced", &synced));
  assert_ok(cucore_object_get_kernel(obj, "plain", &plain));
  cucore_launch_config c = cfg1(4, 128, 0);
  assert_ok(cucore_kernel_check_launch_offline(bounded, &c, 0, 0));
  c = cfg1(4, 256, 0);
  assert_status(cucore_kernel_check_launch_offline(bounded, &c, 0, 0), CUCORE_LAUNCH_CONFIG);
  assert_contains(cucore_last_error(), "256 threads exceeds the kernel's maximum of 128 threads "
                                       "per block (set by its __launch_bounds__");
  c = cfg1(4, 64, 0);
  c.block[2] = 65;
  assert_status(cucore_kernel_check_launch_offline(plain, &c, 0, 0), CUCORE_LAUNCH_CONFIG);
  assert_contains(cucore_last_error(), "block z-dimension 65 exceeds sm_90's limit of 64");
  c = cfg1(0, 64, 0);
  assert_status(cucore_kernel_check_launch_offline(plain, &c, 0, 0), CUCORE_LAUNCH_CONFIG);
  assert_contains(cucore_last_error(), "the grid's x-dimension is 0");
  /* Compile-time cluster: the grid must be a multiple of it. */
  c = cfg1(3, 64, 0);
  assert_status(cucore_kernel_check_launch_offline(clustered, &c, 0, 0), CUCORE_LAUNCH_CONFIG);
  assert_contains(cucore_last_error(), "grid 3x1x1 is not a multiple of the compile-time cluster "
                                       "(__cluster_dims__) 2x1x1");
  c = cfg1(4, 64, 0);
  assert_ok(cucore_kernel_check_launch_offline(clustered, &c, 0, 0));
  assert_ok(cucore_launch_config_cluster(&c, 4, 1, 1));
  assert_status(cucore_kernel_check_launch_offline(clustered, &c, 0, 0), CUCORE_LAUNCH_CONFIG);
  assert_contains(cucore_last_error(), "__cluster_dims__(2,1,1); the launch asks for a cluster "
                                       "of 4x1x1");
  /* A cluster above 8 needs the non-portable flag; on sm_80 none at all. */
  c = cfg1(24, 64, 0);
  assert_ok(cucore_launch_config_cluster(&c, 12, 1, 1));
  assert_status(cucore_kernel_check_launch_offline(plain, &c, 0, 0), CUCORE_LAUNCH_CONFIG);
  assert_contains(cucore_last_error(), "has 12 blocks; the limit is 8 (portable size");
  assert_ok(cucore_kernel_check_launch_offline(plain, &c, 0, CUCORE_CHECK_NON_PORTABLE_CLUSTER));
  /* Static + dynamic shared memory against the arch's opt-in maximum. */
  cucore_arch_limits lim;
  assert_ok(cucore_arch_get_limits(90, &lim));
  int static_bytes = 10240 * (int)sizeof(float);
  c = cfg1(1, 64, (unsigned)(lim.shared_per_block_optin - static_bytes));
  assert_ok(cucore_kernel_check_launch_offline(big, &c, 0, 0));
  c.shared_bytes++;
  assert_status(cucore_kernel_check_launch_offline(big, &c, 0, 0), CUCORE_LAUNCH_CONFIG);
  char want[256];
  snprintf(want, sizeof want,
           "%u bytes of dynamic shared memory + %d bytes of static shared "
           "memory exceed sm_90's maximum of %d bytes per block",
           c.shared_bytes, static_bytes, lim.shared_per_block_optin);
  assert_contains(cucore_last_error(), want);
  /* Cooperative groups are not refused without a cooperative launch: a cubin marks block-level
   * groups (the CUDA sample matrixMul's cg::sync of a thread block) as it marks a grid sync,
   * and the block-level kernel must run. Both are marked; neither is refused. */
  cucore_kernel *block_cg = NULL;
  assert_ok(cucore_object_get_kernel(obj, "block_cg", &block_cg));
  c = cfg1(2, 64, 0);
  assert_ok(cucore_kernel_check_launch_offline(block_cg, &c, 0, 0));
  assert_ok(cucore_kernel_check_launch_offline(synced, &c, 0, 0));
  assert_ok(cucore_launch_config_cooperative(&c, 1));
  assert_ok(cucore_kernel_check_launch_offline(synced, &c, 0, 0));
  cucore_kernel_destroy(block_cg);
  /* Arguments of the call itself. */
  assert_status(cucore_kernel_check_launch_offline(plain, &c, 0, 8), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_kernel_check_launch_offline(plain, &c, 42, 0), CUCORE_NOT_FOUND);
  assert_status(cucore_kernel_check_launch_offline(plain, NULL, 0, 0), CUCORE_INVALID_ARGUMENT);
  cucore_kernel_destroy(bounded);
  cucore_kernel_destroy(clustered);
  cucore_kernel_destroy(big);
  cucore_kernel_destroy(synced);
  cucore_kernel_destroy(plain);
  cucore_object_destroy(obj);

  ptx_launch_checks();
}

/* Copies are checked before any driver call. */
static void global_copies_checked(void **state) {
  (void)state;
  cucore_global g;
  memset(&g, 0, sizeof g);
  char buf[8] = {0};
  assert_status(cucore_global_write(&g, 0, buf, 4, NULL), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "cucore_object_get_global");
  assert_status(cucore_global_read(NULL, 0, buf, 4, NULL), CUCORE_INVALID_ARGUMENT);
  assert_string_equal(cucore_global_kind_name(CUCORE_GLOBAL_CONSTANT), "constant");
  assert_string_equal(cucore_global_kind_name((cucore_global_kind)77), "unknown");
}

int main(void) {
  /* Offline checks: the driver is kept out, so that a machine with a GPU runs the same test
   * (the hand-written sm_80 PTX with clusters would not load there); gpu_globals and
   * gpu_launch_checks cover the device. */
  setenv("CUCORE_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(globals_from_cubin_and_ptx),
      cmocka_unit_test(ptx_declarations),
      cmocka_unit_test(parameter_types),
      cmocka_unit_test(offline_launch_checks),
      cmocka_unit_test(global_copies_checked),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
