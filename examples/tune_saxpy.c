/* tune_saxpy.c -- the autotuner as a library call: a search space (block size and elements
 * per thread), cucore_tune_run() with a bind callback and a progress line, every
 * configuration verified against the first and timed; then the report: the stages, the
 * winner and the time split. */
#include <string.h>

#include "common.h"

#define N (1 << 22)

static const char *source =
    "extern \"C\" __global__ void saxpy(float a, const float *x, float *y, int n) {\n"
    "  int i = (blockIdx.x * blockDim.x + threadIdx.x) * ITEMS;\n"
    "  for (int k = 0; k < ITEMS; k++)\n"
    "    if (i + k < n) y[i + k] = a * x[i + k] + y[i + k];\n"
    "}\n";

/* One configuration's arguments: the buffers at the pointers the tune gives. */
static cucore_status bind(void *user, cucore_object *obj, const char *symbol,
                          const cucore_devptr *ptrs, cucore_args *args) {
  (void)user, (void)obj, (void)symbol;
  cucore_status st = cucore_args_set_f32(args, 0, 3.0f);
  if (st == CUCORE_OK) st = cucore_args_set_ptr(args, 1, ptrs[0]);
  if (st == CUCORE_OK) st = cucore_args_set_ptr(args, 2, ptrs[1]);
  return st == CUCORE_OK ? cucore_args_set_i32(args, 3, N) : st;
}

static void progress(void *user, const cucore_tune_progress *p) {
  (void)user;
  if (!p->finished)
    printf("  [%zu/%zu] configuration %llu: %s\n", p->done, p->total, (unsigned long long)p->config,
           cucore_tune_result_name(p->status));
}

int main(void) {
  cucore_device_close(open_gpu_or_exit("tune_saxpy")); /* the tune opens its own */
  float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
  for (int i = 0; i < N; i++) x[i] = (float)i / N, y[i] = 1.0f;
  cucore_tune_space *space = NULL;
  CHECK(cucore_tune_space_create(&space));
  CHECK(cucore_tune_space_parse_param(space, "block_size_x=64,128,256,512,1024",
                                      CUCORE_TUNE_PARAM_AUTO));
  CHECK(cucore_tune_space_parse_param(space, "ITEMS=1,2,4", CUCORE_TUNE_PARAM_AUTO));
  CHECK(cucore_tune_space_set_expr(space, CUCORE_TUNE_PROBLEM_SIZE, "4194304"));
  CHECK(cucore_tune_space_set_expr(space, CUCORE_TUNE_GRID_DIV_X, "block_size_x, ITEMS"));
  CHECK(cucore_tune_space_set_kernel(space, "saxpy"));
  CHECK(cucore_tune_space_set_source(space, source, strlen(source)));

  cucore_tune_buffer buffers[2] = {{"x", CUCORE_TUNE_IN, CUCORE_TUNE_ELEM_FLOAT, sizeof(float), N,
                                    x},
                                   {"y", CUCORE_TUNE_INOUT, CUCORE_TUNE_ELEM_FLOAT, sizeof(float),
                                    N, y}};
  cucore_tune_run_options o = CUCORE_TUNE_RUN_DEFAULTS;
  o.fresh = 1;
  o.bind = bind;
  o.progress = progress;
  cucore_tune_report *report = NULL;
  CHECK(cucore_tune_run(space, NULL, buffers, 2, &o, &report));

  cucore_tune_summary s;
  CHECK(cucore_tune_report_get_summary(report, &s));
  printf("tune_saxpy: %llu configurations -> %llu runnable -> %llu compiles; %zu measured, "
         "%zu wrong\n",
         (unsigned long long)s.counts.raw, (unsigned long long)s.counts.runnable,
         (unsigned long long)s.counts.compiles, s.measured, s.wrong);
  int rc = 1;
  if (s.have_best) {
    cucore_tune_row best;
    char params[256];
    CHECK(cucore_tune_report_get_row(report, s.best, &best));
    CHECK(cucore_tune_space_get_config_text(space, best.config.index, CUCORE_TUNE_TEXT_PARAMS,
                                            params, sizeof params, NULL));
    printf("best: %s, %.4f ms (%zu ties); GPU busy %.2f s, compiles %.2f s; store %s\n", params,
           best.stats.median, s.ties, s.gpu_ms / 1000, s.compile_wall_ms / 1000, s.store_path);
    rc = 0;
  }
  cucore_tune_report_destroy(report);
  cucore_tune_space_destroy(space);
  free(x);
  free(y);
  return rc;
}
