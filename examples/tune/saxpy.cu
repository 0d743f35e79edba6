// saxpy with UNROLL elements per thread: y = a * x + y. The block size (block_size_x) and UNROLL
// are tuned; the README's worked example and `cucore help tune` run this file.
#ifndef UNROLL
#define UNROLL 1
#endif

extern "C" __global__ void saxpy(float a, const float *x, float *y, int n) {
  int base = blockIdx.x * blockDim.x * UNROLL + threadIdx.x;
#pragma unroll
  for (int u = 0; u < UNROLL; u++) {
    int i = base + u * blockDim.x;
    if (i < n) y[i] = a * x[i] + y[i];
  }
}
