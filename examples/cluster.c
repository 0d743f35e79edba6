/* cluster.c -- thread block clusters: blocks of a cluster share distributed shared memory.
 * Each block writes its rank into its shared memory; block 0 of each cluster reads them all. */
#include "common.h"

static const char *source = "#include <cooperative_groups.h>\n"
                            "namespace cg = cooperative_groups;\n"
                            "extern \"C\" __global__ void gather_ranks(int *out) {\n"
                            "  __shared__ int mine;\n"
                            "  cg::cluster_group cluster = cg::this_cluster();\n"
                            "  if (threadIdx.x == 0) mine = (int)cluster.block_rank() + 1;\n"
                            "  cluster.sync();\n"
                            "  if (cluster.block_rank() == 0 && threadIdx.x == 0) {\n"
                            "    int sum = 0;\n"
                            "    for (unsigned r = 0; r < cluster.num_blocks(); r++) sum += "
                            "*cluster.map_shared_rank(&mine, r);\n"
                            "    out[blockIdx.x / cluster.num_blocks()] = sum;\n"
                            "  }\n"
                            "  cluster.sync();\n"
                            "}\n";

int main(void) {
  cucore_device *dev = open_gpu_or_exit("cluster");
  cucore_device_props props;
  CHECK(cucore_device_get_props(0, &props));
  if (!props.cluster_launch) {
    printf("cluster: device sm_%d has no thread block clusters; nothing to run\n", props.arch);
    return 0;
  }
  cucore_object *obj = compile_cuda(source, NULL);
  cucore_kernel *k = NULL;
  CHECK(cucore_object_get_kernel(obj, "gather_ranks", &k));
  const unsigned cluster = 4, clusters = 32;
  cucore_devptr out;
  CHECK(cucore_mem_alloc(dev, clusters * sizeof(int), &out));
  cucore_args *args = NULL;
  CHECK(cucore_args_create(k, &args));
  CHECK(CUCORE_ARGS(args, out));
  cucore_stream *s = NULL;
  CHECK(cucore_stream_default(dev, &s));
  cucore_launch_config cfg = {.grid = {cluster * clusters}, .block = {128}, .stream = s};
  CHECK(cucore_launch_config_cluster(&cfg, cluster, 1, 1));
  CHECK(cucore_launch(k, &cfg, args));
  int h[32];
  CHECK(cucore_memcpy_dtoh(dev, h, out, sizeof h, NULL));
  int bad = 0;
  for (unsigned c = 0; c < clusters; c++) bad += h[c] != (int)(cluster * (cluster + 1) / 2);
  printf("cluster: %u clusters of %u blocks each summed their ranks through distributed shared "
         "memory: %s\n",
         clusters, cluster, bad ? "WRONG" : "matches the CPU");
  cucore_args_destroy(args);
  cucore_kernel_destroy(k);
  cucore_object_destroy(obj);
  cucore_mem_free(dev, out);
  cucore_device_close(dev);
  return bad ? 1 : 0;
}
