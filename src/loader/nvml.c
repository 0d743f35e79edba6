/*
 * nvml.c -- loads NVML (libnvidia-ml.so.1) at run time, once per process, and turns its
 * failures into statuses. Like the driver it is never linked: where it is absent, every
 * cucore_system_* call says so (CUCORE_NOT_SUPPORTED) and nothing else changes.
 */
#define _GNU_SOURCE
#include "loader/nvml.h"
#include "loader/loader.h"
#include "base/phase.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

cc_nvml cc_nvml_fn;

static pthread_once_t nvml_once = PTHREAD_ONCE_INIT;
static cucore_status nvml_status;
static char nvml_message[768];
static char *nvml_name; /* the file loaded (cc_nvml_missing names it) */

static void set_failure(const char *fmt, ...) CC_PRINTF(1, 2);
static void set_failure(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(nvml_message, sizeof nvml_message, fmt, ap);
  va_end(ap);
  nvml_status = CUCORE_NOT_SUPPORTED;
}

/* Takes every entry point; 0 with the failure set when a required one is missing. */
static int take_symbols(void *h, const char *name) {
  cc_symbol_slot slots[] = {
#define CC_NVML_SLOT(field, symbol, required, ret, params) \
  {symbol, (void **)&cc_nvml_fn.field, required},
      CC_NVML_FUNCS(CC_NVML_SLOT)
#undef CC_NVML_SLOT
  };
  for (size_t i = 0; i < CC_ARRAY_LEN(slots); i++) {
    *slots[i].slot = dlsym(h, slots[i].name);
    if (!*slots[i].slot && slots[i].required) {
      set_failure("NVML (%s) lacks %s: it is too old for cucore's system queries", name,
                  slots[i].name);
      return 0;
    }
  }
  if (!cc_nvml_fn.reasons) /* the name before NVML 12.2 */
    *(void **)&cc_nvml_fn.reasons = dlsym(h, "nvmlDeviceGetCurrentClocksThrottleReasons");
  return 1;
}

static void load_nvml(void) {
  const char *override = getenv("CUCORE_LIBNVML");
  const char *name = (override && override[0]) ? override : "libnvidia-ml.so.1";
  void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *why = dlerror();
    char said[400];
    cc_escape_text(said, sizeof said, why ? why : "unknown reason", why ? strlen(why) : 14);
    set_failure("NVML (`%s`) could not be loaded: %s. It comes with the NVIDIA driver; %s", name,
                said,
                override ? "CUCORE_LIBNVML names it"
                         : "set CUCORE_LIBNVML to the full path of "
                           "libnvidia-ml.so.1");
    return;
  }
  if (!take_symbols(h, name)) return;
  nvml_name = cc_raw_strdup(name);
  cc_nvml_return r = cc_nvml_fn.init();
  if (r != CC_NVML_SUCCESS) {
    const char *text = cc_nvml_fn.error_string(r);
    char said[256];
    cc_escape_text(said, sizeof said, text ? text : "", text ? strlen(text) : 0);
    set_failure("NVML (%s) did not start: nvmlInit_v2 failed with NVML error %d (%s)", name, r,
                said);
    return;
  }
  nvml_status = CUCORE_OK;
}

static void load_nvml_timed(void) {
  int64_t t0 = cc_phase_clock();
  load_nvml();
  cc_phase_done(CUCORE_PHASE_LOAD_NVML, t0);
}

cucore_status cc_nvml_load(void) {
  pthread_once(&nvml_once, load_nvml_timed);
  if (CC_LIKELY(nvml_status == CUCORE_OK)) return CUCORE_OK;
  return cc_fail(nvml_status, "%s", nvml_message);
}

static int code_for_nvml(cc_nvml_return r) {
  switch (r) {
  case CC_NVML_ERROR_NOT_SUPPORTED:
  case CC_NVML_ERROR_NO_PERMISSION: return CUCORE_NOT_SUPPORTED;
  case CC_NVML_ERROR_NOT_FOUND: return CUCORE_NOT_FOUND;
  case CC_NVML_ERROR_INVALID_ARGUMENT: return CUCORE_INVALID_ARGUMENT;
  default: return CUCORE_DRIVER_ERROR;
  }
}

cucore_status cc_fail_nvml(cc_nvml_return r, const char *call, const char *fmt, ...) {
  cucore_status st = code_for_nvml(r);
  if (cc_message_kept()) return st;
  const char *text = cc_nvml_fn.error_string ? cc_nvml_fn.error_string(r) : NULL;
  char said[256], context[512] = "";
  cc_escape_text(said, sizeof said, text ? text : "no description", text ? strlen(text) : 14);
  if (fmt) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(context, sizeof context, fmt, ap);
    va_end(ap);
  }
  return cc_fail(st, "%s failed: NVML error %d (%s)%s%s", call, r, said, context[0] ? "; " : "",
                 context);
}

cucore_status cc_nvml_missing(const char *fn, const char *symbol) {
  return cc_fail(CUCORE_NOT_SUPPORTED,
                 "%s: the loaded NVML (%s) has no %s: it is older than the call needs (a newer "
                 "NVIDIA driver brings it)",
                 fn, nvml_name ? nvml_name : "libnvidia-ml.so.1", symbol);
}
