/* test_graph_memnodes.c -- graph allocation and free nodes through the fake driver: absent entry
 * points give CUCORE_DRIVER_TOO_OLD naming them; with stand-ins for the two entry points (set into
 * the loaded driver table), the allocation is recorded as the graph's (pointer checks know it),
 * frees outside the graph are refused with a message, a free node takes only an allocation of its
 * own graph once, instantiation needs every allocation freed in the graph, and the record goes with
 * the graph; with strict pointer checks, a kernel node's pointer past the end of a graph
 * allocation, or into freed graph memory, is refused. An address given again to an allocation made
 * after the free of the one that had it (the driver does so: two H200s) is freed by its own free
 * node. */
#include "support.h"

#include "loader/loader.h"

#include <stdlib.h>
#include <string.h>

#ifndef CUCORE_FAKE_DRIVER_PATH
#error "CUCORE_FAKE_DRIVER_PATH is set by tests/CMakeLists.txt"
#endif

/* ---- stand-ins for the driver's memory nodes ------------------------------------------------- */

static int alloc_calls, free_calls;
static CUdeviceptr give_again; /* when set: the next allocation's address (then cleared) */
static CUdeviceptr last_freed;
static size_t last_bytes;
static int last_loc_type;

static CUresult stand_in_alloc(CUgraphNode *n, CUgraph g, const CUgraphNode *deps, size_t nd,
                               CUDA_MEM_ALLOC_NODE_PARAMS *p) {
  (void)g, (void)deps, (void)nd;
  alloc_calls++;
  last_bytes = p->bytesize;
  last_loc_type = (int)p->poolProps.location.type;
  /* Addresses far from what the fake's own allocations use, 1 MiB apart. */
  p->dptr = (CUdeviceptr)0x7e0000000000ull + (CUdeviceptr)alloc_calls * (1u << 20);
  if (give_again) p->dptr = give_again, give_again = 0;
  *n = (CUgraphNode)(uintptr_t)(0x900000 + alloc_calls);
  return CUDA_SUCCESS;
}

static CUresult stand_in_free(CUgraphNode *n, CUgraph g, const CUgraphNode *deps, size_t nd,
                              CUdeviceptr dptr) {
  (void)g, (void)deps, (void)nd;
  free_calls++;
  last_freed = dptr;
  *n = (CUgraphNode)(uintptr_t)(0x910000 + free_calls);
  return CUDA_SUCCESS;
}

static cucore_device *dev;

static const char ptx_text[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
                               ".visible .entry k(.param .u64 p, .param .u32 n)\n{\n  ret;\n}\n";

static int open_fake(void **state) {
  (void)state;
  setenv("CUCORE_LIBCUDA", CUCORE_FAKE_DRIVER_PATH, 1);
  return cucore_device_open(0, &dev) == CUCORE_OK ? 0 : -1;
}

static int close_fake(void **state) {
  (void)state;
  return cucore_device_close(dev) == CUCORE_OK ? 0 : -1;
}

static void use_stand_ins(int on) {
  cc_drv.fn_cuGraphAddMemAllocNode = on ? stand_in_alloc : NULL;
  cc_drv.fn_cuGraphAddMemFreeNode = on ? stand_in_free : NULL;
}

/* The fake has no memory nodes: the status names the entry point and its CUDA version. */
static void absent_entry_points(void **state) {
  (void)state;
  use_stand_ins(0);
  cucore_graph *g = NULL;
  assert_ok(cucore_graph_create(dev, &g));
  cucore_graph_node *n = (cucore_graph_node *)1;
  cucore_devptr p = 1;
  assert_status(cucore_graph_add_mem_alloc_node(g, NULL, 0, 4096, &p, &n), CUCORE_DRIVER_TOO_OLD);
  assert_contains(cucore_last_error(), "cuGraphAddMemAllocNode");
  assert_contains(cucore_last_error(), "11.4");
  assert_null(n);
  assert_int_equal(p, 0);
  assert_ok(cucore_graph_destroy(g));
}

static void argument_checks(void **state) {
  (void)state;
  use_stand_ins(1);
  cucore_graph *g = NULL;
  cucore_graph_node *n = NULL;
  cucore_devptr p = 0;
  assert_ok(cucore_graph_create(dev, &g));
  assert_status(cucore_graph_add_mem_alloc_node(g, NULL, 0, 0, &p, &n), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "size is 0");
  assert_status(cucore_graph_add_mem_alloc_node(g, NULL, 0, (size_t)-8, &p, &n),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "negative");
  assert_status(cucore_graph_add_mem_alloc_node(NULL, NULL, 0, 64, &p, &n),
                CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_graph_add_mem_alloc_node(g, NULL, 0, 64, NULL, &n), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_graph_add_mem_free_node(g, NULL, 0, 0, &n), CUCORE_INVALID_ARGUMENT);
  assert_int_equal(alloc_calls + free_calls, 0);
  assert_ok(cucore_graph_destroy(g));
}

static void allocation_owned_by_graph(void **state) {
  (void)state;
  use_stand_ins(1);
  int calls0 = alloc_calls;
  cucore_graph *g = NULL;
  cucore_graph_node *a = NULL;
  cucore_devptr p = 0;
  assert_ok(cucore_graph_create(dev, &g));
  assert_ok(cucore_graph_add_mem_alloc_node(g, NULL, 0, 4096, &p, &a));
  assert_int_equal(alloc_calls, calls0 + 1);
  assert_int_equal(last_bytes, 4096);
  assert_int_equal(last_loc_type, CU_MEM_LOCATION_TYPE_DEVICE);
  assert_true(p != 0);
  cucore_graph_node_type t;
  assert_ok(cucore_graph_node_get_type(a, &t));
  assert_int_equal(t, CUCORE_GRAPH_NODE_MEM_ALLOC);
  assert_string_equal(cucore_graph_node_type_name(t), "mem_alloc");

  /* Recorded: the facts and the kernel-pointer check know it, with its size. */
  cucore_pointer_facts facts;
  assert_ok(cucore_pointer_get_facts(p + 16, &facts));
  assert_int_equal(facts.kind, CUCORE_MEM_GRAPH);
  assert_int_equal(facts.size, 4096);
  assert_ok(cucore_pointer_check_access(dev, p, 4096));
  assert_status(cucore_pointer_check_access(dev, p + 4000, 200), CUCORE_OUT_OF_BOUNDS);

  /* Freed outside the graph: refused, naming the free node. */
  assert_status(cucore_mem_free(dev, p), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "graph");
  assert_contains(cucore_last_error(), "cucore_graph_add_mem_free_node");

  assert_ok(cucore_graph_destroy(g));
}

/* Free nodes take only the start of an allocation of their own graph, once; instantiation
 * needs every allocation freed in the graph; the record goes with the graph. */
static void free_nodes_and_instantiation(void **state) {
  (void)state;
  use_stand_ins(1);
  cucore_graph *g = NULL, *other = NULL;
  cucore_graph_node *a = NULL, *f = NULL, *e = NULL;
  cucore_devptr p = 0;
  cucore_graph_node_type t;
  cucore_pointer_facts facts;
  assert_ok(cucore_graph_create(dev, &g));
  assert_ok(cucore_graph_add_mem_alloc_node(g, NULL, 0, 4096, &p, &a));
  /* Not yet freed in the graph: instantiation refuses. */
  cucore_graph_exec *x = NULL;
  assert_status(cucore_graph_instantiate(g, 0, NULL, &x), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "never freed");

  /* Free nodes: not inside, not of another graph, once. */
  assert_status(cucore_graph_add_mem_free_node(g, &a, 1, p + 8, &f), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "inside");
  assert_ok(cucore_graph_create(dev, &other));
  assert_status(cucore_graph_add_mem_free_node(other, NULL, 0, p, &f), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "another graph");
  assert_status(cucore_graph_add_child_graph_node(other, NULL, 0, g, &e), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "allocation or free nodes");
  assert_ok(cucore_graph_add_mem_free_node(g, &a, 1, p, &f));
  assert_int_equal(last_freed, p);
  assert_ok(cucore_graph_node_get_type(f, &t));
  assert_int_equal(t, CUCORE_GRAPH_NODE_MEM_FREE);
  assert_status(cucore_graph_add_mem_free_node(g, &f, 1, p, &e), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "freed already");

  /* Still the graph's after its free node: outside frees stay refused. */
  assert_status(cucore_mem_free(dev, p), CUCORE_INVALID_ARGUMENT);
  assert_ok(cucore_graph_instantiate(g, 0, NULL, &x));
  assert_ok(cucore_graph_exec_destroy(x));
  assert_ok(cucore_graph_destroy(other));
  assert_ok(cucore_graph_destroy(g));

  /* The graph is gone: the address is known as freed. */
  assert_ok(cucore_pointer_get_facts(p, &facts));
  assert_true(facts.freed);
}

static void an_address_given_again_after_its_free(void **state) {
  (void)state;
  use_stand_ins(1);
  cucore_graph *g = NULL;
  cucore_graph_node *a1 = NULL, *f1 = NULL, *a2 = NULL, *f2 = NULL, *e = NULL;
  cucore_devptr p1 = 0, p2 = 0;
  assert_ok(cucore_graph_create(dev, &g));
  assert_ok(cucore_graph_add_mem_alloc_node(g, NULL, 0, 4096, &p1, &a1));
  assert_ok(cucore_graph_add_mem_free_node(g, &a1, 1, p1, &f1));
  give_again = p1;
  assert_ok(cucore_graph_add_mem_alloc_node(g, &f1, 1, 8192, &p2, &a2));
  assert_int_equal(p2, p1);
  assert_ok(cucore_pointer_check_access(dev, p2, 8192)); /* the record is the new one's */
  assert_ok(cucore_graph_add_mem_free_node(g, &a2, 1, p2, &f2));
  assert_status(cucore_graph_add_mem_free_node(g, &f2, 1, p2, &e), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "freed already");
  cucore_graph_exec *x = NULL;
  assert_ok(cucore_graph_instantiate(g, 0, NULL, &x));
  assert_ok(cucore_graph_exec_destroy(x));
  assert_ok(cucore_graph_destroy(g));
}

/* Strict pointer checks on a kernel node's arguments: the graph allocation itself passes; an
 * address past its end (in the addresses the driver keeps for graph memory) and an address of a
 * graph gone are refused when bound, and the kernel node with that list is refused too. */
static void kernel_node_pointer_past_the_end_refused(void **state) {
  (void)state;
  use_stand_ins(1);
  cucore_object *obj = NULL;
  cucore_kernel *k = NULL;
  cucore_args *args = NULL;
  assert_ok(cucore_object_from_memory(ptx_text, sizeof ptx_text, CUCORE_CODE_PTX, "k.ptx", &obj));
  assert_ok(cucore_object_get_kernel(obj, "k", &k));
  assert_ok(cucore_args_create(k, &args));
  assert_ok(cucore_mem_set_checks(CUCORE_MEM_CHECK_KERNEL_POINTERS));
  cucore_graph *g = NULL, *g2 = NULL;
  cucore_graph_node *a = NULL, *kn = NULL, *bad = NULL;
  cucore_devptr p = 0;
  assert_ok(cucore_graph_create(dev, &g));
  assert_ok(cucore_graph_add_mem_alloc_node(g, NULL, 0, 4000, &p, &a));
  cucore_launch_config c;
  memset(&c, 0, sizeof c);
  c.grid[0] = 1;
  c.block[0] = 32;
  assert_ok(cucore_args_set_ptr(args, 0, p));
  assert_ok(cucore_args_set_u32(args, 1, 32));
  assert_ok(cucore_graph_add_kernel_node(g, &a, 1, k, &c, args, &kn));

  /* 32 bytes past the end of the 4000: refused when bound, and the node with the list. */
  assert_ok(cucore_args_reset(args));
  assert_status(cucore_args_set_ptr(args, 0, p + 4032), CUCORE_OUT_OF_BOUNDS);
  assert_contains(cucore_last_error(), "argument 0 of `k`");
  assert_contains(cucore_last_error(), "32 bytes past the end of");
  assert_ok(cucore_args_set_u32(args, 1, 32));
  bad = (cucore_graph_node *)1;
  assert_status(cucore_graph_add_kernel_node(g, &a, 1, k, &c, args, &bad), CUCORE_OUT_OF_BOUNDS);
  assert_contains(cucore_last_error(), "past the end");
  assert_null(bad);
  assert_ok(cucore_graph_destroy(g));

  /* The graph is gone: its allocation's address is a bad pointer now. */
  assert_ok(cucore_args_reset(args));
  assert_status(cucore_args_set_ptr(args, 0, p), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "was freed");
  assert_ok(cucore_args_set_u32(args, 1, 32));
  assert_ok(cucore_graph_create(dev, &g2));
  bad = (cucore_graph_node *)1;
  assert_status(cucore_graph_add_kernel_node(g2, NULL, 0, k, &c, args, &bad),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "was freed");
  assert_null(bad);
  assert_ok(cucore_graph_destroy(g2));
  assert_ok(cucore_mem_set_checks(0));
  assert_ok(cucore_args_destroy(args));
  assert_ok(cucore_kernel_destroy(k));
  assert_ok(cucore_object_destroy(obj));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(absent_entry_points),
      cmocka_unit_test(argument_checks),
      cmocka_unit_test(allocation_owned_by_graph),
      cmocka_unit_test(free_nodes_and_instantiation),
      cmocka_unit_test(an_address_given_again_after_its_free),
      cmocka_unit_test(kernel_node_pointer_past_the_end_refused),
  };
  return cmocka_run_group_tests(tests, open_fake, close_fake);
}
