/*
 * refs.c -- sets of references that graphs hold on what their nodes use (kernels, events,
 * the sets of child graphs, host data), and their release once the driver no longer needs
 * them.
 *
 * A graph may still be running after cucore destroyed it or its executable graphs: the driver
 * frees those when their launches complete. So a graph's set is not released by cucore when
 * the graph goes, but handed to the driver as a user object (cuUserObjectCreate) owned by the
 * graph; the driver drops it when neither the graph nor any executable graph made from it
 * needs it any more. Its destructor runs on a driver thread and may not call CUDA, so it only
 * puts the set on a list; cucore releases the sets on that list (which may unload code or
 * destroy events) at its next drain, from a cucore call: creating, destroying, instantiating
 * or ending a capture, and before a device closes (cc_refs_flush waits for the drops owed).
 */
#define _POSIX_C_SOURCE 200809L
#include "runtime/runtime.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>

cc_refs *cc_refs_new(void) {
  cc_refs *r = cc_calloc(1, sizeof *r, "a reference set");
  if (!r) return NULL;
  atomic_init(&r->count, 1);
  atomic_init(&r->last, NULL);
  pthread_mutex_init(&r->lock, NULL);
  return r;
}

void cc_refs_retain(void *p) { atomic_fetch_add(&((cc_refs *)p)->count, 1); }

void cc_refs_release(void *p) {
  cc_refs *r = p;
  if (!r || atomic_fetch_sub(&r->count, 1) != 1) return;
  for (int i = r->n - 1; i >= 0; i--) r->items[i].release(r->items[i].p);
  free(r->items);
  pthread_mutex_destroy(&r->lock);
  free(r);
}

static cucore_status append(cc_refs *r, void *p, cc_release_fn release) {
  cc_ref_item *items = cc_grow(r->items, &r->cap, (size_t)r->n + 1, sizeof *items,
                               "a graph's list of references");
  if (!items) return CUCORE_HOST_OUT_OF_MEMORY;
  r->items = items;
  r->items[r->n++] = (cc_ref_item){p, release};
  return CUCORE_OK;
}

cucore_status cc_refs_hold(cc_refs *r, void *p, void (*retain)(void *), cc_release_fn release) {
  if (atomic_load_explicit(&r->last, memory_order_acquire) == p) return CUCORE_OK;
  pthread_mutex_lock(&r->lock);
  for (int i = r->n - 1; i >= 0; i--)
    if (r->items[i].p == p && r->items[i].release == release) {
      pthread_mutex_unlock(&r->lock);
      return CUCORE_OK;
    }
  cucore_status st = append(r, p, release);
  if (st == CUCORE_OK) {
    retain(p);
    atomic_store_explicit(&r->last, p, memory_order_release);
  }
  pthread_mutex_unlock(&r->lock);
  return st;
}

cucore_status cc_refs_own(cc_refs *r, void *p, cc_release_fn release) {
  pthread_mutex_lock(&r->lock);
  cucore_status st = append(r, p, release);
  pthread_mutex_unlock(&r->lock);
  return st;
}

/* ---- what the driver dropped ------------------------------------------------------------ */

static pthread_mutex_t dropped_lock = PTHREAD_MUTEX_INITIALIZER;
static cc_refs *dropped;         /* sets the driver dropped, to release */
static atomic_int dropped_count; /* their number (the cheap check of cc_refs_drain) */
static atomic_int drops_owed;    /* sets of destroyed graphs the driver has yet to drop */

/* The user object's destructor: a driver thread, no CUDA calls allowed. */
static void CUDA_CB dropped_by_driver(void *p) {
  cc_refs *r = p;
  pthread_mutex_lock(&dropped_lock);
  r->next = dropped;
  dropped = r;
  pthread_mutex_unlock(&dropped_lock);
  atomic_fetch_add(&dropped_count, 1);
  atomic_fetch_sub(&drops_owed, 1);
}

cucore_status cc_refs_attach(cc_refs *r, CUgraph g) {
  cucore_status st = CC_DRV_REQUIRE(cuUserObjectCreate);
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuGraphRetainUserObject);
  if (st != CUCORE_OK) return st;
  CUuserObject obj = NULL;
  cc_refs_retain(r); /* the user object's reference */
  CUresult res = DRV(cuUserObjectCreate)(&obj, r, dropped_by_driver, 1,
                                         CU_USER_OBJECT_NO_DESTRUCTOR_SYNC);
  if (res != CUDA_SUCCESS) {
    atomic_fetch_sub(&r->count, 1); /* the caller still holds one: never the last */
    return cc_fail_cu(res, "cuUserObjectCreate", "the set of references a graph keeps");
  }
  res = DRV(cuGraphRetainUserObject)(g, obj, 1, CU_GRAPH_USER_OBJECT_MOVE);
  if (res != CUDA_SUCCESS) {
    /* The user object still holds its reference: dropping it sends the set to the list. */
    atomic_fetch_add(&drops_owed, 1);
    (void)DRV(cuUserObjectRelease)(obj, 1);
    return cc_fail_cu(res, "cuGraphRetainUserObject", "handing a graph its references");
  }
  return CUCORE_OK;
}

void cc_refs_expect_drop(void) { atomic_fetch_add(&drops_owed, 1); }

void cc_refs_drain(void) {
  if (CC_LIKELY(atomic_load_explicit(&dropped_count, memory_order_relaxed) == 0)) return;
  pthread_mutex_lock(&dropped_lock);
  cc_refs *list = dropped;
  dropped = NULL;
  int n = 0;
  for (cc_refs *r = list; r; r = r->next) n++;
  atomic_fetch_sub(&dropped_count, n);
  pthread_mutex_unlock(&dropped_lock);
  while (list) {
    cc_refs *next = list->next;
    cc_refs_release(list);
    list = next;
  }
}

void cc_refs_flush(void) {
  /* The driver drops a destroyed graph's set once its launches complete, from a thread of its
   * own, usually within microseconds; wait for it a while, not forever (a graph still running
   * a kernel that never ends must not hang the close). */
  for (int i = 0; i < 10000 && atomic_load(&drops_owed) > 0; i++) {
    struct timespec ts = {0, 100000}; /* 0.1 ms */
    nanosleep(&ts, NULL);
  }
  cc_refs_drain();
}
