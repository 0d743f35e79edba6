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

#define STT_OBJECT 1
#define STT_FUNC 2
#define STT_CUDA_OBJECT 13
#define STO_CUDA_ENTRY 0x10
#define STO_CUDA_MANAGED 0x04
#define EM_CUDA 190

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
    [0x01] = "PAD", [0x02] = "IMAGE_SLOT", [0x03] = "JUMPTABLE_RELOCS", [0x04] = "CTAIDZ_USED",
    [0x05] = "MAX_THREADS", [0x06] = "IMAGE_OFFSET", [0x07] = "IMAGE_SIZE",
    [0x08] = "TEXTURE_NORMALIZED", [0x09] = "SAMPLER_INIT", [0x0a] = "PARAM_CBANK",
    [0x0b] = "SMEM_PARAM_OFFSETS", [0x0c] = "CBANK_PARAM_OFFSETS", [0x0d] = "SYNC_STACK",
    [0x0e] = "TEXID_SAMPID_MAP", [0x0f] = "EXTERNS", [0x10] = "REQNTID", [0x11] = "FRAME_SIZE",
    [0x12] = "MIN_STACK_SIZE", [0x13] = "SAMPLER_FORCE_UNNORMALIZED",
    [0x14] = "BINDLESS_IMAGE_OFFSETS", [0x15] = "BINDLESS_TEXTURE_BANK",
    [0x16] = "BINDLESS_SURFACE_BANK", [0x17] = "KPARAM_INFO", [0x18] = "SMEM_PARAM_SIZE",
    [0x19] = "CBANK_PARAM_SIZE", [0x1a] = "QUERY_NUMATTRIB", [0x1b] = "MAXREG_COUNT",
    [0x1c] = "EXIT_INSTR_OFFSETS", [0x1d] = "S2RCTAID_INSTR_OFFSETS", [0x1e] = "CRS_STACK_SIZE",
    [0x1f] = "NEED_CNP_WRAPPER", [0x20] = "NEED_CNP_PATCH", [0x21] = "EXPLICIT_CACHING",
    [0x22] = "ISTYPEP_USED", [0x23] = "MAX_STACK_SIZE", [0x24] = "SUQ_USED",
    [0x25] = "LD_CACHEMOD_INSTR_OFFSETS", [0x26] = "LOAD_CACHE_REQUEST",
    [0x27] = "ATOM_SYS_INSTR_OFFSETS", [0x28] = "COOP_GROUP_INSTR_OFFSETS",
    [0x29] = "COOP_GROUP_MASK_REGIDS", [0x2a] = "SW1850030_WAR", [0x2b] = "WMMA_USED",
    [0x2c] = "HAS_PRE_V10_OBJECT", [0x2d] = "ATOMF16_EMUL_INSTR_OFFSETS",
    [0x2e] = "ATOM16_EMUL_INSTR_REG_MAP", [0x2f] = "REGCOUNT", [0x30] = "SW2393858_WAR",
    [0x31] = "INT_WARP_WIDE_INSTR_OFFSETS", [0x32] = "SHARED_SCRATCH", [0x33] = "STATISTICS",
    [0x34] = "INDIRECT_BRANCH_TARGETS", [0x35] = "SW2861232_WAR", [0x36] = "SW_WAR",
    [0x37] = "CUDA_API_VERSION", [0x38] = "NUM_MBARRIERS", [0x39] = "MBARRIER_INSTR_OFFSETS",
    [0x3a] = "COROUTINE_RESUME_ID_OFFSETS", [0x3b] = "SAM_REGION_STACK_SIZE",
    [0x3c] = "PER_REG_TARGET_PERF_STATS", [0x3d] = "CTA_PER_CLUSTER",
    [0x3e] = "EXPLICIT_CLUSTER", [0x3f] = "MAX_CLUSTER_RANK", [0x40] = "INSTR_REG_MAP",
    [0x41] = "RESERVED_SMEM_USED", [0x42] = "RESERVED_SMEM_0_SIZE",
    [0x43] = "UCODE_SECTION_DATA", [0x44] = "UNUSED_LOAD_BYTE_OFFSET",
    [0x45] = "KPARAM_INFO_V2", [0x46] = "SYSCALL_OFFSETS",
    [0x47] = "SW_WAR_MEMBAR_SYS_INSTR_OFFSETS", [0x48] = "GRAPHICS_GLOBAL_CBANK",
    [0x49] = "SHADER_TYPE", [0x4a] = "VRC_CTA_INIT_COUNT", [0x4b] = "TOOLS_PATCH_FUNC",
    [0x4c] = "NUM_BARRIERS", [0x4d] = "TEXMODE_INDEPENDENT", [0x4e] = "PERF_STATISTICS",
    [0x4f] = "AT_ENTRY_FRAGMENTS", [0x50] = "SPARSE_MMA_MASK", [0x51] = "TCGEN05_1CTA_USED",
    [0x52] = "TCGEN05_2CTA_USED", [0x53] = "GEN_ERRBAR_AT_EXIT", [0x54] = "REG_RECONFIG",
    [0x55] = "ANNOTATIONS", [0x56] = "SANITIZE", [0x57] = "STACK_CANARY_TRAP_OFFSETS",
    [0x58] = "STUB_FUNCTION_KIND", [0x59] = "LOCAL_CTA_ASYNC_STORE_OFFSETS",
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
  uint32_t nparams, cap;
  int have_param_bytes;
  uint32_t param_bytes;
} kernel_work;

typedef struct parse_ctx {
  const cc_elf *elf;
  cc_cubin *cubin;
  int32_t *kernel_of_symbol; /* symbol index -> kernel index, -1 when not a kernel */
  uint32_t nsyms;
  kernel_work *work;         /* one per kernel */
  uint32_t nwork;
  uint64_t walked;           /* bytes of attribute sections read */
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
  if (w->nparams == w->cap) {
    uint32_t cap = w->cap ? w->cap * 2 : 8;
    raw_param *np = cc_raw_realloc(w->params, (size_t)cap * sizeof *np);
    if (!np)
      return cc_fail(CUCORE_HOST_OUT_OF_MEMORY, "out of host memory reading kernel parameters");
    w->params = np;
    w->cap = cap;
  }
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

/* Walks the attribute records of section `secidx`. `kidx` is the kernel of a .nv.info.K
 * section, or -1 for the module's .nv.info (or .nv.compat: compat != NULL collects attribute
 * 9, the arch-specific 'a' marker). */
static cucore_status walk_attrs(parse_ctx *c, uint32_t secidx, int64_t kidx, int *compat_a) {
  const cc_elf *e = c->elf;
  const cc_elf_section *s = &e->sections[secidx];
  if (s->type == CC_SHT_NOBITS) return CUCORE_OK;
  /* Sections do not overlap in a real file, so what is walked adds up to the file at most;
   * more means sections share bytes, and walking them all could take quadratic time. */
  c->walked += s->size;
  if (c->walked > e->size)
    return cc_fail(CUCORE_INVALID_BINARY,
                   "cubin: section %u (%.160s): the attribute sections read so far add up to %llu "
                   "bytes, more than the %zu-byte file: they overlap",
                   secidx, s->name, (unsigned long long)c->walked, e->size);
  const uint8_t *p = e->data + s->offset;
  uint64_t len = s->size, pos = 0;
  cucore_kernel_info *k = kidx >= 0 ? &c->cubin->kernels.items[kidx] : NULL;
  kernel_work *w = kidx >= 0 ? &c->work[kidx] : NULL;
  char nb[48];
  while (pos < len) {
    if (len - pos < 4)
      return cc_fail(CUCORE_INVALID_BINARY,
                     "cubin: section %u (%.160s): %llu stray bytes at offset %llu; attribute records "
                     "are at least 4 bytes",
                     secidx, s->name, (unsigned long long)(len - pos), (unsigned long long)pos);
    unsigned fmt = p[pos], attr = p[pos + 1];
    uint32_t v16 = cc_le16(p + pos + 2);
    uint32_t plen = 0;
    if (fmt == 4) {
      plen = v16;
      if (!cc_range_ok(pos + 4, plen, len))
        return cc_fail(CUCORE_INVALID_BINARY,
                       "cubin: section %u (%.160s): %s at offset %llu declares %u bytes of data but "
                       "only %llu remain in the section",
                       secidx, s->name, attr_name(attr, nb, sizeof nb), (unsigned long long)pos,
                       plen, (unsigned long long)(len - pos - 4));
    } else if (fmt < 1 || fmt > 3) {
      return cc_fail(CUCORE_INVALID_BINARY,
                     "cubin: section %u (%.160s): unknown attribute format %u at offset %llu "
                     "(expected 1 to 4)",
                     secidx, s->name, fmt, (unsigned long long)pos);
    }
    const uint8_t *pl = p + pos + 4;
    uint32_t value = fmt == 2 ? (v16 & 0xff) : v16; /* formats 2 and 3 */
    if (compat_a) {
      if (attr == 9 && fmt == 2 && value == 1) *compat_a = 1;
      pos += 4 + plen;
      continue;
    }
    switch (attr) {
    case EIATTR_REGCOUNT:
    case EIATTR_FRAME_SIZE:
    case EIATTR_MIN_STACK_SIZE:
    case EIATTR_MAX_STACK_SIZE:
      if (fmt == 4) {
        if (plen < 8) return short_payload(e, secidx, pos, attr, plen, 8);
        apply_symbol_value(c, attr, cc_le32(pl), cc_le32(pl + 4));
      }
      break;
    default:
      if (!k) break; /* other attributes are per kernel */
      switch (attr) {
      case EIATTR_KPARAM_INFO:
      case EIATTR_KPARAM_INFO_V2: {
        if (fmt != 4) break;
        if (plen < 12) return short_payload(e, secidx, pos, attr, plen, 12);
        uint32_t word = cc_le32(pl + 8);
        raw_param rp = {cc_le16(pl + 4), cc_le16(pl + 6), 0, 0};
        /* The last word: V1 has the size in bits 18-31 and a pointer's address space in bits
         * 8-11 (0 for values; 5 generic, as nvcc 13 marks every pointer for sm_100 and newer;
         * 4 global, from `.ptr .global` in PTX), with log2 of the pointee's alignment in bits
         * 0-7. V2 has the size in bits 0-15 and the address space in bits 24-27. */
        if (attr == EIATTR_KPARAM_INFO) {
          rp.size = word >> 18;
          rp.pointer = ((word >> 8) & 0xf) != 0;
        } else {
          rp.size = word & 0xffff;
          rp.pointer = ((word >> 24) & 0xf) != 0;
        }
        cucore_status st = add_raw_param(w, rp);
        if (st != CUCORE_OK) return st;
        break;
      }
      case EIATTR_PARAM_CBANK:
        if (fmt != 4) break;
        if (plen < 8) return short_payload(e, secidx, pos, attr, plen, 8);
        k->param_base = cc_le16(pl + 4);
        if (!w->have_param_bytes) {
          w->param_bytes = cc_le16(pl + 6);
          w->have_param_bytes = 1;
        }
        break;
      case EIATTR_CBANK_PARAM_SIZE:
        if (fmt == 3) {
          w->param_bytes = value;
          w->have_param_bytes = 1;
        }
        break;
      case EIATTR_MAX_THREADS:
        if (fmt != 4) break;
        if (plen < 12) return short_payload(e, secidx, pos, attr, plen, 12);
        read3(pl, k->maxntid);
        break;
      case EIATTR_REQNTID:
        if (fmt != 4) break;
        if (plen < 12) return short_payload(e, secidx, pos, attr, plen, 12);
        read3(pl, k->reqntid);
        break;
      case EIATTR_CTA_PER_CLUSTER:
        if (fmt != 4) break;
        if (plen < 12) return short_payload(e, secidx, pos, attr, plen, 12);
        read3(pl, k->cluster_dims);
        break;
      case EIATTR_EXPLICIT_CLUSTER: k->explicit_cluster = 1; break;
      case EIATTR_MAX_CLUSTER_RANK:
        if (fmt == 4) {
          if (plen < 4) return short_payload(e, secidx, pos, attr, plen, 4);
          k->max_blocks_per_cluster = cc_le32(pl);
        } else {
          k->max_blocks_per_cluster = value;
        }
        break;
      case EIATTR_MAXREG_COUNT:
        if (fmt == 3 || fmt == 2) k->max_registers = value >= 0xff ? 0 : value;
        break;
      case EIATTR_NUM_BARRIERS:
        if (fmt == 4) {
          if (plen < 4) return short_payload(e, secidx, pos, attr, plen, 4);
          k->barriers = (int32_t)(cc_le32(pl) & 0x7fffffff);
        } else {
          k->barriers = (int32_t)value;
        }
        break;
      case EIATTR_COOP_GROUP_INSTR_OFFSETS: k->uses_grid_sync = 1; break;
      default: break; /* unknown or unused attributes are skipped */
      }
    }
    pos += 4 + plen;
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
      return cc_fail(CUCORE_INVALID_BINARY,
                     "cubin: kernel `%.200s`: EIATTR_KPARAM_INFO describes parameter ordinal %u, but "
                     "only %u parameter records are present (ordinals 0 to %u expected)",
                     k->name, rp->ordinal, n, n ? n - 1 : 0);
    if (rp->size == 0)
      return cc_fail(CUCORE_INVALID_BINARY,
                     "cubin: kernel `%.200s`: parameter %u has size 0", k->name, rp->ordinal);
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
  if (!s || s->type == CC_SHT_NOBITS) return 0;
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
  if (!s || s->type == CC_SHT_NOBITS || s->size < 12) return;
  const uint8_t *p = e->data + s->offset;
  uint64_t namesz = cc_le32(p), descsz = cc_le32(p + 4);
  uint64_t desc = 12 + ((namesz + 3) & ~(uint64_t)3);
  if (namesz > s->size || descsz < 6 || !cc_range_ok(desc, descsz, s->size)) return;
  if (cc_le16(p + desc) != 2) return; /* a layout this reader does not know */
  out->virtual_arch = cc_le16(p + desc + 2);
  out->toolkit_version = cc_le16(p + desc + 4);
}

/* Records data symbol `i` when it is a module variable (a symbol of .nv.global,
 * .nv.global.init or .nv.constant3); other data symbols are skipped. */
static cucore_status add_global(const cc_elf *e, const cc_elf_section *symtab,
                                const cc_elf_section *strtab, uint64_t strtab_last_nul,
                                uint32_t i, const uint8_t *sym, uint64_t *name_bytes,
                                uint64_t *scanned, cc_cubin *out) {
  uint32_t shndx = cc_le16(sym + 6);
  if (shndx == 0 || shndx >= e->count) return CUCORE_OK; /* undefined, or a special index */
  const cc_elf_section *sec = &e->sections[shndx];
  cucore_global_kind kind;
  int initialized = 0;
  if (strcmp(sec->name, ".nv.constant3") == 0) {
    kind = CUCORE_GLOBAL_CONSTANT;
  } else if (strcmp(sec->name, ".nv.global") == 0) {
    kind = (sym[5] & STO_CUDA_MANAGED) ? CUCORE_GLOBAL_MANAGED : CUCORE_GLOBAL_DEVICE;
  } else if (strcmp(sec->name, ".nv.global.init") == 0) {
    kind = (sym[5] & STO_CUDA_MANAGED) ? CUCORE_GLOBAL_MANAGED : CUCORE_GLOBAL_DEVICE;
    initialized = 1;
  } else {
    return CUCORE_OK;
  }
  uint32_t no = cc_le32(sym);
  if (no >= strtab->size || strtab_last_nul == UINT64_MAX || no > strtab_last_nul)
    return cc_fail(CUCORE_INVALID_BINARY,
                   "cubin: symbol %u: its name (offset %u) is not a terminated string inside the "
                   "string table (section %u, %llu bytes)",
                   i, no, symtab->link, (unsigned long long)strtab->size);
  const char *name = (const char *)e->data + strtab->offset + no;
  if (!name[0]) return CUCORE_OK; /* an anonymous object: nothing to look up by name */
  uint64_t value = cc_le64(sym + 8), size = cc_le64(sym + 16);
  if (!cc_range_ok(value, size, sec->size))
    return cc_fail(CUCORE_INVALID_BINARY,
                   "cubin: symbol %u (`%.160s`): %llu bytes at offset %llu run past the end of "
                   "section %u (%.160s, %llu bytes)",
                   i, name, (unsigned long long)size, (unsigned long long)value, shndx, sec->name,
                   (unsigned long long)sec->size);
  size_t nlen = strnlen(name, CC_NAME_BYTES_MAX(e->size) + 1);
  *name_bytes += nlen;
  if (*name_bytes > CC_NAME_BYTES_MAX(e->size))
    return cc_fail(CUCORE_INVALID_BINARY,
                   "cubin: the symbol names add up to more than %llu bytes in a file of %zu "
                   "bytes: they overlap far more than any real file's",
                   (unsigned long long)CC_NAME_BYTES_MAX(e->size), e->size);
  if (kind == CUCORE_GLOBAL_CONSTANT && sec->type != CC_SHT_NOBITS) {
    /* Non-zero bytes mean an initial value. Symbols may overlap in a hostile file: the bytes
     * looked at add up to the file's size at most, so the scan stays linear. */
    const uint8_t *p = e->data + sec->offset + value;
    for (uint64_t b = 0; b < size && !initialized && *scanned < e->size; b++, (*scanned)++)
      initialized = p[b] != 0;
  }
  cucore_global_info *g = cc_global_list_add(&out->globals, name, nlen);
  if (!g) return CUCORE_HOST_OUT_OF_MEMORY;
  g->size = size;
  g->kind = kind;
  g->initialized = initialized;
  return CUCORE_OK;
}

cucore_status cc_cubin_parse(const uint8_t *d, size_t n, cc_cubin *out) {
  memset(out, 0, sizeof *out);
  cc_elf e;
  cucore_status st = cc_elf_open(d, n, "cubin", &e);
  if (st != CUCORE_OK) return st;
  parse_ctx c = {&e, out, NULL, 0, NULL, 0, 0};
  name_index ix = {NULL, 0};
  if (e.machine != EM_CUDA) {
    st = cc_fail(CUCORE_INVALID_BINARY,
                 "cubin: e_machine is %u at offset 0x12, not EM_CUDA (190): this ELF holds no "
                 "CUDA device code",
                 e.machine);
    goto fail;
  }
  if (e.type != 1 && e.type != 2) {
    st = cc_fail(CUCORE_INVALID_BINARY,
                 "cubin: ELF type %u at offset 0x10; expected ET_EXEC (2) or ET_REL (1)", e.type);
    goto fail;
  }
  out->relocatable = e.type == 1;
  out->abi_version = e.abi_version;
  if (e.abi_version >= 8) {
    out->arch = (int)((e.flags >> 8) & 0xff);
    if (e.flags & 0x8) out->suffix = 'a';
    out->debug = (e.flags >> 27) & 1;
    read_cuinfo(&e, out);
  } else {
    out->arch = (int)(e.flags & 0xff);
    if (e.flags & 0x800) out->suffix = 'a';
    out->virtual_arch = (int)((e.flags >> 16) & 0xff);
  }
  if (cc_elf_find(&e, ".debug_info")) out->debug = 1;

  /* The symbol table and its strings. */
  const cc_elf_section *symtab = NULL;
  for (uint32_t i = 0; i < e.count; i++)
    if (e.sections[i].type == CC_SHT_SYMTAB) {
      symtab = &e.sections[i];
      break;
    }
  if (!symtab) {
    st = cc_fail(CUCORE_INVALID_BINARY, "cubin: no symbol table (CC_SHT_SYMTAB section), so no "
                                        "kernels can be found");
    goto fail;
  }
  uint32_t symidx = (uint32_t)(symtab - e.sections);
  if (symtab->entsize != 24) {
    st = cc_fail(CUCORE_INVALID_BINARY,
                 "cubin: section %u (%.160s): symbol entry size %llu; ELF64 symbols are 24 bytes",
                 symidx, symtab->name, (unsigned long long)symtab->entsize);
    goto fail;
  }
  if (symtab->link >= e.count || e.sections[symtab->link].type != CC_SHT_STRTAB) {
    st = cc_fail(CUCORE_INVALID_BINARY,
                 "cubin: section %u (%.160s): its string table (sh_link %u) is not a string table "
                 "section (%u sections)",
                 symidx, symtab->name, symtab->link, e.count);
    goto fail;
  }
  const cc_elf_section *strtab = &e.sections[symtab->link];
  uint64_t strtab_last_nul = cc_last_nul(d + strtab->offset, strtab->size), kname_bytes = 0;
  uint64_t const_scanned = 0;
  c.nsyms = (uint32_t)(symtab->size / 24);
  c.kernel_of_symbol = cc_malloc((size_t)c.nsyms * sizeof(int32_t) + 1, "symbol map");
  if (!c.kernel_of_symbol) {
    st = CUCORE_HOST_OUT_OF_MEMORY;
    goto fail;
  }
  for (uint32_t i = 0; i < c.nsyms; i++) {
    c.kernel_of_symbol[i] = -1;
    const uint8_t *sym = d + symtab->offset + (uint64_t)i * 24;
    if ((sym[4] & 0xf) == STT_OBJECT || (sym[4] & 0xf) == STT_CUDA_OBJECT) {
      st = add_global(&e, symtab, strtab, strtab_last_nul, i, sym, &kname_bytes,
                      &const_scanned, out);
      if (st != CUCORE_OK) goto fail;
      continue;
    }
    if ((sym[4] & 0xf) != STT_FUNC || !(sym[5] & STO_CUDA_ENTRY)) continue;
    uint32_t no = cc_le32(sym);
    if (no >= strtab->size || strtab_last_nul == UINT64_MAX || no > strtab_last_nul) {
      st = cc_fail(CUCORE_INVALID_BINARY,
                   "cubin: symbol %u: its name (offset %u) is not a terminated string inside the "
                   "string table (section %u, %llu bytes)",
                   i, no, symtab->link, (unsigned long long)strtab->size);
      goto fail;
    }
    const char *name = (const char *)d + strtab->offset + no;
    if (!name[0]) {
      st = cc_fail(CUCORE_INVALID_BINARY, "cubin: symbol %u is a kernel entry with no name", i);
      goto fail;
    }
    size_t nlen = strnlen(name, CC_NAME_BYTES_MAX(n) + 1);
    kname_bytes += nlen;
    if (kname_bytes > CC_NAME_BYTES_MAX(n)) {
      st = cc_fail(CUCORE_INVALID_BINARY,
                   "cubin: the kernel names add up to more than %llu bytes in a file of %zu "
                   "bytes: they overlap far more than any real file's",
                   (unsigned long long)CC_NAME_BYTES_MAX(n), n);
      goto fail;
    }
    c.kernel_of_symbol[i] = (int32_t)out->kernels.count;
    if (!cc_kernel_list_add(&out->kernels, name, nlen)) {
      st = CUCORE_HOST_OUT_OF_MEMORY;
      goto fail;
    }
  }

  /* Kernel names are unique in a valid cubin (and a duplicate would be read twice). */
  if (out->kernels.count > 1) {
    /* Sorted by a hash of the name, so equal names meet without long string compares. */
    hashed_name *names = cc_calloc(out->kernels.count, sizeof *names, "kernel names");
    if (!names) {
      st = CUCORE_HOST_OUT_OF_MEMORY;
      goto fail;
    }
    for (uint32_t i = 0; i < out->kernels.count; i++) {
      names[i].name = out->kernels.items[i].name;
      names[i].hash = hash_name(names[i].name);
    }
    qsort(names, out->kernels.count, sizeof *names, cmp_hashed);
    for (uint32_t i = 1; i < out->kernels.count; i++)
      if (names[i - 1].hash == names[i].hash && strcmp(names[i - 1].name, names[i].name) == 0) {
        st = cc_fail(CUCORE_INVALID_BINARY,
                     "cubin: kernel `%.200s` is defined by two entry symbols", names[i].name);
        free(names);
        goto fail;
      }
    free(names);
  }

  /* Sections by name. */
  ix.by_name = cc_calloc(e.count, sizeof *ix.by_name, "section index");
  if (!ix.by_name) {
    st = CUCORE_HOST_OUT_OF_MEMORY;
    goto fail;
  }
  for (uint32_t i = 0; i < e.count; i++) ix.by_name[i] = &e.sections[i];
  ix.count = e.count;
  qsort(ix.by_name, ix.count, sizeof *ix.by_name, cmp_section_names);

  c.work = cc_calloc(out->kernels.count, sizeof *c.work, "kernel parameters");
  if (!c.work) {
    st = CUCORE_HOST_OUT_OF_MEMORY;
    goto fail;
  }
  c.nwork = out->kernels.count;
  /* The module's symbol-keyed records, then each kernel's own. */
  const cc_elf_section *modinfo = cc_elf_find(&e, ".nv.info");
  if (modinfo) {
    st = walk_attrs(&c, (uint32_t)(modinfo - e.sections), -1, NULL);
    if (st != CUCORE_OK) goto fail;
  }
  int compat_a = 0;
  const cc_elf_section *compat = cc_elf_find(&e, ".nv.compat");
  if (compat) {
    st = walk_attrs(&c, (uint32_t)(compat - e.sections), -1, &compat_a);
    if (st != CUCORE_OK) goto fail;
  }
  if (compat_a) out->suffix = 'a';
  if (!out->suffix) out->suffix = suffix_from_tkinfo(&e, out->arch);

  const cc_elf_section *c3 = lookup(&ix, ".nv.constant3", "");
  out->user_const_bytes = c3 ? clamp_size(c3->size) : 0;
  int reserved_window = out->arch >= 90 && lookup(&ix, ".nv.shared.reserved.0", "") != NULL;

  for (uint32_t ki = 0; ki < out->kernels.count; ki++) {
    cucore_kernel_info *k = &out->kernels.items[ki];
    const cc_elf_section *s = lookup(&ix, ".nv.info.", k->name);
    if (s) {
      st = walk_attrs(&c, (uint32_t)(s - e.sections), ki, NULL);
      if (st != CUCORE_OK) goto fail;
    }
    st = finish_params(k, &c.work[ki]);
    if (st != CUCORE_OK) goto fail;
    s = lookup(&ix, ".text.", k->name);
    if (s && k->registers == 0) k->registers = (int32_t)(s->info >> 24);
    s = lookup(&ix, ".nv.constant0.", k->name);
    k->const_bytes = s ? clamp_size(s->size) : 0;
    s = lookup(&ix, ".nv.shared.", k->name);
    int32_t shared = s ? clamp_size(s->size) : 0;
    k->reserved_shared_bytes = reserved_window ? (shared < 1024 ? shared : 1024) : 0;
    k->static_shared_bytes = shared - k->reserved_shared_bytes;
    k->user_const_bytes = out->user_const_bytes;
    if (k->stack_bytes < k->local_bytes) k->stack_bytes = k->local_bytes;
    k->demangled = cc_demangle(k->name);
    cc_kernel_param_types(k);
    cc_kernel_finish_limits(k);
  }
  st = CUCORE_OK;
  goto done;
fail:
  cc_kernel_list_free(&out->kernels);
  cc_global_list_free(&out->globals);
done:
  for (uint32_t i = 0; c.work && i < c.nwork; i++) free(c.work[i].params);
  free(c.work);
  free(ix.by_name);
  free(c.kernel_of_symbol);
  cc_elf_close(&e);
  return st;
}

void cc_cubin_free(cc_cubin *c) {
  cc_kernel_list_free(&c->kernels);
  cc_global_list_free(&c->globals);
  memset(c, 0, sizeof *c);
}
