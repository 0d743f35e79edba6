/* first_result.c -- the bar for `cucore run`'s time to first result: what a C
 * programmer writes without cucore, linked against libcuda and NVRTC as usual. cuInit,
 * device 0's primary context, NVRTC compiles saxpy for the device's arch to a cubin, the
 * driver loads it, 1 Mi floats of x and y are copied in, one launch, y is copied back and
 * checked. Nothing is released at the end (the process exit does it), as `cucore run` does.
 *
 * Prints one line on stdout: "raw cuinit_context_ms X nvrtc_ms Y total_ms Z" (in-process
 * wall times; bench/first_result.py compares whole processes). Exit 1 with the failing call
 * on stderr. Usage: bench_raw_first_result */
#define _POSIX_C_SOURCE 200809L
#include <cuda.h>
#include <nvrtc.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define N (1 << 20)

static const char SAXPY[] =
    "extern \"C\" __global__ void saxpy(float a, const float *x, float *y, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = a * x[i] + y[i];\n"
    "}\n";

#define CU(call)                                        \
  do {                                                  \
    CUresult r_ = (call);                               \
    if (r_ != CUDA_SUCCESS) {                           \
      const char *name_ = "?";                          \
      cuGetErrorName(r_, &name_);                       \
      fprintf(stderr, "%s failed: %s\n", #call, name_); \
      exit(1);                                          \
    }                                                   \
  } while (0)

#define RTC(call)                                                         \
  do {                                                                    \
    nvrtcResult r_ = (call);                                              \
    if (r_ != NVRTC_SUCCESS) {                                            \
      fprintf(stderr, "%s failed: %s\n", #call, nvrtcGetErrorString(r_)); \
      exit(1);                                                            \
    }                                                                     \
  } while (0)

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* saxpy as a cubin for `dev`'s arch; *size is set. */
static char *compile_saxpy(CUdevice dev, size_t *size) {
  int major = 0, minor = 0;
  CU(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
  CU(cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev));
  char arch[64];
  snprintf(arch, sizeof arch, "--gpu-architecture=sm_%d%d", major, minor);
  const char *opts[] = {arch};
  nvrtcProgram prog;
  RTC(nvrtcCreateProgram(&prog, SAXPY, "saxpy.cu", 0, NULL, NULL));
  nvrtcResult r = nvrtcCompileProgram(prog, 1, opts);
  if (r != NVRTC_SUCCESS) {
    size_t n = 0;
    nvrtcGetProgramLogSize(prog, &n);
    char *log = malloc(n + 1);
    if (log && nvrtcGetProgramLog(prog, log) == NVRTC_SUCCESS) fprintf(stderr, "%s\n", log);
    RTC(r);
  }
  RTC(nvrtcGetCUBINSize(prog, size));
  char *cubin = malloc(*size);
  if (!cubin) exit(1);
  RTC(nvrtcGetCUBIN(prog, cubin));
  RTC(nvrtcDestroyProgram(&prog));
  return cubin;
}

int main(void) {
  double t0 = now_ms();
  CU(cuInit(0));
  CUdevice dev;
  CUcontext ctx;
  CU(cuDeviceGet(&dev, 0));
  CU(cuDevicePrimaryCtxRetain(&ctx, dev));
  CU(cuCtxSetCurrent(ctx));
  double t1 = now_ms();
  size_t size = 0;
  char *cubin = compile_saxpy(dev, &size);
  double t2 = now_ms();
  CUmodule mod;
  CUfunction fn;
  CU(cuModuleLoadData(&mod, cubin));
  CU(cuModuleGetFunction(&fn, mod, "saxpy"));
  float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
  if (!x || !y) return 1;
  for (int i = 0; i < N; i++) {
    x[i] = 1.0f;
    y[i] = 2.0f;
  }
  CUdeviceptr dx, dy;
  CU(cuMemAlloc(&dx, N * sizeof *x));
  CU(cuMemAlloc(&dy, N * sizeof *y));
  CU(cuMemcpyHtoD(dx, x, N * sizeof *x));
  CU(cuMemcpyHtoD(dy, y, N * sizeof *y));
  float a = 2.0f;
  int n = N;
  void *args[] = {&a, &dx, &dy, &n};
  CU(cuLaunchKernel(fn, N / 256, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
  CU(cuMemcpyDtoH(y, dy, N * sizeof *y));
  for (int i = 0; i < N; i++)
    if (y[i] != 4.0f) {
      fprintf(stderr, "y[%d] = %g, expected 4\n", i, (double)y[i]);
      return 1;
    }
  printf("raw cuinit_context_ms %.3f nvrtc_ms %.3f total_ms %.3f\n", t1 - t0, t2 - t1,
         now_ms() - t0);
  return 0;
}
