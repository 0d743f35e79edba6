// launch_attrs.cu -- kernels whose resources and launch attributes the reader must report:
// launch bounds, register caps, shared memory (static and dynamic), local memory, user
// constants, named barriers, cooperative-groups grid sync.
#include <cooperative_groups.h>

namespace cg = cooperative_groups;

// At most 256 threads per block.
extern "C" __global__ void __launch_bounds__(256) lb_max256(int *out) {
  out[blockIdx.x * blockDim.x + threadIdx.x] = threadIdx.x;
}

// At most 128 threads per block, and at least 4 blocks per SM (a register cap follows).
extern "C" __global__ void __launch_bounds__(128, 4) lb_max128_min4(int *out) {
  out[blockIdx.x * blockDim.x + threadIdx.x] = threadIdx.x;
}

// An explicit register cap.
extern "C" __global__ void __maxnreg__(32) maxnreg32(float *out, int n) {
  float acc = 0;
  for (int i = 0; i < n; i++) acc += out[i] * out[n - i - 1];
  out[threadIdx.x] = acc;
}

// 4000 bytes of static shared memory.
extern "C" __global__ void shared_static(float *out) {
  __shared__ float tile[1000];
  tile[threadIdx.x % 1000] = out[threadIdx.x];
  __syncthreads();
  out[threadIdx.x] = tile[(threadIdx.x + 1) % 1000];
}

// Dynamic shared memory only (the size comes at launch).
extern "C" __global__ void shared_dynamic(float *out) {
  extern __shared__ float dyn[];
  dyn[threadIdx.x] = out[threadIdx.x];
  __syncthreads();
  out[threadIdx.x] = dyn[(threadIdx.x + 1) % blockDim.x];
}

// Both: 256 static ints plus dynamic memory.
extern "C" __global__ void shared_both(int *out) {
  __shared__ int fixed[256];
  extern __shared__ int more[];
  fixed[threadIdx.x % 256] = threadIdx.x;
  more[threadIdx.x] = out[threadIdx.x];
  __syncthreads();
  out[threadIdx.x] = fixed[(threadIdx.x + 3) % 256] + more[(threadIdx.x + 1) % blockDim.x];
}

// A local array indexed at run time: it lives in local memory (a stack frame).
extern "C" __global__ void local_stack(int *out, int n) {
  volatile int buf[256];
  for (int i = 0; i < 256; i++) buf[(i * 13) & 255] = out[i];
  out[0] = buf[n & 255];
}

// A call to a function that is not inlined and has its own frame.
__device__ __noinline__ int callee_with_frame(const int *in, int n) {
  volatile int tmp[64];
  for (int i = 0; i < 64; i++) tmp[i] = in[i] * i;
  return tmp[n & 63];
}
extern "C" __global__ void calls_noinline(int *out, int n) { out[1] = callee_with_frame(out, n); }

// User __constant__ data (module-wide, constant bank 3 in the cubin).
__constant__ float coefficients[64];
__constant__ int table[100];
extern "C" __global__ void uses_constants(float *out) {
  out[threadIdx.x] = coefficients[threadIdx.x % 64] + table[threadIdx.x % 100];
}

// Named barriers 1 and 3 (64 threads each) besides barrier 0: "used 4 barriers".
extern "C" __global__ void named_barriers(int *out) {
  out[threadIdx.x] = 1;
  asm volatile("bar.sync 1, 64;");
  out[threadIdx.x] += 1;
  asm volatile("bar.sync 3, 64;");
  __syncthreads();
}

// Grid-wide synchronisation: needs a cooperative launch.
extern "C" __global__ void grid_sync(int *out) {
  cg::grid_group g = cg::this_grid();
  out[g.thread_rank()] = 1;
  g.sync();
  if (g.thread_rank() == 0) {
    int s = 0;
    for (unsigned long long i = 0; i < g.size(); i++) s += out[i];
    out[0] = s;
  }
}
