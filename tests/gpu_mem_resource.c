/* gpu_mem_resource.c -- memory resources on a real GPU (label gpu): the RMM-like user pool of
 * mres_user_pool.h (a slab from cuMemAlloc) installed as device 0's default: a kernel writes
 * memory from cucore_mem_alloc_async with strict pointer checks on, a copy back checks the
 * values, a copy past the end is refused, a DLPack export is read by a consumer through its
 * fields and a transfer's deleter gives the memory back to the pool; then cucore's own
 * resources: a stream-ordered pool (the device's default pool), virtual memory mapped per
 * allocation, and a pinned host pool written by a kernel through its host address. */
#include "gpu_support.h"
#include "mres_user_pool.h"

#include "memory/dlpack_v1.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 4096

static cucore_device *dev;
static cucore_stream *s;
static cucore_object *obj;
static cucore_kernel *k;

static const char *src = "extern \"C\" __global__ void fill(int *p, int n, int base) {\n"
                         "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                         "  if (i < n) p[i] = base + i;\n"
                         "}\n";

static int setup(void **state) {
  (void)state;
  if (gpu_group_open(src, &dev, &s, &obj) != 0) return -1;
  return cucore_object_get_kernel(obj, "fill", &k) == CUCORE_OK ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  cucore_kernel_destroy(k);
  return gpu_group_close(dev, s, obj);
}

/* A kernel writes base + i into N ints at p (its pointer checked strictly), a copy reads them
 * back on the stream. */
static void write_and_check(cucore_devptr p, int base) {
  cucore_args *a = NULL;
  assert_ok(cucore_args_create(k, &a));
  assert_ok(cucore_args_check_pointers(a, dev));
  assert_ok(cucore_args_push_ptr(a, p));
  assert_ok(cucore_args_push_i32(a, N));
  assert_ok(cucore_args_push_i32(a, base));
  cucore_launch_config c;
  memset(&c, 0, sizeof c);
  c.grid[0] = N / 256;
  c.block[0] = 256;
  c.stream = s;
  assert_ok(cucore_launch(k, &c, a));
  cucore_args_destroy(a);
  int *got = malloc(sizeof(int) * N);
  assert_ok(cucore_memcpy_dtoh(dev, got, p, sizeof(int) * N, s));
  assert_ok(cucore_stream_synchronize(s));
  for (int i = 0; i < N; i++)
    if (got[i] != base + i) fail_msg("element %d is %d, expected %d", i, got[i], base + i);
  free(got);
}

static void a_user_pool_serves_the_device(void **state) {
  (void)state;
  user_pool up;
  assert_int_equal(DRV(cuCtxSetCurrent)(dev->ctx), CUDA_SUCCESS);
  assert_true(up_init(&up, (uint64_t)64 << 20));
  cucore_mem_resource_props props = {.device = 0, .name = "user pool"};
  cucore_mem_resource *res = NULL;
  assert_ok(cucore_mem_resource_create(&up_ops, &up, &props, &res));
  assert_ok(cucore_device_set_mem_resource(dev, res));
  cucore_devptr p = 0;
  assert_ok(cucore_mem_alloc_async(s, sizeof(int) * N, &p));
  assert_true(p >= up.slab && p < up.slab + up.slab_size);
  write_and_check(p, 1000);
  int past[2] = {0, 0};
  assert_status(cucore_memcpy_dtoh(dev, past, p + sizeof(int) * (N - 1), 8, s),
                CUCORE_OUT_OF_BOUNDS);
  /* DLPack: a consumer reads the export through its fields and the driver alone. */
  cucore_tensor_desc t;
  memset(&t, 0, sizeof t);
  t.ndim = 1;
  t.shape[0] = N;
  t.compact = 1;
  t.dtype.code = CUCORE_DTYPE_INT;
  t.dtype.bits = 32;
  t.dtype.lanes = 1;
  void *mtp = NULL;
  assert_ok(cucore_dlpack_export(p, &t, CUCORE_DLPACK_TRANSFER, &mtp));
  DLManagedTensor *mt = mtp;
  assert_int_equal(mt->dl_tensor.device.device_type, kDLCUDA);
  assert_int_equal(mt->dl_tensor.device.device_id, 0);
  int last = 0;
  assert_int_equal(DRV(cuMemcpyDtoH)(&last,
                                     (CUdeviceptr)(uintptr_t)mt->dl_tensor.data +
                                         sizeof(int) * (N - 1),
                                     sizeof last),
                   CUDA_SUCCESS);
  assert_int_equal(last, 1000 + N - 1);
  mt->deleter(mt); /* gives it back to the pool */
  assert_int_equal(up.deallocs, 1);
  assert_int_equal(up.last_bytes, sizeof(int) * N);
  /* Synchronous allocations too; the device was asked once for the slab. */
  assert_ok(cucore_mem_alloc(dev, sizeof(int) * N, &p));
  write_and_check(p, -7);
  assert_ok(cucore_mem_free(dev, p));
  cucore_mem_resource_stats st;
  assert_ok(cucore_mem_resource_get_stats(res, &st));
  assert_int_equal(st.live_allocations, 0);
  assert_int_equal(up.allocs, 2);
  assert_ok(cucore_device_set_mem_resource(dev, NULL));
  assert_ok(cucore_mem_resource_destroy(res));
  assert_int_equal(up.destroyed, 1);
  up_fini(&up);
}

static void cucores_own_resources(void **state) {
  (void)state;
  /* The device's default stream-ordered pool. */
  cucore_mem_pool *pool = NULL;
  assert_ok(cucore_mem_pool_default(dev, &pool));
  cucore_mem_resource *r = NULL;
  assert_ok(cucore_mem_resource_from_pool(pool, &r));
  assert_ok(cucore_device_set_mem_resource(dev, r));
  cucore_devptr p = 0;
  assert_ok(cucore_mem_alloc_async(s, sizeof(int) * N, &p));
  write_and_check(p, 5);
  assert_ok(cucore_mem_free_async(s, p));
  assert_ok(cucore_mem_alloc(dev, sizeof(int) * N, &p)); /* stream NULL: ready at once */
  write_and_check(p, 6);
  assert_ok(cucore_mem_free(dev, p));
  assert_ok(cucore_device_set_mem_resource(dev, NULL));
  assert_ok(cucore_mem_resource_destroy(r));
  assert_ok(cucore_mem_pool_destroy(pool));
  /* Virtual memory, one mapping per allocation. */
  assert_ok(cucore_mem_resource_vmm(dev, &r));
  assert_ok(cucore_device_set_mem_resource(dev, r));
  assert_ok(cucore_mem_alloc_async(s, sizeof(int) * N, &p));
  write_and_check(p, 77);
  assert_ok(cucore_mem_free_async(s, p));
  assert_ok(cucore_device_set_mem_resource(dev, NULL));
  assert_ok(cucore_mem_resource_destroy(r));
  /* A pinned host pool: a kernel writes it, the host reads it. */
  cucore_host_pool *hp = NULL;
  assert_ok(cucore_host_pool_create(dev, NULL, &hp));
  assert_ok(cucore_mem_resource_from_host_pool(hp, &r));
  assert_ok(cucore_mem_resource_allocate(r, dev, s, sizeof(int) * N, &p));
  write_and_check(p, 123);
  assert_int_equal(((int *)(uintptr_t)p)[N - 1], 123 + N - 1);
  assert_ok(cucore_mem_resource_deallocate(r, s, p));
  assert_ok(cucore_mem_resource_destroy(r));
  assert_ok(cucore_host_pool_destroy(hp));
}

int main(void) {
  if (!cucore_test_have_gpu()) return CUCORE_TEST_SKIP;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_user_pool_serves_the_device),
      cmocka_unit_test(cucores_own_resources),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
