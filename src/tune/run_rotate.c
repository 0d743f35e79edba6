/* run_rotate.c -- cold rotation (CUCORE_TUNE_COLD_ROTATE, or AUTO when it fits): copies of
 * every buffer, enough that the copies' footprint is past 2 x the device's L2, each bound to
 * its own argument set
 * (run_time.c) and cycled launch by launch while a configuration is timed
 * (cucore_tune_timing_options::rotate), so samples read cold data without an L2 flush. The
 * plan is made before the device opens (the store's key names the timing): too many copies (a
 * footprint under L2 / 32) means the flush instead, said once in a note (AUTO flushes without
 * a note, also when the copies would take more than 1/8 of the device's memory); no room on
 * the device for the copies is an error naming --cold flush. */
#include "tune/run.h"

#include <stdlib.h>

#define CC_TROT_MAX 64

struct cc_trot {
  int sets;           /* extra argument sets (copies of every buffer) */
  cucore_devptr *ptr; /* sets x nbufs */
};

static size_t footprint(const cc_trun *c) {
  size_t f = 0;
  for (size_t i = 0; i < c->nbufs; i++) f += cc_tdata_bytes(&c->bufs[i]);
  return f;
}

static cucore_status copies(cc_trun *c, cc_trot *r) {
  cucore_device *dev = cc_tdata_device(c);
  cucore_status st = CUCORE_OK;
  for (size_t s = 0; s < (size_t)r->sets && st == CUCORE_OK; s++)
    for (size_t i = 0; i < c->nbufs && st == CUCORE_OK; i++) {
      const cucore_tune_buffer *b = &c->bufs[i];
      size_t bytes = cc_tdata_bytes(b);
      st = cucore_mem_alloc(dev, bytes ? bytes : 1, &r->ptr[s * c->nbufs + i]);
      if (st == CUCORE_OK && bytes && b->role != CUCORE_TUNE_OUT)
        st = cucore_memcpy_htod(dev, r->ptr[s * c->nbufs + i], b->host, bytes, NULL);
    }
  return st;
}

void cc_trot_plan(cc_trun *c) {
  int autom = c->o.cold == CUCORE_TUNE_COLD_AUTO;
  size_t f = footprint(c), l2 = cc_tdata_l2(c);
  c->s.cold = autom ? CUCORE_TUNE_COLD_FLUSH : c->o.cold;
  if ((c->o.cold != CUCORE_TUNE_COLD_ROTATE && !autom) || !l2) return;
  size_t want = f ? (2 * l2 + f - 1) / f : 0; /* copies in all, the buffers themselves one */
  if (want < 2) want = 2;
  int fits = f && want <= CC_TROT_MAX;
  if (autom && (!fits || (want - 1) * f > c->mem_bytes / 8)) return; /* the flush, as said */
  cc_trot *r = cc_raw_calloc(1, sizeof *r);
  if (r && fits) {
    r->sets = (int)want - 1;
    r->ptr = cc_raw_calloc((size_t)r->sets * (c->nbufs ? c->nbufs : 1), sizeof *r->ptr);
  }
  if (!r || !r->ptr) {
    cc_trun_note(c,
                 "--cold rotate: %zu copies of %zu bytes would be needed to pass 2 x L2 (at "
                 "most %d): the L2 is flushed instead",
                 want, f, CC_TROT_MAX);
    free(r);
    return;
  }
  c->rot = r;
  c->s.cold = CUCORE_TUNE_COLD_ROTATE;
}

cucore_status cc_trot_open(cc_trun *c) {
  cc_trot *r = c->rot;
  if (!r) return CUCORE_OK;
  cucore_status st = copies(c, r);
  if (st != CUCORE_OK)
    st = cc_fail(st,
                 "cucore_tune_run: --cold rotate: no room on the device for %d copies of every "
                 "buffer (%s); expected room for them, or --cold flush",
                 r->sets, cucore_last_error());
  return st;
}

int cc_trot_sets(const cc_trun *c) { return c->rot ? c->rot->sets : 0; }

const cucore_devptr *cc_trot_ptrs(const cc_trun *c, int s) {
  return c->rot->ptr + (size_t)s * c->nbufs;
}

void cc_trot_release(cc_trun *c) {
  cc_trot *r = c->rot;
  for (size_t i = 0; r && i < (size_t)r->sets * c->nbufs; i++) {
    if (r->ptr[i]) cucore_mem_free(cc_tdata_device(c), r->ptr[i]);
    r->ptr[i] = 0;
  }
}

void cc_trot_close(cc_trun *c) {
  cc_trot *r = c->rot;
  if (!r) return;
  cc_trot_release(c);
  free(r->ptr);
  free(r);
  c->rot = NULL;
}
