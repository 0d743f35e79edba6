/*
 * system_affinity.c -- the CPUs and NUMA nodes nearest a GPU (nvmlDeviceGetCpuAffinity,
 * nvmlDeviceGetMemoryAffinity) as sets of any size, and the calling thread's CPUs read, bound
 * to a GPU's and put back (sched_getaffinity / sched_setaffinity on the thread alone).
 */
#define _GNU_SOURCE
#include "runtime/system_map.h"
#include "base/handle.h"

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The largest mask asked of NVML or the kernel: 1 << 22 CPUs or nodes. */
#define MAX_BITS ((size_t)1 << 22)
#define WORD_BITS (sizeof(unsigned long) * CHAR_BIT)

/* NVML's mask of `h` (CPUs, or NUMA nodes in `scope`) asked in a mask that doubles while NVML
 * fills its last word or says it is too small. */
static cucore_status ask_mask(const char *fn, cc_nvml_device h, int numa, unsigned scope,
                              cucore_system_set **out) {
  long conf = numa ? 0 : sysconf(_SC_NPROCESSORS_CONF);
  size_t bits = conf > 1024 ? (size_t)conf : 1024;
  if (numa) bits = 64;
  for (;;) {
    size_t words = (bits + WORD_BITS - 1) / WORD_BITS;
    unsigned long *mask = cc_calloc(words, sizeof *mask, "a CPU or NUMA-node mask");
    if (!mask) return CUCORE_HOST_OUT_OF_MEMORY;
    cc_nvml_return r = numa ? cc_nvml_fn.memory_affinity(h, (unsigned)words, mask, scope)
                            : cc_nvml_fn.cpu_affinity(h, (unsigned)words, mask);
    int full = r == CC_NVML_ERROR_INSUFFICIENT_SIZE || (r == CC_NVML_SUCCESS && mask[words - 1]);
    if (full && bits < MAX_BITS) {
      free(mask);
      bits *= 2;
      continue;
    }
    cucore_status st =
        r == CC_NVML_SUCCESS
            ? cc_sys_set_of_mask(mask, words, numa, out)
            : cc_fail_nvml(r, numa ? "nvmlDeviceGetMemoryAffinity" : "nvmlDeviceGetCpuAffinity",
                           "%s: a mask of %zu %s", fn, bits, numa ? "NUMA nodes" : "CPUs");
    free(mask);
    return st;
  }
}

cucore_status cucore_system_get_cpu_affinity(int ordinal, cucore_system_set **out) {
  static const char fn[] = "cucore_system_get_cpu_affinity";
  cc_begin();
  CC_CHECK_ARG(out, fn, "out");
  *out = NULL;
  cc_nvml_device h = NULL;
  cucore_status st = cc_sys_handle(fn, ordinal, &h);
  if (st == CUCORE_OK)
    st = cc_sys_need(fn, cc_nvml_fn.cpu_affinity != NULL, "nvmlDeviceGetCpuAffinity");
  return st == CUCORE_OK ? ask_mask(fn, h, 0, 0, out) : st;
}

cucore_status cucore_system_get_memory_affinity(int ordinal, cucore_system_scope scope,
                                                cucore_system_set **out) {
  static const char fn[] = "cucore_system_get_memory_affinity";
  cc_begin();
  CC_CHECK_ARG(out, fn, "out");
  *out = NULL;
  if (scope != CUCORE_SCOPE_NODE && scope != CUCORE_SCOPE_SOCKET)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: scope %d is not a cucore_system_scope (CUCORE_SCOPE_NODE 0 or "
                   "CUCORE_SCOPE_SOCKET 1)",
                   fn, (int)scope);
  cc_nvml_device h = NULL;
  cucore_status st = cc_sys_handle(fn, ordinal, &h);
  if (st == CUCORE_OK)
    st = cc_sys_need(fn, cc_nvml_fn.memory_affinity != NULL, "nvmlDeviceGetMemoryAffinity");
  unsigned nscope = scope == CUCORE_SCOPE_NODE ? CC_NVML_AFFINITY_SCOPE_NODE
                                               : CC_NVML_AFFINITY_SCOPE_SOCKET;
  return st == CUCORE_OK ? ask_mask(fn, h, 1, nscope, out) : st;
}

/* The calling thread's CPUs, in a mask that doubles while the kernel's is larger. */
static cucore_status thread_cpus(const char *fn, cucore_system_set **out) {
  for (size_t bits = 1024; bits <= MAX_BITS; bits *= 2) {
    cpu_set_t *cpus = CPU_ALLOC(bits);
    if (!cpus) return cc_fail(CUCORE_HOST_OUT_OF_MEMORY, "%s: a CPU mask of %zu", fn, bits);
    size_t bytes = CPU_ALLOC_SIZE(bits);
    CPU_ZERO_S(bytes, cpus);
    int rc = sched_getaffinity(0, bytes, cpus);
    int err = errno;
    cucore_status st = CUCORE_OK;
    if (rc == 0)
      st = cc_sys_set_of_mask((const unsigned long *)(void *)cpus, bytes / sizeof(unsigned long), 0,
                              out);
    CPU_FREE(cpus);
    if (rc == 0) return st;
    if (err != EINVAL)
      return cc_fail(cc_status(CUCORE_NOT_SUPPORTED, CUCORE_SOURCE_ERRNO, err),
                     "%s: sched_getaffinity failed: %s", fn, strerror(err));
  }
  return cc_fail(CUCORE_NOT_SUPPORTED, "%s: the kernel's CPU mask is larger than %zu CPUs", fn,
                 MAX_BITS);
}

cucore_status cucore_system_get_thread_affinity(cucore_system_set **out) {
  cc_begin();
  CC_CHECK_ARG(out, "cucore_system_get_thread_affinity", "out");
  *out = NULL;
  return thread_cpus("cucore_system_get_thread_affinity", out);
}

/* Sets the calling thread's CPUs to `cpus`; `fn` and `what` for the message, `einval_code`
 * the status when none of them is allowed. */
static cucore_status set_thread_cpus(const char *fn, const cucore_system_set *cpus,
                                     const char *what, int einval_code) {
  size_t n = cc_sys_set_count(cpus);
  const int *m = cc_sys_set_members(cpus);
  cc_sb text = {0};
  cucore_status st = CUCORE_OK;
  if (n == 0) {
    st = cc_fail(CUCORE_INVALID_ARGUMENT, "%s: %s is empty; a thread needs at least one CPU", fn,
                 what);
    goto done;
  }
  size_t bits = (size_t)m[n - 1] + 1;
  cpu_set_t *mask = CPU_ALLOC(bits);
  if (!mask) {
    st = cc_fail(CUCORE_HOST_OUT_OF_MEMORY, "%s: a CPU mask of %zu", fn, bits);
    goto done;
  }
  size_t bytes = CPU_ALLOC_SIZE(bits);
  CPU_ZERO_S(bytes, mask);
  for (size_t i = 0; i < n; i++) CPU_SET_S((size_t)m[i], bytes, mask);
  int rc = sched_setaffinity(0, bytes, mask);
  int err = errno;
  CPU_FREE(mask);
  if (rc != 0) {
    cc_sys_set_text(cpus, &text);
    st = cc_fail(cc_status(err == EINVAL ? einval_code : CUCORE_NOT_SUPPORTED, CUCORE_SOURCE_ERRNO,
                           err),
                 "%s: sched_setaffinity to %s (CPUs %s) failed: %s%s", fn, what, cc_sb_text(&text),
                 strerror(err),
                 err == EINVAL ? "; none of those CPUs is allowed to this thread (cgroup "
                                 "cpuset or offline)"
                               : "");
  }
done:
  cc_sb_free(&text);
  return st;
}

cucore_status cucore_system_set_thread_affinity(const cucore_system_set *cpus) {
  static const char fn[] = "cucore_system_set_thread_affinity";
  cc_begin();
  CC_CHECK_HANDLE(cpus, SYS_SET, fn, "cpus");
  if (cc_sys_set_numa(cpus))
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: `cpus` is a set of NUMA nodes (cucore_system_get_memory_affinity); a set "
                   "of CPUs is expected",
                   fn);
  return set_thread_cpus(fn, cpus, "the CPUs given", CUCORE_INVALID_ARGUMENT);
}

cucore_status cucore_system_bind_thread(int ordinal, cucore_system_set **previous) {
  static const char fn[] = "cucore_system_bind_thread";
  cc_begin();
  if (previous) *previous = NULL;
  cucore_system_set *gpu = NULL, *before = NULL;
  cc_nvml_device h = NULL;
  cucore_status st = cc_sys_handle(fn, ordinal, &h);
  if (st == CUCORE_OK)
    st = cc_sys_need(fn, cc_nvml_fn.cpu_affinity != NULL, "nvmlDeviceGetCpuAffinity");
  if (st == CUCORE_OK) st = ask_mask(fn, h, 0, 0, &gpu);
  if (st == CUCORE_OK && cc_sys_set_count(gpu) == 0)
    st = cc_fail(CUCORE_NOT_SUPPORTED, "%s: NVML names no CPU near device %d to bind to", fn,
                 ordinal);
  if (st == CUCORE_OK && previous) st = thread_cpus(fn, &before);
  if (st == CUCORE_OK) st = set_thread_cpus(fn, gpu, "the CPUs near the GPU", CUCORE_NOT_SUPPORTED);
  if (st == CUCORE_OK && previous)
    *previous = before;
  else
    cc_sys_set_free(before);
  cc_sys_set_free(gpu);
  return st;
}
