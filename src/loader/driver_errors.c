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
  case CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED:
  case CUDA_ERROR_STREAM_CAPTURE_INVALIDATED:
  case CUDA_ERROR_STREAM_CAPTURE_MERGE:
  case CUDA_ERROR_STREAM_CAPTURE_UNMATCHED:
  case CUDA_ERROR_STREAM_CAPTURE_UNJOINED:
  case CUDA_ERROR_STREAM_CAPTURE_ISOLATION:
  case CUDA_ERROR_STREAM_CAPTURE_IMPLICIT:
  case CUDA_ERROR_CAPTURED_EVENT:
  case CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD: return CUCORE_STREAM_CAPTURE;
  case CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE: return CUCORE_GRAPH_UPDATE;
  default: return CUCORE_DRIVER_ERROR;
  }
}

const char *cc_cu_name(CUresult r) {
  const char *name = NULL;
  if (DRV(cuGetErrorName) && DRV(cuGetErrorName)(r, &name) == CUDA_SUCCESS && name) return name;
  return "CUDA_ERROR_UNKNOWN_CODE";
}

int cc_cu_is_capture_error(CUresult r) {
  return (r >= CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED &&
          r <= CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD);
}

/* What a stream-capture failure means and what to do, in cucore's words. */
static const char *capture_advice(CUresult r) {
  switch (r) {
  case CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED:
    return " This call is not allowed while a stream is capturing into a graph (it would wait "
           "for, or act outside of, the work being captured), and the driver has invalidated "
           "the capture: end it with cucore_stream_end_capture (no graph comes out), then "
           "begin again with the call moved outside the capture.";
  case CUDA_ERROR_STREAM_CAPTURE_INVALIDATED:
    return " The capture this stream takes part in was invalidated by an earlier call that "
           "could not be captured; end it with cucore_stream_end_capture (no graph comes out) "
           "to make the stream usable again.";
  case CUDA_ERROR_STREAM_CAPTURE_MERGE:
    return " Two independent captures would have been merged: a stream of one capture waited "
           "on an event recorded in another.";
  case CUDA_ERROR_STREAM_CAPTURE_UNMATCHED:
    return " The capture did not begin on this stream: end it on the stream where it began.";
  case CUDA_ERROR_STREAM_CAPTURE_UNJOINED:
    return " A stream forked from the capture (it waited on an event recorded in the capture) "
           "was not joined back: before ending, make the origin stream wait on an event "
           "recorded on each forked stream after its last work.";
  case CUDA_ERROR_STREAM_CAPTURE_ISOLATION:
    return " A dependency would cross the capture's boundary (a wait on an event recorded "
           "outside the capture, or on work of a stream that is not capturing).";
  case CUDA_ERROR_STREAM_CAPTURE_IMPLICIT:
    return " Work on the legacy default stream would wait for a capturing stream that "
           "synchronises with it: capture on a stream made with CUCORE_STREAM_NON_BLOCKING, or "
           "give the other work a stream of its own.";
  case CUDA_ERROR_CAPTURED_EVENT:
    return " The event was last recorded inside a capture, where it marks a point of the graph "
           "and not of a stream: it cannot be waited for or queried until recorded again "
           "outside a capture.";
  case CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD:
    return " A capture begun in global or thread-local mode must be ended by the thread that "
           "began it (or begin it in relaxed mode).";
  case CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE:
    return " The executable graph cannot take this update; instantiate the new graph instead.";
  default: return "";
  }
}

cucore_status cc_fail_cu(CUresult r, const char *call, const char *fmt, ...) {
  int code = cc_code_for_cu(r);
  cucore_status st = cc_status(code, CUCORE_SOURCE_DRIVER, (int)r);
  char said[CUCORE_DRIVER_LOG_MESSAGE_MAX]; /* taken even when not used: it is this call's */
  int has_said = cc_driver_log_take(said, sizeof said) > 0;
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
  const char *extra = capture_advice(r);
  if (code == CUCORE_KERNEL_FAULT)
    extra = " A kernel faulted: this context is now unusable; every later call on this device "
            "fails (and the driver may refuse other devices of the process too), so the "
            "process must exit (or reset the device) to use the GPU again.";
  return cc_fail(st, "%s failed: %s (%d): %s%s%s%s%s.%s", call, cc_cu_name(r), (int)r, text,
                 context[0] ? "; " : "", context, has_said ? "; the driver says: " : "",
                 has_said ? said : "", extra);
}
