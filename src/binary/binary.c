/*
 * binary.c -- cucore_binary: opening cubins, fatbins, host objects and PTX; looking kernels up
 * by name; merging PTX parameter types into cubin kernels; the public API of the reader.
 */
#define _GNU_SOURCE
#include "binary/binary.h"
#include "binary/demangle.h"

#include <stdio.h>
#include <stdlib.h>

/* ---- merging PTX kinds into cubin kernels ---------------------------------------------------- */

static const cucore_kernel_info *find_exact(const cc_klist *l, const char *name) {
  for (uint32_t i = 0; i < l->count; i++)
    if (strcmp(l->items[i].name, name) == 0) return &l->items[i];
  return NULL;
}

/* 1 when `src` describes the same parameters as `dst` (count and sizes). */
static int same_layout(const cucore_kernel_info *dst, const cucore_kernel_info *src,
                       uint32_t *bad) {
  if (dst->param_count != src->param_count) {
    *bad = UINT32_MAX;
    return 0;
  }
  for (uint32_t i = 0; i < dst->param_count; i++)
    if (dst->params[i].size != src->params[i].size) {
      *bad = i;
      return 0;
    }
  return 1;
}

static void merge_one(cucore_kernel_info *dst, const cucore_kernel_info *src) {
  cucore_param_info *p = (cucore_param_info *)dst->params;
  for (uint32_t i = 0; i < dst->param_count; i++) {
    cucore_param_kind kind = src->params[i].kind;
    if (!(p[i].kind == CUCORE_PARAM_POINTER && kind == CUCORE_PARAM_INT)) p[i].kind = kind;
    p[i].align = src->params[i].align;
  }
  if (!dst->min_blocks_per_sm) dst->min_blocks_per_sm = src->min_blocks_per_sm;
}

static int cmp_kernel_names(const void *a, const void *b) {
  const cucore_kernel_info *const *x = a, *const *y = b;
  return strcmp((*x)->name, (*y)->name);
}

/* `src`'s kernels sorted by name, for lookups in O(log n). */
typedef struct name_sorted {
  const cucore_kernel_info **items;
  uint32_t count;
} name_sorted;

static const cucore_kernel_info *find_sorted(const name_sorted *ns, const char *name) {
  uint32_t lo = 0, hi = ns->count;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    int c = strcmp(name, ns->items[mid]->name);
    if (c == 0) return ns->items[mid];
    if (c < 0)
      hi = mid;
    else
      lo = mid + 1;
  }
  return NULL;
}

/* Merges the kinds and alignments of `src`'s kernels (parsed PTX) into `dst`'s of the same
 * name and layout. strict (cc_binary_attach_ptx): a kernel whose layout differs is an error
 * and failures are recorded; otherwise (a fatbin's own PTX, optional) it is skipped. */
static cucore_status attach(cc_klist *dst, const cc_klist *src, uint32_t *matched, int strict) {
  uint32_t n = 0;
  name_sorted ns = {cc_raw_malloc(((size_t)src->count + 1) * sizeof *ns.items), src->count};
  if (!ns.items) {
    if (!strict) return CUCORE_HOST_OUT_OF_MEMORY;
    return cc_fail(CUCORE_HOST_OUT_OF_MEMORY, "out of host memory matching PTX kernels");
  }
  for (uint32_t i = 0; i < src->count; i++) ns.items[i] = &src->items[i];
  qsort(ns.items, ns.count, sizeof *ns.items, cmp_kernel_names);
  cucore_status st = CUCORE_OK;
  for (uint32_t i = 0; i < dst->count && strict; i++) {
    const cucore_kernel_info *s = find_sorted(&ns, dst->items[i].name);
    uint32_t bad = 0;
    if (!s || same_layout(&dst->items[i], s, &bad)) continue;
    const cucore_kernel_info *d = &dst->items[i];
    if (bad == UINT32_MAX)
      st = cc_fail(CUCORE_INVALID_ARGUMENT,
                   "the PTX declares kernel `%.200s` with %u parameters, the binary's has %u: they "
                   "come from different code",
                   d->name, s->param_count, d->param_count);
    else
      st = cc_fail(
          CUCORE_INVALID_ARGUMENT,
          "the PTX declares parameter %u of kernel `%.200s` as %u bytes, the binary's is %u "
          "bytes: they come from different code",
          bad, d->name, s->params[bad].size, d->params[bad].size);
    free(ns.items);
    return st;
  }
  for (uint32_t i = 0; i < dst->count; i++) {
    const cucore_kernel_info *s = find_sorted(&ns, dst->items[i].name);
    uint32_t bad = 0;
    if (!s || !same_layout(&dst->items[i], s, &bad)) continue;
    merge_one(&dst->items[i], s);
    n++;
  }
  free(ns.items);
  if (matched) *matched = n;
  return CUCORE_OK;
}

/* ---- lookup by name -------------------------------------------------------------------------- */

/* The demangled name without its parameter list and without a leading "void ". */
static size_t short_name(const char *dem, const char **start) {
  const char *s = dem;
  if (strncmp(s, "void ", 5) == 0) s += 5;
  size_t n = strlen(s);
  /* the parameter list is the last top-level (...) */
  if (n && s[n - 1] == ')') {
    int depth = 0;
    for (size_t i = n; i-- > 0;) {
      if (s[i] == ')') depth++;
      if (s[i] == '(' && --depth == 0) {
        n = i;
        break;
      }
    }
  }
  *start = s;
  return n;
}

const cucore_kernel_info *cc_binary_lookup(const cucore_binary *bin, const char *name) {
  const cc_klist *l = &bin->kernels;
  const cucore_kernel_info *k = find_exact(l, name);
  if (k) return k;
  for (uint32_t i = 0; i < l->count; i++)
    if (l->items[i].demangled && strcmp(l->items[i].demangled, name) == 0) return &l->items[i];
  const cucore_kernel_info *found = NULL;
  size_t qlen = strlen(name);
  for (uint32_t i = 0; i < l->count; i++) {
    if (!l->items[i].demangled) continue;
    const char *s;
    size_t n = short_name(l->items[i].demangled, &s);
    int match = n == qlen && memcmp(s, name, n) == 0;
    if (!match && strncmp(l->items[i].demangled, "void ", 5) == 0) {
      /* "void f<int>(int*)" also answers to "f<int>(int*)" */
      match = strcmp(l->items[i].demangled + 5, name) == 0;
    }
    if (match) {
      if (found) return NULL; /* ambiguous */
      found = &l->items[i];
    }
  }
  return found;
}

/* Edit distance over the first 128 characters (enough to rank names). */
static unsigned distance(const char *a, const char *b) {
  size_t la = strnlen(a, 128), lb = strnlen(b, 128);
  unsigned row[129];
  for (size_t j = 0; j <= lb; j++) row[j] = (unsigned)j;
  for (size_t i = 1; i <= la; i++) {
    unsigned prev = row[0];
    row[0] = (unsigned)i;
    for (size_t j = 1; j <= lb; j++) {
      unsigned cur = row[j];
      unsigned sub = prev + (a[i - 1] != b[j - 1]);
      unsigned del = row[j] + 1, ins = row[j - 1] + 1;
      row[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
      prev = cur;
    }
  }
  return row[lb];
}

typedef struct ranked {
  unsigned d;
  uint32_t i;
} ranked;

static int cmp_ranked(const void *a, const void *b) {
  const ranked *x = a, *y = b;
  if (x->d != y->d) return x->d < y->d ? -1 : 1;
  return x->i < y->i ? -1 : x->i > y->i;
}

cucore_status cc_binary_fail_not_found(const cucore_binary *bin, const char *name) {
  const cc_klist *l = &bin->kernels;
  if (l->count == 0)
    return cc_fail(CUCORE_NOT_FOUND, "no kernel named `%s`: the %s holds no kernels", name,
                   cucore_code_type_name(bin->info.code_type));
  ranked *r = cc_raw_malloc((size_t)l->count * sizeof *r);
  char list[1024] = "";
  size_t used = 0;
  uint32_t shown = 0;
  if (r) {
    for (uint32_t i = 0; i < l->count; i++) {
      unsigned d = distance(name, l->items[i].name);
      if (l->items[i].demangled) {
        const char *s;
        size_t n = short_name(l->items[i].demangled, &s);
        char buf[129];
        snprintf(buf, sizeof buf, "%.*s", (int)(n < 128 ? n : 128), s);
        unsigned d2 = distance(name, buf);
        if (d2 < d) d = d2;
      }
      r[i] = (ranked){d, i};
    }
    qsort(r, l->count, sizeof *r, cmp_ranked);
    for (uint32_t j = 0; j < l->count && shown < 12; j++) {
      const cucore_kernel_info *k = &l->items[r[j].i];
      int n = snprintf(list + used, sizeof list - used, "%s%s%s%s%s", shown ? ", " : "", k->name,
                       k->demangled ? " (" : "", k->demangled ? k->demangled : "",
                       k->demangled ? ")" : "");
      if (n < 0 || (size_t)n >= sizeof list - used) break;
      used += (size_t)n;
      shown++;
    }
    free(r);
  }
  return cc_fail(CUCORE_NOT_FOUND, "no kernel named `%s`; the %s has %u: %s%s", name,
                 cucore_code_type_name(bin->info.code_type), l->count, list,
                 shown < l->count ? ", ..." : "");
}

/* CUCORE_NOT_FOUND for module variable `name`, listing those that exist. */
static cucore_status fail_global_not_found(const cucore_binary *bin, const char *name) {
  const cc_glist *l = &bin->globals;
  if (l->count == 0)
    return cc_fail(CUCORE_NOT_FOUND,
                   "no module variable named `%s`: the %s has no __device__, __constant__ or "
                   "__managed__ variables",
                   name, cucore_code_type_name(bin->info.code_type));
  char list[1024] = "";
  size_t used = 0;
  uint32_t shown = 0;
  for (uint32_t i = 0; i < l->count && shown < 16; i++) {
    const cucore_global_info *g = &l->items[i];
    int n = snprintf(list + used, sizeof list - used, "%s%s%s%s%s (%s, %llu bytes)",
                     shown ? ", " : "", g->name, g->demangled ? " (" : "",
                     g->demangled ? g->demangled : "", g->demangled ? ")" : "",
                     cucore_global_kind_name(g->kind), (unsigned long long)g->size);
    if (n < 0 || (size_t)n >= sizeof list - used) break;
    used += (size_t)n;
    shown++;
  }
  return cc_fail(CUCORE_NOT_FOUND, "no module variable named `%s`; the %s has %u: %s%s", name,
                 cucore_code_type_name(bin->info.code_type), l->count, list,
                 shown < l->count ? ", ..." : "");
}

/* ---- opening --------------------------------------------------------------------------------- */

/* 1 when a cubin for `code` (with suffix) runs on a GPU of compute capability `arch`. */
static int cubin_runs_on(int code, char suffix, int arch) {
  if (suffix == 'a') return code == arch;
  return code / 10 == arch / 10 && code <= arch;
}

static cucore_status read_cubin(cucore_binary *bin, const uint8_t *d, size_t n, int arch) {
  cc_cubin c;
  cucore_status st = cc_cubin_parse(d, n, &c);
  if (st != CUCORE_OK) return st;
  if (arch && !cubin_runs_on(c.arch, c.suffix, arch)) {
    char name[16];
    cc_arch_name(c.arch, c.suffix, "sm", name, sizeof name);
    cc_cubin_free(&c);
    return cc_fail(CUCORE_NOT_FOUND,
                   "the cubin is for %s; it cannot run on sm_%d (a cubin runs on its own major "
                   "version at the same or a newer minor; an 'a' cubin only on its exact arch)",
                   name, arch);
  }
  bin->kernels = c.kernels;
  bin->globals = c.globals;
  bin->info.code_type = CUCORE_CODE_CUBIN;
  bin->info.arch = c.arch;
  bin->info.arch_suffix = c.suffix;
  cc_arch_name(c.arch, c.suffix, "sm", bin->info.arch_name, sizeof bin->info.arch_name);
  bin->info.virtual_arch = c.virtual_arch;
  bin->info.toolkit_version = c.toolkit_version;
  bin->info.relocatable = c.relocatable;
  bin->info.debug = c.debug;
  return CUCORE_OK;
}

static cucore_status read_ptx(cucore_binary *bin, const char *text, size_t n, int arch) {
  cc_ptx p;
  cucore_status st = cc_ptx_parse(text, n, arch, &p);
  if (st != CUCORE_OK) return st;
  bin->kernels = p.kernels;
  bin->globals = p.globals;
  bin->info.code_type = CUCORE_CODE_PTX;
  bin->info.arch = p.target;
  bin->info.arch_suffix = p.target_suffix;
  cc_arch_name(p.target, p.target_suffix, "compute", bin->info.arch_name,
               sizeof bin->info.arch_name);
  bin->info.ptx_version = p.version;
  return CUCORE_OK;
}

/* A fatbin that carries PTX next to the chosen cubin lends the cubin its parameter kinds:
 * optional work, so nothing it meets is reported. */
static void borrow_ptx_kinds(cucore_binary *bin, uint32_t chosen) {
  const cc_fatbin *f = &bin->fatbin;
  int best = -1;
  for (uint32_t i = 0; i < f->count; i++) {
    const cucore_fatbin_entry *e = &f->entries[i];
    if (e->type != CUCORE_CODE_PTX || e->arch > f->entries[chosen].arch) continue;
    if (best < 0 || e->arch > f->entries[best].arch) best = (int)i;
  }
  if (best < 0) return;
  const uint8_t *bytes;
  size_t size;
  int owned;
  if (cc_fatbin_entry_bytes_quiet(f, (uint32_t)best, &bytes, &size, &owned) != CUCORE_OK) return;
  cc_ptx p;
  if (cc_ptx_parse_quiet((const char *)bytes, size, bin->info.arch, &p) == CUCORE_OK) {
    attach(&bin->kernels, &p.kernels, NULL, 0);
    cc_ptx_free(&p);
  }
  if (owned) free((void *)bytes);
}

static cucore_status read_fatbin(cucore_binary *bin, uint64_t off, uint64_t len, int arch) {
  cucore_status st = cc_fatbin_parse(bin->data, bin->size, off, len, &bin->fatbin);
  if (st != CUCORE_OK) return st;
  bin->info.fatbin_entry_count = bin->fatbin.count;
  uint32_t idx;
  st = cc_fatbin_select(&bin->fatbin, arch, &idx);
  if (st != CUCORE_OK) return st;
  const uint8_t *bytes;
  size_t size;
  int owned;
  st = cc_fatbin_entry_bytes(&bin->fatbin, idx, &bytes, &size, &owned);
  if (st != CUCORE_OK) return st;
  const cucore_fatbin_entry *e = &bin->fatbin.entries[idx];
  if (e->type == CUCORE_CODE_CUBIN)
    st = read_cubin(bin, bytes, size, arch);
  else
    st = read_ptx(bin, (const char *)bytes, size, arch ? arch : e->arch);
  if (owned) free((void *)bytes);
  if (st != CUCORE_OK) return st;
  bin->info.selected_entry = (int32_t)idx;
  if (e->type == CUCORE_CODE_CUBIN) borrow_ptx_kinds(bin, idx);
  return CUCORE_OK;
}

/* The types the reader reads; CUCORE_NOT_SUPPORTED or INVALID_ARGUMENT for the others. */
static cucore_status readable_type(cucore_code_type type) {
  switch (type) {
  case CUCORE_CODE_CUBIN:
  case CUCORE_CODE_FATBIN:
  case CUCORE_CODE_PTX:
  case CUCORE_CODE_OBJECT: return CUCORE_OK;
  case CUCORE_CODE_LIBRARY:
    return cc_fail(CUCORE_NOT_SUPPORTED,
                   "static libraries (.a) are recognised but not read: extract the members with "
                   "`ar x` and open each object");
  case CUCORE_CODE_LTOIR:
  case CUCORE_CODE_NVVM:
  case CUCORE_CODE_CUDA_CPP:
    return cc_fail(CUCORE_NOT_SUPPORTED,
                   "%s holds no kernels the reader can inspect: compile (or, for LTO-IR, link) "
                   "it to a cubin first",
                   cucore_code_type_name(type));
  default:
    return cc_fail(CUCORE_INVALID_ARGUMENT, "cucore_binary_open: unknown code type %d", (int)type);
  }
}

static int is_elf_type(cucore_code_type t) {
  return t == CUCORE_CODE_CUBIN || t == CUCORE_CODE_OBJECT;
}

/* Bytes of the declared type, as their bytes tell. PTX is any text without a binary magic
 * here, and a cubin or host object any ELF file: their parsers then say what is wrong (an
 * ELF of the other kind, a malformed header, PTX with no .version: CUCORE_PARSE_ERROR). */
static cucore_status check_declared(const uint8_t *d, size_t n, cucore_code_type type,
                                    const char *name) {
  int fits = type == CUCORE_CODE_PTX ? cc_is_plain_text(d, n)
             : is_elf_type(type)     ? is_elf_type(cc_code_type_by_magic(d, n))
                                     : cc_code_type_fits(d, n, type);
  return fits ? CUCORE_OK : cc_code_type_mismatch(d, n, type, "cucore_binary_open", name);
}

/* Reads the copied bytes in `bin` as `type`. */
static cucore_status read_as(cucore_binary *bin, cucore_code_type type, int arch) {
  switch (type) {
  case CUCORE_CODE_CUBIN: return read_cubin(bin, bin->data, bin->size, arch);
  case CUCORE_CODE_PTX: return read_ptx(bin, (const char *)bin->data, bin->size, arch);
  case CUCORE_CODE_FATBIN: return read_fatbin(bin, 0, bin->size, arch);
  default: {
    uint64_t off = 0, len = 0;
    cucore_status st = cc_host_elf_fatbin(bin->data, bin->size, &off, &len);
    return st == CUCORE_OK ? read_fatbin(bin, off, len, arch) : st;
  }
  }
}

/* cc_binary_open, naming the code `name` in a message about its type. */
static cucore_status open_named(const void *data, size_t size, cucore_code_type type, int arch,
                                const char *name, cucore_binary **out) {
  *out = NULL;
  if (!data && size)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "cucore_binary_open: `data` is NULL but size is %zu",
                   size);
  if (arch < 0 || arch > 1000)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "cucore_binary_open: arch %d; expected 0 (any) or a compute capability as "
                   "major*10 + minor, e.g. 90",
                   arch);
  cucore_status st = cc_check_code_size(size, "cucore_binary_open", "the code");
  if (st == CUCORE_OK && type == CUCORE_CODE_AUTO) st = cc_code_type_detect(data, size, &type);
  if (st == CUCORE_OK) st = readable_type(type);
  if (st != CUCORE_OK) return st;
  if (size == 0) return cc_code_type_detect(data, size, &type); /* the empty-input message */
  st = check_declared(data, size, type, name);
  if (st != CUCORE_OK) return st;
  cucore_binary *bin = cc_calloc(1, sizeof *bin, "a cucore_binary");
  if (!bin) return CUCORE_HOST_OUT_OF_MEMORY;
  cc_handle_init(bin, CC_KIND_BINARY);
  bin->data = cc_copy_code(data, size);
  if (!bin->data) {
    free(bin);
    return CUCORE_HOST_OUT_OF_MEMORY;
  }
  bin->size = size;
  bin->info.type = type;
  bin->info.selected_entry = -1;
  st = read_as(bin, type, arch);
  if (st != CUCORE_OK) {
    cucore_binary_destroy(bin);
    return st;
  }
  bin->info.kernel_count = bin->kernels.count;
  bin->info.demangler = cc_demangler_available();
  *out = bin;
  return CUCORE_OK;
}

cucore_status cc_binary_open(const void *data, size_t size, cucore_code_type type, int arch,
                             cucore_binary **out) {
  return open_named(data, size, type, arch, "code in memory", out);
}

cucore_status cc_binary_attach_ptx(cucore_binary *bin, const char *ptx, size_t len,
                                   uint32_t *matched) {
  cc_ptx p;
  cucore_status st = cc_ptx_parse(ptx, len, bin->info.arch, &p);
  if (st != CUCORE_OK) return st;
  st = attach(&bin->kernels, &p.kernels, matched, 1);
  cc_ptx_free(&p);
  return st;
}

/* ---- the public API -------------------------------------------------------------------------- */

cucore_status cucore_code_type_detect(const void *data, size_t size, cucore_code_type *out) {
  cc_begin();
  CC_CHECK_ARG(out, "cucore_code_type_detect", "out");
  *out = CUCORE_CODE_AUTO;
  if (!data && size)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "cucore_code_type_detect: `data` is NULL but size is %zu", size);
  cucore_status st = cc_check_code_size(size, "cucore_code_type_detect", "the code");
  return st == CUCORE_OK ? cc_code_type_detect(data, size, out) : st;
}

cucore_status cucore_binary_open(const void *data, size_t size, cucore_code_type type, int arch,
                                 cucore_binary **out) {
  cc_begin();
  CC_CHECK_ARG(out, "cucore_binary_open", "out");
  *out = NULL;
  return cc_binary_open(data, size, type, arch, out);
}

cucore_status cucore_binary_open_file(const char *path, cucore_code_type type, int arch,
                                      cucore_binary **out) {
  cc_begin();
  CC_CHECK_ARG(out, "cucore_binary_open_file", "out");
  *out = NULL;
  CC_CHECK_ARG(path, "cucore_binary_open_file", "path");
  unsigned char *buf = NULL;
  size_t n = 0;
  cucore_status st = cc_read_file(path, &buf, &n);
  if (st != CUCORE_OK) return st;
  st = open_named(buf, n, type, arch, path, out);
  free(buf);
  return st;
}

cucore_status cucore_binary_destroy(cucore_binary *bin) {
  cc_begin();
  if (!bin) return CUCORE_OK;
  CC_CHECK_HANDLE(bin, BINARY, "cucore_binary_destroy", "bin");
  cc_klist_free(&bin->kernels);
  cc_glist_free(&bin->globals);
  cc_fatbin_free(&bin->fatbin);
  free(bin->data);
  cc_handle_retire(bin, CC_KIND_BINARY);
  return CUCORE_OK;
}

cucore_status cucore_binary_get_info(const cucore_binary *bin, cucore_binary_info *out) {
  cc_begin();
  CC_CHECK_HANDLE(bin, BINARY, "cucore_binary_get_info", "bin");
  CC_CHECK_ARG(out, "cucore_binary_get_info", "out");
  *out = bin->info;
  return CUCORE_OK;
}

cucore_status cucore_binary_get_kernel_count(const cucore_binary *bin, uint32_t *count) {
  cc_begin();
  CC_CHECK_ARG(count, "cucore_binary_get_kernel_count", "count");
  *count = 0;
  CC_CHECK_HANDLE(bin, BINARY, "cucore_binary_get_kernel_count", "bin");
  *count = bin->kernels.count;
  return CUCORE_OK;
}

cucore_status cucore_binary_get_kernel(const cucore_binary *bin, uint32_t index,
                                       const cucore_kernel_info **out) {
  cc_begin();
  CC_CHECK_ARG(out, "cucore_binary_get_kernel", "out");
  *out = NULL;
  CC_CHECK_HANDLE(bin, BINARY, "cucore_binary_get_kernel", "bin");
  if (index >= bin->kernels.count)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "cucore_binary_get_kernel: index %u is out of range: the %s has %u kernels",
                   index, cucore_code_type_name(bin->info.code_type), bin->kernels.count);
  *out = &bin->kernels.items[index];
  return CUCORE_OK;
}

cucore_status cucore_binary_find_kernel(const cucore_binary *bin, const char *name,
                                        const cucore_kernel_info **out) {
  cc_begin();
  CC_CHECK_ARG(out, "cucore_binary_find_kernel", "out");
  *out = NULL;
  CC_CHECK_HANDLE(bin, BINARY, "cucore_binary_find_kernel", "bin");
  CC_CHECK_ARG(name, "cucore_binary_find_kernel", "name");
  *out = cc_binary_lookup(bin, name);
  return *out ? CUCORE_OK : cc_binary_fail_not_found(bin, name);
}

static cucore_status need_fatbin(const cucore_binary *bin, const char *fn) {
  if (bin->info.type == CUCORE_CODE_FATBIN || bin->info.type == CUCORE_CODE_OBJECT)
    return CUCORE_OK;
  return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: the binary is a %s, not a fatbin", fn,
                 cucore_code_type_name(bin->info.type));
}

cucore_status cucore_binary_get_fatbin_entry(const cucore_binary *bin, uint32_t index,
                                             cucore_fatbin_entry *out) {
  cc_begin();
  CC_CHECK_HANDLE(bin, BINARY, "cucore_binary_get_fatbin_entry", "bin");
  CC_CHECK_ARG(out, "cucore_binary_get_fatbin_entry", "out");
  cucore_status st = need_fatbin(bin, "cucore_binary_get_fatbin_entry");
  if (st != CUCORE_OK) return st;
  if (index >= bin->fatbin.count)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "cucore_binary_get_fatbin_entry: index %u is out of range: the fatbin has %u "
                   "entries",
                   index, bin->fatbin.count);
  *out = bin->fatbin.entries[index];
  return CUCORE_OK;
}

cucore_status cucore_binary_fatbin_select(const cucore_binary *bin, int arch, uint32_t *index) {
  cc_begin();
  CC_CHECK_HANDLE(bin, BINARY, "cucore_binary_fatbin_select", "bin");
  CC_CHECK_ARG(index, "cucore_binary_fatbin_select", "index");
  cucore_status st = need_fatbin(bin, "cucore_binary_fatbin_select");
  if (st != CUCORE_OK) return st;
  if (arch < 0 || arch > 1000)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "cucore_binary_fatbin_select: arch %d; expected 0 or e.g. 90", arch);
  return cc_fatbin_select(&bin->fatbin, arch, index);
}

cucore_status cucore_binary_fatbin_extract(const cucore_binary *bin, uint32_t index, void *buf,
                                           size_t capacity, size_t *size) {
  cc_begin();
  CC_CHECK_HANDLE(bin, BINARY, "cucore_binary_fatbin_extract", "bin");
  CC_CHECK_ARG(size, "cucore_binary_fatbin_extract", "size");
  *size = 0;
  cucore_status st = need_fatbin(bin, "cucore_binary_fatbin_extract");
  if (st != CUCORE_OK) return st;
  if (index >= bin->fatbin.count)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "cucore_binary_fatbin_extract: index %u is out of range: the fatbin has %u "
                   "entries",
                   index, bin->fatbin.count);
  if (!buf) {
    *size = (size_t)bin->fatbin.entries[index].size;
    return CUCORE_OK;
  }
  if (capacity < bin->fatbin.entries[index].size)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "cucore_binary_fatbin_extract: entry %u (%s) is %llu bytes; the buffer holds "
                   "%zu",
                   index, bin->fatbin.entries[index].arch_name,
                   (unsigned long long)bin->fatbin.entries[index].size, capacity);
  const uint8_t *bytes;
  size_t n;
  int owned;
  st = cc_fatbin_entry_bytes(&bin->fatbin, index, &bytes, &n, &owned);
  if (st != CUCORE_OK) return st;
  memcpy(buf, bytes, n);
  *size = n;
  if (owned) free((void *)bytes);
  return CUCORE_OK;
}

cucore_status cucore_binary_attach_ptx(cucore_binary *bin, const char *ptx, size_t len,
                                       uint32_t *matched) {
  cc_begin();
  if (matched) *matched = 0;
  CC_CHECK_HANDLE(bin, BINARY, "cucore_binary_attach_ptx", "bin");
  CC_CHECK_ARG(ptx, "cucore_binary_attach_ptx", "ptx");
  size_t n = strnlen(ptx, len); /* the parser reads up to the first NUL */
  if (n && !cc_is_plain_text((const uint8_t *)ptx, n))
    return cc_code_type_mismatch((const uint8_t *)ptx, n, CUCORE_CODE_PTX,
                                 "cucore_binary_attach_ptx", "the PTX");
  return cc_binary_attach_ptx(bin, ptx, len, matched);
}

cucore_status cucore_binary_get_global_count(const cucore_binary *bin, uint32_t *count) {
  cc_begin();
  CC_CHECK_ARG(count, "cucore_binary_get_global_count", "count");
  *count = 0;
  CC_CHECK_HANDLE(bin, BINARY, "cucore_binary_get_global_count", "bin");
  *count = bin->globals.count;
  return CUCORE_OK;
}

cucore_status cucore_binary_get_global(const cucore_binary *bin, uint32_t index,
                                       const cucore_global_info **out) {
  cc_begin();
  CC_CHECK_ARG(out, "cucore_binary_get_global", "out");
  *out = NULL;
  CC_CHECK_HANDLE(bin, BINARY, "cucore_binary_get_global", "bin");
  if (index >= bin->globals.count)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "cucore_binary_get_global: index %u is out of range: the %s has %u module "
                   "variables",
                   index, cucore_code_type_name(bin->info.code_type), bin->globals.count);
  *out = &bin->globals.items[index];
  return CUCORE_OK;
}

cucore_status cucore_binary_find_global(const cucore_binary *bin, const char *name,
                                        const cucore_global_info **out) {
  cc_begin();
  CC_CHECK_ARG(out, "cucore_binary_find_global", "out");
  *out = NULL;
  CC_CHECK_HANDLE(bin, BINARY, "cucore_binary_find_global", "bin");
  CC_CHECK_ARG(name, "cucore_binary_find_global", "name");
  *out = cc_glist_find(&bin->globals, name);
  return *out ? CUCORE_OK : fail_global_not_found(bin, name);
}
