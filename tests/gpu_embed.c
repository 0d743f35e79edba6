/* gpu_embed.c -- cucore inside programs that have their own CUDA state (label gpu): foreign
 * contexts, streams, events and kernels; load options and the JIT log; lazy loading seen from
 * outside; stream attributes; launch attributes newer than cucore. */
#include "gpu_support.h"
#include "runtime/runtime.h" /* DRV(): the raw driver, to make "foreign" handles */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static cucore_device *dev;

static int setup(void **state) {
  (void)state;
  return cucore_device_open(0, &dev) == CUCORE_OK ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  return cucore_device_close(dev) == CUCORE_OK ? 0 : -1;
}

static const char *add_src = "extern \"C\" __global__ void add_one(int *x, int n) {\n"
                             "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                             "  if (i < n) x[i] += 1;\n"
                             "}\n"
                             "extern \"C\" __global__ void twice(int *x, int n) {\n"
                             "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                             "  if (i < n) x[i] *= 2;\n"
                             "}\n";

/* Runs `k` (x, n) on `s` over n ints starting at `start`, returns how many end as `want`. */
static int run_and_count(cucore_kernel *k, cucore_stream *s, int n, int start, int want_mul,
                         int want_add) {
  cucore_device *d = NULL;
  assert_ok(cucore_stream_get_device(s, &d));
  int *h = malloc(n * sizeof *h);
  for (int i = 0; i < n; i++) h[i] = start + i;
  cucore_devptr p = 0;
  assert_ok(cucore_mem_alloc(d, n * sizeof(int), &p));
  assert_ok(cucore_memcpy_htod(d, p, h, n * sizeof(int), s));
  cucore_args *a = NULL;
  assert_ok(cucore_args_create(k, &a));
  assert_ok(CUCORE_ARGS(a, p, n));
  cucore_launch_config c = {.grid = {(unsigned)(n + 127) / 128}, .block = {128}, .stream = s};
  assert_ok(cucore_launch(k, &c, a));
  assert_ok(cucore_memcpy_dtoh(d, h, p, n * sizeof(int), s));
  assert_ok(cucore_stream_synchronize(s));
  int good = 0;
  for (int i = 0; i < n; i++) good += h[i] == (start + i) * want_mul + want_add;
  cucore_args_destroy(a);
  cucore_mem_free(d, p);
  free(h);
  return good;
}

/* A stream and an event created with the driver directly are wrapped, used, and left alive. */
static void foreign_stream_and_event(void **state) {
  (void)state;
  cucore_object *obj = gpu_compile(add_src, CUCORE_CODE_CUBIN, NULL, NULL);
  cucore_kernel *k = gpu_kernel(obj, "add_one");
  /* The program's own context, stream and event. */
  cucore_device *borrowed = NULL;
  assert_ok(cucore_device_from_context(NULL, &borrowed)); /* device 0's context is current */
  int ordinal = -1;
  assert_ok(cucore_device_get_ordinal(borrowed, &ordinal));
  assert_int_equal(ordinal, 0);
  CUstream raw = NULL;
  assert_int_equal(DRV(cuStreamCreateWithPriority)(&raw, CU_STREAM_NON_BLOCKING, 0), CUDA_SUCCESS);
  CUevent raw_ev = NULL;
  assert_int_equal(DRV(cuEventCreate)(&raw_ev, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
  cucore_stream *s = NULL;
  assert_ok(cucore_stream_wrap(borrowed, raw, &s));
  cucore_event *ev = NULL;
  assert_ok(cucore_event_wrap(borrowed, raw_ev, &ev));
  const int n = 100000;
  assert_int_equal(run_and_count(k, s, n, 7, 1, 1), n);
  assert_ok(cucore_event_record(ev, s));
  assert_ok(cucore_event_synchronize(ev));
  /* Freeing the wrappers leaves the program's handles alive. */
  assert_ok(cucore_event_destroy(ev));
  assert_ok(cucore_stream_destroy(s));
  assert_int_equal(DRV(cuStreamSynchronize)(raw), CUDA_SUCCESS);
  assert_int_equal(DRV(cuEventQuery)(raw_ev), CUDA_SUCCESS);
  /* Closing the borrowed device leaves the context current and alive. */
  assert_ok(cucore_device_close(borrowed));
  CUcontext cur = NULL;
  assert_int_equal(DRV(cuCtxGetCurrent)(&cur), CUDA_SUCCESS);
  void *primary = NULL;
  assert_ok(cucore_device_get_native(dev, &primary, NULL));
  assert_ptr_equal(cur, primary);
  assert_int_equal(DRV(cuStreamDestroy)(raw), CUDA_SUCCESS);
  assert_int_equal(DRV(cuEventDestroy)(raw_ev), CUDA_SUCCESS);
  /* The per-thread default stream runs the kernel too, and cannot be destroyed. */
  cucore_stream *pts = NULL;
  assert_ok(cucore_stream_per_thread(dev, &pts));
  assert_int_equal(run_and_count(k, pts, n, -50, 1, 1), n);
  assert_ok(cucore_stream_destroy(pts));
  assert_int_equal(run_and_count(k, pts, 1000, 3, 1, 1), 1000);
  /* An explicit CUcontext is taken as well. */
  assert_ok(cucore_device_from_context(primary, &borrowed));
  assert_ok(cucore_device_close(borrowed));
  print_message("foreign stream, event and context: %d elements match; handles live on\n", n);
  cucore_kernel_destroy(k);
  cucore_object_destroy(obj);
}

/* Kernels taken in as a CUkernel and as a CUfunction: the layout comes from the driver and
 * the arguments are checked. */
static void foreign_kernels(void **state) {
  (void)state;
  cucore_object *obj = gpu_compile(add_src, CUCORE_CODE_CUBIN, NULL, NULL);
  cucore_kernel *mine = gpu_kernel(obj, "twice");
  void *cukernel = NULL, *cufunction = NULL;
  assert_ok(cucore_kernel_get_native(mine, dev, &cukernel, &cufunction));
  cucore_kernel *from_kernel = NULL, *from_function = NULL;
  assert_ok(cucore_kernel_from_cukernel(cukernel, &from_kernel));
  assert_ok(cucore_kernel_from_cufunction(dev, cufunction, &from_function));
  cucore_kernel *both[2] = {from_kernel, from_function};
  for (int i = 0; i < 2; i++) {
    int count = 0;
    assert_ok(cucore_kernel_get_param_count(both[i], &count));
    assert_int_equal(count, 2);
    const char *name = NULL;
    assert_ok(cucore_kernel_get_name(both[i], &name));
    assert_string_equal(name, "twice");
    cucore_object *none = (cucore_object *)1;
    assert_ok(cucore_kernel_get_object(both[i], &none));
    assert_null(none);
    cucore_args *a = NULL;
    assert_ok(cucore_args_create(both[i], &a));
    assert_status(CUCORE_ARGS(a, (cucore_devptr)0), CUCORE_ARG_COUNT); /* one of two */
    assert_status(cucore_args_set_f64(a, 1, 2.0), CUCORE_ARG_SIZE);    /* 8 bytes for an int */
    cucore_args_destroy(a);
    cucore_stream *s = NULL;
    assert_ok(cucore_stream_default(dev, &s));
    assert_int_equal(run_and_count(both[i], s, 5000, 11, 2, 0), 5000);
    int regs = 0;
    assert_ok(cucore_kernel_get_attribute(both[i], dev, CUCORE_KATTR_NUM_REGS, &regs));
    assert_true(regs > 0);
  }
  print_message("kernels from a CUkernel and a CUfunction: layouts from the driver, checked, "
                "results match\n");
  cucore_kernel_destroy(from_kernel);
  cucore_kernel_destroy(from_function);
  cucore_kernel_destroy(mine);
  cucore_object_destroy(obj);
}

/* Under lazy loading a kernel stays unloaded until it is launched or loaded. */
static void lazy_loading_is_observable(void **state) {
  (void)state;
  int lazy = 0;
  assert_ok(cucore_driver_get_loading_mode(&lazy));
  const char *env = getenv("CUDA_MODULE_LOADING");
  print_message("module loading mode: %s (CUDA_MODULE_LOADING=%s)\n", lazy ? "lazy" : "eager",
                env ? env : "unset");
  /* A source of its own: an object from the in-process compile cache would be loaded already. */
  char src[1024];
  snprintf(src, sizeof src,
           "%s\nextern \"C\" __global__ void thrice(int *x, int n) {\n"
           "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= 3; }\n",
           add_src);
  cucore_object *obj = gpu_compile(src, CUCORE_CODE_CUBIN, NULL, NULL);
  cucore_kernel *a = gpu_kernel(obj, "add_one"), *b = gpu_kernel(obj, "twice");
  cucore_kernel *c = gpu_kernel(obj, "thrice");
  int la = -1, lb = -1, lc = -1;
  assert_ok(cucore_kernel_is_loaded(a, dev, &la));
  assert_ok(cucore_kernel_is_loaded(b, dev, &lb));
  assert_ok(cucore_kernel_is_loaded(c, dev, &lc));
  if (!lazy) {
    assert_true(la == 1 && lb == 1 && lc == 1);
    skip(); /* eager mode loads everything at once: nothing more to see */
  }
  assert_true(la == 0 && lb == 0 && lc == 0);
  /* A launch loads `a` alone. */
  cucore_stream *s = NULL;
  assert_ok(cucore_stream_default(dev, &s));
  assert_int_equal(run_and_count(a, s, 256, 0, 1, 1), 256);
  assert_ok(cucore_kernel_is_loaded(a, dev, &la));
  assert_ok(cucore_kernel_is_loaded(b, dev, &lb));
  assert_ok(cucore_kernel_is_loaded(c, dev, &lc));
  assert_true(la == 1 && lb == 0 && lc == 0);
  /* cucore_kernel_load loads `b`; an attribute that needs a loaded function is answered for
   * `c` (the driver loads it, or says CUDA_ERROR_FUNCTION_NOT_LOADED and cucore loads it). */
  assert_ok(cucore_kernel_load(b, dev));
  assert_ok(cucore_kernel_is_loaded(b, dev, &lb));
  assert_int_equal(lb, 1);
  int max_threads = 0;
  assert_ok(cucore_kernel_get_attribute(c, dev, CUCORE_KATTR_MAX_THREADS_PER_BLOCK, &max_threads));
  assert_true(max_threads > 0);
  assert_ok(cucore_kernel_is_loaded(c, dev, &lc));
  print_message("after an attribute query on an unloaded kernel: %s\n",
                lc ? "loaded" : "still unloaded (the driver answered from the kernel)");
  print_message("lazy loading: 3 kernels unloaded after lookup; a launch loaded one, "
                "cucore_kernel_load another, each alone\n");
  cucore_kernel_destroy(a);
  cucore_kernel_destroy(b);
  cucore_kernel_destroy(c);
  cucore_object_destroy(obj);
}

/* Load options reach the driver's JIT: a register cap, a verbose log, eager loading; a bad
 * PTX's failure carries the JIT's own words. */
static void load_options_and_jit_log(void **state) {
  (void)state;
  /* A kernel that wants many registers, as PTX so the driver JITs it. */
  const char *heavy = "extern \"C\" __global__ void heavy(float *x, int n) {\n"
                      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                      "  if (i >= n) return;\n"
                      "  float v[24];\n"
                      "  #pragma unroll\n"
                      "  for (int k = 0; k < 24; k++) v[k] = x[(i + k * 97) % n] * (k + 1);\n"
                      "  float s = 0;\n"
                      "  #pragma unroll\n"
                      "  for (int k = 0; k < 24; k++) s += v[k] * v[(k * 7) % 24];\n"
                      "  x[i] = s;\n"
                      "}\n";
  cucore_object *ptx = gpu_compile(heavy, CUCORE_CODE_PTX, NULL, NULL);
  const void *code = NULL;
  size_t size = 0;
  cucore_code_type type;
  assert_ok(cucore_object_get_code(ptx, &type, &code, &size));
  cucore_object *capped = NULL;
  assert_ok(cucore_object_from_memory(code, size, CUCORE_CODE_PTX, "heavy.ptx", &capped));
  cucore_load_options o = CUCORE_LOAD_OPTIONS_INIT;
  o.max_registers = 32;
  o.log_verbose = 1;
  o.optimization_level = 3;
  o.eager = 1;
  assert_ok(cucore_object_set_load_options(capped, &o));
  assert_ok(cucore_object_load(capped));
  const char *info = NULL, *error = NULL;
  assert_ok(cucore_object_get_jit_log(capped, &info, &error));
  /* verbose: ptxas reports registers (compute-sanitizer's JIT path leaves the log empty) */
  if (!getenv("CUCORE_UNDER_SANITIZER")) assert_true(strlen(info) > 0);
  print_message("JIT info log (verbose): %.*s\n", (int)strcspn(info, "\n"), info);
  cucore_kernel *k = gpu_kernel(capped, "heavy");
  int loaded = 0;
  assert_ok(cucore_kernel_is_loaded(k, dev, &loaded));
  assert_int_equal(loaded, 1); /* eager: loaded without a launch */
  int regs = 0;
  assert_ok(cucore_kernel_get_attribute(k, dev, CUCORE_KATTR_NUM_REGS, &regs));
  assert_true(regs <= 32);
  print_message("max_registers 32: the JIT used %d\n", regs);
  /* Options are for before the load. */
  assert_status(cucore_object_set_load_options(capped, &o), CUCORE_INVALID_ARGUMENT);
  /* A PTX the JIT rejects: its error log is in the message and kept (the driver accepts such
   * a module and would fail only at the first kernel lookup; cucore reads the log). */
  const char *bad_ptx = ".version 8.0\n.target sm_50\n.address_size 64\n"
                        ".visible .entry broken(.param .u64 p) {\n  mov.u32 %r1, 1;\n  ret;\n}\n";
  cucore_object *bad = NULL;
  assert_ok(
      cucore_object_from_memory(bad_ptx, strlen(bad_ptx), CUCORE_CODE_PTX, "broken.ptx", &bad));
  cucore_status st = cucore_object_load(bad);
  assert_true(st != CUCORE_OK);
  assert_contains(cucore_last_error(), "broken.ptx");
  assert_ok(cucore_object_get_jit_log(bad, &info, &error));
  assert_true(strlen(error) > 0);
  assert_contains(cucore_last_error(), "the driver's JIT says");
  print_message("a rejected PTX: %s\n", error);
  cucore_object_destroy(bad);
  cucore_kernel_destroy(k);
  cucore_object_destroy(capped);
  cucore_object_destroy(ptx);
}

/* Stream attributes are set, read back, and launches on the stream still work. */
static void stream_attributes(void **state) {
  (void)state;
  cucore_stream *s = NULL;
  assert_ok(cucore_stream_create(dev, CUCORE_STREAM_NON_BLOCKING, 0, &s));
  int least = 0, greatest = 0;
  assert_ok(cucore_device_get_stream_priorities(dev, &least, &greatest));
  cucore_launch_attr a = {.id = CUCORE_LAUNCH_PRIORITY};
  a.u.value = greatest;
  assert_ok(cucore_stream_set_attribute(s, &a));
  cucore_launch_attr back;
  assert_ok(cucore_stream_get_attribute(s, CUCORE_LAUNCH_PRIORITY, &back));
  assert_int_equal(back.u.value, greatest);
  cucore_launch_attr sync = {.id = CUCORE_LAUNCH_SYNCHRONIZATION_POLICY};
  sync.u.value = 2; /* CU_SYNC_POLICY_SPIN */
  assert_ok(cucore_stream_set_attribute(s, &sync));
  assert_ok(cucore_stream_get_attribute(s, CUCORE_LAUNCH_SYNCHRONIZATION_POLICY, &back));
  assert_int_equal(back.u.value, 2);
  /* An L2 persistence window over a buffer the kernel then uses. */
  int max_window = 0;
  CUdevice cud;
  assert_int_equal(DRV(cuDeviceGet)(&cud, 0), CUDA_SUCCESS);
  DRV(cuDeviceGetAttribute)(&max_window, CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE, cud);
  cucore_devptr buf = 0;
  assert_ok(cucore_mem_alloc(dev, 1 << 20, &buf));
  if (max_window > 0) {
    cucore_launch_attr w = {.id = CUCORE_LAUNCH_ACCESS_POLICY_WINDOW};
    w.u.access_policy.base = buf;
    w.u.access_policy.bytes = (size_t)(max_window < (1 << 20) ? max_window : (1 << 20));
    w.u.access_policy.hit_ratio = 0.5f;
    w.u.access_policy.hit_property = 2; /* persisting */
    w.u.access_policy.miss_property = 1;
    assert_ok(cucore_stream_set_attribute(s, &w));
    assert_ok(cucore_stream_get_attribute(s, CUCORE_LAUNCH_ACCESS_POLICY_WINDOW, &back));
    assert_true(back.u.access_policy.base == buf);
    assert_true(back.u.access_policy.bytes == w.u.access_policy.bytes);
    assert_true(back.u.access_policy.hit_ratio == 0.5f);
  }
  cucore_object *obj = gpu_compile(add_src, CUCORE_CODE_CUBIN, NULL, NULL);
  cucore_kernel *k = gpu_kernel(obj, "add_one");
  assert_int_equal(run_and_count(k, s, 4096, 1, 1, 1), 4096);
  /* Refusals: not a stream attribute; a default stream; a bad value. */
  cucore_launch_attr coop = {.id = CUCORE_LAUNCH_COOPERATIVE};
  assert_status(cucore_stream_set_attribute(s, &coop), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "not a stream attribute");
  cucore_stream *def = NULL;
  assert_ok(cucore_stream_default(dev, &def));
  assert_status(cucore_stream_set_attribute(def, &a), CUCORE_INVALID_ARGUMENT);
  a.u.value = greatest - 100;
  assert_status(cucore_stream_set_attribute(s, &a), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "range");
  print_message("stream attributes: priority, synchronization policy%s set and read back\n",
                max_window > 0 ? ", access policy window" : "");
  cucore_kernel_destroy(k);
  cucore_object_destroy(obj);
  cucore_mem_free(dev, buf);
  cucore_stream_destroy(s);
}

/* A launch attribute id newer than cucore's headers: refused when the driver is not newer
 * (it could not know it either); passed through and judged by the driver when it is. */
static void launch_attributes_newer_than_cucore(void **state) {
  (void)state;
  cucore_versions_info v;
  assert_ok(cucore_versions(&v));
  cucore_launch_config c;
  memset(&c, 0, sizeof c);
  cucore_launch_attr future = {.id = (cucore_launch_attr_id)99};
  future.u.raw[0] = 1;
  cucore_status st = cucore_launch_config_set(&c, &future);
  if (v.driver.version <= v.toolkit_headers) {
    assert_status(st, CUCORE_INVALID_ARGUMENT);
    assert_contains(cucore_last_error(), "not newer");
    print_message("attribute 99 refused: driver %d is not newer than the headers (%d)\n",
                  v.driver.version, v.toolkit_headers);
  } else {
    assert_ok(st);
    print_message("attribute 99 accepted for the newer driver %d\n", v.driver.version);
  }
}

int main(void) {
  /* The JIT log test needs the driver to compile: a run after another would otherwise load the
   * PTX from the driver's compute cache and log nothing. Read by the driver at its start. */
  setenv("CUDA_CACHE_DISABLE", "1", 1);
  if (!cucore_test_have_gpu()) return CUCORE_TEST_SKIP;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(foreign_stream_and_event),
      cmocka_unit_test(foreign_kernels),
      cmocka_unit_test(lazy_loading_is_observable),
      cmocka_unit_test(load_options_and_jit_log),
      cmocka_unit_test(stream_attributes),
      cmocka_unit_test(launch_attributes_newer_than_cucore),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
