// C = A * B (WIDTH x WIDTH, row-major) in Kernel Tuner's matmul conventions: a block of
// block_size_x * block_size_y threads computes a tile of (block_size_x * tile_size_x) columns
// by (block_size_y * tile_size_y) rows, each thread tile_size_x * tile_size_y outputs, A's and
// B's tiles staged through shared memory (the restriction block_size_x == block_size_y *
// tile_size_y keeps one tile's loads one per thread). matmul.json is its space.
#define WIDTH 4096

extern "C" __global__ void matmul_kernel(float *C, const float *A, const float *B) {
  __shared__ float sA[block_size_y * tile_size_y][block_size_x];
  __shared__ float sB[block_size_x][block_size_x * tile_size_x];
  int tx = threadIdx.x, ty = threadIdx.y;
  int x = blockIdx.x * block_size_x * tile_size_x + tx;
  int y = blockIdx.y * block_size_y * tile_size_y + ty;
  float sum[tile_size_y][tile_size_x] = {{0.0f}};
  for (int k = 0; k < WIDTH; k += block_size_x) {
    __syncthreads();
#pragma unroll
    for (int i = 0; i < tile_size_y; i++) {
      sA[ty + block_size_y * i][tx] = A[(y + i * block_size_y) * WIDTH + k + tx];
#pragma unroll
      for (int j = 0; j < tile_size_x; j++)
        sB[ty + block_size_y * i][tx + j * block_size_x] =
            B[(k + ty + block_size_y * i) * WIDTH + x + j * block_size_x];
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < block_size_x; kk++)
#pragma unroll
      for (int i = 0; i < tile_size_y; i++)
#pragma unroll
        for (int j = 0; j < tile_size_x; j++)
          sum[i][j] += sA[ty + block_size_y * i][kk] * sB[kk][tx + j * block_size_x];
  }
#pragma unroll
  for (int i = 0; i < tile_size_y; i++)
#pragma unroll
    for (int j = 0; j < tile_size_x; j++)
      C[(y + i * block_size_y) * WIDTH + x + j * block_size_x] = sum[i][j];
}
