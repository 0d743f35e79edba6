/*
 * runtime/runtime.h -- devices, their primary contexts, streams and events: the handles every
 * later floor runs on (memory/ is the floor above).
 *
 * Files: device.c (devices, properties, primary contexts, the context made current on each
 * thread), stream.c, event.c, refs.c (sets of references that graphs hold, released when the
 * driver is done with them), capture_state.c (what cucore knows of stream captures, and the calls a
 * capture forbids), device_attr_table.c (every device attribute, one row each) and device_attr.c
 * (reading them, by id or name).
 */
#ifndef CUCORE_RUNTIME_H
#define CUCORE_RUNTIME_H

#include "loader/loader.h"

#include <pthread.h>
#include <stdatomic.h>

typedef struct cc_capture cc_capture;

struct cucore_stream {
  cc_handle hdr; /* first: the magic word of base/handle.h */
  CUstream handle;
  cucore_device *dev;
  int is_default;      /* owned by the device (legacy or per-thread stream), not destroyable */
  int borrowed;        /* wraps the caller's CUstream: destroying the wrapper leaves it alone */
  int blocking;        /* synchronises with the legacy default stream (known when the handle is
                     made: asking the driver later, cuStreamGetFlags, would invalidate a
                     capture the stream takes part in) */
  cc_capture *capture; /* the capture cucore began or saw the stream join (a reference), or
                          NULL; set and cleared by capture.c */
};

/* 1 when a stream handle synchronises with the legacy default stream (the driver is asked;
 * a capturing stream, or one it cannot answer for, counts as blocking). */
int cc_stream_query_blocking(CUstream h);

struct cucore_device {
  cc_handle hdr; /* first: the magic word of base/handle.h */
  int ordinal;
  CUdevice cudev;
  CUcontext ctx;
  int borrowed; /* the caller's context, not retained: closing leaves it alone */
  struct cucore_stream default_stream;    /* the legacy default stream (NULL handle) */
  struct cucore_stream per_thread_stream; /* CU_STREAM_PER_THREAD */
  int green; /* 0, or the SM count of the green context that owns this handle (green.c):
                kernels are launched as their context-free CUkernel, so nothing of a destroyed
                green context (whose CUcontext address a later one may reuse) is ever kept, and
                cooperative launches are checked against the green context's SMs */
};

struct cucore_event {
  cc_handle hdr; /* first: the magic word of base/handle.h */
  CUevent handle;
  cucore_device *dev;
  unsigned flags;
  int borrowed;        /* wraps the caller's CUevent: destroying the wrapper leaves it alone */
  atomic_int refs;     /* the user's, plus one per graph that references the event */
  cc_capture *capture; /* the capture it was last recorded in (a reference), or NULL */
};

/* Adds / drops a reference to an event (graphs hold one); the last drop destroys it. The void*
 * forms fit the reference sets below. */
void cc_event_retain(void *ev);
void cc_event_release(void *ev);

/* Makes some context current when none is (device 0's primary context, retained once for the
 * life of the process), for queries the driver answers only inside a context. */
cucore_status cc_ensure_context(void);
/* Makes the device's primary context current on this thread (cheap when it already is). */
cucore_status cc_device_make_current(cucore_device *dev);
/* (The hot paths' inline check of the current context: runtime/current.h.) */
/* Forgets what cucore last saw current on this thread. */
void cc_device_forget_current(void);
/* Sets up the streams a device owns (legacy default, per-thread). */
void cc_device_init_streams(cucore_device *dev);
/* The CUdevice of ordinal `ordinal`: CUCORE_INVALID_DEVICE naming the range when there is none
 * (`fn` names the public call). */
cucore_status cc_device_cudev(int ordinal, CUdevice *out, const char *fn);
/* The ordinal of a CUdevice (-1 when the driver lists no such device). */
int cc_device_ordinal_of(CUdevice d);
/* 1 when device `ordinal`'s primary context is made or being made: a cucore handle of it is
 * open or opening on any thread (a counter, read without waiting for the driver), or the
 * driver says it is active (made by the caller through the driver or the CUDA runtime; asked
 * only once the driver is loaded); 0 when a first open would make it. */
int cc_device_primary_started(int ordinal);

/* ---- device attributes (device_attr_table.c, device_attr.c) --------------------------------- */

/* One device attribute: a row of device_attr_table.c. */
typedef struct cc_devattr {
  int id;                  /* the CU_DEVICE_ATTRIBUTE_* value */
  const char *name;        /* cucore's name: the driver's, lower case, without the prefix */
  const char *driver_name; /* "CU_DEVICE_ATTRIBUTE_..." */
  int since;               /* the CUDA version that brought it (12000: every driver cucore loads) */
  int deprecated;          /* 1: the driver keeps it for old code */
  const char *meaning;     /* what it says, in a few words */
  const char *props_field; /* the cucore_device_props field read from it, or NULL */
  int props_offset;        /* that field's offset, or -1 */
} cc_devattr;

/* The row of attribute `id` (NULL when cucore knows no such id). */
const cc_devattr *cc_devattr_find(int id);
/* The driver's older names of known ids: how many, and the i-th with its id (NULL past them). */
int cc_devattr_alias_count(void);
const char *cc_devattr_alias(int i, int *id);

/* ---- attributes shared by launches and streams (attrs.c) ------------------------------------ */

/* 1 when cucore knows launch attribute `id` (CUDA 13.0's list). */
int cc_launch_attr_known(int id);
/* The driver's form of an attribute (events as their CUevent). Unknown ids (for a newer
 * driver) pass their raw value bytes through. */
void cc_launch_attr_to_cu(const cucore_launch_attr *a, CUlaunchAttribute *c);
/* The cucore form of a driver attribute value (streams' attributes: access policy window,
 * synchronization policy, priority, memory sync domain and its map). */
void cc_launch_attr_from_cu(CUlaunchAttributeID id, const CUlaunchAttributeValue *v,
                            cucore_launch_attr *a);

/* ---- reference sets (refs.c) -------------------------------------------------------------- */

/* A set of references a graph holds on what its nodes use (kernels, events, other sets, host
 * data). Counted; the last release releases every member, newest first. */
typedef struct cc_refs cc_refs;
typedef void (*cc_release_fn)(void *p);

/* The set (refs.c owns it; defined here so the launch path reads `last` without a call). */
typedef struct cc_ref_item {
  void *p;
  cc_release_fn release;
} cc_ref_item;

struct cc_refs {
  atomic_int count;
  pthread_mutex_t lock;
  cc_ref_item *items;
  int n;
  size_t cap;
  _Atomic(void *) last; /* the last member held: a repeated hold returns at once */
  struct cc_refs *next; /* on the list of sets the driver dropped */
};

/* A new, empty set with one reference (NULL when out of memory; failure recorded). */
cc_refs *cc_refs_new(void);
void cc_refs_retain(void *r);
void cc_refs_release(void *r); /* NULL is a no-op */
/* Holds `p` in the set: retain(p) the first time it is added, release(p) when the set goes. */
cucore_status cc_refs_hold(cc_refs *r, void *p, void (*retain)(void *), cc_release_fn release);
/* Takes `p` into the set: release(p) once when the set goes (no retain, no duplicate check). */
cucore_status cc_refs_own(cc_refs *r, void *p, cc_release_fn release);
/* Gives graph `g` a reference to the set through a driver user object: the driver drops it
 * when neither the graph nor any executable graph made from it needs it (after their launches
 * complete); cucore releases the set at its next drain. On failure nothing changes. */
cucore_status cc_refs_attach(cc_refs *r, CUgraph g);
/* Called just before a graph with an attached set is destroyed: the driver will drop it. */
void cc_refs_expect_drop(void);
/* Releases the sets the driver dropped (cheap when there are none). */
void cc_refs_drain(void);
/* Waits (1 s at most) for the drops the driver owes, then drains: before a device closes. */
void cc_refs_flush(void);

/* ---- stream capture (capture.c) ------------------------------------------------------------ */

/* What cucore knows of a capture it began (capture.c owns it; defined here so the launch path
 * reads it without a call). */
struct cc_capture {
  atomic_int refs; /* the registry's while active, one per stream and event naming it */
  cucore_device *dev;
  cucore_stream *origin; /* where it began (and must end) */
  int mode;              /* CUstreamCaptureMode */
  pthread_t thread;      /* the thread that began it */
  unsigned long long id; /* the driver's id of the capture sequence */
  int active;            /* 1 until it ended */
  int blocking;          /* a stream taking part synchronises with the legacy default stream */
  cc_refs *refs_held;    /* what the captured work references */
  void *owner;           /* given at the start, handed back at the end */
  cc_release_fn owner_release; /* releases `owner` when the capture dies without an end */
  cucore_stream **streams;     /* every stream taking part (origin first) */
  int stream_count;
  size_t stream_cap;
  cucore_status failure; /* the first failure the driver gave for work in the capture */
  char failure_message[640];
  cc_capture *next; /* in the list of active captures */
};

/* How many captures cucore began are active (any thread): the launch path's one check. */
extern atomic_int cc_capture_count;
static inline int cc_captures_active(void) {
  return atomic_load_explicit(&cc_capture_count, memory_order_relaxed) != 0;
}

/* Begins a capture on `s` (cuStreamBeginCapture, or ...ToGraph when `into` is given, after
 * `deps`). `refs` receives what the captured work references (a reference is taken); `owner`
 * is handed back by cc_capture_end, or released with `owner_release` when the capture dies
 * without one (its stream destroyed). */
cucore_status cc_capture_begin(cucore_stream *s, int mode, CUgraph into, const CUgraphNode *deps,
                               size_t ndeps, cc_refs *refs, void *owner,
                               cc_release_fn owner_release, const char *fn);
/* Gives the capture an owner once it has none (a plain capture that needs a graph structure
 * before it ends: graph/capture_nodes.c); 0 when it has one already. */
int cc_capture_set_owner(cc_capture *c, void *owner, cc_release_fn owner_release);
/* Ends the capture begun on `s`: the graph (NULL when the capture failed: the status says why),
 * the set and the owner given at the start (references handed over). The streams that took
 * part are free of the capture afterwards, whatever the outcome. */
cucore_status cc_capture_end(cucore_stream *s, CUgraph *graph, cc_refs **refs, void **owner,
                             const char *fn);
/* The capture `s` takes part in as cucore knows it (NULL when none or ended). */
cc_capture *cc_capture_of(const cucore_stream *s);
/* The owner given to cc_capture_begin (NULL for none). */
void *cc_capture_owner(const cc_capture *c);
/* What cucore knows of a capture, for cucore_stream_get_capture_info. */
void cc_capture_describe(const cc_capture *c, const cucore_stream *s, int *mode, int *is_origin);

/* Refusals, made before the driver would invalidate a capture (CUCORE_STREAM_CAPTURE naming
 * `fn` and the capture): */
/* synchronising with or querying a stream that is capturing; */
cucore_status cc_capture_check_stream(cucore_stream *s, const char *fn);
/* synchronising with, querying or timing an event last recorded in an active capture; */
cucore_status cc_capture_check_event(const cucore_event *ev, const char *fn);
/* a call the driver calls potentially unsafe during capture (allocations, frees, synchronous
 * copies and fills, device synchronisation: `legacy` when it runs on the legacy default
 * stream; `device_sync` when it waits for every stream of the device); */
cucore_status cc_capture_check_unsafe(cucore_device *dev, int legacy, int device_sync,
                                      const char *fn);
/* a launch on `s`: on the legacy default stream while a stream synchronising with it captures.
 * Holds nothing. */
cucore_status cc_capture_check_launch(cucore_stream *s, const char *fn);
/* 1 when a launch of `p` on `s` needs nothing of cucore's capture bookkeeping: `s` is not the
 * legacy default stream (which cc_capture_check_launch guards) and takes part in no capture
 * cucore began, or in one whose set holds `p` already (the launch path's inline check; 0 sends
 * it to cc_capture_check_launch and cc_capture_hold). */
static inline int cc_capture_launch_ready(const cucore_stream *s, void *p) {
  if (s->handle == NULL || s->handle == CU_STREAM_LEGACY) return 0;
  cc_capture *c = s->capture;
  if (!c || !c->active) return 1;
  cc_refs *r = c->refs_held;
  return r && atomic_load_explicit(&r->last, memory_order_acquire) == p;
}
/* Holds `p` in the capture `s` takes part in (nothing when none). */
cucore_status cc_capture_hold(cucore_stream *s, void *p, void (*retain)(void *),
                              cc_release_fn release);
/* An event recorded on `s`: it marks a point of the capture `s` is in (or none). */
void cc_capture_event_recorded(cucore_event *ev, cucore_stream *s);
/* Before `s` waits on `ev`: refuses a wait that would merge two captures. */
cucore_status cc_capture_event_waited(cucore_stream *s, cucore_event *ev, const char *fn);
/* After the driver accepted the wait: `s` takes part in the capture `ev` was recorded in. */
void cc_capture_joined(cucore_stream *s, cucore_event *ev);
/* The same for a capture known by its record (`from` NULL or ended: nothing happens). */
void cc_capture_join(cucore_stream *s, cc_capture *from);
/* Before `waiter` waits on the work of `waited` (cucore_stream_wait_stream): refuses a wait
 * that would cross a capture's boundary or merge two captures, and one that involves the
 * legacy default stream beside a capturing stream that synchronises with it. */
cucore_status cc_capture_check_wait_stream(cucore_stream *waiter, cucore_stream *waited,
                                           const char *fn);
/* Drops a stream's or an event's reference to its capture (destroying them). */
void cc_capture_forget_stream(cucore_stream *s);
void cc_capture_forget_event(cucore_event *ev);
/* Records the first failure the driver gave for work in the capture `s` is in (the thread's
 * last message), to name it when the capture ends. */
void cc_capture_note_failure(cucore_stream *s);
/* Around a driver call cucore makes for itself during a capture (loading a function, setting a
 * kernel attribute, an occupancy query): the thread's capture mode is relaxed so that the call
 * does not invalidate the capture. Cheap when no capture is active. */
int cc_capture_relax(void);
void cc_capture_unrelax(int token);

#endif /* CUCORE_RUNTIME_H */
