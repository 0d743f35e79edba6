/* gpu_memory_host.c -- host-side memory on a real GPU (label gpu): the pinned pool (reuse,
 * counters, async copies, kernels reading its mapped blocks, bounds at the size asked for,
 * wrong-pool and double frees, destroy with blocks out), registration of caller memory (flags,
 * device pointer, async copies, bounds, overlaps, unregister), and managed memory (prefetch to
 * the device and back, advice read back through the range attributes). */
#include "gpu_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static cucore_device *dev;
static cucore_stream *s;
static cucore_kernel *add_one;

static const char *src = "extern \"C\" __global__ void add_one(int *p, int n) {\n"
                         "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                         "  if (i < n) p[i] += 1;\n"
                         "}\n";

static int setup(void **state) {
  (void)state;
  if (cucore_device_open(0, &dev) != CUCORE_OK) return -1;
  if (cucore_stream_create(dev, CUCORE_STREAM_NON_BLOCKING, 0, &s) != CUCORE_OK) return -1;
  cucore_object *obj = gpu_compile(src, CUCORE_CODE_CUBIN, NULL, NULL);
  add_one = gpu_kernel(obj, "add_one");
  cucore_object_destroy(obj);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  cucore_kernel_destroy(add_one);
  cucore_stream_destroy(s);
  return cucore_device_close(dev) == CUCORE_OK ? 0 : -1;
}

/* Launches add_one over n ints at p (any address kernels can use) on the stream. */
static void run_add_one(cucore_devptr p, int n) {
  cucore_args *a = NULL;
  assert_ok(cucore_args_create(add_one, &a));
  assert_ok(cucore_args_push_ptr(a, p));
  assert_ok(cucore_args_push_i32(a, n));
  cucore_launch_config c;
  memset(&c, 0, sizeof c);
  c.grid[0] = (unsigned)(n + 255) / 256;
  c.block[0] = 256;
  c.stream = s;
  assert_ok(cucore_launch(add_one, &c, a));
  cucore_args_destroy(a);
}

static void pinned_pool_reuses_blocks(void **state) {
  (void)state;
  cucore_host_pool *pool = NULL, *other = NULL;
  assert_ok(cucore_host_pool_create(dev, NULL, &pool));
  assert_ok(cucore_host_pool_create(dev, NULL, &other));
  const size_t bytes = 1000000; /* a 1 MiB class block */
  unsigned char *a = NULL, *b = NULL;
  assert_ok(cucore_host_pool_alloc(pool, bytes, (void **)&a));
  assert_ok(cucore_host_pool_alloc(pool, bytes, (void **)&b));
  assert_int_equal((uintptr_t)a % 4096, 0);
  for (size_t i = 0; i < bytes; i++) a[i] = (unsigned char)(i * 13 + 1);
  cucore_devptr d = 0;
  assert_ok(cucore_mem_alloc(dev, bytes, &d));
  assert_ok(cucore_memcpy_htod(dev, d, a, bytes, s));
  assert_ok(cucore_memcpy_dtoh(dev, b, d, bytes, s));
  assert_ok(cucore_stream_synchronize(s));
  assert_memory_equal(a, b, bytes);
  /* Bounds are the size asked for, not the class's. */
  assert_status(cucore_memcpy_htod(dev, d, a + 8, bytes, s), CUCORE_OUT_OF_BOUNDS);
  assert_contains(cucore_last_error(), "1000000-byte pinned-pool host allocation");
  /* The facts: host memory the device can use at the same address. */
  cucore_pointer_facts f;
  assert_ok(cucore_pointer_get_facts(CUCORE_HOST_ADDR(a) + 100, &f));
  assert_int_equal(f.kind, CUCORE_MEM_PINNED_POOL);
  assert_int_equal(f.type, CUCORE_MEMTYPE_HOST);
  assert_int_equal(f.device_pointer, CUCORE_HOST_ADDR(a) + 100);
  assert_int_equal(f.size, bytes);
  /* A kernel writes into a mapped block directly. */
  int *ints = (int *)(void *)a;
  for (int i = 0; i < 1000; i++) ints[i] = i;
  run_add_one(CUCORE_HOST_ADDR(a), 1000);
  assert_ok(cucore_stream_synchronize(s));
  for (int i = 0; i < 1000; i++) assert_int_equal(ints[i], i + 1);
  /* Wrong pool, double free, destroy with blocks out. */
  assert_status(cucore_host_pool_free(other, a), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "a block of another pinned pool");
  assert_status(cucore_host_free(dev, a), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "cucore_host_pool_free");
  assert_status(cucore_host_pool_destroy(pool), CUCORE_IN_USE);
  assert_contains(cucore_last_error(), "2 blocks");
  assert_ok(cucore_host_pool_free(pool, a));
  assert_status(cucore_host_pool_free(pool, a), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "freed already");
  assert_ok(cucore_host_pool_free(pool, b));
  /* After warm-up the blocks come back: no new pinning. */
  cucore_host_pool_stats st;
  for (int i = 0; i < 100; i++) {
    assert_ok(cucore_host_pool_alloc(pool, bytes, (void **)&a));
    assert_ok(cucore_host_pool_free(pool, a));
  }
  assert_ok(cucore_host_pool_get_stats(pool, &st));
  print_message("pinned pool: %llu hits, %llu misses, %llu bytes cached, reserved high %llu\n",
                (unsigned long long)st.hits, (unsigned long long)st.misses,
                (unsigned long long)st.cached_bytes, (unsigned long long)st.reserved_high);
  assert_int_equal(st.misses, 2);
  assert_int_equal(st.hits, 100);
  assert_int_equal(st.in_use_blocks, 0);
  assert_int_equal(st.cached_blocks, 2);
  assert_ok(cucore_host_pool_trim(pool, 0));
  assert_ok(cucore_host_pool_get_stats(pool, &st));
  assert_int_equal(st.cached_bytes, 0);
  assert_int_equal(st.driver_frees, 2);
  assert_ok(cucore_mem_free(dev, d));
  assert_ok(cucore_host_pool_destroy(pool));
  assert_ok(cucore_host_pool_destroy(other));
  /* A total limit is an error with the numbers. */
  cucore_host_pool_props props = {.max_cached_bytes = 0, .max_total_bytes = 1 << 20};
  assert_ok(cucore_host_pool_create(dev, &props, &pool));
  assert_ok(cucore_host_pool_alloc(pool, 600000, (void **)&a));
  assert_status(cucore_host_pool_alloc(pool, 600000, (void **)&b), CUCORE_HOST_OUT_OF_MEMORY);
  assert_contains(cucore_last_error(), "asked for 585.9 KiB (600000 bytes");
  assert_contains(cucore_last_error(), "max_total_bytes is 1.0 MiB, so 384.0 KiB more fit");
  assert_ok(cucore_host_pool_free(pool, a));
  assert_ok(cucore_host_pool_destroy(pool));
}

static void registered_memory_is_checked_and_mapped(void **state) {
  (void)state;
  const size_t bytes = 1 << 20;
  int *buf = aligned_alloc(4096, bytes), *back = malloc(bytes);
  assert_non_null(buf);
  for (size_t i = 0; i < bytes / 4; i++) buf[i] = (int)i;
  assert_ok(cucore_host_register(dev, buf, bytes,
                                 CUCORE_HOST_REGISTER_PORTABLE | CUCORE_HOST_REGISTER_DEVICEMAP));
  assert_status(cucore_host_register(dev, buf + 16, 4096, 0), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "overlap");
  cucore_pointer_facts f;
  assert_ok(cucore_pointer_get_facts(CUCORE_HOST_ADDR(buf), &f));
  assert_int_equal(f.kind, CUCORE_MEM_REGISTERED);
  assert_int_equal(f.type, CUCORE_MEMTYPE_HOST);
  cucore_devptr dp = 0;
  assert_ok(cucore_host_get_device_pointer(dev, buf, &dp));
  print_message("registered host memory: host %p, device 0x%llx (%s)\n", (void *)buf,
                (unsigned long long)dp, dp == CUCORE_HOST_ADDR(buf) ? "the same" : "distinct");
  /* A kernel through the device address, then async copies from the registered range. */
  run_add_one(dp, (int)(bytes / 4));
  assert_ok(cucore_stream_synchronize(s));
  for (size_t i = 0; i < bytes / 4; i += 977) assert_int_equal(buf[i], (int)i + 1);
  cucore_devptr d = 0;
  assert_ok(cucore_mem_alloc(dev, bytes, &d));
  assert_ok(cucore_memcpy_htod(dev, d, buf, bytes, s));
  assert_ok(cucore_memcpy_dtoh(dev, back, d, bytes, s));
  assert_ok(cucore_stream_synchronize(s));
  assert_memory_equal(buf, back, bytes);
  assert_status(cucore_memcpy_dtoh(dev, buf + 1, d, bytes, s), CUCORE_OUT_OF_BOUNDS);
  assert_contains(cucore_last_error(), "registered host allocation");
  assert_status(cucore_host_unregister(dev, buf + 1), CUCORE_INVALID_ARGUMENT);
  assert_ok(cucore_host_unregister(dev, buf));
  assert_status(cucore_host_unregister(dev, buf), CUCORE_INVALID_ARGUMENT);
  /* Read-only registration, where the device has it. */
  int ro = 0;
  cucore_status st = cucore_host_register(dev, buf, bytes, CUCORE_HOST_REGISTER_READ_ONLY);
  if (st == CUCORE_OK) {
    ro = 1;
    assert_ok(cucore_memcpy_htod(dev, d, buf, bytes, NULL));
    assert_ok(cucore_host_unregister(dev, buf));
  } else {
    assert_int_equal(CUCORE_CODE(st), CUCORE_NOT_SUPPORTED);
  }
  print_message("read-only host registration: %s\n", ro ? "supported" : "not supported");
  assert_ok(cucore_mem_free(dev, d));
  free(buf);
  free(back);
}

static void managed_memory_moves_and_takes_advice(void **state) {
  (void)state;
  cucore_device_props props;
  assert_ok(cucore_device_get_props(0, &props));
  const int n = 1 << 20;
  cucore_devptr m = 0;
  if (!props.managed_memory) {
    assert_status(cucore_mem_alloc_managed(dev, n * 4, CUCORE_MANAGED_GLOBAL, &m),
                  CUCORE_NOT_SUPPORTED);
    return;
  }
  assert_ok(cucore_mem_alloc_managed(dev, (size_t)n * 4, CUCORE_MANAGED_GLOBAL, &m));
  int *h = (int *)(uintptr_t)m;
  for (int i = 0; i < n; i++) h[i] = 3 * i;
  cucore_location gpu = {CUCORE_LOCATION_DEVICE, 0}, host = {CUCORE_LOCATION_HOST, 0};
  assert_ok(cucore_mem_prefetch(m, (size_t)n * 4, gpu, s));
  run_add_one(m, n);
  assert_ok(cucore_mem_prefetch(m, (size_t)n * 4, host, s));
  assert_ok(cucore_stream_synchronize(s));
  for (int i = 0; i < n; i++)
    if (h[i] != 3 * i + 1) fail_msg("managed[%d] = %d, expected %d", i, h[i], 3 * i + 1);
  cucore_mem_range_info info;
  assert_ok(cucore_mem_range_get_info(m, (size_t)n * 4, &info));
  assert_int_equal(info.last_prefetch.type, CUCORE_LOCATION_HOST);
  assert_ok(cucore_mem_advise(m, (size_t)n * 4, CUCORE_ADVISE_READ_MOSTLY, gpu));
  assert_ok(cucore_mem_advise(m, (size_t)n * 4, CUCORE_ADVISE_PREFERRED_LOCATION, gpu));
  assert_ok(cucore_mem_advise(m, (size_t)n * 4, CUCORE_ADVISE_ACCESSED_BY, gpu));
  assert_ok(cucore_mem_range_get_info(m, (size_t)n * 4, &info));
  assert_int_equal(info.read_mostly, 1);
  assert_int_equal(info.preferred.type, CUCORE_LOCATION_DEVICE);
  assert_int_equal(info.preferred.id, 0);
  assert_true(info.accessed_by_count >= 1);
  assert_int_equal(info.accessed_by[0], 0);
  assert_ok(cucore_mem_advise(m, (size_t)n * 4, CUCORE_ADVISE_UNSET_READ_MOSTLY, gpu));
  assert_ok(cucore_mem_advise(m, (size_t)n * 4, CUCORE_ADVISE_UNSET_PREFERRED_LOCATION, gpu));
  assert_ok(cucore_mem_advise(m, (size_t)n * 4, CUCORE_ADVISE_UNSET_ACCESSED_BY, gpu));
  assert_ok(cucore_mem_range_get_info(m, (size_t)n * 4, &info));
  assert_int_equal(info.read_mostly, 0);
  assert_int_equal(info.preferred.type, CUCORE_LOCATION_NONE);
  assert_int_equal(info.accessed_by_count, 0);
  print_message("managed memory: %d ints prefetched to the GPU, incremented, back on the host: "
                "match; advice read back\n",
                n);
  /* Past the end, and on memory that is not managed. */
  assert_status(cucore_mem_prefetch(m + 4, (size_t)n * 4, gpu, s), CUCORE_OUT_OF_BOUNDS);
  cucore_devptr d = 0;
  assert_ok(cucore_mem_alloc(dev, 4096, &d));
  assert_status(cucore_mem_advise(d, 4096, CUCORE_ADVISE_READ_MOSTLY, gpu),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "managed memory");
  cucore_location bad = {CUCORE_LOCATION_DEVICE, 99};
  assert_status(cucore_mem_prefetch(m, 4096, bad, s), CUCORE_INVALID_DEVICE);
  assert_ok(cucore_mem_free(dev, d));
  assert_ok(cucore_mem_free(dev, m));
}

int main(void) {
  if (!cucore_test_have_gpu()) return CUCORE_TEST_SKIP;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(pinned_pool_reuses_blocks),
      cmocka_unit_test(registered_memory_is_checked_and_mapped),
      cmocka_unit_test(managed_memory_moves_and_takes_advice),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
