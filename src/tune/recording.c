/*
 * recording.c -- what every reader of a recorded space shares (tune/recording.h): a value's
 * text and index among a parameter's values, the entries sorted by configuration index with a
 * configuration twice refused, the optimum, the domain of exactly the recorded configurations
 * that the strategies search, and freeing. The readers: recording_kt.c (Kernel Tuner's cache
 * files), recording_t4.c (TuningSchema T4); recording_read.c picks one.
 */
#include "tune/recording.h"
#include "tune/strict_json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WHAT "a recording"

void cc_trecording_free(cc_trecording *r) {
  if (!r) return;
  for (size_t p = 0; r->names && p < r->nparams; p++) free(r->names[p]);
  size_t nv = r->nparams && r->offset ? r->offset[r->nparams - 1] + r->sizes[r->nparams - 1] : 0;
  for (size_t i = 0; r->texts && i < nv; i++) free(r->texts[i]);
  free(r->kernel), free(r->device), free(r->names), free(r->sizes), free(r->offset);
  free(r->texts), free(r->num), free(r->index), free(r->time), free(r->cost);
  free(r);
}

char *cc_trecording_text_of(const cc_json *v) {
  if (v->type == CC_JSON_STRING || v->type == CC_JSON_NUMBER) return cc_strdup(v->text, WHAT);
  return cc_strdup(v->type == CC_JSON_BOOL ? (v->boolean ? "true" : "false") : "null", WHAT);
}

long cc_trecording_value_of(const cc_trecording *r, size_t p, const cc_json *v) {
  const char *text = v->type == CC_JSON_STRING ? v->text
                     : v->type == CC_JSON_BOOL ? (v->boolean ? "true" : "false")
                                               : "null";
  for (size_t k = 0; k < r->sizes[p]; k++) {
    size_t at = r->offset[p] + k;
    if (v->type == CC_JSON_NUMBER ? r->num[at] == v->number
                                  : isnan(r->num[at]) && strcmp(r->texts[at], text) == 0)
      return (long)k;
  }
  return -1;
}

typedef struct entry {
  uint64_t index;
  double time, cost;
} entry;

static int by_index(const void *a, const void *b) {
  uint64_t x = ((const entry *)a)->index, y = ((const entry *)b)->index;
  return (x > y) - (x < y);
}

/* Sorts the entries by index; a configuration recorded twice is refused. */
static cucore_status sort_entries(cc_trecording *r, const char *name, const char *format) {
  entry *e = cc_calloc(r->n + 1, sizeof *e, WHAT);
  if (!e) return CUCORE_HOST_OUT_OF_MEMORY;
  for (size_t i = 0; i < r->n; i++) e[i] = (entry){r->index[i], r->time[i], r->cost[i]};
  qsort(e, r->n, sizeof *e, by_index);
  cucore_status st = CUCORE_OK;
  for (size_t i = 0; i < r->n; i++) {
    r->index[i] = e[i].index, r->time[i] = e[i].time, r->cost[i] = e[i].cost;
    if (i && e[i].index == e[i - 1].index && st == CUCORE_OK)
      st = cc_fail(CUCORE_INVALID_ARGUMENT, "%s (%s): a configuration recorded twice", name,
                   format);
  }
  free(e);
  return st;
}

long cc_trecording_find(const cc_trecording *r, uint64_t index) {
  size_t lo = 0, hi = r->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (r->index[mid] < index)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < r->n && r->index[lo] == index ? (long)lo : -1;
}

static int rec_valid(void *ctx, const size_t *digits) {
  const cc_trecording *r = ctx;
  return cc_trecording_find(r, cc_tdom_index(&r->dom, digits)) >= 0;
}

static void rec_at_rank(void *ctx, uint64_t k, size_t *digits) {
  const cc_trecording *r = ctx;
  cc_tdom_digits(&r->dom, r->index[k], digits);
}

cucore_status cc_trecording_finish(cc_trecording *r, const char *name, const char *format) {
  cucore_status st = sort_entries(r, name, format);
  r->optimum = INFINITY;
  for (size_t i = 0; i < r->n; i++)
    if (!isnan(r->time[i])) {
      r->nvalid++;
      if (r->time[i] < r->optimum) r->optimum = r->time[i];
    }
  if (st == CUCORE_OK && !r->nvalid)
    st = cc_fail(CUCORE_INVALID_ARGUMENT, "%s (%s): no configuration with a time", name, format);
  r->dom = (cc_tdom){r->nparams, r->sizes, r->num, r->offset, r->n, r, rec_valid, rec_at_rank};
  return st;
}
