/* test_copy_batch.c -- batched and attributed copies through the fake driver
 * (tests/fake/fake_copy_batch.c): every copy checked before any is issued, a refusal naming the
 * copy's index; the attribute sets checked (order, flags, hints, the index rules) and turned into
 * the driver's runs (copies of 0 bytes skipped); the driver's failed index mapped back to the
 * caller's copy; the loop of cuMemcpyAsync when the batched entry point is missing (the same
 * bytes, a wait for the stream when a source is read during the call); the attributed single
 * copy through CUDA 13.2's entry point, else a batch of one, else the loop; in a capture the
 * copies made one by one (the driver does not capture the batch), a source read during the call
 * refused there; 3D batches and the attributed 3D copy the same way
 * (footprints checked as cucore_memcpy_3d checks them, each path giving the same bytes). */
#include "support.h"

#include "loader/loader.h"
#include "memory/memory.h" /* a record marked read-only, as a DLPack import makes it */

#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifndef CUCORE_FAKE_DRIVER_PATH
#error "CUCORE_FAKE_DRIVER_PATH is set by tests/CMakeLists.txt"
#endif

/* As fake_copy_batch.c keeps it. */
typedef struct fake_copy_stats_t {
  long batch_calls, attr_calls;
  size_t last_count, last_nattrs;
  CUmemcpyAttributes last_attrs[8];
  size_t last_idxs[8];
} fake_copy_stats_t;

static const fake_copy_stats_t *stats;
static cucore_device *dev;
static cucore_stream *s;
static PFN_cuMemcpyBatchAsync_v12080 real_batch;
static PFN_cuMemcpyWithAttributesAsync_v13020 real_attr;
static PFN_cuMemcpyAsync_v4000 real_copy;
static PFN_cuStreamSynchronize_v2000 real_sync;
static long loop_copies, syncs, fail_copy_at;

static CUresult counting_copy(CUdeviceptr d, CUdeviceptr src, size_t n, CUstream h) {
  if (++loop_copies == fail_copy_at) return CUDA_ERROR_INVALID_VALUE;
  return real_copy(d, src, n, h);
}

static CUresult counting_sync(CUstream h) {
  syncs++;
  return real_sync(h);
}

static CUresult always_capturing(CUstream h, CUstreamCaptureStatus *cs) {
  (void)h;
  *cs = CU_STREAM_CAPTURE_STATUS_ACTIVE;
  return CUDA_SUCCESS;
}

/* The entry points as the loaded (fake) driver has them: batch present or not, the 13.2
 * attributed copy present or not; the single copies and stream waits counted. */
static void drivers(int batch, int attr) {
  cc_drv.fn_cuMemcpyBatchAsync = batch ? real_batch : NULL;
  cc_drv.fn_cuMemcpyWithAttributesAsync = attr ? real_attr : NULL;
  cc_drv.fn_cuMemcpyAsync = counting_copy;
  cc_drv.fn_cuStreamSynchronize = counting_sync;
  loop_copies = syncs = 0;
}

static int open_fake(void **state) {
  (void)state;
  setenv("CUCORE_LIBCUDA", CUCORE_FAKE_DRIVER_PATH, 1);
  setenv("CUCORE_FAKE_DRIVER_VERSION", "13020", 1);
  if (cucore_device_open(0, &dev) != CUCORE_OK) return -1;
  void *lib = dlopen(CUCORE_FAKE_DRIVER_PATH, RTLD_NOW | RTLD_NOLOAD);
  const fake_copy_stats_t *(*get)(
      void) = lib ? (const fake_copy_stats_t *(*)(void))dlsym(lib, "fake_copy_stats") : NULL;
  if (!get) return -1;
  stats = get();
  real_batch = cc_drv.fn_cuMemcpyBatchAsync;
  real_attr = cc_drv.fn_cuMemcpyWithAttributesAsync;
  real_copy = cc_drv.fn_cuMemcpyAsync;
  real_sync = cc_drv.fn_cuStreamSynchronize;
  if (!real_batch || !real_attr || !real_copy || !real_sync) return -1;
  return cucore_stream_create(dev, CUCORE_STREAM_NON_BLOCKING, 0, &s) == CUCORE_OK ? 0 : -1;
}

static int close_fake(void **state) {
  (void)state;
  cc_drv.fn_cuMemcpyAsync = real_copy;
  cc_drv.fn_cuStreamSynchronize = real_sync;
  cucore_stream_destroy(s);
  return cucore_device_close(dev) == CUCORE_OK ? 0 : -1;
}

/* Three device buffers and host bytes: copies H2D into a, D2D a -> b, D2H b -> out. */
typedef struct bufs {
  cucore_devptr a, b;
  unsigned char in[256], out[256];
} bufs;

static void bufs_make(bufs *m) {
  assert_ok(cucore_mem_alloc(dev, 256, &m->a));
  assert_ok(cucore_mem_alloc(dev, 256, &m->b));
  for (int i = 0; i < 256; i++) m->in[i] = (unsigned char)(i * 7 + 1);
  memset(m->out, 0, sizeof m->out);
}

static void bufs_free(bufs *m) {
  assert_ok(cucore_mem_free(dev, m->a));
  assert_ok(cucore_mem_free(dev, m->b));
}

static void refusals_name_the_copy(void **state) {
  (void)state;
  drivers(1, 1);
  bufs m;
  bufs_make(&m);
  cucore_copy_desc c[3] = {{m.a, CUCORE_HOST_ADDR(m.in), 256},
                           {m.b + 128, m.a, 256}, /* 128 bytes past the end of b */
                           {CUCORE_HOST_ADDR(m.out), m.b, 256}};
  size_t failed = 0;
  long before = stats->batch_calls;
  assert_status(cucore_memcpy_batch(dev, c, 3, NULL, NULL, 0, s, &failed), CUCORE_OUT_OF_BOUNDS);
  assert_int_equal(failed, 1);
  assert_contains(cucore_last_error(), "cucore_memcpy_batch (copy 1 of 3): the destination runs "
                                       "past the end of its allocation");
  assert_int_equal(stats->batch_calls, before); /* nothing issued */
  assert_int_equal(m.out[0], 0);
  c[1] = (cucore_copy_desc){m.b, 0, 16};
  assert_status(cucore_memcpy_batch(dev, c, 3, NULL, NULL, 0, s, &failed), CUCORE_INVALID_ARGUMENT);
  assert_int_equal(failed, 1);
  assert_contains(cucore_last_error(), "(copy 1 of 3): the source is NULL/0");
  c[1] = (cucore_copy_desc){m.b, m.a, (size_t)-8};
  assert_status(cucore_memcpy_batch(dev, c, 3, NULL, NULL, 0, s, &failed), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "negative value");
  c[1] = (cucore_copy_desc){m.b, m.a, 256};
  c[2].src = m.b + 1; /* the source runs 1 byte past b */
  assert_status(cucore_memcpy_batch(dev, c, 3, NULL, NULL, 0, s, &failed), CUCORE_OUT_OF_BOUNDS);
  assert_int_equal(failed, 2);
  assert_contains(cucore_last_error(), "(copy 2 of 3): the source runs past");
  /* Copies inside the records a full check passed pass without one; one past the end after
   * them is still checked and refused. */
  cucore_copy_desc run[9];
  for (int i = 0; i < 8; i++) run[i] = (cucore_copy_desc){m.b + 16 * (size_t)i, m.a + 32, 16};
  run[8] = (cucore_copy_desc){m.b + 250, m.a, 16};
  assert_status(cucore_memcpy_batch(dev, run, 9, NULL, NULL, 0, s, &failed), CUCORE_OUT_OF_BOUNDS);
  assert_int_equal(failed, 8);
  assert_contains(cucore_last_error(), "(copy 8 of 9): the destination runs past");
  run[8] = (cucore_copy_desc){m.b, m.a + 250, 16};
  assert_status(cucore_memcpy_batch(dev, run, 9, NULL, NULL, 0, s, &failed), CUCORE_OUT_OF_BOUNDS);
  assert_contains(cucore_last_error(), "(copy 8 of 9): the source runs past");
  run[8] = (cucore_copy_desc){m.b + 8, m.a, (size_t)-8};
  assert_status(cucore_memcpy_batch(dev, run, 9, NULL, NULL, 0, s, &failed),
                CUCORE_INVALID_ARGUMENT);
  assert_int_equal(failed, 8);
  /* Not a copy's fault: no index. */
  assert_status(cucore_memcpy_batch(dev, c, 0, NULL, NULL, 0, s, &failed), CUCORE_INVALID_ARGUMENT);
  assert_int_equal(failed, CUCORE_COPY_NO_INDEX);
  assert_status(cucore_memcpy_batch(dev, c, 3, NULL, NULL, 0, NULL, &failed),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "queued on a stream");
  /* The legacy default stream: refused on every driver (the driver's rule for batches). */
  cucore_stream *legacy = NULL;
  assert_ok(cucore_stream_default(dev, &legacy));
  assert_status(cucore_memcpy_batch(dev, c, 3, NULL, NULL, 0, legacy, &failed),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "the legacy default stream");
  /* A destroyed stream is misuse, named, not a crash. */
  cucore_stream *gone = NULL;
  assert_ok(cucore_stream_create(dev, CUCORE_STREAM_NON_BLOCKING, 0, &gone));
  assert_ok(cucore_stream_destroy(gone));
  assert_status(cucore_memcpy_batch(dev, c, 3, NULL, NULL, 0, gone, &failed), CUCORE_MISUSE);
  assert_contains(cucore_last_error(), "cucore_memcpy_batch");
  assert_int_equal(stats->batch_calls, before);
  bufs_free(&m);
}

static const cucore_copy_attrs plain = {CUCORE_COPY_SRC_STREAM, {0, 0}, {0, 0}, 0};

static void attributes_checked(void **state) {
  (void)state;
  drivers(1, 1);
  bufs m;
  bufs_make(&m);
  cucore_copy_desc c[2] = {{m.a, CUCORE_HOST_ADDR(m.in), 64}, {m.b, CUCORE_HOST_ADDR(m.in), 64}};
  cucore_copy_attrs a[2] = {plain, plain};
  size_t idx[2] = {0, 1};
  a[1].src_order = (cucore_copy_src_order)0; /* a zeroed set */
  assert_status(cucore_memcpy_batch(dev, c, 2, a, idx, 2, s, NULL), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "attributes 1: src_order 0 is not");
  a[1] = plain;
  a[1].flags = 6;
  assert_status(cucore_memcpy_batch(dev, c, 2, a, idx, 2, s, NULL), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "unknown flags 0x6");
  a[1] = plain;
  a[1].dst_hint = (cucore_location){CUCORE_LOCATION_DEVICE, 9};
  assert_status(cucore_memcpy_batch(dev, c, 2, a, idx, 2, s, NULL), CUCORE_INVALID_DEVICE);
  a[1] = plain;
  idx[0] = 1;
  assert_status(cucore_memcpy_batch(dev, c, 2, a, idx, 2, s, NULL), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "attr_index[0] is 1");
  idx[0] = 0, idx[1] = 2;
  assert_status(cucore_memcpy_batch(dev, c, 2, a, idx, 2, s, NULL), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "attr_index[1] is 2 after 0");
  assert_status(cucore_memcpy_batch(dev, c, 1, a, idx, 2, s, NULL), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "2 attribute sets for 1 copies");
  assert_status(cucore_memcpy_batch(dev, c, 2, a, NULL, 2, s, NULL), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_memcpy_batch(dev, c, 2, NULL, NULL, 1, s, NULL), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_memcpy_batch(dev, c, 2, a, NULL, 0, s, NULL), CUCORE_INVALID_ARGUMENT);
  cucore_copy_attrs z = plain;
  z.src_order = (cucore_copy_src_order)4;
  assert_status(cucore_memcpy_with_attributes(dev, m.a, m.b, 8, &z, s), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_memcpy_with_attributes(dev, m.a, m.b, 8, NULL, s), CUCORE_INVALID_ARGUMENT);
  assert_int_equal(stats->attr_calls + loop_copies, 0);
  bufs_free(&m);
}

/* The copies of `c` (H2D a, D2D a -> b, D2H b -> out) with `a` as the sets; the bytes arrive. */
static void round_trip(bufs *m, const cucore_copy_attrs *sets, const size_t *idx, size_t n) {
  memset(m->out, 0, sizeof m->out);
  cucore_copy_desc c[4] = {{m->a, CUCORE_HOST_ADDR(m->in), 256},
                           {m->b, m->a, 0}, /* skipped */
                           {m->b, m->a, 256},
                           {CUCORE_HOST_ADDR(m->out), m->b, 256}};
  /* In one batch the copies run in no set order: the fake runs them in order, the GPU test
   * uses independent copies. */
  size_t failed = 0;
  assert_ok(cucore_memcpy_batch(dev, c, 4, sets, idx, n, s, &failed));
  assert_int_equal(failed, CUCORE_COPY_NO_INDEX);
  assert_ok(cucore_stream_synchronize(s));
  assert_memory_equal(m->out, m->in, 256);
}

static void batch_runs_and_bytes(void **state) {
  (void)state;
  drivers(1, 1);
  bufs m;
  bufs_make(&m);
  long before = stats->batch_calls;
  round_trip(&m, NULL, NULL, 0);
  assert_int_equal(stats->batch_calls, before + 1);
  assert_int_equal(stats->last_count, 3); /* the empty copy left out */
  assert_int_equal(stats->last_nattrs, 1);
  assert_int_equal(stats->last_attrs[0].srcAccessOrder, CU_MEMCPY_SRC_ACCESS_ORDER_STREAM);
  /* Sets from copies 0, 1 (empty), 3: the driver sees runs from kept copies 0 and 2. */
  cucore_copy_attrs sets[3] = {plain, plain, plain};
  sets[0].src_order = CUCORE_COPY_SRC_ANY;
  sets[0].src_hint = (cucore_location){CUCORE_LOCATION_HOST, 0};
  sets[1].flags = CUCORE_COPY_PREFER_OVERLAP; /* only the empty copy: dropped */
  sets[2].dst_hint = (cucore_location){CUCORE_LOCATION_DEVICE, 0};
  sets[2].flags = CUCORE_COPY_PREFER_OVERLAP;
  size_t idx[3] = {0, 1, 3};
  round_trip(&m, sets, idx, 3);
  assert_int_equal(stats->last_nattrs, 3);
  assert_int_equal(stats->last_idxs[1], 1);
  assert_int_equal(stats->last_idxs[2], 2);
  assert_int_equal(stats->last_attrs[0].srcAccessOrder, CU_MEMCPY_SRC_ACCESS_ORDER_ANY);
  assert_int_equal(stats->last_attrs[0].srcLocHint.type, CU_MEM_LOCATION_TYPE_HOST);
  assert_int_equal(stats->last_attrs[2].dstLocHint.type, CU_MEM_LOCATION_TYPE_DEVICE);
  assert_int_equal(stats->last_attrs[2].flags, CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE);
  assert_int_equal(loop_copies, 0);
  bufs_free(&m);
}

static void driver_fail_index(void **state) {
  (void)state;
  drivers(1, 1);
  bufs m;
  bufs_make(&m);
  cucore_copy_desc c[4] = {{m.a, CUCORE_HOST_ADDR(m.in), 0},
                           {m.a, CUCORE_HOST_ADDR(m.in), 16},
                           {m.b, CUCORE_HOST_ADDR(m.in), 16},
                           {CUCORE_HOST_ADDR(m.out), m.a, 16}};
  setenv("CUCORE_FAKE_COPY_FAIL_AT", "1", 1); /* the driver's copy 1 is the caller's copy 2 */
  size_t failed = 0;
  assert_status(cucore_memcpy_batch(dev, c, 4, NULL, NULL, 0, s, &failed), CUCORE_INVALID_ARGUMENT);
  unsetenv("CUCORE_FAKE_COPY_FAIL_AT");
  assert_int_equal(failed, 2);
  assert_contains(cucore_last_error(), "cuMemcpyBatchAsync");
  assert_contains(cucore_last_error(), "copy 2 of 4 (16 bytes");
  /* The loop names the copy that failed too: its second call is the caller's copy 2. */
  drivers(0, 0);
  fail_copy_at = 2;
  assert_status(cucore_memcpy_batch(dev, c, 4, NULL, NULL, 0, s, &failed), CUCORE_INVALID_ARGUMENT);
  fail_copy_at = 0;
  assert_int_equal(failed, 2);
  assert_contains(cucore_last_error(), "cuMemcpyAsync");
  assert_contains(cucore_last_error(), "copy 2 of 4 (16 bytes");
  bufs_free(&m);
}

static void loop_without_batch(void **state) {
  (void)state;
  drivers(0, 0);
  bufs m;
  bufs_make(&m);
  long before = stats->batch_calls;
  round_trip(&m, NULL, NULL, 0);
  assert_int_equal(loop_copies, 3);
  assert_int_equal(syncs, 1); /* round_trip's own */
  assert_int_equal(stats->batch_calls, before);
  /* A source read during the call: the loop waits for the stream before returning. */
  cucore_copy_attrs during = plain;
  during.src_order = CUCORE_COPY_SRC_DURING_CALL;
  drivers(0, 0);
  unsigned char local[32];
  memset(local, 0x5a, sizeof local);
  cucore_copy_desc c = {m.a, CUCORE_HOST_ADDR(local), sizeof local};
  assert_ok(cucore_memcpy_batch(dev, &c, 1, &during, NULL, 1, s, NULL));
  assert_int_equal(loop_copies, 1);
  assert_int_equal(syncs, 1);
  bufs_free(&m);
}

static void attributed_single_copy(void **state) {
  (void)state;
  bufs m;
  bufs_make(&m);
  cucore_copy_attrs a = plain;
  a.flags = CUCORE_COPY_PREFER_OVERLAP;
  /* CUDA 13.2's entry point... */
  drivers(1, 1);
  long attr_before = stats->attr_calls, batch_before = stats->batch_calls;
  assert_ok(cucore_memcpy_with_attributes(dev, m.a, CUCORE_HOST_ADDR(m.in), 256, &a, s));
  assert_int_equal(stats->attr_calls, attr_before + 1);
  assert_int_equal(stats->last_attrs[0].flags, CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE);
  /* ... else a batch of one (CUDA 12.8) ... */
  drivers(1, 0);
  assert_ok(cucore_memcpy_with_attributes(dev, m.b, m.a, 256, &a, s));
  assert_int_equal(stats->batch_calls, batch_before + 1);
  assert_int_equal(stats->last_count, 1);
  /* ... else cuMemcpyAsync. */
  drivers(0, 0);
  assert_ok(cucore_memcpy_with_attributes(dev, CUCORE_HOST_ADDR(m.out), m.b, 256, &a, s));
  assert_int_equal(loop_copies, 1);
  assert_ok(cucore_stream_synchronize(s));
  assert_memory_equal(m.out, m.in, 256);
  /* Checked as cucore_memcpy checks a copy (no index: one copy). */
  assert_status(cucore_memcpy_with_attributes(dev, m.a + 200, m.b, 100, &a, s),
                CUCORE_OUT_OF_BOUNDS);
  assert_contains(cucore_last_error(), "cucore_memcpy_with_attributes: the destination runs past");
  assert_ok(cucore_memcpy_with_attributes(dev, m.a, m.b, 0, &a, s)); /* nothing to do */
  bufs_free(&m);
}

static void drivers_3d(int batch, int attr);
static PFN_cuMemcpy3DAsync_v3020 real_3d;
static long loop_3d;

static void during_call_in_capture(void **state) {
  (void)state;
  drivers(1, 1);
  bufs m;
  bufs_make(&m);
  PFN_cuStreamIsCapturing_v10000 real_is = cc_drv.fn_cuStreamIsCapturing;
  cc_drv.fn_cuStreamIsCapturing = always_capturing;
  cucore_copy_attrs during = plain;
  during.src_order = CUCORE_COPY_SRC_DURING_CALL;
  cucore_copy_desc c = {m.a, CUCORE_HOST_ADDR(m.in), 64};
  assert_status(cucore_memcpy_batch(dev, &c, 1, &during, NULL, 1, s, NULL),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "a captured copy reads its source when the graph runs");
  assert_status(cucore_memcpy_with_attributes(dev, m.a, CUCORE_HOST_ADDR(m.in), 64, &during, s),
                CUCORE_INVALID_ARGUMENT);
  /* Stream order is captured copy by copy (the driver does not capture the batch). */
  long batches = stats->batch_calls, attrs_before = stats->attr_calls;
  cucore_copy_desc two[2] = {c, {m.b, CUCORE_HOST_ADDR(m.in), 64}};
  assert_ok(cucore_memcpy_batch(dev, two, 2, &plain, NULL, 1, s, NULL));
  assert_ok(cucore_memcpy_with_attributes(dev, m.a, CUCORE_HOST_ADDR(m.in), 64, &plain, s));
  assert_int_equal(loop_copies, 3);
  assert_int_equal(syncs, 0);
  assert_int_equal(stats->batch_calls, batches);
  assert_int_equal(stats->attr_calls, attrs_before);
  drivers_3d(1, 1);
  cucore_copy_3d c3 = {0};
  c3.src = m.a, c3.dst = m.b, c3.width_bytes = 64, c3.height = 1, c3.depth = 1;
  assert_ok(cucore_memcpy_3d_batch(dev, &c3, 1, NULL, NULL, 0, s, NULL));
  assert_ok(cucore_memcpy_3d_with_attributes(dev, &c3, &plain, s));
  assert_int_equal(loop_3d, 2);
  assert_int_equal(stats->batch_calls, batches);
  cc_drv.fn_cuMemcpy3DAsync = real_3d;
  cc_drv.fn_cuStreamIsCapturing = real_is;
  assert_ok(cucore_stream_synchronize(s));
  bufs_free(&m);
}

/* ---- 3D ------------------------------------------------------------------------------------ */

/* cuMemcpy3DAsync for unified addresses (the fake has none): what the loop calls. */
static CUresult stand_in_3d(const CUDA_MEMCPY3D *m, CUstream h) {
  (void)h;
  loop_3d++;
  for (size_t z = 0; z < m->Depth; z++)
    for (size_t y = 0; y < m->Height; y++) {
      size_t so = ((m->srcZ + z) * m->srcHeight + m->srcY + y) * m->srcPitch + m->srcXInBytes;
      size_t d_o = ((m->dstZ + z) * m->dstHeight + m->dstY + y) * m->dstPitch + m->dstXInBytes;
      memmove((void *)(uintptr_t)(m->dstDevice + d_o), (const void *)(uintptr_t)(m->srcDevice + so),
              m->WidthInBytes);
    }
  return CUDA_SUCCESS;
}

static PFN_cuMemcpy3DBatchAsync_v12080 real_3d_batch;
static PFN_cuMemcpy3DWithAttributesAsync_v13020 real_3d_attr;

static void drivers_3d(int batch, int attr) {
  if (!real_3d_batch) {
    real_3d_batch = cc_drv.fn_cuMemcpy3DBatchAsync;
    real_3d_attr = cc_drv.fn_cuMemcpy3DWithAttributesAsync;
    real_3d = cc_drv.fn_cuMemcpy3DAsync;
  }
  assert_non_null(real_3d_batch);
  assert_non_null(real_3d_attr);
  cc_drv.fn_cuMemcpy3DBatchAsync = batch ? real_3d_batch : NULL;
  cc_drv.fn_cuMemcpy3DWithAttributesAsync = attr ? real_3d_attr : NULL;
  cc_drv.fn_cuMemcpy3DAsync = stand_in_3d;
  loop_3d = 0;
}

/* Source: 2 slices of 8 rows of 64 bytes; destination: 2 slices of 4 rows of 32 bytes. Copy k
 * takes 16 bytes x 4 rows x 2 slices from x 4 + k, row 1 into x 16 * (k % 2), row 0 of
 * destination k / 2. */
enum { SRC_BYTES = 2 * 8 * 64, DST_BYTES = 2 * 4 * 32 };

static cucore_copy_3d region(cucore_devptr src, cucore_devptr dst, int k) {
  cucore_copy_3d c = {0};
  c.src = src, c.src_pitch = 64, c.src_height = 8, c.src_x_bytes = 4 + (size_t)k, c.src_y = 1;
  c.dst = dst + (size_t)(k / 2) * DST_BYTES, c.dst_pitch = 32, c.dst_height = 4;
  c.dst_x_bytes = 16 * (size_t)(k % 2);
  c.width_bytes = 16, c.height = 4, c.depth = 2;
  return c;
}

static void expect_regions(const unsigned char *src, const unsigned char *dst, int n) {
  for (int k = 0; k < n; k++)
    for (int z = 0; z < 2; z++)
      for (int y = 0; y < 4; y++)
        for (int x = 0; x < 16; x++) {
          unsigned char want = src[(z * 8 + 1 + y) * 64 + 4 + k + x];
          unsigned char got = dst[(k / 2) * DST_BYTES + (z * 4 + y) * 32 + 16 * (k % 2) + x];
          if (got != want)
            fail_msg("copy %d: byte (%d, %d, %d) is %d, expected %d", k, x, y, z, got, want);
        }
}

static void batch_3d(void **state) {
  (void)state;
  cucore_devptr src = 0, dst = 0;
  assert_ok(cucore_mem_alloc(dev, SRC_BYTES, &src));
  assert_ok(cucore_mem_alloc(dev, 2 * DST_BYTES, &dst));
  unsigned char *hs = (unsigned char *)(uintptr_t)src, *hd = (unsigned char *)(uintptr_t)dst;
  for (int i = 0; i < SRC_BYTES; i++) hs[i] = (unsigned char)(i * 5 + 3);
  cucore_copy_3d c[4] = {region(src, dst, 0), region(src, dst, 1), region(src, dst, 2),
                         region(src, dst, 3)};
  for (int loop = 0; loop < 2; loop++) {
    drivers_3d(!loop, 1);
    memset(hd, 0, 2 * DST_BYTES);
    long before = stats->batch_calls;
    size_t failed = 0;
    assert_ok(cucore_memcpy_3d_batch(dev, c, 4, NULL, NULL, 0, s, &failed));
    assert_int_equal(failed, CUCORE_COPY_NO_INDEX);
    expect_regions(hs, hd, 4);
    assert_int_equal(stats->batch_calls, before + !loop);
    assert_int_equal(loop_3d, loop ? 4 : 0);
  }
  drivers_3d(1, 1);
  /* A footprint past the end, named by its index, nothing issued. */
  c[2].dst_height = 40;
  size_t failed = 0;
  long before = stats->batch_calls;
  assert_status(cucore_memcpy_3d_batch(dev, c, 4, NULL, NULL, 0, s, &failed), CUCORE_OUT_OF_BOUNDS);
  assert_int_equal(failed, 2);
  assert_contains(cucore_last_error(), "cucore_memcpy_3d_batch (copy 2 of 4): the destination");
  assert_int_equal(stats->batch_calls, before);
  /* An empty copy skipped; the driver's failed operation mapped back to the caller's copy. */
  c[2] = region(src, dst, 2);
  c[0].depth = 0;
  setenv("CUCORE_FAKE_COPY_FAIL_AT", "1", 1);
  assert_status(cucore_memcpy_3d_batch(dev, c, 4, NULL, NULL, 0, s, &failed),
                CUCORE_INVALID_ARGUMENT);
  unsetenv("CUCORE_FAKE_COPY_FAIL_AT");
  assert_int_equal(failed, 2);
  assert_contains(cucore_last_error(), "cuMemcpy3DBatchAsync");
  assert_contains(cucore_last_error(), "copy 2 of 4 (2 x 4 rows of 16 bytes)");
  /* Attributes become each operation's. */
  cucore_copy_attrs any = plain;
  any.src_order = CUCORE_COPY_SRC_ANY;
  any.src_hint = (cucore_location){CUCORE_LOCATION_HOST, 0};
  any.flags = CUCORE_COPY_PREFER_OVERLAP;
  c[0].depth = 2;
  assert_ok(cucore_memcpy_3d_batch(dev, c, 4, &any, NULL, 1, s, NULL));
  assert_int_equal(stats->last_count, 4);
  assert_int_equal(stats->last_attrs[0].srcAccessOrder, CU_MEMCPY_SRC_ACCESS_ORDER_ANY);
  assert_int_equal(stats->last_attrs[0].srcLocHint.type, CU_MEM_LOCATION_TYPE_HOST);
  assert_int_equal(stats->last_attrs[0].flags, CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE);
  cc_drv.fn_cuMemcpy3DAsync = real_3d;
  assert_ok(cucore_mem_free(dev, src));
  assert_ok(cucore_mem_free(dev, dst));
}

static void attributed_3d_copy(void **state) {
  (void)state;
  cucore_devptr src = 0, dst = 0;
  assert_ok(cucore_mem_alloc(dev, SRC_BYTES, &src));
  assert_ok(cucore_mem_alloc(dev, 2 * DST_BYTES, &dst));
  unsigned char *hs = (unsigned char *)(uintptr_t)src, *hd = (unsigned char *)(uintptr_t)dst;
  for (int i = 0; i < SRC_BYTES; i++) hs[i] = (unsigned char)(i * 11 + 1);
  cucore_copy_3d c = region(src, dst, 0);
  /* CUDA 13.2's entry point, a batch of one, the loop: the same bytes. */
  for (int path = 0; path < 3; path++) {
    drivers_3d(path < 2, path == 0);
    memset(hd, 0, 2 * DST_BYTES);
    long attr_before = stats->attr_calls, batch_before = stats->batch_calls;
    assert_ok(cucore_memcpy_3d_with_attributes(dev, &c, &plain, s));
    expect_regions(hs, hd, 1);
    assert_int_equal(stats->attr_calls - attr_before, path == 0);
    assert_int_equal(stats->batch_calls - batch_before, path == 1);
    assert_int_equal(loop_3d, path == 2);
  }
  c.src_pitch = 8; /* below the 16 bytes a row */
  assert_status(cucore_memcpy_3d_with_attributes(dev, &c, &plain, s), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "cucore_memcpy_3d_with_attributes: the source pitch 8");
  assert_status(cucore_memcpy_3d_with_attributes(dev, NULL, &plain, s), CUCORE_INVALID_ARGUMENT);
  cc_drv.fn_cuMemcpy3DAsync = real_3d;
  drivers_3d(1, 1);
  cc_drv.fn_cuMemcpy3DAsync = real_3d;
  assert_ok(cucore_mem_free(dev, src));
  assert_ok(cucore_mem_free(dev, dst));
}

/* A destination imported read-only (DLPack) is refused in a batch, also after copies from it
 * (a read-only record is never trusted from an earlier check), naming the copy. */
static void read_only_destination(void **state) {
  (void)state;
  drivers(1, 1);
  static unsigned char ro[256], other[256];
  cc_mem_rec rec = {0};
  rec.base = CUCORE_HOST_ADDR(ro), rec.size = sizeof ro, rec.kind = CUCORE_MEM_DLPACK_IMPORTED;
  rec.ordinal = -1, rec.flags = CC_REC_READ_ONLY;
  cc_begin();
  assert_ok(cc_mem_record(&rec, "test"));
  cucore_copy_desc c[4] = {{CUCORE_HOST_ADDR(other), CUCORE_HOST_ADDR(ro), 16},
                           {CUCORE_HOST_ADDR(other) + 16, CUCORE_HOST_ADDR(ro) + 16, 16},
                           {CUCORE_HOST_ADDR(ro) + 32, CUCORE_HOST_ADDR(other), 16},
                           {CUCORE_HOST_ADDR(other) + 48, CUCORE_HOST_ADDR(ro), 16}};
  size_t failed = 0;
  long before = stats->batch_calls;
  assert_status(cucore_memcpy_batch(dev, c, 4, NULL, NULL, 0, s, &failed), CUCORE_INVALID_ARGUMENT);
  assert_int_equal(failed, 2);
  assert_contains(cucore_last_error(), "(copy 2 of 4): the destination");
  assert_contains(cucore_last_error(), "read-only");
  c[2] = c[3];
  assert_ok(cucore_memcpy_batch(dev, c, 4, NULL, NULL, 0, s, &failed));
  assert_int_equal(stats->batch_calls, before + 1);
  assert_int_equal(cc_reg_take(&cc_mem_registry, rec.base, NULL, NULL, 1, NULL), CC_REG_OK);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(refusals_name_the_copy), cmocka_unit_test(attributes_checked),
      cmocka_unit_test(batch_runs_and_bytes),   cmocka_unit_test(driver_fail_index),
      cmocka_unit_test(loop_without_batch),     cmocka_unit_test(attributed_single_copy),
      cmocka_unit_test(during_call_in_capture), cmocka_unit_test(batch_3d),
      cmocka_unit_test(attributed_3d_copy),     cmocka_unit_test(read_only_destination),
  };
  return cmocka_run_group_tests(tests, open_fake, close_fake);
}
