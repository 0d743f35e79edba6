/*
 * args.c -- kernel arguments: values copied when bound, checked against the kernel's layout
 * (count, size, kind where known, alignment) before the driver ever sees them. The checks are
 * a few integer comparisons; messages are built only on the error path.
 */
#include "exec/kernel.h"
#include "memory/memory.h" /* strict pointer checks (cc_mem_check_kernel_pointer) */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void args_free_parts(cucore_args *a) {
  free(a->buf);
  free(a->ptrs);
  free(a->set);
  free(a->accept);
}

static void args_free(cucore_args *a) {
  if (!a) return;
  args_free_parts(a);
  free(a);
}

static uint32_t accepted(const cucore_param_info *p);

static cucore_status args_new(const cucore_kernel *k, cucore_args **out) {
  cucore_args *a = cc_calloc(1, sizeof *a, "an argument list");
  if (!a) return CUCORE_HOST_OUT_OF_MEMORY;
  cc_handle_init(a, CC_KIND_ARGS);
  a->k = k;
  size_t n = (size_t)k->param_count;
  a->buf = cc_calloc(k->param_bytes ? k->param_bytes : 1, 1, "the parameter buffer");
  a->ptrs = cc_calloc(n ? n : 1, sizeof *a->ptrs, "the parameter pointers");
  a->set = cc_calloc(n ? n : 1, 1, "argument flags");
  a->accept = cc_calloc(n ? n : 1, sizeof *a->accept, "argument checks");
  if (!a->buf || !a->ptrs || !a->set || !a->accept) {
    args_free(a);
    return CUCORE_HOST_OUT_OF_MEMORY;
  }
  for (size_t i = 0; i < n; i++) {
    a->ptrs[i] = a->buf + k->params[i].offset;
    a->accept[i] = accepted(&k->params[i]);
  }
  *out = a;
  return CUCORE_OK;
}

cucore_status cucore_args_create(const cucore_kernel *k, cucore_args **out) {
  cc_begin();
  CC_CHECK_ARG(out, "cucore_args_create", "out");
  *out = NULL;
  CC_CHECK_HANDLE(k, KERNEL, "cucore_args_create", "kernel");
  return args_new(k, out);
}

cucore_status cucore_args_destroy(cucore_args *a) {
  cc_begin();
  if (!a) return CUCORE_OK;
  CC_CHECK_HANDLE(a, ARGS, "cucore_args_destroy", "args");
  args_free_parts(a);
  cc_handle_retire(a, CC_KIND_ARGS);
  return CUCORE_OK;
}

void cc_args_free(cucore_args *a) { args_free(a); }

static void reset(cucore_args *a) {
  if (a->set_count) memset(a->set, 0, (size_t)(a->k->param_count ? a->k->param_count : 1));
  a->set_count = 0;
  a->next = 0;
  a->error = CUCORE_OK;
  a->error_message[0] = '\0';
}

cucore_status cucore_args_reset(cucore_args *a) {
  cc_begin();
  CC_CHECK_HANDLE(a, ARGS, "cucore_args_reset", "args");
  reset(a);
  return CUCORE_OK;
}

typedef enum given_type {
  G_I8,
  G_U8,
  G_I16,
  G_U16,
  G_I32,
  G_U32,
  G_I64,
  G_U64,
  G_F16,
  G_BF16,
  G_F32,
  G_F64,
  G_PTR,
  G_HOST_PTR,
  G_BYTES,
  G_TEX,
  G_SURF,
  G_TMAP
} given_type;

static const char *const given_names[] = {
    "an int8",          "a uint8",          "an int16",
    "a uint16",         "an int32",         "a uint32",
    "an int64",         "a uint64",         "a half",
    "a bfloat16",       "a float",          "a double",
    "a device pointer", "a host pointer",   "bytes",
    "a texture object", "a surface object", "a tensor map (128 bytes, 64-aligned)"};

static const char *kind_text(cucore_param_kind k) {
  switch (k) {
  case CUCORE_PARAM_INT: return "an integer";
  case CUCORE_PARAM_FLOAT: return "a floating-point value";
  case CUCORE_PARAM_POINTER: return "a pointer";
  case CUCORE_PARAM_BYTES: return "a by-value aggregate (struct, union, vector or half)";
  default: return "a value of unknown type";
  }
}

/* Whether a value of type `g` fits a parameter of kind `k` (sizes are checked apart). */
static int kind_accepts(cucore_param_kind k, given_type g) {
  switch (k) {
  case CUCORE_PARAM_UNKNOWN:
  case CUCORE_PARAM_BYTES: return 1;
  case CUCORE_PARAM_FLOAT:
    return g == G_F16 || g == G_BF16 || g == G_F32 || g == G_F64 || g == G_BYTES;
  case CUCORE_PARAM_INT:
  case CUCORE_PARAM_POINTER: return !(g == G_F16 || g == G_BF16 || g == G_F32 || g == G_F64);
  }
  return 1;
}

/* The byte size of each value type of the setters (0: sized by the caller). */
static const uint8_t given_size[] = {1, 1, 2, 2, 4, 4, 8, 8, 2, 2, 4, 8, 8, sizeof(void *),
                                     0, 8, 8, 0};

/* The types of value a parameter takes without a message: its size and kind, alignment 1 (the
 * by-value bytes and tensor maps, which carry an alignment, take the checked path). */
static uint32_t accepted(const cucore_param_info *p) {
  uint32_t m = 0;
  for (int g = G_I8; g <= G_SURF; g++)
    if (given_size[g] && given_size[g] == p->size && kind_accepts(p->kind, (given_type)g))
      m |= 1u << g;
  return m;
}

static cucore_status keep(cucore_args *a, cucore_status st) {
  if (a->error == CUCORE_OK) {
    a->error = st;
    snprintf(a->error_message, sizeof a->error_message, "%s", cucore_last_error());
  }
  return st;
}

static const char *size_hint(const cucore_param_info *p, uint32_t got, given_type g) {
  int fl = p->kind == CUCORE_PARAM_FLOAT, unknown = p->kind == CUCORE_PARAM_UNKNOWN;
  if (p->size == 4 && got == 8 && g == G_F64 && (fl || unknown))
    return " (a double given for a float?)";
  if (p->size == 8 && got == 4 && g == G_F32 && (fl || unknown))
    return " (a float given for a double?)";
  if (p->size == 8 && got == 4) return " (a 32-bit value given for a 64-bit integer or a pointer?)";
  if (p->size == 4 && got == 8) return " (a 64-bit value or a pointer given for a 32-bit one?)";
  return "";
}

static cucore_status bind(cucore_args *a, int index, const void *value, uint32_t size,
                          uint32_t align, given_type g) {
  const cucore_kernel *k = a->k;
  if (CC_UNLIKELY(index < 0 || index >= k->param_count)) {
    if (index == k->param_count)
      return keep(a, cc_fail(CUCORE_ARG_COUNT,
                             "kernel `%s` takes %d parameter%s; a %d%s argument (%s) was given",
                             k->asked, k->param_count, k->param_count == 1 ? "" : "s", index + 1,
                             index == 0   ? "st"
                             : index == 1 ? "nd"
                             : index == 2 ? "rd"
                                          : "th",
                             given_names[g]));
    return keep(a, cc_fail(CUCORE_ARG_COUNT,
                           "kernel `%s` takes %d parameters; argument index %d is out of range",
                           k->asked, k->param_count, index));
  }
  const cucore_param_info *p = &k->params[index];
  if (CC_UNLIKELY(p->size != size))
    return keep(a, cc_fail(CUCORE_ARG_SIZE,
                           "argument %d of `%s` is %u bytes at offset %u (%s); the value given "
                           "is %u bytes (%s)%s",
                           index, k->asked, p->size, p->offset, kind_text(p->kind), size,
                           given_names[g], size_hint(p, size, g)));
  if (CC_UNLIKELY(!kind_accepts(p->kind, g)))
    return keep(a, cc_fail(CUCORE_ARG_TYPE,
                           "argument %d of `%s` is %s of %u bytes; the value given is %s", index,
                           k->asked, kind_text(p->kind), p->size, given_names[g]));
  /* The alignment a by-value aggregate was declared with must be the kernel's. Parameters
   * are aligned in constant bank 0, whose parameter base is 16-byte aligned on every arch but
   * not always 32/64-byte aligned, so the offset only tells alignments up to 16. Raw bytes
   * (alignment 1) are not checked. */
  if (CC_UNLIKELY(align > 1 && (p->align ? p->align != align : (align <= 16 && p->offset % align))))
    return keep(a,
                cc_fail(CUCORE_ARG_ALIGNMENT,
                        "argument %d of `%s` is at offset %u%s%u; the value given is aligned "
                        "to %u bytes: the type's alignment differs from the kernel's "
                        "(declare both with the same alignas / __align__)",
                        index, k->asked, p->offset,
                        p->align ? " with alignment " : ", which allows alignment up to ",
                        p->align ? p->align : (p->offset ? (p->offset & -p->offset) : 16u), align));
  /* Strict pointer checks (memory/pointer.c): off by default, a load and a test when off. */
  if (CC_UNLIKELY(a->check_dev != NULL || cc_mem_strict_global()) && size == 8 &&
      (g == G_PTR || g == G_HOST_PTR ||
       ((g == G_U64 || g == G_I64) && p->kind == CUCORE_PARAM_POINTER))) {
    uint64_t addr;
    memcpy(&addr, value, 8);
    cucore_status st = cc_mem_check_kernel_pointer(a->check_dev, addr, 0, k->asked, index);
    if (st != CUCORE_OK) return keep(a, st);
  }
  memcpy(a->buf + p->offset, value, size);
  if (!a->set[index]) {
    a->set[index] = 1;
    a->set_count++;
  }
  return CUCORE_OK;
}

/* A value of 1, 2, 4 or 8 bytes copied with a move of its own size: a memcpy of a size known
 * only at run time compiles to `rep movs`, whose start-up made cucore_args_set_values 3x
 * slower than the setters (measured: 100 against 36 ns for 4 values). */
static inline void copy_value(void *dst, const void *src, uint32_t size) {
  switch (size) {
  case 1: memcpy(dst, src, 1); break;
  case 2: memcpy(dst, src, 2); break;
  case 4: memcpy(dst, src, 4); break;
  case 8: memcpy(dst, src, 8); break;
  default: memcpy(dst, src, size); break;
  }
}

/* The setters' hot path: a value that fits (accept[]) stored with a copy of its own size;
 * everything else (a wrong index, size, kind, strict pointer checks on) takes bind(), which
 * checks again and says what is wrong. */
static inline cucore_status bind_fast(cucore_args *a, int index, const void *value, uint32_t size,
                                      given_type g) {
  const cucore_kernel *k = a->k;
  if (CC_LIKELY((unsigned)index < (unsigned)k->param_count && (a->accept[index] >> g & 1u) &&
                a->check_dev == NULL && !cc_mem_strict_global())) {
    copy_value(a->buf + k->params[index].offset, value, size);
    if (!a->set[index]) {
      a->set[index] = 1;
      a->set_count++;
    }
    return CUCORE_OK;
  }
  return bind(a, index, value, size, 1, g);
}

#define SETTER(suffix, ctype, gtype)                                           \
  cucore_status cucore_args_set_##suffix(cucore_args *a, int index, ctype v) { \
    cc_begin();                                                                \
    CC_CHECK_HANDLE(a, ARGS, "cucore_args_set_" #suffix, "args");              \
    return bind_fast(a, index, &v, (uint32_t)sizeof v, gtype);                 \
  }                                                                            \
  cucore_status cucore_args_push_##suffix(cucore_args *a, ctype v) {           \
    cc_begin();                                                                \
    CC_CHECK_HANDLE(a, ARGS, "cucore_args_push_" #suffix, "args");             \
    return bind_fast(a, a->next++, &v, (uint32_t)sizeof v, gtype);             \
  }

SETTER(i8, int8_t, G_I8)
SETTER(u8, uint8_t, G_U8)
SETTER(i16, int16_t, G_I16)
SETTER(u16, uint16_t, G_U16)
SETTER(i32, int32_t, G_I32)
SETTER(u32, uint32_t, G_U32)
SETTER(i64, int64_t, G_I64)
SETTER(u64, uint64_t, G_U64)
SETTER(f16, uint16_t, G_F16)
SETTER(bf16, uint16_t, G_BF16)
SETTER(f32, float, G_F32)
SETTER(f64, double, G_F64)
SETTER(ptr, cucore_devptr, G_PTR)
SETTER(texture, uint64_t, G_TEX)
SETTER(surface, uint64_t, G_SURF)

cucore_status cucore_args_set_host_ptr(cucore_args *a, int index, const void *p) {
  cc_begin();
  CC_CHECK_HANDLE(a, ARGS, "cucore_args_set_host_ptr", "args");
  uint64_t v = (uint64_t)(uintptr_t)p;
  return bind(a, index, &v, 8, 1, G_HOST_PTR);
}

cucore_status cucore_args_push_host_ptr(cucore_args *a, const void *p) {
  cc_begin();
  CC_CHECK_HANDLE(a, ARGS, "cucore_args_push_host_ptr", "args");
  uint64_t v = (uint64_t)(uintptr_t)p;
  return bind(a, a->next++, &v, 8, 1, G_HOST_PTR);
}

static cucore_status bytes_checks(cucore_args *a, const void *data, size_t size, size_t align,
                                  const char *fn) {
  if (!data) return keep(a, cc_fail(CUCORE_ARG_NULL, "%s: the value pointer is NULL", fn));
  if (size == 0 || size > 32764)
    return keep(a, cc_fail(CUCORE_ARG_SIZE,
                           "%s: %zu bytes is not a valid by-value parameter size (1..32764)", fn,
                           size));
  if (align == 0 || (align & (align - 1)) || align > 4096)
    return keep(a, cc_fail(CUCORE_ARG_ALIGNMENT,
                           "%s: alignment %zu is not a power of two up to 4096 (use _Alignof of "
                           "the type)",
                           fn, align));
  return CUCORE_OK;
}

cucore_status cucore_args_set_bytes(cucore_args *a, int index, const void *data, size_t size,
                                    size_t align) {
  cc_begin();
  CC_CHECK_HANDLE(a, ARGS, "cucore_args_set_bytes", "args");
  cucore_status st = bytes_checks(a, data, size, align, "cucore_args_set_bytes");
  if (st != CUCORE_OK) return st;
  return bind(a, index, data, (uint32_t)size, (uint32_t)align, G_BYTES);
}

cucore_status cucore_args_push_bytes(cucore_args *a, const void *data, size_t size, size_t align) {
  cc_begin();
  CC_CHECK_HANDLE(a, ARGS, "cucore_args_push_bytes", "args");
  int index = a->next++;
  cucore_status st = bytes_checks(a, data, size, align, "cucore_args_push_bytes");
  if (st != CUCORE_OK) return st;
  return bind(a, index, data, (uint32_t)size, (uint32_t)align, G_BYTES);
}

cucore_status cucore_args_check_pointers(cucore_args *a, cucore_device *dev) {
  cc_begin();
  CC_CHECK_HANDLE(a, ARGS, "cucore_args_check_pointers", "args");
  if (dev) CC_CHECK_HANDLE(dev, DEVICE, "cucore_args_check_pointers", "dev");
  a->check_dev = dev;
  return CUCORE_OK;
}

cucore_status cucore_args_set_tensor_map(cucore_args *a, int index, const cucore_tensor_map *map) {
  cc_begin();
  CC_CHECK_HANDLE(a, ARGS, "cucore_args_set_tensor_map", "args");
  if (!map) return keep(a, cc_fail(CUCORE_ARG_NULL, "cucore_args_set_tensor_map: `map` is NULL"));
  return bind(a, index, map, (uint32_t)sizeof *map, 64, G_TMAP);
}

cucore_status cucore_args_push_tensor_map(cucore_args *a, const cucore_tensor_map *map) {
  cc_begin();
  CC_CHECK_HANDLE(a, ARGS, "cucore_args_push_tensor_map", "args");
  int index = a->next++;
  if (!map) return keep(a, cc_fail(CUCORE_ARG_NULL, "cucore_args_push_tensor_map: `map` is NULL"));
  return bind(a, index, map, (uint32_t)sizeof *map, 64, G_TMAP);
}

/* cucore_value_type and given_type name the setters' types in one order. */
_Static_assert(CUCORE_VALUE_I8 == (int)G_I8 && CUCORE_VALUE_F16 == (int)G_F16 &&
                   CUCORE_VALUE_F64 == (int)G_F64 && CUCORE_VALUE_PTR == (int)G_PTR &&
                   CUCORE_VALUE_HOST_PTR == (int)G_HOST_PTR,
               "cucore_value_type follows given_type");

/* The whole list on the fast path: a value for every parameter, each of a type its parameter
 * takes as is (accept[]; host pointers take bind), no strict pointer checks. 1 when stored and
 * the list is complete; 0 when a value needs the checked path (which starts over). */
static inline int set_values_fast(cucore_args *a, const cucore_value *v, int count) {
  const cucore_kernel *k = a->k;
  if (count != k->param_count || a->check_dev != NULL || cc_mem_strict_global()) return 0;
  for (int i = 0; i < count; i++) {
    unsigned g = (unsigned)v[i].type;
    if (CC_UNLIKELY(g >= (unsigned)G_HOST_PTR || !(a->accept[i] >> g & 1u))) return 0;
    copy_value(a->buf + k->params[i].offset, &v[i].v, given_size[g]);
  }
  if (a->set_count != count)
    for (int i = 0; i < count; i++) a->set[i] = 1;
  a->set_count = count;
  a->next = count;
  a->error = CUCORE_OK;
  a->error_message[0] = '\0';
  return 1;
}

cucore_status cucore_args_set_values(cucore_args *a, const cucore_value *values, int count) {
  cc_begin();
  CC_CHECK_HANDLE(a, ARGS, "cucore_args_set_values", "args");
  if (CC_LIKELY(values != NULL) && set_values_fast(a, values, count)) return CUCORE_OK;
  if (CC_UNLIKELY(count < 0 || (count && !values)))
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "cucore_args_set_values: count %d with values %s: expected a count of 0 or "
                   "more and the values when it is above 0",
                   count, values ? "given" : "NULL");
  reset(a);
  for (int i = 0; i < count; i++) {
    const cucore_value *v = &values[i];
    if (CC_UNLIKELY((unsigned)v->type > (unsigned)CUCORE_VALUE_HOST_PTR)) {
      keep(a, cc_fail(CUCORE_INVALID_ARGUMENT,
                      "cucore_args_set_values: values[%d].type is %d: expected a "
                      "cucore_value_type (CUCORE_VALUE_I8 to CUCORE_VALUE_HOST_PTR)",
                      i, (int)v->type));
      break;
    }
    given_type g = (given_type)v->type;
    uint64_t host = (uint64_t)(uintptr_t)v->v.p; /* 8 bytes, as cucore_args_set_host_ptr */
    cucore_status st = g == G_HOST_PTR ? bind(a, i, &host, 8, 1, g)
                                       : bind_fast(a, i, &v->v, given_size[g], g);
    if (st != CUCORE_OK) break;
  }
  a->next = count;
  return cc_args_check(a, a->k);
}

/* Shared by cucore_args_check, the launch path and graphs: the full-list check. */
cucore_status cc_args_check(const cucore_args *a, const cucore_kernel *k) {
  if (CC_UNLIKELY(a->k != k))
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "the argument list was made for kernel `%s`, not for `%s`", a->k->asked,
                   k->asked);
  if (CC_UNLIKELY(a->error != CUCORE_OK)) return cc_fail(a->error, "%s", a->error_message);
  if (CC_LIKELY(a->set_count == k->param_count)) return CUCORE_OK;
  int first_unset = 0;
  while (first_unset < k->param_count && a->set[first_unset]) first_unset++;
  const cucore_param_info *p = &k->params[first_unset];
  if (a->set_count == first_unset)
    return cc_fail(CUCORE_ARG_COUNT,
                   "kernel `%s` takes %d parameter%s, %d %s given (argument %d, %u bytes at "
                   "offset %u, is missing)",
                   k->asked, k->param_count, k->param_count == 1 ? "" : "s", a->set_count,
                   a->set_count == 1 ? "was" : "were", first_unset, p->size, p->offset);
  return cc_fail(CUCORE_ARG_UNSET,
                 "kernel `%s`: argument %d (%u bytes at offset %u) was not set; %d of %d are set",
                 k->asked, first_unset, p->size, p->offset, a->set_count, k->param_count);
}

cucore_status cucore_args_check(const cucore_args *a) {
  cc_begin();
  CC_CHECK_HANDLE(a, ARGS, "cucore_args_check", "args");
  return cc_args_check(a, a->k);
}

cucore_status cucore_args_get_native(cucore_args *a, void ***kernel_params, void **buffer,
                                     size_t *buffer_size) {
  cc_begin();
  CC_CHECK_HANDLE(a, ARGS, "cucore_args_get_native", "args");
  if (kernel_params) *kernel_params = a->ptrs;
  if (buffer) *buffer = a->buf;
  if (buffer_size) *buffer_size = a->k->param_bytes;
  return CUCORE_OK;
}

cucore_status cc_args_from_driver(const cucore_kernel *k, void *const *params,
                                  const unsigned char *buffer, size_t buffer_size,
                                  cucore_args **out) {
  cucore_status st = args_new(k, out);
  if (st != CUCORE_OK) return st;
  cucore_args *a = *out;
  for (int i = 0; i < k->param_count; i++) {
    const cucore_param_info *p = &k->params[i];
    const void *src = params ? params[i] : NULL;
    if (!params && buffer && (size_t)p->offset + p->size <= buffer_size) src = buffer + p->offset;
    if (!src) continue;
    memcpy(a->buf + p->offset, src, p->size);
    a->set[i] = 1;
    a->set_count++;
  }
  a->next = k->param_count;
  return CUCORE_OK;
}

cucore_status cc_args_clone(const cucore_args *a, cucore_args **out) {
  cucore_status st = args_new(a->k, out);
  if (st != CUCORE_OK) return st;
  cc_args_copy_values(*out, a);
  return CUCORE_OK;
}

void cc_args_copy_values(cucore_args *dst, const cucore_args *src) {
  const cucore_kernel *k = src->k;
  memcpy(dst->buf, src->buf, k->param_bytes);
  memcpy(dst->set, src->set, (size_t)(k->param_count ? k->param_count : 1));
  dst->set_count = src->set_count;
  dst->next = src->next;
  dst->error = src->error;
  /* The message only matters with an error (this copy sits on the node-update path). */
  if (src->error != CUCORE_OK || dst->error_message[0])
    memcpy(dst->error_message, src->error_message, sizeof dst->error_message);
}
