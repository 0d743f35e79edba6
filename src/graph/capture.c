/*
 * capture.c -- the public stream-capture calls: begin (into a new graph or an existing one),
 * end (the captured CUgraph becomes a cucore_graph holding what the captured work uses), the
 * capture state of a stream, and capturing N launches of a kernel. What cucore knows of
 * captures, and the calls they forbid, is in runtime/capture_state.c.
 */
#include "graph/graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static cucore_status capture_checks(cucore_stream *s, int mode, const char *fn) {
  CC_CHECK_HANDLE(s, STREAM, fn, "stream");
  if (mode < CUCORE_CAPTURE_GLOBAL || mode > CUCORE_CAPTURE_RELAXED)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: mode %d is not a capture mode (CUCORE_CAPTURE_GLOBAL, _THREAD_LOCAL or "
                   "_RELAXED)",
                   fn, mode);
  if (s->is_default || s->handle == NULL || s->handle == CU_STREAM_LEGACY ||
      s->handle == CU_STREAM_PER_THREAD)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: the %s default stream cannot capture (the driver refuses the legacy "
                   "one, and cucore the per-thread one, which every thread shares a handle to); "
                   "capture on a stream made with cucore_stream_create",
                   fn, s->handle == CU_STREAM_PER_THREAD ? "per-thread" : "legacy");
  if (cc_capture_of(s))
    return cc_fail(CUCORE_STREAM_CAPTURE,
                   "%s: the stream is capturing already (it began or joined a capture that has "
                   "not ended); end that capture first",
                   fn);
  cucore_status st = CC_DRV_REQUIRE(cuStreamBeginCapture);
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuStreamEndCapture);
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuStreamIsCapturing);
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuGraphCreate);
  if (st == CUCORE_OK) st = cc_device_make_current(s->dev);
  return st;
}

cucore_status cucore_stream_begin_capture(cucore_stream *s, cucore_capture_mode mode) {
  cc_begin();
  const char *fn = "cucore_stream_begin_capture";
  cucore_status st = capture_checks(s, (int)mode, fn);
  if (st != CUCORE_OK) return st;
  cc_refs *refs = cc_refs_new();
  if (!refs) return CUCORE_HOST_OUT_OF_MEMORY;
  st = cc_capture_begin(s, (int)mode, NULL, NULL, 0, refs, NULL, NULL, fn);
  cc_refs_release(refs); /* the capture holds its own */
  return st;
}

/* The reference a capture into a graph holds on it. */
static void release_into(void *p) { cc_graph_release(((cucore_graph *)p)->root); }

cucore_status cucore_stream_begin_capture_to_graph(cucore_stream *s, cucore_graph *g,
                                                   cucore_graph_node *const *deps, size_t dep_count,
                                                   cucore_capture_mode mode) {
  cc_begin();
  const char *fn = "cucore_stream_begin_capture_to_graph";
  CC_CHECK_HANDLE(g, GRAPH, fn, "graph");
  cucore_status st = capture_checks(s, (int)mode, fn);
  if (st != CUCORE_OK) return st;
  if (g->dev->ctx != s->dev->ctx)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: the graph runs on device %d, the stream is of "
                   "device %d",
                   fn, g->dev->ordinal, s->dev->ordinal);
  st = CC_DRV_REQUIRE(cuStreamBeginCaptureToGraph);
  CUgraphNode buf[16], *hs = NULL;
  if (st == CUCORE_OK) st = cc_graph_deps(g, deps, dep_count, buf, 16, &hs, fn);
  if (st != CUCORE_OK) return st;
  cc_graph_retain(g->root);
  st = cc_capture_begin(s, (int)mode, g->h, hs, dep_count, g->root->held, g, release_into, fn);
  if (st != CUCORE_OK) cc_graph_release(g->root);
  if (hs != buf) free(hs);
  return st;
}

cucore_status cucore_stream_end_capture(cucore_stream *s, cucore_graph **out) {
  cc_begin();
  const char *fn = "cucore_stream_end_capture";
  if (out) *out = NULL;
  CC_CHECK_HANDLE(s, STREAM, fn, "stream");
  cucore_status st = CC_DRV_REQUIRE(cuStreamEndCapture);
  if (st == CUCORE_OK) st = CC_DRV_REQUIRE(cuStreamIsCapturing);
  if (st == CUCORE_OK) st = cc_device_make_current(s->dev);
  if (st != CUCORE_OK) return st;
  cc_capture *c = cc_capture_of(s);
  const cucore_graph *owner_graph = c ? cc_capture_owner(c) : NULL;
  if (c && (!owner_graph || owner_graph->pending) && !out)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: `out` is NULL, and the capture makes a new "
                   "graph (only a capture into an existing graph may end without `out`); the "
                   "capture goes on",
                   fn);
  CUgraph h = NULL;
  cc_refs *refs = NULL;
  void *owner = NULL;
  st = cc_capture_end(s, &h, &refs, &owner, fn);
  if (owner && ((cucore_graph *)owner)->pending) { /* the structure made while it ran */
    cucore_status taken = cc_graph_take_capture(owner, st == CUCORE_OK ? h : NULL, refs, out);
    if (st == CUCORE_OK) st = taken;
  } else if (owner) { /* captured into an existing graph: `h` is that graph */
    cucore_graph *g = owner;
    if (st == CUCORE_OK && out) *out = g;
    cc_refs_release(refs);
    release_into(g);
  } else if (st == CUCORE_OK) {
    st = cc_graph_wrap(s->dev, h, refs, out);
  }
  cc_refs_drain();
  return st;
}

cucore_status cucore_stream_get_capture_info(cucore_stream *s, cucore_capture_info *out) {
  cc_begin();
  const char *fn = "cucore_stream_get_capture_info";
  CC_CHECK_ARG(out, fn, "out");
  memset(out, 0, sizeof *out);
  out->mode = -1;
  CC_CHECK_HANDLE(s, STREAM, fn, "stream");
  cucore_status st = CC_DRV_REQUIRE(cuStreamIsCapturing);
  if (st == CUCORE_OK) st = cc_device_make_current(s->dev);
  if (st != CUCORE_OK) return st;
  CUstreamCaptureStatus cs = CU_STREAM_CAPTURE_STATUS_NONE;
  CUresult r = DRV(cuStreamIsCapturing)(s->handle, &cs);
  if (r == CUDA_ERROR_STREAM_CAPTURE_IMPLICIT)
    return cc_fail(cc_status(CUCORE_STREAM_CAPTURE, CUCORE_SOURCE_DRIVER, (int)r),
                   "%s: this is the legacy default stream, and a stream that synchronises with "
                   "it is capturing: the driver cannot answer for the legacy stream then",
                   fn);
  if (r != CUDA_SUCCESS) return cc_fail_cu(r, "cuStreamIsCapturing", "%s", fn);
  out->status = (cucore_capture_status)cs;
  if (cs == CU_STREAM_CAPTURE_STATUS_ACTIVE && DRV(cuStreamGetCaptureInfo)) {
    cuuint64_t id = 0;
    CUgraph g = NULL;
    if (DRV(cuStreamGetCaptureInfo)(s->handle, &cs, &id, &g, NULL, NULL) == CUDA_SUCCESS) {
      out->id = (uint64_t)id;
      size_t n = 0;
      if (g && DRV(cuGraphGetNodes) && DRV(cuGraphGetNodes)(g, NULL, &n) == CUDA_SUCCESS)
        out->node_count = n;
    }
  }
  const cc_capture *c = cc_capture_of(s);
  out->by_cucore = c != NULL;
  cc_capture_describe(c, s, &out->mode, &out->is_origin);
  return CUCORE_OK;
}

cucore_status cucore_graph_capture_launches(cucore_kernel *k, const cucore_launch_config *cfg,
                                            cucore_args *args, int count, cucore_graph **out) {
  cc_begin();
  const char *fn = "cucore_graph_capture_launches";
  CC_CHECK_ARG(out, fn, "out");
  *out = NULL;
  CC_CHECK_HANDLE(k, KERNEL, fn, "kernel");
  CC_CHECK_ARG(cfg, fn, "cfg");
  CC_CHECK_HANDLE(args, ARGS, fn, "args");
  if (count < 1 || count > 1000000)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: count %d is outside 1..1000000", fn, count);
  /* Check once before capturing, so that a wrong launch leaves no capture behind. */
  cucore_status st = cc_args_check(args, k);
  if (st != CUCORE_OK) return st;
  CC_CHECK_ARG(cfg->stream, fn, "cfg->stream");
  st = cucore_stream_begin_capture(cfg->stream, CUCORE_CAPTURE_THREAD_LOCAL);
  if (st != CUCORE_OK) return st;
  for (int i = 0; i < count && st == CUCORE_OK; i++) st = cucore_launch(k, cfg, args);
  if (st != CUCORE_OK) {
    char msg[2048];
    snprintf(msg, sizeof msg, "%s: launch of the capture: %s", fn, cucore_last_error());
    cucore_graph *g = NULL;
    (void)cucore_stream_end_capture(cfg->stream, &g);
    cucore_graph_destroy(g);
    return cc_fail_restate(st, msg);
  }
  return cucore_stream_end_capture(cfg->stream, out);
}
