/* driver_log_api.c -- the public calls over the driver's log (driver_log.c keeps it): each
 * first loads the driver and says why the log is missing when it is. */
#include "loader/loader.h"

#include <stdio.h>

/* The driver is loaded and its log registered, or the failure saying why not. */
static cucore_status need_log(void) {
  cucore_status st = cc_driver_load();
  if (st != CUCORE_OK) return st;
  CUresult why = CUDA_SUCCESS;
  if (CC_LIKELY(cc_driver_log_registered(&why))) return CUCORE_OK;
  st = CC_DRV_REQUIRE(cuLogsRegisterCallback);
  if (st != CUCORE_OK) return st;
  return cc_fail_cu(why, "cuLogsRegisterCallback",
                    "the driver's log could not be registered when the driver loaded");
}

cucore_status cucore_driver_log_available(int *available) {
  cc_begin();
  CC_CHECK_ARG(available, "cucore_driver_log_available", "available");
  *available = 0;
  cucore_status st = cc_driver_load();
  if (st != CUCORE_OK) return st;
  CUresult why;
  *available = cc_driver_log_registered(&why);
  return CUCORE_OK;
}

cucore_status cucore_driver_log_read(char *buf, size_t cap, size_t *needed) {
  cc_begin();
  if (buf == NULL && cap > 0)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "cucore_driver_log_read: `buf` is NULL and `cap` "
                   "is %zu (a NULL buf needs cap 0)",
                   cap);
  cucore_status st = need_log();
  if (st != CUCORE_OK) return st;
  size_t all = cc_driver_log_copy(buf, cap);
  if (needed) *needed = all;
  return CUCORE_OK;
}

cucore_status cucore_driver_log_last(char *buf, size_t cap) {
  cc_begin();
  CC_CHECK_ARG(buf, "cucore_driver_log_last", "buf");
  if (cap == 0)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "cucore_driver_log_last: `cap` is 0 (the "
                                            "message needs at least its NUL)");
  buf[0] = '\0';
  cucore_status st = need_log();
  if (st != CUCORE_OK) return st;
  cc_driver_log_last_text(buf, cap);
  return CUCORE_OK;
}

cucore_status cucore_driver_log_forward(cucore_driver_log_fn fn, void *user) {
  cc_begin();
  cucore_status st = need_log();
  if (st != CUCORE_OK) return st;
  cc_driver_log_set_forward(fn, user);
  return CUCORE_OK;
}

cucore_status cucore_driver_log_clear(void) {
  cc_begin();
  cucore_status st = need_log();
  if (st != CUCORE_OK) return st;
  cc_driver_log_reset();
  return CUCORE_OK;
}
