/* gpu_pool_kinds.c -- pinned host and managed stream-ordered pools on a real GPU (label gpu): a
 * kernel writes a pinned-pool allocation and the host reads it directly after a stream
 * synchronisation; a managed-pool allocation is written by the host, incremented by a kernel and
 * read by the host; pointer facts from the driver agree with cucore's kinds; a NUMA-node pinned
 * pool is exported as a POSIX descriptor where the driver allows it (else its refusal is
 * checked); a HOST pool's IPC is refused by name. Drivers older than a kind (pinned pools: CUDA
 * 12.6; managed pools: CUDA 13.0) must be refused with CUCORE_DRIVER_TOO_OLD, which is checked
 * instead there. */
#include "gpu_support.h"
#include "runtime/runtime.h" /* cc_drv: the driver's version */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static cucore_device *dev;
static cucore_stream *s;
static cucore_object *obj;

static const char *source = "extern \"C\" __global__ void add_i(int *p, int n) {\n"
                            "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                            "  if (i < n) p[i] += i; }\n";

enum { N = 1 << 14 };

static int setup(void **state) {
  (void)state;
  return gpu_group_open(source, &dev, &s, &obj);
}
static int teardown(void **state) {
  (void)state;
  return gpu_group_close(dev, s, obj);
}

static void run_add_i(cucore_devptr p, int n) {
  cucore_kernel *k = gpu_kernel(obj, "add_i");
  cucore_args *a = NULL;
  assert_ok(cucore_args_create(k, &a));
  assert_ok(CUCORE_ARGS(a, p, n));
  cucore_launch_config c;
  memset(&c, 0, sizeof c);
  c.grid[0] = (unsigned)(n + 255) / 256;
  c.block[0] = 256;
  c.stream = s;
  assert_ok(cucore_launch(k, &c, a));
  assert_ok(cucore_args_destroy(a));
  assert_ok(cucore_kernel_destroy(k));
}

/* Creates a pool of `props`, or checks the refusal of a driver older than `version`: 1 when the
 * pool was made. */
static int make_pool(const cucore_mem_pool_props *props, int version, cucore_mem_pool **pool) {
  if (cc_drv.version < version) {
    assert_status(cucore_mem_pool_create(dev, props, pool), CUCORE_DRIVER_TOO_OLD);
    print_message("driver %d: refused as expected: %s\n", cc_drv.version, cucore_last_error());
    return 0;
  }
  assert_ok(cucore_mem_pool_create(dev, props, pool));
  return 1;
}

static void kernel_writes_pinned_pool_host_reads(void **state) {
  (void)state;
  cucore_mem_pool_props props = {.flags = CUCORE_POOL_PINNED_HOST};
  cucore_mem_pool *pool = NULL;
  if (!make_pool(&props, 12060, &pool)) return;
  cucore_devptr p = 0;
  assert_ok(cucore_mem_pool_alloc_async(pool, s, N * sizeof(int), &p));
  assert_ok(cucore_memset_d32(dev, p, 5, N, s));
  run_add_i(p, N);
  assert_ok(cucore_stream_synchronize(s));
  const int *h = (const int *)(uintptr_t)p; /* host memory: read in place */
  for (int i = 0; i < N; i++)
    if (h[i] != 5 + i) fail_msg("element %d is %d, expected %d", i, h[i], 5 + i);
  cucore_pointer_facts f;
  assert_ok(cucore_pointer_get_facts(p, &f));
  print_message("pinned pool allocation: kind %s, driver type %d, host %p\n",
                cucore_mem_kind_name(f.kind), (int)f.type, f.host_pointer);
  assert_int_equal(f.kind, CUCORE_MEM_POOL_PINNED);
  assert_int_equal(f.type, CUCORE_MEMTYPE_HOST);
  assert_ptr_equal(f.host_pointer, h);
  int back[4] = {0};
  assert_ok(cucore_memcpy_dtoh(dev, back, p + 8, sizeof back, s));
  assert_ok(cucore_stream_synchronize(s));
  assert_int_equal(back[0], 5 + 2);
  assert_status(cucore_memcpy_dtoh(dev, back, p + N * sizeof(int) - 8, sizeof back, s),
                CUCORE_OUT_OF_BOUNDS);
  assert_ok(cucore_mem_pool_free_async(pool, s, p));
  assert_ok(cucore_stream_synchronize(s));
  assert_ok(cucore_mem_pool_destroy(pool));
}

static void managed_pool_on_host_and_device(void **state) {
  (void)state;
  cucore_mem_pool_props props = {.flags = CUCORE_POOL_MANAGED, .location = CUCORE_POOL_LOC_DEVICE};
  cucore_mem_pool *pool = NULL;
  if (!make_pool(&props, 13000, &pool)) return;
  cucore_devptr p = 0;
  assert_ok(cucore_mem_pool_alloc_async(pool, s, N * sizeof(int), &p));
  assert_ok(cucore_stream_synchronize(s)); /* the host touches it next */
  int *h = (int *)(uintptr_t)p;
  for (int i = 0; i < N; i++) h[i] = 1000;
  run_add_i(p, N);
  assert_ok(cucore_stream_synchronize(s));
  for (int i = 0; i < N; i++)
    if (h[i] != 1000 + i) fail_msg("element %d is %d, expected %d", i, h[i], 1000 + i);
  cucore_pointer_facts f;
  assert_ok(cucore_pointer_get_facts(p, &f));
  assert_int_equal(f.kind, CUCORE_MEM_POOL_MANAGED);
  assert_int_equal(f.type, CUCORE_MEMTYPE_MANAGED);
  assert_ok(cucore_mem_free_async(s, p));
  assert_ok(cucore_stream_synchronize(s));
  assert_ok(cucore_mem_pool_destroy(pool));
}

static void host_pool_ipc(void **state) {
  (void)state;
  cucore_mem_pool_props props = {.flags = CUCORE_POOL_PINNED_HOST | CUCORE_POOL_IPC,
                                 .location = CUCORE_POOL_LOC_HOST};
  cucore_mem_pool *pool = NULL;
  assert_status(cucore_mem_pool_create(dev, &props, &pool), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "only at a NUMA node");
  props.location = CUCORE_POOL_LOC_HOST_NUMA;
  if (cc_drv.version < 12060) {
    assert_status(cucore_mem_pool_create(dev, &props, &pool), CUCORE_DRIVER_TOO_OLD);
    return;
  }
  cucore_status st = cucore_mem_pool_create(dev, &props, &pool);
  if (st != CUCORE_OK) { /* the driver or system does not share host pools: its refusal */
    print_message("NUMA-node pinned pool with IPC refused here: %s\n", cucore_last_error());
    assert_true(st == CUCORE_NOT_SUPPORTED || st == CUCORE_INVALID_ARGUMENT);
    return;
  }
  int fd = -1;
  st = cucore_mem_pool_export_fd(pool, &fd);
  print_message("export of a NUMA-node pinned pool: %s\n",
                st == CUCORE_OK ? "a descriptor" : cucore_last_error());
  if (st == CUCORE_OK) {
    assert_true(fd >= 0);
    close(fd);
    cucore_devptr p = 0;
    cucore_ipc_pointer ip;
    assert_ok(cucore_mem_pool_alloc_async(pool, s, 4096, &p));
    assert_ok(cucore_mem_pool_export_pointer(pool, p, &ip));
    assert_int_equal(ip.bytes, 4096);
    assert_ok(cucore_mem_pool_free_async(pool, s, p));
    assert_ok(cucore_stream_synchronize(s));
  }
  assert_ok(cucore_mem_pool_destroy(pool));
}

int main(void) {
  if (!cucore_test_have_gpu()) return CUCORE_TEST_SKIP;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(kernel_writes_pinned_pool_host_reads),
      cmocka_unit_test(managed_pool_on_host_and_device),
      cmocka_unit_test(host_pool_ipc),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
