/* gpu_launch_checks.c -- the offline launch check and the GPU pre-flight refuse the same
 * launches in the same words (label gpu): each bad configuration is refused by
 * cucore_launch on the device and by cucore_kernel_check_launch_offline for the device's
 * arch, and the two messages are equal once "device N" is read as "sm_XX". Good
 * configurations pass both. */
#include "gpu_support.h"

#include <string.h>

static cucore_device *dev;
static cucore_stream *stream;
static int arch;

static int setup(void **state) {
  (void)state;
  cucore_device_props props;
  if (cucore_device_get_props(0, &props) != CUCORE_OK) return -1;
  arch = props.arch;
  if (cucore_device_open(0, &dev) != CUCORE_OK) return -1;
  return cucore_stream_create(dev, CUCORE_STREAM_NON_BLOCKING, 0, &stream) == CUCORE_OK ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  cucore_stream_destroy(stream);
  return cucore_device_close(dev) == CUCORE_OK ? 0 : -1;
}

static const char *src =
    "extern \"C\" __global__ void __launch_bounds__(128) bounded(float *x) { x[threadIdx.x] = 1; "
    "}\n"
    "extern \"C\" __global__ void __cluster_dims__(2, 1, 1) clustered(float *x) { x[0] = 1; }\n"
    "extern \"C\" __global__ void big_static(float *x) {\n"
    "  __shared__ float s[10240]; s[threadIdx.x] = x[0]; __syncthreads(); x[1] = s[5]; }\n";

/* "device 0" -> "sm_90" */
static void as_offline(const char *gpu, char *out, size_t n) {
  char dev_word[32], arch_word[32];
  snprintf(dev_word, sizeof dev_word, "device 0");
  snprintf(arch_word, sizeof arch_word, "sm_%d", arch);
  const char *at = strstr(gpu, dev_word);
  if (!at) {
    snprintf(out, n, "%s", gpu);
    return;
  }
  snprintf(out, n, "%.*s%s%s", (int)(at - gpu), gpu, arch_word, at + strlen(dev_word));
}

static void same_words(cucore_kernel *k, cucore_args *args, cucore_launch_config *c,
                       const char *what) {
  cucore_status gpu = cucore_launch(k, c, args);
  char gpu_msg[1024], want[1024];
  snprintf(gpu_msg, sizeof gpu_msg, "%s", cucore_last_error());
  cucore_status off = cucore_kernel_check_launch_offline(k, c, arch, 0);
  if (CUCORE_CODE(gpu) != CUCORE_LAUNCH_CONFIG || CUCORE_CODE(off) != CUCORE_LAUNCH_CONFIG)
    fail_msg("%s: the GPU said %s (%s), offline %s (%s)", what, cucore_status_name(gpu), gpu_msg,
             cucore_status_name(off), cucore_last_error());
  as_offline(gpu_msg, want, sizeof want);
  if (strcmp(want, cucore_last_error()) != 0)
    fail_msg("%s: the messages differ:\n  GPU:     %s\n  offline: %s", what, gpu_msg,
             cucore_last_error());
  print_message("%s: both say: %s\n", what, gpu_msg);
}

static cucore_launch_config config(unsigned grid, unsigned block, unsigned smem) {
  cucore_launch_config c;
  memset(&c, 0, sizeof c);
  c.grid[0] = grid;
  c.block[0] = block;
  c.shared_bytes = smem;
  c.stream = stream;
  return c;
}

static void gpu_and_offline_agree(void **state) {
  (void)state;
  cucore_object *obj = gpu_compile(src, CUCORE_CODE_CUBIN, NULL, NULL);
  cucore_devptr p = 0;
  assert_ok(cucore_mem_alloc(dev, 1 << 20, &p));
  const char *names[] = {"bounded", "clustered", "big_static"};
  cucore_kernel *k[3];
  cucore_args *a[3];
  for (int i = 0; i < 3; i++) {
    k[i] = gpu_kernel(obj, names[i]);
    assert_ok(cucore_args_create(k[i], &a[i]));
    assert_ok(CUCORE_ARGS(a[i], p));
  }
  cucore_launch_config c = config(4, 256, 0);
  same_words(k[0], a[0], &c, "block above __launch_bounds__");
  c = config(4, 32, 0);
  c.block[2] = 65;
  same_words(k[0], a[0], &c, "block z above the limit");
  c = config(0, 32, 0);
  same_words(k[0], a[0], &c, "empty grid");
  cucore_device_props props;
  assert_ok(cucore_device_get_props(0, &props));
  if (props.cluster_launch) {
    c = config(3, 32, 0);
    same_words(k[1], a[1], &c, "grid not a multiple of __cluster_dims__");
    c = config(4, 32, 0);
    assert_ok(cucore_launch_config_cluster(&c, 4, 1, 1));
    same_words(k[1], a[1], &c, "cluster unlike __cluster_dims__");
    c = config(24, 32, 0);
    assert_ok(cucore_launch_config_cluster(&c, 12, 1, 1));
    same_words(k[0], a[0], &c, "cluster of 12 without non-portable sizes");
  }
  int static_bytes = 0;
  assert_ok(cucore_kernel_get_attribute(k[2], dev, CUCORE_KATTR_SHARED_SIZE_BYTES, &static_bytes));
  c = config(1, 64, (unsigned)(props.shared_per_block_optin - static_bytes) + 1);
  same_words(k[2], a[2], &c, "shared memory above the opt-in maximum");
  /* What runs on the GPU passes offline too. */
  c = config(1, 64, (unsigned)(props.shared_per_block_optin - static_bytes));
  assert_ok(cucore_kernel_check_launch_offline(k[2], &c, arch, 0));
  assert_ok(cucore_launch(k[2], &c, a[2]));
  c = config(4, 128, 0);
  assert_ok(cucore_kernel_check_launch_offline(k[0], &c, arch, 0));
  assert_ok(cucore_launch(k[0], &c, a[0]));
  assert_ok(cucore_stream_synchronize(stream));
  for (int i = 0; i < 3; i++) {
    cucore_args_destroy(a[i]);
    cucore_kernel_destroy(k[i]);
  }
  cucore_mem_free(dev, p);
  cucore_object_destroy(obj);
}

int main(void) {
  if (!cucore_test_have_gpu()) return CUCORE_TEST_SKIP;
  const struct CMUnitTest tests[] = {cmocka_unit_test(gpu_and_offline_agree)};
  return cmocka_run_group_tests(tests, setup, teardown);
}
