/*
 * launch.c -- launches with pre-flight checks (arguments, block, grid, shared memory,
 * clusters, cooperative grids) before the driver sees them, every CUlaunchAttribute, host
 * functions. The checks compare against facts cached per kernel and device on first use.
 * The pre-flight (cc_launch_check) is shared with the kernel nodes of graphs (graph/), and a
 * launch into a stream cucore is capturing keeps its kernel alive for the graph.
 */
#include "exec/kernel.h"
#include "exec/launch_checks.h"
#include "runtime/current.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* ---- configuration ----------------------------------------------------------------------- */

/* 1 when `id` may be set: known to cucore, or passed through to a driver newer than the
 * headers cucore was built with (which may know it; its verdict is reported at launch). */
static int settable_attr(int id) {
  if (cc_launch_attr_known(id)) return 1;
  return id > 0 && cc_driver_load() == CUCORE_OK && cc_drv.version > CUDA_VERSION;
}

cucore_status cucore_launch_config_set(cucore_launch_config *cfg, const cucore_launch_attr *attr) {
  cc_begin();
  CC_CHECK_ARG(cfg, "cucore_launch_config_set", "cfg");
  CC_CHECK_ARG(attr, "cucore_launch_config_set", "attr");
  if (!settable_attr((int)attr->id)) {
    cc_begin();
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "cucore_launch_config_set: launch attribute %d does not exist in CUDA %d.%d "
                   "(1..14, 16), and the loaded driver (CUDA %d.%d) is not newer, so it cannot "
                   "know it either",
                   (int)attr->id, CUDA_VERSION / 1000, CUDA_VERSION % 1000 / 10,
                   cc_drv.version / 1000, cc_drv.version % 1000 / 10);
  }
  if (cfg->attr_count < 0 || cfg->attr_count > CUCORE_MAX_LAUNCH_ATTRS)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "cucore_launch_config_set: attr_count %d is corrupt (0..%d); zero-initialise "
                   "the configuration",
                   cfg->attr_count, CUCORE_MAX_LAUNCH_ATTRS);
  for (int i = 0; i < cfg->attr_count; i++)
    if (cfg->attrs[i].id == attr->id) {
      cfg->attrs[i] = *attr;
      return CUCORE_OK;
    }
  if (cfg->attr_count == CUCORE_MAX_LAUNCH_ATTRS)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "cucore_launch_config_set: already %d attributes",
                   CUCORE_MAX_LAUNCH_ATTRS);
  cfg->attrs[cfg->attr_count++] = *attr;
  return CUCORE_OK;
}

cucore_status cucore_launch_config_cluster(cucore_launch_config *cfg, unsigned x, unsigned y,
                                           unsigned z) {
  cucore_launch_attr a = {.id = CUCORE_LAUNCH_CLUSTER_DIMENSION};
  a.u.dim[0] = x;
  a.u.dim[1] = y;
  a.u.dim[2] = z;
  return cucore_launch_config_set(cfg, &a);
}

cucore_status cucore_launch_config_cooperative(cucore_launch_config *cfg, int on) {
  cucore_launch_attr a = {.id = CUCORE_LAUNCH_COOPERATIVE};
  a.u.value = on ? 1 : 0;
  return cucore_launch_config_set(cfg, &a);
}

cucore_status cucore_launch_config_priority(cucore_launch_config *cfg, int priority) {
  cucore_launch_attr a = {.id = CUCORE_LAUNCH_PRIORITY};
  a.u.value = priority;
  return cucore_launch_config_set(cfg, &a);
}

cucore_status cucore_launch_config_pdl(cucore_launch_config *cfg, int on) {
  cucore_launch_attr a = {.id = CUCORE_LAUNCH_PROGRAMMATIC_STREAM_SERIALIZATION};
  a.u.value = on ? 1 : 0;
  return cucore_launch_config_set(cfg, &a);
}

/* ---- pre-flight ---------------------------------------------------------------------------- */

typedef cc_launch_shape launch_shape;

static unsigned dim1(unsigned v) { return v ? v : 1; }

static cucore_status check_cluster(const cucore_kernel *k, const cc_kernel_dev *d,
                                   const launch_shape *s, const unsigned *dims, const char *what) {
  return cc_check_cluster(k->asked, s->grid, dims, what, d->cluster_launch, d->non_portable_cluster,
                          d->ordinal, d->arch);
}

static cucore_status preflight(cucore_kernel *k, cc_kernel_dev *d, const cucore_launch_config *cfg,
                               int purpose, launch_shape *s) {
  for (int i = 0; i < 3; i++) {
    s->grid[i] = i ? dim1(cfg->grid[i]) : cfg->grid[i];
    s->block[i] = i ? dim1(cfg->block[i]) : cfg->block[i];
  }
  if (CC_UNLIKELY(s->block[0] == 0 || s->grid[0] == 0))
    return cc_fail_zero_dim(k->asked, s->block[0] == 0);
  s->threads = (unsigned long long)s->block[0] * s->block[1] * s->block[2];
  s->blocks = (unsigned long long)s->grid[0] * s->grid[1] * s->grid[2];
  for (int i = 0; i < 3; i++) {
    if (CC_UNLIKELY((int)s->block[i] > d->dev_max_block[i] || s->block[i] > (unsigned)INT32_MAX))
      return cc_fail_dim(k->asked, 0, i, s->block[i], d->dev_max_block[i], d->ordinal, d->arch);
    if (CC_UNLIKELY(s->grid[i] > (unsigned)d->dev_max_grid[i]))
      return cc_fail_dim(k->asked, 1, i, s->grid[i], d->dev_max_grid[i], d->ordinal, d->arch);
  }
  if (CC_UNLIKELY(s->threads > (unsigned long long)d->max_threads))
    return cc_fail_block_threads(k->asked, s->block, s->threads, d->max_threads, d->dev_max_threads,
                                 d->ordinal);
  /* Dynamic shared memory: within the opt-in maximum after static memory; raise the kernel's
   * limit when needed, never lower it. */
  cucore_status st = cc_kernel_fit_dynamic_smem(k, d, cfg->shared_bytes);
  if (CC_UNLIKELY(st != CUCORE_OK)) return st;
  /* Attributes that change what is legal. */
  s->cooperative = 0;
  s->cluster = NULL;
  for (int i = 0; i < cfg->attr_count; i++) {
    const cucore_launch_attr *a = &cfg->attrs[i];
    switch (a->id) {
    case CUCORE_LAUNCH_COOPERATIVE: s->cooperative = a->u.value != 0; break;
    case CUCORE_LAUNCH_CLUSTER_DIMENSION: s->cluster = a->u.dim; break;
    case CUCORE_LAUNCH_PREFERRED_CLUSTER_DIMENSION: {
      st = check_cluster(k, d, s, a->u.dim, "preferred cluster");
      if (st != CUCORE_OK) return st;
      break;
    }
    case CUCORE_LAUNCH_PROGRAMMATIC_EVENT:
    case CUCORE_LAUNCH_COMPLETION_EVENT:
      if (!a->u.event.event)
        return cc_fail(CUCORE_LAUNCH_CONFIG,
                       "kernel `%s`: launch attribute %d needs an event, "
                       "and none was given",
                       k->asked, (int)a->id);
      if (a->u.event.event->dev->ctx != d->ctx)
        return cc_fail(CUCORE_LAUNCH_CONFIG,
                       "kernel `%s`: the event belongs to device %d, the "
                       "launch is on device %d",
                       k->asked, a->u.event.event->dev->ordinal, d->ordinal);
      break;
    case CUCORE_LAUNCH_ACCESS_POLICY_WINDOW:
      if (!(a->u.access_policy.hit_ratio >= 0.0f && a->u.access_policy.hit_ratio <= 1.0f))
        return cc_fail(CUCORE_LAUNCH_CONFIG,
                       "kernel `%s`: access policy hit ratio %g is outside 0..1", k->asked,
                       (double)a->u.access_policy.hit_ratio);
      break;
    case CUCORE_LAUNCH_DEVICE_UPDATABLE_KERNEL_NODE:
      if (purpose == CC_LAUNCH_IN_GRAPH) break;
      return cc_fail(CUCORE_LAUNCH_CONFIG,
                     "kernel `%s`: the device-updatable-kernel-node attribute is for graph "
                     "nodes only, not stream launches",
                     k->asked);
    default: break;
    }
  }
  if (s->cluster) {
    st = check_cluster(k, d, s, s->cluster, "cluster");
    if (st != CUCORE_OK) return st;
    if (d->req_cluster[0] && (s->cluster[0] != (unsigned)d->req_cluster[0] ||
                              s->cluster[1] != (unsigned)dim1((unsigned)d->req_cluster[1]) ||
                              s->cluster[2] != (unsigned)dim1((unsigned)d->req_cluster[2])))
      return cc_fail_cluster_mismatch(k->asked, d->req_cluster, s->cluster);
  } else if (d->req_cluster[0]) {
    unsigned c[3] = {(unsigned)d->req_cluster[0], dim1((unsigned)d->req_cluster[1]),
                     dim1((unsigned)d->req_cluster[2])};
    st = check_cluster(k, d, s, c, "compile-time cluster (__cluster_dims__)");
    if (st != CUCORE_OK) return st;
  } else if (d->cluster_must_be_set) {
    return cc_fail_cluster_required(k->asked);
  }
  return CUCORE_OK;
}

static cucore_status check_cooperative(cucore_kernel *k, cc_kernel_dev *d, const launch_shape *s,
                                       unsigned smem) {
  if (!d->coop_launch)
    return cc_fail(CUCORE_LAUNCH_CONFIG,
                   "kernel `%s`: device %d does not support cooperative launches", k->asked,
                   d->ordinal);
  int per_sm = 0;
  int relaxed = cc_capture_relax(); /* a query, not work of a capture under way */
  CUresult r = DRV(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags)(&per_sm, d->fn,
                                                                         (int)s->threads, smem, 0);
  cc_capture_unrelax(relaxed);
  if (r != CUDA_SUCCESS)
    return cc_fail_cu(r, "cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags", "kernel `%s`",
                      k->asked);
  unsigned long long max_blocks = (unsigned long long)per_sm * (unsigned long long)d->sm_count;
  if (s->blocks > max_blocks)
    return cc_fail(CUCORE_LAUNCH_CONFIG,
                   "kernel `%s`: a cooperative grid of %llu blocks cannot be co-resident: at %llu "
                   "threads and %u bytes of dynamic shared memory per block, %d blocks fit per "
                   "SM x %d SMs = %llu blocks at most",
                   k->asked, s->blocks, s->threads, smem, per_sm, d->sm_count, max_blocks);
  return CUCORE_OK;
}

cucore_status cc_launch_explain(cucore_kernel *k, const cc_kernel_dev *d, const launch_shape *s,
                                const cucore_launch_config *cfg, CUresult r, const char *call) {
  if (r == CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES) {
    unsigned long long regs = (unsigned long long)d->regs * s->threads;
    if (regs > (unsigned long long)d->regs_per_block)
      return cc_fail_cu(r, call,
                        "kernel `%s` uses %d registers per thread x %llu threads = %llu registers "
                        "per block, more than device %d's %d; use smaller blocks, "
                        "__launch_bounds__ or the maxrregcount option",
                        k->asked, d->regs, s->threads, regs, d->ordinal, d->regs_per_block);
    return cc_fail_cu(r, call,
                      "kernel `%s`: %llu threads x %d registers = %llu registers (limit %d), "
                      "%d bytes of static shared memory",
                      k->asked, s->threads, d->regs, regs, d->regs_per_block, d->static_smem);
  }
  if (r == CUDA_ERROR_INVALID_VALUE)
    for (int i = 0; i < cfg->attr_count; i++)
      if (!cc_launch_attr_known((int)cfg->attrs[i].id))
        return cc_fail_cu(r, call,
                          "kernel `%s`: launch attribute %d is newer than cucore (built with "
                          "CUDA %d.%d) and was passed to the driver (CUDA %d.%d) as given; the "
                          "driver refused it or its value",
                          k->asked, (int)cfg->attrs[i].id, CUDA_VERSION / 1000,
                          CUDA_VERSION % 1000 / 10, cc_drv.version / 1000,
                          cc_drv.version % 1000 / 10);
  if (r == CUDA_ERROR_INVALID_VALUE)
    for (int i = 0; i < cfg->attr_count; i++)
      if (cfg->attrs[i].id == CUCORE_LAUNCH_SYNCHRONIZATION_POLICY)
        return cc_fail_cu(r, call,
                          "kernel `%s`: this driver takes the synchronization policy as a stream "
                          "attribute only, not on a launch; drop CUCORE_LAUNCH_SYNCHRONIZATION_"
                          "POLICY from the launch configuration",
                          k->asked);
  return cc_fail_cu(r, call, "kernel `%s`, grid %ux%ux%u, block %ux%ux%u", k->asked, s->grid[0],
                    s->grid[1], s->grid[2], s->block[0], s->block[1], s->block[2]);
}

/* The driver call itself: cuLaunchCooperativeKernel, cuLaunchKernel when no attribute is set
 * (the cheapest), cuLaunchKernelEx otherwise. */
static CUresult driver_launch(const cc_kernel_dev *d, const cucore_launch_config *cfg,
                              const launch_shape *shape, CUstream stream, void **params,
                              int cooperative_api) {
  if (cooperative_api)
    return DRV(cuLaunchCooperativeKernel)(d->fn, shape->grid[0], shape->grid[1], shape->grid[2],
                                          shape->block[0], shape->block[1], shape->block[2],
                                          cfg->shared_bytes, stream, params);
  if (CC_LIKELY(cfg->attr_count == 0))
    return DRV(cuLaunchKernel)(d->fn, shape->grid[0], shape->grid[1], shape->grid[2],
                               shape->block[0], shape->block[1], shape->block[2], cfg->shared_bytes,
                               stream, params, NULL);
  CUlaunchAttribute attrs[CUCORE_MAX_LAUNCH_ATTRS];
  for (int i = 0; i < cfg->attr_count; i++) cc_launch_attr_to_cu(&cfg->attrs[i], &attrs[i]);
  CUlaunchConfig lc = {shape->grid[0],           shape->grid[1],  shape->grid[2],
                       shape->block[0],          shape->block[1], shape->block[2],
                       cfg->shared_bytes,        stream,          attrs,
                       (unsigned)cfg->attr_count};
  return DRV(cuLaunchKernelEx)(&lc, d->fn, params, NULL);
}

/* The last configuration without attributes that passed the pre-flight on this thread. The
 * checks it passed depend only on the kernel's per-device facts (fixed once read; the dynamic
 * shared memory limit only grows) and on grid, block and dynamic shared memory, so the same
 * kernel (its serial: unique, renewed by settings) on the same device (its context) with the
 * same three passes again: a loop launching one kernel (into a capture above all, where the
 * driver's own work is small) skips re-checking. */
typedef struct launch_memo {
  uint64_t serial; /* the kernel's (0: none) */
  CUcontext ctx;
  cc_kernel_dev *d;
  unsigned dims[7]; /* grid, block, shared_bytes as the configuration has them */
  launch_shape shape;
} launch_memo;
#if defined(__GNUC__)
static _Thread_local launch_memo tls_memo __attribute__((tls_model("initial-exec")));
#else
static _Thread_local launch_memo tls_memo;
#endif

/* grid, block and shared_bytes lie side by side in a configuration: compared as one span. */
#define CFG_DIMS(cfg) ((const char *)(cfg) + offsetof(cucore_launch_config, grid))
_Static_assert(offsetof(cucore_launch_config, block) == offsetof(cucore_launch_config, grid) + 12 &&
                   offsetof(cucore_launch_config, shared_bytes) ==
                       offsetof(cucore_launch_config, grid) + 24,
               "grid, block and shared_bytes are contiguous");

static inline int memo_matches(uint64_t serial, CUcontext ctx, const cucore_launch_config *cfg) {
  const launch_memo *m = &tls_memo;
  return m->serial == serial && m->ctx == ctx &&
         memcmp(m->dims, CFG_DIMS(cfg), sizeof m->dims) == 0;
}

cucore_status cc_launch_check(cucore_kernel *k, cucore_device *dev, const cucore_launch_config *cfg,
                              int purpose, int cooperative_api, const char *fn, cc_kernel_dev **dp,
                              launch_shape *shape) {
  if (CC_UNLIKELY(cfg->attr_count < 0 || cfg->attr_count > CUCORE_MAX_LAUNCH_ATTRS))
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: cfg->attr_count %d is outside 0..%d", fn,
                   cfg->attr_count, CUCORE_MAX_LAUNCH_ATTRS);
  /* Read before the checks: a setting changed meanwhile renews it, so what is remembered
   * below is never filed under the new value. */
  uint64_t serial = atomic_load_explicit(&k->serial, memory_order_acquire);
  int plain = cfg->attr_count == 0 && !cooperative_api;
  if (CC_LIKELY(plain && memo_matches(serial, dev->ctx, cfg))) {
    *shape = tls_memo.shape;
    *dp = tls_memo.d;
    return CUCORE_OK;
  }
  cc_kernel_dev *d = NULL;
  cucore_status st = cc_kernel_dev_get(k, dev, &d);
  if (CC_UNLIKELY(st != CUCORE_OK)) return st;
  st = preflight(k, d, cfg, purpose, shape);
  if (CC_UNLIKELY(st != CUCORE_OK)) return st;
  if (plain && !shape->cooperative) {
    launch_memo *m = &tls_memo;
    m->serial = serial;
    m->ctx = dev->ctx;
    m->d = d;
    memcpy(m->dims, CFG_DIMS(cfg), sizeof m->dims);
    m->shape = *shape;
  }
  if (shape->cooperative || cooperative_api) {
    st = check_cooperative(k, d, shape, cfg->shared_bytes);
    if (st != CUCORE_OK) return st;
  }
  *dp = d;
  return CUCORE_OK;
}

/* A launch into a stream while captures are under way: refused on the legacy default stream
 * when it would invalidate one; in a capture cucore began, the graph keeps the kernel (and the
 * events the attributes name) alive. */
static cucore_status capture_launch(cucore_kernel *k, const cucore_launch_config *cfg,
                                    cucore_stream *s, const char *fn) {
  cucore_status st = cc_capture_check_launch(s, fn);
  if (st == CUCORE_OK) st = cc_capture_hold(s, k, cc_kernel_retain, cc_kernel_release);
  for (int i = 0; st == CUCORE_OK && i < cfg->attr_count; i++)
    if ((cfg->attrs[i].id == CUCORE_LAUNCH_PROGRAMMATIC_EVENT ||
         cfg->attrs[i].id == CUCORE_LAUNCH_COMPLETION_EVENT) &&
        cfg->attrs[i].u.event.event)
      st = cc_capture_hold(s, cfg->attrs[i].u.event.event, cc_event_retain, cc_event_release);
  return st;
}

/* The driver refused a launch (`r`): a context reason is checked for real and the launch tried
 * once more; anything else is explained. */
CC_COLD static cucore_status launch_refused(cucore_kernel *k, const cc_kernel_dev *d,
                                            const cucore_launch_config *cfg,
                                            const launch_shape *shape, void **params,
                                            int cooperative_api, CUresult r) {
  cucore_stream *s = cfg->stream;
  if (r == CUDA_ERROR_INVALID_CONTEXT || r == CUDA_ERROR_INVALID_HANDLE ||
      r == CUDA_ERROR_CONTEXT_IS_DESTROYED) {
    /* The launch trusted the context cucore last made current; the thread's context was
     * changed behind its back. Check for real and try once more. */
    cc_device_forget_current();
    cucore_status st = cc_device_make_current(s->dev);
    if (st != CUCORE_OK) return st;
    r = driver_launch(d, cfg, shape, s->handle, params, cooperative_api);
    if (r == CUDA_SUCCESS) return CUCORE_OK;
  }
  const char *call = cooperative_api   ? "cuLaunchCooperativeKernel"
                     : cfg->attr_count ? "cuLaunchKernelEx"
                                       : "cuLaunchKernel";
  cucore_status st = cc_launch_explain(k, d, shape, cfg, r, call);
  if (cc_cu_is_capture_error(r)) cc_capture_note_failure(s);
  return st;
}

static cucore_status launch_common(cucore_kernel *k, const cucore_launch_config *cfg,
                                   cucore_args *args, int force_cooperative_api, const char *fn) {
  if (CC_UNLIKELY(!k || !cfg || !args))
    return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: `%s` is NULL", fn,
                   !k     ? "kernel"
                   : !cfg ? "cfg"
                          : "args");
  CC_CHECK_HANDLE(k, KERNEL, fn, "kernel");
  CC_CHECK_HANDLE(args, ARGS, fn, "args");
  cucore_status st = cc_args_check(args, k);
  if (CC_UNLIKELY(st != CUCORE_OK)) return st;
  cucore_stream *s = cfg->stream;
  if (CC_UNLIKELY(!s))
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: cfg->stream is NULL; give a stream (cucore_stream_default(dev) for "
                   "stream 0): it names the device",
                   fn);
  CC_CHECK_HANDLE(s, STREAM, fn, "cfg->stream");
  st = cc_device_make_current_fast(s->dev);
  if (CC_UNLIKELY(st != CUCORE_OK)) return st;
  cc_kernel_dev *d = NULL;
  launch_shape shape;
  st = cc_launch_check(k, s->dev, cfg, CC_LAUNCH_ON_STREAM, force_cooperative_api, fn, &d, &shape);
  if (CC_UNLIKELY(st != CUCORE_OK)) return st;
  if (CC_UNLIKELY(cc_captures_active())) {
    st = capture_launch(k, cfg, s, fn);
    if (st != CUCORE_OK) return st;
  }
  void **params = cc_args_params(args);
  if (force_cooperative_api) {
    if (cfg->attr_count)
      return cc_fail(CUCORE_INVALID_ARGUMENT,
                     "%s: cuLaunchCooperativeKernel takes no launch attributes; use "
                     "cucore_launch with CUCORE_LAUNCH_COOPERATIVE instead",
                     fn);
    st = CC_DRV_REQUIRE(cuLaunchCooperativeKernel);
  } else if (cfg->attr_count) {
    st = CC_DRV_REQUIRE(cuLaunchKernelEx);
  }
  if (st != CUCORE_OK) return st;
  CUresult r = driver_launch(d, cfg, &shape, s->handle, params, force_cooperative_api);
  if (CC_LIKELY(r == CUDA_SUCCESS)) return CUCORE_OK;
  return launch_refused(k, d, cfg, &shape, params, force_cooperative_api, r);
}

cucore_status cucore_launch(cucore_kernel *k, const cucore_launch_config *cfg, cucore_args *args) {
  cc_begin();
  /* The launch a loop makes, checked inline: no attributes, a complete argument list, the
   * device current, and a configuration the thread's memo says passed the pre-flight for this
   * kernel on this device; into a capture, one that holds the kernel already. Everything else
   * (first launches, attributes, mistakes) takes launch_common, which says what is wrong. */
  if (CC_LIKELY(cc_handle_live(k, CC_KIND_KERNEL) && cfg && cc_handle_live(args, CC_KIND_ARGS) &&
                cc_handle_live(cfg->stream, CC_KIND_STREAM) && cfg->attr_count == 0)) {
    cucore_stream *s = cfg->stream;
    if (CC_LIKELY(cc_args_ready(args, k) && cc_device_is_current(s->dev) &&
                  memo_matches(atomic_load_explicit(&k->serial, memory_order_acquire), s->dev->ctx,
                               cfg) &&
                  (!cc_captures_active() || cc_capture_launch_ready(s, k)))) {
      const launch_memo *m = &tls_memo;
      CUresult r = DRV(cuLaunchKernel)(m->d->fn, m->shape.grid[0], m->shape.grid[1],
                                       m->shape.grid[2], m->shape.block[0], m->shape.block[1],
                                       m->shape.block[2], cfg->shared_bytes, s->handle, args->ptrs,
                                       NULL);
      if (CC_LIKELY(r == CUDA_SUCCESS)) return CUCORE_OK;
      launch_shape shape = m->shape;
      return launch_refused(k, m->d, cfg, &shape, args->ptrs, 0, r);
    }
  }
  return launch_common(k, cfg, args, 0, "cucore_launch");
}

cucore_status cucore_launch_cooperative(cucore_kernel *k, const cucore_launch_config *cfg,
                                        cucore_args *args) {
  cc_begin();
  return launch_common(k, cfg, args, 1, "cucore_launch_cooperative");
}

cucore_status cucore_launch_host_func(cucore_stream *s, void (*fn)(void *user), void *user) {
  cc_begin();
  CC_CHECK_ARG(s, "cucore_launch_host_func", "stream");
  CC_CHECK_ARG(fn, "cucore_launch_host_func", "fn");
  cucore_status st = CC_DRV_REQUIRE(cuLaunchHostFunc);
  if (st == CUCORE_OK) st = cc_device_make_current(s->dev);
  if (st == CUCORE_OK && cc_captures_active())
    st = cc_capture_check_launch(s, "cucore_launch_host_func");
  if (st != CUCORE_OK) return st;
  CUresult r = DRV(cuLaunchHostFunc)(s->handle, fn, user);
  if (r != CUDA_SUCCESS) {
    st = cc_fail_cu(r, "cuLaunchHostFunc", "device %d", s->dev->ordinal);
    if (cc_cu_is_capture_error(r)) cc_capture_note_failure(s);
    return st;
  }
  return CUCORE_OK;
}
