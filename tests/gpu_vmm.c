/* gpu_vmm.c -- virtual memory on the GPU (label gpu).
 *
 * A buffer of 1 GiB in a 4 GiB reservation grows to 4 GiB: same address, every word of the old
 * part intact (read back whole: the memset's value, and the pattern written at its start,
 * middle and end), the record grown (copies to the new end pass, one byte past it is refused).
 * Growing past the reservation (a range reserved right after it) is tried too: in place, or
 * refused saying so. Wrong access flags are refused with a message. Physical memory exported
 * as a file descriptor is imported by a child process (fork + exec: a fresh process), which
 * reads what the parent wrote. With two GPUs, memory of device 0 mapped for both is written by a
 * kernel on device 1 (strict pointer checks on) and read back on device 0, then made read-only
 * for device 1, which still reads it. */
#include "gpu_child.h"
#include "gpu_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define GIB ((size_t)1 << 30)
#define PROBE 65536

static cucore_device *dev;

static void pattern(uint32_t *b, size_t n, uint32_t seed) {
  for (size_t i = 0; i < n; i++) b[i] = (uint32_t)(i * 2654435761u) ^ seed;
}

/* Writes (`write` 1) or checks the pattern at the start, middle and end of [base, +bytes). */
static void probe(cucore_devptr base, size_t bytes, int write) {
  static uint32_t want[PROBE / 4], got[PROBE / 4];
  size_t at[3] = {0, bytes / 2, bytes - PROBE};
  for (int i = 0; i < 3; i++) {
    pattern(want, PROBE / 4, (uint32_t)i * 77 + 1);
    if (write) {
      assert_ok(cucore_memcpy_htod(dev, base + at[i], want, PROBE, NULL));
      continue;
    }
    assert_ok(cucore_memcpy_dtoh(dev, got, base + at[i], PROBE, NULL));
    for (size_t j = 0; j < PROBE / 4; j++)
      if (got[j] != want[j])
        fail_msg("offset %zu + %zu: read 0x%08x, wrote 0x%08x", at[i], j * 4, got[j], want[j]);
  }
}

/* Reads the whole of [base, +bytes) back to the host and checks every word: the pattern of
 * probe() in its three windows, 0xdeadbeef (the memset) everywhere else. */
static void check_every_word(cucore_devptr base, size_t bytes) {
  static uint32_t want[3][PROBE / 4];
  size_t at[3] = {0, bytes / 2, bytes - PROBE};
  for (int k = 0; k < 3; k++) pattern(want[k], PROBE / 4, (uint32_t)k * 77 + 1);
  uint32_t *h = malloc(bytes);
  assert_non_null(h);
  assert_ok(cucore_memcpy_dtoh(dev, h, base, bytes, NULL));
  size_t bad = 0, first = 0;
  for (size_t w = 0; w < bytes / 4; w++) {
    uint32_t e = 0xdeadbeefu;
    for (int k = 0; k < 3; k++)
      if (w * 4 >= at[k] && w * 4 - at[k] < PROBE) e = want[k][(w * 4 - at[k]) / 4];
    if (h[w] != e && bad++ == 0) first = w;
  }
  uint32_t got = bad ? h[first] : 0;
  free(h);
  if (bad)
    fail_msg("%zu of %zu words changed; the first at offset %zu reads 0x%08x", bad, bytes / 4,
             first * 4, got);
  print_message("all %zu words of the old part intact\n", bytes / 4);
}

static void grows_1_to_4_gib_in_place(void **state) {
  (void)state;
  size_t min = 0, rec = 0;
  assert_ok(cucore_vmm_get_granularity(dev, 0, &min, &rec));
  print_message("granularity: minimum %zu, recommended %zu\n", min, rec);
  cucore_vmm_buffer *b = NULL;
  cucore_devptr base = 0, after = 0;
  size_t bytes = 0;
  assert_ok(cucore_vmm_buffer_create(dev, GIB, 4 * GIB, &b));
  assert_ok(cucore_vmm_buffer_get_address(b, &base, &bytes));
  assert_ok(cucore_memset_d32(dev, base, 0xdeadbeef, GIB / 4, NULL));
  probe(base, GIB, 1);
  assert_ok(cucore_vmm_buffer_grow(b, 4 * GIB));
  assert_ok(cucore_vmm_buffer_get_address(b, &after, &bytes));
  assert_int_equal(after, base);
  assert_int_equal(bytes, 4 * GIB);
  probe(base, GIB, 0);
  check_every_word(base, GIB);
  uint32_t v = 0;
  assert_ok(cucore_memcpy_dtoh(dev, &v, base + GIB - 4 - PROBE, 4, NULL)); /* memset survives */
  assert_int_equal(v, 0xdeadbeef);
  assert_ok(cucore_memset_d32(dev, base + GIB, 0x01020304, 3 * GIB / 4, NULL)); /* new part */
  assert_ok(cucore_memcpy_dtoh(dev, &v, base + 4 * GIB - 4, 4, NULL));
  assert_int_equal(v, 0x01020304);
  probe(base, GIB, 0);
  /* Copies past the mapped end are refused by the bounds check, not faulted on. */
  assert_status(cucore_memcpy_htod(dev, base + 4 * GIB - 4, &v, 8, NULL), CUCORE_OUT_OF_BOUNDS);
  print_message("refused as expected: %s\n", cucore_last_error());
  assert_status(cucore_memset_d8(dev, base + 4 * GIB - 1, 0, 2, NULL), CUCORE_OUT_OF_BOUNDS);
  assert_ok(cucore_vmm_buffer_destroy(b));
  print_message("1 GiB -> 4 GiB at 0x%llx, data intact\n", (unsigned long long)base);
}

static void grows_past_its_reservation(void **state) {
  (void)state;
  cucore_vmm_buffer *b = NULL;
  cucore_devptr base = 0, after = 0;
  assert_ok(cucore_vmm_buffer_create(dev, GIB, 0, &b));
  assert_ok(cucore_vmm_buffer_get_address(b, &base, NULL));
  probe(base, GIB, 1);
  cucore_status st = cucore_vmm_buffer_grow(b, 2 * GIB);
  if (CUCORE_CODE(st) == CUCORE_DEVICE_OUT_OF_MEMORY) {
    print_message("not in place (addresses after it taken): %s\n", cucore_last_error());
    assert_contains(cucore_last_error(), "max_bytes");
  } else {
    assert_ok(st);
    print_message("grew into a range reserved right after it\n");
  }
  assert_ok(cucore_vmm_buffer_get_address(b, &after, NULL));
  assert_int_equal(after, base);
  probe(base, GIB, 0);
  assert_ok(cucore_vmm_buffer_destroy(b));
}

static void wrong_access_flags_are_refused(void **state) {
  (void)state;
  size_t g = 0;
  assert_ok(cucore_vmm_get_granularity(dev, 0, &g, NULL));
  cucore_vmm_memory *m = NULL;
  cucore_devptr p = 0;
  assert_ok(cucore_vmm_create(dev, g, 0, &m));
  assert_ok(cucore_vmm_reserve(dev, g, 0, 0, &p));
  assert_ok(cucore_vmm_map(p, m, 0, g));
  unsigned bad[] = {2, 4, 7, 0x80000000u};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    assert_status(cucore_vmm_set_access(p, g, &dev, 1, bad[i]), CUCORE_INVALID_ARGUMENT);
    assert_contains(cucore_last_error(), "access flags");
  }
  print_message("refused: %s\n", cucore_last_error());
  cucore_status st = cucore_vmm_set_access(p, g, &dev, 1, CUCORE_VMM_ACCESS_READ);
  print_message("read-only access: %s %s\n", cucore_status_name(st),
                st == CUCORE_OK ? "" : cucore_last_error());
  assert_ok(cucore_vmm_set_access(p, g, &dev, 1, CUCORE_VMM_ACCESS_READWRITE));
  assert_ok(cucore_memset_d8(dev, p, 7, g, NULL));
  assert_status(cucore_memset_d8(dev, p, 7, g + 1, NULL), CUCORE_OUT_OF_BOUNDS);
  assert_ok(cucore_vmm_unmap(p, g));
  assert_ok(cucore_vmm_unreserve(dev, p, g));
  assert_ok(cucore_vmm_release(m));
}

/* The child: imports the fd, maps it, reads the parent's pattern, answers 0 or a message. */
static int child_main(int sock) {
  char msg[512] = "";
  cucore_device *d = NULL;
  cucore_vmm_memory *m = NULL;
  cucore_devptr p = 0;
  size_t g = 0, bytes = 0;
  int fd = -1;
  uint32_t got[PROBE / 4], want[PROBE / 4];
  cucore_status st = cucore_device_open(0, &d);
  if (st == CUCORE_OK) st = cucore_ipc_recv_fd(sock, &fd, &bytes, sizeof bytes);
  if (st == CUCORE_OK) st = cucore_vmm_import_fd(d, fd, bytes, &m);
  if (st == CUCORE_OK) st = cucore_vmm_get_granularity(d, CUCORE_VMM_SHAREABLE_FD, &g, NULL);
  if (st == CUCORE_OK) st = cucore_vmm_reserve(d, bytes, 0, 0, &p);
  if (st == CUCORE_OK) st = cucore_vmm_map(p, m, 0, bytes);
  if (st == CUCORE_OK) st = cucore_vmm_set_access(p, bytes, &d, 1, CUCORE_VMM_ACCESS_READWRITE);
  if (st == CUCORE_OK) st = cucore_memcpy_dtoh(d, got, p, PROBE, NULL);
  if (st != CUCORE_OK) snprintf(msg, sizeof msg, "child: %s", cucore_last_error());
  pattern(want, PROBE / 4, 99);
  if (st == CUCORE_OK && memcmp(got, want, PROBE) != 0)
    snprintf(msg, sizeof msg, "child: read 0x%08x first, the parent wrote 0x%08x", got[0], want[0]);
  if (p) (void)cucore_vmm_unmap(p, bytes);
  if (p) (void)cucore_vmm_unreserve(d, p, bytes);
  cucore_vmm_release(m);
  cucore_device_close(d);
  (void)!write(sock, msg, sizeof msg);
  return msg[0] != '\0';
}

static void exported_to_another_process(void **state) {
  (void)state;
  size_t g = 0;
  assert_ok(cucore_vmm_get_granularity(dev, CUCORE_VMM_SHAREABLE_FD, &g, NULL));
  cucore_vmm_memory *m = NULL;
  cucore_devptr p = 0;
  assert_ok(cucore_vmm_create(dev, g, CUCORE_VMM_SHAREABLE_FD, &m));
  assert_ok(cucore_vmm_reserve(dev, g, 0, 0, &p));
  assert_ok(cucore_vmm_map(p, m, 0, g));
  assert_ok(cucore_vmm_set_access(p, g, &dev, 1, CUCORE_VMM_ACCESS_READWRITE));
  static uint32_t buf[PROBE / 4];
  pattern(buf, PROBE / 4, 99);
  assert_ok(cucore_memcpy_htod(dev, p, buf, PROBE, NULL));
  int fd = -1, sock = -1;
  assert_ok(cucore_vmm_export_fd(m, &fd));
  pid_t pid = gpu_child_start("gpu_vmm", &sock);
  assert_ok(cucore_ipc_send_fd(sock, fd, &g, sizeof g));
  close(fd);
  char msg[512];
  gpu_child_finish(pid, sock, msg, sizeof msg);
  print_message("a child process imported the fd and read the parent's data\n");
  assert_ok(cucore_vmm_unmap(p, g));
  assert_ok(cucore_vmm_unreserve(dev, p, g));
  assert_ok(cucore_vmm_release(m));
}

static const char fill_src[] =
    "extern \"C\" __global__ void fill(unsigned *p, unsigned seed, unsigned long long n) {\n"
    "  unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;\n"
    "  if (i < n) p[i] = (unsigned)(i * 2654435761u) ^ seed; }\n";

/* Device 1's kernel writes device 0's memory (READWRITE for both), device 0 reads it back. */
static void written_by_a_second_gpu(cucore_device *d1, cucore_devptr p, size_t bytes) {
  cucore_stream *s1 = NULL;
  cucore_args *a = NULL;
  cucore_object *obj = gpu_compile(fill_src, CUCORE_CODE_CUBIN, NULL, NULL);
  cucore_kernel *k = gpu_kernel(obj, "fill");
  assert_ok(cucore_stream_create(d1, CUCORE_STREAM_NON_BLOCKING, 0, &s1));
  assert_ok(cucore_args_create(k, &a));
  assert_ok(cucore_mem_set_checks(CUCORE_MEM_CHECK_KERNEL_POINTERS));
  unsigned long long n = bytes / 4;
  assert_ok(cucore_args_set_ptr(a, 0, p));
  assert_ok(cucore_args_set_u32(a, 1, 1234));
  assert_ok(cucore_args_set_u64(a, 2, n));
  cucore_launch_config c = {{(unsigned)((n + 255) / 256), 1, 1}, {256, 1, 1}, 0, s1, 0, {{0}}};
  assert_ok(cucore_launch(k, &c, a));
  assert_ok(cucore_stream_synchronize(s1));
  assert_ok(cucore_mem_set_checks(0));
  uint32_t *got = malloc(bytes), *want = malloc(bytes);
  assert_non_null(got);
  assert_non_null(want);
  pattern(want, n, 1234);
  assert_ok(cucore_memcpy_dtoh(dev, got, p, bytes, NULL));
  assert_memory_equal(got, want, bytes);
  memset(got, 0, bytes);
  assert_ok(cucore_memcpy_dtoh(d1, got, p, bytes, NULL));
  assert_memory_equal(got, want, bytes);
  free(got);
  free(want);
  assert_ok(cucore_args_destroy(a));
  assert_ok(cucore_kernel_destroy(k));
  assert_ok(cucore_object_destroy(obj));
  assert_ok(cucore_stream_destroy(s1));
}

static void mapped_for_two_gpus(void **state) {
  (void)state;
  int count = 0;
  assert_ok(cucore_device_get_count(&count));
  if (count < 2) {
    print_message("skipped: %d GPU (two are needed)\n", count);
    skip();
  }
  cucore_device *d1 = NULL;
  assert_ok(cucore_device_open(1, &d1));
  size_t g = 0, bytes = 0;
  assert_ok(cucore_vmm_get_granularity(dev, 0, &g, NULL));
  bytes = ((size_t)64 << 20) / g * g + g;
  cucore_vmm_memory *m = NULL;
  cucore_devptr p = 0;
  assert_ok(cucore_vmm_create(dev, bytes, 0, &m));
  assert_ok(cucore_vmm_reserve(dev, bytes, 0, 0, &p));
  assert_ok(cucore_vmm_map(p, m, 0, bytes));
  cucore_device *both[2] = {dev, d1};
  cucore_status st = cucore_vmm_set_access(p, bytes, both, 2, CUCORE_VMM_ACCESS_READWRITE);
  print_message("access for devices 0 and 1: %s %s\n", cucore_status_name(st),
                st == CUCORE_OK ? "" : cucore_last_error());
  assert_ok(st);
  written_by_a_second_gpu(d1, p, bytes);
  assert_ok(cucore_vmm_set_access(p, bytes, &d1, 1, CUCORE_VMM_ACCESS_READ));
  uint32_t first = 0, want = 0;
  pattern(&want, 1, 1234);
  assert_ok(cucore_memcpy_dtoh(d1, &first, p, sizeof first, NULL));
  assert_int_equal(first, want);
  print_message("%zu MiB of device 0 written by a kernel on device 1 and read back on both; "
                "read-only for device 1 then, still read there\n",
                bytes >> 20);
  assert_ok(cucore_vmm_unmap(p, bytes));
  assert_ok(cucore_vmm_unreserve(dev, p, bytes));
  assert_ok(cucore_vmm_release(m));
  assert_ok(cucore_device_close(d1));
}

static int setup(void **state) {
  (void)state;
  return cucore_device_open(0, &dev) == CUCORE_OK ? 0 : -1;
}
static int teardown(void **state) {
  (void)state;
  return cucore_device_close(dev) == CUCORE_OK ? 0 : -1;
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "--child") == 0) return child_main(atoi(argv[2]));
  if (!cucore_test_have_gpu()) return CUCORE_TEST_SKIP;
  const struct CMUnitTest tests[] = {cmocka_unit_test(grows_1_to_4_gib_in_place),
                                     cmocka_unit_test(grows_past_its_reservation),
                                     cmocka_unit_test(wrong_access_flags_are_refused),
                                     cmocka_unit_test(mapped_for_two_gpus),
                                     cmocka_unit_test(exported_to_another_process)};
  return cmocka_run_group_tests(tests, setup, teardown);
}
