/*
 * green.c -- green contexts (CUDA 12.4+): a device's SMs split into groups by the driver
 * (cuDeviceGetDevResource, cuDevSmResourceSplitByCount), a descriptor and a green context for
 * each group. A green context is handed out with a cucore_device on its CUcontext
 * (cuCtxFromGreenCtx), made like a device on a borrowed context: everything cucore does with a
 * device (streams, events, memory, the checked launch path, kernels' per-context facts) then
 * works in the green context unchanged.
 */
#include "runtime/current.h"
#include "runtime/runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cucore_green {
  cc_handle hdr; /* first: the magic word of base/handle.h */
  CUgreenCtx handle;
  cucore_device *dev; /* on the green context's CUcontext; owned */
  unsigned sm_count;
};

#define GREEN_FLAGS (CUCORE_GREEN_IGNORE_COSCHEDULING | CUCORE_GREEN_MAX_CLUSTER)

/* The green entry points a split needs, or CUCORE_DRIVER_TOO_OLD naming the first missing. */
static cucore_status need_green(void) {
  cucore_status st = CC_DRV_REQUIRE(cuDeviceGetDevResource);
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuDevSmResourceSplitByCount);
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuDevResourceGenerateDesc);
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuGreenCtxCreate);
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuGreenCtxDestroy);
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuCtxFromGreenCtx);
  return st;
}

/* The device's SM resource. */
static cucore_status device_sms(cucore_device *dev, CUdevResource *res, const char *fn) {
  cucore_status st = need_green();
  if (st == CUCORE_OK) st = cc_device_make_current(dev);
  if (st != CUCORE_OK) return st;
  memset(res, 0, sizeof *res);
  CUresult r = DRV(cuDeviceGetDevResource)(dev->cudev, res, CU_DEV_RESOURCE_TYPE_SM);
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, "cuDeviceGetDevResource", "%s: the SMs of device %d", fn, dev->ordinal);
  return CUCORE_OK;
}

cucore_status cucore_green_get_sm_info(cucore_device *dev, cucore_green_sm_info *out) {
  cc_begin();
  CC_CHECK_HANDLE(dev, DEVICE, "cucore_green_get_sm_info", "dev");
  CC_CHECK_ARG(out, "cucore_green_get_sm_info", "out");
  memset(out, 0, sizeof *out);
  CUdevResource res;
  cucore_status st = device_sms(dev, &res, "cucore_green_get_sm_info");
  if (st != CUCORE_OK) return st;
  out->sm_count = res.sm.smCount;
  out->min_partition_sms = res.sm.minSmPartitionSize;
  out->alignment_sms = res.sm.smCoscheduledAlignment;
  return CUCORE_OK;
}

/* Checks a split's arguments against the device's SMs. */
static cucore_status check_split(const cucore_device *dev, const CUdevResource *res,
                                 unsigned min_sms, unsigned flags, const char *fn) {
  if (flags & ~GREEN_FLAGS)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: unknown flags 0x%x (expected 0, CUCORE_GREEN_IGNORE_COSCHEDULING, "
                   "CUCORE_GREEN_MAX_CLUSTER)",
                   fn, flags & ~GREEN_FLAGS);
  if (min_sms == 0 || min_sms > res->sm.smCount)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: a group of %u SMs asked of device %d, which has %u SMs (expected 1 to "
                   "%u)",
                   fn, min_sms, dev->ordinal, res->sm.smCount, res->sm.smCount);
  return CUCORE_OK;
}

/* The driver's split of `res` into at most `want` groups of at least `min_sms` (want 0: as
 * many as fit). `groups` has room for `want` (or *n when want is 0). */
static cucore_status driver_split(const CUdevResource *res, unsigned min_sms, unsigned flags,
                                  CUdevResource *groups, unsigned *n, CUdevResource *rest) {
  memset(rest, 0, sizeof *rest);
  CUresult r = DRV(cuDevSmResourceSplitByCount)(groups, n, res, rest, flags, min_sms);
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, "cuDevSmResourceSplitByCount", "groups of at least %u SMs out of %u",
                      min_sms, res->sm.smCount);
  return CUCORE_OK;
}

/* How many groups of at least `min_sms` fit (the driver simulates the split). */
static cucore_status groups_that_fit(const CUdevResource *res, unsigned min_sms, unsigned flags,
                                     unsigned *n) {
  *n = 0;
  CUresult r = DRV(cuDevSmResourceSplitByCount)(NULL, n, res, NULL, flags, min_sms);
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, "cuDevSmResourceSplitByCount",
                      "counting groups of at least %u SMs "
                      "out of %u",
                      min_sms, res->sm.smCount);
  return CUCORE_OK;
}

cucore_status cucore_green_split_query(cucore_device *dev, unsigned min_sms, unsigned flags,
                                       unsigned *groups, unsigned *sms_per_group,
                                       unsigned *remaining_sms) {
  cc_begin();
  static const char fn[] = "cucore_green_split_query";
  CC_CHECK_HANDLE(dev, DEVICE, fn, "dev");
  if (groups) *groups = 0;
  if (sms_per_group) *sms_per_group = 0;
  if (remaining_sms) *remaining_sms = 0;
  CUdevResource res, rest;
  unsigned n = 0;
  cucore_status st = device_sms(dev, &res, fn);
  if (st == CUCORE_OK) st = check_split(dev, &res, min_sms, flags, fn);
  if (st == CUCORE_OK) st = groups_that_fit(&res, min_sms, flags, &n);
  if (st != CUCORE_OK || n == 0) {
    if (st == CUCORE_OK && remaining_sms) *remaining_sms = res.sm.smCount;
    return st;
  }
  CUdevResource *g = cc_calloc(n, sizeof *g, "the groups of a split");
  if (!g) return CUCORE_HOST_OUT_OF_MEMORY;
  st = driver_split(&res, min_sms, flags, g, &n, &rest);
  if (st == CUCORE_OK) {
    if (groups) *groups = n;
    if (sms_per_group) *sms_per_group = n ? g[0].sm.smCount : 0;
    if (remaining_sms) *remaining_sms = rest.sm.smCount;
  }
  free(g);
  return st;
}

/* A split that cannot give `count` groups, explained with the driver's rules. */
static cucore_status split_refused(const cucore_device *dev, const CUdevResource *res,
                                   unsigned count, unsigned min_sms, unsigned flags, unsigned fit) {
  unsigned lo = res->sm.minSmPartitionSize, al = res->sm.smCoscheduledAlignment;
  unsigned want = min_sms < lo ? lo : min_sms;
  if (al > 1) want = (want + al - 1) / al * al;
  char rule[160] = "", left[48] = "";
  if (!(flags & CUCORE_GREEN_IGNORE_COSCHEDULING)) {
    snprintf(rule, sizeof rule,
             "; a group is at least %u SMs and a multiple of %u, so %u "
             "rounds up to %u",
             lo, al, min_sms, want);
    if ((uint64_t)fit * want <= res->sm.smCount)
      snprintf(left, sizeof left, " (%u here)", res->sm.smCount - fit * want);
  }
  return cc_fail(CUCORE_INVALID_ARGUMENT,
                 "cucore_green_split: device %d cannot give %u group%s of at least %u SMs: it "
                 "has %u SMs%s, and the driver's split makes %u such group%s. The SMs left over "
                 "after the groups%s go to one remainder group, when `remainder` is given. Ask "
                 "for fewer or smaller groups (cucore_green_split_query says what fits)%s",
                 dev->ordinal, count, count == 1 ? "" : "s", min_sms, res->sm.smCount, rule, fit,
                 fit == 1 ? "" : "s", left,
                 (flags & CUCORE_GREEN_IGNORE_COSCHEDULING)
                     ? ""
                     : ", or pass CUCORE_GREEN_IGNORE_COSCHEDULING for finer groups (without "
                       "large thread block clusters)");
}

/* A device handle on the green context's CUcontext (borrowed: closing it frees only it). */
static cucore_status green_device(cucore_device *parent, CUgreenCtx h, unsigned sms,
                                  cucore_device **out) {
  CUcontext ctx = NULL;
  CUresult r = DRV(cuCtxFromGreenCtx)(&ctx, h);
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, "cuCtxFromGreenCtx", "a green context of device %d", parent->ordinal);
  cucore_device *dev = cc_calloc(1, sizeof *dev, "a green context's device handle");
  if (!dev) return CUCORE_HOST_OUT_OF_MEMORY;
  cc_handle_init(dev, CC_KIND_DEVICE);
  dev->ordinal = parent->ordinal;
  dev->cudev = parent->cudev;
  dev->ctx = ctx;
  dev->borrowed = 1;
  dev->green = (int)sms;
  cc_device_init_streams(dev);
  *out = dev;
  return CUCORE_OK;
}

/* A green context on the SMs of `res` (a group of a split of `parent`'s SMs). */
static cucore_status make_green(cucore_device *parent, CUdevResource *res, cucore_green **out) {
  *out = NULL;
  CUdevResourceDesc desc = NULL;
  CUresult r = DRV(cuDevResourceGenerateDesc)(&desc, res, 1);
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, "cuDevResourceGenerateDesc", "a group of %u SMs of device %d",
                      res->sm.smCount, parent->ordinal);
  cucore_green *g = cc_calloc(1, sizeof *g, "a green context handle");
  if (!g) return CUCORE_HOST_OUT_OF_MEMORY;
  cc_handle_init(g, CC_KIND_GREEN);
  r = DRV(cuGreenCtxCreate)(&g->handle, desc, parent->cudev, CU_GREEN_CTX_DEFAULT_STREAM);
  if (r != CUDA_SUCCESS) {
    free(g);
    return cc_fail_cu(r, "cuGreenCtxCreate", "a green context of %u SMs on device %d",
                      res->sm.smCount, parent->ordinal);
  }
  g->sm_count = res->sm.smCount;
  cucore_status st = green_device(parent, g->handle, g->sm_count, &g->dev);
  if (st != CUCORE_OK) {
    (void)DRV(cuGreenCtxDestroy)(g->handle);
    free(g);
    return st;
  }
  *out = g;
  return CUCORE_OK;
}

/* Makes a green context of each of the n groups (and of `rest` when wanted and not empty);
 * on failure destroys what it made. */
static cucore_status make_all(cucore_device *parent, CUdevResource *groups, unsigned n,
                              CUdevResource *rest, cucore_green **out, cucore_green **remainder) {
  cucore_status st = CUCORE_OK;
  for (unsigned i = 0; i < n && st == CUCORE_OK; i++) st = make_green(parent, &groups[i], &out[i]);
  if (st == CUCORE_OK && remainder && rest->sm.smCount > 0)
    st = make_green(parent, rest, remainder);
  if (st == CUCORE_OK) return CUCORE_OK;
  for (unsigned i = 0; i < n; i++) {
    (void)cucore_green_destroy(out[i]);
    out[i] = NULL;
  }
  if (remainder) *remainder = NULL;
  return st;
}

/* Clears a split's outputs. */
static void clear_outputs(unsigned count, cucore_green **out, cucore_green **remainder) {
  for (unsigned i = 0; i < count; i++) out[i] = NULL;
  if (remainder) *remainder = NULL;
}

cucore_status cucore_green_split(cucore_device *dev, unsigned count, unsigned min_sms,
                                 unsigned flags, cucore_green **out, cucore_green **remainder) {
  cc_begin();
  static const char fn[] = "cucore_green_split";
  CC_CHECK_HANDLE(dev, DEVICE, fn, "dev");
  CC_CHECK_ARG(out, fn, "out");
  if (count == 0)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: `count` is 0 (expected 1 or "
                   "more groups)",
                   fn);
  clear_outputs(count, out, remainder);
  CUdevResource res, rest;
  unsigned fit = 0;
  cucore_status st = device_sms(dev, &res, fn);
  if (st == CUCORE_OK) st = check_split(dev, &res, min_sms, flags, fn);
  if (st == CUCORE_OK) st = groups_that_fit(&res, min_sms, flags, &fit);
  if (st != CUCORE_OK) return st;
  if (fit < count) return split_refused(dev, &res, count, min_sms, flags, fit);
  CUdevResource *groups = cc_calloc(count, sizeof *groups, "the groups of a split");
  if (!groups) return CUCORE_HOST_OUT_OF_MEMORY;
  unsigned n = count;
  st = driver_split(&res, min_sms, flags, groups, &n, &rest);
  if (st == CUCORE_OK && n < count) st = split_refused(dev, &res, count, min_sms, flags, n);
  if (st == CUCORE_OK) st = make_all(dev, groups, n, &rest, out, remainder);
  free(groups);
  return st;
}

cucore_status cucore_green_get_sm_count(const cucore_green *g, unsigned *sm_count) {
  cc_begin();
  CC_CHECK_HANDLE(g, GREEN, "cucore_green_get_sm_count", "g");
  CC_CHECK_ARG(sm_count, "cucore_green_get_sm_count", "sm_count");
  *sm_count = g->sm_count;
  return CUCORE_OK;
}

cucore_status cucore_green_get_device(cucore_green *g, cucore_device **dev) {
  cc_begin();
  CC_CHECK_ARG(dev, "cucore_green_get_device", "dev");
  *dev = NULL;
  CC_CHECK_HANDLE(g, GREEN, "cucore_green_get_device", "g");
  *dev = g->dev;
  return CUCORE_OK;
}

cucore_status cucore_green_stream_create(cucore_green *g, int priority, cucore_stream **out) {
  cc_begin();
  static const char fn[] = "cucore_green_stream_create";
  CC_CHECK_ARG(out, fn, "out");
  *out = NULL;
  CC_CHECK_HANDLE(g, GREEN, fn, "g");
  cucore_status st = CC_DRV_REQUIRE(cuGreenCtxStreamCreate);
  if (st == CUCORE_OK) st = cc_device_make_current(g->dev);
  if (st != CUCORE_OK) return st;
  int least = 0, greatest = 0;
  CUresult r = DRV(cuCtxGetStreamPriorityRange)(&least, &greatest);
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuCtxGetStreamPriorityRange", "%s", fn);
  if (priority > least || priority < greatest)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: priority %d is outside device %d's range %d "
                   "(least) to %d (greatest)",
                   fn, priority, g->dev->ordinal, least, greatest);
  cucore_stream *s = cc_calloc(1, sizeof *s, "a stream handle");
  if (!s) return CUCORE_HOST_OUT_OF_MEMORY;
  cc_handle_init(s, CC_KIND_STREAM);
  r = DRV(cuGreenCtxStreamCreate)(&s->handle, g->handle, CU_STREAM_NON_BLOCKING, priority);
  if (r != CUDA_SUCCESS) {
    free(s);
    return cc_fail_cu(r, "cuGreenCtxStreamCreate", "a green context of %u SMs on device %d",
                      g->sm_count, g->dev->ordinal);
  }
  s->dev = g->dev;
  s->blocking = 0;
  *out = s;
  return CUCORE_OK;
}

cucore_status cucore_green_destroy(cucore_green *g) {
  cc_begin();
  if (!g) return CUCORE_OK;
  CC_CHECK_HANDLE(g, GREEN, "cucore_green_destroy", "g");
  CUcontext cur = NULL;
  if (DRV(cuCtxGetCurrent)(&cur) == CUDA_SUCCESS && cur == g->dev->ctx)
    (void)DRV(cuCtxSetCurrent)(NULL);
  if (cc_tls_current == g->dev->ctx) cc_tls_current = NULL;
  cc_handle_kill(&g->dev->default_stream, CC_KIND_STREAM);
  cc_handle_kill(&g->dev->per_thread_stream, CC_KIND_STREAM);
  cc_handle_retire(g->dev, CC_KIND_DEVICE);
  CUresult r = DRV(cuGreenCtxDestroy)(g->handle);
  unsigned sms = g->sm_count;
  cc_handle_retire(g, CC_KIND_GREEN);
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, "cuGreenCtxDestroy", "a green context of %u SMs", sms);
  return CUCORE_OK;
}
