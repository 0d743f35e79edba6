/* run_compile.c -- the compile stage of cucore_tune_run(): each distinct compile among the
 * runnable configurations (launch-only parameters never make one) is compiled once, to a cubin
 * for the exact arch, by `jobs` threads (the compile callback, or cucore_tune_compile through
 * the compile cache); its registers, shared and local memory are read from the cubin, and the
 * host occupancy model gives every configuration its verdict and score. Finished compiles are
 * handed to the GPU thread (or the dry run) in the order they finish. A compile that fails is
 * recorded with its first line, never the end of the tune. */
#include "compile/cache.h"
#include "tune/run.h"
#include "tune/space.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CC_TCOMP_MAX_JOBS 256

struct cc_tpipe {
  cc_trun *ctx;
  atomic_size_t next;     /* the next group a thread takes */
  atomic_int minimal;     /* NVRTC's -minimal: 0 not known yet, 1 in use, -1 not used */
  size_t check_index;     /* the group that checks it (under mu) */
  pthread_cond_t verdict; /* minimal known, or check_index moved */
  pthread_mutex_t mu;
  pthread_cond_t cv;
  size_t *ready; /* finished groups, in the order they finished */
  size_t nready, taken;
  pthread_t th[CC_TCOMP_MAX_JOBS];
  atomic_int slots; /* the slot the next thread takes */
  int started;
  double t0;
  double last_done_ms; /* when the latest compile ended (from t0) */
};

/* *dst (malloc'd, its old text freed) = "what: " and the line of msg that names its error. */
static void error_line(char **dst, const char *what, const char *msg) {
  free(*dst);
  *dst = cc_trun_error_line(what, msg ? msg : "");
}

/* A copy of `text` (NULL for NULL or ""); out of memory: NULL. */
static char *copy_text(const char *text) { return text && *text ? cc_raw_strdup(text) : NULL; }

/* The request's options: `base` (or none), the arch and the option lines. */
static cucore_status request_options(const cucore_options *base,
                                     const cucore_tune_compile_request *q, cucore_options **out) {
  char arch[16], *lines = cc_strdup(q->options ? q->options : "", "cucore_tune_compile");
  if (!lines) return cucore_last_status();
  snprintf(arch, sizeof arch, "sm_%d", q->arch);
  cucore_status st = base ? cucore_options_copy(base, out) : cucore_options_create(out);
  if (st == CUCORE_OK && q->arch) st = cucore_options_set_string(*out, CUCORE_OPT_ARCH, arch);
  for (char *d = lines; st == CUCORE_OK && *d;) {
    size_t n = strcspn(d, "\n");
    char end = d[n];
    d[n] = 0;
    int used = 0;
    if (n) st = cucore_options_parse(*out, d, NULL, &used);
    d += n + (end != 0);
  }
  free(lines);
  return st;
}

/* The compile itself: out filled (its log and error texts owned by out), the object kept in
 * *obj when it compiled. */
static void compile_one(cucore_program *prog, const cucore_tune_compile_request *q,
                        cucore_tune_compile_result *out, cucore_object **obj) {
  const char *log = "", *symbol = q->kernel;
  cucore_code_type type;
  cucore_status st = cucore_program_add_name_expression(prog, q->kernel);
  double t0 = cc_trun_now_ms();
  if (st == CUCORE_OK) st = cucore_program_compile(prog, CUCORE_CODE_CUBIN, obj);
  out->ms = cc_trun_now_ms() - t0;
  cucore_program_get_log(prog, &log);
  out->log = copy_text(log);
  cucore_cache_info info;
  if (cucore_program_get_cache_info(prog, &info) == CUCORE_OK)
    out->cache_hit = info.result == CUCORE_CACHE_HIT_DISK || info.result == CUCORE_CACHE_HIT_MEMORY;
  if (st == CUCORE_OK) {
    if (cucore_object_get_lowered_name(*obj, q->kernel, &symbol) != CUCORE_OK || !symbol)
      symbol = q->kernel;
    out->symbol = symbol; /* the object's (or the request's) */
    st = cucore_object_get_code(*obj, &type, &out->cubin, &out->cubin_size);
  }
  out->ok = st == CUCORE_OK;
  if (!out->ok)
    out->error = cc_trun_error_line("compile error", log && *log ? log : cucore_last_error());
}

cucore_status cucore_tune_compile_result_release(cucore_tune_compile_result *r) {
  cc_begin();
  CC_CHECK_ARG(r, "cucore_tune_compile_result_release", "result");
  if (r->owns_texts) {
    free((char *)r->error);
    free((char *)r->log);
    r->error = r->log = NULL;
    r->owns_texts = 0;
  }
  return CUCORE_OK;
}

cucore_status cucore_tune_compile(const char *source, size_t size, const char *name,
                                  const cucore_options *base,
                                  const cucore_tune_compile_request *request,
                                  cucore_tune_compile_result *out, cucore_object **obj) {
  cc_begin();
  CC_CHECK_ARG(source, "cucore_tune_compile", "source");
  CC_CHECK_ARG(request, "cucore_tune_compile", "request");
  CC_CHECK_ARG(request->kernel, "cucore_tune_compile", "request->kernel");
  CC_CHECK_ARG(out, "cucore_tune_compile", "out");
  CC_CHECK_ARG(obj, "cucore_tune_compile", "obj");
  memset(out, 0, sizeof *out);
  out->owns_texts = 1;
  *obj = NULL;
  cucore_options *opts = NULL;
  cucore_program *prog = NULL;
  cucore_status st = request_options(base, request, &opts);
  if (st != CUCORE_OK) goto done;
  if (cucore_program_create(CUCORE_CODE_CUDA_CPP, source, size, name ? name : "tune.cu", opts,
                            &prog) == CUCORE_OK)
    compile_one(prog, request, out, obj);
  else
    out->error = cc_trun_error_line("compile error", cucore_last_error());
  if (out->ok && request->timeout_s > 0 && out->ms > request->timeout_s * 1000) {
    out->ok = 0;
    out->timed_out = 1;
    cc_sb t = {0};
    cc_sb_printf(&t, "compile timeout: took %.1f s, past the limit of %g s", out->ms / 1000,
                 request->timeout_s);
    out->error = cc_sb_take(&t);
  }
  if (!out->ok) cucore_object_destroy(*obj), *obj = NULL;
  if (!out->ok) out->symbol = NULL;
done:
  cucore_program_destroy(prog);
  cucore_options_destroy(opts);
  return st;
}

/* Registers, shared and local memory of the group's kernel (g->symbol) in its cubin. */
static int read_resources(const void *cubin, size_t size, int arch, cc_tgroup *g) {
  cucore_binary *bin = NULL;
  const cucore_kernel_info *k = NULL;
  cucore_status st = cucore_binary_open(cubin, size, CUCORE_CODE_CUBIN, arch, &bin);
  if (st == CUCORE_OK) st = cucore_binary_find_kernel(bin, g->symbol, &k);
  if (st != CUCORE_OK) {
    error_line(&g->error, "reading the cubin", cucore_last_error());
    cucore_binary_destroy(bin);
    return -1;
  }
  cucore_kernel_info_get_resources(k, &g->res);
  g->local_bytes = k->local_bytes > 0 ? k->local_bytes : 0;
  cucore_binary_destroy(bin);
  return 0;
}

/* A failed compile that says the kernel's own name is undefined: the kernel names nothing in
 * the source, for every configuration alike, so the tune stops (said once, with the kernels the
 * source has) instead of recording one compile error per configuration. */
static void check_kernel(cc_trun *c, const cucore_tune_compile_request *q, const cc_tgroup *g) {
  cc_tpipe *p = c->pipe;
  char *msg = p ? cc_tnotes_missing_kernel(c, g, q->kernel, q->options ? q->options : "") : NULL;
  if (!msg) return;
  pthread_mutex_lock(&p->mu);
  if (!c->kernel_missing) {
    c->kernel_missing = msg, msg = NULL;
    atomic_store(&p->next, c->ngroups); /* no more compiles */
    pthread_cond_broadcast(&p->cv);
  }
  pthread_mutex_unlock(&p->mu);
  free(msg);
}

/* One compile by the callback or cucore_tune_compile: 1 compiled (out set, *obj the default
 * compiler's object), 0 not (g->error says why). */
static int compile_with(cc_trun *c, const cucore_tune_compile_request *q,
                        cucore_tune_compile_result *out, cucore_object **obj, cc_tgroup *g) {
  int ok;
  if (c->o.compile) {
    ok = c->o.compile(c->o.user, q, out) == 0 && out->ok && out->cubin && out->symbol;
  } else {
    const char *src = c->space->source ? c->space->source : "";
    cucore_status st = cucore_tune_compile(src, strlen(src), c->o.source_name, c->copts, q, out,
                                           obj);
    if (st != CUCORE_OK) error_line(&g->error, "compile error", cucore_last_error());
    ok = st == CUCORE_OK && out->ok;
  }
  g->ms = out->ms;
  g->cache_hit = out->cache_hit;
  g->timed_out = !ok && out->timed_out;
  free(g->log);
  g->log = copy_text(out->log);
  if (!ok && !g->error)
    g->error = cc_raw_strdup(
        out->error && *out->error ? out->error : "compile error: the compiler gave no cubin");
  if (!ok) check_kernel(c, q, g);
  return ok;
}

/* NVRTC's -minimal leaves out the runtime's types and functions that small kernels do not
 * use, and cuts ~20 % of a compile (40.6 -> 32.3 ms for the bench's kernel, the cubins
 * byte-identical). A kernel that needs what it leaves out does not compile with it, and in
 * principle a declaration left out could change what compiles; so the first group (by index)
 * that compiles is compiled both ways, and -minimal is used for the others only when the two
 * cubins are the same bytes. The other threads wait for that verdict (about two compiles),
 * so that which options a group is compiled with, and so its compile cache key, never depends
 * on timing. Asked for by cucore_tune_run_options::nvrtc_minimal (`--nvrtc-minimal`), not the
 * default: on the H100 it made compiles 20-30 % shorter but parallel compiles scale less
 * (0.55-0.59 per job at 8 jobs, the single job gaining most), under issue 24's 0.75. */
#define MINIMAL_LINE "--raw=-minimal" /* passed to NVRTC as it is */

/* The request's option lines with -minimal added. */
static void with_minimal(const char *defines, cc_sb *b) {
  cc_sb_puts(b, defines);
  if (defines[0] && defines[strlen(defines) - 1] != '\n') cc_sb_puts(b, "\n");
  cc_sb_puts(b, MINIMAL_LINE);
}

/* The first group's check: its cubin (`first`, `size` bytes) against the same request with
 * -minimal; the verdict stored in p->minimal. */
static void check_minimal(cc_trun *c, cc_tpipe *p, const cucore_tune_compile_request *q,
                          const void *first, size_t size) {
  int verdict = -1;
  cc_sb lines = {0};
  with_minimal(q->options ? q->options : "", &lines);
  if (first && !lines.failed) {
    cucore_tune_compile_request mq = *q;
    mq.options = cc_sb_text(&lines);
    cucore_tune_compile_result mr;
    memset(&mr, 0, sizeof mr);
    cucore_object *obj = NULL;
    cc_tgroup scratch;
    memset(&scratch, 0, sizeof scratch);
    if (compile_with(c, &mq, &mr, &obj, &scratch) && mr.cubin_size == size &&
        memcmp(mr.cubin, first, size) == 0)
      verdict = 1;
    cucore_tune_compile_result_release(&mr);
    cucore_object_destroy(obj);
    free(scratch.error);
    free(scratch.log);
  }
  cc_sb_free(&lines);
  pthread_mutex_lock(&p->mu);
  atomic_store(&p->minimal, verdict);
  pthread_cond_broadcast(&p->verdict);
  pthread_mutex_unlock(&p->mu);
}

/* The first non-deferred group after `i` (c->ngroups when none). */
static size_t next_compiled(const cc_trun *c, size_t i) {
  while (i < c->ngroups && c->groups[i].deferred) i++;
  return i;
}

/* The checking group did not compile: the next one checks (none left: no -minimal). */
static void pass_check(cc_trun *c, cc_tpipe *p, size_t i) {
  pthread_mutex_lock(&p->mu);
  p->check_index = next_compiled(c, i + 1);
  if (p->check_index >= c->ngroups) atomic_store(&p->minimal, -1);
  pthread_cond_broadcast(&p->verdict);
  pthread_mutex_unlock(&p->mu);
}

/* 1 when group `i` is the one to check -minimal; otherwise waits for the verdict. */
static int wait_verdict(cc_tpipe *p, size_t i) {
  pthread_mutex_lock(&p->mu);
  while (atomic_load(&p->minimal) == 0 && p->check_index != i)
    pthread_cond_wait(&p->verdict, &p->mu);
  int first = atomic_load(&p->minimal) == 0;
  pthread_mutex_unlock(&p->mu);
  return first;
}

/* What group g keeps of a compile that succeeded: its symbol, resources, the cubin's digest,
 * and its object for measuring. 0, or -1 with g->error. */
static int keep_compiled(cc_trun *c, cc_tgroup *g, const cucore_tune_compile_result *res,
                         const char *kernel, cucore_object **obj) {
  if (!(g->symbol = cc_raw_strdup(res->symbol))) {
    error_line(&g->error, "compile error", "out of host memory");
    return -1;
  }
  cc_content_digest(res->cubin, res->cubin_size, g->digest);
  if (read_resources(res->cubin, res->cubin_size, c->s.limits.arch, g) < 0) return -1;
  if (c->keep_objects && !*obj &&
      cucore_object_from_memory(res->cubin, res->cubin_size, CUCORE_CODE_CUBIN, kernel, obj) !=
          CUCORE_OK) {
    error_line(&g->error, "keeping the cubin", cucore_last_error());
    return -1;
  }
  if (c->keep_objects) g->obj = *obj, *obj = NULL;
  return 0;
}

/* The kernel name and the option lines of group g's compile (one writer each: space_text.c). */
static cucore_status request_texts(cc_trun *c, const cc_tgroup *g, cc_sb *kernel, cc_sb *defines) {
  cucore_status st = cc_tune_index_text(c->space, g->index, CUCORE_TUNE_TEXT_KERNEL, kernel);
  if (st == CUCORE_OK)
    st = cc_tune_index_text(c->space, g->index, CUCORE_TUNE_TEXT_DEFINES, defines);
  return st;
}

/* Group g compiled (in compile slot `slot`); its resources read, its object kept for
 * measuring. */
static void compile_group(cc_trun *c, cc_tpipe *p, int slot, cc_tgroup *g, int first) {
  cc_sb kernel = {0}, defines = {0}, lines = {0};
  cucore_object *obj = NULL;
  void *copy = NULL;
  char *symbol = NULL;
  cucore_tune_compile_result res;
  memset(&res, 0, sizeof res);
  if (request_texts(c, g, &kernel, &defines) != CUCORE_OK) {
    error_line(&g->error, "compile error", cucore_last_error());
    if (first) pass_check(c, p, (size_t)(g - c->groups));
    goto done;
  }
  cucore_tune_compile_request q = {slot, c->s.limits.arch, cc_sb_text(&kernel),
                                   cc_sb_text(&defines), c->o.compile_timeout_s};
  if (p && atomic_load(&p->minimal) == 1) {
    with_minimal(q.options, &lines);
    if (!lines.failed) q.options = cc_sb_text(&lines);
  }
  if (!compile_with(c, &q, &res, &obj, g)) {
    if (first) pass_check(c, p, (size_t)(g - c->groups));
    goto done;
  }
  if (first) { /* copied first: the check's compile may reuse the callback's buffers */
    copy = malloc(res.cubin_size ? res.cubin_size : 1);
    symbol = cc_raw_strdup(res.symbol);
    if (copy) memcpy(copy, res.cubin, res.cubin_size);
    check_minimal(c, p, &q, copy, res.cubin_size);
    if (!copy || !symbol) {
      error_line(&g->error, "compile error", "out of host memory");
      goto done;
    }
    res.cubin = copy;
    res.symbol = symbol;
  }
  g->ok = keep_compiled(c, g, &res, q.kernel, &obj) == 0;
done:
  cucore_tune_compile_result_release(&res);
  cucore_object_destroy(obj);
  free(copy);
  free(symbol);
  cc_sb_free(&kernel);
  cc_sb_free(&defines);
  cc_sb_free(&lines);
}

static void *worker(void *arg) {
  cc_tpipe *p = arg;
  int slot = atomic_fetch_add(&p->slots, 1);
  for (;;) {
    size_t i = atomic_fetch_add(&p->next, 1);
    if (i >= p->ctx->ngroups) break;
    cc_tgroup *g = &p->ctx->groups[i];
    if (!g->deferred) compile_group(p->ctx, p, slot, g, wait_verdict(p, i));
    pthread_mutex_lock(&p->mu);
    p->last_done_ms = cc_trun_now_ms() - p->t0;
    p->ready[p->nready++] = i;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
  }
  if (p->ctx->o.compile) { /* the slot is done: the compiler may let go of what it holds */
    cucore_tune_compile_request q = {.slot = slot, .arch = p->ctx->s.limits.arch};
    cucore_tune_compile_result r;
    p->ctx->o.compile(p->ctx->o.user, &q, &r);
  }
  return NULL;
}

/* A group whose every configuration came from the store is not compiled (a resumed tune
 * compiles nothing) unless a finalist needs it (cc_tcomp_now). Model-first orders by the
 * model's verdicts, so it compiles everything. */
static void mark_deferred(cc_trun *c, cc_tgroup *g, size_t n) {
  int order_by_model = c->o.model_first || c->o.top_fraction > 0;
  for (size_t i = 0; i < n; i++) g[i].deferred = !order_by_model;
  for (size_t i = 0; i < c->s.rows && !order_by_model; i++) {
    const cucore_tune_row *r = &c->rows[i];
    if (r->config.verdict != CUCORE_TUNE_RUNNABLE || r->resumed) continue;
    cc_tgroup key = {.hash = r->config.compile_hash};
    cc_tgroup *x = bsearch(&key, g, n, sizeof key, cc_tgroup_by_hash);
    if (x) x->deferred = 0;
  }
}

/* The distinct compiles of the runnable rows, sorted by hash (c->groups, c->ngroups). */
static cucore_status collect(cc_trun *c) {
  cc_tgroup *g = cc_calloc(c->s.rows ? c->s.rows : 1, sizeof *g, "cucore_tune_run: compiles");
  if (!g) return cucore_last_status();
  size_t n = 0;
  for (size_t i = 0; i < c->s.rows; i++)
    if (c->rows[i].config.verdict == CUCORE_TUNE_RUNNABLE) {
      g[n].hash = c->rows[i].config.compile_hash;
      g[n++].index = c->rows[i].config.index;
    }
  qsort(g, n, sizeof *g, cc_tgroup_by_hash);
  size_t u = 0;
  for (size_t i = 0; i < n; i++)
    if (u == 0 || g[u - 1].hash != g[i].hash) g[u++] = g[i];
  mark_deferred(c, g, u);
  c->groups = g;
  c->ngroups = u;
  return CUCORE_OK;
}

/* The occupancy model on every runnable row of group `g`. */
static void apply_model(cc_trun *c, const cc_tgroup *g) {
  cucore_tune_filter f = {c->o.min_occupancy, c->o.no_spills};
  for (size_t i = 0; i < c->s.rows; i++) {
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

cucore_status cc_tcomp_start(cc_trun *c) {
  cucore_status st = collect(c);
  if (st != CUCORE_OK) return st;
  cc_tpipe *p = cc_calloc(1, sizeof *p, "cucore_tune_run: the compile pipeline");
  size_t *ready = cc_calloc(c->ngroups ? c->ngroups : 1, sizeof *ready,
                            "cucore_tune_run: compiles");
  if (!p || !ready) {
    free(p), free(ready);
    return cucore_last_status();
  }
  p->ctx = c;
  p->ready = ready;
  atomic_init(&p->next, 0);
  atomic_init(&p->slots, 0);
  p->check_index = next_compiled(c, 0);
  atomic_init(&p->minimal, c->o.nvrtc_minimal && p->check_index < c->ngroups ? 0 : -1);
  pthread_cond_init(&p->verdict, NULL);
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->cv, NULL);
  p->t0 = cc_trun_now_ms();
  c->pipe = p;
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
  cc_tnotes_warnings(c, g);
}

cc_tgroup *cc_tcomp_next(cc_trun *c) {
  cc_tpipe *p = c->pipe;
  pthread_mutex_lock(&p->mu);
  while (p->taken < c->ngroups && p->taken == p->nready && !c->kernel_missing)
    pthread_cond_wait(&p->cv, &p->mu);
  size_t i = p->taken < c->ngroups && !c->kernel_missing ? p->ready[p->taken++] : (size_t)-1;
  if (p->taken == c->ngroups && i != (size_t)-1) c->s.compile_wall_ms = p->last_done_ms;
  pthread_mutex_unlock(&p->mu);
  if (i == (size_t)-1) return NULL;
  cc_tgroup *g = &c->groups[i];
  if (!g->deferred) {
    count_compile(c, g);
    apply_model(c, g);
  }
  return g;
}

int cc_tcomp_waiting(cc_trun *c) {
  cc_tpipe *p = c->pipe;
  if (!p) return 0;
  pthread_mutex_lock(&p->mu);
  int waiting = p->taken == p->nready && p->nready < c->ngroups;
  pthread_mutex_unlock(&p->mu);
  return waiting;
}

int cc_tcomp_now(cc_trun *c, cc_tgroup *g) {
  if (!g->deferred) return g->ok ? 0 : -1;
  compile_group(c, c->pipe, c->s.jobs, g, 0); /* the calling thread's slot */
  g->deferred = 0;
  count_compile(c, g); /* its rows came from the store: their verdicts stand */
  return g->ok ? 0 : -1;
}

void cc_tcomp_finish(cc_trun *c) {
  cc_tpipe *p = c->pipe;
  if (p) {
    atomic_store(&p->next, c->ngroups); /* a tune that stopped early compiles no more */
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
  c->pipe = NULL;
  if (c->groups && !c->inert) cc_tnotes_inert(c);
  for (size_t i = 0; c->groups && i < c->ngroups; i++) {
    cucore_object_destroy(c->groups[i].obj);
    free(c->groups[i].symbol);
    free(c->groups[i].error);
    free(c->groups[i].log);
  }
  free(c->groups);
  c->groups = NULL;
}
