/* gpu_support.h -- small helpers for GPU tests: compile a source and get a kernel. */
#ifndef CUCORE_GPU_SUPPORT_H
#define CUCORE_GPU_SUPPORT_H

#include "support.h"

#include <stdio.h>
#include <stdlib.h>

/* Compiles CUDA C++ `src` to `target` for the current GPU, registering `exprs` (NULL-
 * terminated, may be NULL); fails the test on error. */
static inline cucore_object *gpu_compile(const char *src, cucore_code_type target,
                                         const char *const *exprs, const char *const *flags) {
  cucore_options *o = NULL;
  cucore_program *p = NULL;
  cucore_object *obj = NULL;
  if (cucore_options_create(&o) != CUCORE_OK) fail_msg("options: %s", cucore_last_error());
  for (int i = 0; flags && flags[i]; i++) {
    int used = 0;
    if (cucore_options_parse(o, flags[i], flags[i + 1], &used) != CUCORE_OK)
      fail_msg("option %s: %s", flags[i], cucore_last_error());
    i += used - 1;
  }
  if (cucore_program_create(CUCORE_CODE_CUDA_CPP, src, 0, "test.cu", o, &p) != CUCORE_OK)
    fail_msg("program: %s", cucore_last_error());
  for (int i = 0; exprs && exprs[i]; i++) cucore_program_add_name_expression(p, exprs[i]);
  if (cucore_program_compile(p, target, &obj) != CUCORE_OK) {
    const char *log = "";
    cucore_program_get_log(p, &log);
    fail_msg("compile: %s\n%s", cucore_last_error(), log);
  }
  cucore_program_destroy(p);
  cucore_options_destroy(o);
  return obj;
}

static inline cucore_kernel *gpu_kernel(cucore_object *obj, const char *name) {
  cucore_kernel *k = NULL;
  if (cucore_object_get_kernel(obj, name, &k) != CUCORE_OK)
    fail_msg("kernel %s: %s", name, cucore_last_error());
  return k;
}

/* A test group's device 0, a non-blocking stream on it and `src` compiled to a cubin: 0, or -1
 * when any fails (cmocka's group setup). gpu_group_close undoes it: 0, or -1. */
static inline int gpu_group_open(const char *src, cucore_device **dev, cucore_stream **s,
                                 cucore_object **obj) {
  if (cucore_device_open(0, dev) != CUCORE_OK) return -1;
  if (cucore_stream_create(*dev, CUCORE_STREAM_NON_BLOCKING, 0, s) != CUCORE_OK) return -1;
  *obj = gpu_compile(src, CUCORE_CODE_CUBIN, NULL, NULL);
  return *obj ? 0 : -1;
}
static inline int gpu_group_close(cucore_device *dev, cucore_stream *s, cucore_object *obj) {
  cucore_object_destroy(obj);
  cucore_stream_destroy(s);
  return cucore_device_close(dev) == CUCORE_OK ? 0 : -1;
}

/* Builds `file` of tests/kernels with nvcc into a cubin (and its PTX) for sm_<arch>, and loads
 * the cubin as an object. Returns NULL (after saying why) when nvcc is not usable. */
static inline cucore_object *nvcc_object(const char *file, int arch, char **ptx, size_t *ptx_size) {
  char cmd[2048], *out = NULL;
  snprintf(
      cmd, sizeof cmd,
      "nvcc -cubin -arch=sm_%d %s/%s -o %s/%s.cubin && nvcc -ptx -arch=sm_%d %s/%s -o %s/%s.ptx",
      arch, CUCORE_TEST_KERNEL_DIR, file, CUCORE_TEST_BINARY_DIR, file, arch,
      CUCORE_TEST_KERNEL_DIR, file, CUCORE_TEST_BINARY_DIR, file);
  if (cucore_test_run(cmd, &out) != 0) {
    print_message("nvcc could not build %s: %s\n", file, out ? out : "?");
    free(out);
    return NULL;
  }
  free(out);
  char path[1024];
  snprintf(path, sizeof path, "%s/%s.ptx", CUCORE_TEST_BINARY_DIR, file);
  *ptx = cucore_test_read_file(path, ptx_size);
  snprintf(path, sizeof path, "%s/%s.cubin", CUCORE_TEST_BINARY_DIR, file);
  cucore_object *obj = NULL;
  if (cucore_object_from_file(path, CUCORE_CODE_AUTO, &obj) != CUCORE_OK)
    fail_msg("%s: %s", path, cucore_last_error());
  return obj;
}

#endif
