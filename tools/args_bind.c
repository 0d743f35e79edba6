/* args_bind.c -- binding the argument values (`cucore run`, `cucore tune`) to a kernel: scalars
 * through the typed setters (so a float given for a double is caught), pointers (buffers by
 * their device address, 0 before allocation), structs and bytes through cucore_args_push_bytes
 * with their alignment; module variables written (--global) or checked offline against the
 * code. A refused argument is reported with its spec, the struct layout when there is one, and
 * the parameter's C++ type when the kernel has a signature. */
#include "args_spec.h"

#include <stdlib.h>
#include <string.h>

const char *args_bind_param_type(cucore_object *obj, const char *symbol, int index, char *buf,
                                 size_t len, char *sig, size_t siglen) {
  const void *code = NULL;
  size_t size = 0;
  cucore_code_type type = CUCORE_CODE_AUTO;
  cucore_binary *bin = NULL;
  const cucore_kernel_info *k = NULL;
  const char *found = NULL;
  if (!obj || cucore_object_get_code(obj, &type, &code, &size) != CUCORE_OK ||
      cucore_binary_open(code, size, type, 0, &bin) != CUCORE_OK)
    return NULL;
  const char *ptx = NULL;
  size_t ptx_size = 0;
  if (cucore_object_get_ptx(obj, &ptx, &ptx_size) == CUCORE_OK && ptx && type != CUCORE_CODE_PTX)
    (void)cucore_binary_attach_ptx(bin, ptx, ptx_size, NULL);
  if (cucore_binary_find_kernel(bin, symbol, &k) == CUCORE_OK && k->param_types && index >= 0 &&
      (uint32_t)index < k->param_count) {
    snprintf(buf, len, "%s", k->param_types[index]);
    snprintf(sig, siglen, "%s", k->demangled ? k->demangled : k->name);
    found = buf;
  }
  cucore_binary_destroy(bin);
  return found;
}

int args_bind_plain_name(const char *name) {
  if (!*name || (*name >= '0' && *name <= '9')) return 0;
  for (const char *p = name; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
          *p == '_'))
      return 0;
  return 1;
}

const char *args_bind_global_symbol(cucore_object *obj, const char *name, char *buf, size_t len) {
  const char *lowered = NULL;
  if (args_bind_plain_name(name)) return name;
  snprintf(buf, len, "&%s", name);
  if (cucore_object_get_lowered_name(obj, buf, &lowered) == CUCORE_OK && lowered) return lowered;
  return name;
}

/* The blob with every buffer's device address patched in (a copy of v->bytes). */
static unsigned char *patched(const args_set *o, const args_item *v) {
  unsigned char *b = malloc(v->size ? v->size : 1);
  if (!b) return NULL;
  if (v->size) memcpy(b, v->bytes, v->size);
  for (int i = 0; i < v->patch_count; i++) {
    uint64_t addr = o->bufs[v->patches[i].buf].ptr;
    memcpy(b + v->patches[i].offset, &addr, 8);
  }
  return b;
}

unsigned char *args_bind_item_bytes(const args_set *o, const args_item *v, size_t *size) {
  *size = v->size;
  if (v->kind == ARGS_BLOB) return patched(o, v);
  unsigned char *b = calloc(1, 8);
  if (!b) return NULL;
  if (v->kind == ARGS_SCALAR) {
    memcpy(b, v->scalar, v->size);
  } else {
    uint64_t addr = v->buf >= 0 ? o->bufs[v->buf].ptr : v->address;
    memcpy(b, &addr, 8);
  }
  return b;
}

static cucore_status push(const args_set *o, cucore_args *args, const args_item *v) {
  if (v->kind == ARGS_POINTER)
    return cucore_args_push_ptr(args, v->buf >= 0 ? o->bufs[v->buf].ptr : v->address);
  if (v->kind == ARGS_BLOB) {
    unsigned char *b = patched(o, v);
    if (!b) return CUCORE_HOST_OUT_OF_MEMORY;
    cucore_status st = cucore_args_push_bytes(args, b, v->size, v->align);
    free(b);
    return st;
  }
  uint64_t x = 0;
  memcpy(&x, v->scalar, 8);
  switch (v->type) {
  case ARGS_I8: return cucore_args_push_i8(args, (int8_t)x);
  case ARGS_U8: return cucore_args_push_u8(args, (uint8_t)x);
  case ARGS_I16: return cucore_args_push_i16(args, (int16_t)x);
  case ARGS_U16: return cucore_args_push_u16(args, (uint16_t)x);
  case ARGS_I32: return cucore_args_push_i32(args, (int32_t)x);
  case ARGS_U32: return cucore_args_push_u32(args, (uint32_t)x);
  case ARGS_I64: return cucore_args_push_i64(args, (int64_t)x);
  case ARGS_U64: return cucore_args_push_u64(args, x);
  case ARGS_F16: return cucore_args_push_f16(args, (uint16_t)x);
  case ARGS_BF16: return cucore_args_push_bf16(args, (uint16_t)x);
  case ARGS_F32: {
    float f;
    memcpy(&f, v->scalar, 4);
    return cucore_args_push_f32(args, f);
  }
  case ARGS_F64: {
    double d;
    memcpy(&d, v->scalar, 8);
    return cucore_args_push_f64(args, d);
  }
  default: return CUCORE_INTERNAL;
  }
}

int args_bind_write_globals(args_set *o, cucore_device *dev, cucore_object *obj) {
  for (int i = 0; i < o->nsets; i++) {
    args_global_set *g = &o->sets[i];
    char sym[512];
    cucore_status st =
        cucore_object_get_global(obj, dev, args_bind_global_symbol(obj, g->name, sym, sizeof sym),
                                 &g->g);
    if (st != CUCORE_OK) return cli_fail(cli_verb_name, "--global", st);
    size_t size = 0;
    unsigned char *bytes = args_bind_item_bytes(o, &g->v, &size);
    if (!bytes) return cli_fail(cli_verb_name, "--global", CUCORE_HOST_OUT_OF_MEMORY);
    if (size != g->g.size) {
      free(bytes);
      fprintf(stderr, "cucore %s: --global %s: the value is %zu bytes; `%s` (%s) is %zu bytes\n",
              cli_verb_name, g->text, size, g->name, cucore_global_kind_name(g->g.kind), g->g.size);
      return CLI_EXIT_FAILURE;
    }
    st = cucore_global_write(&g->g, 0, bytes, size, NULL);
    free(bytes);
    if (st != CUCORE_OK) return cli_fail(cli_verb_name, g->text, st);
  }
  return 0;
}

int args_bind_all(const args_set *o, cucore_args *args, cucore_object *obj, const char *symbol) {
  cucore_args_reset(args);
  for (int i = 0; i < o->nargs; i++) {
    const args_item *v = &o->args[i].v;
    cucore_status st = push(o, args, v);
    if (st == CUCORE_OK) continue;
    fprintf(stderr, "cucore %s: --arg %s: %s", cli_verb_name, o->args[i].spec, cucore_last_error());
    if (v->kind == ARGS_BLOB && v->layout)
      fprintf(stderr, "; the struct is laid out as %s: %zu bytes, aligned to %zu", v->layout,
              v->size, v->align);
    char type[256], sig[1024];
    if (args_bind_param_type(obj, symbol, i, type, sizeof type, sig, sizeof sig))
      fprintf(stderr, "; parameter %d is `%s` in `%s`", i, type, sig);
    fprintf(stderr, "\n");
    return CLI_EXIT_FAILURE;
  }
  cucore_status st = cucore_args_check(args);
  if (st != CUCORE_OK) {
    fprintf(stderr, "cucore %s: %s\n", cli_verb_name, cucore_last_error());
    return CLI_EXIT_FAILURE;
  }
  return 0;
}

/* The code of the object read offline, PTX types attached (NULL when it cannot be read). */
cucore_binary *args_bind_read_code(cucore_object *obj) {
  cucore_code_type type;
  const void *code = NULL;
  size_t size = 0;
  cucore_binary *bin = NULL;
  if (cucore_object_get_code(obj, &type, &code, &size) != CUCORE_OK ||
      cucore_binary_open(code, size, type, 0, &bin) != CUCORE_OK)
    return NULL;
  return bin;
}

/* The module variable `name` of the code read offline (a name expression through the object). */
static const cucore_global_info *find_global(cucore_object *obj, cucore_binary *bin,
                                             const char *name) {
  const cucore_global_info *g = NULL;
  char buf[512];
  const char *symbol = args_bind_global_symbol(obj, name, buf, sizeof buf);
  if (cucore_binary_find_global(bin, symbol, &g) == CUCORE_OK) return g;
  if (cucore_binary_find_global(bin, name, &g) == CUCORE_OK) return g;
  cucore_binary_find_global(bin, name, &g); /* the message that lists what exists */
  return NULL;
}

/* The variable `name` of the code in *g (find_global); else an exit code after saying it is
 * missing (`text`: the option as given). */
static int need_global(cucore_object *obj, cucore_binary *bin, const char *name, const char *text,
                       const cucore_global_info **g) {
  *g = find_global(obj, bin, name);
  return *g ? 0 : cli_fail(cli_verb_name, text, CUCORE_NOT_FOUND);
}

/* Each --global's value is as large as its variable. */
static int check_sets(args_set *o, cucore_object *obj, cucore_binary *bin) {
  for (int i = 0; i < o->nsets; i++) {
    const args_global_set *s = &o->sets[i];
    const cucore_global_info *g;
    int rc = need_global(obj, bin, s->name, s->text, &g);
    if (rc) return rc;
    size_t size = 0;
    unsigned char *bytes = args_bind_item_bytes(o, &s->v, &size);
    free(bytes);
    if (size != g->size) {
      fprintf(stderr, "cucore %s: --global %s: the value is %zu bytes; `%s` (%s) is %llu bytes\n",
              cli_verb_name, s->text, size, s->name, cucore_global_kind_name(g->kind),
              (unsigned long long)g->size);
      return CLI_EXIT_FAILURE;
    }
  }
  return 0;
}

/* Each --read-global's elements fit its variable (all of it: a whole number of them). */
static int check_reads(args_set *o, cucore_object *obj, cucore_binary *bin) {
  for (int i = 0; i < o->nreads; i++) {
    const args_global_read *r = &o->reads[i];
    const cucore_global_info *g;
    int rc = need_global(obj, bin, r->name, r->text, &g);
    if (rc) return rc;
    size_t esz = (size_t)args_elem_sizes[r->type];
    if ((r->count && r->count * esz > g->size) || (!r->count && g->size % esz)) {
      fprintf(stderr, "cucore %s: --read-global %s: `%s` (%s) is %llu bytes, which %s\n",
              cli_verb_name, r->text, r->name, cucore_global_kind_name(g->kind),
              (unsigned long long)g->size,
              r->count ? "is less than the elements asked for" : "is not a whole number of them");
      return CLI_EXIT_FAILURE;
    }
  }
  return 0;
}

int args_bind_check_globals(args_set *o, cucore_object *obj) {
  cucore_binary *bin = args_bind_read_code(obj);
  int rc = bin ? check_sets(o, obj, bin) : 0;
  if (!rc && bin) rc = check_reads(o, obj, bin);
  cucore_binary_destroy(bin);
  return rc;
}
