/* test_reader_fatbin.c -- fatbin containers written by nvcc with every compression mode:
 * the entries listed against the -gencode list that made them, every extracted cubin against
 * the cubin `nvcc -cubin` makes for the same target (byte for byte), compressed entries
 * against the same entries written with --no-compress, the entry chosen for each GPU against
 * the documented rules, host objects, static libraries and LTO-IR. */
#include "reader_support.h"

#include "binary/binary.h"

/* The -gencode list the fatbins are built from; the expected entries are its `code`s. */
static const struct spec {
  const char *arch, *code;
} specs[] = {
    {"compute_75", "sm_75"},   {"compute_80", "sm_80"},        {"compute_80", "sm_86"},
    {"compute_90a", "sm_90a"}, {"compute_90a", "compute_90a"}, {"compute_100f", "sm_100f"},
    {"compute_120", "sm_120"}, {"compute_120", "compute_120"},
};
#define NSPECS (sizeof specs / sizeof specs[0])

static char *gencode_flags(void) {
  char buf[2048] = "";
  for (size_t i = 0; i < NSPECS; i++) {
    size_t u = strlen(buf);
    snprintf(buf + u, sizeof buf - u, " -gencode arch=%s,code=%s", specs[i].arch, specs[i].code);
  }
  return strdup(buf);
}

static const char *const modes[] = {"none", "default", "size", "speed", "balance"};

static char *fatbin_for(const char *mode) {
  char *flags = gencode_flags(), *name = rs_printf("params_%s.fatbin", mode);
  char *opt = strcmp(mode, "none") == 0      ? strdup("--no-compress")
              : strcmp(mode, "default") == 0 ? strdup("")
                                             : rs_printf("--compress-mode=%s", mode);
  char *p = rs_build(name, "nvcc -fatbin %s %s -o \"$OUT\" params.cu", flags, opt);
  free(opt);
  free(name);
  free(flags);
  return p;
}

static int spec_number(const char *code) { return atoi(strchr(code, '_') + 1); }
static char spec_suffix(const char *code) {
  char c = code[strlen(code) - 1];
  return c == 'a' || c == 'f' ? c : 0;
}
static int spec_is_cubin(const char *code) { return strncmp(code, "sm_", 3) == 0; }

static int find_spec(const char *arch_name) {
  for (size_t i = 0; i < NSPECS; i++)
    if (strcmp(specs[i].code, arch_name) == 0) return (int)i;
  return -1;
}

/* Opens a fatbin and checks its entries are the -gencode list's codes. */
static cucore_binary *open_checked(const char *mode, int arch) {
  char *path = fatbin_for(mode);
  size_t n;
  unsigned char *data = rs_read(path, &n);
  cucore_binary *bin;
  assert_ok(cucore_binary_open(data, n, CUCORE_CODE_AUTO, arch, &bin));
  cucore_binary_info info;
  assert_ok(cucore_binary_get_info(bin, &info));
  assert_int_equal(info.type, CUCORE_CODE_FATBIN);
  assert_int_equal(info.fatbin_entry_count, NSPECS);
  int seen[NSPECS] = {0};
  for (uint32_t i = 0; i < info.fatbin_entry_count; i++) {
    cucore_fatbin_entry e;
    assert_ok(cucore_binary_get_fatbin_entry(bin, i, &e));
    int s = find_spec(e.arch_name);
    if (s < 0) fail_msg("%s: entry %u is %s, not in the -gencode list", mode, i, e.arch_name);
    seen[s]++;
    assert_int_equal(e.type, spec_is_cubin(specs[s].code) ? CUCORE_CODE_CUBIN : CUCORE_CODE_PTX);
    assert_int_equal(e.raw_kind, spec_is_cubin(specs[s].code) ? 2 : 1);
    assert_int_equal(e.arch, spec_number(specs[s].code));
    assert_int_equal(e.arch_suffix, spec_suffix(specs[s].code));
    assert_true(e.offset + e.stored_size <= n);
    if (strcmp(mode, "none") == 0) {
      assert_string_equal(e.compression, "none");
      assert_int_equal(e.size, e.stored_size);
    }
    if (e.type == CUCORE_CODE_PTX) {
      /* the PTX ISA version is the one the text declares (checked after extraction) */
      assert_true(e.version_major >= 1);
    }
  }
  for (size_t s = 0; s < NSPECS; s++)
    if (seen[s] != 1) fail_msg("%s: %s listed %d times", mode, specs[s].code, seen[s]);
  free(data);
  free(path);
  return bin;
}

static void entries_match_the_gencode_list(void **state) {
  (void)state;
  int compressed_modes = 0;
  for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
    cucore_binary *bin = open_checked(modes[m], 0);
    int compressed = 0;
    for (uint32_t i = 0; i < NSPECS; i++) {
      cucore_fatbin_entry e;
      assert_ok(cucore_binary_get_fatbin_entry(bin, i, &e));
      compressed += strcmp(e.compression, "none") != 0;
    }
    if (strcmp(modes[m], "none") != 0 && compressed) compressed_modes++;
    cucore_binary_destroy(bin);
  }
  /* The modes that compress must have given this test compressed entries to read. */
  assert_true(compressed_modes >= 3);
}

/* An extracted cubin equals `nvcc -cubin` for the same target and opens as that arch's. */
static void check_cubin_entry(const char *mode, const cucore_fatbin_entry *e,
                              const unsigned char *got, size_t got_size) {
  const struct spec *s = &specs[find_spec(e->arch_name)];
  char *name = rs_printf("params_%s.cubin", s->code);
  char *ref = rs_build(name, "nvcc -cubin -gencode arch=%s,code=%s -o \"$OUT\" params.cu", s->arch,
                       s->code);
  size_t rn;
  unsigned char *rd = rs_read(ref, &rn);
  if (rn != got_size || memcmp(rd, got, rn) != 0)
    fail_msg("%s: %s differs from nvcc -cubin's (%zu and %zu bytes)", mode, e->arch_name, got_size,
             rn);
  cucore_binary *c;
  assert_ok(cucore_binary_open(got, got_size, CUCORE_CODE_AUTO, 0, &c));
  cucore_binary_info ci;
  assert_ok(cucore_binary_get_info(c, &ci));
  assert_string_equal(ci.arch_name, e->arch_name);
  cucore_binary_destroy(c);
  free(rd);
  free(ref);
  free(name);
}

/* Extracted PTX: the plain fatbin stores the same text, padded with NULs, and it is PTX for
 * that arch, of the ISA version the entry header gives. */
static void check_ptx_entry(cucore_binary *plain, const cucore_fatbin_entry *e,
                            const unsigned char *got, size_t got_size) {
  uint32_t pi;
  for (pi = 0; pi < NSPECS; pi++) {
    cucore_fatbin_entry pe;
    assert_ok(cucore_binary_get_fatbin_entry(plain, pi, &pe));
    if (strcmp(pe.arch_name, e->arch_name) == 0) break;
  }
  size_t pn = 0;
  assert_ok(cucore_binary_fatbin_extract(plain, pi, NULL, 0, &pn));
  unsigned char *pd = malloc(pn);
  assert_ok(cucore_binary_fatbin_extract(plain, pi, pd, pn, &pn));
  assert_true(got_size <= pn);
  assert_memory_equal(got, pd, got_size);
  for (size_t b = got_size; b < pn; b++) assert_int_equal(pd[b], 0);
  cucore_binary *p;
  assert_ok(cucore_binary_open(got, got_size, CUCORE_CODE_AUTO, 0, &p));
  cucore_binary_info pinfo;
  assert_ok(cucore_binary_get_info(p, &pinfo));
  assert_int_equal(pinfo.code_type, CUCORE_CODE_PTX);
  assert_int_equal(pinfo.arch, e->arch);
  assert_int_equal(pinfo.ptx_version, (int)(e->version_major * 10 + e->version_minor));
  cucore_binary_destroy(p);
  free(pd);
}

/* Every entry extracted from every fatbin: cubins equal `nvcc -cubin` for the same target;
 * PTX equals the --no-compress fatbin's text; too small a buffer is refused, naming both
 * sizes. */
static void extracted_entries_equal_the_originals(void **state) {
  (void)state;
  cucore_binary *plain = open_checked("none", 0);
  int lz4 = 0, zstd = 0;
  for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
    cucore_binary *bin = open_checked(modes[m], 0);
    for (uint32_t i = 0; i < NSPECS; i++) {
      cucore_fatbin_entry e;
      assert_ok(cucore_binary_get_fatbin_entry(bin, i, &e));
      lz4 += strcmp(e.compression, "lz4") == 0;
      zstd += strcmp(e.compression, "zstd") == 0;
      size_t size = 0;
      assert_ok(cucore_binary_fatbin_extract(bin, i, NULL, 0, &size));
      assert_int_equal(size, e.size);
      unsigned char *got = malloc(size);
      size_t got_size = 0;
      cucore_status st = cucore_binary_fatbin_extract(bin, i, got, size, &got_size);
      if (st != CUCORE_OK) fail_msg("%s %s: %s", modes[m], e.arch_name, cucore_last_error());
      assert_int_equal(got_size, size);
      if (e.type == CUCORE_CODE_CUBIN)
        check_cubin_entry(modes[m], &e, got, got_size);
      else
        check_ptx_entry(plain, &e, got, got_size);
      if (size > 1) {
        assert_status(cucore_binary_fatbin_extract(bin, i, got, size - 1, &got_size),
                      CUCORE_INVALID_ARGUMENT);
        char *msg = rs_printf("%zu bytes; the buffer holds %zu", size, size - 1);
        assert_contains(cucore_last_error(), msg);
        free(msg);
      }
      free(got);
    }
    cucore_fatbin_entry e;
    assert_status(cucore_binary_get_fatbin_entry(bin, NSPECS, &e), CUCORE_INVALID_ARGUMENT);
    size_t sz;
    assert_status(cucore_binary_fatbin_extract(bin, NSPECS, NULL, 0, &sz), CUCORE_INVALID_ARGUMENT);
    cucore_binary_destroy(bin);
  }
  /* Both compressors were met. */
  assert_true(lz4 > 0);
  assert_true(zstd > 0);
  cucore_binary_destroy(plain);
}

/* The entry for a GPU, by the documented rules, computed here from the -gencode list:
 * an exact cubin; else the newest cubin of the same major version and an older minor (not an
 * 'a' one); else the newest PTX at or below the arch ('a' PTX: exact arch only). */
static int expected_choice(int target) {
  int best = -1;
  for (size_t i = 0; i < NSPECS; i++)
    if (spec_is_cubin(specs[i].code) && spec_number(specs[i].code) == target) best = (int)i;
  if (best >= 0) return best;
  for (size_t i = 0; i < NSPECS; i++) {
    int a = spec_number(specs[i].code);
    if (!spec_is_cubin(specs[i].code) || spec_suffix(specs[i].code) == 'a') continue;
    if (a / 10 == target / 10 && a <= target && (best < 0 || a > spec_number(specs[best].code)))
      best = (int)i;
  }
  if (best >= 0) return best;
  for (size_t i = 0; i < NSPECS; i++) {
    int a = spec_number(specs[i].code);
    if (spec_is_cubin(specs[i].code) || a > target) continue;
    if (spec_suffix(specs[i].code) == 'a' && a != target) continue;
    if (best < 0 || a > spec_number(specs[best].code)) best = (int)i;
  }
  return best;
}

static void the_entry_for_each_gpu(void **state) {
  (void)state;
  const int targets[] = {75, 80, 86, 87, 89, 90, 100, 103, 110, 120, 121, 70};
  char *path = fatbin_for("default");
  size_t n;
  unsigned char *data = rs_read(path, &n);
  for (size_t t = 0; t < sizeof targets / sizeof targets[0]; t++) {
    int want = expected_choice(targets[t]);
    cucore_binary *bin = NULL;
    cucore_status st = cucore_binary_open(data, n, CUCORE_CODE_FATBIN, targets[t], &bin);
    if (want < 0) {
      assert_status(st, CUCORE_NOT_FOUND);
      char *msg = rs_printf("sm_%d", targets[t]);
      assert_contains(cucore_last_error(), msg);
      assert_contains(cucore_last_error(), "sm_90a");
      free(msg);
      continue;
    }
    if (st != CUCORE_OK) fail_msg("sm_%d: %s", targets[t], cucore_last_error());
    cucore_binary_info info;
    assert_ok(cucore_binary_get_info(bin, &info));
    cucore_fatbin_entry e;
    assert_ok(cucore_binary_get_fatbin_entry(bin, (uint32_t)info.selected_entry, &e));
    if (strcmp(e.arch_name, specs[want].code) != 0)
      fail_msg("sm_%d: chose %s, expected %s", targets[t], e.arch_name, specs[want].code);
    uint32_t idx;
    assert_ok(cucore_binary_fatbin_select(bin, targets[t], &idx));
    assert_int_equal(idx, info.selected_entry);
    assert_int_equal(info.code_type, e.type);
    assert_int_equal(info.arch, e.arch);
    assert_true(info.kernel_count > 0);
    cucore_binary_destroy(bin);
  }
  free(data);
  free(path);
}

/* A cubin chosen from a fatbin gets the parameter kinds of the fatbin's PTX. */
static void fatbin_ptx_lends_kinds(void **state) {
  (void)state;
  cucore_binary *bin = open_checked("default", 90); /* sm_90a, with compute_90a beside it */
  cucore_binary_info info;
  assert_ok(cucore_binary_get_info(bin, &info));
  assert_int_equal(info.code_type, CUCORE_CODE_CUBIN);
  uint32_t ptx_index = NSPECS;
  for (uint32_t i = 0; i < NSPECS; i++) {
    cucore_fatbin_entry e;
    assert_ok(cucore_binary_get_fatbin_entry(bin, i, &e));
    if (strcmp(e.arch_name, "compute_90a") == 0) ptx_index = i;
  }
  size_t pn;
  assert_ok(cucore_binary_fatbin_extract(bin, ptx_index, NULL, 0, &pn));
  char *ptx = malloc(pn);
  assert_ok(cucore_binary_fatbin_extract(bin, ptx_index, ptx, pn, &pn));
  cucore_binary *p;
  assert_ok(cucore_binary_open(ptx, pn, CUCORE_CODE_PTX, 90, &p));
  for (uint32_t i = 0; i < info.kernel_count; i++) {
    const cucore_kernel_info *k, *pk;
    assert_ok(cucore_binary_get_kernel(bin, i, &k));
    assert_ok(cucore_binary_find_kernel(p, k->name, &pk));
    for (uint32_t q = 0; q < k->param_count; q++) {
      assert_int_equal(k->params[q].kind, pk->params[q].kind);
      assert_int_equal(k->params[q].align, pk->params[q].align);
      assert_int_equal(k->params[q].offset, pk->params[q].offset);
    }
  }
  cucore_binary_destroy(p);
  cucore_binary_destroy(bin);
  free(ptx);
}

/* Host objects (nvcc -c and -dc), static libraries, LTO-IR. */
static void objects_libraries_and_ltoir(void **state) {
  (void)state;
  char *obj =
      rs_build("params_sm_80.o",
               "nvcc -c -gencode arch=compute_80,code=[sm_80,compute_80] -o \"$OUT\" params.cu");
  char *rdc = rs_build("params_rdc_sm_90.o", "nvcc -dc -arch=sm_90 -o \"$OUT\" params.cu");
  char *lib = rs_build("libparams.a", "rm -f \"$OUT\" && ar rcs \"$OUT\" '%s'", obj);
  size_t n;
  unsigned char *data = rs_read(obj, &n);
  cucore_code_type type;
  assert_ok(cucore_code_type_detect(data, n, &type));
  assert_int_equal(type, CUCORE_CODE_OBJECT);
  cucore_binary *bin;
  assert_ok(cucore_binary_open(data, n, CUCORE_CODE_AUTO, 80, &bin));
  cucore_binary_info info;
  assert_ok(cucore_binary_get_info(bin, &info));
  assert_int_equal(info.type, CUCORE_CODE_OBJECT);
  assert_int_equal(info.code_type, CUCORE_CODE_CUBIN);
  assert_int_equal(info.fatbin_entry_count, 2);
  assert_string_equal(info.arch_name, "sm_80");
  /* the entries lie inside the object's .nv_fatbin section, as readelf places it */
  rs_elf elf;
  rs_readelf(obj, &elf);
  const rs_sec *s = rs_elf_section(&elf, ".nv_fatbin");
  assert_non_null(s);
  for (uint32_t i = 0; i < info.fatbin_entry_count; i++) {
    cucore_fatbin_entry e;
    assert_ok(cucore_binary_get_fatbin_entry(bin, i, &e));
    assert_true(e.offset >= s->off && e.offset + e.stored_size <= s->off + s->size);
  }
  /* the same kernels as the cubin nvcc makes for sm_80 */
  char *ref = rs_build("params_sm_80.cubin",
                       "nvcc -cubin -gencode arch=compute_80,code=sm_80 -o \"$OUT\" params.cu");
  rs_readelf(ref, &elf);
  assert_int_equal(info.kernel_count, elf.nkernels);
  cucore_binary_destroy(bin);
  free(data);

  data = rs_read(rdc, &n);
  assert_ok(cucore_binary_open(data, n, CUCORE_CODE_AUTO, 90, &bin));
  assert_ok(cucore_binary_get_info(bin, &info));
  assert_int_equal(info.type, CUCORE_CODE_OBJECT);
  assert_int_equal(info.relocatable, 1);
  cucore_binary_destroy(bin);
  free(data);

  data = rs_read(lib, &n);
  assert_ok(cucore_code_type_detect(data, n, &type));
  assert_int_equal(type, CUCORE_CODE_LIBRARY);
  bin = (cucore_binary *)1;
  assert_status(cucore_binary_open(data, n, CUCORE_CODE_AUTO, 0, &bin), CUCORE_NOT_SUPPORTED);
  assert_null(bin);
  assert_contains(cucore_last_error(), "ar x");
  free(data);

  free(lib);
  free(rdc);
  free(obj);
  free(ref);
  assert_ok(cucore_binary_destroy(NULL));
}

/* A fatbin of LTO-IR only: listed, extracted when stored plain (it is LTO-IR), not opened
 * for kernels; compressed LTO-IR is stored in a form cucore cannot read. */
static void ltoir_entries(void **state) {
  (void)state;
  char *plain = rs_build("params_lto_90_plain.fatbin",
                         "nvcc -fatbin --no-compress -gencode arch=compute_90,code=lto_90 -o "
                         "\"$OUT\" params.cu");
  char *packed =
      rs_build("params_lto_90.fatbin",
               "nvcc -fatbin -gencode arch=compute_90,code=lto_90 -o \"$OUT\" params.cu");
  for (int pass = 0; pass < 2; pass++) {
    size_t n;
    unsigned char *data = rs_read(pass ? packed : plain, &n);
    cucore_binary *bin = (cucore_binary *)1;
    assert_status(cucore_binary_open(data, n, CUCORE_CODE_AUTO, 0, &bin), CUCORE_NOT_FOUND);
    assert_null(bin);
    assert_contains(cucore_last_error(), "lto_90");
    assert_contains(cucore_last_error(), "nvJitLink");
    /* the entry list is still readable through the internal API */
    cc_fatbin f;
    cc_begin();
    assert_ok(cc_fatbin_parse(data, n, 0, n, &f));
    assert_int_equal(f.count, 1);
    assert_int_equal(f.entries[0].type, CUCORE_CODE_LTOIR);
    assert_int_equal(f.entries[0].raw_kind, 8);
    assert_string_equal(f.entries[0].arch_name, "lto_90");
    const uint8_t *bytes;
    size_t size;
    int owned;
    if (pass == 0) {
      assert_string_equal(f.entries[0].compression, "none");
      assert_ok(cc_fatbin_entry_bytes(&f, 0, &bytes, &size, &owned));
      cucore_code_type type;
      assert_ok(cucore_code_type_detect(bytes, size, &type));
      assert_int_equal(type, CUCORE_CODE_LTOIR);
      if (owned) free((void *)bytes);
    } else {
      assert_string_equal(f.entries[0].compression, "unknown");
      cc_begin();
      assert_status(cc_fatbin_entry_bytes(&f, 0, &bytes, &size, &owned), CUCORE_NOT_SUPPORTED);
      assert_contains(cucore_last_error(), "compressed fatbin entry");
      assert_contains(cucore_last_error(), "--no-compress");
    }
    cc_fatbin_free(&f);
    free(data);
  }
  free(plain);
  free(packed);
}

/* The LZ4 block decoder on hand-made blocks (the LZ4 block format: token = literal length
 * << 4 | (match length - 4), literals, 2-byte little-endian offset, extension bytes of 255). */
static void lz4_blocks(void **state) {
  (void)state;
  uint8_t out[64];
  /* literals only */
  const uint8_t lit[] = {0x50, 'h', 'e', 'l', 'l', 'o'};
  assert_ok(cc_lz4_decompress(lit, sizeof lit, out, 5));
  assert_memory_equal(out, "hello", 5);
  /* one literal then an overlapping match of 7: eight 'a's, then 2 literals */
  const uint8_t rep[] = {0x13, 'a', 0x01, 0x00, 0x20, 'b', 'c'};
  assert_ok(cc_lz4_decompress(rep, sizeof rep, out, 10));
  assert_memory_equal(out, "aaaaaaaabc", 10);
  /* a literal length extended past 15: 15 + 5 = 20 bytes */
  uint8_t ext[2 + 20] = {0xf0, 5};
  for (int i = 0; i < 20; i++) ext[2 + i] = (uint8_t)('A' + i);
  assert_ok(cc_lz4_decompress(ext, sizeof ext, out, 20));
  assert_memory_equal(out, ext + 2, 20);
  /* bad: offset 0, offset before the start, truncated offset, too long, too short */
  const uint8_t off0[] = {0x10, 'a', 0x00, 0x00};
  assert_status((cc_begin(), cc_lz4_decompress(off0, sizeof off0, out, 5)), CUCORE_INVALID_BINARY);
  assert_contains(cucore_last_error(), "offset 0");
  const uint8_t far[] = {0x10, 'a', 0x05, 0x00};
  assert_status((cc_begin(), cc_lz4_decompress(far, sizeof far, out, 5)), CUCORE_INVALID_BINARY);
  assert_contains(cucore_last_error(), "before the start");
  const uint8_t trunc[] = {0x10, 'a', 0x01};
  assert_status((cc_begin(), cc_lz4_decompress(trunc, sizeof trunc, out, 5)),
                CUCORE_INVALID_BINARY);
  assert_status((cc_begin(), cc_lz4_decompress(lit, sizeof lit, out, 4)), CUCORE_INVALID_BINARY);
  assert_status((cc_begin(), cc_lz4_decompress(lit, sizeof lit, out, 6)), CUCORE_INVALID_BINARY);
  assert_contains(cucore_last_error(), "5 bytes came out where 6 were expected");
  const uint8_t runaway[] = {0xf0, 255, 255, 255};
  assert_status((cc_begin(), cc_lz4_decompress(runaway, sizeof runaway, out, 64)),
                CUCORE_INVALID_BINARY);
}

int main(void) {
  rs_require_tools();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(entries_match_the_gencode_list),
      cmocka_unit_test(extracted_entries_equal_the_originals),
      cmocka_unit_test(the_entry_for_each_gpu),
      cmocka_unit_test(fatbin_ptx_lends_kinds),
      cmocka_unit_test(objects_libraries_and_ltoir),
      cmocka_unit_test(ltoir_entries),
      cmocka_unit_test(lz4_blocks),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
