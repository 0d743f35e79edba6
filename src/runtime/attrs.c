/*
 * attrs.c -- launch attributes between cucore's form and the driver's. Launches (exec/) and
 * streams (stream_attrs.c) share them: a stream attribute is a launch attribute set once on
 * the stream (CUstreamAttrID is CUlaunchAttributeID).
 */
#include "runtime/runtime.h"

#include <string.h>

static unsigned dim1(unsigned v) { return v ? v : 1; }

int cc_launch_attr_known(int id) {
  return (id >= CUCORE_LAUNCH_ACCESS_POLICY_WINDOW &&
          id <= CUCORE_LAUNCH_PREFERRED_SHARED_MEMORY_CARVEOUT) ||
         id == CUCORE_LAUNCH_NVLINK_UTIL_CENTRIC_SCHEDULING;
}

void cc_launch_attr_to_cu(const cucore_launch_attr *a, CUlaunchAttribute *c) {
  memset(c, 0, sizeof *c);
  c->id = (CUlaunchAttributeID)a->id;
  if (!cc_launch_attr_known((int)a->id)) { /* newer than cucore: the bytes as given */
    _Static_assert(sizeof a->u.raw <= sizeof c->value, "raw attribute value fits the driver's");
    memcpy(&c->value, a->u.raw, sizeof a->u.raw);
    return;
  }
  switch (a->id) {
  case CUCORE_LAUNCH_ACCESS_POLICY_WINDOW:
    c->value.accessPolicyWindow.base_ptr = (void *)(uintptr_t)a->u.access_policy.base;
    c->value.accessPolicyWindow.num_bytes = a->u.access_policy.bytes;
    c->value.accessPolicyWindow.hitRatio = a->u.access_policy.hit_ratio;
    c->value.accessPolicyWindow.hitProp = (CUaccessProperty)a->u.access_policy.hit_property;
    c->value.accessPolicyWindow.missProp = (CUaccessProperty)a->u.access_policy.miss_property;
    break;
  case CUCORE_LAUNCH_CLUSTER_DIMENSION:
    c->value.clusterDim.x = a->u.dim[0];
    c->value.clusterDim.y = dim1(a->u.dim[1]);
    c->value.clusterDim.z = dim1(a->u.dim[2]);
    break;
  case CUCORE_LAUNCH_PREFERRED_CLUSTER_DIMENSION:
    c->value.preferredClusterDim.x = a->u.dim[0];
    c->value.preferredClusterDim.y = dim1(a->u.dim[1]);
    c->value.preferredClusterDim.z = dim1(a->u.dim[2]);
    break;
  case CUCORE_LAUNCH_PROGRAMMATIC_EVENT:
    c->value.programmaticEvent.event = a->u.event.event->handle;
    c->value.programmaticEvent.flags = a->u.event.flags;
    c->value.programmaticEvent.triggerAtBlockStart = a->u.event.trigger_at_block_start;
    break;
  case CUCORE_LAUNCH_COMPLETION_EVENT:
    c->value.launchCompletionEvent.event = a->u.event.event->handle;
    c->value.launchCompletionEvent.flags = a->u.event.flags;
    break;
  case CUCORE_LAUNCH_MEM_SYNC_DOMAIN_MAP:
    c->value.memSyncDomainMap.default_ = a->u.domain_map.default_domain;
    c->value.memSyncDomainMap.remote = a->u.domain_map.remote_domain;
    break;
  case CUCORE_LAUNCH_PREFERRED_SHARED_MEMORY_CARVEOUT:
  case CUCORE_LAUNCH_NVLINK_UTIL_CENTRIC_SCHEDULING:
    c->value.sharedMemCarveout = (unsigned)a->u.value;
    break;
  default:
    /* every other attribute is one int at the start of the value union */
    c->value.cooperative = a->u.value;
    break;
  }
}

void cc_launch_attr_from_cu(CUlaunchAttributeID id, const CUlaunchAttributeValue *v,
                            cucore_launch_attr *a) {
  memset(a, 0, sizeof *a);
  a->id = (cucore_launch_attr_id)id;
  switch ((int)id) {
  case CUCORE_LAUNCH_ACCESS_POLICY_WINDOW:
    a->u.access_policy.base = (cucore_devptr)(uintptr_t)v->accessPolicyWindow.base_ptr;
    a->u.access_policy.bytes = v->accessPolicyWindow.num_bytes;
    a->u.access_policy.hit_ratio = v->accessPolicyWindow.hitRatio;
    a->u.access_policy.hit_property = (int)v->accessPolicyWindow.hitProp;
    a->u.access_policy.miss_property = (int)v->accessPolicyWindow.missProp;
    break;
  case CUCORE_LAUNCH_MEM_SYNC_DOMAIN_MAP:
    a->u.domain_map.default_domain = v->memSyncDomainMap.default_;
    a->u.domain_map.remote_domain = v->memSyncDomainMap.remote;
    break;
  case CUCORE_LAUNCH_SYNCHRONIZATION_POLICY: a->u.value = (int)v->syncPolicy; break;
  case CUCORE_LAUNCH_PRIORITY: a->u.value = v->priority; break;
  case CUCORE_LAUNCH_MEM_SYNC_DOMAIN: a->u.value = (int)v->memSyncDomain; break;
  default: memcpy(a->u.raw, v, sizeof a->u.raw); break;
  }
}
