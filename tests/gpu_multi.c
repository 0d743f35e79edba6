/* gpu_multi.c -- several GPUs in one process: one object, its kernel launched on every device
 * from one thread, alternating, each result checked; memory and events per device (label gpu;
 * skipped with fewer than two GPUs). */
#include "gpu_support.h"

#include <string.h>

#define MAX_DEV 8

static void one_kernel_on_every_device(void **state) {
  (void)state;
  int n = 0;
  assert_ok(cucore_device_get_count(&n));
  if (n > MAX_DEV) n = MAX_DEV;
  cucore_device *dev[MAX_DEV];
  cucore_stream *s[MAX_DEV];
  cucore_devptr buf[MAX_DEV];
  const int elems = 1 << 16;
  for (int d = 0; d < n; d++) {
    assert_ok(cucore_device_open(d, &dev[d]));
    assert_ok(cucore_stream_create(dev[d], CUCORE_STREAM_NON_BLOCKING, 0, &s[d]));
    assert_ok(cucore_mem_alloc(dev[d], elems * sizeof(int), &buf[d]));
  }
  /* One fatbin for every device's arch, one kernel handle used on all of them. */
  cucore_options *o = NULL;
  assert_ok(cucore_options_create(&o));
  for (int d = 0; d < n; d++) {
    cucore_device_props p;
    assert_ok(cucore_device_get_props(d, &p));
    char gen[32];
    snprintf(gen, sizeof gen, "sm_%d", p.arch);
    assert_ok(cucore_options_set_string(o, CUCORE_OPT_GENCODE, gen));
  }
  cucore_program *prog = NULL;
  assert_ok(cucore_program_create(
      CUCORE_CODE_CUDA_CPP,
      "extern \"C\" __global__ void tag(int *p, int v, int n) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] = v * 1000 + i % 1000; }\n",
      0, "multi.cu", o, &prog));
  cucore_object *obj = NULL;
  assert_ok(cucore_program_compile(prog, CUCORE_CODE_FATBIN, &obj));
  cucore_kernel *k = gpu_kernel(obj, "tag");
  cucore_args *a = NULL;
  assert_ok(cucore_args_create(k, &a));
  /* Alternate devices launch by launch: the thread's context follows each launch's stream. */
  for (int round = 0; round < 3; round++)
    for (int d = 0; d < n; d++) {
      assert_ok(CUCORE_ARGS(a, buf[d], d + 1 + round * 10, elems));
      cucore_launch_config c;
      memset(&c, 0, sizeof c);
      c.grid[0] = elems / 256;
      c.block[0] = 256;
      c.stream = s[d];
      assert_ok(cucore_launch(k, &c, a));
    }
  int *h = malloc(elems * sizeof(int));
  for (int d = 0; d < n; d++) {
    assert_ok(cucore_stream_synchronize(s[d]));
    assert_ok(cucore_memcpy_dtoh(dev[d], h, buf[d], elems * sizeof(int), NULL));
    for (int i = 0; i < elems; i++) assert_int_equal(h[i], (d + 1 + 20) * 1000 + i % 1000);
    int v = 0;
    assert_ok(cucore_kernel_get_attribute(k, dev[d], CUCORE_KATTR_NUM_REGS, &v));
    assert_true(v > 0);
  }
  print_message("one kernel launched on %d devices, alternating, 3 rounds: every result matches\n",
                n);
  /* A stream of one device with an event of another is refused. */
  cucore_event *ev = NULL;
  assert_ok(cucore_event_create(dev[1], 0, &ev));
  assert_status(cucore_event_record(ev, s[0]), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "device 1");
  cucore_event_destroy(ev);
  free(h);
  cucore_args_destroy(a);
  cucore_kernel_destroy(k);
  cucore_object_destroy(obj);
  cucore_program_destroy(prog);
  cucore_options_destroy(o);
  for (int d = 0; d < n; d++) {
    assert_ok(cucore_mem_free(dev[d], buf[d]));
    assert_ok(cucore_stream_destroy(s[d]));
    assert_ok(cucore_device_close(dev[d]));
  }
}

int main(void) {
  if (!cucore_test_have_gpu()) return CUCORE_TEST_SKIP;
  int n = 0;
  if (cucore_device_get_count(&n) != CUCORE_OK || n < 2) {
    printf("skipped: %d GPU here; this test needs two or more\n", n);
    return CUCORE_TEST_SKIP;
  }
  const struct CMUnitTest tests[] = {cmocka_unit_test(one_kernel_on_every_device)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
