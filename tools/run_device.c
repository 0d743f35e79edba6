/* run_device.c -- the GPU part of `cucore run`: buffers allocated and filled, module variables
 * written, the kernel loaded, one launch whose results are kept, then warm-up and timed
 * launches (device events, an optional L2 flush before each), module variables read back.
 * Buffers come from cucore_mem_alloc (cuMemAlloc), or with --pool from the device's
 * stream-ordered pool on the run's stream (cuMemAllocAsync; cucore_mem_alloc with a note where
 * the device has no pools). Plain cuMemAlloc is the default because the pool's first use in a
 * process (the default pool made ready) cost 14-16 ms of a one-launch run on an H200, against
 * well under a millisecond for the raw driver's cuMemAlloc.
 * With --graph N the N launches are captured once into a CUDA graph (checked as direct
 * launches are), instantiated and uploaded; the timed launches are then replays of it, and N
 * direct launches back to back are timed beside them for comparison.
 * Device printf output is kept off the JSON stream: while the kernel runs, stdout goes to
 * stderr when the JSON is written to stdout.
 * Nothing on the device is freed or destroyed at the end: the command exits right after, and
 * the process's exit releases the context, its memory and its streams anyway, while releasing
 * the primary context (cucore_device_close) is synchronous and costs tens of ms. The handles
 * stay reachable (left_for_exit), so leak checkers do not count them. Each step is timed as
 * its phase (cucore_phase_add: alloc, copy_in, launch, copy_out, teardown).
 * Every timed launch goes through the library's timing engine, cucore_tune_time_samples (the
 * tune's, with the counts given: --warmup W untimed launches, --repeat R samples), so the
 * flush (2 x L2, the word 0x5a5a5a5a, outside the events), the events and the statistics
 * (run_result_stats over cucore_tune_stats_compute) are the tune's. */
#include "cmd_run.h"
#include "system_facts.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int run_is_timed(const run_opts *o) { return o->warmup > 0 || o->repeat > 1 || o->graph > 0; }

typedef struct dev_state {
  cucore_device *dev;
  cucore_stream *stream;
  cucore_devptr flush;
  size_t flush_bytes;
  cucore_args *args;
  int pool; /* 1: device memory from the stream-ordered pool on `stream` */
  cucore_graph *graph;
  cucore_graph_exec *exec;
  int saved_stdout; /* -1 when stdout was not redirected */
} dev_state;

/* What the run made on the device, kept until the process exits (see the top). */
static dev_state left_for_exit;

static cucore_status dev_alloc(dev_state *s, size_t bytes, cucore_devptr *ptr) {
  return s->pool ? cucore_mem_alloc_async(s->stream, bytes, ptr)
                 : cucore_mem_alloc(s->dev, bytes, ptr);
}

static void redirect_stdout(dev_state *s, int on) {
  fflush(stdout);
  if (on) {
    s->saved_stdout = dup(1);
    if (s->saved_stdout >= 0) dup2(2, 1);
  } else if (s->saved_stdout >= 0) {
    dup2(s->saved_stdout, 1);
    close(s->saved_stdout);
    s->saved_stdout = -1;
  }
}

/* Module variables: written before the run (sizes must match), found for reading after. */
static int prepare_globals(run_opts *o, dev_state *s, cucore_object *obj) {
  int rc = args_bind_write_globals(&o->specs, s->dev, obj);
  if (rc) return rc;
  for (int i = 0; i < o->specs.nreads; i++) {
    args_global_read *r = &o->specs.reads[i];
    char sym[512];
    cucore_status st =
        cucore_object_get_global(obj, s->dev,
                                 args_bind_global_symbol(obj, r->name, sym, sizeof sym), &r->g);
    if (st != CUCORE_OK) return cli_fail("run", "--read-global", st);
    size_t esz = (size_t)args_elem_sizes[r->type];
    if (r->count == 0) {
      if (r->g.size % esz) {
        fprintf(stderr,
                "cucore run: --read-global %s: `%s` is %zu bytes, not a whole number of "
                "%s elements; give TYPE[N]\n",
                r->text, r->name, r->g.size, args_elem_names[r->type]);
        return CLI_EXIT_FAILURE;
      }
      r->count = r->g.size / esz;
    } else if (r->count * esz > r->g.size) {
      fprintf(stderr,
              "cucore run: --read-global %s: %zu elements of %s are %zu bytes; `%s` (%s) "
              "is %zu bytes\n",
              r->text, r->count, args_elem_names[r->type], r->count * esz, r->name,
              cucore_global_kind_name(r->g.kind), r->g.size);
      return CLI_EXIT_FAILURE;
    }
    r->host = calloc(r->count ? r->count : 1, esz);
    if (!r->host) return cli_fail("run", r->text, CUCORE_HOST_OUT_OF_MEMORY);
  }
  return 0;
}

/* Clusters above the portable 8 blocks, from --cluster or the kernel's own shape, are allowed
 * on the kernel (as dynamic shared memory above 48 KiB is raised by the launch). */
static void allow_large_clusters(const run_opts *o, cucore_kernel *k, dev_state *s) {
  unsigned long long size = 0;
  if (o->cluster[0]) {
    size = (unsigned long long)o->cluster[0] * o->cluster[1] * o->cluster[2];
  } else {
    int w = 0, h = 0, d = 0;
    if (cucore_kernel_get_attribute(k, s->dev, CUCORE_KATTR_REQUIRED_CLUSTER_WIDTH, &w) ==
            CUCORE_OK &&
        w > 0) {
      cucore_kernel_get_attribute(k, s->dev, CUCORE_KATTR_REQUIRED_CLUSTER_HEIGHT, &h);
      cucore_kernel_get_attribute(k, s->dev, CUCORE_KATTR_REQUIRED_CLUSTER_DEPTH, &d);
      size = (unsigned long long)w * (h > 0 ? h : 1) * (d > 0 ? d : 1);
    }
  }
  if (size <= 8) return;
  if (cucore_kernel_set_attribute(k, s->dev, CUCORE_KATTR_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1) !=
      CUCORE_OK)
    fprintf(stderr,
            "cucore run: note: a cluster of %llu blocks needs non-portable cluster "
            "sizes, which the device refused: %s\n",
            size, cucore_last_error());
}

/* The timing engine's options for this run: the flush of --flush-l2 (2 x L2, the caller's
 * buffer) before each sample. */
static cucore_tune_sample_options engine(const dev_state *s, long long warmup, long long samples) {
  cucore_tune_sample_options e;
  memset(&e, 0, sizeof e);
  e.warmup = warmup;
  e.samples = samples;
  e.l2_bytes = s->flush_bytes / 2;
  e.flush_buffer = s->flush;
  return e;
}

/* --graph N: N launches captured once into a graph (each checked as cucore_launch checks it),
 * instantiated and uploaded; W untimed and R timed replays (`replay` gets the time of each),
 * and R batches of N direct launches back to back (`direct` gets the time per kernel). */
static int graph_timing(const run_opts *o, cucore_kernel *k, const cucore_launch_config *cfg,
                        dev_state *s, run_timing *t, double *replay, double *direct) {
  int n = (int)o->graph;
  cucore_status st = cucore_graph_capture_launches(k, cfg, s->args, n, &s->graph);
  if (st != CUCORE_OK) return cli_fail("run", "--graph: capturing the launches", st);
  st = cucore_graph_get_node_count(s->graph, &t->graph_nodes);
  if (st == CUCORE_OK)
    st = cucore_graph_instantiate(s->graph, CUCORE_GRAPH_INSTANTIATE_UPLOAD, s->stream, &s->exec);
  if (st != CUCORE_OK) return cli_fail("run", "--graph: instantiating the graph", st);
  t->graph_kernels = n;
  cucore_tune_sample_options e = engine(s, o->warmup, o->repeat);
  e.exec = s->exec;
  st = cucore_tune_time_samples(k, cfg, s->args, &e, replay);
  if (st != CUCORE_OK) return cli_fail("run", "--graph: the replays", st);
  t->launches += (o->warmup + o->repeat) * n;
  /* The same launches made directly, back to back, for comparison. */
  e = engine(s, 0, o->repeat);
  e.batch = n;
  st = cucore_tune_time_samples(k, cfg, s->args, &e, direct);
  if (st != CUCORE_OK) return cli_fail("run", o->kernel, st);
  t->launches += o->repeat * n;
  t->direct = run_result_stats(direct, o->repeat);
  return 0;
}

/* Without --graph: W warm-up launches, the clock sampled, R timed launches into `times`. */
static int direct_timing(const run_opts *o, cucore_kernel *k, const cucore_launch_config *cfg,
                         dev_state *s, run_timing *t, double *times, long long timed) {
  cucore_tune_sample_options e = engine(s, o->warmup, 0);
  cucore_status st = cucore_tune_time_samples(k, cfg, s->args, &e, NULL);
  if (st != CUCORE_OK) return cli_fail("run", o->kernel, st);
  t->launches += o->warmup;
  system_facts_sample(o->device, &t->sm_clock_mhz, &t->sm_clock_max_mhz, &t->clock_reasons);
  e = engine(s, 0, timed);
  st = cucore_tune_time_samples(k, cfg, s->args, &e, times);
  if (st != CUCORE_OK) return cli_fail("run", o->kernel, st);
  t->launches += timed;
  return 0;
}

/* Copies the results back: every buffer the report or a file needs, and the globals read
 * (the launch is done: first_launch waited for it). */
static int collect(run_opts *o, dev_state *s) {
  cucore_status st;
  for (int i = 0; i < o->specs.nbufs; i++) {
    args_buf *b = &o->specs.bufs[i];
    if (b->role == ARGS_IN && !b->save) continue;
    st = cucore_memcpy_dtoh(s->dev, b->host, b->ptr, b->count * (size_t)args_elem_sizes[b->type],
                            NULL);
    if (st != CUCORE_OK) return cli_fail("run", b->spec, st);
  }
  for (int i = 0; i < o->specs.nreads; i++) {
    args_global_read *r = &o->specs.reads[i];
    st = cucore_global_read(&r->g, 0, r->host, r->count * (size_t)args_elem_sizes[r->type], NULL);
    if (st != CUCORE_OK) return cli_fail("run", r->text, st);
  }
  return 0;
}

/* The buffers: all allocated, then all filled, in the order of one stream (each timed as its
 * phase; with the pool, an allocation is queued and the copies' wait includes it). */
static int alloc_and_fill(run_opts *o, dev_state *s) {
  double t0 = phases_now();
  for (int i = 0; i < o->specs.nbufs; i++) {
    args_buf *b = &o->specs.bufs[i];
    cucore_status st = dev_alloc(s, b->count * (size_t)args_elem_sizes[b->type], &b->ptr);
    if (st != CUCORE_OK) return cli_fail("run", b->spec, st);
  }
  phases_add(CUCORE_PHASE_ALLOC, t0);
  t0 = phases_now();
  for (int i = 0; i < o->specs.nbufs; i++) {
    args_buf *b = &o->specs.bufs[i];
    size_t bytes = b->count * (size_t)args_elem_sizes[b->type];
    cucore_status st = b->role == ARGS_OUT
                           ? cucore_memset_d8(s->dev, b->ptr, 0, bytes, s->stream)
                           : cucore_memcpy_htod(s->dev, b->ptr, b->host, bytes, s->stream);
    if (st != CUCORE_OK) return cli_fail("run", b->spec, st);
  }
  cucore_status st = cucore_stream_synchronize(s->stream);
  phases_add(CUCORE_PHASE_COPY_IN, t0);
  if (st != CUCORE_OK) return cli_fail("run", "filling the buffers", st);
  return 0;
}

/* The device, its stream and events; the facts the report names; where buffers come from. */
static int open_gpu(const run_opts *o, dev_state *s, run_timing *t, cucore_device_props *props) {
  cucore_status st = cucore_device_get_props(o->device, props);
  if (st == CUCORE_OK) st = cucore_device_open(o->device, &s->dev);
  if (st == CUCORE_OK) st = cucore_stream_create(s->dev, CUCORE_STREAM_NON_BLOCKING, 0, &s->stream);
  if (st != CUCORE_OK) return cli_fail("run", "opening the GPU", st);
  snprintf(t->device_name, sizeof t->device_name, "%s", props->name);
  t->arch = props->arch;
  t->l2_bytes = props->l2_cache_bytes;
  /* Buffers: allocated, filled and (later) launched on in the order of one stream. */
  int want_pool = o->pool && !o->no_pool;
  s->pool = want_pool && props->memory_pools;
  if (want_pool && !props->memory_pools)
    fprintf(stderr,
            "cucore run: note: %s has no stream-ordered memory pools; buffers come from "
            "cucore_mem_alloc\n",
            props->name);
  t->pool = s->pool;
  return 0;
}

/* The arguments bound, large clusters allowed, and the kernel loaded (so that lazy loading
 * is not part of the first launch's time). */
static int ready_kernel(const run_opts *o, cucore_kernel *k, cucore_object *obj, dev_state *s) {
  cucore_status st = cucore_args_create(k, &s->args);
  if (st != CUCORE_OK) return cli_fail("run", o->kernel, st);
  const char *symbol = o->kernel;
  cucore_kernel_get_name(k, &symbol);
  int rc = args_bind_all(&o->specs, s->args, obj, symbol);
  if (rc) return rc;
  allow_large_clusters(o, k, s);
  st = cucore_kernel_load(k, s->dev);
  if (st != CUCORE_OK) return cli_fail("run", o->kernel, st);
  return 0;
}

/* The launch configuration the options give, on the run's stream. */
static void launch_config(const run_opts *o, const dev_state *s, cucore_launch_config *cfg) {
  memset(cfg, 0, sizeof *cfg);
  memcpy(cfg->grid, o->grid, sizeof cfg->grid);
  memcpy(cfg->block, o->block, sizeof cfg->block);
  cfg->shared_bytes = (unsigned)o->smem;
  cfg->stream = s->stream;
  if (o->cluster[0]) cucore_launch_config_cluster(cfg, o->cluster[0], o->cluster[1], o->cluster[2]);
  if (o->cooperative) cucore_launch_config_cooperative(cfg, 1);
  if (o->has_priority) cucore_launch_config_priority(cfg, o->priority);
  if (o->pdl) cucore_launch_config_pdl(cfg, 1);
}

/* --flush-l2: a buffer of twice the L2 cache, written before each timed launch. */
static int prepare_flush(const run_opts *o, const cucore_device_props *props, dev_state *s,
                         run_timing *t) {
  if (!o->flush_l2) return 0;
  s->flush_bytes = (size_t)(props->l2_cache_bytes > 0 ? props->l2_cache_bytes : 64 << 20) * 2;
  cucore_status st = dev_alloc(s, s->flush_bytes, &s->flush);
  if (st != CUCORE_OK) return cli_fail("run", "--flush-l2", st);
  t->flushed_l2 = 1;
  return 0;
}

/* The launch whose results are reported: one launch on the inputs as given (timed, after the
 * flush, when it is the only one: into *ms), then the results copied back. */
static int first_launch(run_opts *o, cucore_kernel *k, const cucore_launch_config *cfg,
                        dev_state *s, run_timing *t, double *ms) {
  double t0 = phases_now();
  cucore_tune_sample_options e = engine(s, ms ? 0 : 1, ms ? 1 : 0);
  cucore_status st = cucore_tune_time_samples(k, cfg, s->args, &e, ms);
  if (st == CUCORE_OK) st = cucore_stream_synchronize(s->stream);
  phases_add(CUCORE_PHASE_LAUNCH, t0);
  if (st != CUCORE_OK) return cli_fail("run", o->kernel, st);
  t->launches = 1;
  t0 = phases_now();
  int rc = collect(o, s);
  phases_add(CUCORE_PHASE_COPY_OUT, t0);
  return rc;
}

static int run_body(run_opts *o, cucore_kernel *k, cucore_object *obj, run_timing *t, dev_state *s,
                    double **times_out) {
  cucore_device_props props;
  int rc = open_gpu(o, s, t, &props);
  if (!rc) rc = alloc_and_fill(o, s);
  if (!rc) rc = prepare_globals(o, s, obj);
  if (!rc) rc = ready_kernel(o, k, obj, s);
  if (rc) return rc;
  cucore_launch_config cfg;
  launch_config(o, s, &cfg);
  rc = prepare_flush(o, &props, s, t);
  if (rc) return rc;
  int separate = run_is_timed(o);
  long long timed = separate ? o->repeat : 1;
  double *times = calloc((size_t)timed * 2, sizeof *times);
  if (!times) return cli_fail("run", o->kernel, CUCORE_HOST_OUT_OF_MEMORY);
  *times_out = times;
  redirect_stdout(s, o->json && !o->json_out);
  rc = first_launch(o, k, &cfg, s, t, separate ? NULL : &times[0]);
  if (rc) return rc;
  if (separate && !o->graph) rc = direct_timing(o, k, &cfg, s, t, times, timed);
  if (!rc && o->graph) rc = graph_timing(o, k, &cfg, s, t, times, times + timed);
  if (rc) return rc;
  if (separate) /* a single launch reads no clock (run_is_timed) */
    system_facts_sample(o->device, &t->sm_clock_mhz, &t->sm_clock_max_mhz, &t->clock_reasons);
  cucore_status st = cucore_device_synchronize(s->dev); /* device printf output is flushed here */
  if (st != CUCORE_OK) return cli_fail("run", o->kernel, st);
  t->timed = (int)timed;
  t->stats = run_result_stats(times, timed);
  t->launch_ms = o->graph ? t->stats.median_ms / (double)o->graph : t->stats.median_ms;
  return 0;
}

int run_on_device(run_opts *o, cucore_kernel *k, cucore_object *obj, run_timing *t) {
  dev_state s;
  memset(&s, 0, sizeof s);
  s.saved_stdout = -1;
  memset(t, 0, sizeof *t);
  double *times = NULL;
  int rc = run_body(o, k, obj, t, &s, &times);
  double t0 = phases_now();
  redirect_stdout(&s, 0);
  free(times);
  left_for_exit = s;
  for (int i = 0; i < o->specs.nbufs; i++)
    o->specs.bufs[i].ptr = 0; /* freed with the context at exit */
  phases_add(CUCORE_PHASE_TEARDOWN, t0);
  return rc;
}
