/* test_vmm.c -- virtual memory on the fake driver (tests/fake/), whose VMM is the
 * host's own (a memfd mapped into a PROT_NONE reservation), so bytes really move: entry points
 * a driver lacks, argument checks, the granularity arithmetic, the registry records of mapped
 * ranges and of a growing buffer, copies past the mapped end, export and import, and access for
 * several devices in one call (the fake with a second device, CUCORE_FAKE_DEVICES=2). */
#include "support.h"

#include "memory/vmm.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef CUCORE_FAKE_DRIVER_PATH
#error "CUCORE_FAKE_DRIVER_PATH is set by tests/CMakeLists.txt"
#endif

#define MIB ((size_t)1 << 20)
#define G (2 * MIB) /* the fake driver's granularity */

static cucore_device *dev;

/* A driver without the entry points (hidden in a child that loads the driver afresh). */
static void absent_entry_points_are_named(void **state) {
  (void)state;
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    setenv("CUCORE_FAKE_HIDE", "cuMemGetAllocationGranularity,cuMemCreate", 1);
    cucore_device *d = NULL;
    size_t g = 0;
    cucore_status st = cucore_device_open(0, &d);
    if (st == CUCORE_OK) st = cucore_vmm_get_granularity(d, 0, &g, NULL);
    int ok = CUCORE_CODE(st) == CUCORE_DRIVER_TOO_OLD &&
             strstr(cucore_last_error(), "cuMemGetAllocationGranularity") &&
             strstr(cucore_last_error(), "CUDA 10.2");
    if (!ok) fprintf(stderr, "child: %s: %s\n", cucore_status_name(st), cucore_last_error());
    cucore_device_close(d);
    _exit(ok ? 0 : 1);
  }
  int ws = 0;
  assert_int_equal(waitpid(pid, &ws, 0), pid);
  assert_true(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
}

static void granularity_rounding(void **state) {
  (void)state;
  uint64_t out = 1;
  assert_true(cc_vmm_round_up(0, G, &out));
  assert_int_equal(out, 0);
  assert_true(cc_vmm_round_up(1, G, &out));
  assert_int_equal(out, G);
  assert_true(cc_vmm_round_up(G, G, &out));
  assert_int_equal(out, G);
  assert_true(cc_vmm_round_up(G + 1, G, &out));
  assert_int_equal(out, 2 * G);
  assert_true(cc_vmm_round_up(3 * MIB, 3 * MIB / 2, &out)); /* not a power of two */
  assert_int_equal(out, 3 * MIB);
  assert_false(cc_vmm_round_up(UINT64_MAX - 5, G, &out)); /* would wrap */
  size_t min = 0, rec = 0;
  assert_ok(cucore_vmm_get_granularity(dev, 0, &min, &rec));
  assert_int_equal(min, G);
  assert_int_equal(rec, G);
  cucore_vmm_memory *m = NULL;
  assert_status(cucore_vmm_create(dev, G + 4096, 0, &m), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "2097152");
  assert_contains(cucore_last_error(), "4194304"); /* rounded up */
  assert_null(m);
}

static void arguments_are_checked(void **state) {
  (void)state;
  size_t g = 0;
  cucore_vmm_memory *m = NULL;
  cucore_devptr p = 0;
  assert_status(cucore_vmm_get_granularity(dev, 4, &g, NULL), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_vmm_get_granularity(NULL, 0, &g, NULL), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_vmm_create(dev, 0, 0, &m), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_vmm_create(dev, G, 8, &m), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_vmm_reserve(dev, G, 3, 0, &p), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "power of two");
  assert_status(cucore_vmm_import_fd(dev, -1, G, &m), CUCORE_INVALID_ARGUMENT);
  assert_ok(cucore_vmm_create(dev, G, 0, &m));
  int fd = 7;
  assert_status(cucore_vmm_export_fd(m, &fd), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "CUCORE_VMM_SHAREABLE_FD");
  assert_int_equal(fd, -1);
  assert_ok(cucore_vmm_reserve(dev, 2 * G, 0, 0, &p));
  assert_status(cucore_vmm_map(p, m, 0, 2 * G), CUCORE_INVALID_ARGUMENT); /* past its end */
  assert_contains(cucore_last_error(), "runs past the end");
  assert_status(cucore_vmm_map(p + 4096, m, 0, G), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "the address");
  assert_ok(cucore_vmm_map(p, m, 0, G));
  cucore_device *devs[2] = {dev, dev};
  assert_status(cucore_vmm_set_access(p, G, devs, 1, 2), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "access flags 0x2");
  assert_status(cucore_vmm_set_access(p, G, devs, 1, 7), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_vmm_set_access(p, G, devs, 2, CUCORE_VMM_ACCESS_READWRITE),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "twice");
  assert_status(cucore_vmm_set_access(p, G, devs, 0, CUCORE_VMM_ACCESS_READWRITE),
                CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_vmm_set_access(p, G, NULL, 1, CUCORE_VMM_ACCESS_READWRITE),
                CUCORE_INVALID_ARGUMENT);
  assert_ok(cucore_vmm_unmap(p, G));
  assert_ok(cucore_vmm_release(m));
  assert_ok(cucore_vmm_unreserve(dev, p, 2 * G));
  assert_ok(cucore_vmm_release(NULL));
  cucore_vmm_buffer *b = NULL;
  assert_status(cucore_vmm_buffer_create(dev, 2 * G, G, &b), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_vmm_buffer_create(dev, 0, 0, &b), CUCORE_INVALID_ARGUMENT);
  assert_null(b);
  assert_ok(cucore_vmm_buffer_destroy(NULL));
}

/* A mapped range is recorded: copies inside it pass, past its end are refused; unmapping
 * forgets it and refuses cuts. */
static void mapped_ranges_are_recorded(void **state) {
  (void)state;
  cucore_vmm_memory *m = NULL;
  cucore_devptr p = 0;
  assert_ok(cucore_vmm_create(dev, 2 * G, 0, &m));
  assert_ok(cucore_vmm_reserve(dev, 4 * G, 0, 0, &p));
  assert_ok(cucore_vmm_map(p, m, 0, 2 * G));
  assert_ok(cucore_vmm_set_access(p, 2 * G, &dev, 1, CUCORE_VMM_ACCESS_READWRITE));
  cucore_pointer_facts f;
  assert_ok(cucore_pointer_get_facts(p + 100, &f));
  assert_int_equal(f.kind, CUCORE_MEM_VMM);
  assert_int_equal(f.base, p);
  assert_int_equal(f.size, 2 * G);
  static char buf[4096];
  memset(buf, 0x5a, sizeof buf);
  assert_ok(cucore_memcpy_htod(dev, p + 2 * G - sizeof buf, buf, sizeof buf, NULL));
  assert_status(cucore_memcpy_htod(dev, p + 2 * G - 100, buf, sizeof buf, NULL),
                CUCORE_OUT_OF_BOUNDS);
  assert_status(cucore_vmm_map(p + G, m, 0, G), CUCORE_INVALID_ARGUMENT); /* overlaps */
  assert_contains(cucore_last_error(), "overlaps");
  assert_status(cucore_vmm_unmap(p, G), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "cuts");
  assert_status(cucore_vmm_unreserve(dev, p, 4 * G), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "unmap it first");
  assert_status(cucore_mem_free(dev, p), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "cucore_vmm_unmap");
  assert_ok(cucore_vmm_release(m)); /* still mapped: the memory lives on */
  assert_ok(cucore_memcpy_dtoh(dev, buf, p + 2 * G - sizeof buf, sizeof buf, NULL));
  assert_int_equal(buf[0], 0x5a);
  assert_status(cucore_vmm_unmap(p, 4 * G), CUCORE_INVALID_ARGUMENT); /* and unmapped space */
  assert_contains(cucore_last_error(), "unmap exactly what was mapped");
  assert_ok(cucore_vmm_unmap(p, 2 * G));
  assert_ok(cucore_pointer_get_facts(p + 100, &f));
  assert_int_equal(f.freed, 1); /* the record is gone (remembered as freed) */
  assert_status(cucore_vmm_unmap(p, 2 * G), CUCORE_INVALID_ARGUMENT);
  assert_ok(cucore_vmm_unreserve(dev, p, 4 * G));
}

static void fill(unsigned char *b, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; i++) b[i] = (unsigned char)(i * 131 + seed);
}

/* The old part of the buffer still holds the pattern at its start, middle and end. */
static void check_old_part(cucore_devptr base, size_t old_bytes) {
  static unsigned char want[4096], got[4096];
  size_t at[3] = {0, old_bytes / 2, old_bytes - sizeof got};
  for (int i = 0; i < 3; i++) {
    fill(want, sizeof want, (unsigned)(at[i] / sizeof want));
    assert_ok(cucore_memcpy_dtoh(dev, got, base + at[i], sizeof got, NULL));
    if (memcmp(want, got, sizeof got) != 0) fail_msg("data changed at offset %zu", at[i]);
  }
}

static void write_old_part(cucore_devptr base, size_t old_bytes) {
  static unsigned char b[4096];
  size_t at[3] = {0, old_bytes / 2, old_bytes - sizeof b};
  for (int i = 0; i < 3; i++) {
    fill(b, sizeof b, (unsigned)(at[i] / sizeof b));
    assert_ok(cucore_memcpy_htod(dev, base + at[i], b, sizeof b, NULL));
  }
}

/* Grows one buffer in its reserved range and checks address, data and record. */
static void grow_and_check(size_t from, size_t to, size_t max) {
  cucore_vmm_buffer *b = NULL;
  cucore_devptr base = 0, after = 0;
  size_t bytes = 0;
  assert_ok(cucore_vmm_buffer_create(dev, from, max, &b));
  assert_ok(cucore_vmm_buffer_get_address(b, &base, &bytes));
  assert_int_equal(bytes, from);
  write_old_part(base, from);
  static unsigned char x[4096];
  assert_status(cucore_memcpy_htod(dev, base + from - 8, x, 16, NULL), CUCORE_OUT_OF_BOUNDS);
  cucore_status st = cucore_vmm_buffer_grow(b, to);
  if (max == 0 && CUCORE_CODE(st) == CUCORE_DEVICE_OUT_OF_MEMORY) {
    /* The host's addresses after the reservation were taken: refused, buffer unchanged. */
    print_message("grow %zu -> %zu: not in place here: %s\n", from, to, cucore_last_error());
    assert_contains(cucore_last_error(), "max_bytes");
    to = from;
  } else {
    assert_ok(st);
  }
  assert_ok(cucore_vmm_buffer_get_address(b, &after, &bytes));
  assert_int_equal(after, base);
  assert_int_equal(bytes, to);
  check_old_part(base, from);
  cucore_pointer_facts f;
  assert_ok(cucore_pointer_get_facts(base + to - 1, &f));
  assert_int_equal(f.kind, CUCORE_MEM_VMM);
  assert_int_equal(f.size, to);
  assert_ok(cucore_memcpy_htod(dev, base + to - sizeof x, x, sizeof x, NULL));
  assert_status(cucore_memcpy_htod(dev, base + to - 8, x, 16, NULL), CUCORE_OUT_OF_BOUNDS);
  assert_status(cucore_vmm_unmap(base, G), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "cucore_vmm_buffer_destroy");
  assert_ok(cucore_vmm_buffer_grow(b, 1)); /* not above the size: nothing */
  assert_ok(cucore_vmm_buffer_destroy(b));
  assert_ok(cucore_pointer_get_facts(base, &f));
  assert_int_equal(f.freed, 1);
}

static void buffer_grows_in_place(void **state) {
  (void)state;
  grow_and_check(3 * MIB, 9 * MIB, 16 * MIB); /* in the range reserved up front */
  grow_and_check(3 * MIB, 9 * MIB, 0);        /* past it: a range reserved right after */
}

/* Grown one granule at a time past the first few chunks (their list grows with cc_grow, by
 * doubling from 8): the address, the old data and the record follow every step. */
static void buffer_grows_in_many_steps(void **state) {
  (void)state;
  cucore_vmm_buffer *b = NULL;
  cucore_devptr base = 0, after = 0;
  size_t bytes = 0;
  assert_ok(cucore_vmm_buffer_create(dev, G, 24 * G, &b));
  assert_ok(cucore_vmm_buffer_get_address(b, &base, NULL));
  write_old_part(base, G);
  for (size_t n = 2; n <= 20; n++) {
    assert_ok(cucore_vmm_buffer_grow(b, n * G));
    assert_ok(cucore_vmm_buffer_get_address(b, &after, &bytes));
    assert_int_equal(after, base);
    assert_int_equal(bytes, n * G);
  }
  check_old_part(base, G);
  cucore_pointer_facts f;
  assert_ok(cucore_pointer_get_facts(base + 20 * G - 1, &f));
  assert_int_equal(f.kind, CUCORE_MEM_VMM);
  assert_int_equal(f.size, 20 * G);
  static unsigned char x[4096];
  assert_ok(cucore_memcpy_htod(dev, base + 20 * G - sizeof x, x, sizeof x, NULL));
  assert_status(cucore_memcpy_htod(dev, base + 20 * G - 8, x, 16, NULL), CUCORE_OUT_OF_BOUNDS);
  assert_ok(cucore_vmm_buffer_destroy(b));
}

/* The addresses right after the buffer are taken (reserved here first): growing is refused
 * saying so, and the buffer, its data and its record stay as they were. */
static void a_taken_neighbour_leaves_the_buffer_unchanged(void **state) {
  (void)state;
  cucore_vmm_buffer *b = NULL;
  cucore_devptr base = 0, taken = 0;
  size_t bytes = 0;
  assert_ok(cucore_vmm_buffer_create(dev, 3 * MIB, 0, &b));
  assert_ok(cucore_vmm_buffer_get_address(b, &base, NULL));
  write_old_part(base, 3 * MIB);
  assert_ok(cucore_vmm_reserve(dev, 2 * G, 0, base + 2 * G, &taken));
  if (taken != base + 2 * G) { /* the host had no room there: nothing to take */
    print_message("the addresses after the buffer were not free: not tested\n");
    assert_ok(cucore_vmm_unreserve(dev, taken, 2 * G));
    assert_ok(cucore_vmm_buffer_destroy(b));
    skip();
  }
  assert_status(cucore_vmm_buffer_grow(b, 6 * MIB), CUCORE_DEVICE_OUT_OF_MEMORY);
  assert_contains(cucore_last_error(), "cannot grow in place");
  assert_ok(cucore_vmm_buffer_get_address(b, NULL, &bytes));
  assert_int_equal(bytes, 3 * MIB);
  check_old_part(base, 3 * MIB);
  cucore_pointer_facts f;
  assert_ok(cucore_pointer_get_facts(base, &f));
  assert_int_equal(f.size, 3 * MIB);
  assert_ok(cucore_vmm_unreserve(dev, taken, 2 * G));
  assert_ok(cucore_vmm_buffer_grow(b, 6 * MIB)); /* the room is back */
  check_old_part(base, 3 * MIB);
  assert_ok(cucore_vmm_buffer_destroy(b));
}

static void export_and_import(void **state) {
  (void)state;
  cucore_vmm_memory *m = NULL, *im = NULL;
  cucore_devptr a = 0, b = 0;
  int fd = -1;
  assert_ok(cucore_vmm_create(dev, G, CUCORE_VMM_SHAREABLE_FD, &m));
  assert_ok(cucore_vmm_export_fd(m, &fd));
  assert_true(fd >= 0);
  assert_status(cucore_vmm_import_fd(dev, fd, G + 1, &im), CUCORE_INVALID_ARGUMENT);
  assert_ok(cucore_vmm_import_fd(dev, fd, G, &im));
  close(fd);
  size_t n = 0;
  assert_ok(cucore_vmm_get_size(im, &n));
  assert_int_equal(n, G);
  assert_ok(cucore_vmm_reserve(dev, G, 0, 0, &a));
  assert_ok(cucore_vmm_reserve(dev, G, 0, 0, &b));
  assert_ok(cucore_vmm_map(a, m, 0, G));
  assert_ok(cucore_vmm_map(b, im, 0, G));
  assert_ok(cucore_vmm_set_access(a, G, &dev, 1, CUCORE_VMM_ACCESS_READWRITE));
  assert_ok(cucore_vmm_set_access(b, G, &dev, 1, CUCORE_VMM_ACCESS_READWRITE));
  uint32_t v = 0xC0FFEE, w = 0;
  assert_ok(cucore_memcpy_htod(dev, a + 64, &v, sizeof v, NULL));
  assert_ok(cucore_memcpy_dtoh(dev, &w, b + 64, sizeof w, NULL));
  assert_int_equal(w, v); /* one physical memory, two mappings */
  assert_ok(cucore_vmm_unmap(a, G));
  assert_ok(cucore_vmm_unmap(b, G));
  assert_ok(cucore_vmm_unreserve(dev, a, G));
  assert_ok(cucore_vmm_unreserve(dev, b, G));
  assert_ok(cucore_vmm_release(m));
  assert_ok(cucore_vmm_release(im));
}

/* Access given to two devices in one call (cuMemSetAccess with two entries), then changed for
 * both, then for the second alone; the second device named twice is refused before the
 * driver. */
static void access_for_several_devices(void **state) {
  (void)state;
  cucore_device *dev1 = NULL;
  assert_ok(cucore_device_open(1, &dev1));
  cucore_vmm_memory *m = NULL;
  cucore_devptr p = 0;
  assert_ok(cucore_vmm_create(dev, G, 0, &m));
  assert_ok(cucore_vmm_reserve(dev, G, 0, 0, &p));
  assert_ok(cucore_vmm_map(p, m, 0, G));
  cucore_device *both[2] = {dev, dev1};
  assert_ok(cucore_vmm_set_access(p, G, both, 2, CUCORE_VMM_ACCESS_READWRITE));
  uint32_t v = 0xBEEF, w = 0;
  assert_ok(cucore_memcpy_htod(dev, p + 128, &v, sizeof v, NULL));
  assert_ok(cucore_memcpy_dtoh(dev, &w, p + 128, sizeof w, NULL));
  assert_int_equal(w, v);
  cucore_device *order[2] = {dev1, dev}; /* any order */
  assert_ok(cucore_vmm_set_access(p, G, order, 2, CUCORE_VMM_ACCESS_READ));
  w = 0;
  assert_ok(cucore_memcpy_dtoh(dev, &w, p + 128, sizeof w, NULL));
  assert_int_equal(w, v);
  assert_ok(cucore_vmm_set_access(p, G, &dev1, 1, CUCORE_VMM_ACCESS_READWRITE));
  cucore_device *twice[2] = {dev1, dev1};
  assert_status(cucore_vmm_set_access(p, G, twice, 2, CUCORE_VMM_ACCESS_READWRITE),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "device 1 is given twice");
  assert_status(cucore_vmm_set_access(p, G, both, 2, 2), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "access flags 0x2");
  assert_ok(cucore_vmm_unmap(p, G));
  assert_ok(cucore_vmm_unreserve(dev, p, G));
  assert_ok(cucore_vmm_release(m));
  assert_ok(cucore_device_close(dev1));
}

static int setup(void **state) {
  (void)state;
  return cucore_device_open(0, &dev) == CUCORE_OK ? 0 : -1;
}
static int teardown(void **state) {
  (void)state;
  cucore_device_close(dev);
  return 0;
}

int main(void) {
  setenv("CUCORE_LIBCUDA", CUCORE_FAKE_DRIVER_PATH, 1);
  setenv("CUCORE_FAKE_DEVICES", "2", 1); /* a second device for access_for_several_devices */
  /* First, before this process loads the driver: the child loads it with symbols hidden. */
  const struct CMUnitTest first[] = {cmocka_unit_test(absent_entry_points_are_named)};
  int rc = cmocka_run_group_tests(first, NULL, NULL);
  const struct CMUnitTest tests[] = {cmocka_unit_test(granularity_rounding),
                                     cmocka_unit_test(arguments_are_checked),
                                     cmocka_unit_test(mapped_ranges_are_recorded),
                                     cmocka_unit_test(buffer_grows_in_place),
                                     cmocka_unit_test(buffer_grows_in_many_steps),
                                     cmocka_unit_test(
                                         a_taken_neighbour_leaves_the_buffer_unchanged),
                                     cmocka_unit_test(export_and_import),
                                     cmocka_unit_test(access_for_several_devices)};
  return rc | cmocka_run_group_tests(tests, setup, teardown);
}
