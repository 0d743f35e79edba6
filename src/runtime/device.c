/*
 * device.c -- device enumeration and properties, and open devices holding the primary
 * context (users never handle contexts).
 */
#include "runtime/current.h"
#include "base/phase.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

cucore_status cucore_device_get_count(int *count) {
  cc_begin();
  CC_CHECK_ARG(count, "cucore_device_get_count", "count");
  *count = 0;
  cucore_status st = cc_driver_load();
  if (st != CUCORE_OK) return st;
  *count = cc_drv.device_count;
  return CUCORE_OK;
}

static cucore_status get_cudev(int ordinal, CUdevice *out, const char *fn) {
  cucore_status st = cc_driver_need_device();
  if (st != CUCORE_OK) return st;
  if (ordinal < 0 || ordinal >= cc_drv.device_count)
    return cc_fail(CUCORE_INVALID_DEVICE,
                   "%s: device %d does not exist; %d device%s present (valid ordinals 0..%d)", fn,
                   ordinal, cc_drv.device_count, cc_drv.device_count == 1 ? " is" : "s are",
                   cc_drv.device_count - 1);
  CUresult r = DRV(cuDeviceGet)(out, ordinal);
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuDeviceGet", "%s: device %d", fn, ordinal);
  return CUCORE_OK;
}

typedef struct prop_attr {
  CUdevice_attribute attr;
  size_t offset;
} prop_attr;

#define PA(a, field) \
  { a, offsetof(cucore_device_props, field) }
static const prop_attr prop_attrs[] = {
    PA(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, cc_major),
    PA(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, cc_minor),
    PA(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, sm_count),
    PA(CU_DEVICE_ATTRIBUTE_CLOCK_RATE, clock_khz),
    PA(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, memory_clock_khz),
    PA(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, memory_bus_width_bits),
    PA(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, l2_cache_bytes),
    PA(CU_DEVICE_ATTRIBUTE_WARP_SIZE, warp_size),
    PA(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, max_threads_per_block),
    PA(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, max_block_dim[0]),
    PA(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, max_block_dim[1]),
    PA(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, max_block_dim[2]),
    PA(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, max_grid_dim[0]),
    PA(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, max_grid_dim[1]),
    PA(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, max_grid_dim[2]),
    PA(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, max_threads_per_sm),
    PA(CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR, max_blocks_per_sm),
    PA(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, regs_per_block),
    PA(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR, regs_per_sm),
    PA(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, shared_per_block),
    PA(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, shared_per_block_optin),
    PA(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, shared_per_sm),
    PA(CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK, reserved_shared_per_block),
    PA(CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY, const_memory_bytes),
    PA(CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, cooperative_launch),
    PA(CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH, cluster_launch),
    PA(CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, managed_memory),
    PA(CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, unified_addressing),
    PA(CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT, async_engines),
    PA(CU_DEVICE_ATTRIBUTE_ECC_ENABLED, ecc_enabled),
    PA(CU_DEVICE_ATTRIBUTE_COMPUTE_MODE, compute_mode),
    PA(CU_DEVICE_ATTRIBUTE_INTEGRATED, integrated),
    PA(CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, memory_pools),
    PA(CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES, mempool_ipc_fd),
    PA(CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS, pageable_memory_access),
    PA(CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, concurrent_managed_access),
};
#undef PA

cucore_status cucore_device_get_props(int ordinal, cucore_device_props *out) {
  cc_begin();
  CC_CHECK_ARG(out, "cucore_device_get_props", "out");
  memset(out, 0, sizeof *out);
  CUdevice d;
  cucore_status st = get_cudev(ordinal, &d, "cucore_device_get_props");
  if (st != CUCORE_OK) return st;
  out->ordinal = ordinal;
  CUresult r = DRV(cuDeviceGetName)(out->name, (int)sizeof out->name, d);
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuDeviceGetName", "device %d", ordinal);
  for (size_t i = 0; i < CC_ARRAY_LEN(prop_attrs); i++) {
    int *field = (int *)((char *)out + prop_attrs[i].offset);
    /* Every attribute here is older than CUDA 12.0, the oldest driver cucore loads: a failure
     * is a failure, never a zero that would pass for a limit (fault injection found a block
     * y-dimension limit of 0 taken from a failed query). */
    r = DRV(cuDeviceGetAttribute)(field, prop_attrs[i].attr, d);
    if (r != CUDA_SUCCESS)
      return cc_fail_cu(r, "cuDeviceGetAttribute", "device %d, attribute %d", ordinal,
                        (int)prop_attrs[i].attr);
  }
  out->arch = out->cc_major * 10 + out->cc_minor;
  /* The attribute is a mask of CUmemAllocationHandleType; the field says yes or no for one. */
  out->mempool_ipc_fd = (out->mempool_ipc_fd & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) != 0;
  size_t total = 0;
  r = DRV(cuDeviceTotalMem)(&total, d);
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuDeviceTotalMem", "device %d", ordinal);
  out->total_memory = total;
  if (DRV(cuDeviceGetUuid)) {
    CUuuid u;
    if (DRV(cuDeviceGetUuid)(&u, d) == CUDA_SUCCESS) {
      const unsigned char *b = (const unsigned char *)u.bytes;
      snprintf(out->uuid, sizeof out->uuid,
               "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
               b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
               b[15]);
    }
  }
  if (DRV(cuDeviceGetPCIBusId))
    (void)DRV(cuDeviceGetPCIBusId)(out->pci_bus_id, (int)sizeof out->pci_bus_id, d);
  return CUCORE_OK;
}

/* The context cucore last saw or made current on this thread: the launch path trusts it
 * instead of asking the driver each time (a launch refused for a context mismatch is retried
 * after a real check, see launch.c). */
CC_TLS_IE _Thread_local CUcontext cc_tls_current;

cucore_status cc_device_make_current(cucore_device *dev) {
  CUcontext cur = NULL;
  CUresult r = DRV(cuCtxGetCurrent)(&cur);
  if (CC_LIKELY(r == CUDA_SUCCESS && cur == dev->ctx)) {
    cc_tls_current = cur;
    return CUCORE_OK;
  }
  r = DRV(cuCtxSetCurrent)(dev->ctx);
  if (r != CUDA_SUCCESS) {
    cc_tls_current = NULL;
    return cc_fail_cu(r, "cuCtxSetCurrent", "primary context of device %d", dev->ordinal);
  }
  cc_tls_current = dev->ctx;
  return CUCORE_OK;
}

void cc_device_forget_current(void) { cc_tls_current = NULL; }

/* The primary contexts retained through cucore, per device: open handles (and the fallback of
 * cc_ensure_context) and retains under way, counted from the moment cucore_device_open knows
 * the device, before the driver makes the context: another thread can tell without waiting
 * that the context is made or being made (cc_device_primary_started). Ordinals past the table
 * are not counted; the driver is asked about them. */
#define CC_COUNTED_DEVICES 64
static atomic_int primary_holds[CC_COUNTED_DEVICES];

static void count_hold(int ordinal, int delta) {
  if (ordinal >= 0 && ordinal < CC_COUNTED_DEVICES)
    atomic_fetch_add(&primary_holds[ordinal], delta);
}

int cc_device_primary_started(int ordinal) {
  if (ordinal >= 0 && ordinal < CC_COUNTED_DEVICES && atomic_load(&primary_holds[ordinal]) > 0)
    return 1;
  /* Made by the caller through the driver or the CUDA runtime: the driver knows (asked only
   * once it is loaded, so that no cuInit under way on another thread is waited for). */
  if (!cc_driver_ready_now() || ordinal < 0 || ordinal >= cc_drv.device_count ||
      !DRV(cuDevicePrimaryCtxGetState))
    return 0;
  CUdevice d;
  unsigned flags = 0;
  int active = 0;
  return DRV(cuDeviceGet)(&d, ordinal) == CUDA_SUCCESS &&
         DRV(cuDevicePrimaryCtxGetState)(d, &flags, &active) == CUDA_SUCCESS && active;
}

cucore_status cucore_device_open(int ordinal, cucore_device **out) {
  cc_begin();
  CC_CHECK_ARG(out, "cucore_device_open", "out");
  *out = NULL;
  CUdevice d;
  cucore_status st = get_cudev(ordinal, &d, "cucore_device_open");
  if (st != CUCORE_OK) return st;
  cucore_device *dev = cc_calloc(1, sizeof *dev, "a device handle");
  if (!dev) return CUCORE_HOST_OUT_OF_MEMORY;
  cc_handle_init(dev, CC_KIND_DEVICE);
  dev->ordinal = ordinal;
  dev->cudev = d;
  count_hold(ordinal, 1); /* being made, from now on */
  int64_t t0 = cc_phase_clock();
  CUresult r = DRV(cuDevicePrimaryCtxRetain)(&dev->ctx, d);
  if (r != CUDA_SUCCESS) {
    count_hold(ordinal, -1);
    free(dev);
    return cc_fail_cu(r, "cuDevicePrimaryCtxRetain", "device %d", ordinal);
  }
  cc_device_init_streams(dev);
  st = cc_device_make_current(dev);
  cc_phase_done(CUCORE_PHASE_CONTEXT, t0);
  if (st != CUCORE_OK) {
    (void)DRV(cuDevicePrimaryCtxRelease)(d);
    count_hold(ordinal, -1);
    free(dev);
    return st;
  }
  *out = dev;
  return CUCORE_OK;
}

void cc_device_init_streams(cucore_device *dev) {
  dev->default_stream = (struct cucore_stream){.hdr = {CC_KIND_STREAM},
                                               .handle = NULL,
                                               .dev = dev,
                                               .is_default = 1,
                                               .blocking = 1};
  dev->per_thread_stream = (struct cucore_stream){.hdr = {CC_KIND_STREAM},
                                                  .handle = CU_STREAM_PER_THREAD,
                                                  .dev = dev,
                                                  .is_default = 1,
                                                  .blocking = 1};
}

int cc_device_ordinal_of(CUdevice d) {
  for (int i = 0; i < cc_drv.device_count; i++) {
    CUdevice c;
    if (DRV(cuDeviceGet)(&c, i) == CUDA_SUCCESS && c == d) return i;
  }
  return -1;
}

/* The handle and its default streams dead, its shell to the quarantine. */
static void device_retire(cucore_device *dev) {
  cc_handle_kill(&dev->default_stream, CC_KIND_STREAM);
  cc_handle_kill(&dev->per_thread_stream, CC_KIND_STREAM);
  cc_handle_retire(dev, CC_KIND_DEVICE);
}

cucore_status cucore_device_close(cucore_device *dev) {
  cc_begin();
  if (!dev) return CUCORE_OK;
  CC_CHECK_HANDLE(dev, DEVICE, "cucore_device_close", "dev");
  if (dev->green) /* the green context owns it (green.c) */
    return cc_fail(CUCORE_MISUSE,
                   "cucore_device_close: this device handle belongs to a green "
                   "context (cucore_green_get_device); it goes with cucore_green_destroy");
  cc_refs_flush();     /* what destroyed graphs held (events of this device among it) goes first */
  if (dev->borrowed) { /* the caller's context: neither released nor unset */
    if (cc_tls_current == dev->ctx) cc_tls_current = NULL;
    device_retire(dev);
    return CUCORE_OK;
  }
  CUcontext cur = NULL;
  if (DRV(cuCtxGetCurrent)(&cur) == CUDA_SUCCESS && cur == dev->ctx)
    (void)DRV(cuCtxSetCurrent)(NULL);
  if (cc_tls_current == dev->ctx) cc_tls_current = NULL;
  CUresult r = DRV(cuDevicePrimaryCtxRelease)(dev->cudev);
  int ordinal = dev->ordinal;
  count_hold(ordinal, -1);
  device_retire(dev);
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuDevicePrimaryCtxRelease", "device %d", ordinal);
  return CUCORE_OK;
}

cucore_status cucore_device_get_ordinal(const cucore_device *dev, int *ordinal) {
  cc_begin();
  CC_CHECK_HANDLE(dev, DEVICE, "cucore_device_get_ordinal", "dev");
  CC_CHECK_ARG(ordinal, "cucore_device_get_ordinal", "ordinal");
  *ordinal = dev->ordinal;
  return CUCORE_OK;
}

cucore_status cucore_device_synchronize(cucore_device *dev) {
  cc_begin();
  CC_CHECK_HANDLE(dev, DEVICE, "cucore_device_synchronize", "dev");
  cucore_status st = cc_capture_check_unsafe(dev, 0, 1, "cucore_device_synchronize");
  if (st == CUCORE_OK) st = cc_device_make_current(dev);
  if (st != CUCORE_OK) return st;
  CUresult r = DRV(cuCtxSynchronize)();
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuCtxSynchronize", "device %d", dev->ordinal);
  return CUCORE_OK;
}

cucore_status cucore_device_get_mem_info(cucore_device *dev, size_t *free_bytes,
                                         size_t *total_bytes) {
  cc_begin();
  CC_CHECK_HANDLE(dev, DEVICE, "cucore_device_get_mem_info", "dev");
  CC_CHECK_ARG(free_bytes, "cucore_device_get_mem_info", "free_bytes");
  CC_CHECK_ARG(total_bytes, "cucore_device_get_mem_info", "total_bytes");
  cucore_status st = cc_device_make_current(dev);
  if (st != CUCORE_OK) return st;
  CUresult r = DRV(cuMemGetInfo)(free_bytes, total_bytes);
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuMemGetInfo", "device %d", dev->ordinal);
  return CUCORE_OK;
}

cucore_status cucore_device_get_stream_priorities(cucore_device *dev, int *least, int *greatest) {
  cc_begin();
  CC_CHECK_HANDLE(dev, DEVICE, "cucore_device_get_stream_priorities", "dev");
  CC_CHECK_ARG(least, "cucore_device_get_stream_priorities", "least");
  CC_CHECK_ARG(greatest, "cucore_device_get_stream_priorities", "greatest");
  cucore_status st = cc_device_make_current(dev);
  if (st != CUCORE_OK) return st;
  CUresult r = DRV(cuCtxGetStreamPriorityRange)(least, greatest);
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, "cuCtxGetStreamPriorityRange", "device %d", dev->ordinal);
  return CUCORE_OK;
}

cucore_status cucore_device_get_native(cucore_device *dev, void **cucontext, int *cudevice) {
  cc_begin();
  CC_CHECK_HANDLE(dev, DEVICE, "cucore_device_get_native", "dev");
  if (cucontext) *cucontext = dev->ctx;
  if (cudevice) *cudevice = (int)dev->cudev;
  return CUCORE_OK;
}

/* A context for calls that need one when the caller has none current (parameter queries of a
 * kernel looked up before any device was opened): device 0's primary context, retained once
 * for the life of the process. */
static pthread_once_t fallback_once = PTHREAD_ONCE_INIT;
static CUcontext fallback_ctx;
static CUresult fallback_result;

static void retain_fallback(void) {
  CUdevice d;
  int64_t t0 = cc_phase_clock();
  fallback_result = DRV(cuDeviceGet)(&d, 0);
  if (fallback_result == CUDA_SUCCESS)
    fallback_result = DRV(cuDevicePrimaryCtxRetain)(&fallback_ctx, d);
  if (fallback_result == CUDA_SUCCESS) count_hold(0, 1); /* held for the life of the process */
  cc_phase_done(CUCORE_PHASE_CONTEXT, t0);
}

cucore_status cc_ensure_context(void) {
  CUcontext cur = NULL;
  CUresult r = DRV(cuCtxGetCurrent)(&cur);
  if (r != CUDA_SUCCESS) /* not "none is current": the fallback would replace the caller's */
    return cc_fail_cu(r, "cuCtxGetCurrent", "asking for the current context");
  if (cur) return CUCORE_OK;
  pthread_once(&fallback_once, retain_fallback);
  if (fallback_result != CUDA_SUCCESS)
    return cc_fail_cu(fallback_result, "cuDevicePrimaryCtxRetain",
                      "device 0, for a query that needs a context");
  r = DRV(cuCtxSetCurrent)(fallback_ctx);
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuCtxSetCurrent", "device 0's primary context");
  return CUCORE_OK;
}
