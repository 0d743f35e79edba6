/* reader.c -- what the binary readers share: kernel lists and architecture names. */
#include "binary/reader.h"
#include "binary/demangle.h"

#include <stdio.h>
#include <stdlib.h>

/* ---- kernel lists ---------------------------------------------------------------------------- */

/* A copy of name[0, name_len) with a NUL after it, or NULL (failure recorded). */
static char *copy_name(const char *name, size_t name_len, const char *what) {
  char *copy = cc_malloc(name_len + 1, what);
  if (!copy) return NULL;
  memcpy(copy, name, name_len);
  copy[name_len] = '\0';
  return copy;
}

/* Appends a zeroed item of `size` bytes to the array *items (count and cap beside it, grown
 * with cc_grow, `list` naming it) and copies name[0, name_len) into *copy (`what` naming it);
 * returns the item, or NULL (failure recorded; the array may have grown, the count not). */
static void *add_named(void **items, uint32_t *count, size_t *cap, size_t size, const char *list,
                       const char *name, size_t name_len, const char *what, char **copy) {
  char *grown = cc_grow(*items, cap, (size_t)*count + 1, size, list);
  if (!grown) return NULL;
  *items = grown;
  *copy = copy_name(name, name_len, what);
  if (!*copy) return NULL;
  void *item = grown + (size_t)(*count)++ * size;
  memset(item, 0, size);
  return item;
}

cucore_kernel_info *cc_klist_add(cc_klist *l, const char *name, size_t name_len) {
  void *items = l->items;
  char *copy = NULL;
  cucore_kernel_info *k = add_named(&items, &l->count, &l->cap, sizeof *k, "the list of kernels",
                                    name, name_len, "a kernel name", &copy);
  l->items = items;
  if (k) k->name = copy;
  return k;
}

void cc_klist_free(cc_klist *l) {
  for (uint32_t i = 0; i < l->count; i++) {
    free((void *)l->items[i].name);
    free((void *)l->items[i].demangled);
    free((void *)l->items[i].params);
    free((void *)l->items[i].param_types); /* one block: the pointers, then the strings */
  }
  free(l->items);
  memset(l, 0, sizeof *l);
}

/* ---- module variables ------------------------------------------------------------------------ */

cucore_global_info *cc_glist_add(cc_glist *l, const char *name, size_t name_len) {
  void *items = l->items;
  char *copy = NULL;
  cucore_global_info *g = add_named(&items, &l->count, &l->cap, sizeof *g,
                                    "the list of module variables", name, name_len,
                                    "a variable name", &copy);
  l->items = items;
  if (g) {
    g->name = copy;
    g->demangled = cc_demangle(copy);
  }
  return g;
}

void cc_glist_free(cc_glist *l) {
  for (uint32_t i = 0; i < l->count; i++) {
    free((void *)l->items[i].name);
    free((void *)l->items[i].demangled);
  }
  free(l->items);
  memset(l, 0, sizeof *l);
}

const cucore_global_info *cc_glist_find(const cc_glist *l, const char *name) {
  for (uint32_t i = 0; i < l->count; i++)
    if (strcmp(l->items[i].name, name) == 0) return &l->items[i];
  for (uint32_t i = 0; i < l->count; i++)
    if (l->items[i].demangled && strcmp(l->items[i].demangled, name) == 0) return &l->items[i];
  return NULL;
}

static uint64_t dims_product(const uint32_t d[3]) {
  uint64_t p = 1;
  for (int i = 0; i < 3; i++) {
    if (d[i] == 0) return 0;
    p *= d[i];
    if (p > 1u << 20) return 1u << 20; /* far past any block limit */
  }
  return p;
}

void cc_kinfo_finish_limits(cucore_kernel_info *k) {
  int64_t limit = 1024;
  int declared = 0;
  uint64_t m = dims_product(k->maxntid), r = dims_product(k->reqntid);
  if (m) {
    declared = 1;
    if ((int64_t)m < limit) limit = (int64_t)m;
  }
  if (r) {
    declared = 1;
    if ((int64_t)r < limit) limit = (int64_t)r;
  }
  if (k->registers == CUCORE_UNKNOWN) {
    k->max_threads_per_block = declared ? (int32_t)limit : CUCORE_UNKNOWN;
    return;
  }
  if (k->registers > 0) {
    /* cuda_occupancy.h for compute capability 7.0-12.x: 65536 registers per block, allocated
     * per warp in units of 256, warps in groups of the 4 sub-partitions, at most 255 per
     * thread. */
    int64_t per_warp = ((int64_t)k->registers * 32 + 255) / 256 * 256;
    int64_t warps = 0;
    if (k->registers <= 255)
      for (int64_t w = 1; w <= 32; w++) {
        int64_t rounded = (w + 3) / 4 * 4;
        if (per_warp * rounded > 65536) break;
        warps = w;
      }
    if (warps * 32 < limit) limit = warps * 32;
  }
  k->max_threads_per_block = (int32_t)limit;
}

const char *cc_arch_name(int arch, char suffix, const char *prefix, char *buf, size_t len) {
  if (suffix)
    snprintf(buf, len, "%s_%d%c", prefix, arch, suffix);
  else
    snprintf(buf, len, "%s_%d", prefix, arch);
  return buf;
}
