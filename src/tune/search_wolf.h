/*
 * tune/search_wolf.h -- a grey-wolf pack's children (search_wolf.c), the forest's turns that
 * recombine the best measured configurations (search_model.c). Private to src/tune.
 */
#ifndef CUCORE_TUNE_SEARCH_WOLF_H
#define CUCORE_TUNE_SEARCH_WOLF_H

#include "tune/search.h"

#define CC_TWOLF_PACK_MAX 64 /* wolves at most */

/* A child of the pack into digits: the pack is the best `pack` measured configurations
 * (at least 4); its leaders alpha, beta and delta the best, the best at least `apart`
 * parameters from it, and the best at least `apart` from both (the next best where none is
 * that far); the moving wolf one of the rest at random. Each parameter of the child takes the
 * value of alpha, beta, delta or the wolf at random; then, with chance `shake`, one parameter
 * moves to an adjacent value; one proposed already or invalid is repaired by random one-value
 * moves. `work` holds 4 x nparams value indices. 1 when digits holds a fresh configuration,
 * 0 when fewer than 4 configurations are measured or none is fresh. */
int cc_twolf_child(cc_tsearch *s, size_t pack, size_t apart, double shake, size_t *work,
                   size_t *digits);

#endif /* CUCORE_TUNE_SEARCH_WOLF_H */
