/* test_reader_hostile.c -- malformed input: every prefix of real cubins, fatbins and PTX,
 * every byte of a cubin flipped, random bit flips, and hand-made corruptions of each ELF,
 * attribute and fatbin field the reader trusts. Each returns a clear status, never a crash;
 * run under ASan/UBSan to prove the "never reads out of bounds" part. */
#include "reader_support.h"

#include "binary/binary.h"

static unsigned char *copy_of(const unsigned char *d, size_t n) {
  unsigned char *c = malloc(n ? n : 1);
  memcpy(c, d, n);
  return c;
}

static void put16(unsigned char *p, uint64_t v) {
  p[0] = (unsigned char)v, p[1] = (unsigned char)(v >> 8);
}
static void put32(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static void put64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static uint64_t get64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
  return v;
}
static unsigned get16(const unsigned char *p) { return (unsigned)(p[0] | p[1] << 8); }

/* Opens and, when it worked, touches every accessor; returns the status. */
static cucore_status open_all(const void *d, size_t n, cucore_code_type type, int arch) {
  cucore_binary *bin = NULL;
  cucore_status st = cucore_binary_open(d, n, type, arch, &bin);
  if (st != CUCORE_OK) {
    if (bin) fail_msg("a failed open left a handle");
    if (!cucore_last_error()[0]) fail_msg("status %s with no message", cucore_status_name(st));
    return st;
  }
  cucore_binary_info info;
  assert_ok(cucore_binary_get_info(bin, &info));
  for (uint32_t i = 0; i < info.kernel_count; i++) {
    const cucore_kernel_info *k, *f;
    assert_ok(cucore_binary_get_kernel(bin, i, &k));
    assert_ok(cucore_binary_find_kernel(bin, k->name, &f));
    for (uint32_t p = 0; p < k->param_count; p++)
      assert_true(k->params[p].offset + (uint64_t)k->params[p].size <= k->param_bytes);
  }
  for (uint32_t i = 0; i < info.fatbin_entry_count; i++) {
    cucore_fatbin_entry e;
    assert_ok(cucore_binary_get_fatbin_entry(bin, i, &e));
    size_t sz = 0;
    if (e.size < (1u << 24)) {
      void *buf = malloc(e.size ? e.size : 1);
      cucore_binary_fatbin_extract(bin, i, buf, e.size, &sz);
      free(buf);
    }
  }
  cucore_binary_destroy(bin);
  return CUCORE_OK;
}

static char *small_cubin(const char *arch) {
  char *name = rs_printf("params_%s.cubin", arch);
  char *p = rs_build(name, "nvcc -cubin -gencode arch=compute_%s,code=%s -o \"$OUT\" params.cu",
                     arch + 3, arch);
  free(name);
  return p;
}

/* Every prefix of real files. */
static void truncated_files(void **state) {
  (void)state;
  char *cubin = small_cubin("sm_80");
  char *flags = strdup(
      "-gencode arch=compute_80,code=[sm_80,compute_80] -gencode arch=compute_90,code=sm_90");
  char *fatbin = rs_build("params_trunc.fatbin", "nvcc -fatbin %s -o \"$OUT\" params.cu", flags);
  char *ptx = rs_build("params_compute_80.ptx", "nvcc -ptx -arch=compute_80 -o \"$OUT\" params.cu");
  const char *files[] = {cubin, fatbin, ptx};
  for (int f = 0; f < 3; f++) {
    size_t n;
    unsigned char *d = rs_read(files[f], &n);
    size_t step = f == 2 ? 37 : 1; /* PTX: each parse reads the whole prefix */
    for (size_t len = 0; len < n; len += (f == 2 && len > 512) ? step : 1) {
      unsigned char *c = copy_of(d, len); /* a buffer of exactly len bytes, for ASan */
      cucore_status st = open_all(c, len, CUCORE_CODE_AUTO, 0);
      int code = CUCORE_CODE(st);
      if (f < 2 && code == CUCORE_OK && len < n)
        fail_msg("%s cut to %zu of %zu bytes opened", files[f], len, n);
      if (code != CUCORE_OK && code != CUCORE_INVALID_BINARY && code != CUCORE_PARSE_ERROR &&
          code != CUCORE_NOT_FOUND)
        fail_msg("%s cut to %zu bytes: %s: %s", files[f], len, cucore_status_name(st),
                 cucore_last_error());
      free(c);
    }
    free(d);
  }
  free(flags);
  free(ptx);
  free(fatbin);
  free(cubin);
}

/* Every byte of a cubin inverted in turn, then random bit flips; the sm_120 cubin has the
 * extra Mercury sections. */
static void flipped_bytes(void **state) {
  (void)state;
  const char *arches[] = {"sm_80", "sm_120"};
  for (int a = 0; a < 2; a++) {
    char *path = small_cubin(arches[a]);
    size_t n;
    unsigned char *d = rs_read(path, &n);
    unsigned char *c = copy_of(d, n);
    unsigned ok = 0, failed = 0;
    for (size_t i = 0; i < n; i++) {
      c[i] ^= 0xff;
      cucore_status st = open_all(c, n, CUCORE_CODE_AUTO, 0);
      st == CUCORE_OK ? ok++ : failed++;
      c[i] = d[i];
    }
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    for (int round = 0; round < 3000; round++) {
      int flips = 1 + round % 8;
      for (int k = 0; k < flips; k++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        size_t pos = (size_t)(seed >> 33) % n;
        c[pos] ^= (unsigned char)(1u << ((seed >> 20) & 7));
      }
      cucore_status st = open_all(c, n, CUCORE_CODE_AUTO, 0);
      st == CUCORE_OK ? ok++ : failed++;
      memcpy(c, d, n);
    }
    /* both outcomes happen: most bytes are code, the rest is structure */
    assert_true(ok > 0 && failed > 0);
    free(c);
    free(d);
    free(path);
  }
}

typedef struct elf_file {
  unsigned char *d;
  size_t n;
  rs_elf elf;
  uint64_t shoff;
} elf_file;

static void load_elf(elf_file *f, const char *arch) {
  char *path = small_cubin(arch);
  f->d = rs_read(path, &f->n);
  rs_readelf(path, &f->elf);
  f->shoff = get64(f->d + 0x28);
  free(path);
}

static unsigned char *section_header(elf_file *f, unsigned char *c, unsigned idx) {
  return c + f->shoff + (uint64_t)idx * 64;
}

/* Expects `st` to be INVALID_BINARY whose message contains `needle`. */
static void expect(cucore_status st, const char *needle) {
  if (CUCORE_CODE(st) != CUCORE_INVALID_BINARY)
    fail_msg("expected CUCORE_INVALID_BINARY (%s), got %s: %s", needle, cucore_status_name(st),
             cucore_last_error());
  assert_contains(cucore_last_error(), needle);
}

/* Header fields out of range, each alone. */
static void corrupted_elf_header(const elf_file *f) {
  unsigned char *c;
  struct {
    unsigned at, width;
    uint64_t value;
    const char *says;
  } header_cases[] = {
      {0x28, 8, (uint64_t)f->n + 100, "starts past the end of the file"},
      {0x28, 8, 0, "no section table"},
      {0x3c, 2, 0xffff, "extends past the end of the file"},
      {0x3e, 2, 0xfff0, "section-name table index"},
      {0x3a, 2, 32, "smaller than the 64 bytes"},
      {0x04, 1, 1, "only 64-bit ELF"},
      {0x05, 1, 2, "only little-endian"},
      {0x10, 2, 3, "expected ET_EXEC (2) or ET_REL (1)"},
  };
  for (size_t i = 0; i < sizeof header_cases / sizeof header_cases[0]; i++) {
    c = copy_of(f->d, f->n);
    unsigned char *p = c + header_cases[i].at;
    if (header_cases[i].width == 8) put64(p, header_cases[i].value);
    if (header_cases[i].width == 2) put16(p, header_cases[i].value);
    if (header_cases[i].width == 1) *p = (unsigned char)header_cases[i].value;
    expect(open_all(c, f->n, CUCORE_CODE_CUBIN, 0), header_cases[i].says);
    free(c);
  }
}

/* The symbol table's entry size and string table, a kernel symbol's name, a section's name. */
static void corrupted_symbols(elf_file *f, const rs_sec *info) {
  unsigned char *c = copy_of(f->d, f->n);
  char *msg;
  const rs_sec *symtab = rs_elf_section(&f->elf, ".symtab"),
               *strtab = rs_elf_section(&f->elf, ".strtab");
  assert_non_null(symtab);
  assert_non_null(strtab);
  put64(section_header(f, c, symtab->idx) + 0x38, 23);
  expect(open_all(c, f->n, CUCORE_CODE_AUTO, 0), "symbol entry size 23");
  memcpy(c, f->d, f->n);
  put32(section_header(f, c, symtab->idx) + 0x28, 9999);
  expect(open_all(c, f->n, CUCORE_CODE_AUTO, 0), "string table");
  /* a kernel symbol's name outside the string table */
  memcpy(c, f->d, f->n);
  int done = 0;
  for (uint64_t s = 0; s < symtab->size / 24 && !done; s++) {
    unsigned char *sym = c + symtab->off + s * 24;
    if ((sym[4] & 0xf) == 2 && (sym[5] & 0x10)) {
      put32(sym, strtab->size + 5);
      msg = rs_printf("symbol %llu: its name (offset %llu)", (unsigned long long)s,
                      strtab->size + 5);
      expect(open_all(c, f->n, CUCORE_CODE_AUTO, 0), msg);
      free(msg);
      done = 1;
    }
  }
  assert_true(done);
  /* a section name outside the name table */
  memcpy(c, f->d, f->n);
  put32(section_header(f, c, info->idx), 0x7ffffff0);
  msg = rs_printf("section %u: its name (offset %u)", info->idx, 0x7ffffff0);
  expect(open_all(c, f->n, CUCORE_CODE_AUTO, 0), msg);
  free(msg);
  free(c);
}

static void corrupted_elf_structure(void **state) {
  (void)state;
  elf_file f;
  load_elf(&f, "sm_80");
  const rs_sec *info = NULL;
  for (unsigned i = 0; i < f.elf.nsec; i++)
    if (strncmp(f.elf.sec[i].name, ".nv.info.", 9) == 0) {
      info = &f.elf.sec[i];
      break;
    }
  assert_non_null(info);
  unsigned char *c;
  char *msg;

  /* a section that extends past the end of the file */
  c = copy_of(f.d, f.n);
  uint64_t off = f.n - info->size / 2;
  put64(section_header(&f, c, info->idx) + 0x18, off);
  msg = rs_printf("section %u (%s) extends past the end of the file: offset %llu + size %llu > "
                  "%zu bytes",
                  info->idx, info->name, (unsigned long long)off, info->size, f.n);
  expect(open_all(c, f.n, CUCORE_CODE_AUTO, 0), msg);
  free(msg);
  /* a size whose sum with the offset overflows 64 bits */
  memcpy(c, f.d, f.n);
  put64(section_header(&f, c, info->idx) + 0x20, UINT64_MAX);
  expect(open_all(c, f.n, CUCORE_CODE_AUTO, 0), "extends past the end of the file");
  free(c);

  corrupted_elf_header(&f);
  /* another machine, given as a cubin */
  c = copy_of(f.d, f.n);
  put16(c + 0x12, 62);
  expect(open_all(c, f.n, CUCORE_CODE_CUBIN, 0), "e_machine is 62");
  expect(open_all(c, f.n, CUCORE_CODE_AUTO, 0), "no device code");
  free(c);

  corrupted_symbols(&f, info);
  free(f.d);
}

/* The kernels of a binary, one name after another, for comparing two opens. */
static char *kernel_names(const void *d, size_t n) {
  cucore_binary *bin;
  assert_ok(cucore_binary_open(d, n, CUCORE_CODE_AUTO, 0, &bin));
  cucore_binary_info info;
  assert_ok(cucore_binary_get_info(bin, &info));
  char *names = rs_printf("%u:", info.kernel_count);
  for (uint32_t i = 0; i < info.kernel_count; i++) {
    const cucore_kernel_info *k;
    assert_ok(cucore_binary_get_kernel(bin, i, &k));
    char *more = rs_printf("%s %s/%u", names, k->name, k->param_count);
    free(names);
    names = more;
  }
  cucore_binary_destroy(bin);
  return names;
}

/* ELF extended section numbering (e_shnum 0 and e_shstrndx SHN_XINDEX, the real values in
 * section 0's sh_size and sh_link) reads as the plain form does; the program header table and
 * its segments are checked to lie inside the file. */
static void elf_numbering_and_segments(void **state) {
  (void)state;
  elf_file f;
  load_elf(&f, "sm_80");
  char *want = kernel_names(f.d, f.n);
  unsigned shnum = get16(f.d + 0x3c), shstrndx = get16(f.d + 0x3e);
  unsigned char *c = copy_of(f.d, f.n);
  put16(c + 0x3c, 0);
  put64(section_header(&f, c, 0) + 0x20, shnum);
  put16(c + 0x3e, 0xffff);
  put32(section_header(&f, c, 0) + 0x28, shstrndx);
  char *got = kernel_names(c, f.n);
  assert_string_equal(got, want);
  free(got);
  /* extended numbering that counts no sections */
  put64(section_header(&f, c, 0) + 0x20, 0);
  expect(open_all(c, f.n, CUCORE_CODE_CUBIN, 0), "the section table is empty");
  free(c);

  uint64_t phoff = get64(f.d + 0x20);
  unsigned phnum = get16(f.d + 0x38);
  if (phnum > 0) {
    c = copy_of(f.d, f.n);
    put64(c + phoff + 8, (uint64_t)f.n - 1); /* p_offset of segment 0 */
    put64(c + phoff + 0x20, 2);              /* p_filesz */
    expect(open_all(c, f.n, CUCORE_CODE_CUBIN, 0), "segment 0 extends past the end of the file");
    memcpy(c, f.d, f.n);
    put16(c + 0x36, 40); /* e_phentsize under the 56 bytes of an Elf64_Phdr */
    expect(open_all(c, f.n, CUCORE_CODE_CUBIN, 0), "has entries under 56 bytes");
    memcpy(c, f.d, f.n);
    put64(c + 0x20, (uint64_t)f.n); /* e_phoff at the end of the file */
    expect(open_all(c, f.n, CUCORE_CODE_CUBIN, 0), "the program header table");
    free(c);
  }
  free(want);
  free(f.d);
}

/* Attribute records of .nv.info.<kernel>: lengths, formats, ordinals, offsets. */
static void corrupted_attributes(void **state) {
  (void)state;
  elf_file f;
  load_elf(&f, "sm_80");
  /* a kernel with at least two parameters */
  const rs_sec *info = NULL;
  rs_kparams kp;
  for (unsigned i = 0; i < f.elf.nsec && !info; i++)
    if (strncmp(f.elf.sec[i].name, ".nv.info.", 9) == 0) {
      rs_kernel_params(f.d, f.n, &f.elf.sec[i], &kp);
      if (kp.n >= 2) info = &f.elf.sec[i];
    }
  assert_non_null(info);
  const char *kname = info->name + 9;
  /* record positions, walked here */
  uint64_t kparam_at[8];
  unsigned nk = 0;
  uint64_t first4 = UINT64_MAX, skippable = UINT64_MAX;
  for (uint64_t p = 0; p + 4 <= info->size;) {
    const unsigned char *r = f.d + info->off + p;
    unsigned plen = r[0] == 4 ? get16(r + 2) : 0;
    if (r[0] == 4 && first4 == UINT64_MAX) first4 = p;
    if (r[1] == 0x17 && nk < 8) kparam_at[nk++] = p;
    if (r[1] == 0x1c) skippable = p; /* EXIT_INSTR_OFFSETS: not used by the reader */
    p += 4 + plen;
  }
  assert_true(nk >= 2 && first4 != UINT64_MAX);
  unsigned char *c = copy_of(f.d, f.n);
  char *msg;

  /* a payload longer than the section */
  put16(c + info->off + first4 + 2, 0xffff);
  msg = rs_printf("section %u (%s): ", info->idx, info->name);
  expect(open_all(c, f.n, CUCORE_CODE_AUTO, 0), msg);
  free(msg);
  assert_contains(cucore_last_error(), "declares 65535 bytes of data");
  /* an unknown record format */
  memcpy(c, f.d, f.n);
  c[info->off + first4] = 9;
  msg = rs_printf("unknown attribute format 9 at offset %llu", (unsigned long long)first4);
  expect(open_all(c, f.n, CUCORE_CODE_AUTO, 0), msg);
  free(msg);
  /* a parameter ordinal out of range */
  memcpy(c, f.d, f.n);
  put16(c + info->off + kparam_at[0] + 4 + 4, 200);
  msg = rs_printf("kernel `%s`: EIATTR_KPARAM_INFO describes parameter ordinal 200", kname);
  expect(open_all(c, f.n, CUCORE_CODE_AUTO, 0), msg);
  free(msg);
  /* the same ordinal twice */
  memcpy(c, f.d, f.n);
  unsigned ord = get16(f.d + info->off + kparam_at[0] + 8);
  put16(c + info->off + kparam_at[1] + 8, ord);
  expect(open_all(c, f.n, CUCORE_CODE_AUTO, 0), "described twice");
  /* a parameter past the end of the parameter buffer */
  memcpy(c, f.d, f.n);
  put16(c + info->off + kparam_at[0] + 10, 0xfff0);
  expect(open_all(c, f.n, CUCORE_CODE_AUTO, 0), "extends past the");
  /* a record too short for what it carries */
  memcpy(c, f.d, f.n);
  put16(c + info->off + kparam_at[0] + 2, 4);
  expect(open_all(c, f.n, CUCORE_CODE_AUTO, 0), "it needs at least 12");
  /* an attribute code the reader does not know is skipped */
  if (skippable != UINT64_MAX) {
    memcpy(c, f.d, f.n);
    c[info->off + skippable + 1] = 0x7e;
    assert_ok(open_all(c, f.n, CUCORE_CODE_AUTO, 0));
  }
  /* a truncated record at the end of the section */
  memcpy(c, f.d, f.n);
  put64(section_header(&f, c, info->idx) + 0x20, info->size - 2);
  msg = rs_printf("section %u (%s): ", info->idx, info->name);
  expect(open_all(c, f.n, CUCORE_CODE_AUTO, 0), msg);
  free(msg);
  /* a section of 2 bytes: a record cannot even start */
  memcpy(c, f.d, f.n);
  put64(section_header(&f, c, info->idx) + 0x20, 2);
  expect(open_all(c, f.n, CUCORE_CODE_AUTO, 0), "2 stray bytes at offset 0");
  free(c);
  free(f.d);
}

/* Fatbin containers and entries. */
/* Compressed entries of fatbin `name` (d, n bytes; its container header `hsize` bytes), each
 * given an unbelievable size, both codecs at once, or broken data; c is a scratch copy. */
static void corrupted_compressed_entries(const char *name, const unsigned char *d, size_t n,
                                         unsigned hsize, unsigned char *c) {
  cc_fatbin fb;
  cc_begin();
  assert_ok(cc_fatbin_parse(d, n, 0, n, &fb));
  for (uint32_t i = 0; i < fb.count; i++) {
    const cucore_fatbin_entry *e = &fb.entries[i];
    if (strcmp(e->compression, "none") == 0) continue;
    uint64_t hdr = hsize; /* its header: after the headers and data of those before it */
    for (uint32_t j = 0; j < i; j++) {
      unsigned hs = (unsigned)(d[hdr + 4] | d[hdr + 5] << 8);
      hdr += hs + get64(d + hdr + 8);
    }
    memcpy(c, d, n);
    put64(c + hdr + 56, (uint64_t)1 << 39);
    expect(open_all(c, n, CUCORE_CODE_AUTO, 0), "is not believable");
    memcpy(c, d, n);
    put64(c + hdr + 40, get64(d + hdr + 40) | 0x2000 | 0x8000);
    expect(open_all(c, n, CUCORE_CODE_AUTO, 0), "both LZ4- and zstd-compressed");
    /* broken compressed data: extraction fails with the entry named */
    memcpy(c, d, n);
    for (uint64_t b = 0; b < 16 && b < e->stored_size; b++) c[e->offset + b] ^= 0x5a;
    cucore_binary *bin = NULL;
    cucore_status st = cucore_binary_open(c, n, CUCORE_CODE_AUTO, 0, &bin);
    if (st == CUCORE_OK) {
      size_t sz;
      void *buf = malloc(e->size);
      st = cucore_binary_fatbin_extract(bin, i, buf, e->size, &sz);
      free(buf);
      cucore_binary_destroy(bin);
    }
    if (st == CUCORE_OK) fail_msg("%s entry %u: broken compressed data was accepted", name, i);
    assert_contains(cucore_last_error(), e->arch_name);
  }
  cc_fatbin_free(&fb);
}

static void corrupted_fatbins(void **state) {
  (void)state;
  const char *modes[] = {"--no-compress", "--compress-mode=speed", "--compress-mode=size"};
  const char *names[] = {"hostile_plain.fatbin", "hostile_lz4.fatbin", "hostile_zstd.fatbin"};
  for (int m = 0; m < 3; m++) {
    char *path = rs_build(names[m],
                          "nvcc -fatbin %s -gencode arch=compute_80,code=[sm_80,compute_80] -o "
                          "\"$OUT\" params.cu",
                          modes[m]);
    size_t n;
    unsigned char *d = rs_read(path, &n);
    assert_ok(open_all(d, n, CUCORE_CODE_AUTO, 0));
    unsigned hsize = get16(d + 6);
    uint64_t e0 = hsize; /* the first entry */
    unsigned char *c = copy_of(d, n);
    char *msg;
    /* the container claims more than there is */
    put64(c + 8, n);
    expect(open_all(c, n, CUCORE_CODE_AUTO, 0), "extends past the end of the input");
    /* the container header size */
    memcpy(c, d, n);
    put16(c + 6, 4);
    expect(open_all(c, n, CUCORE_CODE_AUTO, 0), "header size 4 must be at least 16");
    /* an entry header size too small */
    memcpy(c, d, n);
    put32(c + e0 + 4, 8);
    msg = rs_printf("entry 0 at offset %llu: header size 8", (unsigned long long)e0);
    expect(open_all(c, n, CUCORE_CODE_AUTO, 0), msg);
    free(msg);
    /* an entry's data past its container */
    memcpy(c, d, n);
    put64(c + e0 + 8, (uint64_t)1 << 40);
    expect(open_all(c, n, CUCORE_CODE_AUTO, 0), "extends past the end of its container");
    /* junk after the container */
    unsigned char *longer = malloc(n + 24);
    memcpy(longer, d, n);
    memset(longer + n, 0, 24);
    assert_ok(open_all(longer, n + 24, CUCORE_CODE_AUTO, 0)); /* zero padding is fine */
    put32(longer + n + 8, 0x12345678);
    msg = rs_printf("expected the container magic 0xBA55ED50 at offset %zu, found 0x12345678",
                    n + 8);
    expect(open_all(longer, n + 24, CUCORE_CODE_AUTO, 0), msg);
    free(msg);
    free(longer);
    /* compressed entries: an unbelievable size, both codecs at once, broken data */
    corrupted_compressed_entries(names[m], d, n, hsize, c);
    free(c);
    free(d);
    free(path);
  }
}

/* PTX that is not PTX. */
static void hostile_ptx(void **state) {
  (void)state;
  size_t big = 1 << 20;
  char *t = malloc(big + 64);
  /* a million open braces: bodies are skipped by counting, not by recursion */
  strcpy(t, ".version 8.0\n.entry k()\n");
  size_t h = strlen(t);
  memset(t + h, '{', big);
  t[h + big] = '\0';
  assert_status(cucore_binary_open(t, h + big, CUCORE_CODE_PTX, 0, &(cucore_binary *){NULL}),
                CUCORE_PARSE_ERROR);
  /* a very long name and very many parameters */
  strcpy(t, ".version 8.0\n.entry ");
  h = strlen(t);
  memset(t + h, 'n', 100000);
  strcpy(t + h + 100000, "(");
  size_t len = strlen(t);
  for (int i = 0; i < 20000 && len + 32 < big; i++)
    len += (size_t)sprintf(t + len, ".param .u8 p%d,", i);
  strcpy(t + len - 1, ")\n{\n}\n");
  cucore_binary *bin = NULL;
  assert_status(cucore_binary_open(t, strlen(t), CUCORE_CODE_PTX, 0, &bin), CUCORE_PARSE_ERROR);
  assert_contains(cucore_last_error(), "32764");
  /* random printable text */
  uint64_t seed = 42;
  const char alphabet[] = ".param entry{}()[],;/*\"\\\n u32 b8 align 16 version target sm_90 x";
  for (int round = 0; round < 2000; round++) {
    size_t n = (size_t)(round % 300) + 1;
    for (size_t i = 0; i < n; i++) {
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      t[i] = alphabet[(seed >> 33) % (sizeof alphabet - 1)];
    }
    memcpy(t, ".version 8.0\n", 13 < n ? 13 : n);
    int code = CUCORE_CODE(open_all(t, n, CUCORE_CODE_PTX, 0));
    if (code != CUCORE_OK && code != CUCORE_PARSE_ERROR)
      fail_msg("random PTX: %s", cucore_last_error());
  }
  free(t);
}

/* An sm_90 executable's ELF header: CUDA's ABI, the section table at `off_sh` with `nsec`
 * entries, the section names in section 1. */
static void put_elf_header(unsigned char *d, size_t off_sh, unsigned nsec) {
  memcpy(d,
         "\x7f"
         "ELF\x02\x01\x01\x41\x08",
         9);
  put16(d + 0x10, 2);
  put16(d + 0x12, 190);
  put32(d + 0x14, 1);
  put32(d + 0x30, 90u << 8);
  put64(d + 0x28, off_sh);
  put16(d + 0x34, 64);
  put16(d + 0x3a, 64);
  put16(d + 0x3c, nsec);
  put16(d + 0x3e, 1);
}

/* A minimal cubin-shaped ELF built here with `nk` kernel symbols. Names: with `overlapping`,
 * the kernel names start at offsets 1, 2, ... of one string of `name_len` 'A's (each a
 * suffix of the one before), else each is its own "kNNNNN"; with `same_names` every symbol
 * names the same string. With `info_len`, each kernel has a .nv.info.<name> section, and all
 * of them cover the same `info_len` bytes of (harmless) attribute records. */
static unsigned char *build_elf(unsigned nk, int overlapping, unsigned name_len, int same_names,
                                unsigned info_len, size_t *size) {
  size_t strcap = overlapping ? (size_t)name_len + 2 : (size_t)nk * 8 + 2;
  char *str = calloc(strcap, 1);
  unsigned *name_off = malloc(nk * sizeof *name_off);
  size_t strlen_ = 1;
  if (overlapping) {
    memset(str + 1, 'A', name_len);
    strlen_ = (size_t)name_len + 2;
    for (unsigned k = 0; k < nk; k++) name_off[k] = same_names ? 1 : 1 + k % name_len;
  } else {
    for (unsigned k = 0; k < nk; k++) {
      name_off[k] = same_names ? 1 : (unsigned)strlen_;
      if (!same_names || k == 0) strlen_ += (size_t)sprintf(str + strlen_, "k%05u", k) + 1;
    }
  }
  size_t shcap = 64 + (info_len ? (size_t)nk * 24 : 0);
  char *shstr = calloc(shcap, 1);
  size_t shlen = 1;
  unsigned sh_names[3];
  const char *fixed[3] = {".shstrtab", ".strtab", ".symtab"};
  for (int i = 0; i < 3; i++) {
    sh_names[i] = (unsigned)shlen;
    shlen += (size_t)sprintf(shstr + shlen, "%s", fixed[i]) + 1;
  }
  unsigned ninfo = info_len ? nk : 0;
  unsigned *info_names = malloc((ninfo + 1) * sizeof *info_names);
  for (unsigned k = 0; k < ninfo; k++) {
    info_names[k] = (unsigned)shlen;
    shlen += (size_t)sprintf(shstr + shlen, ".nv.info.%s", str + name_off[k]) + 1;
  }
  size_t symlen = (size_t)(nk + 1) * 24;
  size_t off_shstr = 64, off_str = off_shstr + shlen,
         off_sym = (off_str + strlen_ + 7) & ~(size_t)7;
  size_t off_info = off_sym + symlen, off_sh = (off_info + info_len + 7) & ~(size_t)7;
  unsigned nsec = 4 + ninfo;
  size_t n = off_sh + (size_t)nsec * 64;
  unsigned char *d = calloc(n, 1);
  put_elf_header(d, off_sh, nsec);
  memcpy(d + off_shstr, shstr, shlen);
  memcpy(d + off_str, str, strlen_);
  for (unsigned k = 0; k < nk; k++) {
    unsigned char *sym = d + off_sym + (size_t)(k + 1) * 24;
    put32(sym, name_off[k]);
    sym[4] = 0x12; /* STT_FUNC, STB_GLOBAL */
    sym[5] = 0x10; /* STO_CUDA_ENTRY */
  }
  for (unsigned i = 0; i + 4 <= info_len; i += 4) memcpy(d + off_info + i, "\x01\x2b\x00\x00", 4);
  struct {
    unsigned type;
    size_t off, size, entsize;
    unsigned link;
  } secs[4] = {{0, 0, 0, 0, 0},
               {3, off_shstr, shlen, 0, 0},
               {3, off_str, strlen_, 0, 0},
               {2, off_sym, symlen, 24, 2}};
  for (unsigned i = 0; i < nsec; i++) {
    unsigned char *h = d + off_sh + (size_t)i * 64;
    if (i < 4) {
      put32(h, i ? sh_names[i - 1] : 0);
      put32(h + 4, secs[i].type);
      put64(h + 0x18, secs[i].off);
      put64(h + 0x20, secs[i].size);
      put32(h + 0x28, secs[i].link);
      put64(h + 0x38, secs[i].entsize);
    } else {
      put32(h, info_names[i - 4]);
      put32(h + 4, 0x70000000);
      put64(h + 0x18, off_info);
      put64(h + 0x20, info_len);
    }
  }
  free(info_names);
  free(shstr);
  free(name_off);
  free(str);
  *size = n;
  return d;
}

/* Inputs built to make a reader spend time quadratic in their size are refused. */
static void quadratic_traps(void **state) {
  (void)state;
  size_t n;
  /* small ones open: 3 kernels with info sections (sharing 16 bytes: that much is allowed,
   * the total stays below the file's size), and 3 without */
  unsigned char *d = build_elf(3, 0, 0, 0, 16, &n);
  assert_ok(open_all(d, n, CUCORE_CODE_AUTO, 0));
  free(d);
  d = build_elf(3, 0, 0, 0, 0, &n);
  assert_ok(open_all(d, n, CUCORE_CODE_AUTO, 0));
  cucore_binary *bin;
  assert_ok(cucore_binary_open(d, n, CUCORE_CODE_AUTO, 0, &bin));
  const cucore_kernel_info *k;
  assert_ok(cucore_binary_find_kernel(bin, "k00002", &k));
  cucore_binary_destroy(bin);
  free(d);
  /* 20000 kernels whose .nv.info sections all cover the same 64 KiB (2 MB of file, 1.3 GB to
   * walk) */
  d = build_elf(20000, 0, 0, 0, 65536, &n);
  expect(open_all(d, n, CUCORE_CODE_AUTO, 0), "they overlap");
  free(d);
  /* 20000 names that are suffixes of one 20000-byte string: 200 MB of names in 0.5 MB */
  d = build_elf(20000, 1, 20000, 0, 0, &n);
  expect(open_all(d, n, CUCORE_CODE_AUTO, 0), "overlap far more than any real file");
  free(d);
  /* every kernel with the same name */
  d = build_elf(2000, 0, 0, 1, 0, &n);
  expect(open_all(d, n, CUCORE_CODE_AUTO, 0), "is defined by two entry symbols");
  free(d);
}

/* Inputs the fuzzer once crashed the reader with (tests/data/reader_fuzz): each opens or
 * fails cleanly now. */
static void fuzz_regressions(void **state) {
  (void)state;
  char *dir = rs_printf("%s/reader_fuzz", CUCORE_TEST_DATA_DIR);
  char *cmd = rs_printf("ls '%s'", dir), *list = NULL;
  assert_int_equal(cucore_test_run(cmd, &list), 0);
  unsigned count = 0;
  for (char *name = strtok(list, "\n"); name; name = strtok(NULL, "\n")) {
    char *path = rs_printf("%s/%s", dir, name);
    size_t n;
    unsigned char *d = rs_read(path, &n);
    const cucore_code_type types[] = {CUCORE_CODE_AUTO, CUCORE_CODE_CUBIN, CUCORE_CODE_FATBIN,
                                      CUCORE_CODE_PTX, CUCORE_CODE_OBJECT};
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) open_all(d, n, types[t], 0);
    count++;
    free(d);
    free(path);
  }
  assert_true(count > 0);
  free(list);
  free(cmd);
  free(dir);
}

int main(void) {
  rs_require_tools();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(truncated_files),
      cmocka_unit_test(flipped_bytes),
      cmocka_unit_test(corrupted_elf_structure),
      cmocka_unit_test(corrupted_attributes),
      cmocka_unit_test(corrupted_fatbins),
      cmocka_unit_test(hostile_ptx),
      cmocka_unit_test(quadratic_traps),
      cmocka_unit_test(fuzz_regressions),
      cmocka_unit_test(elf_numbering_and_segments),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
