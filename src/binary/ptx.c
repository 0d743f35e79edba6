/*
 * ptx.c -- the kernels of a PTX module: each .entry's parameters (type, size,
 * alignment) and its performance directives (.maxntid, .reqntid, .minnctapersm, .maxnreg,
 * .explicitcluster, .reqnctapercluster, .maxclusterrank).
 *
 * The text is tokenised with comments (// and block), strings and backslash-newline
 * continuations handled; function bodies are skipped by counting braces. Only the module
 * header (.version, .target) and .entry declarations are interpreted.
 *
 * Parameter kinds: .u/.s/.b scalars are INT; .f16/.bf16/.f32/.f64 (and the x2 pairs) FLOAT;
 * a scalar with the .ptr attribute POINTER; any array ("name[N]") BYTES. The alignment is the
 * .align given before the type, else the element size (an .align after .ptr is the pointee's).
 * Offsets: see layout() below.
 */
#define _GNU_SOURCE
#include "binary/ptx.h"
#include "binary/demangle.h"
#include "binary/signature.h"

#include <stdio.h>
#include <stdlib.h>

/* ---- parameter layout ------------------------------------------------------------------------ */

uint32_t cc_param_base(int arch, uint32_t total) {
  if (arch <= 0) return 0;
  if (arch >= 100) return 0x380;
  if (arch >= 90) return 0x210;
  if (arch >= 70) return total > 4352 ? 0x1a80 : 0x160;
  return 0x140;
}

/* Lays out with one param base; returns the buffer size (may exceed the limit). */
static uint64_t layout_with_base(cucore_param_info *p, uint32_t n, uint32_t base) {
  uint64_t cursor = 0;
  for (uint32_t i = 0; i < n; i++) {
    uint64_t a = p[i].align ? p[i].align : 1;
    uint64_t abs = base + cursor;
    abs = (abs + a - 1) / a * a;
    uint64_t off = abs - base;
    p[i].offset = off > UINT32_MAX ? UINT32_MAX : (uint32_t)off;
    cursor = off + p[i].size;
    if (cursor > ((uint64_t)1 << 40)) cursor = (uint64_t)1 << 40; /* saturate, reported below */
  }
  return cursor;
}

/* Lays out parameters (size and align set, align 0 meaning 1) the way ptxas does for `arch`:
 * each parameter starts at the first offset after the previous one whose address in
 * constant bank 0 (param base + offset) is a multiple of its alignment, moving to the larger
 * param base when the buffer needs it (see cc_param_base). Sets the offsets; returns the
 * buffer's size, which may exceed CC_PARAM_BYTES_MAX. */
static uint64_t layout(cucore_param_info *params, uint32_t count, int arch) {
  uint32_t base = cc_param_base(arch, 0);
  uint64_t t = layout_with_base(params, count, base);
  uint32_t tt = t > UINT32_MAX ? UINT32_MAX : (uint32_t)t;
  if (cc_param_base(arch, tt) != base) t = layout_with_base(params, count, cc_param_base(arch, tt));
  return t;
}

/* ---- the tokenizer --------------------------------------------------------------------------- */

typedef enum tok_kind { TOK_END, TOK_WORD, TOK_PUNCT, TOK_STRING } tok_kind;

typedef struct token {
  tok_kind kind;
  const char *s;
  size_t len;
  unsigned line;
} token;

typedef struct lexer {
  const char *p, *end;
  unsigned line;
  token peeked;
  int has_peek;
  char err[512]; /* the first parse error, when any */
  int oom;       /* the error is that host memory ran out, not the text */
} lexer;

static int is_word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '$' || c == '%';
}

static token lex_raw(lexer *L) {
  for (;;) {
    while (L->p < L->end) {
      char c = *L->p;
      if (c == '\n') {
        L->line++;
        L->p++;
      } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
        L->p++;
      } else if (c == '\\' && L->p + 1 < L->end && (L->p[1] == '\n' || L->p[1] == '\r')) {
        L->p++; /* a continuation: the newline is counted on the next turn */
      } else {
        break;
      }
    }
    if (L->p >= L->end) return (token){TOK_END, L->p, 0, L->line};
    if (L->p + 1 < L->end && L->p[0] == '/' && L->p[1] == '/') {
      while (L->p < L->end && *L->p != '\n') L->p++;
      continue;
    }
    if (L->p + 1 < L->end && L->p[0] == '/' && L->p[1] == '*') {
      L->p += 2;
      while (L->p + 1 < L->end && !(L->p[0] == '*' && L->p[1] == '/')) {
        if (*L->p == '\n') L->line++;
        L->p++;
      }
      L->p = L->p + 1 < L->end ? L->p + 2 : L->end;
      continue;
    }
    break;
  }
  token t = {TOK_PUNCT, L->p, 1, L->line};
  char c = *L->p;
  if (c == '"') {
    const char *q = L->p + 1;
    while (q < L->end && *q != '"' && *q != '\n') q += (*q == '\\' && q + 1 < L->end) ? 2 : 1;
    if (q > L->end) q = L->end;
    t.kind = TOK_STRING;
    t.len = (size_t)(q - L->p) + (q < L->end && *q == '"');
    L->p += t.len;
    return t;
  }
  if (is_word_char(c)) {
    const char *q = L->p;
    while (q < L->end && is_word_char(*q)) q++;
    t.kind = TOK_WORD;
    t.len = (size_t)(q - L->p);
    L->p = q;
    return t;
  }
  L->p++;
  return t;
}

static token next(lexer *L) {
  if (L->has_peek) {
    L->has_peek = 0;
    return L->peeked;
  }
  return lex_raw(L);
}

static token peek(lexer *L) {
  if (!L->has_peek) {
    L->peeked = lex_raw(L);
    L->has_peek = 1;
  }
  return L->peeked;
}

static int is(token t, const char *s) { return t.len == strlen(s) && memcmp(t.s, s, t.len) == 0; }

static int perr(lexer *L, unsigned line, const char *fmt, ...) CC_PRINTF(3, 4);
static int perr(lexer *L, unsigned line, const char *fmt, ...) {
  if (L->err[0]) return -1;
  int n = snprintf(L->err, sizeof L->err, "PTX line %u: ", line);
  va_list ap;
  va_start(ap, fmt);
  if (n > 0 && (size_t)n < sizeof L->err) vsnprintf(L->err + n, sizeof L->err - (size_t)n, fmt, ap);
  va_end(ap);
  return -1;
}

/* Host memory ran out while parsing: reported as CUCORE_HOST_OUT_OF_MEMORY, not as bad PTX. */
static int poom(lexer *L, unsigned line, const char *what) {
  if (!L->err[0]) L->oom = 1;
  return perr(L, line, "out of host memory allocating %s", what);
}

/* A token for messages: at most 40 characters. */
static const char *show(token t, char *buf, size_t len) {
  if (t.kind == TOK_END) return "the end of the text";
  size_t n = t.len < 40 ? t.len : 40;
  snprintf(buf, len, "`%.*s%s`", (int)n, t.s, t.len > 40 ? "..." : "");
  return buf;
}

/* A non-negative integer (decimal or 0x hex) of at most `max`. */
static int parse_uint(token t, uint64_t max, uint64_t *out) {
  if (t.kind != TOK_WORD || t.len == 0) return 0;
  uint64_t v = 0;
  size_t i = 0;
  unsigned basev = 10;
  if (t.len > 2 && t.s[0] == '0' && (t.s[1] == 'x' || t.s[1] == 'X')) {
    basev = 16;
    i = 2;
  }
  size_t end = t.len;
  if (end > i + 1 && (t.s[end - 1] == 'U' || t.s[end - 1] == 'u')) end--;
  if (i >= end) return 0;
  for (; i < end; i++) {
    char c = t.s[i];
    unsigned d;
    if (c >= '0' && c <= '9')
      d = (unsigned)(c - '0');
    else if (basev == 16 && c >= 'a' && c <= 'f')
      d = (unsigned)(c - 'a' + 10);
    else if (basev == 16 && c >= 'A' && c <= 'F')
      d = (unsigned)(c - 'A' + 10);
    else
      return 0;
    v = v * basev + d;
    if (v > max) return 0;
  }
  *out = v;
  return 1;
}

/* Skips a balanced { ... } body; the opening brace was read. */
static int skip_body(lexer *L, unsigned line) {
  unsigned depth = 1;
  for (;;) {
    token t = next(L);
    if (t.kind == TOK_END) return perr(L, line, "the body that starts here has no closing `}`");
    if (t.kind == TOK_PUNCT && t.s[0] == '{') depth++;
    if (t.kind == TOK_PUNCT && t.s[0] == '}' && --depth == 0) return 0;
  }
}

/* ---- parameters ------------------------------------------------------------------------------ */

typedef struct scalar_type {
  const char *name;
  uint32_t size;
  cucore_param_kind kind;
} scalar_type;

static const scalar_type scalar_types[] = {
    {".b8", 1, CUCORE_PARAM_INT},
    {".u8", 1, CUCORE_PARAM_INT},
    {".s8", 1, CUCORE_PARAM_INT},
    {".b16", 2, CUCORE_PARAM_INT},
    {".u16", 2, CUCORE_PARAM_INT},
    {".s16", 2, CUCORE_PARAM_INT},
    {".b32", 4, CUCORE_PARAM_INT},
    {".u32", 4, CUCORE_PARAM_INT},
    {".s32", 4, CUCORE_PARAM_INT},
    {".b64", 8, CUCORE_PARAM_INT},
    {".u64", 8, CUCORE_PARAM_INT},
    {".s64", 8, CUCORE_PARAM_INT},
    {".b128", 16, CUCORE_PARAM_INT},
    {".f16", 2, CUCORE_PARAM_FLOAT},
    {".bf16", 2, CUCORE_PARAM_FLOAT},
    {".f16x2", 4, CUCORE_PARAM_FLOAT},
    {".bf16x2", 4, CUCORE_PARAM_FLOAT},
    {".f32", 4, CUCORE_PARAM_FLOAT},
    {".f64", 8, CUCORE_PARAM_FLOAT},
    /* opaque handles (texture, sampler and surface references): 64-bit values */
    {".texref", 8, CUCORE_PARAM_UNKNOWN},
    {".samplerref", 8, CUCORE_PARAM_UNKNOWN},
    {".surfref", 8, CUCORE_PARAM_UNKNOWN},
};

static const scalar_type *find_type(token t) {
  for (size_t i = 0; i < CC_ARRAY_LEN(scalar_types); i++)
    if (is(t, scalar_types[i].name)) return &scalar_types[i];
  return NULL;
}

/* What a ".param" declaration has said so far. */
typedef struct param_decl {
  const scalar_type *type;
  uint64_t align, vec, count;
  int ptr, array, named;
} param_decl;

/* A ".xxx" word of a parameter declaration: its type, .align, .ptr or a vector width. */
static int param_attribute(lexer *L, token t, const char *kname, uint32_t ordinal, param_decl *p) {
  char b1[64];
  const scalar_type *ty = find_type(t);
  if (ty) {
    p->type = ty;
  } else if (is(t, ".align")) {
    /* After .ptr, .align is the alignment of the memory pointed to, not of the
     * parameter (".param .u64 .ptr .global .align 8 p"). */
    token v = next(L);
    uint64_t a = 0;
    if (!parse_uint(v, 1u << 16, &a) || a == 0 || (a & (a - 1)))
      return perr(L, v.line,
                  "parameter %u of .entry `%s`: .align must be followed by a power of two up "
                  "to 65536, found %s",
                  ordinal, kname, show(v, b1, sizeof b1));
    if (!p->ptr) p->align = a;
  } else if (is(t, ".ptr")) {
    p->ptr = 1;
  } else if (is(t, ".v2") || is(t, ".v4") || is(t, ".v8")) {
    p->vec = (uint64_t)(t.s[2] - '0');
  }
  /* state spaces (.global .const .shared .local) and other attributes: no layout effect */
  return 0;
}

/* An array size "[N]" of a parameter; the `[` was read. */
static int param_array(lexer *L, const char *kname, uint32_t ordinal, param_decl *p) {
  char b1[64];
  token v = next(L);
  if (v.kind == TOK_PUNCT && v.s[0] == ']')
    return perr(L, v.line, "parameter %u of .entry `%s`: an unsized array `[]` has no layout",
                ordinal, kname);
  uint64_t n;
  if (!parse_uint(v, CC_PARAM_BYTES_MAX, &n) || n == 0)
    return perr(L, v.line,
                "parameter %u of .entry `%s`: array size %s must be a number from 1 to %u", ordinal,
                kname, show(v, b1, sizeof b1), CC_PARAM_BYTES_MAX);
  token close = next(L);
  if (!(close.kind == TOK_PUNCT && close.s[0] == ']'))
    return perr(L, close.line, "parameter %u of .entry `%s`: expected `]`, found %s", ordinal,
                kname, show(close, b1, sizeof b1));
  if (p->count > CC_PARAM_BYTES_MAX / n)
    return perr(L, v.line, "parameter %u of .entry `%s` is larger than %u bytes", ordinal, kname,
                CC_PARAM_BYTES_MAX);
  p->count *= n;
  p->array = 1;
  return 0;
}

/* The size, alignment and kind of a complete declaration; `t` is its last token. */
static int param_finish(lexer *L, token t, const char *kname, uint32_t ordinal, const param_decl *p,
                        cucore_param_info *out) {
  if (!p->type)
    return perr(L, t.line, "parameter %u of .entry `%s`: no type (.u32, .f32, .b8, ...) was given",
                ordinal, kname);
  if (!p->named)
    return perr(L, t.line, "parameter %u of .entry `%s`: no name was given", ordinal, kname);
  uint64_t size = (uint64_t)p->type->size * p->vec * p->count;
  if (size > CC_PARAM_BYTES_MAX)
    return perr(L, t.line, "parameter %u of .entry `%s` is %llu bytes; at most %u fit", ordinal,
                kname, (unsigned long long)size, CC_PARAM_BYTES_MAX);
  out->size = (uint32_t)size;
  out->align = (uint32_t)(p->align ? p->align : (uint64_t)p->type->size * p->vec);
  if (p->array)
    out->kind = CUCORE_PARAM_BYTES;
  else if (p->ptr)
    out->kind = CUCORE_PARAM_POINTER;
  else
    out->kind = p->type->kind;
  return 0;
}

/* Parses one ".param ..." up to the ',' or ')' that ends it (not consumed). */
static int parse_param(lexer *L, const char *kname, uint32_t ordinal, cucore_param_info *out) {
  char b1[64];
  token t = next(L);
  if (!is(t, ".param") && !is(t, ".reg"))
    return perr(L, t.line, "parameter %u of .entry `%s`: expected `.param`, found %s", ordinal,
                kname, show(t, b1, sizeof b1));
  param_decl p = {NULL, 0, 1, 1, 0, 0, 0};
  for (;;) {
    t = peek(L);
    if (t.kind == TOK_END || (t.kind == TOK_PUNCT && (t.s[0] == ',' || t.s[0] == ')'))) break;
    t = next(L);
    int bad = 0;
    if (t.kind == TOK_WORD && t.s[0] == '.') {
      bad = param_attribute(L, t, kname, ordinal, &p);
    } else if (t.kind == TOK_WORD) {
      if (p.named)
        return perr(L, t.line, "parameter %u of .entry `%s`: unexpected %s after the name", ordinal,
                    kname, show(t, b1, sizeof b1));
      p.named = 1;
    } else if (t.kind == TOK_PUNCT && t.s[0] == '[') {
      bad = param_array(L, kname, ordinal, &p);
    } else {
      return perr(L, t.line, "parameter %u of .entry `%s`: unexpected %s", ordinal, kname,
                  show(t, b1, sizeof b1));
    }
    if (bad) return bad;
  }
  return param_finish(L, t, kname, ordinal, &p, out);
}

/* Reads 1 to 3 comma-separated numbers (missing ones are 1). */
static int parse_dims(lexer *L, const char *what, const char *kname, uint32_t out[3]) {
  char b1[64];
  out[0] = out[1] = out[2] = 1;
  for (int i = 0; i < 3; i++) {
    token v = next(L);
    uint64_t n;
    if (!parse_uint(v, UINT32_MAX, &n))
      return perr(L, v.line, "%s of .entry `%s`: expected a number, found %s", what, kname,
                  show(v, b1, sizeof b1));
    out[i] = (uint32_t)n;
    token c = peek(L);
    if (!(c.kind == TOK_PUNCT && c.s[0] == ',')) break;
    next(L);
  }
  return 0;
}

static int parse_one(lexer *L, const char *what, const char *kname, uint32_t *out) {
  uint32_t d[3];
  if (parse_dims(L, what, kname, d)) return -1;
  *out = d[0];
  return 0;
}

/* The most parameters an .entry's list grows to: the list doubles from 8, and one more
 * doubling would pass the parameter buffer's size. */
#define PTX_PARAMS_MAX 16384u

/* The parameter list "( .param ..., ... )", when there is one, into *params (grown; the caller
 * frees it). */
static int parse_params(lexer *L, const char *kname, cucore_param_info **params,
                        uint32_t *nparams) {
  char b1[64];
  token t = peek(L);
  if (!(t.kind == TOK_PUNCT && t.s[0] == '(')) return 0;
  next(L);
  t = peek(L);
  if (t.kind == TOK_PUNCT && t.s[0] == ')') {
    next(L);
    return 0;
  }
  size_t cap = 0;
  for (;;) {
    if (*nparams == PTX_PARAMS_MAX)
      return perr(L, t.line, ".entry `%s` has more parameters than fit in %u bytes", kname,
                  CC_PARAM_BYTES_MAX);
    cucore_param_info *np = cc_grow(*params, &cap, (size_t)*nparams + 1, sizeof *np,
                                    "a parameter list");
    if (!np) return poom(L, t.line, "a parameter list");
    *params = np;
    memset(&np[*nparams], 0, sizeof np[*nparams]);
    if (parse_param(L, kname, *nparams, &np[*nparams])) return -1;
    (*nparams)++;
    t = next(L);
    if (t.kind == TOK_PUNCT && t.s[0] == ')') return 0;
    if (!(t.kind == TOK_PUNCT && t.s[0] == ','))
      return perr(L, t.line, "parameters of .entry `%s`: expected `,` or `)`, found %s", kname,
                  show(t, b1, sizeof b1));
  }
}

/* One performance directive `t` of an .entry (a table: each sets one field of k). */
static int parse_directive(lexer *L, token t, const char *kname, cucore_kernel_info *k) {
  char b1[64];
  if (is(t, ".maxntid")) return parse_dims(L, ".maxntid", kname, k->maxntid);
  if (is(t, ".reqntid")) return parse_dims(L, ".reqntid", kname, k->reqntid);
  if (is(t, ".reqnctapercluster"))
    return parse_dims(L, ".reqnctapercluster", kname, k->cluster_dims);
  if (is(t, ".minnctapersm")) return parse_one(L, ".minnctapersm", kname, &k->min_blocks_per_sm);
  if (is(t, ".maxnreg")) return parse_one(L, ".maxnreg", kname, &k->max_registers);
  if (is(t, ".maxclusterrank"))
    return parse_one(L, ".maxclusterrank", kname, &k->max_blocks_per_cluster);
  if (is(t, ".explicitcluster")) {
    k->explicit_cluster = 1;
    return 0;
  }
  if (is(t, ".pragma")) {
    while ((t = next(L)).kind != TOK_END && !(t.kind == TOK_PUNCT && t.s[0] == ';')) {}
    return 0;
  }
  if (t.kind == TOK_WORD && t.s[0] == '.') {
    /* a directive this reader does not use: skip its numeric arguments */
    for (;;) {
      token a = peek(L);
      uint64_t dummy;
      if (!parse_uint(a, UINT64_MAX, &dummy) && !(a.kind == TOK_PUNCT && a.s[0] == ',')) break;
      next(L);
    }
    return 0;
  }
  return perr(L, t.line,
              "after the parameters of .entry `%s`: expected a directive or `{`, found %s", kname,
              show(t, b1, sizeof b1));
}

/* Performance directives, then the body, which is skipped: 0; 1 when a `;` ends a declaration
 * instead; -1 on an error. */
static int parse_directives(lexer *L, const char *kname, cucore_kernel_info *k) {
  for (;;) {
    token t = next(L);
    if (t.kind == TOK_PUNCT && t.s[0] == '{') return skip_body(L, t.line);
    if (t.kind == TOK_PUNCT && t.s[0] == ';') return 1;
    if (t.kind == TOK_END) return perr(L, t.line, ".entry `%s` has no body", kname);
    if (parse_directive(L, t, kname, k)) return -1;
  }
}

/* Lays the parameters out for `arch` and appends the kernel (taking *params) to the list. */
static int store_kernel(lexer *L, token nt, const char *kname, int arch,
                        const cucore_kernel_info *k, cucore_param_info **params, uint32_t nparams,
                        cc_klist *kernels) {
  uint64_t total = layout(*params, nparams, arch);
  if (total > CC_PARAM_BYTES_MAX)
    return perr(L, nt.line,
                ".entry `%s`: its parameters take %llu bytes laid out for sm_%d; a kernel's "
                "parameter buffer holds at most %u",
                kname, (unsigned long long)total, arch, CC_PARAM_BYTES_MAX);
  cucore_kernel_info *dst = cc_klist_add(kernels, nt.s, nt.len);
  if (!dst) return poom(L, nt.line, "a kernel list");
  const char *stored_name = dst->name;
  *dst = *k;
  dst->name = stored_name;
  dst->demangled = cc_demangle(stored_name);
  dst->params = *params;
  *params = NULL;
  dst->param_count = nparams;
  cc_kinfo_param_types(dst);
  dst->param_bytes = (uint32_t)total;
  dst->param_base = nparams ? (int32_t)cc_param_base(arch, (uint32_t)total) : 0;
  dst->registers = CUCORE_UNKNOWN;
  dst->static_shared_bytes = CUCORE_UNKNOWN;
  dst->reserved_shared_bytes = CUCORE_UNKNOWN;
  dst->local_bytes = CUCORE_UNKNOWN;
  dst->stack_bytes = CUCORE_UNKNOWN;
  dst->const_bytes = CUCORE_UNKNOWN;
  dst->user_const_bytes = CUCORE_UNKNOWN;
  dst->barriers = CUCORE_UNKNOWN;
  cc_kinfo_finish_limits(dst);
  return 0;
}

/* Parses ".entry NAME (params) directives { body }"; ".entry" was read. */
static int parse_entry(lexer *L, int layout_arch, cc_klist *kernels) {
  char b1[64];
  token nt = next(L);
  if (nt.kind != TOK_WORD || nt.s[0] == '.')
    return perr(L, nt.line, "expected a kernel name after .entry, found %s",
                show(nt, b1, sizeof b1));
  /* the name as messages show it: at most 80 characters */
  char kname[96];
  snprintf(kname, sizeof kname, "%.*s%s", nt.len > 80 ? 80 : (int)nt.len, nt.s,
           nt.len > 80 ? "..." : "");
  cucore_param_info *params = NULL;
  uint32_t nparams = 0;
  cucore_kernel_info k;
  memset(&k, 0, sizeof k);
  int rc = parse_params(L, kname, &params, &nparams);
  if (rc == 0) rc = parse_directives(L, kname, &k);
  if (rc == 0)
    rc = store_kernel(L, nt, kname, layout_arch, &k, &params, nparams, kernels);
  else if (rc == 1)
    rc = 0; /* a declaration: no kernel to report */
  free(params);
  return rc;
}

/* ---- module variables ---------------------------------------------------------------------- */

/* Skips to the end of the statement (`;` outside braces and parentheses), consumed. */
static void skip_statement(lexer *L) {
  int depth = 0;
  for (;;) {
    token t = next(L);
    if (t.kind == TOK_END) return;
    if (t.kind != TOK_PUNCT) continue;
    if (t.s[0] == '{' || t.s[0] == '(') depth++;
    if ((t.s[0] == '}' || t.s[0] == ')') && depth > 0) depth--;
    if (t.s[0] == ';' && depth == 0) return;
  }
}

/* The qualifiers of a module-scope variable up to its name: type, vector width and
 * .attribute(.managed); -1 when the text ends inside an .attribute list. */
static int global_qualifiers(lexer *L, const scalar_type **type, uint64_t *vec, int *managed) {
  for (;;) {
    token t = peek(L);
    if (t.kind != TOK_WORD || t.s[0] != '.') return 0;
    next(L);
    const scalar_type *ty = find_type(t);
    if (ty) {
      *type = ty;
    } else if (is(t, ".align")) {
      next(L); /* the alignment does not change the size */
    } else if (is(t, ".v2") || is(t, ".v4") || is(t, ".v8")) {
      *vec = (uint64_t)(t.s[2] - '0');
    } else if (is(t, ".attribute")) {
      token open = next(L);
      if (!(open.kind == TOK_PUNCT && open.s[0] == '(')) return 0;
      int depth = 1;
      while (depth > 0) {
        token a = next(L);
        if (a.kind == TOK_END) return -1;
        if (a.kind == TOK_PUNCT && a.s[0] == '(') depth++;
        if (a.kind == TOK_PUNCT && a.s[0] == ')') depth--;
        if (is(a, ".managed")) *managed = 1;
      }
    }
    /* other qualifiers (.ptr, .volatile, ...) do not change the size */
  }
}

/* Array dimensions "[N][M]..." after a variable's name multiply *size; an empty `[]` (sized by
 * the initializer) or a size past any GPU's memory clears *known. -1 when they cannot be read
 * (the statement is skipped). */
static int global_dims(lexer *L, uint64_t *size, int *known) {
  for (token t = peek(L); t.kind == TOK_PUNCT && t.s[0] == '['; t = peek(L)) {
    next(L);
    token v = next(L);
    uint64_t n = 0;
    if (v.kind == TOK_PUNCT && v.s[0] == ']') {
      *known = 0; /* sized by its initializer */
      continue;
    }
    if (!parse_uint(v, (uint64_t)1 << 40, &n)) {
      skip_statement(L);
      return -1;
    }
    token close = next(L);
    if (!(close.kind == TOK_PUNCT && close.s[0] == ']')) {
      skip_statement(L);
      return -1;
    }
    if (n && *size > ((uint64_t)1 << 40) / n) *known = 0; /* far past any GPU's memory */
    *size *= n;
  }
  return 0;
}

/* Skips "= initializer" up to the `,` or `;` after it (not consumed); the `=` was read. -1 at
 * the end of the text. */
static int skip_initializer(lexer *L) {
  int depth = 0;
  for (;;) {
    token t = peek(L);
    if (t.kind == TOK_END) return -1;
    if (t.kind == TOK_PUNCT && depth == 0 && (t.s[0] == ',' || t.s[0] == ';')) return 0;
    next(L);
    if (t.kind == TOK_PUNCT && (t.s[0] == '{' || t.s[0] == '(')) depth++;
    if (t.kind == TOK_PUNCT && (t.s[0] == '}' || t.s[0] == ')') && depth > 0) depth--;
  }
}

/* One declarator "name[N] = init" of a variable statement, recorded when its size is known;
 * 1 when a `,` says another follows. */
static int global_declarator(lexer *L, const scalar_type *type, uint64_t vec,
                             cucore_global_kind kind, cc_glist *out) {
  token name = next(L);
  if (name.kind != TOK_WORD || name.s[0] == '.') {
    if (!(name.kind == TOK_PUNCT && name.s[0] == ';')) skip_statement(L);
    return 0;
  }
  uint64_t size = (uint64_t)type->size * vec;
  int known = 1, initialized = 0;
  if (global_dims(L, &size, &known)) return 0;
  token t = peek(L);
  if (t.kind == TOK_PUNCT && t.s[0] == '=') {
    next(L);
    initialized = 1;
    if (skip_initializer(L)) return 0;
  }
  if (known && size > 0) {
    cucore_global_info *g = cc_glist_add(out, name.s, name.len);
    if (!g) { /* out of memory: said, not a list that silently lacks the variable */
      poom(L, name.line, "a module variable list");
      skip_statement(L);
      return 0;
    }
    g->size = size;
    g->kind = kind;
    g->initialized = initialized;
  }
  t = next(L);
  if (t.kind == TOK_PUNCT && t.s[0] == ',') return 1;
  if (!(t.kind == TOK_PUNCT && t.s[0] == ';')) skip_statement(L);
  return 0;
}

/* Parses the rest of a module-scope ".global ..." or ".const ..." statement (the state space
 * was read) and records each declarator with a known size. */
static void parse_global(lexer *L, cucore_global_kind kind, int is_extern, cc_glist *out) {
  const scalar_type *type = NULL;
  uint64_t vec = 1;
  int managed = 0;
  if (global_qualifiers(L, &type, &vec, &managed)) return;
  if (!type || is_extern || type->kind == CUCORE_PARAM_UNKNOWN) {
    skip_statement(L); /* no type, a declaration only, or a texture / sampler / surface */
    return;
  }
  if (managed && kind == CUCORE_GLOBAL_DEVICE) kind = CUCORE_GLOBAL_MANAGED;
  while (global_declarator(L, type, vec, kind, out)) {}
}

/* "sm_90a" / "compute_90" -> 90 and 'a'. */
static void parse_target(token t, int *arch, char *suffix) {
  const char *s = t.s;
  size_t n = t.len, i;
  if (n > 3 && memcmp(s, "sm_", 3) == 0)
    i = 3;
  else if (n > 8 && memcmp(s, "compute_", 8) == 0)
    i = 8;
  else
    return;
  int v = 0, digits = 0;
  while (i < n && s[i] >= '0' && s[i] <= '9' && digits < 4) v = v * 10 + (s[i++] - '0'), digits++;
  if (!digits) return;
  *arch = v;
  if (i < n && (s[i] == 'a' || s[i] == 'f')) *suffix = s[i];
}

#define SEEN_VERSION 1
#define SEEN_TARGET 2

/* One top-level statement starting with `t` (not inside braces or parentheses); 1 when an
 * entry could not be read (the lexer holds why). */
static int top_statement(lexer *L, token t, int arch, int was_extern, int *seen, cc_ptx *out) {
  if (is(t, ".global") || is(t, ".const")) {
    token after = peek(L);
    if (after.kind == TOK_PUNCT && after.s[0] == '[')
      skip_statement(L); /* .const[bank]: an old form this reader does not follow */
    else
      parse_global(L, is(t, ".global") ? CUCORE_GLOBAL_DEVICE : CUCORE_GLOBAL_CONSTANT, was_extern,
                   &out->globals);
  } else if (is(t, ".version")) {
    *seen |= SEEN_VERSION;
    token v = next(L);
    int major = 0, minor = 0;
    size_t i = 0;
    while (i < v.len && v.s[i] >= '0' && v.s[i] <= '9' && major < 1000)
      major = major * 10 + (v.s[i++] - '0');
    if (i < v.len && v.s[i] == '.') i++;
    while (i < v.len && v.s[i] >= '0' && v.s[i] <= '9' && minor < 1000)
      minor = minor * 10 + (v.s[i++] - '0');
    out->version = major * 10 + (minor > 9 ? 9 : minor);
  } else if (is(t, ".target")) {
    *seen |= SEEN_TARGET;
    token v = next(L);
    parse_target(v, &out->target, &out->target_suffix);
  } else if (is(t, ".entry")) {
    if (!out->layout_arch) out->layout_arch = arch ? arch : out->target;
    return parse_entry(L, out->layout_arch, &out->kernels);
  }
  return 0;
}

/* Text that is not a PTX module: a module states its ISA .version and its .target. */
static int check_module(lexer *L, token first, int seen) {
  char buf[64];
  if ((seen & SEEN_VERSION) && (seen & SEEN_TARGET)) return 0;
  return perr(L, first.line,
              "not PTX: there is no .%s directive (a PTX module starts with its ISA .version, "
              "then its .target); the text starts with %s",
              seen & SEEN_VERSION ? "target" : "version", show(first, buf, sizeof buf));
}

static cucore_status ptx_parse(const char *text, size_t len, int arch, cc_ptx *out, char *err,
                               size_t errlen) {
  memset(out, 0, sizeof *out);
  len = strnlen(text, len);
  lexer L = {text, text + len, 1, {TOK_END, NULL, 0, 0}, 0, ""};
  int depth = 0, parens = 0, rc = 0, is_extern = 0, seen = 0;
  token first = peek(&L);
  for (;;) {
    token t = next(&L);
    if (t.kind == TOK_END) break;
    if (t.kind == TOK_PUNCT && t.s[0] == '{') {
      depth++;
      continue;
    }
    if (t.kind == TOK_PUNCT && t.s[0] == '}') {
      if (depth > 0) depth--;
      continue;
    }
    if (depth > 0) continue;
    if (t.kind == TOK_PUNCT && t.s[0] == '(') parens++;
    if (t.kind == TOK_PUNCT && t.s[0] == ')' && parens > 0) parens--;
    if (parens > 0) continue;
    if (is(t, ".extern")) {
      is_extern = 1;
      continue;
    }
    if (is(t, ".visible") || is(t, ".weak") || is(t, ".common")) continue;
    int was_extern = is_extern;
    is_extern = 0;
    if ((rc = top_statement(&L, t, arch, was_extern, &seen, out)) != 0) break;
  }
  if (!rc && !L.err[0]) rc = check_module(&L, first, seen);
  if (!out->layout_arch) out->layout_arch = arch ? arch : out->target;
  if (rc || L.err[0]) {
    snprintf(err, errlen, "%s", L.err[0] ? L.err : "PTX could not be parsed");
    cc_klist_free(&out->kernels);
    cc_glist_free(&out->globals);
    return L.oom ? CUCORE_HOST_OUT_OF_MEMORY : CUCORE_PARSE_ERROR;
  }
  return CUCORE_OK;
}

cucore_status cc_ptx_parse(const char *text, size_t len, int arch, cc_ptx *out) {
  char err[512];
  cucore_status st = ptx_parse(text, len, arch, out, err, sizeof err);
  if (st != CUCORE_OK) return cc_fail(st, "%s", err);
  return CUCORE_OK;
}

cucore_status cc_ptx_parse_quiet(const char *text, size_t len, int arch, cc_ptx *out) {
  char err[512];
  return ptx_parse(text, len, arch, out, err, sizeof err);
}

void cc_ptx_free(cc_ptx *p) {
  cc_klist_free(&p->kernels);
  cc_glist_free(&p->globals);
  memset(p, 0, sizeof *p);
}
