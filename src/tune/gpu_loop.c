/* gpu_loop.c -- a measured tune on the GPU: while the compile threads work, the calling thread
 * takes each finished compile, and for each of its configurations that the model lets run:
 * takes it from the store (a resumed tune measures nothing twice), else resets the data,
 * launches once and checks the outputs (a wrong answer is recorded, never timed), then times
 * it and appends the result to the store. Failures are data: the tune goes on. With
 * model_first (or a top_fraction), every compile is made first and the configurations are
 * measured best model score first; beyond the top fraction they are recorded as skipped.
 *
 * Two tunes on one store share the work. Each group of configurations that share one compile
 * has an advisory lock (cucore_tune_store_lock: a byte of STORE.lock at an offset from the
 * group's compile hash and the tune's key, problem and device; an fcntl lock, which dies with
 * its process, kill -9 included). Before measuring a group the tune claims it without waiting
 * (cc_tstore_claim): with the lock taken it reads what other processes appended to the store
 * since (cucore_tune_store_refresh), takes the group's results found there as resumed rows and
 * measures only the rest, then lets the lock go. A group another process holds is put off to
 * the end; there the tune waits for each group it put off in turn (holding no other lock, so
 * two tunes never wait for each other) and does the same. So each configuration is measured
 * once, by whichever tune claims its group first; the other's report shows it as resumed. A
 * tune whose store is read-only, a --fresh one, and one that cannot make the lock file (said
 * once) measure without locks. Model-first measures row by row, claiming each row's group. */
#include "tune/measuring.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* cc_tmeas_bind_kernel, its time counted as loading. */
static cucore_status bind_timed(cc_trun *c, const cc_tgroup *g, cucore_kernel **k,
                                cucore_args **a) {
  double t0 = cc_trun_now_ms();
  cucore_status st = cc_tmeas_bind_kernel(c, g, k, a);
  c->s.load_ms += cc_trun_now_ms() - t0;
  return st;
}

/* The next compiled group; a compile the compiler refused is recorded in the store as each of
 * its configurations' result (a rerun does not compile it again). */
static cc_tgroup *next_group(cc_trun *c) {
  cc_tgroup *g = cc_tcomp_next(c);
  if (g && !g->deferred && !g->ok && g->definite) cc_tstore_record_compile_error(c, g);
  return g;
}

/* 1 when group g has a configuration still to measure. */
static int has_work(const cc_trun *c, const cc_tgroup *g) {
  for (size_t i = c->round_first; i < c->s.rows; i++) {
    const cucore_tune_row *r = &c->rows[i];
    if (r->config.compile_hash == g->hash && r->config.verdict == CUCORE_TUNE_RUNNABLE &&
        !r->resumed && r->status == CUCORE_TUNE_NOT_MEASURED)
      return 1;
  }
  return 0;
}

static void measure_group(cc_trun *c, const cc_tgroup *g) {
  cucore_kernel *k = NULL;
  cucore_args *a = NULL;
  int ok = g->ok && (!has_work(c, g) || bind_timed(c, g, &k, &a) == CUCORE_OK);
  unsigned resets = c->s.resets;
  size_t last = 0;
  for (size_t i = c->round_first; i < c->s.rows; i++)
    if (c->rows[i].config.compile_hash == g->hash) last = i;
  for (size_t i = c->round_first; i < c->s.rows; i++) {
    cucore_tune_row *r = &c->rows[i];
    if (r->config.compile_hash != g->hash || r->config.verdict != CUCORE_TUNE_RUNNABLE || !g->ok)
      continue;
    c->meas->last_of_group = i == last;
    if (resets != c->s.resets) { /* the device was reset: the kernel and its arguments anew */
      cucore_args_destroy(a);
      cucore_kernel_destroy(k);
      k = NULL, a = NULL, resets = c->s.resets;
      ok = c->s.lost || bind_timed(c, g, &k, &a) == CUCORE_OK;
    }
    if (ok)
      cc_tmeas_one(c, k, a, r);
    else
      cc_trun_failed(c, r, CUCORE_TUNE_BIND_ERROR, cucore_last_error());
    cc_tmeas_progress(c, r, 0);
  }
  c->meas->last_of_group = 0;
  cucore_args_destroy(a);
  cucore_kernel_destroy(k);
}

static void measure_row_of(cc_trun *c, cucore_tune_row *r) {
  const cc_tgroup *g = cc_tcomp_group_of(c, r);
  cucore_kernel *k = NULL;
  cucore_args *a = NULL;
  if (!r->resumed) { /* else from the store, or measured by another tune meanwhile */
    if (g && g->obj && bind_timed(c, g, &k, &a) == CUCORE_OK)
      cc_tmeas_one(c, k, a, r);
    else
      cc_trun_failed(c, r, CUCORE_TUNE_BIND_ERROR, cucore_last_error());
  }
  cucore_args_destroy(a);
  cucore_kernel_destroy(k);
  cc_tmeas_progress(c, r, 0);
}

/* What was put off: the groups another tune held. v NULL: none could be kept, so every claim
 * waits. */
typedef struct later_groups {
  cc_tgroup **v;
  size_t n;
} later_groups;

/* The same of rows, model-first (their indices). */
typedef struct later_rows {
  size_t *v;
  size_t n;
} later_rows;

/* Another shard's group g, claimed (the store refreshed): compiled here and measured when
 * the other shards left configurations of it (a compile the compiler refused kept). */
static void take_over_claimed(cc_trun *c, cc_tgroup *g) {
  if (has_work(c, g)) {
    c->s.taken_over++;
    if (cc_tcomp_take_over(c, g) != 0 && g->definite) cc_tstore_record_compile_error(c, g);
    measure_group(c, g);
  }
  cc_tstore_release(c, g->hash);
}

/* Group g measured when claimed; put off when another tune holds it; another shard's group
 * kept for the end (`foreign`). */
static void take_group(cc_trun *c, cc_tgroup *g, later_groups *l, later_groups *foreign) {
  if (g->foreign && g->deferred) {
    if (foreign->v) {
      foreign->v[foreign->n++] = g;
    } else if (has_work(c, g) &&
               !c->o.shard_own_only) { /* none could be kept: taken over now, waiting for it */
      cc_tstore_claim(c, g->hash, 1);
      take_over_claimed(c, g);
    }
    return;
  }
  int work = g->ok && has_work(c, g);
  if (work && !cc_tstore_claim(c, g->hash, !l->v)) {
    l->v[l->n++] = g;
    return;
  }
  measure_group(c, g);
  if (work) cc_tstore_release(c, g->hash);
}

/* The groups put off, each waited for in turn. */
static void take_later_groups(cc_trun *c, const later_groups *l) {
  for (size_t i = 0; i < l->n; i++) {
    cc_tgroup *g = l->v[i];
    cc_tstore_claim(c, g->hash, 1);
    measure_group(c, g);
    cc_tstore_release(c, g->hash);
  }
}

/* The other shards' groups, once this shard's share is done: each one that nobody holds is
 * claimed and, when some of it is left, taken over; last first (each shard works through its
 * share first to last, so the two meet late); the held ones are waited for in turn, which
 * finds them measured unless their shard died. */
static void take_over(cc_trun *c, const later_groups *foreign) {
  if (c->o.shard_own_only) return; /* the others' share is theirs: their rows not measured */
  later_groups held = {cc_raw_calloc(foreign->n ? foreign->n : 1, sizeof *held.v), 0};
  for (size_t j = foreign->n; j-- > 0;) {
    cc_tgroup *g = foreign->v[j];
    if (!has_work(c, g)) continue;
    if (cc_tstore_claim(c, g->hash, !held.v))
      take_over_claimed(c, g);
    else
      held.v[held.n++] = g;
  }
  for (size_t j = 0; j < held.n; j++) {
    cc_tstore_claim(c, held.v[j]->hash, 1);
    take_over_claimed(c, held.v[j]);
  }
  free(held.v);
}

/* Row `row` measured when its group is claimed (waiting for it when `wait`), else put off. */
static void take_row(cc_trun *c, size_t row, later_rows *l, int wait) {
  cucore_tune_row *r = &c->rows[row];
  int claimed = !r->resumed;
  if (claimed && !cc_tstore_claim(c, r->config.compile_hash, wait || !l->v)) {
    l->v[l->n++] = row;
    return;
  }
  measure_row_of(c, r);
  if (claimed) cc_tstore_release(c, r->config.compile_hash);
}

/* Every compile first, then the rows best model score first (the top fraction of them). */
static void measure_model_first(cc_trun *c) {
  while (next_group(c)) {}
  size_t *order = cc_raw_calloc(c->s.rows ? c->s.rows : 1, sizeof *order);
  size_t n = order ? cc_trun_model_order(c->rows, c->s.rows, order) : 0;
  later_rows l = {cc_raw_calloc(c->s.rows ? c->s.rows : 1, sizeof *l.v), 0};
  double f = c->o.top_fraction;
  size_t take = f > 0 ? (size_t)ceil(f * (double)n) : n;
  for (size_t i = 0; i < n; i++) {
    cucore_tune_row *r = &c->rows[order[i]];
    if (i < take) {
      take_row(c, order[i], &l, 0);
      continue;
    }
    r->status = CUCORE_TUNE_SKIPPED;
    cc_trun_text(&r->detail, "model score %.3f is outside --top-fraction %g", r->model.score, f);
    c->s.skipped++;
  }
  for (size_t i = 0; i < l.n; i++) take_row(c, l.v[i], &l, 1);
  free(order);
  free(l.v);
}

/* 1 when the store had every runnable row of a plain tune (not model-first, not a search):
 * a finished tune, which needs no device at all. */
static int finished_before(const cc_trun *c) {
  if (c->o.model_first || c->o.top_fraction > 0 || c->o.max_evals) return 0;
  for (size_t i = 0; i < c->s.rows; i++) {
    const cucore_tune_row *r = &c->rows[i];
    if (r->config.verdict == CUCORE_TUNE_RUNNABLE && !r->resumed) return 0;
  }
  return 1;
}

/* A report-only tune: the rows the store does not have say so (they stay not measured). */
static void not_in_store(cc_trun *c) {
  for (size_t i = 0; i < c->s.rows; i++) {
    cucore_tune_row *r = &c->rows[i];
    if (r->config.verdict == CUCORE_TUNE_RUNNABLE && !r->resumed)
      cc_trun_text(&r->detail, "%s", "not in the store (a report of the store only)");
  }
}

/* The rotation's plan and the store (the key names the timing) with the rows it has (a
 * resumed group is not compiled); the compiles started; then, unless the store had everything,
 * the device's context started on a helper thread (made while the compiles run), the device,
 * the clock probe and the rotation's copies. A finished tune makes no context at all
 * (`cucore tune`'s own early thread only initialises the driver). */
static cucore_status prepare(cc_trun *c) {
  cc_tdev_rot_plan(c);
  cucore_status st = cc_tstore_open(c);
  if (st == CUCORE_OK) cc_tstore_resume(c);
  if (st == CUCORE_OK && c->o.report_only) not_in_store(c);
  int finished = st == CUCORE_OK && (c->o.report_only || finished_before(c)) &&
                 !c->o.retime_finalists;
  if (st == CUCORE_OK && !finished) cc_tdev_early_start(c);
  if (st == CUCORE_OK) st = cc_tcomp_start(c, 1); /* the groups keep their objects */
  if (st != CUCORE_OK || finished) return st;     /* finished: nothing to launch */
  st = cc_tdev_open(c);
  if (st == CUCORE_OK) cc_tdev_probe_clock(c);
  if (st == CUCORE_OK) st = cc_tdev_rot_open(c);
  return st;
}

cucore_status cc_tmeas_begin(cc_trun *c) {
  cc_tmeas *m = c->meas;
  double t_setup = cc_trun_now_ms();
  cucore_status st = prepare(c);
  m->t_start = cc_trun_now_ms();
  c->s.setup_ms = m->t_start - t_setup;
  return st;
}

void cc_tmeas_groups(cc_trun *c) {
  size_t ng = cc_tcomp_count(c);
  later_groups l = {cc_raw_calloc(ng ? ng : 1, sizeof *l.v), 0};
  later_groups foreign = {cc_raw_calloc(ng ? ng : 1, sizeof *foreign.v), 0};
  for (cc_tgroup *g;;) {
    double t0 = cc_trun_now_ms();
    if (!(g = next_group(c))) break;
    if (c->s.first_ready_ms) /* the first wait is first_ready_ms */
      c->s.wait_ms += cc_trun_now_ms() - t0;
    else
      c->s.first_ready_ms = cc_trun_now_ms() - c->meas->t_start;
    take_group(c, g, &l, &foreign);
  }
  take_later_groups(c, &l);
  take_over(c, &foreign);
  free(l.v);
  free(foreign.v);
}

cucore_status cc_tmeas_end(cc_trun *c, cucore_status st) {
  if (st == CUCORE_OK) cc_tmeas_progress(c, NULL, 1);
  if (st == CUCORE_OK)
    cc_tmeas_final(c); /* before the store closes: finalists are recorded again */
  c->s.measure_wall_ms = cc_trun_now_ms() - c->meas->t_start;
  cc_tcomp_finish(c);
  cc_tdev_rot_close(c);
  cc_tdev_close(c);
  cc_tstore_close(c);
  return st == CUCORE_OK ? cc_tcomp_kernel_found(c) : st;
}

cucore_status cc_tmeas_all(cc_trun *c) {
  cucore_status st = cc_tmeas_begin(c);
  if (st == CUCORE_OK && (c->o.model_first || c->o.top_fraction > 0)) measure_model_first(c);
  if (st == CUCORE_OK) cc_tmeas_groups(c);
  return cc_tmeas_end(c, st);
}
