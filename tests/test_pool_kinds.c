/* test_pool_kinds.c -- pinned host and managed stream-ordered pools on the fake driver
 * (tests/fake/fake_pools.c): their allocations recorded as CUCORE_MEM_POOL_PINNED and
 * CUCORE_MEM_POOL_MANAGED (pointer facts, host reads and writes, bounds checks, copies both ways,
 * the free on the right pool), the driver's properties cucore asks for (allocation type,
 * location, handle types, the device's access to a pinned pool), IPC export of a NUMA-node pool
 * and the refusal for a HOST one, settings that do not go together refused by name, and drivers
 * too old for a kind refused with the version. */
#include "support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* The driver's properties of a pool handle (the fake's pool begins with them). */
static CUmemPoolProps props_of(cucore_mem_pool *pool) {
  void *native = NULL;
  assert_ok(cucore_mem_pool_get_native(pool, &native));
  CUmemPoolProps p;
  memcpy(&p, native, sizeof p);
  return p;
}

static void pinned_pool_memory_is_host_memory(void **state) {
  (void)state;
  cucore_mem_pool_props props = {.flags = CUCORE_POOL_PINNED_HOST};
  cucore_mem_pool *pool = NULL;
  assert_ok(cucore_mem_pool_create(dev, &props, &pool));
  CUmemPoolProps cp = props_of(pool);
  assert_int_equal(cp.allocType, CU_MEM_ALLOCATION_TYPE_PINNED);
  assert_int_equal(cp.location.type, CU_MEM_LOCATION_TYPE_HOST);
  assert_int_equal(cp.handleTypes, CU_MEM_HANDLE_TYPE_NONE);
  cucore_mem_kind kind = CUCORE_MEM_UNKNOWN;
  assert_ok(cucore_mem_pool_get_kind(pool, &kind));
  assert_int_equal(kind, CUCORE_MEM_POOL_PINNED);
  cucore_access acc = CUCORE_ACCESS_NONE; /* the pool's device was given read-write access */
  assert_ok(cucore_mem_pool_get_access(pool, dev, &acc));
  assert_int_equal(acc, CUCORE_ACCESS_READWRITE);
  cucore_devptr p = 0;
  assert_ok(cucore_mem_pool_alloc_async(pool, s, 256, &p));
  cucore_pointer_facts f;
  assert_ok(cucore_pointer_get_facts(p + 16, &f));
  assert_int_equal(f.kind, CUCORE_MEM_POOL_PINNED);
  assert_int_equal(f.type, CUCORE_MEMTYPE_HOST);
  assert_ptr_equal(f.host_pointer, (void *)(uintptr_t)(p + 16));
  assert_int_equal(f.size, 256);
  void *native = NULL;
  assert_ok(cucore_mem_pool_get_native(pool, &native));
  assert_ptr_equal(f.cupool, native);
  assert_string_equal(cucore_mem_kind_name(f.kind), "stream-ordered pinned host pool");
  /* The host writes it directly; copies read it back both ways. */
  unsigned char *h = (unsigned char *)(uintptr_t)p;
  for (int i = 0; i < 256; i++) h[i] = (unsigned char)i;
  unsigned char back[256];
  assert_ok(cucore_memcpy_dtoh(dev, back, p, sizeof back, s));
  assert_ok(cucore_stream_synchronize(s));
  assert_memory_equal(back, h, sizeof back);
  memset(back, 7, sizeof back);
  assert_ok(cucore_memcpy_htod(dev, p, back, sizeof back, s));
  assert_ok(cucore_stream_synchronize(s));
  assert_int_equal(h[200], 7);
  /* Bounds at the size asked for. */
  assert_status(cucore_memcpy_dtoh(dev, back, p + 128, 256, s), CUCORE_OUT_OF_BOUNDS);
  assert_contains(cucore_last_error(), "stream-ordered pinned host pool");
  /* Strict kernel pointer checks take it; a device pool cannot free it. */
  assert_ok(cucore_pointer_check_access(dev, p, 256));
  cucore_mem_pool *other = NULL;
  assert_ok(cucore_mem_pool_create(dev, NULL, &other));
  assert_status(cucore_mem_pool_free_async(other, s, p), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "came from a pinned host pool created by");
  assert_status(cucore_mem_pool_destroy(pool), CUCORE_IN_USE);
  assert_ok(cucore_mem_pool_free_async(pool, s, p));
  assert_ok(cucore_mem_pool_destroy(other));
  assert_ok(cucore_mem_pool_destroy(pool));
}

static void numa_pool_is_shareable_host_pool_is_not(void **state) {
  (void)state;
  cucore_mem_pool_props props = {.flags = CUCORE_POOL_PINNED_HOST | CUCORE_POOL_IPC,
                                 .location = CUCORE_POOL_LOC_HOST_NUMA};
  cucore_mem_pool *pool = NULL;
  assert_ok(cucore_mem_pool_create(dev, &props, &pool));
  CUmemPoolProps cp = props_of(pool);
  assert_int_equal(cp.location.type, CU_MEM_LOCATION_TYPE_HOST_NUMA);
  assert_int_equal(cp.location.id, 0);
  assert_int_equal(cp.handleTypes, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
  int fd = -1;
  assert_ok(cucore_mem_pool_export_fd(pool, &fd));
  assert_true(fd >= 0);
  close(fd);
  /* An allocation of it is described for another process. */
  cucore_devptr p = 0;
  assert_ok(cucore_mem_pool_alloc_async(pool, s, 64, &p));
  assert_ok(cucore_mem_pool_free_async(pool, s, p));
  assert_ok(cucore_mem_pool_destroy(pool));
  /* A HOST pool cannot be shared: refused before the driver's bare INVALID_VALUE. */
  props.location = CUCORE_POOL_LOC_HOST;
  assert_status(cucore_mem_pool_create(dev, &props, &pool), CUCORE_INVALID_ARGUMENT);
  assert_null(pool);
  assert_contains(cucore_last_error(), "CUCORE_POOL_IPC for a pinned host pool at "
                                       "CUCORE_POOL_LOC_HOST");
  /* A NUMA node the host lacks is the driver's refusal. */
  props.location = CUCORE_POOL_LOC_HOST_NUMA;
  props.location_id = 3;
  assert_status(cucore_mem_pool_create(dev, &props, &pool), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "cuMemPoolCreate");
  assert_contains(cucore_last_error(), "pinned host memory at CUCORE_POOL_LOC_HOST_NUMA 3");
}

static void managed_pool_has_a_preferred_location(void **state) {
  (void)state;
  cucore_mem_pool_props props = {.flags = CUCORE_POOL_MANAGED};
  cucore_mem_pool *pool = NULL;
  assert_ok(cucore_mem_pool_create(dev, &props, &pool));
  CUmemPoolProps cp = props_of(pool);
  assert_int_equal(cp.allocType, CU_MEM_ALLOCATION_TYPE_MANAGED);
  assert_int_equal(cp.location.type, CU_MEM_LOCATION_TYPE_NONE);
  assert_ok(cucore_mem_pool_destroy(pool));
  const struct {
    cucore_pool_location loc;
    CUmemLocationType type;
  } rows[] = {{CUCORE_POOL_LOC_DEVICE, CU_MEM_LOCATION_TYPE_DEVICE},
              {CUCORE_POOL_LOC_HOST, CU_MEM_LOCATION_TYPE_HOST},
              {CUCORE_POOL_LOC_HOST_NUMA, CU_MEM_LOCATION_TYPE_HOST_NUMA}};
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    props.location = rows[i].loc;
    assert_ok(cucore_mem_pool_create(dev, &props, &pool));
    assert_int_equal(props_of(pool).location.type, rows[i].type);
    assert_ok(cucore_mem_pool_destroy(pool));
  }
  props.location = CUCORE_POOL_LOC_DEVICE;
  assert_ok(cucore_mem_pool_create(dev, &props, &pool));
  cucore_mem_kind kind = CUCORE_MEM_UNKNOWN;
  assert_ok(cucore_mem_pool_get_kind(pool, &kind));
  assert_int_equal(kind, CUCORE_MEM_POOL_MANAGED);
  cucore_devptr p = 0;
  assert_ok(cucore_mem_pool_alloc_async(pool, s, 1024, &p));
  cucore_pointer_facts f;
  assert_ok(cucore_pointer_get_facts(p, &f));
  assert_int_equal(f.kind, CUCORE_MEM_POOL_MANAGED);
  assert_int_equal(f.type, CUCORE_MEMTYPE_MANAGED);
  assert_non_null(f.host_pointer);
  int *h = (int *)(uintptr_t)p;
  h[255] = 42;
  int v = 0;
  assert_ok(cucore_memcpy_dtoh(dev, &v, p + 255 * sizeof(int), sizeof v, s));
  assert_ok(cucore_stream_synchronize(s));
  assert_int_equal(v, 42);
  assert_status(cucore_memset_d8(dev, p + 1000, 0, 100, s), CUCORE_OUT_OF_BOUNDS);
  assert_ok(cucore_mem_free_async(s, p)); /* any pool's free takes it */
  cucore_mem_pool_stats st;
  assert_ok(cucore_mem_pool_get_stats(pool, &st));
  assert_int_equal(st.live_allocations, 0);
  assert_int_equal(st.used_high, 1024);
  assert_ok(cucore_mem_pool_destroy(pool));
}

static void settings_that_do_not_go_together_are_named(void **state) {
  (void)state;
  const struct {
    cucore_mem_pool_props props;
    const char *says;
  } rows[] = {
      {{.flags = CUCORE_POOL_PINNED_HOST | CUCORE_POOL_MANAGED}, "together: a pool hands out one"},
      {{.flags = CUCORE_POOL_MANAGED | CUCORE_POOL_IPC}, "managed pools cannot be shared"},
      {{.flags = CUCORE_POOL_PINNED_HOST, .location = CUCORE_POOL_LOC_DEVICE},
       "CUCORE_POOL_LOC_DEVICE for a pinned host pool"},
      {{.flags = CUCORE_POOL_PINNED_HOST, .location_id = 1},
       "location_id 1 with CUCORE_POOL_LOC_DEFAULT for a pinned host pool"},
      {{.flags = CUCORE_POOL_MANAGED, .location = CUCORE_POOL_LOC_HOST, .location_id = 2},
       "only CUCORE_POOL_LOC_HOST_NUMA takes an id"},
      {{.flags = CUCORE_POOL_PINNED_HOST, .location = CUCORE_POOL_LOC_HOST_NUMA, .location_id = -1},
       "location_id -1 for CUCORE_POOL_LOC_HOST_NUMA"},
      {{.flags = CUCORE_POOL_MANAGED, .location = (cucore_pool_location)9},
       "location 9 is not a cucore_pool_location"},
      {{.flags = 64}, "unknown flags 0x40"},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    cucore_mem_pool *pool = (cucore_mem_pool *)1;
    assert_status(cucore_mem_pool_create(dev, &rows[i].props, &pool), CUCORE_INVALID_ARGUMENT);
    assert_null(pool);
    assert_contains(cucore_last_error(), "cucore_mem_pool_create: ");
    assert_contains(cucore_last_error(), rows[i].says);
  }
  /* A device pool ignores the location fields (a program built before them has none). */
  cucore_mem_pool_props dp = {.location = CUCORE_POOL_LOC_HOST};
  cucore_mem_pool *pool = NULL;
  assert_ok(cucore_mem_pool_create(dev, &dp, &pool));
  assert_int_equal(props_of(pool).location.type, CU_MEM_LOCATION_TYPE_DEVICE);
  cucore_mem_kind kind = CUCORE_MEM_UNKNOWN;
  assert_ok(cucore_mem_pool_get_kind(pool, &kind));
  assert_int_equal(kind, CUCORE_MEM_POOL);
  assert_ok(cucore_mem_pool_destroy(pool));
}

static void old_drivers_are_refused_with_the_version(void **state) {
  (void)state;
  int saved = cc_drv.version;
  cucore_mem_pool *pool = NULL;
  cucore_mem_pool_props managed = {.flags = CUCORE_POOL_MANAGED};
  cucore_mem_pool_props pinned = {.flags = CUCORE_POOL_PINNED_HOST};
  cc_drv.version = 12080;
  assert_status(cucore_mem_pool_create(dev, &managed, &pool), CUCORE_DRIVER_TOO_OLD);
  assert_contains(cucore_last_error(), "a managed pool (CUCORE_POOL_MANAGED, "
                                       "CU_MEM_ALLOCATION_TYPE_MANAGED) needs a driver for CUDA "
                                       "13.0 or newer; the loaded driver is version 12.8");
  assert_ok(cucore_mem_pool_create(dev, &pinned, &pool));
  assert_ok(cucore_mem_pool_destroy(pool));
  cc_drv.version = 12050;
  assert_status(cucore_mem_pool_create(dev, &pinned, &pool), CUCORE_DRIVER_TOO_OLD);
  assert_contains(cucore_last_error(), "needs a driver for CUDA 12.6 or newer");
  assert_null(pool);
  cc_drv.version = saved;
}

int main(void) {
  setenv("CUCORE_LIBCUDA", CUCORE_FAKE_DRIVER_PATH, 1);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(pinned_pool_memory_is_host_memory),
      cmocka_unit_test(numa_pool_is_shareable_host_pool_is_not),
      cmocka_unit_test(managed_pool_has_a_preferred_location),
      cmocka_unit_test(settings_that_do_not_go_together_are_named),
      cmocka_unit_test(old_drivers_are_refused_with_the_version),
  };
  return cmocka_run_group_tests(tests, open_dev, close_dev);
}
