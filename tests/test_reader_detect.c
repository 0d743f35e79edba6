/* test_reader_detect.c -- what a buffer is, from its bytes: code made by nvcc, by NVRTC
 * (loaded at run time, including -dlto LTO-IR), by clang (NVVM bitcode and text), host
 * objects and libraries; and the messages for what is none of these. */
#include "reader_support.h"

#include "binary/binary.h"
#include "loader/loader.h"

static cucore_code_type detect(const void *d, size_t n) {
  cucore_code_type t = (cucore_code_type)99;
  cucore_status st = cucore_code_type_detect(d, n, &t);
  if (st != CUCORE_OK) fail_msg("detect failed: %s", cucore_last_error());
  return t;
}

static void nvcc_outputs(void **state) {
  (void)state;
  struct {
    const char *name, *cmd;
    cucore_code_type want;
  } cases[] = {
      {"params_sm_80.cubin",
       "nvcc -cubin -gencode arch=compute_80,code=sm_80 -o \"$OUT\" params.cu", CUCORE_CODE_CUBIN},
      {"params_compute_80.ptx", "nvcc -ptx -arch=compute_80 -o \"$OUT\" params.cu",
       CUCORE_CODE_PTX},
      {"params_sm_90.fatbin", "nvcc -fatbin -arch=sm_90 -o \"$OUT\" params.cu", CUCORE_CODE_FATBIN},
      {"params_sm_80.o",
       "nvcc -c -gencode arch=compute_80,code=[sm_80,compute_80] -o \"$OUT\" params.cu",
       CUCORE_CODE_OBJECT},
      {"params_rdc_sm_90.o", "nvcc -dc -arch=sm_90 -o \"$OUT\" params.cu", CUCORE_CODE_OBJECT},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *p = rs_build(cases[i].name, "%s", cases[i].cmd);
    size_t n;
    unsigned char *d = rs_read(p, &n);
    if (detect(d, n) != cases[i].want)
      fail_msg("%s detected as %s", cases[i].name, cucore_code_type_name(detect(d, n)));
    /* the magic-number view agrees, except that text has none */
    cucore_code_type m = cc_code_type_by_magic(d, n);
    assert_int_equal(m, cases[i].want == CUCORE_CODE_PTX ? CUCORE_CODE_AUTO : cases[i].want);
    free(d);
    free(p);
  }
}

/* What NVRTC produces: PTX, a cubin, and LTO-IR with -dlto. */
static void nvrtc_outputs(void **state) {
  (void)state;
  cc_begin();
  if (cc_nvrtc_load() != CUCORE_OK) {
    printf("NVRTC not loadable (%s): NVRTC outputs not checked\n", cucore_last_error());
    skip();
  }
  const char *src = "extern \"C\" __global__ void k(float *p, int n) { p[n] = 1.0f; }\n";
  struct {
    const char *opt;
    cucore_code_type want;
  } cases[] = {{"-arch=compute_80", CUCORE_CODE_PTX},
               {"-arch=sm_90", CUCORE_CODE_CUBIN},
               {"-dlto", CUCORE_CODE_LTOIR}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    nvrtcProgram prog;
    assert_int_equal(NVRTC(nvrtcCreateProgram)(&prog, src, "k.cu", 0, NULL, NULL), NVRTC_SUCCESS);
    const char *opts[] = {cases[i].opt, "-arch=sm_90"};
    int nopts = cases[i].want == CUCORE_CODE_LTOIR ? 2 : 1;
    assert_int_equal(NVRTC(nvrtcCompileProgram)(prog, nopts, opts), NVRTC_SUCCESS);
    size_t n = 0;
    char *buf = NULL;
    if (cases[i].want == CUCORE_CODE_PTX) {
      NVRTC(nvrtcGetPTXSize)(prog, &n);
      buf = malloc(n);
      NVRTC(nvrtcGetPTX)(prog, buf);
    } else if (cases[i].want == CUCORE_CODE_CUBIN) {
      NVRTC(nvrtcGetCUBINSize)(prog, &n);
      buf = malloc(n);
      NVRTC(nvrtcGetCUBIN)(prog, buf);
    } else {
      if (!NVRTC(nvrtcGetLTOIRSize)) skip();
      NVRTC(nvrtcGetLTOIRSize)(prog, &n);
      buf = malloc(n);
      NVRTC(nvrtcGetLTOIR)(prog, buf);
    }
    NVRTC(nvrtcDestroyProgram)(&prog);
    assert_int_equal(detect(buf, n), cases[i].want);
    cucore_binary *bin = NULL;
    cucore_status st = cucore_binary_open(buf, n, CUCORE_CODE_AUTO, 0, &bin);
    if (cases[i].want == CUCORE_CODE_LTOIR) {
      assert_status(st, CUCORE_NOT_SUPPORTED);
      assert_contains(cucore_last_error(), "ltoir");
      assert_null(bin);
    } else {
      assert_ok(st);
      const cucore_kernel_info *k;
      assert_ok(cucore_binary_find_kernel(bin, "k", &k));
      assert_int_equal(k->param_count, 2);
      assert_int_equal(k->params[0].size, sizeof(float *));
      assert_int_equal(k->params[1].size, sizeof(int));
      cucore_binary_destroy(bin);
    }
    free(buf);
  }
}

/* NVVM IR: bitcode and text from clang for nvptx64, and the bitcode wrapper. */
static void nvvm_ir(void **state) {
  (void)state;
  char *out = NULL;
  if (cucore_test_run("clang --version", &out) != 0) {
    free(out);
    printf("clang not found: NVVM IR made by clang not checked\n");
    skip();
  }
  free(out);
  const char *c = "__attribute__((used)) int twice(int x) { return 2 * x; }\n";
  char *src = rs_printf("%s/nvvm_src.c", rs_cache_dir());
  FILE *f = fopen(src, "w");
  fputs(c, f);
  fclose(f);
  char *bc = rs_printf("%s/nvvm.bc", rs_cache_dir()), *ll = rs_printf("%s/nvvm.ll", rs_cache_dir());
  char *cmd = rs_printf("clang --target=nvptx64-nvidia-cuda -c -emit-llvm -o '%s' '%s' && "
                        "clang --target=nvptx64-nvidia-cuda -S -emit-llvm -o '%s' '%s'",
                        bc, src, ll, src);
  if (cucore_test_run(cmd, &out) != 0) {
    printf("clang cannot target nvptx64 (%s): NVVM IR not checked\n", out ? out : "");
    free(out);
    skip();
  }
  free(out);
  size_t n;
  unsigned char *d = rs_read(bc, &n);
  assert_int_equal(detect(d, n), CUCORE_CODE_NVVM);
  /* The bitcode wrapper (LLVM's format: magic 0x0B17C0DE, version, offset, size, cpu type as
   * little-endian u32, then the bitcode). */
  unsigned char *w = malloc(n + 20);
  uint32_t hdr[5] = {0x0B17C0DEu, 0, 20, (uint32_t)n, 0};
  for (int i = 0; i < 5; i++)
    for (int b = 0; b < 4; b++) w[4 * i + b] = (unsigned char)(hdr[i] >> (8 * b));
  memcpy(w + 20, d, n);
  assert_int_equal(detect(w, n + 20), CUCORE_CODE_NVVM);
  cucore_binary *bin = (cucore_binary *)1;
  assert_status(cucore_binary_open(w, n + 20, CUCORE_CODE_AUTO, 0, &bin), CUCORE_NOT_SUPPORTED);
  assert_null(bin);
  assert_contains(cucore_last_error(), "nvvm");
  free(w);
  free(d);
  d = rs_read(ll, &n);
  assert_int_equal(detect(d, n), CUCORE_CODE_NVVM);
  free(d);
  free(cmd);
  free(ll);
  free(bc);
  free(src);
}

/* PTX however it begins: comments, blank lines, a byte-order mark, .target first, and the
 * NUL padding a fatbin leaves after it. */
static void ptx_openings(void **state) {
  (void)state;
  const char *body = ".version 8.0\n.target sm_80\n.address_size 64\n";
  const char *prefixes[] = {"",
                            "\n\n  \t\n",
                            "// comment\n",
                            "/* block\n comment */",
                            "\xef\xbb\xbf",
                            "//\n// Generated by hand\n//\n\n"};
  for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
    char *t = rs_printf("%s%s", prefixes[i], body);
    assert_int_equal(detect(t, strlen(t)), CUCORE_CODE_PTX);
    /* with NUL padding */
    size_t n = strlen(t);
    char *padded = calloc(n + 8, 1);
    memcpy(padded, t, n);
    assert_int_equal(detect(padded, n + 8), CUCORE_CODE_PTX);
    free(padded);
    free(t);
  }
  const char *target_first = "// no version\n.target sm_90\n";
  assert_int_equal(detect(target_first, strlen(target_first)), CUCORE_CODE_PTX);
  /* ".versions" is not ".version" */
  const char *almost = ".versions 8.0\n";
  cucore_code_type t;
  assert_status(cucore_code_type_detect(almost, strlen(almost), &t), CUCORE_INVALID_BINARY);
  const char *ll = "; ModuleID = 'x'\nsource_filename = \"x\"\n";
  assert_int_equal(detect(ll, strlen(ll)), CUCORE_CODE_NVVM);
  const char *ll2 = "target triple = \"nvptx64-nvidia-cuda\"\n";
  assert_int_equal(detect(ll2, strlen(ll2)), CUCORE_CODE_NVVM);
}

/* What is none of the known types: a clear status naming what was seen. */
static void unknown_inputs(void **state) {
  (void)state;
  cucore_code_type t = CUCORE_CODE_CUBIN;
  assert_status(cucore_code_type_detect("", 0, &t), CUCORE_INVALID_BINARY);
  assert_int_equal(t, CUCORE_CODE_AUTO);
  assert_contains(cucore_last_error(), "empty");
  cucore_binary *bin = (cucore_binary *)1;
  assert_status(cucore_binary_open("", 0, CUCORE_CODE_AUTO, 0, &bin), CUCORE_INVALID_BINARY);
  assert_null(bin);
  assert_status(cucore_binary_open("", 0, CUCORE_CODE_CUBIN, 0, &bin), CUCORE_INVALID_BINARY);
  /* binary junk: its first bytes are named */
  const unsigned char junk[] = {0xde, 0xad, 0xbe, 0xef, 0x01, 0x02, 0x03, 0x04, 0x05};
  assert_status(cucore_code_type_detect(junk, sizeof junk, &t), CUCORE_INVALID_BINARY);
  assert_contains(cucore_last_error(), "de ad be ef 01 02 03 04");
  /* CUDA C++ is not guessed */
  const char *cpp = "#include <cstdio>\n__global__ void k() {}\n";
  assert_status(cucore_code_type_detect(cpp, strlen(cpp), &t), CUCORE_INVALID_BINARY);
  assert_contains(cucore_last_error(), "CUCORE_CODE_CUDA_CPP");
  assert_contains(cucore_last_error(), "#include <cstdio>");
  assert_status(cucore_binary_open(cpp, strlen(cpp), CUCORE_CODE_CUDA_CPP, 0, &bin),
                CUCORE_NOT_SUPPORTED);
  assert_contains(cucore_last_error(), "compile");
  /* a host ELF with no device code: this test program itself */
  size_t n;
  unsigned char *self = rs_read("/proc/self/exe", &n);
  assert_status(cucore_code_type_detect(self, n, &t), CUCORE_INVALID_BINARY);
  assert_contains(cucore_last_error(), "no device code");
  assert_status(cucore_binary_open(self, n, CUCORE_CODE_CUBIN, 0, &bin), CUCORE_INVALID_BINARY);
  assert_contains(cucore_last_error(), "not EM_CUDA (190)");
  /* the wrong type given explicitly */
  assert_status(cucore_binary_open(self, n, CUCORE_CODE_PTX, 0, &bin), CUCORE_INVALID_BINARY);
  assert_contains(cucore_last_error(), "an ELF file");
  assert_status(cucore_binary_open(self, n, CUCORE_CODE_FATBIN, 0, &bin), CUCORE_INVALID_BINARY);
  assert_contains(cucore_last_error(), "container magic");
  free(self);
  /* a too-short ELF */
  assert_status(cucore_code_type_detect("\x7f"
                                        "ELF\2\1",
                                        6, &t),
                CUCORE_INVALID_BINARY);
  assert_contains(cucore_last_error(), "64");
  /* arguments */
  assert_status(cucore_code_type_detect(NULL, 4, &t), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_code_type_detect("x", 1, NULL), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_binary_open(NULL, 4, CUCORE_CODE_AUTO, 0, &bin), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_binary_open("x", 1, CUCORE_CODE_AUTO, 0, NULL), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_binary_open("x", 1, CUCORE_CODE_AUTO, -3, &bin), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "arch -3");
  assert_status(cucore_binary_open("x", 1, (cucore_code_type)77, 0, &bin), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_binary_open_file("/nonexistent/k.cubin", CUCORE_CODE_AUTO, 0, &bin),
                CUCORE_IO_ERROR);
  assert_contains(cucore_last_error(), "/nonexistent/k.cubin");
  assert_contains(cucore_last_error(), strerror(ENOENT));
  assert_int_equal(cucore_status_source(cucore_last_status()), CUCORE_SOURCE_ERRNO);
  assert_status(cucore_binary_open_file("/", CUCORE_CODE_AUTO, 0, &bin), CUCORE_IO_ERROR);
  assert_status(cucore_binary_open_file(NULL, CUCORE_CODE_AUTO, 0, &bin), CUCORE_INVALID_ARGUMENT);
  assert_ok(cucore_binary_destroy(NULL));
  cucore_binary_info info;
  assert_status(cucore_binary_get_info(NULL, &info), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_binary_attach_ptx(NULL, "", 0, NULL), CUCORE_INVALID_ARGUMENT);
}

/* Names of code types. */
static void code_type_names(void **state) {
  (void)state;
  assert_string_equal(cucore_code_type_name(CUCORE_CODE_CUBIN), "cubin");
  assert_string_equal(cucore_code_type_name(CUCORE_CODE_LTOIR), "ltoir");
  assert_string_equal(cucore_code_type_name((cucore_code_type)99), "unknown");
}

int main(void) {
  rs_require_tools();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(nvcc_outputs),   cmocka_unit_test(nvrtc_outputs),
      cmocka_unit_test(nvvm_ir),        cmocka_unit_test(ptx_openings),
      cmocka_unit_test(unknown_inputs), cmocka_unit_test(code_type_names),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
