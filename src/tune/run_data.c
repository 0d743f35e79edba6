/* run_data.c -- the data of a measured tune: the buffers on the device, a pristine copy of
 * every input kept there, so that before each configuration's checked launch inputs and
 * in-place buffers are restored and outputs zeroed (or poisoned: nothing a previous
 * configuration wrote can make a broken one pass), and the check of the outputs: the check
 * callback, or the comparison with the first configuration that ran. That comparison runs on
 * the device first (tune/compare.c, against a device copy of the baseline's outputs): only
 * when some byte differs are the outputs downloaded and compared element by element on the
 * host (tolerances, the error sizes, the first bad index). */
#include "tune/compare.h"
#include "tune/run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cc_tdev {
  cucore_device *dev;
  cucore_stream *stream;
  cucore_device_props props;
  cucore_devptr *ptr;       /* per buffer: on the device */
  cucore_devptr *pristine;  /* per buffer: the initial contents of inputs and in-place ones */
  unsigned char **host;     /* per buffer: its contents after a launch (inputs as given) */
  unsigned char **baseline; /* per buffer: the first configuration's outputs */
  cucore_devptr *base_dev;  /* per buffer: the same on the device (with cmp) */
  cc_tune_cmp *cmp;         /* the device comparison (NULL: compare on the host) */
  cucore_object *cmp_obj;   /* its code, compiled while the device opens (taken by cmp) */
  cucore_devptr flush;      /* the timing's L2 flush buffer, made at its first use */
  int cmp_failed;           /* 1: it could not be made or run once; the host compares */
  int have_baseline;
  uint64_t baseline_index;
};

size_t cc_tdata_bytes(const cucore_tune_buffer *b) { return b->count * b->elem_size; }

cucore_stream *cc_tdata_stream(const cc_trun *c) { return c->dev->stream; }
size_t cc_tdata_l2(const cc_trun *c) { return c->l2_bytes; }
cucore_device *cc_tdata_device(const cc_trun *c) { return c->dev ? c->dev->dev : NULL; }
const cucore_devptr *cc_tdata_ptrs(const cc_trun *c) { return c->dev->ptr; }

cucore_devptr cc_tdata_flush(cc_trun *c, size_t bytes) {
  cc_tdev *d = c->dev;
  if (!d->flush && cucore_mem_alloc(d->dev, bytes, &d->flush) != CUCORE_OK) d->flush = 0;
  return d->flush;
}

static cucore_status fill(cc_tdev *d, const cucore_tune_buffer *b, cucore_devptr *ptr,
                          cucore_devptr *pristine) {
  size_t bytes = cc_tdata_bytes(b);
  cucore_status st = cucore_mem_alloc(d->dev, bytes ? bytes : 1, ptr);
  if (st != CUCORE_OK || b->role == CUCORE_TUNE_OUT) return st;
  st = cucore_mem_alloc(d->dev, bytes ? bytes : 1, pristine);
  if (st == CUCORE_OK && bytes) st = cucore_memcpy_htod(d->dev, *pristine, b->host, bytes, NULL);
  return st;
}

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
  size_t bytes = cc_tdata_bytes(b);
  cucore_status st = cucore_mem_alloc(d->dev, bytes ? bytes : 1, &d->base_dev[i]);
  if (st == CUCORE_OK && bytes)
    st = cucore_memcpy_htod(d->dev, d->base_dev[i], d->baseline[i], bytes, NULL);
  return st;
}

/* The comparison kernel, and the baseline's device copies when there is a baseline already
 * (the device opened again after a fault). A failure leaves the host comparing. */
static void open_compare(cc_trun *c) {
  cc_tdev *d = c->dev;
  if (d->cmp_failed || c->o.check) return; /* the check callback reads host copies */
  cucore_status st = cc_tune_cmp_create(d->dev, d->cmp_obj, &d->cmp);
  d->cmp_obj = NULL; /* taken */
  for (size_t i = 0; i < c->nbufs && st == CUCORE_OK && d->have_baseline; i++)
    if (d->baseline[i]) st = upload_baseline(d, &c->bufs[i], i);
  if (st != CUCORE_OK) compare_off(c, "could not be set up");
}

/* 1 when every output equals the baseline's, byte for byte, compared on the device; 0 when
 * one differs or the device cannot tell (the host compares then). */
static int same_on_device(cc_trun *c) {
  cc_tdev *d = c->dev;
  if (!d->cmp || !d->have_baseline) return 0;
  for (size_t i = 0; i < c->nbufs; i++) {
    if (!d->baseline[i] || !d->base_dev[i]) continue;
    size_t bytes = cc_tdata_bytes(&c->bufs[i]), first = 0;
    cucore_status st = cc_tune_cmp_run(d->cmp, d->stream, d->ptr[i], d->base_dev[i], bytes, &first);
    if (st != CUCORE_OK) {
      compare_off(c, CUCORE_CODE(st) == CUCORE_NOT_SUPPORTED ? "did not run" : "failed");
      return 0;
    }
    if (first < bytes) return 0;
  }
  return 1;
}

/* The device opened, a stream, every buffer made and filled from its initial contents. */
static cucore_status open_device(cc_trun *c) {
  cc_tdev *d = c->dev;
  cucore_status st = cucore_device_get_props(c->o.device, &d->props);
  if (st == CUCORE_OK) st = cucore_device_open(c->o.device, &d->dev);
  if (st == CUCORE_OK) st = cucore_stream_create(d->dev, CUCORE_STREAM_NON_BLOCKING, 0, &d->stream);
  for (size_t i = 0; i < c->nbufs && st == CUCORE_OK; i++) {
    st = fill(d, &c->bufs[i], &d->ptr[i], &d->pristine[i]);
    if (st == CUCORE_OK) st = cucore_stream_synchronize(d->stream);
  }
  if (st == CUCORE_OK) open_compare(c);
  return st;
}

cucore_status cc_tdata_open(cc_trun *c) {
  cc_tdev *d = cc_calloc(1, sizeof *d, "cucore_tune_run: the device's state");
  if (!d) return cucore_last_status();
  c->dev = d;
  size_t n = c->nbufs ? c->nbufs : 1;
  d->ptr = cc_calloc(n, sizeof *d->ptr, "cucore_tune_run: the buffers");
  d->pristine = cc_calloc(n, sizeof *d->pristine, "cucore_tune_run: the buffers");
  d->host = cc_calloc(n, sizeof *d->host, "cucore_tune_run: the buffers");
  d->baseline = cc_calloc(n, sizeof *d->baseline, "cucore_tune_run: the buffers");
  d->base_dev = cc_calloc(n, sizeof *d->base_dev, "cucore_tune_run: the buffers");
  if (!d->ptr || !d->pristine || !d->host || !d->baseline || !d->base_dev)
    return cucore_last_status();
  for (size_t i = 0; i < c->nbufs; i++) {
    size_t bytes = cc_tdata_bytes(&c->bufs[i]);
    d->host[i] = cc_malloc(bytes ? bytes : 1, "cucore_tune_run: a buffer's host copy");
    if (!d->host[i]) return cucore_last_status();
    memcpy(d->host[i], c->bufs[i].host, bytes);
  }
  if (!c->o.check && cc_tune_cmp_compile(&d->cmp_obj) != CUCORE_OK) d->cmp_obj = NULL;
  cc_tearly_wait(c); /* the context made by then */
  cucore_status st = open_device(c);
  cc_tearly_finish(c);
  return st;
}

/* Every buffer, the stream and the device let go (the host data and the baseline kept). */
static void close_device(cc_trun *c) {
  cc_tdev *d = c->dev;
  for (size_t i = 0; i < c->nbufs; i++) {
    if (d->ptr && d->ptr[i]) cucore_mem_free(d->dev, d->ptr[i]);
    if (d->pristine && d->pristine[i]) cucore_mem_free(d->dev, d->pristine[i]);
    if (d->base_dev && d->base_dev[i]) cucore_mem_free(d->dev, d->base_dev[i]);
    if (d->ptr) d->ptr[i] = 0;
    if (d->pristine) d->pristine[i] = 0;
    if (d->base_dev) d->base_dev[i] = 0;
  }
  cc_tune_cmp_destroy(d->cmp);
  d->cmp = NULL;
  if (d->flush) cucore_mem_free(d->dev, d->flush);
  d->flush = 0;
  cucore_stream_destroy(d->stream);
  cucore_device_close(d->dev);
  d->stream = NULL;
  d->dev = NULL;
}

cucore_status cc_tdata_reopen(cc_trun *c) {
  close_device(c);
  return open_device(c);
}

cucore_status cc_tdata_reset(cc_trun *c) {
  cc_tdev *d = c->dev;
  cucore_status st = CUCORE_OK;
  for (size_t i = 0; i < c->nbufs && st == CUCORE_OK; i++) {
    const cucore_tune_buffer *b = &c->bufs[i];
    size_t bytes = cc_tdata_bytes(b);
    if (!bytes) continue;
    if (b->role == CUCORE_TUNE_OUT)
      st = cucore_memset_d8(d->dev, d->ptr[i], c->o.poison ? 0xff : 0, bytes, d->stream);
    else
      st = cucore_memcpy_dtod(d->dev, d->ptr[i], d->pristine[i], bytes, d->stream);
  }
  return st == CUCORE_OK ? cucore_stream_synchronize(d->stream) : st;
}

static int download(cc_trun *c) {
  cc_tdev *d = c->dev;
  for (size_t i = 0; i < c->nbufs; i++) {
    const cucore_tune_buffer *b = &c->bufs[i];
    if (b->role == CUCORE_TUNE_IN || !cc_tdata_bytes(b)) continue;
    if (cucore_memcpy_dtoh(d->dev, d->host[i], d->ptr[i], cc_tdata_bytes(b), d->stream) !=
        CUCORE_OK)
      return -1;
  }
  return cucore_stream_synchronize(d->stream) == CUCORE_OK ? 0 : -1;
}

/* The dtype code of the public comparison for each cucore_tune_elem. */
static const int dtype_codes[] = {CUCORE_DTYPE_INT, CUCORE_DTYPE_UINT, CUCORE_DTYPE_FLOAT,
                                  CUCORE_DTYPE_BFLOAT};

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
    if (memcmp(d->host[i], d->baseline[i], cc_tdata_bytes(b)) == 0) continue;
    /* Integers exactly when neither tolerance was given (a negative one: the default). */
    cucore_compare_result m;
    if (cucore_compare_elements(d->host[i], d->baseline[i], b->count, dtype_codes[b->elem],
                                b->elem_size, c->o.rtol < 0 ? -1 : c->rtol,
                                c->o.atol < 0 ? -1 : c->atol, NULL, 0, &m) != CUCORE_OK)
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
    size_t bytes = cc_tdata_bytes(b);
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

int cc_tdata_verify(cc_trun *c, cucore_tune_row *r) {
  /* Equal bytes: equal values, and no element left poisoned that the baseline wrote. */
  if (!c->o.check && same_on_device(c)) return 0;
  if (download(c) < 0) return -1;
  if (c->o.poison && unwritten(c, r)) return 1;
  if (c->o.check) return against_check(c, r);
  if (!c->dev->have_baseline) return keep_baseline(c, r);
  return against_baseline(c, r);
}

void cc_tdata_close(cc_trun *c) {
  cc_tdev *d = c->dev;
  if (!d) return;
  close_device(c);
  cucore_object_destroy(d->cmp_obj);
  for (size_t i = 0; i < c->nbufs; i++) {
    if (d->baseline) free(d->baseline[i]);
    if (d->host) free(d->host[i]);
  }
  free(d->ptr);
  free(d->pristine);
  free(d->host);
  free(d->baseline);
  free(d->base_dev);
  free(d);
  c->dev = NULL;
}
