/* tune_check.c -- the data of a measured tune: `cucore run`'s --arg buffers on device 0, a
 * pristine copy of every input kept on the device, so that before each configuration's
 * checked launch inputs and in-place buffers are restored and outputs zeroed (or poisoned with
 * --poison: nothing a previous configuration wrote can make a broken one pass), and the check
 * of the outputs against --expect or the first configuration that ran. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tune.h"

struct tune_dev {
  cucore_device *dev;
  cucore_stream *stream;
  cucore_device_props props;
  cucore_devptr *pristine;  /* per buffer: the initial contents of inputs and in-place ones */
  unsigned char **baseline; /* per buffer: the first configuration's outputs (host) */
  unsigned char **initial;  /* per buffer: the initial contents of inputs and in-place ones
                               (host), to make them again after a reset */
  int have_baseline;
  uint64_t baseline_index;
};

static size_t buf_bytes(const run_buf *b) { return b->count * (size_t)elem_sizes[b->type]; }

cucore_stream *tune_dev_stream(const tune_ctx *c) { return c->dev->stream; }
size_t tune_dev_l2(const tune_ctx *c) { return (size_t)c->dev->props.l2_cache_bytes; }
cucore_device *tune_dev_device(const tune_ctx *c) { return c->dev->dev; }

static cucore_status fill(struct tune_dev *d, run_buf *b, cucore_devptr *pristine) {
  size_t bytes = buf_bytes(b);
  cucore_status st = cucore_mem_alloc(d->dev, bytes ? bytes : 1, &b->ptr);
  if (st != CUCORE_OK || b->role == ROLE_OUT) return st;
  st = cucore_mem_alloc(d->dev, bytes ? bytes : 1, pristine);
  if (st == CUCORE_OK && bytes) st = cucore_memcpy_htod(d->dev, *pristine, b->host, bytes, NULL);
  return st;
}

/* Device 0 opened, a stream, every buffer made and filled from its host values. */
static int open_device(tune_ctx *c) {
  struct tune_dev *d = c->dev;
  cucore_status st = cucore_device_get_props(0, &d->props);
  if (st == CUCORE_OK) st = cucore_device_open(0, &d->dev);
  if (st == CUCORE_OK) st = cucore_stream_create(d->dev, CUCORE_STREAM_NON_BLOCKING, 0, &d->stream);
  if (st != CUCORE_OK) return cli_fail("tune", "opening the GPU", st);
  for (int i = 0; i < c->o.nbufs; i++) {
    st = fill(d, &c->o.bufs[i], &d->pristine[i]);
    if (st == CUCORE_OK) st = cucore_stream_synchronize(d->stream);
    if (st != CUCORE_OK) return cli_fail("tune", c->o.bufs[i].spec, st);
  }
  return 0;
}

/* Host copies of the initial contents of inputs and in-place buffers. */
static int keep_initial(tune_ctx *c) {
  for (int i = 0; i < c->o.nbufs; i++) {
    const run_buf *b = &c->o.bufs[i];
    if (b->role == ROLE_OUT) continue;
    c->dev->initial[i] = malloc(buf_bytes(b) ? buf_bytes(b) : 1);
    if (!c->dev->initial[i]) return cli_fail("tune", b->spec, CUCORE_HOST_OUT_OF_MEMORY);
    memcpy(c->dev->initial[i], b->host, buf_bytes(b));
  }
  return 0;
}

int tune_dev_open(tune_ctx *c) {
  struct tune_dev *d = calloc(1, sizeof *d);
  if (!d) return cli_fail("tune", "the GPU", CUCORE_HOST_OUT_OF_MEMORY);
  c->dev = d;
  size_t n = (size_t)(c->o.nbufs ? c->o.nbufs : 1);
  d->pristine = calloc(n, sizeof *d->pristine);
  d->baseline = calloc(n, sizeof *d->baseline);
  d->initial = calloc(n, sizeof *d->initial);
  if (!d->pristine || !d->baseline || !d->initial)
    return cli_fail("tune", "buffers", CUCORE_HOST_OUT_OF_MEMORY);
  int rc = keep_initial(c);
  return rc ? rc : open_device(c);
}

/* Every buffer, the stream and the device let go (the host data and the baseline kept). */
static void close_device(tune_ctx *c) {
  struct tune_dev *d = c->dev;
  for (int i = 0; i < c->o.nbufs; i++) {
    if (c->o.bufs[i].ptr) cucore_mem_free(d->dev, c->o.bufs[i].ptr);
    if (d->pristine && d->pristine[i]) cucore_mem_free(d->dev, d->pristine[i]);
    c->o.bufs[i].ptr = 0;
    if (d->pristine) d->pristine[i] = 0;
  }
  cucore_stream_destroy(d->stream);
  cucore_device_close(d->dev);
  d->stream = NULL;
  d->dev = NULL;
}

int tune_dev_reopen(tune_ctx *c) {
  close_device(c);
  for (int i = 0; i < c->o.nbufs; i++)
    if (c->dev->initial[i]) memcpy(c->o.bufs[i].host, c->dev->initial[i], buf_bytes(&c->o.bufs[i]));
  return open_device(c);
}

cucore_status tune_dev_reset(tune_ctx *c) {
  struct tune_dev *d = c->dev;
  cucore_status st = CUCORE_OK;
  for (int i = 0; i < c->o.nbufs && st == CUCORE_OK; i++) {
    run_buf *b = &c->o.bufs[i];
    size_t bytes = buf_bytes(b);
    if (!bytes) continue;
    if (b->role == ROLE_OUT)
      st = cucore_memset_d8(d->dev, b->ptr, c->line->poison ? 0xff : 0, bytes, d->stream);
    else
      st = cucore_memcpy_dtod(d->dev, b->ptr, d->pristine[i], bytes, d->stream);
  }
  return st == CUCORE_OK ? cucore_stream_synchronize(d->stream) : st;
}

static int download(tune_ctx *c) {
  struct tune_dev *d = c->dev;
  for (int i = 0; i < c->o.nbufs; i++) {
    run_buf *b = &c->o.bufs[i];
    if (b->role == ROLE_IN || !buf_bytes(b)) continue;
    if (cucore_memcpy_dtoh(d->dev, b->host, b->ptr, buf_bytes(b), d->stream) != CUCORE_OK)
      return -1;
  }
  return cucore_stream_synchronize(d->stream) == CUCORE_OK ? 0 : -1;
}

static int same(const run_opts *o, elem_t t, const void *got, const void *want, size_t k,
                double rtol, double atol) {
  size_t es = (size_t)elem_sizes[t];
  if (!elem_is_float(t) && !o->has_rtol && !o->has_atol)
    return memcmp((const char *)got + k * es, (const char *)want + k * es, es) == 0;
  double g = value_get(got, t, k), w = value_get(want, t, k);
  if (isnan(g) || isnan(w)) return isnan(g) && isnan(w);
  if (isinf(g) || isinf(w)) return g == w;
  return fabs(g - w) <= atol + rtol * fabs(w);
}

static void set_error(tune_row *r, double abs_err, double rel_err) {
  if (!r->has_error || abs_err > r->max_abs_err) r->max_abs_err = abs_err;
  if (!r->has_error || rel_err > r->max_rel_err) r->max_rel_err = rel_err;
  r->has_error = 1;
}

/* The outputs against the baseline's; 1 and r->detail when one differs. */
static int against_baseline(tune_ctx *c, tune_row *r) {
  struct tune_dev *d = c->dev;
  double rtol = c->o.has_rtol ? c->o.rtol : 1e-5, atol = c->o.has_atol ? c->o.atol : 1e-8;
  for (int i = 0; i < c->o.nbufs; i++) {
    run_buf *b = &c->o.bufs[i];
    if (!d->baseline[i]) continue;
    /* The same bytes are the same values (NaN = NaN, exact = within any tolerance): one
     * memcmp instead of a comparison per element, the common case of a correct config. */
    if (memcmp(b->host, d->baseline[i], buf_bytes(b)) == 0) continue;
    size_t bad = 0, first = 0;
    double abs_err = 0, rel_err = 0;
    for (size_t k = 0; k < b->count; k++) {
      if (same(&c->o, b->type, b->host, d->baseline[i], k, rtol, atol)) continue;
      if (!bad++) first = k;
      run_track_error(value_get(b->host, b->type, k), value_get(d->baseline[i], b->type, k),
                      &abs_err, &rel_err);
    }
    if (!bad) continue;
    set_error(r, abs_err, rel_err);
    snprintf(r->detail, sizeof r->detail,
             "argument %s: %zu of %zu differ from configuration "
             "%llu's, first at [%zu], max abs error %g, max rel error %g",
             b->label, bad, b->count, (unsigned long long)d->baseline_index, first, abs_err,
             rel_err);
    return 1;
  }
  return 0;
}

static int keep_baseline(tune_ctx *c, tune_row *r) {
  struct tune_dev *d = c->dev;
  for (int i = 0; i < c->o.nbufs; i++) {
    run_buf *b = &c->o.bufs[i];
    if (b->role == ROLE_IN) continue;
    d->baseline[i] = malloc(buf_bytes(b) ? buf_bytes(b) : 1);
    if (!d->baseline[i]) return -1;
    memcpy(d->baseline[i], b->host, buf_bytes(b));
  }
  d->have_baseline = 1;
  d->baseline_index = r->cfg.index;
  snprintf(r->detail, sizeof r->detail,
           "the baseline: later configurations are compared with "
           "its outputs (no --expect)");
  return 0;
}

static int against_expects(tune_ctx *c, tune_row *r) {
  int failed = run_check_expects(&c->o);
  if (failed <= 0) return failed;
  int said = 0;
  for (int i = 0; i < c->o.nexpects; i++) {
    const run_expect *e = &c->o.expects[i];
    if (!e->mismatches) continue;
    set_error(r, e->max_abs_err, e->max_rel_err);
    if (said++) continue;
    snprintf(r->detail, sizeof r->detail,
             "--expect %s: %zu of %zu differ, first at [%zu]: "
             "got %s, want %s, max abs error %g, max rel error %g",
             e->target, e->mismatches, e->count, e->shown ? e->bad_index[0] : 0,
             e->shown ? e->got[0] : "?", e->shown ? e->want[0] : "?", e->max_abs_err,
             e->max_rel_err);
  }
  return 1;
}

/* With --poison: outputs with elements still all 0xff bytes were never written. */
static int unwritten(tune_ctx *c, tune_row *r) {
  for (int i = 0; i < c->o.nbufs; i++) {
    const run_buf *b = &c->o.bufs[i];
    if (b->role != ROLE_OUT) continue;
    size_t es = (size_t)elem_sizes[b->type], bad = 0, first = 0;
    for (size_t k = 0; k < b->count; k++) {
      size_t j = 0;
      while (j < es && b->host[k * es + j] == 0xff) j++;
      if (j == es && !bad++) first = k;
    }
    if (!bad) continue;
    snprintf(r->detail, sizeof r->detail,
             "argument %s: %zu of %zu elements were never written "
             "(still poisoned), first at [%zu]",
             b->label, bad, b->count, first);
    return 1;
  }
  return 0;
}

int tune_dev_verify(tune_ctx *c, tune_row *r) {
  if (download(c) < 0) return -1;
  if (c->line->poison && unwritten(c, r)) return 1;
  if (c->o.nexpects) return against_expects(c, r);
  if (!c->dev->have_baseline) return keep_baseline(c, r);
  return against_baseline(c, r);
}

void tune_dev_close(tune_ctx *c) {
  struct tune_dev *d = c->dev;
  if (!d) return;
  close_device(c);
  for (int i = 0; i < c->o.nbufs; i++) {
    if (d->baseline) free(d->baseline[i]);
    if (d->initial) free(d->initial[i]);
  }
  free(d->pristine);
  free(d->baseline);
  free(d->initial);
  free(d);
  c->dev = NULL;
}
