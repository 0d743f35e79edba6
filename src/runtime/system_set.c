/*
 * system_set.c -- cucore_system_set: a set of CPU or NUMA-node numbers of any size, made from
 * a bit mask (NVML's or the kernel's), read member by member, written as ranges for messages.
 */
#define _GNU_SOURCE
#include "runtime/system_map.h"
#include "base/handle.h"

#include <limits.h>
#include <stdlib.h>

struct cucore_system_set {
  cc_handle handle;
  int numa;     /* 1: NUMA nodes; 0: CPUs */
  size_t count; /* members */
  int *members; /* increasing */
};

#define WORD_BITS (sizeof(unsigned long) * CHAR_BIT)

cucore_status cc_sys_set_of_mask(const unsigned long *mask, size_t words, int numa,
                                 cucore_system_set **out) {
  size_t n = 0;
  for (size_t w = 0; w < words; w++) n += (size_t)__builtin_popcountl(mask[w]);
  cucore_system_set *s = cc_calloc(1, sizeof *s, "a CPU or NUMA-node set");
  if (!s) return CUCORE_HOST_OUT_OF_MEMORY;
  s->members = cc_calloc(n + 1, sizeof *s->members, "a CPU or NUMA-node set");
  if (!s->members) {
    free(s);
    return CUCORE_HOST_OUT_OF_MEMORY;
  }
  cc_handle_init(s, CC_KIND_SYS_SET);
  s->numa = numa;
  for (size_t w = 0; w < words; w++)
    for (size_t b = 0; b < WORD_BITS; b++)
      if (mask[w] >> b & 1ul) s->members[s->count++] = (int)(w * WORD_BITS + b);
  *out = s;
  return CUCORE_OK;
}

int cc_sys_set_numa(const cucore_system_set *s) { return s->numa; }
size_t cc_sys_set_count(const cucore_system_set *s) { return s->count; }
const int *cc_sys_set_members(const cucore_system_set *s) { return s->members; }

void cc_sys_set_text(const cucore_system_set *s, cc_sb *b) {
  if (!s->count) cc_sb_puts(b, "none");
  for (size_t i = 0; i < s->count;) {
    size_t j = i;
    while (j + 1 < s->count && s->members[j + 1] == s->members[j] + 1) j++;
    cc_sb_printf(b, i ? ",%d" : "%d", s->members[i]);
    if (j > i) cc_sb_printf(b, "-%d", s->members[j]);
    i = j + 1;
  }
}

cucore_status cucore_system_set_get_count(const cucore_system_set *set, size_t *count) {
  cc_begin();
  CC_CHECK_HANDLE(set, SYS_SET, "cucore_system_set_get_count", "set");
  CC_CHECK_ARG(count, "cucore_system_set_get_count", "count");
  *count = set->count;
  return CUCORE_OK;
}

cucore_status cucore_system_set_get_member(const cucore_system_set *set, size_t index,
                                           int *member) {
  static const char fn[] = "cucore_system_set_get_member";
  cc_begin();
  CC_CHECK_HANDLE(set, SYS_SET, fn, "set");
  CC_CHECK_ARG(member, fn, "member");
  if (index >= set->count)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: index %zu is past the end of the set (%zu %s)", fn,
                   index, set->count, set->numa ? "NUMA nodes" : "CPUs");
  *member = set->members[index];
  return CUCORE_OK;
}

cucore_status cucore_system_set_is_member(const cucore_system_set *set, int member, int *yes) {
  cc_begin();
  CC_CHECK_HANDLE(set, SYS_SET, "cucore_system_set_is_member", "set");
  CC_CHECK_ARG(yes, "cucore_system_set_is_member", "yes");
  size_t lo = 0, hi = set->count;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (set->members[mid] < member)
      lo = mid + 1;
    else
      hi = mid;
  }
  *yes = lo < set->count && set->members[lo] == member;
  return CUCORE_OK;
}

cucore_status cucore_system_set_is_numa(const cucore_system_set *set, int *is_numa) {
  cc_begin();
  CC_CHECK_HANDLE(set, SYS_SET, "cucore_system_set_is_numa", "set");
  CC_CHECK_ARG(is_numa, "cucore_system_set_is_numa", "is_numa");
  *is_numa = set->numa;
  return CUCORE_OK;
}

void cc_sys_set_free(cucore_system_set *s) {
  if (!s) return;
  free(s->members);
  cc_handle_retire(s, CC_KIND_SYS_SET);
}

cucore_status cucore_system_set_destroy(cucore_system_set *set) {
  cc_begin();
  if (!set) return CUCORE_OK;
  CC_CHECK_HANDLE(set, SYS_SET, "cucore_system_set_destroy", "set");
  cc_sys_set_free(set);
  return CUCORE_OK;
}
