/* test_memory_dlpack.c -- DLPack without a GPU: the extent of strided tensors (compact,
 * strided, negative strides, empty, scalars, vector lanes, overflow), exports of recorded
 * allocations (device type and id by kind, shape, strides, dtype, offset, the allocation's
 * bounds, the use the export holds until its deleter, a transfer's claim), and imports of a
 * tensor another library made (checks, the range recorded for copies, release calling the
 * producer's deleter once). */
#include "support.h"

#include <dlpack/dlpack.h>
#include <stdio.h>
#include <stdlib.h>

#include "memory/memory.h"

#define DBASE 0x7c0000000000ull

static struct cucore_device dev1;

static cucore_tensor_desc desc2(int64_t rows, int64_t cols, int compact) {
  cucore_tensor_desc t;
  memset(&t, 0, sizeof t);
  t.ndim = 2;
  t.shape[0] = rows;
  t.shape[1] = cols;
  t.compact = compact;
  t.dtype.code = CUCORE_DTYPE_FLOAT;
  t.dtype.bits = 32;
  t.dtype.lanes = 1;
  return t;
}

static void extents_of_strided_tensors(void **state) {
  (void)state;
  int64_t lo, hi;
  cucore_tensor_desc t = desc2(3, 4, 1);
  assert_ok(cucore_tensor_extent(&t, &lo, &hi));
  assert_int_equal(lo, 0);
  assert_int_equal(hi, 48);
  t.byte_offset = 16;
  assert_ok(cucore_tensor_extent(&t, &lo, &hi));
  assert_int_equal(lo, 16);
  assert_int_equal(hi, 64);
  /* A transposed view: strides (1, 3) over the same 12 floats. */
  t = desc2(4, 3, 0);
  t.strides[0] = 1;
  t.strides[1] = 4;
  assert_ok(cucore_tensor_extent(&t, &lo, &hi));
  assert_int_equal(hi, (3 + 2 * 4 + 1) * 4);
  /* A row-padded view: 3 rows of 4, rows 10 apart. */
  t = desc2(3, 4, 0);
  t.strides[0] = 10;
  t.strides[1] = 1;
  assert_ok(cucore_tensor_extent(&t, &lo, &hi));
  assert_int_equal(hi, (2 * 10 + 3 + 1) * 4);
  /* A reversed view: negative strides reach below the address. */
  t.strides[0] = -10;
  t.byte_offset = 80;
  assert_ok(cucore_tensor_extent(&t, &lo, &hi));
  assert_int_equal(lo, 0);
  assert_int_equal(hi, 80 + 16);
  /* Broadcasting (stride 0) touches one row. */
  t.strides[0] = 0;
  t.byte_offset = 0;
  assert_ok(cucore_tensor_extent(&t, &lo, &hi));
  assert_int_equal(hi, 16);
  /* Empty tensors touch nothing; scalars one element; lanes and odd bits round up. */
  t = desc2(0, 4, 1);
  assert_ok(cucore_tensor_extent(&t, &lo, &hi));
  assert_int_equal(hi - lo, 0);
  t = desc2(1, 1, 1);
  t.ndim = 0;
  t.dtype.bits = 16;
  t.dtype.lanes = 4;
  assert_ok(cucore_tensor_extent(&t, &lo, &hi));
  assert_int_equal(hi - lo, 8);
  t = desc2(2, 5, 1);
  t.dtype.code = CUCORE_DTYPE_BOOL;
  t.dtype.bits = 1;
  assert_ok(cucore_tensor_extent(&t, &lo, &hi));
  assert_int_equal(hi, 10);
  /* Malformed descriptions. */
  t = desc2(3, -1, 1);
  assert_status(cucore_tensor_extent(&t, &lo, &hi), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "shape[1] is -1");
  t = desc2(3, 4, 1);
  t.ndim = 17;
  assert_status(cucore_tensor_extent(&t, &lo, &hi), CUCORE_INVALID_ARGUMENT);
  t = desc2(3, 4, 1);
  t.dtype.bits = 0;
  assert_status(cucore_tensor_extent(&t, &lo, &hi), CUCORE_INVALID_ARGUMENT);
  t = desc2(3, 4, 1);
  t.dtype.code = 9;
  assert_status(cucore_tensor_extent(&t, &lo, &hi), CUCORE_INVALID_ARGUMENT);
  t = desc2(INT64_MAX / 2, 8, 1);
  assert_status(cucore_tensor_extent(&t, &lo, &hi), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "overflow");
}

static void add(uint64_t base, uint64_t size, cucore_mem_kind kind, int ordinal) {
  cc_mem_rec r;
  memset(&r, 0, sizeof r);
  r.base = base;
  r.size = size;
  r.kind = kind;
  r.ordinal = ordinal;
  r.ctx = ordinal >= 0 ? dev1.ctx : NULL;
  assert_int_equal(cc_reg_insert(&cc_mem_registry, &r, 0), CC_REG_OK);
}

static void exports_describe_the_allocation(void **state) {
  (void)state;
  add(DBASE, 4096, CUCORE_MEM_DEVICE, 1);
  cucore_tensor_desc t = desc2(8, 16, 1);
  t.byte_offset = 64;
  void *p = NULL;
  assert_ok(cucore_dlpack_export(DBASE + 256, &t, 0, &p));
  DLManagedTensor *mt = p;
  assert_ptr_equal(mt->dl_tensor.data, (void *)(uintptr_t)(DBASE + 256));
  assert_int_equal(mt->dl_tensor.device.device_type, kDLCUDA);
  assert_int_equal(mt->dl_tensor.device.device_id, 1);
  assert_int_equal(mt->dl_tensor.ndim, 2);
  assert_int_equal(mt->dl_tensor.shape[0], 8);
  assert_int_equal(mt->dl_tensor.shape[1], 16);
  assert_int_equal(mt->dl_tensor.strides[0], 16); /* compact: filled in, in elements */
  assert_int_equal(mt->dl_tensor.strides[1], 1);
  assert_int_equal(mt->dl_tensor.dtype.code, kDLFloat);
  assert_int_equal(mt->dl_tensor.dtype.bits, 32);
  assert_int_equal(mt->dl_tensor.dtype.lanes, 1);
  assert_int_equal(mt->dl_tensor.byte_offset, 64);
  /* The export holds the allocation: a free is refused until the deleter runs. */
  cucore_device fake = dev1;
  assert_status(cucore_mem_free(&fake, DBASE), CUCORE_IN_USE);
  assert_contains(cucore_last_error(), "1 DLPack export");
  void *p2 = NULL;
  assert_ok(cucore_dlpack_export(DBASE, &t, 0, &p2)); /* a second view */
  ((DLManagedTensor *)p2)->deleter(p2);
  mt->deleter(mt);
  cc_mem_rec r;
  assert_true(cc_reg_find(&cc_mem_registry, DBASE, &r));
  assert_int_equal(r.exports, 0);
  /* The tensor's bytes must lie in the allocation: 64 + 8*16*4 = 576 bytes fit at offset 256,
   * not at 3600. */
  assert_status(cucore_dlpack_export(DBASE + 3600, &t, 0, &p), CUCORE_OUT_OF_BOUNDS);
  assert_null(p);
  assert_contains(cucore_last_error(), "must lie within its 4096 bytes");
  cucore_tensor_desc rev = desc2(4, 4, 0);
  rev.strides[0] = -4;
  rev.strides[1] = 1;
  assert_status(cucore_dlpack_export(DBASE, &rev, 0, &p), CUCORE_OUT_OF_BOUNDS); /* below it */
  assert_status(cucore_dlpack_export(DBASE + 8192, &t, 0, &p), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_dlpack_export(DBASE, &t, 4, &p), CUCORE_INVALID_ARGUMENT);
  /* A transfer: the allocation becomes the consumer's; cucore's frees and exports refuse it. */
  assert_ok(cucore_dlpack_export(DBASE, &t, CUCORE_DLPACK_TRANSFER, &p));
  assert_status(cucore_mem_free(&fake, DBASE), CUCORE_IN_USE);
  assert_contains(cucore_last_error(), "its deleter frees it");
  assert_status(cucore_dlpack_export(DBASE, &t, 0, &p2), CUCORE_IN_USE);
  /* (The deleter would free device memory through the driver; this test releases the block.) */
  free(p);
  (void)cc_reg_take(&cc_mem_registry, DBASE, NULL, NULL, 1, NULL);
  /* Other kinds map to their DLPack device types. */
  static char host[1024];
  add(CUCORE_HOST_ADDR(host), sizeof host, CUCORE_MEM_PINNED_POOL, -1);
  assert_ok(cucore_dlpack_export(CUCORE_HOST_ADDR(host), &t, 0, &p));
  assert_int_equal(((DLManagedTensor *)p)->dl_tensor.device.device_type, kDLCUDAHost);
  ((DLManagedTensor *)p)->deleter(p);
  (void)cc_reg_take(&cc_mem_registry, CUCORE_HOST_ADDR(host), NULL, NULL, 1, NULL);
  add(DBASE, 4096, CUCORE_MEM_MANAGED, 1);
  assert_ok(cucore_dlpack_export(DBASE, &t, 0, &p));
  assert_int_equal(((DLManagedTensor *)p)->dl_tensor.device.device_type, kDLCUDAManaged);
  ((DLManagedTensor *)p)->deleter(p);
  (void)cc_reg_take(&cc_mem_registry, DBASE, NULL, NULL, 1, NULL);
}

/* A tensor as another library would make it. */
typedef struct producer {
  DLManagedTensor mt;
  int64_t shape[3], strides[3];
  int *deleted;
} producer;

static void producer_deleter(DLManagedTensor *self) {
  producer *pr = self->manager_ctx;
  (*pr->deleted)++;
  free(pr);
}

static producer *make_tensor(void *data, int device_type, int *deleted) {
  producer *pr = calloc(1, sizeof *pr);
  pr->shape[0] = 6;
  pr->shape[1] = 5;
  pr->mt.dl_tensor.data = data;
  pr->mt.dl_tensor.device.device_type = (DLDeviceType)device_type;
  pr->mt.dl_tensor.ndim = 2;
  pr->mt.dl_tensor.dtype.code = kDLInt;
  pr->mt.dl_tensor.dtype.bits = 16;
  pr->mt.dl_tensor.dtype.lanes = 1;
  pr->mt.dl_tensor.shape = pr->shape;
  pr->mt.dl_tensor.strides = NULL; /* compact */
  pr->mt.manager_ctx = pr;
  pr->mt.deleter = producer_deleter;
  pr->deleted = deleted;
  return pr;
}

static void imports_hold_and_release_another_librarys_tensor(void **state) {
  (void)state;
  int deleted = 0;
  static short data[30];
  producer *pr = make_tensor(data, kDLCPU, &deleted);
  cucore_dlpack_tensor *t = NULL;
  assert_ok(cucore_dlpack_import(&pr->mt, &t));
  cucore_dlpack_info info;
  assert_ok(cucore_dlpack_get_tensor_info(t, &info));
  assert_int_equal(info.data, CUCORE_HOST_ADDR(data));
  assert_int_equal(info.device_type, kDLCPU);
  assert_int_equal(info.desc.ndim, 2);
  assert_int_equal(info.desc.strides[0], 5);
  assert_int_equal(info.desc.strides[1], 1);
  assert_int_equal(info.desc.compact, 0);
  assert_int_equal(info.span_bytes, 60);
  /* The range is recorded: a copy past it is refused. */
  cucore_pointer_facts f;
  assert_ok(cucore_pointer_get_facts(CUCORE_HOST_ADDR(data) + 10, &f));
  assert_int_equal(f.kind, CUCORE_MEM_DLPACK_IMPORTED);
  assert_int_equal(f.size, 60);
  cc_begin();
  assert_int_equal(CUCORE_CODE(cc_mem_check_range(CUCORE_HOST_ADDR(data), 61, "copy", "source")),
                   CUCORE_OUT_OF_BOUNDS);
  assert_int_equal(deleted, 0);
  assert_ok(cucore_dlpack_release(t));
  assert_int_equal(deleted, 1);
  assert_false(cc_reg_find(&cc_mem_registry, CUCORE_HOST_ADDR(data), NULL));
  assert_ok(cucore_dlpack_release(NULL));
  /* Devices cucore cannot use, and malformed tensors, are refused; the caller keeps them. */
  pr = make_tensor(data, kDLROCM, &deleted);
  assert_status(cucore_dlpack_import(&pr->mt, &t), CUCORE_NOT_SUPPORTED);
  assert_null(t);
  assert_contains(cucore_last_error(), "ROCm");
  pr->mt.dl_tensor.device.device_type = kDLCUDA;
  pr->mt.dl_tensor.ndim = 17;
  assert_status(cucore_dlpack_import(&pr->mt, &t), CUCORE_INVALID_ARGUMENT);
  pr->mt.dl_tensor.ndim = 2;
  pr->shape[1] = -5;
  assert_status(cucore_dlpack_import(&pr->mt, &t), CUCORE_INVALID_ARGUMENT);
  pr->shape[1] = 5;
  /* A tensor inside memory cucore knows is not recorded twice; one running past it is refused. */
  add(DBASE, 64, CUCORE_MEM_DEVICE, 1);
  pr->mt.dl_tensor.data = (void *)(uintptr_t)(DBASE + 8);
  assert_status(cucore_dlpack_import(&pr->mt, &t), CUCORE_OUT_OF_BOUNDS); /* 8 + 60 > 64 */
  assert_contains(cucore_last_error(), "60 bytes at offset 8 of a 64-byte device allocation");
  pr->mt.dl_tensor.data = (void *)(uintptr_t)(DBASE + 4);
  assert_ok(cucore_dlpack_import(&pr->mt, &t)); /* 4 + 60 = 64: fits */
  assert_ok(cucore_dlpack_release(t));
  assert_int_equal(deleted, 2);
  assert_true(cc_reg_find(&cc_mem_registry, DBASE, NULL)); /* cucore's record stays */
  (void)cc_reg_take(&cc_mem_registry, DBASE, NULL, NULL, 1, NULL);
}

int main(void) {
  cc_handle_init(&dev1, CC_KIND_DEVICE);
  dev1.ordinal = 1;
  dev1.ctx = (CUcontext)(uintptr_t)0x2000;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(extents_of_strided_tensors),
      cmocka_unit_test(exports_describe_the_allocation),
      cmocka_unit_test(imports_hold_and_release_another_librarys_tensor),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
