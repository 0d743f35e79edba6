/* test_mem_resource.c -- memory resources on the fake driver (tests/fake/): an RMM-like pool
 * written in the test (mres_user_pool.h) installed as device 0's default serves
 * cucore_mem_alloc and cucore_mem_alloc_async, its memory recorded (pointer facts, a copy past
 * the end refused), freed back through it with the size and stream (on this thread, on
 * another, after a drain), its statistics; DLPack exports of it (a transfer's deleter gives it
 * back); the driver asked for the device once per slab; each refusal (a failing resource, one
 * handing out 0, a misaligned or another device's address, destroy while installed or live,
 * resources that cannot be installed, a free on a pool, a double free, another resource's
 * memory, a resource allocating from itself); cucore's own resources (virtual memory, a pinned
 * host pool, a pool on a driver without pools). */
#include "support.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "memory/dlpack_v1.h"
#include "memory/memory.h"
#include "mres_user_pool.h"

#ifndef CUCORE_FAKE_DRIVER_PATH
#error "CUCORE_FAKE_DRIVER_PATH is set by tests/CMakeLists.txt"
#endif

#define SLAB ((uint64_t)1 << 20)

static cucore_device *dev;
static cucore_stream *stream;
static user_pool up;
static cucore_mem_resource *res;

static int setup(void **state) {
  (void)state;
  if (cucore_device_open(0, &dev) != CUCORE_OK) return -1;
  if (cucore_stream_create(dev, 0, 0, &stream) != CUCORE_OK) return -1;
  return 0;
}

static int teardown(void **state) {
  (void)state;
  cucore_stream_destroy(stream);
  cucore_device_close(dev);
  return 0;
}

/* A fresh user pool wrapped as a resource of device 0 (res), not installed. */
static int pool_setup(void **state) {
  (void)state;
  (void)DRV(cuCtxSetCurrent)(dev->ctx);
  if (!up_init(&up, SLAB)) return -1;
  cucore_mem_resource_props props = {.device = 0, .name = "test pool"};
  return cucore_mem_resource_create(&up_ops, &up, &props, &res) == CUCORE_OK ? 0 : -1;
}

static int pool_teardown(void **state) {
  (void)state;
  (void)cucore_device_set_mem_resource(dev, NULL);
  if (cucore_mem_resource_destroy(res) != CUCORE_OK) return -1;
  up_fini(&up);
  return 0;
}

static int in_slab(cucore_devptr p) { return p >= up.slab && p < up.slab + SLAB; }

static long driver_calls(void) {
  void *lib = dlopen(CUCORE_FAKE_DRIVER_PATH, RTLD_NOW | RTLD_NOLOAD);
  assert_non_null(lib);
  long (*calls)(void) = (long (*)(void))(uintptr_t)dlsym(lib, "fake_calls");
  long n = calls();
  dlclose(lib);
  return n;
}

static void installed_resource_serves_allocations(void **state) {
  (void)state;
  cucore_mem_resource *got = NULL;
  assert_ok(cucore_device_get_mem_resource(dev, &got));
  assert_null(got);
  assert_ok(cucore_device_set_mem_resource(dev, res));
  assert_ok(cucore_device_get_mem_resource(dev, &got));
  assert_ptr_equal(got, res);
  cucore_devptr a = 0, b = 0;
  assert_ok(cucore_mem_alloc(dev, 1000, &a));
  assert_true(in_slab(a));
  assert_int_equal(a % CUCORE_MR_DEFAULT_ALIGNMENT, 0);
  assert_ok(cucore_mem_alloc_async(stream, 512, &b));
  assert_true(in_slab(b));
  assert_int_equal(up.allocs, 2);
  /* Recorded: facts, bounds, statistics. */
  cucore_pointer_facts f;
  assert_ok(cucore_pointer_get_facts(a + 10, &f));
  assert_int_equal(f.kind, CUCORE_MEM_RESOURCE);
  assert_int_equal(f.base, a);
  assert_int_equal(f.size, 1000);
  assert_int_equal(f.device, 0);
  char host[1001];
  memset(host, 7, sizeof host);
  assert_ok(cucore_memcpy_htod(dev, a, host, 1000, NULL));
  assert_status(cucore_memcpy_htod(dev, a, host, 1001, NULL), CUCORE_OUT_OF_BOUNDS);
  assert_contains(cucore_last_error(), "memory-resource");
  assert_status(cucore_memcpy_dtoh(dev, host, b + 256, 257, stream), CUCORE_OUT_OF_BOUNDS);
  cucore_mem_resource_stats st;
  assert_ok(cucore_mem_resource_get_stats(res, &st));
  assert_int_equal(st.live_allocations, 2);
  assert_int_equal(st.live_bytes, 1512);
  /* Freed through it with the size asked for and the stream of the free. */
  assert_ok(cucore_mem_free_async(stream, b));
  assert_int_equal(up.deallocs, 1);
  assert_int_equal(up.last_bytes, 512);
  assert_int_equal(up.last_alignment, CUCORE_MR_DEFAULT_ALIGNMENT);
  assert_ptr_equal(up.last_stream, stream);
  assert_ok(cucore_mem_free(dev, a));
  assert_int_equal(up.deallocs, 2);
  assert_int_equal(up.last_bytes, 1000);
  assert_null(up.last_stream);
  assert_ok(cucore_mem_resource_get_stats(res, &st));
  assert_int_equal(st.live_allocations, 0);
  assert_int_equal(st.live_bytes, 0);
  /* NULL restores cucore's default: the driver's memory again. */
  assert_ok(cucore_device_set_mem_resource(dev, NULL));
  assert_ok(cucore_mem_alloc(dev, 1000, &a));
  assert_false(in_slab(a));
  assert_int_equal(up.allocs, 2);
  assert_ok(cucore_mem_free(dev, a));
}

/* An allocation freed on another thread, and one freed after the front table was drained
 * into the tree, go back through the registry. */
typedef struct free_job {
  cucore_devptr p;
  cucore_status st;
} free_job;

static void *free_elsewhere(void *arg) {
  free_job *j = arg;
  j->st = cucore_mem_free_async(stream, j->p);
  return NULL;
}

static void frees_through_the_registry(void **state) {
  (void)state;
  assert_ok(cucore_device_set_mem_resource(dev, res));
  free_job j = {0, CUCORE_OK};
  assert_ok(cucore_mem_alloc_async(stream, 300, &j.p));
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, free_elsewhere, &j), 0);
  pthread_join(t, NULL);
  assert_ok(j.st);
  assert_int_equal(up.deallocs, 1);
  assert_int_equal(up.last_bytes, 300);
  cucore_devptr p = 0;
  assert_ok(cucore_mem_alloc(dev, 4096, &p));
  cucore_mem_resource_stats st;
  assert_ok(cucore_mem_resource_get_stats(res, &st)); /* a walk: drains the tables */
  assert_int_equal(st.live_allocations, 1);
  assert_ok(cucore_mem_free(dev, p));
  assert_int_equal(up.deallocs, 2);
  assert_int_equal(up.last_bytes, 4096);
  /* Freed already, by either call. */
  assert_status(cucore_mem_free(dev, p), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "freed already");
  assert_status(cucore_mem_free_async(stream, p), CUCORE_INVALID_ARGUMENT);
  assert_int_equal(up.deallocs, 2);
}

static void dlpack_exports_resource_memory(void **state) {
  (void)state;
  assert_ok(cucore_device_set_mem_resource(dev, res));
  cucore_devptr p = 0;
  assert_ok(cucore_mem_alloc(dev, 64 * 4, &p));
  cucore_tensor_desc t;
  memset(&t, 0, sizeof t);
  t.ndim = 1;
  t.shape[0] = 64;
  t.compact = 1;
  t.dtype.code = CUCORE_DTYPE_FLOAT;
  t.dtype.bits = 32;
  t.dtype.lanes = 1;
  void *mt = NULL;
  assert_ok(cucore_dlpack_export(p, &t, 0, &mt));
  DLManagedTensor *m = mt;
  assert_int_equal(m->dl_tensor.device.device_type, kDLCUDA);
  assert_int_equal(m->dl_tensor.device.device_id, 0);
  assert_status(cucore_mem_free(dev, p), CUCORE_IN_USE); /* the export uses it */
  m->deleter(m);
  /* Handed over: the consumer's deleter gives it back to the resource. */
  assert_ok(cucore_dlpack_export(p, &t, CUCORE_DLPACK_TRANSFER, &mt));
  m = mt;
  assert_int_equal(up.deallocs, 0);
  m->deleter(m);
  assert_int_equal(up.deallocs, 1);
  assert_int_equal(up.last_bytes, 256);
}

/* The driver is asked for the device of the first address in the slab, then trusted. */
static void the_device_is_asked_once_per_slab(void **state) {
  (void)state;
  char range[64];
  snprintf(range, sizeof range, "%llx:%llu", (unsigned long long)up.slab, (unsigned long long)SLAB);
  setenv("CUCORE_FAKE_POINTER_DEVICE", "0", 1);
  setenv("CUCORE_FAKE_POINTER_RANGE", range, 1);
  assert_ok(cucore_device_set_mem_resource(dev, res));
  cucore_devptr p[8];
  assert_ok(cucore_mem_alloc_async(stream, 100, &p[0]));
  long before = driver_calls();
  for (int i = 1; i < 8; i++) assert_ok(cucore_mem_alloc_async(stream, 100, &p[i]));
  assert_int_equal(driver_calls(), before); /* no driver call at all */
  for (int i = 0; i < 8; i++) assert_ok(cucore_mem_free_async(stream, p[i]));
  assert_int_equal(driver_calls(), before);
  unsetenv("CUCORE_FAKE_POINTER_RANGE");
  unsetenv("CUCORE_FAKE_POINTER_DEVICE");
}

static void what_a_resource_returns_is_checked(void **state) {
  (void)state;
  assert_ok(cucore_device_set_mem_resource(dev, res));
  cucore_devptr p = 1;
  up.fail = 1;
  assert_status(cucore_mem_alloc(dev, 100, &p), CUCORE_DEVICE_OUT_OF_MEMORY);
  assert_int_equal(p, 0);
  assert_contains(cucore_last_error(), "memory resource 'test pool' could not allocate");
  assert_contains(cucore_last_error(), "CUCORE_DEVICE_OUT_OF_MEMORY");
  up.fail = 2;
  assert_status(cucore_mem_alloc_async(stream, 100, &p), CUCORE_DEVICE_OUT_OF_MEMORY);
  assert_contains(cucore_last_error(), "it returned address 0");
  up.fail = 0;
  up.misalign = 8;
  assert_status(cucore_mem_alloc(dev, 100, &p), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "not aligned to the 256 bytes");
  assert_int_equal(up.deallocs, 1); /* given back */
  up.misalign = 0;
  setenv("CUCORE_FAKE_POINTER_DEVICE", "1", 1);
  assert_status(cucore_mem_alloc_async(stream, 100, &p), CUCORE_INVALID_ARGUMENT);
  unsetenv("CUCORE_FAKE_POINTER_DEVICE");
  assert_contains(cucore_last_error(), "memory of device 1; it allocates for device 0");
  assert_int_equal(up.deallocs, 2);
  assert_int_equal(up.allocs, 2);
  cucore_mem_resource_stats st;
  assert_ok(cucore_mem_resource_get_stats(res, &st));
  assert_int_equal(st.live_allocations, 0);
}

static void lifetimes_and_frees_are_checked(void **state) {
  (void)state;
  assert_ok(cucore_device_set_mem_resource(dev, res));
  assert_status(cucore_mem_resource_destroy(res), CUCORE_IN_USE);
  assert_contains(cucore_last_error(), "is installed on 1 device");
  cucore_devptr p = 0;
  assert_ok(cucore_mem_alloc(dev, 100, &p));
  assert_ok(cucore_device_set_mem_resource(dev, NULL));
  assert_status(cucore_mem_resource_destroy(res), CUCORE_IN_USE);
  assert_contains(cucore_last_error(), "still has 1 live allocation");
  /* The wrong frees name the right one. */
  cucore_mem_pool *pool = NULL;
  assert_ok(cc_pool_new_handle(dev, NULL, 0, 0, 0, &pool));
  assert_status(cucore_mem_pool_free_async(pool, stream, p), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "cucore_mem_resource_deallocate");
  assert_ok(cucore_mem_pool_destroy(pool));
  user_pool up2;
  assert_true(up_init(&up2, SLAB));
  cucore_mem_resource_props props = {.device = 0, .name = "other pool"};
  cucore_mem_resource *other = NULL;
  assert_ok(cucore_mem_resource_create(&up_ops, &up2, &props, &other));
  assert_status(cucore_mem_resource_deallocate(other, NULL, p), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "came from memory resource 'test pool', not from 'other");
  cucore_devptr q = 0;
  assert_ok(cucore_mem_resource_allocate(other, dev, stream, 100, &q));
  assert_ok(cucore_mem_resource_deallocate(other, stream, q));
  assert_int_equal(up2.deallocs, 1);
  assert_ok(cucore_mem_resource_destroy(other));
  assert_int_equal(up2.destroyed, 1);
  up_fini(&up2);
  assert_ok(cucore_mem_resource_deallocate(res, NULL, p));
  assert_int_equal(up.deallocs, 1);
}

/* An allocate that asks cucore for memory of the device it is installed on. */
static cucore_status reentrant_allocate(void *user, size_t bytes, size_t alignment,
                                        cucore_stream *s, cucore_devptr *out) {
  (void)user, (void)alignment, (void)s;
  return cucore_mem_alloc(dev, bytes, out);
}

static void a_resource_calling_itself_is_refused(void **state) {
  (void)state;
  cucore_mem_resource_ops ops = {reentrant_allocate, up_deallocate, NULL};
  cucore_mem_resource_props props = {.device = 0, .name = "loop"};
  cucore_mem_resource *r = NULL;
  assert_ok(cucore_mem_resource_create(&ops, &up, &props, &r));
  assert_ok(cucore_device_set_mem_resource(dev, r));
  cucore_devptr p = 0;
  assert_status(cucore_mem_alloc(dev, 64, &p), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "memory resource 'loop' could not allocate");
  assert_contains(cucore_last_error(), "inside memory resource 'loop''s own allocate");
  assert_ok(cucore_device_set_mem_resource(dev, NULL));
  assert_ok(cucore_mem_resource_destroy(r));
}

static void resources_are_checked_when_made_and_installed(void **state) {
  (void)state;
  cucore_mem_resource *r = NULL;
  cucore_mem_resource_ops ops = {up_allocate, NULL, NULL};
  cucore_mem_resource_props props = {.device = 0};
  assert_status(cucore_mem_resource_create(&ops, &up, &props, &r), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "ops->deallocate is NULL");
  props.flags = 0x40;
  assert_status(cucore_mem_resource_create(&up_ops, &up, &props, &r), CUCORE_INVALID_ARGUMENT);
  props = (cucore_mem_resource_props){.device = -2};
  assert_status(cucore_mem_resource_create(&up_ops, &up, &props, &r), CUCORE_INVALID_ARGUMENT);
  props = (cucore_mem_resource_props){.device = -1, .flags = CUCORE_MR_DEVICE_ACCESSIBLE};
  assert_status(cucore_mem_resource_create(&up_ops, &up, &props, &r), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "must be pinned or managed");
  /* Another device's, and host memory kernels cannot reach, are not installed. */
  props = (cucore_mem_resource_props){.device = 1, .name = "dev1"};
  assert_ok(cucore_mem_resource_create(&up_ops, &up, &props, &r));
  assert_status(cucore_device_set_mem_resource(dev, r), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "allocates memory of device 1, not of device 0");
  cucore_devptr p = 0;
  assert_status(cucore_mem_resource_allocate(r, dev, NULL, 64, &p), CUCORE_INVALID_ARGUMENT);
  assert_ok(cucore_mem_resource_destroy(r));
  props = (cucore_mem_resource_props){.device = -1, .name = "host"};
  assert_ok(cucore_mem_resource_create(&up_ops, &up, &props, &r));
  unsigned flags = 0;
  int device = 0;
  const char *name = NULL;
  assert_ok(cucore_mem_resource_get_flags(r, &flags));
  assert_int_equal(flags, CUCORE_MR_HOST_ACCESSIBLE);
  assert_ok(cucore_mem_resource_get_device(r, &device));
  assert_int_equal(device, -1);
  assert_ok(cucore_mem_resource_get_name(r, &name));
  assert_string_equal(name, "host");
  assert_status(cucore_device_set_mem_resource(dev, r), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "not device-accessible");
  assert_ok(cucore_mem_resource_destroy(r));
  assert_ok(cucore_mem_resource_destroy(NULL));
}

static void cucores_own_resources(void **state) {
  (void)state;
  /* Virtual memory, one mapping per allocation. */
  cucore_mem_resource *v = NULL;
  assert_ok(cucore_mem_resource_vmm(dev, &v));
  assert_ok(cucore_device_set_mem_resource(dev, v));
  cucore_devptr p = 0;
  assert_ok(cucore_mem_alloc(dev, 5000, &p));
  char host[5000];
  memset(host, 3, sizeof host);
  assert_ok(cucore_memcpy_htod(dev, p, host, sizeof host, NULL));
  assert_status(cucore_memcpy_htod(dev, p + 1, host, sizeof host, NULL), CUCORE_OUT_OF_BOUNDS);
  cucore_pointer_facts f;
  assert_ok(cucore_pointer_get_facts(p, &f));
  assert_int_equal(f.kind, CUCORE_MEM_RESOURCE);
  assert_ok(cucore_mem_free(dev, p));
  assert_ok(cucore_device_set_mem_resource(dev, NULL));
  assert_ok(cucore_mem_resource_destroy(v));
  /* A pinned host pool: its blocks are its own records; it is not a device's default. */
  cucore_host_pool *hp = NULL;
  assert_ok(cucore_host_pool_create(dev, NULL, &hp));
  cucore_mem_resource *h = NULL;
  assert_ok(cucore_mem_resource_from_host_pool(hp, &h));
  unsigned flags = 0;
  assert_ok(cucore_mem_resource_get_flags(h, &flags));
  assert_int_equal(flags,
                   CUCORE_MR_DEVICE_ACCESSIBLE | CUCORE_MR_HOST_ACCESSIBLE | CUCORE_MR_PINNED);
  assert_status(cucore_device_set_mem_resource(dev, h), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "records its blocks itself");
  assert_ok(cucore_mem_resource_allocate(h, dev, NULL, 3000, &p));
  assert_ok(cucore_pointer_get_facts(p, &f));
  assert_int_equal(f.kind, CUCORE_MEM_PINNED_POOL);
  assert_ok(cucore_mem_resource_deallocate(h, NULL, p));
  assert_ok(cucore_mem_resource_destroy(h));
  assert_ok(cucore_host_pool_destroy(hp));
  /* Stream-ordered pools (the fake driver's): a device pool's resource hands out device
   * memory, a pinned host pool's says host-accessible and pinned. */
  const unsigned kinds[2] = {0, CUCORE_POOL_PINNED_HOST};
  const unsigned want[2] = {CUCORE_MR_DEVICE_ACCESSIBLE, CUCORE_MR_DEVICE_ACCESSIBLE |
                                                             CUCORE_MR_HOST_ACCESSIBLE |
                                                             CUCORE_MR_PINNED};
  for (int k = 0; k < 2; k++) {
    cucore_mem_pool_props props = {.flags = kinds[k]};
    cucore_mem_pool *pool = NULL;
    assert_ok(cucore_mem_pool_create(dev, &props, &pool));
    cucore_mem_resource *r = NULL;
    assert_ok(cucore_mem_resource_from_pool(pool, &r));
    assert_ok(cucore_mem_resource_get_flags(r, &flags));
    assert_int_equal(flags, want[k]);
    assert_ok(cucore_mem_resource_allocate(r, dev, NULL, 4096, &p));
    assert_ok(cucore_mem_resource_deallocate(r, NULL, p));
    assert_ok(cucore_mem_resource_destroy(r));
    assert_ok(cucore_mem_pool_destroy(pool));
  }
}

int main(void) {
  setenv("CUCORE_LIBCUDA", CUCORE_FAKE_DRIVER_PATH, 1);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(installed_resource_serves_allocations, pool_setup,
                                      pool_teardown),
      cmocka_unit_test_setup_teardown(frees_through_the_registry, pool_setup, pool_teardown),
      cmocka_unit_test_setup_teardown(dlpack_exports_resource_memory, pool_setup, pool_teardown),
      cmocka_unit_test_setup_teardown(the_device_is_asked_once_per_slab, pool_setup, pool_teardown),
      cmocka_unit_test_setup_teardown(what_a_resource_returns_is_checked, pool_setup,
                                      pool_teardown),
      cmocka_unit_test_setup_teardown(lifetimes_and_frees_are_checked, pool_setup, pool_teardown),
      cmocka_unit_test_setup_teardown(resources_are_checked_when_made_and_installed, pool_setup,
                                      pool_teardown),
      cmocka_unit_test(cucores_own_resources),
      cmocka_unit_test_setup_teardown(a_resource_calling_itself_is_refused, pool_setup,
                                      pool_teardown),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
