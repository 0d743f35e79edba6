/* gpu_device.c -- devices, streams, events and memory on a real GPU (label gpu): every device
 * attribute against the driver's own answer, and streams waiting on streams (on one device,
 * and across two where there are two). */
#include "gpu_support.h"
#include "loader/loader.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static cucore_device *dev;

static int setup(void **state) {
  (void)state;
  return cucore_device_open(0, &dev) == CUCORE_OK ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  return cucore_device_close(dev) == CUCORE_OK ? 0 : -1;
}

/* nvidia-smi is an independent witness of the device's identity. */
static void properties_match_nvidia_smi(void **state) {
  (void)state;
  int n = 0;
  assert_ok(cucore_device_get_count(&n));
  char *out = NULL;
  int rc = cucore_test_run("nvidia-smi --query-gpu=name,memory.total,uuid,pci.bus_id,compute_cap "
                           "--format=csv,noheader,nounits",
                           &out);
  if (rc != 0) {
    free(out);
    print_message("nvidia-smi not available; identity not cross-checked\n");
    skip();
  }
  char *line = out;
  for (int i = 0; i < n && line && *line; i++) {
    char *next = strchr(line, '\n');
    if (next) *next++ = '\0';
    char name[256], uuid[64], bus[64], cc[16];
    long mem_mib = 0;
    /* "NVIDIA H100 80GB HBM3, 81559, GPU-xxxx, 00000000:19:00.0, 9.0" */
    char *f[5];
    int nf = 0;
    for (char *tok = strtok(line, ","); tok && nf < 5; tok = strtok(NULL, ",")) {
      while (isspace((unsigned char)*tok)) tok++;
      f[nf++] = tok;
    }
    assert_int_equal(nf, 5);
    snprintf(name, sizeof name, "%s", f[0]);
    mem_mib = strtol(f[1], NULL, 10);
    snprintf(uuid, sizeof uuid, "%s", f[2]);
    snprintf(bus, sizeof bus, "%s", f[3]);
    snprintf(cc, sizeof cc, "%s", f[4]);

    cucore_device_props p;
    assert_ok(cucore_device_get_props(i, &p));
    assert_string_equal(p.name, name);
    char ours[64];
    snprintf(ours, sizeof ours, "GPU-%s", p.uuid);
    assert_string_equal(ours, uuid);
    long our_mib = (long)(p.total_memory / (1024 * 1024));
    /* nvidia-smi counts memory the driver reserves for itself; cuDeviceTotalMem does not. */
    print_message("memory: cuDeviceTotalMem %ld MiB, nvidia-smi %ld MiB\n", our_mib, mem_mib);
    assert_true(our_mib <= mem_mib && our_mib * 100 >= mem_mib * 95);
    char our_cc[16];
    snprintf(our_cc, sizeof our_cc, "%d.%d", p.cc_major, p.cc_minor);
    assert_string_equal(our_cc, cc);
    /* nvidia-smi prints an 8-digit PCI domain, the driver 4 digits: compare the tail. */
    size_t lb = strlen(bus), lo = strlen(p.pci_bus_id);
    assert_true(lo >= 7 && lb >= lo);
    assert_int_equal(strcasecmp(bus + lb - lo + 4, p.pci_bus_id + 4), 0);
    print_message("device %d: %s, %ld MiB, cc %s, %d SMs -- matches nvidia-smi\n", i, p.name,
                  our_mib, our_cc, p.sm_count);
    /* Sanity of limits the rest of cucore relies on. */
    assert_true(p.sm_count > 0);
    assert_int_equal(p.warp_size, 32);
    assert_true(p.max_threads_per_block >= 1024);
    assert_true(p.shared_per_block_optin >= p.shared_per_block);
    assert_true(p.regs_per_sm >= 65536);
    line = next;
  }
  free(out);
}

static void invalid_ordinal_names_the_range(void **state) {
  (void)state;
  int n = 0;
  assert_ok(cucore_device_get_count(&n));
  cucore_device *d = (cucore_device *)0x1;
  assert_status(cucore_device_open(n, &d), CUCORE_INVALID_DEVICE);
  assert_null(d);
  char want[64];
  snprintf(want, sizeof want, "device %d does not exist", n);
  assert_contains(cucore_last_error(), want);
  cucore_device_props p;
  assert_status(cucore_device_get_props(-1, &p), CUCORE_INVALID_DEVICE);
}

static void host_device_host_round_trip(void **state) {
  (void)state;
  const size_t count = 16u << 20; /* 16 Mi words = 64 MiB */
  uint32_t *src = malloc(count * 4), *dst = malloc(count * 4);
  assert_non_null(src);
  assert_non_null(dst);
  for (size_t i = 0; i < count; i++) src[i] = (uint32_t)(i * 2654435761u);
  cucore_devptr a = 0, b = 0;
  assert_ok(cucore_mem_alloc(dev, count * 4, &a));
  assert_ok(cucore_mem_alloc(dev, count * 4, &b));
  assert_ok(cucore_memcpy_htod(dev, a, src, count * 4, NULL));
  assert_ok(cucore_memcpy_dtod(dev, b, a, count * 4, NULL));
  memset(dst, 0, count * 4);
  assert_ok(cucore_memcpy_dtoh(dev, dst, b, count * 4, NULL));
  assert_memory_equal(src, dst, count * 4);
  /* memset_d32 then read back. */
  assert_ok(cucore_memset_d32(dev, a, 0xdeadbeefu, count, NULL));
  assert_ok(cucore_memcpy_dtoh(dev, dst, a, count * 4, NULL));
  for (size_t i = 0; i < count; i += 4099) assert_int_equal(dst[i], 0xdeadbeefu);
  assert_ok(cucore_memset_d8(dev, a, 0x5a, 64, NULL));
  assert_ok(cucore_memcpy_dtoh(dev, dst, a, 64, NULL));
  assert_int_equal(dst[3], 0x5a5a5a5au);
  assert_status(cucore_memset_d32(dev, a + 2, 0, 4, NULL), CUCORE_ARG_ALIGNMENT);
  assert_ok(cucore_mem_free(dev, a));
  assert_ok(cucore_mem_free(dev, b));
  assert_ok(cucore_mem_free(dev, 0));
  free(src);
  free(dst);
}

static void async_copies_through_pinned_memory_and_a_stream(void **state) {
  (void)state;
  const size_t bytes = 8u << 20;
  unsigned char *h1 = NULL, *h2 = NULL;
  assert_ok(cucore_host_alloc(dev, bytes, (void **)&h1));
  assert_ok(cucore_host_alloc(dev, bytes, (void **)&h2));
  for (size_t i = 0; i < bytes; i++) h1[i] = (unsigned char)(i * 31 + 7);
  cucore_stream *s = NULL;
  assert_ok(cucore_stream_create(dev, CUCORE_STREAM_NON_BLOCKING, 0, &s));
  cucore_devptr d = 0;
  assert_ok(cucore_mem_alloc(dev, bytes, &d));
  assert_ok(cucore_memcpy_htod(dev, d, h1, bytes, s));
  assert_ok(cucore_memcpy_dtoh(dev, h2, d, bytes, s));
  assert_ok(cucore_stream_synchronize(s));
  assert_ok(cucore_stream_query(s));
  assert_memory_equal(h1, h2, bytes);
  assert_ok(cucore_mem_free(dev, d));
  assert_ok(cucore_stream_destroy(s));
  assert_ok(cucore_host_free(dev, h1));
  assert_ok(cucore_host_free(dev, h2));
}

static void events_time_a_copy(void **state) {
  (void)state;
  const size_t bytes = 256u << 20;
  cucore_devptr a = 0, b = 0;
  assert_ok(cucore_mem_alloc(dev, bytes, &a));
  assert_ok(cucore_mem_alloc(dev, bytes, &b));
  cucore_stream *s = NULL;
  assert_ok(cucore_stream_create(dev, 0, 0, &s));
  cucore_event *e0 = NULL, *e1 = NULL, *e2 = NULL;
  assert_ok(cucore_event_create(dev, 0, &e0));
  assert_ok(cucore_event_create(dev, CUCORE_EVENT_BLOCKING_SYNC, &e1));
  assert_ok(cucore_event_create(dev, 0, &e2));
  assert_ok(cucore_memset_d8(dev, a, 1, bytes, s)); /* warm up */
  assert_ok(cucore_event_record(e0, s));
  assert_ok(cucore_memcpy_dtod(dev, b, a, bytes, s));
  assert_ok(cucore_event_record(e1, s));
  /* Four copies must take longer than one: events measure the stream's work. */
  for (int i = 0; i < 4; i++) assert_ok(cucore_memcpy_dtod(dev, b, a, bytes, s));
  assert_ok(cucore_event_record(e2, s));
  assert_ok(cucore_event_synchronize(e2));
  assert_ok(cucore_event_query(e1));
  float one = 0, four = 0;
  assert_ok(cucore_event_elapsed_ms(e0, e1, &one));
  assert_ok(cucore_event_elapsed_ms(e1, e2, &four));
  double gbps = 2.0 * (double)bytes / (one * 1e-3) / 1e9;
  print_message("256 MiB device-to-device copy: %.3f ms (%.0f GB/s read+write); x4: %.3f ms\n", one,
                gbps, four);
  assert_true(one > 0.0f);
  assert_true(four > 2.0f * one);
  assert_true(gbps > 10.0 && gbps < 20000.0);
  /* An event without timing cannot be timed, and says so. */
  cucore_event *nt = NULL;
  assert_ok(cucore_event_create(dev, CUCORE_EVENT_DISABLE_TIMING, &nt));
  assert_ok(cucore_event_record(nt, s));
  assert_status(cucore_event_elapsed_ms(e0, nt, &one), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "DISABLE_TIMING");
  assert_ok(cucore_stream_synchronize(s));
  assert_ok(cucore_event_destroy(nt));
  assert_ok(cucore_event_destroy(e0));
  assert_ok(cucore_event_destroy(e1));
  assert_ok(cucore_event_destroy(e2));
  assert_ok(cucore_stream_destroy(s));
  assert_ok(cucore_mem_free(dev, a));
  assert_ok(cucore_mem_free(dev, b));
}

static void stream_priorities(void **state) {
  (void)state;
  int least = 0, greatest = 0;
  assert_ok(cucore_device_get_stream_priorities(dev, &least, &greatest));
  assert_true(greatest <= least);
  cucore_stream *s = NULL;
  assert_ok(cucore_stream_create(dev, 0, greatest, &s));
  int got = 99;
  assert_ok(cucore_stream_get_priority(s, &got));
  assert_int_equal(got, greatest);
  assert_ok(cucore_stream_destroy(s));
  s = (cucore_stream *)0x1;
  assert_status(cucore_stream_create(dev, 0, greatest - 1, &s), CUCORE_INVALID_ARGUMENT);
  assert_null(s);
  assert_contains(cucore_last_error(), "outside");
  assert_status(cucore_stream_create(dev, 0x80, 0, &s), CUCORE_INVALID_ARGUMENT);
  cucore_stream *def = NULL;
  assert_ok(cucore_stream_default(dev, &def));
  assert_ok(cucore_stream_synchronize(def));
  assert_ok(cucore_stream_destroy(def)); /* owned by the device: a no-op */
}

static void out_of_memory_is_reported_with_sizes(void **state) {
  (void)state;
  size_t free_b = 0, total_b = 0;
  assert_ok(cucore_device_get_mem_info(dev, &free_b, &total_b));
  assert_true(free_b <= total_b && total_b > 0);
  cucore_devptr p = 7;
  assert_status(cucore_mem_alloc(dev, total_b * 2, &p), CUCORE_DEVICE_OUT_OF_MEMORY);
  assert_int_equal(p, 0);
  assert_contains(cucore_last_error(), "cuMemAlloc");
  assert_contains(cucore_last_error(), "free of");
  assert_int_equal(cucore_status_source(cucore_last_status()), CUCORE_SOURCE_DRIVER);
  /* The device is still usable afterwards. */
  assert_ok(cucore_mem_alloc(dev, 4096, &p));
  assert_ok(cucore_mem_free(dev, p));
  assert_status(cucore_mem_alloc(dev, 0, &p), CUCORE_INVALID_ARGUMENT);
  assert_ok(cucore_device_synchronize(dev));
}

/* Every attribute of cucore's table, on every device, against cuDeviceGetAttribute called
 * directly through the loaded driver: the same value, or a refusal where the driver refuses
 * (DRIVER_TOO_OLD for an id newer than the driver). */
static void every_attribute_matches_the_driver(void **state) {
  (void)state;
  int n = 0, read = 0, refused = 0;
  assert_ok(cucore_device_get_count(&n));
  for (int d = 0; d < n; d++) {
    CUdevice cu;
    assert_int_equal(DRV(cuDeviceGet)(&cu, d), CUDA_SUCCESS);
    for (int id = CUCORE_DEVICE_ATTRIBUTE_FIRST; id <= CUCORE_DEVICE_ATTRIBUTE_LAST; id++) {
      cucore_device_attribute_info info;
      assert_ok(cucore_device_attribute_get_info(id, &info));
      int want = -1, got = -2;
      CUresult r = DRV(cuDeviceGetAttribute)(&want, (CUdevice_attribute)id, cu);
      cucore_status st = cucore_device_get_attribute(d, id, &got);
      if (r == CUDA_SUCCESS) {
        if (st != CUCORE_OK)
          fail_msg("device %d, %s: the driver answers %d, cucore says %s", d, info.name, want,
                   cucore_last_error());
        if (got != want) fail_msg("device %d, %s: %d, the driver %d", d, info.name, got, want);
        read++;
      } else {
        if (st == CUCORE_OK) fail_msg("device %d, %s: the driver refuses (%d)", d, info.name, r);
        print_message("device %d: %s refused: %s\n", d, info.name, cucore_last_error());
        refused++;
      }
    }
    cucore_device_props p;
    assert_ok(cucore_device_get_props(d, &p));
    int v = 0;
    assert_ok(cucore_device_get_attribute(d, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &v));
    assert_int_equal(v, p.sm_count);
  }
  print_message("%d attributes read as the driver answers them, %d refused as it refuses them "
                "(%d device%s)\n",
                read, refused, n, n == 1 ? "" : "s");
}

static const char wait_src[] =
    "extern \"C\" __global__ void slow_set(int *p, long long cycles, int v) {\n"
    "  long long t0 = clock64(); while (clock64() - t0 < cycles) {}\n"
    "  __threadfence_system(); *(volatile int *)p = v; }\n"
    "extern \"C\" __global__ void copy_first(int *p) {\n"
    "  p[1] = *(volatile int *)p; __threadfence_system(); }\n";

/* The kernels for the arch of each of the first `n` devices (one fatbin when several). */
static cucore_object *wait_object(int n) {
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
  assert_ok(cucore_program_create(CUCORE_CODE_CUDA_CPP, wait_src, 0, "wait.cu", o, &prog));
  cucore_object *obj = NULL;
  assert_ok(cucore_program_compile(prog, n > 1 ? CUCORE_CODE_FATBIN : CUCORE_CODE_CUBIN, &obj));
  cucore_program_destroy(prog);
  cucore_options_destroy(o);
  return obj;
}

/* On `slow`, a kernel spins ~50 ms then writes 42 into p[0]; `waiter` waits for `slow`'s work,
 * then copies p[0] to p[1]: 42 there shows the order held. */
static void slow_then_copy(cucore_object *obj, cucore_stream *slow, cucore_stream *waiter,
                           cucore_devptr p) {
  cucore_kernel *ks = gpu_kernel(obj, "slow_set"), *kc = gpu_kernel(obj, "copy_first");
  cucore_args *as = NULL, *ac = NULL;
  assert_ok(cucore_args_create(ks, &as));
  assert_ok(cucore_args_create(kc, &ac));
  assert_ok(CUCORE_ARGS(as, p, (long long)100000000, 42));
  assert_ok(CUCORE_ARGS(ac, p));
  cucore_launch_config c;
  memset(&c, 0, sizeof c);
  c.grid[0] = c.block[0] = 1;
  c.stream = slow;
  assert_ok(cucore_launch(ks, &c, as));
  assert_ok(cucore_stream_wait_stream(waiter, slow));
  c.stream = waiter;
  assert_ok(cucore_launch(kc, &c, ac));
  assert_ok(cucore_stream_synchronize(waiter));
  cucore_args_destroy(as);
  cucore_args_destroy(ac);
  cucore_kernel_destroy(ks);
  cucore_kernel_destroy(kc);
}

static void stream_waits_on_stream(void **state) {
  (void)state;
  int n = 0;
  assert_ok(cucore_device_get_count(&n));
  cucore_object *obj = wait_object(n >= 2 ? 2 : 1);
  cucore_stream *a = NULL, *b = NULL;
  assert_ok(cucore_stream_create(dev, CUCORE_STREAM_NON_BLOCKING, 0, &a));
  assert_ok(cucore_stream_create(dev, CUCORE_STREAM_NON_BLOCKING, 0, &b));
  cucore_devptr p = 0;
  assert_ok(cucore_mem_alloc(dev, 2 * sizeof(int), &p));
  assert_ok(cucore_memset_d32(dev, p, 0, 2, NULL));
  slow_then_copy(obj, a, b, p);
  int h[2] = {0, 0};
  assert_ok(cucore_memcpy_dtoh(dev, h, p, sizeof h, NULL));
  assert_int_equal(h[0], 42);
  assert_int_equal(h[1], 42);
  assert_ok(cucore_mem_free(dev, p));
  if (n >= 2) { /* device 1's stream waited on by device 0's: pinned memory both see */
    cucore_device *d1 = NULL;
    cucore_stream *c = NULL;
    int *pin = NULL;
    assert_ok(cucore_device_open(1, &d1));
    assert_ok(cucore_stream_create(d1, CUCORE_STREAM_NON_BLOCKING, 0, &c));
    assert_ok(cucore_host_alloc(dev, 2 * sizeof(int), (void **)&pin));
    pin[0] = pin[1] = 0;
    slow_then_copy(obj, c, a, (cucore_devptr)(uintptr_t)pin);
    assert_int_equal(pin[1], 42);
    assert_ok(cucore_host_free(dev, pin));
    assert_ok(cucore_stream_destroy(c));
    assert_ok(cucore_device_close(d1));
    print_message("a stream of device 0 waited on a stream of device 1\n");
  } else {
    print_message("one GPU: the wait across two devices is not tried\n");
  }
  assert_ok(cucore_stream_destroy(a));
  assert_ok(cucore_stream_destroy(b));
  cucore_object_destroy(obj);
}

/* In a capture (global mode, the strictest): a fork onto a helper stream and the join back,
 * each through cucore_stream_wait_stream; the graph, launched, runs the two kernels in order. */
static void stream_waits_on_stream_in_a_capture(void **state) {
  (void)state;
  cucore_object *obj = wait_object(1);
  cucore_kernel *ks = gpu_kernel(obj, "slow_set"), *kc = gpu_kernel(obj, "copy_first");
  cucore_args *as = NULL, *ac = NULL;
  assert_ok(cucore_args_create(ks, &as));
  assert_ok(cucore_args_create(kc, &ac));
  cucore_stream *a = NULL, *b = NULL, *run = NULL;
  assert_ok(cucore_stream_create(dev, CUCORE_STREAM_NON_BLOCKING, 0, &a));
  assert_ok(cucore_stream_create(dev, CUCORE_STREAM_NON_BLOCKING, 0, &b));
  assert_ok(cucore_stream_create(dev, CUCORE_STREAM_NON_BLOCKING, 0, &run));
  cucore_devptr p = 0;
  assert_ok(cucore_mem_alloc(dev, 2 * sizeof(int), &p));
  assert_ok(cucore_memset_d32(dev, p, 0, 2, NULL));
  assert_ok(CUCORE_ARGS(as, p, (long long)20000000, 7));
  assert_ok(CUCORE_ARGS(ac, p));
  cucore_launch_config c;
  memset(&c, 0, sizeof c);
  c.grid[0] = c.block[0] = 1;
  assert_ok(cucore_stream_begin_capture(a, CUCORE_CAPTURE_GLOBAL));
  c.stream = a;
  assert_ok(cucore_launch(ks, &c, as));
  assert_ok(cucore_stream_wait_stream(b, a)); /* fork */
  c.stream = b;
  assert_ok(cucore_launch(kc, &c, ac));
  assert_ok(cucore_stream_wait_stream(a, b)); /* join */
  cucore_graph *g = NULL;
  cucore_graph_exec *e = NULL;
  assert_ok(cucore_stream_end_capture(a, &g));
  assert_ok(cucore_graph_instantiate(g, 0, NULL, &e));
  assert_ok(cucore_graph_launch(e, run));
  assert_ok(cucore_stream_synchronize(run));
  int h[2] = {0, 0};
  assert_ok(cucore_memcpy_dtoh(dev, h, p, sizeof h, NULL));
  assert_int_equal(h[0], 7);
  assert_int_equal(h[1], 7);
  assert_ok(cucore_graph_exec_destroy(e));
  assert_ok(cucore_graph_destroy(g));
  assert_ok(cucore_mem_free(dev, p));
  assert_ok(cucore_stream_destroy(a));
  assert_ok(cucore_stream_destroy(b));
  assert_ok(cucore_stream_destroy(run));
  cucore_args_destroy(as);
  cucore_args_destroy(ac);
  cucore_kernel_destroy(ks);
  cucore_kernel_destroy(kc);
  cucore_object_destroy(obj);
}

int main(void) {
  if (!cucore_test_have_gpu()) return CUCORE_TEST_SKIP;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(properties_match_nvidia_smi),
      cmocka_unit_test(invalid_ordinal_names_the_range),
      cmocka_unit_test(host_device_host_round_trip),
      cmocka_unit_test(async_copies_through_pinned_memory_and_a_stream),
      cmocka_unit_test(events_time_a_copy),
      cmocka_unit_test(stream_priorities),
      cmocka_unit_test(out_of_memory_is_reported_with_sizes),
      cmocka_unit_test(every_attribute_matches_the_driver),
      cmocka_unit_test(stream_waits_on_stream),
      cmocka_unit_test(stream_waits_on_stream_in_a_capture),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
