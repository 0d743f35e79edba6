/*
 * reader_support.h -- what the offline reader's tests share: building the test kernels with
 * nvcc (cached between test programs), and the independent oracles the reader is compared
 * against:
 *   - ptxas's own report (-Xptxas -v): registers, barriers, shared, constant bank 0, stack
 *     frame, cumulative stack, module __constant__ bytes;
 *   - binutils: readelf (ELF header flags, section offsets and sizes, entry symbols) and
 *     c++filt (demangled names);
 *   - the C++ compiler: sizeof/alignof/type category of every kernel parameter
 *     (tests/kernels/describe_params.cu);
 *   - the kernels' own declarations (__launch_bounds__, __cluster_dims__, __maxnreg__);
 *   - a deliberately small second reading of the .nv.info records, done here on the bytes at
 *     the offsets readelf gives, for parameter offsets and sizes.
 * cuobjdump and nvdisasm are not part of every CUDA install (they are not in this project's
 * toolkit); everything they would report is covered by the sources above.
 *
 * Every helper is static and marked unused, so each test program includes what it needs.
 */
#ifndef CUCORE_READER_SUPPORT_H
#define CUCORE_READER_SUPPORT_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "support.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define RS_FN static __attribute__((unused))

/* ---- tools ---------------------------------------------------------------------------------- */

static char rs_cuda_bin[1024];

/* Finds nvcc, ptxas, readelf and c++filt; prints why not and returns 0 when one is missing. */
RS_FN int rs_tools(void) {
  const char *roots[] = {getenv("CUDA_HOME"), getenv("CUDA_PATH"), "/usr/local/cuda"};
  rs_cuda_bin[0] = '\0';
  for (size_t i = 0; i < sizeof roots / sizeof roots[0]; i++) {
    if (!roots[i] || !roots[i][0]) continue;
    char p[1100];
    snprintf(p, sizeof p, "%s/bin/nvcc", roots[i]);
    if (access(p, X_OK) == 0) {
      snprintf(rs_cuda_bin, sizeof rs_cuda_bin, "%s/bin", roots[i]);
      break;
    }
  }
  if (!rs_cuda_bin[0]) {
    printf("skipped: nvcc not found (looked in $CUDA_HOME/bin, $CUDA_PATH/bin, "
           "/usr/local/cuda/bin)\n");
    return 0;
  }
  const char *needed[] = {"readelf --version", "c++filt --version"};
  for (size_t i = 0; i < 2; i++) {
    char *out = NULL;
    int rc = cucore_test_run(needed[i], &out);
    free(out);
    if (rc != 0) {
      printf("skipped: `%s` failed (binutils is needed for the test oracle)\n", needed[i]);
      return 0;
    }
  }
  return 1;
}

/* Exits 77 (skipped) when a tool is missing. */
RS_FN void rs_require_tools(void) {
  if (!rs_tools()) exit(CUCORE_TEST_SKIP);
}

RS_FN char *rs_printf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *s = NULL;
  if (vasprintf(&s, fmt, ap) < 0) s = NULL;
  va_end(ap);
  if (!s) abort();
  return s;
}

/* The directory the built artifacts are cached in. */
RS_FN const char *rs_cache_dir(void) {
  static char dir[1024];
  if (!dir[0]) {
    snprintf(dir, sizeof dir, "%s/reader_cache", CUCORE_TEST_BINARY_DIR);
    mkdir(dir, 0777);
  }
  return dir;
}

/* The newest modification time of the test kernel sources. */
RS_FN time_t rs_sources_mtime(void) {
  static const char *files[] = {"params.cu",     "big_params.cu",  "launch_attrs.cu",
                                "cluster.cu",    "all_kernels.cu", "describe_params.cu",
                                "directives.ptx"};
  time_t newest = 0;
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
    char p[2048];
    struct stat sb;
    snprintf(p, sizeof p, "%s/%s", CUCORE_TEST_KERNEL_DIR, files[i]);
    if (stat(p, &sb) == 0 && sb.st_mtime > newest) newest = sb.st_mtime;
  }
  return newest;
}

/* Builds `name` in the cache with a shell command (run in the kernel directory) that writes
 * the file named by $OUT; its output goes to NAME.log. Reuses an artifact newer than the
 * sources. Returns the artifact's path (malloc'd); fails the test when the command fails. */
RS_FN char *rs_build(const char *name, const char *fmt, ...) {
  char *path = rs_printf("%s/%s", rs_cache_dir(), name);
  struct stat sb;
  if (stat(path, &sb) == 0 && sb.st_mtime >= rs_sources_mtime()) return path;
  va_list ap;
  va_start(ap, fmt);
  char *cmd = NULL;
  if (vasprintf(&cmd, fmt, ap) < 0) abort();
  va_end(ap);
  char *tmp = rs_printf("%s.%ld.tmp", path, (long)getpid());
  char *full = rs_printf("cd '%s' && PATH='%s':\"$PATH\" OUT='%s' sh -c '%s' > '%s.log' 2>&1",
                         CUCORE_TEST_KERNEL_DIR, rs_cuda_bin, tmp, cmd, tmp);
  char *out = NULL;
  int rc = cucore_test_run(full, &out);
  free(out);
  if (rc != 0) {
    char *log = rs_printf("%s.log", tmp);
    char *text = cucore_test_read_file(log, NULL);
    fail_msg("building %s failed (%d): %s\n%s", name, rc, cmd, text ? text : "(no log)");
  }
  char *log_tmp = rs_printf("%s.log", tmp), *log = rs_printf("%s.log", path);
  if (rename(log_tmp, log) != 0 || rename(tmp, path) != 0)
    fail_msg("renaming %s into place: %s", tmp, strerror(errno));
  free(log_tmp);
  free(log);
  free(tmp);
  free(full);
  free(cmd);
  return path;
}

/* The NAME.log written when NAME was built (malloc'd text). */
RS_FN char *rs_build_log(const char *path) {
  char *log = rs_printf("%s.log", path);
  char *text = cucore_test_read_file(log, NULL);
  free(log);
  if (!text) fail_msg("no build log for %s", path);
  return text;
}

/* Reads a whole file (malloc'd); fails the test when it cannot. */
RS_FN unsigned char *rs_read(const char *path, size_t *size) {
  unsigned char *d = (unsigned char *)cucore_test_read_file(path, size);
  if (!d) fail_msg("cannot read %s", path);
  return d;
}

/* The cubin of every test kernel for `arch` ("sm_90a"), built with -Xptxas -v. */
RS_FN char *rs_all_kernels_cubin(const char *arch) {
  int num = atoi(arch + 3);
  char *name = rs_printf("all_%s.cubin", arch);
  char *p = rs_build(name, "nvcc -cubin -arch=%s %s -Xptxas -v -o \"$OUT\" all_kernels.cu", arch,
                     num >= 90 ? "-DCUCORE_TEST_CLUSTERS" : "");
  free(name);
  return p;
}

/* ---- ptxas's report -------------------------------------------------------------------------- */

typedef struct rs_ptxas_entry {
  char name[1024];
  int regs, barriers, smem, cmem0, frame, cumulative; /* cmem0 -1 when not printed */
} rs_ptxas_entry;

typedef struct rs_ptxas {
  rs_ptxas_entry e[128];
  unsigned n;
  int cmem3; /* the module's __constant__ bytes; -1 when ptxas did not print them (sm_90+) */
} rs_ptxas;

static void rs_used_line(rs_ptxas_entry *e, const char *s) {
  /* "Used 10 registers, used 1 barriers, 256 bytes smem, 364 bytes cmem[0], ..." */
  const char *p = s;
  while (*p) {
    const char *comma = strchr(p, ',');
    size_t len = comma ? (size_t)(comma - p) : strlen(p);
    char item[256];
    snprintf(item, sizeof item, "%.*s", (int)(len < 255 ? len : 255), p);
    int v = 0;
    if (sscanf(item, " %*s %d", &v) == 1 && strstr(item, "registers"))
      e->regs = v;
    else if (sscanf(item, " %*s %d", &v) == 1 && strstr(item, "barriers"))
      e->barriers = v;
    else if (sscanf(item, " %d", &v) == 1 && strstr(item, "bytes cumulative stack size"))
      e->cumulative = v;
    else if (sscanf(item, " %d", &v) == 1 && strstr(item, "bytes cmem[0]"))
      e->cmem0 = v;
    else if (sscanf(item, " %d", &v) == 1 && strstr(item, "bytes smem"))
      e->smem = v;
    if (!comma) break;
    p = comma + 1;
  }
}

/* Parses the `ptxas info` lines of a build log. */
RS_FN void rs_parse_ptxas(const char *log, rs_ptxas *out) {
  memset(out, 0, sizeof *out);
  out->cmem3 = -1;
  rs_ptxas_entry *cur = NULL;
  char props_for[1024] = "";
  const char *line = log;
  while (line && *line) {
    const char *eol = strchr(line, '\n');
    size_t len = eol ? (size_t)(eol - line) : strlen(line);
    char buf[4096];
    snprintf(buf, sizeof buf, "%.*s", (int)(len < sizeof buf - 1 ? len : sizeof buf - 1), line);
    const char *info = strstr(buf, "ptxas info    : ");
    const char *body = info ? info + 16 : buf;
    char name[1024];
    int v;
    if (info && sscanf(body, "Compiling entry function '%1023[^']'", name) == 1) {
      if (out->n < 128) {
        cur = &out->e[out->n++];
        memset(cur, 0, sizeof *cur);
        cur->cmem0 = -1;
        snprintf(cur->name, sizeof cur->name, "%s", name);
      }
      props_for[0] = '\0';
    } else if (info && sscanf(body, "Function properties for %1023s", name) == 1) {
      snprintf(props_for, sizeof props_for, "%s", name);
    } else if (!info && sscanf(buf, " %d bytes stack frame", &v) == 1) {
      if (cur && strcmp(props_for, cur->name) == 0) cur->frame = v;
    } else if (info && strncmp(body, "Used ", 5) == 0) {
      if (cur) rs_used_line(cur, body);
    } else if (info && strstr(body, "bytes gmem")) {
      const char *c3 = strstr(body, "cmem[3]");
      if (!c3 && strstr(body, "cmem["))
        out->cmem3 = -1;
      else if (!c3)
        out->cmem3 = 0;
      if (c3) {
        const char *q = c3;
        while (q > body && q[-1] != ',') q--;
        sscanf(q, " %d bytes", &out->cmem3);
      }
    }
    line = eol ? eol + 1 : NULL;
  }
}

RS_FN const rs_ptxas_entry *rs_ptxas_find(const rs_ptxas *p, const char *name) {
  for (unsigned i = 0; i < p->n; i++)
    if (strcmp(p->e[i].name, name) == 0) return &p->e[i];
  return NULL;
}

/* ---- readelf --------------------------------------------------------------------------------- */

typedef struct rs_sec {
  unsigned idx;
  char name[1024];
  unsigned long long off, size;
} rs_sec;

typedef struct rs_elf {
  rs_sec sec[512];
  unsigned nsec;
  char kernels[128][1024]; /* entry symbols: FUNC with STO_CUDA_ENTRY (0x10) in st_other */
  unsigned nkernels;
  unsigned long flags;
  int abi_version;
} rs_elf;

RS_FN void rs_readelf(const char *path, rs_elf *out) {
  memset(out, 0, sizeof *out);
  char *cmd = rs_printf("readelf -hSsW '%s'", path), *text = NULL;
  int rc = cucore_test_run(cmd, &text);
  free(cmd);
  if (rc != 0 || !text) fail_msg("readelf failed on %s", path);
  for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
    unsigned idx;
    char name[1024], type[64];
    unsigned long long addr, off, size;
    const char *f = strstr(line, "Flags:");
    if (f && !strstr(line, "Key to")) sscanf(f, "Flags: %lx", &out->flags);
    const char *abi = strstr(line, "ABI Version:");
    if (abi) sscanf(abi, "ABI Version: %d", &out->abi_version);
    if (sscanf(line, " [%u] %1023s %63s %llx %llx %llx", &idx, name, type, &addr, &off, &size) ==
            6 &&
        idx > 0 && out->nsec < 512) {
      rs_sec *s = &out->sec[out->nsec++];
      s->idx = idx;
      snprintf(s->name, sizeof s->name, "%s", name);
      s->off = off;
      s->size = size;
    }
    const char *other = strstr(line, "[<other>: ");
    if (strstr(line, " FUNC ") && other) {
      unsigned o = (unsigned)strtoul(other + 10, NULL, 16);
      const char *sp = strrchr(line, ' ');
      if ((o & 0x10) && sp && out->nkernels < 128)
        snprintf(out->kernels[out->nkernels++], 1024, "%s", sp + 1);
    }
  }
  free(text);
}

RS_FN const rs_sec *rs_elf_section(const rs_elf *e, const char *name) {
  for (unsigned i = 0; i < e->nsec; i++)
    if (strcmp(e->sec[i].name, name) == 0) return &e->sec[i];
  return NULL;
}

RS_FN int rs_elf_has_kernel(const rs_elf *e, const char *name) {
  for (unsigned i = 0; i < e->nkernels; i++)
    if (strcmp(e->kernels[i], name) == 0) return 1;
  return 0;
}

/* c++filt's reading of a mangled name (malloc'd). */
RS_FN char *rs_cxxfilt(const char *mangled) {
  char *cmd = rs_printf("c++filt '%s'", mangled), *out = NULL;
  if (cucore_test_run(cmd, &out) != 0 || !out) fail_msg("c++filt failed on %s", mangled);
  free(cmd);
  size_t n = strlen(out);
  while (n && (out[n - 1] == '\n' || out[n - 1] == ' ')) out[--n] = '\0';
  return out;
}

/* ---- a second reading of .nv.info.<kernel> --------------------------------------------------- */

typedef struct rs_kparams {
  unsigned n;
  unsigned offset[256], size[256];
  unsigned cbank_offset, cbank_size;
  int have_cbank;
} rs_kparams;

/* Walks the attribute records of a kernel's .nv.info section: 4-byte headers {format,
 * attribute, u16}; format 4 carries u16 bytes of payload. Takes KPARAM_INFO (0x17: size in
 * bits 18-31 of the third word), KPARAM_INFO_V2 (0x45: size in bits 0-15) and PARAM_CBANK
 * (0x0a: u16 offset, u16 size after the symbol index). */
RS_FN void rs_kernel_params(const unsigned char *file, size_t file_size, const rs_sec *s,
                            rs_kparams *out) {
  memset(out, 0, sizeof *out);
  if (!s) return;
  if (s->off + s->size > file_size) fail_msg("section %s lies outside the file", s->name);
  const unsigned char *p = file + s->off, *end = p + s->size;
  while (p + 4 <= end) {
    unsigned fmt = p[0], attr = p[1], len = (unsigned)(p[2] | p[3] << 8);
    unsigned plen = fmt == 4 ? len : 0;
    const unsigned char *pl = p + 4;
    if (pl + plen > end) fail_msg("record runs past section %s", s->name);
#define RS_U16(q) ((unsigned)((q)[0] | (q)[1] << 8))
#define RS_U32(q) ((unsigned)((q)[0] | (q)[1] << 8 | (q)[2] << 16 | (unsigned)(q)[3] << 24))
    if ((attr == 0x17 || attr == 0x45) && fmt == 4 && plen >= 12) {
      unsigned ord = RS_U16(pl + 4);
      if (ord < 256) {
        out->offset[ord] = RS_U16(pl + 6);
        out->size[ord] = attr == 0x17 ? RS_U32(pl + 8) >> 18 : RS_U32(pl + 8) & 0xffff;
        if (ord + 1 > out->n) out->n = ord + 1;
      }
    } else if (attr == 0x0a && fmt == 4 && plen >= 8) {
      out->cbank_offset = RS_U16(pl + 4);
      out->cbank_size = RS_U16(pl + 6);
      out->have_cbank = 1;
    }
    p = pl + plen;
  }
}

/* ---- the C++ compiler's view of the parameters ----------------------------------------------- */

typedef struct rs_desc {
  char key[256];
  unsigned n;
  unsigned size[32], align[32];
  char cat[32];
} rs_desc;

typedef struct rs_describe {
  rs_desc d[64];
  unsigned n;
} rs_describe;

/* Builds and runs tests/kernels/describe_params.cu. */
RS_FN void rs_describe_load(rs_describe *out) {
  memset(out, 0, sizeof *out);
  char *exe = rs_build("describe_params",
                       "nvcc -arch=sm_90 -DCUCORE_TEST_CLUSTERS -o \"$OUT\" describe_params.cu");
  char *text = NULL;
  if (cucore_test_run(exe, &text) != 0 || !text) fail_msg("%s failed: %s", exe, text ? text : "");
  for (char *line = strtok(text, "\n"); line && out->n < 64; line = strtok(NULL, "\n")) {
    rs_desc *d = &out->d[out->n];
    char *tab = strchr(line, '\t');
    if (!tab) continue;
    snprintf(d->key, sizeof d->key, "%.*s", (int)(tab - line), line);
    char *p = tab + 1;
    d->n = (unsigned)strtoul(p, &p, 10);
    for (unsigned i = 0; i < d->n && i < 32; i++) {
      if (sscanf(p, "\t%u:%u:%c", &d->size[i], &d->align[i], &d->cat[i]) != 3)
        fail_msg("bad describe line: %s", line);
      p = strchr(p + 1, '\t');
      if (!p) p = line + strlen(line);
    }
    out->n++;
  }
  free(text);
  free(exe);
  if (out->n == 0) fail_msg("describe_params printed nothing");
}

/* ---- the kernels' own declarations ----------------------------------------------------------- */

typedef struct rs_decl {
  char name[128];
  unsigned bounds[3]; /* __launch_bounds__(max threads, min blocks, max blocks per cluster) */
  unsigned nbounds;
  unsigned cluster[3]; /* __cluster_dims__ */
  unsigned maxnreg;    /* __maxnreg__ */
  int grid_sync;       /* the body calls this_grid() */
} rs_decl;

/* Reads the `__global__ void [attributes] NAME(` declarations of a .cu file. */
RS_FN unsigned rs_source_decls(const char *file, rs_decl *out, unsigned max) {
  char *path = rs_printf("%s/%s", CUCORE_TEST_KERNEL_DIR, file);
  char *src = cucore_test_read_file(path, NULL);
  if (!src) fail_msg("cannot read %s", path);
  free(path);
  unsigned n = 0;
  for (char *p = strstr(src, "__global__ void"); p && n < max;
       p = strstr(p + 1, "__global__ void")) {
    rs_decl *d = &out[n];
    memset(d, 0, sizeof *d);
    char *open = strchr(p, '(');
    char *lb = strstr(p, "__launch_bounds__("), *cd = strstr(p, "__cluster_dims__("),
         *mr = strstr(p, "__maxnreg__(");
    /* attributes between `void` and the name: the name is the identifier before the first '('
     * that is not an attribute's */
    char *q = p + strlen("__global__ void");
    for (;;) {
      while (*q == ' ') q++;
      if ((lb && q == lb) || (cd && q == cd) || (mr && q == mr)) {
        char *args = strchr(q, '(') + 1;
        unsigned v[3] = {0, 0, 0};
        int k = sscanf(args, "%u , %u , %u", &v[0], &v[1], &v[2]);
        if (q == lb) {
          memcpy(d->bounds, v, sizeof v);
          d->nbounds = (unsigned)k;
        } else if (q == cd) {
          memcpy(d->cluster, v, sizeof v);
        } else {
          d->maxnreg = v[0];
        }
        q = strchr(args, ')') + 1;
        continue;
      }
      break;
    }
    open = strchr(q, '(');
    if (!open) break;
    snprintf(d->name, sizeof d->name, "%.*s", (int)(open - q), q);
    char *body = strchr(open, '{'), *next_kernel = strstr(open, "__global__ void");
    if (body) {
      int depth = 0;
      char *e = body;
      for (; *e; e++) {
        if (*e == '{') depth++;
        if (*e == '}' && --depth == 0) break;
      }
      char saved = *e;
      *e = '\0';
      d->grid_sync = strstr(body, "this_grid()") != NULL;
      *e = saved;
    }
    (void)next_kernel;
    n++;
  }
  free(src);
  return n;
}

/* The "kernel" a describe key or declared name refers to in an opened binary. */
RS_FN const cucore_kernel_info *rs_kernel(const cucore_binary *bin, const char *key) {
  const cucore_kernel_info *k = NULL;
  cucore_status st = cucore_binary_find_kernel(bin, key, &k);
  if (st != CUCORE_OK) fail_msg("kernel %s: %s", key, cucore_last_error());
  return k;
}

/* The describe_params oracle, loaded once per test program. */
static inline const rs_describe *rs_the_describe(void) {
  static rs_describe describe;
  static int loaded;
  if (!loaded) {
    rs_describe_load(&describe);
    loaded = 1;
  }
  return &describe;
}

/* The declaration of kernel `name` in launch_attrs.cu or cluster.cu, or NULL. */
static inline const rs_decl *rs_decl_of(const char *name) {
  static rs_decl decls[64];
  static unsigned n;
  if (!n) {
    n = rs_source_decls("launch_attrs.cu", decls, 64);
    n += rs_source_decls("cluster.cu", decls + n, 64 - n);
  }
  for (unsigned i = 0; i < n; i++)
    if (strcmp(decls[i].name, name) == 0) return &decls[i];
  return NULL;
}

/* A kernel's launch bounds and cluster attributes equal its declaration `d` (none when NULL):
 * .maxntid from the first __launch_bounds__ argument, the cluster shape and whether it is
 * explicit, and the blocks-per-cluster cap from the third. */
static inline void rs_assert_declared_bounds(const cucore_kernel_info *k, const rs_decl *d) {
  uint32_t want_maxntid[3] = {0, 0, 0}, want_cluster[3] = {0, 0, 0};
  if (d && d->nbounds >= 1) want_maxntid[0] = d->bounds[0], want_maxntid[1] = want_maxntid[2] = 1;
  if (d) memcpy(want_cluster, d->cluster, sizeof want_cluster);
  assert_memory_equal(k->maxntid, want_maxntid, sizeof want_maxntid);
  assert_memory_equal(k->cluster_dims, want_cluster, sizeof want_cluster);
  assert_int_equal(k->explicit_cluster, want_cluster[0] != 0);
  assert_int_equal(k->max_blocks_per_cluster, d && d->nbounds == 3 ? d->bounds[2] : 0);
}

#endif
