/* tune_compile.c -- `cucore tune`'s compile stage: each distinct compile among the runnable
 * configurations (launch-only parameters never make one) is compiled once, to a cubin for the
 * exact arch, through the compile cache, by N threads each driving a compile process
 * (tune_worker.c); its registers, shared and local
 * memory are read from the cubin, and the host occupancy model gives every configuration its
 * verdict and score. A compile that fails is recorded with its first line, never the end. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune.h"

struct tune_pipe {
  tune_ctx *ctx;
  atomic_size_t next; /* the next group a worker takes */
  pthread_mutex_t mu;
  pthread_cond_t cv;
  size_t *ready; /* finished groups, in the order they finished */
  size_t nready, taken;
  pthread_t th[256];
  int started;
  double t0;
};

static int by_hash(const void *a, const void *b) {
  uint64_t x = ((const tune_group *)a)->hash, y = ((const tune_group *)b)->hash;
  return x < y ? -1 : x > y;
}

static void set_error(tune_group *g, const char *what, const char *msg) {
  size_t n = strcspn(msg, "\n");
  snprintf(g->error, sizeof g->error, "%s: %.*s", what, (int)(n > 150 ? 150 : n), msg);
}

/* Registers, shared and local memory of the group's kernel (g->symbol) in its cubin. */
static int read_resources(const unsigned char *cubin, size_t size, int arch, tune_group *g) {
  cucore_binary *bin = NULL;
  const cucore_kernel_info *k = NULL;
  cucore_status st = cucore_binary_open(cubin, size, CUCORE_CODE_CUBIN, arch, &bin);
  if (st == CUCORE_OK) st = cucore_binary_find_kernel(bin, g->symbol, &k);
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

/* Group g compiled by worker process w (tune_worker.c); its resources read, its object kept
 * for measuring. */
static void compile_group(tune_ctx *c, tune_worker *w, tune_group *g) {
  char kernel[1024], defines[4096];
  unsigned char *cubin = NULL;
  size_t size = 0;
  cucore_status st = cucore_tune_space_get_config_text(c->space, g->index, CUCORE_TUNE_TEXT_KERNEL,
                                                       kernel, sizeof kernel, NULL);
  if (st == CUCORE_OK)
    st = cucore_tune_space_get_config_text(c->space, g->index, CUCORE_TUNE_TEXT_DEFINES, defines,
                                           sizeof defines, NULL);
  if (st != CUCORE_OK) {
    set_error(g, "compile error", cucore_last_error());
    return;
  }
  if (tune_worker_compile(w, c, g, kernel, defines, &cubin, &size) == 0)
    g->ok = read_resources(cubin, size, c->arch, g) == 0;
  if (g->ok && c->keep_objects &&
      cucore_object_from_memory(cubin, size, CUCORE_CODE_CUBIN, kernel, &g->obj) != CUCORE_OK) {
    set_error(g, "keeping the cubin", cucore_last_error());
    g->ok = 0;
  }
  free(cubin);
}

static void *worker(void *arg) {
  tune_pipe *p = arg;
  tune_worker *w = tune_worker_new();
  for (;;) {
    size_t i = atomic_fetch_add(&p->next, 1);
    if (i >= p->ctx->ngroups) break;
    tune_group *g = &p->ctx->groups[i];
    if (w && !g->deferred) compile_group(p->ctx, w, g);
    if (!w) set_error(g, "compile error", "out of host memory for a compile process");
    pthread_mutex_lock(&p->mu);
    p->ready[p->nready++] = i;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
  }
  tune_worker_free(w);
  return NULL;
}

/* A group whose every configuration came from the store is not compiled (a resumed tune
 * compiles nothing) unless a finalist needs it (tune_compile_now). Model-first orders by the
 * model's verdicts, so it compiles everything. */
static void mark_deferred(tune_ctx *c, tune_group *g, size_t n) {
  int order_by_model = c->line->model_first || c->line->top_fraction > 0;
  for (size_t i = 0; i < n; i++) g[i].deferred = !order_by_model;
  for (size_t i = 0; i < c->nrows && !order_by_model; i++) {
    const tune_row *r = &c->rows[i];
    if (r->cfg.verdict != CUCORE_TUNE_RUNNABLE || r->resumed) continue;
    tune_group key = {.hash = r->cfg.compile_hash};
    tune_group *x = bsearch(&key, g, n, sizeof key, by_hash);
    if (x) x->deferred = 0;
  }
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
  mark_deferred(c, g, u);
  return g;
}

/* The occupancy model on every runnable row of group `g`. */
static void apply_model(tune_ctx *c, const tune_group *g) {
  cucore_tune_filter f = {c->line->min_occupancy, c->line->no_spills};
  for (size_t i = 0; i < c->nrows; i++) {
    tune_row *r = &c->rows[i];
    if (r->cfg.verdict != CUCORE_TUNE_RUNNABLE || r->cfg.compile_hash != g->hash) continue;
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

int tune_compile_start(tune_ctx *c) {
  size_t n = 0;
  c->groups = collect(c, &n);
  c->ngroups = n;
  tune_pipe *p = calloc(1, sizeof *p);
  size_t *ready = calloc(n ? n : 1, sizeof *ready);
  if (!c->groups || !p || !ready) {
    free(p), free(ready);
    return cli_fail("tune", "compiles", CUCORE_HOST_OUT_OF_MEMORY);
  }
  p->ctx = c;
  p->ready = ready;
  atomic_init(&p->next, 0);
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->cv, NULL);
  p->t0 = cli_now_ms();
  c->pipe = p;
  for (int i = 0; i < c->jobs && i < 256; i++)
    if (pthread_create(&p->th[p->started], NULL, worker, p) == 0) p->started++;
  if (!p->started) worker(p); /* no thread could start: compile here */
  return 0;
}

/* A compiled group counted: compiles, failures, cache hits. */
static void count_compile(tune_ctx *c, const tune_group *g) {
  c->compiles++;
  c->compile_failures += !g->ok;
  c->cache_hits += (size_t)g->cache_hit;
}

tune_group *tune_compile_next(tune_ctx *c) {
  tune_pipe *p = c->pipe;
  pthread_mutex_lock(&p->mu);
  while (p->taken < c->ngroups && p->taken == p->nready) pthread_cond_wait(&p->cv, &p->mu);
  size_t i = p->taken < c->ngroups ? p->ready[p->taken++] : (size_t)-1;
  if (p->taken == c->ngroups && i != (size_t)-1) c->compile_wall_ms = cli_now_ms() - p->t0;
  pthread_mutex_unlock(&p->mu);
  if (i == (size_t)-1) return NULL;
  tune_group *g = &c->groups[i];
  if (!g->deferred) {
    count_compile(c, g);
    apply_model(c, g);
  }
  return g;
}

int tune_compile_now(tune_ctx *c, tune_group *g) {
  if (!g->deferred) return g->ok ? 0 : -1;
  tune_worker *w = tune_worker_new();
  if (w) compile_group(c, w, g);
  tune_worker_free(w);
  g->deferred = 0;
  count_compile(c, g); /* its rows came from the store: their verdicts stand */
  return g->ok ? 0 : -1;
}

void tune_compile_finish(tune_ctx *c) {
  tune_pipe *p = c->pipe;
  if (p) {
    for (int i = 0; i < p->started; i++) pthread_join(p->th[i], NULL);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    free(p->ready);
    free(p);
  }
  c->pipe = NULL;
  for (size_t i = 0; c->groups && i < c->ngroups; i++) cucore_object_destroy(c->groups[i].obj);
  free(c->groups);
  c->groups = NULL;
}

int tune_compile_all(tune_ctx *c) {
  int rc = tune_compile_start(c);
  while (!rc && tune_compile_next(c)) {}
  tune_compile_finish(c);
  return rc;
}
