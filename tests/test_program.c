/* test_program.c -- Program (NVRTC, nvJitLink, libNVVM), Linker and ObjectCode without a GPU. */
#include "support.h"

#include <stdlib.h>
#include <string.h>

#include "object/object.h" /* white-box: an LTO-IR object's producer version */

/* Loads nvJitLink so cc_jl.version is known. */
static cucore_status load_nvjitlink(void) { return cc_nvjitlink_load(); }

static cucore_options *opts_for(const char *arch) {
  cucore_options *o = NULL;
  assert_ok(cucore_options_create(&o));
  if (arch) assert_ok(cucore_options_set_string(o, CUCORE_OPT_ARCH, arch));
  return o;
}

static const char *two_kernels =
    "template <typename T> __global__ void scale(T *x, T a, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= a; }\n"
    "namespace { __global__ void hidden(int *p) { *p = 1; } }\n"
    "extern \"C\" __global__ void plain(float *x) { x[0] = 1; }\n";

static void compiles_cpp_to_every_target(void **state) {
  (void)state;
  cucore_options *o = opts_for("sm_90");
  cucore_program *p = NULL;
  assert_ok(cucore_program_create(CUCORE_CODE_CUDA_CPP, two_kernels, 0, "two.cu", o, &p));
  assert_ok(cucore_program_add_name_expression(p, "scale<float>"));
  assert_ok(cucore_program_add_name_expression(p, "hidden"));
  const cucore_code_type targets[] = {CUCORE_CODE_PTX, CUCORE_CODE_CUBIN, CUCORE_CODE_LTOIR};
  for (int t = 0; t < 3; t++) {
    cucore_object *obj = NULL;
    assert_ok(cucore_program_compile(p, targets[t], &obj));
    cucore_code_type type;
    const void *data;
    size_t size;
    assert_ok(cucore_object_get_code(obj, &type, &data, &size));
    assert_int_equal(type, targets[t]);
    assert_true(size > 100);
    cucore_code_type detected;
    assert_ok(cucore_code_type_detect(data, size, &detected));
    assert_int_equal(detected, targets[t]);
    const char *lowered = NULL;
    assert_ok(cucore_object_get_lowered_name(obj, "scale<float>", &lowered));
    assert_string_equal(lowered, "_Z5scaleIfEvPT_S0_i");
    /* Anonymous-namespace kernels get names that change between compiles: resolve them by
     * name expression, which the object keeps. */
    assert_ok(cucore_object_get_lowered_name(obj, "hidden", &lowered));
    assert_non_null(strstr(lowered, "hidden"));
    assert_status(cucore_object_get_lowered_name(obj, "scale<int>", &lowered), CUCORE_NOT_FOUND);
    assert_contains(cucore_last_error(), "scale<float>");
    if (targets[t] == CUCORE_CODE_CUBIN) {
      int arch = 0;
      assert_ok(cucore_object_get_arch(obj, &arch));
      assert_int_equal(arch, 90);
      /* Offline: the kernel, by name expression, with layout and PTX kinds. */
      cucore_kernel *k = NULL;
      assert_ok(cucore_object_get_kernel(obj, "scale<float>", &k));
      int n = 0;
      assert_ok(cucore_kernel_get_param_count(k, &n));
      assert_int_equal(n, 3);
      cucore_param_info pi;
      assert_ok(cucore_kernel_get_param(k, 1, &pi));
      assert_int_equal(pi.size, 4);
      assert_int_equal(pi.kind, CUCORE_PARAM_FLOAT);
      cucore_kernel_destroy(k);
      assert_status(cucore_object_get_kernel(obj, "nothere", &k), CUCORE_NOT_FOUND);
      assert_contains(cucore_last_error(), "plain");
      /* Enumeration works without a GPU too (the offline reader). */
      int count = 0;
      assert_ok(cucore_object_get_kernel_count(obj, &count));
      assert_int_equal(count, 3);
      int seen_plain = 0;
      for (int i = 0; i < count; i++) {
        const char *name = NULL;
        assert_ok(cucore_object_get_kernel_name(obj, i, &name));
        seen_plain |= strcmp(name, "plain") == 0;
      }
      assert_true(seen_plain);
      const char *name = NULL;
      assert_status(cucore_object_get_kernel_name(obj, count, &name), CUCORE_INVALID_ARGUMENT);
    }
    cucore_object_destroy(obj);
  }
  const char *log = NULL;
  assert_ok(cucore_program_get_log(p, &log));
  assert_non_null(log);
  cucore_program_destroy(p);
  cucore_options_destroy(o);
}

static void compile_errors_carry_the_log(void **state) {
  (void)state;
  cucore_options *o = opts_for("sm_80");
  cucore_program *p = NULL;
  assert_ok(cucore_program_create(CUCORE_CODE_CUDA_CPP,
                                  "__global__ void f(int *p) {\n  *p = undefined_name;\n}\n", 0,
                                  "broken.cu", o, &p));
  cucore_object *obj = (cucore_object *)0x1;
  cucore_status st = cucore_program_compile(p, CUCORE_CODE_CUBIN, &obj);
  assert_int_equal(CUCORE_CODE(st), CUCORE_COMPILE_ERROR);
  assert_int_equal(cucore_status_source(st), CUCORE_SOURCE_NVRTC);
  assert_null(obj);
  assert_contains(cucore_last_error(), "broken.cu(2)");
  assert_contains(cucore_last_error(), "undefined_name");
  const char *log = NULL;
  assert_ok(cucore_program_get_log(p, &log));
  assert_contains(log, "broken.cu(2): error");
  cucore_program_destroy(p);
  /* A name expression that names nothing. */
  assert_ok(
      cucore_program_create(CUCORE_CODE_CUDA_CPP, "__global__ void g() {}\n", 0, "g.cu", o, &p));
  assert_ok(cucore_program_add_name_expression(p, "nope<int>"));
  assert_int_not_equal(cucore_program_compile(p, CUCORE_CODE_CUBIN, &obj), CUCORE_OK);
  cucore_program_destroy(p);
  cucore_options_destroy(o);
}

static void arch_is_required_without_a_gpu_and_checked(void **state) {
  (void)state;
  int n = 0;
  if (cucore_device_get_count(&n) == CUCORE_OK && n > 0) skip(); /* a GPU supplies the arch */
  cucore_program *p = NULL;
  assert_ok(
      cucore_program_create(CUCORE_CODE_CUDA_CPP, "__global__ void g() {}\n", 0, NULL, NULL, &p));
  cucore_object *obj = NULL;
  assert_status(cucore_program_compile(p, CUCORE_CODE_CUBIN, &obj), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "--arch");
  cucore_program_destroy(p);
  /* An arch NVRTC does not know is its error, named. */
  cucore_options *o = opts_for("sm_12");
  assert_ok(
      cucore_program_create(CUCORE_CODE_CUDA_CPP, "__global__ void g() {}\n", 0, NULL, o, &p));
  assert_int_not_equal(cucore_program_compile(p, CUCORE_CODE_CUBIN, &obj), CUCORE_OK);
  assert_contains(cucore_last_error(), "sm_12");
  cucore_program_destroy(p);
  cucore_options_destroy(o);
}

static void in_memory_headers_and_toolkit_headers(void **state) {
  (void)state;
  cucore_options *o = opts_for("sm_90");
  assert_ok(cucore_options_add_header(o, "consts.h", "#define FACTOR 3\n"));
  assert_ok(cucore_options_set_string(o, CUCORE_OPT_DEFINE, "OFFSET=2"));
  cucore_program *p = NULL;
  /* NVRTC 13 has no built-in cuda_fp16.h or cooperative_groups.h: cucore adds the toolkit's
   * include and include/cccl directories by default. */
  const char *src =
      "#include \"consts.h\"\n#include <cuda_fp16.h>\n#include <cooperative_groups.h>\n"
      "#include <cuda/std/cstdint>\n"
      "extern \"C\" __global__ void k(__half *h, cuda::std::int32_t *o) {\n"
      "  cooperative_groups::this_thread_block().sync(); o[0] = FACTOR + OFFSET; h[0] = "
      "__float2half(1.0f); }\n";
  assert_ok(cucore_program_create(CUCORE_CODE_CUDA_CPP, src, 0, "hdr.cu", o, &p));
  cucore_object *obj = NULL;
  assert_ok(cucore_program_compile(p, CUCORE_CODE_PTX, &obj));
  cucore_object_destroy(obj);
  cucore_program_destroy(p);
  /* Without the toolkit directories the same source does not find the headers. */
  int used;
  assert_ok(cucore_options_parse(o, "--no-toolkit-includes", NULL, &used));
  assert_ok(cucore_program_create(CUCORE_CODE_CUDA_CPP, src, 0, "hdr.cu", o, &p));
  assert_status(cucore_program_compile(p, CUCORE_CODE_PTX, &obj), CUCORE_COMPILE_ERROR);
  cucore_program_destroy(p);
  cucore_options_destroy(o);
}

static const char *nvvm_ir =
    "target datalayout = \"e-i64:64-i128:128-v16:16-v32:32-n16:32:64\"\n"
    "target triple = \"nvptx64-nvidia-cuda\"\n"
    "define void @kern(float addrspace(1)* %p, float %v) {\n"
    "  store float %v, float addrspace(1)* %p\n  ret void\n}\n"
    "!nvvm.annotations = !{!0}\n"
    "!0 = !{void (float addrspace(1)*, float)* @kern, !\"kernel\", i32 1}\n"
    "!nvvmir.version = !{!1}\n!1 = !{i32 2, i32 0, i32 3, i32 2}\n";

static void nvvm_ir_and_ptx_programs(void **state) {
  (void)state;
  cucore_options *o = opts_for("sm_90");
  cucore_program *p = NULL;
  assert_ok(cucore_program_create(CUCORE_CODE_NVVM, nvvm_ir, 0, "k.ll", o, &p));
  cucore_object *ptx = NULL, *cubin = NULL, *lto = NULL;
  assert_ok(cucore_program_compile(p, CUCORE_CODE_PTX, &ptx));
  assert_ok(cucore_program_compile(p, CUCORE_CODE_CUBIN, &cubin));
  assert_ok(cucore_program_compile(p, CUCORE_CODE_LTOIR, &lto));
  const void *d;
  size_t n;
  assert_ok(cucore_object_get_code(ptx, NULL, &d, &n));
  assert_non_null(strstr(d, ".entry kern"));
  cucore_kernel *k = NULL;
  assert_ok(cucore_object_get_kernel(cubin, "kern", &k));
  cucore_param_info pi;
  assert_ok(cucore_kernel_get_param(k, 1, &pi));
  assert_int_equal(pi.kind, CUCORE_PARAM_FLOAT);
  cucore_kernel_destroy(k);
  cucore_program_destroy(p);
  /* The PTX through a PTX program (nvJitLink) to cubin. */
  assert_ok(cucore_program_create(CUCORE_CODE_AUTO, d, n, "k.ptx", o, &p));
  cucore_object *from_ptx = NULL;
  assert_ok(cucore_program_compile(p, CUCORE_CODE_CUBIN, &from_ptx));
  cucore_object *none = NULL;
  assert_status(cucore_program_compile(p, CUCORE_CODE_LTOIR, &none), CUCORE_NOT_SUPPORTED);
  assert_null(none);
  cucore_program_destroy(p);
  /* Bad IR: the log says where. */
  assert_ok(cucore_program_create(CUCORE_CODE_NVVM, "define garbage", 0, "bad.ll", o, &p));
  assert_status(cucore_program_compile(p, CUCORE_CODE_PTX, &none), CUCORE_COMPILE_ERROR);
  assert_contains(cucore_last_error(), "bad.ll");
  cucore_program_destroy(p);
  cucore_object_destroy(ptx);
  cucore_object_destroy(cubin);
  cucore_object_destroy(from_ptx);
  cucore_object_destroy(lto);
  cucore_options_destroy(o);
}

static void linker_links_and_names_undefined_symbols(void **state) {
  (void)state;
  cucore_options *o = opts_for("sm_90");
  assert_ok(cucore_options_set_int(o, CUCORE_OPT_RDC, 1));
  const char *srcs[3] = {
      ("extern __device__ int f_b(int); extern __device__ int f_c(int);\n"
       "extern \"C\" __global__ void combine(int *out) { out[0] = f_b(2) + f_c(3); }\n"),
      "__device__ int f_b(int x) { return x * x; }\n",
      "__device__ int f_c(int x) { return 3 * x + 1; }\n"};
  for (int mode = 0; mode < 2; mode++) {
    cucore_object *objs[3];
    for (int i = 0; i < 3; i++) {
      cucore_program *p = NULL;
      assert_ok(cucore_program_create(CUCORE_CODE_CUDA_CPP, srcs[i], 0, NULL, o, &p));
      assert_ok(cucore_program_compile(p, mode ? CUCORE_CODE_CUBIN : CUCORE_CODE_LTOIR, &objs[i]));
      cucore_program_destroy(p);
    }
    cucore_linker *lk = NULL;
    assert_ok(cucore_linker_create(o, &lk));
    for (int i = 0; i < 3; i++) assert_ok(cucore_linker_add_object(lk, objs[i]));
    cucore_object *linked = NULL;
    assert_ok(cucore_linker_complete(lk, CUCORE_CODE_CUBIN, &linked));
    cucore_kernel *k = NULL;
    assert_ok(cucore_object_get_kernel(linked, "combine", &k));
    cucore_kernel_destroy(k);
    cucore_object_destroy(linked);
    cucore_linker_destroy(lk);
    /* Without the third file the link fails naming the symbol. */
    assert_ok(cucore_linker_create(o, &lk));
    assert_ok(cucore_linker_add_object(lk, objs[0]));
    assert_ok(cucore_linker_add_object(lk, objs[1]));
    assert_int_not_equal(cucore_linker_complete(lk, CUCORE_CODE_CUBIN, &linked), CUCORE_OK);
    const char *err = NULL;
    assert_ok(cucore_linker_get_log(lk, NULL, &err));
    assert_true(strstr(err, "f_c") || strstr(cucore_last_error(), "f_c"));
    /* ... and its logs as records: an error naming the symbol. */
    int n = 0, named = 0;
    assert_ok(cucore_linker_get_diagnostic_count(lk, &n));
    assert_true(n >= 1);
    for (int i = 0; i < n; i++) {
      cucore_diagnostic d;
      assert_ok(cucore_linker_get_diagnostic(lk, i, &d));
      named += d.severity >= CUCORE_DIAG_ERROR && strstr(d.message, "f_c") != NULL;
    }
    assert_true(named >= 1);
    cucore_diagnostic d;
    assert_status(cucore_linker_get_diagnostic(lk, n, &d), CUCORE_INVALID_ARGUMENT);
    assert_contains(cucore_last_error(), "out of range");
    cucore_linker_destroy(lk);
    for (int i = 0; i < 3; i++) cucore_object_destroy(objs[i]);
  }
  /* Garbage is refused when added. */
  cucore_linker *lk = NULL;
  assert_ok(cucore_linker_create(o, &lk));
  assert_status(cucore_linker_add(lk, CUCORE_CODE_AUTO, "garbage!", 8, "junk"),
                CUCORE_INVALID_BINARY);
  assert_contains(cucore_last_error(), "junk");
  cucore_object *none = NULL;
  assert_status(cucore_linker_complete(lk, CUCORE_CODE_CUBIN, &none), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_linker_add_file(lk, "/nonexistent/x.cubin", CUCORE_CODE_AUTO),
                CUCORE_IO_ERROR);
  assert_contains(cucore_last_error(), "/nonexistent/x.cubin");
  cucore_linker_destroy(lk);
  cucore_options_destroy(o);
}

static void objects_refuse_what_they_cannot_load(void **state) {
  (void)state;
  cucore_object *obj = (cucore_object *)0x1;
  assert_status(cucore_object_from_memory("hello", 5, CUCORE_CODE_AUTO, "greeting", &obj),
                CUCORE_INVALID_BINARY);
  assert_null(obj);
  assert_contains(cucore_last_error(), "greeting");
  assert_status(cucore_object_from_memory("x", 0, CUCORE_CODE_AUTO, NULL, &obj),
                CUCORE_INVALID_BINARY);
  assert_status(cucore_object_from_memory("__global__ void f(){}", 21, CUCORE_CODE_CUDA_CPP, NULL,
                                          &obj),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "program");
  /* Declared cubin, bytes are PTX. */
  const char *ptx = ".version 8.0\n.target sm_80\n.address_size 64\n";
  assert_status(cucore_object_from_memory(ptx, strlen(ptx), CUCORE_CODE_CUBIN, "p", &obj),
                CUCORE_INVALID_BINARY);
  assert_contains(cucore_last_error(), "ptx");
  assert_status(cucore_object_from_file("/nonexistent.cubin", CUCORE_CODE_AUTO, &obj),
                CUCORE_IO_ERROR);
  assert_ok(cucore_object_from_memory(ptx, strlen(ptx), CUCORE_CODE_AUTO, "p", &obj));
  int count = -1;
  cucore_kernel *k = NULL;
  assert_status(cucore_object_get_kernel(obj, "none", &k), CUCORE_NOT_FOUND);
  (void)count;
  cucore_object_destroy(obj);
  assert_ok(cucore_object_destroy(NULL));
  assert_ok(cucore_program_destroy(NULL));
  assert_ok(cucore_linker_destroy(NULL));
  assert_ok(cucore_kernel_destroy(NULL));
  assert_ok(cucore_args_destroy(NULL));
}

/* A fatbin with a cubin per gencode and PTX: the reader lists the entries we asked for, picks
 * the right one per arch, and the name expressions survive. */
static void fatbin_target_holds_every_gencode(void **state) {
  (void)state;
  cucore_options *o = opts_for("sm_90");
  const char *gens[] = {"sm_80", "sm_90a", "compute_90"};
  for (int i = 0; i < 3; i++) assert_ok(cucore_options_set_string(o, CUCORE_OPT_GENCODE, gens[i]));
  assert_status(cucore_options_set_string(o, CUCORE_OPT_GENCODE, "sm90"), CUCORE_INVALID_ARGUMENT);
  cucore_program *p = NULL;
  assert_ok(cucore_program_create(CUCORE_CODE_CUDA_CPP, two_kernels, 0, "two.cu", o, &p));
  assert_ok(cucore_program_add_name_expression(p, "scale<float>"));
  cucore_object *obj = NULL;
  assert_ok(cucore_program_compile(p, CUCORE_CODE_FATBIN, &obj));
  const void *data;
  size_t size;
  cucore_code_type t;
  assert_ok(cucore_object_get_code(obj, &t, &data, &size));
  assert_int_equal(t, CUCORE_CODE_FATBIN);
  cucore_binary *bin = NULL;
  assert_ok(cucore_binary_open(data, size, CUCORE_CODE_AUTO, 80, &bin));
  cucore_binary_info info;
  assert_ok(cucore_binary_get_info(bin, &info));
  assert_int_equal(info.fatbin_entry_count, 3);
  const char *want_names[] = {"sm_80", "sm_90a", "compute_90"};
  const cucore_code_type want_types[] = {CUCORE_CODE_CUBIN, CUCORE_CODE_CUBIN, CUCORE_CODE_PTX};
  for (uint32_t i = 0; i < 3; i++) {
    cucore_fatbin_entry e;
    assert_ok(cucore_binary_get_fatbin_entry(bin, i, &e));
    assert_string_equal(e.arch_name, want_names[i]);
    assert_int_equal(e.type, want_types[i]);
  }
  assert_int_equal(info.arch, 80); /* the sm_80 cubin was chosen for arch 80 */
  const cucore_kernel_info *k = NULL;
  assert_ok(cucore_binary_find_kernel(bin, "plain", &k));
  cucore_binary_destroy(bin);
  const char *lowered = NULL;
  assert_ok(cucore_object_get_lowered_name(obj, "scale<float>", &lowered));
  assert_string_equal(lowered, "_Z5scaleIfEvPT_S0_i");
  cucore_object_destroy(obj);
  cucore_program_destroy(p);
  cucore_options_destroy(o);
}

/* LTO-IR from an NVRTC newer than the loaded nvJitLink is refused with both versions named.
 * (White-box: the object's producer version is raised to stand for a newer NVRTC.) */
static void newer_ltoir_is_refused(void **state) {
  (void)state;
  cucore_options *o = opts_for("sm_90");
  cucore_program *p = NULL;
  assert_ok(cucore_program_create(CUCORE_CODE_CUDA_CPP, "__device__ int f(int x) { return x; }\n",
                                  0, "new.cu", o, &p));
  cucore_object *obj = NULL;
  assert_ok(cucore_program_compile(p, CUCORE_CODE_LTOIR, &obj));
  assert_ok(load_nvjitlink());
  obj->producer_version = (cc_jl.version / 1000 + 1) * 1000;
  cucore_linker *lk = NULL;
  assert_ok(cucore_linker_create(o, &lk));
  assert_status(cucore_linker_add_object(lk, obj), CUCORE_VERSION_MISMATCH);
  assert_contains(cucore_last_error(), "newer than the loaded nvJitLink");
  cucore_linker_destroy(lk);
  cucore_object_destroy(obj);
  cucore_program_destroy(p);
  cucore_options_destroy(o);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(compiles_cpp_to_every_target),
      cmocka_unit_test(compile_errors_carry_the_log),
      cmocka_unit_test(arch_is_required_without_a_gpu_and_checked),
      cmocka_unit_test(in_memory_headers_and_toolkit_headers),
      cmocka_unit_test(nvvm_ir_and_ptx_programs),
      cmocka_unit_test(linker_links_and_names_undefined_symbols),
      cmocka_unit_test(objects_refuse_what_they_cannot_load),
      cmocka_unit_test(fatbin_target_holds_every_gencode),
      cmocka_unit_test(newer_ltoir_is_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
