/* test_memory_dlpack.c -- DLPack without a GPU: the extent of strided tensors (compact,
 * strided, negative strides, empty, scalars, vector lanes, overflow), exports of recorded
 * allocations (device type and id by kind, shape, strides, dtype, offset, the allocation's
 * bounds, the use the export holds until its deleter, a transfer's claim), and imports of a
 * tensor another library made (checks, the range recorded for copies, release calling the
 * producer's deleter once); DLPack 1.x: versioned exports (version, flags, the use held until
 * the deleter), version negotiation, versioned imports (versions refused by name, the flags kept,
 * a read-only tensor refusing cucore's writes, the deleter once) and a round trip. */
#include "support.h"

#include <stdio.h>
#include <stdlib.h>

#include "memory/dlpack_v1.h"
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

static void versioned_exports_carry_version_and_flags(void **state) {
  (void)state;
  add(DBASE, 4096, CUCORE_MEM_DEVICE, 1);
  cucore_tensor_desc t = desc2(8, 16, 1);
  void *p = NULL;
  assert_ok(cucore_dlpack_export_versioned(DBASE + 64, &t, CUCORE_DLPACK_READ_ONLY, &p));
  DLManagedTensorVersioned *v = p;
  assert_int_equal(v->version.major, 1);
  assert_int_equal(v->version.minor, 1);
  assert_int_equal(v->flags, DLPACK_FLAG_BITMASK_READ_ONLY);
  assert_ptr_equal(v->dl_tensor.data, (void *)(uintptr_t)(DBASE + 64));
  assert_int_equal(v->dl_tensor.device.device_type, kDLCUDA);
  assert_int_equal(v->dl_tensor.device.device_id, 1);
  assert_int_equal(v->dl_tensor.shape[1], 16);
  assert_int_equal(v->dl_tensor.strides[0], 16);
  assert_non_null(v->deleter);
  /* The export holds the allocation as the legacy one does, until its deleter. */
  cucore_device fake = dev1;
  assert_status(cucore_mem_free(&fake, DBASE), CUCORE_IN_USE);
  assert_contains(cucore_last_error(), "1 DLPack export");
  void *p2 = NULL;
  assert_ok(cucore_dlpack_export_versioned(DBASE, &t, CUCORE_DLPACK_COPIED, &p2));
  assert_int_equal(((DLManagedTensorVersioned *)p2)->flags, DLPACK_FLAG_BITMASK_IS_COPIED);
  cc_mem_rec r;
  assert_true(cc_reg_find(&cc_mem_registry, DBASE, &r));
  assert_int_equal(r.exports, 2);
  ((DLManagedTensorVersioned *)p2)->deleter(p2);
  v->deleter(v);
  assert_true(cc_reg_find(&cc_mem_registry, DBASE, &r));
  assert_int_equal(r.exports, 0);
  /* The same checks as the legacy export: bounds, flags. */
  assert_status(cucore_dlpack_export_versioned(DBASE + 3600, &t, 0, &p), CUCORE_OUT_OF_BOUNDS);
  assert_null(p);
  assert_contains(cucore_last_error(), "must lie within its 4096 bytes");
  assert_status(cucore_dlpack_export_versioned(DBASE, &t, 8, &p), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "unknown flags 0x8");
  /* The legacy struct has no flags word: a read-only export to a 0.x consumer is refused. */
  assert_status(cucore_dlpack_export(DBASE, &t, CUCORE_DLPACK_READ_ONLY, &p),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "CUCORE_DLPACK_READ_ONLY needs a DLManagedTensorVersioned");
  assert_contains(cucore_last_error(), "use cucore_dlpack_export_versioned");
  assert_status(cucore_dlpack_export(DBASE, &t, CUCORE_DLPACK_COPIED, &p), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "CUCORE_DLPACK_COPIED needs");
  assert_true(cc_reg_find(&cc_mem_registry, DBASE, &r));
  assert_int_equal(r.exports, 0);
  (void)cc_reg_take(&cc_mem_registry, DBASE, NULL, NULL, 1, NULL);
}

static void negotiation_follows_the_consumers_version(void **state) {
  (void)state;
  add(DBASE, 4096, CUCORE_MEM_DEVICE, 1);
  cucore_tensor_desc t = desc2(4, 4, 1);
  void *p = NULL;
  cucore_dlpack_version made = {9, 9};
  /* A 0.x consumer gets the legacy struct. */
  cucore_dlpack_version v08 = {0, 8};
  assert_ok(cucore_dlpack_export_max_version(DBASE, &t, 0, v08, &p, &made));
  assert_int_equal(made.major, 0);
  assert_int_equal(made.minor, 0);
  DLManagedTensor *mt = p;
  assert_ptr_equal(mt->dl_tensor.data, (void *)(uintptr_t)DBASE);
  assert_int_equal(mt->dl_tensor.ndim, 2);
  mt->deleter(mt);
  assert_status(cucore_dlpack_export_max_version(DBASE, &t, CUCORE_DLPACK_READ_ONLY, v08, &p, NULL),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "the consumer reads DLPack 0.8 at most");
  assert_status(cucore_dlpack_export_max_version(DBASE, &t, 0x10, v08, &p, NULL),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "unknown flags 0x10");
  /* 1.0 gets version 1.0; 1.5 and 2.0 get cucore's 1.1. */
  cucore_dlpack_version asks[3] = {{1, 0}, {1, 5}, {2, 0}};
  uint32_t minors[3] = {0, 1, 1};
  for (int i = 0; i < 3; i++) {
    assert_ok(
        cucore_dlpack_export_max_version(DBASE, &t, CUCORE_DLPACK_READ_ONLY, asks[i], &p, &made));
    DLManagedTensorVersioned *v = p;
    assert_int_equal(made.major, 1);
    assert_int_equal(made.minor, minors[i]);
    assert_int_equal(v->version.major, 1);
    assert_int_equal(v->version.minor, minors[i]);
    assert_int_equal(v->flags, DLPACK_FLAG_BITMASK_READ_ONLY);
    v->deleter(v);
  }
  cc_mem_rec r;
  assert_true(cc_reg_find(&cc_mem_registry, DBASE, &r));
  assert_int_equal(r.exports, 0);
  (void)cc_reg_take(&cc_mem_registry, DBASE, NULL, NULL, 1, NULL);
}

/* A versioned tensor as another library would make it. */
typedef struct producer_v {
  DLManagedTensorVersioned mt;
  int64_t shape[2];
  int *deleted;
} producer_v;

static void producer_v_deleter(DLManagedTensorVersioned *self) {
  producer_v *pr = self->manager_ctx;
  (*pr->deleted)++;
  free(pr);
}

static producer_v *make_versioned(void *data, uint32_t major, uint32_t minor, uint64_t flags,
                                  int *deleted) {
  producer_v *pr = calloc(1, sizeof *pr);
  pr->shape[0] = 6;
  pr->shape[1] = 5;
  pr->mt.version.major = major;
  pr->mt.version.minor = minor;
  pr->mt.flags = flags;
  pr->mt.dl_tensor.data = data;
  pr->mt.dl_tensor.device.device_type = kDLCPU;
  pr->mt.dl_tensor.ndim = 2;
  pr->mt.dl_tensor.dtype.code = kDLInt;
  pr->mt.dl_tensor.dtype.bits = 16;
  pr->mt.dl_tensor.dtype.lanes = 1;
  pr->mt.dl_tensor.shape = pr->shape;
  pr->mt.manager_ctx = pr;
  pr->mt.deleter = producer_v_deleter;
  pr->deleted = deleted;
  return pr;
}

static void versioned_imports_keep_version_and_flags(void **state) {
  (void)state;
  int deleted = 0;
  static short data[30];
  producer_v *pr = make_versioned(data, 1, 0, 0, &deleted);
  cucore_dlpack_tensor *t = NULL;
  assert_ok(cucore_dlpack_import_versioned(&pr->mt, &t));
  cucore_dlpack_version v;
  uint64_t flags = 9;
  int ro = 9;
  assert_ok(cucore_dlpack_get_version(t, &v));
  assert_int_equal(v.major, 1);
  assert_int_equal(v.minor, 0);
  assert_ok(cucore_dlpack_get_flags(t, &flags));
  assert_int_equal(flags, 0);
  assert_ok(cucore_dlpack_is_read_only(t, &ro));
  assert_int_equal(ro, 0);
  cucore_dlpack_info info;
  assert_ok(cucore_dlpack_get_tensor_info(t, &info));
  assert_int_equal(info.span_bytes, 60);
  assert_int_equal(info.desc.strides[0], 5);
  /* A writable import takes cucore's writes, within its range. */
  cc_begin();
  assert_ok(cc_mem_check_range(CUCORE_HOST_ADDR(data), 60, "fill", "destination"));
  assert_int_equal(deleted, 0);
  assert_ok(cucore_dlpack_release(t));
  assert_int_equal(deleted, 1);
  assert_false(cc_reg_find(&cc_mem_registry, CUCORE_HOST_ADDR(data), NULL));
  /* Any 1.x minor is read; a newer major, or 0, is refused naming both versions, and the
   * tensor stays the caller's (its deleter not called). */
  pr = make_versioned(data, 1, 7, 0, &deleted);
  assert_ok(cucore_dlpack_import_versioned(&pr->mt, &t));
  assert_ok(cucore_dlpack_release(t));
  assert_int_equal(deleted, 2);
  pr = make_versioned(data, 2, 3, 0, &deleted);
  assert_status(cucore_dlpack_import_versioned(&pr->mt, &t), CUCORE_VERSION_MISMATCH);
  assert_null(t);
  assert_contains(cucore_last_error(), "the tensor is DLPack 2.3; cucore reads DLPack 1.1 at most");
  pr->mt.version.major = 0;
  pr->mt.version.minor = 6;
  assert_status(cucore_dlpack_import_versioned(&pr->mt, &t), CUCORE_VERSION_MISMATCH);
  assert_contains(cucore_last_error(), "says DLPack 0.6, but a DLManagedTensorVersioned is DLPack");
  assert_int_equal(deleted, 2);
  /* The legacy import's checks hold: device type, ndim, shape. */
  pr->mt.version.major = 1;
  pr->mt.dl_tensor.device.device_type = kDLROCM;
  assert_status(cucore_dlpack_import_versioned(&pr->mt, &t), CUCORE_NOT_SUPPORTED);
  assert_contains(cucore_last_error(), "ROCm (DLDeviceType 10)");
  pr->mt.dl_tensor.device.device_type = kDLCUDA;
  pr->mt.dl_tensor.ndim = 17;
  assert_status(cucore_dlpack_import_versioned(&pr->mt, &t), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "ndim 17 is outside 0..16");
  pr->mt.dl_tensor.ndim = 2;
  /* Strides that run past a cucore allocation are refused with the sizes. */
  add(DBASE, 64, CUCORE_MEM_DEVICE, 1);
  int64_t strides[2] = {6, 1}; /* rows of 6: 5*6 + 4 + 1 = 35 elements, 70 bytes */
  pr->mt.dl_tensor.strides = strides;
  pr->mt.dl_tensor.data = (void *)(uintptr_t)DBASE;
  assert_status(cucore_dlpack_import_versioned(&pr->mt, &t), CUCORE_OUT_OF_BOUNDS);
  assert_contains(cucore_last_error(), "70 bytes at offset 0 of a 64-byte device allocation");
  (void)cc_reg_take(&cc_mem_registry, DBASE, NULL, NULL, 1, NULL);
  /* DLPack allows a NULL deleter: imported, released without a call. */
  pr->mt.dl_tensor.strides = NULL;
  pr->mt.dl_tensor.device.device_type = kDLCPU;
  pr->mt.dl_tensor.data = data;
  pr->mt.deleter = NULL;
  assert_ok(cucore_dlpack_import_versioned(&pr->mt, &t));
  assert_ok(cucore_dlpack_release(t));
  assert_int_equal(deleted, 2);
  free(pr);
}

static void read_only_imports_refuse_cucores_writes(void **state) {
  (void)state;
  int deleted = 0;
  static short data[30];
  static short src[30];
  uint64_t unknown_bit = 1ull << 40;
  producer_v *pr = make_versioned(data, 1, 1, DLPACK_FLAG_BITMASK_READ_ONLY | unknown_bit,
                                  &deleted);
  cucore_dlpack_tensor *t = NULL;
  assert_ok(cucore_dlpack_import_versioned(&pr->mt, &t));
  uint64_t flags = 0;
  int ro = 0;
  assert_ok(cucore_dlpack_get_flags(t, &flags));
  assert_int_equal(flags, CUCORE_DLPACK_FLAG_READ_ONLY | unknown_bit); /* kept as given */
  assert_ok(cucore_dlpack_is_read_only(t, &ro));
  assert_int_equal(ro, 1);
  /* cucore's copies and fills into it are refused before any driver call; reads pass. */
  cucore_device fake = dev1;
  assert_status(cucore_memcpy_htod(&fake, CUCORE_HOST_ADDR(data), src, 8, NULL),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "marked read-only (DLPack's READ_ONLY flag)");
  assert_contains(cucore_last_error(), "60-byte DLPack-imported");
  assert_status(cucore_memset_d8(&fake, CUCORE_HOST_ADDR(data) + 2, 0, 4, NULL),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "read-only");
  cc_begin();
  assert_ok(cc_mem_check_copy(CUCORE_HOST_ADDR(src), CUCORE_HOST_ADDR(data), 60, "copy"));
  assert_int_equal(CUCORE_CODE(cc_mem_check_copy(CUCORE_HOST_ADDR(data), CUCORE_HOST_ADDR(src), 60,
                                                 "copy")),
                   CUCORE_INVALID_ARGUMENT);
  /* Twice in a row: the read-only record is never trusted from the thread's last checks. */
  assert_int_equal(CUCORE_CODE(cc_mem_check_copy(CUCORE_HOST_ADDR(data), CUCORE_HOST_ADDR(src), 60,
                                                 "copy")),
                   CUCORE_INVALID_ARGUMENT);
  assert_int_equal(CUCORE_CODE(cc_mem_check_region(CUCORE_HOST_ADDR(data), 0, 20, "2D",
                                                   "destination", "2D")),
                   CUCORE_INVALID_ARGUMENT);
  assert_ok(cc_mem_check_region(CUCORE_HOST_ADDR(data), 0, 20, "2D", "source", "2D"));
  assert_ok(cucore_dlpack_release(t));
  assert_int_equal(deleted, 1);
  /* Once released, the range is cucore's to write again (not recorded at all). */
  assert_ok(cc_mem_check_range(CUCORE_HOST_ADDR(data), 60, "fill", "destination"));
  /* The legacy import has neither version nor flags. */
  producer *lp = make_tensor(data, kDLCPU, &deleted);
  assert_ok(cucore_dlpack_import(&lp->mt, &t));
  cucore_dlpack_version v = {7, 7};
  assert_ok(cucore_dlpack_get_version(t, &v));
  assert_int_equal(v.major, 0);
  assert_ok(cucore_dlpack_is_read_only(t, &ro));
  assert_int_equal(ro, 0);
  assert_ok(cucore_dlpack_release(t));
  assert_int_equal(deleted, 2);
}

static void versioned_round_trip(void **state) {
  (void)state;
  add(DBASE, 4096, CUCORE_MEM_DEVICE, 1);
  cucore_tensor_desc t = desc2(8, 8, 1);
  void *p = NULL;
  assert_ok(cucore_dlpack_export_versioned(DBASE, &t,
                                           CUCORE_DLPACK_READ_ONLY | CUCORE_DLPACK_COPIED, &p));
  cucore_dlpack_tensor *h = NULL;
  assert_ok(cucore_dlpack_import_versioned(p, &h));
  uint64_t flags = 0;
  int ro = 0;
  cucore_dlpack_version v;
  assert_ok(cucore_dlpack_get_flags(h, &flags));
  assert_int_equal(flags, CUCORE_DLPACK_FLAG_READ_ONLY | CUCORE_DLPACK_FLAG_IS_COPIED);
  assert_ok(cucore_dlpack_is_read_only(h, &ro));
  assert_int_equal(ro, 1);
  assert_ok(cucore_dlpack_get_version(h, &v));
  assert_int_equal(v.major, 1);
  assert_int_equal(v.minor, 1);
  cucore_dlpack_info info;
  assert_ok(cucore_dlpack_get_tensor_info(h, &info));
  assert_int_equal(info.data, DBASE);
  assert_int_equal(info.device_type, kDLCUDA);
  assert_int_equal(info.device_id, 1);
  assert_int_equal(info.span_bytes, 256);
  /* Inside cucore's own allocation: no second record, the export still holds it. */
  cc_mem_rec r;
  assert_true(cc_reg_find(&cc_mem_registry, DBASE, &r));
  assert_int_equal(r.kind, CUCORE_MEM_DEVICE);
  assert_int_equal(r.exports, 1);
  cucore_device fake = dev1;
  assert_status(cucore_mem_free(&fake, DBASE), CUCORE_IN_USE);
  assert_ok(cucore_dlpack_release(h)); /* calls cucore's versioned deleter, once */
  assert_true(cc_reg_find(&cc_mem_registry, DBASE, &r));
  assert_int_equal(r.exports, 0);
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
      cmocka_unit_test(versioned_exports_carry_version_and_flags),
      cmocka_unit_test(negotiation_follows_the_consumers_version),
      cmocka_unit_test(versioned_imports_keep_version_and_flags),
      cmocka_unit_test(read_only_imports_refuse_cucores_writes),
      cmocka_unit_test(versioned_round_trip),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
