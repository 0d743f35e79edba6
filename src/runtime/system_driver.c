/*
 * system_driver.c -- the kernel-mode driver as NVML names it: its version
 * (nvmlSystemGetDriverVersion) and branch (nvmlSystemGetDriverBranch, NVML 12.6+). Neither
 * needs the CUDA driver. The text is the caller's to hold and is never cut.
 */
#define _GNU_SOURCE
#include "runtime/system_map.h"

#include <string.h>

/* NVML's text at most this long (NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE is 80). */
#define RAW_MAX 256

/* `raw` (NUL-terminated within RAW_MAX) escaped into buf[cap], refused when it does not fit. */
static cucore_status give_text(const char *fn, const char *raw, char *buf, size_t cap,
                               size_t *needed) {
  char text[4 * RAW_MAX + 1]; /* every byte escaped as \xHH still fits */
  size_t n = cc_escape_text(text, sizeof text, raw, strnlen(raw, RAW_MAX));
  if (needed) *needed = n + 1;
  if (cap == 0 && !buf) return CUCORE_OK;
  CC_CHECK_ARG(buf, fn, "buf");
  if (cap < n + 1) {
    if (cap) buf[0] = '\0';
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: `cap` is %zu bytes; the text `%s` needs %zu with its NUL", fn, cap, text,
                   n + 1);
  }
  memcpy(buf, text, n + 1);
  return CUCORE_OK;
}

cucore_status cucore_system_get_driver_version(char *buf, size_t cap, size_t *needed) {
  static const char fn[] = "cucore_system_get_driver_version";
  cc_begin();
  if (needed) *needed = 0;
  if (buf && cap) buf[0] = '\0';
  cucore_status st = cc_nvml_load();
  if (st == CUCORE_OK)
    st = cc_sys_need(fn, cc_nvml_fn.driver_version != NULL, "nvmlSystemGetDriverVersion");
  if (st != CUCORE_OK) return st;
  char raw[RAW_MAX + 1] = "";
  cc_nvml_return r = cc_nvml_fn.driver_version(raw, RAW_MAX);
  if (r != CC_NVML_SUCCESS)
    return cc_fail_nvml(r, "nvmlSystemGetDriverVersion", "%s: reading the driver's version", fn);
  return give_text(fn, raw, buf, cap, needed);
}

cucore_status cucore_system_get_driver_branch(char *buf, size_t cap, size_t *needed) {
  static const char fn[] = "cucore_system_get_driver_branch";
  cc_begin();
  if (needed) *needed = 0;
  if (buf && cap) buf[0] = '\0';
  cucore_status st = cc_nvml_load();
  if (st == CUCORE_OK)
    st = cc_sys_need(fn, cc_nvml_fn.driver_branch != NULL, "nvmlSystemGetDriverBranch");
  if (st != CUCORE_OK) return st;
  cc_nvml_branch b;
  memset(&b, 0, sizeof b);
  b.version = CC_NVML_BRANCH_V1;
  cc_nvml_return r = cc_nvml_fn.driver_branch(&b, (unsigned)sizeof b.branch);
  if (r != CC_NVML_SUCCESS)
    return cc_fail_nvml(r, "nvmlSystemGetDriverBranch", "%s: reading the driver's branch", fn);
  char raw[RAW_MAX + 1] = "";
  memcpy(raw, b.branch, sizeof b.branch);
  return give_text(fn, raw, buf, cap, needed);
}
