/* grow.c -- cli_grow, the one growth step for the command's growable arrays (the library's
 * cc_grow is internal to it; the command uses only the public API). */
#include "cli.h"

#include <stdint.h>
#include <stdlib.h>

void *cli_grow(void *items, size_t *cap, size_t need, size_t size, const char *what) {
  if (need <= *cap && items) return items;
  size_t n = *cap ? *cap : 8;
  while (n < need) n = n > SIZE_MAX / 2 ? SIZE_MAX : n * 2;
  if (size == 0 || n > SIZE_MAX / size) {
    fprintf(stderr, "cucore: %s cannot grow to %zu items of %zu bytes\n", what, need, size);
    return NULL;
  }
  void *p = realloc(items, n * size);
  if (!p) {
    fprintf(stderr, "cucore: out of host memory growing %s to %zu items (%zu bytes)\n", what, n,
            n * size);
    return NULL;
  }
  *cap = n;
  return p;
}
