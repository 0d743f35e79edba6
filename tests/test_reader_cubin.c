/* test_reader_cubin.c -- the cubin reader against independent oracles, for every arch from
 * sm_75 to sm_120 and the 'a' and 'f' variants: the test kernels are compiled with nvcc here,
 * then every field the reader reports is compared with ptxas's own report, readelf, c++filt,
 * the C++ compiler's view of the parameter types, and the kernels' declarations. */
#include "reader_support.h"

static int arch_number(const char *arch) { return atoi(arch + 3); }
static char arch_suffix(const char *arch) {
  char c = arch[strlen(arch) - 1];
  return c == 'a' || c == 'f' ? c : 0;
}

/* Kernel `i` of `bin` (built for `arch`) against readelf, ptxas, c++filt and the kernels'
 * declarations. */
static void check_kernel(const char *arch, cucore_binary *bin, uint32_t i, const rs_elf *elf,
                         const rs_ptxas *px, const unsigned char *data, size_t size,
                         const cucore_binary_info *info) {
  const int num = arch_number(arch);
  const rs_sec *c3 = rs_elf_section(elf, ".nv.constant3");
  const cucore_kernel_info *k;
  assert_ok(cucore_binary_get_kernel(bin, i, &k));
  if (!rs_elf_has_kernel(elf, k->name)) fail_msg("%s: %s is not an entry symbol", arch, k->name);
  const rs_ptxas_entry *pe = rs_ptxas_find(px, k->name);
  if (!pe) fail_msg("%s: ptxas did not compile %s", arch, k->name);

  /* Names. */
  if (strncmp(k->name, "_Z", 2) == 0 && info->demangler) {
    char *want = rs_cxxfilt(k->name);
    assert_non_null(k->demangled);
    assert_string_equal(k->demangled, want);
    free(want);
  } else if (strncmp(k->name, "_Z", 2) != 0) {
    assert_null(k->demangled);
  }

  /* Resources, as ptxas reported them. */
  if (k->registers != pe->regs || k->barriers != pe->barriers ||
      k->static_shared_bytes != pe->smem || k->local_bytes != pe->frame)
    fail_msg("%s %s: reader regs %d barriers %d smem %d frame %d; ptxas %d %d %d %d", arch, k->name,
             k->registers, k->barriers, k->static_shared_bytes, k->local_bytes, pe->regs,
             pe->barriers, pe->smem, pe->frame);
  assert_int_equal(k->stack_bytes, pe->cumulative > pe->frame ? pe->cumulative : pe->frame);
  if (pe->cmem0 >= 0) assert_int_equal(k->const_bytes, pe->cmem0);
  if (px->cmem3 >= 0 && num < 90) assert_int_equal(k->user_const_bytes, px->cmem3);
  assert_int_equal(k->user_const_bytes, c3 ? (int)c3->size : 0);

  /* Section sizes, as readelf sees them. */
  char *sname = rs_printf(".nv.constant0.%s", k->name);
  const rs_sec *s = rs_elf_section(elf, sname);
  assert_non_null(s);
  assert_int_equal(k->const_bytes, (int)s->size);
  free(sname);
  sname = rs_printf(".nv.shared.%s", k->name);
  s = rs_elf_section(elf, sname);
  assert_int_equal(k->static_shared_bytes + k->reserved_shared_bytes, s ? (int)s->size : 0);
  free(sname);

  /* Parameters: the records read a second way, from the bytes at readelf's offsets. */
  sname = rs_printf(".nv.info.%s", k->name);
  rs_kparams kp;
  rs_kernel_params(data, size, rs_elf_section(elf, sname), &kp);
  free(sname);
  assert_int_equal(k->param_count, kp.n);
  for (uint32_t p = 0; p < k->param_count; p++) {
    assert_int_equal(k->params[p].offset, kp.offset[p]);
    assert_int_equal(k->params[p].size, kp.size[p]);
    assert_int_equal(k->params[p].align, 0);
  }
  if (kp.have_cbank) {
    assert_int_equal(k->param_bytes, kp.cbank_size);
    assert_int_equal(k->param_base, kp.cbank_offset);
  }

  /* Declarations: launch bounds, clusters, register caps, grid sync. */
  const rs_decl *d = rs_decl_of(k->name);
  rs_assert_declared_bounds(k, d);
  if (d && d->maxnreg) assert_int_equal(k->max_registers, d->maxnreg);
  /* With a minimum of blocks per SM, ptxas caps registers so that many blocks fit in the
   * 64K-register file; a cap of 255 or more is no cap. */
  if (d && d->nbounds >= 2) {
    uint32_t fit = 65536u / (d->bounds[0] * d->bounds[1]);
    if (fit < 255)
      assert_true(k->max_registers > 0 && k->max_registers <= fit);
    else
      assert_int_equal(k->max_registers, 0);
  }
  if (k->max_registers) assert_true((uint32_t)k->registers <= k->max_registers);
  assert_int_equal(k->uses_grid_sync, d ? d->grid_sync : 0);
  assert_int_equal(k->min_blocks_per_sm, 0); /* a cubin does not keep it */
  assert_int_equal(k->reqntid[0], 0);        /* CUDA C++ cannot ask for one */

  /* The largest block: 1024, or the declared bound; registers allow it up to 64. */
  int32_t bound = d && d->nbounds >= 1 ? (int32_t)d->bounds[0] : 1024;
  assert_true(k->max_threads_per_block > 0 && k->max_threads_per_block <= bound);
  if (k->registers <= 64) assert_int_equal(k->max_threads_per_block, bound);
}

/* The parameters of `bin` (built for `arch`) against the C++ compiler's sizes, alignments and
 * categories. */
static void check_params_against_cxx(const char *arch, cucore_binary *bin) {
  const int num = arch_number(arch);
  const rs_describe *ds = rs_the_describe();
  for (unsigned i = 0; i < ds->n; i++) {
    const rs_desc *d = &ds->d[i];
    if (strncmp(d->key, "cluster_", 8) == 0 && num < 90) continue;
    const cucore_kernel_info *k = rs_kernel(bin, d->key);
    assert_int_equal(k->param_count, d->n);
    uint32_t end = 0;
    for (uint32_t p = 0; p < d->n; p++) {
      const cucore_param_info *pi = &k->params[p];
      if (pi->size != d->size[p])
        fail_msg("%s %s param %u: size %u, C++ says %u", arch, d->key, p, pi->size, d->size[p]);
      /* The layout rule: the first offset after the previous parameter whose address in
       * constant bank 0 is aligned as the type is. */
      if ((k->param_base + pi->offset) % d->align[p] != 0 || pi->offset < end ||
          pi->offset - end >= d->align[p])
        fail_msg("%s %s param %u at %u (after %u, base 0x%x) breaks alignment %u", arch, d->key, p,
                 pi->offset, end, (unsigned)k->param_base, d->align[p]);
      end = pi->offset + pi->size;
      /* Pointers are marked in cubins for sm_100 and newer. */
      cucore_param_kind want = num >= 100 && d->cat[p] == 'p' ? CUCORE_PARAM_POINTER
                                                              : CUCORE_PARAM_UNKNOWN;
      if (pi->kind != want)
        fail_msg("%s %s param %u: kind %d, expected %d", arch, d->key, p, pi->kind, want);
    }
    assert_int_equal(k->param_bytes, end);
  }
}

/* Everything about one cubin built for `arch`. */
static void check_arch(const char *arch) {
  char *path = rs_all_kernels_cubin(arch);
  size_t size;
  unsigned char *data = rs_read(path, &size);
  rs_elf elf;
  rs_readelf(path, &elf);
  char *log = rs_build_log(path);
  static rs_ptxas px;
  rs_parse_ptxas(log, &px);
  const int num = arch_number(arch);

  cucore_binary *bin = NULL;
  assert_ok(cucore_binary_open(data, size, CUCORE_CODE_AUTO, 0, &bin));
  cucore_binary_info info;
  assert_ok(cucore_binary_get_info(bin, &info));
  assert_int_equal(info.type, CUCORE_CODE_CUBIN);
  assert_int_equal(info.code_type, CUCORE_CODE_CUBIN);
  /* The arch is the one nvcc was asked for; the virtual arch is implied by -arch=sm_XX. */
  assert_string_equal(info.arch_name, arch);
  assert_int_equal(info.arch, num);
  assert_int_equal(info.arch_suffix, arch_suffix(arch));
  assert_int_equal(info.virtual_arch, num);
  if (elf.abi_version >= 8) assert_true(info.toolkit_version >= 130);
  assert_int_equal(info.relocatable, 0);
  assert_int_equal(info.selected_entry, -1);
  assert_int_equal(info.fatbin_entry_count, 0);

  /* The kernels are the entry symbols readelf lists, and those ptxas compiled. */
  assert_int_equal(info.kernel_count, elf.nkernels);
  assert_int_equal(info.kernel_count, px.n);
  uint32_t count = 0;
  assert_ok(cucore_binary_get_kernel_count(bin, &count));
  assert_int_equal(count, info.kernel_count);
  assert_status(cucore_binary_get_kernel_count(NULL, &count), CUCORE_INVALID_ARGUMENT);
  assert_int_equal(count, 0);
  for (uint32_t i = 0; i < info.kernel_count; i++)
    check_kernel(arch, bin, i, &elf, &px, data, size, &info);
  check_params_against_cxx(arch, bin);
  assert_ok(cucore_binary_destroy(bin));
  free(log);
  free(data);
  free(path);
}

static void cubin_matches_oracles(void **state) { check_arch((const char *)*state); }

/* PTX parameter kinds merged into a cubin's kernels. */
static void attach_ptx_gives_kinds(void **state) {
  const char *arch = (const char *)*state;
  const int num = arch_number(arch);
  char *cubin = rs_all_kernels_cubin(arch);
  char *ptxname = rs_printf("all_compute_%d.ptx", num);
  char *ptx = rs_build(ptxname, "nvcc -ptx -arch=compute_%d %s -o \"$OUT\" all_kernels.cu", num,
                       num >= 90 ? "-DCUCORE_TEST_CLUSTERS" : "");
  size_t n, pn;
  unsigned char *data = rs_read(cubin, &n);
  char *text = (char *)rs_read(ptx, &pn);
  cucore_binary *bin;
  assert_ok(cucore_binary_open(data, n, CUCORE_CODE_CUBIN, 0, &bin));
  uint32_t matched = 0;
  assert_ok(cucore_binary_attach_ptx(bin, text, pn, &matched));
  cucore_binary_info info;
  assert_ok(cucore_binary_get_info(bin, &info));
  assert_int_equal(matched, info.kernel_count);
  const rs_describe *ds = rs_the_describe();
  for (unsigned i = 0; i < ds->n; i++) {
    const rs_desc *d = &ds->d[i];
    if (strncmp(d->key, "cluster_", 8) == 0 && num < 90) continue;
    const cucore_kernel_info *k = rs_kernel(bin, d->key);
    for (uint32_t p = 0; p < d->n; p++) {
      /* nvcc writes pointers as .u64 (INT); a cubin that marks them keeps POINTER. half and
       * bf16 are classes in C++ and .b8 arrays in PTX. */
      cucore_param_kind want = d->cat[p] == 'f'                 ? CUCORE_PARAM_FLOAT
                               : d->cat[p] == 'c'               ? CUCORE_PARAM_BYTES
                               : d->cat[p] == 'p' && num >= 100 ? CUCORE_PARAM_POINTER
                                                                : CUCORE_PARAM_INT;
      if (k->params[p].kind != want || k->params[p].align != d->align[p])
        fail_msg("%s %s param %u: kind %d align %u; expected kind %d align %u", arch, d->key, p,
                 k->params[p].kind, k->params[p].align, want, d->align[p]);
    }
    const rs_decl *dc = rs_decl_of(k->name);
    assert_int_equal(k->min_blocks_per_sm, dc && dc->nbounds >= 2 ? dc->bounds[1] : 0);
  }
  /* PTX with the same kernel name but another parameter list is refused, and changes
   * nothing. */
  const char *other = ".version 8.0\n.target sm_75\n.address_size 64\n"
                      ".visible .entry p_none(.param .u32 x)\n{\n ret;\n}\n";
  assert_status(cucore_binary_attach_ptx(bin, other, strlen(other), &matched),
                CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "p_none");
  assert_contains(cucore_last_error(), "1 parameters");
  assert_int_equal(matched, 0);
  const char *bad = ".version 8.0\n.entry broken(.param .u32\n";
  assert_status(cucore_binary_attach_ptx(bin, bad, strlen(bad), NULL), CUCORE_PARSE_ERROR);
  cucore_binary_destroy(bin);
  free(text);
  free(data);
  free(ptx);
  free(ptxname);
  free(cubin);
}

/* Looking kernels up by symbol, demangled name, or short name; and the NOT_FOUND message. */
static void kernels_are_found_by_any_name(void **state) {
  (void)state;
  char *path = rs_all_kernels_cubin("sm_90");
  size_t n;
  unsigned char *data = rs_read(path, &n);
  cucore_binary *bin;
  assert_ok(cucore_binary_open(data, n, CUCORE_CODE_AUTO, 90, &bin));
  cucore_binary_info info;
  assert_ok(cucore_binary_get_info(bin, &info));
  for (uint32_t i = 0; i < info.kernel_count; i++) {
    const cucore_kernel_info *k, *f;
    assert_ok(cucore_binary_get_kernel(bin, i, &k));
    assert_ok(cucore_binary_find_kernel(bin, k->name, &f));
    assert_ptr_equal(f, k);
    if (k->demangled) {
      assert_ok(cucore_binary_find_kernel(bin, k->demangled, &f));
      assert_ptr_equal(f, k);
    }
  }
  /* An overloaded name without its parameters is ambiguous: both are listed. */
  const cucore_kernel_info *k;
  assert_status(cucore_binary_find_kernel(bin, "overloaded", &k), CUCORE_NOT_FOUND);
  assert_null(k);
  assert_contains(cucore_last_error(), "overloaded(int*, int)");
  assert_contains(cucore_last_error(), "overloaded(int*, double)");
  /* A misspelt name: the nearest name comes first. */
  assert_status(cucore_binary_find_kernel(bin, "p_structz", &k), CUCORE_NOT_FOUND);
  char *want = rs_printf("has %u: p_structs", info.kernel_count);
  assert_contains(cucore_last_error(), want);
  free(want);
  assert_status(cucore_binary_get_kernel(bin, info.kernel_count, &k), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "out of range");
  assert_status(cucore_binary_find_kernel(bin, NULL, &k), CUCORE_INVALID_ARGUMENT);
  /* A cubin is no fatbin. */
  cucore_fatbin_entry e;
  assert_status(cucore_binary_get_fatbin_entry(bin, 0, &e), CUCORE_INVALID_ARGUMENT);
  assert_contains(cucore_last_error(), "not a fatbin");
  cucore_binary_destroy(bin);
  free(data);
  free(path);
}

/* A cubin runs on its own major version at the same or a newer minor; 'a' only on its arch. */
static void arch_compatibility_is_checked(void **state) {
  (void)state;
  const char *cases[][2] = {{"sm_80", "86"},   {"sm_80", "90"},    {"sm_90a", "90"},
                            {"sm_120", "121"}, {"sm_120a", "121"}, {"sm_100f", "103"},
                            {"sm_90", "80"}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const char *arch = cases[i][0];
    int target = atoi(cases[i][1]), code = arch_number(arch);
    int runs = arch_suffix(arch) == 'a' ? code == target
                                        : code / 10 == target / 10 && code <= target;
    char *path = rs_all_kernels_cubin(arch);
    size_t n;
    unsigned char *data = rs_read(path, &n);
    cucore_binary *bin = NULL;
    cucore_status st = cucore_binary_open(data, n, CUCORE_CODE_AUTO, target, &bin);
    if (runs) {
      assert_ok(st);
    } else {
      assert_status(st, CUCORE_NOT_FOUND);
      assert_null(bin);
      assert_contains(cucore_last_error(), arch);
      assert_contains(cucore_last_error(), cases[i][1]);
    }
    cucore_binary_destroy(bin);
    free(data);
    free(path);
  }
}

/* -rdc cubins are relocatable; -G cubins are debug builds. */
static void relocatable_and_debug_cubins(void **state) {
  (void)state;
  char *rdc = rs_build("params_rdc_sm_80.cubin",
                       "nvcc -cubin -rdc=true -arch=sm_80 -o \"$OUT\" params.cu");
  char *dbg = rs_build("params_G_sm_90.cubin", "nvcc -cubin -G -arch=sm_90 -o \"$OUT\" params.cu");
  size_t n;
  unsigned char *data = rs_read(rdc, &n);
  cucore_binary *bin;
  assert_ok(cucore_binary_open(data, n, CUCORE_CODE_AUTO, 0, &bin));
  cucore_binary_info info;
  assert_ok(cucore_binary_get_info(bin, &info));
  assert_int_equal(info.relocatable, 1);
  assert_int_equal(info.debug, 0);
  rs_elf elf;
  rs_readelf(rdc, &elf);
  assert_int_equal(info.kernel_count, elf.nkernels);
  cucore_binary_destroy(bin);
  free(data);
  /* A relocatable sm_90 cubin has no reserved shared window; resources as ptxas reports. */
  char *la = rs_build("launch_attrs_rdc_sm_90.cubin",
                      "nvcc -cubin -rdc=true -arch=sm_90 -Xptxas -v -o \"$OUT\" launch_attrs.cu");
  char *log = rs_build_log(la);
  static rs_ptxas px;
  rs_parse_ptxas(log, &px);
  data = rs_read(la, &n);
  assert_ok(cucore_binary_open(data, n, CUCORE_CODE_AUTO, 0, &bin));
  assert_ok(cucore_binary_get_info(bin, &info));
  assert_int_equal(info.relocatable, 1);
  assert_int_equal(info.kernel_count, px.n);
  for (uint32_t i = 0; i < px.n; i++) {
    const cucore_kernel_info *k = rs_kernel(bin, px.e[i].name);
    assert_int_equal(k->static_shared_bytes, px.e[i].smem);
    assert_int_equal(k->reserved_shared_bytes, 0);
    assert_int_equal(k->local_bytes, px.e[i].frame);
    if (px.e[i].regs) assert_int_equal(k->registers, px.e[i].regs);
  }
  /* a cubin given as a host object is refused with the reason */
  cucore_binary *obj = NULL;
  assert_status(cucore_binary_open(data, n, CUCORE_CODE_OBJECT, 0, &obj), CUCORE_INVALID_BINARY);
  assert_contains(cucore_last_error(), "is a cubin");
  cucore_binary_destroy(bin);
  free(data);
  free(log);
  free(la);
  data = rs_read(dbg, &n);
  assert_ok(cucore_binary_open(data, n, CUCORE_CODE_AUTO, 0, &bin));
  assert_ok(cucore_binary_get_info(bin, &info));
  rs_readelf(dbg, &elf);
  assert_non_null(rs_elf_section(&elf, ".debug_info"));
  assert_int_equal(info.debug, 1);
  assert_int_equal(info.relocatable, 0);
  cucore_binary_destroy(bin);
  free(data);
  free(rdc);
  free(dbg);
}

/* The two e_flags layouts (LLVM's ELF.h names them): ABI version 7 (CUDA 12 and older) keeps
 * the SM in bits 0-7, the virtual arch in bits 16-23 and 'a' in bit 11; ABI version 8 keeps
 * the SM in bits 8-15 and 'a' in bit 3. This toolkit writes only version 8, so version 7 is
 * made here by rewriting a real cubin's header with values the test chooses. */
static void elf_flag_layouts(void **state) {
  (void)state;
  char *path = rs_all_kernels_cubin("sm_80");
  size_t n;
  unsigned char *d = rs_read(path, &n);
  struct {
    unsigned osabi, abiver;
    unsigned long flags;
    int arch, virt;
    char suffix;
  } cases[] = {
      {0x33, 7, 0x00500550ul, 80, 80, 0},        /* sm_80 from compute_80, 64-bit, texmode */
      {0x33, 7, 0x004b0556ul, 86, 75, 0},        /* sm_86 from compute_75 */
      {0x33, 7, 0x005a0d5aul, 90, 90, 'a'},      /* sm_90a */
      {0x41, 8, 0x06005a04ul | 0x8, 90, 0, 'a'}, /* ABI 8 with EF_CUDA_ACCELERATORS */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    unsigned char *c = malloc(n);
    memcpy(c, d, n);
    c[7] = (unsigned char)cases[i].osabi;
    c[8] = (unsigned char)cases[i].abiver;
    for (int b = 0; b < 4; b++) c[0x30 + b] = (unsigned char)(cases[i].flags >> (8 * b));
    cucore_binary *bin;
    assert_ok(cucore_binary_open(c, n, CUCORE_CODE_CUBIN, 0, &bin));
    cucore_binary_info info;
    assert_ok(cucore_binary_get_info(bin, &info));
    assert_int_equal(info.arch, cases[i].arch);
    assert_int_equal(info.arch_suffix, cases[i].suffix);
    if (cases[i].abiver == 7) assert_int_equal(info.virtual_arch, cases[i].virt);
    cucore_binary_destroy(bin);
    free(c);
  }
  free(d);
  free(path);
}

int main(void) {
  rs_require_tools();
#define ARCH_TEST(a) cmocka_unit_test_prestate(cubin_matches_oracles, (void *)a)
  const struct CMUnitTest tests[] = {
      ARCH_TEST("sm_75"),
      ARCH_TEST("sm_80"),
      ARCH_TEST("sm_90"),
      ARCH_TEST("sm_90a"),
      ARCH_TEST("sm_100"),
      ARCH_TEST("sm_100f"),
      ARCH_TEST("sm_120"),
      ARCH_TEST("sm_120a"),
      cmocka_unit_test_prestate(attach_ptx_gives_kinds, (void *)"sm_80"),
      cmocka_unit_test_prestate(attach_ptx_gives_kinds, (void *)"sm_100"),
      cmocka_unit_test(kernels_are_found_by_any_name),
      cmocka_unit_test(arch_compatibility_is_checked),
      cmocka_unit_test(relocatable_and_debug_cubins),
      cmocka_unit_test(elf_flag_layouts),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
