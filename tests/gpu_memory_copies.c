/* gpu_memory_copies.c -- copies and fills on a real GPU (label gpu), each compared with a CPU
 * reference: every direction, synchronous and on a stream, pageable and pinned; 2D and 3D
 * regions of pitched memory and of arrays; 8/16/32-bit fills, also 2D; copies past the end
 * refused with the data left alone; what cucore_pointer_get_facts says of each kind next to the
 * driver; strict kernel pointer checks; the driver-backed check of memory cucore did not
 * allocate. (What the strict check costs is measured by bench_memory.) */
#include "gpu_support.h"
#include "runtime/runtime.h" /* DRV(): memory made behind cucore's back */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static cucore_device *dev;
static cucore_stream *s;

static int setup(void **state) {
  (void)state;
  if (cucore_device_open(0, &dev) != CUCORE_OK) return -1;
  return cucore_stream_create(dev, CUCORE_STREAM_NON_BLOCKING, 0, &s) == CUCORE_OK ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  cucore_stream_destroy(s);
  return cucore_device_close(dev) == CUCORE_OK ? 0 : -1;
}

static void fill_pattern(unsigned char *p, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; i++) p[i] = (unsigned char)(i * 31u + seed);
}

static void every_direction(void **state) {
  (void)state;
  const size_t n = 3u << 20;
  unsigned char *page = malloc(n), *page2 = malloc(n), *pin = NULL, *pin2 = NULL;
  assert_ok(cucore_host_alloc(dev, n, (void **)&pin));
  assert_ok(cucore_host_alloc(dev, n, (void **)&pin2));
  cucore_devptr a = 0, b = 0;
  assert_ok(cucore_mem_alloc(dev, n, &a));
  assert_ok(cucore_mem_alloc(dev, n, &b));
  for (int async = 0; async < 2; async++) {
    cucore_stream *st = async ? s : NULL;
    fill_pattern(page, n, 5u + (unsigned)async);
    memset(page2, 0, n);
    memset(pin2, 0, n);
    assert_ok(cucore_memcpy_htod(dev, a, page, n, st));               /* H2D */
    assert_ok(cucore_memcpy_dtod(dev, b, a, n, st));                  /* D2D */
    assert_ok(cucore_memcpy_dtoh(dev, pin, b, n, st));                /* D2H */
    assert_ok(cucore_memcpy_htoh(dev, pin2, pin, n, st));             /* H2H */
    assert_ok(cucore_memcpy(dev, a, CUCORE_HOST_ADDR(pin2), n, st));  /* unified */
    assert_ok(cucore_memcpy(dev, CUCORE_HOST_ADDR(page2), a, n, st)); /* unified */
    if (st) assert_ok(cucore_stream_synchronize(st));
    assert_memory_equal(page, pin, n);
    assert_memory_equal(page, pin2, n);
    assert_memory_equal(page, page2, n);
  }
  /* Past the end: refused before the driver, the data left as it was. */
  memset(page2, 0xee, n);
  assert_status(cucore_memcpy_dtoh(dev, page2, a + 1, n, NULL), CUCORE_OUT_OF_BOUNDS);
  assert_contains(cucore_last_error(), "3145728 bytes at offset 1 of a 3145728-byte device");
  assert_int_equal(page2[0], 0xee);
  assert_status(cucore_memcpy_htod(dev, b, pin + 1, n, s), CUCORE_OUT_OF_BOUNDS);
  assert_contains(cucore_last_error(), "pinned host allocation");
  assert_status(cucore_memcpy_dtod(dev, a + n - 16, b, 32, s), CUCORE_OUT_OF_BOUNDS);
  print_message("every direction, synchronous and on a stream: 3 MiB match; copies past the "
                "end refused\n");
  assert_ok(cucore_mem_free(dev, a));
  assert_ok(cucore_mem_free(dev, b));
  assert_ok(cucore_host_free(dev, pin));
  assert_ok(cucore_host_free(dev, pin2));
  free(page);
  free(page2);
}

static void regions_in_2d_and_3d(void **state) {
  (void)state;
  /* 2D: 37 rows of 1000 bytes in pitched memory; a 600 x 20 window moved in and out. */
  const size_t w = 1000, h = 37;
  cucore_devptr d = 0;
  size_t pitch = 0;
  assert_ok(cucore_mem_alloc_pitch(dev, w, h, 4, &d, &pitch));
  assert_true(pitch >= w);
  unsigned char *img = malloc(w * h), *back = malloc(w * h), *ref = malloc(w * h);
  fill_pattern(img, w * h, 3);
  assert_ok(cucore_memset_2d(dev, d, pitch, 0, 1, w, h, NULL));
  cucore_copy_2d c;
  memset(&c, 0, sizeof c);
  c.src = CUCORE_HOST_ADDR(img);
  c.src_pitch = w;
  c.src_x_bytes = 100;
  c.src_y = 5;
  c.dst = d;
  c.dst_pitch = pitch;
  c.dst_x_bytes = 300;
  c.dst_y = 10;
  c.width_bytes = 600;
  c.height = 20;
  assert_ok(cucore_memcpy_2d(dev, &c, s));
  cucore_copy_2d all;
  memset(&all, 0, sizeof all);
  all.src = d;
  all.src_pitch = pitch;
  all.dst = CUCORE_HOST_ADDR(back);
  all.dst_pitch = w;
  all.width_bytes = w;
  all.height = h;
  assert_ok(cucore_memcpy_2d(dev, &all, s));
  assert_ok(cucore_stream_synchronize(s));
  memset(ref, 0, w * h);
  for (size_t y = 0; y < 20; y++) memcpy(ref + (10 + y) * w + 300, img + (5 + y) * w + 100, 600);
  assert_memory_equal(ref, back, w * h);
  c.dst_y = 18; /* the window would end at row 38 of 37 */
  assert_status(cucore_memcpy_2d(dev, &c, s), CUCORE_OUT_OF_BOUNDS);
  assert_ok(cucore_mem_free(dev, d));
  /* 3D: a volume of 5 slices of 9 rows of 100 bytes; a 50 x 5 x 3 box at (10, 1, 1). */
  const size_t W = 100, H = 9, D = 5;
  assert_ok(cucore_mem_alloc_pitch(dev, W, H * D, 4, &d, &pitch));
  unsigned char *vol = malloc(W * H * D), *vback = malloc(W * H * D), *vref = malloc(W * H * D);
  fill_pattern(vol, W * H * D, 9);
  assert_ok(cucore_memset_2d(dev, d, pitch, 0, 1, W, H * D, NULL));
  cucore_copy_3d v;
  memset(&v, 0, sizeof v);
  v.src = CUCORE_HOST_ADDR(vol);
  v.src_pitch = W;
  v.src_height = H;
  v.dst = d;
  v.dst_pitch = pitch;
  v.dst_height = H;
  v.dst_x_bytes = 10;
  v.dst_y = 1;
  v.dst_z = 1;
  v.width_bytes = 50;
  v.height = 5;
  v.depth = 3;
  assert_ok(cucore_memcpy_3d(dev, &v, NULL));
  cucore_copy_3d vall;
  memset(&vall, 0, sizeof vall);
  vall.src = d;
  vall.src_pitch = pitch;
  vall.src_height = H;
  vall.dst = CUCORE_HOST_ADDR(vback);
  vall.dst_pitch = W;
  vall.dst_height = H;
  vall.width_bytes = W;
  vall.height = H;
  vall.depth = D;
  assert_ok(cucore_memcpy_3d(dev, &vall, s));
  assert_ok(cucore_stream_synchronize(s));
  memset(vref, 0, W * H * D);
  for (size_t z = 0; z < 3; z++)
    for (size_t y = 0; y < 5; y++)
      memcpy(vref + ((1 + z) * H + 1 + y) * W + 10, vol + (z * H + y) * W, 50);
  assert_memory_equal(vref, vback, W * H * D);
  v.dst_z = 3; /* slices 3..5 of 5 */
  assert_status(cucore_memcpy_3d(dev, &v, NULL), CUCORE_OUT_OF_BOUNDS);
  assert_ok(cucore_mem_free(dev, d));
  /* Arrays as 2D endpoints. */
  cucore_array *arr = NULL;
  cucore_array_desc ad = {.width = 64, .height = 16, .format = CUCORE_FORMAT_U8, .channels = 4};
  assert_ok(cucore_array_create(dev, &ad, &arr));
  unsigned char *pix = malloc(64 * 4 * 16), *pix2 = calloc(64 * 4 * 16, 1);
  fill_pattern(pix, 64 * 4 * 16, 1);
  assert_ok(cucore_array_copy_from_host(arr, pix, 0, NULL));
  cucore_copy_2d ac;
  memset(&ac, 0, sizeof ac);
  ac.src_array = arr;
  ac.dst = CUCORE_HOST_ADDR(pix2);
  ac.dst_pitch = 256;
  ac.width_bytes = 256;
  ac.height = 16;
  assert_ok(cucore_memcpy_2d(dev, &ac, NULL));
  assert_memory_equal(pix, pix2, 64 * 4 * 16);
  ac.src_y = 1;
  assert_status(cucore_memcpy_2d(dev, &ac, NULL), CUCORE_OUT_OF_BOUNDS);
  assert_contains(cucore_last_error(), "does not fit the array (256 bytes per row, 16 rows");
  assert_ok(cucore_array_destroy(arr));
  print_message("2D window, 3D box and array copies match the CPU\n");
  free(img);
  free(back);
  free(ref);
  free(vol);
  free(vback);
  free(vref);
  free(pix);
  free(pix2);
}

static void fills_of_every_width(void **state) {
  (void)state;
  const size_t n = 4096;
  cucore_devptr d = 0;
  assert_ok(cucore_mem_alloc(dev, n, &d));
  unsigned char *h = malloc(n), *ref = malloc(n);
  assert_ok(cucore_memset_d8(dev, d, 0x11, n, NULL));
  assert_ok(cucore_memset_d16(dev, d + 2, 0xbeef, 10, s));
  assert_ok(cucore_memset_d32(dev, d + 64, 0xcafef00du, 8, s));
  assert_ok(cucore_memset_2d(dev, d + 1024, 256, 0x7777, 2, 16, 3, s));     /* 16-bit 2D */
  assert_ok(cucore_memset_2d(dev, d + 2048, 128, 0x01020304u, 4, 4, 5, s)); /* 32-bit 2D */
  assert_ok(cucore_memcpy_dtoh(dev, h, d, n, s));
  assert_ok(cucore_stream_synchronize(s));
  memset(ref, 0x11, n);
  for (int i = 0; i < 10; i++) {
    uint16_t v = 0xbeef;
    memcpy(ref + 2 + 2 * i, &v, 2);
  }
  for (int i = 0; i < 8; i++) {
    uint32_t v = 0xcafef00du;
    memcpy(ref + 64 + 4 * i, &v, 4);
  }
  for (int y = 0; y < 3; y++)
    for (int x = 0; x < 16; x++) {
      uint16_t v = 0x7777;
      memcpy(ref + 1024 + y * 256 + 2 * x, &v, 2);
    }
  for (int y = 0; y < 5; y++)
    for (int x = 0; x < 4; x++) {
      uint32_t v = 0x01020304u;
      memcpy(ref + 2048 + y * 128 + 4 * x, &v, 4);
    }
  assert_memory_equal(ref, h, n);
  assert_status(cucore_memset_d32(dev, d + 4092, 0, 2, NULL), CUCORE_OUT_OF_BOUNDS);
  assert_status(cucore_memset_2d(dev, d + 2048, 128, 0, 4, 4, 17, NULL), CUCORE_OUT_OF_BOUNDS);
  print_message("8/16/32-bit fills, 1D and 2D: 4096 bytes match\n");
  assert_ok(cucore_mem_free(dev, d));
  free(h);
  free(ref);
}

static void pointer_facts_agree_with_the_driver(void **state) {
  (void)state;
  cucore_devptr d = 0;
  void *pin = NULL;
  assert_ok(cucore_mem_alloc(dev, 1 << 16, &d));
  assert_ok(cucore_host_alloc(dev, 1 << 16, &pin));
  cucore_pointer_facts f;
  assert_ok(cucore_pointer_get_facts(d + 100, &f));
  assert_int_equal(f.type, CUCORE_MEMTYPE_DEVICE);
  assert_int_equal(f.kind, CUCORE_MEM_DEVICE);
  assert_int_equal(f.device, 0);
  assert_int_equal(f.base, d);
  assert_int_equal(f.size, 1 << 16);
  assert_int_equal(f.offset, 100);
  assert_int_equal(f.device_pointer, d + 100);
  assert_ok(cucore_pointer_get_facts(CUCORE_HOST_ADDR(pin), &f));
  assert_int_equal(f.type, CUCORE_MEMTYPE_HOST);
  assert_int_equal(f.kind, CUCORE_MEM_PINNED);
  assert_ptr_equal(f.host_pointer, pin);
  /* Memory made behind cucore's back: the driver's range. */
  CUdeviceptr raw = 0;
  assert_int_equal(DRV(cuMemAlloc)(&raw, 5000), CUDA_SUCCESS);
  assert_ok(cucore_pointer_get_facts(raw + 8, &f));
  assert_int_equal(f.kind, CUCORE_MEM_UNKNOWN);
  assert_int_equal(f.type, CUCORE_MEMTYPE_DEVICE);
  assert_int_equal(f.base, raw);
  assert_true(f.size >= 5000);
  int local = 0;
  assert_ok(cucore_pointer_get_facts(CUCORE_HOST_ADDR(&local), &f));
  assert_int_equal(f.type, CUCORE_MEMTYPE_UNKNOWN);
  /* Unknown memory is unchecked unless asked: then the driver's range bounds it. */
  unsigned char *host = calloc(4u << 20, 1);
  assert_ok(cucore_memcpy_htod(dev, raw, host, 5000, NULL));
  assert_ok(cucore_mem_set_checks(CUCORE_MEM_CHECK_FOREIGN));
  assert_ok(cucore_memcpy_htod(dev, raw + 1000, host, 4000, NULL)); /* within: passes */
  cucore_status st = cucore_memcpy_htod(dev, raw + 4096, host, 3u << 20, NULL);
  assert_ok(cucore_mem_set_checks(0));
  free(host);
  assert_int_equal(CUCORE_CODE(st), CUCORE_OUT_OF_BOUNDS);
  /* Past the end of the driver's range; or, where the address space puts a cucore allocation
   * right after it (compute-sanitizer moves allocations), into that allocation. */
  const char *why = cucore_last_error();
  if (!strstr(why, "that cucore did not make") && !strstr(why, "spans two allocations"))
    fail_msg("the refusal gives neither reason: %s", why);
  assert_int_equal(DRV(cuMemFree)(raw), CUDA_SUCCESS);
  assert_ok(cucore_mem_free(dev, d));
  assert_ok(cucore_host_free(dev, pin));
}

static const char *kernel_src =
    "extern \"C\" __global__ void store(int *p, int v) { if (threadIdx.x == 0) p[0] = v; }\n";

static void strict_kernel_pointer_checks(void **state) {
  (void)state;
  cucore_object *obj = gpu_compile(kernel_src, CUCORE_CODE_CUBIN, NULL, NULL);
  cucore_kernel *k = gpu_kernel(obj, "store");
  cucore_object_destroy(obj);
  cucore_args *a = NULL;
  assert_ok(cucore_args_create(k, &a));
  assert_ok(cucore_args_check_pointers(a, dev));
  cucore_devptr d = 0;
  void *pin = NULL;
  assert_ok(cucore_mem_alloc(dev, 64, &d));
  assert_ok(cucore_host_alloc(dev, 64, &pin));
  int *heap = malloc(64);
  /* Accessible: device memory of the device, pinned (mapped) host memory. */
  assert_ok(cucore_args_set_ptr(a, 0, d));
  assert_ok(cucore_args_set_host_ptr(a, 0, pin));
  /* Not: pageable host memory (unless the device reads it directly: HMM or ATS), freed
   * memory. */
  int cudev = 0, pageable = 0;
  assert_ok(cucore_device_get_native(dev, NULL, &cudev));
  assert_int_equal(DRV(cuDeviceGetAttribute)(&pageable, CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS,
                                             (CUdevice)cudev),
                   CUDA_SUCCESS);
  if (pageable) {
    assert_ok(cucore_args_set_host_ptr(a, 0, heap));
    print_message("device 0 reads pageable memory (HMM/ATS): malloc'd memory passes the check\n");
  } else {
    assert_status(cucore_args_set_host_ptr(a, 0, heap), CUCORE_INVALID_ARGUMENT);
    assert_contains(cucore_last_error(), "argument 0 of `store`");
    assert_contains(cucore_last_error(), "pageable host memory");
    print_message("strict check refused malloc'd memory: %s\n", cucore_last_error());
  }
  /* A device pointer past the end of its allocation as the start address: not this range. */
  assert_ok(cucore_args_reset(a));
  assert_ok(cucore_pointer_check_access(dev, d, 64));
  assert_status(cucore_pointer_check_access(dev, d, 65), CUCORE_OUT_OF_BOUNDS);
  assert_ok(cucore_args_reset(a));
  cucore_devptr gone = 0;
  assert_ok(cucore_mem_alloc(dev, 64, &gone));
  assert_ok(cucore_mem_free(dev, gone));
  cucore_status st = cucore_args_set_ptr(a, 0, gone);
  if (st == CUCORE_OK) { /* the driver handed the range out again: then it is live memory */
    print_message("the freed range was handed out again; its check passed\n");
  } else {
    assert_int_equal(CUCORE_CODE(st), CUCORE_INVALID_ARGUMENT);
    assert_contains(cucore_last_error(), "freed");
  }
  assert_ok(cucore_args_reset(a));
  /* A checked launch runs as usual. */
  assert_ok(cucore_args_push_ptr(a, d));
  assert_ok(cucore_args_push_i32(a, 42));
  cucore_launch_config c;
  memset(&c, 0, sizeof c);
  c.grid[0] = 1;
  c.block[0] = 32;
  c.stream = s;
  assert_ok(cucore_launch(k, &c, a));
  int got = 0;
  assert_ok(cucore_memcpy_dtoh(dev, &got, d, 4, s));
  assert_ok(cucore_stream_synchronize(s));
  assert_int_equal(got, 42);
  assert_ok(cucore_mem_free(dev, d));
  assert_ok(cucore_host_free(dev, pin));
  free(heap);
  cucore_args_destroy(a);
  cucore_kernel_destroy(k);
}

int main(void) {
  if (!cucore_test_have_gpu()) return CUCORE_TEST_SKIP;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_direction),
      cmocka_unit_test(regions_in_2d_and_3d),
      cmocka_unit_test(fills_of_every_width),
      cmocka_unit_test(pointer_facts_agree_with_the_driver),
      cmocka_unit_test(strict_kernel_pointer_checks),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
