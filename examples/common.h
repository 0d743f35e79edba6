/* common.h -- what every example shares: fail loudly with cucore's message. */
#ifndef EXAMPLES_COMMON_H
#define EXAMPLES_COMMON_H

#include <cucore.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(call)                                                              \
  do {                                                                           \
    cucore_status st_ = (call);                                                  \
    if (st_ != CUCORE_OK) {                                                      \
      fprintf(stderr, "%s:%d: %s failed: %s\n  %s\n", __FILE__, __LINE__, #call, \
              cucore_status_name(st_), cucore_last_error());                     \
      exit(1);                                                                   \
    }                                                                            \
  } while (0)

/* Opens GPU 0, or exits 0 saying why there is nothing to run here. */
static inline cucore_device *open_gpu_or_exit(const char *example) {
  int n = 0;
  if (cucore_device_get_count(&n) != CUCORE_OK || n == 0) {
    printf("%s: no GPU here (%s); nothing to run\n", example,
           n == 0 && cucore_last_error()[0] == 0 ? "no device" : cucore_last_error());
    exit(0);
  }
  cucore_device *dev = NULL;
  CHECK(cucore_device_open(0, &dev));
  return dev;
}

/* Compiles CUDA C++ for the current GPU, printing the compiler log on failure. */
static inline cucore_object *compile_cuda(const char *src, const char *const *name_exprs) {
  cucore_program *prog = NULL;
  CHECK(cucore_program_create(CUCORE_CODE_CUDA_CPP, src, 0, "example.cu", NULL, &prog));
  for (int i = 0; name_exprs && name_exprs[i]; i++)
    CHECK(cucore_program_add_name_expression(prog, name_exprs[i]));
  cucore_object *obj = NULL;
  cucore_status st = cucore_program_compile(prog, CUCORE_CODE_CUBIN, &obj);
  if (st != CUCORE_OK) {
    const char *log = "";
    cucore_program_get_log(prog, &log);
    fprintf(stderr, "compile failed: %s\n%s\n", cucore_last_error(), log);
    exit(1);
  }
  cucore_program_destroy(prog);
  return obj;
}

#endif
