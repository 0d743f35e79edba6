// cluster.cu -- thread-block clusters (sm_90 and newer only).
#include <cooperative_groups.h>

namespace cg = cooperative_groups;

// A compile-time cluster of 2 x 1 x 1 blocks.
extern "C" __global__ void __cluster_dims__(2, 1, 1) cluster_2x1x1(int *out) {
  cg::cluster_group c = cg::this_cluster();
  out[blockIdx.x] = c.block_rank();
  c.sync();
}

// A compile-time cluster of 2 x 2 x 1 blocks.
extern "C" __global__ void __cluster_dims__(2, 2, 1) cluster_2x2x1(int *out) {
  cg::cluster_group c = cg::this_cluster();
  out[blockIdx.y * gridDim.x + blockIdx.x] = c.block_rank();
}

// Launch bounds with the third argument: at most 4 blocks per cluster.
extern "C" __global__ void __launch_bounds__(128, 2, 4) cluster_bounded(int *out) {
  out[blockIdx.x * blockDim.x + threadIdx.x] = threadIdx.x;
}
