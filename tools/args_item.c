/* args_item.c -- one value of a spec (args_item_parse: a scalar, null, ptr:ADDR, an array, a
 * buffer, a struct or bytes), and the by-value blobs: `struct[@A]:{FIELD,...}` laid out by C
 * rules (each field at the next multiple of its alignment, the size rounded up to the
 * largest alignment; @A raises the struct's alignment as alignas(A) does) and
 * `bytes[@A]:HEX` / `bytes[@A]:@FILE`. A field is any value spec (a scalar, null, ptr:ADDR,
 * an array TYPE[N]=INIT, a nested struct, bytes, or a buffer passed by pointer) or `pad:N`,
 * N zero bytes. */
#include "args_spec.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOB_MAX ((size_t)1 << 28) /* 256 MiB: far past any parameter or struct global */
#define DEPTH_MAX 16

/* "@A" at *pp (optional): a power of two 1..4096. */
static int parse_align(args_cursor *c, const char **pp, const char *end, size_t *align) {
  const char *p = *pp;
  *align = 0;
  if (p >= end || *p != '@') return 0;
  p++;
  size_t a = 0;
  const char *start = p;
  while (p < end && *p >= '0' && *p <= '9' && a <= 4096) a = a * 10 + (size_t)(*p++ - '0');
  if (p == start || a == 0 || a > 4096 || (a & (a - 1)))
    return args_cursor_usage(c, "the alignment after `@` must be a power of two from 1 to 4096");
  *align = a;
  *pp = p;
  return 0;
}

/* The end of the field that starts at p: the next ',' outside braces, or `end`. */
static const char *field_end(const char *p, const char *end) {
  int depth = 0;
  for (; p < end; p++) {
    if (*p == '{') depth++;
    if (*p == '}' && depth > 0) depth--;
    if (*p == ',' && depth == 0) return p;
  }
  return end;
}

typedef struct builder {
  unsigned char *bytes;
  size_t size, cap, align;
  args_patch *patches;
  int npatches;
  size_t patches_cap;
  char *layout;
  size_t layout_len, layout_cap;
} builder;

/* Room for `need` bytes, the new ones zeroed. 0 or -1 (cli_grow said why). */
static int grow(builder *b, size_t need) {
  size_t old = b->cap;
  unsigned char *nb = cli_grow(b->bytes, &b->cap, need, 1, "the struct's bytes");
  if (!nb) return -1;
  if (b->cap > old) memset(nb + old, 0, b->cap - old);
  b->bytes = nb;
  return 0;
}

/* Appends a buffer pointer to patch at `offset`. 0 or -1 (cli_grow said why). */
static int add_patch(builder *b, size_t offset, int buf) {
  args_patch *np = cli_grow(b->patches, &b->patches_cap, (size_t)b->npatches + 1, sizeof *np,
                            "the struct's pointer list");
  if (!np) return -1;
  b->patches = np;
  b->patches[b->npatches++] = (args_patch){offset, buf};
  return 0;
}

static void note(builder *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(builder *b, const char *fmt, ...) {
  char piece[128];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(piece, sizeof piece, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  char *nl = cli_grow(b->layout, &b->layout_cap, b->layout_len + (size_t)n + 2, 1,
                      "the struct's layout text");
  if (!nl) return;
  b->layout = nl;
  if (b->layout_len) b->layout[b->layout_len++] = ' ';
  memcpy(b->layout + b->layout_len, piece, (size_t)n + 1);
  b->layout_len += (size_t)n;
}

static void builder_free(builder *b) {
  free(b->bytes);
  free(b->patches);
  free(b->layout);
}

/* Appends a value at its alignment. */
static int place(args_cursor *c, builder *b, const args_item *v, const char *field_text, int flen) {
  size_t a = v->align ? v->align : 1;
  size_t off = (b->size + a - 1) / a * a;
  if (off > BLOB_MAX || v->size > BLOB_MAX - off)
    return args_cursor_usage(c, "the struct grows past %zu bytes", BLOB_MAX);
  if (grow(b, off + v->size)) return args_cursor_usage(c, "out of memory");
  if (off > b->size) note(b, "pad %zu", off - b->size);
  switch (v->kind) {
  case ARGS_SCALAR:
    memcpy(b->bytes + off, v->scalar, v->size);
    note(b, "%s@%zu", args_elem_names[v->type], off);
    break;
  case ARGS_POINTER:
    memcpy(b->bytes + off, &v->address, 8);
    if (v->buf >= 0 && add_patch(b, off, v->buf)) return args_cursor_usage(c, "out of memory");
    note(b, "ptr@%zu", off);
    break;
  case ARGS_BLOB:
    if (v->size) memcpy(b->bytes + off, v->bytes, v->size);
    for (int i = 0; i < v->patch_count; i++)
      if (add_patch(b, off + v->patches[i].offset, v->patches[i].buf))
        return args_cursor_usage(c, "out of memory");
    if (v->layout)
      note(b, "{%s}@%zu", v->layout, off);
    else if (field_text && flen > 0 && (strncmp(field_text, "bytes", 5) == 0))
      note(b, "bytes[%zu]@%zu", v->size, off);
    else
      note(b, "%s[%zu]@%zu", args_elem_names[v->type], v->size / (size_t)args_elem_sizes[v->type],
           off);
    break;
  }
  b->size = off + v->size;
  if (a > b->align) b->align = a;
  return 0;
}

/* `struct[@A]:{` or `{` at c->p: *body and *body_end bound what is inside the braces, and
 * *explicit_align is A (0 when not given). */
static int struct_head(args_cursor *c, const char *end, const char **body, const char **body_end,
                       size_t *explicit_align) {
  const char *p = c->p;
  *explicit_align = 0;
  if (strncmp(p, "struct", 6) == 0) {
    p += 6;
    int rc = parse_align(c, &p, end, explicit_align);
    if (rc) return rc;
    if (p >= end || *p != ':')
      return args_cursor_usage(c, "expected struct:{FIELD,...} or struct@ALIGN:{...}");
    p++;
  }
  if (p >= end || *p != '{' || end[-1] != '}')
    return args_cursor_usage(c, "a struct is written {FIELD,...} (quote it for the shell: "
                                "'struct:{f32:1,i32:2}')");
  if (c->depth >= DEPTH_MAX)
    return args_cursor_usage(c, "structs nest deeper than %d levels", DEPTH_MAX);
  *body = p + 1;
  *body_end = end - 1;
  return 0;
}

/* Field `index`, `pad:N` at [f, fe): N zero bytes. */
static int add_pad(args_cursor *c, builder *b, const char *f, const char *fe, int index) {
  char *e = NULL;
  char num[24];
  snprintf(num, sizeof num, "%.*s", (int)(fe - f - 4 < 23 ? fe - f - 4 : 23), f + 4);
  unsigned long long n = strtoull(num, &e, 10);
  if (num[0] < '0' || num[0] > '9' || *e || n == 0 || n > BLOB_MAX)
    return args_cursor_usage(c, "field %d: pad:N takes a byte count from 1", index);
  if (b->size + n > BLOB_MAX || grow(b, b->size + (size_t)n))
    return args_cursor_usage(c, "the struct grows past %zu bytes", BLOB_MAX);
  note(b, "pad %llu", n);
  b->size += (size_t)n;
  return 0;
}

/* Field `index`, any value spec at [f, fe), placed at its alignment; buffers it makes are
 * labelled PARENT.INDEX. */
static int add_field(args_cursor *c, builder *b, const char *f, const char *fe, int index,
                     const char *parent) {
  args_item fv;
  args_cursor sub = *c;
  sub.p = f;
  sub.depth = c->depth + 1;
  snprintf(sub.label, sizeof sub.label, "%s.%d", parent, index);
  int rc = args_item_parse(&sub, fe, &fv);
  if (rc) return rc;
  rc = place(c, b, &fv, f, (int)(fe - f));
  args_item_free(&fv);
  return rc;
}

/* Every field of the body [body, body_end), in order. */
static int add_fields(args_cursor *c, builder *b, const char *body, const char *body_end) {
  char parent[32];
  snprintf(parent, sizeof parent, "%s", c->label);
  if (body == body_end) return args_cursor_usage(c, "the struct {} has no fields");
  int index = 0;
  for (const char *f = body; f <= body_end; index++) {
    const char *fe = field_end(f, body_end);
    if (fe == f) return args_cursor_usage(c, "field %d is empty", index);
    int rc = strncmp(f, "pad:", 4) == 0 ? add_pad(c, b, f, fe, index)
                                        : add_field(c, b, f, fe, index, parent);
    if (rc) return rc;
    f = fe + 1;
    if (fe == body_end) break;
  }
  return 0;
}

/* The struct's alignment (@A, never below the natural one) and its size rounded up to it,
 * the tail padding zeroed; the bytes, pointers and layout then move into v. */
static int finish_struct(args_cursor *c, builder *b, size_t explicit_align, args_item *v) {
  if (explicit_align) {
    size_t natural = b->align;
    if (explicit_align < natural)
      return args_cursor_usage(
          c,
          "@%zu is below the struct's natural alignment of %zu (alignas cannot "
          "lower it)",
          explicit_align, natural);
    b->align = explicit_align;
  }
  size_t size = (b->size + b->align - 1) / b->align * b->align;
  if (size == 0) size = b->align;
  if (grow(b, size)) return args_cursor_usage(c, "out of memory");
  if (size > b->size) note(b, "pad %zu", size - b->size);
  v->kind = ARGS_BLOB;
  v->bytes = b->bytes;
  v->size = size;
  v->align = b->align;
  v->patches = b->patches;
  v->patch_count = b->npatches;
  v->layout = b->layout;
  v->type = ARGS_U8;
  memset(b, 0, sizeof *b);
  return 0;
}

/* Parses `struct[@A]:{...}` or `{...}` (c->p at `{`) into a blob. */
static int item_struct(args_cursor *c, const char *end, size_t min_align, args_item *v) {
  memset(v, 0, sizeof *v);
  v->buf = -1;
  const char *body = NULL, *body_end = NULL;
  size_t explicit_align = 0;
  int rc = struct_head(c, end, &body, &body_end, &explicit_align);
  if (rc) return rc;
  builder b;
  memset(&b, 0, sizeof b);
  b.align = min_align ? min_align : 1;
  rc = add_fields(c, &b, body, body_end);
  if (!rc) rc = finish_struct(c, &b, explicit_align, v);
  builder_free(&b); /* empty when the blob moved into v */
  return rc;
}

static int hex_digit(char ch) {
  if (ch >= '0' && ch <= '9') return ch - '0';
  if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
  if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
  return -1;
}

/* Parses `bytes[@A]:HEX` or `bytes[@A]:@FILE` (c->p at `bytes`) into a blob. */
static int item_bytes(args_cursor *c, const char *end, args_item *v) {
  memset(v, 0, sizeof *v);
  v->buf = -1;
  const char *p = c->p + 5; /* "bytes" */
  size_t align = 0;
  int rc = parse_align(c, &p, end, &align);
  if (rc) return rc;
  if (p >= end || *p != ':')
    return args_cursor_usage(c, "expected bytes:HEX, bytes:@FILE or bytes@ALIGN:HEX");
  p++;
  v->kind = ARGS_BLOB;
  v->align = align ? align : 1;
  v->type = ARGS_U8;
  if (p < end && *p == '@') {
    size_t count = 0;
    unsigned char *data = NULL;
    char path[4096];
    snprintf(path, sizeof path, "%.*s", (int)(end - p - 1), p + 1);
    cli_input_add(path); /* no output may be this file */
    char what[300];
    snprintf(what, sizeof what, "%s `%s`", c->flag, c->all);
    int ndim = 1;
    uint64_t shape[ARGS_MAX_DIMS];
    rc = args_data_read(what, path, ARGS_U8, &count, &data, &ndim, shape);
    if (rc) return rc;
    if (count > BLOB_MAX) {
      free(data);
      fprintf(stderr,
              "cucore %s: %s: `%s` holds %zu bytes; a by-value blob is 1 to %zu "
              "bytes\n",
              cli_verb_name, what, path, count, BLOB_MAX);
      return CLI_EXIT_FAILURE;
    }
    v->bytes = data;
    v->size = count;
    return 0;
  }
  size_t digits = 0;
  for (const char *q = p; q < end; q++) {
    if (*q == '_') continue;
    if (hex_digit(*q) < 0)
      return args_cursor_usage(c,
                               "`%c` is not a hex digit (bytes are written as pairs of hex digits, "
                               "e.g. bytes:00ff10a0, `_` may separate them)",
                               *q);
    digits++;
  }
  if (digits == 0 || digits % 2)
    return args_cursor_usage(c, "%zu hex digits: bytes need a whole number of pairs (at least one)",
                             digits);
  if (digits / 2 > BLOB_MAX) return args_cursor_usage(c, "more than %zu bytes", BLOB_MAX);
  v->size = digits / 2;
  v->bytes = malloc(v->size);
  if (!v->bytes) return args_cursor_usage(c, "out of memory");
  size_t n = 0;
  int high = -1;
  for (const char *q = p; q < end; q++) {
    if (*q == '_') continue;
    if (high < 0) {
      high = hex_digit(*q);
    } else {
      v->bytes[n++] = (unsigned char)(high << 4 | hex_digit(*q));
      high = -1;
    }
  }
  return 0;
}

int args_item_parse(args_cursor *c, const char *end, args_item *v) {
  memset(v, 0, sizeof *v);
  v->buf = -1;
  const char *p = c->p;
  if (p >= end) return args_cursor_usage(c, "an empty value");
  if ((size_t)(end - p) == 4 && memcmp(p, "null", 4) == 0) {
    v->kind = ARGS_POINTER;
    v->size = v->align = 8;
    return 0;
  }
  if (args_cursor_starts(p, end, "ptr:")) {
    char *text = args_cursor_dup(p + 4, end);
    v->kind = ARGS_POINTER;
    v->size = v->align = 8;
    int r = strcmp(text, "null") == 0 ? 0 : args_value_parse(ARGS_U64, text, v->scalar);
    if (r == 0) memcpy(&v->address, v->scalar, 8);
    free(text);
    if (r) return args_cursor_usage(c, "ptr:VALUE takes an address (0x...) or null");
    return 0;
  }
  if (args_cursor_starts(p, end, "buf:") || args_cursor_starts(p, end, "out:") ||
      args_cursor_starts(p, end, "inout:"))
    return args_fill_buffer(c, end, v);
  if (args_cursor_starts(p, end, "struct") || *p == '{') return item_struct(c, end, 1, v);
  if (args_cursor_starts(p, end, "bytes")) return item_bytes(c, end, v);
  /* TYPE:VALUE or TYPE[N]=INIT / TYPE[N]:INIT */
  const char *colon = memchr(p, ':', (size_t)(end - p)), *br = memchr(p, '[', (size_t)(end - p));
  if (br && (!colon || br < colon)) {
    args_elem type;
    size_t count = 0;
    int rc = args_fill_type_count(c, &p, end, &type, &count, 1);
    if (rc) return rc;
    if (p >= end || (*p != '=' && *p != ':'))
      return args_cursor_usage(
          c, "expected =INIT after %s[N] (a number, iota, random, {list} or @file)",
          args_elem_names[type]);
    p++;
    unsigned char *data = NULL;
    rc = args_fill_values(c, p, (size_t)(end - p), type, &count, &data, NULL, NULL);
    if (rc) return rc;
    v->kind = ARGS_BLOB;
    v->bytes = data;
    v->size = count * (size_t)args_elem_sizes[type];
    v->align = (size_t)args_elem_sizes[type];
    v->type = type;
    return 0;
  }
  if (!colon)
    return args_cursor_usage(c,
                             "expected TYPE:VALUE, null, ptr:ADDR, buf:TYPE[N]=INIT, out:TYPE[N], "
                             "inout:TYPE[N]=INIT, struct:{...} or bytes:HEX");
  int t = args_elem_parse(p, (size_t)(colon - p));
  if (t < 0)
    return args_cursor_usage(c,
                             "unknown type `%.*s` (expected %s, ptr, null, buf, out, inout, struct "
                             "or bytes)",
                             (int)(colon - p), p, args_elem_list());
  char *text = args_cursor_dup(colon + 1, end);
  int r = args_value_parse((args_elem)t, text, v->scalar);
  if (r) {
    int rc = args_fill_bad_value(c, r, "", text, (args_elem)t, "");
    free(text);
    return rc;
  }
  free(text);
  v->kind = ARGS_SCALAR;
  v->type = (args_elem)t;
  v->size = v->align = (size_t)args_elem_sizes[t];
  return 0;
}

/* An item's allocations freed (args_fill.c and this file make them). */
void args_item_free(args_item *v) {
  free(v->bytes);
  free(v->patches);
  free(v->layout);
  memset(v, 0, sizeof *v);
}
