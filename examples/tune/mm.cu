// C = A * B for n x n row-major matrices, as a template over the tile each block computes:
// block (x, y) owns rows [x*BM, x*BM+BM) and columns [y*BN, y*BN+BN); its threads share the
// tile's BM*BN outputs. Plain and correct for every BM, BN (the tune finds the fast ones).
template <int BM, int BN>
__global__ void mm(const float *A, const float *B, float *C, int n) {
  for (int t = threadIdx.x; t < BM * BN; t += blockDim.x) {
    int row = blockIdx.x * BM + t / BN, col = blockIdx.y * BN + t % BN;
    if (row >= n || col >= n) continue;
    float sum = 0.0f;
    for (int k = 0; k < n; k++) sum += A[row * n + k] * B[k * n + col];
    C[row * n + col] = sum;
  }
}
