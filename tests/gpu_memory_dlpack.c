/* gpu_memory_dlpack.c -- DLPack on a real GPU (label gpu): cucore allocations exported and read
 * by a consumer through the DLTensor fields alone (as another library would), the use an export
 * holds, transfers of device, pool and pinned-pool memory freed by the deleter, a tensor of
 * another library (made with the raw driver) imported, copied with bounds checks and released,
 * and a round trip; DLPack 1.x: a versioned export read the same way (version, flags, the use
 * held until its deleter), negotiation by the consumer's version, versioned imports (a writable
 * one written and read back, a read-only one refusing cucore's writes), each deleter once. */
#include "gpu_support.h"
#include "runtime/runtime.h" /* DRV(): the other library's driver calls */

#include "memory/dlpack_v1.h"

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

static cucore_tensor_desc floats2d(int64_t rows, int64_t cols) {
  cucore_tensor_desc t;
  memset(&t, 0, sizeof t);
  t.ndim = 2;
  t.shape[0] = rows;
  t.shape[1] = cols;
  t.compact = 1;
  t.dtype.code = CUCORE_DTYPE_FLOAT;
  t.dtype.bits = 32;
  t.dtype.lanes = 1;
  return t;
}

/* What a consumer does: reads the tensor through its fields and the driver, nothing of cucore. */
static void consume(const DLManagedTensor *mt, float *out) {
  const DLTensor *t = &mt->dl_tensor;
  size_t n = 1;
  for (int i = 0; i < t->ndim; i++) n *= (size_t)t->shape[i];
  CUdeviceptr src = (CUdeviceptr)(uintptr_t)t->data + t->byte_offset;
  assert_int_equal(DRV(cuMemcpyDtoH)(out, src, n * (size_t)(t->dtype.bits / 8)), CUDA_SUCCESS);
}

static int memory_is_gone(cucore_devptr p) {
  unsigned type = 0;
  return DRV(cuPointerGetAttribute)(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)p) !=
         CUDA_SUCCESS;
}

static void exports_read_by_a_consumer(void **state) {
  (void)state;
  const int R = 64, C = 64;
  float *h = malloc(sizeof(float) * R * C), *got = malloc(sizeof(float) * R * C);
  for (int i = 0; i < R * C; i++) h[i] = (float)i * 0.5f;
  cucore_devptr d = 0;
  assert_ok(cucore_mem_alloc(dev, sizeof(float) * R * C + 256, &d));
  assert_ok(cucore_memcpy_htod(dev, d + 256, h, sizeof(float) * R * C, NULL));
  cucore_tensor_desc t = floats2d(R, C);
  t.byte_offset = 256;
  void *p = NULL;
  assert_ok(cucore_dlpack_export(d, &t, 0, &p));
  DLManagedTensor *mt = p;
  assert_int_equal(mt->dl_tensor.device.device_type, kDLCUDA);
  assert_int_equal(mt->dl_tensor.device.device_id, 0);
  consume(mt, got);
  assert_memory_equal(h, got, sizeof(float) * R * C);
  assert_status(cucore_mem_free(dev, d), CUCORE_IN_USE);
  mt->deleter(mt);
  assert_ok(cucore_mem_free(dev, d));
  /* Transfers: the deleter frees device memory... */
  assert_ok(cucore_mem_alloc(dev, sizeof(float) * R * C, &d));
  t.byte_offset = 0;
  assert_ok(cucore_dlpack_export(d, &t, CUCORE_DLPACK_TRANSFER, &p));
  assert_status(cucore_mem_free(dev, d), CUCORE_IN_USE);
  assert_false(memory_is_gone(d));
  ((DLManagedTensor *)p)->deleter(p);
  assert_true(memory_is_gone(d));
  cucore_pointer_facts f;
  assert_ok(cucore_pointer_get_facts(d, &f));
  assert_int_equal(f.freed, 1);
  /* ...a created pool's allocation (its count goes down)... */
  cucore_mem_pool *pool = NULL;
  assert_ok(cucore_mem_pool_create(dev, NULL, &pool));
  assert_ok(cucore_mem_pool_alloc_async(pool, s, sizeof(float) * R * C, &d));
  assert_ok(cucore_memcpy_htod(dev, d, h, sizeof(float) * R * C, s));
  assert_ok(cucore_stream_synchronize(s));
  assert_ok(cucore_dlpack_export(d, &t, CUCORE_DLPACK_TRANSFER, &p));
  consume(p, got);
  assert_memory_equal(h, got, sizeof(float) * R * C);
  assert_status(cucore_mem_pool_destroy(pool), CUCORE_IN_USE);
  ((DLManagedTensor *)p)->deleter(p);
  cucore_mem_pool_stats st;
  assert_ok(cucore_mem_pool_get_stats(pool, &st));
  assert_int_equal(st.live_allocations, 0);
  assert_ok(cucore_mem_pool_destroy(pool));
  /* ...and a pinned-pool block goes back to its pool. */
  cucore_host_pool *hp = NULL;
  assert_ok(cucore_host_pool_create(dev, NULL, &hp));
  void *blk = NULL;
  assert_ok(cucore_host_pool_alloc(hp, sizeof(float) * R * C, &blk));
  assert_ok(cucore_dlpack_export(CUCORE_HOST_ADDR(blk), &t, CUCORE_DLPACK_TRANSFER, &p));
  assert_int_equal(((DLManagedTensor *)p)->dl_tensor.device.device_type, kDLCUDAHost);
  assert_status(cucore_host_pool_free(hp, blk), CUCORE_IN_USE);
  ((DLManagedTensor *)p)->deleter(p);
  cucore_host_pool_stats hs;
  assert_ok(cucore_host_pool_get_stats(hp, &hs));
  assert_int_equal(hs.in_use_blocks, 0);
  assert_int_equal(hs.cached_blocks, 1);
  assert_ok(cucore_host_pool_destroy(hp));
  print_message("DLPack exports: a consumer reads %d floats that match; transfers freed by the "
                "deleter (device, pool, pinned pool)\n",
                R * C);
  free(h);
  free(got);
}

/* The other library's tensor: memory from the raw driver, freed by its deleter. */
typedef struct other {
  DLManagedTensor mt;
  int64_t shape[2];
  CUdeviceptr mem;
  int *deleted;
} other;

static void other_deleter(DLManagedTensor *self) {
  other *o = self->manager_ctx;
  (void)DRV(cuMemFree)(o->mem);
  (*o->deleted)++;
  free(o);
}

static void imports_of_another_librarys_tensor(void **state) {
  (void)state;
  int deleted = 0;
  other *o = calloc(1, sizeof *o);
  assert_int_equal(DRV(cuMemAlloc)(&o->mem, 6 * 5 * 2), CUDA_SUCCESS);
  o->shape[0] = 6;
  o->shape[1] = 5;
  o->mt.dl_tensor.data = (void *)(uintptr_t)o->mem;
  o->mt.dl_tensor.device.device_type = kDLCUDA;
  o->mt.dl_tensor.device.device_id = 0;
  o->mt.dl_tensor.ndim = 2;
  o->mt.dl_tensor.dtype.code = kDLInt;
  o->mt.dl_tensor.dtype.bits = 16;
  o->mt.dl_tensor.dtype.lanes = 1;
  o->mt.dl_tensor.shape = o->shape;
  o->mt.manager_ctx = o;
  o->mt.deleter = other_deleter;
  o->deleted = &deleted;
  cucore_dlpack_tensor *t = NULL;
  assert_ok(cucore_dlpack_import(&o->mt, &t));
  cucore_dlpack_info info;
  assert_ok(cucore_dlpack_get_tensor_info(t, &info));
  assert_int_equal(info.span_bytes, 60);
  short h[30], back[31];
  for (int i = 0; i < 30; i++) h[i] = (short)(i * 11 - 100);
  assert_ok(cucore_memcpy_htod(dev, info.data, h, sizeof h, NULL));
  assert_status(cucore_memcpy_htod(dev, info.data, back, sizeof back, NULL), CUCORE_OUT_OF_BOUNDS);
  assert_contains(cucore_last_error(), "60-byte DLPack-imported");
  assert_ok(cucore_memcpy_dtoh(dev, back, info.data, sizeof h, NULL));
  assert_memory_equal(h, back, sizeof h);
  assert_ok(cucore_dlpack_release(t));
  assert_int_equal(deleted, 1);
  /* A round trip: cucore's export imported again is not recorded twice. */
  cucore_devptr d = 0;
  assert_ok(cucore_mem_alloc(dev, 4096, &d));
  cucore_tensor_desc td = floats2d(32, 32);
  void *p = NULL;
  assert_ok(cucore_dlpack_export(d, &td, 0, &p));
  assert_ok(cucore_dlpack_import(p, &t));
  assert_ok(cucore_memset_d32(dev, d, 0, 1024, NULL));
  assert_ok(cucore_dlpack_release(t)); /* calls cucore's deleter: the export ends */
  assert_ok(cucore_mem_free(dev, d));
  print_message("DLPack import: 30 int16 of another library's tensor copied and matched; "
                "released once\n");
}

static void versioned_exports_read_by_a_consumer(void **state) {
  (void)state;
  const int R = 32, C = 48;
  size_t bytes = sizeof(float) * R * C;
  float *h = malloc(bytes), *got = malloc(bytes);
  for (int i = 0; i < R * C; i++) h[i] = (float)i * 0.25f - 7.0f;
  cucore_devptr d = 0;
  assert_ok(cucore_mem_alloc(dev, bytes, &d));
  assert_ok(cucore_memcpy_htod(dev, d, h, bytes, NULL));
  cucore_tensor_desc t = floats2d(R, C);
  void *p = NULL;
  assert_ok(cucore_dlpack_export_versioned(d, &t, CUCORE_DLPACK_READ_ONLY, &p));
  DLManagedTensorVersioned *v = p;
  assert_int_equal(v->version.major, 1);
  assert_int_equal(v->flags, DLPACK_FLAG_BITMASK_READ_ONLY);
  assert_int_equal(v->dl_tensor.device.device_type, kDLCUDA);
  assert_int_equal(v->dl_tensor.device.device_id, 0);
  /* The consumer reads through the DLTensor, which is laid out as the legacy one's. */
  DLManagedTensor view = {.dl_tensor = v->dl_tensor};
  consume(&view, got);
  assert_memory_equal(h, got, bytes);
  assert_status(cucore_mem_free(dev, d), CUCORE_IN_USE);
  v->deleter(v);
  assert_false(memory_is_gone(d)); /* not a transfer: the memory stays the caller's */
  /* Negotiation: a 0.x consumer gets the legacy struct, a 1.0 one version 1.0. */
  cucore_dlpack_version ask0 = {0, 8}, ask1 = {1, 0}, made;
  assert_ok(cucore_dlpack_export_max_version(d, &t, 0, ask0, &p, &made));
  assert_int_equal(made.major, 0);
  consume(p, got);
  assert_memory_equal(h, got, bytes);
  ((DLManagedTensor *)p)->deleter(p);
  assert_ok(cucore_dlpack_export_max_version(d, &t, CUCORE_DLPACK_TRANSFER, ask1, &p, &made));
  assert_int_equal(made.minor, 0);
  assert_int_equal(((DLManagedTensorVersioned *)p)->version.minor, 0);
  ((DLManagedTensorVersioned *)p)->deleter(p); /* a transfer: the deleter frees it */
  assert_true(memory_is_gone(d));
  print_message("DLPack 1.x exports: a consumer reads %d floats that match; the versioned "
                "deleter ends the use, a transfer's frees the memory\n",
                R * C);
  free(h);
  free(got);
}

/* The other library's versioned tensor: memory from the raw driver, freed by its deleter. */
typedef struct other_v {
  DLManagedTensorVersioned mt;
  int64_t shape[1];
  CUdeviceptr mem;
  int *deleted;
} other_v;

static void other_v_deleter(DLManagedTensorVersioned *self) {
  other_v *o = self->manager_ctx;
  (void)DRV(cuMemFree)(o->mem);
  (*o->deleted)++;
  free(o);
}

static other_v *make_other_v(int n, uint64_t flags, int *deleted) {
  other_v *o = calloc(1, sizeof *o);
  assert_int_equal(DRV(cuMemAlloc)(&o->mem, (size_t)n * 4), CUDA_SUCCESS);
  o->shape[0] = n;
  o->mt.version.major = 1;
  o->mt.version.minor = 0;
  o->mt.flags = flags;
  o->mt.dl_tensor.data = (void *)(uintptr_t)o->mem;
  o->mt.dl_tensor.device.device_type = kDLCUDA;
  o->mt.dl_tensor.ndim = 1;
  o->mt.dl_tensor.dtype.code = kDLInt;
  o->mt.dl_tensor.dtype.bits = 32;
  o->mt.dl_tensor.dtype.lanes = 1;
  o->mt.dl_tensor.shape = o->shape;
  o->mt.manager_ctx = o;
  o->mt.deleter = other_v_deleter;
  o->deleted = deleted;
  return o;
}

static void versioned_imports_of_another_librarys_tensor(void **state) {
  (void)state;
  int deleted = 0, ro = -1;
  int h[256], back[256];
  for (int i = 0; i < 256; i++) h[i] = i * 3 - 200;
  /* Writable: cucore writes it, reads it back. */
  other_v *o = make_other_v(256, 0, &deleted);
  cucore_dlpack_tensor *t = NULL;
  assert_ok(cucore_dlpack_import_versioned(&o->mt, &t));
  cucore_dlpack_info info;
  assert_ok(cucore_dlpack_get_tensor_info(t, &info));
  assert_ok(cucore_dlpack_is_read_only(t, &ro));
  assert_int_equal(ro, 0);
  assert_ok(cucore_memcpy_htod(dev, info.data, h, sizeof h, NULL));
  assert_ok(cucore_memcpy_dtoh(dev, back, info.data, sizeof back, NULL));
  assert_memory_equal(h, back, sizeof h);
  assert_ok(cucore_dlpack_release(t));
  assert_int_equal(deleted, 1);
  /* Read-only: the producer's values are read; cucore's copies and fills into it refused. */
  o = make_other_v(256, DLPACK_FLAG_BITMASK_READ_ONLY, &deleted);
  assert_int_equal(DRV(cuMemcpyHtoD)(o->mem, h, sizeof h), CUDA_SUCCESS);
  assert_ok(cucore_dlpack_import_versioned(&o->mt, &t));
  assert_ok(cucore_dlpack_get_tensor_info(t, &info));
  assert_ok(cucore_dlpack_is_read_only(t, &ro));
  assert_int_equal(ro, 1);
  memset(back, 0, sizeof back);
  assert_ok(cucore_memcpy_dtoh(dev, back, info.data, sizeof back, NULL));
  assert_memory_equal(h, back, sizeof h);
  assert_status(cucore_memcpy_htod(dev, info.data, back, sizeof back, NULL),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "read-only");
  assert_status(cucore_memset_d32(dev, info.data, 0, 256, s), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "read-only");
  assert_ok(cucore_dlpack_release(t));
  assert_int_equal(deleted, 2);
  /* A newer major version is refused and stays the caller's. */
  o = make_other_v(4, 0, &deleted);
  o->mt.version.major = 2;
  assert_status(cucore_dlpack_import_versioned(&o->mt, &t), CUCORE_VERSION_MISMATCH);
  o->mt.deleter(&o->mt);
  assert_int_equal(deleted, 3);
  print_message("DLPack 1.x imports: 256 int32 written and read back; a read-only tensor read, "
                "cucore's writes refused; each deleter once\n");
}

int main(void) {
  if (!cucore_test_have_gpu()) return CUCORE_TEST_SKIP;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(exports_read_by_a_consumer),
      cmocka_unit_test(imports_of_another_librarys_tensor),
      cmocka_unit_test(versioned_exports_read_by_a_consumer),
      cmocka_unit_test(versioned_imports_of_another_librarys_tensor),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
