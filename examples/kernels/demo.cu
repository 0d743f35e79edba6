// demo.cu -- the kernels `make demo` compiles, inspects, sizes and (on a GPU) runs.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

// y = a*x + y
extern "C" __global__ void saxpy(float a, const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

// Sum of n floats into *out (block partial sums in shared memory, then one atomic per block).
extern "C" __global__ void __launch_bounds__(256) reduce_sum(const float *in, float *out, int n) {
  __shared__ float partial[256];
  float v = 0;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) v += in[i];
  partial[threadIdx.x] = v;
  __syncthreads();
  for (int w = blockDim.x / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) partial[threadIdx.x] += partial[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(out, partial[0]);
}

// One template, instantiated by name expression: scale<float>, scale<double>.
template <typename T> __global__ void scale(T *x, T factor, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= factor;
}

// A struct by value, 16-byte aligned.
struct __align__(16) transform { float scale; int offset; double bias; };
extern "C" __global__ void apply(const int *in, double *out, transform t, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = t.scale * (in[i] + t.offset) + t.bias;
}

// Register-heavy: many live values per thread; its occupancy is limited by registers.
extern "C" __global__ void heavy(const float *in, float *out, int n) {
  float acc[32];
#pragma unroll
  for (int k = 0; k < 32; k++) acc[k] = in[(threadIdx.x + 37 * k) % n];
  float s = 0;
#pragma unroll
  for (int r = 0; r < 8; r++)
#pragma unroll
    for (int k = 0; k < 32; k++) s = s * acc[(k + r) % 32] + acc[k];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

// Grid-wide sync: needs a cooperative launch.
extern "C" __global__ void grid_sync(int *flag) {
  cg::this_grid().sync();
  if (blockIdx.x == 0 && threadIdx.x == 0) *flag = 1;
}
