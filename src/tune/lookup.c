/*
 * lookup.c -- cucore_tune_lookup: the best recorded configuration for a key, found as Kernel
 * Launcher finds its "wisdom": the exact problem on this device, else the nearest problem
 * size on this device, else another device (the same problem first), else the default; and
 * it says which.
 */
#include "tune/store.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The product of the numbers of a problem text ("4096,4096" -> 16777216; "" -> 1). */
static double problem_volume(const char *p) {
  double v = 1;
  for (char *end; *p; p = end) {
    double x = strtod(p, &end);
    if (end == p) {
      end = (char *)p + 1;
      continue;
    }
    v *= x;
  }
  return v;
}

typedef struct pick {
  const cc_trec *best;
  double distance;
} pick;

/* Keeps r when it is closer (then faster) than the pick so far. */
static void consider(pick *p, const cc_trec *r, double distance) {
  if (r->status != CUCORE_TUNE_OK || r->median_ms < 0) return;
  if (!p->best || distance < p->distance ||
      (distance == p->distance && r->median_ms < p->best->median_ms)) {
    p->best = r;
    p->distance = distance;
  }
}

static cucore_tune_match choose(const cc_trecs *rs, const char *key, const char *problem,
                                const char *device, const cc_trec **best) {
  pick exact = {0}, near = {0}, other = {0};
  double want = problem_volume(problem);
  for (size_t i = 0; i < rs->n; i++) {
    const cc_trec *r = &rs->r[i];
    if (strcmp(r->key, key) != 0) continue;
    int same_dev = strcmp(r->device, device) == 0, same_pb = strcmp(r->problem, problem) == 0;
    if (same_dev && same_pb)
      consider(&exact, r, 0);
    else if (same_dev)
      consider(&near, r, fabs(problem_volume(r->problem) - want));
    else
      consider(&other, r, same_pb ? 0 : 1 + fabs(problem_volume(r->problem) - want));
  }
  *best = exact.best ? exact.best : near.best ? near.best : other.best;
  return exact.best   ? CUCORE_TUNE_MATCH_EXACT
         : near.best  ? CUCORE_TUNE_MATCH_NEAREST_SIZE
         : other.best ? CUCORE_TUNE_MATCH_OTHER_DEVICE
                      : CUCORE_TUNE_MATCH_DEFAULT;
}

cucore_status cucore_tune_lookup(const char *path, const char *key, const char *problem,
                                 const char *device, char *config, size_t cap, double *median_ms,
                                 cucore_tune_match *how) {
  cc_begin();
  const char *fn = "cucore_tune_lookup";
  CC_CHECK_ARG(how, fn, "how");
  *how = CUCORE_TUNE_MATCH_DEFAULT;
  if (cap > 0) CC_CHECK_ARG(config, fn, "config");
  if (cap > 0) config[0] = 0;
  cucore_status st = cc_tune_check_key(fn, key);
  char *def = NULL;
  if (st == CUCORE_OK && !path && (st = cc_tune_store_default_path(key, &def)) == CUCORE_OK)
    path = def;
  cc_trecs rs = {0};
  if (st == CUCORE_OK) st = cc_tune_records_read(path, &rs);
  const cc_trec *best = NULL;
  if (st == CUCORE_OK) *how = choose(&rs, key, problem ? problem : "", device ? device : "", &best);
  if (best && cap > 0) snprintf(config, cap, "%s", best->config);
  if (best && median_ms) *median_ms = best->median_ms;
  if (st == CUCORE_OK && !best)
    st = cc_fail(CUCORE_NOT_FOUND, "%s: `%s` records no successful result for key %.12s...", fn,
                 path, key);
  cc_tune_records_free(&rs);
  free(def);
  return st;
}
