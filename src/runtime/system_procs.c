/*
 * system_procs.c -- the processes on a GPU (cucore_system_get_processes): NVML's compute and
 * graphics lists (the _v3 queries), each asked again in a larger buffer while NVML answers
 * that the list outgrew it, merged by pid, each named from /proc/PID/comm when readable.
 */
#define _GNU_SOURCE
#include "runtime/system_map.h"
#include "base/handle.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct cucore_system_processes {
  cc_handle handle;
  size_t count;
  cucore_system_process *items; /* by pid; each name malloc'd or NULL */
};

/* How many times a list that keeps outgrowing its buffer is asked again. */
#define ASK_MAX 8
#define FIRST_ROOM 16

typedef cc_nvml_return (*procs_query)(cc_nvml_device, unsigned *, cc_nvml_process *);

/* One NVML list into *v (malloc'd, *n entries). NOT_SUPPORTED (no such list on this GPU) is an
 * empty list. */
static cucore_status ask_list(const char *fn, procs_query q, const char *symbol, cc_nvml_device h,
                              cc_nvml_process **v, size_t *n) {
  cc_nvml_process *buf = NULL;
  size_t cap = 0, want = FIRST_ROOM;
  *v = NULL, *n = 0;
  for (int ask = 0; ask < ASK_MAX; ask++) {
    cc_nvml_process *grown = cc_grow(buf, &cap, want, sizeof *buf, "the list of processes");
    if (!grown) {
      free(buf);
      return CUCORE_HOST_OUT_OF_MEMORY; /* recorded by cc_grow */
    }
    buf = grown;
    unsigned count = cap > UINT_MAX ? UINT_MAX : (unsigned)cap;
    cc_nvml_return r = q(h, &count, buf);
    if (r == CC_NVML_SUCCESS || r == CC_NVML_ERROR_NOT_SUPPORTED) {
      *v = buf, *n = r == CC_NVML_SUCCESS ? (count < cap ? count : cap) : 0;
      return CUCORE_OK;
    }
    if (r != CC_NVML_ERROR_INSUFFICIENT_SIZE) {
      free(buf);
      return cc_fail_nvml(r, symbol, "%s: listing the GPU's processes", fn);
    }
    /* the count NVML gave, with room for processes that start before the next ask */
    want = (size_t)count > cap ? (size_t)count + count / 4 + 4 : cap * 2;
  }
  free(buf);
  return cc_fail(CUCORE_DRIVER_ERROR,
                 "%s: %s answered %d times that the list of processes outgrew its buffer (the "
                 "last %zu entries); processes start faster than they can be listed",
                 fn, symbol, ASK_MAX, cap);
}

/* /proc/PID/comm, escaped, malloc'd; NULL when it cannot be read. */
static char *comm_of(long long pid) {
  char path[64], raw[64], text[4 * sizeof raw + 1];
  snprintf(path, sizeof path, "/proc/%lld/comm", pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return NULL;
  ssize_t got = read(fd, raw, sizeof raw);
  close(fd);
  if (got <= 0) return NULL;
  cc_escape_text(text, sizeof text, raw, (size_t)got); /* drops the line end */
  return cc_raw_strdup(text);
}

static long long known_or_minus(unsigned long long v, unsigned long long none) {
  return v == none || v > (unsigned long long)LLONG_MAX ? -1 : (long long)v;
}

/* Adds NVML's entries `v[0..n)` of `kind` into list (by pid, merged with an equal pid). */
static void add_entries(cucore_system_processes *list, const cc_nvml_process *v, size_t n,
                        unsigned kind) {
  for (size_t i = 0; i < n; i++) {
    long long mem = known_or_minus(v[i].used_memory, ~0ull);
    size_t at = 0;
    while (at < list->count && list->items[at].pid < (long long)v[i].pid) at++;
    cucore_system_process *p = &list->items[at];
    if (at < list->count && p->pid == (long long)v[i].pid) {
      p->kinds |= kind;
      if (mem > p->used_memory) p->used_memory = mem;
      continue;
    }
    memmove(p + 1, p, (list->count - at) * sizeof *p);
    list->count++;
    memset(p, 0, sizeof *p);
    p->version = CUCORE_SYSTEM_PROCESS_VERSION;
    p->kinds = kind;
    p->pid = (long long)v[i].pid;
    p->used_memory = mem;
    p->gpu_instance = known_or_minus(v[i].gpu_instance_id, 0xffffffffull);
    p->compute_instance = known_or_minus(v[i].compute_instance_id, 0xffffffffull);
  }
}

static cucore_status destroy_list(cucore_system_processes *list) {
  for (size_t i = 0; i < list->count; i++) free((char *)list->items[i].name);
  free(list->items);
  cc_handle_retire(list, CC_KIND_SYS_PROCS);
  return CUCORE_OK;
}

/* Both lists of `h` into a new list. */
static cucore_status make_list(const char *fn, cc_nvml_device h, cucore_system_processes **out) {
  cc_nvml_process *comp = NULL, *gfx = NULL;
  size_t nc = 0, ng = 0;
  cucore_status st = ask_list(fn, cc_nvml_fn.compute_procs,
                              "nvmlDeviceGetComputeRunningProcesses_v3", h, &comp, &nc);
  if (st == CUCORE_OK)
    st = ask_list(fn, cc_nvml_fn.graphics_procs, "nvmlDeviceGetGraphicsRunningProcesses_v3", h,
                  &gfx, &ng);
  cucore_system_processes *list = NULL;
  if (st == CUCORE_OK) {
    list = cc_calloc(1, sizeof *list, "a list of processes");
    if (list) list->items = cc_calloc(nc + ng + 1, sizeof *list->items, "a list of processes");
    st = list && list->items ? CUCORE_OK : CUCORE_HOST_OUT_OF_MEMORY;
  }
  if (st == CUCORE_OK) {
    cc_handle_init(list, CC_KIND_SYS_PROCS);
    add_entries(list, comp, nc, CUCORE_SYSTEM_PROCESS_COMPUTE);
    add_entries(list, gfx, ng, CUCORE_SYSTEM_PROCESS_GRAPHICS);
    for (size_t i = 0; i < list->count; i++) list->items[i].name = comm_of(list->items[i].pid);
    *out = list;
  } else if (list) {
    free(list->items);
    free(list);
  }
  free(comp);
  free(gfx);
  return st;
}

cucore_status cucore_system_get_processes(int ordinal, cucore_system_processes **out) {
  static const char fn[] = "cucore_system_get_processes";
  cc_begin();
  CC_CHECK_ARG(out, fn, "out");
  *out = NULL;
  cc_nvml_device h = NULL;
  cucore_status st = cc_sys_handle(fn, ordinal, &h);
  if (st == CUCORE_OK)
    st = cc_sys_need(fn, cc_nvml_fn.compute_procs != NULL,
                     "nvmlDeviceGetComputeRunningProcesses_v3");
  if (st == CUCORE_OK)
    st = cc_sys_need(fn, cc_nvml_fn.graphics_procs != NULL,
                     "nvmlDeviceGetGraphicsRunningProcesses_v3");
  if (st != CUCORE_OK) return st;
  return make_list(fn, h, out);
}

cucore_status cucore_system_processes_get_count(const cucore_system_processes *list,
                                                size_t *count) {
  cc_begin();
  CC_CHECK_HANDLE(list, SYS_PROCS, "cucore_system_processes_get_count", "list");
  CC_CHECK_ARG(count, "cucore_system_processes_get_count", "count");
  *count = list->count;
  return CUCORE_OK;
}

cucore_status cucore_system_processes_get_item(const cucore_system_processes *list, size_t index,
                                               cucore_system_process *out) {
  static const char fn[] = "cucore_system_processes_get_item";
  cc_begin();
  CC_CHECK_HANDLE(list, SYS_PROCS, fn, "list");
  CC_CHECK_ARG(out, fn, "out");
  uint32_t version = out->version;
  if (version < 1 || version > CUCORE_SYSTEM_PROCESS_VERSION)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: out->version is %u; set it to CUCORE_SYSTEM_PROCESS_VERSION (1 to %u)", fn,
                   version, CUCORE_SYSTEM_PROCESS_VERSION);
  if (index >= list->count)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: index %zu is past the end of the list (%zu process%s)", fn, index,
                   list->count, list->count == 1 ? "" : "es");
  *out = list->items[index]; /* version 1 is the whole struct */
  out->version = version;
  return CUCORE_OK;
}

cucore_status cucore_system_processes_destroy(cucore_system_processes *list) {
  cc_begin();
  if (!list) return CUCORE_OK;
  CC_CHECK_HANDLE(list, SYS_PROCS, "cucore_system_processes_destroy", "list");
  return destroy_list(list);
}
