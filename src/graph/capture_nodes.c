/*
 * capture_nodes.c -- work added to a capture while it runs, without leaving it: the capture
 * forked onto helper streams and joined back (events made, recorded and destroyed here), a
 * child graph embedded (cuStreamUpdateCaptureDependencies), and conditional nodes whose
 * bodies are graphs to capture into from other streams. A plain capture that needs a graph
 * structure before it ends (a conditional node's bodies belong to one) gets a pending one: it
 * holds the nodes cucore adds, and becomes the graph cucore_stream_end_capture gives.
 */
#include "graph/graph.h"

#include <stdlib.h>
#include <string.h>

cucore_status cc_graph_take_capture(cucore_graph *g, CUgraph h, cc_refs *refs, cucore_graph **out) {
  cc_refs_release(refs);
  g->pending = 0;
  if (!h) {
    cc_graph_release(g); /* the capture's reference; `h` is NULL: nothing for the driver */
    return CUCORE_OK;    /* (the capture's own failure is the caller's status) */
  }
  g->h = h;
  cucore_status st = cc_refs_attach(g->held, h);
  if (st != CUCORE_OK) {
    cc_graph_release(g); /* destroys `h` too */
    return st;
  }
  g->attached = 1;
  *out = g; /* the capture's reference becomes the caller's */
  return CUCORE_OK;
}

static void release_pending(void *p) { cc_graph_release(p); }

/* The capture `s` runs (one cucore began, `s` taking part): its CUgraph and the nodes its next
 * work depends on. */
static cucore_status capture_point(cucore_stream *s, cc_capture **c, CUgraph *g,
                                   const CUgraphNode **deps, size_t *n, const char *fn) {
  CC_CHECK_HANDLE(s, STREAM, fn, "stream");
  *c = cc_capture_of(s);
  if (!*c)
    return cc_fail(CUCORE_STREAM_CAPTURE,
                   "%s: the stream takes part in no capture cucore began (begin one with "
                   "cucore_stream_begin_capture)",
                   fn);
  cucore_status st = CC_DRV_REQUIRE(cuStreamGetCaptureInfo);
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuStreamUpdateCaptureDependencies);
  if (st == CUCORE_OK) st = cc_device_make_current(s->dev);
  if (st != CUCORE_OK) return st;
  CUstreamCaptureStatus cs = CU_STREAM_CAPTURE_STATUS_NONE;
  cuuint64_t id = 0;
  CUresult r = DRV(cuStreamGetCaptureInfo)(s->handle, &cs, &id, g, deps, n);
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuStreamGetCaptureInfo", "%s", fn);
  if (cs != CU_STREAM_CAPTURE_STATUS_ACTIVE || !*g)
    return cc_fail(CUCORE_STREAM_CAPTURE,
                   "%s: the capture was invalidated by an earlier call; end it "
                   "(cucore_stream_end_capture) and begin again",
                   fn);
  return CUCORE_OK;
}

/* The stream's next work depends on `node` alone. */
static cucore_status continue_after(cucore_stream *s, CUgraphNode node, const char *fn) {
  CUresult r = DRV(cuStreamUpdateCaptureDependencies)(s->handle, &node, 1,
                                                      CU_STREAM_SET_CAPTURE_DEPENDENCIES);
  return r == CUDA_SUCCESS ? CUCORE_OK
                           : cc_fail_cu(r, "cuStreamUpdateCaptureDependencies", "%s", fn);
}

/* The cucore graph the capture's nodes go into: the graph it captures into, or a pending
 * structure made now for a plain capture. */
static cucore_status capture_graph(cc_capture *c, cucore_stream *s, cucore_graph **out) {
  *out = cc_capture_owner(c);
  if (*out) return CUCORE_OK;
  cucore_graph *g = cc_calloc(1, sizeof *g, "a capture's graph");
  if (!g) return CUCORE_HOST_OUT_OF_MEMORY;
  cc_handle_init(g, CC_KIND_GRAPH);
  g->dev = s->dev;
  g->root = g;
  atomic_init(&g->refs, 1);
  /* Its nodes' references go into the capture's own set, which the graph keeps at the end. */
  g->held = c->refs_held;
  cc_refs_retain(g->held);
  g->pending = 1;
  (void)cc_capture_set_owner(c, g, release_pending); /* it had none (checked above) */
  *out = g;
  return CUCORE_OK;
}

/* Each helper waits on the origin (`fork`) or the origin on each helper; a failure names the
 * helper's index before the message of the wait. */
static cucore_status wait_each(cucore_stream *origin, cucore_stream *const *helpers, size_t count,
                               int fork, const char *fn) {
  for (size_t i = 0; i < count; i++) {
    cucore_status st = fork ? cucore_stream_wait_stream(helpers[i], origin)
                            : cucore_stream_wait_stream(origin, helpers[i]);
    if (st == CUCORE_OK) continue;
    cc_sb msg = {0};
    cc_sb_printf(&msg, "%s: helper %zu: %s", fn, i, cucore_last_error());
    cc_fail_restate(st, cc_sb_text(&msg));
    cc_sb_free(&msg);
    return st;
  }
  return CUCORE_OK;
}

cucore_status cucore_stream_capture_fork(cucore_stream *origin, cucore_stream *const *helpers,
                                         size_t count) {
  cc_begin();
  const char *fn = "cucore_stream_capture_fork";
  CC_CHECK_HANDLE(origin, STREAM, fn, "origin");
  if (count && !helpers)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: `helpers` is NULL with a count of %zu", fn, count);
  if (!cc_capture_of(origin))
    return cc_fail(CUCORE_STREAM_CAPTURE, "%s: the origin takes part in no capture cucore began",
                   fn);
  return wait_each(origin, helpers, count, 1, fn);
}

cucore_status cucore_stream_capture_join(cucore_stream *origin, cucore_stream *const *helpers,
                                         size_t count) {
  cc_begin();
  const char *fn = "cucore_stream_capture_join";
  CC_CHECK_HANDLE(origin, STREAM, fn, "origin");
  if (count && !helpers)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: `helpers` is NULL with a count of %zu", fn, count);
  return wait_each(origin, helpers, count, 0, fn);
}

cucore_status cucore_stream_capture_add_graph(cucore_stream *s, cucore_graph *child) {
  cc_begin();
  const char *fn = "cucore_stream_capture_add_graph";
  CC_CHECK_HANDLE(child, GRAPH, fn, "child");
  cc_capture *c = NULL;
  CUgraph g = NULL;
  const CUgraphNode *deps = NULL;
  size_t n = 0;
  cucore_status st = capture_point(s, &c, &g, &deps, &n, fn);
  if (st != CUCORE_OK) return st;
  const char *why = child->is_body                   ? "owned by a node"
                    : child->pending                 ? "a capture still running"
                    : child->dev->ctx != s->dev->ctx ? "a graph of another device"
                    : child->conditionals            ? "a graph with conditional nodes"
                    : child->mem_nodes               ? "a graph with memory nodes"
                                                     : NULL;
  if (why)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: the child graph is %s, which a child-graph node "
                   "cannot take",
                   fn, why);
  st = CC_DRV_REQUIRE(cuGraphAddChildGraphNode);
  if (st == CUCORE_OK) st = cc_capture_hold(s, child->held, cc_refs_retain, cc_refs_release);
  if (st != CUCORE_OK) return st;
  CUgraphNode node = NULL;
  CUresult r = DRV(cuGraphAddChildGraphNode)(&node, g, deps, n, child->h);
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuGraphAddChildGraphNode", "%s", fn);
  return continue_after(s, node, fn);
}

cucore_status cucore_stream_capture_condition_create(cucore_stream *s, unsigned default_value,
                                                     unsigned flags, cucore_graph_condition *out) {
  cc_begin();
  const char *fn = "cucore_stream_capture_condition_create";
  CC_CHECK_ARG(out, fn, "out");
  *out = 0;
  if (flags & ~(unsigned)CUCORE_CONDITION_ASSIGN_DEFAULT)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: unknown flags 0x%x (CUCORE_CONDITION_ASSIGN_DEFAULT is 0x1)", fn, flags);
  cc_capture *c = NULL;
  CUgraph g = NULL;
  const CUgraphNode *deps = NULL;
  size_t n = 0;
  cucore_status st = capture_point(s, &c, &g, &deps, &n, fn);
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuGraphConditionalHandleCreate);
  if (st != CUCORE_OK) return st;
  CUgraphConditionalHandle h = 0;
  CUresult r = DRV(cuGraphConditionalHandleCreate)(&h, g, s->dev->ctx, default_value, flags);
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuGraphConditionalHandleCreate", "%s", fn);
  *out = (cucore_graph_condition)h;
  return CUCORE_OK;
}

cucore_status cucore_stream_capture_add_conditional(cucore_stream *s, cucore_graph_condition cond,
                                                    cucore_conditional_type type,
                                                    unsigned body_count, cucore_graph **bodies) {
  cc_begin();
  const char *fn = "cucore_stream_capture_add_conditional";
  cucore_status st = cc_graph_conditional_checks(type, body_count, bodies, fn);
  cc_capture *c = NULL;
  CUgraph g = NULL;
  const CUgraphNode *deps = NULL;
  size_t n = 0;
  if (st == CUCORE_OK) st = capture_point(s, &c, &g, &deps, &n, fn);
  cucore_graph *owner = NULL;
  if (st == CUCORE_OK) st = capture_graph(c, s, &owner);
  cucore_graph_node *node = NULL;
  if (st == CUCORE_OK)
    st = cc_graph_add_conditional_in(owner, g, deps, n, cond, type, body_count, bodies, &node, fn);
  if (st != CUCORE_OK) return st;
  return continue_after(s, node->h, fn);
}
