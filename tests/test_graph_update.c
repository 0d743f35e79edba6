/* test_graph_update.c -- nodes given new parameters through the fake driver: in a graph, a
 * kernel node swapped to another kernel (checked as a launch), fills, copies, host functions and
 * events changed and read back, each bad value refused before the driver sees it (out of
 * bounds, a pitch below its row, another kind, a NULL function), child-graph and conditional
 * nodes refused with what to do instead; in an executable graph, the kernel swap followed by
 * the per-node argument updates, and each of the driver's rules for executable graphs named
 * when broken (a 2D fill, a copy between other kinds of memory, a child graph of another shape,
 * a node added after instantiation or of another graph); 2D fills and 2D/3D copies added as
 * nodes with their footprints checked. */
#include "support.h"

#include "graph/graph.h"
#include "loader/loader.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#ifndef CUCORE_FAKE_DRIVER_PATH
#error "CUCORE_FAKE_DRIVER_PATH is set by tests/CMakeLists.txt"
#endif

static cucore_device *dev;
static cucore_object *obj;
static cucore_kernel *k, *k2;
static cucore_devptr buf; /* 4096 bytes */

static const char ptx_text[] =
    ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".visible .entry k(.param .u64 p, .param .u32 n)\n{\n  ret;\n}\n"
    ".visible .entry k2(.param .u64 p, .param .u32 n, .param .u32 m)\n{\n  ret;\n}\n";

static int open_fake(void **state) {
  (void)state;
  setenv("CUCORE_LIBCUDA", CUCORE_FAKE_DRIVER_PATH, 1);
  if (cucore_device_open(0, &dev) != CUCORE_OK) return -1;
  if (cucore_object_from_memory(ptx_text, sizeof ptx_text, CUCORE_CODE_PTX, "k.ptx", &obj))
    return -1;
  if (cucore_object_get_kernel(obj, "k", &k) || cucore_object_get_kernel(obj, "k2", &k2)) return -1;
  return cucore_mem_alloc(dev, 4096, &buf) == CUCORE_OK ? 0 : -1;
}

static int close_fake(void **state) {
  (void)state;
  cucore_mem_free(dev, buf);
  cucore_kernel_destroy(k);
  cucore_kernel_destroy(k2);
  cucore_object_destroy(obj);
  return cucore_device_close(dev) == CUCORE_OK ? 0 : -1;
}

static int exec_sets(void) {
  void *lib = dlopen(CUCORE_FAKE_DRIVER_PATH, RTLD_NOW | RTLD_NOLOAD);
  int (*fn)(void) = lib ? (int (*)(void))dlsym(lib, "fake_graph_exec_sets") : NULL;
  int n = fn ? fn() : -1;
  if (lib) dlclose(lib);
  return n;
}

static void host_a(void *u) { (void)u; }
static void host_b(void *u) { (void)u; }

static cucore_launch_config config(unsigned grid, unsigned block) {
  cucore_launch_config c;
  memset(&c, 0, sizeof c);
  c.grid[0] = grid;
  c.block[0] = block;
  return c;
}

/* A kernel node swapped to another kernel; its values and shape read back. */
static void kernel_node_swapped(void **state) {
  (void)state;
  cucore_graph *g = NULL;
  assert_ok(cucore_graph_create(dev, &g));
  cucore_args *a = NULL, *b = NULL;
  assert_ok(cucore_args_create(k, &a));
  assert_ok(CUCORE_ARGS(a, buf, 5u));
  cucore_launch_config c = config(2, 64);
  cucore_graph_node *kn = NULL;
  assert_ok(cucore_graph_add_kernel_node(g, NULL, 0, k, &c, a, &kn));
  cucore_graph_node_params p;
  assert_ok(cucore_graph_node_get_params(kn, &p));
  assert_ok(cucore_args_create(k2, &b));
  p.kernel.kernel = k2;
  p.kernel.args = b; /* incomplete: refused as a launch would refuse it */
  assert_status(cucore_graph_node_set_params(kn, &p), CUCORE_ARG_COUNT);
  assert_ok(CUCORE_ARGS(b, buf, 6u, 7u));
  p.kernel.block[0] = 2048;
  assert_status(cucore_graph_node_set_params(kn, &p), CUCORE_LAUNCH_CONFIG);
  p.kernel.block[0] = 128;
  p.kernel.grid[0] = 3;
  assert_ok(cucore_graph_node_set_params(kn, &p));
  cucore_graph_node_params q;
  assert_ok(cucore_graph_node_get_params(kn, &q));
  assert_ptr_equal(q.kernel.kernel, k2);
  assert_string_equal(q.kernel.name, "k2");
  assert_int_equal(q.kernel.grid[0], 3);
  assert_int_equal(q.kernel.block[0], 128);
  void **params = NULL;
  assert_ok(cucore_args_get_native(q.kernel.args, &params, NULL, NULL));
  assert_int_equal(*(uint32_t *)params[2], 7);
  /* Another kind of parameters, refused. */
  q.type = CUCORE_GRAPH_NODE_MEMSET;
  assert_status(cucore_graph_node_set_params(kn, &q), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "is a kernel node; the parameters are for a memset node");
  assert_status(cucore_graph_node_set_params(kn, NULL), CUCORE_INVALID_ARGUMENT);
  assert_ok(cucore_args_destroy(a));
  assert_ok(cucore_args_destroy(b));
  assert_ok(cucore_graph_destroy(g));
}

/* Fills, copies, host functions and events changed, each bad value refused first. */
static void other_nodes_changed(void **state) {
  (void)state;
  cucore_graph *g = NULL, *child = NULL;
  cucore_event *e1 = NULL, *e2 = NULL;
  assert_ok(cucore_graph_create(dev, &g));
  assert_ok(cucore_graph_create(dev, &child));
  assert_ok(cucore_event_create(dev, 0, &e1));
  assert_ok(cucore_event_create(dev, 0, &e2));
  static char host[512];
  cucore_graph_node *fill, *copy, *hn, *rec, *ch, *cn;
  assert_ok(cucore_graph_add_memset_node(g, NULL, 0, buf, 1, 4, 16, &fill));
  assert_ok(cucore_graph_add_memcpy_htod_node(g, NULL, 0, buf, host, 64, &copy));
  assert_ok(cucore_graph_add_host_node(g, NULL, 0, host_a, NULL, NULL, &hn));
  assert_ok(cucore_graph_add_event_record_node(g, NULL, 0, e1, &rec));
  assert_ok(cucore_graph_add_empty_node(child, NULL, 0, &cn));
  assert_ok(cucore_graph_add_child_graph_node(g, NULL, 0, child, &ch));
  cucore_graph_node_params p;

  assert_ok(cucore_graph_node_get_params(fill, &p));
  p.memset.value = 9;
  p.memset.width = 1025; /* 4100 bytes of 4096 */
  assert_status(cucore_graph_node_set_params(fill, &p), CUCORE_OUT_OF_BOUNDS);
  p.memset.width = 8;
  p.memset.height = 4;
  p.memset.pitch = 16; /* below the 32-byte row */
  assert_status(cucore_graph_node_set_params(fill, &p), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "pitch of 16 bytes");
  p.memset.pitch = 64;
  assert_ok(cucore_graph_node_set_params(fill, &p));
  assert_ok(cucore_graph_node_get_params(fill, &p));
  assert_int_equal(p.memset.value, 9);
  assert_int_equal(p.memset.height, 4);
  assert_int_equal(p.memset.pitch, 64);

  assert_ok(cucore_graph_node_get_params(copy, &p));
  p.memcpy.copy.dst = buf + 4050; /* 64 bytes from there run past the end */
  assert_status(cucore_graph_node_set_params(copy, &p), CUCORE_OUT_OF_BOUNDS);
  p.memcpy.copy.dst = buf + 1024;
  p.memcpy.copy.width_bytes = 128;
  assert_ok(cucore_graph_node_set_params(copy, &p));
  assert_ok(cucore_graph_node_get_params(copy, &p));
  assert_int_equal(p.memcpy.copy.dst, buf + 1024);
  assert_int_equal(p.memcpy.copy.width_bytes, 128);

  assert_ok(cucore_graph_node_get_params(hn, &p));
  p.host.fn = NULL;
  assert_status(cucore_graph_node_set_params(hn, &p), CUCORE_INVALID_ARGUMENT);
  p.host.fn = host_b;
  p.host.user = host;
  assert_ok(cucore_graph_node_set_params(hn, &p));
  assert_ok(cucore_graph_node_get_params(hn, &p));
  assert_ptr_equal(p.host.fn, host_b);

  assert_ok(cucore_graph_node_get_params(rec, &p));
  p.event.event = e2;
  assert_ok(cucore_graph_node_set_params(rec, &p));
  assert_ok(cucore_graph_node_get_params(rec, &p));
  assert_ptr_equal(p.event.event, e2);

  assert_ok(cucore_graph_node_get_params(ch, &p));
  assert_status(cucore_graph_node_set_params(ch, &p), CUCORE_NOT_SUPPORTED);
  assert_contains(cucore_last_error(), "edit its embedded graph");
  assert_ok(cucore_graph_destroy(g));
  assert_ok(cucore_graph_destroy(child));
  assert_ok(cucore_event_destroy(e1)); /* the graph held them; gone with it */
  assert_ok(cucore_event_destroy(e2));
}

/* In an executable graph: the swap, then per-node argument updates for the new kernel; each
 * rule of the driver's named. */
static void executable_graph_rules(void **state) {
  (void)state;
  cucore_graph *g = NULL, *child = NULL, *other = NULL, *big = NULL;
  assert_ok(cucore_graph_create(dev, &g));
  assert_ok(cucore_graph_create(dev, &child));
  assert_ok(cucore_graph_create(dev, &other));
  assert_ok(cucore_graph_create(dev, &big));
  cucore_args *a = NULL, *b = NULL;
  assert_ok(cucore_args_create(k, &a));
  assert_ok(cucore_args_create(k2, &b));
  assert_ok(CUCORE_ARGS(a, buf, 5u));
  assert_ok(CUCORE_ARGS(b, buf, 6u, 7u));
  cucore_launch_config c = config(2, 64);
  static char host[256];
  cucore_graph_node *kn, *fill, *copy, *ch, *n1, *n2, *foreign, *late;
  assert_ok(cucore_graph_add_kernel_node(g, NULL, 0, k, &c, a, &kn));
  assert_ok(cucore_graph_add_memset_node(g, NULL, 0, buf, 1, 4, 16, &fill));
  assert_ok(cucore_graph_add_memcpy_htod_node(g, NULL, 0, buf, host, 64, &copy));
  assert_ok(cucore_graph_add_empty_node(child, NULL, 0, &n1));
  assert_ok(cucore_graph_add_child_graph_node(g, NULL, 0, child, &ch));
  assert_ok(cucore_graph_add_empty_node(other, NULL, 0, &foreign));
  assert_ok(cucore_graph_add_empty_node(big, NULL, 0, &n1));
  assert_ok(cucore_graph_add_empty_node(big, &n1, 1, &n2));
  cucore_graph_exec *e = NULL;
  assert_ok(cucore_graph_instantiate(g, 0, NULL, &e));
  int before = exec_sets();

  cucore_graph_node_params p;
  assert_ok(cucore_graph_node_get_params(kn, &p));
  p.kernel.kernel = k2;
  p.kernel.args = b;
  assert_ok(cucore_graph_exec_set_node_params(e, kn, &p));
  assert_int_equal(exec_sets(), before + 1);
  assert_status(cucore_graph_exec_set_kernel_args(e, kn, a), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "made for kernel `k`, not for `k2`");
  assert_ok(cucore_graph_exec_set_kernel_args(e, kn, b)); /* the executable graph's kernel */
  assert_ok(cucore_graph_node_get_params(kn, &p));
  assert_ptr_equal(p.kernel.kernel, k); /* the graph is not changed */

  assert_ok(cucore_graph_node_get_params(fill, &p));
  p.memset.height = 2;
  p.memset.pitch = 64;
  assert_status(cucore_graph_exec_set_node_params(e, fill, &p), CUCORE_GRAPH_UPDATE);
  assert_contains(cucore_last_error(), "only become another fill of one row");
  p.memset.height = 1;
  p.memset.value = 3;
  assert_ok(cucore_graph_exec_set_node_params(e, fill, &p));

  assert_ok(cucore_graph_node_get_params(copy, &p));
  p.memcpy.src_end = CUCORE_COPY_END_DEVICE;
  p.memcpy.copy.src = buf + 2048;
  assert_status(cucore_graph_exec_set_node_params(e, copy, &p), CUCORE_GRAPH_UPDATE);
  assert_contains(cucore_last_error(), "the copy was host to device, the new one is device to "
                                       "device");

  assert_ok(cucore_graph_node_get_params(ch, &p));
  p.child = big;
  assert_status(cucore_graph_exec_set_node_params(e, ch, &p), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "it has 1 nodes, the new one 2");
  p.child = other;
  assert_ok(cucore_graph_exec_set_node_params(e, ch, &p));

  assert_ok(cucore_graph_add_empty_node(g, NULL, 0, &late));
  assert_ok(cucore_graph_node_get_params(late, &p));
  assert_status(cucore_graph_exec_set_node_params(e, late, &p), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "added to the graph after the executable graph");
  assert_status(cucore_graph_exec_set_node_params(e, foreign, &p), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "it is of another graph");
  assert_ok(cucore_graph_exec_destroy(e));
  assert_ok(cucore_args_destroy(a));
  assert_ok(cucore_args_destroy(b));
  assert_ok(cucore_graph_destroy(big));
  assert_ok(cucore_graph_destroy(other));
  assert_ok(cucore_graph_destroy(child));
  assert_ok(cucore_graph_destroy(g));
}

/* 2D fills and 2D/3D copies added as nodes: their footprints checked when added. */
static void pitched_fills_and_copies(void **state) {
  (void)state;
  cucore_graph *g = NULL;
  assert_ok(cucore_graph_create(dev, &g));
  cucore_graph_node *f2 = NULL, *c3 = NULL, *bad = NULL;
  /* 16 rows of 32 floats, 256 bytes apart: 3968 bytes of the 4096. */
  assert_ok(cucore_graph_add_memset_2d_node(g, NULL, 0, buf, 256, 7, 4, 32, 16, &f2));
  assert_status(cucore_graph_add_memset_2d_node(g, NULL, 0, buf, 256, 7, 4, 32, 17, &bad),
                CUCORE_OUT_OF_BOUNDS);
  assert_contains(cucore_last_error(), "17 rows of 128 bytes, pitch 256");
  assert_status(cucore_graph_add_memset_2d_node(g, NULL, 0, buf, 64, 7, 4, 32, 2, &bad),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "pitch of 64 bytes");
  cucore_graph_node_params p;
  assert_ok(cucore_graph_node_get_params(f2, &p));
  assert_int_equal(p.memset.height, 16);
  assert_int_equal(p.memset.pitch, 256);
  static char host[2048];
  cucore_copy_3d c;
  memset(&c, 0, sizeof c);
  c.src = CUCORE_HOST_ADDR(host);
  c.src_pitch = 128;
  c.src_height = 4;
  c.dst = buf;
  c.dst_pitch = 256;
  c.dst_height = 4;
  c.width_bytes = 100;
  c.height = 4;
  c.depth = 4; /* destination: 3 slices of 1024 + 3 rows of 256 + 100 = 3940 bytes */
  assert_ok(cucore_graph_add_memcpy_3d_node(g, &f2, 1, &c, &c3));
  assert_ok(cucore_graph_node_get_params(c3, &p));
  assert_int_equal(p.memcpy.copy.depth, 4);
  assert_int_equal(p.memcpy.copy.dst_pitch, 256);
  assert_int_equal(p.memcpy.dst_end, CUCORE_COPY_END_UNIFIED);
  c.dst = buf + 200;
  assert_status(cucore_graph_add_memcpy_3d_node(g, NULL, 0, &c, &bad), CUCORE_OUT_OF_BOUNDS);
  assert_contains(cucore_last_error(), "destination");
  c.dst = buf;
  c.depth = 0;
  assert_status(cucore_graph_add_memcpy_3d_node(g, NULL, 0, &c, &bad), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_graph_add_memcpy_dtod_node(g, NULL, 0, buf + 4000, buf, 200, &bad),
                CUCORE_OUT_OF_BOUNDS);
  assert_status(cucore_graph_add_memset_node(g, NULL, 0, buf + 4000, 0, 4, 25, &bad),
                CUCORE_OUT_OF_BOUNDS);
  assert_ok(cucore_graph_destroy(g));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(kernel_node_swapped),
      cmocka_unit_test(other_nodes_changed),
      cmocka_unit_test(executable_graph_rules),
      cmocka_unit_test(pitched_fills_and_copies),
  };
  return cmocka_run_group_tests(tests, open_fake, close_fake);
}
