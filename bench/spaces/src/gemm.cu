// C = A * B, 512 x 512 single precision, register-tiled without shared memory (own kernel,
// recorded brute force on the H100 for bench/spaces/): each thread computes tile_x x tile_y
// outputs spaced a block apart, k_unroll steps of k unrolled, A and B read through the
// read-only cache when read_only. Block dimensions are the launch's (blockDim).
#define N 512

#if read_only
#define LOAD(p) __ldg(p)
#else
#define LOAD(p) (*(p))
#endif

extern "C" __global__ void gemm(float *C, const float *A, const float *B) {
  int col0 = blockIdx.x * blockDim.x * tile_x + threadIdx.x;
  int row0 = blockIdx.y * blockDim.y * tile_y + threadIdx.y;
  int col[tile_x], row[tile_y];
  float acc[tile_y][tile_x];
#pragma unroll
  for (int tx = 0; tx < tile_x; tx++) col[tx] = min(col0 + tx * (int)blockDim.x, N - 1);
#pragma unroll
  for (int ty = 0; ty < tile_y; ty++) {
    row[ty] = min(row0 + ty * (int)blockDim.y, N - 1);
#pragma unroll
    for (int tx = 0; tx < tile_x; tx++) acc[ty][tx] = 0.0f;
  }
  for (int k0 = 0; k0 < N; k0 += k_unroll) {
#pragma unroll
    for (int kk = 0; kk < k_unroll; kk++) {
      int k = k0 + kk;
      float b[tile_x];
#pragma unroll
      for (int tx = 0; tx < tile_x; tx++) b[tx] = LOAD(&B[k * N + col[tx]]);
#pragma unroll
      for (int ty = 0; ty < tile_y; ty++) {
        float a = LOAD(&A[row[ty] * N + k]);
#pragma unroll
        for (int tx = 0; tx < tile_x; tx++) acc[ty][tx] += a * b[tx];
      }
    }
  }
#pragma unroll
  for (int ty = 0; ty < tile_y; ty++)
#pragma unroll
    for (int tx = 0; tx < tile_x; tx++) {
      int x = col0 + tx * blockDim.x, y = row0 + ty * blockDim.y;
      if (x < N && y < N) C[y * N + x] = acc[ty][tx];
    }
}
