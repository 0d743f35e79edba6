/* gpu_graph_inspect.c -- a graph as the driver has it, on a real GPU (label gpu): a captured
 * graph (copy in, two kernels, copy out) listed node by node with its edges, every node's
 * parameters read back (the kernels' argument values as launched); a captured kernel node given
 * new values through cucore and the graph's output following them; a built graph of every kind
 * of node (kernel, fill, copy, host, event record and wait, child graph, conditional) read back;
 * an edge removed and a node destroyed, the graph's output showing both; the CUDA 13.1 ids, or
 * CUCORE_DRIVER_TOO_OLD before that driver; nodes given new parameters in a graph and in an
 * executable graph (a fill's value, a kernel swapped for another, a copy's destination, a host
 * function), the outputs following each, and a 2D fill refused in an executable graph; a 2D
 * fill of pitched memory copied into an array and out to the host by 2D/3D copy nodes; a
 * capture forked and joined, given a child graph and an if node with a captured body. */
#include "gpu_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static cucore_device *dev;
static cucore_stream *s;
static cucore_object *obj;
static int driver_version;

static const char *source = CUCORE_GRAPH_SET_CONDITIONAL_DECL
    "extern \"C\" __global__ void axpb(float *x, float a, float b, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] = a * x[i] + b; }\n"
    "extern \"C\" __global__ void axmb(float *x, float a, float b, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] = a * x[i] - b; }\n"
    "extern \"C\" __global__ void mark(int *p, int v) {\n"
    "  if (threadIdx.x == 0 && blockIdx.x == 0) p[0] = v; }\n";

enum { N = 4096 };

static int setup(void **state) {
  (void)state;
  if (cucore_device_open(0, &dev) != CUCORE_OK) return -1;
  if (cucore_stream_create(dev, CUCORE_STREAM_NON_BLOCKING, 0, &s) != CUCORE_OK) return -1;
  cucore_versions_info v;
  if (cucore_versions(&v) != CUCORE_OK) return -1;
  driver_version = v.driver.version;
  obj = gpu_compile(source, CUCORE_CODE_CUBIN, NULL, NULL);
  return obj ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  cucore_object_destroy(obj);
  cucore_stream_destroy(s);
  return cucore_device_close(dev) == CUCORE_OK ? 0 : -1;
}

static cucore_launch_config cfg1d(unsigned grid, unsigned block, cucore_stream *st) {
  cucore_launch_config c;
  memset(&c, 0, sizeof c);
  c.grid[0] = grid;
  c.block[0] = block;
  c.stream = st;
  return c;
}

/* The float at parameter `i` of an argument list (the kernel's layout). */
static float arg_f32(cucore_args *a, int i) {
  void **params = NULL;
  assert_ok(cucore_args_get_native(a, &params, NULL, NULL));
  float v;
  memcpy(&v, params[i], sizeof v);
  return v;
}

static int has_edge(const cucore_graph_edge *e, size_t n, const cucore_graph_node *from,
                    const cucore_graph_node *to) {
  for (size_t i = 0; i < n; i++)
    if (e[i].from == from && e[i].to == to) return 1;
  return 0;
}

/* Runs `e` once on `hin` and checks `hout` against x -> a2 * (a1 * x + b1) + b2. */
static void run_and_check(cucore_graph_exec *e, float *hin, float *hout, float a1, float b1,
                          float a2, float b2, const char *what) {
  for (int i = 0; i < N; i++) hin[i] = (float)(i % 97) - 48.0f;
  assert_ok(cucore_graph_launch(e, s));
  assert_ok(cucore_stream_synchronize(s));
  for (int i = 0; i < N; i++) {
    float want = a2 * (a1 * hin[i] + b1) + b2;
    if (hout[i] != want) fail_msg("%s: out[%d] = %g, the CPU says %g", what, i, hout[i], want);
  }
  print_message("%s: %d elements match the CPU\n", what, N);
}

/* A captured graph listed, read back, and its kernel node changed through cucore. */
static void captured_graph_read_and_changed(void **state) {
  (void)state;
  cucore_kernel *k = gpu_kernel(obj, "axpb");
  cucore_args *a1 = NULL, *a2 = NULL;
  assert_ok(cucore_args_create(k, &a1));
  assert_ok(cucore_args_create(k, &a2));
  float *hin = NULL, *hout = NULL;
  assert_ok(cucore_host_alloc(dev, N * sizeof(float), (void **)&hin));
  assert_ok(cucore_host_alloc(dev, N * sizeof(float), (void **)&hout));
  cucore_devptr x;
  assert_ok(cucore_mem_alloc(dev, N * sizeof(float), &x));
  int n = N;
  assert_ok(CUCORE_ARGS(a1, x, 2.0f, 1.0f, n));
  assert_ok(CUCORE_ARGS(a2, x, 0.5f, 3.0f, n));
  cucore_launch_config c = cfg1d(N / 128, 128, s);
  assert_ok(cucore_stream_begin_capture(s, CUCORE_CAPTURE_GLOBAL));
  assert_ok(cucore_memcpy_htod(dev, x, hin, N * sizeof(float), s));
  assert_ok(cucore_launch(k, &c, a1));
  assert_ok(cucore_launch(k, &c, a2));
  assert_ok(cucore_memcpy_dtoh(dev, hout, x, N * sizeof(float), s));
  cucore_graph *g = NULL;
  assert_ok(cucore_stream_end_capture(s, &g));

  cucore_graph_node *nodes[8];
  size_t count = 0;
  assert_ok(cucore_graph_get_nodes(g, nodes, 8, &count));
  assert_int_equal(count, 4);
  cucore_graph_node_type want[4] = {CUCORE_GRAPH_NODE_MEMCPY, CUCORE_GRAPH_NODE_KERNEL,
                                    CUCORE_GRAPH_NODE_KERNEL, CUCORE_GRAPH_NODE_MEMCPY};
  cucore_graph_node *by_type[4] = {NULL};
  for (size_t i = 0; i < count; i++) {
    cucore_graph_node_params p;
    assert_ok(cucore_graph_node_get_params(nodes[i], &p));
    if (p.type == CUCORE_GRAPH_NODE_MEMCPY)
      by_type[p.memcpy.dst_end == CUCORE_COPY_END_DEVICE ? 0 : 3] = nodes[i];
    if (p.type == CUCORE_GRAPH_NODE_KERNEL) {
      assert_string_equal(p.kernel.name, "axpb");
      assert_int_equal(p.kernel.grid[0], N / 128);
      assert_int_equal(p.kernel.block[0], 128);
      by_type[arg_f32(p.kernel.args, 1) == 2.0f ? 1 : 2] = nodes[i];
    }
    if (p.type == CUCORE_GRAPH_NODE_MEMCPY)
      assert_int_equal(p.memcpy.copy.width_bytes, N * sizeof(float));
  }
  for (int i = 0; i < 4; i++) {
    cucore_graph_node_type t;
    assert_non_null(by_type[i]);
    assert_ok(cucore_graph_node_get_type(by_type[i], &t));
    assert_int_equal(t, want[i]);
  }
  cucore_graph_edge edges[8];
  assert_ok(cucore_graph_get_edges(g, edges, 8, &count));
  assert_int_equal(count, 3);
  for (int i = 0; i < 3; i++) assert_true(has_edge(edges, count, by_type[i], by_type[i + 1]));
  print_message("captured graph: 4 nodes, 3 edges, the kernels' values as launched\n");

  /* The second kernel's values changed through cucore: the graph's output follows. */
  cucore_graph_node_params p;
  assert_ok(cucore_graph_node_get_params(by_type[2], &p));
  cucore_args *a3 = NULL;
  assert_ok(cucore_args_create(p.kernel.kernel, &a3));
  assert_ok(cucore_args_set_ptr(a3, 0, x));
  assert_ok(cucore_args_set_f32(a3, 1, -1.0f));
  assert_ok(cucore_args_set_f32(a3, 2, 5.0f));
  assert_ok(cucore_args_set_i32(a3, 3, N));
  assert_ok(cucore_graph_kernel_node_set_args(by_type[2], a3));
  cucore_graph_exec *e = NULL;
  assert_ok(cucore_graph_instantiate(g, 0, NULL, &e));
  run_and_check(e, hin, hout, 2.0f, 1.0f, -1.0f, 5.0f, "captured graph, second kernel changed");
  cucore_graph_exec_destroy(e);
  cucore_args_destroy(a3);
  cucore_graph_destroy(g);
  cucore_args_destroy(a1);
  cucore_args_destroy(a2);
  cucore_kernel_destroy(k);
  cucore_mem_free(dev, x);
  cucore_host_free(dev, hin);
  cucore_host_free(dev, hout);
}

static void count_call(void *user) { (*(int *)user)++; }

/* The CUDA 13.1 ids of a graph, an executable graph and a node, or CUCORE_DRIVER_TOO_OLD before
 * that driver. */
static void check_ids(cucore_graph *g, cucore_graph_exec *e, cucore_graph_node *kn) {
  unsigned gid = 0, xid = 0, nid = 0;
  cucore_status st = cucore_graph_get_id(g, &gid);
  if (driver_version >= 13010) {
    assert_ok(st);
    assert_ok(cucore_graph_exec_get_id(e, &xid));
    assert_ok(cucore_graph_node_get_id(kn, &nid));
    print_message("ids: graph %u, executable graph %u, node %u\n", gid, xid, nid);
  } else {
    assert_int_equal(st, CUCORE_DRIVER_TOO_OLD);
    assert_contains(cucore_last_error(), "CUDA 13.1");
    assert_int_equal(cucore_graph_node_get_id(kn, &nid), CUCORE_DRIVER_TOO_OLD);
    print_message("ids: the driver (%d) is older than CUDA 13.1: CUCORE_DRIVER_TOO_OLD\n",
                  driver_version);
  }
}

/* The parameters of built_graph_read_and_edited's nodes (kernel, fill, host, child graph in
 * `n`; record, wait, copy), each as it was added. */
static void read_back_built(cucore_graph_node *const n[4], cucore_kernel *k, cucore_event *ev,
                            int *calls, cucore_graph_node *rec, cucore_graph_node *wait,
                            cucore_graph_node *tail, cucore_devptr buf) {
  cucore_graph_node *kn = n[0], *fill = n[1], *host = n[2], *ch = n[3];
  cucore_graph_node_params p;
  assert_ok(cucore_graph_node_get_params(kn, &p));
  assert_ptr_equal(p.kernel.kernel, k);
  assert_ok(cucore_graph_node_get_params(fill, &p));
  assert_int_equal(p.memset.element_size, 4);
  assert_int_equal(p.memset.width, 256);
  assert_int_equal(p.memset.value, 7);
  assert_ok(cucore_graph_node_get_params(host, &p));
  assert_ptr_equal(p.host.user, calls);
  assert_ok(cucore_graph_node_get_params(rec, &p));
  assert_ptr_equal(p.event.event, ev);
  assert_ok(cucore_graph_node_get_params(wait, &p));
  assert_ptr_equal(p.event.event, ev);
  assert_ok(cucore_graph_node_get_params(ch, &p));
  size_t count = 0;
  cucore_graph_node *inner[2];
  assert_ok(cucore_graph_get_nodes(p.child, inner, 2, &count));
  assert_int_equal(count, 1);
  assert_ok(cucore_graph_node_get_params(tail, &p));
  assert_int_equal(p.memcpy.src_end, CUCORE_COPY_END_DEVICE);
  assert_int_equal(p.memcpy.copy.src, buf);
  assert_int_equal(p.memcpy.copy.dst, buf + 512);
}

/* Every kind of node read back; an edge removed and a node destroyed, and the graph runs. */
static void built_graph_read_and_edited(void **state) {
  (void)state;
  cucore_kernel *k = gpu_kernel(obj, "mark");
  cucore_args *a = NULL;
  assert_ok(cucore_args_create(k, &a));
  cucore_devptr flag, buf;
  assert_ok(cucore_mem_alloc(dev, 256, &flag));
  assert_ok(cucore_mem_alloc(dev, 1024, &buf));
  assert_ok(cucore_memset_d8(dev, flag, 0, 256, NULL));
  assert_ok(CUCORE_ARGS(a, flag, 41));
  cucore_event *ev = NULL;
  assert_ok(cucore_event_create(dev, CUCORE_EVENT_DISABLE_TIMING, &ev));
  cucore_graph *g = NULL, *child = NULL;
  assert_ok(cucore_graph_create(dev, &g));
  assert_ok(cucore_graph_create(dev, &child));
  cucore_graph_node *cn, *kn, *fill, *host, *rec, *wait, *ch, *tail;
  assert_ok(cucore_graph_add_empty_node(child, NULL, 0, &cn));
  cucore_launch_config c = cfg1d(1, 32, NULL);
  static int calls;
  calls = 0;
  assert_ok(cucore_graph_add_kernel_node(g, NULL, 0, k, &c, a, &kn));
  assert_ok(cucore_graph_add_memset_node(g, &kn, 1, buf, 7, 4, 256, &fill));
  assert_ok(cucore_graph_add_host_node(g, &fill, 1, count_call, &calls, NULL, &host));
  assert_ok(cucore_graph_add_event_record_node(g, &host, 1, ev, &rec));
  assert_ok(cucore_graph_add_event_wait_node(g, &rec, 1, ev, &wait));
  assert_ok(cucore_graph_add_child_graph_node(g, &wait, 1, child, &ch));
  assert_ok(cucore_graph_add_memcpy_dtod_node(g, &ch, 1, buf + 512, buf, 512, &tail));
  cucore_graph_node *inner[2];
  size_t count = 0;
  cucore_graph_node *nodes[4] = {kn, fill, host, ch};
  read_back_built(nodes, k, ev, &calls, rec, wait, tail, buf);
  assert_ok(cucore_graph_get_root_nodes(g, inner, 2, &count));
  assert_int_equal(count, 1);

  /* The host node goes with its edges (the record node becomes a root); then the fill loses its
   * edge from the kernel. */
  assert_ok(cucore_graph_node_destroy(host));
  assert_ok(cucore_graph_get_root_nodes(g, inner, 2, &count));
  assert_int_equal(count, 2);
  assert_ok(cucore_graph_remove_dependency(g, kn, fill));
  assert_ok(cucore_graph_get_root_nodes(g, NULL, 0, &count));
  assert_int_equal(count, 3);
  cucore_graph_exec *e = NULL;
  assert_ok(cucore_graph_instantiate(g, 0, NULL, &e));
  assert_ok(cucore_graph_launch(e, s));
  assert_ok(cucore_stream_synchronize(s));
  assert_int_equal(calls, 0); /* the host node is gone */
  int got[256];
  assert_ok(cucore_memcpy_dtoh(dev, got, buf + 512, 512, NULL));
  for (int i = 0; i < 128; i++) assert_int_equal(got[i], 7);
  assert_ok(cucore_memcpy_dtoh(dev, got, flag, 4, NULL));
  assert_int_equal(got[0], 41);
  print_message("built graph: 7 kinds read back; after a node destroyed and an edge removed it "
                "runs the rest\n");

  check_ids(g, e, kn);
  cucore_graph_exec_destroy(e);
  cucore_graph_destroy(child);
  cucore_graph_destroy(g);
  cucore_event_destroy(ev);
  cucore_args_destroy(a);
  cucore_kernel_destroy(k);
  cucore_mem_free(dev, flag);
  cucore_mem_free(dev, buf);
}

/* A conditional node built by cucore and one captured into a body: read back. */
static void conditional_read_back(void **state) {
  (void)state;
  if (driver_version < 12080) skip();
  cucore_graph *g = NULL;
  assert_ok(cucore_graph_create(dev, &g));
  cucore_graph_condition cond = 0;
  assert_ok(cucore_graph_condition_create(g, 1, CUCORE_CONDITION_ASSIGN_DEFAULT, &cond));
  cucore_graph *bodies[2] = {NULL, NULL};
  cucore_graph_node *cn = NULL, *b0 = NULL;
  assert_ok(
      cucore_graph_add_conditional_node(g, NULL, 0, cond, CUCORE_CONDITIONAL_IF, 2, bodies, &cn));
  assert_ok(cucore_graph_add_empty_node(bodies[0], NULL, 0, &b0));
  cucore_graph_node_params p;
  assert_ok(cucore_graph_node_get_params(cn, &p));
  assert_int_equal(p.conditional.cond, cond);
  assert_int_equal(p.conditional.type, CUCORE_CONDITIONAL_IF);
  assert_int_equal(p.conditional.body_count, 2);
  assert_ptr_equal(p.conditional.bodies[1], bodies[1]);
  cucore_graph_node *inner[2];
  size_t count = 0;
  assert_ok(cucore_graph_get_nodes(bodies[0], inner, 2, &count));
  assert_int_equal(count, 1);
  assert_ptr_equal(inner[0], b0);
  print_message("conditional node: condition, type and bodies read back\n");
  cucore_graph_destroy(g);
}

static void count_into(void *user) { (*(int *)user)++; }

static uint32_t bits_of(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

static void expect_all(const float *h, float want, const char *what) {
  for (int i = 0; i < N; i++)
    if (h[i] != want) fail_msg("%s: out[%d] = %g, expected %g", what, i, h[i], want);
  print_message("%s: %d elements are %g\n", what, N, want);
}

/* In the graph: the kernel node's a = 4; a new executable graph runs it (the host function
 * called a second time), the old one is not changed. */
static void graph_changed_and_instantiated_again(cucore_graph *g, cucore_graph_node *kn,
                                                 cucore_args *a, float *h1, int *c1) {
  cucore_graph_node_params p;
  cucore_graph_exec *e2 = NULL;
  assert_ok(cucore_graph_node_get_params(kn, &p));
  assert_ok(cucore_args_set_f32(a, 1, 4.0f));
  p.kernel.args = a;
  assert_ok(cucore_graph_node_set_params(kn, &p));
  assert_ok(cucore_graph_instantiate(g, 0, NULL, &e2));
  assert_ok(cucore_graph_launch(e2, s));
  assert_ok(cucore_stream_synchronize(s));
  expect_all(h1, 5.0f, "graph changed, instantiated again (4 x 1 + 1)");
  assert_int_equal(*c1, 2);
  cucore_graph_exec_destroy(e2);
}

/* fill x with 1.0 -> x = a x + b -> copy out -> host function: changed in the graph and in an
 * executable graph, the outputs following each change. */
static void nodes_updated(void **state) {
  (void)state;
  cucore_kernel *k = gpu_kernel(obj, "axpb"), *k2 = gpu_kernel(obj, "axmb");
  cucore_args *a = NULL, *b = NULL;
  assert_ok(cucore_args_create(k, &a));
  assert_ok(cucore_args_create(k2, &b));
  cucore_devptr x;
  assert_ok(cucore_mem_alloc(dev, N * sizeof(float), &x));
  float *h1 = NULL, *h2 = NULL;
  assert_ok(cucore_host_alloc(dev, N * sizeof(float), (void **)&h1));
  assert_ok(cucore_host_alloc(dev, N * sizeof(float), (void **)&h2));
  int n = N, c1 = 0, c2 = 0;
  assert_ok(CUCORE_ARGS(a, x, 2.0f, 1.0f, n));
  assert_ok(CUCORE_ARGS(b, x, 3.0f, 1.0f, n));
  cucore_graph *g = NULL;
  assert_ok(cucore_graph_create(dev, &g));
  cucore_graph_node *fill, *kn, *copy, *host;
  cucore_launch_config c = cfg1d(N / 128, 128, NULL);
  assert_ok(cucore_graph_add_memset_node(g, NULL, 0, x, bits_of(1.0f), 4, N, &fill));
  assert_ok(cucore_graph_add_kernel_node(g, &fill, 1, k, &c, a, &kn));
  assert_ok(cucore_graph_add_memcpy_dtoh_node(g, &kn, 1, h1, x, N * sizeof(float), &copy));
  assert_ok(cucore_graph_add_host_node(g, &copy, 1, count_into, &c1, NULL, &host));
  cucore_graph_exec *e = NULL;
  assert_ok(cucore_graph_instantiate(g, 0, NULL, &e));
  assert_ok(cucore_graph_launch(e, s));
  assert_ok(cucore_stream_synchronize(s));
  expect_all(h1, 3.0f, "as built (2 x 1 + 1)");

  /* In the executable graph: the fill 2.0, the kernel swapped (3 x - 1), the copy into h2, the
   * host function's argument. */
  cucore_graph_node_params p;
  assert_ok(cucore_graph_node_get_params(fill, &p));
  p.memset.value = bits_of(2.0f);
  assert_ok(cucore_graph_exec_set_node_params(e, fill, &p));
  p.memset.height = 2;
  p.memset.width = N / 2;
  p.memset.pitch = N / 2 * sizeof(float);
  assert_int_equal(cucore_graph_exec_set_node_params(e, fill, &p), CUCORE_GRAPH_UPDATE);
  assert_ok(cucore_graph_node_get_params(kn, &p));
  p.kernel.kernel = k2;
  p.kernel.args = b;
  assert_ok(cucore_graph_exec_set_node_params(e, kn, &p));
  assert_ok(cucore_graph_node_get_params(copy, &p));
  p.memcpy.copy.dst = CUCORE_HOST_ADDR(h2);
  assert_ok(cucore_graph_exec_set_node_params(e, copy, &p));
  assert_ok(cucore_graph_node_get_params(host, &p));
  p.host.user = &c2;
  assert_ok(cucore_graph_exec_set_node_params(e, host, &p));
  assert_ok(cucore_graph_launch(e, s));
  assert_ok(cucore_stream_synchronize(s));
  expect_all(h2, 5.0f, "executable graph changed (3 x 2 - 1, into h2)");
  assert_int_equal(c1, 1);
  assert_int_equal(c2, 1);
  /* The swapped kernel's values, per node, as usual. */
  assert_ok(cucore_args_set_f32(b, 1, 4.0f));
  assert_ok(cucore_graph_exec_set_kernel_args(e, kn, b));
  assert_ok(cucore_graph_launch(e, s));
  assert_ok(cucore_stream_synchronize(s));
  expect_all(h2, 7.0f, "then its arguments (4 x 2 - 1)");

  graph_changed_and_instantiated_again(g, kn, a, h1, &c1);
  cucore_graph_exec_destroy(e);
  cucore_graph_destroy(g);
  cucore_args_destroy(a);
  cucore_args_destroy(b);
  cucore_kernel_destroy(k);
  cucore_kernel_destroy(k2);
  cucore_mem_free(dev, x);
  cucore_host_free(dev, h1);
  cucore_host_free(dev, h2);
}

/* A 2D fill of pitched memory, copied into a 2D array and from it to the host, as nodes. */
static void pitched_and_array_nodes(void **state) {
  (void)state;
  enum { W = 64, H = 32 };
  cucore_devptr d = 0;
  size_t pitch = 0;
  assert_ok(cucore_mem_alloc_pitch(dev, W * sizeof(float), H, 4, &d, &pitch));
  cucore_array_desc desc;
  memset(&desc, 0, sizeof desc);
  desc.width = W;
  desc.height = H;
  desc.format = CUCORE_FORMAT_FLOAT;
  desc.channels = 1;
  cucore_array *arr = NULL;
  assert_ok(cucore_array_create(dev, &desc, &arr));
  float *h = NULL;
  assert_ok(cucore_host_alloc(dev, W * H * sizeof(float), (void **)&h));
  memset(h, 0, W * H * sizeof(float));
  cucore_graph *g = NULL;
  assert_ok(cucore_graph_create(dev, &g));
  cucore_graph_node *fill, *to_arr, *to_host;
  assert_ok(cucore_graph_add_memset_2d_node(g, NULL, 0, d, pitch, bits_of(3.0f), 4, W, H, &fill));
  cucore_copy_3d c;
  memset(&c, 0, sizeof c);
  c.src = d;
  c.src_pitch = pitch;
  c.dst_array = arr;
  c.width_bytes = W * sizeof(float);
  c.height = H;
  c.depth = 1;
  assert_ok(cucore_graph_add_memcpy_3d_node(g, &fill, 1, &c, &to_arr));
  memset(&c, 0, sizeof c);
  c.src_array = arr;
  c.dst = CUCORE_HOST_ADDR(h);
  c.dst_pitch = W * sizeof(float);
  c.width_bytes = W * sizeof(float);
  c.height = H;
  c.depth = 1;
  assert_ok(cucore_graph_add_memcpy_3d_node(g, &to_arr, 1, &c, &to_host));
  c.height = H + 1; /* past the array's rows */
  cucore_graph_node *bad = NULL;
  assert_int_equal(cucore_graph_add_memcpy_3d_node(g, NULL, 0, &c, &bad), CUCORE_OUT_OF_BOUNDS);
  cucore_graph_node_params p;
  assert_ok(cucore_graph_node_get_params(to_arr, &p));
  assert_int_equal(p.memcpy.dst_end, CUCORE_COPY_END_ARRAY);
  assert_non_null(p.memcpy.dst_cuarray);
  cucore_graph_exec *e = NULL;
  assert_ok(cucore_graph_instantiate(g, 0, NULL, &e));
  assert_ok(cucore_graph_launch(e, s));
  assert_ok(cucore_stream_synchronize(s));
  for (int i = 0; i < W * H; i++)
    if (h[i] != 3.0f) fail_msg("element %d is %g, the 2D fill wrote 3", i, h[i]);
  print_message("2D fill -> array -> host as graph nodes: %d elements are 3\n", W * H);
  cucore_graph_exec_destroy(e);
  cucore_graph_destroy(g);
  cucore_array_destroy(arr);
  cucore_host_free(dev, h);
  cucore_mem_free(dev, d);
}

/* A capture forked onto two helpers and joined, a child graph embedded and an if node whose
 * body is captured from a third stream, all without leaving the capture; the graph it gives
 * computes what the CPU says. */
static void capture_with_forks_children_and_conditionals(void **state) {
  (void)state;
  if (driver_version < 12040) skip();
  cucore_kernel *k = gpu_kernel(obj, "axpb");
  cucore_stream *h1 = NULL, *h2 = NULL, *b = NULL;
  assert_ok(cucore_stream_create(dev, CUCORE_STREAM_NON_BLOCKING, 0, &h1));
  assert_ok(cucore_stream_create(dev, CUCORE_STREAM_NON_BLOCKING, 0, &h2));
  assert_ok(cucore_stream_create(dev, CUCORE_STREAM_NON_BLOCKING, 0, &b));
  cucore_devptr x, y;
  assert_ok(cucore_mem_alloc(dev, N * sizeof(float), &x));
  assert_ok(cucore_mem_alloc(dev, N * sizeof(float), &y));
  assert_ok(cucore_memset_d32(dev, x, bits_of(1.0f), N, NULL));
  assert_ok(cucore_memset_d32(dev, y, bits_of(1.0f), N, NULL));
  int n = N;
  cucore_args *ax[4], *ay = NULL;
  float as[4] = {2.0f, 1.0f, 1.0f, 1.0f}, bs[4] = {1.0f, 1.0f, 10.0f, 0.5f};
  for (int i = 0; i < 4; i++) {
    assert_ok(cucore_args_create(k, &ax[i]));
    assert_ok(CUCORE_ARGS(ax[i], x, as[i], bs[i], n));
  }
  assert_ok(cucore_args_create(k, &ay));
  assert_ok(CUCORE_ARGS(ay, y, 3.0f, 0.0f, n));
  cucore_graph *child = NULL;
  cucore_graph_node *cn = NULL;
  cucore_launch_config c = cfg1d(N / 128, 128, NULL);
  assert_ok(cucore_graph_create(dev, &child));
  assert_ok(cucore_graph_add_kernel_node(child, NULL, 0, k, &c, ax[1], &cn)); /* x + 1 */
  cucore_stream *helpers[2] = {h1, h2};
  c.stream = s;
  cucore_launch_config ch = cfg1d(N / 128, 128, h1), cb = cfg1d(N / 128, 128, b);
  assert_ok(cucore_stream_begin_capture(s, CUCORE_CAPTURE_GLOBAL));
  assert_ok(cucore_launch(k, &c, ax[0])); /* x = 2x + 1 */
  assert_ok(cucore_stream_capture_fork(s, helpers, 2));
  assert_ok(cucore_launch(k, &ch, ay)); /* y = 3y, on a helper */
  assert_ok(cucore_stream_capture_join(s, helpers, 2));
  assert_ok(cucore_stream_capture_add_graph(s, child)); /* x = x + 1 */
  cucore_graph_condition cond = 0;
  assert_ok(cucore_stream_capture_condition_create(s, 1, CUCORE_CONDITION_ASSIGN_DEFAULT, &cond));
  cucore_graph *bodies[1] = {NULL};
  assert_ok(cucore_stream_capture_add_conditional(s, cond, CUCORE_CONDITIONAL_IF, 1, bodies));
  assert_ok(cucore_stream_begin_capture_to_graph(b, bodies[0], NULL, 0, CUCORE_CAPTURE_RELAXED));
  assert_ok(cucore_launch(k, &cb, ax[2])); /* x = x + 10, in the body */
  assert_ok(cucore_stream_end_capture(b, NULL));
  assert_ok(cucore_launch(k, &c, ax[3])); /* x = x + 0.5 */
  cucore_graph *g = NULL;
  assert_ok(cucore_stream_end_capture(s, &g));
  size_t count = 0;
  assert_ok(cucore_graph_get_nodes(g, NULL, 0, &count));
  print_message("captured graph with fork/join, child graph and if node: %zu nodes\n", count);
  cucore_graph_exec *e = NULL;
  assert_ok(cucore_graph_instantiate(g, 0, NULL, &e));
  assert_ok(cucore_graph_launch(e, s));
  assert_ok(cucore_stream_synchronize(s));
  float *h = malloc(N * sizeof(float));
  assert_ok(cucore_memcpy_dtoh(dev, h, x, N * sizeof(float), NULL));
  expect_all(h, 2.0f * 1.0f + 1.0f + 1.0f + 10.0f + 0.5f, "x through the captured graph");
  assert_ok(cucore_memcpy_dtoh(dev, h, y, N * sizeof(float), NULL));
  expect_all(h, 3.0f, "y through the forked branch");
  free(h);
  cucore_graph_exec_destroy(e);
  cucore_graph_destroy(g);
  cucore_graph_destroy(child);
  for (int i = 0; i < 4; i++) cucore_args_destroy(ax[i]);
  cucore_args_destroy(ay);
  cucore_kernel_destroy(k);
  cucore_mem_free(dev, x);
  cucore_mem_free(dev, y);
  cucore_stream_destroy(h1);
  cucore_stream_destroy(h2);
  cucore_stream_destroy(b);
}

int main(void) {
  if (!cucore_test_have_gpu()) return CUCORE_TEST_SKIP;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(captured_graph_read_and_changed),
      cmocka_unit_test(built_graph_read_and_edited),
      cmocka_unit_test(conditional_read_back),
      cmocka_unit_test(nodes_updated),
      cmocka_unit_test(pitched_and_array_nodes),
      cmocka_unit_test(capture_with_forks_children_and_conditionals),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
