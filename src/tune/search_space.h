/*
 * tune/search_space.h -- a live space as a search domain (search_space.c): valid by the walk's
 * checks, the r-th runnable configuration by a rank index over the walk's intervals (or drawn
 * by rejection when the space is cut into too many). Private to src/tune.
 */
#ifndef CUCORE_TUNE_SEARCH_SPACE_H
#define CUCORE_TUNE_SEARCH_SPACE_H

#include "tune/search.h"
#include "tune/space.h"

typedef struct cc_tlive cc_tlive;

/* A domain over `s` (kept: it must outlive the domain and not change meanwhile). */
cucore_status cc_tlive_open(const cucore_tune_space *s, cc_tlive **out);
void cc_tlive_close(cc_tlive *l);
/* The domain the strategies search (count: the runnable configurations). */
const cc_tdom *cc_tlive_domain(const cc_tlive *l);
/* 1 when the rank index was built (else ranks are drawn by rejection). */
int cc_tlive_indexed(const cc_tlive *l);
/* The r-th runnable configuration's index (0 <= r < count; an indexed domain only). */
uint64_t cc_tlive_at_rank(cc_tlive *l, uint64_t r);
/* A uniformly random runnable configuration into *index; 0 when none was found. */
int cc_tlive_sample(cc_tlive *l, cc_rng *rng, uint64_t *index);
/* 1 when configuration `index` is runnable. */
int cc_tlive_runnable(cc_tlive *l, uint64_t index);

#endif /* CUCORE_TUNE_SEARCH_SPACE_H */
