/* run_device.c -- the GPU part of `cucore run`: buffers allocated and filled, module variables
 * written, the kernel loaded, one launch whose results are kept, then warm-up and timed
 * launches (device events, an optional L2 flush before each), module variables read back.
 * Device printf output is kept off the JSON stream: while the kernel runs, stdout goes to
 * stderr when the JSON is written to stdout. */
#include "run.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct dev_state {
  cucore_device *dev;
  cucore_stream *stream;
  cucore_event *e0, *e1;
  cucore_devptr flush;
  size_t flush_bytes;
  cucore_args *args;
  int saved_stdout; /* -1 when stdout was not redirected */
} dev_state;

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

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Module variables: written before the run (sizes must match), found for reading after. */
static int prepare_globals(run_opts *o, dev_state *s, cucore_object *obj) {
  for (int i = 0; i < o->nsets; i++) {
    run_global_set *g = &o->sets[i];
    cucore_status st = cucore_object_get_global(obj, s->dev, g->name, &g->g);
    if (st != CUCORE_OK) return cli_fail("run", "--global", st);
    size_t size = 0;
    unsigned char *bytes = run_value_bytes(o, &g->v, &size);
    if (!bytes) return cli_fail("run", "--global", CUCORE_HOST_OUT_OF_MEMORY);
    if (size != g->g.size) {
      free(bytes);
      fprintf(stderr, "cucore run: --global %s: the value is %zu bytes; `%s` (%s) is %zu bytes\n",
              g->text, size, g->name, cucore_global_kind_name(g->g.kind), g->g.size);
      return CLI_EXIT_FAILURE;
    }
    st = cucore_global_write(&g->g, 0, bytes, size, NULL);
    free(bytes);
    if (st != CUCORE_OK) return cli_fail("run", g->text, st);
  }
  for (int i = 0; i < o->nreads; i++) {
    run_global_read *r = &o->reads[i];
    cucore_status st = cucore_object_get_global(obj, s->dev, r->name, &r->g);
    if (st != CUCORE_OK) return cli_fail("run", "--read-global", st);
    size_t esz = (size_t)elem_sizes[r->type];
    if (r->count == 0) {
      if (r->g.size % esz) {
        fprintf(stderr, "cucore run: --read-global %s: `%s` is %zu bytes, not a whole number of "
                "%s elements; give TYPE[N]\n", r->text, r->name, r->g.size, elem_names[r->type]);
        return CLI_EXIT_FAILURE;
      }
      r->count = r->g.size / esz;
    } else if (r->count * esz > r->g.size) {
      fprintf(stderr, "cucore run: --read-global %s: %zu elements of %s are %zu bytes; `%s` (%s) "
              "is %zu bytes\n", r->text, r->count, elem_names[r->type], r->count * esz, r->name,
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
    fprintf(stderr, "cucore run: note: a cluster of %llu blocks needs non-portable cluster "
            "sizes, which the device refused: %s\n", size, cucore_last_error());
}

/* One launch on the stream, timed by the events when `ms` is not NULL. */
static cucore_status launch_once(cucore_kernel *k, const cucore_launch_config *cfg, dev_state *s,
                                 float *ms) {
  cucore_status st = CUCORE_OK;
  if (s->flush) st = cucore_memset_d32(s->dev, s->flush, 0x5a5a5a5au, s->flush_bytes / 4, s->stream);
  if (st == CUCORE_OK && ms) st = cucore_event_record(s->e0, s->stream);
  if (st == CUCORE_OK) st = cucore_launch(k, cfg, s->args);
  if (st == CUCORE_OK && ms) st = cucore_event_record(s->e1, s->stream);
  if (st == CUCORE_OK && ms) st = cucore_event_synchronize(s->e1);
  if (st == CUCORE_OK && ms) st = cucore_event_elapsed_ms(s->e0, s->e1, ms);
  return st;
}

/* Copies the results back: every buffer the report or a file needs, and the globals read. */
static int collect(run_opts *o, dev_state *s) {
  cucore_status st = cucore_stream_synchronize(s->stream);
  if (st != CUCORE_OK) return cli_fail("run", "the launch", st);
  for (int i = 0; i < o->nbufs; i++) {
    run_buf *b = &o->bufs[i];
    if (b->role == ROLE_IN && !b->save) continue;
    st = cucore_memcpy_dtoh(s->dev, b->host, b->ptr, b->count * (size_t)elem_sizes[b->type], NULL);
    if (st != CUCORE_OK) return cli_fail("run", b->spec, st);
  }
  for (int i = 0; i < o->nreads; i++) {
    run_global_read *r = &o->reads[i];
    st = cucore_global_read(&r->g, 0, r->host, r->count * (size_t)elem_sizes[r->type], NULL);
    if (st != CUCORE_OK) return cli_fail("run", r->text, st);
  }
  return 0;
}

static int run_body(run_opts *o, cucore_kernel *k, cucore_object *obj, run_timing *t,
                    dev_state *s, double **times_out) {
  const char *kernel = o->kernel;
  cucore_device_props props;
  cucore_status st = cucore_device_props_get(o->device, &props);
  if (st == CUCORE_OK) st = cucore_device_open(o->device, &s->dev);
  if (st == CUCORE_OK) st = cucore_stream_create(s->dev, CUCORE_STREAM_NON_BLOCKING, 0, &s->stream);
  if (st == CUCORE_OK) st = cucore_event_create(s->dev, 0, &s->e0);
  if (st == CUCORE_OK) st = cucore_event_create(s->dev, 0, &s->e1);
  if (st != CUCORE_OK) return cli_fail("run", "opening the GPU", st);
  snprintf(t->device_name, sizeof t->device_name, "%s", props.name);
  t->arch = props.arch;
  t->l2_bytes = props.l2_cache_bytes;
  /* Buffers. */
  for (int i = 0; i < o->nbufs; i++) {
    run_buf *b = &o->bufs[i];
    size_t bytes = b->count * (size_t)elem_sizes[b->type];
    st = cucore_mem_alloc(s->dev, bytes, &b->ptr);
    if (st == CUCORE_OK)
      st = b->role == ROLE_OUT ? cucore_memset_d8(s->dev, b->ptr, 0, bytes, NULL)
                               : cucore_memcpy_htod(s->dev, b->ptr, b->host, bytes, NULL);
    if (st != CUCORE_OK) return cli_fail("run", b->spec, st);
  }
  int rc = prepare_globals(o, s, obj);
  if (rc) return rc;
  st = cucore_args_create(k, &s->args);
  if (st != CUCORE_OK) return cli_fail("run", kernel, st);
  const char *symbol = kernel;
  cucore_kernel_name(k, &symbol);
  rc = run_bind_args(o, s->args, obj, symbol);
  if (rc) return rc;
  allow_large_clusters(o, k, s);
  /* Loaded now, so lazy loading is not part of the first launch's time. */
  st = cucore_kernel_load(k, s->dev);
  if (st != CUCORE_OK) return cli_fail("run", kernel, st);
  cucore_launch_config cfg;
  memset(&cfg, 0, sizeof cfg);
  memcpy(cfg.grid, o->grid, sizeof cfg.grid);
  memcpy(cfg.block, o->block, sizeof cfg.block);
  cfg.shared_bytes = (unsigned)o->smem;
  cfg.stream = s->stream;
  if (o->cluster[0]) cucore_launch_config_cluster(&cfg, o->cluster[0], o->cluster[1], o->cluster[2]);
  if (o->cooperative) cucore_launch_config_cooperative(&cfg, 1);
  if (o->has_priority) cucore_launch_config_priority(&cfg, o->priority);
  if (o->pdl) cucore_launch_config_pdl(&cfg, 1);
  if (o->flush_l2) {
    s->flush_bytes = (size_t)(props.l2_cache_bytes > 0 ? props.l2_cache_bytes : 64 << 20) * 2;
    st = cucore_mem_alloc(s->dev, s->flush_bytes, &s->flush);
    if (st != CUCORE_OK) return cli_fail("run", "--flush-l2", st);
    t->flushed_l2 = 1;
  }
  int separate = o->warmup > 0 || o->repeat > 1;
  long long timed = separate ? o->repeat : 1;
  double *times = calloc((size_t)timed, sizeof *times);
  if (!times) return cli_fail("run", kernel, CUCORE_HOST_OUT_OF_MEMORY);
  *times_out = times;
  redirect_stdout(s, o->json && !o->json_out);
  /* The launch whose results are reported: one launch on the inputs as given. */
  float ms = 0;
  st = launch_once(k, &cfg, s, separate ? NULL : &ms);
  if (st != CUCORE_OK) return cli_fail("run", kernel, st);
  t->launches = 1;
  rc = collect(o, s);
  if (rc) return rc;
  if (!separate) times[0] = ms;
  if (separate) {
    for (long long w = 0; w < o->warmup; w++) {
      st = launch_once(k, &cfg, s, NULL);
      if (st != CUCORE_OK) return cli_fail("run", kernel, st);
      t->launches++;
    }
    for (long long r = 0; r < timed; r++) {
      st = launch_once(k, &cfg, s, &ms);
      if (st != CUCORE_OK) return cli_fail("run", kernel, st);
      times[r] = ms;
      t->launches++;
    }
  }
  st = cucore_device_synchronize(s->dev); /* device printf output is flushed here */
  if (st != CUCORE_OK) return cli_fail("run", kernel, st);
  t->timed = (int)timed;
  double sum = 0;
  for (long long r = 0; r < timed; r++) sum += times[r];
  qsort(times, (size_t)timed, sizeof *times, cmp_double);
  t->min_ms = times[0];
  t->max_ms = times[timed - 1];
  t->median_ms = timed % 2 ? times[timed / 2] : (times[timed / 2 - 1] + times[timed / 2]) / 2;
  t->mean_ms = sum / (double)timed;
  return 0;
}

int run_on_device(run_opts *o, cucore_kernel *k, cucore_object *obj, run_timing *t) {
  dev_state s;
  memset(&s, 0, sizeof s);
  s.saved_stdout = -1;
  memset(t, 0, sizeof *t);
  double *times = NULL;
  int rc = run_body(o, k, obj, t, &s, &times);
  redirect_stdout(&s, 0);
  free(times);
  for (int i = 0; i < o->nbufs; i++)
    if (o->bufs[i].ptr) {
      cucore_mem_free(s.dev, o->bufs[i].ptr);
      o->bufs[i].ptr = 0;
    }
  if (s.flush) cucore_mem_free(s.dev, s.flush);
  cucore_args_destroy(s.args);
  cucore_event_destroy(s.e0);
  cucore_event_destroy(s.e1);
  cucore_stream_destroy(s.stream);
  cucore_device_close(s.dev);
  return rc;
}
