// all_kernels.cu -- every test kernel in one translation unit, so one nvcc run per arch
// builds them all. cluster.cu joins with -DCUCORE_TEST_CLUSTERS (sm_90 and newer).
#include "big_params.cu"
#include "launch_attrs.cu"
#include "params.cu"
#if defined(CUCORE_TEST_CLUSTERS)
#include "cluster.cu"
#endif
