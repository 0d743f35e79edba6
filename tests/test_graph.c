/* test_graph.c -- what of CUDA graphs can be checked without a GPU: kernel-node arguments
 * against offline layouts (checked before the graph is looked at, as a launch checks them
 * before its stream), the device-side condition setter compiling with NVRTC, NULL handling,
 * flag and option validation (on stand-in graph structures: every check here fails before the
 * driver would be called, so it runs the same on a GPU machine), reference sets and counted
 * kernel references. */
#include "support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h" /* white-box: stand-in graphs, executable graphs, nodes */

static cucore_object *obj;

static const char *src = CUCORE_GRAPH_SET_CONDITIONAL_DECL
    "struct __align__(16) V4 { float x, y, z, w; };\n"
    "extern \"C\" __global__ void saxpy(float a, const float *x, float *y, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = a * x[i] + y[i]; }\n"
    "extern \"C\" __global__ void scale4(V4 v, float *out) { out[threadIdx.x] *= v.x; }\n"
    "extern \"C\" __global__ void countdown(cudaGraphConditionalHandle h, int *left) {\n"
    "  int v = --left[0]; cudaGraphSetConditional(h, v > 0 ? 1u : 0u); }\n";

static int setup(void **state) {
  (void)state;
  cucore_options *o = NULL;
  cucore_program *p = NULL;
  if (cucore_options_create(&o) || cucore_options_set_string(o, CUCORE_OPT_ARCH, "sm_90") ||
      cucore_program_create(CUCORE_CODE_CUDA_CPP, src, 0, "graph.cu", o, &p) ||
      cucore_program_compile(p, CUCORE_CODE_CUBIN, &obj)) {
    const char *log = "";
    if (p) cucore_program_get_log(p, &log);
    fprintf(stderr, "setup: %s\n%s\n", cucore_last_error(), log);
    return -1;
  }
  cucore_program_destroy(p);
  cucore_options_destroy(o);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  return cucore_object_destroy(obj);
}

static cucore_kernel *kernel(const char *name) {
  cucore_kernel *k = NULL;
  if (cucore_object_get_kernel(obj, name, &k) != CUCORE_OK)
    fail_msg("%s: %s", name, cucore_last_error());
  return k;
}

static cucore_launch_config config1d(unsigned grid, unsigned block) {
  cucore_launch_config c;
  memset(&c, 0, sizeof c);
  c.grid[0] = grid;
  c.block[0] = block;
  return c;
}

/* A kernel node's arguments are checked as cucore_launch checks them, first, against the
 * kernel's offline layout: a wrong list never reaches the graph. */
static void kernel_node_arguments_are_checked_first(void **state) {
  (void)state;
  cucore_kernel *k = kernel("saxpy"), *other = kernel("scale4");
  cucore_args *a = NULL, *b = NULL;
  assert_ok(cucore_args_create(k, &a));
  assert_ok(cucore_args_create(other, &b));
  cucore_launch_config c = config1d(4, 128);
  cucore_graph_node *node = (cucore_graph_node *)0x1;
  cucore_devptr x = 0x10000, y = 0x20000;
  /* Too few. */
  assert_status(CUCORE_ARGS(a, 2.0f, x, y), CUCORE_ARG_COUNT);
  assert_status(cucore_graph_add_kernel_node(NULL, NULL, 0, k, &c, a, &node), CUCORE_ARG_COUNT);
  assert_contains(cucore_last_error(), "kernel `saxpy` takes 4 parameters, 3 were given");
  assert_null(node);
  /* A double for the float: refused when pushed, and again at the node (the first error kept). */
  assert_status(CUCORE_ARGS(a, 2.0, x, y, 16), CUCORE_ARG_SIZE);
  assert_status(cucore_graph_add_kernel_node(NULL, NULL, 0, k, &c, a, &node), CUCORE_ARG_SIZE);
  assert_contains(cucore_last_error(), "argument 0 of `saxpy` is 4 bytes at offset 0");
  assert_contains(cucore_last_error(), "a double given for a float?");
  /* An int where the float goes: right size, wrong kind (the PTX said f32). */
  assert_status(CUCORE_ARGS(a, 2, x, y, 16), CUCORE_ARG_TYPE);
  assert_status(cucore_graph_add_kernel_node(NULL, NULL, 0, k, &c, a, &node), CUCORE_ARG_TYPE);
  /* A hole. */
  assert_ok(cucore_args_reset(a));
  assert_ok(cucore_args_set_f32(a, 0, 2.0f));
  assert_ok(cucore_args_set_i32(a, 3, 16));
  assert_status(cucore_graph_add_kernel_node(NULL, NULL, 0, k, &c, a, &node), CUCORE_ARG_UNSET);
  assert_contains(cucore_last_error(), "argument 1");
  /* A list made for another kernel. */
  assert_ok(CUCORE_ARGS(a, 2.0f, x, y, 16));
  assert_status(cucore_graph_add_kernel_node(NULL, NULL, 0, other, &c, a, &node),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "made for kernel `saxpy`, not for `scale4`");
  /* A misaligned by-value struct for scale4. */
  struct {
    float v[4];
  } packed = {{1, 2, 3, 4}};
  assert_ok(cucore_args_reset(b));
  assert_status(cucore_args_set_bytes(b, 0, &packed, sizeof packed, 4), CUCORE_ARG_ALIGNMENT);
  assert_ok(cucore_args_set_ptr(b, 1, y));
  assert_status(cucore_graph_add_kernel_node(NULL, NULL, 0, other, &c, b, &node),
                CUCORE_ARG_ALIGNMENT);
  /* A right list goes on to the graph, which is missing here. */
  assert_ok(CUCORE_ARGS(a, 2.0f, x, y, 16));
  assert_status(cucore_graph_add_kernel_node(NULL, NULL, 0, k, &c, a, &node),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "cucore_graph_add_kernel_node: `graph` is NULL");
  /* NULL kernel, configuration, arguments, out. */
  assert_status(cucore_graph_add_kernel_node(NULL, NULL, 0, NULL, &c, a, &node),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "`kernel` is NULL");
  assert_status(cucore_graph_add_kernel_node(NULL, NULL, 0, k, NULL, a, &node),
                CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_graph_add_kernel_node(NULL, NULL, 0, k, &c, NULL, &node),
                CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_graph_add_kernel_node(NULL, NULL, 0, k, &c, a, NULL),
                CUCORE_INVALID_ARGUMENT);
  /* Capturing N launches checks the list before it begins a capture. */
  cucore_graph *g = (cucore_graph *)0x1;
  assert_status(CUCORE_ARGS(a, 2.0f, x, y), CUCORE_ARG_COUNT);
  assert_status(cucore_graph_capture_launches(k, &c, a, 10, &g), CUCORE_ARG_COUNT);
  assert_null(g);
  assert_status(cucore_graph_capture_launches(k, &c, a, 0, &g), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "count 0 is outside 1..1000000");
  cucore_args_destroy(a);
  cucore_args_destroy(b);
  cucore_kernel_destroy(k);
  cucore_kernel_destroy(other);
}

/* The condition setter: NVRTC compiles cudaGraphSetConditional with the declaration cucore
 * gives, without -rdc or libcudadevrt (the call stays an external the driver resolves), and the
 * kernel takes the condition as a 64-bit integer. */
static void device_condition_setter_compiles(void **state) {
  (void)state;
  const char *ptx = NULL;
  size_t size = 0;
  assert_ok(cucore_object_get_ptx(obj, &ptx, &size));
  assert_non_null(ptx);
  assert_contains(ptx, ".extern .func cudaGraphSetConditional");
  assert_contains(ptx, "call.uni");
  cucore_kernel *k = kernel("countdown");
  int count = 0;
  assert_ok(cucore_kernel_get_param_count(k, &count));
  assert_int_equal(count, 2);
  cucore_param_info p;
  assert_ok(cucore_kernel_get_param(k, 0, &p));
  assert_int_equal(p.size, 8);
  assert_int_equal(p.kind, CUCORE_PARAM_INT);
  cucore_args *a = NULL;
  assert_ok(cucore_args_create(k, &a));
  cucore_graph_condition cond = 0x1234;
  cucore_devptr left = 0x1000;
  assert_ok(CUCORE_ARGS(a, cond, left));
  assert_status(CUCORE_ARGS(a, 1.0, left), CUCORE_ARG_TYPE); /* a double for the handle */
  assert_status(CUCORE_ARGS(a, 1, left), CUCORE_ARG_SIZE);   /* a 32-bit int for it */
  cucore_args_destroy(a);
  cucore_kernel_destroy(k);
}

/* Every entry point refuses NULL handles and out-parameters, naming them; destroying NULL is a
 * no-op. */
static void null_handles(void **state) {
  (void)state;
  assert_ok(cucore_graph_destroy(NULL));
  assert_ok(cucore_graph_exec_destroy(NULL));
  cucore_graph *g = (cucore_graph *)0x1;
  assert_status(cucore_graph_create(NULL, &g), CUCORE_INVALID_ARGUMENT);
  assert_null(g);
  assert_status(cucore_graph_create(NULL, NULL), CUCORE_INVALID_ARGUMENT);
  size_t n = 7;
  assert_status(cucore_graph_get_node_count(NULL, &n), CUCORE_INVALID_ARGUMENT);
  assert_int_equal(n, 0);
  cucore_device *dev = NULL;
  assert_status(cucore_graph_get_device(NULL, &dev), CUCORE_INVALID_ARGUMENT);
  void *native = NULL;
  assert_status(cucore_graph_get_native(NULL, &native), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_graph_node_get_native(NULL, &native), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_graph_exec_get_native(NULL, &native), CUCORE_INVALID_ARGUMENT);
  cucore_graph_node_type type;
  assert_status(cucore_graph_node_get_type(NULL, &type), CUCORE_INVALID_ARGUMENT);
  cucore_graph_node *node = (cucore_graph_node *)0x1;
  assert_status(cucore_graph_add_empty_node(NULL, NULL, 0, &node), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "cucore_graph_add_empty_node: `graph` is NULL");
  assert_null(node);
  node = (cucore_graph_node *)0x1;
  assert_status(cucore_graph_add_memcpy_htod_node(NULL, NULL, 0, 1, &n, 4, &node),
                CUCORE_INVALID_ARGUMENT);
  assert_null(node);
  assert_status(cucore_graph_add_memcpy_dtoh_node(NULL, NULL, 0, &n, 1, 4, &node),
                CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_graph_add_memcpy_dtod_node(NULL, NULL, 0, 1, 2, 4, &node),
                CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_graph_add_memset_node(NULL, NULL, 0, 4, 0, 4, 1, &node),
                CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_graph_add_event_record_node(NULL, NULL, 0, NULL, &node),
                CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_graph_add_event_wait_node(NULL, NULL, 0, NULL, &node),
                CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_graph_add_child_graph_node(NULL, NULL, 0, NULL, &node),
                CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_graph_add_dependency(NULL, NULL, NULL), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_graph_kernel_node_set_args(NULL, NULL), CUCORE_INVALID_ARGUMENT);
}

/* The rest of the graph calls (conditions, DOT, instantiation, launches, updates, captures)
 * refuse NULL handles and out-parameters too; the names of node types and graph statuses. */
static void null_handles_past_building(void **state) {
  (void)state;
  cucore_graph_node *node = (cucore_graph_node *)0x1;
  cucore_graph *bodies[2];
  assert_status(cucore_graph_add_conditional_node(NULL, NULL, 0, 0, CUCORE_CONDITIONAL_IF, 1,
                                                  bodies, &node),
                CUCORE_INVALID_ARGUMENT);
  cucore_graph_condition cond = 5;
  assert_status(cucore_graph_condition_create(NULL, 0, 0, &cond), CUCORE_INVALID_ARGUMENT);
  assert_int_equal(cond, 0);
  const char *dot = "x";
  assert_status(cucore_graph_dot(NULL, 0, &dot), CUCORE_INVALID_ARGUMENT);
  assert_null(dot);
  assert_status(cucore_graph_dot_write(NULL, "/tmp/x.dot", 0), CUCORE_INVALID_ARGUMENT);
  cucore_graph_exec *e = (cucore_graph_exec *)0x1;
  assert_status(cucore_graph_instantiate(NULL, 0, NULL, &e), CUCORE_INVALID_ARGUMENT);
  assert_null(e);
  assert_status(cucore_graph_launch(NULL, NULL), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "cucore_graph_launch: `exec` is NULL");
  assert_status(cucore_graph_upload(NULL, NULL), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_graph_exec_update(NULL, NULL), CUCORE_INVALID_ARGUMENT);
  unsigned dims[3] = {1, 1, 1};
  assert_status(cucore_graph_exec_set_kernel_args(NULL, NULL, NULL), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_graph_exec_set_kernel_dims(NULL, NULL, dims, dims, 0),
                CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_graph_exec_set_node_enabled(NULL, NULL, 1), CUCORE_INVALID_ARGUMENT);
  int on = 1;
  assert_status(cucore_graph_exec_get_node_enabled(NULL, NULL, &on), CUCORE_INVALID_ARGUMENT);
  assert_int_equal(on, 0);
  assert_status(cucore_stream_begin_capture(NULL, CUCORE_CAPTURE_GLOBAL), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_stream_begin_capture_to_graph(NULL, NULL, NULL, 0, CUCORE_CAPTURE_GLOBAL),
                CUCORE_INVALID_ARGUMENT);
  cucore_graph *g = (cucore_graph *)0x1;
  assert_status(cucore_stream_end_capture(NULL, &g), CUCORE_INVALID_ARGUMENT);
  assert_null(g);
  cucore_capture_info info;
  assert_status(cucore_stream_get_capture_info(NULL, &info), CUCORE_INVALID_ARGUMENT);
  assert_int_equal(info.status, CUCORE_CAPTURE_NONE);
  assert_int_equal(info.mode, -1);
  /* Names. */
  assert_string_equal(cucore_graph_node_type_name(CUCORE_GRAPH_NODE_KERNEL), "kernel");
  assert_string_equal(cucore_graph_node_type_name(CUCORE_GRAPH_NODE_CONDITIONAL), "conditional");
  assert_string_equal(cucore_graph_node_type_name((cucore_graph_node_type)99), "unknown");
  assert_string_equal(cucore_status_name(cc_status(CUCORE_STREAM_CAPTURE, 0, 0)),
                      "CUCORE_STREAM_CAPTURE");
  assert_string_equal(cucore_status_name(cc_status(CUCORE_GRAPH_UPDATE, 0, 0)),
                      "CUCORE_GRAPH_UPDATE");
}

/* ---- stand-ins: graph structures that never reach the driver -------------------------------- */

static struct cucore_device dev0 = {.hdr = {CC_KIND_DEVICE},
                                    .ordinal = 0,
                                    .ctx = (CUcontext)(uintptr_t)0x100};
static struct cucore_device dev1 = {.hdr = {CC_KIND_DEVICE},
                                    .ordinal = 1,
                                    .ctx = (CUcontext)(uintptr_t)0x200};

static cucore_graph *fake_graph(cucore_device *dev) {
  cucore_graph *g = calloc(1, sizeof *g);
  cc_handle_init(g, CC_KIND_GRAPH);
  g->dev = dev;
  g->root = g;
  atomic_init(&g->refs, 1);
  g->held = cc_refs_new();
  g->h = (CUgraph)(uintptr_t)0x300;
  return g;
}

static cucore_graph_node *fake_node(cucore_graph *g, cucore_graph_node_type type) {
  cucore_graph_node *n = NULL;
  assert_ok(cc_graph_node_new(g, type, &n));
  n->h = (CUgraphNode)(uintptr_t)(0x1000 + 8 * g->root->node_count);
  assert_ok(cc_graph_add_node(g, n));
  return n;
}

static void free_fake_graph(cucore_graph *g) {
  for (int i = 0; i < g->node_count; i++) cc_graph_node_free(g->nodes[i]);
  free(g->nodes);
  free(g->map);
  for (int i = 0; i < g->body_count; i++) free(g->bodies[i]);
  free(g->bodies);
  cc_refs_release(g->held);
  free(g);
}

/* Instantiation flags and the upload stream. */
static void instantiate_flags_refused(cucore_graph *g, cucore_stream *s1) {
  cucore_graph_exec *e = NULL;
  assert_status(cucore_graph_instantiate(g, 0x10, NULL, &e), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "unknown flags 0x10");
  assert_status(cucore_graph_instantiate(g,
                                         CUCORE_GRAPH_INSTANTIATE_DEVICE_LAUNCH |
                                             CUCORE_GRAPH_INSTANTIATE_AUTO_FREE_ON_LAUNCH,
                                         NULL, &e),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "DEVICE_LAUNCH cannot be combined with AUTO_FREE_ON_LAUNCH");
  assert_status(cucore_graph_instantiate(g, CUCORE_GRAPH_INSTANTIATE_UPLOAD, NULL, &e),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "needs the stream to upload on");
  assert_status(cucore_graph_instantiate(g, 0, s1, &e), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "without CUCORE_GRAPH_INSTANTIATE_UPLOAD");
  assert_status(cucore_graph_instantiate(g, CUCORE_GRAPH_INSTANTIATE_UPLOAD, s1, &e),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "the upload stream is of device 1, the graph runs on "
                                       "device 0");
  assert_null(e);
}

/* Conditional nodes: types and body counts; condition flags. */
static void conditional_nodes_refused(cucore_graph *g) {
  cucore_graph_node *node = NULL;
  cucore_graph *bodies[3];
  assert_status(cucore_graph_add_conditional_node(g, NULL, 0, 1, (cucore_conditional_type)5, 1,
                                                  bodies, &node),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "type 5 is not a conditional type");
  assert_status(cucore_graph_add_conditional_node(g, NULL, 0, 1, CUCORE_CONDITIONAL_IF, 3, bodies,
                                                  &node),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(),
                  "an if node takes 1 body (if) or 2 (if/else); 3 were asked for");
  assert_status(cucore_graph_add_conditional_node(g, NULL, 0, 1, CUCORE_CONDITIONAL_WHILE, 2,
                                                  bodies, &node),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "a while node takes exactly 1 body; 2 were");
  assert_status(cucore_graph_add_conditional_node(g, NULL, 0, 1, CUCORE_CONDITIONAL_SWITCH, 0,
                                                  bodies, &node),
                CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_graph_add_conditional_node(g, NULL, 0, 1, CUCORE_CONDITIONAL_IF, 1, NULL,
                                                  &node),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "`bodies` is NULL");
  cucore_graph_condition cond = 0;
  assert_status(cucore_graph_condition_create(g, 0, 2, &cond), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "unknown flags 0x2");
}

/* Fills and copies: element sizes, values, alignment, empty copies. */
static void fills_and_copies_refused(cucore_graph *g) {
  cucore_graph_node *node = NULL;
  assert_status(cucore_graph_add_memset_node(g, NULL, 0, 0x1000, 0, 3, 4, &node),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "element size 3; expected 1, 2 or 4");
  assert_status(cucore_graph_add_memset_node(g, NULL, 0, 0x1000, 0x1ff, 1, 4, &node),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "value 0x1ff does not fit an element of 1 byte");
  assert_status(cucore_graph_add_memset_node(g, NULL, 0, 0x1002, 7, 4, 4, &node),
                CUCORE_ARG_ALIGNMENT);
  assert_contains(cucore_last_error(), "0x1002 is not aligned to the 4-byte elements");
  assert_status(cucore_graph_add_memset_node(g, NULL, 0, 0x1000, 7, 4, 0, &node),
                CUCORE_INVALID_ARGUMENT);
  int host = 0;
  assert_status(cucore_graph_add_memcpy_htod_node(g, NULL, 0, 0x1000, &host, 0, &node),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "a copy of 0 bytes");
  assert_status(cucore_graph_add_memcpy_dtoh_node(g, NULL, 0, NULL, 0x1000, 4, &node),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "NULL/0");
}

/* Dependencies: NULL, of another graph, repeated, on itself; DOT flags. */
static void dependencies_refused(cucore_graph *g, cucore_graph *other) {
  cucore_graph_node *node = NULL;
  cucore_graph_node *a = fake_node(g, CUCORE_GRAPH_NODE_EMPTY);
  cucore_graph_node *b = fake_node(other, CUCORE_GRAPH_NODE_EMPTY);
  cucore_graph_node *deps[3] = {a, NULL, a};
  assert_status(cucore_graph_add_empty_node(g, deps, 2, &node), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "dependency 1 is NULL");
  deps[1] = b;
  assert_status(cucore_graph_add_empty_node(g, deps, 2, &node), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "dependency 1, node 0 (empty), is a node of another graph");
  deps[1] = a;
  assert_status(cucore_graph_add_empty_node(g, deps, 2, &node), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "dependencies 0 and 1 are the same node");
  assert_status(cucore_graph_add_empty_node(g, NULL, 2, &node), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_graph_add_dependency(g, a, a), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "cannot depend on itself");
  assert_status(cucore_graph_add_dependency(g, a, b), CUCORE_INVALID_ARGUMENT);
  /* DOT flags. */
  assert_status(cucore_graph_dot_write(g, "/tmp/x.dot", 0x10000), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "flags 0x10000");
}

/* Child graphs: the graph itself, another device, conditionals, a conditional's body. */
static void child_graphs_refused(cucore_graph *g, cucore_graph *other) {
  cucore_graph_node *node = NULL;
  cucore_graph_exec *e = NULL;
  assert_status(cucore_graph_add_child_graph_node(g, NULL, 0, g, &node), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "the graph itself");
  assert_status(cucore_graph_add_child_graph_node(g, NULL, 0, other, &node),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "runs on device 1, the graph on device 0");
  cucore_graph *child = fake_graph(&dev0);
  child->conditionals = 1;
  assert_status(cucore_graph_add_child_graph_node(g, NULL, 0, child, &node),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "has 1 conditional node; the driver takes no conditional");
  cucore_graph *body = NULL;
  assert_ok(cc_graph_new_body(child, (CUgraph)(uintptr_t)0x500, &body));
  assert_status(cucore_graph_add_child_graph_node(g, NULL, 0, body, &node),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "the body of a conditional node");
  assert_status(cucore_graph_instantiate(body, 0, NULL, &e), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "the body of a conditional node");
  assert_ok(cucore_graph_destroy(body)); /* owned by its node: a no-op */
  free_fake_graph(child);
}

/* Events of another device, capture modes and default streams, a launch on another device. */
static void devices_and_captures_refused(cucore_graph *g, cucore_stream *s1) {
  cucore_graph_node *node = NULL;
  struct cucore_event ev1 = {.hdr = {CC_KIND_EVENT}, .dev = &dev1};
  assert_status(cucore_graph_add_event_record_node(g, NULL, 0, &ev1, &node),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "the event belongs to device 1, the graph to device 0");
  /* Captures: modes, default streams. */
  struct cucore_stream legacy = {.hdr = {CC_KIND_STREAM},
                                 .handle = NULL,
                                 .dev = &dev0,
                                 .is_default = 1};
  struct cucore_stream per_thread = {.hdr = {CC_KIND_STREAM},
                                     .handle = CU_STREAM_PER_THREAD,
                                     .dev = &dev0,
                                     .is_default = 1};
  assert_status(cucore_stream_begin_capture(s1, (cucore_capture_mode)7), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "mode 7 is not a capture mode");
  assert_status(cucore_stream_begin_capture(&legacy, CUCORE_CAPTURE_GLOBAL),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "the legacy default stream cannot capture");
  assert_status(cucore_stream_begin_capture(&per_thread, CUCORE_CAPTURE_RELAXED),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "per-thread");
  /* Launching on a stream of another device. */
  cucore_graph_exec fe = {.hdr = {CC_KIND_GRAPH_EXEC}, .dev = &dev0, .graph = g};
  assert_status(cucore_graph_launch(&fe, s1), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "the stream is of device 1, the graph runs on device 0");
}

static void flags_and_options_are_validated(void **state) {
  (void)state;
  cucore_graph *g = fake_graph(&dev0), *other = fake_graph(&dev1);
  struct cucore_stream s1 = {.hdr = {CC_KIND_STREAM},
                             .handle = (CUstream)(uintptr_t)0x400,
                             .dev = &dev1};
  instantiate_flags_refused(g, &s1);
  conditional_nodes_refused(g);
  fills_and_copies_refused(g);
  dependencies_refused(g, other);
  child_graphs_refused(g, other);
  devices_and_captures_refused(g, &s1);
  free_fake_graph(other);
  free_fake_graph(g);
}

/* Per-node updates of an executable graph refuse a wrong list, a node of another graph, a node
 * added later, a node of another kind and unknown values -- and leave the node's values as they
 * were. */
static void node_updates_refuse_and_leave_the_node_unchanged(void **state) {
  (void)state;
  cucore_kernel *k = kernel("saxpy"), *other = kernel("scale4");
  cucore_graph *g = fake_graph(&dev0), *g2 = fake_graph(&dev0);
  cucore_graph_node *kn = fake_node(g, CUCORE_GRAPH_NODE_KERNEL);
  cucore_graph_node *hn = fake_node(g, CUCORE_GRAPH_NODE_HOST);
  cucore_graph_node *foreign = fake_node(g2, CUCORE_GRAPH_NODE_KERNEL);
  cucore_args *a = NULL, *wrong = NULL;
  assert_ok(cucore_args_create(k, &a));
  assert_ok(cucore_args_create(other, &wrong));
  assert_ok(CUCORE_ARGS(a, 3.0f, (cucore_devptr)0x10, (cucore_devptr)0x20, 64));
  cc_kernel_retain(k);
  kn->k = k;
  assert_ok(cc_args_clone(a, &kn->args));
  foreign->k = k;
  cc_kernel_retain(k);
  assert_ok(cc_args_clone(a, &foreign->args));
  /* The executable graph's values of its one kernel node. */
  cc_exec_node st[2];
  memset(st, 0, sizeof st);
  assert_ok(cc_args_clone(a, &st[0].args));
  st[0].k = k;
  st[0].known = 1;
  cucore_graph_exec fe = {.hdr = {CC_KIND_GRAPH_EXEC},
                          .dev = &dev0,
                          .graph = g,
                          .seq = 2, /* the two nodes above were in the graph then */
                          .node_count = 2,
                          .state = st};
  void *buf = NULL;
  size_t bytes = 0;
  assert_ok(cucore_args_get_native(st[0].args, NULL, &buf, &bytes));
  unsigned char before[64];
  assert_true(bytes <= sizeof before);
  memcpy(before, buf, bytes);
  /* Too few arguments; a list for another kernel. */
  assert_status(CUCORE_ARGS(a, 1.0f, (cucore_devptr)0x30), CUCORE_ARG_COUNT);
  assert_status(cucore_graph_exec_set_kernel_args(&fe, kn, a), CUCORE_ARG_COUNT);
  assert_contains(cucore_last_error(), "kernel `saxpy` takes 4 parameters, 2 were given");
  assert_status(cucore_graph_exec_set_kernel_args(&fe, kn, wrong), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "made for kernel `scale4`, not for `saxpy`");
  assert_status(cucore_graph_exec_set_kernel_args(&fe, kn, NULL), CUCORE_INVALID_ARGUMENT);
  assert_memory_equal(before, buf, bytes); /* unchanged */
  /* Wrong nodes. */
  assert_status(cucore_graph_exec_set_kernel_args(&fe, foreign, a), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "is not a node of the graph the executable graph was "
                                       "instantiated from");
  assert_status(cucore_graph_exec_set_kernel_args(&fe, hn, a), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "node 1 (host) is not a kernel node");
  cucore_graph_node *late = fake_node(g, CUCORE_GRAPH_NODE_KERNEL);
  assert_status(cucore_graph_exec_set_kernel_args(&fe, late, a), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "was added to the graph after the executable graph was "
                                       "instantiated");
  st[0].known = 0;
  assert_status(cucore_graph_exec_set_kernel_args(&fe, kn, a), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "unknown since it was updated from a graph cucore could "
                                       "not match");
  st[0].known = 1;
  unsigned dims[3] = {1, 1, 1};
  assert_status(cucore_graph_exec_set_kernel_dims(&fe, kn, NULL, dims, 0), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_graph_exec_set_node_enabled(&fe, hn, 0), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "only kernel, memcpy and memset nodes");
  assert_status(cucore_graph_exec_set_node_enabled(&fe, foreign, 0), CUCORE_INVALID_ARGUMENT);
  assert_memory_equal(before, buf, bytes);
  /* The same refusals for a node of the graph itself. */
  assert_status(cucore_graph_kernel_node_set_args(kn, wrong), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_graph_kernel_node_set_args(hn, wrong), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "is not a kernel node");
  cc_args_free(st[0].args);
  cucore_args_destroy(a);
  cucore_args_destroy(wrong);
  free_fake_graph(g);
  free_fake_graph(g2);
  cucore_kernel_destroy(k);
  cucore_kernel_destroy(other);
}

/* ---- reference sets and counted kernels ------------------------------------------------------ */

static char release_log[64];
static int retains;

static void log_retain(void *p) {
  (void)p;
  retains++;
}

static void log_release(void *p) {
  size_t n = strlen(release_log);
  if (n + 1 < sizeof release_log) release_log[n] = *(const char *)p;
}

static void reference_sets_release_each_member_once(void **state) {
  (void)state;
  static const char a = 'a', b = 'b', c = 'c';
  memset(release_log, 0, sizeof release_log);
  retains = 0;
  cc_refs *r = cc_refs_new();
  assert_non_null(r);
  for (int i = 0; i < 3; i++) assert_ok(cc_refs_hold(r, (void *)&a, log_retain, log_release));
  assert_ok(cc_refs_hold(r, (void *)&b, log_retain, log_release));
  assert_ok(cc_refs_hold(r, (void *)&a, log_retain, log_release)); /* not the last, still once */
  assert_ok(cc_refs_own(r, (void *)&c, log_release));
  assert_int_equal(retains, 2);
  cc_refs_retain(r);
  cc_refs_release(r);
  assert_string_equal(release_log, ""); /* a reference is left */
  cc_refs_release(r);
  assert_string_equal(release_log, "cba"); /* newest first, each once */
  cc_refs_release(NULL);
  cc_refs_drain(); /* nothing dropped by a driver: nothing happens */
  /* Sets hold sets (a child graph's). */
  cc_refs *parent = cc_refs_new(), *child = cc_refs_new();
  memset(release_log, 0, sizeof release_log);
  assert_ok(cc_refs_own(child, (void *)&b, log_release));
  assert_ok(cc_refs_hold(parent, child, cc_refs_retain, cc_refs_release));
  cc_refs_release(child);
  assert_string_equal(release_log, "");
  cc_refs_release(parent);
  assert_string_equal(release_log, "b");
}

static void kernels_are_counted(void **state) {
  (void)state;
  cucore_kernel *k = kernel("saxpy");
  cucore_args *a = NULL;
  assert_ok(cucore_args_create(k, &a));
  cc_kernel_retain(k);                 /* a graph's reference */
  assert_ok(cucore_kernel_destroy(k)); /* the user's: dead to the caller from now on */
  const char *name = NULL;
  assert_status(cucore_kernel_get_name(k, &name), CUCORE_MISUSE);
  assert_string_equal(k->name, "saxpy"); /* but alive for the graph */
  assert_ok(CUCORE_ARGS(a, 1.0f, (cucore_devptr)1, (cucore_devptr)2, 3));
  cucore_args *copy = NULL;
  assert_ok(cc_args_clone(a, &copy));
  cucore_args_destroy(a);
  assert_ok(cucore_args_check(copy)); /* the copy has every value */
  cc_args_free(copy);
  cc_kernel_release(k); /* the last: its parts freed, its shell quarantined (freed at exit) */
}

/* With no capture under way, the capture checks pass without asking the driver. */
static void capture_checks_pass_without_captures(void **state) {
  (void)state;
  assert_false(cc_captures_active());
  assert_ok(cc_capture_check_unsafe(&dev0, 1, 1, "test"));
  struct cucore_event ev = {.hdr = {CC_KIND_EVENT}, .dev = &dev0};
  assert_ok(cc_capture_check_event(&ev, "test"));
  struct cucore_stream s = {.hdr = {CC_KIND_STREAM},
                            .handle = (CUstream)(uintptr_t)0x400,
                            .dev = &dev0};
  assert_null(cc_capture_of(&s));
  assert_ok(cc_capture_hold(&s, &ev, log_retain, log_release)); /* no capture: nothing held */
  int relaxed = cc_capture_relax();
  assert_int_equal(relaxed, -1);
  cc_capture_unrelax(relaxed);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(kernel_node_arguments_are_checked_first),
      cmocka_unit_test(device_condition_setter_compiles),
      cmocka_unit_test(null_handles),
      cmocka_unit_test(null_handles_past_building),
      cmocka_unit_test(flags_and_options_are_validated),
      cmocka_unit_test(node_updates_refuse_and_leave_the_node_unchanged),
      cmocka_unit_test(reference_sets_release_each_member_once),
      cmocka_unit_test(kernels_are_counted),
      cmocka_unit_test(capture_checks_pass_without_captures),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
