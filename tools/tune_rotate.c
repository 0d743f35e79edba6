/* tune_rotate.c -- `cucore tune --cold rotate`: copies of every buffer argument, enough that
 * the copies' footprint is past 2 x the device's L2, each bound to its own argument set and
 * cycled launch by launch while a configuration is timed (cucore_tune_timing_options::rotate),
 * so samples read cold data without an L2 flush. Too many copies (a footprint under
 * L2 / 500) or no memory for them: the flush instead, said once. */
#include <stdlib.h>
#include <string.h>

#include "tune.h"

#define TUNE_ROTATE_MAX 64

struct tune_rot {
  int sets;           /* extra argument sets (copies of every buffer) */
  cucore_devptr *ptr; /* sets x nbufs */
};

static size_t footprint(const tune_ctx *c) {
  size_t f = 0;
  for (int i = 0; i < c->o.nbufs; i++)
    f += c->o.bufs[i].count * (size_t)elem_sizes[c->o.bufs[i].type];
  return f;
}

static cucore_status copies(tune_ctx *c, struct tune_rot *r) {
  cucore_device *dev = tune_dev_device(c);
  cucore_status st = CUCORE_OK;
  for (int s = 0; s < r->sets && st == CUCORE_OK; s++)
    for (int i = 0; i < c->o.nbufs && st == CUCORE_OK; i++) {
      const run_buf *b = &c->o.bufs[i];
      size_t bytes = b->count * (size_t)elem_sizes[b->type];
      st = cucore_mem_alloc(dev, bytes ? bytes : 1, &r->ptr[s * c->o.nbufs + i]);
      if (st == CUCORE_OK && bytes && b->role != ROLE_OUT)
        st = cucore_memcpy_htod(dev, r->ptr[s * c->o.nbufs + i], b->host, bytes, NULL);
    }
  return st;
}

/* Before anything ran (the host copies of the inputs are still the initial ones). */
void tune_rotate_open(tune_ctx *c) {
  size_t f = footprint(c), l2 = tune_dev_l2(c);
  if (c->line->cold_mode != TUNE_COLD_ROTATE || !l2) return;
  size_t want = f ? (2 * l2 + f - 1) / f : 0; /* copies in all, the buffers themselves one */
  if (want < 2) want = 2;
  struct tune_rot *r = calloc(1, sizeof *r);
  if (!f || want > TUNE_ROTATE_MAX || !r) {
    fprintf(stderr,
            "cucore tune: note: --cold rotate: %zu copies of %zu bytes would be "
            "needed to pass 2 x L2 (at most %d): the L2 is flushed instead\n",
            want, f, TUNE_ROTATE_MAX);
    free(r);
    return;
  }
  r->sets = (int)want - 1;
  r->ptr = calloc((size_t)r->sets * (size_t)c->o.nbufs, sizeof *r->ptr);
  c->rot = r;
  if (!r->ptr || copies(c, r) != CUCORE_OK) {
    fprintf(stderr,
            "cucore tune: note: --cold rotate: no room for %zu copies of %zu bytes "
            "(%s): the L2 is flushed instead\n",
            want, f, cucore_last_error());
    tune_rotate_close(c);
  }
}

int tune_rotating(const tune_ctx *c) { return c->rot != NULL; }

/* The extra argument sets of group g's kernel, each bound to its copies. 0 or -1. */
int tune_rotate_bind(tune_ctx *c, const tune_group *g, cucore_kernel *k, cucore_args ***sets) {
  struct tune_rot *r = c->rot;
  *sets = calloc((size_t)r->sets, sizeof **sets);
  if (!*sets) return -1;
  cucore_devptr *keep = malloc((size_t)(c->o.nbufs ? c->o.nbufs : 1) * sizeof *keep);
  int rc = keep ? 0 : -1;
  for (int i = 0; !rc && i < c->o.nbufs; i++) keep[i] = c->o.bufs[i].ptr;
  for (int s = 0; !rc && s < r->sets; s++) {
    for (int i = 0; i < c->o.nbufs; i++) c->o.bufs[i].ptr = r->ptr[s * c->o.nbufs + i];
    rc = cucore_args_create(k, &(*sets)[s]) == CUCORE_OK ? 0 : -1;
    if (!rc) rc = run_bind_args(&c->o, (*sets)[s], g->obj, g->symbol) ? -1 : 0;
  }
  for (int i = 0; keep && i < c->o.nbufs; i++) c->o.bufs[i].ptr = keep[i];
  free(keep);
  return rc;
}

void tune_rotate_unbind(const tune_ctx *c, cucore_args **sets) {
  for (int s = 0; sets && s < c->rot->sets; s++) cucore_args_destroy(sets[s]);
  free(sets);
}

int tune_rotate_sets(const tune_ctx *c) { return c->rot ? c->rot->sets : 0; }

void tune_rotate_close(tune_ctx *c) {
  struct tune_rot *r = c->rot;
  if (!r) return;
  for (int i = 0; r->ptr && i < r->sets * c->o.nbufs; i++)
    if (r->ptr[i]) cucore_mem_free(tune_dev_device(c), r->ptr[i]);
  free(r->ptr);
  free(r);
  c->rot = NULL;
}
