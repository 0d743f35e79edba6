/* test_device_mem_pool.c -- the device's current pool and its graph memory on the fake driver
 * (tests/fake/fake_pools.c): cucore_device_set_mem_pool makes a pool current, after which
 * cucore_mem_alloc_async's allocations are recorded as that pool's (pointer facts, live count,
 * the free on that pool, the destroy refused while they live); destroying a pool that is current
 * is refused by name; NULL restores the default; a handle from cucore_device_get_mem_pool never
 * owns the pool but counts for it; pools that cannot be current are refused by name; the graph
 * memory counters, the reset of their high-water marks and the trim. */
#include "support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memory/memory.h"

static cucore_device *dev;
static cucore_stream *s;

static int open_dev(void **state) {
  (void)state;
  if (cucore_device_open(0, &dev) != CUCORE_OK) return -1;
  return cucore_stream_create(dev, CUCORE_STREAM_NON_BLOCKING, 0, &s) == CUCORE_OK ? 0 : -1;
}
static int close_dev(void **state) {
  (void)state;
  cucore_stream_destroy(s);
  return cucore_device_close(dev) == CUCORE_OK ? 0 : -1;
}

static void *native_of(cucore_mem_pool *pool) {
  void *n = NULL;
  assert_ok(cucore_mem_pool_get_native(pool, &n));
  return n;
}

static void current_pool_serves_alloc_async(void **state) {
  (void)state;
  cucore_mem_pool *def = NULL, *cur = NULL, *pool = NULL;
  assert_ok(cucore_mem_pool_default(dev, &def));
  assert_ok(cucore_device_get_mem_pool(dev, &cur));
  assert_ptr_equal(native_of(cur), native_of(def)); /* nothing set yet: the default */
  assert_ok(cucore_mem_pool_destroy(cur));
  assert_ok(cucore_mem_pool_create(dev, NULL, &pool));
  assert_ok(cucore_device_set_mem_pool(dev, pool));
  cucore_devptr p = 0;
  assert_ok(cucore_mem_alloc_async(s, 4096, &p));
  cucore_pointer_facts f;
  assert_ok(cucore_pointer_get_facts(p, &f));
  assert_int_equal(f.kind, CUCORE_MEM_POOL);
  assert_ptr_equal(f.cupool, native_of(pool));
  cucore_mem_pool_stats st;
  assert_ok(cucore_mem_pool_get_stats(pool, &st));
  assert_int_equal(st.live_allocations, 1);
  assert_int_equal(st.used_current, 4096); /* the driver allocated it from the pool too */
  /* The default pool cannot free it; the pool it came from can. */
  assert_status(cucore_mem_pool_free_async(def, s, p), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "came from a pool created by cucore_mem_pool_create");
  /* A handle on the current pool does not own it, but its allocations count for it. */
  assert_ok(cucore_device_get_mem_pool(dev, &cur));
  assert_ptr_equal(native_of(cur), native_of(pool));
  cucore_devptr q = 0;
  assert_ok(cucore_mem_pool_alloc_async(cur, s, 100, &q));
  assert_ok(cucore_mem_pool_get_stats(pool, &st));
  assert_int_equal(st.live_allocations, 2);
  assert_ok(cucore_mem_pool_free_async(pool, s, q)); /* either handle frees it */
  assert_ok(cucore_mem_pool_destroy(cur));           /* the pool stays */
  assert_ok(cucore_mem_pool_free_async(pool, s, p));
  /* Current: its destroy is refused by name. */
  assert_status(cucore_mem_pool_destroy(pool), CUCORE_IN_USE);
  assert_contains(cucore_last_error(), "is the current pool of device 0 "
                                       "(cucore_device_set_mem_pool)");
  assert_contains(cucore_last_error(), "cucore_device_set_mem_pool(dev, NULL)");
  assert_ok(cucore_device_set_mem_pool(dev, NULL));
  assert_ok(cucore_device_get_mem_pool(dev, &cur));
  assert_ptr_equal(native_of(cur), native_of(def));
  assert_ok(cucore_mem_pool_destroy(cur));
  assert_ok(cucore_mem_pool_destroy(pool));
  /* Back on the default pool: recorded as the driver's current pool. */
  assert_ok(cucore_mem_alloc_async(s, 64, &p));
  assert_ok(cucore_pointer_get_facts(p, &f));
  assert_ptr_equal(f.cupool, native_of(def));
  assert_ok(cucore_mem_pool_free_async(def, s, p));
  assert_ok(cucore_mem_pool_destroy(def));
}

static void pools_that_cannot_be_current_are_named(void **state) {
  (void)state;
  cucore_mem_pool_props props = {.flags = CUCORE_POOL_PINNED_HOST};
  cucore_mem_pool *pinned = NULL;
  assert_ok(cucore_mem_pool_create(dev, &props, &pinned));
  assert_status(cucore_device_set_mem_pool(dev, pinned), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "hands out stream-ordered pinned host pool memory");
  assert_contains(cucore_last_error(), "cucore_mem_pool_alloc_async");
  assert_ok(cucore_mem_pool_destroy(pinned));
  struct cucore_mem_pool imported;
  memset(&imported, 0, sizeof imported);
  cc_handle_init(&imported, CC_KIND_MEM_POOL);
  imported.dev = dev;
  imported.imported = 1;
  assert_status(cucore_device_set_mem_pool(dev, &imported), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "imported from another process");
  assert_status(cucore_device_set_mem_pool(NULL, NULL), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_device_get_mem_pool(dev, NULL), CUCORE_INVALID_ARGUMENT);
}

static void graph_memory_counters_reset_and_trim(void **state) {
  (void)state;
  cucore_graph_mem_stats g;
  assert_ok(cucore_device_get_graph_mem_stats(dev, &g));
  assert_int_equal(g.used_current, 1u << 20);
  assert_int_equal(g.used_high, 3u << 20);
  assert_int_equal(g.reserved_current, 4u << 20);
  assert_int_equal(g.reserved_high, 6u << 20);
  assert_ok(cucore_device_reset_graph_mem_high_water(dev));
  assert_ok(cucore_device_get_graph_mem_stats(dev, &g));
  assert_int_equal(g.used_high, g.used_current);
  assert_int_equal(g.reserved_high, 4u << 20);
  assert_ok(cucore_device_graph_mem_trim(dev));
  assert_ok(cucore_device_get_graph_mem_stats(dev, &g));
  assert_int_equal(g.reserved_current, g.used_current);
  assert_status(cucore_device_get_graph_mem_stats(dev, NULL), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_device_graph_mem_trim(NULL), CUCORE_INVALID_ARGUMENT);
}

int main(void) {
  setenv("CUCORE_LIBCUDA", CUCORE_FAKE_DRIVER_PATH, 1);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(current_pool_serves_alloc_async),
      cmocka_unit_test(pools_that_cannot_be_current_are_named),
      cmocka_unit_test(graph_memory_counters_reset_and_trim),
  };
  return cmocka_run_group_tests(tests, open_dev, close_dev);
}
