/*
 * linker.c -- Linker over nvJitLink: cubin, PTX, LTO-IR, fatbin, host object and library
 * inputs into one cubin (or PTX with LTO). Inputs are copied when added; the link happens in
 * cucore_linker_complete.
 */
#include "binary/detect.h"
#include "object/object.h"
#include "toolchain/jitlink.h"
#include "toolchain/options.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cucore_linker {
  cc_handle hdr; /* first: the magic word of base/handle.h */
  cucore_options *opts;
  cc_link_input *inputs;
  int count;
  size_t cap; /* cc_grow's capacity of inputs */
  char *info_log, *error_log;
};

cucore_status cucore_linker_create(const cucore_options *opts, cucore_linker **out) {
  cc_begin();
  CC_CHECK_ARG(out, "cucore_linker_create", "out");
  *out = NULL;
  if (opts) CC_CHECK_HANDLE(opts, OPTIONS, "cucore_linker_create", "opts");
  cucore_linker *lk = cc_calloc(1, sizeof *lk, "a linker");
  if (!lk) return CUCORE_HOST_OUT_OF_MEMORY;
  cc_handle_init(lk, CC_KIND_LINKER);
  cucore_status st = opts ? cucore_options_copy(opts, &lk->opts) : cucore_options_create(&lk->opts);
  if (st != CUCORE_OK) {
    free(lk);
    return st;
  }
  *out = lk;
  return CUCORE_OK;
}

cucore_status cucore_linker_destroy(cucore_linker *lk) {
  cc_begin();
  if (!lk) return CUCORE_OK;
  CC_CHECK_HANDLE(lk, LINKER, "cucore_linker_destroy", "linker");
  for (int i = 0; i < lk->count; i++) {
    free(lk->inputs[i].data);
    free(lk->inputs[i].name);
  }
  free(lk->inputs);
  free(lk->info_log);
  free(lk->error_log);
  cucore_options_destroy(lk->opts);
  cc_handle_retire(lk, CC_KIND_LINKER);
  return CUCORE_OK;
}

static cucore_status add_input(cucore_linker *lk, cucore_code_type type, const void *data,
                               size_t size, const char *name, int producer, const char *fn) {
  if (size == 0) return cc_fail(CUCORE_INVALID_BINARY, "%s: input `%s` is empty", fn, name);
  cucore_status st = cc_check_code_size(size, fn, "the input");
  if (st != CUCORE_OK) return st;
  if (type == CUCORE_CODE_AUTO) type = cc_code_type_guess(data, size);
  switch (type) {
  case CUCORE_CODE_CUBIN:
  case CUCORE_CODE_PTX:
  case CUCORE_CODE_LTOIR:
  case CUCORE_CODE_FATBIN:
  case CUCORE_CODE_OBJECT:
  case CUCORE_CODE_LIBRARY: break;
  case CUCORE_CODE_AUTO:
    return cc_fail(CUCORE_INVALID_BINARY,
                   "%s: input `%s` is not cubin, PTX, LTO-IR, fatbin, a host object or a library",
                   fn, name);
  default:
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: input `%s` is %s source; compile it with a program first", fn, name,
                   cucore_code_type_name(type));
  }
  st = cc_code_type_check(data, size, type, fn, name);
  if (st == CUCORE_OK && type == CUCORE_CODE_LTOIR)
    st = cc_jitlink_check_producer(producer, name, fn);
  if (st != CUCORE_OK) return st;
  cc_link_input *in = cc_grow(lk->inputs, &lk->cap, (size_t)lk->count + 1, sizeof *in,
                              "the linker's inputs");
  if (!in) return cucore_last_status();
  lk->inputs = in;
  cc_link_input *ni = &lk->inputs[lk->count];
  ni->type = type;
  ni->size = size;
  ni->data = cc_copy_code(data, size);
  ni->name = cc_strdup(name, "an input name");
  ni->producer_version = producer;
  if (!ni->data || !ni->name) {
    free(ni->data);
    free(ni->name);
    return CUCORE_HOST_OUT_OF_MEMORY;
  }
  lk->count++;
  return CUCORE_OK;
}

cucore_status cucore_linker_add(cucore_linker *lk, cucore_code_type type, const void *data,
                                size_t size, const char *name) {
  cc_begin();
  CC_CHECK_HANDLE(lk, LINKER, "cucore_linker_add", "linker");
  CC_CHECK_ARG(data, "cucore_linker_add", "data");
  char fallback[32];
  if (!name) {
    snprintf(fallback, sizeof fallback, "input %d", lk->count);
    name = fallback;
  }
  return add_input(lk, type, data, size, name, 0, "cucore_linker_add");
}

cucore_status cucore_linker_add_object(cucore_linker *lk, const cucore_object *obj) {
  cc_begin();
  CC_CHECK_HANDLE(lk, LINKER, "cucore_linker_add_object", "linker");
  CC_CHECK_HANDLE(obj, OBJECT, "cucore_linker_add_object", "obj");
  return add_input(lk, obj->type, obj->code, obj->size, obj->name, obj->producer_version,
                   "cucore_linker_add_object");
}

cucore_status cucore_linker_add_file(cucore_linker *lk, const char *path, cucore_code_type type) {
  cc_begin();
  CC_CHECK_HANDLE(lk, LINKER, "cucore_linker_add_file", "linker");
  CC_CHECK_ARG(path, "cucore_linker_add_file", "path");
  unsigned char *data;
  size_t size;
  cucore_status st = cc_read_file(path, &data, &size);
  if (st != CUCORE_OK) return st;
  st = add_input(lk, type, data, size, path, 0, "cucore_linker_add_file");
  free(data);
  return st;
}

cucore_status cucore_linker_complete(cucore_linker *lk, cucore_code_type target,
                                     cucore_object **out) {
  cc_begin();
  CC_CHECK_ARG(out, "cucore_linker_complete", "out");
  *out = NULL;
  CC_CHECK_HANDLE(lk, LINKER, "cucore_linker_complete", "linker");
  if (target != CUCORE_CODE_CUBIN && target != CUCORE_CODE_PTX)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "cucore_linker_complete: target %s; the linker produces cubin or ptx",
                   cucore_code_type_name(target));
  if (lk->count == 0)
    return cc_fail(CUCORE_INVALID_ARGUMENT, "cucore_linker_complete: no inputs were added");
  int lto = cc_options_int(lk->opts, CUCORE_OPT_LTO);
  for (int i = 0; i < lk->count; i++) lto |= lk->inputs[i].type == CUCORE_CODE_LTOIR;
  if (target == CUCORE_CODE_PTX && !lto)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "cucore_linker_complete: PTX output needs link-time optimisation: set the lto "
                   "option or add LTO-IR inputs");
  int arch = 0;
  char suffix[4] = "";
  cucore_status st = cc_options_arch(lk->opts, &arch, suffix);
  if (st == CUCORE_OK)
    st = cc_options_check_tools(lk->opts, 1u << CC_TOOL_NVJITLINK, "cucore_linker_complete",
                                "a link");
  if (st != CUCORE_OK) return st;
  free(lk->info_log);
  free(lk->error_log);
  unsigned char *code = NULL;
  size_t size = 0;
  st = cc_jitlink(lk->opts, arch, suffix, lto, lk->inputs, lk->count, target == CUCORE_CODE_PTX,
                  &code, &size, &lk->info_log, &lk->error_log);
  if (st != CUCORE_OK) return st;
  cucore_object *obj = NULL;
  st = cc_object_new(target, code, size, "linked code", &obj);
  if (st != CUCORE_OK) return st;
  obj->arch = target == CUCORE_CODE_PTX ? 0 : arch;
  snprintf(obj->arch_suffix, sizeof obj->arch_suffix, "%s", suffix);
  *out = obj;
  return CUCORE_OK;
}

cucore_status cucore_linker_get_log(const cucore_linker *lk, const char **info_log,
                                    const char **error_log) {
  cc_begin();
  CC_CHECK_HANDLE(lk, LINKER, "cucore_linker_get_log", "linker");
  if (info_log) *info_log = lk->info_log ? lk->info_log : "";
  if (error_log) *error_log = lk->error_log ? lk->error_log : "";
  return CUCORE_OK;
}
