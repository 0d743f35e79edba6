/* search_random.c -- uniform random sampling over the valid configurations, never one twice:
 * the baseline every other strategy must beat, and the first samples of most of them. */
#include "tune/search.h"

static cucore_status random_open(cc_tsearch *s) {
  s->state = s; /* nothing of its own */
  return CUCORE_OK;
}

static size_t random_propose(cc_tsearch *s, uint64_t *out, size_t want) {
  size_t n = 0;
  while (n < want && cc_tsearch_random_fresh(s, s->scratch))
    n += (size_t)cc_tsearch_take(s, s->scratch, &out[n]);
  return n;
}

static void random_observe(cc_tsearch *s, size_t i) { (void)s, (void)i; }
static void random_close(cc_tsearch *s) { s->state = NULL; }

const cc_tstrat_ops cc_ts_random_ops = {random_open,  random_propose, random_observe,
                                        random_close, NULL,           NULL};
