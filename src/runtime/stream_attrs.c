/*
 * stream_attrs.c -- attributes of a stream (cuStreamSetAttribute / cuStreamGetAttribute):
 * the launch attributes that belong to a stream rather than to one launch -- the L2 access
 * policy window, the synchronization policy, the priority and the memory synchronization
 * domain and its map. Work queued on the stream afterwards takes them.
 */
#include "runtime/runtime.h"

#include <stdio.h>
#include <string.h>

/* 1 when `id` is an attribute of streams. */
static int stream_attr(int id) {
  switch (id) {
  case CUCORE_LAUNCH_ACCESS_POLICY_WINDOW:
  case CUCORE_LAUNCH_SYNCHRONIZATION_POLICY:
  case CUCORE_LAUNCH_PRIORITY:
  case CUCORE_LAUNCH_MEM_SYNC_DOMAIN_MAP:
  case CUCORE_LAUNCH_MEM_SYNC_DOMAIN: return 1;
  default: return 0;
  }
}

static cucore_status not_a_stream_attr(const char *fn, int id) {
  return cc_fail(CUCORE_INVALID_ARGUMENT,
                 "%s: launch attribute %d is not a stream attribute; streams take the access "
                 "policy window (1), synchronization policy (3), priority (8), memory sync "
                 "domain map (9) and memory sync domain (10); set the others on a launch",
                 fn, id);
}

static cucore_status enter(cucore_stream *s, const char *fn) {
  CC_CHECK_HANDLE(s, STREAM, fn, "stream");
  if (s->handle == NULL || s->handle == CU_STREAM_LEGACY || s->handle == CU_STREAM_PER_THREAD)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: the %s stream of device %d has no attributes of its own; create a "
                   "stream (cucore_stream_create) to give it attributes",
                   fn, s->handle == CU_STREAM_PER_THREAD ? "per-thread default" : "legacy default",
                   s->dev->ordinal);
  cucore_status st = CC_DRV_REQUIRE(cuStreamSetAttribute);
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuStreamGetAttribute);
  if (st == CUCORE_OK) st = cc_device_make_current(s->dev);
  return st;
}

cucore_status cucore_stream_set_attribute(cucore_stream *s, const cucore_launch_attr *attr) {
  cc_begin();
  CC_CHECK_ARG(attr, "cucore_stream_set_attribute", "attr");
  cucore_status st = enter(s, "cucore_stream_set_attribute");
  if (st != CUCORE_OK) return st;
  if (!stream_attr((int)attr->id))
    return not_a_stream_attr("cucore_stream_set_attribute", (int)attr->id);
  if (attr->id == CUCORE_LAUNCH_ACCESS_POLICY_WINDOW) {
    float h = attr->u.access_policy.hit_ratio;
    if (!(h >= 0.0f && h <= 1.0f))
      return cc_fail(CUCORE_INVALID_ARGUMENT,
                     "cucore_stream_set_attribute: access policy hit ratio %g is outside 0..1",
                     (double)h);
    int hp = attr->u.access_policy.hit_property, mp = attr->u.access_policy.miss_property;
    if (hp < 0 || hp > 2 || mp < 0 || mp > 2)
      return cc_fail(CUCORE_INVALID_ARGUMENT,
                     "cucore_stream_set_attribute: access properties hit %d, miss %d; each is "
                     "0 (normal), 1 (streaming) or 2 (persisting)",
                     hp, mp);
  }
  if (attr->id == CUCORE_LAUNCH_PRIORITY) {
    int least = 0, greatest = 0;
    CUresult r = DRV(cuCtxGetStreamPriorityRange)(&least, &greatest);
    if (r == CUDA_SUCCESS && (attr->u.value > least || attr->u.value < greatest))
      return cc_fail(CUCORE_INVALID_ARGUMENT,
                     "cucore_stream_set_attribute: priority %d is outside device %d's range %d "
                     "(least) to %d (greatest)",
                     attr->u.value, s->dev->ordinal, least, greatest);
  }
  CUlaunchAttribute c;
  cc_launch_attr_to_cu(attr, &c);
  CUresult r = DRV(cuStreamSetAttribute)(s->handle, (CUstreamAttrID)c.id, &c.value);
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, "cuStreamSetAttribute", "attribute %d on a stream of device %d",
                      (int)attr->id, s->dev->ordinal);
  return CUCORE_OK;
}

cucore_status cucore_stream_get_attribute(cucore_stream *s, cucore_launch_attr_id id,
                                          cucore_launch_attr *out) {
  cc_begin();
  CC_CHECK_ARG(out, "cucore_stream_get_attribute", "out");
  memset(out, 0, sizeof *out);
  cucore_status st = enter(s, "cucore_stream_get_attribute");
  if (st != CUCORE_OK) return st;
  if (!stream_attr((int)id)) return not_a_stream_attr("cucore_stream_get_attribute", (int)id);
  CUlaunchAttributeValue v;
  memset(&v, 0, sizeof v);
  CUresult r = DRV(cuStreamGetAttribute)(s->handle, (CUstreamAttrID)id, &v);
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, "cuStreamGetAttribute", "attribute %d of a stream of device %d", (int)id,
                      s->dev->ordinal);
  cc_launch_attr_from_cu((CUlaunchAttributeID)id, &v, out);
  return CUCORE_OK;
}
