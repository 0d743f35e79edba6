/*
 * capture_state.c -- what cucore knows of stream captures: which streams take part in a capture it
 * began (the origin, and every stream that waited on an event recorded in the capture), what
 * the captured work references, and the calls a capture forbids, refused before the driver
 * would invalidate the capture. The public begin/end functions are in graph/capture.c: they
 * turn the captured CUgraph into a cucore_graph.
 *
 * The driver's rules (cuThreadExchangeStreamCaptureMode, cuStreamBeginCapture):
 * - A call the driver calls potentially unsafe (an allocation, a free, a synchronous copy,
 *   cuCtxSynchronize) fails and invalidates the capture when the calling thread has a capture
 *   in global or thread-local mode under way, or any thread has one in global mode.
 * - Synchronising with or querying a capturing stream, or an event last recorded in a
 *   capture, conflicts with capture in every mode.
 * - Work on the legacy default stream waits for every blocking stream of the context: when one
 *   of them is capturing, it fails (CUDA_ERROR_STREAM_CAPTURE_IMPLICIT).
 * Captures begun outside cucore are unknown here; the driver still refuses what they forbid,
 * and cucore explains its answer.
 */
#include "runtime/runtime.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

atomic_int cc_capture_count;
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static cc_capture *active_list;

static const char *const mode_names[] = {"global", "thread-local", "relaxed"};

static const char *mode_name(int mode) {
  return mode >= 0 && mode <= 2 ? mode_names[mode] : "unknown";
}

static void capture_release(cc_capture *c) {
  if (!c || atomic_fetch_sub(&c->refs, 1) != 1) return;
  cc_refs_release(c->refs_held);
  free(c->streams);
  free(c);
}

cc_capture *cc_capture_of(const cucore_stream *s) {
  return s && s->capture && s->capture->active ? s->capture : NULL;
}

void *cc_capture_owner(const cc_capture *c) { return c ? c->owner : NULL; }

int cc_capture_set_owner(cc_capture *c, void *owner, cc_release_fn owner_release) {
  if (c->owner) return 0;
  c->owner = owner;
  c->owner_release = owner_release;
  return 1;
}

void cc_capture_describe(const cc_capture *c, const cucore_stream *s, int *mode, int *is_origin) {
  *mode = c ? c->mode : -1;
  *is_origin = c && c->origin == s;
}

/* Names the capture for messages: "the capture begun on a stream of device 0 (global mode)". */
static void describe(const cc_capture *c, const cucore_stream *s, char *buf, size_t n) {
  snprintf(buf, n,
           "capture %llu, begun by cucore_stream_begin_capture on %s of device %d in %s "
           "mode",
           c->id, c->origin == s ? "this stream" : "another stream", c->dev->ordinal,
           mode_name(c->mode));
}

/* 1 when the stream synchronises with the legacy default stream, as recorded when its handle
 * was made (the driver is not asked here: cuStreamGetFlags on a stream that joined a capture
 * invalidates the capture, seen on driver 580). */
static int stream_blocks(const cucore_stream *s) { return s->blocking; }

static cucore_status add_stream(cc_capture *c, cucore_stream *s) {
  cucore_stream **ss = cc_grow(c->streams, &c->stream_cap, (size_t)c->stream_count + 1, sizeof *ss,
                               "a capture's streams");
  if (!ss) return CUCORE_HOST_OUT_OF_MEMORY;
  c->streams = ss;
  c->streams[c->stream_count++] = s;
  atomic_fetch_add(&c->refs, 1);
  s->capture = c;
  if (stream_blocks(s)) c->blocking = 1;
  return CUCORE_OK;
}

static void remove_stream(cc_capture *c, cucore_stream *s) {
  for (int i = 0; i < c->stream_count; i++)
    if (c->streams[i] == s) {
      c->streams[i] = c->streams[--c->stream_count];
      s->capture = NULL;
      capture_release(c);
      return;
    }
}

cucore_status cc_capture_begin(cucore_stream *s, int mode, CUgraph into, const CUgraphNode *deps,
                               size_t ndeps, cc_refs *refs, void *owner,
                               cc_release_fn owner_release, const char *fn) {
  cc_capture *c = cc_calloc(1, sizeof *c, "a capture record");
  if (!c) return CUCORE_HOST_OUT_OF_MEMORY;
  atomic_init(&c->refs, 1); /* the registry's */
  c->dev = s->dev;
  c->origin = s;
  c->mode = mode;
  c->thread = pthread_self();
  c->active = 1;
  cucore_status st = add_stream(c, s);
  if (st != CUCORE_OK) {
    free(c);
    return st;
  }
  s->capture = NULL; /* set once the driver agrees */
  CUresult r = into ? DRV(cuStreamBeginCaptureToGraph)(s->handle, into, deps, NULL, ndeps,
                                                       (CUstreamCaptureMode)mode)
                    : DRV(cuStreamBeginCapture)(s->handle, (CUstreamCaptureMode)mode);
  if (r != CUDA_SUCCESS) {
    free(c->streams);
    free(c);
    return cc_fail_cu(r, into ? "cuStreamBeginCaptureToGraph" : "cuStreamBeginCapture",
                      "%s on a stream of device %d", fn, s->dev->ordinal);
  }
  if (DRV(cuStreamGetCaptureInfo)) {
    CUstreamCaptureStatus cs;
    cuuint64_t id = 0;
    if (DRV(cuStreamGetCaptureInfo)(s->handle, &cs, &id, NULL, NULL, NULL) == CUDA_SUCCESS)
      c->id = (unsigned long long)id;
  }
  cc_refs_retain(refs);
  c->refs_held = refs;
  c->owner = owner;
  c->owner_release = owner_release;
  s->capture = c;
  pthread_mutex_lock(&registry_lock);
  c->next = active_list;
  active_list = c;
  atomic_fetch_add(&cc_capture_count, 1);
  pthread_mutex_unlock(&registry_lock);
  return CUCORE_OK;
}

/* Takes `c` out of the active list and frees every stream of it (the caller holds a
 * reference besides the registry's, which stays for the caller to drop). */
static void finish(cc_capture *c) {
  pthread_mutex_lock(&registry_lock);
  for (cc_capture **p = &active_list; *p; p = &(*p)->next)
    if (*p == c) {
      *p = c->next;
      break;
    }
  c->active = 0;
  atomic_fetch_sub(&cc_capture_count, 1);
  while (c->stream_count) remove_stream(c, c->streams[c->stream_count - 1]);
  pthread_mutex_unlock(&registry_lock);
}

cucore_status cc_capture_end(cucore_stream *s, CUgraph *graph, cc_refs **refs, void **owner,
                             const char *fn) {
  *graph = NULL;
  *refs = NULL;
  *owner = NULL;
  cc_capture *c = cc_capture_of(s);
  if (!c) {
    CUstreamCaptureStatus cs = CU_STREAM_CAPTURE_STATUS_NONE;
    if (DRV(cuStreamIsCapturing)(s->handle, &cs) == CUDA_SUCCESS &&
        cs != CU_STREAM_CAPTURE_STATUS_NONE)
      return cc_fail(CUCORE_STREAM_CAPTURE,
                     "%s: the stream is capturing, but not in a capture cucore began (another "
                     "library began it, or it joined one through an event cucore did not "
                     "record); end it where it began",
                     fn);
    return cc_fail(CUCORE_STREAM_CAPTURE,
                   "%s: the stream is not capturing (begin with "
                   "cucore_stream_begin_capture)",
                   fn);
  }
  char what[256];
  describe(c, s, what, sizeof what);
  if (c->origin != s)
    return cc_fail(CUCORE_STREAM_CAPTURE,
                   "%s: the stream joined %s; a capture ends on the stream where it began, "
                   "after every stream it forked to has joined back",
                   fn, what);
  if (c->mode != CU_STREAM_CAPTURE_MODE_RELAXED && !pthread_equal(c->thread, pthread_self()))
    return cc_fail(CUCORE_STREAM_CAPTURE,
                   "%s: %s must be ended by the thread that began it (in relaxed mode any "
                   "thread may end it); the capture goes on",
                   fn, what);
  CUgraph g = NULL;
  CUresult r = DRV(cuStreamEndCapture)(s->handle, &g);
  /* However it went, the capture is over for every stream that took part. */
  atomic_fetch_add(&c->refs, 1);
  finish(c);
  cucore_status st = CUCORE_OK;
  if (r != CUDA_SUCCESS || !g) {
    if (g && DRV(cuGraphDestroy)) (void)DRV(cuGraphDestroy)(g);
    g = NULL;
    if (c->failure != CUCORE_OK)
      st = cc_fail(cc_status(CUCORE_STREAM_CAPTURE, CUCORE_SOURCE_DRIVER, (int)r),
                   "%s: %s failed and made no graph: it was invalidated by an earlier call: "
                   "%s. The stream is usable again.",
                   fn, what, c->failure_message);
    else if (r == CUDA_SUCCESS || r == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED)
      st = cc_fail(cc_status(CUCORE_STREAM_CAPTURE, CUCORE_SOURCE_DRIVER,
                             (int)CUDA_ERROR_STREAM_CAPTURE_INVALIDATED),
                   "%s: %s was invalidated by a call that could not be captured (one cucore "
                   "did not make or could not check: a direct driver or runtime call on a "
                   "capturing stream, or a forbidden call of another thread) and made no "
                   "graph. The stream is usable again.",
                   fn, what);
    else
      st = cc_fail_cu(r, "cuStreamEndCapture", "%s: %s made no graph; the stream is usable again",
                      fn, what);
  } else {
    *refs = c->refs_held;
    c->refs_held = NULL;
  }
  /* Nothing of a failed capture runs: what it held goes now, not with the last event. */
  cc_refs_release(c->refs_held);
  c->refs_held = NULL;
  *owner = c->owner;
  c->owner = NULL;
  *graph = g;
  capture_release(c); /* ours */
  capture_release(c); /* the registry's */
  return st;
}

/* ---- refusals ------------------------------------------------------------------------------ */

cucore_status cc_capture_check_stream(cucore_stream *s, const char *fn) {
  cc_capture *c = cc_capture_of(s);
  char what[256];
  if (c) {
    describe(c, s, what, sizeof what);
    return cc_fail(CUCORE_STREAM_CAPTURE,
                   "%s: the stream is capturing into a graph (%s): its work has not been "
                   "queued to run, so it cannot be waited for or queried, and the driver "
                   "would invalidate the capture; cucore refused the call and the capture goes "
                   "on. End the capture first (cucore_stream_end_capture)",
                   fn, what);
  }
  /* A capture cucore did not begin (or the legacy stream beside a capturing one): ask. */
  if (!DRV(cuStreamIsCapturing)) return CUCORE_OK;
  CUstreamCaptureStatus cs = CU_STREAM_CAPTURE_STATUS_NONE;
  CUresult r = DRV(cuStreamIsCapturing)(s->handle, &cs);
  if (r == CUDA_ERROR_STREAM_CAPTURE_IMPLICIT)
    return cc_fail(cc_status(CUCORE_STREAM_CAPTURE, CUCORE_SOURCE_DRIVER, (int)r),
                   "%s: this is the legacy default stream, and a stream that synchronises with "
                   "it is capturing; waiting for it would invalidate that capture. End the "
                   "capture first, or capture on a stream made with CUCORE_STREAM_NON_BLOCKING",
                   fn);
  if (r == CUDA_SUCCESS && cs != CU_STREAM_CAPTURE_STATUS_NONE)
    return cc_fail(CUCORE_STREAM_CAPTURE,
                   "%s: the stream is %s (a capture begun outside cucore); end that capture "
                   "first",
                   fn,
                   cs == CU_STREAM_CAPTURE_STATUS_ACTIVE
                       ? "capturing into a graph"
                       : "in a capture that was invalidated and not yet ended");
  return CUCORE_OK;
}

cucore_status cc_capture_check_event(const cucore_event *ev, const char *fn) {
  const cc_capture *c = ev->capture;
  if (!c || !c->active) return CUCORE_OK;
  char what[256];
  describe(c, NULL, what, sizeof what);
  return cc_fail(CUCORE_STREAM_CAPTURE,
                 "%s: the event was last recorded inside a capture (%s), where it marks a "
                 "point of the graph being built, not of work that runs; it cannot be waited "
                 "for, queried or timed until it is recorded again outside a capture (the "
                 "driver would invalidate the capture; cucore refused the call)",
                 fn, what);
}

cucore_status cc_capture_check_unsafe(cucore_device *dev, int legacy, int device_sync,
                                      const char *fn) {
  if (CC_LIKELY(!cc_captures_active())) return CUCORE_OK;
  pthread_t self = pthread_self();
  char what[256] = "";
  const char *why = NULL;
  pthread_mutex_lock(&registry_lock);
  for (cc_capture *c = active_list; c && !why; c = c->next) {
    int same_ctx = c->dev->ctx == dev->ctx;
    if (c->mode == CU_STREAM_CAPTURE_MODE_GLOBAL) {
      why = "a capture in global mode forbids it on every thread";
    } else if (c->mode == CU_STREAM_CAPTURE_MODE_THREAD_LOCAL && pthread_equal(c->thread, self)) {
      why = "this thread began a capture in thread-local mode, which forbids it on this thread";
    } else if (device_sync && same_ctx) {
      why = "it would wait for a capturing stream, whose work is not queued to run";
    } else if (legacy && same_ctx && c->blocking) {
      why = "it runs on the legacy default stream, which would wait for a capturing stream "
            "that synchronises with it";
    }
    if (why) describe(c, NULL, what, sizeof what);
  }
  pthread_mutex_unlock(&registry_lock);
  if (!why) return CUCORE_OK;
  return cc_fail(CUCORE_STREAM_CAPTURE,
                 "%s: not allowed while %s is under way: %s, and the driver would invalidate "
                 "the capture. cucore refused the call and the capture goes on; make the call "
                 "before or after the capture%s",
                 fn, what, why, legacy ? " (or, for a copy or fill, give it a stream)" : "");
}

/* 1 when `s` is the legacy default stream and a stream of its context that synchronises
 * with it is capturing (`what` then names that capture). */
static int legacy_beside_capture(const cucore_stream *s, char *what, size_t n) {
  if (s->handle != NULL && s->handle != CU_STREAM_LEGACY) return 0;
  pthread_mutex_lock(&registry_lock);
  what[0] = '\0';
  for (cc_capture *c = active_list; c; c = c->next)
    if (c->dev->ctx == s->dev->ctx && c->blocking) {
      describe(c, NULL, what, n);
      break;
    }
  pthread_mutex_unlock(&registry_lock);
  return what[0] != '\0';
}

cucore_status cc_capture_check_launch(cucore_stream *s, const char *fn) {
  char what[256];
  if (!legacy_beside_capture(s, what, sizeof what)) return CUCORE_OK;
  return cc_fail(CUCORE_STREAM_CAPTURE,
                 "%s: the launch is on the legacy default stream, which waits for every stream "
                 "that synchronises with it, and one of them is capturing (%s); the driver "
                 "would invalidate that capture. cucore refused the launch and the capture goes "
                 "on: launch on a stream of your own, or capture on a stream made with "
                 "CUCORE_STREAM_NON_BLOCKING",
                 fn, what);
}

/* ---- membership ------------------------------------------------------------------------------ */

cucore_status cc_capture_hold(cucore_stream *s, void *p, void (*retain)(void *),
                              cc_release_fn release) {
  cc_capture *c = cc_capture_of(s);
  if (!c) return CUCORE_OK;
  return cc_refs_hold(c->refs_held, p, retain, release);
}

void cc_capture_event_recorded(cucore_event *ev, cucore_stream *s) {
  cc_capture *c = cc_capture_of(s);
  if (ev->capture == c) return;
  if (c) atomic_fetch_add(&c->refs, 1);
  cc_capture *old = ev->capture;
  ev->capture = c;
  capture_release(old);
}

cucore_status cc_capture_event_waited(cucore_stream *s, cucore_event *ev, const char *fn) {
  cc_capture *from = ev->capture && ev->capture->active ? ev->capture : NULL;
  cc_capture *mine = cc_capture_of(s);
  if (!from || from == mine) return CUCORE_OK;
  if (mine) {
    char a[256], b[256];
    describe(mine, s, a, sizeof a);
    describe(from, NULL, b, sizeof b);
    return cc_fail(CUCORE_STREAM_CAPTURE,
                   "%s: the stream takes part in %s and the event was recorded in another "
                   "(%s): waiting would merge two captures, which the driver refuses by "
                   "invalidating them; cucore refused the wait",
                   fn, a, b);
  }
  return CUCORE_OK;
}

cucore_status cc_capture_check_wait_stream(cucore_stream *waiter, cucore_stream *waited,
                                           const char *fn) {
  char a[256], b[256];
  cc_capture *mine = cc_capture_of(waiter), *theirs = cc_capture_of(waited);
  if (mine && theirs != mine) {
    describe(mine, waiter, a, sizeof a);
    if (theirs) describe(theirs, waited, b, sizeof b);
    return cc_fail(CUCORE_STREAM_CAPTURE,
                   "%s: `waiter` takes part in %s and `waited` %s%s: the wait would %s, which "
                   "the driver refuses by invalidating the capture; cucore refused the wait "
                   "and the capture goes on",
                   fn, a, theirs ? "in another, " : "in none", theirs ? b : "",
                   theirs ? "merge two captures"
                          : "cross the capture's boundary (CUDA_ERROR_STREAM_CAPTURE_ISOLATION)");
  }
  const cucore_stream *legacy[2] = {waiter, waited};
  for (int i = 0; i < 2; i++)
    if (legacy_beside_capture(legacy[i], a, sizeof a))
      return cc_fail(CUCORE_STREAM_CAPTURE,
                     "%s: `%s` is the legacy default stream, which waits for every stream that "
                     "synchronises with it, and one of them is capturing (%s); the driver would "
                     "invalidate that capture. cucore refused the wait and the capture goes on",
                     fn, i == 0 ? "waiter" : "waited", a);
  return CUCORE_OK;
}

void cc_capture_joined(cucore_stream *s, cucore_event *ev) { cc_capture_join(s, ev->capture); }

void cc_capture_join(cucore_stream *s, cc_capture *from) {
  from = from && from->active ? from : NULL;
  if (!from || cc_capture_of(s) == from) return;
  pthread_mutex_lock(&registry_lock);
  if (s->capture) remove_stream(s->capture, s); /* an ended capture's leftover */
  (void)add_stream(from, s); /* out of memory: cucore just does not know the stream joined */
  pthread_mutex_unlock(&registry_lock);
}

void cc_capture_forget_stream(cucore_stream *s) {
  cc_capture *c = s->capture;
  if (!c) return;
  if (c->active && c->origin == s) {
    /* The stream a capture began on is going: the capture can never end; the driver drops it
     * with the stream, and so does cucore. */
    atomic_fetch_add(&c->refs, 1);
    finish(c);
    if (c->owner && c->owner_release) c->owner_release(c->owner);
    c->owner = NULL;
    cc_refs_release(c->refs_held);
    c->refs_held = NULL;
    capture_release(c); /* the registry's */
    capture_release(c); /* ours */
    return;
  }
  pthread_mutex_lock(&registry_lock);
  remove_stream(c, s);
  pthread_mutex_unlock(&registry_lock);
}

void cc_capture_forget_event(cucore_event *ev) {
  capture_release(ev->capture);
  ev->capture = NULL;
}

void cc_capture_note_failure(cucore_stream *s) {
  cc_capture *c = cc_capture_of(s);
  if (!c || c->failure != CUCORE_OK) return;
  c->failure = cucore_last_status();
  snprintf(c->failure_message, sizeof c->failure_message, "%s", cucore_last_error());
}

int cc_capture_relax(void) {
  if (CC_LIKELY(!cc_captures_active()) || !DRV(cuThreadExchangeStreamCaptureMode)) return -1;
  CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
  if (DRV(cuThreadExchangeStreamCaptureMode)(&mode) != CUDA_SUCCESS) return -1;
  return (int)mode;
}

void cc_capture_unrelax(int token) {
  if (token < 0) return;
  CUstreamCaptureMode mode = (CUstreamCaptureMode)token;
  (void)DRV(cuThreadExchangeStreamCaptureMode)(&mode);
}
