// C = A * B, N x N (4096 unless -DN) single precision, shared-memory tiled (own kernel, for
// bench/tune_heavy.sh: a space of heavy kernels, 4 ms and more on an H100): a block of
// TS x TS / WPT threads computes a TS x TS tile of C, each thread WPT outputs a column apart
// TS / WPT rows; the tiles of A and B staged in shared memory, padded by PAD floats a row;
// the inner loop unrolled when UNROLL.
#ifndef N /* bench/spaces/src/matmul_heavy_6144.json: -DN=6144 */
#define N 4096
#endif

extern "C" __global__ void matmul(float *C, const float *A, const float *B) {
  __shared__ float As[TS][TS + PAD];
  __shared__ float Bs[TS][TS + PAD];
  const int tx = threadIdx.x, ty = threadIdx.y, step = TS / WPT;
  const int col = blockIdx.x * TS + tx, row0 = blockIdx.y * TS + ty;
  float acc[WPT];
  for (int w = 0; w < WPT; w++) acc[w] = 0.0f;
  for (int t = 0; t < N; t += TS) {
    for (int w = 0; w < WPT; w++) {
      int r = ty + w * step;
      As[r][tx] = A[(blockIdx.y * TS + r) * N + t + tx];
      Bs[r][tx] = B[(t + r) * N + col];
    }
    __syncthreads();
#if UNROLL
#pragma unroll
#else
#pragma unroll 1
#endif
    for (int k = 0; k < TS; k++) {
      float b = Bs[k][tx];
      for (int w = 0; w < WPT; w++) acc[w] += As[ty + w * step][k] * b;
    }
    __syncthreads();
  }
  for (int w = 0; w < WPT; w++) C[(row0 + w * step) * N + col] = acc[w];
}
