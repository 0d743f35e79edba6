/* test_tune_run.c -- cucore_tune_run(), the tune as a library call, on the fake driver of
 * tests/fake (launches are recorded, nothing runs; copies and fills move real bytes) and the
 * real NVRTC: argument errors named, a dry run's counts per stage, a measured run with a
 * progress callback (done reaches total) and a compile callback (every slot let go), a
 * resumed run measuring nothing (the store), a check callback failing one configuration, the
 * report's getters refusing a row past the end, and a destroyed report refused as misuse; the
 * context made early on the library's helper thread only when nothing makes it already.
 * cucore_tune_time_launch with the caller's flush buffer: used and left to the caller, and one
 * smaller than 2 x l2_bytes refused by the fill's bounds check. cucore_tune_time_samples (the
 * engine `cucore run` times with): exactly the launches the counts ask for (the fake driver
 * counts them), past the 16 queued samples, in batches and as graph replays, each sample's
 * time per launch, and each wrong option named. */
#include "runtime/runtime.h" /* cc_device_primary_started */
#include "support.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef CUCORE_FAKE_DRIVER_PATH
#error "CUCORE_FAKE_DRIVER_PATH is set by tests/CMakeLists.txt"
#endif

static const char src[] = "extern \"C\" __global__ void work(float *y, int n) {\n"
                          "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                          "  if (i < n) y[i] = REPS;\n"
                          "}\n";

static char dir[64];

/* REPS=1,2,3,4 (REPS != 3), block_size_x=64,128: 8 raw, 6 after the restriction, 3 compiles. */
static cucore_tune_space *space_of(void) {
  cucore_tune_space *s = NULL;
  assert_ok(cucore_tune_space_create(&s));
  assert_ok(cucore_tune_space_parse_param(s, "REPS=1,2,3,4", CUCORE_TUNE_PARAM_AUTO));
  assert_ok(cucore_tune_space_parse_param(s, "block_size_x=64,128", CUCORE_TUNE_PARAM_AUTO));
  assert_ok(cucore_tune_space_restrict(s, "REPS != 3"));
  assert_ok(cucore_tune_space_set_expr(s, CUCORE_TUNE_PROBLEM_SIZE, "1024"));
  assert_ok(cucore_tune_space_set_kernel(s, "work"));
  assert_ok(cucore_tune_space_set_source(s, src, strlen(src)));
  return s;
}

typedef struct calls {
  int bind, check, progress, finished, compile, done_slots;
  size_t last_done, last_total;
  int check_wrong_reps; /* the check fails this REPS (0: none) */
} calls;

static cucore_status bind(void *user, cucore_object *obj, const char *symbol,
                          const cucore_devptr *ptrs, cucore_args *args) {
  (void)obj, (void)symbol;
  ((calls *)user)->bind++;
  cucore_status st = cucore_args_set_ptr(args, 0, ptrs[0]);
  return st == CUCORE_OK ? cucore_args_set_i32(args, 1, 1024) : st;
}

static void progress(void *user, const cucore_tune_progress *p) {
  calls *c = user;
  c->last_done = p->done, c->last_total = p->total;
  if (p->finished)
    c->finished++;
  else
    c->progress++;
}

static int compile(void *user, const cucore_tune_compile_request *q,
                   cucore_tune_compile_result *out) {
  static _Thread_local cucore_object *kept; /* one slot per thread: the last cubin's owner */
  calls *c = user;
  cucore_object_destroy(kept);
  kept = NULL;
  if (!q->kernel) {
    __atomic_add_fetch(&c->done_slots, 1, __ATOMIC_SEQ_CST);
    return 0;
  }
  __atomic_add_fetch(&c->compile, 1, __ATOMIC_SEQ_CST);
  if (cucore_tune_compile(src, strlen(src), "w.cu", NULL, q, out, &kept) != CUCORE_OK) return -1;
  return out->ok ? 0 : -1;
}

static cucore_tune_run_options options_of(calls *c, const char *db) {
  cucore_tune_run_options o = CUCORE_TUNE_RUN_DEFAULTS;
  o.jobs = 2;
  o.store_path = db;
  o.cold = CUCORE_TUNE_COLD_NONE;
  o.user = c;
  o.bind = bind;
  o.progress = progress;
  return o;
}

static cucore_tune_buffer out_buffer(void) {
  cucore_tune_buffer b = {"y", CUCORE_TUNE_OUT, CUCORE_TUNE_ELEM_FLOAT, 4, 1024, NULL};
  return b;
}

static void argument_errors(void **state) {
  (void)state;
  cucore_tune_space *s = space_of();
  calls c = {0};
  cucore_tune_run_options o = options_of(&c, NULL);
  cucore_tune_report *r = (cucore_tune_report *)&c; /* set to NULL by a refusal */
  cucore_tune_buffer b = out_buffer();
  assert_status(cucore_tune_run(NULL, NULL, &b, 1, &o, &r), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "space");
  assert_status(cucore_tune_run(s, NULL, &b, 1, NULL, &r), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "`options` is NULL");
  assert_status(cucore_tune_run(s, NULL, &b, 1, &o, NULL), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_tune_run(s, NULL, NULL, 1, &o, &r), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "`buffers` is NULL with nbuffers 1");
  assert_null(r);
  o.bind = NULL;
  o.dry_run = 1;
  assert_status(cucore_tune_run(s, NULL, &b, 1, &o, &r), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "options->bind is NULL");
  o = options_of(&c, NULL);
  o.top_fraction = 2;
  assert_status(cucore_tune_run(s, NULL, &b, 1, &o, &r), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "options->top_fraction: expected 0..1");
  o = options_of(&c, NULL);
  o.launch_mode = 7;
  assert_status(cucore_tune_run(s, NULL, &b, 1, &o, &r), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "options->launch_mode");
  o = options_of(&c, NULL);
  b.elem_size = 3;
  assert_status(cucore_tune_run(s, NULL, &b, 1, &o, &r), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "buffer 0: elem_size 3: expected 1, 2, 4 or 8 bytes");
  b = out_buffer();
  b.elem = CUCORE_TUNE_ELEM_BFLOAT16; /* 4 bytes: not a bfloat16 */
  assert_status(cucore_tune_run(s, NULL, &b, 1, &o, &r), CUCORE_INVALID_ARGUMENT);
  cucore_tune_space *bare = NULL;
  assert_ok(cucore_tune_space_create(&bare));
  b = out_buffer();
  assert_status(cucore_tune_run(bare, NULL, &b, 1, &o, &r), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "the space has no kernel");
  assert_null(r);
  assert_int_equal(c.bind + c.progress, 0);
  cucore_tune_space_destroy(bare);
  cucore_tune_space_destroy(s);
}

static void dry_run_counts(void **state) {
  (void)state;
  cucore_tune_space *s = space_of();
  cucore_tune_run_options o = CUCORE_TUNE_RUN_DEFAULTS;
  o.dry_run = 1;
  o.arch = 90;
  o.sm_count = 132;
  o.jobs = 1;
  o.nvrtc_minimal = 1; /* the first cubin is the same bytes with NVRTC's -minimal: used after */
  cucore_tune_report *r = NULL;
  assert_ok(cucore_tune_run(s, NULL, NULL, 0, &o, &r));
  cucore_tune_summary sum;
  assert_ok(cucore_tune_report_get_summary(r, &sum));
  assert_int_equal(sum.nvrtc_minimal, 1);
  assert_int_equal(sum.counts.raw, 8);
  assert_int_equal(sum.counts.after_restrictions, 6);
  assert_int_equal(sum.counts.runnable, 6);
  assert_int_equal(sum.counts.compiles, 3);
  assert_int_equal(sum.rows, 6);
  assert_int_equal(sum.compiles, 3);
  assert_int_equal(sum.compile_failures, 0);
  assert_int_equal(sum.limits.arch, 90);
  assert_int_equal(sum.limits.sm_count, 132);
  assert_int_equal(sum.measured + sum.have_best, 0);
  assert_string_equal(sum.key, "");
  for (size_t i = 0; i < sum.rows; i++) {
    cucore_tune_row row;
    assert_ok(cucore_tune_report_get_row(r, i, &row));
    assert_int_equal(row.compiled, 1);
    assert_int_equal(row.status, CUCORE_TUNE_NOT_MEASURED);
    assert_true(row.registers > 0 && row.model.score > 0);
  }
  /* The model's order: every compiled runnable row, score never rising, equal scores by
   * configuration index. */
  size_t order[6], n = 99;
  assert_ok(cucore_tune_report_get_model_order(r, order, &n));
  assert_int_equal(n, 6);
  for (size_t i = 1; i < n; i++) {
    cucore_tune_row a, b;
    assert_ok(cucore_tune_report_get_row(r, order[i - 1], &a));
    assert_ok(cucore_tune_report_get_row(r, order[i], &b));
    assert_true(a.model.score > b.model.score ||
                (a.model.score == b.model.score && a.config.index < b.config.index));
  }
  assert_status(cucore_tune_report_get_model_order(r, NULL, &n), CUCORE_INVALID_ARGUMENT);
  assert_int_equal(n, 0);
  assert_status(cucore_tune_report_get_model_order(r, order, NULL), CUCORE_INVALID_ARGUMENT);
  cucore_tune_row row;
  assert_status(cucore_tune_report_get_row(r, 6, &row), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "row 6 is past the report's 6 rows");
  assert_status(cucore_tune_report_get_row(r, 0, NULL), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_tune_report_get_summary(r, NULL), CUCORE_INVALID_ARGUMENT);
  assert_ok(cucore_tune_report_destroy(r));
  assert_status(cucore_tune_report_get_summary(r, &sum), CUCORE_MISUSE);
  assert_status(cucore_tune_report_destroy(r), CUCORE_MISUSE);
  assert_ok(cucore_tune_report_destroy(NULL));
  cucore_tune_space_destroy(s);
}

/* A measured run into `db`; its summary in *sum. */
static void measured(const char *db, calls *c, int with_compile, cucore_tune_summary *sum) {
  cucore_tune_space *s = space_of();
  cucore_tune_run_options o = options_of(c, db);
  if (with_compile) o.compile = compile;
  cucore_tune_buffer b = out_buffer();
  cucore_tune_report *r = NULL;
  assert_ok(cucore_tune_run(s, NULL, &b, 1, &o, &r));
  assert_ok(cucore_tune_report_get_summary(r, sum));
  assert_int_equal(sum->rows, 6);
  assert_string_equal(sum->store_path, db);
  assert_int_equal(strlen(sum->key), 64);
  assert_true(sum->have_best);
  cucore_tune_row best;
  assert_ok(cucore_tune_report_get_row(r, sum->best, &best));
  assert_int_equal(best.status, CUCORE_TUNE_OK);
  assert_ok(cucore_tune_report_destroy(r));
  cucore_tune_space_destroy(s);
}

static void measured_and_resumed(void **state) {
  (void)state;
  char db[128];
  snprintf(db, sizeof db, "%s/db.jsonl", dir);
  calls c = {0};
  cucore_tune_summary sum;
  measured(db, &c, 1, &sum);
  assert_int_equal(sum.measured, 6);
  assert_int_equal(sum.resumed + sum.wrong + sum.failed, 0);
  assert_int_equal(c.progress, 6);
  assert_int_equal(c.finished, 1);
  assert_int_equal(c.last_done, c.last_total);
  assert_int_equal(c.last_total, 6);
  assert_int_equal(c.compile, 3);
  assert_int_equal(sum.nvrtc_minimal, 0); /* not asked for */
  assert_int_equal(c.done_slots, 2);      /* both compile threads let their slot go */
  assert_true(c.bind >= 3);
  assert_true(sum.store_records >= 6 + 5); /* the finalists (5, and ties) recorded again */
  calls again = {0};
  measured(db, &again, 1, &sum);
  assert_int_equal(sum.measured, 0);
  assert_int_equal(sum.resumed, 6);
  assert_int_equal(again.compile, 0);   /* nothing to measure needs a cubin */
  assert_int_equal(again.last_done, 6); /* said on the last call: the resumed need no steps */
  assert_int_equal(again.finished, 1);
}

/* REPS=4 does not compile; REPS=2's compiler "crashes" while crash is set (a failure that
 * says nothing of the configuration). */
static const char bad_src[] = "extern \"C\" __global__ void work(float *y, int n) {\n"
                              "#if REPS == 4\n"
                              "  this_does_not_compile;\n"
                              "#endif\n"
                              "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                              "  if (i < n) y[i] = REPS;\n"
                              "}\n";

typedef struct bad_calls {
  calls c; /* first: bind and progress take it as their user */
  int crash;
  int four; /* compiles of REPS=4 */
} bad_calls;

static int compile_bad(void *user, const cucore_tune_compile_request *q,
                       cucore_tune_compile_result *out) {
  static _Thread_local cucore_object *kept;
  bad_calls *b = user;
  cucore_object_destroy(kept);
  kept = NULL;
  if (!q->kernel) return 0;
  __atomic_add_fetch(&b->c.compile, 1, __ATOMIC_SEQ_CST);
  if (strstr(q->options, "REPS=4")) __atomic_add_fetch(&b->four, 1, __ATOMIC_SEQ_CST);
  if (b->crash && strstr(q->options, "REPS=2")) {
    out->ok = 0, out->definite = 0;
    out->error = "compile error: the compiler process ended with signal 9 (Killed)";
    return -1;
  }
  if (cucore_tune_compile(bad_src, strlen(bad_src), "bad.cu", NULL, q, out, &kept) != CUCORE_OK)
    return -1;
  return out->ok ? 0 : -1;
}

/* A tune of bad_src into db: its summary, and how many rows failed to compile. */
static size_t tune_bad(const char *db, bad_calls *b, cucore_tune_summary *sum) {
  cucore_tune_space *s = space_of();
  assert_ok(cucore_tune_space_set_source(s, bad_src, strlen(bad_src)));
  cucore_tune_run_options o = options_of(&b->c, db);
  o.compile = compile_bad;
  o.user = b;
  cucore_tune_buffer buf = out_buffer();
  cucore_tune_report *r = NULL;
  assert_ok(cucore_tune_run(s, NULL, &buf, 1, &o, &r));
  assert_ok(cucore_tune_report_get_summary(r, sum));
  size_t failed = 0;
  for (size_t i = 0; i < sum->rows; i++) {
    cucore_tune_row row;
    assert_ok(cucore_tune_report_get_row(r, i, &row));
    if (!row.error[0]) continue;
    failed++;
    assert_int_equal(row.status, CUCORE_TUNE_NOT_MEASURED); /* as a compile failure leaves it */
    assert_contains(row.error, "compile error");
  }
  assert_ok(cucore_tune_report_destroy(r));
  cucore_tune_space_destroy(s);
  return failed;
}

/* Nothing compiled twice: a configuration the compiler refused is kept in the store, and a
 * rerun does not compile it again; a crashed compiler's failure is not kept (the rerun
 * compiles it, and then measures it). */
static void compile_errors_are_kept(void **state) {
  (void)state;
  char db[128];
  snprintf(db, sizeof db, "%s/bad.jsonl", dir);
  cucore_tune_summary sum;
  bad_calls b = {{0}, 1, 0};
  assert_int_equal(tune_bad(db, &b, &sum), 4); /* REPS=4 and REPS=2, two block sizes each */
  assert_int_equal(b.c.compile, 3);
  assert_int_equal(b.four, 1);
  assert_int_equal(sum.compile_failures, 2);
  assert_int_equal(sum.measured, 2);
  assert_int_equal(sum.compile_errors_stored, 0);
  bad_calls again = {{0}, 1, 0};
  assert_int_equal(tune_bad(db, &again, &sum), 4);
  assert_int_equal(again.c.compile, 1); /* REPS=2 only: the crash was not kept */
  assert_int_equal(again.four, 0);
  assert_int_equal(sum.compiles, 1);
  assert_int_equal(sum.compile_errors_stored, 2);
  assert_int_equal(sum.resumed, 4); /* REPS=1 measured, REPS=4 refused */
  assert_int_equal(sum.measured, 0);
  bad_calls healed = {{0}, 0, 0};
  assert_int_equal(tune_bad(db, &healed, &sum), 2);
  assert_int_equal(healed.four, 0); /* (REPS=1 may be compiled again: a finalist from the store) */
  assert_int_equal(sum.measured, 2);
  bad_calls done = {{0}, 0, 0};
  assert_int_equal(tune_bad(db, &done, &sum), 2);
  assert_int_equal(done.c.compile, 0); /* a rerun of a finished tune compiles nothing */
  assert_int_equal(sum.compiles + sum.measured, 0);
  assert_int_equal(sum.resumed, 6);
  assert_int_equal(sum.compile_errors_stored, 2);
}

/* How many times a context was retained and made current (the phase table's count). */
static int context_opens(void) {
  cucore_phase_time t[CUCORE_PHASE_COUNT];
  assert_ok(cucore_phase_get_times(t));
  return t[CUCORE_PHASE_CONTEXT].count;
}

/* One early thread: a tune called cold makes the device's context on its helper thread while
 * its compiles start (two opens: the helper's and its own); with the context made already (the
 * caller's handle open, as `cucore tune`'s own early thread holds one) it starts none (one
 * open: its own); a finished tune opens none. */
static void one_early_thread(void **state) {
  (void)state;
  char db[128];
  snprintf(db, sizeof db, "%s/early.jsonl", dir);
  calls c = {0};
  cucore_tune_summary sum;
  assert_false(cc_device_primary_started(0)); /* the tunes before let their contexts go */
  int n0 = context_opens();
  measured(db, &c, 0, &sum);
  assert_int_equal(context_opens() - n0, 2);
  cucore_device *dev = NULL;
  assert_ok(cucore_device_open(0, &dev));
  assert_true(cc_device_primary_started(0));
  n0 = context_opens();
  calls again = {0};
  char db2[160];
  snprintf(db2, sizeof db2, "%s/early2.jsonl", dir);
  measured(db2, &again, 0, &sum);
  assert_int_equal(sum.measured, 6);
  assert_int_equal(context_opens() - n0, 1);
  assert_ok(cucore_device_close(dev));
  assert_false(cc_device_primary_started(0));
  /* A finished tune (the store has every configuration) makes no context at all: no helper,
   * no buffers, no copies. */
  n0 = context_opens();
  calls done = {0};
  measured(db2, &done, 0, &sum);
  assert_int_equal(sum.resumed, 6);
  assert_int_equal(context_opens() - n0, 0);
  assert_false(cc_device_primary_started(0));
}

static int check(void *user, const void *const *host, char **detail, double *max_abs,
                 double *max_rel) {
  calls *c = user;
  (void)host;
  if (c->check++ != 1) return 0; /* the second configuration checked is wrong */
  *detail = strdup("the second is wrong");
  *max_abs = 2, *max_rel = 0.5;
  return 1;
}

static void check_callback(void **state) {
  (void)state;
  char db[128];
  snprintf(db, sizeof db, "%s/check.jsonl", dir);
  cucore_tune_space *s = space_of();
  calls c = {0};
  cucore_tune_run_options o = options_of(&c, db);
  o.check = check;
  o.finalists = 0;
  cucore_tune_buffer b = out_buffer();
  cucore_tune_report *r = NULL;
  assert_ok(cucore_tune_run(s, NULL, &b, 1, &o, &r));
  cucore_tune_summary sum;
  assert_ok(cucore_tune_report_get_summary(r, &sum));
  assert_int_equal(sum.wrong, 1);
  assert_int_equal(sum.measured, 5);
  assert_int_equal(c.check, 6);
  size_t wrong = 0;
  for (size_t i = 0; i < sum.rows; i++) {
    cucore_tune_row row;
    assert_ok(cucore_tune_report_get_row(r, i, &row));
    if (row.status != CUCORE_TUNE_WRONG_ANSWER) continue;
    wrong++;
    assert_string_equal(row.detail, "the second is wrong");
    assert_true(row.has_error && row.max_abs_err == 2 && row.max_rel_err == 0.5);
  }
  assert_int_equal(wrong, 1);
  assert_string_equal(cucore_tune_result_name(CUCORE_TUNE_WRONG_ANSWER), "wrong-answer");
  assert_string_equal(cucore_tune_result_name((cucore_tune_result)99), "?");
  assert_ok(cucore_tune_report_destroy(r));
  cucore_tune_space_destroy(s);
}

/* What the timing tests launch: a kernel `work(float *y, int n)` that does nothing, compiled,
 * bound to a 4096-byte y and n 1024, on device 0 with a stream of its own. */
typedef struct work_kernel {
  cucore_device *dev;
  cucore_stream *st;
  cucore_program *p;
  cucore_object *obj;
  cucore_kernel *k;
  cucore_args *a;
  cucore_devptr y;
  cucore_launch_config cfg;
} work_kernel;

static void work_open(work_kernel *w) {
  memset(w, 0, sizeof *w);
  assert_ok(cucore_device_open(0, &w->dev));
  assert_ok(cucore_stream_create(w->dev, CUCORE_STREAM_NON_BLOCKING, 0, &w->st));
  const char *code = "extern \"C\" __global__ void work(float *y, int n) {}\n";
  assert_ok(cucore_program_create(CUCORE_CODE_CUDA_CPP, code, 0, "w.cu", NULL, &w->p));
  assert_ok(cucore_program_compile(w->p, CUCORE_CODE_CUBIN, &w->obj));
  assert_ok(cucore_object_get_kernel(w->obj, "work", &w->k));
  assert_ok(cucore_args_create(w->k, &w->a));
  assert_ok(cucore_mem_alloc(w->dev, 4096, &w->y));
  assert_ok(cucore_args_set_ptr(w->a, 0, w->y));
  assert_ok(cucore_args_set_i32(w->a, 1, 1024));
  cucore_launch_config cfg = {{4, 1, 1}, {256, 1, 1}, 0, w->st, 0, {{0}}};
  w->cfg = cfg;
}

static void work_close(work_kernel *w) {
  assert_ok(cucore_mem_free(w->dev, w->y));
  cucore_args_destroy(w->a);
  cucore_kernel_destroy(w->k);
  cucore_object_destroy(w->obj);
  cucore_program_destroy(w->p);
  cucore_stream_destroy(w->st);
  cucore_device_close(w->dev);
}

static void callers_flush_buffer(void **state) {
  (void)state;
  cucore_devptr flush = 0, small = 0;
  work_kernel w;
  work_open(&w);
  assert_ok(cucore_mem_alloc(w.dev, 8192, &flush));
  assert_ok(cucore_mem_alloc(w.dev, 4096, &small));
  cucore_tune_timing_options o = CUCORE_TUNE_TIMING_DEFAULTS;
  o.warmup_ms = 0, o.screen_ms = 0, o.min_samples = 3, o.max_samples = 3;
  o.l2_bytes = 4096;
  o.flush_buffer = flush;
  cucore_tune_timing t;
  assert_ok(cucore_tune_time_launch(w.k, &w.cfg, w.a, &o, &t));
  assert_int_equal(t.stats.n, 3);
  o.flush_buffer = small;
  assert_status(cucore_tune_time_launch(w.k, &w.cfg, w.a, &o, &t), CUCORE_OUT_OF_BOUNDS);
  assert_contains(cucore_last_error(), "4096-byte");
  assert_ok(cucore_mem_free(w.dev, flush)); /* still the caller's */
  assert_ok(cucore_mem_free(w.dev, small));
  work_close(&w);
}

/* The launches the fake driver has seen (kernels of replayed graphs included). */
static long launches_seen(void) {
  void *lib = dlopen(CUCORE_FAKE_DRIVER_PATH, RTLD_NOW | RTLD_NOLOAD);
  assert_non_null(lib);
  long (*count)(void) = (long (*)(void))(uintptr_t)dlsym(lib, "fake_launches");
  assert_non_null(count);
  long n = count();
  dlclose(lib);
  return n;
}

static void exact_samples(void **state) {
  (void)state;
  cucore_graph *g = NULL;
  cucore_graph_exec *exec = NULL;
  cucore_devptr small = 0;
  work_kernel w;
  work_open(&w);
  double ms[40];
  cucore_tune_sample_options o;
  memset(&o, 0, sizeof o);
  o.warmup = 3, o.samples = 37; /* more than the 16 samples queued at once */
  long before = launches_seen();
  assert_ok(cucore_tune_time_samples(w.k, &w.cfg, w.a, &o, ms));
  assert_int_equal(launches_seen() - before, 40);
  for (int i = 0; i < 37; i++) assert_true(ms[i] > 0);
  double one = ms[0];
  o.warmup = 0, o.samples = 5, o.batch = 4; /* each sample 4 launches: the time per launch */
  before = launches_seen();
  assert_ok(cucore_tune_time_samples(w.k, &w.cfg, w.a, &o, ms));
  assert_int_equal(launches_seen() - before, 20);
  assert_true(ms[0] < one);
  o.warmup = 2, o.samples = 0, o.batch = 0; /* the warm-up alone: nothing to write */
  before = launches_seen();
  assert_ok(cucore_tune_time_samples(w.k, &w.cfg, w.a, &o, NULL));
  assert_int_equal(launches_seen() - before, 2);
  assert_ok(cucore_graph_capture_launches(w.k, &w.cfg, w.a, 3, &g));
  assert_ok(cucore_graph_instantiate(g, CUCORE_GRAPH_INSTANTIATE_UPLOAD, w.st, &exec));
  o.warmup = 2, o.samples = 5, o.exec = exec; /* replays: 3 kernels each, no kernel needed */
  before = launches_seen();
  assert_ok(cucore_tune_time_samples(NULL, &w.cfg, NULL, &o, ms));
  assert_int_equal(launches_seen() - before, 21);
  assert_ok(cucore_graph_launch(exec, w.st)); /* still the caller's */
  /* Each mistake named. */
  o.exec = NULL;
  assert_status(cucore_tune_time_samples(NULL, &w.cfg, w.a, &o, ms), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "no kernel `k` and no graph");
  o.samples = -1;
  assert_status(cucore_tune_time_samples(w.k, &w.cfg, w.a, &o, ms), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "samples -1");
  o.samples = 2;
  assert_status(cucore_tune_time_samples(w.k, &w.cfg, w.a, &o, NULL), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "no `ms`");
  assert_status(cucore_tune_time_samples(w.k, &w.cfg, w.a, NULL, ms), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "opt");
  assert_ok(cucore_mem_alloc(w.dev, 4096, &small)); /* a flush buffer under 2 x l2_bytes */
  o.l2_bytes = 4096, o.flush_buffer = small;
  assert_status(cucore_tune_time_samples(w.k, &w.cfg, w.a, &o, ms), CUCORE_OUT_OF_BOUNDS);
  assert_contains(cucore_last_error(), "4096-byte");
  assert_ok(cucore_mem_free(w.dev, small));
  cucore_graph_exec_destroy(exec);
  cucore_graph_destroy(g);
  work_close(&w);
}

/* A long kernel (its lone launches read 2 ms on the fake's events) keeps its 3 lone launches as
 * samples, gets no warm-up and needs long_min_samples; off (0), min_samples as for any. */
static void long_kernels(void **state) {
  (void)state;
  work_kernel w;
  work_open(&w);
  cucore_tune_timing_options o = CUCORE_TUNE_TIMING_DEFAULTS;
  o.screen_ms = 0, o.long_min_samples = 5; /* the warm-up by time stays 10 ms */
  setenv("CUCORE_FAKE_EVENT_MS", "2", 1);
  cucore_tune_timing t;
  long before = launches_seen();
  assert_ok(cucore_tune_time_launch(w.k, &w.cfg, w.a, &o, &t));
  assert_int_equal(t.mode, CUCORE_TUNE_LAUNCH_SINGLE);
  assert_int_equal(t.stats.n, 5);                    /* 3 lone launches kept + 2 */
  assert_int_equal(launches_seen() - before, 1 + 5); /* the untimed one, no warm-up */
  assert_true(t.stats.median > 1.9 && t.stats.median < 2.1);
  o.skip_first = 1;
  before = launches_seen();
  assert_ok(cucore_tune_time_launch(w.k, &w.cfg, w.a, &o, &t));
  assert_int_equal(launches_seen() - before, 5);
  o.long_min_samples = 0, o.warmup_ms = 0; /* off: min_samples (10) after the 3 lone launches */
  before = launches_seen();
  assert_ok(cucore_tune_time_launch(w.k, &w.cfg, w.a, &o, &t));
  assert_int_equal(t.stats.n, 10);
  assert_int_equal(launches_seen() - before, 3 + 10);
  setenv("CUCORE_FAKE_EVENT_MS", "0.5", 1); /* under CUCORE_TUNE_LONG_MS: not a long kernel */
  o.long_min_samples = 5;
  assert_ok(cucore_tune_time_launch(w.k, &w.cfg, w.a, &o, &t));
  assert_int_equal(t.stats.n, 10);
  unsetenv("CUCORE_FAKE_EVENT_MS");
  work_close(&w);
}

int main(void) {
  setenv("CUCORE_LIBCUDA", CUCORE_FAKE_DRIVER_PATH, 1);
  snprintf(dir, sizeof dir, "/tmp/cucore-tune-run-XXXXXX");
  if (!mkdtemp(dir)) return 1;
  char cache[128];
  snprintf(cache, sizeof cache, "%s/cache", dir);
  setenv("CUCORE_CACHE_DIR", cache, 1);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(argument_errors),      cmocka_unit_test(dry_run_counts),
      cmocka_unit_test(measured_and_resumed), cmocka_unit_test(compile_errors_are_kept),
      cmocka_unit_test(one_early_thread),     cmocka_unit_test(check_callback),
      cmocka_unit_test(callers_flush_buffer), cmocka_unit_test(exact_samples),
      cmocka_unit_test(long_kernels),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  char cmd[160];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) rc = rc ? rc : 1;
  return rc;
}
