/* gpu_occupancy.c -- the driver-backed occupancy queries, and the host model against the
 * driver over kernels x block sizes x dynamic shared memory sizes (label gpu). */
#include "gpu_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static cucore_device *dev;
static cucore_stream *stream;

static int setup(void **state) {
  (void)state;
  if (cucore_device_open(0, &dev) != CUCORE_OK) return -1;
  return cucore_stream_default(dev, &stream) == CUCORE_OK ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  return cucore_device_close(dev) == CUCORE_OK ? 0 : -1;
}

/* Kernels with different register, static shared memory and launch-bound footprints. */
static const char *sweep_src =
    "extern \"C\" __global__ void light(float *x) { x[threadIdx.x] += 1.0f; }\n"
    "extern \"C\" __global__ void heavy(const float *in, float *out, int n) {\n"
    "  float acc[48];\n"
    "  #pragma unroll\n"
    "  for (int k = 0; k < 48; k++) acc[k] = in[(threadIdx.x + k * 37) % n];\n"
    "  float s = 0;\n"
    "  #pragma unroll\n"
    "  for (int r = 0; r < 8; r++)\n"
    "    #pragma unroll\n"
    "    for (int k = 0; k < 48; k++) s = s * acc[(k + r) % 48] + acc[k];\n"
    "  out[blockIdx.x * blockDim.x + threadIdx.x] = s;\n"
    "}\n"
    "extern \"C\" __global__ void smem12k(float *x) {\n"
    "  __shared__ float buf[3072]; buf[threadIdx.x] = x[threadIdx.x]; __syncthreads();\n"
    "  x[threadIdx.x] = buf[(threadIdx.x + 1) % 3072]; }\n"
    "extern \"C\" __global__ void smem40k(float *x) {\n"
    "  __shared__ float buf[10240]; buf[threadIdx.x] = x[threadIdx.x]; __syncthreads();\n"
    "  x[threadIdx.x] = buf[(threadIdx.x + 7) % 10240]; }\n"
    "extern \"C\" __global__ void __launch_bounds__(256, 2) bounded(float *x) {\n"
    "  x[threadIdx.x] *= 2.0f; }\n"
    "extern \"C\" __global__ void dyn(float *x) {\n"
    "  extern __shared__ float d[]; d[threadIdx.x] = x[threadIdx.x]; __syncthreads();\n"
    "  x[threadIdx.x] = d[(threadIdx.x + 1) % blockDim.x]; }\n";

static const char *const sweep_kernels[] = {"light",   "heavy",   "smem12k",
                                            "smem40k", "bounded", "dyn"};
static const char *const reg_caps[] = {NULL, "--maxrregcount=32", "--maxrregcount=64",
                                       "--maxrregcount=128"};

static void model_equals_driver_everywhere(void **state) {
  (void)state;
  long cases = 0, mismatches = 0, best_cases = 0, best_mismatches = 0, avail_cases = 0,
       avail_mismatches = 0;
  for (size_t rc = 0; rc < sizeof reg_caps / sizeof *reg_caps; rc++) {
    const char *flags[] = {reg_caps[rc], NULL};
    cucore_object *obj = gpu_compile(sweep_src, CUCORE_CODE_CUBIN, NULL,
                                     reg_caps[rc] ? flags : NULL);
    for (size_t kk = 0; kk < sizeof sweep_kernels / sizeof *sweep_kernels; kk++) {
      cucore_kernel *k = gpu_kernel(obj, sweep_kernels[kk]);
      cucore_arch_limits lim;
      cucore_kernel_resources res;
      assert_ok(cucore_occupancy_inputs(k, dev, &lim, &res));
      /* Open the kernel to the device's full opt-in shared memory, as a launch would. */
      int optin_room = lim.shared_per_block_optin - res.static_shared_bytes;
      assert_ok(cucore_kernel_set_attribute(k, dev, CUCORE_KATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                            optin_room));
      const size_t smems[] = {0,
                              1024,
                              16384,
                              48 * 1024 - (size_t)res.static_shared_bytes,
                              64 * 1024,
                              100 * 1024,
                              (size_t)optin_room};
      for (int block = 32; block <= 1024; block += 32) {
        for (size_t si = 0; si < sizeof smems / sizeof *smems; si++) {
          size_t smem = smems[si];
          if (block > res.max_threads_per_block || (long long)smem > optin_room) continue;
          cucore_launch_config c;
          memset(&c, 0, sizeof c);
          c.block[0] = (unsigned)block;
          c.shared_bytes = (unsigned)smem;
          c.stream = stream;
          int driver = -1;
          assert_ok(cucore_occupancy_max_active_blocks(k, &c, 0, &driver));
          cucore_occupancy_result r;
          memset(&r, 0, sizeof r);
          cucore_status st = cucore_occupancy_model_blocks(&lim, &res, block, smem, 0, &r);
          int model = st == CUCORE_OK ? r.active_blocks_per_sm : 0;
          cases++;
          if (model != driver) {
            mismatches++;
            if (mismatches <= 20)
              print_message("MISMATCH %s%s%s block %d smem %zu: driver %d, model %d (regs %d, "
                            "static %d, limit %s)\n",
                            sweep_kernels[kk], reg_caps[rc] ? " " : "",
                            reg_caps[rc] ? reg_caps[rc] : "", block, smem, driver, model,
                            res.registers, res.static_shared_bytes,
                            cucore_occupancy_limit_name(r.limit));
          }
        }
      }
      /* Dynamic shared memory available for 1..4 blocks per SM. */
      for (int want = 1; want <= 4; want++) {
        for (int block = 64; block <= res.max_threads_per_block; block *= 2) {
          size_t drv = 0, mod = 0;
          cucore_status sd = cucore_occupancy_available_dynamic_shared(k, dev, want, block, &drv);
          cucore_status sm = cucore_occupancy_model_available_shared(&lim, &res, block, want, &mod);
          avail_cases++;
          if ((sd == CUCORE_OK) != (sm == CUCORE_OK) || (sd == CUCORE_OK && drv != mod)) {
            avail_mismatches++;
            print_message(
                "AVAILABLE MISMATCH %s %d blocks of %d: driver %zu (%s), model %zu (%s)\n",
                sweep_kernels[kk], want, block, drv, cucore_status_name(sd), mod,
                cucore_status_name(sm));
          }
        }
      }
      /* Best block size, fixed shared memory. */
      for (size_t smem = 0; smem <= 32768; smem += 16384) {
        int min_grid = 0, best = 0;
        assert_ok(
            cucore_occupancy_best_block_size(k, dev, smem, NULL, NULL, 0, 0, &min_grid, &best));
        cucore_occupancy_best mb;
        cucore_status st = cucore_occupancy_model_best_block(&lim, &res, smem, NULL, NULL, 0, 0,
                                                             &mb);
        best_cases++;
        if (st != CUCORE_OK || mb.block_size != best || mb.min_grid_size != min_grid) {
          best_mismatches++;
          print_message(
              "BEST MISMATCH %s smem %zu: driver block %d grid %d, model block %d grid %d\n",
              sweep_kernels[kk], smem, best, min_grid, mb.block_size, mb.min_grid_size);
        }
      }
      cucore_kernel_destroy(k);
    }
    cucore_object_destroy(obj);
  }
  print_message("occupancy model vs driver: %ld cases compared, %ld mismatches; best block size: "
                "%ld cases, %ld mismatches; available dynamic shared memory: %ld cases, %ld "
                "mismatches\n",
                cases, mismatches, best_cases, best_mismatches, avail_cases, avail_mismatches);
  assert_true(cases > 1000);
  assert_int_equal(mismatches, 0);
  assert_int_equal(best_mismatches, 0);
  assert_int_equal(avail_mismatches, 0);
}

static size_t per_thread_smem(int block, void *user) { return (size_t)block * *(int *)user; }

/* The same sweep over every kernel of the shared test-kernel files. */
static void model_equals_driver_on_the_test_kernels(void **state) {
  (void)state;
  cucore_device_props props;
  assert_ok(cucore_device_get_props(0, &props));
  const char *files[] = {"params.cu", "big_params.cu", "launch_attrs.cu", "cluster.cu"};
  long cases = 0, mismatches = 0;
  int kernels = 0;
  for (size_t f = 0; f < sizeof files / sizeof *files; f++) {
    if (strcmp(files[f], "cluster.cu") == 0 && props.arch < 90) continue;
    char *ptx = NULL;
    size_t ptx_size = 0;
    cucore_object *obj = nvcc_object(files[f], props.arch, &ptx, &ptx_size);
    free(ptx);
    if (!obj) skip();
    int count = 0;
    assert_ok(cucore_object_get_kernel_count(obj, &count));
    for (int i = 0; i < count; i++) {
      const char *name = NULL;
      assert_ok(cucore_object_get_kernel_name(obj, i, &name));
      cucore_kernel *k = gpu_kernel(obj, name);
      cucore_arch_limits lim;
      cucore_kernel_resources res;
      assert_ok(cucore_occupancy_inputs(k, dev, &lim, &res));
      int room = lim.shared_per_block_optin - res.static_shared_bytes;
      assert_ok(
          cucore_kernel_set_attribute(k, dev, CUCORE_KATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES, room));
      const size_t smems[] = {0, 4096, 48 * 1024, 80 * 1024, (size_t)room};
      for (int block = 32; block <= res.max_threads_per_block; block += 32)
        for (size_t si = 0; si < sizeof smems / sizeof *smems; si++) {
          if ((long long)smems[si] > room) continue;
          cucore_launch_config c;
          memset(&c, 0, sizeof c);
          c.block[0] = (unsigned)block;
          c.shared_bytes = (unsigned)smems[si];
          c.stream = stream;
          int driver = -1;
          assert_ok(cucore_occupancy_max_active_blocks(k, &c, 0, &driver));
          cucore_occupancy_result r;
          memset(&r, 0, sizeof r);
          int model = cucore_occupancy_model_blocks(&lim, &res, block, smems[si], 0, &r) ==
                              CUCORE_OK
                          ? r.active_blocks_per_sm
                          : 0;
          cases++;
          if (model != driver && ++mismatches <= 20)
            print_message("MISMATCH %s block %d smem %zu: driver %d, model %d\n", name, block,
                          smems[si], driver, model);
        }
      kernels++;
      cucore_kernel_destroy(k);
    }
    cucore_object_destroy(obj);
  }
  print_message("occupancy model vs driver on %d test kernels: %ld cases, %ld mismatches\n",
                kernels, cases, mismatches);
  assert_true(kernels >= 20);
  assert_int_equal(mismatches, 0);
}

static void queries_check_their_inputs_and_answer(void **state) {
  (void)state;
  cucore_object *obj = gpu_compile(sweep_src, CUCORE_CODE_CUBIN, NULL, NULL);
  cucore_kernel *k = gpu_kernel(obj, "bounded");
  cucore_launch_config c;
  memset(&c, 0, sizeof c);
  c.block[0] = 512; /* above __launch_bounds__(256) */
  c.stream = stream;
  int n = 0;
  assert_status(cucore_occupancy_max_active_blocks(k, &c, 0, &n), CUCORE_LAUNCH_CONFIG);
  assert_contains(cucore_last_error(), "1..256");
  c.block[0] = 0;
  assert_status(cucore_occupancy_max_active_blocks(k, &c, 0, &n), CUCORE_LAUNCH_CONFIG);
  c.block[0] = 128;
  assert_status(cucore_occupancy_max_active_blocks(k, &c, 0x10, &n), CUCORE_INVALID_ARGUMENT);
  assert_ok(
      cucore_occupancy_max_active_blocks(k, &c, CUCORE_OCCUPANCY_DISABLE_CACHING_OVERRIDE, &n));
  assert_true(n >= 2);
  cucore_kernel *kd = gpu_kernel(obj, "dyn");
  int bytes_per_thread = 96, min_grid = 0, block = 0;
  assert_ok(cucore_occupancy_best_block_size(kd, dev, 0, per_thread_smem, &bytes_per_thread, 0, 0,
                                             &min_grid, &block));
  print_message("best block for 96 B/thread of dynamic shared memory: %d (min grid %d)\n", block,
                min_grid);
  assert_true(block > 0 && block <= 1024 && min_grid > 0);
  size_t avail = 0;
  assert_ok(cucore_occupancy_available_dynamic_shared(kd, dev, 2, 256, &avail));
  cucore_arch_limits lim;
  cucore_kernel_resources res;
  assert_ok(cucore_occupancy_inputs(kd, dev, &lim, &res));
  size_t model_avail = 0;
  assert_ok(cucore_occupancy_model_available_shared(&lim, &res, 256, 2, &model_avail));
  print_message("available dynamic shared memory at 2 x 256 threads: driver %zu, model %zu\n",
                avail, model_avail);
  assert_true(avail > 0);
  assert_int_equal(avail, model_avail);
  cucore_kernel_destroy(k);
  cucore_kernel_destroy(kd);
  cucore_object_destroy(obj);
}

static void cluster_queries_return_the_drivers_values(void **state) {
  (void)state;
  cucore_device_props props;
  assert_ok(cucore_device_get_props(0, &props));
  if (!props.cluster_launch) skip();
  cucore_object *obj =
      gpu_compile("extern \"C\" __global__ void cl(float *x) { x[blockIdx.x] = 1; }\n"
                  "extern \"C\" __global__ void __cluster_dims__(2,1,1) fixed(float *x) { "
                  "x[blockIdx.x] = 1; }\n",
                  CUCORE_CODE_CUBIN, NULL, NULL);
  cucore_kernel *k = gpu_kernel(obj, "cl");
  cucore_launch_config c;
  memset(&c, 0, sizeof c);
  c.grid[0] = 64;
  c.block[0] = 128;
  c.stream = stream;
  int size = 0, clusters = 0;
  assert_ok(cucore_occupancy_max_cluster_size(k, &c, &size));
  assert_status(cucore_occupancy_max_active_clusters(k, &c, &clusters), CUCORE_LAUNCH_CONFIG);
  assert_contains(cucore_last_error(), "CLUSTER_DIMENSION");
  assert_ok(cucore_launch_config_cluster(&c, 4, 1, 1));
  assert_ok(cucore_occupancy_max_active_clusters(k, &c, &clusters));
  print_message("max potential cluster size %d; clusters of 4 x 128 threads co-resident: %d\n",
                size, clusters);
  assert_true(size >= 8);
  /* Clusters of 4 blocks: at most (SMs x blocks per SM) / 4 of them. */
  int per_sm = 0;
  assert_ok(cucore_occupancy_max_active_blocks(k, &c, 0, &per_sm));
  assert_true(clusters > 0 && clusters <= props.sm_count * per_sm / 4);
  cucore_kernel *kf = gpu_kernel(obj, "fixed");
  cucore_launch_config cf;
  memset(&cf, 0, sizeof cf);
  cf.grid[0] = 64;
  cf.block[0] = 128;
  cf.stream = stream;
  assert_ok(cucore_occupancy_max_active_clusters(kf, &cf, &clusters));
  assert_true(clusters > 0);
  int est = 0;
  cucore_arch_limits lim;
  cucore_kernel_resources res;
  assert_ok(cucore_occupancy_inputs(k, dev, &lim, &res));
  assert_status(cucore_occupancy_model_clusters(&lim, &res, 128, 4, 0, &est), CUCORE_NOT_SUPPORTED);
  cucore_kernel_destroy(k);
  cucore_kernel_destroy(kf);
  cucore_object_destroy(obj);
}

int main(void) {
  if (!cucore_test_have_gpu()) return CUCORE_TEST_SKIP;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(model_equals_driver_everywhere),
      cmocka_unit_test(model_equals_driver_on_the_test_kernels),
      cmocka_unit_test(queries_check_their_inputs_and_answer),
      cmocka_unit_test(cluster_queries_return_the_drivers_values),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
