/* memory.c -- device and pinned host memory, copies and memset. */
#include "runtime/runtime.h"

static cucore_status enter(cucore_device *dev, cucore_stream *s, const char *fn) {
  if (CC_UNLIKELY(!dev)) return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: `dev` is NULL", fn);
  if (s && s->dev->ctx != dev->ctx)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: the stream belongs to device %d, not device %d",
                   fn, s->dev->ordinal, dev->ordinal);
  if (!s) { /* allocations, frees and synchronous copies: refused during some captures */
    cucore_status st = cc_capture_check_unsafe(dev, 0, 0, fn);
    if (st != CUCORE_OK) return st;
  }
  return cc_device_make_current(dev);
}

cucore_status cucore_mem_alloc(cucore_device *dev, size_t bytes, cucore_devptr *out) {
  cc_begin();
  CC_CHECK_ARG(out, "cucore_mem_alloc", "out");
  *out = 0;
  cucore_status st = enter(dev, NULL, "cucore_mem_alloc");
  if (st != CUCORE_OK) return st;
  if (bytes == 0)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "cucore_mem_alloc: size is 0 (expected > 0 bytes)");
  CUdeviceptr p = 0;
  CUresult r = DRV(cuMemAlloc)(&p, bytes);
  if (r != CUDA_SUCCESS) {
    size_t free_b = 0, total_b = 0;
    char want[32], fr[32], tot[32];
    (void)DRV(cuMemGetInfo)(&free_b, &total_b);
    return cc_fail_cu(r, "cuMemAlloc", "asked for %s on device %d, which has %s free of %s",
                      cc_format_bytes(bytes, want, sizeof want), dev->ordinal,
                      cc_format_bytes(free_b, fr, sizeof fr),
                      cc_format_bytes(total_b, tot, sizeof tot));
  }
  *out = (cucore_devptr)p;
  return CUCORE_OK;
}

cucore_status cucore_mem_free(cucore_device *dev, cucore_devptr ptr) {
  cc_begin();
  if (ptr == 0) return CUCORE_OK;
  cucore_status st = enter(dev, NULL, "cucore_mem_free");
  if (st != CUCORE_OK) return st;
  CUresult r = DRV(cuMemFree)((CUdeviceptr)ptr);
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, "cuMemFree", "address 0x%llx on device %d", (unsigned long long)ptr,
                      dev->ordinal);
  return CUCORE_OK;
}

cucore_status cucore_host_alloc(cucore_device *dev, size_t bytes, void **out) {
  cc_begin();
  CC_CHECK_ARG(out, "cucore_host_alloc", "out");
  *out = NULL;
  cucore_status st = enter(dev, NULL, "cucore_host_alloc");
  if (st != CUCORE_OK) return st;
  if (bytes == 0)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "cucore_host_alloc: size is 0 (expected > 0 bytes)");
  CUresult r = DRV(cuMemHostAlloc)(out, bytes, CU_MEMHOSTALLOC_PORTABLE);
  if (r != CUDA_SUCCESS) {
    char want[32];
    *out = NULL;
    return cc_fail_cu(r, "cuMemHostAlloc", "asked for %s of pinned host memory",
                      cc_format_bytes(bytes, want, sizeof want));
  }
  return CUCORE_OK;
}

cucore_status cucore_host_free(cucore_device *dev, void *ptr) {
  cc_begin();
  if (!ptr) return CUCORE_OK;
  cucore_status st = enter(dev, NULL, "cucore_host_free");
  if (st != CUCORE_OK) return st;
  CUresult r = DRV(cuMemFreeHost)(ptr);
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuMemFreeHost", NULL);
  return CUCORE_OK;
}

#define COPY_CHECK(fn, ptr_ok)                                                                \
  do {                                                                                        \
    cucore_status st_ = enter(dev, s, fn);                                                    \
    if (st_ == CUCORE_OK && !s) st_ = cc_capture_check_unsafe(dev, 1, 0, fn); /* legacy */   \
    if (st_ != CUCORE_OK) return st_;                                                         \
    if (bytes == 0) return CUCORE_OK;                                                         \
    if (!(ptr_ok))                                                                            \
      return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: a source or destination is NULL/0 for a "  \
                     "copy of %zu bytes", fn, bytes);                                         \
  } while (0)

cucore_status cucore_memcpy_htod(cucore_device *dev, cucore_devptr dst, const void *src,
                                 size_t bytes, cucore_stream *s) {
  cc_begin();
  COPY_CHECK("cucore_memcpy_htod", dst && src);
  CUresult r = s ? DRV(cuMemcpyHtoDAsync)((CUdeviceptr)dst, src, bytes, s->handle)
                 : DRV(cuMemcpyHtoD)((CUdeviceptr)dst, src, bytes);
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, s ? "cuMemcpyHtoDAsync" : "cuMemcpyHtoD", "%zu bytes to 0x%llx", bytes,
                      (unsigned long long)dst);
  return CUCORE_OK;
}

cucore_status cucore_memcpy_dtoh(cucore_device *dev, void *dst, cucore_devptr src, size_t bytes,
                                 cucore_stream *s) {
  cc_begin();
  COPY_CHECK("cucore_memcpy_dtoh", dst && src);
  CUresult r = s ? DRV(cuMemcpyDtoHAsync)(dst, (CUdeviceptr)src, bytes, s->handle)
                 : DRV(cuMemcpyDtoH)(dst, (CUdeviceptr)src, bytes);
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, s ? "cuMemcpyDtoHAsync" : "cuMemcpyDtoH", "%zu bytes from 0x%llx",
                      bytes, (unsigned long long)src);
  return CUCORE_OK;
}

cucore_status cucore_memcpy_dtod(cucore_device *dev, cucore_devptr dst, cucore_devptr src,
                                 size_t bytes, cucore_stream *s) {
  cc_begin();
  COPY_CHECK("cucore_memcpy_dtod", dst && src);
  CUresult r = s ? DRV(cuMemcpyDtoDAsync)((CUdeviceptr)dst, (CUdeviceptr)src, bytes, s->handle)
                 : DRV(cuMemcpyDtoD)((CUdeviceptr)dst, (CUdeviceptr)src, bytes);
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, s ? "cuMemcpyDtoDAsync" : "cuMemcpyDtoD", "%zu bytes", bytes);
  return CUCORE_OK;
}

cucore_status cucore_memset_d8(cucore_device *dev, cucore_devptr dst, uint8_t value,
                               size_t count, cucore_stream *s) {
  cc_begin();
  size_t bytes = count;
  COPY_CHECK("cucore_memset_d8", dst);
  CUresult r = s ? DRV(cuMemsetD8Async)((CUdeviceptr)dst, value, count, s->handle)
                 : DRV(cuMemsetD8)((CUdeviceptr)dst, value, count);
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, s ? "cuMemsetD8Async" : "cuMemsetD8", "%zu bytes", count);
  return CUCORE_OK;
}

cucore_status cucore_memset_d32(cucore_device *dev, cucore_devptr dst, uint32_t value,
                                size_t count, cucore_stream *s) {
  cc_begin();
  size_t bytes = count * 4;
  COPY_CHECK("cucore_memset_d32", dst);
  if (dst % 4)
    return cc_fail(CUCORE_ARG_ALIGNMENT,
                   "cucore_memset_d32: address 0x%llx is not 4-byte aligned",
                   (unsigned long long)dst);
  CUresult r = s ? DRV(cuMemsetD32Async)((CUdeviceptr)dst, value, count, s->handle)
                 : DRV(cuMemsetD32)((CUdeviceptr)dst, value, count);
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, s ? "cuMemsetD32Async" : "cuMemsetD32", "%zu words", count);
  return CUCORE_OK;
}
