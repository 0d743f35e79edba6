/* test_managed_batch.c -- managed memory's host NUMA locations, discard, discard-and-prefetch
 * and batched prefetch through the fake driver: argument checks (empty
 * lists, location counts, NUMA nodes the system lacks, devices that do not exist, ranges that
 * are not managed memory, named by their index); absent entry points (DRIVER_TOO_OLD naming
 * cuMemPrefetchAsync; a discard without the CUDA 13 entry point does nothing); and the
 * batched call and the fallback loop doing the same work (stand-ins set into the loaded
 * driver table record every range, location and kind of operation). */
#include "support.h"

#include "loader/loader.h"

#include <stdlib.h>

#ifndef CUCORE_FAKE_DRIVER_PATH
#error "CUCORE_FAKE_DRIVER_PATH is set by tests/CMakeLists.txt"
#endif

/* ---- stand-ins: each range the driver is asked to work on ------------------------------------ */

typedef struct op_rec {
  char kind; /* 'p' prefetch, 'd' discard, 'b' discard and prefetch */
  CUdeviceptr ptr;
  size_t bytes;
  int loc_type, loc_id;
} op_rec;

static op_rec ops[64];
static int nops, batch_calls;

static void note(char kind, CUdeviceptr p, size_t n, const CUmemLocation *loc) {
  if (nops == 64) return;
  ops[nops++] = (op_rec){kind, p, n, loc ? (int)loc->type : 0, loc ? loc->id : 0};
}

static CUresult stand_in_prefetch(CUdeviceptr p, size_t n, CUmemLocation loc, unsigned flags,
                                  CUstream s) {
  (void)s;
  if (flags) return CUDA_ERROR_INVALID_VALUE;
  note('p', p, n, &loc);
  return CUDA_SUCCESS;
}

/* The location of operation i from the driver's run arrays. */
static const CUmemLocation *loc_of(size_t i, CUmemLocation *locs, size_t *idxs, size_t nlocs) {
  size_t k = 0;
  while (k + 1 < nlocs && idxs[k + 1] <= i) k++;
  return &locs[k];
}

static CUresult check_runs(size_t count, size_t *idxs, size_t nlocs) {
  if (nlocs == 0 || nlocs > count || idxs[0] != 0) return CUDA_ERROR_INVALID_VALUE;
  for (size_t k = 1; k < nlocs; k++)
    if (idxs[k] <= idxs[k - 1] || idxs[k] >= count) return CUDA_ERROR_INVALID_VALUE;
  return CUDA_SUCCESS;
}

/* A batch with locations, noted range by range as `kind`. */
static CUresult note_batch(char kind, CUdeviceptr *p, size_t *n, size_t count, CUmemLocation *locs,
                           size_t *idxs, size_t nlocs, unsigned long long flags) {
  batch_calls++;
  if (flags || check_runs(count, idxs, nlocs) != CUDA_SUCCESS) return CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; i < count; i++) note(kind, p[i], n[i], loc_of(i, locs, idxs, nlocs));
  return CUDA_SUCCESS;
}

static CUresult stand_in_prefetch_batch(CUdeviceptr *p, size_t *n, size_t count,
                                        CUmemLocation *locs, size_t *idxs, size_t nlocs,
                                        unsigned long long flags, CUstream s) {
  (void)s;
  return note_batch('p', p, n, count, locs, idxs, nlocs, flags);
}

static CUresult stand_in_discard_batch(CUdeviceptr *p, size_t *n, size_t count,
                                       unsigned long long flags, CUstream s) {
  (void)s;
  batch_calls++;
  if (flags) return CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; i < count; i++) note('d', p[i], n[i], NULL);
  return CUDA_SUCCESS;
}

static CUresult stand_in_discard_prefetch_batch(CUdeviceptr *p, size_t *n, size_t count,
                                                CUmemLocation *locs, size_t *idxs, size_t nlocs,
                                                unsigned long long flags, CUstream s) {
  (void)s;
  return note_batch('b', p, n, count, locs, idxs, nlocs, flags);
}

static void drivers(int single, int batched) {
  cc_drv.fn_cuMemPrefetchAsync = single ? stand_in_prefetch : NULL;
  cc_drv.fn_cuMemPrefetchBatchAsync = batched ? stand_in_prefetch_batch : NULL;
  cc_drv.fn_cuMemDiscardBatchAsync = batched ? stand_in_discard_batch : NULL;
  cc_drv.fn_cuMemDiscardAndPrefetchBatchAsync = batched ? stand_in_discard_prefetch_batch : NULL;
  nops = batch_calls = 0;
}

static cucore_device *dev;
static cucore_stream *s;

static int open_fake(void **state) {
  (void)state;
  setenv("CUCORE_LIBCUDA", CUCORE_FAKE_DRIVER_PATH, 1);
  if (cucore_device_open(0, &dev) != CUCORE_OK) return -1;
  return cucore_stream_create(dev, CUCORE_STREAM_NON_BLOCKING, 0, &s) == CUCORE_OK ? 0 : -1;
}

static int close_fake(void **state) {
  (void)state;
  cucore_stream_destroy(s);
  return cucore_device_close(dev) == CUCORE_OK ? 0 : -1;
}

/* Addresses cucore did not record pass its range checks (as foreign managed memory would). */
static const cucore_mem_range ranges[4] = {{0x7d0000000000ull, 4096},
                                           {0x7d0000100000ull, 65536},
                                           {0x7d0000200000ull, 100},
                                           {0x7d0000300000ull, 1 << 20}};
static const cucore_location where[4] = {{CUCORE_LOCATION_DEVICE, 0},
                                         {CUCORE_LOCATION_DEVICE, 0},
                                         {CUCORE_LOCATION_HOST_NUMA, 0},
                                         {CUCORE_LOCATION_HOST, 0}};

static void argument_checks(void **state) {
  (void)state;
  drivers(1, 1);
  assert_status(cucore_mem_prefetch_batch(NULL, 2, where, 1, s), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_mem_prefetch_batch(ranges, 0, where, 1, s), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "no ranges");
  assert_status(cucore_mem_prefetch_batch(ranges, 4, where, 2, s), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "2 locations for 4 ranges");
  assert_status(cucore_mem_prefetch_batch(ranges, 4, NULL, 1, s), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_mem_prefetch_batch(ranges, 4, where, 4, NULL), CUCORE_INVALID_ARGUMENT);
  cucore_location bad[4] = {where[0], where[1], {CUCORE_LOCATION_HOST_NUMA, -1}, where[3]};
  assert_status(cucore_mem_prefetch_batch(ranges, 4, bad, 4, s), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "range 2");
  assert_contains(cucore_last_error(), "NUMA node -1");
  bad[2].id = 4000;
  assert_status(cucore_mem_prefetch_batch(ranges, 4, bad, 4, s), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "NUMA node 4000 does not exist");
  bad[2] = (cucore_location){CUCORE_LOCATION_DEVICE, 7};
  assert_status(cucore_mem_prefetch_batch(ranges, 4, bad, 4, s), CUCORE_INVALID_DEVICE);
  assert_status(cucore_mem_prefetch(ranges[0].ptr, 64, bad[2], s), CUCORE_INVALID_DEVICE);
  cucore_location numa_bad = {CUCORE_LOCATION_HOST_NUMA, 4000};
  assert_status(cucore_mem_advise(ranges[0].ptr, 64, CUCORE_ADVISE_PREFERRED_LOCATION, numa_bad),
                CUCORE_INVALID_ARGUMENT);
  /* A range in device memory is not managed memory: refused, named by its index. */
  cucore_devptr d = 0;
  assert_ok(cucore_mem_alloc(dev, 4096, &d));
  cucore_mem_range mixed[2] = {ranges[0], {d, 4096}};
  assert_status(cucore_mem_discard_batch(mixed, 2, s), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "range 1");
  assert_contains(cucore_last_error(), "managed memory");
  mixed[1] = (cucore_mem_range){ranges[1].ptr, 0};
  assert_status(cucore_mem_discard_batch(mixed, 2, s), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_mem_discard(0, 64, s), CUCORE_INVALID_ARGUMENT);
  assert_ok(cucore_mem_free(dev, d));
  assert_int_equal(nops + batch_calls, 0);
}

static void absent_entry_points(void **state) {
  (void)state;
  drivers(0, 0);
  assert_status(cucore_mem_prefetch_batch(ranges, 4, where, 4, s), CUCORE_DRIVER_TOO_OLD);
  assert_contains(cucore_last_error(), "cuMemPrefetchAsync");
  assert_status(cucore_mem_discard_prefetch(ranges[0].ptr, 64, where[0], s), CUCORE_DRIVER_TOO_OLD);
  /* A discard the driver cannot do is a discard that kept the contents. */
  assert_ok(cucore_mem_discard(ranges[0].ptr, 64, s));
  assert_ok(cucore_mem_discard_batch(ranges, 4, s));
  assert_int_equal(nops, 0);
}

static int same_ops(const op_rec *a, int na, const op_rec *b, int nb) {
  if (na != nb) return 0;
  for (int i = 0; i < na; i++)
    if (a[i].kind != b[i].kind || a[i].ptr != b[i].ptr || a[i].bytes != b[i].bytes ||
        a[i].loc_type != b[i].loc_type || a[i].loc_id != b[i].loc_id)
      return 0;
  return 1;
}

static void batched_and_loop_agree(void **state) {
  (void)state;
  op_rec loop[64];
  /* Per-range locations, runs of equal ones: the loop on an older driver... */
  drivers(1, 0);
  assert_ok(cucore_mem_prefetch_batch(ranges, 4, where, 4, s));
  int nloop = nops;
  memcpy(loop, ops, sizeof ops);
  assert_int_equal(nloop, 4);
  assert_int_equal(loop[2].loc_type, CU_MEM_LOCATION_TYPE_HOST_NUMA);
  assert_int_equal(loop[3].loc_type, CU_MEM_LOCATION_TYPE_HOST);
  /* ... and the batched entry point do the same. */
  drivers(1, 1);
  assert_ok(cucore_mem_prefetch_batch(ranges, 4, where, 4, s));
  assert_int_equal(batch_calls, 1);
  assert_true(same_ops(loop, nloop, ops, nops));
  /* One location for all. */
  drivers(1, 0);
  assert_ok(cucore_mem_prefetch_batch(ranges, 3, &where[2], 1, s));
  nloop = nops;
  memcpy(loop, ops, sizeof ops);
  drivers(1, 1);
  assert_ok(cucore_mem_prefetch_batch(ranges, 3, &where[2], 1, s));
  assert_true(same_ops(loop, nloop, ops, nops));
  /* The calling thread's node. */
  cucore_location cur = {CUCORE_LOCATION_HOST_NUMA_CURRENT, 0};
  assert_ok(cucore_mem_prefetch_batch(ranges, 2, &cur, 1, s));
  assert_int_equal(ops[nops - 1].loc_type, CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT);
}

static void discard_forms(void **state) {
  (void)state;
  drivers(1, 1);
  assert_ok(cucore_mem_discard(ranges[1].ptr, ranges[1].bytes, s));
  assert_ok(cucore_mem_discard_batch(ranges, 4, s));
  assert_int_equal(nops, 5);
  for (int i = 0; i < nops; i++) assert_int_equal(ops[i].kind, 'd');
  assert_int_equal(ops[0].ptr, ranges[1].ptr);
  nops = 0;
  assert_ok(cucore_mem_discard_prefetch_batch(ranges, 4, where, 4, s));
  assert_int_equal(nops, 4);
  assert_int_equal(ops[3].kind, 'b');
  assert_int_equal(ops[2].loc_type, CU_MEM_LOCATION_TYPE_HOST_NUMA);
  /* Without CUDA 13: discard-and-prefetch is the prefetch alone. */
  drivers(1, 0);
  assert_ok(cucore_mem_discard_prefetch(ranges[0].ptr, 64, where[2], s));
  assert_int_equal(nops, 1);
  assert_int_equal(ops[0].kind, 'p');
  assert_int_equal(ops[0].loc_type, CU_MEM_LOCATION_TYPE_HOST_NUMA);
}

static void numa_node_of_thread(void **state) {
  (void)state;
  int node = -1;
  assert_ok(cucore_host_get_numa_node(&node));
  assert_true(node >= 0);
  assert_status(cucore_host_get_numa_node(NULL), CUCORE_INVALID_ARGUMENT);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(argument_checks),        cmocka_unit_test(absent_entry_points),
      cmocka_unit_test(batched_and_loop_agree), cmocka_unit_test(discard_forms),
      cmocka_unit_test(numa_node_of_thread),
  };
  return cmocka_run_group_tests(tests, open_fake, close_fake);
}
