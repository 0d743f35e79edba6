/* test_cache.c -- the compile cache within one process: hits give what a fresh compile gives,
 * the in-process layer hands out the same object, damaged entries are removed and recompiled,
 * every input is in the key, the size cap evicts the least recently used entries, compiles the
 * key cannot see are refused with a reason, and the switches turn it off. Every test uses its
 * own temporary directory (cucore_cache_set_dir) and starts with an empty in-process layer. */
#include "cache_support.h"

#include <fcntl.h>
#include <limits.h>
#include <time.h>

static const char *const SCALE_EXPRS[] = {"scale<float>", "scale<double>"};

typedef struct fixture {
  char *dir;
} fixture;

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  if (!f || !(f->dir = cache_test_mkdtemp())) return -1;
  if (cache_test_settings(f->dir) != 0) return -1;
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  cache_test_settings(NULL);
  cache_test_rm_rf(f->dir);
  free(f->dir);
  free(f);
  return 0;
}

static long file_size(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

/* A fresh, uncached compile: what every cached result must equal. */
static cucore_object *reference(const char *src, const char *arch, cucore_code_type target,
                                const cucore_options *opts, const char *const *exprs, int n) {
  cucore_object *obj = NULL;
  cucore_cache_info info;
  assert_ok(cache_test_compile(src, "k.cu", arch, target, opts, exprs, n, 0, &obj, &info));
  assert_int_equal(info.result, CUCORE_CACHE_DISABLED);
  assert_contains(info.reason, "cucore_program_set_cache");
  return obj;
}

/* ---- hits -------------------------------------------------------------------------------- */

static void miss_stores_then_disk_hit_equals_a_fresh_compile(void **state) {
  fixture *f = *state;
  char *src = cache_test_source(1);
  cucore_object *ref = reference(src, "sm_90", CUCORE_CODE_CUBIN, NULL, SCALE_EXPRS, 2);
  cucore_cache_stats before;
  assert_ok(cucore_cache_get_stats(&before));
  assert_int_equal(before.entries, 0);

  cucore_object *a = NULL, *b = NULL;
  cucore_cache_info info;
  assert_ok(cache_test_compile(src, "k.cu", "sm_90", CUCORE_CODE_CUBIN, NULL, SCALE_EXPRS, 2, 1, &a,
                               &info));
  assert_int_equal(info.result, CUCORE_CACHE_MISS);
  assert_int_equal(info.stored, 1);
  assert_int_equal(strlen(info.key), 64);
  assert_contains(info.path, f->dir);
  assert_string_equal(info.note, "");
  assert_true(file_size(info.path) > (long)CC_CACHE_HEADER_BYTES + (long)ref->size);
  assert_true(cache_test_same_object(a, ref));
  char key[65];
  snprintf(key, sizeof key, "%s", info.key);

  cc_cache_memory_clear(); /* as a new process would: only the disk layer is left */
  assert_ok(cache_test_compile(src, "k.cu", "sm_90", CUCORE_CODE_CUBIN, NULL, SCALE_EXPRS, 2, 1, &b,
                               &info));
  assert_int_equal(info.result, CUCORE_CACHE_HIT_DISK);
  assert_string_equal(info.key, key);
  assert_true(cache_test_same_object(b, ref));
  const char *low = NULL;
  assert_ok(cucore_object_get_lowered_name(b, "scale<double>", &low));
  const char *want = NULL;
  assert_ok(cucore_object_get_lowered_name(ref, "scale<double>", &want));
  assert_string_equal(low, want);

  cucore_cache_stats after;
  assert_ok(cucore_cache_get_stats(&after));
  assert_int_equal(after.entries, 1);
  assert_int_equal(after.bytes, (uint64_t)file_size(info.path));
  assert_int_equal(after.process.misses - before.process.misses, 1);
  assert_int_equal(after.process.hits - before.process.hits, 1);
  assert_int_equal(after.process.stores - before.process.stores, 1);
  assert_int_equal(after.total.hits, 1);
  assert_int_equal(after.total.misses, 1);
  assert_int_equal(after.total.stores, 1);
  assert_int_equal(after.total.errors, 0);
  cucore_object_destroy(a);
  cucore_object_destroy(b);
  cucore_object_destroy(ref);
  free(src);
}

static void ptx_target_and_ptx_programs_are_cached_too(void **state) {
  (void)state;
  char *src = cache_test_source(2);
  cucore_object *ref = reference(src, "sm_80", CUCORE_CODE_PTX, NULL, NULL, 0);
  cucore_object *a = NULL;
  cucore_cache_info info;
  assert_ok(cache_test_compile(src, "k.cu", "sm_80", CUCORE_CODE_PTX, NULL, NULL, 0, 1, &a, &info));
  assert_int_equal(info.result, CUCORE_CACHE_MISS);
  cc_cache_memory_clear();
  cucore_object_destroy(a);
  assert_ok(cache_test_compile(src, "k.cu", "sm_80", CUCORE_CODE_PTX, NULL, NULL, 0, 1, &a, &info));
  assert_int_equal(info.result, CUCORE_CACHE_HIT_DISK);
  assert_true(cache_test_same_object(a, ref));

  /* That PTX, as a program of its own, to cubin through nvJitLink. */
  cucore_options *o = NULL;
  assert_ok(cucore_options_create(&o));
  assert_ok(cucore_options_set_string(o, CUCORE_OPT_ARCH, "sm_80"));
  cucore_object *c[3] = {NULL, NULL, NULL};
  cucore_cache_result results[3];
  for (int i = 0; i < 3; i++) {
    cucore_program *p = NULL;
    assert_ok(cucore_program_create(CUCORE_CODE_PTX, ref->code, ref->size, "k.ptx", o, &p));
    if (i == 0) assert_ok(cucore_program_set_cache(p, 0));
    if (i == 2) cc_cache_memory_clear();
    assert_ok(cucore_program_compile(p, CUCORE_CODE_CUBIN, &c[i]));
    assert_ok(cucore_program_get_cache_info(p, &info));
    results[i] = info.result;
    cucore_program_destroy(p);
  }
  assert_int_equal(results[0], CUCORE_CACHE_DISABLED);
  assert_int_equal(results[1], CUCORE_CACHE_MISS);
  assert_int_equal(results[2], CUCORE_CACHE_HIT_DISK);
  assert_true(cache_test_same_object(c[2], c[0]));
  /* PTX to PTX is a copy: nothing to cache, and it says so. */
  cucore_program *p = NULL;
  cucore_object *copy = NULL;
  assert_ok(cucore_program_create(CUCORE_CODE_PTX, ref->code, ref->size, "k.ptx", o, &p));
  assert_ok(cucore_program_compile(p, CUCORE_CODE_PTX, &copy));
  assert_ok(cucore_program_get_cache_info(p, &info));
  assert_int_equal(info.result, CUCORE_CACHE_UNCACHEABLE);
  assert_contains(info.reason, "copy");
  cucore_program_destroy(p);
  cucore_object_destroy(copy);
  for (int i = 0; i < 3; i++) cucore_object_destroy(c[i]);
  cucore_options_destroy(o);
  cucore_object_destroy(a);
  cucore_object_destroy(ref);
  free(src);
}

/* A fatbin (one compile per gencode entry) is cached whole; the gencode list is in the key. */
static void fatbin_targets_are_cached_whole(void **state) {
  (void)state;
  char *src = cache_test_source(4);
  const char *lists[2][3] = {{"sm_80", "sm_90", "compute_90"}, {"sm_80", "compute_80", NULL}};
  char first_key[65] = "";
  for (int l = 0; l < 2; l++) {
    cucore_options *o = NULL;
    assert_ok(cucore_options_create(&o));
    for (int g = 0; g < 3 && lists[l][g]; g++)
      assert_ok(cucore_options_set_string(o, CUCORE_OPT_GENCODE, lists[l][g]));
    cucore_object *objs[3];
    cucore_cache_info info[3];
    for (int run = 0; run < 3; run++) { /* uncached, miss, disk hit */
      if (run == 2) cc_cache_memory_clear();
      assert_ok(cache_test_compile(src, "k.cu", NULL, CUCORE_CODE_FATBIN, o, SCALE_EXPRS, 2,
                                   run != 0, &objs[run], &info[run]));
    }
    assert_int_equal(objs[0]->type, CUCORE_CODE_FATBIN);
    assert_int_equal(info[1].result, CUCORE_CACHE_MISS);
    assert_int_equal(info[2].result, CUCORE_CACHE_HIT_DISK);
    assert_true(cache_test_same_object(objs[2], objs[0]));
    const char *low = NULL;
    assert_ok(cucore_object_get_lowered_name(objs[2], "scale<float>", &low));
    if (l == 0)
      snprintf(first_key, sizeof first_key, "%s", info[1].key);
    else
      assert_string_not_equal(info[1].key, first_key);
    for (int run = 0; run < 3; run++) cucore_object_destroy(objs[run]);
    cucore_options_destroy(o);
  }
  free(src);
}

#define NVVM_HEAD                                                                             \
  "target datalayout = \"e-p:64:64:64-i1:8:8-i8:8:8-i16:16:16-i32:32:32-i64:64:64-"           \
  "i128:128:128-f32:32:32-f64:64:64-v16:16:16-v32:32:32-v64:64:64-v128:128:128-n16:32:64\"\n" \
  "target triple = \"nvptx64-nvidia-cuda\"\n"

static const char nvvm_main[] = NVVM_HEAD "declare float @helper()\n"
                                          "define void @kern(float* %p) {\n"
                                          "  %v = call float @helper()\n"
                                          "  store float %v, float* %p\n"
                                          "  ret void\n"
                                          "}\n"
                                          "!nvvm.annotations = !{!0}\n"
                                          "!0 = !{void (float*)* @kern, !\"kernel\", i32 1}\n"
                                          "!nvvmir.version = !{!1}\n"
                                          "!1 = !{i32 2, i32 0}\n";

/* NVVM IR with an extra module: the module is in the key, for PTX and for cubin (libNVVM,
 * then nvJitLink). */
static void nvvm_programs_and_their_modules_are_in_the_key(void **state) {
  (void)state;
  cucore_options *o = NULL;
  assert_ok(cucore_options_create(&o));
  assert_ok(cucore_options_set_string(o, CUCORE_OPT_ARCH, "sm_90"));
  const cucore_code_type targets[] = {CUCORE_CODE_PTX, CUCORE_CODE_CUBIN};
  for (int t = 0; t < 2; t++) {
    /* helper() returns 1.0 (run 0: uncached, 1: miss, 2: disk hit), then 2.0 (run 3). */
    cucore_object *objs[4];
    cucore_cache_info info[4];
    for (int run = 0; run < 4; run++) {
      char helper[512];
      snprintf(helper, sizeof helper,
               NVVM_HEAD "define float @helper() {\n  ret float %s\n}\n"
                         "!nvvmir.version = !{!0}\n!0 = !{i32 2, i32 0}\n",
               run == 3 ? "2.0" : "1.0");
      cucore_program *p = NULL;
      assert_ok(cucore_program_create(CUCORE_CODE_NVVM, nvvm_main, 0, "k.ll", o, &p));
      assert_ok(cucore_program_add_module(p, helper, 0, "helper.ll", 0));
      if (run == 0) assert_ok(cucore_program_set_cache(p, 0));
      if (run == 2) cc_cache_memory_clear();
      cucore_status st = cucore_program_compile(p, targets[t], &objs[run]);
      if (st != CUCORE_OK) {
        const char *log = "";
        cucore_program_get_log(p, &log);
        fail_msg("NVVM compile: %s\n%s", cucore_last_error(), log);
      }
      assert_ok(cucore_program_get_cache_info(p, &info[run]));
      info[run].reason = info[run].note = info[run].path = "";
      cucore_program_destroy(p);
    }
    assert_int_equal(info[1].result, CUCORE_CACHE_MISS);
    assert_int_equal(info[2].result, CUCORE_CACHE_HIT_DISK);
    assert_true(cache_test_same_object(objs[2], objs[0]));
    assert_int_equal(info[3].result, CUCORE_CACHE_MISS);
    assert_string_not_equal(info[3].key, info[1].key);
    for (int run = 0; run < 4; run++) cucore_object_destroy(objs[run]);
  }
  cucore_options_destroy(o);
}

static void in_process_layer_hands_out_the_same_object(void **state) {
  (void)state;
  char *src = cache_test_source(3);
  cucore_object *a = NULL, *b = NULL;
  cucore_cache_info info;
  assert_ok(cache_test_compile(src, "k.cu", "sm_90", CUCORE_CODE_CUBIN, NULL, SCALE_EXPRS, 2, 1, &a,
                               &info));
  assert_int_equal(info.result, CUCORE_CACHE_MISS);
  /* Name expressions in another order are the same key. */
  const char *const reversed[] = {"scale<double>", "scale<float>"};
  assert_ok(
      cache_test_compile(src, "k.cu", "sm_90", CUCORE_CODE_CUBIN, NULL, reversed, 2, 1, &b, &info));
  assert_int_equal(info.result, CUCORE_CACHE_HIT_MEMORY);
  assert_ptr_equal(a, b);
  /* Each caller holds its own reference: dropping one leaves the other usable. */
  assert_int_equal(atomic_load(&a->refs), 3); /* a, b and the in-process layer */
  cucore_object_destroy(a);
  const void *code = NULL;
  size_t size = 0;
  assert_ok(cucore_object_get_code(b, NULL, &code, &size));
  assert_true(size > 0);
  const char *low = NULL;
  assert_ok(cucore_object_get_lowered_name(b, "scale<float>", &low));
  assert_contains(low, "scale");
  cucore_cache_stats s;
  assert_ok(cucore_cache_get_stats(&s));
  assert_true(s.process.memory_hits >= 1);
  assert_int_equal(s.total.memory_hits, 0); /* never written to disk */
  cucore_object_destroy(b);
  free(src);
}

static void hit_gives_the_compile_log_again(void **state) {
  (void)state;
  /* An unused variable: NVRTC warns, and the warning must survive a hit. */
  const char *src = "extern \"C\" __global__ void warn(int *p) { int unused = 3; *p = 1; }\n";
  const char *logs[3] = {NULL, NULL, NULL};
  char *copies[3] = {NULL, NULL, NULL};
  for (int i = 0; i < 3; i++) {
    if (i == 2) cc_cache_memory_clear();
    cucore_options *o = NULL;
    assert_ok(cucore_options_create(&o));
    assert_ok(cucore_options_set_string(o, CUCORE_OPT_ARCH, "sm_90"));
    cucore_program *p = NULL;
    assert_ok(cucore_program_create(CUCORE_CODE_CUDA_CPP, src, 0, "warn.cu", o, &p));
    cucore_object *obj = NULL;
    assert_ok(cucore_program_compile(p, CUCORE_CODE_CUBIN, &obj));
    assert_ok(cucore_program_get_log(p, &logs[i]));
    copies[i] = strdup(logs[i]);
    cucore_program_destroy(p);
    cucore_options_destroy(o);
    cucore_object_destroy(obj);
  }
  assert_contains(copies[0], "unused");
  assert_string_equal(copies[1], copies[0]); /* in-process hit */
  assert_string_equal(copies[2], copies[0]); /* disk hit */
  for (int i = 0; i < 3; i++) free(copies[i]);
}

/* ---- damaged entries --------------------------------------------------------------------- */

typedef enum {
  TRUNCATE_HALF,
  TRUNCATE_INSIDE_HEADER,
  ZERO_BYTES,
  FLIP_PAYLOAD_BYTE,
  FLIP_HEADER_BYTE,
  APPEND_BYTE,
  DAMAGE_KINDS
} damage;
static const char *const damage_names[DAMAGE_KINDS] = {
    "truncated to half",      "truncated inside the header", "0 bytes",
    "a payload byte flipped", "a header byte flipped",       "a byte appended"};

static void apply_damage(const char *path, damage d) {
  long n = file_size(path);
  assert_true(n > 100);
  int fd = open(path, O_RDWR);
  assert_true(fd >= 0);
  unsigned char c;
  switch (d) {
  case TRUNCATE_HALF: assert_int_equal(ftruncate(fd, n / 2), 0); break;
  case TRUNCATE_INSIDE_HEADER: assert_int_equal(ftruncate(fd, 40), 0); break;
  case ZERO_BYTES: assert_int_equal(ftruncate(fd, 0), 0); break;
  case FLIP_PAYLOAD_BYTE:
  case FLIP_HEADER_BYTE: {
    off_t at = d == FLIP_PAYLOAD_BYTE ? (off_t)(n - n / 3) : 17; /* inside the payload length */
    assert_int_equal(pread(fd, &c, 1, at), 1);
    c ^= 0x20;
    assert_int_equal(pwrite(fd, &c, 1, at), 1);
    break;
  }
  case APPEND_BYTE:
    c = 0;
    assert_int_equal(pwrite(fd, &c, 1, n), 1);
    break;
  default: break;
  }
  close(fd);
}

static void damaged_entries_are_removed_and_recompiled(void **state) {
  (void)state;
  for (int d = 0; d < DAMAGE_KINDS; d++) {
    char *src = cache_test_source(100 + d);
    cucore_object *ref = reference(src, "sm_90", CUCORE_CODE_CUBIN, NULL, SCALE_EXPRS, 1);
    cucore_object *obj = NULL;
    cucore_cache_info info;
    assert_ok(cache_test_compile(src, "k.cu", "sm_90", CUCORE_CODE_CUBIN, NULL, SCALE_EXPRS, 1, 1,
                                 &obj, &info));
    assert_int_equal(info.stored, 1);
    cucore_object_destroy(obj);
    char path[4096];
    snprintf(path, sizeof path, "%s", info.path);
    apply_damage(path, (damage)d);
    cc_cache_memory_clear();
    cucore_cache_stats before;
    assert_ok(cucore_cache_get_stats(&before));

    assert_ok(cache_test_compile(src, "k.cu", "sm_90", CUCORE_CODE_CUBIN, NULL, SCALE_EXPRS, 1, 1,
                                 &obj, &info));
    if (info.result != CUCORE_CACHE_MISS || !strstr(info.note, "damaged"))
      fail_msg("entry %s: result %s, note \"%s\"", damage_names[d],
               cucore_cache_result_name(info.result), info.note);
    assert_contains(info.note, "removed it");
    assert_true(cache_test_same_object(obj, ref));
    assert_int_equal(info.stored, 1); /* written again, whole */
    cucore_cache_stats after;
    assert_ok(cucore_cache_get_stats(&after));
    assert_int_equal(after.process.errors - before.process.errors, 1);
    cucore_object_destroy(obj);

    /* The rewritten entry is good: the next process gets a hit. */
    cc_cache_memory_clear();
    assert_ok(cache_test_compile(src, "k.cu", "sm_90", CUCORE_CODE_CUBIN, NULL, SCALE_EXPRS, 1, 1,
                                 &obj, &info));
    assert_int_equal(info.result, CUCORE_CACHE_HIT_DISK);
    assert_true(cache_test_same_object(obj, ref));
    cucore_object_destroy(obj);
    cucore_object_destroy(ref);
    free(src);
  }
}

/* The decoder, without NVRTC: a round trip keeps every field; every shorter prefix and every
 * single flipped bit of an entry is refused (never read out of bounds: ASan watches). */
static void entry_format_refuses_every_truncation_and_flip(void **state) {
  (void)state;
  unsigned char key[CC_CACHE_KEY_BYTES], other[CC_CACHE_KEY_BYTES];
  for (int i = 0; i < CC_CACHE_KEY_BYTES; i++) {
    key[i] = (unsigned char)(i * 7 + 1);
    other[i] = key[i] ^ (i == 5);
  }
  char cubin[] = "\x7f"
                 "ELF pretend cubin bytes, with a NUL \0 inside";
  char *exprs[] = {"scale<float>", "&ns::k"};
  char *lowered[] = {"_Z5scaleIfEvPT_S0_i", "_ZN2ns1kEv"};
  char ptx[] = ".version 9.0\n.target sm_90a\n";
  cc_cache_record rec = {.type = CUCORE_CODE_CUBIN,
                         .arch = 90,
                         .suffix = "a",
                         .producer_version = 13000,
                         .code = (unsigned char *)cubin,
                         .size = sizeof cubin,
                         .ptx = ptx,
                         .ptx_size = strlen(ptx),
                         .log = "a warning\n",
                         .expr_count = 2,
                         .exprs = exprs,
                         .lowered = lowered};
  size_t size = 0;
  unsigned char *entry = cc_cache_entry_encode(key, &rec, &size);
  assert_non_null(entry);

  cc_cache_record back;
  char why[512];
  assert_int_equal(cc_cache_entry_decode(entry, size, key, &back, why, sizeof why), 0);
  assert_true(cache_test_same_record(&back, &rec));
  assert_string_equal(back.log, "a warning\n");
  assert_int_equal(back.code[back.size], 0); /* decoded code ends in a NUL */
  cc_cache_record_free(&back);

  assert_int_equal(cc_cache_entry_decode(entry, size, other, &back, why, sizeof why), -1);
  assert_contains(why, "another key");
  for (size_t n = 0; n < size; n++) {
    unsigned char *prefix = malloc(n ? n : 1); /* exact-size copies: ASan sees any overread */
    memcpy(prefix, entry, n);
    if (cc_cache_entry_decode(prefix, n, key, &back, why, sizeof why) != -1)
      fail_msg("a %zu-byte prefix of a %zu-byte entry was accepted", n, size);
    assert_null(back.code);
    free(prefix);
  }
  for (size_t at = 0; at < size; at++)
    for (int bit = 0; bit < 8; bit++) {
      entry[at] ^= (unsigned char)(1u << bit);
      if (cc_cache_entry_decode(entry, size, key, &back, why, sizeof why) != -1)
        fail_msg("flipping bit %d of byte %zu was not detected", bit, at);
      entry[at] ^= (unsigned char)(1u << bit);
    }
  assert_int_equal(cc_cache_entry_decode(entry, 0, key, &back, why, sizeof why), -1);
  assert_contains(why, "0 bytes");
  free(entry);
}

/* The payload checksum changes with any single flipped bit of a large buffer, and with its
 * length. */
static void checksum_sees_every_flip(void **state) {
  (void)state;
  size_t n = 100003;
  unsigned char *buf = malloc(n);
  for (size_t i = 0; i < n; i++) buf[i] = (unsigned char)(i * 131 + (i >> 9));
  uint64_t base = cc_cache_checksum(buf, n);
  for (size_t at = 0; at < n; at += 97) /* every word class, lane and tail position */
    for (int bit = 0; bit < 8; bit += 3) {
      buf[at] ^= (unsigned char)(1u << bit);
      if (cc_cache_checksum(buf, n) == base) fail_msg("flip of bit %d at %zu not seen", bit, at);
      buf[at] ^= (unsigned char)(1u << bit);
    }
  for (size_t cut = n - 40; cut < n; cut++) assert_true(cc_cache_checksum(buf, cut) != base);
  assert_true(cc_cache_checksum(buf, n) == base);
  free(buf);
}

/* ---- the key ----------------------------------------------------------------------------- */

typedef struct variant {
  const char *what;
  const char *src_extra; /* appended to the source */
  const char *arch;
  cucore_code_type target;
  const char *header_body;
  const char *define;
  const char *name;
  int nexprs;
} variant;

static void every_input_is_in_the_key(void **state) {
  (void)state;
  const char *base =
      "#include \"params.h\"\n"
      "template <typename T> __global__ void scale(T *x, T a) { x[threadIdx.x] *= a * PARAM; }\n";
  const variant vs[] = {
      {"the base compile", "", "sm_90", CUCORE_CODE_CUBIN, "#define PARAM 2\n", NULL, "k.cu", 1},
      {"a header's contents", "", "sm_90", CUCORE_CODE_CUBIN, "#define PARAM 3\n", NULL, "k.cu", 1},
      {"the arch", "", "sm_80", CUCORE_CODE_CUBIN, "#define PARAM 2\n", NULL, "k.cu", 1},
      {"the arch suffix", "", "sm_90a", CUCORE_CODE_CUBIN, "#define PARAM 2\n", NULL, "k.cu", 1},
      {"the target", "", "sm_90", CUCORE_CODE_PTX, "#define PARAM 2\n", NULL, "k.cu", 1},
      {"an option", "", "sm_90", CUCORE_CODE_CUBIN, "#define PARAM 2\n", "EXTRA=1", "k.cu", 1},
      {"the source", "// a comment\n", "sm_90", CUCORE_CODE_CUBIN, "#define PARAM 2\n", NULL,
       "k.cu", 1},
      {"the program name", "", "sm_90", CUCORE_CODE_CUBIN, "#define PARAM 2\n", NULL, "other.cu",
       1},
      {"a name expression", "", "sm_90", CUCORE_CODE_CUBIN, "#define PARAM 2\n", NULL, "k.cu", 2},
  };
  enum { N = sizeof vs / sizeof vs[0] };
  char keys[N][65];
  cucore_object *objs[N];
  for (int i = 0; i < N; i++) {
    char src[1024];
    snprintf(src, sizeof src, "%s%s", base, vs[i].src_extra);
    cucore_options *o = NULL;
    assert_ok(cucore_options_create(&o));
    assert_ok(cucore_options_add_header(o, "params.h", vs[i].header_body));
    if (vs[i].define) assert_ok(cucore_options_set_string(o, CUCORE_OPT_DEFINE, vs[i].define));
    cucore_cache_info info;
    assert_ok(cache_test_compile(src, vs[i].name, vs[i].arch, vs[i].target, o, SCALE_EXPRS,
                                 vs[i].nexprs, 1, &objs[i], &info));
    if (info.result != CUCORE_CACHE_MISS)
      fail_msg("changing %s gave %s, expected a miss", vs[i].what,
               cucore_cache_result_name(info.result));
    snprintf(keys[i], sizeof keys[i], "%s", info.key);
    for (int j = 0; j < i; j++)
      if (strcmp(keys[i], keys[j]) == 0) fail_msg("%s and %s share a key", vs[i].what, vs[j].what);
    cucore_options_destroy(o);
  }
  /* The header change reached the code, and the arch change the object. */
  assert_false(objs[0]->size == objs[1]->size &&
               memcmp(objs[0]->code, objs[1]->code, objs[0]->size) == 0);
  assert_int_equal(objs[2]->arch, 80);
  for (int i = 0; i < N; i++) cucore_object_destroy(objs[i]);
}

/* White-box: the key of one request is stable, and each field moves it. */
static void key_fields_are_labelled_and_length_prefixed(void **state) {
  (void)state;
  cucore_options *o = NULL;
  assert_ok(cucore_options_create(&o));
  const char *exprs[] = {"b", "a"};
  cc_cache_request rq = {CUCORE_CODE_CUDA_CPP,
                         CUCORE_CODE_CUBIN,
                         90,
                         "",
                         "k.cu",
                         (const unsigned char *)"ab",
                         2,
                         o,
                         exprs,
                         2,
                         NULL};
  unsigned char k0[32], k1[32];
  cc_cache_key key;
  assert_int_equal(cc_cache_key_begin(&key, &rq), 0);
  assert_false(key.uncacheable);
  cc_cache_key_end(&key, k0);
  assert_int_equal(cc_cache_key_begin(&key, &rq), 0);
  cc_cache_key_end(&key, k1);
  assert_memory_equal(k0, k1, 32);
  /* Moving a byte from the name to the source keeps the concatenation but not the key. */
  cc_cache_request moved = rq;
  moved.name = "k.c";
  moved.code = (const unsigned char *)"uab";
  moved.size = 3;
  assert_int_equal(cc_cache_key_begin(&key, &moved), 0);
  cc_cache_key_end(&key, k1);
  assert_memory_not_equal(k0, k1, 32);
  /* A define holding a newline cannot pose as two defines. */
  cucore_options *one = NULL, *two = NULL;
  assert_ok(cucore_options_create(&one));
  assert_ok(cucore_options_create(&two));
  assert_ok(cucore_options_set_string(one, CUCORE_OPT_DEFINE, "A=\ndefine=B"));
  assert_ok(cucore_options_set_string(two, CUCORE_OPT_DEFINE, "A="));
  assert_ok(cucore_options_set_string(two, CUCORE_OPT_DEFINE, "B"));
  const char *c1 = NULL, *c2 = NULL;
  assert_ok(cucore_options_canonical(one, &c1));
  assert_ok(cucore_options_canonical(two, &c2));
  assert_string_equal(c1, c2); /* the canonical text alone would collide */
  rq.opts = one;
  assert_int_equal(cc_cache_key_begin(&key, &rq), 0);
  cc_cache_key_end(&key, k0);
  rq.opts = two;
  assert_int_equal(cc_cache_key_begin(&key, &rq), 0);
  cc_cache_key_end(&key, k1);
  assert_memory_not_equal(k0, k1, 32);
  /* A digest joins the key. */
  rq.digest = "v1";
  assert_int_equal(cc_cache_key_begin(&key, &rq), 0);
  cc_cache_key_end(&key, k0);
  assert_memory_not_equal(k0, k1, 32);
  cucore_options_destroy(one);
  cucore_options_destroy(two);
  cucore_options_destroy(o);
}

/* The key names the compiler by the file the loader opens, found without loading it: it must
 * be the library cucore loads. */
static void compiler_identity_is_the_loaded_library(void **state) {
  (void)state;
  cucore_versions_info v;
  assert_ok(cucore_versions(&v));
  const cucore_library_info *libs[] = {&v.nvrtc, &v.nvjitlink, &v.nvvm};
  for (int t = 0; t < 3; t++) {
    if (!libs[t]->loaded) continue;
    char mine[PATH_MAX], real[PATH_MAX], id[PATH_MAX + 128];
    assert_int_equal(cc_cache_tool_path((cc_cache_tool)t, mine, sizeof mine), 0);
    assert_non_null(realpath(libs[t]->path, real));
    assert_string_equal(mine, real);
    assert_int_equal(cc_cache_tool_identity((cc_cache_tool)t, id, sizeof id), 0);
    struct stat st;
    assert_int_equal(stat(real, &st), 0);
    char ino[64];
    snprintf(ino, sizeof ino, " ino %llu size %lld ", (unsigned long long)st.st_ino,
             (long long)st.st_size);
    assert_contains(id, ino);
  }
}

/* ---- the size cap ------------------------------------------------------------------------ */

static void pause_ms(long ms) {
  struct timespec ts = {0, ms * 1000000L};
  nanosleep(&ts, NULL);
}

static void size_cap_evicts_least_recently_used_first(void **state) {
  fixture *f = *state;
  enum { N = 4 };
  char *srcs[N], paths[N][4096];
  long sizes[N];
  /* A, B, C stored in that order; then A is used again (a disk hit touches it). */
  for (int i = 0; i < 3; i++) {
    srcs[i] = cache_test_source(200 + i);
    cucore_object *obj = NULL;
    cucore_cache_info info;
    assert_ok(cache_test_compile(srcs[i], "k.cu", "sm_90", CUCORE_CODE_CUBIN, NULL, NULL, 0, 1,
                                 &obj, &info));
    assert_int_equal(info.stored, 1);
    snprintf(paths[i], sizeof paths[i], "%s", info.path);
    sizes[i] = file_size(paths[i]);
    cucore_object_destroy(obj);
    pause_ms(20); /* file times are taken from a coarse clock */
  }
  cc_cache_memory_clear();
  cucore_object *obj = NULL;
  cucore_cache_info info;
  assert_ok(cache_test_compile(srcs[0], "k.cu", "sm_90", CUCORE_CODE_CUBIN, NULL, NULL, 0, 1, &obj,
                               &info));
  assert_int_equal(info.result, CUCORE_CACHE_HIT_DISK);
  cucore_object_destroy(obj);
  pause_ms(20);
  /* Last use now: B, C, A. D needs about as much room as one entry. */
  srcs[3] = cache_test_source(203);
  cucore_object *ref = reference(srcs[3], "sm_90", CUCORE_CODE_CUBIN, NULL, NULL, 0);
  unsigned char any_key[CC_CACHE_KEY_BYTES] = {0};
  size_t d_bytes = 0;
  cc_cache_record ref_rec = cache_test_record_of(ref); /* these sources compile silently */
  free(cc_cache_entry_encode(any_key, &ref_rec, &d_bytes));
  long d_size = (long)d_bytes;
  cucore_object_destroy(ref);
  uint64_t cap = (uint64_t)(sizes[0] + sizes[1] + sizes[2] + d_size) - 1; /* one byte short */
  assert_ok(cucore_cache_set_max_bytes(cap));
  cucore_cache_stats before;
  assert_ok(cucore_cache_get_stats(&before));
  assert_ok(cache_test_compile(srcs[3], "k.cu", "sm_90", CUCORE_CODE_CUBIN, NULL, NULL, 0, 1, &obj,
                               &info));
  assert_int_equal(info.stored, 1);
  snprintf(paths[3], sizeof paths[3], "%s", info.path);
  sizes[3] = file_size(paths[3]);
  cucore_object_destroy(obj);

  /* Expected: drop in order of last use (B, C, A, D) until at most 90% of the cap is left. */
  const int order[N] = {1, 2, 0, 3};
  int expect_kept[N] = {1, 1, 1, 1}, expect_evicted = 0;
  uint64_t total = (uint64_t)(sizes[0] + sizes[1] + sizes[2] + sizes[3]);
  assert_true(total > cap);
  for (int k = 0; k < N && total > cap / 10 * 9; k++) {
    expect_kept[order[k]] = 0;
    total -= (uint64_t)sizes[order[k]];
    expect_evicted++;
  }
  assert_true(expect_kept[3]);  /* the entry just stored is the newest */
  assert_false(expect_kept[1]); /* and B, least recently used, goes first */
  for (int i = 0; i < N; i++)
    if ((file_size(paths[i]) >= 0) != expect_kept[i])
      fail_msg("entry %c: %s, expected %s", 'A' + i, file_size(paths[i]) >= 0 ? "kept" : "evicted",
               expect_kept[i] ? "kept" : "evicted");
  cucore_cache_stats after;
  assert_ok(cucore_cache_get_stats(&after));
  assert_int_equal(after.process.evictions - before.process.evictions, (uint64_t)expect_evicted);
  assert_int_equal(after.total.evictions, (uint64_t)expect_evicted);
  assert_int_equal(after.bytes, total);
  assert_true(after.bytes <= cap);
  (void)f;
  for (int i = 0; i < N; i++) free(srcs[i]);
}

static void entry_larger_than_the_cap_is_not_stored(void **state) {
  fixture *f = *state;
  assert_ok(cucore_cache_set_max_bytes(CC_CACHE_MIN_MAX_BYTES));
  char *src = cache_test_source(300);
  cucore_object *obj = NULL;
  cucore_cache_info info;
  assert_ok(cache_test_compile(src, "k.cu", "sm_90", CUCORE_CODE_CUBIN, NULL, SCALE_EXPRS, 2, 1,
                               &obj, &info));
  assert_int_equal(info.result, CUCORE_CACHE_MISS);
  assert_int_equal(info.stored, 0);
  assert_contains(info.note, "larger than");
  assert_int_equal(cache_test_count_files(f->dir, NULL), 0);
  cucore_object_destroy(obj);
  free(src);
}

/* ---- what the key cannot see ------------------------------------------------------------- */

/* -I DIR: uncacheable, with the reason; with a digest, cached, and another digest is another
 * key. */
static void include_path_needs_a_digest(const fixture *f, const char *inc,
                                        const char *with_include) {
  cucore_options *o = NULL;
  assert_ok(cucore_options_create(&o));
  assert_ok(cucore_options_set_string(o, CUCORE_OPT_INCLUDE_PATH, inc));
  cucore_object *ref = NULL, *obj = NULL;
  cucore_cache_info info;
  assert_ok(cache_test_compile(with_include, "k.cu", "sm_90", CUCORE_CODE_CUBIN, o, NULL, 0, 0,
                               &ref, &info));
  assert_ok(cache_test_compile(with_include, "k.cu", "sm_90", CUCORE_CODE_CUBIN, o, NULL, 0, 1,
                               &obj, &info));
  assert_int_equal(info.result, CUCORE_CACHE_UNCACHEABLE);
  assert_contains(info.reason, "include-path");
  assert_contains(info.reason, inc);
  assert_contains(info.reason, "cucore_program_set_cache_digest");
  assert_string_equal(info.key, "");
  assert_true(cache_test_same_object(obj, ref));
  cucore_object_destroy(obj);
  assert_int_equal(cache_test_count_files(f->dir, NULL), 0);
  cucore_cache_stats s;
  assert_ok(cucore_cache_get_stats(&s));
  assert_true(s.process.uncacheable >= 1);

  /* The same with a digest: cached, and a changed digest is another key. */
  char keys[2][65];
  for (int round = 0; round < 3; round++) {
    cucore_options *oa = NULL;
    assert_ok(cucore_options_copy(o, &oa));
    assert_ok(cucore_options_set_string(oa, CUCORE_OPT_ARCH, "sm_90"));
    cucore_program *p = NULL;
    assert_ok(cucore_program_create(CUCORE_CODE_CUDA_CPP, with_include, 0, "k.cu", oa, &p));
    assert_ok(cucore_program_set_cache_digest(p, round < 2 ? "helper-v1" : "helper-v2"));
    assert_ok(cucore_program_compile(p, CUCORE_CODE_CUBIN, &obj));
    assert_ok(cucore_program_get_cache_info(p, &info));
    assert_int_equal(info.result, round == 1 ? CUCORE_CACHE_HIT_MEMORY : CUCORE_CACHE_MISS);
    if (round != 1) snprintf(keys[round / 2], sizeof keys[0], "%s", info.key);
    assert_true(cache_test_same_object(obj, ref));
    assert_status(cucore_program_set_cache_digest(p, ""), CUCORE_INVALID_ARGUMENT);
    cucore_program_destroy(p);
    cucore_options_destroy(oa);
    cucore_object_destroy(obj);
  }
  assert_string_not_equal(keys[0], keys[1]);
  cucore_options_destroy(o);

  cucore_object_destroy(ref);
}

/* A quoted #include found beside the source is read from disk (uncacheable); the same include
 * served from memory is cacheable. */
static void include_beside_the_source(const char *inc, const char *path, const char *with_include) {
  cucore_object *obj = NULL;
  cucore_cache_info info;
  cucore_options *o = NULL;
  char name[4096];
  snprintf(name, sizeof name, "%s/k.cu", inc);
  assert_ok(cache_test_compile(with_include, name, "sm_90", CUCORE_CODE_CUBIN, NULL, NULL, 0, 1,
                               &obj, &info));
  assert_int_equal(info.result, CUCORE_CACHE_UNCACHEABLE);
  assert_contains(info.reason, "#include \"helper.h\"");
  assert_contains(info.reason, path);
  cucore_object_destroy(obj);

  /* The same include served from memory is cacheable. */
  assert_ok(cucore_options_create(&o));
  assert_ok(cucore_options_add_header(o, "helper.h", "#define HELPER 5\n"));
  assert_ok(cache_test_compile(with_include, name, "sm_90", CUCORE_CODE_CUBIN, o, NULL, 0, 1, &obj,
                               &info));
  assert_int_equal(info.result, CUCORE_CACHE_MISS);
  cucore_object_destroy(obj);
  cucore_options_destroy(o);
}

/* Raw options and pre-includes that read files; a macro include. */
static void raw_options_and_macro_includes(void) {
  cucore_object *obj = NULL;
  cucore_cache_info info;
  cucore_options *o = NULL;
  struct {
    cucore_option opt;
    const char *value, *src, *expect;
  } cases[] = {
      {CUCORE_OPT_RAW, "-I/usr/include", NULL, "raw option `-I/usr/include`"},
      {CUCORE_OPT_RAW, "--pch", NULL, "raw option `--pch`"},
      {CUCORE_OPT_PRE_INCLUDE, "/tmp/nothing-here.h", NULL, "pre-include `/tmp/nothing-here.h`"},
      {CUCORE_OPT_COUNT, NULL,
       "#define HDR \"helper.h\"\n#include HDR\nextern \"C\" __global__ void k() {}\n",
       "through a macro"},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    assert_ok(cucore_options_create(&o));
    if (cases[c].value) assert_ok(cucore_options_set_string(o, cases[c].opt, cases[c].value));
    const char *src = cases[c].src ? cases[c].src : "extern \"C\" __global__ void k() {}\n";
    cucore_program *p = NULL;
    assert_ok(cucore_options_set_string(o, CUCORE_OPT_ARCH, "sm_90"));
    assert_ok(cucore_program_create(CUCORE_CODE_CUDA_CPP, src, 0, "k.cu", o, &p));
    cucore_program_compile(p, CUCORE_CODE_CUBIN, &obj); /* may fail to compile: irrelevant */
    assert_ok(cucore_program_get_cache_info(p, &info));
    assert_int_equal(info.result, CUCORE_CACHE_UNCACHEABLE);
    assert_contains(info.reason, cases[c].expect);
    cucore_object_destroy(obj);
    obj = NULL;
    cucore_program_destroy(p);
    cucore_options_destroy(o);
  }
}

/* The toolkit's own include directory is part of the compiler's identity: cacheable. */
static void toolkit_include_is_cacheable(void) {
  cucore_object *obj = NULL;
  cucore_cache_info info;
  cucore_options *o = NULL;
  cucore_versions_info v;
  assert_ok(cucore_versions(&v));
  const char *root = getenv("CUDA_HOME") ? getenv("CUDA_HOME") : "/usr/local/cuda";
  char tk[4096];
  snprintf(tk, sizeof tk, "%s/include", root);
  assert_ok(cucore_options_create(&o));
  assert_ok(cucore_options_set_string(o, CUCORE_OPT_INCLUDE_PATH, tk));
  assert_ok(cache_test_compile("#include <cuda_fp16.h>\n__global__ void k(__half *h) {}\n", "k.cu",
                               "sm_90", CUCORE_CODE_CUBIN, o, NULL, 0, 1, &obj, &info));
  assert_int_equal(info.result, CUCORE_CACHE_MISS);
  cucore_object_destroy(obj);
  cucore_options_destroy(o);
}

static void uncacheable_compiles_say_why(void **state) {
  fixture *f = *state;
  char *inc = cache_test_mkdtemp();
  char path[4096];
  snprintf(path, sizeof path, "%s/helper.h", inc);
  FILE *h = fopen(path, "w");
  assert_non_null(h);
  fputs("#define HELPER 5\n", h);
  fclose(h);
  const char *with_include = "#include \"helper.h\"\n"
                             "extern \"C\" __global__ void k(int *p) { *p = HELPER; }\n";
  include_path_needs_a_digest(f, inc, with_include);
  include_beside_the_source(inc, path, with_include);
  raw_options_and_macro_includes();
  toolkit_include_is_cacheable();
  cache_test_rm_rf(inc);
  free(inc);
}

/* ---- switches ---------------------------------------------------------------------------- */

static void switches_turn_it_off(void **state) {
  fixture *f = *state;
  char *src = cache_test_source(400);
  cucore_object *a = NULL, *b = NULL;
  cucore_cache_info info;

  setenv("CUCORE_CACHE_DISABLE", "1", 1);
  assert_ok(cucore_cache_set_enabled(1)); /* the environment wins */
  for (int i = 0; i < 2; i++) {
    assert_ok(cache_test_compile(src, "k.cu", "sm_90", CUCORE_CODE_CUBIN, NULL, NULL, 0, 1,
                                 i ? &b : &a, &info));
    assert_int_equal(info.result, CUCORE_CACHE_DISABLED);
    assert_contains(info.reason, "CUCORE_CACHE_DISABLE=1");
  }
  assert_ptr_not_equal(a, b); /* not even the in-process layer */
  assert_true(cache_test_same_object(a, b));
  cucore_cache_stats s;
  assert_ok(cucore_cache_get_stats(&s));
  assert_int_equal(s.enabled, 0);
  unsetenv("CUCORE_CACHE_DISABLE");
  cucore_object_destroy(a);
  cucore_object_destroy(b);

  setenv("CUCORE_CACHE_DISABLE", "0", 1); /* 0 means on */
  assert_ok(cucore_cache_set_enabled(0));
  assert_ok(
      cache_test_compile(src, "k.cu", "sm_90", CUCORE_CODE_CUBIN, NULL, NULL, 0, 1, &a, &info));
  assert_int_equal(info.result, CUCORE_CACHE_DISABLED);
  assert_contains(info.reason, "cucore_cache_set_enabled(0)");
  cucore_object_destroy(a);
  assert_int_equal(cache_test_count_files(f->dir, NULL), 0);
  assert_ok(cucore_cache_set_enabled(-1));
  assert_ok(
      cache_test_compile(src, "k.cu", "sm_90", CUCORE_CODE_CUBIN, NULL, NULL, 0, 1, &a, &info));
  assert_int_equal(info.result, CUCORE_CACHE_MISS);
  cucore_object_destroy(a);
  assert_int_equal(cache_test_count_files(f->dir, NULL), 1);
  unsetenv("CUCORE_CACHE_DISABLE");

  assert_status(cucore_cache_set_enabled(2), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "expected 1 (on), 0 (off) or -1");
  assert_status(cucore_cache_set_max_bytes(100), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "minimum of 4096");
  assert_status(cucore_cache_set_dir(""), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_program_set_cache(NULL, 1), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_program_get_cache_info(NULL, &info), CUCORE_INVALID_ARGUMENT);
  assert_status(cucore_cache_get_stats(NULL), CUCORE_INVALID_ARGUMENT);
  assert_string_equal(cucore_cache_result_name(CUCORE_CACHE_HIT_DISK), "hit_disk");
  assert_string_equal(cucore_cache_result_name((cucore_cache_result)99), "unknown");
  free(src);
}

static void directory_comes_from_the_environment(void **state) {
  (void)state;
  char *old_home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
  char *old_xdg = getenv("XDG_CACHE_HOME") ? strdup(getenv("XDG_CACHE_HOME")) : NULL;
  assert_ok(cucore_cache_set_dir(NULL));
  cucore_cache_stats s;
  setenv("CUCORE_CACHE_DIR", "/tmp/cucore-env-dir", 1);
  assert_ok(cucore_cache_get_stats(&s));
  assert_string_equal(s.dir, "/tmp/cucore-env-dir");
  unsetenv("CUCORE_CACHE_DIR");
  setenv("XDG_CACHE_HOME", "/tmp/xdg", 1);
  assert_ok(cucore_cache_get_stats(&s));
  assert_string_equal(s.dir, "/tmp/xdg/cucore");
  setenv("XDG_CACHE_HOME", "relative/xdg", 1); /* ignored, as the XDG spec says */
  setenv("HOME", "/tmp/home", 1);
  assert_ok(cucore_cache_get_stats(&s));
  assert_string_equal(s.dir, "/tmp/home/.cache/cucore");
  setenv("CUCORE_CACHE_MAX_BYTES", "512M", 1);
  assert_ok(cucore_cache_get_stats(&s));
  assert_int_equal(s.max_bytes, 512ull << 20);
  setenv("CUCORE_CACHE_MAX_BYTES", "lots", 1);
  assert_ok(cucore_cache_get_stats(&s));
  assert_int_equal(s.max_bytes, CC_CACHE_DEFAULT_MAX_BYTES);
  unsetenv("CUCORE_CACHE_MAX_BYTES");
  if (old_home) setenv("HOME", old_home, 1);
  if (old_xdg)
    setenv("XDG_CACHE_HOME", old_xdg, 1);
  else
    unsetenv("XDG_CACHE_HOME");
  free(old_home);
  free(old_xdg);
}

static void clear_removes_entries_and_counters(void **state) {
  fixture *f = *state;
  uint64_t bytes = 0;
  for (int i = 0; i < 2; i++) {
    char *src = cache_test_source(500 + i);
    cucore_object *obj = NULL;
    cucore_cache_info info;
    assert_ok(
        cache_test_compile(src, "k.cu", "sm_90", CUCORE_CODE_CUBIN, NULL, NULL, 0, 1, &obj, &info));
    bytes += (uint64_t)file_size(info.path);
    cucore_object_destroy(obj);
    free(src);
  }
  /* A temporary file left by a crashed writer goes too. */
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s/ab", f->dir);
  mkdir(tmp, 0755);
  snprintf(tmp, sizeof tmp, "%s/ab/.tmp-1-2-3", f->dir);
  FILE *t = fopen(tmp, "w");
  assert_non_null(t);
  fclose(t);
  uint64_t n = 0, b = 0;
  assert_ok(cucore_cache_clear(&n, &b));
  assert_int_equal(n, 2);
  assert_int_equal(b, bytes);
  int tmps = -1;
  assert_int_equal(cache_test_count_files(f->dir, &tmps), 0);
  assert_int_equal(tmps, 0);
  cucore_cache_stats s;
  assert_ok(cucore_cache_get_stats(&s));
  assert_int_equal(s.entries, 0);
  assert_int_equal(s.total.stores, 0);
  assert_int_equal(s.total.misses, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(miss_stores_then_disk_hit_equals_a_fresh_compile, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(ptx_target_and_ptx_programs_are_cached_too, setup, teardown),
      cmocka_unit_test_setup_teardown(fatbin_targets_are_cached_whole, setup, teardown),
      cmocka_unit_test_setup_teardown(nvvm_programs_and_their_modules_are_in_the_key, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(in_process_layer_hands_out_the_same_object, setup, teardown),
      cmocka_unit_test_setup_teardown(hit_gives_the_compile_log_again, setup, teardown),
      cmocka_unit_test_setup_teardown(damaged_entries_are_removed_and_recompiled, setup, teardown),
      cmocka_unit_test(entry_format_refuses_every_truncation_and_flip),
      cmocka_unit_test(checksum_sees_every_flip),
      cmocka_unit_test_setup_teardown(every_input_is_in_the_key, setup, teardown),
      cmocka_unit_test(key_fields_are_labelled_and_length_prefixed),
      cmocka_unit_test(compiler_identity_is_the_loaded_library),
      cmocka_unit_test_setup_teardown(size_cap_evicts_least_recently_used_first, setup, teardown),
      cmocka_unit_test_setup_teardown(entry_larger_than_the_cap_is_not_stored, setup, teardown),
      cmocka_unit_test_setup_teardown(uncacheable_compiles_say_why, setup, teardown),
      cmocka_unit_test_setup_teardown(switches_turn_it_off, setup, teardown),
      cmocka_unit_test_setup_teardown(directory_comes_from_the_environment, setup, teardown),
      cmocka_unit_test_setup_teardown(clear_removes_entries_and_counters, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
