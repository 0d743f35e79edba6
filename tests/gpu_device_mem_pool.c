/* gpu_device_mem_pool.c -- the device's current pool and its graph memory on a real GPU (label
 * gpu): a created pool made current serves cucore_mem_alloc_async (the driver's
 * cuPointerGetAttribute names the pool, cucore's record too), a kernel uses that memory, the
 * pool's destroy is refused while it is current, NULL restores the default; then a graph with an
 * allocation node, a kernel node and a free node is launched and the graph memory counters read
 * (used and reserved high-water marks at least the allocation), reset and trimmed after the
 * graph is gone. */
#include "gpu_support.h"
#include "runtime/runtime.h" /* DRV(): the driver's own answers to compare with */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static cucore_device *dev;
static cucore_stream *s;
static cucore_object *obj;

static const char *source = "extern \"C\" __global__ void fill(int *p, int v, int n) {\n"
                            "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                            "  if (i < n) p[i] = v + i; }\n";

enum { N = 1 << 16 };

static int setup(void **state) {
  (void)state;
  return gpu_group_open(source, &dev, &s, &obj);
}
static int teardown(void **state) {
  (void)state;
  return gpu_group_close(dev, s, obj);
}

static void config(cucore_launch_config *c, int n) {
  memset(c, 0, sizeof *c);
  c->grid[0] = (unsigned)(n + 255) / 256;
  c->block[0] = 256;
  c->stream = s;
}

static void current_pool_serves_alloc_async(void **state) {
  (void)state;
  cucore_mem_pool *pool = NULL, *cur = NULL;
  assert_ok(cucore_mem_pool_create(dev, NULL, &pool));
  assert_ok(cucore_device_set_mem_pool(dev, pool));
  void *native = NULL, *cur_native = NULL;
  assert_ok(cucore_mem_pool_get_native(pool, &native));
  assert_ok(cucore_device_get_mem_pool(dev, &cur));
  assert_ok(cucore_mem_pool_get_native(cur, &cur_native));
  assert_ptr_equal(native, cur_native);
  cucore_devptr p = 0;
  assert_ok(cucore_mem_alloc_async(s, N * sizeof(int), &p));
  CUmemoryPool from = NULL;
  assert_int_equal(DRV(cuPointerGetAttribute)(&from, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE,
                                              (CUdeviceptr)p),
                   CUDA_SUCCESS);
  assert_ptr_equal(from, native); /* the driver allocated it from the current pool */
  cucore_pointer_facts f;
  assert_ok(cucore_pointer_get_facts(p, &f));
  assert_ptr_equal(f.cupool, native);
  cucore_kernel *k = gpu_kernel(obj, "fill");
  cucore_args *a = NULL;
  assert_ok(cucore_args_create(k, &a));
  int v = 3, n = N;
  assert_ok(CUCORE_ARGS(a, p, v, n));
  cucore_launch_config c;
  config(&c, N);
  assert_ok(cucore_launch(k, &c, a));
  int last = 0;
  assert_ok(cucore_memcpy_dtoh(dev, &last, p + (N - 1) * sizeof(int), sizeof last, s));
  assert_ok(cucore_stream_synchronize(s));
  assert_int_equal(last, 3 + N - 1);
  cucore_mem_pool_stats st;
  assert_ok(cucore_mem_pool_get_stats(pool, &st));
  assert_int_equal(st.live_allocations, 1);
  assert_status(cucore_mem_pool_destroy(pool), CUCORE_IN_USE);
  assert_ok(cucore_mem_pool_free_async(cur, s, p)); /* the borrowed handle frees it */
  assert_ok(cucore_stream_synchronize(s));
  assert_status(cucore_mem_pool_destroy(pool), CUCORE_IN_USE);
  print_message("destroy of the current pool refused: %s\n", cucore_last_error());
  assert_contains(cucore_last_error(), "is the current pool of device");
  assert_ok(cucore_mem_pool_destroy(cur));
  assert_ok(cucore_device_set_mem_pool(dev, NULL));
  CUmemoryPool now = NULL, def = NULL;
  assert_int_equal(DRV(cuDeviceGetMemPool)(&now, 0), CUDA_SUCCESS);
  assert_int_equal(DRV(cuDeviceGetDefaultMemPool)(&def, 0), CUDA_SUCCESS);
  assert_ptr_equal(now, def);
  assert_ok(cucore_mem_pool_destroy(pool));
  assert_ok(cucore_args_destroy(a));
  assert_ok(cucore_kernel_destroy(k));
}

static void graph_memory_stats_and_trim(void **state) {
  (void)state;
  const size_t bytes = N * sizeof(int);
  cucore_kernel *k = gpu_kernel(obj, "fill");
  cucore_args *a = NULL;
  assert_ok(cucore_args_create(k, &a));
  cucore_graph *g = NULL;
  cucore_graph_node *alloc = NULL, *kern = NULL, *fr = NULL;
  cucore_devptr p = 0;
  assert_ok(cucore_graph_create(dev, &g));
  assert_ok(cucore_graph_add_mem_alloc_node(g, NULL, 0, bytes, &p, &alloc));
  int v = 1, n = N;
  assert_ok(CUCORE_ARGS(a, p, v, n));
  cucore_launch_config c;
  config(&c, N);
  c.stream = NULL;
  assert_ok(cucore_graph_add_kernel_node(g, &alloc, 1, k, &c, a, &kern));
  assert_ok(cucore_graph_add_mem_free_node(g, &kern, 1, p, &fr));
  cucore_graph_exec *x = NULL;
  assert_ok(cucore_graph_instantiate(g, 0, NULL, &x));
  assert_ok(cucore_device_reset_graph_mem_high_water(dev));
  assert_ok(cucore_graph_launch(x, s));
  assert_ok(cucore_stream_synchronize(s));
  cucore_graph_mem_stats gm;
  assert_ok(cucore_device_get_graph_mem_stats(dev, &gm));
  print_message("graph memory after a launch: used %llu (high %llu), reserved %llu (high %llu)\n",
                (unsigned long long)gm.used_current, (unsigned long long)gm.used_high,
                (unsigned long long)gm.reserved_current, (unsigned long long)gm.reserved_high);
  assert_true(gm.used_high >= bytes);
  assert_true(gm.reserved_high >= bytes);
  assert_true(gm.reserved_current >= gm.used_current);
  cuuint64_t drv = 0;
  assert_int_equal(DRV(cuDeviceGetGraphMemAttribute)(0, CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH, &drv),
                   CUDA_SUCCESS);
  assert_int_equal(drv, gm.reserved_high);
  assert_ok(cucore_graph_exec_destroy(x));
  assert_ok(cucore_graph_destroy(g));
  assert_ok(cucore_device_synchronize(dev));
  assert_ok(cucore_device_graph_mem_trim(dev));
  assert_ok(cucore_device_reset_graph_mem_high_water(dev));
  assert_ok(cucore_device_get_graph_mem_stats(dev, &gm));
  print_message("after destroy, trim and reset: used %llu (high %llu), reserved %llu (high "
                "%llu)\n",
                (unsigned long long)gm.used_current, (unsigned long long)gm.used_high,
                (unsigned long long)gm.reserved_current, (unsigned long long)gm.reserved_high);
  assert_true(gm.reserved_current < bytes); /* nothing uses it: trimmed */
  assert_int_equal(gm.used_high, gm.used_current);
  assert_ok(cucore_args_destroy(a));
  assert_ok(cucore_kernel_destroy(k));
}

int main(void) {
  if (!cucore_test_have_gpu()) return CUCORE_TEST_SKIP;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(current_pool_serves_alloc_async),
      cmocka_unit_test(graph_memory_stats_and_trim),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
