/* run_result.c -- what `cucore run` prints: the launch, its time (one launch, or min / median
 * / max / mean of the timed ones), the effective bandwidth, a summary of each output buffer
 * and module variable read (sum, min, max, first values; integers exact, floating point as
 * the shortest text that reads back to the same bits) and the --expect results. Text for
 * people, or one JSON object. */
#include "cmd_run.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct summary {
  char sum[48], min[48], max[48];
  size_t nan;
  int sum_exact;
} summary;

/* One element as a double; with `t` a constant (the calls below), the switch folds away. */
static inline __attribute__((always_inline)) double element(const unsigned char *data, args_elem t,
                                                            size_t i) {
  if (t == ARGS_F32) {
    float f;
    memcpy(&f, data + i * 4, 4);
    return f;
  }
  if (t == ARGS_F64) {
    double d;
    memcpy(&d, data + i * 8, 8);
    return d;
  }
  return args_value_get(data, t, i);
}

/* The sum of the floating-point values (in index order, as a double), the first index of the
 * lowest and of the highest (-1 when every value is NaN) and the NaN count. Inlined with a
 * constant type for f32 and f64: a run's first result waits for it on outputs of millions of
 * elements (3-4 ms for 1 Mi floats through args_value_get). */
static inline __attribute__((always_inline)) double scan_floats(const unsigned char *data,
                                                                args_elem t, size_t count,
                                                                summary *s, long *imin,
                                                                long *imax) {
  double sum = 0, vmin = 0, vmax = 0; /* the values at imin and imax, read once */
  for (size_t i = 0; i < count; i++) {
    double v = element(data, t, i);
    if (isnan(v)) {
      s->nan++;
      continue;
    }
    sum += v;
    if (*imin < 0 || v < vmin) {
      *imin = (long)i;
      vmin = v;
    }
    if (*imax < 0 || v > vmax) {
      *imax = (long)i;
      vmax = v;
    }
  }
  return sum;
}

static void summarize(const unsigned char *data, args_elem t, size_t count, summary *s) {
  memset(s, 0, sizeof *s);
  if (count == 0) return;
  if (!args_elem_is_float(t)) {
    size_t imin = 0, imax = 0;
    int is_unsigned = !args_elem_is_signed(t), overflow = 0;
    uint64_t usum = 0;
    int64_t isum = 0;
    long double approx = 0;
    for (size_t i = 0; i < count; i++) {
      if (is_unsigned) {
        uint64_t v = args_value_get_u64(data, t, i);
        if (v < args_value_get_u64(data, t, imin)) imin = i;
        if (v > args_value_get_u64(data, t, imax)) imax = i;
        if (!overflow && __builtin_add_overflow(usum, v, &usum)) overflow = 1;
        approx += (long double)v;
      } else {
        int64_t v = args_value_get_i64(data, t, i);
        if (v < args_value_get_i64(data, t, imin)) imin = i;
        if (v > args_value_get_i64(data, t, imax)) imax = i;
        if (!overflow && __builtin_add_overflow(isum, v, &isum)) overflow = 1;
        approx += (long double)v;
      }
    }
    args_value_format(data, t, imin, s->min, sizeof s->min);
    args_value_format(data, t, imax, s->max, sizeof s->max);
    if (!overflow) {
      s->sum_exact = 1;
      if (is_unsigned)
        snprintf(s->sum, sizeof s->sum, "%llu", (unsigned long long)usum);
      else
        snprintf(s->sum, sizeof s->sum, "%lld", (long long)isum);
    } else {
      args_value_format_double((double)approx, s->sum, sizeof s->sum);
    }
    return;
  }
  long imin = -1, imax = -1;
  double sum = t == ARGS_F32   ? scan_floats(data, ARGS_F32, count, s, &imin, &imax)
               : t == ARGS_F64 ? scan_floats(data, ARGS_F64, count, s, &imin, &imax)
                               : scan_floats(data, t, count, s, &imin, &imax);
  args_value_format_double(sum, s->sum, sizeof s->sum);
  if (imin >= 0) {
    args_value_format(data, t, (size_t)imin, s->min, sizeof s->min);
    args_value_format(data, t, (size_t)imax, s->max, sizeof s->max);
  } else {
    snprintf(s->min, sizeof s->min, "nan");
    snprintf(s->max, sizeof s->max, "nan");
  }
}

/* The tune's statistics (cucore_tune_stats_compute: the median as numpy takes it, the middle
 * two averaged for an even count; the mean in the samples' order), so that `cucore run` and
 * `cucore tune` report one kind of median. */
run_stats run_result_stats(const double *times, long long n) {
  run_stats s = {0, 0, 0, 0};
  cucore_tune_stats t;
  if (cucore_tune_stats_compute(times, (size_t)n, &t) != CUCORE_OK) {
    fprintf(stderr, "cucore run: the timing's statistics: %s\n", cli_message());
    return s;
  }
  s.min_ms = t.min;
  s.median_ms = t.median;
  s.max_ms = t.max;
  s.mean_ms = t.mean;
  return s;
}

void run_result_traffic(const run_opts *o, unsigned long long *read, unsigned long long *written) {
  *read = *written = 0;
  for (int i = 0; i < o->specs.nbufs; i++) {
    unsigned long long bytes = (unsigned long long)o->specs.bufs[i].count *
                               (unsigned)args_elem_sizes[o->specs.bufs[i].type];
    if (o->specs.bufs[i].role != ARGS_OUT) *read += bytes;
    if (o->specs.bufs[i].role != ARGS_IN) *written += bytes;
  }
}

static size_t shown(const run_opts *o, size_t count) {
  return (size_t)o->show < count ? (size_t)o->show : count;
}

/* "[17]" or "[1,7]" for a multi-dimensional target. */
static void index_text(const args_expect *e, size_t k, char *buf, size_t len) {
  if (e->ndim <= 1) {
    snprintf(buf, len, "[%zu]", k);
    return;
  }
  uint64_t idx[ARGS_MAX_DIMS];
  for (int d = e->ndim - 1; d >= 0; d--) {
    idx[d] = e->shape[d] ? k % e->shape[d] : 0;
    k = e->shape[d] ? k / e->shape[d] : 0;
  }
  size_t n = 0;
  for (int d = 0; d < e->ndim && n < len; d++)
    n += (size_t)snprintf(buf + n, len - n, "%s%llu", d ? "," : "[", (unsigned long long)idx[d]);
  if (n < len) snprintf(buf + n, len - n, "]");
}

/* ---- text ------------------------------------------------------------------------------------ */

static void text_values(const run_opts *o, const char *what, const char *spec, args_elem t,
                        const unsigned char *data, size_t count) {
  summary s;
  summarize(data, t, count, &s);
  printf("  %s (%s): sum %s, min %s, max %s", what, spec, s.sum, s.min, s.max);
  if (s.nan) printf(", %zu NaN", s.nan);
  size_t n = shown(o, count);
  if (n) {
    printf("; first:");
    char v[48];
    for (size_t i = 0; i < n; i++) printf(" %s", args_value_format(data, t, i, v, sizeof v));
    if (count > n) printf(" ...");
  }
  printf("\n");
}

/* The SM clock NVML saw around the timing, and a warning when the GPU was throttled. */
static void clock_text(const run_timing *t) {
  if (t->sm_clock_mhz <= 0) return; /* NVML not there: nothing known */
  char reasons[256] = "unknown";
  if (t->clock_reasons >= 0) cucore_system_reasons_text(t->clock_reasons, reasons, sizeof reasons);
  printf("  SM clock: %d MHz (max %d) around the timing; clock event reasons: %s\n",
         t->sm_clock_mhz, t->sm_clock_max_mhz, reasons);
  if (t->clock_reasons > 0 && (t->clock_reasons & CUCORE_CLOCK_REASONS_THROTTLE))
    printf("  warning: the GPU was throttled during the timing (%s): the times are slower "
           "than it can run\n",
           reasons);
}

static void clock_json(json_out *j, const run_timing *t) {
  int known = t->sm_clock_mhz > 0;
  char reasons[256] = "";
  if (t->clock_reasons >= 0) cucore_system_reasons_text(t->clock_reasons, reasons, sizeof reasons);
  if (known)
    json_int(j, "sm_clock_mhz", t->sm_clock_mhz);
  else
    json_str(j, "sm_clock_mhz", NULL);
  json_str(j, "clock_reasons", t->clock_reasons >= 0 ? reasons : NULL);
  if (t->clock_reasons >= 0)
    json_bool(j, "throttled",
              t->clock_reasons > 0 && (t->clock_reasons & CUCORE_CLOCK_REASONS_THROTTLE));
  else
    json_str(j, "throttled", NULL);
}

static void text_report(const run_opts *o, const run_timing *t) {
  printf("%s: grid %ux%ux%u, block %ux%ux%u, %lld B dynamic shared", o->kernel, o->grid[0],
         o->grid[1], o->grid[2], o->block[0], o->block[1], o->block[2], o->smem);
  if (o->cluster[0]) printf(", cluster %ux%ux%u", o->cluster[0], o->cluster[1], o->cluster[2]);
  printf(", on %s (sm_%d)\n", t->device_name, t->arch);
  if (t->graph_kernels)
    printf("  time: %.4f ms per graph replay of %lld launches (median of %d; min %.4f, max %.4f, "
           "mean %.4f) = %.3f us per launch; direct launches back to back: %.3f us per launch "
           "(median of %d batches)",
           t->stats.median_ms, t->graph_kernels, t->timed, t->stats.min_ms, t->stats.max_ms,
           t->stats.mean_ms, t->stats.median_ms * 1e3 / (double)t->graph_kernels,
           t->direct.median_ms * 1e3, t->timed);
  else if (t->timed == 1)
    printf("  time: %.4f ms per launch (1 launch)", t->stats.median_ms);
  else
    printf("  time: %.4f ms per launch (median of %d; min %.4f, max %.4f, mean %.4f; %lld "
           "launches in all)",
           t->stats.median_ms, t->timed, t->stats.min_ms, t->stats.max_ms, t->stats.mean_ms,
           t->launches);
  if (t->flushed_l2) printf("; L2 flushed before each");
  printf("\n");
  clock_text(t);
  unsigned long long rd, wr;
  run_result_traffic(o, &rd, &wr);
  if ((rd || wr) && t->launch_ms > 0)
    printf("  bandwidth: %.3g GB/s effective (%llu bytes read + %llu written, at the median "
           "time)\n",
           (double)(rd + wr) / (t->launch_ms * 1e-3) / 1e9, rd, wr);
  for (int i = 0; i < o->specs.nbufs; i++) {
    const args_buf *b = &o->specs.bufs[i];
    if (b->role == ARGS_IN) continue;
    char what[48];
    snprintf(what, sizeof what, "argument %s", b->label);
    text_values(o, what, b->spec, b->type, b->host, b->count);
  }
  for (int i = 0; i < o->specs.nreads; i++) {
    const args_global_read *r = &o->specs.reads[i];
    char what[300], spec[64];
    snprintf(what, sizeof what, "global %s", r->name);
    snprintf(spec, sizeof spec, "%s[%zu], %s", args_elem_names[r->type], r->count,
             cucore_global_kind_name(r->g.kind));
    text_values(o, what, spec, r->type, r->host, r->count);
  }
  for (int i = 0; i < o->specs.nexpects; i++) {
    const args_expect *e = &o->specs.expects[i];
    if (!e->mismatches) {
      printf("  expect %s: all %zu elements match\n", e->target, e->count);
      continue;
    }
    printf("  expect %s: %zu of %zu elements differ", e->target, e->mismatches, e->count);
    if (e->exact)
      printf(" (integers, compared exactly)");
    else
      printf(" (rtol %g, atol %g)", o->specs.has_rtol ? o->specs.rtol : 1e-5,
             o->specs.has_atol ? o->specs.atol : 1e-8);
    printf("; first:");
    for (int k = 0; k < e->shown; k++) {
      char idx[128];
      index_text(e, e->bad_index[k], idx, sizeof idx);
      printf("%s %s %s (expected %s)", k ? "," : "", idx, e->got[k], e->want[k]);
    }
    printf("\n");
  }
}

/* ---- JSON ------------------------------------------------------------------------------------ */

static void json_dims(json_out *j, const char *key, const unsigned d[3]) {
  json_begin_array(j, key);
  for (int i = 0; i < 3; i++) json_uint(j, NULL, d[i]);
  json_end_array(j);
}

static void json_values(const run_opts *o, json_out *j, args_elem t, const unsigned char *data,
                        size_t count) {
  summary s;
  summarize(data, t, count, &s);
  json_str(j, "type", args_elem_names[t]);
  json_uint(j, "count", count);
  json_number_text(j, "sum", s.sum);
  json_number_text(j, "min", s.min);
  json_number_text(j, "max", s.max);
  if (args_elem_is_float(t)) json_uint(j, "nan_count", s.nan);
  json_begin_array(j, "first");
  char v[48];
  for (size_t i = 0; i < shown(o, count); i++)
    json_number_text(j, NULL, args_value_format(data, t, i, v, sizeof v));
  json_end_array(j);
}

/* {"min", "median", "max", "mean"} of a set of times. */
static void json_stats(json_out *j, const char *key, const run_stats *s) {
  json_begin_object(j, key);
  json_double(j, "min", s->min_ms);
  json_double(j, "median", s->median_ms);
  json_double(j, "max", s->max_ms);
  json_double(j, "mean", s->mean_ms);
  json_end_object(j);
}

/* The launch: kernel, device, shape, launches and their times, the clock, the graph. */
static void json_launch(const run_opts *o, const run_timing *t, const char *symbol, json_out *j) {
  json_str(j, "kernel", o->kernel);
  json_str(j, "symbol", symbol);
  json_str(j, "device", t->device_name);
  char arch[16];
  snprintf(arch, sizeof arch, "sm_%d", t->arch);
  json_str(j, "arch", arch);
  json_dims(j, "grid", o->grid);
  json_dims(j, "block", o->block);
  json_int(j, "shared_bytes", o->smem);
  if (o->cluster[0])
    json_dims(j, "cluster", o->cluster);
  else
    json_str(j, "cluster", NULL);
  json_int(j, "launches", t->launches);
  json_int(j, "warmup", o->warmup);
  json_int(j, "timed_launches", t->timed);
  json_double(j, "ms_per_launch", t->launch_ms);
  json_str(j, "allocator", t->pool ? "pool" : "cuMemAlloc");
  if (o->connections > 0)
    json_int(j, "max_connections", o->connections);
  else
    json_str(j, "max_connections", NULL);
  json_stats(j, "time_ms", &t->stats);
  json_bool(j, "l2_flushed", t->flushed_l2);
  clock_json(j, t);
  if (t->graph_kernels) {
    json_begin_object(j, "graph");
    json_int(j, "launches_per_replay", t->graph_kernels);
    json_uint(j, "nodes", t->graph_nodes);
    json_int(j, "replays", t->timed);
    json_double(j, "ms_per_launch", t->stats.median_ms / (double)t->graph_kernels);
    json_stats(j, "direct_ms_per_launch", &t->direct);
    json_end_object(j);
  } else {
    json_str(j, "graph", NULL);
  }
}

/* The bytes moved and the bandwidth they make at the median time. */
static void json_traffic(const run_opts *o, const run_timing *t, json_out *j) {
  unsigned long long rd, wr;
  run_result_traffic(o, &rd, &wr);
  json_uint(j, "bytes_read", rd);
  json_uint(j, "bytes_written", wr);
  if ((rd || wr) && t->launch_ms > 0)
    json_double(j, "bandwidth_gb_per_s", (double)(rd + wr) / (t->launch_ms * 1e-3) / 1e9);
  else
    json_str(j, "bandwidth_gb_per_s", NULL);
}

/* "outputs": the buffers the kernel may have written; "globals": the variables read. */
static void json_results(const run_opts *o, json_out *j) {
  json_begin_array(j, "outputs");
  for (int i = 0; i < o->specs.nbufs; i++) {
    const args_buf *b = &o->specs.bufs[i];
    if (b->role == ARGS_IN) continue;
    json_begin_object(j, NULL);
    json_str(j, "argument", b->label);
    json_str(j, "spec", b->spec);
    json_values(o, j, b->type, b->host, b->count);
    json_str(j, "saved", b->save_failed ? NULL : b->save); /* null: not written */
    json_end_object(j);
  }
  json_end_array(j);
  json_begin_array(j, "globals");
  for (int i = 0; i < o->specs.nreads; i++) {
    const args_global_read *r = &o->specs.reads[i];
    json_begin_object(j, NULL);
    json_str(j, "name", r->name);
    json_str(j, "symbol", r->g.name);
    json_str(j, "kind", cucore_global_kind_name(r->g.kind));
    json_uint(j, "size", r->g.size);
    json_values(o, j, r->type, r->host, r->count);
    json_str(j, "saved", r->save_failed ? NULL : r->save);
    json_end_object(j);
  }
  json_end_array(j);
}

/* One --expect's result. */
static void json_expect(const run_opts *o, const args_expect *e, json_out *j) {
  json_begin_object(j, NULL);
  json_str(j, "target", e->target);
  json_str(j, "value", e->value_text);
  json_uint(j, "count", e->count);
  json_uint(j, "mismatches", e->mismatches);
  json_bool(j, "ok", e->mismatches == 0);
  json_bool(j, "exact", e->exact);
  if (!e->exact) {
    json_double(j, "rtol", o->specs.has_rtol ? o->specs.rtol : 1e-5);
    json_double(j, "atol", o->specs.has_atol ? o->specs.atol : 1e-8);
  }
  json_begin_array(j, "first_mismatches");
  for (int k = 0; k < e->shown; k++) {
    json_begin_object(j, NULL);
    json_uint(j, "index", e->bad_index[k]);
    json_number_text(j, "got", e->got[k]);
    json_number_text(j, "expected", e->want[k]);
    json_end_object(j);
  }
  json_end_array(j);
  json_end_object(j);
}

static void json_report(const run_opts *o, const run_timing *t, const char *symbol, json_out *j) {
  json_begin_object(j, NULL);
  json_launch(o, t, symbol, j);
  json_traffic(o, t, j);
  json_results(o, j);
  int ok = 1;
  json_begin_array(j, "expect");
  for (int i = 0; i < o->specs.nexpects; i++) {
    json_expect(o, &o->specs.expects[i], j);
    if (o->specs.expects[i].mismatches) ok = 0;
  }
  json_end_array(j);
  json_bool(j, "ok", ok);
  phases_json(j);
  json_end_object(j);
}

void run_result_print(run_opts *o, const run_timing *t, const char *symbol, json_out *j) {
  if (j) json_report(o, t, symbol, j);
  if (!j || j->f != stdout) text_report(o, t);
}
