/*
 * peer.c -- access between devices: whether it is possible (cuDeviceCanAccessPeer), turning it
 * on and off (cuCtxEnablePeerAccess in the accessing device's context), the pairs cucore turned
 * on (for strict pointer checks), and copies between devices.
 */
#include "memory/memory.h"

#include <pthread.h>

/* Pairs (accessing context, owning context) with access enabled through cucore. */
#define MAX_PAIRS 256
static pthread_mutex_t pairs_lock = PTHREAD_MUTEX_INITIALIZER;
static struct { CUcontext from, to; } pairs[MAX_PAIRS];
static int pair_count;

static void remember(CUcontext from, CUcontext to, int on) {
  pthread_mutex_lock(&pairs_lock);
  int i = 0;
  while (i < pair_count && !(pairs[i].from == from && pairs[i].to == to)) i++;
  if (on && i == pair_count && pair_count < MAX_PAIRS) {
    pairs[pair_count].from = from;
    pairs[pair_count].to = to;
    pair_count++;
  } else if (!on && i < pair_count) {
    pairs[i] = pairs[--pair_count];
  }
  pthread_mutex_unlock(&pairs_lock);
}

int cc_peer_enabled(CUcontext from, CUcontext to) {
  pthread_mutex_lock(&pairs_lock);
  int found = 0;
  for (int i = 0; i < pair_count && !found; i++) found = pairs[i].from == from && pairs[i].to == to;
  pthread_mutex_unlock(&pairs_lock);
  return found;
}

cucore_status cucore_device_can_access_peer(cucore_device *dev, cucore_device *peer, int *can) {
  cc_begin();
  CC_CHECK_HANDLE(dev, DEVICE, "cucore_device_can_access_peer", "dev");
  CC_CHECK_HANDLE(peer, DEVICE, "cucore_device_can_access_peer", "peer");
  CC_CHECK_ARG(can, "cucore_device_can_access_peer", "can");
  *can = 0;
  if (dev->cudev == peer->cudev) {
    *can = 1;
    return CUCORE_OK;
  }
  CUresult r = DRV(cuDeviceCanAccessPeer)(can, dev->cudev, peer->cudev);
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, "cuDeviceCanAccessPeer", "device %d to device %d", dev->ordinal,
                      peer->ordinal);
  return CUCORE_OK;
}

cucore_status cucore_device_enable_peer_access(cucore_device *dev, cucore_device *peer) {
  cc_begin();
  const char *fn = "cucore_device_enable_peer_access";
  CC_CHECK_HANDLE(dev, DEVICE, fn, "dev");
  CC_CHECK_HANDLE(peer, DEVICE, fn, "peer");
  if (dev->cudev == peer->cudev)
    return cc_fail(CUCORE_NOT_SUPPORTED,
                   "%s: device %d and the peer are the same device (it always has access to its "
                   "own memory)",
                   fn, dev->ordinal);
  int can = 0;
  CUresult r = DRV(cuDeviceCanAccessPeer)(&can, dev->cudev, peer->cudev);
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuDeviceCanAccessPeer", NULL);
  if (!can)
    return cc_fail(CUCORE_NOT_SUPPORTED,
                   "%s: device %d cannot access device %d's memory (cuDeviceCanAccessPeer is 0: "
                   "no NVLink or PCIe peer path); copies between them still work through "
                   "cucore_memcpy_peer",
                   fn, dev->ordinal, peer->ordinal);
  cucore_status st = cc_device_make_current(dev);
  if (st != CUCORE_OK) return st;
  r = DRV(cuCtxEnablePeerAccess)(peer->ctx, 0);
  if (r != CUDA_SUCCESS && r != CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED)
    return cc_fail_cu(r, "cuCtxEnablePeerAccess", "device %d to device %d", dev->ordinal,
                      peer->ordinal);
  remember(dev->ctx, peer->ctx, 1);
  return CUCORE_OK;
}

cucore_status cucore_device_disable_peer_access(cucore_device *dev, cucore_device *peer) {
  cc_begin();
  const char *fn = "cucore_device_disable_peer_access";
  CC_CHECK_HANDLE(dev, DEVICE, fn, "dev");
  CC_CHECK_HANDLE(peer, DEVICE, fn, "peer");
  if (dev->cudev == peer->cudev) return CUCORE_OK;
  cucore_status st = cc_device_make_current(dev);
  if (st != CUCORE_OK) return st;
  CUresult r = DRV(cuCtxDisablePeerAccess)(peer->ctx);
  remember(dev->ctx, peer->ctx, 0);
  if (r != CUDA_SUCCESS && r != CUDA_ERROR_PEER_ACCESS_NOT_ENABLED)
    return cc_fail_cu(r, "cuCtxDisablePeerAccess", "device %d to device %d", dev->ordinal,
                      peer->ordinal);
  return CUCORE_OK;
}

/* A range cucore recorded must belong to the device it is said to be on. */
static cucore_status on_device(uint64_t addr, const cucore_device *dev, const char *fn,
                               const char *role) {
  cc_mem_rec rec;
  if (!cc_reg_find(&cc_mem_registry, addr, &rec) || !rec.ctx || rec.ordinal < 0) return CUCORE_OK;
  if (rec.kind == CUCORE_MEM_MANAGED || rec.kind == CUCORE_MEM_POOL_MANAGED ||
      rec.kind == CUCORE_MEM_POOL_PINNED || rec.ctx == dev->ctx)
    return CUCORE_OK;
  char what[256];
  cc_rec_describe(&rec, what, sizeof what);
  return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: the %s 0x%llx is in %s, not on device %d", fn, role,
                 (unsigned long long)addr, what, dev->ordinal);
}

cucore_status cucore_memcpy_peer(cucore_device *dst_dev, cucore_devptr dst, cucore_device *src_dev,
                                 cucore_devptr src, size_t bytes, cucore_stream *s) {
  cc_begin();
  const char *fn = "cucore_memcpy_peer";
  CC_CHECK_HANDLE(src_dev, DEVICE, fn, "src_dev");
  cucore_status st = cc_mem_work_check(dst_dev, s, fn);
  if (st != CUCORE_OK) return st;
  if (bytes == 0) return CUCORE_OK;
  st = cc_check_size(bytes, fn, "the byte count");
  if (st != CUCORE_OK) return st;
  if (!dst || !src)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: the %s is 0 for a copy of %zu bytes", fn,
                   !dst ? "destination" : "source", bytes);
  st = cc_mem_check_copy(dst, src, bytes, fn);
  if (st == CUCORE_OK) st = on_device(dst, dst_dev, fn, "destination");
  if (st == CUCORE_OK) st = on_device(src, src_dev, fn, "source");
  if (st != CUCORE_OK) return st;
  st = cc_device_make_current(dst_dev);
  if (st != CUCORE_OK) return st;
  CUresult r = s ? DRV(cuMemcpyPeerAsync)((CUdeviceptr)dst, dst_dev->ctx, (CUdeviceptr)src,
                                          src_dev->ctx, bytes, s->handle)
                 : DRV(cuMemcpyPeer)((CUdeviceptr)dst, dst_dev->ctx, (CUdeviceptr)src, src_dev->ctx,
                                     bytes);
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, s ? "cuMemcpyPeerAsync" : "cuMemcpyPeer",
                      "%zu bytes from device %d to device %d", bytes, src_dev->ordinal,
                      dst_dev->ordinal);
  return s ? CUCORE_OK : cc_mem_finish_sync("peer copy");
}
