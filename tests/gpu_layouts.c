/* gpu_layouts.c -- the offline reader against the driver, for every test kernel: parameter
 * offsets and sizes (cuKernelGetParamInfo) and attributes (cuKernelGetAttribute); and fatbin,
 * PTX, cubin and LTO-IR objects load and resolve their kernels (label gpu). */
#include "gpu_support.h"
#include "runtime/runtime.h" /* DRV(): the driver's own layout, asked directly */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static cucore_device *dev;
static int arch;

static int setup(void **state) {
  (void)state;
  cucore_device_props p;
  if (cucore_device_open(0, &dev) != CUCORE_OK || cucore_device_get_props(0, &p) != CUCORE_OK)
    return -1;
  arch = p.arch;
  return 0;
}

static int teardown(void **state) {
  (void)state;
  return cucore_device_close(dev) == CUCORE_OK ? 0 : -1;
}

static long compared, mismatched;

#define SAME(what, offline, driver)                                                  \
  do {                                                                               \
    compared++;                                                                      \
    if ((long long)(offline) != (long long)(driver)) {                               \
      mismatched++;                                                                  \
      print_message("MISMATCH %s %s: offline %lld, driver %lld\n", info->name, what, \
                    (long long)(offline), (long long)(driver));                      \
    }                                                                                \
  } while (0)

static void offline_layouts_equal_the_drivers(void **state) {
  (void)state;
  const char *files[] = {"params.cu", "big_params.cu", "launch_attrs.cu", "cluster.cu"};
  int kernels = 0;
  for (size_t f = 0; f < sizeof files / sizeof *files; f++) {
    if (strcmp(files[f], "cluster.cu") == 0 && arch < 90) continue;
    char *ptx = NULL;
    size_t ptx_size = 0;
    cucore_object *obj = nvcc_object(files[f], arch, &ptx, &ptx_size);
    if (!obj) skip();
    const void *code;
    size_t size;
    assert_ok(cucore_object_get_code(obj, NULL, &code, &size));
    cucore_binary *bin = NULL;
    assert_ok(cucore_binary_open(code, size, CUCORE_CODE_CUBIN, 0, &bin));
    if (ptx) assert_ok(cucore_binary_attach_ptx(bin, ptx, ptx_size, NULL));
    cucore_binary_info bi;
    assert_ok(cucore_binary_get_info(bin, &bi));
    for (uint32_t i = 0; i < bi.kernel_count; i++) {
      const cucore_kernel_info *info = NULL;
      assert_ok(cucore_binary_get_kernel(bin, i, &info));
      cucore_kernel *k = gpu_kernel(obj, info->name);
      /* The driver's layout, asked directly: under lazy loading cucore itself reads a cubin's
       * layout offline, so its kernel handle would compare the reader with itself. */
      void *ckernel = NULL;
      assert_ok(cucore_kernel_get_native(k, dev, &ckernel, NULL));
      int n = 0;
      for (;; n++) {
        size_t off = 0, sz = 0;
        CUresult r = DRV(cuKernelGetParamInfo)((CUkernel)ckernel, (size_t)n, &off, &sz);
        if (r == CUDA_ERROR_INVALID_VALUE) break;
        assert_int_equal(r, CUDA_SUCCESS);
        if ((uint32_t)n >= info->param_count) continue;
        char what[64];
        snprintf(what, sizeof what, "param %d offset", n);
        SAME(what, info->params[n].offset, off);
        snprintf(what, sizeof what, "param %d size", n);
        SAME(what, info->params[n].size, sz);
      }
      SAME("parameter count", info->param_count, n);
      int cn = 0; /* and cucore's handle agrees with both */
      assert_ok(cucore_kernel_get_param_count(k, &cn));
      SAME("cucore's parameter count", n, cn);
      int v = 0;
      assert_ok(cucore_kernel_get_attribute(k, dev, CUCORE_KATTR_NUM_REGS, &v));
      SAME("registers", info->registers, v);
      assert_ok(cucore_kernel_get_attribute(k, dev, CUCORE_KATTR_SHARED_SIZE_BYTES, &v));
      SAME("static shared bytes", info->static_shared_bytes, v);
      assert_ok(cucore_kernel_get_attribute(k, dev, CUCORE_KATTR_LOCAL_SIZE_BYTES, &v));
      SAME("local bytes", info->local_bytes, v);
      assert_ok(cucore_kernel_get_attribute(k, dev, CUCORE_KATTR_CONST_SIZE_BYTES, &v));
      SAME("user constant bytes", info->user_const_bytes, v);
      assert_ok(cucore_kernel_get_attribute(k, dev, CUCORE_KATTR_MAX_THREADS_PER_BLOCK, &v));
      SAME("max threads per block", info->max_threads_per_block, v);
      const cucore_kernel_attr cl[3] = {CUCORE_KATTR_REQUIRED_CLUSTER_WIDTH,
                                        CUCORE_KATTR_REQUIRED_CLUSTER_HEIGHT,
                                        CUCORE_KATTR_REQUIRED_CLUSTER_DEPTH};
      for (int c = 0; c < 3; c++) {
        assert_ok(cucore_kernel_get_attribute(k, dev, cl[c], &v));
        SAME("required cluster dimension", info->cluster_dims[c], v);
      }
      assert_ok(cucore_kernel_get_attribute(k, dev, CUCORE_KATTR_BINARY_VERSION, &v));
      SAME("binary version (arch)", bi.arch, v);
      kernels++;
      cucore_kernel_destroy(k);
    }
    cucore_binary_destroy(bin);
    cucore_object_destroy(obj);
    free(ptx);
  }
  print_message("offline reader vs driver: %d kernels, %ld values compared, %ld mismatches\n",
                kernels, compared, mismatched);
  assert_true(kernels >= 20);
  assert_int_equal(mismatched, 0);
}

/* A fatbin built by nvcc (cubins for two arches and PTX), PTX, cubin and linked LTO-IR all load
 * and hand out their kernels. */
static void every_code_type_loads(void **state) {
  (void)state;
  char *out = NULL;
  char cmd[1024];
  const char *tmp = CUCORE_TEST_BINARY_DIR;
  snprintf(cmd, sizeof cmd,
           "nvcc -fatbin -gencode arch=compute_%d,code=sm_%d -gencode arch=compute_80,code=sm_80 "
           "-gencode arch=compute_%d,code=compute_%d %s/params.cu -o %s/params.fatbin",
           arch, arch, arch, arch, CUCORE_TEST_KERNEL_DIR, tmp);
  int rc = cucore_test_run(cmd, &out);
  if (rc != 0) {
    print_message("nvcc not usable here (%s); fatbin from nvcc not checked\n", out ? out : "?");
  } else {
    char path[512];
    snprintf(path, sizeof path, "%s/params.fatbin", tmp);
    cucore_object *obj = NULL;
    assert_ok(cucore_object_from_file(path, CUCORE_CODE_AUTO, &obj));
    cucore_code_type t;
    assert_ok(cucore_object_get_code(obj, &t, NULL, NULL));
    assert_int_equal(t, CUCORE_CODE_FATBIN);
    int count = 0;
    assert_ok(cucore_object_get_kernel_count(obj, &count));
    assert_true(count > 5);
    const char *name = NULL;
    assert_ok(cucore_object_get_kernel_name(obj, 0, &name));
    cucore_kernel *k = gpu_kernel(obj, name);
    print_message("fatbin from nvcc: %d kernels, first `%s`\n", count, name);
    cucore_kernel_destroy(k);
    cucore_object_destroy(obj);
  }
  free(out);
  const cucore_code_type types[] = {CUCORE_CODE_PTX, CUCORE_CODE_CUBIN, CUCORE_CODE_LTOIR};
  for (int i = 0; i < 3; i++) {
    cucore_object *obj = gpu_compile("extern \"C\" __global__ void k1(int *p) { *p = 1; }\n"
                                     "extern \"C\" __global__ void k2(float *p) { *p = 2; }\n",
                                     types[i], NULL, NULL);
    int count = 0;
    assert_ok(cucore_object_get_kernel_count(obj, &count));
    assert_int_equal(count, 2);
    cucore_kernel *k = gpu_kernel(obj, "k2");
    cucore_kernel_destroy(k);
    cucore_object_destroy(obj);
  }
}

int main(void) {
  if (!cucore_test_have_gpu()) return CUCORE_TEST_SKIP;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(offline_layouts_equal_the_drivers),
      cmocka_unit_test(every_code_type_loads),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
