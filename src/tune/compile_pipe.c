/* compile_pipe.c -- the compile stage of cucore_tune_run(): each distinct compile among the
 * runnable configurations (launch-only parameters never make one) is a group, compiled once,
 * to a cubin for the exact arch, by `jobs` threads (compile_group.c); the host occupancy model
 * gives every configuration of a finished group its verdict and score. Finished groups are
 * handed to the GPU thread (or the dry run) in the order they finish. A group whose every
 * configuration came from the store is deferred: compiled only when a finalist needs it. */
#include "tune/compiles.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* qsort's and bsearch's order of groups by hash. */
static int by_hash(const void *a, const void *b) {
  uint64_t x = ((const cc_tgroup *)a)->hash, y = ((const cc_tgroup *)b)->hash;
  return x < y ? -1 : x > y;
}

cucore_status cc_tcomp_init(cc_trun *c) {
  c->comp = cc_calloc(1, sizeof *c->comp, "cucore_tune_run: the compiles' state");
  return c->comp ? CUCORE_OK : cucore_last_status();
}

cc_tgroup *cc_tcomp_group_of(const cc_trun *c, const cucore_tune_row *r) {
  cc_tgroup key = {.hash = r->config.compile_hash};
  const cc_tcomp *t = c->comp;
  return t->groups ? bsearch(&key, t->groups, t->ngroups, sizeof key, by_hash) : NULL;
}

size_t cc_tcomp_count(const cc_trun *c) { return c->comp->ngroups; }

cucore_status cc_tcomp_kernel_found(const cc_trun *c) {
  const char *missing = c->comp->kernel_missing;
  return missing ? cc_fail(CUCORE_NOT_FOUND, "%s", missing) : CUCORE_OK;
}

static void *worker(void *arg) {
  cc_tcomp_pipe *p = arg;
  cc_trun *c = p->ctx;
  int slot = atomic_fetch_add(&p->slots, 1);
  for (;;) {
    size_t i = atomic_fetch_add(&p->next, 1);
    if (i >= c->comp->ngroups) break;
    cc_tgroup *g = &c->comp->groups[i];
    if (!g->deferred) cc_tcomp_compile_group(c, slot, g, cc_tcomp_wait_verdict(p, i));
    pthread_mutex_lock(&p->mu);
    p->last_done_ms = cc_trun_now_ms() - p->t0;
    p->ready[p->nready++] = i;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
  }
  if (c->o.compile) { /* the slot is done: the compiler may let go of what it holds */
    cucore_tune_compile_request q = {.slot = slot, .arch = c->s.limits.arch};
    cucore_tune_compile_result r;
    c->o.compile(c->o.user, &q, &r);
  }
  return NULL;
}

/* A group whose every configuration came from the store is not compiled (a resumed tune
 * compiles nothing) unless a finalist needs it (cc_tcomp_now). Model-first orders by the
 * model's verdicts, so it compiles everything. A shard (shard_count > 1, a plain tune) leaves
 * the other shards' groups (by position in hash order, modulo the count) deferred too: they
 * are compiled here only when taken over. A report-only tune compiles nothing. */
static void mark_deferred(cc_trun *c, cc_tgroup *g, size_t n) {
  int order_by_model = c->o.model_first || c->o.top_fraction > 0;
  int shards = c->o.shard_count > 1 && !order_by_model && !c->o.max_evals;
  for (size_t i = 0; i < n; i++) {
    g[i].deferred = !order_by_model || c->o.report_only;
    g[i].foreign = shards && i % c->o.shard_count != c->o.shard_index;
  }
  for (size_t i = c->round_first; i < c->s.rows && !order_by_model && !c->o.report_only; i++) {
    const cucore_tune_row *r = &c->rows[i];
    if (r->config.verdict != CUCORE_TUNE_RUNNABLE || r->resumed) continue;
    cc_tgroup key = {.hash = r->config.compile_hash};
    cc_tgroup *x = bsearch(&key, g, n, sizeof key, by_hash);
    if (x && !x->foreign) x->deferred = 0;
  }
}

/* The distinct compiles of the runnable rows, sorted by hash (the room's groups). */
static cucore_status collect(cc_trun *c) {
  cc_tgroup *g = cc_calloc(c->s.rows ? c->s.rows : 1, sizeof *g, "cucore_tune_run: compiles");
  if (!g) return cucore_last_status();
  size_t n = 0;
  for (size_t i = 0; i < c->s.rows; i++)
    if (c->rows[i].config.verdict == CUCORE_TUNE_RUNNABLE) {
      g[n].hash = c->rows[i].config.compile_hash;
      g[n++].index = c->rows[i].config.index;
    }
  qsort(g, n, sizeof *g, by_hash);
  size_t u = 0;
  for (size_t i = 0; i < n; i++)
    if (u == 0 || g[u - 1].hash != g[i].hash) g[u++] = g[i];
  mark_deferred(c, g, u);
  c->comp->groups = g;
  c->comp->ngroups = u;
  return CUCORE_OK;
}

/* The occupancy model on every runnable row of group `g`. */
static void apply_model(cc_trun *c, const cc_tgroup *g) {
  cucore_tune_filter f = {c->o.min_occupancy, c->o.no_spills};
  for (size_t i = c->round_first; i < c->s.rows; i++) {
    cucore_tune_row *r = &c->rows[i];
    if (r->config.verdict != CUCORE_TUNE_RUNNABLE || r->config.compile_hash != g->hash) continue;
    r->compile_ms = g->ms;
    r->cache_hit = g->cache_hit;
    if (!g->ok) {
      cc_trun_text(&r->error, "%s", g->error ? g->error : "compile error");
      r->compile_timed_out = g->timed_out;
      continue;
    }
    r->compiled = 1;
    r->registers = g->res.registers;
    r->static_shared = g->res.static_shared_bytes;
    r->local_bytes = g->local_bytes;
    cucore_tune_model_check(&c->s.limits, &g->res, g->local_bytes, &f, &r->config, &r->model);
    c->s.model_rejected += r->config.verdict == CUCORE_TUNE_MODEL_REJECTED;
  }
}

cucore_status cc_tcomp_start(cc_trun *c, int keep_objects) {
  cc_tcomp *t = c->comp;
  t->keep_objects = keep_objects;
  cucore_status st = collect(c);
  if (st != CUCORE_OK) return st;
  cc_tcomp_pipe *p = cc_calloc(1, sizeof *p, "cucore_tune_run: the compile pipeline");
  size_t *ready = cc_calloc(t->ngroups ? t->ngroups : 1, sizeof *ready,
                            "cucore_tune_run: compiles");
  if (!p || !ready) {
    free(p), free(ready);
    return cucore_last_status();
  }
  p->ctx = c;
  p->ready = ready;
  atomic_init(&p->next, 0);
  atomic_init(&p->slots, 0);
  p->check_index = cc_tcomp_next_compiled(c, 0);
  atomic_init(&p->minimal, c->o.nvrtc_minimal && p->check_index < t->ngroups ? 0 : -1);
  pthread_cond_init(&p->verdict, NULL);
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->cv, NULL);
  p->t0 = cc_trun_now_ms();
  t->pipe = p;
  for (int i = 0; i < c->s.jobs && i < CC_TCOMP_MAX_JOBS; i++)
    if (pthread_create(&p->th[p->started], NULL, worker, p) == 0) p->started++;
  if (!p->started) worker(p); /* no thread could start: compile here */
  return CUCORE_OK;
}

/* A compiled group counted (compiles, failures, time-outs, cache hits) and its warnings kept. */
static void count_compile(cc_trun *c, const cc_tgroup *g) {
  c->s.compiles++;
  c->s.compile_failures += !g->ok;
  c->s.compile_timeouts += (size_t)g->timed_out;
  c->s.cache_hits += (size_t)g->cache_hit;
  cc_tcomp_warnings(c, g);
}

cc_tgroup *cc_tcomp_next(cc_trun *c) {
  cc_tcomp *t = c->comp;
  cc_tcomp_pipe *p = t->pipe;
  pthread_mutex_lock(&p->mu);
  while (p->taken < t->ngroups && p->taken == p->nready && !t->kernel_missing)
    pthread_cond_wait(&p->cv, &p->mu);
  size_t i = p->taken < t->ngroups && !t->kernel_missing ? p->ready[p->taken++] : (size_t)-1;
  if (p->taken == t->ngroups && i != (size_t)-1) c->s.compile_wall_ms = p->last_done_ms;
  pthread_mutex_unlock(&p->mu);
  if (i == (size_t)-1) return NULL;
  cc_tgroup *g = &t->groups[i];
  if (!g->deferred) {
    count_compile(c, g);
    apply_model(c, g);
  }
  return g;
}

int cc_tcomp_waiting(cc_trun *c) {
  cc_tcomp_pipe *p = c->comp->pipe;
  if (!p) return 0;
  pthread_mutex_lock(&p->mu);
  int waiting = p->taken == p->nready && p->nready < c->comp->ngroups;
  pthread_mutex_unlock(&p->mu);
  return waiting;
}

/* A deferred group compiled on the calling thread's slot; its rows judged when `judge`. */
static int compile_now(cc_trun *c, cc_tgroup *g, int judge) {
  if (!g->deferred) return g->ok ? 0 : -1;
  cc_tcomp_compile_group(c, c->s.jobs, g, 0);
  g->deferred = 0;
  count_compile(c, g);
  if (judge) apply_model(c, g);
  return g->ok ? 0 : -1;
}

/* A finalist's rows came from the store: their verdicts stand. */
int cc_tcomp_now(cc_trun *c, cc_tgroup *g) { return compile_now(c, g, 0); }

int cc_tcomp_take_over(cc_trun *c, cc_tgroup *g) { return compile_now(c, g, 1); }

/* The threads joined (a tune that stopped early compiles no more), whether -minimal was used
 * kept, the pipeline freed. */
static void stop_pipe(cc_trun *c, cc_tcomp_pipe *p) {
  atomic_store(&p->next, c->comp->ngroups);
  pthread_mutex_lock(&p->mu);
  int expected = 0; /* no verdict coming: the waiting threads go on */
  atomic_compare_exchange_strong(&p->minimal, &expected, -1);
  pthread_cond_broadcast(&p->verdict);
  pthread_mutex_unlock(&p->mu);
  for (int i = 0; i < p->started; i++) pthread_join(p->th[i], NULL);
  c->s.nvrtc_minimal = atomic_load(&p->minimal) == 1;
  pthread_mutex_destroy(&p->mu);
  pthread_cond_destroy(&p->cv);
  pthread_cond_destroy(&p->verdict);
  free(p->ready);
  free(p);
}

static void free_groups(cc_tcomp *t) {
  for (size_t i = 0; t->groups && i < t->ngroups; i++) {
    cucore_object_destroy(t->groups[i].obj);
    free(t->groups[i].symbol);
    free(t->groups[i].error);
    free(t->groups[i].log);
  }
  free(t->groups);
  t->groups = NULL;
  t->ngroups = 0;
}

cucore_status cc_tcomp_restart(cc_trun *c) {
  cc_tcomp *t = c->comp;
  if (t->pipe) stop_pipe(c, t->pipe);
  t->pipe = NULL;
  free_groups(t);
  return cc_tcomp_start(c, t->keep_objects);
}

void cc_tcomp_finish(cc_trun *c) {
  cc_tcomp *t = c->comp;
  if (t->pipe) stop_pipe(c, t->pipe);
  t->pipe = NULL;
  if (t->groups && !t->inert && (!c->s.searched || c->s.exhaustive)) cc_tcomp_inert(c);
  free_groups(t);
}

void cc_tcomp_take_notes(cc_trun *c, cc_tcomp_warn **warns, size_t **inert) {
  cc_tcomp *t = c->comp;
  *warns = t->warns, *inert = t->inert;
  t->warns = NULL, t->nwarns = t->cap_warns = 0;
  t->inert = NULL;
}

void cc_tcomp_free(cc_trun *c) {
  cc_tcomp *t = c->comp;
  if (!t) return;
  if (t->pipe || t->groups) cc_tcomp_finish(c);
  cc_tcomp_free_warnings(t->warns, t->nwarns);
  free(t->inert);
  free(t->kernel_missing);
  free(t);
  c->comp = NULL;
}

/* ---- the dry run ------------------------------------------------------------------------- */

/* The progress callback after a dry run's compile of group g (`t0`: when the compiles began). */
static void compile_progress(cc_trun *c, const cc_tgroup *g, size_t done, double t0) {
  if (!c->o.progress) return;
  cucore_tune_progress p = {0};
  p.done = done;
  p.total = c->comp->ngroups;
  p.elapsed_s = (cc_trun_now_ms() - t0) / 1000;
  p.eta_s = p.total > done ? p.elapsed_s / (double)done * (double)(p.total - done) : 0.0;
  p.config = g->index;
  p.compiling = 1;
  c->o.progress(c->o.user, &p);
}

cucore_status cc_tcomp_dry_run(cc_trun *c) {
  double t0 = cc_trun_now_ms();
  cucore_status st = cc_tcomp_start(c, 0);
  size_t done = 0;
  for (cc_tgroup *g; st == CUCORE_OK && (g = cc_tcomp_next(c)) != NULL;)
    compile_progress(c, g, ++done, t0);
  if (st == CUCORE_OK && c->o.progress) {
    cucore_tune_progress p = {.done = done,
                              .total = c->comp->ngroups,
                              .compiling = 1,
                              .finished = 1};
    c->o.progress(c->o.user, &p);
  }
  cc_tcomp_finish(c);
  return st == CUCORE_OK ? cc_tcomp_kernel_found(c) : st;
}
