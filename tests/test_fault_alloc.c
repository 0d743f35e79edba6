/* test_fault_alloc.c -- allocation failure at every point. Each public
 * sequence that needs no GPU (compile C++ to cubin, PTX and a fatbin; link PTX with
 * nvJitLink; objects from bytes; offline kernel lookup and argument binding; the host
 * occupancy model; the binary reader; the compile cache storing and hitting) runs once clean to
 * count cucore's allocations K (through the hook in src/base/util.c), then once for each N in
 * 1..K with allocation N failing. Each run must fail with CUCORE_HOST_OUT_OF_MEMORY and a
 * message that says what was being allocated, or succeed with the same result as the clean
 * run (an allocation a step absorbs: the cache steps aside); every handle is destroyed; nothing
 * leaks (the ASan build runs this same test); a clean run afterwards still gives the reference.
 * Long mode (CUCORE_FAULT_LONG=1) fails every point of every sequence; the default mode every
 * point of the short sequences and a stride over the long ones. */
#include "support.h"

#include "base/base.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const src =
    "struct __align__(16) V { float x, y, z, w; };\n"
    "template <typename T> __global__ void fill(T *x, T v, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] = v; }\n"
    "template __global__ void fill<float>(float *, float, int);\n"
    "extern \"C\" __global__ void vec(V v, double d, int *out) { out[0] = (int)(v.x + d); }\n"
    "__constant__ float table[16];\n";

static unsigned char *ref_cubin;
static size_t ref_cubin_size;
static char *ref_ptx;

/* What one run of a sequence gave: a status, and a digest of its result when it succeeded. */
typedef struct outcome {
  cucore_status st;
  long allocations;
  char message[512];
  uint64_t digest;
} outcome;

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

static cucore_status compile_to(cucore_code_type target, const char *define, cucore_object **out) {
  cucore_options *o = NULL;
  cucore_program *p = NULL;
  *out = NULL;
  cucore_status st = cucore_options_create(&o);
  if (st == CUCORE_OK) st = cucore_options_set_string(o, CUCORE_OPT_ARCH, "sm_90");
  int used = 0;
  /* One option, or two separated by a space ("--gencode=sm_80 --gencode=sm_90"). */
  char opts[128] = "";
  if (define) snprintf(opts, sizeof opts, "%s", define);
  for (char *tok = strtok(opts, " "); st == CUCORE_OK && tok; tok = strtok(NULL, " "))
    st = cucore_options_parse(o, tok, NULL, &used);
  if (st == CUCORE_OK) st = cucore_program_create(CUCORE_CODE_CUDA_CPP, src, 0, "fault.cu", o, &p);
  if (st == CUCORE_OK) st = cucore_program_add_name_expression(p, "fill<float>");
  if (st == CUCORE_OK) st = cucore_program_compile(p, target, out);
  cucore_status d1 = cucore_program_destroy(p), d2 = cucore_options_destroy(o);
  assert_int_equal(d1, CUCORE_OK);
  assert_int_equal(d2, CUCORE_OK);
  return st;
}

/* Sequence 1: compile to cubin (cache off), look kernels up offline, bind, occupancy model. */
static cucore_status seq_compile_bind(uint64_t *digest) {
  cucore_object *obj = NULL;
  cucore_kernel *k = NULL, *kv = NULL;
  cucore_args *a = NULL;
  cucore_status st = compile_to(CUCORE_CODE_CUBIN, NULL, &obj);
  if (st == CUCORE_OK) {
    const void *code;
    size_t size;
    cucore_object_get_code(obj, NULL, &code, &size);
    *digest = fnv(*digest, code, size);
    st = cucore_object_get_kernel(obj, "fill<float>", &k);
  }
  if (st == CUCORE_OK) st = cucore_object_get_kernel(obj, "vec", &kv);
  if (st == CUCORE_OK) st = cucore_args_create(k, &a);
  if (st == CUCORE_OK) st = cucore_args_push_ptr(a, 0x1000);
  if (st == CUCORE_OK) st = cucore_args_push_f32(a, 2.5f);
  if (st == CUCORE_OK) st = cucore_args_push_i32(a, 64);
  if (st == CUCORE_OK) {
    void *buf = NULL;
    size_t n = 0;
    st = cucore_args_get_native(a, NULL, &buf, &n);
    if (st == CUCORE_OK) *digest = fnv(*digest, buf, n);
  }
  if (st == CUCORE_OK) {
    cucore_arch_limits l;
    cucore_kernel_resources r = CUCORE_KERNEL_RESOURCES_INIT;
    cucore_occupancy_result o;
    st = cucore_arch_get_limits(90, &l);
    r.registers = 32;
    if (st == CUCORE_OK) st = cucore_occupancy_model_blocks(&l, &r, 256, 1024, 0, &o);
    if (st == CUCORE_OK)
      *digest = fnv(*digest, &o.active_blocks_per_sm, sizeof o.active_blocks_per_sm);
  }
  assert_int_equal(cucore_args_destroy(a), CUCORE_OK);
  assert_int_equal(cucore_kernel_destroy(k), CUCORE_OK);
  assert_int_equal(cucore_kernel_destroy(kv), CUCORE_OK);
  assert_int_equal(cucore_object_destroy(obj), CUCORE_OK);
  return st;
}

/* Sequence 2: the reader on a cubin, a fatbin and PTX; an object from bytes. */
static cucore_status seq_reader(uint64_t *digest) {
  cucore_binary *bin = NULL;
  cucore_status st = cucore_binary_open(ref_cubin, ref_cubin_size, CUCORE_CODE_AUTO, 0, &bin);
  if (st == CUCORE_OK) {
    uint32_t n = 0;
    st = cucore_binary_get_kernel_count(bin, &n);
    for (uint32_t i = 0; st == CUCORE_OK && i < n; i++) {
      const cucore_kernel_info *k;
      st = cucore_binary_get_kernel(bin, i, &k);
      if (st == CUCORE_OK) *digest = fnv(*digest, k->name, strlen(k->name));
    }
  }
  cucore_binary_destroy(bin);
  bin = NULL;
  if (st == CUCORE_OK) st = cucore_binary_open(ref_ptx, strlen(ref_ptx), CUCORE_CODE_PTX, 90, &bin);
  if (st == CUCORE_OK) {
    const cucore_kernel_info *k;
    st = cucore_binary_find_kernel(bin, "vec", &k);
    if (st == CUCORE_OK) *digest = fnv(*digest, &k->param_count, sizeof k->param_count);
  }
  cucore_binary_destroy(bin);
  cucore_object *obj = NULL;
  cucore_kernel *k = NULL;
  if (st == CUCORE_OK)
    st = cucore_object_from_memory(ref_cubin, ref_cubin_size, CUCORE_CODE_AUTO, "bytes", &obj);
  if (st == CUCORE_OK) st = cucore_object_get_kernel(obj, "vec", &k);
  if (st == CUCORE_OK) {
    int n = 0;
    st = cucore_kernel_get_param_count(k, &n);
    *digest = fnv(*digest, &n, sizeof n);
  }
  cucore_kernel_destroy(k);
  cucore_object_destroy(obj);
  return st;
}

/* Sequence 3: PTX, then nvJitLink links it to a cubin; a fatbin of two gencodes. */
static cucore_status seq_link_fatbin(uint64_t *digest) {
  cucore_linker *lk = NULL;
  cucore_options *o = NULL;
  cucore_object *out = NULL, *fat = NULL;
  cucore_status st = cucore_options_create(&o);
  if (st == CUCORE_OK) st = cucore_options_set_string(o, CUCORE_OPT_ARCH, "sm_90");
  if (st == CUCORE_OK) st = cucore_linker_create(o, &lk);
  if (st == CUCORE_OK)
    st = cucore_linker_add(lk, CUCORE_CODE_PTX, ref_ptx, strlen(ref_ptx), "a.ptx");
  if (st == CUCORE_OK) st = cucore_linker_complete(lk, CUCORE_CODE_CUBIN, &out);
  if (st == CUCORE_OK) {
    int count = 0;
    st = cucore_object_get_kernel_count(out, &count);
    *digest = fnv(*digest, &count, sizeof count);
  }
  if (st == CUCORE_OK) st = compile_to(CUCORE_CODE_FATBIN, "--gencode=sm_80 --gencode=sm_90", &fat);
  if (st == CUCORE_OK) {
    size_t size = 0;
    cucore_object_get_code(fat, NULL, NULL, &size);
    *digest = fnv(*digest, &size, sizeof size);
  }
  cucore_object_destroy(fat);
  cucore_object_destroy(out);
  cucore_linker_destroy(lk);
  cucore_options_destroy(o);
  return st;
}

/* Sequence 4: the compile cache on: a store, then an in-process hit and (after clearing the
 * process layer through a different define) a disk round trip. */
static long cache_run;
static cucore_status seq_cache(uint64_t *digest) {
  char define[64];
  snprintf(define, sizeof define, "-DRUN=%ld", cache_run++);
  cucore_status st = CUCORE_OK;
  for (int i = 0; i < 2 && st == CUCORE_OK; i++) {
    cucore_object *obj = NULL;
    st = compile_to(CUCORE_CODE_CUBIN, define, &obj);
    if (st == CUCORE_OK) {
      const void *code;
      size_t size;
      cucore_object_get_code(obj, NULL, &code, &size);
      *digest = fnv(*digest, &size, sizeof size);
    }
    cucore_object_destroy(obj);
  }
  cucore_cache_stats s;
  if (st == CUCORE_OK) st = cucore_cache_get_stats(&s);
  return st;
}

typedef cucore_status (*sequence)(uint64_t *digest);

static outcome run_once(sequence f, int on, long fail_at) {
  outcome o = {0};
  uint64_t digest = 1469598103934665603ull;
  cc_test_alloc_hook(on, fail_at);
  o.st = f(&digest);
  o.allocations = cc_test_alloc_count();
  cc_test_alloc_hook(0, 0);
  o.digest = digest;
  snprintf(o.message, sizeof o.message, "%s", o.st ? cucore_last_error() : "");
  return o;
}

static void every_point(const char *name, sequence f, int enable_cache, long stride) {
  cucore_cache_set_enabled(enable_cache);
  outcome clean = run_once(f, 1, 0);
  if (clean.st != CUCORE_OK) fail_msg("%s: the clean run failed: %s", name, clean.message);
  long k = clean.allocations;
  assert_true(k > 0);
  long reported = 0, absorbed = 0, tried = 0;
  for (long n = 1; n <= k; n += (n < 64 ? 1 : stride)) {
    outcome o = run_once(f, 1, n);
    tried++;
    if (o.st == CUCORE_OK) {
      /* Absorbed: the result must still be the clean one (only digests of sequences whose
       * result does not depend on the run's own define are compared). */
      if (f != seq_cache && o.digest != clean.digest)
        fail_msg("%s: allocation %ld failed, the call succeeded, but the result differs", name, n);
      absorbed++;
      continue;
    }
    if (CUCORE_CODE(o.st) != CUCORE_HOST_OUT_OF_MEMORY)
      fail_msg("%s: allocation %ld of %ld failed and gave %s, not CUCORE_HOST_OUT_OF_MEMORY: %s",
               name, n, k, cucore_status_name(o.st), o.message);
    if (!strstr(o.message, "memory"))
      fail_msg("%s: allocation %ld: the message does not say memory ran out: %s", name, n,
               o.message);
    reported++;
  }
  /* Nothing was left broken: a clean run gives the reference again. */
  outcome again = run_once(f, 1, 0);
  if (again.st != CUCORE_OK || (f != seq_cache && again.digest != clean.digest))
    fail_msg("%s: a clean run after the faults differs: %s", name, again.message);
  print_message("allocation faults, %s: %ld allocations, %ld failure points tried: %ld reported "
                "as out of memory, %ld absorbed with the right result\n",
                name, k, tried, reported, absorbed);
  cucore_cache_set_enabled(1);
}

static long stride(void) {
  const char *l = getenv("CUCORE_FAULT_LONG");
  return l && l[0] == '1' ? 1 : 7;
}

static void compile_and_bind(void **state) {
  (void)state;
  every_point("compile + offline bind + model", seq_compile_bind, 0, stride());
}
static void reader(void **state) {
  (void)state;
  every_point("reader + object from bytes", seq_reader, 0, 1);
}
static void link_and_fatbin(void **state) {
  (void)state;
  every_point("nvJitLink + fatbin", seq_link_fatbin, 0, stride());
}
static void cache(void **state) {
  (void)state;
  every_point("compile cache store + hit", seq_cache, 1, stride());
}

static int setup(void **state) {
  (void)state;
  cucore_object *obj = NULL;
  cucore_cache_set_enabled(0);
  if (compile_to(CUCORE_CODE_CUBIN, NULL, &obj) != CUCORE_OK) return -1;
  const void *code;
  cucore_object_get_code(obj, NULL, &code, &ref_cubin_size);
  ref_cubin = malloc(ref_cubin_size);
  memcpy(ref_cubin, code, ref_cubin_size);
  cucore_object_destroy(obj);
  if (compile_to(CUCORE_CODE_PTX, NULL, &obj) != CUCORE_OK) return -1;
  size_t n;
  cucore_object_get_code(obj, NULL, &code, &n);
  ref_ptx = calloc(1, n + 1);
  memcpy(ref_ptx, code, n);
  cucore_object_destroy(obj);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  free(ref_cubin);
  free(ref_ptx);
  return 0;
}

int main(void) {
  /* Without a GPU the offline paths run; with one, keep the driver out all the same (the
   * fault loop is about cucore's own allocations). A cache directory of this run's own. */
  setenv("CUCORE_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  char dir[] = "/tmp/cucore-fault-alloc-XXXXXX";
  if (!mkdtemp(dir)) return 1;
  setenv("CUCORE_CACHE_DIR", dir, 1);
  const struct CMUnitTest tests[] = {cmocka_unit_test(compile_and_bind), cmocka_unit_test(reader),
                                     cmocka_unit_test(link_and_fatbin), cmocka_unit_test(cache)};
  int rc = cmocka_run_group_tests(tests, setup, teardown);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
  return rc;
}
