/*
 * linker.c -- Linker over nvJitLink: cubin, PTX, LTO-IR, fatbin, host object and library
 * inputs into one cubin (or PTX with LTO). Inputs are copied when added; the link happens in
 * cucore_linker_complete.
 */
#include "binary/detect.h"
#include "compile/diag.h"
#include "object/object.h"
#include "toolchain/jitlink.h"
#include "toolchain/options.h"

#include <limits.h>
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
  cc_diag_list diags; /* the last link's logs read into records, the error log's first */
  int diags_failed;   /* 1 when they could not be read into records (out of memory) */
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
  cc_diag_free(&lk->diags);
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

/* The checks of a link for `want`: inputs, lto for PTX, LTO-IR inputs only for LTO-IR, the
 * nvJitLink version the output needs. *lto is whether the link optimises. */
static cucore_status complete_checks(const cucore_linker *lk, cucore_link_output want,
                                     const char *fn, int *lto) {
  if (lk->count == 0) return cc_fail(CUCORE_INVALID_ARGUMENT, "%s: no inputs were added", fn);
  *lto = cc_options_int(lk->opts, CUCORE_OPT_LTO);
  for (int i = 0; i < lk->count; i++) *lto |= lk->inputs[i].type == CUCORE_CODE_LTOIR;
  if (want == CUCORE_LINK_OUTPUT_PTX && !*lto)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "%s: PTX output needs link-time optimisation: set the lto option or add LTO-IR "
                   "inputs",
                   fn);
  for (int i = 0; want == CUCORE_LINK_OUTPUT_LTOIR && i < lk->count; i++)
    if (lk->inputs[i].type != CUCORE_CODE_LTOIR)
      return cc_fail(CUCORE_INVALID_ARGUMENT,
                     "%s: linked LTO-IR is made of LTO-IR inputs only; input `%s` is %s (link "
                     "to a relocatable output to keep other code for a later link)",
                     fn, lk->inputs[i].name, cucore_code_type_name(lk->inputs[i].type));
  return cc_jitlink_check_output(want, fn);
}

/* The last link's logs into records: the error log's, then the info log's. Out of memory
 * fails only cucore_linker_get_diagnostic*, never the link (`link_st` its status: a failed
 * link's message stays the first). */
static void read_diagnostics(cucore_linker *lk, cucore_status link_st) {
  const char *e = lk->error_log ? lk->error_log : "", *i = lk->info_log ? lk->info_log : "";
  size_t ne = strlen(e), ni = strlen(i);
  char *both = malloc(ne + ni + 2);
  lk->diags_failed = 1;
  cc_diag_free(&lk->diags);
  if (both) {
    memcpy(both, e, ne);
    both[ne] = '\n';
    memcpy(both + ne + 1, i, ni + 1);
    lk->diags_failed = cc_diag_parse(both, &lk->diags) != 0;
    free(both);
  }
  if (lk->diags_failed && link_st == CUCORE_OK) cc_begin(); /* the link itself succeeded */
}

/* Links the inputs into `want` (checked by the caller's enum test). */
static cucore_status complete(cucore_linker *lk, cucore_link_output want, const char *fn,
                              cucore_object **out) {
  int lto = 0;
  cucore_status st = complete_checks(lk, want, fn, &lto);
  if (st != CUCORE_OK) return st;
  int arch = 0;
  char suffix[4] = "";
  st = cc_options_arch(lk->opts, &arch, suffix);
  if (st == CUCORE_OK) st = cc_options_check_tools(lk->opts, 1u << CC_TOOL_NVJITLINK, fn, "a link");
  if (st != CUCORE_OK) return st;
  free(lk->info_log);
  free(lk->error_log);
  lk->info_log = lk->error_log = NULL;
  unsigned char *code = NULL;
  size_t size = 0;
  st = cc_jitlink(lk->opts, arch, suffix, lto, lk->inputs, lk->count, (int)want, &code, &size,
                  &lk->info_log, &lk->error_log);
  read_diagnostics(lk, st);
  if (st != CUCORE_OK) return st;
  cucore_code_type type = want == CUCORE_LINK_OUTPUT_PTX     ? CUCORE_CODE_PTX
                          : want == CUCORE_LINK_OUTPUT_LTOIR ? CUCORE_CODE_LTOIR
                                                             : CUCORE_CODE_CUBIN;
  cucore_object *obj = NULL;
  st = cc_object_new(type, code, size, "linked code", &obj);
  if (st != CUCORE_OK) return st;
  obj->arch = want == CUCORE_LINK_OUTPUT_PTX ? 0 : arch;
  snprintf(obj->arch_suffix, sizeof obj->arch_suffix, "%s", suffix);
  /* An output for a later link records the nvJitLink that made it: an older one refuses it. */
  if (want == CUCORE_LINK_OUTPUT_LTOIR) obj->producer_version = cc_jl.version;
  *out = obj;
  return CUCORE_OK;
}

cucore_status cucore_linker_complete(cucore_linker *lk, cucore_code_type target,
                                     cucore_object **out) {
  cc_begin();
  CC_CHECK_ARG(out, "cucore_linker_complete", "out");
  *out = NULL;
  CC_CHECK_HANDLE(lk, LINKER, "cucore_linker_complete", "linker");
  if (target != CUCORE_CODE_CUBIN && target != CUCORE_CODE_PTX && target != CUCORE_CODE_LTOIR)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "cucore_linker_complete: target %s; the linker produces cubin, ptx or ltoir",
                   cucore_code_type_name(target));
  cucore_link_output want = target == CUCORE_CODE_PTX     ? CUCORE_LINK_OUTPUT_PTX
                            : target == CUCORE_CODE_LTOIR ? CUCORE_LINK_OUTPUT_LTOIR
                                                          : CUCORE_LINK_OUTPUT_CUBIN;
  return complete(lk, want, "cucore_linker_complete", out);
}

const char *cucore_link_output_name(cucore_link_output kind) {
  switch (kind) {
  case CUCORE_LINK_OUTPUT_CUBIN: return "cubin";
  case CUCORE_LINK_OUTPUT_PTX: return "ptx";
  case CUCORE_LINK_OUTPUT_RELOCATABLE: return "relocatable";
  case CUCORE_LINK_OUTPUT_LTOIR: return "ltoir";
  }
  return "unknown";
}

cucore_status cucore_linker_complete_output(cucore_linker *lk, cucore_link_output kind,
                                            cucore_object **out) {
  cc_begin();
  CC_CHECK_ARG(out, "cucore_linker_complete_output", "out");
  *out = NULL;
  CC_CHECK_HANDLE(lk, LINKER, "cucore_linker_complete_output", "linker");
  if ((int)kind < CUCORE_LINK_OUTPUT_CUBIN || (int)kind > CUCORE_LINK_OUTPUT_LTOIR)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "cucore_linker_complete_output: output kind %d is not one of cubin (0), ptx "
                   "(1), relocatable (2) or ltoir (3)",
                   (int)kind);
  return complete(lk, kind, "cucore_linker_complete_output", out);
}

cucore_status cucore_linker_get_log(const cucore_linker *lk, const char **info_log,
                                    const char **error_log) {
  cc_begin();
  CC_CHECK_HANDLE(lk, LINKER, "cucore_linker_get_log", "linker");
  if (info_log) *info_log = lk->info_log ? lk->info_log : "";
  if (error_log) *error_log = lk->error_log ? lk->error_log : "";
  return CUCORE_OK;
}

cucore_status cucore_linker_get_diagnostic_count(const cucore_linker *lk, int *count) {
  cc_begin();
  CC_CHECK_ARG(count, "cucore_linker_get_diagnostic_count", "count");
  *count = 0;
  CC_CHECK_HANDLE(lk, LINKER, "cucore_linker_get_diagnostic_count", "linker");
  if (lk->diags_failed)
    return cc_fail(CUCORE_HOST_OUT_OF_MEMORY,
                   "cucore_linker_get_diagnostic_count: the last link's logs could not be read "
                   "into records: out of host memory");
  *count = lk->diags.n > INT_MAX ? INT_MAX : (int)lk->diags.n;
  return CUCORE_OK;
}

cucore_status cucore_linker_get_diagnostic(const cucore_linker *lk, int index,
                                           cucore_diagnostic *out) {
  cc_begin();
  CC_CHECK_ARG(out, "cucore_linker_get_diagnostic", "out");
  memset(out, 0, sizeof *out);
  out->file = out->message = out->text = "";
  CC_CHECK_HANDLE(lk, LINKER, "cucore_linker_get_diagnostic", "linker");
  if (index < 0 || (size_t)index >= lk->diags.n)
    return cc_fail(CUCORE_INVALID_ARGUMENT,
                   "cucore_linker_get_diagnostic: index %d is out of range; the last link's logs "
                   "have %zu record%s (0 .. count-1)",
                   index, lk->diags.n, lk->diags.n == 1 ? "" : "s");
  *out = lk->diags.v[index];
  return CUCORE_OK;
}
