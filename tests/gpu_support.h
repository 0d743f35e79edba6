/* gpu_support.h -- small helpers for GPU tests: compile a source and get a kernel. */
#ifndef CUCORE_GPU_SUPPORT_H
#define CUCORE_GPU_SUPPORT_H

#include "support.h"

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
    cucore_program_log(p, &log);
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

#endif
