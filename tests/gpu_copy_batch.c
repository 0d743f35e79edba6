/* gpu_copy_batch.c -- batched and attributed copies on a real GPU (label gpu), values compared
 * with the CPU's: 1 000 small copies host-to-device, device-to-device and device-to-host in one
 * batch with three attribute sets; the same batch made by the loop cucore uses on a driver
 * before CUDA 12.8 (the entry point taken away), with the same bytes; a source read during the
 * call (a stack buffer overwritten after the call returns, the device holding the old bytes);
 * the attributed single copy; a batch captured into a graph (copy by copy: the driver does not
 * capture the batch) and replayed; a copy past the end
 * refused by index with nothing issued; 3D batches of pitched regions and of a 2D array (the
 * loop too) and the attributed 3D copy. */
#include "gpu_support.h"
#include "loader/loader.h" /* cc_drv: the batched entry point taken away for the loop */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { N = 1000, SZ = 256, THIRD = 334 };

static cucore_device *dev;
static cucore_stream *s;

static int setup(void **state) {
  (void)state;
  if (cucore_device_open(0, &dev) != CUCORE_OK) return -1;
  printf("# driver %d: cuMemcpyBatchAsync %s, cuMemcpy3DBatchAsync %s, "
         "cuMemcpyWithAttributesAsync %s, cuMemcpy3DWithAttributesAsync %s\n",
         cc_drv.version, cc_drv.fn_cuMemcpyBatchAsync ? "present" : "absent (the loop)",
         cc_drv.fn_cuMemcpy3DBatchAsync ? "present" : "absent (the loop)",
         cc_drv.fn_cuMemcpyWithAttributesAsync ? "present" : "absent",
         cc_drv.fn_cuMemcpy3DWithAttributesAsync ? "present" : "absent");
  return cucore_stream_create(dev, CUCORE_STREAM_NON_BLOCKING, 0, &s) == CUCORE_OK ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  cucore_stream_destroy(s);
  return cucore_device_close(dev) == CUCORE_OK ? 0 : -1;
}

/* The buffers of the 1 000 copies: copies 0..333 host `in` -> device `h2d`, 334..666 device
 * `src` -> device `d2d`, 667..999 device `src` -> host `out`; slot i of each is SZ bytes. */
typedef struct work {
  unsigned char *in, *out, *ref;
  cucore_devptr h2d, src, d2d;
  cucore_copy_desc c[N];
} work;

static void work_make(work *w) {
  const size_t bytes = (size_t)N * SZ;
  assert_ok(cucore_host_alloc(dev, bytes, (void **)&w->in));
  assert_ok(cucore_host_alloc(dev, bytes, (void **)&w->out));
  w->ref = malloc(bytes);
  assert_non_null(w->ref);
  assert_ok(cucore_mem_alloc(dev, bytes, &w->h2d));
  assert_ok(cucore_mem_alloc(dev, bytes, &w->src));
  assert_ok(cucore_mem_alloc(dev, bytes, &w->d2d));
  for (size_t i = 0; i < bytes; i++) w->ref[i] = (unsigned char)(i * 131u + 7u);
  memcpy(w->in, w->ref, bytes);
  assert_ok(cucore_memcpy_htod(dev, w->src, w->ref, bytes, NULL));
  for (size_t i = 0; i < N; i++) {
    size_t off = i * SZ;
    if (i < THIRD)
      w->c[i] = (cucore_copy_desc){w->h2d + off, CUCORE_HOST_ADDR(w->in + off), SZ};
    else if (i < 2 * THIRD)
      w->c[i] = (cucore_copy_desc){w->d2d + off, w->src + off, SZ};
    else
      w->c[i] = (cucore_copy_desc){CUCORE_HOST_ADDR(w->out + off), w->src + off, SZ};
  }
}

static void work_clear(work *w) {
  const size_t bytes = (size_t)N * SZ;
  memset(w->out, 0, bytes);
  assert_ok(cucore_memset_d8(dev, w->h2d, 0, bytes, NULL));
  assert_ok(cucore_memset_d8(dev, w->d2d, 0, bytes, NULL));
}

/* Every slot each copy wrote holds the reference bytes. */
static void work_check(work *w) {
  const size_t bytes = (size_t)N * SZ;
  unsigned char *h2d = malloc(bytes), *d2d = malloc(bytes);
  assert_non_null(h2d);
  assert_non_null(d2d);
  assert_ok(cucore_memcpy_dtoh(dev, h2d, w->h2d, bytes, NULL));
  assert_ok(cucore_memcpy_dtoh(dev, d2d, w->d2d, bytes, NULL));
  for (size_t i = 0; i < N; i++) {
    size_t off = i * SZ;
    const unsigned char *got = i < THIRD ? h2d + off : i < 2 * THIRD ? d2d + off : w->out + off;
    if (memcmp(got, w->ref + off, SZ) != 0) fail_msg("copy %zu: wrong bytes", i);
  }
  free(h2d);
  free(d2d);
}

static void work_free(work *w) {
  assert_ok(cucore_mem_free(dev, w->h2d));
  assert_ok(cucore_mem_free(dev, w->src));
  assert_ok(cucore_mem_free(dev, w->d2d));
  assert_ok(cucore_host_free(dev, w->in));
  assert_ok(cucore_host_free(dev, w->out));
  free(w->ref);
}

static const cucore_copy_attrs plain = {CUCORE_COPY_SRC_STREAM, {0, 0}, {0, 0}, 0};

/* One set per third: stream order; any order with a host source hint; overlap preferred. */
static void three_sets(cucore_copy_attrs sets[3], size_t idx[3]) {
  sets[0] = sets[1] = sets[2] = plain;
  sets[1].src_order = CUCORE_COPY_SRC_ANY;
  sets[1].dst_hint = (cucore_location){CUCORE_LOCATION_DEVICE, 0};
  sets[2].flags = CUCORE_COPY_PREFER_OVERLAP;
  sets[2].dst_hint = (cucore_location){CUCORE_LOCATION_HOST, 0};
  idx[0] = 0, idx[1] = THIRD, idx[2] = 2 * THIRD;
}

static void thousand_copies_in_one_batch(void **state) {
  (void)state;
  work *w = calloc(1, sizeof *w);
  assert_non_null(w);
  work_make(w);
  cucore_copy_attrs sets[3];
  size_t idx[3], failed = 0;
  three_sets(sets, idx);
  for (int loop = 0; loop < 2; loop++) {
    /* loop 1: as on a driver before CUDA 12.8 (the entry point taken away). */
    PFN_cuMemcpyBatchAsync_v12080 saved = cc_drv.fn_cuMemcpyBatchAsync;
    if (loop) cc_drv.fn_cuMemcpyBatchAsync = NULL;
    work_clear(w);
    assert_ok(cucore_memcpy_batch(dev, w->c, N, NULL, NULL, 0, s, &failed));
    assert_int_equal(failed, CUCORE_COPY_NO_INDEX);
    assert_ok(cucore_stream_synchronize(s));
    work_check(w);
    work_clear(w);
    assert_ok(cucore_memcpy_batch(dev, w->c, N, sets, idx, 3, s, &failed));
    assert_ok(cucore_stream_synchronize(s));
    work_check(w);
    cc_drv.fn_cuMemcpyBatchAsync = saved;
  }
  work_free(w);
  free(w);
}

static void source_read_during_the_call(void **state) {
  (void)state;
  cucore_devptr d = 0;
  assert_ok(cucore_mem_alloc(dev, 64 * 16, &d));
  cucore_copy_attrs during = plain;
  during.src_order = CUCORE_COPY_SRC_DURING_CALL;
  for (int loop = 0; loop < 2; loop++) {
    PFN_cuMemcpyBatchAsync_v12080 saved = cc_drv.fn_cuMemcpyBatchAsync;
    if (loop) cc_drv.fn_cuMemcpyBatchAsync = NULL;
    unsigned char stack[64 * 16], back[64 * 16];
    cucore_copy_desc c[16];
    for (int i = 0; i < 64 * 16; i++) stack[i] = (unsigned char)(i ^ 0x3c ^ loop);
    for (int i = 0; i < 16; i++)
      c[i] = (cucore_copy_desc){d + (size_t)i * 64, CUCORE_HOST_ADDR(stack + i * 64), 64};
    assert_ok(cucore_memcpy_batch(dev, c, 16, &during, NULL, 1, s, NULL));
    unsigned char want[64 * 16];
    memcpy(want, stack, sizeof want);
    memset(stack, 0xee, sizeof stack); /* the source is gone once the call returned */
    assert_ok(cucore_stream_synchronize(s));
    assert_ok(cucore_memcpy_dtoh(dev, back, d, sizeof back, NULL));
    assert_memory_equal(back, want, sizeof want);
    cc_drv.fn_cuMemcpyBatchAsync = saved;
  }
  assert_ok(cucore_mem_free(dev, d));
}

static void attributed_single_copy(void **state) {
  (void)state;
  cucore_devptr a = 0, b = 0;
  unsigned char in[4096], out[4096];
  for (int i = 0; i < 4096; i++) in[i] = (unsigned char)(i * 13 + 1);
  assert_ok(cucore_mem_alloc(dev, 4096, &a));
  assert_ok(cucore_mem_alloc(dev, 4096, &b));
  cucore_copy_attrs at = plain;
  at.flags = CUCORE_COPY_PREFER_OVERLAP;
  at.src_order = CUCORE_COPY_SRC_DURING_CALL;
  assert_ok(cucore_memcpy_with_attributes(dev, a, CUCORE_HOST_ADDR(in), 4096, &at, s));
  at.src_order = CUCORE_COPY_SRC_STREAM;
  assert_ok(cucore_memcpy_with_attributes(dev, b, a, 4096, &at, s));
  assert_ok(cucore_stream_synchronize(s));
  assert_ok(cucore_memcpy_dtoh(dev, out, b, 4096, NULL));
  assert_memory_equal(out, in, 4096);
  assert_status(cucore_memcpy_with_attributes(dev, b + 1, a, 4096, &at, s), CUCORE_OUT_OF_BOUNDS);
  assert_ok(cucore_mem_free(dev, a));
  assert_ok(cucore_mem_free(dev, b));
}

static void captured_batch_replayed(void **state) {
  (void)state;
  work *w = calloc(1, sizeof *w);
  assert_non_null(w);
  work_make(w);
  work_clear(w);
  cucore_graph *g = NULL;
  cucore_graph_exec *e = NULL;
  assert_ok(cucore_stream_begin_capture(s, CUCORE_CAPTURE_GLOBAL));
  cucore_status st = cucore_memcpy_batch(dev, w->c, N, NULL, NULL, 0, s, NULL);
  if (st != CUCORE_OK) printf("# in a capture: %s\n", cucore_last_error());
  assert_ok(cucore_stream_end_capture(s, &g));
  assert_int_equal(st, CUCORE_OK);
  assert_ok(cucore_graph_instantiate(g, 0, NULL, &e));
  assert_ok(cucore_graph_launch(e, s));
  assert_ok(cucore_stream_synchronize(s));
  work_check(w);
  assert_ok(cucore_graph_exec_destroy(e));
  assert_ok(cucore_graph_destroy(g));
  work_free(w);
  free(w);
}

static void refused_by_index_nothing_issued(void **state) {
  (void)state;
  work *w = calloc(1, sizeof *w);
  assert_non_null(w);
  work_make(w);
  work_clear(w);
  w->c[500].bytes = SZ + (size_t)N * SZ; /* runs past d2d */
  size_t failed = 0;
  assert_status(cucore_memcpy_batch(dev, w->c, N, NULL, NULL, 0, s, &failed), CUCORE_OUT_OF_BOUNDS);
  assert_int_equal(failed, 500);
  assert_non_null(strstr(cucore_last_error(), "(copy 500 of 1000)"));
  assert_ok(cucore_stream_synchronize(s));
  unsigned char first[SZ];
  assert_ok(cucore_memcpy_dtoh(dev, first, w->h2d, SZ, NULL));
  for (int i = 0; i < SZ; i++) assert_int_equal(first[i], 0); /* copy 0 was not issued */
  work_free(w);
  free(w);
}

/* 3D batches: pitched host regions into a device buffer and back, and a host -> array ->
 * host round trip through a 2D float array (offsets and widths in whole elements), each path
 * (batch, loop) giving the CPU's bytes; the attributed 3D copy. */
static void regions_and_arrays_in_3d(void **state) {
  (void)state;
  enum { W = 64, H = 16, D = 4 };
  unsigned char *src = malloc(W * H * D), *back = calloc(W * H * D + W * 8, 1);
  assert_non_null(src);
  assert_non_null(back);
  for (int i = 0; i < W * H * D; i++) src[i] = (unsigned char)(i * 29 + 3);
  cucore_devptr dev_buf = 0;
  assert_ok(cucore_mem_alloc(dev, 32 * 8 * D, &dev_buf));
  cucore_array *arr = NULL;
  cucore_array_desc ad = {16, 8, 0, CUCORE_FORMAT_FLOAT, 1, 0}; /* 16 floats x 8 rows */
  assert_ok(cucore_array_create(dev, &ad, &arr));
  for (int loop = 0; loop < 2; loop++) {
    PFN_cuMemcpy3DBatchAsync_v12080 saved = cc_drv.fn_cuMemcpy3DBatchAsync;
    if (loop) cc_drv.fn_cuMemcpy3DBatchAsync = NULL;
    memset(back, 0, W * H * D + W * 8);
    /* 0: host (x 8, row 2) -> device, 24 bytes x 6 rows x 4 slices, pitch 32, 8 rows a slice;
     * 1: host (x 0, row 0) -> array (x 8 bytes = 2 floats, row 1), 32 bytes x 5 rows. */
    cucore_copy_3d c[2] = {{0}, {0}};
    c[0].src = CUCORE_HOST_ADDR(src), c[0].src_pitch = W, c[0].src_height = H;
    c[0].src_x_bytes = 8, c[0].src_y = 2;
    c[0].dst = dev_buf, c[0].dst_pitch = 32, c[0].dst_height = 8;
    c[0].width_bytes = 24, c[0].height = 6, c[0].depth = D;
    c[1].src = CUCORE_HOST_ADDR(src), c[1].src_pitch = W, c[1].src_height = H;
    c[1].dst_array = arr, c[1].dst_x_bytes = 8, c[1].dst_y = 1;
    c[1].width_bytes = 32, c[1].height = 5, c[1].depth = 1;
    assert_ok(cucore_memcpy_3d_batch(dev, c, 2, NULL, NULL, 0, s, NULL));
    /* Back: region 0 to its place in `back`, the array's rows after `back`'s slices. */
    cucore_copy_3d r[2] = {c[0], c[1]};
    r[0].src = dev_buf, r[0].src_pitch = 32, r[0].src_height = 8, r[0].src_x_bytes = 0;
    r[0].src_y = 0, r[0].dst = CUCORE_HOST_ADDR(back), r[0].dst_pitch = W, r[0].dst_height = H;
    r[0].dst_x_bytes = 8, r[0].dst_y = 2;
    r[1].src = 0, r[1].src_pitch = 0, r[1].src_height = 0, r[1].src_array = arr;
    r[1].src_x_bytes = 8, r[1].src_y = 1, r[1].dst_array = NULL, r[1].dst_x_bytes = 0;
    r[1].dst_y = 0;
    r[1].dst = CUCORE_HOST_ADDR(back + W * H * D), r[1].dst_pitch = W, r[1].dst_height = H;
    assert_ok(cucore_memcpy_3d_batch(dev, r, 2, NULL, NULL, 0, s, NULL));
    assert_ok(cucore_stream_synchronize(s));
    for (int z = 0; z < D; z++)
      for (int y = 0; y < 6; y++)
        assert_memory_equal(back + (z * H + 2 + y) * W + 8, src + (z * H + 2 + y) * W + 8, 24);
    for (int y = 0; y < 5; y++) assert_memory_equal(back + W * H * D + y * W, src + y * W, 32);
    cc_drv.fn_cuMemcpy3DBatchAsync = saved;
  }
  /* Not whole floats: refused before the driver. */
  cucore_copy_3d bad = {0};
  bad.src = CUCORE_HOST_ADDR(src), bad.src_pitch = W, bad.dst_array = arr;
  bad.width_bytes = 6, bad.height = 1, bad.depth = 1;
  assert_status(cucore_memcpy_3d_batch(dev, &bad, 1, NULL, NULL, 0, s, NULL),
                CUCORE_INVALID_ARGUMENT);
  assert_non_null(strstr(cucore_last_error(), "not a whole number of the array's 4-byte"));
  /* The attributed 3D copy. */
  cucore_copy_3d one = {0};
  one.src = CUCORE_HOST_ADDR(src), one.src_pitch = W, one.dst = dev_buf, one.dst_pitch = 32;
  one.width_bytes = 32, one.height = 8, one.depth = 1;
  assert_ok(cucore_memcpy_3d_with_attributes(dev, &one, &plain, s));
  assert_ok(cucore_stream_synchronize(s));
  unsigned char rows[32 * 8];
  assert_ok(cucore_memcpy_dtoh(dev, rows, dev_buf, sizeof rows, NULL));
  for (int y = 0; y < 8; y++) assert_memory_equal(rows + y * 32, src + y * W, 32);
  assert_ok(cucore_array_destroy(arr));
  assert_ok(cucore_mem_free(dev, dev_buf));
  free(src);
  free(back);
}

int main(void) {
  if (!cucore_test_have_gpu()) return CUCORE_TEST_SKIP;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(thousand_copies_in_one_batch),
      cmocka_unit_test(source_read_during_the_call),
      cmocka_unit_test(attributed_single_copy),
      cmocka_unit_test(captured_batch_replayed),
      cmocka_unit_test(refused_by_index_nothing_issued),
      cmocka_unit_test(regions_and_arrays_in_3d),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
