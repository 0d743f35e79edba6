/* test_memory_checks.c -- every memory check that needs no GPU, through the public calls: the
 * record holds fake allocations (a fake device handle, fake addresses) and each call must fail
 * before it reaches the driver, naming what was wrong. Copies past the end, wrapping and
 * negative sizes, ranges that run into an allocation, 2D/3D footprints and pitches, fills,
 * frees of foreign, freed, interior, busy and wrong-kind pointers, wrong pools and devices,
 * pools with live allocations, pointer facts from the record, strict pointer checks, managed
 * advice on the wrong memory, registration overlaps, IPC data damaged in transit, texture and
 * array descriptions. */
#include "support.h"

#include <stdio.h>
#include <stdlib.h>

#include "memory/memory.h"

static struct cucore_device dev0, dev1;
static struct cucore_stream stream0, stream1;

/* Fake device addresses: far from anything malloc hands out. */
#define DBASE 0x7e0000000000ull

static void add(uint64_t base, uint64_t size, cucore_mem_kind kind, cucore_device *dev,
                void *owner) {
  cc_mem_rec r;
  memset(&r, 0, sizeof r);
  r.base = base;
  r.size = size;
  r.kind = kind;
  r.ordinal = dev ? dev->ordinal : -1;
  r.ctx = dev ? dev->ctx : NULL;
  r.owner = owner;
  assert_int_equal(cc_reg_insert(&cc_mem_registry, &r, 0), CC_REG_OK);
}

static void drop(uint64_t base) { (void)cc_reg_take(&cc_mem_registry, base, NULL, NULL, 1, NULL); }

static int setup(void **state) {
  (void)state;
  cc_handle_init(&dev0, CC_KIND_DEVICE);
  cc_handle_init(&dev1, CC_KIND_DEVICE);
  cc_handle_init(&stream0, CC_KIND_STREAM);
  cc_handle_init(&stream1, CC_KIND_STREAM);
  dev0.ordinal = 0;
  dev0.ctx = (CUcontext)(uintptr_t)0x1000;
  dev1.ordinal = 1;
  dev1.ctx = (CUcontext)(uintptr_t)0x2000;
  stream0.dev = &dev0;
  stream1.dev = &dev1;
  return 0;
}

static void copies_past_the_end_name_both_sizes(void **state) {
  (void)state;
  add(DBASE, 4096, CUCORE_MEM_DEVICE, &dev0, NULL);
  char host[64];
  static char big[8192];
  assert_status(cucore_memcpy_htod(&dev0, DBASE + 512, big, 4096, NULL), CUCORE_OUT_OF_BOUNDS);
  assert_contains(cucore_last_error(), "cucore_memcpy_htod: the destination runs past the end");
  assert_contains(cucore_last_error(), "4096 bytes at offset 512 of a 4096-byte device allocation");
  assert_contains(cucore_last_error(), "at most 3584 bytes fit");
  assert_status(cucore_memcpy_dtoh(&dev0, big, DBASE + 4095, 2, &stream0), CUCORE_OUT_OF_BOUNDS);
  assert_contains(cucore_last_error(), "source");
  assert_status(cucore_memcpy_dtod(&dev0, DBASE, DBASE + 1, 4096, NULL), CUCORE_OUT_OF_BOUNDS);
  assert_contains(cucore_last_error(), "source runs past");
  assert_status(cucore_memcpy(&dev0, CUCORE_HOST_ADDR(big), DBASE + 4000, 97, NULL),
                CUCORE_OUT_OF_BOUNDS);
  /* A host buffer cucore recorded is checked too. */
  add(CUCORE_HOST_ADDR(host), sizeof host, CUCORE_MEM_PINNED, NULL, NULL);
  assert_status(cucore_memcpy_htod(&dev0, DBASE, host, 65, NULL), CUCORE_OUT_OF_BOUNDS);
  assert_contains(cucore_last_error(), "64-byte pinned host allocation");
  assert_status(cucore_memcpy_htoh(&dev0, big, host + 8, 57, NULL), CUCORE_OUT_OF_BOUNDS);
  /* A range that starts outside every allocation but runs into one. */
  assert_status(cucore_memcpy_htod(&dev0, DBASE - 16, big, 32, NULL), CUCORE_OUT_OF_BOUNDS);
  assert_contains(cucore_last_error(), "starts outside every cucore allocation but runs into");
  drop(CUCORE_HOST_ADDR(host));
  drop(DBASE);
}

static void sizes_that_wrap_or_are_negative(void **state) {
  (void)state;
  char buf[16] = {0};
  int n = -4;
  assert_status(cucore_memcpy_htod(&dev0, DBASE, buf, (size_t)n, NULL), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "-4 as a signed number");
  assert_status(cucore_memcpy_dtod(&dev0, UINT64_MAX - 8, DBASE, 64, NULL),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "wraps around the end of the address space");
  assert_status(cucore_memset_d32(&dev0, DBASE, 0, (size_t)1 << 62, NULL), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "overflow");
  assert_status(cucore_mem_alloc(&dev0, (size_t)-1, &(cucore_devptr){0}), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "-1 as a signed number");
  cucore_devptr p = 1;
  assert_status(cucore_mem_alloc_async(&stream0, (size_t)(long)-100, &p), CUCORE_INVALID_ARGUMENT);
  assert_int_equal(p, 0);
  assert_status(cucore_mem_alloc_async(&stream0, 0, &p), CUCORE_INVALID_ARGUMENT);
  void *h = (void *)1;
  /* Not a pool: refused before its size is looked at. */
  assert_status(cucore_host_pool_alloc((cucore_host_pool *)&h, (size_t)-8, &h), CUCORE_MISUSE);
  assert_null(h);
  assert_status(cucore_memcpy_htod(&dev0, 0, buf, 4, NULL), CUCORE_INVALID_ARGUMENT);
  assert_ok(cucore_memcpy_htod(&dev0, 0, NULL, 0, NULL)); /* empty copies are no-ops */
  assert_status(cucore_memcpy_htod(&dev0, DBASE, buf, 4, &stream1), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "the stream belongs to device 1, not device 0");
}

static void fills_check_alignment_and_range(void **state) {
  (void)state;
  add(DBASE, 4096, CUCORE_MEM_DEVICE, &dev0, NULL);
  assert_status(cucore_memset_d16(&dev0, DBASE + 1, 7, 4, NULL), CUCORE_ARG_ALIGNMENT);
  assert_status(cucore_memset_d32(&dev0, DBASE + 2, 7, 4, NULL), CUCORE_ARG_ALIGNMENT);
  assert_status(cucore_memset_d32(&dev0, DBASE + 4, 7, 1024, NULL), CUCORE_OUT_OF_BOUNDS);
  assert_contains(cucore_last_error(), "4096 bytes at offset 4");
  assert_status(cucore_memset_d8(&dev0, DBASE, 7, 4097, NULL), CUCORE_OUT_OF_BOUNDS);
  /* 2D: 17 rows of 64 floats with pitch 256 end at 16 * 256 + 256 = 4352 > 4096. */
  assert_status(cucore_memset_2d(&dev0, DBASE, 256, 1, 4, 64, 17, NULL), CUCORE_OUT_OF_BOUNDS);
  assert_contains(cucore_last_error(), "spans bytes 0 to 4352");
  assert_status(cucore_memset_2d(&dev0, DBASE, 100, 1, 4, 64, 2, NULL), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "pitch is below");
  assert_status(cucore_memset_2d(&dev0, DBASE, 256, 1, 3, 64, 2, NULL), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_memset_2d(&dev0, DBASE, 258, 1, 4, 64, 2, NULL), CUCORE_ARG_ALIGNMENT);
  drop(DBASE);
}

static void copies_2d_and_3d_check_footprints(void **state) {
  (void)state;
  add(DBASE, 4096, CUCORE_MEM_DEVICE_PITCHED, &dev0, NULL);
  static char host[1 << 16];
  cucore_copy_2d c;
  memset(&c, 0, sizeof c);
  c.src = CUCORE_HOST_ADDR(host);
  c.src_pitch = 100;
  c.dst = DBASE;
  c.dst_pitch = 128;
  c.width_bytes = 100;
  c.height = 33; /* the last row ends at 32 * 128 + 100 = 4196 */
  assert_status(cucore_memcpy_2d(&dev0, &c, NULL), CUCORE_OUT_OF_BOUNDS);
  assert_contains(cucore_last_error(), "33 rows of 100 bytes, pitch 128");
  assert_contains(cucore_last_error(), "4196");
  c.height = 32;
  c.dst_y = 1; /* shifts the footprint down a row: 32 * 128 + 100 again */
  assert_status(cucore_memcpy_2d(&dev0, &c, NULL), CUCORE_OUT_OF_BOUNDS);
  c.dst_y = 0;
  c.src_pitch = 50;
  assert_status(cucore_memcpy_2d(&dev0, &c, NULL), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "source pitch 50 is below the 100 bytes");
  cucore_copy_3d d;
  memset(&d, 0, sizeof d);
  d.src = CUCORE_HOST_ADDR(host);
  d.src_pitch = 64;
  d.src_height = 4;
  d.dst = DBASE;
  d.dst_pitch = 64;
  d.dst_height = 8;
  d.width_bytes = 64;
  d.height = 8;
  d.depth = 8; /* 8 slices of 8 rows of 64 bytes: exactly 4096 */
  assert_status(cucore_memcpy_3d(&dev0, &d, NULL), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "source height 4 (rows per slice) is below the 8 rows");
  d.src_height = 8;
  d.depth = 9; /* one slice more: 4608 > 4096 */
  assert_status(cucore_memcpy_3d(&dev0, &d, NULL), CUCORE_OUT_OF_BOUNDS);
  assert_contains(cucore_last_error(), "9 slices of 8 rows of 64 bytes");
  d.dst_x_bytes = UINT64_MAX / 2; /* arithmetic that overflows is refused, not wrapped */
  d.dst_z = UINT64_MAX / 2;
  assert_int_not_equal(cucore_memcpy_3d(&dev0, &d, NULL), CUCORE_OK);
  drop(DBASE);
}

static void frees_say_what_the_pointer_is(void **state) {
  (void)state;
  static char pinned[128];
  add(DBASE, 4096, CUCORE_MEM_DEVICE, &dev0, NULL);
  add(DBASE + 0x10000, 256, CUCORE_MEM_POOL, &dev0, NULL);
  add(CUCORE_HOST_ADDR(pinned), sizeof pinned, CUCORE_MEM_PINNED, NULL, NULL);
  assert_status(cucore_mem_free(&dev0, DBASE + 0x90000), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "cucore did not allocate it");
  assert_status(cucore_mem_free(&dev0, DBASE + 8), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "8 bytes inside a 4096-byte device allocation");
  assert_status(cucore_mem_free(&dev1, DBASE), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "allocated on device 0; it is freed through device 1");
  assert_status(cucore_mem_free(&dev0, DBASE + 0x10000), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "cucore_mem_free_async or cucore_mem_pool_free_async");
  assert_status(cucore_mem_free(&dev0, CUCORE_HOST_ADDR(pinned)), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "free it with cucore_host_free");
  assert_status(cucore_host_free(&dev0, (void *)(uintptr_t)DBASE), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "free it with cucore_mem_free");
  assert_status(cucore_mem_free_async(&stream0, DBASE), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "not a stream-ordered allocation");
  assert_status(cucore_host_unregister(&dev0, pinned), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_host_pool_free((cucore_host_pool *)&dev1, pinned), CUCORE_MISUSE);
  assert_contains(cucore_last_error(), "a cucore_device, not a cucore_host_pool");
  /* In use by a texture: refused, and the record stays. */
  cc_reg_use(&cc_mem_registry, DBASE, 0, 1, NULL);
  assert_status(cucore_mem_free(&dev0, DBASE), CUCORE_IN_USE);
  assert_contains(cucore_last_error(), "still used by 1 texture or surface object and 0 DLPack");
  cc_reg_use(&cc_mem_registry, DBASE, 0, -1, NULL);
  /* Freed (here by hand, as a successful free would): a second free says so. */
  drop(DBASE);
  assert_status(cucore_mem_free(&dev0, DBASE), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "was freed already");
  assert_contains(cucore_last_error(), "a double free?");
  assert_status(cucore_mem_free(&dev0, DBASE + 100), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "lies in memory freed already");
  assert_ok(cucore_mem_free(&dev0, 0));
  assert_ok(cucore_host_free(&dev0, NULL));
  drop(DBASE + 0x10000);
  drop(CUCORE_HOST_ADDR(pinned));
}

static void pools_refuse_the_wrong_pool_and_live_allocations(void **state) {
  (void)state;
  struct cucore_mem_pool a, b;
  memset(&a, 0, sizeof a);
  memset(&b, 0, sizeof b);
  cc_handle_init(&a, CC_KIND_MEM_POOL);
  cc_handle_init(&b, CC_KIND_MEM_POOL);
  a.dev = b.dev = &dev0;
  a.owned = b.owned = 1;
  a.handle = (CUmemoryPool)(uintptr_t)0xa;
  b.handle = (CUmemoryPool)(uintptr_t)0xb;
  cc_mem_rec r;
  memset(&r, 0, sizeof r);
  r.base = DBASE;
  r.size = 1000;
  r.kind = CUCORE_MEM_POOL;
  r.ctx = dev0.ctx;
  r.cupool = a.handle;
  r.owner = &a;
  assert_int_equal(cc_reg_insert(&cc_mem_registry, &r, 0), CC_REG_OK); /* a's live count: 1 */
  assert_status(cucore_mem_pool_free_async(&b, &stream0, DBASE), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "came from a pool created by cucore_mem_pool_create");
  assert_contains(cucore_last_error(), "free it on the pool it came from");
  assert_true(cc_reg_find(&cc_mem_registry, DBASE, NULL)); /* still live */
  assert_status(cucore_mem_pool_destroy(&a), CUCORE_IN_USE);
  assert_contains(cucore_last_error(), "1 live allocation (1000 bytes)");
  b.imported = 1;
  cucore_devptr p = 5;
  assert_status(cucore_mem_pool_alloc_async(&b, &stream0, 64, &p), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "imported pools only hand out");
  assert_int_equal(p, 0);
  /* Damaged IPC data is refused before the driver. */
  cucore_ipc_pointer ip;
  memset(&ip, 0, sizeof ip);
  ip.magic = 0x12345678;
  assert_status(cucore_mem_pool_import_pointer(&b, &ip, &p), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "not a cucore_ipc_pointer");
  assert_status(cucore_mem_pool_import_pointer(&a, &ip, &p), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "imported with cucore_mem_pool_import_fd");
  int fd = 3;
  assert_status(cucore_mem_pool_export_fd(&a, &fd), CUCORE_INVALID_ARGUMENT);
  assert_int_equal(fd, -1);
  assert_contains(cucore_last_error(), "CUCORE_POOL_IPC");
  assert_status(cucore_mem_pool_set_attr(&a, CUCORE_POOL_USED_CURRENT, 0), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_mem_pool_set_attr(&a, CUCORE_POOL_USED_HIGH, 5), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_mem_pool_set_attr(&a, (cucore_pool_attr)9, 0), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_mem_pool_set_access(&a, &dev1, (cucore_access)2), CUCORE_INVALID_ARGUMENT);
  cucore_mem_pool_props props = {.flags = 8};
  cucore_mem_pool *out = (cucore_mem_pool *)1;
  assert_status(cucore_mem_pool_create(&dev0, &props, &out), CUCORE_INVALID_ARGUMENT);
  assert_null(out);
  drop(DBASE);
}

static void pointer_facts_and_strict_checks_from_the_record(void **state) {
  (void)state;
  static char pinned[256];
  add(DBASE, 4096, CUCORE_MEM_DEVICE, &dev0, NULL);
  add(CUCORE_HOST_ADDR(pinned), sizeof pinned, CUCORE_MEM_PINNED_POOL, NULL, NULL);
  cucore_pointer_facts f;
  assert_ok(cucore_pointer_get_facts(DBASE + 100, &f));
  assert_int_equal(f.kind, CUCORE_MEM_DEVICE);
  assert_int_equal(f.base, DBASE);
  assert_int_equal(f.size, 4096);
  assert_int_equal(f.offset, 100);
  assert_int_equal(f.device, 0);
  assert_int_equal(f.freed, 0);
  assert_string_equal(cucore_mem_kind_name(f.kind), "device");
  assert_ok(cucore_pointer_get_facts(CUCORE_HOST_ADDR(pinned) + 8, &f));
  assert_int_equal(f.kind, CUCORE_MEM_PINNED_POOL);
  assert_int_equal(f.device, -1);
  /* Strict checks: the same device, and pinned memory, pass from the record alone. */
  cc_begin(); /* internal calls: each starts a message of its own */
  assert_ok(cc_mem_check_kernel_pointer(&dev0, DBASE + 64, 0, "k", 1));
  assert_ok(cc_mem_check_kernel_pointer(&dev1, CUCORE_HOST_ADDR(pinned), 0, "k", 1));
  assert_ok(cc_mem_check_kernel_pointer(&dev0, 0, 0, "k", 0)); /* NULL is a valid argument */
  assert_int_equal(CUCORE_CODE(cc_mem_check_kernel_pointer(&dev0, DBASE + 64, 8192, "k", 2)),
                   CUCORE_OUT_OF_BOUNDS);
  drop(DBASE);
  assert_ok(cucore_pointer_get_facts(DBASE + 100, &f));
  assert_int_equal(f.freed, 1);
  assert_int_equal(f.kind, CUCORE_MEM_DEVICE);
  cc_begin();
  cucore_status st = cc_mem_check_kernel_pointer(&dev0, DBASE + 64, 0, "saxpy", 1);
  assert_int_equal(CUCORE_CODE(st), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "argument 1 of `saxpy`: 0x");
  assert_contains(cucore_last_error(), "was freed: it is 64 bytes into what was a 4096-byte");
  assert_ok(cucore_pointer_get_facts(0x1234, &f));
  assert_int_equal(f.kind, CUCORE_MEM_UNKNOWN);
  drop(CUCORE_HOST_ADDR(pinned));
  unsigned flags = 0;
  assert_status(cucore_mem_set_checks(8), CUCORE_INVALID_ARGUMENT);
  assert_ok(cucore_mem_set_checks(CUCORE_MEM_CHECK_KERNEL_POINTERS));
  assert_ok(cucore_mem_get_checks(&flags));
  assert_int_equal(flags, CUCORE_MEM_CHECK_KERNEL_POINTERS);
  assert_ok(cucore_mem_set_checks(0));
}

static void managed_registration_textures_arrays(void **state) {
  (void)state;
  add(DBASE, 4096, CUCORE_MEM_DEVICE, &dev0, NULL);
  cucore_location loc = {CUCORE_LOCATION_DEVICE, 0};
  assert_status(cucore_mem_prefetch(DBASE, 64, loc, &stream0), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "apply to managed memory");
  assert_status(cucore_mem_advise(DBASE, 64, (cucore_mem_advice)9, loc), CUCORE_INVALID_ARGUMENT);
  drop(DBASE);
  add(DBASE, 4096, CUCORE_MEM_MANAGED, &dev0, NULL);
  assert_status(cucore_mem_prefetch(DBASE + 4000, 200, loc, &stream0), CUCORE_OUT_OF_BOUNDS);
  assert_status(cucore_mem_advise(DBASE, 8192, CUCORE_ADVISE_READ_MOSTLY, loc),
                CUCORE_OUT_OF_BOUNDS);
  drop(DBASE);
  /* Registration: overlaps with memory cucore pinned are named. */
  static char buf[1024];
  add(CUCORE_HOST_ADDR(buf) + 512, 64, CUCORE_MEM_PINNED, NULL, NULL);
  assert_status(cucore_host_register(&dev0, buf, sizeof buf, 0), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "overlap a 64-byte pinned host allocation");
  assert_status(cucore_host_register(&dev0, buf, sizeof buf, 0x40), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_host_register(&dev0, (void *)(uintptr_t)(UINT64_MAX - 10), 100, 0),
                CUCORE_INVALID_ARGUMENT);
  drop(CUCORE_HOST_ADDR(buf) + 512);
  /* Textures: the description, and the range against its allocation, before the driver. */
  add(DBASE, 4096, CUCORE_MEM_DEVICE, &dev0, NULL);
  cucore_texture *t = (cucore_texture *)1;
  cucore_texture_desc td;
  memset(&td, 0, sizeof td);
  td.address_mode[0] = CUCORE_ADDRESS_WRAP;
  assert_status(cucore_texture_create_linear(&dev0, DBASE, 1024, CUCORE_FORMAT_FLOAT, 1, &td, &t),
                CUCORE_INVALID_ARGUMENT);
  assert_null(t);
  assert_contains(cucore_last_error(), "works only with normalized coordinates");
  td.address_mode[0] = CUCORE_ADDRESS_CLAMP;
  td.filter = CUCORE_FILTER_LINEAR;
  td.flags = CUCORE_TEXTURE_READ_AS_INTEGER;
  assert_status(cucore_texture_create_linear(&dev0, DBASE, 1024, CUCORE_FORMAT_U8, 4, &td, &t),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "linear filtering returns floating-point values");
  assert_status(cucore_texture_create_linear(&dev0, DBASE, 8192, CUCORE_FORMAT_FLOAT, 1, NULL, &t),
                CUCORE_OUT_OF_BOUNDS);
  assert_status(cucore_texture_create_linear(&dev0, DBASE, 1022, CUCORE_FORMAT_FLOAT, 1, NULL, &t),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "whole number of 4-byte elements");
  assert_status(cucore_texture_create_linear(&dev0, DBASE, 1024, CUCORE_FORMAT_FLOAT, 3, NULL, &t),
                CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_texture_create_pitch2d(&dev0, DBASE, 64, 17, 256, CUCORE_FORMAT_FLOAT, 1,
                                              NULL, &t),
                CUCORE_OUT_OF_BOUNDS);
  assert_status(cucore_texture_create_pitch2d(&dev0, DBASE, 64, 2, 128, CUCORE_FORMAT_FLOAT, 1,
                                              NULL, &t),
                CUCORE_INVALID_ARGUMENT);
  drop(DBASE);
  cucore_array *arr = (cucore_array *)1;
  cucore_array_desc ad = {.width = 16,
                          .height = 0,
                          .depth = 4,
                          .format = CUCORE_FORMAT_FLOAT,
                          .channels = 1};
  assert_status(cucore_array_create(&dev0, &ad, &arr), CUCORE_INVALID_ARGUMENT);
  assert_null(arr);
  assert_contains(cucore_last_error(), "a 3D array needs height > 0");
  ad.depth = 0;
  ad.format = (cucore_array_format)0x33;
  assert_status(cucore_array_create(&dev0, &ad, &arr), CUCORE_INVALID_ARGUMENT);
  ad.format = CUCORE_FORMAT_HALF;
  ad.channels = 3;
  assert_status(cucore_array_create(&dev0, &ad, &arr), CUCORE_INVALID_ARGUMENT);
}

/* A pinned pool's allocator that always fails as the driver does when the host is out of
 * pinnable memory. */
static int failing_alloc(void *ctx, size_t bytes, cc_hpool_block *b) {
  (void)ctx;
  (void)bytes;
  b->base = NULL;
  return (int)CUDA_ERROR_OUT_OF_MEMORY;
}

static void out_of_memory_messages_give_requested_and_available(void **state) {
  (void)state;
  /* The total limit: what was asked for, what is in use, the limit and what still fits. */
  cucore_host_pool_props props = {.max_cached_bytes = 0, .max_total_bytes = 1 << 20};
  cucore_host_pool *pool = NULL;
  assert_ok(cucore_host_pool_create(&dev0, &props, &pool));
  void *p = (void *)1;
  assert_status(cucore_host_pool_alloc(pool, 3u << 20, &p), CUCORE_HOST_OUT_OF_MEMORY);
  assert_null(p);
  assert_contains(cucore_last_error(), "asked for 3.0 MiB (3145728 bytes, a 3.0 MiB block)");
  assert_contains(cucore_last_error(), "0 bytes in use and its max_total_bytes is 1.0 MiB, so "
                                       "1.0 MiB more fit");
  /* The driver out of pinnable memory (the pool's allocator swapped for a failing one: the
   * pool begins with its handle word, then the core): the request and the host's available
   * memory. */
  struct pool_head {
    cc_handle hdr;
    cc_hpool core;
  };
  ((struct pool_head *)(void *)pool)->core.ops.alloc = failing_alloc;
  assert_status(cucore_host_pool_alloc(pool, 5000, &p), CUCORE_HOST_OUT_OF_MEMORY);
  assert_null(p);
  assert_contains(cucore_last_error(), "asked for 4.9 KiB (5000 bytes, a 5.0 KiB block) of "
                                       "pinned host memory; the host has ");
  assert_contains(cucore_last_error(), "available (MemAvailable)");
  assert_true(cc_host_mem_available() > 0); /* Linux tells it (the number moves: not compared) */
  cucore_host_pool_stats st;
  assert_ok(cucore_host_pool_get_stats(pool, &st));
  assert_int_equal(st.in_use_blocks, 0); /* nothing leaked into the counters */
  assert_int_equal(st.misses, 0);
  assert_ok(cucore_host_pool_destroy(pool));
}

int main(void) {
  /* White-box checks over made-up devices and records: the driver is kept out (a real one
   * would be handed the made-up contexts), so a machine with a GPU runs the same test; the
   * gpu_memory_* tests cover the device. */
  setenv("CUCORE_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(copies_past_the_end_name_both_sizes),
      cmocka_unit_test(sizes_that_wrap_or_are_negative),
      cmocka_unit_test(fills_check_alignment_and_range),
      cmocka_unit_test(copies_2d_and_3d_check_footprints),
      cmocka_unit_test(frees_say_what_the_pointer_is),
      cmocka_unit_test(pools_refuse_the_wrong_pool_and_live_allocations),
      cmocka_unit_test(pointer_facts_and_strict_checks_from_the_record),
      cmocka_unit_test(managed_registration_textures_arrays),
      cmocka_unit_test(out_of_memory_messages_give_requested_and_available),
  };
  return cmocka_run_group_tests(tests, setup, NULL);
}
