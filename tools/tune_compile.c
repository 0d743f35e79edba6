/* tune_compile.c -- `cucore tune`'s compile stage: each distinct compile among the runnable
 * configurations (launch-only parameters never make one) is compiled once, to a cubin for the
 * exact arch, through the compile cache, by N worker threads; its registers, shared and local
 * memory are read from the cubin, and the host occupancy model gives every configuration its
 * verdict and score. A compile that fails is recorded with its first line, never the end. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune.h"

typedef struct tune_group {
  uint64_t hash;
  uint64_t index; /* a configuration of the group (its defines and kernel name) */
  int ok, cache_hit;
  cucore_kernel_resources res;
  int local_bytes;
  double ms;
  char error[200];
} tune_group;

typedef struct work {
  tune_ctx *ctx;
  tune_group *groups;
  size_t ngroups;
  atomic_size_t next;
} work;

static int by_hash(const void *a, const void *b) {
  uint64_t x = ((const tune_group *)a)->hash, y = ((const tune_group *)b)->hash;
  return x < y ? -1 : x > y;
}

static void set_error(tune_group *g, const char *what, const char *msg) {
  size_t n = strcspn(msg, "\n");
  snprintf(g->error, sizeof g->error, "%s: %.*s", what, (int)(n > 150 ? 150 : n), msg);
}

/* The compile's options: the command's, the arch, and the configuration's defines. */
static cucore_status options_for(tune_ctx *c, uint64_t index, cucore_options **out) {
  char defines[4096], arch[16];
  cucore_status st = cucore_options_copy(c->src->opts, out);
  snprintf(arch, sizeof arch, "sm_%d", c->arch);
  if (st == CUCORE_OK) st = cucore_options_set_string(*out, CUCORE_OPT_ARCH, arch);
  if (st == CUCORE_OK)
    st = cucore_tune_space_config_text(c->space, index, CUCORE_TUNE_TEXT_DEFINES, defines,
                                       sizeof defines, NULL);
  for (char *d = defines; st == CUCORE_OK && *d;) {
    size_t n = strcspn(d, "\n");
    char end = d[n];
    d[n] = 0;
    int used = 0;
    st = cucore_options_parse(*out, d, NULL, &used);
    d += n + (end != 0);
  }
  return st;
}

/* Registers, shared and local memory of `kernel` in the cubin of `obj`. */
static int read_resources(cucore_object *obj, const char *kernel, int arch, tune_group *g) {
  const char *symbol = kernel;
  const void *code = NULL;
  size_t size = 0;
  cucore_code_type type;
  cucore_object_lowered_name(obj, kernel, &symbol);
  cucore_object_code(obj, &type, &code, &size);
  cucore_binary *bin = NULL;
  const cucore_kernel_info *k = NULL;
  cucore_status st = cucore_binary_open(code, size, type, arch, &bin);
  if (st == CUCORE_OK) st = cucore_binary_find_kernel(bin, symbol ? symbol : kernel, &k);
  if (st != CUCORE_OK) {
    set_error(g, "reading the cubin", cucore_last_error());
    cucore_binary_destroy(bin);
    return -1;
  }
  cucore_kernel_resources r = CUCORE_KERNEL_RESOURCES_INIT;
  r.registers = k->registers;
  r.static_shared_bytes = k->static_shared_bytes;
  r.max_threads_per_block = k->max_threads_per_block > 0 ? k->max_threads_per_block : 0;
  r.barriers = k->barriers > 0 ? k->barriers : -1;
  g->res = r;
  g->local_bytes = k->local_bytes > 0 ? k->local_bytes : 0;
  cucore_binary_destroy(bin);
  return 0;
}

static void compile_group(tune_ctx *c, tune_group *g) {
  char kernel[1024];
  cucore_options *opts = NULL;
  cucore_program *prog = NULL;
  cucore_object *obj = NULL;
  cucore_status st = cucore_tune_space_config_text(c->space, g->index, CUCORE_TUNE_TEXT_KERNEL,
                                                   kernel, sizeof kernel, NULL);
  if (st == CUCORE_OK) st = options_for(c, g->index, &opts);
  if (st == CUCORE_OK)
    st = cucore_program_create(CUCORE_CODE_CUDA_CPP, c->source, c->source_size,
                               c->line->file, opts, &prog);
  if (st == CUCORE_OK) st = cucore_program_add_name_expression(prog, kernel);
  double t0 = cli_now_ms();
  if (st == CUCORE_OK) st = cucore_program_compile(prog, CUCORE_CODE_CUBIN, &obj);
  g->ms = cli_now_ms() - t0;
  const char *log = "";
  if (prog) cucore_program_log(prog, &log);
  cucore_cache_info info;
  if (prog && cucore_program_cache_info(prog, &info) == CUCORE_OK)
    g->cache_hit =
        info.result == CUCORE_CACHE_HIT_DISK || info.result == CUCORE_CACHE_HIT_MEMORY;
  if (st != CUCORE_OK) set_error(g, "compile error", *log ? log : cucore_last_error());
  else g->ok = read_resources(obj, kernel, c->arch, g) == 0;
  cucore_object_destroy(obj);
  cucore_program_destroy(prog);
  cucore_options_destroy(opts);
}

static void *worker(void *arg) {
  work *w = arg;
  for (;;) {
    size_t i = atomic_fetch_add(&w->next, 1);
    if (i >= w->ngroups) return NULL;
    compile_group(w->ctx, &w->groups[i]);
  }
}

static void run_workers(work *w, int jobs) {
  pthread_t th[256];
  int started = 0;
  for (int i = 1; i < jobs && i < 256; i++)
    if (pthread_create(&th[started], NULL, worker, w) == 0) started++;
  worker(w); /* this thread works too */
  for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
}

/* The distinct compiles of the runnable rows, sorted by hash. */
static tune_group *collect(tune_ctx *c, size_t *n) {
  tune_group *g = calloc(c->nrows ? c->nrows : 1, sizeof *g);
  *n = 0;
  if (!g) return NULL;
  for (size_t i = 0; i < c->nrows; i++)
    if (c->rows[i].cfg.verdict == CUCORE_TUNE_RUNNABLE) {
      g[*n].hash = c->rows[i].cfg.compile_hash;
      g[(*n)++].index = c->rows[i].cfg.index;
    }
  qsort(g, *n, sizeof *g, by_hash);
  size_t u = 0;
  for (size_t i = 0; i < *n; i++)
    if (u == 0 || g[u - 1].hash != g[i].hash) g[u++] = g[i];
  *n = u;
  return g;
}

static void apply_model(tune_ctx *c, const tune_group *groups, size_t n) {
  cucore_tune_filter f = {c->line->min_occupancy, c->line->no_spills};
  for (size_t i = 0; i < c->nrows; i++) {
    tune_row *r = &c->rows[i];
    if (r->cfg.verdict != CUCORE_TUNE_RUNNABLE) continue;
    tune_group key = {.hash = r->cfg.compile_hash};
    const tune_group *g = bsearch(&key, groups, n, sizeof key, by_hash);
    r->compile_ms = g->ms;
    r->cache_hit = g->cache_hit;
    if (!g->ok) {
      snprintf(r->error, sizeof r->error, "%s", g->error);
      continue;
    }
    r->compiled = 1;
    r->registers = g->res.registers;
    r->static_shared = g->res.static_shared_bytes;
    r->local_bytes = g->local_bytes;
    cucore_tune_model_check(&c->limits, &g->res, g->local_bytes, &f, &r->cfg, &r->model);
    c->model_rejected += r->cfg.verdict == CUCORE_TUNE_MODEL_REJECTED;
  }
}

int tune_compile_all(tune_ctx *c) {
  size_t n = 0;
  tune_group *groups = collect(c, &n);
  if (!groups) return cli_fail("tune", "compiles", CUCORE_HOST_OUT_OF_MEMORY);
  work w = {c, groups, n, 0};
  double t0 = cli_now_ms();
  run_workers(&w, c->jobs);
  c->compile_wall_ms = cli_now_ms() - t0;
  c->compiles = n;
  for (size_t i = 0; i < n; i++) {
    c->compile_failures += !groups[i].ok;
    c->cache_hits += (size_t)groups[i].cache_hit;
  }
  apply_model(c, groups, n);
  free(groups);
  return 0;
}
