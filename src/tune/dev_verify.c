/* dev_verify.c -- the check of a configuration's outputs after its checked launch: the check
 * callback, or the comparison with the first configuration that ran (the baseline). That
 * comparison runs on the device first (tune/compare.c, against a device copy of the baseline's
 * outputs): equal bytes pass, and so do floating-point outputs whose elements all lie within
 * the tolerances (counted on the device by the host's rule); only when some element is outside
 * them (or an integer output differs) are the outputs downloaded and compared element by
 * element on the host (the count, the error sizes, the first bad index, for the report). A
 * heavy kernel's 64 MB output took 24 ms a configuration to download and compare on the host.
 * With poison, an output element still all 0xff bytes was never written: a broken
 * configuration cannot pass on what a previous one left (the host looks at every output). */
#include "tune/devdata.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The device comparison stops: a note says why, the host compares from now on. */
static void compare_off(cc_trun *c, const char *why) {
  cc_tdev *d = c->dev;
  if (!d->cmp_failed)
    cc_trun_note(c, "outputs are compared on the host (the device comparison %s: %s)", why,
                 cucore_last_error());
  d->cmp_failed = 1;
  cc_tune_cmp_destroy(d->cmp);
  d->cmp = NULL;
}

/* A device copy of the baseline's output `i` (from its host copy). */
static cucore_status upload_baseline(cc_tdev *d, const cucore_tune_buffer *b, size_t i) {
  size_t bytes = cc_trun_bytes(b);
  cucore_status st = cucore_mem_alloc(d->dev, bytes ? bytes : 1, &d->base_dev[i]);
  if (st == CUCORE_OK && bytes)
    st = cucore_memcpy_htod(d->dev, d->base_dev[i], d->baseline[i], bytes, NULL);
  return st;
}

void cc_tdev_verify_open(cc_trun *c) {
  cc_tdev *d = c->dev;
  if (d->cmp_failed || c->o.check) return; /* the check callback reads host copies */
  cucore_status st = cc_tune_cmp_create(d->dev, d->cmp_obj, &d->cmp);
  d->cmp_obj = NULL; /* taken */
  for (size_t i = 0; i < c->nbufs && st == CUCORE_OK && d->have_baseline; i++)
    if (d->baseline[i]) st = upload_baseline(d, &c->bufs[i], i);
  if (st != CUCORE_OK) compare_off(c, "could not be set up");
}

/* 1 when floating-point output i (whose bytes differ from the baseline's) is within the
 * tolerances everywhere, counted on the device; 0 when some element is not, or the device
 * cannot tell (*failed then). With poison the host looks anyway (unwritten elements). */
static int within_on_device(cc_trun *c, size_t i, cucore_status *failed) {
  cc_tdev *d = c->dev;
  const cucore_tune_buffer *b = &c->bufs[i];
  int kind = cc_tune_cmp_kind(cc_trun_dtype(b->elem), b->elem_size);
  if (kind < 0 || c->o.poison) return 0;
  size_t outside = b->count;
  *failed = cc_tune_cmp_within(d->cmp, d->stream, d->ptr[i], d->base_dev[i], b->count, kind,
                               c->o.rtol < 0 ? CC_COMPARE_RTOL : c->o.rtol,
                               c->o.atol < 0 ? CC_COMPARE_ATOL : c->o.atol, &outside);
  return *failed == CUCORE_OK && outside == 0;
}

/* 1 when every output matches the baseline's on the device: the same bytes, or a
 * floating-point output within the tolerances; 0 when one does not or the device cannot tell
 * (the host compares then). */
static int matches_on_device(cc_trun *c) {
  cc_tdev *d = c->dev;
  if (!d->cmp || !d->have_baseline) return 0;
  for (size_t i = 0; i < c->nbufs; i++) {
    if (!d->baseline[i] || !d->base_dev[i]) continue;
    size_t bytes = cc_trun_bytes(&c->bufs[i]), first = 0;
    cucore_status st = cc_tune_cmp_run(d->cmp, d->stream, d->ptr[i], d->base_dev[i], bytes, &first);
    int same = st == CUCORE_OK && (first >= bytes || within_on_device(c, i, &st));
    if (st != CUCORE_OK) {
      compare_off(c, CUCORE_CODE(st) == CUCORE_NOT_SUPPORTED ? "did not run" : "failed");
      return 0;
    }
    if (!same) return 0;
  }
  return 1;
}

static int download(cc_trun *c) {
  cc_tdev *d = c->dev;
  for (size_t i = 0; i < c->nbufs; i++) {
    const cucore_tune_buffer *b = &c->bufs[i];
    if (b->role == CUCORE_TUNE_IN || !cc_trun_bytes(b)) continue;
    if (cucore_memcpy_dtoh(d->dev, d->host[i], d->ptr[i], cc_trun_bytes(b), d->stream) != CUCORE_OK)
      return -1;
  }
  return cucore_stream_synchronize(d->stream) == CUCORE_OK ? 0 : -1;
}

static void set_error(cucore_tune_row *r, double abs_err, double rel_err) {
  if (!r->has_error || abs_err > r->max_abs_err) r->max_abs_err = abs_err;
  if (!r->has_error || rel_err > r->max_rel_err) r->max_rel_err = rel_err;
  r->has_error = 1;
}

/* The outputs against the baseline's; 1 and r->detail when one differs (-1: the comparison
 * failed). */
static int against_baseline(cc_trun *c, cucore_tune_row *r) {
  cc_tdev *d = c->dev;
  for (size_t i = 0; i < c->nbufs; i++) {
    const cucore_tune_buffer *b = &c->bufs[i];
    if (!d->baseline[i]) continue;
    /* The same bytes are the same values (NaN = NaN, exact = within any tolerance): one
     * memcmp instead of a comparison per element, the common case of a correct config. */
    if (memcmp(d->host[i], d->baseline[i], cc_trun_bytes(b)) == 0) continue;
    /* Integers exactly when neither tolerance was given (a negative one: the default). */
    cucore_compare_result m;
    if (cucore_compare_elements(d->host[i], d->baseline[i], b->count, cc_trun_dtype(b->elem),
                                b->elem_size, c->o.rtol < 0 ? -1 : c->o.rtol,
                                c->o.atol < 0 ? -1 : c->o.atol, NULL, 0, &m) != CUCORE_OK)
      return -1;
    if (!m.mismatches) continue;
    set_error(r, m.max_abs_err, m.max_rel_err);
    cc_trun_text(&r->detail,
                 "argument %s: %zu of %zu differ from configuration "
                 "%llu's, first at [%zu], max abs error %g, max rel error %g",
                 b->label, m.mismatches, b->count, (unsigned long long)d->baseline_index, m.first,
                 m.max_abs_err, m.max_rel_err);
    return 1;
  }
  return 0;
}

static int keep_baseline(cc_trun *c, cucore_tune_row *r) {
  cc_tdev *d = c->dev;
  for (size_t i = 0; i < c->nbufs; i++) {
    const cucore_tune_buffer *b = &c->bufs[i];
    if (b->role == CUCORE_TUNE_IN) continue;
    size_t bytes = cc_trun_bytes(b);
    d->baseline[i] = cc_malloc(bytes ? bytes : 1, "cucore_tune_run: the baseline's outputs");
    if (!d->baseline[i]) return -1;
    memcpy(d->baseline[i], d->host[i], bytes);
    if (d->cmp && upload_baseline(d, b, i) != CUCORE_OK)
      compare_off(c, "could not keep the baseline");
  }
  d->have_baseline = 1;
  d->baseline_index = r->config.index;
  cc_trun_text(&r->detail, "%s",
               "the baseline: later configurations are compared with its outputs (no --expect)");
  return 0;
}

/* The check callback on the outputs. */
static int against_check(cc_trun *c, cucore_tune_row *r) {
  double max_abs = 0, max_rel = 0;
  char *detail = NULL;
  int v = c->o.check(c->o.user, (const void *const *)c->dev->host, &detail, &max_abs, &max_rel);
  if (v != 0 && detail) cc_trun_text(&r->detail, "%s", detail);
  free(detail);
  if (v <= 0) return v < 0 ? -1 : 0;
  set_error(r, max_abs, max_rel);
  return 1;
}

/* With poison: outputs with elements still all 0xff bytes were never written. */
static int unwritten(cc_trun *c, cucore_tune_row *r) {
  for (size_t i = 0; i < c->nbufs; i++) {
    const cucore_tune_buffer *b = &c->bufs[i];
    if (b->role != CUCORE_TUNE_OUT) continue;
    size_t es = b->elem_size, bad = 0, first = 0;
    for (size_t k = 0; k < b->count; k++) {
      size_t j = 0;
      while (j < es && c->dev->host[i][k * es + j] == 0xff) j++;
      if (j == es && !bad++) first = k;
    }
    if (!bad) continue;
    cc_trun_text(&r->detail,
                 "argument %s: %zu of %zu elements were never written "
                 "(still poisoned), first at [%zu]",
                 b->label, bad, b->count, first);
    return 1;
  }
  return 0;
}

int cc_tdev_verify(cc_trun *c, cucore_tune_row *r) {
  /* Equal bytes: equal values, and no element left poisoned that the baseline wrote; values
   * within the tolerances (without poison): what the host would find. */
  if (!c->o.check && matches_on_device(c)) return 0;
  if (download(c) < 0) return -1;
  if (c->o.poison && unwritten(c, r)) return 1;
  if (c->o.check) return against_check(c, r);
  if (!c->dev->have_baseline) return keep_baseline(c, r);
  return against_baseline(c, r);
}
