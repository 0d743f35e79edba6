/*
 * conditional.c -- conditions (cuGraphConditionalHandleCreate) and conditional nodes: if,
 * if/else, while and switch over body graphs the node owns (cuGraphAddNode with
 * CU_GRAPH_NODE_TYPE_CONDITIONAL). A kernel sets the condition from the device with
 * cudaGraphSetConditional (CUCORE_GRAPH_SET_CONDITIONAL_DECL declares it for NVRTC).
 *
 * Versions: conditions, if and while need CUDA 12.3; if/else (two bodies) and switch 12.8.
 */
#include "graph/graph.h"

#include <stdlib.h>
#include <string.h>

cucore_status cucore_graph_condition_create(cucore_graph *g, unsigned default_value, unsigned flags,
                                            cucore_graph_condition *out) {
  cc_begin();
  const char *fn = "cucore_graph_condition_create";
  CC_CHECK_ARG(out, fn, "out");
  *out = 0;
  CC_CHECK_HANDLE(g, GRAPH, fn, "graph");
  if (flags & ~(unsigned)CUCORE_CONDITION_ASSIGN_DEFAULT)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: unknown flags 0x%x (expected CUCORE_CONDITION_DEFAULT or "
                   "CUCORE_CONDITION_ASSIGN_DEFAULT)",
                   fn, flags);
  cucore_status st = CC_DRV_REQUIRE(cuGraphConditionalHandleCreate);
  if (st == CUCORE_OK) st = cc_device_make_current(g->dev);
  if (st != CUCORE_OK) return st;
  CUgraphConditionalHandle h = 0;
  CUresult r = DRV(cuGraphConditionalHandleCreate)(&h, g->h, g->dev->ctx, default_value,
                                                   (flags & CUCORE_CONDITION_ASSIGN_DEFAULT)
                                                       ? CU_GRAPH_COND_ASSIGN_DEFAULT
                                                       : 0);
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, "cuGraphConditionalHandleCreate", "%s: device %d", fn, g->dev->ordinal);
  *out = (cucore_graph_condition)h;
  return CUCORE_OK;
}

static const char *type_name(cucore_conditional_type t) {
  return t == CUCORE_CONDITIONAL_IF ? "if" : t == CUCORE_CONDITIONAL_WHILE ? "while" : "switch";
}

/* The bodies the driver made for node `n` (it owns them: phGraph_out points into the node),
 * each wrapped, given in `bodies` and kept in the node with its condition; then the node kept. */
static cucore_status keep_conditional(cucore_graph *g, cucore_graph_node *n,
                                      const CUgraphNodeParams *p, cucore_graph **bodies) {
  unsigned count = p->conditional.size;
  cucore_status st = CUCORE_OK;
  for (unsigned i = 0; st == CUCORE_OK && i < count; i++)
    st = cc_graph_new_body(g->root, p->conditional.phGraph_out[i], &bodies[i]);
  if (st != CUCORE_OK) return st;
  n->bodies = cc_calloc(count, sizeof *n->bodies, "a conditional node's bodies");
  if (!n->bodies) return CUCORE_HOST_OUT_OF_MEMORY;
  memcpy(n->bodies, bodies, count * sizeof *bodies);
  n->body_count = count;
  n->cond = (cucore_graph_condition)p->conditional.handle;
  n->cond_type = (cucore_conditional_type)p->conditional.type;
  return cc_graph_add_node(g, n);
}

cucore_status cc_graph_conditional_checks(cucore_conditional_type type, unsigned body_count,
                                          cucore_graph **bodies, const char *fn) {
  CC_CHECK_ARG(bodies, fn, "bodies");
  if ((int)type < CUCORE_CONDITIONAL_IF || type > CUCORE_CONDITIONAL_SWITCH)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: type %d is not a conditional type (CUCORE_CONDITIONAL_IF, _WHILE or "
                   "_SWITCH)",
                   fn, (int)type);
  unsigned most = type == CUCORE_CONDITIONAL_IF      ? 2
                  : type == CUCORE_CONDITIONAL_WHILE ? 1
                                                     : 1u << 20;
  if (body_count < 1 || body_count > most)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: %s; %u were asked for", fn,
                   type == CUCORE_CONDITIONAL_IF ? "an if node takes 1 body (if) or 2 (if/else)"
                   : type == CUCORE_CONDITIONAL_WHILE ? "a while node takes exactly 1 body"
                                                      : "a switch node takes 1 body or more",
                   body_count);
  for (unsigned i = 0; i < body_count; i++) bodies[i] = NULL;
  /* The driver's versions: cuGraphAddNode and if/while came with CUDA 12.3, if/else and
   * switch with 12.8 (an older driver refuses them with a bare invalid-value). */
  cucore_status st = CC_DRV_REQUIRE(cuGraphAddNode);
  if (st != CUCORE_OK) return st;
  int needs_12_8 = type == CUCORE_CONDITIONAL_SWITCH || body_count == 2;
  if (needs_12_8 && cc_drv.version < 12080)
    return cc_fail(cc_status(CUCORE_DRIVER_TOO_OLD, CUCORE_SOURCE_NONE, 0),
                   "%s: %s nodes need a driver for CUDA 12.8 or newer; the loaded driver is "
                   "version %d.%d (if with one body and while work from 12.3)",
                   fn, type == CUCORE_CONDITIONAL_SWITCH ? "switch" : "if/else",
                   cc_drv.version / 1000, cc_drv.version % 1000 / 10);
  return CUCORE_OK;
}

cucore_status cc_graph_add_conditional_in(cucore_graph *g, CUgraph into, const CUgraphNode *hs,
                                          size_t dep_count, cucore_graph_condition cond,
                                          cucore_conditional_type type, unsigned body_count,
                                          cucore_graph **bodies, cucore_graph_node **out,
                                          const char *fn) {
  cucore_graph_node *n = NULL;
  cucore_status st = cc_graph_node_new(g, CUCORE_GRAPH_NODE_CONDITIONAL, &n);
  if (st != CUCORE_OK) return st;
  CUgraphNodeParams p;
  memset(&p, 0, sizeof p);
  p.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
  p.conditional.handle = (CUgraphConditionalHandle)cond;
  p.conditional.type = (CUgraphConditionalNodeType)type;
  p.conditional.size = body_count;
  p.conditional.ctx = g->dev->ctx;
  CUresult r = DRV(cuGraphAddNode)(&n->h, into, hs, NULL, dep_count, &p);
  if (r != CUDA_SUCCESS) {
    cc_graph_node_free(n);
    return cc_fail_cu(r, "cuGraphAddNode",
                      "%s: a %s node with %u bod%s on device %d (is the condition one made for "
                      "this graph, and not used by another node?)",
                      fn, type_name(type), body_count, body_count == 1 ? "y" : "ies",
                      g->dev->ordinal);
  }
  st = keep_conditional(g, n, &p, bodies);
  if (st != CUCORE_OK) {
    /* The body structures stay with the root (freed with it); the caller gets none. */
    for (unsigned i = 0; i < body_count; i++) bodies[i] = NULL;
    cc_graph_node_undo(n);
    cc_graph_node_free(n);
    return st;
  }
  g->root->conditionals++;
  *out = n;
  return CUCORE_OK;
}

cucore_status cucore_graph_add_conditional_node(cucore_graph *g, cucore_graph_node *const *deps,
                                                size_t dep_count, cucore_graph_condition cond,
                                                cucore_conditional_type type, unsigned body_count,
                                                cucore_graph **bodies, cucore_graph_node **out) {
  cc_begin();
  const char *fn = "cucore_graph_add_conditional_node";
  cucore_status st = cc_graph_enter(g, out, fn);
  if (st == CUCORE_OK) st = cc_graph_conditional_checks(type, body_count, bodies, fn);
  if (st != CUCORE_OK) return st;
  CUgraphNode buf[16], *hs = NULL;
  st = cc_graph_deps(g, deps, dep_count, buf, 16, &hs, fn);
  if (st == CUCORE_OK) st = cc_device_make_current(g->dev);
  if (st == CUCORE_OK)
    st = cc_graph_add_conditional_in(g, g->h, hs, dep_count, cond, type, body_count, bodies, out,
                                     fn);
  if (hs != buf) free(hs);
  return st;
}
