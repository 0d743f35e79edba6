/* test_graph_inspect.c -- a graph as the driver has it, through the fake driver (whose graphs
 * keep nodes of every kind, their parameters and their edges): the nodes, root nodes, edges,
 * dependencies and dependents of a built graph, the same handles every time; each kind of
 * node's parameters read back; an edge removed (and a missing one named); a node destroyed with
 * its edges, then refused by name; a captured graph's kernel nodes taken in, their kernel and
 * argument values read from the driver and changed; the CUDA 13.1 ids, and their absence named;
 * a graph of thousands of nodes listed through the map of handles, destroyed nodes and all;
 * forks, joins, a child graph and a conditional node added to a running capture. */
#include "support.h"

#include "graph/graph.h"
#include "loader/loader.h"

#include <stdlib.h>
#include <string.h>

#ifndef CUCORE_FAKE_DRIVER_PATH
#error "CUCORE_FAKE_DRIVER_PATH is set by tests/CMakeLists.txt"
#endif

static cucore_device *dev;
static cucore_object *obj;
static cucore_kernel *k;

static const char ptx_text[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
                               ".visible .entry k(.param .u64 p, .param .u32 n)\n{\n  ret;\n}\n";

static int open_fake(void **state) {
  (void)state;
  setenv("CUCORE_LIBCUDA", CUCORE_FAKE_DRIVER_PATH, 1);
  setenv("CUCORE_FAKE_DRIVER_VERSION", "13010", 1); /* the ids of CUDA 13.1 */
  if (cucore_device_open(0, &dev) != CUCORE_OK) return -1;
  if (cucore_object_from_memory(ptx_text, sizeof ptx_text, CUCORE_CODE_PTX, "k.ptx", &obj))
    return -1;
  return cucore_object_get_kernel(obj, "k", &k) == CUCORE_OK ? 0 : -1;
}

static int close_fake(void **state) {
  (void)state;
  cucore_kernel_destroy(k);
  cucore_object_destroy(obj);
  return cucore_device_close(dev) == CUCORE_OK ? 0 : -1;
}

static void host_fn(void *user) { (void)user; }

static cucore_args *args_of(uint64_t p, uint32_t n) {
  cucore_args *a = NULL;
  assert_ok(cucore_args_create(k, &a));
  assert_ok(cucore_args_set_u64(a, 0, p));
  assert_ok(cucore_args_set_u32(a, 1, n));
  return a;
}

static cucore_launch_config config(unsigned grid, unsigned block) {
  cucore_launch_config c;
  memset(&c, 0, sizeof c);
  c.grid[0] = grid;
  c.block[0] = block;
  return c;
}

/* The values an argument list holds for k(u64, u32). */
static void assert_values(cucore_args *a, uint64_t p, uint32_t n) {
  void **params = NULL;
  assert_ok(cucore_args_get_native(a, &params, NULL, NULL));
  uint64_t got_p;
  uint32_t got_n;
  memcpy(&got_p, params[0], 8);
  memcpy(&got_n, params[1], 4);
  assert_int_equal(got_p, p);
  assert_int_equal(got_n, n);
}

static int has_edge(const cucore_graph_edge *e, size_t n, const cucore_graph_node *from,
                    const cucore_graph_node *to) {
  for (size_t i = 0; i < n; i++)
    if (e[i].from == from && e[i].to == to) return 1;
  return 0;
}

/* Each kind's parameters of the graph built_graph_lists makes, and a kernel node's values
 * read back after they changed. */
static void read_back_each_kind(cucore_graph_node *kn, cucore_graph_node *m, cucore_graph_node *h,
                                cucore_graph_node *e, cucore_graph_node *a, cucore_event *ev,
                                cucore_devptr buf, const cucore_launch_config *c) {
  /* Each kind's parameters. */
  cucore_graph_node_params p;
  assert_ok(cucore_graph_node_get_params(kn, &p));
  assert_int_equal(p.type, CUCORE_GRAPH_NODE_KERNEL);
  assert_ptr_equal(p.kernel.kernel, k);
  assert_string_equal(p.kernel.name, "k");
  assert_int_equal(p.kernel.grid[0], 4);
  assert_int_equal(p.kernel.block[0], 64);
  assert_values(p.kernel.args, 0x1000, 7);
  assert_ok(cucore_graph_node_get_params(m, &p));
  assert_int_equal(p.type, CUCORE_GRAPH_NODE_MEMSET);
  assert_int_equal(p.memset.dst, buf);
  assert_int_equal(p.memset.value, 0xab);
  assert_int_equal(p.memset.element_size, 1);
  assert_int_equal(p.memset.width, 4096);
  assert_int_equal(p.memset.height, 1);
  assert_ok(cucore_graph_node_get_params(h, &p));
  assert_ptr_equal(p.host.fn, host_fn);
  assert_ptr_equal(p.host.user, c);
  assert_ok(cucore_graph_node_get_params(e, &p));
  assert_int_equal(p.type, CUCORE_GRAPH_NODE_EVENT_RECORD);
  assert_ptr_equal(p.event.event, ev);
  assert_non_null(p.event.cuevent);
  assert_ok(cucore_graph_node_get_params(a, &p));
  assert_int_equal(p.type, CUCORE_GRAPH_NODE_EMPTY);

  /* The node values changed in the graph are read back. */
  cucore_args *other = args_of(0x2000, 9);
  assert_ok(cucore_graph_kernel_node_set_args(kn, other));
  assert_ok(cucore_graph_node_get_params(kn, &p));
  assert_values(p.kernel.args, 0x2000, 9);
  assert_ok(cucore_args_destroy(other));
}

/* A -> K, A -> M, K -> H, M -> H, H -> E: nodes, roots, edges, dependencies, dependents. */
static void built_graph_lists(void **state) {
  (void)state;
  cucore_graph *g = NULL;
  cucore_event *ev = NULL;
  assert_ok(cucore_graph_create(dev, &g));
  assert_ok(cucore_event_create(dev, 0, &ev));
  cucore_graph_node *a, *kn, *m, *h, *e;
  cucore_args *args = args_of(0x1000, 7);
  cucore_launch_config c = config(4, 64);
  assert_ok(cucore_graph_add_empty_node(g, NULL, 0, &a));
  assert_ok(cucore_graph_add_kernel_node(g, &a, 1, k, &c, args, &kn));
  cucore_devptr buf = 0;
  assert_ok(cucore_mem_alloc(dev, 4096, &buf));
  assert_ok(cucore_graph_add_memset_node(g, &a, 1, buf, 0xab, 1, 4096, &m));
  cucore_graph_node *km[2] = {kn, m};
  assert_ok(cucore_graph_add_host_node(g, km, 2, host_fn, &c, NULL, &h));
  assert_ok(cucore_graph_add_event_record_node(g, &h, 1, ev, &e));

  cucore_graph_node *nodes[8];
  size_t count = 99;
  assert_ok(cucore_graph_get_nodes(g, NULL, 0, &count));
  assert_int_equal(count, 5);
  assert_ok(cucore_graph_get_nodes(g, nodes, 8, &count));
  cucore_graph_node *want[5] = {a, kn, m, h, e};
  assert_memory_equal(nodes, want, sizeof want); /* the handles cucore gave, in order */
  /* A short array: the count of all, the first filled. */
  cucore_graph_node *one[1] = {NULL};
  assert_ok(cucore_graph_get_nodes(g, one, 1, &count));
  assert_int_equal(count, 5);
  assert_ptr_equal(one[0], a);
  assert_status(cucore_graph_get_nodes(g, NULL, 3, &count), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "the array is NULL with a capacity of 3");
  assert_ok(cucore_graph_get_root_nodes(g, nodes, 8, &count));
  assert_int_equal(count, 1);
  assert_ptr_equal(nodes[0], a);

  cucore_graph_edge edges[8];
  assert_ok(cucore_graph_get_edges(g, edges, 8, &count));
  assert_int_equal(count, 5);
  assert_true(has_edge(edges, count, a, kn) && has_edge(edges, count, a, m));
  assert_true(has_edge(edges, count, kn, h) && has_edge(edges, count, m, h));
  assert_true(has_edge(edges, count, h, e));
  assert_int_equal(edges[0].type, CUCORE_EDGE_DEFAULT);
  assert_ok(cucore_graph_node_get_dependencies(h, edges, 8, &count));
  assert_int_equal(count, 2);
  assert_true(has_edge(edges, count, kn, h) && has_edge(edges, count, m, h));
  assert_ok(cucore_graph_node_get_dependents(a, edges, 8, &count));
  assert_int_equal(count, 2);
  assert_true(has_edge(edges, count, a, kn) && has_edge(edges, count, a, m));
  cucore_graph *in = NULL;
  assert_ok(cucore_graph_node_get_graph(h, &in));
  assert_ptr_equal(in, g);

  read_back_each_kind(kn, m, h, e, a, ev, buf, &c);
  assert_ok(cucore_args_destroy(args));
  assert_ok(cucore_graph_destroy(g));
  assert_ok(cucore_event_destroy(ev));
  assert_ok(cucore_mem_free(dev, buf));
}

/* Copies, child graphs and conditional nodes. */
static void copies_children_and_conditionals(void **state) {
  (void)state;
  cucore_graph *g = NULL, *child = NULL;
  assert_ok(cucore_graph_create(dev, &g));
  assert_ok(cucore_graph_create(dev, &child));
  cucore_devptr d = 0;
  assert_ok(cucore_mem_alloc(dev, 256, &d));
  static char host[256];
  cucore_graph_node *cp, *ch, *cond_node, *c0, *c1;
  assert_ok(cucore_graph_add_memcpy_htod_node(g, NULL, 0, d, host, 200, &cp));
  assert_ok(cucore_graph_add_empty_node(child, NULL, 0, &c0));
  assert_ok(cucore_graph_add_empty_node(child, &c0, 1, &c1));
  assert_ok(cucore_graph_add_child_graph_node(g, &cp, 1, child, &ch));
  cucore_graph_node_params p;
  assert_ok(cucore_graph_node_get_params(cp, &p));
  assert_int_equal(p.memcpy.src_end, CUCORE_COPY_END_HOST);
  assert_int_equal(p.memcpy.dst_end, CUCORE_COPY_END_DEVICE);
  assert_int_equal(p.memcpy.copy.src, CUCORE_HOST_ADDR(host));
  assert_int_equal(p.memcpy.copy.dst, d);
  assert_int_equal(p.memcpy.copy.width_bytes, 200);
  assert_int_equal(p.memcpy.copy.depth, 1);
  assert_ok(cucore_graph_node_get_params(ch, &p));
  assert_non_null(p.child);
  cucore_graph *embedded = p.child;
  assert_ok(cucore_graph_node_get_params(ch, &p));
  assert_ptr_equal(p.child, embedded); /* the same structure every time */
  cucore_graph_node *inner[4];
  size_t count = 0;
  assert_ok(cucore_graph_get_nodes(embedded, inner, 4, &count));
  assert_int_equal(count, 2); /* the driver's clone: its own nodes, not the child's */
  assert_ptr_not_equal(inner[0], c0);
  cucore_graph *in = NULL;
  assert_ok(cucore_graph_node_get_graph(inner[0], &in));
  assert_ptr_equal(in, embedded);
  assert_ok(cucore_graph_destroy(embedded)); /* owned by its node: a no-op */
  cucore_graph_exec *x = NULL;
  assert_status(cucore_graph_instantiate(embedded, 0, NULL, &x), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "the embedded graph of a child-graph node");

  cucore_graph_condition cond = 0;
  cucore_graph *bodies[2] = {NULL, NULL};
  assert_ok(cucore_graph_condition_create(g, 1, CUCORE_CONDITION_ASSIGN_DEFAULT, &cond));
  assert_ok(cucore_graph_add_conditional_node(g, &ch, 1, cond, CUCORE_CONDITIONAL_IF, 2, bodies,
                                              &cond_node));
  cucore_graph_node *b0 = NULL;
  assert_ok(cucore_graph_add_empty_node(bodies[0], NULL, 0, &b0));
  assert_ok(cucore_graph_node_get_params(cond_node, &p));
  assert_int_equal(p.conditional.cond, cond);
  assert_int_equal(p.conditional.type, CUCORE_CONDITIONAL_IF);
  assert_int_equal(p.conditional.body_count, 2);
  assert_ptr_equal(p.conditional.bodies[0], bodies[0]);
  assert_ptr_equal(p.conditional.bodies[1], bodies[1]);
  assert_ok(cucore_graph_get_nodes(bodies[0], inner, 4, &count));
  assert_int_equal(count, 1);
  assert_ptr_equal(inner[0], b0);

  /* Destroying the conditional node takes its bodies' nodes with it. */
  assert_ok(cucore_graph_node_destroy(cond_node));
  assert_status(cucore_graph_node_get_params(b0, &p), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "was destroyed");
  assert_ok(cucore_graph_get_nodes(g, inner, 4, &count));
  assert_int_equal(count, 2);
  assert_ok(cucore_graph_destroy(child));
  assert_ok(cucore_graph_destroy(g));
  assert_ok(cucore_mem_free(dev, d));
}

/* Removing edges and destroying nodes. */
static void edges_removed_and_nodes_destroyed(void **state) {
  (void)state;
  cucore_graph *g = NULL, *g2 = NULL;
  assert_ok(cucore_graph_create(dev, &g));
  assert_ok(cucore_graph_create(dev, &g2));
  cucore_graph_node *a, *b, *c, *other;
  assert_ok(cucore_graph_add_empty_node(g, NULL, 0, &a));
  assert_ok(cucore_graph_add_empty_node(g, &a, 1, &b));
  assert_ok(cucore_graph_add_empty_node(g, &b, 1, &c));
  assert_ok(cucore_graph_add_empty_node(g2, NULL, 0, &other));
  assert_ok(cucore_graph_remove_dependency(g, a, b));
  cucore_graph_node *roots[4];
  size_t count = 0;
  assert_ok(cucore_graph_get_root_nodes(g, roots, 4, &count));
  assert_int_equal(count, 2);
  assert_status(cucore_graph_remove_dependency(g, a, b), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "node 1 (empty) does not depend on node 0 (empty); it "
                                       "depends on nothing");
  assert_status(cucore_graph_remove_dependency(g, a, c), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "it depends on node 1 (empty)");
  assert_status(cucore_graph_remove_dependency(g, other, c), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "`from` is a node of another graph");
  assert_status(cucore_graph_remove_dependency(g, NULL, c), CUCORE_INVALID_ARGUMENT);

  /* b goes with its edge to c; every later use of it is refused by name. */
  assert_ok(cucore_graph_node_destroy(b));
  assert_ok(cucore_graph_get_nodes(g, roots, 4, &count));
  assert_int_equal(count, 2);
  cucore_graph_edge edges[4];
  assert_ok(cucore_graph_get_edges(g, edges, 4, &count));
  assert_int_equal(count, 0);
  assert_status(cucore_graph_node_destroy(b), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "node 1 (empty) was destroyed");
  assert_status(cucore_graph_node_get_dependencies(b, edges, 4, &count), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_graph_add_empty_node(g, &b, 1, &other), CUCORE_INVALID_ARGUMENT);
  unsigned id = 0;
  assert_status(cucore_graph_node_get_id(b, &id), CUCORE_INVALID_ARGUMENT);
  assert_ok(cucore_graph_add_dependency(g, a, c)); /* the others still work */
  assert_ok(cucore_graph_node_get_dependencies(c, edges, 4, &count));
  assert_int_equal(count, 1);
  assert_ptr_equal(edges[0].from, a);
  assert_ok(cucore_graph_destroy(g2));
  assert_ok(cucore_graph_destroy(g));
}

/* A captured graph: its kernel nodes taken in once, with the kernel and the values launched. */
static void captured_nodes_are_taken_in(void **state) {
  (void)state;
  cucore_stream *s = NULL;
  assert_ok(cucore_stream_create(dev, CUCORE_STREAM_NON_BLOCKING, 0, &s));
  cucore_launch_config c = config(8, 128);
  c.stream = s;
  cucore_args *a1 = args_of(0xa000, 1), *a2 = args_of(0xb000, 2);
  assert_ok(cucore_stream_begin_capture(s, CUCORE_CAPTURE_GLOBAL));
  assert_ok(cucore_launch(k, &c, a1));
  assert_ok(cucore_launch(k, &c, a2));
  cucore_graph *g = NULL;
  assert_ok(cucore_stream_end_capture(s, &g));
  cucore_graph_node *nodes[4], *again[4];
  size_t count = 0;
  assert_ok(cucore_graph_get_nodes(g, nodes, 4, &count));
  assert_int_equal(count, 2);
  assert_ok(cucore_graph_get_nodes(g, again, 4, &count));
  assert_memory_equal(nodes, again, 2 * sizeof nodes[0]);
  cucore_graph_edge e[2];
  assert_ok(cucore_graph_get_edges(g, e, 2, &count));
  assert_int_equal(count, 1);
  assert_ptr_equal(e[0].from, nodes[0]);
  assert_ptr_equal(e[0].to, nodes[1]);
  cucore_graph_node_params p;
  assert_ok(cucore_graph_node_get_params(nodes[1], &p));
  assert_string_equal(p.kernel.name, "k");
  assert_non_null(p.kernel.kernel);
  assert_int_equal(p.kernel.grid[0], 8);
  assert_int_equal(p.kernel.block[0], 128);
  int params = 0;
  assert_ok(cucore_kernel_get_param_count(p.kernel.kernel, &params));
  assert_int_equal(params, 2);
  assert_values(p.kernel.args, 0xb000, 2);
  /* A captured node's values change through cucore, checked as a launch's, with a list made
   * for the kernel its parameters name. */
  cucore_args *a3 = args_of(0xc000, 3);
  assert_status(cucore_graph_kernel_node_set_args(nodes[0], a3), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "make its argument list for the kernel its parameters");
  assert_ok(cucore_args_destroy(a3));
  assert_ok(cucore_graph_node_get_params(nodes[0], &p));
  assert_ok(cucore_args_create(p.kernel.kernel, &a3));
  assert_status(cucore_graph_kernel_node_set_args(nodes[0], a3), CUCORE_ARG_COUNT);
  assert_ok(cucore_args_set_u64(a3, 0, 0xc000));
  assert_ok(cucore_args_set_u32(a3, 1, 3));
  assert_ok(cucore_graph_kernel_node_set_args(nodes[0], a3));
  assert_ok(cucore_graph_node_get_params(nodes[0], &p));
  assert_values(p.kernel.args, 0xc000, 3);
  assert_ok(cucore_args_destroy(a3));
  assert_ok(cucore_args_destroy(a1));
  assert_ok(cucore_args_destroy(a2));
  assert_ok(cucore_graph_destroy(g));
  assert_ok(cucore_stream_destroy(s));
}

/* The ids of CUDA 13.1, and CUCORE_DRIVER_TOO_OLD naming the entry point without them. */
static void ids_and_their_version_gate(void **state) {
  (void)state;
  cucore_graph *g = NULL;
  assert_ok(cucore_graph_create(dev, &g));
  cucore_graph_node *a, *b;
  assert_ok(cucore_graph_add_empty_node(g, NULL, 0, &a));
  assert_ok(cucore_graph_add_empty_node(g, &a, 1, &b));
  unsigned gid = 0, id0 = 9, id1 = 9, xid = 0;
  uint64_t tools = 0;
  assert_ok(cucore_graph_get_id(g, &gid));
  assert_true(gid > 0);
  assert_ok(cucore_graph_node_get_id(a, &id0));
  assert_ok(cucore_graph_node_get_id(b, &id1));
  assert_int_not_equal(id0, id1);
  assert_ok(cucore_graph_node_get_tools_id(b, &tools));
  assert_true(tools != 0);
  cucore_graph_exec *x = NULL;
  assert_ok(cucore_graph_instantiate(g, 0, NULL, &x));
  assert_ok(cucore_graph_exec_get_id(x, &xid));
  assert_int_not_equal(xid, gid);
  PFN_cuGraphGetId_v13010 keep = cc_drv.fn_cuGraphGetId;
  PFN_cuGraphNodeGetLocalId_v13010 keep_local = cc_drv.fn_cuGraphNodeGetLocalId;
  cc_drv.fn_cuGraphGetId = NULL;
  cc_drv.fn_cuGraphNodeGetLocalId = NULL;
  assert_status(cucore_graph_get_id(g, &gid), CUCORE_DRIVER_TOO_OLD);
  assert_contains(cucore_last_error(), "cuGraphGetId is not available: it needs a driver for "
                                       "CUDA 13.1");
  assert_int_equal(gid, 0);
  assert_status(cucore_graph_node_get_id(a, &id0), CUCORE_DRIVER_TOO_OLD);
  cc_drv.fn_cuGraphGetId = keep;
  cc_drv.fn_cuGraphNodeGetLocalId = keep_local;
  assert_status(cucore_graph_get_id(g, NULL), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_graph_get_id(NULL, &gid), CUCORE_INVALID_ARGUMENT);
  assert_ok(cucore_graph_exec_destroy(x));
  assert_ok(cucore_graph_destroy(g));
}

/* Thousands of nodes: the map of handles grows, forgets the destroyed and finds the rest. */
static void many_nodes(void **state) {
  (void)state;
  enum { N = 5000 };
  cucore_graph *g = NULL;
  assert_ok(cucore_graph_create(dev, &g));
  cucore_graph_node **made = calloc(N, sizeof *made), **got = calloc(N, sizeof *got);
  assert_non_null(made);
  assert_non_null(got);
  for (int i = 0; i < N; i++)
    assert_ok(cucore_graph_add_empty_node(g, i ? &made[i - 1] : NULL, i ? 1 : 0, &made[i]));
  for (int i = 1; i < N; i += 2) assert_ok(cucore_graph_node_destroy(made[i]));
  for (int i = 1; i < N; i += 2) assert_ok(cucore_graph_add_empty_node(g, NULL, 0, &made[i]));
  size_t count = 0;
  assert_ok(cucore_graph_get_nodes(g, got, N, &count));
  assert_int_equal(count, N);
  for (int i = 0; i < N; i += 2) assert_ptr_equal(got[i / 2], made[i]); /* kept, in order */
  for (int i = 1; i < N; i += 2) assert_ptr_equal(got[N / 2 + i / 2], made[i]);
  assert_int_equal(g->node_count, N + N / 2); /* nothing taken in twice */
  free(made);
  free(got);
  assert_ok(cucore_graph_destroy(g));
}

/* Work added to a running capture: forks and joins, a child graph, a conditional node whose
 * body is captured from another stream; the graph the capture gives holds them. */
static void capture_gets_children_and_conditionals(void **state) {
  (void)state;
  cucore_stream *s = NULL, *h1 = NULL, *h2 = NULL, *b = NULL;
  assert_ok(cucore_stream_create(dev, CUCORE_STREAM_NON_BLOCKING, 0, &s));
  assert_ok(cucore_stream_create(dev, CUCORE_STREAM_NON_BLOCKING, 0, &h1));
  assert_ok(cucore_stream_create(dev, CUCORE_STREAM_NON_BLOCKING, 0, &h2));
  assert_ok(cucore_stream_create(dev, CUCORE_STREAM_NON_BLOCKING, 0, &b));
  cucore_graph *child = NULL;
  cucore_graph_node *c0 = NULL;
  assert_ok(cucore_graph_create(dev, &child));
  assert_ok(cucore_graph_add_empty_node(child, NULL, 0, &c0));
  cucore_args *a = args_of(0x1000, 1);
  cucore_launch_config c = config(1, 32);
  c.stream = s;
  /* Not capturing: each call says so. */
  assert_status(cucore_stream_capture_add_graph(s, child), CUCORE_STREAM_CAPTURE);
  assert_contains(cucore_last_error(), "takes part in no capture cucore began");
  cucore_stream *helpers[2] = {h1, h2};
  assert_status(cucore_stream_capture_fork(s, helpers, 2), CUCORE_STREAM_CAPTURE);

  assert_ok(cucore_stream_begin_capture(s, CUCORE_CAPTURE_GLOBAL));
  assert_ok(cucore_launch(k, &c, a));
  assert_status(cucore_stream_capture_fork(s, NULL, 2), CUCORE_INVALID_ARGUMENT);
  assert_ok(cucore_stream_capture_fork(s, helpers, 2));
  assert_ok(cucore_stream_capture_join(s, helpers, 2));
  assert_ok(cucore_stream_capture_add_graph(s, child));
  cucore_graph_condition cond = 0;
  assert_ok(cucore_stream_capture_condition_create(s, 1, CUCORE_CONDITION_ASSIGN_DEFAULT, &cond));
  assert_true(cond != 0);
  cucore_graph *bodies[1] = {NULL};
  assert_status(cucore_stream_capture_add_conditional(s, cond, CUCORE_CONDITIONAL_WHILE, 2, bodies),
                CUCORE_INVALID_ARGUMENT);
  assert_ok(cucore_stream_capture_add_conditional(s, cond, CUCORE_CONDITIONAL_IF, 1, bodies));
  assert_non_null(bodies[0]);
  /* The body filled by a capture of its own, from another stream. */
  cucore_launch_config cb = c;
  cb.stream = b;
  assert_ok(cucore_stream_begin_capture_to_graph(b, bodies[0], NULL, 0, CUCORE_CAPTURE_RELAXED));
  assert_ok(cucore_launch(k, &cb, a));
  assert_ok(cucore_stream_end_capture(b, NULL));
  assert_ok(cucore_launch(k, &c, a));
  assert_status(cucore_stream_end_capture(s, NULL), CUCORE_INVALID_ARGUMENT);
  cucore_graph *g = NULL;
  assert_ok(cucore_stream_end_capture(s, &g));

  /* kernel, child graph, conditional, kernel: the conditional the very node cucore made. */
  cucore_graph_node *nodes[8];
  size_t count = 0;
  assert_ok(cucore_graph_get_nodes(g, nodes, 8, &count));
  assert_int_equal(count, 4);
  cucore_graph_node_type want[4] = {CUCORE_GRAPH_NODE_KERNEL, CUCORE_GRAPH_NODE_GRAPH,
                                    CUCORE_GRAPH_NODE_CONDITIONAL, CUCORE_GRAPH_NODE_KERNEL};
  for (int i = 0; i < 4; i++) {
    cucore_graph_node_type t;
    assert_ok(cucore_graph_node_get_type(nodes[i], &t));
    assert_int_equal(t, want[i]);
  }
  cucore_graph_node_params p;
  assert_ok(cucore_graph_node_get_params(nodes[2], &p));
  assert_ptr_equal(p.conditional.bodies[0], bodies[0]);
  assert_int_equal(p.conditional.cond, cond);
  assert_ok(cucore_graph_get_nodes(bodies[0], nodes, 8, &count));
  assert_int_equal(count, 1);
  cucore_graph *in = NULL;
  assert_ok(cucore_graph_node_get_graph(nodes[0], &in));
  assert_ptr_equal(in, bodies[0]);
  assert_ok(cucore_graph_destroy(g));
  assert_ok(cucore_graph_destroy(child));
  assert_ok(cucore_args_destroy(a));

  /* A capture with a conditional node that dies with its stream: nothing leaks. */
  assert_ok(cucore_stream_begin_capture(s, CUCORE_CAPTURE_GLOBAL));
  assert_ok(cucore_stream_capture_condition_create(s, 0, 0, &cond));
  assert_ok(cucore_stream_capture_add_conditional(s, cond, CUCORE_CONDITIONAL_IF, 1, bodies));
  assert_ok(cucore_stream_destroy(s));
  assert_ok(cucore_stream_destroy(h1));
  assert_ok(cucore_stream_destroy(h2));
  assert_ok(cucore_stream_destroy(b));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(built_graph_lists),
      cmocka_unit_test(copies_children_and_conditionals),
      cmocka_unit_test(edges_removed_and_nodes_destroyed),
      cmocka_unit_test(captured_nodes_are_taken_in),
      cmocka_unit_test(ids_and_their_version_gate),
      cmocka_unit_test(many_nodes),
      cmocka_unit_test(capture_gets_children_and_conditionals),
  };
  return cmocka_run_group_tests(tests, open_fake, close_fake);
}
