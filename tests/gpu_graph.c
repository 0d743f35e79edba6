/* gpu_graph.c -- CUDA graphs on a real GPU (label gpu): captured and node-by-node graphs give
 * the CPU's answers (fork/join, child graphs, host, copy, fill and event nodes, launch
 * attributes), updates (whole and per node, refused ones leave the graph as it was),
 * enabling and disabling nodes, conditional if / if-else / switch / while with the condition
 * set on the device, every error path (wrong node arguments, calls a capture forbids and the
 * stream afterwards, a capture the driver invalidated, an update of another shape), lifetimes
 * (kernel, object, arguments and graph destroyed before the executable graph runs) and the DOT
 * output. */
#include "gpu_support.h"
/* runtime.h: DRV(), a raw driver call that invalidates a capture; cc_refs_flush */
#include "runtime/runtime.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static cucore_device *dev;
static cucore_stream *s; /* non-blocking */
static cucore_object *obj;
static int driver_version;

static const char *source = CUCORE_GRAPH_SET_CONDITIONAL_DECL
    "extern \"C\" __global__ void fill_i(int *p, int v, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] = v; }\n"
    "extern \"C\" __global__ void muladd_i(int *p, int m, int a, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] = p[i] * m + a; }\n"
    "extern \"C\" __global__ void add_i(const int *x, const int *y, int *z, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) z[i] = x[i] + y[i]; }\n"
    "extern \"C\" __global__ void axpb(float *x, float a, float b, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] = a * x[i] + b; }\n"
    "extern \"C\" __global__ void countdown(cudaGraphConditionalHandle h, int *counter,\n"
    "                                      int *trips) {\n"
    "  if (threadIdx.x == 0 && blockIdx.x == 0) {\n"
    "    trips[0] += 1; int v = --counter[0]; cudaGraphSetConditional(h, v > 0 ? 1u : 0u); } }\n"
    "extern \"C\" __global__ void set_cond(cudaGraphConditionalHandle h, const int *value) {\n"
    "  if (threadIdx.x == 0 && blockIdx.x == 0) cudaGraphSetConditional(h, (unsigned)value[0]); }\n"
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

static cucore_args *new_args(cucore_kernel *k) {
  cucore_args *a = NULL;
  assert_ok(cucore_args_create(k, &a));
  return a;
}

static void read_ints(cucore_devptr p, int *out, int n) {
  assert_ok(cucore_memcpy_dtoh(dev, out, p, (size_t)n * sizeof(int), NULL));
}

/* Every element of device array `p` equals want(i); fails naming the first that does not. */
static void expect_ints(cucore_devptr p, int n, int (*want)(int i, const void *ctx),
                        const void *ctx, const char *what) {
  int *got = malloc((size_t)n * sizeof *got);
  read_ints(p, got, n);
  for (int i = 0; i < n; i++)
    if (got[i] != want(i, ctx)) {
      int g = got[i], w = want(i, ctx);
      free(got);
      fail_msg("%s: element %d is %d, the CPU says %d", what, i, g, w);
    }
  free(got);
  print_message("%s: %d elements match the CPU\n", what, n);
}

static int want_const(int i, const void *ctx) {
  (void)i;
  return *(const int *)ctx;
}

/* ---- capture ------------------------------------------------------------------------------ */

/* Copies in, two kernels, copy out: captured once, replayed with new input each time. */
static void captured_graph_replays_with_new_input(void **state) {
  (void)state;
  cucore_kernel *k = gpu_kernel(obj, "axpb");
  cucore_args *a1 = new_args(k), *a2 = new_args(k);
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
  cucore_capture_info info;
  assert_ok(cucore_stream_get_capture_info(s, &info));
  assert_int_equal(info.status, CUCORE_CAPTURE_ACTIVE);
  assert_int_equal(info.by_cucore, 1);
  assert_int_equal(info.is_origin, 1);
  assert_int_equal(info.mode, CUCORE_CAPTURE_GLOBAL);
  assert_ok(cucore_memcpy_htod(dev, x, hin, N * sizeof(float), s));
  assert_ok(cucore_launch(k, &c, a1));
  assert_ok(cucore_launch(k, &c, a2));
  assert_ok(cucore_memcpy_dtoh(dev, hout, x, N * sizeof(float), s));
  assert_ok(cucore_stream_get_capture_info(s, &info));
  assert_true(info.node_count >= 3);
  cucore_graph *g = NULL;
  assert_ok(cucore_stream_end_capture(s, &g));
  assert_ok(cucore_stream_get_capture_info(s, &info));
  assert_int_equal(info.status, CUCORE_CAPTURE_NONE);
  size_t nodes = 0;
  assert_ok(cucore_graph_get_node_count(g, &nodes));
  assert_int_equal(nodes, 4);
  cucore_graph_exec *e = NULL;
  assert_ok(cucore_graph_instantiate(g, CUCORE_GRAPH_INSTANTIATE_UPLOAD, s, &e));
  for (int round = 0; round < 3; round++) {
    for (int i = 0; i < N; i++) hin[i] = (float)((i * 7 + round * 13) % 101) - 50.0f;
    assert_ok(cucore_graph_launch(e, s));
    assert_ok(cucore_stream_synchronize(s));
    for (int i = 0; i < N; i++) {
      float want = 0.5f * (2.0f * hin[i] + 1.0f) + 3.0f;
      if (hout[i] != want)
        fail_msg("replay %d: out[%d] = %g, the CPU says %g", round, i, hout[i], want);
    }
  }
  print_message("captured copy-kernel-kernel-copy graph: 3 replays with new input match the CPU\n");
  cucore_graph_exec_destroy(e);
  cucore_graph_destroy(g);
  cucore_args_destroy(a1);
  cucore_args_destroy(a2);
  cucore_kernel_destroy(k);
  cucore_mem_free(dev, x);
  cucore_host_free(dev, hin);
  cucore_host_free(dev, hout);
}

/* A second stream forks from the capture and joins back; the graph runs both branches. */
static void fork_and_join_across_streams(void **state) {
  (void)state;
  cucore_stream *s1 = NULL;
  assert_ok(cucore_stream_create(dev, CUCORE_STREAM_NON_BLOCKING, 0, &s1));
  cucore_event *fork = NULL, *join = NULL;
  assert_ok(cucore_event_create(dev, CUCORE_EVENT_DISABLE_TIMING, &fork));
  assert_ok(cucore_event_create(dev, CUCORE_EVENT_DISABLE_TIMING, &join));
  cucore_kernel *fill = gpu_kernel(obj, "fill_i"), *add = gpu_kernel(obj, "add_i");
  cucore_args *fa = new_args(fill), *fb = new_args(fill), *ad = new_args(add);
  cucore_devptr A, B, C;
  assert_ok(cucore_mem_alloc(dev, N * sizeof(int), &A));
  assert_ok(cucore_mem_alloc(dev, N * sizeof(int), &B));
  assert_ok(cucore_mem_alloc(dev, N * sizeof(int), &C));
  int n = N;
  assert_ok(CUCORE_ARGS(fa, A, 5, n));
  assert_ok(CUCORE_ARGS(fb, B, 7, n));
  assert_ok(CUCORE_ARGS(ad, A, B, C, n));
  cucore_launch_config c0 = cfg1d(N / 256, 256, s), c1 = cfg1d(N / 256, 256, s1);
  assert_ok(cucore_stream_begin_capture(s, CUCORE_CAPTURE_GLOBAL));
  assert_ok(cucore_memset_d32(dev, C, 0xdead, N, s));
  assert_ok(cucore_event_record(fork, s));
  assert_ok(cucore_stream_wait_event(s1, fork)); /* s1 joins the capture */
  cucore_capture_info info;
  assert_ok(cucore_stream_get_capture_info(s1, &info));
  assert_int_equal(info.status, CUCORE_CAPTURE_ACTIVE);
  assert_int_equal(info.by_cucore, 1);
  assert_int_equal(info.is_origin, 0);
  assert_ok(cucore_launch(fill, &c1, fb));
  assert_ok(cucore_launch(fill, &c0, fa));
  assert_ok(cucore_event_record(join, s1));
  /* Not the origin: refused, and the capture goes on. */
  cucore_graph *g = NULL;
  assert_status(cucore_stream_end_capture(s1, &g), CUCORE_STREAM_CAPTURE);
  assert_contains(cucore_last_error(), "joined");
  print_message("ending a capture on a forked stream: refused (%s)\n", cucore_last_error());
  assert_ok(cucore_stream_wait_event(s, join)); /* join back */
  assert_ok(cucore_launch(add, &c0, ad));
  assert_ok(cucore_stream_end_capture(s, &g));
  assert_ok(cucore_stream_get_capture_info(s1, &info));
  assert_int_equal(info.status, CUCORE_CAPTURE_NONE); /* s1 is free again */
  cucore_graph_exec *e = NULL;
  assert_ok(cucore_graph_instantiate(g, 0, NULL, &e));
  assert_ok(cucore_graph_launch(e, s));
  assert_ok(cucore_stream_synchronize(s));
  int twelve = 12;
  expect_ints(C, N, want_const, &twelve, "fork/join graph (5 + 7 from two streams)");
  /* s1 works on its own again. */
  assert_ok(CUCORE_ARGS(fb, B, 9, n));
  assert_ok(cucore_launch(fill, &c1, fb));
  assert_ok(cucore_stream_synchronize(s1));
  int nine = 9;
  expect_ints(B, N, want_const, &nine, "the forked stream after the capture");
  cucore_graph_exec_destroy(e);
  cucore_graph_destroy(g);
  cucore_args_destroy(fa);
  cucore_args_destroy(fb);
  cucore_args_destroy(ad);
  cucore_kernel_destroy(fill);
  cucore_kernel_destroy(add);
  cucore_event_destroy(fork);
  cucore_event_destroy(join);
  cucore_mem_free(dev, A);
  cucore_mem_free(dev, B);
  cucore_mem_free(dev, C);
  cucore_stream_destroy(s1);
}

/* Launch attributes are captured (priority, cluster) and set on kernel nodes. */
static void launch_attributes_in_graphs(void **state) {
  (void)state;
  cucore_kernel *fill = gpu_kernel(obj, "fill_i");
  cucore_args *a = new_args(fill);
  cucore_devptr A;
  assert_ok(cucore_mem_alloc(dev, N * sizeof(int), &A));
  int n = N, least = 0, greatest = 0;
  assert_ok(cucore_device_get_stream_priorities(dev, &least, &greatest));
  cucore_device_props p;
  assert_ok(cucore_device_get_props(0, &p));
  cucore_launch_config c = cfg1d(N / 128, 128, s);
  assert_ok(cucore_launch_config_priority(&c, greatest));
  if (p.cluster_launch) assert_ok(cucore_launch_config_cluster(&c, 2, 1, 1));
  /* Captured. */
  assert_ok(CUCORE_ARGS(a, A, 41, n));
  assert_ok(cucore_stream_begin_capture(s, CUCORE_CAPTURE_THREAD_LOCAL));
  assert_ok(cucore_launch(fill, &c, a));
  cucore_graph *g = NULL;
  assert_ok(cucore_stream_end_capture(s, &g));
  cucore_graph_exec *e = NULL;
  assert_ok(cucore_graph_instantiate(g, CUCORE_GRAPH_INSTANTIATE_USE_NODE_PRIORITY, NULL, &e));
  assert_ok(cucore_graph_launch(e, s));
  assert_ok(cucore_stream_synchronize(s));
  int v = 41;
  expect_ints(A, N, want_const, &v, "captured launch with priority and cluster attributes");
  cucore_graph_exec_destroy(e);
  cucore_graph_destroy(g);
  /* Node by node. */
  assert_ok(cucore_graph_create(dev, &g));
  cucore_graph_node *node = NULL;
  assert_ok(CUCORE_ARGS(a, A, 42, n));
  c.stream = NULL;
  assert_ok(cucore_graph_add_kernel_node(g, NULL, 0, fill, &c, a, &node));
  assert_ok(cucore_graph_instantiate(g, 0, NULL, &e));
  assert_ok(cucore_graph_launch(e, s));
  assert_ok(cucore_stream_synchronize(s));
  v = 42;
  expect_ints(A, N, want_const, &v, "kernel node with priority and cluster attributes");
  /* A cluster that does not divide the grid is refused for a node as for a launch. */
  if (p.cluster_launch) {
    cucore_launch_config bad = cfg1d(3, 128, NULL);
    assert_ok(cucore_launch_config_cluster(&bad, 2, 1, 1));
    assert_status(cucore_graph_add_kernel_node(g, NULL, 0, fill, &bad, a, &node),
                  CUCORE_LAUNCH_CONFIG);
    assert_contains(cucore_last_error(), "not a multiple of the cluster");
  }
  /* The device-updatable attribute: refused for a launch, taken by a node. */
  cucore_launch_config du = cfg1d(N / 128, 128, NULL);
  cucore_launch_attr at = {.id = CUCORE_LAUNCH_DEVICE_UPDATABLE_KERNEL_NODE};
  at.u.value = 1;
  assert_ok(cucore_launch_config_set(&du, &at));
  cucore_status st = cucore_graph_add_kernel_node(g, NULL, 0, fill, &du, a, &node);
  print_message("kernel node with the device-updatable attribute: %s %s\n", cucore_status_name(st),
                st ? cucore_last_error() : "");
  assert_true(CUCORE_CODE(st) != CUCORE_LAUNCH_CONFIG);
  cucore_graph_exec_destroy(e);
  cucore_graph_destroy(g);
  cucore_args_destroy(a);
  cucore_kernel_destroy(fill);
  cucore_mem_free(dev, A);
}

/* ---- node by node -------------------------------------------------------------------------- */

static int host_calls;
static void count_host_call(void *user) { (*(int *)user)++; }

static int want_pipeline(int i, const void *ctx) {
  (void)ctx;
  return 2 * (3 + i) + 1;
}
static int want_pipeline_child(int i, const void *ctx) { return want_pipeline(i, ctx) + 100; }

/* Every kind of node: wait, memset, copies both ways and device to device, kernels, host,
 * event record, empty, child graph; dependencies; the DOT output. */
static void explicit_graph_with_every_node_kind(void **state) {
  (void)state;
  cucore_kernel *add = gpu_kernel(obj, "add_i"), *muladd = gpu_kernel(obj, "muladd_i");
  cucore_args *aa = new_args(add), *am = new_args(muladd), *ac = new_args(muladd);
  cucore_devptr A, B, C, D;
  assert_ok(cucore_mem_alloc(dev, N * sizeof(int), &A));
  assert_ok(cucore_mem_alloc(dev, N * sizeof(int), &B));
  assert_ok(cucore_mem_alloc(dev, N * sizeof(int), &C));
  assert_ok(cucore_mem_alloc(dev, N * sizeof(int), &D));
  int *hin = NULL, *hout = NULL;
  assert_ok(cucore_host_alloc(dev, N * sizeof(int), (void **)&hin));
  assert_ok(cucore_host_alloc(dev, N * sizeof(int), (void **)&hout));
  for (int i = 0; i < N; i++) hin[i] = i;
  cucore_event *go = NULL, *done = NULL;
  assert_ok(cucore_event_create(dev, CUCORE_EVENT_DISABLE_TIMING, &go));
  assert_ok(cucore_event_create(dev, CUCORE_EVENT_DISABLE_TIMING, &done));
  int n = N;
  assert_ok(CUCORE_ARGS(aa, A, B, C, n));
  assert_ok(CUCORE_ARGS(am, C, 2, 1, n));
  assert_ok(CUCORE_ARGS(ac, D, 1, 100, n));
  cucore_launch_config c = cfg1d(N / 256, 256, NULL);
  /* The child graph: D = D + 100. */
  cucore_graph *child = NULL;
  assert_ok(cucore_graph_create(dev, &child));
  cucore_graph_node *cn = NULL;
  assert_ok(cucore_graph_add_kernel_node(child, NULL, 0, muladd, &c, ac, &cn));
  cucore_graph *g = NULL;
  assert_ok(cucore_graph_create(dev, &g));
  cucore_graph_node *wait, *ms, *h2d, *k1, *k2, *host, *rec, *d2h, *d2d, *kid, *join;
  assert_ok(cucore_graph_add_event_wait_node(g, NULL, 0, go, &wait));
  assert_ok(cucore_graph_add_memset_node(g, &wait, 1, A, 3, 4, N, &ms));
  assert_ok(cucore_graph_add_memcpy_htod_node(g, NULL, 0, B, hin, N * sizeof(int), &h2d));
  cucore_graph_node *d1[] = {ms, h2d};
  assert_ok(cucore_graph_add_kernel_node(g, d1, 2, add, &c, aa, &k1));
  assert_ok(cucore_graph_add_kernel_node(g, &k1, 1, muladd, &c, am, &k2));
  assert_ok(cucore_graph_add_host_node(g, &k2, 1, count_host_call, &host_calls, NULL, &host));
  assert_ok(cucore_graph_add_event_record_node(g, &k2, 1, done, &rec));
  assert_ok(cucore_graph_add_memcpy_dtoh_node(g, &k2, 1, hout, C, N * sizeof(int), &d2h));
  assert_ok(cucore_graph_add_memcpy_dtod_node(g, &k2, 1, D, C, N * sizeof(int), &d2d));
  assert_ok(cucore_graph_add_child_graph_node(g, &d2d, 1, child, &kid));
  cucore_graph_node *d2[] = {host, rec, d2h, kid};
  assert_ok(cucore_graph_add_empty_node(g, d2, 4, &join));
  assert_ok(cucore_graph_destroy(child)); /* cloned into the node */
  cucore_graph_node_type t;
  assert_ok(cucore_graph_node_get_type(kid, &t));
  assert_int_equal(t, CUCORE_GRAPH_NODE_GRAPH);
  size_t count = 0;
  assert_ok(cucore_graph_get_node_count(g, &count));
  assert_int_equal(count, 11);
  /* The values were copied into the nodes: changing the lists now changes nothing. */
  assert_ok(CUCORE_ARGS(am, C, 1000, 1000, n));
  /* DOT output names the kernels. */
  char path[1024];
  snprintf(path, sizeof path, "%s/gpu_graph.dot", CUCORE_TEST_BINARY_DIR);
  assert_ok(cucore_graph_dot_write(g, path, CUCORE_GRAPH_DOT_VERBOSE));
  size_t size = 0;
  char *text = cucore_test_read_file(path, &size);
  assert_non_null(text);
  assert_true(size > 0);
  assert_contains(text, "muladd_i");
  assert_contains(text, "add_i");
  free(text);
  const char *dot = NULL;
  assert_ok(cucore_graph_dot(g, CUCORE_GRAPH_DOT_DEFAULT, &dot));
  assert_contains(dot, "digraph");
  print_message("DOT output: %zu bytes written, names the kernels\n", size);
  cucore_graph_exec *e = NULL;
  assert_ok(cucore_graph_instantiate(g, 0, NULL, &e));
  host_calls = 0;
  for (int round = 1; round <= 3; round++) {
    memset(hout, 0, N * sizeof(int));
    assert_ok(cucore_event_record(go, s));
    assert_ok(cucore_graph_launch(e, s));
    assert_ok(cucore_stream_synchronize(s));
    assert_ok(cucore_event_query(done)); /* recorded by the graph, complete */
    assert_int_equal(host_calls, round);
    for (int i = 0; i < N; i++)
      if (hout[i] != want_pipeline(i, NULL))
        fail_msg("round %d: hout[%d] = %d, the CPU says %d", round, i, hout[i],
                 want_pipeline(i, NULL));
  }
  expect_ints(C, N, want_pipeline, NULL, "node-by-node graph (wait, memset, copies, 2 kernels)");
  expect_ints(D, N, want_pipeline_child, NULL, "its device copy and child graph");
  print_message("host node ran %d times in 3 launches (match)\n", host_calls);
  cucore_graph_exec_destroy(e);
  cucore_graph_destroy(g);
  cucore_args_destroy(aa);
  cucore_args_destroy(am);
  cucore_args_destroy(ac);
  cucore_kernel_destroy(add);
  cucore_kernel_destroy(muladd);
  cucore_event_destroy(go);
  cucore_event_destroy(done);
  cucore_mem_free(dev, A);
  cucore_mem_free(dev, B);
  cucore_mem_free(dev, C);
  cucore_mem_free(dev, D);
  cucore_host_free(dev, hin);
  cucore_host_free(dev, hout);
}

/* Kernel-node checks on the GPU: arguments and configuration, as a launch. */
static void kernel_node_errors(void **state) {
  (void)state;
  cucore_kernel *fill = gpu_kernel(obj, "fill_i"), *add = gpu_kernel(obj, "add_i");
  cucore_args *a = new_args(fill), *wrong = new_args(add);
  cucore_graph *g = NULL, *g2 = NULL;
  assert_ok(cucore_graph_create(dev, &g));
  assert_ok(cucore_graph_create(dev, &g2));
  cucore_devptr A;
  assert_ok(cucore_mem_alloc(dev, N * sizeof(int), &A));
  cucore_launch_config c = cfg1d(N / 256, 256, NULL);
  cucore_graph_node *node = NULL, *other = NULL;
  assert_status(CUCORE_ARGS(a, A, 1), CUCORE_ARG_COUNT);
  assert_status(cucore_graph_add_kernel_node(g, NULL, 0, fill, &c, a, &node), CUCORE_ARG_COUNT);
  assert_contains(cucore_last_error(), "takes 3 parameters, 2 were given");
  assert_status(CUCORE_ARGS(a, A, 1.5f, N), CUCORE_ARG_TYPE);
  assert_status(cucore_graph_add_kernel_node(g, NULL, 0, fill, &c, a, &node), CUCORE_ARG_TYPE);
  assert_ok(CUCORE_ARGS(wrong, A, A, A, N));
  assert_status(cucore_graph_add_kernel_node(g, NULL, 0, fill, &c, wrong, &node),
                CUCORE_INVALID_ARGUMENT);
  assert_ok(CUCORE_ARGS(a, A, 1, N));
  c.block[0] = 2048;
  assert_status(cucore_graph_add_kernel_node(g, NULL, 0, fill, &c, a, &node), CUCORE_LAUNCH_CONFIG);
  assert_contains(cucore_last_error(), "2048");
  c = cfg1d(1, 32, NULL);
  c.shared_bytes = 1u << 20;
  assert_status(cucore_graph_add_kernel_node(g, NULL, 0, fill, &c, a, &node), CUCORE_LAUNCH_CONFIG);
  assert_contains(cucore_last_error(), "dynamic shared memory");
  c = cfg1d(N / 256, 256, NULL);
  assert_ok(cucore_graph_add_kernel_node(g2, NULL, 0, fill, &c, a, &other));
  assert_status(cucore_graph_add_kernel_node(g, &other, 1, fill, &c, a, &node),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "is a node of another graph");
  size_t count = 9;
  assert_ok(cucore_graph_get_node_count(g, &count));
  assert_int_equal(count, 0); /* nothing was added */
  print_message("kernel nodes: wrong arguments, block, shared memory and dependencies refused\n");
  cucore_graph_destroy(g);
  cucore_graph_destroy(g2);
  cucore_args_destroy(a);
  cucore_args_destroy(wrong);
  cucore_kernel_destroy(fill);
  cucore_kernel_destroy(add);
  cucore_mem_free(dev, A);
}

/* ---- lifetimes ----------------------------------------------------------------------------- */

/* Sources of their own (the compile cache would hand out the shared object for the same text),
 * so that destroying the object really lets it go. */
static const char *lifetime_src[2] = {
    "extern \"C\" __global__ void fill_i(int *p, int v, int n) {  /* lifetime 1 */\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] = v; }\n",
    "extern \"C\" __global__ void fill_i(int *p, int v, int n) {  /* lifetime 2 */\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] = v; }\n"};

static int data_freed;
static void free_data(void *p) {
  free(p);
  data_freed++;
}
static void read_data(void *p) { ((int *)p)[1] = ((int *)p)[0] + 1; }

/* The kernel, its object, the argument list and the graph are destroyed before the executable
 * graph runs: references keep what it needs. Host data given a destructor is freed once no
 * graph needs it. */
static void lifetimes_survive_any_destroy_order(void **state) {
  (void)state;
  cucore_devptr A;
  assert_ok(cucore_mem_alloc(dev, N * sizeof(int), &A));
  int n = N;
  /* Node by node. */
  cucore_object *o = gpu_compile(lifetime_src[0], CUCORE_CODE_CUBIN, NULL, NULL);
  cucore_kernel *fill = gpu_kernel(o, "fill_i");
  cucore_args *a = new_args(fill);
  assert_ok(CUCORE_ARGS(a, A, 77, n));
  cucore_graph *g = NULL;
  assert_ok(cucore_graph_create(dev, &g));
  cucore_graph_node *k = NULL, *h = NULL;
  cucore_launch_config c = cfg1d(N / 256, 256, NULL);
  assert_ok(cucore_graph_add_kernel_node(g, NULL, 0, fill, &c, a, &k));
  int *data = malloc(2 * sizeof *data);
  data[0] = 41;
  data[1] = 0;
  data_freed = 0;
  assert_ok(cucore_graph_add_host_node(g, &k, 1, read_data, data, free_data, &h));
  cucore_graph_exec *e = NULL;
  assert_ok(cucore_graph_instantiate(g, 0, NULL, &e));
  cucore_args_destroy(a);
  cucore_kernel_destroy(fill);
  cucore_object_destroy(o);
  cucore_graph_destroy(g);
  assert_ok(cucore_graph_launch(e, s));
  assert_ok(cucore_stream_synchronize(s));
  int v = 77;
  expect_ints(A, N, want_const, &v,
              "graph run after its kernel, object, arguments and graph were "
              "destroyed");
  assert_int_equal(data[1], 42);
  assert_int_equal(data_freed, 0);
  cucore_graph_exec_destroy(e);
  cc_refs_flush(); /* what cucore_device_close does: wait for the driver's drop, release */
  assert_int_equal(data_freed, 1);
  print_message("host data freed once no graph needed it (match)\n");
  /* Captured. */
  o = gpu_compile(lifetime_src[1], CUCORE_CODE_CUBIN, NULL, NULL);
  fill = gpu_kernel(o, "fill_i");
  a = new_args(fill);
  assert_ok(CUCORE_ARGS(a, A, 78, n));
  c.stream = s;
  assert_ok(cucore_stream_begin_capture(s, CUCORE_CAPTURE_GLOBAL));
  assert_ok(cucore_launch(fill, &c, a));
  assert_ok(cucore_stream_end_capture(s, &g));
  cucore_args_destroy(a);
  cucore_kernel_destroy(fill);
  cucore_object_destroy(o);
  assert_ok(cucore_graph_instantiate(g, 0, NULL, &e));
  cucore_graph_destroy(g);
  assert_ok(cucore_graph_launch(e, s));
  assert_ok(cucore_stream_synchronize(s));
  v = 78;
  expect_ints(A, N, want_const, &v,
              "captured graph run after its kernel and object were destroyed");
  cucore_graph_exec_destroy(e);
  cucore_mem_free(dev, A);
}

/* ---- updates ------------------------------------------------------------------------------- */

/* fill_i(A, v) then muladd_i(A, m, b): A = v * m + b. */
static cucore_graph *two_step(cucore_kernel *fill, cucore_kernel *muladd, cucore_devptr A, int v,
                              int m, int b, cucore_graph_node **first, cucore_graph_node **second) {
  cucore_args *af = new_args(fill), *am = new_args(muladd);
  int n = N;
  assert_ok(CUCORE_ARGS(af, A, v, n));
  assert_ok(CUCORE_ARGS(am, A, m, b, n));
  cucore_graph *g = NULL;
  assert_ok(cucore_graph_create(dev, &g));
  cucore_launch_config c = cfg1d(N / 256, 256, NULL);
  assert_ok(cucore_graph_add_kernel_node(g, NULL, 0, fill, &c, af, first));
  assert_ok(cucore_graph_add_kernel_node(g, first, 1, muladd, &c, am, second));
  cucore_args_destroy(af);
  cucore_args_destroy(am);
  return g;
}

static void run_and_expect(cucore_graph_exec *e, cucore_devptr A, int want, const char *what) {
  assert_ok(cucore_graph_launch(e, s));
  assert_ok(cucore_stream_synchronize(s));
  expect_ints(A, N, want_const, &want, what);
}

static void updates_whole_and_per_node(void **state) {
  (void)state;
  cucore_kernel *fill = gpu_kernel(obj, "fill_i"), *muladd = gpu_kernel(obj, "muladd_i");
  cucore_devptr A;
  assert_ok(cucore_mem_alloc(dev, N * sizeof(int), &A));
  int n = N;
  cucore_graph_node *f1, *m1, *f2, *m2;
  cucore_graph *g1 = two_step(fill, muladd, A, 1, 2, 3, &f1, &m1);
  cucore_graph_exec *e = NULL;
  assert_ok(cucore_graph_instantiate(g1, 0, NULL, &e));
  run_and_expect(e, A, 1 * 2 + 3, "instantiated graph");
  /* Whole-graph update from a graph of the same shape. */
  cucore_graph *g2 = two_step(fill, muladd, A, 5, 3, 4, &f2, &m2);
  assert_ok(cucore_graph_exec_update(e, g2));
  cucore_graph_destroy(g2); /* e keeps it */
  run_and_expect(e, A, 5 * 3 + 4, "after a whole-graph update");
  /* Per node, after the update (matched node by node): new arguments for the second kernel. */
  cucore_args *am = new_args(muladd), *af = new_args(fill);
  assert_ok(CUCORE_ARGS(am, A, 10, 0, n));
  assert_ok(cucore_graph_exec_set_kernel_args(e, m1, am));
  run_and_expect(e, A, 5 * 10, "after a per-node argument update");
  /* Wrong lists are refused and leave the node as it was. */
  assert_status(CUCORE_ARGS(am, A, 10, n), CUCORE_ARG_COUNT);
  assert_status(cucore_graph_exec_set_kernel_args(e, m1, am), CUCORE_ARG_COUNT);
  assert_status(CUCORE_ARGS(am, A, 10.0, 0, n), CUCORE_ARG_SIZE);
  assert_status(cucore_graph_exec_set_kernel_args(e, m1, am), CUCORE_ARG_SIZE);
  assert_ok(CUCORE_ARGS(af, A, 1, n));
  assert_status(cucore_graph_exec_set_kernel_args(e, m1, af), CUCORE_INVALID_ARGUMENT);
  run_and_expect(e, A, 5 * 10, "after refused per-node updates (unchanged)");
  /* New dimensions: the fill covers 32 elements only, then all again. */
  assert_ok(CUCORE_ARGS(af, A, 6, n));
  assert_ok(cucore_graph_exec_set_kernel_args(e, f1, af));
  assert_ok(CUCORE_ARGS(am, A, 1, 1, n));
  assert_ok(cucore_graph_exec_set_kernel_args(e, m1, am)); /* A = fill + 1 */
  run_and_expect(e, A, 7, "fill 6, add 1");
  unsigned grid[3] = {1, 1, 1}, block[3] = {32, 1, 1}, big[3] = {2048, 1, 1};
  assert_status(cucore_graph_exec_set_kernel_dims(e, f1, grid, big, 0), CUCORE_LAUNCH_CONFIG);
  assert_contains(cucore_last_error(), "2048");
  assert_ok(CUCORE_ARGS(af, A, 9, n));
  assert_ok(cucore_graph_exec_set_kernel_args(e, f1, af));
  assert_ok(cucore_graph_exec_set_kernel_dims(e, f1, grid, block, 0));
  assert_ok(cucore_graph_launch(e, s));
  assert_ok(cucore_stream_synchronize(s));
  int *got = malloc(N * sizeof *got);
  read_ints(A, got, N);
  for (int i = 0; i < N; i++) {
    int want = i < 32 ? 9 + 1 : 7 + 1; /* the rest was 7 and only gets +1 */
    if (got[i] != want)
      fail_msg("after new dimensions: A[%d] = %d, the CPU says %d", i, got[i], want);
  }
  print_message("new launch dimensions: %d elements match the CPU\n", N);
  unsigned full[3] = {N / 256, 1, 1}, b256[3] = {256, 1, 1};
  assert_ok(cucore_graph_exec_set_kernel_dims(e, f1, full, b256, 0));
  run_and_expect(e, A, 10, "dimensions back");
  /* Disable the second kernel, then enable it again. */
  assert_ok(cucore_graph_exec_set_node_enabled(e, m1, 0));
  int on = 1;
  assert_ok(cucore_graph_exec_get_node_enabled(e, m1, &on));
  assert_int_equal(on, 0);
  run_and_expect(e, A, 9, "second kernel disabled");
  assert_ok(cucore_graph_exec_set_node_enabled(e, m1, 1));
  assert_ok(cucore_graph_exec_get_node_enabled(e, m1, &on));
  assert_int_equal(on, 1);
  run_and_expect(e, A, 10, "enabled again");
  /* Refused: another shape (three nodes). The message has the reason and the counts. */
  cucore_graph_node *f3, *m3, *x3;
  cucore_graph *g3 = two_step(fill, muladd, A, 2, 2, 2, &f3, &m3);
  cucore_args *ax = new_args(muladd);
  assert_ok(CUCORE_ARGS(ax, A, 1, 0, n));
  cucore_launch_config c = cfg1d(N / 256, 256, NULL);
  assert_ok(cucore_graph_add_kernel_node(g3, &m3, 1, muladd, &c, ax, &x3));
  assert_status(cucore_graph_exec_update(e, g3), CUCORE_GRAPH_UPDATE);
  assert_contains(cucore_last_error(), "differ in shape");
  assert_contains(cucore_last_error(), "2 nodes, the new one 3");
  assert_contains(cucore_last_error(), "unchanged");
  print_message("update from a graph of another shape: refused (%s)\n", cucore_last_error());
  run_and_expect(e, A, 10, "after the refused update (unchanged)");
  /* Refused: a node of another kind at the same place. */
  cucore_graph *g4 = NULL;
  assert_ok(cucore_graph_create(dev, &g4));
  cucore_graph_node *f4, *s4;
  assert_ok(CUCORE_ARGS(af, A, 3, n));
  assert_ok(cucore_graph_add_kernel_node(g4, NULL, 0, fill, &c, af, &f4));
  assert_ok(cucore_graph_add_memset_node(g4, &f4, 1, A, 0, 4, N, &s4));
  assert_status(cucore_graph_exec_update(e, g4), CUCORE_GRAPH_UPDATE);
  print_message("update with a node of another kind: refused (%s)\n", cucore_last_error());
  run_and_expect(e, A, 10, "after the second refused update (unchanged)");
  /* The graph's own node: new arguments reach the next instantiation, not e. */
  assert_ok(CUCORE_ARGS(am, A, 2, 0, n));
  assert_ok(cucore_graph_kernel_node_set_args(m1, am));
  run_and_expect(e, A, 10, "graph node changed, executable graph not");
  cucore_graph_exec *e2 = NULL;
  assert_ok(cucore_graph_instantiate(g1, 0, NULL, &e2));
  run_and_expect(e2, A, 1 * 2, "a new instantiation takes the graph node's new arguments");
  /* A captured graph updates a captured graph (capture again, update). */
  cucore_graph *cg = NULL, *cg2 = NULL;
  cucore_launch_config cs = cfg1d(N / 256, 256, s);
  assert_ok(CUCORE_ARGS(af, A, 20, n));
  assert_ok(cucore_stream_begin_capture(s, CUCORE_CAPTURE_GLOBAL));
  assert_ok(cucore_launch(fill, &cs, af));
  assert_ok(cucore_stream_end_capture(s, &cg));
  cucore_graph_exec *ce = NULL;
  assert_ok(cucore_graph_instantiate(cg, 0, NULL, &ce));
  run_and_expect(ce, A, 20, "captured graph");
  assert_ok(CUCORE_ARGS(af, A, 21, n));
  assert_ok(cucore_stream_begin_capture(s, CUCORE_CAPTURE_GLOBAL));
  assert_ok(cucore_launch(fill, &cs, af));
  assert_ok(cucore_stream_end_capture(s, &cg2));
  assert_ok(cucore_graph_exec_update(ce, cg2));
  run_and_expect(ce, A, 21, "captured graph updated from a new capture");
  free(got);
  cucore_graph_exec_destroy(ce);
  cucore_graph_exec_destroy(e2);
  cucore_graph_exec_destroy(e);
  cucore_graph_destroy(cg);
  cucore_graph_destroy(cg2);
  cucore_graph_destroy(g1);
  cucore_graph_destroy(g3);
  cucore_graph_destroy(g4);
  cucore_args_destroy(am);
  cucore_args_destroy(af);
  cucore_args_destroy(ax);
  cucore_kernel_destroy(fill);
  cucore_kernel_destroy(muladd);
  cucore_mem_free(dev, A);
}

/* ---- conditional nodes --------------------------------------------------------------------- */

static void conditional_nodes(void **state) {
  (void)state;
  if (driver_version < 12030) {
    print_message("conditional nodes need a CUDA 12.3 driver; this one is %d\n", driver_version);
    return;
  }
  cucore_kernel *countdown = gpu_kernel(obj, "countdown"), *setc = gpu_kernel(obj, "set_cond"),
                *mark = gpu_kernel(obj, "mark");
  cucore_devptr counter, trips, value, P;
  assert_ok(cucore_mem_alloc(dev, sizeof(int), &counter));
  assert_ok(cucore_mem_alloc(dev, sizeof(int), &trips));
  assert_ok(cucore_mem_alloc(dev, sizeof(int), &value));
  assert_ok(cucore_mem_alloc(dev, sizeof(int), &P));
  cucore_launch_config one = cfg1d(1, 32, NULL);
  /* While: the body runs until the kernel in it sets the condition to 0. */
  {
    cucore_graph *g = NULL;
    assert_ok(cucore_graph_create(dev, &g));
    cucore_graph_condition cond = 0;
    assert_ok(cucore_graph_condition_create(g, 1, CUCORE_CONDITION_ASSIGN_DEFAULT, &cond));
    cucore_graph_node *init, *zero, *loop, *body_k;
    assert_ok(cucore_graph_add_memset_node(g, NULL, 0, counter, 10, 4, 1, &init));
    assert_ok(cucore_graph_add_memset_node(g, &init, 1, trips, 0, 4, 1, &zero));
    cucore_graph *body[1];
    assert_ok(cucore_graph_add_conditional_node(g, &zero, 1, cond, CUCORE_CONDITIONAL_WHILE, 1,
                                                body, &loop));
    cucore_args *a = new_args(countdown);
    assert_ok(CUCORE_ARGS(a, cond, counter, trips));
    assert_ok(cucore_graph_add_kernel_node(body[0], NULL, 0, countdown, &one, a, &body_k));
    cucore_graph_exec *e = NULL;
    assert_ok(cucore_graph_instantiate(g, 0, NULL, &e));
    for (int r = 0; r < 2; r++) {
      assert_ok(cucore_graph_launch(e, s));
      assert_ok(cucore_stream_synchronize(s));
      int t = -1, left = -1;
      read_ints(trips, &t, 1);
      read_ints(counter, &left, 1);
      if (t != 10 || left != 0)
        fail_msg("while loop: %d trips, counter %d; the CPU says 10, 0", t, left);
    }
    print_message("while node: 10 trips until the device said done, twice (match)\n");
    cucore_graph_exec_destroy(e);
    cucore_graph_destroy(g);
    cucore_args_destroy(a);
  }
  /* If, if/else, switch: set_cond(value) then the conditional node; each body marks P. */
  struct {
    cucore_conditional_type type;
    unsigned bodies;
    int needs_12_8;
    const char *name;
  } kinds[] = {{CUCORE_CONDITIONAL_IF, 1, 0, "if"},
               {CUCORE_CONDITIONAL_IF, 2, 1, "if/else"},
               {CUCORE_CONDITIONAL_SWITCH, 3, 1, "switch"}};
  for (size_t kind = 0; kind < sizeof kinds / sizeof kinds[0]; kind++) {
    if (kinds[kind].needs_12_8 && driver_version < 12080) {
      print_message("%s nodes need a CUDA 12.8 driver; this one is %d\n", kinds[kind].name,
                    driver_version);
      continue;
    }
    cucore_graph *g = NULL;
    assert_ok(cucore_graph_create(dev, &g));
    cucore_graph_condition cond = 0;
    assert_ok(cucore_graph_condition_create(g, 0, CUCORE_CONDITION_DEFAULT, &cond));
    cucore_args *as = new_args(setc);
    assert_ok(CUCORE_ARGS(as, cond, value));
    cucore_graph_node *set = NULL, *cn = NULL;
    assert_ok(cucore_graph_add_kernel_node(g, NULL, 0, setc, &one, as, &set));
    cucore_graph *body[3] = {NULL, NULL, NULL};
    assert_ok(cucore_graph_add_conditional_node(g, &set, 1, cond, kinds[kind].type,
                                                kinds[kind].bodies, body, &cn));
    cucore_args *am = new_args(mark);
    for (unsigned b = 0; b < kinds[kind].bodies; b++) {
      assert_non_null(body[b]);
      assert_ok(CUCORE_ARGS(am, P, 100 + (int)b));
      if (b == 1) {
        /* This body is filled by capturing into it. */
        cucore_launch_config cs = cfg1d(1, 32, s);
        assert_ok(cucore_stream_begin_capture_to_graph(s, body[b], NULL, 0, CUCORE_CAPTURE_GLOBAL));
        assert_ok(cucore_launch(mark, &cs, am));
        cucore_graph *same = NULL;
        assert_ok(cucore_stream_end_capture(s, &same));
        assert_ptr_equal(same, body[b]);
      } else {
        cucore_graph_node *mk = NULL;
        assert_ok(cucore_graph_add_kernel_node(body[b], NULL, 0, mark, &one, am, &mk));
      }
      assert_ok(cucore_graph_destroy(body[b])); /* owned by the node: a no-op */
    }
    cucore_graph_exec *e = NULL;
    assert_ok(cucore_graph_instantiate(g, 0, NULL, &e));
    for (int v = 0; v < 4; v++) {
      int zero = 0, got = -1;
      assert_ok(cucore_memcpy_htod(dev, P, &zero, sizeof zero, NULL));
      assert_ok(cucore_memcpy_htod(dev, value, &v, sizeof v, NULL));
      assert_ok(cucore_graph_launch(e, s));
      assert_ok(cucore_stream_synchronize(s));
      read_ints(P, &got, 1);
      int want = 0;
      if (kinds[kind].type == CUCORE_CONDITIONAL_IF)
        want = v ? 100 : kinds[kind].bodies == 2 ? 101 : 0;
      else
        want = (unsigned)v < kinds[kind].bodies ? 100 + v : 0;
      if (got != want)
        fail_msg("%s node, condition %d: P = %d, the CPU says %d", kinds[kind].name, v, got, want);
    }
    print_message("%s node: conditions 0..3 set on the device match the CPU\n", kinds[kind].name);
    cucore_graph_exec_destroy(e);
    cucore_graph_destroy(g);
    cucore_args_destroy(as);
    cucore_args_destroy(am);
  }
  /* A condition no node uses: the driver refuses the graph, and cucore says why. */
  {
    cucore_graph *g = NULL;
    assert_ok(cucore_graph_create(dev, &g));
    cucore_graph_node *k = NULL;
    cucore_args *am = new_args(mark);
    assert_ok(CUCORE_ARGS(am, P, 1));
    assert_ok(cucore_graph_add_kernel_node(g, NULL, 0, mark, &one, am, &k));
    cucore_graph_condition cond = 0;
    assert_ok(cucore_graph_condition_create(g, 0, 0, &cond));
    cucore_graph_exec *e = NULL;
    cucore_status st = cucore_graph_instantiate(g, 0, NULL, &e);
    print_message("graph with an unused condition: %s: %s\n", cucore_status_name(st),
                  cucore_last_error());
    assert_true(st != CUCORE_OK);
    assert_null(e);
    cucore_graph_destroy(g);
    cucore_args_destroy(am);
  }
  cucore_kernel_destroy(countdown);
  cucore_kernel_destroy(setc);
  cucore_kernel_destroy(mark);
  cucore_mem_free(dev, counter);
  cucore_mem_free(dev, trips);
  cucore_mem_free(dev, value);
  cucore_mem_free(dev, P);
}

/* ---- what a capture forbids ------------------------------------------------------------- */

typedef struct {
  cucore_stream *s;
  cucore_status st;
  char msg[512];
} end_attempt;

static void *end_from_other_thread(void *p) {
  end_attempt *t = p;
  cucore_graph *g = NULL;
  t->st = cucore_stream_end_capture(t->s, &g);
  snprintf(t->msg, sizeof t->msg, "%s", cucore_last_error());
  return NULL;
}

static void forbidden_calls_during_capture(void **state) {
  (void)state;
  cucore_kernel *fill = gpu_kernel(obj, "fill_i");
  cucore_args *a = new_args(fill);
  cucore_devptr A;
  assert_ok(cucore_mem_alloc(dev, N * sizeof(int), &A));
  int n = N, host[4] = {0};
  assert_ok(CUCORE_ARGS(a, A, 31, n));
  cucore_launch_config c = cfg1d(N / 256, 256, s);
  cucore_event *ev = NULL;
  assert_ok(cucore_event_create(dev, CUCORE_EVENT_DISABLE_TIMING, &ev));
  /* Refused by cucore before the driver sees them; the capture goes on. */
  assert_ok(cucore_stream_begin_capture(s, CUCORE_CAPTURE_GLOBAL));
  assert_status(cucore_stream_begin_capture(s, CUCORE_CAPTURE_GLOBAL), CUCORE_STREAM_CAPTURE);
  assert_status(cucore_stream_synchronize(s), CUCORE_STREAM_CAPTURE);
  assert_contains(cucore_last_error(), "cucore_stream_synchronize");
  assert_contains(cucore_last_error(), "the capture goes on");
  print_message("stream synchronize during capture: refused (%s)\n", cucore_last_error());
  assert_status(cucore_stream_query(s), CUCORE_STREAM_CAPTURE);
  assert_status(cucore_device_synchronize(dev), CUCORE_STREAM_CAPTURE);
  cucore_devptr p = 0;
  assert_status(cucore_mem_alloc(dev, 1024, &p), CUCORE_STREAM_CAPTURE);
  assert_contains(cucore_last_error(), "global mode");
  assert_status(cucore_memcpy_htod(dev, A, host, sizeof host, NULL), CUCORE_STREAM_CAPTURE);
  assert_ok(cucore_event_record(ev, s));
  assert_status(cucore_event_query(ev), CUCORE_STREAM_CAPTURE);
  assert_contains(cucore_last_error(), "last recorded inside a capture");
  assert_status(cucore_event_synchronize(ev), CUCORE_STREAM_CAPTURE);
  /* Ending from another thread in global mode is refused too, and the capture goes on. */
  end_attempt t = {.s = s};
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, end_from_other_thread, &t), 0);
  pthread_join(th, NULL);
  assert_int_equal(CUCORE_CODE(t.st), CUCORE_STREAM_CAPTURE);
  assert_contains(t.msg, "must be ended by the thread that began it");
  /* Still capturing: the launch is captured and the graph is good. */
  assert_ok(cucore_launch(fill, &c, a));
  cucore_graph *g = NULL;
  assert_ok(cucore_stream_end_capture(s, &g));
  cucore_graph_exec *e = NULL;
  assert_ok(cucore_graph_instantiate(g, 0, NULL, &e));
  assert_ok(cucore_graph_launch(e, s));
  assert_ok(cucore_stream_synchronize(s));
  int v = 31;
  expect_ints(A, N, want_const, &v, "graph captured around refused calls");
  cucore_graph_exec_destroy(e);
  cucore_graph_destroy(g);
  /* A blocking stream capturing: the legacy default stream would wait for it. */
  cucore_stream *blocking = NULL, *legacy = NULL;
  assert_ok(cucore_stream_create(dev, CUCORE_STREAM_DEFAULT, 0, &blocking));
  assert_ok(cucore_stream_default(dev, &legacy));
  assert_ok(cucore_stream_begin_capture(blocking, CUCORE_CAPTURE_RELAXED));
  cucore_launch_config cl = cfg1d(N / 256, 256, legacy);
  assert_status(cucore_launch(fill, &cl, a), CUCORE_STREAM_CAPTURE);
  assert_contains(cucore_last_error(), "legacy default stream");
  assert_status(cucore_memcpy_htod(dev, A, host, sizeof host, NULL), CUCORE_STREAM_CAPTURE);
  assert_ok(cucore_mem_alloc(dev, 1024, &p)); /* relaxed mode allows allocations */
  cucore_launch_config cb = cfg1d(N / 256, 256, blocking);
  assert_ok(CUCORE_ARGS(a, A, 32, n));
  assert_ok(cucore_launch(fill, &cb, a));
  assert_ok(cucore_stream_end_capture(blocking, &g));
  assert_ok(cucore_mem_free(dev, p));
  assert_ok(cucore_graph_instantiate(g, 0, NULL, &e));
  assert_ok(cucore_graph_launch(e, blocking));
  assert_ok(cucore_stream_synchronize(blocking));
  v = 32;
  expect_ints(A, N, want_const, &v, "graph of a blocking stream, legacy-stream work refused");
  cucore_graph_exec_destroy(e);
  cucore_graph_destroy(g);
  /* Two captures must not merge. */
  cucore_stream *s2 = NULL;
  assert_ok(cucore_stream_create(dev, CUCORE_STREAM_NON_BLOCKING, 0, &s2));
  assert_ok(cucore_stream_begin_capture(s, CUCORE_CAPTURE_RELAXED));
  assert_ok(cucore_stream_begin_capture(s2, CUCORE_CAPTURE_RELAXED));
  assert_ok(cucore_event_record(ev, s));
  assert_status(cucore_stream_wait_event(s2, ev), CUCORE_STREAM_CAPTURE);
  assert_contains(cucore_last_error(), "merge two captures");
  assert_ok(cucore_launch(fill, &c, a));
  cb = cfg1d(N / 256, 256, s2);
  assert_ok(cucore_launch(fill, &cb, a));
  cucore_graph *g2 = NULL;
  assert_ok(cucore_stream_end_capture(s2, &g2));
  assert_ok(cucore_stream_end_capture(s, &g));
  cucore_graph_destroy(g);
  cucore_graph_destroy(g2);
  cucore_stream_destroy(s2);
  /* The driver invalidates a capture behind cucore's back (a raw synchronize): later calls say
   * so, ending it says why, and the stream works afterwards. */
  assert_ok(cucore_stream_begin_capture(s, CUCORE_CAPTURE_GLOBAL));
  void *hs = NULL;
  assert_ok(cucore_stream_get_native(s, &hs));
  CUresult r = DRV(cuStreamSynchronize)((CUstream)hs);
  print_message("raw cuStreamSynchronize during capture: %d\n", (int)r);
  assert_int_not_equal(r, CUDA_SUCCESS);
  assert_status(cucore_launch(fill, &c, a), CUCORE_STREAM_CAPTURE);
  assert_contains(cucore_last_error(), "cucore_stream_end_capture");
  cucore_capture_info info;
  assert_ok(cucore_stream_get_capture_info(s, &info));
  assert_int_equal(info.status, CUCORE_CAPTURE_INVALIDATED);
  g = (cucore_graph *)0x1;
  assert_status(cucore_stream_end_capture(s, &g), CUCORE_STREAM_CAPTURE);
  assert_null(g);
  assert_contains(cucore_last_error(), "invalidated");
  assert_contains(cucore_last_error(), "usable again");
  print_message("capture invalidated by the driver: end refused (%s)\n", cucore_last_error());
  assert_ok(cucore_stream_get_capture_info(s, &info));
  assert_int_equal(info.status, CUCORE_CAPTURE_NONE);
  assert_ok(CUCORE_ARGS(a, A, 33, n));
  assert_ok(cucore_launch(fill, &c, a));
  assert_ok(cucore_stream_synchronize(s));
  v = 33;
  expect_ints(A, N, want_const, &v, "the stream after a failed capture");
  /* Capturing N launches: a wrong configuration leaves no capture behind. */
  cucore_launch_config bad = cfg1d(1, 2048, s);
  assert_status(cucore_graph_capture_launches(fill, &bad, a, 10, &g), CUCORE_LAUNCH_CONFIG);
  assert_ok(cucore_stream_get_capture_info(s, &info));
  assert_int_equal(info.status, CUCORE_CAPTURE_NONE);
  cucore_stream_destroy(blocking);
  cucore_event_destroy(ev);
  cucore_args_destroy(a);
  cucore_kernel_destroy(fill);
  cucore_mem_free(dev, A);
}

/* cucore_graph_capture_launches: N launches captured, replayed (what `cucore run --graph N`
 * times). */
static void capture_n_launches(void **state) {
  (void)state;
  cucore_kernel *muladd = gpu_kernel(obj, "muladd_i");
  cucore_args *a = new_args(muladd);
  cucore_devptr A;
  assert_ok(cucore_mem_alloc(dev, N * sizeof(int), &A));
  assert_ok(cucore_memset_d32(dev, A, 0, N, NULL));
  int n = N;
  assert_ok(CUCORE_ARGS(a, A, 1, 1, n)); /* +1 */
  cucore_launch_config c = cfg1d(N / 256, 256, s);
  cucore_graph *g = NULL;
  assert_ok(cucore_graph_capture_launches(muladd, &c, a, 100, &g));
  size_t count = 0;
  assert_ok(cucore_graph_get_node_count(g, &count));
  assert_int_equal(count, 100);
  cucore_graph_exec *e = NULL;
  assert_ok(cucore_graph_instantiate(g, 0, NULL, &e));
  assert_ok(cucore_graph_upload(e, s));
  for (int i = 0; i < 3; i++) assert_ok(cucore_graph_launch(e, s));
  assert_ok(cucore_stream_synchronize(s));
  int v = 300;
  expect_ints(A, N, want_const, &v, "100 captured launches replayed 3 times");
  cucore_graph_exec_destroy(e);
  cucore_graph_destroy(g);
  cucore_args_destroy(a);
  cucore_kernel_destroy(muladd);
  cucore_mem_free(dev, A);
}

/* After each test: a capture a failed test left on the shared stream is ended, so that one
 * failure does not refuse every later test's calls. */
static int end_left_capture(void **state) {
  (void)state;
  cucore_capture_info info;
  if (cucore_stream_get_capture_info(s, &info) == CUCORE_OK && info.status != CUCORE_CAPTURE_NONE) {
    cucore_graph *g = NULL;
    (void)cucore_stream_end_capture(s, &g);
    cucore_graph_destroy(g);
    fprintf(stderr, "note: a capture was left on the shared stream; ended\n");
  }
  return 0;
}

int main(void) {
  if (!cucore_test_have_gpu()) return CUCORE_TEST_SKIP;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(captured_graph_replays_with_new_input, end_left_capture),
      cmocka_unit_test_teardown(fork_and_join_across_streams, end_left_capture),
      cmocka_unit_test_teardown(launch_attributes_in_graphs, end_left_capture),
      cmocka_unit_test_teardown(explicit_graph_with_every_node_kind, end_left_capture),
      cmocka_unit_test_teardown(kernel_node_errors, end_left_capture),
      cmocka_unit_test_teardown(lifetimes_survive_any_destroy_order, end_left_capture),
      cmocka_unit_test_teardown(updates_whole_and_per_node, end_left_capture),
      cmocka_unit_test_teardown(conditional_nodes, end_left_capture),
      cmocka_unit_test_teardown(forbidden_calls_during_capture, end_left_capture),
      cmocka_unit_test_teardown(capture_n_launches, end_left_capture),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
