/* driver_errors.c -- CUresult failures as cucore statuses, with the driver's own name and text. */
#include "loader/loader.h"

#include <stdio.h>

int cc_code_for_cu(CUresult r) {
  switch (r) {
  case CUDA_SUCCESS: return CUCORE_OK;
  case CUDA_ERROR_INVALID_VALUE: return CUCORE_INVALID_ARGUMENT;
  case CUDA_ERROR_OUT_OF_MEMORY: return CUCORE_DEVICE_OUT_OF_MEMORY;
  case CUDA_ERROR_NO_DEVICE: return CUCORE_NO_DEVICE;
  case CUDA_ERROR_INVALID_DEVICE: return CUCORE_INVALID_DEVICE;
  case CUDA_ERROR_STUB_LIBRARY: return CUCORE_DRIVER_STUB;
  case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH: return CUCORE_DRIVER_TOO_OLD;
  case CUDA_ERROR_NOT_READY: return CUCORE_NOT_READY;
  case CUDA_ERROR_NOT_FOUND: return CUCORE_NOT_FOUND;
  case CUDA_ERROR_NOT_SUPPORTED: return CUCORE_NOT_SUPPORTED;
  case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES: return CUCORE_LAUNCH_OUT_OF_RESOURCES;
  case CUDA_ERROR_INVALID_IMAGE:
  case CUDA_ERROR_NO_BINARY_FOR_GPU:
  case CUDA_ERROR_INVALID_PTX:
  case CUDA_ERROR_INVALID_SOURCE: return CUCORE_INVALID_BINARY;
  case CUDA_ERROR_UNSUPPORTED_PTX_VERSION: return CUCORE_VERSION_MISMATCH;
  case CUDA_ERROR_FILE_NOT_FOUND: return CUCORE_IO_ERROR;
  case CUDA_ERROR_ILLEGAL_ADDRESS:
  case CUDA_ERROR_LAUNCH_FAILED:
  case CUDA_ERROR_ILLEGAL_INSTRUCTION:
  case CUDA_ERROR_MISALIGNED_ADDRESS:
  case CUDA_ERROR_INVALID_ADDRESS_SPACE:
  case CUDA_ERROR_INVALID_PC:
  case CUDA_ERROR_HARDWARE_STACK_ERROR:
  case CUDA_ERROR_ASSERT:
  case CUDA_ERROR_LAUNCH_TIMEOUT: return CUCORE_KERNEL_FAULT;
  default: return CUCORE_DRIVER_ERROR;
  }
}

const char *cc_cu_name(CUresult r) {
  const char *name = NULL;
  if (DRV(cuGetErrorName) && DRV(cuGetErrorName)(r, &name) == CUDA_SUCCESS && name) return name;
  return "CUDA_ERROR_UNKNOWN_CODE";
}

cucore_status cc_fail_cu(CUresult r, const char *call, const char *fmt, ...) {
  int code = cc_code_for_cu(r);
  cucore_status st = cc_status(code, CUCORE_SOURCE_DRIVER, (int)r);
  if (cc_message_kept()) return st;
  const char *text = NULL;
  if (!(DRV(cuGetErrorString) && DRV(cuGetErrorString)(r, &text) == CUDA_SUCCESS && text))
    text = "no description";
  char context[1024] = "";
  if (fmt) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(context, sizeof context, fmt, ap);
    va_end(ap);
  }
  const char *extra = "";
  if (code == CUCORE_KERNEL_FAULT)
    extra = " A kernel faulted: this context is now unusable; every later call on this device "
            "fails, so the process must exit (or reset the device) to use the GPU again.";
  return cc_fail(st, "%s failed: %s (%d): %s%s%s.%s", call, cc_cu_name(r), (int)r, text,
                 context[0] ? "; " : "", context, extra);
}
