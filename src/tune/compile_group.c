/* compile_group.c -- one group of a tune compiled: its request (the kernel name and option
 * lines of a configuration of the group, one writer each: space_text.c) handed to the compile
 * callback, or to the default compiler (cucore_tune_compile: NVRTC to a cubin through the
 * compile cache, its log kept, a failure said in one line, a compile past the time-out
 * refused); its registers, shared and local memory read from the cubin, the cubin's digest
 * kept (the notes compare them) and its object kept for measuring. A failure is the group's
 * error line, never the end of the tune, except a kernel name that names nothing in the
 * source: said once, and no more compiles. The threads share one question, whether NVRTC's
 * -minimal changes nothing (below). */
#include "compile/cache.h"
#include "tune/compiles.h"
#include "tune/space.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A copy of `text` (NULL for NULL or ""); out of memory: NULL. */
static char *copy_text(const char *text) { return text && *text ? cc_raw_strdup(text) : NULL; }

/* ---- the default compiler ------------------------------------------------------------------ */

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
    out->cache_hit = info.result == CUCORE_CACHE_HIT_DISK ||
                     info.result == CUCORE_CACHE_HIT_MEMORY ||
                     info.result == CUCORE_CACHE_HIT_BACKEND;
  if (st == CUCORE_OK) {
    if (cucore_object_get_lowered_name(*obj, q->kernel, &symbol) != CUCORE_OK || !symbol)
      symbol = q->kernel;
    out->symbol = symbol; /* the object's (or the request's) */
    st = cucore_object_get_code(*obj, &type, &out->cubin, &out->cubin_size);
  }
  out->ok = st == CUCORE_OK;
  out->definite = CUCORE_CODE(st) == CUCORE_COMPILE_ERROR; /* the compiler's own verdict */
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
    out->definite = 0;
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

/* ---- one group ---------------------------------------------------------------------------- */

/* *dst (malloc'd, its old text freed) = "what: " and the line of msg that names its error. */
static void error_line(char **dst, const char *what, const char *msg) {
  free(*dst);
  *dst = cc_trun_error_line(what, msg ? msg : "");
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
  cc_tcomp_pipe *p = c->comp->pipe;
  char *msg = p ? cc_tcomp_missing_kernel(c, g, q->kernel, q->options ? q->options : "") : NULL;
  if (!msg) return;
  pthread_mutex_lock(&p->mu);
  if (!c->comp->kernel_missing) {
    c->comp->kernel_missing = msg, msg = NULL;
    atomic_store(&p->next, c->comp->ngroups); /* no more compiles */
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
  g->definite = !ok && !g->timed_out && out->definite;
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
 * (0.55-0.59 per job at 8 jobs, the single job gaining most), under the 0.75 per job that
 * parallel compiles are held to (bench/compile_scaling.sh). */
#define MINIMAL_LINE "--raw=-minimal" /* passed to NVRTC as it is */

/* The request's option lines with -minimal added. */
static void with_minimal(const char *defines, cc_sb *b) {
  cc_sb_puts(b, defines);
  if (defines[0] && defines[strlen(defines) - 1] != '\n') cc_sb_puts(b, "\n");
  cc_sb_puts(b, MINIMAL_LINE);
}

/* The first group's check: its cubin (`first`, `size` bytes) against the same request with
 * -minimal; the verdict stored in p->minimal. */
static void check_minimal(cc_trun *c, cc_tcomp_pipe *p, const cucore_tune_compile_request *q,
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

size_t cc_tcomp_next_compiled(const cc_trun *c, size_t i) {
  while (i < c->comp->ngroups && c->comp->groups[i].deferred) i++;
  return i;
}

/* The checking group did not compile: the next one checks (none left: no -minimal). */
static void pass_check(cc_trun *c, cc_tcomp_pipe *p, size_t i) {
  pthread_mutex_lock(&p->mu);
  p->check_index = cc_tcomp_next_compiled(c, i + 1);
  if (p->check_index >= c->comp->ngroups) atomic_store(&p->minimal, -1);
  pthread_cond_broadcast(&p->verdict);
  pthread_mutex_unlock(&p->mu);
}

int cc_tcomp_wait_verdict(cc_tcomp_pipe *p, size_t i) {
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
  if (c->comp->keep_objects && !*obj &&
      cucore_object_from_memory(res->cubin, res->cubin_size, CUCORE_CODE_CUBIN, kernel, obj) !=
          CUCORE_OK) {
    error_line(&g->error, "keeping the cubin", cucore_last_error());
    return -1;
  }
  if (c->comp->keep_objects) g->obj = *obj, *obj = NULL;
  return 0;
}

/* The kernel name and the option lines of group g's compile (one writer each: space_text.c). */
static cucore_status request_texts(cc_trun *c, const cc_tgroup *g, cc_sb *kernel, cc_sb *defines) {
  cucore_status st = cc_tune_index_text(c->space, g->index, CUCORE_TUNE_TEXT_KERNEL, kernel);
  if (st == CUCORE_OK)
    st = cc_tune_index_text(c->space, g->index, CUCORE_TUNE_TEXT_DEFINES, defines);
  return st;
}

void cc_tcomp_compile_group(cc_trun *c, int slot, cc_tgroup *g, int first) {
  cc_tcomp_pipe *p = c->comp->pipe;
  cc_sb kernel = {0}, defines = {0}, lines = {0};
  cucore_object *obj = NULL;
  void *copy = NULL;
  char *symbol = NULL;
  cucore_tune_compile_result res;
  memset(&res, 0, sizeof res);
  if (request_texts(c, g, &kernel, &defines) != CUCORE_OK) {
    error_line(&g->error, "compile error", cucore_last_error());
    if (first) pass_check(c, p, (size_t)(g - c->comp->groups));
    goto done;
  }
  cucore_tune_compile_request q = {slot, c->s.limits.arch, cc_sb_text(&kernel),
                                   cc_sb_text(&defines), c->o.compile_timeout_s};
  if (p && atomic_load(&p->minimal) == 1) {
    with_minimal(q.options, &lines);
    if (!lines.failed) q.options = cc_sb_text(&lines);
  }
  if (!compile_with(c, &q, &res, &obj, g)) {
    if (first) pass_check(c, p, (size_t)(g - c->comp->groups));
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
