/* test_reader_ptx.c -- the PTX .entry reader: parameter types against the C++ compiler,
 * parameter offsets against ptxas (the PTX of the test kernels compiled for every arch, the
 * way the driver's JIT would), directives against the kernels' declarations, and robustness
 * to comments, line endings, continuations and malformed text. */
#include "reader_support.h"

static char *all_ptx(int virt) {
  char *name = rs_printf("all_compute_%d.ptx", virt);
  char *p = rs_build(name, "nvcc -ptx -arch=compute_%d %s -o \"$OUT\" all_kernels.cu", virt,
                     virt >= 90 ? "-DCUCORE_TEST_CLUSTERS" : "");
  free(name);
  return p;
}

/* The PTX of every kernel against the C++ compiler and the declarations. */
static void ptx_matches_source(void **state) {
  int virt = atoi((const char *)*state);
  char *path = all_ptx(virt);
  size_t n;
  char *text = (char *)rs_read(path, &n);
  cucore_binary *bin;
  assert_ok(cucore_binary_open(text, n, CUCORE_CODE_AUTO, 0, &bin));
  cucore_binary_info info;
  assert_ok(cucore_binary_get_info(bin, &info));
  assert_int_equal(info.type, CUCORE_CODE_PTX);
  assert_int_equal(info.code_type, CUCORE_CODE_PTX);
  /* .version and .target as the text has them. */
  int major = 0, minor = 0, target = 0;
  const char *v = strstr(text, "\n.version ");
  assert_non_null(v);
  assert_int_equal(sscanf(v, "\n.version %d.%d", &major, &minor), 2);
  const char *t = strstr(text, "\n.target sm_");
  assert_non_null(t);
  assert_int_equal(sscanf(t, "\n.target sm_%d", &target), 1);
  assert_int_equal(info.ptx_version, major * 10 + minor);
  assert_int_equal(info.arch, target);
  char want_name[32];
  snprintf(want_name, sizeof want_name, "compute_%d", target);
  assert_string_equal(info.arch_name, want_name);

  /* Every kernel of the cubin nvcc builds from the same source is here. */
  char arch[16];
  snprintf(arch, sizeof arch, "sm_%d", virt);
  char *cubin = rs_all_kernels_cubin(arch);
  rs_elf elf;
  rs_readelf(cubin, &elf);
  assert_int_equal(info.kernel_count, elf.nkernels);
  for (uint32_t i = 0; i < info.kernel_count; i++) {
    const cucore_kernel_info *k;
    assert_ok(cucore_binary_get_kernel(bin, i, &k));
    if (!rs_elf_has_kernel(&elf, k->name)) fail_msg("PTX kernel %s is not in the cubin", k->name);
    /* PTX records no resource usage. */
    assert_int_equal(k->registers, CUCORE_UNKNOWN);
    assert_int_equal(k->static_shared_bytes, CUCORE_UNKNOWN);
    assert_int_equal(k->local_bytes, CUCORE_UNKNOWN);
    assert_int_equal(k->const_bytes, CUCORE_UNKNOWN);
    assert_int_equal(k->barriers, CUCORE_UNKNOWN);
    /* Directives, from the declarations. */
    const rs_decl *d = rs_decl_of(k->name);
    rs_assert_declared_bounds(k, d);
    assert_int_equal(k->min_blocks_per_sm, d && d->nbounds >= 2 ? d->bounds[1] : 0);
    assert_int_equal(k->max_registers, d ? d->maxnreg : 0);
    assert_int_equal(k->max_threads_per_block,
                     d && d->nbounds >= 1 ? (int32_t)d->bounds[0] : CUCORE_UNKNOWN);
  }
  /* Parameter types, sizes and alignments, from the C++ compiler. */
  const rs_describe *ds = rs_the_describe();
  for (unsigned i = 0; i < ds->n; i++) {
    const rs_desc *d = &ds->d[i];
    if (strncmp(d->key, "cluster_", 8) == 0 && virt < 90) continue;
    const cucore_kernel_info *k = rs_kernel(bin, d->key);
    assert_int_equal(k->param_count, d->n);
    for (uint32_t p = 0; p < d->n; p++) {
      cucore_param_kind want = d->cat[p] == 'f'   ? CUCORE_PARAM_FLOAT
                               : d->cat[p] == 'c' ? CUCORE_PARAM_BYTES
                                                  : CUCORE_PARAM_INT;
      const cucore_param_info *pi = &k->params[p];
      if (pi->size != d->size[p] || pi->align != d->align[p] || pi->kind != want)
        fail_msg("compute_%d %s param %u: size %u align %u kind %d; C++: %u %u kind %d", virt,
                 d->key, p, pi->size, pi->align, pi->kind, d->size[p], d->align[p], want);
    }
  }
  cucore_binary_destroy(bin);
  free(cubin);
  free(text);
  free(path);
}

/* The parameter offsets computed from PTX equal those ptxas gives the same PTX compiled for
 * each arch: this is the layout the driver uses when it JIT-compiles PTX. */
static void ptx_offsets_match_ptxas(void **state) {
  int virt = atoi((const char *)*state);
  static const int targets[] = {75, 80, 86, 90, 100, 120};
  char *ptx = all_ptx(virt);
  size_t n;
  char *text = (char *)rs_read(ptx, &n);
  for (size_t ti = 0; ti < sizeof targets / sizeof targets[0]; ti++) {
    int target = targets[ti];
    if (target < virt) continue;
    char *name = rs_printf("all_compute_%d_ptxas_sm_%d.cubin", virt, target);
    char *cubin = rs_build(name, "ptxas -arch=sm_%d -o \"$OUT\" '%s'", target, ptx);
    size_t cn;
    unsigned char *cdata = rs_read(cubin, &cn);
    cucore_binary *from_ptx, *from_cubin;
    assert_ok(cucore_binary_open(text, n, CUCORE_CODE_PTX, target, &from_ptx));
    assert_ok(cucore_binary_open(cdata, cn, CUCORE_CODE_CUBIN, target, &from_cubin));
    cucore_binary_info pi, ci;
    assert_ok(cucore_binary_get_info(from_ptx, &pi));
    assert_ok(cucore_binary_get_info(from_cubin, &ci));
    assert_int_equal(pi.kernel_count, ci.kernel_count);
    for (uint32_t i = 0; i < pi.kernel_count; i++) {
      const cucore_kernel_info *pk, *ck;
      assert_ok(cucore_binary_get_kernel(from_ptx, i, &pk));
      ck = rs_kernel(from_cubin, pk->name);
      assert_int_equal(pk->param_count, ck->param_count);
      if (pk->param_bytes != ck->param_bytes || pk->param_base != ck->param_base)
        fail_msg("compute_%d on sm_%d, %s: PTX layout %u bytes from 0x%x, ptxas %u from 0x%x", virt,
                 target, pk->name, pk->param_bytes, (unsigned)pk->param_base, ck->param_bytes,
                 (unsigned)ck->param_base);
      for (uint32_t p = 0; p < pk->param_count; p++)
        if (pk->params[p].offset != ck->params[p].offset ||
            pk->params[p].size != ck->params[p].size)
          fail_msg("compute_%d on sm_%d, %s param %u: PTX layout offset %u size %u, ptxas "
                   "offset %u size %u",
                   virt, target, pk->name, p, pk->params[p].offset, pk->params[p].size,
                   ck->params[p].offset, ck->params[p].size);
    }
    cucore_binary_destroy(from_ptx);
    cucore_binary_destroy(from_cubin);
    free(cdata);
    free(cubin);
    free(name);
  }
  free(text);
  free(ptx);
}

/* What directives.ptx declares, read here with sscanf (block comments removed first). */
typedef struct ptx_decl {
  char name[64];
  unsigned maxntid[3], reqntid[3], cluster[3], minblocks, maxnreg, rank;
  int explicit_cluster;
} ptx_decl;

static void read3(const char *s, unsigned out[3]) {
  out[0] = out[1] = out[2] = 1;
  sscanf(s, "%u , %u , %u", &out[0], &out[1], &out[2]);
}

static unsigned read_directives(char *text, ptx_decl *out, unsigned max) {
  for (char *c = strstr(text, "/*"); c; c = strstr(c, "/*")) {
    char *e = strstr(c + 2, "*/");
    if (!e) break;
    memset(c, ' ', (size_t)(e + 2 - c));
  }
  unsigned n = 0;
  ptx_decl *cur = NULL;
  for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
    char *cm = strstr(line, "//");
    if (cm) *cm = '\0';
    char *e = strstr(line, ".entry");
    const char *s;
    if (e && n < max) {
      cur = &out[n++];
      memset(cur, 0, sizeof *cur);
      sscanf(e + 6, " %63[A-Za-z0-9_]", cur->name);
    } else if (cur && (s = strstr(line, ".maxntid"))) {
      read3(s + 8, cur->maxntid);
    } else if (cur && (s = strstr(line, ".reqntid"))) {
      read3(s + 8, cur->reqntid);
    } else if (cur && (s = strstr(line, ".reqnctapercluster"))) {
      read3(s + 18, cur->cluster);
    } else if (cur && (s = strstr(line, ".minnctapersm"))) {
      sscanf(s + 13, "%u", &cur->minblocks);
    } else if (cur && (s = strstr(line, ".maxnreg"))) {
      sscanf(s + 8, "%u", &cur->maxnreg);
    } else if (cur && (s = strstr(line, ".maxclusterrank"))) {
      sscanf(s + 15, "%u", &cur->rank);
    } else if (cur && strstr(line, ".explicitcluster")) {
      cur->explicit_cluster = 1;
    }
  }
  return n;
}

/* Hand-written PTX: every directive, against the text and against the cubin ptxas makes. */
static void directives_ptx(void **state) {
  (void)state;
  char *src = rs_printf("%s/directives.ptx", CUCORE_TEST_KERNEL_DIR);
  size_t n;
  char *text = (char *)rs_read(src, &n);
  char *copy = strdup(text);
  ptx_decl want[16];
  unsigned nwant = read_directives(copy, want, 16);
  free(copy);
  char *cubin = rs_build("directives_sm_90.cubin", "ptxas -arch=sm_90 -o \"$OUT\" directives.ptx");
  size_t cn;
  unsigned char *cdata = rs_read(cubin, &cn);
  cucore_binary *p, *c;
  assert_ok(cucore_binary_open(text, n, CUCORE_CODE_AUTO, 90, &p));
  assert_ok(cucore_binary_open(cdata, cn, CUCORE_CODE_AUTO, 90, &c));
  cucore_binary_info info;
  assert_ok(cucore_binary_get_info(p, &info));
  assert_int_equal(info.kernel_count, nwant);
  for (unsigned i = 0; i < nwant; i++) {
    const ptx_decl *w = &want[i];
    const cucore_kernel_info *pk = rs_kernel(p, w->name), *ck = rs_kernel(c, w->name);
    const unsigned zero[3] = {0, 0, 0};
    assert_memory_equal(pk->maxntid, w->maxntid[0] ? w->maxntid : zero, sizeof zero);
    assert_memory_equal(pk->reqntid, w->reqntid[0] ? w->reqntid : zero, sizeof zero);
    assert_memory_equal(pk->cluster_dims, w->cluster[0] ? w->cluster : zero, sizeof zero);
    assert_int_equal(pk->min_blocks_per_sm, w->minblocks);
    assert_int_equal(pk->max_registers, w->maxnreg);
    assert_int_equal(pk->max_blocks_per_cluster, w->rank);
    assert_int_equal(pk->explicit_cluster, w->explicit_cluster);
    /* ptxas keeps all of them but the minimum of blocks per SM in the cubin. */
    assert_memory_equal(ck->maxntid, pk->maxntid, sizeof zero);
    assert_memory_equal(ck->reqntid, pk->reqntid, sizeof zero);
    assert_memory_equal(ck->cluster_dims, pk->cluster_dims, sizeof zero);
    assert_int_equal(ck->max_registers, pk->max_registers);
    assert_int_equal(ck->max_blocks_per_cluster, pk->max_blocks_per_cluster);
    assert_int_equal(ck->explicit_cluster, pk->explicit_cluster);
    uint32_t bound = 1024;
    if (w->maxntid[0]) bound = w->maxntid[0] * w->maxntid[1] * w->maxntid[2];
    if (w->reqntid[0] && w->reqntid[0] * w->reqntid[1] * w->reqntid[2] < bound)
      bound = w->reqntid[0] * w->reqntid[1] * w->reqntid[2];
    assert_int_equal(ck->max_threads_per_block, bound);
    /* Layout and pointers: the PTX's `.ptr` parameters are marked in the cubin too. */
    assert_int_equal(pk->param_count, ck->param_count);
    assert_int_equal(pk->param_bytes, ck->param_bytes);
    for (uint32_t q = 0; q < pk->param_count; q++) {
      assert_int_equal(pk->params[q].offset, ck->params[q].offset);
      assert_int_equal(pk->params[q].size, ck->params[q].size);
      assert_int_equal(pk->params[q].kind == CUCORE_PARAM_POINTER,
                       ck->params[q].kind == CUCORE_PARAM_POINTER);
    }
  }
  cucore_binary_destroy(p);
  cucore_binary_destroy(c);
  free(cdata);
  free(cubin);
  free(text);
  free(src);
}

/* Replaces every `from` in `s` with `to` (malloc'd). */
static char *replace_all(const char *s, const char *from, const char *to) {
  size_t fl = strlen(from), tl = strlen(to), count = 0;
  for (const char *p = strstr(s, from); p; p = strstr(p + fl, from)) count++;
  char *out = malloc(strlen(s) + count * tl + 1), *o = out;
  for (const char *p = s;;) {
    const char *q = strstr(p, from);
    if (!q) {
      strcpy(o, p);
      break;
    }
    memcpy(o, p, (size_t)(q - p));
    o += q - p;
    memcpy(o, to, tl);
    o += tl;
    p = q + fl;
  }
  return out;
}

static void same_kernels(const cucore_binary *a, const cucore_binary *b, const char *what) {
  cucore_binary_info ia, ib;
  assert_ok(cucore_binary_get_info(a, &ia));
  assert_ok(cucore_binary_get_info(b, &ib));
  if (ia.kernel_count != ib.kernel_count)
    fail_msg("%s: %u kernels, the clean text has %u", what, ib.kernel_count, ia.kernel_count);
  for (uint32_t i = 0; i < ia.kernel_count; i++) {
    const cucore_kernel_info *x, *y;
    assert_ok(cucore_binary_get_kernel(a, i, &x));
    assert_ok(cucore_binary_get_kernel(b, i, &y));
    assert_string_equal(x->name, y->name);
    assert_int_equal(x->param_count, y->param_count);
    if (x->param_count && memcmp(x->params, y->params, x->param_count * sizeof *x->params))
      fail_msg("%s: the parameters of %s differ", what, x->name);
    assert_memory_equal(x->maxntid, y->maxntid, sizeof x->maxntid);
    assert_memory_equal(x->reqntid, y->reqntid, sizeof x->reqntid);
    assert_memory_equal(x->cluster_dims, y->cluster_dims, sizeof x->cluster_dims);
    assert_int_equal(x->min_blocks_per_sm, y->min_blocks_per_sm);
    assert_int_equal(x->max_registers, y->max_registers);
  }
}

/* Comments, CRLF, tabs, continuations and spacing do not change what is read. */
static void whitespace_and_comments_do_not_matter(void **state) {
  (void)state;
  char *path = all_ptx(90);
  char *text = (char *)rs_read(path, NULL);
  char *dpath = rs_printf("%s/directives.ptx", CUCORE_TEST_KERNEL_DIR);
  char *dtext = (char *)rs_read(dpath, NULL);
  const char *sources[] = {text, dtext};
  for (int s = 0; s < 2; s++) {
    cucore_binary *clean;
    assert_ok(cucore_binary_open(sources[s], strlen(sources[s]), CUCORE_CODE_PTX, 90, &clean));
    struct {
      const char *what, *from, *to;
    } variants[] = {
        {"CRLF line ends", "\n", "\r\n"},
        {"comments before commas", ",", " /* , */\t,"},
        {"comments at line ends", "\n", " // ) { , [\n"},
        {"continuations", ".param", "\\\n.param"},
        {"tabs as spaces", "\t", "    "},
        {"spaces in brackets", "[", " [ "},
        {"newlines after commas", ",", ",\n\n"},
    };
    for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
      char *t = replace_all(sources[s], variants[v].from, variants[v].to);
      cucore_binary *b = NULL;
      cucore_status st = cucore_binary_open(t, strlen(t), CUCORE_CODE_PTX, 90, &b);
      if (st != CUCORE_OK) fail_msg("%s: %s", variants[v].what, cucore_last_error());
      same_kernels(clean, b, variants[v].what);
      cucore_binary_destroy(b);
      free(t);
    }
    cucore_binary_destroy(clean);
  }
  free(dtext);
  free(dpath);
  free(text);
  free(path);
}

/* Malformed PTX: CUCORE_PARSE_ERROR naming the line. */
static void malformed_ptx_names_the_line(void **state) {
  (void)state;
  const char *head = ".version 8.0\n.target sm_80\n.address_size 64\n\n";
  struct {
    const char *entry; /* the text after the header; the error is on its first line */
    const char *says;
  } cases[] = {
      {".visible .entry k(.param .u32 a {\n ret;\n}\n", "unexpected `{`"},
      {".visible .entry k(.param .u32 a .param .u32 b)\n{\n ret;\n}\n", "after the name"},
      {".visible .entry k(.param .u32 a; .param .u32 b)\n{\n ret;\n}\n", "unexpected `;`"},
      {".visible .entry k(.param .align 3 .b8 a[4])\n{\n ret;\n}\n", "power of two"},
      {".visible .entry k(.param .b8 a[0])\n{\n ret;\n}\n", "array size"},
      {".visible .entry k(.param .b8 a[40000])\n{\n ret;\n}\n", "32764"},
      {".visible .entry k(.param .b8 a[20000], .param .b8 b[20000])\n{\n ret;\n}\n", "32764"},
      {".visible .entry k(.param .q32 a)\n{\n ret;\n}\n", "no type"},
      {".visible .entry k(.param .u32)\n{\n ret;\n}\n", "no name"},
      {".visible .entry k(.param .u32 a[])\n{\n ret;\n}\n", "unsized"},
      {".visible .entry (.param .u32 a)\n{\n ret;\n}\n", "kernel name"},
      {".visible .entry k(.param .u32 a)\n.maxntid x\n{\n ret;\n}\n", "expected a number"},
      {".visible .entry k(.param .u32 a)\n{\n ret;\n", "no closing"},
      {".visible .entry k(.param .u32 a)\n", "no body"},
  };
  unsigned line = 1;
  for (const char *c = head; *c; c++) line += *c == '\n';
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *t = rs_printf("%s%s", head, cases[i].entry);
    cucore_binary *b = (cucore_binary *)1;
    assert_status(cucore_binary_open(t, strlen(t), CUCORE_CODE_PTX, 0, &b), CUCORE_PARSE_ERROR);
    assert_null(b);
    /* the error is reported on the entry's line or a later one of it */
    char where[32];
    unsigned entry_lines = 0;
    for (const char *c = cases[i].entry; *c; c++) entry_lines += *c == '\n';
    int found = 0;
    for (unsigned l = line; l <= line + entry_lines; l++) {
      snprintf(where, sizeof where, "PTX line %u:", l);
      if (strstr(cucore_last_error(), where)) found = 1;
    }
    if (!found) fail_msg("case %zu: no line number in: %s", i, cucore_last_error());
    assert_contains(cucore_last_error(), cases[i].says);
    free(t);
  }
  /* A declaration without a body is not a kernel; text with no .entry has none. */
  char *decl = rs_printf("%s.extern .entry k(.param .u32 a);\n", head);
  cucore_binary *b;
  assert_ok(cucore_binary_open(decl, strlen(decl), CUCORE_CODE_PTX, 0, &b));
  cucore_binary_info info;
  assert_ok(cucore_binary_get_info(b, &info));
  assert_int_equal(info.kernel_count, 0);
  const cucore_kernel_info *k;
  assert_status(cucore_binary_find_kernel(b, "k", &k), CUCORE_NOT_FOUND);
  assert_contains(cucore_last_error(), "holds no kernels");
  cucore_binary_destroy(b);
  free(decl);
}

/* An .entry's parameter list grows to 16384 parameters and no further (PTX_PARAMS_MAX). */
static void parameter_count_limit(void **state) {
  (void)state;
  for (unsigned n = 16384; n <= 16385; n++) {
    size_t cap = 128 + (size_t)n * 24, len = 0;
    char *t = malloc(cap);
    assert_non_null(t);
    len += (size_t)snprintf(t + len, cap - len,
                            ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(");
    for (unsigned i = 0; i < n; i++)
      len += (size_t)snprintf(t + len, cap - len, "%s.param .b8 p%u", i ? ", " : "", i);
    len += (size_t)snprintf(t + len, cap - len, ")\n{\n ret;\n}\n");
    assert_true(len < cap);
    cucore_binary *b = NULL;
    cucore_status st = cucore_binary_open(t, len, CUCORE_CODE_PTX, 0, &b);
    if (n == 16384) {
      assert_ok(st);
      const cucore_kernel_info *k;
      assert_ok(cucore_binary_find_kernel(b, "k", &k));
      assert_int_equal(k->param_count, n);
      assert_int_equal(k->param_bytes, n);
      cucore_binary_destroy(b);
    } else {
      assert_status(st, CUCORE_PARSE_ERROR);
      assert_null(b);
      assert_contains(cucore_last_error(), "has more parameters than fit in 32764 bytes");
    }
    free(t);
  }
}

int main(void) {
  rs_require_tools();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_prestate(ptx_matches_source, (void *)"75"),
      cmocka_unit_test_prestate(ptx_matches_source, (void *)"90"),
      cmocka_unit_test_prestate(ptx_offsets_match_ptxas, (void *)"75"),
      cmocka_unit_test_prestate(ptx_offsets_match_ptxas, (void *)"90"),
      cmocka_unit_test(directives_ptx),
      cmocka_unit_test(whitespace_and_comments_do_not_matter),
      cmocka_unit_test(malformed_ptx_names_the_line),
      cmocka_unit_test(parameter_count_limit),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
