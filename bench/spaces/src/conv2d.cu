// A 5x5 2D convolution of a 4096 x 4096 image (own kernel, recorded brute force on the H100 for
// bench/spaces/): each thread computes tile_x x tile_y outputs spaced a block apart; block
// dimensions are the launch's (blockDim), so they cost no compile. read_only loads through the
// read-only cache (__ldg); unroll_filter unrolls the filter loops.
#define W 4096
#define H 4096
#define FW 5
#define FH 5
#define IW (W + FW - 1)

#if read_only
#define LOAD(p) __ldg(p)
#else
#define LOAD(p) (*(p))
#endif

extern "C" __global__ void conv2d(float *out, const float *in, const float *f) {
  int x0 = blockIdx.x * blockDim.x * tile_x + threadIdx.x;
  int y0 = blockIdx.y * blockDim.y * tile_y + threadIdx.y;
  float acc[tile_y][tile_x];
#pragma unroll
  for (int ty = 0; ty < tile_y; ty++)
#pragma unroll
    for (int tx = 0; tx < tile_x; tx++) acc[ty][tx] = 0.0f;
#if unroll_filter
#pragma unroll
#endif
  for (int i = 0; i < FH; i++) {
#if unroll_filter
#pragma unroll
#endif
    for (int j = 0; j < FW; j++) {
      float w = LOAD(&f[i * FW + j]);
#pragma unroll
      for (int ty = 0; ty < tile_y; ty++) {
        int y = min(y0 + ty * (int)blockDim.y, H - 1);
#pragma unroll
        for (int tx = 0; tx < tile_x; tx++) {
          int x = min(x0 + tx * (int)blockDim.x, W - 1);
          acc[ty][tx] += LOAD(&in[(y + i) * IW + x + j]) * w;
        }
      }
    }
  }
#pragma unroll
  for (int ty = 0; ty < tile_y; ty++)
#pragma unroll
    for (int tx = 0; tx < tile_x; tx++) {
      int x = x0 + tx * blockDim.x, y = y0 + ty * blockDim.y;
      if (x < W && y < H) out[y * W + x] = acc[ty][tx];
    }
}
