/*
 * fatbin.c -- fatbin containers: listing, choosing an entry for an arch, and extracting it
 * (decompressing when needed).
 *
 * Layout (little-endian), as nvcc/fatbinary 13.0 write it:
 *   container header, 16 bytes: u32 magic 0xBA55ED50, u16 version (1), u16 header size (16),
 *                               u64 bytes of entries that follow
 *   entry header, >= 64 bytes:  +0 u16 kind (1 PTX, 2 ELF, 8 LTO-IR), +2 u16 (0x0101),
 *                               +4 u32 header size, +8 u64 bytes stored after the header
 *                               (padded to 8), +16 u32 compressed size (0 when stored plain),
 *                               +24 u16 minor and +26 u16 major version (ELF format 1.8, or
 *                               the PTX ISA), +28 u32 arch (90 for sm_90), +40 u64 flags,
 *                               +56 u64 decompressed size (0 when stored plain); newer
 *                               entries carry more header after +64 (compatibility and
 *                               LTO options), which this reader skips
 *   flags: 0x1 64-bit, 0x2 debug (-G), 0x10 Linux, 0x2000 LZ4-compressed, 0x8000
 *          zstd-compressed, 0x100000 arch-specific ('a'), 0x200000 family-specific ('f');
 *          compressed LTO-IR has 0x10000 as well and is not a zstd frame: "unknown"
 * The entry data starts right after its header; the next entry after the stored bytes.
 *
 * Compression: with 0x2000 the data is one LZ4 block (the documented LZ4 block format:
 * sequences of a token, literals, a 2-byte offset and a match length); with 0x8000 it is one
 * zstd frame (RFC 8878), decompressed by the system's libzstd.so.1 loaded at run time. Both
 * were checked byte for byte against the same entries written with --no-compress.
 */
#define _GNU_SOURCE
#include "binary/fatbin.h"

#include "base/phase.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define FATBIN_MAGIC 0xBA55ED50u
#define FLAG_DEBUG 0x2ull
#define FLAG_LZ4 0x2000ull
#define FLAG_ZSTD 0x8000ull
#define FLAG_ARCH_SPECIFIC 0x100000ull
#define FLAG_FAMILY_SPECIFIC 0x200000ull

void cc_fatbin_free(cc_fatbin *f) {
  free(f->entries);
  free(f->compressed_sizes);
  memset(f, 0, sizeof *f);
}

/* Appends an entry and its compressed size; caps[0] and caps[1] are what the two arrays hold
 * (cc_grow). */
static cucore_status add_entry(cc_fatbin *f, size_t caps[2], const cucore_fatbin_entry *e,
                               uint64_t csize) {
  size_t need = (size_t)f->count + 1;
  cucore_fatbin_entry *n = cc_grow(f->entries, &caps[0], need, sizeof *n, "the fatbin entries");
  if (!n) return CUCORE_HOST_OUT_OF_MEMORY;
  f->entries = n;
  uint64_t *c = cc_grow(f->compressed_sizes, &caps[1], need, sizeof *c, "the fatbin entries");
  if (!c) return CUCORE_HOST_OUT_OF_MEMORY;
  f->compressed_sizes = c;
  f->compressed_sizes[f->count] = csize;
  f->entries[f->count++] = *e;
  return CUCORE_OK;
}

/* The entry header at `pos`: at least 64 bytes, and header and data within the container. */
static cucore_status check_header(const uint8_t *h, uint64_t pos, uint64_t end, uint32_t index) {
  if (end - pos < 64)
    return cc_fail(CUCORE_INVALID_BINARY,
                   "fatbin: entry %u at offset %llu: only %llu bytes remain in the container; an "
                   "entry header is at least 64 bytes",
                   index, (unsigned long long)pos, (unsigned long long)(end - pos));
  uint32_t hsize = cc_le32(h + 4);
  uint64_t stored = cc_le64(h + 8);
  if (hsize < 64 || !cc_range_ok(pos, hsize, end))
    return cc_fail(CUCORE_INVALID_BINARY,
                   "fatbin: entry %u at offset %llu: header size %u must be at least 64 and end "
                   "within the container (which ends at offset %llu)",
                   index, (unsigned long long)pos, hsize, (unsigned long long)end);
  if (!cc_range_ok(pos + hsize, stored, end))
    return cc_fail(CUCORE_INVALID_BINARY,
                   "fatbin: entry %u at offset %llu extends past the end of its container: data "
                   "at offset %llu + size %llu > %llu",
                   index, (unsigned long long)pos, (unsigned long long)(pos + hsize),
                   (unsigned long long)stored, (unsigned long long)end);
  return CUCORE_OK;
}

/* The header's fields: kind, version, arch and its name, flags, where the data is. */
static void read_fields(const uint8_t *h, uint64_t pos, cucore_fatbin_entry *e) {
  uint32_t hsize = cc_le32(h + 4);
  memset(e, 0, sizeof *e);
  e->raw_kind = cc_le16(h);
  e->version_minor = cc_le16(h + 24);
  e->version_major = cc_le16(h + 26);
  e->arch = (int)(cc_le32(h + 28) > 100000 ? 0 : cc_le32(h + 28));
  e->flags = cc_le64(h + 40);
  e->offset = pos + hsize;
  e->stored_size = e->size = cc_le64(h + 8);
  e->debug = (e->flags & FLAG_DEBUG) != 0;
  e->compression = "none";
  if (e->flags & FLAG_ARCH_SPECIFIC)
    e->arch_suffix = 'a';
  else if (e->flags & FLAG_FAMILY_SPECIFIC)
    e->arch_suffix = 'f';
  const char *prefix = "unknown";
  switch (e->raw_kind) {
  case 1:
    e->type = CUCORE_CODE_PTX;
    prefix = "compute";
    break;
  case 2:
    e->type = CUCORE_CODE_CUBIN;
    prefix = "sm";
    break;
  case 8:
    e->type = CUCORE_CODE_LTOIR;
    prefix = "lto";
    break;
  default: e->type = CUCORE_CODE_AUTO; break;
  }
  cc_arch_name(e->arch, e->arch_suffix, prefix, e->arch_name, sizeof e->arch_name);
}

/* A compressed entry's sizes checked (one method, a believable ratio); *csize_out the
 * compressed bytes, the first of the stored ones. */
static cucore_status read_compression(const uint8_t *h, uint64_t pos, uint32_t index,
                                      cucore_fatbin_entry *e, uint64_t *csize_out) {
  if ((e->flags & FLAG_LZ4) && (e->flags & FLAG_ZSTD))
    return cc_fail(CUCORE_INVALID_BINARY,
                   "fatbin: entry %u (%s) at offset %llu is flagged both LZ4- and "
                   "zstd-compressed (flags 0x%llx)",
                   index, e->arch_name, (unsigned long long)pos, (unsigned long long)e->flags);
  uint64_t csize = cc_le32(h + 16), dsize = cc_le64(h + 56), stored = e->stored_size;
  e->compression = (e->flags & FLAG_LZ4) ? "lz4" : "zstd";
  if (csize == 0 || csize > stored)
    return cc_fail(CUCORE_INVALID_BINARY,
                   "fatbin: entry %u (%s) at offset %llu: compressed size %llu must be between "
                   "1 and the %llu bytes stored",
                   index, e->arch_name, (unsigned long long)pos, (unsigned long long)csize,
                   (unsigned long long)stored);
  if (dsize == 0 || dsize > CC_DECOMPRESSED_MAX || dsize / CC_DECOMPRESS_RATIO_MAX > csize)
    return cc_fail(CUCORE_INVALID_BINARY,
                   "fatbin: entry %u (%s) at offset %llu: a decompressed size of %llu bytes from "
                   "%llu compressed bytes is not believable (at most %llu bytes and %u times "
                   "the compressed size are accepted)",
                   index, e->arch_name, (unsigned long long)pos, (unsigned long long)dsize,
                   (unsigned long long)csize, (unsigned long long)CC_DECOMPRESSED_MAX,
                   CC_DECOMPRESS_RATIO_MAX);
  e->size = dsize;
  *csize_out = csize;
  /* A zstd frame starts with 28 b5 2f fd. Compressed LTO-IR (flag 0x10000 beside 0x8000)
   * is stored some other way this reader does not know. */
  if ((e->flags & FLAG_ZSTD) && (stored < 4 || cc_le32(h + cc_le32(h + 4)) != 0xFD2FB528u))
    e->compression = "unknown";
  return CUCORE_OK;
}

static cucore_status parse_entry(const uint8_t *base, uint64_t pos, uint64_t end, uint32_t index,
                                 cucore_fatbin_entry *e, uint64_t *csize_out, uint64_t *next) {
  *csize_out = 0;
  const uint8_t *h = base + pos;
  cucore_status st = check_header(h, pos, end, index);
  if (st != CUCORE_OK) return st;
  read_fields(h, pos, e);
  if (e->flags & (FLAG_LZ4 | FLAG_ZSTD)) st = read_compression(h, pos, index, e, csize_out);
  *next = e->offset + e->stored_size;
  return st;
}

cucore_status cc_fatbin_parse(const uint8_t *base, size_t size, uint64_t start, uint64_t len,
                              cc_fatbin *out) {
  memset(out, 0, sizeof *out);
  if (!cc_range_ok(start, len, size))
    return cc_fail(CUCORE_INVALID_BINARY,
                   "fatbin: offset %llu + size %llu lies outside the %zu-byte buffer",
                   (unsigned long long)start, (unsigned long long)len, size);
  uint64_t pos = start, end = start + len;
  size_t caps[2] = {0, 0};
  uint32_t containers = 0;
  cucore_status st = CUCORE_OK;
  while (pos < end) {
    if (containers > 0) {
      /* Containers in a section are padded apart with zero bytes. */
      while (pos < end && base[pos] == 0) pos++;
      if (pos == end) break;
    }
    if (end - pos < 16) {
      st = cc_fail(CUCORE_INVALID_BINARY,
                   "fatbin: %llu bytes at offset %llu are too few for a container header (16 "
                   "bytes)",
                   (unsigned long long)(end - pos), (unsigned long long)pos);
      break;
    }
    uint32_t magic = cc_le32(base + pos);
    if (magic != FATBIN_MAGIC) {
      st = cc_fail(CUCORE_INVALID_BINARY,
                   "fatbin: expected the container magic 0xBA55ED50 at offset %llu, found 0x%08x",
                   (unsigned long long)pos, magic);
      break;
    }
    uint32_t hsize = cc_le16(base + pos + 6);
    uint64_t csize = cc_le64(base + pos + 8);
    if (hsize < 16 || !cc_range_ok(pos, hsize, end)) {
      st = cc_fail(CUCORE_INVALID_BINARY,
                   "fatbin: container at offset %llu: header size %u must be at least 16 and fit "
                   "in the %llu bytes that remain",
                   (unsigned long long)pos, hsize, (unsigned long long)(end - pos));
      break;
    }
    if (!cc_range_ok(pos + hsize, csize, end)) {
      st = cc_fail(CUCORE_INVALID_BINARY,
                   "fatbin: container at offset %llu extends past the end of the input: entries "
                   "at offset %llu + size %llu > %llu bytes",
                   (unsigned long long)pos, (unsigned long long)(pos + hsize),
                   (unsigned long long)csize, (unsigned long long)end);
      break;
    }
    uint64_t epos = pos + hsize, eend = pos + hsize + csize;
    while (epos < eend && st == CUCORE_OK) {
      cucore_fatbin_entry e;
      uint64_t next = eend, packed = 0;
      st = parse_entry(base, epos, eend, out->count, &e, &packed, &next);
      if (st == CUCORE_OK) st = add_entry(out, caps, &e, packed);
      epos = next;
    }
    if (st != CUCORE_OK) break;
    containers++;
    pos = eend;
  }
  if (st != CUCORE_OK) {
    cc_fatbin_free(out);
    return st;
  }
  out->base = base;
  out->size = size;
  return CUCORE_OK;
}

/* ---- choosing an entry ----------------------------------------------------------------------- */

static int better(const cucore_fatbin_entry *cand, const cucore_fatbin_entry *best) {
  if (!best) return 1;
  if (cand->arch != best->arch) return cand->arch > best->arch;
  return cand->arch_suffix == 'a' && best->arch_suffix != 'a';
}

cucore_status cc_fatbin_select(const cc_fatbin *f, int arch, uint32_t *index) {
  const cucore_fatbin_entry *best = NULL;
  /* 1: a cubin for exactly this arch; with arch 0 the newest cubin. */
  for (uint32_t i = 0; i < f->count; i++) {
    const cucore_fatbin_entry *e = &f->entries[i];
    if (e->type != CUCORE_CODE_CUBIN) continue;
    if ((arch == 0 || e->arch == arch) && better(e, best)) best = e;
  }
  /* 2: the newest cubin of the same major version and an older minor ('a': exact only). */
  if (!best && arch)
    for (uint32_t i = 0; i < f->count; i++) {
      const cucore_fatbin_entry *e = &f->entries[i];
      if (e->type != CUCORE_CODE_CUBIN || e->arch_suffix == 'a') continue;
      if (e->arch / 10 == arch / 10 && e->arch <= arch && better(e, best)) best = e;
    }
  /* 3: the newest PTX the arch can JIT ('a': exact arch; 'f': same major version). */
  if (!best)
    for (uint32_t i = 0; i < f->count; i++) {
      const cucore_fatbin_entry *e = &f->entries[i];
      if (e->type != CUCORE_CODE_PTX) continue;
      if (arch) {
        if (e->arch > arch) continue;
        if (e->arch_suffix == 'a' && e->arch != arch) continue;
        if (e->arch_suffix == 'f' && e->arch / 10 != arch / 10) continue;
      }
      if (better(e, best)) best = e;
    }
  if (best) {
    *index = (uint32_t)(best - f->entries);
    return CUCORE_OK;
  }
  char list[512] = "";
  size_t used = 0;
  for (uint32_t i = 0; i < f->count && used < sizeof list - 32; i++)
    used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "",
                             f->entries[i].arch_name);
  if (f->count == 0) return cc_fail(CUCORE_NOT_FOUND, "the fatbin holds no entries");
  if (arch == 0)
    return cc_fail(CUCORE_NOT_FOUND,
                   "the fatbin holds no cubin and no PTX, only: %s (LTO-IR must be linked with "
                   "nvJitLink first)",
                   list);
  return cc_fail(CUCORE_NOT_FOUND,
                 "no entry of the fatbin can run on sm_%d; it holds: %s (a cubin runs on its own "
                 "major version at the same or a newer minor, an 'a' cubin only on its exact "
                 "arch; PTX on its arch or newer)",
                 arch, list);
}

/* ---- decompression --------------------------------------------------------------------------- */

/* Reads an LZ4 length extension: bytes of 255 continue it. */
static int lz4_length(const uint8_t *src, size_t n, size_t *ip, size_t *len, size_t limit) {
  for (;;) {
    if (*ip >= n) return 0;
    uint8_t b = src[(*ip)++];
    *len += b;
    if (*len > limit) return 0;
    if (b != 255) return 1;
  }
}

/* The decoder; on failure writes why into err and returns -1. */
static int lz4_core(const uint8_t *src, size_t n, uint8_t *dst, size_t dn, char *err,
                    size_t errlen) {
  size_t ip = 0, op = 0;
  while (ip < n) {
    uint8_t token = src[ip++];
    size_t lit = token >> 4;
    if (lit == 15 && !lz4_length(src, n, &ip, &lit, dn)) {
      snprintf(err, errlen,
               "a literal length runs past the input or the %zu-byte output at input offset %zu",
               dn, ip);
      return -1;
    }
    if (lit > n - ip || lit > dn - op) {
      snprintf(err, errlen,
               "%zu literal bytes at input offset %zu run past the input (%zu bytes) or the "
               "output (%zu of %zu bytes written)",
               lit, ip, n, op, dn);
      return -1;
    }
    memcpy(dst + op, src + ip, lit);
    ip += lit;
    op += lit;
    if (ip == n) break; /* the last sequence has literals only */
    if (n - ip < 2) {
      snprintf(err, errlen, "truncated match offset at input offset %zu", ip);
      return -1;
    }
    size_t offset = cc_le16(src + ip);
    ip += 2;
    if (offset == 0 || offset > op) {
      snprintf(err, errlen,
               "match offset %zu at input offset %zu points before the start of the output "
               "(%zu bytes written)",
               offset, ip - 2, op);
      return -1;
    }
    size_t mlen = token & 15;
    if (mlen == 15 && !lz4_length(src, n, &ip, &mlen, dn)) {
      snprintf(err, errlen, "a match length runs past the input or the output at input offset %zu",
               ip);
      return -1;
    }
    mlen += 4;
    if (mlen > dn - op) {
      snprintf(err, errlen, "a %zu-byte match at output offset %zu runs past the %zu-byte output",
               mlen, op, dn);
      return -1;
    }
    for (size_t i = 0; i < mlen; i++, op++) dst[op] = dst[op - offset];
  }
  if (op != dn) {
    snprintf(err, errlen, "%zu bytes came out where %zu were expected", op, dn);
    return -1;
  }
  return 0;
}

cucore_status cc_lz4_decompress(const uint8_t *src, size_t n, uint8_t *dst, size_t dn) {
  char err[256];
  if (lz4_core(src, n, dst, dn, err, sizeof err))
    return cc_fail(CUCORE_INVALID_BINARY, "LZ4 data: %s", err);
  return CUCORE_OK;
}

typedef size_t (*zstd_decompress_fn)(void *dst, size_t cap, const void *src, size_t len);
typedef unsigned (*zstd_is_error_fn)(size_t code);
typedef const char *(*zstd_error_name_fn)(size_t code);

static struct {
  zstd_decompress_fn decompress;
  zstd_is_error_fn is_error;
  zstd_error_name_fn error_name;
  char why[256];
} zstd;
static pthread_once_t zstd_once = PTHREAD_ONCE_INIT;

static void open_zstd(void) {
  void *h = dlopen("libzstd.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *e = dlerror();
    snprintf(zstd.why, sizeof zstd.why, "%s", e ? e : "libzstd.so.1 not found");
    return;
  }
  void *d = dlsym(h, "ZSTD_decompress"), *i = dlsym(h, "ZSTD_isError"),
       *n = dlsym(h, "ZSTD_getErrorName");
  if (!d || !i || !n) {
    snprintf(zstd.why, sizeof zstd.why, "libzstd.so.1 lacks ZSTD_decompress or ZSTD_isError");
    return;
  }
  memcpy(&zstd.decompress, &d, sizeof d);
  memcpy(&zstd.is_error, &i, sizeof i);
  memcpy(&zstd.error_name, &n, sizeof n);
}

static void load_zstd_timed(void) {
  int64_t t0 = cc_phase_clock();
  open_zstd();
  cc_phase_done(CUCORE_PHASE_LOAD_ZSTD, t0);
}

/* The bytes of an entry; on failure *code and err say why (nothing recorded). */
static int entry_bytes(const cc_fatbin *f, uint32_t index, const uint8_t **out, size_t *size,
                       int *owned, int *code, char *err, size_t errlen) {
  *out = NULL;
  *size = 0;
  *owned = 0;
  if (index >= f->count) {
    *code = CUCORE_INVALID_ARGUMENT;
    snprintf(err, errlen, "fatbin entry %u does not exist (the fatbin has %u)", index, f->count);
    return -1;
  }
  const cucore_fatbin_entry *e = &f->entries[index];
  const uint8_t *src = f->base + e->offset;
  if (strcmp(e->compression, "none") == 0) {
    *out = src;
    *size = (size_t)e->stored_size;
    return 0;
  }
  size_t csize = (size_t)f->compressed_sizes[index], dsize = (size_t)e->size;
  int lz4 = strcmp(e->compression, "lz4") == 0;
  if (strcmp(e->compression, "unknown") == 0) {
    *code = CUCORE_NOT_SUPPORTED;
    snprintf(err, errlen,
             "compressed fatbin entry %u (%s): flags 0x%llx name a compression cucore cannot "
             "read (the data is no zstd frame); build the fatbin with nvcc --no-compress",
             index, e->arch_name, (unsigned long long)e->flags);
    return -1;
  }
  if (!lz4) {
    pthread_once(&zstd_once, load_zstd_timed);
    if (!zstd.decompress) {
      *code = CUCORE_NOT_SUPPORTED;
      snprintf(err, errlen,
               "compressed fatbin entry %u (%s, zstd): the zstd library could not be loaded "
               "(%s); install libzstd1, or build the fatbin with nvcc --no-compress",
               index, e->arch_name, zstd.why);
      return -1;
    }
  }
  uint8_t *dst = cc_raw_malloc(dsize ? dsize : 1);
  if (!dst) {
    *code = CUCORE_HOST_OUT_OF_MEMORY;
    snprintf(err, errlen, "out of host memory allocating %zu bytes to decompress fatbin entry %u",
             dsize, index);
    return -1;
  }
  char why[256];
  if (lz4) {
    if (lz4_core(src, csize, dst, dsize, why, sizeof why)) {
      free(dst);
      *code = CUCORE_INVALID_BINARY;
      snprintf(err, errlen, "fatbin entry %u (%s, LZ4-compressed) at offset %llu: %s", index,
               e->arch_name, (unsigned long long)e->offset, why);
      return -1;
    }
  } else {
    size_t r = zstd.decompress(dst, dsize, src, csize);
    if (zstd.is_error(r) || r != dsize) {
      free(dst);
      *code = CUCORE_INVALID_BINARY;
      if (zstd.is_error(r))
        snprintf(err, errlen,
                 "fatbin entry %u (%s, zstd-compressed) at offset %llu does not "
                 "decompress: %s",
                 index, e->arch_name, (unsigned long long)e->offset, zstd.error_name(r));
      else
        snprintf(err, errlen,
                 "fatbin entry %u (%s, zstd-compressed) at offset %llu gave %zu "
                 "bytes; its header says %zu",
                 index, e->arch_name, (unsigned long long)e->offset, r, dsize);
      return -1;
    }
  }
  *out = dst;
  *size = dsize;
  *owned = 1;
  return 0;
}

cucore_status cc_fatbin_entry_bytes(const cc_fatbin *f, uint32_t index, const uint8_t **out,
                                    size_t *size, int *owned) {
  char err[512];
  int code = CUCORE_INTERNAL;
  if (entry_bytes(f, index, out, size, owned, &code, err, sizeof err))
    return cc_fail(code, "%s", err);
  return CUCORE_OK;
}

cucore_status cc_fatbin_entry_bytes_quiet(const cc_fatbin *f, uint32_t index, const uint8_t **out,
                                          size_t *size, int *owned) {
  char err[512];
  int code = CUCORE_INTERNAL;
  if (entry_bytes(f, index, out, size, owned, &code, err, sizeof err)) return code;
  return CUCORE_OK;
}
