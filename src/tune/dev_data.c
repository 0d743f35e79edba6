/* dev_data.c -- the device of a measured tune and the data on it.
 *
 * The context: made on a helper thread from the start of the tune while the calling thread
 * prepares on the host (rows, the store's key, the compiles started, the comparison kernel
 * compiled), since making a context takes ~250 ms on an H100, most of a tune's start; the
 * device is then opened (the driver's primary context, made by then) and the helper's handle
 * let go. One early thread per context, never two (the rule at cc_tdev_early_start).
 *
 * The buffers: made on the device with a pristine copy of every input kept there, so that
 * before each configuration's checked launch inputs and in-place buffers are restored and
 * outputs zeroed (or poisoned: nothing a previous configuration wrote can make a broken one
 * pass); their check after the launch is dev_verify.c's.
 *
 * The cold cache: with the flush (CUCORE_TUNE_COLD_FLUSH, or AUTO without rotation) the timing
 * writes a buffer of 2 x L2 before each sample; the buffer is made at its first use and kept
 * until the device closes. Cold rotation (CUCORE_TUNE_COLD_ROTATE, or AUTO when it fits):
 * copies of every buffer, enough that the copies' footprint is past 2 x the device's L2, each
 * bound to its own argument set (trial.c) and cycled launch by launch while a configuration is
 * timed (cucore_tune_timing_options::rotate), so samples read cold data without an L2 flush.
 * The plan is made before the device opens (the store's key names the timing): too many copies
 * (a footprint under L2 / 32) means the flush instead, said once in a note (AUTO flushes
 * without a note, also when the copies would take more than 1/8 of the device's memory); no
 * room on the device for the copies is an error naming --cold flush. The SM clock is observed
 * through NVML when it answers (probed once: without NVML a note, and the tune goes on).
 *
 * A kernel fault does not end a tune. A faulting configuration poisons the context (every
 * later call on the device fails), so after any failed row the device is asked
 * (cucore_device_synchronize); on CUCORE_KERNEL_FAULT the row is recorded as a fault, then
 * everything on the device is let go (rotation copies, buffers, stream), the device closed
 * (releasing the primary context resets it) and opened again, the buffers made again from
 * their initial contents, and the tune goes on with the next configuration: callers make
 * their kernels and argument sets again when c->s.resets changes. A device that does not come
 * back is lost: the configurations left are recorded as such. */
#include "runtime/runtime.h"
#include "tune/devdata.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

cucore_status cc_tdev_init(cc_trun *c) {
  c->dev = cc_calloc(1, sizeof *c->dev, "cucore_tune_run: the device's state");
  return c->dev ? CUCORE_OK : cucore_last_status();
}

/* ---- the context made early ---------------------------------------------------------------- */

static void *open_early(void *arg) {
  cc_trun *c = arg; /* the ordinal read, the handle written: joined before either changes */
  cc_tdev *d = c->dev;
  if (cc_device_primary_started(c->o.device)) return NULL; /* being made by now: not twice */
  if (cucore_device_open(c->o.device, &d->early_dev) != CUCORE_OK) d->early_dev = NULL;
  return NULL;
}

/* One early thread. A primary context is made once, and a thread that asks for it while
 * another makes it waits in the driver; so a second helper would only wait beside the first,
 * then retain a context made already and let it go. The helper starts only when the device's
 * primary context is neither made nor being made (cc_device_primary_started: a cucore handle
 * of it open, or opening on another thread, read from a counter without waiting; else the
 * driver's word, for a context the caller made through the driver or the CUDA runtime), and
 * asks again when it runs, before it opens the device. A library user that calls
 * cucore_tune_run cold gets the helper. `cucore tune` starts its own early thread as the
 * command line is read (run_early_start in tools/), and gets no second one once that thread
 * is in cucore_device_open, which on an idle machine it is long before the space is built and
 * this is asked. A thread that has not run yet cannot be seen (a starved machine: a loaded
 * 2-core box under `ctest -j2` saw it); then both open the device, and the cost is time only,
 * a retain that waits beside the other's; a helper missing leaves the context to
 * cc_tdev_open. */
void cc_tdev_early_start(cc_trun *c) {
  cc_tdev *d = c->dev;
  if (d->early_running || d->early_dev) return;       /* one helper a tune */
  if (cc_device_primary_started(c->o.device)) return; /* cc_tdev_open retains it */
  d->early_running = pthread_create(&d->early, NULL, open_early, c) == 0;
}

/* Waits for the helper (its handle kept). */
static void early_wait(cc_tdev *d) {
  if (d->early_running) pthread_join(d->early, NULL);
  d->early_running = 0;
}

/* Waits for it and lets its handle go (the context stays while another handle holds it). */
static void early_finish(cc_tdev *d) {
  early_wait(d);
  if (d->early_dev) cucore_device_close(d->early_dev);
  d->early_dev = NULL;
}

/* ---- the cold cache and the timing ----------------------------------------------------- */

#define CC_TROT_MAX 64

static size_t footprint(const cc_trun *c) {
  size_t f = 0;
  for (size_t i = 0; i < c->nbufs; i++) f += cc_trun_bytes(&c->bufs[i]);
  return f;
}

static cucore_status copies(cc_trun *c, cc_tdev *d) {
  cucore_status st = CUCORE_OK;
  for (size_t s = 0; s < (size_t)d->rot_sets && st == CUCORE_OK; s++)
    for (size_t i = 0; i < c->nbufs && st == CUCORE_OK; i++) {
      const cucore_tune_buffer *b = &c->bufs[i];
      size_t bytes = cc_trun_bytes(b);
      st = cucore_mem_alloc(d->dev, bytes ? bytes : 1, &d->rot[s * c->nbufs + i]);
      if (st == CUCORE_OK && bytes && b->role != CUCORE_TUNE_OUT)
        st = cucore_memcpy_htod(d->dev, d->rot[s * c->nbufs + i], b->host, bytes, NULL);
    }
  return st;
}

void cc_tdev_rot_plan(cc_trun *c) {
  cc_tdev *d = c->dev;
  int autom = c->o.cold == CUCORE_TUNE_COLD_AUTO;
  size_t f = footprint(c), l2 = c->l2_bytes;
  c->s.cold = autom ? CUCORE_TUNE_COLD_FLUSH : c->o.cold;
  if ((c->o.cold != CUCORE_TUNE_COLD_ROTATE && !autom) || !l2) return;
  size_t want = f ? (2 * l2 + f - 1) / f : 0; /* copies in all, the buffers themselves one */
  if (want < 2) want = 2;
  int fits = f && want <= CC_TROT_MAX;
  if (autom && (!fits || (want - 1) * f > c->mem_bytes / 8)) return; /* the flush, as said */
  cucore_devptr *rot = NULL;
  if (fits) rot = cc_raw_calloc((want - 1) * (c->nbufs ? c->nbufs : 1), sizeof *rot);
  if (!rot) {
    cc_trun_note(c,
                 "--cold rotate: %zu copies of %zu bytes would be needed to pass 2 x L2 (at "
                 "most %d): the L2 is flushed instead",
                 want, f, CC_TROT_MAX);
    return;
  }
  d->rot = rot;
  d->rot_sets = (int)want - 1;
  c->s.cold = CUCORE_TUNE_COLD_ROTATE;
}

cucore_status cc_tdev_rot_open(cc_trun *c) {
  cc_tdev *d = c->dev;
  if (!d->rot_sets) return CUCORE_OK;
  cucore_status st = copies(c, d);
  if (st != CUCORE_OK)
    st = cc_fail(st,
                 "cucore_tune_run: --cold rotate: no room on the device for %d copies of every "
                 "buffer (%s); expected room for them, or --cold flush",
                 d->rot_sets, cucore_last_error());
  return st;
}

int cc_tdev_rot_sets(const cc_trun *c) { return c->dev->rot_sets; }

const cucore_devptr *cc_tdev_rot_ptrs(const cc_trun *c, int s) {
  return c->dev->rot + (size_t)s * c->nbufs;
}

/* The rotated copies let go, the plan kept (a device reset, then cc_tdev_rot_open again). */
static void rot_release(cc_trun *c) {
  cc_tdev *d = c->dev;
  for (size_t i = 0; d->rot && i < (size_t)d->rot_sets * c->nbufs; i++) {
    if (d->rot[i]) cucore_mem_free(d->dev, d->rot[i]);
    d->rot[i] = 0;
  }
}

void cc_tdev_rot_close(cc_trun *c) {
  cc_tdev *d = c->dev;
  rot_release(c);
  free(d->rot);
  d->rot = NULL;
  d->rot_sets = 0;
}

cucore_devptr cc_tdev_flush(cc_trun *c, size_t bytes) {
  cc_tdev *d = c->dev;
  if (!d->flush && cucore_mem_alloc(d->dev, bytes, &d->flush) != CUCORE_OK) d->flush = 0;
  return d->flush;
}

/* The flush buffer let go (the device closes). */
static void flush_free(cc_trun *c) {
  cc_tdev *d = c->dev;
  if (d->flush) cucore_mem_free(d->dev, d->flush);
  d->flush = 0;
}

void cc_tdev_probe_clock(cc_trun *c) {
  int mhz = -1; /* the clock alone: every NVML fact would cost milliseconds */
  cucore_status st = cucore_system_get_clock(c->o.device, &mhz, NULL);
  c->dev->observe_clock = st == CUCORE_OK;
  if (st != CUCORE_OK)
    cc_trun_note(c, "the SM clock is not observed, throttled samples are not discarded (%s)",
                 cucore_last_error());
}

/* A kernel of CUCORE_TUNE_LONG_MS or more: its 3 lone launches and 2 more samples, unless the
 * noise (max_noise) asks for more: each sample is a launch of a millisecond or more, and the
 * finalists' interleaved rounds decide between close ones. */
#define CC_TDEV_LONG_SAMPLES 5

cucore_tune_timing_options cc_tdev_timing(const cc_trun *c) {
  cucore_tune_timing_options o = CUCORE_TUNE_TIMING_DEFAULTS;
  if (c->o.max_noise > 0) o.max_noise = c->o.max_noise;
  int hot = c->o.cold == CUCORE_TUNE_COLD_NONE;
  o.l2_bytes = hot || c->dev->rot_sets ? 0 : c->l2_bytes;
  o.mode = c->o.launch_mode;
  o.observe_clock = c->dev->observe_clock;
  o.long_min_samples = CC_TDEV_LONG_SAMPLES;
  return o;
}

/* ---- the device and the buffers ----------------------------------------------------------- */

cucore_stream *cc_tdev_stream(const cc_trun *c) { return c->dev->stream; }
cucore_device *cc_tdev_device(const cc_trun *c) { return c->dev->dev; }
const cucore_devptr *cc_tdev_ptrs(const cc_trun *c) { return c->dev->ptr; }

static cucore_status fill(cc_tdev *d, const cucore_tune_buffer *b, cucore_devptr *ptr,
                          cucore_devptr *pristine) {
  size_t bytes = cc_trun_bytes(b);
  cucore_status st = cucore_mem_alloc(d->dev, bytes ? bytes : 1, ptr);
  if (st != CUCORE_OK || b->role == CUCORE_TUNE_OUT) return st;
  st = cucore_mem_alloc(d->dev, bytes ? bytes : 1, pristine);
  if (st == CUCORE_OK && bytes) st = cucore_memcpy_htod(d->dev, *pristine, b->host, bytes, NULL);
  return st;
}

/* The device opened, a stream, every buffer made and filled from its initial contents. */
static cucore_status open_device(cc_trun *c) {
  cc_tdev *d = c->dev;
  cucore_device_props props;
  cucore_status st = cucore_device_get_props(c->o.device, &props);
  if (st == CUCORE_OK) st = cucore_device_open(c->o.device, &d->dev);
  if (st == CUCORE_OK) st = cucore_stream_create(d->dev, CUCORE_STREAM_NON_BLOCKING, 0, &d->stream);
  for (size_t i = 0; i < c->nbufs && st == CUCORE_OK; i++) {
    st = fill(d, &c->bufs[i], &d->ptr[i], &d->pristine[i]);
    if (st == CUCORE_OK) st = cucore_stream_synchronize(d->stream);
  }
  if (st == CUCORE_OK) cc_tdev_verify_open(c);
  return st;
}

cucore_status cc_tdev_open(cc_trun *c) {
  cc_tdev *d = c->dev;
  d->opened = 1;
  size_t n = c->nbufs ? c->nbufs : 1;
  d->ptr = cc_calloc(n, sizeof *d->ptr, "cucore_tune_run: the buffers");
  d->pristine = cc_calloc(n, sizeof *d->pristine, "cucore_tune_run: the buffers");
  d->host = cc_calloc(n, sizeof *d->host, "cucore_tune_run: the buffers");
  d->baseline = cc_calloc(n, sizeof *d->baseline, "cucore_tune_run: the buffers");
  d->base_dev = cc_calloc(n, sizeof *d->base_dev, "cucore_tune_run: the buffers");
  if (!d->ptr || !d->pristine || !d->host || !d->baseline || !d->base_dev)
    return cucore_last_status();
  for (size_t i = 0; i < c->nbufs; i++) {
    size_t bytes = cc_trun_bytes(&c->bufs[i]);
    d->host[i] = cc_malloc(bytes ? bytes : 1, "cucore_tune_run: a buffer's host copy");
    if (!d->host[i]) return cucore_last_status();
    memcpy(d->host[i], c->bufs[i].host, bytes);
  }
  if (!c->o.check && cc_tune_cmp_compile(&d->cmp_obj) != CUCORE_OK) d->cmp_obj = NULL;
  early_wait(d); /* the context made by then */
  cucore_status st = open_device(c);
  early_finish(d);
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
  flush_free(c);
  cucore_stream_destroy(d->stream);
  cucore_device_close(d->dev);
  d->stream = NULL;
  d->dev = NULL;
}

/* The device after a fault: let go and opened again, buffers made again. */
static cucore_status reopen(cc_trun *c) {
  close_device(c);
  return open_device(c);
}

cucore_status cc_tdev_reset(cc_trun *c) {
  cc_tdev *d = c->dev;
  cucore_status st = CUCORE_OK;
  for (size_t i = 0; i < c->nbufs && st == CUCORE_OK; i++) {
    const cucore_tune_buffer *b = &c->bufs[i];
    size_t bytes = cc_trun_bytes(b);
    if (!bytes) continue;
    if (b->role == CUCORE_TUNE_OUT)
      st = cucore_memset_d8(d->dev, d->ptr[i], c->o.poison ? 0xff : 0, bytes, d->stream);
    else
      st = cucore_memcpy_dtod(d->dev, d->ptr[i], d->pristine[i], bytes, d->stream);
  }
  return st == CUCORE_OK ? cucore_stream_synchronize(d->stream) : st;
}

void cc_tdev_close(cc_trun *c) {
  cc_tdev *d = c->dev;
  if (!d->opened) return;
  d->opened = 0;
  close_device(c);
  cucore_object_destroy(d->cmp_obj);
  d->cmp_obj = NULL;
  for (size_t i = 0; i < c->nbufs; i++) {
    if (d->baseline) free(d->baseline[i]);
    if (d->host) free(d->host[i]);
  }
  free(d->ptr), free(d->pristine), free(d->host), free(d->baseline), free(d->base_dev);
  d->ptr = d->pristine = d->base_dev = NULL;
  d->host = d->baseline = NULL;
  d->have_baseline = 0;
}

/* ---- a kernel fault ------------------------------------------------------------------------ */

int cc_tdev_fault_check(const cc_trun *c) {
  cucore_device *dev = c->dev->dev;
  return dev && CUCORE_CODE(cucore_device_synchronize(dev)) == CUCORE_KERNEL_FAULT;
}

void cc_tdev_fault_mark(cc_trun *c, cucore_tune_row *r) {
  if (r->status != CUCORE_TUNE_FAULT) {
    const char *was = r->detail;
    r->detail = cc_trun_none;
    cc_trun_text(&r->detail, "the kernel faulted (the context was lost): %s", was);
    cc_trun_text_free(&was);
  }
  r->status = CUCORE_TUNE_FAULT;
  c->s.faults++;
}

cucore_status cc_tdev_fault_recover(cc_trun *c, const cucore_tune_row *r) {
  rot_release(c);
  cucore_status st = reopen(c);
  c->s.resets++;
  if (st == CUCORE_OK) st = cc_tdev_rot_open(c);
  if (st != CUCORE_OK) c->s.lost = 1;
  cc_trun_note(c, "configuration %llu faulted: the device was %s",
               (unsigned long long)r->config.index,
               st != CUCORE_OK ? "lost (the configurations left are not measured)"
                               : "reset, the tune goes on");
  return st;
}

void cc_tdev_fault_after_row(cc_trun *c, cucore_tune_row *r) {
  if (r->status == CUCORE_TUNE_OK || r->status == CUCORE_TUNE_WRONG_ANSWER ||
      !cc_tdev_fault_check(c))
    return;
  cc_tdev_fault_mark(c, r);
  cc_tdev_fault_recover(c, r);
}

void cc_tdev_free(cc_trun *c) {
  if (!c->dev) return;
  early_finish(c->dev);
  cc_tdev_rot_close(c);
  cc_tdev_close(c);
  free(c->dev);
  c->dev = NULL;
}
