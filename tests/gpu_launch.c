/* gpu_launch.c -- programs, objects, kernels and checked launches on a real GPU (label gpu). */
#include "gpu_support.h"
#include "runtime/runtime.h" /* DRV(): the raw driver, to launch the packed buffer directly */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static cucore_device *dev;
static cucore_stream *stream;

static int setup(void **state) {
  (void)state;
  if (cucore_device_open(0, &dev) != CUCORE_OK) return -1;
  return cucore_stream_create(dev, CUCORE_STREAM_NON_BLOCKING, 0, &stream) == CUCORE_OK ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  cucore_stream_destroy(stream);
  return cucore_device_close(dev) == CUCORE_OK ? 0 : -1;
}

static const char *saxpy_src =
    "extern \"C\" __global__ void saxpy(float a, const float *x, float *y, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = a * x[i] + y[i];\n"
    "}\n";

static cucore_launch_config config1d(unsigned grid, unsigned block, unsigned smem) {
  cucore_launch_config c;
  memset(&c, 0, sizeof c);
  c.grid[0] = grid;
  c.block[0] = block;
  c.shared_bytes = smem;
  c.stream = stream;
  return c;
}

/* saxpy through cubin, PTX (driver JIT) and LTO-IR (linked at load) gives the CPU answer. */
static void saxpy_runs_from_every_code_type(void **state) {
  (void)state;
  const int n = 1 << 20;
  float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *out = malloc(n * sizeof *out);
  cucore_devptr dx, dy;
  assert_ok(cucore_mem_alloc(dev, n * sizeof(float), &dx));
  assert_ok(cucore_mem_alloc(dev, n * sizeof(float), &dy));
  cucore_code_type types[] = {CUCORE_CODE_CUBIN, CUCORE_CODE_PTX, CUCORE_CODE_LTOIR,
                              CUCORE_CODE_FATBIN};
  for (int t = 0; t < 4; t++) {
    for (int i = 0; i < n; i++) {
      x[i] = (float)(i % 1000) * 0.5f;
      y[i] = (float)(i % 77);
    }
    assert_ok(cucore_memcpy_htod(dev, dx, x, n * sizeof(float), NULL));
    assert_ok(cucore_memcpy_htod(dev, dy, y, n * sizeof(float), NULL));
    cucore_object *obj = gpu_compile(saxpy_src, types[t], NULL, NULL);
    cucore_kernel *k = gpu_kernel(obj, "saxpy");
    assert_ok(cucore_object_destroy(obj)); /* the kernel keeps the object alive */
    int count = 0;
    assert_ok(cucore_kernel_get_param_count(k, &count));
    assert_int_equal(count, 4);
    cucore_args *args = NULL;
    assert_ok(cucore_args_create(k, &args));
    float a = 2.5f;
    assert_ok(CUCORE_ARGS(args, a, dx, dy, n));
    cucore_launch_config c = config1d((n + 255) / 256, 256, 0);
    assert_ok(cucore_launch(k, &c, args));
    assert_ok(cucore_stream_synchronize(stream));
    assert_ok(cucore_memcpy_dtoh(dev, out, dy, n * sizeof(float), NULL));
    for (int i = 0; i < n; i++) {
      float want = a * x[i] + y[i];
      if (out[i] != want)
        fail_msg("%s: y[%d] = %g, expected %g", cucore_code_type_name(types[t]), i, out[i], want);
    }
    print_message("saxpy from %s: %d elements match the CPU\n", cucore_code_type_name(types[t]), n);
    if (types[t] == CUCORE_CODE_CUBIN) {
      /* The packed-buffer (`extra`) form of the same arguments gives the same answer. */
      void *fn = NULL, *buffer = NULL, *hs = NULL;
      size_t bytes = 0;
      assert_ok(cucore_kernel_get_native(k, dev, NULL, &fn));
      assert_ok(cucore_args_get_native(args, NULL, &buffer, &bytes));
      assert_ok(cucore_stream_get_native(stream, &hs));
      void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buffer, CU_LAUNCH_PARAM_BUFFER_SIZE, &bytes,
                       CU_LAUNCH_PARAM_END};
      assert_int_equal(DRV(cuLaunchKernel)((CUfunction)fn, (n + 255) / 256, 1, 1, 256, 1, 1, 0,
                                           (CUstream)hs, NULL, extra),
                       CUDA_SUCCESS);
      assert_ok(cucore_stream_synchronize(stream));
      assert_ok(cucore_memcpy_dtoh(dev, out, dy, n * sizeof(float), NULL));
      for (int i = 0; i < n; i++) {
        float want = a * x[i] + (a * x[i] + y[i]);
        if (out[i] != want) fail_msg("extra form: y[%d] = %g, expected %g", i, out[i], want);
      }
      print_message("saxpy through the packed `extra` buffer: %d elements match\n", n);
    }
    cucore_args_destroy(args);
    cucore_kernel_destroy(k);
  }
  cucore_mem_free(dev, dx);
  cucore_mem_free(dev, dy);
  free(x);
  free(y);
  free(out);
}

/* Wrong argument lists are refused before the driver sees them (peers segfault here). */
static void wrong_arguments_are_refused(void **state) {
  (void)state;
  cucore_object *obj = gpu_compile(saxpy_src, CUCORE_CODE_CUBIN, NULL, NULL);
  cucore_kernel *k = gpu_kernel(obj, "saxpy");
  cucore_object_destroy(obj);
  cucore_args *args = NULL;
  assert_ok(cucore_args_create(k, &args));
  cucore_devptr p = 0;
  assert_ok(cucore_mem_alloc(dev, 4096, &p));
  cucore_launch_config c = config1d(1, 32, 0);
  /* Too few. */
  assert_status(CUCORE_ARGS(args, 1.0f, p, p), CUCORE_ARG_COUNT);
  assert_contains(cucore_last_error(), "takes 4 parameters, 3 were given");
  assert_status(cucore_launch(k, &c, args), CUCORE_ARG_COUNT);
  /* Too many. */
  assert_status(CUCORE_ARGS(args, 1.0f, p, p, 4, 5), CUCORE_ARG_COUNT);
  assert_contains(cucore_last_error(), "a 5th argument");
  /* A double where a float goes. */
  assert_status(CUCORE_ARGS(args, 1.0, p, p, 4), CUCORE_ARG_SIZE);
  assert_contains(cucore_last_error(), "argument 0 of `saxpy` is 4 bytes at offset 0");
  assert_contains(cucore_last_error(), "double");
  /* An int where a pointer goes. */
  assert_status(CUCORE_ARGS(args, 1.0f, 7, p, 4), CUCORE_ARG_SIZE);
  assert_contains(cucore_last_error(), "argument 1");
  /* Zero block, block over the limit, grid over the limit. */
  assert_ok(CUCORE_ARGS(args, 1.0f, p, p, 0));
  c = config1d(1, 0, 0);
  assert_status(cucore_launch(k, &c, args), CUCORE_LAUNCH_CONFIG);
  c = config1d(1, 2048, 0);
  assert_status(cucore_launch(k, &c, args), CUCORE_LAUNCH_CONFIG);
  assert_contains(cucore_last_error(), "2048");
  c = config1d(1, 32, 0);
  c.grid[1] = 70000;
  assert_status(cucore_launch(k, &c, args), CUCORE_LAUNCH_CONFIG);
  assert_contains(cucore_last_error(), "grid y-dimension 70000");
  /* Too much shared memory. */
  c = config1d(1, 32, 1u << 20);
  assert_status(cucore_launch(k, &c, args), CUCORE_LAUNCH_CONFIG);
  assert_contains(cucore_last_error(), "dynamic shared memory");
  /* NULL stream and missing args. */
  c = config1d(1, 32, 0);
  c.stream = NULL;
  assert_status(cucore_launch(k, &c, args), CUCORE_INVALID_ARGUMENT);
  c = config1d(1, 32, 0);
  assert_status(cucore_launch(k, &c, NULL), CUCORE_INVALID_ARGUMENT);
  /* A good launch still works after all that. */
  assert_ok(cucore_launch(k, &c, args));
  assert_ok(cucore_stream_synchronize(stream));
  /* The launch path trusts the context cucore made current; if the caller changes the
   * thread's context behind its back, the launch still lands in the right one. */
  assert_int_equal(DRV(cuCtxSetCurrent)(NULL), CUDA_SUCCESS);
  assert_ok(cucore_launch(k, &c, args));
  assert_ok(cucore_stream_synchronize(stream));
  cucore_mem_free(dev, p);
  cucore_args_destroy(args);
  cucore_kernel_destroy(k);
}

/* Dynamic shared memory above 48 KB: the kernel's opt-in limit is raised on demand. */
static void large_dynamic_shared_memory_is_opted_in(void **state) {
  (void)state;
  const char *src = "extern \"C\" __global__ void fill(int *out, int n) {\n"
                    "  extern __shared__ int buf[];\n"
                    "  for (int i = threadIdx.x; i < n; i += blockDim.x) buf[i] = i * 3;\n"
                    "  __syncthreads();\n"
                    "  int s = 0;\n"
                    "  for (int i = 0; i < n; i++) s += buf[i];\n"
                    "  if (threadIdx.x == 0) out[0] = s;\n"
                    "}\n";
  cucore_object *obj = gpu_compile(src, CUCORE_CODE_CUBIN, NULL, NULL);
  cucore_kernel *k = gpu_kernel(obj, "fill");
  cucore_object_destroy(obj);
  cucore_device_props props;
  assert_ok(cucore_device_get_props(0, &props));
  unsigned bytes = 100 * 1024;
  assert_true((int)bytes <= props.shared_per_block_optin);
  int n = (int)(bytes / 4);
  cucore_devptr out;
  assert_ok(cucore_mem_alloc(dev, 4, &out));
  cucore_args *args = NULL;
  assert_ok(cucore_args_create(k, &args));
  assert_ok(CUCORE_ARGS(args, out, n));
  int before = 0;
  assert_ok(
      cucore_kernel_get_attribute(k, dev, CUCORE_KATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES, &before));
  cucore_launch_config c = config1d(1, 256, bytes);
  assert_ok(cucore_launch(k, &c, args));
  assert_ok(cucore_stream_synchronize(stream));
  int got = 0;
  assert_ok(cucore_memcpy_dtoh(dev, &got, out, 4, NULL));
  long long want = 0;
  for (int i = 0; i < n; i++) want += i * 3;
  assert_int_equal(got, (int)want);
  int after = 0;
  assert_ok(
      cucore_kernel_get_attribute(k, dev, CUCORE_KATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES, &after));
  print_message("max dynamic shared: %d before, %d after a %u-byte launch\n", before, after, bytes);
  assert_true(before < (int)bytes && after >= (int)bytes);
  /* Never lowered: a smaller launch leaves it. */
  c = config1d(1, 256, 1024);
  assert_ok(CUCORE_ARGS(args, out, 256));
  assert_ok(cucore_launch(k, &c, args));
  assert_ok(cucore_stream_synchronize(stream));
  assert_ok(cucore_kernel_get_attribute(k, dev, CUCORE_KATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES, &got));
  assert_int_equal(got, after);
  /* The same launch again after the caller lowers the limit: cucore remembers the last launch
   * shape it checked on this thread, and a setting must make it check (and raise) again. */
  c = config1d(1, 256, bytes);
  assert_ok(CUCORE_ARGS(args, out, n));
  assert_ok(cucore_launch(k, &c, args));
  assert_ok(cucore_kernel_set_attribute(k, dev, CUCORE_KATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES, 0));
  assert_ok(cucore_launch(k, &c, args));
  assert_ok(cucore_stream_synchronize(stream));
  assert_ok(cucore_memcpy_dtoh(dev, &got, out, 4, NULL));
  assert_int_equal(got, (int)want);
  assert_ok(cucore_kernel_get_attribute(k, dev, CUCORE_KATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES, &got));
  assert_true(got >= (int)bytes);
  /* A remembered good shape does not hide a bad one: a block too large is still refused. */
  c = config1d(1, 2048, bytes);
  assert_status(cucore_launch(k, &c, args), CUCORE_LAUNCH_CONFIG);
  cucore_mem_free(dev, out);
  cucore_args_destroy(args);
  cucore_kernel_destroy(k);
}

/* Every attribute is readable; settable ones set; load state and explicit load. */
static void execution_control_queries(void **state) {
  (void)state;
  const char *src = "__global__ void __launch_bounds__(128) bounded(float *x) {\n"
                    "  __shared__ float s[64];\n"
                    "  s[threadIdx.x % 64] = x[threadIdx.x];\n"
                    "  __syncthreads();\n"
                    "  x[threadIdx.x] = s[(threadIdx.x + 1) % 64];\n"
                    "}\n";
  const char *exprs[] = {"bounded", NULL};
  cucore_object *obj = gpu_compile(src, CUCORE_CODE_CUBIN, exprs, NULL);
  const char *lowered = NULL;
  assert_ok(cucore_object_get_lowered_name(obj, "bounded", &lowered));
  cucore_kernel *k = gpu_kernel(obj, "bounded");
  const char *name = NULL;
  assert_ok(cucore_kernel_get_name(k, &name));
  assert_string_equal(name, lowered);
  for (int a = 0; a < CUCORE_KATTR_COUNT; a++) {
    int v = -99;
    assert_ok(cucore_kernel_get_attribute(k, dev, (cucore_kernel_attr)a, &v));
    print_message("  %-40s %d\n", cucore_kernel_attr_name((cucore_kernel_attr)a), v);
  }
  int v = 0;
  assert_ok(cucore_kernel_get_attribute(k, dev, CUCORE_KATTR_MAX_THREADS_PER_BLOCK, &v));
  assert_int_equal(v, 128);
  assert_ok(cucore_kernel_get_attribute(k, dev, CUCORE_KATTR_SHARED_SIZE_BYTES, &v));
  assert_int_equal(v, 64 * 4);
  assert_ok(cucore_kernel_set_attribute(k, dev, CUCORE_KATTR_PREFERRED_SHARED_MEMORY_CARVEOUT, 50));
  assert_ok(cucore_kernel_get_attribute(k, dev, CUCORE_KATTR_PREFERRED_SHARED_MEMORY_CARVEOUT, &v));
  assert_int_equal(v, 50);
  assert_status(cucore_kernel_set_attribute(k, dev, CUCORE_KATTR_NUM_REGS, 10),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "read-only");
  assert_status(cucore_kernel_set_attribute(k, dev, CUCORE_KATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                            1 << 24),
                CUCORE_INVALID_ARGUMENT);
  assert_ok(cucore_kernel_set_cache_config(k, dev, CUCORE_CACHE_PREFER_SHARED));
  assert_ok(cucore_kernel_load(k, dev));
  int loaded = 0;
  assert_ok(cucore_kernel_is_loaded(k, dev, &loaded));
  assert_int_equal(loaded, 1);
  void *mod = NULL, *kern = NULL, *fn = NULL;
  assert_ok(cucore_kernel_get_module(k, dev, &mod));
  assert_non_null(mod);
  assert_ok(cucore_kernel_get_native(k, dev, &kern, &fn));
  assert_non_null(kern);
  assert_non_null(fn);
  const char *fname = NULL;
  assert_ok(cucore_kernel_get_function_name(k, dev, &fname));
  assert_string_equal(fname, lowered);
  /* Launch bounds are enforced before the driver. */
  cucore_args *args = NULL;
  assert_ok(cucore_args_create(k, &args));
  cucore_devptr p;
  assert_ok(cucore_mem_alloc(dev, 4096, &p));
  assert_ok(CUCORE_ARGS(args, p));
  cucore_launch_config c = config1d(1, 256, 0);
  assert_status(cucore_launch(k, &c, args), CUCORE_LAUNCH_CONFIG);
  assert_contains(cucore_last_error(), "maximum of 128 threads");
  /* Not found lists the kernels there are. */
  cucore_kernel *missing = NULL;
  assert_status(cucore_object_get_kernel(obj, "bounded_typo", &missing), CUCORE_NOT_FOUND);
  assert_null(missing);
  assert_contains(cucore_last_error(), lowered);
  int count = 0;
  assert_ok(cucore_object_get_kernel_count(obj, &count));
  assert_int_equal(count, 1);
  cucore_mem_free(dev, p);
  cucore_args_destroy(args);
  cucore_kernel_destroy(k);
  cucore_object_destroy(obj);
}

/* A templated kernel through its name expression; a struct by value with padding and 16-byte
 * alignment. */
typedef struct {
  _Alignas(16) char tag; /* the C twin of `struct __align__(16) params16` */
  double v[2];
  int n;
} params16;

static void templates_and_structs_by_value(void **state) {
  (void)state;
  const char *src = "struct __align__(16) params16 { char tag; double v[2]; int n; };\n"
                    "template <typename T> __global__ void scale(T *x, T a, int n) {\n"
                    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= a; }\n"
                    "__global__ void take(int pad, params16 p, double *out) {\n"
                    "  out[0] = p.v[0] + p.v[1] + p.n + p.tag + pad; }\n";
  const char *exprs[] = {"scale<float>", "scale<double>", "take", NULL};
  cucore_object *obj = gpu_compile(src, CUCORE_CODE_CUBIN, exprs, NULL);
  cucore_kernel *kf = gpu_kernel(obj, "scale<float>");
  cucore_kernel *kd = gpu_kernel(obj, "scale<double>");
  cucore_kernel *kt = gpu_kernel(obj, "take");
  cucore_devptr buf;
  assert_ok(cucore_mem_alloc(dev, 64 * 8, &buf));
  double host[64];
  for (int i = 0; i < 64; i++) host[i] = i;
  assert_ok(cucore_memcpy_htod(dev, buf, host, sizeof host, NULL));
  cucore_args *a = NULL;
  assert_ok(cucore_args_create(kd, &a));
  assert_ok(CUCORE_ARGS(a, buf, 3.0, 64));
  cucore_launch_config c = config1d(1, 64, 0);
  assert_ok(cucore_launch(kd, &c, a));
  assert_ok(cucore_stream_synchronize(stream));
  double back[64];
  assert_ok(cucore_memcpy_dtoh(dev, back, buf, sizeof back, NULL));
  for (int i = 0; i < 64; i++) assert_true(back[i] == 3.0 * i);
  cucore_args_destroy(a);
  /* scale<float> refuses a double for T. */
  assert_ok(cucore_args_create(kf, &a));
  assert_status(CUCORE_ARGS(a, buf, 3.0, 64), CUCORE_ARG_SIZE);
  cucore_args_destroy(a);
  /* The struct: layout from the driver, alignment checked, value copied at bind time. */
  int count = 0;
  assert_ok(cucore_kernel_get_param_count(kt, &count));
  assert_int_equal(count, 3);
  cucore_param_info pi;
  assert_ok(cucore_kernel_get_param(kt, 1, &pi));
  assert_int_equal(pi.size, sizeof(params16));
  assert_int_equal(pi.offset % 16, 0);
  assert_ok(cucore_args_create(kt, &a));
  {
    params16 p;
    memset(&p, 0, sizeof p);
    p.tag = 3;
    p.v[0] = 1.5;
    p.v[1] = 2.25;
    p.n = 10;
    assert_ok(cucore_args_push_i32(a, 100));
    assert_ok(cucore_args_push_bytes(a, &p, sizeof p, _Alignof(params16)));
    memset(&p, 0xff, sizeof p); /* the value was copied: changing it now changes nothing */
  }
  assert_ok(cucore_args_push_ptr(a, buf));
  assert_ok(cucore_launch(kt, &c, a));
  assert_ok(cucore_stream_synchronize(stream));
  double r = 0;
  assert_ok(cucore_memcpy_dtoh(dev, &r, buf, 8, NULL));
  assert_true(r == 1.5 + 2.25 + 10 + 3 + 100);
  /* Misaligned: a 16-byte-aligned struct where the kernel has an 8-aligned slot is refused. */
  cucore_args_reset(a);
  char raw[sizeof(params16)] = {0};
  assert_ok(cucore_args_push_i32(a, 1));
  assert_status(cucore_args_push_bytes(a, raw, sizeof(params16), 64), CUCORE_ARG_ALIGNMENT);
  assert_contains(cucore_last_error(), "alignment");
  cucore_args_destroy(a);
  cucore_kernel_destroy(kf);
  cucore_kernel_destroy(kd);
  cucore_kernel_destroy(kt);
  cucore_object_destroy(obj);
  cucore_mem_free(dev, buf);
}

/* Cooperative grid sync gives the right sum; a grid too large to be co-resident is refused. */
static void cooperative_grid_sync_reduction(void **state) {
  (void)state;
  const char *src =
      "#include <cooperative_groups.h>\n"
      "namespace cg = cooperative_groups;\n"
      "extern \"C\" __global__ void reduce(const int *in, int *partial, int *out, int n) {\n"
      "  cg::grid_group g = cg::this_grid();\n"
      "  int s = 0;\n"
      "  for (int i = g.thread_rank(); i < n; i += g.size()) s += in[i];\n"
      "  atomicAdd(&partial[blockIdx.x], s);\n"
      "  g.sync();\n"
      "  if (g.thread_rank() == 0) { int t = 0; for (int b = 0; b < gridDim.x; b++) t += "
      "partial[b]; *out = t; }\n"
      "}\n";
  cucore_object *obj = gpu_compile(src, CUCORE_CODE_CUBIN, NULL, NULL);
  cucore_kernel *k = gpu_kernel(obj, "reduce");
  cucore_device_props props;
  assert_ok(cucore_device_get_props(0, &props));
  const int n = 1 << 22;
  int *h = malloc(n * sizeof *h);
  long long want = 0;
  for (int i = 0; i < n; i++) {
    h[i] = (i * 7) % 13 - 6;
    want += h[i];
  }
  cucore_devptr in, partial, out;
  unsigned blocks = (unsigned)props.sm_count * 2;
  assert_ok(cucore_mem_alloc(dev, n * sizeof(int), &in));
  assert_ok(cucore_mem_alloc(dev, blocks * 64 * sizeof(int), &partial));
  assert_ok(cucore_mem_alloc(dev, sizeof(int), &out));
  assert_ok(cucore_memcpy_htod(dev, in, h, n * sizeof(int), NULL));
  cucore_args *a = NULL;
  assert_ok(cucore_args_create(k, &a));
  assert_ok(CUCORE_ARGS(a, in, partial, out, n));
  for (int mode = 0; mode < 2; mode++) {
    assert_ok(cucore_memset_d32(dev, partial, 0, blocks, NULL));
    cucore_launch_config c = config1d(blocks, 256, 0);
    if (mode == 0) {
      assert_ok(cucore_launch_config_cooperative(&c, 1));
      assert_ok(cucore_launch(k, &c, a));
    } else {
      assert_ok(cucore_launch_cooperative(k, &c, a));
    }
    assert_ok(cucore_stream_synchronize(stream));
    int got = 0;
    assert_ok(cucore_memcpy_dtoh(dev, &got, out, sizeof got, NULL));
    assert_int_equal(got, (int)want);
  }
  print_message("cooperative reduction over %d ints on %u blocks: %lld\n", n, blocks, want);
  cucore_launch_config c = config1d(blocks * 64, 1024, 0);
  assert_ok(cucore_launch_config_cooperative(&c, 1));
  assert_status(cucore_launch(k, &c, a), CUCORE_LAUNCH_CONFIG);
  assert_contains(cucore_last_error(), "co-resident");
  free(h);
  cucore_mem_free(dev, in);
  cucore_mem_free(dev, partial);
  cucore_mem_free(dev, out);
  cucore_args_destroy(a);
  cucore_kernel_destroy(k);
  cucore_object_destroy(obj);
}

/* A cluster kernel sees %cluster_nctarank; invalid cluster shapes are refused. */
static void clusters(void **state) {
  (void)state;
  cucore_device_props props;
  assert_ok(cucore_device_get_props(0, &props));
  if (!props.cluster_launch) skip();
  const char *src =
      "#include <cooperative_groups.h>\n"
      "namespace cg = cooperative_groups;\n"
      "extern \"C\" __global__ void cl(unsigned *out) {\n"
      "  unsigned n; asm volatile(\"mov.u32 %0, %%cluster_nctarank;\" : \"=r\"(n));\n"
      "  if (threadIdx.x == 0) out[blockIdx.x] = n * 100 + cg::this_cluster().block_rank();\n"
      "}\n"
      "extern \"C\" __global__ void __cluster_dims__(2, 1, 1) fixed(unsigned *out) {\n"
      "  unsigned n; asm volatile(\"mov.u32 %0, %%cluster_nctarank;\" : \"=r\"(n));\n"
      "  if (threadIdx.x == 0) out[blockIdx.x] = n;\n"
      "}\n";
  cucore_object *obj = gpu_compile(src, CUCORE_CODE_CUBIN, NULL, NULL);
  cucore_kernel *k = gpu_kernel(obj, "cl");
  cucore_kernel *kf = gpu_kernel(obj, "fixed");
  cucore_devptr out;
  assert_ok(cucore_mem_alloc(dev, 64 * 4, &out));
  cucore_args *a = NULL;
  assert_ok(cucore_args_create(k, &a));
  assert_ok(CUCORE_ARGS(a, out));
  cucore_launch_config c = config1d(16, 64, 0);
  assert_ok(cucore_launch_config_cluster(&c, 4, 1, 1));
  assert_ok(cucore_launch(k, &c, a));
  assert_ok(cucore_stream_synchronize(stream));
  unsigned got[16];
  assert_ok(cucore_memcpy_dtoh(dev, got, out, sizeof got, NULL));
  for (int b = 0; b < 16; b++) assert_int_equal(got[b], 400u + (unsigned)(b % 4));
  print_message("cluster of 4: every block saw %%cluster_nctarank = 4 and its rank\n");
  /* 16 blocks do not divide into clusters of 3; 16-block clusters are not portable. */
  assert_ok(cucore_launch_config_cluster(&c, 3, 1, 1));
  assert_status(cucore_launch(k, &c, a), CUCORE_LAUNCH_CONFIG);
  assert_contains(cucore_last_error(), "not a multiple");
  c = config1d(32, 64, 0);
  assert_ok(cucore_launch_config_cluster(&c, 16, 1, 1));
  assert_status(cucore_launch(k, &c, a), CUCORE_LAUNCH_CONFIG);
  assert_contains(cucore_last_error(), "portable");
  /* A __cluster_dims__ kernel runs with its compile-time shape and refuses another. */
  cucore_args *af = NULL;
  assert_ok(cucore_args_create(kf, &af));
  assert_ok(CUCORE_ARGS(af, out));
  c = config1d(8, 32, 0);
  assert_ok(cucore_launch(kf, &c, af));
  assert_ok(cucore_stream_synchronize(stream));
  assert_ok(cucore_memcpy_dtoh(dev, got, out, 8 * 4, NULL));
  for (int b = 0; b < 8; b++) assert_int_equal(got[b], 2u);
  c = config1d(7, 32, 0);
  assert_status(cucore_launch(kf, &c, af), CUCORE_LAUNCH_CONFIG);
  assert_contains(cucore_last_error(), "__cluster_dims__");
  cucore_args_destroy(af);
  cucore_args_destroy(a);
  cucore_kernel_destroy(k);
  cucore_kernel_destroy(kf);
  cucore_object_destroy(obj);
  cucore_mem_free(dev, out);
}

/* A host function runs in stream order: after the kernel before it, before the one after. */
typedef struct {
  volatile int *mapped;
  int seen;
  int calls;
} host_state;

static void host_cb(void *user) {
  host_state *h = user;
  h->seen = *h->mapped;
  h->calls++;
}

static void host_function_runs_in_stream_order(void **state) {
  (void)state;
  const char *src =
      "extern \"C\" __global__ void spin_then_write(int *p, int v, long long cycles) {\n"
      "  long long t0 = clock64(); while (clock64() - t0 < cycles) {}\n"
      "  *(volatile int *)p = v; __threadfence_system(); }\n";
  cucore_object *obj = gpu_compile(src, CUCORE_CODE_CUBIN, NULL, NULL);
  cucore_kernel *k = gpu_kernel(obj, "spin_then_write");
  int *pinned = NULL;
  assert_ok(cucore_host_alloc(dev, 4096, (void **)&pinned));
  *pinned = 0;
  host_state hs = {pinned, -1, 0};
  cucore_args *a = NULL;
  assert_ok(cucore_args_create(k, &a));
  /* Pinned memory is addressable from the device with unified addressing. */
  assert_ok(CUCORE_ARGS(a, (void *)pinned, 42, 20000000LL));
  cucore_launch_config c = config1d(1, 1, 0);
  assert_ok(cucore_launch(k, &c, a));
  assert_ok(cucore_launch_host_func(stream, host_cb, &hs));
  assert_ok(CUCORE_ARGS(a, (void *)pinned, 7, 0LL));
  assert_ok(cucore_launch(k, &c, a));
  assert_ok(cucore_stream_synchronize(stream));
  assert_int_equal(hs.calls, 1);
  assert_int_equal(hs.seen, 42); /* saw the first kernel's write, not the second's */
  assert_int_equal(*pinned, 7);
  assert_status(cucore_launch_host_func(stream, NULL, NULL), CUCORE_INVALID_ARGUMENT);
  cucore_args_destroy(a);
  cucore_kernel_destroy(k);
  cucore_object_destroy(obj);
  cucore_host_free(dev, pinned);
}

/* Priority is accepted; PDL lets the dependent kernel start before the primary ends. */
static void priority_and_programmatic_dependent_launch(void **state) {
  (void)state;
  const char *src =
      "__device__ unsigned long long now() { unsigned long long t; asm volatile(\"mov.u64 %0, "
      "%%globaltimer;\" : \"=l\"(t)); return t; }\n"
      "extern \"C\" __global__ void primary(unsigned long long *t, long long cycles) {\n"
      "  asm volatile(\"griddepcontrol.launch_dependents;\");\n"
      "  long long t0 = clock64(); while (clock64() - t0 < cycles) {}\n"
      "  if (threadIdx.x == 0 && blockIdx.x == 0) t[0] = now(); }\n"
      "extern \"C\" __global__ void secondary(unsigned long long *t) {\n"
      "  if (threadIdx.x == 0 && blockIdx.x == 0) t[1] = now();\n"
      "  asm volatile(\"griddepcontrol.wait;\" ::: \"memory\");\n"
      "  if (threadIdx.x == 0 && blockIdx.x == 0) t[2] = now(); }\n";
  cucore_object *obj = gpu_compile(src, CUCORE_CODE_CUBIN, NULL, NULL);
  cucore_kernel *kp = gpu_kernel(obj, "primary");
  cucore_kernel *ks = gpu_kernel(obj, "secondary");
  /* Under lazy loading a kernel's first launch loads it, which serialises: load both first so
   * the dependent launch can overlap. */
  assert_ok(cucore_kernel_load(kp, dev));
  assert_ok(cucore_kernel_load(ks, dev));
  cucore_devptr t;
  assert_ok(cucore_mem_alloc(dev, 3 * 8, &t));
  assert_ok(cucore_memset_d8(dev, t, 0, 24, NULL));
  cucore_args *ap = NULL, *as = NULL;
  assert_ok(cucore_args_create(kp, &ap));
  assert_ok(cucore_args_create(ks, &as));
  assert_ok(CUCORE_ARGS(ap, t, 50000000LL));
  assert_ok(CUCORE_ARGS(as, t));
  int least = 0, greatest = 0;
  assert_ok(cucore_device_get_stream_priorities(dev, &least, &greatest));
  cucore_launch_config c = config1d(4, 32, 0);
  assert_ok(cucore_launch_config_priority(&c, greatest));
  assert_ok(cucore_launch(kp, &c, ap));
  cucore_launch_config c2 = config1d(4, 32, 0);
  assert_ok(cucore_launch_config_pdl(&c2, 1));
  assert_ok(cucore_launch(ks, &c2, as));
  assert_ok(cucore_stream_synchronize(stream));
  unsigned long long ts[3];
  assert_ok(cucore_memcpy_dtoh(dev, ts, t, sizeof ts, NULL));
  print_message(
      "PDL: secondary started %.3f ms before the primary finished; waited until %+.3f ms\n",
      ((double)ts[0] - (double)ts[1]) / 1e6, ((double)ts[2] - (double)ts[0]) / 1e6);
  /* compute-sanitizer serialises kernels, so no overlap can be seen under it. */
  if (!getenv("CUCORE_UNDER_SANITIZER"))
    assert_true(ts[1] < ts[0]); /* overlap: the secondary began while the primary ran */
  assert_true(ts[2] >= ts[0]);  /* griddepcontrol.wait waited for the primary */
  cucore_args_destroy(ap);
  cucore_args_destroy(as);
  cucore_kernel_destroy(kp);
  cucore_kernel_destroy(ks);
  cucore_object_destroy(obj);
  cucore_mem_free(dev, t);
}

/* Three files: the kernel in a.cu calls functions defined in b.cu and c.cu; linked by
 * nvJitLink from LTO-IR and from relocatable cubins. */
static void three_file_link_runs(void **state) {
  (void)state;
  const char *a_src =
      "extern __device__ int f_b(int); extern __device__ int f_c(int);\n"
      "extern \"C\" __global__ void combine(int *out, int n) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) out[i] = f_b(i) + f_c(i); }\n";
  const char *b_src = "__device__ int f_b(int x) { return x * x; }\n";
  const char *c_src = "__device__ int f_c(int x) { return 3 * x + 1; }\n";
  const char *flags[] = {"-rdc", NULL};
  for (int mode = 0; mode < 2; mode++) {
    cucore_code_type t = mode == 0 ? CUCORE_CODE_LTOIR : CUCORE_CODE_CUBIN;
    cucore_object *oa = gpu_compile(a_src, t, NULL, flags);
    cucore_object *ob = gpu_compile(b_src, t, NULL, flags);
    cucore_object *oc = gpu_compile(c_src, t, NULL, flags);
    cucore_linker *lk = NULL;
    assert_ok(cucore_linker_create(NULL, &lk));
    assert_ok(cucore_linker_add_object(lk, oa));
    assert_ok(cucore_linker_add_object(lk, ob));
    assert_ok(cucore_linker_add_object(lk, oc));
    cucore_object *linked = NULL;
    assert_ok(cucore_linker_complete(lk, CUCORE_CODE_CUBIN, &linked));
    cucore_kernel *k = gpu_kernel(linked, "combine");
    const int n = 1000;
    cucore_devptr out;
    assert_ok(cucore_mem_alloc(dev, n * 4, &out));
    cucore_args *a = NULL;
    assert_ok(cucore_args_create(k, &a));
    assert_ok(CUCORE_ARGS(a, out, n));
    cucore_launch_config c = config1d(4, 256, 0);
    assert_ok(cucore_launch(k, &c, a));
    assert_ok(cucore_stream_synchronize(stream));
    int h[1000];
    assert_ok(cucore_memcpy_dtoh(dev, h, out, sizeof h, NULL));
    for (int i = 0; i < n; i++) assert_int_equal(h[i], i * i + 3 * i + 1);
    print_message("three-file link from %s: %d results match\n", cucore_code_type_name(t), n);
    /* Without c.cu the link fails and names the missing symbol. */
    cucore_linker *lk2 = NULL;
    assert_ok(cucore_linker_create(NULL, &lk2));
    assert_ok(cucore_linker_add_object(lk2, oa));
    assert_ok(cucore_linker_add_object(lk2, ob));
    cucore_object *bad = NULL;
    assert_int_not_equal(cucore_linker_complete(lk2, CUCORE_CODE_CUBIN, &bad), CUCORE_OK);
    const char *info = NULL, *err = NULL;
    assert_ok(cucore_linker_get_log(lk2, &info, &err));
    print_message("missing symbol: %s | %s\n", cucore_last_error(), err);
    assert_true(strstr(err, "f_c") || strstr(cucore_last_error(), "f_c"));
    cucore_linker_destroy(lk2);
    cucore_args_destroy(a);
    cucore_kernel_destroy(k);
    cucore_object_destroy(linked);
    cucore_linker_destroy(lk);
    cucore_object_destroy(oa);
    cucore_object_destroy(ob);
    cucore_object_destroy(oc);
    cucore_mem_free(dev, out);
  }
}

/* The kernel, its arguments, its output and an event that every launch attribute case uses. */
typedef struct attr_ctx {
  cucore_kernel *k;
  cucore_args *a;
  cucore_devptr out;
  cucore_event *ev;
} attr_ctx;

/* Accepted: access policy window, memory sync domain and map, carveout, scheduling hint.
 * Returns the attributes it exercised (4). */
static int attrs_accepted(const attr_ctx *x) {
  cucore_kernel *k = x->k;
  cucore_args *a = x->a;
  cucore_devptr out = x->out;
  cucore_launch_config c = config1d(16, 32, 0);
  cucore_launch_attr at = {.id = CUCORE_LAUNCH_ACCESS_POLICY_WINDOW};
  at.u.access_policy.base = out;
  at.u.access_policy.bytes = 64 * 4;
  at.u.access_policy.hit_ratio = 0.6f;
  at.u.access_policy.hit_property = 2;  /* persisting */
  at.u.access_policy.miss_property = 1; /* streaming */
  assert_ok(cucore_launch_config_set(&c, &at));
  cucore_launch_attr dm = {.id = CUCORE_LAUNCH_MEM_SYNC_DOMAIN_MAP};
  dm.u.domain_map.default_domain = 0;
  dm.u.domain_map.remote_domain = 1;
  assert_ok(cucore_launch_config_set(&c, &dm));
  cucore_launch_attr d = {.id = CUCORE_LAUNCH_MEM_SYNC_DOMAIN};
  d.u.value = 1;
  assert_ok(cucore_launch_config_set(&c, &d));
  cucore_launch_attr cv = {.id = CUCORE_LAUNCH_PREFERRED_SHARED_MEMORY_CARVEOUT};
  cv.u.value = 50;
  assert_ok(cucore_launch_config_set(&c, &cv));
  assert_ok(cucore_launch(k, &c, a));
  assert_ok(cucore_stream_synchronize(stream));
  /* A bad hit ratio is refused before the driver. */
  at.u.access_policy.hit_ratio = 1.5f;
  assert_ok(cucore_launch_config_set(&c, &at));
  assert_status(cucore_launch(k, &c, a), CUCORE_LAUNCH_CONFIG);
  assert_contains(cucore_last_error(), "hit ratio");
  return 4;
}

/* Completion event: it completes, and another stream can wait on it.
 * Returns the attributes it exercised (1). */
static int attr_completion_event(const attr_ctx *x) {
  cucore_kernel *k = x->k;
  cucore_args *a = x->a;
  cucore_event *ev = x->ev;
  cucore_launch_config c = config1d(16, 32, 0);
  cucore_launch_attr e = {.id = CUCORE_LAUNCH_COMPLETION_EVENT};
  e.u.event.event = ev;
  assert_ok(cucore_launch_config_set(&c, &e));
  assert_ok(cucore_launch(k, &c, a));
  cucore_stream *other = NULL;
  assert_ok(cucore_stream_create(dev, CUCORE_STREAM_NON_BLOCKING, 0, &other));
  assert_ok(cucore_stream_wait_event(other, ev));
  assert_ok(cucore_stream_synchronize(other));
  assert_ok(cucore_event_query(ev));
  assert_ok(cucore_stream_destroy(other));
  e.u.event.event = NULL;
  assert_ok(cucore_launch_config_set(&c, &e));
  assert_status(cucore_launch(k, &c, a), CUCORE_LAUNCH_CONFIG);
  return 1;
}

/* Programmatic event: triggered by the kernel, so it completes.
 * Returns the attributes it exercised (1). */
static int attr_programmatic_event(const attr_ctx *x) {
  cucore_kernel *k = x->k;
  cucore_args *a = x->a;
  cucore_event *ev = x->ev;
  cucore_launch_config c = config1d(16, 32, 0);
  cucore_launch_attr e = {.id = CUCORE_LAUNCH_PROGRAMMATIC_EVENT};
  e.u.event.event = ev;
  e.u.event.trigger_at_block_start = 0;
  assert_ok(cucore_launch_config_set(&c, &e));
  assert_ok(cucore_launch(k, &c, a));
  assert_ok(cucore_event_synchronize(ev));
  assert_ok(cucore_stream_synchronize(stream));
  return 1;
}

/* Clusters with a scheduling policy, and a preferred cluster dimension the kernel sees.
 * Returns the attributes it exercised (2). */
static int attrs_clusters(const attr_ctx *x) {
  cucore_kernel *k = x->k;
  cucore_args *a = x->a;
  cucore_devptr out = x->out;
  cucore_launch_config c = config1d(16, 32, 0);
  assert_ok(cucore_launch_config_cluster(&c, 2, 1, 1));
  cucore_launch_attr sp = {.id = CUCORE_LAUNCH_CLUSTER_SCHEDULING_POLICY};
  sp.u.value = 1; /* spread */
  assert_ok(cucore_launch_config_set(&c, &sp));
  assert_ok(cucore_launch(k, &c, a));
  assert_ok(cucore_stream_synchronize(stream));
  unsigned got[16];
  assert_ok(cucore_memcpy_dtoh(dev, got, out, sizeof got, NULL));
  for (int b = 0; b < 16; b++) assert_int_equal(got[b], 2u);
  cucore_launch_attr pc = {.id = CUCORE_LAUNCH_PREFERRED_CLUSTER_DIMENSION};
  pc.u.dim[0] = 4;
  assert_ok(cucore_launch_config_set(&c, &pc));
  cucore_status st = cucore_launch(k, &c, a);
  if (st == CUCORE_OK) {
    assert_ok(cucore_stream_synchronize(stream));
    assert_ok(cucore_memcpy_dtoh(dev, got, out, sizeof got, NULL));
    int preferred = 0;
    for (int b = 0; b < 16; b++) {
      assert_true(got[b] == 2u || got[b] == 4u);
      preferred += got[b] == 4u;
    }
    print_message("preferred cluster 4 (minimum 2): %d of 16 blocks ran in clusters of 4\n",
                  preferred);
  } else {
    print_message("preferred cluster dimension refused by this driver: %s\n", cucore_last_error());
    assert_int_equal(CUCORE_CODE(st), CUCORE_NOT_SUPPORTED);
  }
  return 2;
}

/* Synchronisation policy is a stream attribute: the driver either takes it or says no.
 * Returns the attributes it exercised (2). */
static int attrs_scheduling(const attr_ctx *x) {
  cucore_kernel *k = x->k;
  cucore_args *a = x->a;
  cucore_launch_config c = config1d(16, 32, 0);
  cucore_launch_attr sp = {.id = CUCORE_LAUNCH_SYNCHRONIZATION_POLICY};
  sp.u.value = 3; /* yield */
  assert_ok(cucore_launch_config_set(&c, &sp));
  cucore_status st = cucore_launch(k, &c, a);
  if (st != CUCORE_OK) {
    assert_contains(cucore_last_error(), "cuLaunchKernelEx");
    print_message("synchronization policy on a launch: %s\n", cucore_last_error());
  }
  assert_ok(cucore_stream_synchronize(stream));
  cucore_launch_attr nv = {.id = CUCORE_LAUNCH_NVLINK_UTIL_CENTRIC_SCHEDULING};
  nv.u.value = 1;
  c = config1d(16, 32, 0);
  assert_ok(cucore_launch_config_set(&c, &nv));
  st = cucore_launch(k, &c, a);
  if (st != CUCORE_OK) print_message("nvlink-centric scheduling: %s\n", cucore_last_error());
  assert_true(st == CUCORE_OK || cucore_status_source(st) == CUCORE_SOURCE_DRIVER);
  assert_ok(cucore_stream_synchronize(stream));
  return 2;
}

/* Graph-only and unknown attributes are refused.
 * Returns the attributes it exercised (1). */
static int attrs_refused(const attr_ctx *x) {
  cucore_kernel *k = x->k;
  cucore_args *a = x->a;
  cucore_launch_config c = config1d(16, 32, 0);
  cucore_launch_attr du = {.id = CUCORE_LAUNCH_DEVICE_UPDATABLE_KERNEL_NODE};
  du.u.value = 1;
  assert_ok(cucore_launch_config_set(&c, &du));
  assert_status(cucore_launch(k, &c, a), CUCORE_LAUNCH_CONFIG);
  assert_contains(cucore_last_error(), "graph");
  /* 15 is no attribute of CUDA 13.0: refused unless the driver is newer (then it is passed
   * through; gpu_embed tests that). */
  cucore_versions_info v;
  assert_ok(cucore_versions(&v));
  cucore_launch_attr bad = {.id = (cucore_launch_attr_id)15};
  if (v.driver.version <= v.toolkit_headers)
    assert_status(cucore_launch_config_set(&c, &bad), CUCORE_INVALID_ARGUMENT);
  return 1;
}

/* Every launch attribute: accepted where a stream launch takes it, its effect observed where
 * one is observable, refused with a reason where it does not apply. */
static void every_launch_attribute(void **state) {
  (void)state;
  cucore_device_props props;
  assert_ok(cucore_device_get_props(0, &props));
  const char *src = "extern \"C\" __global__ void ranks(unsigned *out) {\n"
                    "  unsigned n; asm volatile(\"mov.u32 %0, %%cluster_nctarank;\" : \"=r\"(n));\n"
                    "  if (threadIdx.x == 0) out[blockIdx.x] = n; }\n";
  cucore_object *obj = gpu_compile(src, CUCORE_CODE_CUBIN, NULL, NULL);
  cucore_kernel *k = gpu_kernel(obj, "ranks");
  cucore_devptr out;
  assert_ok(cucore_mem_alloc(dev, 64 * 4, &out));
  cucore_args *a = NULL;
  assert_ok(cucore_args_create(k, &a));
  assert_ok(CUCORE_ARGS(a, out));
  cucore_event *ev = NULL;
  assert_ok(cucore_event_create(dev, CUCORE_EVENT_DISABLE_TIMING, &ev));
  int tested = 0;
  attr_ctx x = {k, a, out, ev};

  tested += attrs_accepted(&x);
  tested += attr_completion_event(&x);
  if (props.arch >= 90) tested += attr_programmatic_event(&x);
  if (props.cluster_launch) tested += attrs_clusters(&x);
  tested += attrs_scheduling(&x);
  tested += attrs_refused(&x);
  print_message(
      "launch attributes exercised: %d (plus cooperative, priority, PDL, cluster elsewhere)\n",
      tested);
  cucore_event_destroy(ev);
  cucore_args_destroy(a);
  cucore_kernel_destroy(k);
  cucore_object_destroy(obj);
  cucore_mem_free(dev, out);
}

int main(void) {
  if (!cucore_test_have_gpu()) return CUCORE_TEST_SKIP;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(saxpy_runs_from_every_code_type),
      cmocka_unit_test(wrong_arguments_are_refused),
      cmocka_unit_test(large_dynamic_shared_memory_is_opted_in),
      cmocka_unit_test(execution_control_queries),
      cmocka_unit_test(templates_and_structs_by_value),
      cmocka_unit_test(cooperative_grid_sync_reduction),
      cmocka_unit_test(clusters),
      cmocka_unit_test(host_function_runs_in_stream_order),
      cmocka_unit_test(priority_and_programmatic_dependent_launch),
      cmocka_unit_test(three_file_link_runs),
      cmocka_unit_test(every_launch_attribute),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
