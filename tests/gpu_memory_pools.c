/* gpu_memory_pools.c -- stream-ordered allocation on a real GPU (label gpu): the default pool
 * and created pools (release threshold, reuse policy, maximum size), statistics and their
 * high-water marks, trimming, frees on the wrong pool or twice, destroying a pool with live
 * allocations, out-of-memory messages, pool and peer access. */
#include "gpu_support.h"
#include "runtime/runtime.h" /* DRV(), cc_drv: the driver's own answers to compare with */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static cucore_device *dev;
static cucore_stream *s;

static int setup(void **state) {
  (void)state;
  if (cucore_device_open(0, &dev) != CUCORE_OK) return -1;
  return cucore_stream_create(dev, CUCORE_STREAM_NON_BLOCKING, 0, &s) == CUCORE_OK ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  cucore_stream_destroy(s);
  return cucore_device_close(dev) == CUCORE_OK ? 0 : -1;
}

static void default_pool_serves_an_allocation_per_step(void **state) {
  (void)state;
  cucore_mem_pool *dp = NULL;
  assert_ok(cucore_mem_pool_default(dev, &dp));
  /* Keep freed memory reserved between steps (the setting an alloc-per-step loop wants). */
  assert_ok(cucore_mem_pool_set_attr(dp, CUCORE_POOL_RELEASE_THRESHOLD, UINT64_MAX));
  uint32_t *seen = NULL;
  assert_ok(cucore_host_alloc(dev, 1000 * 4, (void **)&seen));
  const size_t bytes = 1 << 20;
  for (int i = 0; i < 1000; i++) {
    cucore_devptr p = 0;
    assert_ok(cucore_mem_alloc_async(s, bytes, &p));
    assert_ok(cucore_memset_d32(dev, p, (uint32_t)i * 7u, bytes / 4, s));
    assert_ok(cucore_memcpy_dtoh(dev, &seen[i], p + bytes - 4, 4, s));
    assert_ok(cucore_mem_free_async(s, p));
  }
  assert_ok(cucore_stream_synchronize(s));
  for (int i = 0; i < 1000; i++)
    if (seen[i] != (uint32_t)i * 7u) fail_msg("step %d read %u, expected %u", i, seen[i], i * 7u);
  cucore_mem_pool_stats st;
  assert_ok(cucore_mem_pool_get_stats(dp, &st));
  print_message("default pool after 1000 alloc/free steps of 1 MiB: reserved %llu (high %llu), "
                "used %llu (high %llu); 1000 steps match\n",
                (unsigned long long)st.reserved_current, (unsigned long long)st.reserved_high,
                (unsigned long long)st.used_current, (unsigned long long)st.used_high);
  assert_int_equal(st.used_current, 0);
  assert_true(st.used_high >= bytes);
  assert_true(st.reserved_current >= bytes); /* kept by the threshold */
  assert_int_equal(st.release_threshold, UINT64_MAX);
  assert_int_equal(st.live_allocations, 0); /* default pools are not counted */
  /* The driver agrees with the stats, attribute by attribute. */
  uint64_t v = 0;
  assert_ok(cucore_mem_pool_get_attr(dp, CUCORE_POOL_RESERVED_CURRENT, &v));
  assert_int_equal(v, st.reserved_current);
  assert_ok(cucore_mem_pool_get_attr(dp, CUCORE_POOL_REUSE_ALLOW_OPPORTUNISTIC, &v));
  assert_int_equal(v, 1);
  /* Reset the marks; trim gives the reserve back. */
  assert_ok(cucore_mem_pool_reset_high_water(dp));
  assert_ok(cucore_mem_pool_get_stats(dp, &st));
  assert_int_equal(st.used_high, 0);
  uint64_t before_trim = st.reserved_current;
  assert_ok(cucore_mem_pool_trim(dp, 0));
  assert_ok(cucore_mem_pool_get_stats(dp, &st));
  print_message("trim to 0: reserved %llu -> %llu bytes\n", (unsigned long long)before_trim,
                (unsigned long long)st.reserved_current);
  assert_true(st.reserved_current < bytes); /* nothing is in use: the reserve went back */
  assert_ok(cucore_mem_pool_set_attr(dp, CUCORE_POOL_RELEASE_THRESHOLD, 0));
  /* The native handle is the driver's default pool. */
  void *native = NULL;
  CUmemoryPool drv = NULL;
  assert_ok(cucore_mem_pool_get_native(dp, &native));
  int cudev = 0;
  assert_ok(cucore_device_get_native(dev, NULL, &cudev));
  assert_int_equal(DRV(cuDeviceGetDefaultMemPool)(&drv, (CUdevice)cudev), CUDA_SUCCESS);
  assert_ptr_equal(native, drv);
  assert_ok(cucore_mem_pool_destroy(dp)); /* the handle only */
  assert_ok(cucore_host_free(dev, seen));
}

static void created_pools_keep_their_allocations_apart(void **state) {
  (void)state;
  cucore_mem_pool_props props;
  memset(&props, 0, sizeof props);
  props.release_threshold = 64u << 20;
  props.reuse_off = CUCORE_POOL_NO_REUSE_OPPORTUNISTIC;
  cucore_mem_pool *pool = NULL, *dp = NULL;
  assert_ok(cucore_mem_pool_create(dev, &props, &pool));
  assert_ok(cucore_mem_pool_default(dev, &dp));
  uint64_t v = 0;
  assert_ok(cucore_mem_pool_get_attr(pool, CUCORE_POOL_RELEASE_THRESHOLD, &v));
  assert_int_equal(v, 64u << 20);
  assert_ok(cucore_mem_pool_get_attr(pool, CUCORE_POOL_REUSE_ALLOW_OPPORTUNISTIC, &v));
  assert_int_equal(v, 0);
  assert_ok(cucore_mem_pool_get_attr(pool, CUCORE_POOL_REUSE_FOLLOW_EVENT_DEPENDENCIES, &v));
  assert_int_equal(v, 1);
  cucore_devptr a = 0, b = 0, c = 0;
  assert_ok(cucore_mem_pool_alloc_async(pool, s, 1000, &a));
  assert_ok(cucore_mem_pool_alloc_async(pool, s, 2000, &b));
  assert_ok(cucore_mem_pool_alloc_async(pool, s, 3000, &c));
  cucore_mem_pool_stats st;
  assert_ok(cucore_mem_pool_get_stats(pool, &st));
  assert_int_equal(st.live_allocations, 3);
  assert_int_equal(st.live_bytes, 6000);
  cucore_pointer_facts f;
  assert_ok(cucore_pointer_get_facts(b + 10, &f));
  assert_int_equal(f.kind, CUCORE_MEM_POOL);
  void *native = NULL;
  assert_ok(cucore_mem_pool_get_native(pool, &native));
  assert_ptr_equal(f.cupool, native);
  assert_int_equal(f.offset, 10);
  /* Destroying a pool with live allocations is refused, naming them. */
  assert_status(cucore_mem_pool_destroy(pool), CUCORE_IN_USE);
  assert_contains(cucore_last_error(), "3 live allocations");
  /* Wrong pool, wrong free, then the right ones. */
  assert_status(cucore_mem_pool_free_async(dp, s, a), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "not from the default pool of device 0");
  assert_status(cucore_mem_free(dev, a), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "cucore_mem_free_async");
  assert_ok(cucore_mem_pool_free_async(pool, s, a));
  assert_status(cucore_mem_pool_free_async(pool, s, a), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "freed already");
  assert_ok(cucore_mem_free_async(s, b)); /* the generic free knows the pool too */
  assert_status(cucore_mem_pool_free_async(pool, s, c + 8), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "8 bytes inside");
  assert_ok(cucore_mem_pool_free_async(pool, s, c));
  assert_ok(cucore_mem_pool_get_stats(pool, &st));
  assert_int_equal(st.live_allocations, 0);
  assert_ok(cucore_stream_synchronize(s));
  /* A pool allocation copied on another stream is bounds-checked like any. */
  assert_ok(cucore_mem_pool_alloc_async(pool, s, 4096, &a));
  static char host[8192];
  assert_status(cucore_memcpy_htod(dev, a, host, 4097, s), CUCORE_OUT_OF_BOUNDS);
  assert_contains(cucore_last_error(), "4096-byte stream-ordered pool allocation");
  assert_ok(cucore_mem_pool_free_async(pool, s, a));
  assert_ok(cucore_stream_synchronize(s));
  assert_ok(cucore_mem_pool_destroy(pool));
  assert_ok(cucore_mem_pool_destroy(dp));
  /* Attributes that cannot be set. */
  assert_ok(cucore_mem_pool_default(dev, &dp));
  assert_status(cucore_mem_pool_set_attr(dp, CUCORE_POOL_RESERVED_CURRENT, 0),
                CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_mem_pool_set_attr(dp, CUCORE_POOL_RESERVED_HIGH, 7),
                CUCORE_INVALID_ARGUMENT);
  assert_ok(cucore_mem_pool_destroy(dp));
}

static void maximum_size_and_out_of_memory(void **state) {
  (void)state;
  cucore_mem_pool_props props;
  memset(&props, 0, sizeof props);
  props.max_size = 64u << 20;
  cucore_mem_pool *pool = NULL;
  if (cc_drv.version < 12020) {
    assert_status(cucore_mem_pool_create(dev, &props, &pool), CUCORE_DRIVER_TOO_OLD);
    print_message("driver %d: max_size refused as too old (CUDA 12.2 needed)\n", cc_drv.version);
  } else {
    assert_ok(cucore_mem_pool_create(dev, &props, &pool));
    cucore_devptr a = 0, b = 0;
    assert_ok(cucore_mem_pool_alloc_async(pool, s, 32u << 20, &a));
    cucore_status st = cucore_mem_pool_alloc_async(pool, s, 48u << 20, &b);
    print_message("a 48 MiB allocation beyond a 64 MiB pool's maximum: %s: %s\n",
                  cucore_status_name(st), cucore_last_error());
    assert_int_equal(CUCORE_CODE(st), CUCORE_DEVICE_OUT_OF_MEMORY);
    assert_int_equal(b, 0);
    assert_contains(cucore_last_error(), "asked for 48.0 MiB");
    assert_contains(cucore_last_error(), "the pool holds");
    assert_ok(cucore_mem_pool_free_async(pool, s, a));
    assert_ok(cucore_stream_synchronize(s));
    assert_ok(cucore_mem_pool_destroy(pool));
  }
  /* More than the device has: the message gives the request and what is free. */
  size_t free_b = 0, total_b = 0;
  assert_ok(cucore_device_get_mem_info(dev, &free_b, &total_b));
  cucore_devptr p = 0;
  assert_status(cucore_mem_alloc_async(s, total_b * 2, &p), CUCORE_DEVICE_OUT_OF_MEMORY);
  assert_contains(cucore_last_error(), "free of");
  assert_contains(cucore_last_error(), "cuMemGetInfo");
  assert_int_equal(p, 0);
  char want[64];
  snprintf(want, sizeof want, "(%zu bytes) on device 0", total_b * 2);
  assert_contains(cucore_last_error(), want); /* the request, in bytes */
  print_message("out of memory: %s\n", cucore_last_error());
  assert_status(cucore_mem_alloc(dev, total_b * 2, &p), CUCORE_DEVICE_OUT_OF_MEMORY);
  assert_contains(cucore_last_error(), "cucore_mem_alloc asked for");
  assert_contains(cucore_last_error(), want);
  assert_contains(cucore_last_error(), "free of");
  /* Sizes that are negative numbers are refused before the driver. */
  int n = -1;
  assert_status(cucore_mem_alloc_async(s, (size_t)n, &p), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "-1 as a signed number");
  assert_ok(cucore_stream_synchronize(s)); /* the stream is still healthy */
}

static void pool_and_peer_access(void **state) {
  (void)state;
  int can = 0;
  assert_ok(cucore_device_can_access_peer(dev, dev, &can));
  assert_int_equal(can, 1);
  assert_status(cucore_device_enable_peer_access(dev, dev), CUCORE_NOT_SUPPORTED);
  cucore_mem_pool *pool = NULL;
  assert_ok(cucore_mem_pool_create(dev, NULL, &pool));
  cucore_access acc = CUCORE_ACCESS_NONE;
  assert_ok(cucore_mem_pool_get_access(pool, dev, &acc));
  assert_int_equal(acc, CUCORE_ACCESS_READWRITE);
  assert_ok(cucore_mem_pool_set_access(pool, dev, CUCORE_ACCESS_READWRITE));
  assert_status(cucore_mem_pool_set_access(pool, dev, CUCORE_ACCESS_READ), CUCORE_INVALID_ARGUMENT);
  int count = 0;
  assert_ok(cucore_device_get_count(&count));
  if (count >= 2) {
    cucore_device *d1 = NULL;
    assert_ok(cucore_device_open(1, &d1));
    assert_ok(cucore_device_can_access_peer(d1, dev, &can));
    print_message("device 1 can access device 0: %d\n", can);
    const size_t n = 1 << 20;
    cucore_devptr a = 0, b = 0;
    assert_ok(cucore_mem_alloc(dev, n, &a));
    assert_ok(cucore_mem_alloc(d1, n, &b));
    assert_ok(cucore_memset_d8(dev, a, 0x3c, n, NULL));
    assert_ok(cucore_memcpy_peer(d1, b, dev, a, n, NULL)); /* works with or without access */
    unsigned char *h = malloc(n);
    assert_ok(cucore_memcpy_dtoh(d1, h, b, n, NULL));
    for (size_t i = 0; i < n; i += 4097) assert_int_equal(h[i], 0x3c);
    assert_status(cucore_memcpy_peer(d1, b, dev, b, n, NULL), CUCORE_INVALID_ARGUMENT);
    assert_contains(cucore_last_error(), "not on device 0");
    if (can) {
      assert_ok(cucore_device_enable_peer_access(d1, dev));
      assert_ok(cucore_device_enable_peer_access(d1, dev)); /* twice is fine */
      assert_ok(cucore_pointer_check_access(d1, a, n));
      assert_ok(cucore_mem_pool_set_access(pool, d1, CUCORE_ACCESS_READWRITE));
      assert_ok(cucore_mem_pool_get_access(pool, d1, &acc));
      assert_int_equal(acc, CUCORE_ACCESS_READWRITE);
      assert_ok(cucore_device_disable_peer_access(d1, dev));
    }
    free(h);
    assert_ok(cucore_mem_free(dev, a));
    assert_ok(cucore_mem_free(d1, b));
    assert_ok(cucore_device_close(d1));
  } else {
    print_message("one GPU: peer copies and access between devices not exercised here\n");
  }
  assert_ok(cucore_mem_pool_destroy(pool));
}

int main(void) {
  if (!cucore_test_have_gpu()) return CUCORE_TEST_SKIP;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(default_pool_serves_an_allocation_per_step),
      cmocka_unit_test(created_pools_keep_their_allocations_apart),
      cmocka_unit_test(maximum_size_and_out_of_memory),
      cmocka_unit_test(pool_and_peer_access),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
