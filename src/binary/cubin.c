/*
 * cubin.c -- the cubin reader (section tables are read by elf.c).
 *
 * A cubin is an ELF64 little-endian file for EM_CUDA (190). Kernels are the symbols of type
 * STT_FUNC with STO_CUDA_ENTRY (0x10) in st_other; for kernel K:
 *   .text.K            its code; sh_info bits 24-31 hold the register count in cubins up to
 *                      sm_89 (0 from sm_90 on, where only EIATTR_REGCOUNT has it)
 *   .nv.info.K         attribute records (EIATTR_*): parameters, launch bounds, clusters,
 *                      barriers, grid sync
 *   .nv.info           module attribute records keyed by symbol index: REGCOUNT,
 *                      FRAME_SIZE, MIN_STACK_SIZE, MAX_STACK_SIZE
 *   .nv.constant0.K    constant bank 0: the driver's area, then the parameters
 *   .nv.shared.K       static shared memory (NOBITS); from sm_90 on it begins with the 1 KiB
 *                      that the system reserves in every block's shared memory
 *   .nv.constant3      the module's __constant__ data
 *   .nv.global         __device__ and __managed__ variables without initial values (NOBITS)
 *   .nv.global.init    __device__ variables with initial values
 * Module variables are the data symbols (STT_OBJECT, or STT_CUDA_OBJECT (13) in relocatable
 * cubins) of the last three sections; st_other bit 0x4 marks a __managed__ one.
 * An attribute record is 4 bytes { u8 format, u8 attribute, u16 value } where the format is
 * 1 (no value), 2 (a byte: the low byte of `value`), 3 (a 16-bit value) or 4 (`value` bytes of
 * payload follow).
 *
 * The architecture: ELF ABI version 7 (CUDA <= 12) keeps the SM in e_flags bits 0-7, the
 * virtual architecture in bits 16-23 and 'a' in bit 11 (0x800). ABI version 8 (CUDA 13) keeps
 * the SM in bits 8-15, 'a' in bit 3 (0x8) -- which ptxas 13.0 leaves clear; it records 'a' as
 * attribute 9 of .nv.compat instead -- and the virtual architecture and the toolkit version in
 * the .note.nv.cuinfo note. 'f' (family) is not recorded in the cubin itself; it is read from
 * the ptxas command line kept in .note.nv.tkinfo ("-arch sm_100f") when present.
 */
#define _GNU_SOURCE
#include "binary/cubin.h"
#include "binary/demangle.h"
#include "binary/signature.h"

#include <stdio.h>
#include <stdlib.h>

/* CUDA's own symbol values, which <elf.h> does not name (LLVM's BinaryFormat/ELF.h does). */
#define CC_STT_CUDA_OBJECT 13    /* st_info type of data symbols in relocatable cubins */
#define CC_STO_CUDA_ENTRY 0x10   /* st_other: the function is a kernel (__global__) */
#define CC_STO_CUDA_MANAGED 0x04 /* st_other: the variable is __managed__ */

/* Attribute codes this reader uses (the names are those cuobjdump prints). */
enum {
  EIATTR_CTAIDZ_USED = 0x04,
  EIATTR_MAX_THREADS = 0x05,
  EIATTR_PARAM_CBANK = 0x0a,
  EIATTR_REQNTID = 0x10,
  EIATTR_FRAME_SIZE = 0x11,
  EIATTR_MIN_STACK_SIZE = 0x12,
  EIATTR_KPARAM_INFO = 0x17,
  EIATTR_CBANK_PARAM_SIZE = 0x19,
  EIATTR_MAXREG_COUNT = 0x1b,
  EIATTR_MAX_STACK_SIZE = 0x23,
  EIATTR_COOP_GROUP_INSTR_OFFSETS = 0x28,
  EIATTR_REGCOUNT = 0x2f,
  EIATTR_CTA_PER_CLUSTER = 0x3d,
  EIATTR_EXPLICIT_CLUSTER = 0x3e,
  EIATTR_MAX_CLUSTER_RANK = 0x3f,
  EIATTR_KPARAM_INFO_V2 = 0x45,
  EIATTR_NUM_BARRIERS = 0x4c
};

/* Names of attribute codes, for messages. */
static const char *const attr_names[] = {
    [0x01] = "PAD",
    [0x02] = "IMAGE_SLOT",
    [0x03] = "JUMPTABLE_RELOCS",
    [0x04] = "CTAIDZ_USED",
    [0x05] = "MAX_THREADS",
    [0x06] = "IMAGE_OFFSET",
    [0x07] = "IMAGE_SIZE",
    [0x08] = "TEXTURE_NORMALIZED",
    [0x09] = "SAMPLER_INIT",
    [0x0a] = "PARAM_CBANK",
    [0x0b] = "SMEM_PARAM_OFFSETS",
    [0x0c] = "CBANK_PARAM_OFFSETS",
    [0x0d] = "SYNC_STACK",
    [0x0e] = "TEXID_SAMPID_MAP",
    [0x0f] = "EXTERNS",
    [0x10] = "REQNTID",
    [0x11] = "FRAME_SIZE",
    [0x12] = "MIN_STACK_SIZE",
    [0x13] = "SAMPLER_FORCE_UNNORMALIZED",
    [0x14] = "BINDLESS_IMAGE_OFFSETS",
    [0x15] = "BINDLESS_TEXTURE_BANK",
    [0x16] = "BINDLESS_SURFACE_BANK",
    [0x17] = "KPARAM_INFO",
    [0x18] = "SMEM_PARAM_SIZE",
    [0x19] = "CBANK_PARAM_SIZE",
    [0x1a] = "QUERY_NUMATTRIB",
    [0x1b] = "MAXREG_COUNT",
    [0x1c] = "EXIT_INSTR_OFFSETS",
    [0x1d] = "S2RCTAID_INSTR_OFFSETS",
    [0x1e] = "CRS_STACK_SIZE",
    [0x1f] = "NEED_CNP_WRAPPER",
    [0x20] = "NEED_CNP_PATCH",
    [0x21] = "EXPLICIT_CACHING",
    [0x22] = "ISTYPEP_USED",
    [0x23] = "MAX_STACK_SIZE",
    [0x24] = "SUQ_USED",
    [0x25] = "LD_CACHEMOD_INSTR_OFFSETS",
    [0x26] = "LOAD_CACHE_REQUEST",
    [0x27] = "ATOM_SYS_INSTR_OFFSETS",
    [0x28] = "COOP_GROUP_INSTR_OFFSETS",
    [0x29] = "COOP_GROUP_MASK_REGIDS",
    [0x2a] = "SW1850030_WAR",
    [0x2b] = "WMMA_USED",
    [0x2c] = "HAS_PRE_V10_OBJECT",
    [0x2d] = "ATOMF16_EMUL_INSTR_OFFSETS",
    [0x2e] = "ATOM16_EMUL_INSTR_REG_MAP",
    [0x2f] = "REGCOUNT",
    [0x30] = "SW2393858_WAR",
    [0x31] = "INT_WARP_WIDE_INSTR_OFFSETS",
    [0x32] = "SHARED_SCRATCH",
    [0x33] = "STATISTICS",
    [0x34] = "INDIRECT_BRANCH_TARGETS",
    [0x35] = "SW2861232_WAR",
    [0x36] = "SW_WAR",
    [0x37] = "CUDA_API_VERSION",
    [0x38] = "NUM_MBARRIERS",
    [0x39] = "MBARRIER_INSTR_OFFSETS",
    [0x3a] = "COROUTINE_RESUME_ID_OFFSETS",
    [0x3b] = "SAM_REGION_STACK_SIZE",
    [0x3c] = "PER_REG_TARGET_PERF_STATS",
    [0x3d] = "CTA_PER_CLUSTER",
    [0x3e] = "EXPLICIT_CLUSTER",
    [0x3f] = "MAX_CLUSTER_RANK",
    [0x40] = "INSTR_REG_MAP",
    [0x41] = "RESERVED_SMEM_USED",
    [0x42] = "RESERVED_SMEM_0_SIZE",
    [0x43] = "UCODE_SECTION_DATA",
    [0x44] = "UNUSED_LOAD_BYTE_OFFSET",
    [0x45] = "KPARAM_INFO_V2",
    [0x46] = "SYSCALL_OFFSETS",
    [0x47] = "SW_WAR_MEMBAR_SYS_INSTR_OFFSETS",
    [0x48] = "GRAPHICS_GLOBAL_CBANK",
    [0x49] = "SHADER_TYPE",
    [0x4a] = "VRC_CTA_INIT_COUNT",
    [0x4b] = "TOOLS_PATCH_FUNC",
    [0x4c] = "NUM_BARRIERS",
    [0x4d] = "TEXMODE_INDEPENDENT",
    [0x4e] = "PERF_STATISTICS",
    [0x4f] = "AT_ENTRY_FRAGMENTS",
    [0x50] = "SPARSE_MMA_MASK",
    [0x51] = "TCGEN05_1CTA_USED",
    [0x52] = "TCGEN05_2CTA_USED",
    [0x53] = "GEN_ERRBAR_AT_EXIT",
    [0x54] = "REG_RECONFIG",
    [0x55] = "ANNOTATIONS",
    [0x56] = "SANITIZE",
    [0x57] = "STACK_CANARY_TRAP_OFFSETS",
    [0x58] = "STUB_FUNCTION_KIND",
    [0x59] = "LOCAL_CTA_ASYNC_STORE_OFFSETS",
    [0x5a] = "MERCURY_FINALIZER_OPTIONS",
};

static const char *attr_name(unsigned code, char *buf, size_t len) {
  if (code < CC_ARRAY_LEN(attr_names) && attr_names[code])
    snprintf(buf, len, "EIATTR_%s", attr_names[code]);
  else
    snprintf(buf, len, "attribute 0x%02x", code);
  return buf;
}

/* ---- the cubin ----------------------------------------------------------------------------- */

/* Sections sorted by name, for lookups of "<prefix><kernel>" without building the string. */
typedef struct name_index {
  const cc_elf_section **by_name;
  uint32_t count;
} name_index;

static int cmp_section_names(const void *a, const void *b) {
  const cc_elf_section *const *sa = a, *const *sb = b;
  return strcmp((*sa)->name, (*sb)->name);
}

typedef struct hashed_name {
  uint64_t hash;
  const char *name;
} hashed_name;

static uint64_t hash_name(const char *s) {
  uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
  return h;
}

static int cmp_hashed(const void *a, const void *b) {
  const hashed_name *x = a, *y = b;
  return x->hash < y->hash ? -1 : x->hash > y->hash;
}

/* strcmp(prefix + name, s) without concatenating. */
static int cmp_concat(const char *prefix, const char *name, const char *s) {
  for (; *prefix; prefix++, s++)
    if (*prefix != *s) return (unsigned char)*prefix - (unsigned char)*s;
  return strcmp(name, s);
}

static const cc_elf_section *lookup(const name_index *ix, const char *prefix, const char *name) {
  uint32_t lo = 0, hi = ix->count;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    int c = cmp_concat(prefix, name, ix->by_name[mid]->name);
    if (c == 0) return ix->by_name[mid];
    if (c < 0)
      hi = mid;
    else
      lo = mid + 1;
  }
  return NULL;
}

/* One parameter as an EIATTR_KPARAM_INFO record gives it. */
typedef struct raw_param {
  uint32_t ordinal, offset, size;
  int pointer;
} raw_param;

/* What parsing a kernel collects before it is checked and stored. */
typedef struct kernel_work {
  raw_param *params;
  uint32_t nparams;
  size_t cap;
  int have_param_bytes;
  uint32_t param_bytes;
} kernel_work;

typedef struct parse_ctx {
  const cc_elf *elf;
  cc_cubin *cubin;
  const cc_elf_section *symtab, *strtab; /* the symbol table and its strings */
  uint64_t strtab_last_nul;  /* offset of the string table's last NUL; UINT64_MAX if none */
  uint64_t name_bytes;       /* bytes of kernel and variable names read */
  uint64_t const_scanned;    /* bytes of __constant__ data looked at for initial values */
  int32_t *kernel_of_symbol; /* symbol index -> kernel index, -1 when not a kernel */
  uint32_t nsyms;
  name_index ix;     /* sections by name */
  kernel_work *work; /* one per kernel */
  uint32_t nwork;
  uint64_t walked; /* bytes of attribute sections read */
} parse_ctx;

static cucore_status short_payload(const cc_elf *e, uint32_t secidx, uint64_t at, unsigned attr,
                                   uint32_t have, uint32_t need) {
  char nb[48];
  return cc_fail(CUCORE_INVALID_BINARY,
                 "cubin: section %u (%.160s): %s at offset %llu has %u bytes of data; it needs at "
                 "least %u",
                 secidx, e->sections[secidx].name, attr_name(attr, nb, sizeof nb),
                 (unsigned long long)at, have, need);
}

static cucore_status add_raw_param(kernel_work *w, raw_param p) {
  raw_param *np = cc_grow(w->params, &w->cap, (size_t)w->nparams + 1, sizeof *np,
                          "the kernel parameters");
  if (!np) return CUCORE_HOST_OUT_OF_MEMORY;
  w->params = np;
  w->params[w->nparams++] = p;
  return CUCORE_OK;
}

/* Applies a module-level (symbol-keyed) value to the kernel that symbol names. */
static void apply_symbol_value(parse_ctx *c, unsigned attr, uint32_t sym, uint32_t value) {
  if (sym >= c->nsyms || c->kernel_of_symbol[sym] < 0) return; /* a device function */
  cucore_kernel_info *k = &c->cubin->kernels.items[c->kernel_of_symbol[sym]];
  int32_t v = value > INT32_MAX ? INT32_MAX : (int32_t)value;
  switch (attr) {
  case EIATTR_REGCOUNT: k->registers = v; break;
  case EIATTR_FRAME_SIZE: k->local_bytes = v; break;
  case EIATTR_MIN_STACK_SIZE:
  case EIATTR_MAX_STACK_SIZE:
    if (v > k->stack_bytes) k->stack_bytes = v;
    break;
  default: break;
  }
}

static void read3(const uint8_t *p, uint32_t out[3]) {
  out[0] = cc_le32(p);
  out[1] = cc_le32(p + 4);
  out[2] = cc_le32(p + 8);
}

/* One attribute record: { u8 format, u8 attribute, u16 value } and, in format 4, `plen` bytes
 * of payload at `pl`. */
typedef struct attr_record {
  unsigned fmt, attr;
  uint32_t value; /* formats 2 (its low byte) and 3 */
  uint32_t plen;  /* format 4: bytes of payload; 0 otherwise */
  const uint8_t *pl;
  uint64_t at; /* offset of the record in its section, for messages */
} attr_record;

/* CUCORE_OK when record r has at least `need` bytes of payload. */
static cucore_status need_payload(const cc_elf *e, uint32_t secidx, const attr_record *r,
                                  uint32_t need) {
  if (r->plen >= need) return CUCORE_OK;
  return short_payload(e, secidx, r->at, r->attr, r->plen, need);
}

/* EIATTR_KPARAM_INFO (V1 or V2): one parameter's ordinal, offset, size and whether it is a
 * pointer. */
static cucore_status kparam_info(const cc_elf *e, uint32_t secidx, const attr_record *r,
                                 kernel_work *w) {
  if (r->fmt != 4) return CUCORE_OK;
  cucore_status st = need_payload(e, secidx, r, 12);
  if (st != CUCORE_OK) return st;
  uint32_t word = cc_le32(r->pl + 8);
  raw_param rp = {cc_le16(r->pl + 4), cc_le16(r->pl + 6), 0, 0};
  /* The last word: V1 has the size in bits 18-31 and a pointer's address space in bits
   * 8-11 (0 for values; 5 generic, as nvcc 13 marks every pointer for sm_100 and newer;
   * 4 global, from `.ptr .global` in PTX), with log2 of the pointee's alignment in bits
   * 0-7. V2 has the size in bits 0-15 and the address space in bits 24-27. */
  if (r->attr == EIATTR_KPARAM_INFO) {
    rp.size = word >> 18;
    rp.pointer = ((word >> 8) & 0xf) != 0;
  } else {
    rp.size = word & 0xffff;
    rp.pointer = ((word >> 24) & 0xf) != 0;
  }
  return add_raw_param(w, rp);
}

/* Three u32 (x, y, z) from a format-4 record of at least 12 bytes; other formats are
 * skipped. */
static cucore_status attr_dims(const cc_elf *e, uint32_t secidx, const attr_record *r,
                               uint32_t out[3]) {
  if (r->fmt != 4) return CUCORE_OK;
  cucore_status st = need_payload(e, secidx, r, 12);
  if (st == CUCORE_OK) read3(r->pl, out);
  return st;
}

/* A u32 from a format-4 record (payload of at least 4 bytes), else the record's value. */
static cucore_status attr_u32(const cc_elf *e, uint32_t secidx, const attr_record *r,
                              uint32_t *out) {
  if (r->fmt != 4) {
    *out = r->value;
    return CUCORE_OK;
  }
  cucore_status st = need_payload(e, secidx, r, 4);
  if (st == CUCORE_OK) *out = cc_le32(r->pl);
  return st;
}

/* A record of a kernel's own .nv.info.K section, by attribute: a table of what each sets. */
static cucore_status kernel_attr(const cc_elf *e, uint32_t secidx, const attr_record *r,
                                 cucore_kernel_info *k, kernel_work *w) {
  cucore_status st = CUCORE_OK;
  uint32_t v = 0;
  switch (r->attr) {
  case EIATTR_KPARAM_INFO:
  case EIATTR_KPARAM_INFO_V2: return kparam_info(e, secidx, r, w);
  case EIATTR_PARAM_CBANK:
    if (r->fmt != 4) break;
    if ((st = need_payload(e, secidx, r, 8)) != CUCORE_OK) break;
    k->param_base = cc_le16(r->pl + 4);
    if (!w->have_param_bytes) {
      w->param_bytes = cc_le16(r->pl + 6);
      w->have_param_bytes = 1;
    }
    break;
  case EIATTR_CBANK_PARAM_SIZE:
    if (r->fmt == 3) {
      w->param_bytes = r->value;
      w->have_param_bytes = 1;
    }
    break;
  case EIATTR_MAX_THREADS: return attr_dims(e, secidx, r, k->maxntid);
  case EIATTR_REQNTID: return attr_dims(e, secidx, r, k->reqntid);
  case EIATTR_CTA_PER_CLUSTER: return attr_dims(e, secidx, r, k->cluster_dims);
  case EIATTR_EXPLICIT_CLUSTER: k->explicit_cluster = 1; break;
  case EIATTR_MAX_CLUSTER_RANK: return attr_u32(e, secidx, r, &k->max_blocks_per_cluster);
  case EIATTR_MAXREG_COUNT:
    if (r->fmt == 3 || r->fmt == 2) k->max_registers = r->value >= 0xff ? 0 : r->value;
    break;
  case EIATTR_NUM_BARRIERS:
    if ((st = attr_u32(e, secidx, r, &v)) != CUCORE_OK) break;
    k->barriers = (int32_t)(r->fmt == 4 ? v & 0x7fffffff : v);
    break;
  case EIATTR_COOP_GROUP_INSTR_OFFSETS: k->uses_grid_sync = 1; break;
  default: break; /* unknown or unused attributes are skipped */
  }
  return st;
}

/* Reads the record at `pos` of a section of `len` bytes at p, checking its framing. */
static cucore_status read_record(const cc_elf *e, uint32_t secidx, const uint8_t *p, uint64_t len,
                                 uint64_t pos, attr_record *r) {
  const cc_elf_section *s = &e->sections[secidx];
  char nb[48];
  if (len - pos < 4)
    return cc_fail(CUCORE_INVALID_BINARY,
                   "cubin: section %u (%.160s): %llu stray bytes at offset %llu; attribute "
                   "records are at least 4 bytes",
                   secidx, s->name, (unsigned long long)(len - pos), (unsigned long long)pos);
  r->fmt = p[pos];
  r->attr = p[pos + 1];
  uint32_t v16 = cc_le16(p + pos + 2);
  r->plen = 0;
  r->at = pos;
  r->pl = p + pos + 4;
  if (r->fmt == 4) {
    r->plen = v16;
    if (!cc_range_ok(pos + 4, r->plen, len))
      return cc_fail(CUCORE_INVALID_BINARY,
                     "cubin: section %u (%.160s): %s at offset %llu declares %u bytes of data "
                     "but only %llu remain in the section",
                     secidx, s->name, attr_name(r->attr, nb, sizeof nb), (unsigned long long)pos,
                     r->plen, (unsigned long long)(len - pos - 4));
  } else if (r->fmt < 1 || r->fmt > 3) {
    return cc_fail(CUCORE_INVALID_BINARY,
                   "cubin: section %u (%.160s): unknown attribute format %u at offset %llu "
                   "(expected 1 to 4)",
                   secidx, s->name, r->fmt, (unsigned long long)pos);
  }
  r->value = r->fmt == 2 ? (v16 & 0xff) : v16; /* formats 2 and 3 */
  return CUCORE_OK;
}

/* What one record of section `secidx` means: a symbol-keyed module value (in any .nv.info
 * section), else, in a kernel's own section, a kernel attribute. */
static cucore_status apply_record(parse_ctx *c, uint32_t secidx, int64_t kidx,
                                  const attr_record *r) {
  switch (r->attr) {
  case EIATTR_REGCOUNT:
  case EIATTR_FRAME_SIZE:
  case EIATTR_MIN_STACK_SIZE:
  case EIATTR_MAX_STACK_SIZE: {
    if (r->fmt != 4) return CUCORE_OK;
    cucore_status st = need_payload(c->elf, secidx, r, 8);
    if (st == CUCORE_OK) apply_symbol_value(c, r->attr, cc_le32(r->pl), cc_le32(r->pl + 4));
    return st;
  }
  default:
    if (kidx < 0) return CUCORE_OK; /* other attributes are per kernel */
    return kernel_attr(c->elf, secidx, r, &c->cubin->kernels.items[kidx], &c->work[kidx]);
  }
}

/* Walks the attribute records of section `secidx`. `kidx` is the kernel of a .nv.info.K
 * section, or -1 for the module's .nv.info (or .nv.compat: compat != NULL collects attribute
 * 9, the arch-specific 'a' marker). */
static cucore_status walk_attrs(parse_ctx *c, uint32_t secidx, int64_t kidx, int *compat_a) {
  const cc_elf *e = c->elf;
  const cc_elf_section *s = &e->sections[secidx];
  if (s->type == SHT_NOBITS) return CUCORE_OK;
  /* Sections do not overlap in a real file, so what is walked adds up to the file at most;
   * more means sections share bytes, and walking them all could take quadratic time. */
  c->walked += s->size;
  if (c->walked > e->size)
    return cc_fail(CUCORE_INVALID_BINARY,
                   "cubin: section %u (%.160s): the attribute sections read so far add up to %llu "
                   "bytes, more than the %zu-byte file: they overlap",
                   secidx, s->name, (unsigned long long)c->walked, e->size);
  const uint8_t *p = e->data + s->offset;
  for (uint64_t pos = 0; pos < s->size;) {
    attr_record r;
    cucore_status st = read_record(e, secidx, p, s->size, pos, &r);
    if (st != CUCORE_OK) return st;
    if (compat_a) {
      if (r.attr == 9 && r.fmt == 2 && r.value == 1) *compat_a = 1;
    } else if ((st = apply_record(c, secidx, kidx, &r)) != CUCORE_OK) {
      return st;
    }
    pos += 4 + r.plen;
  }
  return CUCORE_OK;
}

/* Checks a kernel's parameter records and stores them. */
static cucore_status finish_params(cucore_kernel_info *k, kernel_work *w) {
  uint32_t n = w->nparams;
  uint32_t end = 0;
  for (uint32_t i = 0; i < n; i++) {
    const raw_param *rp = &w->params[i];
    if (rp->ordinal >= n)
      return cc_fail(
          CUCORE_INVALID_BINARY,
          "cubin: kernel `%.200s`: EIATTR_KPARAM_INFO describes parameter ordinal %u, but "
          "only %u parameter records are present (ordinals 0 to %u expected)",
          k->name, rp->ordinal, n, n ? n - 1 : 0);
    if (rp->size == 0)
      return cc_fail(CUCORE_INVALID_BINARY, "cubin: kernel `%.200s`: parameter %u has size 0",
                     k->name, rp->ordinal);
    uint32_t pend = rp->offset + rp->size; /* both < 2^16: no overflow */
    if (w->have_param_bytes && pend > w->param_bytes)
      return cc_fail(CUCORE_INVALID_BINARY,
                     "cubin: kernel `%.200s`: parameter %u at offset %u + size %u extends past the "
                     "%u-byte parameter buffer (EIATTR_CBANK_PARAM_SIZE)",
                     k->name, rp->ordinal, rp->offset, rp->size, w->param_bytes);
    if (pend > end) end = pend;
  }
  if (n) {
    cucore_param_info *params = cc_calloc(n, sizeof *params, "kernel parameters");
    if (!params) return CUCORE_HOST_OUT_OF_MEMORY;
    unsigned char *seen = cc_calloc(n, 1, "kernel parameters");
    if (!seen) {
      free(params);
      return CUCORE_HOST_OUT_OF_MEMORY;
    }
    for (uint32_t i = 0; i < n; i++) {
      const raw_param *rp = &w->params[i];
      if (seen[rp->ordinal]) {
        free(seen);
        free(params);
        return cc_fail(CUCORE_INVALID_BINARY,
                       "cubin: kernel `%.200s`: parameter %u is described twice by "
                       "EIATTR_KPARAM_INFO",
                       k->name, rp->ordinal);
      }
      seen[rp->ordinal] = 1;
      params[rp->ordinal].offset = rp->offset;
      params[rp->ordinal].size = rp->size;
      params[rp->ordinal].align = 0;
      params[rp->ordinal].kind = rp->pointer && rp->size == 8 ? CUCORE_PARAM_POINTER
                                                              : CUCORE_PARAM_UNKNOWN;
    }
    free(seen);
    k->params = params;
  }
  k->param_count = n;
  k->param_bytes = w->have_param_bytes ? w->param_bytes : end;
  return CUCORE_OK;
}

static int32_t clamp_size(uint64_t v) { return v > INT32_MAX ? INT32_MAX : (int32_t)v; }

/* The 'f' (or 'a') suffix from the ptxas command line in .note.nv.tkinfo, if it names the
 * same SM ("-arch sm_100f"). */
static char suffix_from_tkinfo(const cc_elf *e, int arch) {
  const cc_elf_section *s = cc_elf_find(e, ".note.nv.tkinfo");
  if (!s || s->type == SHT_NOBITS) return 0;
  const uint8_t *p = e->data + s->offset;
  uint64_t n = s->size;
  static const char key[] = "-arch sm_";
  const size_t klen = sizeof key - 1;
  for (uint64_t i = 0; i + klen < n; i++) {
    if (memcmp(p + i, key, klen) != 0) continue;
    uint64_t j = i + klen;
    int v = 0, digits = 0;
    while (j < n && p[j] >= '0' && p[j] <= '9' && digits < 4) v = v * 10 + (p[j++] - '0'), digits++;
    if (!digits || v != arch || j >= n) return 0;
    if ((p[j] == 'a' || p[j] == 'f') && (j + 1 >= n || p[j + 1] == ' ' || p[j + 1] == 0))
      return (char)p[j];
    return 0;
  }
  return 0;
}

/* The .note.nv.cuinfo note: namesz, descsz, type, "NVIDIA Corp\0", then u16 format (2),
 * u16 virtual architecture, u16 toolkit version (major*10 + minor). */
static void read_cuinfo(const cc_elf *e, cc_cubin *out) {
  const cc_elf_section *s = cc_elf_find(e, ".note.nv.cuinfo");
  if (!s || s->type == SHT_NOBITS || s->size < 12) return;
  const uint8_t *p = e->data + s->offset;
  uint64_t namesz = cc_le32(p), descsz = cc_le32(p + 4);
  uint64_t desc = 12 + ((namesz + 3) & ~(uint64_t)3);
  if (namesz > s->size || descsz < 6 || !cc_range_ok(desc, descsz, s->size)) return;
  if (cc_le16(p + desc) != 2) return; /* a layout this reader does not know */
  out->virtual_arch = cc_le16(p + desc + 2);
  out->toolkit_version = cc_le16(p + desc + 4);
}

/* ---- the steps of cc_cubin_parse ------------------------------------------------------------ */

/* The ELF header's CUDA fields: the machine, the file type, the architecture and -G. */
static cucore_status read_header(const cc_elf *e, cc_cubin *out) {
  if (e->machine != EM_CUDA)
    return cc_fail(CUCORE_INVALID_BINARY,
                   "cubin: e_machine is %u at offset 0x12, not EM_CUDA (190): this ELF holds no "
                   "CUDA device code",
                   e->machine);
  if (e->type != ET_REL && e->type != ET_EXEC)
    return cc_fail(CUCORE_INVALID_BINARY,
                   "cubin: ELF type %u at offset 0x10; expected ET_EXEC (2) or ET_REL (1)",
                   e->type);
  out->relocatable = e->type == ET_REL;
  out->abi_version = e->abi_version;
  if (e->abi_version >= 8) {
    out->arch = (int)((e->flags >> 8) & 0xff);
    if (e->flags & 0x8) out->suffix = 'a';
    out->debug = (e->flags >> 27) & 1;
    read_cuinfo(e, out);
  } else {
    out->arch = (int)(e->flags & 0xff);
    if (e->flags & 0x800) out->suffix = 'a';
    out->virtual_arch = (int)((e->flags >> 16) & 0xff);
  }
  if (cc_elf_find(e, ".debug_info")) out->debug = 1;
  return CUCORE_OK;
}

/* The symbol table (the first SHT_SYMTAB section), checked, and its string table. */
static cucore_status find_symtab(parse_ctx *c) {
  const cc_elf *e = c->elf;
  const cc_elf_section *symtab = NULL;
  for (uint32_t i = 0; i < e->count && !symtab; i++)
    if (e->sections[i].type == SHT_SYMTAB) symtab = &e->sections[i];
  if (!symtab)
    return cc_fail(CUCORE_INVALID_BINARY, "cubin: no symbol table (SHT_SYMTAB section), so no "
                                          "kernels can be found");
  uint32_t symidx = (uint32_t)(symtab - e->sections);
  if (symtab->entsize != sizeof(Elf64_Sym))
    return cc_fail(CUCORE_INVALID_BINARY,
                   "cubin: section %u (%.160s): symbol entry size %llu; ELF64 symbols are 24 "
                   "bytes",
                   symidx, symtab->name, (unsigned long long)symtab->entsize);
  if (symtab->link >= e->count || e->sections[symtab->link].type != SHT_STRTAB)
    return cc_fail(CUCORE_INVALID_BINARY,
                   "cubin: section %u (%.160s): its string table (sh_link %u) is not a string "
                   "table section (%u sections)",
                   symidx, symtab->name, symtab->link, e->count);
  c->symtab = symtab;
  c->strtab = &e->sections[symtab->link];
  c->strtab_last_nul = cc_last_nul(e->data + c->strtab->offset, c->strtab->size);
  c->nsyms = (uint32_t)(symtab->size / sizeof(Elf64_Sym));
  return CUCORE_OK;
}

/* The name of symbol `i`, checked to be a terminated string inside the string table. */
static cucore_status symbol_name(const parse_ctx *c, uint32_t i, const uint8_t *sym,
                                 const char **name) {
  uint32_t no = (uint32_t)CC_ELF_GET(sym, Elf64_Sym, st_name);
  if (no >= c->strtab->size || c->strtab_last_nul == UINT64_MAX || no > c->strtab_last_nul)
    return cc_fail(CUCORE_INVALID_BINARY,
                   "cubin: symbol %u: its name (offset %u) is not a terminated string inside the "
                   "string table (section %u, %llu bytes)",
                   i, no, c->symtab->link, (unsigned long long)c->strtab->size);
  *name = (const char *)c->elf->data + c->strtab->offset + no;
  return CUCORE_OK;
}

/* Records data symbol `i` when it is a module variable (a symbol of .nv.global,
 * .nv.global.init or .nv.constant3); other data symbols are skipped. */
static cucore_status add_global(parse_ctx *c, uint32_t i, const uint8_t *sym) {
  const cc_elf *e = c->elf;
  uint32_t shndx = (uint32_t)CC_ELF_GET(sym, Elf64_Sym, st_shndx);
  if (shndx == SHN_UNDEF || shndx >= e->count) return CUCORE_OK; /* or a special index */
  const cc_elf_section *sec = &e->sections[shndx];
  int managed = (CC_ELF_GET(sym, Elf64_Sym, st_other) & CC_STO_CUDA_MANAGED) != 0;
  cucore_global_kind kind = managed ? CUCORE_GLOBAL_MANAGED : CUCORE_GLOBAL_DEVICE;
  int initialized = 0;
  if (strcmp(sec->name, ".nv.constant3") == 0)
    kind = CUCORE_GLOBAL_CONSTANT;
  else if (strcmp(sec->name, ".nv.global.init") == 0)
    initialized = 1;
  else if (strcmp(sec->name, ".nv.global") != 0)
    return CUCORE_OK;
  const char *name = ""; /* set by symbol_name; gcc -O3 cannot tell */
  cucore_status st = symbol_name(c, i, sym, &name);
  if (st != CUCORE_OK) return st;
  if (!name[0]) return CUCORE_OK; /* an anonymous object: nothing to look up by name */
  uint64_t value = CC_ELF_GET(sym, Elf64_Sym, st_value);
  uint64_t size = CC_ELF_GET(sym, Elf64_Sym, st_size);
  if (!cc_range_ok(value, size, sec->size))
    return cc_fail(CUCORE_INVALID_BINARY,
                   "cubin: symbol %u (`%.160s`): %llu bytes at offset %llu run past the end of "
                   "section %u (%.160s, %llu bytes)",
                   i, name, (unsigned long long)size, (unsigned long long)value, shndx, sec->name,
                   (unsigned long long)sec->size);
  size_t nlen = strnlen(name, CC_NAME_BYTES_MAX(e->size) + 1);
  c->name_bytes += nlen;
  if (c->name_bytes > CC_NAME_BYTES_MAX(e->size))
    return cc_fail(CUCORE_INVALID_BINARY,
                   "cubin: the symbol names add up to more than %llu bytes in a file of %zu "
                   "bytes: they overlap far more than any real file's",
                   (unsigned long long)CC_NAME_BYTES_MAX(e->size), e->size);
  if (kind == CUCORE_GLOBAL_CONSTANT && sec->type != SHT_NOBITS) {
    /* Non-zero bytes mean an initial value. Symbols may overlap in a hostile file: the bytes
     * looked at add up to the file's size at most, so the scan stays linear. */
    const uint8_t *p = e->data + sec->offset + value;
    for (uint64_t b = 0; b < size && !initialized && c->const_scanned < e->size;
         b++, c->const_scanned++)
      initialized = p[b] != 0;
  }
  cucore_global_info *g = cc_glist_add(&c->cubin->globals, name, nlen);
  if (!g) return CUCORE_HOST_OUT_OF_MEMORY;
  g->size = size;
  g->kind = kind;
  g->initialized = initialized;
  return CUCORE_OK;
}

/* Records kernel entry symbol `i` as the next kernel. */
static cucore_status add_kernel(parse_ctx *c, uint32_t i, const uint8_t *sym) {
  size_t n = c->elf->size;
  const char *name = ""; /* set by symbol_name */
  cucore_status st = symbol_name(c, i, sym, &name);
  if (st != CUCORE_OK) return st;
  if (!name[0])
    return cc_fail(CUCORE_INVALID_BINARY, "cubin: symbol %u is a kernel entry with no name", i);
  size_t nlen = strnlen(name, CC_NAME_BYTES_MAX(n) + 1);
  c->name_bytes += nlen;
  if (c->name_bytes > CC_NAME_BYTES_MAX(n))
    return cc_fail(CUCORE_INVALID_BINARY,
                   "cubin: the kernel names add up to more than %llu bytes in a file of %zu "
                   "bytes: they overlap far more than any real file's",
                   (unsigned long long)CC_NAME_BYTES_MAX(n), n);
  c->kernel_of_symbol[i] = (int32_t)c->cubin->kernels.count;
  if (!cc_klist_add(&c->cubin->kernels, name, nlen)) return CUCORE_HOST_OUT_OF_MEMORY;
  return CUCORE_OK;
}

/* Every symbol: kernels (STT_FUNC with STO_CUDA_ENTRY) and module variables (data symbols). */
static cucore_status read_symbols(parse_ctx *c) {
  c->kernel_of_symbol = cc_malloc((size_t)c->nsyms * sizeof(int32_t) + 1, "symbol map");
  if (!c->kernel_of_symbol) return CUCORE_HOST_OUT_OF_MEMORY;
  for (uint32_t i = 0; i < c->nsyms; i++) {
    c->kernel_of_symbol[i] = -1;
    const uint8_t *sym = c->elf->data + c->symtab->offset + (uint64_t)i * sizeof(Elf64_Sym);
    unsigned type = ELF64_ST_TYPE(CC_ELF_GET(sym, Elf64_Sym, st_info));
    cucore_status st = CUCORE_OK;
    if (type == STT_OBJECT || type == CC_STT_CUDA_OBJECT)
      st = add_global(c, i, sym);
    else if (type == STT_FUNC && (CC_ELF_GET(sym, Elf64_Sym, st_other) & CC_STO_CUDA_ENTRY))
      st = add_kernel(c, i, sym);
    if (st != CUCORE_OK) return st;
  }
  return CUCORE_OK;
}

/* Kernel names are unique in a valid cubin (and a duplicate would be read twice). */
static cucore_status check_unique_kernels(const cc_klist *l) {
  if (l->count < 2) return CUCORE_OK;
  /* Sorted by a hash of the name, so equal names meet without long string compares. */
  hashed_name *names = cc_calloc(l->count, sizeof *names, "kernel names");
  if (!names) return CUCORE_HOST_OUT_OF_MEMORY;
  for (uint32_t i = 0; i < l->count; i++) {
    names[i].name = l->items[i].name;
    names[i].hash = hash_name(names[i].name);
  }
  qsort(names, l->count, sizeof *names, cmp_hashed);
  cucore_status st = CUCORE_OK;
  for (uint32_t i = 1; i < l->count && st == CUCORE_OK; i++)
    if (names[i - 1].hash == names[i].hash && strcmp(names[i - 1].name, names[i].name) == 0)
      st = cc_fail(CUCORE_INVALID_BINARY, "cubin: kernel `%.200s` is defined by two entry symbols",
                   names[i].name);
  free(names);
  return st;
}

/* The sections sorted by name (for lookup), and one work record per kernel. */
static cucore_status index_sections(parse_ctx *c) {
  const cc_elf *e = c->elf;
  c->ix.by_name = cc_calloc(e->count, sizeof *c->ix.by_name, "section index");
  if (!c->ix.by_name) return CUCORE_HOST_OUT_OF_MEMORY;
  for (uint32_t i = 0; i < e->count; i++) c->ix.by_name[i] = &e->sections[i];
  c->ix.count = e->count;
  qsort(c->ix.by_name, c->ix.count, sizeof *c->ix.by_name, cmp_section_names);
  c->work = cc_calloc(c->cubin->kernels.count, sizeof *c->work, "kernel parameters");
  if (!c->work) return CUCORE_HOST_OUT_OF_MEMORY;
  c->nwork = c->cubin->kernels.count;
  return CUCORE_OK;
}

/* The module's symbol-keyed records (.nv.info) and its 'a' marker (.nv.compat, else
 * .note.nv.tkinfo). */
static cucore_status read_module_attrs(parse_ctx *c) {
  const cc_elf *e = c->elf;
  cc_cubin *out = c->cubin;
  const cc_elf_section *modinfo = cc_elf_find(e, ".nv.info");
  cucore_status st = CUCORE_OK;
  if (modinfo) st = walk_attrs(c, (uint32_t)(modinfo - e->sections), -1, NULL);
  if (st != CUCORE_OK) return st;
  int compat_a = 0;
  const cc_elf_section *compat = cc_elf_find(e, ".nv.compat");
  if (compat) st = walk_attrs(c, (uint32_t)(compat - e->sections), -1, &compat_a);
  if (st != CUCORE_OK) return st;
  if (compat_a) out->suffix = 'a';
  if (!out->suffix) out->suffix = suffix_from_tkinfo(e, out->arch);
  return CUCORE_OK;
}

/* Kernel `ki`: its own records, parameters, and the sizes of its sections. */
static cucore_status finish_kernel(parse_ctx *c, uint32_t ki, int reserved_window) {
  const cc_elf *e = c->elf;
  cucore_kernel_info *k = &c->cubin->kernels.items[ki];
  const cc_elf_section *s = lookup(&c->ix, ".nv.info.", k->name);
  cucore_status st = CUCORE_OK;
  if (s) st = walk_attrs(c, (uint32_t)(s - e->sections), ki, NULL);
  if (st == CUCORE_OK) st = finish_params(k, &c->work[ki]);
  if (st != CUCORE_OK) return st;
  s = lookup(&c->ix, ".text.", k->name);
  if (s && k->registers == 0) k->registers = (int32_t)(s->info >> 24);
  s = lookup(&c->ix, ".nv.constant0.", k->name);
  k->const_bytes = s ? clamp_size(s->size) : 0;
  s = lookup(&c->ix, ".nv.shared.", k->name);
  int32_t shared = s ? clamp_size(s->size) : 0;
  k->reserved_shared_bytes = reserved_window ? (shared < 1024 ? shared : 1024) : 0;
  k->static_shared_bytes = shared - k->reserved_shared_bytes;
  k->user_const_bytes = c->cubin->user_const_bytes;
  if (k->stack_bytes < k->local_bytes) k->stack_bytes = k->local_bytes;
  k->demangled = cc_demangle(k->name);
  cc_kinfo_param_types(k);
  cc_kinfo_finish_limits(k);
  return CUCORE_OK;
}

/* Every step after the ELF is open, in order; the caller cleans up. */
static cucore_status parse(parse_ctx *c) {
  cc_cubin *out = c->cubin;
  cucore_status st = read_header(c->elf, out);
  if (st == CUCORE_OK) st = find_symtab(c);
  if (st == CUCORE_OK) st = read_symbols(c);
  if (st == CUCORE_OK) st = check_unique_kernels(&out->kernels);
  if (st == CUCORE_OK) st = index_sections(c);
  if (st == CUCORE_OK) st = read_module_attrs(c);
  if (st != CUCORE_OK) return st;
  const cc_elf_section *c3 = lookup(&c->ix, ".nv.constant3", "");
  out->user_const_bytes = c3 ? clamp_size(c3->size) : 0;
  int reserved_window = out->arch >= 90 && lookup(&c->ix, ".nv.shared.reserved.0", "") != NULL;
  for (uint32_t ki = 0; ki < out->kernels.count && st == CUCORE_OK; ki++)
    st = finish_kernel(c, ki, reserved_window);
  return st;
}

cucore_status cc_cubin_parse(const uint8_t *d, size_t n, cc_cubin *out) {
  memset(out, 0, sizeof *out);
  cc_elf e;
  cucore_status st = cc_elf_open(d, n, "cubin", &e);
  if (st != CUCORE_OK) return st;
  parse_ctx c;
  memset(&c, 0, sizeof c);
  c.elf = &e;
  c.cubin = out;
  st = parse(&c);
  if (st != CUCORE_OK) {
    cc_klist_free(&out->kernels);
    cc_glist_free(&out->globals);
  }
  for (uint32_t i = 0; c.work && i < c.nwork; i++) free(c.work[i].params);
  free(c.work);
  free(c.ix.by_name);
  free(c.kernel_of_symbol);
  cc_elf_close(&e);
  return st;
}

void cc_cubin_free(cc_cubin *c) {
  cc_klist_free(&c->kernels);
  cc_glist_free(&c->globals);
  memset(c, 0, sizeof *c);
}
